/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-user.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/service.h"
#include "http.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static void retry_notify(const char *what, const char *error, unsigned retry, usec_t delay)
{
        log_info("%s failed (%s), retry %u in %.1f s", what, strna(error), retry,
                 (double)delay / (double)USEC_PER_SEC);
}

static const AssistedRetryPolicy *policy_of(const ControllerService *s)
{
        static const AssistedRetryPolicy once = { 0 };

        return s->may_vanish && s->vanished ? &once : &s->retry;
}

/* r: what the call returned after its tries. Only a transport error is no
 * answer: an HTTP status or a body that does not parse came from a service */
static int outcome(ControllerService *s, const char *what, int r)
{
        bool answered = r >= 0 || r == -EREMOTEIO || r == -EBADMSG;

        if (!s->may_vanish || r == -ECANCELED || r == -ENOMEM)
                return r;
        if (!answered && !s->vanished) {
                s->vanished = true;
                log_warning("assisted-service did not answer the %s: each later call is tried once "
                            "until it answers again",
                            what);
        } else if (answered && s->vanished) {
                s->vanished = false;
                log_info("assisted-service answers again: calls get their retries back");
        }
        return r;
}

static int call(ControllerService *s, const char *what, AssistedCallFunc op, void *userdata,
                long *ret_status, char **reterr)
{
        return outcome(s, what,
                       assisted_call_retrying(s->client, policy_of(s), what, op, userdata, retry_notify,
                                              ret_status, reterr));
}

int controller_service_get_cluster(ControllerService *s, bool with_hosts, long *ret_status,
                                   json_object **ret, char **reterr)
{
        json_object *cluster = NULL;
        int r;

        r = outcome(s, "get cluster",
                    assisted_get_cluster_retrying(s->client, policy_of(s), "get cluster", retry_notify,
                                                  s->cluster_id, with_hosts, ret_status, &cluster, reterr));
        if (r < 0)
                return r;
        if (!cluster) {
                if (reterr)
                        *reterr = strdup("the service answered the cluster without a body");
                return -EBADMSG;
        }
        *ret = cluster;
        return 0;
}

typedef struct StageArgs {
        const char *infra_env_id;
        const char *host_id;
        const char *stage;
} StageArgs;

static int op_host_stage(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        StageArgs *a = userdata;

        return assisted_update_progress(c, a->infra_env_id, a->host_id, a->stage, NULL, ret_status, reterr);
}

int controller_service_host_stage(ControllerService *s, const char *infra_env_id, const char *host_id,
                                  const char *stage, char **reterr)
{
        StageArgs a = { .infra_env_id = infra_env_id, .host_id = host_id, .stage = stage };

        return call(s, "host progress update", op_host_stage, &a, NULL, reterr);
}

typedef struct OpArgs {
        ControllerService *s;
        AssistedOp op;
        json_object *body;
        json_object *answer;
} OpArgs;

static int op_cluster_call(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        OpArgs *a = userdata;

        json_object_put(a->answer);
        a->answer = NULL;
        return assisted_op_call(c, a->op, (char *[]){ (char *)a->s->cluster_id, NULL }, NULL, a->body,
                                ret_status, &a->answer, reterr);
}

static int cluster_call(ControllerService *s, const char *what, AssistedOp op, json_object *body,
                        json_object **ret, char **reterr)
{
        OpArgs a = { .s = s, .op = op, .body = body };
        int r;

        r = call(s, what, op_cluster_call, &a, NULL, reterr);
        if (r >= 0 && ret)
                *ret = TAKE_PTR(a.answer);
        json_object_put(a.answer);
        return r;
}

int controller_service_finalizing_stage(ControllerService *s, const char *stage, char **reterr)
{
        _cleanup_(json_object_putp) json_object *body = json_new_object();

        if (!body || json_add_string(body, "finalizing_stage", stage) < 0)
                return -ENOMEM;
        return cluster_call(s, "finalizing stage update", ASSISTED_OP_UPDATE_CLUSTER_FINALIZING_PROGRESS,
                            body, NULL, reterr);
}

int controller_service_operators(ControllerService *s, json_object **ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        int r;

        r = cluster_call(s, "monitored operators query", ASSISTED_OP_LIST_MONITORED_OPERATORS, NULL, &list,
                         reterr);
        if (r < 0)
                return r;
        if (!json_object_is_type(list, json_type_array)) {
                if (reterr)
                        *reterr = strdup("the service's monitored operators are not a list");
                return -EBADMSG;
        }
        *ret = TAKE_PTR(list);
        return 0;
}

int controller_service_report_operator(ControllerService *s, json_object *report, char **reterr)
{
        return cluster_call(s, "operator status report", ASSISTED_OP_REPORT_MONITORED_OPERATOR, report, NULL,
                            reterr);
}

int controller_service_ingress_ca(ControllerService *s, const char *pem, char **reterr)
{
        _cleanup_(json_object_putp) json_object *body = json_new_string(pem);

        if (!body)
                return -ENOMEM;
        return cluster_call(s, "ingress CA upload", ASSISTED_OP_UPLOAD_CLUSTER_INGRESS_CERT, body, NULL,
                            reterr);
}

int controller_service_complete(ControllerService *s, json_object *body, char **reterr)
{
        return cluster_call(s, "complete installation", ASSISTED_OP_COMPLETE_INSTALLATION, body, NULL,
                            reterr);
}

static int op_event(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        return assisted_op_call(c, ASSISTED_OP_TRIGGER_EVENT, (char *[]){ NULL }, NULL, userdata, ret_status,
                                NULL, reterr);
}

int controller_service_event(ControllerService *s, json_object *event, char **reterr)
{
        return call(s, "event", op_event, event, NULL, reterr);
}

typedef struct LogsArgs {
        ControllerService *s;
        const char *arg; /* the logs state, or the archive's path */
} LogsArgs;

static int op_logs_progress(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        LogsArgs *a = userdata;

        return assisted_update_cluster_logs_progress(c, a->s->cluster_id, a->arg, ret_status, reterr);
}

int controller_service_logs_progress(ControllerService *s, const char *state, char **reterr)
{
        LogsArgs a = { .s = s, .arg = state };

        return call(s, "cluster logs progress", op_logs_progress, &a, NULL, reterr);
}

static int op_upload_logs(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        LogsArgs *a = userdata;

        return assisted_upload_logs(c, a->s->cluster_id, "controller", NULL, NULL, a->arg, ret_status,
                                    reterr);
}

int controller_service_upload_logs(ControllerService *s, const char *path, char **reterr)
{
        LogsArgs a = { .s = s, .arg = path };

        return call(s, "controller logs upload", op_upload_logs, &a, NULL, reterr);
}

typedef struct DownloadArgs {
        const char *path;
        char *data;
        size_t len;
} DownloadArgs;

static int op_download(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        DownloadArgs *a = userdata;

        free(a->data);
        a->data = NULL;
        return assisted_download(c, a->path, BUF_MAX_HTTP_BODY, ret_status, &a->data, &a->len, reterr);
}

int controller_service_download(ControllerService *s, const char *kind, const char *file_name, char **ret,
                                size_t *ret_len, char **reterr)
{
        _cleanup_free_ char *cid = http_escape(s->cluster_id), *name = http_escape(file_name), *path = NULL,
                            *what = NULL;
        DownloadArgs a = {};
        int r;

        if (!cid || !name)
                return -ENOMEM;
        path = strdup_printf("/v2/clusters/%s/downloads/%s?file_name=%s", cid, kind, name);
        what = strdup_printf("download of %s", file_name);
        if (!path || !what)
                return -ENOMEM;
        a.path = path;
        r = call(s, what, op_download, &a, NULL, reterr);
        if (r < 0) {
                free(a.data);
                return r;
        }
        *ret = a.data;
        *ret_len = a.len;
        return 0;
}
