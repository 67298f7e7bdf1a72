/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Running a command on the host. When cradle already runs in the host's
 * namespaces (the systemd unit on the live ISO, or a binary on the host),
 * commands run directly. When it runs in a "--pid=host" container (the
 * upstream next-step-runner and installer images), commands enter PID 1's
 * namespaces first, as the Go programs do with
 * "nsenter --target 1 --cgroup --mount --ipc --net [--pid] --": here with
 * setns(2) between fork and exec, so no nsenter binary is needed.
 *
 * Detection compares our mount namespace with PID 1's; a mode forces
 * either way. PATH is searched after entering, i.e. on the host.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "macro.h"
#include "spawn.h"

typedef enum HostExecMode {
        HOST_EXEC_AUTO,
        HOST_EXEC_DIRECT, /* run as we are */
        HOST_EXEC_ENTER, /* always enter PID 1's namespaces */
        _HOST_EXEC_MODE_MAX,
        _HOST_EXEC_MODE_INVALID = -22,
} HostExecMode;

typedef enum HostNamespace {
        HOST_NS_CGROUP = 1 << 0,
        HOST_NS_IPC = 1 << 1,
        HOST_NS_NET = 1 << 2,
        HOST_NS_UTS = 1 << 3,
        HOST_NS_MNT = 1 << 4,
} HostNamespace;

/* The agent's set (nsenter --cgroup --mount --ipc --net). */
#define HOST_NS_AGENT (HOST_NS_CGROUP | HOST_NS_IPC | HOST_NS_NET | HOST_NS_MNT)

typedef struct HostExec HostExec;

HostExecMode host_exec_mode_from_string(const char *s); /* "auto", "direct", "enter" */
const char *host_exec_mode_to_string(HostExecMode m);

/* With HOST_EXEC_AUTO the decision is made here, once. Entering needs
 * access to /proc/1/ns (root); -EPERM otherwise. */
int host_exec_new(HostExecMode mode, unsigned namespaces, HostExec **ret);
/* The same with another process standing for the host (tests, or a host
 * whose init is not PID 1 in our view). */
int host_exec_new_target(HostExecMode mode, unsigned namespaces, pid_t target, HostExec **ret);
HostExec *host_exec_free(HostExec *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(HostExec *, host_exec_free)

bool host_exec_enters(const HostExec *h);

/* spawn_run() on the host. o->pre_exec must be NULL. */
int host_exec_run(HostExec *h, const SpawnOptions *o, SpawnResult *ret);

/* The upstream error text for a failed host command:
 * "failed executing <argv>, Error exit status N, LastOutput \"... <tail>\""
 * with registered secrets scrubbed; allocated. */
char *host_exec_failure_text(char *const *argv, int r, const SpawnResult *res);
