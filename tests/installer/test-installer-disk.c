/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The installer's in-process disk operations on image files: the libblkid
 * wipe against "wipefs --all --force" on an identical copy (the bytes
 * afterwards must be the same), zeroing the first sector, and the answers
 * for things that are not block devices.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "installer/devclean.h"
#include "installer/disk.h"
#include "strutil.h"
#include "tests.h"

static bool have(const char *prog)
{
        _cleanup_free_ char *cmd = strdup_printf("command -v %s >/dev/null", prog), *out = NULL;
        char *argv[] = { (char *)"sh", (char *)"-c", cmd, NULL };

        return test_run(argv, &out) == 0;
}

static char *make_file(const char *name, size_t size, unsigned char fill)
{
        char *p = strdup_printf("%s/%s", test_tmpdir(), name);
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        char chunk[4096];

        ASSERT_TRUE(fd >= 0);
        memset(chunk, fill, sizeof(chunk));
        for (size_t done = 0; done < size; done += sizeof(chunk))
                ASSERT_EQ(write(fd, chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
        return p;
}

static char *read_all(const char *p)
{
        char *data = NULL;
        ASSERT_OK(read_full_file(p, 64u << 20, &data, NULL));
        return data;
}

static void compare_with_wipefs(const char *name, char *const *prepare)
{
        _cleanup_free_ char *a = make_file(name, 16u << 20, 0), *b = NULL, *err = NULL, *out = NULL;
        _cleanup_free_ char *bname = strdup_printf("%s.wipefs", name);
        size_t n = strv_length(prepare);
        char **argv = calloc(n + 2, sizeof(char *));

        ASSERT_NOT_NULL(argv);
        for (size_t i = 0; i < n; i++)
                argv[i] = prepare[i];
        argv[n] = a;
        ASSERT_EQ(test_run(argv, &out), 0);
        free(argv);

        b = strdup_printf("%s/%s", test_tmpdir(), bname);
        {
                char *cp[] = { (char *)"cp", a, b, NULL };
                ASSERT_EQ(test_run(cp, NULL), 0);
        }
        {
                char *w[] = { (char *)"wipefs", (char *)"--all", (char *)"--force", b, NULL };
                ASSERT_EQ(test_run(w, NULL), 0);
        }
        ASSERT_OK(disk_wipe_signatures(a, &err));
        {
                /* compared chunk by chunk: the xfs image is large */
                _cleanup_close_ int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
                static char ca[1 << 16], cb[1 << 16];
                size_t total = 0;
                bool same = true;
                for (;;) {
                        ssize_t na = read(fa, ca, sizeof(ca)), nb = read(fb, cb, sizeof(cb));
                        ASSERT_EQ(na, nb);
                        if (na <= 0)
                                break;
                        same = same && memcmp(ca, cb, (size_t)na) == 0;
                        total += (size_t)na;
                }
                fprintf(stderr, "%s: %zu bytes, same as wipefs: %s\n", name, total, same ? "yes" : "no");
                ASSERT_TRUE(same);
        }
}

TEST(wipe_matches_wipefs)
{
        char *gpt[] = { (char *)"sgdisk", (char *)"-n",    (char *)"1:2048:+4M",
                        (char *)"-n",     (char *)"2:0:0", NULL };
        char *mbr[] = { (char *)"sh", (char *)"-c",
                        (char *)"printf 'label: dos\\n,4M\\n,\\n' | sfdisk -q \"$0\"", NULL };
        char *ext4[] = { (char *)"mkfs.ext4", (char *)"-q", (char *)"-F", NULL };
        char *swap[] = { (char *)"mkswap", NULL };
        char *xfs[] = { (char *)"sh", (char *)"-c",
                        (char *)"truncate -s 320M \"$0\" && mkfs.xfs -q -f \"$0\"", NULL };

        if (!have("wipefs"))
                test_skip("wipefs is not installed");
        if (have("sgdisk"))
                compare_with_wipefs("gpt.img", gpt);
        if (have("sfdisk"))
                compare_with_wipefs("mbr.img", mbr);
        if (have("mkfs.ext4"))
                compare_with_wipefs("ext4.img", ext4);
        if (have("mkswap"))
                compare_with_wipefs("swap.img", swap);
        if (have("mkfs.xfs"))
                compare_with_wipefs("xfs.img", xfs);
}

TEST(wipe_leaves_a_clean_disk_alone)
{
        _cleanup_free_ char *p = make_file("blank.img", 1u << 20, 0x5a), *before = NULL, *after = NULL,
                            *err = NULL;

        before = read_all(p);
        ASSERT_OK(disk_wipe_signatures(p, &err));
        after = read_all(p);
        ASSERT_EQ(memcmp(before, after, 1u << 20), 0);
        ASSERT_ERROR(disk_wipe_signatures("/nonexistent/disk", &err), ENOENT);
        ASSERT_CONTAINS(err, "/nonexistent/disk");
}

TEST(zero_first_sector)
{
        _cleanup_free_ char *p = make_file("format.img", 1u << 20, 0xab), *data = NULL;

        ASSERT_OK(disk_zero_first_sector(p));
        data = read_all(p);
        for (size_t i = 0; i < 512; i++)
                ASSERT_EQ((unsigned char)data[i], 0);
        for (size_t i = 512; i < (1u << 20); i++)
                ASSERT_EQ((unsigned char)data[i], 0xab);
        ASSERT_ERROR(disk_zero_first_sector("/nonexistent/disk"), ENOENT);
}

TEST(not_block_devices)
{
        _cleanup_free_ char *p = make_file("plain.img", 4096, 0), *r = NULL;
        _cleanup_strv_free_ char **reasons = NULL;
        BlockRef b = {};

        ASSERT_ERROR(disk_check_not_busy(p, &reasons), ENOTBLK);
        ASSERT_ERROR(disk_check_not_busy("/nonexistent", &reasons), ENOTBLK);
        ASSERT_ERROR(disk_partition_by_number(p, 2, &r), ENOTBLK);
        ASSERT_OK(block_ref_resolve(p, &b));
        ASSERT_NULL(b.kname);
        ASSERT_FALSE(block_ref_on_disk(&b, "sda"));
        block_ref_done(&b);
        ASSERT_OK(disk_resolve(p, &r));
        ASSERT_STREQ(r, p);
        {
                _cleanup_free_ char *link = strdup_printf("%s/by-path-link", test_tmpdir()), *r2 = NULL;
                ASSERT_EQ(symlink(p, link), 0);
                ASSERT_OK(disk_resolve(link, &r2));
                ASSERT_STREQ(r2, p);
        }
}

DEFINE_TEST_MAIN
