/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"
#include "yamlutil.h"

static json_object *parse_yaml(const char *text)
{
        _cleanup_free_ char *err = NULL;
        json_object *o = NULL;

        if (yaml_to_json(text, strlen(text), &o, &err) < 0)
                test_fail(__FILE__, __LINE__, "cannot parse YAML: %s", strna(err));
        return o;
}

TEST(reading)
{
        _cleanup_(json_object_putp) json_object *o = parse_yaml("apiVersion: v1\n"
                                                                "controlPlane:\n"
                                                                "  name: master\n"
                                                                "  replicas: 3\n"
                                                                "arbiter: ~\n"
                                                                "list:\n"
                                                                "- a\n"
                                                                "- 'true'\n"
                                                                "- {k: v}\n");

        ASSERT_STREQ(json_get_string(o, "apiVersion"), "v1");
        /* every scalar stays a string: the caller decides what "3" means */
        ASSERT_STREQ(json_get_string(json_get(o, "controlPlane"), "replicas"), "3");
        ASSERT_TRUE(json_object_object_get_ex(o, "arbiter", NULL));
        ASSERT_NULL(json_get(o, "arbiter"));
        ASSERT_EQ(json_object_array_length(json_get(o, "list")), 3u);
        ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(json_get(o, "list"), 1)), "true");
}

TEST(reading_errors)
{
        static const struct {
                const char *in;
                const char *message;
        } cases[] = {
                { "a: 1\na: 2\n", "duplicate mapping key" },
                { "a: &x 1\nb: *x\n", "anchors are not supported" },
                { "a: !!binary aGVsbG8=\n", NULL },
                { "a: !custom 1\n", "unsupported tag" },
                { "a: [1\n", "YAML error" },
                { "---\na: 1\n---\nb: 2\n", "more than one document" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(json_object_putp) json_object *o = NULL;
                _cleanup_free_ char *err = NULL;
                int r = yaml_to_json(cases[i].in, strlen(cases[i].in), &o, &err);

                if (!cases[i].message) {
                        ASSERT_OK(r);
                        continue;
                }
                ASSERT_ERROR(r, EBADMSG);
                ASSERT_NOT_NULL(strstr(strna(err), cases[i].message));
        }
}

TEST(writing_quotes_what_would_change_type)
{
        _cleanup_(json_object_putp) json_object *o = json_tokener_parse(
                "{\"kind\": \"ConfigMap\", \"data\": {\"skip\": \"false\", \"count\": \"3\", \"yes\": \"y\","
                " \"url\": \"http://203.0.113.1:8090\", \"image\": \"quay.io/x/y:latest\", \"empty\": \"\","
                " \"nul\": \"null\", \"version\": \"4.6\", \"plain\": \"assisted-installer\"},"
                " \"num\": 5, \"n\": 1, \"b\": true, \"z\": null, \"list\": [], \"map\": {},"
                " \"items\": [{\"name\": \"x\"}, \"line\\nbreak\"]}");
        _cleanup_(json_object_putp) json_object *back = NULL;
        _cleanup_free_ char *text = NULL, *err = NULL;
        size_t len;

        ASSERT_NOT_NULL(o);
        ASSERT_OK(json_to_yaml(o, &text, &len));
        ASSERT_EQ(strlen(text), len);
        ASSERT_NOT_NULL(strstr(text, "kind: ConfigMap\n"));
        ASSERT_NOT_NULL(strstr(text, "  skip: \"false\"\n"));
        ASSERT_NOT_NULL(strstr(text, "  count: \"3\"\n"));
        ASSERT_NOT_NULL(strstr(text, "  \"yes\": \"y\"\n"));
        ASSERT_NOT_NULL(strstr(text, "  empty: \"\"\n"));
        ASSERT_NOT_NULL(strstr(text, "  nul: \"null\"\n"));
        ASSERT_NOT_NULL(strstr(text, "  plain: assisted-installer\n"));
        ASSERT_NOT_NULL(strstr(text, "num: 5\n"));
        ASSERT_NOT_NULL(strstr(text, "\"n\": 1\n"));
        ASSERT_NOT_NULL(strstr(text, "b: true\n"));
        ASSERT_NOT_NULL(strstr(text, "list: []\n"));
        ASSERT_NOT_NULL(strstr(text, "map: {}\n"));

        /* read back: the same strings (numbers and booleans come back as
         * strings, the reader does no type guessing) */
        ASSERT_OK(yaml_to_json(text, len, &back, &err));
        ASSERT_STREQ(json_get_string(json_get(back, "data"), "skip"), "false");
        ASSERT_STREQ(json_get_string(json_get(back, "data"), "url"), "http://203.0.113.1:8090");
        ASSERT_STREQ(json_get_string(json_get(back, "data"), "image"), "quay.io/x/y:latest");
        ASSERT_STREQ(json_get_string(json_get(back, "data"), "empty"), "");
        ASSERT_STREQ(json_get_string(json_get(back, "data"), "version"), "4.6");
        ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(json_get(back, "items"), 1)),
                     "line\nbreak");
        ASSERT_STREQ(json_get_string(back, "num"), "5");
        ASSERT_NULL(json_get(back, "z"));
}

DEFINE_TEST_MAIN
