/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The step request models of ../shared/reference/assisted-service/
 * swagger.yaml as ModelSchema tables. Field names, required lists,
 * formats, enums and patterns come from there (tests/agent/steps checks
 * every table against swagger.yaml); Go type names are go-swagger's, for
 * json.Unmarshal's error texts.
 *
 * Patterns: swagger writes Go (RE2) expressions; POSIX regcomp() lacks
 * (?:...) and treats a backslash inside brackets as a literal, so each is
 * rewritten with the same language: (?: -> (, [a-z\-\.] -> [a-z.-], \/ -> /.
 */
#include <stddef.h>

#include "assisted/assisted-models.h"
#include "step-model.h"

#define STRING(t) \
        { \
                .kind = MODEL_STRING, .go_type = (t) \
        }

static const ModelSchema string_schema = STRING("string");
static const ModelSchema optional_string_schema = STRING("string");
static const ModelSchema bool_schema = { .kind = MODEL_BOOL, .go_type = "bool" };
static const ModelSchema int64_schema = { .kind = MODEL_INT, .go_type = "int64" };
static const ModelSchema uuid_schema = { .kind = MODEL_STRING,
                                         .go_type = "strfmt.UUID",
                                         .format = MODEL_FORMAT_UUID };
static const ModelSchema mac_schema = { .kind = MODEL_STRING,
                                        .go_type = "strfmt.MAC",
                                        .format = MODEL_FORMAT_MAC };

/* connectivity-check-nic.ip_addresses items and logs_gather master_ips items */
#define IP_PATTERN_SWAGGER "^(?:(?:(?:[0-9]{1,3}\\.){3}[0-9]{1,3})|(?:(?:[0-9a-fA-F]*:[0-9a-fA-F]*){2,}))$"
#define IP_PATTERN_ERE "^((([0-9]{1,3}\\.){3}[0-9]{1,3})|(([0-9a-fA-F]*:[0-9a-fA-F]*){2,}))$"
static const ModelSchema ip_address_schema = {
        .kind = MODEL_STRING,
        .go_type = "string",
        .pattern = IP_PATTERN_ERE,
        .swagger_pattern = IP_PATTERN_SWAGGER,
};
static const ModelSchema ip_address_list_schema = { .kind = MODEL_ARRAY,
                                                    .go_type = "[]string",
                                                    .items = &ip_address_schema };

/* definitions/ip: the same, but empty allowed */
static const ModelSchema ip_schema = {
        .kind = MODEL_STRING,
        .go_type = "models.IP",
        .pattern = "^((([0-9]{1,3}\\.){3}[0-9]{1,3})|(([0-9a-fA-F]*:[0-9a-fA-F]*){2,}))?$",
        .swagger_pattern = "^(?:(?:(?:[0-9]{1,3}\\.){3}[0-9]{1,3})|(?:(?:[0-9a-fA-F]*:[0-9a-fA-F]*){2,}))?$",
};

/* ---- connectivity-check-params ------------------------------------------ */

static const ModelField connectivity_check_nic_fields[] = {
        { "name", &string_schema, false },
        { "mac", &mac_schema, false },
        { "ip_addresses", &ip_address_list_schema, false },
        {},
};
static const ModelSchema connectivity_check_nic = { .kind = MODEL_OBJECT,
                                                    .go_type = "ConnectivityCheckNic",
                                                    .fields = connectivity_check_nic_fields };
static const ModelSchema connectivity_check_nic_list = { .kind = MODEL_ARRAY,
                                                         .go_type = "[]*models.ConnectivityCheckNic",
                                                         .items = &connectivity_check_nic };
static const ModelField connectivity_check_host_fields[] = {
        { "host_id", &uuid_schema, false },
        { "nics", &connectivity_check_nic_list, false },
        {},
};
static const ModelSchema connectivity_check_host = { .kind = MODEL_OBJECT,
                                                     .go_type = "ConnectivityCheckHost",
                                                     .fields = connectivity_check_host_fields };
const ModelSchema model_connectivity_check_params = { .kind = MODEL_ARRAY,
                                                      .go_type = "models.ConnectivityCheckParams",
                                                      .items = &connectivity_check_host };

/* ---- free_addresses_request ------------------------------------------- */

/* The swagger alternation binds loosely ("...\/[0-9]" or "[1-2][0-9]" or
 * "3[0-2]?$"), so it accepts far more than CIDRs; kept as it is, since the
 * Go agent validates with it. */
static const ModelSchema free_addresses_item = {
        .kind = MODEL_STRING,
        .go_type = "string",
        .pattern = "^([0-9]{1,3}\\.){3}[0-9]{1,3}/[0-9]|[1-2][0-9]|3[0-2]?$",
        .swagger_pattern = "^([0-9]{1,3}\\.){3}[0-9]{1,3}\\/[0-9]|[1-2][0-9]|3[0-2]?$",
};
const ModelSchema model_free_addresses_request = { .kind = MODEL_ARRAY,
                                                   .go_type = "models.FreeAddressesRequest",
                                                   .items = &free_addresses_item };

/* ---- ntp_synchronization_request --------------------------------------- */

static const ModelField ntp_fields[] = {
        { "ntp_source", &string_schema, true },
        {},
};
const ModelSchema model_ntp_synchronization_request = { .kind = MODEL_OBJECT,
                                                        .go_type = "NtpSynchronizationRequest",
                                                        .fields = ntp_fields };

/* ---- disk_speed_check_request ------------------------------------------ */

static const ModelField disk_speed_fields[] = {
        { "path", &string_schema, true },
        {},
};
const ModelSchema model_disk_speed_check_request = { .kind = MODEL_OBJECT,
                                                     .go_type = "DiskSpeedCheckRequest",
                                                     .fields = disk_speed_fields };

/* ---- container_image_availability_request ------------------------------ */

static const ModelSchema image_name_schema = {
        .kind = MODEL_STRING,
        .go_type = "string",
        .pattern = "^(([a-zA-Z0-9.-]+)(:[0-9]+)?/)?[a-z0-9._/@-]+[?:a-zA-Z0-9_.-]+$",
        .swagger_pattern = "^(([a-zA-Z0-9\\-\\.]+)(:[0-9]+)?\\/)?[a-z0-9\\._\\-\\/@]+[?::a-zA-Z0-9_\\-.]+$",
};
static const ModelSchema image_list_schema = { .kind = MODEL_ARRAY,
                                               .go_type = "[]string",
                                               .items = &image_name_schema };
static const ModelField image_availability_fields[] = {
        { "images", &image_list_schema, true },
        { "timeout", &int64_schema, false },
        {},
};
const ModelSchema model_container_image_availability_request = { .kind = MODEL_OBJECT,
                                                                 .go_type =
                                                                         "ContainerImageAvailabilityRequest",
                                                                 .fields = image_availability_fields };

/* ---- domain_resolution_request ----------------------------------------- */

/* items are the x-go-type DomainResolutionRequestDomain; the step itself
 * reports a missing domain_name (with the Go agent's text) */
static const ModelField domain_fields[] = {
        { "domain_name", &optional_string_schema, false },
        {},
};
static const ModelSchema domain_schema = { .kind = MODEL_OBJECT,
                                           .go_type = "DomainResolutionRequestDomain",
                                           .fields = domain_fields };
static const ModelSchema domain_list_schema = { .kind = MODEL_ARRAY,
                                                .go_type = "[]*models.DomainResolutionRequestDomain",
                                                .items = &domain_schema };
static const ModelField domain_resolution_fields[] = {
        { "domains", &domain_list_schema, true },
        {},
};
const ModelSchema model_domain_resolution_request = { .kind = MODEL_OBJECT,
                                                      .go_type = "DomainResolutionRequest",
                                                      .fields = domain_resolution_fields };

/* ---- tang_connectivity_request ----------------------------------------- */

static const ModelField tang_fields[] = {
        { "tang_servers", &string_schema, true },
        {},
};
const ModelSchema model_tang_connectivity_request = { .kind = MODEL_OBJECT,
                                                      .go_type = "TangConnectivityRequest",
                                                      .fields = tang_fields };

/* ---- api_vip_connectivity_request -------------------------------------- */

static const ModelField header_fields[] = {
        { "key", &optional_string_schema, false },
        { "value", &optional_string_schema, false },
        {},
};
static const ModelSchema header_schema = { .kind = MODEL_OBJECT,
                                           .go_type = "APIVipConnectivityAdditionalRequestHeader",
                                           .fields = header_fields };
static const ModelSchema header_list_schema = {
        .kind = MODEL_ARRAY,
        .go_type = "[]*models.APIVipConnectivityAdditionalRequestHeader",
        .items = &header_schema
};
static const ModelField api_vip_fields[] = {
        { "url", &string_schema, true },
        { "verify_cidr", &bool_schema, false },
        { "ca_certificate", &optional_string_schema, false },
        { "ignition_endpoint_token", &optional_string_schema, false },
        { "request_headers", &header_list_schema, false },
        {},
};
const ModelSchema model_api_vip_connectivity_request = { .kind = MODEL_OBJECT,
                                                         .go_type = "APIVipConnectivityRequest",
                                                         .fields = api_vip_fields };

/* ---- dhcp_allocation_request ------------------------------------------- */

static const ModelField dhcp_fields[] = {
        { "interface", &string_schema, true },
        { "api_vip_mac", &mac_schema, true },
        { "ingress_vip_mac", &mac_schema, true },
        { "api_vip_lease", &optional_string_schema, false },
        { "ingress_vip_lease", &optional_string_schema, false },
        {},
};
const ModelSchema model_dhcp_allocation_request = { .kind = MODEL_OBJECT,
                                                    .go_type = "DhcpAllocationRequest",
                                                    .fields = dhcp_fields };

/* ---- verify_vips_request ----------------------------------------------- */

static const char *const vip_types[] = { "api", "ingress", NULL };
static const ModelSchema vip_type_schema = { .kind = MODEL_STRING,
                                             .go_type = "models.VipType",
                                             .enum_values = vip_types };
static const ModelField verify_vip_fields[] = {
        { "vip", &ip_schema, false },
        { "vip_type", &vip_type_schema, false },
        {},
};
static const ModelSchema verify_vip_schema = { .kind = MODEL_OBJECT,
                                               .go_type = "VerifyVip",
                                               .fields = verify_vip_fields };
const ModelSchema model_verify_vips_request = { .kind = MODEL_ARRAY,
                                                .go_type = "models.VerifyVipsRequest",
                                                .items = &verify_vip_schema };

/* ---- logs_gather_cmd_request ------------------------------------------- */

static const ModelSchema required_bool_schema = { .kind = MODEL_BOOL, .go_type = "bool" };
static const ModelField logs_gather_fields[] = {
        { "cluster_id", &uuid_schema, true },
        { "infra_env_id", &uuid_schema, true },
        { "host_id", &uuid_schema, true },
        { "bootstrap", &required_bool_schema, true },
        { "installer_gather", &required_bool_schema, true },
        { "master_ips", &ip_address_list_schema, false },
        {},
};
const ModelSchema model_logs_gather_cmd_request = { .kind = MODEL_OBJECT,
                                                    .go_type = "LogsGatherCmdRequest",
                                                    .fields = logs_gather_fields };

/* ---- upgrade_agent_request --------------------------------------------- */

static const ModelField upgrade_agent_fields[] = {
        { "agent_image", &optional_string_schema, false },
        {},
};
const ModelSchema model_upgrade_agent_request = { .kind = MODEL_OBJECT,
                                                  .go_type = "UpgradeAgentRequest",
                                                  .fields = upgrade_agent_fields };

/* ---- download_boot_artifacts_request, reboot_for_reclaim_request ------- */

static const ModelField download_boot_artifacts_fields[] = {
        { "kernel_url", &string_schema, true },
        { "rootfs_url", &string_schema, true },
        { "initrd_url", &string_schema, true },
        { "host_fs_mount_dir", &string_schema, true },
        {},
};
const ModelSchema model_download_boot_artifacts_request = { .kind = MODEL_OBJECT,
                                                            .go_type = "DownloadBootArtifactsRequest",
                                                            .fields = download_boot_artifacts_fields };

static const ModelField reboot_for_reclaim_fields[] = {
        { "host_fs_mount_dir", &string_schema, true },
        {},
};
const ModelSchema model_reboot_for_reclaim_request = { .kind = MODEL_OBJECT,
                                                       .go_type = "RebootForReclaimRequest",
                                                       .fields = reboot_for_reclaim_fields };

const ModelSchema *step_request_model(int step_type)
{
        switch ((StepType)step_type) {
        case STEP_CONNECTIVITY_CHECK:
                return &model_connectivity_check_params;
        case STEP_FREE_NETWORK_ADDRESSES:
                return &model_free_addresses_request;
        case STEP_NTP_SYNCHRONIZER:
                return &model_ntp_synchronization_request;
        case STEP_INSTALLATION_DISK_SPEED_CHECK:
                return &model_disk_speed_check_request;
        case STEP_CONTAINER_IMAGE_AVAILABILITY:
                return &model_container_image_availability_request;
        case STEP_DOMAIN_RESOLUTION:
                return &model_domain_resolution_request;
        case STEP_TANG_CONNECTIVITY_CHECK:
                return &model_tang_connectivity_request;
        case STEP_API_VIP_CONNECTIVITY_CHECK:
                return &model_api_vip_connectivity_request;
        case STEP_DHCP_LEASE_ALLOCATE:
                return &model_dhcp_allocation_request;
        case STEP_VERIFY_VIPS:
                return &model_verify_vips_request;
        case STEP_LOGS_GATHER:
                return &model_logs_gather_cmd_request;
        case STEP_UPGRADE_AGENT:
                return &model_upgrade_agent_request;
        case STEP_DOWNLOAD_BOOT_ARTIFACTS:
                return &model_download_boot_artifacts_request;
        case STEP_REBOOT_FOR_RECLAIM:
                return &model_reboot_for_reclaim_request;
        default:
                return NULL;
        }
}
