/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The installer's command line: every flag of the Go installer
 * (notes/installer.md §1.1) with its name, default and Go flag syntax, the
 * DRY_* environment defaults, PULL_SECRET_TOKEN from the environment, and
 * cradle's own options (which the service never sends; they shorten waits
 * in tests and say where files go).
 *
 * Differences from the Go installer, on purpose:
 *  - invalid --installer-args JSON is a usage error (exit 2) with a clear
 *    message, where the Go installer printed the usage and exited 0;
 *  - a positional argument is a usage error: with Go's flag package a
 *    stray word (e.g. "--insecure true") silently ends flag parsing and
 *    drops every flag after it;
 *  - both generations of the control-plane flag are accepted: the current
 *    --control-plane-count, and --high-availability-mode (Full/None) of the
 *    installers before 2025-03, which the agents of those services send:
 *    None means one control-plane node, Full leaves the count as given.
 *    Another value, or a count that contradicts the mode, is a usage error.
 */

#include <stdbool.h>

#include "hostexec.h"
#include "installer/bootstrap-apply.h"
#include "timeutil.h"

typedef struct InstallerConfig {
        /* the Go flags */
        char *role;
        char *cluster_id;
        char *infra_env_id; /* defaults to cluster_id */
        char *host_id;
        char *boot_device;
        char *url;
        char *openshift_version;
        char *mco_image;
        bool verbose;
        char *controller_image;
        char *agent_image;
        bool insecure;
        char *cacert;
        char *http_proxy;
        char *https_proxy;
        char *no_proxy;
        char *service_ips;
        int control_plane_count; /* forced to 0 for workers */
        char *high_availability_mode; /* the installers before 2025: "None" => control_plane_count 1 */
        bool check_cluster_version;
        char *must_gather_image;
        char **format_disks;
        bool skip_installation_disk_cleanup;
        bool enable_skip_mco_reboot;
        bool notify_num_reboots;
        char *coreos_image;
        char *installer_args_json;
        char **installer_args; /* parsed --installer-args */
        bool dry_run;
        char *force_id;
        char *fake_reboot_marker_path;
        char *dry_run_cluster_hosts_path;

        /* cradle's */
        HostExecMode host_exec;
        char *install_dir; /* /opt/install-dir */
        char *log_file; /* /var/log/assisted-installer.log ("" none) */
        char *logs_dir; /* /var/log: where the logs sender works */
        char *journal_dir; /* /var/log/journal */
        char *mount_dir; /* /mnt */
        char *registry_dir; /* /run/media/iso/registry */
        char *efi_dir; /* /sys/firmware/efi */
        usec_t retry_delay; /* service calls: base of the jittered back-off (2 s) */
        usec_t retry_max_delay; /* and its cap (10 s) */
        usec_t poll_interval; /* every wait upstream checks each 5 s */
        usec_t slow_poll_interval; /* Configuring reporting, the ABI workers (30 s) */
        usec_t controller_logs_interval; /* controller log uploads while waiting for it (5 min) */
        BootstrapApply bootstrap_apply; /* how bootstrap.ign is laid onto the live root */
        char *host_root; /* where the host's files are seen ("": / or /proc/1/root) */
        usec_t write_retry_delay; /* between coreos-installer attempts (1 s) */
        usec_t command_retry_delay; /* mount, growpart, ... attempts (5 s) */
        usec_t mc_fetch_timeout; /* --enable-skip-mco-reboot's machine config fetch (20 min) */
        bool upload_logs; /* --upload-logs=false skips the log upload */
        char *log_level;

        /* from the environment */
        char *token; /* PULL_SECRET_TOKEN */
} InstallerConfig;

/* Parses argv as the Go installer would. Returns 1 to run, 0 when --help
 * was printed (exit 0), or -EINVAL after printing the problem (exit 2). */
int installer_config_parse(int argc, char **argv, InstallerConfig *ret);
void installer_config_done(InstallerConfig *c);

/* The configuration as the Go installer logs it at start ("Assisted
 * installer started. Configuration is: ..."), secrets left out. Allocated. */
char *installer_config_describe(const InstallerConfig *c);

/* --installer-args: a JSON array of strings. -EINVAL with *reterr set. */
int installer_args_parse(const char *json, char ***ret, char **reterr);
