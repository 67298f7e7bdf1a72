/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ares.h>

#include "cleanup.h"
#include "fdutil.h"
#include "resolver.h"
#include "strutil.h"

/* CNAME records followed at most */
#define CNAME_MAX_HOPS 8

static pthread_once_t ares_once = PTHREAD_ONCE_INIT;
static int ares_init_status;

static void ares_global_init(void)
{
        ares_init_status = ares_library_init(ARES_LIB_INIT_ALL);
}

static int ares_to_errno(int status)
{
        switch (status) {
        case ARES_ENOTFOUND:
        case ARES_ENODATA:
        case ARES_ENONAME:
                return -ENOENT;
        case ARES_ETIMEOUT:
                return -ETIMEDOUT;
        case ARES_ECONNREFUSED:
                return -ECONNREFUSED;
        case ARES_ENOMEM:
                return -ENOMEM;
        case ARES_ECANCELLED:
        case ARES_EDESTRUCTION:
                return -ECANCELED;
        case ARES_EBADNAME:
        case ARES_EBADQUERY:
                return -EINVAL;
        default:
                return -EIO;
        }
}

/* c-ares opens its query sockets without SOCK_CLOEXEC: flag them (fdutil.h) */
static int on_ares_socket(ares_socket_t fd, int type, void *userdata)
{
        (void)type;
        (void)userdata;
        return fd_cloexec(fd);
}

static int channel_new(ares_channel *ret)
{
        int s;

        (void)pthread_once(&ares_once, ares_global_init);
        if (ares_init_status != ARES_SUCCESS)
                return -EIO;
        s = ares_init(ret);
        if (s != ARES_SUCCESS)
                return ares_to_errno(s);
        ares_set_socket_configure_callback(*ret, on_ares_socket, NULL);
        return 0;
}

/* Runs the channel until *done or the deadline; at the deadline every
 * pending query is cancelled (its callback runs with ARES_ECANCELLED). */
static void channel_run(ares_channel ch, usec_t deadline, const bool *done)
{
        while (!*done) {
                ares_socket_t socks[ARES_GETSOCK_MAXNUM];
                struct pollfd pfd[ARES_GETSOCK_MAXNUM];
                struct timeval max = { 1, 0 }, tv, *tvp;
                /* c-ares' ARES_GETSOCK_* macros shift a signed 1 into the sign bit */
                unsigned mask = (unsigned)ares_getsock(ch, socks, ARES_GETSOCK_MAXNUM);
                usec_t t = now_usec(CLOCK_MONOTONIC);
                nfds_t n = 0;
                int r, ms;

                if (t >= deadline || stop_requested()) {
                        ares_cancel(ch);
                        return;
                }
                for (int i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
                        short ev = 0;
                        if (mask & (1u << i))
                                ev |= POLLIN;
                        if (mask & (1u << (i + ARES_GETSOCK_MAXNUM)))
                                ev |= POLLOUT;
                        if (ev)
                                pfd[n++] = (struct pollfd){ .fd = socks[i], .events = ev };
                }
                tvp = ares_timeout(ch, &max, &tv);
                ms = (int)(tvp->tv_sec * 1000 + tvp->tv_usec / 1000);
                ms = (int)MIN((usec_t)ms, (deadline - t) / 1000 + 1);
                r = poll(pfd, n, ms);
                if (r < 0 && errno != EINTR) {
                        ares_cancel(ch);
                        return;
                }
                if (r <= 0) {
                        ares_process_fd(ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
                        continue;
                }
                for (nfds_t i = 0; i < n; i++)
                        if (pfd[i].revents)
                                ares_process_fd(ch,
                                                pfd[i].revents & (POLLIN | POLLERR | POLLHUP)
                                                        ? pfd[i].fd
                                                        : ARES_SOCKET_BAD,
                                                pfd[i].revents & POLLOUT ? pfd[i].fd : ARES_SOCKET_BAD);
        }
}

void resolve_result_done(ResolveResult *r)
{
        strv_free(r->ipv4);
        strv_free(r->ipv6);
        free(r->canonical);
        strv_free(r->cname_chain);
        *r = (ResolveResult){};
}

typedef struct AddrQuery {
        bool done;
        int status;
        char **ipv4, **ipv6;
        int error;
} AddrQuery;

static void addrinfo_cb(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
        AddrQuery *q = arg;

        (void)timeouts;
        q->done = true;
        q->status = status;
        if (status == ARES_SUCCESS && ai)
                for (struct ares_addrinfo_node *n = ai->nodes; n; n = n->ai_next) {
                        char text[INET6_ADDRSTRLEN] = "";
                        char ***l;

                        if (n->ai_family == AF_INET) {
                                inet_ntop(AF_INET, &((struct sockaddr_in *)n->ai_addr)->sin_addr, text,
                                          sizeof(text));
                                l = &q->ipv4;
                        } else if (n->ai_family == AF_INET6) {
                                inet_ntop(AF_INET6, &((struct sockaddr_in6 *)n->ai_addr)->sin6_addr, text,
                                          sizeof(text));
                                l = &q->ipv6;
                        } else
                                continue;
                        if (strv_contains(*l, text))
                                continue;
                        if (strv_extend(l, text) < 0)
                                q->error = -ENOMEM;
                }
        if (ai)
                ares_freeaddrinfo(ai);
}

typedef struct CnameQuery {
        bool done;
        int status;
        char *qname;
        char **chain;
        int error;
} CnameQuery;

static void cname_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
        CnameQuery *q = arg;

        (void)timeouts;
        q->done = true;
        q->status = status;
        if (status == ARES_SUCCESS && abuf && alen > 0)
                q->error = dns_parse_cname_chain(abuf, (size_t)alen, &q->qname, &q->chain);
}

int resolve_host(const char *name, usec_t timeout, ResolveResult *ret, char **reterr)
{
        struct ares_addrinfo_hints hints = { .ai_family = AF_UNSPEC };
        ares_channel ch = NULL;
        AddrQuery aq = {};
        ResolveResult res = {};
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        int r;

        r = channel_new(&ch);
        if (r < 0) {
                *reterr = strdup("cannot initialize the resolver (c-ares)");
                return r;
        }
        ares_getaddrinfo(ch, name, NULL, &hints, addrinfo_cb, &aq);
        channel_run(ch, deadline, &aq.done);
        if (!aq.done || aq.error < 0 || (aq.status != ARES_SUCCESS && ares_to_errno(aq.status) != -ENOENT)) {
                r = aq.error < 0 ? aq.error : !aq.done ? -ETIMEDOUT : ares_to_errno(aq.status);
                *reterr = strdup_printf("lookup %s: %s", name,
                                        aq.done && aq.error == 0 ? ares_strerror(aq.status) : strerror(-r));
                strv_free(aq.ipv4);
                strv_free(aq.ipv6);
                ares_destroy(ch);
                return r;
        }
        res.ipv4 = aq.ipv4 ?: strv_copy(NULL);
        res.ipv6 = aq.ipv6 ?: strv_copy(NULL);
        if (!res.ipv4 || !res.ipv6) {
                resolve_result_done(&res);
                ares_destroy(ch);
                return -ENOMEM;
        }
        if (aq.status != ARES_SUCCESS || (!res.ipv4[0] && !res.ipv6[0])) {
                res.not_found = true;
                ares_destroy(ch);
                *ret = res;
                return 0;
        }

        /* the canonical name: follow the CNAME records from the name, one
         * query per hop (a server need not chase the chain for a CNAME
         * query), at most CNAME_MAX_HOPS */
        for (unsigned hop = 0; hop < CNAME_MAX_HOPS; hop++) {
                _cleanup_free_ char *query = NULL;
                CnameQuery cq = {};

                if (hop == 0)
                        query = strdup(name);
                else
                        query = strdup_printf("%s.", res.cname_chain[strv_length(res.cname_chain) - 1]);
                if (!query) {
                        r = -ENOMEM;
                        break;
                }
                ares_search(ch, query, DNS_CLASS_IN, DNS_TYPE_CNAME, cname_cb, &cq);
                channel_run(ch, deadline, &cq.done);
                free(cq.qname);
                if (cq.error == -ENOMEM) {
                        strv_free(cq.chain);
                        r = -ENOMEM;
                        break;
                }
                if (!cq.chain || !cq.chain[0]) {
                        strv_free(cq.chain);
                        break;
                }
                /* a server may return the whole chain at once */
                STRV_FOREACH (t, cq.chain) {
                        if (strv_contains(res.cname_chain, *t))
                                continue; /* a loop */
                        r = strv_extend(&res.cname_chain, *t);
                        if (r < 0)
                                break;
                }
                strv_free(cq.chain);
                if (r < 0 || strv_length(res.cname_chain) <= hop)
                        break;
        }
        ares_destroy(ch);
        if (r == -ENOMEM) {
                resolve_result_done(&res);
                return -ENOMEM;
        }
        if (res.cname_chain && res.cname_chain[0])
                res.canonical = strdup_printf("%s.", res.cname_chain[strv_length(res.cname_chain) - 1]);
        else
                res.canonical = endswith(name, ".") ? strdup(name) : strdup_printf("%s.", name);
        if (!res.canonical) {
                resolve_result_done(&res);
                return -ENOMEM;
        }
        *ret = res;
        return 0;
}

typedef struct HostQuery {
        bool done;
        int status;
        char **names;
} HostQuery;

static void host_cb(void *arg, int status, int timeouts, struct hostent *h)
{
        HostQuery *q = arg;

        (void)timeouts;
        q->done = true;
        q->status = status;
        if (status != ARES_SUCCESS || !h)
                return;
        if (h->h_name && !isempty(h->h_name))
                (void)strv_extend(&q->names, h->h_name);
        for (char **a = h->h_aliases; a && *a; a++)
                if (!strv_contains(q->names, *a))
                        (void)strv_extend(&q->names, *a);
}

int resolve_reverse(const char *address, usec_t timeout, char ***ret_names)
{
        struct in6_addr a6;
        struct in_addr a4;
        ares_channel ch = NULL;
        HostQuery q = {};
        int r;

        r = channel_new(&ch);
        if (r < 0)
                return r;
        if (inet_pton(AF_INET, address, &a4) == 1)
                ares_gethostbyaddr(ch, &a4, sizeof(a4), AF_INET, host_cb, &q);
        else if (inet_pton(AF_INET6, address, &a6) == 1)
                ares_gethostbyaddr(ch, &a6, sizeof(a6), AF_INET6, host_cb, &q);
        else {
                ares_destroy(ch);
                return -EINVAL;
        }
        channel_run(ch, now_usec(CLOCK_MONOTONIC) + timeout, &q.done);
        ares_destroy(ch);
        if (!q.done || q.status != ARES_SUCCESS || !q.names) {
                strv_free(q.names);
                return !q.done ? -ETIMEDOUT : q.status == ARES_SUCCESS ? -ENOENT : ares_to_errno(q.status);
        }
        *ret_names = q.names;
        return 0;
}
