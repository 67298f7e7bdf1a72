/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "ppi.h"
#include "strutil.h"

void ppi_observed_done(HubObserved *base)
{
        PpiObserved *o = (PpiObserved *)base;

        json_object_put(o->infraenv);
        json_object_put(o->bmh);
}

static int ppi_observe(HubContext *ctx, HubObserved *base)
{
        PpiObserved *o = (PpiObserved *)base;
        const char *ie;
        int r;

        o->cooldown = ctx->config->image_cooldown;
        r = hub_cache_get(ctx->cache, HUB_KIND_PPI, base->ns, base->name, &base->object);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        ie = hub_object_label(base->object, HUB_LABEL_INFRAENV);
        if (!isempty(ie) && hub_cache_get(ctx->cache, HUB_KIND_INFRAENV, base->ns, ie, &o->infraenv) < 0)
                o->infraenv = NULL;
        r = hub_cache_get(ctx->cache, HUB_KIND_BMH, base->ns, base->name, &o->bmh);
        if (r < 0 && r != -ENOENT)
                o->bmh_error = r;
        return 0;
}

/* the architecture names BMO and the InfraEnv use for the same thing */
static const char *normalize_arch(const char *a)
{
        if (streq_ptr(a, "aarch64"))
                return "arm64";
        if (streq_ptr(a, "amd64"))
                return "x86_64";
        return a;
}

static bool accepts(json_object *ppi, const char *format)
{
        json_object *f = json_get_path(ppi, "spec.acceptFormats");

        for (size_t i = 0; json_object_is_type(f, json_type_array) && i < json_object_array_length(f); i++)
                if (streq_ptr(json_object_get_string(json_object_array_get_idx(f, i)), format))
                        return true;
        return false;
}

static void clear_image(json_object *status)
{
        static const char *const fields[] = { "imageUrl", "kernelUrl", "extraKernelParams", "format",
                                              "architecture" };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                json_object_object_del(status, fields[i]);
}

/* ImageReady and ImageError; every failure path clears the image first */
static int set_conditions(const PpiObserved *o, json_object *desired, const char *ready, const char *error,
                          const char *reason, const char *message, bool clear)
{
        json_object *st = hub_json_ensure_object(desired, "status");
        int r;

        if (!st)
                return -ENOMEM;
        if (clear)
                clear_image(st);
        r = hub_meta_conditions_set(desired, HUB_COND_IMAGE_READY, ready, reason, message, o->base.now);
        if (r >= 0)
                r = hub_meta_conditions_set(desired, HUB_COND_IMAGE_ERROR, error, reason, message,
                                            o->base.now);
        return r;
}

static int finish(const PpiObserved *o, json_object *desired, HubPlan *plan)
{
        return hub_plan_patch_object(plan, HUB_KIND_PPI, o->base.object, desired, true, true);
}

static int decide_deletion(const PpiObserved *o, json_object *desired, HubPlan *plan)
{
        const char *cleaning = json_get_string(json_get(o->bmh, "spec"), "automatedCleaningMode");
        const char *state = json_get_string(json_get_path(o->bmh, "status.provisioning"), "state");
        int r;

        if (!hub_object_has_finalizer(o->base.object, HUB_FINALIZER_PPI))
                return 0;
        if (o->bmh_error < 0) {
                hub_plan_requeue_after(plan, HUB_REQUEUE_LONGER_ON_ERROR);
                return 0;
        }
        /* cleaning needs the image: keep it until the host is going away */
        if (o->bmh && !streq_ptr(cleaning, "disabled") &&
            !(hub_object_deleting(o->bmh) &&
              (streq_ptr(state, "powering off before delete") || streq_ptr(state, "deleting"))))
                return hub_plan_fail(plan,
                                     "waiting for BareMetalHost %s/%s to be deleted before its image goes",
                                     o->base.ns, o->base.name);
        r = hub_object_remove_finalizer(desired, HUB_FINALIZER_PPI);
        if (r < 0)
                return r;
        return hub_plan_patch_object(plan, HUB_KIND_PPI, o->base.object, desired, true, false);
}

static int kernel_params(json_object *ie, const char *rootfs, char **ret)
{
        json_object *ka = json_get_path(ie, "spec.kernelArguments");
        _cleanup_buf_ Buf b = BUF_INIT(64 * 1024);
        int r;

        r = buf_appendf(&b, "coreos.live.rootfs_url=%s rd.bootif=0", strempty(rootfs));
        for (size_t i = 0;
             r >= 0 && json_object_is_type(ka, json_type_array) && i < json_object_array_length(ka); i++) {
                json_object *a = json_object_array_get_idx(ka, i);

                if (streq_ptr(json_get_string(a, "operation"), "append") &&
                    !isempty(json_get_string(a, "value")))
                        r = buf_appendf(&b, " %s", json_get_string(a, "value"));
        }
        if (r < 0)
                return r;
        return buf_take(&b, ret, NULL);
}

int ppi_decide(const HubObserved *base, HubPlan *plan)
{
        const PpiObserved *o = (const PpiObserved *)base;
        json_object *ppi = base->object, *ie = o->infraenv, *st, *iest, *cond;
        _cleanup_(json_object_putp) json_object *desired = NULL;
        _cleanup_free_ char *msg = NULL;
        const char *label = hub_object_label(ppi, HUB_LABEL_INFRAENV), *arch, *ie_arch, *old_url, *url;
        usec_t created;
        int r;

        if (!ppi)
                return 0;
        desired = hub_json_copy(ppi);
        if (!desired)
                return -ENOMEM;
        if (hub_object_deleting(ppi))
                return decide_deletion(o, desired, plan);
        r = hub_object_add_finalizer(desired, HUB_FINALIZER_PPI);
        if (r >= 0)
                r = hub_object_set_label(desired, HUB_LABEL_VELERO_EXCLUDE, "true");
        if (r < 0)
                return r;

        /* 1. a format we can give */
        if (!accepts(ppi, "iso") && !accepts(ppi, "initrd")) {
                r = set_conditions(o, desired, HUB_FALSE, HUB_TRUE, HUB_REASON_UNSUPPORTED_FORMAT,
                                   HUB_MSG_UNSUPPORTED_FORMAT, true);
                return r < 0 ? r : finish(o, desired, plan);
        }
        /* 2. the InfraEnv */
        if (!ie || hub_object_deleting(ie)) {
                msg = strdup_printf("InfraEnv %s/%s is not found or is being deleted", strempty(label),
                                    base->ns);
                if (!msg)
                        return -ENOMEM;
                r = set_conditions(o, desired, HUB_FALSE, HUB_FALSE, HUB_REASON_INFRAENV_NOT_AVAILABLE, msg,
                                   true);
                return r < 0 ? r : finish(o, desired, plan);
        }
        /* 3. the architecture */
        arch = json_get_string(json_get(ppi, "spec"), "architecture");
        ie_arch = json_get_string(json_get(ie, "spec"), "cpuArchitecture");
        if (isempty(ie_arch))
                ie_arch = "x86_64";
        if (!isempty(arch) && !streq(normalize_arch(arch), normalize_arch(ie_arch))) {
                msg = strdup_printf("PreprovisioningImage CPU architecture (%s) does not match InfraEnv CPU "
                                    "architecture (%s)",
                                    normalize_arch(arch), ie_arch);
                if (!msg)
                        return -ENOMEM;
                r = set_conditions(o, desired, HUB_FALSE, HUB_TRUE, HUB_REASON_ARCH_MISMATCH, msg, true);
                return r < 0 ? r : finish(o, desired, plan);
        }
        /* 4. the InfraEnv's image serves the ironic agent (the annotation;
         * the agent's ignition itself is NO-REST, see README.md) */
        if (!hub_object_annotation(ie, HUB_ANNOTATION_ENABLE_IRONIC)) {
                _cleanup_(json_object_putp) json_object *die = hub_json_copy(ie);

                if (!die || hub_object_set_annotation(die, HUB_ANNOTATION_ENABLE_IRONIC, "true") < 0)
                        return -ENOMEM;
                r = hub_plan_patch_object(plan, HUB_KIND_INFRAENV, ie, die, false, false);
                if (r < 0)
                        return r;
        }
        iest = json_get(ie, "status");
        /* 5. an image, 6. not too recent */
        if (hub_parse_time(json_get_string(iest, "createdTime"), &created) < 0) {
                r = set_conditions(o, desired, HUB_FALSE, HUB_FALSE, HUB_REASON_WAITING_IMAGE,
                                   HUB_MSG_WAITING_IMAGE, true);
                return r < 0 ? r : finish(o, desired, plan);
        }
        if (created + o->cooldown > base->now) {
                r = set_conditions(o, desired, HUB_FALSE, HUB_FALSE, HUB_REASON_WAITING_COOLDOWN,
                                   HUB_MSG_WAITING_COOLDOWN, true);
                hub_plan_requeue_after(plan, created + o->cooldown - base->now);
                return r < 0 ? r : finish(o, desired, plan);
        }
        /* 7. the image */
        st = hub_json_ensure_object(desired, "status");
        if (!st)
                return -ENOMEM;
        old_url = json_get_string(json_get(ppi, "status"), "imageUrl");
        if (accepts(ppi, "iso")) {
                url = json_get_string(iest, "isoDownloadURL");
                json_object_object_del(st, "kernelUrl");
                json_object_object_del(st, "extraKernelParams");
                if (json_add_string(st, "format", "iso") < 0 ||
                    json_add_string(st, "imageUrl", strempty(url)) < 0)
                        return -ENOMEM;
        } else {
                json_object *arts = json_get(iest, "bootArtifacts");
                _cleanup_free_ char *params = NULL;

                url = json_get_string(arts, "initrd");
                r = kernel_params(ie, json_get_string(arts, "rootfs"), &params);
                if (r < 0)
                        return r;
                if (json_add_string(st, "format", "initrd") < 0 ||
                    json_add_string(st, "imageUrl", strempty(url)) < 0 ||
                    json_add_string(st, "kernelUrl", strempty(json_get_string(arts, "kernel"))) < 0 ||
                    json_add_string(st, "extraKernelParams", params) < 0)
                        return -ENOMEM;
        }
        if (json_add_string(st, "architecture", ie_arch) < 0)
                return -ENOMEM;
        cond = hub_conditions_find(ie, HUB_COND_IMAGE_CREATED);
        {
                const char *cs = json_get_string(cond, "status"), *reason = json_get_string(cond, "reason"),
                           *message = json_get_string(cond, "message");

                r = hub_meta_conditions_set(desired, HUB_COND_IMAGE_READY, cs ? cs : HUB_UNKNOWN,
                                            strempty(reason), strempty(message), base->now);
                if (r >= 0)
                        r = hub_meta_conditions_set(
                                desired, HUB_COND_IMAGE_ERROR,
                                streq_ptr(reason, HUB_REASON_IMAGE_CREATION_ERROR) ? HUB_TRUE : HUB_FALSE,
                                strempty(reason), strempty(message), base->now);
                if (r < 0)
                        return r;
        }
        /* a new URL reboots a host that is not provisioned into it */
        if (!isempty(old_url) && !streq_ptr(old_url, url) && o->bmh &&
            !streq_ptr(json_get_string(json_get_path(o->bmh, "status.provisioning"), "state"),
                       "provisioned")) {
                _cleanup_(json_object_putp) json_object *dbmh = hub_json_copy(o->bmh);

                if (!dbmh || hub_object_set_annotation(dbmh, HUB_BMH_REBOOT, "{\"force\": true}") < 0)
                        return -ENOMEM;
                r = hub_plan_patch_object(plan, HUB_KIND_BMH, o->bmh, dbmh, false, false);
                if (r < 0)
                        return r;
        }
        return finish(o, desired, plan);
}

static int map_infraenv(HubContext *ctx, json_object *obj, char ***ret)
{
        return hub_cache_keys_referring(ctx->cache, HUB_KIND_PPI, HUB_INDEX_PPI_INFRAENV, obj, ret);
}

static int ppi_setup(HubController *c)
{
        int r = hub_controller_watch(c, HUB_KIND_PPI, NULL);

        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_INFRAENV, map_infraenv);
        if (r >= 0)
                r = hub_controller_watch(c, HUB_KIND_BMH, NULL); /* the PPI of the same name */
        return r;
}

const HubControllerType hub_ppi_controller = {
        .name = "ppi",
        .kind = HUB_KIND_PPI,
        .observed_size = sizeof(PpiObserved),
        .setup = ppi_setup,
        .observe = ppi_observe,
        .observed_done = ppi_observed_done,
        .decide = ppi_decide,
};
