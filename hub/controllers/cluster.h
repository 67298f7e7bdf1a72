/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The ClusterDeployment controller, which also owns the
 * AgentClusterInstall (notes §1), and the small AgentClusterInstall
 * controller for an ACI whose ClusterDeployment is missing.
 *
 * Per reconcile of a ClusterDeployment: finalizers on both objects, the
 * ACI's owner reference, the inputs (pull secret, ClusterImageSet, the
 * ignition endpoint's CA, the manifest ConfigMaps) each checked before
 * anything is sent, the service cluster found through the cluster-id
 * annotation and the claim protocol (registered, or imported when already
 * installed), the spec sent field by field when it differs (§1.3, with the
 * late-2023 service's rules), the install-config overrides and the ignored
 * validations, custom manifests, the credentials Secrets and
 * spec.clusterMetadata (§1.6), the install trigger (§1.7, approval from
 * Agent.spec.approved), day-2 (the conversion, then per-host installs),
 * deletion (§1.5) and the ACI's status with its seven conditions (§1.8).
 *
 * Files: cluster.c (observe, the decision's flow, watches),
 * cluster-params.c (spec → service), cluster-status.c (the ACI's status).
 */

#include <stdbool.h>

#include "hub-controller.h"
#include "hub-inputs.h"
#include "hub-service.h"

typedef struct ClusterObserved {
        HubObserved base; /* object: the ClusterDeployment */
        const char *identity;
        /* what the service has shown of its cluster API (hub-service.h) */
        HubServiceApi api;

        /* spec.clusterInstallRef's AgentClusterInstall, or NULL (not found) */
        json_object *aci;
        /* spec.pullSecretRef's Secret */
        HubRef secret;
        /* the ACI's ClusterImageSet (cluster-scoped) */
        HubRef image_set;
        /* the ACI's owner OpenshiftAssistedControlPlane (Cluster API), read
         * only when the ClusterImageSet does not say its release */
        HubRef control_plane;
        /* spec.ignitionEndpoint.caCertificateReference's Secret */
        HubRef ca_secret;
        /* spec.manifestsConfigMapRefs[] (or the legacy manifestsConfigMapRef), in order */
        HubRef *config_maps;
        size_t n_config_maps;
        /* the Agents whose spec.clusterDeploymentName is this ClusterDeployment */
        json_object **agents;
        size_t n_agents;
        /* each Agent's InfraEnv (its label), or NULL */
        json_object **agent_infraenvs;
        /* the credentials Secrets, when they exist */
        HubRef kubeconfig_secret;
        HubRef password_secret;

        /* the service's cluster (v2GetCluster with its hosts) */
        HubCallResult cluster;
        bool cluster_read;
        /* the claim search (a marker without an id): v2ListClusters */
        HubCallResult candidates;
        bool searched;
        char **claimed_ids;
        /* the cluster's custom manifests (V2ListClusterManifests) */
        HubCallResult manifests;
        bool manifests_read;
} ClusterObserved;

extern const HubControllerType hub_cd_controller;

int cd_decide(const HubObserved *o, HubPlan *plan);
void cd_observed_done(HubObserved *o);

/* ---- the AgentClusterInstall controller (agentclusterinstall_controller.go) ---- */

typedef struct AciObserved {
        HubObserved base; /* object: the AgentClusterInstall */
        json_object *cd; /* spec.clusterDeploymentRef's ClusterDeployment, or NULL */
        int cd_error; /* -ENOENT: not found */
} AciObserved;

extern const HubControllerType hub_aci_controller;

int aci_decide(const HubObserved *o, HubPlan *plan);

/* ---- cluster-params.c: spec → service (pure) ---- */

/* The release of a ClusterImageSet's releaseImage, from its tag
 * ("quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64" → "4.13.18",
 * "x86_64"; "...:4.14.0-multi" → "multi"; no arch suffix: x86_64).
 * -EINVAL, with why, when the tag names no version (a digest reference). */
int cd_release_from_image(const char *image, char **ret_version, char **ret_arch, char **ret_why);

/* The release a ClusterImageSet asks for: its labels
 * agent-install.openshift.io/openshift-version (and /architecture), the
 * version `oc adm release info` reads from the image (upstream's
 * docs/enhancements/label-clusterimagesets.md), else the version in its
 * releaseImage's tag. -EINVAL, with why, when neither names one (a digest
 * or a tag without a version, as disconnected hubs pin releases) or they
 * disagree: cradle-hub never pulls a release image to read it. */
int cd_release_asked(json_object *image_set, json_object *control_plane, char **ret_version, char **ret_arch,
                     char **ret_why);
/* The Cluster API control plane (CAPOA's OpenshiftAssistedControlPlane)
 * among the ACI's owner references: its apiVersion and name, borrowed;
 * false when there is none. CAPOA pins the ClusterImageSet it makes by
 * digest and labels it not; the control plane's spec.distributionVersion
 * is the release it resolved, which cd_release_asked() takes then. */
bool cd_control_plane_owner(json_object *aci, const char **ret_api_version, const char **ret_name);
/* The service's offer of that release in its answer to GET
 * /v2/openshift-versions (keyed by openshift_version in late 2023, by the
 * release's version since; display_name is the release's version): 1 and
 * *ret_key, the openshift_version that registers exactly that release; 0
 * and *ret_offered, what it offers instead for the architecture (the same
 * x.y first), for a message. */
int cd_release_offered(json_object *versions, const char *version, const char *arch, char **ret_key,
                       char **ret_offered);
/* The service registered the cluster with that release (its
 * openshift_version, "-multi" aside); true when it does not say. */
bool cd_release_registered(json_object *cluster, const char *version);
/* What of the ACI a service of that API cannot express, for a new cluster
 * (cluster NULL) or the registered one: *ret the input error's text, or
 * NULL. The late-2023 API has no control_plane_count (three control-plane
 * nodes or a single node without workers), no load_balancer, and cannot
 * change high_availability_mode after registration. */
int cd_api_error(json_object *aci, json_object *cluster, HubServiceApi api, char **ret);

/* What the hub needs of the inputs to build a call. */
typedef struct ClusterInputs {
        const char *pull_secret; /* the .dockerconfigjson text */
        const char *pull_secret_digest; /* its digest */
        const char *version; /* of the release the ClusterImageSet asks for */
        const char *register_version; /* the service's name of it (cd_release_offered), or NULL */
        const char *arch;
        const char *release_image;
        const char *ignition_ca; /* base64 of the CA's tls.crt, or NULL */
        HubServiceApi api; /* the bodies' shape */
} ClusterInputs;

/* The registration body (CreateClusterParams), shaped for in->api: the
 * late-2023 API gets high_availability_mode and api_vip beside api_vips,
 * the current one control_plane_count and api_vips alone, an unknown one
 * the union. *ret_error: an input error of the spec (e.g. external platform
 * without spec.external, a topology in->api cannot express). */
int cd_create_params(json_object *cd, json_object *aci, const ClusterInputs *in, json_object **ret,
                     char **ret_error);
/* The V2UpdateCluster body: only what differs from the service's cluster,
 * following the late-2023 service's rules (api_vip with api_vips, ingress
 * likewise, unless in->api is current; machine_networks only in VIP-DHCP
 * mode or with user-managed networking; VIPs only once a host of the
 * cluster has an address in a network containing them; the control-plane
 * count to a service that may know it); NULL when nothing differs.
 * secret_changed: the pull secret's digest is not the one last sent. */
int cd_update_params(json_object *cd, json_object *aci, json_object *cluster, json_object *hosts,
                     const ClusterInputs *in, bool secret_changed, json_object **ret);
/* The ACI carries an ignored-validations annotation. */
bool cd_ignores_validations(json_object *aci);
/* The v2SetIgnoredValidations body when the annotations ask for something
 * the service does not ignore (have_*: its JSON lists, NULL for none);
 * NULL otherwise. */
int cd_ignored_validations(json_object *aci, const char *have_c, const char *have_h, json_object **ret);
/* The import body (a day-2 cluster for a ClusterDeployment installed
 * elsewhere). */
int cd_import_params(json_object *cd, json_object *aci, const char *version, json_object **ret);

/* A download of the cluster's credentials file (kubeconfig,
 * kubeconfig-noingress; V2DownloadClusterCredentials) as a feedback call:
 * its text is the result's body. */
/* The cluster's installation is under way, so that the service refuses
 * its deregistration (409) until it is cancelled (V2CancelInstallation):
 * what the real controller cancels before deregistering. */
bool cd_installation_cancellable(json_object *cluster);
int cd_plan_credentials_download(HubPlan *plan, const char *tag, const char *cluster_id, const char *file);

/* ---- cluster-status.c: the ACI's status (pure) ---- */

typedef struct ClusterCounts {
        unsigned expected_masters, expected_arbiters, expected_workers;
        /* the cluster's hosts by suggested role (any status) */
        unsigned masters, arbiters, workers;
        /* hosts known, and known with an approved Agent */
        unsigned known, approved;
        /* this ClusterDeployment's Agents with SpecSynced False */
        unsigned unsynced;
} ClusterCounts;

/* Whether a host of the cluster is approved for the installation: its
 * Agent's spec.approved (cd_counts), its binding to a Machine (the Cluster
 * API path, capi-binding.h). */
typedef bool (*ClusterHostApproved)(json_object *host, const void *userdata);
/* Adds the hosts' counts (by suggested role; known; known and approved)
 * to c, whose expectations the caller set. Pure. */
void cd_counts_hosts(json_object *hosts, ClusterHostApproved approved, const void *userdata,
                     ClusterCounts *c);
/* The counts of the install trigger and RequirementsMet: the cluster's
 * hosts (the service's list) against this ClusterDeployment's Agents. */
void cd_counts(json_object *aci, json_object *hosts, json_object *const *agents, size_t n_agents,
               ClusterCounts *ret);
/* isReadyForInstallation (notes §1.7): status ready, known == approved ==
 * expected, the suggested roles exactly as required, no unsynced Agent,
 * not held. */
bool cd_ready_for_installation(json_object *cluster, const ClusterCounts *c, bool hold);
/* A cluster status before its installation: insufficient, ready,
 * pending-for-input (the service's pre-installation states). */
bool cd_status_before_installation(const char *status);

/* The ACI's status (notes §1.8) into desired: debugInfo, progress, VIPs,
 * networking, validationsInfo, the seven conditions. cluster NULL: the
 * conditions Unknown NotAvailable. sync_error NULL: SpecSynced True.
 * link_source: a URL the service handed out, for the debug URLs
 * (hub-links.h; NULL: none yet). */
int cd_aci_status(json_object *desired, json_object *cluster, const ClusterCounts *counts,
                  const char *sync_error, bool sync_user, bool hold, const char *link_source, usec_t now);
/* The link source of the ACI's debug URLs: the presigned URL of the
 * InfraEnv of the first (by name) of its Agents that has one; NULL until
 * an Agent is bound (the service hands out no URL of a cluster alone). */
const char *cd_link_source(json_object *const *agents, json_object *const *agent_infraenvs, size_t n);
