/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/ipmi.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "bmc.h"
#include "invutil.h"
#include "macro.h"
#include "netlink.h"
#include "strutil.h"

#define IPMI_NETFN_TRANSPORT 0x0C
#define IPMI_GET_LAN_CONFIG 0x02
#define LAN_PARAM_IP_ADDRESS 3
#define LAN_PARAM_IPV6_ENABLES 0x33
#define LAN_PARAM_IPV6_STATUS 0x35
#define LAN_PARAM_IPV6_STATIC 0x38
#define LAN_PARAM_IPV6_DYNAMIC 0x3B
#define MAX_CHANNEL 12
#define MAX_ADDRESSES 16

/* Returns the parameter data (after completion code and revision byte). */
static int get_lan_param(BmcTransport t, void *u, unsigned ch, uint8_t param, uint8_t set, uint8_t *out,
                         size_t out_max, size_t *out_len)
{
        uint8_t req[4] = { (uint8_t)(ch & 0x0F), param, set, 0 }, resp[64];
        size_t n = 0;
        int r;

        r = t(u, IPMI_NETFN_TRANSPORT, IPMI_GET_LAN_CONFIG, req, sizeof(req), resp, sizeof(resp), &n);
        if (r < 0)
                return r;
        if (n < 2 || resp[0] != 0) /* completion code */
                return -EIO;
        n -= 2;
        if (n > out_max)
                n = out_max;
        memcpy(out, resp + 2, n);
        *out_len = n;
        return 0;
}

void bmc_v4_address(BmcTransport t, void *u, char *ret, size_t size)
{
        snprintf(ret, size, "%s", BMC_V4_DEFAULT);
        for (unsigned ch = 1; ch <= MAX_CHANNEL; ch++) {
                uint8_t ip[16];
                size_t n = 0;

                if (get_lan_param(t, u, ch, LAN_PARAM_IP_ADDRESS, 0, ip, sizeof(ip), &n) < 0 || n < 4)
                        continue;
                if (ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] == 0)
                        continue;
                nl_format_ip(AF_INET, ip, ret, size);
                return;
        }
}

/* One channel's address of the given kind: dynamic ones count when their
 * source is SLAAC or DHCPv6, static ones when enabled; both must be
 * active and not "::". The Go agent walks a YAML map here, i.e. in random
 * order; we take the lowest set selector. */
static bool channel_v6(BmcTransport t, void *u, unsigned ch, bool dynamic, unsigned count, char *ret,
                       size_t size)
{
        static const uint8_t zero[16] = {};

        for (unsigned set = 0; set < count && set < MAX_ADDRESSES; set++) {
                uint8_t d[32];
                size_t n = 0;
                bool enabled;

                if (get_lan_param(t, u, ch, dynamic ? LAN_PARAM_IPV6_DYNAMIC : LAN_PARAM_IPV6_STATIC,
                                  (uint8_t)set, d, sizeof(d), &n) < 0 ||
                    n < 20)
                        continue;
                /* set selector, source/type, address[16], prefix length, status */
                enabled = dynamic ? ((d[1] & 0x0F) == 1 || (d[1] & 0x0F) == 2) : (d[1] & 0x80) != 0;
                if (!enabled || d[19] != 0 /* active */ || memcmp(d + 2, zero, 16) == 0)
                        continue;
                nl_format_ip(AF_INET6, d + 2, ret, size);
                return true;
        }
        return false;
}

void bmc_v6_address(BmcTransport t, void *u, char *ret, size_t size)
{
        snprintf(ret, size, "%s", BMC_V6_DEFAULT);
        for (unsigned ch = 1; ch <= MAX_CHANNEL; ch++) {
                uint8_t d[8];
                size_t n = 0;
                unsigned static_max = 1, dynamic_max = MAX_ADDRESSES;

                /* "IPv6/IPv4 Addressing Enables" must be ipv6 (1) or both (2) */
                if (get_lan_param(t, u, ch, LAN_PARAM_IPV6_ENABLES, 0, d, sizeof(d), &n) < 0 || n < 1 ||
                    (d[0] != 1 && d[0] != 2))
                        continue;
                if (get_lan_param(t, u, ch, LAN_PARAM_IPV6_STATUS, 0, d, sizeof(d), &n) >= 0 && n >= 2) {
                        static_max = d[0];
                        dynamic_max = d[1];
                }
                if (channel_v6(t, u, ch, true, dynamic_max, ret, size) ||
                    channel_v6(t, u, ch, false, static_max, ret, size))
                        return;
        }
}

typedef struct IpmiDev {
        int fd;
        long msgid;
} IpmiDev;

static int ipmi_dev_transport(void *userdata, uint8_t netfn, uint8_t cmd, const uint8_t *data, size_t len,
                              uint8_t *resp, size_t resp_max, size_t *resp_len)
{
        IpmiDev *dev = userdata;
        struct ipmi_system_interface_addr bmc = { .addr_type = IPMI_SYSTEM_INTERFACE_ADDR_TYPE,
                                                  .channel = IPMI_BMC_CHANNEL };
        struct ipmi_addr from;
        struct ipmi_req req = { .addr = (unsigned char *)&bmc,
                                .addr_len = sizeof(bmc),
                                .msgid = ++dev->msgid,
                                .msg = { .netfn = netfn,
                                         .cmd = cmd,
                                         .data = (unsigned char *)data,
                                         .data_len = (unsigned short)len } };
        struct ipmi_recv rcv;

        if (ioctl(dev->fd, IPMICTL_SEND_COMMAND, &req) < 0)
                return negative_errno();
        for (;;) {
                struct pollfd p = { .fd = dev->fd, .events = POLLIN };
                /* the driver itself times out and retries a request within
                 * seconds; this only bounds a wedged BMC */
                int r = poll(&p, 1, 5000);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        return r < 0 ? negative_errno() : -ETIMEDOUT;
                rcv = (struct ipmi_recv){ .addr = (unsigned char *)&from,
                                          .addr_len = sizeof(from),
                                          .msg = { .data = resp, .data_len = (unsigned short)resp_max } };
                if (ioctl(dev->fd, IPMICTL_RECEIVE_MSG_TRUNC, &rcv) < 0) {
                        if (errno == EMSGSIZE) {
                                *resp_len = resp_max;
                                return 0;
                        }
                        return negative_errno();
                }
                if (rcv.msgid != dev->msgid)
                        continue; /* a stale answer */
                *resp_len = rcv.msg.data_len;
                return 0;
        }
}

void bmc_addresses(const InventoryOptions *o, char *v4, size_t v4_size, char *v6, size_t v6_size)
{
        static const char *const nodes[] = { "/dev/ipmi0", "/dev/ipmi/0", "/dev/ipmidev/0" };
        IpmiDev dev = { .fd = -1 };

        snprintf(v4, v4_size, "%s", BMC_V4_DEFAULT);
        snprintf(v6, v6_size, "%s", BMC_V6_DEFAULT);
        if (o->dry_run || o->skip_bmc)
                return;
        for (size_t i = 0; i < ELEMENTSOF(nodes) && dev.fd < 0; i++) {
                _cleanup_free_ char *p = inv_path(o, nodes[i]);
                if (p)
                        dev.fd = open(p, O_RDWR | O_CLOEXEC | O_NOCTTY);
        }
        if (dev.fd < 0)
                return;
        bmc_v4_address(ipmi_dev_transport, &dev, v4, v4_size);
        bmc_v6_address(ipmi_dev_transport, &dev, v6, v6_size);
        safe_close(dev.fd);
}
