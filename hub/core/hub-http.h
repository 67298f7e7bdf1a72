/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A minimal HTTP/1.1 server for the probe and metrics endpoints: GET and
 * HEAD of a path, one request per connection (Connection: close), request
 * heads of at most 8 KiB read within 10 s, one thread that serves the
 * connections one after another — what a kubelet probe and a Prometheus
 * scrape need, nothing more.
 *
 * Bind addresses as controller-runtime writes them: "host:port",
 * "[v6]:port", ":port" (every address), "0" (disabled: nothing is
 * started, hub_http_start() returns 0 with *ret NULL).
 */

#include <stddef.h>

typedef struct HubHttp HubHttp;

/* Fills the answer for path (query removed): *ret_status (200, 404, 503),
 * *ret_body (allocated, may be NULL for none), *ret_content_type (static). */
typedef void (*HubHttpHandler)(const char *path, int *ret_status, char **ret_body,
                               const char **ret_content_type, void *userdata);

int hub_http_start(const char *bind_address, HubHttpHandler handler, void *userdata, HubHttp **ret,
                   char **reterr);
/* The port bound (for ":0"). */
unsigned hub_http_port(HubHttp *h);
/* Stops the thread and closes the socket. Accepts NULL, returns NULL. */
HubHttp *hub_http_stop(HubHttp *h);

/* Parses a bind address: 0 with *ret_disabled for "0"; -EINVAL otherwise
 * malformed. ret_host is NULL for every address. */
int hub_http_parse_bind_address(const char *s, char **ret_host, unsigned *ret_port, int *ret_disabled);
