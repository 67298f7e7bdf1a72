/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The next-instruction loop (notes/agent.md §5): poll the service for the
 * host's instructions, start each step in its own thread (bounded), post
 * each reply as it completes, wait next_instruction_seconds, repeat.
 *
 * Returns 0 when the loop should end and the agent re-register: the
 * service said post_step_action "exit", the error back-off ran out, a
 * successful upgrade-agent, or the simulated reboot of a dry run.
 * -ECANCELED when a stop was requested; another negative errno for a fatal
 * setup error (an unusable CA file).
 */

#include "config.h"
#include "hostexec.h"

int runner_run(const AgentConfig *config, const char *infra_env_id, const char *host_id, HostExec *host);
