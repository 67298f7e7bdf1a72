/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "base64.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/finalize.h"
#include "controller/olm.h"
#include "jsonutil.h"
#include "strutil.h"

void olm_operators_free(OlmOperator *ops, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(ops[i].name);
                free(ops[i].namespace);
                free(ops[i].subscription);
        }
        free(ops);
}

int olm_operators_of(json_object *list, const char *openshift_version, bool only_progressing,
                     OlmOperator **ret, size_t *ret_n)
{
        size_t total = list ? json_object_array_length(list) : 0, n = 0;
        OlmOperator *ops = calloc(total + 1, sizeof(OlmOperator));

        if (!ops)
                return -ENOMEM;
        for (size_t i = 0; i < total; i++) {
                json_object *op = json_object_array_get_idx(list, i);
                const char *name = json_get_string(op, "name"),
                           *sub = json_get_string(op, "subscription_name");
                const char *status = json_get_string(op, "status");
                OlmOperator *o = &ops[n];

                if (!streq_ptr(json_get_string(op, "operator_type"), OPERATOR_TYPE_OLM))
                        continue;
                if (only_progressing && (streq_ptr(status, OPERATOR_STATUS_AVAILABLE) ||
                                         streq_ptr(status, OPERATOR_STATUS_FAILED)))
                        continue;
                if (streq_ptr(name, "odf") && openshift_version_is_4_8(openshift_version)) {
                        name = "ocs";
                        sub = "ocs-operator";
                }
                o->name = strdup(strempty(name));
                o->namespace = strdup(strempty(json_get_string(op, "namespace")));
                o->subscription = strdup(strempty(sub));
                n++;
                if (!o->name || !o->namespace || !o->subscription) {
                        olm_operators_free(ops, n);
                        return -ENOMEM;
                }
        }
        *ret = ops;
        *ret_n = n;
        return 0;
}

bool olm_job_failed(json_object *job)
{
        json_object *status = json_get(job, "status"), *conds = json_get(status, "conditions");
        int64_t failed = 0;

        if (json_get_int64(status, "failed", &failed) >= 0 && failed > 0)
                return true;
        for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
                json_object *c = json_object_array_get_idx(conds, i);
                if (streq_ptr(json_get_string(c, "type"), "Failed"))
                        return streq_ptr(json_get_string(c, "status"), "True");
        }
        return false;
}

char **olm_failed_install_plans(json_object *plans, const char *subscription)
{
        _cleanup_strv_free_ char **names = NULL;
        json_object *items = json_get(plans, "items");

        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *p = json_object_array_get_idx(items, i);
                json_object *owners = json_get_path(p, "metadata.ownerReferences");
                bool owned = false;

                for (size_t j = 0; owners && j < json_object_array_length(owners); j++)
                        if (streq_ptr(json_get_string(json_object_array_get_idx(owners, j), "name"),
                                      subscription))
                                owned = true;
                if (!owned || !streq_ptr(json_get_string(json_get(p, "status"), "phase"), "Failed"))
                        continue;
                if (strv_extend(&names, strempty(json_get_string(json_get(p, "metadata"), "name"))) < 0)
                        return NULL;
        }
        return names ? TAKE_PTR(names) : calloc(1, sizeof(char *));
}

const char *subscription_current_csv(json_object *subscription)
{
        const char *csv = json_get_string(json_get(subscription, "status"), "currentCSV");

        return isempty(csv) ? NULL : csv;
}

const char *csv_operator_status(json_object *csv, const char **ret_message, const char **ret_version)
{
        json_object *status = json_get(csv, "status");
        const char *phase = json_get_string(status, "phase"), *version;

        *ret_message = strempty(json_get_string(status, "message"));
        version = json_get_string(json_get(csv, "spec"), "version");
        *ret_version = isempty(version) ? "0.0.0" : version;
        if (streq_ptr(phase, "Succeeded"))
                return OPERATOR_STATUS_AVAILABLE;
        if (streq_ptr(phase, "Failed"))
                return OPERATOR_STATUS_FAILED;
        return OPERATOR_STATUS_PROGRESSING;
}

bool csv_report_allowed(OlmOperator *op, const char *status)
{
        if (!streq_ptr(status, OPERATOR_STATUS_FAILED))
                return true;
        if (op->failed_seen < OLM_FAILED_OBSERVATIONS_HELD) {
                op->failed_seen++;
                return false;
        }
        return true;
}

void custom_manifests_free(CustomManifest *m, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(m[i].name);
                free(m[i].content);
        }
        free(m);
}

int custom_manifests_parse(const char *data, size_t len, const char *openshift_version, CustomManifest **ret,
                           size_t *ret_n, char **reterr)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_free_ char *err = NULL;
        CustomManifest *m;
        size_t n;
        int r;

        r = json_parse(data, len, BUF_MAX_JSON_DOC, &list, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("Failed to unmarshall custom manifest file content: %s",
                                                strna(err));
                return -EBADMSG;
        }
        /* Go's Unmarshal of null into a slice: none */
        if (json_object_is_type(list, json_type_null)) {
                *ret = calloc(1, sizeof(CustomManifest));
                *ret_n = 0;
                return *ret ? 0 : -ENOMEM;
        }
        if (!json_object_is_type(list, json_type_array)) {
                if (reterr)
                        *reterr = strdup("Failed to unmarshall custom manifest file content: not a list");
                return -EBADMSG;
        }
        n = json_object_array_length(list);
        m = calloc(n + 1, sizeof(CustomManifest));
        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                const char *name = json_get_string(e, "Name"), *content = json_get_string(e, "Content");

                if (e && !json_object_is_type(e, json_type_object)) {
                        custom_manifests_free(m, n);
                        if (reterr)
                                *reterr =
                                        strdup("Failed to unmarshall custom manifest file content: an entry "
                                               "is not an object");
                        return -EBADMSG;
                }
                if (streq_ptr(name, "odf") && openshift_version_is_4_8(openshift_version))
                        name = "ocs";
                m[i].name = strdup(strempty(name));
                if (!m[i].name) {
                        custom_manifests_free(m, n);
                        return -ENOMEM;
                }
                /* a content that does not decode fails its manifest only
                 * (upstream logs it and goes on): content stays NULL */
                if (base64_decode(strempty(content), "\r\n", &m[i].content, &m[i].len) < 0)
                        m[i].content = NULL;
        }
        *ret = m;
        *ret_n = n;
        return 0;
}
