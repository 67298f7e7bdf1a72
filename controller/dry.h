/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The new cluster of a dry run (DRY_ENABLE, notes §8): no API server, the
 * cluster that upstream's drymock plays, built from the hosts file of
 * DRY_CLUSTER_HOSTS_PATH as the bootstrap installer's dry run builds it
 * (installer/cluster-view.h). Every host whose fake reboot marker exists is
 * a Ready Node (name: its hostname, InternalIP: its address); the cluster
 * proxy is empty; there are no certificate requests and no
 * machine-config-server pods; the ClusterVersion (the Console capability
 * on) and the console ClusterOperator are Available ("All is well"); the
 * ingress CA ConfigMap holds a fixed certificate. Unlike upstream's mock,
 * anything else is a plain 404, never an abort.
 *
 * Pure: which hosts rebooted is the caller's to find out (the markers).
 */

#include <stdbool.h>
#include <stddef.h>

#include "assisted/cluster-hosts.h"
#include "kube/kube.h"

typedef struct DryCluster {
        DryClusterHost *hosts;
        size_t n;
        const bool *rebooted; /* n entries: the host's reboot marker exists */
        const char *openshift_version; /* the ClusterVersion's desired version */
} DryCluster;

/* The object GET would answer: 0 and *ret, or -ENOENT. */
int dry_cluster_get(const DryCluster *c, const KubeResource *res, const char *ns, const char *name,
                    json_object **ret);
/* The list (kind <Kind>List) LIST would answer: 0 and *ret; -ENOMEM. */
int dry_cluster_list(const DryCluster *c, const KubeResource *res, const char *ns, json_object **ret);
