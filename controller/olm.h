/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The monitored OLM operators in the finalizing stages (waitForOLMOperators
 * and the ClusterServiceVersion handler, notes/controller.md §5.3), as pure
 * functions of what was read: the service's monitored operators, the
 * Subscriptions, ClusterServiceVersions, InstallPlans and Jobs of the new
 * cluster, the service's custom_manifests.json. controller/task-olm.c walks
 * the stages (Waiting for olm operators csv initialization, Applying olm
 * manifests, Waiting for olm operators csv) and does the I/O.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;

#define OLM_JOBS_NAMESPACE "openshift-marketplace"
/* failedOperatorRetry: a Failed CSV is reported only after this many
 * observations (upstream's workaround of bug 1968606) */
#define OLM_FAILED_OBSERVATIONS_HELD 10

typedef struct OlmOperator {
        char *name; /* "odf" is "ocs" on OpenShift 4.8 */
        char *namespace;
        char *subscription; /* "ocs-operator" for ocs on 4.8 */
        unsigned failed_seen; /* Failed observations held back */
} OlmOperator;

/* GetClusterMonitoredOLMOperators: the operators of type olm, in list
 * order; with only_progressing, those neither available nor failed
 * (getProgressingOLMOperators). */
int olm_operators_of(json_object *list, const char *openshift_version, bool only_progressing,
                     OlmOperator **ret, size_t *ret_n);
void olm_operators_free(OlmOperator *ops, size_t n);

/* jobFailed: status.failed > 0, else the first Failed condition's status
 * is True. */
bool olm_job_failed(json_object *job);
/* The InstallPlans of the list that the subscription owns (an owner
 * reference of that name) and whose phase is Failed: their names. */
char **olm_failed_install_plans(json_object *plans, const char *subscription);
/* status.currentCSV, NULL when empty */
const char *subscription_current_csv(json_object *subscription);

/* CsvStatusToOperatorStatus: phase Succeeded: available, Failed: failed,
 * else progressing; *ret_message status.message ("" when none),
 * *ret_version spec.version (Go's zero semver "0.0.0" when none). */
const char *csv_operator_status(json_object *csv, const char **ret_message, const char **ret_version);
/* OnChange: whether a changed status may be reported; a failed one is held
 * back OLM_FAILED_OBSERVATIONS_HELD times. */
bool csv_report_allowed(OlmOperator *op, const char *status);

/* custom_manifests.json: [{"Name", "Content" (base64 YAML)}], names "odf"
 * read as "ocs" on 4.8. */
typedef struct CustomManifest {
        char *name;
        char *content;
        size_t len;
} CustomManifest;

int custom_manifests_parse(const char *data, size_t len, const char *openshift_version, CustomManifest **ret,
                           size_t *ret_n, char **reterr);
void custom_manifests_free(CustomManifest *m, size_t n);
