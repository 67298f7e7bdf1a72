/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The InfraEnv controller's decide, condition row by condition row of
 * notes/hub.md §3 (and §4 for the NMStateConfigs), deletion included.
 */
#include <json-c/json.h>

#include "cleanup.h"
#include "hub-claim.h"
#include "hub-nmstate.h"
#include "hub-text.h"
#include "hubtest.h"
#include "infraenv.h"
#include "jsonutil.h"
#include "strutil.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC) /* 2026-09-21T14:13:20Z */
#define ID "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"
#define PS_B64 "eyJhdXRocyI6eyJxdWF5LmlvIjp7ImF1dGgiOiJkWE5sY2pwd1lYTnoifX19"
#define PS_TEXT "{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}"

#define SERVICE_IE \
        "{\"id\":\"" ID "\",\"name\":\"myinfraenv\",\"kind\":\"InfraEnv\",\"type\":\"minimal-iso\"," \
        "\"download_url\":\"http://127.0.0.1:8888/byid/" ID "/4.13/x86_64/minimal.iso\"," \
        "\"created_at\":\"2026-09-21T14:00:00.5Z\",\"updated_at\":\"2026-09-21T14:10:00.25Z\"," \
        "\"ssh_authorized_key\":\"\",\"proxy\":{},\"pull_secret_set\":true}"

#define IPXE \
        "#!ipxe\ninitrd --name initrd http://img/images/" ID "/pxe-initrd?arch=x86_64&version=4.13\n" \
        "kernel http://img/boot-artifacts/kernel?arch=x86_64&version=4.13 initrd=initrd " \
        "coreos.live.rootfs_url=http://img/boot-artifacts/rootfs?arch=x86_64&version=4.13 " \
        "random.trust_cpu=on\nboot\n"

/* the service's public base URL (SERVICE_BASE_URL), not cradle-hub's
 * --service-url: the service's presigned URLs are on it, signed with the
 * infra-env's key under local auth */
#define PUBLIC "https://assisted.example.com"
#define FILES_URL PUBLIC "/api/assisted-install/v2/infra-envs/" ID "/downloads/files?api_key=k"

static const HubTestAnswer files[] = {
        { "ipxe-script", 200, IPXE, NULL },
        { "presigned-ipxe-script", 200, "{\"url\":\"" FILES_URL "&file_name=ipxe-script\"}", NULL },
        { "presigned-discovery-ign", 200, "{\"url\":\"" FILES_URL "&file_name=discovery.ign\"}", NULL },
        { NULL },
};

typedef struct Fixture {
        InfraEnvObserved o;
} Fixture;

static json_object *infraenv(const char *extra_meta, const char *extra_spec)
{
        return hubtest_jsonf("{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"InfraEnv\","
                             "\"metadata\":{\"name\":\"myinfraenv\",\"namespace\":\"spoke\",\"uid\":\"u1\","
                             "\"resourceVersion\":\"10\",\"generation\":1%s},"
                             "\"spec\":{\"pullSecretRef\":{\"name\":\"pull-secret\"}%s}}",
                             extra_meta ? extra_meta : "", extra_spec ? extra_spec : "");
}

static json_object *secret(bool labelled)
{
        return hubtest_jsonf("{\"metadata\":{\"name\":\"pull-secret\",\"namespace\":\"spoke\","
                             "\"resourceVersion\":\"3\"%s},"
                             "\"data\":{\".dockerconfigjson\":\"" PS_B64 "\"}}",
                             labelled ? ",\"labels\":{\"agent-install.openshift.io/watch\":\"true\","
                                        "\"cluster.open-cluster-management.io/backup\":\"true\"}"
                                      : "");
}

static void fixture(Fixture *f, json_object *ie)
{
        *f = (Fixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup("spoke");
        f->o.base.name = strdup("myinfraenv");
        f->o.base.object = ie;
        f->o.image_type = "minimal-iso";
        f->o.identity = "hub-a";
        f->o.secret = secret(true);
}

static void fixture_done(Fixture *f)
{
        infraenv_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

/* linked, but the service does not know the id (404) */
static void not_found(Fixture *f)
{
        f->o.infraenv_read = true;
        f->o.infraenv =
                (HubCallResult){ .status = 404, .error = -EREMOTEIO, .message = strdup("record not found") };
}

/* linked: the GET of the infra-env answered body */
static void linked(Fixture *f, const char *body)
{
        f->o.infraenv_read = true;
        f->o.infraenv = (HubCallResult){ .tag = strdup("get"), .status = 200, .body = hubtest_json(body) };
}

/* ---- registration ---- */

TEST(register_new_infraenv)
{
        Fixture f;
        HubTestRun run;
        HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };
        json_object *ie, *body;

        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, infraenv(NULL, NULL));
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        ie = f.o.base.object;

        /* the marker and the finalizer were written before the call */
        ASSERT_EQ(run.writes.writes[0].kind, HUB_WRITE_PATCH);
        ASSERT_NOT_NULL(json_get_path(run.writes.writes[0].body, "metadata.annotations"));
        ASSERT_NOT_NULL(json_get(json_get_path(run.writes.writes[0].body, "metadata.annotations"),
                                 "cradle.agent-install.openshift.io/registering"));
        ASSERT_EQ(run.writes.writes[1].kind, HUB_WRITE_SERVICE);
        ASSERT_STREQ(run.writes.writes[1].tag, "register-infraenv");
        ASSERT_STREQ(run.writes.writes[1].path, "/v2/infra-envs");
        body = run.writes.writes[1].body;
        ASSERT_STREQ(json_get_string(body, "name"), "myinfraenv");
        ASSERT_STREQ(json_get_string(body, "image_type"), "minimal-iso");
        ASSERT_STREQ(json_get_string(body, "pull_secret"), PS_TEXT);
        ASSERT_NULL(json_get(body, "static_network_config"));
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register"), 1);

        /* after it: the id, no marker, the finalizer, a digest of the secret */
        ASSERT_STREQ(hub_object_annotation(ie, HUB_ANNOTATION_INFRAENV_ID), ID);
        ASSERT_NULL(hub_object_annotation(ie, HUB_ANNOTATION_REGISTERING));
        ASSERT_TRUE(hub_object_has_finalizer(ie, HUB_FINALIZER_INFRAENV));
        ASSERT_TRUE(startswith(hub_object_annotation(ie, HUB_ANNOTATION_PULL_SECRET_DIGEST), "sha256:"));
        {
                _cleanup_free_ char *t = json_to_string(ie, 0);

                ASSERT_NOT_CONTAINS(t, "dXNlcjpwYXNz");
        }

        ASSERT_CONDITION(ie, "ImageCreated", "True", "InfraEnvAvailable",
                         "InfraEnv is available: Image has been created");
        ASSERT_STREQ(hubtest_str(ie, "status.isoDownloadURL"),
                     "http://127.0.0.1:8888/byid/" ID "/4.13/x86_64/minimal.iso");
        ASSERT_STREQ(hubtest_str(ie, "status.createdTime"), "2026-09-21T14:10:00Z");
        ASSERT_STREQ(hubtest_str(ie, "status.bootArtifacts.kernel"),
                     "http://img/boot-artifacts/kernel?arch=x86_64&version=4.13");
        ASSERT_STREQ(hubtest_str(ie, "status.bootArtifacts.initrd"),
                     "http://img/images/" ID "/pxe-initrd?arch=x86_64&version=4.13");
        ASSERT_STREQ(hubtest_str(ie, "status.bootArtifacts.rootfs"),
                     "http://img/boot-artifacts/rootfs?arch=x86_64&version=4.13");
        ASSERT_STREQ(hubtest_str(ie, "status.bootArtifacts.ipxeScript"), FILES_URL "&file_name=ipxe-script");
        ASSERT_STREQ(hubtest_str(ie, "status.bootArtifacts.discoveryIgnitionURL"),
                     FILES_URL "&file_name=discovery.ign");
        /* on the public base URL, signed as the service's controllers sign
         * it (api_key first: Go sorts the query's keys) */
        ASSERT_STREQ(hubtest_str(ie, "status.debugInfo.eventsURL"),
                     PUBLIC "/api/assisted-install/v2/events?api_key=k&infra_env_id=" ID);
        ASSERT_NULL(hubtest_str(ie, "status.debugInfo.staticNetworkDownloadURL"));
        ASSERT_STREQ(json_get_string(json_get_path(ie, "status.agentLabelSelector.matchLabels"),
                                     HUB_LABEL_INFRAENV),
                     "myinfraenv");
        ASSERT_EQ(run.requeue_after, 0);
        ASSERT_FALSE(run.requeue);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* a steady state: nothing differs, nothing is written, one GET was all */
TEST(nothing_changed_nothing_written)
{
        Fixture f;
        HubTestRun run;
        json_object *ie;

        fixture(&f, infraenv(NULL, NULL));
        hubtest_reconcile(infraenv_decide, &f.o.base,
                          (HubTestAnswer[]){ { "register-infraenv", 201, SERVICE_IE, NULL },
                                             { "ipxe-script", 200, IPXE, NULL },
                                             { "presigned-*", 200, "{\"url\":\"http://svc/x\"}", NULL },
                                             { NULL } },
                          &run);
        hubtest_run_done(&run);
        /* the next reconcile: the object as written, the service as it answered */
        ie = hub_json_copy(f.o.base.object);
        fixture_done(&f);
        fixture(&f, ie);
        linked(&f, SERVICE_IE);
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        ASSERT_EQ(run.rounds, 1);
        hubtest_run_done(&run);
        fixture_done(&f);
}

static json_object *registered(const char *extra_spec, const char *service)
{
        Fixture f;
        HubTestRun run;
        json_object *ie;
        HubTestAnswer answers[8] = { { "register-infraenv", 201, service, NULL } };

        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, infraenv(NULL, extra_spec));
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        ie = hub_json_copy(f.o.base.object);
        hubtest_run_done(&run);
        fixture_done(&f);
        return ie;
}

TEST(update_sends_only_what_changed)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(NULL, SERVICE_IE), *body;
        const char *updated =
                "{\"id\":\"" ID "\",\"name\":\"myinfraenv\",\"type\":\"minimal-iso\","
                "\"download_url\":\"http://127.0.0.1:8888/byid/" ID "/4.13/x86_64/minimal.iso\","
                "\"updated_at\":\"2026-09-21T14:12:00Z\",\"ssh_authorized_key\":\"ssh-ed25519 AAAA k\"}";

        json_object_object_add(json_get(ie, "spec"), "sshAuthorizedKey",
                               json_object_new_string("ssh-ed25519 AAAA k"));
        fixture(&f, ie);
        linked(&f, SERVICE_IE);
        {
                HubTestAnswer answers[8] = { { "update-infraenv", 201, updated, NULL } };

                memcpy(answers + 1, files, sizeof(files));
                hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        }
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "update-infraenv"), 1);
        body = hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body;
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->method, "PATCH");
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path, "/v2/infra-envs/" ID);
        ASSERT_EQ(json_object_object_length(body), 1);
        ASSERT_STREQ(json_get_string(body, "ssh_authorized_key"), "ssh-ed25519 AAAA k");
        /* the image was made again: its time moves */
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.createdTime"), "2026-09-21T14:12:00Z");
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "InfraEnvAvailable", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(update_409_image_being_created)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(NULL, SERVICE_IE);

        json_object_object_add(json_get(ie, "spec"), "sshAuthorizedKey", json_object_new_string("k"));
        fixture(&f, ie);
        linked(&f, SERVICE_IE);
        hubtest_reconcile(
                infraenv_decide, &f.o.base,
                (HubTestAnswer[]){ { "update-infraenv", 409, NULL, "image is being created" }, { NULL } },
                &run);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "ImageCreated", "Image has been created");
        ASSERT_EQ(run.requeue_after, 20 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(update_409_keeps_an_error)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(NULL, SERVICE_IE);

        json_object_object_add(json_get(ie, "spec"), "sshAuthorizedKey", json_object_new_string("k"));
        ASSERT_OK(hub_conditions_set(ie, "ImageCreated", "False", "ImageCreationError",
                                     "Failed to create image: x", NOW));
        fixture(&f, ie);
        linked(&f, SERVICE_IE);
        hubtest_reconcile(
                infraenv_decide, &f.o.base,
                (HubTestAnswer[]){ { "update-infraenv", 409, NULL, "image is being created" }, { NULL } },
                &run);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image: x");
        ASSERT_EQ(run.requeue_after, 20 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(register_4xx_is_an_input_error)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, infraenv(NULL, NULL));
        hubtest_reconcile(infraenv_decide, &f.o.base,
                          (HubTestAnswer[]){ { "register-infraenv", 400, NULL,
                                               "MACs and Interfaces for host 0 must be unique" },
                                             { NULL } },
                          &run);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image: MACs and Interfaces for host 0 must be unique");
        ASSERT_NULL(hubtest_str(f.o.base.object, "status.isoDownloadURL"));
        ASSERT_FALSE(run.requeue);
        ASSERT_EQ(run.requeue_after, 0);
        /* a refusal stored nothing: no marker, or the next attempt would
         * search and could adopt another's infra-env of that name */
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTRATION_REFUSED));
        hubtest_run_done(&run);
        /* the reconcile its own write starts registers nothing (the
         * refusal is tried again after a while), and keeps the condition */
        hubtest_reconcile(infraenv_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_EQ(run.requeue_after, HUB_CLAIM_REFUSAL_BACKOFF);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image: MACs and Interfaces for host 0 must be unique");
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- the service's API generation ---- */

#define REFUSED_2023(model, field) \
        "parsing " model " body from \"\" failed, because json: unknown field \"" field "\""

/* a service not yet seen refuses network_discovery_delay_seconds: the hub
 * learns the late-2023 API from it and registers once more without it */
TEST(register_refused_for_a_2023_field_registers_again_shaped_for_it)
{
        Fixture f;
        HubTestRun run;
        HubTestAnswer answers[9] = {
                { "register-infraenv", 400, NULL,
                  REFUSED_2023("newInfraEnvParams", "network_discovery_delay_seconds") },
                { "register-infraenv-again", 201, SERVICE_IE, NULL },
        };
        json_object *first, *again;

        memcpy(answers + 2, files, sizeof(files));
        fixture(&f,
                infraenv(NULL, ",\"networkDiscoveryDelaySeconds\":0,\"additionalNTPSources\":[\"ntp1\"]"));
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-infraenv"), 2);
        first = hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body;
        again = hubtest_write(&run, HUB_WRITE_SERVICE, 1)->body;
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 1)->tag, "register-infraenv-again");
        ASSERT_NOT_NULL(json_get(first, "network_discovery_delay_seconds"));
        ASSERT_NULL(json_get(again, "network_discovery_delay_seconds"));
        ASSERT_STREQ(json_get_string(again, "additional_ntp_sources"), "ntp1");
        ASSERT_STREQ(json_get_string(again, "pull_secret"), PS_TEXT);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), ID);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "InfraEnvAvailable", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* what the late-2023 models cannot say is the user's input error, never
 * sent; the refusal that showed the API does not go to the condition */
TEST(register_on_a_2023_service_what_it_cannot_do)
{
        static const struct {
                const char *spec, *refused, *message;
        } cases[] = {
                { ",\"ntpSources\":[\"ntp1\"]", "ntp_sources",
                  "Failed to create image: this assisted-service does not know ntp_sources (its API is the "
                  "late-2023 one): spec.ntpSources cannot replace the hosts' NTP sources there; "
                  "spec.additionalNTPSources adds to them" },
                { ",\"networkDiscoveryDelaySeconds\":30", "network_discovery_delay_seconds",
                  "Failed to create image: this assisted-service does not know "
                  "network_discovery_delay_seconds (its API is the late-2023 one): "
                  "spec.networkDiscoveryDelaySeconds 30 cannot be honoured by it" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *refusal =
                        strdup_printf("parsing newInfraEnvParams body from \"\" failed, because json: "
                                      "unknown field \"%s\"",
                                      cases[i].refused);
                Fixture f;
                HubTestRun run;

                /* not yet seen: sent once, refused, then the input error */
                fixture(&f, infraenv(NULL, cases[i].spec));
                hubtest_reconcile(infraenv_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "register-infraenv", 400, NULL, refusal }, { NULL } },
                                  &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1);
                ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                                 cases[i].message);
                ASSERT_FALSE(run.requeue);
                ASSERT_EQ(run.requeue_after, 0);
                hubtest_run_done(&run);
                fixture_done(&f);

                /* known: nothing sent */
                fixture(&f, infraenv(NULL, cases[i].spec));
                f.o.api = HUB_SERVICE_API_2023;
                hubtest_reconcile(infraenv_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
                ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                                 cases[i].message);
                hubtest_run_done(&run);
                fixture_done(&f);

                /* a current service takes it */
                fixture(&f, infraenv(NULL, cases[i].spec));
                f.o.api = HUB_SERVICE_API_CURRENT;
                {
                        HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };

                        memcpy(answers + 1, files, sizeof(files));
                        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
                }
                ASSERT_NOT_NULL(json_get(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body, cases[i].refused));
                ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "InfraEnvAvailable", NULL);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

/* an update to a late-2023 service: what it takes is sent, a changed
 * osImageVersion (no openshift_version in its update) is the input error */
TEST(update_on_a_2023_service)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(NULL, SERVICE_IE), *body;
        const char *with_version = "{\"id\":\"" ID "\",\"name\":\"myinfraenv\",\"type\":\"minimal-iso\","
                                   "\"openshift_version\":\"4.13\",\"ssh_authorized_key\":\"\","
                                   "\"download_url\":\"http://127.0.0.1:8888/byid/" ID
                                   "/4.13/x86_64/minimal.iso\",\"updated_at\":\"2026-09-21T14:12:00Z\"}";

        json_object_object_add(json_get(ie, "spec"), "additionalNTPSources",
                               hubtest_json("[\"ntp1\",\"ntp2\"]"));
        json_object_object_add(json_get(ie, "spec"), "networkDiscoveryDelaySeconds",
                               json_object_new_int64(0));
        fixture(&f, ie);
        f.o.api = HUB_SERVICE_API_2023;
        linked(&f, with_version);
        {
                HubTestAnswer answers[8] = { { "update-infraenv", 201, with_version, NULL } };

                memcpy(answers + 1, files, sizeof(files));
                hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        }
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "update-infraenv"), 1);
        body = hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body;
        ASSERT_EQ(json_object_object_length(body), 1);
        ASSERT_STREQ(json_get_string(body, "additional_ntp_sources"), "ntp1,ntp2");
        hubtest_run_done(&run);
        ie = hub_json_copy(f.o.base.object);
        fixture_done(&f);

        json_object_object_add(json_get(ie, "spec"), "osImageVersion", json_object_new_string("4.14"));
        fixture(&f, ie);
        f.o.api = HUB_SERVICE_API_2023;
        linked(&f, with_version);
        hubtest_reconcile(infraenv_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image: the infra-env was registered for OpenShift 4.13 and this "
                         "assisted-service (its API is the late-2023 one) cannot change it to 4.14: delete "
                         "and re-create the InfraEnv");
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* an update refused for a field the late-2023 models lack, by a service not
 * yet seen: sent again without it */
TEST(update_refused_for_a_2023_field_sent_again)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(NULL, SERVICE_IE), *again;
        const char *updated = "{\"id\":\"" ID "\",\"name\":\"myinfraenv\",\"type\":\"minimal-iso\","
                              "\"ssh_authorized_key\":\"ssh-ed25519 AAAA k\",\"download_url\":"
                              "\"http://127.0.0.1:8888/byid/" ID "/4.13/x86_64/minimal.iso\","
                              "\"updated_at\":\"2026-09-21T14:12:00Z\"}";

        json_object_object_add(json_get(ie, "spec"), "sshAuthorizedKey",
                               json_object_new_string("ssh-ed25519 AAAA k"));
        json_object_object_add(json_get(ie, "spec"), "networkDiscoveryDelaySeconds",
                               json_object_new_int64(0));
        fixture(&f, ie);
        /* the service shows no delay: 0 differs from nothing only to a
         * service that has the field */
        linked(&f, "{\"id\":\"" ID "\",\"name\":\"myinfraenv\",\"type\":\"minimal-iso\","
                   "\"download_url\":\"http://127.0.0.1:8888/byid/" ID "/4.13/x86_64/minimal.iso\","
                   "\"network_discovery_delay_seconds\":5,\"ssh_authorized_key\":\"\"}");
        {
                HubTestAnswer answers[9] = {
                        { "update-infraenv", 400, NULL,
                          REFUSED_2023("updateInfraEnvParams", "network_discovery_delay_seconds") },
                        { "update-infraenv-again", 201, updated, NULL },
                };

                memcpy(answers + 2, files, sizeof(files));
                hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        }
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "update-infraenv"), 2);
        again = hubtest_write(&run, HUB_WRITE_SERVICE, 1)->body;
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 1)->tag, "update-infraenv-again");
        ASSERT_EQ(json_object_object_length(again), 1);
        ASSERT_STREQ(json_get_string(again, "ssh_authorized_key"), "ssh-ed25519 AAAA k");
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "InfraEnvAvailable", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(register_5xx_is_a_backend_error)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, infraenv(NULL, NULL));
        hubtest_reconcile(
                infraenv_decide, &f.o.base,
                (HubTestAnswer[]){ { "register-infraenv", 500, NULL, "database is down" }, { NULL } }, &run);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image due to an internal error: database is down");
        ASSERT_EQ(run.requeue_after, 20 * USEC_PER_SEC);
        /* it may have reached the database: the next attempt searches first */
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(register_no_answer_is_a_backend_error)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, infraenv(NULL, NULL));
        hubtest_reconcile(
                infraenv_decide, &f.o.base,
                (HubTestAnswer[]){ { "register-infraenv", 0, NULL, "Connection refused" }, { NULL } }, &run);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image due to an internal error: Connection refused");
        ASSERT_EQ(run.requeue_after, 20 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- inputs ---- */

TEST(pull_secret_missing)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, infraenv(NULL, NULL));
        json_object_put(f.o.secret);
        f.o.secret = NULL;
        f.o.secret_error = -ENOENT;
        f.o.secret_message = strdup("secrets \"pull-secret\" not found");
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image: failed to find secret pull-secret: secrets "
                         "\"pull-secret\" not found");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_FALSE(run.requeue);
        ASSERT_EQ(run.requeue_after, 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(pull_secret_unreadable_is_a_backend_error)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, infraenv(NULL, NULL));
        json_object_put(f.o.secret);
        f.o.secret = NULL;
        f.o.secret_error = -EIO;
        f.o.secret_message = strdup("Internal error occurred: etcd");
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(
                f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                "Failed to create image due to an internal error: failed to find secret pull-secret: "
                "Internal error occurred: etcd");
        ASSERT_EQ(run.requeue_after, 20 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(pull_secret_without_key_or_malformed)
{
        static const struct {
                const char *data;
                const char *message;
        } cases[] = {
                { "{}", "Failed to create image: secret pull-secret did not contain key .dockerconfigjson" },
                { "{\".dockerconfigjson\":\"bm90IGpzb24=\"}",
                  "Failed to create image: invalid pull secret data in secret pull-secret: not a docker "
                  "config with "
                  "\"auths\"" },
                { "{\".dockerconfigjson\":\"!!!\"}", "Failed to create image: invalid pull secret data in "
                                                     "secret pull-secret: not a docker config with "
                                                     "\"auths\"" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                HubTestRun run;

                fixture(&f, infraenv(NULL, NULL));
                json_object_object_add(f.o.secret, "data", hubtest_json(cases[i].data));
                hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
                ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                                 cases[i].message);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

TEST(unlabelled_secret_gets_labelled_once)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *w;
        HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };

        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, infraenv(NULL, NULL));
        json_object_put(f.o.secret);
        f.o.secret = secret(false);
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        w = hubtest_write(&run, HUB_WRITE_PATCH, 0);
        ASSERT_NOT_NULL(w);
        ASSERT_EQ(w->target, HUB_KIND_SECRET);
        ASSERT_STREQ(w->name, "pull-secret");
        ASSERT_STREQ(json_get_string(json_get_path(w->body, "metadata.labels"), HUB_LABEL_WATCH), "true");
        ASSERT_STREQ(json_get_string(json_get_path(w->body, "metadata.labels"), HUB_LABEL_BACKUP), "true");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(mirror_registry_is_refused)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, infraenv(NULL, ",\"mirrorRegistryRef\":{\"name\":\"mirror\",\"namespace\":\"spoke\"}"));
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                         "Failed to create image: spec.mirrorRegistryRef is not supported by cradle-hub*");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- clusterRef (notes §3.2 step 2) ---- */

#define CLUSTER_REF ",\"clusterRef\":{\"name\":\"single-node\",\"namespace\":\"spoke\"}"

TEST(cluster_deployment_missing)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, infraenv(NULL, CLUSTER_REF));
        f.o.cd_error = -ENOENT;
        f.o.cd_message = strdup("clusterdeployments.hive.openshift.io \"single-node\" not found");
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(
                f.o.base.object, "ImageCreated", "Unknown", "MissingClusterDeployment",
                "ClusterDeployment is missing: failed to get clusterDeployment with name single-node in "
                "namespace spoke: clusterdeployments.hive.openshift.io \"single-node\" not found");
        ASSERT_FALSE(run.requeue); /* waits for the ClusterDeployment's event */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(cluster_not_registered_yet)
{
        static const struct {
                const char *cd;
                const char *message;
        } cases[] = {
                { "{\"metadata\":{\"name\":\"single-node\",\"namespace\":\"spoke\"},\"spec\":{"
                  "\"clusterInstallRef\":"
                  "{\"group\":\"extensions.hive.openshift.io\",\"kind\":\"AgentClusterInstall\",\"name\":"
                  "\"aci\"}}}",
                  "ClusterDeployment is missing: cluster does not exist: single-node, check "
                  "AgentClusterInstall "
                  "conditions: name aci in namespace spoke" },
                { "{\"metadata\":{\"name\":\"single-node\",\"namespace\":\"spoke\"},\"spec\":{}}",
                  "ClusterDeployment is missing: cluster does not exist: single-node, AgentClusterInstall "
                  "is not "
                  "defined in ClusterDeployment" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                HubTestRun run;

                fixture(&f, infraenv(NULL, CLUSTER_REF));
                f.o.cd = hubtest_json(cases[i].cd);
                hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
                ASSERT_CONDITION(f.o.base.object, "ImageCreated", "Unknown", "MissingClusterDeployment",
                                 cases[i].message);
                ASSERT_TRUE(run.requeue);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

TEST(bound_infraenv_registers_with_the_cluster)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *w;
        HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };

        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, infraenv(NULL, CLUSTER_REF));
        f.o.cd = hubtest_json(
                "{\"metadata\":{\"name\":\"single-node\",\"namespace\":\"spoke\",\"annotations\":"
                "{\"cradle.agent-install.openshift.io/cluster-id\":\"c1\"}}}");
        f.o.cluster_read = true;
        f.o.cluster =
                (HubCallResult){ .status = 200,
                                 .body = hubtest_json("{\"id\":\"fb127e4c-aa1c-4cf4-898f-aadb690c4ded\","
                                                      "\"openshift_version\":\"4.14.0\"}") };
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 0);
        ASSERT_STREQ(json_get_string(w->body, "cluster_id"), "fb127e4c-aa1c-4cf4-898f-aadb690c4ded");
        ASSERT_STREQ(json_get_string(w->body, "openshift_version"), "4.14.0");
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "InfraEnvAvailable", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- NMStateConfigs (notes §4) ---- */

static json_object *nmstate(const char *name, const char *mac0, const char *ip)
{
        return hubtest_jsonf(
                "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"spoke\",\"labels\":{\"l\":\"v\"}},"
                "\"spec\":{\"config\":{\"interfaces\":[{\"name\":\"eth0\",\"type\":\"ethernet\","
                "\"state\":\"up\",\"mac-address\":\"%s\",\"ipv4\":{\"enabled\":true,\"dhcp\":false,"
                "\"address\":[{\"ip\":\"%s\",\"prefix-length\":24}]}}],"
                "\"dns-resolver\":{\"config\":{\"server\":[\"192.168.126.1\"]}}},"
                "\"interfaces\":[{\"name\":\"eth0\",\"macAddress\":\"%s\"}]}}",
                name, mac0, ip, mac0);
}

#define SELECTOR ",\"nmStateConfigLabelSelector\":{\"matchLabels\":{\"l\":\"v\"}}"

TEST(static_network_config_sent_sorted)
{
        Fixture f;
        HubTestRun run;
        json_object *list;
        HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };

        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, infraenv(NULL, SELECTOR));
        f.o.n_nmstate = 2;
        f.o.nmstate = calloc(3, sizeof(json_object *));
        f.o.nmstate[0] = nmstate("a", "02:00:00:80:12:14", "192.168.126.31");
        f.o.nmstate[1] = nmstate("b", "02:00:00:80:12:15", "192.168.126.30");
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        list = json_get(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body, "static_network_config");
        ASSERT_EQ(json_object_array_length(list), 2);
        /* sorted by YAML as the service stores them: .30 before .31 */
        ASSERT_CONTAINS(json_get_string(json_object_array_get_idx(list, 0), "network_yaml"),
                        "ip: 192.168.126.30");
        ASSERT_STREQ(json_get_string(
                             json_object_array_get_idx(
                                     json_get(json_object_array_get_idx(list, 0), "mac_interface_map"), 0),
                             "mac_address"),
                     "02:00:00:80:12:15");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(static_network_config_compared_with_the_service)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(SELECTOR, SERVICE_IE), *configs[2], *list = NULL, *service;
        _cleanup_free_ char *stored = NULL, *err = NULL;

        configs[0] = nmstate("a", "02:00:00:80:12:14", "192.168.126.31");
        configs[1] = nmstate("b", "02:00:00:80:12:15", "192.168.126.30");
        ASSERT_OK(hub_nmstate_static_config(configs, 2, &list, &err));
        /* the service stores them in its order; give it back reversed: the
         * hub sorts before it compares */
        {
                json_object *rev = json_new_array();

                json_object_array_add(rev, json_object_get(json_object_array_get_idx(list, 1)));
                json_object_array_add(rev, json_object_get(json_object_array_get_idx(list, 0)));
                stored = json_to_string(rev, 0);
                json_object_put(rev);
        }
        service = hubtest_json(SERVICE_IE);
        json_object_object_add(service, "static_network_config", json_object_new_string(stored));
        json_object_object_add(json_get(ie, "status"), "debugInfo",
                               hubtest_json("{\"eventsURL\":\"x\",\"staticNetworkDownloadURL\":\"" FILES_URL
                                            "&file_name=static-network-config\"}"));

        fixture(&f, ie);
        f.o.n_nmstate = 2;
        f.o.nmstate = calloc(3, sizeof(json_object *));
        f.o.nmstate[0] = configs[1];
        f.o.nmstate[1] = configs[0];
        f.o.infraenv_read = true;
        f.o.infraenv = (HubCallResult){ .status = 200, .body = service };
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);

        /* one config changes: one update with the whole new list */
        json_object_put(f.o.nmstate[0]);
        f.o.nmstate[0] = nmstate("b", "02:00:00:80:12:15", "192.168.126.40");
        {
                HubTestAnswer answers[8] = { { "update-infraenv", 201, SERVICE_IE, NULL } };

                memcpy(answers + 1, files, sizeof(files));
                hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        }
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "update-infraenv"), 1);
        ASSERT_EQ(json_object_array_length(json_get(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body,
                                                    "static_network_config")),
                  2);
        ASSERT_EQ(json_object_object_length(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body), 1);
        hubtest_run_done(&run);

        /* every config gone: [] clears the service's */
        for (size_t i = 0; i < f.o.n_nmstate; i++)
                json_object_put(f.o.nmstate[i]);
        f.o.n_nmstate = 0;
        {
                HubTestAnswer answers[8] = { { "update-infraenv", 201, SERVICE_IE, NULL } };

                memcpy(answers + 1, files, sizeof(files));
                hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        }
        ASSERT_EQ(json_object_array_length(json_get(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body,
                                                    "static_network_config")),
                  0);
        hubtest_run_done(&run);
        json_object_put(list);
        fixture_done(&f);
}

TEST(nmstate_config_with_bad_interfaces)
{
        static const struct {
                const char *spec;
                const char *message;
        } cases[] = {
                { "{\"interfaces\":[{\"name\":\"eth0\"}]}",
                  "Failed to create image: NMStateConfig spoke/bad: spec.interfaces[0].macAddress is "
                  "missing or not a "
                  "string" },
                { "{\"interfaces\":[{\"macAddress\":\"02:00:00:80:12:14\"}]}",
                  "Failed to create image: NMStateConfig spoke/bad: spec.interfaces[0].name is missing or "
                  "not a string" },
                { "{\"interfaces\":\"eth0\"}",
                  "Failed to create image: NMStateConfig spoke/bad: spec.interfaces is not a list" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                HubTestRun run;

                fixture(&f, infraenv(NULL, SELECTOR));
                f.o.n_nmstate = 1;
                f.o.nmstate = calloc(2, sizeof(json_object *));
                f.o.nmstate[0] = hubtest_jsonf(
                        "{\"metadata\":{\"name\":\"bad\",\"namespace\":\"spoke\"},\"spec\":%s}",
                        cases[i].spec);
                hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
                ASSERT_CONDITION(f.o.base.object, "ImageCreated", "False", "ImageCreationError",
                                 cases[i].message);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
                ASSERT_FALSE(run.requeue);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

TEST(static_network_download_url_once)
{
        Fixture f;
        HubTestRun run;
        json_object *service = hubtest_json(SERVICE_IE);
        HubTestAnswer answers[8] = { { "register-infraenv", 201, NULL, NULL } };
        _cleanup_free_ char *text = NULL;

        json_object_object_add(service, "static_network_config",
                               json_object_new_string("[{\"network_yaml\":\"x\"}]"));
        text = json_to_string(service, 0);
        answers[0].body = text;
        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, infraenv(NULL, NULL));
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.debugInfo.staticNetworkDownloadURL"),
                     FILES_URL "&file_name=static-network-config");
        hubtest_run_done(&run);
        json_object_put(service);
        fixture_done(&f);
}

/* ---- the claim protocol (hub/README.md, "Identity") ---- */

static json_object *marked(const char *holder, usec_t when)
{
        _cleanup_free_ char *m = hub_claim_marker(when, holder), *meta = NULL;

        meta = strdup_printf(",\"annotations\":{\"cradle.agent-install.openshift.io/registering\":\"%s\"},"
                             "\"finalizers\":[\"infraenv.agent-install.openshift.io/ai-deprovision\"]",
                             m);
        return infraenv(meta, NULL);
}

TEST(marker_without_id_adopts_what_the_service_has)
{
        Fixture f;
        HubTestRun run;
        HubTestAnswer answers[8] = { { "get-infraenv", 200, SERVICE_IE, NULL },
                                     { "update-infraenv", 201, SERVICE_IE, NULL } };

        memcpy(answers + 2, files, sizeof(files));
        fixture(&f, marked("hub-a", NOW - 600 * USEC_PER_SEC));
        f.o.searched = true;
        f.o.candidates = (HubCallResult){
                .status = 200,
                .body = hubtest_json("[{\"id\":\"11111111-1111-1111-1111-111111111111\",\"name\":\"other\","
                                     "\"created_at\":\"2026-09-21T14:00:00Z\"},"
                                     "{\"id\":\"" ID
                                     "\",\"name\":\"myinfraenv\",\"created_at\":\"2026-09-21T14:00:00Z\"}]"),
        };
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register"), 0);
        /* whether the service has the current pull secret is not known: sent once */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "update-infraenv"), 1);
        ASSERT_STREQ(json_get_string(hubtest_write(&run, HUB_WRITE_SERVICE, 1)->body, "pull_secret"),
                     PS_TEXT);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), ID);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "InfraEnvAvailable", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(marker_without_id_registers_when_nothing_matches)
{
        static const char *const lists[] = {
                "[]",
                /* the name matches but another InfraEnv links it */
                "[{\"id\":\"" ID "\",\"name\":\"myinfraenv\",\"created_at\":\"2026-09-21T14:00:00Z\"}]",
                /* created long before the marker: not this registration */
                "[{\"id\":\"" ID "\",\"name\":\"myinfraenv\",\"created_at\":\"2020-01-01T00:00:00Z\"}]",
        };

        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                Fixture f;
                HubTestRun run;
                HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };

                memcpy(answers + 1, files, sizeof(files));
                fixture(&f, marked("hub-a", NOW - 600 * USEC_PER_SEC));
                f.o.searched = true;
                f.o.candidates = (HubCallResult){ .status = 200, .body = hubtest_json(lists[i]) };
                if (i == 1)
                        ASSERT_OK(strv_extend(&f.o.claimed_ids, ID));
                hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register"), 1);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

TEST(fresh_marker_of_another_replica_waits)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, marked("hub-b", NOW - 30 * USEC_PER_SEC));
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_EQ(run.requeue_after, 90 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(service_lost_the_infraenv)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(NULL, SERVICE_IE);
        HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };

        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, ie);
        not_found(&f);
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register"), 1);
        /* the id's removal and a new marker, before the call */
        {
                json_object *ann = json_get_path(run.writes.writes[0].body, "metadata.annotations"),
                            *v = NULL;

                ASSERT_TRUE(json_object_object_get_ex(ann, HUB_ANNOTATION_INFRAENV_ID, &v));
                ASSERT_NULL(v);
                ASSERT_NOT_NULL(json_get(ann, HUB_ANNOTATION_REGISTERING));
        }
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), ID);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- deletion (notes §3.2 step 6) ---- */

static json_object *deleting(void)
{
        return infraenv(",\"deletionTimestamp\":\"2026-09-21T14:13:00Z\","
                        "\"annotations\":{\"cradle.agent-install.openshift.io/infra-env-id\":\"" ID "\"},"
                        "\"finalizers\":[\"infraenv.agent-install.openshift.io/ai-deprovision\"]",
                        NULL);
}

TEST(deletion_deregisters_hosts_then_the_infraenv)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, deleting());
        f.o.hosts_read = true;
        f.o.hosts = (HubCallResult){ .status = 200,
                                     .body = hubtest_json("[{\"id\":\"h1\",\"status\":\"known-unbound\"},"
                                                          "{\"id\":\"h2\",\"status\":\"installed\"}]") };
        hubtest_reconcile(infraenv_decide, &f.o.base,
                          (HubTestAnswer[]){ { "deregister-host:h1", 204, NULL, NULL },
                                             { "deregister-host:h2", 404, NULL, "record not found" },
                                             { "deregister-infraenv", 204, NULL, NULL },
                                             { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "deregister-host:"), 2);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->method, "DELETE");
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path, "/v2/infra-envs/" ID "/hosts/h1");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "deregister-infraenv"), 1);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_INFRAENV));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(deletion_waits_for_bound_hosts)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, deleting());
        f.o.hosts_read = true;
        f.o.hosts = (HubCallResult){ .status = 200,
                                     .body = hubtest_json("[{\"id\":\"h1\",\"status\":\"installing\"}]") };
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_INFRAENV));
        ASSERT_EQ(run.requeue_after, 60 * USEC_PER_SEC);
        ASSERT_CONTAINS(run.reason, "Failed to delete infraEnv, existing hosts bound and not installed");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(deletion_of_a_gone_or_unregistered_infraenv)
{
        Fixture f;
        HubTestRun run;

        /* the service has it no more */
        fixture(&f, deleting());
        f.o.hosts_read = true;
        f.o.hosts =
                (HubCallResult){ .status = 404, .error = -EREMOTEIO, .message = strdup("record not found") };
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_INFRAENV));
        hubtest_run_done(&run);
        fixture_done(&f);

        /* never registered */
        fixture(&f, infraenv(",\"deletionTimestamp\":\"2026-09-21T14:13:00Z\","
                             "\"finalizers\":[\"infraenv.agent-install.openshift.io/ai-deprovision\"]",
                             NULL));
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_INFRAENV));
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(deletion_service_error_requeues_a_minute)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, deleting());
        f.o.hosts_read = true;
        f.o.hosts = (HubCallResult){ .status = 200, .body = hubtest_json("[]") };
        hubtest_reconcile(infraenv_decide, &f.o.base,
                          (HubTestAnswer[]){ { "deregister-infraenv", 500, NULL, "boom" }, { NULL } }, &run);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_INFRAENV));
        ASSERT_EQ(run.requeue_after, 60 * USEC_PER_SEC);
        ASSERT_CONTAINS(run.reason, "failed to deregister infraenv: myinfraenv");
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- helpers ---- */

TEST(ipxe_script)
{
        _cleanup_free_ char *k = NULL, *i = NULL, *r = NULL;

        ASSERT_OK(infraenv_parse_ipxe(IPXE, &k, &i, &r));
        ASSERT_STREQ(k, "http://img/boot-artifacts/kernel?arch=x86_64&version=4.13");
        ASSERT_STREQ(i, "http://img/images/" ID "/pxe-initrd?arch=x86_64&version=4.13");
        ASSERT_STREQ(r, "http://img/boot-artifacts/rootfs?arch=x86_64&version=4.13");
        ASSERT_ERROR(infraenv_parse_ipxe("#!ipxe\nchain http://x&mac=${net0/mac}\n", &k, &i, &r), EBADMSG);
}

/* ---- issue 23 ---- */

/* a text of n bytes */
static char *long_text(size_t n)
{
        char *t = malloc(n + 1);

        ASSERT_NOT_NULL(t);
        for (size_t i = 0; i < n; i++)
                t[i] = (char)('a' + i % 26);
        t[n] = 0;
        return t;
}

/* the service's error text of 3,960 NMStateConfigs (2.6 MB) is cut where
 * it is copied into the condition: the InfraEnv stays storable */
TEST(huge_service_error_is_bounded)
{
        static const long statuses[] = { 400, 500 };
        _cleanup_free_ char *huge = long_text(2645273);

        for (size_t i = 0; i < ELEMENTSOF(statuses); i++) {
                Fixture f;
                HubTestRun run;
                const char *msg;
                size_t status_bytes = 0;

                fixture(&f, infraenv(NULL, NULL));
                hubtest_reconcile(
                        infraenv_decide, &f.o.base,
                        (HubTestAnswer[]){ { "register-infraenv", statuses[i], NULL, huge }, { NULL } },
                        &run);
                msg = hubtest_str(hub_conditions_find(f.o.base.object, "ImageCreated"), "message");
                ASSERT_NOT_NULL(msg);
                ASSERT_TRUE(strlen(msg) <= HUB_TEXT_MAX);
                ASSERT_TRUE(startswith(msg, statuses[i] == 400 ? "Failed to create image: abcdefghij"
                                                               : "Failed to create image due to an internal "
                                                                 "error: abcdefghij"));
                ASSERT_CONTAINS(msg, "bytes cut]");
                /* what is written of the status is as small */
                for (size_t w = 0; w < run.writes.n; w++)
                        if (run.writes.writes[w].kind == HUB_WRITE_PATCH_STATUS) {
                                _cleanup_free_ char *t = json_to_string(run.writes.writes[w].body, 0);

                                status_bytes += strlen(t);
                        }
                ASSERT_TRUE(status_bytes > 0 && status_bytes < 2 * HUB_TEXT_MAX);
                ASSERT_EQ(run.requeue_after, statuses[i] == 400 ? 0 : 20 * USEC_PER_SEC);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

/* the eventsURL of a service without auth has no api_key; one an older
 * cradle-hub built on its --service-url is replaced; another token of
 * the same link is kept (nothing written) */
TEST(events_url_on_the_public_base_url)
{
        Fixture f;
        HubTestRun run;
        json_object *ie = registered(NULL, SERVICE_IE);
        json_object *dbg = json_get_path(ie, "status.debugInfo"),
                    *arts = json_get_path(ie, "status.bootArtifacts");

        /* the service signs nothing */
        json_object_object_add(arts, "discoveryIgnitionURL",
                               json_object_new_string(PUBLIC "/api/assisted-install/v2/infra-envs/" ID
                                                             "/downloads/files?file_name=discovery.ign"));
        json_object_object_add(
                dbg, "eventsURL",
                json_object_new_string("http://assisted-service.multicluster-engine.svc:8090/api/"
                                       "assisted-install/v2/events?infra_env_id=" ID));
        fixture(&f, ie);
        linked(&f, SERVICE_IE);
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.debugInfo.eventsURL"),
                     PUBLIC "/api/assisted-install/v2/events?infra_env_id=" ID);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_PATCH_STATUS, NULL), 1u);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* signed: the key a previous presign gave stays when the service's
         * URL carries another (each JWT it makes differs, all are valid) */
        ie = registered(NULL, SERVICE_IE);
        json_object_object_add(
                json_get_path(ie, "status.bootArtifacts"), "discoveryIgnitionURL",
                json_object_new_string(PUBLIC "/api/assisted-install/v2/infra-envs/" ID
                                              "/downloads/files?api_key=k2&file_name=discovery.ign"));
        fixture(&f, ie);
        linked(&f, SERVICE_IE);
        hubtest_reconcile(infraenv_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0u);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.debugInfo.eventsURL"),
                     PUBLIC "/api/assisted-install/v2/events?api_key=k&infra_env_id=" ID);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* a restarted cradle-hub, the only replica, finds its predecessor's
 * marker: the search runs at once instead of waiting out the hold */
TEST(predecessor_marker_registers_at_once)
{
        static const struct {
                usec_t marked_ago, active_ago;
                bool waits;
        } cases[] = {
                { 30, 5, false }, /* marked before this replica acted: its predecessor's */
                { 30, 0, true }, /* not known: held as before */
                { 5, 30, true }, /* marked while this replica acts: another's */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                HubTestRun run;
                HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };

                memcpy(answers + 1, files, sizeof(files));
                fixture(&f, marked("cradle-hub-0_1f7a", NOW - cases[i].marked_ago * USEC_PER_SEC));
                f.o.base.active_since = cases[i].active_ago ? NOW - cases[i].active_ago * USEC_PER_SEC : 0;
                f.o.searched = true;
                f.o.candidates = (HubCallResult){ .status = 200, .body = hubtest_json("[]") };
                hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register"), cases[i].waits ? 0u : 1u);
                if (cases[i].waits)
                        ASSERT_EQ(run.requeue_after, HUB_CLAIM_HOLD - cases[i].marked_ago * USEC_PER_SEC);
                else
                        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), ID);
                hubtest_run_done(&run);
                fixture_done(&f);
        }
}

/* an InfraEnv copied from another hub (backup and restore, get -o yaml |
 * apply): that hub's id (this service answers 404), digest and status;
 * registered anew, as if new */
TEST(copied_from_another_hub_registers_anew)
{
        Fixture f;
        HubTestRun run;
        HubTestAnswer answers[8] = { { "register-infraenv", 201, SERVICE_IE, NULL } };
        json_object *ie = infraenv(",\"annotations\":{\"" HUB_ANNOTATION_INFRAENV_ID
                                   "\":\"9e8f0c1a-0000-4000-8000-000000000001\","
                                   "\"" HUB_ANNOTATION_PULL_SECRET_DIGEST "\":\"sha256:0000\"},"
                                   "\"finalizers\":[\"infraenv.agent-install.openshift.io/ai-deprovision\"]",
                                   NULL);

        json_object_object_add(
                ie, "status",
                hubtest_json("{\"isoDownloadURL\":\"https://other-hub/byid/9e8f/x.iso\","
                             "\"debugInfo\":{\"eventsURL\":\"https://other-hub/api/assisted-install/"
                             "v2/events?api_key=old&infra_env_id=9e8f0c1a-0000-4000-8000-000000000001\"},"
                             "\"bootArtifacts\":{\"discoveryIgnitionURL\":\"https://other-hub/api/"
                             "assisted-install/v2/infra-envs/9e8f0c1a-0000-4000-8000-000000000001/"
                             "downloads/files?api_key=old&file_name=discovery.ign\"}}"));
        memcpy(answers + 1, files, sizeof(files));
        fixture(&f, ie);
        not_found(&f);
        hubtest_reconcile(infraenv_decide, &f.o.base, answers, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register"), 1u);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), ID);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        ASSERT_NE(strcmp(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_PULL_SECRET_DIGEST),
                         "sha256:0000"),
                  0);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.isoDownloadURL"),
                     "http://127.0.0.1:8888/byid/" ID "/4.13/x86_64/minimal.iso");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.debugInfo.eventsURL"),
                     PUBLIC "/api/assisted-install/v2/events?api_key=k&infra_env_id=" ID);
        ASSERT_CONDITION(f.o.base.object, "ImageCreated", "True", "InfraEnvAvailable", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);
}

DEFINE_TEST_MAIN
