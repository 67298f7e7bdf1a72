/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void buf_init(Buf *b, size_t max)
{
        *b = BUF_INIT(max);
}

void buf_release(Buf *b)
{
        free(b->data);
        b->data = NULL;
        b->len = b->allocated = 0;
}

void buf_reset(Buf *b)
{
        b->len = 0;
        if (b->data)
                b->data[0] = 0;
}

static int buf_reserve(Buf *b, size_t extra)
{
        size_t need, n;

        if (size_add_overflows(b->len, extra, &need) || need > b->max) {
                buf_release(b);
                return -E2BIG;
        }
        if (need + 1 <= b->allocated)
                return 0;

        n = MAX(b->allocated * 2, (size_t)64);
        while (n < need + 1)
                n *= 2;
        n = MIN(n, b->max + 1);

        char *p = realloc(b->data, n);
        if (!p) {
                buf_release(b);
                return -ENOMEM;
        }
        b->data = p;
        b->allocated = n;
        return 0;
}

int buf_append(Buf *b, const void *data, size_t len)
{
        int r;

        r = buf_reserve(b, len);
        if (r < 0)
                return r;
        if (len > 0)
                memcpy(b->data + b->len, data, len);
        b->len += len;
        b->data[b->len] = 0;
        return 0;
}

int buf_append_str(Buf *b, const char *s)
{
        return buf_append(b, s, strlen(s));
}

int buf_append_char(Buf *b, char c)
{
        return buf_append(b, &c, 1);
}

int buf_appendv(Buf *b, const char *fmt, va_list ap)
{
        va_list aq;
        int n, r;

        va_copy(aq, ap);
        n = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        if (n < 0)
                return -EINVAL;

        r = buf_reserve(b, (size_t)n);
        if (r < 0)
                return r;
        (void)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
        return 0;
}

int buf_appendf(Buf *b, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = buf_appendv(b, fmt, ap);
        va_end(ap);
        return r;
}

void buf_consume(Buf *b, size_t n)
{
        if (n >= b->len) {
                buf_reset(b);
                return;
        }
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
        b->data[b->len] = 0;
}

int buf_take(Buf *b, char **ret, size_t *ret_len)
{
        char *p = b->data;

        if (!p) {
                p = strdup("");
                if (!p)
                        return -ENOMEM;
        }
        if (ret_len)
                *ret_len = b->len;
        *ret = p;
        b->data = NULL;
        b->len = b->allocated = 0;
        return 0;
}

const char *buf_str(const Buf *b)
{
        return b->data ? b->data : "";
}
