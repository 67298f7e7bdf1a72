/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Network interfaces: every link rtnetlink reports (lo included, as the Go
 * agent's net.Interfaces()), with addresses, MAC, MTU, flags, type and the
 * sysfs facts (carrier, speed, PCI vendor/product). This is the API the
 * network steps use as well as the `interfaces` list of the inventory.
 *
 * Field rules (notes §9.5): mac_address is the bond slave's permanent
 * address when enslaved to a bond, else the link address, omitted when
 * absent or all zero; flags are Go's net.Flags names (up, broadcast,
 * loopback, pointtopoint, multicast, running); link-local addresses
 * (169.254/16, fe80::/10) are left out; an IPv6 prefix is replaced by the
 * prefix of an RA-learned route on the link containing the address; type
 * is "physical" unless /sys/class/net/<name> resolves under /virtual/,
 * else the link kind ("device" when there is none, "tuntap" for tun).
 */

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"

typedef struct InterfaceInfo {
        int index;
        char name[IFNAMSIZ];
        char mac[96]; /* "aa:bb:..", "" when none */
        unsigned flags; /* IFF_* as the kernel reports them */
        unsigned mtu;
        char kind[32]; /* netlink link kind ("" for none) */
        char type[32]; /* the inventory's "type" */
        bool physical; /* not under /sys/devices/virtual */
        bool has_carrier;
        int64_t speed_mbps; /* 0 when unreadable, -1 when unknown */
        char vendor[16], product[16]; /* PCI ids as sysfs writes them ("0x1af4") */
        char *biosdevname; /* NULL when none */
        char **ipv4; /* "a.b.c.d/len", never NULL */
        char **ipv6; /* "x::y/len", never NULL */
} InterfaceInfo;

void interface_info_done(InterfaceInfo *i);
void interfaces_free(InterfaceInfo *l, size_t n);

/* All interfaces in kernel (index) order. */
int interfaces_list(const InventoryOptions *o, InterfaceInfo **ret, size_t *ret_n);
/* The same from a netlink dump taken with links, addresses and routes. */
typedef struct NlState NlState;
int interfaces_from_state(const InventoryOptions *o, const NlState *s, InterfaceInfo **ret, size_t *ret_n);

/* The sysfs part for one interface named i->name: carrier, speed, vendor,
 * product, physical/type (needs i->kind), biosdevname. Exposed so that
 * tests can apply it to recorded (umockdev) devices. */
int interface_fill_sysfs(const InventoryOptions *o, InterfaceInfo *i);

/* Go's net.Flags.String() names, in Go's order. */
int interface_flag_names(unsigned iff_flags, char ***ret);

/* The inventory's JSON for one interface (keys in the Go agent's order). */
int interface_to_json(const InterfaceInfo *i, json_object **ret);

/* The lowest MAC (as a string) of any interface, for the host ID; NULL when
 * none. */
char *interfaces_lowest_mac(const InterfaceInfo *l, size_t n);
