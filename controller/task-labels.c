/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UpdateNodeLabels' I/O (notes/controller.md §5.4): the hosts and the
 * Nodes read, controller/labels.h decides, the worker pool paused, the
 * Nodes merge-patched, the pool unpaused.
 */
#include <json-c/json.h>

#include "cleanup.h"
#include "controller/config.h"
#include "controller/labels.h"
#include "controller/service.h"
#include "controller/task-labels.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"

static const KubeResource resource_machine_config_pools = KUBE_RESOURCE(
        "machineconfiguration.openshift.io", "v1", "machineconfigpools", "MachineConfigPool", false);

/* patchWorkerMCPPaused: true when the pool is as asked */
static bool worker_pool_pause(Controller *ctl, bool pause)
{
        _cleanup_(json_object_putp) json_object *pool = NULL, *patch = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        KubeClient *kube = controller_kube(ctl);
        int r;

        if (!kube) {
                log_info("dry run: the machine config pool %s is not %s", WORKER_POOL,
                         pause ? "paused" : "unpaused");
                return true;
        }
        r = kube_get(kube, &resource_machine_config_pools, NULL, WORKER_POOL, &pool, &st);
        if (r < 0) {
                log_warning("Failed to %s pool %s: %s", pause ? "pause" : "unpause", WORKER_POOL,
                            strna(st.message));
                return false;
        }
        if (!pool_pause_needed(pool, pause))
                return true;
        log_info("Setting pause MCP %s to %s", WORKER_POOL, pause ? "true" : "false");
        patch = pool_paused_patch(pause);
        if (!patch)
                return log_oom(), false;
        r = kube_patch_merge(kube, &resource_machine_config_pools, NULL, WORKER_POOL, patch, NULL, &st2);
        if (r < 0) {
                log_warning("Failed to %s pool %s: %s", pause ? "pause" : "unpause", WORKER_POOL,
                            strna(st2.message));
                return false;
        }
        return true;
}

/* patchNodesLabels: the Nodes that carry their labels now */
static size_t nodes_label(Controller *ctl, const NodeLabelsPlan *p)
{
        KubeClient *kube = controller_kube(ctl);
        size_t done = p->present;

        for (size_t i = 0; i < p->n; i++) {
                _cleanup_kube_status_ KubeStatus st = {};
                const char *labels = json_object_to_json_string_ext(
                        json_get_path(p->patches[i], "metadata.labels"), JSON_C_TO_STRING_PLAIN);
                int r;

                if (!kube) {
                        log_info("dry run: node %s not labelled %s", p->nodes[i], labels);
                        done++;
                        continue;
                }
                r = kube_patch_merge(kube, &kube_resource_nodes, NULL, p->nodes[i], p->patches[i], NULL,
                                     &st);
                if (r < 0) {
                        log_error("Failed to patch node %s with node labels %s: %s", p->nodes[i], labels,
                                  strna(st.message));
                        continue;
                }
                log_info("Successfully patched label for host %s", p->nodes[i]);
                done++;
        }
        return done;
}

usec_t node_labels_round(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL, *nodes = NULL;
        _cleanup_(node_labels_plan_done) NodeLabelsPlan plan = {};
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;
        usec_t again = controller_config(ctl)->poll_interval;
        int r;

        log_info("Setting node labels if required");
        r = controller_service_get_cluster(controller_service(ctl), true, NULL, &cluster, &err);
        if (r < 0) {
                log_error("Failed to get node map from the assisted service: %s", strna(err));
                return again;
        }
        r = controller_cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st);
        if (r < 0) {
                log_error("Failed to get list of nodes from k8s client: %s", strna(st.message));
                return again;
        }
        r = node_labels_plan(cluster, nodes, &plan, &err);
        if (r < 0) {
                log_error("Failed to get node map from the assisted service: %s", err ? err : strerror(-r));
                return again;
        }
        if (plan.labelled == 0) {
                log_info("No hosts with labels, skipping update node labels");
                return USEC_INFINITY;
        }
        /* if it was paused already this does nothing */
        if (plan.pause_worker_pool && !worker_pool_pause(ctl, true))
                return again;
        if (nodes_label(ctl, &plan) < plan.labelled) {
                log_info("Not all host labels where added yet, keep trying");
                return again;
        }
        if (plan.pause_worker_pool && !worker_pool_pause(ctl, false))
                return again;
        return USEC_INFINITY;
}

static usec_t task_labels(Controller *ctl)
{
        usec_t next;

        next = node_labels_round(ctl);
        if (next == USEC_INFINITY)
                log_info("Finished UpdateNodeLabels");
        return next;
}

const ControllerTask controller_task_labels = {
        .name = "labels",
        .round = task_labels,
};
