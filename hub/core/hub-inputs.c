/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "base64.h"
#include "buf.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "hub-exec.h"
#include "hub-inputs.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

void hub_ref_done(HubRef *r)
{
        json_object_put(r->object);
        free(r->message);
        *r = (HubRef){};
}

int hub_observe_ref(HubContext *ctx, HubKind kind, const char *ns, const char *name, HubRef *ret)
{
        int r;

        *ret = (HubRef){};
        r = hub_cache_get(ctx->cache, kind, ns, name, &ret->object);
        if (r != -ENOENT)
                return r;
        if (kind != HUB_KIND_SECRET) {
                /* every object of the other kinds is cached: not there is not found */
                const KubeResource *res = hub_kind_resource(kind);

                ret->error = -ENOENT;
                ret->message = isempty(res->group)
                                       ? strdup_printf("%s \"%s\" not found", res->resource, strempty(name))
                                       : strdup_printf("%s.%s \"%s\" not found", res->resource, res->group,
                                                       strempty(name));
                return ret->message ? 0 : -ENOMEM;
        }
        /* a Secret not labelled yet: read it directly (upstream's APIReader) */
        return hub_get_ref(ctx, hub_kind_resource(kind), ns, name, ret);
}

int hub_get_ref(HubContext *ctx, const KubeResource *res, const char *ns, const char *name, HubRef *ret)
{
        _cleanup_kube_status_ KubeStatus st = {};
        int r;

        *ret = (HubRef){};
        r = kube_get(ctx->kube, res, ns, name, &ret->object, &st);
        if (r < 0) {
                ret->object = NULL;
                ret->error = r;
                ret->message = strdup(st.message ? st.message : strerror(-ERRNO_VALUE(r)));
                if (!ret->message)
                        return -ENOMEM;
        }
        return 0;
}

char *hub_secret_value(json_object *secret, const char *key)
{
        const char *data = json_get_string(json_get(secret, "data"), key);
        _cleanup_erase_ char *decoded = NULL;
        size_t len = 0;

        if (!data || base64_decode(data, NULL, &decoded, &len) < 0 || strlen(decoded) != len)
                return NULL;
        return TAKE_PTR(decoded);
}

int hub_secret_set_data(json_object *secret, const char *const *kv)
{
        json_object *data = hub_json_ensure_object(secret, "data");

        if (!data)
                return -ENOMEM;
        for (size_t i = 0; kv[i]; i += 2) {
                _cleanup_free_ char *b = base64_encode(kv[i + 1], strlen(kv[i + 1]));

                if (!b || json_add_string(data, kv[i], b) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int hub_pull_secret(const HubRef *secret, const char *name, char **ret, char **ret_error, bool *ret_user)
{
        _cleanup_erase_ char *decoded = NULL;
        _cleanup_(json_object_putp) json_object *j = NULL;

        *ret = NULL;
        *ret_error = NULL;
        *ret_user = true;
        if (!secret->object) {
                *ret_user = secret->error == -ENOENT;
                *ret_error = strdup_printf("failed to find secret %s: %s", name, strna(secret->message));
                return *ret_error ? 0 : -ENOMEM;
        }
        if (!json_get_string(json_get(secret->object, "data"), ".dockerconfigjson")) {
                *ret_error = strdup_printf("secret %s did not contain key .dockerconfigjson", name);
                return *ret_error ? 0 : -ENOMEM;
        }
        decoded = hub_secret_value(secret->object, ".dockerconfigjson");
        if (!decoded || json_parse(decoded, strlen(decoded), BUF_MAX_JSON_DOC, &j, NULL) < 0 ||
            !json_object_is_type(json_get(j, "auths"), json_type_object)) {
                *ret_error = strdup_printf(
                        "invalid pull secret data in secret %s: not a docker config with \"auths\"", name);
                return *ret_error ? 0 : -ENOMEM;
        }
        *ret = TAKE_PTR(decoded);
        return 0;
}

int hub_plan_label_watched(HubPlan *plan, HubKind kind, json_object *obj)
{
        _cleanup_(json_object_putp) json_object *desired = NULL;

        if (!obj || (streq_ptr(hub_object_label(obj, HUB_LABEL_WATCH), "true") &&
                     streq_ptr(hub_object_label(obj, HUB_LABEL_BACKUP), "true")))
                return 0;
        desired = hub_json_copy(obj);
        if (!desired || hub_object_set_label(desired, HUB_LABEL_WATCH, "true") < 0 ||
            hub_object_set_label(desired, HUB_LABEL_BACKUP, "true") < 0)
                return -ENOMEM;
        return hub_plan_patch_object(plan, kind, obj, desired, false, false);
}

int hub_digest(const char *s, char ret[static 80])
{
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        if (EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL) != 1)
                return -EIO;
        snprintf(ret, 8, "sha256:");
        for (unsigned i = 0; i < n && i < 32; i++)
                snprintf(ret + 7 + 2 * i, 3, "%02x", md[i]);
        return 0;
}

char *hub_failing_validations(const char *validations_info, bool skip_disabled)
{
        _cleanup_(json_object_putp) json_object *v = NULL;
        _cleanup_strv_free_ char **msgs = NULL;

        if (isempty(validations_info) ||
            json_parse(validations_info, strlen(validations_info), BUF_MAX_JSON_DOC, &v, NULL) < 0 ||
            !json_object_is_type(v, json_type_object))
                return strdup("");
        json_object_object_foreach (v, category, list) {
                (void)category;
                for (size_t i = 0;
                     json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
                        json_object *e = json_object_array_get_idx(list, i);
                        const char *st = json_get_string(e, "status");

                        if (streq_ptr(st, "success") || (skip_disabled && streq_ptr(st, "disabled")))
                                continue;
                        if (strv_extend(&msgs, strempty(json_get_string(e, "message"))) < 0)
                                return NULL;
                }
        }
        return msgs ? strv_join(msgs, ",") : strdup("");
}

int hub_observe_claimed(HubContext *ctx, HubKind kind, const char *index, json_object *candidates,
                        const char *self_key, char ***ret)
{
        for (size_t i = 0;
             json_object_is_type(candidates, json_type_array) && i < json_object_array_length(candidates);
             i++) {
                const char *id = json_get_string(json_object_array_get_idx(candidates, i), "id");
                _cleanup_strv_free_ char **keys = NULL;
                int r;

                if (isempty(id))
                        continue;
                r = hub_cache_index_keys(ctx->cache, kind, index, id, &keys);
                if (r < 0)
                        return r;
                STRV_FOREACH (k, keys)
                        if (!streq(*k, self_key)) {
                                r = strv_extend(ret, id);
                                if (r < 0)
                                        return r;
                                break;
                        }
        }
        return 0;
}
