/* SPDX-License-Identifier: Apache-2.0 */
#include "tests.h"

TEST(placeholder)
{
        ASSERT_TRUE(1);
}

DEFINE_TEST_MAIN
