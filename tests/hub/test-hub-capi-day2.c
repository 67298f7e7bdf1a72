/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle-hub as the Cluster API provider (--capi), after day 1: a worker
 * or control-plane Machine the installation left out, installed as a
 * day-2 host; a control-plane Machine remediated. The table cases of
 * capi-controlplane.c's day-2 rules (capi.md §3.3, §6 item 8); the
 * objects of capitest.h.
 */
#include <json-c/json.h>

#include "capi-binding.h"
#include "capi-controlplane.h"
#include "capitest.h"
#include "cleanup.h"
#include "hubtest-csr.h"
#include "jsonutil.h"
#include "strutil.h"

/* ---- day 2: a worker Machine after the installation (capi.md §3.3's gate, §6 item 8) ---- */

/* the service's answer to TransformClusterToDay2 */
#define DAY2_TRANSFORMED \
        "{\"id\":\"" CID "\",\"kind\":\"AddHostsCluster\",\"status\":\"adding-hosts\",\"hosts\":[]}"

/* installed, a worker Machine left out: the cluster becomes a day-2
 * cluster (once), nothing of the kind while every worker is in */
TEST(installed_cluster_with_a_late_worker_turns_day2)
{
        for (unsigned late = 0; late < 2; late++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char hw[2048];
                _cleanup_free_ char *hosts = NULL;

                hosts = masters_and("installed",
                                    worker_host(hw, "hw", WORKER, !late, late ? "known" : "installed"));
                fixture(&f, oacp(NULL));
                registered(&f, service_cluster("installed", hosts), hosts);
                with_minted_kubeconfig(&f, "kubeconfig", NOW);
                f.o.readyz = 0;
                with_worker(&f, WORKER);
                hubtest_reconcile(
                        capi_controlplane_decide, &f.o.base,
                        (HubTestAnswer[]){ { "transform-day2", 202, DAY2_TRANSFORMED, NULL }, { NULL } },
                        &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "transform-day2"), late ? 1u : 0u);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "bind-"), 0u);
                /* the control plane stays available through it */
                ASSERT_CONDITION(f.o.base.object, "Available", "True", "ControlPlaneAvailable",
                                 late ? "Controlplane available, status: adding-hosts"
                                      : "Controlplane available, status: installed");
                fixture_done(&f);
        }
}

/* a day-2 cluster: the late worker's host is bound as worker with the
 * sentinel; once known, installed (v2InstallHost); a foreign host never */
TEST(day2_worker_host_bound_then_installed)
{
        for (unsigned known_bound = 0; known_bound < 2; known_bound++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                char hw[2048], hx[2048];
                _cleanup_free_ char *more = NULL, *hosts = NULL;

                more = strdup_printf("%s,%s", worker_host(hw, "hw", WORKER, known_bound, "known"),
                                     host_json(hx, "hx", "intruder", "", "known", "auto-assign", NULL));
                hosts = masters_and("installed", more);
                fixture(&f, oacp(NULL));
                registered(&f, day2_cluster(hosts), hosts);
                with_minted_kubeconfig(&f, "kubeconfig", NOW);
                f.o.readyz = 0;
                with_worker(&f, WORKER);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                                  (HubTestAnswer[]){ { "bind-*", 200, "{}", NULL },
                                                     { "role-*", 201, "{}", NULL },
                                                     { "sentinel-*", 201, NULL, NULL },
                                                     { "install-host-*", 202, "{}", NULL },
                                                     { NULL } },
                                  &run);
                ASSERT_NULL(call(&run, "bind-hx"));
                ASSERT_NULL(call(&run, "install-host-hx"));
                ASSERT_NULL(call(&run, "transform-day2"));
                if (!known_bound) {
                        ASSERT_NOT_NULL(call(&run, "bind-hw"));
                        ASSERT_NOT_NULL(call(&run, "role-hw"));
                        ASSERT_NOT_NULL(call(&run, "sentinel-hw"));
                        ASSERT_STREQ(hubtest_str(call(&run, "bind-hw")->body, "cluster_id"), CID);
                        ASSERT_STREQ(hubtest_str(call(&run, "role-hw")->body, "host_role"), "worker");
                        /* installed only once the service lists it bound, known */
                        ASSERT_NULL(call(&run, "install-host-hw"));
                } else {
                        ASSERT_NULL(call(&run, "bind-hw"));
                        ASSERT_NOT_NULL(call(&run, "install-host-hw"));
                        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1u);
                }
                ASSERT_TRUE(run.requeue_after > 0);
                fixture_done(&f);
        }
}

/* a day-2 host installing shows it on its Machine, and the service is
 * polled for it */
TEST(day2_worker_progress)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        char hw[2048];
        _cleanup_free_ char *hosts = NULL;
        const HubWrite *p;

        hosts = masters_and("installed", worker_host(hw, "hw", WORKER, true, "installing-in-progress"));
        fixture(&f, oacp(NULL));
        registered(&f, day2_cluster(hosts), hosts);
        with_minted_kubeconfig(&f, "kubeconfig", NOW);
        f.o.readyz = 0;
        with_worker(&f, WORKER);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        p = machine_status(&run, WORKER);
        ASSERT_NOT_NULL(p);
        ASSERT_CONDITION(p->body, "HostInstallation", "False", "InstallingInProgress", NULL);
        ASSERT_TRUE(run.requeue_after > 0);
        ASSERT_TRUE(run.requeue_after < (usec_t)43200 * USEC_PER_SEC);
        fixture_done(&f);
}

/* A day-2 worker's node joins: cradle-hub approves its client CSR, then
 * its serving CSR once the Node exists (checked as csr_utils.go checks
 * them: another node's CSR never), and shows the Machine Joined once the
 * Node is Ready with its serving certificate; then it looks no more. The
 * worker Machine is called worker-0 (the CSRs' node). */
static void day2_joining_fixture(Fixture *f, const char *host_status, json_object *csrs, json_object *node)
{
        char hw[2048];
        _cleanup_free_ char *hosts = NULL;
        _cleanup_(json_object_putp) json_object *h =
                hubtest_json(worker_host(hw, "hw", "worker-0", true, host_status));

        if (streq(host_status, "installing-in-progress"))
                ASSERT_OK(json_add(h, "progress", hubtest_json("{\"current_stage\":\"Rebooting\"}")));
        hosts = masters_and("installed", json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
        fixture(f, oacp(NULL));
        registered(f, day2_cluster(hosts), hosts);
        with_minted_kubeconfig(f, "kubeconfig", NOW);
        f->o.readyz = 0;
        with_worker(f, "worker-0");
        f->o.spoke_csrs = csrs;
        f->o.spoke_nodes = json_new_object();
        if (node)
                ASSERT_OK(json_add(f->o.spoke_nodes, "worker-0", node));
}

static void approved(json_object *csr)
{
        ASSERT_OK(json_add(json_get(csr, "status"), "conditions",
                           hubtest_json("[{\"type\":\"Approved\",\"status\":\"True\"}]")));
}

TEST(day2_worker_node_csrs_approved_until_joined)
{
        Fixture f;
        HubTestRun run = {};
        const HubWrite *p;
        json_object *l;

        /* rebooting: its client CSR (another node's stays) */
        for (unsigned k = 0; k < 2; k++) {
                l = json_new_array();
                ASSERT_OK(json_append(l, csr("csr-client", CSR_CLIENT, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                                             "[\"digital signature\",\"client auth\"]")));
                ASSERT_OK(json_append(l, csr("csr-other", CSR_OTHER, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                                             "[\"digital signature\",\"client auth\"]")));
                day2_joining_fixture(&f, k == 0 ? "installing-in-progress" : "added-to-existing-cluster", l,
                                     NULL);
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1u);
                ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->name, "csr-client");
                ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->spoke_verb, "approve");
                ASSERT_STREQ(hubtest_str(json_object_array_get_idx(
                                                 json_get_path(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->body,
                                                               "status.conditions"),
                                                 0),
                                         "reason"),
                             "NodeCSRApprove");
                p = machine_status(&run, "worker-0");
                ASSERT_NOT_NULL(p);
                if (k == 1)
                        ASSERT_CONDITION(
                                p->body, "HostInstallation", "False", "Joining",
                                "added to the cluster; its node worker-0 has not registered (its client "
                                "certificate is approved as it asks)");
                ASSERT_TRUE(run.requeue_after < (usec_t)43200 * USEC_PER_SEC);
                hubtest_run_done(&run);
                fixture_done(&f);
        }

        /* the Node, not Ready: its serving CSR approved; Ready: Joined */
        for (unsigned ready = 0; ready < 2; ready++) {
                json_object *client;

                l = json_new_array();
                client = csr("csr-client", CSR_CLIENT, BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                             "[\"digital signature\",\"client auth\"]");
                approved(client);
                ASSERT_OK(json_append(l, client));
                ASSERT_OK(json_append(l, csr("csr-serving", CSR_SERVING, "system:node:worker-0",
                                             "[\"system:nodes\",\"system:authenticated\"]",
                                             "[\"digital signature\",\"server auth\"]")));
                day2_joining_fixture(&f, "added-to-existing-cluster", l, node(ready));
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 1u);
                ASSERT_STREQ(hubtest_write(&run, HUB_WRITE_SPOKE, 0)->name, "csr-serving");
                p = machine_status(&run, "worker-0");
                ASSERT_NOT_NULL(p);
                if (ready) {
                        ASSERT_CONDITION(p->body, "HostInstallation", "True", "Joined", NULL);
                        ASSERT_EQ(run.requeue_after, (usec_t)43200 * USEC_PER_SEC);
                } else {
                        ASSERT_CONDITION(p->body, "HostInstallation", "False", "Joining",
                                         "added to the cluster; its node worker-0 is not Ready");
                        ASSERT_TRUE(run.requeue_after < (usec_t)43200 * USEC_PER_SEC);
                }
                hubtest_run_done(&run);
                fixture_done(&f);
        }

        /* shown Joined: nothing read or approved any more (observe reads
         * nothing: day2_joining() is false), and it stays Joined */
        day2_joining_fixture(&f, "added-to-existing-cluster", NULL, NULL);
        json_object_put(f.o.spoke_nodes);
        f.o.spoke_nodes = NULL;
        ASSERT_OK(hub_meta_conditions_set(f.o.workers[0], "HostInstallation", "True", "Joined", "", NOW));
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SPOKE, NULL), 0u);
        ASSERT_EQ(run.requeue_after, (usec_t)43200 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* ---- day 2: a control-plane Machine after the installation ---- */

/* The control plane's third Machine replaced after the installation (its
 * host deregistered with its config, the Machine made again): the new
 * host, named after the Machine, is unbound; the other two installed.
 * host_status, bound: the new host's */
static void replaced_master_fixture(Fixture *f, json_object *(*cluster)(const char *),
                                    const char *host_status, bool bound)
{
        char b0[2048], b1[2048], bn[2048];
        _cleanup_(json_object_putp) json_object *h =
                hubtest_json(host_json(bn, "hn", "test-multinode-2", bound ? CID : "", host_status,
                                       bound ? "master" : "auto-assign", NULL));
        _cleanup_free_ char *hosts = NULL;

        hosts = strdup_printf("[%s,%s,%s]",
                              host_json(b0, "h0", "test-multinode-0", CID, "installed", "master", NULL),
                              host_json(b1, "h1", "test-multinode-1", CID, "installed", "master", NULL),
                              json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
        ASSERT_NOT_NULL(hosts);
        fixture(f, oacp(NULL));
        registered(f, cluster(hosts), hosts);
        with_minted_kubeconfig(f, "kubeconfig", NOW);
        f->o.readyz = 0;
}

static json_object *installed_cluster(const char *hosts)
{
        return service_cluster("installed", hosts);
}

/* installed, a control-plane Machine's host not in it: the cluster turns
 * day-2; then the host is bound as a master with the sentinel, installed
 * once known, and its Machine joins as a day-2 worker's does */
TEST(replaced_control_plane_machine_installed_as_day2_master)
{
        Fixture f;
        HubTestRun run = {};
        const HubWrite *p;

        /* installed: day 2, nothing bound while it is not */
        replaced_master_fixture(&f, installed_cluster, "known", false);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "transform-day2", 202, DAY2_TRANSFORMED, NULL }, { NULL } },
                          &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "transform-day2"), 1u);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, "bind-"), 0u);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1u);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* a day-2 cluster: bound as master, with the sentinel, not installed yet */
        replaced_master_fixture(&f, day2_cluster, "known", false);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, binding_answers, &run);
        ASSERT_STREQ(hubtest_str(call(&run, "bind-hn")->body, "cluster_id"), CID);
        ASSERT_STREQ(hubtest_str(call(&run, "role-hn")->body, "host_role"), "master");
        ASSERT_STREQ(hubtest_str(call(&run, "sentinel-hn")->body, "config"), capi_sentinel_ignition);
        ASSERT_NULL(call(&run, "install-host-hn"));
        ASSERT_NULL(call(&run, "transform-day2"));
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 3u);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* listed bound, known, master, with the sentinel: installed, once */
        replaced_master_fixture(&f, day2_cluster, "known", true);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base,
                          (HubTestAnswer[]){ { "install-host-*", 202, "{}", NULL }, { NULL } }, &run);
        ASSERT_NOT_NULL(call(&run, "install-host-hn"));
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 1u);
        hubtest_run_done(&run);
        fixture_done(&f);

        /* added to the cluster: its Machine waits for its node, polled */
        replaced_master_fixture(&f, day2_cluster, "added-to-existing-cluster", true);
        f.o.spoke_csrs = json_new_array();
        f.o.spoke_nodes = json_new_object();
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        p = machine_status(&run, "test-multinode-2");
        ASSERT_NOT_NULL(p);
        ASSERT_CONDITION(p->body, "HostInstallation", "False", "Joining",
                         "added to the cluster; its node test-multinode-2 has not registered (its client "
                         "certificate is approved as it asks)");
        ASSERT_TRUE(run.requeue_after < (usec_t)43200 * USEC_PER_SEC);
        hubtest_run_done(&run);
        fixture_done(&f);
}

/* while the installation runs, a control-plane Machine made since waits
 * as a late worker does: not bound, and its Machine says why */
TEST(control_plane_machine_made_during_the_installation_waits)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        const HubWrite *p;

        replaced_master_fixture(&f, installed_cluster, "known", false);
        ASSERT_OK(json_add_string(f.o.service_cluster.body, "status", "installing"));
        /* the day-1 kubeconfig, as the installation leaves it */
        with_kubeconfig(&f, "kubeconfig-noingress");
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        p = machine_status(&run, "test-multinode-2");
        ASSERT_NOT_NULL(p);
        ASSERT_CONDITION(p->body, "HostInstallation", "False", "NotInDay1Installation", NULL);
        fixture_done(&f);
}

/* ---- remediation of a control-plane Machine (a MachineHealthCheck's OwnerRemediated) ---- */

/* the installed cluster's three control-plane Machines, each shown
 * Joined; the one of index `unhealthy` marked by a health check for its
 * owner's remediation; the cluster in that status */
static void remediation_fixture(Fixture *f, const char *cluster_status, unsigned unhealthy)
{
        char bufs[3][2048];
        const char *hosts = three_masters(bufs, "installed", NULL);

        fixture(f, oacp(NULL));
        registered(f, service_cluster(cluster_status, hosts), hosts);
        with_minted_kubeconfig(f, "kubeconfig", NOW);
        f->o.readyz = 0;
        for (unsigned i = 0; i < 3; i++)
                ASSERT_OK(hub_meta_conditions_set(f->o.machines[i], "HostInstallation", "True", "Installed",
                                                  "", NOW));
        ASSERT_OK(hub_meta_conditions_set(f->o.machines[unhealthy], "HealthCheckSucceeded", "False",
                                          "UnhealthyNode", "Node not ready for 5m", NOW));
        ASSERT_OK(hub_meta_conditions_set(f->o.machines[unhealthy], "OwnerRemediated", "False",
                                          "WaitingForRemediation", "", NOW));
}

static unsigned deletes(const HubTestRun *run, const char *name)
{
        unsigned n = 0;

        for (unsigned i = 0; hubtest_write(run, HUB_WRITE_DELETE, i); i++)
                n += streq_ptr(hubtest_write(run, HUB_WRITE_DELETE, i)->name, name);
        return n;
}

/* installed, the two others Joined and healthy: the Machine is deleted
 * (its uid as precondition), its OwnerRemediated says so; nothing is
 * asked of the service (the config's deletion lets the host go) */
TEST(unhealthy_control_plane_machine_remediated)
{
        Fixture f;
        _cleanup_(hubtest_run_done) HubTestRun run = {};
        const HubWrite *p;

        remediation_fixture(&f, "installed", 1);
        hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_SERVICE, NULL), 0u);
        ASSERT_EQ(deletes(&run, "test-multinode-1"), 1u);
        ASSERT_EQ(hubtest_count(&run, HUB_WRITE_DELETE, NULL), 1u);
        ASSERT_EQ(hubtest_write(&run, HUB_WRITE_DELETE, 0)->target, HUB_KIND_MACHINE);
        p = machine_status(&run, "test-multinode-1");
        ASSERT_NOT_NULL(p);
        ASSERT_CONDITION(p->body, "OwnerRemediated", "False", "MachineDeleting",
                         "deleted to be made again: its host is reinstalled as a day-2 control-plane host");
        p = machine_status(&run, "test-multinode-0");
        ASSERT_TRUE(!p || !hub_conditions_find(p->body, "OwnerRemediated"));
        fixture_done(&f);
}

/* what holds a remediation back, as KCP's preflight checks do: the
 * installation not done, another Machine being deleted or still being
 * installed, etcd's quorum; the Machine is not deleted and says why */
TEST(control_plane_remediation_held)
{
        static const struct {
                const char *name;
                const char *reason, *message;
        } cases[] = {
                { "installing", "RemediationDeferred",
                  "the control plane remediates its Machines once the cluster is installed" },
                { "deleting", "RemediationDeferred",
                  "waiting for the control-plane Machine being deleted to go" },
                { "provisioning", "RemediationDeferred",
                  "waiting for the control-plane Machines being installed" },
                { "quorum", "CannotBeRemediated",
                  "remediating this Machine could leave etcd without quorum" },
        };

        for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};
                const HubWrite *p;

                remediation_fixture(&f, k == 0 ? "installing" : "installed", 1);
                if (k == 0)
                        with_kubeconfig(&f, "kubeconfig-noingress");
                if (k == 1)
                        ASSERT_OK(json_add_string(json_get(f.o.machines[2], "metadata"), "deletionTimestamp",
                                                  "2026-09-21T14:00:00Z"));
                if (k == 2)
                        ASSERT_OK(hub_meta_conditions_set(f.o.machines[2], "HostInstallation", "False",
                                                          "InstallingInProgress", "", NOW));
                if (k == 3)
                        ASSERT_OK(hub_meta_conditions_set(f.o.machines[2], "HealthCheckSucceeded", "False",
                                                          "UnhealthyNode", "", NOW));
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_DELETE, NULL), 0u);
                p = machine_status(&run, "test-multinode-1");
                ASSERT_NOT_NULL(p);
                ASSERT_CONDITION(p->body, "OwnerRemediated", "False", cases[k].reason, cases[k].message);
                fixture_done(&f);
        }
}

/* a health check that found nothing wrong, or a Machine being deleted
 * already: nothing remediated */
TEST(control_plane_remediation_needs_both_conditions)
{
        for (unsigned k = 0; k < 2; k++) {
                Fixture f;
                _cleanup_(hubtest_run_done) HubTestRun run = {};

                remediation_fixture(&f, "installed", 1);
                if (k == 0)
                        ASSERT_OK(hub_meta_conditions_set(f.o.machines[1], "HealthCheckSucceeded", "True",
                                                          "HealthCheckSucceeded", "", NOW));
                else
                        ASSERT_OK(json_add_string(json_get(f.o.machines[1], "metadata"), "deletionTimestamp",
                                                  "2026-09-21T14:00:00Z"));
                hubtest_reconcile(capi_controlplane_decide, &f.o.base, (HubTestAnswer[]){ { NULL } }, &run);
                ASSERT_EQ(hubtest_count(&run, HUB_WRITE_DELETE, NULL), 0u);
                fixture_done(&f);
        }
}

DEFINE_TEST_MAIN
