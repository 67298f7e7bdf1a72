/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitored OLM operators (controller/olm.h): which operators are
 * followed, the failed Jobs and InstallPlans deleted, the CSV's status,
 * the failed observations held back, custom_manifests.json
 * (notes/controller.md §5.3).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/olm.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

static json_object *parse_json(const char *text)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

static const char *OPERATORS =
        "[{\"name\": \"console\", \"operator_type\": \"builtin\", \"status\": \"available\"},"
        " {\"name\": \"lso\", \"operator_type\": \"olm\", \"namespace\": \"openshift-local-storage\", "
        "\"subscription_name\": \"local-storage-operator\", \"status\": \"progressing\"},"
        " {\"name\": \"odf\", \"operator_type\": \"olm\", \"namespace\": \"openshift-storage\", "
        "\"subscription_name\": \"odf-operator\"},"
        " {\"name\": \"mce\", \"operator_type\": \"olm\", \"namespace\": \"multicluster-engine\", "
        "\"subscription_name\": \"multicluster-engine\", \"status\": \"failed\"}]";

TEST(operators)
{
        _cleanup_(json_object_putp) json_object *list = parse_json(OPERATORS);
        OlmOperator *ops = NULL;
        size_t n = 0;

        /* every OLM one, in order, builtin ones left out */
        ASSERT_OK(olm_operators_of(list, "4.13", false, &ops, &n));
        ASSERT_EQ(n, 3u);
        ASSERT_STREQ(ops[0].name, "lso");
        ASSERT_STREQ(ops[0].namespace, "openshift-local-storage");
        ASSERT_STREQ(ops[0].subscription, "local-storage-operator");
        ASSERT_STREQ(ops[1].name, "odf");
        ASSERT_STREQ(ops[1].subscription, "odf-operator");
        olm_operators_free(ops, n);
        /* those still progressing; on 4.8 odf is ocs with its subscription */
        ASSERT_OK(olm_operators_of(list, "4.8", true, &ops, &n));
        ASSERT_EQ(n, 2u);
        ASSERT_STREQ(ops[0].name, "lso");
        ASSERT_STREQ(ops[1].name, "ocs");
        ASSERT_STREQ(ops[1].subscription, "ocs-operator");
        olm_operators_free(ops, n);
}

TEST(jobs_and_install_plans)
{
        _cleanup_(json_object_putp) json_object *j1 = parse_json("{\"status\": {\"failed\": 1}}");
        _cleanup_(json_object_putp) json_object *j2 = parse_json(
                "{\"status\": {\"conditions\": [{\"type\": \"Complete\", \"status\": \"False\"}, {\"type\": "
                "\"Failed\", \"status\": \"True\"}]}}");
        _cleanup_(json_object_putp) json_object *j3 = parse_json(
                "{\"status\": {\"conditions\": [{\"type\": \"Failed\", \"status\": \"False\"}, {\"type\": "
                "\"Failed\", \"status\": \"True\"}]}}");
        _cleanup_(json_object_putp) json_object *j4 = parse_json("{\"status\": {\"succeeded\": 1}}");
        _cleanup_(json_object_putp) json_object *plans = parse_json(
                "{\"items\": ["
                "{\"metadata\": {\"name\": \"install-a\", \"ownerReferences\": [{\"name\": \"other\"}, "
                "{\"name\": "
                "\"local-storage-operator\"}]}, \"status\": {\"phase\": \"Failed\"}},"
                "{\"metadata\": {\"name\": \"install-b\", \"ownerReferences\": [{\"name\": "
                "\"local-storage-operator\"}]}, \"status\": {\"phase\": \"Complete\"}},"
                "{\"metadata\": {\"name\": \"install-c\", \"ownerReferences\": [{\"name\": \"other\"}]}, "
                "\"status\": {\"phase\": \"Failed\"}},"
                "{\"metadata\": {\"name\": \"install-d\"}, \"status\": {\"phase\": \"Failed\"}}]}");
        _cleanup_strv_free_ char **failed = NULL;

        ASSERT_TRUE(olm_job_failed(j1));
        ASSERT_TRUE(olm_job_failed(j2));
        /* the first Failed condition decides */
        ASSERT_FALSE(olm_job_failed(j3));
        ASSERT_FALSE(olm_job_failed(j4));
        failed = olm_failed_install_plans(plans, "local-storage-operator");
        ASSERT_NOT_NULL(failed);
        ASSERT_EQ(strv_length(failed), 1u);
        ASSERT_STREQ(failed[0], "install-a");
}

TEST(csv_status)
{
        _cleanup_(json_object_putp) json_object *sub =
                parse_json("{\"status\": {\"currentCSV\": \"lso.v4.13\"}}");
        _cleanup_(json_object_putp) json_object *sub_empty =
                parse_json("{\"status\": {\"currentCSV\": \"\"}}");
        _cleanup_(json_object_putp) json_object *ok = parse_json(
                "{\"spec\": {\"version\": \"4.13.0-202307\"}, \"status\": {\"phase\": \"Succeeded\", "
                "\"message\": \"install strategy completed with no errors\"}}");
        _cleanup_(json_object_putp) json_object *bad =
                parse_json("{\"spec\": {}, \"status\": {\"phase\": \"Failed\", \"message\": \"broken\"}}");
        _cleanup_(json_object_putp) json_object *pending =
                parse_json("{\"status\": {\"phase\": \"Installing\"}}");
        const char *message, *version;
        OlmOperator op = { .name = (char *)"lso" };

        ASSERT_STREQ(subscription_current_csv(sub), "lso.v4.13");
        ASSERT_NULL(subscription_current_csv(sub_empty));
        ASSERT_STREQ(csv_operator_status(ok, &message, &version), "available");
        ASSERT_STREQ(message, "install strategy completed with no errors");
        ASSERT_STREQ(version, "4.13.0-202307");
        /* Go's zero semver without a version */
        ASSERT_STREQ(csv_operator_status(bad, &message, &version), "failed");
        ASSERT_STREQ(version, "0.0.0");
        ASSERT_STREQ(csv_operator_status(pending, &message, &version), "progressing");
        ASSERT_STREQ(message, "");

        /* a failed CSV is reported on its eleventh observation; others at once */
        ASSERT_TRUE(csv_report_allowed(&op, "progressing"));
        for (unsigned i = 0; i < OLM_FAILED_OBSERVATIONS_HELD; i++)
                ASSERT_FALSE(csv_report_allowed(&op, "failed"));
        ASSERT_TRUE(csv_report_allowed(&op, "failed"));
        ASSERT_TRUE(csv_report_allowed(&op, "available"));
}

TEST(custom_manifests)
{
        /* "kind: LocalVolume\n" and "kind: StorageCluster\n" */
        static const char *file =
                "[{\"Name\": \"lso\", \"Content\": \"a2luZDogTG9jYWxWb2x1bWUK\"}, {\"Name\": \"odf\", "
                "\"Content\": "
                "\"a2luZDogU3Rv\\r\\ncmFnZUNsdXN0ZXIK\"}, {\"Name\": \"bad\", \"Content\": \"!!\"}]";
        CustomManifest *m = NULL;
        size_t n = 0;
        char *err = NULL;

        ASSERT_OK(custom_manifests_parse(file, strlen(file), "4.8.12", &m, &n, NULL));
        ASSERT_EQ(n, 3u);
        ASSERT_STREQ(m[0].name, "lso");
        ASSERT_STREQ(m[0].content, "kind: LocalVolume\n");
        ASSERT_EQ(m[0].len, strlen("kind: LocalVolume\n"));
        ASSERT_STREQ(m[1].name, "ocs");
        ASSERT_STREQ(m[1].content, "kind: StorageCluster\n");
        /* undecodable: that manifest fails alone */
        ASSERT_NULL(m[2].content);
        custom_manifests_free(m, n);

        ASSERT_OK(custom_manifests_parse("[]", 2, "4.13", &m, &n, NULL));
        ASSERT_EQ(n, 0u);
        custom_manifests_free(m, n);
        ASSERT_OK(custom_manifests_parse("null", 4, "4.13", &m, &n, NULL));
        ASSERT_EQ(n, 0u);
        custom_manifests_free(m, n);
        ASSERT_ERROR(custom_manifests_parse("{}", 2, "4.13", &m, &n, &err), EBADMSG);
        ASSERT_NOT_NULL(err);
        free(err);
        err = NULL;
        ASSERT_ERROR(custom_manifests_parse("[1]", 3, "4.13", &m, &n, &err), EBADMSG);
        free(err);
}

DEFINE_TEST_MAIN
