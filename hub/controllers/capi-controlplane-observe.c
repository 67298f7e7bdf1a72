/* SPDX-License-Identifier: Apache-2.0 */
/* What the control plane's reconcile reads (capi-controlplane.h): the
 * hub's cache, the service, and the new cluster's API; the decision is
 * capi_controlplane_decide(), in capi-controlplane.c. */
#include <errno.h>
#include <string.h>

#include <json-c/json.h>

#include "assisted/assisted-user.h"
#include "capi-binding.h"
#include "capi-controlplane.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "hub-claim.h"
#include "hub-exec.h"
#include "jsonutil.h"
#include "kube/kube-csr.h"
#include "kube/kube-node.h"
#include "kube/kube.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

void capi_controlplane_observed_done(HubObserved *base)
{
        ControlPlaneObserved *o = (ControlPlaneObserved *)base;

        json_object_put(o->cluster);
        hub_ref_done(&o->secret);
        for (size_t i = 0; i < o->n_machines; i++)
                json_object_put(o->machines[i]);
        free(o->machines);
        for (size_t i = 0; i < o->n_workers; i++)
                json_object_put(o->workers[i]);
        free(o->workers);
        json_object_put(o->spoke_csrs);
        json_object_put(o->spoke_nodes);
        strv_free(o->configs);
        hub_ref_done(&o->infra_template);
        strv_free(o->infra_machines);
        hub_call_result_done(&o->candidates);
        strv_free(o->claimed_ids);
        hub_call_result_done(&o->service_cluster);
        hub_call_result_done(&o->hosts);
        hub_ref_done(&o->kubeconfig);
        free(o->kube_version);
}

static int observe_machines(HubContext *ctx, ControlPlaneObserved *o, const char *cluster)
{
        _cleanup_strv_free_ char **keys = NULL, **configs = NULL;
        _cleanup_free_ char *v = strdup_printf("%s/%s", o->base.ns, cluster);
        const char *uid = hub_object_uid(o->base.object);
        int r;

        if (!v)
                return -ENOMEM;
        r = hub_cache_index_keys(ctx->cache, HUB_KIND_MACHINE, HUB_INDEX_MACHINE_CLUSTER, v, &keys);
        if (r < 0)
                return r;
        STRV_FOREACH (k, keys) {
                _cleanup_(json_object_putp) json_object *m = NULL;
                json_object *owner, **l;
                bool controller = false;

                if (hub_cache_get_key(ctx->cache, HUB_KIND_MACHINE, *k, &m) < 0)
                        continue;
                if (capi_worker_machine(m, cluster)) {
                        l = reallocarray(o->workers, o->n_workers + 1, sizeof(*l));
                        if (!l)
                                return -ENOMEM;
                        o->workers = l;
                        o->workers[o->n_workers++] = TAKE_PTR(m);
                        continue;
                }
                owner = capi_owner(m, HUB_GROUP_CAPI_CONTROL_PLANE, HUB_KIND_NAME_CAPI_CONTROL_PLANE);
                if (!owner || !streq_ptr(json_get_string(owner, "uid"), uid) ||
                    json_get_bool(owner, "controller", &controller) < 0 || !controller ||
                    !hub_object_label(m, HUB_CAPI_LABEL_CONTROL_PLANE))
                        continue;
                l = reallocarray(o->machines, o->n_machines + 1, sizeof(*l));
                if (!l)
                        return -ENOMEM;
                o->machines = l;
                o->machines[o->n_machines++] = TAKE_PTR(m);
        }
        r = hub_cache_index_keys(ctx->cache, HUB_KIND_OAC, HUB_INDEX_OAC_CLUSTER, v, &configs);
        if (r < 0)
                return r;
        STRV_FOREACH (k, configs) {
                const char *slash = strchr(*k, '/');

                if (strv_extend(&o->configs, slash ? slash + 1 : *k) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Σ of the cluster's MachineDeployments' worker replicas, from the cache
 * (none when the cluster does not serve the kind), while they matter:
 * before the registration and until the installation starts */
static int observe_worker_replicas(HubContext *ctx, ControlPlaneObserved *o, const char *cluster)
{
        _cleanup_strv_free_ char **keys = NULL;
        _cleanup_free_ char *v = NULL;
        int r;

        if (o->cluster_read && capi_installation_started(o->service_cluster.body))
                return 0;
        v = strdup_printf("%s/%s", o->base.ns, cluster);
        if (!v)
                return -ENOMEM;
        r = hub_cache_index_keys(ctx->cache, HUB_KIND_MACHINEDEPLOYMENT, HUB_INDEX_MD_CLUSTER, v, &keys);
        if (r < 0)
                return r;
        STRV_FOREACH (k, keys) {
                _cleanup_(json_object_putp) json_object *md = NULL;

                if (hub_cache_get_key(ctx->cache, HUB_KIND_MACHINEDEPLOYMENT, *k, &md) >= 0)
                        o->worker_replicas += capi_worker_replicas(md, cluster);
        }
        return 0;
}

/* the infrastructure template and the machines cloned from it so far,
 * read (from the API server: the kinds are the user's) only when a
 * control-plane Machine is to be made */
static int observe_infra(HubContext *ctx, ControlPlaneObserved *o)
{
        json_object *ref = json_get_path(o->base.object, "spec.machineTemplate.infrastructureRef");
        const char *kind = json_get_string(ref, "kind"), *group = json_get_string(ref, "apiGroup");
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_strv_free_ char **missing = NULL;
        _cleanup_free_ char *av = NULL, *clone_kind = NULL;
        KubeResource tres, cres;
        int r;

        r = capi_machines_missing(o->base.object, o->machines, o->n_machines, &missing);
        if (r < 0 || !missing)
                return r;
        if (isempty(kind) || isempty(group)) {
                o->infra_template.error = -EINVAL;
                o->infra_template.message = strdup("spec.machineTemplate.infrastructureRef names no kind");
                return o->infra_template.message ? 0 : -ENOMEM;
        }
        r = kube_resolve_kind(ctx->kube, NULL, kind, &tres, &st);
        if (r >= 0 && !streq_ptr(tres.group, group))
                r = -ENOENT;
        if (r < 0) {
                o->infra_template.error = r;
                o->infra_template.message =
                        strdup_printf("%s.%s is not served: %s", kind, group, strna(st.message));
                return o->infra_template.message ? 0 : -ENOMEM;
        }
        r = hub_get_ref(ctx, &tres, o->base.ns, json_get_string(ref, "name"), &o->infra_template);
        if (r < 0 || !o->infra_template.object)
                return r;
        av = strdup(strempty(json_get_string(o->infra_template.object, "apiVersion")));
        clone_kind =
                endswith(kind, "Template") ? strndup(kind, strlen(kind) - strlen("Template")) : strdup(kind);
        if (!av || !clone_kind)
                return -ENOMEM;
        if (kube_resolve_kind(ctx->kube, av, clone_kind, &cres, NULL) < 0)
                return 0;
        STRV_FOREACH (m, missing) {
                _cleanup_(json_object_putp) json_object *obj = NULL;

                if (kube_get(ctx->kube, &cres, o->base.ns, *m, &obj, NULL) >= 0 &&
                    strv_extend(&o->infra_machines, *m) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* the Nodes of the day-2 hosts joining (capi_day2_joining()) and, if any,
 * the new cluster's CSRs; a read that fails leaves them unknown (the
 * Machine says it cannot look yet) */
static int observe_joining(ControlPlaneObserved *o, KubeClient *c)
{
        json_object *cluster = o->cluster_read && o->service_cluster.error >= 0 ? o->service_cluster.body
                                                                                : NULL,
                    *hosts = capi_controlplane_hosts(o);
        const char *cid = hub_object_annotation(o->base.object, HUB_ANNOTATION_CLUSTER_ID);
        _cleanup_(json_object_putp) json_object *nodes = NULL, *list = NULL;
        bool any = false;
        int r;

        for (size_t i = 0; i < o->n_machines + o->n_workers; i++) {
                json_object *m = capi_controlplane_nth_machine(o, i, NULL), *node = NULL;
                const char *name = kube_object_name(m);
                _cleanup_kube_status_ KubeStatus st = {};

                if (!capi_day2_joining(cluster, cid, m, capi_host_for_machine(hosts, name)))
                        continue;
                any = true;
                if (!nodes && !(nodes = json_new_object()))
                        return -ENOMEM;
                r = kube_get(c, hub_spoke_resource(HUB_SPOKE_NODE), NULL, name, &node, &st);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        log_debug_errno(r, "%s/%s: cannot read the node %s of the new cluster: %s",
                                        o->base.ns, o->base.name, name, strna(st.message));
                        return 0;
                }
                if (json_add(nodes, name, node) < 0)
                        return -ENOMEM;
        }
        if (!any)
                return 0;
        {
                _cleanup_kube_status_ KubeStatus st = {};

                r = kube_list(c, hub_spoke_resource(HUB_SPOKE_CSR), NULL, NULL, &list, &st);
                if (r < 0) {
                        log_debug_errno(r, "%s/%s: cannot list the new cluster's CSRs: %s", o->base.ns,
                                        o->base.name, strna(st.message));
                        return 0;
                }
        }
        o->spoke_csrs = json_object_get(json_get(list, "items"));
        if (!o->spoke_csrs && !(o->spoke_csrs = json_new_array()))
                return -ENOMEM;
        o->spoke_nodes = TAKE_PTR(nodes);
        return 0;
}

/* the new cluster's API, with the kubeconfig of the Secret */
static int observe_spoke(ControlPlaneObserved *o)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_(json_object_putp) json_object *v = NULL;
        _cleanup_free_ char *kubeconfig = hub_secret_value(o->kubeconfig.object, "value"), *err = NULL;
        int r;

        o->readyz = -ENOENT;
        if (!kubeconfig)
                return 0;
        (void)redact_register_secret(kubeconfig);
        r = hub_spoke_client(kubeconfig, &c, &err);
        if (r < 0) {
                o->readyz = r;
                return 0;
        }
        o->readyz = kube_request(c, "GET", "/readyz", NULL, NULL, NULL, NULL);
        if (o->readyz < 0)
                return 0;
        o->readyz = 0;
        if (kube_request(c, "GET", "/version", NULL, NULL, &v, NULL) >= 0 &&
            json_get_string(v, "gitVersion"))
                o->kube_version = strdup(json_get_string(v, "gitVersion"));
        return observe_joining(o, c);
}

/* a registering marker and an id missing: the service's objects of that
 * kind, searched before registering again (hub-claim.h) */
static int observe_claim(HubContext *ctx, ControlPlaneObserved *o, const char *cid, const char *ieid)
{
        bool cluster = isempty(cid);
        _cleanup_free_ char *self = NULL;
        int r;

        o->identity = ctx->identity;
        if (!hub_object_annotation(o->base.object, HUB_ANNOTATION_REGISTERING) ||
            (!cluster && !isempty(ieid)))
                return 0;
        r = hub_service_op(ctx->service, cluster ? ASSISTED_OP_LIST_CLUSTERS : ASSISTED_OP_LIST_INFRA_ENVS,
                           (char *[]){ NULL }, NULL, NULL, &o->candidates);
        if (r < 0)
                return r;
        o->searched_for = cluster ? HUB_ANNOTATION_CLUSTER_ID : HUB_ANNOTATION_INFRAENV_ID;
        self = strdup_printf("%s/%s", o->base.ns, o->base.name);
        if (!self)
                return -ENOMEM;
        return hub_observe_claimed(ctx, HUB_KIND_OACP,
                                   cluster ? HUB_INDEX_OACP_CLUSTER_ID : HUB_INDEX_OACP_INFRAENV_ID,
                                   o->candidates.body, self, &o->claimed_ids);
}

/* Every Machine, deleting or not, has its host among the cluster's own
 * (bound to it): the infra-env's list would show no other host any
 * decision looks at, since a bound host is the one a Machine's name
 * picks (capi_host_for_machine()). Through most of an installation, so
 * a reconcile reads the cluster alone. */
static bool cluster_hosts_suffice(const ControlPlaneObserved *o)
{
        json_object *hosts;

        if (!o->cluster_read || o->service_cluster.error < 0)
                return false;
        hosts = json_get(o->service_cluster.body, "hosts");
        for (size_t i = 0; i < o->n_machines + o->n_workers; i++)
                if (!capi_host_for_machine(hosts,
                                           kube_object_name(capi_controlplane_nth_machine(o, i, NULL))))
                        return false;
        return true;
}

/* the service's cluster and the infra-env's hosts, by the annotations'
 * ids; in deletion every host of the infra-env, else its list only when
 * the cluster's hosts do not suffice */
static int observe_service(HubContext *ctx, ControlPlaneObserved *o, bool every_host)
{
        const char *cid = hub_object_annotation(o->base.object, HUB_ANNOTATION_CLUSTER_ID),
                   *ieid = hub_object_annotation(o->base.object, HUB_ANNOTATION_INFRAENV_ID);
        int r;

        if (!isempty(cid)) {
                r = hub_service_op(ctx->service, ASSISTED_OP_GET_CLUSTER, (char *[]){ (char *)cid, NULL },
                                   NULL, NULL, &o->service_cluster);
                if (r < 0)
                        return r;
                o->cluster_read = true;
        }
        if (!isempty(ieid) && (every_host || !cluster_hosts_suffice(o))) {
                r = hub_service_op(ctx->service, ASSISTED_OP_LIST_HOSTS, (char *[]){ (char *)ieid, NULL },
                                   NULL, NULL, &o->hosts);
                if (r < 0)
                        return r;
                o->hosts_read = true;
        }
        return 0;
}

static int capi_controlplane_observe(HubContext *ctx, HubObserved *base)
{
        ControlPlaneObserved *o = (ControlPlaneObserved *)base;
        json_object *oacp, *owner;
        const char *cluster, *ps;
        _cleanup_free_ char *kc = NULL;
        int r;

        o->api = hub_service_api(ctx->service);
        o->image_type = ctx->config->image_type;
        o->watch_filter = ctx->config->watch_filter;
        o->readyz = -ENOENT;
        o->cert_expiration = ctx->config->kubeconfig_cert_expiration > 0
                                     ? ctx->config->kubeconfig_cert_expiration
                                     : CAPI_KUBECONFIG_DEFAULT_EXPIRATION;
        o->cert_renew_before = ctx->config->kubeconfig_cert_renew_before;
        r = hub_cache_get(ctx->cache, HUB_KIND_OACP, base->ns, base->name, &base->object);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        oacp = base->object;
        /* another instance's: nothing read of it, nothing asked of the service */
        if (capi_filtered_out(o->watch_filter, oacp))
                return 0;
        owner = capi_owner(oacp, HUB_GROUP_CAPI, "Cluster");
        cluster = owner ? json_get_string(owner, "name") : capi_cluster_name(oacp);
        /* deletion: the service's records (the Cluster, for pausing, may be gone) */
        if (hub_object_deleting(oacp)) {
                if (!isempty(cluster))
                        (void)hub_cache_get(ctx->cache, HUB_KIND_CAPI_CLUSTER, base->ns, cluster,
                                            &o->cluster);
                /* what an interrupted registration may have made, too */
                r = observe_claim(ctx, o, hub_object_annotation(oacp, HUB_ANNOTATION_CLUSTER_ID),
                                  hub_object_annotation(oacp, HUB_ANNOTATION_INFRAENV_ID));
                return r < 0 ? r : observe_service(ctx, o, true);
        }
        if (isempty(cluster) ||
            hub_cache_get(ctx->cache, HUB_KIND_CAPI_CLUSTER, base->ns, cluster, &o->cluster) < 0)
                return 0;
        ps = json_get_string(json_get_path(oacp, "spec.config.pullSecretRef"), "name");
        if (!isempty(ps)) {
                r = hub_observe_ref(ctx, HUB_KIND_SECRET, base->ns, ps, &o->secret);
                if (r < 0)
                        return r;
        } else
                o->secret.error = -ENOENT;
        r = observe_machines(ctx, o, cluster);
        if (r < 0)
                return r;
        r = observe_infra(ctx, o);
        if (r < 0)
                return r;
        r = observe_claim(ctx, o, hub_object_annotation(oacp, HUB_ANNOTATION_CLUSTER_ID),
                          hub_object_annotation(oacp, HUB_ANNOTATION_INFRAENV_ID));
        if (r < 0)
                return r;
        r = observe_service(ctx, o, false);
        if (r < 0)
                return r;
        r = observe_worker_replicas(ctx, o, cluster);
        if (r < 0)
                return r;
        /* the kubeconfig Secret and the new cluster's API: not looked for
         * before the Secret's time (a Secret not in the cache is read
         * directly: one that does not exist yet, each reconcile) */
        if (!o->cluster_read ||
            (o->service_cluster.error >= 0 && !capi_kubeconfig_due(o->service_cluster.body)))
                return 0;
        kc = strdup_printf("%s-kubeconfig", cluster);
        if (!kc)
                return -ENOMEM;
        r = hub_observe_ref(ctx, HUB_KIND_SECRET, base->ns, kc, &o->kubeconfig);
        if (r < 0)
                return r;
        r = capi_kubeconfig_cert_read(
                o->kubeconfig.object,
                hub_object_annotation(o->kubeconfig.object, CAPI_ANNOTATION_KUBECONFIG_CSR),
                &o->kubeconfig_cert);
        if (r < 0)
                return r;
        return observe_spoke(o);
}

/* a Machine, a config, a MachineDeployment (its spec.clusterName) or a
 * Cluster → the control plane of its cluster */
static int map_by_cluster(HubContext *ctx, json_object *obj, char ***ret)
{
        const char *kind = json_get_string(obj, "kind");
        _cleanup_free_ char *v = NULL;

        v = strdup_printf("%s/%s", strempty(kube_object_namespace(obj)),
                          streq_ptr(kind, "Cluster") ? strempty(kube_object_name(obj))
                          : streq_ptr(kind, "MachineDeployment")
                                  ? strempty(json_get_string(json_get(obj, "spec"), "clusterName"))
                                  : strempty(capi_cluster_name(obj)));
        if (!v)
                return -ENOMEM;
        return hub_cache_index_keys(ctx->cache, HUB_KIND_OACP, HUB_INDEX_OACP_CLUSTER, v, ret);
}

static int capi_controlplane_setup(HubController *c)
{
        int r;

        r = hub_controller_watch(c, HUB_KIND_OACP, NULL);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_MACHINE, map_by_cluster);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_CAPI_CLUSTER, map_by_cluster);
        /* the workers' replicas (none watched when the kind is not served) */
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_MACHINEDEPLOYMENT, map_by_cluster);
        return r;
}

const HubControllerType hub_capi_controlplane_controller = {
        .name = "capi-controlplane",
        .kind = HUB_KIND_OACP,
        .observed_size = sizeof(ControlPlaneObserved),
        .setup = capi_controlplane_setup,
        .observe = capi_controlplane_observe,
        .observed_done = capi_controlplane_observed_done,
        .decide = capi_controlplane_decide,
};
