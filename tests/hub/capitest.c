/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>

#include "capi-binding.h"
#include "capitest.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "strutil.h"

json_object *oacp(const char *extra_meta)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"controlplane.cluster.x-k8s.io/v1alpha3\",\"kind\":"
                "\"OpenshiftAssistedControlPlane\",\"metadata\":{\"name\":\"test-multinode\",\"namespace\":"
                "\"" NS "\",\"uid\":\"oacp-uid\",\"resourceVersion\":\"5\",\"generation\":1,"
                "\"labels\":{\"cluster.x-k8s.io/cluster-name\":\"test-multinode\"},"
                "\"ownerReferences\":[{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"Cluster\","
                "\"name\":\"test-multinode\",\"uid\":\"cluster-uid\"}]%s},"
                "\"spec\":{\"distributionVersion\":\"4.19.0\",\"replicas\":3,"
                "\"config\":{\"baseDomain\":\"lab.home\",\"clusterName\":\"test-multinode\","
                "\"apiVIPs\":[\"192.168.222.40\"],\"ingressVIPs\":[\"192.168.222.41\"],"
                "\"pullSecretRef\":{\"name\":\"pull-secret\"},\"sshAuthorizedKey\":\"ssh-ed25519 AAAA "
                "test\"},"
                "\"openshiftAssistedConfigSpec\":{\"sshAuthorizedKey\":\"ssh-ed25519 AAAA test\","
                "\"cpuArchitecture\":\"x86_64\"},"
                "\"machineTemplate\":{\"infrastructureRef\":{\"apiGroup\":\"infrastructure.cluster.x-k8s."
                "io\","
                "\"kind\":\"Metal3MachineTemplate\",\"name\":\"test-multinode-controlplane\"}}}}",
                extra_meta ? extra_meta : "");
}

json_object *capi_cluster(bool paused)
{
        return hubtest_jsonf("{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"Cluster\","
                             "\"metadata\":{\"name\":\"test-multinode\",\"namespace\":\"" NS "\","
                             "\"uid\":\"cluster-uid\"},\"spec\":{\"paused\":%s,\"clusterNetwork\":{"
                             "\"pods\":{\"cidrBlocks\":[\"10.128.0.0/14\"]},"
                             "\"services\":{\"cidrBlocks\":[\"172.30.0.0/16\"]}}}}",
                             paused ? "true" : "false");
}

json_object *machine(const char *name)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"cluster.x-k8s.io/"
                "v1beta2\",\"kind\":\"Machine\",\"metadata\":{\"name\":\"%s\","
                "\"namespace\":\"" NS "\",\"uid\":\"uid-%s\",\"resourceVersion\":\"11\","
                "\"labels\":{\"cluster.x-k8s.io/cluster-name\":\"test-multinode\","
                "\"cluster.x-k8s.io/control-plane\":\"\"},"
                "\"ownerReferences\":[{\"apiVersion\":\"controlplane.cluster.x-k8s.io/v1alpha3\",\"kind\":"
                "\"OpenshiftAssistedControlPlane\",\"name\":\"test-multinode\",\"uid\":\"oacp-uid\","
                "\"controller\":true}]},\"spec\":{\"clusterName\":\"test-multinode\"}}",
                name, name);
}

/* a host of the infra-env; cluster_id "" when unbound */
const char *host_json(char buf[static 2048], const char *id, const char *hostname, const char *cluster_id,
                      const char *status, const char *role, const char *progress)
{
        _cleanup_(json_object_putp) json_object *h = hubtest_jsonf(
                "{\"id\":\"%s\",\"infra_env_id\":\"" IEID "\",\"requested_hostname\":\"%s\","
                "\"cluster_id\":\"%s\",\"status\":\"%s\",\"role\":\"%s\",\"suggested_role\":\"%s\"%s}",
                id, hostname, cluster_id, status, role, role, progress ? progress : "");

        /* a host bound as master has had its sentinel override set
         * (hosts_get_the_sentinel_before_the_installation shows how) */
        if (!isempty(cluster_id) && streq(role, "master"))
                ASSERT_OK(json_add_string(h, "ignition_config_overrides", capi_sentinel_ignition));
        snprintf(buf, 2048, "%s", json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
        return buf;
}

/* the service's answers to binding a host: bind, role, sentinel */
const HubTestAnswer binding_answers[] = {
        { "bind-*", 200, "{}", NULL },
        { "role-*", 201, "{}", NULL },
        { "sentinel-*", 201, NULL, NULL },
        { NULL },
};

/* the service's answers to the two registrations */
const HubTestAnswer registration_answers[] = {
        { "register-cluster", 201, "{\"id\":\"" CID "\"}", NULL },
        { "register-infraenv", 201, "{\"id\":\"" IEID "\"}", NULL },
        { NULL },
};

void fixture(Fixture *f, json_object *cp)
{
        *f = (Fixture){};
        f->o.base.now = NOW;
        f->o.base.ns = strdup(NS);
        f->o.base.name = strdup("test-multinode");
        f->o.base.object = cp;
        f->o.image_type = "minimal-iso";
        f->o.cluster = capi_cluster(false);
        /* labelled for the hub's cache, as the first reconcile leaves it
         * (secrets_read_each_reconcile_labelled_for_the_cache) */
        f->o.secret.object = hubtest_json("{\"metadata\":{\"name\":\"pull-secret\",\"namespace\":\"" NS "\","
                                          "\"labels\":" WATCH_LABELS
                                          "},\"data\":{\".dockerconfigjson\":\"" PS_B64 "\"}}");
        f->o.infra_template.object = hubtest_json(
                "{\"apiVersion\":\"infrastructure.cluster.x-k8s.io/"
                "v1beta1\",\"kind\":\"Metal3MachineTemplate\","
                "\"metadata\":{\"name\":\"test-multinode-controlplane\",\"namespace\":\"" NS "\"},"
                "\"spec\":{\"template\":{\"spec\":{\"image\":{\"url\":\"http://example/rhcos.qcow2\","
                "\"checksum\":\"http://example/rhcos.qcow2.sha256sum\",\"checksumType\":\"sha256\","
                "\"format\":\"qcow2\"}}}}}");
        f->o.kubeconfig.error = -ENOENT;
        f->o.readyz = -ENOENT;
        f->o.cert_expiration = CAPI_KUBECONFIG_DEFAULT_EXPIRATION;
}

/* the control plane registered, its three Machines made */
void registered(Fixture *f, json_object *cluster, const char *hosts)
{
        json_object *ann = hub_json_ensure_object(f->o.base.object, "metadata.annotations");

        ASSERT_OK(json_add_string(ann, HUB_ANNOTATION_CLUSTER_ID, CID));
        ASSERT_OK(json_add_string(ann, HUB_ANNOTATION_INFRAENV_ID, IEID));
        f->o.machines = calloc(3, sizeof(json_object *));
        ASSERT_NOT_NULL(f->o.machines);
        for (unsigned i = 0; i < 3; i++) {
                char name[64];

                snprintf(name, sizeof(name), "test-multinode-%u", i);
                f->o.machines[f->o.n_machines++] = machine(name);
        }
        f->o.cluster_read = true;
        f->o.service_cluster.status = 200;
        f->o.service_cluster.body = cluster;
        f->o.hosts_read = true;
        f->o.hosts.status = 200;
        f->o.hosts.body = hubtest_json(hosts);
}

/* the infra-env's host list not read (observe_service() reads it only
 * when the cluster's own hosts miss a Machine's) */
void hosts_not_listed(Fixture *f)
{
        hub_call_result_done(&f->o.hosts);
        f->o.hosts = (HubCallResult){};
        f->o.hosts_read = false;
}

/* the <cluster>-kubeconfig Secret exists, holding that credentials file
 * (NULL: not said) */
void with_kubeconfig(Fixture *f, const char *file)
{
        hub_ref_done(&f->o.kubeconfig);
        f->o.kubeconfig.object = hubtest_jsonf(
                "{\"metadata\":{\"name\":\"test-multinode-kubeconfig\",\"namespace\":\"" NS
                "\",\"labels\":" WATCH_LABELS "%s%s%s},"
                "\"data\":{\"value\":\"eA==\"}}",
                file ? ",\"annotations\":{\"cradle.agent-install.openshift.io/kubeconfig-file\":\"" : "",
                strempty(file), file ? "\"}" : "");
}

/* the Secret holds a client certificate minted here from that file,
 * valid from not_before for a day */
void with_minted_kubeconfig(Fixture *f, const char *file, usec_t not_before)
{
        with_kubeconfig(f, file);
        ASSERT_OK(hub_object_set_annotation(f->o.kubeconfig.object,
                                            "cradle.agent-install.openshift.io/kubeconfig-csr",
                                            "cradle-hub-kubeconfig-abcde"));
        f->o.kubeconfig_cert = (CapiKubeconfigCert){ .minted = true,
                                                     .not_before = not_before,
                                                     .not_after = not_before + 86400 * USEC_PER_SEC };
}

json_object *service_cluster(const char *status, const char *hosts)
{
        return hubtest_jsonf("{\"id\":\"" CID "\",\"kind\":\"Cluster\",\"name\":\"test-multinode\","
                             "\"openshift_version\":\"4.19.0\",\"status\":\"%s\",\"hosts\":%s}",
                             status, hosts);
}

void fixture_done(Fixture *f)
{
        capi_controlplane_observed_done(&f->o.base);
        hub_observed_done(&f->o.base);
}

/* the n-th write of that kind (HUB_WRITE_*) to an object of that kind */
const HubWrite *write_to(const HubTestRun *run, HubWriteKind wk, HubKind kind, unsigned n)
{
        for (size_t i = 0; i < run->writes.n; i++) {
                const HubWrite *w = &run->writes.writes[i];

                if (w->kind == wk && w->target == kind && n-- == 0)
                        return w;
        }
        return NULL;
}

const HubWrite *create_of(const HubTestRun *run, HubKind kind, unsigned n)
{
        return write_to(run, HUB_WRITE_CREATE, kind, n);
}

unsigned creates(const HubTestRun *run, HubKind kind)
{
        unsigned n = 0;

        while (create_of(run, kind, n))
                n++;
        return n;
}

const HubWrite *call(const HubTestRun *run, const char *tag)
{
        for (size_t i = 0; i < run->writes.n; i++)
                if (run->writes.writes[i].kind == HUB_WRITE_SERVICE &&
                    streq_ptr(run->writes.writes[i].tag, tag))
                        return &run->writes.writes[i];
        return NULL;
}

const char *three_masters(char bufs[3][2048], const char *status, const char *progress)
{
        static char all[8192];

        snprintf(all, sizeof(all), "[%s,%s,%s]",
                 host_json(bufs[0], "h0", "test-multinode-0", CID, status, "master", progress),
                 host_json(bufs[1], "h1", "test-multinode-1", CID, status, "master", progress),
                 host_json(bufs[2], "h2", "test-multinode-2", CID, status, "master", progress));
        return all;
}

/* a worker Machine as CAPI core's MachineSet makes it: the cluster-name
 * label, no control-plane label, its config cloned from an
 * OpenshiftAssistedConfigTemplate */
json_object *worker_machine(const char *name)
{
        return hubtest_jsonf(
                "{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"Machine\",\"metadata\":{\"name\":"
                "\"%s\",\"namespace\":\"" NS "\",\"uid\":\"uid-%s\",\"resourceVersion\":\"12\","
                "\"labels\":{\"cluster.x-k8s.io/cluster-name\":\"test-multinode\","
                "\"cluster.x-k8s.io/deployment-name\":\"test-multinode-workers\"},"
                "\"ownerReferences\":[{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"MachineSet\","
                "\"name\":\"test-multinode-workers-7d9f8\",\"uid\":\"ms-uid\",\"controller\":true}]},"
                "\"spec\":{\"clusterName\":\"test-multinode\",\"bootstrap\":{\"configRef\":{\"apiGroup\":"
                "\"bootstrap.cluster.x-k8s.io\",\"kind\":\"OpenshiftAssistedConfig\",\"name\":\"%s\"}},"
                "\"infrastructureRef\":{\"apiGroup\":\"infrastructure.cluster.x-k8s.io\",\"kind\":"
                "\"Metal3Machine\",\"name\":\"%s\"}}}",
                name, name, name, name);
}

void with_worker(Fixture *f, const char *name)
{
        json_object **l = reallocarray(f->o.workers, f->o.n_workers + 1, sizeof(*l));

        ASSERT_NOT_NULL(l);
        f->o.workers = l;
        f->o.workers[f->o.n_workers++] = worker_machine(name);
}

/* the three masters bound (as three_masters()) and more hosts */
char *masters_and(const char *status, const char *more)
{
        char bufs[3][2048];
        const char *m = three_masters(bufs, status, NULL);
        char *all = strdup_printf("%.*s%s%s]", (int)strlen(m) - 1, m, more ? "," : "", strempty(more));

        ASSERT_NOT_NULL(all);
        return all;
}

/* a worker's host; bound ones with role worker and the sentinel's override */
const char *worker_host(char buf[static 2048], const char *id, const char *hostname, bool bound,
                        const char *status)
{
        _cleanup_(json_object_putp) json_object *h = hubtest_json(host_json(
                buf, id, hostname, bound ? CID : "", status, bound ? "worker" : "auto-assign", NULL));

        if (bound)
                ASSERT_OK(json_add_string(h, "ignition_config_overrides", capi_sentinel_ignition));
        snprintf(buf, 2048, "%s", json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
        return buf;
}

json_object *day2_cluster(const char *hosts)
{
        json_object *c = service_cluster("adding-hosts", hosts);

        ASSERT_OK(json_add_string(c, "kind", "AddHostsCluster"));
        return c;
}

const HubWrite *machine_status(const HubTestRun *run, const char *name)
{
        const HubWrite *p = NULL;

        for (unsigned i = 0; hubtest_write(run, HUB_WRITE_PATCH_STATUS, i); i++)
                if (streq_ptr(hubtest_write(run, HUB_WRITE_PATCH_STATUS, i)->name, name))
                        p = hubtest_write(run, HUB_WRITE_PATCH_STATUS, i);
        return p;
}
