/* SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "assisted/assisted-user.h"
#include "cleanup.h"
#include "hub-plan.h"
#include "hub-text.h"
#include "jsonutil.h"
#include "strutil.h"

/* ---- call results ---- */

void hub_call_results_done(HubCallResults *r)
{
        for (size_t i = 0; i < r->n; i++) {
                free(r->items[i].tag);
                free(r->items[i].message);
                json_object_put(r->items[i].body);
        }
        free(r->items);
        *r = (HubCallResults){};
}

const HubCallResult *hub_call_results_find(const HubCallResults *r, const char *tag)
{
        for (size_t i = r->n; i > 0; i--)
                if (streq_ptr(r->items[i - 1].tag, tag))
                        return &r->items[i - 1];
        return NULL;
}

int hub_call_results_add(HubCallResults *r, const char *tag, int error, long status, json_object *body,
                         const char *message)
{
        HubCallResult *n;

        n = realloc(r->items, (r->n + 1) * sizeof(*n));
        if (!n) {
                json_object_put(body);
                return -ENOMEM;
        }
        r->items = n;
        n = &r->items[r->n];
        *n = (HubCallResult){ .error = error, .status = status, .body = body };
        n->tag = strdup(tag);
        n->message = message ? strdup(message) : NULL;
        r->n++;
        if (!n->tag || (message && !n->message))
                return -ENOMEM;
        return 0;
}

bool hub_call_is_user_error(const HubCallResult *r)
{
        return r && r->error < 0 && r->status >= 400 && r->status < 500;
}

void hub_observed_done(HubObserved *o)
{
        free(o->ns);
        free(o->name);
        json_object_put(o->object);
        hub_call_results_done(&o->results);
        *o = (HubObserved){};
}

/* ---- plans ---- */

static const char *const write_kind_names[_HUB_WRITE_KIND_MAX] = {
        [HUB_WRITE_SERVICE] = "service",     [HUB_WRITE_CREATE] = "create", [HUB_WRITE_PATCH] = "patch",
        [HUB_WRITE_PATCH_STATUS] = "status", [HUB_WRITE_DELETE] = "delete", [HUB_WRITE_EVENT] = "event",
        [HUB_WRITE_SPOKE] = "spoke",
};

const char *hub_write_kind_to_string(HubWriteKind k)
{
        if (k < 0 || k >= _HUB_WRITE_KIND_MAX)
                return NULL;
        return write_kind_names[k];
}

static void write_done(HubWrite *w)
{
        free(w->tag);
        free(w->operation);
        free(w->method);
        free(w->path);
        free(w->ns);
        free(w->name);
        free(w->resource_version);
        free(w->uid);
        json_object_put(w->body);
        free(w->reason);
        free(w->message);
        json_object_put(w->involved);
        erase_and_free(w->spoke_kubeconfig);
        free(w->spoke_verb);
}

void hub_plan_reset(HubPlan *p)
{
        for (size_t i = 0; i < p->n; i++)
                write_done(&p->writes[i]);
        free(p->writes);
        free(p->reason);
        *p = (HubPlan){};
}

void hub_plan_done(HubPlan *p)
{
        hub_plan_reset(p);
}

static HubWrite *plan_append(HubPlan *p, HubWriteKind kind)
{
        HubWrite *n = realloc(p->writes, (p->n + 1) * sizeof(*n));

        if (!n)
                return NULL;
        p->writes = n;
        n = &p->writes[p->n++];
        *n = (HubWrite){ .kind = kind, .target = _HUB_KIND_INVALID };
        return n;
}

static int dup_or_null(char **dst, const char *s)
{
        if (!s)
                return 0;
        *dst = strdup(s);
        return *dst ? 0 : -ENOMEM;
}

int hub_plan_service(HubPlan *p, const char *tag, const char *method, const char *path, json_object *body,
                     long expect, bool feedback)
{
        HubWrite *w = plan_append(p, HUB_WRITE_SERVICE);

        if (!w) {
                json_object_put(body);
                return -ENOMEM;
        }
        w->body = body;
        w->expect = expect;
        w->feedback = feedback;
        if (dup_or_null(&w->tag, tag) < 0 || dup_or_null(&w->method, method) < 0 ||
            dup_or_null(&w->path, path) < 0)
                return -ENOMEM;
        return 0;
}

int hub_plan_op(HubPlan *p, const char *tag, int op, char *const *params, const char *query,
                json_object *body, bool feedback)
{
        const AssistedOpInfo *info = assisted_op_info(op);
        _cleanup_free_ char *path = NULL;
        int r;

        if (!info) {
                json_object_put(body);
                return -EINVAL;
        }
        r = assisted_op_path(op, params, query, &path);
        if (r < 0) {
                json_object_put(body);
                return r;
        }
        r = hub_plan_service(p, tag ? tag : info->id, info->method, path, body, info->success, feedback);
        if (r < 0)
                return r;
        return dup_or_null(&p->writes[p->n - 1].operation, info->id);
}

int hub_plan_download(HubPlan *p, const char *tag, const char *path)
{
        int r = hub_plan_service(p, tag, "GET", path, NULL, 200, true);

        if (r < 0)
                return r;
        p->writes[p->n - 1].text = true;
        return dup_or_null(&p->writes[p->n - 1].operation,
                           assisted_op_info(ASSISTED_OP_DOWNLOAD_INFRA_ENV_FILES)->id);
}

int hub_plan_create(HubPlan *p, HubKind target, const char *ns, json_object *obj)
{
        HubWrite *w = plan_append(p, HUB_WRITE_CREATE);

        if (!w) {
                json_object_put(obj);
                return -ENOMEM;
        }
        w->target = target;
        w->body = obj;
        if (dup_or_null(&w->ns, ns) < 0 || dup_or_null(&w->name, kube_object_name(obj)) < 0)
                return -ENOMEM;
        return 0;
}

int hub_plan_patch(HubPlan *p, HubKind target, const char *ns, const char *name, bool self, bool status,
                   const char *resource_version, json_object *patch)
{
        HubWrite *w = plan_append(p, status ? HUB_WRITE_PATCH_STATUS : HUB_WRITE_PATCH);

        if (!w) {
                json_object_put(patch);
                return -ENOMEM;
        }
        w->target = target;
        w->self = self;
        w->body = patch;
        if (dup_or_null(&w->ns, ns) < 0 || dup_or_null(&w->name, name) < 0 ||
            dup_or_null(&w->resource_version, resource_version) < 0)
                return -ENOMEM;
        return 0;
}

int hub_plan_delete(HubPlan *p, HubKind target, const char *ns, const char *name, const char *uid, bool self)
{
        HubWrite *w = plan_append(p, HUB_WRITE_DELETE);

        if (!w)
                return -ENOMEM;
        w->target = target;
        w->self = self;
        if (dup_or_null(&w->ns, ns) < 0 || dup_or_null(&w->name, name) < 0 || dup_or_null(&w->uid, uid) < 0)
                return -ENOMEM;
        return 0;
}

int hub_plan_event(HubPlan *p, json_object *involved, const char *type, const char *reason, const char *fmt,
                   ...)
{
        HubWrite *w = plan_append(p, HUB_WRITE_EVENT);
        _cleanup_free_ char *message = NULL;
        va_list ap;

        if (!w)
                return -ENOMEM;
        w->involved = json_object_get(involved);
        w->event_type = type;
        if (dup_or_null(&w->reason, reason) < 0)
                return -ENOMEM;
        va_start(ap, fmt);
        message = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!message)
                return -ENOMEM;
        w->message = hub_text_bound(message, HUB_EVENT_TEXT_MAX);
        return w->message ? 0 : -ENOMEM;
}

int hub_plan_spoke(HubPlan *p, const char *kubeconfig, HubSpokeResource resource, const char *verb,
                   const char *name, json_object *body)
{
        HubWrite *w = plan_append(p, HUB_WRITE_SPOKE);

        if (!w) {
                json_object_put(body);
                return -ENOMEM;
        }
        w->spoke_resource = resource;
        w->body = body;
        if (dup_or_null(&w->spoke_kubeconfig, kubeconfig) < 0 || dup_or_null(&w->spoke_verb, verb) < 0 ||
            dup_or_null(&w->name, name) < 0)
                return -ENOMEM;
        return 0;
}

int hub_plan_spoke_mint(HubPlan *p, const char *tag, const char *kubeconfig, json_object *body)
{
        int r;

        r = hub_plan_spoke(p, kubeconfig, HUB_SPOKE_CSR, "mint", NULL, body);
        if (r < 0)
                return r;
        p->writes[p->n - 1].feedback = true;
        p->writes[p->n - 1].expect = 201;
        return dup_or_null(&p->writes[p->n - 1].tag, tag);
}

int hub_plan_move(HubPlan *dst, HubPlan *src)
{
        HubWrite *n;

        if (src->n == 0)
                return 0;
        n = realloc(dst->writes, (dst->n + src->n) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        dst->writes = n;
        memcpy(dst->writes + dst->n, src->writes, src->n * sizeof(*n));
        dst->n += src->n;
        free(src->writes);
        src->writes = NULL;
        src->n = 0;
        return 0;
}

void hub_plan_requeue_after(HubPlan *p, usec_t delay)
{
        if (delay == 0)
                return;
        if (p->requeue_after == 0 || delay < p->requeue_after)
                p->requeue_after = delay;
}

int hub_plan_fail(HubPlan *p, const char *fmt, ...)
{
        va_list ap;
        char *s;

        p->requeue = true;
        va_start(ap, fmt);
        s = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!s)
                return -ENOMEM;
        free(p->reason);
        p->reason = s;
        return 0;
}

static int patch_object(HubPlan *p, HubKind target, json_object *observed, json_object *desired, bool self,
                        bool with_status, bool always_lock)
{
        _cleanup_(json_object_putp) json_object *a = NULL, *b = NULL, *patch = NULL, *spatch = NULL;
        const char *rv;
        int r;

        if (!observed || !desired)
                return 0;
        /* json-c aborts on an object operation of another type */
        if (!json_object_is_type(observed, json_type_object) ||
            !json_object_is_type(desired, json_type_object))
                return -EINVAL;
        a = hub_json_copy(observed);
        b = hub_json_copy(desired);
        if (!a || !b)
                return -ENOMEM;
        /* status goes to the subresource; metadata.resourceVersion and the
         * other server-set fields are never patched */
        json_object_object_del(a, "status");
        json_object_object_del(b, "status");
        r = hub_json_merge_diff(a, b, &patch);
        if (r < 0)
                return r;
        rv = kube_object_resource_version(observed);
        if (patch) {
                const char *lock = !self && (always_lock || hub_json_patch_has_array(patch)) ? rv : NULL;

                r = hub_plan_patch(p, target, kube_object_namespace(observed), kube_object_name(observed),
                                   self, false, lock, TAKE_PTR(patch));
                if (r < 0)
                        return r;
        }
        if (!with_status)
                return 0;
        r = hub_json_merge_diff(json_get(observed, "status"), json_get(desired, "status"), &spatch);
        if (r < 0)
                return r;
        if (spatch) {
                _cleanup_(json_object_putp) json_object *wrap = json_new_object();

                const char *lock;

                if (!wrap || json_add(wrap, "status", TAKE_PTR(spatch)) < 0)
                        return -ENOMEM;
                lock = !self && (always_lock || hub_json_patch_has_array(wrap)) ? rv : NULL;
                r = hub_plan_patch(p, target, kube_object_namespace(observed), kube_object_name(observed),
                                   self, true, lock, TAKE_PTR(wrap));
                if (r < 0)
                        return r;
        }
        return 0;
}

int hub_plan_patch_object(HubPlan *p, HubKind target, json_object *observed, json_object *desired, bool self,
                          bool with_status)
{
        return patch_object(p, target, observed, desired, self, with_status, false);
}

int hub_plan_patch_object_locked(HubPlan *p, HubKind target, json_object *observed, json_object *desired,
                                 bool with_status)
{
        return patch_object(p, target, observed, desired, false, with_status, true);
}

int hub_status_patch_split(json_object *patch, json_object **ret_conditions, json_object **ret_rest)
{
        _cleanup_(json_object_putp) json_object *rest = hub_json_copy(patch), *only = NULL;
        json_object *st = json_get(rest, "status"), *conditions = NULL;

        if (!rest)
                return -ENOMEM;
        /* null too: a patch that removes them */
        if (json_object_is_type(st, json_type_object) &&
            json_object_object_get_ex(st, "conditions", &conditions)) {
                json_object *ost;

                only = json_new_object();
                ost = only ? hub_json_ensure_object(only, "status") : NULL;
                if (!ost || json_object_object_add(ost, "conditions", json_object_get(conditions)) < 0)
                        return -ENOMEM;
                json_object_object_del(st, "conditions");
        }
        if (json_object_is_type(st, json_type_object) && json_object_object_length(st) == 0)
                json_object_object_del(rest, "status");
        *ret_conditions = TAKE_PTR(only);
        *ret_rest = json_object_object_length(rest) > 0 ? TAKE_PTR(rest) : NULL;
        return 0;
}

/* ---- JSON ---- */

static bool is_null(json_object *o)
{
        return !o || json_object_get_type(o) == json_type_null;
}

bool hub_json_equal(json_object *a, json_object *b)
{
        json_type ta, tb;

        if (is_null(a) || is_null(b))
                return is_null(a) && is_null(b);
        ta = json_object_get_type(a);
        tb = json_object_get_type(b);
        if ((ta == json_type_int || ta == json_type_double) &&
            (tb == json_type_int || tb == json_type_double)) {
                if (ta == json_type_int && tb == json_type_int)
                        return json_object_get_int64(a) == json_object_get_int64(b);
                return json_object_get_double(a) == json_object_get_double(b);
        }
        if (ta != tb)
                return false;
        switch (ta) {
        case json_type_boolean:
                return json_object_get_boolean(a) == json_object_get_boolean(b);
        case json_type_string:
                return json_object_get_string_len(a) == json_object_get_string_len(b) &&
                       memcmp(json_object_get_string(a), json_object_get_string(b),
                              (size_t)json_object_get_string_len(a)) == 0;
        case json_type_array: {
                size_t n = json_object_array_length(a);

                if (n != json_object_array_length(b))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if (!hub_json_equal(json_object_array_get_idx(a, i),
                                            json_object_array_get_idx(b, i)))
                                return false;
                return true;
        }
        case json_type_object: {
                if (json_object_object_length(a) != json_object_object_length(b))
                        return false;
                json_object_object_foreach (a, k, va) {
                        json_object *vb;

                        if (!json_object_object_get_ex(b, k, &vb))
                                return false;
                        if (!hub_json_equal(va, vb))
                                return false;
                }
                return true;
        }
        default:
                return false;
        }
}

size_t hub_json_array_length(json_object *a)
{
        return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

json_object *hub_json_copy(json_object *o)
{
        json_object *c = NULL;

        if (!o)
                return NULL;
        if (json_object_deep_copy(o, &c, NULL) < 0)
                return NULL;
        return c;
}

int hub_json_merge_diff(json_object *a, json_object *b, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *patch = NULL;

        *ret = NULL;
        /* nothing desired at the top: no patch (a key set to null is
         * handled by the parent, below) */
        if (is_null(b) || hub_json_equal(a, b))
                return 0;
        if (!json_object_is_type(a, json_type_object) || !json_object_is_type(b, json_type_object)) {
                *ret = hub_json_copy(b);
                return *ret ? 0 : -ENOMEM;
        }
        patch = json_new_object();
        if (!patch)
                return -ENOMEM;
        json_object_object_foreach (a, ka, old) {
                json_object *other;

                if (!json_object_object_get_ex(b, ka, &other) && !is_null(old))
                        if (json_object_object_add(patch, ka, NULL) < 0)
                                return -ENOMEM;
        }
        json_object_object_foreach (b, kb, vb) {
                json_object *va = NULL, *d = NULL;
                int r;

                (void)json_object_object_get_ex(a, kb, &va);
                if (hub_json_equal(va, vb))
                        continue;
                if (is_null(vb)) {
                        if (!is_null(va) && json_object_object_add(patch, kb, NULL) < 0)
                                return -ENOMEM;
                        continue;
                }
                r = hub_json_merge_diff(va, vb, &d);
                if (r < 0)
                        return r;
                if (json_object_object_add(patch, kb, d) < 0) {
                        json_object_put(d);
                        return -ENOMEM;
                }
        }
        if (json_object_object_length(patch) == 0)
                return 0;
        *ret = TAKE_PTR(patch);
        return 0;
}

bool hub_json_patch_has_array(json_object *patch)
{
        if (json_object_is_type(patch, json_type_array))
                return true;
        if (!json_object_is_type(patch, json_type_object))
                return false;
        json_object_object_foreach (patch, k, v) {
                (void)k;
                if (hub_json_patch_has_array(v))
                        return true;
        }
        return false;
}

json_object *hub_json_ensure_object(json_object *o, const char *dotted)
{
        _cleanup_strv_free_ char **parts = NULL;

        if (!json_object_is_type(o, json_type_object) || strv_split(dotted, ".", &parts) < 0)
                return NULL;
        STRV_FOREACH (k, parts) {
                json_object *n = json_get(o, *k);

                if (!json_object_is_type(n, json_type_object)) {
                        n = json_new_object();
                        if (!n || json_add(o, *k, n) < 0)
                                return NULL;
                }
                o = n;
        }
        return o;
}

int hub_json_set_string(json_object *o, const char *dotted, const char *s)
{
        _cleanup_free_ char *parent = strdup(dotted);
        char *dot;
        json_object *p;

        if (!parent)
                return -ENOMEM;
        dot = strrchr(parent, '.');
        if (!dot) {
                if (!s) {
                        json_object_object_del(o, dotted);
                        return 0;
                }
                return json_add_string(o, dotted, s);
        }
        *dot = 0;
        if (!s) {
                p = json_get_path(o, parent);
                if (p)
                        json_object_object_del(p, dot + 1);
                return 0;
        }
        p = hub_json_ensure_object(o, parent);
        if (!p)
                return -ENOMEM;
        return json_add_string(p, dot + 1, s);
}

static const char *meta_map_get(json_object *obj, const char *map, const char *key)
{
        json_object *m = json_get(json_get(obj, "metadata"), map);

        return json_get_string(m, key);
}

const char *hub_object_label(json_object *obj, const char *key)
{
        return meta_map_get(obj, "labels", key);
}

const char *hub_object_annotation(json_object *obj, const char *key)
{
        return meta_map_get(obj, "annotations", key);
}

static int meta_map_set(json_object *obj, const char *map, const char *key, const char *value)
{
        json_object *meta = hub_json_ensure_object(obj, "metadata"), *m;

        if (!meta)
                return -ENOMEM;
        if (!value) {
                m = json_get(meta, map);
                if (m) {
                        json_object_object_del(m, key);
                        if (json_object_object_length(m) == 0)
                                json_object_object_del(meta, map);
                }
                return 0;
        }
        m = hub_json_ensure_object(meta, map);
        if (!m)
                return -ENOMEM;
        return json_add_string(m, key, value);
}

int hub_object_set_label(json_object *obj, const char *key, const char *value)
{
        return meta_map_set(obj, "labels", key, value);
}

int hub_object_set_annotation(json_object *obj, const char *key, const char *value)
{
        return meta_map_set(obj, "annotations", key, value);
}

bool hub_object_has_finalizer(json_object *obj, const char *finalizer)
{
        json_object *f = json_get(json_get(obj, "metadata"), "finalizers");

        for (size_t i = 0; json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++)
                if (streq_ptr(json_object_get_string(json_object_array_get_idx(f, i)), finalizer))
                        return true;
        return false;
}

int hub_object_add_finalizer(json_object *obj, const char *finalizer)
{
        json_object *meta, *f;

        if (hub_object_has_finalizer(obj, finalizer))
                return 0;
        meta = hub_json_ensure_object(obj, "metadata");
        if (!meta)
                return -ENOMEM;
        f = json_get(meta, "finalizers");
        if (!json_object_is_type(f, json_type_array)) {
                f = json_new_array();
                if (!f || json_add(meta, "finalizers", f) < 0)
                        return -ENOMEM;
        }
        if (json_append(f, json_new_string(finalizer)) < 0)
                return -ENOMEM;
        return 1;
}

int hub_object_remove_finalizer(json_object *obj, const char *finalizer)
{
        json_object *meta = json_get(obj, "metadata"), *f = json_get(meta, "finalizers"), *n;
        bool changed = false;

        if (!json_object_is_type(f, json_type_array))
                return 0;
        n = json_new_array();
        if (!n)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(f); i++) {
                json_object *e = json_object_array_get_idx(f, i);

                if (streq_ptr(json_object_get_string(e), finalizer)) {
                        changed = true;
                        continue;
                }
                if (json_append(n, json_object_get(e)) < 0) {
                        json_object_put(n);
                        return -ENOMEM;
                }
        }
        if (!changed) {
                json_object_put(n);
                return 0;
        }
        if (json_add(meta, "finalizers", n) < 0)
                return -ENOMEM;
        return 1;
}

bool hub_object_deleting(json_object *obj)
{
        return !isempty(json_get_string(json_get(obj, "metadata"), "deletionTimestamp"));
}

const char *hub_object_uid(json_object *obj)
{
        return json_get_string(json_get(obj, "metadata"), "uid");
}

/* ---- label selectors ---- */

bool hub_selector_empty(json_object *selector)
{
        json_object *ml = json_get(selector, "matchLabels"), *me = json_get(selector, "matchExpressions");

        return !(json_object_is_type(ml, json_type_object) && json_object_object_length(ml) > 0) &&
               !(json_object_is_type(me, json_type_array) && json_object_array_length(me) > 0);
}

static bool values_contain(json_object *values, const char *v)
{
        for (size_t i = 0;
             json_object_is_type(values, json_type_array) && i < json_object_array_length(values); i++)
                if (v && streq_ptr(json_object_get_string(json_object_array_get_idx(values, i)), v))
                        return true;
        return false;
}

int hub_selector_matches(json_object *selector, json_object *obj)
{
        json_object *ml = json_get(selector, "matchLabels"), *me = json_get(selector, "matchExpressions");

        if (hub_selector_empty(selector))
                return 0;
        if (json_object_is_type(ml, json_type_object)) {
                json_object_object_foreach (ml, k, v) {
                        if (!streq_ptr(hub_object_label(obj, k), json_object_get_string(v)))
                                return 0;
                }
        }
        for (size_t i = 0; json_object_is_type(me, json_type_array) && i < json_object_array_length(me);
             i++) {
                json_object *e = json_object_array_get_idx(me, i);
                const char *key = json_get_string(e, "key"), *op = json_get_string(e, "operator");
                const char *v = key ? hub_object_label(obj, key) : NULL;
                bool ok;

                if (!key || !op)
                        return -EINVAL;
                if (streq(op, "In"))
                        ok = values_contain(json_get(e, "values"), v);
                else if (streq(op, "NotIn"))
                        ok = !values_contain(json_get(e, "values"), v);
                else if (streq(op, "Exists"))
                        ok = v != NULL;
                else if (streq(op, "DoesNotExist"))
                        ok = v == NULL;
                else
                        return -EINVAL;
                if (!ok)
                        return 0;
        }
        return 1;
}

/* ---- conditions ---- */

json_object *hub_conditions_find(json_object *obj, const char *type)
{
        json_object *c = json_get(json_get(obj, "status"), "conditions");

        for (size_t i = 0; json_object_is_type(c, json_type_array) && i < json_object_array_length(c); i++) {
                json_object *e = json_object_array_get_idx(c, i);

                if (streq_ptr(json_get_string(e, "type"), type))
                        return e;
        }
        return NULL;
}

static int conditions_set(json_object *obj, const char *type, const char *status, const char *reason,
                          const char *message, usec_t now, bool meta)
{
        json_object *st = hub_json_ensure_object(obj, "status"), *list, *c;
        char ts[32];
        int64_t gen = 0;

        if (!st)
                return -ENOMEM;
        hub_format_time(now, ts);
        list = json_get(st, "conditions");
        if (!json_object_is_type(list, json_type_array)) {
                list = json_new_array();
                if (!list || json_add(st, "conditions", list) < 0)
                        return -ENOMEM;
        }
        c = hub_conditions_find(obj, type);
        if (!c) {
                c = json_new_object();
                if (!c || json_append(list, c) < 0)
                        return -ENOMEM;
                if (json_add_string(c, "type", type) < 0 || json_add_string(c, "lastTransitionTime", ts) < 0)
                        return -ENOMEM;
        } else if (!streq_ptr(json_get_string(c, "status"), status)) {
                if (json_add_string(c, "lastTransitionTime", ts) < 0)
                        return -ENOMEM;
        }
        if (json_add_string(c, "status", status) < 0 || json_add_string(c, "reason", reason) < 0 ||
            hub_json_add_bounded(c, "message", message, HUB_TEXT_MAX) < 0)
                return -ENOMEM;
        if (meta) {
                (void)json_get_int64(json_get(obj, "metadata"), "generation", &gen);
                if (json_add_int64(c, "observedGeneration", gen) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int hub_conditions_set(json_object *obj, const char *type, const char *status, const char *reason,
                       const char *message, usec_t now)
{
        return conditions_set(obj, type, status, reason, message, now, false);
}

int hub_meta_conditions_set(json_object *obj, const char *type, const char *status, const char *reason,
                            const char *message, usec_t now)
{
        return conditions_set(obj, type, status, reason, message, now, true);
}

int hub_hive_conditions_set(json_object *obj, const char *type, const char *status, const char *reason,
                            const char *message, usec_t now)
{
        json_object *st = hub_json_ensure_object(obj, "status"), *list, *c;
        /* a message may carry a text of the service: bounded before it is
         * compared, so that an unchanged text is no change */
        _cleanup_free_ char *bounded = hub_text_bound(message, HUB_TEXT_MAX);
        char ts[32];

        if (!st || !bounded)
                return -ENOMEM;
        message = bounded;
        hub_format_time(now, ts);
        list = json_get(st, "conditions");
        if (!json_object_is_type(list, json_type_array)) {
                list = json_new_array();
                if (!list || json_add(st, "conditions", list) < 0)
                        return -ENOMEM;
        }
        c = hub_conditions_find(obj, type);
        if (c && streq_ptr(json_get_string(c, "status"), status) &&
            streq_ptr(json_get_string(c, "reason"), reason) &&
            streq(strempty(json_get_string(c, "message")), strempty(message)))
                return 0;
        if (!c) {
                c = json_new_object();
                if (!c || json_append(list, c) < 0 || json_add_string(c, "type", type) < 0)
                        return -ENOMEM;
        }
        if (json_add_string(c, "status", status) < 0 || json_add_string(c, "reason", reason) < 0 ||
            json_add_string(c, "message", strempty(message)) < 0 ||
            json_add_string(c, "lastTransitionTime", ts) < 0 || json_add_string(c, "lastProbeTime", ts) < 0)
                return -ENOMEM;
        return 0;
}

typedef int (*ConditionsSetter)(json_object *obj, const char *type, const char *status, const char *reason,
                                const char *message, usec_t now);

static int conditions_vsetf(ConditionsSetter set, json_object *obj, const char *type, const char *status,
                            const char *reason, usec_t now, const char *fmt, va_list ap)
{
        _cleanup_free_ char *msg = strdup_vprintf(fmt, ap);

        if (!msg)
                return -ENOMEM;
        return set(obj, type, status, reason, msg, now);
}

int hub_conditions_setf(json_object *obj, bool hive, const char *type, const char *status,
                        const char *reason, usec_t now, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = conditions_vsetf(hive ? hub_hive_conditions_set : hub_conditions_set, obj, type, status, reason,
                             now, fmt, ap);
        va_end(ap);
        return r;
}

int hub_meta_conditions_setf(json_object *obj, const char *type, const char *status, const char *reason,
                             usec_t now, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = conditions_vsetf(hub_meta_conditions_set, obj, type, status, reason, now, fmt, ap);
        va_end(ap);
        return r;
}

void hub_format_time(usec_t t, char ret[static 32])
{
        format_rfc3339_utc((time_t)(t / USEC_PER_SEC), ret);
}

int hub_parse_time(const char *s, usec_t *ret)
{
        struct tm tm = {};
        const char *end;
        time_t t;

        if (!s)
                return -EINVAL;
        usec_t frac = 0, scale = USEC_PER_SEC;

        end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        if (!end)
                return -EINVAL;
        if (*end == '.') /* fractional seconds (MicroTime, the service's): to the microsecond */
                for (end++; *end >= '0' && *end <= '9'; end++)
                        if (scale > 1) {
                                scale /= 10;
                                frac += (usec_t)(*end - '0') * scale;
                        }
        if (!streq(end, "Z"))
                return -EINVAL;
        t = timegm(&tm);
        if (t < 0)
                return -EINVAL;
        *ret = (usec_t)t * USEC_PER_SEC + frac;
        return 0;
}
