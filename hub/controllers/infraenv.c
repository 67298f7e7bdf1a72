/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "hub-claim.h"
#include "hub-exec.h"
#include "hub-inputs.h"
#include "hub-links.h"
#include "hub-nmstate.h"
#include "hub-service.h"
#include "http.h"
#include "infraenv.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

/* tags of the calls this controller makes */
#define TAG_REGISTER "register-infraenv"
#define TAG_UPDATE "update-infraenv"
/* the same, shaped again for the API the first one's refusal showed */
#define TAG_REGISTER_AGAIN "register-infraenv-again"
#define TAG_UPDATE_AGAIN "update-infraenv-again"
#define TAG_GET "get-infraenv"
#define TAG_IPXE "ipxe-script"
#define TAG_URL_IPXE "presigned-ipxe-script"
#define TAG_URL_IGNITION "presigned-discovery-ign"
#define TAG_DEREGISTER "deregister-infraenv"
#define TAG_DEREGISTER_HOST "deregister-host:"

/* host statuses in which the real controller deregisters a host with its
 * InfraEnv (deregisterInfraEnvWithHosts); others hold the deletion */
static const char *const deletable_host_statuses[] = {
        "insufficient-unbound",
        "disconnected-unbound",
        "discovering-unbound",
        "known-unbound",
        "installed",
        "added-to-existing-cluster",
        "unbinding",
        "unbinding-pending-user-action",
        NULL,
};

bool infraenv_host_deletable(json_object *host)
{
        return strv_contains((char **)deletable_host_statuses, strempty(json_get_string(host, "status")));
}

void infraenv_observed_done(HubObserved *base)
{
        InfraEnvObserved *o = (InfraEnvObserved *)base;

        json_object_put(o->secret);
        free(o->secret_message);
        json_object_put(o->cd);
        free(o->cd_message);
        hub_call_result_done(&o->cluster);
        for (size_t i = 0; i < o->n_nmstate; i++)
                json_object_put(o->nmstate[i]);
        free(o->nmstate);
        free(o->nmstate_message);
        hub_call_result_done(&o->infraenv);
        hub_call_result_done(&o->candidates);
        strv_free(o->claimed_ids);
        hub_call_result_done(&o->hosts);
}

/* the claim decision (hub-claim.h) on what was observed */
static int claim(const InfraEnvObserved *o, json_object *ie, HubClaimDecision *d)
{
        return hub_claim_decide(&(HubClaimInput){ .object = ie,
                                                  .id_annotation = HUB_ANNOTATION_INFRAENV_ID,
                                                  .name = o->base.name,
                                                  .identity = o->identity,
                                                  .now = o->base.now,
                                                  .active_since = o->base.active_since,
                                                  .candidates = o->searched && o->candidates.error >= 0
                                                                        ? o->candidates.body
                                                                        : NULL,
                                                  .claimed_ids = o->claimed_ids },
                                d);
}

/* ---- observe ---- */

static int observe_secret(HubContext *ctx, InfraEnvObserved *o, const char *ns, const char *name)
{
        HubRef ref = {};
        int r;

        r = hub_observe_ref(ctx, HUB_KIND_SECRET, ns, name, &ref);
        o->secret = TAKE_PTR(ref.object);
        o->secret_error = ref.error;
        o->secret_message = TAKE_PTR(ref.message);
        return r;
}

static int nmstate_compare(const void *a, const void *b)
{
        json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
        int c = strcmp(strempty(kube_object_namespace(x)), strempty(kube_object_namespace(y)));

        return c != 0 ? c : strcmp(strempty(kube_object_name(x)), strempty(kube_object_name(y)));
}

/* The NMStateConfigs of the InfraEnv's namespace that its selector picks,
 * through the label index: the smallest set among its matchLabels pairs
 * (every namespace object for expressions only), then the whole selector. */
static int observe_nmstate(HubContext *ctx, InfraEnvObserved *o, json_object *ie)
{
        json_object *sel = json_get_path(ie, "spec.nmStateConfigLabelSelector");
        _cleanup_strv_free_ char **best = NULL;
        const char *ns = kube_object_namespace(ie);
        json_object *ml = json_get(sel, "matchLabels");
        size_t n = 0;
        int r;

        if (hub_selector_empty(sel))
                return 0;
        if (json_object_is_type(ml, json_type_object) && json_object_object_length(ml) > 0) {
                json_object_object_foreach (ml, k, v) {
                        _cleanup_strv_free_ char **keys = NULL;
                        _cleanup_free_ char *value = strdup_printf("%s/%s=%s", strempty(ns), k,
                                                                   strempty(json_object_get_string(v)));

                        if (!value)
                                return -ENOMEM;
                        r = hub_cache_index_keys(ctx->cache, HUB_KIND_NMSTATECONFIG, HUB_INDEX_NMSTATE_LABEL,
                                                 value, &keys);
                        if (r < 0)
                                return r;
                        if (!best || strv_length(keys) < strv_length(best)) {
                                strv_free(best);
                                best = TAKE_PTR(keys);
                        }
                }
        } else {
                _cleanup_free_ char *value = strdup_printf("%s/%s", strempty(ns), HUB_INDEX_ALL);

                if (!value)
                        return -ENOMEM;
                r = hub_cache_index_keys(ctx->cache, HUB_KIND_NMSTATECONFIG, HUB_INDEX_NMSTATE_LABEL, value,
                                         &best);
                if (r < 0)
                        return r;
        }
        o->nmstate = calloc(strv_length(best) + 1, sizeof(json_object *));
        if (!o->nmstate)
                return -ENOMEM;
        STRV_FOREACH (key, best) {
                _cleanup_(json_object_putp) json_object *c = NULL;

                if (hub_cache_get_key(ctx->cache, HUB_KIND_NMSTATECONFIG, *key, &c) < 0)
                        continue; /* deleted meanwhile */
                r = hub_selector_matches(sel, c);
                if (r < 0) {
                        o->nmstate_error = r;
                        o->nmstate_message = strdup("spec.nmStateConfigLabelSelector has an operator other "
                                                    "than In, NotIn, Exists, DoesNotExist");
                        return o->nmstate_message ? 0 : -ENOMEM;
                }
                if (r > 0)
                        o->nmstate[n++] = TAKE_PTR(c);
        }
        o->n_nmstate = n;
        qsort(o->nmstate, n, sizeof(json_object *), nmstate_compare);
        return 0;
}

static int infraenv_observe(HubContext *ctx, HubObserved *base)
{
        InfraEnvObserved *o = (InfraEnvObserved *)base;
        _cleanup_free_ char *self_key = NULL;
        const char *secret, *id, *marker, *cluster_id = NULL;
        json_object *ie, *cref;
        int r;

        o->image_type = ctx->config->image_type;
        o->identity = ctx->identity;
        r = hub_cache_get(ctx->cache, HUB_KIND_INFRAENV, base->ns, base->name, &base->object);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        ie = base->object;
        self_key = strdup_printf("%s/%s", base->ns, base->name);
        if (!self_key)
                return -ENOMEM;

        secret = json_get_string(json_get_path(ie, "spec.pullSecretRef"), "name");
        if (!isempty(secret) && !hub_object_deleting(ie)) {
                r = observe_secret(ctx, o, base->ns, secret);
                if (r < 0)
                        return r;
        }

        cref = json_get_path(ie, "spec.clusterRef");
        if (cref && !hub_object_deleting(ie)) {
                const char *cname = json_get_string(cref, "name"), *cns = json_get_string(cref, "namespace");

                if (!hub_cache_has_kind(ctx->cache, HUB_KIND_CLUSTERDEPLOYMENT)) {
                        o->cd_error = -ENOENT;
                        o->cd_message = strdup("the server could not find the requested resource "
                                               "(clusterdeployments.hive.openshift.io)");
                } else {
                        r = hub_cache_get(ctx->cache, HUB_KIND_CLUSTERDEPLOYMENT,
                                          isempty(cns) ? base->ns : cns, cname, &o->cd);
                        if (r == -ENOENT) {
                                o->cd_error = r;
                                o->cd_message = strdup_printf(
                                        "clusterdeployments.hive.openshift.io \"%s\" not found",
                                        strempty(cname));
                        } else if (r < 0)
                                return r;
                }
                if (o->cd_error < 0 && !o->cd_message)
                        return -ENOMEM;
                cluster_id = o->cd ? hub_object_annotation(o->cd, HUB_ANNOTATION_CLUSTER_ID) : NULL;
                if (!isempty(cluster_id)) {
                        r = hub_service_op(ctx->service, ASSISTED_OP_GET_CLUSTER,
                                           (char *[]){ (char *)cluster_id, NULL }, "exclude-hosts=true",
                                           NULL, &o->cluster);
                        if (r < 0)
                                return r;
                        o->cluster_read = true;
                }
        }

        if (!hub_object_deleting(ie)) {
                r = observe_nmstate(ctx, o, ie);
                if (r < 0)
                        return r;
        }

        id = hub_object_annotation(ie, HUB_ANNOTATION_INFRAENV_ID);
        marker = hub_object_annotation(ie, HUB_ANNOTATION_REGISTERING);
        if (!isempty(id)) {
                r = hub_service_op(ctx->service, ASSISTED_OP_GET_INFRA_ENV, (char *[]){ (char *)id, NULL },
                                   NULL, NULL, &o->infraenv);
                if (r < 0)
                        return r;
                o->infraenv_read = true;
        } else if (marker) {
                _cleanup_free_ char *query = NULL;

                if (!isempty(cluster_id)) {
                        _cleanup_free_ char *e = http_escape(cluster_id);

                        query = e ? strdup_printf("cluster_id=%s", e) : NULL;
                        if (!query)
                                return -ENOMEM;
                }
                r = hub_service_op(ctx->service, ASSISTED_OP_LIST_INFRA_ENVS, (char *[]){ NULL }, query,
                                   NULL, &o->candidates);
                if (r < 0)
                        return r;
                o->searched = true;
                r = hub_observe_claimed(ctx, HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_ID, o->candidates.body,
                                        self_key, &o->claimed_ids);
                if (r < 0)
                        return r;
        }

        if (hub_object_deleting(ie) && hub_object_has_finalizer(ie, HUB_FINALIZER_INFRAENV)) {
                _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};

                r = claim(o, ie, &d);
                if (r < 0)
                        return r;
                if (d.id) {
                        r = hub_service_op(ctx->service, ASSISTED_OP_LIST_HOSTS, (char *[]){ d.id, NULL },
                                           NULL, NULL, &o->hosts);
                        if (r < 0)
                                return r;
                        o->hosts_read = true;
                }
        }
        /* after the service's answers: what they showed counts */
        o->api = hub_service_api(ctx->service);
        return 0;
}

/* ---- decide: helpers ---- */

char *infraenv_error_message(const HubCallResult *r)
{
        /* a client error is the user's (no requeue), anything else ours */
        if (hub_call_is_user_error(r))
                return strdup_printf("%s: %s", HUB_MSG_FAILED_TO_CREATE, strna(r->message));
        return strdup_printf("%s due to an internal error: %s", HUB_MSG_FAILED_TO_CREATE, strna(r->message));
}

/* ImageCreated False ImageCreationError; the URL and its time cleared
 * (handleEnsureISOErrors). user: no requeue; else 20 s. */
static int set_failure(const InfraEnvObserved *o, json_object *desired, HubPlan *plan, bool user,
                       const char *message)
{
        _cleanup_free_ char *text =
                user ? strdup_printf("%s: %s", HUB_MSG_FAILED_TO_CREATE, message)
                     : strdup_printf("%s due to an internal error: %s", HUB_MSG_FAILED_TO_CREATE, message);
        json_object *st;
        int r;

        if (!text)
                return -ENOMEM;
        r = hub_conditions_set(desired, HUB_COND_IMAGE_CREATED, HUB_FALSE, HUB_REASON_IMAGE_CREATION_ERROR,
                               text, o->base.now);
        if (r < 0)
                return r;
        st = json_get(desired, "status");
        json_object_object_del(st, "isoDownloadURL");
        json_object_object_del(st, "createdTime");
        if (!user)
                hub_plan_requeue_after(plan, HUB_REQUEUE_RECOVERABLE);
        return 0;
}

static int finish(const InfraEnvObserved *o, json_object *desired, HubPlan *plan)
{
        return hub_plan_patch_object(plan, HUB_KIND_INFRAENV, o->base.object, desired, true, true);
}

/* 1 when the InfraEnv asks what a service of this API cannot do: said as
 * the user's input error, the status written; 0 when it can */
static int refuse_for_api(const InfraEnvObserved *o, json_object *desired, HubPlan *plan,
                          json_object *service, HubServiceApi api)
{
        _cleanup_free_ char *message = NULL;
        int r;

        r = infraenv_api_error(o->base.object, service, api, &message);
        if (r < 0 || !message)
                return r;
        r = set_failure(o, desired, plan, true, message);
        if (r >= 0)
                r = finish(o, desired, plan);
        return r < 0 ? r : 1;
}

/* spec.pullSecretRef → the .dockerconfigjson text, or an input/backend
 * error message (notes §1 step 5's texts) */
static int pull_secret(const InfraEnvObserved *o, char **ret, char **ret_error, bool *ret_user)
{
        const char *name = json_get_string(json_get_path(o->base.object, "spec.pullSecretRef"), "name");
        HubRef ref = { .object = o->secret, .error = o->secret_error, .message = o->secret_message };

        *ret = NULL;
        *ret_user = true;
        if (isempty(name)) {
                *ret_error = strdup_printf("InfraEnv %s/%s: spec.pullSecretRef.name is not set", o->base.ns,
                                           o->base.name);
                return *ret_error ? 0 : -ENOMEM;
        }
        return hub_pull_secret(&ref, name, ret, ret_error, ret_user);
}

/* [{operation, value}] of the spec, as the service's model orders them */
static json_object *kernel_args(json_object *ie)
{
        json_object *ka = json_get_path(ie, "spec.kernelArguments"), *out = json_new_array();

        if (!out)
                return NULL;
        for (size_t i = 0; json_object_is_type(ka, json_type_array) && i < json_object_array_length(ka);
             i++) {
                json_object *a = json_object_array_get_idx(ka, i), *n = json_new_object();

                if (!n || json_append(out, n) < 0 ||
                    json_add_string_nonempty(n, "operation", json_get_string(a, "operation")) < 0 ||
                    json_add_string_nonempty(n, "value", json_get_string(a, "value")) < 0) {
                        json_object_put(out);
                        return NULL;
                }
        }
        return out;
}

static char *join_list(json_object *ie, const char *path)
{
        json_object *l = json_get_path(ie, path);
        _cleanup_strv_free_ char **v = NULL;

        for (size_t i = 0; json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++)
                if (strv_extend(&v, strempty(json_object_get_string(json_object_array_get_idx(l, i)))) < 0)
                        return NULL;
        return strv_join(v, ",");
}

static const char *image_type(const InfraEnvObserved *o)
{
        const char *t = json_get_string(json_get(o->base.object, "spec"), "imageType");

        return !isempty(t) ? t : o->image_type;
}

static bool discovery_delay(json_object *spec, int64_t *ret)
{
        return json_get_int64(spec, "networkDiscoveryDelaySeconds", ret) >= 0;
}

int infraenv_api_error(json_object *ie, json_object *service, HubServiceApi api, char **ret)
{
        json_object *spec = json_get(ie, "spec"), *ntp = json_get(spec, "ntpSources");
        const char *osv = json_get_string(spec, "osImageVersion"),
                   *have = json_get_string(service, "openshift_version");
        int64_t delay = 0;

        *ret = NULL;
        if (api != HUB_SERVICE_API_2023)
                return 0;
        if (json_object_is_type(ntp, json_type_array) && json_object_array_length(ntp) > 0)
                *ret = strdup("this assisted-service does not know ntp_sources (its API is the late-2023 "
                              "one): spec.ntpSources cannot replace the hosts' NTP sources there; "
                              "spec.additionalNTPSources adds to them");
        else if (discovery_delay(spec, &delay) && delay > 0)
                *ret = strdup_printf("this assisted-service does not know network_discovery_delay_seconds "
                                     "(its API is the late-2023 one): spec.networkDiscoveryDelaySeconds "
                                     "%" PRIi64 " cannot be honoured by it",
                                     delay);
        else if (service && !isempty(osv) && !streq(osv, strempty(have)))
                *ret = strdup_printf("the infra-env was registered for OpenShift %s and this "
                                     "assisted-service (its API is the late-2023 one) cannot change it to "
                                     "%s: delete and re-create the InfraEnv",
                                     isempty(have) ? "(the service's default)" : have, osv);
        else
                return 0;
        return *ret ? 0 : -ENOMEM;
}

int infraenv_create_params(json_object *ie, const char *default_image_type, HubServiceApi api,
                           const char *secret, json_object *cluster, json_object *static_config,
                           json_object **ret)
{
        json_object *spec = json_get(ie, "spec"), *proxy = json_get(spec, "proxy");
        const char *type = json_get_string(spec, "imageType");
        _cleanup_(json_object_putp) json_object *p = json_new_object(), *ka = kernel_args(ie);
        _cleanup_free_ char *ntp = join_list(ie, "spec.additionalNTPSources"),
                            *ntp2 = join_list(ie, "spec.ntpSources");
        const char *osv = json_get_string(spec, "osImageVersion");
        int64_t delay;

        if (!p || !ka || !ntp || !ntp2)
                return -ENOMEM;
        if (json_add_string(p, "name", strempty(kube_object_name(ie))) < 0 ||
            json_add_string(p, "image_type", !isempty(type) ? type : strempty(default_image_type)) < 0 ||
            json_add_string(p, "pull_secret", secret) < 0 ||
            json_add_string(p, "ssh_authorized_key", strempty(json_get_string(spec, "sshAuthorizedKey"))) <
                    0 ||
            json_add_string_nonempty(p, "ignition_config_override",
                                     json_get_string(spec, "ignitionConfigOverride")) < 0 ||
            json_add_string_nonempty(p, "cpu_architecture", json_get_string(spec, "cpuArchitecture")) < 0 ||
            json_add_string_nonempty(p, "additional_ntp_sources", ntp) < 0 ||
            (api != HUB_SERVICE_API_2023 && json_add_string_nonempty(p, "ntp_sources", ntp2) < 0) ||
            json_add_string_nonempty(p, "additional_trust_bundle",
                                     json_get_string(spec, "additionalTrustBundle")) < 0)
                return -ENOMEM;
        if (proxy) {
                json_object *pp = json_new_object();

                if (!pp || json_add(p, "proxy", pp) < 0 ||
                    json_add_string(pp, "http_proxy", strempty(json_get_string(proxy, "httpProxy"))) < 0 ||
                    json_add_string(pp, "https_proxy", strempty(json_get_string(proxy, "httpsProxy"))) < 0 ||
                    json_add_string(pp, "no_proxy", strempty(json_get_string(proxy, "noProxy"))) < 0)
                        return -ENOMEM;
        }
        if (cluster) {
                const char *cid = json_get_string(cluster, "id"),
                           *cv = json_get_string(cluster, "openshift_version");

                if (json_add_string_nonempty(p, "cluster_id", cid) < 0 ||
                    (isempty(osv) && json_add_string_nonempty(p, "openshift_version", cv) < 0))
                        return -ENOMEM;
        }
        if (json_add_string_nonempty(p, "openshift_version", osv) < 0)
                return -ENOMEM;
        if (api != HUB_SERVICE_API_2023 && discovery_delay(spec, &delay) &&
            json_add_int64(p, "network_discovery_delay_seconds", delay) < 0)
                return -ENOMEM;
        if (json_object_array_length(ka) > 0 && json_add(p, "kernel_arguments", TAKE_PTR(ka)) < 0)
                return -ENOMEM;
        if (hub_json_array_length(static_config) > 0 &&
            json_add(p, "static_network_config", json_object_get(static_config)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

/* The registration body for api, or 1 when this InfraEnv asks what api
 * cannot do (the input error written) */
static int shaped_create_params(const InfraEnvObserved *o, json_object *desired, HubPlan *plan,
                                HubServiceApi api, const char *secret, json_object *static_config,
                                json_object **ret)
{
        int r;

        r = refuse_for_api(o, desired, plan, NULL, api);
        if (r != 0)
                return r;
        return infraenv_create_params(o->base.object, o->image_type, api, secret,
                                      o->cluster_read && o->cluster.error >= 0 ? o->cluster.body : NULL,
                                      static_config, ret);
}

static bool str_differs(json_object *service, const char *key, const char *want)
{
        return !streq(strempty(json_get_string(service, key)), strempty(want));
}

/* The update body: only what differs from the service's infra-env (the
 * real controller sends everything on every reconcile). NULL when
 * nothing differs. secret_changed: the pull secret is not what was sent
 * last (its digest). */
static int update_params(const InfraEnvObserved *o, HubServiceApi api, json_object *service,
                         const char *secret, bool secret_changed, json_object *static_config,
                         json_object **ret)
{
        json_object *ie = o->base.object, *spec = json_get(ie, "spec"), *proxy = json_get(spec, "proxy");
        _cleanup_(json_object_putp) json_object *p = json_new_object(), *ka = kernel_args(ie),
                                                *have_ka = NULL, *have_static = NULL;
        _cleanup_free_ char *ntp = join_list(ie, "spec.additionalNTPSources"),
                            *ntp2 = join_list(ie, "spec.ntpSources");
        _cleanup_free_ char *want_tb = NULL, *have_tb = NULL;
        const char *s, *osv = json_get_string(spec, "osImageVersion");
        int64_t want_delay, have_delay = 0;

        *ret = NULL;
        if (!p || !ka || !ntp || !ntp2)
                return -ENOMEM;
        if (proxy) {
                json_object *sp = json_get(service, "proxy"), *pp = json_new_object();
                bool differs = false;
                static const char *const keys[][2] = { { "httpProxy", "http_proxy" },
                                                       { "httpsProxy", "https_proxy" },
                                                       { "noProxy", "no_proxy" } };

                if (!pp)
                        return -ENOMEM;
                for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                        const char *want = json_get_string(proxy, keys[i][0]);

                        if (isempty(want))
                                continue;
                        if (json_add_string(pp, keys[i][1], want) < 0) {
                                json_object_put(pp);
                                return -ENOMEM;
                        }
                        differs = differs || str_differs(sp, keys[i][1], want);
                }
                if (!differs)
                        json_object_put(pp);
                else if (json_add(p, "proxy", pp) < 0)
                        return -ENOMEM;
        }
        if (!isempty(ntp) && str_differs(service, "additional_ntp_sources", ntp) &&
            json_add_string(p, "additional_ntp_sources", ntp) < 0)
                return -ENOMEM;
        if (api != HUB_SERVICE_API_2023 && !isempty(ntp2) && str_differs(service, "ntp_sources", ntp2) &&
            json_add_string(p, "ntp_sources", ntp2) < 0)
                return -ENOMEM;
        if (str_differs(service, "type", image_type(o)) &&
            json_add_string(p, "image_type", image_type(o)) < 0)
                return -ENOMEM;
        s = json_get_string(spec, "ignitionConfigOverride");
        if (!isempty(s) && str_differs(service, "ignition_config_override", s) &&
            json_add_string(p, "ignition_config_override", s) < 0)
                return -ENOMEM;
        s = json_get_string(spec, "sshAuthorizedKey");
        if (str_differs(service, "ssh_authorized_key", s) &&
            json_add_string(p, "ssh_authorized_key", strempty(s)) < 0)
                return -ENOMEM;
        want_tb = strdup(strempty(json_get_string(spec, "additionalTrustBundle")));
        have_tb = strdup(strempty(json_get_string(service, "additional_trust_bundle")));
        if (!want_tb || !have_tb)
                return -ENOMEM;
        if (!streq(strstrip(want_tb), strstrip(have_tb)) &&
            json_add_string(p, "additional_trust_bundle",
                            strempty(json_get_string(spec, "additionalTrustBundle"))) < 0)
                return -ENOMEM;
        if (api != HUB_SERVICE_API_2023 && !isempty(osv) && str_differs(service, "openshift_version", osv) &&
            json_add_string(p, "openshift_version", osv) < 0)
                return -ENOMEM;
        if (secret_changed && json_add_string(p, "pull_secret", secret) < 0)
                return -ENOMEM;
        if (hub_nmstate_from_service(json_get_string(service, "static_network_config"), &have_static) < 0)
                have_static = NULL;
        if (!hub_json_equal(have_static, static_config) &&
            json_add(p, "static_network_config", json_object_get(static_config)) < 0)
                return -ENOMEM;
        s = json_get_string(service, "kernel_arguments");
        if (!isempty(s))
                (void)json_parse(s, strlen(s), BUF_MAX_JSON_DOC, &have_ka, NULL);
        if (!have_ka)
                have_ka = json_new_array();
        if (!hub_json_equal(have_ka, ka) && json_add(p, "kernel_arguments", TAKE_PTR(ka)) < 0)
                return -ENOMEM;
        (void)json_get_int64(service, "network_discovery_delay_seconds", &have_delay);
        if (api != HUB_SERVICE_API_2023 && discovery_delay(spec, &want_delay) && want_delay != have_delay &&
            json_add_int64(p, "network_discovery_delay_seconds", want_delay) < 0)
                return -ENOMEM;
        if (json_object_object_length(p) > 0)
                *ret = TAKE_PTR(p);
        return 0;
}

int infraenv_parse_ipxe(const char *script, char **ret_kernel, char **ret_initrd, char **ret_rootfs)
{
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *kernel = NULL, *initrd = NULL, *rootfs = NULL;
        int r;

        r = strv_split(script, "\n", &lines);
        if (r < 0)
                return r;
        STRV_FOREACH (l, lines) {
                _cleanup_strv_free_ char **w = NULL;

                r = strv_split(*l, " \t\r", &w);
                if (r < 0)
                        return r;
                if (!w || !w[0])
                        continue;
                if (streq(w[0], "initrd")) {
                        /* initrd [--name NAME] URL */
                        for (size_t i = 1; w[i]; i++) {
                                if (startswith(w[i], "--name")) {
                                        if (!strchr(w[i], '='))
                                                i++;
                                        if (!w[i])
                                                break;
                                        continue;
                                }
                                r = free_and_strdup(&initrd, w[i]);
                                if (r < 0)
                                        return r;
                                break;
                        }
                } else if (streq(w[0], "kernel") && w[1]) {
                        r = free_and_strdup(&kernel, w[1]);
                        if (r < 0)
                                return r;
                        for (size_t i = 2; w[i]; i++) {
                                const char *v = startswith(w[i], "coreos.live.rootfs_url=");

                                if (v) {
                                        r = free_and_strdup(&rootfs, v);
                                        if (r < 0)
                                                return r;
                                }
                        }
                }
        }
        if (!kernel || !initrd || !rootfs)
                return -EBADMSG;
        *ret_kernel = TAKE_PTR(kernel);
        *ret_initrd = TAKE_PTR(initrd);
        *ret_rootfs = TAKE_PTR(rootfs);
        return 0;
}

/* The presigned URL of an infra-env file (GetInfraEnvPresignedFileURL). */
static int plan_presigned(HubPlan *plan, const char *tag, const char *id, const char *file,
                          const char *extra)
{
        _cleanup_free_ char *q = strdup_printf("file_name=%s%s", file, strempty(extra));

        if (!q)
                return -ENOMEM;
        return hub_plan_op(plan, tag, ASSISTED_OP_GET_INFRA_ENV_PRESIGNED_FILE_URL,
                           (char *[]){ (char *)id, NULL }, q, NULL, true);
}

static const char *result_url(const HubCallResult *r)
{
        return r && r->error >= 0 ? json_get_string(r->body, "url") : NULL;
}

/* ---- decide: deletion (notes §3.2 step 6) ---- */

static int decide_deletion(const InfraEnvObserved *o, HubPlan *plan)
{
        json_object *ie = o->base.object;
        _cleanup_(json_object_putp) json_object *desired = NULL;
        const HubCallResult *dr = hub_call_results_find(&o->base.results, TAG_DEREGISTER);
        _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};
        bool planned = false;
        unsigned remaining = 0;
        int r;

        if (!hub_object_has_finalizer(ie, HUB_FINALIZER_INFRAENV))
                return 0;
        r = claim(o, ie, &d);
        if (r < 0)
                return r;
        if (d.action == HUB_CLAIM_SEARCH)
                return hub_plan_fail(plan, "cannot look for the infra-env of InfraEnv %s/%s: %s", o->base.ns,
                                     o->base.name, strna(o->candidates.message));
        if (d.id) {
                if (dr && dr->error < 0 && dr->status != 404) {
                        hub_plan_requeue_after(plan, HUB_REQUEUE_LONGER_ON_ERROR);
                        return hub_plan_fail(plan, "failed to deregister infraenv: %s: %s", o->base.name,
                                             strna(dr->message));
                }
                if (!dr) {
                        json_object *hosts = o->hosts.body;

                        if (!o->hosts_read || (o->hosts.error < 0 && o->hosts.status != 404)) {
                                hub_plan_requeue_after(plan, HUB_REQUEUE_LONGER_ON_ERROR);
                                return hub_plan_fail(plan, "failed to deregister infraenv: %s: %s",
                                                     o->base.name, strna(o->hosts.message));
                        }
                        for (size_t i = 0;
                             o->hosts.error >= 0 && json_object_is_type(hosts, json_type_array) &&
                             i < json_object_array_length(hosts);
                             i++) {
                                json_object *h = json_object_array_get_idx(hosts, i);
                                const char *hid = json_get_string(h, "id");
                                _cleanup_free_ char *tag = NULL;
                                const HubCallResult *hr;

                                if (!hid)
                                        continue;
                                if (!infraenv_host_deletable(h)) {
                                        remaining++;
                                        continue;
                                }
                                tag = strdup_printf("%s%s", TAG_DEREGISTER_HOST, hid);
                                if (!tag)
                                        return -ENOMEM;
                                hr = hub_call_results_find(&o->base.results, tag);
                                if (hr) {
                                        if (hr->error < 0 && hr->status != 404) {
                                                hub_plan_requeue_after(plan, HUB_REQUEUE_LONGER_ON_ERROR);
                                                return hub_plan_fail(plan,
                                                                     "failed to deregister host %s: %s", hid,
                                                                     strna(hr->message));
                                        }
                                        continue;
                                }
                                r = hub_plan_op(plan, tag, ASSISTED_OP_DEREGISTER_HOST,
                                                (char *[]){ d.id, (char *)hid, NULL }, NULL, NULL, true);
                                if (r < 0)
                                        return r;
                                planned = true;
                        }
                        if (planned)
                                return 0;
                        if (remaining > 0) {
                                hub_plan_requeue_after(plan, HUB_REQUEUE_LONGER_ON_ERROR);
                                return hub_plan_fail(plan,
                                                     "Failed to delete infraEnv, existing hosts bound and "
                                                     "not installed (%u)",
                                                     remaining);
                        }
                        if (o->hosts.status == 404)
                                goto done; /* the infra-env is gone already */
                        return hub_plan_op(plan, TAG_DEREGISTER, ASSISTED_OP_DEREGISTER_INFRA_ENV,
                                           (char *[]){ d.id, NULL }, NULL, NULL, true);
                }
        }
done:
        desired = hub_json_copy(ie);
        if (!desired)
                return -ENOMEM;
        r = hub_object_remove_finalizer(desired, HUB_FINALIZER_INFRAENV);
        if (r < 0)
                return r;
        return hub_plan_patch_object(plan, HUB_KIND_INFRAENV, ie, desired, true, false);
}

/* ---- decide ---- */

static int set_missing_cd(const InfraEnvObserved *o, json_object *desired, const char *fmt, ...)
        _printf_(3, 4);
static int set_missing_cd(const InfraEnvObserved *o, json_object *desired, const char *fmt, ...)
{
        _cleanup_free_ char *detail = NULL, *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        detail = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!detail)
                return -ENOMEM;
        msg = strdup_printf("%s: %s", HUB_MSG_CD_MISSING, detail);
        if (!msg)
                return -ENOMEM;
        return hub_conditions_set(desired, HUB_COND_IMAGE_CREATED, HUB_UNKNOWN, HUB_REASON_MISSING_CD, msg,
                                  o->base.now);
}

/* false when the InfraEnv must wait for its ClusterDeployment (the
 * condition is set) */
static int check_cluster(const InfraEnvObserved *o, json_object *desired, HubPlan *plan)
{
        json_object *cref = json_get_path(o->base.object, "spec.clusterRef"), *aci;
        const char *cname = json_get_string(cref, "name"), *cns = json_get_string(cref, "namespace");
        int r;

        if (!cref)
                return 1;
        if (isempty(cns))
                cns = o->base.ns;
        if (!o->cd) {
                r = set_missing_cd(o, desired,
                                   "failed to get clusterDeployment with name %s in namespace %s: %s",
                                   strempty(cname), cns, strna(o->cd_message));
                if (r < 0)
                        return r;
                /* a NotFound waits for the ClusterDeployment's own event */
                if (o->cd_error != -ENOENT)
                        (void)hub_plan_fail(plan, "cannot read ClusterDeployment %s/%s", cns,
                                            strempty(cname));
                return 0;
        }
        if (!o->cluster_read || o->cluster.status == 404) {
                aci = json_get_path(o->cd, "spec.clusterInstallRef");
                if (aci)
                        r = set_missing_cd(o, desired,
                                           "cluster does not exist: %s, check AgentClusterInstall "
                                           "conditions: name %s in namespace %s",
                                           strempty(cname), strempty(json_get_string(aci, "name")), cns);
                else
                        r = set_missing_cd(o, desired,
                                           "cluster does not exist: %s, AgentClusterInstall is not defined "
                                           "in ClusterDeployment",
                                           strempty(cname));
                if (r < 0)
                        return r;
                (void)hub_plan_fail(plan, "waiting for the cluster of ClusterDeployment %s/%s", cns,
                                    strempty(cname));
                return 0;
        }
        if (o->cluster.error < 0) {
                r = set_missing_cd(o, desired, "%s", strna(o->cluster.message));
                if (r < 0)
                        return r;
                (void)hub_plan_fail(plan, "cannot read the cluster of ClusterDeployment %s/%s", cns,
                                    strempty(cname));
                return 0;
        }
        return 1;
}

int infraenv_decide(const HubObserved *base, HubPlan *plan)
{
        const InfraEnvObserved *o = (const InfraEnvObserved *)base;
        json_object *ie = base->object, *status, *service = NULL, *cond;
        _cleanup_(json_object_putp) json_object *desired = NULL, *static_config = NULL, *params = NULL,
                                                *sel = NULL;
        _cleanup_(hub_claim_decision_done) HubClaimDecision d = {};
        _cleanup_erase_ char *secret = NULL;
        _cleanup_free_ char *secret_error = NULL, *nm_error = NULL, *marker = NULL, *id = NULL;
        const HubCallResult *reg, *upd, *get, *reg_again, *upd_again;
        HubServiceApi api;
        bool user = true, written = false, secret_changed;
        char dg[80] = "";
        int r;

        if (!ie)
                return 0;
        if (hub_object_deleting(ie))
                return decide_deletion(o, plan);

        desired = hub_json_copy(ie);
        if (!desired)
                return -ENOMEM;
        r = hub_object_add_finalizer(desired, HUB_FINALIZER_INFRAENV);
        if (r < 0)
                return r;
        status = hub_json_ensure_object(desired, "status");
        sel = json_new_object();
        if (!status || !sel || json_add(status, "agentLabelSelector", json_object_get(sel)) < 0 ||
            json_add(sel, "matchLabels", json_new_object()) < 0 ||
            json_add_string(json_get(sel, "matchLabels"), HUB_LABEL_INFRAENV, base->name) < 0)
                return -ENOMEM;

        r = check_cluster(o, desired, plan);
        if (r <= 0)
                return r < 0 ? r : finish(o, desired, plan);

        /* inputs, each complete before anything is sent */
        if (json_get_path(ie, "spec.mirrorRegistryRef")) {
                r = set_failure(o, desired, plan, true,
                                "spec.mirrorRegistryRef is not supported by cradle-hub: assisted-service "
                                "takes mirror "
                                "registries only through its internal API");
                return r < 0 ? r : finish(o, desired, plan);
        }
        r = pull_secret(o, &secret, &secret_error, &user);
        if (r < 0)
                return r;
        if (secret_error) {
                r = set_failure(o, desired, plan, user, secret_error);
                return r < 0 ? r : finish(o, desired, plan);
        }
        /* other objects once per reconcile: later rounds see the same
         * observed Secret, not the one just written */
        if (base->results.n == 0) {
                r = hub_plan_label_watched(plan, HUB_KIND_SECRET, o->secret);
                if (r < 0)
                        return r;
        }
        r = hub_digest(secret, dg);
        if (r < 0)
                return r;
        if (o->nmstate_error < 0) {
                r = set_failure(o, desired, plan, true, o->nmstate_message);
                return r < 0 ? r : finish(o, desired, plan);
        }
        r = hub_nmstate_static_config(o->nmstate, o->n_nmstate, &static_config, &nm_error);
        if (r == -EINVAL) {
                r = set_failure(o, desired, plan, true, nm_error);
                return r < 0 ? r : finish(o, desired, plan);
        }
        if (r < 0)
                return r;

        /* which infra-env */
        reg = hub_call_results_find(&base->results, TAG_REGISTER);
        upd = hub_call_results_find(&base->results, TAG_UPDATE);
        reg_again = hub_call_results_find(&base->results, TAG_REGISTER_AGAIN);
        upd_again = hub_call_results_find(&base->results, TAG_UPDATE_AGAIN);
        get = hub_call_results_find(&base->results, TAG_GET);
        /* the answers of this reconcile count too (hub-service.c learns
         * them for the next ones) */
        api = hub_service_api_learn(hub_service_api_learn(o->api, reg), upd);
        r = claim(o, ie, &d);
        if (r < 0)
                return r;
        if (d.action == HUB_CLAIM_LINKED && o->infraenv_read && o->infraenv.status == 404) {
                /* the service lost it (its database was reset): register
                 * again through the marker */
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_INFRAENV_ID, NULL);
                if (r < 0)
                        return r;
                hub_claim_decision_done(&d);
                d.action = HUB_CLAIM_MARK;
        }
        if (reg && !reg_again && hub_service_api_refused(o->api, reg)) {
                /* refused for a field of the other generation: once more,
                 * shaped for the one it showed */
                r = shaped_create_params(o, desired, plan, api, secret, static_config, &params);
                if (r != 0)
                        return r < 0 ? r : 0;
                return hub_plan_op(plan, TAG_REGISTER_AGAIN, ASSISTED_OP_REGISTER_INFRA_ENV,
                                   (char *[]){ NULL }, NULL, TAKE_PTR(params), true);
        }
        if (reg_again)
                reg = reg_again;
        if (upd_again)
                upd = upd_again;
        if (reg) {
                if (reg->error < 0) {
                        /* a refusal (4xx but 409) stored nothing: its marker
                         * goes (see cluster.c); anything else may have
                         * reached the database: the marker stays, the next
                         * reconcile searches first */
                        if (hub_call_is_user_error(reg) && reg->status != 409) {
                                r = hub_claim_refused(desired, base->now);
                                if (r < 0)
                                        return r;
                        }
                        if (reg->status == 409) {
                                hub_plan_requeue_after(plan, HUB_REQUEUE_RECOVERABLE);
                                return finish(o, desired, plan);
                        }
                        r = set_failure(o, desired, plan, hub_call_is_user_error(reg), strna(reg->message));
                        return r < 0 ? r : finish(o, desired, plan);
                }
                service = reg->body;
                written = true;
        } else {
                switch (d.action) {
                case HUB_CLAIM_LINKED:
                        if (get) {
                                /* adopted in an earlier round of this reconcile */
                                if (get->error < 0) {
                                        r = set_failure(o, desired, plan, false, strna(get->message));
                                        return r < 0 ? r : finish(o, desired, plan);
                                }
                                service = get->body;
                                break;
                        }
                        if (!o->infraenv_read) {
                                r = hub_plan_patch_object(plan, HUB_KIND_INFRAENV, ie, desired, true, false);
                                if (r < 0)
                                        return r;
                                return hub_plan_op(plan, TAG_GET, ASSISTED_OP_GET_INFRA_ENV,
                                                   (char *[]){ d.id, NULL }, NULL, NULL, true);
                        }
                        if (o->infraenv.error < 0) {
                                if (o->infraenv.status == 409) {
                                        hub_plan_requeue_after(plan, HUB_REQUEUE_RECOVERABLE);
                                        return finish(o, desired, plan);
                                }
                                r = set_failure(o, desired, plan, false, strna(o->infraenv.message));
                                return r < 0 ? r : finish(o, desired, plan);
                        }
                        service = o->infraenv.body;
                        break;
                case HUB_CLAIM_ADOPT:
                        if (!get) {
                                r = hub_object_set_annotation(desired, HUB_ANNOTATION_INFRAENV_ID, d.id);
                                if (r >= 0)
                                        r = hub_object_set_annotation(desired, HUB_ANNOTATION_REGISTERING,
                                                                      NULL);
                                if (r < 0)
                                        return r;
                                r = hub_plan_patch_object(plan, HUB_KIND_INFRAENV, ie, desired, true, false);
                                if (r < 0)
                                        return r;
                                if (d.duplicates) {
                                        _cleanup_free_ char *dups = strv_join(d.duplicates, ", ");

                                        (void)hub_plan_event(
                                                plan, ie, "Warning", "DuplicateInfraEnv",
                                                "infra-envs %s also match this InfraEnv; cradle-hub "
                                                "adopted %s and left the others alone",
                                                strna(dups), d.id);
                                }
                                return hub_plan_op(plan, TAG_GET, ASSISTED_OP_GET_INFRA_ENV,
                                                   (char *[]){ d.id, NULL }, NULL, NULL, true);
                        }
                        if (get->error < 0) {
                                r = set_failure(o, desired, plan, false, strna(get->message));
                                return r < 0 ? r : finish(o, desired, plan);
                        }
                        service = get->body;
                        break;
                case HUB_CLAIM_WAIT:
                        hub_plan_requeue_after(plan, d.wait);
                        return finish(o, desired, plan);
                case HUB_CLAIM_SEARCH:
                        r = set_failure(o, desired, plan, false, strna(o->candidates.message));
                        return r < 0 ? r : finish(o, desired, plan);
                case HUB_CLAIM_MARK:
                case HUB_CLAIM_REGISTER:
                        if (d.action == HUB_CLAIM_MARK) {
                                marker = hub_claim_marker(base->now, o->identity);
                                if (!marker || hub_object_set_annotation(desired, HUB_ANNOTATION_REGISTERING,
                                                                         marker) < 0)
                                        return -ENOMEM;
                        }
                        r = shaped_create_params(o, desired, plan, api, secret, static_config, &params);
                        if (r != 0)
                                return r < 0 ? r : 0;
                        /* the marker (and the finalizer) first, then the call */
                        r = hub_plan_patch_object(plan, HUB_KIND_INFRAENV, ie, desired, true, false);
                        if (r < 0)
                                return r;
                        return hub_plan_op(plan, TAG_REGISTER, ASSISTED_OP_REGISTER_INFRA_ENV,
                                           (char *[]){ NULL }, NULL, TAKE_PTR(params), true);
                default:
                        return -EINVAL;
                }
        }

        id = strdup(strempty(json_get_string(service, "id")));
        if (!id)
                return -ENOMEM;
        if (written) {
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_INFRAENV_ID, id);
                if (r >= 0)
                        r = hub_object_set_annotation(desired, HUB_ANNOTATION_REGISTERING, NULL);
                if (r >= 0)
                        r = hub_object_set_annotation(desired, HUB_ANNOTATION_REGISTRATION_REFUSED, NULL);
                if (r >= 0)
                        r = hub_object_set_annotation(desired, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg);
                if (r < 0)
                        return r;
        } else if (upd && !upd_again && hub_service_api_refused(o->api, upd)) {
                r = refuse_for_api(o, desired, plan, service, api);
                if (r != 0)
                        return r < 0 ? r : 0;
                secret_changed =
                        !streq(strempty(hub_object_annotation(ie, HUB_ANNOTATION_PULL_SECRET_DIGEST)), dg);
                r = update_params(o, api, service, secret, secret_changed, static_config, &params);
                if (r < 0)
                        return r;
                if (params)
                        return hub_plan_op(plan, TAG_UPDATE_AGAIN, ASSISTED_OP_UPDATE_INFRA_ENV,
                                           (char *[]){ id, NULL }, NULL, TAKE_PTR(params), true);
                /* nothing left this service can take */
        } else if (upd) {
                if (upd->error < 0) {
                        if (upd->status == 409) {
                                /* the image is being created: not an error */
                                cond = hub_conditions_find(ie, HUB_COND_IMAGE_CREATED);
                                if (!streq_ptr(json_get_string(cond, "reason"),
                                               HUB_REASON_IMAGE_CREATION_ERROR)) {
                                        r = hub_conditions_set(desired, HUB_COND_IMAGE_CREATED, HUB_TRUE,
                                                               HUB_REASON_IMAGE_CREATED,
                                                               HUB_MSG_IMAGE_HAS_BEEN_CREATED, base->now);
                                        if (r < 0)
                                                return r;
                                }
                                hub_plan_requeue_after(plan, HUB_REQUEUE_RECOVERABLE);
                                return finish(o, desired, plan);
                        }
                        r = set_failure(o, desired, plan, hub_call_is_user_error(upd), strna(upd->message));
                        return r < 0 ? r : finish(o, desired, plan);
                }
                service = upd->body;
                written = true;
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_PULL_SECRET_DIGEST, dg);
                if (r < 0)
                        return r;
        } else {
                secret_changed =
                        !streq(strempty(hub_object_annotation(ie, HUB_ANNOTATION_PULL_SECRET_DIGEST)), dg);
                r = refuse_for_api(o, desired, plan, service, api);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = update_params(o, api, service, secret, secret_changed, static_config, &params);
                if (r < 0)
                        return r;
                if (params) {
                        r = hub_plan_patch_object(plan, HUB_KIND_INFRAENV, ie, desired, true, false);
                        if (r < 0)
                                return r;
                        return hub_plan_op(plan, TAG_UPDATE, ASSISTED_OP_UPDATE_INFRA_ENV,
                                           (char *[]){ id, NULL }, NULL, TAKE_PTR(params), true);
                }
        }

        /* the image: URLs, boot artifacts, debug URLs */
        {
                const char *url = json_get_string(service, "download_url");
                json_object *old = json_get(ie, "status"), *arts = json_get(old, "bootArtifacts");
                const HubCallResult *ipxe = hub_call_results_find(&base->results, TAG_IPXE),
                                    *uipxe = hub_call_results_find(&base->results, TAG_URL_IPXE),
                                    *uign = hub_call_results_find(&base->results, TAG_URL_IGNITION);
                bool url_changed = !streq(strempty(json_get_string(old, "isoDownloadURL")), strempty(url));
                bool need_artifacts = written || url_changed || isempty(json_get_string(arts, "kernel")) ||
                                      isempty(json_get_string(arts, "initrd")) ||
                                      isempty(json_get_string(arts, "rootfs")) ||
                                      isempty(json_get_string(arts, "ipxeScript")) ||
                                      isempty(json_get_string(arts, "discoveryIgnitionURL"));
                bool need_static =
                        !isempty(json_get_string(service, "static_network_config")) &&
                        isempty(json_get_string(json_get(old, "debugInfo"), "staticNetworkDownloadURL"));
                bool boot_order = streq_ptr(json_get_string(json_get(ie, "spec"), "ipxeScriptType"),
                                            "BootOrderControl");
                bool planned = false;
                json_object *dst_arts, *dbg;
                _cleanup_(hub_link_signer_done) HubLinkSigner signer = {};
                char ts[32];

                if (need_artifacts && !ipxe) {
                        _cleanup_free_ char *path = NULL;

                        r = assisted_op_path(ASSISTED_OP_DOWNLOAD_INFRA_ENV_FILES, (char *[]){ id, NULL },
                                             "file_name=ipxe-script", &path);
                        if (r >= 0)
                                r = hub_plan_download(plan, TAG_IPXE, path);
                        if (r < 0)
                                return r;
                        planned = true;
                }
                if (need_artifacts && !uipxe) {
                        r = plan_presigned(plan, TAG_URL_IPXE, id, "ipxe-script",
                                           boot_order ? "&ipxe_script_type=boot-order-control" : NULL);
                        if (r < 0)
                                return r;
                        planned = true;
                }
                if ((need_artifacts || need_static) && !uign) {
                        r = plan_presigned(plan, TAG_URL_IGNITION, id, "discovery.ign", NULL);
                        if (r < 0)
                                return r;
                        planned = true;
                }
                if (planned)
                        /* metadata now (the id after a registration), the
                         * rest once the answers are in */
                        return hub_plan_patch_object(plan, HUB_KIND_INFRAENV, ie, desired, true, false);

                status = json_get(desired, "status");
                if (url_changed || written || !json_get_string(old, "createdTime")) {
                        const char *t = json_get_string(service, "updated_at");
                        usec_t when;

                        if (isempty(t))
                                t = json_get_string(service, "created_at");
                        if (hub_parse_time(t, &when) < 0)
                                when = base->now;
                        hub_format_time(when, ts);
                        if (json_add_string(status, "isoDownloadURL", strempty(url)) < 0 ||
                            json_add_string(status, "createdTime", ts) < 0)
                                return -ENOMEM;
                }
                if (need_artifacts) {
                        _cleanup_free_ char *kernel = NULL, *initrd = NULL, *rootfs = NULL;

                        dst_arts = hub_json_ensure_object(status, "bootArtifacts");
                        if (!dst_arts)
                                return -ENOMEM;
                        if (ipxe && ipxe->error >= 0 &&
                            infraenv_parse_ipxe(json_object_get_string(ipxe->body), &kernel, &initrd,
                                                &rootfs) >= 0) {
                                if (json_add_string(dst_arts, "kernel", kernel) < 0 ||
                                    json_add_string(dst_arts, "initrd", initrd) < 0 ||
                                    json_add_string(dst_arts, "rootfs", rootfs) < 0)
                                        return -ENOMEM;
                        }
                        if (result_url(uipxe) &&
                            json_add_string(dst_arts, "ipxeScript", result_url(uipxe)) < 0)
                                return -ENOMEM;
                        if (result_url(uign) &&
                            json_add_string(dst_arts, "discoveryIgnitionURL", result_url(uign)) < 0)
                                return -ENOMEM;
                        /* the files are best effort: a service that cannot
                         * serve them does not hold the image back; one that
                         * failed tries again later */
                        if ((ipxe && ipxe->error < 0 && !hub_call_is_user_error(ipxe)) ||
                            (uipxe && uipxe->error < 0 && !hub_call_is_user_error(uipxe)) ||
                            (uign && uign->error < 0 && !hub_call_is_user_error(uign)))
                                hub_plan_requeue_after(plan, HUB_REQUEUE_RECOVERABLE);
                }
                dbg = hub_json_ensure_object(status, "debugInfo");
                if (!dbg)
                        return -ENOMEM;
                /* on the service's public base URL, with the infra-env's key
                 * when the service signs: both from its presigned URL */
                if (hub_link_signer_parse(hub_link_source_of_infraenv(desired), &signer) >= 0) {
                        _cleanup_free_ char *events = hub_link_events(&signer, "infra_env_id", id);

                        if (!events || hub_link_set(dbg, "eventsURL", events) < 0)
                                return -ENOMEM;
                }
                /* the service presigns only discovery.ign and ipxe-script; the
                 * static network file takes the same infra-env token */
                if (need_static && result_url(uign)) {
                        _cleanup_free_ char *u = str_replace_all(result_url(uign), "file_name=discovery.ign",
                                                                 "file_name=static-network-config");

                        if (!u || json_add_string(dbg, "staticNetworkDownloadURL", u) < 0)
                                return -ENOMEM;
                }
        }
        {
                _cleanup_free_ char *msg =
                        strdup_printf("%s: %s", HUB_MSG_INFRAENV_AVAILABLE, HUB_MSG_IMAGE_HAS_BEEN_CREATED);

                if (!msg)
                        return -ENOMEM;
                r = hub_conditions_set(desired, HUB_COND_IMAGE_CREATED, HUB_TRUE,
                                       HUB_REASON_INFRAENV_AVAILABLE, msg, base->now);
                if (r < 0)
                        return r;
        }
        return finish(o, desired, plan);
}

/* ---- watches ---- */

/* an NMStateConfig → the InfraEnvs of its namespace whose selector has one
 * of its labels, or has only expressions */
static int map_nmstate(HubContext *ctx, json_object *obj, char ***ret)
{
        _cleanup_strv_free_ char **values = NULL;
        int r;

        r = hub_index_nmstate_label(obj, &values, NULL);
        if (r < 0)
                return r;
        return hub_cache_index_keys_any(ctx->cache, HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_NMSTATE_SELECTOR,
                                        values, ret);
}

static int map_cd(HubContext *ctx, json_object *obj, char ***ret)
{
        return hub_cache_keys_referring(ctx->cache, HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_CLUSTERREF, obj,
                                        ret);
}

static int map_secret(HubContext *ctx, json_object *obj, char ***ret)
{
        return hub_cache_keys_referring(ctx->cache, HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_PULLSECRET, obj,
                                        ret);
}

static int infraenv_setup(HubController *c)
{
        int r;

        r = hub_controller_watch(c, HUB_KIND_INFRAENV, NULL);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_NMSTATECONFIG, map_nmstate);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_CLUSTERDEPLOYMENT, map_cd);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_SECRET, map_secret);
        return r;
}

const HubControllerType hub_infraenv_controller = {
        .name = "infraenv",
        .kind = HUB_KIND_INFRAENV,
        .observed_size = sizeof(InfraEnvObserved),
        .setup = infraenv_setup,
        .observe = infraenv_observe,
        .observed_done = infraenv_observed_done,
        .decide = infraenv_decide,
};
