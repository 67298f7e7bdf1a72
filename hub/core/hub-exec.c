/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "hub-exec.h"
#include "hub-inputs.h"
#include "hub-metrics.h"
#include "hub-service.h"
#include "jsonutil.h"
#include "config.h"
#include "kube/kube-config.h"
#include "kube/kube-csr.h"
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

/* ---- writes refused for their size ---- */

bool hub_write_refused_for_size(int error, long code, const char *message)
{
        /* lib/kube says so for 413 and etcd's two size refusals (kube_errno_from_answer()) */
        if (error == -EMSGSIZE)
                return true;
        /* metadata.annotations over 256 KiB: a validation error like any other to lib/kube */
        return code == 422 && message &&
               strstr(message, "metadata.annotations: Too long: must have at most");
}

/* enough for every object a hub reconciles at once to have one */
#define REFUSALS_MAX 256

typedef struct Refusal {
        char *key; /* "<resource>/<namespace>/<name>[/status]" */
        char *content; /* the digest of what was refused */
        char *resource_version; /* of the object it was refused against ("": not known) */
        char *conditions; /* the digest of a status patch's conditions refused alone too, or NULL */
} Refusal;

struct HubRefusals {
        pthread_mutex_t lock;
        Refusal items[REFUSALS_MAX];
        size_t next; /* the slot a new key takes (the oldest) */
};

int hub_refusals_new(HubRefusals **ret)
{
        HubRefusals *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        pthread_mutex_init(&r->lock, NULL);
        *ret = r;
        return 0;
}

static void refusal_done(Refusal *x)
{
        free(x->key);
        free(x->content);
        free(x->resource_version);
        free(x->conditions);
        *x = (Refusal){};
}

HubRefusals *hub_refusals_free(HubRefusals *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < REFUSALS_MAX; i++)
                refusal_done(&r->items[i]);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
}

static Refusal *refusal_find(HubRefusals *r, const char *key)
{
        for (size_t i = 0; i < REFUSALS_MAX; i++)
                if (streq_ptr(r->items[i].key, key))
                        return &r->items[i];
        return NULL;
}

/* that content was refused for that object, and the object did not
 * change since: true, and *ret_conditions the digest of the conditions
 * refused alone too (NULL: none) */
static bool refusals_has(HubRefusals *r, const char *key, const char *content, const char *rv,
                         char **ret_conditions)
{
        Refusal *x;
        bool found;

        *ret_conditions = NULL;
        if (!r)
                return false;
        pthread_mutex_lock(&r->lock);
        x = refusal_find(r, key);
        found = x && streq_ptr(x->content, content) && streq_ptr(x->resource_version, rv);
        if (found && x->conditions)
                *ret_conditions = strdup(x->conditions);
        pthread_mutex_unlock(&r->lock);
        return found;
}

static void refusals_remember(HubRefusals *r, const char *key, const char *content, const char *rv,
                              const char *conditions)
{
        Refusal *x;

        if (!r)
                return;
        pthread_mutex_lock(&r->lock);
        x = refusal_find(r, key);
        if (!x) {
                x = &r->items[r->next];
                r->next = (r->next + 1) % REFUSALS_MAX;
        }
        refusal_done(x);
        x->key = strdup(key);
        x->content = strdup(content);
        x->resource_version = strdup(rv);
        x->conditions = conditions ? strdup(conditions) : NULL;
        if (!x->key || !x->content || !x->resource_version || (conditions && !x->conditions))
                refusal_done(x); /* forgotten: at worst sent once more */
        pthread_mutex_unlock(&r->lock);
}

static void refusals_forget(HubRefusals *r, const char *key)
{
        Refusal *x;

        if (!r)
                return;
        pthread_mutex_lock(&r->lock);
        x = refusal_find(r, key);
        if (x)
                refusal_done(x);
        pthread_mutex_unlock(&r->lock);
}

/* The digest of a write's content, the times of its conditions left
 * out: a condition never stored gets a new lastTransitionTime at every
 * reconcile, and is no other content for that */
static int content_digest(json_object *body, char ret[static 80])
{
        _cleanup_(json_object_putp) json_object *copy = hub_json_copy(body);
        _cleanup_free_ char *text = NULL;
        json_object *conditions = json_get_path(copy, "status.conditions");

        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < hub_json_array_length(conditions); i++) {
                json_object *c = json_object_array_get_idx(conditions, i);

                json_object_object_del(c, "lastTransitionTime");
                json_object_object_del(c, "lastProbeTime");
                json_object_object_del(c, "lastHeartbeatTime");
        }
        text = json_to_string(copy, 0);
        if (!text)
                return -ENOMEM;
        return hub_digest(text, ret);
}

/* A Kubernetes write as the refusals know it: the object's key, the
 * digest of its content (of a status patch: all but its conditions,
 * which are bounded and always sent), the resourceVersion it goes
 * against. */
typedef struct WriteId {
        char *key;
        char content[80];
        const char *resource_version;
} WriteId;

static void write_id_done(WriteId *id)
{
        free(id->key);
}

static int write_id(const HubWrite *w, const KubeResource *res, HubObserved *obs, WriteId *ret)
{
        _cleanup_(json_object_putp) json_object *conditions = NULL, *rest = NULL;
        const char *name = w->name ? w->name : kube_object_name(w->body);
        int r;

        if (w->kind == HUB_WRITE_PATCH_STATUS) {
                r = hub_status_patch_split(w->body, &conditions, &rest);
                if (r < 0)
                        return r;
        }
        ret->key = strdup_printf("%s/%s/%s%s", res->resource, strempty(w->ns), strempty(name),
                                 w->kind == HUB_WRITE_PATCH_STATUS ? "/status" : "");
        if (!ret->key)
                return -ENOMEM;
        r = content_digest(rest ? rest : w->body, ret->content);
        if (r < 0)
                return r;
        ret->resource_version = strempty(w->self && obs->object ? kube_object_resource_version(obs->object)
                                                                : w->resource_version);
        return 0;
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

/* The merge patch body of w, with the resourceVersion it needs. */
static int send_patch(HubContext *ctx, const KubeResource *res, HubKind target, const HubWrite *w,
                      json_object *body, HubObserved *obs, const Chain *chain, json_object **ret_answer,
                      KubeStatus *st)
{
        _cleanup_(json_object_putp) json_object *patch = hub_json_copy(body);
        const char *rv = w->resource_version;

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
        return kube_patch(ctx->kube, res, w->ns, w->name,
                          w->kind == HUB_WRITE_PATCH_STATUS ? "status" : NULL, KUBE_PATCH_MERGE, patch,
                          ret_answer, st);
}

/* After a write the server took: the chain, the count, the reconciled
 * object replaced by the answer (taken). */
static int written(HubContext *ctx, const HubControllerType *t, const HubWrite *w, HubKind target,
                   HubObserved *obs, Chain *chain, json_object **answer, HubExecResult *ret)
{
        if (!w->self && w->kind != HUB_WRITE_DELETE && w->resource_version && *answer &&
            kube_object_resource_version(*answer)) {
                char *now = strdup(kube_object_resource_version(*answer)),
                     *observed = strdup(chain_same(chain, target, w) &&
                                                        streq(w->resource_version, chain->observed)
                                                ? chain->observed
                                                : w->resource_version);

                chain_done(chain);
                *chain = (Chain){ target, w->ns, w->name, observed, now };
                if (!observed || !now)
                        return -ENOMEM;
        }
        ret->writes++;
        count_write(ctx, t->name, w->kind, target);
        log_debug("%s: %s %s %s/%s", t->name, hub_write_kind_to_string(w->kind),
                  strna(hub_kind_to_string(target)), strempty(w->ns), strempty(w->name));
        if (w->self && *answer &&
            (w->kind == HUB_WRITE_PATCH || w->kind == HUB_WRITE_PATCH_STATUS ||
             w->kind == HUB_WRITE_CREATE)) {
                json_object_put(obs->object);
                obs->object = TAKE_PTR(*answer);
                free(ret->self_resource_version);
                ret->self_resource_version = obs->object && kube_object_resource_version(obs->object)
                                                     ? strdup(kube_object_resource_version(obs->object))
                                                     : NULL;
        }
        return 0;
}

/* w was refused for its size, now (st) or before with the same content
 * against the same object (st NULL; conditions_refused: the digest of
 * its conditions refused alone too, or NULL): logged once, remembered,
 * and of a status patch the conditions alone are written, unless they
 * were refused as they are. Stops the plan. */
static int refused(HubContext *ctx, const HubControllerType *t, const HubWrite *w, HubKind target,
                   const KubeResource *res, HubObserved *obs, Chain *chain, const WriteId *id,
                   const KubeStatus *st, const char *conditions_refused, HubExecResult *ret)
{
        _cleanup_(json_object_putp) json_object *conditions = NULL, *rest = NULL, *answer = NULL;
        _cleanup_kube_status_ KubeStatus cst = {};
        _cleanup_free_ char *rv = strdup(id->resource_version), *refused_now = NULL;
        const char *kind = strna(hub_kind_to_string(target)), *verb = hub_write_kind_to_string(w->kind);
        char cdg[80] = "";
        int r;

        if (!rv)
                return -ENOMEM;
        ret->refused = true;
        if (st)
                log_error("%s: the API server refused the %s of %s %s/%s for its size; that content is not "
                          "sent again: %s",
                          t->name, verb, kind, strempty(w->ns), strempty(w->name), strna(st->message));
        else
                log_debug("%s: the %s of %s %s/%s was refused for its size before, not sent again", t->name,
                          verb, kind, strempty(w->ns), strempty(w->name));
        (void)fail(ret, "%s %s %s/%s: refused for its size", verb, kind, strempty(w->ns), strempty(w->name));
        if (w->kind == HUB_WRITE_PATCH_STATUS) {
                r = hub_status_patch_split(w->body, &conditions, &rest);
                if (r < 0)
                        return r;
        }
        if (conditions && rest) {
                r = content_digest(conditions, cdg);
                if (r < 0)
                        return r;
        }
        if (conditions && rest && conditions_refused && streq(conditions_refused, cdg))
                refused_now = strdup(cdg);
        else if (conditions && rest) {
                /* the conditions are bounded (hub-text.h): they may fit */
                r = send_patch(ctx, res, target, w, conditions, obs, chain, &answer, &cst);
                if (r >= 0) {
                        r = free_and_strdup(&rv, strempty(kube_object_resource_version(answer)));
                        if (r >= 0)
                                r = written(ctx, t, w, target, obs, chain, &answer, ret);
                        if (r < 0)
                                return r;
                } else if (r == -ENOMEM)
                        return r;
                else {
                        log_debug("%s: the conditions of %s %s/%s alone were refused too: %s", t->name, kind,
                                  strempty(w->ns), strempty(w->name), strna(cst.message));
                        if (hub_write_refused_for_size(r, cst.code, cst.message))
                                refused_now = strdup(cdg);
                }
        }
        refusals_remember(ctx->refusals, id->key, id->content, rv, refused_now);
        return 1;
}

static int exec_kube(HubContext *ctx, const HubControllerType *t, const HubWrite *w, HubObserved *obs,
                     Chain *chain, HubExecResult *ret)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(json_object_putp) json_object *answer = NULL;
        _cleanup_(write_id_done) WriteId id = {};
        HubKind target = w->self ? t->kind : w->target;
        const KubeResource *res = hub_kind_resource(target);
        KubeResource other;
        int r;

        /* an object of a kind the hub does not watch (a Cluster API
         * infrastructure machine cloned from its template): its resource
         * from its own apiVersion and kind */
        if (!res && target == HUB_KIND_OTHER && w->kind == HUB_WRITE_CREATE) {
                r = kube_resolve_kind(ctx->kube, json_get_string(w->body, "apiVersion"),
                                      json_get_string(w->body, "kind"), &other, &st);
                if (r < 0)
                        return kube_failed(ret, w, r, &st);
                res = &other;
        }
        if (!res)
                return -EINVAL;
        if (w->kind != HUB_WRITE_DELETE) {
                _cleanup_free_ char *conditions_refused = NULL;

                r = write_id(w, res, obs, &id);
                if (r < 0)
                        return r;
                if (refusals_has(ctx->refusals, id.key, id.content, id.resource_version,
                                 &conditions_refused))
                        return refused(ctx, t, w, target, res, obs, chain, &id, NULL, conditions_refused,
                                       ret);
        }
        switch (w->kind) {
        case HUB_WRITE_CREATE:
                r = kube_create(ctx->kube, res, w->ns, w->body, &answer, &st);
                break;
        case HUB_WRITE_PATCH:
        case HUB_WRITE_PATCH_STATUS:
                r = send_patch(ctx, res, target, w, w->body, obs, chain, &answer, &st);
                break;
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
        if (r < 0 && id.key && hub_write_refused_for_size(r, st.code, st.message))
                return refused(ctx, t, w, target, res, obs, chain, &id, &st, NULL, ret);
        if (r < 0)
                return kube_failed(ret, w, r, &st);
        if (id.key)
                refusals_forget(ctx->refusals, id.key);
        return written(ctx, t, w, target, obs, chain, &answer, ret);
}

static const KubeResource spoke_resources[_HUB_SPOKE_RESOURCE_MAX] = {
        [HUB_SPOKE_CSR] = { "certificates.k8s.io", "v1", "certificatesigningrequests",
                            "CertificateSigningRequest", false },
        [HUB_SPOKE_NODE] = { "", "v1", "nodes", "Node", false },
        [HUB_SPOKE_CLUSTER_ROLE_BINDING] = { "rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                                             "ClusterRoleBinding", false },
};

/* how long a spoke's signer may take to sign an approved CSR
 * (kube-controller-manager's csrsigning: within a second here) */
#define SPOKE_SIGNER_TIMEOUT (10 * USEC_PER_SEC)

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
        /* a user agent of its own: the new cluster's requests are told
         * from the hub cluster's (whose RBAC the Deployment grants) in an
         * API server's log, also when a test plays both */
        if (r >= 0)
                r = kube_client_new(cfg,
                                    &(KubeClientOptions){ .user_agent = "cradle-hub-spoke/" CRADLE_VERSION,
                                                          .timeout = 30 * USEC_PER_SEC,
                                                          .connect_timeout = 10 * USEC_PER_SEC },
                                    ret, &err);
        if (r < 0)
                *reterr = err ? redact_known_secrets(err) : strdup(strerror(-r));
        return r;
}

/* hub_plan_spoke_mint(): the result, whatever it is, goes to obs->results */
static int spoke_mint(KubeClient *c, const HubWrite *w, HubObserved *obs)
{
        json_object *b = w->body, *names = json_get(b, "kubeconfig"), *orgs = json_get(b, "organizations");
        _cleanup_(kube_client_cert_done) KubeClientCert cert = {};
        _cleanup_strv_free_ char **groups = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_erase_ char *text = NULL;
        _cleanup_(json_object_putp) json_object *res = NULL;
        usec_t nb, na;
        int r;

        for (size_t i = 0; i < hub_json_array_length(orgs); i++)
                if (strv_extend(&groups, json_object_get_string(json_object_array_get_idx(orgs, i))) < 0)
                        return -ENOMEM;
        if (json_get(b, "binding")) {
                _cleanup_kube_status_ KubeStatus st = {};

                r = kube_create(c, hub_spoke_resource(HUB_SPOKE_CLUSTER_ROLE_BINDING), NULL,
                                json_get(b, "binding"), NULL, &st);
                if (r < 0 && r != -EEXIST) {
                        _cleanup_free_ char *m = strdup_printf("cannot create the ClusterRoleBinding: %s",
                                                               st.message ?: strerror(-ERRNO_VALUE(r)));

                        return m ? hub_call_results_add(&obs->results, w->tag, r, st.code, NULL, m)
                                 : -ENOMEM;
                }
        }
        r = kube_client_cert_request(
                c,
                &(KubeClientCertRequest){
                        .common_name = strempty(json_get_string(b, "commonName")),
                        .organizations = groups,
                        .csr = json_get(b, "csr"),
                        .approval_reason = strempty(json_get_string(json_get(b, "approval"), "reason")),
                        .approval_message = strempty(json_get_string(json_get(b, "approval"), "message")),
                        .timeout = SPOKE_SIGNER_TIMEOUT },
                &cert, &err);
        if (r >= 0)
                r = kube_config_format_client_cert(kube_client_config(c), json_get_string(names, "cluster"),
                                                   json_get_string(names, "user"),
                                                   json_get_string(names, "context"), cert.cert_pem,
                                                   cert.key_pem, &text);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return hub_call_results_add(&obs->results, w->tag, r, 0, NULL,
                                            err ?: "cannot make the kubeconfig of the certificate");
        res = json_new_object();
        if (!res || json_add_string(res, "csr", cert.csr_name) < 0 ||
            json_add_string(res, "kubeconfig", text) < 0)
                return -ENOMEM;
        /* its validity, for the renewal's time */
        if (kube_cert_validity(cert.cert_pem, &nb, &na, NULL) >= 0 &&
            (json_add_int64(res, "notBefore", (int64_t)(nb / USEC_PER_SEC)) < 0 ||
             json_add_int64(res, "notAfter", (int64_t)(na / USEC_PER_SEC)) < 0))
                return -ENOMEM;
        return hub_call_results_add(&obs->results, w->tag, 0, 201, TAKE_PTR(res), NULL);
}

static int exec_spoke(HubContext *ctx, const HubControllerType *t, const HubWrite *w, HubObserved *obs,
                      HubExecResult *ret)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL, *path = NULL;
        const KubeResource *res = hub_spoke_resource(w->spoke_resource);
        int r;

        if (!res)
                return -EINVAL;
        r = hub_spoke_client(w->spoke_kubeconfig, &c, &err);
        if (r < 0 && streq_ptr(w->spoke_verb, "mint")) {
                _cleanup_free_ char *m = strdup_printf("spoke client: %s", strna(err));

                if (!m || hub_call_results_add(&obs->results, w->tag, r, 0, NULL, m) < 0)
                        return -ENOMEM;
                ret->redecide = true;
                return 0;
        }
        if (r < 0) {
                ret->failed = true;
                return fail(ret, "spoke client: %s", strna(err)) < 0 ? -ENOMEM : 1;
        }
        if (streq_ptr(w->spoke_verb, "mint")) {
                r = spoke_mint(c, w, obs);
                if (r < 0)
                        return r;
                ret->redecide = true;
                count_write(ctx, t->name, HUB_WRITE_SPOKE, _HUB_KIND_INVALID);
                log_debug("%s: spoke mint %s", t->name, strna(w->tag));
                return 0;
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
                        r = exec_spoke(ctx, t, w, obs, ret);
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
