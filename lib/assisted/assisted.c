/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>

#include "assisted-models.h"
#include "assisted.h"
#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "jsonutil.h"
#include "redact.h"
#include "strutil.h"
#include "timeutil.h"
#include "uuid.h"

struct AssistedClient {
        HttpClient *http;
        char request_id[UUID_STRING_MAX];
        char *token_file;
        struct stat token_stat; /* of the file when last read */
        bool token_set;
};

AssistedClient *assisted_client_free(AssistedClient *c)
{
        if (!c)
                return NULL;
        http_client_free(c->http);
        free(c->token_file);
        free(c);
        return NULL;
}

int assisted_client_new(const AssistedClientOptions *o, AssistedClient **ret, char **reterr)
{
        _cleanup_(assisted_client_freep) AssistedClient *c = NULL;
        _cleanup_free_ char *base = NULL;
        HttpClientOptions ho = {
                .ca_file = o->ca_file,
                .insecure = o->insecure,
                .user_agent = o->user_agent,
                .retry = o->retry,
                .on_retry = o->on_retry,
                .retry_userdata = o->retry_userdata,
                .total_timeout = o->total_timeout,
        };
        int r;

        if (isempty(o->url)) {
                if (reterr)
                        *reterr = strdup("no service URL given");
                return -EINVAL;
        }
        base = http_url_join(o->url, ASSISTED_API_PREFIX);
        if (!base)
                return -ENOMEM;
        ho.base_url = base;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        r = http_client_new(&ho, &c->http, reterr);
        if (r < 0)
                return r;
        if (!isempty(o->token)) {
                r = http_client_set_header(c->http, "X-Secret-Key", o->token);
                if (r < 0)
                        return r;
        }
        if (!isempty(o->bearer_token_file)) {
                c->token_file = strdup(o->bearer_token_file);
                if (!c->token_file)
                        return -ENOMEM;
        }
        if (!isempty(o->agent_version)) {
                /* the swagger name is discovery_agent_version; Go writes it
                 * canonicalised like this, underscore kept */
                r = http_client_set_header(c->http, "Discovery_agent_version", o->agent_version);
                if (r < 0)
                        return r;
        }
        assisted_client_new_session(c);
        *ret = TAKE_PTR(c);
        return 0;
}

void assisted_client_new_session(AssistedClient *c)
{
        uuid_random(c->request_id);
        (void)http_client_set_header(c->http, "X-Request-Id", c->request_id);
}

void assisted_client_set_request_id(AssistedClient *c, const char *request_id)
{
        snprintf(c->request_id, sizeof(c->request_id), "%s", request_id);
        (void)http_client_set_header(c->http, "X-Request-Id", c->request_id);
}

const char *assisted_client_request_id(const AssistedClient *c)
{
        return c->request_id;
}

/* Reads the bearer token file again when it changed since the last read
 * (inode, size or modification time), as client-go does with its token
 * file. A file that cannot be read keeps the previous token, when there
 * was one. */
static int refresh_bearer_token(AssistedClient *c, char **reterr)
{
        _cleanup_erase_ char *token = NULL;
        _cleanup_free_ char *header = NULL;
        struct stat st;
        int r;

        if (!c->token_file)
                return 0;
        if (stat(c->token_file, &st) < 0) {
                r = -errno;
                goto fail;
        }
        if (c->token_set && st.st_ino == c->token_stat.st_ino && st.st_size == c->token_stat.st_size &&
            st.st_mtim.tv_sec == c->token_stat.st_mtim.tv_sec &&
            st.st_mtim.tv_nsec == c->token_stat.st_mtim.tv_nsec)
                return 0;
        r = read_full_file(c->token_file, 64 * 1024, &token, NULL);
        if (r < 0)
                goto fail;
        strstrip(token);
        if (isempty(token)) {
                r = -EKEYREJECTED;
                goto fail;
        }
        (void)redact_register_secret(token);
        header = strdup_printf("Bearer %s", token);
        if (!header)
                return -ENOMEM;
        (void)redact_register_secret(header);
        r = http_client_set_header(c->http, "Authorization", header);
        explicit_bzero(header, strlen(header));
        if (r < 0)
                return r;
        c->token_stat = st;
        c->token_set = true;
        return 0;
fail:
        if (c->token_set)
                return 0;
        if (reterr) {
                free(*reterr);
                *reterr = strdup_printf("cannot read the token file '%s': %s", c->token_file,
                                        r == -EKEYREJECTED ? "it is empty" : strerror(-r));
        }
        return r;
}

char *assisted_error_text(long status, const char *body, size_t len)
{
        _cleanup_(json_object_putp) json_object *j = NULL;
        const char *reason = NULL;

        if (len > 0 && json_parse(body, len, BUF_MAX_JSON_DOC, &j, NULL) >= 0) {
                reason = json_get_string(j, "reason");
                if (!reason)
                        reason = json_get_string(j, "message");
        }
        if (reason)
                return strdup_printf("[%ld] %s", status, reason);
        if (len > 0) {
                /* text/html and other bodies: their text, bounded */
                _cleanup_free_ char *text = strndup(body, MIN(len, (size_t)512));
                return text ? strdup_printf("[%ld] %s", status, strstrip(text)) : NULL;
        }
        return strdup_printf("[%ld] no response body", status);
}

static int unexpected_status(const char *method, const char *path, const HttpResponse *r, char **reterr)
{
        if (reterr) {
                _cleanup_free_ char *text = assisted_error_text(r->status, r->body, r->body_len);
                _cleanup_free_ char *clean = text ? redact_known_secrets(text) : NULL;
                free(*reterr);
                *reterr = strdup_printf("%s %s: %s", method, path, strna(clean));
        }
        return -EREMOTEIO;
}

int assisted_call(AssistedClient *c, const char *method, const char *path, json_object *body, long expect,
                  long *ret_status, json_object **ret_json, char **reterr)
{
        _cleanup_http_response_ HttpResponse r = {};
        _cleanup_(json_object_putp) json_object *j = NULL;
        int q;

        if (ret_status)
                *ret_status = 0;
        q = refresh_bearer_token(c, reterr);
        if (q < 0)
                return q;
        q = http_request_json(c->http, method, path, body, &r, NULL, reterr);
        if (ret_status)
                *ret_status = q < 0 ? 0 : r.status;
        if (q < 0)
                return q;
        if (r.status != expect)
                return unexpected_status(method, path, &r, reterr);
        if (ret_json && r.body_len > 0) {
                _cleanup_free_ char *perr = NULL;
                q = json_parse(r.body, r.body_len, BUF_MAX_HTTP_BODY, &j, &perr);
                if (q < 0) {
                        if (reterr) {
                                free(*reterr);
                                *reterr = strdup_printf("%s %s: status %ld with a body that is not JSON: %s",
                                                        method, path, r.status, strna(perr));
                        }
                        return -EBADMSG;
                }
        }
        if (ret_json)
                *ret_json = TAKE_PTR(j);
        return 0;
}

int assisted_download(AssistedClient *c, const char *path, size_t max, long *ret_status, char **ret_data,
                      size_t *ret_len, char **reterr)
{
        _cleanup_http_response_ HttpResponse r = {};
        HttpRequest req = { .method = "GET", .path = path };
        int q;

        if (ret_status)
                *ret_status = 0;
        q = refresh_bearer_token(c, reterr);
        if (q < 0)
                return q;
        q = http_request(c->http, &req, &r, reterr);
        if (ret_status)
                *ret_status = q < 0 ? 0 : r.status;
        if (q < 0)
                return q;
        if (r.status != 200)
                return unexpected_status("GET", path, &r, reterr);
        if (r.body_len > max) {
                if (reterr)
                        *reterr = strdup_printf("GET %s: %zu bytes exceed the limit of %zu", path,
                                                r.body_len, max);
                return -E2BIG;
        }
        *ret_data = TAKE_PTR(r.body);
        if (ret_len)
                *ret_len = r.body_len;
        return 0;
}

int assisted_upload(AssistedClient *c, const char *path, const char *file, const char *filename, long expect,
                    long *ret_status, char **reterr)
{
        _cleanup_http_response_ HttpResponse r = {};
        HttpRequest req = { .method = "POST",
                            .path = path,
                            .upload_field = "upfile",
                            .upload_file = file,
                            .upload_filename = filename };
        int q;

        q = http_request(c->http, &req, &r, reterr);
        if (ret_status)
                *ret_status = q < 0 ? 0 : r.status;
        if (q < 0)
                return q;
        if (r.status != expect)
                return unexpected_status("POST", path, &r, reterr);
        return 0;
}

/* prefix + id1 + middle + id2 + suffix, each ID escaped as a path segment;
 * NULL parts are left out. */
static char *path_of(const char *prefix, const char *id1, const char *middle, const char *id2,
                     const char *suffix)
{
        _cleanup_free_ char *e1 = id1 ? http_escape(id1) : NULL, *e2 = id2 ? http_escape(id2) : NULL;

        if ((id1 && !e1) || (id2 && !e2))
                return NULL;
        return strdup_printf("%s%s%s%s%s", prefix, strempty(e1), strempty(middle), strempty(e2),
                             strempty(suffix));
}

int assisted_register_host(AssistedClient *c, const char *infra_env_id, const char *host_id,
                           const char *agent_version, long *ret_status, json_object **ret_host,
                           char **reterr)
{
        _cleanup_(json_object_putp) json_object *body = json_new_object();
        _cleanup_free_ char *path = path_of("/v2/infra-envs/", infra_env_id, "/hosts", NULL, NULL);

        if (!body || !path)
                return -ENOMEM;
        /* HostCreateParams, keys in the Go model's (alphabetical) order */
        if (json_add_string_nonempty(body, "discovery_agent_version", agent_version) < 0 ||
            json_add_string(body, "host_id", host_id) < 0)
                return -ENOMEM;
        return assisted_call(c, "POST", path, body, 201, ret_status, ret_host, reterr);
}

int assisted_get_next_steps(AssistedClient *c, const char *infra_env_id, const char *host_id,
                            long *ret_status, json_object **ret_steps, char **reterr)
{
        _cleanup_free_ char *base =
                path_of("/v2/infra-envs/", infra_env_id, "/hosts/", host_id, "/instructions");
        _cleanup_free_ char *path = NULL;

        if (!base)
                return -ENOMEM;
        path = strdup_printf("%s?timestamp=%lld", base, (long long)time(NULL));
        if (!path)
                return -ENOMEM;
        return assisted_call(c, "GET", path, NULL, 200, ret_status, ret_steps, reterr);
}

int assisted_post_step_reply(AssistedClient *c, const char *infra_env_id, const char *host_id,
                             json_object *reply, long *ret_status, char **reterr)
{
        _cleanup_free_ char *path =
                path_of("/v2/infra-envs/", infra_env_id, "/hosts/", host_id, "/instructions");

        if (!path)
                return -ENOMEM;
        return assisted_call(c, "POST", path, reply, 204, ret_status, NULL, reterr);
}

int assisted_update_progress(AssistedClient *c, const char *infra_env_id, const char *host_id,
                             const char *stage, const char *info, long *ret_status, char **reterr)
{
        _cleanup_(json_object_putp) json_object *body = json_new_object();
        _cleanup_free_ char *path =
                path_of("/v2/infra-envs/", infra_env_id, "/hosts/", host_id, "/progress");

        if (!body || !path)
                return -ENOMEM;
        /* HostProgress; an empty progress_info is left out, as Go's omitempty */
        if (json_add_string(body, "current_stage", stage) < 0 ||
            json_add_string_nonempty(body, "progress_info", info) < 0)
                return -ENOMEM;
        return assisted_call(c, "PUT", path, body, 200, ret_status, NULL, reterr);
}

static int logs_progress(AssistedClient *c, const char *path, const char *state, long *ret_status,
                         char **reterr)
{
        _cleanup_(json_object_putp) json_object *body = json_new_object();

        if (!body || json_add_string(body, "logs_state", state) < 0)
                return -ENOMEM;
        return assisted_call(c, "PUT", path, body, 204, ret_status, NULL, reterr);
}

int assisted_update_host_logs_progress(AssistedClient *c, const char *infra_env_id, const char *host_id,
                                       const char *state, long *ret_status, char **reterr)
{
        _cleanup_free_ char *path =
                path_of("/v2/infra-envs/", infra_env_id, "/hosts/", host_id, "/logs-progress");

        if (!path)
                return -ENOMEM;
        return logs_progress(c, path, state, ret_status, reterr);
}

int assisted_update_cluster_logs_progress(AssistedClient *c, const char *cluster_id, const char *state,
                                          long *ret_status, char **reterr)
{
        _cleanup_free_ char *path = path_of("/v2/clusters/", cluster_id, "/logs-progress", NULL, NULL);

        if (!path)
                return -ENOMEM;
        return logs_progress(c, path, state, ret_status, reterr);
}

int assisted_get_cluster(AssistedClient *c, const char *cluster_id, bool with_hosts, long *ret_status,
                         json_object **ret_cluster, char **reterr)
{
        _cleanup_free_ char *base = path_of("/v2/clusters/", cluster_id, NULL, NULL, NULL), *path = NULL;

        if (!base)
                return -ENOMEM;
        path = strdup_printf("%s?exclude-hosts=%s", base, with_hosts ? "false" : "true");
        if (!path)
                return -ENOMEM;
        return assisted_call(c, "GET", path, NULL, 200, ret_status, ret_cluster, reterr);
}

typedef struct GetClusterArgs {
        const char *cluster_id;
        bool with_hosts;
        json_object *cluster;
} GetClusterArgs;

static int get_cluster_attempt(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        GetClusterArgs *a = userdata;

        json_object_put(a->cluster);
        a->cluster = NULL;
        return assisted_get_cluster(c, a->cluster_id, a->with_hosts, ret_status, &a->cluster, reterr);
}

int assisted_get_cluster_retrying(AssistedClient *c, const AssistedRetryPolicy *p, const char *what,
                                  AssistedRetryNotify notify, const char *cluster_id, bool with_hosts,
                                  long *ret_status, json_object **ret_cluster, char **reterr)
{
        GetClusterArgs a = { .cluster_id = cluster_id, .with_hosts = with_hosts };
        int r;

        r = assisted_call_retrying(c, p, what, get_cluster_attempt, &a, notify, ret_status, reterr);
        if (r < 0) {
                json_object_put(a.cluster);
                return r;
        }
        *ret_cluster = a.cluster;
        return r;
}

int assisted_list_cluster_hosts(AssistedClient *c, const char *cluster_id, const char *role,
                                long *ret_status, json_object **ret_hosts, char **reterr)
{
        _cleanup_free_ char *base = path_of("/v2/clusters/", cluster_id, "/hosts", NULL, NULL), *path = NULL,
                            *erole = NULL;

        if (!base)
                return -ENOMEM;
        if (role) {
                erole = http_escape(role);
                path = erole ? strdup_printf("%s?role=%s", base, erole) : NULL;
        } else
                path = strdup(base);
        if (!path)
                return -ENOMEM;
        return assisted_call(c, "GET", path, NULL, 200, ret_status, ret_hosts, reterr);
}

int assisted_download_host_ignition(AssistedClient *c, const char *infra_env_id, const char *host_id,
                                    long *ret_status, char **ret_data, size_t *ret_len, char **reterr)
{
        /* note the singular "infra-env" in this one path (swagger) */
        _cleanup_free_ char *path =
                path_of("/v2/infra-env/", infra_env_id, "/hosts/", host_id, "/downloads/ignition");

        if (!path)
                return -ENOMEM;
        return assisted_download(c, path, BUF_MAX_JSON_DOC, ret_status, ret_data, ret_len, reterr);
}

int assisted_download_cluster_file(AssistedClient *c, const char *cluster_id, const char *file_name,
                                   long *ret_status, char **ret_data, size_t *ret_len, char **reterr)
{
        _cleanup_free_ char *base = path_of("/v2/clusters/", cluster_id, "/downloads/files", NULL, NULL),
                            *path = NULL, *ename = http_escape(file_name);

        if (!base || !ename)
                return -ENOMEM;
        path = strdup_printf("%s?file_name=%s", base, ename);
        if (!path)
                return -ENOMEM;
        return assisted_download(c, path, BUF_MAX_HTTP_BODY, ret_status, ret_data, ret_len, reterr);
}

int assisted_upload_logs(AssistedClient *c, const char *cluster_id, const char *logs_type,
                         const char *host_id, const char *infra_env_id, const char *file, long *ret_status,
                         char **reterr)
{
        _cleanup_free_ char *base = path_of("/v2/clusters/", cluster_id, "/logs", NULL, NULL), *path = NULL;
        _cleanup_free_ char *ehost = host_id ? http_escape(host_id) : NULL,
                            *eenv = infra_env_id ? http_escape(infra_env_id) : NULL;

        if (!base)
                return -ENOMEM;
        if (streq(logs_type, "host"))
                path = strdup_printf("%s?logs_type=host&host_id=%s&infra_env_id=%s", base, strempty(ehost),
                                     strempty(eenv));
        else
                path = strdup_printf("%s?logs_type=%s", base, logs_type);
        if (!path)
                return -ENOMEM;
        return assisted_upload(c, path, file,
                               streq(logs_type, "controller") ? "controller_logs.tar.gz" : "logs.tar.gz",
                               204, ret_status, reterr);
}

bool assisted_should_retry(const AssistedRetryPolicy *p, int r, long status, unsigned retries)
{
        if (r == 0)
                return false;
        if (r == -EREMOTEIO) {
                if (status == 404 || status == 423 || status == 425)
                        return retries < p->short_retries;
                if (status == 408 || status == 429 || (status >= 500 && status <= 599))
                        return retries < p->long_retries;
                return false; /* other 4xx: the answer */
        }
        /* no answer at all: refused, reset, timed out, not resolved, TLS
         * handshake cut (Go's temporary net errors) */
        if (r == -ECONNREFUSED || r == -ECONNRESET || r == -ETIMEDOUT || r == -EHOSTUNREACH ||
            r == -EPROTO || r == -EIO)
                return retries < p->long_retries;
        return false;
}

int assisted_call_retrying(AssistedClient *c, const AssistedRetryPolicy *p, const char *what,
                           AssistedCallFunc call, void *userdata, AssistedRetryNotify notify,
                           long *ret_status, char **reterr)
{
        for (unsigned retries = 0;; retries++) {
                _cleanup_free_ char *err = NULL;
                long status = 0;
                usec_t delay;
                int r;

                assisted_client_new_session(c);
                r = call(c, userdata, &status, &err);
                if (!assisted_should_retry(p, r, status, retries)) {
                        if (ret_status)
                                *ret_status = status;
                        if (r < 0 && reterr)
                                *reterr = TAKE_PTR(err);
                        return r;
                }
                delay = backoff_full_jitter(p->base_delay, p->max_delay, retries);
                if (notify)
                        notify(what, err, retries + 1, delay);
                if (sleep_usec(delay) < 0) {
                        if (reterr)
                                *reterr = strdup("stop requested");
                        return -ECANCELED;
                }
        }
}
