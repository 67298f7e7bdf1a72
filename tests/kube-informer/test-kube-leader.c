/* SPDX-License-Identifier: Apache-2.0 */

#include <json-c/json.h>
#include <pthread.h>

#include "cleanup.h"
#include "kube/kube-leader.h"
#include "kube/kube.h"
#include "macro.h"
#include "strutil.h"
#include "tests/kube-informer/kubetest.h"
#include "tests/tests.h"

static KubeTest kt;

/* What the electors did, in order: "a+" started leading, "a-" stopped. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char history[64];

static void note(const char *who, char what)
{
        pthread_mutex_lock(&log_lock);
        size_t n = strlen(history);

        if (n + 3 < sizeof(history)) {
                history[n] = who[0];
                history[n + 1] = what;
                history[n + 2] = '\0';
        }
        pthread_mutex_unlock(&log_lock);
}

static void started(void *userdata)
{
        note(userdata, '+');
}

static void stopped(void *userdata)
{
        note(userdata, '-');
}

static bool history_is(const char *s)
{
        bool b;

        pthread_mutex_lock(&log_lock);
        b = streq(history, s);
        pthread_mutex_unlock(&log_lock);
        return b;
}

static void wait_history(const char *s)
{
        for (unsigned i = 0; !history_is(s); i++) {
                if (i >= 1200)
                        test_fail(__FILE__, __LINE__, "history is '%s', expected '%s'", history, s);
                (void)sleep_usec(50 * USEC_PER_MSEC);
        }
}

static json_object *get_spec(json_object **lease)
{
        _cleanup_kube_status_ KubeStatus st = {};

        ASSERT_OK(kube_get(kt.client, &kube_resource_leases, kt.ns, "cradle-test", lease, &st));
        return json_object_object_get(*lease, "spec");
}

static const char *str(json_object *o, const char *k)
{
        return json_object_get_string(json_object_object_get(o, k));
}

static bool is_micro_time(const char *s)
{
        /* 2026-11-23T13:05:01.123456Z */
        if (!s || strlen(s) != 27 || s[4] != '-' || s[10] != 'T' || s[19] != '.' || s[26] != 'Z')
                return false;
        for (size_t i = 20; i < 26; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        return true;
}

static KubeLeader *elector(KubeClient *c, const char *id, bool release)
{
        KubeLeader *le = NULL;
        KubeLeaderConfig cfg = {
                .ns = kt.ns,
                .name = "cradle-test",
                .identity = id,
                .lease_duration = 4 * USEC_PER_SEC,
                .renew_deadline = 2 * USEC_PER_SEC,
                .retry_period = 300 * USEC_PER_MSEC,
                .release_on_cancel = release,
        };
        KubeLeaderCallbacks cb = { .on_started_leading = started,
                                   .on_stopped_leading = stopped,
                                   .userdata = (void *)id };

        ASSERT_OK(kube_leader_new(c, &cfg, &cb, &le));
        return le;
}

TEST(config_checks)
{
        KubeLeader *le = NULL;
        KubeLeaderConfig cfg = { .ns = "x", .name = "y", .identity = "z" };

        kubetest_setup(&kt, NULL);
        /* client-go's defaults pass */
        ASSERT_OK(kube_leader_new(kt.client, &cfg, NULL, &le));
        le = kube_leader_free(le);
        cfg.renew_deadline = 20 * USEC_PER_SEC; /* longer than the lease */
        ASSERT_ERROR(kube_leader_new(kt.client, &cfg, NULL, &le), EINVAL);
        cfg.renew_deadline = 2 * USEC_PER_SEC; /* <= 1.2 x retry (2 s) */
        ASSERT_ERROR(kube_leader_new(kt.client, &cfg, NULL, &le), EINVAL);
        cfg.identity = "";
        ASSERT_ERROR(kube_leader_new(kt.client, &cfg, NULL, &le), EINVAL);
}

TEST(micro_time)
{
        char s[32];

        kube_format_micro_time(1763903101123456ULL, s);
        ASSERT_STREQ(s, "2025-11-23T13:05:01.123456Z");
        kube_format_micro_time(1763903101000001ULL, s);
        ASSERT_STREQ(s, "2025-11-23T13:05:01.000001Z");
}

TEST(takeover)
{
        _cleanup_(json_object_putp) json_object *lease = NULL, *lease2 = NULL, *lease3 = NULL;
        _cleanup_free_ char *seen = NULL;
        KubeClient *ca, *cb;
        KubeLeader *a, *b;
        json_object *spec;
        bool deny;

        kubetest_setup(&kt, NULL);
        deny = kubetest_has_control(&kt);
        /* with the test server, "a stops renewing" is a 403 on its updates;
         * elsewhere a stops without releasing, as a crashed replica */
        ca = deny ? kubetest_new_user_client(&kt, "elector-a") : kubetest_new_client(&kt);
        cb = deny ? kubetest_new_user_client(&kt, "elector-b") : kubetest_new_client(&kt);
        a = elector(ca, "a", false);
        b = elector(cb, "b", true);

        ASSERT_OK(kube_leader_start(a));
        wait_history("a+");
        ASSERT_OK(kube_leader_start(b));
        /* b has seen a's lease at least once */
        for (unsigned i = 0; !seen || !streq(seen, "a"); i++) {
                ASSERT_TRUE(i < 1200);
                free(seen);
                (void)sleep_usec(50 * USEC_PER_MSEC);
                seen = kube_leader_get_leader(b);
        }
        ASSERT_TRUE(kube_leader_is_leader(a));
        ASSERT_FALSE(kube_leader_is_leader(b));
        ASSERT_TRUE(history_is("a+"));

        spec = get_spec(&lease);
        ASSERT_STREQ(str(spec, "holderIdentity"), "a");
        ASSERT_EQ(json_object_get_int(json_object_object_get(spec, "leaseDurationSeconds")), 4);
        ASSERT_EQ(json_object_get_int(json_object_object_get(spec, "leaseTransitions")), 0);
        ASSERT_TRUE(is_micro_time(str(spec, "acquireTime")));
        ASSERT_TRUE(is_micro_time(str(spec, "renewTime")));

        if (deny) {
                _cleanup_(json_object_putp) json_object *rule = json_tokener_parse(
                        "{\"user\":\"elector-a\",\"verb\":\"update\",\"resource\":\"leases\"}");

                ASSERT_EQ(kubetest_control(&kt, "POST", "/deny", rule, NULL), 200);
        } else
                kube_leader_stop(a);

        /* a gives up at its renew deadline, before b may take over */
        wait_history("a+a-b+");
        ASSERT_TRUE(kube_leader_done(a));
        ASSERT_FALSE(kube_leader_is_leader(a));
        ASSERT_TRUE(kube_leader_is_leader(b));
        spec = get_spec(&lease2);
        ASSERT_STREQ(str(spec, "holderIdentity"), "b");
        ASSERT_EQ(json_object_get_int(json_object_object_get(spec, "leaseTransitions")), 1);

        /* b releases on stop */
        kube_leader_stop(b);
        ASSERT_TRUE(history_is("a+a-b+b-"));
        spec = get_spec(&lease3);
        ASSERT_STREQ(str(spec, "holderIdentity"), "");
        ASSERT_EQ(json_object_get_int(json_object_object_get(spec, "leaseDurationSeconds")), 1);
        ASSERT_EQ(json_object_get_int(json_object_object_get(spec, "leaseTransitions")), 1);

        if (deny)
                ASSERT_EQ(kubetest_control(&kt, "DELETE", "/deny", NULL, NULL), 200);
        kube_leader_free(a);
        kube_leader_free(b);
        kube_client_free(ca);
        kube_client_free(cb);
}

DEFINE_TEST_MAIN
