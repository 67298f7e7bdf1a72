/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Operations on the OS image of the new root: --enable-skip-mco-reboot,
 * the appliance's registry copy, and --coreos-image (installing onto the
 * root the host booted from).
 *
 * --enable-skip-mco-reboot (notes/installer.md §3.6 a): after the image is
 * written, deploy the OS image the cluster's rendered MachineConfig names
 * onto the new root, so that the Machine Config Operator does not need a
 * reboot to pivot. Best effort: every failure is a warning.
 *
 *  1. the written Ignition config is a pointer config: its
 *     ignition.config.merge[0].source is the machine config server's URL
 *     (or a data: URL holding the config), trusted with
 *     ignition.security.tls.certificateAuthorities[0] (read with the
 *     ignition/ module);
 *  2. that config is fetched (Accept: application/vnd.coreos.ignition+json;
 *     version=3.4.0), retried until a timeout, and the file
 *     /etc/ignition-machine-config-encapsulated.json read out of it: the
 *     MachineConfig, whose spec.osImageURL and spec.kernelArguments count;
 *  3. the overwrite commands (pure plan below) run on the host.
 */

#include <stdbool.h>
#include <stddef.h>

#include "timeutil.h"

typedef struct HostExec HostExec;

typedef struct MachineConfigInfo {
        char *os_image_url;
        char **kernel_arguments;
} MachineConfigInfo;

void machine_config_info_done(MachineConfigInfo *m);

/* From a pointer Ignition config: the merge source and the CA bundle (PEM,
 * decoded from its data URL; NULL when none). -ENOENT when the config
 * merges nothing. */
int skipmco_pointer_source(const char *ignition, size_t len, char **ret_source, char **ret_ca_pem,
                           char **reterr);

/* From the machine config server's Ignition config: the encapsulated
 * MachineConfig's osImageURL and kernel arguments. */
int skipmco_parse_mcs_config(const char *data, size_t len, MachineConfigInfo *ret, char **reterr);

/* The machine config behind the pointer config at ignition_path: data:
 * URLs decoded (gunzipped when compressed), https fetched with the CA. */
int skipmco_fetch(const char *ignition, size_t len, MachineConfigInfo *ret, char **reterr);

/* ignition.platform.id from a kernel command line; "metal" when absent. */
char *cmdline_platform_id(const char *cmdline);

/* The --append-karg values of the installer arguments. */
char **installer_args_append_kargs(char *const *installer_args);

typedef struct OverwritePlanInput {
        const char *device;
        const char *os_image_url;
        char *const *kargs; /* installer-args --append-karg values, then the MachineConfig's */
        const char *platform_id;
        const char *mount_dir; /* /mnt */
        const char *machine; /* uname -m; s390x: nothing to do */
} OverwritePlanInput;

/* The commands of OverwriteOsImage, in order: mount root and boot, grow the
 * root partition and filesystem, setenforce 0, ostree container image
 * deploy, then freeze/thaw and unmount boot and root. NULL list (and 0)
 * on s390x. */
int overwrite_os_image_plan(const OverwritePlanInput *in, char ****ret);

/* The appliance's registry copy (§3.6 c) onto the new root: grow and mount
 * the root partition, rsync the registry data into
 * ostree/deploy/rhcos/var/lib/iri-registry/, unmount. */
int registry_copy_plan(const char *device, const char *mount_dir, const char *registry_dir, char ****ret);

typedef struct ExistingRootPlanInput {
        const char *coreos_image; /* --coreos-image */
        const char *ignition; /* the downloaded config */
        char *const *installer_args; /* --append-karg/--delete-karg/--copy-network|-n are honoured */
        bool has_node_image_ref; /* "ostree refs" lists coreos/node-image */
} ExistingRootPlanInput;

/* WriteImageToExistingRoot (notes §3.4): remount /sysroot and /boot
 * read-write, drop the coreos/node-image ref, a new "install" stateroot
 * with the image deployed (staged, then finalized), the kernel arguments,
 * the NetworkManager keyfiles for the first boot with --copy-network, and
 * the Ignition config as /boot/ignition/config.ign with the
 * ignition.firstboot stamp. */
int existing_root_plan(const ExistingRootPlanInput *in, char ****ret);
