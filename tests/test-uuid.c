/* SPDX-License-Identifier: Apache-2.0 */
#include "uuid.h"
#include "tests.h"

TEST(md5_host_id_matches_go_agent)
{
        char id[UUID_STRING_MAX];

        /* notes/agent.md 4.1: observed on the Go agent */
        ASSERT_OK(uuid_from_md5("02:fc:00:00:00:01", 17, id));
        ASSERT_STREQ(id, "b1f5c5b7-caf8-66bd-addd-439b331f2640");
}

TEST(random_is_v4_and_valid)
{
        char a[UUID_STRING_MAX], b[UUID_STRING_MAX];

        uuid_random(a);
        uuid_random(b);
        ASSERT_TRUE(uuid_is_valid(a));
        ASSERT_EQ(a[14], '4');
        ASSERT_TRUE(strcmp(a, b) != 0);
}

TEST(validity)
{
        ASSERT_TRUE(uuid_is_valid("DEADDEAD-dead-dead-dead-deaddeaddead"));
        ASSERT_FALSE(uuid_is_valid("deaddead-dead-dead-dead-deaddeaddea"));
        ASSERT_FALSE(uuid_is_valid("deaddead0dead-dead-dead-deaddeaddead"));
        ASSERT_FALSE(uuid_is_valid("g0000000-0000-0000-0000-000000000000"));
        ASSERT_FALSE(uuid_is_valid(NULL));
}

DEFINE_TEST_MAIN
