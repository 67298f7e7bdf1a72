/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * When the controller's work is over (waitForInstallation, notes/
 * controller.md §6): a pure function of one GET of the cluster. It runs as
 * a Job with restartPolicy OnFailure, so everything that ends the run ends
 * it with status 0; only set-up failures exit non-zero (the Job starts a new
 * pod).
 */

#include <stdbool.h>

typedef enum InstallationState {
        INSTALLATION_GOES_ON,
        INSTALLATION_OVER, /* installed, cancelled, or day 2 (adding-hosts): final log upload, exit 0 */
        INSTALLATION_FAILED, /* error: must-gather with the final log upload, exit 0 */
        INSTALLATION_UNREACHABLE, /* the cluster is gone or the token refused 3 times in a row: exit 0 now */
        _INSTALLATION_STATE_MAX,
        _INSTALLATION_STATE_INVALID = -22,
} InstallationState;

/* How many refusals in a row end the run (maximumErrorsBeforeExit). */
#define INSTALLATION_MAX_REFUSALS 3u

/*
 * One check: r and http_status are what the GET of the cluster returned
 * (lib/assisted: 0, or -EREMOTEIO with the status, or a transport errno),
 * cluster_status its "status" on success. *refusals counts in and out: a
 * 404 adds INSTALLATION_MAX_REFUSALS (the cluster was deleted), a 401 one,
 * a success resets it, any other failure leaves it (the service may be
 * restarting).
 */
InstallationState installation_state(int r, long http_status, const char *cluster_status,
                                     unsigned *refusals);

const char *installation_state_to_string(InstallationState s);
