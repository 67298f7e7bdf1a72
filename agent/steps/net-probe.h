/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * In-process network probes for the discovery steps, replacing the tools
 * the Go agent runs: ARP requests on an AF_PACKET socket (arping, nmap -PR),
 * IPv6 neighbor solicitations on a raw ICMPv6 socket (nmap -6 -sn), and
 * ICMP/ICMPv6 echo with round-trip times, loss and don't-fragment probes
 * (ping, ping -M do -s). Echo uses an unprivileged "ping" socket
 * (SOCK_DGRAM, IPPROTO_ICMP[V6]) when net.ipv4.ping_group_range allows it,
 * a raw socket otherwise (root / CAP_NET_RAW).
 *
 * Every probe is bounded in packets and time (the options say how many,
 * how far apart, how long to wait after the last one); nothing retries
 * beyond that. A probe returns -ECANCELED as soon as stop_requested()
 * (timeutil.h), without waiting out its replies. The packet parsers are pure functions over received bytes
 * (fuzzed in tests/fuzz/fuzz-net-probe.c). lib-style: nothing logs above
 * debug; errors are negative errno values.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timeutil.h"

typedef struct IpAddr {
        int family; /* AF_INET or AF_INET6 */
        union {
                struct in_addr v4;
                struct in6_addr v6;
        };
} IpAddr;

#define IP_ADDR_STRING_MAX 46 /* INET6_ADDRSTRLEN */

/* Parses a plain IPv4 or IPv6 address (no prefix, no zone). */
int ip_addr_parse(const char *s, IpAddr *ret);
/* "a.b.c.d/len" or "x::y/len". */
int ip_prefix_parse(const char *s, IpAddr *ret, unsigned *ret_prefixlen);
/* Go's net.IP.String() form (inet_ntop). */
const char *ip_addr_format(const IpAddr *a, char buf[static IP_ADDR_STRING_MAX]);
bool ip_addr_equal(const IpAddr *a, const IpAddr *b);
/* Whether addr lies in net/prefixlen (same family). */
bool ip_prefix_contains(const IpAddr *net, unsigned prefixlen, const IpAddr *addr);
/* 169.254.0.0/16, fe80::/10 */
bool ip_addr_is_link_local(const IpAddr *a);

/* ---- packet parsers (pure) ---------------------------------------------- */

/* An Ethernet/IPv4 ARP packet as an AF_PACKET SOCK_DGRAM socket delivers
 * it (no Ethernet header). Returns 1 for a reply (opcode 2) with the
 * sender's MAC and IP and the target IP filled in, 0 for another valid ARP
 * packet (a request), -EBADMSG when truncated or not Ethernet/IPv4. */
int arp_parse_reply(const void *buf, size_t len, uint8_t ret_mac[static 6], struct in_addr *ret_sender,
                    struct in_addr *ret_target);
/* Builds an ARP request (28 bytes) into buf. */
size_t arp_build_request(uint8_t buf[static 28], const uint8_t src_mac[static 6], struct in_addr src,
                         struct in_addr target);

/* An ICMPv6 neighbor advertisement as a raw ICMPv6 socket delivers it.
 * Returns 1 with the target address and, when the target link-layer
 * address option is present, the MAC (*ret_has_mac); 0 for another ICMPv6
 * message; -EBADMSG when malformed (truncated, bad option lengths). */
int ndp_parse_advert(const void *buf, size_t len, struct in6_addr *ret_target, uint8_t ret_mac[static 6],
                     bool *ret_has_mac);

/* An echo reply. With has_ip_header (raw IPv4 sockets) the IPv4 header is
 * skipped first. Returns 1 for an echo reply (ICMP type 0, ICMPv6 type 129)
 * with its identifier and sequence number, 0 for another message,
 * -EBADMSG when malformed. */
int icmp_parse_echo_reply(int family, bool has_ip_header, const void *buf, size_t len, uint16_t *ret_id,
                          uint16_t *ret_seq);

/* ---- probes ------------------------------------------------------------- */

typedef struct NeighProbeOptions {
        unsigned count; /* requests per target */
        usec_t interval; /* between rounds */
        usec_t wait; /* after the last round */
        bool stop_on_reply; /* a target that answered is not asked again */
} NeighProbeOptions;

#define NEIGH_PROBE_MAX_MACS 8

typedef struct NeighResult {
        unsigned n_macs; /* distinct MACs that answered (at most NEIGH_PROBE_MAX_MACS) */
        uint8_t macs[NEIGH_PROBE_MAX_MACS][6];
        bool unicast[NEIGH_PROBE_MAX_MACS]; /* ARP: the reply was addressed to us */
} NeighResult;

/* ARP requests from the interface (its MAC and the IPv4 source given) for
 * each target; results[i] collects the replies whose sender is
 * targets[i]. -EPERM without CAP_NET_RAW. */
int arp_probe(int ifindex, const uint8_t src_mac[static 6], struct in_addr src,
              const struct in_addr *targets, size_t n_targets, const NeighProbeOptions *o,
              NeighResult *results);

/* Neighbor solicitations on the interface (to each target's
 * solicited-node multicast group); results[i] collects the advertisements
 * for targets[i] that carry a link-layer address. */
int ndp_probe(int ifindex, const uint8_t src_mac[static 6], const struct in6_addr *targets, size_t n_targets,
              const NeighProbeOptions *o, NeighResult *results);

typedef struct PingOptions {
        unsigned count;
        usec_t interval; /* between requests */
        usec_t wait; /* after the last request (ping -W) */
        size_t payload; /* data bytes after the 8-byte ICMP header (ping -s); 0: 56 */
        bool dont_fragment; /* ping -M do */
        const char *ifname; /* bind to this interface (ping -I); NULL: routing decides */
} PingOptions;

typedef struct PingResult {
        unsigned transmitted;
        unsigned received;
        usec_t rtt_sum, rtt_min, rtt_max;
        int send_error; /* the first sendto() failure (-EMSGSIZE for DF above the MTU), or 0 */
} PingResult;

int ping_run(const IpAddr *target, const PingOptions *o, PingResult *ret);

/* ping's summary numbers: loss = (tx - rx) * 100 / tx; average RTT in ms
 * with ping's microsecond truncation ("%ld.%03ld"). */
double ping_loss_percent(const PingResult *r);
double ping_average_ms(const PingResult *r);

/* Echo requests to many targets (one socket): up[i] tells whether
 * targets[i] answered. */
int ping_sweep(const IpAddr *targets, size_t n, const PingOptions *o, bool *up);
