/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A controller: a work queue of keys, workers, and the reconcile loop
 * observe → decide → execute (hub/README.md). A controller is described
 * by a HubControllerType; adding one to the hub is adding its type to the
 * table in hub.c.
 *
 * Keys are "namespace/name" of the reconciled kind (the Agent controller's
 * keys exist before their Agent does: "namespace/<host id>").
 */

#include <stdbool.h>
#include <stddef.h>

#include "hub-names.h"
#include "hub-plan.h"
#include "timeutil.h"

typedef struct HubController HubController;
typedef struct HubCache HubCache;
typedef struct HubService HubService;
typedef struct HubMetrics HubMetrics;
typedef struct HubRefusals HubRefusals;
typedef struct KubeClient KubeClient;
typedef struct KubeEventRecorder KubeEventRecorder;
typedef struct json_object json_object;

/* Settings the controllers read (from cradle-hub's flags). */
typedef struct HubConfig {
        char *image_type; /* "minimal-iso" */
        bool converged_flow;
        usec_t image_cooldown; /* an InfraEnv image's cool-down before BMHs boot it (60 s) */
        usec_t approve_csrs_requeue; /* day-2: how often a joining node is looked at (1 min) */
        char *watch_filter; /* --watch-filter: the Cluster API kinds' label value, or NULL */
        /* --capi: the kubeconfig Secret's client certificate: validity asked
         * for, and how long before its end it is renewed (0: at half) */
        usec_t kubeconfig_cert_expiration;
        usec_t kubeconfig_cert_renew_before;
} HubConfig;

/* What observe and the executor may use. Every member is thread-safe. */
typedef struct HubContext {
        KubeClient *kube;
        HubCache *cache;
        HubService *service;
        HubMetrics *metrics;
        KubeEventRecorder *events; /* may be NULL (tests) */
        HubRefusals *refusals; /* writes refused for their size (hub-exec.h); may be NULL */
        const HubConfig *config;
        const char *identity; /* this replica: claims, logs */
        /* CLOCK_REALTIME since when this replica is the only one acting: set
         * once before the controllers start (the Lease held, or no leader
         * election), 0 before */
        usec_t active_since;
        /* every controller, for watches that enqueue another's keys */
        HubController **controllers;
        size_t n_controllers;
} HubContext;

typedef struct HubControllerType {
        const char *name; /* "infraenv": metrics, logs */
        HubKind kind; /* the reconciled kind (writes with self=true) */
        size_t observed_size; /* the kind's observed struct, HubObserved first */
        /* Registers the watches (hub_controller_watch()); before the cache
         * starts. May be NULL. */
        int (*setup)(HubController *c);
        /* Reads only. The struct is zeroed but for the base's now, active_since, ns and
         * name. Errors met are facts for decide; < 0 only when nothing can
         * be decided at all (then the key is requeued with back-off). */
        int (*observe)(HubContext *ctx, HubObserved *o);
        /* Frees what observe added (not the base). May be NULL. */
        void (*observed_done)(HubObserved *o);
        /* Pure. */
        int (*decide)(const HubObserved *o, HubPlan *plan);
} HubControllerType;

/* The outcome of one reconcile. */
typedef enum HubReconcileResult {
        HUB_RECONCILE_SUCCESS,
        HUB_RECONCILE_REQUEUE_AFTER,
        HUB_RECONCILE_REQUEUE, /* back-off: a write failed or decide asked */
        HUB_RECONCILE_ERROR, /* observe or decide failed, or too many rounds */
} HubReconcileResult;

typedef struct HubReconcileStats {
        HubReconcileResult result;
        usec_t requeue_after;
        unsigned rounds; /* decide calls */
        unsigned writes; /* service calls and Kubernetes writes executed */
        unsigned service_calls;
} HubReconcileStats;

int hub_controller_new(const HubControllerType *t, HubContext *ctx, unsigned workers, HubController **ret);
/* Stops the workers first. Accepts NULL, returns NULL. */
HubController *hub_controller_free(HubController *c);

const char *hub_controller_name(HubController *c);
HubContext *hub_controller_context(HubController *c);
/* The controller of that name in ctx, or NULL. */
HubController *hub_context_controller(HubContext *ctx, const char *name);

int hub_controller_enqueue(HubController *c, const char *key);
int hub_controller_enqueue_after(HubController *c, const char *key, usec_t delay);

/* Maps a changed object of a watched kind to the keys to reconcile (a
 * strv the caller frees; NULL or empty for none). */
typedef int (*HubMapFn)(HubContext *ctx, json_object *obj, char ***ret_keys);
/* Watches kind: each add, update (the old and the new object) and delete
 * enqueues map's keys; map NULL enqueues the object's own key. Before the
 * cache starts. */
int hub_controller_watch(HubController *c, HubKind kind, HubMapFn map);

/* Starts the workers. */
int hub_controller_start(HubController *c);
/* Shuts the queue down: new keys are ignored, workers finish the key in
 * hand and end. Waits for them. */
void hub_controller_stop(HubController *c);
size_t hub_controller_queue_len(HubController *c);

/* One reconcile of key on the calling thread, outside the queue (tests and
 * benchmarks). */
int hub_controller_reconcile(HubController *c, const char *key, HubReconcileStats *ret);
