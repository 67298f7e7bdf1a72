/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The nodes task (WaitAndUpdateNodesStatus, notes/controller.md §5.2):
 * every round the hosts and the Nodes, Joined / untaint / Done per node
 * (nodes.h decides), then Configuring from the machine-config-server's log.
 * It ends when every host is installed, or every one left is in error; so
 * does CSR approval (task-csrs.c).
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "assisted/cluster-hosts.h"
#include "cleanup.h"
#include "controller/nodes.h"
#include "controller/run.h"
#include "jsonutil.h"
#include "kube/kube-node.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"

#define UNINITIALIZED_TAINT "node.cloudprovider.kubernetes.io/uninitialized"
#define MCS_NAMESPACE "openshift-machine-config-operator"
#define MCS_SELECTOR "k8s-app=machine-config-server"
/* the machine-config-server's log of the last round's time, generalWaitTimeoutInt*10 */
#define MCS_LOG_SINCE_SECONDS 300

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

bool controller_node_untaint(Controller *ctl, const char *name)
{
        _cleanup_(json_object_putp) json_object *node = NULL, *patch = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        int idx, r;

        r = controller_cluster_get(ctl, &kube_resource_nodes, NULL, name, &node, &st);
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
        r = controller_cluster_list(ctl, &kube_resource_pods, MCS_NAMESPACE,
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
        if (controller_hosts_get(ctl, &hosts) < 0)
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

        if (controller_hosts_get(ctl, &hosts) < 0)
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
        r = controller_cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st);
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
                if (a->untaint && !controller_node_untaint(ctl, a->node))
                        continue;
                if (a->report_done && host_stage(ctl, h, a->node, HOST_STAGE_DONE))
                        controller_reboots_start(ctl, a->node, h);
        }
        node_status_actions_free(plan, n);
        configuring_round(ctl);
        return true;
}

static usec_t task_nodes(Controller *ctl)
{
        if (nodes_round(ctl))
                return ctl->cfg->poll_interval;
        log_info("WaitAndUpdateNodesStatus finished");
        ctl->nodes_done = true;
        return USEC_INFINITY;
}

static void task_nodes_done(Controller *ctl)
{
        strv_free(ctl->warned_nodes);
}

const ControllerTask controller_task_nodes = {
        .name = "nodes",
        /* first round at once, as upstream */
        .round = task_nodes,
        .done = task_nodes_done,
};
