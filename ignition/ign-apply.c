/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Laying a config onto a root directory the way Ignition's files stage does
 * (internal/exec/stages/files): directories, files and symlinks in order of
 * depth, then hard links, then systemd units, drop-ins, masks and the preset
 * file that "enabled" turns into. Every path is resolved with openat2()
 * relative to the root, so no symlink in the target can send a write
 * outside it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "ign-internal.h"
#include "strutil.h"

#define PRESET_PATH "etc/systemd/system-preset/20-ignition.preset"
#define UNITS_DIR "etc/systemd/system"

typedef struct Apply {
        int root_fd;
        IgnApplyFlags flags;
        char **reterr;
        bool have_openat2;
} Apply;

_printf_(3, 4) static int failf(Apply *a, int r, const char *fmt, ...)
{
        va_list ap;
        char *m;

        if (a->reterr && !*a->reterr) {
                va_start(ap, fmt);
                if (vasprintf(&m, fmt, ap) >= 0)
                        *a->reterr = m;
                va_end(ap);
        }
        return r;
}

/* Opens rel (relative to the root, no leading slash) resolving every
 * component beneath the root. */
static int open_in_root(Apply *a, const char *rel, int flags)
{
        struct open_how how = {
                .flags = (uint64_t)(flags | O_CLOEXEC),
                .resolve = RESOLVE_NO_MAGICLINKS |
                           ((a->flags & IGN_APPLY_SYMLINKS_IN_ROOT) ? RESOLVE_IN_ROOT : RESOLVE_BENEATH),
        };
        long fd;

        if (isempty(rel))
                rel = ".";
        if (a->have_openat2) {
                fd = syscall(SYS_openat2, a->root_fd, rel, &how, sizeof(how));
                if (fd >= 0)
                        return (int)fd;
                if (errno != ENOSYS)
                        return negative_errno();
                a->have_openat2 = false;
        }

        /* Without openat2: walk component by component, refusing every
         * symlink on the way (stricter, never wrong). */
        _cleanup_strv_free_ char **parts = NULL;
        _cleanup_close_ int cur = -1;
        int r = strv_split(rel, "/", &parts);
        if (r < 0)
                return r;
        cur = fcntl(a->root_fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        STRV_FOREACH (p, parts) {
                bool last = !p[1];
                int next;
                if (streq(*p, ".."))
                        return -EXDEV;
                if (streq(*p, "."))
                        continue;
                next = openat(cur, *p, (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return errno == ELOOP ? -EXDEV : negative_errno();
                safe_close(cur);
                cur = next;
        }
        return TAKE_FD(cur);
}

/* Creates the missing directories of rel's parent (0755, like Ignition's
 * MkdirAll) and returns an O_PATH fd of that parent. */
static int open_parent(Apply *a, const char *rel, const char **ret_base)
{
        _cleanup_free_ char *dir = NULL;
        const char *slash = strrchr(rel, '/');
        int fd;

        *ret_base = slash ? slash + 1 : rel;
        if (!slash) {
                fd = fcntl(a->root_fd, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? negative_errno() : fd;
        }
        dir = strndup(rel, (size_t)(slash - rel));
        if (!dir)
                return -ENOMEM;
        fd = open_in_root(a, dir, O_PATH | O_DIRECTORY);
        if (fd != -ENOENT)
                return fd;

        /* create it: parent first */
        {
                const char *base;
                _cleanup_close_ int pfd = open_parent(a, dir, &base);
                _cleanup_close_ int dfd = -1;
                if (pfd < 0)
                        return pfd;
                dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        return negative_errno();
                if (mkdirat(dfd, base, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
        }
        return open_in_root(a, dir, O_PATH | O_DIRECTORY);
}

/* An fd of the parent usable for *at() calls (O_PATH fds are not, for
 * mkdirat/unlinkat/renameat on older kernels: reopen it). */
static int dir_fd(int path_fd)
{
        int fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

static int remove_all_at(int dfd, const char *name)
{
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (S_ISDIR(st.st_mode)) {
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;
                int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                d = fdopendir(fd);
                if (!d) {
                        safe_close(fd);
                        return negative_errno();
                }
                while ((de = readdir(d))) {
                        int r;
                        if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                                continue;
                        r = remove_all_at(dirfd(d), de->d_name);
                        if (r < 0)
                                return r;
                }
                if (unlinkat(dfd, name, AT_REMOVEDIR) < 0)
                        return negative_errno();
                return 0;
        }
        if (unlinkat(dfd, name, 0) < 0)
                return negative_errno();
        return 0;
}

/* Replaces dfd/name with the data, through a temporary file renamed over
 * it, as Ignition's PerformFetch does (0644 before permissions). */
static int replace_file(int dfd, const char *name, const void *data, size_t len)
{
        _cleanup_close_ int fd = -1;
        char tmp[32];
        int r;

        for (unsigned attempt = 0;; attempt++) {
                snprintf(tmp, sizeof(tmp), ".cradle-tmp%08x", (unsigned)random());
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd >= 0)
                        break;
                if (errno != EEXIST || attempt > 100)
                        return negative_errno();
        }
        if (fchmod(fd, 0644) < 0 || (r = write_all(fd, data, len)) < 0 || fsync(fd) < 0) {
                r = negative_errno();
                (void)unlinkat(dfd, tmp, 0);
                return r;
        }
        if (renameat(dfd, tmp, dfd, name) < 0) {
                r = negative_errno();
                (void)unlinkat(dfd, tmp, 0);
                return r;
        }
        return 0;
}

static int append_file(int dfd, const char *name, const void *data, size_t len)
{
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
                return -EISDIR;
        fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        return write_all(fd, data, len);
}

/* uid/gid of a name in the root's own /etc/passwd or /etc/group. */
static int lookup_id(Apply *a, const char *db, const char *name, int64_t *ret)
{
        _cleanup_close_ int fd = open_in_root(a, db, O_RDONLY);
        _cleanup_free_ char *data = NULL;
        char *line, *save = NULL;
        int r;

        if (fd < 0)
                return fd;
        r = read_full_fd(fd, BUF_MAX_SMALL_FILE * 8, &data, NULL);
        if (r < 0)
                return r;
        for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *f[4] = {};
                char *p = line;
                for (int i = 0; i < 4 && p; i++) {
                        f[i] = p;
                        p = strchr(p, ':');
                        if (p)
                                *p++ = 0;
                }
                if (f[0] && f[2] && streq(f[0], name)) {
                        uint64_t id;
                        r = safe_atou64(f[2], &id);
                        if (r < 0)
                                return r;
                        *ret = (int64_t)id;
                        return 0;
                }
        }
        return -ENOENT;
}

static int resolve_owner(Apply *a, const IgnNodeOwner *o, const char *db, const char *path, int64_t *ret)
{
        int r;

        *ret = -1;
        if (o->id.set) {
                *ret = o->id.value;
                return 0;
        }
        if (isempty(o->name))
                return 0;
        r = lookup_id(a, db, o->name, ret);
        if (r < 0)
                return failf(a, r, "cannot resolve %s \"%s\" for \"%s\" in the root's %s",
                             streq(db, "etc/passwd") ? "user" : "group", o->name, path, db);
        return 0;
}

/* Ignition's SetPermissions: chmod when a mode is given, chown when a user
 * or group is. */
static int set_permissions(Apply *a, int dfd, const char *name, const IgnInt *mode, const IgnNodeOwner *user,
                           const IgnNodeOwner *group, const char *path)
{
        int64_t uid, gid;
        int r;

        if (mode && mode->set) {
                _cleanup_close_ int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_free_ char *proc = NULL;
                if (fd < 0)
                        return failf(a, negative_errno(), "cannot open \"%s\" to change its mode", path);
                proc = strdup_printf("/proc/self/fd/%d", fd);
                if (!proc)
                        return -ENOMEM;
                if (chmod(proc, (mode_t)mode->value) < 0)
                        return failf(a, negative_errno(), "cannot change the mode of \"%s\"", path);
        }
        if ((r = resolve_owner(a, user, "etc/passwd", path, &uid)) < 0 ||
            (r = resolve_owner(a, group, "etc/group", path, &gid)) < 0)
                return r;
        if (uid < 0 && gid < 0)
                return 0;
        if (fchownat(dfd, name, (uid_t)uid, (gid_t)gid, AT_SYMLINK_NOFOLLOW) < 0)
                return failf(a, negative_errno(), "cannot change the owner of \"%s\"", path);
        return 0;
}

typedef struct Entry {
        int kind; /* 0 directory, 1 file, 2 link */
        const void *node;
        const char *path;
        bool overwrite;
        size_t depth;
} Entry;

static size_t depth(const char *p)
{
        size_t n = 0;
        for (; *p; p++)
                if (*p == '/' && p[1])
                        n++;
        return n;
}

static int cmp_entry(const void *x, const void *y)
{
        const Entry *a = x, *b = y;
        if (a->depth != b->depth)
                return a->depth < b->depth ? -1 : 1;
        /* equal depth keeps config order (qsort is not stable: compare it) */
        return a->kind != b->kind ? (a->kind < b->kind ? -1 : 1)
                                  : (a->node < b->node ? -1 : a->node > b->node);
}

static int parent_fail(Apply *a, int r, const char *path)
{
        if (r == -EXDEV)
                return failf(a, r, "refusing \"%s\": it resolves outside the root through a symlink", path);
        return failf(a, r, "cannot create the parents of \"%s\"", path);
}

static int apply_directory(Apply *a, const IgnDirectory *d)
{
        const char *base, *rel = d->path + 1;
        _cleanup_close_ int pfd = -1, dfd = -1;
        struct stat st;
        int r;

        pfd = open_parent(a, rel, &base);
        if (pfd < 0)
                return parent_fail(a, pfd, d->path);
        dfd = dir_fd(pfd);
        if (dfd < 0)
                return dfd;
        if (d->overwrite.set && d->overwrite.value && (r = remove_all_at(dfd, base)) < 0)
                return failf(a, r, "cannot remove \"%s\" to overwrite it", d->path);
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return failf(a, negative_errno(), "cannot stat \"%s\"", d->path);
                if (mkdirat(dfd, base, 0755) < 0)
                        return failf(a, negative_errno(), "cannot create directory \"%s\"", d->path);
        } else if (!S_ISDIR(st.st_mode))
                return failf(a, -EEXIST, "a non-directory exists at \"%s\" and overwrite is false", d->path);
        return set_permissions(a, dfd, base, &d->mode, &d->user, &d->group, d->path);
}

static int apply_file(Apply *a, const IgnFile *f)
{
        const char *base, *rel = f->path + 1;
        _cleanup_close_ int pfd = -1, dfd = -1;
        struct stat st;
        bool exists;
        int r;

        pfd = open_parent(a, rel, &base);
        if (pfd < 0)
                return parent_fail(a, pfd, f->path);
        dfd = dir_fd(pfd);
        if (dfd < 0)
                return dfd;
        if (f->overwrite.set && f->overwrite.value && (r = remove_all_at(dfd, base)) < 0)
                return failf(a, r, "cannot remove \"%s\" to overwrite it", f->path);
        exists = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (!exists && errno != ENOENT)
                return failf(a, negative_errno(), "cannot stat \"%s\"", f->path);
        if (exists && !S_ISREG(st.st_mode))
                return failf(a, -EEXIST, "a non-regular file exists at \"%s\" and overwrite is false",
                             f->path);
        if (exists && f->contents.source)
                return failf(a, -EEXIST, "a file exists at \"%s\" and overwrite is false", f->path);

        if (f->contents.source || !exists) {
                _cleanup_free_ void *data = NULL;
                _cleanup_free_ char *err = NULL;
                size_t len;
                r = ign_resource_read(&f->contents, IGN_PARSE_MAX, &data, &len, &err);
                if (r < 0)
                        return failf(a, r, "contents of \"%s\": %s", f->path, strna(err));
                r = replace_file(dfd, base, data, len);
                if (r < 0)
                        return failf(a, r, "cannot write \"%s\"", f->path);
        }
        for (size_t i = 0; i < f->n_append; i++) {
                _cleanup_free_ void *data = NULL;
                _cleanup_free_ char *err = NULL;
                size_t len;
                r = ign_resource_read(&f->append[i], IGN_PARSE_MAX, &data, &len, &err);
                if (r < 0)
                        return failf(a, r, "append entry %zu of \"%s\": %s", i, f->path, strna(err));
                r = append_file(dfd, base, data, len);
                if (r < 0)
                        return failf(a, r, "cannot append to \"%s\"", f->path);
        }
        return set_permissions(a, dfd, base, &f->mode, &f->user, &f->group, f->path);
}

/* Go's filepath.Clean for comparing symlink targets. */
static char *clean_path(const char *p)
{
        _cleanup_strv_free_ char **parts = NULL, **out = NULL;
        _cleanup_free_ char *joined = NULL;
        bool abs = p[0] == '/';

        if (strv_split(p, "/", &parts) < 0)
                return NULL;
        STRV_FOREACH (s, parts) {
                size_t n = strv_length(out);
                if (streq(*s, "."))
                        continue;
                if (streq(*s, "..") && n > 0 && !streq(out[n - 1], "..")) {
                        free(out[n - 1]);
                        out[n - 1] = NULL;
                        continue;
                }
                if (streq(*s, "..") && abs)
                        continue;
                if (strv_extend(&out, *s) < 0)
                        return NULL;
        }
        joined = strv_join(out, "/");
        if (!joined)
                return NULL;
        if (abs)
                return strdup_printf("/%s", joined);
        return isempty(joined) ? strdup(".") : TAKE_PTR(joined);
}

static int apply_link(Apply *a, const IgnLink *l)
{
        const char *base, *rel = l->path + 1;
        _cleanup_close_ int pfd = -1, dfd = -1;
        bool hard = l->hard.set && l->hard.value;
        struct stat st;
        int r;

        pfd = open_parent(a, rel, &base);
        if (pfd < 0)
                return parent_fail(a, pfd, l->path);
        dfd = dir_fd(pfd);
        if (dfd < 0)
                return dfd;
        if (l->overwrite.set && l->overwrite.value && (r = remove_all_at(dfd, base)) < 0)
                return failf(a, r, "cannot remove \"%s\" to overwrite it", l->path);

        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (hard) {
                        _cleanup_close_ int tfd = open_in_root(a, l->target + (l->target[0] == '/'), O_PATH);
                        struct stat tst;
                        if (tfd < 0 || fstat(tfd, &tst) < 0 || tst.st_dev != st.st_dev ||
                            tst.st_ino != st.st_ino)
                                return failf(a, -EEXIST,
                                             "a file exists at \"%s\" that is not the link target and "
                                             "overwrite is false",
                                             l->path);
                        return 0;
                }
                if (S_ISLNK(st.st_mode)) {
                        _cleanup_free_ char *want = clean_path(l->target), *have_clean = NULL;
                        char have[PATH_MAX];
                        ssize_t n = readlinkat(dfd, base, have, sizeof(have) - 1);
                        if (n < 0)
                                return failf(a, negative_errno(), "cannot read the link \"%s\"", l->path);
                        have[n] = 0;
                        have_clean = clean_path(have);
                        if (!want || !have_clean)
                                return -ENOMEM;
                        if (streq(want, have_clean))
                                return 0;
                        return failf(
                                a, -EEXIST,
                                "a symlink at \"%s\" points to \"%s\", not \"%s\", and overwrite is false",
                                l->path, have, l->target);
                }
                return failf(a, -EEXIST, "a non-symlink exists at \"%s\" and overwrite is false", l->path);
        }

        if (hard) {
                /* the target, resolved in the root like Ignition's JoinPath */
                const char *tbase;
                const char *trel = l->target[0] == '/' ? l->target + 1 : NULL;
                _cleanup_free_ char *joined = NULL;
                _cleanup_close_ int tpfd = -1;
                if (!trel) {
                        joined = strdup_printf("%s/%s", l->path, l->target);
                        if (!joined)
                                return -ENOMEM;
                        trel = joined + 1;
                }
                tpfd = open_parent(a, trel, &tbase);
                if (tpfd < 0)
                        return failf(a, tpfd, "cannot resolve the target of the hard link \"%s\"", l->path);
                if (linkat(tpfd, tbase, dfd, base, 0) < 0)
                        return failf(a, negative_errno(), "cannot create the hard link \"%s\"", l->path);
                return 0;
        }
        if (symlinkat(l->target, dfd, base) < 0)
                return failf(a, negative_errno(), "cannot create the symlink \"%s\"", l->path);
        return set_permissions(a, dfd, base, NULL, &l->user, &l->group, l->path);
}

static int write_in_root(Apply *a, const char *rel, const char *data, size_t len, bool append)
{
        const char *base;
        _cleanup_close_ int pfd = open_parent(a, rel, &base), dfd = -1;

        if (pfd < 0)
                return pfd;
        dfd = dir_fd(pfd);
        if (dfd < 0)
                return dfd;
        return append ? append_file(dfd, base, data, len) : replace_file(dfd, base, data, len);
}

/* What `systemctl --root disable` does to enablement links: remove the
 * unit's symlinks from the .wants/.requires/.upholds directories. */
static int remove_enablement_links(Apply *a, const char *unit)
{
        _cleanup_close_ int fd = open_in_root(a, UNITS_DIR, O_RDONLY | O_DIRECTORY);
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        fd = -1;
        while ((de = readdir(d))) {
                _cleanup_close_ int sub = -1;
                struct stat st;
                if (!endswith(de->d_name, ".wants") && !endswith(de->d_name, ".requires") &&
                    !endswith(de->d_name, ".upholds"))
                        continue;
                sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                if (fstatat(sub, unit, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
                    unlinkat(sub, unit, 0) < 0)
                        return negative_errno();
        }
        return 0;
}

typedef struct Preset {
        char *unit;
        bool enabled;
        char **instances;
} Preset;

static int apply_units(Apply *a, const IgnSystemd *sd)
{
        Preset *presets = NULL;
        size_t n_presets = 0;
        int r = 0;

        for (size_t i = 0; i < sd->n_units && r >= 0; i++) {
                const IgnUnit *u = &sd->units[i];
                for (size_t k = 0; k < u->n_dropins && r >= 0; k++) {
                        const IgnDropin *d = &u->dropins[k];
                        _cleanup_free_ char *rel = NULL;
                        if (!d->contents)
                                continue;
                        rel = strdup_printf(UNITS_DIR "/%s.d/%s", u->name, d->name);
                        if (!rel) {
                                r = -ENOMEM;
                                break;
                        }
                        r = write_in_root(a, rel, d->contents, strlen(d->contents), false);
                        if (r < 0)
                                r = failf(a, r, "cannot write drop-in \"/%s\"", rel);
                }
                if (r >= 0 && !isempty(u->contents)) {
                        _cleanup_free_ char *rel = strdup_printf(UNITS_DIR "/%s", u->name);
                        r = rel ? write_in_root(a, rel, u->contents, strlen(u->contents), false) : -ENOMEM;
                        if (r < 0)
                                r = failf(a, r, "cannot write unit \"/%s\"", strna(rel));
                }
                if (r >= 0 && u->enabled.set) {
                        _cleanup_free_ char *name = NULL, *instance = NULL;
                        const char *at = strchr(u->name, '@');
                        Preset *p = NULL;
                        if (at) {
                                const char *dot = strrchr(u->name, '.');
                                if (!dot || dot < at) {
                                        r = failf(a, -EINVAL, "invalid instantiated unit \"%s\"", u->name);
                                        break;
                                }
                                instance = strndup(at + 1, (size_t)(dot - at - 1));
                                name = strdup_printf("%.*s%s", (int)(at - u->name + 1), u->name, dot);
                        } else
                                name = strdup(u->name);
                        if (!name || (at && !instance)) {
                                r = -ENOMEM;
                                break;
                        }
                        for (size_t k = 0; k < n_presets && at; k++)
                                if (streq(presets[k].unit, name) && presets[k].enabled == u->enabled.value &&
                                    presets[k].instances)
                                        p = &presets[k];
                        if (!p) {
                                Preset *grown = reallocarray(presets, n_presets + 1, sizeof(Preset));
                                if (!grown) {
                                        r = -ENOMEM;
                                        break;
                                }
                                presets = grown;
                                p = &presets[n_presets++];
                                *p = (Preset){ TAKE_PTR(name), u->enabled.value, NULL };
                        }
                        if (instance)
                                r = strv_push(&p->instances, instance) < 0 ? -ENOMEM : (instance = NULL, 0);
                }
                if (r >= 0 && u->mask.set) {
                        _cleanup_free_ char *rel = strdup_printf(UNITS_DIR "/%s", u->name);
                        const char *base;
                        _cleanup_close_ int pfd = rel ? open_parent(a, rel, &base) : -ENOMEM, dfd = -1;
                        if (pfd < 0) {
                                r = pfd;
                                break;
                        }
                        dfd = dir_fd(pfd);
                        if (dfd < 0) {
                                r = dfd;
                                break;
                        }
                        if (u->mask.value) {
                                r = remove_all_at(dfd, base);
                                if (r >= 0 && symlinkat("/dev/null", dfd, base) < 0)
                                        r = negative_errno();
                                if (r < 0)
                                        r = failf(a, r, "cannot mask \"%s\"", u->name);
                        } else {
                                char target[16];
                                ssize_t n = readlinkat(dfd, base, target, sizeof(target) - 1);
                                if (n == 9 && strneq(target, "/dev/null", 9) && unlinkat(dfd, base, 0) < 0)
                                        r = failf(a, negative_errno(), "cannot unmask \"%s\"", u->name);
                        }
                }
        }

        for (size_t k = 0; k < n_presets && r >= 0; k++) {
                _cleanup_free_ char *inst =
                        presets[k].instances ? strv_join(presets[k].instances, " ") : NULL;
                _cleanup_free_ char *line = NULL;
                if (!presets[k].enabled && !presets[k].instances)
                        r = remove_enablement_links(a, presets[k].unit);
                if (r < 0) {
                        r = failf(a, r, "cannot remove the enablement links of \"%s\"", presets[k].unit);
                        break;
                }
                line = strdup_printf("%s %s%s%s\n", presets[k].enabled ? "enable" : "disable",
                                     presets[k].unit, inst ? " " : "", strempty(inst));
                r = line ? write_in_root(a, PRESET_PATH, line, strlen(line), true) : -ENOMEM;
                if (r < 0)
                        r = failf(a, r, "cannot write the preset file \"/" PRESET_PATH "\"");
        }
        for (size_t k = 0; k < n_presets; k++) {
                free(presets[k].unit);
                strv_free(presets[k].instances);
        }
        free(presets);
        return r;
}

int ign_config_apply(const IgnConfig *config, const char *root, IgnApplyFlags flags, char **reterr)
{
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_close_ int root_fd = -1;
        _cleanup_free_ Entry *entries = NULL;
        IgnReport report = IGN_REPORT_INIT;
        const IgnStorage *s;
        Apply a = { .flags = flags, .reterr = reterr, .have_openat2 = true };
        size_t n = 0;
        int r;

        if (reterr)
                *reterr = NULL;
        r = ign_config_validate(config, &report);
        if (r == -EBADMSG) {
                for (size_t i = 0; i < report.n_entries; i++)
                        if (report.entries[i].severity == IGN_ERROR) {
                                (void)failf(&a, r, "refusing an invalid config: %s: %s",
                                            report.entries[i].path, report.entries[i].message);
                                break;
                        }
        }
        ign_report_done(&report);
        if (r < 0)
                return r;
        /* the runtime works on the newest spec: translating masks the
         * setuid/setgid/sticky bits that specs before 3.4 ignore */
        c = ign_config_copy(config);
        if (!c)
                return -ENOMEM;
        r = ign_config_translate(c, IGN_VERSION_LATEST, reterr);
        if (r < 0)
                return r;
        s = &c->storage;
        if (!(flags & IGN_APPLY_SKIP_UNSUPPORTED)) {
                const char *what = c->passwd.n_users || c->passwd.n_groups ? "passwd"
                                   : s->n_disks                            ? "storage.disks"
                                   : s->n_raid                             ? "storage.raid"
                                   : s->n_luks                             ? "storage.luks"
                                   : s->n_filesystems                      ? "storage.filesystems"
                                                                           : NULL;
                if (what)
                        return failf(
                                &a, -EOPNOTSUPP,
                                "refusing to apply a config with %s: only files, directories, links and "
                                "systemd units can be laid onto a root (skip the rest explicitly)",
                                what);
        }

        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return failf(&a, negative_errno(), "cannot open the root \"%s\"", root);
        a.root_fd = root_fd;

        entries = calloc(s->n_files + s->n_directories + s->n_links + 1, sizeof(Entry));
        if (!entries)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_directories; i++)
                entries[n++] = (Entry){ 0, &s->directories[i], s->directories[i].path, false,
                                        depth(s->directories[i].path) };
        for (size_t i = 0; i < s->n_files; i++)
                entries[n++] = (Entry){ 1, &s->files[i], s->files[i].path, false, depth(s->files[i].path) };
        for (size_t i = 0; i < s->n_links; i++)
                if (!(s->links[i].hard.set && s->links[i].hard.value))
                        entries[n++] =
                                (Entry){ 2, &s->links[i], s->links[i].path, false, depth(s->links[i].path) };
        qsort(entries, n, sizeof(Entry), cmp_entry);

        for (size_t i = 0; i < n; i++) {
                r = entries[i].kind == 0   ? apply_directory(&a, entries[i].node)
                    : entries[i].kind == 1 ? apply_file(&a, entries[i].node)
                                           : apply_link(&a, entries[i].node);
                if (r == -EXDEV)
                        return failf(&a, r,
                                     "refusing \"%s\": it resolves outside the root through a symlink",
                                     entries[i].path);
                if (r < 0)
                        return failf(&a, r, "cannot create \"%s\"", entries[i].path);
        }
        for (size_t i = 0; i < s->n_links; i++)
                if (s->links[i].hard.set && s->links[i].hard.value) {
                        r = apply_link(&a, &s->links[i]);
                        if (r == -EXDEV)
                                return failf(
                                        &a, r,
                                        "refusing \"%s\": it resolves outside the root through a symlink",
                                        s->links[i].path);
                        if (r < 0)
                                return r;
                }
        r = apply_units(&a, &c->systemd);
        if (r == -EXDEV)
                return failf(&a, r, "refusing a unit path that resolves outside the root through a symlink");
        return r;
}
