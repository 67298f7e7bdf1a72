/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "hub-cache.h"
#include "hub-plan.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

#define MAX_KIND_HANDLERS 8

typedef struct KindCache {
        bool wanted; /* resolved and served */
        KubeResource resource; /* as resolved (strings owned by the client) */
        KubeInformer **informers; /* one per namespace, or one for all */
        size_t n_informers;
        KubeInformerHandlers handlers[MAX_KIND_HANDLERS];
        size_t n_handlers;
} KindCache;

struct HubCache {
        KubeClient *client;
        char **namespaces;
        usec_t resync_period;
        KindCache kinds[_HUB_KIND_MAX];
        bool resolved, started;
        bool cluster_api; /* the Cluster API kinds are wanted (--capi) */
};

/* ---- keys ---- */

int hub_key_split(const char *key, char **ret_ns, char **ret_name)
{
        const char *slash = strchr(key, '/');
        _cleanup_free_ char *ns = NULL, *name = NULL;

        if (slash) {
                ns = strndup(key, (size_t)(slash - key));
                name = strdup(slash + 1);
        } else
                name = strdup(key);
        if (!name || (slash && !ns))
                return -ENOMEM;
        *ret_ns = TAKE_PTR(ns);
        *ret_name = TAKE_PTR(name);
        return 0;
}

static int push_nsvalue(char ***l, const char *ns, const char *value)
{
        return strv_extendf(l, "%s/%s", strempty(ns), value);
}

/* ---- index functions ---- */

static int index_annotation(json_object *obj, char ***ret, void *userdata)
{
        const char *v = hub_object_annotation(obj, userdata);

        *ret = NULL;
        if (isempty(v))
                return 0;
        return strv_extend(ret, v);
}

/* "refns/refname" of an object reference at the dotted path; the object's
 * own namespace when the reference has none */
static int index_ref(json_object *obj, char ***ret, void *userdata)
{
        json_object *ref = json_get_path(obj, userdata);
        const char *name = json_get_string(ref, "name"), *ns = json_get_string(ref, "namespace");

        *ret = NULL;
        if (isempty(name))
                return 0;
        return push_nsvalue(ret, isempty(ns) ? kube_object_namespace(obj) : ns, name);
}

/* "ns/<string at dotted path>" */
static int index_field(json_object *obj, char ***ret, void *userdata)
{
        json_object *v = json_get_path(obj, userdata);
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

        *ret = NULL;
        if (isempty(s))
                return 0;
        return push_nsvalue(ret, kube_object_namespace(obj), s);
}

static int index_field_lower(json_object *obj, char ***ret, void *userdata)
{
        json_object *v = json_get_path(obj, userdata);
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
        _cleanup_free_ char *l = NULL;

        *ret = NULL;
        if (isempty(s))
                return 0;
        l = strdup_lower(s);
        if (!l)
                return -ENOMEM;
        return push_nsvalue(ret, kube_object_namespace(obj), l);
}

static int index_namespace(json_object *obj, char ***ret, void *userdata)
{
        (void)userdata;
        *ret = NULL;
        return strv_extend(ret, strempty(kube_object_namespace(obj)));
}

static int index_label(json_object *obj, char ***ret, void *userdata)
{
        const char *v = hub_object_label(obj, userdata);

        *ret = NULL;
        if (isempty(v))
                return 0;
        return push_nsvalue(ret, kube_object_namespace(obj), v);
}

int hub_index_infraenv_nmstate_selector(json_object *obj, char ***ret, void *userdata)
{
        json_object *sel = json_get_path(obj, "spec.nmStateConfigLabelSelector");
        json_object *ml = json_get(sel, "matchLabels"), *me = json_get(sel, "matchExpressions");
        _cleanup_strv_free_ char **l = NULL;
        const char *ns = kube_object_namespace(obj);
        int r;

        (void)userdata;
        *ret = NULL;
        if (json_object_is_type(ml, json_type_object) && json_object_object_length(ml) > 0) {
                json_object_object_foreach (ml, k, v) {
                        r = strv_extendf(&l, "%s/%s=%s", strempty(ns), k,
                                         strempty(json_object_get_string(v)));
                        if (r < 0)
                                return r;
                }
        } else if (json_object_is_type(me, json_type_array) && json_object_array_length(me) > 0) {
                r = push_nsvalue(&l, ns, HUB_INDEX_ALL);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int hub_index_nmstate_label(json_object *obj, char ***ret, void *userdata)
{
        json_object *labels = json_get(json_get(obj, "metadata"), "labels");
        _cleanup_strv_free_ char **l = NULL;
        const char *ns = kube_object_namespace(obj);
        int r;

        (void)userdata;
        *ret = NULL;
        r = push_nsvalue(&l, ns, HUB_INDEX_ALL);
        if (r < 0)
                return r;
        if (json_object_is_type(labels, json_type_object)) {
                json_object_object_foreach (labels, k, v) {
                        r = strv_extendf(&l, "%s/%s=%s", strempty(ns), k,
                                         strempty(json_object_get_string(v)));
                        if (r < 0)
                                return r;
                }
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int hub_index_agent_mac(json_object *obj, char ***ret, void *userdata)
{
        json_object *ifs = json_get_path(obj, "status.inventory.interfaces");
        _cleanup_strv_free_ char **l = NULL;
        const char *ns = kube_object_namespace(obj);

        (void)userdata;
        *ret = NULL;
        for (size_t i = 0; json_object_is_type(ifs, json_type_array) && i < json_object_array_length(ifs);
             i++) {
                const char *mac = json_get_string(json_object_array_get_idx(ifs, i), "macAddress");
                _cleanup_free_ char *lower = NULL;
                int r;

                if (isempty(mac))
                        continue;
                lower = strdup_lower(mac);
                if (!lower)
                        return -ENOMEM;
                r = push_nsvalue(&l, ns, lower);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* "ns/<name>" of each manifests ConfigMap an ACI names */
static int index_aci_manifests(json_object *obj, char ***ret, void *userdata)
{
        json_object *refs = json_get_path(obj, "spec.manifestsConfigMapRefs");
        const char *legacy = json_get_string(json_get_path(obj, "spec.manifestsConfigMapRef"), "name");
        _cleanup_strv_free_ char **l = NULL;
        int r;

        (void)userdata;
        *ret = NULL;
        for (size_t i = 0; json_object_is_type(refs, json_type_array) && i < json_object_array_length(refs);
             i++) {
                const char *n = json_get_string(json_object_array_get_idx(refs, i), "name");

                if (!isempty(n)) {
                        r = push_nsvalue(&l, kube_object_namespace(obj), n);
                        if (r < 0)
                                return r;
                }
        }
        if (!isempty(legacy)) {
                r = push_nsvalue(&l, kube_object_namespace(obj), legacy);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* the string at a dotted path, without a namespace */
static int index_plain_field(json_object *obj, char ***ret, void *userdata)
{
        json_object *v = json_get_path(obj, userdata);
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

        *ret = NULL;
        if (isempty(s))
                return 0;
        return strv_extend(ret, s);
}

typedef struct IndexDef {
        HubKind kind;
        const char *name;
        KubeIndexFn fn;
        const char *arg;
} IndexDef;

/* every index of hub-cache.h, by kind */
static const IndexDef index_defs[] = {
        { HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_ID, index_annotation, HUB_ANNOTATION_INFRAENV_ID },
        { HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_NAMESPACE, index_namespace, NULL },
        { HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_CLUSTERREF, index_ref, "spec.clusterRef" },
        { HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_PULLSECRET, index_ref, "spec.pullSecretRef" },
        { HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_NMSTATE_SELECTOR, hub_index_infraenv_nmstate_selector,
          NULL },
        { HUB_KIND_NMSTATECONFIG, HUB_INDEX_NMSTATE_LABEL, hub_index_nmstate_label, NULL },
        { HUB_KIND_AGENT, HUB_INDEX_AGENT_INFRAENV, index_label, HUB_LABEL_INFRAENV },
        { HUB_KIND_AGENT, HUB_INDEX_AGENT_MAC, hub_index_agent_mac, NULL },
        { HUB_KIND_AGENT, HUB_INDEX_AGENT_CD, index_ref, "spec.clusterDeploymentName" },
        { HUB_KIND_AGENT, HUB_INDEX_AGENT_BMH, index_label, HUB_LABEL_BMH },
        { HUB_KIND_BMH, HUB_INDEX_BMH_MAC, index_field_lower, "spec.bootMACAddress" },
        { HUB_KIND_BMH, HUB_INDEX_BMH_INFRAENV, index_label, HUB_LABEL_INFRAENV },
        { HUB_KIND_PPI, HUB_INDEX_PPI_INFRAENV, index_label, HUB_LABEL_INFRAENV },
        { HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_CLUSTER_ID, index_annotation, HUB_ANNOTATION_CLUSTER_ID },
        { HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_PULLSECRET, index_field, "spec.pullSecretRef.name" },
        { HUB_KIND_AGENTCLUSTERINSTALL, HUB_INDEX_ACI_CD, index_field, "spec.clusterDeploymentRef.name" },
        { HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_ACI, index_field, "spec.clusterInstallRef.name" },
        { HUB_KIND_AGENTCLUSTERINSTALL, HUB_INDEX_ACI_MANIFESTS, index_aci_manifests, NULL },
        { HUB_KIND_AGENTCLUSTERINSTALL, HUB_INDEX_ACI_IMAGESET, index_plain_field, "spec.imageSetRef.name" },
        { HUB_KIND_MACHINE, HUB_INDEX_MACHINE_CLUSTER, index_label, HUB_CAPI_LABEL_CLUSTER_NAME },
        { HUB_KIND_OAC, HUB_INDEX_OAC_CLUSTER, index_label, HUB_CAPI_LABEL_CLUSTER_NAME },
        { HUB_KIND_OACP, HUB_INDEX_OACP_CLUSTER, index_label, HUB_CAPI_LABEL_CLUSTER_NAME },
        { HUB_KIND_OACP, HUB_INDEX_OACP_CLUSTER_ID, index_annotation, HUB_ANNOTATION_CLUSTER_ID },
        { HUB_KIND_OACP, HUB_INDEX_OACP_INFRAENV_ID, index_annotation, HUB_ANNOTATION_INFRAENV_ID },
        { HUB_KIND_MACHINEDEPLOYMENT, HUB_INDEX_MD_CLUSTER, index_field, "spec.clusterName" },
};

/* ---- the cache ---- */

int hub_cache_new(KubeClient *client, char *const *namespaces, usec_t resync_period, HubCache **ret)
{
        _cleanup_free_ HubCache *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->client = client;
        c->resync_period = resync_period;
        if (namespaces && namespaces[0]) {
                c->namespaces = strv_copy(namespaces);
                if (!c->namespaces)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

void hub_cache_stop(HubCache *c)
{
        if (!c)
                return;
        for (HubKind k = 0; k < _HUB_KIND_MAX; k++)
                for (size_t i = 0; i < c->kinds[k].n_informers; i++)
                        kube_informer_stop(c->kinds[k].informers[i]);
}

HubCache *hub_cache_free(HubCache *c)
{
        if (!c)
                return NULL;
        hub_cache_stop(c);
        for (HubKind k = 0; k < _HUB_KIND_MAX; k++) {
                for (size_t i = 0; i < c->kinds[k].n_informers; i++)
                        kube_informer_free(c->kinds[k].informers[i]);
                free(c->kinds[k].informers);
        }
        strv_free(c->namespaces);
        free(c);
        return NULL;
}

int hub_cache_add_handlers(HubCache *c, HubKind k, const KubeInformerHandlers *h)
{
        KindCache *kc;

        if (k < 0 || k >= _HUB_KIND_MAX || c->started)
                return -EINVAL;
        kc = &c->kinds[k];
        if (kc->n_handlers >= MAX_KIND_HANDLERS)
                return -ENOSPC;
        kc->handlers[kc->n_handlers++] = *h;
        return 0;
}

static int make_informer(HubCache *c, HubKind k, const char *ns, KubeInformer **ret)
{
        const HubKindInfo *info = hub_kind_info(k);
        KindCache *kc = &c->kinds[k];
        _cleanup_(kube_informer_freep) KubeInformer *inf = NULL;
        KubeInformerOptions o = {
                .label_selector = info->label_selector,
                .resync_period = c->resync_period,
        };
        int r;

        r = kube_informer_new(c->client, &kc->resource, ns, &o, &inf);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(index_defs); i++) {
                if (index_defs[i].kind != k)
                        continue;
                r = kube_informer_add_index(inf, index_defs[i].name, index_defs[i].fn,
                                            (void *)index_defs[i].arg);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < kc->n_handlers; i++) {
                r = kube_informer_add_handlers(inf, &kc->handlers[i]);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(inf);
        return 0;
}

int hub_cache_resolve(HubCache *c, char **reterr)
{
        int r;

        for (HubKind k = 0; k < _HUB_KIND_MAX; k++) {
                const HubKindInfo *info = hub_kind_info(k);
                KindCache *kc = &c->kinds[k];
                _cleanup_kube_status_ KubeStatus st = {};
                _cleanup_free_ char *api_version = NULL;

                api_version = isempty(info->resource.group)
                                      ? strdup(info->resource.version)
                                      : strdup_printf("%s/%s", info->resource.group, info->resource.version);
                if (!api_version)
                        return -ENOMEM;
                /* one side or the other: the Cluster API provider watches
                 * none of the assisted-installer's kinds (a management
                 * cluster may have none, or another operator's), the
                 * assisted-installer controllers none of Cluster API's;
                 * both read core Secrets and ConfigMaps */
                if (!isempty(info->resource.group) && info->cluster_api != c->cluster_api)
                        continue;
                r = kube_resolve_kind(c->client, api_version, info->resource.kind, &kc->resource, &st);
                /* the provider's own kinds are what it is for: not optional */
                if (r == -ENOENT && info->optional)
                        continue;
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("cannot find the resource of %s %s%s: %s",
                                                        info->resource.kind, api_version,
                                                        r == -ENOENT ? " (is its CRD installed?)" : "",
                                                        strna(st.message));
                        return r;
                }
                kc->wanted = true;
        }
        c->resolved = true;
        return 0;
}

int hub_cache_start(HubCache *c, char **reterr)
{
        int r;

        if (c->started)
                return -EALREADY;
        if (!c->resolved) {
                r = hub_cache_resolve(c, reterr);
                if (r < 0)
                        return r;
        }
        for (HubKind k = 0; k < _HUB_KIND_MAX; k++) {
                const HubKindInfo *info = hub_kind_info(k);
                KindCache *kc = &c->kinds[k];
                size_t n = c->namespaces && info->resource.namespaced ? strv_length(c->namespaces) : 1;

                if (!kc->wanted)
                        continue;
                kc->informers = calloc(n, sizeof(KubeInformer *));
                if (!kc->informers)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        r = make_informer(
                                c, k, c->namespaces && info->resource.namespaced ? c->namespaces[i] : NULL,
                                &kc->informers[i]);
                        if (r < 0)
                                return r;
                        kc->n_informers++;
                }
        }
        c->started = true;
        for (HubKind k = 0; k < _HUB_KIND_MAX; k++)
                for (size_t i = 0; i < c->kinds[k].n_informers; i++) {
                        r = kube_informer_start(c->kinds[k].informers[i]);
                        if (r < 0) {
                                if (reterr)
                                        *reterr = strdup_printf("cannot start the informer of %s: %s",
                                                                hub_kind_to_string(k), strerror(-r));
                                return r;
                        }
                }
        return 0;
}

void hub_cache_want_cluster_api(HubCache *c, bool want)
{
        c->cluster_api = want;
}

bool hub_cache_has_kind(HubCache *c, HubKind k)
{
        return k >= 0 && k < _HUB_KIND_MAX && c->kinds[k].wanted;
}

static bool kind_started(HubCache *c, HubKind k)
{
        return hub_cache_has_kind(c, k) && c->kinds[k].n_informers > 0;
}

bool hub_cache_synced(HubCache *c)
{
        if (!c->started)
                return false;
        for (HubKind k = 0; k < _HUB_KIND_MAX; k++)
                for (size_t i = 0; i < c->kinds[k].n_informers; i++)
                        if (!kube_informer_has_synced(c->kinds[k].informers[i]))
                                return false;
        return true;
}

int hub_cache_wait_synced(HubCache *c, usec_t timeout)
{
        usec_t until = now_usec(CLOCK_MONOTONIC) + timeout;

        for (HubKind k = 0; k < _HUB_KIND_MAX; k++)
                for (size_t i = 0; i < c->kinds[k].n_informers; i++) {
                        usec_t now = now_usec(CLOCK_MONOTONIC);
                        int r;

                        if (now >= until)
                                return -ETIMEDOUT;
                        r = kube_informer_wait_synced(c->kinds[k].informers[i], until - now);
                        if (r < 0)
                                return r;
                }
        return 0;
}

bool hub_cache_watches_namespace(HubCache *c, const char *ns)
{
        return !c->namespaces || strv_contains(c->namespaces, strempty(ns));
}

char *const *hub_cache_namespaces(HubCache *c)
{
        return c->namespaces;
}

static KubeInformer *informer_for(HubCache *c, HubKind k, const char *ns)
{
        KindCache *kc;

        if (!kind_started(c, k))
                return NULL;
        kc = &c->kinds[k];
        if (!c->namespaces || !kc->resource.namespaced)
                return kc->informers[0];
        for (size_t i = 0; c->namespaces[i]; i++)
                if (streq(c->namespaces[i], strempty(ns)))
                        return kc->informers[i];
        return NULL;
}

int hub_cache_get(HubCache *c, HubKind k, const char *ns, const char *name, json_object **ret)
{
        KubeInformer *inf = informer_for(c, k, ns);
        _cleanup_free_ char *key = NULL;

        if (!inf || isempty(name))
                return -ENOENT;
        key = hub_kind_info(k)->resource.namespaced ? strdup_printf("%s/%s", strempty(ns), name)
                                                    : strdup(name);
        if (!key)
                return -ENOMEM;
        return kube_informer_get(inf, key, ret);
}

int hub_cache_get_key(HubCache *c, HubKind k, const char *key, json_object **ret)
{
        _cleanup_free_ char *ns = NULL, *name = NULL;
        int r;

        r = hub_key_split(key, &ns, &name);
        if (r < 0)
                return r;
        return hub_cache_get(c, k, ns, name, ret);
}

int hub_cache_index_keys(HubCache *c, HubKind k, const char *index, const char *value, char ***ret)
{
        _cleanup_strv_free_ char **all = NULL;
        KindCache *kc;
        int r;

        if (!kind_started(c, k)) {
                all = calloc(1, sizeof(char *));
                if (!all)
                        return -ENOMEM;
                *ret = TAKE_PTR(all);
                return 0;
        }
        kc = &c->kinds[k];
        for (size_t i = 0; i < kc->n_informers; i++) {
                _cleanup_strv_free_ char **keys = NULL;

                r = kube_informer_index_keys(kc->informers[i], index, value, &keys);
                if (r < 0)
                        return r;
                if (kc->n_informers == 1) {
                        all = TAKE_PTR(keys);
                        break;
                }
                STRV_FOREACH (key, keys) {
                        r = strv_extend(&all, *key);
                        if (r < 0)
                                return r;
                }
        }
        if (!all) {
                all = calloc(1, sizeof(char *));
                if (!all)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(all);
        return 0;
}

int hub_cache_index_keys_any(HubCache *c, HubKind k, const char *index, char *const *values, char ***ret)
{
        _cleanup_strv_free_ char **all = NULL;
        int r;

        STRV_FOREACH (v, values) {
                _cleanup_strv_free_ char **keys = NULL;

                r = hub_cache_index_keys(c, k, index, *v, &keys);
                if (r < 0)
                        return r;
                STRV_FOREACH (key, keys)
                        if (!strv_contains(all, *key) && strv_extend(&all, *key) < 0)
                                return -ENOMEM;
        }
        *ret = TAKE_PTR(all);
        return 0;
}

int hub_cache_keys_referring(HubCache *c, HubKind k, const char *index, json_object *obj, char ***ret)
{
        _cleanup_free_ char *v = strdup_printf("%s/%s", strempty(kube_object_namespace(obj)),
                                               strempty(kube_object_name(obj)));

        if (!v)
                return -ENOMEM;
        return hub_cache_index_keys(c, k, index, v, ret);
}

int hub_cache_foreach(HubCache *c, HubKind k, int (*cb)(json_object *obj, void *userdata), void *userdata)
{
        if (!kind_started(c, k))
                return 0;
        for (size_t i = 0; i < c->kinds[k].n_informers; i++) {
                int r = kube_informer_foreach(c->kinds[k].informers[i], cb, userdata);

                if (r < 0)
                        return r;
        }
        return 0;
}

size_t hub_cache_count(HubCache *c, HubKind k)
{
        size_t n = 0;

        if (!kind_started(c, k))
                return 0;
        for (size_t i = 0; i < c->kinds[k].n_informers; i++)
                n += kube_informer_count(c->kinds[k].informers[i]);
        return n;
}
