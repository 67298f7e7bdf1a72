/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The install step (notes/agent.md §10): the request (InstallCmdRequest),
 * its validation, and the installer command line, as pure functions; the
 * handler in install.c runs it one of two ways:
 *
 *  - podman (the Go agent's way): "podman images --quiet IMAGE", up to 3 x
 *    "timeout 600 podman pull IMAGE" when it is missing (exit 2 "pulling
 *    the installer image ..." when that fails), then on the host
 *    sh -c "podman run --privileged --pid=host ... IMAGE --role ...";
 *  - in-process: cradle's own installer, from the agent's own executable,
 *    with the same installer arguments and no image pull.
 *
 * Which one: the agent's --install-mode (CRADLE_INSTALL_MODE): "podman",
 * "inprocess", or "auto" (the default): in-process when the step's
 * installer_image is the agent's own image (--agent-version, which the
 * service sets from its AGENT_DOCKER_IMAGE), i.e. when the service was
 * configured to use cradle's image as installer image too; podman
 * otherwise, so that an upstream installer image works unchanged.
 */

#include <stdbool.h>
#include <stdint.h>

typedef struct AgentConfig AgentConfig;

typedef struct InstallRequest {
        char *boot_device;
        bool check_cvo;
        char *cluster_id;
        int64_t control_plane_count;
        char *controller_image;
        char *coreos_image;
        char **disks_to_format;
        bool enable_skip_mco_reboot;
        char *high_availability_mode; /* the 2023 service's (Full/None) instead of control_plane_count */
        char *host_id;
        char *infra_env_id;
        char *installer_args; /* a JSON array, as a string */
        char *installer_image;
        char *mco_image;
        char *must_gather_image;
        bool notify_num_reboots;
        char *openshift_version;
        char *http_proxy; /* proxy.http_proxy ... */
        char *https_proxy;
        char *no_proxy;
        bool has_proxy;
        char *role;
        char **service_ips;
        bool skip_installation_disk_cleanup;
} InstallRequest;

void install_request_done(InstallRequest *r);

/* json.Unmarshal + the model's swagger validation + the Go agent's
 * Validate() (must-gather image, proxy formats, installer args, OpenShift
 * version), except the disks' existence. -EINVAL with the Go agent's error
 * text in *reterr. */
int install_request_parse(const char *json, InstallRequest *ret, char **reterr);

/* boot_device and disks_to_format start with /dev/ and exist. */
int install_request_check_disks(const InstallRequest *r, char **reterr);

/* The installer's arguments (after the image in the podman command). copy_network
 * adds --copy-network to the installer args (the agent-based installer's TUI case). */
char **install_installer_argv(const InstallRequest *r, const AgentConfig *c, bool copy_network);

/* The whole shell command: podman run ... IMAGE ARGS..., quoted. */
char *install_podman_command(const InstallRequest *r, const AgentConfig *c, bool copy_network);

typedef enum InstallMode {
        INSTALL_MODE_AUTO,
        INSTALL_MODE_PODMAN,
        INSTALL_MODE_INPROCESS,
        _INSTALL_MODE_MAX,
        _INSTALL_MODE_INVALID = -22,
} InstallMode;

InstallMode install_mode_from_string(const char *s);
const char *install_mode_to_string(InstallMode m);
/* auto -> in-process when installer_image is the agent's own image. */
InstallMode install_mode_decide(InstallMode configured, const char *installer_image,
                                const char *agent_image);

/* Go's json.Marshal of a string list (compact; <, > and & escaped as
 * \u003c \u003e \u0026). Allocated. */
char *go_json_marshal_strv(char *const *l);

/* hashicorp/go-version's NewVersion acceptance. */
bool go_version_valid(const char *s);
