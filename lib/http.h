/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * HTTP client over libcurl, shared by the service client, the installer,
 * the step handlers and the Kubernetes client.
 *
 * One HttpClient owns one curl easy handle, so consecutive requests reuse
 * the connection. Requests on one client are serialized by a lock; use a
 * second client for a long-lived stream (a watch) beside other traffic.
 *
 * TLS: the system trust store is always loaded explicitly from the first
 * bundle found (RHEL, Debian, SUSE locations, or $SSL_CERT_FILE), so that a
 * static binary trusts the host's CAs; a CA given by file or PEM data is
 * *added* to it, as the Go agent does with --cacert, unless
 * ca_replace_system asks for that CA alone (kubeconfig semantics).
 *
 * Proxies follow Go's http.ProxyFromEnvironment: HTTPS_PROXY/https_proxy for
 * https URLs, HTTP_PROXY/http_proxy for http, NO_PROXY/no_proxy (host
 * suffixes, IPs, CIDRs, "*"); localhost and loopback are never proxied. A
 * client made with .direct never uses one.
 *
 * Retries: transport failures (refused, reset, timeout, name resolution)
 * and the configured status codes are retried with full-jitter exponential
 * back-off; a request whose response streamed data to the caller is not.
 * Nothing else resends: a POST goes on a fresh connection, because libcurl
 * silently resends a request whose reused connection died before the
 * answer, and the server may have taken it (a registration made twice).
 *
 * Errors: 0 means a response arrived, whatever its status. A negative errno
 * means none did: -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH (name not
 * resolved), -ECONNRESET, -EPROTO (TLS or protocol), -EPERM (certificate
 * rejected), -E2BIG (response above the cap), -ECANCELED (stop requested or
 * the stream callback aborted). reterr then holds a message in which URLs are
 * redacted.
 */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "timeutil.h"

typedef struct HttpClient HttpClient;
typedef struct json_object json_object;

typedef enum HttpRetryOn {
        HTTP_RETRY_TRANSPORT = 1 << 0, /* no response: refused, reset, timeout, DNS */
        HTTP_RETRY_5XX = 1 << 1, /* any 5xx status */
        HTTP_RETRY_503_504 = 1 << 2, /* 503 and 504 only (the Go agent's rehttp rule) */
        HTTP_RETRY_429 = 1 << 3,
} HttpRetryOn;

typedef struct HttpRetryPolicy {
        unsigned max_retries; /* attempts = 1 + max_retries */
        usec_t base_delay; /* full jitter: uniform in [0, min(max_delay, base * 2^attempt)) */
        usec_t max_delay;
        HttpRetryOn on;
} HttpRetryPolicy;

/* The Go agent's transport: 3 retries, 2 s doubling to 10 s, on transport
 * errors and 503/504. */
#define HTTP_RETRY_GO_AGENT \
        ((HttpRetryPolicy){ .max_retries = 3, \
                            .base_delay = 2 * USEC_PER_SEC, \
                            .max_delay = 10 * USEC_PER_SEC, \
                            .on = HTTP_RETRY_TRANSPORT | HTTP_RETRY_503_504 })
#define HTTP_RETRY_NONE ((HttpRetryPolicy){ 0 })

/* Called before sleeping for a retry; reason is "status 503" or the
 * transport error text. For the applet to log at its own level. */
typedef void (*HttpRetryCallback)(void *userdata, const char *method, const char *redacted_url,
                                  unsigned attempt, unsigned attempts, usec_t delay, const char *reason);

typedef struct HttpClientOptions {
        const char *base_url;
        const char *ca_file; /* PEM file added to the trust store */
        const char *ca_pem; /* PEM data added to the trust store */
        bool ca_replace_system; /* trust only ca_file/ca_pem */
        const char *client_cert_pem; /* client certificate (PEM data) */
        const char *client_key_pem;
        bool insecure; /* no certificate or host name verification */
        bool direct; /* never through a proxy, whatever the environment says (Go's
                      * http.Transport without a Proxy function) */
        const char *user_agent; /* default "cradle/<version>" */
        usec_t connect_timeout; /* default 30 s */
        usec_t total_timeout; /* default none */
        size_t max_response; /* default BUF_MAX_HTTP_BODY */
        HttpRetryPolicy retry;
        HttpRetryCallback on_retry;
        void *retry_userdata;
} HttpClientOptions;

int http_client_new(const HttpClientOptions *o, HttpClient **ret, char **reterr);
HttpClient *http_client_free(HttpClient *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(HttpClient *, http_client_free)

/* A header sent with every request ("X-Secret-Key", token). A NULL value
 * removes it. Values of credential headers are registered as secrets. */
int http_client_set_header(HttpClient *c, const char *name, const char *value);
const char *http_client_base_url(const HttpClient *c);

typedef int (*HttpDataCallback)(void *userdata, const char *data, size_t n);

typedef struct HttpRequest {
        const char *method; /* default GET, or POST when there is a body */
        const char *path; /* joined to base_url; an absolute URL is used as is */
        char *const *headers; /* extra "Name: value" lines */
        const void *body;
        size_t body_len;
        const char *content_type; /* default application/json when there is a body */
        const HttpRetryPolicy *retry; /* overrides the client's */
        usec_t total_timeout; /* overrides the client's */
        HttpDataCallback on_data; /* streams the body here instead of buffering it */
        void *userdata;
        bool stream_success_only; /* with on_data: the body of a non-2xx answer is buffered
                                   * in the response (an error document) instead */
        const char *upload_field; /* multipart/form-data upload of upload_file */
        const char *upload_file;
        const char *upload_filename;
} HttpRequest;

typedef struct HttpResponse {
        long status;
        char *body; /* NUL-terminated; empty when streamed */
        size_t body_len;
        char **headers; /* "name: value" with the name lower-cased, last response only */
        unsigned attempts;
} HttpResponse;

void http_response_done(HttpResponse *r);
#define _cleanup_http_response_ _cleanup_(http_response_done)
/* Value of a response header (name case-insensitive), or NULL. */
const char *http_response_header(const HttpResponse *r, const char *name);

int http_request(HttpClient *c, const HttpRequest *req, HttpResponse *ret, char **reterr);

/* JSON in and out: serializes body (may be NULL), and parses a JSON reply
 * when ret_json is given and the body is not empty. A body that is not JSON
 * gives -EBADMSG (the response is still returned in ret). */
int http_request_json(HttpClient *c, const char *method, const char *path, json_object *body,
                      HttpResponse *ret, json_object **ret_json, char **reterr);

/* Go's http.StatusText: the standard reason phrase of status, "" for a
 * status it does not know. */
const char *http_status_text(long status);

/* base + path with exactly one slash between them. */
char *http_url_join(const char *base, const char *path);
/* Percent-encodes a path segment or query value. */
char *http_escape(const char *s);
/* The proxy Go's ProxyFromEnvironment would use for url, or NULL. */
int http_proxy_for_url(const char *url, char **ret);
