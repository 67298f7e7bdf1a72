/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The installation task (waitForInstallation, notes/controller.md §6): the
 * service's cluster every round until the installation is over, the
 * cluster gone or the service refusing us (ending.h decides); the run ends
 * with it.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "cleanup.h"
#include "controller/ending.h"
#include "controller/run.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"

static void installation_check(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_free_ char *err = NULL;
        long status = 0;
        int r;

        r = controller_service_get_cluster(&ctl->svc, false, &status, &cluster, &err);
        if (r == -ECANCELED)
                return;
        if (r < 0)
                log_error("Failed to get the cluster from the service: %s", strna(err));
        ctl->end = installation_state(r, status, r < 0 ? NULL : json_get_string(cluster, "status"),
                                      &ctl->refusals);
        switch (ctl->end) {
        case INSTALLATION_FAILED:
                log_info("Cluster installation failed.");
                break;
        case INSTALLATION_OVER:
                log_info("Cluster installation %s.",
                         streq_ptr(json_get_string(cluster, "status"), "installed") ? "successfully finished"
                                                                                    : "is over here");
                break;
        case INSTALLATION_UNREACHABLE:
                log_info("Got more than %u errors from assisted service in a row, exiting",
                         INSTALLATION_MAX_REFUSALS);
                break;
        default:
                break;
        }
}

static usec_t task_installation(Controller *ctl)
{
        installation_check(ctl);
        return ctl->end == INSTALLATION_GOES_ON ? ctl->cfg->slow_poll_interval : USEC_INFINITY;
}

const ControllerTask controller_task_installation = {
        .name = "installation",
        /* upstream's ticker: the first check after one interval */
        .first_delay = controller_after_slow_poll_interval,
        .round = task_installation,
};
