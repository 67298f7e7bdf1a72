/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "hostexec.h"
#include "redact.h"
#include "shell.h"
#include "strutil.h"

static const struct {
        HostNamespace flag;
        const char *name;
        int nstype;
} namespaces[] = {
        /* mnt last: after it, /proc is the host's */
        { HOST_NS_CGROUP, "cgroup", CLONE_NEWCGROUP }, { HOST_NS_IPC, "ipc", CLONE_NEWIPC },
        { HOST_NS_UTS, "uts", CLONE_NEWUTS },          { HOST_NS_NET, "net", CLONE_NEWNET },
        { HOST_NS_MNT, "mnt", CLONE_NEWNS },
};

struct HostExec {
        bool enter;
        int fds[ELEMENTSOF(namespaces)];
        int pid_fd; /* PID 1's PID namespace when it differs from ours, else -1 */
};

static const char *const mode_names[_HOST_EXEC_MODE_MAX] = {
        [HOST_EXEC_AUTO] = "auto",
        [HOST_EXEC_DIRECT] = "direct",
        [HOST_EXEC_ENTER] = "enter",
};

HostExecMode host_exec_mode_from_string(const char *s)
{
        for (int i = 0; s && i < _HOST_EXEC_MODE_MAX; i++)
                if (streq(s, mode_names[i]))
                        return (HostExecMode)i;
        return _HOST_EXEC_MODE_INVALID;
}

const char *host_exec_mode_to_string(HostExecMode m)
{
        return m >= 0 && m < _HOST_EXEC_MODE_MAX ? mode_names[m] : NULL;
}

HostExec *host_exec_free(HostExec *h)
{
        if (!h)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                safe_close(h->fds[i]);
        safe_close(h->pid_fd);
        free(h);
        return NULL;
}

/* Same mount namespace as the target: we run on the host. */
static int in_host_namespaces(pid_t target)
{
        _cleanup_free_ char *p = strdup_printf("/proc/%d/ns/mnt", (int)target);
        struct stat self, init;

        if (!p)
                return -ENOMEM;
        if (stat("/proc/self/ns/mnt", &self) < 0)
                return negative_errno();
        if (stat(p, &init) < 0)
                return negative_errno();
        return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

int host_exec_new(HostExecMode mode, unsigned ns_flags, HostExec **ret)
{
        return host_exec_new_target(mode, ns_flags, 1, ret);
}

int host_exec_new_target(HostExecMode mode, unsigned ns_flags, pid_t target, HostExec **ret)
{
        _cleanup_(host_exec_freep) HostExec *h = calloc(1, sizeof(*h));
        int r;

        if (!h)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                h->fds[i] = -1;
        h->pid_fd = -1;

        switch (mode) {
        case HOST_EXEC_DIRECT:
                h->enter = false;
                break;
        case HOST_EXEC_ENTER:
                h->enter = true;
                break;
        case HOST_EXEC_AUTO:
                r = in_host_namespaces(target);
                /* cannot even look at the target's namespaces (not root, or a
                 * sandbox hiding PID 1): we cannot enter them either */
                h->enter = r == 0;
                break;
        default:
                return -EINVAL;
        }

        if (h->enter)
                for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                        _cleanup_free_ char *p = NULL;
                        if (!(ns_flags & namespaces[i].flag))
                                continue;
                        p = strdup_printf("/proc/%d/ns/%s", (int)target, namespaces[i].name);
                        if (!p)
                                return -ENOMEM;
                        h->fds[i] = open(p, O_RDONLY | O_CLOEXEC);
                        if (h->fds[i] < 0)
                                return negative_errno();
                }
        if (h->enter && (ns_flags & HOST_NS_PID)) {
                _cleanup_free_ char *p = strdup_printf("/proc/%d/ns/pid", (int)target);
                struct stat self, init;
                if (!p)
                        return -ENOMEM;
                /* the namespace our children get, compared with the target's */
                if (stat("/proc/self/ns/pid_for_children", &self) < 0 || stat(p, &init) < 0)
                        return negative_errno();
                if (self.st_ino != init.st_ino || self.st_dev != init.st_dev) {
                        h->pid_fd = open(p, O_RDONLY | O_CLOEXEC);
                        if (h->pid_fd < 0)
                                return negative_errno();
                }
        }
        *ret = TAKE_PTR(h);
        return 0;
}

bool host_exec_enters(const HostExec *h)
{
        return h->enter;
}

/* In the child after setns(CLONE_NEWPID): fork once more; the grandchild
 * goes on to exec, this process waits and passes its status on. Only
 * async-signal-safe calls. */
static int fork_into_pid_namespace(void)
{
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return -errno;
        if (pid == 0)
                return 0;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        _exit(127);
        if (WIFSIGNALED(status)) {
                (void)kill(getpid(), WTERMSIG(status));
                _exit(128 + WTERMSIG(status));
        }
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

/* In the child, between fork and exec: async-signal-safe only. */
static int enter_namespaces(void *userdata)
{
        HostExec *h = userdata;

        /* PID first: setns into a PID namespace checks the caller's user
         * namespace, which the others do not change */
        if (h->pid_fd >= 0 && setns(h->pid_fd, CLONE_NEWPID) < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                if (h->fds[i] >= 0 && setns(h->fds[i], namespaces[i].nstype) < 0)
                        return -errno;
        /* the host's root and working directory, as nsenter does */
        if (h->fds[ELEMENTSOF(namespaces) - 1] >= 0 && chdir("/") < 0)
                return -errno;
        if (h->pid_fd >= 0)
                return fork_into_pid_namespace();
        return 0;
}

int host_exec_run(HostExec *h, const SpawnOptions *o, SpawnResult *ret)
{
        _cleanup_free_ int *keep = NULL;
        SpawnOptions copy = *o;
        size_t n = 0;

        if (o->pre_exec)
                return -EINVAL;
        keep = calloc(o->n_keep_fds + ELEMENTSOF(namespaces) + 1, sizeof(int));
        if (!keep)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_keep_fds; i++)
                keep[n++] = o->keep_fds[i];
        if (h->enter) {
                /* the child closes every other descriptor before the hook:
                 * it keeps the namespaces it enters (O_CLOEXEC, so they end
                 * at the exec, as nsenter's do), nothing of ours */
                for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                        if (h->fds[i] >= 0)
                                keep[n++] = h->fds[i];
                if (h->pid_fd >= 0)
                        keep[n++] = h->pid_fd;
                copy.pre_exec = enter_namespaces;
                copy.pre_exec_userdata = h;
        }
        copy.keep_fds = keep;
        copy.n_keep_fds = n;
        return spawn_run(&copy, ret);
}

char *host_exec_failure_text(char *const *argv, int r, const SpawnResult *res)
{
        _cleanup_free_ char *cmd = shell_join(argv), *text = NULL, *tail = NULL, *out = NULL;
        const char *output, *error_at;

        if (!cmd)
                return NULL;
        if (r < 0)
                text = strdup_printf("failed executing %s, Error %s", cmd, strerror(-r));
        else {
                output = res->out ? res->out : "";
                /* upstream cuts the output at its first "Error", if any */
                error_at = strstr(output, "Error");
                out = strdup(error_at ? error_at : output);
                if (!out)
                        return NULL;
                strstrip(out);
                tail = spawn_output_tail(out, 200);
                if (res->signal)
                        text = strdup_printf("failed executing %s, Error signal: %s, LastOutput \"%s\"", cmd,
                                             strsignal(res->signal), strempty(tail));
                else
                        text = strdup_printf("failed executing %s, Error exit status %d, LastOutput \"%s\"",
                                             cmd, res->exit_status, strempty(tail));
        }
        return text ? redact_known_secrets(text) : NULL;
}
