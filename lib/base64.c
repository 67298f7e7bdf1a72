/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "cleanup.h"
#include "strutil.h"

static int b64_value(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int base64_decode(const char *s, const char *skip, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *out = NULL;
        size_t n = 0, pad = 0;
        uint32_t acc = 0;
        unsigned bits = 0, count = 0;

        out = malloc(strlen(s) / 4 * 3 + 4);
        if (!out)
                return -ENOMEM;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                int v;

                if (strchr(strempty(skip), *p))
                        continue;
                if (*p == '=') {
                        pad++;
                        count++;
                        continue;
                }
                if (pad > 0)
                        return -EINVAL;
                v = b64_value(*p);
                if (v < 0)
                        return -EINVAL;
                acc = (acc << 6) | (uint32_t)v;
                bits += 6;
                count++;
                if (bits >= 8) {
                        bits -= 8;
                        out[n++] = (char)((acc >> bits) & 0xff);
                }
        }
        if (count % 4 != 0 || pad > 2)
                return -EINVAL;
        out[n] = 0;
        if (ret_len)
                *ret_len = n;
        *ret = TAKE_PTR(out);
        return 0;
}

char *base64_encode(const void *data, size_t len)
{
        char *out;

        if (len > (size_t)INT32_MAX / 2)
                return NULL;
        out = malloc(4 * ((len + 2) / 3) + 1);
        if (!out)
                return NULL;
        (void)EVP_EncodeBlock((unsigned char *)out, data, (int)len);
        return out;
}
