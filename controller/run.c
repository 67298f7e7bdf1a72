/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's I/O: start-up, then its duties as tasks on one clock
 * (upstream runs them as goroutines; one at a time is enough here, every
 * duty being a round every few tens of seconds). Each task's round observes
 * (the service's cluster, the API server's objects), asks the module that
 * decides, and performs the decision; it then says when it runs again.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "assisted/assisted-models.h"
#include "assisted/assisted.h"
#include "assisted/cluster-hosts.h"
#include "assisted/controller-contract.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/config.h"
#include "controller/controller.h"
#include "controller/csr.h"
#include "controller/dry.h"
#include "controller/ending.h"
#include "controller/finalize.h"
#include "controller/nodes.h"
#include "controller/run.h"
#include "controller/service.h"
#include "controller/task-bmh.h"
#include "controller/task-labels.h"
#include "controller/task-olm.h"
#include "fileio.h"
#include "jsonutil.h"
#include "kube/kube-node.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

#define UNINITIALIZED_TAINT "node.cloudprovider.kubernetes.io/uninitialized"
#define MCS_NAMESPACE "openshift-machine-config-operator"
#define MCS_SELECTOR "k8s-app=machine-config-server"
/* the machine-config-server's log of the last round's time, generalWaitTimeoutInt*10 */
#define MCS_LOG_SINCE_SECONDS 300

static const KubeResource resource_proxies =
        KUBE_RESOURCE("config.openshift.io", "v1", "proxies", "Proxy", false);
static const KubeResource resource_cluster_versions =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusterversions", "ClusterVersion", false);
static const KubeResource resource_cluster_operators =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusteroperators", "ClusterOperator", false);

/* PostInstallConfigs, one step per round */
typedef enum FinalizeStep {
        FINALIZE_WAIT_FINALIZING, /* the service says finalizing */
        FINALIZE_STAGE_OPERATORS,
        FINALIZE_OPERATORS, /* console (and cvo) available, at most operators_timeout */
        FINALIZE_STAGE_ROUTER_CA,
        FINALIZE_ROUTER_CA, /* the ingress CA uploaded */
        FINALIZE_STAGE_OLM,
        FINALIZE_OLM, /* the OLM operators (controller/task-olm.h) */
        FINALIZE_STAGE_DONE,
        FINALIZE_COMPLETE, /* complete-installation, until the service takes it */
        FINALIZE_FINISHED,
        _FINALIZE_STEP_MAX,
} FinalizeStep;

typedef struct Finalize {
        FinalizeStep step;
        usec_t operators_deadline;
        bool success;
        char *error;
        json_object *report; /* CLUSTER_OPERATORS_REPORT, sent with a failure */
        OlmWait olm;
} Finalize;

typedef struct Controller {
        const ControllerConfig *cfg;
        KubeClient *kube; /* NULL in dry run */
        DryCluster dry; /* the dry run's cluster (dry.hosts set) */
        bool *dry_rebooted;
        ControllerService svc;
        /* the service has no finalizing stages (late 2023) */
        bool no_finalizing_stages;
        bool remove_uninitialized_taint;
        bool baremetal; /* the BMH rounds run */
        bool nodes_done; /* the node rounds ended: so does CSR approval */
        char **warned_nodes; /* Nodes of no host of the cluster, warned once */
        char **refused_csrs; /* uids of the refused requests, logged once */
        InstallationState end;
        unsigned refusals;
        Finalize fin;
} Controller;

static void controller_done(Controller *ctl)
{
        kube_client_free(ctl->kube);
        dry_cluster_hosts_free(ctl->dry.hosts, ctl->dry.n);
        free(ctl->dry_rebooted);
        assisted_client_free(ctl->svc.client);
        strv_free(ctl->warned_nodes);
        strv_free(ctl->refused_csrs);
        free(ctl->fin.error);
        json_object_put(ctl->fin.report);
        olm_wait_done(&ctl->fin.olm);
}

/* ---- the new cluster: its API server, or the dry run's ------------------------ */

static bool dry_run(const Controller *ctl)
{
        return !!ctl->dry.hosts;
}

/* which hosts of the dry run rebooted, now */
static void dry_markers_look(Controller *ctl)
{
        struct stat st;

        for (size_t i = 0; i < ctl->dry.n; i++)
                ctl->dry_rebooted[i] = !isempty(ctl->dry.hosts[i].reboot_marker_path) &&
                                       stat(ctl->dry.hosts[i].reboot_marker_path, &st) == 0;
}

static int dry_status(int r, const KubeResource *res, const char *name, KubeStatus *st)
{
        if (r < 0 && st) {
                st->error = r;
                st->code = r == -ENOENT ? 404 : 0;
                st->message = strdup_printf("dry run: %s %s %s", r == -ENOENT ? "no" : "cannot make",
                                            res->resource, strempty(name));
        }
        return r;
}

static int cluster_get(Controller *ctl, const KubeResource *res, const char *ns, const char *name,
                       json_object **ret, KubeStatus *st)
{
        if (!dry_run(ctl))
                return kube_get(ctl->kube, res, ns, name, ret, st);
        dry_markers_look(ctl);
        return dry_status(dry_cluster_get(&ctl->dry, res, ns, name, ret), res, name, st);
}

static int cluster_list(Controller *ctl, const KubeResource *res, const char *ns, const KubeListOptions *o,
                        json_object **ret, KubeStatus *st)
{
        if (!dry_run(ctl))
                return kube_list(ctl->kube, res, ns, o, ret, st);
        /* the dry run lists no pods and no certificate requests: the
         * writes that follow them (approvals, pod logs) never happen */
        dry_markers_look(ctl);
        return dry_status(dry_cluster_list(&ctl->dry, res, ns, ret), res, NULL, st);
}

/* Dry run: the hosts file, then the wait for the fake reboot marker
 * (upstream's start is delayed until it exists). */
static int dry_cluster_load(Controller *ctl)
{
        const ControllerConfig *c = ctl->cfg;
        _cleanup_free_ char *data = NULL, *err = NULL;
        struct stat st;
        size_t len = 0;
        int r;

        r = read_full_file(c->dry_cluster_hosts_path, BUF_MAX_JSON_DOC, &data, &len);
        if (r >= 0)
                r = dry_cluster_hosts_parse(data, len, &ctl->dry.hosts, &ctl->dry.n, &err);
        if (r < 0)
                return log_error_errno(r, "dry run: cannot read the cluster hosts %s: %s",
                                       c->dry_cluster_hosts_path, err ? err : strerror(-r));
        ctl->dry_rebooted = calloc(ctl->dry.n + 1, sizeof(bool));
        if (!ctl->dry_rebooted)
                return log_oom();
        ctl->dry.rebooted = ctl->dry_rebooted;
        ctl->dry.openshift_version = c->openshift_version;
        log_info("dry run: the cluster is the %zu hosts of %s, each a Ready node once its reboot marker "
                 "exists",
                 ctl->dry.n, c->dry_cluster_hosts_path);
        if (isempty(c->dry_fake_reboot_marker_path))
                return 0;
        log_info("dry run: waiting for %s", c->dry_fake_reboot_marker_path);
        while (stat(c->dry_fake_reboot_marker_path, &st) < 0)
                if (sleep_usec(c->ready_interval) < 0 || stop_requested())
                        return -ECANCELED;
        return 0;
}

/* ---- start-up -------------------------------------------------------------- */

static int kube_client_for(const ControllerConfig *c, KubeClient **ret)
{
        _cleanup_free_ char *err = NULL;
        const char *path = c->kubeconfig;
        struct stat st;
        int r;

        /* single node: the bootstrap's secrets, so that the controller
         * starts before the node's own credentials work */
        if (isempty(path) && stat(CONTROLLER_SNO_KUBECONFIG, &st) >= 0)
                path = CONTROLLER_SNO_KUBECONFIG;
        if (!isempty(path))
                r = kube_client_new_from_kubeconfig(path, NULL, ret, &err);
        else
                r = kube_client_new_in_cluster(NULL, ret, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to create k8 client %s", strna(err));
        return 0;
}

/* SetProxyEnvVars: the cluster-wide proxy, for the service client (and the
 * commands the controller runs) */
static int proxy_env_set(Controller *ctl)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(json_object_putp) json_object *proxy = NULL;
        static const struct {
                const char *field;
                const char *env;
        } vars[] = {
                { "httpProxy", "HTTP_PROXY" },
                { "httpsProxy", "HTTPS_PROXY" },
                { "noProxy", "NO_PROXY" },
        };
        json_object *status;
        int r;

        r = cluster_get(ctl, &resource_proxies, NULL, "cluster", &proxy, &st);
        if (r < 0)
                return log_error_errno(r, "Failed to set env vars for installer-controller pod: %s",
                                       strna(st.message));
        status = json_get(proxy, "status");
        log_info("Using proxy %s to set env-vars for installer-controller pod",
                 status ? json_object_to_json_string_ext(status, JSON_C_TO_STRING_PLAIN) : "{}");
        for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
                const char *v = json_get_string(status, vars[i].field);
                if (!isempty(v) && setenv(vars[i].env, v, 1) < 0)
                        return log_error_errno(negative_errno(), "cannot set %s: %m", vars[i].env);
        }
        return 0;
}

static int service_client_for(const ControllerConfig *c, AssistedClient **ret)
{
        _cleanup_free_ char *err = NULL;
        AssistedClientOptions o = {
                .url = c->inventory_url,
                .ca_file = isempty(c->ca_cert_path) ? NULL : c->ca_cert_path,
                .insecure = c->skip_cert_verification,
                .token = c->token,
                .retry = HTTP_RETRY_NONE, /* the controller's own rule: service.c */
        };
        int r;

        if (c->skip_cert_verification)
                log_warning("Certificate verification is turned off. This is not recommended in production "
                            "environments");
        r = assisted_client_new(&o, ret, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to create inventory client %s", strna(err));
        return 0;
}

static int ready_event_create(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *ev = json_new_object(), *meta = json_new_object(),
                                                *involved = json_new_object();
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = ctl->cfg->namespace;
        char now[32];
        int r;

        format_rfc3339_utc(time(NULL), now);
        /* k8s_client.CreateEvent */
        if (!ev || !meta || !involved || json_add_string(meta, "name", CONTROLLER_READY_EVENT) < 0 ||
            json_add_string(meta, "namespace", ns) < 0 || json_add(ev, "metadata", TAKE_PTR(meta)) < 0 ||
            json_add_string(involved, "namespace", ns) < 0 ||
            json_add_string(involved, "name", CONTROLLER_NAME) < 0 ||
            json_add(ev, "involvedObject", TAKE_PTR(involved)) < 0 ||
            json_add_string(ev, "reason", CONTROLLER_READY_EVENT) < 0 ||
            json_add_string(ev, "message", CONTROLLER_READY_MESSAGE) < 0 ||
            json_add_int64(ev, "count", 1) < 0 || json_add_string(ev, "firstTimestamp", now) < 0 ||
            json_add_string(ev, "lastTimestamp", now) < 0 || json_add_string(ev, "type", "Normal") < 0)
                return log_oom();
        if (dry_run(ctl))
                return log_info("dry run: the event %s is not sent anywhere", CONTROLLER_READY_EVENT), 0;
        r = kube_create(ctl->kube, &kube_resource_events, ns, ev, NULL, &st);
        if (r == -EEXIST)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to spawn event: %s", strna(st.message));
        return 0;
}

/* SetReadyState: the service and the API server answer, the Event is
 * there. Returns the cluster, or -ETIMEDOUT. */
static int ready_state(Controller *ctl, json_object **ret_cluster)
{
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ctl->cfg->ready_timeout;

        log_info("Start waiting to be ready");
        for (;;) {
                _cleanup_(json_object_putp) json_object *cluster = NULL, *nodes = NULL;
                _cleanup_kube_status_ KubeStatus st = {};
                _cleanup_free_ char *err = NULL;
                int r;

                r = controller_service_get_cluster(&ctl->svc, false, NULL, &cluster, &err);
                if (r == -ECANCELED)
                        return r;
                if (r < 0)
                        log_warning("Failed to connect to assisted service: %s", strna(err));
                else {
                        log_info("assisted-service is available");
                        r = cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st);
                        if (r < 0)
                                log_warning("Failed to connect to ocp cluster: %s", strna(st.message));
                        else {
                                log_info("kube-apiserver is available");
                                log_info("Sending ready event");
                                r = ready_event_create(ctl);
                        }
                }
                if (r >= 0) {
                        *ret_cluster = TAKE_PTR(cluster);
                        return 0;
                }
                if (now_usec(CLOCK_MONOTONIC) + ctl->cfg->ready_interval > deadline)
                        return -ETIMEDOUT;
                if (sleep_usec(ctl->cfg->ready_interval) < 0)
                        return -ECANCELED;
        }
}

/* ---- hosts: Joined, Done, Configuring ---------------------------------------- */

static int hosts_get(Controller *ctl, ClusterHosts *ret)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        r = controller_service_get_cluster(&ctl->svc, true, NULL, &cluster, &err);
        if (r >= 0)
                r = cluster_hosts_from_cluster(cluster, NULL, ret, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to get node map from the assisted service: %s",
                                       strna(err));
        return 0;
}

static void hosts_log(const ClusterHosts *hosts)
{
        for (size_t i = 0; i < hosts->n; i++)
                log_debug("Host %s (%s): status %s, stage %s", hosts->hosts[i].name, hosts->hosts[i].id,
                          hosts->hosts[i].status, strempty(hosts->hosts[i].stage));
}

static bool host_stage(Controller *ctl, const ClusterHost *h, const char *node, HostStage stage)
{
        _cleanup_free_ char *err = NULL;
        const char *s = host_stage_to_string(stage);
        int r;

        if (node)
                log_info("Found %s node %s with inventory id %s, updating its status to %s",
                         stage == HOST_STAGE_DONE ? "new ready" : "new joined", node, h->id, s);
        else
                log_info("Host %s %s found in mcs logs, moving it to %s state", h->name, h->id, s);
        r = controller_service_host_stage(&ctl->svc, h->infra_env_id, h->id, s, &err);
        if (r < 0) {
                log_error("Failed to update node %s installation status: %s", node ?: h->name,
                          err ? err : strerror(-r));
                return false;
        }
        return true;
}

static bool node_untaint(Controller *ctl, const char *name)
{
        _cleanup_(json_object_putp) json_object *node = NULL, *patch = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        int idx, r;

        r = cluster_get(ctl, &kube_resource_nodes, NULL, name, &node, &st);
        if (r < 0) {
                log_error("Failed to remove uninitialized taint from node %s: %s", name, strna(st.message));
                return false;
        }
        idx = kube_node_taint_index(node, UNINITIALIZED_TAINT);
        if (idx < 0)
                return true;
        log_info("Removing uninitialized taint on node %s", name);
        patch = kube_node_taint_remove_patch((unsigned)idx, UNINITIALIZED_TAINT);
        if (!patch)
                return log_oom(), false;
        r = kube_patch_json(ctl->kube, &kube_resource_nodes, NULL, name, patch, NULL, &st2);
        if (r < 0) {
                log_error("Failed to remove uninitialized taint from node %s: %s", name, strna(st2.message));
                return false;
        }
        return true;
}

/* The machine-config-server's recent log, "" when it cannot be read
 * (upstream only warns) */
static char *mcs_logs(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *pods = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *items;
        char *all = strdup("");
        int r;

        if (!all)
                return NULL;
        r = cluster_list(ctl, &kube_resource_pods, MCS_NAMESPACE,
                         &(KubeListOptions){ .label_selector = MCS_SELECTOR }, &pods, &st);
        if (r < 0) {
                log_warning("Failed to get mcs pods: %s", strna(st.message));
                return all;
        }
        items = json_get(pods, "items");
        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                const char *name = kube_object_name(json_object_array_get_idx(items, i));
                _cleanup_kube_status_ KubeStatus st2 = {};
                _cleanup_free_ char *text = NULL;
                char *grown;

                r = kube_pod_logs(ctl->kube, MCS_NAMESPACE, name,
                                  &(KubePodLogOptions){ .since_seconds = MCS_LOG_SINCE_SECONDS }, &text,
                                  &st2);
                if (r < 0) {
                        log_warning("Failed to get logs of pod %s: %s", strna(name), strna(st2.message));
                        all[0] = 0;
                        return all;
                }
                grown = strdup_printf("%s%s", all, strempty(text));
                if (!grown)
                        break;
                free(all);
                all = grown;
        }
        return all;
}

static void configuring_round(Controller *ctl)
{
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_free_ char *log = NULL;
        _cleanup_free_ int *plan = NULL;

        /* the hosts again: the round's reports changed their stages */
        if (hosts_get(ctl, &hosts) < 0)
                return;
        log = mcs_logs(ctl);
        if (!log || configuring_plan(&hosts, log, &plan) < 0) {
                log_oom();
                return;
        }
        for (int *i = plan; *i >= 0; i++)
                (void)host_stage(ctl, &hosts.hosts[*i], NULL, HOST_STAGE_CONFIGURING);
}

/* One round of WaitAndUpdateNodesStatus. Returns false when the rounds
 * are over. */
static bool nodes_round(Controller *ctl)
{
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_(json_object_putp) json_object *nodes = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        NodeStatusAction *plan = NULL;
        size_t remaining, n = 0;
        int r;

        if (hosts_get(ctl, &hosts) < 0)
                return true;
        hosts_log(&hosts);
        switch (nodes_progress(&hosts, &remaining)) {
        case NODES_ALL_INSTALLED:
                log_info("All nodes were successfully installed");
                return false;
        case NODES_ALL_FAILED:
                log_info("Done waiting for all the nodes. Nodes in error status: %zu", remaining);
                return false;
        default:
                break;
        }
        log_info("Checking if cluster nodes are ready. %zu nodes remaining", remaining);
        r = cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st);
        if (r < 0) {
                log_error("Failed to get list of nodes from k8s client: %s", strna(st.message));
                return true;
        }
        if (node_status_plan(&hosts, nodes, ctl->remove_uninitialized_taint, &plan, &n) < 0) {
                log_oom();
                return true;
        }
        for (size_t i = 0; i < n; i++) {
                NodeStatusAction *a = &plan[i];
                const ClusterHost *h = a->host >= 0 ? &hosts.hosts[a->host] : NULL;

                if (!h) {
                        if (!strv_contains(ctl->warned_nodes, a->node)) {
                                log_warning("Node %s is not in inventory hosts", a->node);
                                (void)strv_extend(&ctl->warned_nodes, a->node);
                        }
                        continue;
                }
                if (a->report_joined && !host_stage(ctl, h, a->node, HOST_STAGE_JOINED))
                        continue;
                if (a->untaint && !node_untaint(ctl, a->node))
                        continue;
                if (a->report_done)
                        (void)host_stage(ctl, h, a->node, HOST_STAGE_DONE);
        }
        node_status_actions_free(plan, n);
        configuring_round(ctl);
        return true;
}

/* ---- certificate signing requests -------------------------------------------- */

static void csr_approve(Controller *ctl, json_object *csr, const CsrDecision *d)
{
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *path = NULL;
        const char *name = kube_object_name(csr);
        char now[32];
        int r;

        format_rfc3339_utc(time(NULL), now);
        body = csr_approval(csr, now);
        path = kube_resource_path(&kube_resource_csrs, NULL, name, "approval");
        if (!body || !path) {
                log_oom();
                return;
        }
        log_info("Approving CSR %s of node %s", name, d->node);
        r = kube_request(ctl->kube, "PUT", path, NULL, body, NULL, &st);
        if (r < 0)
                /* the next round tries again */
                log_warning("Failed to approve CSR %s: %s", name, strna(st.message));
}

static void csrs_round(Controller *ctl)
{
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_(json_object_putp) json_object *csrs = NULL, *nodes = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *items;
        int r;

        r = cluster_list(ctl, &kube_resource_csrs, NULL, NULL, &csrs, &st);
        if (r < 0) {
                log_debug("Failed to list CSRs: %s", strna(st.message));
                return;
        }
        items = json_get(csrs, "items");
        if (!items || json_object_array_length(items) == 0)
                return;
        if (hosts_get(ctl, &hosts) < 0)
                return;
        kube_status_done(&st);
        r = cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st);
        if (r < 0) {
                log_error("Failed to get list of nodes from k8s client: %s", strna(st.message));
                return;
        }
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                json_object *csr = json_object_array_get_idx(items, i);
                const char *uid = json_get_string(json_get(csr, "metadata"), "uid");
                CsrDecision d = {};

                if (csr_decide(csr, &hosts, nodes, &d) < 0) {
                        log_oom();
                        return;
                }
                if (d.verdict == CSR_APPROVE)
                        csr_approve(ctl, csr, &d);
                else if (d.verdict == CSR_REFUSE && !strv_contains(ctl->refused_csrs, strempty(uid))) {
                        log_warning("Not approving CSR %s: %s", strna(kube_object_name(csr)), d.reason);
                        (void)strv_extend(&ctl->refused_csrs, strempty(uid));
                }
                csr_decision_done(&d);
        }
}

/* ---- the finalizing stages ------------------------------------------------------ */

static bool stage_report(Controller *ctl, FinalizingStage stage)
{
        _cleanup_free_ char *err = NULL;
        const char *s = finalizing_stage_to_string(stage);
        int r;

        if (ctl->no_finalizing_stages)
                return true;
        log_info("Updating cluster finalizing stage to %s", s);
        r = controller_service_finalizing_stage(&ctl->svc, s, &err);
        if (r < 0 && err && strstr(err, "[404] path ") && strstr(err, " was not found")) {
                /* the router knows no such operation: a service older than
                 * v2UpdateClusterFinalizingProgress (late 2023) finalizes
                 * without stages */
                log_warning("This assisted-service has no finalizing stages (%s): not reported", err);
                ctl->no_finalizing_stages = true;
                return true;
        }
        if (r < 0) {
                /* retried every round without limit, as upstream */
                log_error("Failed to update the finalizing stage %s: %s", s, err ? err : strerror(-r));
                return false;
        }
        return true;
}

/* checkAndUpdateOperatorAvailability: true once the service has the
 * operator available; reports the cluster's status when it differs */
static bool operator_available(Controller *ctl, const char *name, json_object *conditions,
                               const char *version)
{
        _cleanup_(json_object_putp) json_object *list = NULL, *body = NULL;
        _cleanup_free_ char *err = NULL;
        const char *message, *status;
        json_object *svc_op;
        int r;

        r = controller_service_operators(&ctl->svc, &list, &err);
        if (r < 0) {
                log_error("Failed to get cluster %s %s operator status: %s", ctl->cfg->cluster_id, name,
                          strna(err));
                return false;
        }
        svc_op = monitored_operator_find(list, name, ctl->cfg->openshift_version);
        if (monitored_operator_available(svc_op)) {
                log_info("Service acknowledged <%s> operator is available for cluster %s", name,
                         ctl->cfg->cluster_id);
                return true;
        }
        if (!conditions)
                return false;
        status = operator_status_of(conditions, &message);
        if (!operator_report_needed(svc_op, status, message))
                return false;
        log_info("Operator <%s> updated, status: %s -> %s, message: %s -> %s.", name,
                 strempty(json_get_string(svc_op, "status")), status,
                 strempty(json_get_string(svc_op, "status_info")), message);
        body = operator_report_body(name, status, message, version);
        if (!body)
                return log_oom(), false;
        free(err);
        err = NULL;
        r = controller_service_report_operator(&ctl->svc, body, &err);
        if (r < 0) {
                log_warning("Failed to update %s operator status %s with message %s: %s", name, status,
                            message, strna(err));
                return false;
        }
        return streq(status, OPERATOR_STATUS_AVAILABLE);
}

/* waitingForClusterOperators' check: console (when the capability is on)
 * and, with CHECK_CLUSTER_VERSION, the cluster version */
static bool operators_available(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cv = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        bool result = true;
        int r;

        r = cluster_get(ctl, &resource_cluster_versions, NULL, "version", &cv, &st);
        if (r < 0) {
                log_error("Failed to check if console is enabled: %s", strna(st.message));
                return false;
        }
        if (cluster_capability_enabled(cv, CONSOLE_CAPABILITY)) {
                _cleanup_(json_object_putp) json_object *co = NULL;
                _cleanup_kube_status_ KubeStatus st2 = {};
                json_object *versions;

                log_info("Console is enabled, will wait for the console operator to be available");
                r = cluster_get(ctl, &resource_cluster_operators, NULL, CONSOLE_OPERATOR, &co, &st2);
                if (r < 0)
                        log_warning("Failed to get <%s> operator: %s", CONSOLE_OPERATOR, strna(st2.message));
                versions = json_get_path(co, "status.versions");
                result = operator_available(
                        ctl, CONSOLE_OPERATOR, r < 0 ? NULL : json_get_path(co, "status.conditions"),
                        json_get_string(json_object_array_get_idx(versions, 0), "version"));
        } else
                log_info("Console is disabled, will not wait for the console operator to be available");
        if (ctl->cfg->check_cluster_version)
                result = operator_available(
                                 ctl, CVO_OPERATOR, json_get_path(cv, "status.conditions"),
                                 json_get_string(json_get_path(cv, "status.desired"), "version")) &&
                         result;
        return result;
}

/* operatorReport: every cluster operator in the log, and the report sent
 * with a failure */
static void operators_report_take(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *items;
        int r;

        r = cluster_list(ctl, &resource_cluster_operators, NULL, NULL, &list, &st);
        if (r < 0) {
                log_warning("Failed to list cluster operators: %s", strna(st.message));
                return;
        }
        items = json_get(list, "items");
        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *co = json_object_array_get_idx(items, i);
                json_object *conds = json_get_path(co, "status.conditions");
                log_info("Operator %s, statuses: %s", strna(kube_object_name(co)),
                         conds ? json_object_to_json_string_ext(conds, JSON_C_TO_STRING_PLAIN) : "[]");
        }
        json_object_put(ctl->fin.report);
        ctl->fin.report = operators_report(list);
}

/* addRouterCAToClusterCA */
static bool router_ca_upload(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;
        const char *pem;
        int r;

        log_info("Start adding ingress ca to cluster");
        r = cluster_get(ctl, &kube_resource_configmaps, INGRESS_CA_NAMESPACE, INGRESS_CA_CONFIGMAP, &cm,
                        &st);
        if (r < 0) {
                log_warning("fetching %s configmap from %s namespace: %s", INGRESS_CA_CONFIGMAP,
                            INGRESS_CA_NAMESPACE, strna(st.message));
                return false;
        }
        pem = strempty(json_get_string(json_get(cm, "data"), INGRESS_CA_KEY));
        log_info("Sending ingress certificate to inventory service. Certificate data %s", pem);
        r = controller_service_ingress_ca(&ctl->svc, pem, &err);
        if (r < 0) {
                log_error("Failed to upload ingress ca to assisted-service: %s", strna(err));
                return false;
        }
        log_info("Ingress ca successfully sent to inventory");
        return true;
}

static void finalize_fail(Controller *ctl, const char *error)
{
        free(ctl->fin.error);
        ctl->fin.error = strdup(error);
        ctl->fin.success = false;
        log_error("%s", error);
        ctl->fin.step = FINALIZE_COMPLETE;
}

static usec_t finalize_step(Controller *ctl)
{
        const ControllerConfig *c = ctl->cfg;
        Finalize *f = &ctl->fin;

        switch (f->step) {
        case FINALIZE_WAIT_FINALIZING: {
                _cleanup_(json_object_putp) json_object *cluster = NULL;
                _cleanup_free_ char *err = NULL;

                if (controller_service_get_cluster(&ctl->svc, false, NULL, &cluster, &err) < 0) {
                        log_error("Failed to get cluster %s from assisted-service: %s", c->cluster_id,
                                  strna(err));
                        return c->poll_interval;
                }
                if (!streq_ptr(json_get_string(cluster, "status"), "finalizing"))
                        return c->poll_interval;
                log_info("Start post install configs");
                f->step = FINALIZE_STAGE_OPERATORS;
                return 0;
        }
        case FINALIZE_STAGE_OPERATORS:
                if (!stage_report(ctl, FINALIZING_STAGE_WAITING_FOR_CLUSTER_OPERATORS))
                        return c->poll_interval;
                log_info("Waiting for cluster operators");
                f->operators_deadline = now_usec(CLOCK_MONOTONIC) + c->operators_timeout;
                f->step = FINALIZE_OPERATORS;
                return 0;
        case FINALIZE_OPERATORS:
                if (operators_available(ctl)) {
                        operators_report_take(ctl);
                        f->step = FINALIZE_STAGE_ROUTER_CA;
                        return 0;
                }
                if (now_usec(CLOCK_MONOTONIC) + c->slow_poll_interval <= f->operators_deadline)
                        return c->slow_poll_interval;
                operators_report_take(ctl);
                finalize_fail(ctl, "Stopped waiting for cluster operators to be available: context deadline "
                                   "exceeded");
                return 0;
        case FINALIZE_STAGE_ROUTER_CA:
                if (!stage_report(ctl, FINALIZING_STAGE_ADDING_ROUTER_CA))
                        return c->poll_interval;
                f->step = FINALIZE_ROUTER_CA;
                return 0;
        case FINALIZE_ROUTER_CA:
                if (!router_ca_upload(ctl))
                        return c->fetch_interval;
                f->step = FINALIZE_STAGE_OLM;
                return 0;
        case FINALIZE_STAGE_OLM:
                if (!stage_report(ctl, FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV_INITIALIZATION))
                        return c->poll_interval;
                f->step = FINALIZE_OLM;
                return 0;
        case FINALIZE_OLM: {
                usec_t next = olm_wait_step(ctl, &f->olm);

                if (f->olm.step != OLM_FINISHED)
                        return next;
                /* OLM failures never fail the installation: the service
                 * degrades the cluster */
                f->step = FINALIZE_STAGE_DONE;
                return 0;
        }
        case FINALIZE_STAGE_DONE:
                if (!stage_report(ctl, FINALIZING_STAGE_DONE))
                        return c->poll_interval;
                f->success = true;
                f->step = FINALIZE_COMPLETE;
                return 0;
        case FINALIZE_COMPLETE: {
                _cleanup_(json_object_putp) json_object *body =
                        completion_body(f->success, f->error, f->success ? NULL : f->report);
                _cleanup_free_ char *err = NULL;

                log_info("Start complete installation step, with params success: %s, error info: %s",
                         f->success ? "true" : "false", strempty(f->error));
                if (!body)
                        return log_oom(), c->slow_poll_interval;
                if (controller_service_complete(&ctl->svc, body, &err) < 0) {
                        log_error("Failed to complete the installation: %s", strna(err));
                        return c->slow_poll_interval;
                }
                log_info("Done complete installation step");
                f->step = FINALIZE_FINISHED;
                return USEC_INFINITY;
        }
        case FINALIZE_FINISHED:
        case _FINALIZE_STEP_MAX:
                break;
        }
        return USEC_INFINITY;
}

/* ---- the end of the installation ------------------------------------------------- */

static void installation_check(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_free_ char *err = NULL;
        long status = 0;
        int r;

        r = controller_service_get_cluster(&ctl->svc, false, &status, &cluster, &err);
        if (r == -ECANCELED)
                return;
        if (r < 0)
                log_error("Failed to get the cluster from the service: %s", strna(err));
        ctl->end = installation_state(r, status, r < 0 ? NULL : json_get_string(cluster, "status"),
                                      &ctl->refusals);
        switch (ctl->end) {
        case INSTALLATION_FAILED:
                log_info("Cluster installation failed.");
                break;
        case INSTALLATION_OVER:
                log_info("Cluster installation %s.",
                         streq_ptr(json_get_string(cluster, "status"), "installed") ? "successfully finished"
                                                                                    : "is over here");
                break;
        case INSTALLATION_UNREACHABLE:
                log_info("Got more than %u errors from assisted service in a row, exiting",
                         INSTALLATION_MAX_REFUSALS);
                break;
        default:
                break;
        }
}

/* ---- what the tasks of their own files borrow (controller/run.h) ----------------- */

const ControllerConfig *controller_config(Controller *ctl)
{
        return ctl->cfg;
}

ControllerService *controller_service(Controller *ctl)
{
        return &ctl->svc;
}

KubeClient *controller_kube(Controller *ctl)
{
        return ctl->kube;
}

int controller_cluster_get(Controller *ctl, const KubeResource *res, const char *ns, const char *name,
                           json_object **ret, KubeStatus *st)
{
        return cluster_get(ctl, res, ns, name, ret, st);
}

int controller_cluster_list(Controller *ctl, const KubeResource *res, const char *ns,
                            const KubeListOptions *o, json_object **ret, KubeStatus *st)
{
        return cluster_list(ctl, res, ns, o, ret, st);
}

bool controller_stage_report(Controller *ctl, FinalizingStage stage)
{
        return stage_report(ctl, stage);
}

/* ---- the tasks --------------------------------------------------------------- */

typedef struct Task {
        const char *name;
        usec_t due; /* CLOCK_MONOTONIC; USEC_INFINITY: finished */
        /* one round; returns the delay to the next, USEC_INFINITY when done */
        usec_t (*round)(Controller *ctl);
} Task;

static usec_t task_nodes(Controller *ctl)
{
        if (nodes_round(ctl))
                return ctl->cfg->poll_interval;
        log_info("WaitAndUpdateNodesStatus finished");
        ctl->nodes_done = true;
        return USEC_INFINITY;
}

static usec_t task_csrs(Controller *ctl)
{
        if (ctl->nodes_done) {
                log_info("Finish approving CSRs");
                return USEC_INFINITY;
        }
        csrs_round(ctl);
        return ctl->cfg->poll_interval;
}

/* The service may say installed before the last stages were reported (it
 * decides on its own, notes §0.2): what is left and waits for nothing is
 * still sent, as upstream's stages reach the service before its minute-long
 * check ends the run. */
static void finalize_drain(Controller *ctl)
{
        for (unsigned i = 0; i < 2 * _FINALIZE_STEP_MAX && ctl->fin.step >= FINALIZE_STAGE_OLM &&
                             ctl->fin.step < FINALIZE_FINISHED;
             i++)
                if (finalize_step(ctl) != 0)
                        break;
}

static usec_t task_finalize(Controller *ctl)
{
        usec_t next = finalize_step(ctl);

        if (next == USEC_INFINITY)
                log_info("Finished PostInstallConfigs");
        return next;
}

static usec_t task_labels(Controller *ctl)
{
        usec_t next = node_labels_round(ctl);

        if (next == USEC_INFINITY)
                log_info("Finished UpdateNodeLabels");
        return next;
}

static usec_t task_bmhs(Controller *ctl)
{
        usec_t next = bmhs_round(ctl);

        if (next == USEC_INFINITY)
                log_info("Finished UpdateBMHs");
        return next;
}

static usec_t task_installation(Controller *ctl)
{
        installation_check(ctl);
        return ctl->end == INSTALLATION_GOES_ON ? ctl->cfg->slow_poll_interval : USEC_INFINITY;
}

static int tasks_run(Controller *ctl)
{
        usec_t now = now_usec(CLOCK_MONOTONIC);
        Task tasks[] = {
                /* first round at once, as upstream */
                { "nodes", now, task_nodes },
                /* upstream's tickers: the first round after one interval */
                { "csrs", now + ctl->cfg->poll_interval, task_csrs },
                { "finalize", now, task_finalize },
                { "labels", now, task_labels },
                { "bmhs", ctl->baremetal ? now : USEC_INFINITY, task_bmhs },
                { "installation", now + ctl->cfg->slow_poll_interval, task_installation },
        };

        log_info("Waiting till all nodes will join and update status to assisted installer");
        log_info("monitor cluster installation status");
        while (ctl->end == INSTALLATION_GOES_ON) {
                Task *next = NULL;
                usec_t delay;

                for (size_t i = 0; i < ELEMENTSOF(tasks); i++)
                        if (tasks[i].due != USEC_INFINITY && (!next || tasks[i].due < next->due))
                                next = &tasks[i];
                if (!next)
                        break;
                now = now_usec(CLOCK_MONOTONIC);
                if (next->due > now && sleep_usec(next->due - now) < 0)
                        return -ECANCELED;
                if (stop_requested())
                        return -ECANCELED;
                log_debug("task %s", next->name);
                delay = next->round(ctl);
                next->due = delay == USEC_INFINITY ? USEC_INFINITY : now_usec(CLOCK_MONOTONIC) + delay;
        }
        return 0;
}

/* ---- the run --------------------------------------------------------------------- */

int controller_run(const ControllerConfig *c)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_(controller_done) Controller ctl = {
                .cfg = c,
                .svc = { .cluster_id = c->cluster_id, .retry = ASSISTED_RETRY_CONTROLLER },
        };
        const char *platform;
        int r;

        ctl.svc.retry.base_delay = c->retry_delay;
        ctl.svc.retry.max_delay = c->retry_max_delay;

        if (c->dry_run) {
                r = dry_cluster_load(&ctl);
                if (r == -ECANCELED) {
                        log_info("stopped before the dry run's first reboot");
                        return 1;
                }
                if (r < 0)
                        return 1;
        } else if (kube_client_for(c, &ctl.kube) < 0)
                return 1;
        if (proxy_env_set(&ctl) < 0 || service_client_for(c, &ctl.svc.client) < 0)
                return 1;

        r = ready_state(&ctl, &cluster);
        if (r == -ECANCELED) {
                log_info("stopped before the controller was ready");
                return 1;
        }
        if (r < 0) {
                log_error("Failed to retrieve cluster from assisted service");
                return 1;
        }
        platform = json_get_string(json_get(cluster, "platform"), "type");
        /* external cloud providers that the fake credentials keep from
         * initializing the nodes (common.RemoveUninitializedTaint; the
         * agent-based installer's vSphere exception has no place here) */
        ctl.remove_uninitialized_taint = streq_ptr(platform, "nutanix") || streq_ptr(platform, "vsphere");
        log_info("Remove uninitialized taint: %s", ctl.remove_uninitialized_taint ? "true" : "false");
        ctl.baremetal = streq_ptr(platform, "baremetal");
        if (!ctl.baremetal)
                log_info("Cluster platform is not baremetal, skipping BMH");

        r = tasks_run(&ctl);
        if (r == -ECANCELED) {
                log_info("stopped before the installation ended");
                return 1;
        }
        if (ctl.end != INSTALLATION_UNREACHABLE)
                finalize_drain(&ctl);
        log_info("Finished all");
        return 0;
}

/* ---- the verb -------------------------------------------------------------------- */

static int setup_logging(const ControllerConfig *c)
{
        int r;

        log_setup(CONTROLLER_PROGRAM);
        log_set_max_level(log_level_from_string(c->log_level));
        /* as upstream: stdout, and the text log beside it */
        log_set_default_targets(LOG_TARGET_STDOUT, LOG_TARGET_STDOUT);
        (void)log_set_field("CRADLE_VERB", "controller");
        (void)log_set_field("CLUSTER_ID", c->cluster_id);
        if (!isempty(c->log_file)) {
                r = log_open_file(c->log_file);
                if (r < 0)
                        return log_error_errno(r, "cannot open the log file %s: %m", c->log_file);
        }
        return 0;
}

int controller_main(int argc, char **argv)
{
        _cleanup_free_ char *desc = NULL;
        ControllerConfig c = {};
        int r;

        r = controller_config_parse(argc, argv, &c);
        if (r <= 0)
                return r == 0 ? 0 : r == -EINVAL ? 2 : 1;
        if (setup_logging(&c) < 0) {
                controller_config_done(&c);
                return 1;
        }
        (void)stop_on_signals();

        desc = controller_config_describe(&c);
        log_info("Start running Assisted-controller. Configuration is:\n %s", strna(desc));
        r = controller_run(&c);
        controller_config_done(&c);
        return r;
}
