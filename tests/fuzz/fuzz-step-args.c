/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/step-model.c agent/steps/step-models.c */
/*
 * The step arguments the service sends: json.Unmarshal + Validate() of
 * every request model (the first byte picks the model).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/steps/step-model.h"
#include "cleanup.h"
#include "fuzz.h"
#include "macro.h"

static const ModelSchema *const models[] = {
        &model_connectivity_check_params,
        &model_free_addresses_request,
        &model_ntp_synchronization_request,
        &model_disk_speed_check_request,
        &model_container_image_availability_request,
        &model_domain_resolution_request,
        &model_tang_connectivity_request,
        &model_api_vip_connectivity_request,
        &model_dhcp_allocation_request,
        &model_verify_vips_request,
        &model_logs_gather_cmd_request,
        &model_upgrade_agent_request,
        &model_download_boot_artifacts_request,
        &model_reboot_for_reclaim_request,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_free_ char *arg = NULL, *err = NULL;

        if (size < 1)
                return 0;
        arg = fuzz_text(data + 1, size - 1);
        if (!arg)
                return 0;
        if (model_parse_arg(arg, models[data[0] % ELEMENTSOF(models)], &doc, &err) >= 0) {
                /* what the handlers then read */
                (void)model_get_string(doc, "path");
                (void)model_array_length(model_get(doc, "images"));
                (void)model_get_int(doc, "timeout");
        }
        return 0;
}
