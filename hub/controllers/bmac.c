/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "bmac.h"
#include "buf.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

#define NOT_FOUND_BY_HINTS "/dev/not-found-by-hints"
#define LIVE_ISO "live-iso"

void bmac_observed_done(HubObserved *base)
{
        BmacObserved *o = (BmacObserved *)base;

        json_object_put(o->agent);
        json_object_put(o->infraenv);
        json_object_put(o->ppi);
}

/* ---- observe ---- */

static int newest_agent(HubContext *ctx, char **keys, json_object **ret)
{
        usec_t best = 0;

        *ret = NULL;
        STRV_FOREACH (k, keys) {
                _cleanup_(json_object_putp) json_object *a = NULL;
                usec_t created = 0;

                if (hub_cache_get_key(ctx->cache, HUB_KIND_AGENT, *k, &a) < 0)
                        continue;
                (void)hub_parse_time(json_get_string(json_get(a, "metadata"), "creationTimestamp"),
                                     &created);
                /* several Agents with the MAC: the most recently created wins */
                if (!*ret || created > best) {
                        json_object_put(*ret);
                        *ret = TAKE_PTR(a);
                        best = created;
                }
        }
        return 0;
}

static int bmac_observe(HubContext *ctx, HubObserved *base)
{
        BmacObserved *o = (BmacObserved *)base;
        const char *mac, *ie;
        int r;

        o->converged = ctx->config->converged_flow;
        o->cooldown = ctx->config->image_cooldown;
        r = hub_cache_get(ctx->cache, HUB_KIND_BMH, base->ns, base->name, &base->object);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        mac = json_get_string(json_get(base->object, "spec"), "bootMACAddress");
        if (!isempty(mac)) {
                _cleanup_strv_free_ char **keys = NULL;
                _cleanup_free_ char *lower = strdup_lower(mac), *v = NULL;

                v = lower ? strdup_printf("%s/%s", base->ns, lower) : NULL;
                if (!v)
                        return -ENOMEM;
                r = hub_cache_index_keys(ctx->cache, HUB_KIND_AGENT, HUB_INDEX_AGENT_MAC, v, &keys);
                if (r < 0)
                        return r;
                r = newest_agent(ctx, keys, &o->agent);
                if (r < 0)
                        return r;
        }
        ie = hub_object_label(base->object, HUB_LABEL_INFRAENV);
        if (!isempty(ie) && hub_cache_get(ctx->cache, HUB_KIND_INFRAENV, base->ns, ie, &o->infraenv) < 0)
                o->infraenv = NULL;
        if (hub_cache_get(ctx->cache, HUB_KIND_PPI, base->ns, base->name, &o->ppi) < 0)
                o->ppi = NULL;
        return 0;
}

/* ---- root device hints (hostutil.GetAcceptableDisksWithHints) ---- */

static bool hint_matches(json_object *hints, json_object *disk)
{
        const char *s, *want;
        int64_t min, size = 0;
        bool rot;

        if ((want = json_get_string(hints, "deviceName")) &&
            !(streq_ptr(json_get_string(disk, "path"), want) ||
              streq_ptr(json_get_string(disk, "byPath"), want)))
                return false;
        if ((want = json_get_string(hints, "hctl")) && !streq_ptr(json_get_string(disk, "hctl"), want))
                return false;
        if ((want = json_get_string(hints, "model")) &&
            (!(s = json_get_string(disk, "model")) || !strstr(s, want)))
                return false;
        if ((want = json_get_string(hints, "vendor")) &&
            (!(s = json_get_string(disk, "vendor")) || !strstr(s, want)))
                return false;
        if ((want = json_get_string(hints, "serialNumber")) &&
            !streq_ptr(json_get_string(disk, "serial"), want))
                return false;
        if ((want = json_get_string(hints, "wwn")) && !streq_ptr(json_get_string(disk, "wwn"), want))
                return false;
        if ((want = json_get_string(hints, "wwnWithExtension")) &&
            !streq_ptr(json_get_string(disk, "wwn"), want))
                return false;
        if ((want = json_get_string(hints, "wwnVendorExtension")) &&
            !streq_ptr(json_get_string(disk, "wwn"), want))
                return false;
        if (json_get_int64(hints, "minSizeGigabytes", &min) >= 0) {
                (void)json_get_int64(disk, "sizeBytes", &size);
                if (size < min * 1024 * 1024 * 1024)
                        return false;
        }
        if (json_get_bool(hints, "rotational", &rot) >= 0 &&
            rot != streq_ptr(json_get_string(disk, "driveType"), "HDD"))
                return false;
        return true;
}

char *bmac_disk_by_hints(json_object *hints, json_object *inventory)
{
        json_object *disks = json_get(inventory, "disks");
        const char *first = NULL, *multipath = NULL;

        if (!json_object_is_type(hints, json_type_object) || json_object_object_length(hints) == 0)
                return NULL;
        for (size_t i = 0;
             json_object_is_type(disks, json_type_array) && i < json_object_array_length(disks); i++) {
                json_object *d = json_object_array_get_idx(disks, i);
                bool eligible = false;

                (void)json_get_bool(json_get(d, "installationEligibility"), "eligible", &eligible);
                if (!eligible || !hint_matches(hints, d))
                        continue;
                if (!first)
                        first = json_get_string(d, "id");
                if (!multipath && streq_ptr(json_get_string(d, "driveType"), "Multipath"))
                        multipath = json_get_string(d, "id");
        }
        return strdup(multipath ? multipath : first ? first : NOT_FOUND_BY_HINTS);
}

/* ---- hardware details (the inspect.metal3.io/hardwaredetails annotation) ---- */

int bmac_hardware_details(json_object *agent, json_object **ret)
{
        json_object *inv = json_get_path(agent, "status.inventory"), *ifs = json_get(inv, "interfaces"),
                    *disks = json_get(inv, "disks"), *cpu = json_get(inv, "cpu"),
                    *sv = json_get(inv, "systemVendor");
        _cleanup_(json_object_putp) json_object *hd = json_new_object();
        json_object *nics = json_new_array(), *storage = json_new_array(), *c = json_new_object(),
                    *v = json_new_object();
        const char *hostname = json_get_string(json_get(agent, "spec"), "hostname");
        int64_t ram = 0, n;

        if (!hd || json_add(hd, "nics", nics) < 0 || json_add(hd, "storage", storage) < 0 ||
            json_add(hd, "cpu", c) < 0 || json_add(hd, "systemVendor", v) < 0)
                return -ENOMEM;
        if (json_add_string(v, "manufacturer", strempty(json_get_string(sv, "manufacturer"))) < 0 ||
            json_add_string(v, "productName", strempty(json_get_string(sv, "productName"))) < 0 ||
            json_add_string(v, "serialNumber", strempty(json_get_string(sv, "serialNumber"))) < 0)
                return -ENOMEM;
        (void)json_get_int64(json_get(inv, "memory"), "physicalBytes", &ram);
        if (json_add_int64(hd, "ramMebibytes", ram / 1024 / 1024) < 0)
                return -ENOMEM;
        if (json_add_string(c, "arch", strempty(json_get_string(cpu, "architecture"))) < 0 ||
            json_add_string(c, "model", strempty(json_get_string(cpu, "modelName"))) < 0 ||
            json_add(c, "flags", hub_json_copy(json_get(cpu, "flags")) ?: json_new_array()) < 0)
                return -ENOMEM;
        n = 0;
        (void)json_get_int64(cpu, "clockMegahertz", &n);
        if (json_add_double(c, "clockMegahertz", (double)n) < 0)
                return -ENOMEM;
        n = 0;
        (void)json_get_int64(cpu, "count", &n);
        if (json_add_int64(c, "count", n) < 0)
                return -ENOMEM;
        /* one NIC per address, the address without its prefix length */
        for (size_t i = 0; json_object_is_type(ifs, json_type_array) && i < json_object_array_length(ifs);
             i++) {
                json_object *itf = json_object_array_get_idx(ifs, i);
                const char *lists[] = { "ipV4Addresses", "ipV6Addresses" };
                int64_t mbps = 0;

                (void)json_get_int64(itf, "speedMbps", &mbps);
                for (size_t l = 0; l < ELEMENTSOF(lists); l++) {
                        json_object *ips = json_get(itf, lists[l]);

                        for (size_t j = 0;
                             json_object_is_type(ips, json_type_array) && j < json_object_array_length(ips);
                             j++) {
                                _cleanup_free_ char *ip = strdup(
                                        strempty(json_object_get_string(json_object_array_get_idx(ips, j))));
                                json_object *nic = json_new_object();
                                char *slash;

                                if (!ip || !nic || json_append(nics, nic) < 0)
                                        return -ENOMEM;
                                slash = strchr(ip, '/');
                                if (slash)
                                        *slash = 0;
                                if (json_add_string(nic, "ip", ip) < 0 ||
                                    json_add_string(nic, "name", strempty(json_get_string(itf, "name"))) <
                                            0 ||
                                    json_add_string(nic, "model", strempty(json_get_string(itf, "vendor"))) <
                                            0 ||
                                    json_add_string(nic, "mac",
                                                    strempty(json_get_string(itf, "macAddress"))) < 0 ||
                                    json_add_int64(nic, "speedGbps", mbps / 1024) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        for (size_t i = 0;
             json_object_is_type(disks, json_type_array) && i < json_object_array_length(disks); i++) {
                json_object *d = json_object_array_get_idx(disks, i), *s = json_new_object();
                const char *name = json_get_string(d, "byPath");
                int64_t size = 0;

                if (isempty(name))
                        name = json_get_string(d, "path");
                (void)json_get_int64(d, "sizeBytes", &size);
                if (!s || json_append(storage, s) < 0 || json_add_string(s, "name", strempty(name)) < 0 ||
                    json_add_string_nonempty(s, "hctl", json_get_string(d, "hctl")) < 0 ||
                    json_add_string_nonempty(s, "model", json_get_string(d, "model")) < 0 ||
                    json_add_int64(s, "sizeBytes", size) < 0 ||
                    json_add_string_nonempty(s, "serialNumber", json_get_string(d, "serial")) < 0 ||
                    json_add_string_nonempty(s, "wwn", json_get_string(d, "wwn")) < 0 ||
                    json_add_string_nonempty(s, "vendor", json_get_string(d, "vendor")) < 0 ||
                    json_add_bool(s, "rotational", streq_ptr(json_get_string(d, "driveType"), "HDD")) < 0)
                        return -ENOMEM;
        }
        if (isempty(hostname))
                hostname = json_get_string(inv, "hostname");
        if (json_add_string(hd, "hostname", strempty(hostname)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(hd);
        return 0;
}

/* ---- decide ---- */

static bool stage_detaches(const char *stage)
{
        return streq_ptr(stage, "Failed") || streq_ptr(stage, "Rebooting") || streq_ptr(stage, "Joined") ||
               streq_ptr(stage, "Done");
}

/* the JSON of an annotation is an array of strings */
static bool valid_installer_args(const char *s)
{
        _cleanup_(json_object_putp) json_object *j = NULL;

        if (json_parse(s, strlen(s), BUF_MAX_JSON_DOC, &j, NULL) < 0 ||
            !json_object_is_type(j, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(j); i++)
                if (!json_object_is_type(json_object_array_get_idx(j, i), json_type_string))
                        return false;
        return true;
}

static bool valid_json_object(const char *s)
{
        _cleanup_(json_object_putp) json_object *j = NULL;

        return isempty(s) || (json_parse(s, strlen(s), BUF_MAX_JSON_DOC, &j, NULL) >= 0 &&
                              json_object_is_type(j, json_type_object));
}

static int set_spec_string(json_object *spec, const char *key, const char *value)
{
        return json_add_string(spec, key, value);
}

/* reconcileAgentSpec (notes §6.4) into the desired Agent */
static int agent_spec(const BmacObserved *o, json_object *agent, HubPlan *plan)
{
        json_object *bmh = o->base.object, *spec = hub_json_ensure_object(agent, "spec"),
                    *ann = json_get(json_get(bmh, "metadata"), "annotations"), *nl;
        const char *v;
        _cleanup_free_ char *disk = NULL;
        int r;

        if (!spec)
                return -ENOMEM;
        if ((v = hub_object_annotation(bmh, HUB_BMAC_ROLE)) && (r = set_spec_string(spec, "role", v)) < 0)
                return r;
        if ((v = hub_object_annotation(bmh, HUB_BMAC_HOSTNAME)) &&
            (r = set_spec_string(spec, "hostname", v)) < 0)
                return r;
        if ((v = hub_object_annotation(bmh, HUB_BMAC_MCP)) &&
            (r = set_spec_string(spec, "machineConfigPool", v)) < 0)
                return r;
        if ((v = hub_object_annotation(bmh, HUB_BMAC_INSTALLER_ARGS))) {
                if (valid_installer_args(v)) {
                        r = set_spec_string(spec, "installerArgs", v);
                        if (r < 0)
                                return r;
                } else
                        (void)hub_plan_event(
                                plan, bmh, "Warning", "InvalidAnnotation",
                                "BareMetalHost %s/%s: annotation %s is not a JSON array of strings; "
                                "installerArgs not copied to Agent %s",
                                o->base.ns, o->base.name, HUB_BMAC_INSTALLER_ARGS, kube_object_name(agent));
        }
        if ((v = hub_object_annotation(bmh, HUB_BMAC_IGNITION_OVERRIDES))) {
                if (valid_json_object(v)) {
                        r = set_spec_string(spec, "ignitionConfigOverrides", v);
                        if (r < 0)
                                return r;
                } else
                        (void)hub_plan_event(plan, bmh, "Warning", "InvalidAnnotation",
                                             "BareMetalHost %s/%s: annotation %s is not a JSON object; "
                                             "ignitionConfigOverrides not copied to Agent %s",
                                             o->base.ns, o->base.name, HUB_BMAC_IGNITION_OVERRIDES,
                                             kube_object_name(agent));
        }
        if ((v = hub_object_annotation(bmh, HUB_BMAC_FENCING_SECRET_NAME)) &&
            (r = set_spec_string(spec, "fencingCredentialsSecretRef", v)) < 0)
                return r;
        /* a BMH-matched Agent is approved */
        r = json_add_bool(spec, "approved", true);
        if (r >= 0)
                r = hub_object_set_label(agent, HUB_LABEL_BMH, o->base.name);
        if (r < 0)
                return r;
        disk = bmac_disk_by_hints(json_get_path(bmh, "spec.rootDeviceHints"),
                                  json_get_path(agent, "status.inventory"));
        if (disk && (r = set_spec_string(spec, "installation_disk_id", disk)) < 0)
                return r;

        /* the cluster reference: "namespace/name"; empty unbinds */
        if ((v = hub_object_annotation(bmh, HUB_BMAC_CLUSTER_REFERENCE))) {
                json_object *cref = json_get_path(o->infraenv, "spec.clusterRef");

                if (cref)
                        (void)hub_plan_event(
                                plan, bmh, "Warning", "ClusterReference",
                                "failed to reconcile cluster reference.  InfraEnv already has cluster "
                                "reference %s/%s",
                                strempty(json_get_string(cref, "namespace")),
                                strempty(json_get_string(cref, "name")));
                else if (isempty(v))
                        json_object_object_del(spec, "clusterDeploymentName");
                else {
                        const char *slash = strchr(v, '/');
                        json_object *n;

                        if (!slash || slash == v || !slash[1] || strchr(slash + 1, '/'))
                                (void)hub_plan_event(
                                        plan, bmh, "Warning", "ClusterReference",
                                        "failed to reconcile cluster reference.  Parse of cluster "
                                        "reference %s failed",
                                        v);
                        else {
                                _cleanup_free_ char *ns = strndup(v, (size_t)(slash - v));

                                n = json_new_object();
                                if (!ns || !n || json_add(spec, "clusterDeploymentName", n) < 0 ||
                                    json_add_string(n, "name", slash + 1) < 0 ||
                                    json_add_string(n, "namespace", ns) < 0)
                                        return -ENOMEM;
                        }
                }
        }

        /* node labels: the map replaced whole; agent labels: added or updated */
        nl = json_new_object();
        if (!nl)
                return -ENOMEM;
        if (json_object_is_type(ann, json_type_object)) {
                json_object_object_foreach (ann, k, val) {
                        const char *suffix;

                        if ((suffix = startswith(k, HUB_BMAC_NODE_LABEL_PREFIX)) && *suffix)
                                r = json_add_string(nl, suffix, strempty(json_object_get_string(val)));
                        else if ((suffix = startswith(k, HUB_BMAC_AGENT_LABEL_PREFIX)) && *suffix)
                                r = hub_object_set_label(agent, suffix,
                                                         strempty(json_object_get_string(val)));
                        else
                                r = 0;
                        if (r < 0) {
                                json_object_put(nl);
                                return r;
                        }
                }
        }
        /* without node-label annotations the Agent's own (or inherited)
         * node labels stay */
        if (json_object_object_length(nl) == 0) {
                json_object_put(nl);
                return 0;
        }
        return json_add(spec, "nodeLabels", nl);
}

static bool provisioning_state_is(json_object *bmh, const char *state)
{
        return streq_ptr(json_get_string(json_get_path(bmh, "status.provisioning"), "state"), state);
}

/* The image (reconcileBMH, notes §6.3). false: stop here (the rest of the
 * reconcile is skipped, what was decided is still written). */
static int bmh_image(const BmacObserved *o, json_object *bmh, HubPlan *plan)
{
        json_object *spec = hub_json_ensure_object(bmh, "spec"), *img, *cond;
        const char *url;
        usec_t created;

        if (!spec)
                return -ENOMEM;
        if (!o->infraenv)
                return 0;
        if (hub_object_annotation(bmh, HUB_BMH_DETACHED))
                return 1;
        if (o->converged) {
                if (streq_ptr(json_get_string(json_get(spec, "customDeploy"), "method"),
                              HUB_CUSTOM_DEPLOY_METHOD))
                        return 1;
                cond = hub_conditions_find(o->ppi, HUB_COND_IMAGE_READY);
                if (!streq_ptr(json_get_string(cond, "status"), HUB_TRUE) ||
                    !streq_ptr(json_get_string(cond, "reason"), HUB_REASON_INFRAENV_AVAILABLE))
                        return 0; /* the PreprovisioningImage's change brings us back */
                img = json_new_object();
                if (!img || json_add(spec, "customDeploy", img) < 0 ||
                    json_add_string(img, "method", HUB_CUSTOM_DEPLOY_METHOD) < 0)
                        return -ENOMEM;
                return 1;
        }
        if (!hub_object_annotation(bmh, HUB_BMH_INSPECT) &&
            hub_object_set_annotation(bmh, HUB_BMH_INSPECT, "disabled") < 0)
                return -ENOMEM;
        if (json_add_string(spec, "automatedCleaningMode", "disabled") < 0)
                return -ENOMEM;
        url = json_get_string(json_get(o->infraenv, "status"), "isoDownloadURL");
        if (isempty(url))
                return 0; /* "InfraEnv corresponding to the BMH has no image URL available." */
        if (streq_ptr(json_get_string(json_get(spec, "image"), "url"), url))
                return 1;
        if (hub_parse_time(json_get_string(json_get(o->infraenv, "status"), "createdTime"), &created) >= 0 &&
            created + o->cooldown > o->base.now) {
                hub_plan_requeue_after(plan, created + o->cooldown - o->base.now);
                return 0; /* "InfraEnv image is too recent" */
        }
        if (!provisioning_state_is(o->base.object, "ready") &&
            !provisioning_state_is(o->base.object, "available")) {
                json_object_object_del(spec, "image");
                return 0;
        }
        img = json_new_object();
        if (!img || json_add_bool(spec, "online", true) < 0 || json_add(spec, "image", img) < 0 ||
            json_add_string(img, "url", url) < 0 || json_add_string(img, "format", LIVE_ISO) < 0)
                return -ENOMEM;
        return 1;
}

static const char *agent_bound_reason(json_object *agent)
{
        return json_get_string(hub_conditions_find(agent, "Bound"), "reason");
}

int bmac_decide(const HubObserved *base, HubPlan *plan)
{
        const BmacObserved *o = (const BmacObserved *)base;
        json_object *bmh = base->object;
        _cleanup_(json_object_putp) json_object *desired = NULL, *agent = NULL;
        bool unbinding;
        int r;

        if (!bmh)
                return 0;
        desired = hub_json_copy(bmh);
        if (!desired)
                return -ENOMEM;
        if (o->agent) {
                agent = hub_json_copy(o->agent);
                if (!agent)
                        return -ENOMEM;
        }

        /* without an InfraEnv label the BMH is not ours */
        if (isempty(hub_object_label(bmh, HUB_LABEL_INFRAENV))) {
                r = hub_object_remove_finalizer(desired, HUB_FINALIZER_BMAC);
                if (r < 0)
                        return r;
                goto done;
        }
        if (hub_object_deleting(bmh)) {
                /* no agent, or no removal asked: hand the host back and let it go;
                 * with remove-agent-and-node-on-delete the Agent goes too (its
                 * finalizer deregisters the host) */
                if (agent && hub_object_annotation(bmh, HUB_BMAC_REMOVE_ON_DELETE) &&
                    !hub_object_deleting(agent)) {
                        r = hub_plan_delete(plan, HUB_KIND_AGENT, kube_object_namespace(agent),
                                            kube_object_name(agent), hub_object_uid(agent), false);
                        if (r < 0)
                                return r;
                }
                if (hub_object_set_annotation(desired, HUB_BMH_PAUSED, NULL) < 0)
                        return -ENOMEM;
                if (o->converged && hub_object_annotation(bmh, HUB_BMAC_REMOVE_ON_DELETE) &&
                    hub_object_set_annotation(desired, HUB_BMH_DETACHED, NULL) < 0)
                        return -ENOMEM;
                r = hub_object_remove_finalizer(desired, HUB_FINALIZER_BMAC);
                if (r < 0)
                        return r;
                json_object_put(agent);
                agent = NULL;
                goto done;
        }
        if (o->infraenv && hub_object_set_label(desired, HUB_LABEL_BACKUP, "true") < 0)
                return -ENOMEM;
        r = hub_object_add_finalizer(desired, HUB_FINALIZER_BMAC);
        if (r < 0)
                return r;

        /* an Agent unbound after its installation must boot the discovery
         * image again (reconcileUnboundAgent) */
        unbinding = agent && streq_ptr(agent_bound_reason(agent), "UnbindingPendingUserAction");
        if (unbinding) {
                if (!o->converged && hub_object_annotation(bmh, HUB_BMH_DETACHED)) {
                        static const char *const drop[] = {
                                HUB_BMH_DETACHED, HUB_BMH_PAUSED, HUB_BMH_HARDWARE_DETAILS,
                                "bmac.agent-install.openshift.io/spoke-bmh-machine-created"
                        };

                        for (size_t i = 0; i < ELEMENTSOF(drop); i++)
                                if (hub_object_set_annotation(desired, drop[i], NULL) < 0)
                                        return -ENOMEM;
                        json_object_object_del(json_get(desired, "spec"), "image");
                        goto done;
                }
                if (o->converged && provisioning_state_is(bmh, "provisioned")) {
                        json_object_object_del(json_get(desired, "spec"), "customDeploy");
                        goto done;
                }
        }

        /* detached once the host is past the point where BMO must not touch it */
        if (!unbinding && !hub_object_annotation(bmh, HUB_BMH_DETACHED) &&
            ((o->converged && provisioning_state_is(bmh, "provisioned")) ||
             (!o->converged && agent &&
              stage_detaches(json_get_string(json_get_path(agent, "status.progress"), "currentStage"))))) {
                const char *value = o->converged && hub_object_annotation(bmh, HUB_BMAC_REMOVE_ON_DELETE)
                                            ? "{\"deleteAction\":\"delay\"}"
                                            : HUB_BMAC_CONTROLLER_NAME;

                if (hub_object_set_annotation(desired, HUB_BMH_DETACHED, value) < 0)
                        return -ENOMEM;
                goto done;
        }

        r = bmh_image(o, desired, plan);
        if (r < 0)
                return r;
        if (r == 0 || !agent)
                goto done;

        r = agent_spec(o, agent, plan);
        if (r < 0)
                return r;
        if (!o->converged &&
            hub_json_array_length(json_get_path(agent, "status.inventory.interfaces")) > 0 &&
            !hub_object_annotation(bmh, HUB_BMH_HARDWARE_DETAILS) &&
            isempty(json_get_string(json_get_path(bmh, "status.hardware"), "hostname"))) {
                _cleanup_(json_object_putp) json_object *hd = NULL;
                _cleanup_free_ char *text = NULL;

                r = bmac_hardware_details(agent, &hd);
                if (r < 0)
                        return r;
                text = json_to_string(hd, 0);
                if (!text || hub_object_set_annotation(desired, HUB_BMH_HARDWARE_DETAILS, text) < 0)
                        return -ENOMEM;
        }
done:
        r = hub_plan_patch_object(plan, HUB_KIND_BMH, bmh, desired, true, false);
        if (r >= 0 && agent)
                r = hub_plan_patch_object_locked(plan, HUB_KIND_AGENT, o->agent, agent, false);
        return r;
}

/* ---- watches ---- */

/* an Agent → its BMH: the bmh label, else the BMHs of its MACs */
static int map_agent(HubContext *ctx, json_object *obj, char ***ret)
{
        const char *ns = kube_object_namespace(obj), *bmh = hub_object_label(obj, HUB_LABEL_BMH);
        _cleanup_strv_free_ char **macs = NULL;
        int r;

        *ret = NULL;
        if (!isempty(bmh))
                return strv_extendf(ret, "%s/%s", strempty(ns), bmh);
        r = hub_index_agent_mac(obj, &macs, NULL);
        if (r < 0)
                return r;
        return hub_cache_index_keys_any(ctx->cache, HUB_KIND_BMH, HUB_INDEX_BMH_MAC, macs, ret);
}

static int map_infraenv(HubContext *ctx, json_object *obj, char ***ret)
{
        return hub_cache_keys_referring(ctx->cache, HUB_KIND_BMH, HUB_INDEX_BMH_INFRAENV, obj, ret);
}

static int bmac_setup(HubController *c)
{
        int r = hub_controller_watch(c, HUB_KIND_BMH, NULL);

        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_AGENT, map_agent);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_INFRAENV, map_infraenv);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_PPI, NULL); /* the BMH of the same name */
        return r;
}

const HubControllerType hub_bmac_controller = {
        .name = "bmac",
        .kind = HUB_KIND_BMH,
        .observed_size = sizeof(BmacObserved),
        .setup = bmac_setup,
        .observe = bmac_observe,
        .observed_done = bmac_observed_done,
        .decide = bmac_decide,
};
