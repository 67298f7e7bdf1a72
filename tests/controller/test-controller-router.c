/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The single node's router probe (controller/router.h): when it runs, the
 * URLs it asks, the status as Go's Response.Status prints it.
 */
#include <stdlib.h>

#include "cleanup.h"
#include "controller/router.h"
#include "tests.h"

TEST(only_a_failed_single_node)
{
        ASSERT_TRUE(router_probe_needed(true, 1));
        ASSERT_FALSE(router_probe_needed(false, 1));
        ASSERT_FALSE(router_probe_needed(true, 3));
        ASSERT_FALSE(router_probe_needed(true, 2));
        ASSERT_FALSE(router_probe_needed(false, 3));
}

TEST(urls)
{
        _cleanup_free_ char *canary = router_canary_url("sno", "example.com");
        _cleanup_free_ char *v4 = router_health_url("198.51.100.10");
        _cleanup_free_ char *none = router_health_url(NULL);
        _cleanup_free_ char *empty = router_health_url("");
        _cleanup_free_ char *v6 = router_health_url("fd00::10");

        ASSERT_STREQ(canary, "https://canary-openshift-ingress-canary.apps.sno.example.com/health");
        ASSERT_STREQ(v4, "http://198.51.100.10/_______internal_router_healthz");
        /* no outbound address: upstream's localhost */
        ASSERT_STREQ(none, "http://localhost/_______internal_router_healthz");
        ASSERT_STREQ(empty, "http://localhost/_______internal_router_healthz");
        ASSERT_STREQ(v6, "http://[fd00::10]/_______internal_router_healthz");
}

TEST(status_lines)
{
        static const struct {
                long status;
                const char *line;
        } cases[] = {
                { 200, "200 OK" },
                { 503, "503 Service Unavailable" },
                { 404, "404 Not Found" },
                { 299, "299 " },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *line = router_status_line(cases[i].status);
                ASSERT_STREQ(line, cases[i].line);
        }
}

DEFINE_TEST_MAIN
