/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubeconfig and in-cluster configuration.
 *
 * YAML is read into a json-c tree (lib/yamlutil.h), which is then walked.
 * Plain scalars stay strings (true/false are read as booleans where a
 * boolean is expected), null and ~ become null.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "base64.h"
#include "cleanup.h"
#include "fileio.h"
#include "jsonutil.h"
#include "kube-config.h"
#include "redact.h"
#include "strutil.h"
#include "yamlutil.h"

#define KUBECONFIG_MAX (4u * 1024 * 1024)

static KubeExecConfig *kube_exec_config_free(KubeExecConfig *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeExecConfig *, kube_exec_config_free)

static KubeExecConfig *kube_exec_config_free(KubeExecConfig *e)
{
        if (!e)
                return NULL;
        free(e->api_version);
        free(e->command);
        strv_free(e->args);
        strv_free(e->env);
        free(e->interactive_mode);
        free(e);
        return NULL;
}

KubeConfig *kube_config_free(KubeConfig *c)
{
        if (!c)
                return NULL;
        free(c->source);
        free(c->context);
        free(c->cluster);
        free(c->user);
        free(c->server);
        free(c->tls_server_name);
        free(c->ca_file);
        free(c->ca_pem);
        free(c->client_cert_file);
        free(c->client_cert_pem);
        free(c->client_key_file);
        erase_and_free(c->client_key_pem);
        erase_and_free(c->token);
        free(c->token_file);
        kube_exec_config_free(c->exec);
        free(c->namespace);
        free(c);
        return NULL;
}

/* ---- helpers ---- */

static int kc_error(char **reterr, int r, const char *fmt, ...) _printf_(3, 4);
static int kc_error(char **reterr, int r, const char *fmt, ...)
{
        va_list ap;

        if (reterr && !*reterr) {
                va_start(ap, fmt);
                if (vasprintf(reterr, fmt, ap) < 0)
                        *reterr = NULL;
                va_end(ap);
        }
        return r;
}

/* A string member: absent or null gives NULL; another type is an error. */
static int kc_string(json_object *o, const char *key, const char *where, const char **ret, char **reterr)
{
        json_object *v = NULL;

        *ret = NULL;
        if (!o || !json_object_object_get_ex(o, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return kc_error(reterr, -EBADMSG, "%s: '%s' must be a string, got %s", where, key,
                                json_kind_name(v));
        *ret = json_object_get_string(v);
        if (isempty(*ret))
                *ret = NULL;
        return 0;
}

static int kc_bool(json_object *o, const char *key, const char *where, bool *ret, char **reterr)
{
        json_object *v = NULL;

        *ret = false;
        if (!o || !json_object_object_get_ex(o, key, &v) || !v)
                return 0;
        if (json_object_is_type(v, json_type_boolean)) {
                *ret = json_object_get_boolean(v);
                return 0;
        }
        if (json_object_is_type(v, json_type_string)) {
                if (parse_bool_go(json_object_get_string(v), ret) >= 0)
                        return 0;
        }
        return kc_error(reterr, -EBADMSG, "%s: '%s' must be true or false", where, key);
}

static char *path_resolve(const char *base_dir, const char *p)
{
        if (p[0] == '/' || !base_dir)
                return strdup(p);
        return strdup_printf("%s/%s", base_dir, p);
}

static char *dir_of(const char *path)
{
        _cleanup_free_ char *abs = NULL;
        const char *slash;

        if (path[0] == '/')
                abs = strdup(path);
        else {
                char cwd[PATH_MAX];

                if (!getcwd(cwd, sizeof(cwd)))
                        return NULL;
                abs = strdup_printf("%s/%s", cwd, path);
        }
        if (!abs)
                return NULL;
        slash = strrchr(abs, '/');
        if (slash == abs)
                return strdup("/");
        return strndup(abs, (size_t)(slash - abs));
}

/* Rewrites a relative path member to an absolute one. */
static int resolve_member(json_object *o, const char *key, const char *base_dir, bool only_with_slash)
{
        json_object *v = NULL;
        _cleanup_free_ char *p = NULL;
        const char *s;

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
            !json_object_is_type(v, json_type_string))
                return 0;
        s = json_object_get_string(v);
        if (isempty(s) || s[0] == '/' || !base_dir)
                return 0;
        if (only_with_slash && !strchr(s, '/'))
                return 0;
        p = path_resolve(base_dir, s);
        if (!p)
                return -ENOMEM;
        return json_add_string(o, key, p);
}

typedef struct KcMerged {
        json_object *clusters; /* name -> cluster body */
        json_object *users;
        json_object *contexts;
        char *current_context;
} KcMerged;

static void kc_merged_done(KcMerged *m)
{
        json_object_put(m->clusters);
        json_object_put(m->users);
        json_object_put(m->contexts);
        free(m->current_context);
}

static int kc_merge_list(json_object *root, const char *list, const char *body_key, const char *base_dir,
                         const char *source, json_object *into, char **reterr)
{
        json_object *a = NULL;

        if (!json_object_object_get_ex(root, list, &a) || !a)
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return kc_error(reterr, -EBADMSG, "%s: '%s' must be a list", source, list);
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i), *body = NULL;
                const char *name;
                int r;

                if (!json_object_is_type(e, json_type_object))
                        return kc_error(reterr, -EBADMSG, "%s: %s[%zu] must be a mapping", source, list, i);
                r = kc_string(e, "name", source, &name, reterr);
                if (r < 0)
                        return r;
                if (!name)
                        return kc_error(reterr, -EBADMSG, "%s: %s[%zu] has no name", source, list, i);
                if (!json_object_object_get_ex(e, body_key, &body) || !body)
                        body = NULL;
                else if (!json_object_is_type(body, json_type_object))
                        return kc_error(reterr, -EBADMSG, "%s: %s '%s': '%s' must be a mapping", source,
                                        list, name, body_key);
                if (json_object_object_get_ex(into, name, NULL))
                        continue; /* the first definition wins */
                if (body) {
                        if (streq(body_key, "cluster"))
                                r = resolve_member(body, "certificate-authority", base_dir, false);
                        else if (streq(body_key, "user")) {
                                json_object *exec = json_get(body, "exec");

                                r = resolve_member(body, "client-certificate", base_dir, false);
                                if (r >= 0)
                                        r = resolve_member(body, "client-key", base_dir, false);
                                if (r >= 0)
                                        r = resolve_member(body, "tokenFile", base_dir, false);
                                if (r >= 0)
                                        r = resolve_member(exec, "command", base_dir, true);
                        }
                        if (r < 0)
                                return r;
                }
                if (json_object_object_add(into, name,
                                           body ? json_object_get(body) : json_object_new_object()) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int kc_merge_doc(KcMerged *m, const char *data, size_t len, const char *base_dir, const char *source,
                        char **reterr)
{
        _cleanup_(json_object_putp) json_object *root = NULL;
        _cleanup_free_ char *yerr = NULL;
        const char *cur;
        int r;

        r = yaml_to_json(data, len, &root, &yerr);
        if (r < 0)
                return kc_error(reterr, r, "%s: %s", source, strna(yerr));
        if (!root)
                return 0;
        if (!json_object_is_type(root, json_type_object))
                return kc_error(reterr, -EBADMSG, "%s: not a kubeconfig (top level is not a mapping)",
                                source);

        r = kc_merge_list(root, "clusters", "cluster", base_dir, source, m->clusters, reterr);
        if (r < 0)
                return r;
        r = kc_merge_list(root, "users", "user", base_dir, source, m->users, reterr);
        if (r < 0)
                return r;
        r = kc_merge_list(root, "contexts", "context", base_dir, source, m->contexts, reterr);
        if (r < 0)
                return r;
        r = kc_string(root, "current-context", source, &cur, reterr);
        if (r < 0)
                return r;
        if (cur && !m->current_context) {
                m->current_context = strdup(cur);
                if (!m->current_context)
                        return -ENOMEM;
        }
        return 0;
}

static int kc_read_data_or_file(json_object *body, const char *data_key, const char *file_key,
                                const char *where, char **ret_pem, char **ret_file, char **reterr)
{
        const char *data, *file;
        int r;

        r = kc_string(body, data_key, where, &data, reterr);
        if (r < 0)
                return r;
        r = kc_string(body, file_key, where, &file, reterr);
        if (r < 0)
                return r;
        if (data) {
                r = base64_decode(data, " \t\r\n", ret_pem, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return kc_error(reterr, -EBADMSG, "%s: '%s' is not valid base64", where, data_key);
                return 0;
        }
        if (file) {
                *ret_file = strdup(file);
                if (!*ret_file)
                        return -ENOMEM;
                r = read_full_file(file, BUF_MAX_SMALL_FILE, ret_pem, NULL);
                if (r < 0)
                        return kc_error(reterr, r, "%s: cannot read %s %s: %s", where, file_key, file,
                                        strerror(-r));
        }
        return 0;
}

static int kc_exec(json_object *e, const char *where, KubeExecConfig **ret, char **reterr)
{
        _cleanup_(kube_exec_config_freep) KubeExecConfig *x = NULL;
        const char *s;
        json_object *a;
        int r;

        if (!json_object_is_type(e, json_type_object))
                return kc_error(reterr, -EBADMSG, "%s: 'exec' must be a mapping", where);
        x = calloc(1, sizeof(*x));
        if (!x)
                return -ENOMEM;
        r = kc_string(e, "apiVersion", where, &s, reterr);
        if (r < 0)
                return r;
        if (!s)
                return kc_error(reterr, -EBADMSG, "%s: exec: 'apiVersion' is missing", where);
        if (!streq(s, "client.authentication.k8s.io/v1") &&
            !streq(s, "client.authentication.k8s.io/v1beta1"))
                return kc_error(reterr, -EOPNOTSUPP, "%s: exec: apiVersion %s is not supported", where, s);
        x->api_version = strdup(s);
        r = kc_string(e, "command", where, &s, reterr);
        if (r < 0)
                return r;
        if (!s)
                return kc_error(reterr, -EBADMSG, "%s: exec: 'command' is missing", where);
        x->command = strdup(s);
        r = kc_string(e, "interactiveMode", where, &s, reterr);
        if (r < 0)
                return r;
        x->interactive_mode = s ? strdup(s) : NULL;
        r = kc_bool(e, "provideClusterInfo", where, &x->provide_cluster_info, reterr);
        if (r < 0)
                return r;
        if (!x->api_version || !x->command || (s && !x->interactive_mode))
                return -ENOMEM;

        a = json_get(e, "args");
        if (a) {
                if (!json_object_is_type(a, json_type_array))
                        return kc_error(reterr, -EBADMSG, "%s: exec: 'args' must be a list", where);
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        json_object *v = json_object_array_get_idx(a, i);

                        if (!json_object_is_type(v, json_type_string))
                                return kc_error(reterr, -EBADMSG, "%s: exec: args[%zu] must be a string",
                                                where, i);
                        if (strv_extend(&x->args, json_object_get_string(v)) < 0)
                                return -ENOMEM;
                }
        }
        a = json_get(e, "env");
        if (a) {
                if (!json_object_is_type(a, json_type_array))
                        return kc_error(reterr, -EBADMSG, "%s: exec: 'env' must be a list", where);
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        json_object *v = json_object_array_get_idx(a, i);
                        const char *name, *value;

                        if (!json_object_is_type(v, json_type_object))
                                return kc_error(reterr, -EBADMSG, "%s: exec: env[%zu] must be a mapping",
                                                where, i);
                        r = kc_string(v, "name", where, &name, reterr);
                        if (r < 0)
                                return r;
                        r = kc_string(v, "value", where, &value, reterr);
                        if (r < 0)
                                return r;
                        if (!name || strchr(name, '='))
                                return kc_error(reterr, -EBADMSG, "%s: exec: env[%zu] has no valid name",
                                                where, i);
                        if (strv_extendf(&x->env, "%s=%s", name, strempty(value)) < 0)
                                return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(x);
        return 0;
}

static int kc_build(KcMerged *m, const char *source, const char *context, KubeConfig **ret, char **reterr)
{
        _cleanup_(kube_config_freep) KubeConfig *c = NULL;
        _cleanup_free_ char *where = NULL;
        json_object *ctx = NULL, *cluster = NULL, *user = NULL, *v;
        const char *name = context ?: m->current_context, *cluster_name, *user_name, *ns, *s;
        int r;

        if (!name)
                return kc_error(reterr, -ENOENT, "%s: no context given and no current-context set", source);
        if (!json_object_object_get_ex(m->contexts, name, &ctx))
                return kc_error(reterr, -ENOENT, "%s: context '%s' not found", source, name);

        where = strdup_printf("%s: context '%s'", source, name);
        if (!where)
                return -ENOMEM;
        r = kc_string(ctx, "cluster", where, &cluster_name, reterr);
        if (r < 0)
                return r;
        r = kc_string(ctx, "user", where, &user_name, reterr);
        if (r < 0)
                return r;
        r = kc_string(ctx, "namespace", where, &ns, reterr);
        if (r < 0)
                return r;
        if (!cluster_name)
                return kc_error(reterr, -EBADMSG, "%s: no cluster", where);
        if (!json_object_object_get_ex(m->clusters, cluster_name, &cluster))
                return kc_error(reterr, -ENOENT, "%s: cluster '%s' not found", where, cluster_name);
        if (user_name && !json_object_object_get_ex(m->users, user_name, &user))
                return kc_error(reterr, -ENOENT, "%s: user '%s' not found", where, user_name);

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->source = strdup(source);
        c->context = strdup(name);
        c->cluster = strdup(cluster_name);
        c->user = user_name ? strdup(user_name) : NULL;
        c->namespace = strdup(ns ?: "default");
        if (!c->source || !c->context || !c->cluster || !c->namespace || (user_name && !c->user))
                return -ENOMEM;

        free(where);
        where = strdup_printf("%s: cluster '%s'", source, cluster_name);
        if (!where)
                return -ENOMEM;
        r = kc_string(cluster, "server", where, &s, reterr);
        if (r < 0)
                return r;
        if (!s)
                return kc_error(reterr, -EBADMSG, "%s: no server", where);
        if (!startswith(s, "https://") && !startswith(s, "http://"))
                return kc_error(reterr, -EBADMSG, "%s: server '%s' is not an http(s) URL", where, s);
        c->server = strdup(s);
        if (!c->server)
                return -ENOMEM;
        while (endswith(c->server, "/") && strlen(c->server) > 8)
                c->server[strlen(c->server) - 1] = 0;
        r = kc_string(cluster, "tls-server-name", where, &s, reterr);
        if (r < 0)
                return r;
        if (s && !(c->tls_server_name = strdup(s)))
                return -ENOMEM;
        r = kc_bool(cluster, "insecure-skip-tls-verify", where, &c->insecure, reterr);
        if (r < 0)
                return r;
        r = kc_read_data_or_file(cluster, "certificate-authority-data", "certificate-authority", where,
                                 &c->ca_pem, &c->ca_file, reterr);
        if (r < 0)
                return r;
        if (c->insecure && c->ca_pem)
                return kc_error(
                        reterr, -EBADMSG,
                        "%s: specifying a root certificates file with the insecure flag is not allowed",
                        where);

        if (user) {
                static const char *const unsupported[] = { "auth-provider", "username", "password", "as",
                                                           "as-groups",     "as-uid" };

                free(where);
                where = strdup_printf("%s: user '%s'", source, user_name);
                if (!where)
                        return -ENOMEM;
                for (size_t i = 0; i < ELEMENTSOF(unsupported); i++) {
                        if (json_get(user, unsupported[i]))
                                return kc_error(reterr, -EOPNOTSUPP, "%s: '%s' is not supported", where,
                                                unsupported[i]);
                }
                r = kc_read_data_or_file(user, "client-certificate-data", "client-certificate", where,
                                         &c->client_cert_pem, &c->client_cert_file, reterr);
                if (r < 0)
                        return r;
                r = kc_read_data_or_file(user, "client-key-data", "client-key", where, &c->client_key_pem,
                                         &c->client_key_file, reterr);
                if (r < 0)
                        return r;
                if (!!c->client_cert_pem != !!c->client_key_pem)
                        return kc_error(reterr, -EBADMSG,
                                        "%s: a client certificate needs a client key and back", where);
                r = kc_string(user, "token", where, &s, reterr);
                if (r < 0)
                        return r;
                if (s) {
                        c->token = strdup(s);
                        if (!c->token)
                                return -ENOMEM;
                        (void)redact_register_secret(c->token);
                }
                r = kc_string(user, "tokenFile", where, &s, reterr);
                if (r < 0)
                        return r;
                if (s && !(c->token_file = strdup(s)))
                        return -ENOMEM;
                v = json_get(user, "exec");
                if (v) {
                        r = kc_exec(v, where, &c->exec, reterr);
                        if (r < 0)
                                return r;
                }
        }
        *ret = TAKE_PTR(c);
        return 0;
}

static int kc_merged_init(KcMerged *m)
{
        m->clusters = json_object_new_object();
        m->users = json_object_new_object();
        m->contexts = json_object_new_object();
        return m->clusters && m->users && m->contexts ? 0 : -ENOMEM;
}

int kube_config_parse(const char *data, size_t len, const char *base_dir, const char *context,
                      KubeConfig **ret, char **reterr)
{
        _cleanup_(kc_merged_done) KcMerged m = {};
        int r;

        r = kc_merged_init(&m);
        if (r < 0)
                return r;
        r = kc_merge_doc(&m, data, len, base_dir, "kubeconfig", reterr);
        if (r < 0)
                return r;
        return kc_build(&m, "kubeconfig", context, ret, reterr);
}

int kube_config_load(const char *path, const char *context, KubeConfig **ret, char **reterr)
{
        _cleanup_(kc_merged_done) KcMerged m = {};
        _cleanup_strv_free_ char **files = NULL;
        _cleanup_free_ char *home_config = NULL;
        bool explicit = path, any = false;
        int r;

        if (!path)
                path = getenv("KUBECONFIG");
        if (isempty(path)) {
                const char *home = getenv("HOME");

                if (isempty(home))
                        return kc_error(reterr, -ENOENT,
                                        "no kubeconfig: neither KUBECONFIG nor HOME is set");
                home_config = strdup_printf("%s/.kube/config", home);
                if (!home_config)
                        return -ENOMEM;
                path = home_config;
                explicit = true;
        }
        r = strv_split(path, ":", &files);
        if (r < 0)
                return r;
        if (strv_length(files) > 1)
                explicit = false;

        r = kc_merged_init(&m);
        if (r < 0)
                return r;
        STRV_FOREACH (f, files) {
                _cleanup_free_ char *data = NULL, *dir = NULL;
                size_t len;

                r = read_full_file(*f, KUBECONFIG_MAX, &data, &len);
                if (r == -ENOENT && !explicit)
                        continue;
                if (r < 0)
                        return kc_error(reterr, r, "cannot read kubeconfig %s: %s", *f, strerror(-r));
                dir = dir_of(*f);
                if (!dir)
                        return -ENOMEM;
                r = kc_merge_doc(&m, data, len, dir, *f, reterr);
                if (r < 0)
                        return r;
                any = true;
        }
        if (!any)
                return kc_error(reterr, -ENOENT, "no kubeconfig found in %s", path);
        return kc_build(&m, path, context, ret, reterr);
}

int kube_config_in_cluster(const char *sa_dir, KubeConfig **ret, char **reterr)
{
        _cleanup_(kube_config_freep) KubeConfig *c = NULL;
        _cleanup_free_ char *token = NULL, *ns = NULL;
        const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
        unsigned p;
        int r;

        if (isempty(host) || isempty(port))
                return kc_error(
                        reterr, -ENXIO,
                        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                        "must be set");
        if (safe_atou(port, &p) < 0 || p == 0 || p > 65535)
                return kc_error(reterr, -EINVAL, "KUBERNETES_SERVICE_PORT=%s is not a port", port);
        if (strpbrk(host, "/@?# "))
                return kc_error(reterr, -EINVAL, "KUBERNETES_SERVICE_HOST=%s is not a host", host);
        sa_dir = sa_dir ?: KUBE_SERVICE_ACCOUNT_DIR;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->in_cluster = true;
        c->source = strdup("in-cluster");
        c->server = strchr(host, ':') ? strdup_printf("https://[%s]:%u", host, p)
                                      : strdup_printf("https://%s:%u", host, p);
        c->token_file = strdup_printf("%s/token", sa_dir);
        c->ca_file = strdup_printf("%s/ca.crt", sa_dir);
        if (!c->source || !c->server || !c->token_file || !c->ca_file)
                return -ENOMEM;

        r = read_full_file(c->token_file, BUF_MAX_SMALL_FILE, &token, NULL);
        if (r < 0)
                return kc_error(reterr, r, "in-cluster: cannot read the service-account token %s: %s",
                                c->token_file, strerror(-r));
        erase_and_free(TAKE_PTR(token));
        r = read_full_file(c->ca_file, BUF_MAX_SMALL_FILE, &c->ca_pem, NULL);
        if (r < 0)
                return kc_error(reterr, r, "in-cluster: cannot read the CA %s: %s", c->ca_file,
                                strerror(-r));

        {
                _cleanup_free_ char *nsf = strdup_printf("%s/namespace", sa_dir);

                if (!nsf)
                        return -ENOMEM;
                r = read_one_line_file(nsf, &ns);
                if (r < 0 && r != -ENOENT)
                        return kc_error(reterr, r, "in-cluster: cannot read %s: %s", nsf, strerror(-r));
        }
        c->namespace = strdup(!isempty(ns) ? ns : "default");
        if (!c->namespace)
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

int kube_config_load_default(const char *path, const char *context, KubeConfig **ret, char **reterr)
{
        if (!path && isempty(getenv("KUBECONFIG")) && !isempty(getenv("KUBERNETES_SERVICE_HOST")))
                return kube_config_in_cluster(NULL, ret, reterr);
        return kube_config_load(path, context, ret, reterr);
}

static int dup_field(char **dst, const char *src)
{
        if (!src)
                return 0;
        *dst = strdup(src);
        return *dst ? 0 : -ENOMEM;
}

int kube_config_copy(const KubeConfig *c, KubeConfig **ret)
{
        _cleanup_(kube_config_freep) KubeConfig *n = NULL;
        int r = 0;

        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->insecure = c->insecure;
        n->in_cluster = c->in_cluster;
        r |= dup_field(&n->source, c->source);
        r |= dup_field(&n->context, c->context);
        r |= dup_field(&n->cluster, c->cluster);
        r |= dup_field(&n->user, c->user);
        r |= dup_field(&n->server, c->server);
        r |= dup_field(&n->tls_server_name, c->tls_server_name);
        r |= dup_field(&n->ca_file, c->ca_file);
        r |= dup_field(&n->ca_pem, c->ca_pem);
        r |= dup_field(&n->client_cert_file, c->client_cert_file);
        r |= dup_field(&n->client_cert_pem, c->client_cert_pem);
        r |= dup_field(&n->client_key_file, c->client_key_file);
        r |= dup_field(&n->client_key_pem, c->client_key_pem);
        r |= dup_field(&n->token, c->token);
        r |= dup_field(&n->token_file, c->token_file);
        r |= dup_field(&n->namespace, c->namespace);
        if (r < 0)
                return -ENOMEM;
        if (c->exec) {
                n->exec = calloc(1, sizeof(*n->exec));
                if (!n->exec)
                        return -ENOMEM;
                n->exec->provide_cluster_info = c->exec->provide_cluster_info;
                r |= dup_field(&n->exec->api_version, c->exec->api_version);
                r |= dup_field(&n->exec->command, c->exec->command);
                r |= dup_field(&n->exec->interactive_mode, c->exec->interactive_mode);
                if (r < 0)
                        return -ENOMEM;
                if (c->exec->args && !(n->exec->args = strv_copy(c->exec->args)))
                        return -ENOMEM;
                if (c->exec->env && !(n->exec->env = strv_copy(c->exec->env)))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(n);
        return 0;
}
