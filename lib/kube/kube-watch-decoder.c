/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watch events from a response stream, one at a time, bounded. See kube.h.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "kube-private.h"
#include "kube.h"
#include "strutil.h"

static const char *const watch_event_types[_KUBE_WATCH_EVENT_MAX] = {
        [KUBE_WATCH_ADDED] = "ADDED",
        [KUBE_WATCH_MODIFIED] = "MODIFIED",
        [KUBE_WATCH_DELETED] = "DELETED",
        [KUBE_WATCH_BOOKMARK] = "BOOKMARK",
};

const char *kube_watch_event_type_to_string(KubeWatchEventType t)
{
        if ((unsigned)t >= _KUBE_WATCH_EVENT_MAX)
                return NULL;
        return watch_event_types[t];
}

/* Watch events are one JSON document per line (kube-apiserver's framing).
 * The decoder keeps at most one event's text (bounded), parses each line as
 * soon as its newline arrives and hands the event on: the response as a whole
 * is never held. Framing by line (rather than feeding json-c's tokener
 * chunk by chunk) makes the outcome independent of where the network cut
 * the stream: json-c decides differently whether a value is complete when
 * the next byte is or is not in the same buffer (fuzz-kube-watch found it). */
struct KubeWatchDecoder {
        Buf line; /* the current, incomplete event */
        KubeWatchCallback cb;
        void *userdata;
        int done; /* the non-zero result that ended decoding */
        char *rv;
};

int kube_watch_decoder_new(KubeWatchCallback cb, void *userdata, KubeWatchDecoder **ret)
{
        KubeWatchDecoder *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        buf_init(&d->line, KUBE_WATCH_EVENT_MAX);
        d->cb = cb;
        d->userdata = userdata;
        *ret = d;
        return 0;
}

KubeWatchDecoder *kube_watch_decoder_free(KubeWatchDecoder *d)
{
        if (!d)
                return NULL;
        buf_release(&d->line);
        free(d->rv);
        free(d);
        return NULL;
}

const char *kube_watch_decoder_resource_version(const KubeWatchDecoder *d)
{
        return d->rv;
}

static int watch_event(KubeWatchDecoder *d, json_object *ev, KubeStatus *err)
{
        const char *type, *rv;
        json_object *obj;
        int r;

        if (!json_object_is_type(ev, json_type_object))
                return kube_status_local(err, -EBADMSG, "watch: an event is not a JSON object");
        type = json_get_string(ev, "type");
        obj = json_get(ev, "object");
        if (!type) {
                /* the answer to the watch request itself was an error */
                if (streq_ptr(json_get_string(ev, "kind"), "Status"))
                        return kube_status_fill(err, 0, ev);
                return kube_status_local(err, -EBADMSG, "watch: an event has no type");
        }
        if (streq(type, "ERROR")) {
                int64_t code = 0;

                (void)json_get_int64(obj, "code", &code);
                r = kube_status_fill(err, (long)code, obj);
                return r < 0 ? r : -EPROTO;
        }
        for (KubeWatchEventType t = 0; t < _KUBE_WATCH_EVENT_MAX; t++) {
                if (!streq(type, watch_event_types[t]))
                        continue;
                if (!obj || !json_object_is_type(obj, json_type_object))
                        return kube_status_local(err, -EBADMSG, "watch: a %s event has no object", type);
                rv = kube_object_resource_version(obj);
                r = d->cb ? d->cb(t, obj, d->userdata) : 0;
                if (r < 0)
                        return kube_status_local(err, r, "watch: the event handler failed: %s",
                                                 strerror(-r));
                if (!isempty(rv) && !streq_ptr(rv, d->rv)) {
                        char *n = strdup(rv);

                        if (!n)
                                return -ENOMEM;
                        free(d->rv);
                        d->rv = n;
                }
                return r > 0 ? KUBE_WATCH_STOP : 0;
        }
        return kube_status_local(err, -EBADMSG, "watch: unknown event type \"%.32s\"", type);
}

static bool all_space(const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!strchr(" \t\r\n", p[i]) || p[i] == 0)
                        return false;
        return true;
}

static int watch_line(KubeWatchDecoder *d, KubeStatus *err)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *perr = NULL;
        int r;

        if (all_space(d->line.data, d->line.len)) {
                buf_reset(&d->line);
                return 0;
        }
        r = json_parse(d->line.data, d->line.len, KUBE_WATCH_EVENT_MAX, &o, &perr);
        buf_reset(&d->line);
        if (r < 0)
                return kube_status_local(err, -EBADMSG, "watch: malformed event: %s", strna(perr));
        return watch_event(d, o, err);
}

int kube_watch_decoder_feed(KubeWatchDecoder *d, const char *data, size_t n, KubeStatus *err)
{
        if (d->done)
                return d->done;
        while (n > 0) {
                const char *nl = memchr(data, '\n', n);
                size_t take = nl ? (size_t)(nl - data) : n;
                int r;

                if (buf_append(&d->line, data, take) < 0)
                        return d->done = kube_status_local(err, -EBADMSG,
                                                           "watch: an event is larger than %u bytes",
                                                           KUBE_WATCH_EVENT_MAX);
                if (!nl)
                        break;
                data += take + 1;
                n -= take + 1;
                r = watch_line(d, err);
                if (r != 0)
                        return d->done = r;
        }
        return 0;
}

int kube_watch_decoder_finish(KubeWatchDecoder *d)
{
        if (d->done)
                return d->done;
        /* a last event without its newline still counts */
        return d->done = watch_line(d, NULL);
}
