/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The node labels the service asks for per host (UpdateNodeLabels,
 * notes/controller.md §5.4), as pure functions of what one round read: the
 * cluster with its hosts and the NodeList. controller/task-labels.c does
 * the I/O, every 30 s until every labelled host's Node carries its labels.
 *
 * Upstream's rules: the hosts that ask are those with node_labels (a JSON
 * object in a string), neither disabled nor in error; a Node is such a
 * host's by name, else by an InternalIP (common.HostMatchByNameOrIPAddress
 * among those hosts only); only Ready Nodes are labelled, by a merge patch
 * {"metadata": {"labels": <node_labels>}}; a Node that carries every pair
 * already counts as done. When a labelled worker names a machine config
 * pool, the pool "worker" is paused ({"spec": {"paused": true}}, merge
 * patch, only when not paused already) before the labels and unpaused once
 * every host is done, in the same round.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;

#define WORKER_POOL "worker"

typedef struct NodeLabelsPlan {
        size_t labelled; /* hosts that ask for labels; 0: the task is over */
        bool pause_worker_pool;
        size_t present; /* Ready Nodes of those hosts that carry their labels already */
        char **nodes; /* Ready Nodes to patch, in list order */
        json_object **patches; /* the merge patch of each */
        size_t n;
} NodeLabelsPlan;

void node_labels_plan_done(NodeLabelsPlan *p);

/* cluster: GET /v2/clusters/{id} with its hosts (a host whose inventory
 * does not parse fails the plan, as upstream's GetHosts); nodes: a
 * NodeList. */
int node_labels_plan(json_object *cluster, json_object *nodes, NodeLabelsPlan *ret, char **reterr);

/* areNodeLabelsUpdated: every pair of labels_json is on the Node (labels
 * that do not parse ask for nothing, as upstream's ignored Unmarshal
 * error). */
bool node_labels_present(json_object *node, const char *labels_json);

/* PatchMachineConfigPoolPaused: whether the pool must be patched
 * (spec.paused differs), and the patch. */
bool pool_pause_needed(json_object *pool, bool pause);
json_object *pool_paused_patch(bool pause);
