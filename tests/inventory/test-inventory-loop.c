/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Real block devices: a loop device on a file in the test's tmpdir, with a
 * GPT made by sgdisk and filesystems made by mkfs, read through libblkid
 * and our code (partition labels, UUIDs, filesystem types, mount points);
 * a device-mapper device stacked on it (uuid "LVM-...") gives the loop
 * device a holder and shows up in the inventory as an LVM disk with the
 * MBR boot signature the GPT's protective MBR carries. Needs root, losetup,
 * sgdisk, mkfs.ext4 and dmsetup; skips otherwise. Everything is torn down
 * at exit, also after a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "fileio.h"
#include "inventory/disks.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

static char loopdev[64];
static char mnt[512];
static char dmname[64];

static char *mfree_str(char *p)
{
        free(p);
        return NULL;
}

static void teardown(void)
{
        if (mnt[0]) {
                (void)umount2(mnt, MNT_DETACH);
                mnt[0] = 0;
        }
        if (dmname[0]) {
                char *argv[] = { (char *)"dmsetup", (char *)"remove", dmname, NULL };
                (void)test_run(argv, NULL);
                dmname[0] = 0;
        }
        if (loopdev[0]) {
                char *argv[] = { (char *)"losetup", (char *)"-d", loopdev, NULL };
                (void)test_run(argv, NULL);
                loopdev[0] = 0;
        }
}

static int run_quiet(char **argv)
{
        _cleanup_free_ char *out = NULL;

        return test_run(argv, &out);
}

static bool have(const char *tool)
{
        _cleanup_free_ char *cmd = strdup_printf("command -v %s >/dev/null 2>&1", tool);
        char *argv[] = { (char *)"sh", (char *)"-c", cmd, NULL };

        return run_quiet(argv) == 0;
}

/* test_skip() longjmps: nothing allocated may be live when it is called */
static char img_path[512];

static void attach(const char *name)
{
        _cleanup_free_ char *out = NULL;
        char *img = img_path;
        int r;

        if (!test_is_root())
                test_skip("needs root for loop devices");
        if (!have("losetup") || !have("sgdisk") || !have("mkfs.ext4") || !have("dmsetup"))
                test_skip("needs losetup, sgdisk (gdisk), mkfs.ext4 (e2fsprogs) and dmsetup");
        atexit(teardown);
        snprintf(img_path, sizeof(img_path), "%s/%s.img", test_tmpdir(), name);
        {
                char *argv[] = { (char *)"truncate", (char *)"-s", (char *)"64M", img, NULL };
                ASSERT_EQ(run_quiet(argv), 0);
        }
        {
                char *argv[] = { (char *)"sgdisk",
                                 (char *)"-n1:0:+16M",
                                 (char *)"-c1:agent-boot",
                                 (char *)"-t1:8300",
                                 (char *)"-n2:0:0",
                                 (char *)"-c2:data",
                                 (char *)"-t2:8300",
                                 img,
                                 NULL };
                ASSERT_EQ(run_quiet(argv), 0);
        }
        {
                char *argv[] = { (char *)"losetup", (char *)"-fP", (char *)"--show", img, NULL };
                r = test_run(argv, &out);
                if (r == 0)
                        snprintf(loopdev, sizeof(loopdev), "%s", strstrip(out));
        }
        if (r != 0) {
                out = mfree_str(out);
                test_skip("losetup cannot attach a loop device here");
        }
}

TEST(loop_partitions)
{
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *uuid = NULL;
        DiskPartition *parts = NULL;
        size_t n = 0;
        const char *name;

        attach("parts");
        {
                char sys[128];
                snprintf(sys, sizeof(sys), "/sys/class/block/%sp1", loopdev + strlen("/dev/"));
                if (access(sys, F_OK) < 0)
                        test_skip("the kernel made no partitions for %s (built without MSDOS/EFI partition "
                                  "support?)",
                                  loopdev);
        }
        name = loopdev + strlen("/dev/");
        p1 = strdup_printf("%sp1", loopdev);
        p2 = strdup_printf("%sp2", loopdev);
        {
                char *a1[] = { (char *)"mkfs.ext4", (char *)"-q", (char *)"-L", (char *)"boot", p1, NULL };
                char *a2[] = { (char *)"mkfs.ext4", (char *)"-q", (char *)"-L", (char *)"data", p2, NULL };
                ASSERT_EQ(run_quiet(a1), 0);
                ASSERT_EQ(run_quiet(a2), 0);
        }

        /* partitions through libblkid (no udevd here, so no udev database) */
        ASSERT_OK(disk_partitions(&(InventoryOptions){}, name, DISK_PARTITIONS_PROBE_FS, &parts, &n));
        ASSERT_EQ(n, 2);
        ASSERT_TRUE(endswith(parts[0].name, "p1"));
        ASSERT_STREQ(parts[0].label, "agent-boot");
        ASSERT_STREQ(parts[1].label, "data");
        ASSERT_STREQ(parts[0].fs_type, "ext4");
        ASSERT_STREQ(parts[1].fs_type, "ext4");
        ASSERT_NULL(parts[0].mount_point);
        {
                char *argv[] = { (char *)"blkid", (char *)"-p",    (char *)"-s", (char *)"PART_ENTRY_UUID",
                                 (char *)"-o",    (char *)"value", p2,           NULL };
                ASSERT_EQ(test_run(argv, &uuid), 0);
                ASSERT_STREQ(parts[1].uuid, strstrip(uuid));
        }
        disk_partitions_free(parts, n);
        parts = NULL;

        /* a mounted partition is seen with its mount point */
        snprintf(mnt, sizeof(mnt), "%s/mnt", test_tmpdir());
        ASSERT_OK(mkdir_p(mnt, 0755));
        if (mount(p2, mnt, "ext4", MS_RDONLY, NULL) < 0) {
                mnt[0] = 0;
                test_fail(__FILE__, __LINE__, "cannot mount '%s': %s", p2, strerror(errno));
        }
        ASSERT_OK(disk_partitions(&(InventoryOptions){}, name, 0, &parts, &n));
        ASSERT_STREQ(parts[1].mount_point, mnt);
        ASSERT_NULL(parts[0].mount_point);
        disk_partitions_free(parts, n);
        (void)umount2(mnt, MNT_DETACH);
        mnt[0] = 0;

        teardown();
}

/* Whole-device facts, which need no partition support from the kernel:
 * a dm device over the loop device is its holder, and is listed as an LVM
 * volume whose first sector (the GPT's protective MBR) makes it bootable. */
TEST(loop_holder_lvm)
{
        _cleanup_free_ char *table = NULL, *holders = NULL, *text = NULL;
        _cleanup_(json_object_putp) json_object *disks = NULL;
        json_object *lvm = NULL;
        const char *name;

        attach("holder");
        name = loopdev + strlen("/dev/");
        /* a holder: a linear device-mapper device over the whole loop device */
        snprintf(dmname, sizeof(dmname), "cradle-test-%d", (int)getpid());
        table = strdup_printf("0 131072 linear %s 0", loopdev);
        {
                _cleanup_free_ char *uuidarg = strdup_printf("LVM-cradletest%d", (int)getpid());
                char *argv[] = { (char *)"dmsetup", (char *)"create",  dmname, (char *)"--uuid",
                                 uuidarg,           (char *)"--table", table,  NULL };
                if (run_quiet(argv) != 0) {
                        dmname[0] = 0;
                        free(uuidarg);
                        uuidarg = NULL;
                        table = mfree_str(table);
                        test_skip("device-mapper not available in this kernel");
                }
        }
        holders = disk_holders_of(name);
        ASSERT_TRUE(startswith(holders, "dm-"));

        /* the inventory lists the dm device as an LVM volume, not eligible;
         * the loop device itself is skipped */
        ASSERT_OK(disks_collect(&(InventoryOptions){}, &disks));
        for (size_t i = 0; i < json_object_array_length(disks); i++) {
                json_object *d = json_object_array_get_idx(disks, i);
                ASSERT_TRUE(!streq(json_get_string(d, "name"), name));
                if (streq(json_get_string(d, "name"), holders))
                        lvm = d;
        }
        ASSERT_NOT_NULL(lvm);
        text = json_to_string(lvm, 0);
        {
                _cleanup_free_ char *want = strdup_printf(
                        "{\"bootable\":true,\"drive_type\":\"LVM\",\"id\":\"/dev/"
                        "%s\",\"installation_eligibility\":"
                        "{\"not_eligible_reasons\":[\"Disk is an LVM logical volume\"]},\"name\":\"%s\","
                        "\"path\":\"/dev/%s\",\"size_bytes\":67108864}",
                        holders, holders, holders);
                ASSERT_STREQ(text, want);
        }
        teardown();
}

DEFINE_TEST_MAIN
