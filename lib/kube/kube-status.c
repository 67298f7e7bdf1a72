/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client's errors: a server's Status body, or a transport or local
 * failure, as a KubeStatus with its negative errno. See kube.h.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonutil.h"
#include "kube-private.h"
#include "kube.h"
#include "redact.h"
#include "strutil.h"

void kube_status_done(KubeStatus *s)
{
        if (!s)
                return;
        free(s->reason);
        free(s->message);
        json_object_put(s->details);
        *s = (KubeStatus){};
}

static const struct {
        long code;
        const char *reason;
        int error;
} status_table[] = {
        { 400, "BadRequest", EBADR },
        { 401, "Unauthorized", EKEYREJECTED },
        { 403, "Forbidden", EACCES },
        { 404, "NotFound", ENOENT },
        { 405, "MethodNotAllowed", EOPNOTSUPP },
        { 406, "NotAcceptable", EOPNOTSUPP },
        { 409, "Conflict", EBUSY },
        { 410, "Gone", ESTALE },
        { 413, "RequestEntityTooLarge", EMSGSIZE },
        { 415, "UnsupportedMediaType", EOPNOTSUPP },
        { 422, "Invalid", EINVAL },
        { 429, "TooManyRequests", EAGAIN },
        { 500, "InternalError", EIO },
        { 503, "ServiceUnavailable", EAGAIN },
        { 504, "Timeout", ETIMEDOUT },
};

int kube_errno_from_status(long code, const char *reason)
{
        if (reason) {
                if (streq(reason, "AlreadyExists"))
                        return -EEXIST;
                if (streq(reason, "Expired"))
                        return -ESTALE;
        }
        for (size_t i = 0; i < ELEMENTSOF(status_table); i++)
                if (status_table[i].code == code)
                        return -status_table[i].error;
        if (code >= 500 && code <= 599)
                return -EIO;
        return -EPROTO;
}

/* etcd refuses an object too large to store with errors that are no kube
 * Status, which kube-apiserver answers as 500 with their text and no
 * reason (k8s.io/apiserver's ErrorToAPIStatus): etcd's own limit
 * (--max-request-bytes, 1.5 MiB) and its client's gRPC send limit (2 MiB),
 * "rpc error: code = ResourceExhausted desc = trying to send message larger
 * than max (N vs. 2097152)". */
static bool message_says_too_large(const char *message)
{
        return message && (strstr(message, "etcdserver: request is too large") ||
                           strstr(message, "trying to send message larger than max"));
}

int kube_errno_from_answer(long code, const char *reason, const char *message)
{
        if (code >= 500 && code <= 599 && message_says_too_large(message))
                return -EMSGSIZE;
        return kube_errno_from_status(code, reason);
}

const char *kube_reason_from_code(long code)
{
        for (size_t i = 0; i < ELEMENTSOF(status_table); i++)
                if (status_table[i].code == code)
                        return status_table[i].reason;
        return NULL;
}

/* Fills err from a Status object (or only from code when o is not one). */
int kube_status_fill(KubeStatus *err, long code, json_object *o)
{
        const char *reason = NULL, *message = NULL;
        int64_t c64;
        int r;

        if (o && json_object_is_type(o, json_type_object) &&
            streq_ptr(json_get_string(o, "kind"), "Status")) {
                reason = json_get_string(o, "reason");
                message = json_get_string(o, "message");
                if (json_get_int64(o, "code", &c64) >= 0 && c64 > 0 && code == 0)
                        code = (long)c64;
        }
        if (isempty(reason))
                reason = kube_reason_from_code(code);
        r = kube_errno_from_answer(code, reason, message);
        if (!err)
                return r;
        kube_status_done(err);
        err->error = r;
        err->code = code;
        err->reason = reason ? strdup(reason) : NULL;
        if (message)
                err->message = redact_known_secrets(message);
        else
                err->message = strdup_printf("the server answered %ld%s%s", code, reason ? " " : "",
                                             strempty(reason));
        if (o && json_object_is_type(o, json_type_object)) {
                json_object *d = json_get(o, "details");

                err->details = d ? json_object_get(d) : NULL;
        }
        return r;
}

int kube_status_transport(KubeStatus *err, int r, const char *text)
{
        if (err) {
                kube_status_done(err);
                err->error = r;
                err->message = text ? redact_known_secrets(text) : strdup(strerror(-r));
        }
        return r;
}

int kube_status_local(KubeStatus *err, int r, const char *fmt, ...)
{
        va_list ap;

        if (err) {
                kube_status_done(err);
                err->error = r;
                va_start(ap, fmt);
                if (vasprintf(&err->message, fmt, ap) < 0)
                        err->message = NULL;
                va_end(ap);
        }
        return r;
}
