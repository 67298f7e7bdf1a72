/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The InfraEnv controller (notes §3, §4): finalizer, the infra-env
 * registered and kept up to date over REST (only what changed), the static
 * network config of the selected NMStateConfigs, the image URLs, the
 * ImageCreated condition, deletion (hosts first, then the infra-env).
 */

#include "hub-controller.h"
#include "hub-service.h"

typedef struct InfraEnvObserved {
        HubObserved base;
        const char *image_type; /* --image-type */
        const char *identity;

        /* the pull secret: the Secret, or why not */
        json_object *secret;
        int secret_error; /* -ENOENT: not found; other: could not read */
        char *secret_message;

        /* spec.clusterRef */
        json_object *cd;
        int cd_error;
        char *cd_message;
        /* the service cluster of the ClusterDeployment (its cluster-id annotation) */
        HubCallResult cluster;
        bool cluster_read;

        /* the NMStateConfigs the selector picks, sorted by namespace/name */
        json_object **nmstate;
        size_t n_nmstate;
        int nmstate_error;
        char *nmstate_message;

        /* GET of the linked infra-env */
        HubCallResult infraenv;
        bool infraenv_read;
        /* the claim search (a marker without an id): ListInfraEnvs */
        HubCallResult candidates;
        bool searched;
        char **claimed_ids;
        /* deletion: the infra-env's hosts */
        HubCallResult hosts;
        bool hosts_read;
        /* the service's API as shown before this reconcile */
        HubServiceApi api;
} InfraEnvObserved;

extern const HubControllerType hub_infraenv_controller;

int infraenv_decide(const HubObserved *o, HubPlan *plan);
/* What this InfraEnv asks that a service of this API cannot do (pure):
 * NULL in *ret when nothing; service: the registered infra-env, or NULL
 * before the registration. The late-2023 models have no ntp_sources, no
 * network_discovery_delay_seconds and no openshift_version in an update. */
int infraenv_api_error(json_object *ie, json_object *service, HubServiceApi api, char **ret);
void infraenv_observed_done(HubObserved *o);
/* The registration body (RegisterInfraEnvInternal's parameters) of an
 * InfraEnv's spec (ie: an InfraEnv, or the one a Cluster API control plane
 * stands for, capi-controlplane.c), shaped for api (infraenv_api_error()
 * said it can express it); spec.imageType, else default_image_type;
 * cluster: the service's cluster it is bound to, or NULL (late binding).
 * Pure. */
int infraenv_create_params(json_object *ie, const char *default_image_type, HubServiceApi api,
                           const char *secret, json_object *cluster, json_object *static_config,
                           json_object **ret);

/* A host the real controller deregisters with its infra-env
 * (deregisterInfraEnvWithHosts): unbound, installed or being unbound;
 * any other holds the infra-env's deletion. */
bool infraenv_host_deletable(json_object *host);

/* What the ImageCreated condition says for a failed call, as upstream's
 * handleEnsureISOErrors (exposed for tests). */
char *infraenv_error_message(const HubCallResult *r);

/* The kernel, initrd and rootfs URLs of an iPXE boot script. */
int infraenv_parse_ipxe(const char *script, char **ret_kernel, char **ret_initrd, char **ret_rootfs);
