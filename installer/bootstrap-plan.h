/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The bootstrap's decisions, as pure functions of what was observed (notes
 * §4): the order of startBootstrap and of the waits, which etcd bootstrap
 * the OpenShift version needs and the etcd patches, how many nodes the
 * control-plane wait needs, which nodes are Ready and which inventory host
 * each one is, what the machine-config-server log says about the other
 * hosts, whether a node's uninitialized taint goes, whether the controller
 * said it is ready, whether the MachineConfig annotations agree, whether the
 * agent-based installer's workers started joining, and the dry run's list
 * of cluster hosts. installer/bootstrap.c and installer/bootstrap-waits.c
 * perform them; tests/installer/test-bootstrap-plan.c checks them with
 * tables.
 *
 * Objects are json-c trees as the Kubernetes API and assisted-service send
 * them (borrowed, never kept). Every returned string or list is allocated
 * and owned by the caller.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "assisted/cluster-hosts.h"
#include "assisted/controller-contract.h"
#include "kube/kube-node.h"

typedef struct json_object json_object;

/* ---- names the bootstrap waits on (notes §6, §10) ------------------------- */

#define BOOTSTRAP_KUBECONFIG "/opt/openshift/auth/kubeconfig"
#define BOOTKUBE_DONE "/opt/openshift/.bootkube.done"
#define SINGLE_NODE_MASTER_IGNITION "/opt/openshift/master.ign"
#define BOOTSTRAP_MANIFESTS_DIR "/opt/openshift/manifests"
#define BOOTSTRAP_OPENSHIFT_DIR "/opt/openshift/openshift"
/* the service's marker in bootstrap.ign (OpenShift >= 4.7, several masters):
 * cluster-etcd-operator's delayed-HA bootstrap */
#define ETCD_DELAYED_HA_MARKER "/opt/openshift/assisted-install-bootstrap"
#define DOCKER_CONFIG "/root/.docker/config.json"
#define SSH_DIR "/root/.ssh"
#define SSH_KEY "/root/.ssh/id_rsa"
#define OPENSHIFT_CLIENT "/usr/bin/oc"
#define MCS_LOG_DIR "/var/log/containers"
#define CONTROLLER_LOGS_SINCE_SECONDS 3600
#define UNINITIALIZED_TAINT "node.cloudprovider.kubernetes.io/uninitialized"
#define INVOKER_DEFAULT "assisted-service"
#define INVOKER_AGENT_INSTALLER "agent-installer"

/* ---- startBootstrap (notes §4.1) and the waits (§4.2, §4.3, §4.6, §4.7) --- */

typedef enum BootstrapAction {
        BOOTSTRAP_MKDIR_SSH, /* /root/.ssh */
        BOOTSTRAP_DOWNLOAD, /* bootstrap.ign into the install dir (fatal) */
        BOOTSTRAP_PULL_SECRET, /* /root/.docker/config.json out of bootstrap.ign */
        BOOTSTRAP_APPLY, /* bootstrap.ign onto the live root: MCD --once-from or native */
        BOOTSTRAP_SSH_KEY, /* ssh-keygen + the 99-assisted-installer-master-ssh manifest (not single node) */
        BOOTSTRAP_DAEMON_RELOAD, /* systemctl daemon-reload */
        BOOTSTRAP_HOSTNAME, /* a random hostname when the current one is localhost or invalid */
        BOOTSTRAP_NETWORK_MANAGER, /* restart NetworkManager (not single node) */
        BOOTSTRAP_CONTROLLER_MANIFESTS, /* the assisted-installer-controller manifests */
        BOOTSTRAP_NODE_IMAGE, /* node-image-pull/overlay when /usr/bin/oc is missing */
        BOOTSTRAP_START_UNITS, /* bootkube, approve-csr, progress */
        _BOOTSTRAP_ACTION_MAX,
        _BOOTSTRAP_ACTION_INVALID = -22,
} BootstrapAction;

const char *bootstrap_action_to_string(BootstrapAction a);
/* startBootstrap's actions in upstream order; single node skips the ssh key
 * and the NetworkManager restart. Returns how many. */
size_t start_bootstrap_plan(bool single_node, BootstrapAction out[static _BOOTSTRAP_ACTION_MAX]);

/* assisted-service's validations.ValidateHostname: an RFC 1123 subdomain
 * (lower-case letters, digits, '-' and '.', labels of 1-63 characters that
 * start and end alphanumeric, 253 at most). The bootstrap also replaces
 * "localhost" (notes §4.1 step 7). */
bool hostname_valid(const char *name);
bool hostname_needs_replacing(const char *name);

/* The units startBootstrap starts, in order. */
extern const char *const bootstrap_units[];

typedef enum EtcdBootstrap {
        /* OpenShift >= 4.7: the service's marker in bootstrap.ign makes
         * cluster-etcd-operator wait for its delayed-HA bootstrap; the
         * bootstrap waits for progress.service to end (notes §4.8) */
        ETCD_BOOTSTRAP_DELAYED_HA,
        /* before 4.7: the unsafe non-HA override on etcds.operator.openshift.io/
         * cluster once the masters are Ready, undone once bootkube is done */
        ETCD_BOOTSTRAP_UNSAFE_OVERRIDE,
        _ETCD_BOOTSTRAP_MAX,
        _ETCD_BOOTSTRAP_INVALID = -22,
} EtcdBootstrap;

EtcdBootstrap etcd_bootstrap_for(const char *openshift_version);
const char *etcd_bootstrap_to_string(EtcdBootstrap e);

typedef enum BootstrapWait {
        WAIT_RELOAD_RESOLV_CONF, /* the host's /etc/resolv.conf (bootkube.sh changed it) */
        WAIT_KUBE_CLIENT, /* from /opt/openshift/auth/kubeconfig (fatal) */
        WAIT_REPORT_MASTERS_JOIN, /* "Waiting for control plane" - "Waiting for masters to join ..." */
        WAIT_GET_CLUSTER, /* platform; vSphere credentials (fatal) */
        WAIT_MASTERS, /* min(replicas-1, 2) masters Ready; Joined for the others */
        WAIT_ETCD_OVERRIDE, /* < 4.7: the unsafe override on */
        WAIT_ARBITERS, /* 1 arbiter Ready when the install config has arbiters */
        WAIT_BOOTKUBE, /* "Waiting for bootkube"; /opt/openshift/.bootkube.done */
        WAIT_ETCD_OVERRIDE_UNDO, /* < 4.7: the override off again */
        WAIT_ETCD_BOOTSTRAP, /* >= 4.7: "waiting for ETCD bootstrap ..."; progress.service inactive */
        WAIT_CONTROLLER, /* "Waiting for controller"; the AssistedControllerIsReady event */
        WAIT_WORKERS, /* agent-based installer: the workers started joining */
        WAIT_MC_ANNOTATIONS, /* the masters agree on their MachineConfig */
        _WAIT_MAX,
        _WAIT_INVALID = -22,
} BootstrapWait;

const char *bootstrap_wait_to_string(BootstrapWait w);
size_t bootstrap_waits_plan(EtcdBootstrap e, BootstrapWait out[static _WAIT_MAX]);

/* ---- etcd (notes §4.8) ----------------------------------------------------- */

/* {"spec": {"unsupportedConfigOverrides": {"useUnsupportedUnsafeNonHANonProductionUnstableEtcd": true}}} */
json_object *etcd_override_patch(void);
/* {"spec": {"unsupportedConfigOverrides": null}} */
json_object *etcd_override_undo_patch(void);
/* Whether an etcds.operator.openshift.io object has the override on. */
bool etcd_override_is_set(json_object *etcd);

/* ---- the install config (kube-system/cluster-config-v1) ------------------- */

/* controlPlane.replicas or arbiter.replicas ("pool") of the install-config
 * YAML; an absent pool or replicas is 0. -EBADMSG with *reterr when the
 * YAML or the number is malformed. */
int install_config_replicas(const char *install_config, const char *pool, int64_t *ret, char **reterr);
/* The number of Ready nodes the role waits for: masters min(replicas-1, 2)
 * (the bootstrap is the last master), arbiters 1; 0 (no wait) when the
 * install config has none. */
unsigned nodes_wait_target(const char *role, int64_t replicas);

/* ---- nodes -------------------------------------------------------------- */

/* kube_node_ready() and the other Node readers: lib/kube/kube-node.h */

/* ---- the other hosts (service: GET cluster with hosts) --------------------- */

/* The hosts and their Nodes: lib/assisted/cluster-hosts.h */

typedef struct NodeAction {
        char *node;
        int host; /* index into the inventory, or -1: not in the inventory */
        bool report_joined; /* the host is not installed yet: PUT Joined for it */
} NodeAction;

/*
 * One round of the node wait (updateReadyNodes): for every Ready node not
 * yet in `ready`, in list order, what to do. The list stops after the first
 * node that is not in the inventory (upstream counts it as Ready, then
 * fetches the inventory again). Returns the number of actions; *ret is
 * NULL when there is none.
 */
int ready_nodes_plan(json_object *nodes, char *const *ready, const ClusterHosts *inv, NodeAction **ret,
                     size_t *ret_n);
void node_actions_free(NodeAction *a, size_t n);

/* ---- Configuring reporting (notes §4.5) ------------------------------------ */

/* The stages after which a host drops out of the Configuring reporting. */
bool configuring_stage_done(const char *stage);
/* Masters Configuring, workers Waiting for ignition. */
const char *configuring_stage_for(const char *role);
/* mcs_log_shows(): lib/assisted/cluster-hosts.h */

/* ---- the uninitialized taint (nutanix, vSphere) --------------------------- */

/* The install-config (or the service's install_config_overrides) holds
 * vSphere credentials that are not the service's placeholders. */
bool vsphere_credentials_valid(json_object *install_config);
/* Whether not-Ready nodes lose the uninitialized taint: nutanix and vSphere,
 * except the agent-based installer on vSphere >= 4.15 with credentials. */
bool remove_uninitialized_taint(const char *platform, const char *openshift_version, const char *invoker,
                                bool vsphere_credentials);
/* data.invoker of openshift-config/openshift-install-manifests, or
 * "assisted-service". */
const char *invoker_of(json_object *configmap);

/* ---- the controller (notes §4.3 i) ----------------------------------------- */

/* Walks an EventList of the controller's namespace: messages of events not
 * seen before (by uid) are appended to *new_messages and their uids to
 * *seen. Returns true when the AssistedControllerIsReady event is there. */
bool controller_events_scan(json_object *events, char ***seen, char ***new_messages);
/* The Running pod whose name starts with assisted-installer-controller, or
 * NULL (borrowed from pods). */
json_object *controller_pod_pick(json_object *pods);

/* ---- MachineConfig annotations (notes §4.7) -------------------------------- */

#define MC_CURRENT_CONFIG "machineconfiguration.openshift.io/currentConfig"
#define MC_DESIRED_CONFIG "machineconfiguration.openshift.io/desiredConfig"

/* The MachineConfig names the master nodes' annotations refer to (each
 * once, sorted). */
char **mc_annotation_names(json_object *nodes);
/* Whether the masters are consistent: at least one, each with both
 * annotations, every named MachineConfig among `existing`, one desired
 * config for all. When not, *ret_reason says why; when they are,
 * *ret_desired is the config. */
bool mc_annotations_consistent(json_object *nodes, char *const *existing, char **ret_reason,
                               char **ret_desired);

/* ---- agent-based installer workers (notes §4.6) ---------------------------- */

/* The workers of ListClusterHosts all left Starting installation,
 * Installing and Waiting for control plane; else *ret_waiting names one
 * that did not (id and stage). */
bool abi_workers_joining(json_object *workers, char **ret_waiting);

/* ---- what a wait says --------------------------------------------------------- */

/* "1 of 2 master nodes Ready (master-1)", "0 of 2 master nodes Ready". */
char *nodes_wait_status(const char *role, char *const *ready, unsigned target);
