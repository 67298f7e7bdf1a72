/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "assisted-models.h"
#include "macro.h"
#include "strutil.h"

static const char *const step_type_names[_STEP_TYPE_MAX] = {
        [STEP_CONNECTIVITY_CHECK] = "connectivity-check",
        [STEP_EXECUTE] = "execute",
        [STEP_INVENTORY] = "inventory",
        [STEP_INSTALL] = "install",
        [STEP_FREE_NETWORK_ADDRESSES] = "free-network-addresses",
        [STEP_DHCP_LEASE_ALLOCATE] = "dhcp-lease-allocate",
        [STEP_API_VIP_CONNECTIVITY_CHECK] = "api-vip-connectivity-check",
        [STEP_TANG_CONNECTIVITY_CHECK] = "tang-connectivity-check",
        [STEP_NTP_SYNCHRONIZER] = "ntp-synchronizer",
        [STEP_INSTALLATION_DISK_SPEED_CHECK] = "installation-disk-speed-check",
        [STEP_CONTAINER_IMAGE_AVAILABILITY] = "container-image-availability",
        [STEP_DOMAIN_RESOLUTION] = "domain-resolution",
        [STEP_STOP_INSTALLATION] = "stop-installation",
        [STEP_LOGS_GATHER] = "logs-gather",
        [STEP_NEXT_STEP_RUNNER] = "next-step-runner",
        [STEP_UPGRADE_AGENT] = "upgrade-agent",
        [STEP_DOWNLOAD_BOOT_ARTIFACTS] = "download-boot-artifacts",
        [STEP_REBOOT_FOR_RECLAIM] = "reboot-for-reclaim",
        [STEP_VERIFY_VIPS] = "verify-vips",
};

static const char *const host_stage_names[_HOST_STAGE_MAX] = {
        [HOST_STAGE_STARTING_INSTALLATION] = "Starting installation",
        [HOST_STAGE_WAITING_FOR_CONTROL_PLANE] = "Waiting for control plane",
        [HOST_STAGE_WAITING_FOR_BOOTKUBE] = "Waiting for bootkube",
        [HOST_STAGE_WAITING_FOR_CONTROLLER] = "Waiting for controller",
        [HOST_STAGE_INSTALLING] = "Installing",
        [HOST_STAGE_WRITING_IMAGE_TO_DISK] = "Writing image to disk",
        [HOST_STAGE_COPYING_REGISTRY_DATA_TO_DISK] = "Copying registry data to disk",
        [HOST_STAGE_REBOOTING] = "Rebooting",
        [HOST_STAGE_WAITING_FOR_IGNITION] = "Waiting for ignition",
        [HOST_STAGE_CONFIGURING] = "Configuring",
        [HOST_STAGE_JOINED] = "Joined",
        [HOST_STAGE_DONE] = "Done",
        [HOST_STAGE_FAILED] = "Failed",
};

static const char *const finalizing_stage_names[_FINALIZING_STAGE_MAX] = {
        [FINALIZING_STAGE_WAITING_FOR_CLUSTER_OPERATORS] = "Waiting for cluster operators",
        [FINALIZING_STAGE_ADDING_ROUTER_CA] = "Adding router ca",
        [FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV_INITIALIZATION] =
                "Waiting for olm operators csv initialization",
        [FINALIZING_STAGE_APPLYING_OLM_MANIFESTS] = "Applying olm manifests",
        [FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV] = "Waiting for olm operators csv",
        [FINALIZING_STAGE_WAITING_FOR_OLM_OPERATOR_SETUP_JOBS] = "Waiting for OLM operator setup jobs",
        [FINALIZING_STAGE_DONE] = "Done",
};

const char *step_type_to_string(StepType t)
{
        return t >= 0 && t < _STEP_TYPE_MAX ? step_type_names[t] : NULL;
}

StepType step_type_from_string(const char *s)
{
        for (int i = 0; s && i < _STEP_TYPE_MAX; i++)
                if (streq(step_type_names[i], s))
                        return (StepType)i;
        return _STEP_TYPE_INVALID;
}

const char *host_stage_to_string(HostStage s)
{
        return s >= 0 && s < _HOST_STAGE_MAX ? host_stage_names[s] : NULL;
}

HostStage host_stage_from_string(const char *s)
{
        for (int i = 0; s && i < _HOST_STAGE_MAX; i++)
                if (streq(host_stage_names[i], s))
                        return (HostStage)i;
        return _HOST_STAGE_INVALID;
}

const char *finalizing_stage_to_string(FinalizingStage s)
{
        return s >= 0 && s < _FINALIZING_STAGE_MAX ? finalizing_stage_names[s] : NULL;
}

FinalizingStage finalizing_stage_from_string(const char *s)
{
        for (int i = 0; s && i < _FINALIZING_STAGE_MAX; i++)
                if (streq(finalizing_stage_names[i], s))
                        return (FinalizingStage)i;
        return _FINALIZING_STAGE_INVALID;
}

/* ---- OpenShift versions ------------------------------------------------------ */

static int parse_number_prefix(const char **p, unsigned *ret)
{
        unsigned v = 0;
        const char *s = *p;

        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        for (; isdigit((unsigned char)*s); s++) {
                if (v > 100000)
                        return -ERANGE;
                v = v * 10 + (unsigned)(*s - '0');
        }
        *p = s;
        *ret = v;
        return 0;
}

int openshift_version_parse(const char *s, unsigned *ret_major, unsigned *ret_minor)
{
        unsigned major, minor;
        const char *p = s;

        if (isempty(s))
                return -EINVAL;
        if (*p == 'v')
                p++;
        if (parse_number_prefix(&p, &major) < 0 || *p != '.')
                return -EINVAL;
        p++;
        if (parse_number_prefix(&p, &minor) < 0)
                return -EINVAL;
        /* then nothing, ".patch", or a pre-release/build suffix */
        if (*p && *p != '.' && *p != '-' && *p != '+')
                return -EINVAL;
        *ret_major = major;
        *ret_minor = minor;
        return 0;
}

bool openshift_version_at_least(const char *s, unsigned major, unsigned minor)
{
        unsigned ma, mi;

        if (openshift_version_parse(s, &ma, &mi) < 0)
                return true;
        return ma > major || (ma == major && mi >= minor);
}
