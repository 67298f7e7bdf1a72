/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/hostexec: a host command gets standard input, output and error and
 * nothing else of ours, whether it runs directly or enters the target's
 * namespaces (the namespace descriptors it enters end at its exec, as
 * nsenter's do). The PID namespace case is tests/installer/test-hostexec-pid.c.
 */
#include <unistd.h>

#include "cleanup.h"
#include "hostexec.h"
#include "strutil.h"
#include "tests.h"

static void check_listing(HostExecMode mode)
{
        char *argv[] = { "ls", "/proc/self/fd/", NULL };
        _cleanup_(host_exec_freep) HostExec *h = NULL;
        _cleanup_spawn_result_ SpawnResult r = {};
        SpawnOptions o = { .argv = argv, .timeout = 10 * USEC_PER_SEC };
        int fds[TEST_INHERITABLE_FDS];
        size_t n = test_open_inheritable_fds(fds);

        /* our own namespaces stand for the host's */
        ASSERT_OK(host_exec_new_target(mode, HOST_NS_AGENT | HOST_NS_UTS, getpid(), &h));
        ASSERT_EQ(host_exec_enters(h), mode == HOST_EXEC_ENTER);
        ASSERT_OK(host_exec_run(h, &o, &r));
        ASSERT_EQ(r.exit_status, 0);
        ASSERT_STREQ(r.out, "0\n1\n2\n3\n");
        test_close_fds(fds, n);
}

TEST(direct_command_gets_only_stdio)
{
        check_listing(HOST_EXEC_DIRECT);
}

TEST(entering_command_gets_only_stdio)
{
        if (!test_is_root())
                test_skip("entering namespaces needs root");
        check_listing(HOST_EXEC_ENTER);
}

TEST(pre_exec_of_the_caller_is_refused)
{
        char *argv[] = { "true", NULL };
        _cleanup_(host_exec_freep) HostExec *h = NULL;
        SpawnResult r = {};
        SpawnOptions o = { .argv = argv, .pre_exec = (SpawnPreExec)1 };

        ASSERT_OK(host_exec_new(HOST_EXEC_DIRECT, HOST_NS_AGENT, &h));
        ASSERT_ERROR(host_exec_run(h, &o, &r), EINVAL);
}

DEFINE_TEST_MAIN
