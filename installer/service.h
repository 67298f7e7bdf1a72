/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The installer's service calls: lib/assisted.h with the Go installer's
 * retry policy on top (assisted.h assisted_should_retry(): 404/423/425 up to 10
 * retries, 408/429/5xx and no answer up to 360, 2-10 s jittered back-off;
 * 3 in dry run), a fresh X-Request-Id per call, and the progress call's
 * rules: nothing is sent without a host ID, and a failure is logged, never
 * returned as a reason to stop.
 */

#include <stdbool.h>
#include <stddef.h>

#include "assisted/assisted.h"
#include "installer/plan.h"

typedef struct AssistedClient AssistedClient;
typedef struct json_object json_object;

typedef struct Service {
        AssistedClient *client;
        AssistedRetryPolicy retry;
        const char *infra_env_id;
        const char *host_id;
        const char *cluster_id;
} Service;

/* One call with the retry policy. op returns what assisted_* return. */
typedef int (*ServiceOp)(AssistedClient *c, void *userdata, long *ret_status, char **reterr);
int service_call(Service *s, const char *what, ServiceOp op, void *userdata, char **reterr);

/* PUT .../progress; logs "Updating node installation stage: S - I" first.
 * Returns true when the service took it (the coreos-installer percentage
 * only advances then). */
bool service_progress(Service *s, const char *stage, const char *info);

/* PUT .../progress for another host of the cluster (the bootstrap reports
 * Joined, Configuring and Waiting for ignition for them); logged, never
 * fatal. */
bool service_progress_for(Service *s, const char *infra_env_id, const char *host_id, const char *stage,
                          const char *info);

int service_download_ignition(Service *s, char **ret, size_t *ret_len, char **reterr);
/* GET /v2/clusters/{id}/downloads/files?file_name=NAME */
int service_download_file(Service *s, const char *name, char **ret, size_t *ret_len, char **reterr);
/* GET /v2/clusters/{id}: without hosts (exclude_hosts=true), or with them */
int service_get_cluster(Service *s, json_object **ret, char **reterr);
int service_get_cluster_hosts(Service *s, json_object **ret, char **reterr);
int service_list_hosts(Service *s, const char *role, json_object **ret, char **reterr);
int service_logs_progress(Service *s, const char *state, char **reterr);
int service_cluster_logs_progress(Service *s, const char *state, char **reterr);
/* POST /v2/clusters/{id}/logs?logs_type=controller of the tar.gz at path */
int service_upload_controller_logs(Service *s, const char *path, char **reterr);
