/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "agent/steps/install.h"
#include "goflags.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

static const char *const runner_mode_names[_STEP_RUNNER_MODE_MAX] = {
        [STEP_RUNNER_INPROCESS] = "inprocess",
        [STEP_RUNNER_PODMAN] = "podman",
};

const char *step_runner_mode_to_string(StepRunnerMode m)
{
        return m >= 0 && m < _STEP_RUNNER_MODE_MAX ? runner_mode_names[m] : NULL;
}

static StepRunnerMode step_runner_mode_from_string(const char *s)
{
        for (int i = 0; s && i < _STEP_RUNNER_MODE_MAX; i++)
                if (streq(s, runner_mode_names[i]))
                        return (StepRunnerMode)i;
        return _STEP_RUNNER_MODE_INVALID;
}

void agent_config_done(AgentConfig *c)
{
        free(c->url);
        free(c->infra_env_id);
        free(c->agent_version);
        free(c->cacert);
        free(c->host_id);
        free(c->force_id);
        free(c->force_mac);
        free(c->force_hostname);
        free(c->forced_ipv4);
        free(c->fake_reboot_marker_path);
        free(c->log_level);
        free(c->lab_nics);
        free(c->lab_disks);
        erase_and_free(c->token);
        *c = (AgentConfig){};
}

int agent_config_copy(const AgentConfig *c, AgentConfig *ret)
{
        AgentConfig n = *c;
        bool ok = true;

        /* the scalars are copied above; each string gets its own copy */
#define DUP(field) (n.field = NULL, ok = ok && (!c->field || (n.field = strdup(c->field))))
        DUP(url);
        DUP(infra_env_id);
        DUP(agent_version);
        DUP(cacert);
        DUP(host_id);
        DUP(force_id);
        DUP(force_mac);
        DUP(force_hostname);
        DUP(forced_ipv4);
        DUP(fake_reboot_marker_path);
        DUP(log_level);
        DUP(lab_nics);
        DUP(lab_disks);
        DUP(token);
#undef DUP
        if (!ok) {
                agent_config_done(&n);
                return -ENOMEM;
        }
        *ret = n;
        return 0;
}

int agent_config_parse(AgentProgram program, int argc, char **argv, AgentConfig *ret)
{
        _cleanup_free_ char *step_runner = NULL, *host_exec = NULL, *install_mode = NULL;
        AgentConfig c = {};
        const char *prog = program == PROGRAM_AGENT ? "agent" : "next_step_runner";
        int optind, r;
        const GoFlag flags[] = {
                { "url", GOFLAG_STRING, &c.url, NULL, "The URL of the assisted-service (required)" },
                { "infra-env-id", GOFLAG_STRING, &c.infra_env_id, NULL, "The infra-env ID (required)" },
                { "agent-version", GOFLAG_STRING, &c.agent_version, NULL,
                  "Discovery agent version (the agent image reference)" },
                { "interval", GOFLAG_INT, &c.interval, "60",
                  "Seconds between registration attempts after an error" },
                { "cacert", GOFLAG_STRING, &c.cacert, NULL,
                  "PEM file of a CA for the service, added to the system trust" },
                { "insecure", GOFLAG_BOOL, &c.insecure, "false",
                  "Do not verify the service's TLS certificate" },
                { "host-id", GOFLAG_STRING, &c.host_id, NULL,
                  "The host ID (next_step_runner; the agent computes its own)" },
                { "with-journal-logging", GOFLAG_BOOL, &c.journal_logging, "true", "Log to journald" },
                { "with-text-logging", GOFLAG_BOOL, &c.text_logging, "false",
                  "Log to /var/log/<program>.log" },
                { "with-stdout-logging", GOFLAG_BOOL, &c.stdout_logging, "false", "Log to stdout" },
                { "dry-run", GOFLAG_BOOL, &c.dry_run, "false", "Dry run: simulate a host (load tests)",
                  "DRY_ENABLE", "DRYCONFIG_DRY_ENABLE" },
                { "force-id", GOFLAG_STRING, &c.force_id, NULL, "Dry run: the host ID to use", "DRY_HOST_ID",
                  "DRYCONFIG_DRY_HOST_ID" },
                { "force-mac", GOFLAG_STRING, &c.force_mac, NULL, "Dry run: the MAC address to report",
                  "DRY_FORCED_MAC_ADDRESS", "DRYCONFIG_DRY_FORCED_MAC_ADDRESS" },
                { "force-hostname", GOFLAG_STRING, &c.force_hostname, NULL,
                  "Dry run: the hostname to report", "DRY_FORCED_HOSTNAME",
                  "DRYCONFIG_DRY_FORCED_HOSTNAME" },
                { "forced-ipv4", GOFLAG_STRING, &c.forced_ipv4, NULL, "Dry run: the IPv4 address to report",
                  "DRY_FORCED_HOST_IPV4", "DRYCONFIG_DRY_FORCED_HOST_IPV4" },
                { "fake-reboot-marker-path", GOFLAG_STRING, &c.fake_reboot_marker_path, NULL,
                  "Dry run: stop when this file appears (the simulated reboot)",
                  "DRY_FAKE_REBOOT_MARKER_PATH", "DRYCONFIG_DRY_FAKE_REBOOT_MARKER_PATH" },
                /* cradle's own */
                { "step-runner", GOFLAG_STRING, &step_runner, "inprocess",
                  "cradle: run the instruction loop 'inprocess', or 'podman' in a next-step-runner "
                  "container "
                  "as the Go agent does",
                  "CRADLE_STEP_RUNNER" },
                { "host-exec", GOFLAG_STRING, &host_exec, "auto",
                  "cradle: run host commands 'direct', 'enter' PID 1's namespaces, or 'auto'-detect",
                  "CRADLE_HOST_EXEC" },
                { "install-mode", GOFLAG_STRING, &install_mode, "auto",
                  "cradle: run the install step's installer with 'podman' (the upstream image), 'inprocess' "
                  "(cradle's own), or 'auto' (in-process when the installer image is the agent's own image)",
                  "CRADLE_INSTALL_MODE" },
                { "max-concurrent-steps", GOFLAG_INT, &c.max_concurrent_steps, "32",
                  "cradle: steps that run at the same time" },
                { "backoff-max-elapsed", GOFLAG_DOUBLE, &c.backoff_max_elapsed, "900",
                  "cradle: seconds of failed instruction polls before re-registering" },
                { "transport-retry-delay", GOFLAG_DOUBLE, &c.transport_retry_delay, "2",
                  "cradle: base delay in seconds of the HTTP transport's retries" },
                { "terminal-error-block", GOFLAG_DOUBLE, &c.block_seconds, "0",
                  "cradle: seconds a 401/403/404/409 registration answer blocks (0: until stopped, as the "
                  "Go "
                  "agent)" },
                { "log-level", GOFLAG_STRING, &c.log_level, "info", "cradle: debug, info, warning or error",
                  "CRADLE_LOG_LEVEL" },
                { "lab-nics", GOFLAG_STRING, &c.lab_nics, NULL,
                  "cradle, labs and tests only: comma-separated interface name globs (\"veth*,nic0\") that "
                  "connectivity-check uses as outgoing NICs like physical ones, bonds and VLANs; the Go "
                  "agent skips virtual links such as veth pairs between network namespaces",
                  "CRADLE_LAB_NICS" },
                { "lab-disks", GOFLAG_STRING, &c.lab_disks, NULL,
                  "cradle, labs and tests only: comma-separated block device names (\"loop3,loop7\"): the "
                  "inventory lists these and no other disk, loop devices included (the Go agent lists no "
                  "loop "
                  "device), so that hosts simulated on one machine each have a disk of their own",
                  "CRADLE_LAB_DISKS" },
                {},
        };
        const char *synopsis =
                program == PROGRAM_AGENT
                        ? "Registers this host with assisted-service and runs the steps it sends.\n"
                          "Same flags as the Go agent; PULL_SECRET_TOKEN and the proxy variables come "
                          "from the environment."
                        : "Polls assisted-service for the steps of a registered host and runs them.";

        r = goflags_parse(prog, synopsis, flags, argc, argv, &optind);
        if (r <= 0) {
                agent_config_done(&c);
                goflags_free(flags);
                return r;
        }
        if (optind < argc) {
                fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
                agent_config_done(&c);
                goflags_free(flags);
                return -EINVAL;
        }

        c.step_runner = step_runner_mode_from_string(step_runner);
        c.host_exec = host_exec_mode_from_string(host_exec);
        c.install_mode = install_mode_from_string(install_mode);
        if (c.step_runner < 0 || c.host_exec < 0 || c.install_mode < 0 || c.max_concurrent_steps < 1 ||
            c.interval < 0 || log_level_from_string(c.log_level) < 0) {
                fprintf(stderr,
                        "%s: invalid --step-runner, --host-exec, --install-mode, --max-concurrent-steps, "
                        "--interval or --log-level value\n",
                        prog);
                agent_config_done(&c);
                goflags_free(flags);
                return -EINVAL;
        }
        free(step_runner);
        free(host_exec);
        free(install_mode);
        step_runner = host_exec = install_mode = NULL;

        if (getenv("PULL_SECRET_TOKEN") && !isempty(getenv("PULL_SECRET_TOKEN"))) {
                c.token = strdup(getenv("PULL_SECRET_TOKEN"));
                if (!c.token) {
                        agent_config_done(&c);
                        return -ENOMEM;
                }
                (void)redact_register_secret(c.token);
        }

        /* the values now belong to c; the flag table only pointed at them */
        *ret = c;
        return 1;
}

int agent_config_setup_logging(const AgentConfig *c, const char *identifier, const char *text_log_name)
{
        unsigned targets = 0;
        int r;

        log_setup(identifier);
        log_set_max_level(log_level_from_string(c->log_level));

        if (c->journal_logging)
                targets |= LOG_TARGET_JOURNAL;
        if (c->stdout_logging)
                targets |= LOG_TARGET_STDOUT;
        /* never silent: without journal, stdout or a text log, stderr */
        log_set_default_targets(targets, c->text_logging ? 0 : LOG_TARGET_STDERR);

        log_set_field("TAG", "agent");
        log_set_field("DRY_AGENT_ID", c->dry_run ? strempty(c->force_id) : "");
        log_set_field("CRADLE_VERB", identifier);
        if (c->infra_env_id)
                log_set_field("INFRA_ENV_ID", c->infra_env_id);

        if (c->text_logging) {
                _cleanup_free_ char *path = strdup_printf("/var/log/%s.log", text_log_name);
                if (!path)
                        return -ENOMEM;
                r = log_open_file(path);
                if (r < 0)
                        return log_warning_errno(r, "cannot open text log '%s', ignoring: %m", path);
        }
        return 0;
}

bool agent_config_fake_rebooted(const AgentConfig *c)
{
        return c->dry_run && !isempty(c->fake_reboot_marker_path) &&
               access(c->fake_reboot_marker_path, F_OK) == 0;
}
