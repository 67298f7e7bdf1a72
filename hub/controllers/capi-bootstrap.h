/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * cradle-hub as the Cluster API bootstrap provider (--capi): CAPOA's
 * OpenshiftAssistedConfig (bootstrap.cluster.x-k8s.io/v1alpha2). The
 * data Secret of the contract (capi.md §1.1): named like the config, type
 * cluster.x-k8s.io/secret, label cluster.x-k8s.io/cluster-name, a
 * controller owner reference to the config, keys `value` (the cluster's
 * one infra-env's discovery Ignition with /etc/hostname = the Machine's
 * name, capi-binding.h) and `format: ignition`; status.dataSecretName and
 * status.initialization.dataSecretCreated (the v1beta2 contract; the
 * v1beta1 status.ready exists only in CAPOA's v1alpha1 version, served
 * through its conversion webhook: a v1alpha2 object cannot hold it, the
 * API server prunes it);
 * pausing (Cluster.spec.paused, the cluster.x-k8s.io/paused annotation)
 * with a Paused condition.
 *
 * Deletion (finalizer openshiftassistedconfig.bootstrap.cluster.x-k8s.io/
 * deprovision): the Machine's host (named like the Machine) is unbound
 * while its installation has not started (free for another Machine), else
 * deregistered; a control-plane config goes too while its control plane
 * lives (CAPOA refuses: there the InfraEnv and its Agents go with it,
 * here only the one host does, and a refusal would hold the Machine's own
 * deletion, a scale-down or a remediation, for ever). A host being bound
 * (binding) is waited for, up to CAPI_BINDING_TIMEOUT, then deregistered.
 * While the control plane is itself being deleted, its deletion
 * deregisters every host.
 */

#include "hub-controller.h"
#include "hub-inputs.h"
#include "hub-service.h"

/* how long a host may stay binding before its config's deletion
 * deregisters it (its agent is not coming back) */
#define CAPI_BINDING_TIMEOUT (10 * 60 * USEC_PER_SEC)

typedef struct ConfigObserved {
        HubObserved base; /* object: the OpenshiftAssistedConfig */
        const char *watch_filter; /* --watch-filter, or NULL */
        /* the owner Machine (cluster.x-k8s.io), or NULL */
        json_object *machine;
        /* the Machine's Cluster, or NULL */
        json_object *cluster;
        /* the cluster's OpenshiftAssistedControlPlane (its infra-env id), or NULL */
        json_object *control_plane;
        /* the data Secret (named like the config) */
        HubRef secret;
        /* deletion: the hosts of the control plane's infra-env */
        HubCallResult hosts;
        bool hosts_read;
} ConfigObserved;

extern const HubControllerType hub_capi_bootstrap_controller;

int capi_bootstrap_decide(const HubObserved *o, HubPlan *plan);
void capi_bootstrap_observed_done(HubObserved *o);
