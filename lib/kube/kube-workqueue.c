/* SPDX-License-Identifier: Apache-2.0 */

#include <errno.h>
#include <json-c/linkhash.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube-workqueue.h"
#include "macro.h"

/* One record per key that is queued, in flight, delayed or has failures;
 * freed once it is none of these. */
typedef struct Item {
        char *key;
        bool dirty; /* must be processed (again) */
        bool processing; /* taken by get(), not done yet */
        unsigned failures;
        usec_t ready_at;
        size_t heap_idx; /* in the delayed heap, or SIZE_MAX */
} Item;

struct KubeWorkQueue {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        KubeRateLimit limit;
        KubeClockFn clock;
        void *clock_userdata;

        struct lh_table *items; /* key -> Item */

        /* FIFO ring of dirty, not in-flight items */
        Item **fifo;
        size_t fifo_head, fifo_len, fifo_cap;

        /* min-heap of delayed items by ready_at */
        Item **heap;
        size_t heap_len, heap_cap;

        /* token bucket (golang.org/x/time/rate) */
        double tokens;
        usec_t tokens_at;

        bool shutting_down;
};

static usec_t wq_now(KubeWorkQueue *q)
{
        return q->clock ? q->clock(q->clock_userdata) : now_usec(CLOCK_MONOTONIC);
}

static Item *item_lookup(KubeWorkQueue *q, const char *key)
{
        void *v = NULL;

        if (!lh_table_lookup_ex(q->items, key, &v))
                return NULL;
        return v;
}

static Item *item_get(KubeWorkQueue *q, const char *key)
{
        Item *it = item_lookup(q, key);

        if (it)
                return it;
        it = calloc(1, sizeof(Item));
        if (!it)
                return NULL;
        it->key = strdup(key);
        if (!it->key || lh_table_insert(q->items, it->key, it) < 0) {
                free(it->key);
                free(it);
                return NULL;
        }
        it->heap_idx = SIZE_MAX;
        return it;
}

/* Frees the record when nothing refers to it any more. */
static void item_maybe_release(KubeWorkQueue *q, Item *it)
{
        if (it->dirty || it->processing || it->failures > 0 || it->heap_idx != SIZE_MAX)
                return;
        (void)lh_table_delete(q->items, it->key);
        free(it->key);
        free(it);
}

static int fifo_push(KubeWorkQueue *q, Item *it)
{
        if (q->fifo_len == q->fifo_cap) {
                size_t n = q->fifo_cap ? q->fifo_cap * 2 : 64;
                Item **f = malloc(n * sizeof(Item *));

                if (!f)
                        return -ENOMEM;
                for (size_t i = 0; i < q->fifo_len; i++)
                        f[i] = q->fifo[(q->fifo_head + i) % q->fifo_cap];
                free(q->fifo);
                q->fifo = f;
                q->fifo_cap = n;
                q->fifo_head = 0;
        }
        q->fifo[(q->fifo_head + q->fifo_len) % q->fifo_cap] = it;
        q->fifo_len++;
        return 0;
}

static Item *fifo_pop(KubeWorkQueue *q)
{
        Item *it;

        if (q->fifo_len == 0)
                return NULL;
        it = q->fifo[q->fifo_head];
        q->fifo_head = (q->fifo_head + 1) % q->fifo_cap;
        q->fifo_len--;
        return it;
}

static void heap_swap(KubeWorkQueue *q, size_t a, size_t b)
{
        Item *t = q->heap[a];

        q->heap[a] = q->heap[b];
        q->heap[b] = t;
        q->heap[a]->heap_idx = a;
        q->heap[b]->heap_idx = b;
}

static void heap_up(KubeWorkQueue *q, size_t i)
{
        while (i > 0) {
                size_t p = (i - 1) / 2;

                if (q->heap[p]->ready_at <= q->heap[i]->ready_at)
                        break;
                heap_swap(q, i, p);
                i = p;
        }
}

static void heap_down(KubeWorkQueue *q, size_t i)
{
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;

                if (l < q->heap_len && q->heap[l]->ready_at < q->heap[m]->ready_at)
                        m = l;
                if (r < q->heap_len && q->heap[r]->ready_at < q->heap[m]->ready_at)
                        m = r;
                if (m == i)
                        break;
                heap_swap(q, i, m);
                i = m;
        }
}

static int heap_push(KubeWorkQueue *q, Item *it)
{
        if (q->heap_len == q->heap_cap) {
                size_t n = q->heap_cap ? q->heap_cap * 2 : 64;
                Item **h = realloc(q->heap, n * sizeof(Item *));

                if (!h)
                        return -ENOMEM;
                q->heap = h;
                q->heap_cap = n;
        }
        it->heap_idx = q->heap_len;
        q->heap[q->heap_len++] = it;
        heap_up(q, it->heap_idx);
        return 0;
}

static void heap_remove(KubeWorkQueue *q, Item *it)
{
        size_t i = it->heap_idx;

        q->heap_len--;
        if (i != q->heap_len) {
                q->heap[i] = q->heap[q->heap_len];
                q->heap[i]->heap_idx = i;
                heap_down(q, i);
                heap_up(q, i);
        }
        it->heap_idx = SIZE_MAX;
}

/* workqueue.Type.Add, with the lock held. */
static int add_locked(KubeWorkQueue *q, Item *it)
{
        int r;

        if (it->dirty)
                return 0;
        it->dirty = true;
        if (it->processing)
                return 0;
        r = fifo_push(q, it);
        if (r < 0) {
                it->dirty = false;
                return r;
        }
        pthread_cond_signal(&q->cond);
        return 0;
}

/* Moves delayed items whose time has come to the FIFO. */
static void promote_locked(KubeWorkQueue *q)
{
        usec_t now;

        if (q->heap_len == 0)
                return;
        now = wq_now(q);
        while (q->heap_len > 0 && q->heap[0]->ready_at <= now) {
                Item *it = q->heap[0];

                heap_remove(q, it);
                if (add_locked(q, it) < 0) {
                        /* out of memory: try again on the next call */
                        (void)heap_push(q, it);
                        break;
                }
        }
}

int kube_workqueue_new(const KubeRateLimit *limit, KubeClockFn clock, void *clock_userdata,
                       KubeWorkQueue **ret)
{
        KubeWorkQueue *q;
        pthread_condattr_t attr;

        q = calloc(1, sizeof(KubeWorkQueue));
        if (!q)
                return -ENOMEM;
        q->limit = limit ? *limit : KUBE_RATE_LIMIT_DEFAULTS;
        q->clock = clock;
        q->clock_userdata = clock_userdata;
        q->items = lh_kchar_table_new(64, NULL);
        if (!q->items) {
                free(q);
                return -ENOMEM;
        }
        pthread_mutex_init(&q->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&q->cond, &attr);
        pthread_condattr_destroy(&attr);
        q->tokens = q->limit.burst;
        q->tokens_at = wq_now(q);
        *ret = q;
        return 0;
}

KubeWorkQueue *kube_workqueue_free(KubeWorkQueue *q)
{
        struct lh_entry *e, *tmp;

        if (!q)
                return NULL;
        lh_foreach_safe(q->items, e, tmp)
        {
                Item *it = (Item *)lh_entry_v(e);

                free(it->key);
                free(it);
        }
        lh_table_free(q->items);
        free(q->fifo);
        free(q->heap);
        pthread_cond_destroy(&q->cond);
        pthread_mutex_destroy(&q->lock);
        free(q);
        return NULL;
}

int kube_workqueue_add(KubeWorkQueue *q, const char *key)
{
        Item *it;
        int r = 0;

        pthread_mutex_lock(&q->lock);
        if (!q->shutting_down) {
                it = item_get(q, key);
                if (!it)
                        r = -ENOMEM;
                else {
                        r = add_locked(q, it);
                        item_maybe_release(q, it);
                }
        }
        pthread_mutex_unlock(&q->lock);
        return r;
}

int kube_workqueue_add_after(KubeWorkQueue *q, const char *key, usec_t delay)
{
        Item *it;
        usec_t at;
        int r = 0;

        if (delay == 0)
                return kube_workqueue_add(q, key);

        pthread_mutex_lock(&q->lock);
        if (q->shutting_down)
                goto finish;
        it = item_get(q, key);
        if (!it) {
                r = -ENOMEM;
                goto finish;
        }
        at = wq_now(q);
        at = delay > USEC_INFINITY - at ? USEC_INFINITY : at + delay;
        if (it->heap_idx != SIZE_MAX) {
                /* the earliest wins, as in client-go's waitingForQueue */
                if (at < it->ready_at) {
                        it->ready_at = at;
                        heap_up(q, it->heap_idx);
                }
        } else {
                it->ready_at = at;
                r = heap_push(q, it);
                if (r < 0)
                        item_maybe_release(q, it);
        }
        /* a blocked get() may have to wake earlier now */
        pthread_cond_broadcast(&q->cond);
finish:
        pthread_mutex_unlock(&q->lock);
        return r;
}

/* ItemExponentialFailureRateLimiter.When: base * 2^failures, capped. */
static usec_t item_backoff(const KubeRateLimit *l, unsigned exp)
{
        double d = (double)l->base_delay * ldexp(1.0, (int)MIN(exp, 1000u));

        if (d >= (double)l->max_delay)
                return l->max_delay;
        return (usec_t)d;
}

/* rate.Limiter.Reserve().Delay() for one token. */
static usec_t bucket_reserve(KubeWorkQueue *q)
{
        usec_t now;
        double t;

        if (q->limit.qps <= 0)
                return 0;
        now = wq_now(q);
        if (now > q->tokens_at) {
                t = q->tokens + (double)(now - q->tokens_at) / USEC_PER_SEC * q->limit.qps;
                q->tokens = MIN(t, (double)q->limit.burst);
                q->tokens_at = now;
        }
        q->tokens -= 1.0;
        if (q->tokens >= 0)
                return 0;
        return (usec_t)ceil(-q->tokens / q->limit.qps * USEC_PER_SEC);
}

static usec_t when_locked(KubeWorkQueue *q, Item *it)
{
        usec_t a, b;

        a = item_backoff(&q->limit, it->failures);
        if (it->failures < UINT32_MAX)
                it->failures++;
        b = bucket_reserve(q);
        return MAX(a, b);
}

usec_t kube_workqueue_when(KubeWorkQueue *q, const char *key)
{
        Item *it;
        usec_t d;

        pthread_mutex_lock(&q->lock);
        it = item_get(q, key);
        if (it)
                d = when_locked(q, it);
        else
                d = q->limit.max_delay;
        pthread_mutex_unlock(&q->lock);
        return d;
}

int kube_workqueue_add_rate_limited(KubeWorkQueue *q, const char *key, usec_t *ret_delay)
{
        usec_t d = kube_workqueue_when(q, key);

        if (ret_delay)
                *ret_delay = d;
        return kube_workqueue_add_after(q, key, d);
}

void kube_workqueue_forget(KubeWorkQueue *q, const char *key)
{
        Item *it;

        pthread_mutex_lock(&q->lock);
        it = item_lookup(q, key);
        if (it) {
                it->failures = 0;
                item_maybe_release(q, it);
        }
        pthread_mutex_unlock(&q->lock);
}

unsigned kube_workqueue_num_requeues(KubeWorkQueue *q, const char *key)
{
        Item *it;
        unsigned n = 0;

        pthread_mutex_lock(&q->lock);
        it = item_lookup(q, key);
        if (it)
                n = it->failures;
        pthread_mutex_unlock(&q->lock);
        return n;
}

static int take_locked(KubeWorkQueue *q, char **ret_key)
{
        Item *it = fifo_pop(q);
        char *k;

        k = strdup(it->key);
        if (!k) {
                /* put it back in front */
                q->fifo_head = (q->fifo_head + q->fifo_cap - 1) % q->fifo_cap;
                q->fifo_len++;
                return -ENOMEM;
        }
        it->processing = true;
        it->dirty = false;
        *ret_key = k;
        return 0;
}

int kube_workqueue_get(KubeWorkQueue *q, char **ret_key)
{
        int r;

        pthread_mutex_lock(&q->lock);
        for (;;) {
                promote_locked(q);
                if (q->fifo_len > 0) {
                        r = take_locked(q, ret_key);
                        break;
                }
                if (q->shutting_down) {
                        r = -ESHUTDOWN;
                        break;
                }
                if (q->heap_len > 0 && !q->clock) {
                        struct timespec ts;

                        ts = timespec_from_usec(q->heap[0]->ready_at);
                        (void)pthread_cond_timedwait(&q->cond, &q->lock, &ts);
                } else
                        pthread_cond_wait(&q->cond, &q->lock);
        }
        pthread_mutex_unlock(&q->lock);
        return r;
}

int kube_workqueue_try_get(KubeWorkQueue *q, char **ret_key)
{
        int r;

        pthread_mutex_lock(&q->lock);
        promote_locked(q);
        if (q->fifo_len > 0)
                r = take_locked(q, ret_key);
        else
                r = q->shutting_down ? -ESHUTDOWN : -EAGAIN;
        pthread_mutex_unlock(&q->lock);
        return r;
}

void kube_workqueue_done(KubeWorkQueue *q, const char *key)
{
        Item *it;

        pthread_mutex_lock(&q->lock);
        it = item_lookup(q, key);
        if (it && it->processing) {
                it->processing = false;
                if (it->dirty && fifo_push(q, it) >= 0)
                        pthread_cond_signal(&q->cond);
                else if (it->dirty)
                        it->dirty = false; /* out of memory: the addition is lost */
                item_maybe_release(q, it);
        }
        pthread_mutex_unlock(&q->lock);
}

static size_t count(KubeWorkQueue *q, bool delayed)
{
        size_t n;

        pthread_mutex_lock(&q->lock);
        promote_locked(q);
        n = delayed ? q->heap_len : q->fifo_len;
        pthread_mutex_unlock(&q->lock);
        return n;
}

size_t kube_workqueue_len(KubeWorkQueue *q)
{
        return count(q, false);
}

size_t kube_workqueue_delayed(KubeWorkQueue *q)
{
        return count(q, true);
}

void kube_workqueue_tick(KubeWorkQueue *q)
{
        pthread_mutex_lock(&q->lock);
        promote_locked(q);
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
}

void kube_workqueue_shutdown(KubeWorkQueue *q)
{
        pthread_mutex_lock(&q->lock);
        q->shutting_down = true;
        while (q->heap_len > 0) {
                Item *it = q->heap[q->heap_len - 1];

                heap_remove(q, it);
                item_maybe_release(q, it);
        }
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
}

bool kube_workqueue_shutting_down(KubeWorkQueue *q)
{
        bool b;

        pthread_mutex_lock(&q->lock);
        b = q->shutting_down;
        pthread_mutex_unlock(&q->lock);
        return b;
}
