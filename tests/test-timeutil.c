/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>

#include "timeutil.h"
#include "tests.h"

TEST(full_jitter_bounds)
{
        for (unsigned attempt = 0; attempt < 8; attempt++)
                for (int i = 0; i < 200; i++) {
                        usec_t d = backoff_full_jitter(2 * USEC_PER_SEC, 10 * USEC_PER_SEC, attempt);
                        usec_t ceiling = attempt == 0   ? 2 * USEC_PER_SEC
                                         : attempt == 1 ? 4 * USEC_PER_SEC
                                         : attempt == 2 ? 8 * USEC_PER_SEC
                                                        : 10 * USEC_PER_SEC;
                        ASSERT_TRUE(d < ceiling);
                }
}

TEST(exponential_backoff_schedule)
{
        ExpBackoff b = EXP_BACKOFF_DEFAULTS;
        double expected = 0.5;

        for (int i = 0; i < 20; i++) {
                usec_t d = exp_backoff_next(&b);
                double s = (double)d / USEC_PER_SEC;
                ASSERT_TRUE(s >= expected * 0.5 - 0.001 && s <= expected * 1.5 + 0.001);
                expected = expected * 1.5 > 60 ? 60 : expected * 1.5;
        }
        /* after max_elapsed the schedule ends */
        b.max_elapsed = 1;
        b.started = now_usec(CLOCK_MONOTONIC) - 10;
        ASSERT_TRUE(exp_backoff_next(&b) == USEC_INFINITY);
}

static void *stopper(void *arg)
{
        (void)arg;
        sleep_usec(50 * USEC_PER_MSEC);
        stop_request();
        return NULL;
}

TEST(stop_interrupts_sleep)
{
        pthread_t t;

        stop_reset();
        ASSERT_OK(sleep_usec(1000));
        ASSERT_EQ(pthread_create(&t, NULL, stopper, NULL), 0);
        ASSERT_ERROR(sleep_usec(60 * USEC_PER_SEC), ECANCELED);
        pthread_join(t, NULL);
        ASSERT_TRUE(stop_requested());
        ASSERT_ERROR(sleep_usec(1), ECANCELED);
        stop_reset();
        ASSERT_OK(sleep_usec(1));
}

typedef struct Sleeper {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stopping;
} Sleeper;

static void *stop_sleeper(void *p)
{
        Sleeper *s = p;

        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

TEST(cond_sleep_ends_early_when_stopped)
{
        Sleeper s = { .lock = PTHREAD_MUTEX_INITIALIZER };
        pthread_condattr_t attr;
        pthread_t t;

        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&s.cond, &attr);
        pthread_condattr_destroy(&attr);

        ASSERT_TRUE(cond_sleep_unless_stopped(&s.cond, &s.lock, &s.stopping, 1000));
        ASSERT_EQ(pthread_create(&t, NULL, stop_sleeper, &s), 0);
        /* an hour, unless the other thread's stop wakes it */
        ASSERT_FALSE(cond_sleep_unless_stopped(&s.cond, &s.lock, &s.stopping, 3600 * USEC_PER_SEC));
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_FALSE(cond_sleep_unless_stopped(&s.cond, &s.lock, &s.stopping, 3600 * USEC_PER_SEC));
        pthread_cond_destroy(&s.cond);
}

TEST(rfc3339)
{
        char s[32];

        format_rfc3339_utc(0, s);
        ASSERT_STREQ(s, "1970-01-01T00:00:00Z");
        format_rfc3339_utc(1795424820, s);
        ASSERT_STREQ(s, "2026-11-23T09:07:00Z");
}

TEST(go_durations)
{
        static const struct {
                const char *in;
                int r;
                usec_t v;
                const char *out;
        } cases[] = {
                { "0", 0, 0, "0s" },
                { "10s", 0, 10 * USEC_PER_SEC, "10s" },
                { "2m", 0, 120 * USEC_PER_SEC, "2m0s" },
                { "1h30m", 0, 5400 * USEC_PER_SEC, "1h30m0s" },
                { "500ms", 0, 500 * USEC_PER_MSEC, "500ms" },
                { "1.5s", 0, 1500 * USEC_PER_MSEC, "1.500000s" },
                { "2m3s", 0, 123 * USEC_PER_SEC, "2m3s" },
                { "10us", 0, 10, "10us" },
                { "", -EINVAL, 0, NULL },
                { "10", -EINVAL, 0, NULL },
                { "s", -EINVAL, 0, NULL },
                { "10x", -EINVAL, 0, NULL },
                { "-1s", -EINVAL, 0, NULL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                usec_t v = 7;
                int r = parse_go_duration(cases[i].in, &v);

                ASSERT_EQ(r, cases[i].r);
                if (r == 0) {
                        char text[32];

                        ASSERT_EQ(v, cases[i].v);
                        format_go_duration(v, text);
                        ASSERT_STREQ(text, cases[i].out);
                } else
                        ASSERT_EQ(v, 7);
        }
}

DEFINE_TEST_MAIN
