/* SPDX-License-Identifier: Apache-2.0 */
#include <fnmatch.h>
#include <netinet/ether.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "inventory/interfaces.h"
#include "net-local.h"
#include "strutil.h"

bool local_nic_name_matches(const char *name, char *const *patterns)
{
        STRV_FOREACH (p, patterns)
                if (fnmatch(*p, name, 0) == 0)
                        return true;
        return false;
}

int local_nic_patterns_parse(const char *s, char ***ret)
{
        char **l = NULL;
        int r;

        if (isempty(s)) {
                *ret = NULL;
                return 0;
        }
        r = strv_split(s, ", ", &l);
        if (r < 0)
                return r;
        if (strv_length(l) == 0) {
                strv_free(l);
                l = NULL;
        }
        *ret = l;
        return 0;
}

void local_nics_done(LocalNics *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->nics[i].addrs);
        free(l->nics);
        *l = (LocalNics){};
}

static int add_addrs(LocalNic *nic, char *const *list)
{
        STRV_FOREACH (a, list) {
                LocalAddr la;
                LocalAddr *n;

                if (ip_prefix_parse(*a, &la.addr, &la.prefixlen) < 0 || ip_addr_is_link_local(&la.addr))
                        continue;
                n = reallocarray(nic->addrs, nic->n_addrs + 1, sizeof(LocalAddr));
                if (!n)
                        return -ENOMEM;
                nic->addrs = n;
                nic->addrs[nic->n_addrs++] = la;
                if (la.addr.family == AF_INET)
                        nic->has_ipv4 = true;
                else
                        nic->has_ipv6 = true;
        }
        return 0;
}

int local_nics_load(char *const *lab_patterns, LocalNics *ret)
{
        InventoryOptions o = { .skip_bmc = true };
        InterfaceInfo *l = NULL;
        LocalNics res = {};
        size_t n = 0;
        int r;

        r = interfaces_list(&o, &l, &n);
        if (r < 0)
                return r;
        res.nics = calloc(MAX(n, (size_t)1), sizeof(LocalNic));
        if (!res.nics) {
                interfaces_free(l, n);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                LocalNic *nic = &res.nics[res.n++];
                struct ether_addr e;

                snprintf(nic->name, sizeof(nic->name), "%s", l[i].name);
                nic->index = l[i].index;
                nic->mtu = l[i].mtu;
                if (ether_aton_r(l[i].mac, &e)) {
                        memcpy(nic->mac, e.ether_addr_octet, 6);
                        nic->has_mac = true;
                }
                r = add_addrs(nic, l[i].ipv4);
                if (r >= 0)
                        r = add_addrs(nic, l[i].ipv6);
                if (r < 0) {
                        interfaces_free(l, n);
                        local_nics_done(&res);
                        return r;
                }
                /* the Go agent: IsPhysical() || IsBonding() || IsVlan(), and
                 * at least one address that is not link-local */
                nic->outgoing = (l[i].physical || streq(l[i].kind, "bond") || streq(l[i].kind, "vlan") ||
                                 local_nic_name_matches(nic->name, lab_patterns)) &&
                                nic->n_addrs > 0;
        }
        interfaces_free(l, n);
        *ret = res;
        return 0;
}

const LocalAddr *local_nic_onlink_addr(const LocalNic *nic, const IpAddr *addr)
{
        for (size_t k = 0; k < nic->n_addrs; k++)
                if (ip_prefix_contains(&nic->addrs[k].addr, nic->addrs[k].prefixlen, addr))
                        return &nic->addrs[k];
        return NULL;
}

const LocalNic *local_nics_onlink(const LocalNics *l, const IpAddr *addr, const LocalAddr **ret_src)
{
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < l->n; i++) {
                        const LocalNic *nic = &l->nics[i];
                        const LocalAddr *src;

                        if (pass == 0 && !nic->outgoing)
                                continue;
                        src = local_nic_onlink_addr(nic, addr);
                        if (src) {
                                if (ret_src)
                                        *ret_src = src;
                                return nic;
                        }
                }
        return NULL;
}

bool local_nics_owns(const LocalNics *l, const IpAddr *addr)
{
        for (size_t i = 0; i < l->n; i++)
                for (size_t k = 0; k < l->nics[i].n_addrs; k++)
                        if (ip_addr_equal(&l->nics[i].addrs[k].addr, addr))
                                return true;
        return false;
}
