/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The step table: one handler per step type the agent answers. Step types
 * of the enum without an entry (execute, next-step-runner) get the Go
 * agent's "failed to find action" reply. Kept apart from steps.c so that a
 * handler's unit test links only that handler.
 */
#include "macro.h"
#include "steps.h"

static const StepHandler *const handlers[] = {
        /* discovery (host known/insufficient), in the order the service sends them */
        &step_inventory,
        &step_install,
        &step_connectivity_check,
        &step_tang_connectivity_check,
        &step_api_vip_connectivity_check, /* day-2 hosts */
        &step_free_network_addresses,
        &step_dhcp_lease_allocate,
        &step_ntp_synchronizer,
        &step_domain_resolution,
        &step_verify_vips,
        /* preparing for installation */
        &step_installation_disk_speed_check,
        &step_container_image_availability,
        /* agent upgrade, error handling, reclaim */
        &step_upgrade_agent,
        &step_logs_gather,
        &step_stop_installation,
        &step_download_boot_artifacts,
        &step_reboot_for_reclaim,
};

const StepHandler *step_handler_find(StepType type)
{
        for (size_t i = 0; i < ELEMENTSOF(handlers); i++)
                if (handlers[i]->type == type)
                        return handlers[i];
        return NULL;
}
