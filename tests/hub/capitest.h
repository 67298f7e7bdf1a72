/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The objects and fixtures of the --capi table tests (test-hub-capi.c,
 * test-hub-capi-day2.c): CAPOA's getting-started example's shape
 * (docs/getting_started.md: an OpenshiftAssistedControlPlane with three
 * replicas and a Metal3MachineTemplate), their names made to point at
 * each other; the service's cluster and hosts; what a reconcile wrote.
 */

#include <stdbool.h>

#include "capi-controlplane.h"
#include "hubtest.h"

#define NOW (UINT64_C(1790000000) * USEC_PER_SEC)
#define CID "3c5e6d1a-0b7f-4c2e-9a41-0d5f1e2a3b4c"
#define IEID "9f0e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f"
#define PS_B64 "eyJhdXRocyI6eyJxdWF5LmlvIjp7ImF1dGgiOiJkWE5sY2pwd1lYTnoifX19"
#define PS_TEXT "{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}"
#define NS "test-capi"
/* the hub's labels on a Secret it reads from its cache */
#define WATCH_LABELS \
        "{\"agent-install.openshift.io/watch\":\"true\",\"cluster.open-cluster-management.io/" \
        "backup\":\"true\"}"
/* a worker Machine of the MachineDeployment test-multinode-workers */
#define WORKER "test-multinode-workers-7d9f8-x2k4q"

/* the service's answers to binding a host (bind, role, sentinel) and to
 * the two registrations */
extern const HubTestAnswer binding_answers[];
extern const HubTestAnswer registration_answers[];

typedef struct Fixture {
        ControlPlaneObserved o;
} Fixture;

/* the control plane test-multinode (extra_meta: more of its metadata),
 * its Cluster, a control-plane Machine of it */
json_object *oacp(const char *extra_meta);
json_object *capi_cluster(bool paused);
json_object *machine(const char *name);
/* a host of the infra-env; cluster_id "" when unbound (a master bound
 * has the sentinel's override) */
const char *host_json(char buf[static 2048], const char *id, const char *hostname, const char *cluster_id,
                      const char *status, const char *role, const char *progress);
/* the three control-plane Machines' hosts bound as masters, in status */
const char *three_masters(char bufs[3][2048], const char *status, const char *progress);
/* the three masters bound (as three_masters()) and more hosts */
char *masters_and(const char *status, const char *more);
/* a worker Machine as CAPI core's MachineSet makes it, and its host
 * (bound ones with role worker and the sentinel's override) */
json_object *worker_machine(const char *name);
const char *worker_host(char buf[static 2048], const char *id, const char *hostname, bool bound,
                        const char *status);
/* the service's cluster in status with those hosts; day-2 (AddHostsCluster) */
json_object *service_cluster(const char *status, const char *hosts);
json_object *day2_cluster(const char *hosts);

/* the control plane observed with its Cluster, pull secret and template */
void fixture(Fixture *f, json_object *cp);
/* the control plane registered, its three Machines made */
void registered(Fixture *f, json_object *cluster, const char *hosts);
/* the infra-env's host list not read (observe_service() reads it only
 * when the cluster's own hosts miss a Machine's) */
void hosts_not_listed(Fixture *f);
/* the <cluster>-kubeconfig Secret exists, holding that credentials file
 * (NULL: not said); one holding a client certificate minted here from
 * that file, valid from not_before for a day */
void with_kubeconfig(Fixture *f, const char *file);
void with_minted_kubeconfig(Fixture *f, const char *file, usec_t not_before);
void with_worker(Fixture *f, const char *name);
void fixture_done(Fixture *f);

/* what the reconcile wrote: the n-th write of that kind (HUB_WRITE_*) to
 * an object of that kind; the n-th create; how many; the service call
 * of that tag; the last status patch of that Machine */
const HubWrite *write_to(const HubTestRun *run, HubWriteKind wk, HubKind kind, unsigned n);
const HubWrite *create_of(const HubTestRun *run, HubKind kind, unsigned n);
unsigned creates(const HubTestRun *run, HubKind kind);
const HubWrite *call(const HubTestRun *run, const char *tag);
const HubWrite *machine_status(const HubTestRun *run, const char *name);
