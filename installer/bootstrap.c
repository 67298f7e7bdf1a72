/* SPDX-License-Identifier: Apache-2.0 */
/*
 * startBootstrap (notes §4.1): the actions of start_bootstrap_plan(), each
 * performed below, in upstream order, every failure fatal ("failed to start
 * bootstrap services"). In dry run what would change the machine is logged
 * instead (the rest runs: bootstrap.ign is downloaded and read, the
 * manifests are rendered).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assisted/assisted-models.h"
#include "cleanup.h"
#include "fileio.h"
#include "ignition/ignition.h"
#include "installer/bootstrap-apply.h"
#include "installer/bootstrap-plan.h"
#include "installer/config.h"
#include "installer/controller-manifests.h"
#include "installer/installer-private.h"
#include "jsonutil.h"
#include "log.h"
#include "shell.h"
#include "strutil.h"
#include "uuid.h"
#include "yamlutil.h"

#define BOOTSTRAP_IGN_MAX (64u * 1024 * 1024)

typedef int (*ActionFn)(Installer *in, bool single_node, char **reterr);

static bool file_exists(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0;
}

/* "Failed executing systemctl start [bootkube.service]: <the command's error>" */
static int systemctl(Installer *in, char **reterr, const char *action, ...)
{
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *err = NULL, *args = NULL;
        va_list ap;
        int r;

        if (strv_extend(&argv, "systemctl") < 0 || strv_extend(&argv, action) < 0)
                return -ENOMEM;
        va_start(ap, action);
        for (const char *a; (a = va_arg(ap, const char *));)
                if (strv_extend(&argv, a) < 0) {
                        va_end(ap);
                        return -ENOMEM;
                }
        va_end(ap);
        args = strv_join(argv + 2, " ");
        log_info("Running systemctl %s [%s]", action, strempty(args));
        r = installer_host_run(in, argv, true, NULL, &err);
        if (r < 0) {
                log_error("Failed executing systemctl %s [%s]", action, strempty(args));
                if (reterr)
                        *reterr = strdup_printf("Failed executing systemctl %s [%s]: %s", action,
                                                strempty(args), strna(err));
        }
        return r;
}

static int dry_skip(const char *what)
{
        log_info("dry run: not %s", what);
        return 0;
}

static int write_host_file(Installer *in, const char *path, const void *data, size_t len, mode_t mode,
                           char **reterr)
{
        _cleanup_free_ char *p = installer_host_file(in, path), *dir = NULL;
        char *slash;
        int r;

        if (!p)
                return -ENOMEM;
        dir = strdup(p);
        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                r = mkdir_p(dir, 0755);
                if (r < 0) {
                        *reterr = strdup_printf("cannot create %s: %s", dir, strerror(-r));
                        return r;
                }
        }
        r = write_file_atomic(p, data, len, mode);
        if (r < 0)
                *reterr = strdup_printf("cannot write %s: %s", path, strerror(-r));
        return r;
}

/* ---- the actions ---------------------------------------------------------- */

static int do_mkdir_ssh(Installer *in, bool single_node, char **reterr)
{
        _cleanup_free_ char *p = installer_host_file(in, SSH_DIR);
        int r;

        (void)single_node;
        if (!p)
                return -ENOMEM;
        if (in->cfg->dry_run)
                return dry_skip("creating " SSH_DIR);
        /* the log upload mounts it; ssh-keygen puts the key there */
        r = mkdir_p(p, 0700);
        if (r < 0) {
                log_error("Failed to create SSH dir");
                *reterr = strdup_printf("cannot create %s: %s", SSH_DIR, strerror(-r));
        }
        return r;
}

static int do_download(Installer *in, bool single_node, char **reterr)
{
        _cleanup_free_ char *data = NULL, *err = NULL, *report_text = NULL;
        IgnReport report = IGN_REPORT_INIT;
        size_t len = 0;
        int r;

        in->bootstrap_ign = strdup_printf("%s/bootstrap.ign", in->cfg->install_dir);
        if (!in->bootstrap_ign)
                return -ENOMEM;
        log_info("Getting bootstrap.ign file");
        r = service_download_file(&in->svc, "bootstrap.ign", &data, &len, &err);
        if (r < 0) {
                log_error("Failed to fetch file (bootstrap.ign) from server. err: %s", strna(err));
                *reterr = TAKE_PTR(err);
                return r;
        }
        /* it holds the cluster's secrets */
        r = write_file_atomic(in->bootstrap_ign, data, len, 0600);
        if (r < 0) {
                *reterr = strdup_printf("cannot write %s: %s", in->bootstrap_ign, strerror(-r));
                return r;
        }
        r = ign_config_parse(data, len, BOOTSTRAP_IGN_MAX, &in->bootstrap_config, &report);
        report_text = ign_report_format(&report);
        ign_report_done(&report);
        if (r < 0) {
                log_error("Failed to parse ignition");
                *reterr = strdup_printf("cannot parse bootstrap.ign: %s", strna(report_text));
                return r;
        }
        /* the service adds the marker for several masters from 4.7 on; without
         * it cluster-etcd-operator waits for three masters besides the
         * bootstrap and the bootstrap waits for ever */
        if (!single_node && in->etcd == ETCD_BOOTSTRAP_DELAYED_HA) {
                _cleanup_free_ void *m = NULL;
                size_t mlen;
                if (ign_config_extract_file(in->bootstrap_config, ETCD_DELAYED_HA_MARKER, 1024, &m, &mlen,
                                            NULL) < 0)
                        log_warning(
                                "bootstrap.ign has no %s: cluster-etcd-operator will not use its delayed-HA "
                                "bootstrap, and the etcd bootstrap needs three masters besides this one",
                                ETCD_DELAYED_HA_MARKER);
        }
        return 0;
}

static int do_pull_secret(Installer *in, bool single_node, char **reterr)
{
        _cleanup_free_ void *data = NULL;
        _cleanup_free_ char *err = NULL;
        size_t len = 0;
        int r;

        (void)single_node;
        log_info("Getting data from %s", in->bootstrap_ign);
        r = ign_config_extract_file(in->bootstrap_config, DOCKER_CONFIG, 16u * 1024 * 1024, &data, &len,
                                    &err);
        if (r < 0 && in->cfg->dry_run) {
                /* a stand-in service's bootstrap.ign may not carry it; nothing would be written anyway */
                log_warning("dry run: cannot extract %s from bootstrap.ign: %s", DOCKER_CONFIG, strna(err));
                return 0;
        }
        if (r < 0) {
                *reterr =
                        strdup_printf("cannot extract %s from bootstrap.ign: %s", DOCKER_CONFIG, strna(err));
                return r;
        }
        if (in->cfg->dry_run) {
                log_info("dry run: not writing the pull secret (%zu bytes) to %s", len, DOCKER_CONFIG);
                explicit_bzero(data, len);
                return 0;
        }
        log_info("Writing the pull secret to %s", DOCKER_CONFIG);
        r = write_host_file(in, DOCKER_CONFIG, data, len, 0600, reterr);
        explicit_bzero(data, len);
        return r;
}

static int apply_mcd(Installer *in, char **reterr)
{
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *err = NULL;
        const char *once_from = installer_host_view(in, in->bootstrap_ign);
        int r = 0;

        if (isempty(in->cfg->mco_image)) {
                *reterr = strdup(
                        "no --mco-image: the machine-config-daemon's image lays bootstrap.ign onto the "
                        "live root (or use --bootstrap-apply=native)");
                return -EINVAL;
        }
        if (!startswith(once_from, "/")) {
                *reterr = strdup_printf(
                        "%s is not inside the host root %s: the machine-config-daemon could not "
                        "read it",
                        in->bootstrap_ign, in->host_root);
                return -EINVAL;
        }
        argv = mcd_podman_argv(in->cfg->mco_image, in->host_root_is_directory ? in->host_root : "/",
                               once_from);
        if (!argv)
                return -ENOMEM;
        log_info("Extracting ignition to disk using %s mcoImage", in->cfg->mco_image);
        {
                _cleanup_free_ char *line = shell_join(argv);
                log_info("Running %s", strna(line));
        }
        for (unsigned i = 0; i < MCD_ATTEMPTS; i++) {
                free(err);
                err = NULL;
                r = installer_host_run(in, argv, true, NULL, &err);
                if (r >= 0) {
                        log_info("Done extracting ignition to filesystem");
                        return 0;
                }
                log_error("Failed to extract ignition to disk: %s", strna(err));
        }
        log_error("Failed to extract ignition to disk, giving up");
        *reterr = TAKE_PTR(err);
        return r;
}

/* systemctl VERB UNIT... in one call, as the MCD enables and disables */
static int systemctl_units(Installer *in, const char *verb, char *const *units, char **reterr)
{
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        if (!units)
                return 0;
        if (strv_extend(&argv, "systemctl") < 0 || strv_extend(&argv, verb) < 0)
                return -ENOMEM;
        STRV_FOREACH (u, units)
                if (strv_extend(&argv, *u) < 0)
                        return -ENOMEM;
        r = installer_host_run(in, argv, true, NULL, &err);
        if (r < 0)
                *reterr = strdup_printf("cannot %s the units of bootstrap.ign: %s", verb, strna(err));
        return r;
}

static int apply_native(Installer *in, char **reterr)
{
        _cleanup_(native_apply_plan_done) NativeApplyPlan plan = {};
        _cleanup_free_ char *err = NULL, *ignored = NULL;
        int r;

        log_info("Laying bootstrap.ign onto %s with cradle's Ignition apply (--bootstrap-apply=native)",
                 in->host_root);
        r = native_apply_plan(in->bootstrap_config, &plan, &err);
        if (r < 0) {
                *reterr = strdup_printf(
                        "refusing to apply bootstrap.ign natively: %s; the machine-config-daemon "
                        "(--bootstrap-apply=mcd) may",
                        strna(err));
                return r;
        }
        ignored = strv_join(plan.ignored, ", ");
        if (!isempty(ignored))
                log_info("Not applied, as the machine-config-daemon's once-from does not apply them either: "
                         "%s",
                         ignored);
        /* a unit about to be rewritten is disabled first, as the MCD does,
         * since its [Install] section may change */
        STRV_FOREACH (u, plan.disable_first) {
                char *argv[] = { (char *)"systemctl", (char *)"is-enabled", *u, NULL };
                _cleanup_free_ char *out = NULL;
                int status = 0;
                if (installer_host_run_status(in, argv, &status, &out) >= 0 && status == 0 &&
                    streq_ptr(out, "enabled")) {
                        log_info("Disabling systemd unit %s before re-writing it", *u);
                        r = systemctl(in, reterr, "disable", *u, NULL);
                        if (r < 0)
                                return r;
                }
        }
        STRV_FOREACH (p, plan.remove) {
                _cleanup_free_ char *f = installer_host_file(in, *p);
                if (!f)
                        return -ENOMEM;
                if (unlink(f) < 0 && errno != ENOENT) {
                        *reterr = strdup_printf("cannot remove %s: %m", *p);
                        return negative_errno();
                }
                log_info("Removed %s", *p);
        }
        r = ign_config_apply(plan.config, in->host_root, IGN_APPLY_SYMLINKS_IN_ROOT, &err);
        if (r < 0) {
                *reterr = strdup_printf("cannot apply bootstrap.ign to %s: %s", in->host_root, strna(err));
                return r;
        }
        r = systemctl_units(in, "enable", plan.enable, reterr);
        if (r >= 0)
                r = systemctl_units(in, "disable", plan.disable, reterr);
        if (r < 0)
                return r;
        STRV_FOREACH (u, plan.preset) {
                char *argv[] = { (char *)"systemctl", (char *)"preset", *u, NULL };
                /* a unit may be only a drop-in: no preset, not an error */
                if (installer_host_run(in, argv, false, NULL, NULL) < 0)
                        log_info("Did not restore preset for %s (may not exist)", *u);
        }
        log_info("Done extracting ignition to filesystem");
        return 0;
}

static int do_apply(Installer *in, bool single_node, char **reterr)
{
        (void)single_node;
        if (in->cfg->dry_run)
                return dry_skip("laying bootstrap.ign onto the live root");
        return in->cfg->bootstrap_apply == BOOTSTRAP_APPLY_NATIVE ? apply_native(in, reterr)
                                                                  : apply_mcd(in, reterr);
}

static int do_ssh_key(Installer *in, bool single_node, char **reterr)
{
        _cleanup_free_ char *key = installer_host_arg(in, SSH_KEY), *pub_path = NULL, *pub = NULL,
                            *yaml = NULL;
        _cleanup_(json_object_putp) json_object *mc = NULL;
        size_t len;
        int r;

        (void)single_node;
        if (in->cfg->dry_run)
                return dry_skip("generating an SSH key pair and its MachineConfig manifest");
        if (!key)
                return -ENOMEM;
        log_info("Generating new SSH key pair");
        {
                char *argv[] = { (char *)"ssh-keygen", (char *)"-q", (char *)"-f", key,
                                 (char *)"-N",         (char *)"",   NULL };
                r = installer_host_run(in, argv, true, NULL, reterr);
                if (r < 0) {
                        log_error("Failed to generate SSH key pair");
                        return r;
                }
        }
        pub_path = installer_host_file(in, SSH_KEY ".pub");
        if (!pub_path)
                return -ENOMEM;
        r = read_full_file(pub_path, 64 * 1024, &pub, NULL);
        if (r < 0) {
                *reterr = strdup_printf("cannot read %s.pub: %s", SSH_KEY, strerror(-r));
                return r;
        }
        mc = ssh_machine_config(pub);
        if (!mc || json_to_yaml(mc, &yaml, &len) < 0)
                return -ENOMEM;
        return write_host_file(in, BOOTSTRAP_OPENSHIFT_DIR "/" SSH_MANIFEST_FILE, yaml, len, 0644, reterr);
}

static int do_daemon_reload(Installer *in, bool single_node, char **reterr)
{
        (void)single_node;
        if (in->cfg->dry_run)
                return dry_skip("reloading systemd");
        return systemctl(in, reterr, "daemon-reload", NULL);
}

static int do_hostname(Installer *in, bool single_node, char **reterr)
{
        char name[256] = {};
        char id[UUID_STRING_MAX];
        _cleanup_free_ char *random_name = NULL;

        (void)single_node;
        if (in->cfg->dry_run)
                return dry_skip("checking the hostname");
        log_info("Start checking hostname");
        if (gethostname(name, sizeof(name) - 1) < 0) {
                *reterr = strdup_printf("Failed to get hostname from kernel, err %m");
                return negative_errno();
        }
        if (!hostname_needs_replacing(name)) {
                log_info("hostname [%s] is not localhost or invalid, no need to do anything", name);
                return 0;
        }
        /* NetworkManager's hostname service would otherwise rewrite
         * /etc/resolv.conf and drop 30-local-dns-prepender's entry, which
         * bootkube needs to resolve the API */
        uuid_random(id);
        random_name = strdup_printf("random-hostname-%s", id);
        if (!random_name)
                return -ENOMEM;
        log_info("Hostname [%s] is invalid, generated random hostname [%s]", name, random_name);
        {
                char *argv[] = { (char *)"hostnamectl", (char *)"set-hostname", random_name, NULL };
                int r = installer_host_run(in, argv, true, NULL, reterr);
                if (r < 0)
                        log_error("Failed to generate random hostname");
                return r;
        }
}

static int do_network_manager(Installer *in, bool single_node, char **reterr)
{
        (void)single_node;
        if (in->cfg->dry_run)
                return dry_skip("restarting NetworkManager");
        /* its dispatcher runs 30-local-dns-prepender */
        return systemctl(in, reterr, "restart", "NetworkManager.service", NULL);
}

static int do_controller_manifests(Installer *in, bool single_node, char **reterr)
{
        const InstallerConfig *c = in->cfg;
        ControllerManifestsInput mi = {
                .cluster_id = c->cluster_id,
                .inventory_url = c->url,
                .skip_cert_verification = c->insecure,
                .ca_cert_path = c->cacert,
                .check_cluster_version = c->check_cluster_version,
                .control_plane_count = c->control_plane_count,
                .must_gather_image = c->must_gather_image,
                .pull_secret_token = c->token,
                .controller_image = c->controller_image,
                .openshift_version = c->openshift_version,
                .service_ips = c->service_ips,
                .notify_num_reboots = c->notify_num_reboots,
        };
        Manifest *m = NULL;
        size_t n = 0;
        int r;

        (void)single_node;
        r = controller_manifests(&mi, &m, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *yaml = NULL, *path = NULL;
                size_t len;

                path = strdup_printf("%s/%s", BOOTSTRAP_MANIFESTS_DIR, m[i].file);
                r = path ? json_to_yaml(m[i].object, &yaml, &len) : -ENOMEM;
                if (r < 0)
                        break;
                if (c->dry_run) {
                        log_info("dry run: not writing %s", path);
                        continue;
                }
                log_info("Writing rendered data to %s", path);
                r = write_host_file(in, path, yaml, len, m[i].secret ? 0600 : 0644, reterr);
                if (m[i].secret)
                        explicit_bzero(yaml, len);
                if (r < 0)
                        break;
        }
        manifests_free(m, n);
        return r;
}

/* waitForActiveService: "active" is done, "failed" an error; no timeout */
static int wait_service_active(Installer *in, const char *service, char **reterr)
{
        log_info("Waiting for %s to complete", service);
        for (;;) {
                char *argv[] = { (char *)"systemctl",   (char *)"show",  (char *)"-P",
                                 (char *)"ActiveState", (char *)service, NULL };
                _cleanup_free_ char *out = NULL, *err = NULL;

                if (installer_host_run(in, argv, false, &out, &err) < 0)
                        log_warning("error occurred checking state of %s: %s", service, strna(err));
                else {
                        log_info("%s status: %s", service, out);
                        if (streq(out, "active"))
                                return 0;
                        if (streq(out, "failed")) {
                                char *status[] = { (char *)"systemctl", (char *)"status", (char *)service,
                                                   NULL };
                                _cleanup_free_ char *text = NULL;
                                int st = 0;
                                (void)installer_host_run_status(in, status, &st, &text);
                                log_info("%s", strempty(text));
                                *reterr = strdup_printf("service %s failed", service);
                                return -EIO;
                        }
                }
                if (sleep_usec(in->cfg->poll_interval) < 0)
                        return -ECANCELED;
        }
}

static int do_node_image(Installer *in, bool single_node, char **reterr)
{
        static const char *const services[] = { "node-image-pull.service", "node-image-overlay.service" };
        _cleanup_free_ char *oc = installer_host_file(in, OPENSHIFT_CLIENT);
        int r;

        (void)single_node;
        if (!oc)
                return -ENOMEM;
        if (file_exists(oc))
                return 0;
        if (in->cfg->dry_run)
                return dry_skip("overlaying the node image (" OPENSHIFT_CLIENT " is missing)");
        /* a pure RHEL/CentOS live image: oc, kubelet, cri-o come from the
         * node image */
        log_info("%s is missing: overlaying the node image", OPENSHIFT_CLIENT);
        r = systemctl(in, reterr, "start", "--no-block", services[0], services[1], NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(services); i++) {
                r = wait_service_active(in, services[i], reterr);
                if (r < 0)
                        return r;
        }
        if (!file_exists(oc)) {
                *reterr = strdup_printf("%s successful but missing %s", services[1], OPENSHIFT_CLIENT);
                return -ENOENT;
        }
        return 0;
}

static int do_start_units(Installer *in, bool single_node, char **reterr)
{
        (void)single_node;
        for (size_t i = 0; bootstrap_units[i]; i++) {
                int r;
                if (in->cfg->dry_run) {
                        log_info("dry run: not starting %s", bootstrap_units[i]);
                        continue;
                }
                r = systemctl(in, reterr, "start", bootstrap_units[i], NULL);
                if (r < 0)
                        return r;
        }
        log_info("Done setting up bootstrap");
        return 0;
}

static const ActionFn actions[_BOOTSTRAP_ACTION_MAX] = {
        [BOOTSTRAP_MKDIR_SSH] = do_mkdir_ssh,
        [BOOTSTRAP_DOWNLOAD] = do_download,
        [BOOTSTRAP_PULL_SECRET] = do_pull_secret,
        [BOOTSTRAP_APPLY] = do_apply,
        [BOOTSTRAP_SSH_KEY] = do_ssh_key,
        [BOOTSTRAP_DAEMON_RELOAD] = do_daemon_reload,
        [BOOTSTRAP_HOSTNAME] = do_hostname,
        [BOOTSTRAP_NETWORK_MANAGER] = do_network_manager,
        [BOOTSTRAP_CONTROLLER_MANIFESTS] = do_controller_manifests,
        [BOOTSTRAP_NODE_IMAGE] = do_node_image,
        [BOOTSTRAP_START_UNITS] = do_start_units,
};

int bootstrap_start(Installer *in, bool single_node, char **reterr)
{
        BootstrapAction plan[_BOOTSTRAP_ACTION_MAX];
        size_t n = start_bootstrap_plan(single_node, plan);

        log_info("Running bootstrap");
        for (size_t i = 0; i < n; i++) {
                int r;
                log_debug("bootstrap: %s", bootstrap_action_to_string(plan[i]));
                r = actions[plan[i]](in, single_node, reterr);
                if (r < 0) {
                        if (!*reterr)
                                *reterr = strdup_printf("%s: %s", bootstrap_action_to_string(plan[i]),
                                                        strerror(-r));
                        return r;
                }
        }
        return 0;
}

int bootstrap_wait_bootkube(Installer *in, char **reterr)
{
        _cleanup_free_ char *done = installer_host_file(in, BOOTKUBE_DONE);
        usec_t last_log = 0;

        (void)reterr;
        if (!done)
                return -ENOMEM;
        log_info("Waiting for bootkube to complete");
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_WAITING_FOR_BOOTKUBE), "");
        if (in->cfg->dry_run)
                return dry_skip("waiting for bootkube: it does not run in dry run");
        for (;;) {
                if (file_exists(done)) {
                        char *argv[] = { (char *)"systemctl", (char *)"status", (char *)"bootkube.service",
                                         NULL };
                        _cleanup_free_ char *out = NULL;
                        int st = 0;
                        log_info("bootkube service completed");
                        (void)installer_host_run_status(in, argv, &st, &out);
                        log_info("%s", strempty(out));
                        return 0;
                }
                if (now_usec(CLOCK_MONOTONIC) - last_log >= 60 * USEC_PER_SEC || last_log == 0) {
                        log_info("Waiting for bootkube: %s does not exist yet", BOOTKUBE_DONE);
                        last_log = now_usec(CLOCK_MONOTONIC);
                }
                if (sleep_usec(in->cfg->poll_interval) < 0)
                        return -ECANCELED;
        }
}
