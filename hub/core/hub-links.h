/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The links the hub publishes in statuses: debugInfo.eventsURL (InfraEnv,
 * AgentClusterInstall, Agent) and debugInfo.logsURL (AgentClusterInstall,
 * Agent), built as the service's own controllers build them
 * (internal/controller/controllers/common.go generateEventsURL and
 * signURL, gencrypto.SignURL): on the service's public base URL (its
 * SERVICE_BASE_URL, which users and the Cluster API provider reach, not
 * the in-cluster address cradle-hub talks to), the query's keys sorted
 * as Go's url.Values.Encode sorts them, and under the service's local
 * authentication with an `api_key` (CAPOA reads it from the InfraEnv's
 * eventsURL to download the discovery ignition).
 *
 * The service's controllers sign with the service's private key; the hub
 * has none, so it takes the base and the api_key from a URL the service
 * handed out: the presigned discovery.ign URL of an InfraEnv
 * (GetInfraEnvPresignedFileURL: SERVICE_BASE_URL + the file's path, and
 * under local auth an api_key signed with the infra-env's key, exactly
 * the key upstream's InfraEnv and Agent eventsURLs carry). Pure.
 */

typedef struct json_object json_object;

typedef struct HubLinkSigner {
        char *base; /* "https://assisted.example.com[/prefix]", no trailing slash */
        char *api_key; /* as the URL carries it (query-escaped), NULL without one */
} HubLinkSigner;

void hub_link_signer_done(HubLinkSigner *s);

/* From a URL the service handed out: everything before
 * "/api/assisted-install/", and its api_key. -EINVAL when the URL has no
 * such path. */
int hub_link_signer_parse(const char *url, HubLinkSigner *ret);

/* The URL of an InfraEnv's status the service handed out (its presigned
 * discovery.ign URL), or NULL. Borrowed. */
const char *hub_link_source_of_infraenv(json_object *infraenv);

/* <base>/api/assisted-install/v2/events?[api_key=K&]<key>=<id>; allocated. */
char *hub_link_events(const HubLinkSigner *s, const char *key, const char *id);
/* <base>/api/assisted-install/v2/clusters/<id>/logs[?api_key=K]; allocated. */
char *hub_link_cluster_logs(const HubLinkSigner *s, const char *cluster_id);
/* <base>/api/assisted-install/v2/clusters/<cid>/logs?[api_key=K&]host_id=<hid>&logs_type=host */
char *hub_link_host_logs(const HubLinkSigner *s, const char *cluster_id, const char *host_id);

/* obj[key] = want, unless it holds the same link with another api_key
 * (a token the service made at another time, as good): upstream sets
 * these links once, the hub keeps them as long as they are right and
 * replaces one on another base or without a key the service wants. */
int hub_link_set(json_object *obj, const char *key, const char *want);
