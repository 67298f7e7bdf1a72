/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The install step's request, pure (no I/O but the disks' existence
 * check): parsing and validating InstallCmdRequest as the Go agent does.
 * install-command.c makes its command lines, install.c runs them.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/config.h"
#include "agent/steps/install.h"
#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "jsonutil.h"
#include "log.h"
#include "shell.h"
#include "strutil.h"
#include "uuid.h"

#define IMAGE_PATTERN "^(([a-zA-Z0-9\\-\\.]+)(:[0-9]+)?\\/)?[a-z0-9\\._\\-\\/@]+[?::a-zA-Z0-9_\\-.]+$"
/* the same, in POSIX ERE (no escapes inside brackets, '-' last) */
#define IMAGE_ERE "^(([a-zA-Z0-9.-]+)(:[0-9]+)?/)?[a-z0-9._/@-]+[?:a-zA-Z0-9_.-]+$"
#define SERVICE_IP_PATTERN "^(?:(?:(?:[0-9]{1,3}\\.){3}[0-9]{1,3})|(?:(?:[0-9a-fA-F]*:[0-9a-fA-F]*){2,}))$"
#define SERVICE_IP_ERE "^((([0-9]{1,3}\\.){3}[0-9]{1,3})|(([0-9a-fA-F]*:[0-9a-fA-F]*){2,}))$"
#define VERSION_ERE \
        "^v?([0-9]+(\\.[0-9]+)*)((-([0-9]+[0-9A-Za-z~-]*(\\.[0-9A-Za-z~-]+)*))|(-?([A-Za-z~-]+[0-9A-Za-z~-" \
        "]*(\\." \
        "[0-9A-Za-z~-]+)*)))?(\\+([0-9A-Za-z~-]+(\\.[0-9A-Za-z~-]+)*))?$"

static const char *const installer_allowed_flags[] = {
        "--append-karg",    "--delete-karg",    "-n",          "--copy-network", "--network-dir",
        "--save-partlabel", "--save-partindex", "--image-url", "--image-file",
};

void install_request_done(InstallRequest *r)
{
        free(r->boot_device);
        free(r->cluster_id);
        free(r->controller_image);
        free(r->coreos_image);
        strv_free(r->disks_to_format);
        free(r->high_availability_mode);
        free(r->host_id);
        free(r->infra_env_id);
        free(r->installer_args);
        free(r->installer_image);
        free(r->mco_image);
        free(r->must_gather_image);
        free(r->openshift_version);
        free(r->http_proxy);
        free(r->https_proxy);
        free(r->no_proxy);
        free(r->role);
        strv_free(r->service_ips);
        *r = (InstallRequest){};
}

static bool ere_match(const char *ere, const char *s)
{
        regex_t re;
        bool m;

        if (regcomp(&re, ere, REG_EXTENDED | REG_NOSUB) != 0)
                return false;
        m = regexec(&re, s, 0, NULL, 0) == 0;
        regfree(&re);
        return m;
}

bool go_version_valid(const char *s)
{
        return s && ere_match(VERSION_ERE, s);
}

/* ---- json.Unmarshal into models.InstallCmdRequest ------------------------ */

typedef enum FieldKind {
        F_STRING,
        F_BOOL,
        F_INT64,
        F_STRV,
} FieldKind;

typedef struct Field {
        const char *name;
        FieldKind kind;
        size_t offset;
        const char *go_type;
} Field;

#define FIELD(n, k, member, t) \
        { \
                n, k, offsetof(InstallRequest, member), t \
        }

static const Field fields[] = {
        FIELD("boot_device", F_STRING, boot_device, "string"),
        FIELD("check_cvo", F_BOOL, check_cvo, "bool"),
        FIELD("cluster_id", F_STRING, cluster_id, "strfmt.UUID"),
        FIELD("control_plane_count", F_INT64, control_plane_count, "int64"),
        FIELD("controller_image", F_STRING, controller_image, "string"),
        FIELD("coreos_image", F_STRING, coreos_image, "string"),
        FIELD("disks_to_format", F_STRV, disks_to_format, "[]string"),
        FIELD("enable_skip_mco_reboot", F_BOOL, enable_skip_mco_reboot, "bool"),
        /* the 2023 model's; gone from the 2026 swagger, which has control_plane_count */
        FIELD("high_availability_mode", F_STRING, high_availability_mode, "string"),
        FIELD("host_id", F_STRING, host_id, "strfmt.UUID"),
        FIELD("infra_env_id", F_STRING, infra_env_id, "strfmt.UUID"),
        FIELD("installer_args", F_STRING, installer_args, "string"),
        FIELD("installer_image", F_STRING, installer_image, "string"),
        FIELD("mco_image", F_STRING, mco_image, "string"),
        FIELD("must_gather_image", F_STRING, must_gather_image, "string"),
        FIELD("notify_num_reboots", F_BOOL, notify_num_reboots, "bool"),
        FIELD("openshift_version", F_STRING, openshift_version, "string"),
        FIELD("role", F_STRING, role, "models.HostRole"),
        FIELD("service_ips", F_STRV, service_ips, "[]string"),
        FIELD("skip_installation_disk_cleanup", F_BOOL, skip_installation_disk_cleanup, "bool"),
};

static int unmarshal_error(char **reterr, json_object *v, const char *field, const char *go_type)
{
        if (reterr)
                *reterr = strdup_printf(
                        "json: cannot unmarshal %s into Go struct field InstallCmdRequest.%s of type %s",
                        json_go_kind_name(v), field, go_type);
        return -EINVAL;
}

static int set_field(InstallRequest *r, const Field *f, json_object *v, char **reterr)
{
        void *p = (char *)r + f->offset;

        if (json_object_is_type(v, json_type_null))
                return 0; /* Go leaves the zero value */
        switch (f->kind) {
        case F_STRING:
                if (!json_object_is_type(v, json_type_string))
                        return unmarshal_error(reterr, v, f->name, f->go_type);
                return free_and_strdup((char **)p, json_object_get_string(v));
        case F_BOOL:
                if (!json_object_is_type(v, json_type_boolean))
                        return unmarshal_error(reterr, v, f->name, f->go_type);
                *(bool *)p = json_object_get_boolean(v);
                return 0;
        case F_INT64:
                if (!json_object_is_type(v, json_type_int))
                        return unmarshal_error(reterr, v, f->name, f->go_type);
                *(int64_t *)p = json_object_get_int64(v);
                return 0;
        case F_STRV:
                if (!json_object_is_type(v, json_type_array))
                        return unmarshal_error(reterr, v, f->name, f->go_type);
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        if (!json_object_is_type(e, json_type_string))
                                return unmarshal_error(reterr, e, f->name, "string");
                        if (strv_extend((char ***)p, json_object_get_string(e)) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        return -EINVAL;
}

/* ---- the model's swagger validation ----------------------------------------- */

static int add_error(char ***errs, const char *fmt, ...) _printf_(2, 3);
static int add_error(char ***errs, const char *fmt, ...)
{
        va_list ap;
        char *s = NULL;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        if (!s || strv_push(errs, s) < 0) {
                free(s);
                return -ENOMEM;
        }
        return 0;
}

static void validate_uuid(char ***errs, const char *name, const char *v)
{
        if (!v || isempty(v))
                (void)add_error(errs, "%s in body is required", name);
        else if (!uuid_is_valid(v))
                (void)add_error(errs, "%s in body must be of type uuid: \"%s\"", name, v);
}

static void validate_image(char ***errs, const char *name, const char *v, bool required)
{
        if (!v) {
                if (required)
                        (void)add_error(errs, "%s in body is required", name);
                return;
        }
        if (!ere_match(IMAGE_ERE, v))
                (void)add_error(errs, "%s in body should match '%s'", name, IMAGE_PATTERN);
}

/* go-swagger's generated Validate, properties in alphabetical order;
 * errors joined as a CompositeValidationError. */
static int validate_model(const InstallRequest *r, char **reterr)
{
        static const char *const roles[] = { "auto-assign", "master", "arbiter", "worker", "bootstrap" };
        _cleanup_strv_free_ char **errs = NULL;
        size_t i = 0;

        if (!r->boot_device)
                (void)add_error(&errs, "boot_device in body is required");
        validate_uuid(&errs, "cluster_id", r->cluster_id);
        validate_image(&errs, "controller_image", r->controller_image, true);
        if (!isempty(r->high_availability_mode) && !streq(r->high_availability_mode, "Full") &&
            !streq(r->high_availability_mode, "None"))
                (void)add_error(&errs, "high_availability_mode in body should be one of [Full None]");
        validate_uuid(&errs, "host_id", r->host_id);
        validate_uuid(&errs, "infra_env_id", r->infra_env_id);
        validate_image(&errs, "installer_image", r->installer_image, true);
        if (r->mco_image && !isempty(r->mco_image))
                validate_image(&errs, "mco_image", r->mco_image, false);
        if (!r->role)
                (void)add_error(&errs, "role in body is required");
        else {
                bool ok = false;
                for (size_t k = 0; k < ELEMENTSOF(roles); k++)
                        ok = ok || streq(r->role, roles[k]);
                if (!ok)
                        (void)add_error(&errs, "role in body should be one of [auto-assign master arbiter "
                                               "worker bootstrap]");
        }
        STRV_FOREACH (ip, r->service_ips) {
                if (!ere_match(SERVICE_IP_ERE, *ip))
                        (void)add_error(&errs, "service_ips.%zu in body should match '%s'", i,
                                        SERVICE_IP_PATTERN);
                i++;
        }
        if (!errs)
                return 0;
        if (reterr) {
                _cleanup_free_ char *joined = strv_join(errs, "\n");
                *reterr = strdup_printf("validation failure list:\n%s", strna(joined));
        }
        return -EINVAL;
}

/* ---- the Go agent's own checks --------------------------------------------------- */

static int validate_must_gather(const char *v, char **reterr)
{
        _cleanup_(json_object_putp) json_object *m = NULL;

        /* a JSON object {operator: image}, or a plain image for "ocp" */
        if (json_parse(v, strlen(v), BUF_MAX_JSON_DOC, &m, NULL) < 0 ||
            !json_object_is_type(m, json_type_object)) {
                if (!ere_match(IMAGE_ERE, v)) {
                        if (reterr)
                                *reterr = strdup_printf("must gather image %s validation failed map[ocp:%s]",
                                                        v, v);
                        return -EINVAL;
                }
                return 0;
        }
        json_object_object_foreach (m, op, img) {
                const char *image =
                        json_object_is_type(img, json_type_string) ? json_object_get_string(img) : "";
                if (!ere_match(IMAGE_ERE, image)) {
                        /* Go prints the map (%v): keys sorted */
                        _cleanup_strv_free_ char **pairs = NULL;
                        _cleanup_free_ char *joined = NULL;
                        json_object_object_foreach (m, k, val) {
                                if (strv_extendf(&pairs, "%s:%s", k,
                                                 json_object_is_type(val, json_type_string)
                                                         ? json_object_get_string(val)
                                                         : "") < 0)
                                        return -ENOMEM;
                        }
                        strv_sort(pairs);
                        joined = strv_join(pairs, " ");
                        if (reterr)
                                *reterr = strdup_printf("must gather image %s validation failed map[%s]",
                                                        image, strempty(joined));
                        return -EINVAL;
                }
                if (!streq(op, "cnv") && !streq(op, "lso") && !streq(op, "ocs") && !streq(op, "odf") &&
                    !streq(op, "ocp")) {
                        if (reterr)
                                *reterr = strdup_printf("operator name %s validation failed", op);
                        return -EINVAL;
                }
        }
        return 0;
}

static int validate_proxy_url(const char *u, char **reterr)
{
        CURLU *h = curl_url();
        char *scheme = NULL, *host = NULL;
        int r = 0;

        if (!h)
                return -ENOMEM;
        if (strpbrk(u, " \t\n") ||
            curl_url_set(h, CURLUPART_URL, u, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
            curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
            curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK || isempty(host)) {
                if (reterr)
                        *reterr = strdup_printf("Proxy URL format is not valid: '%s'", u);
                r = -EINVAL;
        } else if (streq(scheme, "https")) {
                if (reterr)
                        *reterr = strdup_printf(
                                "The URL scheme must be http; https is currently not supported: '%s'", u);
                r = -EINVAL;
        } else if (!streq(scheme, "http")) {
                if (reterr)
                        *reterr = strdup_printf("The URL scheme must be http and specified in the URL: '%s'",
                                                u);
                r = -EINVAL;
        }
        curl_free(scheme);
        curl_free(host);
        curl_url_cleanup(h);
        return r;
}

static bool is_ip(const char *s)
{
        unsigned char buf[16];
        return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static bool is_cidr(const char *s)
{
        _cleanup_free_ char *ip = NULL;
        const char *slash = strchr(s, '/');
        unsigned bits;

        if (!slash)
                return false;
        ip = strndup(s, (size_t)(slash - s));
        if (!ip || safe_atou(slash + 1, &bits) < 0)
                return false;
        if (strchr(ip, ':'))
                return bits <= 128 && is_ip(ip);
        return bits <= 32 && is_ip(ip);
}

/* govalidator.IsDNSName */
static bool is_dns_name(const char *s)
{
        size_t n = strlen(s), label = 0;

        if (n == 0 || n > 255 || is_ip(s))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                             c == '_';
                if (c == '.') {
                        if (label == 0)
                                return i == n - 1 && i > 0 ? true : false;
                        label = 0;
                        continue;
                }
                if (label == 0 && !alnum)
                        return false;
                if (!alnum && c != '-')
                        return false;
                if (++label > 63)
                        return false;
        }
        return true;
}

static int validate_no_proxy(const char *v, char **reterr)
{
        _cleanup_strv_free_ char **l = NULL;
        size_t n;
        const char *p = v;

        if (streq(v, "*"))
                return 0;
        /* strings.Split keeps empty fields: count the commas */
        n = 1;
        for (const char *c = v; *c; c++)
                n += *c == ',';
        for (size_t i = 0; i < n; i++) {
                size_t len = strcspn(p, ",");
                _cleanup_free_ char *d = strndup(p, len);
                const char *s;
                if (!d)
                        return -ENOMEM;
                s = d[0] == '.' ? d + 1 : d;
                if (!is_ip(s) && !is_cidr(s) && !is_dns_name(s)) {
                        if (reterr)
                                *reterr = strdup_printf("NO Proxy format is not valid: '%s'. NO Proxy is a "
                                                        "comma-separated list of "
                                                        "destination domain names, domains, IP addresses or "
                                                        "other network CIDRs. A "
                                                        "domain can be prefaced with '.' to include all "
                                                        "subdomains of that domain. Use "
                                                        "'*' to bypass proxy for all destinations with "
                                                        "OpenShift 4.8 or later.",
                                                        v);
                        return -EINVAL;
                }
                p += len + (p[len] == ',');
        }
        return 0;
}

/* The characters of installerArgsValuesRegex: letters, digits,
 * @!#$%*()_ , the range '+'..'=' and /.,";':{}[] */
static bool installer_arg_char_ok(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               (c >= '+' && c <= '=') || (c && strchr("@!#$%*()_/.,\";':{}[]", c));
}

static int validate_installer_args(const char *json, char **reterr)
{
        _cleanup_(json_object_putp) json_object *a = NULL;
        _cleanup_free_ char *perr = NULL;

        if (json_parse(json, strlen(json), BUF_MAX_JSON_DOC, &a, &perr) < 0) {
                if (reterr)
                        *reterr = strdup_printf("invalid character in installer args: %s", strna(perr));
                return -EINVAL;
        }
        if (!json_object_is_type(a, json_type_array)) {
                if (reterr)
                        *reterr = strdup_printf("json: cannot unmarshal %s into Go value of type []string",
                                                json_go_kind_name(a));
                return -EINVAL;
        }
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *s;
                if (!json_object_is_type(e, json_type_string)) {
                        if (reterr)
                                *reterr = strdup_printf(
                                        "json: cannot unmarshal %s into Go value of type string",
                                        json_go_kind_name(e));
                        return -EINVAL;
                }
                s = json_object_get_string(e);
                if (s[0] == '-') {
                        bool ok = false;
                        for (size_t k = 0; k < ELEMENTSOF(installer_allowed_flags); k++)
                                ok = ok || streq(s, installer_allowed_flags[k]);
                        if (!ok) {
                                if (reterr)
                                        *reterr = strdup_printf(
                                                "found unexpected flag %s for installer - allowed flags are "
                                                "[--append-karg --delete-karg -n --copy-network "
                                                "--network-dir "
                                                "--save-partlabel --save-partindex --image-url "
                                                "--image-file]",
                                                s);
                                return -EINVAL;
                        }
                        continue;
                }
                for (const char *c = s; *c || c == s; c++)
                        if (!*c || !installer_arg_char_ok(*c)) {
                                if (reterr)
                                        *reterr = strdup_printf(
                                                "found unexpected chars in value %s for installer", s);
                                return -EINVAL;
                        }
        }
        return 0;
}

int install_request_parse(const char *json, InstallRequest *ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *perr = NULL;
        InstallRequest r = {};
        json_object *proxy;
        int q;

        q = json_parse(json, strlen(json), BUF_MAX_JSON_DOC, &o, &perr);
        if (q < 0) {
                if (reterr)
                        *reterr = strdup_printf("invalid install request: %s", strna(perr));
                return -EINVAL;
        }
        if (!json_object_is_type(o, json_type_object)) {
                if (reterr)
                        *reterr = strdup_printf(
                                "json: cannot unmarshal %s into Go value of type models.InstallCmdRequest",
                                json_go_kind_name(o));
                return -EINVAL;
        }
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                json_object *v = json_get(o, fields[i].name);
                if (v || json_object_object_get_ex(o, fields[i].name, NULL)) {
                        q = set_field(&r, &fields[i], v, reterr);
                        if (q < 0)
                                goto fail;
                }
        }
        proxy = json_get(o, "proxy");
        if (proxy && !json_object_is_type(proxy, json_type_null)) {
                static const char *const names[] = { "http_proxy", "https_proxy", "no_proxy" };
                char **targets[] = { &r.http_proxy, &r.https_proxy, &r.no_proxy };
                if (!json_object_is_type(proxy, json_type_object)) {
                        q = unmarshal_error(reterr, proxy, "proxy", "models.Proxy");
                        goto fail;
                }
                r.has_proxy = true;
                for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                        json_object *v = json_get(proxy, names[i]);
                        if (!v || json_object_is_type(v, json_type_null))
                                continue;
                        if (!json_object_is_type(v, json_type_string)) {
                                _cleanup_free_ char *fname = strdup_printf("proxy.%s", names[i]);
                                q = unmarshal_error(reterr, v, strna(fname), "string");
                                goto fail;
                        }
                        q = free_and_strdup(targets[i], json_object_get_string(v));
                        if (q < 0)
                                goto fail;
                }
        }

        q = validate_model(&r, reterr);
        if (q < 0)
                goto fail;
        if (!isempty(r.must_gather_image) && (q = validate_must_gather(r.must_gather_image, reterr)) < 0)
                goto fail;
        if (r.has_proxy) {
                if ((!isempty(r.http_proxy) && (q = validate_proxy_url(r.http_proxy, reterr)) < 0) ||
                    (!isempty(r.https_proxy) && (q = validate_proxy_url(r.https_proxy, reterr)) < 0) ||
                    (!isempty(r.no_proxy) && (q = validate_no_proxy(r.no_proxy, reterr)) < 0))
                        goto fail;
        }
        if (!isempty(r.installer_args) && (q = validate_installer_args(r.installer_args, reterr)) < 0)
                goto fail;
        if (!isempty(r.openshift_version) && !go_version_valid(r.openshift_version)) {
                if (reterr)
                        *reterr = strdup_printf("Failed to parse OCP version %s: Malformed version: %s",
                                                r.openshift_version, r.openshift_version);
                q = -EINVAL;
                goto fail;
        }
        *ret = r;
        return 0;
fail:
        install_request_done(&r);
        return q < 0 ? q : -EINVAL;
}

int install_request_check_disks(const InstallRequest *r, char **reterr)
{
        _cleanup_strv_free_ char **disks = strv_copy(r->disks_to_format);
        struct stat st;

        if (strv_extend(&disks, strempty(r->boot_device)) < 0)
                return -ENOMEM;
        STRV_FOREACH (d, disks) {
                if (!startswith(*d, "/dev/")) {
                        if (reterr)
                                *reterr = strdup_printf("disk %s should start of with /dev/", *d);
                        return -EINVAL;
                }
                if (stat(*d, &st) < 0) {
                        if (reterr)
                                *reterr = strdup_printf("disk %s was not found on the host", *d);
                        return -ENOENT;
                }
        }
        return 0;
}
