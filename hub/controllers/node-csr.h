/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

/* A new node's certificate requests on the cluster it joins, checked as
 * assisted-service's csr_utils.go checks them before it approves one for
 * a day-2 host (the cluster's machine approver knows no such host).
 * Shared by the Agent's day-2 path and the Cluster API provider's. */

/* the reason of an approval (upstream's, kubectl's is another) */
#define NODE_CSR_APPROVE_REASON "NodeCSRApprove"

/* A CSR the node called hostname may have approved: 1 its client CSR
 * (from the node bootstrapper, node is NULL while the Node does not
 * exist), 2 its serving CSR (each name and address in it one of node's),
 * 0 not this node's, or this node's but invalid (*ret_why says why,
 * allocated). */
int node_csr_kind(const char *hostname, json_object *csr, json_object *node, char **ret_why);

/* approved by anyone (an Approved condition) */
bool node_csr_approved(json_object *csr);
