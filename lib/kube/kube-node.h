/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What a Node object says, as the programs that watch a new cluster's nodes
 * read it (the bootstrap installer's waits, the assisted-installer-controller):
 * pure functions of the json-c object the API server sent (borrowed, never
 * kept).
 */

#include <stdbool.h>

typedef struct json_object json_object;

/* The Ready condition is True. */
bool kube_node_ready(json_object *node);
/* status.addresses of type InternalIP (an empty list when none; NULL only
 * when out of memory). */
char **kube_node_internal_ips(json_object *node);
/* Index of the taint with key in spec.taints, -ENOENT when absent. */
int kube_node_taint_index(json_object *node, const char *key);
/* [{"op": "test", "path": "/spec/taints/<i>/key", "value": key},
 *  {"op": "remove", "path": "/spec/taints/<i>"}]: upstream's remove, refused
 * by the server when another writer moved the taint since it was read. */
json_object *kube_node_taint_remove_patch(unsigned index, const char *key);
