/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "base64.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/abi.h"
#include "controller/finalize.h"
#include "jsonutil.h"
#include "strutil.h"
#include "yamlutil.h"

const char *install_invoker(json_object *configmap)
{
        if (!configmap)
                return INVOKER_ASSISTED;
        return strempty(json_get_string(json_get(configmap, "data"), INSTALL_MANIFESTS_INVOKER_KEY));
}

/* ---- olm-operator-manifests ------------------------------------------------- */

void operator_metadata_done(OperatorMetadata *m)
{
        free(m->namespace);
        free(m->subscription);
        strv_free(m->manifests);
        *m = (OperatorMetadata){};
}

static int metadata_refused(char **reterr, const char *why)
{
        if (reterr)
                *reterr = strdup_printf("the metadata %s", why);
        return -EBADMSG;
}

/* yaml.v2 into a string field: any scalar (lib/yamlutil reads every
 * scalar as a string), null as "", a list or mapping refused */
static int metadata_string(json_object *v, const char *field, char **ret, char **reterr)
{
        _cleanup_free_ char *why = NULL;

        if (v && !json_object_is_type(v, json_type_string)) {
                why = strdup_printf("has a %s that is not a string", field);
                return metadata_refused(reterr, why ? why : "does not decode");
        }
        *ret = strdup(v ? json_object_get_string(v) : "");
        return *ret ? 0 : -ENOMEM;
}

int operator_metadata_parse(const char *yaml, size_t len, OperatorMetadata *ret, char **reterr)
{
        _cleanup_(operator_metadata_done) OperatorMetadata m = {};
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_free_ char *err = NULL;
        json_object *list;
        int r;

        r = yaml_to_json(yaml, len, &doc, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("the metadata does not parse: %s", strna(err));
                return -EBADMSG;
        }
        /* an empty document decodes to the zero struct */
        if (doc && !json_object_is_type(doc, json_type_object))
                return metadata_refused(reterr, "is not a mapping");
        r = metadata_string(json_get(doc, "namespace"), "namespace", &m.namespace, reterr);
        if (r < 0)
                return r;
        r = metadata_string(json_get(doc, "subscriptionName"), "subscriptionName", &m.subscription, reterr);
        if (r < 0)
                return r;
        m.manifests = calloc(1, sizeof(char *));
        if (!m.manifests)
                return -ENOMEM;
        list = json_get(doc, "manifests");
        if (list && !json_object_is_type(list, json_type_array))
                return metadata_refused(reterr, "has a manifests that is not a list");
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                _cleanup_free_ char *name = NULL;

                r = metadata_string(json_object_array_get_idx(list, i), "manifests entry", &name, reterr);
                if (r < 0)
                        return r;
                if (strv_extend(&m.manifests, name) < 0)
                        return -ENOMEM;
        }
        *ret = m;
        m = (OperatorMetadata){};
        return 0;
}

static int manifest_add(CustomManifest **m, size_t *n, const char *name, const char *content,
                        const char *openshift_version)
{
        CustomManifest *more = reallocarray(*m, *n + 2, sizeof(CustomManifest));

        if (!more)
                return -ENOMEM;
        *m = more;
        more[*n] = more[*n + 1] = (CustomManifest){};
        if (streq(name, "odf") && openshift_version_is_4_8(openshift_version))
                name = "ocs";
        more[*n].name = strdup(name);
        if (!more[*n].name)
                return -ENOMEM;
        /* one that does not decode fails its own apply, as upstream's */
        if (base64_decode(content, "\r\n", &more[*n].content, &more[*n].len) < 0)
                more[*n].content = NULL;
        (*n)++;
        return 0;
}

int olm_manifests_configmap_read(json_object *configmap, const char *openshift_version,
                                 OlmOperator **ret_ops, size_t *ret_n, CustomManifest **ret_manifests,
                                 size_t *ret_nm, char **reterr)
{
        json_object *data = json_get(configmap, "data");
        size_t total =
                json_object_is_type(data, json_type_object) ? (size_t)json_object_object_length(data) : 0;
        OlmOperator *ops = calloc(total + 1, sizeof(OlmOperator));
        CustomManifest *m = calloc(1, sizeof(CustomManifest));
        size_t n = 0, nm = 0;
        int r = 0;

        if (!ops || !m) {
                r = -ENOMEM;
                goto fail;
        }
        if (total == 0)
                goto done;
        json_object_object_foreach (data, key, value) {
                _cleanup_(operator_metadata_done) OperatorMetadata md = {};
                _cleanup_free_ char *name = NULL, *err = NULL;
                const char *text;

                if (!endswith(key, OLM_METADATA_SUFFIX) || !json_object_is_type(value, json_type_string))
                        continue;
                text = json_object_get_string(value);
                r = operator_metadata_parse(text, strlen(text), &md, &err);
                if (r < 0) {
                        if (reterr && r == -EBADMSG)
                                *reterr = strdup_printf("%s: %s", key, strna(err));
                        goto fail;
                }
                name = strndup(key, strlen(key) - strlen(OLM_METADATA_SUFFIX));
                if (!name) {
                        r = -ENOMEM;
                        goto fail;
                }
                STRV_FOREACH (file, md.manifests) {
                        const char *content = json_get_string(data, *file);

                        if (!content) {
                                if (reterr)
                                        *reterr = strdup_printf(
                                                "Manifest file %s listed in metadata but not found in "
                                                "ConfigMap data",
                                                *file);
                                r = -ENOENT;
                                goto fail;
                        }
                        r = manifest_add(&m, &nm, name, content, openshift_version);
                        if (r < 0)
                                goto fail;
                }
                ops[n] = (OlmOperator){ .name = TAKE_PTR(name),
                                        .namespace = TAKE_PTR(md.namespace),
                                        .subscription = TAKE_PTR(md.subscription) };
                n++;
        }
done:
        *ret_ops = ops;
        *ret_n = n;
        *ret_manifests = m;
        *ret_nm = nm;
        return 0;
fail:
        if (ops)
                olm_operators_free(ops, n);
        if (m)
                custom_manifests_free(m, nm);
        return r;
}

/* ---- the platform and the uninitialized taint ----------------------------------- */

int install_config_platform(const char *yaml, size_t len, char **ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_free_ char *err = NULL;
        json_object *platform;
        int r;

        r = yaml_to_json(yaml, len, &doc, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("the install-config does not parse: %s", strna(err));
                return -EBADMSG;
        }
        if (doc && !json_object_is_type(doc, json_type_object)) {
                if (reterr)
                        *reterr = strdup("the install-config is not a mapping");
                return -EBADMSG;
        }
        platform = json_get(doc, "platform");
        if (!json_object_is_type(platform, json_type_object)) {
                if (reterr)
                        *reterr = strdup("platform not found in install config");
                return -EBADMSG;
        }
        /* upstream takes whichever key Go's map yields first; a real
         * install-config has one */
        json_object_object_foreach (platform, key, value) {
                (void)value;
                *ret = strdup(key);
                return *ret ? 0 : -ENOMEM;
        }
        *ret = strdup("");
        return *ret ? 0 : -ENOMEM;
}

/* gjson's String() of platform.vsphere.vcenters.0.<field> */
static const char *vcenter_field(json_object *doc, const char *field)
{
        json_object *vcenters = json_get_path(doc, "platform.vsphere.vcenters"), *v;

        if (!json_object_is_type(vcenters, json_type_array) || json_object_array_length(vcenters) == 0)
                return "";
        v = json_get(json_object_array_get_idx(vcenters, 0), field);
        if (!v || json_object_is_type(v, json_type_null))
                return "";
        return json_object_get_string(v);
}

static bool real_value(const char *v, const char *placeholder)
{
        return !isempty(v) && !streq(v, placeholder);
}

bool vsphere_credentials_in_cluster(json_object *cluster)
{
        _cleanup_(json_object_putp) json_object *overrides = NULL;
        const char *text = json_get_string(cluster, "install_config_overrides");

        if (!streq_ptr(json_get_string(json_get(cluster, "platform"), "type"), "vsphere") || isempty(text))
                return false;
        if (json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &overrides, NULL) < 0)
                return false;
        return real_value(vcenter_field(overrides, "user"), "usernameplaceholder") &&
               real_value(vcenter_field(overrides, "password"), "passwordplaceholder") &&
               real_value(vcenter_field(overrides, "server"), "vcenterplaceholder");
}

bool vsphere_server_in_install_config(const char *yaml, size_t len)
{
        _cleanup_(json_object_putp) json_object *doc = NULL;

        if (yaml_to_json(yaml, len, &doc, NULL) < 0)
                return false;
        return real_value(vcenter_field(doc, "server"), "vcenterplaceholder");
}

bool uninitialized_taint_removed(const char *platform, bool agent_installer, const char *openshift_version,
                                 bool vsphere_credentials)
{
        if (agent_installer && streq_ptr(platform, "vsphere") && vsphere_credentials &&
            openshift_version_at_least(openshift_version, 4, 15))
                return false;
        return streq_ptr(platform, "nutanix") || streq_ptr(platform, "vsphere");
}

/* ---- the end of the run ------------------------------------------------------- */

bool cluster_version_available(json_object *cluster_version)
{
        json_object *conds = json_get_path(cluster_version, "status.conditions");

        for (size_t i = 0;
             json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
                json_object *c = json_object_array_get_idx(conds, i);

                if (streq_ptr(json_get_string(c, "type"), "Available") &&
                    streq_ptr(json_get_string(c, "status"), "True"))
                        return true;
        }
        return false;
}

bool agent_installation_done(bool cluster_version_available, size_t masters, int expected_nodes)
{
        if (!cluster_version_available)
                return false;
        return expected_nodes <= 0 || masters >= (size_t)expected_nodes;
}
