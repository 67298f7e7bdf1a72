/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <json-c/json.h>

#include "assisted/assisted-user.h"
#include "capi-binding.h"
#include "capi-controlplane.h"
#include "kube/kube-csr.h"
#include "kube/kube-node.h"
#include "node-csr.h"
#include "cleanup.h"
#include "cluster.h"
#include "hub-cache.h"
#include "hub-claim.h"
#include "hub-exec.h"
#include "infraenv.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

#define TAG_REGISTER_CLUSTER "register-cluster"
#define TAG_REGISTER_INFRAENV "register-infraenv"
#define TAG_BIND "bind-"
#define TAG_ROLE "role-"
#define TAG_SENTINEL "sentinel-"
#define TAG_INSTALL "install"
#define TAG_INSTALL_HOST "install-host-"
#define TAG_DAY2 "transform-day2"
#define TAG_KUBECONFIG "kubeconfig"
#define TAG_KUBECONFIG_CERT "kubeconfig-cert"
#define TAG_CANCEL "cancel-installation"
#define TAG_DEREGISTER_CLUSTER "deregister-cluster"
#define TAG_DEREGISTER_HOST "deregister-host-"
#define TAG_DEREGISTER_INFRAENV "deregister-infraenv"
/* which credentials file the kubeconfig Secret holds (kubeconfig-noingress
 * while installing, kubeconfig once installed): the Secret's annotation */
#define ANNOTATION_KUBECONFIG_FILE "cradle.agent-install.openshift.io/kubeconfig-file"
/* the service has no change notification for the Cluster API path (no
 * InfraEnv object links its infra-env to the poller): looked at again */
#define REQUEUE_WHILE_INSTALLING (10 * USEC_PER_SEC)
#define DEFAULT_HOST_PREFIX 23

/* ---- pure: CAPOA's objects, as cluster-params.c and infraenv.c take them ---- */

unsigned capi_replicas(json_object *oacp)
{
        int64_t n = 1;

        if (json_get_int64(json_get(oacp, "spec"), "replicas", &n) < 0)
                return 1;
        return n < 0 ? 0 : (unsigned)n;
}

static const char *cluster_name_of(json_object *oacp, json_object *cluster)
{
        const char *n = json_get_string(json_get_path(oacp, "spec.config"), "clusterName");

        return !isempty(n) ? n : cluster ? kube_object_name(cluster) : capi_cluster_name(oacp);
}

/* Cluster.spec.clusterNetwork.<which>.cidrBlocks as the ACI's networking
 * list: clusterNetwork entries with CAPOA's host prefix (host_prefix), or
 * serviceNetwork's strings */
static int networks(json_object *cluster, const char *which, bool host_prefix, json_object **ret)
{
        _cleanup_free_ char *path = strdup_printf("spec.clusterNetwork.%s.cidrBlocks", which);
        _cleanup_(json_object_putp) json_object *l = json_new_array();
        json_object *blocks;

        if (!path || !l)
                return -ENOMEM;
        blocks = json_get_path(cluster, path);
        for (size_t i = 0; i < hub_json_array_length(blocks); i++) {
                const char *cidr = strempty(json_object_get_string(json_object_array_get_idx(blocks, i)));
                json_object *e;

                /* the ACI's service networks are CIDR strings, its cluster networks objects */
                if (!host_prefix) {
                        if (json_append(l, json_new_string(cidr)) < 0)
                                return -ENOMEM;
                        continue;
                }
                e = json_new_object();
                if (!e || json_append(l, e) < 0 || json_add_string(e, "cidr", cidr) < 0 ||
                    json_add_int64(e, "hostPrefix", DEFAULT_HOST_PREFIX) < 0)
                        return -ENOMEM;
        }
        *ret = hub_json_array_length(l) > 0 ? TAKE_PTR(l) : NULL;
        return 0;
}

static int copy_field(json_object *from, const char *key, json_object *to, const char *as)
{
        json_object *v = json_get(from, key);

        return v ? json_add(to, as, json_object_get(v)) : 0;
}

int capi_cluster_as_aci(json_object *oacp, json_object *cluster, unsigned workers, json_object **ret_cd,
                        json_object **ret_aci)
{
        json_object *config = json_get_path(oacp, "spec.config");
        _cleanup_(json_object_putp) json_object *cd = json_new_object(), *aci = json_new_object(),
                                                *cn = NULL, *sn = NULL;
        json_object *cds, *spec, *req, *net;
        bool vips = hub_json_array_length(json_get(config, "apiVIPs")) > 0 &&
                    hub_json_array_length(json_get(config, "ingressVIPs")) > 0;
        int r;

        if (!cd || !aci)
                return -ENOMEM;
        cds = hub_json_ensure_object(cd, "spec");
        spec = hub_json_ensure_object(aci, "spec");
        req = hub_json_ensure_object(aci, "spec.provisionRequirements");
        net = hub_json_ensure_object(aci, "spec.networking");
        if (!cds || !spec || !req || !net ||
            json_add_string(cds, "clusterName", strempty(cluster_name_of(oacp, cluster))) < 0 ||
            json_add_string(cds, "baseDomain", strempty(json_get_string(config, "baseDomain"))) < 0 ||
            json_add_string(spec, "platformType", vips ? "BareMetal" : "None") < 0 ||
            json_add_int64(req, "controlPlaneAgents", capi_replicas(oacp)) < 0 ||
            json_add_int64(req, "workerAgents", workers) < 0 ||
            json_add_string_nonempty(spec, "sshPublicKey", json_get_string(config, "sshAuthorizedKey")) <
                    0 ||
            copy_field(config, "apiVIPs", spec, "apiVIPs") < 0 ||
            copy_field(config, "ingressVIPs", spec, "ingressVIPs") < 0 ||
            copy_field(config, "proxy", spec, "proxy") < 0 ||
            copy_field(config, "mastersSchedulable", spec, "mastersSchedulable") < 0 ||
            copy_field(config, "diskEncryption", spec, "diskEncryption") < 0)
                return -ENOMEM;
        r = networks(cluster, "pods", true, &cn);
        if (r >= 0)
                r = networks(cluster, "services", false, &sn);
        if (r < 0)
                return r;
        if ((cn && json_add(net, "clusterNetwork", TAKE_PTR(cn)) < 0) ||
            (sn && json_add(net, "serviceNetwork", TAKE_PTR(sn)) < 0))
                return -ENOMEM;
        *ret_cd = TAKE_PTR(cd);
        *ret_aci = TAKE_PTR(aci);
        return 0;
}

int capi_infraenv_of(json_object *oacp, json_object **ret)
{
        json_object *from = json_get_path(oacp, "spec.openshiftAssistedConfigSpec");
        _cleanup_(json_object_putp) json_object *ie = json_new_object();
        json_object *spec;
        static const char *const keys[] = { "sshAuthorizedKey",
                                            "cpuArchitecture",
                                            "additionalNTPSources",
                                            "additionalTrustBundle",
                                            "kernelArguments",
                                            "osImageVersion",
                                            "proxy" };

        if (!ie || hub_json_set_string(ie, "metadata.name", kube_object_name(oacp)) < 0 ||
            hub_json_set_string(ie, "metadata.namespace", kube_object_namespace(oacp)) < 0)
                return -ENOMEM;
        spec = hub_json_ensure_object(ie, "spec");
        if (!spec || json_add_string(spec, "imageType", "full-iso") < 0)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (copy_field(from, keys[i], spec, keys[i]) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(ie);
        return 0;
}

int capi_machines_missing(json_object *oacp, json_object *const *machines, size_t n, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        unsigned want = capi_replicas(oacp);
        size_t have = n;

        for (unsigned i = 0; have < want; i++) {
                _cleanup_free_ char *name = strdup_printf("%s-%u", kube_object_name(oacp), i);
                bool taken = false;

                if (!name)
                        return -ENOMEM;
                for (size_t j = 0; j < n && !taken; j++)
                        taken = streq_ptr(kube_object_name(machines[j]), name);
                if (taken)
                        continue;
                if (strv_push(&l, name) < 0)
                        return -ENOMEM;
                name = NULL;
                have++;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* ---- pure: day-1 workers ---- */

bool capi_worker_machine(json_object *machine, const char *cluster)
{
        return cluster && streq_ptr(capi_cluster_name(machine), cluster) &&
               !hub_object_label(machine, HUB_CAPI_LABEL_CONTROL_PLANE) &&
               streq_ptr(json_get_string(json_get_path(machine, "spec.bootstrap.configRef"), "kind"),
                         HUB_KIND_NAME_CAPI_BOOTSTRAP);
}

unsigned capi_worker_replicas(json_object *machine_deployment, const char *cluster)
{
        json_object *spec = json_get(machine_deployment, "spec");
        int64_t n = 1;

        if (!cluster || !streq_ptr(json_get_string(spec, "clusterName"), cluster) ||
            !streq_ptr(json_get_string(json_get_path(spec, "template.spec.bootstrap.configRef"), "kind"),
                       HUB_KIND_NAME_CAPI_BOOTSTRAP "Template"))
                return 0;
        if (json_get_int64(spec, "replicas", &n) < 0)
                return 1;
        return n < 0 ? 0 : (unsigned)n;
}

bool capi_installation_started(json_object *service_cluster)
{
        const char *s = json_get_string(service_cluster, "status");

        return !isempty(s) && !cd_status_before_installation(s);
}

/* the cluster turned into a day-2 cluster (TransformClusterToDay2): kind
 * AddHostsCluster, status adding-hosts; installed as far as the control
 * plane is concerned */
static bool is_day2(json_object *service_cluster)
{
        return streq_ptr(json_get_string(service_cluster, "kind"), "AddHostsCluster");
}

static bool is_installed(json_object *service_cluster)
{
        return streq_ptr(json_get_string(service_cluster, "status"), "installed") ||
               is_day2(service_cluster);
}

/* A day-2 host of the cluster (id cid) rebooting into it, or added to it
 * (the service's last word on a day-2 host), whose Machine does not yet
 * show it joined (HostInstallation True): its node's CSRs are cradle-hub's
 * to approve, as assisted-service approves a day-2 Agent's. The cluster's
 * own approver knows no such node (its Machine is on the hub), and the
 * assisted-installer-controller ended with day 1. */
bool capi_day2_joining(json_object *cluster, const char *cid, json_object *machine, json_object *h)
{
        const char *st = json_get_string(h, "status"),
                   *stage = json_get_string(json_get(h, "progress"), "current_stage");

        if (!is_day2(cluster) || isempty(cid) || !streq_ptr(json_get_string(h, "cluster_id"), cid))
                return false;
        if (!streq_ptr(st, "added-to-existing-cluster") &&
            !(streq_ptr(st, "installing-in-progress") && streq_ptr(stage, "Rebooting")))
                return false;
        return !streq_ptr(
                json_get_string(hub_conditions_find(machine, HUB_CAPI_COND_HOST_INSTALLATION), "status"),
                HUB_TRUE);
}

/* ---- pure: the decision ---- */

typedef struct Flow {
        const ControlPlaneObserved *o;
        HubPlan *plan;
        json_object *oacp; /* observed */
        json_object *desired;
        /* the control plane as an earlier write of this plan leaves it, or NULL */
        json_object *oacp_written;
        /* a day-2 host's node is joining: look again soon */
        bool joining;
        const char *cluster; /* the Cluster API cluster's name */
} Flow;

static const HubCallResult *result(const Flow *f, const char *tag)
{
        return hub_call_results_find(&f->o->base.results, tag);
}

#define set_condition(f, type, status, reason, ...) \
        hub_meta_conditions_setf((f)->desired, type, status, reason, (f)->o->base.now, __VA_ARGS__)

/* writes the desired control plane (metadata, spec, status) */
static int finish(Flow *f)
{
        return hub_plan_patch_object(f->plan, HUB_KIND_OACP, f->oacp_written ?: f->oacp, f->desired, true,
                                     true);
}

/* an OpenshiftAssistedConfig, an infrastructure machine and the Machine */
static int create_machine(Flow *f, const char *name)
{
        json_object *oacp = f->oacp, *ref = json_get_path(oacp, "spec.machineTemplate.infrastructureRef"),
                    *tmpl = f->o->infra_template.object;
        const char *ns = kube_object_namespace(oacp), *kind = json_get_string(ref, "kind");
        _cleanup_(json_object_putp) json_object *oac = json_new_object(), *infra = NULL,
                                                *machine = json_new_object();
        _cleanup_free_ char *infra_kind = NULL, *groupkind = NULL;
        json_object *labels = json_get_path(oacp, "spec.machineTemplate.metadata.labels"),
                    *annotations = json_get_path(oacp, "spec.machineTemplate.metadata.annotations");
        json_object *objs[] = { oac, NULL, machine };
        int r;

        if (!oac || !machine || !kind)
                return -ENOMEM;
        infra_kind =
                endswith(kind, "Template") ? strndup(kind, strlen(kind) - strlen("Template")) : strdup(kind);
        groupkind = strdup_printf("%s.%s", kind, strempty(json_get_string(ref, "apiGroup")));
        infra = json_new_object();
        objs[1] = infra;
        if (!infra_kind || !groupkind || !infra)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(objs); i++) {
                json_object *md = hub_json_ensure_object(objs[i], "metadata"), *refs = json_new_array();

                /* the Machine is the controller of its config and
                 * infrastructure machine (CAPI core's Machine controller
                 * takes them over), the control plane of the Machine, as
                 * KCP makes them */
                if (!md || !refs || json_add_string(md, "name", name) < 0 ||
                    json_add_string(md, "namespace", ns) < 0 || json_add(md, "ownerReferences", refs) < 0 ||
                    json_append(refs, capi_owner_reference(oacp, objs[i] == machine)) < 0)
                        return -ENOMEM;
                if (labels && json_add(md, "labels", hub_json_copy(labels)) < 0)
                        return -ENOMEM;
                if (annotations && json_add(md, "annotations", hub_json_copy(annotations)) < 0)
                        return -ENOMEM;
                if (hub_object_set_label(objs[i], HUB_CAPI_LABEL_CLUSTER_NAME, f->cluster) < 0 ||
                    hub_object_set_label(objs[i], HUB_CAPI_LABEL_CONTROL_PLANE, "") < 0)
                        return -ENOMEM;
        }
        /* the config: the control plane's openshiftAssistedConfigSpec */
        if (json_add_string(oac, "apiVersion", HUB_GROUP_CAPI_BOOTSTRAP "/" HUB_CAPI_BOOTSTRAP_VERSION) <
                    0 ||
            json_add_string(oac, "kind", HUB_KIND_NAME_CAPI_BOOTSTRAP) < 0 ||
            json_add(oac, "spec",
                     hub_json_copy(json_get_path(oacp, "spec.openshiftAssistedConfigSpec"))
                             ?: json_new_object()) < 0)
                return -ENOMEM;
        /* the infrastructure machine: the template's spec.template */
        if (json_add_string(infra, "apiVersion", strempty(json_get_string(tmpl, "apiVersion"))) < 0 ||
            json_add_string(infra, "kind", infra_kind) < 0 ||
            json_add(infra, "spec",
                     hub_json_copy(json_get_path(tmpl, "spec.template.spec")) ?: json_new_object()) < 0 ||
            hub_object_set_annotation(infra, HUB_CAPI_ANNOTATION_CLONED_FROM_NAME,
                                      json_get_string(ref, "name")) < 0 ||
            hub_object_set_annotation(infra, HUB_CAPI_ANNOTATION_CLONED_FROM_GROUPKIND, groupkind) < 0)
                return -ENOMEM;
        /* the Machine: CAPOA's role annotation, both references */
        {
                json_object *spec = hub_json_ensure_object(machine, "spec"), *b, *i;

                if (!spec ||
                    json_add_string(machine, "apiVersion", HUB_GROUP_CAPI "/" HUB_CAPI_VERSION) < 0 ||
                    json_add_string(machine, "kind", "Machine") < 0 ||
                    hub_object_set_annotation(machine, HUB_BMAC_ROLE, "master") < 0 ||
                    json_add_string(spec, "clusterName", f->cluster) < 0)
                        return -ENOMEM;
                b = hub_json_ensure_object(spec, "bootstrap.configRef");
                i = hub_json_ensure_object(spec, "infrastructureRef");
                if (!b || !i || json_add_string(b, "apiGroup", HUB_GROUP_CAPI_BOOTSTRAP) < 0 ||
                    json_add_string(b, "kind", HUB_KIND_NAME_CAPI_BOOTSTRAP) < 0 ||
                    json_add_string(b, "name", name) < 0 ||
                    json_add_string(i, "apiGroup", strempty(json_get_string(ref, "apiGroup"))) < 0 ||
                    json_add_string(i, "kind", infra_kind) < 0 || json_add_string(i, "name", name) < 0)
                        return -ENOMEM;
        }
        if (!strv_contains(f->o->configs, name)) {
                r = hub_plan_create(f->plan, HUB_KIND_OAC, ns, TAKE_PTR(oac));
                if (r < 0)
                        return r;
        }
        if (!strv_contains(f->o->infra_machines, name)) {
                r = hub_plan_create(f->plan, HUB_KIND_OTHER, ns, TAKE_PTR(infra));
                if (r < 0)
                        return r;
        }
        return hub_plan_create(f->plan, HUB_KIND_MACHINE, ns, TAKE_PTR(machine));
}

/* The Machines being deleted are no part of the installation: their
 * configs' deletion unbinds their hosts (capi-bootstrap.h), which must
 * be neither bound again nor waited for. */
static size_t live_machines(json_object *const *machines, size_t n)
{
        size_t live = 0;

        for (size_t i = 0; i < n; i++)
                live += !hub_object_deleting(machines[i]);
        return live;
}

/* the infra-env's hosts as the service listed them; not listed, the
 * cluster's own (every Machine's host is among them: observe_service());
 * NULL when neither was read */
json_object *capi_controlplane_hosts(const ControlPlaneObserved *o)
{
        if (o->hosts_read)
                return o->hosts.error >= 0 ? o->hosts.body : NULL;
        return o->cluster_read && o->service_cluster.error >= 0 ? json_get(o->service_cluster.body, "hosts")
                                                                : NULL;
}

/* the i-th Machine of the installation: the control plane's first, then
 * the workers */
json_object *capi_controlplane_nth_machine(const ControlPlaneObserved *o, size_t i, bool *ret_worker)
{
        bool worker = i >= o->n_machines;

        if (ret_worker)
                *ret_worker = worker;
        return worker ? o->workers[i - o->n_machines] : o->machines[i];
}

static bool sentinels_set(const ControlPlaneObserved *o)
{
        json_object *hosts = capi_controlplane_hosts(o);

        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                json_object *m = capi_controlplane_nth_machine(o, i, NULL),
                            *h = capi_host_for_machine(hosts, kube_object_name(m));

                if (hub_object_deleting(m))
                        continue;
                if (!capi_host_has_sentinel(h))
                        return false;
        }
        return true;
}

/* the names of the Machines whose hosts the installation takes: the
 * control plane's and the workers' */
static int machine_names(const ControlPlaneObserved *o, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;

        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                json_object *m = capi_controlplane_nth_machine(o, i, NULL);

                if (!hub_object_deleting(m) && strv_extend(&l, kube_object_name(m)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static bool bound_here(const Flow *f, json_object *h)
{
        return streq_ptr(json_get_string(h, "cluster_id"),
                         hub_object_annotation(f->desired, HUB_ANNOTATION_CLUSTER_ID));
}

/* A Machine the day-1 installation left out: the installation started
 * before its host was bound to the cluster (a worker made late, CAPOA's
 * worker gate; a control-plane Machine made after the installation, to
 * scale up or to replace one deleted). It waits until the cluster is a
 * day-2 cluster, then its host is added */
static bool late_machine(const Flow *f, json_object *cluster, json_object *h)
{
        return capi_installation_started(cluster) && !is_day2(cluster) && !bound_here(f, h);
}

/* a Machine whose host the day-1 installation did not take: the cluster
 * must become a day-2 cluster for it */
static bool needs_day2(const Flow *f, json_object *cluster)
{
        const ControlPlaneObserved *o = f->o;
        json_object *hosts = capi_controlplane_hosts(o);

        if (!capi_installation_started(cluster))
                return false;
        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                json_object *m = capi_controlplane_nth_machine(o, i, NULL);

                if (!hub_object_deleting(m) &&
                    !bound_here(f, capi_host_for_machine(hosts, kube_object_name(m))))
                        return true;
        }
        return false;
}

/* every Machine's host installed, or added to the day-2 cluster: nothing
 * more to poll the service for */
static bool hosts_done(const ControlPlaneObserved *o)
{
        json_object *hosts = capi_controlplane_hosts(o);

        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                json_object *m = capi_controlplane_nth_machine(o, i, NULL);
                const char *st =
                        json_get_string(capi_host_for_machine(hosts, kube_object_name(m)), "status");

                if (!hub_object_deleting(m) &&
                    !STR_IN_SET(strempty(st), "installed", "added-to-existing-cluster"))
                        return false;
        }
        return true;
}

/* A call on a host (path infra-env, host) whose body is {key: value},
 * unless its answer is in: true when planned. */
static int plan_host_call(Flow *f, const char *prefix, int op, json_object *h, const char *key,
                          const char *value)
{
        const char *hid = json_get_string(h, "id"), *ie = json_get_string(h, "infra_env_id");
        _cleanup_free_ char *tag = strdup_printf("%s%s", prefix, hid);
        json_object *body;
        int r;

        if (!tag)
                return -ENOMEM;
        if (result(f, tag))
                return 0;
        body = json_new_object();
        if (!body || json_add_string(body, key, value) < 0) {
                json_object_put(body);
                return -ENOMEM;
        }
        r = hub_plan_op(f->plan, tag, op, (char *[]){ (char *)ie, (char *)hid, NULL }, NULL, body, true);
        return r < 0 ? r : 1;
}

/* each Machine's host bound to the cluster with its role (master for
 * the control plane's, worker for the others) and the sentinel's
 * Ignition override: before the installation starts, or once the cluster
 * is a day-2 one (cluster: the service's). 1 to go on, 0 when calls are
 * planned. */
static int bind_hosts(Flow *f, const char *cluster_id, json_object *cluster)
{
        const ControlPlaneObserved *o = f->o;
        json_object *hosts = capi_controlplane_hosts(o);
        bool planned = false;
        int r;

        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                bool worker;
                json_object *m = capi_controlplane_nth_machine(o, i, &worker),
                            *h = capi_host_for_machine(hosts, kube_object_name(m));
                const char *role = worker ? "worker" : "master";

                if (hub_object_deleting(m) || !json_get_string(h, "id") ||
                    !json_get_string(h, "infra_env_id") || late_machine(f, cluster, h))
                        continue;
                if (isempty(json_get_string(h, "cluster_id"))) {
                        r = plan_host_call(f, TAG_BIND, ASSISTED_OP_BIND_HOST, h, "cluster_id", cluster_id);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                planned = true;
                                continue;
                        }
                }
                if (!streq_ptr(json_get_string(h, "role"), role)) {
                        r = plan_host_call(f, TAG_ROLE, ASSISTED_OP_UPDATE_HOST, h, "host_role", role);
                        if (r < 0)
                                return r;
                        planned |= r > 0;
                }
                if (!capi_host_has_sentinel(h)) {
                        r = plan_host_call(f, TAG_SENTINEL, ASSISTED_OP_UPDATE_HOST_IGNITION, h, "config",
                                           capi_sentinel_ignition);
                        if (r < 0)
                                return r;
                        planned |= r > 0;
                }
        }
        return planned ? 0 : 1;
}

/* a day-2 cluster: each Machine's host bound here, known, with its role
 * and the sentinel's override, is installed (v2InstallHost, as the
 * ClusterDeployment path's installDay2Hosts). A control-plane Machine's
 * joins as a master (the service's day-2 master,
 * docs/enhancements/day2-master.md): the cluster's etcd operator adds its
 * etcd member; the member of a control-plane host it replaces is the
 * user's to remove, as with the service's own day-2 masters. 1 to go on,
 * 0 when calls are planned. */
static int install_day2_hosts(Flow *f, json_object *cluster)
{
        const ControlPlaneObserved *o = f->o;
        json_object *hosts = capi_controlplane_hosts(o);
        bool planned = false, worker;
        int r;

        if (!is_day2(cluster))
                return 1;
        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                json_object *m = capi_controlplane_nth_machine(o, i, &worker),
                            *h = capi_host_for_machine(hosts, kube_object_name(m));
                const char *hid = json_get_string(h, "id"), *ie = json_get_string(h, "infra_env_id");
                _cleanup_free_ char *tag = NULL;

                if (hub_object_deleting(m) || !hid || !ie || !bound_here(f, h) ||
                    !streq_ptr(json_get_string(h, "status"), "known") ||
                    !streq_ptr(json_get_string(h, "role"), worker ? "worker" : "master") ||
                    !capi_host_has_sentinel(h))
                        continue;
                tag = strdup_printf("%s%s", TAG_INSTALL_HOST, hid);
                if (!tag)
                        return -ENOMEM;
                if (result(f, tag))
                        continue;
                r = hub_plan_op(f->plan, tag, ASSISTED_OP_INSTALL_HOST,
                                (char *[]){ (char *)ie, (char *)hid, NULL }, NULL, NULL, true);
                if (r < 0)
                        return r;
                planned = true;
        }
        return planned ? 0 : 1;
}

/* the new cluster's Node of a day-2 host's Machine, or NULL */
static json_object *spoke_node(const ControlPlaneObserved *o, json_object *machine)
{
        return json_get(o->spoke_nodes, strempty(kube_object_name(machine)));
}

/* The day-2 host's node's CSRs: a client CSR while its Node does not
 * exist, its serving CSR once it does, each checked as csr_utils.go
 * checks them (node-csr.h) and approved with the kubeconfig Secret's
 * credentials. *ret_serving_approved: its serving CSR is approved (now
 * or before). */
static int approve_day2_csrs(Flow *f, json_object *machine, bool *ret_serving_approved)
{
        const ControlPlaneObserved *o = f->o;
        json_object *csrs = o->spoke_csrs, *node = spoke_node(o, machine);
        _cleanup_free_ char *kubeconfig = hub_secret_value(o->kubeconfig.object, "value");
        const char *hostname = kube_object_name(machine);
        int r;

        *ret_serving_approved = false;
        for (size_t i = 0; json_object_is_type(csrs, json_type_array) && i < json_object_array_length(csrs);
             i++) {
                json_object *csr = json_object_array_get_idx(csrs, i), *body;
                _cleanup_free_ char *why = NULL;
                char ts[32];
                int kind;

                kind = node_csr_kind(hostname, csr, node, &why);
                if (kind < 0)
                        return kind;
                if (kind == 0) {
                        if (why)
                                log_debug("%s/%s: CSR %s of node %s not approved: %s", o->base.ns,
                                          o->base.name, strna(kube_object_name(csr)), strna(hostname), why);
                        continue;
                }
                if (node_csr_approved(csr)) {
                        *ret_serving_approved |= kind == 2;
                        continue;
                }
                if (!kubeconfig)
                        continue;
                hub_format_time(o->base.now, ts);
                body = kube_csr_approval(csr, "NodeCSRApprove",
                                         "This CSR was approved by cradle-hub for a Cluster API day-2 host",
                                         ts);
                if (!body)
                        return -ENOMEM;
                r = hub_plan_spoke(f->plan, kubeconfig, HUB_SPOKE_CSR, "approve", kube_object_name(csr),
                                   body);
                if (r < 0)
                        return r;
                *ret_serving_approved |= kind == 2;
        }
        return 0;
}

/* A day-2 host added to the cluster: joined (HostInstallation True)
 * once its Node is Ready and its serving CSR approved; until then its
 * CSRs are approved as they come */
static int day2_progress(Flow *f, json_object *cluster, json_object *machine, json_object *h,
                         char **ret_status, char **ret_reason, char **ret_message)
{
        const ControlPlaneObserved *o = f->o;
        json_object *node = spoke_node(o, machine);
        bool serving = false, joined = true;
        int r;

        if (capi_day2_joining(cluster, hub_object_annotation(f->desired, HUB_ANNOTATION_CLUSTER_ID), machine,
                              h)) {
                /* not shown joined before: is it now? */
                r = approve_day2_csrs(f, machine, &serving);
                if (r < 0)
                        return r;
                joined = node && kube_node_ready(node) && serving;
        }
        if (joined) {
                *ret_status = strdup(HUB_TRUE);
                *ret_reason = strdup("Joined");
                *ret_message = strdup("");
        } else {
                f->joining = true;
                *ret_status = strdup(HUB_FALSE);
                *ret_reason = strdup("Joining");
                *ret_message = strdup_printf(
                        "added to the cluster; its node %s %s", strna(kube_object_name(machine)),
                        !o->spoke_csrs ? "cannot be looked at yet (the cluster's API does not answer)"
                        : !node        ? "has not registered (its client certificate is approved as it asks)"
                        : !serving     ? "waits for its serving certificate"
                                       : "is not Ready");
        }
        if (!*ret_status || !*ret_reason || !*ret_message)
                return -ENOMEM;
        return 0;
}

static bool condition_is(json_object *obj, const char *type, const char *status)
{
        return streq_ptr(json_get_string(hub_conditions_find(obj, type), "status"), status);
}

/* a MachineHealthCheck found the Machine unhealthy and leaves its
 * remediation to its owner, the control plane */
static bool to_remediate(json_object *m)
{
        return !hub_object_deleting(m) && condition_is(m, HUB_CAPI_COND_HEALTH_CHECK_SUCCEEDED, HUB_FALSE) &&
               condition_is(m, HUB_CAPI_COND_OWNER_REMEDIATED, HUB_FALSE);
}

typedef struct Remediation {
        json_object *machine; /* the control-plane Machine to remediate, or NULL */
        bool delete; /* deleted in this round; reason, message: its OwnerRemediated */
        const char *reason;
        const char *message;
} Remediation;

static Remediation remediation_held(json_object *m, const char *reason, const char *message)
{
        return (Remediation){ .machine = m, .reason = reason, .message = message };
}

/* A control-plane Machine remediated as KCP remediates one: deleted, then
 * made again (capi_machines_missing) and its host reinstalled as a day-2
 * master. One at a time (the first the health check marked), once the
 * installation is done, never the only one, never while another is
 * deleted or still being installed, and only when the etcd members left
 * keep their quorum: a majority of the other Machines joined and healthy.
 * Its etcd member is not removed: cradle-hub reaches the new cluster
 * through its API alone (hub/README.md, Day-2 hosts). */
static Remediation remediation(const ControlPlaneObserved *o, json_object *cluster)
{
        json_object *target = NULL;
        size_t others = 0, healthy = 0;

        for (size_t i = 0; i < o->n_machines && !target; i++)
                if (to_remediate(o->machines[i]))
                        target = o->machines[i];
        if (!target)
                return (Remediation){};
        if (!is_installed(cluster))
                return remediation_held(
                        target, HUB_CAPI_REASON_REMEDIATION_DEFERRED,
                        "the control plane remediates its Machines once the cluster is installed");
        for (size_t i = 0; i < o->n_machines; i++) {
                json_object *m = o->machines[i];
                bool joined = condition_is(m, HUB_CAPI_COND_HOST_INSTALLATION, HUB_TRUE),
                     ok = !condition_is(m, HUB_CAPI_COND_HEALTH_CHECK_SUCCEEDED, HUB_FALSE);

                if (m == target)
                        continue;
                if (hub_object_deleting(m))
                        return remediation_held(target, HUB_CAPI_REASON_REMEDIATION_DEFERRED,
                                                "waiting for the control-plane Machine being deleted to go");
                if (!joined && ok)
                        return remediation_held(target, HUB_CAPI_REASON_REMEDIATION_DEFERRED,
                                                "waiting for the control-plane Machines being installed");
                others++;
                healthy += joined && ok;
        }
        if (others == 0)
                return remediation_held(target, HUB_CAPI_REASON_CANNOT_BE_REMEDIATED,
                                        "the control plane cannot remediate its only Machine");
        if (healthy < others / 2 + 1)
                return remediation_held(target, HUB_CAPI_REASON_CANNOT_BE_REMEDIATED,
                                        "remediating this Machine could leave etcd without quorum");
        return (Remediation){ .machine = target,
                              .delete = true,
                              .reason = HUB_CAPI_REASON_MACHINE_DELETING,
                              .message = "deleted to be made again: its host is reinstalled as a day-2 "
                                         "control-plane host" };
}

/* each Machine with a host shows its installation (the condition
 * HostInstallation), a Machine the installation left out why it waits,
 * the control-plane Machine remediated its remediation (OwnerRemediated);
 * in the last round only: the patches are locked on the observed
 * Machines */
static int machines_progress(Flow *f, json_object *cluster)
{
        const ControlPlaneObserved *o = f->o;
        json_object *hosts = capi_controlplane_hosts(o);
        Remediation rem = remediation(o, cluster);
        int r;

        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                json_object *m = capi_controlplane_nth_machine(o, i, NULL),
                            *h = capi_host_for_machine(hosts, kube_object_name(m));
                bool late = late_machine(f, cluster, h);
                _cleanup_free_ char *st = NULL, *reason = NULL, *msg = NULL;
                _cleanup_(json_object_putp) json_object *dm = NULL;

                /* no host: its remediation alone, if any */
                if (!h && !late && m != rem.machine)
                        continue;
                if (late) {
                        st = strdup(HUB_FALSE);
                        reason = strdup(HUB_CAPI_REASON_NOT_IN_DAY1);
                        msg = strdup_printf(
                                "the cluster's installation started (status %s) before this "
                                "Machine's host was bound: it is not installed with the cluster; "
                                "once the cluster is installed, its host is added to it (day 2)",
                                strna(json_get_string(cluster, "status")));
                        if (!st || !reason || !msg)
                                return -ENOMEM;
                } else if (h && is_day2(cluster) &&
                           streq_ptr(json_get_string(h, "status"), "added-to-existing-cluster")) {
                        r = day2_progress(f, cluster, m, h, &st, &reason, &msg);
                        if (r < 0)
                                return r;
                } else if (h) {
                        bool serving;

                        r = capi_host_progress(h, &st, &reason, &msg);
                        /* rebooting into the cluster: its kubelet may ask already */
                        if (r >= 0 &&
                            capi_day2_joining(cluster,
                                              hub_object_annotation(f->desired, HUB_ANNOTATION_CLUSTER_ID),
                                              m, h))
                                r = approve_day2_csrs(f, m, &serving);
                        if (r < 0)
                                return r;
                }
                dm = hub_json_copy(m);
                if (!dm || (st && hub_meta_conditions_set(dm, HUB_CAPI_COND_HOST_INSTALLATION, st, reason,
                                                          msg, o->base.now) < 0))
                        return -ENOMEM;
                if (m == rem.machine &&
                    hub_meta_conditions_set(dm, HUB_CAPI_COND_OWNER_REMEDIATED, HUB_FALSE, rem.reason,
                                            rem.message, o->base.now) < 0)
                        return -ENOMEM;
                r = hub_plan_patch_object_locked(f->plan, HUB_KIND_MACHINE, m, dm, true);
                if (r < 0)
                        return r;
        }
        if (rem.delete) {
                log_info("%s/%s: remediating control-plane Machine %s: deleted, to be made again",
                         o->base.ns, o->base.name, strna(kube_object_name(rem.machine)));
                return hub_plan_delete(f->plan, HUB_KIND_MACHINE, kube_object_namespace(rem.machine),
                                       kube_object_name(rem.machine), hub_object_uid(rem.machine), false);
        }
        return 0;
}

static bool status_in(json_object *cluster, const char *const *l)
{
        const char *s = json_get_string(cluster, "status");

        for (; *l; l++)
                if (streq_ptr(s, *l))
                        return true;
        return false;
}

/* the kubeconfig Secret's time: from the installation's start (the
 * service has the credentials) on */
bool capi_kubeconfig_due(json_object *cluster)
{
        return is_installed(cluster) ||
               status_in(cluster, (const char *const[]){ "installing", "installing-pending-user-action",
                                                         "finalizing", NULL });
}

/* the <cluster>-kubeconfig Secret holding text (a secret), in one write
 * (created, or one merge patch of its value and annotations: never half
 * written); file: the service's credentials file it comes from; csr: the
 * CSR that issued its certificate, NULL for the admin's */
static int write_kubeconfig(Flow *f, const char *text, const char *file, const char *csr)
{
        const ControlPlaneObserved *o = f->o;
        _cleanup_free_ char *name = strdup_printf("%s-kubeconfig", f->cluster);
        json_object *s;
        int r;

        if (!name)
                return -ENOMEM;
        (void)redact_register_secret(text);
        if (!o->kubeconfig.object) {
                s = capi_secret(f->oacp, name, f->cluster,
                                (const char *const[]){ "value", strempty(text), NULL });
                if (!s || hub_object_set_annotation(s, ANNOTATION_KUBECONFIG_FILE, file) < 0 ||
                    hub_object_set_annotation(s, CAPI_ANNOTATION_KUBECONFIG_CSR, csr) < 0) {
                        json_object_put(s);
                        return -ENOMEM;
                }
                r = hub_plan_create(f->plan, HUB_KIND_SECRET, kube_object_namespace(f->oacp), s);
        } else {
                _cleanup_(json_object_putp) json_object *d = hub_json_copy(o->kubeconfig.object);

                if (!d ||
                    hub_secret_set_data(d, (const char *const[]){ "value", strempty(text), NULL }) < 0 ||
                    hub_object_set_annotation(d, ANNOTATION_KUBECONFIG_FILE, file) < 0 ||
                    hub_object_set_annotation(d, CAPI_ANNOTATION_KUBECONFIG_CSR, csr) < 0)
                        return -ENOMEM;
                r = hub_plan_patch_object(f->plan, HUB_KIND_SECRET, o->kubeconfig.object, d, false, false);
        }
        if (r < 0)
                return r;
        return set_condition(f, HUB_CAPI_COND_KUBECONFIG_AVAILABLE, HUB_TRUE, "KubeconfigAvailable", "%s",
                             "") < 0
                       ? -ENOMEM
                       : 1;
}

/* the service's credentials file (a secret): 1 with *ret_text, 0 when
 * its download is planned, 2 when it failed (a condition says why; the
 * Secret, when there is one, still holds what worked so far) */
static int admin_kubeconfig(Flow *f, json_object *cluster, const char *file, const char **ret_text)
{
        const HubCallResult *kr = result(f, TAG_KUBECONFIG);
        int r;

        if (!kr)
                return cd_plan_credentials_download(f->plan, TAG_KUBECONFIG, json_get_string(cluster, "id"),
                                                    file) < 0
                               ? -ENOMEM
                               : 0;
        if (kr->error < 0) {
                r = set_condition(f, HUB_CAPI_COND_KUBECONFIG_AVAILABLE,
                                  f->o->kubeconfig.object ? HUB_TRUE : HUB_FALSE, "KubeconfigUnavailable",
                                  "cannot download the cluster's %s: %s", file, strna(kr->message));
                hub_plan_requeue_after(f->plan, HUB_REQUEUE_ON_ERROR);
                return r < 0 ? r : 2;
        }
        *ret_text = json_object_get_string(kr->body);
        (void)redact_register_secret(*ret_text);
        return 1;
}

/* The Secret's short-lived client certificate, once the new cluster's API
 * answered (capi-kubeconfig.h): minted with the admin kubeconfig file
 * (downloaded), renewed when due. A failure keeps the Secret as it is,
 * says why and tries again. 1 to go on, 0 when a call is planned. */
static int kubeconfig_cert(Flow *f, json_object *cluster, const char *file)
{
        const ControlPlaneObserved *o = f->o;
        const char *have = hub_object_annotation(o->kubeconfig.object, ANNOTATION_KUBECONFIG_FILE),
                   *admin = NULL;
        const HubCallResult *mr = result(f, TAG_KUBECONFIG_CERT);
        usec_t after = 0;
        int r;

        if (o->kubeconfig.object && !capi_kubeconfig_renew_now(&o->kubeconfig_cert, streq_ptr(have, file),
                                                               o->base.now, o->cert_renew_before, &after)) {
                hub_plan_requeue_after(f->plan, after);
                return 1;
        }
        r = admin_kubeconfig(f, cluster, file, &admin);
        if (r != 1)
                return r == 2 ? 1 : r;
        if (!mr) {
                _cleanup_(json_object_putp) json_object *body = NULL;

                r = capi_kubeconfig_mint_body(kube_object_namespace(f->oacp), f->cluster, o->cert_expiration,
                                              &body);
                if (r < 0)
                        return r;
                return hub_plan_spoke_mint(f->plan, TAG_KUBECONFIG_CERT, admin, TAKE_PTR(body)) < 0 ? -ENOMEM
                                                                                                    : 0;
        }
        if (mr->error < 0) {
                /* the Secret keeps what it has (the admin's, or the
                 * certificate still valid until its end) */
                r = set_condition(f, HUB_CAPI_COND_KUBECONFIG_AVAILABLE,
                                  o->kubeconfig.object ? HUB_TRUE : HUB_FALSE, "ClientCertificateNotIssued",
                                  "cannot get a client certificate from the cluster's CSR API: %s",
                                  strna(mr->message));
                hub_plan_requeue_after(f->plan, HUB_REQUEUE_ON_ERROR);
                return r < 0 ? r : 1;
        }
        {
                int64_t nb = 0, na = 0;

                /* renewed on time: the new certificate's renewal is the next look */
                if (json_get_int64(mr->body, "notBefore", &nb) >= 0 &&
                    json_get_int64(mr->body, "notAfter", &na) >= 0 && na > nb) {
                        usec_t at = capi_kubeconfig_renew_at(
                                (usec_t)nb * USEC_PER_SEC, (usec_t)na * USEC_PER_SEC, o->cert_renew_before);

                        hub_plan_requeue_after(f->plan,
                                               at > o->base.now ? at - o->base.now : HUB_REQUEUE_ON_ERROR);
                }
        }
        return write_kubeconfig(f, json_get_string(mr->body, "kubeconfig"), file,
                                json_get_string(mr->body, "csr"));
}

/* the <cluster>-kubeconfig Secret: the no-ingress kubeconfig from the
 * installation's start, the full one once installed; once the new
 * cluster's API has answered, a short-lived client certificate of its
 * own instead of the admin's (kubeconfig_cert()). 1 to go on, 0 when a
 * call is planned. */
static int kubeconfig(Flow *f, json_object *cluster)
{
        const ControlPlaneObserved *o = f->o;
        bool installed = is_installed(cluster), initialized = false;
        const char *file = installed ? "kubeconfig" : "kubeconfig-noingress",
                   *have = hub_object_annotation(o->kubeconfig.object, ANNOTATION_KUBECONFIG_FILE),
                   *admin = NULL;
        int r;

        if (!capi_kubeconfig_due(cluster))
                return 1;
        (void)json_get_bool(json_get_path(o->base.object, "status.initialization"),
                            "controlPlaneInitialized", &initialized);
        if (o->readyz == 0 || initialized)
                return kubeconfig_cert(f, cluster, file);
        if (o->kubeconfig.object && (streq_ptr(have, file) || !installed))
                return 1;
        r = admin_kubeconfig(f, cluster, file, &admin);
        if (r != 1)
                return r == 2 ? 1 : r;
        return write_kubeconfig(f, admin, file, NULL);
}

/* the status of the contract: counters, selector, initialization, Available, version.
 * Initialized and the version stay once seen: a control plane that
 * answered once is initialized (CAPI core treats the flag as a one-way
 * step of the Cluster's provisioning), and a new cluster's API that stops
 * answering for a while does not make it new again */
static int status(Flow *f, json_object *cluster)
{
        const ControlPlaneObserved *o = f->o;
        json_object *st = hub_json_ensure_object(f->desired, "status"), *hosts = json_get(cluster, "hosts"),
                    *seen = json_get(f->o->base.object, "status");
        bool was_initialized = false;
        bool initialized;
        const char *version;
        unsigned ready = 0;
        bool available =
                is_installed(cluster) || status_in(cluster, (const char *const[]){ "finalizing", NULL });
        _cleanup_free_ char *selector = strdup_printf("%s=%s,%s", HUB_CAPI_LABEL_CLUSTER_NAME, f->cluster,
                                                      HUB_CAPI_LABEL_CONTROL_PLANE);

        if (!st || !selector)
                return -ENOMEM;
        (void)json_get_bool(json_get(seen, "initialization"), "controlPlaneInitialized", &was_initialized);
        initialized = o->readyz == 0 || was_initialized;
        version = o->readyz == 0 ? o->kube_version : json_get_string(seen, "version");
        for (size_t i = 0; i < o->n_machines; i++) {
                json_object *h = capi_host_for_machine(hosts, kube_object_name(o->machines[i]));

                if (h && streq_ptr(json_get_string(h, "status"), "installed"))
                        ready++;
        }
        if (json_add_string(st, "selector", selector) < 0 ||
            json_add_int64(st, "replicas", o->n_machines) < 0 ||
            json_add_int64(st, "readyReplicas", ready) < 0 ||
            json_add_int64(st, "availableReplicas", ready) < 0 ||
            json_add_int64(st, "upToDateReplicas", o->n_machines) < 0 ||
            json_add_bool(hub_json_ensure_object(st, "initialization"), "controlPlaneInitialized",
                          initialized) < 0 ||
            json_add_string_nonempty(st, "distributionVersion",
                                     available ? json_get_string(cluster, "openshift_version") : NULL) < 0 ||
            json_add_string_nonempty(st, "version", initialized ? version : NULL) < 0)
                return -ENOMEM;
        if (available)
                return set_condition(f, HUB_CAPI_COND_AVAILABLE, HUB_TRUE, "ControlPlaneAvailable",
                                     "Controlplane available, status: %s",
                                     strna(json_get_string(cluster, "status")));
        return set_condition(f, HUB_CAPI_COND_AVAILABLE, HUB_FALSE, "ControlPlaneInstalling",
                             "Controlplane installing, status: %s",
                             strna(cluster ? json_get_string(cluster, "status") : "unregistered"));
}

/* One of the two registrations (the cluster, its infra-env) */
typedef struct Registration {
        const char *what; /* "cluster", "infra-env": for conditions and events */
        const char *annotation; /* where its id goes */
        const char *name; /* the name the service object has */
        const char *tag;
        int op;
} Registration;

/* The id of reg's registration known (from the call's answer or adopted):
 * written, and the registering marker gone, in the same patch */
static int linked(Flow *f, const Registration *reg, const char *id)
{
        if (isempty(id))
                return set_condition(f, HUB_CAPI_COND_MACHINES_CREATED, HUB_FALSE, "RegistrationFailed",
                                     "the service answered the %s's registration without an id",
                                     reg->what) < 0
                               ? -ENOMEM
                               : 2;
        if (hub_object_set_annotation(f->desired, reg->annotation, id) < 0 ||
            hub_object_set_annotation(f->desired, HUB_ANNOTATION_REGISTERING, NULL) < 0 ||
            hub_object_set_annotation(f->desired, HUB_ANNOTATION_REGISTRATION_REFUSED, NULL) < 0)
                return -ENOMEM;
        return 1;
}

/* reg through the claim protocol (hub-claim.h, as the ClusterDeployment
 * and InfraEnv paths register): the marker written before the call, and
 * a marker without its id searched for before registering again, so that
 * a call whose answer was lost (a crash, a dropped connection, a refused
 * patch of the id) never registers twice. body: the registration's body
 * (taken). 1 when linked, 0 when calls are planned or the round waits, 2
 * when a condition says why not. */
static int claim_registration(Flow *f, const Registration *reg, json_object *body)
{
        _cleanup_(json_object_putp) json_object *b = body;
        _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};
        const ControlPlaneObserved *o = f->o;
        const HubCallResult *made = result(f, reg->tag);
        _cleanup_free_ char *marker = NULL;
        int r;

        if (made) {
                if (made->error < 0) {
                        /* a refusal (4xx but 409) stored nothing: its marker
                         * goes, or the next reconcile would search for what
                         * was never made and could adopt another's object
                         * of that name. Anything else may have reached the
                         * database: the marker stays, the next reconcile
                         * searches first. */
                        if (hub_call_is_user_error(made) && made->status != 409 &&
                            hub_claim_refused(f->desired, f->o->base.now) < 0)
                                return -ENOMEM;
                        r = set_condition(f, HUB_CAPI_COND_MACHINES_CREATED, HUB_FALSE, "RegistrationFailed",
                                          "cannot register the %s: %s", reg->what, strna(made->message));
                        if (!hub_call_is_user_error(made))
                                hub_plan_requeue_after(f->plan, HUB_REQUEUE_ON_ERROR);
                        return r < 0 ? r : 2;
                }
                return linked(f, reg, json_get_string(made->body, "id"));
        }
        r = hub_claim_decide(
                &(HubClaimInput){
                        .object = f->desired,
                        .id_annotation = reg->annotation,
                        .name = strempty(reg->name),
                        .identity = o->identity,
                        .now = o->base.now,
                        .active_since = o->base.active_since,
                        .candidates = streq_ptr(o->searched_for, reg->annotation) && o->candidates.error >= 0
                                              ? o->candidates.body
                                              : NULL,
                        .claimed_ids = streq_ptr(o->searched_for, reg->annotation) ? o->claimed_ids : NULL },
                &d);
        if (r < 0)
                return r;
        switch (d.action) {
        case HUB_CLAIM_LINKED:
                return 1;
        case HUB_CLAIM_ADOPT:
                if (d.duplicates) {
                        _cleanup_free_ char *dups = strv_join(d.duplicates, ", ");

                        r = hub_plan_event(f->plan, f->oacp, "Warning", "DuplicateRegistration",
                                           "%ss %s also match this control plane; cradle-hub adopted %s and "
                                           "left the others alone",
                                           reg->what, strna(dups), d.id);
                        if (r < 0)
                                return r;
                }
                log_info("%s/%s: adopting the %s %s its interrupted registration made",
                         strna(kube_object_namespace(f->oacp)), strna(kube_object_name(f->oacp)), reg->what,
                         d.id);
                return linked(f, reg, d.id);
        case HUB_CLAIM_WAIT:
                hub_plan_requeue_after(f->plan, d.wait);
                return 0;
        case HUB_CLAIM_SEARCH:
                r = set_condition(f, HUB_CAPI_COND_MACHINES_CREATED, HUB_FALSE, "RegistrationFailed",
                                  "cannot look for the %s an interrupted registration may have made: %s",
                                  reg->what, strna(o->candidates.message));
                hub_plan_requeue_after(f->plan, HUB_REQUEUE_ON_ERROR);
                return r < 0 ? r : 2;
        case HUB_CLAIM_MARK:
        case HUB_CLAIM_REGISTER:
                if (d.action == HUB_CLAIM_MARK) {
                        marker = hub_claim_marker(o->base.now, o->identity);
                        if (!marker ||
                            hub_object_set_annotation(f->desired, HUB_ANNOTATION_REGISTERING, marker) < 0)
                                return -ENOMEM;
                }
                /* the marker first, then the call */
                r = hub_plan_patch_object(f->plan, HUB_KIND_OACP, f->oacp, f->desired, true, false);
                if (r < 0)
                        return r;
                return hub_plan_op(f->plan, reg->tag, reg->op, (char *[]){ NULL }, NULL, TAKE_PTR(b), true);
        default:
                return -EINVAL;
        }
}

/* registration of the cluster and its one infra-env. 1 to go on (both
 * ids known), 0 when a call is planned, 2 when a condition says why not
 * (then the status is written). */
static int register_ids(Flow *f, char **ret_secret_error)
{
        const ControlPlaneObserved *o = f->o;
        const char *ps_name = json_get_string(json_get_path(f->oacp, "spec.config.pullSecretRef"), "name");
        _cleanup_free_ char *secret = NULL, *err = NULL;
        bool user = false;
        int r;

        if (!isempty(hub_object_annotation(f->desired, HUB_ANNOTATION_CLUSTER_ID)) &&
            !isempty(hub_object_annotation(f->desired, HUB_ANNOTATION_INFRAENV_ID)))
                return 1;
        r = hub_pull_secret(&o->secret, strempty(ps_name), &secret, &err, &user);
        if (r < 0)
                return r;
        if (err) {
                *ret_secret_error = TAKE_PTR(err);
                return 1;
        }
        (void)redact_register_secret(secret);
        if (isempty(hub_object_annotation(f->desired, HUB_ANNOTATION_CLUSTER_ID))) {
                _cleanup_(json_object_putp) json_object *cd = NULL, *aci = NULL, *body = NULL;
                _cleanup_free_ char *why = NULL;
                const char *arch = json_get_string(
                        json_get_path(f->oacp, "spec.openshiftAssistedConfigSpec"), "cpuArchitecture");

                r = capi_cluster_as_aci(f->oacp, o->cluster, o->worker_replicas, &cd, &aci);
                if (r < 0)
                        return r;
                r = cd_create_params(cd, aci,
                                     &(ClusterInputs){ .pull_secret = secret,
                                                       .version = json_get_string(json_get(f->oacp, "spec"),
                                                                                  "distributionVersion"),
                                                       .arch = !isempty(arch) ? arch : "x86_64",
                                                       .api = o->api },
                                     &body, &why);
                if (r < 0)
                        return r;
                if (why) {
                        r = set_condition(f, HUB_CAPI_COND_MACHINES_CREATED, HUB_FALSE, "InputError", "%s",
                                          why);
                        return r < 0 ? r : 2;
                }
                r = claim_registration(f,
                                       &(Registration){ .what = "cluster",
                                                        .annotation = HUB_ANNOTATION_CLUSTER_ID,
                                                        .name = cluster_name_of(f->oacp, o->cluster),
                                                        .tag = TAG_REGISTER_CLUSTER,
                                                        .op = ASSISTED_OP_REGISTER_CLUSTER },
                                       TAKE_PTR(body));
                if (r != 1)
                        return r;
        }
        {
                _cleanup_(json_object_putp) json_object *ie = NULL, *body = NULL;

                r = capi_infraenv_of(f->oacp, &ie);
                if (r >= 0)
                        r = infraenv_create_params(ie, o->image_type, o->api, secret, NULL, NULL, &body);
                if (r < 0)
                        return r;
                return claim_registration(f,
                                          &(Registration){ .what = "infra-env",
                                                           .annotation = HUB_ANNOTATION_INFRAENV_ID,
                                                           .name = kube_object_name(f->oacp),
                                                           .tag = TAG_REGISTER_INFRAENV,
                                                           .op = ASSISTED_OP_REGISTER_INFRA_ENV },
                                          TAKE_PTR(body));
        }
}

/* ---- pure: deletion ---- */

/* the records may still be in the service: the finalizer stays, the
 * Deleting condition and the log say why, and the deletion is tried again */
static int deletion_held(Flow *f, const char *fmt, ...) _printf_(2, 3);
static int deletion_held(Flow *f, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        msg = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!msg)
                return -ENOMEM;
        r = set_condition(f, HUB_CAPI_COND_DELETING, HUB_TRUE, "DeregistrationFailed", "%s", msg);
        if (r >= 0)
                r = hub_plan_fail(f->plan, "%s", msg);
        if (r < 0)
                return r;
        hub_plan_requeue_after(f->plan, HUB_REQUEUE_ON_ERROR);
        return finish(f);
}

static bool call_failed(const HubCallResult *r)
{
        /* 404: what it would have removed is gone already */
        return r && r->error < 0 && r->status != 404;
}

/* the infra-env's hosts, then the infra-env (the service refuses an
 * infra-env that still has hosts: DeregisterInfraEnv's 400). The
 * cluster's own hosts go, as do the hosts InfraEnv deletion lets go
 * (infraenv_host_deletable()); a host bound to another cluster and not
 * installed holds the deletion. 1 when done. */
static int deregister_infraenv(Flow *f, const char *cluster_id, const char *infra_env_id)
{
        const ControlPlaneObserved *o = f->o;
        const HubCallResult *di = result(f, TAG_DEREGISTER_INFRAENV);
        json_object *hosts = o->hosts.body;
        unsigned held = 0;
        bool planned = false;
        int r;

        if (di)
                return call_failed(di) ? deletion_held(f, "cannot deregister infra-env %s: %s", infra_env_id,
                                                       strna(di->message))
                                       : 1;
        if (!o->hosts_read || call_failed(&o->hosts))
                return deletion_held(f, "cannot list the hosts of infra-env %s: %s", infra_env_id,
                                     strna(o->hosts.message));
        if (o->hosts.error < 0)
                return 1; /* 404: the infra-env is gone already */
        for (size_t i = 0; i < hub_json_array_length(hosts); i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                const char *hid = json_get_string(h, "id"), *bound = json_get_string(h, "cluster_id");
                _cleanup_free_ char *tag = NULL;
                const HubCallResult *hr;

                if (!hid)
                        continue;
                if (!isempty(bound) && !streq_ptr(bound, cluster_id) && !infraenv_host_deletable(h)) {
                        held++;
                        continue;
                }
                tag = strdup_printf("%s%s", TAG_DEREGISTER_HOST, hid);
                if (!tag)
                        return -ENOMEM;
                hr = result(f, tag);
                if (call_failed(hr))
                        return deletion_held(f, "cannot deregister host %s: %s", hid, strna(hr->message));
                if (hr)
                        continue;
                r = hub_plan_op(f->plan, tag, ASSISTED_OP_DEREGISTER_HOST,
                                (char *[]){ (char *)infra_env_id, (char *)hid, NULL }, NULL, NULL, true);
                if (r < 0)
                        return r;
                planned = true;
        }
        if (planned)
                return 0;
        if (held > 0)
                return deletion_held(f,
                                     "infra-env %s has %u hosts bound to another cluster and not installed",
                                     infra_env_id, held);
        r = hub_plan_op(f->plan, TAG_DEREGISTER_INFRAENV, ASSISTED_OP_DEREGISTER_INFRA_ENV,
                        (char *[]){ (char *)infra_env_id, NULL }, NULL, NULL, true);
        return r < 0 ? r : 0;
}

/* A registration interrupted (its marker, its id missing) may have made
 * a record the deletion must not leave behind: the claim protocol's
 * search finds it, as it would before registering again, and its id is
 * recorded (the patch brings the next reconcile, which deletes it as any
 * other). 1 to go on with what the annotations name. */
static int adopt_interrupted_registration(Flow *f)
{
        const ControlPlaneObserved *o = f->o;
        const char *ann = o->searched_for;
        bool cluster = streq_ptr(ann, HUB_ANNOTATION_CLUSTER_ID);
        _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};
        int r;

        if (!ann || !hub_object_annotation(f->oacp, HUB_ANNOTATION_REGISTERING))
                return 1;
        r = hub_claim_decide(
                &(HubClaimInput){ .object = f->desired,
                                  .id_annotation = ann,
                                  .name = strempty(cluster ? cluster_name_of(f->oacp, o->cluster)
                                                           : kube_object_name(f->oacp)),
                                  .identity = o->identity,
                                  .now = o->base.now,
                                  .active_since = o->base.active_since,
                                  .candidates = o->candidates.error >= 0 ? o->candidates.body : NULL,
                                  .claimed_ids = o->claimed_ids },
                &d);
        if (r < 0)
                return r;
        switch (d.action) {
        case HUB_CLAIM_ADOPT:
                if (hub_object_set_annotation(f->desired, ann, d.id) < 0 ||
                    hub_object_set_annotation(f->desired, HUB_ANNOTATION_REGISTERING, NULL) < 0)
                        return -ENOMEM;
                log_info("%s/%s: adopting the %s %s its interrupted registration made, to deregister it",
                         strna(kube_object_namespace(f->oacp)), strna(kube_object_name(f->oacp)),
                         cluster ? "cluster" : "infra-env", d.id);
                r = finish(f);
                return r < 0 ? r : 0;
        case HUB_CLAIM_WAIT:
                hub_plan_requeue_after(f->plan, d.wait);
                return 0;
        case HUB_CLAIM_SEARCH:
                return deletion_held(f,
                                     "cannot look for the %s an interrupted registration may have made: %s",
                                     cluster ? "cluster" : "infra-env", strna(o->candidates.message));
        default:
                /* nothing made, or the id there already */
                return 1;
        }
}

/* The control plane is being deleted (capi.md §3.6 step 8, through REST):
 * its cluster deregistered (its installation cancelled first, as the
 * ClusterDeployment path does), then the infra-env with its hosts, then
 * the finalizer dropped. Never dropped while a record may still be there:
 * a read or call that fails holds it (a 404 is a record gone). A paused
 * control plane is not finalized until unpaused (Cluster API's rule). */
static int decide_deletion(Flow *f)
{
        const ControlPlaneObserved *o = f->o;
        const char *cid = hub_object_annotation(f->oacp, HUB_ANNOTATION_CLUSTER_ID),
                   *ieid = hub_object_annotation(f->oacp, HUB_ANNOTATION_INFRAENV_ID);
        const HubCallResult *cancel = result(f, TAG_CANCEL), *dc = result(f, TAG_DEREGISTER_CLUSTER);
        int r;

        if (!hub_object_has_finalizer(f->oacp, HUB_FINALIZER_CAPI_CONTROL_PLANE))
                return 0;
        if (capi_paused(o->cluster, f->oacp)) {
                r = set_condition(f, HUB_CAPI_COND_PAUSED, HUB_TRUE, "Paused", "%s", "");
                return r < 0 ? r : finish(f);
        }
        r = adopt_interrupted_registration(f);
        if (r <= 0)
                return r;
        if (!isempty(cid) && !dc) {
                json_object *cluster;

                if (!o->cluster_read || call_failed(&o->service_cluster))
                        return deletion_held(f, "cannot read cluster %s: %s", cid,
                                             strna(o->service_cluster.message));
                cluster = o->service_cluster.error >= 0 ? o->service_cluster.body : NULL;
                if (call_failed(cancel))
                        return deletion_held(f, "cannot cancel the installation of cluster %s: %s", cid,
                                             strna(cancel->message));
                if (cluster && !cancel && cd_installation_cancellable(cluster))
                        return hub_plan_op(f->plan, TAG_CANCEL, ASSISTED_OP_CANCEL_INSTALLATION,
                                           (char *[]){ (char *)cid, NULL }, NULL, NULL, true);
                if (cluster)
                        return hub_plan_op(f->plan, TAG_DEREGISTER_CLUSTER, ASSISTED_OP_DEREGISTER_CLUSTER,
                                           (char *[]){ (char *)cid, NULL }, NULL, NULL, true);
        }
        if (call_failed(dc))
                return deletion_held(f, "cannot deregister cluster %s: %s", cid, strna(dc->message));
        if (!isempty(ieid)) {
                r = deregister_infraenv(f, cid, ieid);
                if (r <= 0)
                        return r;
        }
        if (hub_object_remove_finalizer(f->desired, HUB_FINALIZER_CAPI_CONTROL_PLANE) < 0)
                return -ENOMEM;
        return hub_plan_patch_object(f->plan, HUB_KIND_OACP, f->oacp, f->desired, true, false);
}

/* The Secrets observed each reconcile get the hub's watch labels when
 * they lack them (the pull secret as the ClusterDeployment path labels
 * it; the kubeconfig Secret when an older cradle-hub made it), so that
 * later reads are the cache's. Once: later rounds see the same observed
 * Secrets, not the ones written. */
static int label_watched(Flow *f)
{
        int r;

        if (f->o->base.results.n > 0)
                return 0;
        r = hub_plan_label_watched(f->plan, HUB_KIND_SECRET, f->o->secret.object);
        if (r < 0)
                return r;
        return hub_plan_label_watched(f->plan, HUB_KIND_SECRET, f->o->kubeconfig.object);
}

/* The finalizer, written before anything is registered (a deletion
 * racing the registration must find it): *ret the control plane as that
 * write leaves it, or NULL when it was there. */
static int ensure_finalizer(Flow *f, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *with = NULL;
        int r;

        *ret = NULL;
        if (hub_object_add_finalizer(f->desired, HUB_FINALIZER_CAPI_CONTROL_PLANE) < 0)
                return -ENOMEM;
        if (hub_object_has_finalizer(f->oacp, HUB_FINALIZER_CAPI_CONTROL_PLANE))
                return 0;
        with = hub_json_copy(f->oacp);
        if (!with || hub_object_add_finalizer(with, HUB_FINALIZER_CAPI_CONTROL_PLANE) < 0)
                return -ENOMEM;
        r = hub_plan_patch_object(f->plan, HUB_KIND_OACP, f->oacp, with, true, false);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(with);
        return 0;
}

int capi_controlplane_decide(const HubObserved *base, HubPlan *plan)
{
        const ControlPlaneObserved *o = (const ControlPlaneObserved *)base;
        _cleanup_(json_object_putp) json_object *desired = NULL, *written = NULL, *with_finalizer = NULL;
        _cleanup_strv_free_ char **missing = NULL, **names = NULL;
        _cleanup_free_ char *secret_error = NULL;
        Flow f = { .o = o, .plan = plan, .oacp = base->object };
        json_object *cluster;
        const char *cid;
        size_t workers;
        int r;

        if (!base->object || capi_filtered_out(o->watch_filter, base->object))
                return 0;
        desired = hub_json_copy(base->object);
        if (!desired)
                return -ENOMEM;
        f.desired = desired;
        if (hub_object_deleting(base->object))
                return decide_deletion(&f);
        f.cluster = o->cluster ? kube_object_name(o->cluster) : NULL;
        if (!f.cluster) {
                /* CAPI core sets the owner Cluster; until then nothing to do */
                hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
                return 0;
        }
        if (capi_paused(o->cluster, base->object)) {
                r = set_condition(&f, HUB_CAPI_COND_PAUSED, HUB_TRUE, "Paused", "%s", "");
                return r < 0 ? r : finish(&f);
        }
        r = set_condition(&f, HUB_CAPI_COND_PAUSED, HUB_FALSE, "NotPaused", "%s", "");
        if (r < 0)
                return r;
        r = ensure_finalizer(&f, &with_finalizer);
        if (r < 0)
                return r;
        f.oacp_written = with_finalizer;
        r = label_watched(&f);
        if (r < 0)
                return r;

        r = register_ids(&f, &secret_error);
        if (r < 0)
                return r;
        if (secret_error) {
                r = set_condition(&f, HUB_CAPI_COND_MACHINES_CREATED, HUB_FALSE, "InputError", "%s",
                                  secret_error);
                return r < 0 ? r : finish(&f);
        }
        if (r == 0)
                return 0;
        if (r == 2)
                return finish(&f);

        /* the ids, once known, are written before anything uses them (a
         * failed Machine create must not lose them) */
        if (!hub_json_equal(json_get_path(base->object, "metadata.annotations"),
                            json_get_path(desired, "metadata.annotations"))) {
                r = hub_plan_patch_object(plan, HUB_KIND_OACP, f.oacp_written ?: base->object, desired, true,
                                          false);
                if (r < 0)
                        return r;
                written = hub_json_copy(f.oacp_written ?: base->object);
                if (!written || json_add(json_get(written, "metadata"), "annotations",
                                         hub_json_copy(json_get_path(desired, "metadata.annotations"))) < 0)
                        return -ENOMEM;
                f.oacp_written = written;
        }

        /* the control-plane Machines (the template, read only then, to make them) */
        r = capi_machines_missing(base->object, o->machines, o->n_machines, &missing);
        if (r < 0)
                return r;
        if (missing && missing[0] && !o->infra_template.object) {
                r = set_condition(&f, HUB_CAPI_COND_MACHINES_CREATED, HUB_FALSE,
                                  "InfrastructureTemplateMissing",
                                  "cannot read spec.machineTemplate.infrastructureRef: %s",
                                  strna(o->infra_template.message));
                hub_plan_requeue_after(plan, HUB_REQUEUE_LONGER_ON_ERROR);
                return r < 0 ? r : finish(&f);
        }
        if (missing && missing[0]) {
                /* made in this round alone: a feedback call later in the
                 * plan would make decide plan them again */
                STRV_FOREACH (m, missing) {
                        r = create_machine(&f, *m);
                        if (r < 0)
                                return r;
                }
                r = set_condition(&f, HUB_CAPI_COND_MACHINES_CREATED, HUB_FALSE, "CreatingMachines",
                                  "%zu of %u control-plane Machines", o->n_machines,
                                  capi_replicas(base->object));
                if (r >= 0)
                        r = status(&f, NULL);
                return r < 0 ? r : finish(&f);
        }
        r = set_condition(&f, HUB_CAPI_COND_MACHINES_CREATED, HUB_TRUE, "MachinesCreated", "%s", "");
        if (r < 0)
                return r;

        cid = hub_object_annotation(desired, HUB_ANNOTATION_CLUSTER_ID);
        cluster = o->cluster_read && o->service_cluster.error >= 0 ? o->service_cluster.body : NULL;
        if (!cluster) {
                hub_plan_requeue_after(plan, REQUEUE_WHILE_INSTALLING);
                r = status(&f, NULL);
                return r < 0 ? r : finish(&f);
        }
        r = bind_hosts(&f, cid, cluster);
        if (r <= 0)
                return r;
        r = install_day2_hosts(&f, cluster);
        if (r <= 0)
                return r;

        /* the install trigger: every control-plane Machine has its host,
         * so has every worker Machine, as many as the MachineDeployments
         * ask for, and each host the sentinel's override (as the service
         * last listed them: one round after the call) */
        workers = live_machines(o->workers, o->n_workers);
        if (!result(&f, TAG_INSTALL) &&
            live_machines(o->machines, o->n_machines) == capi_replicas(base->object) &&
            workers >= o->worker_replicas && sentinels_set(o)) {
                ClusterCounts counts = { .expected_masters = capi_replicas(base->object),
                                         .expected_workers = workers };

                r = machine_names(o, &names);
                if (r < 0)
                        return r;
                cd_counts_hosts(json_get(cluster, "hosts"), capi_host_bound, names, &counts);
                if (cd_ready_for_installation(cluster, &counts, false))
                        return hub_plan_op(plan, TAG_INSTALL, ASSISTED_OP_INSTALL_CLUSTER,
                                           (char *[]){ (char *)cid, NULL }, NULL, NULL, true);
        }
        if (result(&f, TAG_INSTALL) && result(&f, TAG_INSTALL)->error >= 0 &&
            json_object_is_type(result(&f, TAG_INSTALL)->body, json_type_object))
                cluster = result(&f, TAG_INSTALL)->body;
        r = kubeconfig(&f, cluster);
        if (r <= 0)
                return r;
        if (streq_ptr(json_get_string(cluster, "status"), "installed") && !is_day2(cluster) &&
            needs_day2(&f, cluster)) {
                /* installed, and a Machine left out of it: from now
                 * on a day-2 cluster, its host is added in the next rounds */
                const HubCallResult *tr = result(&f, TAG_DAY2);

                if (!tr)
                        return hub_plan_op(plan, TAG_DAY2, ASSISTED_OP_TRANSFORM_CLUSTER_TO_DAY2,
                                           (char *[]){ (char *)cid, NULL }, NULL, NULL, true);
                if (tr->error >= 0 && json_object_is_type(tr->body, json_type_object))
                        cluster = tr->body;
                else
                        log_warning("%s/%s: cannot turn cluster %s into a day-2 cluster, its late Machines "
                                    "wait: %s",
                                    o->base.ns, o->base.name, cid, strna(tr->message));
        }
        r = machines_progress(&f, cluster);
        if (r < 0)
                return r;
        r = status(&f, cluster);
        if (r < 0)
                return r;
        /* a day-2 host registers, installs, reboots with no event to say
         * so: the service is polled until every Machine's host is in */
        if (!is_installed(cluster) || o->readyz != 0 || !hosts_done(o) || f.joining)
                hub_plan_requeue_after(plan, REQUEUE_WHILE_INSTALLING);
        return finish(&f);
}
