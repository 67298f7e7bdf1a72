/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fileio.h"
#include "invutil.h"
#include "strutil.h"

char *inv_path(const InventoryOptions *o, const char *path)
{
        return strdup_printf("%s%s", o && o->root ? o->root : "", path);
}

int inv_read_line(const InventoryOptions *o, const char *path, char **ret)
{
        _cleanup_free_ char *p = inv_path(o, path);

        if (!p)
                return -ENOMEM;
        return read_one_line_file(p, ret);
}

int inv_read_file(const InventoryOptions *o, const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *p = inv_path(o, path);

        if (!p)
                return -ENOMEM;
        return read_full_file(p, max, ret, ret_len);
}

char *inv_read_attr(const char *path, char *buf, size_t size)
{
        /* sysfs attributes are small: one read, no allocation (this runs a
         * few hundred times per inventory) */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t n;

        buf[0] = 0;
        if (fd < 0 || size < 2)
                return buf;
        n = read(fd, buf, size - 1);
        if (n <= 0) {
                buf[0] = 0;
                return buf;
        }
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        strstrip(buf);
        return buf;
}

bool inv_exists(const InventoryOptions *o, const char *path)
{
        _cleanup_free_ char *p = inv_path(o, path);

        return p && access(p, F_OK) == 0;
}

bool inv_read_bool(const char *path)
{
        char b[16];

        return streq(inv_read_attr(path, b, sizeof(b)), "1");
}

int inv_parse_u64(const char *s, int base, uint64_t *ret)
{
        _cleanup_free_ char *copy = NULL;
        const char *p;
        char *end;
        unsigned long long v;

        if (!s)
                return -EINVAL;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        p = strstrip(copy);
        if (base == 16)
                p = startswith(p, "0x") ?: p;
        if (!*p || *p == '-' || *p == '+')
                return -EINVAL;
        errno = 0;
        v = strtoull(p, &end, base);
        if (errno != 0)
                return -errno;
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int inv_add_null(json_object *o, const char *key)
{
        return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
}

int inv_add_nullable(json_object *o, const char *key, json_object *v)
{
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

char *inv_memdup_str(const void *p, size_t n)
{
        char *r = malloc(n + 1);

        if (!r)
                return NULL;
        if (n > 0)
                memcpy(r, p, n);
        r[n] = 0;
        return r;
}
