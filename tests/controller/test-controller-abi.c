/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent-based installer's decisions (controller/abi.h) as tables: the
 * invoker, olm-operator-manifests as the service writes it
 * (operators/manager.go createOLMOperatorsConfigMap: metadata YAML, base64
 * files) and what yaml.v2 refuses of its metadata, the platform from the
 * install-config, the vSphere credentials, the uninitialized taint rule and
 * the end of the run (notes/controller.md §3, §5.3, §6).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/abi.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

#define LV_B64 \
        "YXBpVmVyc2lvbjogbG9jYWwuc3RvcmFnZS5vcGVuc2hpZnQuaW8vdjEKa2luZDogTG9jYWxWb2x1bWUKbWV0YWRhdGE6CiAgb" \
        "mFtZ" \
        "TogbG9jYWwtZGlza3M="
#define LV_YAML \
        "apiVersion: local.storage.openshift.io/v1\nkind: LocalVolume\nmetadata:\n  name: local-disks"

static json_object *parse_json(const char *text)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

TEST(invoker)
{
        _cleanup_(json_object_putp) json_object *agent =
                parse_json("{\"data\": {\"invoker\": \"agent-installer\"}}");
        _cleanup_(json_object_putp) json_object *assisted =
                parse_json("{\"data\": {\"invoker\": \"assisted-installer\"}}");
        _cleanup_(json_object_putp) json_object *none = parse_json("{\"data\": {}}");

        ASSERT_STREQ(install_invoker(agent), INVOKER_AGENT);
        ASSERT_STREQ(install_invoker(assisted), "assisted-installer");
        /* the ConfigMap without the key: "", as upstream */
        ASSERT_STREQ(install_invoker(none), "");
        /* no ConfigMap */
        ASSERT_STREQ(install_invoker(NULL), "assisted-service");
}

static void metadata_is(const char *yaml, const char *ns, const char *sub, const char *files)
{
        _cleanup_(operator_metadata_done) OperatorMetadata m = {};
        _cleanup_free_ char *err = NULL, *joined = NULL;

        ASSERT_OK(operator_metadata_parse(yaml, strlen(yaml), &m, &err));
        ASSERT_STREQ(m.namespace, ns);
        ASSERT_STREQ(m.subscription, sub);
        ASSERT_NOT_NULL(m.manifests);
        joined = strv_join(m.manifests, ",");
        ASSERT_STREQ(joined, files);
}

static void metadata_refused(const char *yaml)
{
        _cleanup_(operator_metadata_done) OperatorMetadata m = {};
        _cleanup_free_ char *err = NULL;

        ASSERT_ERROR(operator_metadata_parse(yaml, strlen(yaml), &m, &err), EBADMSG);
        ASSERT_NOT_NULL(err);
        ASSERT_NULL(m.namespace);
        ASSERT_NOT_CONTAINS(err, "s3cr3t");
}

TEST(metadata)
{
        /* k8syaml.Marshal of operatorMetadata, as the service writes it */
        metadata_is("manifests:\n- lso-01.yaml\n- lso-02.yaml\nnamespace: openshift-local-storage\n"
                    "subscriptionName: local-storage-operator\n",
                    "openshift-local-storage", "local-storage-operator", "lso-01.yaml,lso-02.yaml");
        /* unknown keys ignored; any scalar is a string to yaml.v2; null "" */
        metadata_is("namespace: 5\nsubscriptionName: ~\nmanifests: [a, 7]\nextra: {x: y}\n", "5", "", "a,7");
        metadata_is("manifests: []\n", "", "", "");
        /* an empty document: the zero struct */
        metadata_is("", "", "", "");
        metadata_is("manifests:\n", "", "", "");

        /* what yaml.v2 cannot decode into operatorMetadata */
        metadata_refused("namespace: [s3cr3t]\n");
        metadata_refused("subscriptionName: {a: s3cr3t}\n");
        metadata_refused("manifests: s3cr3t.yaml\n");
        metadata_refused("manifests:\n- {name: s3cr3t}\n");
        metadata_refused("- s3cr3t\n");
        metadata_refused("s3cr3t\n");
        metadata_refused("namespace: [unclosed\n");
}

static void configmap_read(const char *json, int expected, const char *expected_err, OlmOperator **ops,
                           size_t *n, CustomManifest **m, size_t *nm)
{
        _cleanup_(json_object_putp) json_object *cm = parse_json(json);
        _cleanup_free_ char *err = NULL;
        int r = olm_manifests_configmap_read(cm, "4.16", ops, n, m, nm, &err);

        ASSERT_EQ(r, expected);
        if (expected_err)
                ASSERT_CONTAINS(strna(err), expected_err);
}

TEST(configmap)
{
        OlmOperator *ops = NULL;
        CustomManifest *m = NULL;
        size_t n = 0, nm = 0;

        /* as createOLMOperatorsConfigMap writes it: two operators, the
         * files base64 */
        configmap_read(
                "{\"data\": {"
                "\"cnv-01.yaml\": \"a2luZDogQQ==\","
                "\"cnv.metadata.yaml\": \"manifests:\\n- cnv-01.yaml\\nnamespace: openshift-cnv\\n"
                "subscriptionName: hco-operatorhub\\n\","
                "\"lso-01.yaml\": \"" LV_B64 "\","
                "\"lso-02.yaml\": \"not base64!\","
                "\"lso.metadata.yaml\": \"manifests:\\n- lso-01.yaml\\n- lso-02.yaml\\n"
                "namespace: openshift-local-storage\\nsubscriptionName: local-storage-operator\\n\"}}",
                0, NULL, &ops, &n, &m, &nm);
        ASSERT_EQ(n, 2u);
        ASSERT_STREQ(ops[0].name, "cnv");
        ASSERT_STREQ(ops[0].namespace, "openshift-cnv");
        ASSERT_STREQ(ops[0].subscription, "hco-operatorhub");
        ASSERT_STREQ(ops[1].name, "lso");
        ASSERT_STREQ(ops[1].subscription, "local-storage-operator");
        ASSERT_EQ(nm, 3u);
        ASSERT_STREQ(m[0].name, "cnv");
        ASSERT_EQ(m[0].len, strlen("kind: A"));
        ASSERT_TRUE(memcmp(m[0].content, "kind: A", m[0].len) == 0);
        ASSERT_STREQ(m[1].name, "lso");
        ASSERT_EQ(m[1].len, strlen(LV_YAML));
        ASSERT_TRUE(memcmp(m[1].content, LV_YAML, m[1].len) == 0);
        /* a file that does not decode fails its own apply only */
        ASSERT_STREQ(m[2].name, "lso");
        ASSERT_NULL(m[2].content);
        olm_operators_free(ops, n);
        custom_manifests_free(m, nm);

        /* no metadata (an empty ConfigMap, or files alone): nothing to wait for */
        configmap_read("{\"metadata\": {\"name\": \"olm-operator-manifests\"}}", 0, NULL, &ops, &n, &m, &nm);
        ASSERT_EQ(n, 0u);
        ASSERT_EQ(nm, 0u);
        olm_operators_free(ops, n);
        custom_manifests_free(m, nm);
        configmap_read("{\"data\": {\"lso-01.yaml\": \"a2luZDogQQ==\"}}", 0, NULL, &ops, &n, &m, &nm);
        ASSERT_EQ(n, 0u);
        olm_operators_free(ops, n);
        custom_manifests_free(m, nm);

        /* a listed file missing: wait for the ConfigMap to be updated */
        configmap_read("{\"data\": {\"lso.metadata.yaml\": \"manifests: [lso-01.yaml, lso-02.yaml]\","
                       "\"lso-01.yaml\": \"a2luZDogQQ==\"}}",
                       -ENOENT, "Manifest file lso-02.yaml listed in metadata but not found", &ops, &n, &m,
                       &nm);
        /* metadata that does not decode: upstream gives up */
        configmap_read("{\"data\": {\"lso.metadata.yaml\": \"manifests: lso-01.yaml\","
                       "\"lso-01.yaml\": \"a2luZDogQQ==\"}}",
                       -EBADMSG, "lso.metadata.yaml", &ops, &n, &m, &nm);
}

static void platform_is(const char *yaml, const char *expected)
{
        _cleanup_free_ char *p = NULL, *err = NULL;

        if (!expected) {
                ASSERT_ERROR(install_config_platform(yaml, strlen(yaml), &p, &err), EBADMSG);
                ASSERT_NOT_NULL(err);
                ASSERT_NOT_CONTAINS(err, "s3cr3t");
                return;
        }
        ASSERT_OK(install_config_platform(yaml, strlen(yaml), &p, &err));
        ASSERT_STREQ(p, expected);
}

TEST(platform_from_install_config)
{
        platform_is("apiVersion: v1\nbaseDomain: example.com\nplatform:\n  vsphere:\n    vcenters:\n"
                    "    - server: vcenter.example.com\npullSecret: 's3cr3t'\n",
                    "vsphere");
        platform_is("platform:\n  baremetal:\n    apiVIPs: [192.0.2.5]\n", "baremetal");
        platform_is("platform:\n  none: {}\n", "none");
        platform_is("platform: {}\n", "");
        /* "platform not found in install config" */
        platform_is("baseDomain: example.com\npullSecret: s3cr3t\n", NULL);
        platform_is("platform: s3cr3t\n", NULL);
        platform_is("- s3cr3t\n", NULL);
        platform_is("platform: [s3cr3t\n", NULL);
}

TEST(vsphere_credentials)
{
        static const struct {
                const char *cluster;
                bool expected;
        } cases[] = {
                { "{\"platform\": {\"type\": \"vsphere\"}, \"install_config_overrides\": "
                  "\"{\\\"platform\\\": {\\\"vsphere\\\": {\\\"vcenters\\\": [{\\\"user\\\": \\\"admin\\\", "
                  "\\\"password\\\": \\\"pw\\\", \\\"server\\\": \\\"vc.example.com\\\"}]}}}\"}",
                  true },
                /* the placeholders the agent-based installer writes */
                { "{\"platform\": {\"type\": \"vsphere\"}, \"install_config_overrides\": "
                  "\"{\\\"platform\\\": {\\\"vsphere\\\": {\\\"vcenters\\\": [{\\\"user\\\": "
                  "\\\"usernameplaceholder\\\", \\\"password\\\": \\\"pw\\\", \\\"server\\\": "
                  "\\\"vc.example.com\\\"}]}}}\"}",
                  false },
                { "{\"platform\": {\"type\": \"vsphere\"}, \"install_config_overrides\": "
                  "\"{\\\"platform\\\": {\\\"vsphere\\\": {\\\"vcenters\\\": [{\\\"user\\\": \\\"admin\\\", "
                  "\\\"password\\\": \\\"pw\\\", \\\"server\\\": \\\"vcenterplaceholder\\\"}]}}}\"}",
                  false },
                /* the password missing */
                { "{\"platform\": {\"type\": \"vsphere\"}, \"install_config_overrides\": "
                  "\"{\\\"platform\\\": {\\\"vsphere\\\": {\\\"vcenters\\\": [{\\\"user\\\": \\\"admin\\\", "
                  "\\\"server\\\": \\\"vc.example.com\\\"}]}}}\"}",
                  false },
                { "{\"platform\": {\"type\": \"vsphere\"}}", false },
                { "{\"platform\": {\"type\": \"baremetal\"}, \"install_config_overrides\": "
                  "\"{\\\"platform\\\": {\\\"vsphere\\\": {\\\"vcenters\\\": [{\\\"user\\\": \\\"admin\\\", "
                  "\\\"password\\\": \\\"pw\\\", \\\"server\\\": \\\"vc.example.com\\\"}]}}}\"}",
                  false },
                { "{\"platform\": {\"type\": \"vsphere\"}, \"install_config_overrides\": \"not json\"}",
                  false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *c = parse_json(cases[i].cluster);
                ASSERT_EQ(vsphere_credentials_in_cluster(c), cases[i].expected);
        }
        /* without the service: the install-config's server alone */
        ASSERT_TRUE(vsphere_server_in_install_config("platform:\n  vsphere:\n    vcenters:\n"
                                                     "    - server: vc.example.com\n",
                                                     strlen("platform:\n  vsphere:\n    vcenters:\n"
                                                            "    - server: vc.example.com\n")));
        ASSERT_FALSE(vsphere_server_in_install_config("platform:\n  vsphere:\n    vcenters:\n"
                                                      "    - server: vcenterplaceholder\n",
                                                      strlen("platform:\n  vsphere:\n    vcenters:\n"
                                                             "    - server: vcenterplaceholder\n")));
        ASSERT_FALSE(vsphere_server_in_install_config("platform:\n  vsphere: {}\n",
                                                      strlen("platform:\n  vsphere: {}\n")));
        ASSERT_FALSE(vsphere_server_in_install_config("[", 1));
}

TEST(uninitialized_taint)
{
        static const struct {
                const char *platform;
                bool agent;
                const char *version;
                bool credentials;
                bool expected;
        } cases[] = {
                { "nutanix", false, "4.16", false, true },
                { "vsphere", false, "4.16", true, true },
                { "baremetal", true, "4.16", false, false },
                { "none", false, "4.16", false, false },
                { NULL, true, "4.16", false, false },
                /* the agent-based installer's exception: real vSphere
                 * credentials from 4.15 on */
                { "vsphere", true, "4.15", true, false },
                { "vsphere", true, "4.15.3", true, false },
                { "vsphere", true, "4.16.0-rc.1", true, false },
                { "vsphere", true, "5.0", true, false },
                { "vsphere", true, "4.14.9", true, true },
                { "vsphere", true, "4.15", false, true },
                { "nutanix", true, "4.16", true, true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ASSERT_EQ(uninitialized_taint_removed(cases[i].platform, cases[i].agent, cases[i].version,
                                                      cases[i].credentials),
                          cases[i].expected);
}

TEST(end_of_the_run)
{
        _cleanup_(json_object_putp) json_object *available = parse_json(
                "{\"status\": {\"conditions\": [{\"type\": \"Progressing\", \"status\": \"True\"}, "
                "{\"type\": \"Available\", \"status\": \"True\"}]}}");
        _cleanup_(json_object_putp) json_object *not_yet = parse_json(
                "{\"status\": {\"conditions\": [{\"type\": \"Available\", \"status\": \"False\"}, "
                "{\"type\": \"Failing\", \"status\": \"True\"}]}}");
        _cleanup_(json_object_putp) json_object *no_status = parse_json("{\"spec\": {}}");

        ASSERT_TRUE(cluster_version_available(available));
        ASSERT_FALSE(cluster_version_available(not_yet));
        ASSERT_FALSE(cluster_version_available(no_status));
        ASSERT_FALSE(cluster_version_available(NULL));

        /* a single node: the ClusterVersion alone */
        ASSERT_TRUE(agent_installation_done(true, 0, 0));
        ASSERT_FALSE(agent_installation_done(false, 5, 0));
        /* several: every master listed too (the rendezvous host's included) */
        ASSERT_FALSE(agent_installation_done(true, 2, 3));
        ASSERT_TRUE(agent_installation_done(true, 3, 3));
        ASSERT_TRUE(agent_installation_done(true, 4, 3));
        ASSERT_FALSE(agent_installation_done(false, 3, 3));
}

DEFINE_TEST_MAIN
