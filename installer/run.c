/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The installation flow: the steps install_plan() lists for the role, each
 * performed by its handler below, in the Go installer's order (installer.go
 * InstallNode). A fatal step's error is reported as "Failed" with its text
 * and ends the run with exit status 1; best-effort steps log and go on.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "assisted/assisted-models.h"
#include "assisted/assisted.h"
#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "hostexec.h"
#include "installer/devclean.h"
#include "installer/config.h"
#include "installer/disk.h"
#include "installer/installer-private.h"
#include "installer/installer.h"
#include "installer/osimage.h"
#include "installer/plan.h"
#include "installer/service.h"
#include "jsonutil.h"
#include "log.h"
#include "logs/logs-sender.h"
#include "redact.h"
#include "shell.h"
#include "strutil.h"

/* ---- host commands ------------------------------------------------------ */

static void log_command_line(void *userdata, const char *line, bool is_stderr)
{
        Installer *in = userdata;
        unsigned pct;

        (void)is_stderr;
        log_info("%s", line);
        if (!in || !in->parse_percent || in->parse_percent(line, &pct) < 0)
                return;
        if (!progress_should_report(in->last_percent, pct))
                return;
        {
                char info[16];
                snprintf(info, sizeof(info), "%u%%", pct);
                /* the last reported value advances only when the service took it */
                if (service_progress(&in->svc, in->percent_stage, info))
                        in->last_percent = pct;
        }
}

int installer_host_run(Installer *in, char *const *argv, bool stream, char **ret_out, char **reterr)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        _cleanup_free_ char *line = shell_join(argv);
        SpawnOptions o = {
                .argv = argv,
                .env_extra = in->cmd_env,
                .merge_output = true,
                .on_line = stream ? log_command_line : NULL,
                .userdata = in,
        };
        int r;

        log_debug("running on the host: %s", strna(line));
        r = host_exec_run(in->host, &o, &res);
        if (r < 0 || res.exit_status != 0) {
                if (reterr)
                        *reterr = host_exec_failure_text(argv, r, &res);
                return r < 0 ? r : -EIO;
        }
        if (ret_out) {
                strstrip(res.out);
                *ret_out = TAKE_PTR(res.out);
        }
        return 0;
}

int installer_host_run_status(Installer *in, char *const *argv, int *ret_status, char **ret_out)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        SpawnOptions o = {
                .argv = argv,
                .env_extra = in->cmd_env,
                .merge_output = true,
        };
        int r;

        r = host_exec_run(in->host, &o, &res);
        if (r < 0)
                return r;
        *ret_status = res.exit_status;
        if (ret_out) {
                strstrip(res.out);
                *ret_out = TAKE_PTR(res.out);
        }
        return 0;
}

char *installer_host_file(const Installer *in, const char *path)
{
        if (streq(in->host_root, "/"))
                return strdup(path);
        return strdup_printf("%s%s", in->host_root, path);
}

char *installer_host_arg(const Installer *in, const char *path)
{
        if (!in->host_root_is_directory)
                return strdup(path);
        return installer_host_file(in, path);
}

const char *installer_host_view(const Installer *in, const char *path)
{
        const char *rest;

        if (!in->host_root_is_directory)
                return path;
        rest = startswith(path, in->host_root);
        return rest && rest[0] == '/' ? rest : path;
}

int installer_host_run_retry(Installer *in, char *const *argv, unsigned attempts, usec_t delay, bool stream,
                             char **reterr)
{
        _cleanup_free_ char *err = NULL;
        int r = 0;

        for (unsigned i = 0; i < attempts; i++) {
                free(err);
                err = NULL;
                r = installer_host_run(in, argv, stream, NULL, &err);
                if (r >= 0)
                        return 0;
                if (i + 1 < attempts) {
                        log_warning("retrying after error: %s", strna(err));
                        if (sleep_usec(delay) < 0)
                                return -ECANCELED;
                }
        }
        if (reterr)
                *reterr = strdup_printf("failed after %u attempts, last error: %s", attempts, strna(err));
        return r;
}

static int run_plan(Installer *in, char ***plan, unsigned attempts, bool stream, size_t *ret_done,
                    char **reterr)
{
        size_t i = 0;
        int r = 0;

        for (; plan && plan[i]; i++) {
                r = installer_host_run_retry(in, plan[i], attempts, in->cfg->command_retry_delay, stream,
                                             reterr);
                if (r < 0)
                        break;
        }
        if (ret_done)
                *ret_done = i;
        return r;
}

static bool host_path_exists(Installer *in, const char *path)
{
        char *argv[] = { (char *)"stat", (char *)path, NULL };

        return installer_host_run(in, argv, false, NULL, NULL) >= 0;
}

/* ---- steps --------------------------------------------------------------- */

typedef int (*StepFn)(Installer *in, char **reterr);

static int step_format_disks(Installer *in, char **reterr)
{
        (void)reterr;
        STRV_FOREACH (d, in->cfg->format_disks) {
                int r;
                if (in->cfg->dry_run) {
                        log_info("dry run: not formatting disk %s", *d);
                        continue;
                }
                log_info("Formatting disk %s", *d);
                r = disk_zero_first_sector(*d);
                if (r < 0)
                        /* best effort: the other disks, and the installation, go on */
                        log_warning("Failed to format disk %s, err %s", *d, strerror(-r));
        }
        return 0;
}

static int step_report_starting(Installer *in, char **reterr)
{
        (void)reterr;
        in->reported_starting = true;
        log_info("Installing node with role: %s", in->cfg->role);
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_STARTING_INSTALLATION),
                               in->cfg->role);
        return 0;
}

static int step_resolve_device(Installer *in, char **reterr)
{
        _cleanup_free_ char *resolved = NULL;
        int r;

        (void)reterr;
        r = disk_resolve(in->cfg->boot_device, &resolved);
        if (r < 0) {
                log_warning("Failed to filepath.EvalSymlinks(%s): %s. Continuing with %s anyway.",
                            in->cfg->boot_device, strerror(-r), in->cfg->boot_device);
                return 0;
        }
        log_info("Resolving installation device %s symlink to %s ", in->cfg->boot_device, resolved);
        free(in->device);
        in->device = TAKE_PTR(resolved);
        return 0;
}

static int step_cleanup_device(Installer *in, char **reterr)
{
        CleanupResult res = {};
        int r;

        (void)reterr;
        r = cleanup_install_device(in->host, in->device, &res);
        if (r < 0) {
                _cleanup_free_ char *warning = install_cleanup_warning(in->device),
                                    *errs = strv_join(res.errors, "; ");
                (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_STARTING_INSTALLATION),
                                       warning);
                /* Do not change the phrasing: a triage signature relies on it */
                log_error("failed to prepare install device %s, err %s", in->device,
                          errs ? errs : strerror(-r));
        }
        cleanup_result_done(&res);
        return 0;
}

static int step_mkdir_install_dir(Installer *in, char **reterr)
{
        char *argv[] = { (char *)"mkdir", (char *)"-p", in->cfg->install_dir, NULL };

        log_info("Creating directory: %s", in->cfg->install_dir);
        return installer_host_run(in, argv, true, NULL, reterr);
}

static int step_report_installing(Installer *in, char **reterr)
{
        const char *role = install_reported_role(in->role, in->cfg->control_plane_count, true);

        (void)reterr;
        if (!streq(role, in->role)) {
                log_info("Setting the bootstrap node's role to %s", role);
                if (free_and_strdup(&in->role, role) < 0)
                        return -ENOMEM;
                (void)log_set_field("ROLE", in->role);
        }
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_INSTALLING), in->role);
        return 0;
}

static int step_fetch_ignition(Installer *in, char **reterr)
{
        _cleanup_free_ char *name = strdup_printf("%s-%s.ign", in->role, strempty(in->cfg->host_id)),
                            *data = NULL, *err = NULL;
        size_t len = 0;
        int r;

        if (!name)
                return -ENOMEM;
        in->ignition_path = strdup_printf("%s/%s", in->cfg->install_dir, name);
        if (!in->ignition_path)
                return -ENOMEM;
        log_info("Getting %s file", name);
        r = service_download_ignition(&in->svc, &data, &len, &err);
        if (r < 0) {
                log_error("Failed to fetch file (%s) from server. err: %s", name, strna(err));
                *reterr = TAKE_PTR(err);
                return r;
        }
        /* written as-is: the service personalised it */
        r = write_file_atomic(in->ignition_path, data, len, 0644);
        if (r < 0) {
                *reterr = strdup_printf("cannot write %s: %s", in->ignition_path, strerror(-r));
                return r;
        }
        return 0;
}

static int write_to_existing_root(Installer *in, char **reterr)
{
        _cleanup_free_ char *refs = NULL;
        char ***plan = NULL;
        char *refs_argv[] = { (char *)"ostree", (char *)"refs", NULL };
        ExistingRootPlanInput pi = {
                .coreos_image = in->cfg->coreos_image,
                .ignition = in->ignition_path,
                .installer_args = in->cfg->installer_args,
        };
        int r;

        if (installer_host_run(in, refs_argv, false, &refs, NULL) >= 0)
                pi.has_node_image_ref = strstr(strempty(refs), "coreos/node-image") != NULL;
        r = existing_root_plan(&pi, &plan);
        if (r < 0)
                return r;
        r = run_plan(in, plan, 1, true, NULL, reterr);
        argvs_free(plan);
        return r;
}

static int step_write_image(Installer *in, char **reterr)
{
        _cleanup_strv_free_ char **argv = NULL, **busy = NULL;
        _cleanup_free_ char *err = NULL, *line = NULL;
        int r = 0;

        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_WRITING_IMAGE_TO_DISK), "");

        if (!isempty(in->cfg->coreos_image)) {
                for (unsigned i = 0; i < 3; i++) {
                        free(err);
                        err = NULL;
                        r = write_to_existing_root(in, &err);
                        if (r >= 0)
                                break;
                        if (i < 2 && sleep_usec(in->cfg->write_retry_delay) < 0)
                                return -ECANCELED;
                }
                if (r < 0) {
                        log_error("Failed to write image to disk: %s", strna(err));
                        *reterr = strdup_printf("failed after 3 attempts, last error: %s", strna(err));
                        return r;
                }
                log_info("Done writing image to disk");
                return 0;
        }

        /* coreos-installer refuses a busy disk too, but we say why first and
         * never run it against a disk something else uses */
        r = disk_check_not_busy(in->device, &busy);
        if (r < 0 && in->cfg->dry_run) {
                /* a dry run writes nothing (dry-installer stands for
                 * coreos-installer) and upstream's never looks at the disk:
                 * the simulated hosts' disk is this machine's, busy or not */
                _cleanup_free_ char *why = strv_join(busy, "; ");
                log_info("dry run: %s is %s, going on: %s", in->device,
                         r == -EBUSY ? "in use" : "not checked", r == -EBUSY ? strna(why) : strerror(-r));
                r = 0;
        }
        if (r == -EBUSY) {
                _cleanup_free_ char *why = strv_join(busy, "; ");
                STRV_FOREACH (b, busy)
                        log_error("%s", *b);
                *reterr = strdup_printf("found busy partitions on %s: %s", in->device, strna(why));
                return r;
        }
        if (r < 0) {
                *reterr = strdup_printf("cannot check whether %s is in use: %s", in->device, strerror(-r));
                return r;
        }

        argv = coreos_installer_argv(in->cfg->dry_run ? "dry-installer" : "coreos-installer",
                                     in->ignition_path, in->cfg->installer_args, in->device);
        if (!argv)
                return -ENOMEM;
        line = shell_join(argv + 1);
        log_info("Writing image and ignition to disk with arguments: %s", strna(line));

        in->percent_stage = host_stage_to_string(HOST_STAGE_WRITING_IMAGE_TO_DISK);
        in->parse_percent = coreos_progress_parse;
        in->last_percent = 0;
        r = installer_host_run_retry(in, argv, 3, in->cfg->write_retry_delay, true, reterr);
        in->parse_percent = NULL;
        if (r < 0) {
                log_error("Failed to write image to disk: %s", *reterr ? *reterr : strerror(-r));
                return r;
        }
        log_info("Done writing image to disk");
        return 0;
}

static int step_wait_control_plane(Installer *in, char **reterr)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;

        (void)reterr;
        log_info("Waiting for 2 ready masters");
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_WAITING_FOR_CONTROL_PLANE), "");
        for (;;) {
                _cleanup_free_ char *err = NULL;
                unsigned done = 0;
                bool ok = true;

                if (!cluster && service_get_cluster(&in->svc, &cluster, &err) < 0) {
                        log_error("Getting cluster %s: %s", in->cfg->cluster_id, strna(err));
                        ok = false;
                }
                if (ok) {
                        const char *kind = json_get_string(cluster, "kind");
                        /* masters and arbiters both count */
                        static const char *const roles[] = { "master", "arbiter" };
                        for (size_t i = 0; ok && i < ELEMENTSOF(roles); i++) {
                                _cleanup_(json_object_putp) json_object *hosts = NULL;
                                if (streq_ptr(kind, "AddHostsCluster"))
                                        break;
                                free(err);
                                err = NULL;
                                if (service_list_hosts(&in->svc, roles[i], &hosts, &err) < 0) {
                                        log_error("Getting cluster %s hosts: %s", in->cfg->cluster_id,
                                                  strna(err));
                                        ok = false;
                                        break;
                                }
                                done += hosts_done_count(hosts);
                        }
                        if (ok && worker_may_continue(kind, done)) {
                                log_info("%s", streq_ptr(kind, "AddHostsCluster")
                                                       ? "Day-2 cluster: not waiting for masters"
                                                       : "2 masters are ready");
                                return 0;
                        }
                        if (ok)
                                log_info("%u masters are Done, waiting for 2", done);
                }
                /* forever, as upstream: the service times the stage out */
                if (sleep_usec(in->cfg->poll_interval) < 0)
                        return -ECANCELED;
        }
}

static int step_skip_mco_reboot(Installer *in, char **reterr)
{
        _cleanup_free_ char *data = NULL, *err = NULL, *cmdline = NULL, *platform = NULL;
        _cleanup_strv_free_ char **kargs = NULL;
        MachineConfigInfo mc = {};
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + in->cfg->mc_fetch_timeout;
        struct utsname u;
        char ***plan = NULL;
        size_t len = 0, done = 0;
        int r;

        (void)reterr;
        r = read_full_file(in->ignition_path, BUF_MAX_JSON_DOC, &data, &len);
        if (r < 0) {
                log_warning("failed getting encapsulated machine config: cannot read %s: %s.  Continuing "
                            "installation without skipping MCO reboot",
                            in->ignition_path, strerror(-r));
                return 0;
        }
        for (;;) {
                free(err);
                err = NULL;
                r = skipmco_fetch(data, len, &mc, &err);
                if (r >= 0)
                        break;
                log_warning("failed to get encapsulated Machine Config: %s", strna(err));
                /* a config that merges nothing will not change */
                if (r == -ENOENT || r == -EBADMSG ||
                    now_usec(CLOCK_MONOTONIC) + in->cfg->command_retry_delay > deadline ||
                    sleep_usec(in->cfg->command_retry_delay) < 0) {
                        log_warning("failed getting encapsulated machine config.  Continuing installation "
                                    "without "
                                    "skipping MCO reboot");
                        return 0;
                }
        }
        log_info("Overwriting the OS image with %s", mc.os_image_url);

        kargs = installer_args_append_kargs(in->cfg->installer_args);
        STRV_FOREACH (k, mc.kernel_arguments)
                (void)strv_extend(&kargs, *k);
        (void)read_full_file("/proc/cmdline", 64 * 1024, &cmdline, NULL);
        platform = cmdline_platform_id(cmdline);
        if (uname(&u) < 0)
                u = (struct utsname){};
        {
                OverwritePlanInput pi = {
                        .device = in->device,
                        .os_image_url = mc.os_image_url,
                        .kargs = kargs,
                        .platform_id = platform,
                        .mount_dir = in->cfg->mount_dir,
                        .machine = u.machine,
                };
                r = overwrite_os_image_plan(&pi, &plan);
        }
        machine_config_info_done(&mc);
        if (r < 0)
                return 0;
        if (!plan) {
                log_info("not overwriting the OS image on %s", u.machine);
                return 0;
        }
        free(err);
        err = NULL;
        r = run_plan(in, plan, 3, true, &done, &err);
        if (r < 0) {
                _cleanup_free_ char *boot = strdup_printf("%s/boot", in->cfg->mount_dir);
                log_warning("failed overwriting OS image: %s.  Continuing installation without skipping MCO "
                            "reboot",
                            strna(err));
                /* leave nothing of the new disk mounted: plan[0] mounted the
                 * root, plan[1] the boot partition */
                if (done >= 2 && boot) {
                        char *umount_boot[] = { (char *)"umount", boot, NULL };
                        (void)installer_host_run(in, umount_boot, false, NULL, NULL);
                }
                if (done >= 1) {
                        char *umount_root[] = { (char *)"umount", in->cfg->mount_dir, NULL };
                        (void)installer_host_run(in, umount_root, false, NULL, NULL);
                }
        }
        argvs_free(plan);
        return 0;
}

static int set_boot_order(Installer *in)
{
        _cleanup_free_ char *p2 = NULL, *efi_ls = NULL, *efi_dir = NULL, *loader = NULL, *err = NULL,
                            *out = NULL;
        _cleanup_strv_free_ char **create = NULL;
        char ***deletes = NULL;
        const char *vendor;
        struct stat st;
        struct utsname u;
        usec_t deadline;
        int r;

        if (host_path_exists(in, "/usr/sbin/bootlist")) {
                char *argv[] = { (char *)"bootlist", (char *)"-m", (char *)"normal",
                                 (char *)"-o",       in->device,   NULL };
                (void)installer_host_run(in, argv, true, NULL, NULL); /* errors ignored, as upstream */
                return 0;
        }
        if (stat(in->cfg->efi_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                log_info("setting the boot order on BIOS systems is not supported. Skipping...");
                return 0;
        }
        log_info("Setting efibootmgr to boot from disk");

        /* partition 2 is the EFI system partition; it may take udev a moment */
        deadline = now_usec(CLOCK_MONOTONIC) + 20 * USEC_PER_SEC;
        while ((r = disk_partition_by_number(in->device, 2, &p2)) < 0) {
                if (now_usec(CLOCK_MONOTONIC) >= deadline || sleep_usec(in->cfg->command_retry_delay) < 0) {
                        log_warning("cannot find the EFI partition of %s: %s", in->device, strerror(-r));
                        return r;
                }
        }
        {
                char *mount[] = { (char *)"mount", p2, in->cfg->mount_dir, NULL };
                r = installer_host_run_retry(in, mount, 3, in->cfg->command_retry_delay, true, &err);
                if (r < 0) {
                        log_warning("%s", strna(err));
                        return r;
                }
        }
        efi_dir = strdup_printf("%s/EFI", in->cfg->mount_dir);
        if (!efi_dir)
                return -ENOMEM;
        {
                char *ls[] = { (char *)"ls", (char *)"-1", efi_dir, NULL };
                char *umount[] = { (char *)"umount", in->cfg->mount_dir, NULL };
                r = installer_host_run(in, ls, false, &efi_ls, NULL);
                (void)installer_host_run(in, umount, true, NULL, NULL);
                if (r < 0)
                        return r;
        }
        vendor = efi_vendor_pick(efi_ls);
        if (!vendor) {
                log_warning("no redhat or centos directory in the EFI partition");
                return -ENOENT;
        }
        if (uname(&u) < 0)
                u = (struct utsname){};
        loader = efi_loader_path(vendor, u.machine);
        create = loader ? efibootmgr_create_argv(in->device, loader) : NULL;
        if (!create)
                return -ENOMEM;
        free(err);
        err = NULL;
        r = installer_host_run(in, create, true, &out, &err);
        if (r < 0) {
                log_warning("Failed to set efibootmgr to boot from disk %s, err: %s", in->device,
                            strna(err));
                return r;
        }
        deletes = efibootmgr_delete_argvs(out, loader);
        for (size_t i = 0; deletes && deletes[i]; i++)
                (void)installer_host_run(in, deletes[i], true, NULL, NULL);
        argvs_free(deletes);
        {
                char *list[] = { (char *)"efibootmgr", (char *)"-l", loader, NULL };
                (void)installer_host_run(in, list, true, NULL, NULL);
        }
        return 0;
}

static int step_set_boot_order(Installer *in, char **reterr)
{
        (void)reterr;
        if (set_boot_order(in) < 0)
                log_warning("Failed to set boot order");
        return 0;
}

static int step_copy_registry(Installer *in, char **reterr)
{
        char ***plan = NULL;
        int r;

        if (!streq(in->role, "master") || !host_path_exists(in, in->cfg->registry_dir))
                return 0;
        log_info("Start copying registry data to disk");
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_COPYING_REGISTRY_DATA_TO_DISK), "");
        r = registry_copy_plan(in->device, in->cfg->mount_dir, in->cfg->registry_dir, &plan);
        if (r < 0)
                return r;
        in->percent_stage = host_stage_to_string(HOST_STAGE_COPYING_REGISTRY_DATA_TO_DISK);
        in->parse_percent = rsync_progress_parse;
        in->last_percent = 0;
        r = run_plan(in, plan, 3, true, NULL, reterr);
        in->parse_percent = NULL;
        argvs_free(plan);
        if (r < 0)
                return r;
        log_info("Done copying registry data to disk");
        return 0;
}

static int step_upload_logs(Installer *in, char **reterr)
{
        _cleanup_free_ char *err = NULL, *report = NULL;
        const InstallerConfig *c = in->cfg;
        HttpRetryPolicy retry = HTTP_RETRY_GO_AGENT;
        LogsSenderOptions o = {
                .url = c->url,
                .cluster_id = c->cluster_id,
                .host_id = c->host_id,
                .infra_env_id = c->infra_env_id,
                .token = c->token,
                .cacert = c->cacert,
                .insecure = c->insecure,
                .retry = &retry,
                .bootstrap = install_flow_for(c->role, c->control_plane_count) != INSTALL_FLOW_NODE,
                .host = in->host,
                .logs_dir = c->logs_dir,
                .journal_dir = c->journal_dir,
        };
        int r;

        (void)reterr;
        log_info("Uploading logs and reporting status before rebooting the node %s for cluster %s",
                 strempty(c->host_id), strempty(c->cluster_id));
        if (service_logs_progress(&in->svc, LOGS_STATE_REQUESTED, &err) < 0)
                log_error("failed to report the logs progress: %s", strna(err));
        /* the logs_sender container's transport, with our delays */
        retry.base_delay = c->retry_delay;
        retry.max_delay = MAX(c->retry_max_delay, c->retry_delay);
        r = logs_sender_run(&o, &report);
        if (r < 0)
                log_error("upload installation logs %s", isempty(report) ? strerror(-r) : report);
        return 0;
}

static int step_finalize(Installer *in, char **reterr)
{
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *out = NULL;
        RebootKind kind;
        int r;

        if (in->cfg->dry_run)
                kind = REBOOT_FAKE;
        else {
                char *list[] = { (char *)"systemctl", (char *)"list-units", (char *)"--no-legend",
                                 (char *)"ironic-agent.service", NULL };
                _cleanup_free_ char *err = NULL;
                r = installer_host_run(in, list, false, &out, &err);
                if (r < 0) {
                        log_error("Failed to check if ironic agent service exists on the node %s",
                                  strna(err));
                        *reterr = TAKE_PTR(err);
                        return r;
                }
                kind = reboot_kind(false, strstr(strempty(out), "ironic-agent.service") != NULL);
        }
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_REBOOTING),
                               reboot_progress_info(kind));
        argv = reboot_argv(kind, in->cfg->control_plane_count, in->cfg->fake_reboot_marker_path);
        if (!argv)
                return -ENOMEM;
        if (kind == REBOOT_SHUTDOWN)
                log_info("Rebooting node");
        r = installer_host_run(in, argv, true, NULL, reterr);
        if (r < 0) {
                if (kind == REBOOT_FAKE) {
                        _cleanup_free_ char *e = *reterr;
                        *reterr = strdup_printf("failed to touch fake reboot marker: %s", strna(e));
                } else
                        log_error("Failed to reboot node, err: %s", strna(*reterr));
                return r;
        }
        return 0;
}

static int step_start_bootstrap(Installer *in, char **reterr)
{
        int r = bootstrap_start(in, /* single_node= */ false, reterr);

        if (r < 0) {
                log_error("failed to start bootstrap services: %s", *reterr ? *reterr : strerror(-r));
                return r;
        }
        /* the other hosts' Configuring / Waiting for ignition from here on,
         * in parallel with the image write and the waits (best effort) */
        r = configuring_start(in);
        if (r < 0)
                log_warning_errno(
                        r, "cannot start the Configuring reporting for the other hosts, going on: %m");
        return 0;
}

static int step_single_node_ignition(Installer *in, char **reterr)
{
        return single_node_ignition(in, reterr);
}

static int step_bootstrap_waits(Installer *in, char **reterr)
{
        return bootstrap_waits(in, reterr);
}

static const StepFn step_handlers[_STEP_MAX] = {
        [STEP_FORMAT_DISKS] = step_format_disks,
        [STEP_REPORT_STARTING] = step_report_starting,
        [STEP_RESOLVE_DEVICE] = step_resolve_device,
        [STEP_CLEANUP_DEVICE] = step_cleanup_device,
        [STEP_MKDIR_INSTALL_DIR] = step_mkdir_install_dir,
        [STEP_START_BOOTSTRAP] = step_start_bootstrap,
        [STEP_REPORT_INSTALLING] = step_report_installing,
        [STEP_FETCH_IGNITION] = step_fetch_ignition,
        [STEP_SINGLE_NODE_IGNITION] = step_single_node_ignition,
        [STEP_WRITE_IMAGE] = step_write_image,
        [STEP_WAIT_CONTROL_PLANE] = step_wait_control_plane,
        [STEP_SKIP_MCO_REBOOT] = step_skip_mco_reboot,
        [STEP_SET_BOOT_ORDER] = step_set_boot_order,
        [STEP_COPY_REGISTRY] = step_copy_registry,
        [STEP_BOOTSTRAP_WAITS] = step_bootstrap_waits,
        [STEP_UPLOAD_LOGS] = step_upload_logs,
        [STEP_FINALIZE] = step_finalize,
};

/* ---- the run --------------------------------------------------------------- */

static void installer_done(Installer *in)
{
        /* the Configuring reporting ends with the installer (upstream's
         * context), before the client it may still use */
        configuring_stop(in);
        bootstrap_done(in);
        free(in->host_root);
        assisted_client_free(in->client);
        free(in->device);
        free(in->role);
        free(in->ignition_path);
        strv_free(in->cmd_env);
}

static int setup_proxy_env(Installer *in)
{
        const InstallerConfig *c = in->cfg;

        /* the commands get the proxies (execute.go NewExecutor) ... */
        if (!isempty(c->http_proxy) || !isempty(c->https_proxy)) {
                if (!isempty(c->http_proxy) &&
                    strv_extendf(&in->cmd_env, "HTTP_PROXY=%s", c->http_proxy) < 0)
                        return -ENOMEM;
                if (!isempty(c->https_proxy) &&
                    strv_extendf(&in->cmd_env, "HTTPS_PROXY=%s", c->https_proxy) < 0)
                        return -ENOMEM;
                if (!isempty(c->no_proxy) && strv_extendf(&in->cmd_env, "NO_PROXY=%s", c->no_proxy) < 0)
                        return -ENOMEM;
        }
        /* ... and NO_PROXY is also ours (utils.SetNoProxyEnv) */
        if (!isempty(c->no_proxy)) {
                if (setenv("NO_PROXY", c->no_proxy, 1) < 0 || setenv("no_proxy", c->no_proxy, 1) < 0)
                        return negative_errno();
        }
        return 0;
}

int installer_run(const InstallerConfig *c, HostExec *host)
{
        _cleanup_free_ char *err = NULL;
        Installer in = { .cfg = c, .host = host };
        InstallStep steps[_STEP_MAX];
        InstallPlanInput pi = {
                .role = c->role,
                .control_plane_count = c->control_plane_count,
                .coreos_image = !isempty(c->coreos_image),
                .dry_run = c->dry_run,
                .skip_cleanup = c->skip_installation_disk_cleanup,
                .enable_skip_mco_reboot = c->enable_skip_mco_reboot,
                .upload_logs = c->upload_logs,
        };
        AssistedClientOptions co = {
                .url = c->url,
                .ca_file = isempty(c->cacert) ? NULL : c->cacert,
                .insecure = c->insecure,
                .token = c->token,
                .retry = HTTP_RETRY_NONE, /* the installer's own policy: service.c */
        };
        InstallFlow flow = install_flow_for(c->role, c->control_plane_count);
        size_t n;
        int r, status = 0;

        r = assisted_client_new(&co, &in.client, &err);
        if (r < 0) {
                log_error_errno(r, "Failed to create inventory client: %s", strna(err));
                return 1;
        }
        in.svc = (Service){
                .client = in.client,
                .retry = ASSISTED_RETRY_INSTALLER,
                .infra_env_id = c->infra_env_id,
                .host_id = c->host_id,
                .cluster_id = c->cluster_id,
        };
        in.svc.retry.base_delay = c->retry_delay;
        in.svc.retry.max_delay = MAX(c->retry_max_delay, c->retry_delay);
        if (c->dry_run)
                /* quick feedback rather than an hour of retries */
                in.svc.retry.short_retries = in.svc.retry.long_retries = 3;

        in.device = strdup(strempty(c->boot_device));
        in.role = strdup(strempty(c->role));
        in.etcd = etcd_bootstrap_for(c->openshift_version);
        in.host_root_is_directory =
                !isempty(c->host_root) && !streq(c->host_root, "/") && !streq(c->host_root, "/proc/1/root");
        /* the host's files: ours, or PID 1's root when we entered its
         * namespaces from a container */
        in.host_root = strdup(!isempty(c->host_root)   ? c->host_root
                              : host_exec_enters(host) ? "/proc/1/root"
                                                       : "/");
        if (!in.device || !in.role || !in.host_root || setup_proxy_env(&in) < 0) {
                installer_done(&in);
                log_oom();
                return 1;
        }

        if (flow < 0) {
                free(err);
                err = strdup_printf("unknown role '%s'", strempty(c->role));
                goto failed;
        }
        n = install_plan(&pi, steps);
        log_debug("the %s flow: %zu steps", install_flow_to_string(flow), n);
        if (!isempty(c->coreos_image))
                log_info("not attempting disk format when installing to boot device");

        for (size_t i = 0; i < n; i++) {
                LOG_CONTEXT_PUSH("INSTALL_STEP", install_step_to_string(steps[i]));
                free(err);
                err = NULL;
                log_debug("step %s", install_step_to_string(steps[i]));
                r = step_handlers[steps[i]](&in, &err);
                if (r >= 0)
                        continue;
                if (!install_step_is_fatal(steps[i])) {
                        log_warning("%s failed, going on: %s", install_step_to_string(steps[i]),
                                    err ? err : strerror(-r));
                        continue;
                }
                if (!err)
                        err = strdup(r == -ECANCELED ? "the installation was stopped" : strerror(-r));
                goto failed;
        }
        installer_done(&in);
        return 0;

failed:
        /* as upstream, whose every flow reports it first: a flow refused
         * before its first step still starts with it */
        if (!in.reported_starting)
                (void)step_report_starting(&in, NULL);
        log_error("Installation failed: %s", strna(err));
        bootstrap_cleanup(&in);
        (void)service_progress(&in.svc, host_stage_to_string(HOST_STAGE_FAILED), strempty(err));
        status = 1;
        installer_done(&in);
        return status;
}

/* ---- the verb ------------------------------------------------------------ */

static int setup_logging(const InstallerConfig *c)
{
        _cleanup_free_ char *dry_log = NULL;
        const char *file = c->log_file;
        int r;

        log_setup("installer");
        log_set_max_level(c->verbose ? LOG_DEBUG : log_level_from_string(c->log_level));
        /* as the Go installer: stdout and journald */
        log_set_default_targets(LOG_TARGET_STDOUT | LOG_TARGET_JOURNAL, 0);
        (void)log_set_field("TAG", "installer");
        (void)log_set_field("DRY_AGENT_ID", c->dry_run ? strempty(c->host_id) : "");
        (void)log_set_field("CRADLE_VERB", "installer");
        if (!isempty(c->host_id))
                (void)log_set_field("HOST_ID", c->host_id);
        (void)log_set_field("ROLE", c->role);
        if (!isempty(c->cluster_id))
                (void)log_set_field("CLUSTER_ID", c->cluster_id);

        /* dry run: one log per simulated host */
        if (c->dry_run && file && endswith(file, "/assisted-installer.log") && !isempty(c->host_id)) {
                dry_log = strdup_printf("%.*s/assisted-installer-%s.log",
                                        (int)(strlen(file) - strlen("/assisted-installer.log")), file,
                                        c->host_id);
                if (!dry_log)
                        return -ENOMEM;
                file = dry_log;
        }
        if (!isempty(file)) {
                r = log_open_file(file);
                if (r < 0)
                        log_warning_errno(r, "cannot open the log file %s, ignoring: %m", file);
        }
        return 0;
}

int installer_main(int argc, char **argv)
{
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        _cleanup_free_ char *desc = NULL;
        InstallerConfig c = {};
        int r;

        r = installer_config_parse(argc, argv, &c);
        if (r <= 0)
                return r == 0 ? 0 : 2;

        r = setup_logging(&c);
        if (r < 0) {
                installer_config_done(&c);
                return 1;
        }
        (void)stop_on_signals();

        desc = installer_config_describe(&c);
        log_info("Assisted installer started. Configuration is:\n %s", strna(desc));
        if (!c.token)
                log_warning("Agent Authentication Token not set");

        r = host_exec_new(c.host_exec, HOST_NS_INSTALLER, &host);
        if (r < 0) {
                log_error_errno(r, "cannot set up host command execution: %m");
                installer_config_done(&c);
                return 1;
        }
        log_debug("host commands %s", host_exec_enters(host) ? "enter PID 1's namespaces" : "run directly");

        r = installer_run(&c, host);
        installer_config_done(&c);
        return r;
}
