/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent-based installer's end game (notes/controller.md §3 steps 7-11,
 * §5.3 "ABI variant", §6), as pure functions; controller/run.c picks the
 * tasks, controller/task-abi.c does their I/O.
 *
 * When openshift-config/openshift-install-manifests says the invoker is
 * "agent-installer", assisted-service runs on the rendezvous host and goes
 * away when that host reboots into the cluster. So:
 *  - a single node never calls the service: the OLM operators' manifests
 *    come from the ConfigMap olm-operator-manifests (applied with the
 *    bootstrap's kubeconfig), and the run ends once the ClusterVersion is
 *    Available;
 *  - with several nodes the service is tried for 5 minutes only; without it
 *    the platform is the first key of the install-config's platform; the
 *    same ConfigMap replaces the finalizing stages (applied with the
 *    service's kubeconfig-noingress), and the run ends once the
 *    ClusterVersion is Available and CONTROL_PLANE_COUNT master Nodes are
 *    listed (so that the rendezvous host's kubelet requests get approved);
 *    the final log upload is skipped.
 */

#include <stdbool.h>
#include <stddef.h>

#include "controller/olm.h"

typedef struct json_object json_object;

#define INSTALL_MANIFESTS_NAMESPACE "openshift-config"
#define INSTALL_MANIFESTS_NAME "openshift-install-manifests"
#define INSTALL_MANIFESTS_INVOKER_KEY "invoker"
#define INVOKER_AGENT "agent-installer"
/* upstream's value when the ConfigMap cannot be read */
#define INVOKER_ASSISTED "assisted-service"
/* in the controller's namespace (operators/manager.go createOLMOperatorsConfigMap) */
#define OLM_MANIFESTS_CONFIGMAP "olm-operator-manifests"
#define OLM_METADATA_SUFFIX ".metadata.yaml"
/* SetReadyState's bound for the agent-based installer */
#define AGENT_READY_TIMEOUT_SECONDS (5 * 60)
/* ListNodesByRole("master") */
#define MASTER_ROLE_SELECTOR "node-role.kubernetes.io/master"

/* GetInvoker: data.invoker of openshift-install-manifests ("" when the
 * ConfigMap has no such key, as upstream); configmap NULL (it could not be
 * read): "assisted-service". */
const char *install_invoker(json_object *configmap);

/* ---- olm-operator-manifests ------------------------------------------------- */

/* <operator>.metadata.yaml, as yaml.v2 decodes it into operatorMetadata:
 * unknown keys ignored, any scalar read as a string, null as "". */
typedef struct OperatorMetadata {
        char *namespace; /* namespace */
        char *subscription; /* subscriptionName */
        char **manifests; /* manifests: the keys of the files, never NULL on success */
} OperatorMetadata;

void operator_metadata_done(OperatorMetadata *m);
/* -EBADMSG with *reterr when the text does not decode (not YAML, not a
 * mapping, a list or mapping where a string is wanted, a manifests that
 * is no list); the text is never quoted in *reterr. */
int operator_metadata_parse(const char *yaml, size_t len, OperatorMetadata *ret, char **reterr);

/*
 * The ConfigMap's data, in key order: an OlmOperator per
 * <name>.metadata.yaml (name, namespace, subscriptionName as written) and
 * each file it lists as a CustomManifest of that name (its value base64 as
 * the service writes it, decoded; content NULL when it does not decode,
 * which fails that manifest's apply; "odf" read as "ocs" on 4.8, as
 * applyOperatorManifests does with custom_manifests.json).
 * Returns 0; -EBADMSG when a metadata does not decode (upstream gives up);
 * -ENOENT when a listed file is not in the data (upstream waits for the
 * ConfigMap to be updated). *reterr says which key.
 */
int olm_manifests_configmap_read(json_object *configmap, const char *openshift_version,
                                 OlmOperator **ret_ops, size_t *ret_n, CustomManifest **ret_manifests,
                                 size_t *ret_nm, char **reterr);

/* ---- the platform and the uninitialized taint ----------------------------------- */

/* GetPlatformTypeFromInstallConfig: the first key of the install-config's
 * platform mapping ("" for an empty one). -EBADMSG with *reterr when the
 * YAML does not parse or has no platform mapping. */
int install_config_platform(const char *yaml, size_t len, char **ret, char **reterr);

/* HasValidvSphereCredentials with the service's cluster: its
 * install_config_overrides (JSON) hold platform.vsphere.vcenters.0's user,
 * password and server, none empty nor a placeholder; false for a cluster
 * whose platform is not vsphere. */
bool vsphere_credentials_in_cluster(json_object *cluster);
/* ... without the service: the install-config's
 * platform.vsphere.vcenters.0.server is set and not the placeholder. */
bool vsphere_server_in_install_config(const char *yaml, size_t len);

/* RemoveUninitializedTaint: on nutanix and vsphere, except the agent-based
 * installer on vsphere with real credentials from OpenShift 4.15 on (the
 * vSphere cloud controller initializes the Nodes then; an unparsable
 * version, where upstream's semver panics, is taken as current). */
bool uninitialized_taint_removed(const char *platform, bool agent_installer, const char *openshift_version,
                                 bool vsphere_credentials);

/* ---- the end of the run ------------------------------------------------------- */

/* The ClusterVersion's Available condition is True. */
bool cluster_version_available(json_object *cluster_version);
/* waitForInstallationAgentBasedInstaller: over once the ClusterVersion was
 * seen Available and, when expected_nodes > 0, at least that many master
 * Nodes are listed. */
bool agent_installation_done(bool cluster_version_available, size_t masters, int expected_nodes);
