/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Joined, Done and Configuring (controller/nodes.h) as tables: the service's
 * hosts and the API server's Nodes in, the round's reports out, with
 * upstream's matching rules (name among the hosts not installed, else an
 * InternalIP among every host's addresses) and stage rules.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/cluster-hosts.h"
#include "cleanup.h"
#include "controller/nodes.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

typedef struct HostSpec {
        const char *name; /* requested_hostname */
        const char *status;
        const char *stage;
        const char *ip; /* the inventory's interface address, with prefix */
} HostSpec;

typedef struct NodeSpec {
        const char *name;
        const char *ip; /* InternalIP, or NULL */
        bool ready;
} NodeSpec;

static json_object *parse_json(const char *text)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

/* GET /v2/clusters/{id} as the service answers it, hosts with inventories */
static void hosts_make(const HostSpec *specs, ClusterHosts *ret)
{
        _cleanup_(json_object_putp) json_object *cluster = parse_json("{\"hosts\": []}");
        json_object *hosts = json_get(cluster, "hosts");

        for (size_t i = 0; specs[i].name; i++) {
                _cleanup_free_ char *inv =
                        strdup_printf("{\"hostname\": \"h%zu\", \"interfaces\": [{\"name\": \"enp1s0\", "
                                      "\"ipv4_addresses\": "
                                      "[\"%s\"], \"ipv6_addresses\": [\"fd00::%zu/64\"]}]}",
                                      i, specs[i].ip, i + 1);
                _cleanup_free_ char *id = strdup_printf("00000000-0000-0000-0000-00000000000%zu", i + 1);
                json_object *h = json_new_object(), *progress = json_new_object();

                ASSERT_OK(json_add_string(h, "id", id));
                ASSERT_OK(json_add_string(h, "infra_env_id", "11111111-1111-1111-1111-111111111111"));
                ASSERT_OK(json_add_string(h, "requested_hostname", specs[i].name));
                ASSERT_OK(json_add_string(h, "role", i < 3 ? "master" : "worker"));
                ASSERT_OK(json_add_string(h, "status", specs[i].status));
                ASSERT_OK(json_add_string(h, "inventory", inv));
                ASSERT_OK(json_add_string(progress, "current_stage", specs[i].stage));
                ASSERT_OK(json_add(h, "progress", progress));
                ASSERT_OK(json_append(hosts, h));
        }
        ASSERT_OK(cluster_hosts_from_cluster(cluster, NULL, ret, NULL));
}

static json_object *nodes_make(const NodeSpec *specs)
{
        json_object *list = parse_json("{\"kind\": \"NodeList\", \"items\": []}");

        for (size_t i = 0; specs[i].name; i++) {
                _cleanup_free_ char *text = strdup_printf(
                        "{\"metadata\": {\"name\": \"%s\"}, \"status\": {\"conditions\": [{\"type\": "
                        "\"MemoryPressure\", \"status\": \"False\"}, {\"type\": \"Ready\", \"status\": "
                        "\"%s\"}], "
                        "\"addresses\": [{\"type\": \"Hostname\", \"address\": \"%s\"}%s%s%s]}}",
                        specs[i].name, specs[i].ready ? "True" : "False", specs[i].name,
                        specs[i].ip ? ", {\"type\": \"InternalIP\", \"address\": \"" : "",
                        strempty(specs[i].ip), specs[i].ip ? "\"}" : "");
                ASSERT_OK(json_append(json_get(list, "items"), parse_json(text)));
        }
        return list;
}

/* The plan as one line: "node:host:JUD" (J joined, U untaint, D done, - none) */
static char *plan_text(const ClusterHosts *hosts, json_object *nodes, bool untaint)
{
        NodeStatusAction *a = NULL;
        _cleanup_strv_free_ char **parts = NULL;
        size_t n = 0;

        ASSERT_OK(node_status_plan(hosts, nodes, untaint, &a, &n));
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *p = strdup_printf(
                        "%s:%s:%s%s%s", a[i].node, a[i].host >= 0 ? hosts->hosts[a[i].host].name : "-",
                        a[i].report_joined ? "J" : "", a[i].untaint ? "U" : "", a[i].report_done ? "D" : "");
                ASSERT_OK(strv_extend(&parts, p));
        }
        node_status_actions_free(a, n);
        return parts ? strv_join(parts, " ") : strdup("");
}

TEST(stage_rules)
{
        static const struct {
                const char *stage;
                bool ready;
                const char *expect;
        } cases[] = {
                /* Joined only from Configuring and Rebooting; Done when Ready
                 * and not Done yet, in the same round as Joined */
                { "Rebooting", false, "master-0:master-0:J" },
                { "Configuring", false, "master-0:master-0:J" },
                { "Rebooting", true, "master-0:master-0:JD" },
                { "Configuring", true, "master-0:master-0:JD" },
                { "Joined", true, "master-0:master-0:D" },
                { "Joined", false, "" },
                { "Waiting for ignition", true, "master-0:master-0:D" },
                { "Writing image to disk", false, "" },
                { "Done", true, "" },
                { "Done", false, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const HostSpec specs[] = {
                        { "master-0", "installing-in-progress", cases[i].stage, "192.0.2.10/24" }, {}
                };
                const NodeSpec nodes[] = { { "master-0", "192.0.2.10", cases[i].ready }, {} };
                _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
                _cleanup_(json_object_putp) json_object *list = nodes_make(nodes);
                _cleanup_free_ char *text = NULL;

                hosts_make(specs, &hosts);
                text = plan_text(&hosts, list, false);
                ASSERT_STREQ(text, cases[i].expect);
        }
}

TEST(matching)
{
        const HostSpec specs[] = {
                { "master-0", "installing-in-progress", "Rebooting", "192.0.2.10/24" },
                /* upper case in the service: matched lower-cased */
                { "Master-1", "installing-in-progress", "Rebooting", "192.0.2.11/24" },
                /* known by another name than the node's: by its address */
                { "short-2", "installing-in-progress", "Configuring", "192.0.2.12/24" },
                { "worker-0", "installing-in-progress", "Rebooting", "192.0.2.20/24" },
                /* installed: its name is not matched, its address is (and it is Done) */
                { "worker-1", "installed", "Done", "192.0.2.21/24" },
                {},
        };
        const NodeSpec nodes[] = {
                { "master-0", "192.0.2.10", true },
                { "MASTER-1", "192.0.2.11", false },
                { "short-2.example.com", "192.0.2.12", true },
                /* the IPv6 address of the inventory matches as well */
                { "w0", "fd00::4", false },
                { "worker-1", "192.0.2.21", true },
                /* a node of no host: listed without a host, to be warned about */
                { "stranger", "198.51.100.7", true },
                /* no InternalIP and no name match */
                { "nameless", NULL, true },
                {},
        };
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_(json_object_putp) json_object *list = nodes_make(nodes);
        _cleanup_free_ char *text = NULL;

        hosts_make(specs, &hosts);
        text = plan_text(&hosts, list, false);
        ASSERT_STREQ(text,
                     "master-0:master-0:JD MASTER-1:master-1:J short-2.example.com:short-2:JD w0:worker-0:J "
                     "stranger:-: nameless:-:");
}

TEST(untaint)
{
        const HostSpec specs[] = {
                { "master-0", "installing-in-progress", "Rebooting", "192.0.2.10/24" },
                { "master-1", "installing-in-progress", "Joined", "192.0.2.11/24" },
                { "master-2", "installing-in-progress", "Joined", "192.0.2.12/24" },
                {},
        };
        const NodeSpec nodes[] = {
                { "master-0", "192.0.2.10", false },
                { "master-1", "192.0.2.11", false },
                { "master-2", "192.0.2.12", true },
                {},
        };
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_(json_object_putp) json_object *list = nodes_make(nodes);
        _cleanup_free_ char *with = NULL, *without = NULL;

        hosts_make(specs, &hosts);
        with = plan_text(&hosts, list, true);
        without = plan_text(&hosts, list, false);
        /* only nodes that are not Ready lose the taint */
        ASSERT_STREQ(with, "master-0:master-0:JU master-1:master-1:U master-2:master-2:D");
        ASSERT_STREQ(without, "master-0:master-0:J master-2:master-2:D");
}

TEST(progress)
{
        static const struct {
                HostSpec hosts[4];
                NodesProgress expect;
                size_t remaining;
        } cases[] = {
                { { { "a", "installing-in-progress", "Rebooting", "192.0.2.1/24" },
                    { "b", "installed", "Done", "192.0.2.2/24" } },
                  NODES_WAITING,
                  1 },
                { { { "a", "installed", "Done", "192.0.2.1/24" },
                    { "b", "installed", "Done", "192.0.2.2/24" } },
                  NODES_ALL_INSTALLED,
                  0 },
                { { { "a", "error", "Failed", "192.0.2.1/24" },
                    { "b", "installed", "Done", "192.0.2.2/24" } },
                  NODES_ALL_FAILED,
                  1 },
                { { { "a", "error", "Failed", "192.0.2.1/24" },
                    { "b", "installing-in-progress", "Joined", "192.0.2.2/24" } },
                  NODES_WAITING,
                  2 },
                { { {} }, NODES_ALL_INSTALLED, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
                size_t remaining = 99;

                hosts_make(cases[i].hosts, &hosts);
                ASSERT_EQ(nodes_progress(&hosts, &remaining), cases[i].expect);
                ASSERT_EQ(remaining, cases[i].remaining);
        }
}

TEST(disabled_hosts_are_not_hosts)
{
        _cleanup_(json_object_putp) json_object *cluster = parse_json(
                "{\"hosts\": [{\"id\": \"a\", \"status\": \"disabled\", \"requested_hostname\": \"x\", "
                "\"inventory\": \"not json\"}, {\"id\": \"b\", \"status\": \"installing\", "
                "\"requested_hostname\": \"y\", \"inventory\": \"{}\"}]}");
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};

        ASSERT_OK(cluster_hosts_from_cluster(cluster, NULL, &hosts, NULL));
        ASSERT_EQ(hosts.n, 1u);
        ASSERT_STREQ(hosts.hosts[0].id, "b");
}

TEST(configuring)
{
        const HostSpec specs[] = {
                { "master-0", "installing-in-progress", "Rebooting", "192.0.2.10/24" },
                { "master-1", "installing-in-progress", "Configuring", "192.0.2.11/24" },
                { "worker-0", "installing-in-progress", "Waiting for ignition", "192.0.2.20/24" },
                { "worker-1", "installing-in-progress", "Rebooting", "192.0.2.21/24" },
                { "worker-2", "installing-in-progress", "Rebooting", "192.0.2.22/24" },
                { "worker-3", "installing-in-progress", "Done", "192.0.2.23/24" },
                {},
        };
        /* as the machine-config-server logs an Ignition fetch */
        const char *log =
                "I0101 00:00:00.000000 1 api.go:116] Pool master requested by address:\"192.0.2.10:44872\" "
                "User-Agent:\"Ignition/2.14.0\" Accept-Header: "
                "\"application/vnd.coreos.ignition+json;version=3.2.0\"\n"
                "I0101 00:00:01.000000 1 api.go:116] Pool master requested by address:\"192.0.2.11:44872\" "
                "User-Agent:\"Ignition/2.14.0\"\n"
                "I0101 00:00:02.000000 1 api.go:116] Pool worker requested by address:\"192.0.2.20:5000\" "
                "User-Agent:\"Ignition/2.14.0\"\n"
                /* the IPv6 address of worker-1, zone and brackets */
                "I0101 00:00:03.000000 1 api.go:116] Pool worker requested by "
                "address:\"[fd00::4%enp1s0]:5000\" "
                "User-Agent:\"Ignition/2.14.0\"\n"
                /* another client than Ignition */
                "I0101 00:00:04.000000 1 api.go:116] Pool worker requested by address:\"192.0.2.22:5000\" "
                "User-Agent:\"curl/8.0\"\n"
                "I0101 00:00:05.000000 1 api.go:116] Pool worker requested by address:\"192.0.2.23:5000\" "
                "User-Agent:\"Ignition/2.14.0\"\n";
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_free_ int *plan = NULL, *none = NULL;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_free_ char *text = NULL;

        hosts_make(specs, &hosts);
        ASSERT_OK(configuring_plan(&hosts, log, &plan));
        for (int *i = plan; *i >= 0; i++)
                ASSERT_OK(strv_extend(&names, hosts.hosts[*i].name));
        text = strv_join(names, " ");
        /* worker-0 is Waiting for ignition: the controller (unlike the
         * bootstrap) moves it on to Configuring */
        ASSERT_STREQ(text, "master-0 worker-0 worker-1");

        ASSERT_OK(configuring_plan(&hosts, "", &none));
        ASSERT_EQ(none[0], -1);
}

DEFINE_TEST_MAIN
