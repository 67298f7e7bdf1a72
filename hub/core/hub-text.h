/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Bounded texts: what the hub copies from the service into what the API
 * server stores (condition messages, status fields, Event messages). The
 * service's answers are not bounded: with 3,960 NMStateConfigs on one
 * InfraEnv its error text was 2.6 MB, and an InfraEnv whose condition
 * carried it could not be stored any more (issue 23). Every such text is
 * cut here, on a UTF-8 character boundary, with a marker saying how much
 * was cut; the whole text goes to the log (hub_text_log_long(), called
 * where service answers arrive, after their secrets were scrubbed).
 *
 * Pure, but for hub_text_log_long().
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;

/* a condition's message, a stateInfo, a progressInfo: metav1.Condition's
 * maxLength for its message */
#define HUB_TEXT_MAX 32768
/* an Event's message: the events.k8s.io note limit */
#define HUB_EVENT_TEXT_MAX 1024
/* each string inside a validationsInfo (some forty messages) */
#define HUB_VALIDATION_TEXT_MAX 2048

/* A copy of s of at most max bytes: s itself when it fits, else its
 * beginning, cut before a UTF-8 character, and " … [N bytes cut]". NULL
 * only on allocation failure (s NULL gives ""). max must leave room for
 * the marker (at least 64). */
char *hub_text_bound(const char *s, size_t max);

/* True when hub_text_bound(s, max) would cut s. */
bool hub_text_too_long(const char *s, size_t max);

/* Sets obj[key] to s bounded to max bytes (s NULL: ""). */
int hub_json_add_bounded(json_object *obj, const char *key, const char *s, size_t max);

/* Bounds every string in v (objects and arrays, recursively) to max
 * bytes, in place. */
int hub_json_bound_strings(json_object *v, size_t max);

/* Logs a text of the service (already scrubbed of secrets) whole, once,
 * when it is longer than what a status can carry: what answered (tag,
 * HTTP status) and the text. */
void hub_text_log_long(const char *tag, long status, const char *text);
