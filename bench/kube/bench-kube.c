/* SPDX-License-Identifier: Apache-2.0 */

/*
 * The informer half of bench/kube/bench-kube.py (which starts the server and
 * makes the objects): bench-kube KUBECONFIG NAMESPACE OBJECTS EVENTS.
 *
 * Lists and watches the Agents of NAMESPACE through lib/kube/kube-informer
 * (indexed by cluster deployment), prints "synced ..." once the cache holds
 * OBJECTS objects, then waits for EVENTS updates and prints how fast they
 * were processed, the peak RSS and the store's size.
 */

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "cleanup.h"
#include "fileio.h"
#include "kube/kube-informer.h"
#include "kube/kube.h"
#include "macro.h"
#include "strutil.h"
#include "timeutil.h"

static atomic_ulong updates;
static _Atomic usec_t cpu_at_first;

/* user + system CPU time of the process */
static usec_t cpu_usec(void)
{
        struct rusage ru;

        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return 0;
        return (usec_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * USEC_PER_SEC +
               (usec_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}
static _Atomic usec_t first_update, last_update;

static void on_update(json_object *old, json_object *obj, void *userdata)
{
        usec_t now = now_usec(CLOCK_MONOTONIC), zero = 0;

        (void)old;
        (void)obj;
        (void)userdata;
        if (atomic_compare_exchange_strong(&first_update, &zero, now))
                atomic_store(&cpu_at_first, cpu_usec());
        atomic_store(&last_update, now);
        atomic_fetch_add(&updates, 1);
}

/* VmRSS and VmHWM of this process, in kB. */
static void rss(unsigned long *ret_rss, unsigned long *ret_hwm)
{
        _cleanup_free_ char *s = NULL;
        const char *p;

        *ret_rss = *ret_hwm = 0;
        if (read_full_file("/proc/self/status", 1 << 16, &s, NULL) < 0)
                return;
        p = strstr(s, "VmHWM:");
        if (p)
                *ret_hwm = strtoul(p + 6, NULL, 10);
        p = strstr(s, "VmRSS:");
        if (p)
                *ret_rss = strtoul(p + 6, NULL, 10);
}

int main(int argc, char **argv)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_free_ char *err = NULL;
        KubeResource agents =
                KUBE_RESOURCE("agent-install.openshift.io", "v1beta1", "agents", "Agent", true);
        KubeInformerOptions o = { .watch_timeout = 600 };
        KubeInformerStats st = {};
        KubeInformer *inf = NULL;
        unsigned objects, events;
        unsigned long rss_before, hwm, rss_now;
        usec_t t0, t_sync;
        _cleanup_strv_free_ char **by_cluster = NULL;
        int r;

        if (argc != 5 || safe_atou(argv[3], &objects) < 0 || safe_atou(argv[4], &events) < 0) {
                fprintf(stderr, "usage: bench-kube KUBECONFIG NAMESPACE OBJECTS EVENTS\n");
                return 2;
        }
        r = kube_client_new_from_kubeconfig(argv[1], NULL, &c, &err);
        if (r < 0) {
                fprintf(stderr, "bench-kube: %s\n", strna(err));
                return 1;
        }
        rss(&rss_before, &hwm);
        if (kube_informer_new(c, &agents, argv[2], &o, &inf) < 0 ||
            kube_informer_add_index(inf, "cluster", kube_index_by_field,
                                    (void *)"spec.clusterDeploymentName.name") < 0 ||
            kube_informer_add_handlers(inf, &(KubeInformerHandlers){ .on_update = on_update }) < 0)
                return 1;
        t0 = now_usec(CLOCK_MONOTONIC);
        if (kube_informer_start(inf) < 0 || kube_informer_wait_synced(inf, 600 * USEC_PER_SEC) < 0) {
                fprintf(stderr, "bench-kube: no sync\n");
                return 1;
        }
        t_sync = now_usec(CLOCK_MONOTONIC) - t0;
        rss(&rss_now, &hwm);
        (void)kube_informer_stats(inf, &st);
        {
                _cleanup_free_ char *v = strdup_printf("%s/cluster-7", argv[2]);

                (void)kube_informer_index_keys(inf, "cluster", v, &by_cluster);
        }
        printf("synced: %zu objects in %.2f s (%.0f objects/s); store %.1f MB for %.1f MB of stored JSON "
               "(%.2fx); RSS %.1f MB (%.1f MB before the informer), peak %.1f MB; index: %zu Agents of "
               "cluster-7\n",
               st.objects, (double)t_sync / USEC_PER_SEC,
               (double)st.objects / ((double)t_sync / USEC_PER_SEC), st.store_bytes / 1e6,
               st.json_bytes / 1e6, (double)st.store_bytes / (double)st.json_bytes, rss_now / 1024.0,
               rss_before / 1024.0, hwm / 1024.0, strv_length(by_cluster));
        fflush(stdout);
        free(st.resource_version);
        if (st.objects != objects)
                fprintf(stderr, "bench-kube: expected %u objects\n", objects);

        while (atomic_load(&updates) < events)
                (void)sleep_usec(10 * USEC_PER_MSEC);
        {
                usec_t d = atomic_load(&last_update) - atomic_load(&first_update);
                usec_t cpu = cpu_usec() - atomic_load(&cpu_at_first);

                rss(&rss_now, &hwm);
                (void)kube_informer_stats(inf, &st);
                printf("watch: %lu MODIFIED events in %.2f s (%.0f events/s, first to last; %.2f s of CPU "
                       "in "
                       "bench-kube: %.0f events per CPU second); store %.1f MB for %.1f MB of JSON (%.2fx); "
                       "RSS "
                       "%.1f MB, peak %.1f MB\n",
                       atomic_load(&updates), (double)d / USEC_PER_SEC,
                       (double)atomic_load(&updates) / ((double)MAX(d, 1) / USEC_PER_SEC),
                       (double)cpu / USEC_PER_SEC,
                       (double)atomic_load(&updates) / ((double)MAX(cpu, 1) / USEC_PER_SEC),
                       st.store_bytes / 1e6, st.json_bytes / 1e6,
                       (double)st.store_bytes / (double)st.json_bytes, rss_now / 1024.0, hwm / 1024.0);
                free(st.resource_version);
        }
        kube_informer_free(inf);
        return 0;
}
