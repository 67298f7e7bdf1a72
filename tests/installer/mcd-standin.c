/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the machine-config-daemon of the MCO image, for the
 * bootstrap test's podman image (tests/installer/test_bootstrap.py): it
 * takes `start --node-name N --root-mount R --once-from PATH --skip-reboot`
 * as the real daemon does, prints its arguments, and does what the
 * daemon's once-from does with an Ignition config (pkg/daemon:
 * runOnceFromIgnition -> writeFiles, writeUnits): every file written
 * whatever its "overwrite" (parents 0755, mode 0644 unless given, owner
 * from the ids), append refused, each unit's drop-ins written (or removed
 * when empty), the unit masked, or written (disabled first when enabled),
 * or its mask removed; then the units' enablement links made or removed as
 * `systemctl enable/disable` would from their [Install] section. All paths
 * under R, as the daemon's chroot. It is written apart from cradle's
 * Ignition code on purpose: the test compares the two trees.
 *
 * R/mcd-standin-fail holding a number N makes the next N runs fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64.h"
#include "cleanup.h"
#include "fileio.h"
#include "gzip.h"
#include "jsonutil.h"
#include "strutil.h"

static const char *root;

/* "Error: WHAT ARG" and exit 1, as the daemon fails */
static _Noreturn void die(const char *what, const char *arg)
{
        fprintf(stderr, "Error: %s%s%s\n", what, isempty(arg) ? "" : " ", strempty(arg));
        exit(1);
}

static char *at_root(const char *path)
{
        char *p = strdup_printf("%s%s", root, path);

        if (!p)
                die("out of memory", NULL);
        return p;
}

static void mkdir_parents(const char *path)
{
        _cleanup_free_ char *dir = strdup(path);
        char *slash = dir ? strrchr(dir, '/') : NULL;

        if (slash && slash != dir) {
                *slash = 0;
                if (mkdir_p(dir, 0755) < 0)
                        die("cannot create", dir);
        }
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode, int uid, int gid)
{
        _cleanup_free_ char *p = at_root(path), *tmp = strdup_printf("%s.mcd-tmp", p);
        _cleanup_close_ int fd = -1;

        mkdir_parents(p);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || fchmod(fd, mode) < 0 || write_all(fd, data, len) < 0 ||
            (uid >= 0 && fchown(fd, (uid_t)uid, (gid_t)gid) < 0) || rename(tmp, p) < 0)
                die("cannot write", path);
}

static void remove_path(const char *path)
{
        _cleanup_free_ char *p = at_root(path);

        if (unlink(p) < 0 && errno != ENOENT)
                die("cannot remove", path);
}

/* data:[<mediatype>][;base64],<data> */
static void *decode_data_url(const char *url, size_t *ret_len)
{
        const char *comma = strchr(url, ',');
        char *out;
        size_t n = 0;

        if (!startswith(url, "data:") || !comma)
                die("could not decode file: not a data URL:", url);
        if (comma - url >= 7 && strneq(comma - 7, ";base64", 7)) {
                if (base64_decode(comma + 1, NULL, &out, ret_len) < 0)
                        die("could not decode file: bad base64 in", url);
                return out;
        }
        out = malloc(strlen(comma) + 1);
        if (!out)
                die("out of memory", NULL);
        for (const char *p = comma + 1; *p; p++) {
                unsigned v;
                char hex[3] = {};
                if (*p == '%' && p[1] && p[2]) {
                        hex[0] = p[1];
                        hex[1] = p[2];
                        if (sscanf(hex, "%2x", &v) != 1)
                                die("could not decode file: bad escape in", url);
                        out[n++] = (char)v;
                        p += 2;
                } else
                        out[n++] = *p;
        }
        *ret_len = n;
        return out;
}

static int64_t id_of(json_object *owner)
{
        int64_t id;

        return json_get_int64(owner, "id", &id) >= 0 ? id : 0;
}

static void write_files(json_object *files)
{
        for (size_t i = 0; files && i < json_object_array_length(files); i++) {
                json_object *f = json_object_array_get_idx(files, i);
                const char *path = json_get_string(f, "path");
                const char *source = json_get_string(json_get(f, "contents"), "source");
                const char *compression = json_get_string(json_get(f, "contents"), "compression");
                _cleanup_free_ void *data = NULL, *plain = NULL;
                size_t len = 0;
                int64_t mode = 0644;

                printf("Writing file \"%s\"\n", path);
                if (json_get(f, "append") && json_object_array_length(json_get(f, "append")) > 0)
                        die("found an append section when writing files. Append is not supported", NULL);
                data = source ? decode_data_url(source, &len) : strdup("");
                if (streq_ptr(compression, "gzip")) {
                        if (gzip_decompress(data, len, 64u << 20, &plain, &len) < 0)
                                die("could not decode file (bad gzip):", path);
                } else
                        plain = TAKE_PTR(data);
                (void)json_get_int64(f, "mode", &mode);
                write_file(path, plain, len, (mode_t)mode, (int)id_of(json_get(f, "user")),
                           (int)id_of(json_get(f, "group")));
        }
}

static char **install_links(const char *unit)
{
        _cleanup_free_ char *p = strdup_printf("%s/etc/systemd/system/%s", root, unit), *text = NULL;
        _cleanup_strv_free_ char **lines = NULL;
        char **out = NULL;
        bool install = false;
        struct stat st;

        if (lstat(p, &st) < 0 || S_ISLNK(st.st_mode) || read_full_file(p, 1 << 20, &text, NULL) < 0)
                return NULL;
        if (strv_split(text, "\n", &lines) < 0)
                return NULL;
        STRV_FOREACH (l, lines) {
                char *line = strstrip(*l);
                const char *v;
                if (line[0] == '[') {
                        install = streq(line, "[Install]");
                        continue;
                }
                if (!install)
                        continue;
                v = startswith(line, "WantedBy=");
                if (v) {
                        _cleanup_strv_free_ char **targets = NULL;
                        (void)strv_split(v, " ", &targets);
                        STRV_FOREACH (t, targets)
                                (void)strv_extendf(&out, "/etc/systemd/system/%s.wants/%s", *t, unit);
                }
                v = startswith(line, "RequiredBy=");
                if (v) {
                        _cleanup_strv_free_ char **targets = NULL;
                        (void)strv_split(v, " ", &targets);
                        STRV_FOREACH (t, targets)
                                (void)strv_extendf(&out, "/etc/systemd/system/%s.requires/%s", *t, unit);
                }
        }
        return out;
}

static void set_enabled(const char *unit, bool enable)
{
        _cleanup_strv_free_ char **links = install_links(unit);

        STRV_FOREACH (l, links) {
                _cleanup_free_ char *p = at_root(*l),
                                    *target = strdup_printf("/etc/systemd/system/%s", unit);
                struct stat st;
                if (!enable) {
                        remove_path(*l);
                        continue;
                }
                mkdir_parents(p);
                if (lstat(p, &st) < 0 && symlink(target, p) < 0)
                        die("cannot enable", unit);
        }
}

static bool is_enabled(const char *unit)
{
        _cleanup_strv_free_ char **links = install_links(unit);

        STRV_FOREACH (l, links) {
                _cleanup_free_ char *p = at_root(*l);
                struct stat st;
                if (lstat(p, &st) == 0)
                        return true;
        }
        return false;
}

static void write_units(json_object *units)
{
        _cleanup_strv_free_ char **enable = NULL, **disable = NULL;

        for (size_t i = 0; units && i < json_object_array_length(units); i++) {
                json_object *u = json_object_array_get_idx(units, i);
                const char *name = json_get_string(u, "name"), *contents = json_get_string(u, "contents");
                json_object *dropins = json_get(u, "dropins");
                _cleanup_free_ char *path = strdup_printf("/etc/systemd/system/%s", name);
                bool mask = false, has_mask, enabled;

                for (size_t k = 0; dropins && k < json_object_array_length(dropins); k++) {
                        json_object *d = json_object_array_get_idx(dropins, k);
                        const char *dc = json_get_string(d, "contents");
                        _cleanup_free_ char *dp = strdup_printf("/etc/systemd/system/%s.d/%s", name,
                                                                json_get_string(d, "name"));
                        if (isempty(dc))
                                remove_path(dp);
                        else
                                write_file(dp, dc, strlen(dc), 0644, -1, -1);
                }
                has_mask = json_get_bool(u, "mask", &mask) >= 0;
                if (has_mask && mask) {
                        _cleanup_free_ char *p = at_root(path);
                        remove_path(path);
                        mkdir_parents(p);
                        if (symlink("/dev/null", p) < 0)
                                die("cannot mask", name);
                } else if (!isempty(contents)) {
                        printf("Writing systemd unit \"%s\"\n", name);
                        if (is_enabled(name)) {
                                printf("Disabling systemd unit %s before re-writing it\n", name);
                                set_enabled(name, false);
                        }
                        write_file(path, contents, strlen(contents), 0644, -1, -1);
                } else if (has_mask)
                        remove_path(path);
                if (json_get_bool(u, "enabled", &enabled) >= 0)
                        (void)strv_extend(enabled ? &enable : &disable, name);
        }
        STRV_FOREACH (u, enable)
                set_enabled(*u, true);
        STRV_FOREACH (u, disable)
                set_enabled(*u, false);
}

static void maybe_fail(void)
{
        _cleanup_free_ char *p = at_root("/mcd-standin-fail"), *text = NULL;
        unsigned n;

        if (read_full_file(p, 64, &text, NULL) < 0 || safe_atou(strstrip(text), &n) < 0 || n == 0)
                return;
        {
                _cleanup_free_ char *left = strdup_printf("%u\n", n - 1);
                (void)write_file_atomic(p, left, strlen(left), 0644);
        }
        die("simulated failure of the machine-config-daemon stand-in", NULL);
}

int main(int argc, char **argv)
{
        _cleanup_(json_object_putp) json_object *args = json_object_new_array(), *cfg = NULL;
        const char *once_from = NULL;
        _cleanup_free_ char *path = NULL, *err = NULL;
        bool skip_reboot = false;

        /* lines in order with stderr's, as the daemon's log */
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (int i = 1; i < argc; i++)
                json_object_array_add(args, json_object_new_string(argv[i]));
        printf("machine-config-daemon stand-in: argv %s\n",
               json_object_to_json_string_ext(args, JSON_C_TO_STRING_NOSLASHESCAPE));
        if (argc < 2 || !streq(argv[1], "start"))
                die("only \"start\" is played", NULL);
        for (int i = 2; i < argc; i++) {
                if (streq(argv[i], "--skip-reboot"))
                        skip_reboot = true;
                else if (i + 1 < argc && streq(argv[i], "--root-mount"))
                        root = argv[++i];
                else if (i + 1 < argc && streq(argv[i], "--once-from"))
                        once_from = argv[++i];
                else if (i + 1 < argc && streq(argv[i], "--node-name"))
                        i++;
                else
                        die("unknown flag:", argv[i]);
        }
        if (!root || !once_from || !skip_reboot)
                die("needs --root-mount, --once-from and --skip-reboot", NULL);
        maybe_fail();
        path = at_root(once_from);
        if (json_parse_file(path, 64u << 20, &cfg, &err) < 0)
                die("cannot parse the Ignition config:", err);
        write_files(json_get_path(cfg, "storage.files"));
        write_units(json_get_path(cfg, "systemd.units"));
        printf("machine-config-daemon stand-in: done (skipping the reboot)\n");
        return 0;
}
