/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/kube against the test kube-apiserver (or CRADLE_TEST_KUBECONFIG):
 * every verb, the Status errors, discovery, optimistic concurrency, watches
 * with drops, bookmarks and 410.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "kube-test.h"
#include "kube/kube.h"
#include "strutil.h"
#include "tests.h"

static json_object *configmap(const char *name, const char *key, const char *value, const char *label)
{
        _cleanup_free_ char *text = strdup_printf("{\"metadata\": {\"name\": \"%s\", \"labels\": {\"app\": "
                                                  "\"%s\"}}, \"data\": {\"%s\": \"%s\"}}",
                                                  name, label ?: "test", key, value);

        ASSERT_NOT_NULL(text);
        return kube_test_json(text);
}

static const char *data_of(json_object *o, const char *key)
{
        return json_get_string(json_get(o, "data"), key);
}

TEST(configmap_crud_and_errors)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *cm = configmap("one", "k", "v1", NULL), *got = NULL,
                                                *upd = NULL, *stale = NULL, *del = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = kube_test_namespace("crud");
        _cleanup_free_ char *rv0 = NULL;

        ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, &got, &st));
        ASSERT_STREQ(kube_object_name(got), "one");
        ASSERT_STREQ(kube_object_namespace(got), ns);
        ASSERT_STREQ(json_get_string(got, "kind"), "ConfigMap");
        ASSERT_NOT_NULL(kube_object_resource_version(got));
        rv0 = strdup(kube_object_resource_version(got));

        /* AlreadyExists */
        ASSERT_ERROR(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st), EEXIST);
        ASSERT_EQ(st.code, 409);
        ASSERT_STREQ(st.reason, "AlreadyExists");
        ASSERT_STREQ(st.message, "configmaps \"one\" already exists");
        ASSERT_EQ(st.error, -EEXIST);

        /* NotFound */
        ASSERT_ERROR(kube_get(c, &kube_resource_configmaps, ns, "missing", NULL, &st), ENOENT);
        ASSERT_EQ(st.code, 404);
        ASSERT_STREQ(st.reason, "NotFound");
        ASSERT_STREQ(st.message, "configmaps \"missing\" not found");
        ASSERT_NOT_NULL(st.details);

        /* update with the resourceVersion read */
        json_object_put(got);
        got = NULL;
        ASSERT_OK(kube_get(c, &kube_resource_configmaps, ns, "one", &got, &st));
        ASSERT_OK(json_add_string(json_get(got, "data"), "k", "v2"));
        ASSERT_OK(kube_update(c, &kube_resource_configmaps, ns, got, &upd, &st));
        ASSERT_STREQ(data_of(upd, "k"), "v2");
        ASSERT_TRUE(!streq(kube_object_resource_version(upd), rv0));

        /* Conflict with the stale one */
        stale = json_object_get(got);
        ASSERT_OK(json_add_string(json_get(stale, "metadata"), "resourceVersion", rv0));
        ASSERT_OK(json_add_string(json_get(stale, "data"), "k", "v3"));
        ASSERT_ERROR(kube_update(c, &kube_resource_configmaps, ns, stale, NULL, &st), EBUSY);
        ASSERT_EQ(st.code, 409);
        ASSERT_STREQ(st.reason, "Conflict");
        ASSERT_CONTAINS(st.message,
                        "the object has been modified; please apply your changes to the latest version");

        /* delete, then it is gone */
        ASSERT_OK(kube_delete(c, &kube_resource_configmaps, ns, "one", NULL, &del, &st));
        ASSERT_ERROR(kube_get(c, &kube_resource_configmaps, ns, "one", NULL, &st), ENOENT);
        ASSERT_ERROR(kube_delete(c, &kube_resource_configmaps, ns, "one", NULL, NULL, &st), ENOENT);
        ASSERT_STREQ(st.reason, "NotFound");
}

TEST(namespace_from_object_and_client)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *cm = configmap("in-body", "a", "b", NULL), *got = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = kube_test_namespace("nsobj");

        ASSERT_OK(json_add_string(json_get(cm, "metadata"), "namespace", ns));
        ASSERT_OK(kube_create(c, &kube_resource_configmaps, NULL, cm, NULL, &st));
        ASSERT_OK(kube_get(c, &kube_resource_configmaps, ns, "in-body", &got, &st));
        ASSERT_STREQ(data_of(got, "a"), "b");
        ASSERT_STREQ(kube_client_namespace(c), "default");
        /* a body namespace that differs from the URL one is refused */
        ASSERT_ERROR(kube_create(c, &kube_resource_configmaps, "default", cm, NULL, &st), EBADR);
        ASSERT_EQ(st.code, 400);
        ASSERT_STREQ(st.reason, "BadRequest");
}

static int count_item(json_object *item, void *userdata)
{
        unsigned *n = userdata;

        ASSERT_NOT_NULL(kube_object_name(item));
        (*n)++;
        return 0;
}

/* The items whose name starts with prefix: what the test made. */
static unsigned count_named(json_object *items, const char *prefix)
{
        unsigned n = 0;

        for (size_t i = 0; i < json_object_array_length(items); i++)
                if (startswith(strempty(kube_object_name(json_object_array_get_idx(items, i))), prefix))
                        n++;
        return n;
}

TEST(list_selectors_and_paging)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *page = NULL, *page2 = NULL, *all = NULL, *sel = NULL,
                                                *fsel = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *rv = NULL;
        const char *ns = kube_test_namespace("list");
        const char *cont;
        unsigned n = 0;

        for (unsigned i = 0; i < 7; i++) {
                _cleanup_free_ char *name = strdup_printf("cm-%u", i);
                _cleanup_(json_object_putp) json_object *cm =
                        configmap(name, "i", name, i % 2 ? "odd" : "even");

                ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
        }

        ASSERT_OK(kube_list(c, &kube_resource_configmaps, ns, &(KubeListOptions){ .limit = 3 }, &page, &st));
        ASSERT_STREQ(json_get_string(page, "kind"), "ConfigMapList");
        ASSERT_EQ(json_object_array_length(json_get(page, "items")), 3);
        cont = json_get_string(json_get(page, "metadata"), "continue");
        ASSERT_NOT_NULL(cont);
        ASSERT_OK(kube_list(c, &kube_resource_configmaps, ns,
                            &(KubeListOptions){ .limit = 3, .continue_token = cont }, &page2, &st));
        ASSERT_EQ(json_object_array_length(json_get(page2, "items")), 3);

        /* every page walked, by label: only ours */
        ASSERT_OK(kube_list_each(c, &kube_resource_configmaps, ns,
                                 &(KubeListOptions){ .limit = 2, .label_selector = "app in (odd,even)" },
                                 count_item, &n, &rv, &st));
        ASSERT_EQ(n, 7u);
        ASSERT_NOT_NULL(rv);
        ASSERT_TRUE(rv[0] != 0);

        /* every page joined: our 7, and whatever other writers put there
         * (kube-root-ca.crt, on OpenShift openshift-service-ca.crt) */
        ASSERT_OK(kube_list_all(c, &kube_resource_configmaps, ns, &(KubeListOptions){ .limit = 2 }, &all,
                                &st));
        ASSERT_EQ(count_named(json_get(all, "items"), "cm-"), 7u);
        ASSERT_GE(json_object_array_length(json_get(all, "items")), 7);
        ASSERT_NULL(json_get_string(json_get(all, "metadata"), "continue"));

        ASSERT_OK(kube_list(c, &kube_resource_configmaps, ns,
                            &(KubeListOptions){ .label_selector = "app=odd" }, &sel, &st));
        ASSERT_EQ(json_object_array_length(json_get(sel, "items")), 3);

        ASSERT_OK(kube_list(c, &kube_resource_configmaps, ns,
                            &(KubeListOptions){ .field_selector = "metadata.name=cm-4" }, &fsel, &st));
        ASSERT_EQ(json_object_array_length(json_get(fsel, "items")), 1);
        ASSERT_STREQ(kube_object_name(json_object_array_get_idx(json_get(fsel, "items"), 0)), "cm-4");

        /* a malformed selector is the server's BadRequest */
        ASSERT_ERROR(kube_list(c, &kube_resource_configmaps, ns,
                               &(KubeListOptions){ .label_selector = "app in (" }, NULL, &st),
                     EBADR);
}

TEST(list_expired_continue)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_(json_object_putp) json_object *page = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns, *cont;

        kube_test_need_server("history compaction");
        c = kube_test_client();
        ns = kube_test_namespace("expire");
        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *name = strdup_printf("cm-%u", i);
                _cleanup_(json_object_putp) json_object *cm = configmap(name, "i", name, NULL);

                ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
        }
        ASSERT_OK(kube_list(c, &kube_resource_configmaps, ns, &(KubeListOptions){ .limit = 1 }, &page, &st));
        cont = json_get_string(json_get(page, "metadata"), "continue");
        ASSERT_NOT_NULL(cont);
        {
                /* history moves on past the list's snapshot, which is then forgotten */
                _cleanup_(json_object_putp) json_object *cm = configmap("later", "i", "x", NULL);

                ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
        }
        ASSERT_EQ(kube_test_ctl("POST", "/compact", "{}", NULL), 200);
        ASSERT_ERROR(kube_list(c, &kube_resource_configmaps, ns,
                               &(KubeListOptions){ .limit = 1, .continue_token = cont }, NULL, &st),
                     ESTALE);
        ASSERT_EQ(st.code, 410);
        ASSERT_STREQ(st.reason, "Expired");
}

TEST(patches)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *cm = configmap("p", "a", "1", NULL), *merge = NULL,
                                                *jp = NULL, *bad = NULL, *out1 = NULL, *out2 = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = kube_test_namespace("patch");

        ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
        merge = kube_test_json(
                "{\"data\": {\"a\": null, \"b\": \"2\"}, \"metadata\": {\"labels\": {\"x\": \"y\"}}}");
        ASSERT_OK(kube_patch_merge(c, &kube_resource_configmaps, ns, "p", merge, &out1, &st));
        ASSERT_NULL(data_of(out1, "a"));
        ASSERT_STREQ(data_of(out1, "b"), "2");
        ASSERT_STREQ(json_get_string(json_get_path(out1, "metadata.labels"), "x"), "y");

        jp = kube_test_json("[{\"op\": \"test\", \"path\": \"/data/b\", \"value\": \"2\"},"
                            " {\"op\": \"add\", \"path\": \"/data/c\", \"value\": \"3\"}]");
        ASSERT_OK(kube_patch_json(c, &kube_resource_configmaps, ns, "p", jp, &out2, &st));
        ASSERT_STREQ(data_of(out2, "c"), "3");

        bad = kube_test_json("[{\"op\": \"test\", \"path\": \"/data/b\", \"value\": \"nope\"}]");
        ASSERT_ERROR(kube_patch_json(c, &kube_resource_configmaps, ns, "p", bad, NULL, &st), EINVAL);
        ASSERT_EQ(st.code, 422);
        ASSERT_STREQ(st.reason, "Invalid");

        ASSERT_ERROR(kube_patch_merge(c, &kube_resource_configmaps, ns, "nothere", merge, NULL, &st),
                     ENOENT);
}

static json_object *agent(const char *name, const char *approved_json)
{
        _cleanup_free_ char *text =
                strdup_printf("{\"apiVersion\": \"agent-install.openshift.io/v1beta1\", \"kind\": \"Agent\","
                              " \"metadata\": {\"name\": \"%s\", \"labels\": {\"app\": \"x\"}},"
                              " \"spec\": {\"approved\": %s, \"role\": \"master\", \"hostname\": \"h-%s\","
                              " \"clusterDeploymentName\": {\"name\": \"cd\", \"namespace\": \"demo\"}}}",
                              name, approved_json, name);

        ASSERT_NOT_NULL(text);
        return kube_test_json(text);
}

TEST(discovery_and_custom_resources)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *a = agent("a1", "true"),
                                                *bad = agent("bad-agent", "\"yes\""), *got = NULL,
                                                *upd = NULL, *st_upd = NULL, *after = NULL, *sp = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        KubeResource res, res2, res3, res4;
        const char *ns = kube_test_namespace("crd");
        json_object *causes;

        ASSERT_OK(kube_resolve(c, "Agent", &res, &st));
        ASSERT_STREQ(res.group, "agent-install.openshift.io");
        ASSERT_STREQ(res.version, "v1beta1");
        ASSERT_STREQ(res.resource, "agents");
        ASSERT_STREQ(res.kind, "Agent");
        ASSERT_TRUE(res.namespaced);
        ASSERT_OK(kube_resolve(c, "agents.agent-install.openshift.io", &res2, &st));
        ASSERT_STREQ(res2.resource, "agents");
        ASSERT_OK(kube_resolve(c, "agent.v1beta1.agent-install.openshift.io", &res2, &st));
        ASSERT_STREQ(res2.kind, "Agent");
        ASSERT_OK(kube_resolve(c, "cm", &res3, &st));
        ASSERT_STREQ(res3.resource, "configmaps");
        ASSERT_STREQ(res3.group, "");
        ASSERT_OK(kube_resolve(c, "NODES", &res3, &st));
        ASSERT_FALSE(res3.namespaced);
        ASSERT_OK(kube_resolve_kind(c, "coordination.k8s.io/v1", "Lease", &res4, &st));
        ASSERT_STREQ(res4.resource, "leases");
        ASSERT_ERROR(kube_resolve_kind(c, "v1", "Lease", &res4, &st), ENOENT);
        ASSERT_ERROR(kube_resolve(c, "nosuchthings", &res4, &st), ENOENT);
        ASSERT_CONTAINS(st.message, "nosuchthings");

        /* schema: 422 with causes */
        ASSERT_ERROR(kube_create(c, &res, ns, bad, NULL, &st), EINVAL);
        ASSERT_EQ(st.code, 422);
        ASSERT_STREQ(st.reason, "Invalid");
        ASSERT_CONTAINS(st.message, "spec.approved in body must be of type boolean");
        causes = json_get(st.details, "causes");
        ASSERT_NOT_NULL(causes);
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(causes, 0), "field"), "spec.approved");

        ASSERT_OK(kube_create(c, &res, ns, a, &got, &st));
        ASSERT_EQ(json_object_get_int64(json_get_path(got, "metadata.generation")), 1);

        /* the main endpoint ignores status, /status takes it */
        ASSERT_OK(json_add(got, "status", kube_test_json("{\"debugInfo\": {\"state\": \"known\"}}")));
        ASSERT_OK(kube_update(c, &res, ns, got, &upd, &st));
        ASSERT_NULL(json_get_path(upd, "status.debugInfo"));
        ASSERT_OK(json_add(upd, "status", kube_test_json("{\"debugInfo\": {\"state\": \"known\"}}")));
        ASSERT_OK(kube_update_status(c, &res, ns, upd, &st_upd, &st));
        ASSERT_STREQ(json_get_string(json_get_path(st_upd, "status.debugInfo"), "state"), "known");

        sp = kube_test_json("{\"status\": {\"debugInfo\": {\"state\": \"installing\"}}}");
        ASSERT_OK(kube_patch(c, &res, ns, "a1", "status", KUBE_PATCH_MERGE, sp, &after, &st));
        ASSERT_STREQ(json_get_string(json_get_path(after, "status.debugInfo"), "state"), "installing");
}

static const KubeResource agents =
        KUBE_RESOURCE("agent-install.openshift.io", "v1beta1", "agents", "Agent", true);

/* An Agent whose spec.hostname is size bytes long: its schema sets no
 * maximum, so only the limits on what is stored refuse it. */
static json_object *big_agent(const char *name, size_t size)
{
        _cleanup_free_ char *host = malloc(size + 1);
        json_object *a;

        ASSERT_NOT_NULL(host);
        memset(host, 'h', size);
        host[size] = 0;
        a = agent(name, "false");
        ASSERT_OK(json_add_string(json_get(a, "spec"), "hostname", host));
        return a;
}

TEST(objects_too_large_to_store)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *over_etcd = big_agent("big-1", 1600 * 1024),
                                                *over_grpc = big_agent("big-2", 2200 * 1024),
                                                *over_body = big_agent("big-3", 3200 * 1024),
                                                *small = agent("small", "false"), *created = NULL,
                                                *patch = NULL, *cond = NULL, *after = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *message = malloc(2600 * 1024 + 1);
        const char *ns = kube_test_namespace("size");

        /* over etcd's request limit (1.5 MiB): a 500 with etcd's words */
        ASSERT_ERROR(kube_create(c, &agents, ns, over_etcd, NULL, &st), EMSGSIZE);
        ASSERT_EQ(st.code, 500);
        ASSERT_EQ(st.error, -EMSGSIZE);
        ASSERT_STREQ(st.message, "etcdserver: request is too large");
        /* over its client's gRPC limit (2 MiB): a 500 with gRPC's */
        ASSERT_ERROR(kube_create(c, &agents, ns, over_grpc, NULL, &st), EMSGSIZE);
        ASSERT_EQ(st.code, 500);
        ASSERT_TRUE(startswith(st.message,
                               "rpc error: code = ResourceExhausted desc = trying to send message "
                               "larger than max ("));
        ASSERT_CONTAINS(st.message, " vs. 2097152)");
        /* over the apiserver's request body limit (3 MiB): 413 */
        ASSERT_ERROR(kube_create(c, &agents, ns, over_body, NULL, &st), EMSGSIZE);
        ASSERT_EQ(st.code, 413);
        ASSERT_STREQ(st.reason, "RequestEntityTooLarge");
        ASSERT_STREQ(st.message, "Request entity too large: limit is 3145728");
        ASSERT_ERROR(kube_get(c, &agents, ns, "big-1", NULL, &st), ENOENT);

        /* a status too large to store: a condition message as long as a
         * service's error text (issue 23: 2.6 MB) */
        ASSERT_OK(kube_create(c, &agents, ns, small, &created, &st));
        ASSERT_NOT_NULL(message);
        memset(message, 'e', 2600 * 1024);
        message[2600 * 1024] = 0;
        cond = kube_test_json(
                "{\"type\": \"SpecSynced\", \"status\": \"False\", \"reason\": \"InputError\", "
                "\"lastTransitionTime\": \"2026-01-01T00:00:00Z\"}");
        ASSERT_OK(json_add_string(cond, "message", message));
        patch = kube_test_json("{\"status\": {\"conditions\": []}}");
        ASSERT_OK(json_object_array_add(json_get_path(patch, "status.conditions"), json_object_get(cond)));
        ASSERT_ERROR(kube_patch(c, &agents, ns, "small", "status", KUBE_PATCH_MERGE, patch, NULL, &st),
                     EMSGSIZE);
        ASSERT_EQ(st.code, 500);
        ASSERT_OK(kube_get(c, &agents, ns, "small", &after, &st));
        ASSERT_STREQ(kube_object_resource_version(after), kube_object_resource_version(created));

        /* the mapping itself */
        ASSERT_EQ(kube_errno_from_answer(500, NULL, "etcdserver: request is too large"), -EMSGSIZE);
        ASSERT_EQ(kube_errno_from_answer(500, "InternalError", "Internal error occurred: x"), -EIO);
        ASSERT_EQ(kube_errno_from_answer(413, "RequestEntityTooLarge", NULL), -EMSGSIZE);
        ASSERT_EQ(kube_errno_from_answer(409, "Conflict", "etcdserver: request is too large"), -EBUSY);
}

TEST(delete_finalizers_and_preconditions)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *cm = configmap("fin", "a", "b", NULL), *created = NULL,
                                                *marked = NULL, *got = NULL, *patch = NULL, *cm2 = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = kube_test_namespace("fin");

        ASSERT_OK(
                json_add(json_get(cm, "metadata"), "finalizers", kube_test_json("[\"cradle.test/hold\"]")));
        ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, &created, &st));

        /* a wrong uid precondition is a Conflict */
        ASSERT_ERROR(
                kube_delete(c, &kube_resource_configmaps, ns, "fin",
                            &(KubeDeleteOptions){ .precondition_uid = "00000000-0000-0000-0000-000000000000",
                                                  .grace_period_seconds = KUBE_GRACE_UNSET },
                            NULL, &st),
                EBUSY);
        ASSERT_STREQ(st.reason, "Conflict");

        ASSERT_OK(kube_delete(c, &kube_resource_configmaps, ns, "fin",
                              &(KubeDeleteOptions){ .propagation_policy = "Background",
                                                    .precondition_uid = json_get_string(
                                                            json_get(created, "metadata"), "uid"),
                                                    .grace_period_seconds = KUBE_GRACE_UNSET },
                              &marked, &st));
        ASSERT_NOT_NULL(json_get_path(marked, "metadata.deletionTimestamp"));
        ASSERT_OK(kube_get(c, &kube_resource_configmaps, ns, "fin", &got, &st));
        ASSERT_NOT_NULL(json_get_path(got, "metadata.deletionTimestamp"));

        patch = kube_test_json("{\"metadata\": {\"finalizers\": null}}");
        ASSERT_OK(kube_patch_merge(c, &kube_resource_configmaps, ns, "fin", patch, NULL, &st));
        kube_test_settle();
        ASSERT_ERROR(kube_get(c, &kube_resource_configmaps, ns, "fin", NULL, &st), ENOENT);

        /* dry run leaves it */
        cm2 = configmap("dry", "a", "b", NULL);
        ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm2, NULL, &st));
        ASSERT_OK(kube_delete(c, &kube_resource_configmaps, ns, "dry",
                              &(KubeDeleteOptions){ .dry_run = true, .grace_period_seconds = 0 }, NULL,
                              &st));
        ASSERT_OK(kube_get(c, &kube_resource_configmaps, ns, "dry", NULL, &st));
}

TEST(optimistic_concurrency)
{
        _cleanup_(kube_client_freep) KubeClient *a = kube_test_client(), *b = kube_test_client();
        _cleanup_(json_object_putp) json_object *cm = configmap("shared", "base", "0", NULL), *ra = NULL,
                                                *rb = NULL, *final = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = kube_test_namespace("occ");
        unsigned conflicts = 0;

        ASSERT_OK(kube_create(a, &kube_resource_configmaps, ns, cm, NULL, &st));
        ASSERT_OK(kube_get(a, &kube_resource_configmaps, ns, "shared", &ra, &st));
        ASSERT_OK(kube_get(b, &kube_resource_configmaps, ns, "shared", &rb, &st));

        ASSERT_OK(json_add_string(json_get(ra, "data"), "from-a", "1"));
        ASSERT_OK(kube_update(a, &kube_resource_configmaps, ns, ra, NULL, &st));

        /* b's copy is stale: Conflict, then a fresh read and the same change */
        for (;;) {
                int r;

                ASSERT_OK(json_add_string(json_get(rb, "data"), "from-b", "1"));
                r = kube_update(b, &kube_resource_configmaps, ns, rb, NULL, &st);
                if (r >= 0)
                        break;
                ASSERT_EQ(r, -EBUSY);
                ASSERT_STREQ(st.reason, "Conflict");
                ASSERT_LE(++conflicts, 3u);
                json_object_put(rb);
                rb = NULL;
                ASSERT_OK(kube_get(b, &kube_resource_configmaps, ns, "shared", &rb, &st));
        }
        ASSERT_EQ(conflicts, 1u);
        ASSERT_OK(kube_get(a, &kube_resource_configmaps, ns, "shared", &final, &st));
        ASSERT_STREQ(data_of(final, "from-a"), "1");
        ASSERT_STREQ(data_of(final, "from-b"), "1");
        ASSERT_STREQ(data_of(final, "base"), "0");
}

TEST(unauthorized_and_forbidden)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        _cleanup_(kube_client_freep) KubeClient *bad = NULL, *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;
        const char *secret = "not-the-right-token-0123456789";

        ASSERT_OK(kube_config_load(kube_test_kubeconfig(), NULL, &cfg, &err));
        free(cfg->client_cert_pem);
        free(cfg->client_key_pem);
        cfg->client_cert_pem = cfg->client_key_pem = NULL;
        free(cfg->token);
        cfg->token = strdup(secret);
        ASSERT_OK(kube_client_new(cfg, NULL, &bad, &err));
        ASSERT_ERROR(kube_get(bad, &kube_resource_namespaces, NULL, "default", NULL, &st), EKEYREJECTED);
        ASSERT_EQ(st.code, 401);
        ASSERT_STREQ(st.reason, "Unauthorized");
        ASSERT_NOT_CONTAINS(st.message, secret);

        kube_test_need_server("deny rules for 403");
        c = kube_test_client();
        ASSERT_EQ(kube_test_ctl("POST", "/deny", "{\"verb\": \"get\", \"resource\": \"secrets\"}", NULL),
                  200);
        ASSERT_ERROR(kube_get(c, &kube_resource_secrets, "default", "anything", NULL, &st), EACCES);
        ASSERT_EQ(st.code, 403);
        ASSERT_STREQ(st.reason, "Forbidden");
        ASSERT_CONTAINS(st.message, "cannot get resource \"secrets\"");
        ASSERT_EQ(kube_test_ctl("DELETE", "/deny", NULL, NULL), 200);
}

TEST(faults_429_and_500)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL, *patient = NULL;
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;

        kube_test_need_server("fault injection");
        c = kube_test_client();
        ASSERT_EQ(kube_test_ctl(
                          "POST", "/faults",
                          "{\"match\": {\"resource\": \"namespaces\", \"verb\": \"get\"}, \"code\": 429, "
                          "\"retryAfter\": 1}",
                          NULL),
                  200);
        ASSERT_ERROR(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st), EAGAIN);
        ASSERT_EQ(st.code, 429);
        ASSERT_STREQ(st.reason, "TooManyRequests");
        ASSERT_EQ(st.retry_after, 1u);
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));

        /* with retries allowed, Retry-After is honoured */
        ASSERT_OK(kube_config_load(kube_test_kubeconfig(), NULL, &cfg, &err));
        ASSERT_OK(kube_client_new(cfg, &(KubeClientOptions){ .max_retries_429 = 2 }, &patient, &err));
        ASSERT_EQ(kube_test_ctl(
                          "POST", "/faults",
                          "{\"match\": {\"resource\": \"namespaces\", \"verb\": \"get\"}, \"code\": 429, "
                          "\"retryAfter\": 1}",
                          NULL),
                  200);
        ASSERT_OK(kube_get(patient, &kube_resource_namespaces, NULL, "default", NULL, &st));

        ASSERT_EQ(
                kube_test_ctl(
                        "POST", "/faults",
                        "{\"match\": {\"resource\": \"namespaces\"}, \"code\": 500, \"message\": \"boom\"}",
                        NULL),
                200);
        ASSERT_ERROR(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st), EIO);
        ASSERT_EQ(st.code, 500);
        ASSERT_STREQ(st.reason, "InternalError");
        ASSERT_CONTAINS(st.message, "boom");
        ASSERT_EQ(kube_test_ctl("DELETE", "/faults", NULL, NULL), 200);
}

TEST(pod_logs)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_(json_object_putp) json_object *pod = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *logs = NULL, *tail = NULL, *body = NULL;
        const char *ns;

        kube_test_need_server("pod log text set through the control API");
        c = kube_test_client();
        ns = kube_test_namespace("logs");
        pod = kube_test_json("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"nodeName\": \"master-0\", "
                             "\"containers\": [{\"name\": \"main\","
                             " \"image\": \"quay.io/x/y:latest\"}]}}");
        ASSERT_OK(kube_create(c, &kube_resource_pods, ns, pod, NULL, &st));
        body = strdup_printf("{\"namespace\": \"%s\", \"name\": \"p\", \"container\": \"main\","
                             " \"text\": \"line 1\\nline 2\\nline 3\\n\"}",
                             ns);
        ASSERT_EQ(kube_test_ctl("POST", "/pods/log", body, NULL), 200);
        if (kube_pod_logs(c, ns, "p", NULL, &logs, &st) < 0)
                test_fail(__FILE__, __LINE__, "pod logs: %s", strna(st.message));
        ASSERT_STREQ(logs, "line 1\nline 2\nline 3\n");
        ASSERT_OK(kube_pod_logs(c, ns, "p", &(KubePodLogOptions){ .container = "main", .tail_lines = 1 },
                                &tail, &st));
        ASSERT_STREQ(tail, "line 3\n");
        free(tail);
        tail = NULL;
        /* sinceSeconds goes on the wire (the test server returns all of it) */
        ASSERT_OK(kube_pod_logs(c, ns, "p", &(KubePodLogOptions){ .since_seconds = 3600 }, &tail, &st));
        {
                _cleanup_(json_object_putp) json_object *reqs = NULL;
                json_object *list;
                bool seen = false;

                ASSERT_EQ(kube_test_ctl("GET", "/requests", NULL, &reqs), 200);
                list = json_get(reqs, "requests");
                for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                        json_object *r = json_object_array_get_idx(list, i);
                        if (streq_ptr(json_get_string(r, "subresource"), "log") &&
                            streq_ptr(json_get_string(json_get(r, "query"), "sinceSeconds"), "3600"))
                                seen = true;
                }
                ASSERT_TRUE(seen);
        }
        ASSERT_ERROR(kube_pod_logs(c, ns, "nope", NULL, &tail, &st), ENOENT);
}

/* ---- watches ---- */

typedef struct Seen {
        char **events; /* "TYPE name data.i" */
        unsigned bookmarks;
        unsigned stop_after;
} Seen;

static int on_event(KubeWatchEventType type, json_object *obj, void *userdata)
{
        Seen *s = userdata;

        /* only the test's own config maps (each has data.i): on a real
         * cluster the root CA publisher adds kube-root-ca.crt to every new
         * namespace, maybe after the test listed it */
        if (type != KUBE_WATCH_BOOKMARK && !data_of(obj, "i"))
                return 0;
        if (type == KUBE_WATCH_BOOKMARK) {
                s->bookmarks++;
                ASSERT_NOT_NULL(kube_object_resource_version(obj));
                return s->stop_after == 0 && s->bookmarks > 0 && !s->events ? KUBE_WATCH_STOP : 0;
        }
        ASSERT_OK(strv_extendf(&s->events, "%s %s %s", kube_watch_event_type_to_string(type),
                               kube_object_name(obj), strna(data_of(obj, "i"))));
        if (s->stop_after > 0 && strv_length(s->events) >= s->stop_after)
                return KUBE_WATCH_STOP;
        return 0;
}

static void seen_done(Seen *s)
{
        strv_free(s->events);
}

/* creates n config maps, updates each, deletes the odd ones: 2n + n/2 events */
static unsigned make_changes(KubeClient *c, const char *ns, unsigned n)
{
        _cleanup_kube_status_ KubeStatus st = {};
        unsigned events = 0;

        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *name = strdup_printf("w-%u", i);
                _cleanup_(json_object_putp) json_object *cm = configmap(name, "i", "0", NULL);

                ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
                events++;
        }
        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *name = strdup_printf("w-%u", i);
                _cleanup_(json_object_putp) json_object *p = kube_test_json("{\"data\": {\"i\": \"1\"}}");

                ASSERT_OK(kube_patch_merge(c, &kube_resource_configmaps, ns, name, p, NULL, &st));
                events++;
        }
        for (unsigned i = 1; i < n; i += 2) {
                _cleanup_free_ char *name = strdup_printf("w-%u", i);

                ASSERT_OK(kube_delete(c, &kube_resource_configmaps, ns, name, NULL, NULL, &st));
                events++;
        }
        return events;
}

static char *list_rv(KubeClient *c, const char *ns)
{
        _cleanup_(json_object_putp) json_object *l = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        ASSERT_OK(kube_list(c, &kube_resource_configmaps, ns, NULL, &l, &st));
        return strdup(json_get_string(json_get(l, "metadata"), "resourceVersion"));
}

static void assert_change_events(char **events, unsigned n)
{
        unsigned k = 0;

        ASSERT_EQ(strv_length(events), n * 2 + n / 2);
        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *want = strdup_printf("ADDED w-%u 0", i);
                ASSERT_STREQ(events[k++], want);
        }
        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *want = strdup_printf("MODIFIED w-%u 1", i);
                ASSERT_STREQ(events[k++], want);
        }
        for (unsigned i = 1; i < n; i += 2) {
                _cleanup_free_ char *want = strdup_printf("DELETED w-%u 1", i);
                ASSERT_STREQ(events[k++], want);
        }
}

TEST(watch_from_resource_version)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(seen_done) Seen seen = {};
        const char *ns = kube_test_namespace("watch");
        _cleanup_free_ char *rv = list_rv(c, ns), *start = strdup(rv);
        unsigned n;

        n = make_changes(c, ns, 6);
        seen.stop_after = n;
        ASSERT_EQ(kube_watch(c, &kube_resource_configmaps, ns, &(KubeWatchOptions){ .timeout_seconds = 60 },
                             &rv, on_event, &seen, &st),
                  KUBE_WATCH_STOP);
        assert_change_events(seen.events, 6);
        ASSERT_TRUE(!streq(rv, start));
}

TEST(watch_initial_state_and_selector)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(seen_done) Seen seen = { .stop_after = 2 };
        const char *ns = kube_test_namespace("winit");
        _cleanup_free_ char *rv = NULL;

        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *name = strdup_printf("s-%u", i);
                _cleanup_(json_object_putp) json_object *cm =
                        configmap(name, "i", "0", i == 1 ? "other" : "mine");

                ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
        }
        /* no resourceVersion: the current objects come first as ADDED */
        ASSERT_EQ(kube_watch(c, &kube_resource_configmaps, ns,
                             &(KubeWatchOptions){ .label_selector = "app=mine", .timeout_seconds = 60 }, &rv,
                             on_event, &seen, &st),
                  KUBE_WATCH_STOP);
        ASSERT_EQ(strv_length(seen.events), 2u);
        ASSERT_TRUE(strv_contains(seen.events, "ADDED s-0 0"));
        ASSERT_TRUE(strv_contains(seen.events, "ADDED s-2 0"));
        ASSERT_NOT_NULL(rv);
}

static unsigned fault_hits(void)
{
        _cleanup_(json_object_putp) json_object *f = NULL;
        json_object *list;
        unsigned hits = 0;

        ASSERT_EQ(kube_test_ctl("GET", "/faults", NULL, &f), 200);
        list = json_object_is_type(f, json_type_array) ? f : json_get(f, "faults");
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                int64_t h = 0;

                (void)json_get_int64(json_object_array_get_idx(list, i), "hits", &h);
                hits += (unsigned)h;
        }
        return hits;
}

TEST(watch_dropped_resumes_without_loss_or_duplicates)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(seen_done) Seen seen = {};
        _cleanup_free_ char *rv = NULL;
        const char *ns;
        unsigned n;

        kube_test_need_server("dropping watch connections");
        c = kube_test_client();
        ns = kube_test_namespace("wdrop");
        rv = list_rv(c, ns);
        n = make_changes(c, ns, 8);
        seen.stop_after = n;
        /* the first two watches are cut after 3 events, the next one ends cleanly after 2 */
        ASSERT_EQ(kube_test_ctl("POST", "/faults",
                                "{\"match\": {\"resource\": \"configmaps\", \"watch\": true}, \"action\": "
                                "\"watch-drop\","
                                " \"after\": 3, \"count\": 2}",
                                NULL),
                  200);
        ASSERT_EQ(kube_watch_loop(c, &kube_resource_configmaps, ns,
                                  &(KubeWatchOptions){ .timeout_seconds = 60 }, &rv, on_event, &seen, &st),
                  KUBE_WATCH_STOP);
        assert_change_events(seen.events, 8);
        ASSERT_EQ(fault_hits(), 2u);
        ASSERT_EQ(kube_test_ctl("DELETE", "/faults", NULL, NULL), 200);

        /* a single kube_watch reports the cut, with the resourceVersion to resume from */
        {
                _cleanup_(seen_done) Seen one = {};
                const char *ns2 = kube_test_namespace("wdrop2");
                _cleanup_free_ char *rv2 = list_rv(c, ns2);
                _cleanup_free_ char *start = strdup(rv2);
                int r;

                (void)make_changes(c, ns2, 6);
                ASSERT_EQ(kube_test_ctl(
                                  "POST", "/faults",
                                  "{\"match\": {\"resource\": \"configmaps\", \"watch\": true}, \"action\":"
                                  " \"watch-drop\", \"after\": 4}",
                                  NULL),
                          200);
                r = kube_watch(c, &kube_resource_configmaps, ns2,
                               &(KubeWatchOptions){ .timeout_seconds = 60 }, &rv2, on_event, &one, &st);
                ASSERT_TRUE(r < 0 || r == 0);
                ASSERT_EQ(strv_length(one.events), 4u);
                ASSERT_TRUE(!streq(rv2, start));
                one.stop_after = 6 * 2 + 3;
                ASSERT_EQ(kube_watch(c, &kube_resource_configmaps, ns2,
                                     &(KubeWatchOptions){ .timeout_seconds = 60 }, &rv2, on_event, &one,
                                     &st),
                          KUBE_WATCH_STOP);
                ASSERT_EQ(strv_length(one.events), 15u);
        }
}

TEST(watch_gone_then_relist)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(seen_done) Seen seen = {};
        _cleanup_free_ char *rv = NULL, *fresh = NULL;
        const char *ns;

        kube_test_need_server("history compaction");
        c = kube_test_client();
        ns = kube_test_namespace("wgone");
        rv = list_rv(c, ns);
        (void)make_changes(c, ns, 2);
        ASSERT_EQ(kube_test_ctl("POST", "/compact", "{}", NULL), 200);

        ASSERT_ERROR(kube_watch(c, &kube_resource_configmaps, ns,
                                &(KubeWatchOptions){ .timeout_seconds = 60 }, &rv, on_event, &seen, &st),
                     ESTALE);
        ASSERT_EQ(st.code, 410);
        ASSERT_STREQ(st.reason, "Expired");
        ASSERT_CONTAINS(st.message, "too old resource version");
        ASSERT_NULL(seen.events);
        ASSERT_ERROR(kube_watch_loop(c, &kube_resource_configmaps, ns,
                                     &(KubeWatchOptions){ .timeout_seconds = 60 }, &rv, on_event, &seen,
                                     &st),
                     ESTALE);

        /* relist, then watch from the list: the next change arrives */
        fresh = list_rv(c, ns);
        {
                _cleanup_(json_object_putp) json_object *cm = configmap("after", "i", "9", NULL);

                ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
        }
        seen.stop_after = 1;
        ASSERT_EQ(kube_watch(c, &kube_resource_configmaps, ns, &(KubeWatchOptions){ .timeout_seconds = 60 },
                             &fresh, on_event, &seen, &st),
                  KUBE_WATCH_STOP);
        ASSERT_STREQ(seen.events[0], "ADDED after 9");
}

TEST(watch_bookmarks_and_server_timeout)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(seen_done) Seen seen = { .stop_after = 100 };
        const char *ns = kube_test_namespace("wbm");
        _cleanup_free_ char *rv = list_rv(c, ns), *start = strdup(rv);

        /* the watch cache sends a bookmark ~2 s before timeoutSeconds, then
         * the server ends the stream: kube_watch returns 0 to re-watch */
        ASSERT_OK(kube_watch(c, &kube_resource_configmaps, ns,
                             &(KubeWatchOptions){ .timeout_seconds = 3, .allow_bookmarks = true }, &rv,
                             on_event, &seen, &st));
        ASSERT_NULL(seen.events);
        if (!kube_test_real())
                ASSERT_GE(seen.bookmarks, 1u);
        ASSERT_NOT_NULL(rv);
        (void)start;
}

TEST(watch_errors)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(seen_done) Seen seen = {};
        _cleanup_free_ char *rv = NULL;
        KubeResource nothing = KUBE_RESOURCE("example.com", "v1", "nothings", "Nothing", true);

        ASSERT_ERROR(kube_watch(c, &nothing, "default", NULL, &rv, on_event, &seen, &st), ENOENT);
        ASSERT_EQ(st.code, 404);
        ASSERT_ERROR(kube_watch_loop(c, &nothing, "default", NULL, &rv, on_event, &seen, &st), ENOENT);
}

DEFINE_TEST_MAIN
