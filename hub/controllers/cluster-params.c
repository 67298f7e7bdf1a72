/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ClusterDeployment + AgentClusterInstall → the service's cluster (notes
 * §1.3): the registration body, and the update body with only what
 * differs, as the late-2023 service accepts it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "cluster.h"
#include "jsonutil.h"
#include "strutil.h"
#include "uuid.h"

static const char *const release_archs[] = {
        "x86_64", "aarch64", "arm64", "ppc64le", "s390x", "multi", NULL
};

int cd_release_from_image(const char *image, char **ret_version, char **ret_arch, char **ret_why)
{
        const char *slash, *colon, *tag;
        _cleanup_free_ char *version = NULL, *arch = NULL;
        const char *dash;

        *ret_version = *ret_arch = *ret_why = NULL;
        if (isempty(image)) {
                *ret_why = strdup("the releaseImage is empty");
                return *ret_why ? -EINVAL : -ENOMEM;
        }
        if (strchr(image, '@')) {
                *ret_why = strdup("it is pinned by digest");
                return *ret_why ? -EINVAL : -ENOMEM;
        }
        slash = strrchr(image, '/');
        colon = strrchr(slash ? slash : image, ':');
        tag = colon ? colon + 1 : NULL;
        if (isempty(tag) || !(tag[0] >= '0' && tag[0] <= '9') || !strchr(tag, '.')) {
                *ret_why = strdup("its tag names no OpenShift version (as \"4.14.0-x86_64\" does)");
                return *ret_why ? -EINVAL : -ENOMEM;
        }
        dash = strrchr(tag, '-');
        if (dash && strv_contains((char **)release_archs, dash + 1)) {
                version = strndup(tag, (size_t)(dash - tag));
                arch = strdup(dash + 1);
        } else {
                version = strdup(tag);
                arch = strdup("x86_64");
        }
        if (!version || !arch)
                return -ENOMEM;
        *ret_version = TAKE_PTR(version);
        *ret_arch = TAKE_PTR(arch);
        return 0;
}

/* "4.14.0-multi" and "4.14.0" name the same release */
static bool same_release(const char *a, const char *b)
{
        size_t la = strlen(strempty(a)), lb = strlen(strempty(b));

        if (endswith(strempty(a), "-multi"))
                la -= strlen("-multi");
        if (endswith(strempty(b), "-multi"))
                lb -= strlen("-multi");
        return a && b && la == lb && strneq(a, b, la);
}

/* aarch64 and arm64 are one architecture (NormalizeCPUArchitecture) */
static bool same_arch(const char *a, const char *b)
{
        static const char *const arm[] = { "aarch64", "arm64", NULL };

        return streq_ptr(a, b) ||
               (strv_contains((char **)arm, strempty(a)) && strv_contains((char **)arm, strempty(b)));
}

bool cd_control_plane_owner(json_object *aci, const char **ret_api_version, const char **ret_name)
{
        json_object *refs = json_get_path(aci, "metadata.ownerReferences");

        for (size_t i = 0; json_object_is_type(refs, json_type_array) && i < json_object_array_length(refs);
             i++) {
                json_object *ref = json_object_array_get_idx(refs, i);
                const char *api = json_get_string(ref, "apiVersion"), *name = json_get_string(ref, "name");

                if (streq_ptr(json_get_string(ref, "kind"), HUB_KIND_NAME_CAPI_CONTROL_PLANE) &&
                    startswith(strempty(api), HUB_GROUP_CAPI_CONTROL_PLANE "/") && !isempty(name)) {
                        *ret_api_version = api;
                        *ret_name = name;
                        return true;
                }
        }
        return false;
}

/* The release a Cluster API control plane resolved its ClusterImageSet
 * from: spec.distributionVersion, the architecture its machines' configs
 * ask (CAPOA's default x86_64). -EINVAL without a version. */
static int release_of_control_plane(json_object *control_plane, char **ret_version, char **ret_arch)
{
        json_object *spec = json_get(control_plane, "spec");
        const char *version = json_get_string(spec, "distributionVersion"),
                   *arch = json_get_string(json_get(spec, "openshiftAssistedConfigSpec"), "cpuArchitecture");

        if (isempty(version))
                return -EINVAL;
        *ret_version = strdup(version);
        *ret_arch = strdup(!isempty(arch) ? arch : "x86_64");
        return *ret_version && *ret_arch ? 0 : -ENOMEM;
}

int cd_release_asked(json_object *image_set, json_object *control_plane, char **ret_version, char **ret_arch,
                     char **ret_why)
{
        const char *image = json_get_string(json_get(image_set, "spec"), "releaseImage"),
                   *label = hub_object_label(image_set, HUB_LABEL_CIS_OPENSHIFT_VERSION),
                   *label_arch = hub_object_label(image_set, HUB_LABEL_CIS_ARCHITECTURE);
        _cleanup_free_ char *version = NULL, *arch = NULL, *why = NULL, *v = NULL, *a = NULL;
        int r;

        *ret_version = *ret_arch = *ret_why = NULL;
        r = cd_release_from_image(image, &version, &arch, &why);
        if (r < 0 && r != -EINVAL)
                return r;
        if (isempty(label)) {
                if (r == -EINVAL && control_plane &&
                    (r = release_of_control_plane(control_plane, ret_version, ret_arch)) != -EINVAL) {
                        if (r < 0) {
                                free(*ret_version);
                                free(*ret_arch);
                                *ret_version = *ret_arch = NULL;
                        }
                        return r;
                }
                if (r == -EINVAL) {
                        *ret_why = strdup_printf(
                                "%s and the ClusterImageSet has no %s label: cradle-hub does not "
                                "pull release images to read their version; label it with the "
                                "release's version (oc adm release info -o "
                                "jsonpath='{.metadata.version}')",
                                why, HUB_LABEL_CIS_OPENSHIFT_VERSION);
                        return *ret_why ? -EINVAL : -ENOMEM;
                }
                *ret_version = TAKE_PTR(version);
                *ret_arch = TAKE_PTR(arch);
                return 0;
        }
        v = strdup(label);
        a = strdup(!isempty(label_arch) ? label_arch : arch ? arch : "x86_64");
        if (!v || !a)
                return -ENOMEM;
        /* the tag's architecture counts where it names one */
        if (version && (!same_release(version, v) ||
                        (!isempty(label_arch) && endswith(strempty(image), arch) && !same_arch(arch, a)))) {
                *ret_why = strdup_printf("its labels say %s (%s) but its tag says %s (%s)", v, a, version,
                                         arch);
                return *ret_why ? -EINVAL : -ENOMEM;
        }
        *ret_version = TAKE_PTR(v);
        *ret_arch = TAKE_PTR(a);
        return 0;
}

static bool offers_arch(json_object *entry, const char *arch)
{
        json_object *archs = json_get(entry, "cpu_architectures");
        size_t n = json_object_is_type(archs, json_type_array) ? json_object_array_length(archs) : 0;

        if (streq_ptr(arch, "multi"))
                return n > 1 || endswith(strempty(json_get_string(entry, "display_name")), "-multi");
        for (size_t i = 0; i < n; i++)
                if (same_arch(json_object_get_string(json_object_array_get_idx(archs, i)), arch))
                        return true;
        return false;
}

/* "4.13" of "4.13.5" */
static bool same_minor(const char *a, const char *b)
{
        unsigned ma = 0, na = 0, mb = 0, nb = 0;

        return a && b && sscanf(a, "%u.%u", &ma, &na) == 2 && sscanf(b, "%u.%u", &mb, &nb) == 2 &&
               ma == mb && na == nb;
}

int cd_release_offered(json_object *versions, const char *version, const char *arch, char **ret_key,
                       char **ret_offered)
{
        _cleanup_strv_free_ char **minor = NULL, **all = NULL;
        _cleanup_free_ char *multi_key = NULL;
        char *text;

        *ret_key = *ret_offered = NULL;
        if (json_object_is_type(versions, json_type_object)) {
                json_object_object_foreach (versions, key, entry) {
                        const char *display = json_get_string(entry, "display_name");

                        if (!offers_arch(entry, arch) || isempty(display))
                                continue;
                        if (same_release(display, version)) {
                                /* a single-architecture release before a multi one */
                                if (!streq_ptr(arch, "multi") && offers_arch(entry, "multi")) {
                                        if (!multi_key) {
                                                multi_key = strdup(key);
                                                if (!multi_key)
                                                        return -ENOMEM;
                                        }
                                        continue;
                                }
                                *ret_key = strdup(key);
                                return *ret_key ? 1 : -ENOMEM;
                        }
                        /* a few names are enough for a message */
                        if (strv_length(all) < 8 && strv_extend(&all, display) < 0)
                                return -ENOMEM;
                        if (same_minor(display, version) && strv_extend(&minor, display) < 0)
                                return -ENOMEM;
                }
        }
        if (multi_key) {
                *ret_key = TAKE_PTR(multi_key);
                return 1;
        }
        text = minor ? strv_join(minor, ", ") : all ? strv_join(all, ", ") : strdup("none");
        if (!text)
                return -ENOMEM;
        *ret_offered = text;
        return 0;
}

bool cd_release_registered(json_object *cluster, const char *version)
{
        const char *have = json_get_string(cluster, "openshift_version");

        return isempty(have) || isempty(version) || same_release(have, version);
}

/* ---- the spec, as the service names it ---- */

static bool spec_bool(json_object *aci, const char *path)
{
        json_object *v = json_get_path(aci, path);

        return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static int64_t spec_int(json_object *aci, const char *path)
{
        json_object *v = json_get_path(aci, path);

        return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;
}

static bool is_sno(json_object *aci)
{
        return spec_int(aci, "spec.provisionRequirements.controlPlaneAgents") == 1 &&
               spec_int(aci, "spec.provisionRequirements.workerAgents") == 0;
}

/* isUserManagedNetwork */
static bool user_managed(json_object *aci)
{
        return spec_bool(aci, "spec.networking.userManagedNetworking") || is_sno(aci);
}

/* high_availability_mode for the ACI's control plane: None for a single
 * node without workers, Full otherwise; NULL when the spec gives no count */
static const char *availability_mode(json_object *aci)
{
        if (spec_int(aci, "spec.provisionRequirements.controlPlaneAgents") <= 0)
                return NULL;
        return is_sno(aci) ? "None" : "Full";
}

static const char *load_balancer(json_object *aci)
{
        const char *t = json_get_string(json_get_path(aci, "spec.loadBalancer"), "type");

        return streq_ptr(t, "UserManaged")      ? "user-managed"
               : streq_ptr(t, "ClusterManaged") ? "cluster-managed"
                                                : NULL;
}

int cd_api_error(json_object *aci, json_object *cluster, HubServiceApi api, char **ret)
{
        int64_t cp = spec_int(aci, "spec.provisionRequirements.controlPlaneAgents"),
                workers = spec_int(aci, "spec.provisionRequirements.workerAgents");
        const char *want = availability_mode(aci),
                   *have = json_get_string(cluster, "high_availability_mode");

        *ret = NULL;
        if (api != HUB_SERVICE_API_2023)
                return 0;
        if (cp > 0 && cp != 3 && !is_sno(aci))
                *ret = strdup_printf(
                        "this assisted-service does not know control_plane_count (its cluster API is "
                        "the late-2023 one: high_availability_mode Full for three control-plane nodes, "
                        "None for a single node without workers): "
                        "spec.provisionRequirements.controlPlaneAgents %" PRIi64 " with %" PRIi64
                        " workerAgents cannot be installed by it",
                        cp, workers);
        else if (streq_ptr(load_balancer(aci), "user-managed"))
                *ret = strdup(
                        "this assisted-service does not know load_balancer (its cluster API is the "
                        "late-2023 one): spec.loadBalancer.type UserManaged cannot be installed by it");
        else if (cluster && want && !json_get(cluster, "control_plane_count") && !isempty(have) &&
                 !streq(have, want))
                *ret = strdup_printf(
                        "the cluster was registered with high_availability_mode %s and this "
                        "assisted-service (its cluster API is the late-2023 one) cannot change it to %s: "
                        "delete and re-create the ClusterDeployment",
                        have, want);
        else
                return 0;
        return *ret ? 0 : -ENOMEM;
}

static const char *platform_of(const char *t)
{
        if (streq_ptr(t, "BareMetal"))
                return "baremetal";
        if (streq_ptr(t, "None"))
                return "none";
        if (streq_ptr(t, "VSphere"))
                return "vsphere";
        if (streq_ptr(t, "Nutanix"))
                return "nutanix";
        if (streq_ptr(t, "External"))
                return "external";
        return NULL;
}

/* {"type": ...} (+ external's fields) for spec.platformType; NULL when
 * not given (the service chooses). *ret_error for External without
 * spec.external. */
static int platform_params(json_object *aci, json_object **ret, char **ret_error)
{
        const char *t = json_get_string(json_get(aci, "spec"), "platformType"), *p = platform_of(t);
        _cleanup_(json_object_putp) json_object *o = NULL;

        *ret = NULL;
        if (!p)
                return 0;
        o = json_new_object();
        if (!o || json_add_string(o, "type", p) < 0)
                return -ENOMEM;
        if (streq(p, "external")) {
                json_object *ext = json_get_path(aci, "spec.external"), *e;

                if (!json_object_is_type(ext, json_type_object)) {
                        *ret_error = strdup("For external platform, the external platform spec must be set");
                        return *ret_error ? 0 : -ENOMEM;
                }
                e = json_new_object();
                if (!e || json_add(o, "external", e) < 0 ||
                    json_add_string_nonempty(e, "platform_name", json_get_string(ext, "platformName")) < 0 ||
                    json_add_string_nonempty(e, "cloud_controller_manager",
                                             json_get_string(ext, "cloudControllerManager")) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(o);
        return 0;
}

/* getHyperthreading: "all" unless the pools say otherwise */
static const char *hyperthreading(json_object *aci)
{
        json_object *cp = json_get_path(aci, "spec.controlPlane"),
                    *compute = json_get_path(aci, "spec.compute");
        bool in_spec = json_object_is_type(cp, json_type_object), masters = false, workers = false;

        for (size_t i = 0;
             json_object_is_type(compute, json_type_array) && i < json_object_array_length(compute); i++) {
                json_object *pool = json_object_array_get_idx(compute, i);

                if (!streq_ptr(json_get_string(pool, "name"), "worker"))
                        continue;
                in_spec = true;
                if (streq_ptr(json_get_string(pool, "hyperthreading"), "Enabled"))
                        workers = true;
        }
        if (!in_spec)
                return "all";
        if (streq_ptr(json_get_string(cp, "hyperthreading"), "Enabled"))
                masters = true;
        return masters && workers ? "all" : masters ? "masters" : workers ? "workers" : "none";
}

static bool hyperthreading_in_spec(json_object *aci)
{
        json_object *compute = json_get_path(aci, "spec.compute");

        if (json_object_is_type(json_get_path(aci, "spec.controlPlane"), json_type_object))
                return true;
        for (size_t i = 0;
             json_object_is_type(compute, json_type_array) && i < json_object_array_length(compute); i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(compute, i), "name"), "worker"))
                        return true;
        return false;
}

/* [{"cidr": ..., ("host_prefix": ...)}] of a spec networking list */
static json_object *networks(json_object *aci, const char *path, bool strings, bool prefix)
{
        json_object *l = json_get_path(aci, path), *out = json_new_array();

        if (!out)
                return NULL;
        for (size_t i = 0; json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++) {
                json_object *e = json_object_array_get_idx(l, i), *n = json_new_object();
                const char *cidr = strings ? json_object_get_string(e) : json_get_string(e, "cidr");
                int64_t hp = 0;

                if (!n || json_append(out, n) < 0 || json_add_string(n, "cidr", strempty(cidr)) < 0 ||
                    (prefix &&
                     (json_get_int64(e, "hostPrefix", &hp), json_add_int64(n, "host_prefix", hp)) < 0)) {
                        json_object_put(out);
                        return NULL;
                }
        }
        return out;
}

/* the VIPs of a kind: the list, or the singular as a list */
static int vips(json_object *aci, const char *list, const char *single, char ***ret)
{
        json_object *l = json_get_path(json_get(aci, "spec"), list);
        const char *one = json_get_string(json_get(aci, "spec"), single);
        _cleanup_strv_free_ char **v = NULL;
        int r;

        for (size_t i = 0; json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(l, i));

                if (!isempty(s)) {
                        r = strv_extend(&v, s);
                        if (r < 0)
                                return r;
                }
        }
        if (!v && !isempty(one)) {
                r = strv_extend(&v, one);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

/* api_vips, and api_vip beside it when singular (the late-2023 service
 * wants it, the current one refuses it), ingress likewise */
static int add_vips(json_object *p, const char *kind, char **list, bool singular)
{
        _cleanup_free_ char *single = strdup_printf("%s_vip", kind),
                            *plural = strdup_printf("%s_vips", kind);
        json_object *a;

        if (!single || !plural)
                return -ENOMEM;
        a = json_new_array();
        if (!a || json_add(p, plural, a) < 0)
                return -ENOMEM;
        STRV_FOREACH (ip, list) {
                json_object *e = json_new_object();

                if (!e || json_append(a, e) < 0 || json_add_string(e, "ip", *ip) < 0)
                        return -ENOMEM;
        }
        return singular ? json_add_string(p, single, list && list[0] ? list[0] : "") : 0;
}

static char *ntp_sources(json_object *aci)
{
        json_object *l = json_get_path(aci, "spec.ntpSources");
        _cleanup_strv_free_ char **v = NULL;

        for (size_t i = 0; json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++)
                if (strv_extend(&v, strempty(json_object_get_string(json_object_array_get_idx(l, i)))) < 0)
                        return NULL;
        return strv_join(v, ",");
}

static int ignition_endpoint(json_object *aci, const ClusterInputs *in, json_object **ret)
{
        json_object *ie = json_get_path(aci, "spec.ignitionEndpoint"), *o;

        *ret = NULL;
        if (!json_object_is_type(ie, json_type_object))
                return 0;
        o = json_new_object();
        if (!o || json_add_string(o, "url", strempty(json_get_string(ie, "url"))) < 0 ||
            json_add_string(o, "ca_certificate", strempty(in->ignition_ca)) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

static int disk_encryption(json_object *aci, json_object **ret)
{
        json_object *de = json_get_path(aci, "spec.diskEncryption"), *o;

        *ret = NULL;
        if (!json_object_is_type(de, json_type_object))
                return 0;
        o = json_new_object();
        if (!o || json_add_string_nonempty(o, "enable_on", json_get_string(de, "enableOn")) < 0 ||
            json_add_string_nonempty(o, "mode", json_get_string(de, "mode")) < 0 ||
            json_add_string_nonempty(o, "tang_servers", json_get_string(de, "tangServers")) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

static bool disk_encryption_enabled(json_object *aci)
{
        const char *on = json_get_string(json_get_path(aci, "spec.diskEncryption"), "enableOn");

        return !isempty(on) && !streq(on, "none");
}

int cd_create_params(json_object *cd, json_object *aci, const ClusterInputs *in, json_object **ret,
                     char **ret_error)
{
        json_object *cds = json_get(cd, "spec"), *spec = json_get(aci, "spec"),
                    *proxy = json_get(spec, "proxy");
        _cleanup_(json_object_putp) json_object *p = json_new_object(), *platform = NULL, *ign = NULL,
                                                *de = NULL;
        _cleanup_strv_free_ char **api = NULL, **ingress = NULL;
        _cleanup_free_ char *ntp = ntp_sources(aci);
        int64_t cp = spec_int(aci, "spec.provisionRequirements.controlPlaneAgents");
        bool legacy = in->api == HUB_SERVICE_API_2023, singular = in->api != HUB_SERVICE_API_CURRENT;
        json_object *nets;
        int r;

        *ret = NULL;
        *ret_error = NULL;
        if (!p || !ntp)
                return -ENOMEM;
        r = cd_api_error(aci, NULL, in->api, ret_error);
        if (r < 0 || *ret_error)
                return r;
        r = platform_params(aci, &platform, ret_error);
        if (r < 0 || *ret_error)
                return r;
        r = ignition_endpoint(aci, in, &ign);
        if (r >= 0)
                r = vips(aci, "apiVIPs", "apiVIP", &api);
        if (r >= 0)
                r = vips(aci, "ingressVIPs", "ingressVIP", &ingress);
        if (r < 0)
                return r;
        if (json_add_string(p, "name", strempty(json_get_string(cds, "clusterName"))) < 0 ||
            json_add_string(p, "base_dns_domain", strempty(json_get_string(cds, "baseDomain"))) < 0 ||
            json_add_string(p, "openshift_version", strempty(in->register_version ?: in->version)) < 0 ||
            json_add_string_nonempty(p, "ocp_release_image", in->release_image) < 0 ||
            json_add_string_nonempty(p, "cpu_architecture", in->arch) < 0 ||
            json_add_string(p, "pull_secret", strempty(in->pull_secret)) < 0 ||
            json_add_bool(p, "vip_dhcp_allocation", false) < 0 ||
            json_add_string_nonempty(p, "ssh_public_key", json_get_string(spec, "sshPublicKey")) < 0 ||
            json_add_bool(p, "user_managed_networking", user_managed(aci)) < 0)
                return -ENOMEM;
        if ((api && add_vips(p, "api", api, singular) < 0) ||
            (ingress && add_vips(p, "ingress", ingress, singular) < 0))
                return -ENOMEM;
        if (platform && json_add(p, "platform", TAKE_PTR(platform)) < 0)
                return -ENOMEM;
        if (json_get_path(aci, "spec.mastersSchedulable") &&
            json_add_bool(p, "schedulable_masters", spec_bool(aci, "spec.mastersSchedulable")) < 0)
                return -ENOMEM;
        /* the late-2023 models have no count: high_availability_mode says it */
        if (!legacy && cp > 0 && json_add_int64(p, "control_plane_count", cp) < 0)
                return -ENOMEM;
        nets = networks(aci, "spec.networking.clusterNetwork", false, true);
        if (!nets)
                return -ENOMEM;
        if (json_object_array_length(nets) > 0 ? json_add(p, "cluster_networks", nets) < 0
                                               : (json_object_put(nets), 0))
                return -ENOMEM;
        nets = networks(aci, "spec.networking.serviceNetwork", true, false);
        if (!nets)
                return -ENOMEM;
        if (json_object_array_length(nets) > 0 ? json_add(p, "service_networks", nets) < 0
                                               : (json_object_put(nets), 0))
                return -ENOMEM;
        nets = networks(aci, "spec.networking.machineNetwork", false, false);
        if (!nets)
                return -ENOMEM;
        if (json_object_array_length(nets) > 0 ? json_add(p, "machine_networks", nets) < 0
                                               : (json_object_put(nets), 0))
                return -ENOMEM;
        if (json_add_string_nonempty(
                    p, "network_type",
                    json_object_get_string(json_get_path(aci, "spec.networking.networkType"))) < 0)
                return -ENOMEM;
        if ((legacy || is_sno(aci)) &&
            json_add_string_nonempty(p, "high_availability_mode", availability_mode(aci)) < 0)
                return -ENOMEM;
        if (hyperthreading_in_spec(aci) && json_add_string(p, "hyperthreading", hyperthreading(aci)) < 0)
                return -ENOMEM;
        if (disk_encryption_enabled(aci)) {
                r = disk_encryption(aci, &de);
                if (r < 0 || (de && json_add(p, "disk_encryption", TAKE_PTR(de)) < 0))
                        return -ENOMEM;
        }
        if (json_object_is_type(proxy, json_type_object) &&
            (json_add_string_nonempty(p, "http_proxy", json_get_string(proxy, "httpProxy")) < 0 ||
             json_add_string_nonempty(p, "https_proxy", json_get_string(proxy, "httpsProxy")) < 0 ||
             json_add_string_nonempty(p, "no_proxy", json_get_string(proxy, "noProxy")) < 0))
                return -ENOMEM;
        if (ign && json_add(p, "ignition_endpoint", TAKE_PTR(ign)) < 0)
                return -ENOMEM;
        if (json_add_string_nonempty(p, "additional_ntp_source", ntp) < 0 ||
            json_add_string_nonempty(p, "tags", hub_object_label(aci, HUB_LABEL_ACI_CONSUMER)) < 0)
                return -ENOMEM;
        if (load_balancer(aci) && !legacy) {
                json_object *lb = json_new_object();

                if (!lb || json_add(p, "load_balancer", lb) < 0 ||
                    json_add_string(lb, "type", load_balancer(aci)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

/* The imported cluster's OpenShift ID: upstream passes the ACI's
 * clusterMetadata.clusterID, if any, to its internal import, which checks
 * nothing; over REST the field is a required UUID. So the ACI's, else the
 * ClusterDeployment's (hive's copy, which the import documentation fills
 * with ""), else the nil UUID: unknown. */
static const char *import_cluster_id(json_object *cd, json_object *aci)
{
        const char *ids[] = { json_get_string(json_get_path(aci, "spec.clusterMetadata"), "clusterID"),
                              json_get_string(json_get_path(cd, "spec.clusterMetadata"), "clusterID") };

        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                if (ids[i] && uuid_is_valid(ids[i]))
                        return ids[i];
        return "00000000-0000-0000-0000-000000000000";
}

int cd_import_params(json_object *cd, json_object *aci, const char *version, json_object **ret)
{
        json_object *cds = json_get(cd, "spec");
        _cleanup_(json_object_putp) json_object *p = json_new_object();
        _cleanup_free_ char *dns = strdup_printf("api.%s.%s", strempty(json_get_string(cds, "clusterName")),
                                                 strempty(json_get_string(cds, "baseDomain")));

        if (!p || !dns || json_add_string(p, "name", strempty(json_get_string(cds, "clusterName"))) < 0 ||
            json_add_string(p, "api_vip_dnsname", dns) < 0 ||
            json_add_string_nonempty(p, "openshift_version", version) < 0 ||
            json_add_string(p, "openshift_cluster_id", import_cluster_id(cd, aci)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

/* ---- the update ---- */

static bool str_differs(json_object *cluster, const char *key, const char *want)
{
        return !streq(strempty(json_get_string(cluster, key)), strempty(want));
}

static bool networks_differ(json_object *want, json_object *have, bool prefix)
{
        if (json_object_array_length(want) !=
            (json_object_is_type(have, json_type_array) ? json_object_array_length(have) : 0))
                return true;
        for (size_t i = 0; i < json_object_array_length(want); i++) {
                json_object *w = json_object_array_get_idx(want, i), *h = json_object_array_get_idx(have, i);
                int64_t a = 0, b = 0;

                if (!streq(strempty(json_get_string(w, "cidr")), strempty(json_get_string(h, "cidr"))))
                        return true;
                if (prefix &&
                    (json_get_int64(w, "host_prefix", &a), json_get_int64(h, "host_prefix", &b), a != b))
                        return true;
        }
        return false;
}

static bool cidr_is_v6(const char *cidr)
{
        return cidr && strchr(cidr, ':');
}

static bool any_v6(json_object *l)
{
        for (size_t i = 0; json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++)
                if (cidr_is_v6(json_get_string(json_object_array_get_idx(l, i), "cidr")))
                        return true;
        return false;
}

/* openshift_version >= 4.12 */
static bool version_at_least_4_12(const char *v)
{
        unsigned major = 0, minor = 0;

        if (!v || sscanf(v, "%u.%u", &major, &minor) != 2)
                return false;
        return major > 4 || (major == 4 && minor >= 12);
}

static bool cluster_is_sno(json_object *cluster)
{
        int64_t cp = 0;

        if (json_get_int64(cluster, "control_plane_count", &cp) >= 0 && cp > 0)
                return cp == 1;
        return streq_ptr(json_get_string(cluster, "high_availability_mode"), "None");
}

/* an address "a.b.c.d/n" (or v6) whose network contains ip */
static bool network_contains(const char *addr_cidr, const char *ip)
{
        unsigned char net[16], want[16];
        _cleanup_free_ char *a = strdup(strempty(addr_cidr));
        char *slash;
        int fam = ip && strchr(ip, ':') ? AF_INET6 : AF_INET;
        unsigned prefix, bytes = fam == AF_INET6 ? 16 : 4;

        if (!a || !ip)
                return false;
        slash = strchr(a, '/');
        if (!slash || safe_atou(slash + 1, &prefix) < 0 || prefix > bytes * 8)
                return false;
        *slash = 0;
        if (inet_pton(fam, a, net) != 1 || inet_pton(fam, ip, want) != 1)
                return false;
        for (unsigned bit = 0; bit < prefix; bit++) {
                unsigned char m = (unsigned char)(0x80 >> (bit % 8));

                if ((net[bit / 8] & m) != (want[bit / 8] & m))
                        return false;
        }
        return true;
}

/* some host of the cluster has an address in a network containing ip
 * (the service refuses a VIP otherwise: it derives the machine network
 * from that address) */
static bool host_network_contains(json_object *hosts, const char *ip)
{
        for (size_t i = 0;
             json_object_is_type(hosts, json_type_array) && i < json_object_array_length(hosts); i++) {
                const char *text = json_get_string(json_object_array_get_idx(hosts, i), "inventory");
                _cleanup_(json_object_putp) json_object *inv = NULL;
                json_object *ifs;

                if (isempty(text) || json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &inv, NULL) < 0)
                        continue;
                ifs = json_get(inv, "interfaces");
                for (size_t j = 0;
                     json_object_is_type(ifs, json_type_array) && j < json_object_array_length(ifs); j++) {
                        json_object *itf = json_object_array_get_idx(ifs, j);
                        static const char *const keys[] = { "ipv4_addresses", "ipv6_addresses" };

                        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                                json_object *a = json_get(itf, keys[k]);

                                for (size_t n = 0; json_object_is_type(a, json_type_array) &&
                                                   n < json_object_array_length(a);
                                     n++)
                                        if (network_contains(
                                                    json_object_get_string(json_object_array_get_idx(a, n)),
                                                    ip))
                                                return true;
                        }
                }
        }
        return false;
}

static bool vips_differ(char **want, json_object *cluster, const char *kind)
{
        _cleanup_free_ char *plural = strdup_printf("%s_vips", kind),
                            *single = strdup_printf("%s_vip", kind);
        json_object *have = plural ? json_get(cluster, plural) : NULL;
        size_t n = json_object_is_type(have, json_type_array) ? json_object_array_length(have) : 0;
        const char *one = single ? json_get_string(cluster, single) : NULL;

        if (strv_length(want) != n)
                return true;
        for (size_t i = 0; i < n; i++)
                if (!streq_ptr(want[i], json_get_string(json_object_array_get_idx(have, i), "ip")))
                        return true;
        /* a service that still serves the singular keeps it in step */
        return one && !streq_ptr(one, n > 0 ? want[0] : "");
}

static int update_vips(json_object *p, json_object *aci, json_object *cluster, json_object *hosts,
                       bool singular)
{
        _cleanup_strv_free_ char **api = NULL, **ingress = NULL;
        bool dhcp = false;
        int r;

        (void)json_get_bool(cluster, "vip_dhcp_allocation", &dhcp);
        if (dhcp || user_managed(aci))
                return 0;
        r = vips(aci, "apiVIPs", "apiVIP", &api);
        if (r >= 0)
                r = vips(aci, "ingressVIPs", "ingressVIP", &ingress);
        if (r < 0)
                return r;
        /* VIPs missing from the spec: the service computes them (SNO) */
        if (!api && !ingress)
                return 0;
        if (api && vips_differ(api, cluster, "api") && host_network_contains(hosts, api[0])) {
                r = add_vips(p, "api", api, singular);
                if (r < 0)
                        return r;
        }
        if (ingress && vips_differ(ingress, cluster, "ingress") &&
            host_network_contains(hosts, ingress[0])) {
                r = add_vips(p, "ingress", ingress, singular);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int update_networks(json_object *p, json_object *cd, json_object *aci, json_object *cluster)
{
        _cleanup_(json_object_putp)
                json_object *cn = networks(aci, "spec.networking.clusterNetwork", false, true),
                            *sn = networks(aci, "spec.networking.serviceNetwork", true, false),
                            *mn = networks(aci, "spec.networking.machineNetwork", false, false);
        const char *nt = json_object_get_string(json_get_path(aci, "spec.networking.networkType"));
        bool dhcp = false, installed = false;

        if (!cn || !sn || !mn)
                return -ENOMEM;
        (void)json_get_bool(cluster, "vip_dhcp_allocation", &dhcp);
        (void)json_get_bool(json_get(cd, "spec"), "installed", &installed);
        if (json_object_array_length(cn) > 0 &&
            networks_differ(cn, json_get(cluster, "cluster_networks"), true) &&
            json_add(p, "cluster_networks", json_object_get(cn)) < 0)
                return -ENOMEM;
        if (json_object_array_length(sn) > 0 &&
            networks_differ(sn, json_get(cluster, "service_networks"), false) &&
            json_add(p, "service_networks", json_object_get(sn)) < 0)
                return -ENOMEM;
        /* outside VIP-DHCP mode the service derives the machine network
         * itself and refuses one set by hand */
        if (json_object_array_length(mn) > 0 && (dhcp || user_managed(aci)) &&
            networks_differ(mn, json_get(cluster, "machine_networks"), false) &&
            json_add(p, "machine_networks", json_object_get(mn)) < 0)
                return -ENOMEM;
        if (isempty(nt) && !installed) {
                /* selectClusterNetworkType */
                json_object *c = json_get(p, "cluster_networks") ?: json_get(cluster, "cluster_networks"),
                            *s = json_get(p, "service_networks") ?: json_get(cluster, "service_networks"),
                            *m = json_get(p, "machine_networks") ?: json_get(cluster, "machine_networks");

                nt = any_v6(c) || any_v6(s) || any_v6(m) || cluster_is_sno(cluster) ||
                                     version_at_least_4_12(json_get_string(cluster, "openshift_version"))
                             ? "OVNKubernetes"
                             : "OpenShiftSDN";
        }
        if (!isempty(nt) && str_differs(cluster, "network_type", nt) &&
            json_add_string(p, "network_type", nt) < 0)
                return -ENOMEM;
        return 0;
}

static int update_proxy(json_object *p, json_object *aci, json_object *cluster)
{
        json_object *proxy = json_get_path(aci, "spec.proxy");
        static const char *const keys[][2] = { { "httpProxy", "http_proxy" },
                                               { "httpsProxy", "https_proxy" },
                                               { "noProxy", "no_proxy" } };
        bool any = false;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (!isempty(json_get_string(cluster, keys[i][1])))
                        any = true;
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                const char *want = json_object_is_type(proxy, json_type_object)
                                           ? json_get_string(proxy, keys[i][0])
                                           : NULL;

                /* no spec.proxy: cleared ("") when the cluster has one */
                if (!json_object_is_type(proxy, json_type_object) && !any)
                        continue;
                if (str_differs(cluster, keys[i][1], want) &&
                    json_add_string(p, keys[i][1], strempty(want)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The control-plane count is sent to a service whose cluster has it when
 * it differs; to one that has not shown its API when the availability mode
 * differs (a late-2023 one refuses it, and says so); never to a late-2023
 * one (cd_api_error says what it cannot change). */
static bool count_differs(json_object *aci, json_object *cluster, HubServiceApi api)
{
        int64_t cp = spec_int(aci, "spec.provisionRequirements.controlPlaneAgents"), have = 0;
        const char *mode;

        if (cp <= 0)
                return false;
        if (json_get_int64(cluster, "control_plane_count", &have) >= 0)
                return have != cp;
        mode = json_get_string(cluster, "high_availability_mode");
        return api != HUB_SERVICE_API_2023 && !isempty(mode) && !streq(mode, availability_mode(aci));
}

int cd_update_params(json_object *cd, json_object *aci, json_object *cluster, json_object *hosts,
                     const ClusterInputs *in, bool secret_changed, json_object **ret)
{
        json_object *cds = json_get(cd, "spec"), *spec = json_get(aci, "spec");
        _cleanup_(json_object_putp) json_object *p = json_new_object(), *ign = NULL, *platform = NULL;
        _cleanup_free_ char *ssh = strdup(strempty(json_get_string(spec, "sshPublicKey"))),
                            *ntp = ntp_sources(aci), *perr = NULL;
        const char *ht = hyperthreading(aci), *tags = hub_object_label(aci, HUB_LABEL_ACI_CONSUMER);
        bool umn = user_managed(aci), have_umn = false, sm = false;
        json_object *de = json_get(spec, "diskEncryption"),
                    *have_ign = json_get(cluster, "ignition_endpoint");
        int64_t cp = spec_int(aci, "spec.provisionRequirements.controlPlaneAgents");
        int r;

        *ret = NULL;
        if (!p || !ssh || !ntp)
                return -ENOMEM;
        if (str_differs(cluster, "name", json_get_string(cds, "clusterName")) &&
            json_add_string(p, "name", strempty(json_get_string(cds, "clusterName"))) < 0)
                return -ENOMEM;
        if (str_differs(cluster, "base_dns_domain", json_get_string(cds, "baseDomain")) &&
            json_add_string(p, "base_dns_domain", strempty(json_get_string(cds, "baseDomain"))) < 0)
                return -ENOMEM;
        r = update_networks(p, cd, aci, cluster);
        if (r >= 0)
                r = update_vips(p, aci, cluster, hosts, in->api != HUB_SERVICE_API_CURRENT);
        if (r < 0)
                return r;
        (void)json_get_bool(cluster, "user_managed_networking", &have_umn);
        if (umn != have_umn && json_add_bool(p, "user_managed_networking", umn) < 0)
                return -ENOMEM;
        if (str_differs(cluster, "ssh_public_key", strstrip(ssh)) &&
            json_add_string(p, "ssh_public_key", ssh) < 0)
                return -ENOMEM;
        r = ignition_endpoint(aci, in, &ign);
        if (r < 0)
                return r;
        if (ign ? !json_object_is_type(have_ign, json_type_object) ||
                            str_differs(have_ign, "url", json_get_string(ign, "url")) ||
                            str_differs(have_ign, "ca_certificate", json_get_string(ign, "ca_certificate"))
                : json_object_is_type(have_ign, json_type_object) &&
                            (!isempty(json_get_string(have_ign, "url")) ||
                             !isempty(json_get_string(have_ign, "ca_certificate")))) {
                if (!ign) {
                        ign = json_new_object();
                        if (!ign || json_add_string(ign, "url", "") < 0 ||
                            json_add_string(ign, "ca_certificate", "") < 0)
                                return -ENOMEM;
                }
                if (json_add(p, "ignition_endpoint", TAKE_PTR(ign)) < 0)
                        return -ENOMEM;
        }
        if (secret_changed && json_add_string(p, "pull_secret", strempty(in->pull_secret)) < 0)
                return -ENOMEM;
        if (str_differs(cluster, "hyperthreading", ht) && json_add_string(p, "hyperthreading", ht) < 0)
                return -ENOMEM;
        r = platform_params(aci, &platform, &perr);
        if (r < 0)
                return r;
        if (platform && json_get(cluster, "platform") &&
            str_differs(json_get(cluster, "platform"), "type", json_get_string(platform, "type")) &&
            json_add(p, "platform", TAKE_PTR(platform)) < 0)
                return -ENOMEM;
        if (json_object_is_type(de, json_type_object)) {
                json_object *have = json_get(cluster, "disk_encryption");

                if (str_differs(have, "enable_on", json_get_string(de, "enableOn")) ||
                    str_differs(have, "mode", json_get_string(de, "mode")) ||
                    str_differs(have, "tang_servers", json_get_string(de, "tangServers"))) {
                        json_object *o = NULL;

                        r = disk_encryption(aci, &o);
                        if (r < 0 || !o || json_add(p, "disk_encryption", o) < 0)
                                return -ENOMEM;
                }
        }
        r = update_proxy(p, aci, cluster);
        if (r < 0)
                return r;
        (void)json_get_bool(cluster, "schedulable_masters", &sm);
        if (json_get(spec, "mastersSchedulable") && sm != spec_bool(aci, "spec.mastersSchedulable") &&
            json_add_bool(p, "schedulable_masters", spec_bool(aci, "spec.mastersSchedulable")) < 0)
                return -ENOMEM;
        if (count_differs(aci, cluster, in->api) && json_add_int64(p, "control_plane_count", cp) < 0)
                return -ENOMEM;
        if (!isempty(ntp) && str_differs(cluster, "additional_ntp_source", ntp) &&
            json_add_string(p, "additional_ntp_source", ntp) < 0)
                return -ENOMEM;
        if (tags && str_differs(cluster, "tags", tags) && json_add_string(p, "tags", tags) < 0)
                return -ENOMEM;
        if (json_object_object_length(p) > 0)
                *ret = TAKE_PTR(p);
        return 0;
}

/* ---- ignored validations (notes §1.2 step 9) ---- */

/* the IDs of an annotation ("a, b" → ["a","b"]); NULL when absent */
static int annotation_ids(json_object *aci, const char *key, json_object **ret)
{
        const char *v = hub_object_annotation(aci, key);
        _cleanup_strv_free_ char **ids = NULL;
        json_object *a;
        int r;

        *ret = NULL;
        if (!v)
                return 0;
        r = strv_split(v, ",", &ids);
        if (r < 0)
                return r;
        a = json_new_array();
        if (!a)
                return -ENOMEM;
        STRV_FOREACH (id, ids) {
                strstrip(*id);
                if (!isempty(*id) && json_append(a, json_new_string(*id)) < 0) {
                        json_object_put(a);
                        return -ENOMEM;
                }
        }
        *ret = a;
        return 0;
}

static bool same_ids(json_object *want, const char *have_text)
{
        _cleanup_(json_object_putp) json_object *have = NULL;
        size_t n = json_object_array_length(want);

        if (!isempty(have_text))
                (void)json_parse(have_text, strlen(have_text), BUF_MAX_JSON_DOC, &have, NULL);
        if ((json_object_is_type(have, json_type_array) ? json_object_array_length(have) : 0) != n)
                return false;
        for (size_t i = 0; i < n; i++) {
                const char *w = json_object_get_string(json_object_array_get_idx(want, i));
                bool found = false;

                for (size_t j = 0; j < n && !found; j++)
                        found = streq_ptr(w, json_object_get_string(json_object_array_get_idx(have, j)));
                if (!found)
                        return false;
        }
        return true;
}

bool cd_ignores_validations(json_object *aci)
{
        return hub_object_annotation(aci, HUB_ANNOTATION_IGNORED_CLUSTER_VALIDATIONS) ||
               hub_object_annotation(aci, HUB_ANNOTATION_IGNORED_HOST_VALIDATIONS);
}

int cd_ignored_validations(json_object *aci, const char *have_c, const char *have_h, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *c = NULL, *h = NULL, *body = NULL;
        int r;

        *ret = NULL;
        r = annotation_ids(aci, HUB_ANNOTATION_IGNORED_CLUSTER_VALIDATIONS, &c);
        if (r >= 0)
                r = annotation_ids(aci, HUB_ANNOTATION_IGNORED_HOST_VALIDATIONS, &h);
        if (r < 0)
                return r;
        if ((!c || same_ids(c, have_c)) && (!h || same_ids(h, have_h)))
                return 0;
        body = json_new_object();
        if (!body)
                return -ENOMEM;
        /* an annotation not given keeps what the cluster has */
        if (json_add_string(body, "cluster-validation-ids",
                            c ? json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN)
                              : strempty(have_c)) < 0 ||
            json_add_string(body, "host-validation-ids",
                            h ? json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN)
                              : strempty(have_h)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(body);
        return 0;
}
