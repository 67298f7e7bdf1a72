/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "agent": computes the host ID, registers with assisted-service and runs
 * the instruction loop, in-process by default or in the upstream
 * next-step-runner container; re-registers whenever the loop ends.
 * "next_step_runner": the loop alone, for a given host ID (what the
 * upstream container runs).
 */
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"
#include "cleanup.h"
#include "config.h"
#include "hostexec.h"
#include "inventory/inventory.h"
#include "log.h"
#include "notify.h"
#include "podman-runner.h"
#include "register.h"
#include "runner.h"
#include "strutil.h"
#include "uuid.h"

#define CRASHED_RUNNER_WAIT (60 * 60 * USEC_PER_SEC)

static int parse(AgentProgram program, int argc, char **argv, AgentConfig *c)
{
        int r = agent_config_parse(program, argc, argv, c);

        if (r == 0)
                return 0; /* help */
        if (r < 0)
                return r == -ENOMEM ? 1 : 2;
        return -1;
}

static int check_required(const AgentConfig *c, bool need_host_id)
{
        /* the Go agent's fatal messages, exit 1 */
        if (isempty(c->url))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "Must provide a target URL");
        if (isempty(c->infra_env_id))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "infra-env-id must be provided");
        if (need_host_id && isempty(c->host_id))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "host-id must be provided");
        if (!c->token)
                log_warning("Agent Authentication Token not set");
        if (c->insecure)
                log_warning("Certificate verification is turned off. This is not recommended in production "
                            "environments");
        return 0;
}

static int host_id_of(const AgentConfig *c, char ret[static UUID_STRING_MAX])
{
        InventoryOptions o = { .dry_run = c->dry_run, .forced_mac = c->force_mac };

        if (c->dry_run && !isempty(c->force_id)) {
                snprintf(ret, UUID_STRING_MAX, "%s", c->force_id);
                return 0;
        }
        return inventory_host_id(&o, ret);
}

int agent_main(int argc, char **argv)
{
        _cleanup_(agent_config_done) AgentConfig c = {};
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        char host_id[UUID_STRING_MAX];
        int r;

        r = parse(PROGRAM_AGENT, argc, argv, &c);
        if (r >= 0)
                return r;
        (void)agent_config_setup_logging(&c, "agent", "agent_registration");
        if (check_required(&c, false) < 0)
                return 1;
        r = stop_on_signals();
        if (r < 0)
                return log_error_errno(r, "cannot install signal handlers: %m"), 1;
        r = host_exec_new(c.host_exec, HOST_NS_AGENT, &host);
        if (r < 0)
                return log_error_errno(r, "cannot prepare to run host commands (--host-exec=%s): %m",
                                       host_exec_mode_to_string(c.host_exec)),
                       1;

        r = host_id_of(&c, host_id);
        if (r < 0)
                return log_error_errno(r, "cannot determine the host ID: %m"), 1;
        log_set_field("HOST_ID", host_id);
        log_info("cradle agent %s starting: host %s, infra-env %s, steps %s", strna(c.agent_version),
                 host_id, c.infra_env_id, step_runner_mode_to_string(c.step_runner));

        for (;;) {
                _cleanup_(next_step_runner_command_done) NextStepRunnerCommand cmd = {};
                int status;

                if (agent_config_fake_rebooted(&c)) {
                        log_info("dry run: the fake reboot marker %s exists, stopping",
                                 c.fake_reboot_marker_path);
                        return 0;
                }
                r = agent_register(&c, host_id, &cmd);
                if (r == -ECANCELED)
                        break;
                if (r < 0)
                        return 1;

                if (c.step_runner == STEP_RUNNER_PODMAN) {
                        /* the container polls; this process waits for it */
                        AgentKeepalive *k = agent_watchdog_keepalive_begin();
                        agent_notify_ready("registered host %s, steps run in the next-step-runner container",
                                           host_id);
                        status = podman_runner_run(&c, &cmd, host);
                        agent_watchdog_keepalive_end(k);
                } else
                        status = runner_run(&c, cmd.infra_env_id, cmd.host_id, host);
                if (status == -ECANCELED || stop_requested())
                        break;
                if (status == -EINVAL || status == -EPERM || status == -ENOENT)
                        return 1; /* a setup error that will not heal (bad CA file) */
                if (status != 0) {
                        usec_t wait = cmd.retry_seconds > 0 ? (usec_t)cmd.retry_seconds * USEC_PER_SEC
                                                            : CRASHED_RUNNER_WAIT;
                        log_warning("the next step runner ended with %d, registering again in %.0fs", status,
                                    (double)wait / USEC_PER_SEC);
                        agent_notify_status("the next step runner ended with %d, registering again in %.0fs",
                                            status, (double)wait / USEC_PER_SEC);
                        if (agent_sleep(wait) < 0)
                                break;
                }
        }
        log_info("stopping");
        agent_notify_stopping();
        return 0;
}

int next_step_runner_main(int argc, char **argv)
{
        _cleanup_(agent_config_done) AgentConfig c = {};
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        int r;

        r = parse(PROGRAM_NEXT_STEP_RUNNER, argc, argv, &c);
        if (r >= 0)
                return r;
        (void)agent_config_setup_logging(&c, "next_step_runner", "agent_next_step_runner");
        if (check_required(&c, true) < 0)
                return 1;
        r = stop_on_signals();
        if (r < 0)
                return log_error_errno(r, "cannot install signal handlers: %m"), 1;
        r = host_exec_new(c.host_exec, HOST_NS_AGENT, &host);
        if (r < 0)
                return log_error_errno(r, "cannot prepare to run host commands: %m"), 1;
        log_set_field("HOST_ID", c.host_id);

        r = runner_run(&c, c.infra_env_id, c.host_id, host);
        if (r < 0 && r != -ECANCELED)
                return 1;
        return 0;
}
