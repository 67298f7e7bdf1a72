/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "assisted/assisted.h"
#include "buf.h"
#include "cleanup.h"
#include "config.h"
#include "hub-metrics.h"
#include "hub-service.h"
#include "hub-text.h"
#include "jsonutil.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

#define POOL_MAX 16
#define EVENTS_PAGE 500

/* fields that change at every check-in or step reply and that no
 * controller reads: a change of only these is no change */
static const char *const volatile_host_fields[] = {
        "checked_in_at",           "updated_at",    "connectivity", "free_addresses",
        "domain_name_resolutions", "images_status",
};

typedef struct HostEntry {
        char *text;
        uint64_t fingerprint;
        bool seen; /* in the current list */
} HostEntry;

/* A position in the service's event feed of one infra-env or cluster */
typedef struct EventFeed {
        bool unsupported; /* the service has no events endpoint */
        unsigned long seen;
        char *last; /* key of the last event consumed */
} EventFeed;

/* What the poller follows, an infra-env or a cluster: the first member of
 * their states */
typedef struct Tracked {
        char *id;
        usec_t next_attempt; /* monotonic: back-off after a failure */
        usec_t backoff;
        EventFeed feed;
} Tracked;

typedef struct InfraEnvState {
        Tracked base;
        bool listed;
        bool want_list;
        usec_t last_list; /* monotonic */
        struct lh_table *hosts; /* id -> HostEntry */
} InfraEnvState;

/* A cluster a ClusterDeployment links: its events, and its last GET
 * (without hosts) as a fingerprint for the resync */
typedef struct ClusterState {
        Tracked base;
        bool fetched;
        uint64_t fingerprint;
        usec_t last_get; /* monotonic */
} ClusterState;

/* The states of one kind, by id */
typedef struct StateTable {
        Tracked **items;
        size_t n;
        Tracked *(*new_state)(const char *id);
        void (*free_state)(Tracked *t);
} StateTable;

struct HubService {
        HubServiceOptions opts;
        char *url, *ca_file, *token_file;
        HubMetrics *metrics;

        pthread_mutex_t pool_lock;
        AssistedClient *pool[POOL_MAX];
        size_t n_pool;

        pthread_mutex_t lock; /* the states */
        StateTable infra_envs; /* InfraEnvState */
        StateTable clusters; /* ClusterState */
        bool up;
        HubServiceApi api;

        /* the poller thread */
        pthread_mutex_t wake_lock;
        pthread_cond_t wake;
        bool woken, stopping, running;
        pthread_t thread;
        HubServiceCallbacks cb;
};

static void host_entry_free(struct lh_entry *e)
{
        HostEntry *h = (HostEntry *)lh_entry_v(e);

        free(lh_entry_k(e));
        if (h) {
                free(h->text);
                free(h);
        }
}

static void state_free(Tracked *t)
{
        InfraEnvState *st = (InfraEnvState *)t;

        if (!st)
                return;
        free(st->base.id);
        free(st->base.feed.last);
        if (st->hosts)
                lh_table_free(st->hosts);
        free(st);
}

static Tracked *state_new(const char *id)
{
        InfraEnvState *st = calloc(1, sizeof(*st));

        if (!st)
                return NULL;
        st->base.id = strdup(id);
        st->hosts = lh_kchar_table_new(64, host_entry_free);
        if (!st->base.id || !st->hosts) {
                state_free(&st->base);
                return NULL;
        }
        return &st->base;
}

static void cluster_state_free(Tracked *t)
{
        if (!t)
                return;
        free(t->id);
        free(t->feed.last);
        free(t);
}

static Tracked *cluster_state_new(const char *id)
{
        ClusterState *st = calloc(1, sizeof(*st));

        if (!st)
                return NULL;
        st->base.id = strdup(id);
        if (!st->base.id) {
                free(st);
                return NULL;
        }
        return &st->base;
}

/* lock held */
static Tracked *table_find(StateTable *t, const char *id)
{
        for (size_t i = 0; i < t->n; i++)
                if (streq(t->items[i]->id, id))
                        return t->items[i];
        return NULL;
}

/* lock held */
static Tracked *table_get(StateTable *t, const char *id)
{
        Tracked *st = table_find(t, id), **n;

        if (st)
                return st;
        n = realloc(t->items, (t->n + 1) * sizeof(*n));
        if (!n)
                return NULL;
        t->items = n;
        st = t->new_state(id);
        if (!st)
                return NULL;
        t->items[t->n++] = st;
        return st;
}

static void table_free(StateTable *t)
{
        for (size_t i = 0; i < t->n; i++)
                t->free_state(t->items[i]);
        free(t->items);
        t->items = NULL;
        t->n = 0;
}

/* Forgets what the callbacks no longer name, makes states for the new
 * ids, and returns the ids due for a poll now. */
static int table_sync(HubService *s, StateTable *t, char **ids, usec_t now, char ***ret_due)
{
        _cleanup_strv_free_ char **due = NULL;
        int r = 0;

        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < t->n;) {
                if (!strv_contains(ids, t->items[i]->id)) {
                        t->free_state(t->items[i]);
                        memmove(t->items + i, t->items + i + 1, (t->n - i - 1) * sizeof(*t->items));
                        t->n--;
                } else
                        i++;
        }
        STRV_FOREACH (id, ids) {
                Tracked *st = table_get(t, *id);

                if (!st) {
                        r = -ENOMEM;
                        break;
                }
                if (st->next_attempt <= now)
                        r = strv_extend(&due, *id);
                if (r < 0)
                        break;
        }
        pthread_mutex_unlock(&s->lock);
        if (r < 0)
                return r;
        *ret_due = TAKE_PTR(due);
        return 0;
}

/* after a poll of st: back off (doubling up to max_backoff) when it failed */
static void tracked_done(HubService *s, Tracked *st, bool failed)
{
        pthread_mutex_lock(&s->lock);
        if (failed) {
                st->backoff =
                        st->backoff == 0 ? s->opts.poll_interval : MIN(st->backoff * 2, s->opts.max_backoff);
                st->next_attempt = now_usec(CLOCK_MONOTONIC) + st->backoff;
        } else {
                st->backoff = 0;
                st->next_attempt = 0;
        }
        pthread_mutex_unlock(&s->lock);
}

int hub_service_new(const HubServiceOptions *o, HubMetrics *metrics, HubService **ret, char **reterr)
{
        _cleanup_free_ HubService *s = NULL;
        AssistedClient *probe = NULL;
        int r;

        if (isempty(o->url)) {
                if (reterr)
                        *reterr = strdup("no service URL given (--service-url)");
                return -EINVAL;
        }
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->opts = *o;
        if (s->opts.timeout == 0)
                s->opts.timeout = 30 * USEC_PER_SEC;
        if (s->opts.poll_interval == 0)
                s->opts.poll_interval = 10 * USEC_PER_SEC;
        if (s->opts.resync_period == 0)
                s->opts.resync_period = 120 * USEC_PER_SEC;
        if (s->opts.max_backoff == 0)
                s->opts.max_backoff = 120 * USEC_PER_SEC;
        s->url = strdup(o->url);
        s->ca_file = o->ca_file ? strdup(o->ca_file) : NULL;
        s->token_file = o->token_file ? strdup(o->token_file) : NULL;
        if (!s->url || (o->ca_file && !s->ca_file) || (o->token_file && !s->token_file))
                return -ENOMEM;
        s->opts.url = s->url;
        s->opts.ca_file = s->ca_file;
        s->opts.token_file = s->token_file;
        s->metrics = metrics;
        s->up = true;
        s->infra_envs = (StateTable){ .new_state = state_new, .free_state = state_free };
        s->clusters = (StateTable){ .new_state = cluster_state_new, .free_state = cluster_state_free };
        pthread_mutex_init(&s->pool_lock, NULL);
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->wake_lock, NULL);
        {
                pthread_condattr_t a;

                pthread_condattr_init(&a);
                pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
                pthread_cond_init(&s->wake, &a);
                pthread_condattr_destroy(&a);
        }
        /* a first client now, so that a bad URL, CA or token file is an
         * error at start and not at the first reconcile */
        r = assisted_client_new(&(AssistedClientOptions){ .url = s->url,
                                                          .ca_file = s->ca_file,
                                                          .bearer_token_file = s->token_file,
                                                          .user_agent = "cradle-hub/" CRADLE_VERSION,
                                                          .total_timeout = s->opts.timeout },
                                &probe, reterr);
        if (r < 0)
                return r;
        s->pool[s->n_pool++] = probe;
        if (metrics) {
                (void)hub_metrics_describe(
                        metrics, "cradle_hub_service_request_duration_seconds", HUB_METRIC_HISTOGRAM,
                        "Latency of assisted-service calls, by operation and status code.");
                (void)hub_metrics_describe(
                        metrics, "cradle_hub_service_up", HUB_METRIC_GAUGE,
                        "1 when the last call to assisted-service got an answer that was not 5xx.");
                hub_metrics_set(metrics, "cradle_hub_service_up", NULL, 1);
        }
        *ret = TAKE_PTR(s);
        return 0;
}

HubService *hub_service_free(HubService *s)
{
        if (!s)
                return NULL;
        hub_service_stop(s);
        for (size_t i = 0; i < s->n_pool; i++)
                assisted_client_free(s->pool[i]);
        table_free(&s->infra_envs);
        table_free(&s->clusters);
        pthread_mutex_destroy(&s->pool_lock);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->wake_lock);
        pthread_cond_destroy(&s->wake);
        free(s->url);
        free(s->ca_file);
        free(s->token_file);
        free(s);
        return NULL;
}

/* ---- calls ---- */

static int client_take(HubService *s, AssistedClient **ret)
{
        AssistedClient *c = NULL;

        pthread_mutex_lock(&s->pool_lock);
        if (s->n_pool > 0)
                c = s->pool[--s->n_pool];
        pthread_mutex_unlock(&s->pool_lock);
        if (c) {
                *ret = c;
                return 0;
        }
        return assisted_client_new(&(AssistedClientOptions){ .url = s->url,
                                                             .ca_file = s->ca_file,
                                                             .bearer_token_file = s->token_file,
                                                             .user_agent = "cradle-hub/" CRADLE_VERSION,
                                                             .total_timeout = s->opts.timeout },
                                   ret, NULL);
}

static void client_give(HubService *s, AssistedClient *c)
{
        pthread_mutex_lock(&s->pool_lock);
        if (s->n_pool < POOL_MAX) {
                s->pool[s->n_pool++] = c;
                c = NULL;
        }
        pthread_mutex_unlock(&s->pool_lock);
        assisted_client_free(c);
}

/* ---- which service ---- */

static const char *const api_names[_HUB_SERVICE_API_MAX] = {
        [HUB_SERVICE_API_UNKNOWN] = "unknown",
        [HUB_SERVICE_API_2023] = "late-2023",
        [HUB_SERVICE_API_CURRENT] = "current",
};

const char *hub_service_api_to_string(HubServiceApi api)
{
        return api >= 0 && api < _HUB_SERVICE_API_MAX ? api_names[api] : NULL;
}

/* body fields only one generation's models have (b29f9bcf's swagger.yaml
 * against the 2026 one): a refusal of one of them names the other */
static const char *const fields_2023_lacks[] = { "control_plane_count",
                                                 "load_balancer",
                                                 "ntp_sources",
                                                 "operator_bundles",
                                                 "network_discovery_delay_seconds",
                                                 "rendezvous_ip",
                                                 NULL };
static const char *const fields_current_lacks[] = { "api_vip", "ingress_vip", NULL };

const char *hub_call_unknown_field(const HubCallResult *r, char *ret, size_t n)
{
        static const char marker[] = "json: unknown field \"";
        const char *b, *e;

        if (!r || r->error >= 0 || r->status != 400 || !r->message)
                return NULL;
        b = strstr(r->message, marker);
        if (!b)
                return NULL;
        b += strlen(marker);
        e = strchr(b, '"');
        if (!e || e == b || (size_t)(e - b) >= n)
                return NULL;
        memcpy(ret, b, (size_t)(e - b));
        ret[e - b] = 0;
        return ret;
}

static bool carries_count(json_object *o)
{
        const char *kind = json_get_string(o, "kind");

        return json_object_is_type(o, json_type_object) &&
               (streq_ptr(kind, "Cluster") || streq_ptr(kind, "AddHostsCluster")) &&
               json_get(o, "control_plane_count");
}

HubServiceApi hub_service_api_learn(HubServiceApi current, const HubCallResult *r)
{
        char field[64];

        if (!r)
                return current;
        if (hub_call_unknown_field(r, field, sizeof(field))) {
                if (strv_contains((char **)fields_2023_lacks, field))
                        return HUB_SERVICE_API_2023;
                if (strv_contains((char **)fields_current_lacks, field))
                        return HUB_SERVICE_API_CURRENT;
                return current;
        }
        if (r->error < 0)
                return current;
        if (carries_count(r->body))
                return HUB_SERVICE_API_CURRENT;
        if (json_object_is_type(r->body, json_type_array))
                for (size_t i = 0; i < json_object_array_length(r->body); i++)
                        if (carries_count(json_object_array_get_idx(r->body, i)))
                                return HUB_SERVICE_API_CURRENT;
        return current;
}

bool hub_service_api_refused(HubServiceApi shaped_for, const HubCallResult *r)
{
        return r && r->error < 0 && hub_service_api_learn(shaped_for, r) != shaped_for;
}

HubServiceApi hub_service_api(HubService *s)
{
        HubServiceApi api;

        pthread_mutex_lock(&s->lock);
        api = s->api;
        pthread_mutex_unlock(&s->lock);
        return api;
}

static void api_learn(HubService *s, const HubCallResult *r)
{
        HubServiceApi was, now;
        char field[64];

        pthread_mutex_lock(&s->lock);
        was = s->api;
        now = s->api = hub_service_api_learn(was, r);
        pthread_mutex_unlock(&s->lock);
        if (now == was)
                return;
        if (hub_call_unknown_field(r, field, sizeof(field)))
                log_info("assisted-service refused %s (%s): "
                         "it speaks the %s cluster API; so does cradle-hub from now on",
                         field, strna(r->tag), hub_service_api_to_string(now));
        else
                log_info("assisted-service answered a cluster with control_plane_count (%s): "
                         "it speaks the %s cluster API; so does cradle-hub from now on",
                         strna(r->tag), hub_service_api_to_string(now));
}

void hub_call_result_done(HubCallResult *r)
{
        free(r->tag);
        free(r->message);
        json_object_put(r->body);
        *r = (HubCallResult){};
}

static void record(HubService *s, const char *tag, long status, int error, usec_t started)
{
        _cleanup_free_ char *l1 = hub_metrics_label("operation", tag), *labels = NULL;
        double secs = (double)(now_usec(CLOCK_MONOTONIC) - started) / (double)USEC_PER_SEC;
        bool up = status > 0 && status < 500 && error != -EBADMSG;

        labels = l1 ? strdup_printf("%s,code=\"%ld\"", l1, status) : NULL;
        if (labels)
                hub_metrics_observe(s->metrics, "cradle_hub_service_request_duration_seconds", labels, secs);
        pthread_mutex_lock(&s->lock);
        s->up = up;
        pthread_mutex_unlock(&s->lock);
        hub_metrics_set(s->metrics, "cradle_hub_service_up", NULL, up ? 1 : 0);
}

static int fill_result(HubCallResult *ret, const char *tag, int error, long status, json_object *body,
                       const char *err)
{
        *ret = (HubCallResult){ .error = error, .status = status, .body = body };
        ret->tag = strdup(tag);
        if (!ret->tag)
                return -ENOMEM;
        if (error < 0) {
                const char *text = err;

                /* the service's reason, as the real controllers put it in
                 * their conditions: "METHOD path: [400] reason" → "reason" */
                if (error == -EREMOTEIO && err) {
                        const char *b = strstr(err, ": [");
                        const char *e = b ? strstr(b, "] ") : NULL;

                        if (e)
                                text = e + 2;
                }
                ret->message = text ? redact_known_secrets(text)
                                    : strdup_printf("%s failed: %s", tag, strerror(-ERRNO_VALUE(error)));
                if (!ret->message)
                        return -ENOMEM;
                /* statuses get its beginning (hub-text.h), the log all of it */
                if (hub_text_too_long(ret->message, HUB_TEXT_MAX / 2))
                        hub_text_log_long(tag, status, ret->message);
                else if (status > 0)
                        log_info("%s: assisted-service answered %ld: %s", tag, status, ret->message);
                else
                        log_info("%s: %s", tag, ret->message);
        }
        return 0;
}

int hub_service_call(HubService *s, const char *tag, const char *operation, const char *method,
                     const char *path, json_object *body, long expect, HubCallResult *ret)
{
        AssistedClient *c = NULL;
        _cleanup_(json_object_putp) json_object *answer = NULL;
        _cleanup_free_ char *err = NULL;
        long status = 0;
        usec_t started = now_usec(CLOCK_MONOTONIC);
        int r, q;

        *ret = (HubCallResult){};
        r = client_take(s, &c);
        if (r < 0)
                return fill_result(ret, tag, r, 0, NULL, "cannot make a client of the service");
        q = assisted_call(c, method, path, body, expect, &status, &answer, &err);
        client_give(s, c);
        record(s, operation ? operation : tag, status, q, started);
        r = fill_result(ret, tag, q, status, TAKE_PTR(answer), err);
        if (r >= 0)
                api_learn(s, ret);
        return r;
}

int hub_service_op(HubService *s, AssistedOp op, char *const *params, const char *query, json_object *body,
                   HubCallResult *ret)
{
        const AssistedOpInfo *info = assisted_op_info(op);
        _cleanup_free_ char *path = NULL;
        int r;

        *ret = (HubCallResult){};
        if (!info)
                return -EINVAL;
        r = assisted_op_path(op, params, query, &path);
        if (r < 0)
                return r;
        return hub_service_call(s, info->id, info->id, info->method, path, body, info->success, ret);
}

int hub_service_download(HubService *s, const char *tag, const char *operation, const char *path, size_t max,
                         HubCallResult *ret, char **ret_text)
{
        AssistedClient *c = NULL;
        _cleanup_free_ char *err = NULL, *data = NULL;
        long status = 0;
        usec_t started = now_usec(CLOCK_MONOTONIC);
        int r, q;

        *ret = (HubCallResult){};
        *ret_text = NULL;
        r = client_take(s, &c);
        if (r < 0)
                return fill_result(ret, tag, r, 0, NULL, "cannot make a client of the service");
        q = assisted_download(c, path, max, &status, &data, NULL, &err);
        client_give(s, c);
        record(s, operation ? operation : tag, status, q, started);
        if (q >= 0)
                *ret_text = TAKE_PTR(data);
        return fill_result(ret, tag, q, status, NULL, err);
}

bool hub_service_up(HubService *s)
{
        bool up;

        pthread_mutex_lock(&s->lock);
        up = s->up;
        pthread_mutex_unlock(&s->lock);
        return up;
}

/* ---- hosts ---- */

static uint64_t fnv1a(const char *s)
{
        uint64_t h = UINT64_C(14695981039346656037);

        for (; *s; s++) {
                h ^= (uint8_t)*s;
                h *= UINT64_C(1099511628211);
        }
        return h;
}

/* obj's JSON without the fields given, and its fingerprint */
static int strip(json_object *obj, const char *const *fields, size_t n, char **ret_text,
                 uint64_t *ret_fingerprint)
{
        _cleanup_(json_object_putp) json_object *copy = hub_json_copy(obj);
        char *text;

        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                json_object_object_del(copy, fields[i]);
        text = json_to_string(copy, 0);
        if (!text)
                return -ENOMEM;
        if (ret_fingerprint)
                *ret_fingerprint = fnv1a(text);
        *ret_text = text;
        return 0;
}

int hub_service_host_strip(json_object *host, char **ret_text, uint64_t *ret_fingerprint)
{
        return strip(host, volatile_host_fields, ELEMENTSOF(volatile_host_fields), ret_text,
                     ret_fingerprint);
}

/* lock held */
static InfraEnvState *state_find(HubService *s, const char *id)
{
        return (InfraEnvState *)table_find(&s->infra_envs, id);
}

int hub_service_host(HubService *s, const char *infra_env_id, const char *host_id, json_object **ret)
{
        _cleanup_free_ char *text = NULL;
        InfraEnvState *st;
        void *v = NULL;
        int r = 0;

        pthread_mutex_lock(&s->lock);
        st = state_find(s, infra_env_id);
        if (!st || !st->listed)
                r = -ENODATA;
        else if (!lh_table_lookup_ex(st->hosts, host_id, &v))
                r = -ENOENT;
        else {
                text = strdup(((HostEntry *)v)->text);
                if (!text)
                        r = -ENOMEM;
        }
        pthread_mutex_unlock(&s->lock);
        if (r < 0)
                return r;
        return json_parse(text, strlen(text), BUF_MAX_HTTP_BODY, ret, NULL);
}

int hub_service_host_ids(HubService *s, const char *infra_env_id, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        InfraEnvState *st;
        struct lh_entry *e;
        int r = 0;

        pthread_mutex_lock(&s->lock);
        st = state_find(s, infra_env_id);
        if (!st || !st->listed)
                r = -ENODATA;
        else
                lh_foreach(st->hosts, e)
                {
                        r = strv_extend(&l, lh_entry_k(e));
                        if (r < 0)
                                break;
                }
        pthread_mutex_unlock(&s->lock);
        if (r < 0)
                return r;
        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

/* lock held; takes text. Returns 1 when the host is new or changed. */
static int host_put(InfraEnvState *st, const char *id, char *text, uint64_t fp)
{
        HostEntry *h;
        void *v = NULL;
        char *k;

        if (lh_table_lookup_ex(st->hosts, id, &v)) {
                h = v;
                h->seen = true;
                if (h->fingerprint == fp) {
                        free(text);
                        return 0;
                }
                free(h->text);
                h->text = text;
                h->fingerprint = fp;
                return 1;
        }
        h = calloc(1, sizeof(*h));
        k = strdup(id);
        if (!h || !k || lh_table_insert(st->hosts, k, h) < 0) {
                free(h);
                free(k);
                free(text);
                return -ENOMEM;
        }
        *h = (HostEntry){ .text = text, .fingerprint = fp, .seen = true };
        return 1;
}

int hub_service_host_store(HubService *s, const char *infra_env_id, json_object *host)
{
        const char *id = json_get_string(host, "id");
        InfraEnvState *st;
        char *text = NULL;
        uint64_t fp;
        int r;

        if (isempty(id))
                return -EINVAL;
        r = hub_service_host_strip(host, &text, &fp);
        if (r < 0)
                return r;
        pthread_mutex_lock(&s->lock);
        st = state_find(s, infra_env_id);
        if (st && st->listed)
                r = host_put(st, id, text, fp);
        else
                free(text);
        pthread_mutex_unlock(&s->lock);
        return r < 0 ? r : 0;
}

void hub_service_host_forget(HubService *s, const char *infra_env_id, const char *host_id)
{
        InfraEnvState *st;

        pthread_mutex_lock(&s->lock);
        st = state_find(s, infra_env_id);
        if (st)
                (void)lh_table_delete(st->hosts, host_id);
        pthread_mutex_unlock(&s->lock);
}

/* ---- the poller ---- */

typedef struct Changes {
        char **hosts; /* host ids */
        bool infra_env;
} Changes;

static char *event_key(json_object *ev)
{
        const char *msg = json_get_string(ev, "message");

        return strdup_printf("%s|%s|%s|%016llx", strempty(json_get_string(ev, "event_time")),
                             strempty(json_get_string(ev, "name")), strempty(json_get_string(ev, "host_id")),
                             (unsigned long long)fnv1a(strempty(msg)));
}

/* What a read of an event feed found */
typedef struct FeedNews {
        bool reset; /* the feed moved under us: start again */
        bool host_events; /* an event about a host */
        bool other_events; /* an event about the infra-env or cluster itself */
} FeedNews;

/* The events of one feed (key "infra_env_id" or "cluster_id") since the
 * last one seen. The first event answered must be the last one consumed,
 * else the feed changed under us (events deleted) and is read again from
 * the start. */
static int poll_feed(HubService *s, const char *key, const char *id, EventFeed *feed, FeedNews *news)
{
        _cleanup_free_ char *query = NULL, *eid = http_escape(id);
        HubCallResult res = {};
        unsigned long offset;
        json_object *list;
        size_t n, first = 0;
        int r;

        *news = (FeedNews){};
        if (!eid)
                return -ENOMEM;
        pthread_mutex_lock(&s->lock);
        offset = feed->seen > 0 ? feed->seen - 1 : 0;
        pthread_mutex_unlock(&s->lock);
        query = strdup_printf("%s=%s&offset=%lu&limit=%d&order=ascending", key, eid, offset, EVENTS_PAGE);
        if (!query)
                return -ENOMEM;
        r = hub_service_op(s, ASSISTED_OP_LIST_EVENTS, (char *[]){ NULL }, query, NULL, &res);
        if (r < 0)
                return r;
        if (res.error < 0) {
                r = res.error;
                if (res.status == 404 || res.status == 405 || res.status == 501) {
                        /* no event feed: lists and GETs at every pass instead */
                        pthread_mutex_lock(&s->lock);
                        feed->unsupported = true;
                        pthread_mutex_unlock(&s->lock);
                        r = 0;
                }
                hub_call_result_done(&res);
                return r;
        }
        list = res.body;
        if (!json_object_is_type(list, json_type_array)) {
                hub_call_result_done(&res);
                return -EBADMSG;
        }
        n = json_object_array_length(list);
        pthread_mutex_lock(&s->lock);
        if (feed->seen > 0) {
                _cleanup_free_ char *k = n > 0 ? event_key(json_object_array_get_idx(list, 0)) : NULL;

                if (n == 0 || !k || !streq_ptr(k, feed->last)) {
                        feed->seen = 0;
                        free(feed->last);
                        feed->last = NULL;
                        pthread_mutex_unlock(&s->lock);
                        news->reset = true;
                        hub_call_result_done(&res);
                        return 0;
                }
                first = 1;
        }
        for (size_t i = first; i < n; i++) {
                json_object *ev = json_object_array_get_idx(list, i);

                if (!isempty(json_get_string(ev, "host_id")))
                        news->host_events = true;
                else
                        news->other_events = true;
        }
        if (n > first) {
                free(feed->last);
                feed->last = event_key(json_object_array_get_idx(list, n - 1));
                feed->seen = offset + n;
        }
        pthread_mutex_unlock(&s->lock);
        hub_call_result_done(&res);
        return 0;
}

/* The events of an infra-env since the last one seen. Sets want_list when
 * a host event arrived, ch->infra_env for an infra-env event. */
static int poll_events(HubService *s, InfraEnvState *st, Changes *ch)
{
        FeedNews news;
        int r;

        r = poll_feed(s, "infra_env_id", st->base.id, &st->base.feed, &news);
        if (r < 0)
                return r;
        pthread_mutex_lock(&s->lock);
        if (news.reset || news.host_events)
                st->want_list = true;
        pthread_mutex_unlock(&s->lock);
        if (news.reset || news.other_events)
                ch->infra_env = true;
        return 0;
}

static int poll_hosts(HubService *s, InfraEnvState *st, Changes *ch)
{
        HubCallResult res = {};
        json_object *list;
        struct lh_entry *e, *tmp;
        int r;

        r = hub_service_op(s, ASSISTED_OP_LIST_HOSTS, (char *[]){ st->base.id, NULL }, NULL, NULL, &res);
        if (r < 0)
                return r;
        if (res.error < 0) {
                r = res.error;
                hub_call_result_done(&res);
                return r;
        }
        list = res.body;
        if (!json_object_is_type(list, json_type_array)) {
                hub_call_result_done(&res);
                return -EBADMSG;
        }
        pthread_mutex_lock(&s->lock);
        lh_foreach(st->hosts, e)((HostEntry *)lh_entry_v(e))->seen = false;
        for (size_t i = 0; r >= 0 && i < json_object_array_length(list); i++) {
                json_object *h = json_object_array_get_idx(list, i);
                const char *id = json_get_string(h, "id");
                char *text = NULL;
                uint64_t fp;

                if (isempty(id))
                        continue;
                r = hub_service_host_strip(h, &text, &fp);
                if (r < 0)
                        break;
                r = host_put(st, id, text, fp);
                if (r > 0)
                        r = strv_extend(&ch->hosts, id);
        }
        lh_foreach_safe(st->hosts, e, tmp)
        {
                if (r >= 0 && !((HostEntry *)lh_entry_v(e))->seen) {
                        r = strv_extend(&ch->hosts, lh_entry_k(e));
                        if (r >= 0)
                                lh_table_delete_entry(st->hosts, e);
                }
        }
        if (r >= 0) {
                st->listed = true;
                st->want_list = false;
                st->last_list = now_usec(CLOCK_MONOTONIC);
        }
        pthread_mutex_unlock(&s->lock);
        hub_call_result_done(&res);
        return r < 0 ? r : 0;
}

static void notify(const HubServiceCallbacks *cb, const char *id, Changes *ch)
{
        if (ch->infra_env && cb->infra_env_changed)
                cb->infra_env_changed(id, cb->userdata);
        STRV_FOREACH (h, ch->hosts)
                if (cb->host_changed)
                        cb->host_changed(id, *h, cb->userdata);
}

static int poll_infra_envs(HubService *s, const HubServiceCallbacks *cb, bool resync)
{
        _cleanup_strv_free_ char **ids = NULL, **due = NULL;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        r = cb->tracked_infra_envs(&ids, cb->userdata);
        if (r < 0)
                return r;
        /* forgets infra-envs no object links any more */
        r = table_sync(s, &s->infra_envs, ids, now, &due);
        if (r < 0)
                return r;

        STRV_FOREACH (id, due) {
                Changes ch = {};
                InfraEnvState *st;
                bool listed, want_list, unsupported;
                usec_t last_list;
                int q = 0;

                /* the state is freed only by this thread (the poller);
                 * readers take the lock */
                pthread_mutex_lock(&s->lock);
                st = state_find(s, *id);
                if (st) {
                        listed = st->listed;
                        want_list = st->want_list;
                        unsupported = st->base.feed.unsupported;
                        last_list = st->last_list;
                }
                pthread_mutex_unlock(&s->lock);
                if (!st)
                        continue;
                if (listed && !unsupported)
                        q = poll_events(s, st, &ch);
                pthread_mutex_lock(&s->lock);
                want_list = want_list || st->want_list;
                unsupported = st->base.feed.unsupported;
                pthread_mutex_unlock(&s->lock);
                if (q >= 0 && (resync || !listed || want_list || unsupported ||
                               now - last_list >= s->opts.resync_period))
                        q = poll_hosts(s, st, &ch);
                tracked_done(s, &st->base, q < 0);
                notify(cb, *id, &ch);
                strv_free(ch.hosts);
        }
        return 0;
}

/* fields of a cluster that move without anything a controller reads
 * changing */
static const char *const volatile_cluster_fields[] = {
        "updated_at",
        "hosts",
};

int hub_service_cluster_strip(json_object *cluster, char **ret_text, uint64_t *ret_fingerprint)
{
        return strip(cluster, volatile_cluster_fields, ELEMENTSOF(volatile_cluster_fields), ret_text,
                     ret_fingerprint);
}

/* GET of the cluster (without hosts): 1 when its fingerprint changed */
static int poll_cluster_get(HubService *s, ClusterState *st)
{
        HubCallResult res = {};
        _cleanup_free_ char *text = NULL;
        uint64_t fp;
        int r;

        r = hub_service_op(s, ASSISTED_OP_GET_CLUSTER, (char *[]){ st->base.id, NULL }, "exclude-hosts=true",
                           NULL, &res);
        if (r < 0)
                return r;
        if (res.error < 0) {
                /* gone (404): the ClusterDeployment decides what that means */
                r = res.status == 404 ? 1 : res.error;
                hub_call_result_done(&res);
                return r;
        }
        r = hub_service_cluster_strip(res.body, &text, &fp);
        hub_call_result_done(&res);
        if (r < 0)
                return r;
        pthread_mutex_lock(&s->lock);
        r = !st->fetched || st->fingerprint != fp;
        st->fetched = true;
        st->fingerprint = fp;
        st->last_get = now_usec(CLOCK_MONOTONIC);
        pthread_mutex_unlock(&s->lock);
        return r;
}

/* Every cluster a ClusterDeployment links: its events since the last one
 * seen (any new one, of the cluster or of one of its hosts, reports the
 * cluster), and every resync period (or without an event feed, every
 * pass) a GET whose fingerprint reports what changed without an event
 * (progress, validations). */
static int poll_clusters(HubService *s, const HubServiceCallbacks *cb, bool resync)
{
        _cleanup_strv_free_ char **ids = NULL, **due = NULL;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        int r = 0;

        if (!cb->tracked_clusters)
                return 0;
        r = cb->tracked_clusters(&ids, cb->userdata);
        if (r < 0)
                return r;
        r = table_sync(s, &s->clusters, ids, now, &due);
        if (r < 0)
                return r;

        STRV_FOREACH (id, due) {
                ClusterState *st;
                FeedNews news = {};
                bool fetched, unsupported, changed = false;
                usec_t last_get;
                int q = 0;

                pthread_mutex_lock(&s->lock);
                st = (ClusterState *)table_find(&s->clusters, *id);
                if (st) {
                        fetched = st->fetched;
                        unsupported = st->base.feed.unsupported;
                        last_get = st->last_get;
                }
                pthread_mutex_unlock(&s->lock);
                if (!st)
                        continue;
                if (!unsupported)
                        q = poll_feed(s, "cluster_id", *id, &st->base.feed, &news);
                if (q >= 0 && (news.reset || news.host_events || news.other_events))
                        changed = true;
                pthread_mutex_lock(&s->lock);
                unsupported = st->base.feed.unsupported;
                pthread_mutex_unlock(&s->lock);
                if (q >= 0 && (resync || !fetched || unsupported || changed ||
                               now - last_get >= s->opts.resync_period)) {
                        q = poll_cluster_get(s, st);
                        /* the first GET only sets the fingerprint: the
                         * ClusterDeployment was reconciled when the hub
                         * started (its informer's add) */
                        if (q > 0 && fetched)
                                changed = true;
                }
                tracked_done(s, &st->base, q < 0);
                if (changed && cb->cluster_changed)
                        cb->cluster_changed(*id, cb->userdata);
        }
        return 0;
}

static int poll_pass(HubService *s, const HubServiceCallbacks *cb, bool resync)
{
        int r = poll_infra_envs(s, cb, resync), q;

        q = poll_clusters(s, cb, resync);
        return r < 0 ? r : q;
}

int hub_service_poll_once(HubService *s, const HubServiceCallbacks *cb, bool resync)
{
        return poll_pass(s, cb, resync);
}

void hub_service_poke(HubService *s, const char *infra_env_id)
{
        InfraEnvState *st;

        pthread_mutex_lock(&s->lock);
        st = (InfraEnvState *)table_get(&s->infra_envs, infra_env_id);
        if (st) {
                st->want_list = true;
                st->base.next_attempt = 0;
        }
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_lock(&s->wake_lock);
        s->woken = true;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->wake_lock);
}

static void *poller_thread(void *p)
{
        HubService *s = p;

        for (;;) {
                bool stop;

                (void)poll_pass(s, &s->cb, false);
                pthread_mutex_lock(&s->wake_lock);
                if (!s->woken && !s->stopping) {
                        struct timespec ts =
                                timespec_from_usec(now_usec(CLOCK_MONOTONIC) + s->opts.poll_interval);

                        (void)pthread_cond_timedwait(&s->wake, &s->wake_lock, &ts);
                }
                s->woken = false;
                stop = s->stopping;
                pthread_mutex_unlock(&s->wake_lock);
                if (stop)
                        break;
        }
        return NULL;
}

int hub_service_start(HubService *s, const HubServiceCallbacks *cb)
{
        int r;

        if (s->running)
                return -EALREADY;
        s->cb = *cb;
        s->stopping = false;
        r = -pthread_create(&s->thread, NULL, poller_thread, s);
        if (r < 0)
                return r;
        s->running = true;
        return 0;
}

void hub_service_stop(HubService *s)
{
        if (!s || !s->running)
                return;
        pthread_mutex_lock(&s->wake_lock);
        s->stopping = true;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->wake_lock);
        (void)pthread_join(s->thread, NULL);
        s->running = false;
}
