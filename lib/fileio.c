/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "strutil.h"

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_buf_ Buf b = BUF_INIT(max);
        char chunk[16384];
        int r;

        for (;;) {
                ssize_t n = read(fd, chunk, sizeof(chunk));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                r = buf_append(&b, chunk, (size_t)n);
                if (r < 0)
                        return r;
        }
        return buf_take(&b, ret, ret_len);
}

int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return negative_errno();
        return read_full_fd(fd, max, ret, ret_len);
}

int read_one_line_file(const char *path, char **ret)
{
        _cleanup_free_ char *data = NULL;
        int r;

        r = read_full_file(path, BUF_MAX_SMALL_FILE, &data, NULL);
        if (r < 0)
                return r;
        data[strcspn(data, "\n")] = 0;
        strstrip(data);
        *ret = TAKE_PTR(data);
        return 0;
}

int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;

        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

/* The two halves of an atomic write: a temporary file beside path, then
 * its mode, fsync and the rename over path (or its removal on failure). */
static int atomic_begin(const char *path, char **ret_tmp)
{
        _cleanup_free_ char *tmp = strdup_printf("%s.cradle-XXXXXX", path);
        int fd;

        if (!tmp)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_tmp = TAKE_PTR(tmp);
        return fd;
}

static int atomic_commit(int fd, const char *tmp, const char *path, mode_t mode, int r)
{
        if (r >= 0 && fchmod(fd, mode) < 0)
                r = negative_errno();
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = atomic_begin(path, &tmp);

        if (fd < 0)
                return fd;
        return atomic_commit(fd, tmp, path, mode, write_all(fd, data, len));
}

static int copy_fd(int src_fd, int dst_fd)
{
        char chunk[65536];
        bool in_kernel = true;

        for (;;) {
                ssize_t n;
                int r;

                if (in_kernel) {
                        n = copy_file_range(src_fd, NULL, dst_fd, NULL, SSIZE_MAX, 0);
                        if (n > 0)
                                continue;
                        if (n == 0)
                                return 0;
                        if (errno == EINTR)
                                continue;
                        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
                                return negative_errno();
                        /* no in-kernel copy between these two (older kernels
                         * across file systems, some overlay and FUSE set-ups):
                         * read and write from where it stopped */
                        in_kernel = false;
                }
                n = read(src_fd, chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return 0;
                r = write_all(dst_fd, chunk, (size_t)n);
                if (r < 0)
                        return r;
        }
}

int copy_file_atomic(int src_fd, const char *path, mode_t mode)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = atomic_begin(path, &tmp);

        if (fd < 0)
                return fd;
        return atomic_commit(fd, tmp, path, mode, copy_fd(src_fd, fd));
}

int write_string_file(const char *path, const char *s)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return negative_errno();
        return write_all(fd, s, strlen(s));
}

int mkdir_p(const char *path, mode_t mode)
{
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}
