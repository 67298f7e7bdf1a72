/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "net-local.h"
#include "spawn.h"
#include "step-util.h"
#include "strutil.h"

int step_parse_arg(const char *arg, const ModelSchema *m, StepResult *ret, json_object **ret_doc)
{
        _cleanup_free_ char *err = NULL;
        int r;

        r = model_parse_arg(arg, m, ret_doc, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                step_fail(ret, -1, "%s", strna(err));
                return 0;
        }
        return 1;
}

int step_succeed_json(StepResult *ret, json_object *o)
{
        char *text = json_to_string(o, 0);

        if (!text)
                return -ENOMEM;
        return step_succeed(ret, text);
}

int step_set_result(StepResult *ret, json_object *o, int exit_code, const char *error)
{
        free(ret->output);
        ret->output = NULL;
        free(ret->error);
        ret->error = NULL;
        if (o) {
                ret->output = json_to_string(o, 0);
                if (!ret->output)
                        return -ENOMEM;
        }
        if (!isempty(error)) {
                ret->error = strdup(error);
                if (!ret->error)
                        return -ENOMEM;
        }
        ret->exit_code = exit_code;
        return 0;
}

int step_host_run(const StepContext *ctx, char *const *argv, usec_t timeout, SpawnResult *res)
{
        SpawnOptions o = { .argv = argv, .timeout = timeout };

        return host_exec_run(ctx->host, &o, res);
}

int json_add_or_null(json_object *o, const char *key, json_object *v)
{
        if (v)
                return json_add(o, key, v);
        return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
}

int step_lab_patterns(const StepContext *ctx, char ***ret)
{
        return local_nic_patterns_parse(ctx->config ? ctx->config->lab_nics : NULL, ret);
}

static int result_copy(const StepResult *from, StepResult *to)
{
        *to = (StepResult){ .exit_code = from->exit_code, .end_runner = from->end_runner };
        if ((from->output && !(to->output = strdup(from->output))) ||
            (from->error && !(to->error = strdup(from->error)))) {
                step_result_done(to);
                return -ENOMEM;
        }
        return 0;
}

int step_coalesce(StepCoalescer *c, const char *key, int (*fn)(void *userdata, StepResult *ret),
                  void *userdata, StepResult *ret)
{
        _cleanup_free_ char *mine = strdup(strempty(key));
        int r;

        if (!mine)
                return -ENOMEM;
        pthread_mutex_lock(&c->lock);
        if (c->running && streq(c->running_key, mine)) {
                unsigned long gen = c->finished;

                log_info("the same check is running: answering with its result");
                while (c->finished == gen)
                        pthread_cond_wait(&c->done, &c->lock);
                r = streq_ptr(c->last_key, mine) ? result_copy(&c->last, ret) : -EAGAIN;
                pthread_mutex_unlock(&c->lock);
                if (r != -EAGAIN)
                        return r;
                pthread_mutex_lock(&c->lock);
        }
        while (c->running)
                pthread_cond_wait(&c->done, &c->lock);
        c->running = true;
        c->running_key = mine;
        pthread_mutex_unlock(&c->lock);

        r = fn(userdata, ret);

        pthread_mutex_lock(&c->lock);
        step_result_done(&c->last);
        free(c->last_key);
        c->last_key = NULL;
        if (r >= 0 && result_copy(ret, &c->last) >= 0)
                c->last_key = strdup(mine);
        c->running = false;
        c->running_key = NULL;
        c->finished++;
        pthread_cond_broadcast(&c->done);
        pthread_mutex_unlock(&c->lock);
        return r;
}

typedef struct Pool {
        size_t n;
        atomic_size_t next;
        void (*fn)(size_t i, void *userdata);
        void *userdata;
} Pool;

static void *pool_worker(void *userdata)
{
        Pool *p = userdata;

        for (;;) {
                size_t i = atomic_fetch_add(&p->next, 1);
                if (i >= p->n)
                        return NULL;
                p->fn(i, p->userdata);
        }
}

int parallel_for(size_t n, unsigned max_threads, void (*fn)(size_t i, void *userdata), void *userdata)
{
        Pool p = { .n = n, .fn = fn, .userdata = userdata };
        pthread_t threads[64];
        size_t extra = MIN(n, (size_t)MIN(MAX(max_threads, 1u), 64u)) - (n > 0 ? 1 : 0), started = 0;

        atomic_init(&p.next, 0);
        for (size_t t = 0; t < extra; t++) {
                if (pthread_create(&threads[t], NULL, pool_worker, &p) != 0)
                        break; /* fewer workers; the calling thread still runs everything left */
                started++;
        }
        pool_worker(&p);
        for (size_t t = 0; t < started; t++)
                pthread_join(threads[t], NULL);
        return 0;
}

char *go_multierror_format(char *const *errors)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_SMALL_FILE);
        size_t n = strv_length(errors);
        char *ret = NULL;

        if (buf_appendf(&b, "%zu error%s occurred:\n", n, n == 1 ? "" : "s") < 0)
                return NULL;
        STRV_FOREACH (e, errors)
                if (buf_appendf(&b, "\t* %s\n", *e) < 0)
                        return NULL;
        if (buf_append_char(&b, '\n') < 0 || buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}

char *go_errno_string(int e)
{
        return strdup_lower(strerror(e));
}

char *go_strv_format(char *const *l)
{
        _cleanup_free_ char *j = strv_join(l, " ");

        return j ? strdup_printf("[%s]", j) : NULL;
}
