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
#include "hubtest.h"
#include "jsonutil.h"
#include "strutil.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC)
#define CID "3c5e6d1a-0b7f-4c2e-9a41-0d5f1e2a3b4c"
#define PS_B64 "eyJhdXRocyI6eyJxdWF5LmlvIjp7ImF1dGgiOiJkWE5sY2pwd1lYTnoifX19"
#define PS_TEXT "{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}"
#define RELEASE "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64"

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
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){ { "register-cluster", 201,
                                     "{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"status\":\"insufficient\","
                                     "\"status_info\":\"Cluster is not ready for install\"}",
                                     NULL },
                                   { NULL } },
                &run);
        reg = hubtest_write(&run, HUB_WRITE_SERVICE, 0);
        ASSERT_STREQ(reg->tag, "register-cluster");
        ASSERT_STREQ(reg->path, "/v2/clusters");
        body = reg->body;
        ASSERT_STREQ(json_get_string(body, "name"), "test-cluster");
        ASSERT_STREQ(json_get_string(body, "base_dns_domain"), "hive.example.com");
        ASSERT_STREQ(json_get_string(body, "openshift_version"), "4.13.18");
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
        ASSERT_EQ(run.writes.writes[0].kind, HUB_WRITE_PATCH);
        {
                _cleanup_free_ char *t = json_to_string(run.writes.writes[0].body, 0);

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
        hubtest_reconcile(
                cd_decide, &f.o.base,
                (HubTestAnswer[]){ { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL }, { NULL } },
                &run);
        body = hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body;
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

/* the installed ClusterDeployment imported: the openshift_cluster_id sent */
static void import_with(const char *cd_spec, const char *aci_spec, const char *want_id)
{
        Fixture f;
        HubTestRun run;
        json_object *body;

        fixture(&f, cd(NULL, cd_spec), aci(NULL, aci_spec));
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "import-cluster", 201,
                                               "{\"id\":\"" CID "\",\"kind\":\"AddHostsCluster\","
                                               "\"status\":\"adding-hosts\"}",
                                               NULL },
                                             { NULL } },
                          &run);
        body = hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body;
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
        { "release without version", release_by_digest, "BackendError",
          "The Spec could not be synced due to backend error: failed to get release image "
          "'quay.io/openshift-release-dev/ocp-release@sha256:abc'. Please ensure the releaseImage field in "
          "ClusterImageSet 'openshift-v4.13.0' is valid, *",
          HUB_REQUEUE_ON_ERROR },
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
                                             { "ignored-validations", 201, NULL, NULL },
                                             { NULL } },
                          &run);
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 0);
        ASSERT_STREQ(w->tag, "install-config");
        ASSERT_STREQ(json_object_get_string(w->body),
                     "{\"networking\":{\"networkType\":\"OVNKubernetes\"}}");
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 1);
        ASSERT_STREQ(w->tag, "ignored-validations");
        ASSERT_STREQ(json_get_string(w->body, "cluster-validation-ids"),
                     "[\"api-vips-valid\",\"ingress-vips-valid\"]");
        hubtest_run_done(&run);
        /* the service refuses the overrides */
        hubtest_reconcile(cd_decide, &f.o.base,
                          (HubTestAnswer[]){ { "install-config", 400, NULL, "invalid character 'x'" },
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
