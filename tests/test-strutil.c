/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>

#include "cleanup.h"
#include "shell.h"
#include "strutil.h"
#include "tests.h"

TEST(safe_atoi64_cases)
{
        static const struct {
                const char *in;
                int ret;
                int64_t value;
        } cases[] = {
                { "0", 0, 0 },
                { "-12", 0, -12 },
                { "9223372036854775807", 0, INT64_MAX },
                { "9223372036854775808", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { " 1", -EINVAL, 0 },
                { "1 ", -EINVAL, 0 },
                { "12abc", -EINVAL, 0 },
                { "0x10", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t v = -999;
                int r = safe_atoi64(cases[i].in, &v);
                ASSERT_EQ(r, cases[i].ret);
                if (r == 0)
                        ASSERT_EQ(v, cases[i].value);
                else
                        ASSERT_EQ(v, -999);
        }
}

TEST(safe_atou_rejects_negative_and_overflow)
{
        unsigned u;
        uint64_t u64;
        int i;

        ASSERT_ERROR(safe_atou("-1", &u), EINVAL);
        ASSERT_ERROR(safe_atou("4294967296", &u), ERANGE);
        ASSERT_OK(safe_atou("4294967295", &u));
        ASSERT_EQ(u, UINT_MAX);
        ASSERT_OK(safe_atou64("18446744073709551615", &u64));
        ASSERT_TRUE(u64 == UINT64_MAX);
        ASSERT_ERROR(safe_atoi("2147483648", &i), ERANGE);
}

TEST(safe_atod_cases)
{
        double d;

        ASSERT_OK(safe_atod("480.00", &d));
        ASSERT_TRUE(d == 480.0);
        ASSERT_ERROR(safe_atod("nan", &d), EINVAL);
        ASSERT_ERROR(safe_atod("1.5s", &d), EINVAL);
}

TEST(parse_bool_go_accepts_go_spellings_only)
{
        static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
        static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
        static const char *const bad[] = { "yes", "no", "on", "", "tRUE" };
        bool b;

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                ASSERT_OK(parse_bool_go(yes[i], &b));
                ASSERT_TRUE(b);
        }
        for (size_t i = 0; i < ELEMENTSOF(no); i++) {
                ASSERT_OK(parse_bool_go(no[i], &b));
                ASSERT_FALSE(b);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_ERROR(parse_bool_go(bad[i], &b), EINVAL);
}

TEST(prefix_suffix_strip)
{
        char s[] = "  \t value \n";

        ASSERT_STREQ(startswith("/dev/sda", "/dev/"), "sda");
        ASSERT_NULL(startswith("/dev", "/dev/"));
        ASSERT_STREQ(startswith_no_case("BOOTIF=01", "bootif="), "01");
        ASSERT_TRUE(endswith("run/media/iso", "iso"));
        ASSERT_FALSE(endswith("so", "iso"));
        ASSERT_STREQ(strstrip(s), "value");
}

TEST(replace_all)
{
        _cleanup_free_ char *a = str_replace_all("token=abc&x=abc", "abc", "***");
        _cleanup_free_ char *b = str_replace_all("none", "zz", "y");

        ASSERT_STREQ(a, "token=***&x=***");
        ASSERT_STREQ(b, "none");
}

TEST(strv_operations)
{
        _cleanup_strv_free_ char **l = NULL, **copy = NULL, **split = NULL;
        _cleanup_free_ char *joined = NULL, *empty = NULL;

        ASSERT_OK(strv_extend(&l, "b"));
        ASSERT_OK(strv_extend(&l, "a"));
        ASSERT_OK(strv_extendf(&l, "c%d", 1));
        ASSERT_EQ(strv_length(l), 3);
        ASSERT_TRUE(strv_contains(l, "a"));
        ASSERT_FALSE(strv_contains(l, "z"));
        strv_sort(l);
        joined = strv_join(l, ",");
        ASSERT_STREQ(joined, "a,b,c1");
        copy = strv_copy(l);
        ASSERT_EQ(strv_length(copy), 3);
        ASSERT_OK(strv_split(",,x,,y ,", ", ", &split));
        ASSERT_EQ(strv_length(split), 2);
        ASSERT_STREQ(split[1], "y");
        empty = strv_join(NULL, ",");
        ASSERT_STREQ(empty, "");
}

TEST(strv_extend_pair_appends_both)
{
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *joined = NULL;

        ASSERT_OK(strv_extend_pair(&l, "--role", "master"));
        ASSERT_OK(strv_extend_pair(&l, "--boot-device", "/dev/vda"));
        joined = strv_join(l, " ");
        ASSERT_STREQ(joined, "--role master --boot-device /dev/vda");
}

TEST(shell_quote_cases)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "plain", "plain" },
                { "/dev/sda", "/dev/sda" },
                { "", "''" },
                { "a b", "'a b'" },
                { "it's", "'it'\\''s'" },
                { "[\"--append-karg\",\"ip=ens3:dhcp\"]", "'[\"--append-karg\",\"ip=ens3:dhcp\"]'" },
                { "$(reboot)", "'$(reboot)'" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *q = shell_quote(cases[i].in);
                ASSERT_STREQ(q, cases[i].out);
        }
}

TEST(shell_join_round_trips_through_sh)
{
        char *words[] = { (char *)"printf", (char *)"%s|",   (char *)"a b",
                          (char *)"it's",   (char *)"$HOME", NULL };
        _cleanup_free_ char *cmd = shell_join(words), *out = NULL;
        char *argv[] = { (char *)"sh", (char *)"-c", cmd, NULL };

        ASSERT_EQ(test_run(argv, &out), 0);
        ASSERT_STREQ(out, "a b|it's|$HOME|");
}

DEFINE_TEST_MAIN
