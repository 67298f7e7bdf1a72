/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Registration (notes/agent.md §4): POST /v2/infra-envs/{id}/hosts until
 * the service accepts the host, with the Go agent's answers to each
 * outcome.
 */

#include <stdint.h>

#include "config.h"

typedef struct json_object json_object;

typedef struct NextStepRunnerCommand {
        char *command;
        char **args;
        int64_t retry_seconds;
        /* args[0] decoded (NextStepCmdRequest) */
        char *agent_version;
        char *host_id;
        char *infra_env_id;
} NextStepRunnerCommand;

void next_step_runner_command_done(NextStepRunnerCommand *c);

/* Parses HostRegistrationResponse.next_step_runner_command; -ENODATA when
 * it is absent or null, -EBADMSG when malformed (reterr says why). */
int next_step_runner_command_parse(json_object *host, NextStepRunnerCommand *ret, char **reterr);

/* Registers, retrying as the Go agent does: other errors every
 * --interval seconds; 401/403/404/409 block (until stopped, or for
 * --terminal-error-block seconds, after which it tries again); a response
 * without next_step_runner_command waits an hour. Returns 0 with the
 * command, or -ECANCELED when a stop was requested. */
int agent_register(const AgentConfig *c, const char *host_id, NextStepRunnerCommand *ret);
