/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * This host's interfaces as the network steps see them (taken from the
 * inventory's rtnetlink view, inventory/interfaces.h): name, index, MAC,
 * MTU, the addresses that are not link-local, and whether the Go agent
 * would use the interface as an "outgoing NIC" for connectivity-check:
 * physical (not under /sys/devices/virtual), a bond or a VLAN, with at
 * least one such address.
 *
 * Labs and tests whose hosts are network namespaces joined by veth pairs
 * have no physical NICs; interfaces whose names match one of the lab
 * patterns (fnmatch globs, from --lab-nics / CRADLE_LAB_NICS) count as
 * outgoing too. Without patterns the selection is the Go agent's.
 */

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net-probe.h"

typedef struct LocalAddr {
        IpAddr addr;
        unsigned prefixlen;
} LocalAddr;

typedef struct LocalNic {
        char name[IF_NAMESIZE];
        int index;
        unsigned mtu;
        uint8_t mac[6];
        bool has_mac;
        bool outgoing;
        bool has_ipv4, has_ipv6;
        LocalAddr *addrs; /* not link-local */
        size_t n_addrs;
} LocalNic;

typedef struct LocalNics {
        LocalNic *nics;
        size_t n;
} LocalNics;

/* Reads the interfaces; lab_patterns may be NULL. */
int local_nics_load(char *const *lab_patterns, LocalNics *ret);
void local_nics_done(LocalNics *l);

/* Whether name matches one of the patterns. */
bool local_nic_name_matches(const char *name, char *const *patterns);

/* The interface whose subnet contains addr (an outgoing one first), with
 * the local address of that subnet in *ret_src; NULL when none. */
const LocalNic *local_nics_onlink(const LocalNics *l, const IpAddr *addr, const LocalAddr **ret_src);
/* The address of the interface in the same subnet as addr, NULL if none. */
const LocalAddr *local_nic_onlink_addr(const LocalNic *nic, const IpAddr *addr);
/* Whether addr is one of this host's addresses. */
bool local_nics_owns(const LocalNics *l, const IpAddr *addr);

/* "nic0,veth*" -> strv; NULL or "" gives NULL. */
int local_nic_patterns_parse(const char *s, char ***ret);
