/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the Cluster API provider's controllers (cradle-hub --capi:
 * capi-controlplane.c, capi-bootstrap.c) share, all pure: a Machine ↔ host
 * binding by the hostname the Machine's bootstrap data gives its host, the
 * host's progress as a Machine shows it, the per-Machine Ignition, the
 * kubeconfig Secret of the contract, pausing.
 *
 * One infra-env per cluster, registered unbound (late binding): every
 * Machine's data is its discovery Ignition plus /etc/hostname = the
 * Machine's name; a host that registers with the name of a control-plane
 * Machine is bound to the cluster (the binding is its approval record:
 * the service's `approved` has no REST field); any other host stays in the
 * infra-env, unbound, and is never installed.
 */

#include <stdbool.h>

#include "hub-plan.h"

typedef struct json_object json_object;

/* The name a host registered with (requested_hostname, else its
 * inventory's hostname, as the service's GetHostname), allocated, or
 * NULL. */
char *capi_host_name(json_object *host);
/* The host of hosts (the infra-env's list) a Machine binds: the one
 * registered with the Machine's name; of several, the one the service
 * already bound, else the first by id. NULL when none. */
json_object *capi_host_for_machine(json_object *hosts, const char *machine);
/* For cd_counts_hosts(): the host registered with one of the names of the
 * strv userdata (the control-plane Machines). */
bool capi_host_bound(json_object *host, const void *userdata);

/* The host's installation as a Machine shows it: status "True" once the
 * host is installed, "False" while it installs or waits; reason (CamelCase,
 * from the host's status); message "<stage> <percent>%" (progress.
 * current_stage, progress.installation_percentage) or the status text.
 * Allocated. */
int capi_host_progress(json_object *host, char **ret_status, char **ret_reason, char **ret_message);

/* The discovery Ignition with /etc/hostname = hostname (mode 0644,
 * overwrite), the Machine's identity: *ret the new Ignition text.
 * -EINVAL when the text is not an Ignition config or hostname is empty. */
int capi_ignition_with_hostname(const char *ignition, const char *hostname, char **ret);

/* The host Ignition override every bound host gets before the
 * installation starts (v2UpdateHostIgnition): a oneshot unit, ordered
 * after the kubelet, that writes the contract's sentinel file
 * /run/cluster-api/bootstrap-success.complete (RHCOS's /run is a tmpfs:
 * it says this boot's kubelet started). The text is constant, so the
 * host's ignition_config_overrides is compared with it as a string. */
extern const char capi_sentinel_ignition[];
/* The host has that override. */
bool capi_host_has_sentinel(json_object *host);

/* The Cluster API Secret of the contracts: type cluster.x-k8s.io/secret,
 * label cluster.x-k8s.io/cluster-name, a controller owner reference to
 * owner, data {key: value} for each pair of kv (NULL-terminated); and
 * the hub's watch and backup labels (hub_plan_label_watched()'s), so that
 * the hub reads it from its cache. */
json_object *capi_secret(json_object *owner, const char *name, const char *cluster, const char *const *kv);

/* The Cluster API cluster's name of an object (its cluster.x-k8s.io/
 * cluster-name label), or NULL. */
const char *capi_cluster_name(json_object *obj);
/* Left to another provider instance: watch_filter (--watch-filter) is set
 * and obj's cluster.x-k8s.io/watch-filter label is not that value. */
bool capi_filtered_out(const char *watch_filter, json_object *obj);
/* Paused, as the contracts say: Cluster.spec.paused or the
 * cluster.x-k8s.io/paused annotation on obj. cluster may be NULL. */
bool capi_paused(json_object *cluster, json_object *obj);
/* The owner reference of that kind (and group, by its apiVersion's
 * prefix), or NULL. */
json_object *capi_owner(json_object *obj, const char *group, const char *kind);
/* An owner reference to obj (controller when controller). */
json_object *capi_owner_reference(json_object *obj, bool controller);
