/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "hub-http.h"
#include "strutil.h"
#include "timeutil.h"

#define HEAD_MAX (8 * 1024)
#define READ_TIMEOUT_MS (10 * 1000)

struct HubHttp {
        int fd;
        int wake_fd;
        unsigned port;
        HubHttpHandler handler;
        void *userdata;
        pthread_t thread;
};

int hub_http_parse_bind_address(const char *s, char **ret_host, unsigned *ret_port, int *ret_disabled)
{
        _cleanup_free_ char *host = NULL;
        const char *colon, *port;
        unsigned p;

        *ret_disabled = 0;
        if (isempty(s))
                return -EINVAL;
        if (streq(s, "0")) {
                *ret_disabled = 1;
                *ret_host = NULL;
                *ret_port = 0;
                return 0;
        }
        if (s[0] == '[') {
                const char *end = strchr(s, ']');

                if (!end || end[1] != ':')
                        return -EINVAL;
                host = strndup(s + 1, (size_t)(end - s - 1));
                port = end + 2;
        } else {
                colon = strrchr(s, ':');
                if (!colon)
                        return -EINVAL;
                if (colon != s)
                        host = strndup(s, (size_t)(colon - s));
                port = colon + 1;
        }
        if ((s[0] == '[' || s[0] != ':') && !host)
                return -ENOMEM;
        if (safe_atou(port, &p) < 0 || p > 65535)
                return -EINVAL;
        *ret_host = TAKE_PTR(host);
        *ret_port = p;
        return 0;
}

static void reply(int fd, int status, const char *content_type, const char *body, bool head)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_JSON_DOC);
        const char *text = status == 200   ? "OK"
                           : status == 404 ? "Not Found"
                           : status == 405 ? "Method Not Allowed"
                           : status == 503 ? "Service Unavailable"
                                           : "Bad Request";
        size_t len = body ? strlen(body) : 0;

        if (buf_appendf(&b,
                        "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                        "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
                        status, text, content_type, len) < 0)
                return;
        if (!head && len > 0 && buf_append(&b, body, len) < 0)
                return;
        (void)write_all(fd, b.data, b.len);
}

static void serve(HubHttp *h, int fd)
{
        _cleanup_buf_ Buf b = BUF_INIT(HEAD_MAX);
        _cleanup_free_ char *body = NULL, *method = NULL, *target = NULL;
        const char *content_type = "text/plain; charset=utf-8";
        usec_t until = now_usec(CLOCK_MONOTONIC) + READ_TIMEOUT_MS * USEC_PER_MSEC;
        char *eol, *sp1, *sp2, *q;
        int status = 404;

        /* read the request head */
        while (!b.data || !strstr(b.data, "\r\n\r\n")) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char chunk[1024];
                usec_t now = now_usec(CLOCK_MONOTONIC);
                ssize_t n;

                if (now >= until || poll(&p, 1, (int)((until - now) / USEC_PER_MSEC) + 1) <= 0)
                        return;
                n = read(fd, chunk, sizeof(chunk));
                if (n <= 0)
                        return;
                if (buf_append(&b, chunk, (size_t)n) < 0) {
                        reply(fd, 400, content_type, "request head too large\n", false);
                        return;
                }
        }
        eol = strstr(b.data, "\r\n");
        *eol = 0;
        sp1 = strchr(b.data, ' ');
        sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        if (!sp1 || !sp2 || !startswith(sp2 + 1, "HTTP/1.")) {
                reply(fd, 400, content_type, "malformed request\n", false);
                return;
        }
        method = strndup(b.data, (size_t)(sp1 - b.data));
        target = strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
        if (!method || !target)
                return;
        if (!streq(method, "GET") && !streq(method, "HEAD")) {
                reply(fd, 405, content_type, "only GET and HEAD\n", false);
                return;
        }
        q = strchr(target, '?');
        if (q)
                *q = 0;
        h->handler(target, &status, &body, &content_type, h->userdata);
        reply(fd, status, content_type, body, streq(method, "HEAD"));
}

static void *http_thread(void *p)
{
        HubHttp *h = p;

        for (;;) {
                struct pollfd fds[2] = { { .fd = h->fd, .events = POLLIN },
                                         { .fd = h->wake_fd, .events = POLLIN } };
                int c;

                if (poll(fds, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (fds[1].revents)
                        break;
                if (!(fds[0].revents & POLLIN))
                        continue;
                c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                serve(h, c);
                (void)shutdown(c, SHUT_WR);
                close(c);
        }
        return NULL;
}

int hub_http_start(const char *bind_address, HubHttpHandler handler, void *userdata, HubHttp **ret,
                   char **reterr)
{
        _cleanup_free_ char *host = NULL, *port_text = NULL;
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        _cleanup_free_ HubHttp *h = NULL;
        _cleanup_close_ int fd = -1;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        unsigned port;
        int disabled, r, one = 1, zero = 0;

        *ret = NULL;
        r = hub_http_parse_bind_address(bind_address, &host, &port, &disabled);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("invalid bind address '%s' (host:port, :port or 0)",
                                                strna(bind_address));
                return r;
        }
        if (disabled)
                return 0;
        port_text = strdup_printf("%u", port);
        if (!port_text)
                return -ENOMEM;
        if (!host)
                hints.ai_family = AF_INET6; /* [::]:port, dual-stack below */
        r = getaddrinfo(host ? host : "::", port_text, &hints, &ai);
        if (r != 0) {
                if (reterr)
                        *reterr = strdup_printf("invalid bind address '%s': %s", bind_address,
                                                gai_strerror(r));
                return -EINVAL;
        }
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                r = -errno;
                freeaddrinfo(ai);
                return r;
        }
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (ai->ai_family == AF_INET6 && !host)
                (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        r = bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 0;
        freeaddrinfo(ai);
        if (r < 0 || listen(fd, 16) < 0) {
                r = r < 0 ? r : -errno;
                if (reterr)
                        *reterr = strdup_printf("cannot listen on %s: %s", bind_address, strerror(-r));
                return r;
        }
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
                return -errno;
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
        h->handler = handler;
        h->userdata = userdata;
        h->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (h->wake_fd < 0)
                return -errno;
        h->fd = TAKE_FD(fd);
        r = -pthread_create(&h->thread, NULL, http_thread, h);
        if (r < 0) {
                close(h->fd);
                close(h->wake_fd);
                return r;
        }
        *ret = TAKE_PTR(h);
        return 0;
}

unsigned hub_http_port(HubHttp *h)
{
        return h ? h->port : 0;
}

HubHttp *hub_http_stop(HubHttp *h)
{
        uint64_t one = 1;

        if (!h)
                return NULL;
        (void)!write(h->wake_fd, &one, sizeof(one));
        (void)pthread_join(h->thread, NULL);
        close(h->fd);
        close(h->wake_fd);
        free(h);
        return NULL;
}
