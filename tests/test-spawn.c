/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "cleanup.h"
#include "spawn.h"
#include "strutil.h"
#include "tests.h"

TEST(exit_status_and_output)
{
        char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
        _cleanup_spawn_result_ SpawnResult r = {};

        ASSERT_OK(spawn_simple(argv, 10 * USEC_PER_SEC, &r));
        ASSERT_EQ(r.exit_status, 3);
        ASSERT_STREQ(r.out, "out\n");
        ASSERT_STREQ(r.err, "err\n");
        ASSERT_FALSE(r.timed_out);
}

/* "ls /proc/self/fd/" in a child that has only 0-2: ls reads the
 * directory through the lowest free number, 3, and lists that too */
TEST(child_gets_only_stdio)
{
        char *argv[] = { "ls", "/proc/self/fd/", NULL };
        _cleanup_spawn_result_ SpawnResult r = {};
        int fds[TEST_INHERITABLE_FDS];
        size_t n = test_open_inheritable_fds(fds);

        ASSERT_OK(spawn_simple(argv, 10 * USEC_PER_SEC, &r));
        ASSERT_EQ(r.exit_status, 0);
        ASSERT_STREQ(r.out, "0\n1\n2\n3\n");
        test_close_fds(fds, n);
}

TEST(child_keeps_what_it_is_handed)
{
        char *argv[] = { "sh", "-c", "ls /proc/self/fd/; echo handed >&9", NULL };
        _cleanup_spawn_result_ SpawnResult r = {};
        int fds[TEST_INHERITABLE_FDS], p[2], handed;
        size_t n = test_open_inheritable_fds(fds);
        char buf[16] = {};

        ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
        /* handed to the program: at the number it expects, without O_CLOEXEC */
        handed = dup2(p[1], 9);
        ASSERT_EQ(handed, 9);
        ASSERT_EQ(fcntl(handed, F_SETFD, 0), 0); /* dup2() onto itself keeps O_CLOEXEC */
        {
                SpawnOptions o = { .argv = argv, .keep_fds = &handed, .n_keep_fds = 1 };
                ASSERT_OK(spawn_run(&o, &r));
        }
        close(handed);
        if (p[1] != handed)
                close(p[1]);
        ASSERT_STREQ(r.err, "");
        ASSERT_EQ(r.exit_status, 0);
        ASSERT_STREQ(r.out, "0\n1\n2\n3\n9\n");
        ASSERT_EQ(read(p[0], buf, sizeof(buf) - 1), 7);
        ASSERT_STREQ(buf, "handed\n");
        close(p[0]);
        test_close_fds(fds, n);
}

TEST(missing_program_is_enoent)
{
        char *argv[] = { "cradle-no-such-program", NULL };
        char *abs[] = { "/nonexistent/bin/x", NULL };
        SpawnResult r = {};

        ASSERT_ERROR(spawn_simple(argv, 0, &r), ENOENT);
        ASSERT_ERROR(spawn_simple(abs, 0, &r), ENOENT);
}

TEST(stdin_env_and_cwd)
{
        char *argv[] = { "sh", "-c", "cat; printf '%s|%s|' \"$CRADLE_X\" \"$HOME\"; pwd", NULL };
        char *extra[] = { "CRADLE_X=42", "HOME=/nowhere", NULL };
        SpawnOptions o = {
                .argv = argv, .env_extra = extra, .cwd = "/", .stdin_data = "input|", .stdin_len = 6
        };
        _cleanup_spawn_result_ SpawnResult r = {};

        ASSERT_OK(spawn_run(&o, &r));
        ASSERT_EQ(r.exit_status, 0);
        ASSERT_STREQ(r.out, "input|42|/nowhere|/\n");
}

TEST(service_manager_variables_stay_with_us)
{
        char *argv[] = { "sh", "-c",
                         "printf '%s|%s|%s|%s' \"${NOTIFY_SOCKET-unset}\" \"${WATCHDOG_USEC-unset}\" "
                         "\"${LISTEN_FDS-unset}\" \"$CRADLE_KEPT\"",
                         NULL };
        char *env[] = { "NOTIFY_SOCKET=/given", "CRADLE_KEPT=yes", NULL };
        SpawnOptions inherit = { .argv = argv }, given = { .argv = argv, .env = env };
        _cleanup_spawn_result_ SpawnResult r = {}, g = {};

        /* inherited: what addresses this process alone is left out */
        ASSERT_OK(setenv("NOTIFY_SOCKET", "@cradle-test-notify", 1));
        ASSERT_OK(setenv("WATCHDOG_USEC", "1000000", 1));
        ASSERT_OK(setenv("LISTEN_FDS", "1", 1));
        ASSERT_OK(setenv("CRADLE_KEPT", "yes", 1));
        ASSERT_OK(spawn_run(&inherit, &r));
        ASSERT_STREQ(r.out, "unset|unset|unset|yes");
        /* an environment the caller gives is passed as it is */
        ASSERT_OK(spawn_run(&given, &g));
        ASSERT_STREQ(g.out, "/given|unset|unset|yes");
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
        unsetenv("LISTEN_FDS");
        unsetenv("CRADLE_KEPT");
}

TEST(large_stdin_does_not_deadlock)
{
        size_t n = 4 * 1024 * 1024;
        _cleanup_free_ char *data = malloc(n);
        char *argv[] = { "wc", "-c", NULL };
        SpawnOptions o = { .argv = argv, .stdin_data = data, .stdin_len = n };
        _cleanup_spawn_result_ SpawnResult r = {};

        ASSERT_NOT_NULL(data);
        memset(data, 'a', n);
        ASSERT_OK(spawn_run(&o, &r));
        ASSERT_STREQ(r.out, "4194304\n");
}

TEST(timeout_kills_the_process_group)
{
        _cleanup_free_ char *marker = strdup_printf("%s/grandchild-alive", test_tmpdir());
        _cleanup_free_ char *script = strdup_printf("(sleep 2; touch %s) & sleep 30", marker);
        char *argv[] = { "sh", "-c", script, NULL };
        SpawnOptions o = { .argv = argv, .timeout = 200 * USEC_PER_MSEC };
        _cleanup_spawn_result_ SpawnResult r = {};

        ASSERT_OK(spawn_run(&o, &r));
        ASSERT_TRUE(r.timed_out);
        ASSERT_EQ(r.exit_status, -1);
        ASSERT_EQ(r.signal, SIGTERM);
        sleep(3);
        /* the background child was in the group and died with it */
        ASSERT_NE(access(marker, F_OK), 0);
}

TEST(term_ignored_then_killed)
{
        char *argv[] = { "sh", "-c", "trap '' TERM; sleep 30", NULL };
        SpawnOptions o = { .argv = argv, .timeout = 100 * USEC_PER_MSEC, .kill_grace = 200 * USEC_PER_MSEC };
        _cleanup_spawn_result_ SpawnResult r = {};

        ASSERT_OK(spawn_run(&o, &r));
        ASSERT_TRUE(r.timed_out);
        ASSERT_EQ(r.signal, SIGKILL);
}

TEST(output_cap_truncates)
{
        char *argv[] = { "sh", "-c", "head -c 100000 /dev/zero; echo tail >&2", NULL };
        SpawnOptions o = { .argv = argv, .output_max = 1000 };
        _cleanup_spawn_result_ SpawnResult r = {};

        ASSERT_OK(spawn_run(&o, &r));
        ASSERT_EQ(r.exit_status, 0);
        ASSERT_EQ(r.out_len, 1000);
        ASSERT_TRUE(r.out_truncated);
        ASSERT_STREQ(r.err, "tail\n");
        ASSERT_FALSE(r.err_truncated);
}

typedef struct Lines {
        char **lines;
} Lines;

static void collect(void *userdata, const char *line, bool is_stderr)
{
        Lines *l = userdata;

        ASSERT_OK(strv_extendf(&l->lines, "%s:%s", is_stderr ? "E" : "O", line));
}

TEST(line_callback_splits_carriage_returns)
{
        char *argv[] = {
                "sh", "-c",
                "printf 'Read disk 1 MiB (5%%)\\rRead disk 2 MiB (10%%)\\r'; echo x >&2; printf 'done'", NULL
        };
        Lines l = {};
        /* merged output keeps the order and reports every line as stdout */
        SpawnOptions o = { .argv = argv, .on_line = collect, .userdata = &l, .merge_output = true };
        _cleanup_spawn_result_ SpawnResult r = {};
        _cleanup_free_ char *joined = NULL;

        ASSERT_OK(spawn_run(&o, &r));
        joined = strv_join(l.lines, "|");
        ASSERT_STREQ(joined, "O:Read disk 1 MiB (5%)|O:Read disk 2 MiB (10%)|O:x|O:done");
        ASSERT_STREQ(r.out, "Read disk 1 MiB (5%)\rRead disk 2 MiB (10%)\rx\ndone");
        strv_free(l.lines);
}

TEST(line_callback_separate_streams)
{
        char *argv[] = { "sh", "-c", "echo a; echo b >&2", NULL };
        Lines l = {};
        SpawnOptions o = { .argv = argv, .on_line = collect, .userdata = &l };
        _cleanup_spawn_result_ SpawnResult r = {};

        ASSERT_OK(spawn_run(&o, &r));
        strv_sort(l.lines);
        ASSERT_EQ(strv_length(l.lines), 2);
        ASSERT_STREQ(l.lines[0], "E:b");
        ASSERT_STREQ(l.lines[1], "O:a");
        strv_free(l.lines);
}

static int refuse(void *userdata)
{
        (void)userdata;
        return -EPERM;
}

TEST(pre_exec_failure_is_reported)
{
        char *argv[] = { "true", NULL };
        SpawnOptions o = { .argv = argv, .pre_exec = refuse };
        SpawnResult r = {};

        ASSERT_ERROR(spawn_run(&o, &r), EPERM);
}

static void *request_stop(void *arg)
{
        (void)arg;
        sleep_usec(100 * USEC_PER_MSEC);
        stop_request();
        return NULL;
}

TEST(stop_request_terminates_children)
{
        char *argv[] = { "sleep", "30", NULL };
        _cleanup_spawn_result_ SpawnResult r = {};
        pthread_t t;

        stop_reset();
        ASSERT_EQ(pthread_create(&t, NULL, request_stop, NULL), 0);
        ASSERT_OK(spawn_simple(argv, 0, &r));
        pthread_join(t, NULL);
        stop_reset();
        ASSERT_TRUE(r.stopped);
        ASSERT_FALSE(r.timed_out);
        ASSERT_EQ(r.signal, SIGTERM);
}

TEST(output_tail)
{
        _cleanup_free_ char *a = spawn_output_tail("short", 10), *b = spawn_output_tail("0123456789abc", 4);

        ASSERT_STREQ(a, "short");
        ASSERT_STREQ(b, "... 9abc");
}

DEFINE_TEST_MAIN
