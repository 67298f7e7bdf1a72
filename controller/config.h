/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The controller's configuration (notes/controller.md §2): upstream's
 * ControllerConfig, read from the environment the Job gives it (the
 * bootstrap's ConfigMap and Secret, installer/controller-manifests.c) with
 * envconfig's names and precedence — MYAPP_CONTROLLERCONFIG_<NAME> first,
 * then <NAME> — and defaults; every variable is also a flag of the same
 * name in lower case ("--cluster-id"), and cradle's own options (intervals,
 * kubeconfig, log) follow them. The pull-secret token comes from
 * CONTROLLER_TOKEN_FILE, else $PULL_SECRET_TOKEN, never from a flag.
 *
 * Parsing is a pure function of argv, the environment and the token file.
 */

#include <stdbool.h>

#include "timeutil.h"

typedef struct ControllerConfig {
        /* upstream's */
        char *cluster_id; /* CLUSTER_ID, required */
        char *inventory_url; /* INVENTORY_URL, required */
        char *openshift_version; /* OPENSHIFT_VERSION, required */
        bool skip_cert_verification; /* SKIP_CERT_VERIFICATION */
        char *ca_cert_path; /* CA_CERT_PATH */
        char *namespace; /* NAMESPACE: "assisted-installer" */
        int control_plane_count; /* CONTROL_PLANE_COUNT: 3 */
        bool check_cluster_version; /* CHECK_CLUSTER_VERSION */
        char *must_gather_image; /* MUST_GATHER_IMAGE */
        bool notify_num_reboots; /* NOTIFY_NUM_REBOOTS */
        bool dry_run; /* DRY_ENABLE */
        char *dry_fake_reboot_marker_path; /* DRY_FAKE_REBOOT_MARKER_PATH: dry run starts once it exists */
        char *dry_cluster_hosts_path; /* DRY_CLUSTER_HOSTS_PATH: the hosts that play the Nodes */
        char *token; /* the token file or PULL_SECRET_TOKEN; a registered secret */

        /* cradle's own */
        char *kubeconfig; /* --kubeconfig, $KUBECONFIG: else the SNO file, else in-cluster */
        char *token_file; /* CONTROLLER_TOKEN_FILE; tests point elsewhere */
        char *log_file; /* CONTROLLER_LOG_FILE, "" for none */
        char *log_level;
        usec_t ready_interval; /* SetReadyState: 1 s */
        usec_t ready_timeout; /* 70 min */
        usec_t agent_ready_timeout; /* the agent-based installer's: 5 min, then on without the service */
        usec_t poll_interval; /* nodes, CSRs, waiting for finalizing, stage reports: 30 s */
        usec_t slow_poll_interval; /* operators, complete-installation, end of the installation: 60 s */
        usec_t fetch_interval; /* the ingress CA: 10 s */
        usec_t operators_timeout; /* the cluster operators: 10 h */
        usec_t logs_interval; /* the log upload while the installation goes on: 5 min */
        usec_t logs_timeout; /* the last upload (with must-gather after a failure): 70 min */
        char *must_gather_dir; /* where oc adm must-gather runs: /tmp/must-gather-logs */
        usec_t dns_interval; /* the DNS address hack's lookups: 20 s */
        usec_t deletion_interval; /* its deletion tries: 10 s */
        usec_t reboots_interval; /* the reboots notifier's oc debug tries: 15 s */
        usec_t retry_delay; /* service calls: 2 s base */
        usec_t retry_max_delay; /* 10 s */
} ControllerConfig;

void controller_config_done(ControllerConfig *c);

/* Parses argv and the environment. Returns 1 to go on, 0 when the usage
 * was printed on request (exit 0), -EINVAL after printing the error (exit
 * 2), or another negative errno after printing it (a token file that
 * exists but cannot be read: exit 1, as upstream). */
int controller_config_parse(int argc, char **argv, ControllerConfig *ret);

/* upstream's parsePullSecretToken: the file's content, else (the file does
 * not exist) the variable's, whitespace-trimmed; NULL when neither is set.
 * Any other error reading the file is returned. */
int controller_token_read(const char *path, const char *env_value, char **ret);

/* One line for the log, the token redacted. */
char *controller_config_describe(const ControllerConfig *c);
