/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bootstrap's decisions as tables (installer/bootstrap-plan.h): the
 * order of startBootstrap and of the waits per etcd strategy, versions, the
 * etcd patches, install-config replicas and targets, node readiness and
 * matching against the inventory, the rounds of the node wait, the
 * machine-config-server log, the uninitialized taint, the controller's
 * events and pod, the MachineConfig annotations, the agent-based
 * installer's workers, the dry run's host list.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "cleanup.h"
#include "installer/bootstrap-plan.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

static json_object *J(const char *text)
{
        json_object *o = NULL;
        _cleanup_free_ char *err = NULL;

        if (json_parse(text, strlen(text), 1 << 20, &o, &err) < 0)
                test_fail(__FILE__, __LINE__, "bad JSON in the test: %s: %s", strna(err), text);
        return o;
}

TEST(start_bootstrap_order)
{
        BootstrapAction a[_BOOTSTRAP_ACTION_MAX];
        _cleanup_strv_free_ char **multi = NULL, **single = NULL;
        size_t n;

        n = start_bootstrap_plan(false, a);
        for (size_t i = 0; i < n; i++)
                ASSERT_OK(strv_extend(&multi, bootstrap_action_to_string(a[i])));
        n = start_bootstrap_plan(true, a);
        for (size_t i = 0; i < n; i++)
                ASSERT_OK(strv_extend(&single, bootstrap_action_to_string(a[i])));
        {
                _cleanup_free_ char *m = strv_join(multi, " "), *s = strv_join(single, " ");
                ASSERT_STREQ(
                        m,
                        "mkdir-ssh download-bootstrap-ignition pull-secret apply-bootstrap-ignition ssh-key "
                        "daemon-reload hostname restart-network-manager controller-manifests node-image "
                        "start-units");
                ASSERT_STREQ(s, "mkdir-ssh download-bootstrap-ignition pull-secret apply-bootstrap-ignition "
                                "daemon-reload hostname controller-manifests node-image start-units");
        }
        ASSERT_STREQ(bootstrap_units[0], "bootkube.service");
        ASSERT_STREQ(bootstrap_units[1], "approve-csr.service");
        ASSERT_STREQ(bootstrap_units[2], "progress.service");
        ASSERT_NULL(bootstrap_units[3]);
}

TEST(hostnames)
{
        static const struct {
                const char *name;
                bool replace;
        } cases[] = {
                { "master-0", false },
                { "master-0.lab.example.com", false },
                { "a", false },
                { "localhost", true },
                { "", true },
                { "Master-0", true },
                { "master_0", true },
                { "-master", true },
                { "master-", true },
                { "master..lab", true },
                { "master.", true },
                { "a123456789012345678901234567890123456789012345678901234567890123", true },
                { "a12345678901234567890123456789012345678901234567890123456789012", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (hostname_needs_replacing(cases[i].name) != cases[i].replace)
                        test_fail(__FILE__, __LINE__, "hostname \"%s\": expected %s", cases[i].name,
                                  cases[i].replace ? "replace" : "keep");
}

TEST(waits_per_etcd_bootstrap)
{
        static const struct {
                const char *version;
                const char *waits;
        } cases[] = {
                { "4.13.18",
                  "reload-resolv-conf kube-client report-masters-join get-cluster masters arbiters bootkube "
                  "etcd-bootstrap controller workers machine-config-annotations" },
                { "4.7",
                  "reload-resolv-conf kube-client report-masters-join get-cluster masters arbiters bootkube "
                  "etcd-bootstrap controller workers machine-config-annotations" },
                { "4.6.16", "reload-resolv-conf kube-client report-masters-join get-cluster masters "
                            "etcd-override arbiters "
                            "bootkube etcd-override-undo controller workers machine-config-annotations" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                BootstrapWait w[_WAIT_MAX];
                size_t n = bootstrap_waits_plan(etcd_bootstrap_for(cases[i].version), w);
                _cleanup_strv_free_ char **l = NULL;
                _cleanup_free_ char *s = NULL;

                for (size_t k = 0; k < n; k++)
                        ASSERT_OK(strv_extend(&l, bootstrap_wait_to_string(w[k])));
                s = strv_join(l, " ");
                ASSERT_STREQ(s, cases[i].waits);
        }
}

TEST(versions)
{
        static const struct {
                const char *v;
                int r;
                unsigned major, minor;
                EtcdBootstrap etcd;
        } cases[] = {
                { "4.6", 0, 4, 6, ETCD_BOOTSTRAP_UNSAFE_OVERRIDE },
                { "4.6.0-0.nightly-2020-12-03-123456", 0, 4, 6, ETCD_BOOTSTRAP_UNSAFE_OVERRIDE },
                { "4.4", 0, 4, 4, ETCD_BOOTSTRAP_UNSAFE_OVERRIDE },
                { "4.7", 0, 4, 7, ETCD_BOOTSTRAP_DELAYED_HA },
                { "4.7.1", 0, 4, 7, ETCD_BOOTSTRAP_DELAYED_HA },
                { "4.7-pre-release", 0, 4, 7, ETCD_BOOTSTRAP_DELAYED_HA },
                { "4.8", 0, 4, 8, ETCD_BOOTSTRAP_DELAYED_HA },
                { "4.10.3", 0, 4, 10, ETCD_BOOTSTRAP_DELAYED_HA },
                { "v4.6.1", 0, 4, 6, ETCD_BOOTSTRAP_UNSAFE_OVERRIDE },
                { "5.0", 0, 5, 0, ETCD_BOOTSTRAP_DELAYED_HA },
                /* unparsable: the current way */
                { "", -EINVAL, 0, 0, ETCD_BOOTSTRAP_DELAYED_HA },
                { "latest", -EINVAL, 0, 0, ETCD_BOOTSTRAP_DELAYED_HA },
                { "4", -EINVAL, 0, 0, ETCD_BOOTSTRAP_DELAYED_HA },
                { "4.x", -EINVAL, 0, 0, ETCD_BOOTSTRAP_DELAYED_HA },
                { "4.6a", -EINVAL, 0, 0, ETCD_BOOTSTRAP_DELAYED_HA },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned ma = 99, mi = 99;
                int r = openshift_version_parse(cases[i].v, &ma, &mi);

                ASSERT_EQ(r, cases[i].r);
                if (r == 0) {
                        ASSERT_EQ(ma, cases[i].major);
                        ASSERT_EQ(mi, cases[i].minor);
                }
                ASSERT_EQ(etcd_bootstrap_for(cases[i].v), cases[i].etcd);
        }
        ASSERT_TRUE(openshift_version_at_least("4.15.0", 4, 15));
        ASSERT_FALSE(openshift_version_at_least("4.14.9", 4, 15));
        ASSERT_TRUE(openshift_version_at_least("5.1", 4, 15));
}

TEST(etcd_patches)
{
        _cleanup_(json_object_putp) json_object *on = etcd_override_patch(),
                                                *off = etcd_override_undo_patch();
        _cleanup_free_ char *a = json_to_string(on, 0), *b = json_to_string(off, 0);
        _cleanup_(json_object_putp) json_object *obj_on =
                J("{\"spec\": {\"unsupportedConfigOverrides\": "
                  "{\"useUnsupportedUnsafeNonHANonProductionUnstableEtcd\": "
                  "true}}}");
        _cleanup_(json_object_putp) json_object *obj_str =
                J("{\"spec\": {\"unsupportedConfigOverrides\": "
                  "{\"useUnsupportedUnsafeNonHANonProductionUnstableEtcd\": "
                  "\"true\"}}}");
        _cleanup_(json_object_putp) json_object *obj_off =
                J("{\"spec\": {\"managementState\": \"Managed\"}}");

        ASSERT_STREQ(a, "{\"spec\":{\"unsupportedConfigOverrides\":{"
                        "\"useUnsupportedUnsafeNonHANonProductionUnstableEtcd\":true}}}");
        ASSERT_STREQ(b, "{\"spec\":{\"unsupportedConfigOverrides\":null}}");
        ASSERT_TRUE(etcd_override_is_set(obj_on));
        ASSERT_TRUE(etcd_override_is_set(obj_str));
        ASSERT_FALSE(etcd_override_is_set(obj_off));
        ASSERT_FALSE(etcd_override_is_set(NULL));
}

TEST(install_config_and_targets)
{
        static const struct {
                const char *yaml;
                const char *pool;
                int r;
                int64_t replicas;
        } cases[] = {
                { "apiVersion: v1\ncontrolPlane:\n  name: master\n  replicas: 3\ncompute:\n- name: worker\n "
                  " "
                  "replicas: 2\n",
                  "controlPlane", 0, 3 },
                { "controlPlane:\n  replicas: 3\n", "arbiter", 0, 0 },
                { "controlPlane:\n  replicas: 2\narbiter:\n  name: arbiter\n  replicas: 1\n", "arbiter", 0,
                  1 },
                { "{\"controlPlane\": {\"replicas\": 5}}", "controlPlane", 0, 5 },
                { "controlPlane:\n  replicas: three\n", "controlPlane", -EBADMSG, 0 },
                { "controlPlane: [\n", "controlPlane", -EBADMSG, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *err = NULL;
                int64_t v = -1;
                int r = install_config_replicas(cases[i].yaml, cases[i].pool, &v, &err);

                ASSERT_EQ(r, cases[i].r);
                if (r == 0)
                        ASSERT_EQ(v, cases[i].replicas);
                else
                        ASSERT_CONTAINS(err, "install-config");
        }
        ASSERT_EQ(nodes_wait_target("master", 3), 2u);
        ASSERT_EQ(nodes_wait_target("master", 2), 1u);
        ASSERT_EQ(nodes_wait_target("master", 5), 2u);
        ASSERT_EQ(nodes_wait_target("master", 1), 0u);
        ASSERT_EQ(nodes_wait_target("master", 0), 0u);
        ASSERT_EQ(nodes_wait_target("arbiter", 1), 1u);
        ASSERT_EQ(nodes_wait_target("arbiter", 2), 1u);
        ASSERT_EQ(nodes_wait_target("arbiter", 0), 0u);
}

#define NODE(name, ready, ip) \
        "{\"metadata\": {\"name\": \"" name \
        "\"}, \"status\": {\"conditions\": [{\"type\": \"MemoryPressure\", " \
        "\"status\": \"False\"}, {\"type\": \"Ready\", \"status\": \"" ready \
        "\"}], \"addresses\": [{\"type\": " \
        "\"Hostname\", \"address\": \"" name "\"}, {\"type\": \"InternalIP\", \"address\": \"" ip "\"}]}}"

static const char *cluster_json =
        "{\"id\": \"c\", \"hosts\": ["
        "{\"id\": \"h-self\", \"infra_env_id\": \"ie\", \"requested_hostname\": \"bootstrap-0\", \"role\": "
        "\"master\", \"status\": \"installing-in-progress\", \"progress\": {\"current_stage\": \"Waiting "
        "for control "
        "plane\"}, \"inventory\": \"{\\\"interfaces\\\": [{\\\"ipv4_addresses\\\": "
        "[\\\"198.51.100.10/24\\\"]}]}\"},"
        "{\"id\": \"h-1\", \"infra_env_id\": \"ie\", \"requested_hostname\": \"Master-1\", \"role\": "
        "\"master\", "
        "\"status\": \"installing-in-progress\", \"progress\": {\"current_stage\": \"Rebooting\"}, "
        "\"inventory\": "
        "\"{\\\"interfaces\\\": [{\\\"ipv4_addresses\\\": [\\\"198.51.100.11/24\\\"], "
        "\\\"ipv6_addresses\\\": "
        "[\\\"2001:db8::11/64\\\"]}]}\"},"
        "{\"id\": \"h-2\", \"infra_env_id\": \"ie2\", \"requested_hostname\": \"master-2\", \"role\": "
        "\"master\", "
        "\"status\": \"installed\", \"progress\": {\"current_stage\": \"Done\"}, \"inventory\": "
        "\"{\\\"interfaces\\\": [{\\\"ipv4_addresses\\\": [\\\"198.51.100.12/24\\\"]}]}\"},"
        "{\"id\": \"h-3\", \"infra_env_id\": \"ie\", \"requested_hostname\": \"worker-3\", \"role\": "
        "\"worker\", "
        "\"status\": \"installing-in-progress\", \"progress\": {\"current_stage\": \"Writing image to "
        "disk\"}, "
        "\"inventory\": \"{\\\"interfaces\\\": [{\\\"ipv4_addresses\\\": [\\\"198.51.100.13/24\\\"]}]}\"},"
        "{\"id\": \"h-4\", \"infra_env_id\": \"ie\", \"requested_hostname\": \"gone\", \"role\": "
        "\"worker\", "
        "\"status\": \"disabled\", \"inventory\": \"garbage\"}"
        "]}";

TEST(inventory_and_matching)
{
        _cleanup_(json_object_putp) json_object *cluster = J(cluster_json);
        _cleanup_(json_object_putp) json_object *by_name = J(NODE("master-1", "True", "10.0.0.1"));
        _cleanup_(json_object_putp) json_object *by_ip = J(NODE("node-x", "True", "198.51.100.12"));
        _cleanup_(json_object_putp) json_object *v6 = J(NODE("node-y", "False", "2001:db8::11"));
        _cleanup_(json_object_putp) json_object *nobody = J(NODE("stranger", "True", "203.0.113.9"));
        _cleanup_(cluster_hosts_done) ClusterHosts inv = {};
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(cluster_hosts_from_cluster(cluster, "h-self", &inv, &err));
        ASSERT_EQ(inv.n, 3u); /* not this host, not the disabled one (whose inventory is not even read) */
        ASSERT_STREQ(inv.hosts[0].id, "h-1");
        ASSERT_STREQ(inv.hosts[0].name, "master-1");
        ASSERT_STREQ(inv.hosts[0].stage, "Rebooting");
        ASSERT_STREQ(inv.hosts[0].ips[0], "198.51.100.11");
        ASSERT_STREQ(inv.hosts[0].ips[1], "2001:db8::11");
        ASSERT_STREQ(inv.hosts[1].infra_env_id, "ie2");

        ASSERT_TRUE(kube_node_ready(by_name));
        ASSERT_FALSE(kube_node_ready(v6));
        ASSERT_EQ(cluster_hosts_match_node(&inv, by_name), 0);
        ASSERT_EQ(cluster_hosts_match_node(&inv, by_ip), 1);
        ASSERT_EQ(cluster_hosts_match_node(&inv, v6), 0);
        ASSERT_ERROR(cluster_hosts_match_node(&inv, nobody), ENOENT);
}

TEST(inventory_that_does_not_parse)
{
        _cleanup_(json_object_putp) json_object *cluster =
                J("{\"hosts\": [{\"id\": \"h-1\", \"status\": \"known\", \"inventory\": \"{not json\"}]}");
        _cleanup_(cluster_hosts_done) ClusterHosts inv = {};
        _cleanup_free_ char *err = NULL;

        ASSERT_ERROR(cluster_hosts_from_cluster(cluster, "self", &inv, &err), EBADMSG);
        ASSERT_CONTAINS(err, "cannot parse the inventory of host h-1");
}

TEST(ready_nodes_rounds)
{
        _cleanup_(json_object_putp) json_object *cluster = J(cluster_json);
        _cleanup_(json_object_putp) json_object *nodes =
                J("{\"items\": [" NODE("master-1", "True", "198.51.100.11") "," NODE(
                        "master-2", "True",
                        "198.51.100.12") "," NODE("stranger", "True",
                                                  "203.0.113.9") "," NODE("worker-3", "True",
                                                                          "198.51.100.13") "," NODE("late",
                                                                                                    "False",
                                                                                                    "198.51."
                                                                                                    "100.99") "]}");
        _cleanup_(cluster_hosts_done) ClusterHosts inv = {};
        char *ready[] = { (char *)"master-2", NULL };
        NodeAction *a = NULL;
        size_t n = 0;

        ASSERT_OK(cluster_hosts_from_cluster(cluster, "h-self", &inv, NULL));
        ASSERT_EQ(ready_nodes_plan(nodes, NULL, &inv, &a, &n), 3);
        /* master-1: Joined; master-2: installed already, counted without a
         * report; the stranger stops the round */
        ASSERT_STREQ(a[0].node, "master-1");
        ASSERT_EQ(a[0].host, 0);
        ASSERT_TRUE(a[0].report_joined);
        ASSERT_STREQ(a[1].node, "master-2");
        ASSERT_EQ(a[1].host, 1);
        ASSERT_FALSE(a[1].report_joined);
        ASSERT_STREQ(a[2].node, "stranger");
        ASSERT_EQ(a[2].host, -1);
        node_actions_free(a, n);

        /* master-2 seen already: not again */
        ASSERT_EQ(ready_nodes_plan(nodes, ready, &inv, &a, &n), 2);
        ASSERT_STREQ(a[0].node, "master-1");
        ASSERT_STREQ(a[1].node, "stranger");
        node_actions_free(a, n);

        {
                _cleanup_strv_free_ char **l = NULL;
                _cleanup_free_ char *s0 = nodes_wait_status("master", l, 2), *s1 = NULL;
                ASSERT_STREQ(s0, "0 of 2 master nodes Ready");
                ASSERT_OK(strv_extend(&l, "master-1"));
                s1 = nodes_wait_status("master", l, 2);
                ASSERT_STREQ(s1, "1 of 2 master nodes Ready (master-1)");
        }
}

TEST(mcs_log)
{
        static const char *log =
                "I1103 10:00:01.000 1 api.go:117] Pool master requested by address:\"198.51.100.11:43212\" "
                "User-Agent:\"Ignition/2.14.0\" Accept-Header: "
                "\"application/vnd.coreos.ignition+json;version=3.2.0\"\n"
                "I1103 10:00:02.000 1 api.go:117] Pool worker requested by "
                "address:\"[2001:db8::13%eth0]:40000\" "
                "User-Agent:\"Ignition/2.14.0\"\n"
                "I1103 10:00:03.000 1 api.go:117] Pool master requested by address:\"198.51.100.120:5\" "
                "User-Agent:\"curl/8.0\"\n"
                "I1103 10:00:04.000 1 api.go:117] Pool master requested by address:\"1198.51.100.14:6\" "
                "User-Agent:\"Ignition/2.14.0\"\n";
        static const struct {
                const char *ip;
                bool shown;
        } cases[] = {
                { "198.51.100.11", true },  { "2001:db8::13", true },
                { "198.51.100.12", false }, /* 198.51.100.120 is another address, and curl */
                { "198.51.100.1", false }, /* a prefix of .11 */
                { "98.51.100.14", false }, /* inside another address */
                { "203.0.113.1", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *ips[] = { (char *)cases[i].ip, NULL };
                ASSERT_EQ(mcs_log_shows(log, ips), cases[i].shown);
        }
        ASSERT_FALSE(mcs_log_shows("", (char *[]){ (char *)"198.51.100.11", NULL }));
        ASSERT_FALSE(mcs_log_shows(log, NULL));
        ASSERT_STREQ(configuring_stage_for("master"), "Configuring");
        ASSERT_STREQ(configuring_stage_for("worker"), "Waiting for ignition");
        ASSERT_STREQ(configuring_stage_for("arbiter"), "Configuring");
        ASSERT_TRUE(configuring_stage_done("Joined"));
        ASSERT_TRUE(configuring_stage_done("Waiting for ignition"));
        ASSERT_FALSE(configuring_stage_done("Rebooting"));
}

TEST(uninitialized_taint)
{
        static const struct {
                const char *platform, *version, *invoker;
                bool creds, remove;
        } cases[] = {
                { "baremetal", "4.14", INVOKER_DEFAULT, false, false },
                { "none", "4.14", INVOKER_DEFAULT, false, false },
                { "nutanix", "4.14", INVOKER_DEFAULT, false, true },
                { "nutanix", "4.16", INVOKER_AGENT_INSTALLER, true, true },
                { "vsphere", "4.14", INVOKER_DEFAULT, true, true },
                { "vsphere", "4.16", INVOKER_DEFAULT, true, true },
                { "vsphere", "4.14", INVOKER_AGENT_INSTALLER, true, true },
                { "vsphere", "4.15", INVOKER_AGENT_INSTALLER, true, false },
                { "vsphere", "4.15", INVOKER_AGENT_INSTALLER, false, true },
        };
        _cleanup_(json_object_putp) json_object *node =
                J("{\"spec\": {\"taints\": [{\"key\": \"node-role.kubernetes.io/master\", \"effect\": "
                  "\"NoSchedule\"},"
                  " {\"key\": \"" UNINITIALIZED_TAINT
                  "\", \"value\": \"true\", \"effect\": \"NoSchedule\"}]}}");
        _cleanup_(json_object_putp) json_object *patch =
                kube_node_taint_remove_patch(1, UNINITIALIZED_TAINT);
        _cleanup_free_ char *text = json_to_string(patch, 0);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ASSERT_EQ(remove_uninitialized_taint(cases[i].platform, cases[i].version, cases[i].invoker,
                                                     cases[i].creds),
                          cases[i].remove);
        ASSERT_EQ(kube_node_taint_index(node, UNINITIALIZED_TAINT), 1);
        ASSERT_ERROR(kube_node_taint_index(node, "nothing"), ENOENT);
        ASSERT_STREQ(text,
                     "[{\"op\":\"test\",\"path\":\"/spec/taints/1/key\",\"value\":\"" UNINITIALIZED_TAINT
                     "\"},{\"op\":\"remove\",\"path\":\"/spec/taints/1\"}]");
}

TEST(vsphere_credentials)
{
        static const struct {
                const char *ic;
                bool valid;
        } cases[] = {
                { "{\"platform\": {\"vsphere\": {\"vcenters\": [{\"user\": \"u\", \"password\": \"p\", "
                  "\"server\": "
                  "\"vc.example.com\"}]}}}",
                  true },
                { "{\"platform\": {\"vsphere\": {\"vcenters\": [{\"user\": \"usernameplaceholder\", "
                  "\"password\": "
                  "\"passwordplaceholder\", \"server\": \"vcenterplaceholder\"}]}}}",
                  false },
                { "{\"platform\": {\"vsphere\": {\"vcenters\": [{\"user\": \"u\", \"password\": \"\", "
                  "\"server\": "
                  "\"vc\"}]}}}",
                  false },
                { "{\"platform\": {\"vsphere\": {\"username\": \"u\", \"password\": \"p\", \"vCenter\": "
                  "\"vc\"}}}",
                  true },
                { "{\"platform\": {\"vsphere\": {\"username\": \"u\", \"password\": \"p\", \"vCenter\": "
                  "\"vcenterplaceholder\"}}}",
                  false },
                { "{\"platform\": {\"baremetal\": {}}}", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *ic = J(cases[i].ic);
                ASSERT_EQ(vsphere_credentials_valid(ic), cases[i].valid);
        }
}

TEST(invoker)
{
        _cleanup_(json_object_putp) json_object *abi = J("{\"data\": {\"invoker\": \"agent-installer\"}}");
        _cleanup_(json_object_putp) json_object *empty = J("{\"data\": {}}");

        ASSERT_STREQ(invoker_of(abi), INVOKER_AGENT_INSTALLER);
        ASSERT_STREQ(invoker_of(empty), INVOKER_DEFAULT);
        ASSERT_STREQ(invoker_of(NULL), INVOKER_DEFAULT);
}

TEST(controller_events_and_pod)
{
        _cleanup_(json_object_putp) json_object *before =
                J("{\"items\": [{\"metadata\": {\"name\": \"assisted-installer-controller.1\", \"uid\": "
                  "\"u1\"}, "
                  "\"message\": \"Successfully pulled image\"}]}");
        _cleanup_(json_object_putp) json_object *after =
                J("{\"items\": [{\"metadata\": {\"name\": \"assisted-installer-controller.1\", \"uid\": "
                  "\"u1\"}, "
                  "\"message\": \"Successfully pulled image\"}, {\"metadata\": {\"name\": "
                  "\"" CONTROLLER_READY_EVENT
                  "\", \"uid\": \"u2\"}, \"message\": \"Assisted controller is ready\"}]}");
        _cleanup_(json_object_putp) json_object *pods =
                J("{\"items\": [{\"metadata\": {\"name\": \"assisted-installer-controller-abcde\"}, "
                  "\"status\": "
                  "{\"phase\": \"Pending\"}}, {\"metadata\": {\"name\": \"other\"}, \"status\": {\"phase\": "
                  "\"Running\"}}, {\"metadata\": {\"name\": \"assisted-installer-controller-fghij\"}, "
                  "\"status\": "
                  "{\"phase\": \"Running\"}}]}");
        _cleanup_strv_free_ char **seen = NULL, **m1 = NULL, **m2 = NULL;

        ASSERT_FALSE(controller_events_scan(before, &seen, &m1));
        ASSERT_EQ(strv_length(m1), 1u);
        ASSERT_TRUE(controller_events_scan(after, &seen, &m2));
        /* messages once each */
        ASSERT_EQ(strv_length(m2), 1u);
        ASSERT_STREQ(m2[0], "Assisted controller is ready");
        ASSERT_STREQ(json_get_string(json_get(controller_pod_pick(pods), "metadata"), "name"),
                     "assisted-installer-controller-fghij");
        ASSERT_NULL(controller_pod_pick(before));
}

#define MC_NODE(name, cur, want) \
        "{\"metadata\": {\"name\": \"" name "\", \"annotations\": {\"" MC_CURRENT_CONFIG "\": \"" cur \
        "\", \"" MC_DESIRED_CONFIG "\": \"" want "\"}}}"

TEST(mc_annotations)
{
        static const struct {
                const char *nodes;
                const char *existing;
                bool ok;
                const char *why;
        } cases[] = {
                { "[" MC_NODE("m0", "rendered-a", "rendered-a") "," MC_NODE("m1", "rendered-a",
                                                                            "rendered-a") "]",
                  "rendered-a", true, "rendered-a" },
                { "[" MC_NODE("m0", "rendered-a", "rendered-b") "," MC_NODE("m1", "rendered-b",
                                                                            "rendered-b") "]",
                  "rendered-a rendered-b", true, "rendered-b" },
                { "[" MC_NODE("m0", "rendered-a", "rendered-a") "," MC_NODE("m1", "rendered-a",
                                                                            "rendered-b") "]",
                  "rendered-a rendered-b", false, "node m1 wants rendered-b" },
                { "[" MC_NODE("m0", "rendered-a", "rendered-b") "]", "rendered-a", false,
                  "MachineConfig rendered-b of node m0 does not exist yet" },
                { "[" MC_NODE("m0", "", "rendered-b") "]", "rendered-b", false,
                  "no currentConfig annotation" },
                { "[{\"metadata\": {\"name\": \"m0\"}}]", "", false, "no currentConfig annotation" },
                { "[]", "", false, "no master nodes yet" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = strdup_printf("{\"items\": %s}", cases[i].nodes), *reason = NULL,
                                    *desired = NULL;
                _cleanup_(json_object_putp) json_object *nodes = J(text);
                _cleanup_strv_free_ char **existing = NULL, **names = mc_annotation_names(nodes);
                bool ok;

                ASSERT_OK(strv_split(cases[i].existing, " ", &existing));
                ok = mc_annotations_consistent(nodes, existing, &reason, &desired);
                ASSERT_EQ(ok, cases[i].ok);
                if (ok)
                        ASSERT_STREQ(desired, cases[i].why);
                else
                        ASSERT_CONTAINS(reason, cases[i].why);
                ASSERT_NOT_NULL(names);
        }
        {
                _cleanup_(json_object_putp) json_object *nodes =
                        J("{\"items\": [" MC_NODE("m0", "rendered-b", "rendered-a") "," MC_NODE(
                                "m1", "rendered-a", "rendered-a") "]}");
                _cleanup_strv_free_ char **names = mc_annotation_names(nodes);
                _cleanup_free_ char *s = strv_join(names, " ");
                ASSERT_STREQ(s, "rendered-a rendered-b");
        }
}

TEST(abi_workers)
{
        _cleanup_(json_object_putp) json_object *waiting =
                J("[{\"id\": \"w1\", \"progress\": {\"current_stage\": \"Rebooting\"}}, {\"id\": \"w2\", "
                  "\"progress\": "
                  "{\"current_stage\": \"Waiting for control plane\"}}]");
        _cleanup_(json_object_putp) json_object *joining =
                J("[{\"id\": \"w1\", \"progress\": {\"current_stage\": \"Rebooting\"}}, {\"id\": \"w2\", "
                  "\"progress\": "
                  "{\"current_stage\": \"Waiting for ignition\"}}]");
        _cleanup_(json_object_putp) json_object *none = J("[]");
        _cleanup_free_ char *why = NULL;

        ASSERT_FALSE(abi_workers_joining(waiting, &why));
        ASSERT_STREQ(why, "w2 (current stage: Waiting for control plane)");
        ASSERT_TRUE(abi_workers_joining(joining, NULL));
        ASSERT_TRUE(abi_workers_joining(none, NULL));
}

TEST(dry_cluster_hosts)
{
        static const char *text =
                "[{\"hostname\": \"master-0\", \"ip\": \"198.51.100.11\", \"rebootMarkerPath\": "
                "\"/tmp/m0\"}, {\"hostname\": \"master-1\", \"ip\": \"198.51.100.12\"}]";
        DryClusterHost *h = NULL;
        size_t n = 0;
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(dry_cluster_hosts_parse(text, strlen(text), &h, &n, &err));
        ASSERT_EQ(n, 2u);
        ASSERT_STREQ(h[0].hostname, "master-0");
        ASSERT_STREQ(h[0].reboot_marker_path, "/tmp/m0");
        ASSERT_NULL(h[1].reboot_marker_path);
        dry_cluster_hosts_free(h, n);
        ASSERT_ERROR(dry_cluster_hosts_parse("{}", 2, &h, &n, &err), EBADMSG);
        ASSERT_CONTAINS(err, "expected a JSON array");
        free(err);
        err = NULL;
        ASSERT_ERROR(dry_cluster_hosts_parse("[{\"ip\": 5}]", 11, &h, &n, &err), EBADMSG);
        ASSERT_CONTAINS(err, "host 0");
}

DEFINE_TEST_MAIN
