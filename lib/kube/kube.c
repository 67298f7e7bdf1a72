/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Kubernetes client: credentials, rate limit, requests, discovery,
 * verbs and watches. Errors are in kube-status.c, the watch stream decoder
 * in kube-watch-decoder.c. See kube.h.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "base64.h"
#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "http.h"
#include "jsonutil.h"
#include "kube.h"
#include "kube-private.h"
#include "redact.h"
#include "spawn.h"
#include "strutil.h"
#include "version.h"

#define KUBE_DEFAULT_QPS 5.0
#define KUBE_DEFAULT_BURST 10
#define KUBE_DEFAULT_TIMEOUT (60 * USEC_PER_SEC)
#define KUBE_LIST_PAGE 500
#define KUBE_EXEC_TIMEOUT (60 * USEC_PER_SEC)

const KubeResource kube_resource_namespaces = KUBE_RESOURCE("", "v1", "namespaces", "Namespace", false);
const KubeResource kube_resource_pods = KUBE_RESOURCE("", "v1", "pods", "Pod", true);
const KubeResource kube_resource_nodes = KUBE_RESOURCE("", "v1", "nodes", "Node", false);
const KubeResource kube_resource_secrets = KUBE_RESOURCE("", "v1", "secrets", "Secret", true);
const KubeResource kube_resource_configmaps = KUBE_RESOURCE("", "v1", "configmaps", "ConfigMap", true);
const KubeResource kube_resource_events = KUBE_RESOURCE("", "v1", "events", "Event", true);
const KubeResource kube_resource_services = KUBE_RESOURCE("", "v1", "services", "Service", true);
const KubeResource kube_resource_serviceaccounts =
        KUBE_RESOURCE("", "v1", "serviceaccounts", "ServiceAccount", true);
const KubeResource kube_resource_leases =
        KUBE_RESOURCE("coordination.k8s.io", "v1", "leases", "Lease", true);
const KubeResource kube_resource_csrs = KUBE_RESOURCE(
        "certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", false);
const KubeResource kube_resource_crds = KUBE_RESOURCE(
        "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false);

/* ---- addressing ---- */

static int buf_add_segment(Buf *b, const char *seg)
{
        _cleanup_free_ char *e = http_escape(seg);

        if (!e)
                return -ENOMEM;
        if (buf_append(b, "/", 1) < 0 || buf_append(b, e, strlen(e)) < 0)
                return -ENOMEM;
        return 0;
}

char *kube_resource_path(const KubeResource *r, const char *ns, const char *name, const char *subresource)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_SMALL_FILE);
        char *ret = NULL;
        const char *p;

        if (isempty(r->group))
                p = "/api";
        else
                p = "/apis";
        if (buf_append_str(&b, p) < 0)
                return NULL;
        if (!isempty(r->group) && buf_add_segment(&b, r->group) < 0)
                return NULL;
        if (buf_add_segment(&b, r->version) < 0)
                return NULL;
        if (r->namespaced && !isempty(ns)) {
                if (buf_add_segment(&b, "namespaces") < 0 || buf_add_segment(&b, ns) < 0)
                        return NULL;
        }
        if (buf_add_segment(&b, r->resource) < 0)
                return NULL;
        if (name) {
                if (buf_add_segment(&b, name) < 0)
                        return NULL;
                if (subresource && buf_add_segment(&b, subresource) < 0)
                        return NULL;
        }
        if (buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}

char *kube_resource_api_version(const KubeResource *r)
{
        if (isempty(r->group))
                return strdup(r->version);
        return strdup_printf("%s/%s", r->group, r->version);
}

/* ---- client ---- */

typedef struct DiscoveryEntry {
        KubeResource res;
        const char *singular;
        json_object *short_names; /* array or NULL */
} DiscoveryEntry;

struct KubeClient {
        pthread_mutex_t lock; /* everything below but http's own requests */
        KubeConfig *cfg;
        KubeClientOptions opts;
        char *user_agent;
        char *field_manager;

        HttpClient *http;
        HttpClient **retired; /* replaced clients (exec certificates), freed at the end */
        size_t n_retired;

        /* credentials */
        char *token; /* the bearer token in use */
        struct stat token_stat; /* of token_file when read */
        bool token_read;
        char *exec_cert_pem;
        char *exec_key_pem;
        time_t exec_expiry; /* 0: none */
        bool exec_valid;

        /* rate limit */
        double tokens;
        usec_t last_fill;

        /* discovery, under its own lock (its requests take the one above) */
        pthread_mutex_t dlock;
        json_object *discovery_docs; /* every document fetched, kept: resources point into them */
        DiscoveryEntry *entries;
        size_t n_entries;
        bool discovery_valid;
};

static int http_for(KubeClient *c, const char *cert, const char *key, usec_t total_timeout, HttpClient **ret,
                    char **reterr)
{
        HttpClientOptions o = {
                .base_url = c->cfg->server,
                .ca_pem = c->cfg->ca_pem,
                .ca_file = c->cfg->ca_pem ? NULL : c->cfg->ca_file,
                .ca_replace_system = c->cfg->ca_pem || c->cfg->ca_file,
                .client_cert_pem = cert,
                .client_key_pem = key,
                .insecure = c->cfg->insecure,
                .user_agent = c->user_agent,
                .connect_timeout = c->opts.connect_timeout,
                .total_timeout = total_timeout,
                .retry = HTTP_RETRY_NONE,
        };

        return http_client_new(&o, ret, reterr);
}

static void client_certs(KubeClient *c, const char **cert, const char **key)
{
        if (c->exec_cert_pem) {
                *cert = c->exec_cert_pem;
                *key = c->exec_key_pem;
        } else {
                *cert = c->cfg->client_cert_pem;
                *key = c->cfg->client_key_pem;
        }
}

int kube_client_new(const KubeConfig *cfg, const KubeClientOptions *o, KubeClient **ret, char **reterr)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        const char *cert, *key;
        int r;

        if (cfg->tls_server_name) {
                if (reterr)
                        *reterr = strdup_printf("%s: tls-server-name is not supported", strna(cfg->source));
                return -EOPNOTSUPP;
        }
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        pthread_mutex_init(&c->dlock, NULL);
        r = kube_config_copy(cfg, &c->cfg);
        if (r < 0)
                return r;
        if (o)
                c->opts = *o;
        if (c->opts.qps == 0)
                c->opts.qps = KUBE_DEFAULT_QPS;
        if (c->opts.burst == 0)
                c->opts.burst = KUBE_DEFAULT_BURST;
        if (c->opts.timeout == 0)
                c->opts.timeout = KUBE_DEFAULT_TIMEOUT;
        c->user_agent =
                o && o->user_agent ? strdup(o->user_agent) : strdup_printf("cradle/%s", cradle_version());
        c->field_manager = o && o->field_manager ? strdup(o->field_manager) : NULL;
        if (!c->user_agent || (o && o->field_manager && !c->field_manager))
                return -ENOMEM;
        c->opts.user_agent = NULL;
        c->opts.field_manager = NULL;
        c->tokens = c->opts.burst;
        c->last_fill = now_usec(CLOCK_MONOTONIC);
        if (c->cfg->token) {
                c->token = strdup(c->cfg->token);
                if (!c->token)
                        return -ENOMEM;
                (void)redact_register_secret(c->token);
        }
        client_certs(c, &cert, &key);
        r = http_for(c, cert, key, c->opts.timeout, &c->http, reterr);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

KubeClient *kube_client_free(KubeClient *c)
{
        if (!c)
                return NULL;
        http_client_free(c->http);
        for (size_t i = 0; i < c->n_retired; i++)
                http_client_free(c->retired[i]);
        free(c->retired);
        kube_config_free(c->cfg);
        free(c->user_agent);
        free(c->field_manager);
        erase_and_free(c->token);
        free(c->exec_cert_pem);
        erase_and_free(c->exec_key_pem);
        json_object_put(c->discovery_docs);
        free(c->entries);
        pthread_mutex_destroy(&c->lock);
        pthread_mutex_destroy(&c->dlock);
        free(c);
        return NULL;
}

int kube_client_new_from_kubeconfig(const char *path, const char *context, KubeClient **ret, char **reterr)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        int r;

        r = kube_config_load(path, context, &cfg, reterr);
        if (r < 0)
                return r;
        return kube_client_new(cfg, NULL, ret, reterr);
}

int kube_client_new_in_cluster(const char *sa_dir, KubeClient **ret, char **reterr)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        int r;

        r = kube_config_in_cluster(sa_dir, &cfg, reterr);
        if (r < 0)
                return r;
        return kube_client_new(cfg, NULL, ret, reterr);
}

int kube_client_new_default(const char *path, const char *context, KubeClient **ret, char **reterr)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        int r;

        r = kube_config_load_default(path, context, &cfg, reterr);
        if (r < 0)
                return r;
        return kube_client_new(cfg, NULL, ret, reterr);
}

const KubeConfig *kube_client_config(const KubeClient *c)
{
        return c->cfg;
}

const char *kube_client_namespace(const KubeClient *c)
{
        return c->cfg->namespace ?: "default";
}

/* ---- rate limit ---- */

static int rate_limit_wait(KubeClient *c)
{
        usec_t now, wait = 0;

        if (c->opts.qps < 0)
                return 0;
        pthread_mutex_lock(&c->lock);
        now = now_usec(CLOCK_MONOTONIC);
        c->tokens += (double)(now - c->last_fill) / (double)USEC_PER_SEC * c->opts.qps;
        if (c->tokens > c->opts.burst)
                c->tokens = c->opts.burst;
        c->last_fill = now;
        c->tokens -= 1.0; /* reserve, possibly into debt */
        if (c->tokens < 0)
                wait = (usec_t)(-c->tokens / c->opts.qps * (double)USEC_PER_SEC);
        pthread_mutex_unlock(&c->lock);
        return wait > 0 ? sleep_usec(wait) : 0;
}

/* ---- credentials ---- */

static int parse_rfc3339(const char *s, time_t *ret)
{
        struct tm tm = {};
        const char *p;
        long off = 0;

        p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        if (!p)
                return -EINVAL;
        if (*p == '.') {
                p++;
                while (*p >= '0' && *p <= '9')
                        p++;
        }
        if (*p == 'Z' || *p == 'z')
                p++;
        else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
                int h = (p[1] - '0') * 10 + (p[2] - '0'), m = (p[4] - '0') * 10 + (p[5] - '0');

                off = (h * 60 + m) * 60 * (*p == '-' ? -1 : 1);
                p += 6;
        } else
                return -EINVAL;
        if (*p)
                return -EINVAL;
        *ret = timegm(&tm) - off;
        return 0;
}

/* Runs the exec plugin; called with the lock held. */
static int exec_refresh(KubeClient *c, KubeStatus *err)
{
        const KubeExecConfig *x = c->cfg->exec;
        _cleanup_(json_object_putp) json_object *info = NULL, *spec = NULL, *out = NULL;
        _cleanup_spawn_result_ SpawnResult res = {};
        _cleanup_strv_free_ char **argv = NULL, **env = NULL;
        _cleanup_free_ char *info_s = NULL, *perr = NULL;
        json_object *st;
        const char *token, *cert, *key, *exp, *av;
        time_t expiry = 0;
        int r;

        if (strv_extend(&argv, x->command) < 0)
                return -ENOMEM;
        STRV_FOREACH (a, x->args)
                if (strv_extend(&argv, *a) < 0)
                        return -ENOMEM;

        info = json_new_object();
        spec = json_new_object();
        if (!info || !spec)
                return -ENOMEM;
        if (json_add_string(info, "kind", "ExecCredential") < 0 ||
            json_add_string(info, "apiVersion", x->api_version) < 0 ||
            json_add_bool(spec, "interactive", false) < 0)
                return -ENOMEM;
        if (x->provide_cluster_info) {
                _cleanup_(json_object_putp) json_object *cl = json_new_object();
                _cleanup_free_ char *ca = NULL;

                if (!cl || json_add_string(cl, "server", c->cfg->server) < 0)
                        return -ENOMEM;
                if (c->cfg->ca_pem) {
                        ca = base64_encode(c->cfg->ca_pem, strlen(c->cfg->ca_pem));
                        if (!ca || json_add_string(cl, "certificate-authority-data", ca) < 0)
                                return -ENOMEM;
                }
                if (json_add_bool_true(cl, "insecure-skip-tls-verify", c->cfg->insecure) < 0 ||
                    json_add(spec, "cluster", TAKE_PTR(cl)) < 0)
                        return -ENOMEM;
        }
        if (json_add(info, "spec", TAKE_PTR(spec)) < 0)
                return -ENOMEM;
        info_s = json_to_string(info, 0);
        if (!info_s || strv_extendf(&env, "KUBERNETES_EXEC_INFO=%s", info_s) < 0)
                return -ENOMEM;
        STRV_FOREACH (e, x->env)
                if (strv_extend(&env, *e) < 0)
                        return -ENOMEM;

        r = spawn_run(&(SpawnOptions){ .argv = argv, .env_extra = env, .timeout = KUBE_EXEC_TIMEOUT }, &res);
        if (r < 0)
                return kube_status_local(err, r, "exec plugin %s: cannot run it: %s", x->command,
                                         strerror(-r));
        if (res.exit_status != 0) {
                _cleanup_free_ char *tail = spawn_output_tail(res.err, 512);
                _cleanup_free_ char *clean = tail ? redact_known_secrets(tail) : NULL;

                return kube_status_local(err, -EKEYREJECTED, "exec plugin %s failed (status %d): %s",
                                         x->command, res.exit_status, strna(clean));
        }
        r = json_parse(res.out, res.out_len, BUF_MAX_SMALL_FILE, &out, &perr);
        if (r < 0)
                return kube_status_local(err, -EBADMSG,
                                         "exec plugin %s: output is not an ExecCredential: %s", x->command,
                                         strna(perr));
        av = json_get_string(out, "apiVersion");
        if (!streq_ptr(json_get_string(out, "kind"), "ExecCredential") || !streq_ptr(av, x->api_version))
                return kube_status_local(err, -EBADMSG,
                                         "exec plugin %s: output is not an ExecCredential of %s (got %s)",
                                         x->command, x->api_version, strna(av));
        st = json_get(out, "status");
        token = json_get_string(st, "token");
        cert = json_get_string(st, "clientCertificateData");
        key = json_get_string(st, "clientKeyData");
        exp = json_get_string(st, "expirationTimestamp");
        if (isempty(token) && (isempty(cert) || isempty(key)))
                return kube_status_local(
                        err, -EBADMSG,
                        "exec plugin %s: status has neither a token nor a client certificate and key",
                        x->command);
        if (!isempty(cert) != !isempty(key))
                return kube_status_local(err, -EBADMSG, "exec plugin %s: a client certificate needs a key",
                                         x->command);
        if (!isempty(exp) && parse_rfc3339(exp, &expiry) < 0)
                return kube_status_local(err, -EBADMSG, "exec plugin %s: bad expirationTimestamp '%s'",
                                         x->command, exp);

        erase_and_free(TAKE_PTR(c->token));
        if (!isempty(token)) {
                c->token = strdup(token);
                if (!c->token)
                        return -ENOMEM;
                (void)redact_register_secret(c->token);
        }
        if (!streq_ptr(cert, c->exec_cert_pem) || !streq_ptr(key, c->exec_key_pem)) {
                _cleanup_(http_client_freep) HttpClient *h = NULL;
                _cleanup_free_ char *herr = NULL;
                HttpClient **n;

                free(c->exec_cert_pem);
                erase_and_free(c->exec_key_pem);
                c->exec_cert_pem = isempty(cert) ? NULL : strdup(cert);
                c->exec_key_pem = isempty(key) ? NULL : strdup(key);
                if (!isempty(cert) && (!c->exec_cert_pem || !c->exec_key_pem))
                        return -ENOMEM;
                if (c->exec_key_pem)
                        (void)redact_register_secret(c->exec_key_pem);
                r = http_for(c, c->exec_cert_pem ?: c->cfg->client_cert_pem,
                             c->exec_key_pem ?: c->cfg->client_key_pem, c->opts.timeout, &h, &herr);
                if (r < 0)
                        return kube_status_local(err, r, "exec plugin %s: %s", x->command, strna(herr));
                n = reallocarray(c->retired, c->n_retired + 1, sizeof(*n));
                if (!n)
                        return -ENOMEM;
                c->retired = n;
                c->retired[c->n_retired++] = c->http;
                c->http = TAKE_PTR(h);
        }
        c->exec_expiry = expiry;
        c->exec_valid = true;
        return 0;
}

/* Brings the credentials up to date; called with the lock held. */
static int creds_update(KubeClient *c, bool force, KubeStatus *err)
{
        int r;

        if (c->cfg->exec) {
                if (force || !c->exec_valid || (c->exec_expiry > 0 && time(NULL) >= c->exec_expiry))
                        return exec_refresh(c, err);
                return 0;
        }
        if (c->cfg->token_file) {
                _cleanup_free_ char *t = NULL;
                struct stat st;

                if (stat(c->cfg->token_file, &st) < 0) {
                        if (c->token_read) /* keep the last good token */
                                return 0;
                        return kube_status_local(err, -errno, "cannot read the token file %s: %m",
                                                 c->cfg->token_file);
                }
                if (!force && c->token_read && st.st_ino == c->token_stat.st_ino &&
                    st.st_size == c->token_stat.st_size &&
                    st.st_mtim.tv_sec == c->token_stat.st_mtim.tv_sec &&
                    st.st_mtim.tv_nsec == c->token_stat.st_mtim.tv_nsec)
                        return 0;
                r = read_full_file(c->cfg->token_file, BUF_MAX_SMALL_FILE, &t, NULL);
                if (r < 0) {
                        if (c->token_read)
                                return 0;
                        return kube_status_local(err, r, "cannot read the token file %s: %s",
                                                 c->cfg->token_file, strerror(-r));
                }
                strstrip(t);
                if (isempty(t)) {
                        erase_and_free(TAKE_PTR(t));
                        if (c->token_read)
                                return 0;
                        return kube_status_local(err, -EKEYREJECTED, "the token file %s is empty",
                                                 c->cfg->token_file);
                }
                (void)redact_register_secret(t);
                erase_and_free(c->token);
                c->token = TAKE_PTR(t);
                c->token_stat = st;
                c->token_read = true;
        }
        return 0;
}

static bool creds_refreshable(KubeClient *c)
{
        return c->cfg->exec || c->cfg->token_file;
}

/* The Authorization header line and the HttpClient to use, with the lock
 * held only while reading them. */
static int creds_get(KubeClient *c, bool force, char **ret_header, HttpClient **ret_http, KubeStatus *err)
{
        _cleanup_free_ char *h = NULL;
        int r;

        pthread_mutex_lock(&c->lock);
        r = creds_update(c, force, err);
        if (r >= 0 && c->token) {
                h = strdup_printf("Authorization: Bearer %s", c->token);
                if (!h)
                        r = -ENOMEM;
        }
        *ret_http = c->http;
        pthread_mutex_unlock(&c->lock);
        if (r < 0) {
                erase_and_free(TAKE_PTR(h));
                return r;
        }
        *ret_header = TAKE_PTR(h);
        return 0;
}

/* ---- requests ---- */

typedef struct KubeCall {
        const char *method;
        const char *path;
        const char *content_type;
        const char *body;
        size_t body_len;
        HttpDataCallback on_data;
        void *userdata;
        HttpClient *http; /* a dedicated client (watches), NULL: the pool */
        bool no_auth_retry;
        bool force_refresh; /* fetch new credentials first */
} KubeCall;

static int kube_call(KubeClient *c, const KubeCall *k, HttpResponse *ret, KubeStatus *err)
{
        bool refreshed = k->force_refresh;
        unsigned retries = 0;
        int r;

        for (;;) {
                _cleanup_http_response_ HttpResponse resp = {};
                _cleanup_free_ char *herr = NULL;
                _cleanup_erase_ char *auth = NULL;
                HttpClient *h;
                const char *ra;
                char *headers[3] = {};
                size_t nh = 0;

                r = rate_limit_wait(c);
                if (r < 0)
                        return kube_status_transport(err, r, "stop requested");
                r = creds_get(c, refreshed, &auth, &h, err);
                if (r < 0)
                        return r;
                if (k->http)
                        h = k->http;
                if (auth)
                        headers[nh++] = auth;
                if (!k->on_data)
                        headers[nh++] = (char *)"Accept: application/json, */*";

                r = http_request(h,
                                 &(HttpRequest){ .method = k->method,
                                                 .path = k->path,
                                                 .headers = headers,
                                                 .body = k->body,
                                                 .body_len = k->body_len,
                                                 .content_type = k->content_type,
                                                 .on_data = k->on_data,
                                                 .userdata = k->userdata,
                                                 .stream_success_only = true },
                                 &resp, &herr);
                if (r < 0)
                        return kube_status_transport(err, r, herr);

                if (resp.status == 401 && !refreshed && !k->no_auth_retry && creds_refreshable(c)) {
                        refreshed = true;
                        continue;
                }
                ra = http_response_header(&resp, "retry-after");
                if ((resp.status == 429 || resp.status == 503) && ra && retries < c->opts.max_retries_429 &&
                    !k->on_data) {
                        unsigned secs = 1;

                        (void)safe_atou(ra, &secs);
                        retries++;
                        r = sleep_usec(MIN(secs, 60u) * USEC_PER_SEC);
                        if (r < 0)
                                return kube_status_transport(err, r, "stop requested");
                        continue;
                }
                if (resp.status < 200 || resp.status > 299) {
                        _cleanup_(json_object_putp) json_object *o = NULL;

                        if (resp.body_len > 0)
                                (void)json_parse(resp.body, resp.body_len, BUF_MAX_JSON_DOC, &o, NULL);
                        r = kube_status_fill(err, resp.status, o);
                        if (err && ra)
                                (void)safe_atou(ra, &err->retry_after);
                        if (ret)
                                *ret = resp, resp = (HttpResponse){};
                        return r;
                }
                if (ret)
                        *ret = resp, resp = (HttpResponse){};
                if (err)
                        kube_status_done(err);
                return 0;
        }
}

static int kube_call_json(KubeClient *c, const char *method, const char *path, const char *content_type,
                          json_object *body, json_object **ret, KubeStatus *err)
{
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_free_ char *s = NULL, *perr = NULL;
        int r;

        if (body) {
                s = json_to_string(body, 0);
                if (!s)
                        return -ENOMEM;
        }
        r = kube_call(c,
                      &(KubeCall){ .method = method,
                                   .path = path,
                                   .content_type = body ? (content_type ?: "application/json") : NULL,
                                   .body = s,
                                   .body_len = s ? strlen(s) : 0 },
                      &resp, err);
        if (r < 0)
                return r;
        if (ret) {
                if (resp.body_len == 0)
                        *ret = NULL;
                else {
                        r = json_parse(resp.body, resp.body_len, BUF_MAX_HTTP_BODY, ret, &perr);
                        if (r < 0)
                                return kube_status_local(err, -EBADMSG, "%s %s: the answer is not JSON: %s",
                                                         method, path, strna(perr));
                }
        }
        return 0;
}

int kube_request(KubeClient *c, const char *method, const char *path, const char *content_type,
                 json_object *body, json_object **ret, KubeStatus *err)
{
        return kube_call_json(c, method, path, content_type, body, ret, err);
}

/* ---- query strings ---- */

static int query_add(Buf *q, const char *key, const char *value)
{
        _cleanup_free_ char *e = NULL;

        if (isempty(value))
                return 0;
        e = http_escape(value);
        if (!e)
                return -ENOMEM;
        return buf_appendf(q, "%c%s=%s", q->len == 0 ? '?' : '&', key, e);
}

static int query_add_u64(Buf *q, const char *key, uint64_t v)
{
        return buf_appendf(q, "%c%s=%" PRIu64, q->len == 0 ? '?' : '&', key, v);
}

static char *path_with_query(const char *path, const Buf *q)
{
        return strdup_printf("%s%s", path, buf_str(q));
}

/* ---- verbs ---- */

static const char *object_ns(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj)
{
        if (!r->namespaced)
                return NULL;
        if (!isempty(ns))
                return ns;
        if (obj) {
                const char *o = kube_object_namespace(obj);

                if (!isempty(o))
                        return o;
        }
        return kube_client_namespace(c);
}

static char *write_path(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
                        const char *subresource)
{
        _cleanup_free_ char *p = kube_resource_path(r, ns, name, subresource);
        _cleanup_buf_ Buf q = BUF_INIT(BUF_MAX_SMALL_FILE);

        if (!p || query_add(&q, "fieldManager", c->field_manager) < 0)
                return NULL;
        return path_with_query(p, &q);
}

int kube_get(KubeClient *c, const KubeResource *r, const char *ns, const char *name, json_object **ret,
             KubeStatus *err)
{
        _cleanup_free_ char *p = NULL;

        if (isempty(name))
                return kube_status_local(err, -EINVAL, "get %s: no name", r->resource);
        p = kube_resource_path(r, object_ns(c, r, ns, NULL), name, NULL);
        if (!p)
                return -ENOMEM;
        return kube_call_json(c, "GET", p, NULL, NULL, ret, err);
}

static char *list_path(const KubeResource *r, const char *ns, const KubeListOptions *o,
                       unsigned default_limit)
{
        _cleanup_free_ char *p = kube_resource_path(r, r->namespaced ? ns : NULL, NULL, NULL);
        _cleanup_buf_ Buf q = BUF_INIT(BUF_MAX_SMALL_FILE);
        unsigned limit = o && o->limit ? o->limit : default_limit;

        if (!p)
                return NULL;
        if (o && (query_add(&q, "labelSelector", o->label_selector) < 0 ||
                  query_add(&q, "fieldSelector", o->field_selector) < 0 ||
                  query_add(&q, "continue", o->continue_token) < 0 ||
                  query_add(&q, "resourceVersion", o->resource_version) < 0 ||
                  query_add(&q, "resourceVersionMatch", o->resource_version_match) < 0))
                return NULL;
        if (limit > 0 && query_add_u64(&q, "limit", limit) < 0)
                return NULL;
        return path_with_query(p, &q);
}

int kube_list(KubeClient *c, const KubeResource *r, const char *ns, const KubeListOptions *o,
              json_object **ret, KubeStatus *err)
{
        _cleanup_free_ char *p = list_path(r, ns, o, 0);

        if (!p)
                return -ENOMEM;
        return kube_call_json(c, "GET", p, NULL, NULL, ret, err);
}

int kube_list_each(KubeClient *c, const KubeResource *r, const char *ns, const KubeListOptions *o,
                   KubeItemCallback cb, void *userdata, char **ret_resource_version, KubeStatus *err)
{
        _cleanup_free_ char *cont = NULL, *rv = NULL;
        KubeListOptions lo = o ? *o : (KubeListOptions){};
        int q;

        if (lo.limit == 0)
                lo.limit = KUBE_LIST_PAGE;
        for (;;) {
                _cleanup_(json_object_putp) json_object *page = NULL;
                json_object *items;
                const char *next;

                lo.continue_token = cont ?: (o ? o->continue_token : NULL);
                if (cont) {
                        /* continue carries the snapshot; these must not be repeated */
                        lo.resource_version = NULL;
                        lo.resource_version_match = NULL;
                }
                q = kube_list(c, r, ns, &lo, &page, err);
                if (q < 0)
                        return q;
                if (!page || !json_object_is_type(page, json_type_object))
                        return kube_status_local(err, -EBADMSG, "list %s: the answer is not a list",
                                                 r->resource);
                if (!rv) {
                        const char *v = json_get_string(json_get(page, "metadata"), "resourceVersion");

                        rv = strdup(strempty(v));
                        if (!rv)
                                return -ENOMEM;
                }
                items = json_get(page, "items");
                if (items && json_object_is_type(items, json_type_array))
                        for (size_t i = 0; i < json_object_array_length(items); i++) {
                                q = cb(json_object_array_get_idx(items, i), userdata);
                                if (q < 0)
                                        return q;
                        }
                next = json_get_string(json_get(page, "metadata"), "continue");
                free(cont);
                cont = NULL;
                if (isempty(next))
                        break;
                cont = strdup(next);
                if (!cont)
                        return -ENOMEM;
        }
        if (ret_resource_version)
                *ret_resource_version = TAKE_PTR(rv);
        return 0;
}

static int append_item(json_object *item, void *userdata)
{
        return json_append(userdata, json_object_get(item));
}

int kube_list_all(KubeClient *c, const KubeResource *r, const char *ns, const KubeListOptions *o,
                  json_object **ret, KubeStatus *err)
{
        _cleanup_(json_object_putp) json_object *list = NULL, *items = NULL, *meta = NULL;
        _cleanup_free_ char *rv = NULL, *av = NULL, *kind = NULL;
        int q;

        items = json_new_array();
        if (!items)
                return -ENOMEM;
        q = kube_list_each(c, r, ns, o, append_item, items, &rv, err);
        if (q < 0)
                return q;
        av = kube_resource_api_version(r);
        kind = strdup_printf("%sList", r->kind ? r->kind : "");
        list = json_new_object();
        meta = json_new_object();
        if (!av || !kind || !list || !meta)
                return -ENOMEM;
        if (json_add_string(list, "kind", kind) < 0 || json_add_string(list, "apiVersion", av) < 0 ||
            json_add_string(meta, "resourceVersion", rv) < 0 ||
            json_add(list, "metadata", TAKE_PTR(meta)) < 0 || json_add(list, "items", TAKE_PTR(items)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(list);
        return 0;
}

static int fill_type_meta(const KubeResource *r, json_object *obj)
{
        _cleanup_free_ char *av = NULL;

        if (!json_get(obj, "apiVersion")) {
                av = kube_resource_api_version(r);
                if (!av || json_add_string(obj, "apiVersion", av) < 0)
                        return -ENOMEM;
        }
        if (!json_get(obj, "kind") && r->kind && json_add_string(obj, "kind", r->kind) < 0)
                return -ENOMEM;
        return 0;
}

int kube_create(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj, json_object **ret,
                KubeStatus *err)
{
        _cleanup_free_ char *p = NULL;
        int q;

        if (!obj || !json_object_is_type(obj, json_type_object))
                return kube_status_local(err, -EINVAL, "create %s: the object is not a JSON object",
                                         r->resource);
        q = fill_type_meta(r, obj);
        if (q < 0)
                return q;
        p = write_path(c, r, object_ns(c, r, ns, obj), NULL, NULL);
        if (!p)
                return -ENOMEM;
        return kube_call_json(c, "POST", p, NULL, obj, ret, err);
}

static int update_sub(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj,
                      const char *subresource, json_object **ret, KubeStatus *err)
{
        _cleanup_free_ char *p = NULL;
        const char *name;
        int q;

        if (!obj || !json_object_is_type(obj, json_type_object))
                return kube_status_local(err, -EINVAL, "update %s: the object is not a JSON object",
                                         r->resource);
        name = kube_object_name(obj);
        if (isempty(name))
                return kube_status_local(err, -EINVAL, "update %s: the object has no metadata.name",
                                         r->resource);
        q = fill_type_meta(r, obj);
        if (q < 0)
                return q;
        p = write_path(c, r, object_ns(c, r, ns, obj), name, subresource);
        if (!p)
                return -ENOMEM;
        return kube_call_json(c, "PUT", p, NULL, obj, ret, err);
}

int kube_update(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj, json_object **ret,
                KubeStatus *err)
{
        return update_sub(c, r, ns, obj, NULL, ret, err);
}

int kube_update_status(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj,
                       json_object **ret, KubeStatus *err)
{
        return update_sub(c, r, ns, obj, "status", ret, err);
}

int kube_patch(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
               const char *subresource, KubePatchType type, json_object *patch, json_object **ret,
               KubeStatus *err)
{
        static const char *const types[] = {
                [KUBE_PATCH_MERGE] = "application/merge-patch+json",
                [KUBE_PATCH_JSON] = "application/json-patch+json",
                [KUBE_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
        };
        _cleanup_free_ char *p = NULL;

        if (isempty(name))
                return kube_status_local(err, -EINVAL, "patch %s: no name", r->resource);
        if ((unsigned)type >= ELEMENTSOF(types) || !patch)
                return kube_status_local(err, -EINVAL, "patch %s: bad patch", r->resource);
        p = write_path(c, r, object_ns(c, r, ns, NULL), name, subresource);
        if (!p)
                return -ENOMEM;
        return kube_call_json(c, "PATCH", p, types[type], patch, ret, err);
}

int kube_patch_merge(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
                     json_object *patch, json_object **ret, KubeStatus *err)
{
        return kube_patch(c, r, ns, name, NULL, KUBE_PATCH_MERGE, patch, ret, err);
}

int kube_patch_json(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
                    json_object *patch, json_object **ret, KubeStatus *err)
{
        return kube_patch(c, r, ns, name, NULL, KUBE_PATCH_JSON, patch, ret, err);
}

int kube_delete(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
                const KubeDeleteOptions *o, json_object **ret, KubeStatus *err)
{
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_free_ char *p = NULL;

        if (isempty(name))
                return kube_status_local(err, -EINVAL, "delete %s: no name", r->resource);
        {
                _cleanup_free_ char *base = kube_resource_path(r, object_ns(c, r, ns, NULL), name, NULL);

                if (!base)
                        return -ENOMEM;
                p = strdup_printf("%s%s", base, o && o->dry_run ? "?dryRun=All" : "");
                if (!p)
                        return -ENOMEM;
        }
        if (o) {
                body = json_new_object();
                if (!body || json_add_string(body, "kind", "DeleteOptions") < 0 ||
                    json_add_string(body, "apiVersion", "v1") < 0 ||
                    json_add_string_nonempty(body, "propagationPolicy", o->propagation_policy) < 0)
                        return -ENOMEM;
                if (o->grace_period_seconds >= 0 &&
                    json_add_int64(body, "gracePeriodSeconds", o->grace_period_seconds) < 0)
                        return -ENOMEM;
                if (o->precondition_uid || o->precondition_resource_version) {
                        _cleanup_(json_object_putp) json_object *pre = json_new_object();

                        if (!pre || json_add_string_nonempty(pre, "uid", o->precondition_uid) < 0 ||
                            json_add_string_nonempty(pre, "resourceVersion",
                                                     o->precondition_resource_version) < 0 ||
                            json_add(body, "preconditions", TAKE_PTR(pre)) < 0)
                                return -ENOMEM;
                }
                if (o->dry_run) {
                        _cleanup_(json_object_putp) json_object *dr = json_new_array();

                        if (!dr || json_append(dr, json_new_string("All")) < 0 ||
                            json_add(body, "dryRun", TAKE_PTR(dr)) < 0)
                                return -ENOMEM;
                }
        }
        return kube_call_json(c, "DELETE", p, NULL, body, ret, err);
}

int kube_pod_logs(KubeClient *c, const char *ns, const char *name, const KubePodLogOptions *o, char **ret,
                  KubeStatus *err)
{
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_free_ char *base = NULL, *p = NULL;
        _cleanup_buf_ Buf q = BUF_INIT(BUF_MAX_SMALL_FILE);
        int r;

        if (isempty(name))
                return kube_status_local(err, -EINVAL, "pod logs: no pod name");
        base = kube_resource_path(&kube_resource_pods, object_ns(c, &kube_resource_pods, ns, NULL), name,
                                  "log");
        if (!base)
                return -ENOMEM;
        if (o) {
                if (query_add(&q, "container", o->container) < 0 ||
                    (o->tail_lines > 0 && query_add_u64(&q, "tailLines", (uint64_t)o->tail_lines) < 0) ||
                    (o->limit_bytes > 0 && query_add_u64(&q, "limitBytes", (uint64_t)o->limit_bytes) < 0) ||
                    (o->since_seconds > 0 &&
                     query_add_u64(&q, "sinceSeconds", (uint64_t)o->since_seconds) < 0) ||
                    (o->previous && query_add(&q, "previous", "true") < 0))
                        return -ENOMEM;
        }
        p = path_with_query(base, &q);
        if (!p)
                return -ENOMEM;
        r = kube_call(c, &(KubeCall){ .method = "GET", .path = p }, &resp, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(resp.body);
        if (!*ret)
                *ret = strdup("");
        return *ret ? 0 : -ENOMEM;
}

/* ---- discovery ---- */

static bool strcaseeq_ptr(const char *a, const char *b)
{
        return a && b && strcasecmp(a, b) == 0;
}

static int entries_add_list(DiscoveryEntry **entries, size_t *n, const char *group, const char *version,
                            json_object *list)
{
        json_object *res = json_get(list, "resources");

        if (!res || !json_object_is_type(res, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(res); i++) {
                json_object *e = json_object_array_get_idx(res, i);
                const char *name = json_get_string(e, "name"), *kind = json_get_string(e, "kind");
                DiscoveryEntry *ne;
                bool namespaced = false;

                if (isempty(name) || isempty(kind) || strchr(name, '/'))
                        continue; /* subresources */
                (void)json_get_bool(e, "namespaced", &namespaced);
                ne = reallocarray(*entries, *n + 1, sizeof(**entries));
                if (!ne)
                        return -ENOMEM;
                *entries = ne;
                ne[*n] = (DiscoveryEntry){
                        .res = { .group = group,
                                 .version = version,
                                 .resource = name,
                                 .kind = kind,
                                 .namespaced = namespaced },
                        .singular = json_get_string(e, "singularName"),
                        .short_names = json_get(e, "shortNames"),
                };
                (*n)++;
        }
        return 0;
}

/* Fetches and keeps a document; a 404 or 503 of one group version is
 * skipped (as kubectl does with an unavailable aggregated API). */
static int discovery_fetch(KubeClient *c, const char *path, json_object *keep, json_object **ret,
                           KubeStatus *err)
{
        json_object *o = NULL;
        int r;

        *ret = NULL;
        r = kube_call_json(c, "GET", path, NULL, NULL, &o, err);
        if (r < 0)
                return r;
        if (!o)
                return kube_status_local(err, -EBADMSG, "discovery %s: empty answer", path);
        if (json_append(keep, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

static int discovery_load(KubeClient *c, KubeStatus *err)
{
        _cleanup_free_ DiscoveryEntry *entries = NULL;
        json_object *keep, *api, *apis, *a;
        size_t n = 0;
        int r;

        if (!c->discovery_docs) {
                c->discovery_docs = json_new_array();
                if (!c->discovery_docs)
                        return -ENOMEM;
        }
        keep = c->discovery_docs;

        r = discovery_fetch(c, "/api", keep, &api, err);
        if (r < 0)
                return r;
        a = json_get(api, "versions");
        for (size_t i = 0; a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a);
             i++) {
                const char *v = json_object_get_string(json_object_array_get_idx(a, i));
                _cleanup_free_ char *p = strdup_printf("/api/%s", strempty(v));
                json_object *list;

                if (!p)
                        return -ENOMEM;
                r = discovery_fetch(c, p, keep, &list, err);
                if (r < 0)
                        return r;
                r = entries_add_list(&entries, &n, "", v, list);
                if (r < 0)
                        return r;
        }

        r = discovery_fetch(c, "/apis", keep, &apis, err);
        if (r < 0)
                return r;
        a = json_get(apis, "groups");
        for (size_t i = 0; a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a);
             i++) {
                json_object *g = json_object_array_get_idx(a, i), *versions = json_get(g, "versions");
                const char *gname = json_get_string(g, "name");
                const char *pref = json_get_string(json_get(g, "preferredVersion"), "version");

                if (isempty(gname) || !versions || !json_object_is_type(versions, json_type_array))
                        continue;
                /* the preferred version first, then the others in order */
                for (int pass = 0; pass < 2; pass++)
                        for (size_t j = 0; j < json_object_array_length(versions); j++) {
                                const char *v =
                                        json_get_string(json_object_array_get_idx(versions, j), "version");
                                _cleanup_free_ char *p = NULL;
                                json_object *list;

                                if (isempty(v) || (pass == 0) != streq_ptr(v, pref))
                                        continue;
                                p = strdup_printf("/apis/%s/%s", gname, v);
                                if (!p)
                                        return -ENOMEM;
                                r = discovery_fetch(c, p, keep, &list, err);
                                if (r == -ENOENT || r == -EAGAIN)
                                        continue;
                                if (r < 0)
                                        return r;
                                r = entries_add_list(&entries, &n, gname, v, list);
                                if (r < 0)
                                        return r;
                        }
        }
        free(c->entries);
        c->entries = TAKE_PTR(entries);
        c->n_entries = n;
        c->discovery_valid = true;
        return 0;
}

void kube_discovery_invalidate(KubeClient *c)
{
        pthread_mutex_lock(&c->dlock);
        c->discovery_valid = false;
        pthread_mutex_unlock(&c->dlock);
}

static bool short_name_match(json_object *a, const char *n)
{
        for (size_t i = 0; a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a);
             i++)
                if (strcaseeq_ptr(json_object_get_string(json_object_array_get_idx(a, i)), n))
                        return true;
        return false;
}

static bool entry_matches_name(const DiscoveryEntry *e, const char *n, size_t nlen, const char *rest)
{
        _cleanup_free_ char *name = strndup(n, nlen);

        if (!name)
                return false;
        if (rest) {
                _cleanup_free_ char *vg = strdup_printf("%s.%s", e->res.version, e->res.group);

                if (!streq(rest, e->res.group) && !(vg && streq(rest, vg)))
                        return false;
        }
        return strcaseeq_ptr(e->res.resource, name) || strcaseeq_ptr(e->singular, name) ||
               strcaseeq_ptr(e->res.kind, name) || short_name_match(e->short_names, name);
}

static int resolve_locked(KubeClient *c, const char *name, const char *api_version, const char *kind,
                          KubeResource *ret)
{
        for (size_t i = 0; i < c->n_entries; i++) {
                const DiscoveryEntry *e = &c->entries[i];

                if (kind) {
                        if (!streq(e->res.kind, kind))
                                continue;
                        if (api_version) {
                                const char *slash = strchr(api_version, '/');

                                if (slash ? !(strneq(api_version, e->res.group,
                                                     (size_t)(slash - api_version)) &&
                                              strlen(e->res.group) == (size_t)(slash - api_version) &&
                                              streq(slash + 1, e->res.version))
                                          : !(isempty(e->res.group) && streq(api_version, e->res.version)))
                                        continue;
                        }
                        *ret = e->res;
                        return 0;
                }
                /* "name", "name.group", "name.version.group" */
                if (entry_matches_name(e, name, strlen(name), NULL)) {
                        *ret = e->res;
                        return 0;
                }
        }
        if (name && strchr(name, '.')) {
                const char *dot = strchr(name, '.');

                for (size_t i = 0; i < c->n_entries; i++)
                        if (entry_matches_name(&c->entries[i], name, (size_t)(dot - name), dot + 1)) {
                                *ret = c->entries[i].res;
                                return 0;
                        }
        }
        return -ENOENT;
}

static int resolve(KubeClient *c, const char *name, const char *api_version, const char *kind,
                   KubeResource *ret, KubeStatus *err)
{
        int r;

        pthread_mutex_lock(&c->dlock);
        for (int attempt = 0; attempt < 2; attempt++) {
                bool fresh = false;

                if (!c->discovery_valid) {
                        r = discovery_load(c, err);
                        if (r < 0)
                                goto finish;
                        fresh = true;
                }
                r = resolve_locked(c, name, api_version, kind, ret);
                if (r >= 0 || fresh)
                        break;
                c->discovery_valid = false; /* not found in a cached copy: look again once */
        }
        if (r == -ENOENT)
                r = kube_status_local(err, -ENOENT, "the server doesn't have a resource type \"%s\"",
                                      name ?: kind);
        else if (r >= 0 && err)
                kube_status_done(err);
finish:
        pthread_mutex_unlock(&c->dlock);
        return r;
}

int kube_resolve(KubeClient *c, const char *name, KubeResource *ret, KubeStatus *err)
{
        if (isempty(name))
                return kube_status_local(err, -EINVAL, "no resource type given");
        return resolve(c, name, NULL, NULL, ret, err);
}

int kube_resolve_kind(KubeClient *c, const char *api_version, const char *kind, KubeResource *ret,
                      KubeStatus *err)
{
        if (isempty(kind))
                return kube_status_local(err, -EINVAL, "no kind given");
        return resolve(c, NULL, api_version, kind, ret, err);
}

/* ---- objects ---- */

const char *kube_object_name(json_object *o)
{
        return json_get_string(json_get(o, "metadata"), "name");
}

const char *kube_object_namespace(json_object *o)
{
        return json_get_string(json_get(o, "metadata"), "namespace");
}

const char *kube_object_resource_version(json_object *o)
{
        return json_get_string(json_get(o, "metadata"), "resourceVersion");
}

char *kube_object_key(json_object *o)
{
        const char *ns = kube_object_namespace(o), *name = kube_object_name(o);

        if (!name)
                return NULL;
        if (isempty(ns))
                return strdup(name);
        return strdup_printf("%s/%s", ns, name);
}

/* ---- watch ---- */

typedef struct WatchCtx {
        KubeWatchDecoder *d;
        KubeStatus *err;
        int result;
        bool any;
} WatchCtx;

static int watch_on_data(void *userdata, const char *data, size_t n)
{
        WatchCtx *w = userdata;
        int r;

        w->any = true;
        r = kube_watch_decoder_feed(w->d, data, n, w->err);
        if (r != 0) {
                w->result = r;
                return -ECANCELED;
        }
        return 0;
}

static int watch_once(KubeClient *c, const char *path, unsigned timeout_seconds, bool force_refresh,
                      char **resource_version, KubeWatchCallback cb, void *userdata, bool *ret_events,
                      KubeStatus *err)
{
        _cleanup_(kube_watch_decoder_freep) KubeWatchDecoder *d = NULL;
        _cleanup_(http_client_freep) HttpClient *h = NULL;
        _cleanup_kube_status_ KubeStatus terr = {};
        _cleanup_free_ char *herr = NULL;
        const char *cert, *key, *rv;
        WatchCtx w = { .err = err };
        int r;

        pthread_mutex_lock(&c->lock);
        client_certs(c, &cert, &key);
        r = http_for(c, cert, key, timeout_seconds > 0 ? (timeout_seconds + 60) * USEC_PER_SEC : 0, &h,
                     &herr);
        pthread_mutex_unlock(&c->lock);
        if (r < 0)
                return kube_status_local(err, r, "watch: %s", strna(herr));
        r = kube_watch_decoder_new(cb, userdata, &d);
        if (r < 0)
                return r;
        w.d = d;

        r = kube_call(c,
                      &(KubeCall){ .method = "GET",
                                   .path = path,
                                   .on_data = watch_on_data,
                                   .userdata = &w,
                                   .http = h,
                                   .no_auth_retry = true,
                                   .force_refresh = force_refresh },
                      NULL, &terr);

        rv = kube_watch_decoder_resource_version(d);
        *ret_events = rv != NULL;
        if (rv && !streq_ptr(rv, *resource_version)) {
                char *n = strdup(rv);

                if (!n)
                        return -ENOMEM;
                free(*resource_version);
                *resource_version = n;
        }
        if (w.result != 0)
                return w.result; /* err filled by the decoder */
        if (r < 0) {
                if (err) {
                        kube_status_done(err);
                        *err = terr;
                        terr = (KubeStatus){};
                }
                return r;
        }
        r = kube_watch_decoder_finish(d);
        if (r < 0)
                return kube_status_local(err, r, "watch: the stream ended inside an event");
        if (err)
                kube_status_done(err);
        return 0;
}

static char *watch_path(KubeClient *c, const KubeResource *r, const char *ns, const KubeWatchOptions *o,
                        const char *rv)
{
        _cleanup_free_ char *p = kube_resource_path(r, r->namespaced ? ns : NULL, NULL, NULL);
        _cleanup_buf_ Buf q = BUF_INIT(BUF_MAX_SMALL_FILE);

        (void)c;
        if (!p || query_add(&q, "watch", "true") < 0 || query_add(&q, "resourceVersion", rv) < 0)
                return NULL;
        if (o) {
                if (query_add(&q, "labelSelector", o->label_selector) < 0 ||
                    query_add(&q, "fieldSelector", o->field_selector) < 0 ||
                    (o->allow_bookmarks && query_add(&q, "allowWatchBookmarks", "true") < 0) ||
                    (o->timeout_seconds > 0 && query_add_u64(&q, "timeoutSeconds", o->timeout_seconds) < 0))
                        return NULL;
        }
        return path_with_query(p, &q);
}

int kube_watch(KubeClient *c, const KubeResource *r, const char *ns, const KubeWatchOptions *o,
               char **resource_version, KubeWatchCallback cb, void *userdata, KubeStatus *err)
{
        _cleanup_free_ char *p = NULL;
        bool events = false;
        int q;

        p = watch_path(c, r, ns, o, *resource_version);
        if (!p)
                return -ENOMEM;
        q = watch_once(c, p, o ? o->timeout_seconds : 0, false, resource_version, cb, userdata, &events,
                       err);
        if (q == -EKEYREJECTED && !events && creds_refreshable(c))
                q = watch_once(c, p, o ? o->timeout_seconds : 0, true, resource_version, cb, userdata,
                               &events, err);
        return q;
}

static bool watch_error_retryable(int r)
{
        switch (-r) {
        case ECONNRESET:
        case ECONNREFUSED:
        case ETIMEDOUT:
        case EHOSTUNREACH:
        case EPROTO:
        case EBADMSG:
        case EIO:
        case EAGAIN:
        case ECANCELED:
        case EPIPE:
                return true;
        default:
                return false;
        }
}

int kube_watch_loop(KubeClient *c, const KubeResource *r, const char *ns, const KubeWatchOptions *o,
                    char **resource_version, KubeWatchCallback cb, void *userdata, KubeStatus *err)
{
        unsigned attempt = 0;

        for (;;) {
                _cleanup_free_ char *before = NULL;
                int q;

                if (stop_requested())
                        return kube_status_local(err, -ECANCELED, "stop requested");
                before = *resource_version ? strdup(*resource_version) : NULL;
                if (*resource_version && !before)
                        return -ENOMEM;
                q = kube_watch(c, r, ns, o, resource_version, cb, userdata, err);
                if (q == KUBE_WATCH_STOP || q == -ESTALE)
                        return q;
                if (!streq_ptr(before, *resource_version))
                        attempt = 0; /* events flowed */
                if (q == 0)
                        continue;
                if (!watch_error_retryable(q))
                        return q;
                if (sleep_usec(backoff_full_jitter(800 * USEC_PER_MSEC, 30 * USEC_PER_SEC, attempt) +
                               100 * USEC_PER_MSEC) < 0)
                        return kube_status_local(err, -ECANCELED, "stop requested");
                if (attempt < 16)
                        attempt++;
        }
}
