/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The one I/O layer: executes a HubPlan's writes, in order (hub/README.md,
 * "The reconciler interface"). Nothing else in the hub writes to the
 * service or to the cluster.
 *
 * - a service call goes through hub_service_call(); a feedback call's
 *   result is appended to HubObserved.results, the plan goes on and decide
 *   runs again afterwards (redecide); a failed call that is not a feedback
 *   call stops the plan (failed);
 * - a Kubernetes write to the reconciled object (self) gets the object's
 *   current resourceVersion when the patch replaces a list, and its answer
 *   replaces HubObserved.object; a Conflict stops the plan (conflict), a
 *   NotFound ends it quietly (gone), another error stops it (failed);
 * - an event is best effort;
 * - a spoke write (HUB_WRITE_SPOKE) goes to the installed cluster through
 *   a client made from its admin kubeconfig; a failure stops the plan
 *   (failed).
 */

#include <stdbool.h>

#include "hub-controller.h"

typedef struct HubExecResult {
        unsigned writes; /* executed: service calls other than GETs, creates, patches, deletes */
        unsigned service_calls;
        bool redecide;
        bool conflict;
        bool failed;
        bool gone;
        char *error; /* what failed, for the log (no secret) */
        char *self_resource_version; /* after a write to the reconciled object: its new resourceVersion */
} HubExecResult;

void hub_exec_result_done(HubExecResult *r);

/* t: the controller (its name for metrics, its kind for self writes). */
int hub_exec(HubContext *ctx, const HubControllerType *t, const HubPlan *plan, HubObserved *obs,
             HubExecResult *ret);

/* A client of a spoke cluster from its admin kubeconfig (text); reterr
 * names what failed without the kubeconfig's content. */
int hub_spoke_client(const char *kubeconfig, KubeClient **ret, char **reterr);
/* The spoke's resources the hub reads and writes. */
const KubeResource *hub_spoke_resource(HubSpokeResource r);

/* The resource of a kind for writes (as the CRD serves it). */
const KubeResource *hub_kind_resource(HubKind k);
