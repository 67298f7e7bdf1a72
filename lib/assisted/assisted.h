/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The assisted-service v2 client used by the agent, the step handlers and
 * the installer: the agent-facing endpoints of swagger.yaml, with the
 * conventions of the Go clients (notes/agent.md §3): base URL + 
 * "/api/assisted-install", X-Secret-Key from the pull-secret token, the
 * Discovery_agent_version header, one X-Request-Id per session, the
 * transport retry rule of the calling program.
 *
 * Every call returns 0 when the service answered with the operation's
 * success status, -EREMOTEIO when it answered another status (ret_status
 * and reterr say which and why: "[404] infra-env ... not found"), or the
 * transport's negative errno. Replies are decoded into json_object trees;
 * the models are in assisted-models.h.
 */

#include <stdbool.h>

#include "http.h"
#include "macro.h"

typedef struct AssistedClient AssistedClient;
typedef struct json_object json_object;

typedef struct AssistedClientOptions {
        const char *url; /* service base URL, as --url */
        const char *ca_file; /* --cacert: added to the system trust */
        bool insecure; /* --insecure */
        const char *token; /* PULL_SECRET_TOKEN, sent as X-Secret-Key; may be NULL */
        const char *agent_version; /* --agent-version, sent as Discovery_agent_version; may be NULL */
        /* the user API's credential: "Authorization: Bearer <the file's
         * content>", the file re-read whenever it changes (a mounted
         * Secret being rotated); may be NULL */
        const char *bearer_token_file;
        const char *user_agent;
        HttpRetryPolicy retry;
        HttpRetryCallback on_retry;
        void *retry_userdata;
        usec_t total_timeout; /* per request; 0 none (the Go clients have none) */
} AssistedClientOptions;

/* The Go programs' retry rule over the service (inventory_client's rehttp
 * transport): 404, 423 and 425 up to short_retries; 408, 429, 5xx and no
 * answer at all up to long_retries; other answers never. The delays are
 * full jitter between base_delay and max_delay (timeutil.h). */
typedef struct AssistedRetryPolicy {
        unsigned short_retries;
        unsigned long_retries;
        usec_t base_delay;
        usec_t max_delay;
} AssistedRetryPolicy;

/* the installer: 10 and 360 retries, 2-10 s (dry run: 3 and 3) */
#define ASSISTED_RETRY_INSTALLER \
        ((AssistedRetryPolicy){ .short_retries = 10, \
                                .long_retries = 360, \
                                .base_delay = 2 * USEC_PER_SEC, \
                                .max_delay = 10 * USEC_PER_SEC })
/* the assisted-installer-controller: 10 and 15 (its loops retry anyway) */
#define ASSISTED_RETRY_CONTROLLER \
        ((AssistedRetryPolicy){ .short_retries = 10, \
                                .long_retries = 15, \
                                .base_delay = 2 * USEC_PER_SEC, \
                                .max_delay = 10 * USEC_PER_SEC })

/* After a call that returned r (0, -EREMOTEIO with the HTTP status, or a
 * transport errno) and `retries` retries so far: true when it is retried. */
bool assisted_should_retry(const AssistedRetryPolicy *p, int r, long status, unsigned retries);

/* One call, made again while the policy says so: each attempt a new
 * session (X-Request-Id, as utils.GenerateRequestContext()), the full-jitter
 * back-off slept between them (sleep_usec(): a stop request ends the wait
 * with -ECANCELED and *reterr "stop requested"). call returns what the
 * assisted_* functions return; notify (may be NULL) hears of each retry
 * before its sleep, for the program to log it. *ret_status (may be NULL):
 * the last attempt's HTTP status. Returns the last attempt's result. */
typedef int (*AssistedCallFunc)(AssistedClient *c, void *userdata, long *ret_status, char **reterr);
typedef void (*AssistedRetryNotify)(const char *what, const char *error, unsigned retry, usec_t delay);
int assisted_call_retrying(AssistedClient *c, const AssistedRetryPolicy *p, const char *what,
                           AssistedCallFunc call, void *userdata, AssistedRetryNotify notify,
                           long *ret_status, char **reterr);

int assisted_client_new(const AssistedClientOptions *o, AssistedClient **ret, char **reterr);
AssistedClient *assisted_client_free(AssistedClient *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(AssistedClient *, assisted_client_free)

/* Starts a new session: a fresh X-Request-Id for the following calls. */
void assisted_client_new_session(AssistedClient *c);
const char *assisted_client_request_id(const AssistedClient *c);
/* Continues a session started elsewhere (a step reply of that poll). */
void assisted_client_set_request_id(AssistedClient *c, const char *request_id);

/* A generic call under /api/assisted-install. path is e.g.
 * "/v2/infra-envs/ID/hosts". body may be NULL. expect is the success
 * status (200, 201, 204). The reply body, when JSON, in *ret_json (may be
 * NULL on success without body). */
int assisted_call(AssistedClient *c, const char *method, const char *path, json_object *body, long expect,
                  long *ret_status, json_object **ret_json, char **reterr);

/* A raw download (ignition, files): the body bytes. */
int assisted_download(AssistedClient *c, const char *path, size_t max, long *ret_status, char **ret_data,
                      size_t *ret_len, char **reterr);

/* Multipart upload of a file (logs), field "upfile". */
int assisted_upload(AssistedClient *c, const char *path, const char *file, const char *filename, long expect,
                    long *ret_status, char **reterr);

/* "[code] reason" from a models.Error / models.InfraError body, or the raw
 * text of a non-JSON body (the Go clients' rule); allocated. */
char *assisted_error_text(long status, const char *body, size_t len);

/* Typed endpoints. IDs are inserted as path segments (escaped). */
int assisted_register_host(AssistedClient *c, const char *infra_env_id, const char *host_id,
                           const char *agent_version, long *ret_status, json_object **ret_host,
                           char **reterr);
int assisted_get_next_steps(AssistedClient *c, const char *infra_env_id, const char *host_id,
                            long *ret_status, json_object **ret_steps, char **reterr);
int assisted_post_step_reply(AssistedClient *c, const char *infra_env_id, const char *host_id,
                             json_object *reply, long *ret_status, char **reterr);
int assisted_update_progress(AssistedClient *c, const char *infra_env_id, const char *host_id,
                             const char *stage, const char *info, long *ret_status, char **reterr);
int assisted_update_host_logs_progress(AssistedClient *c, const char *infra_env_id, const char *host_id,
                                       const char *state, long *ret_status, char **reterr);
int assisted_update_cluster_logs_progress(AssistedClient *c, const char *cluster_id, const char *state,
                                          long *ret_status, char **reterr);
int assisted_get_cluster(AssistedClient *c, const char *cluster_id, bool with_hosts, long *ret_status,
                         json_object **ret_cluster, char **reterr);
/* assisted_get_cluster() through assisted_call_retrying(); *ret_cluster
 * set only on success. */
int assisted_get_cluster_retrying(AssistedClient *c, const AssistedRetryPolicy *p, const char *what,
                                  AssistedRetryNotify notify, const char *cluster_id, bool with_hosts,
                                  long *ret_status, json_object **ret_cluster, char **reterr);
int assisted_list_cluster_hosts(AssistedClient *c, const char *cluster_id, const char *role,
                                long *ret_status, json_object **ret_hosts, char **reterr);
int assisted_download_host_ignition(AssistedClient *c, const char *infra_env_id, const char *host_id,
                                    long *ret_status, char **ret_data, size_t *ret_len, char **reterr);
int assisted_download_cluster_file(AssistedClient *c, const char *cluster_id, const char *file_name,
                                   long *ret_status, char **ret_data, size_t *ret_len, char **reterr);
/* logs_type "host" (with host_id and infra_env_id) or "controller". */
int assisted_upload_logs(AssistedClient *c, const char *cluster_id, const char *logs_type,
                         const char *host_id, const char *infra_env_id, const char *file, long *ret_status,
                         char **reterr);
