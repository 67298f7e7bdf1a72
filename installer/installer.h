/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * cradle installer: a drop-in for the assisted-installer "installer" image's
 * program (notes/installer.md). It takes the Go installer's command line
 * (installer/config.h), runs the role's steps (installer/plan.h) and
 * reports every stage to assisted-service.
 *
 * Exit status: 0 installed (the reboot is scheduled), 1 the installation
 * failed ("Failed" was reported with the error), 2 usage error.
 */

typedef struct InstallerConfig InstallerConfig;
typedef struct HostExec HostExec;

/* The whole installation with a parsed configuration, host commands
 * through host (direct or entering PID 1's namespaces). Logging must be
 * set up. Returns the exit status (0 or 1). */
int installer_run(const InstallerConfig *c, HostExec *host);

/* The verb ("installer", "cradle installer"): parses, sets up logging
 * (journald TAG=installer with STAGE=, HOST_ID=, ROLE=; the text log;
 * stages on stderr), runs. */
int installer_main(int argc, char **argv);
