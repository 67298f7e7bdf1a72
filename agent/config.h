/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The command line shared by "agent" and "next_step_runner": every flag of
 * the Go programs (notes/agent.md §1.1) with its name, default and
 * environment default, plus cradle's own options, which the Go agent does
 * not have and assisted-service never sends.
 */

#include <stdbool.h>

#include "hostexec.h"
#include "timeutil.h"

typedef enum StepRunnerMode {
        STEP_RUNNER_INPROCESS, /* the loop runs inside the agent (default) */
        STEP_RUNNER_PODMAN, /* the upstream way: a next-step-runner container */
        _STEP_RUNNER_MODE_MAX,
        _STEP_RUNNER_MODE_INVALID = -22,
} StepRunnerMode;

typedef struct AgentConfig {
        /* the Go flags */
        char *url;
        char *infra_env_id;
        char *agent_version;
        int interval;
        char *cacert;
        bool insecure;
        char *host_id;
        bool journal_logging;
        bool text_logging;
        bool stdout_logging;
        bool dry_run;
        char *force_id;
        char *force_mac;
        char *force_hostname;
        char *forced_ipv4;
        char *fake_reboot_marker_path;

        /* cradle's */
        StepRunnerMode step_runner;
        HostExecMode host_exec;
        int install_mode; /* InstallMode (agent/steps/install.h): auto, podman, inprocess */
        int max_concurrent_steps;
        double backoff_max_elapsed; /* seconds; the Go library's 15 min */
        double transport_retry_delay; /* seconds; the Go transport's 2 s */
        double block_seconds; /* seconds a terminal registration error blocks; 0: forever */
        char *log_level;
        /* interface name globs the network steps treat as physical NICs
         * (labs and tests whose hosts are namespaces joined by veth pairs);
         * empty in production */
        char *lab_nics;
        char *lab_disks; /* --lab-disks: the disks of a simulated host */

        /* from the environment */
        char *token; /* PULL_SECRET_TOKEN */
} AgentConfig;

typedef enum AgentProgram {
        PROGRAM_AGENT,
        PROGRAM_NEXT_STEP_RUNNER,
} AgentProgram;

/* Parses argv as the named program would. Returns 1 to run, 0 when --help
 * was printed (exit 0), or a negative errno after printing the error (the
 * caller exits 2 for usage errors, 1 for fatal ones as the Go agent). */
int agent_config_parse(AgentProgram program, int argc, char **argv, AgentConfig *ret);
void agent_config_done(AgentConfig *c);
/* A deep copy (for step threads that may outlive the caller's config). */
int agent_config_copy(const AgentConfig *c, AgentConfig *ret);

/* Sets up logging as the Go programs do: journald with TAG=agent on by
 * default, /var/log/<name>.log with --with-text-logging, stdout with
 * --with-stdout-logging. */
int agent_config_setup_logging(const AgentConfig *c, const char *identifier, const char *text_log_name);

/* The dry-run marker appeared: the simulated host "rebooted". */
bool agent_config_fake_rebooted(const AgentConfig *c);

const char *step_runner_mode_to_string(StepRunnerMode m);
