/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "fdutil.h"
#include "spawn.h"
#include "strutil.h"

extern char **environ;

void spawn_result_done(SpawnResult *r)
{
        free(r->out);
        free(r->err);
        *r = (SpawnResult){};
}

/* What the service manager gives this process alone (sd_notify(3),
 * sd_listen_fds(3)): a child that inherited them would speak for us (podman
 * even hands $NOTIFY_SOCKET on to its containers). */
static bool env_is_ours_alone(const char *e)
{
        static const char *const names[] = { "NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID=",
                                             "LISTEN_FDS=",    "LISTEN_PID=",    "LISTEN_FDNAMES=" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (startswith(e, names[i]))
                        return true;
        return false;
}

/* The child's environment: env (or ours, less what is ours alone) with
 * env_extra replacing entries of the same name. The strings are borrowed. */
static char **build_env(const SpawnOptions *o)
{
        char *const *base = o->env ? o->env : environ;
        size_t nb = strv_length(base), ne = strv_length(o->env_extra), n = 0;
        char **envp = calloc(nb + ne + 1, sizeof(char *));

        if (!envp)
                return NULL;
        for (size_t i = 0; i < nb; i++) {
                size_t kl = strcspn(base[i], "=");
                bool replaced = !o->env && env_is_ours_alone(base[i]);
                for (size_t j = 0; j < ne && !replaced; j++)
                        replaced = strneq(o->env_extra[j], base[i], kl) && o->env_extra[j][kl] == '=';
                if (!replaced)
                        envp[n++] = base[i];
        }
        for (size_t j = 0; j < ne; j++)
                envp[n++] = o->env_extra[j];
        return envp;
}

static const char *env_lookup(char *const *envp, const char *name)
{
        size_t l = strlen(name);

        STRV_FOREACH (e, envp)
                if (strneq(*e, name, l) && (*e)[l] == '=')
                        return *e + l + 1;
        return NULL;
}

/* Runs in the child: only async-signal-safe calls from here on. */
_noreturn_ static void child_exec(const SpawnOptions *o, char **envp, const char *path_env, int in_fd,
                                  int out_fd, int err_fd, int report_fd, const int *keep, size_t n_keep,
                                  char *pathbuf, size_t pathbuf_size)
{
        const char *file = o->path ? o->path : o->argv[0];
        int e = 0;

        (void)setpgid(0, 0);
        {
                sigset_t all;
                sigemptyset(&all);
                (void)sigprocmask(SIG_SETMASK, &all, NULL);
                for (int s = 1; s < NSIG; s++)
                        if (s != SIGKILL && s != SIGSTOP)
                                (void)signal(s, SIG_DFL);
        }

        if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
            dup2(err_fd, STDERR_FILENO) < 0) {
                e = errno;
                goto fail;
        }
        /* keep[] is report_fd and o->keep_fds */
        {
                int r = close_all_fds(keep, n_keep);
                if (r < 0) {
                        e = -r;
                        goto fail;
                }
        }
        if (o->pre_exec) {
                int r = o->pre_exec(o->pre_exec_userdata);
                if (r < 0) {
                        e = -r;
                        goto fail;
                }
        }
        if (o->cwd && chdir(o->cwd) < 0) {
                e = errno;
                goto fail;
        }

        if (strchr(file, '/')) {
                execve(file, o->argv, envp);
                e = errno;
                goto fail;
        }

        e = ENOENT;
        for (const char *p = path_env ? path_env
                                      : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
             ;) {
                size_t dl = strcspn(p, ":"), fl = strlen(file);
                if (dl + 1 + fl + 1 <= pathbuf_size) {
                        memcpy(pathbuf, p, dl);
                        if (dl == 0)
                                pathbuf[dl++] = '.';
                        pathbuf[dl] = '/';
                        memcpy(pathbuf + dl + 1, file, fl + 1);
                        execve(pathbuf, o->argv, envp);
                        if (errno == EACCES)
                                e = EACCES;
                        else if (errno != ENOENT && errno != ENOTDIR)
                                e = errno;
                }
                p += strcspn(p, ":");
                if (!*p)
                        break;
                p++;
        }
fail:
        (void)!write(report_fd, &e, sizeof(e));
        _exit(127);
}

typedef struct Stream {
        int fd;
        bool is_stderr;
        Buf *buf;
        bool *truncated;
        Buf line;
} Stream;

static void emit_lines(const SpawnOptions *o, Stream *s, const char *data, size_t n, bool flush)
{
        if (!o->on_line)
                return;
        for (size_t i = 0; i < n; i++) {
                if (data[i] == '\n' || data[i] == '\r') {
                        if (s->line.len > 0)
                                o->on_line(o->userdata, buf_str(&s->line), s->is_stderr);
                        buf_reset(&s->line);
                } else if (buf_append_char(&s->line, data[i]) < 0) {
                        /* an absurdly long line: deliver what we have */
                        buf_init(&s->line, s->line.max);
                }
        }
        if (flush && s->line.len > 0) {
                o->on_line(o->userdata, buf_str(&s->line), s->is_stderr);
                buf_reset(&s->line);
        }
}

static void stream_take(const SpawnOptions *o, Stream *s, const char *data, size_t n)
{
        size_t room = s->buf->max - s->buf->len;

        emit_lines(o, s, data, n, false);
        if (n > room) {
                *s->truncated = true;
                n = room;
        }
        if (n > 0 && buf_append(s->buf, data, n) < 0)
                *s->truncated = true;
}

static void kill_group(pid_t pid, int sig)
{
        if (kill(-pid, sig) < 0)
                (void)kill(pid, sig);
}

int spawn_run(const SpawnOptions *o, SpawnResult *ret)
{
        _cleanup_free_ char **envp = NULL;
        _cleanup_free_ char *pathbuf = NULL;
        _cleanup_free_ int *keep = NULL;
        _cleanup_close_ int out_r = -1, out_w = -1, err_r = -1, err_w = -1, in_r = -1, in_w = -1, rep_r = -1,
                            rep_w = -1;
        _cleanup_buf_ Buf out = BUF_INIT(o->output_max ? o->output_max : BUF_MAX_PROCESS_OUTPUT);
        _cleanup_buf_ Buf err = BUF_INIT(o->output_max ? o->output_max : BUF_MAX_PROCESS_OUTPUT);
        SpawnResult res = {};
        const void *in_data = o->stdin_data;
        size_t in_left = o->stdin_len;
        usec_t deadline = 0, kill_at = 0;
        int p[2], status = 0, child_errno = 0;
        pid_t pid;

        if (!o->argv || !o->argv[0])
                return -EINVAL;

        envp = build_env(o);
        pathbuf = malloc(PATH_MAX * 2);
        keep = calloc(o->n_keep_fds + 1, sizeof(int));
        if (!envp || !pathbuf || !keep)
                return -ENOMEM;
        if (o->n_keep_fds > 0)
                memcpy(keep + 1, o->keep_fds, o->n_keep_fds * sizeof(int));

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        out_r = p[0], out_w = p[1];
        if (o->merge_output) {
                err_w = fcntl(out_w, F_DUPFD_CLOEXEC, 3);
                if (err_w < 0)
                        return negative_errno();
        } else {
                if (pipe2(p, O_CLOEXEC) < 0)
                        return negative_errno();
                err_r = p[0], err_w = p[1];
        }
        if (in_data) {
                if (pipe2(p, O_CLOEXEC) < 0)
                        return negative_errno();
                in_r = p[0], in_w = p[1];
                (void)fcntl(in_w, F_SETFL, O_NONBLOCK);
        } else {
                in_r = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (in_r < 0)
                        return negative_errno();
        }
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        rep_r = p[0], rep_w = p[1];
        keep[0] = rep_w;

        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0)
                child_exec(o, envp, env_lookup(envp, "PATH"), in_r, out_w, err_w, rep_w, keep,
                           o->n_keep_fds + 1, pathbuf, PATH_MAX * 2);

        /* parent */
        out_w = safe_close(out_w);
        err_w = safe_close(err_w);
        in_r = safe_close(in_r);
        rep_w = safe_close(rep_w);
        if (!in_data)
                in_w = safe_close(in_w);
        else if (in_left == 0)
                in_w = safe_close(in_w);

        if (o->timeout > 0)
                deadline = now_usec(CLOCK_MONOTONIC) + o->timeout;

        Stream streams[2] = {
                { .fd = out_r, .is_stderr = false, .buf = &out, .truncated = &res.out_truncated },
                { .fd = err_r,
                  .is_stderr = true,
                  .buf = o->merge_output ? &out : &err,
                  .truncated = o->merge_output ? &res.out_truncated : &res.err_truncated },
        };
        streams[0].line = BUF_INIT(64 * 1024);
        streams[1].line = BUF_INIT(64 * 1024);

        for (;;) {
                struct pollfd pf[4];
                nfds_t n = 0;
                int timeout_ms = -1;
                usec_t now = now_usec(CLOCK_MONOTONIC);

                for (int i = 0; i < 2; i++)
                        if (streams[i].fd >= 0)
                                pf[n++] = (struct pollfd){ .fd = streams[i].fd, .events = POLLIN };
                if (in_w >= 0)
                        pf[n++] = (struct pollfd){ .fd = in_w, .events = POLLOUT };
                if (n == 0)
                        break;
                if (kill_at == 0 && stop_fd() >= 0)
                        pf[n++] = (struct pollfd){ .fd = stop_fd(), .events = POLLIN };

                if (kill_at == 0 && stop_requested()) {
                        res.stopped = true;
                        kill_group(pid, SIGTERM);
                        kill_at = now + (o->kill_grace ? o->kill_grace : 5 * USEC_PER_SEC);
                }
                if (deadline > 0 && kill_at == 0 && now >= deadline) {
                        res.timed_out = true;
                        kill_group(pid, SIGTERM);
                        kill_at = now + (o->kill_grace ? o->kill_grace : 5 * USEC_PER_SEC);
                }
                if (kill_at > 0 && now >= kill_at) {
                        kill_group(pid, SIGKILL);
                        kill_at = USEC_INFINITY;
                }
                {
                        usec_t next = kill_at > 0 && kill_at != USEC_INFINITY ? kill_at
                                      : kill_at == 0 && deadline > 0          ? deadline
                                                                              : 0;
                        if (next > 0)
                                timeout_ms = next > now ? (int)MIN((next - now) / USEC_PER_MSEC + 1,
                                                                   (usec_t)60000)
                                                        : 0;
                }

                if (poll(pf, n, timeout_ms) < 0) {
                        if (errno == EINTR)
                                continue;
                        kill_group(pid, SIGKILL);
                        (void)waitpid(pid, NULL, 0);
                        buf_release(&streams[0].line);
                        buf_release(&streams[1].line);
                        return negative_errno();
                }

                for (nfds_t i = 0; i < n; i++) {
                        if (!pf[i].revents || pf[i].fd == stop_fd())
                                continue;
                        if (pf[i].fd == in_w) {
                                ssize_t k = write(in_w, in_data, in_left);
                                if (k > 0) {
                                        in_data = (const char *)in_data + k;
                                        in_left -= (size_t)k;
                                }
                                if (in_left == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
                                        in_w = safe_close(in_w);
                                continue;
                        }
                        for (int s = 0; s < 2; s++) {
                                char chunk[16384];
                                ssize_t k;
                                if (streams[s].fd != pf[i].fd)
                                        continue;
                                k = read(streams[s].fd, chunk, sizeof(chunk));
                                if (k > 0)
                                        stream_take(o, &streams[s], chunk, (size_t)k);
                                else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
                                        emit_lines(o, &streams[s], NULL, 0, true);
                                        if (s == 0)
                                                out_r = -1;
                                        else
                                                err_r = -1;
                                        streams[s].fd = safe_close(streams[s].fd);
                                }
                        }
                }
        }

        buf_release(&streams[0].line);
        buf_release(&streams[1].line);

        /* The pipes closed; the child may still linger (it closed its
         * outputs). Keep honouring the timeout while reaping. */
        for (;;) {
                pid_t w = waitpid(pid, &status, deadline > 0 || kill_at > 0 ? WNOHANG : 0);
                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        return negative_errno();
                if (w == 0) {
                        usec_t now = now_usec(CLOCK_MONOTONIC);
                        if (kill_at == 0 && deadline > 0 && now >= deadline) {
                                res.timed_out = true;
                                kill_group(pid, SIGTERM);
                                kill_at = now + (o->kill_grace ? o->kill_grace : 5 * USEC_PER_SEC);
                        } else if (kill_at > 0 && kill_at != USEC_INFINITY && now >= kill_at) {
                                kill_group(pid, SIGKILL);
                                kill_at = USEC_INFINITY;
                        }
                        struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };
                        nanosleep(&ts, NULL);
                }
        }

        if (read(rep_r, &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno) &&
            child_errno > 0)
                return -child_errno;

        if (WIFEXITED(status))
                res.exit_status = WEXITSTATUS(status);
        else {
                res.exit_status = -1;
                res.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        }
        if (buf_take(&out, &res.out, &res.out_len) < 0 || buf_take(&err, &res.err, &res.err_len) < 0) {
                spawn_result_done(&res);
                return -ENOMEM;
        }
        *ret = res;
        return 0;
}

int spawn_simple(char *const *argv, usec_t timeout, SpawnResult *ret)
{
        SpawnOptions o = { .argv = argv, .timeout = timeout };

        return spawn_run(&o, ret);
}

char *spawn_output_tail(const char *s, size_t max)
{
        size_t n = strlen(s);

        if (n <= max)
                return strdup(s);
        return strdup_printf("... %s", s + n - max);
}
