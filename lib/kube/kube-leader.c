/* SPDX-License-Identifier: Apache-2.0 */

#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "kube-leader.h"
#include "kube.h"
#include "log.h"
#include "macro.h"

#define JITTER_FACTOR 1.2

struct KubeLeader {
        KubeClient *client;
        char *ns, *name, *identity;
        usec_t lease_duration, renew_deadline, retry_period;
        bool release_on_cancel;
        KubeLeaderCallbacks cb;

        /* the elector thread's own */
        char *observed_spec; /* compact JSON of the last spec seen */
        usec_t observed_time; /* monotonic, when it last changed */
        char *observed_holder; /* "" when none */
        int64_t observed_transitions;
        char *observed_acquire;

        pthread_mutex_t lock;
        pthread_cond_t cond;
        pthread_t thread;
        bool started, stopping, done, leading;
        usec_t last_renew; /* monotonic */
        char *leader; /* copy of observed_holder for other threads */
};

void kube_format_micro_time(usec_t realtime, char ret[static 32])
{
        time_t t = (time_t)(realtime / USEC_PER_SEC);
        struct tm tm;

        size_t k;

        (void)gmtime_r(&t, &tm);
        /* room is left for ".uuuuuuZ"; a year past 9999 does not fit a
         * MicroTime anyway and leaves the date empty */
        k = strftime(ret, 32 - 9, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(ret + k, 32 - k, ".%06uZ", (unsigned)(realtime % USEC_PER_SEC));
}

static bool stopping(KubeLeader *le)
{
        bool b;

        if (stop_requested())
                return true;
        pthread_mutex_lock(&le->lock);
        b = le->stopping;
        pthread_mutex_unlock(&le->lock);
        return b;
}

/* wait.Jitter(retry, 1.2): uniform in [retry, retry * 2.2) */
static usec_t jittered(usec_t d)
{
        return d + random_below((uint64_t)((double)d * JITTER_FACTOR) + 1);
}

static const char *spec_string(json_object *spec, const char *field)
{
        json_object *v;

        if (!spec || !json_object_object_get_ex(spec, field, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

static int64_t spec_int(json_object *spec, const char *field)
{
        json_object *v;

        if (!spec || !json_object_object_get_ex(spec, field, &v) || !json_object_is_type(v, json_type_int))
                return 0;
        return json_object_get_int64(v);
}

/* LeaderElectionRecordToLeaseSpec: every field, in LeaseSpec's order. */
static json_object *make_spec(const char *holder, int64_t duration_s, const char *acquire, const char *renew,
                              int64_t transitions)
{
        json_object *s = json_object_new_object();

        if (!s)
                return NULL;
        json_object_object_add(s, "holderIdentity", json_object_new_string(holder));
        json_object_object_add(s, "leaseDurationSeconds", json_object_new_int64(duration_s));
        json_object_object_add(s, "acquireTime", json_object_new_string(acquire));
        json_object_object_add(s, "renewTime", json_object_new_string(renew));
        json_object_object_add(s, "leaseTransitions", json_object_new_int64(transitions));
        return s;
}

static void set_observed(KubeLeader *le, json_object *spec, usec_t now)
{
        const char *holder = spec_string(spec, "holderIdentity"), *s;
        char *copy;
        bool changed;

        s = spec ? json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN) : "";
        free(le->observed_spec);
        le->observed_spec = strdup(s);
        le->observed_time = now;
        le->observed_transitions = spec_int(spec, "leaseTransitions");
        free(le->observed_acquire);
        le->observed_acquire =
                spec_string(spec, "acquireTime") ? strdup(spec_string(spec, "acquireTime")) : NULL;

        holder = holder ?: "";
        changed = !le->observed_holder || !streq(le->observed_holder, holder);
        copy = strdup(holder);
        if (changed) {
                free(le->observed_holder);
                le->observed_holder = strdup(holder);
        }
        pthread_mutex_lock(&le->lock);
        free(le->leader);
        le->leader = copy;
        pthread_mutex_unlock(&le->lock);
        if (changed && le->cb.on_new_leader)
                le->cb.on_new_leader(holder, le->cb.userdata);
}

static json_object *new_lease(KubeLeader *le, json_object *spec)
{
        json_object *o = json_object_new_object(), *md = json_object_new_object();

        json_object_object_add(o, "apiVersion", json_object_new_string("coordination.k8s.io/v1"));
        json_object_object_add(o, "kind", json_object_new_string("Lease"));
        json_object_object_add(md, "name", json_object_new_string(le->name));
        json_object_object_add(md, "namespace", json_object_new_string(le->ns));
        json_object_object_add(o, "metadata", md);
        json_object_object_add(o, "spec", spec);
        return o;
}

/* tryAcquireOrRenew: true when we hold the lease now. release: write the
 * released record instead (only when we hold it). */
static bool try_acquire_or_renew(KubeLeader *le, bool release)
{
        _cleanup_(json_object_putp) json_object *lease = NULL, *answer = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *spec = NULL, *old_spec = NULL;
        char now_s[32];
        const char *holder, *old_s;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        int64_t duration_s = (int64_t)(le->lease_duration / USEC_PER_SEC);
        bool is_leader;
        int r;

        kube_format_micro_time(now_usec(CLOCK_REALTIME), now_s);
        r = kube_get(le->client, &kube_resource_leases, le->ns, le->name, &lease, &st);
        if (r == -ENOENT) {
                if (release)
                        return false;
                spec = make_spec(le->identity, duration_s, now_s, now_s, 0);
                lease = new_lease(le, spec);
                kube_status_done(&st);
                r = kube_create(le->client, &kube_resource_leases, le->ns, lease, &answer, &st);
                if (r < 0) {
                        log_debug("lease %s/%s: cannot create: %s", le->ns, le->name, strna(st.message));
                        return false;
                }
                set_observed(le, spec, now);
                return true;
        }
        if (r < 0) {
                log_debug("lease %s/%s: cannot get: %s", le->ns, le->name, strna(st.message));
                return false;
        }

        (void)json_object_object_get_ex(lease, "spec", &old_spec);
        old_s = old_spec ? json_object_to_json_string_ext(old_spec, JSON_C_TO_STRING_PLAIN) : "";
        if (!streq_ptr(le->observed_spec, old_s))
                set_observed(le, old_spec, now);
        holder = strempty(spec_string(old_spec, "holderIdentity"));
        is_leader = streq(holder, le->identity);
        if (!isempty(holder) && le->observed_time + le->lease_duration > now && !is_leader)
                return false;
        if (release && !is_leader)
                return false;

        if (release)
                /* client-go's release: no holder, 1 s, transitions kept */
                spec = make_spec("", 1, now_s, now_s, le->observed_transitions);
        else if (is_leader)
                spec = make_spec(le->identity, duration_s, le->observed_acquire ?: now_s, now_s,
                                 le->observed_transitions);
        else
                spec = make_spec(le->identity, duration_s, now_s, now_s, le->observed_transitions + 1);
        if (!spec)
                return false;
        json_object_object_add(lease, "spec", spec);
        kube_status_done(&st);
        /* conditional on the resourceVersion of the get */
        r = kube_update(le->client, &kube_resource_leases, le->ns, lease, &answer, &st);
        if (r < 0) {
                log_debug("lease %s/%s: cannot update: %s", le->ns, le->name, strna(st.message));
                return false;
        }
        set_observed(le, spec, now);
        return true;
}

static void set_leading(KubeLeader *le, bool leading)
{
        pthread_mutex_lock(&le->lock);
        le->leading = leading;
        if (leading)
                le->last_renew = now_usec(CLOCK_MONOTONIC);
        pthread_mutex_unlock(&le->lock);
}

static void *leader_thread(void *p)
{
        KubeLeader *le = p;

        /* acquire */
        for (;;) {
                if (stopping(le))
                        goto finish;
                if (try_acquire_or_renew(le, false))
                        break;
                if (!cond_sleep_unless_stopped(&le->cond, &le->lock, &le->stopping,
                                               jittered(le->retry_period)))
                        goto finish;
        }
        set_leading(le, true);
        if (le->cb.on_started_leading)
                le->cb.on_started_leading(le->cb.userdata);

        /* renew until a renewal fails for renew_deadline */
        for (;;) {
                usec_t deadline = now_usec(CLOCK_MONOTONIC) + le->renew_deadline;
                bool renewed = false;

                if (!cond_sleep_unless_stopped(&le->cond, &le->lock, &le->stopping, le->retry_period))
                        break;
                while (!stopping(le)) {
                        if (try_acquire_or_renew(le, false)) {
                                renewed = true;
                                break;
                        }
                        if (now_usec(CLOCK_MONOTONIC) + le->retry_period >= deadline)
                                break;
                        if (!cond_sleep_unless_stopped(&le->cond, &le->lock, &le->stopping,
                                                       le->retry_period))
                                break;
                }
                if (!renewed)
                        break;
                set_leading(le, true);
        }
        set_leading(le, false);
        if (stopping(le) && le->release_on_cancel)
                (void)try_acquire_or_renew(le, true);
        if (le->cb.on_stopped_leading)
                le->cb.on_stopped_leading(le->cb.userdata);
finish:
        pthread_mutex_lock(&le->lock);
        le->done = true;
        pthread_cond_broadcast(&le->cond);
        pthread_mutex_unlock(&le->lock);
        return NULL;
}

int kube_leader_new(KubeClient *c, const KubeLeaderConfig *cfg, const KubeLeaderCallbacks *cb,
                    KubeLeader **ret)
{
        KubeLeader *le;
        pthread_condattr_t attr;

        if (isempty(cfg->ns) || isempty(cfg->name) || isempty(cfg->identity))
                return -EINVAL;
        le = calloc(1, sizeof(KubeLeader));
        if (!le)
                return -ENOMEM;
        le->client = c;
        le->lease_duration = cfg->lease_duration ?: 15 * USEC_PER_SEC;
        le->renew_deadline = cfg->renew_deadline ?: 10 * USEC_PER_SEC;
        le->retry_period = cfg->retry_period ?: 2 * USEC_PER_SEC;
        le->release_on_cancel = cfg->release_on_cancel;
        if (cb)
                le->cb = *cb;
        /* client-go's NewLeaderElector checks; whole seconds in the lease */
        if (le->lease_duration <= le->renew_deadline ||
            (double)le->renew_deadline <= JITTER_FACTOR * (double)le->retry_period ||
            le->lease_duration < USEC_PER_SEC) {
                free(le);
                return -EINVAL;
        }
        le->ns = strdup(cfg->ns);
        le->name = strdup(cfg->name);
        le->identity = strdup(cfg->identity);
        if (!le->ns || !le->name || !le->identity) {
                free(le->ns);
                free(le->name);
                free(le->identity);
                free(le);
                return -ENOMEM;
        }
        pthread_mutex_init(&le->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&le->cond, &attr);
        pthread_condattr_destroy(&attr);
        *ret = le;
        return 0;
}

KubeLeader *kube_leader_free(KubeLeader *le)
{
        if (!le)
                return NULL;
        kube_leader_stop(le);
        pthread_mutex_destroy(&le->lock);
        pthread_cond_destroy(&le->cond);
        free(le->ns);
        free(le->name);
        free(le->identity);
        free(le->observed_spec);
        free(le->observed_holder);
        free(le->observed_acquire);
        free(le->leader);
        free(le);
        return NULL;
}

int kube_leader_start(KubeLeader *le)
{
        int r;

        pthread_mutex_lock(&le->lock);
        if (le->started) {
                pthread_mutex_unlock(&le->lock);
                return -EBUSY;
        }
        r = -pthread_create(&le->thread, NULL, leader_thread, le);
        if (r == 0)
                le->started = true;
        pthread_mutex_unlock(&le->lock);
        return r;
}

void kube_leader_stop(KubeLeader *le)
{
        bool started;

        pthread_mutex_lock(&le->lock);
        started = le->started;
        le->stopping = true;
        pthread_cond_broadcast(&le->cond);
        pthread_mutex_unlock(&le->lock);
        if (!started)
                return;
        (void)pthread_join(le->thread, NULL);
        pthread_mutex_lock(&le->lock);
        le->started = false;
        pthread_mutex_unlock(&le->lock);
}

bool kube_leader_is_leader(KubeLeader *le)
{
        bool b;

        pthread_mutex_lock(&le->lock);
        b = le->leading && now_usec(CLOCK_MONOTONIC) < le->last_renew + le->renew_deadline;
        pthread_mutex_unlock(&le->lock);
        return b;
}

char *kube_leader_get_leader(KubeLeader *le)
{
        char *s;

        pthread_mutex_lock(&le->lock);
        s = le->leader ? strdup(le->leader) : NULL;
        pthread_mutex_unlock(&le->lock);
        return s;
}

bool kube_leader_done(KubeLeader *le)
{
        bool b;

        pthread_mutex_lock(&le->lock);
        b = le->done;
        pthread_mutex_unlock(&le->lock);
        return b;
}
