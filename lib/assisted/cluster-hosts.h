/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The hosts of a cluster as the programs that follow them into the new
 * cluster see them (the bootstrap installer's waits and the
 * assisted-installer-controller; upstream's inventory_client.GetHosts and
 * common.HostMatchByNameOrIPAddress): what each host is called, where it
 * is in its installation, its addresses, and which Node of the new cluster
 * it is. Pure functions of the service's Cluster (GET /v2/clusters/{id}
 * with its hosts) and the API server's Node objects, both json-c trees
 * borrowed, never kept.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;

typedef struct ClusterHost {
        char *id;
        char *infra_env_id;
        char *name; /* requested_hostname, lower-cased */
        char *role;
        char *status;
        char *stage; /* progress.current_stage */
        char **ips; /* every address of every interface, without prefix */
} ClusterHost;

typedef struct ClusterHosts {
        ClusterHost *hosts;
        size_t n;
} ClusterHosts;

void cluster_hosts_done(ClusterHosts *l);
/* The enabled hosts of the cluster but self_host_id (NULL: all of them;
 * upstream's GetHosts without "disabled"). A host whose inventory does not
 * parse fails the whole list, as upstream. */
int cluster_hosts_from_cluster(json_object *cluster, const char *self_host_id, ClusterHosts *ret,
                               char **reterr);
/* The index of a Node's host: by name (lower-cased), else by an InternalIP;
 * -ENOENT. */
int cluster_hosts_match_node(const ClusterHosts *l, json_object *node);

/* Whether the machine-config-server log shows one of the addresses fetching
 * its Ignition config: `(IP)(%zone)?(])?:port"? User-Agent:"Ignition`. The
 * address must not continue another one (upstream's pattern has a word
 * boundary after it only: cradle also wants one before it). */
bool mcs_log_shows(const char *log, char *const *ips);

/* ---- dry run: the hosts file of DRY_CLUSTER_HOSTS_PATH -------------------- */

/* The hosts a dry run plays as the new cluster's Nodes (the bootstrap
 * installer's and the controller's, as upstream's drymock): each becomes a
 * Ready Node once its fake reboot marker exists. */

typedef struct DryClusterHost {
        char *hostname;
        char *ip;
        char *reboot_marker_path;
} DryClusterHost;

/* [{"hostname": ..., "ip": ..., "rebootMarkerPath": ...}] */
int dry_cluster_hosts_parse(const char *json, size_t len, DryClusterHost **ret, size_t *ret_n,
                            char **reterr);
void dry_cluster_hosts_free(DryClusterHost *h, size_t n);
