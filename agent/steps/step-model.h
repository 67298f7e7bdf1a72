/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Step arguments as the Go agent checks them: json.Unmarshal into the
 * swagger model (type mismatches are errors, unknown keys are ignored, key
 * names match case-insensitively, null leaves a field unset), then the
 * model's go-swagger Validate() (required fields, formats, patterns,
 * enums). A failure gives the text the step reply carries with exit code
 * -1, in go-openapi's words:
 *
 *   "json: cannot unmarshal number into Go struct field NtpSynchronizationRequest.ntp_source of type string"
 *   "validation failure list:\nntp_source in body is required"
 *
 * The schemas are static tables written from swagger.yaml (one per request
 * model, in step-models.c); the patterns are the swagger regular
 * expressions rewritten as POSIX EREs with the same meaning.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;

typedef enum ModelKind {
        MODEL_STRING,
        MODEL_BOOL,
        MODEL_INT,
        MODEL_NUMBER,
        MODEL_OBJECT,
        MODEL_ARRAY,
} ModelKind;

typedef enum ModelFormat {
        MODEL_FORMAT_NONE,
        MODEL_FORMAT_UUID,
        MODEL_FORMAT_MAC,
} ModelFormat;

typedef struct ModelSchema ModelSchema;

typedef struct ModelField {
        const char *name;
        const ModelSchema *schema;
        bool required;
} ModelField;

struct ModelSchema {
        ModelKind kind;
        const char *go_type; /* in unmarshal errors: "string", "int64", "strfmt.UUID", "models.X" */
        ModelFormat format;
        const char *pattern; /* POSIX ERE */
        const char *swagger_pattern; /* as swagger.yaml writes it (for the message) */
        const char *const *enum_values; /* NULL-terminated */
        const ModelField *fields; /* objects: terminated by a NULL name */
        const ModelSchema *items; /* arrays */
};

/*
 * Decodes arg as the model s and validates it. Returns 0 and the parsed
 * document in *ret (owned by the caller), or -EINVAL with the Go text in
 * *reterr. The document is returned as parsed (unknown keys included);
 * read it with model_get(), which applies the same key matching.
 */
int model_parse_arg(const char *arg, const ModelSchema *s, json_object **ret, char **reterr);

/* The value of an object's field as json.Unmarshal finds it: the exact key,
 * else the first key equal ignoring case. NULL when absent or null. */
json_object *model_get(json_object *o, const char *name);
const char *model_get_string(json_object *o, const char *name);
bool model_get_bool(json_object *o, const char *name);
/* The length of an array, 0 for NULL or anything else (json-c asserts). */
size_t model_array_length(json_object *a);
/* Go's int64 of a JSON number field (0 when absent). */
long long model_get_int(json_object *o, const char *name);

/* The request model of a step type (StepType values), NULL for types
 * whose argument is no model (inventory, install, stop-installation...). */
const ModelSchema *step_request_model(int step_type);

/* The request models (step-models.c). */
extern const ModelSchema model_connectivity_check_params;
extern const ModelSchema model_free_addresses_request;
extern const ModelSchema model_ntp_synchronization_request;
extern const ModelSchema model_disk_speed_check_request;
extern const ModelSchema model_container_image_availability_request;
extern const ModelSchema model_domain_resolution_request;
extern const ModelSchema model_tang_connectivity_request;
extern const ModelSchema model_api_vip_connectivity_request;
extern const ModelSchema model_dhcp_allocation_request;
extern const ModelSchema model_verify_vips_request;
extern const ModelSchema model_logs_gather_cmd_request;
extern const ModelSchema model_upgrade_agent_request;
extern const ModelSchema model_download_boot_artifacts_request;
extern const ModelSchema model_reboot_for_reclaim_request;
