/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle-hub as the Cluster API provider (--capi): the decisions of
 * capi-controlplane.c and capi-bootstrap.c, one table case per rule of
 * issue 22's Build §2 and of the contracts (capi.md §1) they keep.
 *
 * The objects are CAPOA's getting-started example's shape
 * (docs/getting_started.md: an OpenshiftAssistedControlPlane with three
 * replicas and a Metal3MachineTemplate), their names made to point at
 * each other.
 */
#include <limits.h>

#include <json-c/json.h>

#include "base64.h"
#include "capi-binding.h"
#include "capi-bootstrap.h"
#include "capi-controlplane.h"
#include "capitest.h"
#include "cleanup.h"
#include "hub-claim.h"
#include "hubtest.h"
#include "hubtest-csr.h"
#include "jsonutil.h"
#include "strutil.h"

/* the registration body: CAPOA's fields, as its clusterdeployment_controller
 * would have put them in the ClusterDeployment and the AgentClusterInstall */
TEST(registers_the_cluster_from_capoa_fields_and_one_infraenv)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        const HubWrite *w;
        json_object *b;

        fixture(&f, oacp(NULL));
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL },
                                             { "register-infraenv", 201, "{\"id\":\"" IEID "\"}", NULL },
                                             { NULL } },
                          &run);
        w = call(&run, "register-cluster");
        ASSERT_NOT_NULL(w);
        ASSERT_STREQ(w->method, "POST");
        ASSERT_STREQ(w->path, "/v2/clusters");
        b = w->body;
        ASSERT_STREQ(hubtest_str(b, "name"), "test-multinode");
        ASSERT_STREQ(hubtest_str(b, "base_dns_domain"), "lab.home");
        ASSERT_STREQ(hubtest_str(b, "openshift_version"), "4.19.0");
        ASSERT_STREQ(hubtest_str(b, "pull_secret"), PS_TEXT);
        ASSERT_STREQ(hubtest_str(b, "ssh_public_key"), "ssh-ed25519 AAAA test");
        ASSERT_STREQ(hubtest_str(b, "cpu_architecture"), "x86_64");
        ASSERT_EQ(json_object_get_int64(json_get(b, "control_plane_count")), 3);
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(json_get(b, "api_vips"), 0), "ip"),
                     "192.168.222.40");
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(json_get(b, "ingress_vips"), 0), "ip"),
                     "192.168.222.41");
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(json_get(b, "cluster_networks"), 0), "cidr"),
                     "10.128.0.0/14");
        ASSERT_EQ(json_object_get_int64(json_get(
                          json_object_array_get_idx(json_get(b, "cluster_networks"), 0), "host_prefix")),
                  23);
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(json_get(b, "service_networks"), 0), "cidr"),
                     "172.30.0.0/16");

        /* one infra-env for the cluster, unbound (hosts are bound one by one) */
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-infraenv"), 1u);
        w = call(&run, "register-infraenv");
        ASSERT_STREQ(w->path, "/v2/infra-envs");
        ASSERT_NULL(json_get(w->body, "cluster_id"));
        ASSERT_STREQ(hubtest_str(w->body, "image_type"), "full-iso");
        ASSERT_STREQ(hubtest_str(w->body, "pull_secret"), PS_TEXT);

        /* the ids recorded in the annotations */
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), IEID);
        fixture_done(&f);
}

/* the claim protocol (hub-claim.h) for both registrations: each marker
 * is written before its call, each id replaces its marker */
TEST(each_registration_is_marked_before_its_call)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        bool marker = false, cluster_id = false;
        unsigned calls = 0;

        fixture(&f, oacp(NULL));
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL },
                                             { "register-infraenv", 201, "{\"id\":\"" IEID "\"}", NULL },
                                             { NULL } },
                          &run);
        /* the stored object as the writes leave it: at each call, the
         * marker (and for the infra-env, the cluster's id beside it) */
        for (size_t i = 0; i < run.writes.n; i++) {
                const HubWrite *w = &run.writes.writes[i];
                json_object *ann = w->kind == HUB_WRITE_PATCH && w->target == HUB_KIND_OACP
                                           ? json_get_path(w->body, "metadata.annotations")
                                           : NULL;
                json_object *v;

                if (ann && json_object_object_get_ex(ann, HUB_ANNOTATION_REGISTERING, &v))
                        marker = v != NULL;
                if (ann && json_get_string(ann, HUB_ANNOTATION_CLUSTER_ID))
                        cluster_id = true;
                if (w->kind == HUB_WRITE_SERVICE && streq_ptr(w->tag, "register-cluster")) {
                        ASSERT_TRUE(marker);
                        calls++;
                }
                if (w->kind == HUB_WRITE_SERVICE && streq_ptr(w->tag, "register-infraenv")) {
                        ASSERT_TRUE(marker && cluster_id);
                        calls++;
                }
        }
        ASSERT_EQ(calls, 2u);
        ASSERT_FALSE(marker);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), IEID);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        fixture_done(&f);
}

/* a marker of holder's, age old, without the id of searched_for (cluster
 * id given: the infra-env's registration was interrupted); the search's
 * answer: candidates (NULL: it failed), each made a second after the
 * marker */
static void marked(Fixture *f, const char *cluster_id, const char *holder, usec_t age,
                   const char *searched_for, const char *candidates)
{
        char ts[32], marker[96];

        hub_format_time(NOW - age, ts);
        snprintf(marker, sizeof(marker), "%s %s", ts, holder);
        fixture(f, oacp(NULL));
        f->o.identity = "hub-2";
        f->o.base.active_since = NOW - 10 * USEC_PER_SEC;
        ASSERT_OK(hub_object_set_annotation(f->o.base.object, HUB_ANNOTATION_REGISTERING, marker));
        if (cluster_id)
                ASSERT_OK(
                        hub_object_set_annotation(f->o.base.object, HUB_ANNOTATION_CLUSTER_ID, cluster_id));
        f->o.searched_for = searched_for;
        if (!candidates) {
                f->o.candidates.status = 503;
                f->o.candidates.error = -EIO;
                f->o.candidates.message = strdup("the service answered 503");
                return;
        }
        f->o.candidates.status = 200;
        f->o.candidates.body = hubtest_json(candidates);
        hub_format_time(NOW - age + USEC_PER_SEC, ts);
        for (size_t i = 0; i < hub_json_array_length(f->o.candidates.body); i++)
                ASSERT_OK(json_add_string(json_object_array_get_idx(f->o.candidates.body, i), "created_at",
                                          ts));
}

TEST(an_interrupted_cluster_registration_is_adopted_not_repeated)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        /* hub-1 crashed after the service committed its registration */
        marked(&f, NULL, "hub-1", 30 * USEC_PER_SEC, HUB_ANNOTATION_CLUSTER_ID,
               "[{\"id\":\"" CID "\",\"name\":\"test-multinode\"},"
               "{\"id\":\"11111111-2222-4333-8444-555555555555\",\"name\":\"someone-else\"}]");
        hubtest_reconcile(
                capi_controlplane_decide, &f.o.base,
                (HubTestAnswer[]){ { "register-infraenv", 201, "{\"id\":\"" IEID "\"}", NULL }, { NULL } },
                &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 0u);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-infraenv"), 1u);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), IEID);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        fixture_done(&f);
}

TEST(an_interrupted_infraenv_registration_is_adopted_not_repeated)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        marked(&f, CID, "hub-1", 30 * USEC_PER_SEC, HUB_ANNOTATION_INFRAENV_ID,
               "[{\"id\":\"" IEID "\",\"name\":\"test-multinode\"}]");
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-"), 0u);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID), IEID);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        fixture_done(&f);
}

TEST(a_registration_the_search_does_not_find_is_made_once)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        /* the call never reached the service; the only infra-env named so
         * is claimed by another control plane */
        marked(&f, CID, "hub-1", 30 * USEC_PER_SEC, HUB_ANNOTATION_INFRAENV_ID,
               "[{\"id\":\"" IEID "\",\"name\":\"test-multinode\"}]");
        ASSERT_OK(strv_extend(&f.o.claimed_ids, IEID));
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "register-infraenv", 201,
                                               "{\"id\":\"99999999-8888-4777-8666-555555555555\"}", NULL },
                                             { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-infraenv"), 1u);
        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_INFRAENV_ID),
                     "99999999-8888-4777-8666-555555555555");
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        fixture_done(&f);
}

TEST(a_registration_waits_for_another_replicas_fresh_marker)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        /* hub-1's marker is newer than this replica's start: hub-1 may
         * still be registering */
        marked(&f, NULL, "hub-1", 2 * USEC_PER_SEC, HUB_ANNOTATION_CLUSTER_ID, "[]");
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_TRUE(run.requeue_after > 0);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID));
        fixture_done(&f);
}

/* a registration the service refused (here: the late-2023 API's answer
 * to control_plane_count) stored nothing: its marker goes, so that the
 * next reconcile registers again instead of searching for a cluster that
 * was never made (and adopting another control plane's of the same name) */
TEST(a_refused_registration_leaves_no_marker)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        fixture(&f, oacp(NULL));
        hubtest_reconcile(
                capi_controlplane_decide, &f.o.base,
                (HubTestAnswer[]){ { "register-cluster", 400,
                                     "{\"code\":\"400\",\"reason\":\"parsing newClusterParams body "
                                     "failed, because json: unknown field \\\"control_plane_count\\\"\"}",
                                     NULL },
                                   { NULL } },
                &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "register-cluster"), 1u);
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID));
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTRATION_REFUSED));
        hubtest_run_done(&run);
        /* the reconcile its own write starts registers nothing: a refusal
         * is tried again after a while */
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_EQ(run.requeue_after, HUB_CLAIM_REFUSAL_BACKOFF);
        fixture_done(&f);
}

/* no answer at all: the call may have reached the service, the marker stays */
TEST(an_unanswered_registration_keeps_its_marker)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        fixture(&f, oacp(NULL));
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "register-cluster", 0, NULL, NULL }, { NULL } }, &run);
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        fixture_done(&f);
}

TEST(a_failed_search_registers_nothing)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        json_object *c;

        marked(&f, NULL, "hub-1", 30 * USEC_PER_SEC, HUB_ANNOTATION_CLUSTER_ID, NULL);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        c = hub_conditions_find(f.o.base.object, HUB_CAPI_COND_MACHINES_CREATED);
        ASSERT_NOT_NULL(c);
        ASSERT_STREQ(json_get_string(c, "reason"), "RegistrationFailed");
        ASSERT_CONTAINS(json_get_string(c, "message"), "503");
        ASSERT_NOT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
        fixture_done(&f);
}

/* as a KCP: a Machine, its OpenshiftAssistedConfig and its infrastructure
 * machine cloned from the template, per replica; owner references and
 * the cluster-name and control-plane labels */
TEST(control_plane_machines_made_as_a_kcp_makes_them)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        const HubWrite *m, *c, *i;

        fixture(&f, oacp(",\"annotations\":{\"cradle.agent-install.openshift.io/cluster-id\":\"" CID "\","
                         "\"cradle.agent-install.openshift.io/infra-env-id\":\"" IEID "\"}"));
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_EQ(creates(&run, HUB_KIND_MACHINE), 3u);
        ASSERT_EQ(creates(&run, HUB_KIND_OAC), 3u);
        ASSERT_EQ(creates(&run, HUB_KIND_OTHER), 3u);
        m = create_of(&run, HUB_KIND_MACHINE, 1);
        c = create_of(&run, HUB_KIND_OAC, 1);
        i = create_of(&run, HUB_KIND_OTHER, 1);
        ASSERT_STREQ(hubtest_str(m->body, "metadata.name"), "test-multinode-1");
        ASSERT_STREQ(hub_object_label(m->body, "cluster.x-k8s.io/cluster-name"), "test-multinode");
        ASSERT_STREQ(hub_object_label(m->body, "cluster.x-k8s.io/control-plane"), "");
        ASSERT_STREQ(hubtest_str(m->body, "spec.clusterName"), "test-multinode");
        ASSERT_STREQ(hubtest_str(m->body, "spec.bootstrap.configRef.kind"), "OpenshiftAssistedConfig");
        ASSERT_STREQ(hubtest_str(m->body, "spec.bootstrap.configRef.apiGroup"),
                     "bootstrap.cluster.x-k8s.io");
        ASSERT_STREQ(hubtest_str(m->body, "spec.bootstrap.configRef.name"), "test-multinode-1");
        ASSERT_STREQ(hubtest_str(m->body, "spec.infrastructureRef.kind"), "Metal3Machine");
        ASSERT_STREQ(hubtest_str(m->body, "spec.infrastructureRef.name"), "test-multinode-1");
        {
                json_object *ref =
                        json_object_array_get_idx(json_get_path(m->body, "metadata.ownerReferences"), 0);
                bool controller = false;

                ASSERT_STREQ(json_get_string(ref, "kind"), "OpenshiftAssistedControlPlane");
                ASSERT_STREQ(json_get_string(ref, "uid"), "oacp-uid");
                ASSERT_OK(json_get_bool(ref, "controller", &controller));
                ASSERT_TRUE(controller);
        }
        /* the config and the infrastructure machine: owned, not controlled
         * (CAPI core's Machine controller takes them over) */
        ASSERT_NULL(
                json_get(json_object_array_get_idx(json_get_path(c->body, "metadata.ownerReferences"), 0),
                         "controller"));
        ASSERT_NULL(
                json_get(json_object_array_get_idx(json_get_path(i->body, "metadata.ownerReferences"), 0),
                         "controller"));
        ASSERT_STREQ(hubtest_str(c->body, "spec.sshAuthorizedKey"), "ssh-ed25519 AAAA test");
        ASSERT_STREQ(hub_object_label(c->body, "cluster.x-k8s.io/cluster-name"), "test-multinode");
        ASSERT_STREQ(hubtest_str(i->body, "apiVersion"), "infrastructure.cluster.x-k8s.io/v1beta1");
        ASSERT_STREQ(hubtest_str(i->body, "kind"), "Metal3Machine");
        ASSERT_STREQ(hubtest_str(i->body, "spec.image.format"), "qcow2");
        ASSERT_STREQ(hub_object_annotation(i->body, "cluster.x-k8s.io/cloned-from-name"),
                     "test-multinode-controlplane");
        ASSERT_STREQ(hub_object_annotation(i->body, "cluster.x-k8s.io/cloned-from-groupkind"),
                     "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io");
        ASSERT_CONDITION(f.o.base.object, "MachinesCreated", "False", "CreatingMachines", NULL);
        fixture_done(&f);
}

/* a host registered with a Machine's name is bound to the cluster with
 * role master: the binding is its approval; a host of no Machine is never
 * bound, and the installation waits for every Machine's host */
TEST(hosts_bound_by_hostname_a_foreign_host_never)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048], h1[2048], hx[2048];
        _cleanup_free_ char *hosts = NULL;

        fixture(&f, oacp(NULL));
        hosts = strdup_printf("[%s,%s,%s]",
                              host_json(h0, "h0", "test-multinode-0", "", "known", "auto-assign", NULL),
                              host_json(h1, "h1", "test-multinode-1", CID, "known", "master", NULL),
                              host_json(hx, "hx", "intruder", "", "known", "auto-assign", NULL));
        registered(&f, service_cluster("insufficient", "[]"), hosts);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, binding_answers, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "bind-"), 1u);
        ASSERT_STREQ(call(&run, "bind-h0")->path, "/v2/infra-envs/" IEID "/hosts/h0/actions/bind");
        ASSERT_STREQ(hubtest_str(call(&run, "bind-h0")->body, "cluster_id"), CID);
        ASSERT_NULL(call(&run, "bind-hx"));
        ASSERT_NULL(call(&run, "role-hx"));
        /* once bound, its role; h1 was bound as master already */
        ASSERT_NOT_NULL(call(&run, "role-h0"));
        ASSERT_STREQ(call(&run, "role-h0")->method, "PATCH");
        ASSERT_STREQ(hubtest_str(call(&run, "role-h0")->body, "host_role"), "master");
        ASSERT_NULL(call(&run, "role-h1"));
        ASSERT_NULL(call(&run, "bind-h1"));
        /* and its sentinel override; h1 has it, the foreign host never */
        ASSERT_NOT_NULL(call(&run, "sentinel-h0"));
        ASSERT_NULL(call(&run, "sentinel-h1"));
        ASSERT_NULL(call(&run, "sentinel-hx"));
        ASSERT_NULL(call(&run, "install"));
        fixture_done(&f);
}

/* bootstrap-config contract, "Sentinel file": each bound host gets the
 * Ignition override whose unit writes /run/cluster-api/bootstrap-success.
 * complete, and the installation waits until every host has it */
TEST(hosts_get_the_sentinel_before_the_installation)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        _cleanup_(json_object_putp) json_object *hosts = NULL, *config = NULL;
        _cleanup_free_ char *text = NULL;
        char bufs[3][2048];
        const char *unit;

        /* three masters, h1's override never set (another's, or none) */
        hosts = hubtest_json(three_masters(bufs, "known", NULL));
        ASSERT_OK(json_add_string(json_object_array_get_idx(hosts, 1), "ignition_config_overrides",
                                  "{\"ignition\":{\"version\":\"3.1.0\"}}"));
        text = strdup(json_object_to_json_string_ext(hosts, JSON_C_TO_STRING_PLAIN));
        ASSERT_NOT_NULL(text);
        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("ready", text), text);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "sentinel-*", 201, NULL, NULL },
                                             { "install", 202, "{\"id\":\"" CID "\"}", NULL },
                                             { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "sentinel-"), 1u);
        ASSERT_STREQ(call(&run, "sentinel-h1")->method, "PATCH");
        ASSERT_STREQ(call(&run, "sentinel-h1")->path, "/v2/infra-envs/" IEID "/hosts/h1/ignition");
        ASSERT_STREQ(hubtest_str(call(&run, "sentinel-h1")->body, "config"), capi_sentinel_ignition);
        /* the override: an Ignition config whose one unit, enabled, writes
         * the contract's path after the kubelet */
        config = hubtest_json(capi_sentinel_ignition);
        ASSERT_STREQ(hubtest_str(config, "ignition.version"), "3.1.0");
        ASSERT_EQ(hub_json_array_length(json_get_path(config, "systemd.units")), 1u);
        unit = json_get_string(json_object_array_get_idx(json_get_path(config, "systemd.units"), 0),
                               "contents");
        ASSERT_NOT_NULL(strstr(unit, "After=kubelet.service"));
        ASSERT_NOT_NULL(strstr(unit, "/run/cluster-api/bootstrap-success.complete"));
        ASSERT_NOT_NULL(strstr(unit, "WantedBy=multi-user.target"));
        /* not installed while a host lacks it, even with the cluster ready */
        ASSERT_NULL(call(&run, "install"));
        ASSERT_TRUE(run.requeue_after > 0);
        fixture_done(&f);
}

/* listed or not: every Machine's host bound, the cluster's hosts alone
 * decide as the infra-env's list would */
TEST(installation_starts_once_every_machine_has_its_host)
{
        for (int listed = 1; listed >= 0; listed--) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char bufs[3][2048];
                const char *hosts = three_masters(bufs, "known", NULL);

                fixture(&f, oacp(NULL));
                registered(&f, service_cluster("ready", hosts), hosts);
                if (!listed)
                        hosts_not_listed(&f);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "install", 202,
                                                       "{\"id\":\"" CID
                                                       "\",\"status\":\"preparing-for-installation\"}",
                                                       NULL },
                                                     { NULL } },
                                  &run);
                ASSERT_NOT_NULL(call(&run, "install"));
                ASSERT_STREQ(call(&run, "install")->path, "/v2/clusters/" CID "/actions/install");
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "bind-"), 0u);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "sentinel-"), 0u);
                ASSERT_CONDITION(f.o.base.object, "Available", "False", "ControlPlaneInstalling",
                                 "Controlplane installing, status: preparing-for-installation");
                fixture_done(&f);
        }
}

TEST(no_installation_while_a_machine_lacks_its_host)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048], h1[2048];
        _cleanup_free_ char *hosts = strdup_printf(
                "[%s,%s]", host_json(h0, "h0", "test-multinode-0", CID, "known", "master", NULL),
                host_json(h1, "h1", "test-multinode-1", CID, "known", "master", NULL));

        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("ready", hosts), hosts);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_NULL(call(&run, "install"));
        ASSERT_TRUE(run.requeue_after > 0);
        fixture_done(&f);
}

/* the contract's kubeconfig Secret, from the service's credentials */
TEST(kubeconfig_secret_of_the_contract)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installing-in-progress", NULL);
        const HubWrite *s;
        _cleanup_free_ char *value = NULL;
        bool controller = false;

        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("installing", hosts), hosts);
        hubtest_reconcile(
                capi_controlplane_decide, &f.o.base,
                (HubTestAnswer[]){ { "kubeconfig", 200, "apiVersion: v1\nkind: Config\n", NULL }, { NULL } },
                &run);
        ASSERT_STREQ(call(&run, "kubeconfig")->path,
                     "/v2/clusters/" CID "/downloads/credentials?file_name=kubeconfig-noingress");
        s = create_of(&run, HUB_KIND_SECRET, 0);
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(hubtest_str(s->body, "metadata.name"), "test-multinode-kubeconfig");
        ASSERT_STREQ(hubtest_str(s->body, "type"), "cluster.x-k8s.io/secret");
        ASSERT_STREQ(hub_object_label(s->body, "cluster.x-k8s.io/cluster-name"), "test-multinode");
        /* read from the hub's cache from then on */
        ASSERT_STREQ(hub_object_label(s->body, HUB_LABEL_WATCH), "true");
        ASSERT_STREQ(hub_object_label(s->body, HUB_LABEL_BACKUP), "true");
        value = hub_secret_value(s->body, "value");
        ASSERT_STREQ(value, "apiVersion: v1\nkind: Config\n");
        ASSERT_OK(json_get_bool(
                json_object_array_get_idx(json_get_path(s->body, "metadata.ownerReferences"), 0),
                "controller", &controller));
        ASSERT_TRUE(controller);
        /* the Secret is there, the API does not answer yet: not initialized */
        ASSERT_EQ(json_object_get_boolean(
                          json_get_path(f.o.base.object, "status.initialization.controlPlaneInitialized")),
                  false);
        ASSERT_CONDITION(f.o.base.object, "KubeconfigAvailable", "True", "KubeconfigAvailable", NULL);
        fixture_done(&f);
}

/* controlPlaneInitialized only when the new cluster's API answers;
 * Available from the installation's state; version from the API, no image */
TEST(initialized_when_the_api_answers_available_when_installed)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installed", NULL);

        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("installed", hosts), hosts);
        with_minted_kubeconfig(&f, "kubeconfig", NOW);
        f.o.readyz = 0;
        f.o.kube_version = strdup("v1.32.5");
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_TRUE(json_object_get_boolean(
                json_get_path(f.o.base.object, "status.initialization.controlPlaneInitialized")));
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.version"), "v1.32.5");
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.distributionVersion"), "4.19.0");
        ASSERT_EQ(json_object_get_int64(json_get_path(f.o.base.object, "status.replicas")), 3);
        ASSERT_EQ(json_object_get_int64(json_get_path(f.o.base.object, "status.readyReplicas")), 3);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.selector"),
                     "cluster.x-k8s.io/cluster-name=test-multinode,cluster.x-k8s.io/control-plane");
        ASSERT_CONDITION(f.o.base.object, "Available", "True", "ControlPlaneAvailable", NULL);
        /* looked at again when the certificate is to be renewed */
        ASSERT_EQ(run.requeue_after, (usec_t)43200 * USEC_PER_SEC);
        fixture_done(&f);
}

/* a second reconcile of what the first wrote writes nothing */
/* initialized is a one-way step: an API that stops answering after it
 * answered once neither uninitializes the control plane nor drops its
 * version; one that never answered is not initialized */
TEST(initialized_stays_when_the_api_stops_answering)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun first = {}, second = {};
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installed", NULL);

        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("installed", hosts), hosts);
        with_minted_kubeconfig(&f, "kubeconfig", NOW);
        f.o.readyz = -ECONNREFUSED;
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &first);
        ASSERT_FALSE(json_object_get_boolean(
                json_get_path(f.o.base.object, "status.initialization.controlPlaneInitialized")));
        ASSERT_NULL(json_get_path(f.o.base.object, "status.version"));
        f.o.readyz = 0;
        f.o.kube_version = strdup("v1.32.5");
        hubtest_run_done(&first);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &first);
        ASSERT_TRUE(json_object_get_boolean(
                json_get_path(f.o.base.object, "status.initialization.controlPlaneInitialized")));
        f.o.readyz = -ECONNREFUSED;
        free(f.o.kube_version);
        f.o.kube_version = NULL;
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &second);
        ASSERT_TRUE(json_object_get_boolean(
                json_get_path(f.o.base.object, "status.initialization.controlPlaneInitialized")));
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.version"), "v1.32.5");
        fixture_done(&f);
}

TEST(control_plane_nothing_written_twice)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {}, again = {};
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installing-in-progress",
                                          ",\"progress\":{\"current_stage\":\"Writing image to "
                                          "disk\",\"installation_percentage\":45}");

        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("installing", hosts), hosts);
        with_kubeconfig(&f, NULL);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_TRUE(run.writes.n > 0);
        /* the Machines as the first reconcile left them */
        for (size_t i = 0; i < run.writes.n; i++) {
                const HubWrite *w = &run.writes.writes[i];

                for (size_t k = 0; w->target == HUB_KIND_MACHINE && k < f.o.n_machines; k++)
                        if (streq_ptr(w->name, kube_object_name(f.o.machines[k])))
                                hubtest_merge_apply(f.o.machines[k], w->body);
        }
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &again);
        ASSERT_EQ(again.writes.n, (size_t)0);
        fixture_done(&f);
}

/* the Secret patches of a run to the Secret of that name: how many, and
 * *ret_last the last one */
static unsigned secret_patches(const HubTestRun *run, const char *name, const HubWrite **ret_last)
{
        unsigned n = 0;

        *ret_last = NULL;
        for (size_t i = 0; i < run->writes.n; i++) {
                const HubWrite *w = &run->writes.writes[i];

                if (w->kind == HUB_WRITE_PATCH && w->target == HUB_KIND_SECRET && streq_ptr(w->name, name)) {
                        *ret_last = w;
                        n++;
                }
        }
        return n;
}

static void unlabel(json_object *secret)
{
        json_object_object_del(json_get(secret, "metadata"), "labels");
}

/* The Secrets the control plane reads each reconcile (the pull secret, the
 * kubeconfig Secret an older cradle-hub made) get the hub's watch labels,
 * once, in a patch of the labels alone (the registration's rounds do not
 * repeat it); labelled, they are written no more: read from the cache. */
TEST(secrets_read_each_reconcile_labelled_for_the_cache)
{
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installing-in-progress", NULL);

        for (unsigned k = 0; k < 2; k++) {
                _cleanup_(hubtest_run_done) HubTestRun run = {}, again = {};
                const char *const names[] = { "pull-secret", "test-multinode-kubeconfig" };
                Fixture f;

                fixture(&f, oacp(NULL));
                if (k == 1) {
                        registered(&f, service_cluster("installing", hosts), hosts);
                        with_kubeconfig(&f, "kubeconfig-noingress");
                        unlabel(f.o.kubeconfig.object);
                }
                unlabel(f.o.secret.object);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, registration_answers, &run);
                if (k == 0)
                        ASSERT_TRUE(run.rounds > 1);
                for (unsigned i = 0; i < k + 1; i++) {
                        json_object *observed = i == 0 ? f.o.secret.object : f.o.kubeconfig.object;
                        const HubWrite *p;

                        ASSERT_EQ(secret_patches(&run, names[i], &p), 1u);
                        ASSERT_STREQ(hub_object_label(p->body, HUB_LABEL_WATCH), "true");
                        ASSERT_STREQ(hub_object_label(p->body, HUB_LABEL_BACKUP), "true");
                        ASSERT_NULL(json_get(p->body, "data"));
                        hubtest_merge_apply(observed, p->body);
                }
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } },
                                  &again);
                ASSERT_NULL(write_to(&again, HUB_WRITE_PATCH, HUB_KIND_SECRET, 0));
                fixture_done(&f);
        }
}

/* The infrastructure template is read (observe) and needed (decide) only
 * to make a missing control-plane Machine: with every Machine made, one
 * that cannot be read holds nothing up */
TEST(infrastructure_template_needed_only_to_make_machines)
{
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installing-in-progress", NULL);

        for (unsigned k = 0; k < 2; k++) {
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                Fixture f;

                fixture(&f, oacp(NULL));
                registered(&f, service_cluster("installing", hosts), hosts);
                if (k == 1) {
                        /* one Machine gone */
                        json_object_put(f.o.machines[--f.o.n_machines]);
                }
                hub_ref_done(&f.o.infra_template);
                f.o.infra_template.error = -ENOENT;
                f.o.infra_template.message = strdup("metal3machinetemplates.infrastructure.cluster.x-k8s.io "
                                                    "\"test-multinode-controlplane\" not found");
                hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "kubeconfig", 200, "x", NULL }, { NULL } }, &run);
                ASSERT_EQ(creates(&run, HUB_KIND_MACHINE), 0u);
                if (k == 0)
                        ASSERT_CONDITION(f.o.base.object, "MachinesCreated", "True", "MachinesCreated",
                                         NULL);
                else
                        ASSERT_CONDITION(f.o.base.object, "MachinesCreated", "False",
                                         "InfrastructureTemplateMissing",
                                         "cannot read spec.machineTemplate.infrastructureRef: "
                                         "metal3machinetemplates*");
                fixture_done(&f);
        }
}

/* the full kubeconfig replaces the no-ingress one once installed */
TEST(full_kubeconfig_replaces_the_noingress_one)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installed", NULL);
        const HubWrite *p;

        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("installed", hosts), hosts);
        with_kubeconfig(&f, "kubeconfig-noingress");
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "kubeconfig", 200, "full", NULL }, { NULL } }, &run);
        ASSERT_STREQ(call(&run, "kubeconfig")->path,
                     "/v2/clusters/" CID "/downloads/credentials?file_name=kubeconfig");
        p = write_to(&run, HUB_WRITE_PATCH, HUB_KIND_SECRET, 0);
        ASSERT_NOT_NULL(p);
        ASSERT_STREQ(hubtest_str(p->body, "data.value"), "ZnVsbA==");
        fixture_done(&f);
}

/* the Secret's write, whichever way it goes (create or patch), or NULL */
static const HubWrite *secret_write(const HubTestRun *run)
{
        for (size_t i = 0; i < run->writes.n; i++) {
                const HubWrite *w = &run->writes.writes[i];

                if ((w->kind == HUB_WRITE_CREATE || w->kind == HUB_WRITE_PATCH) &&
                    w->target == HUB_KIND_SECRET)
                        return w;
        }
        return NULL;
}

/* a control plane whose cluster is installed and answers, the Secret as
 * set (*f), reconciled with the admin kubeconfig downloadable and the
 * mint answered with answer (JSON), or failed with error */
static void reconcile_minting(Fixture *f, char bufs[3][2048], void (*secret)(Fixture *f), const char *answer,
                              const char *error, HubTestRun *run)
{
        const char *hosts = three_masters(bufs, "installed", NULL);

        fixture(f, oacp(NULL));
        registered(f, service_cluster("installed", hosts), hosts);
        secret(f);
        f->o.readyz = 0;
        hubtest_reconcile(capi_controlplane_decide, &f->o.base,
                          (HubTestAnswer[]){ { "kubeconfig", 200, "ADMIN-KUBECONFIG", NULL },
                                             { "kubeconfig-cert", answer ? 201 : 0, answer, error },
                                             { NULL } },
                          run);
}

static usec_t minted_at;

static void admin_secret(Fixture *f)
{
        with_kubeconfig(f, "kubeconfig");
}

static void minted_secret(Fixture *f)
{
        with_minted_kubeconfig(f, "kubeconfig", minted_at);
}

/* once the new cluster's API answered, the Secret's admin credentials
 * give way to a client certificate of the cluster's CSR API, asked for
 * with the admin kubeconfig (never written anywhere but to the spoke's
 * client), in one patch of value and annotations */
TEST(kubeconfig_secret_gets_a_short_lived_certificate_once_the_api_answers)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char bufs[3][2048];
        _cleanup_free_ char *answer = strdup_printf(
                "{\"csr\":\"cradle-hub-kubeconfig-x1\",\"kubeconfig\":\"minted\",\"notBefore\":%llu,"
                "\"notAfter\":%llu}",
                (unsigned long long)(NOW / USEC_PER_SEC - 300),
                (unsigned long long)(NOW / USEC_PER_SEC - 300 + 86400));
        const HubWrite *mint, *p;

        reconcile_minting(&f, bufs, admin_secret, answer, NULL, &run);
        ASSERT_NOT_NULL(call(&run, "kubeconfig"));
        ASSERT_STREQ(call(&run, "kubeconfig")->path,
                     "/v2/clusters/" CID "/downloads/credentials?file_name=kubeconfig");
        mint = hubtest_write(&run, HUB_WRITE_SPOKE, 0);
        ASSERT_NOT_NULL(mint);
        ASSERT_STREQ(mint->spoke_verb, "mint");
        ASSERT_STREQ(mint->spoke_kubeconfig, "ADMIN-KUBECONFIG");
        ASSERT_EQ(json_object_get_int64(json_get_path(mint->body, "csr.spec.expirationSeconds")), 86400);
        ASSERT_STREQ(hubtest_str(mint->body, "commonName"), "cradle-hub:cluster-api");
        p = secret_write(&run);
        ASSERT_NOT_NULL(p);
        ASSERT_EQ(p->kind, HUB_WRITE_PATCH);
        ASSERT_STREQ(hubtest_str(p->body, "data.value"), "bWludGVk");
        ASSERT_STREQ(hub_object_annotation(p->body, "cradle.agent-install.openshift.io/kubeconfig-csr"),
                     "cradle-hub-kubeconfig-x1");
        ASSERT_CONDITION(f.o.base.object, "KubeconfigAvailable", "True", "KubeconfigAvailable", NULL);
        /* the admin's credentials appear in no condition */
        ASSERT_NULL(strstr(json_object_to_json_string(json_get_path(f.o.base.object, "status")),
                           "ADMIN-KUBECONFIG"));
        /* looked at again at half the new certificate's validity */
        ASSERT_EQ(run.requeue_after, (usec_t)(43200 - 300) * USEC_PER_SEC);
        fixture_done(&f);
}

/* renewed at half its validity, not a second before */
TEST(kubeconfig_certificate_renewed_at_half_life)
{
        static const struct {
                usec_t age;
                bool renewed;
        } cases[] = {
                { 43200 * USEC_PER_SEC - USEC_PER_SEC, false },
                { 43200 * USEC_PER_SEC, true },
                { 2 * 86400 * USEC_PER_SEC, true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char bufs[3][2048];
                _cleanup_free_ char *answer =
                        strdup_printf("{\"csr\":\"cradle-hub-kubeconfig-x2\",\"kubeconfig\":\"renewed\","
                                      "\"notBefore\":%llu,\"notAfter\":%llu}",
                                      (unsigned long long)(NOW / USEC_PER_SEC),
                                      (unsigned long long)(NOW / USEC_PER_SEC + 86400));

                minted_at = NOW - cases[i].age;
                reconcile_minting(&f, bufs, minted_secret, answer, NULL, &run);
                ASSERT_EQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0) != NULL, cases[i].renewed);
                ASSERT_EQ(secret_write(&run) != NULL, cases[i].renewed);
                if (cases[i].renewed)
                        ASSERT_STREQ(hubtest_str(secret_write(&run)->body, "data.value"), "cmVuZXdlZA==");
                else
                        ASSERT_EQ(run.requeue_after, USEC_PER_SEC);
                fixture_done(&f);
        }
}

/* a CSR refused or never signed: the Secret keeps what it has, a
 * condition says why, and it is tried again */
TEST(kubeconfig_certificate_not_issued_keeps_the_secret)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char bufs[3][2048];

        minted_at = NOW - 86400 * USEC_PER_SEC + 60 * USEC_PER_SEC;
        reconcile_minting(&f, bufs, minted_secret, NULL,
                          "the CertificateSigningRequest 'cradle-hub-kubeconfig-x3' was approved but not "
                          "signed within 10 s",
                          &run);
        ASSERT_NOT_NULL(hubtest_write(&run, HUB_WRITE_SPOKE, 0));
        ASSERT_NULL(secret_write(&run));
        ASSERT_CONDITION(f.o.base.object, "KubeconfigAvailable", "True", "ClientCertificateNotIssued",
                         "cannot get a client certificate from the cluster's CSR API: the "
                         "CertificateSigningRequest 'cradle-hub-kubeconfig-x3' was approved but not signed "
                         "within 10 s");
        ASSERT_EQ(run.requeue_after, HUB_REQUEUE_ON_ERROR);
        fixture_done(&f);
}

/* Machines show their host's install stage and percentage */
/* the host's stage and percentage on its Machine, from the infra-env's
 * list or, not listed, the cluster's hosts */
TEST(machines_show_their_hosts_progress)
{
        for (int listed = 1; listed >= 0; listed--) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char bufs[3][2048];
                const char *hosts = three_masters(bufs, "installing-in-progress",
                                                  ",\"progress\":{\"current_stage\":\"Writing image to "
                                                  "disk\",\"installation_percentage\":45}");
                const HubWrite *p;
                json_object *c;

                fixture(&f, oacp(NULL));
                registered(&f, service_cluster("installing", hosts), hosts);
                if (!listed)
                        hosts_not_listed(&f);
                with_kubeconfig(&f, NULL);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_NOT_NULL(write_to(&run, HUB_WRITE_PATCH_STATUS, HUB_KIND_MACHINE, 2));
                p = hubtest_write(&run, HUB_WRITE_PATCH_STATUS, 0);
                ASSERT_NOT_NULL(p);
                ASSERT_EQ(p->target, HUB_KIND_MACHINE);
                ASSERT_STREQ(p->name, "test-multinode-0");
                ASSERT_STREQ(p->resource_version, "11");
                c = json_object_array_get_idx(json_get_path(p->body, "status.conditions"), 0);
                ASSERT_STREQ(json_get_string(c, "type"), "HostInstallation");
                ASSERT_STREQ(json_get_string(c, "status"), "False");
                ASSERT_STREQ(json_get_string(c, "reason"), "InstallingInProgress");
                ASSERT_STREQ(json_get_string(c, "message"), "Writing image to disk 45%");
                fixture_done(&f);
        }
}

TEST(paused_control_plane_does_nothing)
{
        static const char *const how[] = { "cluster", "annotation" };

        for (size_t k = 0; k < ELEMENTSOF(how); k++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};

                fixture(&f, oacp(k == 1 ? ",\"annotations\":{\"cluster.x-k8s.io/paused\":\"\"}" : NULL));
                if (k == 0) {
                        json_object_put(f.o.cluster);
                        f.o.cluster = capi_cluster(true);
                }
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
                ASSERT_EQ(creates(&run, HUB_KIND_MACHINE), 0u);
                ASSERT_CONDITION(f.o.base.object, "Paused", "True", "Paused", NULL);
                fixture_done(&f);
        }
}

TEST(missing_pull_secret_registers_nothing)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        fixture(&f, oacp(NULL));
        hub_ref_done(&f.o.secret);
        f.o.secret.error = -ENOENT;
        f.o.secret.message = strdup("secrets \"pull-secret\" not found");
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_CONDITION(f.o.base.object, "MachinesCreated", "False", "InputError",
                         "failed to find secret pull-secret: secrets \"pull-secret\" not found");
        fixture_done(&f);
}

/* ---- the bootstrap config ---- */

#define DISCOVERY_IGN \
        "{\"ignition\":{\"version\":\"3.1.0\"},\"storage\":{\"files\":[{\"path\":\"/etc/assisted/" \
        "agent.env\"," \
        "\"contents\":{\"source\":\"data:,x\"}}]}}"

typedef struct ConfigFixture {
        ConfigObserved o;
} ConfigFixture;

static void config_fixture(ConfigFixture *f, const char *extra_meta, bool paused, bool registered_ie)
{
        *f = (ConfigFixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup(NS);
        f->o.base.name = strdup("test-multinode-0");
        f->o.base.object = hubtest_jsonf(
                "{\"apiVersion\":\"bootstrap.cluster.x-k8s.io/"
                "v1alpha2\",\"kind\":\"OpenshiftAssistedConfig\","
                "\"metadata\":{\"name\":\"test-multinode-0\",\"namespace\":\"" NS "\",\"uid\":\"oac-uid\","
                "\"generation\":1,\"labels\":{\"cluster.x-k8s.io/cluster-name\":\"test-multinode\"},"
                "\"ownerReferences\":[{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"Machine\","
                "\"name\":\"test-multinode-0\",\"uid\":\"uid-test-multinode-0\",\"controller\":true}]%s},"
                "\"spec\":{}}",
                extra_meta ? extra_meta : "");
        f->o.machine = machine("test-multinode-0");
        f->o.cluster = capi_cluster(paused);
        f->o.control_plane =
                oacp(registered_ie
                             ? ",\"annotations\":{\"cradle.agent-install.openshift.io/infra-env-id\":\"" IEID
                               "\"}"
                             : NULL);
        f->o.secret.error = -ENOENT;
}

static void config_fixture_done(ConfigFixture *f)
{
        capi_bootstrap_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

/* the contract's data Secret: the discovery Ignition with the Machine's
 * hostname, label, controller owner, value and format */
TEST(data_secret_of_the_contract)
{
        ConfigFixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        const HubWrite *s, *d;
        _cleanup_free_ char *value = NULL, *format = NULL;
        _cleanup_(json_object_putp) json_object *ign = NULL;
        json_object *files, *ref;
        bool controller = false, found = false;

        config_fixture(&f, NULL, false, true);
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base,
                          (HubTestAnswer[]){ { "discovery-ignition", 200, DISCOVERY_IGN, NULL }, { NULL } },
                          &run);
        d = call(&run, "discovery-ignition");
        ASSERT_STREQ(d->path, "/v2/infra-envs/" IEID "/downloads/files?file_name=discovery.ign");
        s = create_of(&run, HUB_KIND_SECRET, 0);
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(hubtest_str(s->body, "metadata.name"), "test-multinode-0");
        ASSERT_STREQ(hubtest_str(s->body, "type"), "cluster.x-k8s.io/secret");
        ASSERT_STREQ(hub_object_label(s->body, "cluster.x-k8s.io/cluster-name"), "test-multinode");
        ASSERT_STREQ(hub_object_label(s->body, HUB_LABEL_WATCH), "true");
        ASSERT_STREQ(hub_object_label(s->body, HUB_LABEL_BACKUP), "true");
        ref = json_object_array_get_idx(json_get_path(s->body, "metadata.ownerReferences"), 0);
        ASSERT_STREQ(json_get_string(ref, "kind"), "OpenshiftAssistedConfig");
        ASSERT_STREQ(json_get_string(ref, "uid"), "oac-uid");
        ASSERT_OK(json_get_bool(ref, "controller", &controller));
        ASSERT_TRUE(controller);
        format = hub_secret_value(s->body, "format");
        ASSERT_STREQ(format, "ignition");
        value = hub_secret_value(s->body, "value");
        ASSERT_NOT_NULL(value);
        ign = hubtest_json(value);
        ASSERT_STREQ(hubtest_str(ign, "ignition.version"), "3.1.0");
        files = json_get_path(ign, "storage.files");
        ASSERT_EQ(hub_json_array_length(files), (size_t)2);
        for (size_t i = 0; i < hub_json_array_length(files); i++) {
                json_object *fl = json_object_array_get_idx(files, i);

                if (streq_ptr(json_get_string(fl, "path"), "/etc/hostname")) {
                        /* base64 of "test-multinode-0" */
                        ASSERT_STREQ(hubtest_str(fl, "contents.source"),
                                     "data:;base64,dGVzdC1tdWx0aW5vZGUtMA==");
                        found = true;
                }
        }
        ASSERT_TRUE(found);
        ASSERT_STREQ(hubtest_str(f.o.base.object, "status.dataSecretName"), "test-multinode-0");
        ASSERT_TRUE(json_object_get_boolean(
                json_get_path(f.o.base.object, "status.initialization.dataSecretCreated")));
        /* v1beta1's status.ready is not in v1alpha2's schema: written, it
         * would be pruned and written again on every reconcile */
        ASSERT_NULL(json_get_path(f.o.base.object, "status.ready"));
        ASSERT_CONDITION(f.o.base.object, "Paused", "False", "NotPaused", NULL);
        config_fixture_done(&f);
}

TEST(data_secret_waits_for_the_infraenv)
{
        ConfigFixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        config_fixture(&f, NULL, false, false);
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_NULL(create_of(&run, HUB_KIND_SECRET, 0));
        ASSERT_CONDITION(f.o.base.object, "DataSecretAvailable", "False", "WaitingForInfraEnvToBeReady",
                         NULL);
        ASSERT_TRUE(run.requeue_after > 0);
        config_fixture_done(&f);
}

/* pausing: Cluster.spec.paused or the annotation on the config */
TEST(paused_config_writes_no_secret)
{
        for (unsigned k = 0; k < 2; k++) {
                ConfigFixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};

                config_fixture(&f, k == 1 ? ",\"annotations\":{\"cluster.x-k8s.io/paused\":\"true\"}" : NULL,
                               k == 0, true);
                hubtest_reconcile(capi_bootstrap_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
                ASSERT_NULL(create_of(&run, HUB_KIND_SECRET, 0));
                ASSERT_CONDITION(f.o.base.object, "Paused", "True", "Paused", NULL);
                ASSERT_NULL(json_get_path(f.o.base.object, "status.dataSecretName"));
                config_fixture_done(&f);
        }
}

/* a second reconcile with the Secret present writes nothing */
TEST(data_secret_present_nothing_written_twice)
{
        ConfigFixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {}, again = {};

        config_fixture(&f, NULL, false, true);
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base,
                          (HubTestAnswer[]){ { "discovery-ignition", 200, DISCOVERY_IGN, NULL }, { NULL } },
                          &run);
        f.o.secret.error = 0;
        f.o.secret.object = hub_json_copy(create_of(&run, HUB_KIND_SECRET, 0)->body);
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &again);
        ASSERT_EQ(again.writes.n, (size_t)0);
        config_fixture_done(&f);
}

/* a data Secret an older cradle-hub made, without the watch labels: they
 * are added (a patch of the labels alone), then nothing is written */
TEST(data_secret_of_an_older_hub_labelled_once)
{
        ConfigFixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {}, again = {};
        const HubWrite *p;

        config_fixture(&f, NULL, false, true);
        f.o.secret.error = 0;
        f.o.secret.object = hubtest_json(
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"test-multinode-0\","
                "\"namespace\":\"" NS
                "\",\"labels\":{\"cluster.x-k8s.io/cluster-name\":\"test-multinode\"}},"
                "\"type\":\"cluster.x-k8s.io/"
                "secret\",\"data\":{\"value\":\"eA==\",\"format\":\"aWduaXRpb24=\"}}");
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_NULL(create_of(&run, HUB_KIND_SECRET, 0));
        p = write_to(&run, HUB_WRITE_PATCH, HUB_KIND_SECRET, 0);
        ASSERT_NOT_NULL(p);
        ASSERT_STREQ(p->name, "test-multinode-0");
        ASSERT_STREQ(hub_object_label(p->body, HUB_LABEL_WATCH), "true");
        ASSERT_STREQ(hub_object_label(p->body, HUB_LABEL_BACKUP), "true");
        ASSERT_NULL(json_get(p->body, "data"));
        ASSERT_NULL(write_to(&run, HUB_WRITE_PATCH, HUB_KIND_SECRET, 1));
        ASSERT_CONDITION(f.o.base.object, "DataSecretAvailable", "True", "DataSecretAvailable", NULL);
        hubtest_merge_apply(f.o.secret.object, p->body);
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &again);
        ASSERT_EQ(again.writes.n, (size_t)0);
        config_fixture_done(&f);
}

DEFINE_TEST_MAIN

/* --watch-filter: an instance reconciles only the objects of its label
 * value; another's (or an unlabelled one) gets no call and no write, not
 * even a condition */
TEST(watch_filter_leaves_others_objects_alone)
{
        for (unsigned k = 0; k < 3; k++) {
                const char *label = k == 0 ? NULL : k == 1 ? "shard-b" : "shard-a";
                Fixture f;
                ConfigFixture cf;
                _cleanup_(hubtest_run_done) HubTestRun run = {}, crun = {};

                fixture(&f, oacp(NULL));
                f.o.watch_filter = "shard-a";
                config_fixture(&cf, NULL, false, true);
                cf.o.watch_filter = "shard-a";
                if (label) {
                        ASSERT_OK(hub_object_set_label(f.o.base.object, HUB_CAPI_LABEL_WATCH_FILTER, label));
                        ASSERT_OK(
                                hub_object_set_label(cf.o.base.object, HUB_CAPI_LABEL_WATCH_FILTER, label));
                }
                hubtest_reconcile(
                        capi_controlplane_decide, &f.o.base,
                        (HubTestAnswer[]){ { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL },
                                           { "register-infraenv", 201, "{\"id\":\"" IEID "\"}", NULL },
                                           { "discovery-ignition", 200, DISCOVERY_IGN, NULL },
                                           { NULL } },
                        &run);
                hubtest_reconcile(
                        capi_bootstrap_decide, &cf.o.base,
                        (HubTestAnswer[]){ { "discovery-ignition", 200, DISCOVERY_IGN, NULL }, { NULL } },
                        &crun);
                if (k < 2) {
                        ASSERT_EQ(run.writes.n, 0u);
                        ASSERT_EQ(crun.writes.n, 0u);
                        ASSERT_NULL(json_get(f.o.base.object, "status"));
                        ASSERT_NULL(json_get(cf.o.base.object, "status"));
                } else {
                        ASSERT_NOT_NULL(call(&run, "register-cluster"));
                        ASSERT_TRUE(crun.writes.n > 0);
                }
                fixture_done(&f);
                config_fixture_done(&cf);
        }
}

/* ---- day-1 workers: a MachineDeployment's Machines (capi.md §3.3, §8) ---- */

TEST(worker_machines_and_replicas_recognised)
{
        _cleanup_(json_object_putp) json_object *w = worker_machine(WORKER),
                                                *cp = machine("test-multinode-0"), *md = NULL, *other = NULL,
                                                *unset = NULL, *foreign = NULL;
        static const char *const md_fmt =
                "{\"kind\":\"MachineDeployment\",\"metadata\":{\"name\":\"workers\"},\"spec\":{"
                "\"clusterName\":\"%s\",%s\"template\":{\"spec\":{\"clusterName\":\"%s\",\"bootstrap\":{"
                "\"configRef\":{\"apiGroup\":\"bootstrap.cluster.x-k8s.io\",\"kind\":\"%s\",\"name\":\"t\"}}"
                "}}}}";

        ASSERT_TRUE(capi_worker_machine(w, "test-multinode"));
        ASSERT_FALSE(capi_worker_machine(w, "another"));
        ASSERT_FALSE(capi_worker_machine(cp, "test-multinode"));
        md = hubtest_jsonf(md_fmt, "test-multinode", "\"replicas\":2,", "test-multinode",
                           "OpenshiftAssistedConfigTemplate");
        unset = hubtest_jsonf(md_fmt, "test-multinode", "", "test-multinode",
                              "OpenshiftAssistedConfigTemplate");
        other = hubtest_jsonf(md_fmt, "test-multinode", "\"replicas\":2,", "test-multinode",
                              "KubeadmConfigTemplate");
        foreign = hubtest_jsonf(md_fmt, "another", "\"replicas\":2,", "another",
                                "OpenshiftAssistedConfigTemplate");
        ASSERT_EQ(capi_worker_replicas(md, "test-multinode"), 2u);
        /* nil replicas: CAPI's default, 1 */
        ASSERT_EQ(capi_worker_replicas(unset, "test-multinode"), 1u);
        ASSERT_EQ(capi_worker_replicas(other, "test-multinode"), 0u);
        ASSERT_EQ(capi_worker_replicas(foreign, "test-multinode"), 0u);
        ASSERT_FALSE(capi_installation_started(NULL));
        {
                static const char *const before[] = { "insufficient", "ready", "pending-for-input" },
                                         *after[] = { "preparing-for-installation", "installing",
                                                      "installed" };

                for (size_t i = 0; i < ELEMENTSOF(before); i++) {
                        _cleanup_(json_object_putp) json_object *b = service_cluster(before[i], "[]"),
                                                                *a = service_cluster(after[i], "[]");

                        ASSERT_FALSE(capi_installation_started(b));
                        ASSERT_TRUE(capi_installation_started(a));
                }
        }
}

/* the registration asks for the MachineDeployments' workers: a single
 * control-plane node with a worker is no single-node cluster */
TEST(registration_counts_the_machine_deployments_workers)
{
        for (unsigned workers = 0; workers < 2; workers++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                bool umn = false;

                fixture(&f, oacp(NULL));
                ASSERT_OK(json_add_int64(json_get(f.o.base.object, "spec"), "replicas", 1));
                f.o.worker_replicas = workers;
                hubtest_reconcile(
                        capi_controlplane_decide, &f.o.base,
                        (HubTestAnswer[]){ { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL },
                                           { "register-infraenv", 201, "{\"id\":\"" IEID "\"}", NULL },
                                           { NULL } },
                        &run);
                ASSERT_NOT_NULL(call(&run, "register-cluster"));
                ASSERT_OK(json_get_bool(call(&run, "register-cluster")->body, "user_managed_networking",
                                        &umn));
                /* none: single node (user-managed networking); one: not */
                ASSERT_EQ(umn, workers == 0);
                fixture_done(&f);
        }
}

/* a worker Machine's host is bound as worker (with the sentinel's
 * override) before the installation; a foreign host still never */
TEST(worker_host_bound_as_worker)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char hw[2048], hx[2048];
        _cleanup_free_ char *more = NULL, *hosts = NULL;

        more = strdup_printf("%s,%s", worker_host(hw, "hw", WORKER, false, "known"),
                             host_json(hx, "hx", "intruder", "", "known", "auto-assign", NULL));
        hosts = masters_and("known", more);
        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("ready", hosts), hosts);
        with_worker(&f, WORKER);
        f.o.worker_replicas = 1;
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, binding_answers, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "bind-"), 1u);
        ASSERT_STREQ(hubtest_str(call(&run, "bind-hw")->body, "cluster_id"), CID);
        ASSERT_STREQ(hubtest_str(call(&run, "role-hw")->body, "host_role"), "worker");
        ASSERT_STREQ(hubtest_str(call(&run, "sentinel-hw")->body, "config"), capi_sentinel_ignition);
        ASSERT_NULL(call(&run, "bind-hx"));
        ASSERT_NULL(call(&run, "role-hx"));
        ASSERT_NULL(call(&run, "sentinel-hx"));
        /* the service said ready with the masters alone: the worker's host
         * is not in yet, so no installation */
        ASSERT_NULL(call(&run, "install"));
        fixture_done(&f);
}

/* the installation waits for every worker Machine's host, and for as many
 * worker Machines as the MachineDeployments ask for; then starts */
TEST(installation_waits_for_the_workers)
{
        for (unsigned k = 0; k < 3; k++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char hw[2048];
                _cleanup_free_ char *hosts = NULL;

                /* 0: the worker Machine without its host; 1: the MachineDeployment's
                 * Machine not made yet; 2: all there */
                hosts = masters_and("known", k == 2 ? worker_host(hw, "hw", WORKER, true, "known") : NULL);
                fixture(&f, oacp(NULL));
                registered(&f, service_cluster("ready", hosts), hosts);
                if (k != 1)
                        with_worker(&f, WORKER);
                f.o.worker_replicas = 1;
                hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "install", 202,
                                                       "{\"id\":\"" CID
                                                       "\",\"status\":\"preparing-for-installation\"}",
                                                       NULL },
                                                     { NULL } },
                                  &run);
                if (k < 2) {
                        ASSERT_NULL(call(&run, "install"));
                        ASSERT_TRUE(run.requeue_after > 0);
                } else
                        ASSERT_NOT_NULL(call(&run, "install"));
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "bind-"), 0u);
                fixture_done(&f);
        }
}

/* a worker Machine that appears once the installation started is not
 * bound while it runs: its HostInstallation condition says why and what
 * comes (day 2, below) */
TEST(late_worker_not_bound)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char hw[2048], hx[2048];
        _cleanup_free_ char *more = NULL, *hosts = NULL;
        const HubWrite *p = NULL;

        more = strdup_printf("%s,%s", worker_host(hw, "hw", WORKER, false, "known"),
                             host_json(hx, "hx", "intruder", "", "known", "auto-assign", NULL));
        hosts = masters_and("installing-in-progress", more);
        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("installing", hosts), hosts);
        with_kubeconfig(&f, NULL);
        with_worker(&f, WORKER);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        for (unsigned i = 0; hubtest_write(&run, HUB_WRITE_PATCH_STATUS, i); i++)
                if (streq_ptr(hubtest_write(&run, HUB_WRITE_PATCH_STATUS, i)->name, WORKER))
                        p = hubtest_write(&run, HUB_WRITE_PATCH_STATUS, i);
        ASSERT_NOT_NULL(p);
        ASSERT_CONDITION(
                p->body, "HostInstallation", "False", "NotInDay1Installation",
                "the cluster's installation started (status installing) before this Machine's host "
                "was bound: it is not installed with the cluster; once the cluster is installed, its "
                "host is added to it (day 2)");
        /* and the service is polled for the end of the installation */
        ASSERT_TRUE(run.requeue_after > 0);
        fixture_done(&f);
}

/* a day-1 worker's Machine shows its host's progress as the control plane's do */
TEST(worker_machine_shows_its_hosts_progress)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char hw[2048];
        _cleanup_(json_object_putp) json_object *w = NULL;
        _cleanup_free_ char *hosts = NULL;
        const HubWrite *p = NULL;

        w = hubtest_json(worker_host(hw, "hw", WORKER, true, "installing-in-progress"));
        ASSERT_OK(json_add(w, "progress",
                           hubtest_json("{\"current_stage\":\"Writing image to disk\","
                                        "\"installation_percentage\":30}")));
        hosts = masters_and("installing-in-progress",
                            json_object_to_json_string_ext(w, JSON_C_TO_STRING_PLAIN));
        fixture(&f, oacp(NULL));
        registered(&f, service_cluster("installing", hosts), hosts);
        with_kubeconfig(&f, NULL);
        with_worker(&f, WORKER);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        for (unsigned i = 0; hubtest_write(&run, HUB_WRITE_PATCH_STATUS, i); i++)
                if (streq_ptr(hubtest_write(&run, HUB_WRITE_PATCH_STATUS, i)->name, WORKER))
                        p = hubtest_write(&run, HUB_WRITE_PATCH_STATUS, i);
        ASSERT_NOT_NULL(p);
        ASSERT_EQ(p->target, HUB_KIND_MACHINE);
        ASSERT_CONDITION(p->body, "HostInstallation", "False", "InstallingInProgress",
                         "Writing image to disk 30%");
        fixture_done(&f);
}

/* ---- deletion: CAPOA's finalizers (capi.md §3.3 step 2, §3.6) ---- */

#define DELETED "\"deletionTimestamp\":\"2026-09-21T14:00:00Z\""
#define OACP_DELETED "," DELETED ",\"finalizers\":[\"" HUB_FINALIZER_CAPI_CONTROL_PLANE "\"]"
#define OAC_DELETED "," DELETED ",\"finalizers\":[\"" HUB_FINALIZER_CAPI_BOOTSTRAP "\"]"
#define OTHER_CID "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

/* the control plane being deleted (extra: more of its metadata), its
 * cluster in that status (NULL: not read) and the infra-env's hosts */
static void deleted_control_plane(Fixture *f, const char *extra, const char *cluster_status,
                                  const char *hosts)
{
        _cleanup_free_ char *meta = strdup_printf("%s%s", OACP_DELETED, strempty(extra));

        ASSERT_NOT_NULL(meta);
        fixture(f, oacp(meta));
        registered(f, cluster_status ? service_cluster(cluster_status, hosts) : NULL, hosts);
}

/* the call of that tag, which must have been made */
static const HubWrite *made(const HubTestRun *run, const char *tag)
{
        const HubWrite *w = call(run, tag);

        ASSERT_NOT_NULL(w);
        return w;
}

/* obj being deleted (a deletionTimestamp), with that finalizer unless NULL */
static void mark_deleted(json_object *obj, const char *finalizer)
{
        _cleanup_(json_object_putp) json_object *p =
                hubtest_jsonf("{\"metadata\":{" DELETED "%s%s%s}}", finalizer ? ",\"finalizers\":[\"" : "",
                              strempty(finalizer), finalizer ? "\"]" : "");

        hubtest_merge_apply(obj, p);
}

/* the index of a call in the run's writes, -1 when not made */
static int call_index(const HubTestRun *run, const char *tag)
{
        for (size_t i = 0; i < run->writes.n; i++)
                if (run->writes.writes[i].kind == HUB_WRITE_SERVICE &&
                    streq_ptr(run->writes.writes[i].tag, tag))
                        return (int)i;
        return -1;
}

/* the finalizer is on the object before the first registration call: a
 * deletion racing the registration finds it */
TEST(control_plane_finalizer_written_before_any_registration)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        int first_patch = -1;

        fixture(&f, oacp(NULL));
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL },
                                             { "register-infraenv", 201, "{\"id\":\"" IEID "\"}", NULL },
                                             { NULL } },
                          &run);
        for (size_t i = 0; i < run.writes.n && first_patch < 0; i++) {
                const HubWrite *w = &run.writes.writes[i];

                if (w->kind == HUB_WRITE_PATCH && w->target == HUB_KIND_OACP &&
                    hub_object_has_finalizer(w->body, HUB_FINALIZER_CAPI_CONTROL_PLANE))
                        first_patch = (int)i;
        }
        ASSERT_TRUE(first_patch >= 0);
        ASSERT_TRUE(call_index(&run, "register-cluster") > first_patch);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        fixture_done(&f);
}

/* Deletion under way: the installation cancelled, the cluster
 * deregistered, then the infra-env's hosts (its own, unbound ones, and
 * another cluster's installed one), then the infra-env, then the
 * finalizer goes; in that order */
TEST(control_plane_deletion_deregisters_cluster_hosts_infraenv_in_order)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048], h1[2048], hy[2048];
        _cleanup_free_ char *hosts = strdup_printf(
                "[%s,%s,%s]",
                host_json(h0, "h0", "test-multinode-0", CID, "installing-in-progress", "master", NULL),
                host_json(h1, "h1", "test-multinode-1", "", "known-unbound", "auto-assign", NULL),
                host_json(hy, "hy", "elsewhere-0", OTHER_CID, "installed", "worker", NULL));
        int cancel, dereg, hosts_first = INT_MAX, hosts_last = -1, ie;

        deleted_control_plane(&f, NULL, "installing", hosts);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "cancel-installation", 202, "{}", NULL },
                                             { "deregister-cluster", 204, NULL, NULL },
                                             { "deregister-host-*", 204, NULL, NULL },
                                             { "deregister-infraenv", 204, NULL, NULL },
                                             { NULL } },
                          &run);
        ASSERT_STREQ(made(&run, "cancel-installation")->path, "/v2/clusters/" CID "/actions/cancel");
        ASSERT_STREQ(made(&run, "deregister-cluster")->method, "DELETE");
        ASSERT_STREQ(made(&run, "deregister-cluster")->path, "/v2/clusters/" CID);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "deregister-host-"), 3u);
        ASSERT_STREQ(made(&run, "deregister-host-h1")->path, "/v2/infra-envs/" IEID "/hosts/h1");
        ASSERT_STREQ(made(&run, "deregister-infraenv")->path, "/v2/infra-envs/" IEID);
        cancel = call_index(&run, "cancel-installation");
        dereg = call_index(&run, "deregister-cluster");
        ie = call_index(&run, "deregister-infraenv");
        for (const char *const *h = (const char *const[]){ "deregister-host-h0", "deregister-host-h1",
                                                           "deregister-host-hy", NULL };
             *h; h++) {
                hosts_first = MIN(hosts_first, call_index(&run, *h));
                hosts_last = MAX(hosts_last, call_index(&run, *h));
        }
        ASSERT_TRUE(cancel >= 0 && cancel < dereg && dereg < hosts_first && hosts_last < ie);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        /* the finalizer's removal is the last write */
        ASSERT_EQ(run.writes.writes[run.writes.n - 1].kind, HUB_WRITE_PATCH);
        ASSERT_EQ(run.writes.writes[run.writes.n - 1].target, HUB_KIND_OACP);
        fixture_done(&f);
}

/* a host bound to another cluster and not installed is not ours to
 * deregister: it stays, the infra-env with it, and the finalizer too */
TEST(control_plane_deletion_leaves_another_clusters_host)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048], hx[2048];
        _cleanup_free_ char *hosts = strdup_printf(
                "[%s,%s]", host_json(h0, "h0", "test-multinode-0", CID, "known", "master", NULL),
                host_json(hx, "hx", "elsewhere-0", OTHER_CID, "known", "worker", NULL));

        deleted_control_plane(&f, NULL, "ready", hosts);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "deregister-cluster", 204, NULL, NULL },
                                             { "deregister-host-*", 204, NULL, NULL },
                                             { "deregister-infraenv", 204, NULL, NULL },
                                             { NULL } },
                          &run);
        /* ready: nothing to cancel */
        ASSERT_NULL(call(&run, "cancel-installation"));
        ASSERT_NOT_NULL(call(&run, "deregister-cluster"));
        ASSERT_NOT_NULL(call(&run, "deregister-host-h0"));
        ASSERT_NULL(call(&run, "deregister-host-hx"));
        ASSERT_NULL(call(&run, "deregister-infraenv"));
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        ASSERT_CONDITION(f.o.base.object, "Deleting", "True", "DeregistrationFailed",
                         "infra-env " IEID " has 1 hosts bound to another cluster and not installed");
        ASSERT_TRUE(run.requeue_after > 0);
        fixture_done(&f);
}

/* a call the service fails (500) keeps the finalizer, says why in
 * Deleting and comes back; nothing after it is tried */
TEST(control_plane_deletion_failed_call_keeps_the_finalizer)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048];
        const char *hosts = NULL;
        _cleanup_free_ char *list = NULL;

        hosts = host_json(h0, "h0", "test-multinode-0", CID, "known", "master", NULL);
        list = strdup_printf("[%s]", hosts);
        deleted_control_plane(&f, NULL, "ready", list);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "deregister-cluster", 500, NULL, "internal error" },
                                             { "deregister-host-*", 204, NULL, NULL },
                                             { "deregister-infraenv", 204, NULL, NULL },
                                             { NULL } },
                          &run);
        ASSERT_NOT_NULL(call(&run, "deregister-cluster"));
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "deregister-host-"), 0u);
        ASSERT_NULL(call(&run, "deregister-infraenv"));
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        ASSERT_CONDITION(f.o.base.object, "Deleting", "True", "DeregistrationFailed",
                         "cannot deregister cluster " CID ": internal error");
        ASSERT_TRUE(run.requeue_after > 0);
        ASSERT_NOT_NULL(run.reason);
        fixture_done(&f);
}

/* 404 is a record gone: the cluster read and a host's deregistration
 * answered 404 let the deletion go on to its end */
TEST(control_plane_deletion_404_counts_as_gone)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048];
        _cleanup_free_ char *list = NULL;

        list = strdup_printf("[%s]", host_json(h0, "h0", "test-multinode-0", CID, "known", "master", NULL));
        deleted_control_plane(&f, NULL, NULL, list);
        f.o.service_cluster.error = -EREMOTEIO;
        f.o.service_cluster.status = 404;
        f.o.service_cluster.message = strdup("cluster not found");
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "deregister-host-*", 404, NULL, "host not found" },
                                             { "deregister-infraenv", 204, NULL, NULL },
                                             { NULL } },
                          &run);
        ASSERT_NULL(call(&run, "deregister-cluster"));
        ASSERT_NOT_NULL(call(&run, "deregister-host-h0"));
        ASSERT_NOT_NULL(call(&run, "deregister-infraenv"));
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        fixture_done(&f);

        /* the infra-env gone too (its hosts' list 404): nothing to call */
        hubtest_run_done(&run);
        deleted_control_plane(&f, NULL, NULL, "[]");
        f.o.service_cluster.error = f.o.hosts.error = -EREMOTEIO;
        f.o.service_cluster.status = f.o.hosts.status = 404;
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        fixture_done(&f);
}

/* a paused control plane is not finalized (Cluster API's rule) */
TEST(paused_control_plane_not_finalized)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048];
        _cleanup_free_ char *list = NULL;

        list = strdup_printf("[%s]", host_json(h0, "h0", "test-multinode-0", CID, "known", "master", NULL));
        deleted_control_plane(&f, ",\"annotations\":{\"cluster.x-k8s.io/paused\":\"\"}", "ready", list);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        ASSERT_CONDITION(f.o.base.object, "Paused", "True", "Paused", NULL);
        fixture_done(&f);
}

/* Machines being deleted (scale-down, remediation) are no part of the
 * installation: their hosts are not bound again, and they count neither
 * for the control plane's replicas nor for the MachineDeployments' */
TEST(machines_being_deleted_count_for_no_gate)
{
        for (unsigned k = 0; k < 2; k++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char hw[2048];
                _cleanup_free_ char *hosts = NULL;

                /* 0: a control-plane Machine being deleted, 1: the worker */
                hosts = masters_and("known", worker_host(hw, "hw", WORKER, true, "known"));
                fixture(&f, oacp(NULL));
                registered(&f, service_cluster("ready", hosts), hosts);
                with_worker(&f, WORKER);
                f.o.worker_replicas = 1;
                mark_deleted(k == 0 ? f.o.machines[2] : f.o.workers[0], NULL);
                hubtest_reconcile(
                        capi_controlplane_decide, &f.o.base,
                        (HubTestAnswer[]){ { "install", 202, "{\"id\":\"" CID "\"}", NULL }, { NULL } },
                        &run);
                ASSERT_NULL(call(&run, "install"));
                ASSERT_TRUE(run.requeue_after > 0);
                fixture_done(&f);
        }
        /* its host unbound by the config's deletion is not bound again */
        {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char bufs[3][2048];
                _cleanup_free_ char *hosts = strdup_printf(
                        "[%s,%s,%s]",
                        host_json(bufs[0], "h0", "test-multinode-0", CID, "known", "master", NULL),
                        host_json(bufs[1], "h1", "test-multinode-1", CID, "known", "master", NULL),
                        host_json(bufs[2], "h2", "test-multinode-2", "", "known-unbound", "auto-assign",
                                  NULL));

                fixture(&f, oacp(NULL));
                registered(&f, service_cluster("insufficient", hosts), hosts);
                mark_deleted(f.o.machines[2], NULL);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, binding_answers, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "bind-"), 0u);
                ASSERT_NULL(call(&run, "install"));
                fixture_done(&f);
        }
}

/* the config's finalizer is written on a live config */
TEST(config_finalizer_on_live_configs)
{
        ConfigFixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};

        config_fixture(&f, NULL, false, true);
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base,
                          (HubTestAnswer[]){ { "discovery-ignition", 200, DISCOVERY_IGN, NULL }, { NULL } },
                          &run);
        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_BOOTSTRAP));
        config_fixture_done(&f);
}

/* a config being deleted, its control plane's infra-env listing hosts */
static void deleted_config(ConfigFixture *f, const char *hosts)
{
        config_fixture(f, OAC_DELETED, false, true);
        f->o.hosts_read = true;
        f->o.hosts.status = 200;
        f->o.hosts.body = hubtest_json(hosts);
}

/* the service's record of when the host's status last changed: a minute
 * before NOW */
#define STATUS_UPDATED_MINUTES_AGO ",\"status_updated_at\":\"2026-09-21T14:12:20.000Z\""

/* A host binding for CAPI_BINDING_TIMEOUT, or for a time the service does
 * not say, is not coming back: the config's deletion deregisters it */
TEST(config_deletion_deregisters_a_host_stuck_binding)
{
        for (unsigned k = 0; k < 2; k++) {
                ConfigFixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char h0[2048], since[32], extra[64];
                _cleanup_free_ char *hosts = NULL;

                hub_format_time(NOW - CAPI_BINDING_TIMEOUT, since);
                snprintf(extra, sizeof(extra), ",\"status_updated_at\":\"%s\"", since);
                hosts = strdup_printf("[%s]", host_json(h0, "h0", "test-multinode-0", CID, "binding",
                                                        "master", k == 0 ? extra : NULL));
                deleted_config(&f, hosts);
                hubtest_reconcile(capi_bootstrap_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "deregister-host", 204, NULL, NULL }, { NULL } },
                                  &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1u);
                ASSERT_STREQ(made(&run, "deregister-host")->path, "/v2/infra-envs/" IEID "/hosts/h0");
                ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_BOOTSTRAP));
                config_fixture_done(&f);
        }
}

/* The config's deletion lets its Machine's host go: unbound while its
 * installation has not started, waited for while being bound,
 * deregistered once installing or installed; no host or an unbound one:
 * nothing to do. The finalizer goes when done. */
TEST(config_deletion_unbinds_or_deregisters_the_machines_host)
{
        static const struct {
                const char *status, *cluster_id, *call;
        } table[] = {
                { "known", CID, "unbind-host" },
                { "insufficient", CID, "unbind-host" },
                { "discovering", CID, "unbind-host" },
                { "disconnected", CID, "unbind-host" },
                { "pending-for-input", CID, "unbind-host" },
                { "binding", CID, NULL },
                { "installing-in-progress", CID, "deregister-host" },
                { "installed", CID, "deregister-host" },
                { "known-unbound", "", NULL },
                { NULL, NULL, NULL }, /* no host */
        };

        for (size_t k = 0; k < ELEMENTSOF(table); k++) {
                ConfigFixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char h0[2048], other[2048];
                _cleanup_free_ char *hosts = NULL;

                /* another Machine's host, never touched */
                host_json(other, "h9", "test-multinode-9", CID, "known", "master", NULL);
                hosts = table[k].status ? strdup_printf("[%s,%s]", other,
                                                        host_json(h0, "h0", "test-multinode-0",
                                                                  table[k].cluster_id, table[k].status,
                                                                  "master", STATUS_UPDATED_MINUTES_AGO))
                                        : strdup_printf("[%s]", other);
                deleted_config(&f, hosts);
                hubtest_reconcile(capi_bootstrap_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "unbind-host", 200, "{}", NULL },
                                                     { "deregister-host", 204, NULL, NULL },
                                                     { NULL } },
                                  &run);
                if (table[k].call) {
                        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1u);
                        ASSERT_NOT_NULL(call(&run, table[k].call));
                        ASSERT_STREQ(made(&run, table[k].call)->path,
                                     streq(table[k].call, "unbind-host")
                                             ? "/v2/infra-envs/" IEID "/hosts/h0/actions/unbind"
                                             : "/v2/infra-envs/" IEID "/hosts/h0");
                } else
                        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
                if (streq_ptr(table[k].status, "binding")) {
                        ASSERT_TRUE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_BOOTSTRAP));
                        ASSERT_CONDITION(f.o.base.object, "Deleting", "True", "WaitingForHostBinding",
                                         "host h0 is being bound: unbound once it is");
                        ASSERT_TRUE(run.requeue_after > 0);
                } else
                        ASSERT_FALSE(
                                hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_BOOTSTRAP));
                config_fixture_done(&f);
        }
}

/* the Machine already gone: its host is found by the owner reference's
 * name (a worker's config is named otherwise than its Machine) */
TEST(config_deletion_with_the_machine_gone)
{
        ConfigFixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char h0[2048], hc[2048];
        _cleanup_free_ char *hosts = strdup_printf(
                "[%s,%s]", host_json(h0, "h0", "test-multinode-0", CID, "known", "master", NULL),
                host_json(hc, "hc", "test-multinode-0-cfg", CID, "known", "master", NULL));

        deleted_config(&f, hosts);
        ASSERT_OK(json_add_string(json_get(f.o.base.object, "metadata"), "name", "test-multinode-0-cfg"));
        free(f.o.base.name);
        f.o.base.name = strdup("test-multinode-0-cfg");
        json_object_put(f.o.machine);
        f.o.machine = NULL;
        hubtest_reconcile(capi_bootstrap_decide, &f.o.base,
                          (HubTestAnswer[]){ { "unbind-host", 200, "{}", NULL }, { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1u);
        ASSERT_STREQ(made(&run, "unbind-host")->path, "/v2/infra-envs/" IEID "/hosts/h0/actions/unbind");
        ASSERT_FALSE(hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_BOOTSTRAP));
        config_fixture_done(&f);
}

/* a control plane deleted after an interrupted registration (its
 * marker, no id): what the call may have made is searched for as before
 * registering again, adopted and then deregistered; nothing found lets
 * it go; a failed search holds it */
TEST(control_plane_deletion_adopts_what_an_interrupted_registration_made)
{
        for (unsigned k = 0; k < 3; k++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};

                marked(&f, NULL, "hub-1", 30 * USEC_PER_SEC, HUB_ANNOTATION_CLUSTER_ID,
                       k == 0   ? "[{\"id\":\"" CID "\",\"name\":\"test-multinode\"}]"
                       : k == 1 ? "[{\"id\":\"" OTHER_CID "\",\"name\":\"someone-else\"}]"
                                : NULL);
                mark_deleted(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
                if (k == 0) {
                        /* recorded: the next reconcile reads and deregisters it */
                        ASSERT_STREQ(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_CLUSTER_ID), CID);
                        ASSERT_NULL(hub_object_annotation(f.o.base.object, HUB_ANNOTATION_REGISTERING));
                        ASSERT_TRUE(
                                hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
                } else if (k == 1)
                        ASSERT_FALSE(
                                hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
                else {
                        ASSERT_TRUE(
                                hub_object_has_finalizer(f.o.base.object, HUB_FINALIZER_CAPI_CONTROL_PLANE));
                        ASSERT_CONDITION(f.o.base.object, "Deleting", "True", "DeregistrationFailed",
                                         "cannot look for the cluster an interrupted registration may have "
                                         "made: the service answered 503");
                        ASSERT_TRUE(run.requeue_after > 0);
                }
                fixture_done(&f);
        }
}

/* a worker Machine being deleted once the cluster is installed is no
 * late worker: the cluster is not turned into a day-2 cluster for it, its
 * host is neither bound nor installed (its config's deletion unbinds it) */
TEST(day2_worker_being_deleted_not_added)
{
        for (unsigned day2 = 0; day2 < 2; day2++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char hw[2048];
                _cleanup_free_ char *hosts = NULL;

                /* 0: installed, its host unbound; 1: a day-2 cluster, its host bound and known */
                hosts = masters_and("installed", worker_host(hw, "hw", WORKER, day2, "known"));
                fixture(&f, oacp(NULL));
                registered(&f, day2 ? day2_cluster(hosts) : service_cluster("installed", hosts), hosts);
                with_minted_kubeconfig(&f, "kubeconfig", NOW);
                f.o.readyz = 0;
                with_worker(&f, WORKER);
                mark_deleted(f.o.workers[0], NULL);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "bind-*", 200, "{}", NULL },
                                                     { "role-*", 201, "{}", NULL },
                                                     { "sentinel-*", 201, NULL, NULL },
                                                     { "install-host-*", 202, "{}", NULL },
                                                     { "transform-day2", 202, "{}", NULL },
                                                     { NULL } },
                                  &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
                fixture_done(&f);
        }
}
