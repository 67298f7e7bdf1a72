/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Clocks, interruptible sleeps and back-off schedules.
 *
 * Long-running applets sleep through sleep_usec(), which returns early with
 * -ECANCELED once stop_request() was called (from a SIGTERM handler: it is
 * async-signal-safe), so that a service stop never waits out a 60 s poll
 * interval.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;
#define USEC_INFINITY ((usec_t)UINT64_MAX)
#define USEC_PER_SEC ((usec_t)1000000ULL)
#define USEC_PER_MSEC ((usec_t)1000ULL)
#define NSEC_PER_USEC ((uint64_t)1000ULL)

usec_t now_usec(clockid_t clock);

/* Sleeps d; 0 when the time passed, -ECANCELED when a stop was requested. */
int sleep_usec(usec_t d);
/* Async-signal-safe. Wakes every sleeper; later sleeps return at once. */
void stop_request(void);
bool stop_requested(void);
/* t (µs on a clock) as the absolute time pthread_cond_timedwait() takes. */
struct timespec timespec_from_usec(usec_t t);
/* Waits on cond, a CLOCK_MONOTONIC one that lock guards (not held by the
 * caller), for d or until *stopping or stop_requested(); false when
 * stopped. */
bool cond_sleep_unless_stopped(pthread_cond_t *cond, pthread_mutex_t *lock, const bool *stopping, usec_t d);
/* Installs stop_request() for SIGTERM and SIGINT. */
int stop_on_signals(void);
/* For tests: clears the flag. */
void stop_reset(void);
/* An fd that becomes readable once a stop is requested (for poll loops),
 * or -1 when none could be made. Owned by this module. */
int stop_fd(void);

/* A uniformly distributed 64-bit random value (getrandom). */
uint64_t random_u64(void);
/* Uniform in [0, n); 0 when n is 0. */
uint64_t random_below(uint64_t n);

/* A command line's seconds (0 to 1e9, fractions allowed) as usec_t;
 * -EINVAL for anything else (negative, NaN, too large). */
int usec_from_seconds(double s, usec_t *ret);

/* "Full jitter": uniform in [0, min(cap, base * 2^attempt)), attempt from 0.
 * This is the schedule of rehttp's ExpJitterDelay used by the Go clients. */
usec_t backoff_full_jitter(usec_t base, usec_t cap, unsigned attempt);

/* cenkalti/backoff's ExponentialBackOff: each interval is the current one
 * randomized by +-randomization, then the current one grows by multiplier up
 * to max_interval; after max_elapsed (0: never) the schedule ends. */
typedef struct ExpBackoff {
        usec_t initial_interval;
        double multiplier;
        double randomization;
        usec_t max_interval;
        usec_t max_elapsed;
        /* state */
        usec_t current;
        usec_t started;
} ExpBackoff;

/* The library defaults: 500 ms, x1.5, +-50 %, 60 s, 15 min. */
#define EXP_BACKOFF_DEFAULTS \
        ((ExpBackoff){ .initial_interval = 500 * USEC_PER_MSEC, \
                       .multiplier = 1.5, \
                       .randomization = 0.5, \
                       .max_interval = 60 * USEC_PER_SEC, \
                       .max_elapsed = 15 * 60 * USEC_PER_SEC })

void exp_backoff_reset(ExpBackoff *b);
/* The next delay, or USEC_INFINITY when max_elapsed has passed. */
usec_t exp_backoff_next(ExpBackoff *b);

/* RFC 3339 UTC with seconds ("2026-11-23T09:07:00Z") into ret (>= 21 bytes). */
void format_rfc3339_utc(time_t t, char ret[static 32]);

/* Go's time.ParseDuration for non-negative durations: a sequence of
 * decimal numbers with units ns, us (µs), ms, s, m, h ("1h30m", "2.5s",
 * "0"); the result rounded down to microseconds. -EINVAL when malformed,
 * -ERANGE on overflow. */
int parse_go_duration(const char *s, usec_t *ret);
/* The shortest Go-style text of a duration ("1m30s", "500ms", "0s"). */
void format_go_duration(usec_t d, char ret[static 32]);
