/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "net-probe.h"
#include "strutil.h"

/* ---- addresses ---------------------------------------------------------- */

int ip_addr_parse(const char *s, IpAddr *ret)
{
        IpAddr a = {};

        if (!s)
                return -EINVAL;
        if (inet_pton(AF_INET, s, &a.v4) == 1)
                a.family = AF_INET;
        else if (inet_pton(AF_INET6, s, &a.v6) == 1)
                a.family = AF_INET6;
        else
                return -EINVAL;
        *ret = a;
        return 0;
}

int ip_prefix_parse(const char *s, IpAddr *ret, unsigned *ret_prefixlen)
{
        _cleanup_free_ char *copy = strdup(strempty(s));
        char *slash;
        unsigned len;
        IpAddr a;
        int r;

        if (!copy)
                return -ENOMEM;
        slash = strchr(copy, '/');
        if (!slash)
                return -EINVAL;
        *slash = 0;
        r = ip_addr_parse(copy, &a);
        if (r < 0)
                return r;
        r = safe_atou(slash + 1, &len);
        if (r < 0 || len > (a.family == AF_INET ? 32u : 128u))
                return -EINVAL;
        *ret = a;
        *ret_prefixlen = len;
        return 0;
}

const char *ip_addr_format(const IpAddr *a, char buf[static IP_ADDR_STRING_MAX])
{
        if (!inet_ntop(a->family, a->family == AF_INET ? (const void *)&a->v4 : (const void *)&a->v6, buf,
                       IP_ADDR_STRING_MAX))
                buf[0] = 0;
        return buf;
}

bool ip_addr_equal(const IpAddr *a, const IpAddr *b)
{
        if (a->family != b->family)
                return false;
        return a->family == AF_INET ? a->v4.s_addr == b->v4.s_addr
                                    : memcmp(&a->v6, &b->v6, sizeof(a->v6)) == 0;
}

static const uint8_t *ip_bytes(const IpAddr *a, size_t *ret_len)
{
        *ret_len = a->family == AF_INET ? 4 : 16;
        return a->family == AF_INET ? (const uint8_t *)&a->v4 : (const uint8_t *)&a->v6;
}

bool ip_prefix_contains(const IpAddr *net, unsigned prefixlen, const IpAddr *addr)
{
        const uint8_t *n, *x;
        size_t len, l2;

        if (net->family != addr->family)
                return false;
        n = ip_bytes(net, &len);
        x = ip_bytes(addr, &l2);
        if (prefixlen > len * 8)
                return false;
        for (unsigned i = 0; i < prefixlen / 8; i++)
                if (n[i] != x[i])
                        return false;
        if (prefixlen % 8) {
                uint8_t mask = (uint8_t)(0xff << (8 - prefixlen % 8));
                if ((n[prefixlen / 8] & mask) != (x[prefixlen / 8] & mask))
                        return false;
        }
        return true;
}

bool ip_addr_is_link_local(const IpAddr *a)
{
        if (a->family == AF_INET)
                return (ntohl(a->v4.s_addr) & 0xffff0000u) == 0xa9fe0000u;
        return a->v6.s6_addr[0] == 0xfe && (a->v6.s6_addr[1] & 0xc0) == 0x80;
}

/* ---- parsers ------------------------------------------------------------ */

#define ARP_LEN 28

size_t arp_build_request(uint8_t buf[static ARP_LEN], const uint8_t src_mac[static 6], struct in_addr src,
                         struct in_addr target)
{
        static const uint8_t head[8] = { 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01 };

        memcpy(buf, head, sizeof(head));
        memcpy(buf + 8, src_mac, 6);
        memcpy(buf + 14, &src, 4);
        memset(buf + 18, 0, 6);
        memcpy(buf + 24, &target, 4);
        return ARP_LEN;
}

int arp_parse_reply(const void *buf, size_t len, uint8_t ret_mac[static 6], struct in_addr *ret_sender,
                    struct in_addr *ret_target)
{
        const uint8_t *p = buf;
        uint16_t op;

        if (len < ARP_LEN)
                return -EBADMSG;
        /* hardware Ethernet, protocol IPv4, address lengths 6 and 4 */
        if (p[0] != 0 || p[1] != 1 || p[2] != 0x08 || p[3] != 0x00 || p[4] != 6 || p[5] != 4)
                return -EBADMSG;
        op = (uint16_t)(p[6] << 8 | p[7]);
        if (op != 2)
                return 0;
        memcpy(ret_mac, p + 8, 6);
        memcpy(ret_sender, p + 14, 4);
        memcpy(ret_target, p + 24, 4);
        return 1;
}

int ndp_parse_advert(const void *buf, size_t len, struct in6_addr *ret_target, uint8_t ret_mac[static 6],
                     bool *ret_has_mac)
{
        const uint8_t *p = buf;
        bool has_mac = false;
        size_t off;

        if (len < 4)
                return -EBADMSG;
        if (p[0] != ND_NEIGHBOR_ADVERT)
                return 0;
        if (p[1] != 0 || len < 24)
                return -EBADMSG;
        memcpy(ret_target, p + 8, 16);
        for (off = 24; off < len;) {
                size_t optlen;

                if (len - off < 2)
                        return -EBADMSG;
                optlen = (size_t)p[off + 1] * 8;
                if (optlen == 0 || optlen > len - off)
                        return -EBADMSG;
                if (p[off] == ND_OPT_TARGET_LINKADDR && optlen >= 8) {
                        memcpy(ret_mac, p + off + 2, 6);
                        has_mac = true;
                }
                off += optlen;
        }
        *ret_has_mac = has_mac;
        return 1;
}

int icmp_parse_echo_reply(int family, bool has_ip_header, const void *buf, size_t len, uint16_t *ret_id,
                          uint16_t *ret_seq)
{
        const uint8_t *p = buf;
        uint8_t want = family == AF_INET ? ICMP_ECHOREPLY : ICMP6_ECHO_REPLY;

        if (has_ip_header) {
                size_t ihl;

                if (len < 20 || (p[0] >> 4) != 4)
                        return -EBADMSG;
                ihl = (size_t)(p[0] & 0x0f) * 4;
                if (ihl < 20 || ihl > len)
                        return -EBADMSG;
                p += ihl;
                len -= ihl;
        }
        if (len < 8)
                return -EBADMSG;
        if (p[0] != want)
                return 0;
        *ret_id = (uint16_t)(p[4] << 8 | p[5]);
        *ret_seq = (uint16_t)(p[6] << 8 | p[7]);
        return 1;
}

/* ---- helpers ------------------------------------------------------------ */

static usec_t now(void)
{
        return now_usec(CLOCK_MONOTONIC);
}

/* Waits until fd is readable or the deadline passes. 1: readable, 0: time
 * is up, -ECANCELED once a stop was requested (SIGTERM: a probe in flight
 * ends at once, the agent does not wait out a sweep). */
static int wait_readable(int fd, usec_t deadline)
{
        for (;;) {
                usec_t t = now();
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
                                       { .fd = stop_fd(), .events = POLLIN } };
                int r, ms;

                if (stop_requested())
                        return -ECANCELED;
                if (t >= deadline)
                        return 0;
                ms = (int)MIN((deadline - t + 999) / 1000, (usec_t)1000);
                r = poll(p, p[1].fd >= 0 ? 2 : 1, ms);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[0].revents)
                        return 1;
        }
}

static void neigh_add(NeighResult *r, const uint8_t mac[static 6], bool unicast)
{
        for (unsigned i = 0; i < r->n_macs; i++)
                if (memcmp(r->macs[i], mac, 6) == 0) {
                        r->unicast[i] = r->unicast[i] || unicast;
                        return;
                }
        if (r->n_macs >= NEIGH_PROBE_MAX_MACS)
                return;
        memcpy(r->macs[r->n_macs], mac, 6);
        r->unicast[r->n_macs] = unicast;
        r->n_macs++;
}

/* Packets are paced inside a round so that a /22 sweep does not burst a
 * thousand frames at once: PACE_BURST packets, then a pause, 5000 packets
 * a second at most (one wake-up per burst, not per packet). */
#define PACE_BURST 16
#define PACE_USEC (PACE_BURST * 200)

static void pace(size_t sent)
{
        if (sent % PACE_BURST == 0)
                (void)sleep_usec(PACE_USEC);
}

/* ---- ARP ---------------------------------------------------------------- */

static void arp_drain(int fd, const struct in_addr *targets, size_t n, NeighResult *results)
{
        for (;;) {
                uint8_t buf[256], mac[6];
                struct sockaddr_ll from = {};
                socklen_t fl = sizeof(from);
                struct in_addr sender, target;
                ssize_t k = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

                if (k < 0)
                        return;
                if (arp_parse_reply(buf, (size_t)k, mac, &sender, &target) <= 0)
                        continue;
                for (size_t i = 0; i < n; i++)
                        if (targets[i].s_addr == sender.s_addr)
                                neigh_add(&results[i], mac, from.sll_pkttype == PACKET_HOST);
        }
}

int arp_probe(int ifindex, const uint8_t src_mac[static 6], struct in_addr src,
              const struct in_addr *targets, size_t n_targets, const NeighProbeOptions *o,
              NeighResult *results)
{
        _cleanup_close_ int fd = -1;
        struct sockaddr_ll sll = {
                .sll_family = AF_PACKET,
                .sll_protocol = htons(ETH_P_ARP),
                .sll_ifindex = ifindex,
        };
        usec_t deadline;
        int r;

        for (size_t i = 0; i < n_targets; i++)
                results[i] = (NeighResult){};
        fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ARP));
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
                return -errno;

        sll.sll_halen = ETH_ALEN;
        memset(sll.sll_addr, 0xff, ETH_ALEN);
        for (unsigned round = 0; round < MAX(o->count, 1u); round++) {
                usec_t next = now() + o->interval;

                for (size_t i = 0; i < n_targets; i++) {
                        uint8_t req[ARP_LEN];

                        if (o->stop_on_reply && results[i].n_macs > 0)
                                continue;
                        arp_build_request(req, src_mac, src, targets[i]);
                        if (sendto(fd, req, sizeof(req), 0, (struct sockaddr *)&sll, sizeof(sll)) < 0 &&
                            errno != ENOBUFS && errno != EAGAIN)
                                return -errno;
                        if (n_targets > 1)
                                pace(i + 1);
                        arp_drain(fd, targets, n_targets, results);
                }
                if (round + 1 < MAX(o->count, 1u))
                        while ((r = wait_readable(fd, next)) > 0)
                                arp_drain(fd, targets, n_targets, results);
        }
        deadline = now() + o->wait;
        while ((r = wait_readable(fd, deadline)) > 0)
                arp_drain(fd, targets, n_targets, results);
        return r < 0 ? r : 0;
}

/* ---- NDP ---------------------------------------------------------------- */

static void ndp_drain(int fd, const struct in6_addr *targets, size_t n, NeighResult *results)
{
        for (;;) {
                uint8_t buf[1500], mac[6];
                struct in6_addr target;
                bool has_mac = false;
                ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

                if (k < 0)
                        return;
                if (ndp_parse_advert(buf, (size_t)k, &target, mac, &has_mac) <= 0 || !has_mac)
                        continue;
                for (size_t i = 0; i < n; i++)
                        if (memcmp(&targets[i], &target, sizeof(target)) == 0)
                                neigh_add(&results[i], mac, true);
        }
}

int ndp_probe(int ifindex, const uint8_t src_mac[static 6], const struct in6_addr *targets, size_t n_targets,
              const NeighProbeOptions *o, NeighResult *results)
{
        _cleanup_close_ int fd = -1;
        struct icmp6_filter filter;
        char ifname[IF_NAMESIZE] = "";
        int hops = 255, r;
        usec_t deadline;

        for (size_t i = 0; i < n_targets; i++)
                results[i] = (NeighResult){};
        if (!if_indextoname((unsigned)ifindex, ifname))
                return -errno;
        fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_ICMPV6);
        if (fd < 0)
                return -errno;
        ICMP6_FILTER_SETBLOCKALL(&filter);
        ICMP6_FILTER_SETPASS(ND_NEIGHBOR_ADVERT, &filter);
        /* NDP is only valid with hop limit 255 (RFC 4861 7.1.2) */
        if (setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof(filter)) < 0 ||
            setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops)) < 0 ||
            setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &hops, sizeof(hops)) < 0 ||
            setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1) < 0)
                return -errno;

        for (unsigned round = 0; round < MAX(o->count, 1u); round++) {
                usec_t next = now() + o->interval;

                for (size_t i = 0; i < n_targets; i++) {
                        uint8_t ns[32] = { ND_NEIGHBOR_SOLICIT };
                        struct sockaddr_in6 dst = {
                                .sin6_family = AF_INET6,
                                .sin6_scope_id = (uint32_t)ifindex,
                        };

                        if (o->stop_on_reply && results[i].n_macs > 0)
                                continue;
                        memcpy(ns + 8, &targets[i], 16);
                        ns[24] = ND_OPT_SOURCE_LINKADDR;
                        ns[25] = 1;
                        memcpy(ns + 26, src_mac, 6);
                        /* solicited-node multicast ff02::1:ffXX:XXXX */
                        dst.sin6_addr.s6_addr[0] = 0xff;
                        dst.sin6_addr.s6_addr[1] = 0x02;
                        dst.sin6_addr.s6_addr[11] = 0x01;
                        dst.sin6_addr.s6_addr[12] = 0xff;
                        memcpy(&dst.sin6_addr.s6_addr[13], &targets[i].s6_addr[13], 3);
                        if (sendto(fd, ns, sizeof(ns), 0, (struct sockaddr *)&dst, sizeof(dst)) < 0 &&
                            errno != ENOBUFS && errno != EAGAIN)
                                return -errno;
                        if (n_targets > 1)
                                pace(i + 1);
                        ndp_drain(fd, targets, n_targets, results);
                }
                if (round + 1 < MAX(o->count, 1u))
                        while ((r = wait_readable(fd, next)) > 0)
                                ndp_drain(fd, targets, n_targets, results);
        }
        deadline = now() + o->wait;
        while ((r = wait_readable(fd, deadline)) > 0)
                ndp_drain(fd, targets, n_targets, results);
        return r < 0 ? r : 0;
}

/* ---- ICMP echo ---------------------------------------------------------- */

typedef struct EchoSocket {
        int fd;
        int family;
        bool raw; /* raw: we choose the identifier and compute the v4 checksum */
        uint16_t ident;
} EchoSocket;

static uint16_t inet_checksum(const uint8_t *p, size_t len)
{
        uint32_t sum = 0;

        for (size_t i = 0; i + 1 < len; i += 2)
                sum += (uint32_t)(p[i] << 8 | p[i + 1]);
        if (len % 2)
                sum += (uint32_t)(p[len - 1] << 8);
        while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
        return (uint16_t)~sum;
}

static int echo_socket_open(int family, const char *ifname, bool dont_fragment, EchoSocket *ret)
{
        int proto = family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
        EchoSocket s = { .family = family };

        s.fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
        if (s.fd < 0) {
                /* ping sockets are off for our group (net.ipv4.ping_group_range) */
                if (errno != EACCES && errno != EPERM && errno != EPROTONOSUPPORT)
                        return -errno;
                s.fd = socket(family, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
                if (s.fd < 0)
                        return -errno;
                s.raw = true;
                s.ident = (uint16_t)random_u64();
                if (family == AF_INET6) {
                        struct icmp6_filter filter;

                        ICMP6_FILTER_SETBLOCKALL(&filter);
                        ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
                        if (setsockopt(s.fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof(filter)) < 0) {
                                int r = -errno;
                                safe_close(s.fd);
                                return r;
                        }
                }
        }
        if (ifname &&
            setsockopt(s.fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1) < 0) {
                int r = -errno;
                safe_close(s.fd);
                return r;
        }
        if (dont_fragment) {
                int v = family == AF_INET ? IP_PMTUDISC_DO : IPV6_PMTUDISC_DO;
                int r = family == AF_INET ? setsockopt(s.fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v))
                                          : setsockopt(s.fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, sizeof(v));
                if (r < 0) {
                        r = -errno;
                        safe_close(s.fd);
                        return r;
                }
        }
        *ret = s;
        return 0;
}

static void sockaddr_of(const IpAddr *a, struct sockaddr_storage *ss, socklen_t *len)
{
        memset(ss, 0, sizeof(*ss));
        if (a->family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *)ss;
                in->sin_family = AF_INET;
                in->sin_addr = a->v4;
                *len = sizeof(*in);
        } else {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
                in6->sin6_family = AF_INET6;
                in6->sin6_addr = a->v6;
                *len = sizeof(*in6);
        }
}

static int echo_send(const EchoSocket *s, const IpAddr *dst, uint16_t seq, size_t payload)
{
        _cleanup_free_ uint8_t *pkt = calloc(1, 8 + payload);
        struct sockaddr_storage ss;
        socklen_t sl;

        if (!pkt)
                return -ENOMEM;
        pkt[0] = s->family == AF_INET ? ICMP_ECHO : ICMP6_ECHO_REQUEST;
        pkt[4] = (uint8_t)(s->ident >> 8);
        pkt[5] = (uint8_t)s->ident;
        pkt[6] = (uint8_t)(seq >> 8);
        pkt[7] = (uint8_t)seq;
        for (size_t i = 0; i < payload; i++)
                pkt[8 + i] = (uint8_t)(0x10 + i); /* ping's default pattern of increasing bytes */
        if (s->raw && s->family == AF_INET) {
                uint16_t c = inet_checksum(pkt, 8 + payload);
                pkt[2] = (uint8_t)(c >> 8);
                pkt[3] = (uint8_t)c;
        }
        sockaddr_of(dst, &ss, &sl);
        if (sendto(s->fd, pkt, 8 + payload, 0, (struct sockaddr *)&ss, sl) < 0)
                return -errno;
        return 0;
}

/* One received echo reply: its source and sequence number. 1: got one,
 * 0: nothing (more) to read. */
static int echo_recv(const EchoSocket *s, IpAddr *ret_from, uint16_t *ret_seq)
{
        for (;;) {
                uint8_t buf[2048];
                struct sockaddr_storage ss = {};
                socklen_t sl = sizeof(ss);
                uint16_t id, seq;
                ssize_t k = recvfrom(s->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&ss, &sl);
                IpAddr from = { .family = s->family };

                if (k < 0)
                        return 0;
                if (icmp_parse_echo_reply(s->family, s->raw && s->family == AF_INET, buf, (size_t)k, &id,
                                          &seq) <= 0)
                        continue;
                if (s->raw && id != s->ident)
                        continue; /* another process's ping */
                if (s->family == AF_INET && ss.ss_family == AF_INET)
                        from.v4 = ((struct sockaddr_in *)&ss)->sin_addr;
                else if (s->family == AF_INET6 && ss.ss_family == AF_INET6)
                        from.v6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
                else
                        continue;
                *ret_from = from;
                *ret_seq = seq;
                return 1;
        }
}

#define PING_MAX_COUNT 64

int ping_run(const IpAddr *target, const PingOptions *o, PingResult *ret)
{
        usec_t sent_at[PING_MAX_COUNT] = {};
        bool got[PING_MAX_COUNT] = {};
        unsigned count = MIN(MAX(o->count, 1u), (unsigned)PING_MAX_COUNT);
        size_t payload = o->payload ? o->payload : 56;
        PingResult res = {};
        EchoSocket s;
        int r;

        r = echo_socket_open(target->family, o->ifname, o->dont_fragment, &s);
        if (r < 0)
                return r;

        for (unsigned i = 0; i < count; i++) {
                usec_t next;

                r = echo_send(&s, target, (uint16_t)(i + 1), payload);
                res.transmitted++;
                if (r < 0) {
                        if (res.send_error == 0)
                                res.send_error = r;
                } else
                        sent_at[i] = now();
                next = now() + (i + 1 < count ? o->interval : o->wait);
                while (res.received < count) {
                        IpAddr from;
                        uint16_t seq;

                        r = wait_readable(s.fd, next);
                        if (r < 0) {
                                safe_close(s.fd);
                                return r;
                        }
                        if (r == 0)
                                break;
                        while (echo_recv(&s, &from, &seq) > 0) {
                                usec_t rtt;

                                if (!ip_addr_equal(&from, target) || seq < 1 || seq > count ||
                                    got[seq - 1] || sent_at[seq - 1] == 0)
                                        continue;
                                got[seq - 1] = true;
                                rtt = now() - sent_at[seq - 1];
                                res.received++;
                                res.rtt_sum += rtt;
                                res.rtt_min = res.received == 1 ? rtt : MIN(res.rtt_min, rtt);
                                res.rtt_max = MAX(res.rtt_max, rtt);
                        }
                }
                if (res.received >= count)
                        break;
        }
        /* the wait after the last request (ping -W) ran in the loop above */
        safe_close(s.fd);
        *ret = res;
        return 0;
}

double ping_loss_percent(const PingResult *r)
{
        if (r->transmitted == 0)
                return 0;
        return (double)(r->transmitted - MIN(r->received, r->transmitted)) * 100.0 / (double)r->transmitted;
}

double ping_average_ms(const PingResult *r)
{
        usec_t avg;
        char text[64];
        double v = 0;

        if (r->received == 0)
                return 0;
        avg = r->rtt_sum / r->received;
        /* ping prints "%lu.%03ld" of the microsecond average; the Go agent
         * parses that text */
        snprintf(text, sizeof(text), "%llu.%03llu", (unsigned long long)(avg / 1000),
                 (unsigned long long)(avg % 1000));
        (void)safe_atod(text, &v);
        return v;
}

int ping_sweep(const IpAddr *targets, size_t n, const PingOptions *o, bool *up)
{
        EchoSocket s;
        usec_t deadline;
        int r;

        for (size_t i = 0; i < n; i++)
                up[i] = false;
        if (n == 0)
                return 0;
        r = echo_socket_open(targets[0].family, o->ifname, false, &s);
        if (r < 0)
                return r;

        for (unsigned round = 0; round < MAX(o->count, 1u); round++) {
                for (size_t i = 0; i < n; i++) {
                        IpAddr from;
                        uint16_t seq;

                        if (up[i])
                                continue;
                        r = echo_send(&s, &targets[i], (uint16_t)(i + 1), o->payload ? o->payload : 56);
                        if (r < 0 && r != -ENOBUFS && r != -EAGAIN && r != -EHOSTUNREACH &&
                            r != -ENETUNREACH) {
                                safe_close(s.fd);
                                return r;
                        }
                        if (n > 1)
                                pace(i + 1);
                        while (echo_recv(&s, &from, &seq) > 0)
                                for (size_t k = 0; k < n; k++)
                                        if (ip_addr_equal(&from, &targets[k]))
                                                up[k] = true;
                }
                deadline = now() + (round + 1 < MAX(o->count, 1u) ? o->interval : o->wait);
                while ((r = wait_readable(s.fd, deadline)) > 0) {
                        IpAddr from;
                        uint16_t seq;

                        while (echo_recv(&s, &from, &seq) > 0)
                                for (size_t k = 0; k < n; k++)
                                        if (ip_addr_equal(&from, &targets[k]))
                                                up[k] = true;
                }
        }
        safe_close(s.fd);
        return r < 0 ? r : 0;
}
