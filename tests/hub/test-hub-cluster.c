/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ClusterDeployment controller's decide (notes §1) and the
 * AgentClusterInstall's status (§1.8), row by row: upstream's
 * TestConditions (a cluster status → the ACI's conditions) as a table,
 * the input errors of §1.2, registration, the spec sent field by field
 * with the late-2023 service's rules, the install trigger of §1.7, the
 * credentials of §1.6, custom manifests (§1.4), day-2 and deletion (§1.5).
 *
 * The objects are the documentation's (docs/hive-integration/crds:
 * clusterDeployment.yaml, agentClusterInstall.yaml, clusterImageSet.yaml),
 * their names made to point at each other.
 */
#include <json-c/json.h>

#include "cleanup.h"
#include "cluster.h"
#include "hub-claim.h"
#include "hubtest.h"
#include "jsonutil.h"
#include "strutil.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC)
#define CID "3c5e6d1a-0b7f-4c2e-9a41-0d5f1e2a3b4c"
#define PS_B64 "eyJhdXRocyI6eyJxdWF5LmlvIjp7ImF1dGgiOiJkWE5sY2pwd1lYTnoifX19"
#define PS_TEXT "{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}"
#define RELEASE "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64"
/* GET /v2/openshift-versions of the late-2023 service (observed/01: keyed
 * by openshift_version) and of a current one (keyed by the release) */
#define VERSIONS_2023 \
        "{\"4.13\":{\"cpu_architectures\":[\"x86_64\"],\"default\":true,\"display_name\":\"4.13.18\"," \
        "\"support_level\":\"production\"},\"4.14\":{\"cpu_architectures\":[\"x86_64\"],\"display_name\":" \
        "\"4.14.0-rc.7\",\"support_level\":\"beta\"}}"
#define VERSIONS_CURRENT \
        "{\"4.13.18\":{\"cpu_architectures\":[\"x86_64\"],\"default\":true,\"display_name\":\"4.13.18\"," \
        "\"support_level\":\"production\"},\"4.14.0-rc.7\":{\"cpu_architectures\":[\"x86_64\"]," \
        "\"display_name\":\"4.14.0-rc.7\",\"support_level\":\"beta\"}}"
#define VERSIONS_ANSWER \
        { \
                "openshift-versions", 200, VERSIONS_2023, NULL \
        }

/* the service's answer to the registration */
#define REGISTERED_ANSWER \
        { \
                "register-cluster", 201, \
                        "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":\"insufficient\"," \
                        "\"status_info\":\"Cluster is not ready for install\",\"openshift_version\":" \
                        "\"4.13.18\"}", \
                        NULL \
        }

typedef struct Fixture {
        ClusterObserved o;
} Fixture;

static json_object *cd(const char *extra_meta, const char *extra_spec)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"hive.openshift.io/v1\",\"kind\":\"ClusterDeployment\","
                "\"metadata\":{\"name\":\"single-node\",\"namespace\":\"spoke-cluster\",\"uid\":\"cd-uid\","
                "\"resourceVersion\":\"7\",\"finalizers\":[\"clusterdeployments.agent-install.openshift.io/"
                "ai-deprovision\"]%s},"
                "\"spec\":{\"baseDomain\":\"hive.example.com\",\"clusterName\":\"test-cluster\","
                "\"clusterInstallRef\":{\"group\":\"extensions.hive.openshift.io\",\"kind\":"
                "\"AgentClusterInstall\",\"name\":\"test-agent-cluster-install\",\"version\":\"v1beta1\"},"
                "\"platform\":{\"agentBareMetal\":{\"agentSelector\":{\"matchLabels\":{\"bla\":\"aaa\"}}}},"
                "\"pullSecretRef\":{\"name\":\"pull-secret\"}%s}}",
                extra_meta ? extra_meta : "", extra_spec ? extra_spec : "");
}

static json_object *aci(const char *extra_meta, const char *extra_spec)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"extensions.hive.openshift.io/v1beta1\",\"kind\":\"AgentClusterInstall\","
                "\"metadata\":{\"name\":\"test-agent-cluster-install\",\"namespace\":\"spoke-cluster\","
                "\"uid\":\"aci-uid\",\"resourceVersion\":\"8\",\"generation\":1,"
                "\"finalizers\":[\"agentclusterinstall.agent-install.openshift.io/ai-deprovision\"],"
                "\"ownerReferences\":[{\"apiVersion\":\"hive.openshift.io/"
                "v1\",\"kind\":\"ClusterDeployment\","
                "\"name\":\"single-node\",\"uid\":\"cd-uid\"}]%s},"
                "\"spec\":{\"apiVIP\":\"1.2.3.8\",\"apiVIPs\":[\"1.2.3.8\"],"
                "\"clusterDeploymentRef\":{\"name\":\"single-node\"},\"imageSetRef\":{\"name\":\"openshift-"
                "v4.13.0\"},"
                "\"ingressVIP\":\"1.2.3.9\",\"ingressVIPs\":[\"1.2.3.9\"],\"platformType\":\"BareMetal\","
                "\"networking\":{\"clusterNetwork\":[{\"cidr\":\"10.128.0.0/14\",\"hostPrefix\":23}],"
                "\"serviceNetwork\":[\"172.30.0.0/16\"]},"
                "\"provisionRequirements\":{\"controlPlaneAgents\":3},"
                "\"compute\":[{\"hyperthreading\":\"Enabled\",\"name\":\"worker\"}],"
                "\"controlPlane\":{\"hyperthreading\":\"Enabled\",\"name\":\"master\"}%s}}",
                extra_meta ? extra_meta : "", extra_spec ? extra_spec : "");
}

/* the service's cluster as the ACI above registers it */
static json_object *service_cluster(const char *status, const char *extra)
{
        return hubtest_jsonf(
                "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"name\":\"test-cluster\",\"base_dns_domain\":"
                "\"hive.example.com\",\"openshift_version\":\"4.13.18\",\"status\":\"%s\",\"status_info\":"
                "\"info of %s\",\"api_vips\":[{\"ip\":\"1.2.3.8\"}],\"ingress_vips\":[{\"ip\":\"1.2.3.9\"}],"
                "\"api_vip\":\"1.2.3.8\",\"ingress_vip\":\"1.2.3.9\","
                "\"cluster_networks\":[{\"cidr\":\"10.128.0.0/14\",\"host_prefix\":23}],"
                "\"service_networks\":[{\"cidr\":\"172.30.0.0/16\"}],\"machine_networks\":[],"
                "\"network_type\":\"OVNKubernetes\",\"user_managed_networking\":false,\"vip_dhcp_"
                "allocation\":false,"
                "\"hyperthreading\":\"all\",\"platform\":{\"type\":\"baremetal\"},\"ssh_public_key\":\"\","
                "\"http_proxy\":\"\",\"https_proxy\":\"\",\"no_proxy\":\"\",\"schedulable_masters\":false,"
                "\"control_plane_count\":3,\"validations_info\":\"{\\\"network\\\":[{\\\"id\\\":\\\"api-"
                "vips-"
                "defined\\\",\\\"status\\\":\\\"success\\\",\\\"message\\\":\\\"API virtual IPs are "
                "defined.\\\"}]}\",\"hosts\":[]%s}",
                status, status, extra ? extra : "");
}

static void fixture(Fixture *f, json_object *c, json_object *a)
{
        *f = (Fixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup("spoke-cluster");
        f->o.base.name = strdup("single-node");
        f->o.base.object = c;
        f->o.aci = a;
        f->o.identity = "hub-1";
        f->o.secret.object =
                hubtest_json("{\"metadata\":{\"name\":\"pull-secret\",\"namespace\":\"spoke-cluster\","
                             "\"labels\":{\"agent-install.openshift.io/watch\":\"true\","
                             "\"cluster.open-cluster-management.io/backup\":\"true\"}},"
                             "\"data\":{\".dockerconfigjson\":\"" PS_B64 "\"}}");
        f->o.image_set.object = hubtest_json("{\"metadata\":{\"name\":\"openshift-v4.13.0\"},"
                                             "\"spec\":{\"releaseImage\":\"" RELEASE "\"}}");
        f->o.kubeconfig_secret.error = -ENOENT;
        f->o.password_secret.error = -ENOENT;
}

/* the cluster as observe reads it (the id annotation set) */
static void linked(Fixture *f, json_object *cluster)
{
        json_object *ann = hub_json_ensure_object(f->o.base.object, "metadata.annotations");

        char dg[80];

        /* the pull secret as it was sent */
        ASSERT_OK(hub_digest(PS_TEXT, dg));
        ASSERT_OK(json_add_string(ann, HUB_ANNOTATION_CLUSTER_ID, CID));
        ASSERT_OK(json_add_string(ann, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        f->o.cluster_read = true;
        f->o.cluster.status = 200;
        f->o.cluster.body = cluster;
}

static void fixture_done(Fixture *f)
{
        cd_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

/* what the cache would bring next: the run's writes to the ACI applied */
static void apply_aci(Fixture *f, const HubTestRun *run)
{
        for (size_t i = 0; i < run->writes.n; i++) {
                const HubWrite *w = &run->writes.writes[i];

                if ((w->kind == HUB_WRITE_PATCH || w->kind == HUB_WRITE_PATCH_STATUS) &&
                    w->target == HUB_KIND_AGENTCLUSTERINSTALL)
                        hubtest_merge_apply(f->o.aci, w->body);
        }
}

static unsigned aci_writes(const HubTestRun *run)
{
        unsigned n = 0;

        for (size_t i = 0; i < run->writes.n; i++)
                if (run->writes.writes[i].target == HUB_KIND_AGENTCLUSTERINSTALL &&
                    run->writes.writes[i].kind != HUB_WRITE_EVENT)
                        n++;
        return n;
}

static json_object *agent(const char *id, bool approved, const char *synced)
{
        return hubtest_jsonf(
                "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"spoke-cluster\",\"uid\":\"u-%s\"},"
                "\"spec\":{\"approved\":%s,\"clusterDeploymentName\":{\"name\":\"single-node\","
                "\"namespace\":\"spoke-cluster\"}},"
                "\"status\":{\"conditions\":[{\"type\":\"SpecSynced\",\"status\":\"%s\"}]}}",
                id, id, approved ? "true" : "false", synced);
}

static void add_agents(Fixture *f, unsigned n, unsigned approved, unsigned unsynced)
{
        f->o.agents = calloc(n + 1, sizeof(json_object *));
        f->o.agent_infraenvs = calloc(n + 1, sizeof(json_object *));
        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *id = strdup_printf("h%u", i);

                f->o.agents[i] = agent(id, i < approved, i < unsynced ? "False" : "True");
        }
        f->o.n_agents = n;
}

/* hosts of the cluster: n known masters, h0.. */
static json_object *hosts(unsigned masters, unsigned workers, const char *status)
{
        json_object *a = json_object_new_array();

        for (unsigned i = 0; i < masters + workers; i++)
                json_object_array_add(
                        a, hubtest_jsonf("{\"id\":\"h%u\",\"infra_env_id\":\"ie-1\",\"status\":\"%s\","
                                         "\"role\":\"auto-assign\",\"suggested_role\":\"%s\"}",
                                         i, status, i < masters ? "master" : "worker"));
        return a;
}

static void with_hosts(Fixture *f, json_object *h)
{
        json_object_object_add(f->o.cluster.body, "hosts", h);
}

/* ---- finalizers, registration ---- */

TEST(finalizers_and_owner_before_anything)
{
        Fixture f;
        HubTestRun run;
        json_object *c = cd(NULL, NULL), *a = aci(NULL, NULL);

        json_object_object_del(json_get(c, "metadata"), "finalizers");
        json_object_object_del(json_get(a, "metadata"), "finalizers");
        json_object_object_del(json_get(a, "metadata"), "ownerReferences");
        fixture(&f, c, a);
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 2);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CD));
        ASSERT_EQ(run.writes.writes[1].target, HUB_KIND_AGENTCLUSTERINSTALL);
        /* a list: locked on what was observed */
        ASSERT_STREQ(run.writes.writes[1].resource_version, "8");
        apply_aci(&f, &run);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.aci, HUB_FINALIZER_ACI));
        ASSERT_STREQ(
                hubtest_str(json_object_array_get_idx(json_get_path(f.o.aci, "metadata.ownerReferences"), 0),
                            "kind"),
                "ClusterDeployment");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(registers_the_cluster)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *reg;
        json_object *body;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ VERSIONS_ANSWER, REGISTERED_ANSWER, { NULL } }, &run);
        /* the service's releases first */
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path, "/v2/openshift-versions");
        reg = hubtest_write(&run, HUB_WRITE_SERVICE, 1);
        ASSERT_STREQ(reg->tag, "register-cluster");
        ASSERT_STREQ(reg->path, "/v2/clusters");
        body = reg->body;
        ASSERT_STREQ(json_get_string(body, "name"), "test-cluster");
        ASSERT_STREQ(json_get_string(body, "base_dns_domain"), "hive.example.com");
        /* the release as the service names it (its key: 4.13 in late 2023) */
        ASSERT_STREQ(json_get_string(body, "openshift_version"), "4.13");
        ASSERT_STREQ(json_get_string(body, "ocp_release_image"), RELEASE);
        ASSERT_STREQ(json_get_string(body, "cpu_architecture"), "x86_64");
        ASSERT_STREQ(json_get_string(body, "pull_secret"), PS_TEXT);
        /* the late-2023 service wants the singular with the list */
        ASSERT_STREQ(json_get_string(body, "api_vip"), "1.2.3.8");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(body, "api_vips"), 0), "ip"), "1.2.3.8");
        ASSERT_STREQ(json_get_string(body, "ingress_vip"), "1.2.3.9");
        ASSERT_STREQ(hubtest_str(body, "platform.type"), "baremetal");
        ASSERT_STREQ(json_get_string(body, "hyperthreading"), "all");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(body, "cluster_networks"), 0), "cidr"),
                     "10.128.0.0/14");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(body, "service_networks"), 0), "cidr"),
                     "172.30.0.0/16");
        ASSERT_NULL(json_get(body, "machine_networks"));
        ASSERT_NULL(json_get(body, "high_availability_mode"));
        {
                bool b = true, v = true;

                ASSERT_OK(json_get_bool(body, "user_managed_networking", &b));
                ASSERT_FALSE(b);
                ASSERT_OK(json_get_bool(body, "vip_dhcp_allocation", &v));
                ASSERT_FALSE(v);
        }
        /* the marker went first, the id replaced it */
        ASSERT_EQ(run.writes.writes[1].kind, HUB_WRITE_PATCH);
        {
                _cleanup_free_ char *t = json_to_string(run.writes.writes[1].body, 0);

                ASSERT_CONTAINS(t, HUB_ANNOTATION_REGISTERING);
        }
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST));
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "True", "SyncOK", "SyncOK");
        ASSERT_CONDITION(f.o.aci, "RequirementsMet", "False", "ClusterNotReady",
                         "The cluster is not ready to begin the installation");
        ASSERT_CONDITION(f.o.aci, "Completed", "False", "InstallationNotStarted",
                         "The installation has not yet started");
        ASSERT_CONDITION(f.o.aci, "Failed", "False", "InstallationNotFailed",
                         "The installation has not failed");
        ASSERT_CONDITION(f.o.aci, "Stopped", "False", "InstallationNotStopped",
                         "The installation is waiting to start or in progress");
        ASSERT_STREQ(hubtest_str(f.o.aci, "status.debugInfo.state"), "insufficient");
        /* no Agent yet, so no URL of the service's to take the public base
         * from (aci_debug_urls_on_the_public_base_url) */
        ASSERT_NULL(hubtest_str(f.o.aci, "status.debugInfo.eventsURL"));
        /* conditions have both times (hive's ClusterInstallCondition) */
        ASSERT_NOT_NULL(hubtest_str(
                json_object_array_get_idx(json_get_path(f.o.aci, "status.conditions"), 0), "lastProbeTime"));
        ASSERT_EQ(run.requeue_after, 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(single_node_and_user_managed_networking)
{
        Fixture f;
        HubTestRun run;
        json_object *body;

        fixture(&f, cd(NULL, NULL), aci(NULL, ",\"provisionRequirements\":{\"controlPlaneAgents\":1}"));
        json_object_object_del(json_get(f.o.aci, "spec"), "apiVIP");
        json_object_object_del(json_get(f.o.aci, "spec"), "apiVIPs");
        json_object_object_del(json_get(f.o.aci, "spec"), "ingressVIP");
        json_object_object_del(json_get(f.o.aci, "spec"), "ingressVIPs");
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ VERSIONS_ANSWER,
                                             { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL },
                                             { NULL } },
                          &run);
        body = hubtest_write(&run, HUB_WRITE_SERVICE, 1)->body;
        ASSERT_STREQ(json_get_string(body, "high_availability_mode"), "None");
        {
                bool b = false;

                ASSERT_OK(json_get_bool(body, "user_managed_networking", &b));
                ASSERT_TRUE(b);
        }
        ASSERT_NULL(json_get(body, "api_vips"));
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* an installed ClusterDeployment's reconcile: the import body sent */
static json_object *imported(Fixture *f, HubTestRun *run)
{
        hubtest_reconcile(cd_decide, &f->o.base,
                          (HubTestAnswer[]){ { "import-cluster", 201,
                                               "{\"id\":\"" CID "\",\"kind\":\"AddHostsCluster\","
                                               "\"status\":\"adding-hosts\"}",
                                               NULL },
                                             { NULL } },
                          run);
        /* no release check before an import: the cluster exists */
        ASSERT_EQ(hubtest_count(run, HUB_WRITE_SERVICE, NULL), 1);
        return hubtest_write(run, HUB_WRITE_SERVICE, 0)->body;
}

/* the installed ClusterDeployment imported: the openshift_cluster_id sent */
static void import_with(const char *cd_spec, const char *aci_spec, const char *want_id)
{
        Fixture f;
        HubTestRun run;
        json_object *body;

        fixture(&f, cd(NULL, cd_spec), aci(NULL, aci_spec));
        body = imported(&f, &run);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path, "/v2/clusters/import");
        ASSERT_STREQ(json_get_string(body, "name"), "test-cluster");
        ASSERT_STREQ(json_get_string(body, "api_vip_dnsname"), "api.test-cluster.hive.example.com");
        ASSERT_STREQ(json_get_string(body, "openshift_cluster_id"), want_id);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(imports_an_installed_cluster)
{
        import_with(",\"installed\":true",
                    ",\"clusterMetadata\":{\"clusterID\":\"9a1f0c3b-8a2d-4b6e-9c7f-1a2b3c4d5e6f\","
                    "\"infraID\":\"x\",\"adminKubeconfigSecretRef\":{\"name\":\"k\"}}",
                    "9a1f0c3b-8a2d-4b6e-9c7f-1a2b3c4d5e6f");
        /* as the import documentation has it: clusterMetadata on the
         * ClusterDeployment only, its clusterID empty (REST needs a UUID) */
        import_with(",\"installed\":true,\"clusterMetadata\":{\"clusterID\":\"\",\"infraID\":\"\","
                    "\"adminKubeconfigSecretRef\":{\"name\":\"k\"}}",
                    NULL, "00000000-0000-0000-0000-000000000000");
}

TEST(a_marker_without_id_searches_first)
{
        Fixture f;
        HubTestRun run;
        char ts[32], marker[64];

        /* the register call reached the service before a crash: its
         * answer never did */
        hub_format_time(NOW - 30 * USEC_PER_SEC, ts);
        snprintf(marker, sizeof(marker), "%s hub-1", ts);
        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING, marker));
        f.o.searched = true;
        f.o.candidates.status = 200;
        f.o.candidates.body =
                hubtest_jsonf("[{\"id\":\"" CID "\",\"name\":\"test-cluster\",\"created_at\":\"%s\"}]", ts);
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){ { "get-cluster", 200,
                                     "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":\"insufficient\"}",
                                     NULL },
                                   { "update-cluster", 201, NULL, NULL },
                                   { NULL } },
                &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 0);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- the input errors of §1.2: their condition, no service call, no loop ---- */

typedef struct InputCase {
        const char *name;
        void (*setup)(Fixture *f);
        const char *reason;
        const char *message;
        usec_t requeue_after;
} InputCase;

static void no_pull_secret_ref(Fixture *f)
{
        json_object_object_del(json_get(f->o.base.object, "spec"), "pullSecretRef");
}

static void pull_secret_missing(Fixture *f)
{
        json_object_put(f->o.secret.object);
        f->o.secret.object = NULL;
        f->o.secret.error = -ENOENT;
        f->o.secret.message = strdup("secrets \"pull-secret\" not found");
}

static void pull_secret_no_key(Fixture *f)
{
        json_object_object_del(json_get(f->o.secret.object, "data"), ".dockerconfigjson");
}

static void no_image_set_ref(Fixture *f)
{
        json_object_object_del(json_get(f->o.aci, "spec"), "imageSetRef");
}

static void image_set_missing(Fixture *f)
{
        json_object_put(f->o.image_set.object);
        f->o.image_set.object = NULL;
        f->o.image_set.error = -ENOENT;
        f->o.image_set.message =
                strdup("clusterimagesets.hive.openshift.io \"openshift-v4.13.0\" not found");
}

static void release_by_digest(Fixture *f)
{
        json_object_object_add(
                json_get(f->o.image_set.object, "spec"), "releaseImage",
                json_object_new_string("quay.io/openshift-release-dev/ocp-release@sha256:abc"));
}

static void release_by_custom_tag(Fixture *f)
{
        json_object_object_add(json_get(f->o.image_set.object, "spec"), "releaseImage",
                               json_object_new_string("registry.local:5000/ocp/release:disconnected"));
}

static void release_label_against_tag(Fixture *f)
{
        ASSERT_OK(hub_object_set_label(f->o.image_set.object, HUB_LABEL_CIS_OPENSHIFT_VERSION, "4.13.5"));
}

static void five_masters_late_2023(Fixture *f)
{
        json_object_object_add(json_get(f->o.aci, "spec"), "provisionRequirements",
                               hubtest_json("{\"controlPlaneAgents\":5}"));
        f->o.api = HUB_SERVICE_API_2023;
}

static void mirror_registry(Fixture *f)
{
        json_object_object_add(json_get(f->o.aci, "spec"), "mirrorRegistryRef",
                               hubtest_json("{\"name\":\"mirror\",\"namespace\":\"spoke-cluster\"}"));
}

static void external_without_spec(Fixture *f)
{
        json_object_object_add(json_get(f->o.aci, "spec"), "platformType",
                               json_object_new_string("External"));
}

static void ca_missing(Fixture *f)
{
        json_object_object_add(json_get(f->o.aci, "spec"), "ignitionEndpoint",
                               hubtest_json("{\"url\":\"https://ign\",\"caCertificateReference\":"
                                            "{\"name\":\"ca\",\"namespace\":\"spoke-cluster\"}}"));
        f->o.ca_secret.error = -ENOENT;
        f->o.ca_secret.message = strdup("secrets \"ca\" not found");
}

static const InputCase input_cases[] = {
        { "no pullSecretRef", no_pull_secret_ref, "InputError",
          "The Spec could not be synced due to an input error: PullSecret is required for ClusterDeployment "
          "single-node/spoke-cluster",
          0 },
        { "pull secret missing", pull_secret_missing, "InputError",
          "The Spec could not be synced due to an input error: failed to find secret pull-secret: secrets "
          "\"pull-secret\" not found",
          0 },
        { "pull secret without key", pull_secret_no_key, "InputError",
          "The Spec could not be synced due to an input error: secret pull-secret did not contain key "
          ".dockerconfigjson",
          0 },
        { "no imageSetRef", no_image_set_ref, "InputError",
          "The Spec could not be synced due to an input error: ClusterImageSet must be specified in "
          "AgentClusterInstall.Spec.ImageSetRef for cluster that is not installed",
          0 },
        { "unknown ClusterImageSet", image_set_missing, "BackendError",
          "The Spec could not be synced due to backend error: ClusterImageSet openshift-v4.13.0 not found. "
          "Please ensure the ClusterImageSet exists",
          HUB_REQUEUE_ON_ERROR },
        { "release pinned by digest", release_by_digest, "InputError",
          "The Spec could not be synced due to an input error: failed to get release image "
          "'quay.io/openshift-release-dev/ocp-release@sha256:abc'. Please ensure the releaseImage field in "
          "ClusterImageSet 'openshift-v4.13.0' is valid (error: it is pinned by digest and the "
          "ClusterImageSet has no agent-install.openshift.io/openshift-version label: cradle-hub does not "
          "pull release images to read their version; label it with the release's version (oc adm release "
          "info -o jsonpath='{.metadata.version}')).",
          0 },
        { "release by a tag without version", release_by_custom_tag, "InputError",
          "The Spec could not be synced due to an input error: failed to get release image "
          "'registry.local:5000/ocp/release:disconnected'. Please ensure the releaseImage field in "
          "ClusterImageSet 'openshift-v4.13.0' is valid (error: its tag names no OpenShift version (as "
          "\"4.14.0-x86_64\" does) and the ClusterImageSet has no "
          "agent-install.openshift.io/openshift-version label: *",
          0 },
        { "release labels against the tag", release_label_against_tag, "InputError",
          "The Spec could not be synced due to an input error: failed to get release image "
          "'" RELEASE
          "'. Please ensure the releaseImage field in ClusterImageSet 'openshift-v4.13.0' is valid "
          "(error: its labels say 4.13.5 (x86_64) but its tag says 4.13.18 (x86_64)).",
          0 },
        { "5 control-plane agents, late-2023 service", five_masters_late_2023, "InputError",
          "The Spec could not be synced due to an input error: this assisted-service does not know "
          "control_plane_count (its cluster API is the late-2023 one: high_availability_mode Full for three "
          "control-plane nodes, None for a single node without workers): "
          "spec.provisionRequirements.controlPlaneAgents 5 with 0 workerAgents cannot be installed by it",
          0 },
        { "mirror registry", mirror_registry, "InputError",
          "The Spec could not be synced due to an input error: spec.mirrorRegistryRef is not supported*",
          0 },
        { "external without spec", external_without_spec, "InputError",
          "The Spec could not be synced due to an input error: For external platform, the external platform "
          "spec must be set",
          0 },
        { "ignition CA missing", ca_missing, "BackendError",
          "The Spec could not be synced due to backend error: Failed to get and parse ignition ca "
          "certificate "
          "spoke-cluster/test-agent-cluster-install: error getting ca certificate secret: secrets \"ca\" "
          "not "
          "found",
          HUB_REQUEUE_ON_ERROR },
};

TEST(input_errors)
{
        for (size_t i = 0; i < ELEMENTSOF(input_cases); i++) {
                Fixture f;
                HubTestRun run;

                fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
                input_cases[i].setup(&f);
                hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
                if (hubtest_count(&run, HUB_WRITE_SERVICE, NULL) != 0)
                        test_fail(__FILE__, __LINE__, "%s: a service call", input_cases[i].name);
                apply_aci(&f, &run);
                ASSERT_CONDITION(f.o.aci, "SpecSynced", "False", input_cases[i].reason,
                                 input_cases[i].message);
                ASSERT_CONDITION(f.o.aci, "RequirementsMet", "Unknown", "NotAvailable",
                                 "Information not available");
                ASSERT_CONDITION(f.o.aci, "Completed", "Unknown", "NotAvailable",
                                 "Information not available");
                /* a user error waits for the user; a backend error comes back
                 * (the release image: in a minute, the others in 10 s) */
                if (input_cases[i].requeue_after == 0)
                        ASSERT_EQ(run.requeue_after, 0);
                else
                        ASSERT_TRUE(run.requeue_after >= input_cases[i].requeue_after);
                ASSERT_FALSE(run.requeue);
                hubtest_run_done(&run);
                /* the same again: nothing new to write */
                hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
                ASSERT_EQ(aci_writes(&run), 0);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

/* ---- TestConditions: a cluster status → the ACI's conditions (§1.8) ---- */

typedef struct Row {
        const char *s, *r, *m;
} Row;

typedef struct ConditionCase {
        const char *status;
        const char *extra; /* more of the cluster */
        bool hold;
        Row requirements, validated, completed, failed, stopped;
} ConditionCase;

#define NOT_FAILED \
        { \
                "False", "InstallationNotFailed", "The installation has not failed" \
        }
#define NOT_STOPPED \
        { \
                "False", "InstallationNotStopped", "The installation is waiting to start or in progress" \
        }
#define PASSING \
        { \
                "True", "ValidationsPassing", "The cluster's validations are passing" \
        }

static const ConditionCase condition_cases[] = {
        { "insufficient",
          ",\"validations_info\":\"{\\\"hosts-data\\\":[{\\\"id\\\":\\\"all-hosts-are-ready-to-install\\\","
          "\\\"status\\\":\\\"failure\\\",\\\"message\\\":\\\"The cluster has hosts that are not ready to "
          "install.\\\"},{\\\"id\\\":\\\"sufficient-masters-count\\\",\\\"status\\\":\\\"success\\\","
          "\\\"message\\\":\\\"ok\\\"}]}\"",
          false,
          { "False", "ClusterNotReady", "The cluster is not ready to begin the installation" },
          { "False", "ValidationsFailing",
            "The cluster's validations are failing: The cluster has hosts that are not ready to install." },
          { "False", "InstallationNotStarted", "The installation has not yet started" },
          NOT_FAILED,
          NOT_STOPPED },
        { "pending-for-input",
          ",\"validations_info\":\"{\\\"network\\\":[{\\\"id\\\":\\\"api-vips-defined\\\",\\\"status\\\":"
          "\\\"pending\\\",\\\"message\\\":\\\"API virtual IPs are undefined.\\\"}]}\"",
          false,
          { "False", "ClusterNotReady", "The cluster is not ready to begin the installation" },
          { "False", "ValidationsUserPending",
            "The cluster's validations are pending for user: API virtual IPs are undefined." },
          { "False", "InstallationNotStarted", "The installation has not yet started" },
          NOT_FAILED,
          NOT_STOPPED },
        { "ready",
          NULL,
          true,
          { "True", "ClusterIsReady", "The cluster is ready to begin the installation" },
          PASSING,
          { "False", "InstallationOnHold",
            "The installation is on hold. To unhold set holdInstallation to false" },
          NOT_FAILED,
          NOT_STOPPED },
        { "preparing-for-installation",
          NULL,
          false,
          { "True", "ClusterAlreadyInstalling", "The cluster requirements are met" },
          PASSING,
          { "False", "InstallationInProgress",
            "The installation is in progress: info of preparing-for-installation" },
          NOT_FAILED,
          NOT_STOPPED },
        { "finalizing",
          ",\"monitored_operators\":[{\"name\":\"cvo\",\"status\":\"progressing\",\"status_info\":\"Working "
          "towards 4.13.18\"}]",
          false,
          { "True", "ClusterAlreadyInstalling", "The cluster requirements are met" },
          PASSING,
          { "False", "InstallationInProgress",
            "The installation is in progress: info of finalizing. Cluster version status: progressing, "
            "message: "
            "Working towards 4.13.18" },
          NOT_FAILED,
          NOT_STOPPED },
        { "installed",
          NULL,
          false,
          { "True", "ClusterInstallationStopped", "The cluster installation stopped" },
          PASSING,
          { "True", "InstallationCompleted", "The installation has completed: info of installed" },
          NOT_FAILED,
          { "True", "InstallationCompleted",
            "The installation has stopped because it completed successfully" } },
        { "error",
          NULL,
          false,
          { "True", "ClusterInstallationStopped", "The cluster installation stopped" },
          PASSING,
          { "False", "InstallationFailed", "The installation has failed: info of error" },
          { "True", "InstallationFailed", "The installation failed: info of error" },
          { "True", "InstallationFailed", "The installation has stopped due to error" } },
        { "cancelled",
          NULL,
          false,
          { "Unknown", "UnknownStatus", "The installation status is currently not recognized: cancelled" },
          PASSING,
          { "Unknown", "UnknownStatus", "The installation status is currently not recognized: cancelled" },
          NOT_FAILED,
          { "True", "InstallationCancelled", "The installation has stopped because it was cancelled" } },
        { "adding-hosts",
          ",\"validations_info\":\"\"",
          false,
          { "True", "ClusterAlreadyInstalling", "The cluster requirements are met" },
          PASSING,
          { "True", "InstallationCompleted", "The installation has completed: info of adding-hosts" },
          NOT_FAILED,
          { "True", "InstallationCompleted",
            "The installation has stopped because it completed successfully" } },
        { "installing",
          ",\"validations_info\":\"\"",
          false,
          { "True", "ClusterAlreadyInstalling", "The cluster requirements are met" },
          { "Unknown", "ValidationsUnknown", "The cluster's validations have not yet been calculated" },
          { "False", "InstallationInProgress", "The installation is in progress: info of installing" },
          NOT_FAILED,
          NOT_STOPPED },
};

static void assert_row(json_object *a, const char *type, const Row *r, const char *status)
{
        json_object *c = hub_conditions_find(a, type);

        if (!c || !streq_ptr(json_get_string(c, "status"), r->s) ||
            !streq_ptr(json_get_string(c, "reason"), r->r) ||
            !streq_ptr(json_get_string(c, "message"), r->m))
                test_fail(__FILE__, __LINE__, "cluster %s, %s: %s/%s \"%s\", expected %s/%s \"%s\"", status,
                          type, strna(json_get_string(c, "status")), strna(json_get_string(c, "reason")),
                          strna(json_get_string(c, "message")), r->s, r->r, r->m);
}

TEST(conditions_of_every_cluster_status)
{
        for (size_t i = 0; i < ELEMENTSOF(condition_cases); i++) {
                const ConditionCase *t = &condition_cases[i];
                _cleanup_(json_object_putp) json_object *a = aci(NULL, NULL), *cl = NULL;
                ClusterCounts counts = { .expected_masters = 3, .masters = 3, .known = 3, .approved = 3 };

                cl = service_cluster(t->status, NULL);
                if (t->extra) {
                        _cleanup_(json_object_putp) json_object *more =
                                hubtest_jsonf("{\"x\":0%s}", t->extra);

                        json_object_object_foreach (more, k, v)
                                json_object_object_add(cl, k, hub_json_copy(v));
                }
                ASSERT_OK(cd_aci_status(a, cl, &counts, NULL, false, t->hold, "http://svc", NOW));
                assert_row(a, "RequirementsMet", &t->requirements, t->status);
                assert_row(a, "Validated", &t->validated, t->status);
                assert_row(a, "Completed", &t->completed, t->status);
                assert_row(a, "Failed", &t->failed, t->status);
                assert_row(a, "Stopped", &t->stopped, t->status);
                ASSERT_CONDITION(a, "SpecSynced", "True", "SyncOK", "SyncOK");
                ASSERT_STREQ(hubtest_str(a, "status.debugInfo.state"), t->status);
        }
}

TEST(requirements_met_when_ready)
{
        static const struct {
                ClusterCounts c;
                const char *status, *reason, *message;
        } rows[] = {
                { { .expected_masters = 3, .masters = 2, .workers = 1, .known = 3, .approved = 3 },
                  "False",
                  "InsufficientAgents",
                  "The cluster currently requires exactly 3 master agents, 0 arbiter agents and 0 worker "
                  "agents, "
                  "but currently registered 2 master agents, 0 arbiter agents and 1 worker agents" },
                { { .expected_masters = 3, .masters = 3, .known = 3, .approved = 3, .unsynced = 1 },
                  "False",
                  "UnsyncedAgents",
                  "The cluster currently has 1 agents with spec error" },
                { { .expected_masters = 3, .masters = 3, .known = 3, .approved = 1 },
                  "False",
                  "UnapprovedAgents",
                  "The installation is pending on the approval of 2 agents" },
                { { .expected_masters = 3, .masters = 3, .known = 3, .approved = 3 },
                  "True",
                  "ClusterIsReady",
                  "The cluster is ready to begin the installation" },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                _cleanup_(json_object_putp) json_object *a = aci(NULL, NULL),
                                                        *cl = service_cluster("ready", NULL);

                ASSERT_OK(cd_aci_status(a, cl, &rows[i].c, NULL, false, false, NULL, NOW));
                ASSERT_CONDITION(a, "RequirementsMet", rows[i].status, rows[i].reason, rows[i].message);
                ASSERT_CONDITION(a, "Completed", "False", "InstallationNotStarted",
                                 "The installation has not yet started");
                ASSERT_EQ(cd_ready_for_installation(cl, &rows[i].c, false), i == 3);
                ASSERT_FALSE(cd_ready_for_installation(cl, &rows[i].c, true));
        }
}

TEST(last_installation_preparation)
{
        static const struct {
                const char *lp, *status, *reason, *message;
        } rows[] = {
                { NULL, "False", "Cluster preparation has never been performed for this cluster", "" },
                { "{\"status\":\"success\"}", "False", "There is no failing prior preparation attempt", "" },
                { "{\"status\":\"failed\",\"reason\":\"image pull failed\"}", "True",
                  "The last installation preparation failed", "image pull failed" },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                _cleanup_(json_object_putp) json_object *a = aci(NULL, NULL),
                                                        *cl = service_cluster("ready", NULL);
                ClusterCounts counts = {};

                if (rows[i].lp)
                        json_object_object_add(cl, "last-installation-preparation",
                                               hubtest_json(rows[i].lp));
                ASSERT_OK(cd_aci_status(a, cl, &counts, NULL, false, false, NULL, NOW));
                ASSERT_CONDITION(a, "LastInstallationPreparationFailed", rows[i].status, rows[i].reason,
                                 rows[i].message);
        }
}

TEST(conditions_keep_their_times)
{
        _cleanup_(json_object_putp) json_object *a = aci(NULL, NULL),
                                                *cl = service_cluster("insufficient", NULL);
        ClusterCounts counts = {};
        json_object *c;

        ASSERT_OK(cd_aci_status(a, cl, &counts, NULL, false, false, NULL, NOW));
        ASSERT_OK(cd_aci_status(a, cl, &counts, NULL, false, false, NULL, NOW + 3600 * USEC_PER_SEC));
        c = hub_conditions_find(a, "RequirementsMet");
        ASSERT_STREQ(json_get_string(c, "lastProbeTime"), json_get_string(c, "lastTransitionTime"));
        {
                char ts[32];

                hub_format_time(NOW, ts);
                ASSERT_STREQ(json_get_string(c, "lastTransitionTime"), ts);
        }
}

/* ---- the install trigger (§1.7) ---- */

TEST(ready_approved_and_synced_installs_once)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        linked(&f, service_cluster("ready", NULL));
        with_hosts(&f, hosts(3, 0, "known"));
        add_agents(&f, 3, 3, 0);
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){ { "v2InstallCluster", 202, NULL, NULL },
                                   { "install-cluster", 202,
                                     "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":"
                                     "\"preparing-for-installation\",\"status_info\":\"Preparing cluster "
                                     "for installation\"}",
                                     NULL },
                                   { NULL } },
                &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "install-cluster"), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/clusters/" CID "/actions/install");
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "RequirementsMet", "True", "ClusterAlreadyInstalling",
                         "The cluster requirements are met");
        ASSERT_CONDITION(f.o.aci, "Completed", "False", "InstallationInProgress",
                         "The installation is in progress: Preparing cluster for installation");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* after a restart the cluster is preparing: no second install */
        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        linked(&f, service_cluster("preparing-for-installation", NULL));
        with_hosts(&f, hosts(3, 0, "preparing-for-installation"));
        add_agents(&f, 3, 3, 0);
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(no_install_without_every_requirement)
{
        static const struct {
                unsigned masters, approved, unsynced;
                const char *hold, *pause, *reason;
        } rows[] = {
                { 3, 2, 0, NULL, NULL, "UnapprovedAgents" },   { 3, 3, 1, NULL, NULL, "UnsyncedAgents" },
                { 2, 3, 0, NULL, NULL, "InsufficientAgents" }, { 3, 3, 0, "true", NULL, "ClusterIsReady" },
                { 3, 3, 0, NULL, "true", "ClusterIsReady" },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                Fixture f;
                HubTestRun run;
                _cleanup_free_ char *meta = rows[i].pause ? strdup_printf(",\"annotations\":{\"%s\":\"%s\"}",
                                                                          HUB_ANNOTATION_RECONCILE_PAUSE,
                                                                          rows[i].pause)
                                                          : NULL,
                                    *spec = rows[i].hold ? strdup(",\"holdInstallation\":true") : NULL;

                fixture(&f, cd(meta, NULL), aci(NULL, spec));
                linked(&f, service_cluster("ready", NULL));
                with_hosts(&f, hosts(rows[i].masters, 3 - rows[i].masters, "known"));
                add_agents(&f, 3, rows[i].approved, rows[i].unsynced);
                hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "install-cluster"), 0);
                apply_aci(&f, &run);
                ASSERT_CONDITION(f.o.aci, "RequirementsMet",
                                 streq(rows[i].reason, "ClusterIsReady") ? "True" : "False", rows[i].reason,
                                 NULL);
                if (rows[i].hold)
                        ASSERT_CONDITION(f.o.aci, "Completed", "False", "InstallationOnHold", NULL);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

/* ---- spec → service (§1.3) ---- */

TEST(nothing_differs_nothing_written)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        linked(&f, service_cluster("insufficient", NULL));
        /* the pull secret as last sent */
        {
                char dg[80];

                ASSERT_OK(hub_digest(PS_TEXT, dg));
                ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        }
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        apply_aci(&f, &run);
        hubtest_run_done(&run);
        /* the next pass: the status is what it was */
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

static json_object *update_of(Fixture *f, HubTestRun *run)
{
        char dg[80];

        ASSERT_OK(hub_digest(PS_TEXT, dg));
        ASSERT_OK(hub_object_set_annotation(f->o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        hubtest_reconcile(cd_decide, &f->o.base,
                          (HubTestAnswer[]){ { "update-cluster", 201, NULL, NULL }, { NULL } }, run);
        return hubtest_count(run, HUB_WRITE_SERVICE, "update-cluster") == 1
                       ? hubtest_write(run, HUB_WRITE_SERVICE, 0)->body
                       : NULL;
}

TEST(update_carries_only_what_differs)
{
        Fixture f;
        HubTestRun run;
        json_object *body;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        json_object_object_add(json_get(f.o.base.object, "spec"), "baseDomain",
                               json_object_new_string("other.example.com"));
        linked(&f, service_cluster("insufficient", NULL));
        body = update_of(&f, &run);
        ASSERT_NOT_NULL(body);
        {
                _cleanup_free_ char *t = json_to_string(body, 0);

                ASSERT_STREQ(t, "{\"base_dns_domain\":\"other.example.com\"}");
        }
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(vips_with_the_singular_once_a_host_is_in_their_network)
{
        Fixture f;
        HubTestRun run;
        json_object *body;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        json_object_object_add(json_get(f.o.aci, "spec"), "apiVIP", json_object_new_string("1.2.3.18"));
        json_object_object_add(json_get(f.o.aci, "spec"), "apiVIPs", hubtest_json("[\"1.2.3.18\"]"));
        linked(&f, service_cluster("insufficient", NULL));
        /* a late-2023 cluster: no control_plane_count */
        json_object_object_del(f.o.cluster.body, "control_plane_count");
        /* no host in 1.2.3.0/24 yet: the service would refuse, nothing is sent */
        body = update_of(&f, &run);
        ASSERT_NULL(body);
        hubtest_run_done(&run);
        with_hosts(&f,
                   hubtest_json("[{\"id\":\"h0\",\"status\":\"known\",\"inventory\":\"{\\\"interfaces\\\":[{"
                                "\\\"ipv4_addresses\\\":[\\\"1.2.3.11/24\\\"]}]}\"}]"));
        body = update_of(&f, &run);
        ASSERT_NOT_NULL(body);
        ASSERT_STREQ(json_get_string(body, "api_vip"), "1.2.3.18");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(body, "api_vips"), 0), "ip"),
                     "1.2.3.18");
        ASSERT_NULL(json_get(body, "ingress_vips"));
        hubtest_run_done(&run);
        /* a current service's cluster (it has control_plane_count) refuses
         * the singular */
        json_object_object_add(f.o.cluster.body, "control_plane_count", json_object_new_int(3));
        body = update_of(&f, &run);
        ASSERT_NOT_NULL(body);
        ASSERT_NULL(json_get(body, "api_vip"));
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(body, "api_vips"), 0), "ip"),
                     "1.2.3.18");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(machine_networks_only_with_vip_dhcp)
{
        Fixture f;
        HubTestRun run;
        json_object *body;

        fixture(&f, cd(NULL, NULL),
                aci(NULL, ",\"networking\":{\"machineNetwork\":[{\"cidr\":\"1.2.3.0/24\"}]}"));
        linked(&f, service_cluster("insufficient", NULL));
        body = update_of(&f, &run);
        /* the service derives it outside VIP-DHCP mode and refuses it set */
        ASSERT_TRUE(!body || !json_get(body, "machine_networks"));
        hubtest_run_done(&run);
        json_object_object_add(f.o.cluster.body, "vip_dhcp_allocation", json_object_new_boolean(true));
        body = update_of(&f, &run);
        ASSERT_NOT_NULL(body);
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(body, "machine_networks"), 0), "cidr"),
                     "1.2.3.0/24");
        /* and no VIPs in DHCP mode */
        ASSERT_NULL(json_get(body, "api_vips"));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(a_refused_update_is_the_users_error)
{
        Fixture f;
        HubTestRun run;
        char dg[80];

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        json_object_object_add(json_get(f.o.base.object, "spec"), "clusterName",
                               json_object_new_string("BAD_NAME"));
        linked(&f, service_cluster("insufficient", NULL));
        ASSERT_OK(hub_digest(PS_TEXT, dg));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "update-cluster", 400, NULL,
                                               "Cluster name format is not valid: 'BAD_NAME'" },
                                             { NULL } },
                          &run);
        apply_aci(&f, &run);
        ASSERT_CONDITION(
                f.o.aci, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: Cluster name format is not valid: "
                "'BAD_NAME'");
        ASSERT_EQ(run.requeue_after, 0);
        hubtest_run_done(&run);
        /* the service down: BackendError, again in 10 s */
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "update-cluster", 500, NULL, "internal error" }, { NULL } },
                          &run);
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "False", "BackendError",
                         "The Spec could not be synced due to backend error: internal error");
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_ON_ERROR);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(install_config_overrides_and_ignored_validations)
{
        Fixture f;
        HubTestRun run;
        char dg[80];
        const HubWrite *w;

        fixture(&f, cd(NULL, NULL),
                aci(",\"annotations\":{\"agent-install.openshift.io/install-config-overrides\":"
                    "\"{\\\"networking\\\":{\\\"networkType\\\":\\\"OVNKubernetes\\\"}}\","
                    "\"agent-install.openshift.io/ignored-cluster-validations\":\"api-vips-valid, "
                    "ingress-vips-valid\"}",
                    NULL));
        linked(&f, service_cluster("insufficient", NULL));
        ASSERT_OK(hub_digest(PS_TEXT, dg));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "install-config", 201, NULL, NULL },
                                             { "get-ignored-validations", 200, "{}", NULL },
                                             { "ignored-validations", 201, NULL, NULL },
                                             { NULL } },
                          &run);
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 0);
        ASSERT_STREQ(w->tag, "install-config");
        ASSERT_STREQ(json_object_get_string(w->body),
                     "{\"networking\":{\"networkType\":\"OVNKubernetes\"}}");
        /* the cluster does not show what it ignores: asked */
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 1);
        ASSERT_STREQ(w->tag, "get-ignored-validations");
        ASSERT_STREQ(w->path, "/v2/clusters/" CID "/ignored-validations");
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 2);
        ASSERT_STREQ(w->tag, "ignored-validations");
        ASSERT_STREQ(json_get_string(w->body, "cluster-validation-ids"),
                     "[\"api-vips-valid\",\"ingress-vips-valid\"]");
        hubtest_run_done(&run);
        /* the service refuses the overrides */
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "install-config", 400, NULL, "invalid character 'x'" },
                                             { "get-ignored-validations", 200, "{}", NULL },
                                             { "ignored-validations", 201, NULL, NULL },
                                             { NULL } },
                          &run);
        apply_aci(&f, &run);
        ASSERT_CONDITION(
                f.o.aci, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: Failed to parse "
                "'agent-install.openshift.io/install-config-overrides' annotation: invalid character 'x'");
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* What the service ignores is compared with its own answer: the late-2023
 * cluster never shows ignored_*_validations (its GET omits them), and its
 * v2GetIgnoredValidations omits a list that is empty. Where the cluster
 * shows them, no extra call. */
TEST(ignored_validations_compared_with_what_the_service_ignores)
{
        static const char *const annotation =
                ",\"annotations\":{\"agent-install.openshift.io/ignored-host-validations\":"
                "\"has-cpu-cores-for-role\"}";
        Fixture f;
        HubTestRun run;
        char dg[80];

        ASSERT_OK(hub_digest(PS_TEXT, dg));
        /* already ignored, said by v2GetIgnoredValidations: nothing set */
        fixture(&f, cd(NULL, NULL), aci(annotation, NULL));
        linked(&f, service_cluster("ready", NULL));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){
                                  { "get-ignored-validations", 200,
                                    "{\"host-validation-ids\":\"[\\\"has-cpu-cores-for-role\\\"]\"}", NULL },
                                  { "install", 202, NULL, NULL },
                                  { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "get-ignored-validations"), 1);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "ignored-validations"), 0);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* the cluster shows it: no call at all */
        fixture(&f, cd(NULL, NULL), aci(annotation, NULL));
        linked(&f, service_cluster("ready",
                                   ",\"ignored_host_validations\":\"[\\\"has-cpu-cores-for-role\\\"]\""));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "install", 202, NULL, NULL }, { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "get-ignored-validations"), 0);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "ignored-validations"), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* Once the installation is under way the service takes no change (a 409
 * over REST); the hub sends none and says nothing is wrong with the spec. */
TEST(no_change_sent_while_installing)
{
        static const char *const statuses[] = { "preparing-for-installation", "installing", "finalizing",
                                                "installed", "error" };

        for (size_t i = 0; i < ELEMENTSOF(statuses); i++) {
                Fixture f;
                HubTestRun run;
                char dg[80];

                fixture(&f, cd(NULL, NULL),
                        aci(",\"annotations\":{\"agent-install.openshift.io/ignored-host-validations\":"
                            "\"has-cpu-cores-for-role\",\"agent-install.openshift.io/"
                            "install-config-overrides\":"
                            "\"{}\"}",
                            ",\"sshPublicKey\":\"ssh-ed25519 AAAA changed\""));
                linked(&f, service_cluster(statuses[i], NULL));
                ASSERT_OK(hub_digest(PS_TEXT, dg));
                ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
                hubtest_reconcile(cd_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "*", 200, "{}", NULL }, { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "update"), 0);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "install-config"), 0);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "ignored-validations"), 0);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "get-ignored-validations"), 0);
                apply_aci(&f, &run);
                ASSERT_CONDITION(f.o.aci, "SpecSynced", "True", "SyncOK", NULL);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

/* ---- custom manifests (§1.4) ---- */

TEST(manifests_from_config_maps)
{
        Fixture f;
        HubTestRun run;
        char dg[80];

        fixture(&f, cd(NULL, NULL),
                aci(NULL, ",\"manifestsConfigMapRefs\":[{\"name\":\"m1\"},{\"name\":\"m2\"}]"));
        linked(&f, service_cluster("insufficient", NULL));
        ASSERT_OK(hub_digest(PS_TEXT, dg));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        f.o.config_maps = calloc(3, sizeof(HubRef));
        f.o.config_maps[0].object =
                hubtest_json("{\"metadata\":{\"name\":\"m1\",\"namespace\":\"spoke-cluster\"},"
                             "\"data\":{\"a.yaml\":\"kind: A\\n\"}}");
        f.o.config_maps[1].object =
                hubtest_json("{\"metadata\":{\"name\":\"m2\",\"namespace\":\"spoke-cluster\"},"
                             "\"data\":{\"b.yaml\":\"kind: B\\n\"}}");
        f.o.n_config_maps = 2;
        f.o.manifests_read = true;
        f.o.manifests.status = 200;
        f.o.manifests.body = hubtest_json("[{\"file_name\":\"old.yaml\",\"folder\":\"openshift\"}]");
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "delete-manifest:*", 200, NULL, NULL },
                                             { "create-manifest:*", 201, NULL, NULL },
                                             { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "delete-manifest:old.yaml"), 1);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "create-manifest:"), 2);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/clusters/" CID "/manifests?folder=openshift&file_name=old.yaml");
        ASSERT_STREQ(json_get_string(hubtest_write(&run, HUB_WRITE_SERVICE, 1)->body, "content"),
                     "a2luZDogQQo=");
        /* the ConfigMaps get the watch labels, the digest is recorded */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_PATCH, NULL), 3);
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_MANIFESTS_DIGEST));
        hubtest_run_done(&run);
        /* the service has them: nothing to send */
        json_object_put(f.o.manifests.body);
        f.o.manifests.body = hubtest_json("[{\"file_name\":\"a.yaml\",\"folder\":\"openshift\"},"
                                          "{\"file_name\":\"b.yaml\",\"folder\":\"openshift\"}]");
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        /* one name twice: the error upstream gives, again in a minute */
        json_object_object_add(json_get(f.o.config_maps[1].object, "data"), "a.yaml",
                               json_object_new_string("x"));
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        apply_aci(&f, &run);
        ASSERT_CONDITION(
                f.o.aci, "SpecSynced", "False", "BackendError",
                "The Spec could not be synced due to backend error: Conflict in manifest names ('a.yaml' is "
                "not unique)");
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_LONGER_ON_ERROR);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- credentials (§1.6), day-2 ---- */

static const json_object *secret_created(const HubTestRun *run, const char *name)
{
        for (size_t i = 0; i < run->writes.n; i++) {
                const HubWrite *w = &run->writes.writes[i];

                if (w->kind == HUB_WRITE_CREATE && w->target == HUB_KIND_SECRET &&
                    streq_ptr(hubtest_str(w->body, "metadata.name"), name))
                        return w->body;
        }
        return NULL;
}

TEST(kubeconfig_without_ingress_while_installing)
{
        Fixture f;
        HubTestRun run;
        json_object *s;
        char dg[80];

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        linked(&f, service_cluster("installing",
                                   ",\"openshift_cluster_id\":\"9a1f0c3b-0000-4b6e-9c7f-1a2b3c4d5e6f\""));
        ASSERT_OK(hub_digest(PS_TEXT, dg));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){ { "kubeconfig-noingress", 200, "apiVersion: v1\nkind: Config\n", NULL },
                                   { NULL } },
                &run);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/clusters/" CID "/downloads/credentials?file_name=kubeconfig-noingress");
        s = (json_object *)secret_created(&run, "single-node-admin-kubeconfig");
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(hub_object_label(s, HUB_LABEL_CD_NAME), "single-node");
        ASSERT_STREQ(hub_object_label(s, HUB_LABEL_SECRET_TYPE), "kubeconfig");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get_path(s, "metadata.ownerReferences"), 0),
                                 "kind"),
                     "ClusterDeployment");
        ASSERT_STREQ(hubtest_str(s, "data.kubeconfig"), "YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==");
        apply_aci(&f, &run);
        ASSERT_STREQ(hubtest_str(f.o.aci, "spec.clusterMetadata.infraID"), CID);
        ASSERT_STREQ(hubtest_str(f.o.aci, "spec.clusterMetadata.clusterID"),
                     "9a1f0c3b-0000-4b6e-9c7f-1a2b3c4d5e6f");
        ASSERT_STREQ(hubtest_str(f.o.aci, "spec.clusterMetadata.adminKubeconfigSecretRef.name"),
                     "single-node-admin-kubeconfig");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(installed_the_secrets_then_day2)
{
        Fixture f;
        HubTestRun run;
        json_object *s;
        char dg[80];

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        linked(&f, service_cluster("installed",
                                   ",\"openshift_cluster_id\":\"9a1f0c3b-0000-4b6e-9c7f-1a2b3c4d5e6f\""));
        ASSERT_OK(hub_digest(PS_TEXT, dg));
        ASSERT_OK(hub_object_set_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg));
        /* the kubeconfig without ingress is there since the installation */
        f.o.kubeconfig_secret.error = 0;
        f.o.kubeconfig_secret.object = hubtest_json(
                "{\"metadata\":{\"name\":\"single-node-admin-kubeconfig\",\"namespace\":\"spoke-cluster\","
                "\"resourceVersion\":\"3\"},\"data\":{\"kubeconfig\":\"b2xk\"}}");
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "credentials", 200,
                                               "{\"username\":\"kubeadmin\",\"password\":\"p4ss-w0rd\","
                                               "\"console_url\":\"https://console\"}",
                                               NULL },
                                             { "kubeconfig", 200, "full", NULL },
                                             { NULL } },
                          &run);
        s = (json_object *)secret_created(&run, "single-node-admin-password");
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(hub_object_label(s, HUB_LABEL_SECRET_TYPE), "kubeadmincreds");
        ASSERT_STREQ(hubtest_str(s, "data.username"), "a3ViZWFkbWlu");
        ASSERT_STREQ(hubtest_str(s, "data.password"), "cDRzcy13MHJk");
        /* the kubeconfig Secret gets the full kubeconfig */
        {
                bool patched = false;

                for (size_t i = 0; i < run.writes.n; i++) {
                        _cleanup_free_ char *t = json_to_string(run.writes.writes[i].body, 0);

                        if (run.writes.writes[i].target == HUB_KIND_SECRET &&
                            run.writes.writes[i].kind == HUB_WRITE_PATCH && t && strstr(t, "ZnVsbA=="))
                                patched = true;
                }
                ASSERT_TRUE(patched);
        }
        /* upstream's order: clusterMetadata, then the status saying
         * Completed, both locked on what was observed */
        {
                ssize_t spec = -1, status = -1;

                for (size_t i = 0; i < run.writes.n; i++)
                        if (run.writes.writes[i].target == HUB_KIND_AGENTCLUSTERINSTALL) {
                                const HubWrite *w = &run.writes.writes[i];

                                ASSERT_STREQ(w->resource_version, kube_object_resource_version(f.o.aci));
                                if (w->kind == HUB_WRITE_PATCH_STATUS)
                                        status = (ssize_t)i;
                                else
                                        spec = (ssize_t)i;
                        }
                ASSERT_TRUE(spec >= 0 && status > spec);
        }
        apply_aci(&f, &run);
        ASSERT_STREQ(hubtest_str(f.o.aci, "spec.clusterMetadata.adminPasswordSecretRef.name"),
                     "single-node-admin-password");
        ASSERT_CONDITION(f.o.aci, "Completed", "True", "InstallationCompleted",
                         "The installation has completed: info of installed");
        hubtest_run_done(&run);
        /* the next reconcile: installed in the ACI's terms, a day-2 cluster now */
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){ { "transform-day2", 202,
                                     "{\"id\":\"" CID "\",\"kind\":\"AddHostsCluster\",\"status\":"
                                     "\"adding-hosts\",\"status_info\":\"cluster is adding hosts\"}",
                                     NULL },
                                   { NULL } },
                &run);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/clusters/" CID "/actions/allow-add-workers");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(day2_installs_known_approved_hosts)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        linked(&f, service_cluster("adding-hosts", NULL));
        json_object_object_add(f.o.cluster.body, "kind", json_object_new_string("AddHostsCluster"));
        with_hosts(&f, hosts(0, 3, "known"));
        add_agents(&f, 3, 2, 0);
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "install-host:*", 202, NULL, NULL }, { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "install-host:"), 2);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/infra-envs/ie-1/hosts/h0/actions/install");
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- deletion (§1.5) ---- */

TEST(aci_deletion_cancels_unbinds_deregisters)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, cd(NULL, NULL), aci(",\"deletionTimestamp\":\"2026-09-21T14:00:00Z\"", NULL));
        linked(&f, service_cluster("installing", NULL));
        add_agents(&f, 2, 2, 0);
        /* h0's InfraEnv names this ClusterDeployment (deleted), h1's none (unbound) */
        f.o.agent_infraenvs[0] =
                hubtest_json("{\"metadata\":{\"name\":\"ie\",\"namespace\":\"spoke-cluster\"},"
                             "\"spec\":{\"clusterRef\":{\"name\":\"single-node\","
                             "\"namespace\":\"spoke-cluster\"}}}");
        f.o.agent_infraenvs[1] =
                hubtest_json("{\"metadata\":{\"name\":\"late\",\"namespace\":\"spoke-cluster\"},"
                             "\"spec\":{}}");
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "cancel-installation", 202, NULL, NULL },
                                             { "deregister-cluster", 204, NULL, NULL },
                                             { NULL } },
                          &run);
        ASSERT_STREQ(run.writes.writes[0].tag, "cancel-installation");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_DELETE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_DELETE, 0)->name, "h0");
        {
                _cleanup_free_ char *t = json_to_string(hubtest_write(&run, HUB_WRITE_PATCH, 0)->body, 0);

                ASSERT_STREQ(t, "{\"spec\":{\"clusterDeploymentName\":null}}");
        }
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "deregister-cluster"), 1);
        apply_aci(&f, &run);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.aci, HUB_FINALIZER_ACI));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(cd_deletion_waits_for_the_aci)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, cd(",\"deletionTimestamp\":\"2026-09-21T14:00:00Z\"", NULL), aci(NULL, NULL));
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_DELETE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_DELETE, 0)->uid, "aci-uid");
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_ON_ERROR);
        ASSERT_STREQ(run.reason, "could not confirm clusterInstall test-agent-cluster-install deletion was "
                                 "successfuly completed");
        hubtest_run_done(&run);
        /* the ACI gone: the ClusterDeployment's finalizer goes */
        json_object_put(f.o.aci);
        f.o.aci = NULL;
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CD));
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- the AgentClusterInstall without its ClusterDeployment ---- */

TEST(aci_without_cluster_deployment)
{
        AciObserved o = { .base = { .now = NOW,
                                    .ns = strdup("spoke-cluster"),
                                    .name = strdup("test-agent-cluster-install") },
                          .cd_error = -ENOENT };
        HubTestRun run;

        o.base.object = aci(NULL, NULL);
        hubtest_reconcile(aci_decide, &o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 1);
        hubtest_merge_apply(o.base.object, run.writes.writes[0].body);
        ASSERT_CONDITION(
                o.base.object, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: ClusterDeployment with name "
                "'single-node' in namespace 'spoke-cluster' not found. Ensure that the CRD is already "
                "applied.");
        ASSERT_CONDITION(o.base.object, "Validated", "Unknown", "NotAvailable", "Information not available");
        ASSERT_CONDITION(o.base.object, "RequirementsMet", "Unknown", "NotAvailable",
                         "Information not available");
        ASSERT_CONDITION(o.base.object, "Completed", "Unknown", "NotAvailable", "Information not available");
        ASSERT_CONDITION(o.base.object, "Failed", "Unknown", "NotAvailable", "Information not available");
        ASSERT_CONDITION(o.base.object, "Stopped", "Unknown", "NotAvailable", "Information not available");
        hubtest_run_done(&run);
        /* the ClusterDeployment exists: the other controller's */
        o.cd = cd(NULL, NULL);
        hubtest_reconcile(aci_decide, &o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        hubtest_run_done(&run);
        json_object_put(o.cd);
        hub_observed_done(&o.base);
}

/* ---- which service (issue 23, finding 1): the body for its API ---- */

#define REFUSED_COUNT \
        "parsing newClusterParams body from \"\" failed, because json: unknown field " \
        "\"control_plane_count\""
#define REFUSED_API_VIP \
        "parsing newClusterParams body from \"\" failed, because json: unknown field \"api_vip\""

static void spec_set(Fixture *f, const char *key, const char *json)
{
        json_object_object_add(json_get(f->o.aci, "spec"), key, hubtest_json(json));
}

/* the registration body an ACI gets from a service of an API */
static const struct {
        const char *name;
        HubServiceApi api;
        const char *requirements; /* spec.provisionRequirements */
        const char *load_balancer; /* spec.loadBalancer.type, or NULL */
        long count; /* control_plane_count sent, -1: none */
        const char *mode; /* high_availability_mode sent, or NULL */
        bool singular_vips; /* api_vip beside api_vips */
        bool load_balancer_sent;
        const char *error; /* the input error instead of a body */
} api_cases[] = {
        { "unknown, three", HUB_SERVICE_API_UNKNOWN, "{\"controlPlaneAgents\":3}", NULL, 3, NULL, true,
          false, NULL },
        { "unknown, five", HUB_SERVICE_API_UNKNOWN, "{\"controlPlaneAgents\":5,\"workerAgents\":2}", NULL, 5,
          NULL, true, false, NULL },
        { "late 2023, three", HUB_SERVICE_API_2023, "{\"controlPlaneAgents\":3,\"workerAgents\":2}", NULL,
          -1, "Full", true, false, NULL },
        { "late 2023, single node", HUB_SERVICE_API_2023, "{\"controlPlaneAgents\":1}", NULL, -1, "None",
          true, false, NULL },
        { "late 2023, cluster-managed load balancer", HUB_SERVICE_API_2023, "{\"controlPlaneAgents\":3}",
          "ClusterManaged", -1, "Full", true, false, NULL },
        { "late 2023, five", HUB_SERVICE_API_2023, "{\"controlPlaneAgents\":5}", NULL, -1, NULL, false,
          false,
          "this assisted-service does not know control_plane_count (its cluster API is the late-2023 "
          "one: high_availability_mode Full for three control-plane nodes, None for a single node "
          "without workers): spec.provisionRequirements.controlPlaneAgents 5 with 0 workerAgents cannot "
          "be installed "
          "by it" },
        { "late 2023, four", HUB_SERVICE_API_2023, "{\"controlPlaneAgents\":4}", NULL, -1, NULL, false,
          false, "this assisted-service does not know control_plane_count *" },
        { "late 2023, one with workers", HUB_SERVICE_API_2023,
          "{\"controlPlaneAgents\":1,\"workerAgents\":2}", NULL, -1, NULL, false, false,
          "this assisted-service does not know control_plane_count (its cluster API is the late-2023 "
          "one: high_availability_mode Full for three control-plane nodes, None for a single node "
          "without workers): spec.provisionRequirements.controlPlaneAgents 1 with 2 workerAgents cannot "
          "be installed "
          "by it" },
        { "late 2023, user-managed load balancer", HUB_SERVICE_API_2023, "{\"controlPlaneAgents\":3}",
          "UserManaged", -1, NULL, false, false,
          "this assisted-service does not know load_balancer (its cluster API is the late-2023 one): "
          "spec.loadBalancer.type UserManaged cannot be installed by it" },
        { "current, five", HUB_SERVICE_API_CURRENT, "{\"controlPlaneAgents\":5}", "UserManaged", 5, NULL,
          false, true, NULL },
        { "current, single node", HUB_SERVICE_API_CURRENT, "{\"controlPlaneAgents\":1}", NULL, 1, "None",
          false, false, NULL },
};

TEST(registration_body_for_the_service_found)
{
        for (size_t i = 0; i < ELEMENTSOF(api_cases); i++) {
                Fixture f;
                _cleanup_(json_object_putp) json_object *body = NULL;
                _cleanup_free_ char *err = NULL, *lb = NULL;
                ClusterInputs in = { .pull_secret = PS_TEXT,
                                     .version = "4.13.18",
                                     .arch = "x86_64",
                                     .api = api_cases[i].api };
                int64_t count = -1;
                bool single;

                fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
                spec_set(&f, "provisionRequirements", api_cases[i].requirements);
                if (api_cases[i].load_balancer) {
                        lb = strdup_printf("{\"type\":\"%s\"}", api_cases[i].load_balancer);
                        spec_set(&f, "loadBalancer", lb);
                }
                if (streq(api_cases[i].requirements, "{\"controlPlaneAgents\":1}"))
                        /* a single node: user-managed networking, no VIPs */
                        for (const char *const *k = (const char *const[]){ "apiVIP", "apiVIPs", "ingressVIP",
                                                                           "ingressVIPs", NULL };
                             *k; k++)
                                json_object_object_del(json_get(f.o.aci, "spec"), *k);
                ASSERT_OK(cd_create_params(f.o.base.object, f.o.aci, &in, &body, &err));
                if (api_cases[i].error) {
                        const char *e = api_cases[i].error;
                        size_t n = strlen(e);

                        if (!err || (e[n - 1] == '*' ? !strneq(err, e, n - 1) : !streq(err, e)))
                                test_fail(__FILE__, __LINE__, "%s: error \"%s\"", api_cases[i].name,
                                          strna(err));
                        ASSERT_NULL(body);
                        fixture_done(&f);
                        continue;
                }
                if (err || !body)
                        test_fail(__FILE__, __LINE__, "%s: %s", api_cases[i].name, strna(err));
                (void)json_get_int64(body, "control_plane_count", &count);
                single = json_get(body, "api_vip") != NULL;
                if (count != api_cases[i].count ||
                    !streq_ptr(json_get_string(body, "high_availability_mode"), api_cases[i].mode) ||
                    (json_get(body, "api_vips") && single != api_cases[i].singular_vips) ||
                    (json_get(body, "load_balancer") != NULL) != api_cases[i].load_balancer_sent) {
                        _cleanup_free_ char *t = json_to_string(body, 0);

                        test_fail(__FILE__, __LINE__, "%s: %s", api_cases[i].name, t);
                }
                fixture_done(&f);
        }
}

TEST(import_body_is_the_same_for_every_service)
{
        for (HubServiceApi api = 0; api < _HUB_SERVICE_API_MAX; api++) {
                Fixture f;
                HubTestRun run;
                json_object *body;

                fixture(&f, cd(NULL, ",\"installed\":true"), aci(NULL, NULL));
                f.o.api = api;
                body = imported(&f, &run);
                ASSERT_NULL(json_get(body, "control_plane_count"));
                ASSERT_NULL(json_get(body, "high_availability_mode"));
                ASSERT_STREQ(json_get_string(body, "openshift_version"), "4.13.18");
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

/* What a service's answers show of its API (hub_service_api_learn). */
TEST(service_api_learned_from_its_answers)
{
        static const struct {
                HubServiceApi before;
                int error;
                long status;
                const char *body, *message;
                HubServiceApi after;
        } rows[] = {
                /* a refusal names the field the service's models lack */
                { HUB_SERVICE_API_UNKNOWN, -EREMOTEIO, 400, NULL, REFUSED_COUNT, HUB_SERVICE_API_2023 },
                { HUB_SERVICE_API_CURRENT, -EREMOTEIO, 400, NULL, REFUSED_COUNT, HUB_SERVICE_API_2023 },
                { HUB_SERVICE_API_UNKNOWN, -EREMOTEIO, 400, NULL,
                  "parsing clusterUpdateParams body from \"\" failed, because json: unknown field "
                  "\"load_balancer\"",
                  HUB_SERVICE_API_2023 },
                { HUB_SERVICE_API_2023, -EREMOTEIO, 400, NULL, REFUSED_API_VIP, HUB_SERVICE_API_CURRENT },
                { HUB_SERVICE_API_UNKNOWN, -EREMOTEIO, 400, NULL,
                  "parsing newClusterParams body from \"\" failed, because json: unknown field "
                  "\"ingress_vip\"",
                  HUB_SERVICE_API_CURRENT },
                /* a field neither lacks, another error, another status: nothing */
                { HUB_SERVICE_API_2023, -EREMOTEIO, 400, NULL,
                  "parsing newClusterParams body from \"\" failed, because json: unknown field \"bogus\"",
                  HUB_SERVICE_API_2023 },
                { HUB_SERVICE_API_UNKNOWN, -EREMOTEIO, 400, NULL,
                  "request must include apiVIP alongside apiVIPs", HUB_SERVICE_API_UNKNOWN },
                { HUB_SERVICE_API_UNKNOWN, -EREMOTEIO, 500, NULL, REFUSED_COUNT, HUB_SERVICE_API_UNKNOWN },
                /* a cluster with control_plane_count: only the current model has it */
                { HUB_SERVICE_API_2023, 0, 200,
                  "{\"kind\":\"Cluster\",\"id\":\"" CID "\",\"control_plane_count\":3}", NULL,
                  HUB_SERVICE_API_CURRENT },
                { HUB_SERVICE_API_UNKNOWN, 0, 200,
                  "[{\"kind\":\"Cluster\",\"id\":\"a\"},{\"kind\":\"AddHostsCluster\",\"control_plane_"
                  "count\":3}]",
                  NULL, HUB_SERVICE_API_CURRENT },
                /* its absence says nothing (an older service, or a fake) */
                { HUB_SERVICE_API_CURRENT, 0, 200,
                  "{\"kind\":\"Cluster\",\"id\":\"" CID "\",\"high_availability_mode\":\"Full\"}", NULL,
                  HUB_SERVICE_API_CURRENT },
                { HUB_SERVICE_API_UNKNOWN, 0, 200, "{\"control_plane_count\":3}", NULL,
                  HUB_SERVICE_API_UNKNOWN },
        };

        ASSERT_EQ(hub_service_api_learn(HUB_SERVICE_API_2023, NULL), HUB_SERVICE_API_2023);
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                HubCallResult r = { .error = rows[i].error,
                                    .status = rows[i].status,
                                    .body = rows[i].body ? hubtest_json(rows[i].body) : NULL,
                                    .message = (char *)rows[i].message };
                HubServiceApi got = hub_service_api_learn(rows[i].before, &r);

                if (got != rows[i].after)
                        test_fail(__FILE__, __LINE__, "row %zu: %s, expected %s", i,
                                  hub_service_api_to_string(got), hub_service_api_to_string(rows[i].after));
                json_object_put(r.body);
        }
}

/* A refusal that is not about the API's generation stored nothing: the
 * marker goes with it, or the next reconcile would search by name and
 * could adopt a cluster of that name someone else registered. A 5xx may
 * have reached the database: its marker stays. */
TEST(a_refused_registration_leaves_no_marker)
{
        static const struct {
                int status;
                bool marker_stays;
        } cases[] = { { 400, false }, { 403, false }, { 409, true }, { 500, true }, { 0, true } };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const typeof(cases[0]) *c = &cases[i];
                Fixture f;
                HubTestRun run;

                fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
                hubtest_reconcile(cd_decide, &f.o.base,
                                  (HubTestAnswer[]){ VERSIONS_ANSWER,
                                                     { "register-cluster", c->status, NULL,
                                                       c->status ? "cluster name is not valid" : NULL },
                                                     { NULL } },
                                  &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 1);
                ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID));
                ASSERT_EQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING) != NULL,
                          c->marker_stays);
                ASSERT_EQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTRATION_REFUSED) !=
                                  NULL,
                          !c->marker_stays);
                hubtest_run_done(&run);
                if (!c->marker_stays) {
                        /* the reconcile its own write starts registers
                         * nothing: a refusal is tried again after a while */
                        hubtest_reconcile(cd_decide, &f.o.base,
                                          (HubTestAnswer[]){ VERSIONS_ANSWER, { NULL } }, &run);
                        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 0);
                        ASSERT_EQ(run.requeue_after, HUB_CLAIM_REFUSAL_BACKOFF);
                        hubtest_run_done(&run);
                }
                fixture_done(&f);
        }
}

/* The first registration of a late-2023 service: refused for
 * control_plane_count, registered again with high_availability_mode in
 * the same reconcile; SpecSynced True. */
TEST(a_refusal_shows_the_api_and_registers_again)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *again;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ VERSIONS_ANSWER,
                                             { "register-cluster", 400, NULL, REFUSED_COUNT },
                                             { "register-cluster-again", 201,
                                               "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":"
                                               "\"insufficient\",\"openshift_version\":\"4.13.18\","
                                               "\"high_availability_mode\":\"Full\"}",
                                               NULL },
                                             { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 2);
        ASSERT_NOT_NULL(json_get(hubtest_write(&run, HUB_WRITE_SERVICE, 1)->body, "control_plane_count"));
        again = hubtest_write(&run, HUB_WRITE_SERVICE, 2);
        ASSERT_STREQ(again->tag, "register-cluster-again");
        ASSERT_NULL(json_get(again->body, "control_plane_count"));
        ASSERT_STREQ(json_get_string(again->body, "high_availability_mode"), "Full");
        ASSERT_STREQ(json_get_string(again->body, "api_vip"), "1.2.3.8");
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "True", "SyncOK", "SyncOK");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* a current service refuses the singular VIP: again without it */
        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "openshift-versions", 200, VERSIONS_CURRENT, NULL },
                                             { "register-cluster", 400, NULL, REFUSED_API_VIP },
                                             { "register-cluster-again", 201,
                                               "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":"
                                               "\"insufficient\",\"openshift_version\":\"4.13.18\","
                                               "\"control_plane_count\":3}",
                                               NULL },
                                             { NULL } },
                          &run);
        again = hubtest_write(&run, HUB_WRITE_SERVICE, 2);
        ASSERT_STREQ(again->tag, "register-cluster-again");
        ASSERT_NULL(json_get(again->body, "api_vip"));
        ASSERT_NOT_NULL(json_get(again->body, "api_vips"));
        ASSERT_NOT_NULL(json_get(again->body, "control_plane_count"));
        ASSERT_STREQ(json_get_string(again->body, "openshift_version"), "4.13.18");
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "True", "SyncOK", "SyncOK");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* five control-plane agents on a late-2023 service: its refusal, and
         * the input error that says what it cannot do; one call only */
        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        spec_set(&f, "provisionRequirements", "{\"controlPlaneAgents\":5}");
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ VERSIONS_ANSWER,
                                             { "register-cluster", 400, NULL, REFUSED_COUNT },
                                             { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 1);
        apply_aci(&f, &run);
        ASSERT_CONDITION(
                f.o.aci, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: this assisted-service does not "
                "know control_plane_count *");
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* An update: the count to a service that may know it, nothing a late-2023
 * one cannot change; a refusal is learnt in the same reconcile. */
TEST(update_for_the_service_found)
{
        Fixture f;
        HubTestRun run;

        /* a late-2023 cluster registered Full, the ACI now a single node */
        fixture(&f, cd(NULL, NULL), aci(NULL, ",\"provisionRequirements\":{\"controlPlaneAgents\":1}"));
        linked(&f, service_cluster("insufficient", ",\"high_availability_mode\":\"Full\""));
        json_object_object_del(f.o.cluster.body, "control_plane_count");
        json_object_object_add(f.o.cluster.body, "user_managed_networking", json_object_new_boolean(true));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "update-cluster", 400, NULL,
                                               "parsing clusterUpdateParams body from \"\" failed, because "
                                               "json: unknown field \"control_plane_count\"" },
                                             { NULL } },
                          &run);
        /* not known yet: the count tried, refused, and then said */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1);
        ASSERT_NOT_NULL(json_get(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body, "control_plane_count"));
        apply_aci(&f, &run);
        ASSERT_CONDITION(
                f.o.aci, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: the cluster was registered with "
                "high_availability_mode Full and this assisted-service (its cluster API is the "
                "late-2023 one) cannot change it to None: delete and re-create the ClusterDeployment");
        hubtest_run_done(&run);
        /* known: said at once, nothing sent */
        f.o.api = HUB_SERVICE_API_2023;
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* a current service's cluster: the count when it differs */
        fixture(&f, cd(NULL, NULL), aci(NULL, ",\"provisionRequirements\":{\"controlPlaneAgents\":5}"));
        linked(&f, service_cluster("insufficient", NULL));
        {
                json_object *body = update_of(&f, &run);
                int64_t n = 0;

                ASSERT_NOT_NULL(body);
                ASSERT_OK(json_get_int64(body, "control_plane_count", &n));
                ASSERT_EQ(n, 5);
        }
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- which release (issue 23, finding 7) ---- */

TEST(release_the_image_set_asks_for)
{
        static const struct {
                const char *image, *version_label, *arch_label;
                /* the ACI's owner OpenshiftAssistedControlPlane (issue 22) */
                const char *control_plane;
                const char *version, *arch; /* NULL: -EINVAL */
        } rows[] = {
                { RELEASE, NULL, NULL, NULL, "4.13.18", "x86_64" },
                /* pinned by digest or a custom tag: the labels say */
                { "mirror.example.com/ocp/release@sha256:0123", "4.13.5", NULL, NULL, "4.13.5", "x86_64" },
                { "mirror.example.com/ocp/release:disconnected", "4.14.1", "arm64", NULL, "4.14.1",
                  "arm64" },
                { "mirror.example.com/ocp/release@sha256:0123", NULL, NULL, NULL, NULL, NULL },
                /* the labels and the tag agree, or it is an error */
                { RELEASE, "4.13.18", "x86_64", NULL, "4.13.18", "x86_64" },
                { RELEASE, "4.13.5", NULL, NULL, NULL, NULL },
                { RELEASE, "4.13.18", "aarch64", NULL, NULL, NULL },
                { "quay.io/openshift-release-dev/ocp-release:4.14.0-multi", "4.14.0-multi", NULL, NULL,
                  "4.14.0-multi", "multi" },
                /* pinned by digest, no labels: the Cluster API control plane says (CAPOA's
                 * ClusterImageSet, ACM-33187) */
                { "quay.io/openshift-release-dev/ocp-release@sha256:0123", NULL, NULL,
                  "{\"spec\":{\"distributionVersion\":\"4.13.18\"}}", "4.13.18", "x86_64" },
                { "quay.io/openshift-release-dev/ocp-release@sha256:0123", NULL, NULL,
                  "{\"spec\":{\"distributionVersion\":\"4.14.1\",\"openshiftAssistedConfigSpec\":"
                  "{\"cpuArchitecture\":\"arm64\"}}}",
                  "4.14.1", "arm64" },
                { "quay.io/openshift-release-dev/ocp-release@sha256:0123", NULL, NULL, "{\"spec\":{}}", NULL,
                  NULL },
                /* but the ClusterImageSet's own word first */
                { "quay.io/openshift-release-dev/ocp-release@sha256:0123", "4.13.5", NULL,
                  "{\"spec\":{\"distributionVersion\":\"4.13.18\"}}", "4.13.5", "x86_64" },
                { RELEASE, NULL, NULL, "{\"spec\":{\"distributionVersion\":\"4.14.1\"}}", "4.13.18",
                  "x86_64" },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                _cleanup_(json_object_putp) json_object *cis = hubtest_jsonf(
                        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"releaseImage\":\"%s\"}}", rows[i].image);
                _cleanup_(json_object_putp) json_object *cp =
                        rows[i].control_plane ? hubtest_json(rows[i].control_plane) : NULL;
                _cleanup_free_ char *v = NULL, *a = NULL, *why = NULL;
                int r;

                if (rows[i].version_label)
                        ASSERT_OK(hub_object_set_label(cis, HUB_LABEL_CIS_OPENSHIFT_VERSION,
                                                       rows[i].version_label));
                if (rows[i].arch_label)
                        ASSERT_OK(hub_object_set_label(cis, HUB_LABEL_CIS_ARCHITECTURE, rows[i].arch_label));
                r = cd_release_asked(cis, cp, &v, &a, &why);
                if (!rows[i].version) {
                        if (r != -EINVAL || !why)
                                test_fail(__FILE__, __LINE__, "row %zu: %d %s", i, r, strna(v));
                        continue;
                }
                if (r < 0 || !streq_ptr(v, rows[i].version) || !streq_ptr(a, rows[i].arch))
                        test_fail(__FILE__, __LINE__, "row %zu: %d %s %s %s", i, r, strna(v), strna(a),
                                  strna(why));
        }
}

/* Issue 22, Build §1: the Cluster API provider CAPOA makes the
 * ClusterImageSet pinned by digest, without labels (ACM-33187), and owns
 * the ACI by its OpenshiftAssistedControlPlane, whose
 * spec.distributionVersion is the release it resolved */
#define CAPOA_ACI_OWNER \
        "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"hive.openshift.io/v1\",\"kind\":" \
        "\"ClusterDeployment\",\"name\":\"single-node\",\"uid\":\"u1\"},{\"apiVersion\":" \
        "\"controlplane.cluster.x-k8s.io/v1alpha3\",\"kind\":\"OpenshiftAssistedControlPlane\",\"name\":" \
        "\"single-node\",\"uid\":\"u2\"}]}}"

TEST(the_cluster_api_control_plane_owner)
{
        const char *api = NULL, *name = NULL;
        _cleanup_(json_object_putp)
                json_object *owned = hubtest_json(CAPOA_ACI_OWNER),
                            *other = hubtest_json("{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":"
                                                  "\"example.com/v1\",\"kind\":"
                                                  "\"OpenshiftAssistedControlPlane\",\"name\":\"x\"}]}}");

        /* the owner CAPOA sets, not another group's kind of that name */
        ASSERT_TRUE(cd_control_plane_owner(owned, &api, &name));
        ASSERT_STREQ(api, "controlplane.cluster.x-k8s.io/v1alpha3");
        ASSERT_STREQ(name, "single-node");
        ASSERT_FALSE(cd_control_plane_owner(other, &api, &name));
}

/* and the cluster registers with it, where it was an InputError */
TEST(registers_the_release_of_a_cluster_api_control_plane)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *reg;
        _cleanup_(json_object_putp) json_object *owner = hubtest_json(CAPOA_ACI_OWNER);

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        release_by_digest(&f);
        /* beside the ClusterDeployment's */
        ASSERT_OK(json_append(json_get_path(f.o.aci, "metadata.ownerReferences"),
                              json_object_get(json_object_array_get_idx(
                                      json_get_path(owner, "metadata.ownerReferences"), 1))));
        f.o.control_plane.object = hubtest_json(
                "{\"apiVersion\":\"controlplane.cluster.x-k8s.io/v1alpha3\",\"kind\":"
                "\"OpenshiftAssistedControlPlane\",\"metadata\":{\"name\":\"single-node\",\"namespace\":"
                "\"spoke-cluster\"},\"spec\":{\"distributionVersion\":\"4.13.18\",\"replicas\":1}}");
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ VERSIONS_ANSWER, REGISTERED_ANSWER, { NULL } }, &run);
        reg = hubtest_write(&run, HUB_WRITE_SERVICE, 1);
        ASSERT_NOT_NULL(reg);
        ASSERT_STREQ(reg->tag, "register-cluster");
        ASSERT_STREQ(json_get_string(reg->body, "openshift_version"), "4.13");
        ASSERT_STREQ(json_get_string(reg->body, "cpu_architecture"), "x86_64");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(release_the_service_offers)
{
        static const char multi[] =
                "{\"4.14.0-multi\":{\"cpu_architectures\":[\"x86_64\",\"arm64\"],\"display_name\":"
                "\"4.14.0-multi\",\"support_level\":\"production\"},\"4.14.0\":{\"cpu_architectures\":"
                "[\"x86_64\"],\"display_name\":\"4.14.0\",\"support_level\":\"production\"}}";
        static const struct {
                const char *versions, *version, *arch;
                const char *key; /* NULL: not offered */
                const char *offered;
        } rows[] = {
                /* late 2023: keyed by openshift_version */
                { VERSIONS_2023, "4.13.18", "x86_64", "4.13", NULL },
                { VERSIONS_2023, "4.14.0-rc.7", "x86_64", "4.14", NULL },
                /* an unlisted z-stream: the service would take another */
                { VERSIONS_2023, "4.13.5", "x86_64", NULL, "4.13.18" },
                { VERSIONS_2023, "4.12.3", "x86_64", NULL, "4.13.18, 4.14.0-rc.7" },
                { VERSIONS_2023, "4.13.18", "arm64", NULL, "none" },
                /* current: keyed by the release */
                { VERSIONS_CURRENT, "4.13.18", "x86_64", "4.13.18", NULL },
                { VERSIONS_CURRENT, "4.13.5", "x86_64", NULL, "4.13.18" },
                /* multi-architecture releases */
                { multi, "4.14.0", "multi", "4.14.0-multi", NULL },
                /* one architecture asked: its own release before the multi one */
                { multi, "4.14.0", "x86_64", "4.14.0", NULL },
                { multi, "4.14.0", "aarch64", "4.14.0-multi", NULL },
                { "{}", "4.13.18", "x86_64", NULL, "none" },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                _cleanup_(json_object_putp) json_object *versions = hubtest_json(rows[i].versions);
                _cleanup_free_ char *key = NULL, *offered = NULL;
                int r = cd_release_offered(versions, rows[i].version, rows[i].arch, &key, &offered);

                if (r < 0 || (r == 1) != !!rows[i].key || !streq_ptr(key, rows[i].key) ||
                    !streq_ptr(offered, rows[i].offered))
                        test_fail(__FILE__, __LINE__, "row %zu: %d %s %s", i, r, strna(key), strna(offered));
        }
}

static void image_set_release(Fixture *f, const char *image)
{
        json_object_object_add(json_get(f->o.image_set.object, "spec"), "releaseImage",
                               json_object_new_string(image));
}

/* A ClusterImageSet pinning a z-stream the service does not list: not
 * registered (a late-2023 service would have installed its 4.13.18), the
 * condition names both releases, and it looks again later. */
TEST(an_unoffered_release_is_never_registered)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        image_set_release(&f, "quay.io/openshift-release-dev/ocp-release:4.13.5-x86_64");
        hubtest_reconcile(cd_decide, &f.o.base, (HubTestAnswer[]){ VERSIONS_ANSWER, { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 0);
        /* no marker either: nothing is on its way */
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        apply_aci(&f, &run);
        ASSERT_CONDITION(
                f.o.aci, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: ClusterImageSet openshift-v4.13.0 "
                "asks for release 4.13.5 (x86_64), which assisted-service does not offer (it offers "
                "4.13.18): cradle-hub does not install another release; add 4.13.5 to the service's "
                "release images, or name an offered release in the ClusterImageSet");
        ASSERT_TRUE(run.requeue_after >= HUB_REQUEUE_LONGER_ON_ERROR);
        hubtest_run_done(&run);
        /* the service cannot be asked: a backend error, soon again */
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){ { "openshift-versions", 503, NULL, "service unavailable" }, { NULL } },
                &run);
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "False", "BackendError",
                         "The Spec could not be synced due to backend error: cannot list the releases "
                         "assisted-service offers: service unavailable");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* A release pinned by digest, its version in the ClusterImageSet's labels:
 * registered as the service names that release. */
TEST(a_digest_release_registers_by_its_labels)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        image_set_release(&f, "mirror.example.com/ocp/release@sha256:"
                              "5e0e8f23e4b1f2e1c2d0b9a8f7e6d5c4b3a29180716253443526170819fedcba");
        ASSERT_OK(hub_object_set_label(f.o.image_set.object, HUB_LABEL_CIS_OPENSHIFT_VERSION, "4.13.18"));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "openshift-versions", 200, VERSIONS_CURRENT, NULL },
                                             { "register-cluster", 201,
                                               "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":"
                                               "\"insufficient\",\"openshift_version\":\"4.13.18\"}",
                                               NULL },
                                             { NULL } },
                          &run);
        ASSERT_STREQ(json_get_string(hubtest_write(&run, HUB_WRITE_SERVICE, 1)->body, "openshift_version"),
                     "4.13.18");
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "True", "SyncOK", "SyncOK");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* installed elsewhere: imported with no version rather than refused */
        fixture(&f, cd(NULL, ",\"installed\":true"), aci(NULL, NULL));
        image_set_release(&f, "mirror.example.com/ocp/release@sha256:0123");
        ASSERT_NULL(json_get(imported(&f, &run), "openshift_version"));
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* What the service registered is checked against the ClusterImageSet: a
 * cluster with another release is never installed. */
TEST(another_release_is_never_installed)
{
        Fixture f;
        HubTestRun run;
#define PREFIX "The Spec could not be synced due to an input error: assisted-service registered cluster "
        static const char *const msg =
                PREFIX CID " with release 4.13.18, but ClusterImageSet openshift-v4.13.0 asks for 4.13.5: "
                           "cradle-hub does not install another release; name 4.13.18 in the "
                           "ClusterImageSet, or delete and re-create the ClusterDeployment once the "
                           "service offers 4.13.5";
#undef PREFIX

        /* the list offered 4.13.5, the registration took another */
        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        image_set_release(&f, "quay.io/openshift-release-dev/ocp-release:4.13.5-x86_64");
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){
                        { "openshift-versions", 200,
                          "{\"4.13.5\":{\"cpu_architectures\":[\"x86_64\"],\"display_name\":\"4.13.5\"}}",
                          NULL },
                        { "register-cluster", 201,
                          "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":\"insufficient\","
                          "\"openshift_version\":\"4.13.18\"}",
                          NULL },
                        { NULL } },
                &run);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "False", "InputError", msg);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* registered earlier with 4.13.18, ready, every Agent approved: the
         * ClusterImageSet now asks for 4.13.5, nothing is installed */
        fixture(&f, cd(NULL, NULL), aci(NULL, NULL));
        image_set_release(&f, "quay.io/openshift-release-dev/ocp-release:4.13.5-x86_64");
        linked(&f, service_cluster("ready", NULL));
        with_hosts(&f, hosts(3, 0, "known"));
        add_agents(&f, 3, 3, 0);
        hubtest_reconcile(cd_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        apply_aci(&f, &run);
        ASSERT_CONDITION(f.o.aci, "SpecSynced", "False", "InputError", msg);
        hubtest_run_done(&run);
        /* back to the release it has: installed */
        image_set_release(&f, RELEASE);
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "install-cluster", 202,
                                               "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":"
                                               "\"preparing-for-installation\"}",
                                               NULL },
                                             { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "install-cluster"), 1);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(release_versions)
{
        static const struct {
                const char *image, *version, *arch;
        } rows[] = {
                { "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64", "4.13.18", "x86_64" },
                { "quay.io/openshift-release-dev/ocp-release:5.0.0-ec.5-x86_64", "5.0.0-ec.5", "x86_64" },
                { "quay.io/openshift-release-dev/ocp-release:4.14.0-multi", "4.14.0", "multi" },
                { "registry.local:5000/ocp/release:4.12.3", "4.12.3", "x86_64" },
                { "registry.local:5000/ocp/release@sha256:0123", NULL, NULL },
                { "registry.local:5000/ocp/release:latest", NULL, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                _cleanup_free_ char *v = NULL, *a = NULL, *why = NULL;
                int r = cd_release_from_image(rows[i].image, &v, &a, &why);

                if (!rows[i].version) {
                        ASSERT_EQ(r, -EINVAL);
                        ASSERT_NOT_NULL(why);
                        continue;
                }
                ASSERT_OK(r);
                ASSERT_STREQ(v, rows[i].version);
                ASSERT_STREQ(a, rows[i].arch);
        }
}

/* ---- the debug URLs (issue 23, finding 8) ---- */

/* the ACI's eventsURL and logsURL on the service's public base URL, with
 * the api_key of an infra-env of the cluster, taken from the presigned
 * URL of a bound Agent's InfraEnv (the first by name) */
TEST(aci_debug_urls_on_the_public_base_url)
{
        _cleanup_(json_object_putp)
                json_object *a = aci(NULL, NULL),
                            *cl = service_cluster("insufficient", ",\"controller_logs_collected_at\":"
                                                                  "\"2026-09-21T14:03:00Z\""),
                            *installed = service_cluster("installed", NULL);
        json_object *agents[3] = {}, *infraenvs[3] = {};
        ClusterCounts counts = {};

        agents[0] = agent("h2", true, "True");
        agents[1] = agent("h1", true, "True");
        agents[2] = agent("h0", true, "True");
        /* h0's InfraEnv has no URL yet; of h1 and h2, h1 comes first */
        infraenvs[0] = hubtest_json("{\"status\":{\"bootArtifacts\":{\"discoveryIgnitionURL\":"
                                    "\"https://public.example/api/assisted-install/v2/infra-envs/ie-2/"
                                    "downloads/files?api_key=k2&file_name=discovery.ign\"}}}");
        infraenvs[1] = hubtest_json("{\"status\":{\"bootArtifacts\":{\"discoveryIgnitionURL\":"
                                    "\"https://public.example/api/assisted-install/v2/infra-envs/ie-1/"
                                    "downloads/files?api_key=k1&file_name=discovery.ign\"}}}");
        infraenvs[2] = hubtest_json("{\"status\":{}}");
        ASSERT_STREQ(cd_link_source(agents, infraenvs, 3),
                     "https://public.example/api/assisted-install/v2/infra-envs/ie-1/downloads/"
                     "files?api_key=k1&file_name=discovery.ign");
        ASSERT_NULL(cd_link_source(agents + 2, infraenvs + 2, 1));

        ASSERT_OK(cd_aci_status(a, cl, &counts, NULL, false, false, cd_link_source(agents, infraenvs, 3),
                                NOW));
        ASSERT_STREQ(hubtest_str(a, "status.debugInfo.eventsURL"),
                     "https://public.example/api/assisted-install/v2/events?api_key=k1&cluster_id=" CID);
        ASSERT_STREQ(hubtest_str(a, "status.debugInfo.logsURL"),
                     "https://public.example/api/assisted-install/v2/clusters/" CID "/logs?api_key=k1");
        /* another token of the same service later: the links stay */
        ASSERT_OK(cd_aci_status(a, cl, &counts, NULL, false, false,
                                hubtest_str(infraenvs[0], "status.bootArtifacts.discoveryIgnitionURL"),
                                NOW));
        ASSERT_STREQ(hubtest_str(a, "status.debugInfo.eventsURL"),
                     "https://public.example/api/assisted-install/v2/events?api_key=k1&cluster_id=" CID);
        /* a service without auth signs nothing: no api_key, and the links
         * of another base (an older cradle-hub's, on --service-url) replaced */
        ASSERT_OK(json_add_string(json_get_path(a, "status.debugInfo"), "eventsURL",
                                  "http://assisted-service.ns.svc:8090/api/assisted-install/v2/"
                                  "events?cluster_id=" CID));
        ASSERT_OK(cd_aci_status(a, cl, &counts, NULL, false, false,
                                "http://198.51.100.1:8090/api/assisted-install/v2/infra-envs/ie-1/"
                                "downloads/files?file_name=discovery.ign",
                                NOW));
        ASSERT_STREQ(hubtest_str(a, "status.debugInfo.eventsURL"),
                     "http://198.51.100.1:8090/api/assisted-install/v2/events?cluster_id=" CID);
        ASSERT_STREQ(hubtest_str(a, "status.debugInfo.logsURL"),
                     "http://198.51.100.1:8090/api/assisted-install/v2/clusters/" CID "/logs");
        json_object_put(a);
        /* an installed cluster gets none (populateEventsURL) */
        a = aci(NULL, NULL);
        ASSERT_OK(cd_aci_status(a, installed, &counts, NULL, false, false,
                                cd_link_source(agents, infraenvs, 3), NOW));
        ASSERT_NULL(hubtest_str(a, "status.debugInfo.eventsURL"));
        for (size_t i = 0; i < ELEMENTSOF(agents); i++) {
                json_object_put(agents[i]);
                json_object_put(infraenvs[i]);
        }
}

DEFINE_TEST_MAIN
