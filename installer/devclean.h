/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Install-disk cleanup (notes/installer.md §3.1, the Go installer's
 * preinstall-utils CleanupInstallDevice), in its order:
 *
 *   1. LVM and device-mapper on the disk: vgremove, pvremove, dmsetup remove;
 *   2. md RAID arrays with a member on the disk: the same for what sits on
 *      the array, mdadm --stop, mdadm --zero-superblock of the disk's
 *      members;
 *   3. the disk's signatures, "wipefs --all --force" done in-process with
 *      libblkid (see disk.h).
 *
 * The tools are run on the host as the Go installer runs them; what to run
 * is decided by the pure planners below from their parsed outputs and the
 * disk's partitions (tested with tables).
 *
 * Which devices count as "on the disk": the disk itself and its partitions,
 * compared by kernel name (sysfs), where the Go code matched substrings of
 * paths ("/dev/sda" also matched "/dev/sdaa", "/dev/loop1" also
 * "/dev/loop10"). And a volume group that also has physical volumes on
 * other disks is not removed (vgremove would rewrite their metadata): only
 * the disk's own physical volumes are, with pvremove -ff.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct HostExec HostExec;

/* A block device as the planners see it: its path as a tool printed it,
 * its kernel name and the kernel name of its whole disk (itself for a
 * whole disk), from sysfs; kname NULL when the path is not a block device. */
typedef struct BlockRef {
        char *path;
        char *kname;
        char *disk_kname;
} BlockRef;

void block_ref_done(BlockRef *b);
/* Resolves path (symlinks followed) through /sys/class/block. Never fails
 * for a missing device: kname stays NULL. -ENOMEM only. */
int block_ref_resolve(const char *path, BlockRef *ret);
/* The device is the target disk or one of its partitions. */
bool block_ref_on_disk(const BlockRef *b, const char *target_kname);

/* ---- parsers (the tools' outputs) -------------------------------------- */

typedef struct VgPv {
        char *vg;
        char *pv;
} VgPv;

/* "vgs --noheadings -o vg_name,pv_name": "  vg0  /dev/sda2" lines. */
int cleanup_parse_vgs(const char *out, VgPv **ret, size_t *ret_n);
void vgpv_free(VgPv *l, size_t n);
/* "pvs --noheadings -o pv_name": one PV path a line. */
int cleanup_parse_pvs(const char *out, char ***ret);
/* "dmsetup ls": "name\t(253:0)" lines; "No devices found" gives none. */
int cleanup_parse_dmsetup_ls(const char *out, char ***ret);
/* "dmsetup deps -o devname NAME": " 2 dependencies  : (sda2) (sdb1)". */
int cleanup_parse_dmsetup_deps(const char *out, char ***ret);

typedef struct MdArray {
        char *device; /* as printed: /dev/md/name or /dev/md127 */
        char **members; /* devices=a,b on the following line */
} MdArray;

/* "mdadm -v --query --detail --scan": "ARRAY <dev> ..." lines, each
 * followed by "   devices=<a>,<b>". */
int cleanup_parse_mdadm_scan(const char *out, MdArray **ret, size_t *ret_n);
void md_arrays_free(MdArray *l, size_t n);

/* ---- planners ----------------------------------------------------------- */

/* Volume groups to remove: those with a PV on the disk and none elsewhere
 * (in first-seen order, each once). pvs[i] resolved as refs[i]. Groups
 * that span other disks go into *ret_spanning (may be NULL). */
int cleanup_plan_vgs(const VgPv *vgs, const BlockRef *pv_refs, size_t n, const char *target_kname,
                     char ***ret_remove, char ***ret_spanning);
/* PVs on the disk. */
int cleanup_plan_pvs(char *const *pvs, const BlockRef *refs, const char *target_kname, char ***ret);

typedef struct DmDeps {
        char *name;
        BlockRef *deps;
        size_t n_deps;
} DmDeps;

/* Device-mapper names to remove, in removal order: those depending on the
 * disk, plus the base name of a thin pool whose _tdata/_tmeta is among
 * them; everything else first, then the _tdata/_tmeta ones. */
int cleanup_plan_dm(const DmDeps *dms, size_t n, const char *target_kname, char ***ret);

typedef struct MdPlan {
        char **arrays; /* arrays with a member on the disk (to clean on top, then stop) */
        char **members; /* their members on the disk, to zero (each once) */
} MdPlan;

void md_plan_done(MdPlan *p);
/* members_refs[i][j] resolves arrays[i].members[j]. */
int cleanup_plan_md(const MdArray *arrays, BlockRef *const *member_refs, size_t n, const char *target_kname,
                    MdPlan *ret);

/* ---- running it ----------------------------------------------------------- */

typedef struct CleanupResult {
        char **commands; /* every command line run, in order (shell-quoted) */
        char **errors; /* what failed, the Go installer's error texts */
} CleanupResult;

void cleanup_result_done(CleanupResult *r);

/* Runs the whole cleanup of device (a /dev path, symlinks resolved) on
 * the host. Returns 0 when every part succeeded, -EIO when something failed
 * (the errors are in ret; the rest was still attempted, as upstream). */
int cleanup_install_device(HostExec *host, const char *device, CleanupResult *ret);
