/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/hostexec's PID namespace (the installer's "nsenter --pid"): setns()
 * only moves the children of the caller, so the command runs as a
 * grandchild, and its status must come back unchanged.
 *
 * Set-up (root): a process B is PID 1 of a new PID namespace, with its own
 * /proc in a private mount namespace; B stands for the host's PID 1
 * (host_exec_new_target). The test, in the parent PID namespace, enters
 * B's mount and PID namespaces: the commands must run inside B's PID
 * namespace (small PIDs there, /proc/self resolvable in B's /proc), and
 * exit codes and signals must come back as they were.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "hostexec.h"
#include "strutil.h"
#include "tests.h"

static pid_t holder_a = -1, holder_b = -1;

static void stop_holders(void)
{
        /* B first: A reaps it, then ends itself, and we reap A */
        if (holder_b > 0)
                kill(holder_b, SIGKILL);
        if (holder_a > 0)
                waitpid(holder_a, NULL, 0);
        holder_a = holder_b = -1;
}

/* A: private mount namespace, new PID namespace; B (its child) is PID 1
 * there and mounts that namespace's /proc. Returns B's PID in our namespace. */
static pid_t start_pid_namespace(void)
{
        int p[2], q[2]; /* B's PID from A; B's "ready" */
        pid_t b = -1;

        ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
        ASSERT_EQ(pipe2(q, O_CLOEXEC), 0);
        holder_a = fork();
        ASSERT_TRUE(holder_a >= 0);
        if (holder_a == 0) {
                pid_t child;
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                /* keep the test's output pipes free: meson waits for them */
                if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0)
                        _exit(4);
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    unshare(CLONE_NEWPID) < 0)
                        _exit(1);
                child = fork();
                if (child < 0)
                        _exit(2);
                if (child == 0) {
                        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                                _exit(3);
                        (void)!write(q[1], "r", 1);
                        for (;;)
                                pause();
                }
                (void)!write(p[1], &child, sizeof(child));
                waitpid(child, NULL, 0);
                _exit(0);
        }
        close(p[1]);
        close(q[1]);
        {
                char c;
                ASSERT_EQ(read(p[0], &b, sizeof(b)), (ssize_t)sizeof(b));
                ASSERT_EQ(read(q[0], &c, 1), 1); /* B mounted its /proc */
        }
        close(p[0]);
        close(q[0]);
        holder_b = b;
        return b;
}

typedef struct Outcome {
        int r;
        int exit_status;
        int signal;
        bool enters;
        char out[256];
} Outcome;

/* argv through a HostExec entering B's namespaces (mount and PID), B
 * standing for the host's PID 1 (host_exec_new_target). */
static Outcome run_entering(pid_t b, char *const *argv)
{
        _cleanup_(host_exec_freep) HostExec *h = NULL;
        SpawnResult res = {};
        SpawnOptions so = { .argv = argv, .timeout = 30 * USEC_PER_SEC };
        Outcome o = { .r = -1 };

        o.r = host_exec_new_target(HOST_EXEC_ENTER, HOST_NS_MNT | HOST_NS_PID, b, &h);
        if (o.r < 0)
                return o;
        o.enters = host_exec_enters(h);
        o.r = host_exec_run(h, &so, &res);
        o.exit_status = res.exit_status;
        o.signal = res.signal;
        snprintf(o.out, sizeof(o.out), "%s", strempty(res.out));
        spawn_result_done(&res);
        return o;
}

TEST(pid_namespace_entered_by_a_second_fork)
{
        char *nspid[] = { (char *)"sh", (char *)"-c", (char *)"grep NSpid /proc/self/status; echo pid=$$",
                          NULL };
        char *exit7[] = { (char *)"sh", (char *)"-c", (char *)"exit 7", NULL };
        char *killed[] = { (char *)"sh", (char *)"-c", (char *)"kill -TERM $$", NULL };
        char *missing[] = { (char *)"/nonexistent/command", NULL };
        Outcome o;
        pid_t b;

        if (!test_is_root())
                test_skip("needs root (namespaces)");
        atexit(stop_holders);
        b = start_pid_namespace();

        o = run_entering(b, nspid);
        ASSERT_OK(o.r);
        ASSERT_TRUE(o.enters);
        ASSERT_EQ(o.exit_status, 0);
        fprintf(stderr, "command saw: %s", o.out);
        /* /proc there is B's: a process of our namespace would have no
         * /proc/self in it; the shell and grep are small PIDs of B's */
        {
                unsigned grep_pid, sh_pid;
                const char *p = strstr(o.out, "pid=");
                ASSERT_EQ(sscanf(o.out, "NSpid:\t%u", &grep_pid), 1);
                ASSERT_NOT_NULL(p);
                ASSERT_EQ(sscanf(p, "pid=%u", &sh_pid), 1);
                ASSERT_TRUE(sh_pid >= 2 && sh_pid < 100);
                ASSERT_TRUE(grep_pid > sh_pid && grep_pid < 100);
        }

        o = run_entering(b, exit7);
        ASSERT_OK(o.r);
        ASSERT_EQ(o.exit_status, 7);
        ASSERT_EQ(o.signal, 0);

        o = run_entering(b, killed);
        ASSERT_OK(o.r);
        ASSERT_EQ(o.exit_status, -1);
        ASSERT_EQ(o.signal, SIGTERM);

        o = run_entering(b, missing);
        ASSERT_ERROR(o.r, ENOENT);

        stop_holders();
}

DEFINE_TEST_MAIN
