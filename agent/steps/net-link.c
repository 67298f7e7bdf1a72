/* SPDX-License-Identifier: Apache-2.0 */
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "net-link.h"

typedef struct NlMsg {
        uint8_t buf[1024];
        size_t len;
} NlMsg;

static struct nlmsghdr *hdr(NlMsg *m)
{
        return (struct nlmsghdr *)m->buf;
}

static int put_attr(NlMsg *m, unsigned short type, const void *data, size_t len)
{
        struct rtattr rta;
        size_t total = RTA_ALIGN(RTA_LENGTH(len));

        if (m->len + total > sizeof(m->buf))
                return -E2BIG;
        rta.rta_type = type;
        rta.rta_len = (unsigned short)RTA_LENGTH(len);
        memcpy(m->buf + m->len, &rta, sizeof(rta));
        if (len)
                memcpy(m->buf + m->len + RTA_LENGTH(0), data, len);
        memset(m->buf + m->len + RTA_LENGTH(len), 0, total - RTA_LENGTH(len));
        m->len += total;
        hdr(m)->nlmsg_len = (uint32_t)m->len;
        return 0;
}

/* Opens a nested attribute; returns its offset for nest_end(). */
static int nest_begin(NlMsg *m, unsigned short type, size_t *ret_off)
{
        *ret_off = m->len;
        return put_attr(m, type, NULL, 0);
}

static void nest_end(NlMsg *m, size_t off)
{
        struct rtattr rta;

        memcpy(&rta, m->buf + off, sizeof(rta));
        rta.rta_len = (unsigned short)(m->len - off);
        memcpy(m->buf + off, &rta, sizeof(rta));
}

static int nl_transact(NlMsg *m)
{
        _cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        uint8_t reply[4096];
        ssize_t k;

        if (fd < 0)
                return -errno;
        hdr(m)->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
        hdr(m)->nlmsg_seq = 1;
        if (sendto(fd, m->buf, m->len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return -errno;
        for (;;) {
                k = recv(fd, reply, sizeof(reply), 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (size_t)k);
                     h = NLMSG_NEXT(h, k)) {
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                struct nlmsgerr e;
                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(e)))
                                        return -EBADMSG;
                                memcpy(&e, NLMSG_DATA(h), sizeof(e));
                                return e.error; /* 0 is the ACK */
                        }
                }
        }
}

static void begin(NlMsg *m, uint16_t type, uint16_t flags, int index, unsigned change, unsigned iff)
{
        struct ifinfomsg ifi = {
                .ifi_family = AF_UNSPEC, .ifi_index = index, .ifi_change = change, .ifi_flags = iff
        };

        memset(m, 0, sizeof(*m));
        m->len = NLMSG_LENGTH(sizeof(ifi));
        hdr(m)->nlmsg_type = type;
        hdr(m)->nlmsg_flags = flags;
        hdr(m)->nlmsg_len = (uint32_t)m->len;
        memcpy(NLMSG_DATA(hdr(m)), &ifi, sizeof(ifi));
}

int macvlan_create(const char *parent, const char *name, const uint8_t mac[static 6])
{
        unsigned parent_index = if_nametoindex(parent);
        uint32_t link = parent_index, mode = MACVLAN_MODE_PRIVATE;
        size_t info, data;
        unsigned index;
        NlMsg m;
        int r;

        if (parent_index == 0)
                return -ENODEV;
        begin(&m, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, 0, 0);
        r = put_attr(&m, IFLA_IFNAME, name, strlen(name) + 1);
        if (r >= 0)
                r = put_attr(&m, IFLA_LINK, &link, sizeof(link));
        if (r >= 0)
                r = put_attr(&m, IFLA_ADDRESS, mac, 6);
        if (r >= 0)
                r = nest_begin(&m, IFLA_LINKINFO, &info);
        if (r >= 0)
                r = put_attr(&m, IFLA_INFO_KIND, "macvlan", strlen("macvlan"));
        if (r >= 0)
                r = nest_begin(&m, IFLA_INFO_DATA, &data);
        if (r >= 0)
                r = put_attr(&m, IFLA_MACVLAN_MODE, &mode, sizeof(mode));
        if (r < 0)
                return r;
        nest_end(&m, data);
        nest_end(&m, info);
        r = nl_transact(&m);
        if (r < 0)
                return r;

        index = if_nametoindex(name);
        if (index == 0)
                return -ENODEV;
        begin(&m, RTM_NEWLINK, 0, (int)index, IFF_UP, IFF_UP);
        return nl_transact(&m);
}

int link_delete(const char *name)
{
        unsigned index = if_nametoindex(name);
        NlMsg m;

        if (index == 0)
                return -ENODEV;
        begin(&m, RTM_DELLINK, 0, (int)index, 0, 0);
        return nl_transact(&m);
}
