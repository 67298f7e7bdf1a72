/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
        *ret = TAKE_PTR(h);
        return 0;
}

bool host_exec_enters(const HostExec *h)
{
        return h->enter;
}

/* In the child, between fork and exec: async-signal-safe only. */
static int enter_namespaces(void *userdata)
{
        HostExec *h = userdata;

        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++)
                if (h->fds[i] >= 0 && setns(h->fds[i], namespaces[i].nstype) < 0)
                        return -errno;
        /* the host's root and working directory, as nsenter does */
        if (h->fds[ELEMENTSOF(namespaces) - 1] >= 0 && chdir("/") < 0)
                return -errno;
        return 0;
}

int host_exec_run(HostExec *h, const SpawnOptions *o, SpawnResult *ret)
{
        SpawnOptions copy = *o;

        if (o->pre_exec)
                return -EINVAL;
        if (h->enter) {
                copy.pre_exec = enter_namespaces;
                copy.pre_exec_userdata = h;
        }
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
