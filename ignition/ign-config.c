/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whole-config operations: version translation, merge, pointer configs,
 * file extraction, the api-vip-connectivity-check filter, size awareness.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ign-internal.h"
#include "strutil.h"

static void mask_special_bits(IgnInt *mode)
{
        if (mode->set)
                mode->value &= ~(int64_t)07000;
}

static bool has_special_bits(const IgnInt *mode)
{
        return mode->set && (mode->value & 07000) != 0;
}

/* Go's 3.2 -> 3.3 translation turns these plain strings into pointers, so
 * an absent value becomes "" (util.StrToPtr). */
static int set_empty_if_null(char **s)
{
        if (*s)
                return 0;
        *s = strdup("");
        return *s ? 0 : -ENOMEM;
}

static int translate_up(IgnConfig *c, IgnVersion to)
{
        int r;

        if (c->version <= IGN_V3_2 && to >= IGN_V3_3) {
                for (size_t i = 0; i < c->storage.n_raid; i++) {
                        r = set_empty_if_null(&c->storage.raid[i].level);
                        if (r < 0)
                                return r;
                }
                for (size_t i = 0; i < c->storage.n_links; i++) {
                        r = set_empty_if_null(&c->storage.links[i].target);
                        if (r < 0)
                                return r;
                }
                for (size_t i = 0; i < c->storage.n_luks; i++) {
                        IgnClevisCustom *cu = &c->storage.luks[i].clevis.custom;
                        if (!cu->pin && !cu->config && !cu->needs_network.set)
                                continue; /* 3.2's custom pointer was nil */
                        if ((r = set_empty_if_null(&cu->pin)) < 0 ||
                            (r = set_empty_if_null(&cu->config)) < 0)
                                return r;
                }
        }
        if (c->version <= IGN_V3_3 && to >= IGN_V3_4) {
                /* 3.4 honours setuid/setgid/sticky; older versions ignored them */
                for (size_t i = 0; i < c->storage.n_files; i++)
                        mask_special_bits(&c->storage.files[i].mode);
                for (size_t i = 0; i < c->storage.n_directories; i++)
                        mask_special_bits(&c->storage.directories[i].mode);
        }
        return 0;
}

static int refuse(char **reterr, IgnVersion from, IgnVersion to, const char *path, const char *why)
{
        if (reterr)
                *reterr = strdup_printf("cannot translate spec %s to %s without losing data: %s %s",
                                        ign_version_to_string(from), ign_version_to_string(to), path, why);
        return -EOPNOTSUPP;
}

static int check_down(const IgnConfig *c, IgnVersion to, char **reterr)
{
        _cleanup_free_ char *path = NULL;
        int r;

        r = ign_obj_find_newer(&ign_type_config, c, to, "$", &path);
        if (r < 0)
                return r;
        if (r > 0)
                return refuse(reterr, c->version, to, path, "is not in the older spec");
        if (c->version >= IGN_V3_4 && to < IGN_V3_4) {
                for (size_t i = 0; i < c->storage.n_files; i++)
                        if (has_special_bits(&c->storage.files[i].mode)) {
                                path = strdup_printf("$.storage.files[%zu].mode", i);
                                return refuse(reterr, c->version, to, strna(path),
                                              "has setuid/setgid/sticky bits, which older specs ignore");
                        }
                for (size_t i = 0; i < c->storage.n_directories; i++)
                        if (has_special_bits(&c->storage.directories[i].mode)) {
                                path = strdup_printf("$.storage.directories[%zu].mode", i);
                                return refuse(reterr, c->version, to, strna(path),
                                              "has setuid/setgid/sticky bits, which older specs ignore");
                        }
        }
        if (c->version >= IGN_V3_3 && to < IGN_V3_3)
                for (size_t i = 0; i < c->storage.n_filesystems; i++)
                        if (c->storage.filesystems[i].format &&
                            streq(c->storage.filesystems[i].format, "none")) {
                                path = strdup_printf("$.storage.filesystems[%zu].format", i);
                                return refuse(reterr, c->version, to, strna(path),
                                              "is \"none\", which older specs do not know");
                        }
        return 0;
}

int ign_config_translate(IgnConfig *c, IgnVersion version, char **reterr)
{
        char *v;
        int r;

        if (!ign_version_valid(version) || !ign_version_valid(c->version))
                return -EINVAL;
        if (version == c->version)
                return 0;
        if (version < c->version) {
                r = check_down(c, version, reterr);
                if (r < 0)
                        return r;
        } else {
                r = translate_up(c, version);
                if (r < 0)
                        return r;
        }
        v = strdup(ign_version_to_string(version));
        if (!v)
                return -ENOMEM;
        /* unknown keys of one version may be fields of another: drop them,
         * as Ignition's own translation (which never saw them) does */
        ign_obj_drop_extras(&ign_type_config, c);
        free(c->ignition.version);
        c->ignition.version = v;
        c->version = version;
        return 0;
}

int ign_config_merge(const IgnConfig *parent, const IgnConfig *child, IgnConfig **ret)
{
        _cleanup_ign_config_ IgnConfig *p = NULL, *ch = NULL, *result = NULL;
        IgnVersion v = MAX(parent->version, child->version);
        int r;

        p = ign_config_copy(parent);
        ch = ign_config_copy(child);
        result = calloc(1, sizeof(IgnConfig));
        if (!p || !ch || !result)
                return -ENOMEM;
        if ((r = ign_config_translate(p, v, NULL)) < 0 || (r = ign_config_translate(ch, v, NULL)) < 0)
                return r;
        r = ign_obj_merge(&ign_type_config, p, ch, result);
        if (r < 0)
                return r;
        result->version = v;
        *ret = TAKE_PTR(result);
        return 0;
}

bool ign_size_check(size_t len, IgnReport *report)
{
        if (len <= IGN_SIZE_LIMIT)
                return false;
        (void)ign_report_add(report, IGN_WARNING, "$",
                             "serialized config is %zu bytes, above the 256 KiB (262144 bytes) that "
                             "assisted-service and Kubernetes objects carry",
                             len);
        return true;
}

int ign_validate_buffer(const char *data, size_t len, size_t max_size, IgnReport *report)
{
        _cleanup_ign_config_ IgnConfig *c = NULL;
        int r;

        r = ign_config_parse(data, len, max_size, &c, report);
        if (r < 0)
                return r;
        (void)ign_size_check(len, report);
        return ign_config_validate(c, report);
}

/* ---- Pointer configs ------------------------------------------------------------ */

static int header_from_string(const char *s, IgnHttpHeader *h)
{
        const char *sep = strpbrk(s, ":=");
        _cleanup_free_ char *name = NULL, *value = NULL;

        if (!sep || sep == s)
                return -EINVAL;
        name = strndup(s, (size_t)(sep - s));
        value = strdup(sep + 1);
        if (!name || !value)
                return -ENOMEM;
        strstrip(name);
        strstrip(value);
        if (isempty(name) || isempty(value))
                return -EINVAL;
        h->name = TAKE_PTR(name);
        h->value = TAKE_PTR(value);
        return 0;
}

int ign_pointer_new(const IgnPointerOptions *o, IgnConfig **ret)
{
        _cleanup_ign_config_ IgnConfig *c = NULL;
        size_t n_headers = strv_length(o->headers) + (o->token ? 1 : 0);
        IgnResource *m;
        int r;

        if (!o->url || !ign_version_valid(o->version))
                return -EINVAL;
        if (n_headers > 0 && o->version < IGN_V3_1)
                return -EOPNOTSUPP; /* 3.0 has no httpHeaders */
        c = ign_config_new(o->version);
        if (!c)
                return -ENOMEM;

        m = calloc(1, sizeof(IgnResource));
        if (!m)
                return -ENOMEM;
        c->ignition.config.merge = m;
        c->ignition.config.n_merge = 1;
        m->source = strdup(o->url);
        if (!m->source)
                return -ENOMEM;
        if (n_headers > 0) {
                m->http_headers = calloc(n_headers, sizeof(IgnHttpHeader));
                if (!m->http_headers)
                        return -ENOMEM;
                STRV_FOREACH (h, o->headers) {
                        r = header_from_string(*h, &m->http_headers[m->n_http_headers]);
                        if (r < 0)
                                return r;
                        m->n_http_headers++;
                }
                if (o->token) {
                        IgnHttpHeader *h = &m->http_headers[m->n_http_headers];
                        h->name = strdup("Authorization");
                        h->value = strdup_printf("Bearer %s", o->token);
                        if (!h->name || !h->value) {
                                free(h->name);
                                erase_and_free(h->value);
                                *h = (IgnHttpHeader){};
                                return -ENOMEM;
                        }
                        m->n_http_headers++;
                }
        }
        if (o->ca_pem) {
                IgnResource *ca = calloc(1, sizeof(IgnResource));
                if (!ca)
                        return -ENOMEM;
                c->ignition.security.tls.certificate_authorities = ca;
                c->ignition.security.tls.n_certificate_authorities = 1;
                ca->source = ign_data_url_encode(o->ca_pem, o->ca_len, /* percent= */ false);
                if (!ca->source)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

/* ---- Reading files ---------------------------------------------------------------- */

int ign_config_extract_file(const IgnConfig *c, const char *path, size_t max_size, void **ret,
                            size_t *ret_len, char **reterr)
{
        const IgnFile *f = NULL;
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        int r;

        /* the last entry wins, as a merge would have made it */
        for (size_t i = 0; i < c->storage.n_files; i++)
                if (c->storage.files[i].path && streq(c->storage.files[i].path, path))
                        f = &c->storage.files[i];
        if (!f) {
                if (reterr)
                        *reterr = strdup_printf("no file \"%s\" in the config", path);
                return -ENOENT;
        }
        for (size_t i = 0; i <= f->n_append; i++) {
                const IgnResource *res = i == 0 ? &f->contents : &f->append[i - 1];
                _cleanup_free_ void *part = NULL;
                _cleanup_free_ char *err = NULL;
                size_t n;
                char *grown;

                if (i == 0 && !res->source)
                        continue;
                r = ign_resource_read(res, max_size, &part, &n, &err);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("%s of \"%s\": %s",
                                                        i == 0 ? "contents" : "append entry", path,
                                                        strna(err));
                        return r;
                }
                if (n > max_size - len)
                        return -E2BIG;
                grown = realloc(out, len + n + 1);
                if (!grown)
                        return -ENOMEM;
                out = grown;
                memcpy(out + len, part, n);
                len += n;
                out[len] = 0;
        }
        if (!out && !(out = strdup("")))
                return -ENOMEM;
        *ret = TAKE_PTR(out);
        if (ret_len)
                *ret_len = len;
        return 0;
}

/* ---- api-vip-connectivity-check ------------------------------------------------------ */

static const char *const api_vip_files[] = {
        "/etc/kubernetes/manifests/coredns.yaml",
        "/etc/kubernetes/manifests/keepalived.yaml",
        "/etc/kubernetes/kubeconfig",
};

int ign_config_filter_api_vip(const IgnConfig *c, IgnConfig **ret)
{
        _cleanup_ign_config_ IgnConfig *copy = NULL, *out = NULL;
        size_t kept = 0;

        copy = ign_config_copy(c);
        out = ign_config_new(c->version);
        if (!copy || !out)
                return -ENOMEM;

        /* move what we keep out of the copy, free the rest with it */
        out->storage.luks = TAKE_PTR(copy->storage.luks);
        out->storage.n_luks = copy->storage.n_luks;
        copy->storage.n_luks = 0;
        if (copy->storage.n_files > 0) {
                out->storage.files = calloc(copy->storage.n_files, sizeof(IgnFile));
                if (!out->storage.files)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < copy->storage.n_files; i++) {
                IgnFile *f = &copy->storage.files[i];
                bool keep = false;
                for (size_t k = 0; k < ELEMENTSOF(api_vip_files); k++)
                        keep = keep || (f->path && streq(f->path, api_vip_files[k]));
                if (!keep)
                        continue;
                out->storage.files[kept++] = *f;
                memset(f, 0, sizeof(*f));
        }
        out->storage.n_files = kept;
        *ret = TAKE_PTR(out);
        return 0;
}
