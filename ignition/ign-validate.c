/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic validation: the rules of Ignition's config/vX_Y/types Validate()
 * methods (and of config/validate for duplicates), for the config's own
 * version, reported at the JSON path of each problem. Messages are cradle's
 * own; where a rule exists only in newer Ignition releases (path conflicts
 * with systemd units, files used as parent directories) it is applied to
 * every version, because the runtime would fail on such a config anyway.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ign-internal.h"
#include "strutil.h"

typedef struct Ctx {
        IgnVersion version;
        IgnReport *report;
        int error; /* first allocation failure */
} Ctx;

_printf_(4, 5) static void add(Ctx *ctx, IgnSeverity sev, const char *path, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = ign_report_addv(ctx->report, sev, path ?: "$", fmt, ap);
        va_end(ap);
        if (r < 0 && ctx->error == 0)
                ctx->error = r;
}

/* Path helpers that never return NULL: on OOM they record the error and
 * give a placeholder, so the walk can finish and fail cleanly. */
_printf_(2, 3) static char *pathf(Ctx *ctx, const char *fmt, ...)
{
        va_list ap;
        char *s;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        if (!s) {
                if (ctx->error == 0)
                        ctx->error = -ENOMEM;
                return NULL;
        }
        return s;
}

/* One path per block: "{ P("%s.mode", path); add(ctx, ..., p, ...); }" */
#define P(...) _cleanup_free_ char *p = pathf(ctx, __VA_ARGS__)

static bool strv_empty(char *const *l)
{
        return !l || !l[0];
}

/* ---- Paths ---------------------------------------------------------------------------- */

/* Go's path.Clean(p) == p for an absolute path. */
static bool path_is_clean(const char *p)
{
        size_t n = strlen(p);

        if (n > 1 && p[n - 1] == '/')
                return false;
        for (const char *s = p; *s; s++)
                if (s[0] == '/') {
                        if (s[1] == '/')
                                return false;
                        if (s[1] == '.' && (s[2] == '/' || s[2] == 0))
                                return false;
                        if (s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == 0))
                                return false;
                }
        return true;
}

/* Returns a message for a bad path, NULL when fine. */
static const char *path_problem(const char *p)
{
        if (isempty(p))
                return "path is required";
        if (p[0] != '/')
                return "must be absolute";
        if (!path_is_clean(p))
                return "must be a clean path (no //, /./, /../ or trailing /)";
        return NULL;
}

static void check_path(Ctx *ctx, const char *path, const char *p)
{
        const char *m = path_problem(p);
        if (m)
                add(ctx, IGN_ERROR, path, "%s", m);
}

/* ---- URLs ------------------------------------------------------------------------------ */

static bool has_bad_url_chars(const char *s)
{
        for (const char *p = s; *p; p++) {
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return true;
                if (*p == '%' && (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2])))
                        return true;
        }
        return false;
}

/* The scheme of a URL ("" when none); NULL when it cannot be parsed. */
static char *url_scheme(const char *s)
{
        const char *p = s;

        if (!isalpha((unsigned char)*p))
                return strchr(s, ':') && !strchr(s, '/') ? NULL : strdup("");
        while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
                p++;
        if (*p != ':')
                return strdup("");
        return strdup_lower(strndupa(s, (size_t)(p - s)));
}

static void url_problems(Ctx *ctx, const char *path, const char *s)
{
        _cleanup_free_ char *scheme = NULL, *err = NULL;
        _cleanup_free_ void *data = NULL;

        if (ign_is_data_url(s)) {
                int r = ign_data_url_decode(s, &data, NULL, &err);
                if (r == -ENOMEM)
                        ctx->error = r;
                else if (r < 0)
                        add(ctx, IGN_ERROR, path, "invalid data URL: %s", strna(err));
                return;
        }
        if (has_bad_url_chars(s)) {
                add(ctx, IGN_ERROR, path, "cannot parse URL");
                return;
        }
        scheme = url_scheme(s);
        if (!scheme) {
                add(ctx, IGN_ERROR, path, "cannot parse URL");
                return;
        }
        if (streq(scheme, "http") || streq(scheme, "https") || streq(scheme, "tftp"))
                return;
        if (streq(scheme, "gs") && ctx->version >= IGN_V3_2)
                return;
        if (streq(scheme, "s3") || (streq(scheme, "arn") && ctx->version >= IGN_V3_4)) {
                const char *q = strstr(s, "versionId=");
                if (q && (q[10] == 0 || q[10] == '&'))
                        add(ctx, IGN_ERROR, path, "invalid S3 object versionId");
                if (streq(scheme, "arn") &&
                    (!startswith(s, "arn:aws") || !strstr(s, ":s3:") || !strchr(s, '/')))
                        add(ctx, IGN_ERROR, path, "invalid S3 ARN");
                return;
        }
        if (isempty(scheme))
                add(ctx, IGN_ERROR, path, "URL has no scheme");
        else
                add(ctx, IGN_ERROR, path, "unsupported URL scheme \"%s\"", scheme);
}

/* Returns false when it reported a problem. */
static bool check_url(Ctx *ctx, const char *path, const char *s)
{
        size_t before = ctx->report->n_entries;

        url_problems(ctx, path, s);
        return ctx->report->n_entries == before;
}

static void check_hash(Ctx *ctx, const char *path, const char *hash)
{
        const char *dash = strchr(hash, '-'), *sum;
        size_t want;

        if (!dash) {
                add(ctx, IGN_ERROR, path, "malformed hash (expected FUNCTION-HEXSUM)");
                return;
        }
        sum = dash + 1;
        if (strneq(hash, "sha512", 6) && dash - hash == 6)
                want = 128;
        else if (strneq(hash, "sha256", 6) && dash - hash == 6 && ctx->version >= IGN_V3_1)
                want = 64;
        else {
                add(ctx, IGN_ERROR, path, "unrecognized hash function \"%.*s\"", (int)(dash - hash), hash);
                return;
        }
        if (strlen(sum) != want)
                add(ctx, IGN_ERROR, path, "hash sum has %zu characters, %s needs %zu", strlen(sum),
                    strndupa(hash, 6), want);
}

static void check_resource(Ctx *ctx, const char *path, const IgnResource *res, bool source_required)
{
        if (source_required && isempty(res->source))
                add(ctx, IGN_ERROR, path, "source is required");
        if (res->compression && !isempty(res->compression) && !streq(res->compression, "gzip")) {
                P("%s.compression", path);
                add(ctx, IGN_ERROR, p, "unsupported compression \"%s\" (only gzip)", res->compression);
        }
        if (res->verification.hash) {
                P("%s.verification.hash", path);
                if (!res->source)
                        add(ctx, IGN_ERROR, p, "verification needs a source");
                check_hash(ctx, p, res->verification.hash);
        }
        if (!isempty(res->source)) {
                P("%s.source", path);
                /* where a source is required, Ignition also reports a bad one
                 * at the resource itself */
                if (!check_url(ctx, p, res->source) && source_required)
                        add(ctx, IGN_ERROR, path, "source is not a valid URL");
        }
        for (size_t i = 0; i < res->n_http_headers; i++) {
                const IgnHttpHeader *h = &res->http_headers[i];
                if (isempty(h->name)) {
                        P("%s.httpHeaders[%zu].name", path, i);
                        add(ctx, IGN_ERROR, p, "HTTP header name must not be empty");
                }
                if (h->value && isempty(h->value)) {
                        P("%s.httpHeaders[%zu].value", path, i);
                        add(ctx, IGN_ERROR, p, "HTTP header value must not be empty");
                }
        }
        if (res->n_http_headers > 0) {
                _cleanup_free_ char *scheme = res->source ? url_scheme(res->source) : NULL;
                P("%s.httpHeaders", path);
                if (!scheme || !(streq(scheme, "http") || streq(scheme, "https")))
                        add(ctx, IGN_ERROR, p, "HTTP headers need an http(s) source");
        }
}

/* ---- ignition ------------------------------------------------------------------------------- */

static void check_proxy(Ctx *ctx, const char *path, const char *url, bool https)
{
        _cleanup_free_ char *scheme = NULL;

        if (!url)
                return;
        scheme = has_bad_url_chars(url) ? NULL : url_scheme(url);
        if (!scheme)
                add(ctx, IGN_ERROR, path, "cannot parse URL");
        else if (!streq(scheme, "http") && !streq(scheme, "https"))
                add(ctx, IGN_ERROR, path, "proxies must be http(s)");
        else if (https && streq(scheme, "http"))
                add(ctx, IGN_WARNING, path, "insecure plaintext HTTP proxy for HTTPS resources");
}

static void check_ignition(Ctx *ctx, const IgnIgnition *ign)
{
        for (size_t i = 0; i < ign->config.n_merge; i++) {
                P("$.ignition.config.merge[%zu]", i);
                check_resource(ctx, p, &ign->config.merge[i],
                               /* source_required= */ ctx->version >= IGN_V3_1);
        }
        check_resource(ctx, "$.ignition.config.replace", &ign->config.replace, false);
        for (size_t i = 0; i < ign->security.tls.n_certificate_authorities; i++) {
                P("$.ignition.security.tls.certificateAuthorities[%zu]", i);
                check_resource(ctx, p, &ign->security.tls.certificate_authorities[i], true);
        }
        check_proxy(ctx, "$.ignition.proxy.httpProxy", ign->proxy.http_proxy, false);
        check_proxy(ctx, "$.ignition.proxy.httpsProxy", ign->proxy.https_proxy, true);
}

/* ---- storage -------------------------------------------------------------------------------- */

static void check_owner(Ctx *ctx, const char *path, const char *what, const IgnNodeOwner *o)
{
        if (o->id.set && !isempty(o->name)) {
                P("%s.%s", path, what);
                add(ctx, IGN_ERROR, p, "cannot set both id and name");
        }
}

static void check_mode(Ctx *ctx, const char *path, const IgnInt *mode)
{
        P("%s.mode", path);
        if (!mode->set)
                return;
        if (mode->value < 0)
                add(ctx, IGN_ERROR, p, "illegal mode %" PRIi64 " (must be 0 to 07777)", mode->value);
        else if (mode->value > 07777)
                add(ctx, IGN_ERROR, p, "illegal mode %#" PRIo64 " (must be 0 to 07777)",
                    (uint64_t)mode->value);
        else if ((mode->value & 07000) && ctx->version < IGN_V3_4)
                add(ctx, IGN_WARNING, p, "setuid/setgid/sticky bits are ignored before spec 3.4.0");
}

static void check_node(Ctx *ctx, const char *path, const char *node_path, const IgnNodeOwner *user,
                       const IgnNodeOwner *group)
{
        P("%s.path", path);
        check_path(ctx, p, node_path);
        check_owner(ctx, path, "user", user);
        check_owner(ctx, path, "group", group);
}

static bool path_under(const char *p, const char *dir)
{
        const char *rest = p && dir ? startswith(p, dir) : NULL;
        return rest && rest[0] == '/';
}

/* The path Go's path.Clean(path.Join(base, target)) gives for a relative
 * hard link target (only used to compare with directory paths). */
static char *join_clean(const char *link_path, const char *target)
{
        _cleanup_strv_free_ char **parts = NULL, **out = NULL;
        _cleanup_free_ char *joined = NULL;
        char *r;

        if (target[0] == '/')
                joined = strdup(target);
        else
                joined = strdup_printf("%s/%s", link_path, target);
        if (!joined || strv_split(joined, "/", &parts) < 0)
                return NULL;
        STRV_FOREACH (s, parts) {
                if (streq(*s, "."))
                        continue;
                if (streq(*s, "..")) {
                        size_t n = strv_length(out);
                        if (n > 0) {
                                free(out[n - 1]);
                                out[n - 1] = NULL;
                        }
                        continue;
                }
                if (strv_extend(&out, *s) < 0)
                        return NULL;
        }
        r = strv_join(out, "/");
        if (!r)
                return NULL;
        free(joined);
        joined = strdup_printf("/%s", r);
        free(r);
        return TAKE_PTR(joined);
}

static void check_files(Ctx *ctx, const IgnStorage *s)
{
        for (size_t i = 0; i < s->n_files; i++) {
                const IgnFile *f = &s->files[i];
                P("$.storage.files[%zu]", i);
                check_node(ctx, p, f->path, &f->user, &f->group);
                check_mode(ctx, p, &f->mode);
                if (f->overwrite.set && f->overwrite.value && !f->contents.source) {
                        _cleanup_free_ char *o = pathf(ctx, "%s.overwrite", p);
                        add(ctx, IGN_ERROR, o, "overwrite needs contents.source");
                }
                {
                        _cleanup_free_ char *c = pathf(ctx, "%s.contents", p);
                        check_resource(ctx, c, &f->contents, false);
                }
                for (size_t k = 0; k < f->n_append; k++) {
                        _cleanup_free_ char *a = pathf(ctx, "%s.append[%zu]", p, k);
                        check_resource(ctx, a, &f->append[k], false);
                }
                for (size_t l = 0; l < s->n_links; l++)
                        if (path_under(f->path, s->links[l].path)) {
                                add(ctx, IGN_ERROR, p, "path goes through the link $.storage.links[%zu]", l);
                                break;
                        }
        }
        for (size_t i = 0; i < s->n_directories; i++) {
                const IgnDirectory *d = &s->directories[i];
                P("$.storage.directories[%zu]", i);
                check_node(ctx, p, d->path, &d->user, &d->group);
                check_mode(ctx, p, &d->mode);
                for (size_t l = 0; l < s->n_links; l++)
                        if (path_under(d->path, s->links[l].path)) {
                                add(ctx, IGN_ERROR, p, "path goes through the link $.storage.links[%zu]", l);
                                break;
                        }
        }
        for (size_t i = 0; i < s->n_links; i++) {
                const IgnLink *k = &s->links[i];
                P("$.storage.links[%zu]", i);
                check_node(ctx, p, k->path, &k->user, &k->group);
                for (size_t l = 0; l < s->n_links; l++)
                        if (path_under(k->path, s->links[l].path)) {
                                add(ctx, IGN_ERROR, p, "path goes through the link $.storage.links[%zu]", l);
                                break;
                        }
                if (isempty(k->target)) {
                        if (ctx->version >= IGN_V3_3 || !k->target) {
                                _cleanup_free_ char *t = pathf(ctx, "%s.target", p);
                                add(ctx, IGN_ERROR, t, "target is required");
                        }
                        continue;
                }
                if (k->hard.set && k->hard.value) {
                        _cleanup_free_ char *target = join_clean(k->path ?: "/", k->target);
                        if (!target) {
                                ctx->error = -ENOMEM;
                                continue;
                        }
                        for (size_t d = 0; d < s->n_directories; d++)
                                if (streq_ptr(target, s->directories[d].path))
                                        add(ctx, IGN_ERROR, p,
                                            "hard link target is the directory "
                                            "$.storage.directories[%zu]",
                                            d);
                }
        }
}

static bool is_guid(const char *s)
{
        static const int groups[] = { 8, 4, 4, 4, 12 };

        if (!*s)
                return true;
        for (size_t g = 0; g < ELEMENTSOF(groups); g++) {
                for (int k = 0; k < groups[g]; k++, s++)
                        if (!isxdigit((unsigned char)*s))
                                return false;
                if (g < ELEMENTSOF(groups) - 1 && *s++ != '-')
                        return false;
        }
        return *s == 0;
}

static int64_t part_end(const IgnPartition *p)
{
        if (p->size_mib.value == 0)
                return p->start_mib.value;
        return p->start_mib.value + p->size_mib.value - 1;
}

static bool explicit_dims(const IgnPartition *p)
{
        return p->start_mib.set && p->size_mib.set && p->start_mib.value != 0;
}

static void check_disk(Ctx *ctx, const char *path, const IgnDisk *d)
{
        bool has_zero = false, has_not_exist = false;
        bool reported_number = false, reported_overlap = false, reported_label = false;

        if (isempty(d->device)) {
                P("%s.device", path);
                add(ctx, IGN_ERROR, p, "device is required");
                return;
        }
        {
                P("%s.device", path);
                check_path(ctx, p, d->device);
        }
        for (size_t i = 0; i < d->n_partitions; i++) {
                const IgnPartition *pa = &d->partitions[i];
                P("%s.partitions[%zu]", path, i);
                int64_t number = pa->number.set ? pa->number.value : 0;

                has_zero = has_zero || number == 0;
                has_not_exist = has_not_exist || (pa->should_exist.set && !pa->should_exist.value);
                if (pa->should_exist.set && !pa->should_exist.value &&
                    (pa->label || !isempty(pa->type_guid) || !isempty(pa->guid) || pa->start_mib.set ||
                     pa->size_mib.set))
                        add(ctx, IGN_ERROR, p, "shouldExist is false but other properties are set");
                if (number == 0 && !pa->label)
                        add(ctx, IGN_ERROR, p, "a partition number >= 1 or a label is required");
                if (pa->label) {
                        _cleanup_free_ char *l = pathf(ctx, "%s.label", p);
                        if (strlen(pa->label) > 36)
                                add(ctx, IGN_ERROR, l, "partition labels may not exceed 36 characters");
                        else if (strchr(pa->label, ':'))
                                add(ctx, IGN_ERROR, l, "partition label must not contain ':'");
                }
                if (pa->guid && !is_guid(pa->guid)) {
                        _cleanup_free_ char *g = pathf(ctx, "%s.guid", p);
                        add(ctx, IGN_ERROR, g, "not a GUID (01234567-89AB-CDEF-EDCB-A98765432101)");
                }
                if (pa->type_guid && !is_guid(pa->type_guid)) {
                        _cleanup_free_ char *g = pathf(ctx, "%s.typeGuid", p);
                        add(ctx, IGN_ERROR, g, "not a GUID (01234567-89AB-CDEF-EDCB-A98765432101)");
                }
                /* collisions are reported once per disk, at the later entry */
                for (size_t j = 0; j < i && number != 0 && !reported_number; j++)
                        if (d->partitions[j].number.set && d->partitions[j].number.value == number) {
                                add(ctx, IGN_ERROR, p,
                                    "partition number %" PRIi64 " also used by %s.partitions[%zu]", number,
                                    path, j);
                                reported_number = true;
                        }
                for (size_t j = 0; j < i && pa->label && !reported_label; j++)
                        if (streq_ptr(d->partitions[j].label, pa->label)) {
                                add(ctx, IGN_ERROR, p,
                                    "partition label \"%s\" also used by %s.partitions[%zu]", pa->label,
                                    path, j);
                                reported_label = true;
                        }
        }
        for (size_t i = 0; i < d->n_partitions && !reported_overlap; i++) {
                const IgnPartition *a = &d->partitions[i];
                if (!explicit_dims(a))
                        continue;
                for (size_t j = 0; j < d->n_partitions; j++) {
                        const IgnPartition *o = &d->partitions[j];
                        if (i == j || !explicit_dims(o))
                                continue;
                        if ((a->start_mib.value >= o->start_mib.value &&
                             a->start_mib.value <= part_end(o)) ||
                            (part_end(a) >= o->start_mib.value && part_end(a) <= part_end(o)) ||
                            (a->start_mib.value < o->start_mib.value && part_end(a) > part_end(o))) {
                                P("%s.partitions[%zu]", path, j);
                                add(ctx, IGN_ERROR, p, "partition overlaps %s.partitions[%zu]", path, i);
                                reported_overlap = true;
                                break;
                        }
                }
        }
        if (has_zero && has_not_exist) {
                P("%s.partitions", path);
                add(ctx, IGN_ERROR, p, "shouldExist is false for a partition while another has number 0");
        }
}

static void check_filesystem(Ctx *ctx, const char *path, const IgnFilesystem *f)
{
        static const struct {
                const char *format;
                size_t max_label;
        } formats[] = { { "ext4", 16 }, { "btrfs", 256 }, { "xfs", 12 },
                        { "swap", 15 }, { "vfat", 11 },   { "none", 0 } };
        ssize_t known = -1;

        if (!isempty(f->path)) {
                P("%s.path", path);
                check_path(ctx, p, f->path);
        }
        {
                P("%s.device", path);
                check_path(ctx, p, f->device);
        }
        if (isempty(f->format)) {
                if (!isempty(f->path) || !isempty(f->label) || !isempty(f->uuid) ||
                    (f->wipe_filesystem.set && f->wipe_filesystem.value) || !strv_empty(f->mount_options) ||
                    !strv_empty(f->options)) {
                        P("%s.format", path);
                        add(ctx, IGN_ERROR, p,
                            "format is required with path, label, uuid, wipeFilesystem, options or "
                            "mountOptions");
                }
        } else {
                for (size_t i = 0; i < ELEMENTSOF(formats); i++)
                        if (streq(f->format, formats[i].format) &&
                            (!streq(f->format, "none") || ctx->version >= IGN_V3_3))
                                known = (ssize_t)i;
                if (known < 0) {
                        P("%s.format", path);
                        add(ctx, IGN_ERROR, p, "unsupported filesystem format \"%s\"", f->format);
                }
        }
        if (!isempty(f->label)) {
                P("%s.label", path);
                if (isempty(f->format))
                        add(ctx, IGN_ERROR, p, "a label needs a format");
                else if (known >= 0 && formats[known].max_label > 0 &&
                         strlen(f->label) > formats[known].max_label)
                        add(ctx, IGN_ERROR, p, "%s labels cannot be longer than %zu characters", f->format,
                            formats[known].max_label);
        }
}

static void check_raid(Ctx *ctx, const char *path, const IgnRaid *r)
{
        static const char *const levels[] = { "linear", "raid0",  "0",     "stripe", "raid1",
                                              "1",      "mirror", "raid4", "4",      "raid5",
                                              "5",      "raid6",  "6",     "raid10", "10" };
        bool known = false;

        {
                P("%s.level", path);
                if (isempty(r->level))
                        add(ctx, IGN_ERROR, p, "raid level is required");
                else {
                        for (size_t i = 0; i < ELEMENTSOF(levels); i++)
                                known = known || streq(r->level, levels[i]);
                        if (!known)
                                add(ctx, IGN_ERROR, p, "unrecognized raid level \"%s\"", r->level);
                        else if (r->spares.set && r->spares.value != 0 &&
                                 (streq(r->level, "linear") || streq(r->level, "raid0") ||
                                  streq(r->level, "0") || streq(r->level, "stripe")))
                                add(ctx, IGN_ERROR, p,
                                    "spares are not supported for linear and raid0 arrays");
                }
        }
        if (strv_empty(r->devices)) {
                P("%s.devices", path);
                add(ctx, IGN_ERROR, p, "raid devices are required");
        }
        for (size_t i = 0; r->devices && r->devices[i]; i++) {
                P("%s.devices[%zu]", path, i);
                check_path(ctx, p, r->devices[i]);
        }
}

static void check_luks(Ctx *ctx, const char *path, const IgnLuks *l)
{
        const IgnClevis *cl = &l->clevis;
        const IgnClevisCustom *cu = &cl->custom;

        if (l->name && strchr(l->name, '/')) {
                P("%s.name", path);
                add(ctx, IGN_ERROR, p, "device names cannot contain slashes");
        }
        if (!isempty(l->label) && strlen(l->label) > 47) {
                P("%s.label", path);
                add(ctx, IGN_ERROR, p, "luks labels cannot be longer than 47 characters");
        }
        {
                P("%s.device", path);
                if (isempty(l->device))
                        add(ctx, IGN_ERROR, p, "device is required");
                else
                        check_path(ctx, p, l->device);
        }
        if (!isempty(cu->pin) && (cl->n_tang > 0 || (cl->tpm2.set && cl->tpm2.value) ||
                                  (cl->threshold.set && cl->threshold.value != 0))) {
                P("%s.clevis", path);
                add(ctx, IGN_ERROR, p, "a custom clevis config excludes tpm2, tang and threshold");
        }
        if (!isempty(cu->pin) || !isempty(cu->config) ||
            (cu->needs_network.set && cu->needs_network.value)) {
                if (isempty(cu->pin)) {
                        P("%s.clevis.custom.pin", path);
                        add(ctx, IGN_ERROR, p, "custom clevis pin is required");
                } else if (!streq(cu->pin, "tpm2") && !streq(cu->pin, "tang") && !streq(cu->pin, "sss")) {
                        P("%s.clevis.custom.pin", path);
                        add(ctx, IGN_ERROR, p, "unsupported clevis pin \"%s\"", cu->pin);
                }
                if (isempty(cu->config)) {
                        P("%s.clevis.custom.config", path);
                        add(ctx, IGN_ERROR, p, "custom clevis config is required");
                }
        }
        for (size_t i = 0; i < cl->n_tang; i++) {
                const IgnTang *t = &cl->tang[i];
                _cleanup_free_ char *scheme =
                        t->url && !has_bad_url_chars(t->url) ? url_scheme(t->url) : NULL;
                P("%s.clevis.tang[%zu]", path, i);
                if (!scheme || !(streq(scheme, "http") || streq(scheme, "https"))) {
                        _cleanup_free_ char *u = pathf(ctx, "%s.url", p);
                        add(ctx, IGN_ERROR, u, "tang URLs must be http(s)");
                }
                if (isempty(t->thumbprint)) {
                        _cleanup_free_ char *tp = pathf(ctx, "%s.thumbprint", p);
                        add(ctx, IGN_ERROR, tp, "thumbprint is required");
                }
        }
        {
                P("%s.keyFile", path);
                check_resource(ctx, p, &l->key_file, false);
        }
        if (l->cex.enabled.set && l->cex.enabled.value &&
            (cl->n_tang > 0 || (cl->tpm2.set && cl->tpm2.value) || !isempty(cu->pin) ||
             l->key_file.source)) {
                P("%s.cex", path);
                add(ctx, IGN_ERROR, p, "cex cannot be combined with clevis or a key file");
        }
}

/* Entries whose parent is a file or link in the same config (newer
 * Ignition's validateParents): the runtime cannot create them. */
static void check_parents(Ctx *ctx, const IgnStorage *s)
{
        static const char *const lists[] = { "files", "directories", "links" };
        const size_t counts[] = { s->n_files, s->n_directories, s->n_links };

        for (size_t li = 0; li < 3; li++)
                for (size_t i = 0; i < counts[li]; i++) {
                        const char *path = li == 0   ? s->files[i].path
                                           : li == 1 ? s->directories[i].path
                                                     : s->links[i].path;
                        bool done = false;
                        if (isempty(path))
                                continue;
                        for (size_t f = 0; f < s->n_files && !done; f++)
                                if (path_under(path, s->files[f].path)) {
                                        P("$.storage.%s[%zu].path", lists[li], i);
                                        add(ctx, IGN_ERROR, p,
                                            "parent \"%s\" is the file $.storage.files[%zu]",
                                            s->files[f].path, f);
                                        done = true;
                                }
                }
}

static void check_systemd_conflicts(Ctx *ctx, const IgnConfig *c)
{
        static const char *const lists[] = { "files", "directories", "links" };
        const IgnStorage *s = &c->storage;
        const size_t counts[] = { s->n_files, s->n_directories, s->n_links };

        for (size_t li = 0; li < 3; li++)
                for (size_t i = 0; i < counts[li]; i++) {
                        const char *path = li == 0   ? s->files[i].path
                                           : li == 1 ? s->directories[i].path
                                                     : s->links[i].path;
                        const char *rest = path ? startswith(path, "/etc/systemd/system/") : NULL;
                        if (!rest)
                                continue;
                        for (size_t u = 0; u < c->systemd.n_units; u++) {
                                const IgnUnit *unit = &c->systemd.units[u];
                                const char *after = unit->name ? startswith(rest, unit->name) : NULL;
                                bool hit = false;
                                if (!after)
                                        continue;
                                if (*after == 0 && !isempty(unit->contents))
                                        hit = true;
                                else if (startswith(after, ".d/"))
                                        for (size_t d = 0; d < unit->n_dropins && !hit; d++)
                                                hit = !isempty(unit->dropins[d].contents) &&
                                                      streq_ptr(after + 3, unit->dropins[d].name);
                                if (hit) {
                                        P("$.storage.%s[%zu].path", lists[li], i);
                                        add(ctx, IGN_ERROR, p,
                                            "path conflicts with the systemd unit $.systemd.units[%zu]", u);
                                        break;
                                }
                        }
                }
}

/* ---- systemd ------------------------------------------------------------------------------- */

/* go-systemd's unit file grammar, enough to refuse what it refuses: section
 * headers, Key=Value lines, comments, backslash continuations, and a line
 * length limit. Sets *ret_install when an [Install] section is present. */
static const char *unit_problem(const char *contents, bool *ret_install)
{
        bool install = false;
        const char *line = contents;

        while (*line) {
                const char *end = strchrnul(line, '\n');
                size_t len = (size_t)(end - line);
                _cleanup_free_ char *l = strndup(line, len);

                if (!l)
                        return "out of memory";
                strstrip(l);
                if (len > 2048 * 16)
                        return "line too long";
                if (isempty(l) || l[0] == '#' || l[0] == ';') {
                        /* comment or blank */
                } else if (l[0] == '[') {
                        char *close = strchr(l, ']');
                        if (!close || close[1] != 0)
                                return "unterminated section header";
                        if (close == l + 1)
                                return "empty section name";
                        install = install || streq(l, "[Install]");
                } else {
                        /* go-systemd takes options before the first section */
                        if (!strchr(l, '='))
                                return "option line without '='";
                        if (l[0] == '=')
                                return "option without a name";
                        /* continuation lines belong to this option */
                        while (len > 0 && line[len - 1] == '\\' && *end == '\n') {
                                line = end + 1;
                                end = strchrnul(line, '\n');
                                len = (size_t)(end - line);
                        }
                }
                line = *end ? end + 1 : end;
        }
        *ret_install = install;
        return NULL;
}

static bool unit_name_ok(const char *name)
{
        static const char *const exts[] = { ".service",   ".socket",   ".device", ".mount",
                                            ".automount", ".swap",     ".target", ".path",
                                            ".timer",     ".snapshot", ".slice",  ".scope" };
        const char *dot = name ? strrchr(name, '.') : NULL;

        if (!dot || strchr(dot, '/'))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(exts); i++)
                if (streq(dot, exts[i]))
                        return true;
        return false;
}

static void check_systemd(Ctx *ctx, const IgnSystemd *sd)
{
        for (size_t i = 0; i < sd->n_units; i++) {
                const IgnUnit *u = &sd->units[i];
                P("$.systemd.units[%zu]", i);
                bool install = false;

                if (!unit_name_ok(u->name)) {
                        _cleanup_free_ char *n = pathf(ctx, "%s.name", p);
                        add(ctx, IGN_ERROR, n,
                            "invalid systemd unit name \"%s\" (needs a unit type suffix such as .service)",
                            strempty(u->name));
                }
                if (u->contents) {
                        _cleanup_free_ char *cp = pathf(ctx, "%s.contents", p);
                        const char *m = unit_problem(u->contents, &install);
                        if (m)
                                add(ctx, IGN_ERROR, cp, "invalid unit contents: %s", m);
                        else if (u->enabled.set && u->enabled.value && !isempty(u->contents) && !install)
                                add(ctx, IGN_WARNING, cp,
                                    "unit \"%s\" is enabled, but has no [Install] section so enable does "
                                    "nothing",
                                    strempty(u->name));
                }
                for (size_t d = 0; d < u->n_dropins; d++) {
                        const IgnDropin *di = &u->dropins[d];
                        _cleanup_free_ char *dp = pathf(ctx, "%s.dropins[%zu]", p, d);
                        if (di->contents) {
                                _cleanup_free_ char *cp = pathf(ctx, "%s.contents", dp);
                                bool ignored;
                                const char *m = unit_problem(di->contents, &ignored);
                                if (m)
                                        add(ctx, IGN_ERROR, cp, "invalid drop-in contents: %s", m);
                        }
                        if (!di->name || !endswith(di->name, ".conf")) {
                                _cleanup_free_ char *n = pathf(ctx, "%s.name", dp);
                                add(ctx, IGN_ERROR, n, "drop-in name \"%s\" must end in .conf",
                                    strempty(di->name));
                        }
                }
        }
}

int ign_config_validate(const IgnConfig *c, IgnReport *report)
{
        IgnReport local = IGN_REPORT_INIT;
        Ctx context = { .version = c->version, .report = &local }, *ctx = &context;
        int r;

        check_ignition(ctx, &c->ignition);
        for (size_t i = 0; i < c->storage.n_disks; i++) {
                P("$.storage.disks[%zu]", i);
                check_disk(ctx, p, &c->storage.disks[i]);
        }
        for (size_t i = 0; i < c->storage.n_raid; i++) {
                P("$.storage.raid[%zu]", i);
                check_raid(ctx, p, &c->storage.raid[i]);
        }
        for (size_t i = 0; i < c->storage.n_luks; i++) {
                P("$.storage.luks[%zu]", i);
                check_luks(ctx, p, &c->storage.luks[i]);
        }
        for (size_t i = 0; i < c->storage.n_filesystems; i++) {
                P("$.storage.filesystems[%zu]", i);
                check_filesystem(ctx, p, &c->storage.filesystems[i]);
        }
        check_files(ctx, &c->storage);
        check_parents(ctx, &c->storage);
        check_systemd_conflicts(ctx, c);
        check_systemd(ctx, &c->systemd);
        r = ign_obj_check_dups(&ign_type_config, c, "$", &local);
        if (r < 0 && ctx->error == 0)
                ctx->error = r;

        /* hand the findings over */
        for (size_t i = 0; i < local.n_entries && ctx->error == 0; i++) {
                r = ign_report_add(report, local.entries[i].severity, local.entries[i].path, "%s",
                                   local.entries[i].message);
                if (r < 0)
                        ctx->error = r;
        }
        bool errors = ign_report_has_errors(&local);
        ign_report_done(&local);
        if (ctx->error < 0)
                return ctx->error;
        return errors ? -EBADMSG : 0;
}
