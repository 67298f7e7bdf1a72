/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * cradle controller: a drop-in for the program of the upstream
 * assisted-installer-controller image (notes/controller.md), the Job the
 * bootstrap's manifests start in the new cluster. It takes upstream's
 * configuration (controller/config.h), says it is ready with the Event the
 * bootstrap waits for, then reports the hosts Joined, Done and Configuring
 * as their Nodes join (controller/nodes.h), approves their kubelets'
 * certificate requests (controller/csr.h) and watches the cluster until the
 * installation is over (controller/ending.h). Decisions are pure functions
 * in those modules; controller/run.c does the I/O around them, one task
 * at a time.
 *
 * Exit status (it runs as a Job with restartPolicy OnFailure): 0 when the
 * installation is over, the cluster is gone or the service refuses the
 * token 3 times in a row; 1 for a set-up failure (the Job starts a new
 * pod: the token file unreadable, no Kubernetes client, no
 * proxies/cluster, no service client, neither reachable in time) or a
 * stop by signal; 2 for a usage error.
 */

typedef struct ControllerConfig ControllerConfig;

/* The whole run with a parsed configuration; logging must be set up.
 * Returns the exit status. */
int controller_run(const ControllerConfig *c);

/* The verb ("cradle controller", or the upstream program name
 * assisted-installer-controller): parses, sets up logging (stdout and the
 * text log file, as upstream), runs. */
int controller_main(int argc, char **argv);
