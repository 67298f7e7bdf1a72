/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The single node's router probe after a failure (logRouterStatus,
 * notes/controller.md §5.7), as pure functions: whether it runs, what it
 * asks, and the status it logs. controller/router-probe.c does the
 * requests, in the background of the final log upload, as upstream's
 * goroutine: every poll interval for at most the logs timeout (30 s, 70
 * min), the ingress canary's health through the cluster's apps domain and
 * the router's internal health check on this host's outbound address,
 * without a proxy and without verifying certificates; it only logs.
 */

#include <stdbool.h>

/* Only a single node (CONTROL_PLANE_COUNT 1) whose installation failed:
 * the cluster ended in error, or the finalizing stages did. */
bool router_probe_needed(bool has_error, int control_plane_count);

/* https://canary-openshift-ingress-canary.apps.<name>.<base domain>/health;
 * NULL on -ENOMEM. */
char *router_canary_url(const char *cluster_name, const char *base_dns_domain);

/* http://<outbound address>/_______internal_router_healthz, "localhost"
 * when the host has none (an IPv6 address in brackets); NULL on -ENOMEM. */
char *router_health_url(const char *outbound_address);

/* Go's Response.Status for the status: "200 OK" ("299 " for a status Go
 * has no text for); NULL on -ENOMEM. */
char *router_status_line(long status);
