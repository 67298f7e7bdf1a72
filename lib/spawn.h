/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Running other programs: an argv array (never a shell string), an
 * environment, a timeout that kills the whole process group, captured
 * stdout/stderr with a size cap, and optional per-line callbacks for tools
 * whose progress we parse (coreos-installer, rsync).
 *
 * When the process is asked to stop (timeutil.h's stop_request(), e.g. on
 * SIGTERM), running children are terminated the way a timeout terminates
 * them, so that a service stop never waits for a long command.
 *
 * The child gets standard input, output and error and the descriptors in
 * keep_fds, nothing else: every other descriptor is closed in the child
 * before the hook runs (fdutil.h), whether or not it is O_CLOEXEC.
 *
 * A hook runs in the child between fork and exec (async-signal-safe code
 * only): the installer uses it to enter PID 1's namespaces with setns(2).
 * PATH is searched in the child, after the hook, so a binary is found where
 * it will run.
 */

#include <stdbool.h>
#include <stddef.h>

#include "timeutil.h"

typedef void (*SpawnLineCallback)(void *userdata, const char *line, bool is_stderr);
typedef int (*SpawnPreExec)(void *userdata);

typedef struct SpawnOptions {
        char *const *argv;
        const char *path; /* the executable; NULL: argv[0], searched in PATH (e.g. "/proc/self/exe"
                           * to run our own binary under another applet name) */
        char *const *env; /* the whole environment; NULL inherits ours */
        char *const *env_extra; /* "NAME=value" entries added or replaced */
        const char *cwd;
        const void *stdin_data; /* NULL: stdin is /dev/null */
        size_t stdin_len;
        usec_t timeout; /* 0: none. Then SIGTERM to the group, SIGKILL after kill_grace */
        usec_t kill_grace; /* 0: 5 s */
        size_t output_max; /* per stream; 0: BUF_MAX_PROCESS_OUTPUT. Excess is dropped, flagged */
        bool merge_output; /* stderr goes to the stdout buffer, in order */
        SpawnLineCallback on_line; /* lines split at \n or \r, without the terminator */
        void *userdata;
        SpawnPreExec pre_exec; /* returns 0 or -errno; a failure aborts the exec */
        void *pre_exec_userdata;
        const int *keep_fds; /* left open for the hook, or handed to the program (then not O_CLOEXEC) */
        size_t n_keep_fds;
} SpawnOptions;

typedef struct SpawnResult {
        int exit_status; /* exit code; -1 when killed by a signal */
        int signal; /* the terminating signal, or 0 */
        bool timed_out;
        bool stopped; /* killed because a stop was requested (timeutil.h stop_request()) */
        char *out;
        size_t out_len;
        bool out_truncated;
        char *err;
        size_t err_len;
        bool err_truncated;
} SpawnResult;

void spawn_result_done(SpawnResult *r);
#define _cleanup_spawn_result_ _cleanup_(spawn_result_done)

/* Runs the program to completion. Returns 0 when it ran (see exit_status),
 * -ENOENT/-EACCES when it could not be executed, the pre_exec hook's error,
 * or another -errno for setup failures. ret is filled on 0 only. */
int spawn_run(const SpawnOptions *o, SpawnResult *ret);

/* Convenience: argv with default options; output captured. */
int spawn_simple(char *const *argv, usec_t timeout, SpawnResult *ret);

/* The last max bytes of s (for error texts), prefixed "... " when cut. */
char *spawn_output_tail(const char *s, size_t max);
