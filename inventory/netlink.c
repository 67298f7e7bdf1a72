/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "macro.h"
#include "netlink.h"

#define NL_RECV_BUF (32u * 1024)
#define NL_MAX_ITEMS 65536

/* Iterates the rtattrs in [p, p + len) without trusting their lengths. */
#define FOREACH_RTA(a, start, total) \
        for (const struct rtattr *a = (const struct rtattr *)(start); \
             (const uint8_t *)a + sizeof(struct rtattr) <= (const uint8_t *)(start) + (total) && \
             a->rta_len >= sizeof(struct rtattr) && \
             (const uint8_t *)a + a->rta_len <= (const uint8_t *)(start) + (total); \
             a = (const struct rtattr *)((const uint8_t *)a + RTA_ALIGN(a->rta_len)))

static size_t rta_payload_len(const struct rtattr *a)
{
        return a->rta_len - RTA_LENGTH(0);
}

static void copy_string(char *dst, size_t size, const struct rtattr *a)
{
        size_t n = strnlen(RTA_DATA(a), rta_payload_len(a));

        if (n >= size)
                n = size - 1;
        memcpy(dst, RTA_DATA(a), n);
        dst[n] = 0;
}

static int check_header(const void *msg, size_t len, size_t body, const struct nlmsghdr **ret)
{
        const struct nlmsghdr *h = msg;

        if (len < sizeof(*h) || h->nlmsg_len < NLMSG_LENGTH(body) || h->nlmsg_len > len)
                return -EBADMSG;
        *ret = h;
        return 0;
}

static void parse_linkinfo(const struct rtattr *info, NlLink *l)
{
        FOREACH_RTA(a, RTA_DATA(info), rta_payload_len(info))
        {
                switch (a->rta_type) {
                case IFLA_INFO_KIND:
                        copy_string(l->kind, sizeof(l->kind), a);
                        break;
                case IFLA_INFO_SLAVE_KIND:
                        copy_string(l->slave_kind, sizeof(l->slave_kind), a);
                        break;
                case IFLA_INFO_SLAVE_DATA:
                        FOREACH_RTA(b, RTA_DATA(a), rta_payload_len(a))
                        if (b->rta_type == IFLA_BOND_SLAVE_PERM_HWADDR &&
                            rta_payload_len(b) <= NL_ADDR_MAX) {
                                memcpy(l->perm_addr, RTA_DATA(b), rta_payload_len(b));
                                l->perm_addr_len = rta_payload_len(b);
                        }
                        break;
                }
        }
}

int nl_parse_link(const void *msg, size_t len, NlLink *ret)
{
        const struct nlmsghdr *h;
        const struct ifinfomsg *ifi;
        NlLink l = {};

        if (check_header(msg, len, sizeof(*ifi), &h) < 0)
                return -EBADMSG;
        if (h->nlmsg_type != RTM_NEWLINK)
                return -ENOMSG;
        ifi = NLMSG_DATA(h);
        l.index = ifi->ifi_index;
        l.flags = ifi->ifi_flags;
        l.arphrd = ifi->ifi_type;
        FOREACH_RTA(a, IFLA_RTA(ifi), h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)))
        {
                switch (a->rta_type) {
                case IFLA_IFNAME:
                        copy_string(l.name, sizeof(l.name), a);
                        break;
                case IFLA_MTU:
                        if (rta_payload_len(a) >= 4)
                                memcpy(&l.mtu, RTA_DATA(a), 4);
                        break;
                case IFLA_ADDRESS:
                        if (rta_payload_len(a) <= NL_ADDR_MAX) {
                                memcpy(l.addr, RTA_DATA(a), rta_payload_len(a));
                                l.addr_len = rta_payload_len(a);
                        }
                        break;
                case IFLA_MASTER:
                        if (rta_payload_len(a) >= 4)
                                memcpy(&l.master, RTA_DATA(a), 4);
                        break;
                case IFLA_LINKINFO:
                        parse_linkinfo(a, &l);
                        break;
                }
        }
        if (!l.name[0])
                return -EBADMSG;
        *ret = l;
        return 0;
}

int nl_parse_addr(const void *msg, size_t len, NlAddr *ret)
{
        const struct nlmsghdr *h;
        const struct ifaddrmsg *ifa;
        const struct rtattr *local = NULL, *address = NULL;
        NlAddr r = {};
        size_t want;

        if (check_header(msg, len, sizeof(*ifa), &h) < 0)
                return -EBADMSG;
        if (h->nlmsg_type != RTM_NEWADDR)
                return -ENOMSG;
        ifa = NLMSG_DATA(h);
        if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
                return -ENOMSG;
        want = ifa->ifa_family == AF_INET ? 4 : 16;
        FOREACH_RTA(a, IFA_RTA(ifa), h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa)))
        {
                if (a->rta_type == IFA_LOCAL && !local)
                        local = a;
                else if (a->rta_type == IFA_ADDRESS && !address)
                        address = a;
        }
        /* Go's net package: IFA_LOCAL when present (point-to-point), else
         * IFA_ADDRESS */
        if (local)
                address = local;
        if (!address || rta_payload_len(address) < want)
                return -EBADMSG;
        r.family = ifa->ifa_family;
        r.index = (int)ifa->ifa_index;
        r.prefixlen = ifa->ifa_prefixlen;
        memcpy(r.addr, RTA_DATA(address), want);
        *ret = r;
        return 0;
}

int nl_parse_route(const void *msg, size_t len, NlRoute *ret)
{
        const struct nlmsghdr *h;
        const struct rtmsg *rtm;
        NlRoute r = {};
        size_t alen;

        if (check_header(msg, len, sizeof(*rtm), &h) < 0)
                return -EBADMSG;
        if (h->nlmsg_type != RTM_NEWROUTE)
                return -ENOMSG;
        rtm = NLMSG_DATA(h);
        if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
                return -ENOMSG;
        alen = rtm->rtm_family == AF_INET ? 4 : 16;
        r.family = rtm->rtm_family;
        r.table = rtm->rtm_table;
        r.protocol = rtm->rtm_protocol;
        r.type = rtm->rtm_type;
        r.flags = rtm->rtm_flags;
        r.dst_len = rtm->rtm_dst_len;
        FOREACH_RTA(a, RTM_RTA(rtm), h->nlmsg_len - NLMSG_LENGTH(sizeof(*rtm)))
        {
                switch (a->rta_type) {
                case RTA_TABLE:
                        if (rta_payload_len(a) >= 4)
                                memcpy(&r.table, RTA_DATA(a), 4);
                        break;
                case RTA_DST:
                        if (rta_payload_len(a) >= alen) {
                                memcpy(r.dst, RTA_DATA(a), alen);
                                r.has_dst = true;
                        }
                        break;
                case RTA_GATEWAY:
                        if (rta_payload_len(a) >= alen && !r.has_gateway) {
                                memcpy(r.gateway, RTA_DATA(a), alen);
                                r.has_gateway = true;
                        }
                        break;
                case RTA_OIF:
                        if (rta_payload_len(a) >= 4 && r.oif == 0)
                                memcpy(&r.oif, RTA_DATA(a), 4);
                        break;
                case RTA_PRIORITY:
                        if (rta_payload_len(a) >= 4)
                                memcpy(&r.priority, RTA_DATA(a), 4);
                        break;
                case RTA_MULTIPATH: {
                        /* the first hop gives the interface and gateway, as
                         * the Go agent takes MultiPath[0] */
                        const struct rtnexthop *nh = RTA_DATA(a);
                        size_t plen = rta_payload_len(a);
                        if (plen < sizeof(*nh) || nh->rtnh_len < sizeof(*nh) || nh->rtnh_len > plen)
                                break;
                        r.oif = nh->rtnh_ifindex;
                        r.has_gateway = false;
                        FOREACH_RTA(b, RTNH_DATA(nh), nh->rtnh_len - RTNH_LENGTH(0))
                        if (b->rta_type == RTA_GATEWAY && rta_payload_len(b) >= alen) {
                                memcpy(r.gateway, RTA_DATA(b), alen);
                                r.has_gateway = true;
                        }
                        break;
                }
                }
        }
        *ret = r;
        return 0;
}

void nl_state_done(NlState *s)
{
        free(s->links);
        free(s->addrs);
        free(s->routes);
        *s = (NlState){};
}

#define APPEND(arr, n, item) \
        ({ \
                int _r = 0; \
                if ((n) >= NL_MAX_ITEMS) \
                        _r = -E2BIG; \
                else { \
                        __typeof__(arr) _na = reallocarray((arr), (n) + 1, sizeof(*(arr))); \
                        if (!_na) \
                                _r = -ENOMEM; \
                        else { \
                                (arr) = _na; \
                                (arr)[(n)++] = (item); \
                        } \
                } \
                _r; \
        })

int nl_consume(const void *buf, size_t len, NlState *s)
{
        const uint8_t *p = buf;
        size_t left = len;

        while (left >= sizeof(struct nlmsghdr)) {
                const struct nlmsghdr *h = (const struct nlmsghdr *)p;
                size_t step;
                int r = 0;

                if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > left)
                        return -EBADMSG;
                switch (h->nlmsg_type) {
                case NLMSG_DONE:
                        return 1;
                case NLMSG_ERROR: {
                        const struct nlmsgerr *e = NLMSG_DATA(h);
                        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                                return -EBADMSG;
                        return e->error < 0 ? e->error : -EIO;
                }
                case RTM_NEWLINK: {
                        NlLink l;
                        if (nl_parse_link(h, h->nlmsg_len, &l) >= 0)
                                r = APPEND(s->links, s->n_links, l);
                        break;
                }
                case RTM_NEWADDR: {
                        NlAddr a;
                        if (nl_parse_addr(h, h->nlmsg_len, &a) >= 0)
                                r = APPEND(s->addrs, s->n_addrs, a);
                        break;
                }
                case RTM_NEWROUTE: {
                        NlRoute rt;
                        if (nl_parse_route(h, h->nlmsg_len, &rt) >= 0)
                                r = APPEND(s->routes, s->n_routes, rt);
                        break;
                }
                }
                if (r < 0)
                        return r;
                step = NLMSG_ALIGN(h->nlmsg_len);
                if (step >= left)
                        break;
                p += step;
                left -= step;
        }
        return 0;
}

static int nl_request(int fd, uint16_t type, int family, uint32_t seq, NlState *s)
{
        struct {
                struct nlmsghdr h;
                struct rtgenmsg g;
                uint8_t pad[3];
        } req = {
                .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg)),
                       .nlmsg_type = type,
                       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
                       .nlmsg_seq = seq },
                .g = { .rtgen_family = (unsigned char)family },
        };
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        _cleanup_free_ uint8_t *buf = malloc(NL_RECV_BUF);

        if (!buf)
                return -ENOMEM;
        if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
                return negative_errno();
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                ssize_t n;
                int r;

                /* the kernel answers at once; 5 s is a safety net, not a
                 * tuning knob */
                r = poll(&pfd, 1, 5000);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (r == 0)
                        return -ETIMEDOUT;
                n = recv(fd, buf, NL_RECV_BUF, 0);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        return negative_errno();
                }
                r = nl_consume(buf, (size_t)n, s);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
}

int nl_dump(NlDumpFlags flags, NlState *ret)
{
        _cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        NlState s = {};
        int r = 0;

        if (fd < 0)
                return negative_errno();
        if (flags & NL_DUMP_LINKS)
                r = nl_request(fd, RTM_GETLINK, AF_UNSPEC, 1, &s);
        if (r >= 0 && (flags & NL_DUMP_ADDRS))
                r = nl_request(fd, RTM_GETADDR, AF_UNSPEC, 2, &s);
        if (r >= 0 && (flags & NL_DUMP_ROUTES))
                r = nl_request(fd, RTM_GETROUTE, AF_INET, 3, &s);
        if (r >= 0 && (flags & NL_DUMP_ROUTES))
                r = nl_request(fd, RTM_GETROUTE, AF_INET6, 4, &s);
        if (r < 0) {
                nl_state_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

const NlLink *nl_state_link(const NlState *s, int index)
{
        for (size_t i = 0; i < s->n_links; i++)
                if (s->links[i].index == index)
                        return &s->links[i];
        return NULL;
}

const char *nl_format_ip(int family, const uint8_t *a, char *buf, size_t size)
{
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        unsigned w[8];
        int best = -1, best_len = 0;
        size_t off = 0;

        if (family == AF_INET || (family == AF_INET6 && memcmp(a, mapped, 12) == 0)) {
                const uint8_t *v4 = family == AF_INET ? a : a + 12;
                snprintf(buf, size, "%u.%u.%u.%u", v4[0], v4[1], v4[2], v4[3]);
                return buf;
        }
        for (int i = 0; i < 8; i++)
                w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
        /* the longest run of two or more zero groups, leftmost on ties */
        for (int i = 0; i < 8;) {
                int j = i;
                while (j < 8 && w[j] == 0)
                        j++;
                if (j - i > best_len && j - i >= 2) {
                        best = i;
                        best_len = j - i;
                }
                i = j > i ? j : i + 1;
        }
        buf[0] = 0;
        for (int i = 0; i < 8 && off < size; i++) {
                int n;
                if (i == best) {
                        n = snprintf(buf + off, size - off, "::");
                        off += (size_t)MAX(n, 0);
                        i += best_len - 1;
                        continue;
                }
                n = snprintf(buf + off, size - off, "%s%x", off > 0 && buf[off - 1] != ':' ? ":" : "", w[i]);
                off += (size_t)MAX(n, 0);
        }
        return buf;
}

const char *nl_format_mac(const uint8_t *addr, size_t len, char *buf, size_t size)
{
        size_t off = 0;

        buf[0] = 0;
        for (size_t i = 0; i < len && off + 4 <= size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%s%02x", i ? ":" : "", addr[i]);
        return buf;
}
