/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "gzip.h"
#include "targz.h"
#include "strutil.h"

#define TAR_BLOCK 512

struct TarWriter {
        time_t mtime;
        GzipWriter *gz;
        bool finished;
};

TarWriter *tar_writer_free(TarWriter *t)
{
        if (!t)
                return NULL;
        gzip_writer_free(t->gz);
        free(t);
        return NULL;
}

int tar_writer_new(int fd, time_t mtime, TarWriter **ret)
{
        _cleanup_(tar_writer_freep) TarWriter *t = calloc(1, sizeof(*t));
        int r;

        if (!t)
                return -ENOMEM;
        t->mtime = mtime;
        /* zlib's default level, as gzip(1) -6 */
        r = gzip_writer_new(fd, -1, &t->gz);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

static int feed(TarWriter *t, const void *data, size_t n)
{
        if (t->finished)
                return -ESTALE;
        return gzip_writer_write(t->gz, data, n);
}

/* width-1 octal digits, zero padded, then a NUL; v must fit (callers check). */
static void put_octal(char *field, size_t width, uint64_t v)
{
        field[width - 1] = 0;
        for (size_t i = width - 1; i > 0; i--) {
                field[i - 1] = (char)('0' + (v & 7));
                v >>= 3;
        }
}

int tar_header_fill(char block[static TAR_BLOCK], const char *name, mode_t mode, uint64_t size, time_t mtime,
                    char typeflag)
{
        size_t len = strlen(name), split = 0;
        unsigned sum = 0;

        memset(block, 0, TAR_BLOCK);
        if (len == 0)
                return -EINVAL;
        if (len > 100) {
                /* ustar: prefix (155) "/" name (100), split at a slash */
                for (size_t i = len; i > 0; i--)
                        if (name[i - 1] == '/' && i - 1 <= 155 && len - i <= 100 && len - i > 0) {
                                split = i - 1;
                                break;
                        }
                if (split == 0)
                        return -ENAMETOOLONG;
                memcpy(block + 345, name, split);
                memcpy(block, name + split + 1, len - split - 1);
        } else
                memcpy(block, name, len);
        /* 8 GiB - 1 is the most 11 octal digits hold */
        if (size > 077777777777ULL)
                return -EFBIG;

        put_octal(block + 100, 8, mode & 07777);
        put_octal(block + 108, 8, 0);
        put_octal(block + 116, 8, 0);
        put_octal(block + 124, 12, size);
        put_octal(block + 136, 12, mtime > 0 ? (uint64_t)mtime : 0);
        block[156] = typeflag;
        memcpy(block + 257, "ustar", 6); /* with its NUL */
        memcpy(block + 263, "00", 2);
        memcpy(block + 265, "root", 4);
        memcpy(block + 297, "root", 4);

        /* the checksum is computed with its own field as spaces */
        memset(block + 148, ' ', 8);
        for (size_t i = 0; i < TAR_BLOCK; i++)
                sum += (unsigned char)block[i];
        /* six digits, NUL, space: what tar(1) writes */
        put_octal(block + 148, 7, sum);
        block[155] = ' ';
        return 0;
}

static int add_header(TarWriter *t, const char *name, mode_t mode, uint64_t size, time_t mtime, char type)
{
        char block[TAR_BLOCK];
        int r;

        r = tar_header_fill(block, name, mode, size, mtime, type);
        if (r < 0)
                return r;
        return feed(t, block, sizeof(block));
}

static int pad(TarWriter *t, uint64_t size)
{
        static const char zeros[TAR_BLOCK];
        size_t rest = (size_t)(size % TAR_BLOCK);

        return rest == 0 ? 0 : feed(t, zeros, TAR_BLOCK - rest);
}

int tar_writer_add_dir(TarWriter *t, const char *name, mode_t mode)
{
        _cleanup_free_ char *n = endswith(name, "/") ? strdup(name) : strdup_printf("%s/", name);

        if (!n)
                return -ENOMEM;
        return add_header(t, n, mode, 0, t->mtime, '5');
}

int tar_writer_add_data(TarWriter *t, const char *name, mode_t mode, const void *data, size_t len)
{
        int r;

        r = add_header(t, name, mode, len, t->mtime, '0');
        if (r < 0)
                return r;
        r = feed(t, data, len);
        if (r < 0)
                return r;
        return pad(t, len);
}

int tar_writer_add_file(TarWriter *t, const char *name, const char *path)
{
        return tar_writer_add_file_mode(t, name, path, 0);
}

int tar_writer_add_file_mode(TarWriter *t, const char *name, const char *path, mode_t mode)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        char chunk[16384];
        struct stat st;
        uint64_t left;
        int r;

        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;

        r = add_header(t, name, mode ?: st.st_mode, (uint64_t)st.st_size, st.st_mtime, '0');
        if (r < 0)
                return r;
        /* exactly the size the header announced, even if the file changes under us */
        for (left = (uint64_t)st.st_size; left > 0;) {
                ssize_t n = read(fd, chunk, (size_t)MIN(left, (uint64_t)sizeof(chunk)));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0) {
                        /* truncated meanwhile: pad with zeros */
                        memset(chunk, 0, sizeof(chunk));
                        n = (ssize_t)MIN(left, (uint64_t)sizeof(chunk));
                }
                r = feed(t, chunk, (size_t)n);
                if (r < 0)
                        return r;
                left -= (uint64_t)n;
        }
        return pad(t, (uint64_t)st.st_size);
}

int tar_writer_add_tree(TarWriter *t, const char *name, const char *path)
{
        _cleanup_free_ struct dirent **names = NULL;
        struct stat st;
        int n, r = 0;

        if (lstat(path, &st) < 0)
                return negative_errno();
        if (S_ISREG(st.st_mode))
                return tar_writer_add_file(t, name, path);
        if (!S_ISDIR(st.st_mode))
                return 0; /* links, devices, sockets: not in the archive */
        r = tar_writer_add_dir(t, name, st.st_mode & 07777);
        if (r < 0)
                return r;
        n = scandir(path, &names, NULL, alphasort);
        if (n < 0)
                return negative_errno();
        for (int i = 0; i < n; i++) {
                _cleanup_free_ struct dirent *de = names[i];
                _cleanup_free_ char *sub = NULL, *subname = NULL;

                names[i] = NULL;
                if (r < 0 || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                sub = strdup_printf("%s/%s", path, de->d_name);
                subname = strdup_printf("%s/%s", name, de->d_name);
                r = sub && subname ? tar_writer_add_tree(t, subname, sub) : -ENOMEM;
        }
        return r;
}

int tar_writer_finish(TarWriter *t)
{
        static const char zeros[2 * TAR_BLOCK];
        int r;

        r = feed(t, zeros, sizeof(zeros));
        if (r < 0)
                return r;
        r = gzip_writer_finish(t->gz);
        if (r < 0)
                return r;
        t->finished = true;
        return 0;
}
