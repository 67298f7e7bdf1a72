/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>

#include "controller/ending.h"
#include "macro.h"
#include "strutil.h"

static const char *const state_names[_INSTALLATION_STATE_MAX] = {
        [INSTALLATION_GOES_ON] = "goes on",
        [INSTALLATION_OVER] = "over",
        [INSTALLATION_FAILED] = "failed",
        [INSTALLATION_UNREACHABLE] = "unreachable",
};

const char *installation_state_to_string(InstallationState s)
{
        return s >= 0 && s < _INSTALLATION_STATE_MAX ? state_names[s] : NULL;
}

InstallationState installation_state(int r, long http_status, const char *cluster_status, unsigned *refusals)
{
        if (r < 0) {
                if (r == -EREMOTEIO && http_status == 404)
                        *refusals += INSTALLATION_MAX_REFUSALS;
                else if (r == -EREMOTEIO && http_status == 401)
                        *refusals += 1;
                return *refusals >= INSTALLATION_MAX_REFUSALS ? INSTALLATION_UNREACHABLE
                                                              : INSTALLATION_GOES_ON;
        }
        *refusals = 0;
        if (streq_ptr(cluster_status, "error"))
                return INSTALLATION_FAILED;
        if (streq_ptr(cluster_status, "installed") || streq_ptr(cluster_status, "cancelled") ||
            streq_ptr(cluster_status, "adding-hosts"))
                return INSTALLATION_OVER;
        return INSTALLATION_GOES_ON;
}
