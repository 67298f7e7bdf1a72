/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The controller's logs for the service (UploadLogs, notes/controller.md
 * §5.7): what controller_logs.tar.gz holds, when must-gather runs and with
 * which command line, as pure functions; controller/task-logs.c does the
 * I/O (the pod's log, oc, the upload).
 *
 * The archive: "assisted-installer-controller.logs" (the controller pod's
 * log, else the text log file, else a line saying why neither could be
 * read), and after a failure what was gathered from the cluster:
 * "must-gather.tar.gz" when oc ran it, or, without oc, cradle's own
 * reading of the cluster as JSON files under "cluster/" with a README that
 * says so.
 */

#include <stdbool.h>
#include <stddef.h>

/* the member oc's must-gather directory becomes, as upstream */
#define MUST_GATHER_ARCHIVE "must-gather.tar.gz"
/* the members of cradle's own gathering, without oc */
#define CLUSTER_GATHER_DIR "cluster"
#define CLUSTER_GATHER_README CLUSTER_GATHER_DIR "/README"

/* uploadSummaryLogs: must-gather when the cluster ended in error or an OLM
 * operator was marked failed. */
bool logs_gather_needed(bool cluster_failed, char *const *failed_operators);

/* parseMustGatherImages: MUST_GATHER_IMAGE empty: none (the release's
 * image); not a JSON object: the string itself; a JSON object of strings:
 * its "ocp" image when the cluster failed, then the image of each failed
 * operator that has one (empty values left out). *ret is a strv (maybe
 * empty). -ENOMEM only. */
int must_gather_images(const char *config, bool cluster_failed, char *const *failed_operators, char ***ret);

/* oc --kubeconfig=<kubeconfig> adm must-gather [--image=<image>]... (upstream
 * runs the same through bash -c "cd <dir> && ..."); NULL on -ENOMEM. */
char **must_gather_argv(const char *kubeconfig, char *const *images);

/* The log member's text when neither the pod's log nor the file could be
 * read: both reasons, one line. */
char *controller_log_unavailable(const char *pod_error, const char *file_error);

/* What cradle reads itself when oc is not there: the member (under
 * CLUSTER_GATHER_DIR) and what it lists. */
typedef struct ClusterGatherItem {
        const char *member; /* "cluster/nodes.json" */
        const char *what; /* "the Nodes", for the README */
        enum {
                CLUSTER_GATHER_NODES,
                CLUSTER_GATHER_CLUSTER_OPERATORS,
                CLUSTER_GATHER_EVENTS,
        } kind;
} ClusterGatherItem;
#define CLUSTER_GATHER_N_ITEMS 3
extern const ClusterGatherItem cluster_gather_items[CLUSTER_GATHER_N_ITEMS];

/* The README beside them: why there is no must-gather, what each file is,
 * and for each item that could not be read (errors[i] non-NULL; errors
 * has CLUSTER_GATHER_N_ITEMS entries or is NULL) why it is missing. */
char *cluster_gather_readme(const char *why_no_oc, char *const *errors);

/* One member of the archive: data in memory, or the file at path. */
typedef struct LogsMember {
        const char *name;
        const char *data;
        size_t len;
        const char *path; /* when set, the file instead of data */
} LogsMember;

/* controller_logs.tar.gz into fd (not closed): the members in order, each
 * mode 0644 (as upstream's), mtime now (a file's: its own). */
int logs_archive_write(int fd, const LogsMember *members, size_t n);
