/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>

#include <json-c/json.h>

#include "bmc.h"
#include "boot.h"
#include "cleanup.h"
#include "cpu.h"
#include "disks.h"
#include "dmi.h"
#include "gpus.h"
#include "interfaces.h"
#include "inventory.h"
#include "invutil.h"
#include "jsonutil.h"
#include "log.h"
#include "memory.h"
#include "netlink.h"
#include "routes.h"
#include "strutil.h"
#include "system_vendor.h"

#define HOST_ID_FALLBACK "deaddead-dead-dead-dead-deaddeaddead"

/* Baseboard serials that identify nothing (compared case-insensitively). */
static const char *const bogus_serials[] = {
        "",
        "unknown",
        "none",
        "(none)",
        "-",
        "unspecified base board serial number",
        "unspecified system serial number",
        "default string",
        "not specified",
        "pca_number.acc",
};

static bool serial_usable(const char *s)
{
        for (size_t i = 0; i < ELEMENTSOF(bogus_serials); i++)
                if (strcasecmp(s, bogus_serials[i]) == 0)
                        return false;
        return true;
}

/* The MAC of every link as Go's net.Interfaces() has it (the current
 * address, all-zero ones dropped); the lowest as a string. */
static char *lowest_link_mac(void)
{
        _cleanup_(nl_state_done) NlState s = {};
        char best[96] = "", mac[96];
        bool zero;

        if (nl_dump(NL_DUMP_LINKS, &s) < 0)
                return NULL;
        for (size_t i = 0; i < s.n_links; i++) {
                const NlLink *l = &s.links[i];
                zero = true;
                for (size_t k = 0; k < l->addr_len; k++)
                        if (l->addr[k])
                                zero = false;
                if (l->addr_len == 0 || zero)
                        continue;
                nl_format_mac(l->addr, l->addr_len, mac, sizeof(mac));
                if (!best[0] || strcmp(mac, best) < 0)
                        snprintf(best, sizeof(best), "%s", mac);
        }
        return best[0] ? strdup(best) : NULL;
}

int inventory_host_id(const InventoryOptions *o, char ret[static UUID_STRING_MAX])
{
        _cleanup_free_ char *serial = dmi_id_item(o, "board_serial"), *uuid = dmi_id_item(o, "product_uuid"),
                            *mac = NULL;

        if (serial && serial_usable(serial) && uuid_from_md5(serial, strlen(serial), ret) >= 0)
                return 0;
        if (uuid) {
                for (char *p = uuid; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                if (uuid_is_valid(uuid) && !streq(uuid, "00000000-0000-0000-0000-000000000000") &&
                    !streq(uuid, "03000200-0400-0500-0006-000700080009")) {
                        snprintf(ret, UUID_STRING_MAX, "%s", uuid);
                        return 0;
                }
        }
        mac = lowest_link_mac();
        if (mac && uuid_from_md5(mac, strlen(mac), ret) >= 0)
                return 0;
        snprintf(ret, UUID_STRING_MAX, "%s", HOST_ID_FALLBACK);
        return 0;
}

static bool ip_global_unicast(const char *cidr)
{
        /* Go's IP.IsGlobalUnicast on "addr/len" strings we formatted */
        _cleanup_free_ char *ip = strndup(cidr, strcspn(cidr, "/"));

        if (!ip)
                return false;
        if (strchr(ip, ':'))
                return !(streq(ip, "::") || streq(ip, "::1") || startswith_no_case(ip, "fe8") ||
                         startswith_no_case(ip, "fe9") || startswith_no_case(ip, "fea") ||
                         startswith_no_case(ip, "feb") || startswith_no_case(ip, "ff"));
        {
                unsigned a = 0, b = 0;
                if (sscanf(ip, "%u.%u", &a, &b) != 2)
                        return false;
                return !(a == 0 || a == 127 || (a == 169 && b == 254) || a >= 224);
        }
}

static int interface_name_cmp(const void *x, const void *y)
{
        return strcmp((*(const InterfaceInfo *const *)x)->name, (*(const InterfaceInfo *const *)y)->name);
}

/* os.Hostname(), trimmed; localhost names become the MAC (dashes) of the
 * first usable NIC by name: physical, bond or vlan, with a MAC and a
 * global unicast address. */
static char *hostname_get(const InventoryOptions *o, const InterfaceInfo *ifs, size_t n)
{
        static const char *const localhost[] = { "localhost",  "localhost.localdomain",
                                                 "localhost4", "localhost4.localdomain4",
                                                 "localhost6", "localhost6.localdomain6" };
        _cleanup_free_ char *h = NULL;
        _cleanup_free_ const InterfaceInfo **sorted = NULL;
        bool is_local = false;

        if (inv_read_line(o, "/proc/sys/kernel/hostname", &h) < 0) {
                struct utsname u;
                if (uname(&u) < 0)
                        return strdup("");
                h = strdup(u.nodename);
                if (!h)
                        return NULL;
                strstrip(h);
        }
        for (size_t i = 0; i < ELEMENTSOF(localhost); i++)
                if (streq(h, localhost[i]))
                        is_local = true;
        if (!is_local)
                return TAKE_PTR(h);

        sorted = calloc(n ? n : 1, sizeof(*sorted));
        if (!sorted)
                return NULL;
        for (size_t i = 0; i < n; i++)
                sorted[i] = &ifs[i];
        qsort(sorted, n, sizeof(*sorted), interface_name_cmp);
        for (size_t i = 0; i < n; i++) {
                const InterfaceInfo *f = sorted[i];
                bool global = false;
                if (!(f->physical || streq(f->kind, "bond") || streq(f->kind, "vlan")) || !f->mac[0])
                        continue;
                STRV_FOREACH (a, f->ipv4)
                        global = global || ip_global_unicast(*a);
                STRV_FOREACH (a, f->ipv6)
                        global = global || ip_global_unicast(*a);
                if (!global)
                        continue;
                free(h);
                h = str_replace_all(f->mac, ":", "-");
                if (h)
                        for (char *p = h; *p; p++)
                                *p = (char)tolower((unsigned char)*p);
                return TAKE_PTR(h);
        }
        return TAKE_PTR(h);
}

/* `cat /sys/class/tpm/tpm0/tpm_version_major`: 1 is "1.2", 2 is "2.0",
 * other text passes through, a missing file is "none", other errors "". */
static char *tpm_version(const InventoryOptions *o)
{
        _cleanup_free_ char *v = NULL;
        int r;

        r = inv_read_line(o, "/sys/class/tpm/tpm0/tpm_version_major", &v);
        if (r == -ENOENT || r == -ENOTDIR)
                return strdup("none");
        if (r < 0)
                return strdup("");
        if (streq(v, "1"))
                return strdup("1.2");
        if (streq(v, "2"))
                return strdup("2.0");
        return TAKE_PTR(v);
}

/* Dry run (load tests): the first interface with an IPv4 address takes the
 * forced MAC and, as its first address, the forced IPv4; the others are
 * dropped (duplicate MACs across fake hosts confuse the service). lo comes
 * first in kernel order and has 127.0.0.1, so the Go agent picks lo --
 * kept, since the fleet tooling is used to it. */
static int apply_dry_run(const InventoryOptions *o, InterfaceInfo *ifs, size_t *n)
{
        for (size_t i = 0; i < *n; i++) {
                if (!ifs[i].ipv4 || !ifs[i].ipv4[0])
                        continue;
                snprintf(ifs[i].mac, sizeof(ifs[i].mac), "%s", strempty(o->forced_mac));
                if (free_and_strdup(&ifs[i].ipv4[0], strempty(o->forced_ipv4)) < 0)
                        return -ENOMEM;
                if (i != 0) {
                        InterfaceInfo t = ifs[0];
                        ifs[0] = ifs[i];
                        ifs[i] = t;
                }
                for (size_t k = 1; k < *n; k++)
                        interface_info_done(&ifs[k]);
                *n = 1;
                return 0;
        }
        return 0;
}

int inventory_collect(const InventoryOptions *o, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object(), *boot = NULL, *cpu = NULL,
                                                *disks = NULL, *gpus = NULL, *ifaces = NULL, *memory = NULL,
                                                *routes = NULL, *vendor = NULL;
        _cleanup_(nl_state_done) NlState nl = {};
        _cleanup_free_ char *hostname = NULL, *tpm = NULL;
        InterfaceInfo *ifs = NULL;
        size_t n_ifs = 0;
        char v4[64], v6[64];
        int r;

        if (!j)
                return -ENOMEM;

        bmc_addresses(o, v4, sizeof(v4), v6, sizeof(v6));
        r = boot_collect(o, &boot);
        if (r >= 0)
                r = cpu_collect(o, &cpu);
        if (r >= 0)
                r = disks_collect(o, &disks);
        if (r >= 0)
                r = gpus_collect(o, &gpus);
        if (r < 0)
                return r;

        ifaces = json_new_array();
        routes = json_new_array();
        if (!ifaces || !routes)
                return -ENOMEM;
        r = nl_dump(NL_DUMP_LINKS | NL_DUMP_ADDRS | NL_DUMP_ROUTES, &nl);
        if (r < 0)
                log_debug_errno(r, "cannot read links, addresses and routes, reporting none: %m");
        else {
                json_object_put(routes);
                routes = NULL;
                r = routes_to_json(&nl, &routes);
                if (r >= 0)
                        r = interfaces_from_state(o, &nl, &ifs, &n_ifs);
                if (r < 0)
                        return r;
        }
        hostname =
                o->dry_run && o->forced_hostname ? strdup(o->forced_hostname) : hostname_get(o, ifs, n_ifs);
        if (!hostname)
                goto oom;
        if (o->dry_run && apply_dry_run(o, ifs, &n_ifs) < 0)
                goto oom;
        for (size_t i = 0; i < n_ifs; i++) {
                json_object *x = NULL;
                if (interface_to_json(&ifs[i], &x) < 0 || json_append(ifaces, x) < 0)
                        goto oom;
        }
        interfaces_free(ifs, n_ifs);
        ifs = NULL;

        r = memory_collect(o, &memory);
        if (r >= 0)
                r = system_vendor_collect(o, 0, &vendor);
        if (r < 0)
                return r;
        tpm = tpm_version(o);
        if (!tpm)
                return -ENOMEM;

        if (json_add_string_nonempty(j, "bmc_address", v4) < 0 ||
            json_add_string_nonempty(j, "bmc_v6address", v6) < 0 ||
            json_add(j, "boot", TAKE_PTR(boot)) < 0 || json_add(j, "cpu", TAKE_PTR(cpu)) < 0 ||
            json_add(j, "disks", TAKE_PTR(disks)) < 0 || json_add(j, "gpus", TAKE_PTR(gpus)) < 0 ||
            json_add_string_nonempty(j, "hostname", hostname) < 0 ||
            json_add(j, "interfaces", TAKE_PTR(ifaces)) < 0 || json_add(j, "memory", TAKE_PTR(memory)) < 0 ||
            json_add(j, "routes", TAKE_PTR(routes)) < 0 ||
            json_add(j, "system_vendor", TAKE_PTR(vendor)) < 0 ||
            json_add_string_nonempty(j, "tpm_version", tpm) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
oom:
        interfaces_free(ifs, n_ifs);
        return -ENOMEM;
}
