/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "hubtest.h"
#include "jsonutil.h"
#include "strutil.h"

void hubtest_run_done(HubTestRun *r)
{
        hub_plan_done(&r->writes);
        free(r->reason);
        *r = (HubTestRun){};
}

json_object *hubtest_json(const char *text)
{
        _cleanup_free_ char *err = NULL;
        json_object *o = NULL;

        if (json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &o, &err) < 0)
                test_fail(__FILE__, __LINE__, "bad test JSON: %s\n%s", strna(err), text);
        return o;
}

json_object *hubtest_jsonf(const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        s = strdup_vprintf(fmt, ap);
        va_end(ap);
        ASSERT_NOT_NULL(s);
        return hubtest_json(s);
}

void hubtest_merge_apply(json_object *target, json_object *patch)
{
        json_object_object_foreach (patch, k, v) {
                json_object *t;

                if (!v || json_object_is_type(v, json_type_null)) {
                        json_object_object_del(target, k);
                        continue;
                }
                t = json_get(target, k);
                if (json_object_is_type(v, json_type_object) && json_object_is_type(t, json_type_object)) {
                        hubtest_merge_apply(t, v);
                        continue;
                }
                if (json_object_is_type(v, json_type_object)) {
                        json_object *n = json_new_object();

                        ASSERT_NOT_NULL(n);
                        hubtest_merge_apply(n, v);
                        json_object_object_add(target, k, n);
                        continue;
                }
                json_object_object_add(target, k, hub_json_copy(v));
        }
}

static const HubTestAnswer *find_answer(const HubTestAnswer *answers, const char *tag)
{
        for (const HubTestAnswer *a = answers; a && a->tag; a++) {
                size_t n = strlen(a->tag);

                if (n > 0 && a->tag[n - 1] == '*' ? strneq(a->tag, tag, n - 1) : streq(a->tag, tag))
                        return a;
        }
        return NULL;
}

static void copy_write(HubPlan *dst, const HubWrite *w)
{
        HubWrite *n = realloc(dst->writes, (dst->n + 1) * sizeof(*n));

        ASSERT_NOT_NULL(n);
        dst->writes = n;
        n = &dst->writes[dst->n++];
        *n = *w;
#define DUP(f) n->f = w->f ? strdup(w->f) : NULL
        DUP(tag);
        DUP(operation);
        DUP(method);
        DUP(path);
        DUP(ns);
        DUP(name);
        DUP(resource_version);
        DUP(uid);
        DUP(reason);
        DUP(message);
        DUP(spoke_kubeconfig);
        DUP(spoke_verb);
#undef DUP
        n->body = json_object_get(w->body);
        n->involved = json_object_get(w->involved);
}

void hubtest_reconcile(int (*decide)(const HubObserved *, HubPlan *), HubObserved *o,
                       const HubTestAnswer *answers, HubTestRun *ret)
{
        *ret = (HubTestRun){};
        /* a new reconcile: the results of an earlier one are gone */
        hub_call_results_done(&o->results);
        for (;;) {
                _cleanup_hub_plan_ HubPlan plan = {};
                bool redecide = false, stop = false;

                ASSERT_TRUE(ret->rounds < 8);
                ret->rounds++;
                ASSERT_OK(decide(o, &plan));
                for (size_t i = 0; i < plan.n && !stop; i++) {
                        const HubWrite *w = &plan.writes[i];

                        copy_write(&ret->writes, w);
                        switch (w->kind) {
                        case HUB_WRITE_SPOKE:
                                /* a spoke write with a result (hub_plan_spoke_mint()) is answered as a call */
                                if (!w->feedback)
                                        break;
                                __attribute__((fallthrough));
                        case HUB_WRITE_SERVICE: {
                                const HubTestAnswer *a = find_answer(answers, w->tag);
                                long status = a ? a->status : 0;
                                bool ok = status == w->expect;
                                json_object *body = NULL;

                                if (!a)
                                        test_fail(__FILE__, __LINE__,
                                                  "no canned answer for call '%s' (%s %s)", w->tag,
                                                  strna(w->method), strna(w->path));
                                if (a->body)
                                        body = w->text ? json_object_new_string(a->body)
                                                       : hubtest_json(a->body);
                                if (w->feedback) {
                                        ASSERT_OK(hub_call_results_add(
                                                &o->results, w->tag, ok ? 0 : -EREMOTEIO, status,
                                                ok ? body : NULL,
                                                ok ? NULL : (a->message ? a->message : "error")));
                                        if (!ok)
                                                json_object_put(body);
                                        redecide = true;
                                } else {
                                        json_object_put(body);
                                        if (!ok)
                                                stop = true;
                                }
                                break;
                        }
                        case HUB_WRITE_PATCH:
                        case HUB_WRITE_PATCH_STATUS:
                                if (w->self && o->object)
                                        hubtest_merge_apply(o->object, w->body);
                                break;
                        case HUB_WRITE_CREATE:
                                if (w->self) {
                                        json_object_put(o->object);
                                        o->object = hub_json_copy(w->body);
                                }
                                break;
                        default:
                                break;
                        }
                }
                if (redecide && !stop)
                        continue;
                ret->requeue_after = plan.requeue_after;
                ret->requeue = plan.requeue || stop;
                ret->reason = plan.reason ? strdup(plan.reason) : NULL;
                break;
        }
}

unsigned hubtest_count(const HubTestRun *r, HubWriteKind kind, const char *tag_prefix)
{
        unsigned n = 0;

        for (size_t i = 0; i < r->writes.n; i++)
                if (r->writes.writes[i].kind == kind &&
                    (!tag_prefix ||
                     (r->writes.writes[i].tag && startswith(r->writes.writes[i].tag, tag_prefix))))
                        n++;
        return n;
}

const HubWrite *hubtest_write(const HubTestRun *r, HubWriteKind kind, unsigned n)
{
        for (size_t i = 0; i < r->writes.n; i++)
                if (r->writes.writes[i].kind == kind && n-- == 0)
                        return &r->writes.writes[i];
        return NULL;
}

const char *hubtest_str(json_object *obj, const char *path)
{
        json_object *v = json_get_path(obj, path);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

void hubtest_assert_condition(json_object *obj, const char *type, const char *status, const char *reason,
                              const char *message, const char *file, int line)
{
        json_object *c = hub_conditions_find(obj, type);
        const char *m;

        if (!c)
                test_fail(file, line, "no condition %s in %s", type,
                          json_to_string(json_get(obj, "status"), 0));
        if (!streq_ptr(json_get_string(c, "status"), status) ||
            !streq_ptr(json_get_string(c, "reason"), reason))
                test_fail(file, line, "condition %s: %s/%s, expected %s/%s (%s)", type,
                          json_get_string(c, "status"), json_get_string(c, "reason"), status, reason,
                          strna(json_get_string(c, "message")));
        m = json_get_string(c, "message");
        if (message) {
                size_t n = strlen(message);
                bool ok = n > 0 && message[n - 1] == '*' ? m && strneq(m, message, n - 1)
                                                         : streq_ptr(m, message);

                if (!ok)
                        test_fail(file, line, "condition %s message:\n  \"%s\"\nexpected\n  \"%s\"", type,
                                  strna(m), message);
        }
}
