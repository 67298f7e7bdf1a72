/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <ares.h>

#include "cleanup.h"
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

/* The channel's sockets are ours (ares_set_socket_functions): opened
 * close-on-exec and non-blocking, and the reads counted, because c-ares
 * ends a query with ARES_ECONNREFUSED both when every server's port was
 * closed and when every server answered REFUSED or SERVFAIL, which Go
 * tells apart ("connection refused", "server misbehaving"). */
typedef struct SockStats {
        unsigned answers; /* datagrams or stream data read */
        unsigned refused; /* reads that failed with ECONNREFUSED */
} SockStats;

static ares_socket_t sock_open(int domain, int type, int protocol, void *userdata)
{
        int fd = socket(domain, type | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);

        (void)userdata;
        return fd < 0 ? ARES_SOCKET_BAD : fd;
}

static int sock_close(ares_socket_t fd, void *userdata)
{
        (void)userdata;
        return close(fd);
}

static int sock_connect(ares_socket_t fd, const struct sockaddr *a, ares_socklen_t len, void *userdata)
{
        (void)userdata;
        return connect(fd, a, len);
}

static ares_ssize_t sock_recvfrom(ares_socket_t fd, void *buf, size_t len, int flags, struct sockaddr *from,
                                  ares_socklen_t *from_len, void *userdata)
{
        SockStats *st = userdata;
        ssize_t n = recvfrom(fd, buf, len, flags, from, from_len);

        if (n > 0)
                st->answers++;
        else if (n < 0 && errno == ECONNREFUSED)
                st->refused++;
        return n;
}

static ares_ssize_t sock_sendv(ares_socket_t fd, const struct iovec *v, int n, void *userdata)
{
        (void)userdata;
        return writev(fd, v, n);
}

static const struct ares_socket_functions sock_functions = {
        .asocket = sock_open,
        .aclose = sock_close,
        .aconnect = sock_connect,
        .arecvfrom = sock_recvfrom,
        .asendv = sock_sendv,
};

static int channel_new(ares_channel *ret, SockStats *stats)
{
        int s;

        (void)pthread_once(&ares_once, ares_global_init);
        if (ares_init_status != ARES_SUCCESS)
                return -EIO;
        s = ares_init(ret);
        if (s != ARES_SUCCESS)
                return ares_to_errno(s);
        ares_set_socket_functions(*ret, &sock_functions, stats);
        return 0;
}

/* Runs the channel until *done or the deadline; at the deadline every
 * pending query is cancelled (its callback runs with ARES_ECANCELLED).
 * Returns 0, -ETIMEDOUT (the deadline) or -ECANCELED (a stop request). */
static int channel_run(ares_channel ch, usec_t deadline, const bool *done)
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
                        return t >= deadline ? -ETIMEDOUT : -ECANCELED;
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
                        r = -errno;
                        ares_cancel(ch);
                        return r;
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
        return 0;
}

const char *resolve_go_error(int status)
{
        /* Go's net package (dnsclient_unix.go, net.go) */
        switch (status) {
        case ARES_ENOTFOUND:
        case ARES_ENODATA:
        case ARES_ENONAME:
                return "no such host";
        case ARES_ETIMEOUT:
                return "i/o timeout";
        case ARES_ESERVFAIL: /* errServerTemporarilyMisbehaving */
        case ARES_EREFUSED: /* errServerMisbehaving, as every other rcode */
        case ARES_ENOTIMP:
        case ARES_EFORMERR:
                return "server misbehaving";
        case ARES_ECONNREFUSED: /* the socket's error, after an ICMP port unreachable */
                return "read: connection refused";
        case ARES_EBADRESP:
                return "cannot unmarshal DNS message";
        case ARES_ECANCELLED:
        case ARES_EDESTRUCTION:
                return "operation was canceled";
        default:
                return NULL;
        }
}

char *resolve_error_message(const char *name, const char *server, int status)
{
        const char *text = resolve_go_error(status);
        _cleanup_free_ char *own = NULL;

        if (!text)
                text = own = strdup_printf("%s", ares_strerror(status));
        if (!text)
                return NULL;
        /* net.DNSError.Error(); a refused read is the *OpError's text */
        if (status == ARES_ECONNREFUSED && !isempty(server))
                return strdup_printf("lookup %s on %s: read udp %s: %s", name, server, server, text);
        if (!isempty(server))
                return strdup_printf("lookup %s on %s: %s", name, server, text);
        return strdup_printf("lookup %s: %s", name, text);
}

/* "IP:port" of the channel's last server ([IPv6]:port), the one Go's
 * error names after trying them all in order; NULL when there is none */
static char *channel_last_server(ares_channel ch)
{
        struct ares_addr_port_node *servers = NULL, *last = NULL;
        char ip[INET6_ADDRSTRLEN];
        char *ret = NULL;

        if (ares_get_servers_ports(ch, &servers) != ARES_SUCCESS)
                return NULL;
        for (struct ares_addr_port_node *s = servers; s; s = s->next)
                last = s;
        if (last && inet_ntop(last->family, &last->addr, ip, sizeof(ip)))
                ret = strdup_printf(last->family == AF_INET6 ? "[%s]:%d" : "%s:%d", ip,
                                    last->udp_port ? last->udp_port : 53);
        ares_free_data(servers);
        return ret;
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
        SockStats stats = {};
        AddrQuery aq = {};
        ResolveResult res = {};
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        int r;

        r = channel_new(&ch, &stats);
        if (r < 0) {
                *reterr = strdup("cannot initialize the resolver (c-ares)");
                return r;
        }
        ares_getaddrinfo(ch, name, NULL, &hints, addrinfo_cb, &aq);
        r = channel_run(ch, deadline, &aq.done);
        /* our deadline cancelled it: Go's resolver times out there */
        if (r == -ETIMEDOUT && (!aq.done || aq.status == ARES_ECANCELLED)) {
                aq.done = true;
                aq.status = ARES_ETIMEOUT;
        }
        /* the servers answered, with REFUSED or SERVFAIL: not a closed port */
        if (aq.done && aq.status == ARES_ECONNREFUSED && stats.answers > 0)
                aq.status = ARES_EREFUSED;
        if (!aq.done || aq.error < 0 || (aq.status != ARES_SUCCESS && ares_to_errno(aq.status) != -ENOENT)) {
                _cleanup_free_ char *server = channel_last_server(ch);
                r = aq.error < 0 ? aq.error : !aq.done ? -ECANCELED : ares_to_errno(aq.status);
                if (aq.done && aq.error == 0)
                        *reterr = resolve_error_message(name, server, aq.status);
                else
                        *reterr = strdup_printf("lookup %s: %s", name, strerror(-r));
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
        SockStats stats = {};
        HostQuery q = {};
        int r;

        r = channel_new(&ch, &stats);
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
        (void)channel_run(ch, now_usec(CLOCK_MONOTONIC) + timeout, &q.done);
        ares_destroy(ch);
        if (!q.done || q.status != ARES_SUCCESS || !q.names) {
                strv_free(q.names);
                return !q.done ? -ETIMEDOUT : q.status == ARES_SUCCESS ? -ENOENT : ares_to_errno(q.status);
        }
        *ret_names = q.names;
        return 0;
}
