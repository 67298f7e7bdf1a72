/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Table tests of the hub's pure decisions: a reconcile is simulated without
 * I/O. hubtest_reconcile() calls a controller type's decide, "executes" the
 * plan against canned service answers (by tag) and applies every patch of
 * the reconciled object to it (RFC 7386), round after round as hub-exec
 * does, and records what would have been written.
 */

#include <stdbool.h>

#include "hub-controller.h"
#include "tests.h"

typedef struct json_object json_object;

/* A canned answer of a feedback call: tag (exact, or a prefix ending in
 * '*'), status (0: no answer), body (JSON text or NULL), error message. */
typedef struct HubTestAnswer {
        const char *tag;
        long status;
        const char *body;
        const char *message;
} HubTestAnswer;

typedef struct HubTestRun {
        HubPlan writes; /* every write of every round, in order */
        unsigned rounds;
        usec_t requeue_after;
        bool requeue;
        char *reason;
} HubTestRun;

void hubtest_run_done(HubTestRun *r);

/* Runs decide until it asks for nothing more. o->object is updated by the
 * object's own patches. answers ends with { NULL }. */
void hubtest_reconcile(int (*decide)(const HubObserved *, HubPlan *), HubObserved *o,
                       const HubTestAnswer *answers, HubTestRun *ret);

/* JSON from text; fails the test on a parse error. */
json_object *hubtest_json(const char *text);
/* JSON from a printf format. */
json_object *hubtest_jsonf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* RFC 7386: applies patch to target in place. */
void hubtest_merge_apply(json_object *target, json_object *patch);

/* Counts the writes of a kind (HUB_WRITE_*), service calls by tag prefix
 * (NULL: all). */
unsigned hubtest_count(const HubTestRun *r, HubWriteKind kind, const char *tag_prefix);
/* The n-th write of kind (0-based), or NULL. */
const HubWrite *hubtest_write(const HubTestRun *r, HubWriteKind kind, unsigned n);

/* The condition of obj: asserts its status, reason and message (message
 * NULL: not checked; a trailing '*' in message: prefix). */
void hubtest_assert_condition(json_object *obj, const char *type, const char *status, const char *reason,
                              const char *message, const char *file, int line);
#define ASSERT_CONDITION(obj, type, status, reason, message) \
        hubtest_assert_condition(obj, type, status, reason, message, __FILE__, __LINE__)

/* The string at a dotted path of obj (NULL when absent). */
const char *hubtest_str(json_object *obj, const char *path);
