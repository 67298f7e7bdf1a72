/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <limits.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "dmi.h"
#include "interfaces.h"
#include "invutil.h"
#include "jsonutil.h"
#include "netlink.h"
#include "strutil.h"
#include "system_vendor.h"

void interface_info_done(InterfaceInfo *i)
{
        free(i->biosdevname);
        strv_free(i->ipv4);
        strv_free(i->ipv6);
        i->biosdevname = NULL;
        i->ipv4 = i->ipv6 = NULL;
}

void interfaces_free(InterfaceInfo *l, size_t n)
{
        for (size_t k = 0; k < n; k++)
                interface_info_done(&l[k]);
        free(l);
}

int interface_flag_names(unsigned f, char ***ret)
{
        static const struct {
                unsigned iff;
                const char *name;
        } names[] = {
                { IFF_UP, "up" },
                { IFF_BROADCAST, "broadcast" },
                { IFF_LOOPBACK, "loopback" },
                { IFF_POINTOPOINT, "pointtopoint" },
                { IFF_MULTICAST, "multicast" },
                { IFF_RUNNING, "running" },
        };
        _cleanup_strv_free_ char **l = NULL;

        for (size_t k = 0; k < ELEMENTSOF(names); k++)
                if ((f & names[k].iff) && strv_extend(&l, names[k].name) < 0)
                        return -ENOMEM;
        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static bool mac_all_zero(const uint8_t *a, size_t n)
{
        for (size_t k = 0; k < n; k++)
                if (a[k])
                        return false;
        return true;
}

/* Go's net package drops the all-zero address (lo) and, on IP tunnels,
 * the 4/16-byte "hardware address" that is really the tunnel endpoint. */
static void link_mac(const NlLink *l, char *buf, size_t size)
{
        buf[0] = 0;
        if (streq(l->slave_kind, "bond") && l->perm_addr_len > 0) {
                nl_format_mac(l->perm_addr, l->perm_addr_len, buf, size);
                return;
        }
        if (l->addr_len == 0 || mac_all_zero(l->addr, l->addr_len))
                return;
        if ((l->addr_len == 4 || l->addr_len == 16) &&
            (l->arphrd == 768 /* ARPHRD_TUNNEL */ || l->arphrd == 769 /* ARPHRD_TUNNEL6 */ ||
             l->arphrd == 776 /* ARPHRD_SIT */ || l->arphrd == 778 /* ARPHRD_IPGRE */ ||
             l->arphrd == 823 /* ARPHRD_IP6GRE */))
                return;
        nl_format_mac(l->addr, l->addr_len, buf, size);
}

static bool prefix_contains(int family, const uint8_t *net, unsigned len, const uint8_t *addr)
{
        unsigned bits = family == AF_INET ? 32 : 128, full, rest;

        if (len > bits)
                return false;
        full = len / 8;
        rest = len % 8;
        if (memcmp(net, addr, full) != 0)
                return false;
        if (rest) {
                uint8_t mask = (uint8_t)(0xFF << (8 - rest));
                if ((net[full] & mask) != (addr[full] & mask))
                        return false;
        }
        return true;
}

static bool is_link_local(const NlAddr *a)
{
        if (a->family == AF_INET)
                return a->addr[0] == 169 && a->addr[1] == 254;
        return a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
}

static int add_addresses(InterfaceInfo *i, const NlState *s)
{
        for (size_t k = 0; k < s->n_addrs; k++) {
                const NlAddr *a = &s->addrs[k];
                unsigned prefix = a->prefixlen;
                char ip[64];

                if (a->index != i->index || is_link_local(a))
                        continue;
                if (a->family == AF_INET6)
                        /* util.SetV6PrefixesForAddress: an RA-learned
                         * route on this link that contains the address
                         * gives the prefix length */
                        for (size_t m = 0; m < s->n_routes; m++) {
                                const NlRoute *r = &s->routes[m];
                                if (r->family == AF_INET6 && r->table == RT_TABLE_MAIN &&
                                    r->protocol == RTPROT_RA && r->oif == i->index && r->has_dst &&
                                    r->dst_len > 0 &&
                                    prefix_contains(AF_INET6, r->dst, r->dst_len, a->addr)) {
                                        prefix = r->dst_len;
                                        break;
                                }
                        }
                nl_format_ip(a->family, a->addr, ip, sizeof(ip));
                if (strv_extendf(a->family == AF_INET ? &i->ipv4 : &i->ipv6, "%s/%u", ip, prefix) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* biosdevname's names, computed in-process (the Go agent runs
 * `biosdevname -i NAME`, shipped in its x86_64 image only). biosdevname
 * names nothing in virtual machines, needs SMBIOS >= 2.6, and names PCI
 * NICs: "em<instance>" for an enabled on-board device (SMBIOS type 41),
 * "p<slot>p<port>" for a NIC in a slot (type 9), port counted from 1 by
 * PCI function (dev_port for multi-port functions). Not reproduced: SR-IOV
 * virtual function suffixes, PCI IRQ routing tables (pre-2.6 firmware) and
 * the "all ethN" policies; those give no name here. */
static char *biosdevname_for(const InventoryOptions *o, const char *name)
{
        _cleanup_free_ char *link = NULL, *dev = NULL, *ep = NULL, *table = NULL;
        unsigned seg, bus, slot, fn;
        uint64_t dev_port = 0;
        SmbiosPciRef ref;
        size_t len, eplen;
        char b[32];
        const char *base;
        int n = 0;

#if !defined(__x86_64__) && !defined(__i386__)
        return NULL;
#endif
        if (virt_detect_vm(o, 0))
                return NULL;
        if (inv_read_file(o, "/sys/firmware/dmi/tables/smbios_entry_point", 64, &ep, &eplen) < 0)
                return NULL;
        if (!((eplen >= 8 && memcmp(ep, "_SM3_", 5) == 0 && (uint8_t)ep[7] >= 3) ||
              (eplen >= 8 && memcmp(ep, "_SM_", 4) == 0 &&
               ((uint8_t)ep[6] > 2 || ((uint8_t)ep[6] == 2 && (uint8_t)ep[7] >= 6)))))
                return NULL;
        link = strdup_printf("/sys/class/net/%s/device", name);
        dev = link ? inv_path(o, link) : NULL;
        if (!dev)
                return NULL;
        {
                char target[PATH_MAX];
                ssize_t l = readlink(dev, target, sizeof(target) - 1);
                if (l <= 0)
                        return NULL;
                target[l] = 0;
                base = strrchr(target, '/');
                base = base ? base + 1 : target;
                if (sscanf(base, "%x:%x:%x.%x%n", &seg, &bus, &slot, &fn, &n) != 4 || base[n])
                        return NULL;
        }
        if (smbios_read_table(o, (uint8_t **)&table, &len) < 0)
                return NULL;
        if (smbios_find_pci((const uint8_t *)table, len, seg, bus, slot << 3 | fn, &ref) <= 0)
                return NULL;
        if (ref.kind == 41)
                return ref.enabled && ref.device_type == 0x05 /* Ethernet */ ? strdup_printf("em%u",
                                                                                             ref.number)
                                                                             : NULL;
        {
                _cleanup_free_ char *p = strdup_printf("/sys/class/net/%s/dev_port", name), *pp = NULL;
                pp = p ? inv_path(o, p) : NULL;
                if (pp)
                        (void)inv_parse_u64(inv_read_attr(pp, b, sizeof(b)), 10, &dev_port);
        }
        return strdup_printf("p%up%u", ref.number, fn + (unsigned)dev_port + 1);
}

int interface_fill_sysfs(const InventoryOptions *o, InterfaceInfo *i)
{
        _cleanup_free_ char *dir = NULL, *p = NULL;
        char b[64], target[PATH_MAX];
        int64_t speed;
        ssize_t l;

        dir = strdup_printf("%s/sys/class/net/%s", o && o->root ? o->root : "", i->name);
        if (!dir)
                return -ENOMEM;

#define ATTR(rel) \
        ({ \
                free(p); \
                p = strdup_printf("%s/%s", dir, rel); \
                if (!p) \
                        return -ENOMEM; \
                p; \
        })
        i->has_carrier = inv_read_bool(ATTR("carrier"));
        i->speed_mbps = safe_atoi64(inv_read_attr(ATTR("speed"), b, sizeof(b)), &speed) >= 0 ? speed : 0;
        snprintf(i->vendor, sizeof(i->vendor), "%s", inv_read_attr(ATTR("device/vendor"), b, sizeof(b)));
        snprintf(i->product, sizeof(i->product), "%s", inv_read_attr(ATTR("device/device"), b, sizeof(b)));
#undef ATTR

        /* IsPhysical: the resolved class path is not under /virtual/ */
        l = readlink(dir, target, sizeof(target) - 1);
        if (l > 0) {
                target[l] = 0;
                i->physical = !strstr(target, "/virtual/");
        } else
                i->physical = false;
        if (i->physical)
                snprintf(i->type, sizeof(i->type), "physical");
        else if (!i->kind[0])
                snprintf(i->type, sizeof(i->type), "device");
        else if (streq(i->kind, "tun"))
                snprintf(i->type, sizeof(i->type), "tuntap"); /* vishvananda/netlink's Tuntap.Type() */
        else
                snprintf(i->type, sizeof(i->type), "%s", i->kind);

        free(i->biosdevname);
        i->biosdevname = biosdevname_for(o, i->name);
        return 0;
}

int interfaces_list(const InventoryOptions *o, InterfaceInfo **ret, size_t *ret_n)
{
        _cleanup_(nl_state_done) NlState s = {};
        int r;

        r = nl_dump(NL_DUMP_LINKS | NL_DUMP_ADDRS | NL_DUMP_ROUTES, &s);
        if (r < 0)
                return r;
        return interfaces_from_state(o, &s, ret, ret_n);
}

int interfaces_from_state(const InventoryOptions *o, const NlState *st, InterfaceInfo **ret, size_t *ret_n)
{
        const NlState s = *st;
        InterfaceInfo *l;

        l = calloc(s.n_links ? s.n_links : 1, sizeof(InterfaceInfo));
        if (!l)
                return -ENOMEM;
        for (size_t k = 0; k < s.n_links; k++) {
                const NlLink *nl = &s.links[k];
                InterfaceInfo *i = &l[k];

                i->index = nl->index;
                snprintf(i->name, sizeof(i->name), "%s", nl->name);
                link_mac(nl, i->mac, sizeof(i->mac));
                i->flags = nl->flags;
                i->mtu = nl->mtu;
                snprintf(i->kind, sizeof(i->kind), "%s", nl->kind);
                i->ipv4 = calloc(1, sizeof(char *));
                i->ipv6 = calloc(1, sizeof(char *));
                if (!i->ipv4 || !i->ipv6 || add_addresses(i, &s) < 0 || interface_fill_sysfs(o, i) < 0) {
                        interfaces_free(l, s.n_links);
                        return -ENOMEM;
                }
        }
        *ret = l;
        *ret_n = s.n_links;
        return 0;
}

int interface_to_json(const InterfaceInfo *i, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object();
        _cleanup_strv_free_ char **flags = NULL;

        if (!j || interface_flag_names(i->flags, &flags) < 0)
                return -ENOMEM;
        if (json_add_string_nonempty(j, "biosdevname", i->biosdevname) < 0 ||
            json_add(j, "flags", json_new_strv(flags)) < 0 ||
            json_add_bool_true(j, "has_carrier", i->has_carrier) < 0 ||
            json_add(j, "ipv4_addresses", json_new_strv(i->ipv4)) < 0 ||
            json_add(j, "ipv6_addresses", json_new_strv(i->ipv6)) < 0 ||
            json_add_string_nonempty(j, "mac_address", i->mac) < 0 ||
            json_add_int64_nonzero(j, "mtu", i->mtu) < 0 ||
            json_add_string_nonempty(j, "name", i->name) < 0 ||
            json_add_string_nonempty(j, "product", i->product) < 0 ||
            json_add_int64_nonzero(j, "speed_mbps", i->speed_mbps) < 0 ||
            json_add_string_nonempty(j, "type", i->type) < 0 ||
            json_add_string_nonempty(j, "vendor", i->vendor) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}

char *interfaces_lowest_mac(const InterfaceInfo *l, size_t n)
{
        const char *best = NULL;

        for (size_t k = 0; k < n; k++)
                if (l[k].mac[0] && (!best || strcmp(l[k].mac, best) < 0))
                        best = l[k].mac;
        return best ? strdup(best) : NULL;
}
