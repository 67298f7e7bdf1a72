/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The upstream way of running the instruction loop: a privileged
 * next-step-runner container of the image the service names
 * (notes/agent.md §2.1), for hubs whose agent image must run the steps.
 */

#include "config.h"
#include "hostexec.h"
#include "register.h"

/* The exact upstream argv, NULL-terminated; allocated. */
char **podman_runner_argv(const AgentConfig *c, const NextStepRunnerCommand *cmd);

/* Runs the container in the foreground; returns its exit status, or a
 * negative errno when podman could not run. */
int podman_runner_run(const AgentConfig *c, const NextStepRunnerCommand *cmd, HostExec *host);
