/* SPDX-License-Identifier: Apache-2.0 */
/*
 * When the controller's run is over (controller/ending.h): upstream's
 * waitForInstallation rules, one GET of the cluster at a time, the
 * refusals counted across checks.
 */
#include <errno.h>

#include "controller/ending.h"
#include "macro.h"
#include "tests.h"

TEST(one_check)
{
        static const struct {
                int r;
                long status;
                const char *cluster_status;
                InstallationState expect;
        } cases[] = {
                { 0, 200, "finalizing", INSTALLATION_GOES_ON },
                { 0, 200, "installing", INSTALLATION_GOES_ON },
                { 0, 200, "installed", INSTALLATION_OVER },
                { 0, 200, "cancelled", INSTALLATION_OVER },
                { 0, 200, "adding-hosts", INSTALLATION_OVER },
                { 0, 200, "error", INSTALLATION_FAILED },
                /* the cluster was deleted: at once */
                { -EREMOTEIO, 404, NULL, INSTALLATION_UNREACHABLE },
                /* the service restarting, or down: never counted */
                { -EREMOTEIO, 500, NULL, INSTALLATION_GOES_ON },
                { -EREMOTEIO, 503, NULL, INSTALLATION_GOES_ON },
                { -ECONNREFUSED, 0, NULL, INSTALLATION_GOES_ON },
                { -EREMOTEIO, 403, NULL, INSTALLATION_GOES_ON },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned refusals = 0;
                ASSERT_EQ(
                        installation_state(cases[i].r, cases[i].status, cases[i].cluster_status, &refusals),
                        cases[i].expect);
        }
}

TEST(refusals_in_a_row)
{
        unsigned refusals = 0;

        /* 401 twice, a success resets, then three in a row end it */
        ASSERT_EQ(installation_state(-EREMOTEIO, 401, NULL, &refusals), INSTALLATION_GOES_ON);
        ASSERT_EQ(installation_state(-EREMOTEIO, 401, NULL, &refusals), INSTALLATION_GOES_ON);
        ASSERT_EQ(refusals, 2u);
        ASSERT_EQ(installation_state(0, 200, "finalizing", &refusals), INSTALLATION_GOES_ON);
        ASSERT_EQ(refusals, 0u);
        ASSERT_EQ(installation_state(-EREMOTEIO, 401, NULL, &refusals), INSTALLATION_GOES_ON);
        /* other failures in between keep the count */
        ASSERT_EQ(installation_state(-ECONNRESET, 0, NULL, &refusals), INSTALLATION_GOES_ON);
        ASSERT_EQ(installation_state(-EREMOTEIO, 401, NULL, &refusals), INSTALLATION_GOES_ON);
        ASSERT_EQ(installation_state(-EREMOTEIO, 401, NULL, &refusals), INSTALLATION_UNREACHABLE);
        ASSERT_STREQ(installation_state_to_string(INSTALLATION_UNREACHABLE), "unreachable");
}

DEFINE_TEST_MAIN
