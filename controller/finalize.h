/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The finalizing stages (PostInstallConfigs, notes/controller.md §5.3) as
 * pure functions of what was read: the operators' conditions in the new
 * cluster, the service's monitored operators and cluster, and the bodies
 * sent back. controller/run.c walks the stages in upstream's order
 * (Waiting for cluster operators, Adding router ca, Waiting for olm
 * operators csv initialization, Done) and does the I/O.
 */

#include <stdbool.h>

typedef struct json_object json_object;

#define CONSOLE_OPERATOR "console"
#define CVO_OPERATOR "cvo"
#define CONSOLE_CAPABILITY "Console"
#define INGRESS_CA_NAMESPACE "openshift-config-managed"
#define INGRESS_CA_CONFIGMAP "default-ingress-cert"
#define INGRESS_CA_KEY "ca-bundle.crt"
#define CLUSTER_OPERATORS_REPORT "CLUSTER_OPERATORS_REPORT"
#define OPERATOR_TIMED_OUT "Waiting for operator timed out"

/* utils.MonitoredOperatorStatus: the first condition that decides, in list
 * order (Available True: available; Progressing True: progressing;
 * Degraded True or Available False: failed), with its message; none:
 * progressing without a message. *ret_message is borrowed from conditions
 * ("" when there is none). */
const char *operator_status_of(json_object *conditions, const char **ret_message);

/* ">= 4.8, < 4.9": the OpenShift that runs OCS where the service says ODF */
bool openshift_version_is_4_8(const char *v);

/* The operator of the service's monitored-operators list with that name
 * (borrowed), or NULL. On OpenShift 4.8 the service's "odf" is the "ocs"
 * the cluster runs. */
json_object *monitored_operator_find(json_object *list, const char *name, const char *openshift_version);
bool monitored_operator_available(json_object *op);

/* checkAndUpdateOperatorAvailability: whether the service hears of the
 * cluster's status: it has another status, or another message that is not
 * empty. */
bool operator_report_needed(json_object *service_operator, const char *status, const char *message);

/* The body of PUT monitored-operators ({"name","status","status_info",
 * "version"}, empty ones left out as go-openapi leaves them; "ocs" sent as
 * "odf"). */
json_object *operator_report_body(const char *name, const char *status, const char *message,
                                  const char *version);

/* ClusterVersion's status.capabilities: enabled when listed in
 * enabledCapabilities, or not known at all. */
bool cluster_capability_enabled(json_object *cluster_version, const char *capability);

/* The operators report of a ClusterOperatorList: [{"name", "status",
 * "status_info"}] in list order. */
json_object *operators_report(json_object *cluster_operators);

/* The body of complete-installation: {"is_success": true}, or
 * {"data": {"CLUSTER_OPERATORS_REPORT": report}, "error_info", "is_success":
 * false} (data only with a report; report is copied). */
json_object *completion_body(bool success, const char *error_info, json_object *report);

/* The service says the stage timed out: progress.finalizing_stage is it and
 * progress.finalizing_stage_timed_out is true. */
bool finalizing_stage_timed_out(json_object *cluster, const char *stage);
