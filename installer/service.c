/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "assisted/assisted.h"
#include "cleanup.h"
#include "installer/service.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static void retry_notify(const char *what, const char *error, unsigned retry, usec_t delay)
{
        log_info("%s failed (%s), retry %u in %.1f s", what, strna(error), retry,
                 (double)delay / (double)USEC_PER_SEC);
}

int service_call(Service *s, const char *what, ServiceOp op, void *userdata, char **reterr)
{
        return assisted_call_retrying(s->client, &s->retry, what, op, userdata, retry_notify, NULL, reterr);
}

typedef struct ProgressArgs {
        Service *s;
        const char *stage;
        const char *info;
} ProgressArgs;

static int op_progress(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        ProgressArgs *a = userdata;

        return assisted_update_progress(c, a->s->infra_env_id, a->s->host_id, a->stage, a->info, ret_status,
                                        reterr);
}

bool service_progress(Service *s, const char *stage, const char *info)
{
        _cleanup_free_ char *err = NULL;
        ProgressArgs a = { .s = s, .stage = stage, .info = info };
        int r;

        (void)log_set_field("STAGE", stage);
        log_info("Updating node installation stage: %s - %s", stage, strempty(info));
        /* every stage on stderr, also when the log goes elsewhere */
        if (!(log_get_targets() & LOG_TARGET_STDERR))
                fprintf(stderr, "installer: stage %s%s%s\n", stage, isempty(info) ? "" : " - ",
                        strempty(info));
        if (isempty(s->host_id))
                return false;
        r = service_call(s, "progress update", op_progress, &a, &err);
        if (r < 0) {
                log_error("Failed to update node installation stage, %s", err ? err : strerror(-r));
                return false;
        }
        return true;
}

typedef struct OtherProgressArgs {
        const char *infra_env_id;
        const char *host_id;
        const char *stage;
        const char *info;
} OtherProgressArgs;

static int op_other_progress(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        OtherProgressArgs *a = userdata;

        return assisted_update_progress(c, a->infra_env_id, a->host_id, a->stage, a->info, ret_status,
                                        reterr);
}

bool service_progress_for(Service *s, const char *infra_env_id, const char *host_id, const char *stage,
                          const char *info)
{
        _cleanup_free_ char *err = NULL;
        OtherProgressArgs a = {
                .infra_env_id = infra_env_id, .host_id = host_id, .stage = stage, .info = info
        };
        int r;

        log_info("Updating installation stage of host %s: %s - %s", host_id, stage, strempty(info));
        r = service_call(s, "progress update", op_other_progress, &a, &err);
        if (r < 0) {
                log_error("Failed to update node installation status of host %s, %s", host_id,
                          err ? err : strerror(-r));
                return false;
        }
        return true;
}

typedef struct DownloadArgs {
        Service *s;
        const char *name;
        char *data;
        size_t len;
} DownloadArgs;

static int op_ignition(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        DownloadArgs *a = userdata;

        free(a->data);
        a->data = NULL;
        return assisted_download_host_ignition(c, a->s->infra_env_id, a->s->host_id, ret_status, &a->data,
                                               &a->len, reterr);
}

static int op_file(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        DownloadArgs *a = userdata;

        free(a->data);
        a->data = NULL;
        return assisted_download_cluster_file(c, a->s->cluster_id, a->name, ret_status, &a->data, &a->len,
                                              reterr);
}

int service_download_file(Service *s, const char *name, char **ret, size_t *ret_len, char **reterr)
{
        DownloadArgs a = { .s = s, .name = name };
        int r;

        r = service_call(s, "file download", op_file, &a, reterr);
        if (r < 0) {
                free(a.data);
                return r;
        }
        *ret = a.data;
        *ret_len = a.len;
        return 0;
}

int service_download_ignition(Service *s, char **ret, size_t *ret_len, char **reterr)
{
        DownloadArgs a = { .s = s };
        int r;

        r = service_call(s, "ignition download", op_ignition, &a, reterr);
        if (r < 0) {
                free(a.data);
                return r;
        }
        *ret = a.data;
        *ret_len = a.len;
        return 0;
}

typedef struct JsonArgs {
        Service *s;
        const char *role;
        json_object *out;
} JsonArgs;

static int op_hosts(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        JsonArgs *a = userdata;

        json_object_put(a->out);
        a->out = NULL;
        return assisted_list_cluster_hosts(c, a->s->cluster_id, a->role, ret_status, &a->out, reterr);
}

int service_get_cluster(Service *s, json_object **ret, char **reterr)
{
        int r = assisted_get_cluster_retrying(s->client, &s->retry, "cluster query", retry_notify,
                                              s->cluster_id, false, NULL, ret, reterr);

        return r < 0 ? r : 0;
}

int service_get_cluster_hosts(Service *s, json_object **ret, char **reterr)
{
        int r = assisted_get_cluster_retrying(s->client, &s->retry, "cluster query", retry_notify,
                                              s->cluster_id, true, NULL, ret, reterr);

        return r < 0 ? r : 0;
}

int service_list_hosts(Service *s, const char *role, json_object **ret, char **reterr)
{
        JsonArgs a = { .s = s, .role = role };
        int r = service_call(s, "hosts query", op_hosts, &a, reterr);

        if (r < 0) {
                json_object_put(a.out);
                return r;
        }
        *ret = a.out;
        return 0;
}

typedef struct LogsArgs {
        Service *s;
        const char *state;
} LogsArgs;

static int op_logs(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        LogsArgs *a = userdata;

        return assisted_update_host_logs_progress(c, a->s->infra_env_id, a->s->host_id, a->state, ret_status,
                                                  reterr);
}

int service_logs_progress(Service *s, const char *state, char **reterr)
{
        LogsArgs a = { .s = s, .state = state };

        return service_call(s, "logs progress", op_logs, &a, reterr);
}

static int op_cluster_logs(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        LogsArgs *a = userdata;

        return assisted_update_cluster_logs_progress(c, a->s->cluster_id, a->state, ret_status, reterr);
}

int service_cluster_logs_progress(Service *s, const char *state, char **reterr)
{
        LogsArgs a = { .s = s, .state = state };

        return service_call(s, "cluster logs progress", op_cluster_logs, &a, reterr);
}

typedef struct UploadArgs {
        Service *s;
        const char *path;
} UploadArgs;

static int op_upload(AssistedClient *c, void *userdata, long *ret_status, char **reterr)
{
        UploadArgs *a = userdata;

        return assisted_upload_logs(c, a->s->cluster_id, "controller", NULL, NULL, a->path, ret_status,
                                    reterr);
}

int service_upload_controller_logs(Service *s, const char *path, char **reterr)
{
        UploadArgs a = { .s = s, .path = path };

        return service_call(s, "controller logs upload", op_upload, &a, reterr);
}
