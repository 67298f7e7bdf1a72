/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hub's plumbing without a server: merge-patch diffs, conditions,
 * label selectors, the claim protocol, the static network config and its
 * YAML, metrics text, bind addresses, the operation table's paths; the
 * bounded texts, the writes refused for their size and the debug links
 * (issue 23).
 */
#include <json-c/json.h>

#include "assisted/assisted-user.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "hub-claim.h"
#include "hub-exec.h"
#include "hub-http.h"
#include "hub-links.h"
#include "hub-metrics.h"
#include "hub-nmstate.h"
#include "hub-plan.h"
#include "hub-service.h"
#include "hub-text.h"
#include "hubtest.h"
#include "jsonutil.h"
#include "strutil.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC)

static char *diff_text(const char *a, const char *b)
{
        _cleanup_(json_object_putp) json_object *ja = hubtest_json(a), *jb = hubtest_json(b), *d = NULL;

        ASSERT_OK(hub_json_merge_diff(ja, jb, &d));
        return d ? json_to_string(d, 0) : NULL;
}

TEST(merge_diff)
{
        static const struct {
                const char *a, *b, *patch;
        } cases[] = {
                { "{\"a\":1}", "{\"a\":1}", NULL },
                { "{\"a\":1,\"b\":{\"c\":[1,2]}}", "{\"b\":{\"c\":[1,2]},\"a\":1.0}", NULL },
                { "{\"a\":1}", "{\"a\":2}", "{\"a\":2}" },
                { "{\"a\":1,\"b\":2}", "{\"a\":1}", "{\"b\":null}" },
                { "{\"m\":{\"x\":\"1\",\"y\":\"2\"}}", "{\"m\":{\"x\":\"1\",\"y\":\"3\",\"z\":\"4\"}}",
                  "{\"m\":{\"y\":\"3\",\"z\":\"4\"}}" },
                { "{\"l\":[1,2]}", "{\"l\":[1,2,3]}", "{\"l\":[1,2,3]}" },
                { "{\"a\":null}", "{}", NULL },
                { "{}", "{\"a\":{}}", "{\"a\":{}}" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *d = diff_text(cases[i].a, cases[i].b);

                if (!cases[i].patch)
                        ASSERT_NULL(d);
                else
                        ASSERT_STREQ(d, cases[i].patch);
        }
}

TEST(merge_diff_applies_back)
{
        _cleanup_(json_object_putp) json_object
                *a = hubtest_json(
                        "{\"metadata\":{\"labels\":{\"x\":\"1\",\"gone\":\"2\"},\"finalizers\":[\"f\"]},"
                        "\"spec\":{\"n\":1,\"m\":{\"k\":true}}}"),
                *b = hubtest_json("{\"metadata\":{\"labels\":{\"x\":\"2\"},\"finalizers\":[\"f\",\"g\"]},"
                                  "\"spec\":{\"n\":1,\"m\":{\"k\":false,\"j\":[]}}}"),
                *d = NULL;

        ASSERT_OK(hub_json_merge_diff(a, b, &d));
        ASSERT_TRUE(hub_json_patch_has_array(d));
        hubtest_merge_apply(a, d);
        ASSERT_TRUE(hub_json_equal(a, b));
}

TEST(patch_object_splits_status_and_locks_lists)
{
        _cleanup_hub_plan_ HubPlan p = {};
        _cleanup_(json_object_putp) json_object
                *obs = hubtest_json(
                        "{\"metadata\":{\"name\":\"n\",\"namespace\":\"ns\",\"resourceVersion\":\"7\"},"
                        "\"spec\":{\"a\":1},\"status\":{\"s\":1}}"),
                *des = hub_json_copy(obs);

        /* nothing changed: nothing planned */
        ASSERT_OK(hub_plan_patch_object(&p, HUB_KIND_AGENT, obs, des, false, true));
        ASSERT_EQ(p.n, 0);
        ASSERT_OK(hub_object_set_label(des, "l", "v"));
        json_object_object_add(json_get(des, "status"), "s", json_object_new_int(2));
        ASSERT_OK(hub_plan_patch_object(&p, HUB_KIND_AGENT, obs, des, false, true));
        ASSERT_EQ(p.n, 2);
        ASSERT_EQ(p.writes[0].kind, HUB_WRITE_PATCH);
        ASSERT_NULL(p.writes[0].resource_version); /* a map: no lock needed */
        ASSERT_EQ(p.writes[1].kind, HUB_WRITE_PATCH_STATUS);
        {
                _cleanup_free_ char *t = json_to_string(p.writes[1].body, 0);

                ASSERT_STREQ(t, "{\"status\":{\"s\":2}}");
        }
        hub_plan_reset(&p);
        ASSERT_EQ(hub_object_add_finalizer(des, "f"), 1);
        ASSERT_EQ(hub_object_add_finalizer(des, "f"), 0);
        ASSERT_OK(hub_plan_patch_object(&p, HUB_KIND_AGENT, obs, des, false, false));
        ASSERT_EQ(p.n, 1);
        ASSERT_STREQ(p.writes[0].resource_version, "7"); /* a list: locked */
        ASSERT_EQ(hub_object_remove_finalizer(des, "f"), 1);
        ASSERT_EQ(hub_object_remove_finalizer(des, "f"), 0);
}

TEST(conditions_keep_their_transition_time)
{
        _cleanup_(json_object_putp) json_object *o = hubtest_json("{\"metadata\":{\"generation\":3}}");
        json_object *c;

        ASSERT_OK(hub_conditions_set(o, "ImageCreated", "True", "R", "m", NOW));
        c = hub_conditions_find(o, "ImageCreated");
        ASSERT_STREQ(json_get_string(c, "lastTransitionTime"), "2026-09-21T14:13:20Z");
        /* same status, other message: the time stays */
        ASSERT_OK(hub_conditions_set(o, "ImageCreated", "True", "R2", "m2", NOW + 60 * USEC_PER_SEC));
        ASSERT_STREQ(json_get_string(c, "lastTransitionTime"), "2026-09-21T14:13:20Z");
        ASSERT_STREQ(json_get_string(c, "reason"), "R2");
        /* status changes: the time moves */
        ASSERT_OK(hub_conditions_set(o, "ImageCreated", "False", "R3", "m3", NOW + 120 * USEC_PER_SEC));
        ASSERT_STREQ(json_get_string(c, "lastTransitionTime"), "2026-09-21T14:15:20Z");
        ASSERT_OK(hub_meta_conditions_set(o, "ImageReady", "True", "X", "y", NOW));
        c = hub_conditions_find(o, "ImageReady");
        {
                int64_t g = 0;

                ASSERT_OK(json_get_int64(c, "observedGeneration", &g));
                ASSERT_EQ(g, 3);
        }
}

TEST(selectors)
{
        _cleanup_(json_object_putp) json_object *obj =
                hubtest_json("{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}");
        static const struct {
                const char *sel;
                int r;
        } cases[] = {
                { "{}", 0 },
                { "{\"matchLabels\":{\"a\":\"1\"}}", 1 },
                { "{\"matchLabels\":{\"a\":\"1\",\"b\":\"3\"}}", 0 },
                { "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"0\",\"1\"]}]}",
                  1 },
                { "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"1\"]}]}", 0 },
                { "{\"matchExpressions\":[{\"key\":\"c\",\"operator\":\"DoesNotExist\"}]}", 1 },
                { "{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"Exists\"}]}", 1 },
                { "{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
                  -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *s = hubtest_json(cases[i].sel);

                ASSERT_EQ(hub_selector_matches(s, obj), cases[i].r);
        }
}

/* the claim decision of an InfraEnv named "n" of replica "me" */
static void decide_claim(json_object *obj, json_object *candidates, usec_t now, usec_t active_since,
                         HubClaimDecision *ret)
{
        ASSERT_OK(hub_claim_decide(&(HubClaimInput){ .object = obj,
                                                     .id_annotation = HUB_ANNOTATION_INFRAENV_ID,
                                                     .name = "n",
                                                     .identity = "me",
                                                     .now = now,
                                                     .active_since = active_since,
                                                     .candidates = candidates },
                                   ret));
}

TEST(claim_protocol)
{
        _cleanup_free_ char *marker = hub_claim_marker(NOW, "me"), *holder = NULL;
        usec_t t;

        ASSERT_OK(hub_claim_parse_marker(marker, &t, &holder));
        ASSERT_EQ(t, NOW);
        {
                _cleanup_free_ char *m2 = hub_claim_marker(NOW + 1234, "me");
                usec_t t2;

                /* to the microsecond */
                ASSERT_STREQ(m2, "2026-09-21T14:13:20.001234Z me");
                ASSERT_OK(hub_claim_parse_marker(m2, &t2, NULL));
                ASSERT_EQ(t2, NOW + 1234);
        }
        ASSERT_STREQ(holder, "me");
        ASSERT_ERROR(hub_claim_parse_marker("yesterday me", &t, NULL), EINVAL);

        {
                static const struct {
                        const char *annotations;
                        const char *candidates;
                        HubClaimAction action;
                        const char *id;
                } cases[] = {
                        { "{\"cradle.agent-install.openshift.io/infra-env-id\":\"i1\"}", NULL,
                          HUB_CLAIM_LINKED, "i1" },
                        { "{}", NULL, HUB_CLAIM_MARK, NULL },
                        { "{\"cradle.agent-install.openshift.io/registering\":\"2026-09-21T14:13:20Z me\"}",
                          NULL, HUB_CLAIM_SEARCH, NULL },
                        { "{\"cradle.agent-install.openshift.io/registering\":\"2026-09-21T14:13:00Z "
                          "other\"}",
                          NULL, HUB_CLAIM_WAIT, NULL },
                        { "{\"cradle.agent-install.openshift.io/registering\":\"2026-09-21T14:13:20Z me\"}",
                          "[]", HUB_CLAIM_REGISTER, NULL },
                        /* the oldest of two with the name; the other is a duplicate */
                        { "{\"cradle.agent-install.openshift.io/registering\":\"2026-09-21T14:13:20Z me\"}",
                          "[{\"id\":\"b\",\"name\":\"n\",\"created_at\":\"2026-09-21T14:13:22Z\"},"
                          "{\"id\":\"a\",\"name\":\"n\",\"created_at\":\"2026-09-21T14:13:21.5Z\"}]",
                          HUB_CLAIM_ADOPT, "a" },
                        /* an unreadable marker: any time will do */
                        { "{\"cradle.agent-install.openshift.io/registering\":\"garbage\"}",
                          "[{\"id\":\"a\",\"name\":\"n\",\"created_at\":\"2001-01-01T00:00:00Z\"}]",
                          HUB_CLAIM_ADOPT, "a" },
                };

                for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                        _cleanup_(json_object_putp)
                                json_object *obj = hubtest_jsonf("{\"metadata\":{\"annotations\":%s}}",
                                                                 cases[i].annotations),
                                            *cand = cases[i].candidates ? hubtest_json(cases[i].candidates)
                                                                        : NULL;
                        _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};

                        decide_claim(obj, cand, NOW + USEC_PER_SEC, 0, &d);
                        ASSERT_EQ(d.action, cases[i].action);
                        if (cases[i].id)
                                ASSERT_STREQ(d.id, cases[i].id);
                        if (i == 5)
                                ASSERT_STREQ(d.duplicates ? d.duplicates[0] : NULL, "b");
                }
        }
}

/* a refused registration: the next waits HUB_CLAIM_REFUSAL_BACKOFF, unless
 * the spec changed since (its generation); hub_claim_refused() records it
 * and drops the marker */
TEST(claim_refusal_backoff)
{
        static const struct {
                int generation;
                const char *refused;
                usec_t after; /* since NOW */
                HubClaimAction action;
                usec_t wait;
        } cases[] = {
                { 3, "2026-09-21T14:13:20Z 3", 10 * USEC_PER_SEC, HUB_CLAIM_WAIT, 50 * USEC_PER_SEC },
                { 3, "2026-09-21T14:13:20Z 3", 60 * USEC_PER_SEC, HUB_CLAIM_MARK, 0 },
                /* the spec changed: at once */
                { 4, "2026-09-21T14:13:20Z 3", 10 * USEC_PER_SEC, HUB_CLAIM_MARK, 0 },
                /* unreadable, or far in the future (a clock that jumped): no hold */
                { 3, "sometime 3", 10 * USEC_PER_SEC, HUB_CLAIM_MARK, 0 },
                { 3, "2026-09-22T14:13:20Z 3", 10 * USEC_PER_SEC, HUB_CLAIM_MARK, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *obj =
                        hubtest_jsonf("{\"metadata\":{\"generation\":%d,\"annotations\":{"
                                      "\"" HUB_ANNOTATION_REGISTRATION_REFUSED "\":\"%s\"}}}",
                                      cases[i].generation, cases[i].refused);
                _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};

                decide_claim(obj, NULL, NOW + cases[i].after, 0, &d);
                if (d.action != cases[i].action || d.wait != cases[i].wait)
                        test_fail(__FILE__, __LINE__,
                                  "case %zu: %s after %" PRIu64 " us, expected %s after %" PRIu64, i,
                                  hub_claim_action_to_string(d.action), d.wait,
                                  hub_claim_action_to_string(cases[i].action), cases[i].wait);
        }
        {
                _cleanup_(json_object_putp) json_object *obj = hubtest_json(
                        "{\"metadata\":{\"generation\":7,\"annotations\":{\"" HUB_ANNOTATION_REGISTERING
                        "\":\"2026-09-21T14:13:20Z me\"}}}");

                ASSERT_OK(hub_claim_refused(obj, NOW));
                ASSERT_NULL(hub_object_annotation(obj, HUB_ANNOTATION_REGISTERING));
                ASSERT_STREQ(hub_object_annotation(obj, HUB_ANNOTATION_REGISTRATION_REFUSED),
                             "2026-09-21T14:13:20Z 7");
        }
}

TEST(nmstate_yaml)
{
        _cleanup_(json_object_putp) json_object *v = hubtest_json(
                "{\"interfaces\":[{\"name\":\"eth0\",\"type\":\"ethernet\",\"state\":\"up\","
                "\"mac-address\":\"02:00:00:80:12:14\",\"mtu\":1500,\"ipv4\":{\"enabled\":true,\"dhcp\":"
                "false,"
                "\"address\":[{\"ip\":\"192.168.126.30\",\"prefix-length\":24}]}}],"
                "\"dns-resolver\":{\"config\":{\"server\":[\"192.168.126.1\"]}},"
                "\"routes\":{\"config\":[{\"destination\":\"0.0.0.0/"
                "0\",\"next-hop-address\":\"192.168.126.1\","
                "\"table-id\":254,\"description\":\"yes\",\"x\":\"10:20\",\"e\":\"\",\"n\":null}]}}");
        _cleanup_free_ char *y = NULL;

        ASSERT_OK(hub_nmstate_yaml(v, &y));
        ASSERT_STREQ(y, "dns-resolver:\n"
                        "  config:\n"
                        "    server:\n"
                        "    - 192.168.126.1\n"
                        "interfaces:\n"
                        "- ipv4:\n"
                        "    address:\n"
                        "    - ip: 192.168.126.30\n"
                        "      prefix-length: 24\n"
                        "    dhcp: false\n"
                        "    enabled: true\n"
                        "  mac-address: 02:00:00:80:12:14\n"
                        "  mtu: 1500\n"
                        "  name: eth0\n"
                        "  state: up\n"
                        "  type: ethernet\n"
                        "routes:\n"
                        "  config:\n"
                        "  - description: \"yes\"\n"
                        "    destination: 0.0.0.0/0\n"
                        "    e: \"\"\n"
                        "    \"n\": null\n"
                        "    next-hop-address: 192.168.126.1\n"
                        "    table-id: 254\n"
                        "    x: \"10:20\"\n");
}

TEST(nmstate_from_service)
{
        _cleanup_(json_object_putp) json_object *a = NULL, *b = NULL;

        ASSERT_OK(hub_nmstate_from_service("", &a));
        ASSERT_EQ(json_object_array_length(a), 0);
        ASSERT_OK(hub_nmstate_from_service(
                "[{\"mac_interface_map\":[{\"logical_nic_name\":\"eth1\",\"mac_address\":\"b\"},"
                "{\"logical_nic_name\":\"eth0\",\"mac_address\":\"a\"}],\"network_yaml\":\"z\"},"
                "{\"mac_interface_map\":[],\"network_yaml\":\"a\"}]",
                &b));
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(b, 0), "network_yaml"), "a");
        ASSERT_STREQ(
                json_get_string(json_object_array_get_idx(
                                        json_get(json_object_array_get_idx(b, 1), "mac_interface_map"), 0),
                                "logical_nic_name"),
                "eth0");
        json_object_put(a);
        a = NULL;
        ASSERT_ERROR(hub_nmstate_from_service("{not json", &a), EBADMSG);
}

TEST(host_fingerprint_ignores_check_ins)
{
        _cleanup_(json_object_putp) json_object *h =
                hubtest_json("{\"id\":\"h\",\"status\":\"known\",\"checked_in_at\":\"2026-01-01T00:00:00Z\","
                             "\"updated_at\":\"2026-01-01T00:00:00Z\",\"inventory\":\"{}\"}");
        _cleanup_free_ char *t1 = NULL, *t2 = NULL, *t3 = NULL;
        uint64_t f1, f2, f3;

        ASSERT_OK(hub_service_host_strip(h, &t1, &f1));
        json_object_object_add(h, "checked_in_at", json_object_new_string("2026-01-01T00:01:00Z"));
        ASSERT_OK(hub_service_host_strip(h, &t2, &f2));
        ASSERT_EQ(f1, f2);
        ASSERT_NOT_CONTAINS(t1, "checked_in_at");
        json_object_object_add(h, "status", json_object_new_string("insufficient"));
        ASSERT_OK(hub_service_host_strip(h, &t3, &f3));
        ASSERT_NE(f1, f3);
}

TEST(index_functions)
{
        _cleanup_(json_object_putp)
                json_object *ie = hubtest_json("{\"metadata\":{\"name\":\"i\",\"namespace\":\"ns\"},"
                                               "\"spec\":{\"nmStateConfigLabelSelector\":"
                                               "{\"matchLabels\":{\"a\":\"1\"}}}}"),
                            *agent = hubtest_json("{\"metadata\":{\"namespace\":\"ns\"},\"status\":{"
                                                  "\"inventory\":{\"interfaces\":[{\"macAddress\":"
                                                  "\"AA:BB:CC:DD:EE:FF\"},{}]}}}");
        _cleanup_strv_free_ char **v1 = NULL, **v2 = NULL;

        ASSERT_OK(hub_index_infraenv_nmstate_selector(ie, &v1, NULL));
        ASSERT_STREQ(v1[0], "ns/a=1");
        ASSERT_NULL(v1[1]);
        ASSERT_OK(hub_index_agent_mac(agent, &v2, NULL));
        ASSERT_STREQ(v2[0], "ns/aa:bb:cc:dd:ee:ff");
        ASSERT_NULL(v2[1]);
}

TEST(metrics_text)
{
        HubMetrics *m = NULL;
        _cleanup_free_ char *text = NULL, *l = hub_metrics_label("controller", "a\"b\\c\nd");

        ASSERT_STREQ(l, "controller=\"a\\\"b\\\\c\\nd\"");
        ASSERT_OK(hub_metrics_new(&m));
        ASSERT_OK(hub_metrics_describe(m, "c_total", HUB_METRIC_COUNTER, "A counter."));
        ASSERT_OK(hub_metrics_describe(m, "h_seconds", HUB_METRIC_HISTOGRAM, "A histogram."));
        hub_metrics_add(m, "c_total", "x=\"1\"", 2);
        hub_metrics_add(m, "c_total", "x=\"1\"", 1);
        hub_metrics_observe(m, "h_seconds", NULL, 0.2);
        ASSERT_EQ((long)hub_metrics_get(m, "c_total", "x=\"1\""), 3);
        ASSERT_OK(hub_metrics_render(m, &text));
        ASSERT_CONTAINS(text, "# HELP c_total A counter.\n# TYPE c_total counter\nc_total{x=\"1\"} 3\n");
        ASSERT_CONTAINS(text, "h_seconds_bucket{le=\"0.1\"} 0\n");
        ASSERT_CONTAINS(text, "h_seconds_bucket{le=\"0.25\"} 1\n");
        ASSERT_CONTAINS(text, "h_seconds_bucket{le=\"+Inf\"} 1\nh_seconds_sum 0.2\nh_seconds_count 1\n");
        hub_metrics_free(m);
}

TEST(bind_addresses)
{
        static const struct {
                const char *in;
                int r;
                const char *host;
                unsigned port;
                int disabled;
        } cases[] = {
                { "127.0.0.1:8081", 0, "127.0.0.1", 8081, 0 },
                { ":8080", 0, NULL, 8080, 0 },
                { "[::1]:9", 0, "::1", 9, 0 },
                { "0", 0, NULL, 0, 1 },
                { "8080", -EINVAL, NULL, 0, 0 },
                { "host:99999", -EINVAL, NULL, 0, 0 },
                { "", -EINVAL, NULL, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *host = NULL;
                unsigned port = 0;
                int disabled = 0;

                ASSERT_EQ(hub_http_parse_bind_address(cases[i].in, &host, &port, &disabled), cases[i].r);
                if (cases[i].r < 0)
                        continue;
                ASSERT_TRUE(streq_ptr(host, cases[i].host));
                ASSERT_EQ(port, cases[i].port);
                ASSERT_EQ(disabled, cases[i].disabled);
        }
}

TEST(operation_paths)
{
        _cleanup_free_ char *p1 = NULL, *p2 = NULL, *p3 = NULL;

        ASSERT_OK(assisted_op_path(ASSISTED_OP_GET_HOST, (char *[]){ (char *)"i/e", (char *)"h", NULL },
                                   NULL, &p1));
        ASSERT_STREQ(p1, "/v2/infra-envs/i%2Fe/hosts/h");
        ASSERT_OK(assisted_op_path(ASSISTED_OP_LIST_EVENTS, (char *[]){ NULL }, "offset=1", &p2));
        ASSERT_STREQ(p2, "/v2/events?offset=1");
        ASSERT_ERROR(assisted_op_path(ASSISTED_OP_GET_HOST, (char *[]){ (char *)"x", NULL }, NULL, &p3),
                     EINVAL);
        ASSERT_EQ(assisted_op_from_id("v2ListHosts"), ASSISTED_OP_LIST_HOSTS);
        ASSERT_EQ(assisted_op_from_id("nope"), _ASSISTED_OP_INVALID);
}

/* ---- issue 23: bounded texts, writes refused for their size, links ---- */

/* a text of n bytes: "0123456789" repeated, or the UTF-8 character c */
static char *text_of(size_t n, const char *c)
{
        char *t = malloc(n + 1);
        size_t cl = c ? strlen(c) : 1;

        ASSERT_NOT_NULL(t);
        for (size_t i = 0; i < n; i++)
                t[i] = c ? c[i % cl] : (char)('0' + i % 10);
        t[n] = 0;
        return t;
}

/* every multi-byte sequence of s is whole */
static bool utf8_whole(const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 4;

                for (size_t i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                p += n;
        }
        return true;
}

TEST(text_bound)
{
        static const struct {
                size_t len, max;
                const char *c; /* NULL: digits */
                bool cut;
        } cases[] = {
                { 0, 64, NULL, false },
                { 64, 64, NULL, false },
                { 65, 64, NULL, true },
                { 2645273, HUB_TEXT_MAX, NULL, true },
                /* never half a character: 2, 3 and 4 bytes at every offset */
                { 5000, 1024, "é", true },
                { 5000, 1024, "a€", true },
                { 5000, 1023, "a€", true },
                { 5000, 1022, "ab€", true },
                { 5000, 1024, "😀", true },
                { 5000, 1025, "😀", true },
                { 5000, 1026, "😀", true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *t = text_of(cases[i].len, cases[i].c),
                                    *b = hub_text_bound(t, cases[i].max), *marker = NULL;

                ASSERT_NOT_NULL(b);
                ASSERT_TRUE(strlen(b) <= cases[i].max);
                ASSERT_TRUE(utf8_whole(b));
                ASSERT_EQ(hub_text_too_long(t, cases[i].max), cases[i].cut);
                if (!cases[i].cut) {
                        ASSERT_STREQ(b, t);
                        continue;
                }
                /* the beginning, then how much was cut */
                {
                        const char *m = strstr(b, " … [");
                        size_t kept;

                        ASSERT_NOT_NULL(m);
                        kept = (size_t)(m - b);
                        ASSERT_TRUE(strneq(b, t, kept));
                        ASSERT_TRUE(kept + 64 >= cases[i].max);
                        marker = strdup_printf(" … [%zu bytes cut]", cases[i].len - kept);
                        ASSERT_STREQ(m, marker);
                }
        }
        {
                _cleanup_free_ char *b = hub_text_bound(NULL, 64);

                ASSERT_STREQ(b, "");
        }
}

TEST(json_strings_bounded)
{
        _cleanup_free_ char *big = text_of(10000, NULL);
        _cleanup_(json_object_putp) json_object *v =
                hubtest_jsonf("{\"network\":[{\"id\":\"a\",\"status\":\"failure\",\"message\":\"%s\"}],"
                              "\"x\":[\"%s\",\"ok\"],"
                              "\"n\":1}",
                              big, big);

        ASSERT_OK(hub_json_bound_strings(v, 2048));
        ASSERT_TRUE(strlen(hubtest_str(json_object_array_get_idx(json_get(v, "network"), 0), "message")) <=
                    2048);
        ASSERT_TRUE(json_object_get_string_len(json_object_array_get_idx(json_get(v, "x"), 0)) <= 2048);
        ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(json_get(v, "x"), 1)), "ok");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(v, "network"), 0), "id"), "a");
}

/* every condition setter and every Event bounds what it is given: the
 * 2.6 MB error text of the service (3,960 NMStateConfigs) no more */
TEST(conditions_and_events_bound_service_texts)
{
        _cleanup_free_ char *huge = text_of(2645273, NULL);
        _cleanup_(json_object_putp) json_object *o = hubtest_json("{\"metadata\":{\"generation\":1}}");
        _cleanup_hub_plan_ HubPlan p = {};
        json_object *c;
        const char *probe;

        ASSERT_OK(hub_conditions_set(o, "ImageCreated", "False", "ImageCreationError", huge, NOW));
        ASSERT_TRUE(strlen(hubtest_str(hub_conditions_find(o, "ImageCreated"), "message")) <= HUB_TEXT_MAX);
        ASSERT_OK(hub_meta_conditions_set(o, "ImageReady", "False", "X", huge, NOW));
        ASSERT_TRUE(strlen(hubtest_str(hub_conditions_find(o, "ImageReady"), "message")) <= HUB_TEXT_MAX);
        ASSERT_OK(hub_conditions_setf(o, true, "SpecSynced", "False", "BackendError", NOW, "%s: %s",
                                      "The Spec could not be synced due to backend error", huge));
        c = hub_conditions_find(o, "SpecSynced");
        ASSERT_TRUE(strlen(hubtest_str(c, "message")) <= HUB_TEXT_MAX);
        ASSERT_TRUE(startswith(hubtest_str(c, "message"),
                               "The Spec could not be synced due to backend error: 0123456789"));
        /* the same long text again is no change: hive's times stay */
        probe = hubtest_str(c, "lastProbeTime");
        ASSERT_STREQ(probe, "2026-09-21T14:13:20Z");
        ASSERT_OK(hub_conditions_setf(o, true, "SpecSynced", "False", "BackendError", NOW + USEC_PER_SEC,
                                      "%s: %s", "The Spec could not be synced due to backend error", huge));
        ASSERT_STREQ(hubtest_str(hub_conditions_find(o, "SpecSynced"), "lastProbeTime"),
                     "2026-09-21T14:13:20Z");
        ASSERT_OK(hub_plan_event(&p, o, "Warning", "Huge", "%s", huge));
        ASSERT_TRUE(strlen(p.writes[0].message) <= HUB_EVENT_TEXT_MAX);
}

TEST(status_patch_split)
{
        static const struct {
                const char *patch, *conditions, *rest;
        } cases[] = {
                { "{\"status\":{\"conditions\":[{\"type\":\"A\"}],\"big\":\"x\"}}",
                  "{\"status\":{\"conditions\":[{\"type\":\"A\"}]}}", "{\"status\":{\"big\":\"x\"}}" },
                { "{\"status\":{\"conditions\":[]}}", "{\"status\":{\"conditions\":[]}}", NULL },
                { "{\"status\":{\"big\":\"x\"}}", NULL, "{\"status\":{\"big\":\"x\"}}" },
                { "{\"status\":{\"conditions\":null,\"big\":null}}", "{\"status\":{\"conditions\":null}}",
                  "{\"status\":{\"big\":null}}" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *p = hubtest_json(cases[i].patch), *c = NULL,
                                                        *r = NULL;
                _cleanup_free_ char *ct = NULL, *rt = NULL;

                ASSERT_OK(hub_status_patch_split(p, &c, &r));
                ct = c ? json_to_string(c, 0) : NULL;
                rt = r ? json_to_string(r, 0) : NULL;
                if (cases[i].conditions)
                        ASSERT_STREQ(ct, cases[i].conditions);
                else
                        ASSERT_NULL(c);
                if (cases[i].rest)
                        ASSERT_STREQ(rt, cases[i].rest);
                else
                        ASSERT_NULL(r);
        }
}

TEST(write_refused_for_size)
{
        static const struct {
                int error;
                long code;
                const char *message;
                bool refused;
        } cases[] = {
                { -EMSGSIZE, 413, "Request entity too large: limit is 3145728", true },
                { -EMSGSIZE, 500, "etcdserver: request is too large", true },
                { -EMSGSIZE, 500,
                  "rpc error: code = ResourceExhausted desc = trying to send message larger than max "
                  "(2645273 vs. 2097152)",
                  true },
                { -EINVAL, 422,
                  "Agent.agent-install.openshift.io \"h\" is invalid: metadata.annotations: Too long: must "
                  "have at most 262144 bytes",
                  true },
                { -EIO, 500, "Internal error occurred: etcd cluster is unavailable", false },
                /* a response over lib/http's cap is not the server refusing the write */
                { -E2BIG, 200, NULL, false },
                { -EINVAL, 422, "spec.note: Too long: must have at most 1024 bytes", false },
                { -EINVAL, 422, "spec.role: Unsupported value: \"boss\"", false },
                { -EBUSY, 409, "the object has been modified", false },
                { -ECONNREFUSED, 0, NULL, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ASSERT_EQ(hub_write_refused_for_size(cases[i].error, cases[i].code, cases[i].message),
                          cases[i].refused);
}

TEST(debug_links)
{
        static const struct {
                const char *source, *base, *api_key;
                const char *events, *cluster_logs, *host_logs;
        } cases[] = {
                /* local auth: the infra-env's key, Go's key order */
                { "https://assisted.example.com/api/assisted-install/v2/infra-envs/ie/downloads/"
                  "files?api_key=eyJ.a-b_c.d&file_name=discovery.ign",
                  "https://assisted.example.com", "eyJ.a-b_c.d",
                  "https://assisted.example.com/api/assisted-install/v2/"
                  "events?api_key=eyJ.a-b_c.d&infra_env_id=ID",
                  "https://assisted.example.com/api/assisted-install/v2/clusters/C/logs?api_key=eyJ.a-b_c.d",
                  "https://assisted.example.com/api/assisted-install/v2/clusters/C/logs?api_key=eyJ.a-b_c.d&"
                  "host_id=H&logs_type=host" },
                /* auth none, a base with a path: no key */
                { "http://198.51.100.1:8090/prefix/api/assisted-install/v2/infra-envs/ie/downloads/"
                  "files?file_name=discovery.ign",
                  "http://198.51.100.1:8090/prefix", NULL,
                  "http://198.51.100.1:8090/prefix/api/assisted-install/v2/events?infra_env_id=ID",
                  "http://198.51.100.1:8090/prefix/api/assisted-install/v2/clusters/C/logs",
                  "http://198.51.100.1:8090/prefix/api/assisted-install/v2/clusters/C/logs?host_id=H&"
                  "logs_type=host" },
                /* rhsso signs with an image_token, which the links do not carry */
                { "https://api.example.com/api/assisted-install/v2/infra-envs/ie/downloads/"
                  "files?file_name=discovery.ign&image_token=t",
                  "https://api.example.com", NULL,
                  "https://api.example.com/api/assisted-install/v2/events?infra_env_id=ID", NULL, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(hub_link_signer_done) HubLinkSigner s = {};
                _cleanup_free_ char *e = NULL, *cl = NULL, *hl = NULL;

                ASSERT_OK(hub_link_signer_parse(cases[i].source, &s));
                ASSERT_STREQ(s.base, cases[i].base);
                if (cases[i].api_key)
                        ASSERT_STREQ(s.api_key, cases[i].api_key);
                else
                        ASSERT_NULL(s.api_key);
                e = hub_link_events(&s, "infra_env_id", "ID");
                ASSERT_STREQ(e, cases[i].events);
                if (cases[i].cluster_logs) {
                        cl = hub_link_cluster_logs(&s, "C");
                        hl = hub_link_host_logs(&s, "C", "H");
                        ASSERT_STREQ(cl, cases[i].cluster_logs);
                        ASSERT_STREQ(hl, cases[i].host_logs);
                }
        }
        {
                HubLinkSigner s = {};

                ASSERT_ERROR(hub_link_signer_parse("http://svc/files?api_key=k", &s), EINVAL);
                ASSERT_ERROR(hub_link_signer_parse(NULL, &s), EINVAL);
                ASSERT_NULL(hub_link_source_of_infraenv(NULL));
        }
        /* set once: another token of the same link is as good; another base
         * (--service-url's, before) or a missing key is not */
        {
                _cleanup_(json_object_putp) json_object *d = hubtest_json("{}");

                ASSERT_OK(hub_link_set(d, "eventsURL",
                                       "https://a/api/assisted-install/v2/events?api_key=1&x=y"));
                ASSERT_OK(hub_link_set(d, "eventsURL",
                                       "https://a/api/assisted-install/v2/events?api_key=2&x=y"));
                ASSERT_STREQ(hubtest_str(d, "eventsURL"),
                             "https://a/api/assisted-install/v2/events?api_key=1&x=y");
                ASSERT_OK(hub_link_set(d, "eventsURL",
                                       "https://b/api/assisted-install/v2/events?api_key=2&x=y"));
                ASSERT_STREQ(hubtest_str(d, "eventsURL"),
                             "https://b/api/assisted-install/v2/events?api_key=2&x=y");
                ASSERT_OK(json_add_string(d, "eventsURL", "https://b/api/assisted-install/v2/events?x=y"));
                ASSERT_OK(hub_link_set(d, "eventsURL",
                                       "https://b/api/assisted-install/v2/events?api_key=2&x=y"));
                ASSERT_STREQ(hubtest_str(d, "eventsURL"),
                             "https://b/api/assisted-install/v2/events?api_key=2&x=y");
                ASSERT_OK(hub_link_set(d, "eventsURL", NULL));
                ASSERT_STREQ(hubtest_str(d, "eventsURL"),
                             "https://b/api/assisted-install/v2/events?api_key=2&x=y");
        }
}

/* a restarted hub (the only replica: the Lease held, or no leader
 * election) resumes at once a registration its predecessor marked */
TEST(claim_predecessor_marker)
{
        static const struct {
                const char *holder;
                usec_t marked_ago, active_ago;
                HubClaimAction action;
        } cases[] = {
                /* before this one acted: a predecessor's, searched at once */
                { "hub-old", 30, 10, HUB_CLAIM_REGISTER },
                { "hub-old", 119, 2, HUB_CLAIM_REGISTER },
                /* written after this one acts: another replica's, held */
                { "hub-other", 10, 30, HUB_CLAIM_WAIT },
                /* at the very moment it started: held */
                { "hub-other", 10, 10, HUB_CLAIM_WAIT },
                /* not known when this one acts: held, as before */
                { "hub-old", 30, 0, HUB_CLAIM_WAIT },
                /* its own marker, or an old one: searched anyway */
                { "me", 5, 100, HUB_CLAIM_REGISTER },
                { "hub-old", 300, 0, HUB_CLAIM_REGISTER },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *m =
                        hub_claim_marker(NOW - cases[i].marked_ago * USEC_PER_SEC, cases[i].holder);
                _cleanup_(json_object_putp)
                        json_object *obj = hubtest_jsonf(
                                            "{\"metadata\":{\"annotations\":{\"" HUB_ANNOTATION_REGISTERING
                                            "\":\"%s\"}}}",
                                            m),
                                    *cand = hubtest_json("[]");
                _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};

                decide_claim(obj, cand, NOW,
                             cases[i].active_ago ? NOW - cases[i].active_ago * USEC_PER_SEC : 0, &d);
                if (d.action != cases[i].action)
                        test_fail(__FILE__, __LINE__, "case %zu: %s, expected %s", i,
                                  hub_claim_action_to_string(d.action),
                                  hub_claim_action_to_string(cases[i].action));
        }
}

DEFINE_TEST_MAIN
