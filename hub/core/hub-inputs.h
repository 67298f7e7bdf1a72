/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Inputs several controllers read the same way: the Secrets and
 * ConfigMaps a spec names (the label-filtered cache first, then a direct
 * read, as upstream's getSecret with its APIReader), their watch and
 * backup labels, the pull secret's content with the notes' error texts,
 * and the digest the hub records instead of a secret.
 */

#include <stdbool.h>

#include "hub-controller.h"

/* An object a spec names: the object, or why not (-ENOENT: not found). */
typedef struct HubRef {
        json_object *object;
        int error;
        char *message; /* kube's text ("secrets \"x\" not found") */
} HubRef;

void hub_ref_done(HubRef *r);

/* Reads a Secret or ConfigMap: the cache (labelled ones), else a direct
 * GET. Errors are facts in ret; < 0 only for memory. */
int hub_observe_ref(HubContext *ctx, HubKind kind, const char *ns, const char *name, HubRef *ret);
/* A direct GET of any resource, not cached (what the hub reads once and
 * watches not); errors are facts in ret. */
int hub_get_ref(HubContext *ctx, const KubeResource *res, const char *ns, const char *name, HubRef *ret);

/* The .dockerconfigjson text of a pull secret named name, or the error text
 * the real controllers give (notes §1 step 5): "failed to find secret
 * NAME: ...", "secret NAME did not contain key .dockerconfigjson",
 * "invalid pull secret data in secret NAME: ...". *ret_user: the error is
 * the user's (no requeue). Exactly one of *ret and *ret_error is set. */
int hub_pull_secret(const HubRef *secret, const char *name, char **ret, char **ret_error, bool *ret_user);

/* Plans the watch and backup labels on obj (a Secret or ConfigMap) when it
 * lacks them (upstream's ensureSecretIsLabelled). */
int hub_plan_label_watched(HubPlan *plan, HubKind kind, json_object *obj);

/* "sha256:<hex>" of s: what the hub records of a secret it sent. */
int hub_digest(const char *s, char ret[static 80]);

/* A value of data (base64, as a Secret's) decoded; NULL when absent or not
 * base64. */
char *hub_secret_value(json_object *secret, const char *key);
/* Sets data[key] = base64(value) for each pair of kv (NULL-terminated). */
int hub_secret_set_data(json_object *secret, const char *const *kv);

/* The messages of the validations (a host's or a cluster's
 * validations_info) that are not successes, joined with ","; disabled ones
 * skipped when asked (an Agent's, not a cluster's). */
char *hub_failing_validations(const char *validations_info, bool skip_disabled);

/* The ids among candidates (a service list, each with "id") that another
 * object than self_key ("ns/name") of kind links through index: what the
 * claim search must not adopt (hub-claim.h). */
int hub_observe_claimed(HubContext *ctx, HubKind kind, const char *index, json_object *candidates,
                        const char *self_key, char ***ret);
