/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "invutil.h"
#include "mountinfo.h"
#include "strutil.h"

#define MOUNTINFO_MAX (8u * 1024 * 1024)

void mount_table_done(MountTable *t)
{
        for (size_t i = 0; i < t->n; i++) {
                free(t->entries[i].mount_point);
                free(t->entries[i].fstype);
                free(t->entries[i].source);
        }
        free(t->entries);
        *t = (MountTable){};
}

/* Undoes the kernel's octal escapes (\040 space, \011 tab, \012 newline,
 * \134 backslash); other backslashes stay. */
static char *unescape(const char *s, size_t n)
{
        char *r = malloc(n + 1), *w = r;

        if (!r)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *w++ = (char)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
                        i += 3;
                } else
                        *w++ = s[i];
        }
        *w = 0;
        return r;
}

/* Splits the line into space-separated fields (no allocation). */
static size_t split_fields(const char *line, size_t len, const char **f, size_t *fl, size_t max)
{
        size_t n = 0, i = 0;

        while (i < len && n < max) {
                while (i < len && line[i] == ' ')
                        i++;
                if (i >= len)
                        break;
                f[n] = line + i;
                while (i < len && line[i] != ' ')
                        i++;
                fl[n] = (size_t)(line + i - f[n]);
                n++;
        }
        return n;
}

int mountinfo_parse(const char *text, size_t len, MountTable *ret)
{
        _cleanup_(mount_table_done) MountTable t = {};
        const char *p = text, *end = text + len;
        size_t allocated = 0;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                const char *f[64];
                size_t fl[64], n, sep;
                MountEntry e = {};
                char devbuf[32];
                int consumed = 0;

                if (!eol)
                        eol = end;
                n = split_fields(p, (size_t)(eol - p), f, fl, ELEMENTSOF(f));
                p = eol + 1;
                /* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
                for (sep = 6; sep < n; sep++)
                        if (fl[sep] == 1 && f[sep][0] == '-')
                                break;
                if (n < 6 || sep + 2 >= n || fl[2] >= sizeof(devbuf))
                        continue;
                memcpy(devbuf, f[2], fl[2]);
                devbuf[fl[2]] = 0;
                if (sscanf(devbuf, "%u:%u%n", &e.major, &e.minor, &consumed) != 2 || devbuf[consumed])
                        continue;
                e.mount_point = unescape(f[4], fl[4]);
                e.fstype = unescape(f[sep + 1], fl[sep + 1]);
                e.source = unescape(f[sep + 2], fl[sep + 2]);
                if (!e.mount_point || !e.fstype || !e.source) {
                        free(e.mount_point);
                        free(e.fstype);
                        free(e.source);
                        return -ENOMEM;
                }
                if (t.n == allocated) {
                        size_t na = allocated ? allocated * 2 : 32;
                        MountEntry *ne = reallocarray(t.entries, na, sizeof(MountEntry));
                        if (!ne) {
                                free(e.mount_point);
                                free(e.fstype);
                                free(e.source);
                                return -ENOMEM;
                        }
                        t.entries = ne;
                        allocated = na;
                }
                t.entries[t.n++] = e;
        }
        *ret = t;
        t = (MountTable){};
        return 0;
}

int mount_table_read(const InventoryOptions *o, MountTable *ret)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = inv_read_file(o, "/proc/1/mountinfo", MOUNTINFO_MAX, &text, &len);
        if (r < 0)
                r = inv_read_file(o, "/proc/self/mountinfo", MOUNTINFO_MAX, &text, &len);
        if (r < 0)
                return r;
        return mountinfo_parse(text, len, ret);
}

const MountEntry *mount_table_find_dev(const MountTable *t, unsigned major, unsigned minor)
{
        for (size_t i = 0; i < t->n; i++)
                if (t->entries[i].major == major && t->entries[i].minor == minor)
                        return &t->entries[i];
        return NULL;
}

const MountEntry *mount_table_find_path(const MountTable *t, const char *path)
{
        for (size_t i = t->n; i > 0; i--)
                if (streq(t->entries[i - 1].mount_point, path))
                        return &t->entries[i - 1];
        return NULL;
}
