/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Agent controller's installation side (notes §5): upstream's
 * TestConditions rows (a host status → the five host conditions) as a
 * table, SpecSynced, spec → service field by field (§5.3), binding and
 * unbinding, auto-approval, day-2 CSRs and node labels, restore from the
 * annotations, deletion.
 */
#include <json-c/json.h>

#include "agent.h"
#include "cleanup.h"
#include "buf.h"
#include "hub-text.h"
#include "hubtest.h"
#include "hubtest-csr.h"
#include "jsonutil.h"
#include "strutil.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC)
#define HOST "0479107b-3436-45d3-83a8-cb9a1dc4fb9e"
#define CID "3c5e6d1a-0b7f-4c2e-9a41-0d5f1e2a3b4c"
/* the service's public base URL and the infra-env's key, as its presigned
 * URL of the host's InfraEnv carries them (hub-links.h) */
#define PUBLIC "https://assisted.example.com"
#define IE_FILES_URL \
        PUBLIC "/api/assisted-install/v2/infra-envs/ie-1/downloads/files?api_key=k&file_name=discovery.ign"

typedef struct Fixture {
        AgentObserved o;
} Fixture;

static json_object *agent(const char *extra_meta, const char *spec)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"Agent\","
                "\"metadata\":{\"name\":\"" HOST "\",\"namespace\":\"spoke\",\"uid\":\"a-uid\","
                "\"resourceVersion\":\"4\",\"labels\":{\"infraenvs.agent-install.openshift.io\":"
                "\"myinfraenv\"},\"finalizers\":[\"agent.agent-install.openshift.io/ai-deprovision\"],"
                "\"ownerReferences\":[{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":"
                "\"InfraEnv\",\"name\":\"myinfraenv\",\"uid\":\"uid-myinfraenv\"}]%s},"
                "\"spec\":%s}",
                extra_meta ? extra_meta : "", spec ? spec : "{\"approved\":false,\"role\":\"\"}");
}

static json_object *infraenv(const char *extra_spec)
{
        return hubtest_jsonf("{\"metadata\":{\"name\":\"myinfraenv\",\"namespace\":\"spoke\",\"uid\":"
                             "\"uid-myinfraenv\",\"annotations\":{\"" HUB_ANNOTATION_INFRAENV_ID
                             "\":\"ie-1\"}},"
                             "\"spec\":{\"pullSecretRef\":{\"name\":\"ps\"}%s}}",
                             extra_spec ? extra_spec : "");
}

static json_object *host(const char *status, const char *extra)
{
        return hubtest_jsonf("{\"id\":\"" HOST
                             "\",\"infra_env_id\":\"ie-1\",\"status\":\"%s\",\"status_info\":"
                             "\"info of %s\",\"role\":\"auto-assign\",\"suggested_role\":\"master\","
                             "\"kind\":\"Host\",\"created_at\":\"2026-09-21T14:00:00Z\"%s}",
                             status, status, extra ? extra : "");
}

static void fixture(Fixture *f, json_object *a, json_object *h)
{
        *f = (Fixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup("spoke");
        f->o.base.name = strdup(HOST);
        f->o.base.object = a;
        f->o.host = h;
        f->o.infraenv = infraenv(NULL);
        f->o.infra_env_id = strdup("ie-1");
        f->o.install.csr_requeue = HUB_REQUEUE_APPROVE_CSRS;
}

static void fixture_done(Fixture *f)
{
        agent_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

/* ---- TestConditions ---- */

typedef struct Row {
        const char *s, *r, *m;
} Row;

typedef struct AgentCase {
        const char *status;
        bool approved;
        const char *extra;
        Row connected, requirements, validated, installed, bound;
} AgentCase;

#define CONNECTED \
        { \
                "True", "AgentIsConnected", \
                        "The agent's connection to the installation service is unimpaired" \
        }
#define DISCONNECTED \
        { \
                "False", "AgentIsDisconnected", \
                        "The agent has not contacted the installation service in some time, user action " \
                        "should be taken" \
        }
#define NOT_READY \
        { \
                "False", "AgentNotReady", "The agent is not ready to begin the installation" \
        }
#define INSTALLING_REQ \
        { \
                "True", "AgentAlreadyInstalling", "Installation already started and is in progress" \
        }
#define STOPPED_REQ \
        { \
                "True", "AgentInstallationStopped", "The agent installation stopped" \
        }
#define PASSING \
        { \
                "True", "ValidationsPassing", "The agent's validations are passing" \
        }
#define UNKNOWN_V \
        { \
                "Unknown", "ValidationsUnknown", "The agent's validations have not yet been calculated" \
        }
#define NOT_STARTED \
        { \
                "False", "InstallationNotStarted", "The installation has not yet started" \
        }
#define BOUND \
        { \
                "True", "Bound", "The agent is bound to a cluster deployment" \
        }
#define UNBOUND \
        { \
                "False", "Unbound", "The agent is not bound to any cluster deployment" \
        }
#define BINDING_ROW(t) \
        { \
                "False", "Binding", "The agent is currently binding to a cluster deployment" \
        }
#define UNBINDING_ROW \
        { \
                "False", "Unbinding", "The agent is currently unbinding from a cluster deployment" \
        }
#define VALID \
        ",\"validations_info\":\"{\\\"hardware\\\":[{\\\"id\\\":\\\"has-inventory\\\",\\\"status\\\":" \
        "\\\"success\\\",\\\"message\\\":\\\"Valid inventory exists for the host\\\"}]}\""
#define FAILING \
        ",\"validations_info\":\"{\\\"hardware\\\":[{\\\"id\\\":\\\"has-min-cpu-cores\\\",\\\"status\\\":" \
        "\\\"failure\\\",\\\"message\\\":\\\"The host is not eligible to participate in Openshift Cluster " \
        "because the " \
        "minimum required CPU cores for any role is 2, found only " \
        "1\\\"},{\\\"id\\\":\\\"ntp\\\",\\\"status\\\":" \
        "\\\"disabled\\\",\\\"message\\\":\\\"disabled\\\"}]}\""

static const AgentCase agent_cases[] = {
        { "discovering", false, NULL, CONNECTED, NOT_READY, UNKNOWN_V, NOT_STARTED, BOUND },
        { "known",
          true,
          VALID,
          CONNECTED,
          { "True", "AgentIsReady", "The agent is ready to begin the installation" },
          PASSING,
          NOT_STARTED,
          BOUND },
        { "known",
          false,
          VALID,
          CONNECTED,
          { "False", "AgentIsNotApproved", "The agent is not approved" },
          PASSING,
          NOT_STARTED,
          BOUND },
        { "insufficient",
          true,
          FAILING,
          CONNECTED,
          NOT_READY,
          { "False", "ValidationsFailing",
            "The agent's validations are failing: The host is not eligible to participate in Openshift "
            "Cluster "
            "because the minimum required CPU cores for any role is 2, found only 1" },
          NOT_STARTED,
          BOUND },
        { "disconnected", true, VALID, DISCONNECTED, NOT_READY, PASSING, NOT_STARTED, BOUND },
        { "pending-for-input",
          true,
          FAILING,
          CONNECTED,
          NOT_READY,
          { "False", "ValidationsUserPending",
            "The agent's validations are pending for user: The host is not eligible to participate in "
            "Openshift "
            "Cluster because the minimum required CPU cores for any role is 2, found only 1" },
          NOT_STARTED,
          BOUND },
        { "preparing-for-installation",
          true,
          VALID,
          CONNECTED,
          INSTALLING_REQ,
          PASSING,
          { "False", "InstallationInProgress",
            "The installation is in progress: info of preparing-for-installation" },
          BOUND },
        { "preparing-successful",
          true,
          VALID,
          CONNECTED,
          INSTALLING_REQ,
          PASSING,
          { "False", "InstallationInProgress",
            "The installation is in progress: info of preparing-successful" },
          BOUND },
        { "installing",
          true,
          VALID,
          CONNECTED,
          INSTALLING_REQ,
          PASSING,
          { "False", "InstallationInProgress", "The installation is in progress: info of installing" },
          BOUND },
        { "installing-in-progress",
          true,
          VALID,
          CONNECTED,
          INSTALLING_REQ,
          PASSING,
          { "False", "InstallationInProgress",
            "The installation is in progress: info of installing-in-progress" },
          BOUND },
        { "installing-pending-user-action",
          true,
          VALID,
          CONNECTED,
          INSTALLING_REQ,
          PASSING,
          { "False", "InstallationInProgress",
            "The installation is in progress: info of installing-pending-user-action" },
          BOUND },
        { "installed",
          true,
          VALID,
          CONNECTED,
          STOPPED_REQ,
          PASSING,
          { "True", "InstallationCompleted", "The installation has completed: info of installed" },
          BOUND },
        { "error",
          true,
          VALID,
          CONNECTED,
          STOPPED_REQ,
          PASSING,
          { "False", "InstallationFailed", "The installation has failed: info of error" },
          BOUND },
        { "added-to-existing-cluster",
          true,
          VALID,
          CONNECTED,
          STOPPED_REQ,
          PASSING,
          { "True", "InstallationCompleted",
            "The installation has completed: info of added-to-existing-cluster" },
          BOUND },
        { "binding", true, VALID, CONNECTED, BINDING_ROW(), BINDING_ROW(), BINDING_ROW(), BINDING_ROW() },
        { "unbinding", true, VALID, CONNECTED, UNBINDING_ROW, UNBINDING_ROW, UNBINDING_ROW, UNBINDING_ROW },
        { "unbinding-pending-user-action",
          true,
          VALID,
          CONNECTED,
          UNBINDING_ROW,
          UNBINDING_ROW,
          UNBINDING_ROW,
          { "False", "UnbindingPendingUserAction",
            "The agent is currently unbinding; Pending host reboot from infraenv image" } },
        { "known-unbound",
          false,
          VALID,
          CONNECTED,
          { "False", "AgentIsNotApproved", "The agent is not approved" },
          PASSING,
          NOT_STARTED,
          UNBOUND },
        { "insufficient-unbound",
          false,
          FAILING,
          CONNECTED,
          NOT_READY,
          { "False", "ValidationsFailing",
            "The agent's validations are failing: The host is not eligible to participate in Openshift "
            "Cluster "
            "because the minimum required CPU cores for any role is 2, found only 1" },
          NOT_STARTED,
          UNBOUND },
        { "discovering-unbound", false, NULL, CONNECTED, NOT_READY, UNKNOWN_V, NOT_STARTED, UNBOUND },
        { "disconnected-unbound", false, VALID, DISCONNECTED, NOT_READY, PASSING, NOT_STARTED, UNBOUND },
        { "resetting",
          false,
          VALID,
          CONNECTED,
          { "Unknown", "UnknownStatus", "The installation status is currently not recognized: resetting" },
          PASSING,
          { "Unknown", "UnknownStatus", "The installation status is currently not recognized: resetting" },
          BOUND },
};

static void assert_row(json_object *a, const char *type, const Row *r, const char *status)
{
        json_object *c = hub_conditions_find(a, type);

        if (!c || !streq_ptr(json_get_string(c, "status"), r->s) ||
            !streq_ptr(json_get_string(c, "reason"), r->r) ||
            !streq_ptr(json_get_string(c, "message"), r->m))
                test_fail(__FILE__, __LINE__, "host %s, %s: %s/%s \"%s\", expected %s/%s \"%s\"", status,
                          type, strna(json_get_string(c, "status")), strna(json_get_string(c, "reason")),
                          strna(json_get_string(c, "message")), r->s, r->r, r->m);
}

TEST(conditions_of_every_host_status)
{
        for (size_t i = 0; i < ELEMENTSOF(agent_cases); i++) {
                const AgentCase *t = &agent_cases[i];
                _cleanup_(json_object_putp) json_object *a =
                        agent(NULL, t->approved ? "{\"approved\":true}" : "{\"approved\":false}");
                _cleanup_(json_object_putp) json_object *h = host(t->status, t->extra);

                ASSERT_OK(agent_status(a, h, CID, NULL, false, IE_FILES_URL, NOW));
                assert_row(a, "Connected", &t->connected, t->status);
                assert_row(a, "RequirementsMet", &t->requirements, t->status);
                assert_row(a, "Validated", &t->validated, t->status);
                assert_row(a, "Installed", &t->installed, t->status);
                assert_row(a, "Bound", &t->bound, t->status);
                ASSERT_CONDITION(a, "SpecSynced", "True", "SyncOK",
                                 "The Spec has been successfully applied");
                ASSERT_STREQ(hubtest_str(a, "status.debugInfo.state"), t->status);
                ASSERT_STREQ(hubtest_str(a, "status.role"), "master");
        }
}

TEST(status_without_a_host_and_sync_errors)
{
        _cleanup_(json_object_putp) json_object *a = agent(NULL, NULL), *h = host("known", VALID);

        ASSERT_OK(agent_status(a, NULL, NULL, NULL, false, NULL, NOW));
        ASSERT_CONDITION(a, "Installed", "Unknown", "NotAvailable", "Information not available");
        ASSERT_CONDITION(a, "Connected", "Unknown", "NotAvailable", "Information not available");
        ASSERT_CONDITION(a, "RequirementsMet", "Unknown", "NotAvailable", "Information not available");
        ASSERT_CONDITION(a, "Validated", "Unknown", "NotAvailable", "Information not available");
        ASSERT_CONDITION(a, "Bound", "Unknown", "NotAvailable", "Information not available");
        ASSERT_OK(agent_status(a, h, NULL, "Hostname is invalid", true, NULL, NOW));
        ASSERT_CONDITION(a, "SpecSynced", "False", "InputError",
                         "The Spec could not be synced due to an input error: Hostname is invalid");
        ASSERT_OK(agent_status(a, h, NULL, "connection refused", false, NULL, NOW));
        ASSERT_CONDITION(a, "SpecSynced", "False", "BackendError",
                         "The Spec could not be synced due to backend error: connection refused");
}

TEST(status_fields)
{
        _cleanup_(json_object_putp) json_object *a = agent(NULL, NULL);
        _cleanup_(json_object_putp) json_object *h = host(
                "installing-in-progress",
                ",\"cluster_id\":\"" CID
                "\",\"bootstrap\":true,\"installation_disk_id\":\"/dev/disk/by-path/p\","
                "\"progress\":{\"current_stage\":\"Writing image to disk\",\"progress_info\":\"40%\","
                "\"installation_percentage\":42,\"stage_started_at\":\"2026-09-21T14:01:02.345Z\","
                "\"stage_updated_at\":\"2026-09-21T14:02:03.456Z\"},\"progress_stages\":[\"Installing\","
                "\"Writing image to disk\",\"Rebooting\"],\"logs_collected_at\":\"2026-09-21T14:03:00Z\","
                "\"ntp_sources\":\"[{\\\"source_name\\\":\\\"ntp.lab\\\",\\\"source_state\\\":"
                "\\\"synced\\\"}]\"");

        ASSERT_OK(agent_status(a, h, CID, NULL, false, IE_FILES_URL, NOW));
        ASSERT_STREQ(hubtest_str(a, "status.progress.currentStage"), "Writing image to disk");
        ASSERT_STREQ(hubtest_str(a, "status.progress.progressInfo"), "40%");
        ASSERT_STREQ(hubtest_str(a, "status.progress.stageStartTime"), "2026-09-21T14:01:02Z");
        ASSERT_EQ(json_object_array_length(json_get_path(a, "status.progress.progressStages")), 3);
        ASSERT_STREQ(hubtest_str(a, "status.installation_disk_id"), "/dev/disk/by-path/p");
        /* on the public base URL with the infra-env's key, as the service's
         * controllers make them (agent_controller.go populateEventsURL) */
        ASSERT_STREQ(hubtest_str(a, "status.debugInfo.eventsURL"),
                     PUBLIC "/api/assisted-install/v2/events?api_key=k&host_id=" HOST);
        ASSERT_STREQ(hubtest_str(a, "status.debugInfo.logsURL"),
                     PUBLIC "/api/assisted-install/v2/clusters/" CID "/logs?api_key=k&host_id=" HOST
                            "&logs_type=host");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get_path(a, "status.ntpSources"), 0),
                                 "sourceState"),
                     "synced");
        {
                bool b = false;

                ASSERT_OK(json_get_bool(json_get(a, "status"), "bootstrap", &b));
                ASSERT_TRUE(b);
        }
}

/* ---- the whole decide: finalizer, annotations, spec → service ---- */

TEST(finalizer_annotations_and_nothing_twice)
{
        Fixture f;
        HubTestRun run;
        json_object *a = agent(NULL, NULL);

        json_object_object_del(json_get(a, "metadata"), "finalizers");
        fixture(&f, a,
                host("known-unbound",
                     ",\"inventory\":\"{\\\"hostname\\\":\\\"h1\\\",\\\"timestamp\\\":1700000000}\"" VALID));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_AGENT));
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_AGENT_STATE), "known-unbound");
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_AGENT_ROLE), "auto-assign");
        /* without the timestamp that moves at every inventory */
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_AGENT_INVENTORY),
                     "{\"hostname\":\"h1\"}");
        ASSERT_CONDITION(f.o.base.object, "Bound", "False", "Unbound", NULL);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        /* the inventory again, only its timestamp new: nothing to write */
        json_object_object_add(f.o.host, "inventory",
                               json_object_new_string("{\"hostname\":\"h1\",\"timestamp\":1700000060}"));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(run.writes.n, 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(spec_to_service_field_by_field)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *w;

        fixture(&f,
                agent(NULL,
                      "{\"approved\":true,\"role\":\"master\",\"hostname\":\"master-0\","
                      "\"installation_disk_id\":\"/dev/disk/by-id/wwn-0x2\",\"machineConfigPool\":\"infra\","
                      "\"nodeLabels\":{\"b\":\"2\",\"a\":\"1\"},"
                      "\"installerArgs\":\"[\\\"--append-karg\\\", \\\"console=ttyS0\\\"]\","
                      "\"ignitionConfigOverrides\":\"{\\\"ignition\\\":{\\\"version\\\":\\\"3.1.0\\\"}}\"}"),
                host("known-unbound", ",\"installation_disk_id\":\"/dev/disk/by-id/wwn-0x1\"" VALID));
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "installer-args", 201, NULL, NULL },
                                             { "host-ignition", 201, NULL, NULL },
                                             { "update-host", 201, NULL, NULL },
                                             { NULL } },
                          &run);
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 0);
        ASSERT_STREQ(w->path, "/v2/infra-envs/ie-1/hosts/" HOST "/installer-args");
        {
                _cleanup_free_ char *t = json_to_string(w->body, 0);

                ASSERT_STREQ(t, "{\"args\":[\"--append-karg\",\"console=ttyS0\"]}");
        }
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 1);
        ASSERT_STREQ(w->path, "/v2/infra-envs/ie-1/hosts/" HOST "/ignition");
        w = hubtest_write(&run, HUB_WRITE_SERVICE, 2);
        ASSERT_STREQ(w->tag, "update-host");
        ASSERT_STREQ(json_get_string(w->body, "host_name"), "master-0");
        ASSERT_STREQ(json_get_string(w->body, "host_role"), "master");
        ASSERT_STREQ(json_get_string(w->body, "machine_config_pool_name"), "infra");
        ASSERT_STREQ(
                hubtest_str(json_object_array_get_idx(json_get(w->body, "disks_selected_config"), 0), "id"),
                "/dev/disk/by-id/wwn-0x2");
        ASSERT_EQ(json_object_array_length(json_get(w->body, "node_labels")), 2);
        /* the calls first; the status once their answers are in */
        ASSERT_EQ(run.writes.writes[run.writes.n - 1].kind, HUB_WRITE_PATCH_STATUS);
        ASSERT_CONDITION(f.o.base.object, "SpecSynced", "True", "SyncOK", NULL);
        hubtest_run_done(&run);

        /* the host took them: nothing more is sent */
        json_object_object_add(f.o.host, "installer_args",
                               json_object_new_string("[\"--append-karg\",\"console=ttyS0\"]"));
        json_object_object_add(f.o.host, "ignition_config_overrides",
                               json_object_new_string("{\"ignition\":{\"version\":\"3.1.0\"}}"));
        json_object_object_add(f.o.host, "requested_hostname", json_object_new_string("master-0"));
        json_object_object_add(f.o.host, "role", json_object_new_string("master"));
        json_object_object_add(f.o.host, "machine_config_pool_name", json_object_new_string("infra"));
        json_object_object_add(f.o.host, "installation_disk_id",
                               json_object_new_string("/dev/disk/by-id/wwn-0x2"));
        json_object_object_add(f.o.host, "node_labels", json_object_new_string("{\"a\":\"1\",\"b\":\"2\"}"));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(spec_errors)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, agent(NULL, "{\"approved\":true,\"installerArgs\":\"not json\"}"),
                host("known-unbound", VALID));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(
                f.o.base.object, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: Fail to unmarshal installer args for "
                "host " HOST " in infraEnv ie-1");
        ASSERT_EQ(run.requeue_after, 0);
        hubtest_run_done(&run);
        fixture_done(&f);

        fixture(&f, agent(NULL, "{\"approved\":true,\"hostname\":\"Bad_Name\"}"),
                host("known-unbound", VALID));
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "update-host", 400, NULL,
                                               "Hostname does not pass required regex validation" },
                                             { NULL } },
                          &run);
        ASSERT_CONDITION(
                f.o.base.object, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: Hostname does not pass required regex "
                "validation");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* outside the states it can be set in, no update (upstream's silence) */
        fixture(&f, agent(NULL, "{\"approved\":true,\"hostname\":\"late\"}"), host("installing", VALID));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- binding (§5.2 step 6) ---- */

static void with_cd(Fixture *f, bool registered)
{
        f->o.install.cd.object = hubtest_jsonf(
                "{\"metadata\":{\"name\":\"single-node\",\"namespace\":\"spoke\"%s}}",
                registered ? ",\"annotations\":{\"" HUB_ANNOTATION_CLUSTER_ID "\":\"" CID "\"}" : "");
}

TEST(binds_unbinds_and_refuses)
{
        Fixture f;
        HubTestRun run;

        /* bound in the spec, not in the service: BindHost */
        fixture(&f,
                agent(NULL, "{\"approved\":true,\"clusterDeploymentName\":{\"name\":\"single-node\","
                            "\"namespace\":\"spoke\"}}"),
                host("known-unbound", VALID));
        with_cd(&f, true);
        hubtest_reconcile(
                agent_decide, &f.o.base,
                (HubTestAnswer[]){ { "bind-host", 200,
                                     "{\"id\":\"" HOST "\",\"infra_env_id\":\"ie-1\",\"status\":\"binding\","
                                     "\"cluster_id\":\"" CID "\"}",
                                     NULL },
                                   { NULL } },
                &run);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/infra-envs/ie-1/hosts/" HOST "/actions/bind");
        ASSERT_STREQ(json_get_string(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body, "cluster_id"), CID);
        ASSERT_CONDITION(f.o.base.object, "Bound", "False", "Binding", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* the ClusterDeployment not registered yet */
        fixture(&f,
                agent(NULL, "{\"approved\":true,\"clusterDeploymentName\":{\"name\":\"single-node\","
                            "\"namespace\":\"spoke\"}}"),
                host("known-unbound", VALID));
        with_cd(&f, false);
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(f.o.base.object, "SpecSynced", "False", "BackendError",
                         "The Spec could not be synced due to backend error: record not found");
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_ON_ERROR);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* the ClusterDeployment missing */
        fixture(&f,
                agent(NULL, "{\"approved\":true,\"clusterDeploymentName\":{\"name\":\"nope\","
                            "\"namespace\":\"spoke\"}}"),
                host("known-unbound", VALID));
        f.o.install.cd.error = -ENOENT;
        f.o.install.cd.message = strdup("clusterdeployments.hive.openshift.io \"nope\" not found");
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(f.o.base.object, "SpecSynced", "False", "BackendError",
                         "The Spec could not be synced due to backend error: failed to get "
                         "clusterDeployment with name "
                         "nope in namespace spoke: clusterdeployments.hive.openshift.io \"nope\" not found");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* unbound in the spec, bound in the service: UnbindHost */
        fixture(&f, agent(NULL, NULL), host("known", ",\"cluster_id\":\"" CID "\"" VALID));
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "unbind-host", 200,
                                               "{\"id\":\"" HOST "\",\"infra_env_id\":\"ie-1\",\"status\":"
                                               "\"unbinding\"}",
                                               NULL },
                                             { NULL } },
                          &run);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/infra-envs/ie-1/hosts/" HOST "/actions/unbind");
        ASSERT_CONDITION(f.o.base.object, "Bound", "False", "Unbinding", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* unbinding a day-1 host in the middle of its installation */
        fixture(&f, agent(NULL, NULL), host("installing", ",\"cluster_id\":\"" CID "\"" VALID));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_CONDITION(
                f.o.base.object, "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: cancelling non-day-2 host [" HOST
                "] in the middle of installation is not allowed");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* bound to another cluster: unbound first */
        fixture(&f,
                agent(NULL, "{\"approved\":true,\"clusterDeploymentName\":{\"name\":\"single-node\","
                            "\"namespace\":\"spoke\"}}"),
                host("known", ",\"cluster_id\":\"00000000-0000-0000-0000-000000000001\"" VALID));
        with_cd(&f, true);
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "unbind-host", 200, NULL, NULL }, { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "unbind-host"), 1);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(auto_approval_from_the_infraenv)
{
        Fixture f;
        HubTestRun run;
        bool approved = false;

        fixture(&f, agent(NULL, NULL), host("known-unbound", VALID));
        json_object_put(f.o.infraenv);
        f.o.infraenv = infraenv(",\"agentApproval\":{\"autoApprove\":true}");
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_OK(json_get_bool(json_get(f.o.base.object, "spec"), "approved", &approved));
        ASSERT_TRUE(approved);
        ASSERT_CONDITION(f.o.base.object, "RequirementsMet", "True", "AgentIsReady", NULL);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- day-2 on the spoke (§5.6) ---- */

static void day2_fixture(Fixture *f, const char *stage, json_object *node)
{
        fixture(f,
                agent(NULL,
                      "{\"approved\":true,\"hostname\":\"worker-0\",\"clusterDeploymentName\":{\"name\":"
                      "\"single-node\",\"namespace\":\"spoke\"},\"nodeLabels\":{\"zone\":\"a\"}}"),
                hubtest_jsonf(
                        "{\"id\":\"" HOST
                        "\",\"infra_env_id\":\"ie-1\",\"status\":\"added-to-existing-cluster\","
                        "\"status_info\":\"Host has rebooted and no further updates will be posted\","
                        "\"role\":\"worker\",\"kind\":\"AddToExistingClusterHost\",\"cluster_id\":\"" CID
                        "\","
                        "\"requested_hostname\":\"worker-0\",\"node_labels\":\"{\\\"zone\\\":\\\"a\\\"}\","
                        "\"progress\":{\"current_stage\":\"%s\"}}",
                        stage));
        with_cd(f, true);
        f->o.install.spoke_read = true;
        f->o.install.spoke_kubeconfig = strdup("apiVersion: v1\nkind: Config\n");
        f->o.install.spoke_node = node;
        f->o.install.spoke_csrs = json_object_new_array();
        json_object_array_add(f->o.install.spoke_csrs,
                              csr("csr-client", CSR_CLIENT, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                                  "[\"digital signature\",\"client auth\"]"));
        json_object_array_add(f->o.install.spoke_csrs,
                              csr("csr-serving", CSR_SERVING, "system:node:worker-0",
                                  "[\"system:nodes\",\"system:authenticated\"]",
                                  "[\"digital signature\",\"server auth\"]"));
        json_object_array_add(f->o.install.spoke_csrs,
                              csr("csr-other", CSR_OTHER, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                                  "[\"digital signature\",\"client auth\"]"));
}

TEST(day2_client_csr_before_the_node)
{
        Fixture f;
        HubTestRun run;
        const HubWrite *w;

        day2_fixture(&f, "Rebooting", NULL);
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        /* the client CSR of this node only; the serving one waits for the node */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1);
        w = hubtest_write(&run, HUB_WRITE_SPOKE, 0);
        ASSERT_STREQ(w->name, "csr-client");
        ASSERT_STREQ(w->spoke_verb, "approve");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get_path(w->body, "status.conditions"), 0),
                                 "type"),
                     "Approved");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(
                                         json_get_path(f.o.base.object, "status.csrStatus.approvedCSRs"), 0),
                                 "type"),
                     "client");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        /* again in a minute */
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_APPROVE_CSRS);
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(day2_serving_csr_labels_joined_then_done)
{
        Fixture f;
        HubTestRun run;

        day2_fixture(&f, "Rebooting", node(false));
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "day2-progress", 200, NULL, NULL }, { NULL } }, &run);
        /* the serving CSR validated against the node */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->name, "csr-serving");
        ASSERT_STREQ(json_get_string(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body, "current_stage"),
                     "Joined");
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path,
                     "/v2/infra-envs/ie-1/hosts/" HOST "/progress");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.progress.currentStage"), "Joined");
        hubtest_run_done(&run);
        fixture_done(&f);

        day2_fixture(&f, "Joined", node(true));
        /* both CSRs approved already */
        for (size_t i = 0; i < 2; i++)
                json_object_object_add(
                        json_get(json_object_array_get_idx(f.o.install.spoke_csrs, i), "status"),
                        "conditions", hubtest_json("[{\"type\":\"Approved\",\"status\":\"True\"}]"));
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "day2-progress", 200, NULL, NULL }, { NULL } }, &run);
        ASSERT_STREQ(json_get_string(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->body, "current_stage"),
                     "Done");
        /* the node's labels, once Ready */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->spoke_verb, "patch");
        {
                _cleanup_free_ char *t = json_to_string(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->body, 0);

                ASSERT_STREQ(t, "{\"metadata\":{\"labels\":{\"zone\":\"a\"}}}");
        }
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.progress.currentStage"), "Done");
        ASSERT_EQ(run.requeue_after, 0);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* Over REST the service sets a day-2 host Done at its reboot (it keeps
 * Rebooting only for its own controllers, in kube-api mode): cradle-hub
 * still approves the node's CSRs and labels it, sends no progress (the
 * service takes none now), and the Agent shows the node's stage, Done only
 * once it is Ready; from then on the host is left alone. */
TEST(day2_host_the_service_set_done_at_its_reboot)
{
        Fixture f;
        HubTestRun run;

        /* no node yet: the client CSR, the Agent at Rebooting */
        day2_fixture(&f, "Done", NULL);
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->name, "csr-client");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.progress.currentStage"), "Rebooting");
        ASSERT_TRUE(run.requeue_after > 0);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* the node, not Ready: the serving CSR, Joined */
        day2_fixture(&f, "Done", node(false));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->name, "csr-serving");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.progress.currentStage"), "Joined");
        hubtest_run_done(&run);
        fixture_done(&f);

        /* Ready before its serving CSR came: still Joined (upstream waits for
         * both CSRs), and looked at again */
        day2_fixture(&f, "Done", node(true));
        json_object_array_del_idx(f.o.install.spoke_csrs, 1, 2);
        json_object_object_add(json_get(json_object_array_get_idx(f.o.install.spoke_csrs, 0), "status"),
                               "conditions", hubtest_json("[{\"type\":\"Approved\",\"status\":\"True\"}]"));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.progress.currentStage"), "Joined");
        ASSERT_TRUE(run.requeue_after > 0);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* Ready: labelled, Done, no more requeues */
        day2_fixture(&f, "Done", node(true));
        for (size_t i = 0; i < 2; i++)
                json_object_object_add(
                        json_get(json_object_array_get_idx(f.o.install.spoke_csrs, i), "status"),
                        "conditions", hubtest_json("[{\"type\":\"Approved\",\"status\":\"True\"}]"));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->spoke_verb, "patch");
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.progress.currentStage"), "Done");
        ASSERT_EQ(run.requeue_after, 0);
        hubtest_run_done(&run);

        /* the Agent says Done: nothing of the spoke any more */
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 0);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.progress.currentStage"), "Done");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(csr_validation)
{
        _cleanup_(json_object_putp) json_object *a = agent(NULL, "{\"hostname\":\"worker-0\"}"),
                                                *n = node(true);
        static const struct {
                const char *request, *username, *groups, *usages;
                bool with_node;
                int kind;
        } rows[] = {
                { CSR_CLIENT, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, "[\"digital signature\",\"client auth\"]",
                  false, 1 },
                { CSR_CLIENT, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                  "[\"key encipherment\",\"digital signature\",\"client auth\"]", false, 1 },
                { CSR_CLIENT, "system:anonymous", BOOTSTRAPPER_GROUPS,
                  "[\"digital signature\",\"client auth\"]", false, 0 },
                { CSR_CLIENT, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, "[\"digital signature\"]", false, 0 },
                { CSR_SERVING, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, "[\"digital signature\",\"client auth\"]",
                  false, 0 },
                { CSR_SERVING, "system:node:worker-0", "[\"system:nodes\",\"system:authenticated\"]",
                  "[\"digital signature\",\"server auth\"]", true, 2 },
                { CSR_SERVING, "system:node:worker-1", "[\"system:nodes\",\"system:authenticated\"]",
                  "[\"digital signature\",\"server auth\"]", true, 0 },
                { CSR_OTHER, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, "[\"digital signature\",\"client auth\"]",
                  false, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                _cleanup_(json_object_putp) json_object *c =
                        csr("c", rows[i].request, rows[i].username, rows[i].groups, rows[i].usages);
                _cleanup_free_ char *why = NULL;
                int k = agent_csr_kind(a, c, rows[i].with_node ? n : NULL, &why);

                if (k != rows[i].kind)
                        test_fail(__FILE__, __LINE__, "row %zu: kind %d, expected %d (%s)", i, k,
                                  rows[i].kind, strna(why));
        }
        /* a serving CSR naming an address the node does not have */
        {
                _cleanup_(json_object_putp)
                        json_object *c = csr("c", CSR_SERVING, "system:node:worker-0",
                                             "[\"system:nodes\",\"system:authenticated\"]",
                                             "[\"digital signature\",\"server auth\"]"),
                                    *other = node(true);
                _cleanup_free_ char *why = NULL;

                json_object_object_add(
                        json_get(other, "status"), "addresses",
                        hubtest_json("[{\"type\":\"InternalIP\",\"address\":\"198.51.100.99\"}]"));
                ASSERT_EQ(agent_csr_kind(a, c, other, &why), 0);
                ASSERT_CONTAINS(why, "198.51.100.21");
        }
}

/* ---- restore, deletion ---- */

TEST(restore_from_annotations)
{
        Fixture f;
        HubTestRun run;

        fixture(&f,
                agent(",\"annotations\":{\"" HUB_ANNOTATION_AGENT_STATE
                      "\":\"known\",\"" HUB_ANNOTATION_AGENT_ROLE
                      "\":\"master\",\"" HUB_ANNOTATION_AGENT_INVENTORY
                      "\":\"{\\\"hostname\\\":\\\"m0\\\"}\"}",
                      "{\"approved\":true}"),
                NULL);
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.inventory.hostname"), "m0");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.debugInfo.state"), "known");
        ASSERT_CONDITION(f.o.base.object, "RequirementsMet", "True", "AgentIsReady", NULL);
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_LONGER_ON_ERROR);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* registered in another namespace's infra-env: cannot restore */
        fixture(&f, agent(NULL, NULL), NULL);
        f.o.install.conflict_infra_env_id = strdup("ie-9");
        f.o.install.conflict_namespace = strdup("elsewhere");
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_CONDITION(f.o.base.object, "SpecSynced", "False", "InputError",
                         "The Spec could not be synced due to an input error: Host with ID " HOST
                         " already exists in infraEnv ie-9 (namespace: elsewhere). Cannot restore.");
        hubtest_run_done(&run);
        fixture_done(&f);
}

TEST(deletion_deregisters_the_host)
{
        Fixture f;
        HubTestRun run;

        fixture(&f, agent(",\"deletionTimestamp\":\"2026-09-21T14:00:00Z\"", NULL),
                host("known-unbound", NULL));
        hubtest_reconcile(agent_decide, &f.o.base,
                          (HubTestAnswer[]){ { "deregister-host", 204, NULL, NULL }, { NULL } }, &run);
        ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SERVICE, 0)->path, "/v2/infra-envs/ie-1/hosts/" HOST);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_AGENT));
        hubtest_run_done(&run);
        fixture_done(&f);

        /* the service refuses: Cleanup False, again in 10 s, the finalizer stays */
        fixture(&f, agent(",\"deletionTimestamp\":\"2026-09-21T14:00:00Z\"", NULL),
                host("known-unbound", NULL));
        hubtest_reconcile(
                agent_decide, &f.o.base,
                (HubTestAnswer[]){ { "deregister-host", 500, NULL, "database is locked" }, { NULL } }, &run);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_AGENT));
        ASSERT_CONDITION(f.o.base.object, "Cleanup", "False", "CleanupFailed",
                         "failed to deregister host: " HOST ": database is locked");
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_ON_ERROR);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- issue 23, finding 2: the service's texts bounded ---- */

/* the host's texts in the Agent's status are bounded */
TEST(host_texts_bounded_in_the_status)
{
        _cleanup_free_ char *huge = malloc(3 * 1024 * 1024 + 1), *extra = NULL;
        _cleanup_(json_object_putp) json_object *a = agent(NULL, NULL), *h = NULL;

        ASSERT_NOT_NULL(huge);
        memset(huge, 'x', 3 * 1024 * 1024);
        huge[3 * 1024 * 1024] = 0;
        extra = strdup_printf(",\"cluster_id\":\"" CID "\",\"progress\":{\"current_stage\":\"Installing\","
                              "\"progress_info\":\"%s\"}",
                              huge);
        h = host("installing-in-progress", extra);
        json_object_object_add(h, "status_info", json_object_new_string(huge));
        ASSERT_OK(agent_status(a, h, CID, huge, false, NULL, NOW));
        ASSERT_TRUE(strlen(hubtest_str(a, "status.debugInfo.stateInfo")) <= HUB_TEXT_MAX);
        ASSERT_TRUE(strlen(hubtest_str(a, "status.progress.progressInfo")) <= HUB_TEXT_MAX);
        ASSERT_TRUE(strlen(hubtest_str(hub_conditions_find(a, "SpecSynced"), "message")) <= HUB_TEXT_MAX);
        ASSERT_TRUE(strlen(hubtest_str(hub_conditions_find(a, "Installed"), "message")) <= HUB_TEXT_MAX);
}

/* ---- issue 23, finding 9: the mirror annotations stay bounded ---- */

/* a server with nd disks (every third one eligible for the installation,
 * each with a SMART report of a kilobyte) and ni NICs */
static char *big_inventory(unsigned nd, unsigned ni)
{
        _cleanup_(json_object_putp) json_object *inv = hubtest_json(
                "{\"hostname\":\"big-0\",\"bmc_address\":\"0.0.0.0\",\"timestamp\":1700000000,"
                "\"cpu\":{\"architecture\":\"x86_64\",\"count\":256,\"flags\":[\"fpu\",\"vmx\"],"
                "\"frequency\":2100,\"model_name\":\"Xeon\"},"
                "\"memory\":{\"physical_bytes\":4398046511104,\"usable_bytes\":4398046511104},"
                "\"system_vendor\":{\"manufacturer\":\"Big Iron\",\"product_name\":\"S-9000\","
                "\"serial_number\":\"SN1\"},\"boot\":{\"current_boot_mode\":\"uefi\"},"
                "\"routes\":[{\"destination\":\"0.0.0.0\",\"family\":2,\"gateway\":\"198.51.100.1\","
                "\"interface\":\"eth0\"}]}");
        json_object *disks = json_new_array(), *nics = json_new_array();
        char smart[1025];

        memset(smart, 's', sizeof(smart) - 1);
        smart[sizeof(smart) - 1] = 0;
        ASSERT_OK(json_add(inv, "disks", disks));
        ASSERT_OK(json_add(inv, "interfaces", nics));
        for (unsigned i = 0; i < nd; i++)
                ASSERT_OK(json_append(
                        disks,
                        hubtest_jsonf(
                                "{\"id\":\"/dev/disk/by-path/pci-0000:%02x:00.0-sas-%u\","
                                "\"by_path\":\"/dev/disk/by-path/pci-0000:%02x:00.0-sas-%u\","
                                "\"by_id\":\"/dev/disk/by-id/wwn-0x5000c500%08x\","
                                "\"name\":\"sd%u\",\"path\":\"/dev/sd%u\",\"drive_type\":\"HDD\","
                                "\"size_bytes\":16000900661248,\"serial\":\"ZL%08u\","
                                "\"model\":\"ST16000NM\",\"vendor\":\"SEAGATE\",\"wwn\":\"0x5000c500%08x\","
                                "\"hctl\":\"0:0:%u:0\",\"bootable\":false,\"smart\":\"%s\","
                                "\"holders\":\"\",\"installation_eligibility\":{\"eligible\":%s,"
                                "\"not_eligible_reasons\":%s}}",
                                i / 64, i, i / 64, i, i, i, i, i, i, i, smart, i % 3 == 0 ? "true" : "false",
                                i % 3 == 0 ? "[]" : "[\"Disk is too small\"]")));
        for (unsigned i = 0; i < ni; i++)
                ASSERT_OK(json_append(
                        nics,
                        hubtest_jsonf(
                                "{\"name\":\"ens%u\",\"mac_address\":\"02:00:00:%02x:%02x:%02x\","
                                "\"type\":\"physical\",\"has_carrier\":true,\"mtu\":9000,"
                                "\"speed_mbps\":25000,\"flags\":[\"up\",\"broadcast\",\"multicast\"],"
                                "\"ipv4_addresses\":[\"198.51.100.%u/24\"],\"ipv6_addresses\":[],"
                                "\"vendor\":\"0x15b3\",\"product\":\"0x1017\",\"biosdevname\":\"p%up1\"}",
                                i, (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff, i % 250 + 1, i)));
        return json_to_string(inv, 0);
}

static size_t annotations_bytes(json_object *obj)
{
        size_t n = 0;

        json_object_object_foreach (json_get_path(obj, "metadata.annotations"), k, v)
                n += strlen(k) + strlen(strempty(json_object_get_string(v)));
        return n;
}

TEST(inventory_annotation_bounded)
{
        _cleanup_free_ char *text = big_inventory(500, 300), *small = big_inventory(2, 2), *inv = NULL,
                            *note = NULL;
        _cleanup_(json_object_putp) json_object *parsed = NULL, *status = NULL;
        json_object *disks;

        ASSERT_TRUE(strlen(text) > 800 * 1024);
        /* a usual host: the whole inventory, without its timestamp */
        ASSERT_OK(agent_inventory_annotation(small, HUB_AGENT_INVENTORY_ANNOTATION_MAX, &inv, &note));
        ASSERT_NULL(note);
        ASSERT_NOT_CONTAINS(inv, "timestamp");
        ASSERT_CONTAINS(inv, "\"smart\"");
        ASSERT_CONTAINS(inv, "\"routes\"");
        free(inv);
        inv = NULL;

        ASSERT_OK(agent_inventory_annotation(text, HUB_AGENT_INVENTORY_ANNOTATION_MAX, &inv, &note));
        ASSERT_NOT_NULL(inv);
        ASSERT_TRUE(strlen(inv) <= HUB_AGENT_INVENTORY_ANNOTATION_MAX);
        ASSERT_NOT_NULL(note);
        ASSERT_CONTAINS(note, "of 500 disks and 300 of 300 interfaces, with only the fields that name them");
        ASSERT_OK(json_parse(inv, strlen(inv), BUF_MAX_JSON_DOC, &parsed, NULL));
        ASSERT_STREQ(hubtest_str(parsed, "hostname"), "big-0");
        ASSERT_STREQ(hubtest_str(parsed, "system_vendor.manufacturer"), "Big Iron");
        ASSERT_NULL(json_get(parsed, "routes"));
        /* every NIC (BMAC matches by MAC), the disks the installation may use first */
        ASSERT_EQ(hub_json_array_length(json_get(parsed, "interfaces")), 300u);
        disks = json_get(parsed, "disks");
        ASSERT_TRUE(hub_json_array_length(disks) > 0);
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(disks, 0), "name"), "sd0");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(disks, 1), "name"), "sd3");
        ASSERT_NULL(json_get(json_object_array_get_idx(disks, 0), "smart"));
        /* the restore rebuilds status.inventory from it */
        ASSERT_OK(agent_inventory_status(inv, &status));
        ASSERT_STREQ(hubtest_str(status, "hostname"), "big-0");
        ASSERT_EQ(hub_json_array_length(json_get(status, "interfaces")), 300u);

        /* only the NICs would not fit either: as many as fit */
        {
                _cleanup_free_ char *nics = big_inventory(0, 3000), *inv2 = NULL, *note2 = NULL;

                ASSERT_OK(
                        agent_inventory_annotation(nics, HUB_AGENT_INVENTORY_ANNOTATION_MAX, &inv2, &note2));
                ASSERT_TRUE(strlen(inv2) <= HUB_AGENT_INVENTORY_ANNOTATION_MAX);
                ASSERT_CONTAINS(note2, "0 of 0 disks and ");
        }
}

/* the whole Agent after a reconcile: every annotation together well
 * under the 256 KiB Kubernetes allows; status.inventory has it all */
TEST(agent_annotations_bounded_for_a_huge_host)
{
        Fixture f;
        HubTestRun run;
        _cleanup_free_ char *text = big_inventory(500, 300), *extra = NULL, *vinfo = NULL;
        _cleanup_(json_object_putp) json_object *inv = json_new_string(text), *v = json_new_object(),
                                                *vs = NULL;
        json_object *list = json_new_array();

        /* validations of as many disks, each failing with a long message */
        ASSERT_OK(json_add(v, "hardware", list));
        for (unsigned i = 0; i < 500; i++)
                ASSERT_OK(json_append(list,
                                      hubtest_jsonf("{\"id\":\"disk-%u\",\"status\":\"%s\",\"message\":"
                                                    "\"Disk sd%u is not eligible for the installation: "
                                                    "it is too small, it is rotational, it is removable\"}",
                                                    i, i % 10 ? "success" : "failure", i)));
        vs = json_new_string(json_object_to_json_string(v));
        vinfo = json_to_string(vs, 0);
        extra = strdup_printf(",\"inventory\":%s,\"validations_info\":%s", json_object_to_json_string(inv),
                              vinfo);
        fixture(&f, agent(NULL, NULL), host("known-unbound", extra));
        hubtest_reconcile(agent_decide, &f.o.base, NULL, &run);
        ASSERT_TRUE(annotations_bytes(f.o.base.object) < 128 * 1024);
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_AGENT_INVENTORY_TRIMMED));
        ASSERT_EQ(hub_json_array_length(json_get_path(f.o.base.object, "status.inventory.disks")), 500u);
        ASSERT_EQ(hub_json_array_length(json_get_path(f.o.base.object, "status.inventory.interfaces")),
                  300u);
        hubtest_run_done(&run);
        fixture_done(&f);
}

DEFINE_TEST_MAIN
