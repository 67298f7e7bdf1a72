/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "buf.h"
#include "cleanup.h"
#include "strutil.h"
#include "yamlutil.h"

#define YAML_MAX_DEPTH 64
/* what json_to_yaml() may produce: manifests and configs, never bulk data */
#define YAML_OUTPUT_MAX (16u * 1024 * 1024)

/* ---- reading ---- */

typedef struct YamlReader {
        yaml_parser_t parser;
        yaml_event_t event;
        bool have_event;
        char *error;
} YamlReader;

static int yaml_next(YamlReader *y)
{
        if (y->have_event) {
                yaml_event_delete(&y->event);
                y->have_event = false;
        }
        if (!yaml_parser_parse(&y->parser, &y->event)) {
                if (!y->error)
                        y->error =
                                strdup_printf("YAML error at line %zu: %s", y->parser.problem_mark.line + 1,
                                              y->parser.problem ? y->parser.problem : "unknown");
                return -EBADMSG;
        }
        y->have_event = true;
        return 0;
}

static int yaml_fail(YamlReader *y, const char *what)
{
        if (!y->error)
                y->error = strdup_printf("YAML line %zu: %s", y->event.start_mark.line + 1, what);
        return -EBADMSG;
}

static int yaml_scalar_to_json(YamlReader *y, json_object **ret)
{
        const char *v = (const char *)y->event.data.scalar.value;
        size_t len = y->event.data.scalar.length;
        const char *tag = (const char *)y->event.data.scalar.tag;

        if (tag && !startswith(tag, "tag:yaml.org,2002:"))
                return yaml_fail(y, "unsupported tag");
        if (y->event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !tag &&
            (len == 0 || streq(v, "~") || streq(v, "null") || streq(v, "Null") || streq(v, "NULL"))) {
                *ret = NULL;
                return 0;
        }
        if (memchr(v, 0, len))
                return yaml_fail(y, "NUL byte in a string");
        *ret = json_object_new_string_len(v, (int)len);
        return *ret ? 0 : -ENOMEM;
}

static int yaml_node_to_json(YamlReader *y, unsigned depth, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        int r;

        if (depth > YAML_MAX_DEPTH)
                return yaml_fail(y, "nested too deeply");

        switch (y->event.type) {
        case YAML_SCALAR_EVENT:
                if (y->event.data.scalar.anchor)
                        return yaml_fail(y, "anchors are not supported");
                return yaml_scalar_to_json(y, ret);
        case YAML_ALIAS_EVENT:
                return yaml_fail(y, "aliases are not supported");
        case YAML_SEQUENCE_START_EVENT:
                if (y->event.data.sequence_start.anchor)
                        return yaml_fail(y, "anchors are not supported");
                o = json_object_new_array();
                if (!o)
                        return -ENOMEM;
                for (;;) {
                        json_object *item = NULL;

                        r = yaml_next(y);
                        if (r < 0)
                                return r;
                        if (y->event.type == YAML_SEQUENCE_END_EVENT)
                                break;
                        r = yaml_node_to_json(y, depth + 1, &item);
                        if (r < 0)
                                return r;
                        if (json_object_array_add(o, item) < 0) {
                                json_object_put(item);
                                return -ENOMEM;
                        }
                }
                *ret = TAKE_PTR(o);
                return 0;
        case YAML_MAPPING_START_EVENT:
                if (y->event.data.mapping_start.anchor)
                        return yaml_fail(y, "anchors are not supported");
                o = json_object_new_object();
                if (!o)
                        return -ENOMEM;
                for (;;) {
                        _cleanup_free_ char *key = NULL;
                        json_object *value = NULL;

                        r = yaml_next(y);
                        if (r < 0)
                                return r;
                        if (y->event.type == YAML_MAPPING_END_EVENT)
                                break;
                        if (y->event.type != YAML_SCALAR_EVENT)
                                return yaml_fail(y, "mapping keys must be scalars");
                        key = strndup((const char *)y->event.data.scalar.value, y->event.data.scalar.length);
                        if (!key)
                                return -ENOMEM;
                        if (strlen(key) != y->event.data.scalar.length)
                                return yaml_fail(y, "NUL byte in a key");
                        if (json_object_object_get_ex(o, key, NULL))
                                return yaml_fail(y, "duplicate mapping key");
                        r = yaml_next(y);
                        if (r < 0)
                                return r;
                        r = yaml_node_to_json(y, depth + 1, &value);
                        if (r < 0)
                                return r;
                        if (json_object_object_add(o, key, value) < 0) {
                                json_object_put(value);
                                return -ENOMEM;
                        }
                }
                *ret = TAKE_PTR(o);
                return 0;
        default:
                return yaml_fail(y, "unexpected YAML event");
        }
}

int yaml_to_json(const char *data, size_t len, json_object **ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *root = NULL;
        YamlReader y = {};
        bool have_doc = false;
        int r;

        if (!yaml_parser_initialize(&y.parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&y.parser, (const unsigned char *)data, len);

        for (;;) {
                r = yaml_next(&y);
                if (r < 0)
                        goto finish;
                if (y.event.type == YAML_STREAM_END_EVENT)
                        break;
                if (y.event.type == YAML_STREAM_START_EVENT || y.event.type == YAML_DOCUMENT_START_EVENT ||
                    y.event.type == YAML_DOCUMENT_END_EVENT)
                        continue;
                if (have_doc) {
                        r = yaml_fail(&y, "more than one document");
                        goto finish;
                }
                have_doc = true;
                r = yaml_node_to_json(&y, 0, &root);
                if (r < 0)
                        goto finish;
        }
        r = 0;
        *ret = TAKE_PTR(root);
finish:
        if (y.have_event)
                yaml_event_delete(&y.event);
        yaml_parser_delete(&y.parser);
        if (r < 0 && reterr)
                *reterr = y.error ? TAKE_PTR(y.error) : strdup("cannot parse YAML");
        free(y.error);
        return r;
}

/* ---- writing ---- */

typedef struct YamlWriter {
        yaml_emitter_t emitter;
        yaml_event_t event;
        Buf out;
        int error;
} YamlWriter;

static int yaml_write_handler(void *data, unsigned char *buffer, size_t size)
{
        YamlWriter *w = data;
        int r = buf_append(&w->out, buffer, size);

        if (r < 0) {
                w->error = r;
                return 0;
        }
        return 1;
}

static int yaml_emit(YamlWriter *w)
{
        /* yaml_emitter_emit() takes the event, also on failure */
        if (!yaml_emitter_emit(&w->emitter, &w->event))
                return w->error < 0 ? w->error : -EINVAL;
        return 0;
}

static bool word_in(const char *s, const char *const *words)
{
        for (; *words; words++)
                if (strcasecmp(s, *words) == 0)
                        return true;
        return false;
}

/* Whether s may be written as a plain scalar: only characters no YAML
 * reader gives a meaning to, and nothing a YAML 1.1 or 1.2 reader (kube's
 * decoder is YAML 1.1) would take for a boolean, null, number or date. */
static bool plain_safe(const char *s)
{
        static const char *const special[] = { "y",    "yes", "n",    "no",    "true",  "false", "on", "off",
                                               "null", "~",   ".inf", "-.inf", "+.inf", ".nan",  NULL };

        if (isempty(s) || word_in(s, special))
                return false;
        /* a digit or sign first: a number, a version, a date; quoted */
        if (!isalpha((unsigned char)s[0]) && s[0] != '/' && s[0] != '_')
                return false;
        for (const char *p = s; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("._/-", *p))
                        return false;
        return true;
}

static int yaml_emit_scalar(YamlWriter *w, const char *s, size_t len, bool quote_if_needed)
{
        yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;

        if (quote_if_needed && (strlen(s) != len || !plain_safe(s)))
                style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        if (!yaml_scalar_event_initialize(&w->event, NULL, NULL, (yaml_char_t *)s, (int)len, 1, 1, style))
                return -ENOMEM;
        return yaml_emit(w);
}

static int yaml_emit_node(YamlWriter *w, json_object *o, unsigned depth)
{
        int r;

        if (depth > YAML_MAX_DEPTH)
                return -ELOOP;
        switch (json_object_get_type(o)) {
        case json_type_null:
                return yaml_emit_scalar(w, "null", 4, false);
        case json_type_boolean:
                return json_object_get_boolean(o) ? yaml_emit_scalar(w, "true", 4, false)
                                                  : yaml_emit_scalar(w, "false", 5, false);
        case json_type_int:
        case json_type_double: {
                const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
                return yaml_emit_scalar(w, t, strlen(t), false);
        }
        case json_type_string:
                return yaml_emit_scalar(w, json_object_get_string(o), (size_t)json_object_get_string_len(o),
                                        true);
        case json_type_array: {
                size_t n = json_object_array_length(o);
                if (!yaml_sequence_start_event_initialize(&w->event, NULL, NULL, 1,
                                                          n ? YAML_BLOCK_SEQUENCE_STYLE
                                                            : YAML_FLOW_SEQUENCE_STYLE))
                        return -ENOMEM;
                r = yaml_emit(w);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        r = yaml_emit_node(w, json_object_array_get_idx(o, i), depth + 1);
                        if (r < 0)
                                return r;
                }
                if (!yaml_sequence_end_event_initialize(&w->event))
                        return -ENOMEM;
                return yaml_emit(w);
        }
        case json_type_object: {
                if (!yaml_mapping_start_event_initialize(&w->event, NULL, NULL, 1,
                                                         json_object_object_length(o)
                                                                 ? YAML_BLOCK_MAPPING_STYLE
                                                                 : YAML_FLOW_MAPPING_STYLE))
                        return -ENOMEM;
                r = yaml_emit(w);
                if (r < 0)
                        return r;
                json_object_object_foreach (o, key, value) {
                        r = yaml_emit_scalar(w, key, strlen(key), true);
                        if (r < 0)
                                return r;
                        r = yaml_emit_node(w, value, depth + 1);
                        if (r < 0)
                                return r;
                }
                if (!yaml_mapping_end_event_initialize(&w->event))
                        return -ENOMEM;
                return yaml_emit(w);
        }
        }
        return -EINVAL;
}

int json_to_yaml(json_object *o, char **ret, size_t *ret_len)
{
        YamlWriter w = { .out = BUF_INIT(YAML_OUTPUT_MAX) };
        int r = -ENOMEM;

        if (!yaml_emitter_initialize(&w.emitter))
                return -ENOMEM;
        yaml_emitter_set_output(&w.emitter, yaml_write_handler, &w);
        yaml_emitter_set_unicode(&w.emitter, 1);
        yaml_emitter_set_indent(&w.emitter, 2);
        yaml_emitter_set_width(&w.emitter, -1);

        if (!yaml_stream_start_event_initialize(&w.event, YAML_UTF8_ENCODING))
                goto finish;
        r = yaml_emit(&w);
        if (r < 0)
                goto finish;
        r = -ENOMEM;
        if (!yaml_document_start_event_initialize(&w.event, NULL, NULL, NULL, 1))
                goto finish;
        r = yaml_emit(&w);
        if (r >= 0)
                r = yaml_emit_node(&w, o, 0);
        if (r < 0)
                goto finish;
        r = -ENOMEM;
        if (!yaml_document_end_event_initialize(&w.event, 1))
                goto finish;
        r = yaml_emit(&w);
        if (r < 0)
                goto finish;
        r = -ENOMEM;
        if (!yaml_stream_end_event_initialize(&w.event))
                goto finish;
        r = yaml_emit(&w);
        if (r >= 0 && !yaml_emitter_flush(&w.emitter))
                r = w.error < 0 ? w.error : -EIO;
        if (r >= 0)
                r = buf_take(&w.out, ret, ret_len);
finish:
        yaml_emitter_delete(&w.emitter);
        buf_release(&w.out);
        return r;
}
