/* SPDX-License-Identifier: Apache-2.0 */
/* stop-installation: stops the installer container if it runs. */
#include "agent/steps.h"

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        char *argv[] = { (char *)"podman",
                         (char *)"stop",
                         (char *)"-i",
                         (char *)"-t",
                         (char *)"5",
                         (char *)"assisted-installer",
                         NULL };

        (void)args;
        return step_host_command(ctx, argv, 0, ret);
}

const StepHandler step_stop_installation = {
        .type = STEP_STOP_INSTALLATION,
        .min_args = 0,
        .max_args = 0,
        .run = run,
};
