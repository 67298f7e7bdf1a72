/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * An event recorder: core/v1 Events about an object, as client-go's
 * record.EventRecorder writes them (what `kubectl describe` and `kubectl get
 * events` show).
 *
 * An event is named "<object name>.<hex of the wall clock in ns>", lives in
 * the object's namespace ("default" for cluster-scoped objects), and carries
 * involvedObject (kind, namespace, name, uid, apiVersion, resourceVersion of
 * the object), reason, message, type, source.component (and source.host when
 * given), firstTimestamp, lastTimestamp and count. As client-go's
 * EventCorrelator, a repeat of an event already recorded by this recorder
 * (same source, object, type, reason and message) is not created again: the
 * existing one is patched (strategic merge) with count + 1 and a new
 * lastTimestamp; when it was deleted meanwhile it is created again with the
 * count it would have. The recorder remembers the last 4096 distinct events
 * (client-go's LRU size; here the memory is simply cleared when full).
 * Not done: client-go's aggregation of 10 similar events with different
 * messages, and its per-object spam filter.
 *
 * Recording is synchronous; it returns the API error, which callers usually
 * ignore (an event is best effort).
 */

#include "macro.h"

typedef struct KubeClient KubeClient;
typedef struct KubeEventRecorder KubeEventRecorder;
typedef struct json_object json_object;

#define KUBE_EVENT_NORMAL "Normal"
#define KUBE_EVENT_WARNING "Warning"

/* component: source.component ("cradle-hub"); host may be NULL. */
int kube_event_recorder_new(KubeClient *c, const char *component, const char *host, KubeEventRecorder **ret);
KubeEventRecorder *kube_event_recorder_free(KubeEventRecorder *rec);
DEFINE_TRIVIAL_CLEANUP_FUNC(KubeEventRecorder *, kube_event_recorder_free)

/* obj: the involved object (apiVersion, kind and metadata are read).
 * ret_event (may be NULL): the Event as the server answered. */
int kube_event_record(KubeEventRecorder *rec, json_object *obj, const char *type, const char *reason,
                      const char *message, json_object **ret_event);
int kube_event_recordf(KubeEventRecorder *rec, json_object *obj, const char *type, const char *reason,
                       const char *fmt, ...) _printf_(5, 6);
