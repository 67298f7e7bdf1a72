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
 * - a write the API server refuses for its size is logged once and
 *   remembered (HubRefusals): the same content is never sent again while
 *   the object is unchanged; of a status patch, the conditions alone are
 *   written instead (they are bounded, hub-text.h); the plan stops
 *   (refused), without the back-off requeue of a failure;
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
        /* the API server refused a write for its size (hub_write_refused_for_size()),
         * now or before with the same content: the plan stopped, and that
         * content is not sent again (a requeue would only repeat it) */
        bool refused;
        char *error; /* what failed, for the log (no secret) */
        char *self_resource_version; /* after a write to the reconciled object: its new resourceVersion */
} HubExecResult;

void hub_exec_result_done(HubExecResult *r);

/* The writes the API server refused for their size, by object and
 * content (thread-safe, bounded: the oldest are forgotten first). */
typedef struct HubRefusals HubRefusals;
int hub_refusals_new(HubRefusals **ret);
/* Accepts NULL, returns NULL. */
HubRefusals *hub_refusals_free(HubRefusals *r);

/* The API server refused the write for its size: 413, a 500 of etcd
 * ("etcdserver: request is too large", gRPC's "ResourceExhausted ...
 * larger than max"), a 422 for annotations over their 256 KiB ("Too
 * long: must have at most"). The one place that says it. */
bool hub_write_refused_for_size(int error, long code, const char *message);

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
