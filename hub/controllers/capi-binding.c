/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <json-c/json.h>

#include "base64.h"
#include "buf.h"
#include "capi-binding.h"
#include "cleanup.h"
#include "hub-inputs.h"
#include "hub-names.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

char *capi_host_name(json_object *host)
{
        _cleanup_(json_object_putp) json_object *inv = NULL;
        const char *n = json_get_string(host, "requested_hostname");

        if (!isempty(n))
                return strdup(n);
        /* the inventory is JSON in a string */
        n = json_get_string(host, "inventory");
        if (isempty(n) || json_parse(n, strlen(n), BUF_MAX_JSON_DOC, &inv, NULL) < 0)
                return NULL;
        n = json_get_string(inv, "hostname");
        return isempty(n) ? NULL : strdup(n);
}

static bool host_named(json_object *host, const char *name)
{
        _cleanup_free_ char *n = capi_host_name(host);

        return n && name && streq(n, name);
}

json_object *capi_host_for_machine(json_object *hosts, const char *machine)
{
        json_object *best = NULL;

        for (size_t i = 0; i < hub_json_array_length(hosts); i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                bool bound = !isempty(json_get_string(h, "cluster_id")),
                     best_bound = best && !isempty(json_get_string(best, "cluster_id"));

                if (!host_named(h, machine))
                        continue;
                if (!best || (bound && !best_bound) ||
                    (bound == best_bound &&
                     strcmp(strempty(json_get_string(h, "id")), strempty(json_get_string(best, "id"))) < 0))
                        best = h;
        }
        return best;
}

bool capi_host_bound(json_object *host, const void *userdata)
{
        _cleanup_free_ char *n = capi_host_name(host);
        char *const *machines = userdata;

        return n && strv_contains(machines, n);
}

/* "installing-in-progress" → "InstallingInProgress" */
static char *camel(const char *s)
{
        char *r = malloc(strlen(s) + 1), *p = r;
        bool up = true;

        if (!r)
                return NULL;
        for (; *s; s++) {
                if (*s == '-' || *s == '_' || *s == ' ') {
                        up = true;
                        continue;
                }
                *p++ = up && *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
                up = false;
        }
        *p = 0;
        return r;
}

int capi_host_progress(json_object *host, char **ret_status, char **ret_reason, char **ret_message)
{
        const char *status = json_get_string(host, "status"),
                   *stage = json_get_string(json_get(host, "progress"), "current_stage");
        int64_t pct = 0;
        bool has_pct = json_get_int64(json_get(host, "progress"), "installation_percentage", &pct) >= 0;
        _cleanup_free_ char *st = NULL, *reason = NULL, *msg = NULL;

        st = strdup(streq_ptr(status, "installed") ? HUB_TRUE : HUB_FALSE);
        reason = camel(isempty(status) ? "unknown" : status);
        if (!isempty(stage))
                msg = has_pct ? strdup_printf("%s %" PRIi64 "%%", stage, pct) : strdup(stage);
        else
                msg = strdup(strempty(json_get_string(host, "status_info")));
        if (!st || !reason || !msg)
                return -ENOMEM;
        *ret_status = TAKE_PTR(st);
        *ret_reason = TAKE_PTR(reason);
        *ret_message = TAKE_PTR(msg);
        return 0;
}

/* bootstrap-config contract, "Sentinel file": the path a Machine's
 * bootstrap writes once the node has bootstrapped. Ignition 3.1.0, which
 * every service that takes host overrides parses. */
const char capi_sentinel_ignition[] =
        "{\"ignition\":{\"version\":\"3.1.0\"},\"systemd\":{\"units\":[{\"name\":"
        "\"cluster-api-bootstrap-success.service\",\"enabled\":true,\"contents\":"
        "\"[Unit]\\nDescription=Cluster API bootstrap sentinel: this node's kubelet started\\n"
        "Wants=kubelet.service\\nAfter=kubelet.service\\n\\n[Service]\\nType=oneshot\\n"
        "RemainAfterExit=yes\\nExecStart=/usr/bin/mkdir -p /run/cluster-api\\n"
        "ExecStart=/usr/bin/touch /run/cluster-api/bootstrap-success.complete\\n\\n"
        "[Install]\\nWantedBy=multi-user.target\\n\"}]}}";

bool capi_host_has_sentinel(json_object *host)
{
        const char *have = json_get_string(host, "ignition_config_overrides");

        return have && streq(have, capi_sentinel_ignition);
}

int capi_ignition_with_hostname(const char *ignition, const char *hostname, char **ret)
{
        _cleanup_(json_object_putp) json_object *ign = NULL, *file = NULL;
        _cleanup_free_ char *b64 = NULL, *source = NULL, *text = NULL;
        json_object *storage, *files;
        int r;

        r = json_parse(strempty(ignition), strlen(strempty(ignition)), BUF_MAX_JSON_DOC, &ign, NULL);
        if (r < 0 || !json_object_is_type(ign, json_type_object) ||
            !json_get_string(json_get(ign, "ignition"), "version") || isempty(hostname))
                return -EINVAL;
        b64 = base64_encode(hostname, strlen(hostname));
        if (!b64)
                return -ENOMEM;
        source = strdup_printf("data:;base64,%s", b64);
        file = json_new_object();
        storage = hub_json_ensure_object(ign, "storage");
        if (!source || !file || !storage)
                return -ENOMEM;
        files = json_get(storage, "files");
        if (!json_object_is_type(files, json_type_array)) {
                files = json_new_array();
                if (!files || json_add(storage, "files", files) < 0)
                        return -ENOMEM;
        }
        /* a discovery Ignition of its own /etc/hostname gives way to the Machine's */
        for (size_t i = json_object_array_length(files); i > 0; i--)
                if (streq_ptr(json_get_string(json_object_array_get_idx(files, i - 1), "path"),
                              "/etc/hostname"))
                        json_object_array_del_idx(files, i - 1, 1);
        if (json_add_string(file, "path", "/etc/hostname") < 0 || json_add_int64(file, "mode", 0644) < 0 ||
            json_add_bool(file, "overwrite", true) < 0 ||
            json_add(file, "contents", json_new_object()) < 0 ||
            json_add_string(json_get(file, "contents"), "source", source) < 0 ||
            json_append(files, TAKE_PTR(file)) < 0)
                return -ENOMEM;
        text = json_to_string(ign, 0);
        if (!text)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}

json_object *capi_owner_reference(json_object *obj, bool controller)
{
        _cleanup_(json_object_putp) json_object *ref = json_new_object();

        if (!ref || json_add_string(ref, "apiVersion", strempty(json_get_string(obj, "apiVersion"))) < 0 ||
            json_add_string(ref, "kind", strempty(json_get_string(obj, "kind"))) < 0 ||
            json_add_string(ref, "name", strempty(kube_object_name(obj))) < 0 ||
            json_add_string(ref, "uid", strempty(hub_object_uid(obj))) < 0 ||
            json_add_bool(ref, "blockOwnerDeletion", true) < 0 ||
            (controller && json_add_bool(ref, "controller", true) < 0))
                return NULL;
        return TAKE_PTR(ref);
}

json_object *capi_secret(json_object *owner, const char *name, const char *cluster, const char *const *kv)
{
        _cleanup_(json_object_putp) json_object *s = json_new_object();
        json_object *md, *refs;

        if (!s || json_add_string(s, "apiVersion", "v1") < 0 || json_add_string(s, "kind", "Secret") < 0 ||
            json_add_string(s, "type", HUB_CAPI_SECRET_TYPE) < 0)
                return NULL;
        md = hub_json_ensure_object(s, "metadata");
        refs = json_new_array();
        if (!md || !refs || json_add(md, "ownerReferences", refs) < 0 ||
            json_append(refs, capi_owner_reference(owner, true)) < 0 ||
            json_add_string(md, "name", name) < 0 ||
            json_add_string(md, "namespace", strempty(kube_object_namespace(owner))) < 0 ||
            hub_object_set_label(s, HUB_CAPI_LABEL_CLUSTER_NAME, cluster) < 0 ||
            hub_object_set_label(s, HUB_LABEL_WATCH, "true") < 0 ||
            hub_object_set_label(s, HUB_LABEL_BACKUP, "true") < 0)
                return NULL;
        if (hub_secret_set_data(s, kv) < 0)
                return NULL;
        return TAKE_PTR(s);
}

const char *capi_cluster_name(json_object *obj)
{
        return hub_object_label(obj, HUB_CAPI_LABEL_CLUSTER_NAME);
}

bool capi_filtered_out(const char *watch_filter, json_object *obj)
{
        return watch_filter && !streq_ptr(hub_object_label(obj, HUB_CAPI_LABEL_WATCH_FILTER), watch_filter);
}

bool capi_paused(json_object *cluster, json_object *obj)
{
        bool paused = false;

        if (hub_object_annotation(obj, HUB_CAPI_ANNOTATION_PAUSED))
                return true;
        return cluster && json_get_bool(json_get(cluster, "spec"), "paused", &paused) >= 0 && paused;
}

json_object *capi_owner(json_object *obj, const char *group, const char *kind)
{
        json_object *refs = json_get_path(obj, "metadata.ownerReferences");

        for (size_t i = 0; i < hub_json_array_length(refs); i++) {
                json_object *ref = json_object_array_get_idx(refs, i);
                const char *av = strempty(json_get_string(ref, "apiVersion"));

                if (streq_ptr(json_get_string(ref, "kind"), kind) && startswith(av, group) &&
                    av[strlen(group)] == '/')
                        return ref;
        }
        return NULL;
}
