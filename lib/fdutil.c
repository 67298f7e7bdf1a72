/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdutil.h"

#ifndef __NR_close_range
#define __NR_close_range 436 /* the same number on every architecture */
#endif

static bool kept(const int *keep, size_t n, int fd)
{
        for (size_t i = 0; i < n; i++)
                if (keep[i] == fd)
                        return true;
        return false;
}

/* The smallest kept descriptor >= from, or INT_MAX. */
static int next_kept(const int *keep, size_t n, int from)
{
        int best = INT_MAX;

        for (size_t i = 0; i < n; i++)
                if (keep[i] >= from && keep[i] < best)
                        best = keep[i];
        return best;
}

static int by_close_range(const int *keep, size_t n)
{
        for (int from = 3;;) {
                int k = next_kept(keep, n, from);
                unsigned last = k == INT_MAX ? UINT_MAX : (unsigned)k - 1;
                if (k > from && syscall(__NR_close_range, (unsigned)from, last, 0U) < 0)
                        return -errno;
                if (k == INT_MAX)
                        return 0;
                from = k + 1;
        }
}

/* getdents64 into a stack buffer: opendir() would allocate */
struct linux_dirent64 {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

static int by_proc(const int *keep, size_t n)
{
        int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _Alignas(struct linux_dirent64) char buf[4096];
        long len;

        if (dir < 0)
                return -errno;
        while ((len = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
                for (long off = 0; off < len;) {
                        struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + off);
                        int fd = 0;
                        bool number = de->d_name[0] != '\0';
                        off += de->d_reclen;
                        for (const char *p = de->d_name; *p && number; p++) {
                                number = *p >= '0' && *p <= '9' && fd <= (INT_MAX - 9) / 10;
                                fd = fd * 10 + (*p - '0');
                        }
                        if (number && fd >= 3 && fd != dir && !kept(keep, n, fd))
                                (void)close(fd);
                }
        if (len < 0) {
                int e = errno;
                (void)close(dir);
                return -e;
        }
        (void)close(dir);
        return 0;
}

static int by_loop(const int *keep, size_t n)
{
        struct rlimit rl;
        int max = 65536;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur < (rlim_t)INT_MAX)
                max = (int)rl.rlim_cur;
        for (int fd = 3; fd < max; fd++)
                if (!kept(keep, n, fd))
                        (void)close(fd);
        return 0;
}

int close_all_fds_fallback(const int *keep, size_t n_keep, bool use_proc)
{
        if (use_proc && by_proc(keep, n_keep) == 0)
                return 0;
        return by_loop(keep, n_keep);
}

int close_all_fds(const int *keep, size_t n_keep)
{
        int r = by_close_range(keep, n_keep);

        /* ENOSYS: before Linux 5.9; EPERM: a seccomp filter that refuses it */
        if (r == -ENOSYS || r == -EPERM)
                return close_all_fds_fallback(keep, n_keep, true);
        return r;
}

int fd_cloexec(int fd)
{
        int flags = fcntl(fd, F_GETFD);

        if (flags < 0)
                return -errno;
        if (!(flags & FD_CLOEXEC) && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
                return -errno;
        return 0;
}
