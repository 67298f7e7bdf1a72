/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Step handlers: one per step_type, in a table. The dispatcher checks the
 * argument count; a handler validates its arguments against the swagger
 * model first (a failure is exit code -1 with the validation error, and
 * nothing runs), then does the work and fills a StepResult the way the Go
 * agent fills its reply: output = what the Go step printed on stdout,
 * error = its stderr, exit_code = its exit code.
 */

#include <stdbool.h>

#include "assisted/assisted-models.h"
#include "config.h"
#include "hostexec.h"

typedef struct StepContext {
        const AgentConfig *config;
        const char *host_id;
        const char *infra_env_id;
        const char *step_id;
        HostExec *host;
} StepContext;

typedef struct StepResult {
        int exit_code;
        char *output;
        char *error;
        /* the runner must end after this reply (a successful upgrade-agent) */
        bool end_runner;
} StepResult;

void step_result_done(StepResult *r);
/* Sets exit_code and a formatted error; returns 0 so handlers can
 * "return step_fail(ret, -1, ...)". */
int step_fail(StepResult *r, int exit_code, const char *fmt, ...) _printf_(3, 4);
/* Takes ownership of output. */
int step_succeed(StepResult *r, char *output);

typedef enum StepHandlerFlags {
        STEP_SINGLETON = 1 << 0, /* one at a time; a concurrent request answers 0 with empty output */
        STEP_QUIET_OUTPUT = 1 << 1, /* the output is not logged (free-network-addresses) */
} StepHandlerFlags;

typedef struct StepHandler {
        StepType type;
        int min_args, max_args;
        int (*run)(const StepContext *ctx, char *const *args, StepResult *ret);
        StepHandlerFlags flags;
} StepHandler;

/* NULL for types without an action (execute, next-step-runner) and unknown
 * ones. */
const StepHandler *step_handler_find(StepType type);

/* Runs one step: argument count, handler, and the reply fields. Never
 * fails: every problem becomes a StepResult as the Go agent reports it. */
void step_run(const StepContext *ctx, const char *step_type, char *const *args, StepResult *ret);

/* Runs a host command the way the Go agent's steps do: its stdout becomes
 * the output, its stderr the error (or Go's text when it could not start,
 * with exit code -1), its exit status the exit code. */
int step_host_command(const StepContext *ctx, char *const *argv, usec_t timeout, StepResult *ret);

/* The reply fields of a command that ran (exit code, 124 when it timed
 * out as timeout(1) reports it; stdout; stderr, or "exit status N" when it
 * failed silently): what step_host_command() does once the command ran.
 * Takes res's output buffers. */
void step_result_from_spawn(StepResult *ret, SpawnResult *res);

/* Runs one of cradle's own applets (argv[0] names it: "installer",
 * "logs_sender") from our executable where the Go agent runs a container
 * of the upstream image: the agent's environment, without its log target
 * (the applet picks its own, as in the container, so its stdout is the
 * reply) and with the pull secret token as PULL_SECRET_TOKEN. The result
 * as step_result_from_spawn(); exit code -1 when it could not start. */
int step_run_applet(const StepContext *ctx, char *const *argv, usec_t timeout, StepResult *ret);

/* The handlers (agent/steps/ *.c). */
extern const StepHandler step_inventory;
extern const StepHandler step_install;
extern const StepHandler step_logs_gather;
extern const StepHandler step_stop_installation;
extern const StepHandler step_connectivity_check;
extern const StepHandler step_free_network_addresses;
extern const StepHandler step_ntp_synchronizer;
extern const StepHandler step_domain_resolution;
extern const StepHandler step_verify_vips;
extern const StepHandler step_tang_connectivity_check;
extern const StepHandler step_api_vip_connectivity_check;
extern const StepHandler step_dhcp_lease_allocate;
extern const StepHandler step_installation_disk_speed_check;
extern const StepHandler step_container_image_availability;
extern const StepHandler step_upgrade_agent;
extern const StepHandler step_download_boot_artifacts;
extern const StepHandler step_reboot_for_reclaim;
