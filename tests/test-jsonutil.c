/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

typedef struct Sample {
        char *host_id;
        char **args;
        bool insecure;
        int64_t seconds;
        int count;
        double rtt;
        json_object *extra;
} Sample;

static void sample_done(Sample *s)
{
        free(s->host_id);
        strv_free(s->args);
        json_object_put(s->extra);
}

static const JsonDispatch sample_table[] = {
        { "host_id", json_dispatch_string, offsetof(Sample, host_id), JSON_MANDATORY },
        { "args", json_dispatch_strv, offsetof(Sample, args), JSON_NULLABLE },
        { "insecure", json_dispatch_bool, offsetof(Sample, insecure), 0 },
        { "next_instruction_seconds", json_dispatch_int64, offsetof(Sample, seconds), 0 },
        { "count", json_dispatch_int, offsetof(Sample, count), 0 },
        { "average_rtt_ms", json_dispatch_double, offsetof(Sample, rtt), 0 },
        { "extra", json_dispatch_object, offsetof(Sample, extra), 0 },
        {},
};

static int parse_sample(const char *text, Sample *s, char **err)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        int r;

        r = json_parse(text, strlen(text), 1 << 20, &o, err);
        if (r < 0)
                return r;
        return json_dispatch(o, sample_table, s, 0, err);
}

TEST(dispatch_fills_struct)
{
        _cleanup_(sample_done) Sample s = {};
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(parse_sample("{\"host_id\":\"h\",\"args\":[\"a\",\"b\"],\"insecure\":true,"
                               "\"next_instruction_seconds\":60,\"count\":3,\"average_rtt_ms\":0.06,"
                               "\"extra\":{\"k\":1},\"unknown\":1}",
                               &s, &err));
        ASSERT_STREQ(s.host_id, "h");
        ASSERT_EQ(strv_length(s.args), 2);
        ASSERT_TRUE(s.insecure);
        ASSERT_EQ(s.seconds, 60);
        ASSERT_EQ(s.count, 3);
        ASSERT_TRUE(s.rtt == 0.06);
        ASSERT_NOT_NULL(json_get(s.extra, "k"));
}

TEST(dispatch_errors_name_the_field)
{
        static const struct {
                const char *in;
                const char *error;
        } cases[] = {
                { "{}", "missing field 'host_id'" },
                { "{\"host_id\":1}", "field 'host_id': expected a string, got a number" },
                { "{\"host_id\":\"h\",\"args\":[\"a\",2]}",
                  "field 'args[1]': expected a string, got a number" },
                { "{\"host_id\":\"h\",\"insecure\":\"true\"}",
                  "field 'insecure': expected a boolean, got a string" },
                { "{\"host_id\":\"h\",\"next_instruction_seconds\":1.5}",
                  "field 'next_instruction_seconds': expected an integer, got a number" },
                { "{\"host_id\":\"h\",\"count\":4294967296}", "field 'count': integer out of range" },
                { "{\"host_id\":null}", "field 'host_id': expected a value, got null" },
                { "[]", "expected an object, got an array" },
                { "{\"host_id\":", "unexpected end of JSON input" },
                { "{\"host_id\":\"h\"} x", "malformed JSON at offset 16" },
                { "{\"host_id\":\"h\"}  \n", NULL },
                { "{'a':1}", "malformed JSON at offset 1" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sample_done) Sample s = {};
                _cleanup_free_ char *err = NULL;

                if (!cases[i].error) {
                        /* trailing whitespace is fine */
                        ASSERT_OK(parse_sample(cases[i].in, &s, &err));
                        continue;
                }
                ASSERT_ERROR(parse_sample(cases[i].in, &s, &err), EBADMSG);
                ASSERT_NOT_NULL(err);
                if (!startswith(err, cases[i].error))
                        test_fail(__FILE__, __LINE__, "case %zu: got \"%s\"", i, err);
        }
}

TEST(dispatch_strict_rejects_unknown)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(sample_done) Sample s = {};
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(json_parse("{\"host_id\":\"h\",\"bogus\":1}", 25, 100, &o, NULL));
        ASSERT_ERROR(json_dispatch(o, sample_table, &s, JSON_STRICT, &err), EBADMSG);
        ASSERT_STREQ(err, "unknown field 'bogus'");
}

TEST(null_array_is_accepted_when_nullable)
{
        _cleanup_(sample_done) Sample s = {};

        ASSERT_OK(parse_sample("{\"host_id\":\"h\",\"args\":null}", &s, NULL));
        ASSERT_NULL(s.args);
}

TEST(parse_limits)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *err = NULL, *deep = NULL;
        char big[200];

        memset(big, ' ', sizeof(big));
        big[0] = '1';
        ASSERT_ERROR(json_parse(big, sizeof(big), 100, &o, &err), E2BIG);

        deep = malloc(2 * (JSON_MAX_DEPTH + 10) + 1);
        ASSERT_NOT_NULL(deep);
        for (int i = 0; i < JSON_MAX_DEPTH + 10; i++) {
                deep[i] = '[';
                deep[2 * (JSON_MAX_DEPTH + 10) - 1 - i] = ']';
        }
        deep[2 * (JSON_MAX_DEPTH + 10)] = 0;
        ASSERT_ERROR(json_parse(deep, strlen(deep), 1 << 20, &o, NULL), EBADMSG);
}

TEST(serialization_matches_go)
{
        _cleanup_(json_object_putp) json_object *o = json_new_object();
        _cleanup_free_ char *s = NULL;

        ASSERT_OK(json_add_string(o, "url", "http://a/b"));
        ASSERT_OK(json_add_string_nonempty(o, "empty", ""));
        ASSERT_OK(json_add_int64_nonzero(o, "zero", 0));
        ASSERT_OK(json_add_bool_true(o, "no", false));
        ASSERT_OK(json_add_double(o, "rtt", 0.06));
        ASSERT_OK(json_add_double(o, "loss", 0));
        ASSERT_OK(json_add_double(o, "rate", 1e6));
        ASSERT_OK(json_add_double(o, "small", 1e-6));
        ASSERT_OK(json_add_double(o, "tiny", 1.5e-7));
        ASSERT_OK(json_add_double(o, "huge", 1e21));
        ASSERT_OK(json_add_double(o, "third", 1.0 / 3));
        ASSERT_OK(json_add(o, "list", json_new_strv(NULL)));
        s = json_to_string(o, 0);
        ASSERT_STREQ(s,
                     "{\"url\":\"http://a/b\",\"rtt\":0.06,\"loss\":0,\"rate\":1000000,\"small\":0.000001,"
                     "\"tiny\":1.5e-07,\"huge\":1e+21,\"third\":0.3333333333333333,\"list\":[]}");
}

TEST(scalar_documents)
{
        static const char *const docs[] = { "1", "1\t", "-2.5", "true", "null", "\"s\"" };

        for (size_t i = 0; i < ELEMENTSOF(docs); i++) {
                _cleanup_(json_object_putp) json_object *o = NULL;
                _cleanup_free_ char *err = NULL;
                if (json_parse(docs[i], strlen(docs[i]), 100, &o, &err) < 0)
                        test_fail(__FILE__, __LINE__, "'%s': %s", docs[i], err);
        }
}

TEST(kind_names_in_go_words)
{
        static const struct {
                const char *doc, *go;
        } cases[] = { { "true", "bool" }, { "7", "number" },  { "2.5", "number" }, { "\"s\"", "string" },
                      { "[]", "array" },  { "{}", "object" }, { "null", "null" } };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *o = NULL;
                ASSERT_OK(json_parse(cases[i].doc, strlen(cases[i].doc), 100, &o, NULL));
                ASSERT_STREQ(json_go_kind_name(o), cases[i].go);
        }
}

TEST(getters)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        int64_t v;
        bool b;

        ASSERT_OK(json_parse("{\"status\":{\"conditions\":[1]},\"n\":5,\"s\":\"x\",\"b\":true}", 53, 100, &o,
                             NULL));
        ASSERT_NOT_NULL(json_get_path(o, "status.conditions"));
        ASSERT_NULL(json_get_path(o, "status.missing"));
        ASSERT_STREQ(json_get_string(o, "s"), "x");
        ASSERT_NULL(json_get_string(o, "n"));
        ASSERT_OK(json_get_int64(o, "n", &v));
        ASSERT_EQ(v, 5);
        ASSERT_ERROR(json_get_int64(o, "s", &v), EBADMSG);
        ASSERT_ERROR(json_get_int64(o, "zz", &v), ENOENT);
        ASSERT_OK(json_get_bool(o, "b", &b));
        ASSERT_TRUE(b);
}

DEFINE_TEST_MAIN
