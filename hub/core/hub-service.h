/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the hub knows of assisted-service, and every call it makes to it
 * (hub/README.md, "Change detection" and "Faults").
 *
 * Calls: hub_service_call() on a pool of clients (one per calling thread
 * at a time), each timed into cradle_hub_service_request_duration_seconds;
 * the answer becomes a HubCallResult (error texts scrubbed of secrets).
 *
 * The poller (one thread) follows every infra-env the callbacks name: the
 * infra-env's events since the last one seen, and its host list when an
 * event names a host, when a host list was never made, and every resync
 * period; and every cluster they name: its events since the last one
 * seen, and a GET (fingerprinted) every resync period. Hosts are kept as JSON text without the fields that change at
 * every check-in; each host's fingerprint decides whether it changed, and
 * only new, changed and vanished hosts are reported.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "assisted/assisted-user.h"
#include "hub-plan.h"
#include "timeutil.h"

typedef struct HubService HubService;
typedef struct HubMetrics HubMetrics;
typedef struct json_object json_object;

typedef struct HubServiceOptions {
        const char *url;
        const char *ca_file;
        const char *token_file;
        usec_t timeout; /* per call; 0: 30 s */
        usec_t poll_interval; /* 0: 10 s */
        usec_t resync_period; /* 0: 2 min */
        usec_t max_backoff; /* 0: 2 min */
} HubServiceOptions;

typedef struct HubServiceCallbacks {
        /* the infra-env ids to follow: a NULL-terminated strv the poller frees */
        int (*tracked_infra_envs)(char ***ret_ids, void *userdata);
        /* a host of the infra-env appeared, changed, or vanished */
        void (*host_changed)(const char *infra_env_id, const char *host_id, void *userdata);
        /* an event about the infra-env itself (no host) */
        void (*infra_env_changed)(const char *infra_env_id, void *userdata);
        /* the cluster ids to follow (may be NULL: none) */
        int (*tracked_clusters)(char ***ret_ids, void *userdata);
        /* a cluster changed: an event of it or of one of its hosts, or its
         * fingerprint at a resync */
        void (*cluster_changed)(const char *cluster_id, void *userdata);
        void *userdata;
} HubServiceCallbacks;

/* The generation of the service's cluster API, as the service itself has
 * shown it (never guessed from a version number; hub/README.md, "Which
 * service"). A service may be upgraded or rolled back under the hub: every
 * answer can move it. */
typedef enum HubServiceApi {
        /* nothing shown yet: a body both generations name the same way
         * where one exists, else the union (control_plane_count, api_vip
         * beside api_vips), which teaches the hub at the first refusal */
        HUB_SERVICE_API_UNKNOWN,
        /* late 2023 (assisted-service b29f9bcf): no control_plane_count or
         * load_balancer in its models, high_availability_mode Full/None,
         * api_vip beside api_vips */
        HUB_SERVICE_API_2023,
        /* control_plane_count, no singular api_vip/ingress_vip (the 2026
         * swagger) */
        HUB_SERVICE_API_CURRENT,
        _HUB_SERVICE_API_MAX,
        _HUB_SERVICE_API_INVALID = -EINVAL,
} HubServiceApi;

const char *hub_service_api_to_string(HubServiceApi api);
/* What an answer shows of the API, from what it knew before (pure): a 400
 * refusing a body field one generation lacks ("json: unknown field
 * \"control_plane_count\"" from a late-2023 service, "api_vip" from a
 * current one: go-swagger's strict decoding, ENABLE_REJECT_UNKNOWN_FIELDS),
 * or a cluster (or list of clusters) carrying control_plane_count, which
 * only the current model has. Anything else: current. */
HubServiceApi hub_service_api_learn(HubServiceApi current, const HubCallResult *r);
/* The field a 400 refuses as unknown to the service's model, or NULL
 * (pure; points into r->message, copied into ret of size n). */
const char *hub_call_unknown_field(const HubCallResult *r, char *ret, size_t n);
/* r refused a field its body should not have had: its answer showed an
 * API other than shaped_for, the one the body was shaped for (pure). */
bool hub_service_api_refused(HubServiceApi shaped_for, const HubCallResult *r);
/* What the service has shown so far. */
HubServiceApi hub_service_api(HubService *s);

int hub_service_new(const HubServiceOptions *o, HubMetrics *metrics, HubService **ret, char **reterr);
/* Stops the poller first. Accepts NULL, returns NULL. */
HubService *hub_service_free(HubService *s);

/* One call: 0 with ret filled whatever the outcome (ret->error says);
 * < 0 only when the call could not be made at all (memory). The caller
 * releases ret with hub_call_result_done(). */
/* tag names the result; operation (the swagger operationId, NULL: tag)
 * the metrics series. */
int hub_service_call(HubService *s, const char *tag, const char *operation, const char *method,
                     const char *path, json_object *body, long expect, HubCallResult *ret);
int hub_service_op(HubService *s, AssistedOp op, char *const *params, const char *query, json_object *body,
                   HubCallResult *ret);
/* A text download (an infra-env file); ret->body stays NULL, the text is
 * in *ret_text on success. */
int hub_service_download(HubService *s, const char *tag, const char *operation, const char *path, size_t max,
                         HubCallResult *ret, char **ret_text);
void hub_call_result_done(HubCallResult *r);

/* ---- the poller ---- */

int hub_service_start(HubService *s, const HubServiceCallbacks *cb);
void hub_service_stop(HubService *s);
/* One pass now, on the calling thread (tests, benchmarks); resync forces
 * a host list of every infra-env. The callbacks must be set. */
int hub_service_poll_once(HubService *s, const HubServiceCallbacks *cb, bool resync);
/* Wakes the poller with a host list of this infra-env asked for. */
void hub_service_poke(HubService *s, const char *infra_env_id);

/* The cached host: 0, -ENOENT when the infra-env's last list did not have
 * it, -ENODATA when the infra-env was never listed. */
int hub_service_host(HubService *s, const char *infra_env_id, const char *host_id, json_object **ret);
/* The host ids of the last list; -ENODATA when never listed. */
int hub_service_host_ids(HubService *s, const char *infra_env_id, char ***ret);
/* Puts a host into the cache (what a GET of it answered), so that the next
 * list does not report it again as changed. */
int hub_service_host_store(HubService *s, const char *infra_env_id, json_object *host);

/* Forgets a host of the cache (it was deregistered, or a GET found it
 * gone): the next list reports it only if it came back. */
void hub_service_host_forget(HubService *s, const char *infra_env_id, const char *host_id);

/* False after a transport error or a 5xx, true after a good answer. */
bool hub_service_up(HubService *s);

/* The cluster's JSON without its hosts and the fields that move by
 * themselves, and its fingerprint (exposed for tests). */
int hub_service_cluster_strip(json_object *cluster, char **ret_text, uint64_t *ret_fingerprint);
/* The host's JSON without the fields that change at every check-in, and
 * its fingerprint (exposed for tests). */
int hub_service_host_strip(json_object *host, char **ret_text, uint64_t *ret_fingerprint);
