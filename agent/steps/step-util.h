/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Helpers shared by the step handlers of this folder: the argument check
 * every handler starts with, JSON output, a bounded worker pool for the
 * checks a step runs at once, and the Go agent's error-list format.
 */

#include <pthread.h>
#include <stddef.h>

#include "agent/steps.h"
#include "step-model.h"

typedef struct json_object json_object;

/*
 * Decodes and validates the step argument against the model. Returns 1
 * with *ret_doc on success; 0 when it is invalid, with ret set to exit
 * code -1 and the validation error (the step must then do nothing else);
 * a negative errno on allocation failure.
 */
int step_parse_arg(const char *arg, const ModelSchema *m, StepResult *ret, json_object **ret_doc);

/* Serializes o as the step's output (exit code 0). Takes nothing. */
int step_succeed_json(StepResult *ret, json_object *o);
/* Sets output (serialized o, may be NULL), exit code and error together. */
int step_set_result(StepResult *ret, json_object *o, int exit_code, const char *error);

/* Adds v under key, or JSON null when v is NULL (a Go nil slice without
 * omitempty). Takes ownership of v. */
int json_add_or_null(json_object *o, const char *key, json_object *v);

/* The lab interface patterns of the configuration (may be NULL). */
int step_lab_patterns(const StepContext *ctx, char ***ret);

/* Runs argv on the host (ctx->host) with a timeout (0: none), capturing
 * its output. Returns 0 when it ran (res->exit_status, res->timed_out) or
 * a negative errno when it could not start (-ENOENT: not installed). */
struct SpawnResult;
int step_host_run(const StepContext *ctx, char *const *argv, usec_t timeout, struct SpawnResult *res);

/*
 * One run at a time of an expensive check (free addresses, the disk test,
 * image pulls). The Go agent answers a request that arrives while its
 * container still runs with exit 0 and no output, which the service
 * rejects (400: the output is no JSON); here that request waits for the
 * running check and answers with a copy of its result when the arguments
 * are the same (key), or runs after it when they differ.
 */
typedef struct StepCoalescer {
        pthread_mutex_t lock;
        pthread_cond_t done;
        bool running;
        char *running_key;
        unsigned long finished;
        char *last_key;
        StepResult last;
} StepCoalescer;

#define STEP_COALESCER_INIT \
        { \
                .lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER \
        }

int step_coalesce(StepCoalescer *c, const char *key, int (*fn)(void *userdata, StepResult *ret),
                  void *userdata, StepResult *ret);

/* Runs fn(i, userdata) for i in [0, n) on at most max_threads threads
 * (the calling thread included), returning when all are done. */
int parallel_for(size_t n, unsigned max_threads, void (*fn)(size_t i, void *userdata), void *userdata);

/* hashicorp/go-multierror's text: "1 error occurred:\n\t* A\n\n" or
 * "2 errors occurred:\n\t* A\n\t* B\n\n". */
char *go_multierror_format(char *const *errors);

/* Go's text of a syscall.Errno: strerror() in lower case; allocated. */
char *go_errno_string(int e);

/* Go's %v of a []string: "[a b c]". */
char *go_strv_format(char *const *l);
