/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Between the service poller and the controllers (hub.c): which service
 * ids the hub follows, and which object keys a changed service object
 * names. cradle-hub enqueues those keys; bench/hub reconciles them.
 */

#include "hub-cache.h"
#include "hub-service.h"

/* the service ids the cached objects of kind link through their annotation
 * (an empty list, never NULL, when none) */
int hub_tracked_ids(HubCache *c, HubKind kind, const char *annotation, char ***ret);

/* the keys a changed host names: its Agent in the namespace of every
 * InfraEnv linked to infra_env_id ("<namespace>/<host id>"), and the
 * ClusterDeployments of the cluster the service binds it to (a host's
 * change is its cluster's too: counts, the install trigger; as upstream's
 * host events poke the host's cluster). Either list may be empty. */
int hub_host_changed_keys(HubCache *c, HubService *s, const char *infra_env_id, const char *host_id,
                          char ***ret_agent_keys, char ***ret_cd_keys);
