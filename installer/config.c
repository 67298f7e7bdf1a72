/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "buf.h"
#include "cleanup.h"
#include "goflags.h"
#include "installer/config.h"
#include "jsonutil.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

void installer_config_done(InstallerConfig *c)
{
        char **strs[] = {
                &c->role,
                &c->cluster_id,
                &c->infra_env_id,
                &c->host_id,
                &c->boot_device,
                &c->url,
                &c->openshift_version,
                &c->mco_image,
                &c->controller_image,
                &c->agent_image,
                &c->cacert,
                &c->http_proxy,
                &c->https_proxy,
                &c->no_proxy,
                &c->service_ips,
                &c->high_availability_mode,
                &c->must_gather_image,
                &c->coreos_image,
                &c->installer_args_json,
                &c->force_id,
                &c->fake_reboot_marker_path,
                &c->dry_run_cluster_hosts_path,
                &c->install_dir,
                &c->log_file,
                &c->logs_dir,
                &c->journal_dir,
                &c->mount_dir,
                &c->registry_dir,
                &c->efi_dir,
                &c->host_root,
                &c->log_level,
        };

        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                free(*strs[i]);
        strv_free(c->format_disks);
        strv_free(c->installer_args);
        erase_and_free(c->token);
        *c = (InstallerConfig){};
}

int installer_args_parse(const char *json, char ***ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *j = NULL;
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *perr = NULL;
        size_t n;
        int r;

        if (isempty(json)) {
                *ret = NULL;
                return 0;
        }
        r = json_parse(json, strlen(json), BUF_MAX_JSON_DOC, &j, &perr);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("not JSON: %s", strna(perr));
                return -EINVAL;
        }
        if (!json_object_is_type(j, json_type_array)) {
                if (reterr)
                        *reterr =
                                strdup_printf("expected a JSON array of strings, got %s", json_kind_name(j));
                return -EINVAL;
        }
        n = json_object_array_length(j);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(j, i);
                if (!json_object_is_type(e, json_type_string)) {
                        if (reterr)
                                *reterr = strdup_printf("element %zu is %s, not a string", i,
                                                        json_kind_name(e));
                        return -EINVAL;
                }
                r = strv_extend(&l, json_object_get_string(e));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* --high-availability-mode, as the installers before --control-plane-count
 * took it: None is one control-plane node; Full (or nothing) keeps the count */
static int installer_apply_high_availability_mode(InstallerConfig *c)
{
        const char *m = c->high_availability_mode;

        if (isempty(m))
                return 0;
        if (streq(m, "None") && (c->control_plane_count == 0 || c->control_plane_count == 1)) {
                c->control_plane_count = 1;
                return 0;
        }
        if (streq(m, "Full") && c->control_plane_count != 1)
                return 0;
        if (streq(m, "None") || streq(m, "Full"))
                fprintf(stderr,
                        "installer: --high-availability-mode %s contradicts --control-plane-count %d\n", m,
                        c->control_plane_count);
        else
                fprintf(stderr, "installer: invalid --high-availability-mode '%s' (Full or None)\n", m);
        return -EINVAL;
}

int installer_config_parse(int argc, char **argv, InstallerConfig *ret)
{
        _cleanup_free_ char *host_exec = NULL, *bootstrap_apply = NULL;
        InstallerConfig c = {};
        double retry_delay = 2, retry_max_delay = 10, poll = 5, slow_poll = 30, controller_logs = 300,
               write_delay = 1, cmd_delay = 5, mc_timeout = 1200;
        bool help = false;
        int optind, r;
        const GoFlag flags[] = {
                { "role", GOFLAG_STRING, &c.role, "master",
                  "The node role (bootstrap, master, worker, arbiter)" },
                { "cluster-id", GOFLAG_STRING, &c.cluster_id, NULL, "The cluster id" },
                { "infra-env-id", GOFLAG_STRING, &c.infra_env_id, NULL,
                  "This host infra env id (default: the cluster id)" },
                { "host-id", GOFLAG_STRING, &c.host_id, NULL, "This host id" },
                { "boot-device", GOFLAG_STRING, &c.boot_device, NULL, "The boot device" },
                { "url", GOFLAG_STRING, &c.url, NULL,
                  "The BM inventory URL, including a scheme and optionally a port" },
                { "openshift-version", GOFLAG_STRING, &c.openshift_version, "4.4",
                  "Openshift version to install" },
                { "mco-image", GOFLAG_STRING, &c.mco_image, NULL, "MCO image to install" },
                { "verbose", GOFLAG_BOOL, &c.verbose, "false",
                  "Increase verbosity, set log level to debug" },
                { "controller-image", GOFLAG_STRING, &c.controller_image,
                  "quay.io/ocpmetal/assisted-installer-controller:latest",
                  "Assisted Installer Controller image URL" },
                { "agent-image", GOFLAG_STRING, &c.agent_image,
                  "quay.io/ocpmetal/assisted-installer-agent:latest",
                  "Assisted Installer Agent image URL that will be used to send logs on successful "
                  "installation" },
                { "insecure", GOFLAG_BOOL, &c.insecure, "false", "Do not validate TLS certificate" },
                { "cacert", GOFLAG_STRING, &c.cacert, NULL, "Path to custom CA certificate in PEM format" },
                { "http-proxy", GOFLAG_STRING, &c.http_proxy, NULL,
                  "A proxy URL to use for creating HTTP connections outside the cluster" },
                { "https-proxy", GOFLAG_STRING, &c.https_proxy, NULL,
                  "A proxy URL to use for creating HTTPS connections outside the cluster" },
                { "no-proxy", GOFLAG_STRING, &c.no_proxy, NULL,
                  "A comma-separated list of destination domain names, domains, IP addresses or other "
                  "network CIDRs to exclude proxying" },
                { "service-ips", GOFLAG_STRING, &c.service_ips, NULL, "All IPs of assisted service node" },
                { "control-plane-count", GOFLAG_INT, &c.control_plane_count, "0",
                  "The number of control plane nodes in the cluster" },
                { "high-availability-mode", GOFLAG_STRING, &c.high_availability_mode, NULL,
                  "high-availability expectations, \"Full\" which represents the behavior in a "
                  "\"normal\" cluster. Use 'None' for single-node deployment (the installers before "
                  "--control-plane-count)" },
                { "check-cluster-version", GOFLAG_BOOL, &c.check_cluster_version, "false",
                  "Do not monitor CVO" },
                { "must-gather-image", GOFLAG_STRING, &c.must_gather_image, NULL,
                  "Custom must-gather image (a plain image, or JSON {operator: image})" },
                { "format-disk", GOFLAG_STRV, &c.format_disks, NULL,
                  "Disk to format. Can be specified multiple times" },
                { "skip-installation-disk-cleanup", GOFLAG_BOOL, &c.skip_installation_disk_cleanup, "false",
                  "Skip installation disk cleanup" },
                { "enable-skip-mco-reboot", GOFLAG_BOOL, &c.enable_skip_mco_reboot, "false",
                  "Enable skipping the MCO reboot" },
                { "notify-num-reboots", GOFLAG_BOOL, &c.notify_num_reboots, "false",
                  "Notify the number of reboots per node" },
                { "coreos-image", GOFLAG_STRING, &c.coreos_image, NULL,
                  "CoreOS image to install to the existing root" },
                { "installer-args", GOFLAG_STRING, &c.installer_args_json, NULL,
                  "JSON array of additional coreos-installer arguments" },
                { "help", GOFLAG_BOOL, &help, "false", "Help message" },
                { "dry-run", GOFLAG_BOOL, &c.dry_run, "false", "Dry run avoids/fakes certain actions",
                  "DRY_ENABLE", "DRYCONFIG_DRY_ENABLE" },
                { "force-id", GOFLAG_STRING, &c.force_id, NULL, "The fake host ID to give to the host",
                  "DRY_HOST_ID", "DRYCONFIG_DRY_HOST_ID" },
                { "fake-reboot-marker-path", GOFLAG_STRING, &c.fake_reboot_marker_path, NULL,
                  "A path whose existence indicates a fake reboot happened", "DRY_FAKE_REBOOT_MARKER_PATH",
                  "DRYCONFIG_DRY_FAKE_REBOOT_MARKER_PATH" },
                { "dry-run-cluster-hosts-path", GOFLAG_STRING, &c.dry_run_cluster_hosts_path, NULL,
                  "A path to a JSON file with information about hosts in the cluster",
                  "DRY_CLUSTER_HOSTS_PATH", "DRYCONFIG_DRY_CLUSTER_HOSTS_PATH" },
                /* cradle's own */
                { "host-exec", GOFLAG_STRING, &host_exec, "auto",
                  "cradle: run host commands 'direct', 'enter' PID 1's namespaces, or 'auto'-detect",
                  "CRADLE_HOST_EXEC" },
                { "install-dir", GOFLAG_STRING, &c.install_dir, "/opt/install-dir",
                  "cradle: where the Ignition configs are downloaded", "CRADLE_INSTALL_DIR" },
                { "log-file", GOFLAG_STRING, &c.log_file, "/var/log/assisted-installer.log",
                  "cradle: the text log (\"\" for none)", "CRADLE_INSTALLER_LOG_FILE" },
                { "logs-dir", GOFLAG_STRING, &c.logs_dir, "/var/log",
                  "cradle: where the log upload before the reboot collects its files", "CRADLE_LOGS_DIR" },
                { "journal-dir", GOFLAG_STRING, &c.journal_dir, "/var/log/journal",
                  "cradle: the journal the log upload reads", "CRADLE_JOURNAL_DIR" },
                { "mount-dir", GOFLAG_STRING, &c.mount_dir, "/mnt",
                  "cradle: the host directory partitions of the new disk are mounted on",
                  "CRADLE_MOUNT_DIR" },
                { "registry-dir", GOFLAG_STRING, &c.registry_dir, "/run/media/iso/registry",
                  "cradle: the appliance's registry data on the host", "CRADLE_REGISTRY_DIR" },
                { "efi-dir", GOFLAG_STRING, &c.efi_dir, "/sys/firmware/efi", "cradle: present on UEFI hosts",
                  "CRADLE_EFI_DIR" },
                { "retry-delay", GOFLAG_DOUBLE, &retry_delay, "2",
                  "cradle: seconds, base of the jittered back-off of service calls", "CRADLE_RETRY_DELAY" },
                { "retry-max-delay", GOFLAG_DOUBLE, &retry_max_delay, "10",
                  "cradle: seconds, cap of that back-off", "CRADLE_RETRY_MAX_DELAY" },
                { "poll-interval", GOFLAG_DOUBLE, &poll, "5",
                  "cradle: seconds between the checks of the waits upstream repeats every 5 s (the worker's "
                  "masters; the bootstrap's nodes, bootkube, etcd, controller, MachineConfigs; node-image)",
                  "CRADLE_POLL_INTERVAL" },
                { "slow-poll-interval", GOFLAG_DOUBLE, &slow_poll, "30",
                  "cradle: seconds between the bootstrap's slower checks (Configuring reporting for the "
                  "other "
                  "hosts, the agent-based installer's workers)",
                  "CRADLE_SLOW_POLL_INTERVAL" },
                { "controller-logs-interval", GOFLAG_DOUBLE, &controller_logs, "300",
                  "cradle: seconds between uploads of the controller's logs while the bootstrap waits for "
                  "it",
                  "CRADLE_CONTROLLER_LOGS_INTERVAL" },
                { "bootstrap-apply", GOFLAG_STRING, &bootstrap_apply, "mcd",
                  "cradle: how the bootstrap lays bootstrap.ign onto the live root: 'mcd' runs the "
                  "machine-config-daemon of --mco-image through podman as upstream; 'native' applies it "
                  "with "
                  "cradle's Ignition code and pulls no image (refusing a config it cannot apply as the "
                  "daemon "
                  "would)",
                  "CRADLE_BOOTSTRAP_APPLY" },
                { "host-root", GOFLAG_STRING, &c.host_root, NULL,
                  "cradle: where the host's files are (default: / when host commands run directly, "
                  "/proc/1/root "
                  "when they enter PID 1's namespaces); tests name a directory",
                  "CRADLE_HOST_ROOT" },
                { "write-retry-delay", GOFLAG_DOUBLE, &write_delay, "1",
                  "cradle: seconds between coreos-installer attempts", "CRADLE_WRITE_RETRY_DELAY" },
                { "command-retry-delay", GOFLAG_DOUBLE, &cmd_delay, "5",
                  "cradle: seconds between attempts of mount, growpart, ... ",
                  "CRADLE_COMMAND_RETRY_DELAY" },
                { "mc-fetch-timeout", GOFLAG_DOUBLE, &mc_timeout, "1200",
                  "cradle: seconds --enable-skip-mco-reboot keeps fetching the machine config",
                  "CRADLE_MC_FETCH_TIMEOUT" },
                { "upload-logs", GOFLAG_BOOL, &c.upload_logs, "true",
                  "cradle: upload the host's logs before the reboot" },
                { "log-level", GOFLAG_STRING, &c.log_level, "info", "cradle: debug, info, warning or error",
                  "CRADLE_LOG_LEVEL" },
                {},
        };
        const char *synopsis =
                "Installs this host: writes RHCOS and its Ignition config to --boot-device and\n"
                "reports every stage to assisted-service. The Go installer's flags; PULL_SECRET_TOKEN\n"
                "and the proxy variables come from the environment.";
        _cleanup_free_ char *err = NULL;

        r = goflags_parse("installer", synopsis, flags, argc, argv, &optind);
        if (r <= 0)
                goto fail;
        if (help) {
                goflags_usage(stdout, "installer", synopsis, flags);
                r = 0;
                goto fail;
        }
        if (optind < argc) {
                fprintf(stderr,
                        "installer: unexpected argument '%s' (boolean flags take --flag or --flag=value, "
                        "never a "
                        "separate value)\n",
                        argv[optind]);
                r = -EINVAL;
                goto fail;
        }
        r = installer_args_parse(c.installer_args_json, &c.installer_args, &err);
        if (r < 0) {
                fprintf(stderr, "installer: invalid --installer-args '%s': %s\n", c.installer_args_json,
                        strna(err));
                r = -EINVAL;
                goto fail;
        }
        c.host_exec = host_exec_mode_from_string(host_exec);
        c.bootstrap_apply = bootstrap_apply_from_string(bootstrap_apply);
        if (c.bootstrap_apply < 0) {
                fprintf(stderr, "installer: invalid --bootstrap-apply '%s': 'mcd' or 'native'\n",
                        strna(bootstrap_apply));
                r = -EINVAL;
                goto fail;
        }
        if (c.host_exec < 0 || log_level_from_string(c.log_level) < 0 ||
            usec_from_seconds(retry_delay, &c.retry_delay) < 0 ||
            usec_from_seconds(retry_max_delay, &c.retry_max_delay) < 0 ||
            usec_from_seconds(poll, &c.poll_interval) < 0 ||
            usec_from_seconds(slow_poll, &c.slow_poll_interval) < 0 ||
            usec_from_seconds(controller_logs, &c.controller_logs_interval) < 0 ||
            usec_from_seconds(write_delay, &c.write_retry_delay) < 0 ||
            usec_from_seconds(cmd_delay, &c.command_retry_delay) < 0 ||
            usec_from_seconds(mc_timeout, &c.mc_fetch_timeout) < 0) {
                fprintf(stderr, "installer: invalid value of a cradle option (--host-exec, --log-level or a "
                                "delay)\n");
                r = -EINVAL;
                goto fail;
        }

        /* SetDefaults */
        if (isempty(c.infra_env_id)) {
                r = free_and_strdup(&c.infra_env_id, c.cluster_id);
                if (r < 0)
                        goto fail;
        }
        r = installer_apply_high_availability_mode(&c);
        if (r < 0)
                goto fail;
        if (streq_ptr(c.role, "worker")) {
                c.control_plane_count = 0;
                free(c.high_availability_mode);
                c.high_availability_mode = NULL;
        }
        if (c.dry_run && isempty(c.host_id) && !isempty(c.force_id)) {
                r = free_and_strdup(&c.host_id, c.force_id);
                if (r < 0)
                        goto fail;
        }

        {
                const char *t = getenv("PULL_SECRET_TOKEN");
                if (!isempty(t)) {
                        c.token = strdup(t);
                        if (!c.token) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        (void)redact_register_secret(c.token);
                }
        }

        /* the values now belong to c; the flag table only pointed at them */
        *ret = c;
        return 1;
fail:
        installer_config_done(&c);
        goflags_free(flags);
        return r;
}

char *installer_config_describe(const InstallerConfig *c)
{
        _cleanup_free_ char *fd = strv_join(c->format_disks, ","), *ia = strv_join(c->installer_args, " ");

        if (!fd || !ia)
                return NULL;
        return strdup_printf(
                "role=%s cluster-id=%s infra-env-id=%s host-id=%s boot-device=%s url=%s "
                "openshift-version=%s mco-image=%s controller-image=%s agent-image=%s insecure=%s "
                "cacert=%s http-proxy=%s https-proxy=%s no-proxy=%s service-ips=%s "
                "control-plane-count=%d high-availability-mode=%s check-cluster-version=%s "
                "must-gather-image=%s format-disk=[%s] "
                "skip-installation-disk-cleanup=%s enable-skip-mco-reboot=%s notify-num-reboots=%s "
                "coreos-image=%s installer-args=[%s] dry-run=%s pull-secret-token=%s",
                strempty(c->role), strempty(c->cluster_id), strempty(c->infra_env_id), strempty(c->host_id),
                strempty(c->boot_device), strempty(c->url), strempty(c->openshift_version),
                strempty(c->mco_image), strempty(c->controller_image), strempty(c->agent_image),
                c->insecure ? "true" : "false", strempty(c->cacert), strempty(c->http_proxy),
                strempty(c->https_proxy), strempty(c->no_proxy), strempty(c->service_ips),
                c->control_plane_count, strempty(c->high_availability_mode),
                c->check_cluster_version ? "true" : "false", strempty(c->must_gather_image), fd,
                c->skip_installation_disk_cleanup ? "true" : "false",
                c->enable_skip_mco_reboot ? "true" : "false", c->notify_num_reboots ? "true" : "false",
                strempty(c->coreos_image), ia, c->dry_run ? "true" : "false", c->token ? "<SECRET>" : "");
}
