/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>

#include "cleanup.h"
#include "goflags.h"
#include "strutil.h"
#include "tests.h"

static char *arg_url, *arg_cacert;
static bool arg_insecure, arg_dry_run, arg_journal;
static int arg_interval;
static char **arg_format_disks;

static const GoFlag flags[] = {
        { "url", GOFLAG_STRING, &arg_url, NULL, "service URL" },
        { "cacert", GOFLAG_STRING, &arg_cacert, NULL, "CA file" },
        { "insecure", GOFLAG_BOOL, &arg_insecure, "false", "skip TLS verification" },
        { "interval", GOFLAG_INT, &arg_interval, "60", "seconds between attempts" },
        { "with-journal-logging", GOFLAG_BOOL, &arg_journal, "true", "log to journald" },
        { "dry-run", GOFLAG_BOOL, &arg_dry_run, NULL, "dry run", "DRY_ENABLE", "DRYCONFIG_DRY_ENABLE" },
        { "format-disk", GOFLAG_STRV, &arg_format_disks, NULL, "disk to zero" },
        {},
};

static int parse(char **argv, int *optind)
{
        int argc = (int)strv_length(argv);

        return goflags_parse("agent", NULL, flags, argc, argv, optind);
}

TEST(go_syntax)
{
        char *argv[] = { "agent",
                         "--url",
                         "http://s:6000",
                         "-insecure=true",
                         "-interval=5",
                         "--cacert=/ca.pem",
                         "-format-disk",
                         "/dev/sdb",
                         "--format-disk=/dev/sdc",
                         "rest",
                         "-url",
                         "ignored",
                         NULL };
        int optind = 0;

        ASSERT_EQ(parse(argv, &optind), 1);
        ASSERT_STREQ(arg_url, "http://s:6000");
        ASSERT_TRUE(arg_insecure);
        ASSERT_EQ(arg_interval, 5);
        ASSERT_STREQ(arg_cacert, "/ca.pem");
        ASSERT_EQ(strv_length(arg_format_disks), 2);
        ASSERT_STREQ(arg_format_disks[1], "/dev/sdc");
        ASSERT_TRUE(arg_journal);
        /* parsing stops at the first positional argument */
        ASSERT_EQ(optind, 9);
        goflags_free(flags);
        ASSERT_NULL(arg_url);
}

TEST(boolean_does_not_consume_next_word)
{
        char *argv[] = { "agent", "--insecure", "false", "--url", "x", NULL };
        int optind = 0;

        ASSERT_EQ(parse(argv, &optind), 1);
        ASSERT_TRUE(arg_insecure);
        ASSERT_EQ(optind, 2);
        ASSERT_STREQ(arg_url, "");
        goflags_free(flags);
}

TEST(double_dash_ends_flags)
{
        char *argv[] = { "agent", "-insecure=0", "--", "--url", NULL };
        int optind = 0;

        ASSERT_EQ(parse(argv, &optind), 1);
        ASSERT_FALSE(arg_insecure);
        ASSERT_EQ(optind, 3);
        goflags_free(flags);
}

TEST(errors_are_usage_errors)
{
        char *unknown[] = { "agent", "--nope", NULL };
        char *missing[] = { "agent", "--url", NULL };
        char *badbool[] = { "agent", "--insecure=yes", NULL };
        char *badint[] = { "agent", "--interval", "soon", NULL };

        ASSERT_ERROR(parse(unknown, NULL), EINVAL);
        ASSERT_ERROR(parse(missing, NULL), EINVAL);
        ASSERT_ERROR(parse(badbool, NULL), EINVAL);
        ASSERT_ERROR(parse(badint, NULL), EINVAL);
        goflags_free(flags);
}

TEST(help_returns_zero)
{
        char *h1[] = { "agent", "-h", NULL };
        char *h2[] = { "agent", "--help", NULL };

        ASSERT_EQ(parse(h1, NULL), 0);
        ASSERT_EQ(parse(h2, NULL), 0);
        goflags_free(flags);
}

TEST(environment_defaults)
{
        char *argv[] = { "agent", NULL };

        setenv("DRYCONFIG_DRY_ENABLE", "true", 1);
        ASSERT_EQ(parse(argv, NULL), 1);
        ASSERT_TRUE(arg_dry_run);
        setenv("DRY_ENABLE", "false", 1);
        ASSERT_EQ(parse(argv, NULL), 1);
        ASSERT_FALSE(arg_dry_run);
        unsetenv("DRY_ENABLE");
        unsetenv("DRYCONFIG_DRY_ENABLE");
        ASSERT_EQ(parse(argv, NULL), 1);
        ASSERT_FALSE(arg_dry_run);
        goflags_free(flags);
}

TEST(usage_lists_sorted_flags_with_defaults)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        goflags_usage(f, "agent", NULL, flags);
        fclose(f);
        ASSERT_CONTAINS(text, "Usage of agent:\n  -cacert string\n");
        ASSERT_CONTAINS(text, "  -interval int\n    \tseconds between attempts (default 60)\n");
        ASSERT_CONTAINS(text, "  -with-journal-logging\n    \tlog to journald (default true)\n");
        ASSERT_CONTAINS(text, "[$DRY_ENABLE, $DRYCONFIG_DRY_ENABLE]");
        ASSERT_TRUE(strstr(text, "-cacert") < strstr(text, "-url"));
        free(text);
}

static void count_usage(void *userdata, const char *prog, const char *synopsis, const GoFlag t[])
{
        (*(int *)userdata)++;
        ASSERT_STREQ(prog, "agent");
        ASSERT_NULL(synopsis);
        ASSERT_TRUE(t == flags);
}

TEST(usage_hook_receives_the_table)
{
        char *h[] = { "agent", "--help", NULL };
        int calls = 0;

        goflags_set_usage_hook(count_usage, &calls);
        ASSERT_EQ(parse(h, NULL), 0);
        goflags_set_usage_hook(NULL, NULL);
        ASSERT_EQ(calls, 1);
        goflags_free(flags);
        /* what the usage shows of each flag, as the man pages show it */
        ASSERT_STREQ(goflags_type_word(&flags[0]), "string");
        ASSERT_NULL(goflags_type_word(&flags[2]));
        ASSERT_STREQ(goflags_type_word(&flags[3]), "int");
        ASSERT_STREQ(goflags_type_word(&flags[6]), "string");
        ASSERT_FALSE(goflags_has_default(&flags[0])); /* no default */
        ASSERT_FALSE(goflags_has_default(&flags[2])); /* false */
        ASSERT_TRUE(goflags_has_default(&flags[3])); /* 60 */
        ASSERT_TRUE(goflags_has_default(&flags[4])); /* true */
}

DEFINE_TEST_MAIN
