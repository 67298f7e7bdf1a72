/* SPDX-License-Identifier: Apache-2.0 */

#include <pthread.h>
#include <stdatomic.h>

#include "kube/kube-workqueue.h"
#include "macro.h"
#include "tests/tests.h"

static usec_t fake_now;

static usec_t fake_clock(void *userdata)
{
        (void)userdata;
        return fake_now;
}

static KubeWorkQueue *new_fake(const KubeRateLimit *limit)
{
        KubeWorkQueue *q = NULL;

        fake_now = 1000 * USEC_PER_SEC;
        ASSERT_OK(kube_workqueue_new(limit, fake_clock, NULL, &q));
        return q;
}

static void get_expect(KubeWorkQueue *q, const char *key)
{
        _cleanup_free_ char *k = NULL;

        ASSERT_OK(kube_workqueue_try_get(q, &k));
        ASSERT_STREQ(k, key);
}

TEST(dedup)
{
        KubeWorkQueue *q = new_fake(NULL);
        _cleanup_free_ char *k = NULL;

        ASSERT_OK(kube_workqueue_add(q, "ns/a"));
        ASSERT_OK(kube_workqueue_add(q, "ns/b"));
        ASSERT_OK(kube_workqueue_add(q, "ns/a"));
        ASSERT_OK(kube_workqueue_add(q, "ns/a"));
        ASSERT_EQ(kube_workqueue_len(q), 2);

        /* FIFO order of first addition */
        get_expect(q, "ns/a");
        get_expect(q, "ns/b");
        ASSERT_ERROR(kube_workqueue_try_get(q, &k), EAGAIN);
        kube_workqueue_done(q, "ns/a");
        kube_workqueue_done(q, "ns/b");
        ASSERT_EQ(kube_workqueue_len(q), 0);
        ASSERT_ERROR(kube_workqueue_try_get(q, &k), EAGAIN);
        kube_workqueue_free(q);
}

TEST(in_flight_requeued_after_done)
{
        KubeWorkQueue *q = new_fake(NULL);
        _cleanup_free_ char *k = NULL;

        ASSERT_OK(kube_workqueue_add(q, "ns/a"));
        get_expect(q, "ns/a");
        /* added twice while in flight: not handed out, queued once at done */
        ASSERT_OK(kube_workqueue_add(q, "ns/a"));
        ASSERT_OK(kube_workqueue_add(q, "ns/a"));
        ASSERT_EQ(kube_workqueue_len(q), 0);
        ASSERT_ERROR(kube_workqueue_try_get(q, &k), EAGAIN);
        kube_workqueue_done(q, "ns/a");
        ASSERT_EQ(kube_workqueue_len(q), 1);
        get_expect(q, "ns/a");
        kube_workqueue_done(q, "ns/a");
        ASSERT_EQ(kube_workqueue_len(q), 0);
        kube_workqueue_free(q);
}

TEST(item_backoff_values)
{
        /* no bucket: only the per-key exponential back-off */
        KubeRateLimit l = KUBE_RATE_LIMIT_DEFAULTS;
        KubeWorkQueue *q;
        usec_t d;

        l.qps = 0;
        q = new_fake(&l);
        d = 5 * USEC_PER_MSEC;
        for (unsigned i = 0; i < 40; i++) {
                usec_t exp = MIN(d, 1000 * USEC_PER_SEC);

                ASSERT_EQ(kube_workqueue_when(q, "ns/a"), exp);
                ASSERT_EQ(kube_workqueue_num_requeues(q, "ns/a"), i + 1);
                if (d < 1000 * USEC_PER_SEC)
                        d *= 2;
        }
        /* 5 ms * 2^17 = 655.36 s, * 2^18 capped at 1000 s */
        ASSERT_EQ(kube_workqueue_num_requeues(q, "ns/b"), 0);
        ASSERT_EQ(kube_workqueue_when(q, "ns/b"), 5 * USEC_PER_MSEC);
        ASSERT_EQ(kube_workqueue_when(q, "ns/b"), 10 * USEC_PER_MSEC);
        ASSERT_EQ(kube_workqueue_when(q, "ns/b"), 20 * USEC_PER_MSEC);
        kube_workqueue_forget(q, "ns/b");
        ASSERT_EQ(kube_workqueue_num_requeues(q, "ns/b"), 0);
        ASSERT_EQ(kube_workqueue_when(q, "ns/b"), 5 * USEC_PER_MSEC);
        kube_workqueue_free(q);
}

TEST(bucket_and_max)
{
        /* the defaults: 100 tokens, then one per 100 ms; the max of both */
        KubeWorkQueue *q = new_fake(NULL);
        char key[32];

        for (unsigned i = 0; i < 100; i++) {
                snprintf(key, sizeof(key), "ns/k%u", i);
                ASSERT_EQ(kube_workqueue_when(q, key), 5 * USEC_PER_MSEC);
        }
        /* the bucket is empty: the 101st waits 100 ms, the 102nd 200 ms */
        ASSERT_EQ(kube_workqueue_when(q, "ns/x"), 100 * USEC_PER_MSEC);
        ASSERT_EQ(kube_workqueue_when(q, "ns/y"), 200 * USEC_PER_MSEC);
        /* 1 s later 10 tokens came back: the debt of 2 is paid, 8 left */
        fake_now += USEC_PER_SEC;
        for (unsigned i = 0; i < 8; i++) {
                snprintf(key, sizeof(key), "ns/z%u", i);
                ASSERT_EQ(kube_workqueue_when(q, key), 5 * USEC_PER_MSEC);
        }
        ASSERT_EQ(kube_workqueue_when(q, "ns/w"), 100 * USEC_PER_MSEC);
        /* a key with many failures: its own back-off dominates */
        fake_now += 1000 * USEC_PER_SEC;
        for (unsigned i = 0; i < 10; i++)
                (void)kube_workqueue_when(q, "ns/f");
        ASSERT_EQ(kube_workqueue_when(q, "ns/f"), 5 * USEC_PER_MSEC << 10);
        kube_workqueue_free(q);
}

TEST(add_after_and_rate_limited)
{
        KubeRateLimit l = KUBE_RATE_LIMIT_DEFAULTS;
        KubeWorkQueue *q;
        _cleanup_free_ char *k = NULL;
        usec_t d;

        l.qps = 0;
        q = new_fake(&l);
        ASSERT_OK(kube_workqueue_add_after(q, "ns/a", 10 * USEC_PER_SEC));
        ASSERT_OK(kube_workqueue_add_after(q, "ns/b", 5 * USEC_PER_SEC));
        /* the earlier of two delays wins */
        ASSERT_OK(kube_workqueue_add_after(q, "ns/a", 20 * USEC_PER_SEC));
        ASSERT_OK(kube_workqueue_add_after(q, "ns/c", 3 * USEC_PER_SEC));
        ASSERT_OK(kube_workqueue_add_after(q, "ns/c", 1 * USEC_PER_SEC));
        ASSERT_EQ(kube_workqueue_len(q), 0);
        ASSERT_EQ(kube_workqueue_delayed(q), 3);

        fake_now += USEC_PER_SEC - 1;
        ASSERT_ERROR(kube_workqueue_try_get(q, &k), EAGAIN);
        fake_now += 1;
        get_expect(q, "ns/c");
        kube_workqueue_done(q, "ns/c");
        fake_now += 4 * USEC_PER_SEC;
        get_expect(q, "ns/b");
        kube_workqueue_done(q, "ns/b");
        fake_now += 4 * USEC_PER_SEC;
        ASSERT_ERROR(kube_workqueue_try_get(q, &k), EAGAIN);
        fake_now += USEC_PER_SEC;
        get_expect(q, "ns/a");

        /* a failing key: 5, 10, 20 ms */
        ASSERT_OK(kube_workqueue_add_rate_limited(q, "ns/a", &d));
        ASSERT_EQ(d, 5 * USEC_PER_MSEC);
        kube_workqueue_done(q, "ns/a");
        fake_now += d;
        get_expect(q, "ns/a");
        ASSERT_OK(kube_workqueue_add_rate_limited(q, "ns/a", &d));
        ASSERT_EQ(d, 10 * USEC_PER_MSEC);
        kube_workqueue_done(q, "ns/a");
        fake_now += d - 1;
        ASSERT_ERROR(kube_workqueue_try_get(q, &k), EAGAIN);
        fake_now += 1;
        get_expect(q, "ns/a");
        ASSERT_EQ(kube_workqueue_num_requeues(q, "ns/a"), 2);
        /* success: forget resets the back-off */
        kube_workqueue_forget(q, "ns/a");
        kube_workqueue_done(q, "ns/a");
        ASSERT_OK(kube_workqueue_add_rate_limited(q, "ns/a", &d));
        ASSERT_EQ(d, 5 * USEC_PER_MSEC);
        kube_workqueue_free(q);
}

TEST(shutdown)
{
        KubeWorkQueue *q = new_fake(NULL);
        _cleanup_free_ char *k = NULL;

        ASSERT_OK(kube_workqueue_add(q, "ns/a"));
        ASSERT_OK(kube_workqueue_add_after(q, "ns/b", USEC_PER_SEC));
        kube_workqueue_shutdown(q);
        ASSERT_TRUE(kube_workqueue_shutting_down(q));
        /* ignored */
        ASSERT_OK(kube_workqueue_add(q, "ns/c"));
        /* what was queued is still handed out, the delayed key is dropped */
        get_expect(q, "ns/a");
        fake_now += 2 * USEC_PER_SEC;
        ASSERT_ERROR(kube_workqueue_get(q, &k), ESHUTDOWN);
        kube_workqueue_done(q, "ns/a");
        kube_workqueue_free(q);
}

/* Several workers on a few hot keys: nobody ever holds a key another
 * worker holds, every addition is followed by at least one processing. */
#define N_KEYS 8
#define N_WORKERS 6
#define N_ADDS 20000

typedef struct Shared {
        KubeWorkQueue *q;
        atomic_int active[N_KEYS];
        atomic_int overlaps;
        atomic_long processed;
} Shared;

static void *worker(void *p)
{
        Shared *s = p;

        for (;;) {
                _cleanup_free_ char *k = NULL;
                unsigned i;

                if (kube_workqueue_get(s->q, &k) < 0)
                        break;
                i = (unsigned)(k[4] - '0');
                if (atomic_fetch_add(&s->active[i], 1) != 0)
                        atomic_fetch_add(&s->overlaps, 1);
                /* widen the window for a second holder */
                for (volatile int j = 0; j < 2000; j++)
                        ;
                atomic_fetch_sub(&s->active[i], 1);
                atomic_fetch_add(&s->processed, 1);
                kube_workqueue_done(s->q, k);
        }
        return NULL;
}

TEST(no_concurrent_processing)
{
        Shared s = {};
        pthread_t t[N_WORKERS];
        char key[16];

        ASSERT_OK(kube_workqueue_new(NULL, NULL, NULL, &s.q));
        for (unsigned i = 0; i < N_WORKERS; i++)
                ASSERT_EQ(pthread_create(&t[i], NULL, worker, &s), 0);
        for (unsigned n = 0; n < N_ADDS; n++) {
                snprintf(key, sizeof(key), "ns/k%u", n % N_KEYS);
                ASSERT_OK(kube_workqueue_add(s.q, key));
        }
        /* let the workers drain, then stop them */
        while (kube_workqueue_len(s.q) > 0)
                (void)sleep_usec(USEC_PER_MSEC);
        kube_workqueue_shutdown(s.q);
        for (unsigned i = 0; i < N_WORKERS; i++)
                ASSERT_EQ(pthread_join(t[i], NULL), 0);

        ASSERT_EQ(atomic_load(&s.overlaps), 0);
        /* de-duplication: at most one processing per addition, and at least
         * one per key (the last addition of each key is processed) */
        ASSERT_LE(atomic_load(&s.processed), N_ADDS);
        ASSERT_GE(atomic_load(&s.processed), N_KEYS);
        kube_workqueue_free(s.q);
}

DEFINE_TEST_MAIN
