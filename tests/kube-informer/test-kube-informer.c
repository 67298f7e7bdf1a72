/* SPDX-License-Identifier: Apache-2.0 */

#include <json-c/json.h>
#include <stdatomic.h>

#include "cleanup.h"
#include "kube/kube-informer.h"
#include "kube/kube.h"
#include "macro.h"
#include "strutil.h"
#include "tests/kube-informer/kubetest.h"
#include "tests/tests.h"

static KubeTest kt;

typedef struct Counts {
        atomic_long adds, updates, deletes, resyncs;
} Counts;

static void on_add(json_object *obj, void *userdata)
{
        Counts *c = userdata;

        ASSERT_TRUE(kube_object_name(obj));
        atomic_fetch_add(&c->adds, 1);
}

static void on_update(json_object *old, json_object *obj, void *userdata)
{
        Counts *c = userdata;

        ASSERT_TRUE(old);
        ASSERT_STREQ(kube_object_name(old), kube_object_name(obj));
        if (streq(kube_object_resource_version(old), kube_object_resource_version(obj)))
                atomic_fetch_add(&c->resyncs, 1);
        else
                atomic_fetch_add(&c->updates, 1);
}

static void on_delete(json_object *obj, void *userdata)
{
        Counts *c = userdata;

        ASSERT_TRUE(kube_object_name(obj));
        atomic_fetch_add(&c->deletes, 1);
}

static json_object *configmap(const char *name, const char *cluster, unsigned v)
{
        json_object *o = json_object_new_object(), *md = json_object_new_object(),
                    *data = json_object_new_object();
        char buf[32];

        json_object_object_add(md, "name", json_object_new_string(name));
        json_object_object_add(o, "metadata", md);
        snprintf(buf, sizeof(buf), "%u", v);
        json_object_object_add(data, "v", json_object_new_string(buf));
        json_object_object_add(data, "cluster", json_object_new_string(cluster));
        json_object_object_add(o, "data", data);
        return o;
}

/* The fresh list, normalized as the informer stores objects. */
static json_object *fresh_list(void)
{
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *list = NULL, *items;

        ASSERT_OK(kube_list_all(kt.client, &kube_resource_configmaps, kt.ns, NULL, &list, &st));
        items = json_object_object_get(list, "items");
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                json_object *it = json_object_array_get_idx(items, i);

                ASSERT_OK(kube_transform_strip(it, NULL));
                if (!json_object_object_get_ex(it, "kind", NULL)) {
                        json_object_object_add(it, "apiVersion", json_object_new_string("v1"));
                        json_object_object_add(it, "kind", json_object_new_string("ConfigMap"));
                }
        }
        return list;
}

/* 0 when the store equals the list (same keys, equal objects), else the
 * number of differences. */
static size_t store_diff(KubeInformer *inf, json_object *list, bool verbose)
{
        json_object *items = json_object_object_get(list, "items");
        size_t n = json_object_array_length(items), diff = 0;

        if (kube_informer_count(inf) != n) {
                if (verbose)
                        fprintf(stderr, "store has %zu objects, the list %zu\n", kube_informer_count(inf),
                                n);
                diff++;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *it = json_object_array_get_idx(items, i);
                _cleanup_(json_object_putp) json_object *cached = NULL;
                _cleanup_free_ char *key = kube_object_key(it);

                if (kube_informer_get(inf, key, &cached) < 0 || !json_object_equal(cached, it)) {
                        if (verbose)
                                fprintf(stderr, "differs: %s\n", key);
                        diff++;
                }
        }
        return diff;
}

/* Waits (bounded) until the store equals a fresh list. */
static void assert_store_converges(KubeInformer *inf)
{
        for (unsigned i = 0;; i++) {
                _cleanup_(json_object_putp) json_object *list = fresh_list();

                if (store_diff(inf, list, i == 600) == 0)
                        return;
                ASSERT_TRUE(i < 600); /* 60 s */
                (void)sleep_usec(100 * USEC_PER_MSEC);
        }
}

static const char *const clusters[] = { "c0", "c1", "c2", "c3", "c4" };

static void assert_index_matches(KubeInformer *inf)
{
        _cleanup_(json_object_putp) json_object *list = fresh_list();
        json_object *items = json_object_object_get(list, "items");

        for (size_t c = 0; c < ELEMENTSOF(clusters); c++) {
                _cleanup_strv_free_ char **keys = NULL, **expect = NULL;
                _cleanup_free_ char *value = strdup_printf("%s/%s", kt.ns, clusters[c]);

                for (size_t i = 0; i < json_object_array_length(items); i++) {
                        json_object *it = json_object_array_get_idx(items, i), *data;

                        data = json_object_object_get(it, "data");
                        if (streq_ptr(json_object_get_string(json_object_object_get(data, "cluster")),
                                      clusters[c]))
                                ASSERT_OK(strv_push(&expect, kube_object_key(it)));
                }
                ASSERT_OK(kube_informer_index_keys(inf, "cluster", value, &keys));
                ASSERT_EQ(strv_length(keys), strv_length(expect));
                /* both sorted: the list is in key order, as kube-apiserver's */
                for (size_t i = 0; expect && expect[i]; i++)
                        ASSERT_STREQ(keys[i], expect[i]);
        }
}

static void drop_watches(unsigned after)
{
        _cleanup_(json_object_putp) json_object *body = NULL;

        ASSERT_TRUE(body = json_tokener_parse("{\"match\":{\"resource\":\"configmaps\"}}"));
        if (after > 0)
                json_object_object_add(body, "after", json_object_new_int((int)after));
        ASSERT_EQ(kubetest_control(&kt, "POST", "/watches/drop", body, NULL), 200);
}

/* History forgotten past what the informer has seen, so that its resume
 * gets 410 and it relists: its watch cut and refused while a change is
 * made and compacted away. (Compacting while it watches is no proof: an
 * informer that has caught up resumes at the compacted resourceVersion
 * itself, which is valid.) */
static void compact_behind_the_informer(char ***live, unsigned *created, unsigned op)
{
        _cleanup_(json_object_putp) json_object *fault = NULL, *cm = NULL;
        _cleanup_kube_status_ KubeStatus s = {};
        _cleanup_free_ char *name = strdup_printf("cm-%u", (*created)++);

        ASSERT_TRUE(fault = json_tokener_parse(
                            "{\"match\":{\"resource\":\"configmaps\",\"watch\":true},\"count\":0}"));
        ASSERT_EQ(kubetest_control(&kt, "POST", "/faults", fault, NULL), 200);
        drop_watches(0);
        cm = configmap(name, clusters[0], op);
        ASSERT_OK(kube_create(kt.client, &kube_resource_configmaps, kt.ns, cm, NULL, &s));
        ASSERT_OK(strv_extend(live, name));
        ASSERT_EQ(kubetest_control(&kt, "POST", "/compact", NULL, NULL), 200);
        ASSERT_EQ(kubetest_control(&kt, "DELETE", "/faults", NULL, NULL), 200);
}

TEST(storm)
{
        _cleanup_strv_free_ char **live = NULL;
        KubeInformer *inf = NULL;
        Counts counts = {};
        KubeInformerStats st = {};
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        unsigned created = 0;
        KubeInformerOptions o = { .watch_timeout = 30, .page_size = 50 };

        kubetest_setup(&kt, (char *const[]){ (char *)"--bookmark-interval", (char *)"1", NULL });
        ASSERT_OK(kube_informer_new(kt.client, &kube_resource_configmaps, kt.ns, &o, &inf));
        ASSERT_OK(kube_informer_add_index(inf, "cluster", kube_index_by_field, (void *)"data.cluster"));
        ASSERT_OK(kube_informer_add_handlers(inf, &(KubeInformerHandlers){ .on_add = on_add,
                                                                           .on_update = on_update,
                                                                           .on_delete = on_delete,
                                                                           .userdata = &counts }));
        ASSERT_OK(kube_informer_start(inf));
        ASSERT_OK(kube_informer_wait_synced(inf, 60 * USEC_PER_SEC));
        ASSERT_TRUE(kube_informer_has_synced(inf));
        /* the namespace's kube-root-ca.crt (test server and real clusters) */
        assert_store_converges(inf);

        for (unsigned op = 0; op < 1000; op++) {
                _cleanup_kube_status_ KubeStatus s = {};
                size_t n = strv_length(live);
                unsigned pick;

                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                pick = (unsigned)(seed >> 33);
                if (n < 20 || pick % 10 < 4) {
                        _cleanup_(json_object_putp) json_object *cm = NULL;
                        _cleanup_free_ char *name = strdup_printf("cm-%u", created++);

                        cm = configmap(name, clusters[pick % ELEMENTSOF(clusters)], op);
                        ASSERT_OK(kube_create(kt.client, &kube_resource_configmaps, kt.ns, cm, NULL, &s));
                        ASSERT_OK(strv_extend(&live, name));
                } else if (pick % 10 < 8) {
                        _cleanup_(json_object_putp) json_object *patch = NULL;
                        const char *name = live[(pick / 16) % n];

                        patch = configmap(name, clusters[(pick / 7) % 5], op);
                        json_object_object_del(patch, "metadata"); /* {"data": {...}} */
                        ASSERT_OK(kube_patch_merge(kt.client, &kube_resource_configmaps, kt.ns, name, patch,
                                                   NULL, &s));
                } else {
                        size_t i = (pick / 16) % n;

                        ASSERT_OK(kube_delete(kt.client, &kube_resource_configmaps, kt.ns, live[i], NULL,
                                              NULL, &s));
                        free(live[i]);
                        memmove(live + i, live + i + 1, (n - i) * sizeof(char *));
                }
                if (kubetest_has_control(&kt)) {
                        if (op % 100 == 50)
                                drop_watches(0); /* now */
                        else if (op % 100 == 0)
                                drop_watches(7); /* mid-stream, after 7 more events */
                        if (op == 500)
                                compact_behind_the_informer(&live, &created, op);
                }
        }

        assert_store_converges(inf);
        assert_index_matches(inf);
        /* every object in the store was added once, every other one added
         * and deleted (objects created and deleted while the informer was
         * relisting after the 410 are never seen, as with client-go) */
        ASSERT_EQ(atomic_load(&counts.adds) - atomic_load(&counts.deletes), (long)kube_informer_count(inf));
        ASSERT_GE(atomic_load(&counts.deletes), 1);
        ASSERT_GE(atomic_load(&counts.updates), 1);
        ASSERT_OK(kube_informer_stats(inf, &st));
        if (kubetest_has_control(&kt))
                ASSERT_GE(st.lists, 2); /* the 410 relisted */
        fprintf(stderr, "storm: %zu objects, %lu lists, %lu events, adds %ld updates %ld deletes %ld\n",
                st.objects, st.lists, st.events, atomic_load(&counts.adds), atomic_load(&counts.updates),
                atomic_load(&counts.deletes));
        free(st.resource_version);
        kube_informer_free(inf);
}

TEST(transform_and_resync)
{
        _cleanup_(json_object_putp) json_object *cm = NULL, *got = NULL;
        _cleanup_kube_status_ KubeStatus s = {};
        KubeInformer *inf = NULL;
        Counts counts = {};
        json_object *md, *ann;
        KubeInformerOptions o = { .watch_timeout = 30,
                                  .resync_period = 100 * USEC_PER_MSEC,
                                  .label_selector = "test=transform" };

        kubetest_setup(&kt, (char *const[]){ (char *)"--bookmark-interval", (char *)"1", NULL });
        cm = configmap("transform", "c9", 1);
        md = json_object_object_get(cm, "metadata");
        ASSERT_TRUE(json_object_object_add(md, "labels", json_tokener_parse("{\"test\":\"transform\"}")) ==
                    0);
        ASSERT_TRUE(json_object_object_add(
                            md, "annotations",
                            json_tokener_parse("{\"kubectl.kubernetes.io/"
                                               "last-applied-configuration\":\"{}\",\"keep\":\"me\"}")) ==
                    0);
        ASSERT_OK(kube_create(kt.client, &kube_resource_configmaps, kt.ns, cm, NULL, &s));

        ASSERT_OK(kube_informer_new(kt.client, &kube_resource_configmaps, kt.ns, &o, &inf));
        ASSERT_OK(kube_informer_add_handlers(inf, &(KubeInformerHandlers){ .on_add = on_add,
                                                                           .on_update = on_update,
                                                                           .on_delete = on_delete,
                                                                           .userdata = &counts }));
        ASSERT_OK(kube_informer_start(inf));
        ASSERT_OK(kube_informer_wait_synced(inf, 60 * USEC_PER_SEC));
        /* the label selector: only this one */
        ASSERT_EQ(kube_informer_count(inf), 1);
        {
                _cleanup_free_ char *key = strdup_printf("%s/transform", kt.ns);

                ASSERT_OK(kube_informer_get(inf, key, &got));
        }
        md = json_object_object_get(got, "metadata");
        ASSERT_FALSE(json_object_object_get_ex(md, "managedFields", NULL));
        ann = json_object_object_get(md, "annotations");
        ASSERT_FALSE(
                json_object_object_get_ex(ann, "kubectl.kubernetes.io/last-applied-configuration", NULL));
        ASSERT_STREQ(json_object_get_string(json_object_object_get(ann, "keep")), "me");
        ASSERT_STREQ(json_object_get_string(json_object_object_get(got, "kind")), "ConfigMap");

        /* periodic resync: on_update with the same object, again and again */
        for (unsigned i = 0; atomic_load(&counts.resyncs) < 3; i++) {
                ASSERT_TRUE(i < 600);
                (void)sleep_usec(100 * USEC_PER_MSEC);
        }
        ASSERT_EQ(atomic_load(&counts.adds), 1);
        kube_informer_free(inf);
}

DEFINE_TEST_MAIN
