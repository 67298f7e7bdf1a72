/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reboots notifier (controller/reboots.h): upstream's oc command line,
 * the count of `last reboot` lines, and the reboots_for_node event byte for
 * byte (notes/controller.md §4 #13, §5.8).
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/reboots.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

TEST(count)
{
        /* what `last reboot` prints on a node rebooted twice */
        ASSERT_EQ(reboots_count("reboot   system boot  5.14.0-284.el9 Thu Nov 27 10:02   still running\n"
                                "reboot   system boot  5.14.0-284.el9 Thu Nov 27 09:41 - 10:01  (00:20)\n"
                                "\n"
                                "wtmp begins Thu Nov 27 09:41:07 2026\n"),
                  2u);
        ASSERT_EQ(reboots_count("reboot x"), 1u);
        /* "reboot" alone, or not at the start of a line, is no reboot */
        ASSERT_EQ(reboots_count("reboot\n rebooted \nsystem reboot \nrebooting now\n"), 0u);
        ASSERT_EQ(reboots_count(""), 0u);
        ASSERT_EQ(reboots_count(NULL), 0u);
}

TEST(argv)
{
        _cleanup_strv_free_ char **argv = reboots_argv("/tmp/kubedir.x/kubeconfig-noingress", "master-0");
        _cleanup_free_ char *line = strv_join(argv, " ");

        ASSERT_STREQ(line,
                     "oc --kubeconfig /tmp/kubedir.x/kubeconfig-noingress debug node/master-0 -- chroot "
                     "/host last reboot");
}

TEST(event)
{
        /* 2026-11-27T19:41:07.123456Z */
        usec_t now = (usec_t)1795808467 * USEC_PER_SEC + 123456;
        _cleanup_(json_object_putp) json_object *ev =
                reboots_event("11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222",
                              "33333333-3333-3333-3333-333333333333", "master-0", 3, now);
        _cleanup_(json_object_putp) json_object *bare = reboots_event(NULL, "h", NULL, "w", 1, 0);

        ASSERT_STREQ(
                json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN),
                "{\"category\":\"user\",\"cluster_id\":\"11111111-1111-1111-1111-111111111111\","
                "\"event_time\":\"2026-11-27T19:41:07.123Z\","
                "\"host_id\":\"22222222-2222-2222-2222-222222222222\","
                "\"infra_env_id\":\"33333333-3333-3333-3333-333333333333\","
                "\"message\":\"Node master-0 has been rebooted 3 times before completing installation\","
                "\"name\":\"reboots_for_node\",\"severity\":\"info\"}");
        ASSERT_STREQ(json_object_to_json_string_ext(bare, JSON_C_TO_STRING_PLAIN),
                     "{\"category\":\"user\",\"event_time\":\"1970-01-01T00:00:00.000Z\",\"host_id\":\"h\","
                     "\"message\":\"Node w has been rebooted 1 times before completing installation\","
                     "\"name\":\"reboots_for_node\",\"severity\":\"info\"}");
}

DEFINE_TEST_MAIN
