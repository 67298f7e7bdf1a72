/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The single node's router probe after a failure (logRouterStatus,
 * notes/controller.md §5.7; controller/router.h decides): a thread of its
 * own, as upstream's goroutine, so that the final log upload and
 * must-gather never wait for it. Every interval until the deadline, or
 * until the controller stops it at its end: the ingress canary's health,
 * then the router's internal health check; each result only logged. Its
 * own HTTP client: no proxy, no certificate verification, upstream's 10 s
 * per request (the most the controller's end waits for it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "controller/router.h"
#include "controller/run.h"
#include "http.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

/* dnsValidationTimeout: each request, connection included */
#define ROUTER_PROBE_TIMEOUT (10 * USEC_PER_SEC)
/* the canary's answer is logged: a health text, not a document */
#define ROUTER_PROBE_MAX_BODY (64 * 1024)

struct RouterProbe {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond; /* CLOCK_MONOTONIC */
        bool stopping;
        usec_t interval;
        usec_t deadline; /* CLOCK_MONOTONIC */
        char *canary_url;
        char *health_url;
        HttpClient *http;
};

/* GetOutboundIP: the source address of a route to 8.8.8.8 (a UDP
 * connect sends nothing); NULL when there is none. */
static char *outbound_address(void)
{
        struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(80) }, from = {};
        socklen_t len = sizeof(from);
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        char text[INET_ADDRSTRLEN];

        if (fd < 0 || inet_pton(AF_INET, "8.8.8.8", &to.sin_addr) != 1 ||
            connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 ||
            getsockname(fd, (struct sockaddr *)&from, &len) < 0 ||
            !inet_ntop(AF_INET, &from.sin_addr, text, sizeof(text)))
                return NULL;
        return strdup(text);
}

/* One GET: the status as Go prints it and the body, or why none came. */
static int probe_get(RouterProbe *p, const char *url, char **ret_status, char **ret_body, char **reterr)
{
        _cleanup_http_response_ HttpResponse r = {};
        int ret;

        ret = http_request(p->http, &(HttpRequest){ .method = "GET", .path = url }, &r, reterr);
        if (ret < 0)
                return ret;
        *ret_status = router_status_line(r.status);
        if (ret_body)
                *ret_body = TAKE_PTR(r.body);
        return *ret_status ? 0 : -ENOMEM;
}

static void probe_round(RouterProbe *p)
{
        _cleanup_free_ char *status = NULL, *body = NULL, *err = NULL, *status2 = NULL, *err2 = NULL;
        bool stopping;

        if (probe_get(p, p->canary_url, &status, &body, &err) < 0)
                log_warning("Failed to reach console: %s", strna(err));
        else
                log_info("canary url status %s, response %s", status, strempty(body));
        pthread_mutex_lock(&p->lock);
        stopping = p->stopping;
        pthread_mutex_unlock(&p->lock);
        if (stopping)
                return;
        if (probe_get(p, p->health_url, &status2, NULL, &err2) < 0)
                log_warning("Failed to reach internal router health: %s", strna(err2));
        else
                log_info("route internal health status %s", status2);
}

static void *probe_thread(void *userdata)
{
        RouterProbe *p = userdata;

        /* WaitForPredicate: a round at once, then one every interval */
        for (;;) {
                probe_round(p);
                if (now_usec(CLOCK_MONOTONIC) + p->interval > p->deadline ||
                    !cond_sleep_unless_stopped(&p->cond, &p->lock, &p->stopping, p->interval))
                        break;
        }
        return NULL;
}

static RouterProbe *router_probe_free(RouterProbe *p)
{
        if (!p)
                return NULL;
        http_client_free(p->http);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->cond);
        free(p->canary_url);
        free(p->health_url);
        free(p);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(RouterProbe *, router_probe_free)

int router_probe_start(const char *cluster_name, const char *base_dns_domain, usec_t interval,
                       usec_t timeout, RouterProbe **ret)
{
        _cleanup_(router_probe_freep) RouterProbe *p = NULL;
        _cleanup_free_ char *address = NULL, *err = NULL;
        pthread_condattr_t attr;
        int r;

        log_info("Start checking router status");
        p = calloc(1, sizeof(*p));
        if (!p)
                return log_oom();
        pthread_mutex_init(&p->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&p->cond, &attr);
        pthread_condattr_destroy(&attr);
        p->interval = interval;
        p->deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        address = outbound_address();
        p->canary_url = router_canary_url(cluster_name, base_dns_domain);
        p->health_url = router_health_url(address);
        if (!p->canary_url || !p->health_url)
                return log_oom();
        r = http_client_new(&(HttpClientOptions){ .insecure = true,
                                                  .direct = true,
                                                  .connect_timeout = ROUTER_PROBE_TIMEOUT,
                                                  .total_timeout = ROUTER_PROBE_TIMEOUT,
                                                  .max_response = ROUTER_PROBE_MAX_BODY },
                            &p->http, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to check the router: %s", strna(err));
        r = -pthread_create(&p->thread, NULL, probe_thread, p);
        if (r < 0)
                return log_error_errno(r, "Failed to check the router: %m");
        *ret = TAKE_PTR(p);
        return 0;
}

RouterProbe *router_probe_stop(RouterProbe *p)
{
        if (!p)
                return NULL;
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        (void)pthread_join(p->thread, NULL);
        return router_probe_free(p);
}
