/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The installer's own disk operations, in-process. Each opens only the
 * device it is given; the installer gives them nothing but --boot-device
 * and the --format-disk devices (and reads sysfs/procfs for the rest).
 */

/* --boot-device with symlinks resolved (/dev/disk/by-path/... ->
 * /dev/sda), as the Go installer does to dodge coreos-installer issue
 * #512. -errno when it cannot be resolved (the caller keeps the original). */
int disk_resolve(const char *device, char **ret);

/* "wipefs --all --force DEVICE" with libblkid: every superblock and
 * partition table signature found by probing the device is erased (the
 * same blkid_do_probe/blkid_do_wipe loop wipefs runs, so the bytes
 * afterwards are wipefs's), then the kernel rereads the partition table.
 * The device is opened O_EXCL: a busy disk is refused (-EBUSY) instead of
 * being wiped under its users. */
int disk_wipe_signatures(const char *device, char **reterr);

/* "dd if=/dev/zero of=DEVICE bs=512 count=1": --format-disk. */
int disk_zero_first_sector(const char *device);

/* coreos-installer's check before writing: the disk and its partitions
 * must not be mounted (in our mount namespace or PID 1's), used as swap,
 * or held by another device (sysfs holders: device-mapper, md, ...); and
 * nothing else may hold the disk exclusively. Returns 0 when free, -EBUSY
 * with every reason in *ret_reasons ("/dev/sda4 mounted on /mnt",
 * "/dev/sda3 is swap device", "/dev/sda2 in use by dm-0 (vg-lv)"), or
 * another -errno. */
int disk_check_not_busy(const char *device, char ***ret_reasons);

/* The device node of the disk's partition number n, from sysfs
 * (/sys/class/block/<disk>/<part>/partition). -ENOENT when none. */
int disk_partition_by_number(const char *device, unsigned n, char **ret);
