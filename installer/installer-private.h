/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The state of one installation, shared by the flow (installer/run.c) and
 * the bootstrap's parts (installer/bootstrap.c: startBootstrap;
 * installer/bootstrap-waits.c: the waits and the Configuring reporting;
 * installer/single-node.c: master.ign). Not a public interface: only the
 * installer's own files include it.
 */

#include <stdbool.h>

#include "installer/bootstrap-plan.h"
#include "installer/service.h"

typedef struct InstallerConfig InstallerConfig;
typedef struct HostExec HostExec;
typedef struct AssistedClient AssistedClient;
typedef struct IgnConfig IgnConfig;
typedef struct ClusterView ClusterView;
typedef struct Configuring Configuring;

typedef struct Installer {
        const InstallerConfig *cfg;
        HostExec *host;
        AssistedClient *client;
        Service svc;
        char *device; /* --boot-device, resolved */
        char *role; /* the current role (the bootstrap becomes a master) */
        char *ignition_path; /* what coreos-installer writes (-i) */
        char **cmd_env; /* proxy variables for the commands we run */
        /* percentage reporting of the running command */
        const char *percent_stage;
        unsigned last_percent;
        int (*parse_percent)(const char *line, unsigned *ret);
        bool reported_starting; /* every flow's first stage, also one that fails before it */

        /* the host's files: cradle reads and writes them under host_root;
         * commands run on the host get host paths, unless host_root is a
         * directory a test made (then they get host_root + path too) */
        char *host_root;
        bool host_root_is_directory;

        /* the bootstrap */
        char *bootstrap_ign; /* downloaded bootstrap.ign (our view) */
        IgnConfig *bootstrap_config;
        EtcdBootstrap etcd;
        bool etcd_override_set; /* on in the cluster: undo before leaving */
        ClusterView *view;
        char *platform; /* the cluster's platform type */
        bool vsphere_credentials;
        Configuring *configuring;
} Installer;

/* Runs argv on the host, output merged and logged line by line when
 * stream. On failure *reterr is the Go installer's error text (command,
 * exit status, tail of the output). ret_out gets the output (may be NULL). */
int installer_host_run(Installer *in, char *const *argv, bool stream, char **ret_out, char **reterr);
/* The same, the command's exit status and output given back whatever they
 * are (systemctl is-active answers 3 with "inactive"). */
int installer_host_run_status(Installer *in, char *const *argv, int *ret_status, char **ret_out);
/* utils.Retry: up to attempts runs, delay apart; the error names them. */
int installer_host_run_retry(Installer *in, char *const *argv, unsigned attempts, usec_t delay, bool stream,
                             char **reterr);

/* A host path (absolute) as cradle opens it: under host_root. */
char *installer_host_file(const Installer *in, const char *path);
/* A host path as a command run on the host takes it. */
char *installer_host_arg(const Installer *in, const char *path);
/* Our own path (e.g. under the install dir) as a command on the host takes
 * it: inside a test's host root, the part below it. */
const char *installer_host_view(const Installer *in, const char *path);

/* startBootstrap (notes §4.1): the steps of start_bootstrap_plan(). */
int bootstrap_start(Installer *in, bool single_node, char **reterr);
/* waitForBootkube: "Waiting for bootkube" and /opt/openshift/.bootkube.done. */
int bootstrap_wait_bootkube(Installer *in, char **reterr);
/* The waits of bootstrap_waits_plan() (STEP_BOOTSTRAP_WAITS). */
int bootstrap_waits(Installer *in, char **reterr);
/* The Configuring reporting for the other hosts, in a thread of its own
 * from the end of startBootstrap until the installer returns. */
int configuring_start(Installer *in);
void configuring_stop(Installer *in);
/* On a failure after the etcd override went on: one attempt to undo it. */
void bootstrap_cleanup(Installer *in);
void bootstrap_done(Installer *in);

/* STEP_SINGLE_NODE_IGNITION: startBootstrap, bootkube, master.ign merged
 * with this host's config; in->ignition_path is master.ign then. */
int single_node_ignition(Installer *in, char **reterr);
