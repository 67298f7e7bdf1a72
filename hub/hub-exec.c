/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "hub-exec.h"
#include "hub-metrics.h"
#include "hub-service.h"
#include "jsonutil.h"
#include "config.h"
#include "kube/kube-config.h"
#include "kube/kube-events.h"
#include "kube/kube.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

void hub_exec_result_done(HubExecResult *r)
{
        free(r->error);
        free(r->self_resource_version);
        *r = (HubExecResult){};
}

const KubeResource *hub_kind_resource(HubKind k)
{
        const HubKindInfo *i = hub_kind_info(k);

        return i ? &i->resource : NULL;
}

static void count_write(HubContext *ctx, const char *controller, HubWriteKind wk, HubKind target)
{
        _cleanup_free_ char *l1 = hub_metrics_label("controller", controller), *labels = NULL;

        if (!ctx->metrics || !l1)
                return;
        labels = strdup_printf("%s,verb=\"%s\",kind=\"%s\"", l1, hub_write_kind_to_string(wk),
                               wk == HUB_WRITE_SERVICE ? "service"
                               : wk == HUB_WRITE_SPOKE ? "spoke"
                                                       : strna(hub_kind_to_string(target)));
        if (labels)
                hub_metrics_add(ctx->metrics, "cradle_hub_writes_total", labels, 1);
}

static int fail(HubExecResult *ret, const char *fmt, ...) _printf_(2, 3);
static int fail(HubExecResult *ret, const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        s = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!s)
                return -ENOMEM;
        free(ret->error);
        ret->error = redact_known_secrets(s);
        return ret->error ? 0 : -ENOMEM;
}

static int exec_service(HubContext *ctx, const HubWrite *w, HubObserved *obs, HubExecResult *ret)
{
        HubCallResult res = {};
        int r;

        if (w->text) {
                _cleanup_free_ char *text = NULL;

                r = hub_service_download(ctx->service, w->tag, w->operation, w->path, 1024 * 1024, &res,
                                         &text);
                if (r >= 0 && text) {
                        res.body = json_object_new_string(text);
                        if (!res.body)
                                r = -ENOMEM;
                }
        } else
                r = hub_service_call(ctx->service, w->tag, w->operation, w->method, w->path, w->body,
                                     w->expect, &res);
        if (r < 0) {
                hub_call_result_done(&res);
                return r;
        }
        ret->service_calls++;
        if (!streq(w->method, "GET"))
                ret->writes++;
        if (w->feedback) {
                r = hub_call_results_add(&obs->results, res.tag, res.error, res.status, TAKE_PTR(res.body),
                                         res.message);
                hub_call_result_done(&res);
                if (r < 0)
                        return r;
                ret->redecide = true;
                return 0;
        }
        if (res.error < 0) {
                ret->failed = true;
                r = fail(ret, "%s", strna(res.message));
                hub_call_result_done(&res);
                return r < 0 ? r : 1;
        }
        hub_call_result_done(&res);
        return 0;
}

/* Outcome of a Kubernetes write error: stops the plan */
static int kube_failed(HubExecResult *ret, const HubWrite *w, int error, const KubeStatus *st)
{
        const char *kind = strna(hub_kind_to_string(w->target));

        if (error == -ENOENT && w->kind != HUB_WRITE_CREATE) {
                ret->gone = true;
                return 1;
        }
        if (error == -EBUSY || error == -EEXIST)
                ret->conflict = true;
        else
                ret->failed = true;
        (void)fail(ret, "%s %s %s/%s: %s", hub_write_kind_to_string(w->kind), kind, strempty(w->ns),
                   strempty(w->name), st->message ? st->message : strerror(-ERRNO_VALUE(error)));
        return 1;
}

/* A plan's own earlier write to an object it locks a later write on: the
 * lock holds "nobody else changed it since it was observed", so the
 * resourceVersion that earlier write produced stands for the observed
 * one (the ClusterDeployment controller writes the ACI's spec, then its
 * status). */
typedef struct Chain {
        HubKind target;
        const char *ns, *name; /* borrowed from the plan */
        char *observed, *written;
} Chain;

static void chain_done(Chain *c)
{
        free(c->observed);
        free(c->written);
}

static bool chain_same(const Chain *c, HubKind target, const HubWrite *w)
{
        return c->written && c->target == target && streq_ptr(c->ns, w->ns) && streq_ptr(c->name, w->name);
}

static int exec_kube(HubContext *ctx, const HubControllerType *t, const HubWrite *w, HubObserved *obs,
                     Chain *chain, HubExecResult *ret)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(json_object_putp) json_object *answer = NULL, *patch = NULL;
        HubKind target = w->self ? t->kind : w->target;
        const KubeResource *res = hub_kind_resource(target);
        const char *subresource = w->kind == HUB_WRITE_PATCH_STATUS ? "status" : NULL;
        int r;

        if (!res)
                return -EINVAL;
        switch (w->kind) {
        case HUB_WRITE_CREATE:
                r = kube_create(ctx->kube, res, w->ns, w->body, &answer, &st);
                break;
        case HUB_WRITE_PATCH:
        case HUB_WRITE_PATCH_STATUS: {
                const char *rv = w->resource_version;

                patch = hub_json_copy(w->body);
                if (!patch)
                        return -ENOMEM;
                if (w->self && obs->object && hub_json_patch_has_array(patch))
                        rv = kube_object_resource_version(obs->object);
                else if (rv && chain_same(chain, target, w) && streq(rv, chain->observed))
                        rv = chain->written;
                if (rv) {
                        json_object *md = hub_json_ensure_object(patch, "metadata");

                        if (!md || json_add_string(md, "resourceVersion", rv) < 0)
                                return -ENOMEM;
                }
                r = kube_patch(ctx->kube, res, w->ns, w->name, subresource, KUBE_PATCH_MERGE, patch, &answer,
                               &st);
                break;
        }
        case HUB_WRITE_DELETE: {
                KubeDeleteOptions o = { .precondition_uid = w->uid,
                                        .grace_period_seconds = KUBE_GRACE_UNSET };

                r = kube_delete(ctx->kube, res, w->ns, w->name, &o, NULL, &st);
                if (r == -ENOENT)
                        r = 0;
                break;
        }
        default:
                return -EINVAL;
        }
        if (r < 0)
                return kube_failed(ret, w, r, &st);
        if (!w->self && w->kind != HUB_WRITE_DELETE && w->resource_version && answer &&
            kube_object_resource_version(answer)) {
                char *written = strdup(kube_object_resource_version(answer)),
                     *observed = strdup(chain_same(chain, target, w) &&
                                                        streq(w->resource_version, chain->observed)
                                                ? chain->observed
                                                : w->resource_version);

                chain_done(chain);
                *chain = (Chain){ target, w->ns, w->name, observed, written };
                if (!observed || !written)
                        return -ENOMEM;
        }
        ret->writes++;
        count_write(ctx, t->name, w->kind, target);
        log_debug("%s: %s %s %s/%s", t->name, hub_write_kind_to_string(w->kind),
                  strna(hub_kind_to_string(target)), strempty(w->ns), strempty(w->name));
        if (w->self && answer &&
            (w->kind == HUB_WRITE_PATCH || w->kind == HUB_WRITE_PATCH_STATUS ||
             w->kind == HUB_WRITE_CREATE)) {
                json_object_put(obs->object);
                obs->object = TAKE_PTR(answer);
                free(ret->self_resource_version);
                ret->self_resource_version = obs->object && kube_object_resource_version(obs->object)
                                                     ? strdup(kube_object_resource_version(obs->object))
                                                     : NULL;
        }
        return 0;
}

static const KubeResource spoke_resources[_HUB_SPOKE_RESOURCE_MAX] = {
        [HUB_SPOKE_CSR] = { "certificates.k8s.io", "v1", "certificatesigningrequests",
                            "CertificateSigningRequest", false },
        [HUB_SPOKE_NODE] = { "", "v1", "nodes", "Node", false },
};

const KubeResource *hub_spoke_resource(HubSpokeResource r)
{
        if (r < 0 || r >= _HUB_SPOKE_RESOURCE_MAX)
                return NULL;
        return &spoke_resources[r];
}

int hub_spoke_client(const char *kubeconfig, KubeClient **ret, char **reterr)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        if (isempty(kubeconfig)) {
                *reterr = strdup("the admin kubeconfig is empty");
                return -EINVAL;
        }
        r = kube_config_parse(kubeconfig, strlen(kubeconfig), NULL, NULL, &cfg, &err);
        if (r >= 0)
                r = kube_client_new(cfg,
                                    &(KubeClientOptions){ .user_agent = "cradle-hub/" CRADLE_VERSION,
                                                          .timeout = 30 * USEC_PER_SEC,
                                                          .connect_timeout = 10 * USEC_PER_SEC },
                                    ret, &err);
        if (r < 0)
                *reterr = err ? redact_known_secrets(err) : strdup(strerror(-r));
        return r;
}

static int exec_spoke(HubContext *ctx, const HubControllerType *t, const HubWrite *w, HubExecResult *ret)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL, *path = NULL;
        const KubeResource *res = hub_spoke_resource(w->spoke_resource);
        int r;

        if (!res)
                return -EINVAL;
        r = hub_spoke_client(w->spoke_kubeconfig, &c, &err);
        if (r < 0) {
                ret->failed = true;
                return fail(ret, "spoke client: %s", strna(err)) < 0 ? -ENOMEM : 1;
        }
        if (streq_ptr(w->spoke_verb, "approve")) {
                path = kube_resource_path(res, NULL, w->name, "approval");
                if (!path)
                        return -ENOMEM;
                r = kube_request(c, "PUT", path, "application/json", w->body, NULL, &st);
        } else if (streq_ptr(w->spoke_verb, "patch"))
                r = kube_patch(c, res, NULL, w->name, NULL, KUBE_PATCH_MERGE, w->body, NULL, &st);
        else if (streq_ptr(w->spoke_verb, "delete")) {
                r = kube_delete(c, res, NULL, w->name, NULL, NULL, &st);
                if (r == -ENOENT)
                        r = 0;
        } else
                return -EINVAL;
        if (r < 0) {
                ret->failed = true;
                return fail(ret, "spoke %s %s %s: %s", w->spoke_verb, res->kind, strempty(w->name),
                            st.message ? st.message : strerror(-ERRNO_VALUE(r))) < 0
                               ? -ENOMEM
                               : 1;
        }
        ret->writes++;
        count_write(ctx, t->name, HUB_WRITE_SPOKE, _HUB_KIND_INVALID);
        log_debug("%s: spoke %s %s %s", t->name, w->spoke_verb, res->kind, strempty(w->name));
        return 0;
}

static void exec_event(HubContext *ctx, const HubControllerType *t, const HubWrite *w)
{
        _cleanup_(json_object_putp) json_object *inv = NULL;

        if (!ctx->events || !w->involved)
                return;
        inv = hub_json_copy(w->involved);
        if (!inv)
                return;
        /* objects from a list may lack them; the event needs both */
        if (!json_get_string(inv, "kind")) {
                const KubeResource *res = hub_kind_resource(w->target >= 0 ? w->target : t->kind);
                _cleanup_free_ char *av = NULL;

                if (!res)
                        return;
                av = kube_resource_api_version(res);
                if (!av || json_add_string(inv, "kind", res->kind) < 0 ||
                    json_add_string(inv, "apiVersion", av) < 0)
                        return;
        }
        (void)kube_event_record(ctx->events, inv, w->event_type, w->reason, w->message, NULL);
        count_write(ctx, t->name, HUB_WRITE_EVENT, w->target >= 0 ? w->target : t->kind);
}

int hub_exec(HubContext *ctx, const HubControllerType *t, const HubPlan *plan, HubObserved *obs,
             HubExecResult *ret)
{
        _cleanup_(chain_done) Chain chain = {};
        int r;

        for (size_t i = 0; i < plan->n; i++) {
                const HubWrite *w = &plan->writes[i];

                switch (w->kind) {
                case HUB_WRITE_SERVICE:
                        r = exec_service(ctx, w, obs, ret);
                        if (r >= 0 && !streq(w->method, "GET"))
                                count_write(ctx, t->name, HUB_WRITE_SERVICE, _HUB_KIND_INVALID);
                        break;
                case HUB_WRITE_EVENT:
                        exec_event(ctx, t, w);
                        r = 0;
                        break;
                case HUB_WRITE_SPOKE:
                        r = exec_spoke(ctx, t, w, ret);
                        break;
                default:
                        r = exec_kube(ctx, t, w, obs, &chain, ret);
                        break;
                }
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return 0;
}
