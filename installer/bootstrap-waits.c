/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bootstrap after its image is written (notes §4.2, §4.3, §4.6, §4.7,
 * §4.8): the waits of bootstrap_waits_plan(), each below. A wait checks,
 * says where it stands (on every change, and once a minute while nothing
 * changes), sleeps --poll-interval and checks again; none gives up where
 * upstream never does (the service times the stage out instead). Fatal are
 * only the resolv.conf reload, the Kubernetes client and the cluster query.
 *
 * And the Configuring reporting for the other hosts (notes §4.5), a thread
 * from the end of startBootstrap until the installer returns.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assisted/assisted-models.h"
#include "assisted/assisted.h"
#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "ignition/ignition.h"
#include "installer/bootstrap-plan.h"
#include "installer/cluster-view.h"
#include "installer/config.h"
#include "installer/installer-private.h"
#include "jsonutil.h"
#include "log.h"
#include "targz.h"
#include "strutil.h"
#include "yamlutil.h"

#define STATUS_EVERY (60 * USEC_PER_SEC)

/* ---- saying where a wait stands ------------------------------------------- */

typedef struct WaitLog {
        const char *what;
        char *last;
        usec_t at;
} WaitLog;

static void wait_log_done(WaitLog *w)
{
        free(w->last);
}

/* Logs "waiting for WHAT: STATUS" when the status changed or a minute
 * passed. Takes status. */
static void wait_status(WaitLog *w, char *status)
{
        usec_t now = now_usec(CLOCK_MONOTONIC);

        if (!status)
                return;
        if (!w->last || !streq(w->last, status) || now - w->at >= STATUS_EVERY) {
                log_info("waiting for %s: %s", w->what, status);
                w->at = now;
        }
        free(w->last);
        w->last = status;
}

static int wait_sleep(Installer *in)
{
        return sleep_usec(in->cfg->poll_interval) < 0 ? -ECANCELED : 0;
}

static char *kube_error(const KubeStatus *st, int r)
{
        return strdup(st && st->message ? st->message : strerror(-r));
}

/* ---- the waits ------------------------------------------------------------- */

static int w_reload_resolv_conf(Installer *in, char **reterr)
{
        _cleanup_free_ char *path = NULL, *data = NULL;
        size_t len = 0;
        int r;

        if (in->cfg->dry_run)
                return log_info("dry run: not reloading /etc/resolv.conf"), 0;
        if (!host_exec_enters(in->host)) {
                /* running in the host's mount namespace: the file is the
                 * host's already */
                log_info("/etc/resolv.conf is the host's: nothing to reload");
                return 0;
        }
        /* bootkube.sh changed the host's; our name lookups (api-int) need it */
        path = installer_host_file(in, "/etc/resolv.conf");
        if (!path)
                return -ENOMEM;
        r = read_full_file(path, BUF_MAX_SMALL_FILE, &data, &len);
        if (r >= 0)
                r = write_file_atomic("/etc/resolv.conf", data, len, 0644);
        if (r < 0) {
                log_error("Failed to reload resolv.conf");
                *reterr = strdup_printf("cannot reload /etc/resolv.conf from the host: %s", strerror(-r));
        }
        return r;
}

static int w_kube_client(Installer *in, char **reterr)
{
        _cleanup_free_ char *err = NULL, *kubeconfig = NULL, *data = NULL;
        DryClusterHost *hosts = NULL;
        size_t n = 0, len = 0;
        int r;

        if (!in->cfg->dry_run) {
                kubeconfig = installer_host_file(in, BOOTSTRAP_KUBECONFIG);
                if (!kubeconfig)
                        return -ENOMEM;
                r = cluster_view_new_kube(kubeconfig, &in->view, &err);
                if (r < 0) {
                        log_error("cannot build a Kubernetes client: %s", strna(err));
                        *reterr = strdup_printf("cannot build a Kubernetes client from %s: %s",
                                                BOOTSTRAP_KUBECONFIG, strna(err));
                }
                return r;
        }
        /* dry run: the cluster as the hosts file says (upstream's drymock) */
        if (isempty(in->cfg->dry_run_cluster_hosts_path)) {
                *reterr = strdup(
                        "dry run: a bootstrap needs --dry-run-cluster-hosts-path (DRY_CLUSTER_HOSTS_PATH) "
                        "to know which hosts become nodes");
                return -EINVAL;
        }
        r = read_full_file(in->cfg->dry_run_cluster_hosts_path, BUF_MAX_JSON_DOC, &data, &len);
        if (r >= 0)
                r = dry_cluster_hosts_parse(data, len, &hosts, &n, &err);
        if (r < 0) {
                *reterr = strdup_printf("dry run: cannot read the cluster hosts %s: %s",
                                        in->cfg->dry_run_cluster_hosts_path, err ? err : strerror(-r));
                return r;
        }
        r = cluster_view_new_dry(hosts, n,
                                 in->cfg->control_plane_count > 0 ? in->cfg->control_plane_count : (int)n,
                                 &in->view);
        dry_cluster_hosts_free(hosts, n);
        if (r >= 0)
                log_info(
                        "dry run: the cluster is the %zu hosts of %s, Ready once their reboot marker exists",
                        n, in->cfg->dry_run_cluster_hosts_path);
        return r;
}

static int w_report_masters_join(Installer *in, char **reterr)
{
        (void)reterr;
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_WAITING_FOR_CONTROL_PLANE),
                               "Waiting for masters to join bootstrap control plane");
        return 0;
}

/* The install-config the service would apply (vSphere credentials), else
 * the cluster's own (kube-system/cluster-config-v1). */
static bool vsphere_credentials(Installer *in, json_object *cluster)
{
        const char *overrides = json_get_string(cluster, "install_config_overrides");
        _cleanup_(json_object_putp) json_object *ic = NULL, *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        if (!isempty(overrides) &&
            json_parse(overrides, strlen(overrides), BUF_MAX_JSON_DOC, &ic, NULL) >= 0 &&
            json_get_path(ic, "platform.vsphere"))
                return vsphere_credentials_valid(ic);
        if (cluster_view_get_configmap(in->view, "kube-system", "cluster-config-v1", &cm, &st) < 0)
                return false;
        {
                const char *text = json_get_string(json_get(cm, "data"), "install-config");
                json_object *yaml = NULL;
                bool ok;
                if (!text || yaml_to_json(text, strlen(text), &yaml, NULL) < 0)
                        return false;
                ok = vsphere_credentials_valid(yaml);
                json_object_put(yaml);
                return ok;
        }
}

static int w_get_cluster(Installer *in, char **reterr)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        r = service_get_cluster(&in->svc, &cluster, &err);
        if (r < 0) {
                log_error("Getting cluster %s: %s", in->cfg->cluster_id, strna(err));
                *reterr = TAKE_PTR(err);
                return r;
        }
        free(in->platform);
        in->platform = strdup(strempty(json_get_string(json_get(cluster, "platform"), "type")));
        if (!in->platform)
                return -ENOMEM;
        if (streq(in->platform, "vsphere")) {
                in->vsphere_credentials = vsphere_credentials(in, cluster);
                log_info("Has valid vSphere credentials: %s", in->vsphere_credentials ? "true" : "false");
        }
        return 0;
}

static void untaint_nodes(Installer *in, json_object *nodes)
{
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *items = json_get(nodes, "items");
        const char *invoker;
        bool remove;

        /* openshift-install-manifests appears with the first nodes */
        (void)cluster_view_get_configmap(in->view, "openshift-config", "openshift-install-manifests", &cm,
                                         &st);
        invoker = invoker_of(cm);
        remove = remove_uninitialized_taint(in->platform, in->cfg->openshift_version, invoker,
                                            in->vsphere_credentials);
        log_debug("Remove uninitialized taint: %s", remove ? "true" : "false");
        if (!remove)
                return;
        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *n = json_object_array_get_idx(items, i);
                const char *name = json_get_string(json_get(n, "metadata"), "name");
                _cleanup_(json_object_putp) json_object *node = NULL, *patch = NULL;
                _cleanup_kube_status_ KubeStatus s2 = {};
                int idx;

                if (kube_node_ready(n) || isempty(name))
                        continue;
                if (cluster_view_get_node(in->view, name, &node, &s2) < 0)
                        continue;
                idx = kube_node_taint_index(node, UNINITIALIZED_TAINT);
                if (idx < 0)
                        continue;
                patch = kube_node_taint_remove_patch((unsigned)idx, UNINITIALIZED_TAINT);
                if (!patch || cluster_view_patch_node(in->view, name, patch, &s2) < 0)
                        log_warning("Failed to untaint node %s: %s", name, strna(s2.message));
                else
                        log_info("Removed the taint %s from node %s", UNINITIALIZED_TAINT, name);
        }
}

/* waitForNodes: min(replicas-1, 2) masters, or 1 arbiter, Ready; Joined for
 * the other hosts as their nodes turn Ready */
static int w_nodes(Installer *in, const char *role, const char *pool)
{
        _cleanup_(wait_log_done) WaitLog w = { .what = NULL };
        _cleanup_(cluster_hosts_done) ClusterHosts inv = {};
        _cleanup_strv_free_ char **ready = NULL;
        _cleanup_free_ char *what = strdup_printf("%s nodes", role), *label = NULL;
        bool have_inv = false;

        if (!what)
                return -ENOMEM;
        label = strdup_printf("node-role.kubernetes.io/%s", role);
        if (!label)
                return -ENOMEM;
        w.what = what;
        log_info("Waiting for %s nodes", role);
        for (;;) {
                _cleanup_(json_object_putp) json_object *cm = NULL, *nodes = NULL;
                _cleanup_kube_status_ KubeStatus st = {};
                _cleanup_free_ char *err = NULL;
                NodeAction *actions = NULL;
                size_t n_actions = 0;
                int64_t replicas = 0;
                unsigned target;
                int r;

                r = cluster_view_get_configmap(in->view, "kube-system", "cluster-config-v1", &cm, &st);
                if (r >= 0)
                        r = install_config_replicas(json_get_string(json_get(cm, "data"), "install-config"),
                                                    pool, &replicas, &err);
                if (r < 0) {
                        wait_status(&w,
                                    strdup_printf("still waiting for the kube API server to be available to "
                                                  "check node replicas are expected (%s)",
                                                  err ? err : strna(st.message)));
                        goto next;
                }
                target = nodes_wait_target(role, replicas);
                if (target == 0) {
                        log_info("Waiting for %s nodes not needed as %" PRIi64
                                 " of this node was specified in "
                                 "the install config",
                                 role, replicas);
                        return 0;
                }
                if (!have_inv) {
                        _cleanup_(json_object_putp) json_object *cluster = NULL;
                        r = service_get_cluster_hosts(&in->svc, &cluster, &err);
                        if (r >= 0)
                                r = cluster_hosts_from_cluster(cluster, in->cfg->host_id, &inv, &err);
                        if (r < 0) {
                                wait_status(&w,
                                            strdup_printf("failed to get hosts info from inventory, err %s",
                                                          strna(err)));
                                goto next;
                        }
                        have_inv = true;
                }
                r = cluster_view_list_nodes(in->view, label, &nodes, &st);
                if (r < 0) {
                        _cleanup_free_ char *e = kube_error(&st, r);
                        _cleanup_free_ char *s = nodes_wait_status(role, ready, target);
                        wait_status(&w, strdup_printf("%s; cannot list %s nodes yet: %s", strna(s), role,
                                                      strna(e)));
                        goto next;
                }
                if (json_object_array_length(json_get(nodes, "items")) > 0)
                        untaint_nodes(in, nodes);
                r = ready_nodes_plan(nodes, ready, &inv, &actions, &n_actions);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n_actions; i++) {
                        NodeAction *a = &actions[i];
                        ClusterHost *h = a->host >= 0 ? &inv.hosts[a->host] : NULL;

                        log_info("Found a new ready %s node %s", role, a->node);
                        if (h && a->report_joined &&
                            !service_progress_for(&in->svc, h->infra_env_id, h->id,
                                                  host_stage_to_string(HOST_STAGE_JOINED), "")) {
                                /* counted once it is reported; the host may have
                                 * moved on since the inventory was read (the
                                 * controller reports a Ready node Done, and the
                                 * service then refuses Joined): read it again,
                                 * so that an installed host is counted without
                                 * a report */
                                cluster_hosts_done(&inv);
                                have_inv = false;
                                break;
                        }
                        if (strv_extend(&ready, a->node) < 0) {
                                node_actions_free(actions, n_actions);
                                return -ENOMEM;
                        }
                        if (!h) {
                                log_warning(
                                        "Failed to update ready %s nodes: node %s is not in inventory hosts",
                                        role, a->node);
                                /* fetch the inventory again next time */
                                cluster_hosts_done(&inv);
                                have_inv = false;
                        }
                }
                node_actions_free(actions, n_actions);
                if (strv_length(ready) >= target) {
                        _cleanup_free_ char *s = nodes_wait_status(role, ready, target);
                        log_info("%s; waiting for %s nodes - Done", strna(s), role);
                        return 0;
                }
                wait_status(&w, nodes_wait_status(role, ready, target));
next:
                if (wait_sleep(in) < 0)
                        return -ECANCELED;
        }
}

static int w_masters(Installer *in, char **reterr)
{
        (void)reterr;
        return w_nodes(in, "master", "controlPlane");
}

static int w_arbiters(Installer *in, char **reterr)
{
        (void)reterr;
        return w_nodes(in, "arbiter", "arbiter");
}

/* the etcd override on (< 4.7) or off again; retried until it takes */
static int etcd_override(Installer *in, bool on)
{
        _cleanup_(wait_log_done) WaitLog w = { .what = on ? "the unsafe etcd override to be set"
                                                          : "the unsafe etcd override to be removed" };

        log_info("%s etcds.operator.openshift.io/cluster's unsupportedConfigOverrides."
                 "useUnsupportedUnsafeNonHANonProductionUnstableEtcd (OpenShift %s is before 4.7)",
                 on ? "Setting" : "Removing", strna(in->cfg->openshift_version));
        for (;;) {
                _cleanup_(json_object_putp) json_object *patch =
                        on ? etcd_override_patch() : etcd_override_undo_patch();
                _cleanup_kube_status_ KubeStatus st = {};
                int r;

                if (!patch)
                        return -ENOMEM;
                r = cluster_view_patch_etcd(in->view, patch, &st);
                if (r >= 0) {
                        in->etcd_override_set = on;
                        log_info("etcd: the unsafe non-HA override is %s", on ? "on" : "off");
                        return 0;
                }
                wait_status(&w, strdup_printf("cannot patch etcds.operator.openshift.io/cluster yet: %s",
                                              strna(st.message)));
                if (wait_sleep(in) < 0)
                        return -ECANCELED;
        }
}

static int w_etcd_override(Installer *in, char **reterr)
{
        (void)reterr;
        return etcd_override(in, true);
}

static int w_etcd_override_undo(Installer *in, char **reterr)
{
        (void)reterr;
        return etcd_override(in, false);
}

static int w_bootkube(Installer *in, char **reterr)
{
        return bootstrap_wait_bootkube(in, reterr);
}

/* progress.service (report-progress.sh) ends once the etcd bootstrap is
 * over; "failed" never ends the wait (upstream: the service times out) */
static int w_etcd_bootstrap(Installer *in, char **reterr)
{
        _cleanup_(wait_log_done) WaitLog w = { .what = "the ETCD bootstrap (progress.service inactive)" };

        (void)reterr;
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_WAITING_FOR_BOOTKUBE),
                               "waiting for ETCD bootstrap to be complete");
        log_info("Started waiting for ETCD bootstrap to complete");
        if (in->cfg->dry_run)
                return log_info("dry run: progress.service does not run; the ETCD bootstrap is complete"), 0;
        for (;;) {
                char *argv[] = { (char *)"systemctl", (char *)"is-active", (char *)"progress.service",
                                 NULL };
                _cleanup_free_ char *out = NULL;
                int status = 0, r;

                r = installer_host_run_status(in, argv, &status, &out);
                if (r >= 0 && streq_ptr(out, "inactive")) {
                        char *st[] = { (char *)"systemctl", (char *)"status", (char *)"progress.service",
                                       NULL };
                        _cleanup_free_ char *text = NULL;
                        log_info("ETCD bootstrap progress service status: %s", out);
                        (void)installer_host_run_status(in, st, &status, &text);
                        log_info("%s", strempty(text));
                        return 0;
                }
                if (r < 0)
                        wait_status(&w, strdup_printf("error occurred checking ETCD bootstrap progress: %s",
                                                      strerror(-r)));
                else if (streq_ptr(out, "failed"))
                        wait_status(&w,
                                    strdup("progress.service failed; it never ends the wait (the service "
                                           "times the stage out): see journalctl -u progress.service"));
                else
                        wait_status(&w, strdup_printf("progress.service is %s", strna(out)));
                if (wait_sleep(in) < 0)
                        return -ECANCELED;
        }
}

/* The controller's log (last hour) as controller_logs.tar.gz, uploaded;
 * best effort */
static void upload_controller_logs(Installer *in)
{
        _cleanup_(json_object_putp) json_object *pods = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *logs = NULL, *path = NULL, *err = NULL;
        _cleanup_(tar_writer_freep) TarWriter *t = NULL;
        _cleanup_close_ int fd = -1;
        json_object *pod;
        const char *name;
        int r;

        r = cluster_view_list_pods(in->view, CONTROLLER_NAMESPACE, "job-name=" CONTROLLER_NAME, &pods, &st);
        if (r < 0) {
                log_warning("Failed to get pod with prefix %s in namespace %s: %s", CONTROLLER_NAME,
                            CONTROLLER_NAMESPACE, strna(st.message));
                return;
        }
        pod = controller_pod_pick(pods);
        if (!pod) {
                log_info("no Running %s pod yet: no controller logs to upload", CONTROLLER_NAME);
                return;
        }
        name = json_get_string(json_get(pod, "metadata"), "name");
        r = cluster_view_pod_logs(in->view, CONTROLLER_NAMESPACE, name, CONTROLLER_LOGS_SINCE_SECONDS, &logs,
                                  &st);
        if (r < 0) {
                log_warning("Failed to upload controller logs: cannot read the logs of %s: %s", name,
                            strna(st.message));
                return;
        }
        path = strdup_printf("%s/" CONTROLLER_LOGS_ARCHIVE ".XXXXXX", in->cfg->install_dir);
        if (!path)
                return;
        fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0) {
                log_warning_errno(negative_errno(), "Failed to upload controller logs: %m");
                return;
        }
        r = tar_writer_new(fd, time(NULL), &t);
        if (r >= 0)
                r = tar_writer_add_data(t, CONTROLLER_LOGS_ENTRY, 0644, logs, strlen(logs));
        if (r >= 0)
                r = tar_writer_finish(t);
        if (r >= 0)
                r = service_upload_controller_logs(&in->svc, path, &err);
        if (r < 0)
                log_warning("Failed to upload controller logs: %s", err ? err : strerror(-r));
        else
                log_info("Uploaded the logs of %s", name);
        (void)unlink(path);
}

static int w_controller(Installer *in, char **reterr)
{
        _cleanup_(wait_log_done) WaitLog w = { .what = "the controller's " CONTROLLER_READY_EVENT " event" };
        _cleanup_strv_free_ char **seen = NULL;
        usec_t last_upload = now_usec(CLOCK_MONOTONIC);

        (void)reterr;
        log_info("Waiting for controller to be ready");
        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_WAITING_FOR_CONTROLLER),
                               "waiting for controller pod ready event");
        for (;;) {
                _cleanup_(json_object_putp) json_object *events = NULL;
                _cleanup_kube_status_ KubeStatus st = {};
                int r;

                r = cluster_view_list_events(in->view, CONTROLLER_NAMESPACE, &events, &st);
                if (r < 0)
                        wait_status(&w,
                                    strdup_printf("failed to get controller events: %s", strna(st.message)));
                else {
                        _cleanup_strv_free_ char **messages = NULL;
                        bool ready = controller_events_scan(events, &seen, &messages);
                        STRV_FOREACH (m, messages)
                                log_info("Assisted controller new event: %s", *m);
                        if (ready) {
                                _cleanup_free_ char *err = NULL;
                                log_info("Assisted controller is ready");
                                if (service_cluster_logs_progress(&in->svc, LOGS_STATE_REQUESTED, &err) < 0)
                                        log_error("failed to report log progress requested on cluster: %s",
                                                  strna(err));
                                upload_controller_logs(in);
                                return 0;
                        }
                        wait_status(&w,
                                    strdup_printf("%zu events in %s, none of them %s yet", strv_length(seen),
                                                  CONTROLLER_NAMESPACE, CONTROLLER_READY_EVENT));
                }
                if (now_usec(CLOCK_MONOTONIC) - last_upload >= in->cfg->controller_logs_interval) {
                        upload_controller_logs(in);
                        last_upload = now_usec(CLOCK_MONOTONIC);
                }
                if (wait_sleep(in) < 0)
                        return -ECANCELED;
        }
}

/* waitForWorkers: only for the agent-based installer, whose service runs on
 * this host */
static int w_workers(Installer *in, char **reterr)
{
        _cleanup_(wait_log_done)
                WaitLog w = { .what = "the workers to start joining (agent-based installer)" };
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *invoker;

        (void)reterr;
        (void)cluster_view_get_configmap(in->view, "openshift-config", "openshift-install-manifests", &cm,
                                         &st);
        invoker = invoker_of(cm);
        if (!streq(invoker, INVOKER_AGENT_INSTALLER))
                return 0;
        for (;;) {
                _cleanup_(json_object_putp) json_object *workers = NULL;
                _cleanup_free_ char *err = NULL, *waiting = NULL;

                if (service_list_hosts(&in->svc, "worker", &workers, &err) < 0)
                        wait_status(&w, strdup_printf("failed to get workers: %s", strna(err)));
                else if (abi_workers_joining(workers, &waiting)) {
                        log_info("The %zu workers started joining", json_object_array_length(workers));
                        return 0;
                } else
                        wait_status(&w,
                                    strdup_printf("still waiting for worker %s to start the joining process",
                                                  strna(waiting)));
                if (sleep_usec(in->cfg->slow_poll_interval) < 0)
                        return -ECANCELED;
        }
}

static int w_mc_annotations(Installer *in, char **reterr)
{
        _cleanup_(wait_log_done)
                WaitLog w = { .what = "consistent MachineConfig annotations on the masters" };

        (void)reterr;
        for (;;) {
                _cleanup_(json_object_putp) json_object *nodes = NULL;
                _cleanup_kube_status_ KubeStatus st = {};
                _cleanup_strv_free_ char **names = NULL, **existing = NULL;
                _cleanup_free_ char *reason = NULL, *desired = NULL;
                int r;

                r = cluster_view_list_nodes(in->view, "node-role.kubernetes.io/master", &nodes, &st);
                if (r < 0) {
                        wait_status(&w, strdup_printf("cannot list master nodes: %s", strna(st.message)));
                        goto next;
                }
                names = mc_annotation_names(nodes);
                if (!names)
                        return -ENOMEM;
                STRV_FOREACH (n, names) {
                        _cleanup_kube_status_ KubeStatus s2 = {};
                        r = cluster_view_machineconfig_exists(in->view, *n, &s2);
                        if (r >= 0 && strv_extend(&existing, *n) < 0)
                                return -ENOMEM;
                        if (r < 0 && r != -ENOENT)
                                log_debug("cannot get MachineConfig %s: %s", *n, strna(s2.message));
                }
                if (mc_annotations_consistent(nodes, existing, &reason, &desired)) {
                        log_info("All master nodes have consistent MachineConfig annotations (desired=%s)",
                                 desired);
                        return 0;
                }
                wait_status(&w, TAKE_PTR(reason));
next:
                if (wait_sleep(in) < 0)
                        return -ECANCELED;
        }
}

typedef int (*WaitFn)(Installer *in, char **reterr);

static const WaitFn waits[_WAIT_MAX] = {
        [WAIT_RELOAD_RESOLV_CONF] = w_reload_resolv_conf,
        [WAIT_KUBE_CLIENT] = w_kube_client,
        [WAIT_REPORT_MASTERS_JOIN] = w_report_masters_join,
        [WAIT_GET_CLUSTER] = w_get_cluster,
        [WAIT_MASTERS] = w_masters,
        [WAIT_ETCD_OVERRIDE] = w_etcd_override,
        [WAIT_ARBITERS] = w_arbiters,
        [WAIT_BOOTKUBE] = w_bootkube,
        [WAIT_ETCD_OVERRIDE_UNDO] = w_etcd_override_undo,
        [WAIT_ETCD_BOOTSTRAP] = w_etcd_bootstrap,
        [WAIT_CONTROLLER] = w_controller,
        [WAIT_WORKERS] = w_workers,
        [WAIT_MC_ANNOTATIONS] = w_mc_annotations,
};

int bootstrap_waits(Installer *in, char **reterr)
{
        BootstrapWait plan[_WAIT_MAX];
        size_t n = bootstrap_waits_plan(in->etcd, plan);

        (void)service_progress(&in->svc, host_stage_to_string(HOST_STAGE_WAITING_FOR_CONTROL_PLANE),
                               "Waiting for bootstrap node preparation");
        log_info("bootstrap: etcd bootstrap %s (OpenShift %s)", etcd_bootstrap_to_string(in->etcd),
                 strna(in->cfg->openshift_version));
        for (size_t i = 0; i < n; i++) {
                int r;
                LOG_CONTEXT_PUSH("BOOTSTRAP_WAIT", bootstrap_wait_to_string(plan[i]));
                log_debug("bootstrap wait %s", bootstrap_wait_to_string(plan[i]));
                r = waits[plan[i]](in, reterr);
                if (r < 0)
                        return r;
                /* the control plane is up (waitForControlPlane returned) */
                if (plan[i] == WAIT_CONTROLLER)
                        log_info("Setting bootstrap node new role to master");
        }
        return 0;
}

void bootstrap_cleanup(Installer *in)
{
        _cleanup_(json_object_putp) json_object *patch = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        if (!in->etcd_override_set || !in->view)
                return;
        /* the installation failed after the override went on: the cluster
         * must not stay in the unsafe mode */
        patch = etcd_override_undo_patch();
        if (patch && cluster_view_patch_etcd(in->view, patch, &st) >= 0) {
                in->etcd_override_set = false;
                log_info("etcd: the unsafe non-HA override is off again");
        } else
                log_error("cannot remove the unsafe etcd override (etcds.operator.openshift.io/cluster "
                          "spec.unsupportedConfigOverrides): %s; remove it by hand",
                          strna(st.message));
}

void bootstrap_done(Installer *in)
{
        cluster_view_free(in->view);
        in->view = NULL;
        ign_config_free(in->bootstrap_config);
        in->bootstrap_config = NULL;
        free(in->bootstrap_ign);
        in->bootstrap_ign = NULL;
        free(in->platform);
        in->platform = NULL;
}

/* ---- Configuring reporting (notes §4.5) ----------------------------------------- */

struct Configuring {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stopping;
        Installer *in;
        AssistedClient *client;
        Service svc;
};

/* The first *machine-config-server*.log of the host's /var/log/containers
 * (there is one: the bootstrap's MCS static pod). */
static int read_mcs_log(Installer *in, char **ret)
{
        _cleanup_free_ char *dir = installer_host_file(in, MCS_LOG_DIR), *first = NULL, *path = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (!dir)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return negative_errno();
        while ((de = readdir(d)))
                if (strstr(de->d_name, "machine-config-server") && endswith(de->d_name, ".log") &&
                    (!first || strcmp(de->d_name, first) < 0)) {
                        free(first);
                        first = strdup(de->d_name);
                        if (!first)
                                return -ENOMEM;
                }
        if (!first)
                return -ENOENT;
        path = strdup_printf("%s/%s", dir, first);
        if (!path)
                return -ENOMEM;
        return read_full_file(path, 64u * 1024 * 1024, ret, NULL);
}

static void *configuring_thread(void *userdata)
{
        Configuring *c = userdata;
        Installer *in = c->in;
        _cleanup_(cluster_hosts_done) ClusterHosts inv = {};
        bool have_inv = false;

        log_info("Start waiting for configuring state");
        for (;;) {
                _cleanup_free_ char *log = NULL, *err = NULL;
                size_t left = 0;

                if (!cond_sleep_unless_stopped(&c->cond, &c->lock, &c->stopping,
                                               in->cfg->slow_poll_interval))
                        break;
                log_debug("searching for hosts that pulled ignition already");
                if (!have_inv) {
                        _cleanup_(json_object_putp) json_object *cluster = NULL;
                        int r = service_get_cluster_hosts(&c->svc, &cluster, &err);
                        if (r >= 0)
                                r = cluster_hosts_from_cluster(cluster, in->cfg->host_id, &inv, &err);
                        if (r < 0) {
                                log_warning("Failed to get hosts info from inventory, err %s", strna(err));
                                continue;
                        }
                        have_inv = true;
                }
                if (read_mcs_log(in, &log) < 0)
                        log_info("Failed to get MCS logs, will retry");
                for (size_t i = 0; i < inv.n; i++) {
                        ClusterHost *h = &inv.hosts[i];
                        const char *stage;
                        if (configuring_stage_done(h->stage))
                                continue;
                        if (log && mcs_log_shows(log, h->ips)) {
                                stage = configuring_stage_for(h->role);
                                log_info("Host %s found in mcs logs, moving it to %s state", h->id, stage);
                                if (service_progress_for(&c->svc, h->infra_env_id, h->id, stage, "") &&
                                    free_and_strdup(&h->stage, stage) < 0)
                                        break;
                        }
                        if (!configuring_stage_done(h->stage))
                                left++;
                }
                if (left == 0) {
                        log_info("Exiting updateConfiguringStatus: every other host pulled its ignition");
                        break;
                }
        }
        return NULL;
}

int configuring_start(Installer *in)
{
        _cleanup_free_ Configuring *c = NULL;
        pthread_condattr_t attr;
        AssistedClientOptions co;
        _cleanup_free_ char *err = NULL;
        int r;

        if (in->configuring)
                return 0;
        c = calloc(1, sizeof(Configuring));
        if (!c)
                return -ENOMEM;
        c->in = in;
        /* a client of its own: the flow's is not shared between threads */
        co = (AssistedClientOptions){
                .url = in->cfg->url,
                .ca_file = isempty(in->cfg->cacert) ? NULL : in->cfg->cacert,
                .insecure = in->cfg->insecure,
                .token = in->cfg->token,
                .retry = HTTP_RETRY_NONE,
        };
        r = assisted_client_new(&co, &c->client, &err);
        if (r < 0) {
                log_warning("cannot create the Configuring reporting's client: %s", strna(err));
                return r;
        }
        c->svc = in->svc;
        c->svc.client = c->client;
        /* no retries inside a round: the next round, slow-poll-interval
         * later, is the retry, and stopping never waits out a back-off */
        c->svc.retry.short_retries = c->svc.retry.long_retries = 0;
        pthread_mutex_init(&c->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&c->cond, &attr);
        pthread_condattr_destroy(&attr);
        r = -pthread_create(&c->thread, NULL, configuring_thread, c);
        if (r < 0) {
                assisted_client_free(c->client);
                pthread_cond_destroy(&c->cond);
                pthread_mutex_destroy(&c->lock);
                return r;
        }
        in->configuring = TAKE_PTR(c);
        return 0;
}

void configuring_stop(Installer *in)
{
        Configuring *c = in->configuring;

        if (!c)
                return;
        pthread_mutex_lock(&c->lock);
        c->stopping = true;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
        assisted_client_free(c->client);
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        free(c);
        in->configuring = NULL;
}
