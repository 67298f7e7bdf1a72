/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package with a LeaseLock, so that of several replicas only
 * one acts.
 *
 * A thread tries to acquire the lease every retry_period (jittered by up to
 * 1.2×, as client-go): it takes it when the lease does not exist, when it
 * holds it already, or when the record has not changed for lease_duration as
 * observed on the local clock (never from the timestamps in the record, so
 * clock skew between replicas does not matter). Writes are conditional on
 * the lease's resourceVersion: of two contenders one gets a Conflict. Once
 * leading it renews every retry_period; when no renewal succeeded within
 * renew_deadline it stops leading (on_stopped_leading) and, as client-go's
 * Run, does not try again: the caller decides (usually: exit and restart).
 *
 * The lease spec is written as client-go writes it: holderIdentity,
 * leaseDurationSeconds, acquireTime (kept while the holder renews), renewTime
 * (MicroTime: RFC 3339 UTC with microseconds) and leaseTransitions (+1 when
 * the holder changes). With release_on_cancel, kube_leader_stop() of the
 * leader empties holderIdentity and sets leaseDurationSeconds to 1 so another
 * replica takes over at once.
 *
 * The client's request timeout should not exceed renew_deadline.
 * Callbacks run on the elector's thread.
 */

#include <stdbool.h>

#include "macro.h"
#include "timeutil.h"

typedef struct KubeClient KubeClient;
typedef struct KubeLeader KubeLeader;

typedef struct KubeLeaderCallbacks {
        void (*on_started_leading)(void *userdata);
        /* Called once after on_started_leading, when the lease was lost or
         * the elector stopped; never when it did not lead. */
        void (*on_stopped_leading)(void *userdata);
        /* The holder observed changed (also to ourselves); identity "" when
         * nobody holds it. */
        void (*on_new_leader)(const char *identity, void *userdata);
        void *userdata;
} KubeLeaderCallbacks;

typedef struct KubeLeaderConfig {
        const char *ns; /* the Lease's namespace */
        const char *name; /* the Lease's name */
        const char *identity; /* this replica (client-go: hostname + "_" + uuid) */
        usec_t lease_duration; /* 0: 15 s (whole seconds in the lease) */
        usec_t renew_deadline; /* 0: 10 s */
        usec_t retry_period; /* 0: 2 s */
        bool release_on_cancel;
} KubeLeaderConfig;

/* cfg's strings are copied; cb may be NULL. -EINVAL when the durations are
 * not lease > renew deadline > 1.2 × retry (client-go's checks). */
int kube_leader_new(KubeClient *c, const KubeLeaderConfig *cfg, const KubeLeaderCallbacks *cb,
                    KubeLeader **ret);
/* Stops it first. Accepts NULL, returns NULL. */
KubeLeader *kube_leader_free(KubeLeader *le);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeLeader *, kube_leader_free)

/* Starts the elector's thread. */
int kube_leader_start(KubeLeader *le);
/* Stops the thread (at once; a request in progress first ends), releasing
 * the lease when configured and leading; on_stopped_leading when it led. */
void kube_leader_stop(KubeLeader *le);
/* True when the elector has the lease and its last renewal is less than
 * renew_deadline old. */
bool kube_leader_is_leader(KubeLeader *le);
/* The holder last observed (a copy), or NULL. */
char *kube_leader_get_leader(KubeLeader *le);
/* True once the thread ended (lost the lease, or stopped). */
bool kube_leader_done(KubeLeader *le);

/* MicroTime: "2006-01-02T15:04:05.000000Z" (ret >= 28 bytes). */
void kube_format_micro_time(usec_t realtime, char ret[static 32]);
