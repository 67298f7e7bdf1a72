/* SPDX-License-Identifier: Apache-2.0 */

#include <errno.h>
#include <json-c/json.h>
#include <json-c/linkhash.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "kube-informer.h"
#include "kube.h"
#include "log.h"
#include "macro.h"
#include "strutil.h"

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define MAX_HANDLERS 8
#define MAX_INDEXES 8
#define BACKOFF_INITIAL (800 * USEC_PER_MSEC)
#define BACKOFF_MAX (30 * USEC_PER_SEC)

typedef struct Entry {
        char *key;
        char *json;
        size_t json_len;
        char *rv;
        unsigned long epoch; /* the list that last saw it */
        char **values[MAX_INDEXES]; /* index values */
} Entry;

/* One index value: the keys under it. */
typedef struct Bucket {
        char *value;
        struct lh_table *keys; /* key -> Entry */
} Bucket;

typedef struct Index {
        char *name;
        KubeIndexFn fn;
        void *userdata;
        struct lh_table *buckets; /* value -> Bucket */
} Index;

struct KubeInformer {
        KubeClient *client;
        KubeResource resource;
        char *ns;
        char *label_selector, *field_selector;
        KubeInformerOptions opts;

        KubeInformerHandlers handlers[MAX_HANDLERS];
        size_t n_handlers;
        bool want_old; /* some handler has on_update */
        Index indexes[MAX_INDEXES];
        size_t n_indexes;

        pthread_rwlock_t store_lock;
        struct lh_table *store; /* key -> Entry */
        size_t json_bytes;
        char *rv;
        unsigned long epoch;
        unsigned long lists, events;

        pthread_mutex_t handler_lock; /* one handler call at a time */

        pthread_mutex_t lock; /* started, stopping, synced */
        pthread_cond_t cond;
        bool started, stopping, synced;
        pthread_t thread, resync_thread;
        bool have_resync_thread;
};

int kube_transform_strip(json_object *obj, void *userdata)
{
        json_object *md, *ann;

        (void)userdata;
        if (!json_object_object_get_ex(obj, "metadata", &md) || !json_object_is_type(md, json_type_object))
                return 0;
        json_object_object_del(md, "managedFields");
        if (json_object_object_get_ex(md, "annotations", &ann) &&
            json_object_is_type(ann, json_type_object)) {
                json_object_object_del(ann, LAST_APPLIED);
                if (json_object_object_length(ann) == 0)
                        json_object_object_del(md, "annotations");
        }
        return 0;
}

int kube_index_by_field(json_object *obj, char ***ret_values, void *userdata)
{
        const char *path = userdata, *ns, *v;
        _cleanup_strv_free_ char **parts = NULL;
        _cleanup_free_ char *value = NULL;
        char **l = NULL;
        json_object *o = obj;
        bool bare = path[0] == '/';
        int r;

        r = strv_split(bare ? path + 1 : path, ".", &parts);
        if (r < 0)
                return r;
        for (char **p = parts; *p; p++)
                if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, *p, &o)) {
                        *ret_values = NULL;
                        return 0;
                }
        if (!json_object_is_type(o, json_type_string)) {
                *ret_values = NULL;
                return 0;
        }
        v = json_object_get_string(o);
        ns = kube_object_namespace(obj);
        if (bare || !ns)
                value = strdup(v);
        else
                value = strdup_printf("%s/%s", ns, v);
        if (!value)
                return -ENOMEM;
        r = strv_push(&l, TAKE_PTR(value));
        if (r < 0)
                return r;
        *ret_values = l;
        return 0;
}

static void entry_free(Entry *e)
{
        if (!e)
                return;
        free(e->key);
        free(e->json);
        free(e->rv);
        for (size_t i = 0; i < MAX_INDEXES; i++)
                strv_free(e->values[i]);
        free(e);
}

static void bucket_free(Bucket *b)
{
        if (!b)
                return;
        lh_table_free(b->keys);
        free(b->value);
        free(b);
}

/* With the store write-locked: removes e's key from index i. */
static void index_remove(Index *ix, Entry *e, char **values)
{
        for (char **v = values; v && *v; v++) {
                void *p = NULL;
                Bucket *b;

                if (!lh_table_lookup_ex(ix->buckets, *v, &p))
                        continue;
                b = p;
                (void)lh_table_delete(b->keys, e->key);
                if (lh_table_length(b->keys) == 0) {
                        (void)lh_table_delete(ix->buckets, b->value);
                        bucket_free(b);
                }
        }
}

static int index_add(Index *ix, Entry *e, char **values)
{
        for (char **v = values; v && *v; v++) {
                void *p = NULL;
                Bucket *b;

                if (lh_table_lookup_ex(ix->buckets, *v, &p))
                        b = p;
                else {
                        b = calloc(1, sizeof(Bucket));
                        if (!b)
                                return -ENOMEM;
                        b->value = strdup(*v);
                        b->keys = lh_kchar_table_new(4, NULL);
                        if (!b->value || !b->keys || lh_table_insert(ix->buckets, b->value, b) < 0) {
                                bucket_free(b);
                                return -ENOMEM;
                        }
                }
                if (!lh_table_lookup_entry(b->keys, e->key) && lh_table_insert(b->keys, e->key, e) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Removes e from the store and its indexes; the caller frees e. */
static void store_remove(KubeInformer *inf, Entry *e)
{
        for (size_t i = 0; i < inf->n_indexes; i++)
                index_remove(&inf->indexes[i], e, e->values[i]);
        inf->json_bytes -= e->json_len;
        (void)lh_table_delete(inf->store, e->key);
}

static Entry *store_lookup(KubeInformer *inf, const char *key)
{
        void *p = NULL;

        if (!lh_table_lookup_ex(inf->store, key, &p))
                return NULL;
        return p;
}

static const char *json_compact(json_object *o)
{
        return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static json_object *parse_stored(const char *json)
{
        return json ? json_tokener_parse(json) : NULL;
}

static void call_add(KubeInformer *inf, json_object *obj)
{
        for (size_t i = 0; i < inf->n_handlers; i++)
                if (inf->handlers[i].on_add)
                        inf->handlers[i].on_add(obj, inf->handlers[i].userdata);
}

static void call_update(KubeInformer *inf, json_object *old, json_object *obj)
{
        for (size_t i = 0; i < inf->n_handlers; i++)
                if (inf->handlers[i].on_update)
                        inf->handlers[i].on_update(old, obj, inf->handlers[i].userdata);
}

static void call_delete(KubeInformer *inf, json_object *obj)
{
        for (size_t i = 0; i < inf->n_handlers; i++)
                if (inf->handlers[i].on_delete)
                        inf->handlers[i].on_delete(obj, inf->handlers[i].userdata);
}

/* Stores obj (already transformed) and calls the handlers. */
static int store_upsert(KubeInformer *inf, json_object *obj)
{
        _cleanup_free_ char *key = NULL, *json = NULL, *rv = NULL, *old_json = NULL;
        char **values[MAX_INDEXES] = {};
        const char *s;
        Entry *e;
        bool existed = false, unchanged = false;
        int r = 0;

        key = kube_object_key(obj);
        s = kube_object_resource_version(obj);
        if (!key || !s)
                return -EBADMSG;
        rv = strdup(s);
        if (!rv)
                return -ENOMEM;

        pthread_rwlock_wrlock(&inf->store_lock);
        e = store_lookup(inf, key);
        if (e && streq(e->rv, rv)) {
                /* a relist that found it as it was */
                e->epoch = inf->epoch;
                unchanged = true;
                goto unlock;
        }
        s = json_compact(obj);
        json = s ? strdup(s) : NULL;
        if (!json) {
                r = -ENOMEM;
                goto unlock;
        }
        for (size_t i = 0; i < inf->n_indexes; i++) {
                r = inf->indexes[i].fn(obj, &values[i], inf->indexes[i].userdata);
                if (r < 0)
                        goto unlock;
        }
        if (e) {
                existed = true;
                for (size_t i = 0; i < inf->n_indexes; i++)
                        index_remove(&inf->indexes[i], e, e->values[i]);
                inf->json_bytes -= e->json_len;
                old_json = e->json;
                free(e->rv);
                for (size_t i = 0; i < inf->n_indexes; i++)
                        strv_free(e->values[i]);
        } else {
                e = calloc(1, sizeof(Entry));
                if (!e) {
                        r = -ENOMEM;
                        goto unlock;
                }
                e->key = TAKE_PTR(key);
                if (lh_table_insert(inf->store, e->key, e) < 0) {
                        entry_free(e);
                        r = -ENOMEM;
                        goto unlock;
                }
        }
        e->json_len = strlen(json);
        e->json = TAKE_PTR(json);
        e->rv = TAKE_PTR(rv);
        e->epoch = inf->epoch;
        inf->json_bytes += e->json_len;
        for (size_t i = 0; i < inf->n_indexes; i++) {
                e->values[i] = TAKE_PTR(values[i]);
                if (index_add(&inf->indexes[i], e, e->values[i]) < 0)
                        r = -ENOMEM;
        }
unlock:
        pthread_rwlock_unlock(&inf->store_lock);
        for (size_t i = 0; i < MAX_INDEXES; i++)
                strv_free(values[i]);
        if (r < 0 || unchanged)
                return r;

        pthread_mutex_lock(&inf->handler_lock);
        if (existed) {
                _cleanup_(json_object_putp) json_object *old = inf->want_old ? parse_stored(old_json) : NULL;

                call_update(inf, old, obj);
        } else
                call_add(inf, obj);
        pthread_mutex_unlock(&inf->handler_lock);
        return r;
}

static int store_delete(KubeInformer *inf, json_object *obj)
{
        _cleanup_free_ char *key = kube_object_key(obj);
        Entry *e;

        if (!key)
                return -EBADMSG;
        pthread_rwlock_wrlock(&inf->store_lock);
        e = store_lookup(inf, key);
        if (e)
                store_remove(inf, e);
        pthread_rwlock_unlock(&inf->store_lock);
        if (!e)
                return 0;
        entry_free(e);

        pthread_mutex_lock(&inf->handler_lock);
        call_delete(inf, obj);
        pthread_mutex_unlock(&inf->handler_lock);
        return 0;
}

/* After a complete list: deletes what it did not see. */
static void store_sweep(KubeInformer *inf)
{
        for (;;) {
                struct lh_entry *le;
                Entry *gone = NULL;

                pthread_rwlock_wrlock(&inf->store_lock);
                lh_foreach(inf->store, le)
                {
                        Entry *e = (Entry *)lh_entry_v(le);

                        if (e->epoch != inf->epoch) {
                                gone = e;
                                break;
                        }
                }
                if (gone)
                        store_remove(inf, gone);
                pthread_rwlock_unlock(&inf->store_lock);
                if (!gone)
                        return;

                pthread_mutex_lock(&inf->handler_lock);
                {
                        _cleanup_(json_object_putp) json_object *obj = parse_stored(gone->json);

                        if (obj)
                                call_delete(inf, obj);
                }
                pthread_mutex_unlock(&inf->handler_lock);
                entry_free(gone);
        }
}

static bool stopping(KubeInformer *inf)
{
        bool b;

        if (stop_requested())
                return true;
        pthread_mutex_lock(&inf->lock);
        b = inf->stopping;
        pthread_mutex_unlock(&inf->lock);
        return b;
}

static int apply_object(KubeInformer *inf, json_object *obj, bool deleted)
{
        KubeTransformFn t = inf->opts.transform ?: kube_transform_strip;
        int r;

        r = t(obj, inf->opts.transform_userdata);
        if (r < 0)
                return r;
        return deleted ? store_delete(inf, obj) : store_upsert(inf, obj);
}

static int list_item(json_object *item, void *userdata)
{
        KubeInformer *inf = userdata;
        _cleanup_(json_object_putp) json_object *obj = json_object_get(item);
        int r;

        /* list items of built-in kinds carry no apiVersion/kind; watch
         * events do: store both alike */
        if (!json_object_object_get_ex(obj, "kind", NULL)) {
                _cleanup_free_ char *av = kube_resource_api_version(&inf->resource);

                if (!av)
                        return -ENOMEM;
                json_object_object_add(obj, "apiVersion", json_object_new_string(av));
                json_object_object_add(obj, "kind", json_object_new_string(inf->resource.kind));
        }
        r = apply_object(inf, obj, false);
        if (r == -EBADMSG) {
                log_debug("informer %s: skipping an item without name or resourceVersion",
                          inf->resource.resource);
                return 0;
        }
        return r;
}

static int do_list(KubeInformer *inf, bool paged)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *rv = NULL;
        KubeListOptions lo = {
                .label_selector = inf->label_selector,
                .field_selector = inf->field_selector,
                .limit = paged ? (inf->opts.page_size ?: 500) : 0,
        };
        int r;

        pthread_rwlock_wrlock(&inf->store_lock);
        inf->epoch++;
        pthread_rwlock_unlock(&inf->store_lock);

        r = kube_list_each(inf->client, &inf->resource, inf->ns, &lo, list_item, inf, &rv, &st);
        if (r < 0) {
                log_debug("informer %s: list failed: %s", inf->resource.resource, strna(st.message));
                return r;
        }
        store_sweep(inf);
        pthread_rwlock_wrlock(&inf->store_lock);
        free(inf->rv);
        inf->rv = TAKE_PTR(rv);
        inf->lists++;
        pthread_rwlock_unlock(&inf->store_lock);
        return 0;
}

static int watch_event(KubeWatchEventType type, json_object *object, void *userdata)
{
        KubeInformer *inf = userdata;
        _cleanup_(json_object_putp) json_object *obj = NULL;
        int r = 0;

        if (type != KUBE_WATCH_BOOKMARK) {
                obj = json_object_get(object);
                r = apply_object(inf, obj, type == KUBE_WATCH_DELETED);
                if (r == -EBADMSG)
                        r = 0; /* an object without name: nothing to store */
                pthread_rwlock_wrlock(&inf->store_lock);
                inf->events++;
                pthread_rwlock_unlock(&inf->store_lock);
        }
        if (r < 0)
                return r;
        return stopping(inf) ? KUBE_WATCH_STOP : 0;
}

static unsigned watch_timeout(KubeInformer *inf)
{
        if (inf->opts.watch_timeout > 0)
                return inf->opts.watch_timeout;
        /* client-go's reflector: minWatchTimeout 5 min, times [1, 2) */
        return 300 + (unsigned)random_below(300);
}

static void set_synced(KubeInformer *inf)
{
        pthread_mutex_lock(&inf->lock);
        inf->synced = true;
        pthread_cond_broadcast(&inf->cond);
        pthread_mutex_unlock(&inf->lock);
}

static void *informer_thread(void *p)
{
        KubeInformer *inf = p;
        usec_t backoff = BACKOFF_INITIAL;
        bool paged = true;
        int r;

        while (!stopping(inf)) {
                r = do_list(inf, paged);
                if (r == -ESTALE && paged) {
                        /* the continue token expired: one unpaged list */
                        paged = false;
                        continue;
                }
                paged = true;
                if (r < 0) {
                        if (!cond_sleep_unless_stopped(&inf->cond, &inf->lock, &inf->stopping, backoff))
                                break;
                        backoff = MIN(backoff * 2, BACKOFF_MAX);
                        continue;
                }
                set_synced(inf);
                backoff = BACKOFF_INITIAL;

                for (;;) {
                        _cleanup_kube_status_ KubeStatus st = {};
                        _cleanup_free_ char *rv = NULL;
                        KubeWatchOptions wo = {
                                .label_selector = inf->label_selector,
                                .field_selector = inf->field_selector,
                                .timeout_seconds = watch_timeout(inf),
                                .allow_bookmarks = true,
                        };

                        pthread_rwlock_rdlock(&inf->store_lock);
                        rv = inf->rv ? strdup(inf->rv) : NULL;
                        pthread_rwlock_unlock(&inf->store_lock);
                        if (!rv) {
                                r = -ENOMEM;
                                break;
                        }
                        r = kube_watch_loop(inf->client, &inf->resource, inf->ns, &wo, &rv, watch_event, inf,
                                            &st);
                        pthread_rwlock_wrlock(&inf->store_lock);
                        free(inf->rv);
                        inf->rv = TAKE_PTR(rv);
                        pthread_rwlock_unlock(&inf->store_lock);
                        if (r == KUBE_WATCH_STOP || r == -ECANCELED || stopping(inf))
                                goto finish;
                        if (r >= 0)
                                continue;
                        log_debug("informer %s: watch ended: %s", inf->resource.resource, strna(st.message));
                        break;
                }
                /* 410: relist at once; anything else after a back-off */
                if (r != -ESTALE) {
                        if (!cond_sleep_unless_stopped(&inf->cond, &inf->lock, &inf->stopping, backoff))
                                break;
                        backoff = MIN(backoff * 2, BACKOFF_MAX);
                }
        }
finish:
        return NULL;
}

static void *resync_thread(void *p)
{
        KubeInformer *inf = p;

        while (cond_sleep_unless_stopped(&inf->cond, &inf->lock, &inf->stopping, inf->opts.resync_period)) {
                _cleanup_strv_free_ char **keys = NULL;

                if (!kube_informer_has_synced(inf))
                        continue;
                if (kube_informer_keys(inf, &keys) < 0)
                        continue;
                for (char **k = keys; *k && !stopping(inf); k++) {
                        _cleanup_(json_object_putp) json_object *obj = NULL;

                        if (kube_informer_get(inf, *k, &obj) < 0)
                                continue;
                        pthread_mutex_lock(&inf->handler_lock);
                        call_update(inf, obj, obj);
                        pthread_mutex_unlock(&inf->handler_lock);
                }
        }
        return NULL;
}

int kube_informer_new(KubeClient *c, const KubeResource *r, const char *ns, const KubeInformerOptions *o,
                      KubeInformer **ret)
{
        KubeInformer *inf;
        pthread_condattr_t attr;

        inf = calloc(1, sizeof(KubeInformer));
        if (!inf)
                return -ENOMEM;
        inf->client = c;
        inf->resource = *r;
        if (o)
                inf->opts = *o;
        inf->ns = ns && r->namespaced ? strdup(ns) : NULL;
        inf->label_selector = o && o->label_selector ? strdup(o->label_selector) : NULL;
        inf->field_selector = o && o->field_selector ? strdup(o->field_selector) : NULL;
        inf->opts.label_selector = inf->opts.field_selector = NULL;
        inf->store = lh_kchar_table_new(1024, NULL);
        if ((ns && r->namespaced && !inf->ns) || (o && o->label_selector && !inf->label_selector) ||
            (o && o->field_selector && !inf->field_selector) || !inf->store) {
                kube_informer_free(inf);
                return -ENOMEM;
        }
        pthread_rwlock_init(&inf->store_lock, NULL);
        pthread_mutex_init(&inf->handler_lock, NULL);
        pthread_mutex_init(&inf->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&inf->cond, &attr);
        pthread_condattr_destroy(&attr);
        *ret = inf;
        return 0;
}

KubeInformer *kube_informer_free(KubeInformer *inf)
{
        struct lh_entry *le, *tmp;

        if (!inf)
                return NULL;
        if (inf->store) {
                kube_informer_stop(inf);
                pthread_rwlock_destroy(&inf->store_lock);
                pthread_mutex_destroy(&inf->handler_lock);
                pthread_mutex_destroy(&inf->lock);
                pthread_cond_destroy(&inf->cond);
                for (size_t i = 0; i < inf->n_indexes; i++) {
                        lh_foreach_safe(inf->indexes[i].buckets, le, tmp)
                                bucket_free((Bucket *)lh_entry_v(le));
                        lh_table_free(inf->indexes[i].buckets);
                        free(inf->indexes[i].name);
                }
                lh_foreach_safe(inf->store, le, tmp) entry_free((Entry *)lh_entry_v(le));
                lh_table_free(inf->store);
        }
        free(inf->rv);
        free(inf->ns);
        free(inf->label_selector);
        free(inf->field_selector);
        free(inf);
        return NULL;
}

int kube_informer_add_handlers(KubeInformer *inf, const KubeInformerHandlers *h)
{
        if (inf->started)
                return -EBUSY;
        if (inf->n_handlers >= MAX_HANDLERS)
                return -E2BIG;
        inf->handlers[inf->n_handlers++] = *h;
        if (h->on_update)
                inf->want_old = true;
        return 0;
}

int kube_informer_add_index(KubeInformer *inf, const char *name, KubeIndexFn fn, void *userdata)
{
        Index *ix;

        if (inf->started)
                return -EBUSY;
        if (inf->n_indexes >= MAX_INDEXES)
                return -E2BIG;
        for (size_t i = 0; i < inf->n_indexes; i++)
                if (streq(inf->indexes[i].name, name))
                        return -EEXIST;
        ix = &inf->indexes[inf->n_indexes];
        ix->name = strdup(name);
        ix->buckets = lh_kchar_table_new(64, NULL);
        if (!ix->name || !ix->buckets) {
                free(ix->name);
                if (ix->buckets)
                        lh_table_free(ix->buckets);
                *ix = (Index){};
                return -ENOMEM;
        }
        ix->fn = fn;
        ix->userdata = userdata;
        inf->n_indexes++;
        return 0;
}

int kube_informer_start(KubeInformer *inf)
{
        int r;

        pthread_mutex_lock(&inf->lock);
        if (inf->started) {
                pthread_mutex_unlock(&inf->lock);
                return -EBUSY;
        }
        inf->stopping = false;
        r = -pthread_create(&inf->thread, NULL, informer_thread, inf);
        if (r == 0)
                inf->started = true;
        if (r == 0 && inf->opts.resync_period > 0 &&
            pthread_create(&inf->resync_thread, NULL, resync_thread, inf) == 0)
                inf->have_resync_thread = true;
        pthread_mutex_unlock(&inf->lock);
        return r;
}

void kube_informer_stop(KubeInformer *inf)
{
        bool started;

        pthread_mutex_lock(&inf->lock);
        started = inf->started;
        inf->stopping = true;
        pthread_cond_broadcast(&inf->cond);
        pthread_mutex_unlock(&inf->lock);
        if (!started)
                return;
        (void)pthread_join(inf->thread, NULL);
        if (inf->have_resync_thread)
                (void)pthread_join(inf->resync_thread, NULL);
        pthread_mutex_lock(&inf->lock);
        inf->started = inf->have_resync_thread = false;
        pthread_mutex_unlock(&inf->lock);
}

bool kube_informer_has_synced(KubeInformer *inf)
{
        bool b;

        pthread_mutex_lock(&inf->lock);
        b = inf->synced;
        pthread_mutex_unlock(&inf->lock);
        return b;
}

int kube_informer_wait_synced(KubeInformer *inf, usec_t timeout)
{
        usec_t end = now_usec(CLOCK_MONOTONIC) + timeout;
        int r = 0;

        pthread_mutex_lock(&inf->lock);
        while (!inf->synced) {
                usec_t now = now_usec(CLOCK_MONOTONIC), at = MIN(end, now + 100 * USEC_PER_MSEC);
                struct timespec ts = timespec_from_usec(at);

                if (stop_requested()) {
                        r = -ECANCELED;
                        break;
                }
                if (now >= end) {
                        r = -ETIMEDOUT;
                        break;
                }
                (void)pthread_cond_timedwait(&inf->cond, &inf->lock, &ts);
        }
        pthread_mutex_unlock(&inf->lock);
        return r;
}

int kube_informer_get_json(KubeInformer *inf, const char *key, char **ret)
{
        Entry *e;
        char *s = NULL;

        pthread_rwlock_rdlock(&inf->store_lock);
        e = store_lookup(inf, key);
        if (e)
                s = strdup(e->json);
        pthread_rwlock_unlock(&inf->store_lock);
        if (!e)
                return -ENOENT;
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int kube_informer_get(KubeInformer *inf, const char *key, json_object **ret)
{
        _cleanup_free_ char *s = NULL;
        json_object *o;
        int r;

        r = kube_informer_get_json(inf, key, &s);
        if (r < 0)
                return r;
        o = json_tokener_parse(s);
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

size_t kube_informer_count(KubeInformer *inf)
{
        size_t n;

        pthread_rwlock_rdlock(&inf->store_lock);
        n = (size_t)lh_table_length(inf->store);
        pthread_rwlock_unlock(&inf->store_lock);
        return n;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sorted strv of the keys of t (key strings). */
static int table_keys(struct lh_table *t, char ***ret)
{
        size_t n = t ? (size_t)lh_table_length(t) : 0, i = 0;
        _cleanup_strv_free_ char **l = calloc(n + 1, sizeof(char *));
        struct lh_entry *le;

        if (!l)
                return -ENOMEM;
        if (t)
                lh_foreach(t, le)
                {
                        l[i] = strdup((const char *)lh_entry_k(le));
                        if (!l[i])
                                return -ENOMEM;
                        i++;
                }
        qsort(l, i, sizeof(char *), cmp_str);
        *ret = TAKE_PTR(l);
        return 0;
}

int kube_informer_keys(KubeInformer *inf, char ***ret)
{
        int r;

        pthread_rwlock_rdlock(&inf->store_lock);
        r = table_keys(inf->store, ret);
        pthread_rwlock_unlock(&inf->store_lock);
        return r;
}

int kube_informer_index_keys(KubeInformer *inf, const char *name, const char *value, char ***ret)
{
        Index *ix = NULL;
        void *p = NULL;
        int r;

        for (size_t i = 0; i < inf->n_indexes; i++)
                if (streq(inf->indexes[i].name, name))
                        ix = &inf->indexes[i];
        if (!ix)
                return -ENOENT;
        pthread_rwlock_rdlock(&inf->store_lock);
        if (lh_table_lookup_ex(ix->buckets, value, &p))
                r = table_keys(((Bucket *)p)->keys, ret);
        else
                r = table_keys(NULL, ret);
        pthread_rwlock_unlock(&inf->store_lock);
        return r;
}

int kube_informer_foreach(KubeInformer *inf, int (*cb)(json_object *obj, void *userdata), void *userdata)
{
        _cleanup_strv_free_ char **keys = NULL;
        int r;

        r = kube_informer_keys(inf, &keys);
        if (r < 0)
                return r;
        for (char **k = keys; *k; k++) {
                _cleanup_(json_object_putp) json_object *obj = NULL;

                r = kube_informer_get(inf, *k, &obj);
                if (r == -ENOENT)
                        continue; /* deleted meanwhile */
                if (r < 0)
                        return r;
                r = cb(obj, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

static size_t usable(const void *p)
{
        return p ? malloc_usable_size((void *)p) : 0;
}

static size_t strv_usable(char **l)
{
        size_t n = usable(l);

        for (char **s = l; s && *s; s++)
                n += usable(*s);
        return n;
}

/* lh_table: the table, its array, one lh_entry per slot. */
static size_t table_usable(struct lh_table *t)
{
        return usable(t) + usable(t->table);
}

int kube_informer_stats(KubeInformer *inf, KubeInformerStats *ret)
{
        KubeInformerStats s = {};
        struct lh_entry *le, *be;

        pthread_rwlock_rdlock(&inf->store_lock);
        s.objects = (size_t)lh_table_length(inf->store);
        s.json_bytes = inf->json_bytes;
        s.store_bytes = table_usable(inf->store);
        lh_foreach(inf->store, le)
        {
                Entry *e = (Entry *)lh_entry_v(le);

                s.store_bytes += usable(e) + usable(e->key) + usable(e->json) + usable(e->rv);
                for (size_t i = 0; i < inf->n_indexes; i++)
                        s.store_bytes += strv_usable(e->values[i]);
        }
        for (size_t i = 0; i < inf->n_indexes; i++) {
                s.store_bytes += table_usable(inf->indexes[i].buckets);
                lh_foreach(inf->indexes[i].buckets, be)
                {
                        Bucket *b = (Bucket *)lh_entry_v(be);

                        s.store_bytes += usable(b) + usable(b->value) + table_usable(b->keys);
                }
        }
        s.lists = inf->lists;
        s.events = inf->events;
        s.resource_version = inf->rv ? strdup(inf->rv) : NULL;
        pthread_rwlock_unlock(&inf->store_lock);
        *ret = s;
        return 0;
}
