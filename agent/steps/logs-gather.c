/* SPDX-License-Identifier: Apache-2.0 */
/*
 * logs-gather: collect this host's logs and upload them to the service
 * (notes/agent.md §11). Sent to hosts in error or cancelled.
 *
 * Argument: LogsGatherCmdRequest {cluster_id, infra_env_id, host_id,
 * bootstrap, installer_gather, master_ips}.
 *
 * The Go agent runs `timeout 1h podman run ... <agent image> logs_sender
 * -url ... -cluster-id ... ...` and replies with its stdout and exit code.
 * cradle runs the same logs_sender command line from its own executable
 * (no container, no image): a separate process, so a crash or a hang while
 * collecting cannot take the agent with it, with the same one-hour limit.
 * The reply is the same: logs_sender's stdout, its exit status.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/config.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "step-util.h"
#include "strutil.h"

#define LOGS_GATHER_TIMEOUT (60 * 60 * USEC_PER_SEC) /* the Go step's `timeout 1h` */

static int push_bool(char ***argv, const char *flag, bool v)
{
        return strv_extendf(argv, "-%s=%s", flag, v ? "true" : "false");
}

/* master_ips as logs_sender's -masters-ips value: comma-separated */
static char *join_master_ips(json_object *req)
{
        json_object *ips = model_get(req, "master_ips");
        _cleanup_strv_free_ char **l = NULL;

        if (!ips || !json_object_is_type(ips, json_type_array))
                return strdup("");
        for (size_t i = 0; i < json_object_array_length(ips); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(ips, i));
                if (!isempty(s) && strv_extend(&l, s) < 0)
                        return NULL;
        }
        return l ? strv_join(l, ",") : strdup("");
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        const AgentConfig *c = ctx->config;
        _cleanup_(json_object_putp) json_object *req = NULL;
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *masters = NULL;
        int r;

        r = step_parse_arg(args[0], &model_logs_gather_cmd_request, ret, &req);
        if (r <= 0)
                return r;
        masters = join_master_ips(req);
        if (!masters)
                return -ENOMEM;

        if (strv_extend(&argv, "logs_sender") < 0 || strv_extendf(&argv, "-url=%s", c->url) < 0 ||
            strv_extendf(&argv, "-cluster-id=%s", model_get_string(req, "cluster_id")) < 0 ||
            strv_extendf(&argv, "-host-id=%s", model_get_string(req, "host_id")) < 0 ||
            strv_extendf(&argv, "-infra-env-id=%s", model_get_string(req, "infra_env_id")) < 0 ||
            push_bool(&argv, "insecure", c->insecure) < 0 ||
            push_bool(&argv, "bootstrap", model_get_bool(req, "bootstrap")) < 0 ||
            push_bool(&argv, "with-installer-gather-logging", model_get_bool(req, "installer_gather")) < 0)
                return -ENOMEM;
        if (!isempty(masters) && strv_extendf(&argv, "-masters-ips=%s", masters) < 0)
                return -ENOMEM;
        if (!isempty(c->cacert) && strv_extendf(&argv, "-cacert=%s", c->cacert) < 0)
                return -ENOMEM;

        log_info("logs-gather: running logs_sender for cluster %s", model_get_string(req, "cluster_id"));
        /* exit 124 when the hour is up, as `timeout` */
        return step_run_applet(ctx, argv, LOGS_GATHER_TIMEOUT, ret);
}

const StepHandler step_logs_gather = {
        .type = STEP_LOGS_GATHER,
        .min_args = 1,
        .max_args = 1,
        .run = run,
        .flags = STEP_SINGLETON,
};
