/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/net-probe.c */
/*
 * The packets the network probes parse: ARP replies, neighbor
 * advertisements, ICMP/ICMPv6 echo replies with and without an IPv4
 * header (the first byte picks the parser).
 */
#include <netinet/in.h>
#include <stdbool.h>

#include "agent/steps/net-probe.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t mac[6];
        struct in_addr s, t;
        struct in6_addr t6;
        uint16_t id, seq;
        bool has_mac;

        if (size < 1)
                return 0;
        switch (data[0] % 4) {
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
        default:
                (void)icmp_parse_echo_reply(AF_INET6, false, data + 1, size - 1, &id, &seq);
                break;
        }
        return 0;
}
