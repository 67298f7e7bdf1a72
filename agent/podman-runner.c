/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "cleanup.h"
#include "log.h"
#include "podman-runner.h"
#include "shell.h"
#include "strutil.h"

char **podman_runner_argv(const AgentConfig *c, const NextStepRunnerCommand *cmd)
{
        static const char *const head[] = {
                "podman",
                "run",
                "--rm",
                "-ti",
                "--privileged",
                "--pid=host",
                "--uts=host",
                "--net=host",
                "--pids-limit=0",
                "-v",
                "/dev:/dev:rw",
                "-v",
                "/opt:/opt:rw",
                "-v",
                "/run/systemd/journal/socket:/run/systemd/journal/socket",
                "-v",
                "/var/log:/var/log:rw",
                "-v",
                "/run/media:/run/media:rw",
                "-v",
                "/etc/pki:/etc/pki",
        };
        static const char *const envs[] = {
                "PULL_SECRET_TOKEN", "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF",
                "HTTP_PROXY",        "HTTPS_PROXY",     "NO_PROXY",
                "http_proxy",        "https_proxy",     "no_proxy",
        };
        _cleanup_strv_free_ char **argv = NULL;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(head); i++)
                r = strv_extend(&argv, head[i]);
        if (r >= 0 && !isempty(c->cacert)) {
                r = strv_extend(&argv, "-v");
                if (r >= 0)
                        r = strv_extendf(&argv, "%s:%s", c->cacert, c->cacert);
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(envs); i++) {
                r = strv_extend(&argv, "--env");
                if (r >= 0)
                        r = strv_extend(&argv, envs[i]);
        }
        if (r >= 0)
                r = strv_extend(&argv, "--name");
        if (r >= 0)
                r = strv_extend(&argv, "next-step-runner");
        /* the image the service names: a service that wants a new agent gets it here */
        if (r >= 0)
                r = strv_extend(&argv, cmd->agent_version);
        if (r >= 0)
                r = strv_extend(&argv, "next_step_runner");
        if (r >= 0)
                r = strv_extend(&argv, "--url");
        if (r >= 0)
                r = strv_extend(&argv, c->url);
        if (r >= 0)
                r = strv_extend(&argv, "--infra-env-id");
        if (r >= 0)
                r = strv_extend(&argv, cmd->infra_env_id);
        if (r >= 0)
                r = strv_extend(&argv, "--host-id");
        if (r >= 0)
                r = strv_extend(&argv, cmd->host_id);
        if (r >= 0)
                r = strv_extend(&argv, "--agent-version");
        if (r >= 0)
                r = strv_extend(&argv, cmd->agent_version);
        if (r >= 0)
                r = strv_extendf(&argv, "--insecure=%s", c->insecure ? "true" : "false");
        if (r >= 0 && !isempty(c->cacert)) {
                r = strv_extend(&argv, "--cacert");
                if (r >= 0)
                        r = strv_extend(&argv, c->cacert);
        }
        if (r < 0)
                return NULL;
        return TAKE_PTR(argv);
}

static void log_line(void *userdata, const char *line, bool is_stderr)
{
        (void)userdata;
        (void)is_stderr;
        log_debug("next-step-runner: %s", line);
}

int podman_runner_run(const AgentConfig *c, const NextStepRunnerCommand *cmd, HostExec *host)
{
        _cleanup_strv_free_ char **argv = podman_runner_argv(c, cmd);
        _cleanup_free_ char *text = NULL;
        char *rm[] = { (char *)"podman", (char *)"rm", (char *)"-i", (char *)"next-step-runner", NULL };
        SpawnOptions rmo = { .argv = rm, .timeout = 60 * USEC_PER_SEC };
        SpawnOptions o = {
                .argv = argv, .merge_output = true, .on_line = log_line, .output_max = 64 * 1024
        };
        SpawnResult res = {};
        int r;

        if (!argv)
                return log_oom();
        /* a leftover container of the same name would make "run" fail */
        if (host_exec_run(host, &rmo, &res) >= 0)
                spawn_result_done(&res);

        text = shell_join(argv);
        log_info("starting the next step runner: %s", strna(text));
        r = host_exec_run(host, &o, &res);
        if (r < 0)
                return log_error_errno(r, "cannot run podman for the next step runner: %m");
        r = res.exit_status;
        spawn_result_done(&res);
        return r;
}
