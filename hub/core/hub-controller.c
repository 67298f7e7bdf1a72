/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "hub-cache.h"
#include "hub-controller.h"
#include "hub-exec.h"
#include "hub-metrics.h"
#include "kube/kube-workqueue.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"

#define MAX_ROUNDS 8
#define MAX_WORKERS 32
#define MAX_WATCHES 8

typedef struct Watch {
        HubController *controller;
        HubKind kind;
        HubMapFn map;
} Watch;

struct HubController {
        const HubControllerType *type;
        HubContext *ctx;
        KubeWorkQueue *queue;
        unsigned n_workers;
        pthread_t workers[MAX_WORKERS];
        unsigned started;
        Watch watches[MAX_WATCHES];
        size_t n_watches;
        char *label; /* controller="name" */

        /* what this controller wrote last to each object (its
         * resourceVersion) until the cache has caught up: a reconcile
         * never decides from an object older than its own last write */
        pthread_mutex_t expect_lock;
        struct lh_table *expectations; /* key -> Expectation */
};

typedef struct Expectation {
        char *resource_version;
        usec_t at; /* CLOCK_MONOTONIC */
} Expectation;

#define EXPECTATION_TTL (5 * USEC_PER_SEC)
#define STALE_RETRY (200 * USEC_PER_MSEC)

static void expectation_free(struct lh_entry *e)
{
        Expectation *x = (Expectation *)lh_entry_v(e);

        free(lh_entry_k(e));
        if (x) {
                free(x->resource_version);
                free(x);
        }
}

static void expect(HubController *c, const char *key, const char *rv)
{
        Expectation *x = calloc(1, sizeof(*x));
        char *k = strdup(key);

        if (!x || !k || !(x->resource_version = strdup(rv))) {
                free(x);
                free(k);
                return; /* only an optimisation */
        }
        x->at = now_usec(CLOCK_MONOTONIC);
        pthread_mutex_lock(&c->expect_lock);
        (void)lh_table_delete(c->expectations, key);
        if (lh_table_insert(c->expectations, k, x) < 0) {
                free(x->resource_version);
                free(x);
                free(k);
        }
        pthread_mutex_unlock(&c->expect_lock);
}

/* True when the observed object is older than what this controller wrote:
 * resourceVersions are compared as numbers when both are (etcd revisions,
 * as kube-apiserver gives them), else the expectation holds until the
 * cache shows that version or 5 s passed. */
static bool stale(HubController *c, const char *key, json_object *obj)
{
        const char *rv = obj ? kube_object_resource_version(obj) : NULL;
        uint64_t have, want;
        bool old = false;
        void *v = NULL;

        pthread_mutex_lock(&c->expect_lock);
        if (lh_table_lookup_ex(c->expectations, key, &v)) {
                Expectation *x = v;

                if (rv && safe_atou64(rv, &have) >= 0 && safe_atou64(x->resource_version, &want) >= 0)
                        old = have < want;
                else
                        old = rv && !streq(rv, x->resource_version) &&
                              now_usec(CLOCK_MONOTONIC) < x->at + EXPECTATION_TTL;
                if (!old)
                        (void)lh_table_delete(c->expectations, key);
        }
        pthread_mutex_unlock(&c->expect_lock);
        return old;
}

/* back-off of a failing key: 250 ms doubling to 5 min (hub/README.md) */
static const KubeRateLimit rate_limit = {
        .base_delay = 250 * USEC_PER_MSEC,
        .max_delay = 300 * USEC_PER_SEC,
        .qps = 10.0,
        .burst = 100,
};

static void describe_metrics(HubMetrics *m)
{
        if (!m)
                return;
        (void)hub_metrics_describe(m, "controller_runtime_reconcile_total", HUB_METRIC_COUNTER,
                                   "Total number of reconciliations per controller");
        (void)hub_metrics_describe(m, "controller_runtime_reconcile_errors_total", HUB_METRIC_COUNTER,
                                   "Total number of reconciliation errors per controller");
        (void)hub_metrics_describe(m, "controller_runtime_reconcile_time_seconds", HUB_METRIC_HISTOGRAM,
                                   "Length of time per reconciliation per controller");
        (void)hub_metrics_describe(m, "workqueue_depth", HUB_METRIC_GAUGE, "Current depth of workqueue");
        (void)hub_metrics_describe(m, "workqueue_adds_total", HUB_METRIC_COUNTER,
                                   "Total number of adds handled by workqueue");
        (void)hub_metrics_describe(
                m, "cradle_hub_writes_total", HUB_METRIC_COUNTER,
                "Writes made by the hub, by controller, verb and kind (service calls included)");
}

static void collect_depth(HubMetrics *m, void *userdata)
{
        HubController *c = userdata;
        _cleanup_free_ char *l = hub_metrics_label("name", c->type->name);

        if (l)
                hub_metrics_set(m, "workqueue_depth", l,
                                (double)(kube_workqueue_len(c->queue) + kube_workqueue_delayed(c->queue)));
}

int hub_controller_new(const HubControllerType *t, HubContext *ctx, unsigned workers, HubController **ret)
{
        _cleanup_free_ HubController *c = NULL;
        int r;

        if (!t || !t->observe || !t->decide || t->observed_size < sizeof(HubObserved))
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->type = t;
        c->ctx = ctx;
        c->n_workers = MIN(MAX(workers, 1u), (unsigned)MAX_WORKERS);
        c->label = hub_metrics_label("controller", t->name);
        if (!c->label)
                return -ENOMEM;
        c->expectations = lh_kchar_table_new(64, expectation_free);
        if (!c->expectations) {
                free(c->label);
                return -ENOMEM;
        }
        pthread_mutex_init(&c->expect_lock, NULL);
        r = kube_workqueue_new(&rate_limit, NULL, NULL, &c->queue);
        if (r < 0) {
                lh_table_free(c->expectations);
                free(c->label);
                return r;
        }
        describe_metrics(ctx->metrics);
        if (ctx->metrics)
                (void)hub_metrics_add_collector(ctx->metrics, collect_depth, c);
        if (t->setup) {
                r = t->setup(c);
                if (r < 0) {
                        kube_workqueue_free(c->queue);
                        free(c->label);
                        return r;
                }
        }
        *ret = TAKE_PTR(c);
        return 0;
}

HubController *hub_controller_free(HubController *c)
{
        if (!c)
                return NULL;
        hub_controller_stop(c);
        kube_workqueue_free(c->queue);
        lh_table_free(c->expectations);
        pthread_mutex_destroy(&c->expect_lock);
        free(c->label);
        free(c);
        return NULL;
}

const char *hub_controller_name(HubController *c)
{
        return c->type->name;
}

HubContext *hub_controller_context(HubController *c)
{
        return c->ctx;
}

HubController *hub_context_controller(HubContext *ctx, const char *name)
{
        for (size_t i = 0; i < ctx->n_controllers; i++)
                if (streq(ctx->controllers[i]->type->name, name))
                        return ctx->controllers[i];
        return NULL;
}

static void count_add(HubController *c)
{
        _cleanup_free_ char *l = NULL;

        if (!c->ctx->metrics)
                return;
        l = hub_metrics_label("name", c->type->name);
        if (l)
                hub_metrics_add(c->ctx->metrics, "workqueue_adds_total", l, 1);
}

int hub_controller_enqueue(HubController *c, const char *key)
{
        if (!c || isempty(key))
                return 0;
        count_add(c);
        return kube_workqueue_add(c->queue, key);
}

int hub_controller_enqueue_after(HubController *c, const char *key, usec_t delay)
{
        if (!c || isempty(key))
                return 0;
        count_add(c);
        return kube_workqueue_add_after(c->queue, key, delay);
}

size_t hub_controller_queue_len(HubController *c)
{
        return kube_workqueue_len(c->queue) + kube_workqueue_delayed(c->queue);
}

/* ---- watches ---- */

static void watch_enqueue(Watch *w, json_object *obj)
{
        _cleanup_strv_free_ char **keys = NULL;

        if (!obj)
                return;
        if (!w->map) {
                _cleanup_free_ char *k = kube_object_key(obj);

                (void)hub_controller_enqueue(w->controller, k);
                return;
        }
        if (w->map(w->controller->ctx, obj, &keys) < 0)
                return;
        STRV_FOREACH (k, keys)
                (void)hub_controller_enqueue(w->controller, *k);
}

static void on_add(json_object *obj, void *userdata)
{
        watch_enqueue(userdata, obj);
}

static void on_update(json_object *old, json_object *obj, void *userdata)
{
        Watch *w = userdata;

        /* the old object's keys too: a label or reference that changed
         * must reach what it pointed to before */
        if (old && old != obj &&
            !streq_ptr(kube_object_resource_version(old), kube_object_resource_version(obj)))
                watch_enqueue(w, old);
        watch_enqueue(w, obj);
}

static void on_delete(json_object *obj, void *userdata)
{
        watch_enqueue(userdata, obj);
}

int hub_controller_watch(HubController *c, HubKind kind, HubMapFn map)
{
        Watch *w;

        if (c->n_watches >= MAX_WATCHES)
                return -ENOSPC;
        w = &c->watches[c->n_watches++];
        *w = (Watch){ .controller = c, .kind = kind, .map = map };
        return hub_cache_add_handlers(c->ctx->cache, kind,
                                      &(KubeInformerHandlers){
                                              .on_add = on_add,
                                              .on_update = on_update,
                                              .on_delete = on_delete,
                                              .userdata = w,
                                      });
}

/* ---- reconcile ---- */

static const char *const result_names[] = {
        [HUB_RECONCILE_SUCCESS] = "success",
        [HUB_RECONCILE_REQUEUE_AFTER] = "requeue_after",
        [HUB_RECONCILE_REQUEUE] = "requeue",
        [HUB_RECONCILE_ERROR] = "error",
};

static void count_reconcile(HubController *c, HubReconcileResult result, usec_t started)
{
        _cleanup_free_ char *l = NULL;

        if (!c->ctx->metrics)
                return;
        l = strdup_printf("%s,result=\"%s\"", c->label, result_names[result]);
        if (l)
                hub_metrics_add(c->ctx->metrics, "controller_runtime_reconcile_total", l, 1);
        if (result == HUB_RECONCILE_ERROR || result == HUB_RECONCILE_REQUEUE)
                hub_metrics_add(c->ctx->metrics, "controller_runtime_reconcile_errors_total", c->label, 1);
        hub_metrics_observe(c->ctx->metrics, "controller_runtime_reconcile_time_seconds", c->label,
                            (double)(now_usec(CLOCK_MONOTONIC) - started) / (double)USEC_PER_SEC);
}

int hub_controller_reconcile(HubController *c, const char *key, HubReconcileStats *ret)
{
        const HubControllerType *t = c->type;
        _cleanup_free_ HubObserved *obs = calloc(1, t->observed_size);
        HubReconcileStats stats = { .result = HUB_RECONCILE_SUCCESS };
        usec_t started = now_usec(CLOCK_MONOTONIC);
        LOG_CONTEXT_PUSH("CONTROLLER", t->name);
        LOG_CONTEXT_PUSH("OBJECT", key);
        int r;

        if (!obs)
                return -ENOMEM;
        r = hub_key_split(key, &obs->ns, &obs->name);
        if (r < 0)
                return r;
        obs->now = now_usec(CLOCK_REALTIME);
        obs->active_since = c->ctx->active_since;
        r = t->observe(c->ctx, obs);
        if (r < 0) {
                log_warning_errno(r, "%s %s: cannot observe: %m", t->name, key);
                stats.result = HUB_RECONCILE_ERROR;
                goto done;
        }
        if (stale(c, key, obs->object)) {
                /* our own last write is not in the cache yet: deciding
                 * now would write it again (or conflict) */
                stats.result = HUB_RECONCILE_REQUEUE_AFTER;
                stats.requeue_after = STALE_RETRY;
                goto done;
        }
        for (;;) {
                _cleanup_hub_plan_ HubPlan plan = {};
                HubExecResult ex = {};

                if (stats.rounds >= MAX_ROUNDS) {
                        log_error("%s %s: no decision after %u rounds, giving up", t->name, key,
                                  stats.rounds);
                        stats.result = HUB_RECONCILE_ERROR;
                        break;
                }
                stats.rounds++;
                r = t->decide(obs, &plan);
                if (r < 0) {
                        log_error_errno(r, "%s %s: cannot decide: %m", t->name, key);
                        stats.result = HUB_RECONCILE_ERROR;
                        break;
                }
                r = hub_exec(c->ctx, t, &plan, obs, &ex);
                if (ex.self_resource_version)
                        expect(c, key, ex.self_resource_version);
                stats.writes += ex.writes;
                stats.service_calls += ex.service_calls;
                if (r < 0) {
                        log_error_errno(r, "%s %s: cannot execute: %m", t->name, key);
                        stats.result = HUB_RECONCILE_ERROR;
                        hub_exec_result_done(&ex);
                        break;
                }
                if (ex.redecide && !ex.conflict && !ex.failed && !ex.gone && !ex.refused) {
                        hub_exec_result_done(&ex);
                        continue;
                }
                if (ex.refused) {
                        /* logged where it happened; a requeue would only
                         * send it again: the plan's own delay alone */
                        if (plan.requeue_after > 0) {
                                stats.result = HUB_RECONCILE_REQUEUE_AFTER;
                                stats.requeue_after = plan.requeue_after;
                        }
                } else if (ex.conflict || ex.failed) {
                        if (ex.conflict)
                                log_debug("%s %s: %s, again", t->name, key, strna(ex.error));
                        else
                                log_warning("%s %s: %s", t->name, key, strna(ex.error));
                        stats.result = HUB_RECONCILE_REQUEUE;
                } else if (ex.gone)
                        stats.result = HUB_RECONCILE_SUCCESS;
                else if (plan.requeue) {
                        if (plan.reason)
                                log_info("%s %s: %s", t->name, key, plan.reason);
                        stats.result = HUB_RECONCILE_REQUEUE;
                } else if (plan.requeue_after > 0) {
                        stats.result = HUB_RECONCILE_REQUEUE_AFTER;
                        stats.requeue_after = plan.requeue_after;
                }
                hub_exec_result_done(&ex);
                break;
        }
done:
        if (t->observed_done)
                t->observed_done(obs);
        hub_observed_done(obs);
        count_reconcile(c, stats.result, started);
        if (ret)
                *ret = stats;
        return 0;
}

static void *worker(void *p)
{
        HubController *c = p;

        for (;;) {
                _cleanup_free_ char *key = NULL;
                HubReconcileStats st = {};
                int r;

                r = kube_workqueue_get(c->queue, &key);
                if (r < 0)
                        break;
                r = hub_controller_reconcile(c, key, &st);
                if (r < 0)
                        st.result = HUB_RECONCILE_ERROR;
                switch (st.result) {
                case HUB_RECONCILE_SUCCESS:
                        kube_workqueue_forget(c->queue, key);
                        break;
                case HUB_RECONCILE_REQUEUE_AFTER:
                        kube_workqueue_forget(c->queue, key);
                        (void)kube_workqueue_add_after(c->queue, key, st.requeue_after);
                        break;
                case HUB_RECONCILE_REQUEUE:
                case HUB_RECONCILE_ERROR:
                        (void)kube_workqueue_add_rate_limited(c->queue, key, NULL);
                        break;
                }
                kube_workqueue_done(c->queue, key);
        }
        return NULL;
}

int hub_controller_start(HubController *c)
{
        if (c->started)
                return -EALREADY;
        for (unsigned i = 0; i < c->n_workers; i++) {
                int r = -pthread_create(&c->workers[i], NULL, worker, c);

                if (r < 0) {
                        hub_controller_stop(c);
                        return r;
                }
                c->started++;
        }
        return 0;
}

void hub_controller_stop(HubController *c)
{
        if (!c)
                return;
        kube_workqueue_shutdown(c->queue);
        for (unsigned i = 0; i < c->started; i++)
                (void)pthread_join(c->workers[i], NULL);
        c->started = 0;
}
