/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The hub's view of the cluster: one informer per kind and watched
 * namespace (lib/kube/kube-informer.h), all namespaces when none is given,
 * with the indexes every controller shares (hub/README.md, "Scale").
 * Kinds whose CRD the cluster does not serve are skipped when optional
 * (hub_cache_has_kind() then says false).
 *
 * Index values name their namespace ("ns/value") unless said otherwise, so
 * that a lookup never crosses namespaces by accident. Lookups return
 * fresh copies the caller owns; the cache may be read from any thread.
 */

#include <stdbool.h>

#include "hub-names.h"
#include "kube/kube-informer.h"
#include "timeutil.h"

typedef struct HubCache HubCache;
typedef struct KubeClient KubeClient;
typedef struct json_object json_object;

/* Index names, by kind */
/* InfraEnv: the infra-env id annotation (the id alone, cluster-wide) */
#define HUB_INDEX_INFRAENV_ID "infraenv-id"
/* InfraEnv: its namespace */
#define HUB_INDEX_INFRAENV_NAMESPACE "infraenv-namespace"
/* InfraEnv: "cdns/cdname" of spec.clusterRef */
#define HUB_INDEX_INFRAENV_CLUSTERREF "infraenv-clusterref"
/* InfraEnv: "ns/secret" of spec.pullSecretRef */
#define HUB_INDEX_INFRAENV_PULLSECRET "infraenv-pullsecret"
/* InfraEnv: "ns/k=v" for each matchLabels pair of the NMStateConfig
 * selector; "ns/@all" when the selector has only matchExpressions */
#define HUB_INDEX_INFRAENV_NMSTATE_SELECTOR "infraenv-nmstate-selector"
/* NMStateConfig: "ns/k=v" for each label, and "ns/@all" for every object */
#define HUB_INDEX_NMSTATE_LABEL "nmstate-label"
/* Agent: "ns/<infraenv label>" */
#define HUB_INDEX_AGENT_INFRAENV "agent-infraenv"
/* Agent: "ns/<mac, lower case>" for each status.inventory interface */
#define HUB_INDEX_AGENT_MAC "agent-mac"
/* Agent: "cdns/cdname" of spec.clusterDeploymentName */
#define HUB_INDEX_AGENT_CD "agent-cd"
/* Agent: "ns/<bmh label>" */
#define HUB_INDEX_AGENT_BMH "agent-bmh"
/* BareMetalHost: "ns/<spec.bootMACAddress, lower case>" */
#define HUB_INDEX_BMH_MAC "bmh-mac"
/* BareMetalHost: "ns/<infraenv label>" */
#define HUB_INDEX_BMH_INFRAENV "bmh-infraenv"
/* PreprovisioningImage: "ns/<infraenv label>" */
#define HUB_INDEX_PPI_INFRAENV "ppi-infraenv"
/* ClusterDeployment: the cluster id annotation (the id alone) */
#define HUB_INDEX_CD_CLUSTER_ID "cd-cluster-id"
/* ClusterDeployment: "ns/<spec.pullSecretRef.name>" */
#define HUB_INDEX_CD_PULLSECRET "cd-pullsecret"
/* AgentClusterInstall: "ns/<spec.clusterDeploymentRef.name>" */
#define HUB_INDEX_ACI_CD "aci-cd"
/* ClusterDeployment: "ns/<spec.clusterInstallRef.name>" */
#define HUB_INDEX_CD_ACI "cd-aci"
/* AgentClusterInstall: "ns/<ConfigMap>" of each manifests ConfigMap */
#define HUB_INDEX_ACI_MANIFESTS "aci-manifests"
/* AgentClusterInstall: spec.imageSetRef.name (ClusterImageSets are cluster-scoped) */
#define HUB_INDEX_ACI_IMAGESET "aci-imageset"

/* Machine, OpenshiftAssistedConfig, OpenshiftAssistedControlPlane:
 * "ns/<cluster.x-k8s.io/cluster-name label>" */
#define HUB_INDEX_MACHINE_CLUSTER "machine-cluster"
#define HUB_INDEX_OAC_CLUSTER "oac-cluster"
#define HUB_INDEX_OACP_CLUSTER "oacp-cluster"
/* OpenshiftAssistedControlPlane: the service ids of its annotations (the
 * claim protocol's "claimed by another object") */
#define HUB_INDEX_OACP_CLUSTER_ID "oacp-cluster-id"
#define HUB_INDEX_OACP_INFRAENV_ID "oacp-infraenv-id"

/* MachineDeployment: "ns/<spec.clusterName>" (required there; the label
 * is CAPI core's webhook's) */
#define HUB_INDEX_MD_CLUSTER "md-cluster"

/* the index value every object of a namespace has ("ns/@all") */
#define HUB_INDEX_ALL "@all"

/* namespaces: NULL or empty = all. */
int hub_cache_new(KubeClient *client, char *const *namespaces, usec_t resync_period, HubCache **ret);
/* Stops the informers first. Accepts NULL, returns NULL. */
HubCache *hub_cache_free(HubCache *c);

/* Before start: handlers for every informer of the kind. */
int hub_cache_add_handlers(HubCache *c, HubKind k, const KubeInformerHandlers *h);

/* Before resolve: which side is watched. Wanted (cradle-hub --capi): the
 * Cluster API kinds (HubKindInfo.cluster_api), each required unless
 * optional (MachineDeployments), and no assisted-installer kind; else the
 * reverse, the Cluster API kinds skipped as if not served. Core kinds
 * (Secrets, ConfigMaps) either way. */
void hub_cache_want_cluster_api(HubCache *c, bool want);
/* Resolves each kind through discovery (hub_cache_has_kind() is known
 * from then on). A required kind that is not served is an error naming
 * its CRD. */
int hub_cache_resolve(HubCache *c, char **reterr);
/* Creates and starts the informers (resolving first if needed). */
int hub_cache_start(HubCache *c, char **reterr);
void hub_cache_stop(HubCache *c);

bool hub_cache_has_kind(HubCache *c, HubKind k);
/* True once every informer listed once. */
bool hub_cache_synced(HubCache *c);
int hub_cache_wait_synced(HubCache *c, usec_t timeout);
/* True when ns is one of the watched namespaces (always without --namespace). */
bool hub_cache_watches_namespace(HubCache *c, const char *ns);
/* The namespaces given (NULL: all). Borrowed. */
char *const *hub_cache_namespaces(HubCache *c);

/* A fresh copy of the object; -ENOENT when absent (or the kind skipped). */
int hub_cache_get(HubCache *c, HubKind k, const char *ns, const char *name, json_object **ret);
/* hub_cache_get() of an index key ("ns/name", or "name"), as the index
 * functions give them. */
int hub_cache_get_key(HubCache *c, HubKind k, const char *key, json_object **ret);
/* The keys ("ns/name") under an index value, sorted, over every namespace;
 * an empty strv when none. */
int hub_cache_index_keys(HubCache *c, HubKind k, const char *index, const char *value, char ***ret);
/* The union of the keys under any of values (each key once). */
int hub_cache_index_keys_any(HubCache *c, HubKind k, const char *index, char *const *values, char ***ret);
/* The keys of kind whose index value is obj's "namespace/name" (the
 * objects that refer to obj: Agents of an InfraEnv, InfraEnvs of a
 * Secret...). */
int hub_cache_keys_referring(HubCache *c, HubKind k, const char *index, json_object *obj, char ***ret);
/* Calls cb for every object of the kind (a fresh parse, borrowed for the
 * call). For tools and tests: controllers use indexes. */
int hub_cache_foreach(HubCache *c, HubKind k, int (*cb)(json_object *obj, void *userdata), void *userdata);
size_t hub_cache_count(HubCache *c, HubKind k);

/* The index functions (exposed for tests). */
int hub_index_infraenv_nmstate_selector(json_object *obj, char ***ret, void *userdata);
int hub_index_nmstate_label(json_object *obj, char ***ret, void *userdata);
int hub_index_agent_mac(json_object *obj, char ***ret, void *userdata);

/* "ns/name" into its parts (ns NULL for "name"); allocated. */
int hub_key_split(const char *key, char **ret_ns, char **ret_name);
