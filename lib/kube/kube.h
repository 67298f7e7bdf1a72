/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A Kubernetes API client (the parts of client-go cradle needs).
 *
 * A KubeClient holds one configuration (lib/kube/kube-config.h), one HttpClient
 * (one connection pool) for ordinary requests, a client-side rate limiter
 * (token bucket, client-go's defaults: 5 QPS, burst 10), the credentials
 * (static or bearer token, token file re-read when it changes, exec plugin
 * output cached until its expirationTimestamp and refreshed once on a 401)
 * and a discovery cache. It is thread-safe: requests from several threads
 * are serialized on the connection pool, and every watch opens its own
 * connection so a watch never blocks other requests.
 *
 * Objects are json-c objects. A function that returns one gives the caller
 * a reference (json_object_put it).
 *
 * Errors: every verb returns 0 on a 2xx answer, else a negative errno:
 *
 *   server Status reason (HTTP code)      errno
 *   BadRequest (400)                      -EBADR
 *   Unauthorized (401)                    -EKEYREJECTED
 *   Forbidden (403)                       -EACCES
 *   NotFound (404)                        -ENOENT
 *   MethodNotAllowed (405), 406, 415      -EOPNOTSUPP
 *   AlreadyExists (409)                   -EEXIST
 *   Conflict (409)                        -EBUSY   (stale resourceVersion,
 *                                                   failed precondition)
 *   Gone / Expired (410)                  -ESTALE  (relist)
 *   RequestEntityTooLarge (413)           -EMSGSIZE (the object is too large:
 *                                                   the body over 3 MiB)
 *   Invalid (422)                         -EINVAL
 *   TooManyRequests (429)                 -EAGAIN
 *   InternalError (500), other 5xx        -EIO
 *   5xx saying etcd refused the size      -EMSGSIZE (over etcd's 1.5 MiB or
 *                                                   its client's 2 MiB; no
 *                                                   retry of the same write
 *                                                   can succeed)
 *   ServiceUnavailable (503)              -EAGAIN
 *   Timeout (504)                         -ETIMEDOUT
 *   any other status                      -EPROTO
 *
 * and the transport errors of lib/http.h (-ECONNREFUSED, -ETIMEDOUT,
 * -ECONNRESET, -EPROTO, -EPERM, -ECANCELED...) when no answer arrived.
 * A KubeStatus, when the caller passes one, receives the code, reason,
 * message and details of the server's Status body (or the transport error
 * text, code 0). Messages never contain a token.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube-config.h"
#include "macro.h"
#include "timeutil.h"

typedef struct KubeClient KubeClient;
typedef struct json_object json_object;

/* ---- errors ---- */

typedef struct KubeStatus {
        int error; /* the negative errno returned */
        long code; /* HTTP status, 0 when no answer arrived */
        char *reason; /* Status.reason ("NotFound"...), or NULL */
        char *message; /* Status.message or transport error text */
        json_object *details; /* Status.details (causes...), or NULL */
        unsigned retry_after; /* Retry-After seconds (429, 503), 0 when absent */
} KubeStatus;

void kube_status_done(KubeStatus *s);
#define _cleanup_kube_status_ _cleanup_(kube_status_done)

/* errno for an HTTP code and Status reason (reason may be NULL). */
int kube_errno_from_status(long code, const char *reason);
/* The same, knowing the Status message too (may be NULL): -EMSGSIZE for
 * etcd's size refusals, which come as 500 without a reason. What every
 * verb returns and puts in KubeStatus.error. */
int kube_errno_from_answer(long code, const char *reason, const char *message);
/* The reason kube uses for code when a body has none ("NotFound"...). */
const char *kube_reason_from_code(long code);

/* ---- addressing ---- */

typedef struct KubeResource {
        const char *group; /* "" for the core group */
        const char *version; /* "v1" */
        const char *resource; /* plural: "pods" */
        const char *kind; /* "Pod" */
        bool namespaced;
} KubeResource;

#define KUBE_RESOURCE(g, v, r, k, ns) \
        ((KubeResource){ .group = (g), .version = (v), .resource = (r), .kind = (k), .namespaced = (ns) })

extern const KubeResource kube_resource_namespaces;
extern const KubeResource kube_resource_pods;
extern const KubeResource kube_resource_nodes;
extern const KubeResource kube_resource_secrets;
extern const KubeResource kube_resource_configmaps;
extern const KubeResource kube_resource_events;
extern const KubeResource kube_resource_services;
extern const KubeResource kube_resource_serviceaccounts;
extern const KubeResource kube_resource_leases;
extern const KubeResource kube_resource_csrs;
extern const KubeResource kube_resource_crds;

/* "/api/v1/namespaces/NS/pods/NAME/log" (ns ignored for cluster-scoped
 * resources, NULL ns on a namespaced resource = all namespaces, NULL name =
 * the collection, NULL subresource = none). Segments are percent-escaped. */
char *kube_resource_path(const KubeResource *r, const char *ns, const char *name, const char *subresource);
/* "group/version" or "v1" for the core group. */
char *kube_resource_api_version(const KubeResource *r);

/* Maps what a person types to kubectl get (kind "Agent", plural "agents",
 * singular, short name, optionally qualified "agents.agent-install.openshift.io"
 * or "agents.v1beta1.agent-install.openshift.io"; case-insensitive for kinds)
 * to a resource, through discovery (cached in the client; refreshed once when
 * the name is not found). The strings of ret live as long as the client.
 * -ENOENT when nothing matches. */
int kube_resolve(KubeClient *c, const char *name, KubeResource *ret, KubeStatus *err);
/* The same for an exact kind, with an optional apiVersion ("group/version"
 * or NULL: the group's preferred version, core first). */
int kube_resolve_kind(KubeClient *c, const char *api_version, const char *kind, KubeResource *ret,
                      KubeStatus *err);
/* Forgets the discovery cache (after CRDs were created). Resources resolved
 * before stay valid. */
void kube_discovery_invalidate(KubeClient *c);

/* ---- client ---- */

typedef struct KubeClientOptions {
        double qps; /* 0: 5; < 0: no client-side rate limit */
        unsigned burst; /* 0: 10 */
        usec_t timeout; /* per request, default 60 s; watches use timeout_seconds */
        usec_t connect_timeout; /* default 30 s */
        const char *user_agent; /* default "cradle/<version>" */
        const char *field_manager; /* fieldManager for writes, default none */
        unsigned max_retries_429; /* retries of 429/503 with Retry-After, default 0 */
} KubeClientOptions;

/* cfg is copied. o may be NULL. */
int kube_client_new(const KubeConfig *cfg, const KubeClientOptions *o, KubeClient **ret, char **reterr);
int kube_client_new_from_kubeconfig(const char *path, const char *context, KubeClient **ret, char **reterr);
/* sa_dir NULL: KUBE_SERVICE_ACCOUNT_DIR. */
int kube_client_new_in_cluster(const char *sa_dir, KubeClient **ret, char **reterr);
/* kube_config_load_default() + kube_client_new(). */
int kube_client_new_default(const char *path, const char *context, KubeClient **ret, char **reterr);
KubeClient *kube_client_free(KubeClient *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeClient *, kube_client_free)

const KubeConfig *kube_client_config(const KubeClient *c);
/* The context's namespace ("default" when unset; the service account's
 * in-cluster). */
const char *kube_client_namespace(const KubeClient *c);

/* A raw request to path (absolute API path, query included). body may be
 * NULL; content_type NULL = application/json. A JSON answer goes to ret
 * (may be NULL). Status errors as above. */
int kube_request(KubeClient *c, const char *method, const char *path, const char *content_type,
                 json_object *body, json_object **ret, KubeStatus *err);

/* ---- verbs ---- */

/* ns: the namespace for namespaced resources (NULL: the client's namespace
 * for single objects, all namespaces for lists and watches); ignored for
 * cluster-scoped ones. For create/update, NULL ns takes metadata.namespace
 * of the object, then the client's namespace. */

int kube_get(KubeClient *c, const KubeResource *r, const char *ns, const char *name, json_object **ret,
             KubeStatus *err);

typedef struct KubeListOptions {
        const char *label_selector;
        const char *field_selector;
        unsigned limit; /* page size, 0: no paging (for kube_list_each: 500) */
        const char *continue_token;
        const char *resource_version;
        const char *resource_version_match; /* "Exact", "NotOlderThan" */
} KubeListOptions;

/* One page: the List object (items, metadata.resourceVersion,
 * metadata.continue). o may be NULL. */
int kube_list(KubeClient *c, const KubeResource *r, const char *ns, const KubeListOptions *o,
              json_object **ret, KubeStatus *err);

/* Walks every page, calling cb for each item (a borrowed reference; take one
 * with json_object_get to keep it). Only one page is held at a time. cb
 * returning < 0 stops with that error. ret_resource_version (may be NULL)
 * receives the list's resourceVersion (of the first page: the snapshot the
 * pages belong to). An expired continue token gives -ESTALE. */
typedef int (*KubeItemCallback)(json_object *item, void *userdata);
int kube_list_each(KubeClient *c, const KubeResource *r, const char *ns, const KubeListOptions *o,
                   KubeItemCallback cb, void *userdata, char **ret_resource_version, KubeStatus *err);

/* Every page merged into one List object (items in order, metadata of the
 * first page without continue). */
int kube_list_all(KubeClient *c, const KubeResource *r, const char *ns, const KubeListOptions *o,
                  json_object **ret, KubeStatus *err);

/* Creates obj (its apiVersion and kind are filled from r when missing). */
int kube_create(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj, json_object **ret,
                KubeStatus *err);
/* PUT of obj (metadata.name required; metadata.resourceVersion, when set,
 * makes the update conditional: -EBUSY Conflict when stale). */
int kube_update(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj, json_object **ret,
                KubeStatus *err);
/* PUT to the status subresource. */
int kube_update_status(KubeClient *c, const KubeResource *r, const char *ns, json_object *obj,
                       json_object **ret, KubeStatus *err);

typedef enum KubePatchType {
        KUBE_PATCH_MERGE, /* application/merge-patch+json (RFC 7386) */
        KUBE_PATCH_JSON, /* application/json-patch+json (RFC 6902) */
        KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds) */
} KubePatchType;

/* subresource NULL or "status". */
int kube_patch(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
               const char *subresource, KubePatchType type, json_object *patch, json_object **ret,
               KubeStatus *err);
int kube_patch_merge(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
                     json_object *patch, json_object **ret, KubeStatus *err);
int kube_patch_json(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
                    json_object *patch, json_object **ret, KubeStatus *err);

typedef struct KubeDeleteOptions {
        const char *propagation_policy; /* "Background", "Foreground", "Orphan" or NULL */
        const char *precondition_uid;
        const char *precondition_resource_version;
        int64_t grace_period_seconds; /* < 0: unset (use KUBE_GRACE_UNSET) */
        bool dry_run;
} KubeDeleteOptions;
#define KUBE_GRACE_UNSET INT64_C(-1)

/* o may be NULL (NB: then grace period unset). ret (may be NULL) receives
 * what the server answered: the object (still there when it has finalizers)
 * or a Status. */
int kube_delete(KubeClient *c, const KubeResource *r, const char *ns, const char *name,
                const KubeDeleteOptions *o, json_object **ret, KubeStatus *err);

typedef struct KubePodLogOptions {
        const char *container;
        int64_t tail_lines; /* <= 0: all */
        int64_t limit_bytes; /* <= 0: no limit */
        int64_t since_seconds; /* <= 0: from the start */
        bool previous;
} KubePodLogOptions;

/* The log text (NUL-terminated). o may be NULL. */
int kube_pod_logs(KubeClient *c, const char *ns, const char *name, const KubePodLogOptions *o, char **ret,
                  KubeStatus *err);

/* ---- watch ---- */

typedef enum KubeWatchEventType {
        KUBE_WATCH_ADDED,
        KUBE_WATCH_MODIFIED,
        KUBE_WATCH_DELETED,
        KUBE_WATCH_BOOKMARK,
        _KUBE_WATCH_EVENT_MAX,
} KubeWatchEventType;

const char *kube_watch_event_type_to_string(KubeWatchEventType t);

/* object is borrowed (json_object_get to keep it). Return 0 to go on,
 * KUBE_WATCH_STOP to end the watch (kube_watch then returns KUBE_WATCH_STOP),
 * or < 0 to end it with that error. BOOKMARK events are delivered only when
 * allow_bookmarks was asked. */
#define KUBE_WATCH_STOP 1
typedef int (*KubeWatchCallback)(KubeWatchEventType type, json_object *object, void *userdata);

typedef struct KubeWatchOptions {
        const char *label_selector;
        const char *field_selector;
        unsigned timeout_seconds; /* server-side end of the watch; 0: server default */
        bool allow_bookmarks;
} KubeWatchOptions;

/* Watches r from *resource_version (in/out; NULL or "" = "now", the server
 * then first sends an ADDED for every existing object). The stream is decoded
 * event by event, never buffered whole. *resource_version is updated after
 * each event (bookmarks included) has been handled, so the caller can resume
 * exactly after the last event it saw, even after an error.
 *
 * Returns:
 *   0                  the stream ended (server timeout, server closed it
 *                      cleanly): watch again from *resource_version
 *   KUBE_WATCH_STOP    the callback asked to stop
 *   -ESTALE            an ERROR event with code 410 (or a 410 answer): the
 *                      resourceVersion is too old, list again and watch from
 *                      the list's resourceVersion
 *   -ECONNRESET etc.   the connection failed or was cut mid-stream: watch
 *                      again from *resource_version after a back-off
 *   -EBADMSG           a malformed event (stream ended)
 *   other < 0          a Status error for the watch request itself, an
 *                      ERROR event with another code, or the callback's
 */
int kube_watch(KubeClient *c, const KubeResource *r, const char *ns, const KubeWatchOptions *o,
               char **resource_version, KubeWatchCallback cb, void *userdata, KubeStatus *err);

/* kube_watch again and again: a clean end re-watches at once, a transport or
 * 5xx/429 error after a back-off (800 ms doubling to 30 s, reset once events
 * flow). Returns KUBE_WATCH_STOP, -ESTALE (relist), -ECANCELED (stop_request())
 * or another error that a re-watch cannot cure (401, 403, 404, callback's). */
int kube_watch_loop(KubeClient *c, const KubeResource *r, const char *ns, const KubeWatchOptions *o,
                    char **resource_version, KubeWatchCallback cb, void *userdata, KubeStatus *err);

/* ---- the watch-stream decoder (exposed for the fuzzer and tests) ---- */

typedef struct KubeWatchDecoder KubeWatchDecoder;

/* Calls cb for each complete event; an ERROR event ends decoding with its
 * errno (-ESTALE for 410) and fills err. */
int kube_watch_decoder_new(KubeWatchCallback cb, void *userdata, KubeWatchDecoder **ret);
KubeWatchDecoder *kube_watch_decoder_free(KubeWatchDecoder *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeWatchDecoder *, kube_watch_decoder_free)
/* Feeds bytes. Returns 0, KUBE_WATCH_STOP, or < 0 (-EBADMSG malformed,
 * -ESTALE/-E... an ERROR event, the callback's error); after a non-zero
 * return the decoder accepts nothing more. */
int kube_watch_decoder_feed(KubeWatchDecoder *d, const char *data, size_t n, KubeStatus *err);
/* At the end of the stream: a last event without its newline is decoded
 * (an ERROR event then gives its errno without details); -EBADMSG when what
 * is pending is not a whole event. Events are framed by newlines, one JSON
 * document per line as kube-apiserver sends them, at most 16 MiB each. */
int kube_watch_decoder_finish(KubeWatchDecoder *d);
/* The resourceVersion of the last event delivered, or NULL. */
const char *kube_watch_decoder_resource_version(const KubeWatchDecoder *d);

/* ---- helpers ---- */

/* metadata.name, metadata.namespace, metadata.resourceVersion, or NULL. */
const char *kube_object_name(json_object *o);
const char *kube_object_namespace(json_object *o);
const char *kube_object_resource_version(json_object *o);
/* "ns/name" or "name" (cluster-scoped), the informer key. */
char *kube_object_key(json_object *o);
