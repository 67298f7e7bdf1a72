/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "buf.h"
#include "fileio.h"
#include "gzip.h"

#define GZIP_WINDOW (16 + MAX_WBITS) /* zlib: gzip wrapper, 32 KiB window */
#define CHUNK 16384

int gzip_decompress(const void *in, size_t in_len, size_t max, void **ret, size_t *ret_len)
{
        _cleanup_buf_ Buf out = BUF_INIT(max);
        z_stream z = { 0 };
        unsigned char chunk[CHUNK];
        char *data;
        size_t len;
        int r;

        if (in_len == 0 || in_len > UINT32_MAX)
                return -EBADMSG;
        if (inflateInit2(&z, GZIP_WINDOW) != Z_OK)
                return -ENOMEM;
        z.next_in = (unsigned char *)in;
        z.avail_in = (uInt)in_len;

        for (;;) {
                z.next_out = chunk;
                z.avail_out = sizeof(chunk);
                r = inflate(&z, Z_NO_FLUSH);
                if (r != Z_OK && r != Z_STREAM_END && !(r == Z_BUF_ERROR && z.avail_out == 0)) {
                        inflateEnd(&z);
                        return r == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
                }
                if (sizeof(chunk) - z.avail_out > 0) {
                        int q = buf_append(&out, chunk, sizeof(chunk) - z.avail_out);
                        if (q < 0) {
                                inflateEnd(&z);
                                return q;
                        }
                }
                if (r == Z_STREAM_END) {
                        if (z.avail_in == 0)
                                break;
                        /* another member follows: its header is checked by zlib */
                        if (inflateReset(&z) != Z_OK) {
                                inflateEnd(&z);
                                return -EBADMSG;
                        }
                        continue;
                }
                if (z.avail_in == 0 && z.avail_out != 0) {
                        /* input ended inside a member: truncated */
                        inflateEnd(&z);
                        return -EBADMSG;
                }
        }
        inflateEnd(&z);

        r = buf_take(&out, &data, &len);
        if (r < 0)
                return r;
        *ret = data;
        if (ret_len)
                *ret_len = len;
        return 0;
}

struct GzipWriter {
        z_stream z;
        int fd;
        bool finished;
};

int gzip_writer_new(int fd, int level, GzipWriter **ret)
{
        GzipWriter *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->fd = fd;
        if (deflateInit2(&w->z, level < 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, GZIP_WINDOW, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
                free(w);
                return -ENOMEM;
        }
        *ret = w;
        return 0;
}

static int pump(GzipWriter *w, int flush)
{
        unsigned char chunk[CHUNK];
        int r;

        do {
                w->z.next_out = chunk;
                w->z.avail_out = sizeof(chunk);
                r = deflate(&w->z, flush);
                if (r == Z_STREAM_ERROR)
                        return -EIO;
                r = write_all(w->fd, chunk, sizeof(chunk) - w->z.avail_out);
                if (r < 0)
                        return r;
        } while (w->z.avail_out == 0);
        return 0;
}

int gzip_writer_write(GzipWriter *w, const void *data, size_t len)
{
        const unsigned char *p = data;
        int r;

        if (w->finished)
                return -EINVAL;
        while (len > 0) {
                size_t n = MIN(len, (size_t)UINT32_MAX);
                w->z.next_in = (unsigned char *)p;
                w->z.avail_in = (uInt)n;
                r = pump(w, Z_NO_FLUSH);
                if (r < 0)
                        return r;
                p += n;
                len -= n;
        }
        return 0;
}

int gzip_writer_finish(GzipWriter *w)
{
        int r;

        if (w->finished)
                return 0;
        w->z.next_in = NULL;
        w->z.avail_in = 0;
        r = pump(w, Z_FINISH);
        if (r < 0)
                return r;
        w->finished = true;
        return 0;
}

GzipWriter *gzip_writer_free(GzipWriter *w)
{
        if (!w)
                return NULL;
        deflateEnd(&w->z);
        free(w);
        return NULL;
}
