/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The hosts' last stages as their Nodes join the new cluster
 * (WaitAndUpdateNodesStatus, notes/controller.md §5.2), as pure functions
 * of what one round observed: the cluster's hosts (lib/assisted/
 * cluster-hosts.h, without the disabled ones), the NodeList, the
 * machine-config-server's log. controller/run.c performs the plans.
 *
 * Upstream's rules, which the service's stage order relies on:
 *  - a Node is its host by the host's lower-cased requested hostname among
 *    the hosts not installed yet, else by one of the Node's InternalIPs
 *    among every host's addresses (the last such address wins);
 *  - Joined only from Configuring or Rebooting;
 *  - Done for a Ready Node whose host is not Done yet; the stage is the
 *    one read at the start of the round, so a Node first seen Ready gets
 *    Joined and Done back to back;
 *  - a Node that is not Ready loses the uninitialized taint when the
 *    platform asks for it (nutanix, vSphere);
 *  - Configuring for a host whose stage is none of Configuring, Joined and
 *    Done when the machine-config-server's log shows one of its addresses
 *    fetching its Ignition config (workers too: unlike the bootstrap, the
 *    controller never reports Waiting for ignition).
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;
typedef struct ClusterHosts ClusterHosts;

/* ---- whether the node rounds go on ---------------------------------------- */

typedef enum NodesProgress {
        NODES_WAITING, /* some host is neither installed nor in error */
        NODES_ALL_INSTALLED, /* "All nodes were successfully installed" */
        NODES_ALL_FAILED, /* every host not installed is in error */
        _NODES_PROGRESS_MAX,
        _NODES_PROGRESS_INVALID = -22,
} NodesProgress;

/* *ret_remaining (may be NULL): the hosts not installed. */
NodesProgress nodes_progress(const ClusterHosts *hosts, size_t *ret_remaining);

/* ---- one round -------------------------------------------------------------- */

typedef struct NodeStatusAction {
        char *node; /* metadata.name */
        int host; /* index into the hosts, -1: no host of the cluster (warned) */
        bool report_joined;
        bool untaint; /* remove the uninitialized taint */
        bool report_done;
} NodeStatusAction;

void node_status_actions_free(NodeStatusAction *a, size_t n);

/* What to do for each Node of the list, in list order; a Node matched to a
 * host with nothing to do is left out. On failure of an action the rest
 * of its Node's actions wait for the next round (upstream's `continue`). */
int node_status_plan(const ClusterHosts *hosts, json_object *nodes, bool remove_uninitialized_taint,
                     NodeStatusAction **ret, size_t *ret_n);

/* The indexes of the hosts (read again after the round's reports) that
 * become Configuring; -1 terminated, allocated. */
int configuring_plan(const ClusterHosts *hosts, const char *mcs_log, int **ret);
