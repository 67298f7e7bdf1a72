/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The reconciler interface (hub/README.md, "The reconciler interface").
 *
 * A reconcile is observe → decide → execute. `decide` is a pure function:
 * it reads a HubObserved (plus the facts its kind adds) and fills a
 * HubPlan: ordered writes — service calls, creates, merge patches of an
 * object or of its status, deletes, events — and a requeue. hub-exec.h
 * executes the plan; nothing else writes.
 *
 * Feedback: a service call with `feedback` set stores its result in
 * HubObserved.results under the call's tag, whatever it is, and the plan
 * goes on; once the plan has run, decide runs again with the results. A
 * decide puts a call whose result later writes depend on last, and never
 * asks again for a tag that has a result. Reads the service answers only
 * once a write was made (an infra-env's iPXE script after registering it)
 * are feedback calls too.
 *
 * Ownership: a plan owns everything in it (strings are copied, JSON bodies
 * are taken: the add functions take a reference the caller gives up).
 * json_object inputs of HubObserved are borrowed by decide.
 */

#include <stdbool.h>
#include <stddef.h>

#include "hub-names.h"
#include "macro.h"
#include "timeutil.h"

typedef struct json_object json_object;

/* ---- results of feedback calls ---- */

typedef struct HubCallResult {
        char *tag;
        int error; /* 0: the expected status came back; < 0 otherwise */
        long status; /* HTTP status, 0 when no answer arrived */
        json_object *body; /* the answer (success or error document), or NULL */
        char *message; /* error text ("[400] ..."), scrubbed of secrets; NULL on success */
} HubCallResult;

typedef struct HubCallResults {
        HubCallResult *items;
        size_t n;
} HubCallResults;

void hub_call_results_done(HubCallResults *r);
/* The result for tag, or NULL. */
const HubCallResult *hub_call_results_find(const HubCallResults *r, const char *tag);
/* Takes body and copies tag/message. */
int hub_call_results_add(HubCallResults *r, const char *tag, int error, long status, json_object *body,
                         const char *message);

/* A 4xx answer is the user's error (upstream's IsUserError); a 5xx, no
 * answer, or an answer that is not what was expected is the backend's. */
bool hub_call_is_user_error(const HubCallResult *r);

/* ---- what a reconcile observed ---- */

typedef struct HubObserved {
        usec_t now; /* CLOCK_REALTIME, read once by observe */
        /* CLOCK_REALTIME since when this replica is the only one acting
         * (HubContext.active_since; the claim protocol, hub-claim.h) */
        usec_t active_since;
        char *ns; /* the key's namespace and name */
        char *name;
        /* the reconciled object, NULL when it does not exist; replaced by
         * the server's answer after each write to it */
        json_object *object;
        HubCallResults results;
} HubObserved;

void hub_observed_done(HubObserved *o);

/* ---- the plan ---- */

/* the spoke cluster's resources the hub writes */
typedef enum HubSpokeResource {
        HUB_SPOKE_CSR,
        HUB_SPOKE_NODE,
        HUB_SPOKE_CLUSTER_ROLE_BINDING,
        _HUB_SPOKE_RESOURCE_MAX,
} HubSpokeResource;

typedef enum HubWriteKind {
        HUB_WRITE_SERVICE,
        HUB_WRITE_CREATE,
        HUB_WRITE_PATCH,
        HUB_WRITE_PATCH_STATUS,
        HUB_WRITE_DELETE,
        HUB_WRITE_EVENT,
        HUB_WRITE_SPOKE,
        _HUB_WRITE_KIND_MAX,
        _HUB_WRITE_KIND_INVALID = -22,
} HubWriteKind;

const char *hub_write_kind_to_string(HubWriteKind k);

typedef struct HubWrite {
        HubWriteKind kind;

        /* HUB_WRITE_SERVICE */
        char *tag; /* names the call in results ("register-infraenv") */
        char *operation; /* the swagger operationId, for metrics (NULL: tag) */
        char *method; /* "POST" */
        char *path; /* under /api/assisted-install: "/v2/infra-envs" */
        long expect; /* the success status (201) */
        bool feedback; /* decide again with the result */
        bool text; /* a GET whose answer is text (a file): the result's body is a JSON string */

        /* Kubernetes writes and events: the object */
        HubKind target; /* its kind */
        char *ns;
        char *name;
        /* true when the target is the reconciled object: the executor then
         * adds the current resourceVersion when needed and replaces
         * HubObserved.object with the answer */
        bool self;
        /* PATCH/PATCH_STATUS of another object: a resourceVersion
         * precondition (optimistic lock), or NULL */
        char *resource_version;
        /* DELETE: a uid precondition, or NULL */
        char *uid;

        /* the body: service request, object to create, merge patch */
        json_object *body;

        /* HUB_WRITE_EVENT */
        const char *event_type; /* KUBE_EVENT_NORMAL / KUBE_EVENT_WARNING */
        char *reason;
        char *message;
        json_object *involved; /* the object the event is about (a reference) */

        /* HUB_WRITE_SPOKE: a write to an installed cluster (day-2 CSRs,
         * node labels, node removal) through its admin kubeconfig (a
         * secret: never logged); name/ns/body as above, verb "approve"
         * (PUT of the CSR's approval subresource), "patch" (merge),
         * "delete" or "mint" (hub_plan_spoke_mint(): a feedback call
         * under tag) */
        char *spoke_kubeconfig;
        HubSpokeResource spoke_resource;
        char *spoke_verb;
} HubWrite;

typedef struct HubPlan {
        HubWrite *writes;
        size_t n;
        /* 0: none; else requeue after this delay (the notes' RequeueAfter) */
        usec_t requeue_after;
        /* requeue with the work queue's per-key back-off (an error) */
        bool requeue;
        /* why, for the log (what failed), or NULL */
        char *reason;
} HubPlan;

void hub_plan_done(HubPlan *p);
#define _cleanup_hub_plan_ _cleanup_(hub_plan_done)
void hub_plan_reset(HubPlan *p);

/* body is taken (may be NULL). */
int hub_plan_service(HubPlan *p, const char *tag, const char *method, const char *path, json_object *body,
                     long expect, bool feedback);
/* A call of an operation of lib/assisted/assisted-user.h (its method, path
 * and success status); tag NULL: the operationId. query may be NULL. */
int hub_plan_op(HubPlan *p, const char *tag, int op, char *const *params, const char *query,
                json_object *body, bool feedback);
/* A text download (feedback). */
int hub_plan_download(HubPlan *p, const char *tag, const char *path);
/* obj is taken. */
int hub_plan_create(HubPlan *p, HubKind target, const char *ns, json_object *obj);
/* patch is taken. self: see HubWrite. resource_version may be NULL. */
int hub_plan_patch(HubPlan *p, HubKind target, const char *ns, const char *name, bool self, bool status,
                   const char *resource_version, json_object *patch);
int hub_plan_delete(HubPlan *p, HubKind target, const char *ns, const char *name, const char *uid,
                    bool self);
/* involved is borrowed (a reference is taken). */
int hub_plan_event(HubPlan *p, json_object *involved, const char *type, const char *reason, const char *fmt,
                   ...) _printf_(5, 6);
/* A write to a spoke cluster (see HubWrite). body is taken. */
int hub_plan_spoke(HubPlan *p, const char *kubeconfig, HubSpokeResource resource, const char *verb,
                   const char *name, json_object *body);
/* A client certificate minted on a spoke through its CSR API with its
 * admin kubeconfig (lib/kube/kube-csr.h: the key is made by the executor
 * and never leaves it but in the result). body (taken):
 * {"commonName": user, "organizations": [groups]?, "csr": the
 * CertificateSigningRequest without spec.request, "approval": {"reason",
 * "message"}, "kubeconfig": {"cluster", "user", "context"} (the names in
 * the kubeconfig made of it), "binding": a ClusterRoleBinding created
 * first (one that exists is left as it is)?}. A feedback call: the result under tag is
 * {"csr": the CSR's name, "kubeconfig": the kubeconfig text with the
 * certificate and key (a secret), "notBefore", "notAfter": the
 * certificate's validity, Unix seconds}, or the error. */
int hub_plan_spoke_mint(HubPlan *p, const char *tag, const char *kubeconfig, json_object *body);
/* Appends every write of src to dst (src is emptied; its requeue and
 * reason are not moved). */
int hub_plan_move(HubPlan *dst, HubPlan *src);
/* Sets the requeue delay, keeping the shortest when called twice. */
void hub_plan_requeue_after(HubPlan *p, usec_t delay);
/* An error requeue (back-off) with why. */
int hub_plan_fail(HubPlan *p, const char *fmt, ...) _printf_(2, 3);

/* The observed object against the desired one: adds a merge patch of
 * everything but status (when not empty) and one of status (when not
 * empty). Either may be skipped: with_status false ignores status.
 * observed may be NULL (then nothing is added: use create). */
int hub_plan_patch_object(HubPlan *p, HubKind target, json_object *observed, json_object *desired, bool self,
                          bool with_status);
/* The same with an optimistic lock (the observed resourceVersion) on every
 * patch, as controller-runtime's MergeFromWithOptimisticLock: for objects
 * another controller writes too. */
int hub_plan_patch_object_locked(HubPlan *p, HubKind target, json_object *observed, json_object *desired,
                                 bool with_status);

/* A status patch ({"status": {...}}) cut in two: its conditions alone
 * (*ret_conditions, NULL when it sets none) and everything else
 * (*ret_rest, NULL when nothing else). The executor writes the
 * conditions alone when the API server refused the whole patch for its
 * size: they are bounded (hub-text.h), the rest may not be. */
int hub_status_patch_split(json_object *patch, json_object **ret_conditions, json_object **ret_rest);

/* ---- JSON helpers for decide ---- */

/* RFC 7386 merge patch that turns a into b: changed and new keys with b's
 * value, removed keys null, equal values omitted; arrays and scalars are
 * replaced whole. *ret is NULL when a and b are equal, and when b is NULL
 * (nothing desired). */
int hub_json_merge_diff(json_object *a, json_object *b, json_object **ret);
/* True when the patch replaces an array somewhere (a list: finalizers,
 * conditions, ownerReferences): it then needs a resourceVersion. */
bool hub_json_patch_has_array(json_object *patch);
/* Deep equality of JSON values (objects ignore key order; numbers compare
 * by value: 1 == 1.0). NULL equals JSON null. */
bool hub_json_equal(json_object *a, json_object *b);
/* The length of an array, 0 for anything else (json-c asserts on NULL). */
size_t hub_json_array_length(json_object *a);
/* A deep copy (a new reference). */
json_object *hub_json_copy(json_object *o);
/* The object at the dotted path of o, created (as {}) along the way. */
json_object *hub_json_ensure_object(json_object *o, const char *dotted);
/* Sets (s non-NULL) or deletes (NULL) a string at the dotted path. */
int hub_json_set_string(json_object *o, const char *dotted, const char *s);

/* Labels and annotations: NULL when absent. */
const char *hub_object_label(json_object *obj, const char *key);
const char *hub_object_annotation(json_object *obj, const char *key);
int hub_object_set_label(json_object *obj, const char *key, const char *value);
int hub_object_set_annotation(json_object *obj, const char *key, const char *value);
bool hub_object_has_finalizer(json_object *obj, const char *finalizer);
/* Adds/removes in place; 1 when changed, 0 when already so. */
int hub_object_add_finalizer(json_object *obj, const char *finalizer);
int hub_object_remove_finalizer(json_object *obj, const char *finalizer);
bool hub_object_deleting(json_object *obj);
const char *hub_object_uid(json_object *obj);

/* A metav1.LabelSelector (matchLabels, matchExpressions with In, NotIn,
 * Exists, DoesNotExist) against an object's labels. An empty or absent
 * selector matches nothing (as the InfraEnv controller treats it). -EINVAL
 * for an operator it does not know. */
int hub_selector_matches(json_object *selector, json_object *obj);
/* True when the selector selects nothing by construction (absent, or
 * without labels and expressions). */
bool hub_selector_empty(json_object *selector);

/* ---- conditions ---- */

/* conditionsv1.SetStatusConditionNoHeartbeat on obj.status.conditions: the
 * condition of that type is added or updated; lastTransitionTime is set to
 * now when added or when its status changes, else kept; reason and message
 * are replaced. */
int hub_conditions_set(json_object *obj, const char *type, const char *status, const char *reason,
                       const char *message, usec_t now);
/* meta.SetStatusCondition (metav1.Condition): the same, plus
 * observedGeneration = metadata.generation. */
int hub_meta_conditions_set(json_object *obj, const char *type, const char *status, const char *reason,
                            const char *message, usec_t now);
/* hive's setClusterCondition (ClusterInstallCondition): lastTransitionTime
 * and lastProbeTime move whenever status, reason or message change. */
int hub_hive_conditions_set(json_object *obj, const char *type, const char *status, const char *reason,
                            const char *message, usec_t now);
/* Either setter with a formatted message. */
int hub_conditions_setf(json_object *obj, bool hive, const char *type, const char *status,
                        const char *reason, usec_t now, const char *fmt, ...) _printf_(7, 8);
/* hub_meta_conditions_set() with a formatted message. */
int hub_meta_conditions_setf(json_object *obj, const char *type, const char *status, const char *reason,
                             usec_t now, const char *fmt, ...) _printf_(6, 7);
/* The condition of that type in obj.status.conditions, or NULL. */
json_object *hub_conditions_find(json_object *obj, const char *type);

/* RFC 3339 UTC, seconds ("2026-01-02T03:04:05Z"), of a CLOCK_REALTIME usec. */
void hub_format_time(usec_t t, char ret[static 32]);
/* Parses the RFC 3339 times kube and the service write (fractional
 * seconds kept to the microsecond); -EINVAL. */
int hub_parse_time(const char *s, usec_t *ret);
