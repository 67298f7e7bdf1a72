/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the bootstrap's waits read from and write to the new cluster (notes
 * §6), behind one interface with two implementations:
 *
 *  - the cluster itself, through lib/kube/ with the admin kubeconfig that
 *    bootstrap.ign laid at /opt/openshift/auth/kubeconfig;
 *  - in dry run (upstream's drymock), a view built from
 *    --dry-run-cluster-hosts-path: every listed host whose fake reboot
 *    marker exists is a Ready node (name = its hostname, InternalIP = its
 *    address, consistent MachineConfig annotations), the install config has
 *    --control-plane-count masters, the controller has said it is ready and
 *    has a Running pod with a short log, every MachineConfig exists, and
 *    writes (taints, the etcd override) succeed without going anywhere.
 *
 * Every call returns 0 or the negative errno of lib/kube/kube.h, with the
 * reason in *err when given.
 */

#include <stdbool.h>
#include <stddef.h>

#include "installer/bootstrap-plan.h"
#include "kube/kube.h"

typedef struct ClusterView ClusterView;

extern const KubeResource kube_resource_machineconfigs;
extern const KubeResource kube_resource_etcds;

/* The real cluster. -EBADMSG/-ENOENT with *reterr when the kubeconfig does
 * not load. */
int cluster_view_new_kube(const char *kubeconfig, ClusterView **ret, char **reterr);
/* Dry run: hosts are copied; replicas is the install config's. */
int cluster_view_new_dry(const DryClusterHost *hosts, size_t n, int replicas, ClusterView **ret);
ClusterView *cluster_view_free(ClusterView *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(ClusterView *, cluster_view_free)

bool cluster_view_is_dry(const ClusterView *v);

int cluster_view_get_configmap(ClusterView *v, const char *ns, const char *name, json_object **ret,
                               KubeStatus *err);
/* A NodeList of the nodes with the label (e.g. node-role.kubernetes.io/master). */
int cluster_view_list_nodes(ClusterView *v, const char *label_selector, json_object **ret, KubeStatus *err);
int cluster_view_get_node(ClusterView *v, const char *name, json_object **ret, KubeStatus *err);
int cluster_view_patch_node(ClusterView *v, const char *name, json_object *json_patch, KubeStatus *err);
int cluster_view_list_events(ClusterView *v, const char *ns, json_object **ret, KubeStatus *err);
int cluster_view_list_pods(ClusterView *v, const char *ns, const char *label_selector, json_object **ret,
                           KubeStatus *err);
int cluster_view_pod_logs(ClusterView *v, const char *ns, const char *name, int64_t since_seconds,
                          char **ret, KubeStatus *err);
/* machineconfigs.machineconfiguration.openshift.io/NAME: 0 when it exists,
 * -ENOENT when not. */
int cluster_view_machineconfig_exists(ClusterView *v, const char *name, KubeStatus *err);
/* A merge patch of etcds.operator.openshift.io/cluster. */
int cluster_view_patch_etcd(ClusterView *v, json_object *merge_patch, KubeStatus *err);
