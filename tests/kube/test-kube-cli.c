/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle kube get/watch against the test kube-apiserver (or
 * CRADLE_TEST_KUBECONFIG): tables, JSON, names, errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "kube-test.h"
#include "kube/kube.h"
#include "strutil.h"
#include "tests.h"

static int cradle(char **ret_out, ...) _sentinel_;
static int cradle(char **ret_out, ...)
{
        const char *bin = getenv("CRADLE_BINARY");
        _cleanup_free_ char **argv = NULL;
        size_t n = 0;
        va_list ap;

        if (isempty(bin))
                test_skip("CRADLE_BINARY is not set");
        argv = calloc(32, sizeof(char *));
        ASSERT_NOT_NULL(argv);
        argv[n++] = (char *)bin;
        argv[n++] = (char *)"kube";
        va_start(ap, ret_out);
        for (const char *a; (a = va_arg(ap, const char *)) && n < 28;)
                argv[n++] = (char *)a;
        va_end(ap);
        argv[n++] = (char *)"--kubeconfig";
        argv[n++] = (char *)kube_test_kubeconfig();
        return test_run(argv, ret_out);
}

static const char *make_objects(void)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = kube_test_namespace("cli");

        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *text =
                        strdup_printf("{\"metadata\": {\"name\": \"item-%u\", \"labels\": {\"n\": \"%u\"}}, "
                                      "\"data\": {\"a\": \"b\"}}",
                                      i, i);
                _cleanup_(json_object_putp) json_object *cm = kube_test_json(text);

                ASSERT_OK(kube_create(c, &kube_resource_configmaps, ns, cm, NULL, &st));
        }
        return ns;
}

/* The config maps make_objects() made, of a list's items. */
static unsigned count_items(json_object *items)
{
        unsigned n = 0;

        for (size_t i = 0; i < json_object_array_length(items); i++)
                if (startswith(strempty(kube_object_name(json_object_array_get_idx(items, i))), "item-"))
                        n++;
        return n;
}

TEST(get_table_json_and_names)
{
        const char *ns = make_objects();
        _cleanup_free_ char *table = NULL, *json = NULL, *names = NULL, *one = NULL, *sel = NULL;
        _cleanup_(json_object_putp) json_object *list = NULL, *obj = NULL;
        _cleanup_strv_free_ char **lines = NULL;

        ASSERT_EQ(cradle(&table, "get", "configmaps", "-n", ns, "-l", "n in (0, 1, 2)", NULL), 0);
        ASSERT_OK(strv_split(table, "\n", &lines));
        ASSERT_EQ(strv_length(lines), 4u);
        ASSERT_TRUE(startswith(lines[0], "NAME     AGE"));
        ASSERT_TRUE(startswith(lines[1], "item-0   "));
        ASSERT_TRUE(startswith(lines[3], "item-2   "));

        ASSERT_EQ(cradle(&json, "get", "cm", "-n", ns, "-o", "json", NULL), 0);
        ASSERT_OK(json_parse(json, strlen(json), BUF_MAX_JSON_DOC, &list, NULL));
        ASSERT_STREQ(json_get_string(list, "kind"), "List");
        /* ours, and what other writers put there (kube-root-ca.crt, on
         * OpenShift openshift-service-ca.crt) */
        ASSERT_EQ(count_items(json_get(list, "items")), 3u);

        ASSERT_EQ(cradle(&names, "get", "ConfigMap", "-n", ns, "-o", "name", "-l", "n=1", NULL), 0);
        ASSERT_STREQ(names, "configmap/item-1\n");

        ASSERT_EQ(cradle(&one, "get", "cm", "item-2", "-n", ns, "-o", "json", NULL), 0);
        ASSERT_OK(json_parse(one, strlen(one), BUF_MAX_JSON_DOC, &obj, NULL));
        ASSERT_STREQ(kube_object_name(obj), "item-2");

        ASSERT_EQ(cradle(&sel, "get", "cm", "-A", "--field-selector", "metadata.name=item-0", NULL), 0);
        ASSERT_CONTAINS(sel, "NAMESPACE");
        ASSERT_CONTAINS(sel, ns);
}

TEST(get_errors)
{
        const char *ns = make_objects();
        _cleanup_free_ char *missing = NULL, *kind = NULL, *empty = NULL, *usage = NULL, *help = NULL;

        ASSERT_EQ(cradle(&missing, "get", "cm", "nothere", "-n", ns, NULL), 1);
        ASSERT_STREQ(missing, "Error from server (NotFound): configmaps \"nothere\" not found\n");
        ASSERT_EQ(cradle(&kind, "get", "nosuchkinds", NULL), 1);
        ASSERT_STREQ(kind, "error: the server doesn't have a resource type \"nosuchkinds\"\n");
        ASSERT_EQ(cradle(&empty, "get", "secrets", "-n", ns, "-l", "none=here", NULL), 0);
        ASSERT_CONTAINS(empty, "No resources found in ");
        ASSERT_EQ(cradle(&usage, "get", "cm", "-o", "xml", NULL), 2);
        ASSERT_CONTAINS(usage, "allowed formats are: json,name,table");
        ASSERT_EQ(cradle(&help, "--help", NULL), 0);
        ASSERT_CONTAINS(help, "watch KIND");
}

TEST(watch_prints_events)
{
        const char *ns = make_objects();
        _cleanup_free_ char *out = NULL, *names = NULL;
        _cleanup_strv_free_ char **lines = NULL;
        unsigned added = 0;

        ASSERT_EQ(cradle(&out, "watch", "cm", "-n", ns, "-o", "json", "--timeout=3", NULL), 0);
        ASSERT_OK(strv_split(out, "\n", &lines));
        STRV_FOREACH (l, lines) {
                _cleanup_(json_object_putp) json_object *ev = NULL;

                ASSERT_OK(json_parse(*l, strlen(*l), BUF_MAX_JSON_DOC, &ev, NULL));
                ASSERT_STREQ(json_get_string(ev, "type"), "ADDED");
                if (startswith(strempty(kube_object_name(json_get(ev, "object"))), "item-"))
                        added++;
        }
        ASSERT_EQ(added, 3u);
        ASSERT_EQ(cradle(&names, "watch", "cm", "-n", ns, "-o", "name", "--timeout=2", NULL), 0);
        ASSERT_CONTAINS(names, "ADDED configmap/item-0\n");
}

DEFINE_TEST_MAIN
