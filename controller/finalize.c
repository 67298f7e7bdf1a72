/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "cleanup.h"
#include "controller/finalize.h"
#include "jsonutil.h"
#include "strutil.h"

const char *operator_status_of(json_object *conditions, const char **ret_message)
{
        for (size_t i = 0; conditions && i < json_object_array_length(conditions); i++) {
                json_object *c = json_object_array_get_idx(conditions, i);
                const char *type = json_get_string(c, "type"), *status = json_get_string(c, "status");
                const char *result = NULL;

                if (streq_ptr(type, "Available") && streq_ptr(status, "True"))
                        result = OPERATOR_STATUS_AVAILABLE;
                else if (streq_ptr(type, "Progressing") && streq_ptr(status, "True"))
                        result = OPERATOR_STATUS_PROGRESSING;
                else if ((streq_ptr(type, "Degraded") && streq_ptr(status, "True")) ||
                         (streq_ptr(type, "Available") && streq_ptr(status, "False")))
                        result = OPERATOR_STATUS_FAILED;
                if (result) {
                        *ret_message = strempty(json_get_string(c, "message"));
                        return result;
                }
        }
        *ret_message = "";
        return OPERATOR_STATUS_PROGRESSING;
}

bool openshift_version_is_4_8(const char *v)
{
        const char *rest = startswith(strempty(v), "4.8");

        return rest && (*rest == 0 || *rest == '.' || *rest == '-');
}

json_object *monitored_operator_find(json_object *list, const char *name, const char *openshift_version)
{
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *op = json_object_array_get_idx(list, i);
                const char *n = json_get_string(op, "name");

                /* the service reports ODF for every version; 4.8 deploys OCS */
                if (streq_ptr(n, "odf") && openshift_version_is_4_8(openshift_version))
                        n = "ocs";
                if (streq_ptr(n, name))
                        return op;
        }
        return NULL;
}

bool monitored_operator_available(json_object *op)
{
        return streq_ptr(json_get_string(op, "status"), OPERATOR_STATUS_AVAILABLE);
}

bool operator_report_needed(json_object *service_operator, const char *status, const char *message)
{
        if (!service_operator)
                return false;
        if (!streq_ptr(json_get_string(service_operator, "status"), status))
                return true;
        return !isempty(message) &&
               !streq(strempty(json_get_string(service_operator, "status_info")), message);
}

json_object *operator_report_body(const char *name, const char *status, const char *message,
                                  const char *version)
{
        _cleanup_(json_object_putp) json_object *o = json_new_object();

        /* the service's API knows OCS by the name ODF */
        if (streq_ptr(name, "ocs"))
                name = "odf";
        if (!o || json_add_string_nonempty(o, "name", name) < 0 ||
            json_add_string_nonempty(o, "status", status) < 0 ||
            json_add_string_nonempty(o, "status_info", message) < 0 ||
            json_add_string_nonempty(o, "version", version) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static bool string_in(json_object *array, const char *s)
{
        for (size_t i = 0; array && i < json_object_array_length(array); i++)
                if (streq_ptr(json_object_get_string(json_object_array_get_idx(array, i)), s))
                        return true;
        return false;
}

bool cluster_capability_enabled(json_object *cluster_version, const char *capability)
{
        json_object *caps = json_get_path(cluster_version, "status.capabilities");

        return string_in(json_get(caps, "enabledCapabilities"), capability) ||
               !string_in(json_get(caps, "knownCapabilities"), capability);
}

json_object *operators_report(json_object *cluster_operators)
{
        _cleanup_(json_object_putp) json_object *report = json_object_new_array();
        json_object *items = json_get(cluster_operators, "items");

        if (!report)
                return NULL;
        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *co = json_object_array_get_idx(items, i), *entry;
                const char *message,
                        *status = operator_status_of(json_get_path(co, "status.conditions"), &message);

                entry = json_new_object();
                if (!entry || json_object_array_add(report, entry) < 0) {
                        json_object_put(entry);
                        return NULL;
                }
                if (json_add_string_nonempty(entry, "name",
                                             json_get_string(json_get(co, "metadata"), "name")) < 0 ||
                    json_add_string(entry, "status", status) < 0 ||
                    json_add_string_nonempty(entry, "status_info", message) < 0)
                        return NULL;
        }
        return TAKE_PTR(report);
}

json_object *completion_body(bool success, const char *error_info, json_object *report)
{
        _cleanup_(json_object_putp) json_object *o = json_new_object(), *copy = NULL;

        if (!o)
                return NULL;
        if (!success && report) {
                json_object *data = json_new_object();
                if (json_object_deep_copy(report, &copy, NULL) < 0 || json_add(o, "data", data) < 0 ||
                    json_add(data, CLUSTER_OPERATORS_REPORT, TAKE_PTR(copy)) < 0)
                        return NULL;
        }
        if ((!success && json_add_string_nonempty(o, "error_info", error_info) < 0) ||
            json_add_bool(o, "is_success", success) < 0)
                return NULL;
        return TAKE_PTR(o);
}

bool finalizing_stage_timed_out(json_object *cluster, const char *stage)
{
        json_object *progress = json_get(cluster, "progress");
        bool timed_out = false;

        if (!streq_ptr(json_get_string(progress, "finalizing_stage"), stage))
                return false;
        return json_get_bool(progress, "finalizing_stage_timed_out", &timed_out) >= 0 && timed_out;
}
