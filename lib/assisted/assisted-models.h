/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Wire names of assisted-service's models, in one place (swagger.yaml is
 * the source; tests/service checks this table against it). Values are the
 * exact enum strings.
 */

#include <stdbool.h>

typedef enum StepType {
        STEP_CONNECTIVITY_CHECK,
        STEP_EXECUTE,
        STEP_INVENTORY,
        STEP_INSTALL,
        STEP_FREE_NETWORK_ADDRESSES,
        STEP_DHCP_LEASE_ALLOCATE,
        STEP_API_VIP_CONNECTIVITY_CHECK,
        STEP_TANG_CONNECTIVITY_CHECK,
        STEP_NTP_SYNCHRONIZER,
        STEP_INSTALLATION_DISK_SPEED_CHECK,
        STEP_CONTAINER_IMAGE_AVAILABILITY,
        STEP_DOMAIN_RESOLUTION,
        STEP_STOP_INSTALLATION,
        STEP_LOGS_GATHER,
        STEP_NEXT_STEP_RUNNER,
        STEP_UPGRADE_AGENT,
        STEP_DOWNLOAD_BOOT_ARTIFACTS,
        STEP_REBOOT_FOR_RECLAIM,
        STEP_VERIFY_VIPS,
        _STEP_TYPE_MAX,
        _STEP_TYPE_INVALID = -22,
} StepType;

const char *step_type_to_string(StepType t);
StepType step_type_from_string(const char *s);

/* HostStage, the install progress stages. */
typedef enum HostStage {
        HOST_STAGE_STARTING_INSTALLATION,
        HOST_STAGE_WAITING_FOR_CONTROL_PLANE,
        HOST_STAGE_WAITING_FOR_BOOTKUBE,
        HOST_STAGE_WAITING_FOR_CONTROLLER,
        HOST_STAGE_INSTALLING,
        HOST_STAGE_WRITING_IMAGE_TO_DISK,
        HOST_STAGE_COPYING_REGISTRY_DATA_TO_DISK,
        HOST_STAGE_REBOOTING,
        HOST_STAGE_WAITING_FOR_IGNITION,
        HOST_STAGE_CONFIGURING,
        HOST_STAGE_JOINED,
        HOST_STAGE_DONE,
        HOST_STAGE_FAILED,
        _HOST_STAGE_MAX,
        _HOST_STAGE_INVALID = -22,
} HostStage;

const char *host_stage_to_string(HostStage s);
HostStage host_stage_from_string(const char *s);

/* finalizing-stage: what the assisted-installer-controller reports while
 * the cluster is finalizing, in the order it reports them (swagger's enum
 * order differs: Applying olm manifests comes after the CSV initialization);
 * Waiting for OLM operator setup jobs is in the enum but never sent. */
typedef enum FinalizingStage {
        FINALIZING_STAGE_WAITING_FOR_CLUSTER_OPERATORS,
        FINALIZING_STAGE_ADDING_ROUTER_CA,
        FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV_INITIALIZATION,
        FINALIZING_STAGE_APPLYING_OLM_MANIFESTS,
        FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV,
        FINALIZING_STAGE_WAITING_FOR_OLM_OPERATOR_SETUP_JOBS,
        FINALIZING_STAGE_DONE,
        _FINALIZING_STAGE_MAX,
        _FINALIZING_STAGE_INVALID = -22,
} FinalizingStage;

const char *finalizing_stage_to_string(FinalizingStage s);
FinalizingStage finalizing_stage_from_string(const char *s);

/* operator-status and operator-type */
#define OPERATOR_STATUS_AVAILABLE "available"
#define OPERATOR_STATUS_PROGRESSING "progressing"
#define OPERATOR_STATUS_FAILED "failed"
#define OPERATOR_TYPE_BUILTIN "builtin"
#define OPERATOR_TYPE_OLM "olm"

/* logs-progress states */
#define LOGS_STATE_REQUESTED "requested"
#define LOGS_STATE_COLLECTING "collecting"
#define LOGS_STATE_COMPLETED "completed"
#define LOGS_STATE_TIMEOUT "timeout"

/* Steps.post_step_action */
#define POST_STEP_ACTION_EXIT "exit"
#define POST_STEP_ACTION_CONTINUE "continue"

/* The API's path prefix under the service URL. */
#define ASSISTED_API_PREFIX "/api/assisted-install"

/* "4.6", "4.6.0-0.nightly-...", "4.7-pre-release", "4.10.3": major and
 * minor. -EINVAL when there are none. */
int openshift_version_parse(const char *s, unsigned *ret_major, unsigned *ret_minor);
/* Unparsable versions are taken as current (at least any major.minor). */
bool openshift_version_at_least(const char *s, unsigned major, unsigned minor);
