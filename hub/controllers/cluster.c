/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base64.h"
#include "buf.h"
#include "cleanup.h"
#include "cluster.h"
#include "hub-cache.h"
#include "hub-claim.h"
#include "hub-exec.h"
#include "hub-service.h"
#include "http.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "redact.h"
#include "strutil.h"

/* tags of the calls this controller makes */
#define TAG_VERSIONS "openshift-versions"
#define TAG_REGISTER "register-cluster"
/* the same call again, shaped for the API a refusal of the first showed */
#define TAG_REGISTER_AGAIN "register-cluster-again"
#define TAG_IMPORT "import-cluster"
#define TAG_GET "get-cluster"
#define TAG_UPDATE "update-cluster"
#define TAG_UPDATE_AGAIN "update-cluster-again"
#define TAG_INSTALL_CONFIG "install-config"
#define TAG_IGNORED "ignored-validations"
#define TAG_GET_IGNORED "get-ignored-validations"
#define TAG_CREATE_MANIFEST "create-manifest:"
#define TAG_DELETE_MANIFEST "delete-manifest:"
#define TAG_INSTALL "install-cluster"
#define TAG_INSTALL_HOST "install-host:"
#define TAG_TRANSFORM "transform-day2"
#define TAG_CREDENTIALS "credentials"
#define TAG_KUBECONFIG "kubeconfig"
#define TAG_KUBECONFIG_NOINGRESS "kubeconfig-noingress"
#define TAG_CANCEL "cancel-installation"
#define TAG_DEREGISTER "deregister-cluster"

#define CD_API_VERSION HUB_GROUP_HIVE "/v1"
#define MANIFESTS_FOLDER "openshift"

void cd_observed_done(HubObserved *base)
{
        ClusterObserved *o = (ClusterObserved *)base;

        json_object_put(o->aci);
        hub_ref_done(&o->secret);
        hub_ref_done(&o->image_set);
        hub_ref_done(&o->control_plane);
        hub_ref_done(&o->ca_secret);
        for (size_t i = 0; i < o->n_config_maps; i++)
                hub_ref_done(&o->config_maps[i]);
        free(o->config_maps);
        for (size_t i = 0; i < o->n_agents; i++) {
                json_object_put(o->agents[i]);
                json_object_put(o->agent_infraenvs ? o->agent_infraenvs[i] : NULL);
        }
        free(o->agents);
        free(o->agent_infraenvs);
        hub_ref_done(&o->kubeconfig_secret);
        hub_ref_done(&o->password_secret);
        hub_call_result_done(&o->cluster);
        hub_call_result_done(&o->candidates);
        strv_free(o->claimed_ids);
        hub_call_result_done(&o->manifests);
}

/* ---- names ---- */

static const char *aci_name(json_object *cd)
{
        json_object *ref = json_get_path(cd, "spec.clusterInstallRef");

        /* isSupportedPlatform */
        if (!streq_ptr(json_get_string(ref, "group"), HUB_GROUP_HIVE_EXTENSIONS) ||
            !streq_ptr(json_get_string(ref, "kind"), "AgentClusterInstall"))
                return NULL;
        return json_get_string(ref, "name");
}

static char *kubeconfig_secret_name(json_object *cd)
{
        const char *n =
                json_get_string(json_get_path(cd, "spec.clusterMetadata.adminKubeconfigSecretRef"), "name");

        return !isempty(n) ? strdup(n)
                           : strdup_printf("%s-admin-kubeconfig", strempty(kube_object_name(cd)));
}

static char *password_secret_name(json_object *cd)
{
        return strdup_printf("%s-admin-password", strempty(kube_object_name(cd)));
}

/* the ConfigMap names of the ACI's manifests: manifestsConfigMapRefs[],
 * else the legacy manifestsConfigMapRef */
static int manifest_config_maps(json_object *aci, char ***ret)
{
        json_object *refs = json_get_path(aci, "spec.manifestsConfigMapRefs");
        const char *legacy = json_get_string(json_get_path(aci, "spec.manifestsConfigMapRef"), "name");
        _cleanup_strv_free_ char **l = NULL;
        int r;

        if (json_object_is_type(refs, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(refs); i++) {
                        r = strv_extend(
                                &l, strempty(json_get_string(json_object_array_get_idx(refs, i), "name")));
                        if (r < 0)
                                return r;
                }
        } else if (!isempty(legacy)) {
                r = strv_extend(&l, legacy);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* ---- observe ---- */

/* the pull secret's text and the tokens in it never reach a log line */
static void register_pull_secret(const HubRef *ref)
{
        _cleanup_erase_ char *text = hub_secret_value(ref->object, ".dockerconfigjson");
        _cleanup_(json_object_putp) json_object *j = NULL;

        if (!text)
                return;
        (void)redact_register_secret(text);
        if (json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &j, NULL) < 0)
                return;
        json_object_object_foreach (json_get(j, "auths"), k, v) {
                (void)k;
                (void)redact_register_secret(json_get_string(v, "auth"));
        }
}

static int observe_agents(HubContext *ctx, ClusterObserved *o)
{
        _cleanup_strv_free_ char **keys = NULL;
        size_t n = 0;
        int r;

        r = hub_cache_keys_referring(ctx->cache, HUB_KIND_AGENT, HUB_INDEX_AGENT_CD, o->base.object, &keys);
        if (r < 0)
                return r;
        o->agents = calloc(strv_length(keys) + 1, sizeof(json_object *));
        o->agent_infraenvs = calloc(strv_length(keys) + 1, sizeof(json_object *));
        if (!o->agents || !o->agent_infraenvs)
                return -ENOMEM;
        STRV_FOREACH (k, keys) {
                _cleanup_free_ char *ns = NULL, *name = NULL;
                const char *ie;

                r = hub_key_split(*k, &ns, &name);
                if (r < 0)
                        return r;
                if (hub_cache_get(ctx->cache, HUB_KIND_AGENT, ns, name, &o->agents[n]) < 0)
                        continue;
                ie = hub_object_label(o->agents[n], HUB_LABEL_INFRAENV);
                if (!isempty(ie) &&
                    hub_cache_get(ctx->cache, HUB_KIND_INFRAENV, ns, ie, &o->agent_infraenvs[n]) < 0)
                        o->agent_infraenvs[n] = NULL;
                n++;
        }
        o->n_agents = n;
        return 0;
}

/* installed: spec.installed, or the ACI says Completed */
static bool is_installed(const ClusterObserved *o)
{
        json_object *c = hub_conditions_find(o->aci, HUB_COND_COMPLETED);
        bool installed = false;

        (void)json_get_bool(json_get(o->base.object, "spec"), "installed", &installed);
        return installed || streq_ptr(json_get_string(c, "reason"), HUB_REASON_INSTALLATION_COMPLETED);
}

/* a day-1 cluster installing, finalizing or installed whose ACI does not
 * say Completed yet: its credentials Secrets matter */
static bool needs_credentials(const ClusterObserved *o)
{
        const char *status = json_get_string(o->cluster.body, "status");

        return o->cluster_read && o->cluster.error >= 0 && o->aci && !is_installed(o) &&
               streq_ptr(json_get_string(o->cluster.body, "kind"), "Cluster") &&
               STR_IN_SET(strempty(status), "installing", "finalizing", "installed");
}

static int observe_service(HubContext *ctx, ClusterObserved *o)
{
        _cleanup_free_ char *self = NULL;
        json_object *cd = o->base.object;
        const char *id = hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID),
                   *marker = hub_object_annotation(cd, HUB_ANNOTATION_REGISTERING), *status;
        int r;

        if (!isempty(id)) {
                r = hub_service_op(ctx->service, ASSISTED_OP_GET_CLUSTER, (char *[]){ (char *)id, NULL },
                                   NULL, NULL, &o->cluster);
                if (r < 0)
                        return r;
                o->cluster_read = true;
        } else if (marker) {
                r = hub_service_op(ctx->service, ASSISTED_OP_LIST_CLUSTERS, (char *[]){ NULL }, NULL, NULL,
                                   &o->candidates);
                if (r < 0)
                        return r;
                o->searched = true;
                self = strdup_printf("%s/%s", o->base.ns, o->base.name);
                if (!self)
                        return -ENOMEM;
                r = hub_observe_claimed(ctx, HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_CLUSTER_ID,
                                        o->candidates.body, self, &o->claimed_ids);
                if (r < 0)
                        return r;
        }
        if (!o->cluster_read || o->cluster.error < 0 || !o->aci || hub_object_deleting(cd) ||
            hub_object_deleting(o->aci))
                return 0;
        /* a day-1 cluster before its installation: its custom manifests */
        status = json_get_string(o->cluster.body, "status");
        if (streq_ptr(json_get_string(o->cluster.body, "kind"), "Cluster") &&
            cd_status_before_installation(status)) {
                _cleanup_strv_free_ char **cms = NULL;

                r = manifest_config_maps(o->aci, &cms);
                if (r < 0)
                        return r;
                if (cms || hub_object_annotation(cd, HUB_ANNOTATION_MANIFESTS_DIGEST)) {
                        r = hub_service_op(ctx->service, ASSISTED_OP_LIST_CLUSTER_MANIFESTS,
                                           (char *[]){ (char *)id, NULL }, NULL, NULL, &o->manifests);
                        if (r < 0)
                                return r;
                        o->manifests_read = true;
                }
        }
        return 0;
}

/* The ACI's Cluster API control plane, when the ClusterImageSet does not
 * say its release (CAPOA's, pinned by digest without labels): one GET,
 * not cached (cradle-hub reconciles no Cluster API kind); a failure is a
 * fact, and the ClusterImageSet's own error stands then. */
static int observe_control_plane(HubContext *ctx, json_object *aci, const char *ns, json_object *image_set,
                                 HubRef *ret)
{
        _cleanup_free_ char *version = NULL, *arch = NULL, *why = NULL, *group = NULL;
        const char *api, *name, *slash;
        int r;

        r = cd_release_asked(image_set, NULL, &version, &arch, &why);
        if (r != -EINVAL || !cd_control_plane_owner(aci, &api, &name))
                return r < 0 && r != -EINVAL ? r : 0;
        slash = strchr(api, '/');
        group = strndup(api, (size_t)(slash - api));
        if (!group)
                return -ENOMEM;
        return hub_get_ref(ctx,
                           &KUBE_RESOURCE(group, slash + 1, HUB_RESOURCE_CAPI_CONTROL_PLANE,
                                          HUB_KIND_NAME_CAPI_CONTROL_PLANE, true),
                           ns, name, ret);
}

static int cd_observe(HubContext *ctx, HubObserved *base)
{
        ClusterObserved *o = (ClusterObserved *)base;
        json_object *cd, *aci, *ca;
        _cleanup_free_ char *kc = NULL, *pw = NULL;
        _cleanup_strv_free_ char **cms = NULL;
        const char *name, *secret, *imageset;
        int r;

        o->identity = ctx->identity;
        r = hub_cache_get(ctx->cache, HUB_KIND_CLUSTERDEPLOYMENT, base->ns, base->name, &base->object);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        cd = base->object;
        name = aci_name(cd);
        if (isempty(name))
                return 0;
        r = hub_cache_get(ctx->cache, HUB_KIND_AGENTCLUSTERINSTALL, base->ns, name, &o->aci);
        if (r < 0 && r != -ENOENT)
                return r;
        aci = o->aci;

        r = observe_agents(ctx, o);
        if (r < 0)
                return r;
        if (hub_object_deleting(cd) || (aci && hub_object_deleting(aci)) || !aci)
                return observe_service(ctx, o);

        secret = json_get_string(json_get_path(cd, "spec.pullSecretRef"), "name");
        if (!isempty(secret)) {
                r = hub_observe_ref(ctx, HUB_KIND_SECRET, base->ns, secret, &o->secret);
                if (r < 0)
                        return r;
                register_pull_secret(&o->secret);
        }
        imageset = json_get_string(json_get_path(aci, "spec.imageSetRef"), "name");
        if (!isempty(imageset)) {
                r = hub_observe_ref(ctx, HUB_KIND_CLUSTERIMAGESET, NULL, imageset, &o->image_set);
                if (r >= 0 && o->image_set.object)
                        r = observe_control_plane(ctx, aci, base->ns, o->image_set.object,
                                                  &o->control_plane);
                if (r < 0)
                        return r;
        }
        ca = json_get_path(aci, "spec.ignitionEndpoint.caCertificateReference");
        if (ca) {
                const char *cns = json_get_string(ca, "namespace");

                r = hub_observe_ref(ctx, HUB_KIND_SECRET, isempty(cns) ? base->ns : cns,
                                    json_get_string(ca, "name"), &o->ca_secret);
                if (r < 0)
                        return r;
        }
        r = manifest_config_maps(aci, &cms);
        if (r < 0)
                return r;
        o->config_maps = calloc(strv_length(cms) + 1, sizeof(HubRef));
        if (!o->config_maps)
                return -ENOMEM;
        STRV_FOREACH (c, cms) {
                r = hub_observe_ref(ctx, HUB_KIND_CONFIGMAP, base->ns, *c,
                                    &o->config_maps[o->n_config_maps]);
                if (r < 0)
                        return r;
                o->n_config_maps++;
        }
        r = observe_service(ctx, o);
        /* after the service's answers: what they showed counts */
        o->api = hub_service_api(ctx->service);
        if (r < 0 || !needs_credentials(o))
                return r;
        /* the credentials Secrets (not cached: read one by one) only from
         * the installation on, until it is installed in the ACI's terms */
        kc = kubeconfig_secret_name(cd);
        pw = password_secret_name(cd);
        if (!kc || !pw)
                return -ENOMEM;
        r = hub_observe_ref(ctx, HUB_KIND_SECRET, base->ns, kc, &o->kubeconfig_secret);
        if (r >= 0)
                r = hub_observe_ref(ctx, HUB_KIND_SECRET, base->ns, pw, &o->password_secret);
        return r;
}

/* ---- decide: helpers ---- */

/* What one reconcile has found so far. */
typedef struct Flow {
        const ClusterObserved *o;
        HubPlan *plan;
        json_object *cd, *aci;
        json_object *desired_cd; /* the ClusterDeployment's annotations */
        json_object *desired_aci; /* spec.clusterMetadata, status */
        json_object *cluster; /* the service's cluster as last answered (borrowed) */
        char *sync_error;
        bool sync_user;
        usec_t requeue; /* after a sync error */
        bool hold;
        ClusterInputs in;
        char *pull_secret;
        char *version, *arch, *ca, *register_version;
        char digest[80];
} Flow;

static void flow_done(Flow *f)
{
        json_object_put(f->desired_cd);
        json_object_put(f->desired_aci);
        free(f->sync_error);
        erase_and_free(f->pull_secret);
        free(f->version);
        free(f->arch);
        free(f->ca);
        free(f->register_version);
}

static const HubCallResult *result(const Flow *f, const char *tag)
{
        return hub_call_results_find(&f->o->base.results, tag);
}

static bool first_round_of(const ClusterObserved *o)
{
        return o->base.results.n == 0;
}

static bool first_round(const Flow *f)
{
        return first_round_of(f->o);
}

static int sync_errorf(Flow *f, bool user, const char *fmt, ...) _printf_(3, 4);
static int sync_errorf(Flow *f, bool user, const char *fmt, ...)
{
        va_list ap;

        free(f->sync_error);
        va_start(ap, fmt);
        f->sync_error = strdup_vprintf(fmt, ap);
        va_end(ap);
        f->sync_user = user;
        if (!user)
                f->requeue = HUB_REQUEUE_ON_ERROR;
        return f->sync_error ? 0 : -ENOMEM;
}

/* a failed call as the condition says it: a 4xx is the user's */
static int sync_error_call(Flow *f, const HubCallResult *r, const char *prefix)
{
        bool user = hub_call_is_user_error(r);

        if (prefix)
                return sync_errorf(f, user, "%s: %s", prefix, strna(r->message));
        return sync_errorf(f, user, "%s", strna(r->message));
}

static json_object *hosts_of(const Flow *f)
{
        const ClusterObserved *o = f->o;

        return o->cluster_read && o->cluster.error >= 0 ? json_get(o->cluster.body, "hosts") : NULL;
}

/* The ACI's writes, in upstream's order: spec and metadata
 * (clusterMetadata, so that whoever sees Completed also sees the
 * password Secret's reference), then the status. Both locked on what was
 * observed when there is a status (its conditions are a list; the
 * executor counts the spec write as observed); spec and metadata alone
 * only when their patch replaces a list. */
static int plan_aci(HubPlan *plan, json_object *observed, json_object *desired)
{
        _cleanup_(json_object_putp) json_object *a = NULL, *b = NULL, *patch = NULL, *spatch = NULL;
        const char *rv = kube_object_resource_version(observed);
        int r;

        r = hub_json_merge_diff(json_get(observed, "status"), json_get(desired, "status"), &spatch);
        if (r < 0)
                return r;
        a = hub_json_copy(observed);
        b = hub_json_copy(desired);
        if (!a || !b)
                return -ENOMEM;
        json_object_object_del(a, "status");
        json_object_object_del(b, "status");
        r = hub_json_merge_diff(a, b, &patch);
        if (r < 0)
                return r;
        if (patch) {
                bool locked = spatch || hub_json_patch_has_array(patch);

                r = hub_plan_patch(plan, HUB_KIND_AGENTCLUSTERINSTALL, kube_object_namespace(observed),
                                   kube_object_name(observed), false, false, locked ? rv : NULL,
                                   TAKE_PTR(patch));
                if (r < 0)
                        return r;
        }
        if (spatch) {
                _cleanup_(json_object_putp) json_object *wrap = json_new_object();

                if (!wrap || json_add(wrap, "status", TAKE_PTR(spatch)) < 0)
                        return -ENOMEM;
                r = hub_plan_patch(plan, HUB_KIND_AGENTCLUSTERINSTALL, kube_object_namespace(observed),
                                   kube_object_name(observed), false, true, rv, TAKE_PTR(wrap));
        }
        return r;
}

/* The end of every reconcile that got as far as the ACI: its status
 * from the cluster as last seen (NULL: none), the annotations of the
 * ClusterDeployment. */
static int finish(Flow *f, json_object *cluster)
{
        const ClusterObserved *o = f->o;
        ClusterCounts counts;
        int r;

        cd_counts(f->aci, hosts_of(f), o->agents, o->n_agents, &counts);
        r = cd_aci_status(f->desired_aci, cluster, &counts, f->sync_error, f->sync_user, f->hold,
                          cd_link_source(o->agents, o->agent_infraenvs, o->n_agents), o->base.now);
        if (r < 0)
                return r;
        r = hub_plan_patch_object(f->plan, HUB_KIND_CLUSTERDEPLOYMENT, f->cd, f->desired_cd, true, false);
        if (r >= 0)
                r = plan_aci(f->plan, f->aci, f->desired_aci);
        if (r < 0)
                return r;
        if (f->requeue)
                hub_plan_requeue_after(f->plan, f->requeue);
        return 0;
}

/* ---- decide: deletion (notes §1.5) ---- */

static bool agent_deleted_on_unbind(json_object *cd, json_object *ie)
{
        json_object *ref = json_get_path(ie, "spec.clusterRef");
        const char *ns = json_get_string(ref, "namespace");
        bool preserve = false;

        if (!ie)
                return false;
        if (ref)
                return streq_ptr(json_get_string(ref, "name"), kube_object_name(cd)) &&
                       streq(isempty(ns) ? strempty(kube_object_namespace(ie)) : ns,
                             strempty(kube_object_namespace(cd)));
        /* (sic) an InfraEnv without a clusterRef, and preserveOnDelete */
        (void)json_get_bool(json_get(cd, "spec"), "preserveOnDelete", &preserve);
        return preserve;
}

static int unbind_agents(const ClusterObserved *o, HubPlan *plan)
{
        for (size_t i = 0; i < o->n_agents; i++) {
                json_object *a = o->agents[i];
                int r;

                if (hub_object_deleting(a))
                        continue;
                if (agent_deleted_on_unbind(o->base.object, o->agent_infraenvs[i]))
                        r = hub_plan_delete(plan, HUB_KIND_AGENT, kube_object_namespace(a),
                                            kube_object_name(a), hub_object_uid(a), false);
                else {
                        json_object *patch = json_new_object();

                        /* a JSON null removes spec.clusterDeploymentName */
                        if (!patch || json_add(patch, "spec", json_new_object()) < 0 ||
                            json_object_object_add(json_get(patch, "spec"), "clusterDeploymentName", NULL) <
                                    0) {
                                json_object_put(patch);
                                return -ENOMEM;
                        }
                        r = hub_plan_patch(plan, HUB_KIND_AGENT, kube_object_namespace(a),
                                           kube_object_name(a), false, false, NULL, patch);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

bool cd_installation_cancellable(json_object *cluster)
{
        return STR_IN_SET(strempty(json_get_string(cluster, "status")), "installing",
                          "preparing-for-installation", "installing-pending-user-action", "finalizing",
                          "error");
}

/* the ACI is being deleted: cancel, unbind or delete the Agents,
 * deregister, then let it go */
static int decide_aci_deletion(const ClusterObserved *o, HubPlan *plan)
{
        json_object *aci = o->aci,
                    *cluster = o->cluster_read && o->cluster.error >= 0 ? o->cluster.body : NULL;
        const HubCallResult *cancel = hub_call_results_find(&o->base.results, TAG_CANCEL),
                            *dereg = hub_call_results_find(&o->base.results, TAG_DEREGISTER);
        const char *id = hub_object_annotation(o->base.object, HUB_ANNOTATION_CLUSTER_ID);
        _cleanup_(json_object_putp) json_object *desired = NULL;
        int r;

        if (!hub_object_has_finalizer(aci, HUB_FINALIZER_ACI))
                return 0;
        if (o->cluster_read && o->cluster.error < 0 && o->cluster.status != 404)
                return hub_plan_fail(plan, "cannot read the cluster of ClusterDeployment %s/%s: %s",
                                     o->base.ns, o->base.name, strna(o->cluster.message));
        if (cluster && !cancel && !dereg && cd_installation_cancellable(cluster))
                return hub_plan_op(plan, TAG_CANCEL, ASSISTED_OP_CANCEL_INSTALLATION,
                                   (char *[]){ (char *)id, NULL }, NULL, NULL, true);
        if (cancel && cancel->error < 0)
                return hub_plan_fail(plan, "cannot cancel the installation of cluster %s: %s", strna(id),
                                     strna(cancel->message));
        if (cluster && !dereg) {
                /* the Agents once, with the call that follows */
                r = unbind_agents(o, plan);
                if (r < 0)
                        return r;
                return hub_plan_op(plan, TAG_DEREGISTER, ASSISTED_OP_DEREGISTER_CLUSTER,
                                   (char *[]){ (char *)id, NULL }, NULL, NULL, true);
        }
        if (!cluster && !dereg && first_round_of(o)) {
                r = unbind_agents(o, plan);
                if (r < 0)
                        return r;
        }
        if (dereg && dereg->error < 0 && dereg->status != 404) {
                hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
                return hub_plan_fail(plan, "failed to deregister cluster: %s: %s", o->base.name,
                                     strna(dereg->message));
        }
        desired = hub_json_copy(aci);
        if (!desired)
                return -ENOMEM;
        r = hub_object_remove_finalizer(desired, HUB_FINALIZER_ACI);
        if (r < 0)
                return r;
        return hub_plan_patch_object_locked(plan, HUB_KIND_AGENTCLUSTERINSTALL, aci, desired, false);
}

/* the ClusterDeployment is being deleted: its ACI goes first */
static int decide_cd_deletion(const ClusterObserved *o, HubPlan *plan)
{
        json_object *cd = o->base.object;
        _cleanup_(json_object_putp) json_object *desired = NULL;
        int r;

        if (!hub_object_has_finalizer(cd, HUB_FINALIZER_CD))
                return 0;
        if (o->aci) {
                if (!hub_object_deleting(o->aci)) {
                        r = hub_plan_delete(plan, HUB_KIND_AGENTCLUSTERINSTALL, o->base.ns,
                                            kube_object_name(o->aci), hub_object_uid(o->aci), false);
                        if (r < 0)
                                return r;
                }
                hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
                return hub_plan_fail(
                        plan, "could not confirm clusterInstall %s deletion was successfuly completed",
                        kube_object_name(o->aci));
        }
        desired = hub_json_copy(cd);
        if (!desired)
                return -ENOMEM;
        r = hub_object_remove_finalizer(desired, HUB_FINALIZER_CD);
        if (r < 0)
                return r;
        return hub_plan_patch_object(plan, HUB_KIND_CLUSTERDEPLOYMENT, cd, desired, true, false);
}

/* ---- decide: the way there ---- */

/* controllerutil.SetOwnerReference: the ClusterDeployment owns the ACI
 * (not as its controller) */
static int owner_ref(json_object *aci, json_object *cd)
{
        json_object *md = hub_json_ensure_object(aci, "metadata"), *refs, *ref;
        const char *uid = hub_object_uid(cd);

        if (!md)
                return -ENOMEM;
        refs = json_get(md, "ownerReferences");
        for (size_t i = 0; json_object_is_type(refs, json_type_array) && i < json_object_array_length(refs);
             i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(refs, i), "uid"), uid))
                        return 0;
        if (!json_object_is_type(refs, json_type_array)) {
                refs = json_new_array();
                if (!refs || json_add(md, "ownerReferences", refs) < 0)
                        return -ENOMEM;
        }
        ref = json_new_object();
        if (!ref || json_append(refs, ref) < 0 || json_add_string(ref, "apiVersion", CD_API_VERSION) < 0 ||
            json_add_string(ref, "kind", "ClusterDeployment") < 0 ||
            json_add_string(ref, "name", strempty(kube_object_name(cd))) < 0 ||
            json_add_string(ref, "uid", strempty(uid)) < 0)
                return -ENOMEM;
        return 0;
}

/* Finalizers on both objects and the owner reference, before anything
 * else; 1 when they had to be written (the reconcile ends there: the
 * objects' events bring the next one). */
static int ensure_finalizers(const ClusterObserved *o, HubPlan *plan)
{
        _cleanup_(json_object_putp) json_object *cd = hub_json_copy(o->base.object),
                                                *aci = hub_json_copy(o->aci);
        bool changed = false;
        int r;

        if (!cd || !aci)
                return -ENOMEM;
        r = hub_object_add_finalizer(cd, HUB_FINALIZER_CD);
        if (r < 0)
                return r;
        changed = r > 0;
        r = hub_object_add_finalizer(aci, HUB_FINALIZER_ACI);
        if (r >= 0)
                r = owner_ref(aci, o->base.object);
        if (r < 0)
                return r;
        if (!changed &&
            hub_json_equal(json_get_path(aci, "metadata.ownerReferences"),
                           json_get_path(o->aci, "metadata.ownerReferences")) &&
            hub_object_has_finalizer(o->aci, HUB_FINALIZER_ACI))
                return 0;
        r = hub_plan_patch_object(plan, HUB_KIND_CLUSTERDEPLOYMENT, o->base.object, cd, true, false);
        if (r >= 0)
                r = hub_plan_patch_object_locked(plan, HUB_KIND_AGENTCLUSTERINSTALL, o->aci, aci, false);
        return r < 0 ? r : 1;
}

/* holdInstallation, or hive's reconcile-pause annotation */
static bool is_held(const ClusterObserved *o)
{
        bool hold = false, pause = false;

        (void)json_get_bool(json_get(o->aci, "spec"), "holdInstallation", &hold);
        (void)parse_bool_go(strempty(hub_object_annotation(o->base.object, HUB_ANNOTATION_RECONCILE_PAUSE)),
                            &pause);
        return hold || pause;
}

/* The inputs (notes §1.2 steps 5-7), each checked before anything is
 * sent: 1 when complete, 0 when one is missing (the sync error is set). */
static int inputs(Flow *f)
{
        const ClusterObserved *o = f->o;
        const char *secret = json_get_string(json_get_path(f->cd, "spec.pullSecretRef"), "name"),
                   *imageset = json_get_string(json_get_path(f->aci, "spec.imageSetRef"), "name"), *release;
        json_object *ca = json_get_path(f->aci, "spec.ignitionEndpoint.caCertificateReference");
        bool installed = is_installed(o), user = true;
        _cleanup_free_ char *err = NULL, *why = NULL;
        int r;

        if (isempty(secret)) {
                if (!installed)
                        return sync_errorf(f, true, "PullSecret is required for ClusterDeployment %s/%s",
                                           o->base.name, o->base.ns);
        } else {
                r = hub_pull_secret(&o->secret, secret, &f->pull_secret, &err, &user);
                if (r < 0)
                        return r;
                if (err)
                        return sync_errorf(f, user, "%s", err);
                if (first_round(f)) {
                        r = hub_plan_label_watched(f->plan, HUB_KIND_SECRET, o->secret.object);
                        if (r < 0)
                                return r;
                }
                r = hub_digest(f->pull_secret, f->digest);
                if (r < 0)
                        return r;
                f->in.pull_secret = f->pull_secret;
                f->in.pull_secret_digest = f->digest;
        }
        if (isempty(imageset)) {
                if (!installed)
                        return sync_errorf(
                                f, true,
                                "ClusterImageSet must be specified in AgentClusterInstall.Spec.ImageSetRef "
                                "for cluster that is not installed");
        } else {
                if (!o->image_set.object) {
                        if (o->image_set.error == -ENOENT)
                                return sync_errorf(
                                        f, false,
                                        "ClusterImageSet %s not found. Please ensure the ClusterImageSet "
                                        "exists",
                                        imageset);
                        return sync_errorf(f, false, "failed to get cluster image set %s: %s", imageset,
                                           strna(o->image_set.message));
                }
                release = json_get_string(json_get(o->image_set.object, "spec"), "releaseImage");
                r = cd_release_asked(o->image_set.object, o->control_plane.object, &f->version, &f->arch,
                                     &why);
                /* an installed cluster is imported with its version if any */
                if (r == -EINVAL && !installed)
                        return sync_errorf(
                                f, true,
                                "failed to get release image '%s'. Please ensure the releaseImage "
                                "field in ClusterImageSet '%s' is valid (error: %s).",
                                strempty(release), imageset, why);
                if (r < 0 && r != -EINVAL)
                        return r;
                f->in.version = f->version;
                f->in.arch = f->arch;
                f->in.release_image = release;
        }
        if (json_get_path(f->aci, "spec.mirrorRegistryRef"))
                return sync_errorf(
                        f, true,
                        "spec.mirrorRegistryRef is not supported by cradle-hub: assisted-service takes "
                        "mirror registries only through its internal API");
        if (ca) {
                _cleanup_free_ char *crt = NULL;

                if (!o->ca_secret.object)
                        return sync_errorf(
                                f, false,
                                "Failed to get and parse ignition ca certificate %s/%s: error getting ca "
                                "certificate secret: %s",
                                o->base.ns, kube_object_name(f->aci), strna(o->ca_secret.message));
                crt = hub_secret_value(o->ca_secret.object, "tls.crt");
                if (!crt)
                        return sync_errorf(
                                f, false,
                                "Failed to get and parse ignition ca certificate %s/%s: CA Secret is "
                                "missing tls.crt key",
                                o->base.ns, kube_object_name(f->aci));
                f->ca = base64_encode(crt, strlen(crt));
                if (!f->ca)
                        return -ENOMEM;
                f->in.ignition_ca = f->ca;
        }
        return 1;
}

/* ---- decide: which service, which release ---- */

/* The API the service has shown, the answers of this reconcile included
 * (hub-service.c learns them too, for the next reconciles). */
static HubServiceApi flow_api(const ClusterObserved *o)
{
        HubServiceApi api = o->api;

        if (o->cluster_read)
                api = hub_service_api_learn(api, &o->cluster);
        api = hub_service_api_learn(api, hub_call_results_find(&o->base.results, TAG_REGISTER));
        return hub_service_api_learn(api, hub_call_results_find(&o->base.results, TAG_UPDATE));
}

static const char *image_set_name(const Flow *f)
{
        return strempty(json_get_string(json_get_path(f->aci, "spec.imageSetRef"), "name"));
}

/* Before a registration: is the ClusterImageSet's release one the service
 * offers (GET /v2/openshift-versions)? A late-2023 service registers an
 * unlisted x.y.z as the default z-stream of its x.y, whatever
 * ocp_release_image says; a current one refuses it. 1 offered
 * (f->in.register_version names it as the service does), 0 when this round
 * ends (the list asked for, or the condition says why not). */
static int release_offered(Flow *f)
{
        const HubCallResult *v = result(f, TAG_VERSIONS);
        _cleanup_free_ char *offered = NULL;
        int r;

        if (!v) {
                r = hub_plan_op(f->plan, TAG_VERSIONS, ASSISTED_OP_LIST_SUPPORTED_OPENSHIFT_VERSIONS,
                                (char *[]){ NULL }, NULL, NULL, true);
                return r < 0 ? r : 0;
        }
        if (v->error < 0) {
                r = sync_errorf(f, false, "cannot list the releases assisted-service offers: %s",
                                strna(v->message));
                return r < 0 ? r : finish(f, NULL);
        }
        r = cd_release_offered(v->body, f->in.version, f->in.arch, &f->register_version, &offered);
        if (r < 0)
                return r;
        if (r == 0) {
                r = sync_errorf(
                        f, true,
                        "ClusterImageSet %s asks for release %s (%s), which assisted-service does not "
                        "offer (it offers %s): cradle-hub does not install another release; add %s to "
                        "the service's release images, or name an offered release in the ClusterImageSet",
                        image_set_name(f), f->in.version, f->in.arch, offered, f->in.version);
                /* the service's releases change without a Kubernetes event */
                f->requeue = HUB_REQUEUE_LONGER_ON_ERROR;
                return r < 0 ? r : finish(f, NULL);
        }
        f->in.register_version = f->register_version;
        return 1;
}

/* A day-1 cluster before its installation carries the release the
 * ClusterImageSet asks for; else the condition says which it has, and
 * nothing more happens to it (no update, no installation). 1 to go on. */
static int release_kept(Flow *f, json_object *cluster)
{
        const char *have = json_get_string(cluster, "openshift_version");
        int r;

        if (!f->in.version || !streq_ptr(json_get_string(cluster, "kind"), "Cluster") ||
            !STR_IN_SET(strempty(json_get_string(cluster, "status")), "insufficient", "ready",
                        "pending-for-input") ||
            cd_release_registered(cluster, f->in.version))
                return 1;
        r = sync_errorf(
                f, true,
                "assisted-service registered cluster %s with release %s, but ClusterImageSet %s asks "
                "for %s: cradle-hub does not install another release; name %s in the ClusterImageSet, "
                "or delete and re-create the ClusterDeployment once the service offers %s",
                strna(json_get_string(cluster, "id")), have, image_set_name(f), f->in.version, have,
                f->in.version);
        return r < 0 ? r : finish(f, cluster);
}

/* The registration body, or the input error that keeps it from being sent
 * (1: *ret set; 0: this round ended). */
static int registration(Flow *f, json_object **ret)
{
        _cleanup_free_ char *perr = NULL;
        int r;

        *ret = NULL;
        if (is_installed(f->o))
                r = cd_import_params(f->cd, f->aci, f->in.version, ret);
        else
                r = cd_create_params(f->cd, f->aci, &f->in, ret, &perr);
        if (r < 0)
                return r;
        if (perr) {
                r = sync_errorf(f, true, "%s", perr);
                return r < 0 ? r : finish(f, NULL);
        }
        return 1;
}

/* The spec makes a registration body the service's API can take, before
 * the service is asked anything (the body is made again once the release
 * is known): 1, else the condition says why not and this round ends (0). */
static int spec_expressible(Flow *f)
{
        _cleanup_(json_object_putp) json_object *params = NULL;

        return registration(f, &params);
}

/* The service's cluster (notes §1.2 step 8): registered (or imported when
 * installed) through the claim protocol. 1 and *ret when there is one to
 * go on with; 0 when this round ends (calls planned, or the reconcile
 * finished). */
static int find_cluster(Flow *f, json_object **ret)
{
        const ClusterObserved *o = f->o;
        const HubCallResult *reg = result(f, TAG_REGISTER), *again = result(f, TAG_REGISTER_AGAIN),
                            *imp = result(f, TAG_IMPORT), *get = result(f, TAG_GET);
        const HubCallResult *made = again ? again : reg ? reg : imp;
        _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};
        _cleanup_(json_object_putp) json_object *params = NULL;
        _cleanup_free_ char *marker = NULL;
        const char *name = json_get_string(json_get(f->cd, "spec"), "clusterName");
        int r;

        *ret = NULL;
        r = hub_claim_decide(&(HubClaimInput){ .object = f->cd,
                                               .id_annotation = HUB_ANNOTATION_CLUSTER_ID,
                                               .name = strempty(name),
                                               .identity = o->identity,
                                               .now = o->base.now,
                                               .active_since = o->base.active_since,
                                               .candidates = o->searched && o->candidates.error >= 0
                                                                     ? o->candidates.body
                                                                     : NULL,
                                               .claimed_ids = o->claimed_ids },
                             &d);
        if (r < 0)
                return r;
        if (d.action == HUB_CLAIM_LINKED && o->cluster_read && o->cluster.status == 404) {
                /* the service lost it (its database was reset): register
                 * again through the marker */
                r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_CLUSTER_ID, NULL);
                if (r < 0)
                        return r;
                hub_claim_decision_done(&d);
                d.action = HUB_CLAIM_MARK;
        }
        if (made) {
                if (made == reg && hub_service_api_refused(f->o->api, reg)) {
                        /* once more, as the service's API wants it (the
                         * marker covers both calls) */
                        r = release_offered(f);
                        if (r > 0)
                                r = registration(f, &params);
                        if (r <= 0)
                                return r;
                        return hub_plan_op(f->plan, TAG_REGISTER_AGAIN, ASSISTED_OP_REGISTER_CLUSTER,
                                           (char *[]){ NULL }, NULL, TAKE_PTR(params), true);
                }
                if (made->error < 0) {
                        /* a refusal (4xx but 409) stored nothing: its marker
                         * goes, or the next reconcile would search for what
                         * was never made and could adopt a cluster of that
                         * name someone else registered. Anything else may
                         * have reached the database: the marker stays, the
                         * next reconcile searches first. */
                        if (hub_call_is_user_error(made) && made->status != 409) {
                                r = hub_claim_refused(f->desired_cd, o->base.now);
                                if (r < 0)
                                        return r;
                        }
                        r = sync_error_call(f, made, NULL);
                        return r < 0 ? r : finish(f, NULL);
                }
                r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_CLUSTER_ID,
                                              json_get_string(made->body, "id"));
                if (r >= 0)
                        r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_REGISTERING, NULL);
                if (r >= 0)
                        r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_REGISTRATION_REFUSED,
                                                      NULL);
                if (r >= 0 && made != imp && f->in.pull_secret_digest)
                        r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_PULL_SECRET_DIGEST,
                                                      f->in.pull_secret_digest);
                if (r < 0)
                        return r;
                r = made != imp ? release_kept(f, made->body) : 1;
                if (r <= 0)
                        return r;
                /* upstream ends the reconcile with the status of the new cluster */
                return finish(f, made->body);
        }
        switch (d.action) {
        case HUB_CLAIM_LINKED:
                if (get) {
                        if (get->error < 0) {
                                r = sync_error_call(f, get, NULL);
                                return r < 0 ? r : finish(f, NULL);
                        }
                        if (!json_object_is_type(get->body, json_type_object)) {
                                r = sync_errorf(f, false, "the service answered no cluster for %s",
                                                strna(d.id));
                                return r < 0 ? r : finish(f, NULL);
                        }
                        *ret = get->body;
                        return 1;
                }
                if (!o->cluster_read) {
                        r = hub_plan_patch_object(f->plan, HUB_KIND_CLUSTERDEPLOYMENT, f->cd, f->desired_cd,
                                                  true, false);
                        if (r < 0)
                                return r;
                        return hub_plan_op(f->plan, TAG_GET, ASSISTED_OP_GET_CLUSTER,
                                           (char *[]){ d.id, NULL }, NULL, NULL, true);
                }
                if (o->cluster.error < 0) {
                        r = sync_error_call(f, &o->cluster, NULL);
                        /* the service down: a backend error whatever it answered */
                        f->sync_user = false;
                        f->requeue = HUB_REQUEUE_ON_ERROR;
                        return r < 0 ? r : finish(f, NULL);
                }
                if (!json_object_is_type(o->cluster.body, json_type_object)) {
                        r = sync_errorf(f, false, "the service answered no cluster for %s", strna(d.id));
                        return r < 0 ? r : finish(f, NULL);
                }
                *ret = o->cluster.body;
                return 1;
        case HUB_CLAIM_ADOPT:
                r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_CLUSTER_ID, d.id);
                if (r >= 0)
                        r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_REGISTERING, NULL);
                if (r >= 0)
                        r = hub_plan_patch_object(f->plan, HUB_KIND_CLUSTERDEPLOYMENT, f->cd, f->desired_cd,
                                                  true, false);
                if (r < 0)
                        return r;
                if (d.duplicates) {
                        _cleanup_free_ char *dups = strv_join(d.duplicates, ", ");

                        (void)hub_plan_event(
                                f->plan, f->cd, "Warning", "DuplicateCluster",
                                "clusters %s also match this ClusterDeployment; cradle-hub adopted %s "
                                "and left the others alone",
                                strna(dups), d.id);
                }
                return hub_plan_op(f->plan, TAG_GET, ASSISTED_OP_GET_CLUSTER, (char *[]){ d.id, NULL }, NULL,
                                   NULL, true);
        case HUB_CLAIM_WAIT:
                hub_plan_requeue_after(f->plan, d.wait);
                return 0;
        case HUB_CLAIM_SEARCH:
                r = sync_errorf(f, false, "cannot look for the cluster of this ClusterDeployment: %s",
                                strna(o->candidates.message));
                return r < 0 ? r : finish(f, NULL);
        case HUB_CLAIM_MARK:
        case HUB_CLAIM_REGISTER:
                if (!is_installed(o)) {
                        r = spec_expressible(f);
                        if (r > 0)
                                r = release_offered(f);
                        if (r <= 0)
                                return r;
                }
                r = registration(f, &params);
                if (r <= 0)
                        return r;
                if (d.action == HUB_CLAIM_MARK) {
                        marker = hub_claim_marker(o->base.now, o->identity);
                        if (!marker ||
                            hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_REGISTERING, marker) < 0)
                                return -ENOMEM;
                }
                /* the marker first, then the call */
                r = hub_plan_patch_object(f->plan, HUB_KIND_CLUSTERDEPLOYMENT, f->cd, f->desired_cd, true,
                                          false);
                if (r < 0)
                        return r;
                if (is_installed(o))
                        return hub_plan_op(f->plan, TAG_IMPORT, ASSISTED_OP_IMPORT_CLUSTER,
                                           (char *[]){ NULL }, NULL, TAKE_PTR(params), true);
                return hub_plan_op(f->plan, TAG_REGISTER, ASSISTED_OP_REGISTER_CLUSTER, (char *[]){ NULL },
                                   NULL, TAKE_PTR(params), true);
        default:
                return -EINVAL;
        }
}

/* ---- decide: an existing cluster ---- */

/* The spec, the install-config overrides and the ignored validations
 * (notes §1.2 step 9), each only when it differs, in one round. 1 to go
 * on, 0 when this round ends. */
static int sync_spec(Flow *f, json_object **cluster)
{
        const ClusterObserved *o = f->o;
        const HubCallResult *first = result(f, TAG_UPDATE), *again = result(f, TAG_UPDATE_AGAIN),
                            *upd = again ? again : first, *icr = result(f, TAG_INSTALL_CONFIG),
                            *ign = result(f, TAG_IGNORED), *have_ign = result(f, TAG_GET_IGNORED);
        _cleanup_(json_object_putp) json_object *params = NULL, *ignored = NULL, *body = NULL;
        _cleanup_free_ char *api_error = NULL;
        const char *id = json_get_string(*cluster, "id"), *have_digest;
        const char *want_ic =
                strempty(hub_object_annotation(f->aci, HUB_ANNOTATION_INSTALL_CONFIG_OVERRIDES));
        bool planned = false, secret_changed;
        int r;

        /* what this service's API cannot do to a day-1 cluster before its
         * installation: said, and nothing sent */
        if (streq_ptr(json_get_string(*cluster, "kind"), "Cluster") &&
            STR_IN_SET(strempty(json_get_string(*cluster, "status")), "insufficient", "ready",
                       "pending-for-input")) {
                r = cd_api_error(f->aci, *cluster, f->in.api, &api_error);
                if (r < 0)
                        return r;
                if (api_error) {
                        r = sync_errorf(f, true, "%s", api_error);
                        return r < 0 ? r : finish(f, *cluster);
                }
        }
        /* the service takes no change outside these (VerifyClusterUpdatability:
         * a 409 over REST, where upstream's internal call skips the check);
         * what differs waits, as it would be meaningless once installing */
        if (!STR_IN_SET(strempty(json_get_string(*cluster, "status")), "insufficient", "ready",
                        "pending-for-input", "adding-hosts"))
                return 1;
        /* refused for a field its API lacks: once more, shaped for it */
        if (upd == first && hub_service_api_refused(f->o->api, first))
                upd = NULL;
        if (upd) {
                if (upd->error < 0) {
                        r = sync_error_call(f, upd, NULL);
                        return r < 0 ? r : finish(f, *cluster);
                }
                if (json_object_is_type(upd->body, json_type_object))
                        *cluster = upd->body;
                if (f->in.pull_secret_digest) {
                        r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_PULL_SECRET_DIGEST,
                                                      f->in.pull_secret_digest);
                        if (r < 0)
                                return r;
                }
        } else {
                have_digest = hub_object_annotation(f->cd, HUB_ANNOTATION_PULL_SECRET_DIGEST);
                secret_changed =
                        f->in.pull_secret_digest && !streq_ptr(have_digest, f->in.pull_secret_digest);
                r = cd_update_params(f->cd, f->aci, *cluster, hosts_of(f), &f->in, secret_changed, &params);
                if (r < 0)
                        return r;
                if (params) {
                        r = hub_plan_op(f->plan, first ? TAG_UPDATE_AGAIN : TAG_UPDATE,
                                        ASSISTED_OP_UPDATE_CLUSTER, (char *[]){ (char *)id, NULL }, NULL,
                                        TAKE_PTR(params), true);
                        if (r < 0)
                                return r;
                        planned = true;
                }
        }
        if (icr) {
                if (icr->error < 0) {
                        r = hub_call_is_user_error(icr)
                                    ? sync_errorf(f, true, "Failed to parse '%s' annotation: %s",
                                                  HUB_ANNOTATION_INSTALL_CONFIG_OVERRIDES,
                                                  strna(icr->message))
                                    : sync_error_call(f, icr, NULL);
                        return r < 0 ? r : finish(f, *cluster);
                }
        } else if (!streq(want_ic, strempty(json_get_string(*cluster, "install_config_overrides")))) {
                /* the body is the overrides as a JSON string */
                body = json_new_string(want_ic);
                if (!body)
                        return -ENOMEM;
                r = hub_plan_op(f->plan, TAG_INSTALL_CONFIG, ASSISTED_OP_UPDATE_CLUSTER_INSTALL_CONFIG,
                                (char *[]){ (char *)id, NULL }, NULL, TAKE_PTR(body), true);
                if (r < 0)
                        return r;
                planned = true;
        }
        if (ign) {
                if (ign->error < 0) {
                        r = sync_error_call(f, ign, NULL);
                        return r < 0 ? r : finish(f, *cluster);
                }
        } else if (cd_ignores_validations(f->aci)) {
                /* what the service ignores now: the cluster's own fields
                 * where it shows them (the late-2023 one never does) */
                const char *have_c = json_get_string(*cluster, "ignored_cluster_validations"),
                           *have_h = json_get_string(*cluster, "ignored_host_validations");

                if (!json_get(*cluster, "ignored_cluster_validations") &&
                    !json_get(*cluster, "ignored_host_validations")) {
                        if (!have_ign) {
                                r = hub_plan_op(f->plan, TAG_GET_IGNORED,
                                                ASSISTED_OP_GET_IGNORED_VALIDATIONS,
                                                (char *[]){ (char *)id, NULL }, NULL, NULL, true);
                                return r < 0 ? r : 0;
                        }
                        if (have_ign->error < 0) {
                                r = sync_error_call(f, have_ign, NULL);
                                return r < 0 ? r : finish(f, *cluster);
                        }
                        have_c = json_get_string(have_ign->body, "cluster-validation-ids");
                        have_h = json_get_string(have_ign->body, "host-validation-ids");
                }
                r = cd_ignored_validations(f->aci, have_c, have_h, &ignored);
                if (r < 0)
                        return r;
                if (ignored) {
                        r = hub_plan_op(f->plan, TAG_IGNORED, ASSISTED_OP_SET_IGNORED_VALIDATIONS,
                                        (char *[]){ (char *)id, NULL }, NULL, TAKE_PTR(ignored), true);
                        if (r < 0)
                                return r;
                        planned = true;
                }
        }
        (void)o;
        return planned ? 0 : 1;
}

typedef struct Manifest {
        const char *name;
        const char *content;
} Manifest;

static int manifest_compare(const void *a, const void *b)
{
        return strcmp(((const Manifest *)a)->name, ((const Manifest *)b)->name);
}

/* Custom manifests from the ConfigMaps (notes §1.4), while the cluster is
 * not installing. Only a change is sent: the digest of what was synced
 * last is an annotation of the ClusterDeployment. 1 to go on, 0 when this
 * round ends. */
static int sync_manifests(Flow *f, json_object *cluster)
{
        const ClusterObserved *o = f->o;
        const char *id = json_get_string(cluster, "id");
        json_object *listed = o->manifests.body;
        _cleanup_free_ Manifest *want = NULL;
        _cleanup_strv_free_ char **cms = NULL;
        _cleanup_free_ char *joined = NULL;
        size_t n = 0;
        char dg[80] = "";
        bool differs = false, planned = false, failed = false;
        int r;

        if (!o->manifests_read)
                return 1;
        if (o->manifests.error < 0) {
                r = sync_error_call(f, &o->manifests, NULL);
                f->requeue = HUB_REQUEUE_LONGER_ON_ERROR;
                return r < 0 ? r : finish(f, cluster);
        }
        for (size_t i = 0; i < o->n_config_maps; i++) {
                json_object *data = json_get(o->config_maps[i].object, "data");

                if (!o->config_maps[i].object) {
                        r = sync_errorf(f, false, "%s", strna(o->config_maps[i].message));
                        f->requeue = HUB_REQUEUE_LONGER_ON_ERROR;
                        return r < 0 ? r : finish(f, cluster);
                }
                if (first_round(f)) {
                        r = hub_plan_label_watched(f->plan, HUB_KIND_CONFIGMAP, o->config_maps[i].object);
                        if (r < 0)
                                return r;
                }
                if (!json_object_is_type(data, json_type_object))
                        continue;
                json_object_object_foreach (data, k, v) {
                        Manifest *nw;

                        for (size_t j = 0; j < n; j++)
                                if (streq(want[j].name, k)) {
                                        r = sync_errorf(f, false,
                                                        "Conflict in manifest names ('%s' is not unique)",
                                                        k);
                                        f->requeue = HUB_REQUEUE_LONGER_ON_ERROR;
                                        return r < 0 ? r : finish(f, cluster);
                                }
                        nw = reallocarray(want, n + 1, sizeof(Manifest));
                        if (!nw)
                                return -ENOMEM;
                        want = nw;
                        want[n++] = (Manifest){ .name = k, .content = strempty(json_object_get_string(v)) };
                }
        }
        qsort(want, n, sizeof(Manifest), manifest_compare);
        {
                _cleanup_strv_free_ char **parts = NULL;

                for (size_t i = 0; i < n; i++)
                        if (strv_extend_pair(&parts, want[i].name, want[i].content) < 0)
                                return -ENOMEM;
                joined = strv_join(parts, "\n\x1e\n");
                if (!joined)
                        return -ENOMEM;
        }
        if (n > 0) {
                r = hub_digest(joined, dg);
                if (r < 0)
                        return r;
        }
        differs = !streq(dg, strempty(hub_object_annotation(f->cd, HUB_ANNOTATION_MANIFESTS_DIGEST)));
        /* the service's list against the wanted names */
        for (size_t i = 0;
             json_object_is_type(listed, json_type_array) && i < json_object_array_length(listed); i++) {
                const char *name = json_get_string(json_object_array_get_idx(listed, i), "file_name");
                bool wanted = false;

                for (size_t j = 0; j < n && !wanted; j++)
                        wanted = streq_ptr(name, want[j].name);
                if (!wanted)
                        differs = true;
        }
        if ((json_object_is_type(listed, json_type_array) ? json_object_array_length(listed) : 0) != n)
                differs = true;
        if (!differs)
                return 1;

        for (size_t i = 0;
             json_object_is_type(listed, json_type_array) && i < json_object_array_length(listed); i++) {
                json_object *m = json_object_array_get_idx(listed, i);
                const char *name = json_get_string(m, "file_name");
                _cleanup_free_ char *tag = NULL, *q = NULL, *en = NULL, *ef = NULL;
                bool wanted = false;

                for (size_t j = 0; j < n && !wanted; j++)
                        wanted = streq_ptr(name, want[j].name);
                if (wanted || isempty(name))
                        continue;
                tag = strdup_printf("%s%s", TAG_DELETE_MANIFEST, name);
                en = http_escape(name);
                ef = http_escape(!isempty(json_get_string(m, "folder")) ? json_get_string(m, "folder")
                                                                        : MANIFESTS_FOLDER);
                q = en && ef ? strdup_printf("folder=%s&file_name=%s", ef, en) : NULL;
                if (!tag || !q)
                        return -ENOMEM;
                /* deletions are best effort, as upstream's */
                if (result(f, tag))
                        continue;
                r = hub_plan_op(f->plan, tag, ASSISTED_OP_DELETE_CLUSTER_MANIFEST,
                                (char *[]){ (char *)id, NULL }, q, NULL, true);
                if (r < 0)
                        return r;
                planned = true;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *tag = strdup_printf("%s%s", TAG_CREATE_MANIFEST, want[i].name),
                                    *content = base64_encode(want[i].content, strlen(want[i].content));
                _cleanup_(json_object_putp) json_object *body = json_new_object();
                const HubCallResult *cr;

                if (!tag || !content || !body)
                        return -ENOMEM;
                cr = result(f, tag);
                if (cr) {
                        if (cr->error < 0 && !failed) {
                                r = sync_error_call(f, cr, NULL);
                                if (r < 0)
                                        return r;
                                failed = true;
                        }
                        continue;
                }
                if (json_add_string(body, "folder", MANIFESTS_FOLDER) < 0 ||
                    json_add_string(body, "file_name", want[i].name) < 0 ||
                    json_add_string(body, "content", content) < 0)
                        return -ENOMEM;
                r = hub_plan_op(f->plan, tag, ASSISTED_OP_CREATE_CLUSTER_MANIFEST,
                                (char *[]){ (char *)id, NULL }, NULL, TAKE_PTR(body), true);
                if (r < 0)
                        return r;
                planned = true;
        }
        if (planned)
                return 0;
        if (failed) {
                /* a chance to fix the manifest: again in a minute */
                f->requeue = HUB_REQUEUE_LONGER_ON_ERROR;
                return finish(f, cluster);
        }
        r = hub_object_set_annotation(f->desired_cd, HUB_ANNOTATION_MANIFESTS_DIGEST, n > 0 ? dg : NULL);
        return r < 0 ? r : 1;
}

/* a credentials Secret (createClusterCredentialSecret): the
 * ClusterDeployment's labels and owner, and the watch labels */
static json_object *credentials_secret(json_object *cd, const char *name, const char *type,
                                       const char *const *kv)
{
        _cleanup_(json_object_putp) json_object *s = json_new_object();
        json_object *md, *refs, *ref;

        if (!s)
                return NULL;
        md = hub_json_ensure_object(s, "metadata");
        refs = json_new_array();
        ref = json_new_object();
        if (!md || !refs || json_add(md, "ownerReferences", refs) < 0 || !ref ||
            json_append(refs, ref) < 0 || json_add_string(s, "apiVersion", "v1") < 0 ||
            json_add_string(s, "kind", "Secret") < 0 || json_add_string(s, "type", "Opaque") < 0 ||
            json_add_string(md, "name", name) < 0 ||
            json_add_string(md, "namespace", kube_object_namespace(cd)) < 0 ||
            hub_object_set_label(s, HUB_LABEL_CD_NAME, kube_object_name(cd)) < 0 ||
            hub_object_set_label(s, HUB_LABEL_SECRET_TYPE, type) < 0 ||
            hub_object_set_label(s, HUB_LABEL_WATCH, "true") < 0 ||
            hub_object_set_label(s, HUB_LABEL_BACKUP, "true") < 0 ||
            json_add_string(ref, "apiVersion", CD_API_VERSION) < 0 ||
            json_add_string(ref, "kind", "ClusterDeployment") < 0 ||
            json_add_string(ref, "name", kube_object_name(cd)) < 0 ||
            json_add_string(ref, "uid", strempty(hub_object_uid(cd))) < 0 ||
            json_add_bool(ref, "blockOwnerDeletion", true) < 0)
                return NULL;
        if (hub_secret_set_data(s, kv) < 0)
                return NULL;
        return TAKE_PTR(s);
}

static int set_metadata(Flow *f, json_object *cluster, const char *kubeconfig, const char *password)
{
        json_object *spec = hub_json_ensure_object(f->desired_aci, "spec"), *md;

        if (!spec)
                return -ENOMEM;
        json_object_object_del(spec, "clusterMetadata");
        md = hub_json_ensure_object(spec, "clusterMetadata");
        if (!md ||
            json_add_string(md, "clusterID", strempty(json_get_string(cluster, "openshift_cluster_id"))) <
                    0 ||
            json_add_string(md, "infraID", strempty(json_get_string(cluster, "id"))) < 0 ||
            json_add(md, "adminKubeconfigSecretRef", json_new_object()) < 0 ||
            json_add_string(json_get(md, "adminKubeconfigSecretRef"), "name", kubeconfig) < 0)
                return -ENOMEM;
        if (password && (json_add(md, "adminPasswordSecretRef", json_new_object()) < 0 ||
                         json_add_string(json_get(md, "adminPasswordSecretRef"), "name", password) < 0))
                return -ENOMEM;
        return 0;
}

int cd_plan_credentials_download(HubPlan *plan, const char *tag, const char *cluster_id, const char *file)
{
        _cleanup_free_ char *path = NULL, *q = strdup_printf("file_name=%s", file);
        int r;

        if (!q)
                return -ENOMEM;
        r = assisted_op_path(ASSISTED_OP_DOWNLOAD_CLUSTER_CREDENTIALS,
                             (char *[]){ (char *)cluster_id, NULL }, q, &path);
        if (r < 0)
                return r;
        return hub_plan_download(plan, tag, path);
}

static int plan_download(Flow *f, const char *tag, const char *id, const char *file)
{
        return cd_plan_credentials_download(f->plan, tag, id, file);
}

/* A day-1 cluster installed (handleClusterInstalled, notes §1.6): the
 * password Secret when absent, the kubeconfig Secret with the full
 * kubeconfig, spec.clusterMetadata. 1 to go on, 0 when this round ends. */
static int credentials(Flow *f, json_object *cluster)
{
        const ClusterObserved *o = f->o;
        const HubCallResult *cr = result(f, TAG_CREDENTIALS), *kr = result(f, TAG_KUBECONFIG);
        const char *id = json_get_string(cluster, "id");
        _cleanup_free_ char *kc = kubeconfig_secret_name(f->cd), *pw = password_secret_name(f->cd);
        bool need_password = !o->password_secret.object, planned = false;
        const char *kubeconfig;
        int r;

        if (!kc || !pw)
                return -ENOMEM;
        if ((!o->password_secret.object && o->password_secret.error != -ENOENT) ||
            (!o->kubeconfig_secret.object && o->kubeconfig_secret.error != -ENOENT)) {
                r = sync_errorf(f, false, "cannot read the credentials Secrets: %s",
                                strna(o->password_secret.message ?: o->kubeconfig_secret.message));
                return r < 0 ? r : finish(f, cluster);
        }
        if (need_password && !cr) {
                r = hub_plan_op(f->plan, TAG_CREDENTIALS, ASSISTED_OP_GET_CREDENTIALS,
                                (char *[]){ (char *)id, NULL }, NULL, NULL, true);
                if (r < 0)
                        return r;
                planned = true;
        }
        if (!kr) {
                r = plan_download(f, TAG_KUBECONFIG, id, "kubeconfig");
                if (r < 0)
                        return r;
                planned = true;
        }
        if (planned)
                return 0;
        if ((cr && cr->error < 0) || kr->error < 0) {
                r = sync_error_call(f, cr && cr->error < 0 ? cr : kr, NULL);
                return r < 0 ? r : finish(f, cluster);
        }
        kubeconfig = json_object_get_string(kr->body);
        (void)redact_register_secret(kubeconfig);
        if (need_password) {
                const char *user = json_get_string(cr->body, "username"),
                           *pass = json_get_string(cr->body, "password");
                json_object *s;

                (void)redact_register_secret(pass);
                s = credentials_secret(f->cd, pw, HUB_SECRET_TYPE_KUBEADMINCREDS,
                                       (const char *const[]){ "username", strempty(user), "password",
                                                              strempty(pass), NULL });
                if (!s)
                        return -ENOMEM;
                r = hub_plan_create(f->plan, HUB_KIND_SECRET, o->base.ns, s);
                if (r < 0)
                        return r;
        }
        if (!o->kubeconfig_secret.object) {
                json_object *s = credentials_secret(
                        f->cd, kc, HUB_SECRET_TYPE_KUBECONFIG,
                        (const char *const[]){ "kubeconfig", strempty(kubeconfig), NULL });

                if (!s)
                        return -ENOMEM;
                r = hub_plan_create(f->plan, HUB_KIND_SECRET, o->base.ns, s);
        } else {
                _cleanup_(json_object_putp) json_object *desired =
                        hub_json_copy(o->kubeconfig_secret.object);

                if (!desired ||
                    hub_secret_set_data(
                            desired, (const char *const[]){ "kubeconfig", strempty(kubeconfig), NULL }) < 0)
                        return -ENOMEM;
                r = hub_plan_patch_object(f->plan, HUB_KIND_SECRET, o->kubeconfig_secret.object, desired,
                                          false, false);
        }
        if (r < 0)
                return r;
        r = set_metadata(f, cluster, kc, pw);
        return r < 0 ? r : 1;
}

/* Installing or finalizing without clusterMetadata: the kubeconfig
 * without ingress (createNoIngressKubeConfig). 1 to go on, 0 when this
 * round ends. */
static int noingress_kubeconfig(Flow *f, json_object *cluster)
{
        const ClusterObserved *o = f->o;
        const HubCallResult *kr = result(f, TAG_KUBECONFIG_NOINGRESS);
        _cleanup_free_ char *kc = kubeconfig_secret_name(f->cd);
        int r;

        if (!kc)
                return -ENOMEM;
        if (json_get_path(f->aci, "spec.clusterMetadata"))
                return 1;
        if (!o->kubeconfig_secret.object && o->kubeconfig_secret.error != -ENOENT) {
                r = sync_errorf(f, false, "cannot read Secret %s: %s", kc,
                                strna(o->kubeconfig_secret.message));
                return r < 0 ? r : finish(f, cluster);
        }
        if (!o->kubeconfig_secret.object) {
                json_object *s;

                if (!kr)
                        return plan_download(f, TAG_KUBECONFIG_NOINGRESS, json_get_string(cluster, "id"),
                                             "kubeconfig-noingress");
                if (kr->error < 0) {
                        r = sync_error_call(f, kr, NULL);
                        return r < 0 ? r : finish(f, cluster);
                }
                (void)redact_register_secret(json_object_get_string(kr->body));
                s = credentials_secret(f->cd, kc, HUB_SECRET_TYPE_KUBECONFIG,
                                       (const char *const[]){ "kubeconfig",
                                                              strempty(json_object_get_string(kr->body)),
                                                              NULL });
                if (!s)
                        return -ENOMEM;
                r = hub_plan_create(f->plan, HUB_KIND_SECRET, o->base.ns, s);
                if (r < 0)
                        return r;
        }
        r = set_metadata(f, cluster, kc, NULL);
        return r < 0 ? r : 1;
}

static json_object *agent_of(const ClusterObserved *o, const char *host_id)
{
        for (size_t i = 0; host_id && i < o->n_agents; i++)
                if (streq_ptr(kube_object_name(o->agents[i]), host_id))
                        return o->agents[i];
        return NULL;
}

static bool approved(json_object *agent)
{
        bool a = false;

        return agent && json_get_bool(json_get(agent, "spec"), "approved", &a) >= 0 && a;
}

/* a day-2 cluster: every known host with an approved Agent is installed
 * (installDay2Hosts). 1 to go on, 0 when this round ends. */
static int install_day2_hosts(Flow *f, json_object *cluster)
{
        json_object *hosts = hosts_of(f);
        bool planned = false;
        int r;

        for (size_t i = 0;
             json_object_is_type(hosts, json_type_array) && i < json_object_array_length(hosts); i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                const char *hid = json_get_string(h, "id"), *ie = json_get_string(h, "infra_env_id");
                _cleanup_free_ char *tag = NULL;
                const HubCallResult *hr;

                if (!streq_ptr(json_get_string(h, "status"), "known") || !approved(agent_of(f->o, hid)) ||
                    !ie)
                        continue;
                tag = strdup_printf("%s%s", TAG_INSTALL_HOST, hid);
                if (!tag)
                        return -ENOMEM;
                hr = result(f, tag);
                if (hr) {
                        if (hr->error < 0 && !f->sync_error) {
                                r = sync_error_call(f, hr, NULL);
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                r = hub_plan_op(f->plan, tag, ASSISTED_OP_INSTALL_HOST,
                                (char *[]){ (char *)ie, (char *)hid, NULL }, NULL, NULL, true);
                if (r < 0)
                        return r;
                planned = true;
        }
        (void)cluster;
        return planned ? 0 : 1;
}

static int existing_cluster(Flow *f, json_object *cluster)
{
        const char *status, *kind, *id = json_get_string(cluster, "id");
        const HubCallResult *tr = result(f, TAG_TRANSFORM), *ir = result(f, TAG_INSTALL);
        int r;

        r = release_kept(f, cluster);
        if (r <= 0)
                return r;
        r = sync_spec(f, &cluster);
        if (r <= 0)
                return r;
        kind = json_get_string(cluster, "kind");
        if (streq_ptr(kind, "Cluster")) {
                r = sync_manifests(f, cluster);
                if (r <= 0)
                        return r;
        }
        status = strempty(json_get_string(cluster, "status"));
        if (streq(status, "installed") && streq_ptr(kind, "Cluster")) {
                if (!is_installed(f->o)) {
                        r = credentials(f, cluster);
                        return r <= 0 ? r : finish(f, cluster);
                }
                /* installed: from now on a day-2 cluster */
                if (!tr)
                        return hub_plan_op(f->plan, TAG_TRANSFORM, ASSISTED_OP_TRANSFORM_CLUSTER_TO_DAY2,
                                           (char *[]){ (char *)id, NULL }, NULL, NULL, true);
                if (tr->error < 0) {
                        r = sync_error_call(f, tr, NULL);
                        return r < 0 ? r : finish(f, cluster);
                }
                return finish(f, json_object_is_type(tr->body, json_type_object) ? tr->body : cluster);
        }
        if (STR_IN_SET(status, "installing", "finalizing")) {
                r = noingress_kubeconfig(f, cluster);
                if (r <= 0)
                        return r;
        }
        if (streq_ptr(kind, "Cluster") && !f->hold) {
                ClusterCounts counts;

                if (ir) {
                        if (ir->error < 0) {
                                r = sync_error_call(f, ir, NULL);
                                return r < 0 ? r : finish(f, cluster);
                        }
                        return finish(f,
                                      json_object_is_type(ir->body, json_type_object) ? ir->body : cluster);
                }
                cd_counts(f->aci, hosts_of(f), f->o->agents, f->o->n_agents, &counts);
                if (cd_ready_for_installation(cluster, &counts, f->hold)) {
                        r = hub_plan_patch_object(f->plan, HUB_KIND_CLUSTERDEPLOYMENT, f->cd, f->desired_cd,
                                                  true, false);
                        if (r < 0)
                                return r;
                        return hub_plan_op(f->plan, TAG_INSTALL, ASSISTED_OP_INSTALL_CLUSTER,
                                           (char *[]){ (char *)id, NULL }, NULL, NULL, true);
                }
        } else if (streq_ptr(kind, "AddHostsCluster")) {
                r = install_day2_hosts(f, cluster);
                if (r <= 0)
                        return r;
        }
        return finish(f, cluster);
}

int cd_decide(const HubObserved *base, HubPlan *plan)
{
        const ClusterObserved *o = (const ClusterObserved *)base;
        json_object *cd = base->object, *cluster = NULL;
        _cleanup_(flow_done) Flow f = {};
        int r;

        if (!cd || isempty(aci_name(cd)))
                return 0;
        if (!o->aci)
                /* no ACI: nothing to do, unless the ClusterDeployment goes */
                return hub_object_deleting(cd) ? decide_cd_deletion(o, plan) : 0;
        if (hub_object_deleting(o->aci))
                return decide_aci_deletion(o, plan);
        if (hub_object_deleting(cd))
                return decide_cd_deletion(o, plan);
        r = ensure_finalizers(o, plan);
        if (r != 0)
                return r < 0 ? r : 0;

        f = (Flow){
                .o = o, .plan = plan, .cd = cd, .aci = o->aci, .hold = is_held(o), .in.api = flow_api(o)
        };
        f.desired_cd = hub_json_copy(cd);
        f.desired_aci = hub_json_copy(o->aci);
        if (!f.desired_cd || !f.desired_aci)
                return -ENOMEM;
        r = inputs(&f);
        if (r < 0)
                return r;
        if (r == 0)
                return finish(&f, o->cluster_read && o->cluster.error >= 0 ? o->cluster.body : NULL);
        r = find_cluster(&f, &cluster);
        if (r <= 0)
                return r;
        return existing_cluster(&f, cluster);
}

/* ---- watches ---- */

static int push_key(char ***keys, const char *ns, const char *name)
{
        if (isempty(name))
                return 0;
        return strv_extendf(keys, "%s/%s", strempty(ns), name);
}

/* an ACI → its ClusterDeployment: the one it names, and the ones naming it */
static int map_aci(HubContext *ctx, json_object *aci, char ***ret)
{
        _cleanup_strv_free_ char **keys = NULL, **more = NULL;
        _cleanup_free_ char *v = strdup_printf("%s/%s", strempty(kube_object_namespace(aci)),
                                               strempty(kube_object_name(aci)));
        int r;

        if (!v)
                return -ENOMEM;
        r = push_key(&keys, kube_object_namespace(aci),
                     json_get_string(json_get_path(aci, "spec.clusterDeploymentRef"), "name"));
        if (r >= 0)
                r = hub_cache_index_keys(ctx->cache, HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_ACI, v, &more);
        if (r < 0)
                return r;
        STRV_FOREACH (k, more)
                if (!strv_contains(keys, *k) && strv_extend(&keys, *k) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(keys);
        return 0;
}

static int map_secret(HubContext *ctx, json_object *obj, char ***ret)
{
        return hub_cache_keys_referring(ctx->cache, HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_PULLSECRET, obj,
                                        ret);
}

/* an Agent → the ClusterDeployment it is bound to (approval, SpecSynced,
 * binding: the intended watch of upstream's predicate) */
static int map_agent(HubContext *ctx, json_object *agent, char ***ret)
{
        json_object *ref = json_get_path(agent, "spec.clusterDeploymentName");
        const char *ns = json_get_string(ref, "namespace");

        (void)ctx;
        *ret = NULL;
        return push_key(ret, isempty(ns) ? kube_object_namespace(agent) : ns, json_get_string(ref, "name"));
}

/* the ACIs under an index value → their ClusterDeployments */
static int acis_to_cds(HubContext *ctx, const char *index, const char *value, char ***ret)
{
        _cleanup_strv_free_ char **acis = NULL, **keys = NULL;
        int r;

        r = hub_cache_index_keys(ctx->cache, HUB_KIND_AGENTCLUSTERINSTALL, index, value, &acis);
        if (r < 0)
                return r;
        STRV_FOREACH (k, acis) {
                _cleanup_(json_object_putp) json_object *aci = NULL;
                _cleanup_strv_free_ char **cds = NULL;

                if (hub_cache_get_key(ctx->cache, HUB_KIND_AGENTCLUSTERINSTALL, *k, &aci) < 0)
                        continue;
                r = map_aci(ctx, aci, &cds);
                if (r < 0)
                        return r;
                STRV_FOREACH (c, cds)
                        if (!strv_contains(keys, *c) && strv_extend(&keys, *c) < 0)
                                return -ENOMEM;
        }
        *ret = TAKE_PTR(keys);
        return 0;
}

static int map_config_map(HubContext *ctx, json_object *cm, char ***ret)
{
        _cleanup_free_ char *v =
                strdup_printf("%s/%s", strempty(kube_object_namespace(cm)), strempty(kube_object_name(cm)));

        return v ? acis_to_cds(ctx, HUB_INDEX_ACI_MANIFESTS, v, ret) : -ENOMEM;
}

/* a ClusterImageSet created or changed after the ACI naming it */
static int map_image_set(HubContext *ctx, json_object *cis, char ***ret)
{
        return acis_to_cds(ctx, HUB_INDEX_ACI_IMAGESET, strempty(kube_object_name(cis)), ret);
}

static int cd_setup(HubController *c)
{
        HubContext *ctx = hub_controller_context(c);
        int r;

        r = hub_controller_watch(c, HUB_KIND_CLUSTERDEPLOYMENT, NULL);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_AGENTCLUSTERINSTALL, map_aci);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_SECRET, map_secret);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_AGENT, map_agent);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_CONFIGMAP, map_config_map);
        if (r >= 0 && hub_cache_has_kind(ctx->cache, HUB_KIND_CLUSTERIMAGESET))
                r = hub_controller_watch(c, HUB_KIND_CLUSTERIMAGESET, map_image_set);
        return r;
}

const HubControllerType hub_cd_controller = {
        .name = "clusterdeployment",
        .kind = HUB_KIND_CLUSTERDEPLOYMENT,
        .observed_size = sizeof(ClusterObserved),
        .setup = cd_setup,
        .observe = cd_observe,
        .observed_done = cd_observed_done,
        .decide = cd_decide,
};

/* ---- the AgentClusterInstall controller ---- */

static void aci_observed_done(HubObserved *base)
{
        AciObserved *o = (AciObserved *)base;

        json_object_put(o->cd);
}

static int aci_observe(HubContext *ctx, HubObserved *base)
{
        AciObserved *o = (AciObserved *)base;
        const char *cd;
        int r;

        r = hub_cache_get(ctx->cache, HUB_KIND_AGENTCLUSTERINSTALL, base->ns, base->name, &base->object);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        cd = json_get_string(json_get_path(base->object, "spec.clusterDeploymentRef"), "name");
        r = hub_cache_get(ctx->cache, HUB_KIND_CLUSTERDEPLOYMENT, base->ns, cd, &o->cd);
        o->cd_error = r < 0 ? r : 0;
        return r == -ENOENT || r >= 0 ? 0 : r;
}

int aci_decide(const HubObserved *base, HubPlan *plan)
{
        const AciObserved *o = (const AciObserved *)base;
        json_object *aci = base->object;
        _cleanup_(json_object_putp) json_object *desired = NULL;
        _cleanup_free_ char *msg = NULL;
        const char *cd = json_get_string(json_get_path(aci, "spec.clusterDeploymentRef"), "name");
        int r;

        /* the ClusterDeployment controller owns the ACI once its
         * ClusterDeployment exists */
        if (!aci || hub_object_deleting(aci) || o->cd)
                return 0;
        if (o->cd_error != -ENOENT) {
                hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
                return 0;
        }
        desired = hub_json_copy(aci);
        msg = strdup_printf(
                "ClusterDeployment with name '%s' in namespace '%s' not found. Ensure that the CRD is "
                "already applied.",
                strempty(cd), base->ns);
        if (!desired || !msg)
                return -ENOMEM;
        r = cd_aci_status(desired, NULL, &(ClusterCounts){}, msg, true, false, NULL, base->now);
        if (r < 0)
                return r;
        return plan_aci(plan, aci, desired);
}

static int map_cd_to_acis(HubContext *ctx, json_object *cd, char ***ret)
{
        return hub_cache_keys_referring(ctx->cache, HUB_KIND_AGENTCLUSTERINSTALL, HUB_INDEX_ACI_CD, cd, ret);
}

static int aci_setup(HubController *c)
{
        int r = hub_controller_watch(c, HUB_KIND_AGENTCLUSTERINSTALL, NULL);

        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_CLUSTERDEPLOYMENT, map_cd_to_acis);
        return r;
}

const HubControllerType hub_aci_controller = {
        .name = "agentclusterinstall",
        .kind = HUB_KIND_AGENTCLUSTERINSTALL,
        .observed_size = sizeof(AciObserved),
        .setup = aci_setup,
        .observe = aci_observe,
        .observed_done = aci_observed_done,
        .decide = aci_decide,
};
