/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/net-probe.c */
/*
 * The packets the network probes parse: ARP replies, neighbor
 * advertisements, ICMP/ICMPv6 echo replies with and without an IPv4
 * header; and the addresses and CIDRs the service sends (connectivity-check,
 * free-network-addresses, verify-vips), which must format back to what
 * parses to the same address and lie in their own prefix (the first byte
 * picks the parser).
 */
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/steps/net-probe.h"
#include "cleanup.h"
#include "fuzz.h"

static void check_addresses(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = fuzz_text(data, size);
        char buf[IP_ADDR_STRING_MAX];
        IpAddr a, b;
        unsigned len;

        if (!text)
                return;
        if (ip_addr_parse(text, &a) >= 0 &&
            (ip_addr_parse(ip_addr_format(&a, buf), &b) < 0 || !ip_addr_equal(&a, &b)))
                abort();
        if (ip_prefix_parse(text, &a, &len) >= 0 &&
            (len > (a.family == AF_INET ? 32u : 128u) || !ip_prefix_contains(&a, len, &a)))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t mac[6];
        struct in_addr s, t;
        struct in6_addr t6;
        uint16_t id, seq;
        bool has_mac;

        if (size < 1)
                return 0;
        switch (data[0] % 5) {
        case 0:
                (void)arp_parse_reply(data + 1, size - 1, mac, &s, &t);
                break;
        case 1:
                (void)ndp_parse_advert(data + 1, size - 1, &t6, mac, &has_mac);
                break;
        case 2:
                (void)icmp_parse_echo_reply(AF_INET, true, data + 1, size - 1, &id, &seq);
                (void)icmp_parse_echo_reply(AF_INET, false, data + 1, size - 1, &id, &seq);
                break;
        case 3:
                (void)icmp_parse_echo_reply(AF_INET6, false, data + 1, size - 1, &id, &seq);
                break;
        default:
                check_addresses(data + 1, size - 1);
                break;
        }
        return 0;
}
