/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * An informer: list + watch of one resource into a local store, as
 * client-go's SharedIndexInformer (reflector + indexer + handlers), on the
 * client of lib/kube/kube.h.
 *
 * A thread lists the resource (paged, one page in memory at a time), then
 * watches from the list's resourceVersion with bookmarks; dropped watches
 * and server timeouts resume from the last resourceVersion seen
 * (kube_watch_loop), 410 Gone relists (objects missing from the new list are
 * deleted), other errors relist after a back-off (800 ms doubling to 30 s).
 *
 * The store is keyed by "namespace/name" ("name" for cluster-scoped
 * objects). To keep memory near the objects' own size it holds each object
 * as compact JSON text, after the transform hook (by default: drops
 * metadata.managedFields and the kubectl last-applied-configuration
 * annotation); lookups parse a fresh copy the caller owns. Custom indexes map
 * an object to index values (e.g. Agents by spec.clusterDeploymentName);
 * kube_informer_index_keys() returns the keys under a value.
 *
 * Handlers run on the informer's threads, one at a time (never two handler
 * calls concurrently), after the store was updated: on_add for a new object,
 * on_update for a changed one (resourceVersion differs) and for every object
 * at each periodic resync (old == new then), on_delete with the last state
 * the store had. Handlers typically enqueue kube_object_key() into a
 * KubeWorkQueue. They must not call kube_informer_stop().
 *
 * The store may be read from any thread (a read-write lock).
 *
 * Stopping: kube_informer_stop() ends the watch at its next event or
 * bookmark, at once after stop_request(), at the latest after the watch's
 * timeout_seconds.
 */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "timeutil.h"

typedef struct KubeClient KubeClient;
typedef struct KubeResource KubeResource;
typedef struct KubeInformer KubeInformer;
typedef struct json_object json_object;

/* obj is borrowed; old (on_update) too. */
typedef struct KubeInformerHandlers {
        void (*on_add)(json_object *obj, void *userdata);
        void (*on_update)(json_object *old, json_object *obj, void *userdata);
        void (*on_delete)(json_object *obj, void *userdata);
        void *userdata;
} KubeInformerHandlers;

/* Modifies obj in place before it is stored and handed to handlers;
 * returns 0 or a negative errno (the object is then skipped). */
typedef int (*KubeTransformFn)(json_object *obj, void *userdata);
/* The default transform: deletes metadata.managedFields and the
 * kubectl.kubernetes.io/last-applied-configuration annotation. */
int kube_transform_strip(json_object *obj, void *userdata);

/* The index values of obj: a NULL-terminated strv the caller frees, or
 * NULL / an empty strv when it has none. Returns 0 or a negative errno. */
typedef int (*KubeIndexFn)(json_object *obj, char ***ret_values, void *userdata);
/* A ready-made index function: the object's namespace joined by '/' with
 * the string at the dotted path given as userdata (e.g.
 * "spec.clusterDeploymentName.name"), none when the field is absent. With a
 * path starting with '/', the value alone. */
int kube_index_by_field(json_object *obj, char ***ret_values, void *userdata);

typedef struct KubeInformerOptions {
        const char *label_selector;
        const char *field_selector;
        unsigned page_size; /* list paging, 0: 500 (client-go's) */
        usec_t resync_period; /* 0: no periodic resync */
        unsigned watch_timeout; /* seconds; 0: random in [300, 600) as client-go */
        KubeTransformFn transform; /* NULL: kube_transform_strip */
        void *transform_userdata;
} KubeInformerOptions;

/* ns NULL: all namespaces (for namespaced resources). r is copied (its
 * strings must outlive the informer). o may be NULL. */
int kube_informer_new(KubeClient *c, const KubeResource *r, const char *ns, const KubeInformerOptions *o,
                      KubeInformer **ret);
/* Stops it first when running. Accepts NULL, returns NULL. */
KubeInformer *kube_informer_free(KubeInformer *inf);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeInformer *, kube_informer_free)

/* Before start: adds handlers (several sets may be added) and indexes. */
int kube_informer_add_handlers(KubeInformer *inf, const KubeInformerHandlers *h);
int kube_informer_add_index(KubeInformer *inf, const char *name, KubeIndexFn fn, void *userdata);

int kube_informer_start(KubeInformer *inf);
void kube_informer_stop(KubeInformer *inf);

/* True once the first list was stored and its handlers called. */
bool kube_informer_has_synced(KubeInformer *inf);
/* Waits for has_synced: 0, -ETIMEDOUT, -ECANCELED (stop_request()). */
int kube_informer_wait_synced(KubeInformer *inf, usec_t timeout);

/* The stored object: a fresh parse the caller puts. -ENOENT. */
int kube_informer_get(KubeInformer *inf, const char *key, json_object **ret);
/* The stored compact JSON text, a copy the caller frees. -ENOENT. */
int kube_informer_get_json(KubeInformer *inf, const char *key, char **ret);
size_t kube_informer_count(KubeInformer *inf);
/* Every key, sorted; a strv the caller frees. */
int kube_informer_keys(KubeInformer *inf, char ***ret);
/* The keys whose index `name` has value, sorted. -ENOENT: no such index. */
int kube_informer_index_keys(KubeInformer *inf, const char *name, const char *value, char ***ret);
/* Calls cb with a fresh parse of every object (borrowed for the call);
 * cb < 0 stops with that error. The store is not locked during cb. */
int kube_informer_foreach(KubeInformer *inf, int (*cb)(json_object *obj, void *userdata), void *userdata);

typedef struct KubeInformerStats {
        size_t objects;
        size_t json_bytes; /* sum of the stored JSON texts */
        size_t store_bytes; /* everything the store allocated (estimate) */
        unsigned long lists; /* full lists made */
        unsigned long events; /* watch events applied (bookmarks excluded) */
        char *resource_version; /* last seen; the caller frees */
} KubeInformerStats;
int kube_informer_stats(KubeInformer *inf, KubeInformerStats *ret);
