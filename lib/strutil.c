/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "strutil.h"

void erase_and_free(void *p)
{
        if (!p)
                return;
        explicit_bzero(p, strlen(p));
        free(p);
}

static bool number_shape_ok(const char *s)
{
        /* strto*() accept leading blanks and '+'; Go and we do not. */
        return !isempty(s) && !isspace((unsigned char)s[0]);
}

int safe_atoi64(const char *s, int64_t *ret)
{
        char *end;
        long long v;

        if (!number_shape_ok(s))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int safe_atou64(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;

        if (!number_shape_ok(s) || s[0] == '-')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int safe_atoi(const char *s, int *ret)
{
        int64_t v;
        int r;

        r = safe_atoi64(s, &v);
        if (r < 0)
                return r;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        *ret = (int)v;
        return 0;
}

int safe_atou(const char *s, unsigned *ret)
{
        uint64_t v;
        int r;

        r = safe_atou64(s, &v);
        if (r < 0)
                return r;
        if (v > UINT_MAX)
                return -ERANGE;
        *ret = (unsigned)v;
        return 0;
}

int safe_atod(const char *s, double *ret)
{
        char *end;
        double v;

        if (!number_shape_ok(s))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != 0 || isnan(v))
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_bool_go(const char *s, bool *ret)
{
        static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
        static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (streq(s, yes[i])) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (streq(s, no[i])) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

const char *startswith(const char *s, const char *prefix)
{
        size_t n = strlen(prefix);

        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

const char *startswith_no_case(const char *s, const char *prefix)
{
        size_t n = strlen(prefix);

        return strncasecmp(s, prefix, n) == 0 ? s + n : NULL;
}

bool endswith(const char *s, const char *suffix)
{
        size_t a = strlen(s), b = strlen(suffix);

        return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

char *strstrip(char *s)
{
        char *e;

        while (isspace((unsigned char)*s))
                memmove(s, s + 1, strlen(s));
        e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
                *--e = 0;
        return s;
}

char *strdup_vprintf(const char *fmt, va_list ap)
{
        char *p;

        return vasprintf(&p, fmt, ap) < 0 ? NULL : p;
}

char *strdup_printf(const char *fmt, ...)
{
        va_list ap;
        char *p;

        va_start(ap, fmt);
        p = strdup_vprintf(fmt, ap);
        va_end(ap);
        return p;
}

char *str_replace_all(const char *s, const char *needle, const char *replacement)
{
        size_t nl = strlen(needle), rl = strlen(replacement), count = 0, len;
        const char *p;
        char *out, *o;

        if (nl == 0)
                return strdup(s);
        for (p = s; (p = strstr(p, needle)); p += nl)
                count++;
        len = strlen(s) - count * nl + count * rl;
        out = malloc(len + 1);
        if (!out)
                return NULL;
        for (o = out, p = s;;) {
                const char *m = strstr(p, needle);
                if (!m) {
                        memcpy(o, p, strlen(p) + 1);
                        break;
                }
                memcpy(o, p, (size_t)(m - p));
                o += m - p;
                memcpy(o, replacement, rl);
                o += rl;
                p = m + nl;
        }
        return out;
}

char *strdup_lower(const char *s)
{
        char *p = strdup(s);

        if (p)
                for (char *c = p; *c; c++)
                        *c = (char)tolower((unsigned char)*c);
        return p;
}

int free_and_strdup(char **p, const char *s)
{
        char *n = NULL;

        if (s) {
                n = strdup(s);
                if (!n)
                        return -ENOMEM;
        }
        free(*p);
        *p = n;
        return 0;
}

void strv_free(char **l)
{
        if (!l)
                return;
        for (char **s = l; *s; s++)
                free(*s);
        free(l);
}

size_t strv_length(char *const *l)
{
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

bool strv_contains(char *const *l, const char *s)
{
        STRV_FOREACH (i, l)
                if (streq(*i, s))
                        return true;
        return false;
}

int strv_push(char ***l, char *s)
{
        size_t n = strv_length(*l);
        char **c = reallocarray(*l, n + 2, sizeof(char *));

        if (!c)
                return -ENOMEM;
        c[n] = s;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_extend(char ***l, const char *s)
{
        char *c = strdup(s);
        int r;

        if (!c)
                return -ENOMEM;
        r = strv_push(l, c);
        if (r < 0)
                free(c);
        return r;
}

int strv_extend_pair(char ***l, const char *a, const char *b)
{
        int r = strv_extend(l, a);

        if (r < 0)
                return r;
        r = strv_extend(l, b);
        if (r < 0) {
                size_t n = strv_length(*l);
                free((*l)[n - 1]);
                (*l)[n - 1] = NULL;
        }
        return r;
}

int strv_extendf(char ***l, const char *fmt, ...)
{
        va_list ap;
        char *p;
        int n, r;

        va_start(ap, fmt);
        n = vasprintf(&p, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        r = strv_push(l, p);
        if (r < 0)
                free(p);
        return r;
}

int strv_split(const char *s, const char *separators, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        int r;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        while (*s) {
                size_t n = strcspn(s, separators);
                if (n > 0) {
                        char *w = strndup(s, n);
                        if (!w)
                                return -ENOMEM;
                        r = strv_push(&l, w);
                        if (r < 0) {
                                free(w);
                                return r;
                        }
                }
                s += n;
                if (*s)
                        s++;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

char *strv_join(char *const *l, const char *separator)
{
        size_t sl = strlen(separator), n = 0;
        char *out, *o;

        STRV_FOREACH (s, l)
                n += strlen(*s) + sl;
        out = malloc(n + 1);
        if (!out)
                return NULL;
        o = out;
        STRV_FOREACH (s, l) {
                if (o != out) {
                        memcpy(o, separator, sl);
                        o += sl;
                }
                size_t k = strlen(*s);
                memcpy(o, *s, k);
                o += k;
        }
        *o = 0;
        return out;
}

char **strv_copy(char *const *l)
{
        _cleanup_strv_free_ char **c = calloc(strv_length(l) + 1, sizeof(char *));
        size_t i = 0;

        if (!c)
                return NULL;
        STRV_FOREACH (s, l) {
                c[i] = strdup(*s);
                if (!c[i])
                        return NULL;
                i++;
        }
        return TAKE_PTR(c);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(char **l)
{
        size_t n = strv_length(l);

        if (n > 1)
                qsort(l, n, sizeof(char *), cmp_str);
}
