/* SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "jsonutil.h"
#include "strutil.h"

/* json-c's strict mode still takes single-quoted strings; JSON does not. */
static ssize_t find_single_quote(const char *data, size_t len)
{
        bool in_string = false;

        for (size_t i = 0; i < len; i++) {
                if (in_string) {
                        if (data[i] == '\\')
                                i++;
                        else if (data[i] == '"')
                                in_string = false;
                } else if (data[i] == '"')
                        in_string = true;
                else if (data[i] == '\'')
                        return (ssize_t)i;
        }
        return -1;
}

int json_parse(const char *data, size_t len, size_t max_size, json_object **ret, char **reterr)
{
        ssize_t quote;
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_tokener *tok;
        enum json_tokener_error jerr;
        size_t used;

        if (len > max_size) {
                if (reterr)
                        *reterr = strdup_printf("document of %zu bytes exceeds the limit of %zu", len,
                                                max_size);
                return -E2BIG;
        }
        if (len > INT32_MAX)
                return -E2BIG;
        quote = find_single_quote(data, len);
        if (quote >= 0) {
                if (reterr)
                        *reterr = strdup_printf("malformed JSON at offset %zd: unexpected character", quote);
                return -EBADMSG;
        }

        tok = json_tokener_new_ex(JSON_MAX_DEPTH);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, data, (int)len);
        jerr = json_tokener_get_error(tok);
        used = json_tokener_get_parse_end(tok);
        if (!o && jerr == json_tokener_continue && used == len) {
                /* a bare top-level number ("1") only ends at a terminator */
                o = json_tokener_parse_ex(tok, "", 1);
                jerr = json_tokener_get_error(tok) == json_tokener_success ? json_tokener_success
                                                                           : json_tokener_continue;
        }
        json_tokener_free(tok);

        if (jerr == json_tokener_continue) {
                if (reterr)
                        *reterr = strdup("unexpected end of JSON input");
                return -EBADMSG;
        }
        if (jerr != json_tokener_success) {
                if (reterr)
                        *reterr = strdup_printf("malformed JSON at offset %zu: %s", used,
                                                json_tokener_error_desc(jerr));
                return -EBADMSG;
        }
        for (size_t i = used; i < len; i++)
                if (!strchr(" \t\r\n", data[i])) {
                        if (reterr)
                                *reterr = strdup_printf("malformed JSON: trailing data at offset %zu", i);
                        return -EBADMSG;
                }
        *ret = TAKE_PTR(o);
        return 0;
}

int json_parse_file(const char *path, size_t max_size, json_object **ret, char **reterr)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        r = read_full_file(path, max_size, &data, &len);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("cannot read '%s': %s", path, strerror(-r));
                return r;
        }
        return json_parse(data, len, max_size, ret, reterr);
}

char *json_to_string(json_object *o, JsonFormatFlags flags)
{
        int f = JSON_C_TO_STRING_NOSLASHESCAPE;

        f |= (flags & JSON_FORMAT_PRETTY) ? (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED)
                                          : JSON_C_TO_STRING_PLAIN;
        return strdup(json_object_to_json_string_ext(o, f));
}

const char *json_kind_name(json_object *v)
{
        switch (json_object_get_type(v)) {
        case json_type_null:
                return "null";
        case json_type_boolean:
                return "a boolean";
        case json_type_double:
        case json_type_int:
                return "a number";
        case json_type_string:
                return "a string";
        case json_type_array:
                return "an array";
        case json_type_object:
                return "an object";
        }
        return "an unknown value";
}

const char *json_go_kind_name(json_object *v)
{
        switch (json_object_get_type(v)) {
        case json_type_boolean:
                return "bool";
        case json_type_int:
        case json_type_double:
                return "number";
        case json_type_string:
                return "string";
        case json_type_array:
                return "array";
        case json_type_object:
                return "object";
        default:
                return "null";
        }
}

static int type_error(const char *name, json_object *v, const char *want, char **reterr)
{
        if (reterr)
                *reterr = strdup_printf("field '%s': expected %s, got %s", name, want, json_kind_name(v));
        return -EBADMSG;
}

int json_dispatch(json_object *o, const JsonDispatch table[], void *base, JsonDispatchFlags flags,
                  char **reterr)
{
        int r;

        if (!json_object_is_type(o, json_type_object)) {
                if (reterr)
                        *reterr = strdup_printf("expected an object, got %s", json_kind_name(o));
                return -EBADMSG;
        }

        for (const JsonDispatch *d = table; d->name; d++) {
                json_object *v;

                if (!json_object_object_get_ex(o, d->name, &v)) {
                        if (d->flags & JSON_MANDATORY) {
                                if (reterr)
                                        *reterr = strdup_printf("missing field '%s'", d->name);
                                return -EBADMSG;
                        }
                        continue;
                }
                if (!v) {
                        if (d->flags & JSON_NULLABLE)
                                continue;
                        return type_error(d->name, v, "a value", reterr);
                }
                r = d->callback(d->name, v, (uint8_t *)base + d->offset, reterr);
                if (r < 0)
                        return r;
        }

        if (flags & JSON_STRICT) {
                json_object_object_foreach (o, key, val) {
                        bool known = false;
                        (void)val;
                        for (const JsonDispatch *d = table; d->name && !known; d++)
                                known = streq(d->name, key);
                        if (!known) {
                                if (reterr)
                                        *reterr = strdup_printf("unknown field '%s'", key);
                                return -EBADMSG;
                        }
                }
        }
        return 0;
}

int json_dispatch_string(const char *name, json_object *v, void *target, char **reterr)
{
        char **p = target;

        if (!json_object_is_type(v, json_type_string))
                return type_error(name, v, "a string", reterr);
        return free_and_strdup(p, json_object_get_string(v));
}

int json_dispatch_strv(const char *name, json_object *v, void *target, char **reterr)
{
        _cleanup_strv_free_ char **l = NULL;
        char ***p = target;
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return type_error(name, v, "an array of strings", reterr);
        n = json_object_array_length(v);
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                if (!json_object_is_type(e, json_type_string)) {
                        if (reterr)
                                *reterr = strdup_printf("field '%s[%zu]': expected a string, got %s", name,
                                                        i, json_kind_name(e));
                        return -EBADMSG;
                }
                l[i] = strdup(json_object_get_string(e));
                if (!l[i])
                        return -ENOMEM;
        }
        strv_free(*p);
        *p = TAKE_PTR(l);
        return 0;
}

int json_dispatch_bool(const char *name, json_object *v, void *target, char **reterr)
{
        if (!json_object_is_type(v, json_type_boolean))
                return type_error(name, v, "a boolean", reterr);
        *(bool *)target = json_object_get_boolean(v);
        return 0;
}

/* An integral JSON number: json-c keeps "1.0" as a double; Go refuses it
 * for integer fields, and so do we. */
static int get_integer(const char *name, json_object *v, int64_t *ret, char **reterr)
{
        if (!json_object_is_type(v, json_type_int))
                return type_error(name, v, "an integer", reterr);
        errno = 0;
        *ret = json_object_get_int64(v);
        if (errno == EINVAL || (*ret == INT64_MAX && json_object_get_uint64(v) > INT64_MAX)) {
                if (reterr)
                        *reterr = strdup_printf("field '%s': integer out of range", name);
                return -EBADMSG;
        }
        return 0;
}

int json_dispatch_int64(const char *name, json_object *v, void *target, char **reterr)
{
        return get_integer(name, v, target, reterr);
}

int json_dispatch_uint64(const char *name, json_object *v, void *target, char **reterr)
{
        if (!json_object_is_type(v, json_type_int))
                return type_error(name, v, "an unsigned integer", reterr);
        if (json_object_get_int64(v) < 0) {
                if (reterr)
                        *reterr = strdup_printf(
                                "field '%s': expected an unsigned integer, got a negative one", name);
                return -EBADMSG;
        }
        *(uint64_t *)target = json_object_get_uint64(v);
        return 0;
}

int json_dispatch_int(const char *name, json_object *v, void *target, char **reterr)
{
        int64_t i;
        int r;

        r = get_integer(name, v, &i, reterr);
        if (r < 0)
                return r;
        if (i < INT32_MIN || i > INT32_MAX) {
                if (reterr)
                        *reterr = strdup_printf("field '%s': integer out of range", name);
                return -EBADMSG;
        }
        *(int *)target = (int)i;
        return 0;
}

int json_dispatch_double(const char *name, json_object *v, void *target, char **reterr)
{
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return type_error(name, v, "a number", reterr);
        *(double *)target = json_object_get_double(v);
        return 0;
}

int json_dispatch_object(const char *name, json_object *v, void *target, char **reterr)
{
        json_object **p = target;

        if (!json_object_is_type(v, json_type_object))
                return type_error(name, v, "an object", reterr);
        json_object_put(*p);
        *p = json_object_get(v);
        return 0;
}

int json_dispatch_array(const char *name, json_object *v, void *target, char **reterr)
{
        json_object **p = target;

        if (!json_object_is_type(v, json_type_array))
                return type_error(name, v, "an array", reterr);
        json_object_put(*p);
        *p = json_object_get(v);
        return 0;
}

json_object *json_get(json_object *o, const char *key)
{
        json_object *v;

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

json_object *json_get_path(json_object *o, const char *dotted)
{
        _cleanup_strv_free_ char **parts = NULL;

        if (strv_split(dotted, ".", &parts) < 0)
                return NULL;
        STRV_FOREACH (p, parts) {
                o = json_get(o, *p);
                if (!o)
                        return NULL;
        }
        return o;
}

const char *json_get_string(json_object *o, const char *key)
{
        json_object *v = json_get(o, key);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int json_get_int64(json_object *o, const char *key, int64_t *ret)
{
        json_object *v = json_get(o, key);

        if (!v)
                return -ENOENT;
        if (!json_object_is_type(v, json_type_int))
                return -EBADMSG;
        *ret = json_object_get_int64(v);
        return 0;
}

int json_get_bool(json_object *o, const char *key, bool *ret)
{
        json_object *v = json_get(o, key);

        if (!v)
                return -ENOENT;
        if (!json_object_is_type(v, json_type_boolean))
                return -EBADMSG;
        *ret = json_object_get_boolean(v);
        return 0;
}

json_object *json_new_object(void)
{
        return json_object_new_object();
}

json_object *json_new_array(void)
{
        return json_object_new_array();
}

json_object *json_new_string(const char *s)
{
        return json_object_new_string(strempty(s));
}

json_object *json_new_int64(int64_t v)
{
        return json_object_new_int64(v);
}

json_object *json_new_bool(bool v)
{
        return json_object_new_boolean(v);
}

static int atoi_exponent(const char *s)
{
        int v = 0;

        if (safe_atoi(s[0] == '+' ? s + 1 : s, &v) < 0)
                return 0;
        return v;
}

json_object *json_new_double(double v)
{
        char text[64];

        if (!isfinite(v))
                return json_object_new_double(0);
        /* Shortest representation that round-trips, as Go's 'g'/-1 format. */
        for (int prec = 1; prec <= 17; prec++) {
                snprintf(text, sizeof(text), "%.*g", prec, v);
                if (strtod(text, NULL) == v)
                        break;
        }
        /* Go prints exponents only outside [1e-6, 1e21); rewrite "1e+06" style
         * output of %g back to plain digits inside that range, keeping the
         * significant digits found above. */
        if (strchr(text, 'e') && fabs(v) >= 1e-6 && fabs(v) < 1e21) {
                char *e = strchr(text, 'e');
                const char *mantissa_dot = strchr(text, '.');
                int exponent = atoi_exponent(e + 1);
                int digits = 1 + (mantissa_dot && mantissa_dot < e ? (int)(e - mantissa_dot - 1) : 0);
                int decimals = MAX(0, digits - 1 - exponent);
                snprintf(text, sizeof(text), "%.*f", decimals, v);
        }
        return json_object_new_double_s(v, text);
}

json_object *json_new_strv(char *const *l)
{
        _cleanup_(json_object_putp) json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        STRV_FOREACH (s, l)
                if (json_append(a, json_object_new_string(*s)) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

int json_add(json_object *o, const char *key, json_object *v)
{
        if (!v)
                return -ENOMEM;
        /* json-c asserts on a parent that is not an object: input that is
         * not the shape a caller expected must be an error, not an abort */
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(v);
                return -EINVAL;
        }
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_append(json_object *array, json_object *v)
{
        if (!v)
                return -ENOMEM;
        if (!json_object_is_type(array, json_type_array)) {
                json_object_put(v);
                return -EINVAL;
        }
        if (json_object_array_add(array, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_string(json_object *o, const char *key, const char *s)
{
        return json_add(o, key, json_new_string(s));
}

int json_add_int64(json_object *o, const char *key, int64_t v)
{
        return json_add(o, key, json_object_new_int64(v));
}

int json_add_bool(json_object *o, const char *key, bool v)
{
        return json_add(o, key, json_object_new_boolean(v));
}

int json_add_double(json_object *o, const char *key, double v)
{
        return json_add(o, key, json_new_double(v));
}

int json_add_string_nonempty(json_object *o, const char *key, const char *s)
{
        return isempty(s) ? 0 : json_add_string(o, key, s);
}

int json_add_int64_nonzero(json_object *o, const char *key, int64_t v)
{
        return v == 0 ? 0 : json_add_int64(o, key, v);
}

int json_add_bool_true(json_object *o, const char *key, bool v)
{
        return v ? json_add_bool(o, key, true) : 0;
}

int json_add_double_nonzero(json_object *o, const char *key, double v)
{
        return v == 0 ? 0 : json_add_double(o, key, v);
}
