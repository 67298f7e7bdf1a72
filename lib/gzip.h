/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * gzip over zlib: bounded decompression of in-memory data (Ignition
 * resources, HTTP bodies) and a streaming writer (log tarballs).
 */

#include <stddef.h>

#include "macro.h"

/* Decompresses one or more concatenated gzip members, as Go's gzip reader
 * does. -EBADMSG for corrupt or truncated input (CRC and length are
 * checked), -E2BIG when the output would exceed max. *ret is allocated and
 * NUL-terminated (not counted in *ret_len). */
int gzip_decompress(const void *in, size_t in_len, size_t max, void **ret, size_t *ret_len);

typedef struct GzipWriter GzipWriter;

/* Writes a gzip stream to fd (not closed by the writer). level 1-9, or -1
 * for zlib's default. */
int gzip_writer_new(int fd, int level, GzipWriter **ret);
int gzip_writer_write(GzipWriter *w, const void *data, size_t len);
/* Flushes the trailer. Must be called for a complete stream. */
int gzip_writer_finish(GzipWriter *w);
GzipWriter *gzip_writer_free(GzipWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(GzipWriter *, gzip_writer_free)
