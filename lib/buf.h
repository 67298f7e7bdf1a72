/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A growable, NUL-terminated byte buffer with a mandatory ceiling, after
 * curl's dynbuf. It is the one way cradle accumulates outside input (HTTP
 * bodies, process output, files), so every accumulation has a limit.
 *
 * Invariants:
 *  - after buf_init() no memory is held until the first append;
 *  - when data is non-NULL it holds len bytes plus a NUL terminator;
 *  - len never exceeds max; an append that would exceed it, or that cannot
 *    allocate, frees the buffer and returns an error (-E2BIG or -ENOMEM),
 *    so a half-filled buffer never survives a failure.
 *
 * Members are read-only for callers; change them through the API.
 */

#include <stdarg.h>
#include <stddef.h>

#include "macro.h"

/* Ceilings named once, so reviews can see them. */
#define BUF_MAX_HTTP_BODY (64u * 1024 * 1024)
#define BUF_MAX_JSON_DOC (16u * 1024 * 1024)
#define BUF_MAX_PROCESS_OUTPUT (8u * 1024 * 1024)
#define BUF_MAX_SMALL_FILE (1u * 1024 * 1024)

typedef struct Buf {
        char *data;
        size_t len;
        size_t allocated;
        size_t max;
} Buf;

#define BUF_INIT(ceiling) ((Buf){ .max = (ceiling) })

void buf_init(Buf *b, size_t max);
/* Frees the contents and keeps the ceiling, ready for reuse. */
void buf_release(Buf *b);
static inline void buf_releasep(Buf *b)
{
        buf_release(b);
}
#define _cleanup_buf_ _cleanup_(buf_releasep)

/* Drops the contents but keeps the allocation. */
void buf_reset(Buf *b);

int buf_append(Buf *b, const void *data, size_t len) _warn_unused_result_;
int buf_append_str(Buf *b, const char *s) _warn_unused_result_;
int buf_append_char(Buf *b, char c) _warn_unused_result_;
int buf_appendf(Buf *b, const char *fmt, ...) _printf_(2, 3) _warn_unused_result_;
int buf_appendv(Buf *b, const char *fmt, va_list ap) _printf_(2, 0) _warn_unused_result_;

/* Removes the first n bytes (consumed input) keeping the rest. */
void buf_consume(Buf *b, size_t n);

/* Hands the contents to the caller (who frees them; never NULL on success:
 * an empty buffer gives an allocated ""), and resets the buffer. */
int buf_take(Buf *b, char **ret, size_t *ret_len) _warn_unused_result_;

/* The contents as a C string: never NULL, "" when empty. */
const char *buf_str(const Buf *b);
