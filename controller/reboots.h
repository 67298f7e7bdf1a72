/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The reboots notifier (reboots_notifier.go, notes/controller.md §5.8,
 * NOTIFY_NUM_REBOOTS only), as pure functions; controller/task-reboots.c
 * does the I/O. Each host the controller reports Done gets, within 6
 * minutes, up to 10 runs of `oc --kubeconfig <kubeconfig-noingress> debug
 * node/<node> -- chroot /host last reboot` 15 s apart; the lines of its
 * output that start with "reboot " are the node's reboots, and the service
 * hears of them as the event reboots_for_node (POST /v2/events), which its
 * UI shows.
 */

#include <stdint.h>

#include "timeutil.h"

typedef struct json_object json_object;

#define REBOOTS_EVENT_NAME "reboots_for_node"
#define REBOOTS_ATTEMPTS 10 /* getNumRebootsRetries */
#define REBOOTS_BUDGET (6 * 60 * USEC_PER_SEC) /* getNumRebootsTimeout */

/* GetNumberOfReboots: the lines of out starting with "reboot ". */
unsigned reboots_count(const char *out);

/* The command line (NULL-terminated, allocated). */
char **reboots_argv(const char *kubeconfig, const char *node);

/* The event as go-openapi sends models.Event (its fields in the struct's
 * order, empty ones left out): category user, severity info, the message
 * "Node <node> has been rebooted <n> times before completing installation",
 * event_time now (CLOCK_REALTIME, microseconds) as strfmt.DateTime. */
json_object *reboots_event(const char *cluster_id, const char *host_id, const char *infra_env_id,
                           const char *node, unsigned n, usec_t now);
