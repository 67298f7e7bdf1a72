/* SPDX-License-Identifier: Apache-2.0 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"
#include "tests.h"

static char *log_path(const char *name)
{
        return strdup_printf("%s/%s", test_tmpdir(), name);
}

TEST(level_names)
{
        ASSERT_EQ(log_level_from_string("debug"), LOG_DEBUG);
        ASSERT_EQ(log_level_from_string("WARN"), LOG_WARNING);
        ASSERT_EQ(log_level_from_string("trace"), LOG_DEBUG);
        ASSERT_EQ(log_level_from_string("3"), LOG_ERR);
        ASSERT_EQ(log_level_from_string("loud"), -EINVAL);
        ASSERT_STREQ(log_level_to_string(LOG_ERR), "error");
}

TEST(text_file_lines_levels_and_fields)
{
        _cleanup_free_ char *path = log_path("levels.log"), *text = NULL;

        log_setup("cradle-test");
        log_set_targets(0);
        ASSERT_OK(log_open_file(path));
        log_set_max_level(LOG_INFO);
        log_debug("not shown");
        log_info("hello \"world\"");
        {
                LOG_CONTEXT_PUSH("STEP_TYPE", "inventory");
                LOG_CONTEXT_PUSH("STEP_ID", "inventory-1a2b3c4d");
                log_warning("step slow");
        }
        log_info("after");
        ASSERT_EQ(log_error_errno(SYNTHETIC_ERRNO(ENOENT), "cannot open '%s': %m", "/x"), -ENOENT);
        ASSERT_EQ(log_error_errno(0, "zero error returns zero"), 0);
        log_close_file();

        ASSERT_OK(read_full_file(path, 1 << 20, &text, NULL));
        ASSERT_NOT_CONTAINS(text, "not shown");
        ASSERT_CONTAINS(text, "level=info msg=\"hello \\\"world\\\"\"\n");
        ASSERT_CONTAINS(text,
                        "level=warning msg=\"step slow\" step_id=inventory-1a2b3c4d step_type=inventory\n");
        ASSERT_CONTAINS(text, "level=info msg=after\n");
        ASSERT_CONTAINS(text, "level=error msg=\"cannot open '/x': No such file or directory\"");
}

TEST(secrets_never_reach_a_line)
{
        _cleanup_free_ char *path = log_path("secret.log"), *text = NULL;

        log_set_targets(0);
        ASSERT_OK(log_open_file(path));
        ASSERT_OK(redact_register_secret("eyJhbGciOiJSUzI1NiJ9.pullsecret"));
        log_info("registering with token %s", "eyJhbGciOiJSUzI1NiJ9.pullsecret");
        log_close_file();
        ASSERT_OK(read_full_file(path, 1 << 20, &text, NULL));
        ASSERT_CONTAINS(text, "registering with token ***");
        ASSERT_NOT_CONTAINS(text, "pullsecret");
}

/* Receives what log.c sends to the journal: in a private mount namespace a
 * socket of ours stands at /run/systemd/journal/socket. */
static void journal_child(const char *out_path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/run/systemd/journal/socket" };
        char buf[8192];
        ssize_t n;
        int fd;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0 || mkdir("/run/systemd", 0755) < 0 ||
            mkdir("/run/systemd/journal", 0755) < 0)
                _exit(77);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                _exit(2);

        unsetenv("CRADLE_LOG_TARGET");
        log_setup("agent");
        if (!(log_get_targets() & LOG_TARGET_JOURNAL))
                _exit(3);
        log_set_default_targets(LOG_TARGET_JOURNAL | LOG_TARGET_STDOUT, LOG_TARGET_STDERR);
        if (log_get_targets() != (LOG_TARGET_JOURNAL | LOG_TARGET_STDOUT))
                _exit(6);
        log_set_targets(LOG_TARGET_JOURNAL);
        log_set_field("TAG", "agent");
        log_set_field("HOST_ID", "b1f5c5b7-caf8-66bd-addd-439b331f2640");
        {
                LOG_CONTEXT_PUSH("STEP_TYPE", "free-network-addresses");
                log_warning_errno(SYNTHETIC_ERRNO(EIO), "step failed: %m");
        }
        n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        if (n <= 0)
                _exit(4);
        buf[n] = 0;
        if (write_file_atomic(out_path, buf, (size_t)n, 0600) < 0)
                _exit(5);
        _exit(0);
}

/* log_set_default_targets() where no journal socket exists (a private /run). */
static void no_journal_child(const char *unused)
{
        (void)unused;
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0)
                _exit(77);
        unsetenv("CRADLE_LOG_TARGET");
        log_set_default_targets(LOG_TARGET_JOURNAL, LOG_TARGET_STDERR);
        if (log_get_targets() != LOG_TARGET_STDERR)
                _exit(2);
        log_set_default_targets(LOG_TARGET_JOURNAL | LOG_TARGET_STDOUT, LOG_TARGET_STDERR);
        if (log_get_targets() != LOG_TARGET_STDOUT)
                _exit(3);
        log_set_default_targets(LOG_TARGET_JOURNAL, 0);
        if (log_get_targets() != 0)
                _exit(4);
        /* CRADLE_LOG_TARGET chose: the flags change nothing */
        setenv("CRADLE_LOG_TARGET", "stdout", 1);
        log_set_targets(LOG_TARGET_STDOUT);
        log_set_default_targets(LOG_TARGET_JOURNAL, LOG_TARGET_STDERR);
        if (log_get_targets() != LOG_TARGET_STDOUT)
                _exit(5);
        _exit(0);
}

/* Runs child(arg) in a forked process (it changes its mount namespace and
 * the log's global state); it exits 0 when all held, 77 to skip. */
static void run_in_child(void (*child)(const char *), const char *arg)
{
        pid_t pid;
        int status;

        if (!test_is_root())
                test_skip("needs root for a private mount namespace");
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                child(arg);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (WEXITSTATUS(status) == 77)
                test_skip("cannot create a mount namespace here");
        ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(default_targets_follow_the_flags)
{
        run_in_child(no_journal_child, NULL);
}

TEST(journal_fields)
{
        _cleanup_free_ char *out = log_path("journal.txt"), *text = NULL;

        run_in_child(journal_child, out);
        ASSERT_OK(read_full_file(out, 1 << 20, &text, NULL));
        ASSERT_CONTAINS(text, "MESSAGE=step failed: Input/output error\n");
        ASSERT_CONTAINS(text, "PRIORITY=4\n");
        ASSERT_CONTAINS(text, "SYSLOG_IDENTIFIER=agent\n");
        ASSERT_CONTAINS(text, "TAG=agent\n");
        ASSERT_CONTAINS(text, "HOST_ID=b1f5c5b7-caf8-66bd-addd-439b331f2640\n");
        ASSERT_CONTAINS(text, "STEP_TYPE=free-network-addresses\n");
        ASSERT_CONTAINS(text, "ERRNO=5\n");
        ASSERT_CONTAINS(text, "CODE_FUNC=journal_child\n");
}

DEFINE_TEST_MAIN
