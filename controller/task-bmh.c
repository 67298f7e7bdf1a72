/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UpdateBMHs' I/O (notes/controller.md §5.5): the BareMetalHosts and
 * Machines of openshift-machine-api and the metal3 provisioning read,
 * controller/bmh.h edits, each BMH updated (and its status, without
 * provisioning).
 */
#include <errno.h>
#include <json-c/json.h>
#include <time.h>

#include "cleanup.h"
#include "controller/bmh.h"
#include "controller/config.h"
#include "controller/task-bmh.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static const KubeResource resource_bmhs =
        KUBE_RESOURCE("metal3.io", "v1alpha1", "baremetalhosts", "BareMetalHost", true);
static const KubeResource resource_provisionings =
        KUBE_RESOURCE("metal3.io", "v1alpha1", "provisionings", "Provisioning", false);
static const KubeResource resource_machines =
        KUBE_RESOURCE("machine.openshift.io", "v1beta1", "machines", "Machine", true);

static int bmh_update(KubeClient *kube, json_object *bmh)
{
        _cleanup_kube_status_ KubeStatus st = {};
        int r;

        log_info("Updating bmh %s", strna(kube_object_name(bmh)));
        r = kube_update(kube, &resource_bmhs, BMH_NAMESPACE, bmh, NULL, &st);
        if (r < 0)
                log_error("Failed to update BMH %s: %s", strna(kube_object_name(bmh)), strna(st.message));
        return r;
}

/* updateBMHWithNOProvisioning */
static int bmh_update_unprovisioned(KubeClient *kube, json_object *bmh, UnallocatedMachines *u)
{
        _cleanup_(json_object_putp) json_object *status = NULL, *fresh = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        _cleanup_free_ char *err = NULL;
        const char *name = kube_object_name(bmh);
        json_object *target = bmh;
        char now[32];
        int r;

        format_rfc3339_utc(time(NULL), now);
        r = bmh_status_from_annotation(bmh, now, &status, &err);
        if (r < 0) {
                log_error("Failed to copy BMH Annotations to status %s: %s", strna(name), strna(err));
                return r;
        }
        if (r == 0)
                log_info("Skipping setting status of BMH host %s, status annotation not present",
                         strna(name));
        else {
                if (json_add(bmh, "status", TAKE_PTR(status)) < 0)
                        return log_oom();
                r = kube_update_status(kube, &resource_bmhs, BMH_NAMESPACE, bmh, NULL, &st);
                if (r < 0) {
                        log_error("Failed to update status of BMH %s: %s", strna(name), strna(st.message));
                        return r;
                }
                /* the status update changed its resourceVersion */
                r = kube_get(kube, &resource_bmhs, BMH_NAMESPACE, name, &fresh, &st2);
                if (r < 0) {
                        log_error("Failed to refresh the BMH %s: %s", strna(name), strna(st2.message));
                        return r;
                }
                target = fresh;
        }
        r = bmh_edit_unprovisioned(target, u, &err);
        if (r < 0) {
                log_error("Failed to update BMH %s: %s", strna(name), strna(err));
                return r;
        }
        return r > 0 ? bmh_update(kube, target) : 0;
}

/* updateBMHWithProvisioning */
static int bmh_update_provisioned(KubeClient *kube, json_object *bmh, UnallocatedMachines *u)
{
        _cleanup_free_ char *err = NULL;
        const char *name = kube_object_name(bmh);
        int r;

        r = bmh_edit_provisioned(bmh, u, &err);
        if (r < 0) {
                log_error("Failed to update BMH %s: %s", strna(name), strna(err));
                return r;
        }
        if (r == 0) {
                const char *state =
                        strempty(json_get_string(json_get_path(bmh, "status.provisioning"), "state"));
                if (!isempty(state) && !streq(state, "unmanaged"))
                        log_info("bmh %s Provisioning.State=%s - ignoring", strna(name), state);
                return 0;
        }
        return bmh_update(kube, bmh);
}

usec_t bmhs_round(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *bmhs = NULL, *machines = NULL, *prov = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {}, st3 = {};
        _cleanup_(unallocated_machines_done) UnallocatedMachines u = {};
        KubeClient *kube = controller_kube(ctl);
        usec_t again = controller_config(ctl)->poll_interval;
        bool provisioning, all_updated = true;
        json_object *items;
        int r;

        if (!kube) {
                /* upstream's dry mock: no BMHs, no Machines */
                log_info("dry run: no BMHs to update");
                return USEC_INFINITY;
        }
        r = kube_list(kube, &resource_bmhs, BMH_NAMESPACE, NULL, &bmhs, &st);
        if (r < 0) {
                log_error("Failed to list BMH hosts: %s", strna(st.message));
                return again;
        }
        items = json_get(bmhs, "items");
        log_info("Number of BMHs is %zu", items ? json_object_array_length(items) : 0);
        r = kube_list(kube, &resource_machines, BMH_NAMESPACE, NULL, &machines, &st2);
        if (r < 0) {
                log_error("Failed to find unallocated machines: %s", strna(st2.message));
                return again;
        }
        if (unallocated_machines(bmhs, machines, &u) < 0)
                return log_oom(), again;
        log_info("Number of unallocated Machines is %zu", u.n);

        /* IsMetalProvisioningExists */
        r = kube_get(kube, &resource_provisionings, NULL, METAL3_PROVISIONING, &prov, &st3);
        if (r == -ENOENT)
                log_info("Baremetal provisioning CR is not found");
        else if (r < 0) {
                log_error("Failed get IsMetalProvisioningExists: %s", strna(st3.message));
                return again;
        }
        provisioning = r >= 0;
        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *bmh = json_object_array_get_idx(items, i);

                log_info("Checking bmh %s", strna(kube_object_name(bmh)));
                r = provisioning ? bmh_update_provisioned(kube, bmh, &u)
                                 : bmh_update_unprovisioned(kube, bmh, &u);
                if (r < 0)
                        all_updated = false;
        }
        if (!all_updated)
                return again;
        log_info("Updated all the BMH CRs, finished successfully");
        return USEC_INFINITY;
}

static usec_t task_bmhs(Controller *ctl)
{
        usec_t next;

        /* upstream starts UpdateBMHs only on the baremetal platform */
        if (!ctl->baremetal)
                return USEC_INFINITY;
        next = bmhs_round(ctl);
        if (next == USEC_INFINITY)
                log_info("Finished UpdateBMHs");
        return next;
}

const ControllerTask controller_task_bmhs = {
        .name = "bmhs",
        .round = task_bmhs,
};
