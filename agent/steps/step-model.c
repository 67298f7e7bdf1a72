/* SPDX-License-Identifier: Apache-2.0 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "step-model.h"
#include "strutil.h"
#include "uuid.h"

/* A step argument larger than this is refused before parsing: the service
 * sends a few KiB at most (connectivity-check of a large cluster). */
#define MODEL_ARG_MAX (4u * 1024 * 1024)

json_object *model_get(json_object *o, const char *name)
{
        json_object *v = NULL;

        if (!json_object_is_type(o, json_type_object))
                return NULL;
        if (json_object_object_get_ex(o, name, &v))
                return v;
        json_object_object_foreach (o, key, val) {
                if (strcasecmp(key, name) == 0)
                        return val;
        }
        return NULL;
}

const char *model_get_string(json_object *o, const char *name)
{
        json_object *v = model_get(o, name);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool model_get_bool(json_object *o, const char *name)
{
        json_object *v = model_get(o, name);

        return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

size_t model_array_length(json_object *a)
{
        return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

long long model_get_int(json_object *o, const char *name)
{
        json_object *v = model_get(o, name);

        return json_object_is_type(v, json_type_int) ? (long long)json_object_get_int64(v) : 0;
}

static bool kind_matches(const ModelSchema *s, json_object *v)
{
        switch (s->kind) {
        case MODEL_STRING:
                return json_object_is_type(v, json_type_string);
        case MODEL_BOOL:
                return json_object_is_type(v, json_type_boolean);
        case MODEL_INT:
                return json_object_is_type(v, json_type_int);
        case MODEL_NUMBER:
                return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
        case MODEL_OBJECT:
                return json_object_is_type(v, json_type_object);
        case MODEL_ARRAY:
                return json_object_is_type(v, json_type_array);
        }
        return false;
}

static char *go_type_name(const ModelSchema *s)
{
        if (s->kind == MODEL_OBJECT)
                return strdup_printf("models.%s", s->go_type);
        return strdup(s->go_type);
}

/*
 * json.Unmarshal's type check. struct_name is the innermost Go struct being
 * filled (NULL at the top level), field_path the keys from the root.
 * Returns 0, or -EINVAL with the first error.
 */
static int unmarshal_check(const ModelSchema *s, json_object *v, const char *struct_name,
                           const char *field_path, char **reterr)
{
        int r;

        if (!v)
                return 0; /* null: the field stays unset */
        if (!kind_matches(s, v)) {
                _cleanup_free_ char *type = go_type_name(s);
                _cleanup_free_ char *value = NULL;

                /* Go names the number only when it does not fit an integer field */
                if (s->kind == MODEL_INT && json_object_is_type(v, json_type_double))
                        value = strdup_printf("number %s", json_object_to_json_string(v));
                if (!type)
                        return -ENOMEM;
                if (struct_name)
                        *reterr = strdup_printf(
                                "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
                                value ?: json_go_kind_name(v), struct_name, field_path, type);
                else
                        *reterr = strdup_printf("json: cannot unmarshal %s into Go value of type %s",
                                                value ?: json_go_kind_name(v), type);
                return -EINVAL;
        }

        if (s->kind == MODEL_OBJECT && s->fields) {
                for (const ModelField *f = s->fields; f->name; f++) {
                        _cleanup_free_ char *path = isempty(field_path)
                                                            ? strdup(f->name)
                                                            : strdup_printf("%s.%s", field_path, f->name);
                        if (!path)
                                return -ENOMEM;
                        r = unmarshal_check(f->schema, model_get(v, f->name), s->go_type, path, reterr);
                        if (r < 0)
                                return r;
                }
        } else if (s->kind == MODEL_ARRAY && s->items) {
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        r = unmarshal_check(s->items, json_object_array_get_idx(v, i), struct_name,
                                            strempty(field_path), reterr);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static bool mac_valid(const char *s)
{
        /* strfmt's "mac" is Go's net.ParseMAC: 6, 8 or 20 octets of two hex
         * digits separated by ':' or '-', or groups of four hex digits
         * separated by '.' */
        size_t n = strlen(s), groups = 1;
        char sep;

        if (n < 14)
                return false;
        sep = s[2] == ':' || s[2] == '-' ? s[2] : s[4] == '.' ? '.' : 0;
        if (!sep)
                return false;
        for (size_t i = 0; i < n; i++) {
                bool at_sep = sep == '.' ? i % 5 == 4 : i % 3 == 2;

                if (at_sep ? s[i] != sep : !strchr("0123456789abcdefABCDEF", s[i]) || s[i] == 0)
                        return false;
                if (at_sep)
                        groups++;
        }
        if (sep == '.')
                return (groups == 3 || groups == 4 || groups == 10) && n == groups * 5 - 1;
        return (groups == 6 || groups == 8 || groups == 20) && n == groups * 3 - 1;
}

static int add_error(Buf *errs, const char *fmt, ...) _printf_(2, 3);
static int add_error(Buf *errs, const char *fmt, ...)
{
        va_list ap;
        int r;

        r = buf_append_char(errs, '\n');
        if (r < 0)
                return r;
        va_start(ap, fmt);
        r = buf_appendv(errs, fmt, ap);
        va_end(ap);
        return r;
}

static int validate_string(const ModelSchema *s, const char *name, const char *v, bool required, Buf *errs)
{
        int r;

        /* go-swagger skips the checks of an optional field holding its zero value */
        if (!required && isempty(v))
                return 0;
        if (s->format == MODEL_FORMAT_UUID && !uuid_is_valid(v))
                return add_error(errs, "%s in body must be of type uuid: \"%s\"", name, v);
        if (s->format == MODEL_FORMAT_MAC && !mac_valid(v))
                return add_error(errs, "%s in body must be of type mac: \"%s\"", name, v);
        if (s->pattern) {
                regex_t re;

                r = regcomp(&re, s->pattern, REG_EXTENDED | REG_NOSUB);
                if (r != 0)
                        return -EINVAL; /* our table is wrong: a test catches it */
                r = regexec(&re, v, 0, NULL, 0);
                regfree(&re);
                if (r != 0)
                        return add_error(errs, "%s in body should match '%s'", name, s->swagger_pattern);
        }
        if (s->enum_values) {
                _cleanup_free_ char *list = NULL;
                bool found = false;

                for (const char *const *e = s->enum_values; *e; e++)
                        found = found || streq(*e, v);
                if (!found) {
                        list = strv_join((char **)s->enum_values, " ");
                        if (!list)
                                return -ENOMEM;
                        return add_error(errs, "%s in body should be one of [%s]", name, list);
                }
        }
        return 0;
}

static int validate(const ModelSchema *s, json_object *v, const char *name, bool required, Buf *errs)
{
        int r;

        if (!v) {
                if (required)
                        return add_error(errs, "%s in body is required", name);
                return 0;
        }
        switch (s->kind) {
        case MODEL_STRING:
                return validate_string(s, name, json_object_get_string(v), required, errs);
        case MODEL_OBJECT:
                for (const ModelField *f = s->fields; f && f->name; f++) {
                        _cleanup_free_ char *sub =
                                isempty(name) ? strdup(f->name) : strdup_printf("%s.%s", name, f->name);
                        if (!sub)
                                return -ENOMEM;
                        r = validate(f->schema, model_get(v, f->name), sub, f->required, errs);
                        if (r < 0)
                                return r;
                }
                return 0;
        case MODEL_ARRAY:
                for (size_t i = 0; s->items && i < json_object_array_length(v); i++) {
                        _cleanup_free_ char *sub =
                                isempty(name) ? strdup_printf("%zu", i) : strdup_printf("%s.%zu", name, i);
                        if (!sub)
                                return -ENOMEM;
                        /* array elements are validated as present values */
                        r = validate(s->items, json_object_array_get_idx(v, i), sub,
                                     s->items->kind == MODEL_STRING, errs);
                        if (r < 0)
                                return r;
                }
                return 0;
        default:
                return 0;
        }
}

int model_parse_arg(const char *arg, const ModelSchema *s, json_object **ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_buf_ Buf errs = BUF_INIT(64 * 1024);
        _cleanup_free_ char *perr = NULL;
        size_t len = strlen(strempty(arg));
        int r;

        if (len == 0) {
                *reterr = strdup("unexpected end of JSON input");
                return -EINVAL;
        }
        r = json_parse(arg, len, MODEL_ARG_MAX, &o, &perr);
        if (r < 0) {
                *reterr = TAKE_PTR(perr);
                if (!*reterr)
                        *reterr = strdup("invalid JSON");
                return -EINVAL;
        }
        r = unmarshal_check(s, o, NULL, "", reterr);
        if (r < 0)
                return r;

        if (!o && s->kind == MODEL_OBJECT) {
                /* a top-level null unmarshals into the zero value: every
                 * required field is missing */
                for (const ModelField *f = s->fields; f && f->name; f++) {
                        r = validate(f->schema, NULL, f->name, f->required, &errs);
                        if (r < 0)
                                return r;
                }
        } else {
                r = validate(s, o, "", false, &errs);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        if (errs.len > 0) {
                *reterr = strdup_printf("validation failure list:%s", buf_str(&errs));
                return -EINVAL;
        }
        *ret = TAKE_PTR(o);
        return 0;
}
