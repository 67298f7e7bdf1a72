/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <systemd/sd-daemon.h>

#include "cleanup.h"
#include "notify.h"
#include "strutil.h"

static pthread_once_t watchdog_once = PTHREAD_ONCE_INIT;
static usec_t watchdog_usec; /* 0: no watchdog */
static _Atomic usec_t watchdog_last;
static atomic_bool ready_sent;

static void watchdog_init(void)
{
        uint64_t usec = 0;

        /* > 0 only when $WATCHDOG_USEC is set and $WATCHDOG_PID, if set, is us */
        if (sd_watchdog_enabled(/* unset_environment= */ false, &usec) > 0)
                watchdog_usec = usec;
}

static usec_t watchdog_interval(void)
{
        (void)pthread_once(&watchdog_once, watchdog_init);
        return watchdog_usec;
}

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static char *status_last;

/* A status the manager already shows is not sent again (the poll loop
 * states it at every poll). */
static void notify_status(bool ready, const char *fmt, va_list ap)
{
        _cleanup_free_ char *status = NULL;
        bool same;

        if (!getenv("NOTIFY_SOCKET"))
                return;
        if (vasprintf(&status, fmt, ap) < 0)
                return;
        pthread_mutex_lock(&status_lock);
        same = status_last && streq(status_last, status);
        if (!same) {
                free(status_last);
                status_last = strdup(status);
        }
        pthread_mutex_unlock(&status_lock);
        if (!ready && same)
                return;
        (void)sd_notifyf(/* unset_environment= */ false, "%sSTATUS=%s", ready ? "READY=1\n" : "", status);
}

void agent_notify_ready(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        notify_status(!atomic_exchange(&ready_sent, true), fmt, ap);
        va_end(ap);
}

void agent_notify_status(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        notify_status(false, fmt, ap);
        va_end(ap);
}

void agent_notify_stopping(void)
{
        (void)sd_notify(/* unset_environment= */ false, "STOPPING=1\nSTATUS=stopping");
}

void agent_watchdog_ping(void)
{
        usec_t interval = watchdog_interval(), now, last;

        if (interval == 0)
                return;
        now = now_usec(CLOCK_MONOTONIC);
        last = atomic_load(&watchdog_last);
        if (last != 0 && now - last < interval / 4)
                return;
        if (!atomic_compare_exchange_strong(&watchdog_last, &last, now))
                return; /* another thread pinged just now */
        (void)sd_notify(/* unset_environment= */ false, "WATCHDOG=1");
}

int agent_sleep(usec_t d)
{
        usec_t interval = watchdog_interval();
        usec_t until = now_usec(CLOCK_MONOTONIC) + MIN(d, USEC_INFINITY / 2);

        if (interval == 0)
                return sleep_usec(d);
        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                int r;

                agent_watchdog_ping();
                if (now >= until)
                        return 0;
                r = sleep_usec(MIN(until - now, interval / 4));
                if (r < 0)
                        return r;
        }
}

struct AgentKeepalive {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stopping;
};

static void *keepalive_thread(void *userdata)
{
        AgentKeepalive *k = userdata;

        do
                agent_watchdog_ping();
        while (cond_sleep_unless_stopped(&k->cond, &k->lock, &k->stopping, watchdog_interval() / 4));
        return NULL;
}

AgentKeepalive *agent_watchdog_keepalive_begin(void)
{
        pthread_condattr_t attr;
        AgentKeepalive *k;

        if (watchdog_interval() == 0)
                return NULL;
        k = calloc(1, sizeof(*k));
        if (!k)
                return NULL;
        pthread_mutex_init(&k->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&k->cond, &attr);
        pthread_condattr_destroy(&attr);
        if (pthread_create(&k->thread, NULL, keepalive_thread, k) != 0) {
                pthread_cond_destroy(&k->cond);
                pthread_mutex_destroy(&k->lock);
                free(k);
                return NULL;
        }
        return k;
}

void agent_watchdog_keepalive_end(AgentKeepalive *k)
{
        if (!k)
                return;
        pthread_mutex_lock(&k->lock);
        k->stopping = true;
        pthread_cond_broadcast(&k->cond);
        pthread_mutex_unlock(&k->lock);
        pthread_join(k->thread, NULL);
        pthread_cond_destroy(&k->cond);
        pthread_mutex_destroy(&k->lock);
        free(k);
}
