/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The logs sender: collects a host's logs into
 * <logs_dir>/logs_host_<host_id>/, packs them into <logs_dir>/logs.tar.gz
 * and uploads that to assisted-service (notes/agent.md §11), reporting
 * logs-progress "requested", "collecting" and "completed" on the way.
 *
 * In-process, unlike the Go agent (which runs the logs_sender binary in a
 * container): the agent's logs-gather step, the installer before its
 * reboot and the "logs_sender" verb all call logs_sender_run().
 *
 * What is collected, each best effort (a failure goes into the report and
 * into report.logs, and the rest carries on):
 *  - mount.logs: lsblk, findmnt --df, ls -l /dev/disk/by-id and by-path,
 *    pvdisplay, vgdisplay, lvdisplay, run on the host (through the HostExec
 *    given), output as the Go agent writes it;
 *  - agent.logs, installer.logs: the journal entries with TAG=agent /
 *    TAG=installer, read with sd-journal (logs/journal-text.h) in
 *    journalctl's short format;
 *  - ironic-agent.logs when systemctl lists ironic-agent.service, and
 *    bootkube.logs on the bootstrap: the units' journal;
 *  - with installer_gather: dmesg.logs (read from /dev/kmsg, formatted as
 *    "dmesg -T"), coredumps (coredumpctl on the host), journal.logs (the
 *    whole journal since `since`) and, on the bootstrap, the archive of
 *    the host's installer-gather.sh (after ovs-installer-gather.sh).
 *
 * Layering: uses lib/ only; logs at info (it is an applet's body, shared).
 */

#include <stdbool.h>

#include "http.h"

typedef struct HostExec HostExec;

typedef struct LogsSenderOptions {
        /* the service (required: url, cluster_id, host_id) */
        const char *url;
        const char *cluster_id;
        const char *host_id;
        const char *infra_env_id;
        const char *token; /* sent as X-Secret-Key; NULL or "": none */
        const char *cacert; /* PEM file added to the system trust */
        bool insecure;
        const char *agent_version; /* Discovery_agent_version header; may be NULL */
        const HttpRetryPolicy *retry; /* NULL: the Go agent's transport (HTTP_RETRY_GO_AGENT) */

        /* what to collect */
        const char *since; /* journalctl --since syntax; NULL: "5 hours ago" */
        bool bootstrap;
        bool installer_gather; /* -with-installer-gather-logging */
        const char *masters_ips; /* comma-separated, for installer-gather.sh */
        bool dont_clean; /* keep the directory and the archive */

        /* where */
        HostExec *host; /* host commands; NULL: run them directly */
        const char *logs_dir; /* NULL: /var/log */
        const char *journal_dir; /* NULL: /var/log/journal (the local journal when it is missing) */
} LogsSenderOptions;

/* Collects, archives and uploads. Returns 0 when the archive was uploaded,
 * a negative errno otherwise. *ret_report (may be NULL) receives the
 * collection failures, one per line ("" when none), also on failure. The
 * upload error text, if any, is appended to it. */
int logs_sender_run(const LogsSenderOptions *o, char **ret_report);

/* The "logs_sender" verb: the Go program's command line (notes/agent.md
 * §1.1). Exit 0 with "Logs were sent" and the report on stdout, 255 on
 * failure, 2 for usage errors. */
int logs_sender_main(int argc, char **argv);
