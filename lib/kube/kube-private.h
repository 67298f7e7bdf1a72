/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* Shared by the lib/kube/ sources only: how the client fills a KubeStatus. Each returns
 * the negative errno it stored. */
#include <json-c/json.h>

#include "buf.h"
#include "kube.h"
#include "macro.h"

/* From a response: its Status body when o is one, else the HTTP code. */
int kube_status_fill(KubeStatus *err, long code, json_object *o);
/* A request that got no HTTP answer (connection, TLS, timeout). */
int kube_status_transport(KubeStatus *err, int r, const char *text);
/* A client-side error with a message of ours. */
int kube_status_local(KubeStatus *err, int r, const char *fmt, ...) _printf_(3, 4);

/* The largest watch event (one JSON document) the decoder holds. */
#define KUBE_WATCH_EVENT_MAX BUF_MAX_JSON_DOC
