/* SPDX-License-Identifier: Apache-2.0 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "assisted/assisted.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "media.h"
#include "notify.h"
#include "runner.h"
#include "steps.h"
#include "uuid.h"
#include "strutil.h"

#define DEDUP_WINDOW (60 * 60 * USEC_PER_SEC)
#define MEDIA_PATH "/run/media/iso"

typedef struct DedupEntry {
        char *output;
        usec_t when;
} DedupEntry;

typedef struct Runner {
        atomic_int refs;
        /* owned copies: detached step threads may outlive runner_run()'s caller */
        AgentConfig config_copy;
        const AgentConfig *config;
        char *infra_env_id;
        char *host_id;
        HostExec *host;

        pthread_mutex_t lock;
        pthread_cond_t cond;
        unsigned running;
        bool closing; /* replies of steps still running are dropped */
        bool end_requested; /* a step asked the loop to end */
        DedupEntry dedup[_STEP_TYPE_MAX];
} Runner;

typedef struct StepJob {
        Runner *runner;
        char *step_type;
        char *step_id;
        char **args;
        char request_id[UUID_STRING_MAX];
} StepJob;

static void dedup_flush_locked(Runner *r)
{
        for (size_t i = 0; i < ELEMENTSOF(r->dedup); i++) {
                free(r->dedup[i].output);
                r->dedup[i] = (DedupEntry){};
        }
}

static Runner *runner_unref(Runner *r)
{
        if (!r || atomic_fetch_sub(&r->refs, 1) > 1)
                return NULL;
        dedup_flush_locked(r);
        host_exec_free(r->host);
        agent_config_done(&r->config_copy);
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->cond);
        free(r->infra_env_id);
        free(r->host_id);
        free(r);
        return NULL;
}

static void step_job_free(StepJob *j)
{
        if (!j)
                return;
        free(j->step_type);
        free(j->step_id);
        strv_free(j->args);
        free(j);
}

static void on_retry(void *userdata, const char *method, const char *url, unsigned attempt,
                     unsigned attempts, usec_t delay, const char *reason)
{
        (void)userdata;
        log_info("Request will be retried: %s %s, attempt %u of %u in %.2fs (%s)", method, url, attempt,
                 attempts, (double)delay / USEC_PER_SEC, reason);
}

static int make_client(const AgentConfig *c, AssistedClient **ret, char **reterr)
{
        HttpRetryPolicy retry = HTTP_RETRY_GO_AGENT;
        AssistedClientOptions o = {
                .url = c->url,
                .ca_file = c->cacert,
                .insecure = c->insecure,
                .token = c->token,
                .agent_version = c->agent_version,
                .on_retry = on_retry,
        };

        retry.base_delay = (usec_t)(c->transport_retry_delay * USEC_PER_SEC);
        retry.max_delay = retry.base_delay * 5;
        o.retry = retry;
        return assisted_client_new(&o, ret, reterr);
}

static json_object *build_reply(const char *step_type, const char *step_id, const StepResult *res)
{
        _cleanup_(json_object_putp) json_object *o = json_new_object();

        /* StepReply, every field omitempty, keys in the Go model's order */
        if (!o || json_add_string_nonempty(o, "error", res->error) < 0 ||
            json_add_int64_nonzero(o, "exit_code", res->exit_code) < 0 ||
            json_add_string_nonempty(o, "output", res->output) < 0 ||
            json_add_string_nonempty(o, "step_id", step_id) < 0 ||
            json_add_string_nonempty(o, "step_type", step_type) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* True when an identical successful output of this type was posted within
 * the hour: the Go agent does not send it again. */
static bool dedup_suppresses(Runner *r, StepType type, const StepResult *res)
{
        bool same;

        if (type < 0 || res->exit_code != 0)
                return false;
        pthread_mutex_lock(&r->lock);
        same = r->dedup[type].output && streq(r->dedup[type].output, strempty(res->output)) &&
               now_usec(CLOCK_MONOTONIC) - r->dedup[type].when < DEDUP_WINDOW;
        pthread_mutex_unlock(&r->lock);
        return same;
}

static void dedup_remember(Runner *r, StepType type, const StepResult *res)
{
        if (type < 0 || res->exit_code != 0)
                return;
        pthread_mutex_lock(&r->lock);
        free(r->dedup[type].output);
        r->dedup[type].output = strdup(strempty(res->output));
        r->dedup[type].when = now_usec(CLOCK_MONOTONIC);
        pthread_mutex_unlock(&r->lock);
}

static void post_reply(Runner *r, StepJob *j, const StepResult *res)
{
        _cleanup_(assisted_client_freep) AssistedClient *client = NULL;
        _cleanup_(json_object_putp) json_object *reply = NULL;
        _cleanup_free_ char *err = NULL;
        StepType type = step_type_from_string(j->step_type);
        bool quiet = false;
        int q;

        {
                const StepHandler *h = type >= 0 ? step_handler_find(type) : NULL;
                quiet = h && (h->flags & STEP_QUIET_OUTPUT);
        }

        pthread_mutex_lock(&r->lock);
        if (r->closing) {
                pthread_mutex_unlock(&r->lock);
                log_info("not sending the reply of step %s: the service told the agent to exit", j->step_id);
                return;
        }
        pthread_mutex_unlock(&r->lock);

        if (dedup_suppresses(r, type, res)) {
                log_info("Result for %s already exists in assisted service", j->step_type);
                return;
        }

        log_info("Sending step %s reply output %s error %s exit-code %d", j->step_id,
                 quiet ? "<not logged>" : strempty(res->output), strempty(res->error), res->exit_code);

        reply = build_reply(j->step_type, j->step_id, res);
        if (!reply) {
                log_oom();
                return;
        }
        q = make_client(r->config, &client, &err);
        if (q < 0) {
                log_error_errno(q, "Error posting step reply: %s", strna(err));
                return;
        }
        assisted_client_set_request_id(client, j->request_id);
        q = assisted_post_step_reply(client, r->infra_env_id, r->host_id, reply, NULL, &err);
        if (q < 0) {
                log_warning_errno(q, "Error posting step reply: %s", strna(err));
                return;
        }
        dedup_remember(r, type, res);
}

static void *step_thread(void *userdata)
{
        StepJob *j = userdata;
        Runner *r = j->runner;
        StepContext ctx = {
                .config = r->config,
                .host_id = r->host_id,
                .infra_env_id = r->infra_env_id,
                .step_id = j->step_id,
                .host = r->host,
        };
        StepResult res = {};
        bool media = !r->config->dry_run;

        {
                LOG_CONTEXT_PUSH("STEP_TYPE", j->step_type);
                LOG_CONTEXT_PUSH("STEP_ID", j->step_id);
                LOG_CONTEXT_PUSH("REQUEST_ID", j->request_id);
                _cleanup_free_ char *media_error = NULL;

                if (media && media_check(MEDIA_PATH, &media_error) < 0) {
                        /* the step is not run at all */
                        res.exit_code = MEDIA_DISCONNECTED_EXIT_CODE;
                        res.error = TAKE_PTR(media_error);
                } else {
                        log_debug("running step %s", j->step_id);
                        step_run(&ctx, j->step_type, j->args, &res);
                        if (media && res.exit_code != 0 && media_check(MEDIA_PATH, &media_error) < 0) {
                                res.exit_code = MEDIA_DISCONNECTED_EXIT_CODE;
                                free(res.error);
                                res.error = TAKE_PTR(media_error);
                        }
                }
                post_reply(r, j, &res);
        }

        pthread_mutex_lock(&r->lock);
        if (res.end_runner)
                r->end_requested = true;
        r->running--;
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);

        step_result_done(&res);
        step_job_free(j);
        runner_unref(r);
        return NULL;
}

typedef struct Instruction {
        char *step_type;
        char *step_id;
        char **args;
} Instruction;

static const JsonDispatch instruction_table[] = {
        { "step_type", json_dispatch_string, offsetof(Instruction, step_type), 0 },
        { "step_id", json_dispatch_string, offsetof(Instruction, step_id), 0 },
        { "args", json_dispatch_strv, offsetof(Instruction, args), JSON_NULLABLE },
        {},
};

static int start_step(Runner *r, json_object *instruction, const char *request_id)
{
        _cleanup_free_ char *err = NULL;
        Instruction in = {};
        StepJob *j;
        pthread_attr_t attr;
        pthread_t t;
        int q;

        q = json_dispatch(instruction, instruction_table, &in, 0, &err);
        if (q < 0) {
                free(in.step_type);
                free(in.step_id);
                strv_free(in.args);
                return log_warning_errno(q, "ignoring a malformed instruction: %s", strna(err));
        }
        j = calloc(1, sizeof(*j));
        if (!j) {
                free(in.step_type);
                free(in.step_id);
                strv_free(in.args);
                return log_oom();
        }
        *j = (StepJob){ .runner = r, .step_type = in.step_type, .step_id = in.step_id, .args = in.args };
        if (!j->step_type)
                j->step_type = strdup("");
        if (!j->step_id)
                j->step_id = strdup("");
        if (!j->args)
                j->args = calloc(1, sizeof(char *));
        if (!j->step_type || !j->step_id || !j->args) {
                step_job_free(j);
                return log_oom();
        }
        snprintf(j->request_id, sizeof(j->request_id), "%s", request_id);

        pthread_mutex_lock(&r->lock);
        while (r->running >= (unsigned)r->config->max_concurrent_steps)
                pthread_cond_wait(&r->cond, &r->lock);
        r->running++;
        pthread_mutex_unlock(&r->lock);
        atomic_fetch_add(&r->refs, 1);

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        q = -pthread_create(&t, &attr, step_thread, j);
        pthread_attr_destroy(&attr);
        if (q < 0) {
                pthread_mutex_lock(&r->lock);
                r->running--;
                pthread_mutex_unlock(&r->lock);
                atomic_fetch_sub(&r->refs, 1);
                step_job_free(j);
                return log_error_errno(q, "cannot start a thread for a step: %m");
        }
        return 0;
}

static bool runner_should_end(Runner *r)
{
        bool end;

        pthread_mutex_lock(&r->lock);
        end = r->end_requested;
        pthread_mutex_unlock(&r->lock);
        return end || agent_config_fake_rebooted(r->config);
}

/* Sleeps d, waking early when a step asked the loop to end. */
static int sleep_watching(Runner *r, usec_t d)
{
        usec_t until = now_usec(CLOCK_MONOTONIC) + d;

        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                int q;
                agent_watchdog_ping();
                if (runner_should_end(r))
                        return 1;
                if (now >= until)
                        return 0;
                q = sleep_usec(MIN(until - now, 500 * USEC_PER_MSEC));
                if (q < 0)
                        return q;
        }
}

static int freeze(const Runner *r)
{
        /* The Go next_step_runner blocks forever here; we block until told
         * to stop, which is what systemd's stop does to the Go agent too. */
        agent_notify_status("infra-env %s was not found, frozen until stopped", r->infra_env_id);
        while (agent_sleep(USEC_INFINITY / 2) >= 0)
                ;
        return -ECANCELED;
}

static int poll_loop(Runner *r)
{
        _cleanup_(assisted_client_freep) AssistedClient *client = NULL;
        _cleanup_free_ char *err = NULL;
        ExpBackoff backoff = EXP_BACKOFF_DEFAULTS;
        int q;

        backoff.max_elapsed = (usec_t)(r->config->backoff_max_elapsed * USEC_PER_SEC);
        q = make_client(r->config, &client, &err);
        if (q < 0)
                return log_error_errno(q, "cannot create the service client: %s", strna(err));

        for (;;) {
                _cleanup_(json_object_putp) json_object *steps = NULL;
                json_object *instructions;
                const char *action;
                int64_t next_seconds = 0;
                long status = 0;

                if (stop_requested())
                        return -ECANCELED;
                if (runner_should_end(r))
                        return 0;

                assisted_client_new_session(client);
                free(err);
                err = NULL;
                q = assisted_get_next_steps(client, r->infra_env_id, r->host_id, &status, &steps, &err);
                if (q < 0) {
                        usec_t delay;

                        pthread_mutex_lock(&r->lock);
                        dedup_flush_locked(r);
                        pthread_mutex_unlock(&r->lock);

                        if (status == 404) {
                                log_error("infra-env %s was not found in inventory, will freeze (%s)",
                                          r->infra_env_id, strna(err));
                                return freeze(r);
                        }
                        delay = exp_backoff_next(&backoff);
                        if (delay == USEC_INFINITY) {
                                log_warning("cannot get instructions for %.0f seconds, will exit: %s",
                                            r->config->backoff_max_elapsed, strna(err));
                                return 0;
                        }
                        log_warning_errno(q, "failed to get next steps, retrying in %.2fs: %s",
                                          (double)delay / USEC_PER_SEC, strna(err));
                        q = sleep_watching(r, delay);
                        if (q < 0)
                                return q;
                        continue;
                }
                exp_backoff_reset(&backoff);
                agent_notify_ready("registered host %s, polling instructions", r->host_id);

                if (steps) {
                        if (json_get_int64(steps, "next_instruction_seconds", &next_seconds) < 0 ||
                            next_seconds < 0)
                                next_seconds = 0;
                        instructions = json_get(steps, "instructions");
                        if (json_object_is_type(instructions, json_type_array))
                                for (size_t i = 0; i < json_object_array_length(instructions); i++)
                                        (void)start_step(r, json_object_array_get_idx(instructions, i),
                                                         assisted_client_request_id(client));
                        action = json_get_string(steps, "post_step_action");
                        if (action && streq(action, POST_STEP_ACTION_EXIT)) {
                                log_info("the service asked the agent to exit");
                                return 0;
                        }
                }

                q = sleep_watching(r, (usec_t)next_seconds * USEC_PER_SEC);
                if (q < 0)
                        return q;
                if (q > 0)
                        return 0;
        }
}

#define STOP_GRACE (30 * USEC_PER_SEC)

/* After a stop request, steps end soon: their commands and transfers are
 * interrupted. Wait for them (bounded) so the process exits cleanly. */
static void wait_for_steps(Runner *r, usec_t grace)
{
        usec_t until = now_usec(CLOCK_MONOTONIC) + grace;

        pthread_mutex_lock(&r->lock);
        while (r->running > 0 && now_usec(CLOCK_MONOTONIC) < until) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 100 * 1000 * 1000;
                if (ts.tv_nsec >= 1000000000) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000;
                }
                pthread_cond_timedwait(&r->cond, &r->lock, &ts);
        }
        if (r->running > 0)
                log_warning("%u steps still running after the stop request, leaving them", r->running);
        pthread_mutex_unlock(&r->lock);
}

int runner_run(const AgentConfig *config, const char *infra_env_id, const char *host_id, HostExec *host)
{
        Runner *r = calloc(1, sizeof(*r));
        int q;

        (void)host;
        if (!r)
                return log_oom();
        atomic_init(&r->refs, 1);
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->cond, NULL);
        r->infra_env_id = strdup(infra_env_id);
        r->host_id = strdup(host_id);
        if (!r->infra_env_id || !r->host_id || agent_config_copy(config, &r->config_copy) < 0) {
                runner_unref(r);
                return log_oom();
        }
        r->config = &r->config_copy;
        q = host_exec_new(config->host_exec, HOST_NS_AGENT, &r->host);
        if (q < 0) {
                runner_unref(r);
                return log_error_errno(q, "cannot prepare to run host commands: %m");
        }

        LOG_CONTEXT_PUSH("HOST_ID", host_id);
        log_info("polling instructions for host %s of infra-env %s", host_id, infra_env_id);
        q = poll_loop(r);

        /* Steps still running finish on their own; their replies are dropped,
         * as the Go next_step_runner abandons them when it exits. */
        pthread_mutex_lock(&r->lock);
        r->closing = true;
        pthread_mutex_unlock(&r->lock);
        if (q == -ECANCELED)
                wait_for_steps(r, STOP_GRACE);
        runner_unref(r);
        return q;
}
