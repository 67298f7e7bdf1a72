/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "fileio.h"
#include "strutil.h"
#include "tests.h"

TEST(atomic_write_and_read_back)
{
        _cleanup_free_ char *path = strdup_printf("%s/a/b/c.txt", test_tmpdir()), *dir = NULL, *data = NULL;
        struct stat st;
        size_t n;

        dir = strdup_printf("%s/a/b", test_tmpdir());
        ASSERT_OK(mkdir_p(dir, 0755));
        ASSERT_OK(mkdir_p(dir, 0755));
        ASSERT_OK(write_file_atomic(path, "first", 5, 0600));
        ASSERT_OK(write_file_atomic(path, "second\n", 7, 0640));
        ASSERT_OK(read_full_file(path, 100, &data, &n));
        ASSERT_EQ(n, 7);
        ASSERT_STREQ(data, "second\n");
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mode & 0777, 0640);

        /* no temporary file is left behind */
        {
                _cleanup_closedir_ DIR *d = opendir(dir);
                struct dirent *de;
                int entries = 0;
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.')
                                entries++;
                ASSERT_EQ(entries, 1);
        }
}

TEST(failed_write_leaves_target_alone)
{
        _cleanup_free_ char *path = strdup_printf("%s/missing-dir/x", test_tmpdir());

        ASSERT_ERROR(write_file_atomic(path, "x", 1, 0600), ENOENT);
}

TEST(read_limits_and_one_line)
{
        _cleanup_free_ char *path = strdup_printf("%s/sysattr", test_tmpdir()), *data = NULL, *line = NULL;

        ASSERT_OK(write_file_atomic(path, "  0x1af4 \nsecond\n", 17, 0600));
        ASSERT_ERROR(read_full_file(path, 5, &data, NULL), E2BIG);
        ASSERT_OK(read_one_line_file(path, &line));
        ASSERT_STREQ(line, "0x1af4");
        ASSERT_ERROR(read_one_line_file("/nonexistent", &line), ENOENT);
}

TEST(proc_files_read_fully)
{
        _cleanup_free_ char *data = NULL;
        size_t n;

        ASSERT_OK(read_full_file("/proc/self/status", 1 << 20, &data, &n));
        ASSERT_TRUE(n > 0);
        ASSERT_CONTAINS(data, "Name:");
}

DEFINE_TEST_MAIN
