/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: */
#include <string.h>

#include "cleanup.h"
#include "fuzz.h"
#include "kube/kube.h"

typedef struct Count {
        unsigned events;
        unsigned stop_at;
} Count;

static int on_event(KubeWatchEventType type, json_object *object, void *userdata)
{
        Count *c = userdata;

        if ((unsigned)type >= _KUBE_WATCH_EVENT_MAX || !object)
                __builtin_trap();
        c->events++;
        return c->stop_at > 0 && c->events >= c->stop_at ? KUBE_WATCH_STOP : 0;
}

/* Decodes the stream whole, then in chunks whose size the first byte picks:
 * the events and the outcome must not depend on where the stream was cut. */
static int decode(const uint8_t *data, size_t size, size_t chunk, Count *count)
{
        _cleanup_(kube_watch_decoder_freep) KubeWatchDecoder *d = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        int r = 0;

        if (kube_watch_decoder_new(on_event, count, &d) < 0)
                return -12;
        for (size_t off = 0; off < size && r == 0; off += chunk)
                r = kube_watch_decoder_feed(d, (const char *)data + off,
                                            size - off < chunk ? size - off : chunk, &st);
        if (r < 0 && r != -12 && !st.message)
                __builtin_trap(); /* errors while feeding are explained */
        if (r == 0)
                r = kube_watch_decoder_finish(d);
        if (kube_watch_decoder_feed(d, "\n", 1, NULL) != r)
                __builtin_trap(); /* a finished decoder stays finished */
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Count whole = {}, cut = {};
        size_t chunk;
        int a, b;

        if (size < 1 || size > 1 << 20)
                return 0;
        chunk = 1 + data[0] % 64;
        whole.stop_at = cut.stop_at = data[0] >> 6;
        a = decode(data + 1, size - 1, size, &whole);
        b = decode(data + 1, size - 1, chunk, &cut);
        if (a == -12 || b == -12)
                return 0;
        if (a != b || whole.events != cut.events)
                __builtin_trap();
        return 0;
}
