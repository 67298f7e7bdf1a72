/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The controller's calls to assisted-service (notes/controller.md §4): the
 * v2 operations of lib/assisted with the controller's retry rule on top
 * (ASSISTED_RETRY_CONTROLLER: 404/423/425 up to 10 retries, 408/429/5xx and
 * no answer up to 15, 2-10 s jittered back-off; its loops try again on their
 * next round anyway) and a fresh X-Request-Id per call, as
 * utils.GenerateRequestContext(). Each returns what lib/assisted returns
 * (-EREMOTEIO with the status in *ret_status for an unexpected answer, a
 * transport errno, -ECANCELED when a stop was requested during a back-off)
 * and the service's words in *reterr; nothing here logs above debug but the
 * retries.
 */

#include <stdbool.h>

#include "assisted/assisted.h"

typedef struct json_object json_object;

typedef struct ControllerService {
        AssistedClient *client;
        AssistedRetryPolicy retry;
        const char *cluster_id;
        /* the service may go away for good (the agent-based installer's
         * runs on the rendezvous host): once a call got no answer through
         * all its tries, each later call is tried once (vanished) until one
         * is answered, so that a round does not spend minutes on retries
         * while the others wait */
        bool may_vanish;
        bool vanished;
} ControllerService;

/* GET /v2/clusters/{id}, with its hosts (and their inventories) or
 * without (exclude-hosts=true). ret_status may be NULL. */
int controller_service_get_cluster(ControllerService *s, bool with_hosts, long *ret_status,
                                   json_object **ret, char **reterr);
/* PUT /v2/infra-envs/{ie}/hosts/{id}/progress {"current_stage": stage} */
int controller_service_host_stage(ControllerService *s, const char *infra_env_id, const char *host_id,
                                  const char *stage, char **reterr);

/* PUT /v2/clusters/{id}/progress {"finalizing_stage": stage} */
int controller_service_finalizing_stage(ControllerService *s, const char *stage, char **reterr);
/* GET /v2/clusters/{id}/monitored-operators (the list) */
int controller_service_operators(ControllerService *s, json_object **ret, char **reterr);
/* PUT /v2/clusters/{id}/monitored-operators with report (finalize.h) */
int controller_service_report_operator(ControllerService *s, json_object *report, char **reterr);
/* POST /v2/clusters/{id}/uploads/ingress-cert: the PEM as a JSON string */
int controller_service_ingress_ca(ControllerService *s, const char *pem, char **reterr);
/* POST /v2/clusters/{id}/actions/complete-installation with body (finalize.h) */
int controller_service_complete(ControllerService *s, json_object *body, char **reterr);

/* POST /v2/events with event (reboots.h) */
int controller_service_event(ControllerService *s, json_object *event, char **reterr);

/* PUT /v2/clusters/{id}/logs-progress {"logs_state": state} */
int controller_service_logs_progress(ControllerService *s, const char *state, char **reterr);
/* POST /v2/clusters/{id}/logs?logs_type=controller, the file at path as
 * the multipart field upfile named controller_logs.tar.gz */
int controller_service_upload_logs(ControllerService *s, const char *path, char **reterr);

/* GET /v2/clusters/{id}/downloads/files?file_name= (kind "files": e.g.
 * custom_manifests.json) or downloads/credentials?file_name= (kind
 * "credentials": kubeconfig-noingress, a secret never logged): the bytes. */
int controller_service_download(ControllerService *s, const char *kind, const char *file_name, char **ret,
                                size_t *ret_len, char **reterr);
