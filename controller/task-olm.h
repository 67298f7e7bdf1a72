/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "controller/olm.h"
#include "timeutil.h"

/* waitForOLMOperators (notes/controller.md §5.3) after its first stage
 * report, one step per round: the monitored OLM operators; every one
 * initialized (its Subscription's current CSV exists; failed marketplace
 * Jobs and failed InstallPlans of its Subscription deleted first);
 * "Applying olm manifests" (custom_manifests.json applied with oc once all
 * are initialized); "Waiting for olm operators csv" (each CSV's phase
 * reported as it changes until the service has them available); each wait
 * ends early when the service says its stage timed out, and then what the
 * service still has pending is reported failed, "Waiting for operator
 * timed out". Failures here never fail the installation. */
typedef enum OlmStep {
        OLM_FETCH,
        OLM_INITIALIZED,
        OLM_STAGE_APPLY,
        OLM_APPLY,
        OLM_STAGE_CSV,
        OLM_CSV_START,
        OLM_CSV,
        OLM_MARK_FAILED,
        OLM_FINISHED,
} OlmStep;

typedef struct Controller Controller;

typedef struct OlmWait {
        OlmStep step;
        OlmOperator *ops; /* the monitored OLM operators */
        size_t n;
        OlmOperator *waiting; /* the CSV wait's, not yet available in the service */
        size_t n_waiting;
        bool cut_short; /* a wait ended by the service's timeout */
        unsigned mark_attempts;
} OlmWait;

void olm_wait_done(OlmWait *w);
/* One step; the delay to the next, 0 to go on at once. Finished when
 * w->step is OLM_FINISHED. */
usec_t olm_wait_step(Controller *ctl, OlmWait *w);

/* applyOperatorManifests: every operator initialized (else nothing is
 * applied), then each manifest of an initialized operator applied with
 * oc --kubeconfig=<kubeconfig> apply -f (its file in dir, removed after);
 * true when all went well. Shared by the finalizing stages and the
 * agent-based installer's olm-operator-manifests (task-abi.c). */
bool olm_manifests_apply(Controller *ctl, const OlmOperator *ops, size_t n, const CustomManifest *m,
                         size_t nm, const char *dir, const char *kubeconfig);
