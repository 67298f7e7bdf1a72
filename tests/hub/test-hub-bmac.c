/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BMAC's decide (notes §6), and the PreprovisioningImage controller's
 * (notes §7), row by row.
 */
#include <json-c/json.h>

#include "bmac.h"
#include "cleanup.h"
#include "hubtest.h"
#include "jsonutil.h"
#include "ppi.h"
#include "strutil.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC) /* 2026-09-21T14:13:20Z */
#define URL "http://img/byid/ie/4.14/x86_64/minimal.iso"

static json_object *bmh(const char *extra_meta, const char *extra_spec, const char *state)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"metal3.io/v1alpha1\",\"kind\":\"BareMetalHost\",\"metadata\":{"
                "\"name\":\"worker-0\",\"namespace\":\"demo\",\"resourceVersion\":\"4\",\"uid\":\"b1\"%s},"
                "\"spec\":{\"online\":false,\"bootMACAddress\":\"00:EC:EE:F8:5A:BA\"%s},"
                "\"status\":{\"provisioning\":{\"state\":\"%s\",\"ID\":\"x\"}}}",
                extra_meta ? extra_meta
                           : ",\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"}",
                extra_spec ? extra_spec : "", state ? state : "ready");
}

static json_object *infraenv(const char *created, const char *extra_spec)
{
        return hubtest_jsonf("{\"metadata\":{\"name\":\"myinfraenv\",\"namespace\":\"demo\",\"uid\":\"i1\","
                             "\"resourceVersion\":\"9\"},\"spec\":{\"cpuArchitecture\":\"x86_64\"%s},"
                             "\"status\":{%s}}",
                             extra_spec ? extra_spec : "", created ? created : "");
}

#define READY_INFRAENV \
        "\"isoDownloadURL\":\"" URL "\",\"createdTime\":\"2026-09-21T14:00:00Z\"," \
        "\"bootArtifacts\":{\"kernel\":\"http://img/kernel\",\"initrd\":\"http://img/initrd\"," \
        "\"rootfs\":\"http://img/rootfs\"},\"conditions\":[{\"type\":\"ImageCreated\",\"status\":\"True\"," \
        "\"reason\":\"InfraEnvAvailable\",\"message\":\"InfraEnv is available: Image has been created\"," \
        "\"lastTransitionTime\":\"2026-09-21T14:00:00Z\"}]"

static json_object *agent(const char *stage)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"agent-install.openshift.io/"
                "v1beta1\",\"kind\":\"Agent\",\"metadata\":{\"name\":\"a1\","
                "\"namespace\":\"demo\",\"resourceVersion\":\"11\",\"uid\":\"a-uid\",\"labels\":{"
                "\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"}},"
                "\"spec\":{\"approved\":false,\"role\":\"\"},\"status\":{%s\"inventory\":{\"hostname\":"
                "\"h0\","
                "\"memory\":{\"physicalBytes\":17179869184},\"cpu\":{\"count\":4,\"architecture\":\"x86_"
                "64\","
                "\"clockMegahertz\":2100,\"flags\":[\"vmx\"],\"modelName\":\"Xeon\"},\"systemVendor\":{"
                "\"manufacturer\":\"Dell\","
                "\"productName\":\"R640\",\"serialNumber\":\"SN1\"},\"interfaces\":[{\"name\":\"eno1\","
                "\"macAddress\":\"00:ec:ee:f8:5a:ba\",\"vendor\":\"0x8086\",\"speedMbps\":10240,\"flags\":[]"
                ","
                "\"ipV4Addresses\":[\"198.51.100.7/24\"],\"ipV6Addresses\":[\"2001:db8::7/64\"]}],"
                "\"disks\":[{\"id\":\"/dev/disk/by-id/a\",\"path\":\"/dev/sda\",\"byPath\":\"/dev/disk/"
                "by-path/pci-a\","
                "\"driveType\":\"HDD\",\"sizeBytes\":128849018880,\"model\":\"QEMU_HARDDISK\",\"serial\":"
                "\"s1\","
                "\"installationEligibility\":{\"eligible\":true,\"notEligibleReasons\":[]}},"
                "{\"id\":\"/dev/disk/by-id/b\",\"path\":\"/dev/"
                "sdb\",\"driveType\":\"SSD\",\"sizeBytes\":500107862016,"
                "\"model\":\"Samsung "
                "SSD\",\"serial\":\"s2\",\"installationEligibility\":{\"eligible\":true,"
                "\"notEligibleReasons\":[]}},"
                "{\"id\":\"/dev/disk/by-id/c\",\"path\":\"/dev/"
                "sdc\",\"driveType\":\"HDD\",\"sizeBytes\":1000,"
                "\"installationEligibility\":{\"eligible\":false,\"notEligibleReasons\":[\"small\"]}}]}}}",
                stage ? stage : "");
}

typedef struct Fixture {
        BmacObserved o;
} Fixture;

static void fixture(Fixture *f, json_object *b, json_object *ie, json_object *a)
{
        *f = (Fixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup("demo");
        f->o.base.name = strdup("worker-0");
        f->o.base.object = b;
        f->o.infraenv = ie;
        f->o.agent = a;
        f->o.cooldown = HUB_IMAGE_COOLDOWN;
}

static void fixture_done(Fixture *f)
{
        bmac_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

static const HubWrite *agent_patch(const HubTestRun *run)
{
        for (size_t i = 0; i < run->writes.n; i++)
                if (run->writes.writes[i].kind == HUB_WRITE_PATCH &&
                    run->writes.writes[i].target == HUB_KIND_AGENT)
                        return &run->writes.writes[i];
        return NULL;
}

TEST(bmh_without_infraenv_label_is_left_alone)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, bmh(",\"finalizers\":[\"bmac.agent-install.openshift.io/deprovision\"]", NULL, NULL),
                NULL, agent(NULL));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 1);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_BMAC));
        ASSERT_NULL(agent_patch(&run));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(legacy_flow_waits_for_the_image)
{
        Fixture f;
        HubTestRun run;
        json_object *b;

        fixture(&f, bmh(NULL, NULL, NULL), infraenv(NULL, NULL), NULL);
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        b = f.o.base.object;
        ASSERT_TRUE(hub_object_has_finalizer(b, HUB_FINALIZER_BMAC));
        ASSERT_STREQ(hub_object_label(b, HUB_LABEL_BACKUP), "true");
        ASSERT_STREQ(hub_object_annotation(b, "inspect.metal3.io"), "disabled");
        ASSERT_STREQ(hubtest_str(b, "spec.automatedCleaningMode"), "disabled");
        ASSERT_NULL(json_get_path(b, "spec.image"));
        ASSERT_EQ(run.writes.n, 1);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(legacy_flow_cool_down)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, bmh(NULL, NULL, NULL),
                infraenv("\"isoDownloadURL\":\"" URL "\",\"createdTime\":\"2026-09-21T14:13:00Z\"", NULL),
                NULL);
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_NULL(json_get_path(f.o.base.object, "spec.image"));
        ASSERT_EQ(run.requeue_after, 40 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(legacy_flow_sets_the_image_when_the_host_is_ready)
{
        static const struct {
                const char *state;
                bool image;
        } cases[] = {
                { "ready", true }, { "available", true }, { "inspecting", false }, { "registering", false }
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                HubTestRun run;

                fixture(&f, bmh(NULL, ",\"image\":{\"url\":\"http://old\"}", cases[i].state),
                        infraenv(READY_INFRAENV, NULL), NULL);
                hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
                if (cases[i].image) {
                        bool online = false;

                        ASSERT_STREQ(hubtest_str(f.o.base.object, "spec.image.url"), URL);
                        ASSERT_STREQ(hubtest_str(f.o.base.object, "spec.image.format"), "live-iso");
                        ASSERT_OK(json_get_bool(json_get(f.o.base.object, "spec"), "online", &online));
                        ASSERT_TRUE(online);
                } else
                        ASSERT_NULL(json_get_path(f.o.base.object, "spec.image"));
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

TEST(matched_agent_approved_and_specced_from_annotations)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *w;
        json_object *spec, *b;
        _cleanup_(json_object_putp) json_object *hd = NULL;

        fixture(&f,
                bmh(",\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                    "\"bmac.agent-install.openshift.io/role\":\"worker\","
                    "\"bmac.agent-install.openshift.io/hostname\":\"worker-0.example.com\","
                    "\"bmac.agent-install.openshift.io/machine-config-pool\":\"infra\","
                    "\"bmac.agent-install.openshift.io/"
                    "installer-args\":\"[\\\"--append-karg\\\",\\\"nameserver=8.8.8.8\\\"]\","
                    "\"bmac.agent-install.openshift.io/"
                    "ignition-config-overrides\":\"{\\\"ignition\\\":{\\\"version\\\":\\\"3.1.0\\\"}}\","
                    "\"bmac.agent-install.openshift.io/cluster-reference\":\"demo/mycluster\","
                    "\"bmac.agent-install.openshift.io.node-label.node-role.kubernetes.io/infra\":\"\","
                    "\"bmac.agent-install.openshift.io.agent-label.location\":\"rack-4\"}",
                    ",\"image\":{\"url\":\"" URL
                    "\",\"format\":\"live-iso\"},\"rootDeviceHints\":{\"rotational\":false}",
                    "provisioned"),
                infraenv(READY_INFRAENV, NULL), agent(NULL));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        w = agent_patch(&run);
        ASSERT_NOT_NULL(w);
        ASSERT_STREQ(w->name, "a1");
        ASSERT_STREQ(w->resource_version, "11"); /* the Agent is written by its own controller too: locked */
        spec = json_get(w->body, "spec");
        {
                bool approved = false;

                ASSERT_OK(json_get_bool(spec, "approved", &approved));
                ASSERT_TRUE(approved);
        }
        ASSERT_STREQ(json_get_string(spec, "role"), "worker");
        ASSERT_STREQ(json_get_string(spec, "hostname"), "worker-0.example.com");
        ASSERT_STREQ(json_get_string(spec, "machineConfigPool"), "infra");
        ASSERT_STREQ(json_get_string(spec, "installerArgs"), "[\"--append-karg\",\"nameserver=8.8.8.8\"]");
        ASSERT_STREQ(json_get_string(spec, "ignitionConfigOverrides"),
                     "{\"ignition\":{\"version\":\"3.1.0\"}}");
        ASSERT_STREQ(json_get_string(spec, "installation_disk_id"), "/dev/disk/by-id/b");
        ASSERT_STREQ(hubtest_str(spec, "clusterDeploymentName.name"), "mycluster");
        ASSERT_STREQ(hubtest_str(spec, "clusterDeploymentName.namespace"), "demo");
        ASSERT_STREQ(json_get_string(json_get(spec, "nodeLabels"), "node-role.kubernetes.io/infra"), "");
        ASSERT_STREQ(json_get_string(json_get_path(w->body, "metadata.labels"), "location"), "rack-4");
        ASSERT_STREQ(json_get_string(json_get_path(w->body, "metadata.labels"), HUB_LABEL_BMH), "worker-0");
        /* one patch of the Agent, one of the BMH */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_PATCH, NULL), 2);
        /* the hardware details from the Agent's inventory */
        b = f.o.base.object;
        ASSERT_NOT_NULL(hub_object_annotation(b, HUB_BMH_HARDWARE_DETAILS));
        hd = hubtest_json(hub_object_annotation(b, HUB_BMH_HARDWARE_DETAILS));
        ASSERT_EQ(json_object_array_length(json_get(hd, "nics")), 2);
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(hd, "nics"), 0), "ip"), "198.51.100.7");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(hd, "nics"), 1), "ip"), "2001:db8::7");
        {
                int64_t v = 0;

                ASSERT_OK(
                        json_get_int64(json_object_array_get_idx(json_get(hd, "nics"), 0), "speedGbps", &v));
                ASSERT_EQ(v, 10);
                ASSERT_OK(json_get_int64(hd, "ramMebibytes", &v));
                ASSERT_EQ(v, 16384);
        }
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get(hd, "storage"), 0), "name"),
                     "/dev/disk/by-path/pci-a");
        ASSERT_STREQ(hubtest_str(hd, "hostname"), "worker-0.example.com"); /* spec.hostname first */
        ASSERT_STREQ(hubtest_str(hd, "systemVendor.manufacturer"), "Dell");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(second_pass_writes_nothing)
{
        Fixture f;
        HubTestRun run;
        json_object *a = agent(NULL);

        fixture(&f,
                bmh(",\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                    "\"bmac.agent-install.openshift.io/role\":\"master\"}",
                    NULL, "ready"),
                infraenv(READY_INFRAENV, NULL), a);
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_NOT_NULL(agent_patch(&run));
        /* what the server now has */
        hubtest_merge_apply(f.o.agent, agent_patch(&run)->body);
        hubtest_run_done(&run);
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(malformed_annotations_named_and_skipped)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *w;

        fixture(&f,
                bmh(",\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                    "\"bmac.agent-install.openshift.io/installer-args\":\"--append-karg foo\","
                    "\"bmac.agent-install.openshift.io/ignition-config-overrides\":\"{not json\","
                    "\"bmac.agent-install.openshift.io/cluster-reference\":\"no-slash\"}",
                    NULL, "ready"),
                infraenv(READY_INFRAENV, NULL), agent(NULL));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        w = agent_patch(&run);
        ASSERT_NOT_NULL(w);
        ASSERT_NULL(json_get_path(w->body, "spec.installerArgs"));
        ASSERT_NULL(json_get_path(w->body, "spec.ignitionConfigOverrides"));
        ASSERT_NULL(json_get_path(w->body, "spec.clusterDeploymentName"));
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_EVENT, NULL), 3);
        ASSERT_CONTAINS(
                hubtest_write(&run, HUB_WRITE_EVENT, 0)->message,
                "BareMetalHost demo/worker-0: annotation bmac.agent-install.openshift.io/installer-args");
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_EVENT, 2)->message,
                     "failed to reconcile cluster reference.  Parse of cluster reference no-slash failed");
        ASSERT_FALSE(run.requeue);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(cluster_reference_with_a_bound_infraenv)
{
        Fixture f;
        HubTestRun run;

        fixture(&f,
                bmh(",\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                    "\"bmac.agent-install.openshift.io/cluster-reference\":\"demo/other\"}",
                    NULL, "ready"),
                infraenv(READY_INFRAENV, ",\"clusterRef\":{\"name\":\"c\",\"namespace\":\"demo\"}"),
                agent(NULL));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_STREQ(
                hubtest_write(&run, HUB_WRITE_EVENT, 0)->message,
                "failed to reconcile cluster reference.  InfraEnv already has cluster reference demo/c");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(agent_without_inventory_yet)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, bmh(NULL, ",\"image\":{\"url\":\"" URL "\"}", "ready"), infraenv(READY_INFRAENV, NULL),
                hubtest_json(
                        "{\"metadata\":{\"name\":\"a1\",\"namespace\":\"demo\",\"resourceVersion\":\"1\"},"
                        "\"spec\":{\"approved\":false,\"role\":\"\"}}"));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_NOT_NULL(agent_patch(&run));
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_BMH_HARDWARE_DETAILS));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(root_device_hints)
{
        _cleanup_(json_object_putp) json_object *a = agent(NULL);
        json_object *inv = json_get_path(a, "status.inventory");
        static const struct {
                const char *hints;
                const char *id;
        } cases[] = {
                { "{}", NULL },
                { "{\"deviceName\":\"/dev/sda\"}", "/dev/disk/by-id/a" },
                { "{\"deviceName\":\"/dev/disk/by-path/pci-a\"}", "/dev/disk/by-id/a" },
                { "{\"model\":\"Samsung\"}", "/dev/disk/by-id/b" },
                { "{\"minSizeGigabytes\":200}", "/dev/disk/by-id/b" },
                { "{\"rotational\":true}", "/dev/disk/by-id/a" },
                { "{\"serialNumber\":\"s2\"}", "/dev/disk/by-id/b" },
                /* the ineligible disk is never chosen */
                { "{\"deviceName\":\"/dev/sdc\"}", "/dev/not-found-by-hints" },
                { "{\"wwn\":\"nope\"}", "/dev/not-found-by-hints" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *h = hubtest_json(cases[i].hints);
                _cleanup_free_ char *id = bmac_disk_by_hints(h, inv);

                if (!cases[i].id)
                        ASSERT_NULL(id);
                else
                        ASSERT_STREQ(id, cases[i].id);
        }
}

TEST(detached_by_stage_or_provisioned)
{
        static const struct {
                bool converged;
                const char *stage;
                const char *state;
                const char *detached;
        } cases[] = {
                { false, "\"progress\":{\"currentStage\":\"Rebooting\"},", "provisioned",
                  "assisted-service-controller" },
                { false, "\"progress\":{\"currentStage\":\"Done\"},", "provisioned",
                  "assisted-service-controller" },
                { false, "\"progress\":{\"currentStage\":\"Writing image to disk\"},", "provisioned", NULL },
                { true, NULL, "provisioned", "assisted-service-controller" },
                { true, NULL, "provisioning", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                HubTestRun run;

                fixture(&f, bmh(NULL, ",\"image\":{\"url\":\"" URL "\"}", cases[i].state),
                        infraenv(READY_INFRAENV, NULL), agent(cases[i].stage));
                f.o.converged = cases[i].converged;
                hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
                if (cases[i].detached) {
                        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_BMH_DETACHED),
                                     cases[i].detached);
                        ASSERT_NULL(agent_patch(&run)); /* detaching stops the reconcile */
                } else
                        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_BMH_DETACHED));
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

TEST(converged_flow_waits_for_the_preprovisioning_image)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, bmh(NULL, NULL, "available"), infraenv(READY_INFRAENV, NULL), agent(NULL));
        f.o.converged = true;
        f.o.ppi = hubtest_json("{\"status\":{\"conditions\":[{\"type\":\"ImageReady\",\"status\":\"False\","
                               "\"reason\":\"WaitingForInfraEnvImageToCoolDown\"}]}}");
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_NULL(json_get_path(f.o.base.object, "spec.customDeploy"));
        ASSERT_NULL(hub_object_annotation(f.o.base.object, "inspect.metal3.io"));
        ASSERT_NULL(agent_patch(&run));
        hubtest_run_done(&run);

        json_object_put(f.o.ppi);
        f.o.ppi = hubtest_json("{\"status\":{\"conditions\":[{\"type\":\"ImageReady\",\"status\":\"True\","
                               "\"reason\":\"InfraEnvAvailable\"}]}}");
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "spec.customDeploy.method"), "start_assisted_install");
        ASSERT_NOT_NULL(agent_patch(&run));
        /* converged: no hardware details, BMO inspects */
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_BMH_HARDWARE_DETAILS));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(deletion)
{
        Fixture f;
        HubTestRun run;

        fixture(&f,
                bmh(",\"deletionTimestamp\":\"2026-09-21T14:00:00Z\",\"finalizers\":[\"bmac.agent-install."
                    "openshift.io/deprovision\"],"
                    "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                    "\"baremetalhost.metal3.io/paused\":\"assisted-service-controller\"}",
                    NULL, NULL),
                infraenv(READY_INFRAENV, NULL), agent(NULL));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_BMAC));
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_BMH_PAUSED));
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_DELETE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* with remove-agent-and-node-on-delete the Agent goes too */
        fixture(&f,
                bmh(",\"deletionTimestamp\":\"2026-09-21T14:00:00Z\",\"finalizers\":[\"bmac.agent-install."
                    "openshift.io/deprovision\"],"
                    "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                    "\"bmac.agent-install.openshift.io/remove-agent-and-node-on-delete\":\"true\"}",
                    NULL, NULL),
                infraenv(READY_INFRAENV, NULL), agent(NULL));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_DELETE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_DELETE, 0)->uid, "a-uid");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(unbound_after_install_boots_discovery_again)
{
        Fixture f;
        HubTestRun run;

        fixture(&f,
                bmh(",\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                    "\"baremetalhost.metal3.io/detached\":\"assisted-service-controller\","
                    "\"inspect.metal3.io/hardwaredetails\":\"{}\"}",
                    ",\"image\":{\"url\":\"" URL "\"}", "provisioned"),
                infraenv(READY_INFRAENV, NULL),
                agent("\"conditions\":[{\"type\":\"Bound\",\"status\":\"False\",\"reason\":"
                      "\"UnbindingPendingUserAction\"}],"));
        hubtest_reconcile(bmac_decide, &f.o.base, NULL, &run);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_BMH_DETACHED));
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_BMH_HARDWARE_DETAILS));
        ASSERT_NULL(json_get_path(f.o.base.object, "spec.image"));
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- PreprovisioningImage (notes §7) ---- */

typedef struct PpiFixture {
        PpiObserved o;
} PpiFixture;

static void ppi_fixture(PpiFixture *f, const char *formats, const char *arch, json_object *ie)
{
        *f = (PpiFixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup("demo");
        f->o.base.name = strdup("worker-0");
        f->o.base.object =
                hubtest_jsonf("{\"metadata\":{\"name\":\"worker-0\",\"namespace\":\"demo\",\"generation\":2,"
                              "\"resourceVersion\":\"3\","
                              "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"}},"
                              "\"spec\":{\"acceptFormats\":%s%s}}",
                              formats, arch ? arch : "");
        f->o.infraenv = ie;
        f->o.bmh = bmh(NULL, NULL, "available");
        f->o.cooldown = HUB_IMAGE_COOLDOWN;
}

static void ppi_fixture_done(PpiFixture *f)
{
        ppi_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

TEST(ppi_conditions)
{
        static const struct {
                const char *formats, *arch, *ie_status;
                bool no_infraenv;
                const char *ready, *error, *reason, *message;
                usec_t requeue;
        } cases[] = {
                { "[\"raw\"]", NULL, READY_INFRAENV, false, "False", "True", "UnsupportedImageFormat",
                  "Unsupported image format", 0 },
                { "[\"iso\"]", NULL, READY_INFRAENV, true, "False", "False", "InfraEnvNotAvailable",
                  "InfraEnv myinfraenv/demo is not found or is being deleted", 0 },
                { "[\"iso\"]", ",\"architecture\":\"aarch64\"", READY_INFRAENV, false, "False", "True",
                  "InfraEnvArchMismatch",
                  "PreprovisioningImage CPU architecture (arm64) does not match InfraEnv CPU architecture "
                  "(x86_64)",
                  0 },
                { "[\"iso\"]", NULL, "", false, "False", "False", "WaitingForInfraEnvImageToBeCreated",
                  "Waiting for InfraEnv image to be created", 0 },
                { "[\"iso\"]", NULL,
                  "\"createdTime\":\"2026-09-21T14:13:00Z\",\"isoDownloadURL\":\"" URL "\"", false, "False",
                  "False", "WaitingForInfraEnvImageToCoolDown", "Waiting for InfraEnv image to cool down",
                  40 * USEC_PER_SEC },
                { "[\"iso\",\"initrd\"]", ",\"architecture\":\"x86_64\"", READY_INFRAENV, false, "True",
                  "False", "InfraEnvAvailable", "InfraEnv is available: Image has been created", 0 },
                { "[\"iso\"]", NULL,
                  "\"createdTime\":\"2026-09-21T14:00:00Z\",\"conditions\":[{\"type\":\"ImageCreated\","
                  "\"status\":\"False\","
                  "\"reason\":\"ImageCreationError\",\"message\":\"Failed to create image: x\"}]",
                  false, "False", "True", "ImageCreationError", "Failed to create image: x", 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PpiFixture f;
                HubTestRun run;

                ppi_fixture(&f, cases[i].formats, cases[i].arch,
                            cases[i].no_infraenv ? NULL : infraenv(cases[i].ie_status, NULL));
                hubtest_reconcile(ppi_decide, &f.o.base, NULL, &run);
                ASSERT_CONDITION(f.o.base.object, "ImageReady", cases[i].ready, cases[i].reason,
                                 cases[i].message);
                ASSERT_CONDITION(f.o.base.object, "ImageError", cases[i].error, cases[i].reason,
                                 cases[i].message);
                ASSERT_EQ(run.requeue_after, cases[i].requeue);
                ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_PPI));
                ASSERT_STREQ(hub_object_label(f.o.base.object, HUB_LABEL_VELERO_EXCLUDE), "true");
                if (!streq(cases[i].ready, "True") && !streq(cases[i].reason, "ImageCreationError"))
                        ASSERT_NULL(hubtest_str(f.o.base.object, "status.imageUrl"));
                {
                        int64_t g = 0;

                        ASSERT_OK(json_get_int64(hub_conditions_find(f.o.base.object, "ImageReady"),
                                                 "observedGeneration", &g));
                        ASSERT_EQ(g, 2);
                }
                hubtest_run_done(&run);
                ppi_fixture_done(&f);
        }
}

TEST(ppi_image_iso_and_initrd)
{
        PpiFixture f;
        HubTestRun run;
        const HubWrite *w;

        ppi_fixture(&f, "[\"iso\"]", NULL, infraenv(READY_INFRAENV, NULL));
        hubtest_reconcile(ppi_decide, &f.o.base, NULL, &run);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.format"), "iso");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.imageUrl"), URL);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.architecture"), "x86_64");
        /* the InfraEnv is told to serve the ironic agent */
        w = hubtest_write(&run, HUB_WRITE_PATCH, 0);
        ASSERT_EQ(w->target, HUB_KIND_INFRAENV);
        ASSERT_STREQ(json_get_string(json_get_path(w->body, "metadata.annotations"),
                                     HUB_ANNOTATION_ENABLE_IRONIC),
                     "true");
        hubtest_run_done(&run);
        ppi_fixture_done(&f);

        ppi_fixture(&f, "[\"initrd\"]", NULL,
                    infraenv(READY_INFRAENV,
                             ",\"kernelArguments\":[{\"operation\":\"append\",\"value\":\"console=ttyS0\"},"
                             "{\"operation\":\"delete\",\"value\":\"quiet\"}]"));
        hubtest_reconcile(ppi_decide, &f.o.base, NULL, &run);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.format"), "initrd");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.imageUrl"), "http://img/initrd");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.kernelUrl"), "http://img/kernel");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.extraKernelParams"),
                     "coreos.live.rootfs_url=http://img/rootfs rd.bootif=0 console=ttyS0");
        hubtest_run_done(&run);
        ppi_fixture_done(&f);
}

TEST(ppi_new_url_reboots_the_host)
{
        PpiFixture f;
        HubTestRun run;
        const HubWrite *w = NULL;

        ppi_fixture(&f, "[\"iso\"]", NULL, infraenv(READY_INFRAENV, NULL));
        hub_object_set_annotation(f.o.infraenv, HUB_ANNOTATION_ENABLE_IRONIC, "true");
        json_object_object_add(f.o.base.object, "status", hubtest_json("{\"imageUrl\":\"http://old\"}"));
        hubtest_reconcile(ppi_decide, &f.o.base, NULL, &run);
        for (size_t i = 0; i < run.writes.n; i++)
                if (run.writes.writes[i].target == HUB_KIND_BMH)
                        w = &run.writes.writes[i];
        ASSERT_NOT_NULL(w);
        ASSERT_STREQ(json_get_string(json_get_path(w->body, "metadata.annotations"), "reboot.metal3.io"),
                     "{\"force\": true}");
        hubtest_run_done(&run);
        ppi_fixture_done(&f);
}

TEST(ppi_deletion_waits_for_cleaning)
{
        PpiFixture f;
        HubTestRun run;

        ppi_fixture(&f, "[\"iso\"]", NULL, infraenv(READY_INFRAENV, NULL));
        ASSERT_EQ(hub_object_add_finalizer(f.o.base.object, HUB_FINALIZER_PPI), 1);
        json_object_object_add(json_get(f.o.base.object, "metadata"), "deletionTimestamp",
                               json_object_new_string("2026-09-21T14:00:00Z"));
        hubtest_reconcile(ppi_decide, &f.o.base, NULL, &run);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_PPI));
        ASSERT_TRUE(run.requeue);
        hubtest_run_done(&run);
        /* the host is being deleted and powering off: the image may go */
        json_object_object_add(json_get(f.o.bmh, "metadata"), "deletionTimestamp",
                               json_object_new_string("2026-09-21T14:00:00Z"));
        json_object_object_add(json_get_path(f.o.bmh, "status.provisioning"), "state",
                               json_object_new_string("powering off before delete"));
        hubtest_reconcile(ppi_decide, &f.o.base, NULL, &run);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_PPI));
        hubtest_run_done(&run);
        /* no BMH at all */
        ASSERT_EQ(hub_object_add_finalizer(f.o.base.object, HUB_FINALIZER_PPI), 1);
        json_object_put(f.o.bmh);
        f.o.bmh = NULL;
        hubtest_reconcile(ppi_decide, &f.o.base, NULL, &run);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_PPI));
        hubtest_run_done(&run);
        ppi_fixture_done(&f);
}

DEFINE_TEST_MAIN
