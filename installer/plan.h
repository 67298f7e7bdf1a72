/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The installer's decisions, as pure functions of their inputs (no I/O):
 * which steps a role runs in which order, what each stage reports, when a
 * coreos-installer percentage is worth a progress call, when a service
 * call is retried, whether the worker may go on, how to reboot, which
 * efibootmgr command lines set the boot order. installer/run.c performs
 * them; tests/installer/test-installer-plan.c checks them with tables.
 *
 * Every returned string or list is allocated and owned by the caller.
 */

#include <stdbool.h>
#include <stddef.h>

#include "timeutil.h"

typedef struct json_object json_object;

/* ---- Flows ----------------------------------------------------------- */

typedef enum InstallFlow {
        INSTALL_FLOW_NODE, /* master, worker, arbiter: notes §3 */
        INSTALL_FLOW_BOOTSTRAP, /* role bootstrap, control plane count != 1: notes §4 */
        INSTALL_FLOW_SINGLE_NODE, /* control plane count 1: notes §4.9 */
        _INSTALL_FLOW_MAX,
        _INSTALL_FLOW_INVALID = -22,
} InstallFlow;

InstallFlow install_flow_for(const char *role, int control_plane_count);
const char *install_flow_to_string(InstallFlow f);

/* The steps, in the order the Go installer runs them (installer.go
 * RunInstaller, InstallNode). */
typedef enum InstallStep {
        STEP_FORMAT_DISKS, /* --format-disk: zero the first sector (best effort) */
        STEP_REPORT_STARTING, /* "Starting installation", info = role */
        STEP_RESOLVE_DEVICE, /* --boot-device symlinks resolved */
        STEP_CLEANUP_DEVICE, /* LVM, device-mapper, md, signatures (best effort) */
        STEP_MKDIR_INSTALL_DIR, /* /opt/install-dir (fatal) */
        STEP_START_BOOTSTRAP, /* bootstrap services (bootstrap issue) */
        STEP_REPORT_INSTALLING, /* "Installing", info = role (bootstrap renamed master) */
        STEP_FETCH_IGNITION, /* host ignition download (fatal) */
        STEP_SINGLE_NODE_IGNITION, /* master.ign from bootstrap-in-place (single-node issue) */
        STEP_WRITE_IMAGE, /* coreos-installer, 3 attempts (fatal) */
        STEP_WAIT_CONTROL_PLANE, /* worker: two masters Done */
        STEP_SKIP_MCO_REBOOT, /* --enable-skip-mco-reboot (best effort) */
        STEP_SET_BOOT_ORDER, /* UEFI boot entry (best effort) */
        STEP_COPY_REGISTRY, /* appliance registry data, masters (fatal) */
        STEP_BOOTSTRAP_WAITS, /* control plane, bootkube, controller (bootstrap issue) */
        STEP_UPLOAD_LOGS, /* logs-progress requested + upload (best effort) */
        STEP_FINALIZE, /* Rebooting + shutdown / ironic / dry-run marker (fatal) */
        _STEP_MAX,
        _STEP_INVALID = -22,
} InstallStep;

const char *install_step_to_string(InstallStep s);

typedef struct InstallPlanInput {
        const char *role;
        int control_plane_count;
        bool coreos_image; /* --coreos-image given: install onto the existing root */
        bool dry_run;
        bool skip_cleanup; /* --skip-installation-disk-cleanup */
        bool enable_skip_mco_reboot;
        bool upload_logs;
} InstallPlanInput;

/* The ordered steps for the input into steps[] (room for _STEP_MAX);
 * returns how many. Steps that the configuration turns off are left out
 * (cleanup in dry run, with --skip-installation-disk-cleanup or
 * --coreos-image; boot order, skip-MCO-reboot and registry copy with
 * --coreos-image, or in dry run, where they would change the host). */
size_t install_plan(const InstallPlanInput *in, InstallStep steps[static _STEP_MAX]);

/* Whether a step's failure ends the installation with "Failed". */
bool install_step_is_fatal(InstallStep s);

/* The role text a stage reports: "Starting installation" the role as
 * given; "Installing" the role after the bootstrap became a master (the
 * single-node bootstrap keeps its role). */
const char *install_reported_role(const char *role, int control_plane_count, bool installing);

/* The text of the cleanup failure report (triage signatures rely on it). */
char *install_cleanup_warning(const char *device);

/* ---- coreos-installer ------------------------------------------------ */

/* The exact argv: coreos-installer install --insecure -i IGN ARGS... DEVICE.
 * program is "coreos-installer" ("dry-installer" in dry run). */
char **coreos_installer_argv(const char *program, const char *ignition, char *const *installer_args,
                             const char *device);

/* The percentage in a line of coreos-installer's output, as the Go
 * installer's regular expression `(.*?)\((.*?\%)\)\s*` finds it:
 * "> Read disk 1.2 GiB/2.6 GiB (45%)" gives 45. -ENOENT without one. */
int coreos_progress_parse(const char *line, unsigned *ret_percent);

/* Whether percent is reported: at least 5 points above the last reported
 * value, or 100 when 100 was not reported yet. */
bool progress_should_report(unsigned last_reported, unsigned percent);

/* The percentage in a line of "rsync --info=progress2" output
 * ("  1,234,567  45%   12.34MB/s    0:00:01 (xfr#1, to-chk=0/2)"). */
int rsync_progress_parse(const char *line, unsigned *ret_percent);

/* ---- service calls --------------------------------------------------- */

/* The retry rule: AssistedRetryPolicy of lib/assisted/assisted.h
 * (ASSISTED_RETRY_INSTALLER). */

/* ---- worker wait ----------------------------------------------------- */

/* The worker goes on: the cluster is a day-2 "AddHostsCluster", or at
 * least two of the listed hosts (masters and arbiters) are at stage Done. */
bool worker_may_continue(const char *cluster_kind, unsigned done_hosts);
/* Hosts of a ListClusterHosts answer whose progress.current_stage is Done. */
unsigned hosts_done_count(json_object *hosts);

/* ---- reboot ---------------------------------------------------------- */

typedef enum RebootKind {
        REBOOT_FAKE, /* dry run: touch the marker */
        REBOOT_IRONIC, /* "Ironic will reboot the node shortly": stop agent.service */
        REBOOT_SHUTDOWN, /* shutdown -r +1 (single node: now) */
} RebootKind;

RebootKind reboot_kind(bool dry_run, bool ironic_agent_listed);
/* The progress_info of the Rebooting stage for the kind. */
const char *reboot_progress_info(RebootKind k);
/* shutdown -r +1 'Installation completed, server is going to reboot.'
 * (the quotes are part of the argument, as the Go installer passes it). */
char **reboot_argv(RebootKind k, int control_plane_count, const char *marker);

/* ---- boot order (UEFI) ----------------------------------------------- */

/* The EFI vendor directory from "ls -1 <mnt>/EFI": "redhat", else
 * "centos"; NULL when neither is there. */
const char *efi_vendor_pick(const char *ls_output);
/* \EFI\<vendor>\shimx64.efi, shimaa64.efi on aarch64. */
char *efi_loader_path(const char *vendor, const char *machine);
/* efibootmgr -v -d DEVICE -p 2 -c -L "Red Hat Enterprise Linux" -l LOADER */
char **efibootmgr_create_argv(const char *device, const char *loader);
/* For each "BootXXXX has same label Red Hat Enterprise Linux" line of the
 * create command's output: efibootmgr -v --delete-bootnum --bootnum XXXX
 * -l LOADER. A NULL-terminated list of argvs (NULL when none). */
char ***efibootmgr_delete_argvs(const char *create_output, const char *loader);
void argvs_free(char ***l);

/* ---- partitions -------------------------------------------------------- */

/* The device node of partition n: /dev/sda -> /dev/sda4, /dev/nvme0n1 ->
 * /dev/nvme0n1p4, /dev/loop0 -> /dev/loop0p4, /dev/mmcblk0 ->
 * /dev/mmcblk0p4 (a "p" when the name ends with a digit). */
char *partition_path(const char *device, unsigned n);
