/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "assisted/assisted.h"
#include "buf.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "notify.h"
#include "register.h"
#include "strutil.h"
#include "uuid.h"

#define INCOMPATIBLE_SERVER_WAIT (60 * 60 * USEC_PER_SEC)

void next_step_runner_command_done(NextStepRunnerCommand *c)
{
        free(c->command);
        strv_free(c->args);
        free(c->agent_version);
        free(c->host_id);
        free(c->infra_env_id);
        *c = (NextStepRunnerCommand){};
}

static const JsonDispatch command_table[] = {
        { "command", json_dispatch_string, offsetof(NextStepRunnerCommand, command), 0 },
        { "args", json_dispatch_strv, offsetof(NextStepRunnerCommand, args), JSON_NULLABLE },
        { "retry_seconds", json_dispatch_int64, offsetof(NextStepRunnerCommand, retry_seconds), 0 },
        {},
};

static const JsonDispatch request_table[] = {
        { "agent_version", json_dispatch_string, offsetof(NextStepRunnerCommand, agent_version),
          JSON_MANDATORY },
        { "host_id", json_dispatch_string, offsetof(NextStepRunnerCommand, host_id), JSON_MANDATORY },
        { "infra_env_id", json_dispatch_string, offsetof(NextStepRunnerCommand, infra_env_id),
          JSON_MANDATORY },
        {},
};

int next_step_runner_command_parse(json_object *host, NextStepRunnerCommand *ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *request = NULL;
        json_object *cmd = json_get(host, "next_step_runner_command");
        NextStepRunnerCommand c = {};
        int r;

        if (!cmd)
                return -ENODATA;
        r = json_dispatch(cmd, command_table, &c, 0, reterr);
        if (r < 0)
                goto fail;
        if (strv_length(c.args) < 1) {
                if (reterr)
                        *reterr = strdup("next_step_runner_command has no arguments");
                r = -EBADMSG;
                goto fail;
        }
        r = json_parse(c.args[0], strlen(c.args[0]), BUF_MAX_SMALL_FILE, &request, reterr);
        if (r < 0)
                goto fail;
        r = json_dispatch(request, request_table, &c, 0, reterr);
        if (r < 0)
                goto fail;
        if (!uuid_is_valid(c.host_id) || !uuid_is_valid(c.infra_env_id)) {
                if (reterr)
                        *reterr = strdup("next_step_runner_command: host_id and infra_env_id must be UUIDs");
                r = -EBADMSG;
                goto fail;
        }
        *ret = c;
        return 0;
fail:
        next_step_runner_command_done(&c);
        return r;
}

static void on_retry(void *userdata, const char *method, const char *url, unsigned attempt,
                     unsigned attempts, usec_t delay, const char *reason)
{
        (void)userdata;
        log_info("Request will be retried: %s %s, attempt %u of %u in %.2fs (%s)", method, url, attempt,
                 attempts, (double)delay / USEC_PER_SEC, reason);
}

static int block(const AgentConfig *c)
{
        if (c->block_seconds > 0)
                return agent_sleep((usec_t)(c->block_seconds * USEC_PER_SEC));
        while (agent_sleep(USEC_INFINITY / 2) >= 0)
                ;
        return -ECANCELED;
}

int agent_register(const AgentConfig *c, const char *host_id, NextStepRunnerCommand *ret)
{
        for (;;) {
                _cleanup_(assisted_client_freep) AssistedClient *client = NULL;
                _cleanup_(json_object_putp) json_object *host = NULL;
                _cleanup_free_ char *err = NULL;
                HttpRetryPolicy retry = HTTP_RETRY_GO_AGENT;
                AssistedClientOptions o = {
                        .url = c->url,
                        .ca_file = c->cacert,
                        .insecure = c->insecure,
                        .token = c->token,
                        .agent_version = c->agent_version,
                        .on_retry = on_retry,
                };
                long status = 0;
                int r;

                if (stop_requested())
                        return -ECANCELED;

                retry.base_delay = (usec_t)(c->transport_retry_delay * USEC_PER_SEC);
                retry.max_delay = retry.base_delay * 5;
                o.retry = retry;
                /* every attempt is a new session, as the Go agent's */
                r = assisted_client_new(&o, &client, &err);
                if (r < 0)
                        return log_error_errno(r, "cannot create the service client: %s", strna(err));

                log_info("Registering host %s with infra-env %s", host_id, c->infra_env_id);
                agent_notify_status("registering host %s with infra-env %s", host_id, c->infra_env_id);
                r = assisted_register_host(client, c->infra_env_id, host_id, c->agent_version, &status,
                                           &host, &err);
                if (r >= 0) {
                        _cleanup_free_ char *perr = NULL;
                        r = next_step_runner_command_parse(host, ret, &perr);
                        if (r >= 0) {
                                log_info("Host %s registered, status %s", host_id,
                                         strna(json_get_string(host, "status")));
                                return 0;
                        }
                        if (r == -ENODATA) {
                                log_warning("Incompatible server version, going to retry in 1h0m0s");
                                r = agent_sleep(INCOMPATIBLE_SERVER_WAIT);
                        } else {
                                log_warning("Error registering host: malformed registration response: %s",
                                            strna(perr));
                                r = agent_sleep((usec_t)c->interval * USEC_PER_SEC);
                        }
                        if (r < 0)
                                return -ECANCELED;
                        continue;
                }

                switch (status) {
                case 401:
                        log_error("user is not authenticated to register host %s, will not retry: %s",
                                  host_id, strna(err));
                        break;
                case 403:
                        log_error("host %s is not allowed to register (forbidden), will not retry: %s",
                                  host_id, strna(err));
                        break;
                case 404:
                        log_error("infra-env id %s does not exist, or user is not authorized, will not "
                                  "retry: %s",
                                  c->infra_env_id, strna(err));
                        break;
                case 409:
                        log_error("cluster cannot accept new hosts in its current state, will not retry: %s",
                                  strna(err));
                        break;
                default:
                        log_warning_errno(r, "Error registering host: %s", strna(err));
                        if (agent_sleep((usec_t)c->interval * USEC_PER_SEC) < 0)
                                return -ECANCELED;
                        continue;
                }
                /* terminal answers: do not hammer the service */
                agent_notify_status("registration refused (HTTP %ld), not retrying", status);
                if (block(c) < 0)
                        return -ECANCELED;
        }
}
