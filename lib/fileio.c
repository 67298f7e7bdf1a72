/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
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

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        tmp = strdup_printf("%s.cradle-XXXXXX", path);
        if (!tmp)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        r = write_all(fd, data, len);
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
