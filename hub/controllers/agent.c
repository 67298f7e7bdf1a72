/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent.h"
#include "buf.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "hub-exec.h"
#include "hub-service.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

#define TAG_DEREGISTER_OLD "deregister-old-host"
#define TAG_DEREGISTER "deregister-host"

void agent_observed_done(HubObserved *base)
{
        AgentObserved *o = (AgentObserved *)base;

        json_object_put(o->host);
        json_object_put(o->infraenv);
        free(o->infra_env_id);
        json_object_put(o->old_infraenv);
        free(o->old_infra_env_id);
        json_object_put(o->old_host);
        free(o->host_message);
        agent_install_observed_done(&o->install);
}

/* ---- observe ---- */

/* The host's record in an infra-env: the poller's cache, or a GET before
 * the poller listed it, or always (fresh) before an Agent is created or
 * let go, so that a host just deregistered never gets an Agent from a
 * cache that still has it. 0 found, -ENOENT not there, other: unreadable. */
static int host_in(HubContext *ctx, const char *infra_env_id, const char *host_id, bool fresh,
                   json_object **ret, char **ret_message)
{
        HubCallResult r = {};
        int q;

        q = hub_service_host(ctx->service, infra_env_id, host_id, ret);
        if (q == 0 && fresh) {
                json_object_put(*ret);
                *ret = NULL;
        } else if (q != -ENODATA)
                return q;
        q = hub_service_op(ctx->service, ASSISTED_OP_GET_HOST,
                           (char *[]){ (char *)infra_env_id, (char *)host_id, NULL }, NULL, NULL, &r);
        if (q < 0)
                return q;
        if (r.error < 0) {
                q = r.status == 404 ? -ENOENT : r.error;
                if (q == -ENOENT)
                        hub_service_host_forget(ctx->service, infra_env_id, host_id);
                else if (ret_message)
                        *ret_message = TAKE_PTR(r.message);
                hub_call_result_done(&r);
                return q;
        }
        (void)hub_service_host_store(ctx->service, infra_env_id, r.body);
        *ret = TAKE_PTR(r.body);
        hub_call_result_done(&r);
        return 0;
}

typedef struct Registration {
        json_object *infraenv;
        char *id;
        json_object *host;
        usec_t created;
} Registration;

static void registrations_free(Registration *l, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                json_object_put(l[i].infraenv);
                free(l[i].id);
                json_object_put(l[i].host);
        }
        free(l);
}

static int agent_observe(HubContext *ctx, HubObserved *base)
{
        AgentObserved *o = (AgentObserved *)base;
        _cleanup_strv_free_ char **ies = NULL;
        Registration *regs = NULL;
        size_t n = 0, newest = SIZE_MAX;
        const char *label = NULL;
        int r;

        r = hub_cache_get(ctx->cache, HUB_KIND_AGENT, base->ns, base->name, &base->object);
        if (r < 0 && r != -ENOENT)
                return r;
        if (base->object)
                label = hub_object_label(base->object, HUB_LABEL_INFRAENV);

        /* the host's registrations in the namespace's infra-envs */
        r = hub_cache_index_keys(ctx->cache, HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_NAMESPACE, base->ns,
                                 &ies);
        if (r < 0)
                return r;
        regs = calloc(strv_length(ies) + 1, sizeof(Registration));
        if (!regs)
                return -ENOMEM;
        STRV_FOREACH (key, ies) {
                _cleanup_free_ char *ns = NULL, *name = NULL, *message = NULL;
                _cleanup_(json_object_putp) json_object *ie = NULL, *host = NULL;
                const char *id;

                r = hub_key_split(*key, &ns, &name);
                if (r < 0)
                        goto out;
                if (hub_cache_get(ctx->cache, HUB_KIND_INFRAENV, ns, name, &ie) < 0)
                        continue;
                id = hub_object_annotation(ie, HUB_ANNOTATION_INFRAENV_ID);
                if (isempty(id))
                        continue;
                r = host_in(ctx, id, base->name, !base->object || hub_object_deleting(base->object), &host,
                            &message);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        /* unreadable now: nothing is decided about this host */
                        o->host_error = r;
                        free(o->host_message);
                        o->host_message = TAKE_PTR(message);
                        continue;
                }
                regs[n] =
                        (Registration){ .infraenv = TAKE_PTR(ie), .id = strdup(id), .host = TAKE_PTR(host) };
                if (!regs[n].id) {
                        n++;
                        r = -ENOMEM;
                        goto out;
                }
                (void)hub_parse_time(json_get_string(regs[n].host, "created_at"), &regs[n].created);
                if (newest == SIZE_MAX || regs[n].created > regs[newest].created)
                        newest = n;
                n++;
        }
        r = 0;
        if (newest == SIZE_MAX)
                goto out;
        o->host = TAKE_PTR(regs[newest].host);
        o->infraenv = TAKE_PTR(regs[newest].infraenv);
        o->infra_env_id = TAKE_PTR(regs[newest].id);
        if (!label || streq(label, strempty(kube_object_name(o->infraenv))))
                goto out;
        /* the Agent's InfraEnv is another one: the host registered again */
        for (size_t i = 0; i < n; i++)
                if (regs[i].infraenv && streq(label, strempty(kube_object_name(regs[i].infraenv)))) {
                        o->old_infraenv = TAKE_PTR(regs[i].infraenv);
                        o->old_infra_env_id = TAKE_PTR(regs[i].id);
                        o->old_host = TAKE_PTR(regs[i].host);
                        goto out;
                }
        if (hub_cache_get(ctx->cache, HUB_KIND_INFRAENV, base->ns, label, &o->old_infraenv) < 0)
                o->old_infraenv = NULL;
out:
        registrations_free(regs, n);
        if (r >= 0)
                r = agent_install_observe(ctx, o);
        return r;
}

/* ---- status.inventory (notes §5.4) ---- */

typedef enum FieldType {
        F_STRING,
        F_INT,
        F_BOOL,
        F_STRV, /* a list of strings, [] when absent (always written) */
} FieldType;

typedef struct Field {
        const char *from; /* the service's inventory */
        const char *to; /* the Agent's */
        FieldType type;
} Field;

static int copy_fields(json_object *src, json_object *dst, const Field *fields, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_get(src, fields[i].from);
                int r = 0;

                switch (fields[i].type) {
                case F_STRING:
                        r = json_add_string_nonempty(dst, fields[i].to,
                                                     json_object_get_string(v) &&
                                                                     json_object_is_type(v, json_type_string)
                                                             ? json_object_get_string(v)
                                                             : NULL);
                        break;
                case F_INT:
                        if (json_object_is_type(v, json_type_int) ||
                            json_object_is_type(v, json_type_double))
                                r = json_add_int64_nonzero(dst, fields[i].to,
                                                           json_object_is_type(v, json_type_int)
                                                                   ? json_object_get_int64(v)
                                                                   : (int64_t)json_object_get_double(v));
                        break;
                case F_BOOL:
                        r = json_add_bool_true(dst, fields[i].to, json_object_get_boolean(v));
                        break;
                case F_STRV: {
                        json_object *a = json_new_array();

                        if (!a)
                                return -ENOMEM;
                        for (size_t j = 0;
                             json_object_is_type(v, json_type_array) && j < json_object_array_length(v);
                             j++) {
                                const char *s = json_object_get_string(json_object_array_get_idx(v, j));

                                if (json_append(a, json_new_string(strempty(s))) < 0) {
                                        json_object_put(a);
                                        return -ENOMEM;
                                }
                        }
                        r = json_add(dst, fields[i].to, a);
                        break;
                }
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int copy_object(json_object *src, json_object *dst, const char *from, const char *to,
                       const Field *fields, size_t n)
{
        json_object *o = json_new_object();

        if (!o || json_add(dst, to, o) < 0)
                return -ENOMEM;
        return copy_fields(json_get(src, from), o, fields, n);
}

typedef int (*ItemFn)(json_object *src, json_object *dst);

static int copy_list(json_object *src, json_object *dst, const char *from, const char *to, ItemFn fn)
{
        json_object *l = json_get(src, from), *a;

        if (!json_object_is_type(l, json_type_array) || json_object_array_length(l) == 0)
                return 0;
        a = json_new_array();
        if (!a || json_add(dst, to, a) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(l); i++) {
                json_object *n = json_new_object();
                int r;

                if (!n || json_append(a, n) < 0)
                        return -ENOMEM;
                r = fn(json_object_array_get_idx(l, i), n);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const Field interface_fields[] = {
        { "ipv4_addresses", "ipV4Addresses", F_STRV },
        { "ipv6_addresses", "ipV6Addresses", F_STRV },
        { "flags", "flags", F_STRV },
        { "vendor", "vendor", F_STRING },
        { "name", "name", F_STRING },
        { "has_carrier", "hasCarrier", F_BOOL },
        { "product", "product", F_STRING },
        { "mtu", "mtu", F_INT },
        { "biosdevname", "biosDevName", F_STRING },
        { "client_id", "clientID", F_STRING },
        { "mac_address", "macAddress", F_STRING },
        { "speed_mbps", "speedMbps", F_INT },
};

static int interface_item(json_object *src, json_object *dst)
{
        return copy_fields(src, dst, interface_fields, ELEMENTSOF(interface_fields));
}

static const Field disk_fields[] = {
        { "by_id", "byID", F_STRING },        { "drive_type", "driveType", F_STRING },
        { "vendor", "vendor", F_STRING },     { "name", "name", F_STRING },
        { "path", "path", F_STRING },         { "hctl", "hctl", F_STRING },
        { "by_path", "byPath", F_STRING },    { "model", "model", F_STRING },
        { "wwn", "wwn", F_STRING },           { "serial", "serial", F_STRING },
        { "size_bytes", "sizeBytes", F_INT }, { "bootable", "bootable", F_BOOL },
        { "smart", "smart", F_STRING },
};

static int disk_item(json_object *src, json_object *dst)
{
        json_object *elig = json_new_object(), *perf = json_new_object(),
                    *ie = json_get(src, "installation_eligibility");
        int64_t sync;
        int r;

        if (!elig || json_add(dst, "installationEligibility", elig) < 0 || !perf ||
            json_add(dst, "ioPerf", perf) < 0)
                return -ENOMEM;
        /* id is always written (the CRD requires it) */
        r = json_add_string(dst, "id", strempty(json_get_string(src, "id")));
        if (r >= 0)
                r = copy_fields(src, dst, disk_fields, ELEMENTSOF(disk_fields));
        if (r >= 0)
                r = copy_fields(ie, elig,
                                (const Field[]){ { "eligible", "eligible", F_BOOL },
                                                 { "not_eligible_reasons", "notEligibleReasons", F_STRV } },
                                2);
        if (r >= 0 && json_get_int64(json_get(src, "io_perf"), "sync_duration", &sync) >= 0)
                r = json_add_int64_nonzero(perf, "syncDurationMilliseconds", sync);
        return r;
}

static const Field gpu_fields[] = {
        { "address", "address", F_STRING },    { "device_id", "deviceID", F_STRING },
        { "name", "name", F_STRING },          { "vendor", "vendor", F_STRING },
        { "vendor_id", "vendorID", F_STRING },
};

static int gpu_item(json_object *src, json_object *dst)
{
        return copy_fields(src, dst, gpu_fields, ELEMENTSOF(gpu_fields));
}

int agent_inventory_status(const char *inventory, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *in = NULL, *out = json_new_object();
        int r;

        if (!out)
                return -ENOMEM;
        if (json_parse(inventory, strlen(inventory), BUF_MAX_HTTP_BODY, &in, NULL) < 0 ||
            !json_object_is_type(in, json_type_object))
                return -EBADMSG;
        r = copy_fields(in, out,
                        (const Field[]){ { "hostname", "hostname", F_STRING },
                                         { "bmc_address", "bmcAddress", F_STRING },
                                         { "bmc_v6address", "bmcV6Address", F_STRING } },
                        3);
        if (r >= 0)
                r = copy_object(in, out, "memory", "memory",
                                (const Field[]){ { "physical_bytes", "physicalBytes", F_INT },
                                                 { "usable_bytes", "usableBytes", F_INT } },
                                2);
        if (r >= 0)
                r = copy_object(in, out, "cpu", "cpu",
                                (const Field[]){ { "count", "count", F_INT },
                                                 { "frequency", "clockMegahertz", F_INT },
                                                 { "flags", "flags", F_STRV },
                                                 { "model_name", "modelName", F_STRING },
                                                 { "architecture", "architecture", F_STRING } },
                                5);
        if (r >= 0)
                r = copy_object(in, out, "boot", "boot",
                                (const Field[]){ { "current_boot_mode", "currentBootMode", F_STRING },
                                                 { "pxe_interface", "pxeInterface", F_STRING },
                                                 { "device_type", "deviceType", F_STRING } },
                                3);
        if (r >= 0)
                r = copy_object(in, out, "system_vendor", "systemVendor",
                                (const Field[]){ { "serial_number", "serialNumber", F_STRING },
                                                 { "product_name", "productName", F_STRING },
                                                 { "manufacturer", "manufacturer", F_STRING },
                                                 { "virtual", "virtual", F_BOOL } },
                                4);
        if (r >= 0)
                r = copy_list(in, out, "interfaces", "interfaces", interface_item);
        if (r >= 0)
                r = copy_list(in, out, "disks", "disks", disk_item);
        if (r >= 0)
                r = copy_list(in, out, "gpus", "gpus", gpu_item);
        if (r < 0)
                return r;
        /* upstream keeps a cpu without flags as flags: null → [] is what
         * its Go slice gives only when the agent sent some; an absent list
         * stays absent */
        if (!json_get(json_get(in, "cpu"), "flags"))
                json_object_object_del(json_get(out, "cpu"), "flags");
        *ret = TAKE_PTR(out);
        return 0;
}

/* ---- labels (notes §5.4) ---- */

char *agent_label_value(const char *s)
{
        _cleanup_free_ char *v = NULL;
        size_t n = 0, len;

        if (!s)
                return NULL;
        v = malloc(strlen(s) + 1);
        if (!v)
                return NULL;
        for (const char *p = s; *p; p++)
                if (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.')
                        v[n++] = *p;
        v[n] = 0;
        len = n;
        /* a label value: at most 63, alphanumerics at both ends (or empty) */
        if (len > 63 || (len > 0 && (!isalnum((unsigned char)v[0]) || !isalnum((unsigned char)v[len - 1]))))
                return NULL;
        return TAKE_PTR(v);
}

static int set_label_sanitized(json_object *agent, const char *key, const char *value)
{
        _cleanup_free_ char *v = agent_label_value(value);

        if (!v)
                return 0; /* skipped, as upstream */
        return hub_object_set_label(agent, key, v);
}

int agent_inventory_labels(json_object *agent, json_object *inv)
{
        json_object *disks = json_get(inv, "disks"), *flags = json_get(json_get(inv, "cpu"), "flags");
        bool ssd = false, virt = false, isvirtual = false;
        int r;

        for (size_t i = 0;
             json_object_is_type(disks, json_type_array) && i < json_object_array_length(disks); i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(disks, i), "driveType"), "SSD"))
                        ssd = true;
        for (size_t i = 0;
             json_object_is_type(flags, json_type_array) && i < json_object_array_length(flags); i++) {
                const char *f = json_object_get_string(json_object_array_get_idx(flags, i));

                if (streq_ptr(f, "vmx") || streq_ptr(f, "svm"))
                        virt = true;
        }
        (void)json_get_bool(json_get(inv, "systemVendor"), "virtual", &isvirtual);
        r = hub_object_set_label(agent, HUB_LABEL_STORAGE_NONROTATIONAL, ssd ? "true" : "false");
        if (r >= 0)
                r = set_label_sanitized(agent, HUB_LABEL_CPU_ARCHITECTURE,
                                        strempty(json_get_string(json_get(inv, "cpu"), "architecture")));
        if (r >= 0)
                r = hub_object_set_label(agent, HUB_LABEL_CPU_VIRTENABLED, virt ? "true" : "false");
        if (r >= 0)
                r = set_label_sanitized(
                        agent, HUB_LABEL_HOST_MANUFACTURER,
                        strempty(json_get_string(json_get(inv, "systemVendor"), "manufacturer")));
        if (r >= 0)
                r = set_label_sanitized(
                        agent, HUB_LABEL_HOST_PRODUCTNAME,
                        strempty(json_get_string(json_get(inv, "systemVendor"), "productName")));
        if (r >= 0)
                r = hub_object_set_label(agent, HUB_LABEL_HOST_ISVIRTUAL, isvirtual ? "true" : "false");
        if (r >= 0)
                r = set_label_sanitized(
                        agent, HUB_LABEL_CD_NAMESPACE,
                        strempty(json_get_string(json_get_path(agent, "spec.clusterDeploymentName"),
                                                 "namespace")));
        if (r >= 0)
                r = hub_object_set_annotation(agent, HUB_ANNOTATION_INVENTORY_VERSION,
                                              HUB_INVENTORY_LABELS_VERSION);
        return r;
}

/* ---- decide ---- */

static int owner_ref_to(json_object *agent, json_object *ie, bool only)
{
        json_object *md = hub_json_ensure_object(agent, "metadata"), *refs, *ref;
        const char *uid = hub_object_uid(ie);

        if (!md)
                return -ENOMEM;
        refs = json_get(md, "ownerReferences");
        if (!only && json_object_is_type(refs, json_type_array))
                for (size_t i = 0; i < json_object_array_length(refs); i++)
                        if (streq_ptr(json_get_string(json_object_array_get_idx(refs, i), "uid"), uid))
                                return 0;
        if (only || !json_object_is_type(refs, json_type_array)) {
                refs = json_new_array();
                if (!refs || json_add(md, "ownerReferences", refs) < 0)
                        return -ENOMEM;
        }
        /* controllerutil.SetOwnerReference: not the controller, no
         * blockOwnerDeletion */
        ref = json_new_object();
        if (!ref || json_append(refs, ref) < 0)
                return -ENOMEM;
        if (json_add_string(ref, "apiVersion", HUB_GROUP_AGENT_INSTALL "/v1beta1") < 0 ||
            json_add_string(ref, "kind", "InfraEnv") < 0 ||
            json_add_string(ref, "name", strempty(kube_object_name(ie))) < 0 ||
            json_add_string(ref, "uid", strempty(uid)) < 0)
                return -ENOMEM;
        return 0;
}

/* spec.clusterDeploymentName from the InfraEnv's clusterRef (late binding:
 * none) */
static int cluster_ref(json_object *spec, json_object *ie)
{
        json_object *cref = json_get_path(ie, "spec.clusterRef"), *n;

        json_object_object_del(spec, "clusterDeploymentName");
        if (!cref || isempty(json_get_string(cref, "name")))
                return 0;
        n = json_new_object();
        if (!n || json_add(spec, "clusterDeploymentName", n) < 0 ||
            json_add_string(n, "name", json_get_string(cref, "name")) < 0 ||
            json_add_string(n, "namespace",
                            isempty(json_get_string(cref, "namespace"))
                                    ? strempty(kube_object_namespace(ie))
                                    : json_get_string(cref, "namespace")) < 0)
                return -ENOMEM;
        return 0;
}

/* InfraEnv spec.agentLabels into the Agent's labels (added or updated) */
static int agent_labels(json_object *agent, json_object *ie)
{
        json_object *l = json_get_path(ie, "spec.agentLabels");

        if (!json_object_is_type(l, json_type_object))
                return 0;
        json_object_object_foreach (l, k, v) {
                int r = hub_object_set_label(agent, k, strempty(json_object_get_string(v)));

                if (r < 0)
                        return r;
        }
        return 0;
}

static int split_keys(const char *v, char ***ret)
{
        _cleanup_strv_free_ char **raw = NULL, **keys = NULL;
        int r;

        *ret = NULL;
        if (isempty(v))
                return 0;
        r = strv_split(v, ",", &raw);
        if (r < 0)
                return r;
        STRV_FOREACH (k, raw) {
                strstrip(*k);
                if (!isempty(*k) && !strv_contains(keys, *k)) {
                        r = strv_extend(&keys, *k);
                        if (r < 0)
                                return r;
                }
        }
        *ret = TAKE_PTR(keys);
        return 0;
}

/* InfraEnv labels named by its propagate-node-labels annotation into
 * spec.nodeLabels, user-set keys kept, the inherited keys tracked in the
 * Agent's inherited-node-labels annotation (infraenv_node_labels.go) */
static int propagate_node_labels(json_object *agent, json_object *ie)
{
        _cleanup_strv_free_ char **want = NULL, **before = NULL, **inherited = NULL;
        _cleanup_free_ char *joined = NULL;
        json_object *spec = hub_json_ensure_object(agent, "spec"), *nl;
        json_object *ie_labels = json_get(json_get(ie, "metadata"), "labels");
        int r;

        if (!spec)
                return -ENOMEM;
        r = split_keys(hub_object_annotation(ie, HUB_ANNOTATION_PROPAGATE_NODE_LABELS), &want);
        if (r >= 0)
                r = split_keys(hub_object_annotation(agent, HUB_ANNOTATION_INHERITED_NODE_LABELS), &before);
        if (r < 0)
                return r;
        nl = json_get(spec, "nodeLabels");
        STRV_FOREACH (k, before)
                if (!(strv_contains(want, *k) && json_get_string(ie_labels, *k)) && nl)
                        json_object_object_del(nl, *k);
        STRV_FOREACH (k, want) {
                const char *v = json_get_string(ie_labels, *k), *have;

                if (!v)
                        continue;
                if (!json_object_is_type(nl, json_type_object)) {
                        nl = json_new_object();
                        if (!nl || json_add(spec, "nodeLabels", nl) < 0)
                                return -ENOMEM;
                }
                have = json_get_string(nl, *k);
                if (have && !streq(have, v) && !strv_contains(before, *k))
                        continue; /* the user's value wins */
                if (!have || !streq(have, v) || strv_contains(before, *k)) {
                        r = json_add_string(nl, *k, v);
                        if (r >= 0)
                                r = strv_extend(&inherited, *k);
                        if (r < 0)
                                return r;
                }
        }
        if (nl && json_object_object_length(nl) == 0 && !json_get(json_get(agent, "spec"), "nodeLabels"))
                json_object_object_del(spec, "nodeLabels");
        strv_sort(inherited);
        joined = strv_join(inherited, ",");
        if (!joined)
                return -ENOMEM;
        return hub_object_set_annotation(agent, HUB_ANNOTATION_INHERITED_NODE_LABELS,
                                         isempty(joined) ? NULL : joined);
}

/* a new Agent for a registered host (notes §5.0, CreateAgentCR) */
static int create_agent(const AgentObserved *o, HubPlan *plan)
{
        _cleanup_(json_object_putp) json_object *a = json_new_object();
        json_object *md, *spec;
        int r;

        if (!a)
                return -ENOMEM;
        md = hub_json_ensure_object(a, "metadata");
        spec = hub_json_ensure_object(a, "spec");
        if (!md || !spec || json_add_string(a, "apiVersion", HUB_GROUP_AGENT_INSTALL "/v1beta1") < 0 ||
            json_add_string(a, "kind", "Agent") < 0 || json_add_string(md, "name", o->base.name) < 0 ||
            json_add_string(md, "namespace", o->base.ns) < 0 || json_add_bool(spec, "approved", false) < 0 ||
            json_add_string(spec, "role", "") < 0)
                return -ENOMEM;
        r = agent_labels(a, o->infraenv);
        if (r >= 0)
                r = hub_object_set_label(a, HUB_LABEL_INFRAENV, kube_object_name(o->infraenv));
        if (r >= 0)
                r = hub_object_add_finalizer(a, HUB_FINALIZER_AGENT);
        if (r >= 0)
                r = owner_ref_to(a, o->infraenv, true);
        if (r >= 0)
                r = cluster_ref(spec, o->infraenv);
        if (r >= 0)
                r = propagate_node_labels(a, o->infraenv);
        if (r < 0)
                return r;
        return hub_plan_create(plan, HUB_KIND_AGENT, o->base.ns, TAKE_PTR(a));
}

int agent_decide(const HubObserved *base, HubPlan *plan)
{
        const AgentObserved *o = (const AgentObserved *)base;
        json_object *agent = base->object, *spec;
        _cleanup_(json_object_putp) json_object *desired = NULL, *inv = NULL;
        const char *inventory;
        int r;

        if (agent && hub_object_deleting(agent))
                /* the finalizer (notes §5.5): the node it became, then the
                 * host, so that the Agent is not created again for a host
                 * still registered */
                return agent_install_decide_deletion(o, plan);
        if (!o->host) {
                /* no host (or unreadable): the installation side decides
                 * about Agents without hosts (restore) */
                if (o->host_error < 0)
                        return hub_plan_fail(plan, "cannot read host %s: %s", base->name,
                                             strna(o->host_message));
                /* restore, or the conditions Unknown */
                return agent ? agent_install_decide_without_host(o, plan) : 0;
        }
        if (!agent)
                return create_agent(o, plan);

        desired = hub_json_copy(agent);
        if (!desired)
                return -ENOMEM;
        r = hub_object_add_finalizer(desired, HUB_FINALIZER_AGENT);
        if (r < 0)
                return r;
        spec = hub_json_ensure_object(desired, "spec");
        if (!spec)
                return -ENOMEM;

        if (o->old_infraenv) {
                /* the host registered again from another InfraEnv of this
                 * namespace: as the service does, the old record goes, the
                 * spec starts over, labels and owner move */
                const HubCallResult *dr = hub_call_results_find(&base->results, TAG_DEREGISTER_OLD);

                if (o->old_host && !isempty(o->old_infra_env_id)) {
                        if (!dr)
                                return hub_plan_op(plan, TAG_DEREGISTER_OLD, ASSISTED_OP_DEREGISTER_HOST,
                                                   (char *[]){ o->old_infra_env_id, base->name, NULL }, NULL,
                                                   NULL, true);
                        if (dr->error < 0 && dr->status != 404)
                                return hub_plan_fail(plan, "cannot deregister host %s from infra-env %s: %s",
                                                     base->name, o->old_infra_env_id, strna(dr->message));
                }
                json_object_object_del(desired, "spec");
                spec = hub_json_ensure_object(desired, "spec");
                if (!spec || json_add_bool(spec, "approved", false) < 0 ||
                    json_add_string(spec, "role", "") < 0)
                        return -ENOMEM;
                json_object_object_del(json_get(desired, "metadata"), "labels");
                r = owner_ref_to(desired, o->infraenv, true);
                if (r < 0)
                        return r;
                r = hub_plan_event(plan, agent, "Normal", "HostReregistered",
                                   "host %s registered again, from InfraEnv %s (was %s)", base->name,
                                   kube_object_name(o->infraenv), kube_object_name(o->old_infraenv));
                if (r < 0)
                        return r;
        } else {
                r = owner_ref_to(desired, o->infraenv, false);
                if (r < 0)
                        return r;
        }
        r = hub_object_set_label(desired, HUB_LABEL_INFRAENV, kube_object_name(o->infraenv));
        if (r >= 0 && o->old_infraenv) {
                r = agent_labels(desired, o->infraenv);
                if (r >= 0)
                        r = cluster_ref(spec, o->infraenv);
        }
        if (r >= 0)
                r = propagate_node_labels(desired, o->infraenv);
        if (r < 0)
                return r;

        inventory = json_get_string(o->host, "inventory");
        if (!isempty(inventory)) {
                r = agent_inventory_status(inventory, &inv);
                if (r == -EBADMSG)
                        /* the service's own JSON: not the user's fault, and
                         * nothing to do about it but keep what there is */
                        (void)hub_plan_event(plan, agent, "Warning", "InventoryUnreadable",
                                             "the inventory of host %s does not parse", base->name);
                else if (r < 0)
                        return r;
                else {
                        json_object *st = hub_json_ensure_object(desired, "status");

                        if (!st || json_add(st, "inventory", json_object_get(inv)) < 0)
                                return -ENOMEM;
                        r = agent_inventory_labels(desired, inv);
                        if (r < 0)
                                return r;
                }
        }
        return agent_install_decide(o, desired, plan);
}

/* ---- watches ---- */

/* an InfraEnv → its Agents (labels, agentLabels, node labels) */
static int map_infraenv(HubContext *ctx, json_object *obj, char ***ret)
{
        return hub_cache_keys_referring(ctx->cache, HUB_KIND_AGENT, HUB_INDEX_AGENT_INFRAENV, obj, ret);
}

static int agent_setup(HubController *c)
{
        int r = hub_controller_watch(c, HUB_KIND_AGENT, NULL);

        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_INFRAENV, map_infraenv);
        return r;
}

const HubControllerType hub_agent_controller = {
        .name = "agent",
        .kind = HUB_KIND_AGENT,
        .observed_size = sizeof(AgentObserved),
        .setup = agent_setup,
        .observe = agent_observe,
        .observed_done = agent_observed_done,
        .decide = agent_decide,
};
