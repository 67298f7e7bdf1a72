/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The finalizing stages' decisions and bodies (controller/finalize.h) as
 * tables, and the wire names they use checked against the service's
 * swagger.yaml (tests/reference): the finalizing stages, the operator
 * statuses, the host stages the controller reports, and every operation of
 * lib/assisted's table (method, path, success status).
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "assisted/assisted-user.h"
#include "cleanup.h"
#include "controller/finalize.h"
#include "fileio.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"
#include "yamlutil.h"

static json_object *parse_json(const char *text)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

static char *compact(json_object *o)
{
        return strdup(
                json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

TEST(operator_status)
{
        static const struct {
                const char *conditions;
                const char *status;
                const char *message;
        } cases[] = {
                { "[{\"type\": \"Available\", \"status\": \"True\", \"message\": \"All is well\"}]",
                  "available", "All is well" },
                /* the first deciding condition wins, in list order */
                { "[{\"type\": \"Degraded\", \"status\": \"False\"}, {\"type\": \"Progressing\", "
                  "\"status\": "
                  "\"True\", \"message\": \"rolling out\"}, {\"type\": \"Available\", \"status\": "
                  "\"True\"}]",
                  "progressing", "rolling out" },
                { "[{\"type\": \"Degraded\", \"status\": \"True\", \"message\": \"route not admitted\"}, "
                  "{\"type\": \"Available\", \"status\": \"True\"}]",
                  "failed", "route not admitted" },
                { "[{\"type\": \"Available\", \"status\": \"False\", \"message\": \"no pods\"}]", "failed",
                  "no pods" },
                { "[{\"type\": \"Upgradeable\", \"status\": \"True\"}]", "progressing", "" },
                { "[]", "progressing", "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *c = parse_json(cases[i].conditions);
                const char *message = NULL;

                ASSERT_STREQ(operator_status_of(c, &message), cases[i].status);
                ASSERT_STREQ(message, cases[i].message);
        }
        {
                const char *message = NULL;
                ASSERT_STREQ(operator_status_of(NULL, &message), "progressing");
                ASSERT_STREQ(message, "");
        }
}

TEST(report_rules)
{
        _cleanup_(json_object_putp) json_object *svc = parse_json(
                "{\"name\": \"console\", \"operator_type\": \"builtin\", \"status\": \"progressing\", "
                "\"status_info\": \"rolling out\"}");

        ASSERT_FALSE(operator_report_needed(svc, "progressing", "rolling out"));
        /* an empty message never overrides the service's */
        ASSERT_FALSE(operator_report_needed(svc, "progressing", ""));
        ASSERT_TRUE(operator_report_needed(svc, "progressing", "still rolling out"));
        ASSERT_TRUE(operator_report_needed(svc, "available", ""));
        ASSERT_TRUE(operator_report_needed(svc, "failed", "rolling out"));
        /* an operator the service does not monitor is never reported */
        ASSERT_FALSE(operator_report_needed(NULL, "available", "All is well"));
}

TEST(report_bodies)
{
        _cleanup_(json_object_putp)
                json_object *a = operator_report_body("console", "available", "All is well", "4.13.18"),
                            *b = operator_report_body("ocs", "failed", "", NULL);
        _cleanup_free_ char *ta = compact(a), *tb = compact(b);

        ASSERT_STREQ(ta, "{\"name\":\"console\",\"status\":\"available\",\"status_info\":\"All is well\","
                         "\"version\":\"4.13.18\"}");
        ASSERT_STREQ(tb, "{\"name\":\"odf\",\"status\":\"failed\"}");
}

TEST(monitored_operators)
{
        _cleanup_(json_object_putp) json_object *list = parse_json(
                "[{\"name\": \"console\", \"operator_type\": \"builtin\", \"status\": \"available\"},"
                " {\"name\": \"cvo\", \"operator_type\": \"builtin\", \"status\": \"progressing\"},"
                " {\"name\": \"odf\", \"operator_type\": \"olm\", \"status\": \"progressing\"},"
                " {\"name\": \"lso\", \"operator_type\": \"olm\", \"status\": \"available\"},"
                " {\"name\": \"cnv\", \"operator_type\": \"olm\"},"
                " {\"name\": \"mce\", \"operator_type\": \"olm\", \"status\": \"failed\"}]");

        ASSERT_TRUE(monitored_operator_available(monitored_operator_find(list, "console", "4.13")));
        ASSERT_FALSE(monitored_operator_available(monitored_operator_find(list, "cvo", "4.13")));
        ASSERT_NULL(monitored_operator_find(list, "nmstate", "4.13"));
        /* 4.8 runs OCS where the service says ODF */
        ASSERT_NOT_NULL(monitored_operator_find(list, "ocs", "4.8.2"));
        ASSERT_NOT_NULL(monitored_operator_find(list, "ocs", "4.8"));
        ASSERT_NULL(monitored_operator_find(list, "ocs", "4.9.0"));
        ASSERT_NULL(monitored_operator_find(list, "ocs", "4.80"));
        ASSERT_NOT_NULL(monitored_operator_find(list, "odf", "4.13"));
}

TEST(console_capability)
{
        static const struct {
                const char *cv;
                bool enabled;
        } cases[] = {
                { "{\"status\": {\"capabilities\": {\"enabledCapabilities\": [\"Console\"], "
                  "\"knownCapabilities\": [\"Console\", \"Insights\"]}}}",
                  true },
                { "{\"status\": {\"capabilities\": {\"enabledCapabilities\": [\"Insights\"], "
                  "\"knownCapabilities\": [\"Console\", \"Insights\"]}}}",
                  false },
                /* a release that does not know the capability has the console */
                { "{\"status\": {\"capabilities\": {\"knownCapabilities\": [\"Insights\"]}}}", true },
                { "{\"status\": {}}", true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *cv = parse_json(cases[i].cv);
                ASSERT_EQ(cluster_capability_enabled(cv, "Console"), cases[i].enabled);
        }
}

TEST(operators_report_and_completion)
{
        _cleanup_(json_object_putp) json_object *list = parse_json(
                "{\"items\": [{\"metadata\": {\"name\": \"console\"}, \"status\": {\"conditions\": "
                "[{\"type\": "
                "\"Degraded\", \"status\": \"True\", \"message\": \"route not admitted\"}]}},"
                " {\"metadata\": {\"name\": \"dns\"}, \"status\": {\"conditions\": [{\"type\": "
                "\"Available\", "
                "\"status\": \"True\", \"message\": \"\"}]}}, {\"metadata\": {\"name\": \"etcd\"}}]}");
        _cleanup_(json_object_putp) json_object *report = operators_report(list),
                                                *ok = completion_body(true, NULL, report), *failed = NULL,
                                                *bare = NULL;
        _cleanup_free_ char *tr = compact(report), *tok = compact(ok), *tf = NULL, *tb = NULL;

        ASSERT_STREQ(tr,
                     "[{\"name\":\"console\",\"status\":\"failed\",\"status_info\":\"route not admitted\"},"
                     "{\"name\":\"dns\",\"status\":\"available\"},{\"name\":\"etcd\",\"status\":"
                     "\"progressing\"}]");
        /* success: nothing but the flag, whatever the report */
        ASSERT_STREQ(tok, "{\"is_success\":true}");
        failed = completion_body(
                false, "Stopped waiting for cluster operators to be available: context deadline exceeded",
                report);
        tf = compact(failed);
        ASSERT_STREQ(tf,
                     "{\"data\":{\"CLUSTER_OPERATORS_REPORT\":[{\"name\":\"console\",\"status\":\"failed\","
                     "\"status_info\":\"route not admitted\"},{\"name\":\"dns\",\"status\":\"available\"},"
                     "{\"name\":\"etcd\",\"status\":\"progressing\"}]},\"error_info\":\"Stopped waiting for "
                     "cluster operators to be available: context deadline exceeded\",\"is_success\":false}");
        bare = completion_body(false, "x", NULL);
        tb = compact(bare);
        ASSERT_STREQ(tb, "{\"error_info\":\"x\",\"is_success\":false}");
}

TEST(stage_timed_out)
{
        _cleanup_(json_object_putp)
                json_object *yes = parse_json("{\"progress\": {\"finalizing_stage\": \"Waiting for olm "
                                              "operators csv initialization\", "
                                              "\"finalizing_stage_timed_out\": true}}"),
                            *no = parse_json("{\"progress\": {\"finalizing_stage\": \"Waiting for olm "
                                             "operators csv initialization\"}}");
        const char *s =
                finalizing_stage_to_string(FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV_INITIALIZATION);

        ASSERT_TRUE(finalizing_stage_timed_out(yes, s));
        ASSERT_FALSE(finalizing_stage_timed_out(yes, "Applying olm manifests"));
        ASSERT_FALSE(finalizing_stage_timed_out(no, s));
        ASSERT_FALSE(finalizing_stage_timed_out(NULL, s));
}

/* ---- the wire names against swagger.yaml ------------------------------------------ */

static json_object *swagger;

static json_object *swagger_load(void)
{
        _cleanup_free_ char *path = test_src_path("tests/reference/assisted-service/swagger.yaml"),
                            *data = NULL, *err = NULL;
        size_t len;

        if (swagger)
                return swagger;
        ASSERT_OK(read_full_file(path, 8u << 20, &data, &len));
        if (yaml_to_json(data, len, &swagger, &err) < 0)
                test_fail(__FILE__, __LINE__, "swagger.yaml: %s", strna(err));
        return swagger;
}

static bool enum_has(const char *definition, const char *value)
{
        json_object *e = json_get(json_get(json_get(swagger_load(), "definitions"), definition), "enum");

        ASSERT_NOT_NULL(e);
        for (size_t i = 0; i < json_object_array_length(e); i++)
                if (streq_ptr(json_object_get_string(json_object_array_get_idx(e, i)), value))
                        return true;
        return false;
}

TEST(wire_names)
{
        json_object *e;

        for (FinalizingStage s = 0; s < _FINALIZING_STAGE_MAX; s++) {
                ASSERT_TRUE(enum_has("finalizing-stage", finalizing_stage_to_string(s)));
                ASSERT_EQ(finalizing_stage_from_string(finalizing_stage_to_string(s)), s);
        }
        /* and nothing of the enum is missing here */
        e = json_get(json_get(json_get(swagger_load(), "definitions"), "finalizing-stage"), "enum");
        ASSERT_EQ(json_object_array_length(e), (size_t)_FINALIZING_STAGE_MAX);
        ASSERT_TRUE(enum_has("operator-status", OPERATOR_STATUS_AVAILABLE));
        ASSERT_TRUE(enum_has("operator-status", OPERATOR_STATUS_PROGRESSING));
        ASSERT_TRUE(enum_has("operator-status", OPERATOR_STATUS_FAILED));
        ASSERT_TRUE(enum_has("operator-type", OPERATOR_TYPE_BUILTIN));
        ASSERT_TRUE(enum_has("operator-type", OPERATOR_TYPE_OLM));
        ASSERT_TRUE(enum_has("host-stage", host_stage_to_string(HOST_STAGE_JOINED)));
        ASSERT_TRUE(enum_has("host-stage", host_stage_to_string(HOST_STAGE_DONE)));
        ASSERT_TRUE(enum_has("host-stage", host_stage_to_string(HOST_STAGE_CONFIGURING)));
}

TEST(operation_table)
{
        json_object *paths = json_get(swagger_load(), "paths");

        for (AssistedOp op = 0; op < _ASSISTED_OP_MAX; op++) {
                const AssistedOpInfo *info = assisted_op_info(op);
                _cleanup_free_ char *method = strdup_lower(info->method),
                                    *status = strdup_printf("%ld", info->success);
                json_object *o = json_get(json_get(paths, info->path), method);

                if (!o)
                        test_fail(__FILE__, __LINE__, "%s: no %s %s in swagger.yaml", info->id, info->method,
                                  info->path);
                ASSERT_STREQ(json_get_string(o, "operationId"), info->id);
                if (!json_get(json_get(o, "responses"), status))
                        test_fail(__FILE__, __LINE__, "%s: no %s answer in swagger.yaml", info->id, status);
        }
}

static void swagger_free(void)
{
        json_object_put(swagger);
}

int main(int argc, char **argv)
{
        int r = test_main(argc, argv);

        swagger_free();
        return r;
}
