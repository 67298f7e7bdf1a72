/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Agent controller's decide (notes §5.0 creation, §5.4 inventory and
 * labels), and the inventory mapping against the reference Agent of
 * docs/hive-integration/crds/agent.yaml (tests/hub/data/agent-inventory.json).
 */
#include <json-c/json.h>

#include "agent.h"
#include "buf.h"
#include "cleanup.h"
#include "hubtest.h"
#include "jsonutil.h"
#include "strutil.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC)
#define HOST "0479107b-3436-45d3-83a8-cb9a1dc4fb9e"

typedef struct Fixture {
        AgentObserved o;
} Fixture;

static json_object *infraenv(const char *name, const char *id, const char *extra_meta,
                             const char *extra_spec)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"InfraEnv\","
                "\"metadata\":{\"name\":\"%s\",\"namespace\":\"demo\",\"uid\":\"uid-%s\","
                "\"annotations\":{\"cradle.agent-install.openshift.io/infra-env-id\":\"%s\"}%s},"
                "\"spec\":{\"pullSecretRef\":{\"name\":\"ps\"}%s}}",
                name, name, id, extra_meta ? extra_meta : "", extra_spec ? extra_spec : "");
}

static json_object *host(const char *infra_env_id, const char *inventory)
{
        _cleanup_(json_object_putp) json_object *h =
                hubtest_jsonf("{\"id\":\"" HOST "\",\"infra_env_id\":\"%s\",\"status\":\"known-unbound\","
                              "\"created_at\":\"2026-09-21T14:00:00Z\"}",
                              infra_env_id);

        if (inventory)
                json_object_object_add(h, "inventory", json_object_new_string(inventory));
        return json_object_get(h);
}

static void fixture(Fixture *f, json_object *agent, json_object *ie, json_object *h)
{
        *f = (Fixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup("demo");
        f->o.base.name = strdup(HOST);
        f->o.base.object = agent;
        f->o.infraenv = ie;
        f->o.infra_env_id = strdup(strempty(hub_object_annotation(ie, HUB_ANNOTATION_INFRAENV_ID)));
        f->o.host = h;
}

static void fixture_done(Fixture *f)
{
        agent_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

static json_object *reference(void)
{
        _cleanup_free_ char *path = test_src_path("tests/hub/data/agent-inventory.json");
        json_object *o = NULL;

        ASSERT_OK(json_parse_file(path, BUF_MAX_JSON_DOC, &o, NULL));
        return o;
}

TEST(creates_the_agent_of_a_registered_host)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *w;
        json_object *a;

        fixture(&f, NULL,
                infraenv("myinfraenv", "ie-1",
                         ",\"labels\":{\"zone\":\"a\",\"rack\":\"r1\"},\"annotations\":{"
                         "\"cradle.agent-install.openshift.io/infra-env-id\":\"ie-1\","
                         "\"infraenv.agent-install.openshift.io/propagate-node-labels\":\"zone, "
                         "rack,missing\"}",
                         ",\"agentLabels\":{\"team\":\"x\"},\"clusterRef\":{\"name\":\"cd\",\"namespace\":"
                         "\"demo\"}"),
                host("ie-1", NULL));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 1);
        w = &run.writes.writes[0];
        ASSERT_EQ(w->kind, HUB_WRITE_CREATE);
        ASSERT_EQ(w->target, HUB_KIND_AGENT);
        ASSERT_STREQ(w->ns, "demo");
        a = w->body;
        ASSERT_STREQ(hubtest_str(a, "metadata.name"), HOST);
        ASSERT_STREQ(hubtest_str(a, "kind"), "Agent");
        ASSERT_STREQ(hub_object_label(a, HUB_LABEL_INFRAENV), "myinfraenv");
        ASSERT_STREQ(hub_object_label(a, "team"), "x");
        ASSERT_TRUE(hub_object_has_finalizer(a, HUB_FINALIZER_AGENT));
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get_path(a, "metadata.ownerReferences"), 0),
                                 "kind"),
                     "InfraEnv");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get_path(a, "metadata.ownerReferences"), 0),
                                 "uid"),
                     "uid-myinfraenv");
        ASSERT_NULL(json_get(json_object_array_get_idx(json_get_path(a, "metadata.ownerReferences"), 0),
                             "controller"));
        {
                bool approved = true;

                ASSERT_OK(json_get_bool(json_get(a, "spec"), "approved", &approved));
                ASSERT_FALSE(approved);
        }
        ASSERT_STREQ(hubtest_str(a, "spec.role"), "");
        ASSERT_STREQ(hubtest_str(a, "spec.clusterDeploymentName.name"), "cd");
        ASSERT_STREQ(hubtest_str(a, "spec.clusterDeploymentName.namespace"), "demo");
        ASSERT_STREQ(hubtest_str(a, "spec.nodeLabels.zone"), "a");
        ASSERT_STREQ(hubtest_str(a, "spec.nodeLabels.rack"), "r1");
        ASSERT_STREQ(hub_object_annotation(a, HUB_ANNOTATION_INHERITED_NODE_LABELS), "rack,zone");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(late_binding_agent_has_no_cluster)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, NULL, infraenv("late", "ie-1", NULL, NULL), host("ie-1", NULL));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 1);
        ASSERT_NULL(json_get_path(run.writes.writes[0].body, "spec.clusterDeploymentName"));
        ASSERT_NULL(json_get_path(run.writes.writes[0].body, "spec.nodeLabels"));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(inventory_mapped_as_the_reference_agent)
{
        _cleanup_(json_object_putp) json_object *ref = reference(), *inv = NULL;

        ASSERT_OK(agent_inventory_status(json_get_string(ref, "inventory"), &inv));
        /* notes §5.4 (the controller's code) maps gpus; the reference Agent,
         * recorded from a 2025 hub, has none in its status though its raw
         * inventory has one: the hub follows the code */
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(inv, "gpus"), 0), "vendorID"), "1af4");
        json_object_object_del(inv, "gpus");
        if (!hub_json_equal(inv, json_get(ref, "status_inventory")))
                test_fail(__FILE__, __LINE__, "status.inventory differs:\n%s\nexpected\n%s",
                          json_to_string(inv, 0), json_to_string(json_get(ref, "status_inventory"), 0));
        ASSERT_ERROR(agent_inventory_status("{not json", &inv), EBADMSG);
}

TEST(inventory_labels_as_the_reference_agent)
{
        _cleanup_(json_object_putp) json_object *ref = reference(), *a = hubtest_json("{\"metadata\":{}}");

        ASSERT_OK(agent_inventory_labels(a, json_get(ref, "status_inventory")));
        json_object_object_foreach (json_get(ref, "labels"), k, v) {
                ASSERT_STREQ(hub_object_label(a, k), json_object_get_string(v));
        }
        ASSERT_STREQ(hub_object_annotation(a, HUB_ANNOTATION_INVENTORY_VERSION), "0.1");
        ASSERT_STREQ(hub_object_label(a, HUB_LABEL_CD_NAMESPACE), "");
}

TEST(label_values_sanitized)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "Red Hat", "RedHat" },
                { "x86_64", "x86_64" },
                { "Dell Inc.", NULL },
                { "-lead", NULL },
                { "", "" },
                { "PowerEdge R640 (v2)", "PowerEdgeR640v2" },
                { "a/b:c", "abc" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *v = agent_label_value(cases[i].in);

                if (!cases[i].out)
                        ASSERT_NULL(v);
                else
                        ASSERT_STREQ(v, cases[i].out);
        }
}

TEST(status_inventory_and_labels_kept_current)
{
        Fixture f;
        HubTestRun run;
        _cleanup_(json_object_putp) json_object *ref = reference();
        json_object *agent = hubtest_json(
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"Agent\","
                "\"metadata\":{\"name\":\"" HOST "\",\"namespace\":\"demo\",\"resourceVersion\":\"5\","
                "\"ownerReferences\":[{\"apiVersion\":\"agent-install.openshift.io/v1beta1\","
                "\"kind\":\"InfraEnv\",\"name\":\"myinfraenv\",\"uid\":\"uid-myinfraenv\"}]},"
                "\"spec\":{\"approved\":false,\"role\":\"\"}}");

        fixture(&f, agent, infraenv("myinfraenv", "ie-1", NULL, NULL),
                host("ie-1", json_get_string(ref, "inventory")));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_PATCH, NULL), 1);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_PATCH_STATUS, NULL), 1);
        {
                _cleanup_(json_object_putp) json_object *copy =
                        hub_json_copy(json_get_path(f.o.base.object, "status.inventory"));

                json_object_object_del(copy, "gpus");
                ASSERT_TRUE(hub_json_equal(copy, json_get(ref, "status_inventory")));
        }
        ASSERT_STREQ(hub_object_label(f.o.base.object, HUB_LABEL_INFRAENV), "myinfraenv");
        ASSERT_STREQ(hub_object_label(f.o.base.object, HUB_LABEL_HOST_MANUFACTURER), "RedHat");
        hubtest_run_done(&run);

        /* again: nothing to write */
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        hubtest_run_done(&run);

        /* a new address: one status patch */
        {
                _cleanup_(json_object_putp) json_object *inv = NULL;
                const char *raw = json_get_string(ref, "inventory");
                _cleanup_free_ char *changed = str_replace_all(raw, "192.168.1.100/24", "192.168.1.101/24");

                json_object_object_add(f.o.host, "inventory", json_object_new_string(changed));
                hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
                /* the inventory annotation (backup and restore) and the status */
                ASSERT_EQ(run.writes.n, 2);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_PATCH_STATUS, NULL), 1);
                {
                        _cleanup_free_ char *t =
                                json_to_string(hubtest_write(&run, HUB_WRITE_PATCH_STATUS, 0)->body, 0);

                        ASSERT_CONTAINS(t, "192.168.1.101/24");
                }
                hubtest_run_done(&run);
        }
        fixture_done(&f);
}

TEST(host_registered_again_from_another_infraenv)
{
        Fixture f;
        HubTestRun run;
        json_object *agent = hubtest_json(
                "{\"metadata\":{\"name\":\"" HOST "\",\"namespace\":\"demo\",\"resourceVersion\":\"5\","
                "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"old\",\"keep\":\"no\"},"
                "\"ownerReferences\":[{\"apiVersion\":\"agent-install.openshift.io/"
                "v1beta1\",\"kind\":\"InfraEnv\","
                "\"name\":\"old\",\"uid\":\"uid-old\"}]},"
                "\"spec\":{\"approved\":true,\"role\":\"master\",\"hostname\":\"h1\"}}");

        fixture(&f, agent, infraenv("new", "ie-new", NULL, ",\"agentLabels\":{\"team\":\"y\"}"),
                host("ie-new", NULL));
        f.o.old_infraenv = infraenv("old", "ie-old", NULL, NULL);
        f.o.old_infra_env_id = strdup("ie-old");
        f.o.old_host = host("ie-old", NULL);
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "deregister-old-host", 204, NULL, NULL }, { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "deregister-old-host"), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path, "/v2/infra-envs/ie-old/hosts/" HOST);
        {
                bool approved = true;

                ASSERT_OK(json_get_bool(json_get(f.o.base.object, "spec"), "approved", &approved));
                ASSERT_FALSE(approved);
        }
        ASSERT_STREQ(hubtest_str(f.o.base.object, "spec.role"), "");
        ASSERT_NULL(hubtest_str(f.o.base.object, "spec.hostname"));
        ASSERT_STREQ(hub_object_label(f.o.base.object, HUB_LABEL_INFRAENV), "new");
        ASSERT_STREQ(hub_object_label(f.o.base.object, "team"), "y");
        ASSERT_NULL(hub_object_label(f.o.base.object, "keep"));
        ASSERT_EQ(json_object_array_length(json_get_path(f.o.base.object, "metadata.ownerReferences")), 1);
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(
                                         json_get_path(f.o.base.object, "metadata.ownerReferences"), 0),
                                 "name"),
                     "new");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_EVENT, NULL), 1);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(no_host_nothing_decided)
{
        Fixture f;
        HubTestRun run;

        /* an Agent without its InfraEnv label cannot be restored (upstream's
         * "Missing InfraEnv name label", again in 10 s) */
        fixture(&f, hubtest_json("{\"metadata\":{\"name\":\"" HOST "\",\"namespace\":\"demo\"}}"), NULL,
                NULL);
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        ASSERT_TRUE(run.requeue);
        ASSERT_STREQ(run.reason, "Missing InfraEnv name label");
        hubtest_run_done(&run);
        /* unreadable (the service down): back off and look again */
        f.o.host_error = -ECONNREFUSED;
        f.o.host_message = strdup("Connection refused");
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        ASSERT_TRUE(run.requeue);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(deletion_deregisters_the_host_first)
{
        static const struct {
                bool host;
                long status;
                bool removed;
        } cases[] = { { true, 204, true }, { true, 404, true }, { true, 500, false }, { false, 0, true } };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                HubTestRun run;

                fixture(&f,
                        hubtest_json(
                                "{\"metadata\":{\"name\":\"" HOST "\",\"namespace\":\"demo\","
                                "\"deletionTimestamp\":\"2026-09-21T14:00:00Z\","
                                "\"finalizers\":[\"agent.agent-install.openshift.io/ai-deprovision\"]}}"),
                        infraenv("myinfraenv", "ie-1", NULL, NULL),
                        cases[i].host ? host("ie-1", NULL) : NULL);
                hubtest_reconcile(
                        agent_decide, &f.o.base,
                        (HubTestAnswer[]){ { "deregister-host", cases[i].status, NULL, "boom" }, { NULL } },
                        &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "deregister-host"), cases[i].host ? 1 : 0);
                if (cases[i].host)
                        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                                     "/v2/infra-envs/ie-1/hosts/" HOST);
                ASSERT_EQ(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_AGENT), !cases[i].removed);
                if (!cases[i].removed)
                        ASSERT_EQ(run.requeue_after, 10 * USEC_PER_SEC);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

DEFINE_TEST_MAIN
