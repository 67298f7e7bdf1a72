/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "macro.h"
#include "timeutil.h"

static atomic_bool stop_flag;
static atomic_int stop_eventfd = -1;

usec_t now_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / NSEC_PER_USEC;
}

static int stop_fd_get(void)
{
        int fd = atomic_load(&stop_eventfd), expected = -1, n;

        if (fd >= 0)
                return fd;
        n = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (n < 0)
                return -1;
        if (!atomic_compare_exchange_strong(&stop_eventfd, &expected, n)) {
                close(n);
                return expected;
        }
        return n;
}

int sleep_usec(usec_t d)
{
        usec_t until = now_usec(CLOCK_MONOTONIC) + d;
        int fd = stop_fd_get();

        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int timeout;

                if (atomic_load(&stop_flag))
                        return -ECANCELED;
                if (now >= until)
                        return 0;
                timeout = (int)MIN((until - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC, (usec_t)INT32_MAX);
                if (fd < 0) {
                        struct timespec ts = { .tv_sec = (time_t)((until - now) / USEC_PER_SEC),
                                               .tv_nsec = (long)((until - now) % USEC_PER_SEC * 1000) };
                        nanosleep(&ts, NULL);
                        continue;
                }
                (void)poll(&p, 1, timeout);
        }
}

void stop_request(void)
{
        uint64_t one = 1;
        int fd = atomic_load(&stop_eventfd), saved = errno;

        atomic_store(&stop_flag, true);
        if (fd >= 0)
                (void)!write(fd, &one, sizeof(one));
        errno = saved;
}

int stop_fd(void)
{
        return stop_fd_get();
}

bool stop_requested(void)
{
        return atomic_load(&stop_flag);
}

void stop_reset(void)
{
        uint64_t v;
        int fd = atomic_load(&stop_eventfd);

        atomic_store(&stop_flag, false);
        if (fd >= 0)
                (void)!read(fd, &v, sizeof(v));
}

static void on_stop_signal(int sig)
{
        (void)sig;
        stop_request();
}

int stop_on_signals(void)
{
        struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

        /* create the eventfd now: the handler must not allocate it */
        if (stop_fd_get() < 0)
                return negative_errno();
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
                return negative_errno();
        return 0;
}

uint64_t random_u64(void)
{
        uint64_t v = 0;

        while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v) && errno == EINTR)
                ;
        return v;
}

uint64_t random_below(uint64_t n)
{
        return n == 0 ? 0 : random_u64() % n;
}

int usec_from_seconds(double s, usec_t *ret)
{
        if (!(s >= 0) || s > 1e9)
                return -EINVAL;
        *ret = (usec_t)(s * (double)USEC_PER_SEC);
        return 0;
}

usec_t backoff_full_jitter(usec_t base, usec_t cap, unsigned attempt)
{
        usec_t ceiling = base;

        for (unsigned i = 0; i < attempt && ceiling < cap; i++)
                ceiling = ceiling > cap / 2 ? cap : ceiling * 2;
        return random_below(MIN(ceiling, cap));
}

void exp_backoff_reset(ExpBackoff *b)
{
        b->current = b->initial_interval;
        b->started = now_usec(CLOCK_MONOTONIC);
}

usec_t exp_backoff_next(ExpBackoff *b)
{
        double delta, lo, hi, r;
        usec_t next;

        if (b->started == 0)
                exp_backoff_reset(b);
        if (b->max_elapsed > 0 && now_usec(CLOCK_MONOTONIC) - b->started > b->max_elapsed)
                return USEC_INFINITY;

        delta = b->randomization * (double)b->current;
        lo = (double)b->current - delta;
        hi = (double)b->current + delta;
        r = (double)(random_u64() >> 11) / (double)(1ULL << 53);
        next = (usec_t)(lo + r * (hi - lo + 1));

        if ((double)b->current >= (double)b->max_interval / b->multiplier)
                b->current = b->max_interval;
        else
                b->current = (usec_t)((double)b->current * b->multiplier);
        return next;
}

void format_rfc3339_utc(time_t t, char ret[static 32])
{
        struct tm tm;

        gmtime_r(&t, &tm);
        strftime(ret, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct timespec timespec_from_usec(usec_t t)
{
        return (struct timespec){ .tv_sec = (time_t)(t / USEC_PER_SEC),
                                  .tv_nsec = (long)(t % USEC_PER_SEC * NSEC_PER_USEC) };
}

bool cond_sleep_unless_stopped(pthread_cond_t *cond, pthread_mutex_t *lock, const bool *stopping, usec_t d)
{
        usec_t at = now_usec(CLOCK_MONOTONIC) + d;
        struct timespec ts = timespec_from_usec(at);
        bool b;

        pthread_mutex_lock(lock);
        while (!*stopping && !stop_requested() && now_usec(CLOCK_MONOTONIC) < at)
                if (pthread_cond_timedwait(cond, lock, &ts) == ETIMEDOUT)
                        break;
        b = !*stopping && !stop_requested();
        pthread_mutex_unlock(lock);
        return b;
}

int parse_go_duration(const char *s, usec_t *ret)
{
        static const struct {
                const char *unit;
                double usec;
        } units[] = {
                /* longest first where one is a prefix of another */
                { "ns", 0.001 }, { "us", 1 },  { "\u00b5s", 1 }, { "\u03bcs", 1 },
                { "ms", 1000 },  { "s", 1e6 }, { "m", 60e6 },    { "h", 3600e6 },
        };
        double total = 0;
        const char *p = s;

        if (!s || !*s)
                return -EINVAL;
        if (streq(s, "0")) {
                *ret = 0;
                return 0;
        }
        while (*p) {
                double v = 0, frac = 0.1;
                bool digits = false, matched = false;

                while (*p >= '0' && *p <= '9') {
                        v = v * 10 + (*p++ - '0');
                        digits = true;
                }
                if (*p == '.') {
                        p++;
                        while (*p >= '0' && *p <= '9') {
                                v += (*p++ - '0') * frac;
                                frac /= 10;
                                digits = true;
                        }
                }
                if (!digits)
                        return -EINVAL;
                for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                        size_t n = strlen(units[i].unit);

                        /* "m" must not eat the "m" of "ms" */
                        if (strneq(p, units[i].unit, n) && !(streq(units[i].unit, "m") && p[1] == 's')) {
                                total += v * units[i].usec;
                                p += n;
                                matched = true;
                                break;
                        }
                }
                if (!matched)
                        return -EINVAL;
        }
        if (total >= (double)UINT64_MAX / 2)
                return -ERANGE;
        *ret = (usec_t)total;
        return 0;
}

void format_go_duration(usec_t d, char ret[static 32])
{
        usec_t h = d / (3600 * USEC_PER_SEC), m = d / (60 * USEC_PER_SEC) % 60, us = d % (60 * USEC_PER_SEC);
        int n = 0;

        if (d == 0) {
                snprintf(ret, 32, "0s");
                return;
        }
        if (d < USEC_PER_SEC) {
                if (d % USEC_PER_MSEC == 0)
                        snprintf(ret, 32, "%llums", (unsigned long long)(d / USEC_PER_MSEC));
                else
                        snprintf(ret, 32, "%lluus", (unsigned long long)d);
                return;
        }
        if (h > 0)
                n += snprintf(ret + n, 32 - (size_t)n, "%lluh", (unsigned long long)h);
        if (h > 0 || m > 0)
                n += snprintf(ret + n, 32 - (size_t)n, "%llum", (unsigned long long)m);
        if (us % USEC_PER_SEC == 0)
                snprintf(ret + n, 32 - (size_t)n, "%llus", (unsigned long long)(us / USEC_PER_SEC));
        else
                snprintf(ret + n, 32 - (size_t)n, "%llu.%06llus", (unsigned long long)(us / USEC_PER_SEC),
                         (unsigned long long)(us % USEC_PER_SEC));
}
