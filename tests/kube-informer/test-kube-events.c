/* SPDX-License-Identifier: Apache-2.0 */

#include <json-c/json.h>

#include "cleanup.h"
#include "kube/kube-events.h"
#include "kube/kube.h"
#include "macro.h"
#include "strutil.h"
#include "tests/kube-informer/kubetest.h"
#include "tests/tests.h"

static KubeTest kt;

static const char *str(json_object *o, const char *a, const char *b)
{
        json_object *v = json_object_object_get(o, a);

        if (b)
                v = json_object_object_get(v, b);
        return json_object_get_string(v);
}

static int64_t count_of(json_object *ev)
{
        return json_object_get_int64(json_object_object_get(ev, "count"));
}

/* The events about the config map `name`, as kubectl describe finds them. */
static json_object *events_about(const char *name)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *sel = strdup_printf("involvedObject.name=%s", name);
        KubeListOptions o = { .field_selector = sel };
        json_object *list = NULL;

        ASSERT_OK(kube_list(kt.client, &kube_resource_events, kt.ns, &o, &list, &st));
        return list;
}

TEST(collapse)
{
        _cleanup_(json_object_putp) json_object *cm = NULL, *obj = NULL, *ev1 = NULL, *ev3 = NULL,
                                                *list = NULL, *ev4 = NULL;
        _cleanup_(kube_event_recorder_freep) KubeEventRecorder *rec = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *name;
        json_object *items;

        kubetest_setup(&kt, NULL);
        cm = json_tokener_parse("{\"metadata\":{\"name\":\"evented\"},\"data\":{}}");
        ASSERT_OK(kube_create(kt.client, &kube_resource_configmaps, kt.ns, cm, &obj, &st));
        /* a created object: the answer carries uid and resourceVersion, not
         * always kind: make it a full reference */
        json_object_object_add(obj, "apiVersion", json_object_new_string("v1"));
        json_object_object_add(obj, "kind", json_object_new_string("ConfigMap"));

        ASSERT_OK(kube_event_recorder_new(kt.client, "cradle-test", NULL, &rec));
        ASSERT_OK(kube_event_record(rec, obj, KUBE_EVENT_NORMAL, "Tested", "hello", &ev1));
        name = str(ev1, "metadata", "name");
        ASSERT_TRUE(startswith(name, "evented."));
        ASSERT_TRUE(strspn(name + 8, "0123456789abcdef") == strlen(name + 8));
        ASSERT_STREQ(str(ev1, "metadata", "namespace"), kt.ns);
        ASSERT_STREQ(str(ev1, "involvedObject", "kind"), "ConfigMap");
        ASSERT_STREQ(str(ev1, "involvedObject", "name"), "evented");
        ASSERT_STREQ(str(ev1, "involvedObject", "namespace"), kt.ns);
        ASSERT_STREQ(str(ev1, "involvedObject", "uid"), str(obj, "metadata", "uid"));
        ASSERT_STREQ(str(ev1, "involvedObject", "apiVersion"), "v1");
        ASSERT_STREQ(str(ev1, "source", "component"), "cradle-test");
        ASSERT_STREQ(str(ev1, "type", NULL), "Normal");
        ASSERT_STREQ(str(ev1, "reason", NULL), "Tested");
        ASSERT_STREQ(str(ev1, "message", NULL), "hello");
        ASSERT_EQ(count_of(ev1), 1);
        ASSERT_STREQ(str(ev1, "firstTimestamp", NULL), str(ev1, "lastTimestamp", NULL));

        /* repeats: the same Event, count 3 */
        ASSERT_OK(kube_event_record(rec, obj, KUBE_EVENT_NORMAL, "Tested", "hello", NULL));
        ASSERT_OK(kube_event_record(rec, obj, KUBE_EVENT_NORMAL, "Tested", "hello", &ev3));
        ASSERT_STREQ(str(ev3, "metadata", "name"), name);
        ASSERT_EQ(count_of(ev3), 3);
        ASSERT_STREQ(str(ev3, "firstTimestamp", NULL), str(ev1, "firstTimestamp", NULL));
        ASSERT_TRUE(strcmp(str(ev3, "lastTimestamp", NULL), str(ev1, "firstTimestamp", NULL)) >= 0);

        /* another message, another type: other events */
        ASSERT_OK(kube_event_recordf(rec, obj, KUBE_EVENT_NORMAL, "Tested", "hello %d", 2));
        ASSERT_OK(kube_event_record(rec, obj, KUBE_EVENT_WARNING, "Failed", "oops", NULL));
        list = events_about("evented");
        items = json_object_object_get(list, "items");
        ASSERT_EQ(json_object_array_length(items), 3);
        for (size_t i = 0; i < 3; i++) {
                json_object *e = json_object_array_get_idx(items, i);

                if (streq(str(e, "metadata", "name"), name))
                        ASSERT_EQ(count_of(e), 3);
                else
                        ASSERT_EQ(count_of(e), 1);
        }

        /* the event was deleted meanwhile: created again with the count */
        ASSERT_OK(kube_delete(kt.client, &kube_resource_events, kt.ns, name, NULL, NULL, &st));
        ASSERT_OK(kube_event_record(rec, obj, KUBE_EVENT_NORMAL, "Tested", "hello", &ev4));
        ASSERT_STREQ(str(ev4, "metadata", "name"), name);
        ASSERT_EQ(count_of(ev4), 4);

        /* a cluster-scoped object: the event goes to "default" */
        {
                _cleanup_(json_object_putp) json_object *node =
                        json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                                           "\"n1\",\"uid\":\"u\"}}");
                _cleanup_(json_object_putp) json_object *ev = NULL;
                _cleanup_kube_status_ KubeStatus st2 = {};

                ASSERT_OK(kube_event_record(rec, node, KUBE_EVENT_NORMAL, "Seen", "node seen", &ev));
                ASSERT_STREQ(str(ev, "metadata", "namespace"), "default");
                ASSERT_FALSE(json_object_object_get_ex(json_object_object_get(ev, "involvedObject"),
                                                       "namespace", NULL));
                ASSERT_OK(kube_delete(kt.client, &kube_resource_events, "default",
                                      str(ev, "metadata", "name"), NULL, NULL, &st2));
        }
}

DEFINE_TEST_MAIN
