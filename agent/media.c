/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "media.h"
#include "strutil.h"

/* mountinfo escapes blanks and backslashes as \ooo */
static void unescape_octal(char *s)
{
        char *o = s;

        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' &&
                    p[3] >= '0' && p[3] <= '7') {
                        *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else
                        *o++ = *p;
        }
        *o = 0;
}

static bool path_is_under(const char *path, const char *mountpoint)
{
        size_t n = strlen(mountpoint);

        if (streq(mountpoint, "/"))
                return true;
        return strneq(path, mountpoint, n) && (path[n] == 0 || path[n] == '/');
}

int media_mount_source(const char *mountinfo, const char *path, char **ret)
{
        _cleanup_free_ char *data = NULL, *best_source = NULL;
        size_t best_len = 0;
        char *line, *save = NULL;
        int r;

        r = read_full_file(mountinfo, 16u * 1024 * 1024, &data, NULL);
        if (r < 0)
                return r;
        for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                _cleanup_strv_free_ char **f = NULL;
                char *const *after;
                size_t n, ml;

                if (strv_split(line, " ", &f) < 0)
                        return -ENOMEM;
                n = strv_length(f);
                /* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
                after = NULL;
                for (size_t i = 6; i + 2 < n; i++)
                        if (streq(f[i], "-")) {
                                after = f + i + 1;
                                break;
                        }
                if (n < 7 || !after)
                        continue;
                unescape_octal(f[4]);
                if (!path_is_under(path, f[4]))
                        continue;
                ml = strlen(f[4]);
                /* the deepest mount wins; a later one of equal depth stacks on top */
                if (ml >= best_len) {
                        best_len = ml;
                        free(best_source);
                        best_source = strdup(after[1]);
                        if (!best_source)
                                return -ENOMEM;
                        unescape_octal(best_source);
                }
        }
        if (!best_source)
                return -ENOENT;
        *ret = TAKE_PTR(best_source);
        return 0;
}

int media_check(const char *iso_path, char **reterr)
{
        _cleanup_free_ char *source = NULL;
        _cleanup_close_ int fd = -1;
        char two[2];
        int r;

        if (access(iso_path, F_OK) < 0)
                return 0;

        r = media_mount_source("/proc/1/mountinfo", iso_path, &source);
        if (r < 0)
                r = media_mount_source("/proc/self/mountinfo", iso_path, &source);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("cannot access/read from the media (ISO) - media was likely "
                                                "disconnected: cannot find the device mounted at %s: %s",
                                                iso_path, strerror(-r));
                return -EIO;
        }
        fd = open(source, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || read(fd, two, sizeof(two)) != (ssize_t)sizeof(two)) {
                if (reterr)
                        *reterr = strdup_printf("cannot access/read from the media (ISO) - media was likely "
                                                "disconnected: %s: %m",
                                                source);
                return -EIO;
        }
        return 0;
}
