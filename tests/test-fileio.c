/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
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

/* 1 MiB through a pipe (64 KiB of buffer): the writer sees partial progress
 * and blocks; every byte arrives in order. A closed reader gives -EPIPE. */
TEST(write_all_through_a_pipe)
{
        const size_t len = 1024 * 1024;
        _cleanup_free_ unsigned char *data = malloc(len);
        _cleanup_free_ char *got = NULL;
        size_t got_len = 0;
        int fds[2];
        pid_t pid;

        ASSERT_NOT_NULL(data);
        for (size_t i = 0; i < len; i++)
                data[i] = (unsigned char)(i * 7 + i / 4096);
        ASSERT_EQ(pipe(fds), 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                close(fds[0]);
                _exit(write_all(fds[1], data, len) == 0 ? 0 : 1);
        }
        close(fds[1]);
        ASSERT_OK(read_full_fd(fds[0], 2 * len, &got, &got_len));
        close(fds[0]);
        {
                int status = 0;
                ASSERT_EQ(waitpid(pid, &status, 0), pid);
                ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        ASSERT_EQ(got_len, len);
        ASSERT_TRUE(memcmp(got, data, len) == 0);

        ASSERT_EQ(pipe(fds), 0);
        close(fds[0]);
        {
                void (*old)(int) = signal(SIGPIPE, SIG_IGN);
                ASSERT_ERROR(write_all(fds[1], data, 16), EPIPE);
                signal(SIGPIPE, old);
        }
        close(fds[1]);
}

DEFINE_TEST_MAIN
