/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The `disks` list: whole block devices from a libudev enumeration of the
 * block subsystem (ordered by name, as ghw lists /sys/block), udev
 * properties for model/serial/wwn/paths, sysfs for sizes and flags, the
 * first sector for `bootable`, the kernel's cached VPD page 0x83 for
 * `has_uuid`, the mount table and partition labels (udev, else libblkid)
 * for eligibility. Field by field as notes §9.4 (HEAD agent); see
 * disks.c for each rule and where we deliberately differ.
 */

#include <stdbool.h>
#include <stddef.h>

#include "inventory.h"

typedef struct DiskPartition {
        char *name; /* "sda1" */
        char *label; /* GPT partition name (ID_PART_ENTRY_NAME / libblkid), NULL if none */
        char *uuid; /* partition UUID, NULL if none */
        char *fs_type; /* mounted type, ID_FS_TYPE, or libblkid's probe; NULL if none */
        char *mount_point; /* NULL when not mounted */
} DiskPartition;

void disk_partitions_free(DiskPartition *p, size_t n);

typedef enum DiskPartitionFlags {
        DISK_PARTITIONS_PROBE_FS = 1 << 0, /* probe filesystems with libblkid when udev has no ID_FS_TYPE */
} DiskPartitionFlags;

/* The partitions of disk `name` ("sda"), in name order. */
int disk_partitions(const InventoryOptions *o, const char *name, DiskPartitionFlags flags,
                    DiskPartition **ret, size_t *ret_n);

/* True when the 512-byte sector carries the MBR boot signature (0x55AA at
 * offset 510): the condition under which `file -s` names a sector
 * "DOS/MBR boot sector" (alone, or in parentheses after an ISO 9660 or
 * FAT description). */
bool disk_sector_is_mbr(const unsigned char *sector, size_t len);

/* The comma-joined holders of block device `name` (sysfs holders/, sorted);
 * "" when none, NULL on OOM. */
char *disk_holders_of(const char *name);

int disks_collect(const InventoryOptions *o, json_object **ret);
