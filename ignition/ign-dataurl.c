/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RFC 2397 data URLs, with the acceptance rules of the Go package Ignition
 * uses (vincent-petithory/dataurl): an optional media type whose type is a
 * known discrete/composite type or an x- token, ;attr=value parameters
 * (token or quoted), ";base64" just before the comma; base64 data is the
 * standard alphabet with padding, other data is ASCII URL characters with
 * %XX escapes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "buf.h"
#include "gzip.h"
#include "base64.h"
#include "cleanup.h"
#include "ign-internal.h"
#include "strutil.h"

bool ign_is_data_url(const char *s)
{
        return s && startswith(s, "data:");
}

static bool is_tspecial(char c)
{
        return strchr("()<>@,;:\\\"/[]?=", c) != NULL;
}

static bool is_token(char c)
{
        return (unsigned char)c > 0x20 && (unsigned char)c < 0x7f && !is_tspecial(c);
}

static bool is_url_char(char c)
{
        unsigned char u = (unsigned char)c;
        return u > 0x1f && u < 0x7f && !strchr(" <>#\"{}|\\^[]`", c);
}

static bool is_base64_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
               c == '/' || c == '=';
}

static int unhex(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static int fail(char **reterr, const char *msg)
{
        if (reterr)
                *reterr = strdup(msg);
        return -EINVAL;
}

/* Checks the header (between "data:" and the comma); returns whether it
 * ends in ";base64" and the position of the comma. */
static int parse_header(const char *s, bool *ret_base64, const char **ret_comma, char **reterr)
{
        const char *p = s;
        bool base64 = false;

        if (*p != ';' && *p != ',') {
                const char *type = p;
                size_t n;
                if (!*p)
                        return fail(reterr, "missing comma before data");
                if (!is_token(*p))
                        return fail(reterr, "invalid character after data prefix");
                while (is_token(*p))
                        p++;
                if (*p != '/')
                        return fail(reterr,
                                    *p ? "invalid character for media type" : "missing media type slash");
                n = (size_t)(p - type);
                if (!(n >= 2 && (type[0] == 'x' || type[0] == 'X') && type[1] == '-') &&
                    !(strneq(type, "text", MIN(n, 4)) && n >= 4) && !(n >= 5 && strneq(type, "image", 5)) &&
                    !(n >= 5 && strneq(type, "audio", 5)) && !(n >= 5 && strneq(type, "video", 5)) &&
                    !(n >= 11 && strneq(type, "application", 11)) &&
                    !(n >= 7 && strneq(type, "message", 7)) && !(n >= 9 && strneq(type, "multipart", 9)))
                        return fail(reterr, "invalid media type");
                p++;
                while (is_token(*p))
                        p++;
                if (*p != ';' && *p != ',')
                        return fail(reterr,
                                    *p ? "invalid character for media subtype" : "incomplete media type");
        }
        while (*p == ';') {
                const char *attr = ++p;
                if (!is_token(*p))
                        return fail(reterr, *p ? "invalid character for parameter attribute"
                                               : "unterminated parameter sequence");
                while (is_token(*p))
                        p++;
                if (*p == ',') {
                        if ((size_t)(p - attr) != 6 || !strneq(attr, "base64", 6))
                                return fail(reterr, "expected base64 before the comma");
                        base64 = true;
                        break;
                }
                if (*p != '=')
                        return fail(reterr, *p ? "invalid character for parameter attribute"
                                               : "unterminated parameter sequence");
                p++;
                if (*p == '"') {
                        p++;
                        while (*p && *p != '"') {
                                if ((unsigned char)*p > 0x7f)
                                        return fail(reterr, "invalid character for parameter value");
                                if (*p == '\\' && p[1])
                                        p++;
                                p++;
                        }
                        if (*p != '"')
                                return fail(reterr, "unclosed quoted string");
                        p++;
                } else {
                        if (!is_token(*p))
                                return fail(reterr, "invalid character for parameter value");
                        while (*p && *p != ';' && *p != ',') {
                                if (*p == '%') {
                                        if (unhex(p[1]) < 0 || unhex(p[2]) < 0)
                                                return fail(reterr, "invalid escape in parameter value");
                                        p += 3;
                                        continue;
                                }
                                if (!is_token(*p))
                                        return fail(reterr, "invalid character for parameter value");
                                p++;
                        }
                }
                if (*p != ';' && *p != ',')
                        return fail(reterr, "missing comma before data");
        }
        if (*p != ',')
                return fail(reterr, "missing comma before data");
        *ret_base64 = base64;
        *ret_comma = p;
        return 0;
}

int ign_data_url_decode(const char *url, void **ret, size_t *ret_len, char **reterr)
{
        _cleanup_free_ uint8_t *out = NULL;
        /* both set by parse_header(); initialised for gcc -Os, which
         * cannot tell and warns */
        const char *comma = url, *data, *s;
        bool base64 = false;
        size_t n, len = 0;
        int r;

        s = startswith(url, "data:");
        if (!s)
                return fail(reterr, "missing data prefix");
        r = parse_header(s, &base64, &comma, reterr);
        if (r < 0)
                return r;
        data = comma + 1;
        n = strlen(data);

        if (base64) {
                size_t pad = 0;
                for (size_t i = 0; i < n; i++)
                        if (!is_base64_char(data[i]))
                                return fail(reterr, "invalid data character");
                /* Go's StdEncoding: padded, '=' only at the end */
                if (n % 4 != 0)
                        return fail(reterr, "illegal base64 data (length not a multiple of 4)");
                while (pad < n && pad < 2 && data[n - 1 - pad] == '=')
                        pad++;
                if (memchr(data, '=', n - pad))
                        return fail(reterr, "illegal base64 data (misplaced padding)");
                r = base64_decode(data, NULL, (char **)&out, &len);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return fail(reterr, "illegal base64 data");
        } else {
                out = malloc(n + 1);
                if (!out)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        if (!is_url_char(data[i]))
                                return fail(reterr, "invalid data character");
                        if (data[i] == '%') {
                                int hi = i + 1 < n ? unhex(data[i + 1]) : -1;
                                int lo = i + 2 < n ? unhex(data[i + 2]) : -1;
                                if (hi < 0 || lo < 0)
                                        return fail(reterr, "invalid %-escape in data");
                                out[len++] = (uint8_t)(hi << 4 | lo);
                                i += 2;
                        } else
                                out[len++] = (uint8_t)data[i];
                }
                out[len] = 0;
        }
        *ret = TAKE_PTR(out);
        if (ret_len)
                *ret_len = len;
        return 0;
}

char *ign_data_url_encode(const void *data, size_t len, bool percent)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_HTTP_BODY);
        const uint8_t *p = data;
        char *s;

        if (percent) {
                if (buf_append_str(&b, "data:,") < 0)
                        return NULL;
                for (size_t i = 0; i < len; i++) {
                        uint8_t c = p[i];
                        int r;
                        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            (c && strchr("-_.!~*'()", c)))
                                r = buf_append_char(&b, (char)c);
                        else
                                r = buf_appendf(&b, "%%%02X", c);
                        if (r < 0)
                                return NULL;
                }
        } else {
                _cleanup_free_ char *tmp = base64_encode(p, len);
                if (!tmp)
                        return NULL;
                if (buf_append_str(&b, "data:;base64,") < 0 || buf_append_str(&b, tmp) < 0)
                        return NULL;
        }
        if (buf_take(&b, &s, NULL) < 0)
                return NULL;
        return s;
}

/* sha512-HEX / sha256-HEX against the bytes. -EIO on a mismatch. */
static int verify_hash(const char *spec, const void *data, size_t len, char **reterr)
{
        const EVP_MD *md;
        const char *hex;
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int dlen;
        char got[2 * EVP_MAX_MD_SIZE + 1];

        if ((hex = startswith(spec, "sha512-")))
                md = EVP_sha512();
        else if ((hex = startswith(spec, "sha256-")))
                md = EVP_sha256();
        else
                return fail(reterr, "unrecognized hash function");
        if (EVP_Digest(data, len, digest, &dlen, md, NULL) != 1)
                return -EIO;
        for (unsigned i = 0; i < dlen; i++)
                snprintf(got + 2 * i, 3, "%02x", digest[i]);
        if (strcasecmp(got, hex) != 0) {
                if (reterr)
                        *reterr = strdup_printf("hash mismatch: expected %s, got %s", hex, got);
                return -EIO;
        }
        return 0;
}

int ign_resource_read(const IgnResource *res, size_t max, void **ret, size_t *ret_len, char **reterr)
{
        _cleanup_free_ void *raw = NULL;
        _cleanup_free_ char *err = NULL;
        size_t len;
        int r;

        if (!res->source) {
                *ret = strdup("");
                if (ret_len)
                        *ret_len = 0;
                return *ret ? 0 : -ENOMEM;
        }
        if (!ign_is_data_url(res->source)) {
                if (reterr)
                        *reterr = strdup("only data: URLs can be read without fetching");
                return -EPROTONOSUPPORT;
        }
        r = ign_data_url_decode(res->source, &raw, &len, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("invalid data URL: %s", strna(err));
                return r == -ENOMEM ? r : -EBADMSG;
        }
        /* Ignition verifies the hash of what it fetched, before decompressing */
        if (res->verification.hash) {
                r = verify_hash(res->verification.hash, raw, len, reterr);
                if (r < 0)
                        return r;
        }
        if (res->compression && streq(res->compression, "gzip")) {
                void *plain;
                r = gzip_decompress(raw, len, max, &plain, &len);
                if (r == -EBADMSG) {
                        if (reterr)
                                *reterr = strdup("corrupt gzip data");
                        return r;
                }
                if (r < 0)
                        return r;
                free(raw);
                raw = plain;
        } else if (res->compression && !isempty(res->compression)) {
                if (reterr)
                        *reterr = strdup_printf("unsupported compression \"%s\"", res->compression);
                return -EOPNOTSUPP;
        }
        if (len > max)
                return -E2BIG;
        *ret = TAKE_PTR(raw);
        if (ret_len)
                *ret_len = len;
        return 0;
}
