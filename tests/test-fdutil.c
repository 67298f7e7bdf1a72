/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/fdutil: close_all_fds() by each of its three ways (close_range(2),
 * /proc/self/fd, the loop up to RLIMIT_NOFILE), in a forked child as
 * spawn.c uses it; fd_cloexec().
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdutil.h"
#include "tests.h"

enum { VIA_DEFAULT, VIA_PROC, VIA_LOOP };

/* Descriptors without O_CLOEXEC, at small and large numbers; the child
 * closes all but keep[]: exit 0 when exactly those (and 0-2) are left. */
static void check_closes(int via)
{
        int sp[2], p[2], high, higher;
        int keep[2];
        pid_t pid;
        int status;

        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
        ASSERT_EQ(pipe(p), 0);
        high = fcntl(sp[0], F_DUPFD, 200);
        higher = fcntl(sp[1], F_DUPFD, 1000);
        ASSERT_GE(high, 200);
        ASSERT_GE(higher, 1000);
        keep[0] = p[1];
        keep[1] = high;

        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int r = via == VIA_DEFAULT ? close_all_fds(keep, 2)
                                           : close_all_fds_fallback(keep, 2, via == VIA_PROC);
                if (r < 0)
                        _exit(10);
                for (int fd = 0; fd < 1100; fd++) {
                        bool open = fcntl(fd, F_GETFD) >= 0;
                        bool want = fd <= 2 || fd == keep[0] || fd == keep[1];
                        if (open != want)
                                _exit(fd < 200 ? 20 : fd < 1000 ? 21 : 22);
                }
                _exit(0);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
        close(sp[0]);
        close(sp[1]);
        close(p[0]);
        close(p[1]);
        close(high);
        close(higher);
}

TEST(close_all_fds_close_range)
{
        check_closes(VIA_DEFAULT);
}

TEST(close_all_fds_proc)
{
        check_closes(VIA_PROC);
}

TEST(close_all_fds_loop)
{
        check_closes(VIA_LOOP);
}

TEST(close_all_fds_keeps_nothing_extra_when_empty)
{
        int fd = open("/dev/null", O_RDONLY);
        pid_t pid;
        int status;

        ASSERT_GE(fd, 3);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                _exit(close_all_fds(NULL, 0) == 0 && fcntl(fd, F_GETFD) < 0 && fcntl(2, F_GETFD) >= 0 ? 0
                                                                                                      : 1);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(fd);
}

TEST(fd_cloexec)
{
        int p[2];

        ASSERT_EQ(pipe(p), 0);
        ASSERT_EQ(fcntl(p[0], F_GETFD) & FD_CLOEXEC, 0);
        ASSERT_OK(fd_cloexec(p[0]));
        ASSERT_EQ(fcntl(p[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        ASSERT_OK(fd_cloexec(p[0]));
        close(p[0]);
        close(p[1]);
        ASSERT_ERROR(fd_cloexec(p[0]), EBADF);
}

DEFINE_TEST_MAIN
