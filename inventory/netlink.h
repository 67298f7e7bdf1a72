/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A small rtnetlink reader over a raw NETLINK_ROUTE socket: dumps of links,
 * addresses and routes. (libsystemd 252's sd-netlink is not public API in
 * Debian 12's libsystemd-dev: no sd-netlink.h is installed, so this is ours.)
 *
 * Message parsers are separate from the socket so that they can be fuzzed
 * (tests/fuzz/fuzz-netlink.c): they take one message's bytes and never
 * read past them.
 */

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NL_ADDR_MAX 32

typedef struct NlLink {
        int index;
        unsigned flags; /* IFF_* */
        unsigned arphrd; /* ARPHRD_* */
        unsigned mtu;
        char name[IFNAMSIZ];
        uint8_t addr[NL_ADDR_MAX];
        size_t addr_len;
        uint8_t perm_addr[NL_ADDR_MAX]; /* bond slave's permanent address */
        size_t perm_addr_len;
        char kind[32]; /* IFLA_INFO_KIND, "" for none */
        char slave_kind[32]; /* IFLA_INFO_SLAVE_KIND */
        int master;
} NlLink;

typedef struct NlAddr {
        int family; /* AF_INET, AF_INET6 */
        int index;
        unsigned prefixlen;
        uint8_t addr[16];
} NlAddr;

typedef struct NlRoute {
        int family;
        unsigned table;
        unsigned protocol; /* RTPROT_* */
        unsigned type;
        unsigned flags; /* rtm_flags */
        unsigned dst_len;
        bool has_dst, has_gateway;
        uint8_t dst[16];
        uint8_t gateway[16];
        int oif;
        uint32_t priority;
} NlRoute;

/* Parse one message (header included). 0 on success, -EBADMSG when
 * malformed, -ENOMSG when the message is of another type. */
int nl_parse_link(const void *msg, size_t len, NlLink *ret);
int nl_parse_addr(const void *msg, size_t len, NlAddr *ret);
int nl_parse_route(const void *msg, size_t len, NlRoute *ret);

typedef struct NlState {
        NlLink *links;
        size_t n_links;
        NlAddr *addrs;
        size_t n_addrs;
        NlRoute *routes;
        size_t n_routes;
} NlState;

void nl_state_done(NlState *s);

typedef enum NlDumpFlags {
        NL_DUMP_LINKS = 1 << 0,
        NL_DUMP_ADDRS = 1 << 1,
        NL_DUMP_ROUTES = 1 << 2,
} NlDumpFlags;

/* Dumps what flags ask for, in kernel order (links by index; addresses
 * IPv4 then IPv6; routes IPv4 then IPv6, every table). */
int nl_dump(NlDumpFlags flags, NlState *ret);

/* Walks a buffer of concatenated messages (a recv() result), calling the
 * parsers; used by nl_dump() and the fuzz target. Returns 1 at NLMSG_DONE,
 * 0 when more should follow, -errno on NLMSG_ERROR or malformed input. */
int nl_consume(const void *buf, size_t len, NlState *s);

const NlLink *nl_state_link(const NlState *s, int index);

/* Go's net.IP.String(): dotted quad, RFC 5952 IPv6, IPv4-mapped IPv6 as a
 * dotted quad. buf >= 46 bytes. */
const char *nl_format_ip(int family, const uint8_t *addr, char *buf, size_t size);
/* Go's net.HardwareAddr.String(): lower-case hex bytes joined by ':'. */
const char *nl_format_mac(const uint8_t *addr, size_t len, char *buf, size_t size);
