/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A controller's work queue, with client-go's semantics (workqueue.Type,
 * DelayingInterface, RateLimitingInterface):
 *
 * - keys ("namespace/name") are de-duplicated: a key added N times before a
 *   worker takes it is processed once;
 * - in-flight exclusion: a key taken by kube_workqueue_get() and added again
 *   before kube_workqueue_done() is queued only when done is called, so two
 *   workers never process one key at the same time;
 * - kube_workqueue_add_after() queues a key once a delay has passed (the
 *   earliest of several pending delays wins);
 * - kube_workqueue_add_rate_limited() delays by the rate limiter: the maximum
 *   of a per-key exponential back-off (base doubling per failure up to max,
 *   ItemExponentialFailureRateLimiter) and an overall token bucket (qps,
 *   burst, BucketRateLimiter); kube_workqueue_forget() resets the key's
 *   failures once it was processed successfully;
 * - after kube_workqueue_shutdown() new keys are ignored and get() returns
 *   -ESHUTDOWN once the queue is empty.
 *
 * Every function is thread-safe. The clock is CLOCK_MONOTONIC unless a test
 * injects one; then delayed keys become ready when the test moves its clock
 * and calls kube_workqueue_tick(), and blocking get() never times out on its
 * own.
 */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "timeutil.h"

typedef struct KubeWorkQueue KubeWorkQueue;

typedef struct KubeRateLimit {
        usec_t base_delay; /* first per-key back-off */
        usec_t max_delay; /* per-key back-off cap */
        double qps; /* overall bucket refill rate; 0: no bucket */
        unsigned burst; /* bucket size */
} KubeRateLimit;

/* client-go's DefaultControllerRateLimiter(): 5 ms doubling to 1000 s, 10 qps, burst 100. */
#define KUBE_RATE_LIMIT_DEFAULTS \
        ((KubeRateLimit){ .base_delay = 5 * USEC_PER_MSEC, \
                          .max_delay = 1000 * USEC_PER_SEC, \
                          .qps = 10.0, \
                          .burst = 100 })

/* An injected clock: returns "now" in microseconds, monotonic. */
typedef usec_t (*KubeClockFn)(void *userdata);

/* limit NULL: the defaults. clock NULL: CLOCK_MONOTONIC. */
int kube_workqueue_new(const KubeRateLimit *limit, KubeClockFn clock, void *clock_userdata,
                       KubeWorkQueue **ret);
/* Accepts NULL; returns NULL. No thread may be inside a call any more. */
KubeWorkQueue *kube_workqueue_free(KubeWorkQueue *q);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeWorkQueue *, kube_workqueue_free)

/* 0 (also when the key was already queued or the queue is shutting down),
 * -ENOMEM. */
int kube_workqueue_add(KubeWorkQueue *q, const char *key);
/* delay 0 is kube_workqueue_add(). */
int kube_workqueue_add_after(KubeWorkQueue *q, const char *key, usec_t delay);
/* Adds after the rate limiter's delay for the key; that delay is stored in
 * *ret_delay when given. Counts one failure of the key. */
int kube_workqueue_add_rate_limited(KubeWorkQueue *q, const char *key, usec_t *ret_delay);
/* The rate limiter alone (client-go's When): counts a failure of the key
 * and takes a token; returns the delay. */
usec_t kube_workqueue_when(KubeWorkQueue *q, const char *key);
/* Clears the key's failure count. */
void kube_workqueue_forget(KubeWorkQueue *q, const char *key);
unsigned kube_workqueue_num_requeues(KubeWorkQueue *q, const char *key);

/* Blocks until a key is ready; *ret_key is a copy the caller frees and must
 * pass to kube_workqueue_done(). -ESHUTDOWN when shut down and empty. */
int kube_workqueue_get(KubeWorkQueue *q, char **ret_key);
/* Like get without blocking: -EAGAIN when no key is ready. */
int kube_workqueue_try_get(KubeWorkQueue *q, char **ret_key);
/* Ends the processing of a key from get(); requeues it if it was added
 * meanwhile. */
void kube_workqueue_done(KubeWorkQueue *q, const char *key);

/* Keys ready to be taken (not the delayed ones, not those in flight). */
size_t kube_workqueue_len(KubeWorkQueue *q);
/* Keys waiting for a delay to pass. */
size_t kube_workqueue_delayed(KubeWorkQueue *q);
/* For an injected clock: re-reads it, moves keys whose delay has passed to
 * the queue and wakes the workers. */
void kube_workqueue_tick(KubeWorkQueue *q);

/* New keys are ignored from now on, delayed ones are dropped; blocked
 * get()s return once the queue is empty. */
void kube_workqueue_shutdown(KubeWorkQueue *q);
bool kube_workqueue_shutting_down(KubeWorkQueue *q);
