/* SPDX-License-Identifier: Apache-2.0 */
/*
 * install: validates the InstallCmdRequest as the Go agent does
 * (install-request.c), then runs the installer: the upstream image with
 * podman, or cradle's own installer (agent/steps/install.h says which and
 * why).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/steps.h"
#include "agent/steps/install.h"
#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "log.h"
#include "shell.h"
#include "strutil.h"

#define NM_CONNECTIONS_DIR "/proc/1/root/etc/NetworkManager/system-connections"
#define AGENT_TUI_LOG_FILE "/var/log/agent/agent-tui.log"
#define AGENT_TUI_LOG_DIR "/var/log/agent"

/* ---- running it ----------------------------------------------------------------- */

/* The agent-based installer's TUI case: NetworkManager keyfiles made in
 * the TUI (after /var/log/agent was created) are copied to the new
 * system. */
static bool manual_network_config(void)
{
        _cleanup_closedir_ DIR *d = NULL;
        struct statx stx;
        struct dirent *de;

        if (access(AGENT_TUI_LOG_FILE, F_OK) < 0) {
                log_info("Agent TUI log file not found, skipping manual network config detection");
                return false;
        }
        if (statx(AT_FDCWD, AGENT_TUI_LOG_DIR, 0, STATX_BTIME, &stx) < 0 || !(stx.stx_mask & STATX_BTIME))
                return false;
        d = opendir(NM_CONNECTIONS_DIR);
        if (!d)
                return false;
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = strdup_printf("%s/%s", NM_CONNECTIONS_DIR, de->d_name),
                                    *data = NULL;
                struct stat st;
                if (!p || stat(p, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (st.st_mtim.tv_sec < stx.stx_btime.tv_sec)
                        continue;
                if (read_full_file(p, BUF_MAX_SMALL_FILE, &data, NULL) >= 0 &&
                    strstr(data, "[connection]")) {
                        log_info("Found manually-created NetworkManager keyfile: %s", p);
                        return true;
                }
        }
        return false;
}

static int run_host_argv(const StepContext *ctx, char *const *argv, usec_t timeout, SpawnResult *ret)
{
        SpawnOptions o = { .argv = argv, .timeout = timeout };

        return host_exec_run(ctx->host, &o, ret);
}

/* "podman images --quiet IMAGE", then "timeout 600 podman pull IMAGE" x3. */
static int ensure_image(const StepContext *ctx, const char *image, char **reterr)
{
        char *images[] = { (char *)"podman", (char *)"images", (char *)"--quiet", (char *)image, NULL };
        char *pull[] = { (char *)"timeout", (char *)"600", (char *)"podman",
                         (char *)"pull",    (char *)image, NULL };
        int r;

        {
                _cleanup_spawn_result_ SpawnResult res = {};
                r = run_host_argv(ctx, images, 0, &res);
                if (r >= 0 && res.exit_status == 0 && !isempty(res.out))
                        return 0;
        }
        for (unsigned i = 0; i < 3; i++) {
                _cleanup_spawn_result_ SpawnResult res = {};
                free(*reterr);
                *reterr = NULL;
                log_info("pulling the installer image %s", image);
                r = run_host_argv(ctx, pull, 0, &res);
                if (r < 0)
                        *reterr = strdup_printf(
                                "pulling the installer image %s exited with non-zero exit code -1: \n %s",
                                image, strerror(-r));
                else if (res.exit_status == 0)
                        return 0;
                else if (res.exit_status == 124)
                        *reterr = strdup_printf("pulling the installer image %s timed out after 600 seconds",
                                                image);
                else
                        *reterr = strdup_printf(
                                "pulling the installer image %s exited with non-zero exit code %d: %s\n %s",
                                image, res.exit_status, strempty(res.out), strempty(res.err));
        }
        return -EIO;
}

static int run_podman(const StepContext *ctx, const InstallRequest *req, bool copy_network, StepResult *ret)
{
        _cleanup_free_ char *cmd = install_podman_command(req, ctx->config, copy_network), *err = NULL;
        char *argv[] = { (char *)"sh", (char *)"-c", NULL, NULL };

        if (!cmd)
                return -ENOMEM;
        if (ensure_image(ctx, req->installer_image, &err) < 0)
                return step_fail(ret, 2, "%s", strna(err));
        argv[2] = cmd;
        log_info("starting the installer: %s", cmd);
        return step_host_command(ctx, argv, 0, ret);
}

/* cradle's installer, from our own executable, with the same arguments. */
static int run_inprocess(const StepContext *ctx, const InstallRequest *req, bool copy_network,
                         StepResult *ret)
{
        const AgentConfig *c = ctx->config;
        _cleanup_strv_free_ char **args = install_installer_argv(req, c, copy_network), **argv = NULL;
        _cleanup_free_ char *line = NULL;

        if (!args || strv_extend(&argv, "installer") < 0)
                return -ENOMEM;
        STRV_FOREACH (a, args)
                if (strv_extend(&argv, *a) < 0)
                        return -ENOMEM;
        /* a simulated host installs in simulation too */
        if (c->dry_run) {
                if (strv_extend(&argv, "--dry-run") < 0 ||
                    (!isempty(c->force_id) && strv_extend_pair(&argv, "--force-id", c->force_id) < 0) ||
                    (!isempty(c->fake_reboot_marker_path) &&
                     strv_extend_pair(&argv, "--fake-reboot-marker-path", c->fake_reboot_marker_path) < 0))
                        return -ENOMEM;
        }
        line = shell_join(argv);
        log_info("starting cradle's installer: %s", strna(line));
        /* the installer writes its log to stdout as in the upstream
         * container, so the reply's output is its log */
        return step_run_applet(ctx, argv, 0, ret);
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(install_request_done) InstallRequest req = {};
        _cleanup_free_ char *err = NULL;
        InstallMode mode;
        bool copy_network;
        int r;

        r = install_request_parse(args[0], &req, &err);
        if (r >= 0)
                r = install_request_check_disks(&req, &err);
        if (r < 0)
                return step_fail(ret, -1, "%s", err ? err : strerror(-r));

        copy_network = manual_network_config();
        mode = install_mode_decide(ctx->config->install_mode, req.installer_image,
                                   ctx->config->agent_version);
        log_info("install step: %s mode (--install-mode=%s)", install_mode_to_string(mode),
                 install_mode_to_string(ctx->config->install_mode));
        if (mode == INSTALL_MODE_INPROCESS)
                return run_inprocess(ctx, &req, copy_network, ret);
        return run_podman(ctx, &req, copy_network, ret);
}

const StepHandler step_install = {
        .type = STEP_INSTALL,
        .min_args = 1,
        .max_args = 1,
        .run = run,
        .flags = STEP_SINGLETON,
};
