/* SPDX-License-Identifier: Apache-2.0 */

/*
 * The controller half of bench/hub/bench-hub.py (which starts the servers
 * and makes the objects):
 *
 *   bench-hub KUBECONFIG SERVICE_URL NAMESPACE bmac COUNT
 *   bench-hub KUBECONFIG SERVICE_URL NAMESPACE nmstate INFRAENV
 *
 * Runs the hub's cache and one controller in-process, reconciling keys one
 * after another on this thread (as one worker does), and prints what each
 * pass took: time, reconciles, writes by kind, service calls, peak RSS.
 *
 * bmac: every BareMetalHost of the namespace (each matched to its Agent by
 * boot MAC), then the same pass again once the cache holds the writes:
 * that one must write nothing.
 *
 * nmstate: the InfraEnv whose selector picks the NMStateConfigs: the first
 * reconcile registers the infra-env with every config, the next one (the
 * cache caught up) must write nothing, then one NMStateConfig changes and
 * the reconcile after it sends the whole list again.
 */

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bmac.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "hub-controller.h"
#include "hub-metrics.h"
#include "hub-service.h"
#include "infraenv.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static long peak_rss_kb(void)
{
        struct rusage ru;

        return getrusage(RUSAGE_SELF, &ru) < 0 ? -1 : ru.ru_maxrss;
}

static double metric(HubMetrics *m, const char *name, const char *filter)
{
        return hub_metrics_sum(m, name, filter);
}

typedef struct Counters {
        double writes, patches, statuses, creates, service, service_seconds, reconciles;
} Counters;

static Counters counters(HubMetrics *m, const char *controller)
{
        _cleanup_free_ char *c = strdup_printf("controller=\"%s\"", controller);

        return (Counters){
                .writes = metric(m, "cradle_hub_writes_total", c),
                .patches = hub_metrics_sum(m, "cradle_hub_writes_total", "verb=\"patch\""),
                .statuses = hub_metrics_sum(m, "cradle_hub_writes_total", "verb=\"status\""),
                .creates = hub_metrics_sum(m, "cradle_hub_writes_total", "verb=\"create\""),
                .service = hub_metrics_sum(m, "cradle_hub_service_request_duration_seconds", NULL),
                .service_seconds =
                        hub_metrics_histogram_sum(m, "cradle_hub_service_request_duration_seconds", NULL),
                .reconciles = metric(m, "controller_runtime_reconcile_total", c),
        };
}

static void report(const char *what, usec_t t0, const Counters *a, const Counters *b, unsigned keys)
{
        double secs = (double)(now_usec(CLOCK_MONOTONIC) - t0) / (double)USEC_PER_SEC;

        printf("%s: %u objects in %.3f s (%.2f ms each; %.3f s of it waiting for the service), %.0f "
               "reconciles, "
               "writes %.0f (patch %.0f, status %.0f, create %.0f), service calls %.0f, peak RSS %ld kB\n",
               what, keys, secs, keys ? secs * 1000.0 / keys : 0.0, b->service_seconds - a->service_seconds,
               b->reconciles - a->reconciles, b->writes - a->writes, b->patches - a->patches,
               b->statuses - a->statuses, b->creates - a->creates, b->service - a->service, peak_rss_kb());
        fflush(stdout);
}

/* Reconciles each key until it neither requeues nor waits for the cache. */
static void pass(HubController *c, char **keys)
{
        STRV_FOREACH (k, keys)
                for (int tries = 0; tries < 100; tries++) {
                        HubReconcileStats st = {};

                        if (hub_controller_reconcile(c, *k, &st) < 0)
                                break;
                        /* the cache has not caught up with our own write yet */
                        if (st.result == HUB_RECONCILE_REQUEUE_AFTER && st.requeue_after < USEC_PER_SEC) {
                                usleep(20 * 1000);
                                continue;
                        }
                        break;
                }
}

int main(int argc, char **argv)
{
        _cleanup_(kube_client_freep) KubeClient *kube = NULL;
        _cleanup_free_ char *err = NULL;
        HubCache *cache = NULL;
        HubService *service = NULL;
        HubMetrics *metrics = NULL;
        HubController *ctl = NULL;
        HubConfig config = { .image_type = (char *)"minimal-iso", .image_cooldown = 0 };
        HubContext ctx = {};
        char *namespaces[2] = {};
        const char *mode;
        usec_t t0;
        int r;

        if (argc != 6) {
                fprintf(stderr,
                        "usage: bench-hub KUBECONFIG SERVICE_URL NAMESPACE bmac|nmstate COUNT|INFRAENV\n");
                return 2;
        }
        log_setup("bench-hub");
        log_set_max_level(LOG_WARNING);
        mode = argv[4];
        namespaces[0] = argv[3];
        config.service_url = argv[2];
        {
                _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;

                r = kube_config_load_default(argv[1], NULL, &cfg, &err);
                if (r >= 0)
                        /* no client-side limit: the benchmark measures the hub, not a QPS setting */
                        r = kube_client_new(cfg, &(KubeClientOptions){ .qps = -1 }, &kube, &err);
                if (r < 0) {
                        fprintf(stderr, "bench-hub: %s\n", strna(err));
                        return 1;
                }
        }
        if (hub_metrics_new(&metrics) < 0 || hub_cache_new(kube, namespaces, 0, &cache) < 0 ||
            hub_service_new(&(HubServiceOptions){ .url = argv[2] }, metrics, &service, &err) < 0 ||
            hub_cache_resolve(cache, &err) < 0) {
                fprintf(stderr, "bench-hub: cannot set up: %s\n", strna(err));
                return 1;
        }
        ctx = (HubContext){ .kube = kube,
                            .cache = cache,
                            .service = service,
                            .metrics = metrics,
                            .config = &config,
                            .identity = "bench-hub" };
        r = hub_controller_new(streq(mode, "bmac") ? &hub_bmac_controller : &hub_infraenv_controller, &ctx,
                               1, &ctl);
        if (r < 0) {
                fprintf(stderr, "bench-hub: cannot make the controller: %s\n", strerror(-r));
                return 1;
        }
        ctx.controllers = &ctl;
        ctx.n_controllers = 1;

        t0 = now_usec(CLOCK_MONOTONIC);
        if (hub_cache_start(cache, &err) < 0 || hub_cache_wait_synced(cache, 600 * USEC_PER_SEC) < 0) {
                fprintf(stderr, "bench-hub: cache: %s\n", strna(err));
                return 1;
        }
        printf("cache synced in %.2f s: %zu InfraEnvs, %zu NMStateConfigs, %zu Agents, %zu BareMetalHosts, "
               "peak RSS %ld kB\n",
               (double)(now_usec(CLOCK_MONOTONIC) - t0) / (double)USEC_PER_SEC,
               hub_cache_count(cache, HUB_KIND_INFRAENV), hub_cache_count(cache, HUB_KIND_NMSTATECONFIG),
               hub_cache_count(cache, HUB_KIND_AGENT), hub_cache_count(cache, HUB_KIND_BMH), peak_rss_kb());
        fflush(stdout);

        if (streq(mode, "bmac")) {
                _cleanup_strv_free_ char **keys = NULL;
                _cleanup_free_ char *v = strdup_printf("%s/%s", argv[3], "myinfraenv");
                Counters a, b;

                r = hub_cache_index_keys(cache, HUB_KIND_BMH, HUB_INDEX_BMH_INFRAENV, v, &keys);
                if (r < 0 || strv_length(keys) == 0) {
                        fprintf(stderr, "bench-hub: no BareMetalHosts\n");
                        return 1;
                }
                a = counters(metrics, "bmac");
                t0 = now_usec(CLOCK_MONOTONIC);
                pass(ctl, keys);
                b = counters(metrics, "bmac");
                report("match and approve", t0, &a, &b, strv_length(keys));
                /* the cache catches up with the writes, then again: nothing to do */
                sleep(3);
                a = b;
                t0 = now_usec(CLOCK_MONOTONIC);
                pass(ctl, keys);
                b = counters(metrics, "bmac");
                report("again, nothing changed", t0, &a, &b, strv_length(keys));
        } else {
                _cleanup_free_ char *key = strdup_printf("%s/%s", argv[3], argv[5]);
                char *keys[] = { key, NULL };
                Counters a, b;

                a = counters(metrics, "infraenv");
                t0 = now_usec(CLOCK_MONOTONIC);
                pass(ctl, keys);
                b = counters(metrics, "infraenv");
                report("register with the static network config", t0, &a, &b, 1);
                sleep(3);
                a = b;
                t0 = now_usec(CLOCK_MONOTONIC);
                pass(ctl, keys);
                b = counters(metrics, "infraenv");
                report("again, nothing changed", t0, &a, &b, 1);
                printf("ready for a change\n");
                fflush(stdout);
                /* the driver changes one NMStateConfig and says so */
                {
                        char line[64];

                        if (!fgets(line, sizeof(line), stdin))
                                return 1;
                }
                sleep(2);
                a = b;
                t0 = now_usec(CLOCK_MONOTONIC);
                pass(ctl, keys);
                b = counters(metrics, "infraenv");
                report("one NMStateConfig changed", t0, &a, &b, 1);
        }
        hub_controller_free(ctl);
        hub_cache_free(cache);
        hub_service_free(service);
        hub_metrics_free(metrics);
        return 0;
}
