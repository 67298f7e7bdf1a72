/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What controller/run.c lends the tasks that live in files of their own
 * (controller/task-*.c): the new cluster (its API server, or the dry run's
 * cluster), the service with the controller's retry rule, the
 * configuration, the hosts and the finalizing stage reports. The
 * Controller itself stays run.c's.
 */

#include <stdbool.h>

#include "assisted/assisted-models.h"
#include "kube/kube.h"

typedef struct json_object json_object;
typedef struct ClusterHosts ClusterHosts;
typedef struct Controller Controller;
typedef struct ControllerConfig ControllerConfig;
typedef struct ControllerService ControllerService;

const ControllerConfig *controller_config(Controller *ctl);
ControllerService *controller_service(Controller *ctl);
/* The API server's client; NULL in dry run, where nothing is written. */
KubeClient *controller_kube(Controller *ctl);

/* A read of the new cluster: the API server, or the dry run's cluster
 * (a 404 for what it does not play). */
int controller_cluster_get(Controller *ctl, const KubeResource *res, const char *ns, const char *name,
                           json_object **ret, KubeStatus *st);
int controller_cluster_list(Controller *ctl, const KubeResource *res, const char *ns,
                            const KubeListOptions *o, json_object **ret, KubeStatus *st);

/* PUT progress {"finalizing_stage"}: true once the service took it (or has
 * no finalizing stages at all); logged. */
bool controller_stage_report(Controller *ctl, FinalizingStage stage);
