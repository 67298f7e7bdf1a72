/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cleanup.h"
#include "spawn.h"
#include "log.h"
#include "steps.h"
#include "strutil.h"

static pthread_mutex_t singleton_lock = PTHREAD_MUTEX_INITIALIZER;
static bool singleton_running[_STEP_TYPE_MAX];

void step_result_done(StepResult *r)
{
        free(r->output);
        free(r->error);
        *r = (StepResult){};
}

int step_fail(StepResult *r, int exit_code, const char *fmt, ...)
{
        va_list ap;

        free(r->error);
        r->error = NULL;
        r->exit_code = exit_code;
        va_start(ap, fmt);
        if (vasprintf(&r->error, fmt, ap) < 0)
                r->error = NULL;
        va_end(ap);
        return 0;
}

int step_succeed(StepResult *r, char *output)
{
        free(r->output);
        r->output = output;
        r->exit_code = 0;
        return 0;
}

void step_run(const StepContext *ctx, const char *step_type, char *const *args, StepResult *ret)
{
        StepType type = step_type_from_string(step_type);
        const StepHandler *h = type >= 0 ? step_handler_find(type) : NULL;
        int n = (int)strv_length(args), r;

        *ret = (StepResult){};
        if (!h) {
                step_fail(ret, -1, "failed to find action for step type %s", strempty(step_type));
                return;
        }
        if (n < h->min_args || n > h->max_args) {
                if (h->min_args == h->max_args)
                        step_fail(ret, -1, "%s cmd accepts only %d params", step_type, h->min_args);
                else
                        step_fail(ret, -1, "%s cmd accepts %d to %d params", step_type, h->min_args,
                                  h->max_args);
                return;
        }

        if (h->flags & STEP_SINGLETON) {
                bool busy;
                pthread_mutex_lock(&singleton_lock);
                busy = singleton_running[type];
                singleton_running[type] = true;
                pthread_mutex_unlock(&singleton_lock);
                if (busy) {
                        /* the Go agent answers a concurrent request with an empty success */
                        log_info("another %s step is running, skipping this one", step_type);
                        return;
                }
        }

        r = h->run(ctx, args, ret);
        if (r < 0 && ret->exit_code == 0)
                step_fail(ret, -1, "%s failed: %s", step_type, strerror(-r));

        if (h->flags & STEP_SINGLETON) {
                pthread_mutex_lock(&singleton_lock);
                singleton_running[type] = false;
                pthread_mutex_unlock(&singleton_lock);
        }
}

int step_host_command(const StepContext *ctx, char *const *argv, usec_t timeout, StepResult *ret)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        SpawnOptions o = { .argv = argv, .timeout = timeout };
        int r;

        r = host_exec_run(ctx->host, &o, &res);
        if (r == -ENOENT)
                return step_fail(ret, -1, "exec: \"%s\": executable file not found in $PATH", argv[0]);
        if (r < 0)
                return step_fail(ret, -1, "cannot run %s: %s", argv[0], strerror(-r));

        step_result_from_spawn(ret, &res);
        return 0;
}

void step_result_from_spawn(StepResult *ret, SpawnResult *res)
{
        ret->exit_code = res->exit_status;
        if (res->timed_out)
                ret->exit_code = 124; /* as timeout(1), which the Go agent wraps around commands */
        ret->output = TAKE_PTR(res->out);
        if (res->err_len > 0)
                ret->error = TAKE_PTR(res->err);
        else if (ret->exit_code != 0)
                ret->error = strdup_printf("exit status %d", ret->exit_code);
}

int step_run_applet(const StepContext *ctx, char *const *argv, usec_t timeout, StepResult *ret)
{
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_spawn_result_ SpawnResult res = {};
        SpawnOptions o = {};
        int r;

        for (char **e = environ; *e; e++)
                if (!startswith(*e, "CRADLE_LOG_TARGET=") && !startswith(*e, "PULL_SECRET_TOKEN=") &&
                    strv_extend(&env, *e) < 0)
                        return -ENOMEM;
        if (!isempty(ctx->config->token) &&
            strv_extendf(&env, "PULL_SECRET_TOKEN=%s", ctx->config->token) < 0)
                return -ENOMEM;

        o = (SpawnOptions){ .argv = argv, .path = "/proc/self/exe", .env = env, .timeout = timeout };
        r = spawn_run(&o, &res);
        if (r < 0)
                return step_fail(ret, -1, "cannot run cradle's %s: %s", argv[0], strerror(-r));
        step_result_from_spawn(ret, &res);
        return 0;
}
