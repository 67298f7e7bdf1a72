/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include <json-c/json.h>

#include "assisted/assisted-user.h"
#include "capi-binding.h"
#include "capi-bootstrap.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

#define TAG_DISCOVERY_IGNITION "discovery-ignition"
#define TAG_UNBIND "unbind-host"
#define TAG_DEREGISTER "deregister-host"
/* the infra-env is registered by the control plane: looked at again */
#define REQUEUE_WAITING (10 * USEC_PER_SEC)

void capi_bootstrap_observed_done(HubObserved *base)
{
        ConfigObserved *o = (ConfigObserved *)base;

        json_object_put(o->machine);
        json_object_put(o->cluster);
        json_object_put(o->control_plane);
        hub_ref_done(&o->secret);
        hub_call_result_done(&o->hosts);
}

static int condition(json_object *desired, const char *type, const char *status, const char *reason,
                     const char *message, usec_t now)
{
        return hub_meta_conditions_set(desired, type, status, reason, message, now);
}

/* not ready yet: why, in DataSecretAvailable and Ready */
static int waiting(const ConfigObserved *o, json_object *desired, HubPlan *plan, const char *reason,
                   const char *message)
{
        if (condition(desired, HUB_CAPI_COND_DATA_SECRET_AVAILABLE, HUB_FALSE, reason, message,
                      o->base.now) < 0 ||
            condition(desired, HUB_CAPI_COND_READY, HUB_FALSE, reason, message, o->base.now) < 0)
                return -ENOMEM;
        hub_plan_requeue_after(plan, REQUEUE_WAITING);
        return hub_plan_patch_object(plan, HUB_KIND_OAC, o->base.object, desired, true, true);
}

/* ---- deletion ---- */

/* a host in these is bound and not installing: UnbindHost takes it back
 * (the service's unbind transitions to unbinding, host/transition.go) */
static const char *const before_installation[] = {
        "known", "discovering", "disconnected", "insufficient", "pending-for-input", NULL,
};

static bool call_failed(const HubCallResult *r)
{
        /* 404: the host is gone already */
        return r && r->error < 0 && r->status != 404;
}

/* the host may still be bound: the finalizer stays, Deleting and the log say why */
static int deletion_held(const ConfigObserved *o, json_object *desired, HubPlan *plan, const char *reason,
                         const char *message)
{
        int r = condition(desired, HUB_CAPI_COND_DELETING, HUB_TRUE, reason, message, o->base.now);

        if (r >= 0)
                r = hub_plan_fail(plan, "%s", message);
        if (r < 0)
                return r;
        hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
        return hub_plan_patch_object(plan, HUB_KIND_OAC, o->base.object, desired, true, true);
}

/* A host binding (its agent asked to re-register, and did not yet) for
 * CAPI_BINDING_TIMEOUT since the service last changed its status, or for
 * a time it does not say: its agent is not coming back (a host powered
 * off, a Machine's host reprovisioned). The service can neither unbind
 * it nor bind it elsewhere; it is deregistered instead of holding the
 * config's deletion for ever (an agent that does come back registers
 * again). */
static bool binding_stuck(const ConfigObserved *o, json_object *host)
{
        usec_t since;

        if (hub_parse_time(json_get_string(host, "status_updated_at"), &since) < 0)
                return true;
        return o->base.now >= since && o->base.now - since >= CAPI_BINDING_TIMEOUT;
}

/* The config is being deleted: the Machine's host (hostname = the
 * Machine's name, its owner reference's: the Machine may be gone) let go,
 * then the finalizer dropped (capi-bootstrap.h says why a control-plane
 * config is not refused). */
static int decide_deletion(const ConfigObserved *o, HubPlan *plan)
{
        json_object *obj = o->base.object, *owner = capi_owner(obj, HUB_GROUP_CAPI, "Machine"), *host;
        const char *machine = owner ? json_get_string(owner, "name") : o->base.name,
                   *ieid = hub_object_annotation(o->control_plane, HUB_ANNOTATION_INFRAENV_ID);
        const HubCallResult *ur = hub_call_results_find(&o->base.results, TAG_UNBIND),
                            *dr = hub_call_results_find(&o->base.results, TAG_DEREGISTER);
        _cleanup_(json_object_putp) json_object *desired = NULL;
        _cleanup_free_ char *msg = NULL;
        int r;

        if (!hub_object_has_finalizer(obj, HUB_FINALIZER_CAPI_BOOTSTRAP))
                return 0;
        desired = hub_json_copy(obj);
        if (!desired)
                return -ENOMEM;
        if (capi_paused(o->cluster, obj)) {
                r = condition(desired, HUB_CAPI_COND_PAUSED, HUB_TRUE, "Paused", "", o->base.now);
                return r < 0 ? r : hub_plan_patch_object(plan, HUB_KIND_OAC, obj, desired, true, true);
        }
        /* no control plane, or one being deleted: its deletion deregisters
         * the infra-env with every host */
        if (o->control_plane && !hub_object_deleting(o->control_plane) && !isempty(ieid) && !ur && !dr) {
                if (!o->hosts_read || call_failed(&o->hosts)) {
                        msg = strdup_printf("cannot list the hosts of infra-env %s: %s", ieid,
                                            strna(o->hosts.message));
                        return msg ? deletion_held(o, desired, plan, "DeregistrationFailed", msg) : -ENOMEM;
                }
                host = capi_host_for_machine(o->hosts.error >= 0 ? o->hosts.body : NULL, machine);
                if (host && !isempty(json_get_string(host, "cluster_id"))) {
                        const char *status = json_get_string(host, "status");
                        char *params[] = { (char *)ieid, (char *)json_get_string(host, "id"), NULL };

                        if (streq_ptr(status, "binding") && !binding_stuck(o, host)) {
                                msg = strdup_printf("host %s is being bound: unbound once it is", params[1]);
                                return msg ? deletion_held(o, desired, plan, "WaitingForHostBinding", msg)
                                           : -ENOMEM;
                        }
                        if (strv_contains((char **)before_installation, strempty(status)))
                                return hub_plan_op(plan, TAG_UNBIND, ASSISTED_OP_UNBIND_HOST, params, NULL,
                                                   NULL, true);
                        return hub_plan_op(plan, TAG_DEREGISTER, ASSISTED_OP_DEREGISTER_HOST, params, NULL,
                                           NULL, true);
                }
        }
        /* 409: unbound already (by another's hand, or its cluster's deregistration) */
        if (call_failed(ur) && ur->status != 409) {
                msg = strdup_printf("cannot unbind the host of Machine %s: %s", strna(machine),
                                    strna(ur->message));
                return msg ? deletion_held(o, desired, plan, "UnbindFailed", msg) : -ENOMEM;
        }
        if (call_failed(dr)) {
                msg = strdup_printf("cannot deregister the host of Machine %s: %s", strna(machine),
                                    strna(dr->message));
                return msg ? deletion_held(o, desired, plan, "DeregistrationFailed", msg) : -ENOMEM;
        }
        if (hub_object_remove_finalizer(desired, HUB_FINALIZER_CAPI_BOOTSTRAP) < 0)
                return -ENOMEM;
        return hub_plan_patch_object(plan, HUB_KIND_OAC, obj, desired, true, false);
}

int capi_bootstrap_decide(const HubObserved *base, HubPlan *plan)
{
        const ConfigObserved *o = (const ConfigObserved *)base;
        _cleanup_(json_object_putp) json_object *desired = NULL;
        const char *cluster, *ieid, *machine;
        const HubCallResult *ir = hub_call_results_find(&base->results, TAG_DISCOVERY_IGNITION);
        json_object *st;
        int r;

        if (!base->object || capi_filtered_out(o->watch_filter, base->object))
                return 0;
        if (hub_object_deleting(base->object))
                return decide_deletion(o, plan);
        /* CAPI core makes the Machine the config's owner; until then nothing
         * to do. A Machine without a name (no API server serves one) is not
         * an owner either: its name is the host's hostname. */
        if (!o->machine || isempty(kube_object_name(o->machine)))
                return 0;
        desired = hub_json_copy(base->object);
        if (!desired)
                return -ENOMEM;
        if (capi_paused(o->cluster, base->object)) {
                r = condition(desired, HUB_CAPI_COND_PAUSED, HUB_TRUE, "Paused", "", base->now);
                return r < 0 ? r
                             : hub_plan_patch_object(plan, HUB_KIND_OAC, base->object, desired, true, true);
        }
        if (condition(desired, HUB_CAPI_COND_PAUSED, HUB_FALSE, "NotPaused", "", base->now) < 0 ||
            hub_object_add_finalizer(desired, HUB_FINALIZER_CAPI_BOOTSTRAP) < 0)
                return -ENOMEM;
        if (!o->cluster)
                return waiting(o, desired, plan, "WaitingForCluster",
                               "the Machine's Cluster does not exist yet");
        cluster = kube_object_name(o->cluster);
        machine = kube_object_name(o->machine);
        st = hub_json_ensure_object(desired, "status");
        if (!st)
                return -ENOMEM;

        if (!o->secret.object) {
                _cleanup_free_ char *ign = NULL;
                json_object *s;

                if (o->secret.error != -ENOENT)
                        return waiting(o, desired, plan, "CreatingSecretFailed", strna(o->secret.message));
                ieid = hub_object_annotation(o->control_plane, HUB_ANNOTATION_INFRAENV_ID);
                if (isempty(ieid))
                        return waiting(o, desired, plan, "WaitingForInfraEnvToBeReady",
                                       "the cluster's infra-env is not registered yet");
                if (!ir) {
                        _cleanup_free_ char *path = NULL;

                        r = assisted_op_path(ASSISTED_OP_DOWNLOAD_INFRA_ENV_FILES,
                                             (char *[]){ (char *)ieid, NULL }, "file_name=discovery.ign",
                                             &path);
                        if (r < 0)
                                return r;
                        return hub_plan_download(plan, TAG_DISCOVERY_IGNITION, path);
                }
                if (ir->error < 0)
                        return waiting(o, desired, plan, "WaitingForLiveISOURL", strna(ir->message));
                r = capi_ignition_with_hostname(json_object_get_string(ir->body), machine, &ign);
                if (r == -EINVAL)
                        return waiting(o, desired, plan, "WaitingForLiveISOURL",
                                       "the infra-env's discovery.ign is not an Ignition config");
                if (r < 0)
                        return r;
                s = capi_secret(base->object, base->name, cluster,
                                (const char *const[]){ "value", ign, "format", "ignition", NULL });
                if (!s)
                        return -ENOMEM;
                r = hub_plan_create(plan, HUB_KIND_SECRET, base->ns, s);
                if (r < 0)
                        return r;
        }
        /* one an older cradle-hub made: labelled for the cache, as capi_secret() makes them */
        if (o->secret.object && base->results.n == 0) {
                r = hub_plan_label_watched(plan, HUB_KIND_SECRET, o->secret.object);
                if (r < 0)
                        return r;
        }
        if (json_add_string(st, "dataSecretName", base->name) < 0 ||
            json_add_bool(hub_json_ensure_object(st, "initialization"), "dataSecretCreated", true) < 0 ||
            condition(desired, HUB_CAPI_COND_DATA_SECRET_AVAILABLE, HUB_TRUE, "DataSecretAvailable", "",
                      base->now) < 0 ||
            condition(desired, HUB_CAPI_COND_READY, HUB_TRUE, "DataSecretAvailable", "", base->now) < 0)
                return -ENOMEM;
        return hub_plan_patch_object(plan, HUB_KIND_OAC, base->object, desired, true, true);
}

static int capi_bootstrap_observe(HubContext *ctx, HubObserved *base)
{
        ConfigObserved *o = (ConfigObserved *)base;
        json_object *owner;
        const char *cluster;
        _cleanup_strv_free_ char **cps = NULL;
        _cleanup_free_ char *v = NULL;
        bool deleting;
        int r;

        o->watch_filter = ctx->config->watch_filter;
        r = hub_cache_get(ctx->cache, HUB_KIND_OAC, base->ns, base->name, &base->object);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (capi_filtered_out(o->watch_filter, base->object))
                return 0;
        deleting = hub_object_deleting(base->object);
        owner = capi_owner(base->object, HUB_GROUP_CAPI, "Machine");
        if ((!owner || hub_cache_get(ctx->cache, HUB_KIND_MACHINE, base->ns, json_get_string(owner, "name"),
                                     &o->machine) < 0) &&
            !deleting)
                return 0;
        /* in deletion the Machine, even the Cluster, may be gone: the label says which */
        cluster = o->machine ? json_get_string(json_get(o->machine, "spec"), "clusterName")
                             : capi_cluster_name(base->object);
        if ((isempty(cluster) ||
             hub_cache_get(ctx->cache, HUB_KIND_CAPI_CLUSTER, base->ns, cluster, &o->cluster) < 0) &&
            !deleting)
                return 0;
        v = strdup_printf("%s/%s", base->ns, cluster);
        if (!v)
                return -ENOMEM;
        r = hub_cache_index_keys(ctx->cache, HUB_KIND_OACP, HUB_INDEX_OACP_CLUSTER, v, &cps);
        if (r < 0)
                return r;
        if (cps && cps[0])
                (void)hub_cache_get_key(ctx->cache, HUB_KIND_OACP, cps[0], &o->control_plane);
        if (deleting) {
                const char *ieid = hub_object_annotation(o->control_plane, HUB_ANNOTATION_INFRAENV_ID);

                if (isempty(ieid) || hub_object_deleting(o->control_plane))
                        return 0;
                r = hub_service_op(ctx->service, ASSISTED_OP_LIST_HOSTS, (char *[]){ (char *)ieid, NULL },
                                   NULL, NULL, &o->hosts);
                if (r < 0)
                        return r;
                o->hosts_read = true;
                return 0;
        }
        return hub_observe_ref(ctx, HUB_KIND_SECRET, base->ns, base->name, &o->secret);
}

/* a Machine → its config; a control plane → the configs of its cluster */
static int map_machine(HubContext *ctx, json_object *obj, char ***ret)
{
        json_object *ref = json_get_path(obj, "spec.bootstrap.configRef");

        (void)ctx;
        *ret = NULL;
        if (!streq_ptr(json_get_string(ref, "kind"), HUB_KIND_NAME_CAPI_BOOTSTRAP) ||
            isempty(json_get_string(ref, "name")))
                return 0;
        return strv_extendf(ret, "%s/%s", strempty(kube_object_namespace(obj)),
                            json_get_string(ref, "name"));
}

static int map_control_plane(HubContext *ctx, json_object *obj, char ***ret)
{
        _cleanup_free_ char *v = strdup_printf("%s/%s", strempty(kube_object_namespace(obj)),
                                               strempty(capi_cluster_name(obj)));

        if (!v)
                return -ENOMEM;
        return hub_cache_index_keys(ctx->cache, HUB_KIND_OAC, HUB_INDEX_OAC_CLUSTER, v, ret);
}

static int capi_bootstrap_setup(HubController *c)
{
        int r;

        r = hub_controller_watch(c, HUB_KIND_OAC, NULL);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_MACHINE, map_machine);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_OACP, map_control_plane);
        return r;
}

const HubControllerType hub_capi_bootstrap_controller = {
        .name = "capi-bootstrap",
        .kind = HUB_KIND_OAC,
        .observed_size = sizeof(ConfigObserved),
        .setup = capi_bootstrap_setup,
        .observe = capi_bootstrap_observe,
        .observed_done = capi_bootstrap_observed_done,
        .decide = capi_bootstrap_decide,
};
