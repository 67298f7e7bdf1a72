/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dry run's cluster (controller/dry.h): what it answers for each read
 * the controller makes, given the hosts file and which hosts rebooted, and
 * that the controller's own decisions read it as a finished cluster.
 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "assisted/cluster-hosts.h"
#include "cleanup.h"
#include "controller/dry.h"
#include "controller/finalize.h"
#include "jsonutil.h"
#include "macro.h"
#include "strutil.h"
#include "tests.h"

static const KubeResource proxies = KUBE_RESOURCE("config.openshift.io", "v1", "proxies", "Proxy", false);
static const KubeResource cluster_versions =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusterversions", "ClusterVersion", false);
static const KubeResource cluster_operators =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusteroperators", "ClusterOperator", false);

static const char HOSTS[] =
        "[{\"hostname\": \"master-0\", \"ip\": \"192.0.2.10\", \"rebootMarkerPath\": \"/m0\"},"
        " {\"hostname\": \"master-1\", \"ip\": \"192.0.2.11\", \"rebootMarkerPath\": \"/m1\"},"
        " {\"hostname\": \"worker-0\", \"ip\": \"2001:db8::20\", \"rebootMarkerPath\": \"/w0\"}]";

static void cluster(DryCluster *c, const bool *rebooted)
{
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(dry_cluster_hosts_parse(HOSTS, strlen(HOSTS), &c->hosts, &c->n, &err));
        ASSERT_EQ(c->n, 3u);
        c->rebooted = rebooted;
        c->openshift_version = "4.13.18";
}

static void cluster_done(DryCluster *c)
{
        dry_cluster_hosts_free(c->hosts, c->n);
}

static const char *node_name(json_object *list, size_t i)
{
        return json_get_string(json_get(json_object_array_get_idx(json_get(list, "items"), i), "metadata"),
                               "name");
}

TEST(nodes_are_the_rebooted_hosts)
{
        static const struct {
                bool rebooted[3];
                const char *names; /* the NodeList's, in order */
        } cases[] = {
                { { false, false, false }, "" },
                { { true, false, false }, "master-0" },
                { { false, true, true }, "master-1 worker-0" },
                { { true, true, true }, "master-0 master-1 worker-0" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *list = NULL;
                _cleanup_strv_free_ char **names = NULL;
                _cleanup_free_ char *joined = NULL;
                DryCluster c = {};

                cluster(&c, cases[i].rebooted);
                ASSERT_OK(dry_cluster_list(&c, &kube_resource_nodes, NULL, &list));
                ASSERT_STREQ(json_get_string(list, "kind"), "NodeList");
                for (size_t j = 0; j < json_object_array_length(json_get(list, "items")); j++)
                        ASSERT_OK(strv_extend(&names, node_name(list, j)));
                joined = strv_join(names, " ");
                ASSERT_STREQ(joined, cases[i].names);
                cluster_done(&c);
        }
}

TEST(a_node_is_ready_with_its_address_and_matches_its_host)
{
        static const bool rebooted[3] = { false, false, true };
        _cleanup_(json_object_putp) json_object *node = NULL, *missing = NULL, *svc = NULL;
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_free_ char *err = NULL;
        json_object *cond, *addr;
        DryCluster c = {};

        cluster(&c, rebooted);
        ASSERT_OK(dry_cluster_get(&c, &kube_resource_nodes, NULL, "worker-0", &node));
        cond = json_object_array_get_idx(json_get_path(node, "status.conditions"), 0);
        ASSERT_STREQ(json_get_string(cond, "type"), "Ready");
        ASSERT_STREQ(json_get_string(cond, "status"), "True");
        addr = json_object_array_get_idx(json_get_path(node, "status.addresses"), 0);
        ASSERT_STREQ(json_get_string(addr, "type"), "InternalIP");
        ASSERT_STREQ(json_get_string(addr, "address"), "2001:db8::20");
        /* no taints: the untaint rule never writes in dry run */
        ASSERT_NULL(json_get_path(node, "spec.taints"));
        /* a host that has not rebooted is no node yet */
        ASSERT_ERROR(dry_cluster_get(&c, &kube_resource_nodes, NULL, "master-0", &missing), ENOENT);
        ASSERT_ERROR(dry_cluster_get(&c, &kube_resource_nodes, NULL, "nobody", &missing), ENOENT);

        /* the service's host of that name is the node's */
        svc = json_tokener_parse(
                "{\"hosts\": [{\"id\": \"a\", \"infra_env_id\": \"ie\", \"requested_hostname\": "
                "\"worker-0\", "
                "\"role\": \"worker\", \"status\": \"installing-in-progress\", \"inventory\": \"{}\"}]}");
        ASSERT_NOT_NULL(svc);
        ASSERT_OK(cluster_hosts_from_cluster(svc, NULL, &hosts, &err));
        ASSERT_EQ(cluster_hosts_match_node(&hosts, node), 0);
        cluster_done(&c);
}

TEST(the_cluster_is_finished)
{
        static const bool rebooted[3] = {};
        _cleanup_(json_object_putp) json_object *proxy = NULL, *cv = NULL, *co = NULL, *cos = NULL,
                                                *cm = NULL, *other = NULL;
        const char *message;
        DryCluster c = {};

        cluster(&c, rebooted);
        /* no proxy */
        ASSERT_OK(dry_cluster_get(&c, &proxies, NULL, "cluster", &proxy));
        ASSERT_EQ(json_object_object_length(json_get(proxy, "status")), 0);
        /* the cluster version: Console enabled, available, the version */
        ASSERT_OK(dry_cluster_get(&c, &cluster_versions, NULL, "version", &cv));
        ASSERT_TRUE(cluster_capability_enabled(cv, CONSOLE_CAPABILITY));
        ASSERT_STREQ(operator_status_of(json_get_path(cv, "status.conditions"), &message),
                     OPERATOR_STATUS_AVAILABLE);
        ASSERT_STREQ(message, "All is well");
        ASSERT_STREQ(json_get_string(json_get_path(cv, "status.desired"), "version"), "4.13.18");
        /* the console operator: available, with the version */
        ASSERT_OK(dry_cluster_get(&c, &cluster_operators, NULL, CONSOLE_OPERATOR, &co));
        ASSERT_STREQ(operator_status_of(json_get_path(co, "status.conditions"), &message),
                     OPERATOR_STATUS_AVAILABLE);
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(json_get_path(co, "status.versions"), 0),
                                     "version"),
                     "4.13.18");
        ASSERT_OK(dry_cluster_list(&c, &cluster_operators, NULL, &cos));
        ASSERT_STREQ(json_get_string(cos, "kind"), "ClusterOperatorList");
        ASSERT_EQ(json_object_array_length(json_get(cos, "items")), 1u);
        /* the ingress CA: one certificate */
        ASSERT_OK(dry_cluster_get(&c, &kube_resource_configmaps, INGRESS_CA_NAMESPACE, INGRESS_CA_CONFIGMAP,
                                  &cm));
        ASSERT_TRUE(startswith(json_get_string(json_get(cm, "data"), INGRESS_CA_KEY),
                               "-----BEGIN CERTIFICATE-----\n"));
        ASSERT_TRUE(endswith(json_get_string(json_get(cm, "data"), INGRESS_CA_KEY),
                             "-----END CERTIFICATE-----\n"));
        /* anything else is not there (upstream's mock aborts instead) */
        ASSERT_ERROR(dry_cluster_get(&c, &kube_resource_configmaps, "openshift-config", INGRESS_CA_CONFIGMAP,
                                     &other),
                     ENOENT);
        ASSERT_ERROR(dry_cluster_get(&c, &cluster_operators, NULL, "kube-apiserver", &other), ENOENT);
        ASSERT_ERROR(dry_cluster_get(&c, &kube_resource_secrets, "default", "x", &other), ENOENT);
        cluster_done(&c);
}

TEST(nothing_to_approve_and_no_pods)
{
        static const bool rebooted[3] = { true, true, true };
        static const KubeResource *const empty[] = { &kube_resource_csrs, &kube_resource_pods,
                                                     &kube_resource_events };

        for (size_t i = 0; i < ELEMENTSOF(empty); i++) {
                _cleanup_(json_object_putp) json_object *list = NULL;
                _cleanup_free_ char *kind = strdup_printf("%sList", empty[i]->kind);
                DryCluster c = {};

                cluster(&c, rebooted);
                ASSERT_OK(dry_cluster_list(&c, empty[i], "openshift-machine-config-operator", &list));
                ASSERT_STREQ(json_get_string(list, "kind"), kind);
                ASSERT_EQ(json_object_array_length(json_get(list, "items")), 0u);
                cluster_done(&c);
        }
}

TEST(hosts_file)
{
        static const char one[] = "[{\"hostname\": \"h1\", \"ip\": \"198.51.100.11\", "
                                  "\"rebootMarkerPath\": \"/tmp/h1-rebooted\"}]";
        DryClusterHost *h = NULL;
        _cleanup_free_ char *err = NULL;
        size_t n = 0;

        ASSERT_OK(dry_cluster_hosts_parse(one, strlen(one), &h, &n, &err));
        ASSERT_EQ(n, 1u);
        ASSERT_STREQ(h[0].hostname, "h1");
        ASSERT_STREQ(h[0].ip, "198.51.100.11");
        ASSERT_STREQ(h[0].reboot_marker_path, "/tmp/h1-rebooted");
        dry_cluster_hosts_free(h, n);
        ASSERT_ERROR(dry_cluster_hosts_parse("{}", 2, &h, &n, &err), EBADMSG);
}

DEFINE_TEST_MAIN
