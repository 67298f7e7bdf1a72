/* SPDX-License-Identifier: Apache-2.0 */

/*
 * The controller half of bench/hub/bench-hub.py (which starts the servers
 * and makes the objects):
 *
 *   bench-hub KUBECONFIG SERVICE_URL NAMESPACE bmac COUNT
 *   bench-hub KUBECONFIG SERVICE_URL NAMESPACE nmstate INFRAENV
 *   bench-hub KUBECONFIG SERVICE_URL NAMESPACE install CLUSTERS
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
 *
 * install: the ClusterDeployment and Agent controllers over every
 * ClusterDeployment and every host of the InfraEnvs (the service's hosts
 * as the poller lists them): passes until one writes nothing (the Agents
 * created, bound, their status, the ACIs' status), then the measured
 * pass with nothing to change (a poller resync first, which must find
 * nothing changed); then one host changes in the service (no event: the
 * next resync finds it) and the keys the poller names for it are
 * reconciled: exactly the writes that change needs.
 */

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent.h"
#include "bmac.h"
#include "cleanup.h"
#include "cluster.h"
#include "hub-cache.h"
#include "hub-controller.h"
#include "hub-glue.h"
#include "hub-metrics.h"
#include "hub-names.h"
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

/* ---- install ---- */

typedef struct Glue {
        HubCache *cache;
        HubService *service;
        char **agent_keys, **cd_keys; /* what the poller said changed */
} Glue;

static int tracked_infra_envs(char ***ret, void *userdata)
{
        return hub_tracked_ids(((Glue *)userdata)->cache, HUB_KIND_INFRAENV, HUB_ANNOTATION_INFRAENV_ID,
                               ret);
}

static int tracked_clusters(char ***ret, void *userdata)
{
        return hub_tracked_ids(((Glue *)userdata)->cache, HUB_KIND_CLUSTERDEPLOYMENT,
                               HUB_ANNOTATION_CLUSTER_ID, ret);
}

/* forgets the keys the poller named */
static void glue_forget(Glue *g)
{
        strv_free(g->agent_keys);
        strv_free(g->cd_keys);
        g->agent_keys = g->cd_keys = NULL;
}

static void add_keys(char ***to, char **keys)
{
        STRV_FOREACH (k, keys)
                if (!strv_contains(*to, *k))
                        (void)strv_extend(to, *k);
}

static void cluster_changed(const char *cluster_id, void *userdata)
{
        Glue *g = userdata;
        _cleanup_strv_free_ char **keys = NULL;

        if (hub_cache_index_keys(g->cache, HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_CLUSTER_ID, cluster_id,
                                 &keys) >= 0)
                add_keys(&g->cd_keys, keys);
}

/* as cradle-hub's glue (hub.c): the host's Agent, and its cluster */
static void host_changed(const char *infra_env_id, const char *host_id, void *userdata)
{
        Glue *g = userdata;
        _cleanup_strv_free_ char **agents = NULL, **cds = NULL;

        if (hub_host_changed_keys(g->cache, g->service, infra_env_id, host_id, &agents, &cds) < 0)
                return;
        add_keys(&g->agent_keys, agents);
        add_keys(&g->cd_keys, cds);
}

static void nothing(const char *id, void *userdata)
{
        (void)id;
        (void)userdata;
}

static int collect_key(json_object *obj, void *userdata)
{
        return strv_extendf(userdata, "%s/%s", kube_object_namespace(obj), kube_object_name(obj));
}

/* every host of every InfraEnv as an Agent key, every ClusterDeployment */
static int all_keys(Glue *g, const char *ns, char ***ret_agents, char ***ret_cds)
{
        _cleanup_strv_free_ char **ids = NULL;
        int r;

        r = tracked_infra_envs(&ids, g);
        STRV_FOREACH (id, ids) {
                _cleanup_strv_free_ char **hosts = NULL;

                r = hub_service_host_ids(g->service, *id, &hosts);
                if (r < 0)
                        return r;
                STRV_FOREACH (h, hosts)
                        if (strv_extendf(ret_agents, "%s/%s", ns, *h) < 0)
                                return -ENOMEM;
        }
        return r < 0 ? r : hub_cache_foreach(g->cache, HUB_KIND_CLUSTERDEPLOYMENT, collect_key, ret_cds);
}

static void pass(HubController *c, char **keys);

static void two_passes(HubController **ctl, char **agents, char **cds)
{
        pass(ctl[0], cds);
        pass(ctl[1], agents);
}

static void install_counters(HubMetrics *m, Counters *ret)
{
        Counters a = counters(m, "agent"), c = counters(m, "clusterdeployment");

        *ret = a;
        ret->writes += c.writes;
        ret->reconciles += c.reconciles;
}

/* the poller's resync (every host list and cluster fetched again):
 * forgets what it named before, says what it names now */
static int resync(HubService *service, const HubServiceCallbacks *cb, Glue *g)
{
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        int r;

        glue_forget(g);
        r = hub_service_poll_once(service, cb, true);
        if (r < 0)
                return r;
        printf("poller resync: %.3f s, %zu Agents and %zu ClusterDeployments said changed\n",
               (double)(now_usec(CLOCK_MONOTONIC) - t0) / (double)USEC_PER_SEC, strv_length(g->agent_keys),
               strv_length(g->cd_keys));
        fflush(stdout);
        return 0;
}

static int bench_install(HubContext *ctx, HubController **ctl, const char *ns)
{
        Glue g = { .cache = ctx->cache, .service = ctx->service };
        const HubServiceCallbacks glue_callbacks = { .tracked_infra_envs = tracked_infra_envs,
                                                     .host_changed = host_changed,
                                                     .infra_env_changed = nothing,
                                                     .tracked_clusters = tracked_clusters,
                                                     .cluster_changed = cluster_changed,
                                                     .userdata = &g };
        _cleanup_strv_free_ char **agents = NULL, **cds = NULL;
        Counters a, b;
        usec_t t0;
        unsigned warm = 0;
        int r;

        r = hub_service_poll_once(ctx->service, &glue_callbacks, true);
        if (r < 0)
                return r;
        glue_forget(&g);
        r = all_keys(&g, ns, &agents, &cds);
        if (r < 0)
                return r;
        printf("%zu hosts in the service, %zu ClusterDeployments\n", strv_length(agents), strv_length(cds));
        fflush(stdout);
        /* warm up: Agents created, bound, their status; the clusters synced */
        for (;;) {
                install_counters(ctx->metrics, &a);
                t0 = now_usec(CLOCK_MONOTONIC);
                two_passes(ctl, agents, cds);
                install_counters(ctx->metrics, &b);
                warm++;
                {
                        _cleanup_free_ char *what = strdup_printf("warm-up pass %u", warm);

                        report(strempty(what), t0, &a, &b, strv_length(agents) + strv_length(cds));
                }
                if (b.writes == a.writes || warm >= 8)
                        break;
                sleep(2); /* the cache catches up with the writes */
                (void)hub_service_poll_once(ctx->service, &glue_callbacks, true);
        }
        sleep(2);
        /* nothing changed: the poller's resync finds nothing, the full pass writes nothing */
        r = resync(ctx->service, &glue_callbacks, &g);
        if (r < 0)
                return r;
        install_counters(ctx->metrics, &a);
        t0 = now_usec(CLOCK_MONOTONIC);
        two_passes(ctl, agents, cds);
        install_counters(ctx->metrics, &b);
        report("full pass, nothing to change", t0, &a, &b, strv_length(agents) + strv_length(cds));
        printf("ready for a change\n");
        fflush(stdout);
        {
                char line[64];

                if (!fgets(line, sizeof(line), stdin))
                        return -EIO;
        }
        /* the service sends no event for an inventory update: the poller's
         * periodic resync sees the one host that changed (its list's
         * fingerprints); the keys it names are reconciled */
        r = resync(ctx->service, &glue_callbacks, &g);
        if (r < 0)
                return r;
        install_counters(ctx->metrics, &a);
        t0 = now_usec(CLOCK_MONOTONIC);
        two_passes(ctl, g.agent_keys, g.cd_keys);
        install_counters(ctx->metrics, &b);
        report("one host changed", t0, &a, &b, strv_length(g.agent_keys) + strv_length(g.cd_keys));
        glue_forget(&g);
        /* and a full pass after it: nothing more */
        sleep(2);
        install_counters(ctx->metrics, &a);
        t0 = now_usec(CLOCK_MONOTONIC);
        two_passes(ctl, agents, cds);
        install_counters(ctx->metrics, &b);
        report("full pass after it", t0, &a, &b, strv_length(agents) + strv_length(cds));
        return 0;
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
        HubController *ctl = NULL, *ctls[2] = {};
        HubConfig config = { .image_type = (char *)"minimal-iso", .image_cooldown = 0 };
        HubContext ctx = {};
        char *namespaces[2] = {};
        const char *mode;
        usec_t t0;
        int r;

        if (argc != 6) {
                fprintf(stderr, "usage: bench-hub KUBECONFIG SERVICE_URL NAMESPACE bmac|nmstate|install "
                                "COUNT|INFRAENV|CLUSTERS\n");
                return 2;
        }
        log_setup("bench-hub");
        log_set_max_level(LOG_WARNING);
        mode = argv[4];
        namespaces[0] = argv[3];
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
        if (streq(mode, "install")) {
                r = hub_controller_new(&hub_cd_controller, &ctx, 1, &ctls[0]);
                if (r >= 0)
                        r = hub_controller_new(&hub_agent_controller, &ctx, 1, &ctls[1]);
                ctx.n_controllers = 2;
        } else {
                r = hub_controller_new(streq(mode, "bmac") ? &hub_bmac_controller : &hub_infraenv_controller,
                                       &ctx, 1, &ctls[0]);
                ctx.n_controllers = 1;
        }
        if (r < 0) {
                fprintf(stderr, "bench-hub: cannot make the controller: %s\n", strerror(-r));
                return 1;
        }
        ctl = ctls[0];
        ctx.controllers = ctls;

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

        if (streq(mode, "install")) {
                r = bench_install(&ctx, ctls, argv[3]);
                if (r < 0) {
                        fprintf(stderr, "bench-hub: %s\n", strerror(-r));
                        return 1;
                }
        } else if (streq(mode, "bmac")) {
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
        /* as cradle-hub on SIGTERM: the informers' watches end at once
         * (else each at its next event or its timeout, minutes away) */
        stop_request();
        for (size_t i = 0; i < ELEMENTSOF(ctls); i++)
                hub_controller_free(ctls[i]);
        hub_cache_free(cache);
        hub_service_free(service);
        hub_metrics_free(metrics);
        return 0;
}
