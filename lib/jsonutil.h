/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * JSON over json-c: one parse entry with limits, table-driven decoding into
 * C structs with clear errors (after systemd's json_dispatch), builders with
 * Go's "omitempty" semantics, and serialization that matches what Go's
 * encoding/json would send (no escaped slashes, shortest float form).
 *
 * Error texts are returned through reterr (allocated, caller frees) so the
 * applet can log them with the context it has; they name the field:
 * "field 'host_id': expected a string, got a number".
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef struct json_object json_object;

#define JSON_MAX_DEPTH 64

/* Parses exactly one JSON document (trailing whitespace allowed). Returns
 * -EBADMSG with a message for malformed input, -E2BIG above max_size. */
int json_parse(const char *data, size_t len, size_t max_size, json_object **ret, char **reterr);
int json_parse_file(const char *path, size_t max_size, json_object **ret, char **reterr);

typedef enum JsonFormatFlags {
        JSON_FORMAT_PRETTY = 1 << 0,
} JsonFormatFlags;

/* Newly allocated serialization; NULL on allocation failure. A NULL object
 * serializes as "null". */
char *json_to_string(json_object *o, JsonFormatFlags flags);

/* Table-driven decoding. */
typedef enum JsonDispatchFlags {
        JSON_MANDATORY = 1 << 0, /* the key must be present */
        JSON_NULLABLE = 1 << 1, /* null is accepted and leaves the target unset */
        JSON_STRICT = 1 << 2, /* (for json_dispatch) unknown keys are errors */
} JsonDispatchFlags;

typedef int (*JsonDispatchCallback)(const char *name, json_object *v, void *target, char **reterr);

typedef struct JsonDispatch {
        const char *name;
        JsonDispatchCallback callback;
        size_t offset;
        JsonDispatchFlags flags;
} JsonDispatch;

/* Decodes the object o into the struct at base. Absent optional keys leave
 * their target untouched. Returns -EBADMSG with reterr set on the first
 * problem. */
int json_dispatch(json_object *o, const JsonDispatch table[], void *base, JsonDispatchFlags flags,
                  char **reterr);

/* Built-in callbacks; target types in brackets. Strings are copied. */
int json_dispatch_string(const char *name, json_object *v, void *target, char **reterr); /* char* */
int json_dispatch_strv(const char *name, json_object *v, void *target, char **reterr); /* char** */
int json_dispatch_bool(const char *name, json_object *v, void *target, char **reterr); /* bool */
int json_dispatch_int64(const char *name, json_object *v, void *target, char **reterr); /* int64_t */
int json_dispatch_uint64(const char *name, json_object *v, void *target, char **reterr); /* uint64_t */
int json_dispatch_int(const char *name, json_object *v, void *target, char **reterr); /* int */
int json_dispatch_double(const char *name, json_object *v, void *target, char **reterr); /* double */
int json_dispatch_object(const char *name, json_object *v, void *target,
                         char **reterr); /* json_object* (ref) */
int json_dispatch_array(const char *name, json_object *v, void *target,
                        char **reterr); /* json_object* (ref) */

/* "a string", "a number", ... for messages. */
const char *json_kind_name(json_object *v);
/* Go's encoding/json word for a value in an UnmarshalTypeError ("cannot
 * unmarshal number into ..."): bool, number, string, array, object, null. */
const char *json_go_kind_name(json_object *v);

/* Borrowed lookups; NULL when absent or of another type. */
json_object *json_get(json_object *o, const char *key);
/* Follows dotted keys: "status.conditions". */
json_object *json_get_path(json_object *o, const char *dotted);
const char *json_get_string(json_object *o, const char *key);
int json_get_int64(json_object *o, const char *key, int64_t *ret);
int json_get_bool(json_object *o, const char *key, bool *ret);

/* Building. Each json_add_* takes ownership of nothing but copies its
 * value; json_add() takes ownership of v, also on failure. Adding to
 * something that is not an object (json_append: not an array) is -EINVAL. */
json_object *json_new_object(void);
json_object *json_new_array(void);
json_object *json_new_string(const char *s);
json_object *json_new_int64(int64_t v);
json_object *json_new_bool(bool v);
/* The shortest decimal form that reads back as the same double, as Go. */
json_object *json_new_double(double v);
/* An array of the strings; an empty or NULL list gives []. */
json_object *json_new_strv(char *const *l);

int json_add(json_object *o, const char *key, json_object *v);
int json_append(json_object *array, json_object *v);
int json_add_string(json_object *o, const char *key, const char *s);
int json_add_int64(json_object *o, const char *key, int64_t v);
int json_add_bool(json_object *o, const char *key, bool v);
int json_add_double(json_object *o, const char *key, double v);
/* Go's omitempty: nothing is added for NULL/"", 0, false. */
int json_add_string_nonempty(json_object *o, const char *key, const char *s);
int json_add_int64_nonzero(json_object *o, const char *key, int64_t v);
int json_add_bool_true(json_object *o, const char *key, bool v);
int json_add_double_nonzero(json_object *o, const char *key, double v);
