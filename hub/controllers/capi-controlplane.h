/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * cradle-hub as the Cluster API control-plane provider (--capi): CAPOA's
 * OpenshiftAssistedControlPlane (controlplane.cluster.x-k8s.io/v1alpha3)
 * reconciled straight against the service, with no ClusterDeployment,
 * AgentClusterInstall, InfraEnv, Agent or ClusterImageSet (hub/README.md,
 * "The Cluster API provider").
 *
 * Per reconcile: the owner Cluster and pausing; the pull secret; the
 * service cluster registered (the body of cluster-params.c, from the
 * AgentClusterInstall CAPOA would have made) and one unbound infra-env
 * for the cluster (infraenv_create_params()), their ids in the
 * annotations cradle.agent-install.openshift.io/cluster-id and
 * /infra-env-id; the control-plane Machines made as a KCP makes them (an
 * OpenshiftAssistedConfig and an infrastructure machine cloned from the
 * template for each); each Machine's host bound (capi-binding.h) with
 * role master; the installation started once every control-plane Machine
 * has its host (the install trigger of cluster-status.c); the
 * <cluster>-kubeconfig Secret from the service's credentials, its client
 * certificate short-lived and renewed once the new cluster's API answers
 * (capi-kubeconfig.h); the status.
 */

#include <stdbool.h>

#include "capi-kubeconfig.h"
#include "hub-controller.h"
#include "hub-inputs.h"
#include "hub-service.h"

typedef struct ControlPlaneObserved {
        HubObserved base; /* object: the OpenshiftAssistedControlPlane */
        HubServiceApi api;
        const char *image_type; /* --image-type */
        const char *watch_filter; /* --watch-filter, or NULL */

        /* the owner Cluster (cluster.x-k8s.io), or NULL */
        json_object *cluster;
        /* spec.config.pullSecretRef's Secret */
        HubRef secret;
        /* the Machines of this control plane (controller owner: it), by name */
        json_object **machines;
        size_t n_machines;
        /* the cluster's worker Machines (capi_worker_machine()), by name,
         * and the replicas its MachineDeployments of OpenshiftAssistedConfig
         * bootstrap ask for (read while the installation has not started:
         * capi_installation_started()) */
        json_object **workers;
        size_t n_workers;
        unsigned worker_replicas;
        /* the OpenshiftAssistedConfigs of its cluster (names only matter) */
        char **configs;
        /* spec.machineTemplate.infrastructureRef's template, and the
         * infrastructure machines already cloned from it (names) */
        HubRef infra_template;
        char **infra_machines;
        /* the claim protocol (hub-claim.h) for the registration still
         * without its id: with the registering marker, the service's
         * objects of that kind (searched_for: the id annotation they would
         * fill), and the ids other control planes claim */
        const char *identity;
        const char *searched_for;
        HubCallResult candidates;
        char **claimed_ids;
        /* the service's cluster (with its hosts) and the infra-env's hosts */
        HubCallResult service_cluster;
        bool cluster_read;
        HubCallResult hosts;
        bool hosts_read;
        /* the <cluster>-kubeconfig Secret */
        HubRef kubeconfig;
        /* the new cluster's API with that kubeconfig: GET /readyz answered
         * 200 (0), or why not; its GET /version's gitVersion */
        int readyz;
        char *kube_version;
        /* the client certificate of that kubeconfig (capi-kubeconfig.h);
         * --kubeconfig-cert-expiration and --kubeconfig-cert-renew-before */
        CapiKubeconfigCert kubeconfig_cert;
        usec_t cert_expiration;
        usec_t cert_renew_before;
        /* while a day-2 worker joins (its host rebooting into the new
         * cluster, its Machine not yet shown joined): the new cluster's
         * CSRs (an array) and the Nodes of those workers (an object by
         * Machine name), read with that kubeconfig; NULL otherwise */
        json_object *spoke_csrs;
        json_object *spoke_nodes;
} ControlPlaneObserved;

extern const HubControllerType hub_capi_controlplane_controller;

int capi_controlplane_decide(const HubObserved *o, HubPlan *plan);
void capi_controlplane_observed_done(HubObserved *o);

/* The ClusterDeployment and AgentClusterInstall CAPOA's
 * clusterdeployment_controller.go would make of the control plane and its
 * Cluster (capi.md §3.6), for cd_create_params(): clusterName (the
 * config's, else the Cluster's name), baseDomain, VIPs and platform
 * (BareMetal with both VIP lists, else None), controlPlaneAgents =
 * replicas, workerAgents = workers (Σ of the MachineDeployments'
 * replicas, capi_worker_replicas()), the Cluster's pod networks with host prefix 23 and service
 * networks, sshPublicKey, proxy, mastersSchedulable, diskEncryption. */
int capi_cluster_as_aci(json_object *oacp, json_object *cluster, unsigned workers, json_object **ret_cd,
                        json_object **ret_aci);
/* The InfraEnv CAPOA's bootstrap controller would make (§3.3 step 5), for
 * infraenv_create_params(): named like the control plane, its
 * openshiftAssistedConfigSpec, imageType full-iso. */
int capi_infraenv_of(json_object *oacp, json_object **ret);
/* spec.replicas; absent: 1 (optional in the contract and in CAPOA's
 * CRD, which gives no default; 1 is KCP's) */
unsigned capi_replicas(json_object *oacp);
/* The names of the control-plane Machines to make: "<oacp>-<n>" for the
 * lowest n not taken, until there are replicas (strv, maybe empty). */
int capi_machines_missing(json_object *oacp, json_object *const *machines, size_t n, char ***ret);

/* Day-1 workers (capi.md §3.3's worker gate, §8, decided here): a worker
 * Machine is one of the cluster (cluster-name label) without the
 * control-plane label whose bootstrap config is an OpenshiftAssistedConfig
 * (a MachineDeployment's, cloned from an OpenshiftAssistedConfigTemplate).
 * Those that exist before the installation starts are bound with role
 * worker and the installation waits for their hosts, as for the control
 * plane's; one that appears after it started is not installed day 1 (its
 * HostInstallation condition says so: day 2 is not done). */
bool capi_worker_machine(json_object *machine, const char *cluster);
/* A MachineDeployment's replicas when it makes worker Machines of cluster
 * (its template's bootstrap configRef an OpenshiftAssistedConfigTemplate;
 * nil replicas is 1, CAPI's default), else 0. */
unsigned capi_worker_replicas(json_object *machine_deployment, const char *cluster);
/* The service's cluster has started installing (or is past it): its
 * status is none of insufficient, ready, pending-for-input (CAPOA's gate
 * lets workers in while the state is one of those). */
bool capi_installation_started(json_object *service_cluster);

/* ---- between the decision (capi-controlplane.c) and what it reads
 * (capi-controlplane-observe.c) ---- */

/* the CSR that issued the kubeconfig Secret's client certificate: minted
 * here, not the admin's (the Secret's annotation) */
#define CAPI_ANNOTATION_KUBECONFIG_CSR "cradle.agent-install.openshift.io/kubeconfig-csr"

/* the i-th Machine of the installation: the control plane's first, then
 * the workers (pure) */
json_object *capi_controlplane_nth_machine(const ControlPlaneObserved *o, size_t i, bool *ret_worker);
/* the infra-env's hosts as the service listed them; not listed, the
 * cluster's own; NULL when neither was read (pure) */
json_object *capi_controlplane_hosts(const ControlPlaneObserved *o);
/* a day-2 host h of the cluster (id cid) joining, its Machine not yet
 * showing it joined: its node's CSRs are cradle-hub's to approve (pure) */
bool capi_day2_joining(json_object *cluster, const char *cid, json_object *machine, json_object *h);
/* the service's cluster has its credentials: the kubeconfig Secret's
 * time (pure) */
bool capi_kubeconfig_due(json_object *cluster);
