/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Node labels and the worker pool pause (controller/labels.h) as tables:
 * the service's hosts (node_labels, role, machine_config_pool_name,
 * status) and the API server's Nodes in, the Nodes to patch and the
 * patches out, with upstream's rules (notes/controller.md §5.4).
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/labels.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

typedef struct HostSpec {
        const char *name;
        const char *role;
        const char *status;
        const char *ip;
        const char *labels; /* node_labels, NULL: none */
        const char *pool; /* machine_config_pool_name */
} HostSpec;

typedef struct NodeSpec {
        const char *name;
        const char *ip;
        bool ready;
        const char *labels; /* metadata.labels JSON, NULL: none */
} NodeSpec;

static json_object *parse_json(const char *text)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

static json_object *cluster_make(const HostSpec *specs)
{
        json_object *cluster = parse_json("{\"hosts\": []}");

        for (size_t i = 0; specs[i].name; i++) {
                _cleanup_free_ char *inv = strdup_printf(
                        "{\"interfaces\": [{\"ipv4_addresses\": [\"%s/24\"], \"ipv6_addresses\": []}]}",
                        specs[i].ip);
                _cleanup_free_ char *id = strdup_printf("00000000-0000-0000-0000-00000000000%zu", i + 1);
                json_object *h = json_new_object();

                ASSERT_OK(json_add_string(h, "id", id));
                ASSERT_OK(json_add_string(h, "infra_env_id", "11111111-1111-1111-1111-111111111111"));
                ASSERT_OK(json_add_string(h, "requested_hostname", specs[i].name));
                ASSERT_OK(json_add_string(h, "role", specs[i].role));
                ASSERT_OK(json_add_string(h, "status", specs[i].status));
                ASSERT_OK(json_add_string(h, "inventory", inv));
                if (specs[i].labels)
                        ASSERT_OK(json_add_string(h, "node_labels", specs[i].labels));
                if (specs[i].pool)
                        ASSERT_OK(json_add_string(h, "machine_config_pool_name", specs[i].pool));
                ASSERT_OK(json_append(json_get(cluster, "hosts"), h));
        }
        return cluster;
}

static json_object *nodes_make(const NodeSpec *specs)
{
        json_object *list = parse_json("{\"kind\": \"NodeList\", \"items\": []}");

        for (size_t i = 0; specs[i].name; i++) {
                _cleanup_free_ char *text = strdup_printf(
                        "{\"metadata\": {\"name\": \"%s\"%s%s}, \"status\": {\"conditions\": [{\"type\": "
                        "\"Ready\", \"status\": \"%s\"}], \"addresses\": [{\"type\": \"InternalIP\", "
                        "\"address\": \"%s\"}]}}",
                        specs[i].name, specs[i].labels ? ", \"labels\": " : "", strempty(specs[i].labels),
                        specs[i].ready ? "True" : "False", specs[i].ip);
                ASSERT_OK(json_append(json_get(list, "items"), parse_json(text)));
        }
        return list;
}

/* "labelled=N present=N pause=yes|no node=patch ..." */
static char *plan_text(const HostSpec *hosts, const NodeSpec *nodes)
{
        _cleanup_(json_object_putp) json_object *cluster = cluster_make(hosts), *list = nodes_make(nodes);
        _cleanup_(node_labels_plan_done) NodeLabelsPlan p = {};
        _cleanup_free_ char *text = NULL;

        ASSERT_OK(node_labels_plan(cluster, list, &p, NULL));
        text = strdup_printf("labelled=%zu present=%zu pause=%s", p.labelled, p.present,
                             p.pause_worker_pool ? "yes" : "no");
        for (size_t i = 0; i < p.n; i++) {
                char *grown =
                        strdup_printf("%s %s=%s", text, p.nodes[i],
                                      json_object_to_json_string_ext(p.patches[i], JSON_C_TO_STRING_PLAIN));
                free(text);
                text = grown;
        }
        return TAKE_PTR(text);
}

TEST(which_nodes)
{
        static const struct {
                HostSpec hosts[4];
                NodeSpec nodes[4];
                const char *expect;
        } cases[] = {
                /* no host asks: the task is over */
                { { { "m0", "master", "installed", "192.0.2.10", NULL, NULL }, {} },
                  { { "m0", "192.0.2.10", true, NULL }, {} },
                  "labelled=0 present=0 pause=no" },
                /* one asks; its Ready Node gets the labels as a merge patch */
                { { { "m0", "master", "installed", "192.0.2.10", "{\"a\":\"1\",\"b\":\"\"}", NULL },
                    { "m1", "master", "installed", "192.0.2.11", NULL, NULL },
                    {} },
                  { { "m0", "192.0.2.10", true, "{\"kubernetes.io/os\":\"linux\"}" },
                    { "m1", "192.0.2.11", true, NULL },
                    {} },
                  "labelled=1 present=0 pause=no m0={\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"\"}}}" },
                /* a Node not Ready waits */
                { { { "m0", "master", "installing", "192.0.2.10", "{\"a\":\"1\"}", NULL }, {} },
                  { { "m0", "192.0.2.10", false, NULL }, {} },
                  "labelled=1 present=0 pause=no" },
                /* every pair there already: done without a patch; a value
                 * that differs is patched */
                { { { "m0", "master", "installed", "192.0.2.10", "{\"a\":\"1\"}", NULL },
                    { "m1", "master", "installed", "192.0.2.11", "{\"a\":\"1\"}", NULL },
                    {} },
                  { { "m0", "192.0.2.10", true, "{\"a\":\"1\",\"z\":\"9\"}" },
                    { "m1", "192.0.2.11", true, "{\"a\":\"2\"}" },
                    {} },
                  "labelled=2 present=1 pause=no m1={\"metadata\":{\"labels\":{\"a\":\"1\"}}}" },
                /* a Node by another name is matched by its address */
                { { { "w0", "worker", "installed", "192.0.2.20", "{\"x\":\"y\"}", NULL }, {} },
                  { { "renamed", "192.0.2.20", true, NULL }, {} },
                  "labelled=1 present=0 pause=no renamed={\"metadata\":{\"labels\":{\"x\":\"y\"}}}" },
                /* hosts in error and disabled hosts ask for nothing; a Node
                 * of no asking host is left alone even at a known address */
                { { { "m0", "master", "error", "192.0.2.10", "{\"a\":\"1\"}", NULL },
                    { "m1", "master", "disabled", "192.0.2.11", "{\"a\":\"1\"}", NULL },
                    { "m2", "master", "installed", "192.0.2.12", NULL, NULL },
                    {} },
                  { { "m0", "192.0.2.10", true, NULL }, { "m2", "192.0.2.12", true, NULL }, {} },
                  "labelled=0 present=0 pause=no" },
                /* a worker with a machine config pool pauses the pool; a
                 * master with one does not */
                { { { "w0", "worker", "installed", "192.0.2.20", "{\"x\":\"y\"}", "infra" }, {} },
                  { { "w0", "192.0.2.20", true, NULL }, {} },
                  "labelled=1 present=0 pause=yes w0={\"metadata\":{\"labels\":{\"x\":\"y\"}}}" },
                { { { "m0", "master", "installed", "192.0.2.10", "{\"x\":\"y\"}", "master" }, {} },
                  { { "m0", "192.0.2.10", true, "{\"x\":\"y\"}" }, {} },
                  "labelled=1 present=1 pause=no" },
                /* labels that do not parse ask for nothing (upstream
                 * ignores the Unmarshal error) */
                { { { "m0", "master", "installed", "192.0.2.10", "not json", NULL }, {} },
                  { { "m0", "192.0.2.10", true, NULL }, {} },
                  "labelled=1 present=1 pause=no" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = plan_text(cases[i].hosts, cases[i].nodes);
                ASSERT_STREQ(text, cases[i].expect);
        }
}

TEST(unparsable_inventory_fails_the_plan)
{
        _cleanup_(json_object_putp) json_object *cluster = parse_json(
                "{\"hosts\": [{\"id\": \"h\", \"requested_hostname\": \"m0\", \"status\": \"installed\", "
                "\"inventory\": \"{\", \"node_labels\": \"{}\"}]}");
        _cleanup_(json_object_putp) json_object *nodes = parse_json("{\"items\": []}");
        _cleanup_free_ char *err = NULL;
        NodeLabelsPlan p = {};

        ASSERT_TRUE(node_labels_plan(cluster, nodes, &p, &err) < 0);
        ASSERT_NOT_NULL(err);
}

TEST(pool_pause)
{
        _cleanup_(json_object_putp) json_object *unpaused = parse_json("{\"spec\": {\"paused\": false}}");
        _cleanup_(json_object_putp) json_object *paused = parse_json("{\"spec\": {\"paused\": true}}");
        _cleanup_(json_object_putp) json_object *bare = parse_json("{\"spec\": {}}");
        _cleanup_(json_object_putp) json_object *pause = pool_paused_patch(true),
                                                *unpause = pool_paused_patch(false);

        ASSERT_TRUE(pool_pause_needed(unpaused, true));
        ASSERT_TRUE(pool_pause_needed(bare, true));
        ASSERT_FALSE(pool_pause_needed(paused, true));
        ASSERT_TRUE(pool_pause_needed(paused, false));
        ASSERT_FALSE(pool_pause_needed(bare, false));
        /* k8s_client.PatchMachineConfigPoolPaused's body */
        ASSERT_STREQ(json_object_to_json_string_ext(pause, JSON_C_TO_STRING_PLAIN),
                     "{\"spec\":{\"paused\":true}}");
        ASSERT_STREQ(json_object_to_json_string_ext(unpause, JSON_C_TO_STRING_PLAIN),
                     "{\"spec\":{\"paused\":false}}");
}

DEFINE_TEST_MAIN
