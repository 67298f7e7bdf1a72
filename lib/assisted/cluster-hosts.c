/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "cluster-hosts.h"
#include "jsonutil.h"
#include "kube/kube-node.h"
#include "strutil.h"

static void cluster_host_done(ClusterHost *h)
{
        free(h->id);
        free(h->infra_env_id);
        free(h->name);
        free(h->role);
        free(h->status);
        free(h->stage);
        strv_free(h->ips);
}

void cluster_hosts_done(ClusterHosts *inv)
{
        for (size_t i = 0; i < inv->n; i++)
                cluster_host_done(&inv->hosts[i]);
        free(inv->hosts);
        *inv = (ClusterHosts){};
}

/* utils.GetHostIpsFromInventory: every IPv4 and IPv6 address of every
 * interface, without the prefix length */
static int inventory_ips(const char *inventory, char ***ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *inv = NULL;
        _cleanup_strv_free_ char **ips = NULL;
        _cleanup_free_ char *err = NULL;
        json_object *ifaces;
        int r;

        r = json_parse(strempty(inventory), strlen(strempty(inventory)), BUF_MAX_JSON_DOC, &inv, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = TAKE_PTR(err);
                return r;
        }
        ifaces = json_get(inv, "interfaces");
        for (size_t i = 0; ifaces && i < json_object_array_length(ifaces); i++) {
                static const char *const keys[] = { "ipv4_addresses", "ipv6_addresses" };
                json_object *iface = json_object_array_get_idx(ifaces, i);
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        json_object *l = json_get(iface, keys[k]);
                        for (size_t j = 0; l && j < json_object_array_length(l); j++) {
                                const char *cidr = json_object_get_string(json_object_array_get_idx(l, j));
                                const char *slash = cidr ? strchr(cidr, '/') : NULL;
                                _cleanup_free_ char *ip =
                                        cidr ? strndup(cidr, slash ? (size_t)(slash - cidr) : strlen(cidr))
                                             : NULL;
                                if (isempty(ip))
                                        continue;
                                if (strv_contains(ips, ip))
                                        continue;
                                if (strv_push(&ips, ip) < 0)
                                        return -ENOMEM;
                                ip = NULL;
                        }
                }
        }
        *ret = TAKE_PTR(ips);
        return 0;
}

int cluster_hosts_from_cluster(json_object *cluster, const char *self_host_id, ClusterHosts *ret,
                               char **reterr)
{
        json_object *hosts = json_get(cluster, "hosts");
        ClusterHosts inv = {};
        int r;

        for (size_t i = 0; hosts && i < json_object_array_length(hosts); i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                const char *id = json_get_string(h, "id");
                _cleanup_free_ char *err = NULL;
                ClusterHost *grown, host = {};

                if (streq_ptr(json_get_string(h, "status"), "disabled") || streq_ptr(id, self_host_id))
                        continue;
                r = inventory_ips(json_get_string(h, "inventory"), &host.ips, &err);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("cannot parse the inventory of host %s: %s",
                                                        strna(id), strna(err));
                        cluster_hosts_done(&inv);
                        return r;
                }
                host.id = strdup(strempty(id));
                host.infra_env_id = strdup(strempty(json_get_string(h, "infra_env_id")));
                host.name = strdup_lower(strempty(json_get_string(h, "requested_hostname")));
                host.role = strdup(strempty(json_get_string(h, "role")));
                host.status = strdup(strempty(json_get_string(h, "status")));
                host.stage = strdup(strempty(json_get_string(json_get(h, "progress"), "current_stage")));
                grown = reallocarray(inv.hosts, inv.n + 1, sizeof(ClusterHost));
                if (!host.id || !host.infra_env_id || !host.name || !host.role || !host.status ||
                    !host.stage || !grown) {
                        if (grown)
                                inv.hosts = grown;
                        cluster_host_done(&host);
                        cluster_hosts_done(&inv);
                        return -ENOMEM;
                }
                inv.hosts = grown;
                inv.hosts[inv.n++] = host;
        }
        *ret = inv;
        return 0;
}

int cluster_hosts_match_node(const ClusterHosts *inv, json_object *node)
{
        const char *name = json_get_string(json_get(node, "metadata"), "name");
        _cleanup_free_ char *lower = name ? strdup_lower(name) : NULL;
        _cleanup_strv_free_ char **ips = kube_node_internal_ips(node);

        for (size_t i = 0; lower && i < inv->n; i++)
                if (!isempty(inv->hosts[i].name) && streq(inv->hosts[i].name, lower))
                        return (int)i;
        STRV_FOREACH (ip, ips)
                for (size_t i = 0; i < inv->n; i++)
                        if (strv_contains(inv->hosts[i].ips, *ip))
                                return (int)i;
        return -ENOENT;
}

/* ---- the machine-config-server's log ------------------------------------- */

static bool is_addr_char(char c)
{
        return isalnum((unsigned char)c) || c == '.' || c == ':' || c == '_';
}

/* After the address: (%zone)?(])?:\d+"? User-Agent:"Ignition */
static bool ignition_request_follows(const char *p)
{
        if (*p == '%') {
                const char *z = ++p;
                while (isalnum((unsigned char)*p))
                        p++;
                if (p == z)
                        return false;
        }
        if (*p == ']')
                p++;
        if (*p != ':' || !isdigit((unsigned char)p[1]))
                return false;
        for (p++; isdigit((unsigned char)*p); p++)
                ;
        if (*p == '"')
                p++;
        return startswith(p, " User-Agent:\"Ignition") != NULL;
}

bool mcs_log_shows(const char *log, char *const *ips)
{
        STRV_FOREACH (ip, ips) {
                size_t len = strlen(*ip);
                if (len == 0)
                        continue;
                for (const char *p = strempty(log); (p = strstr(p, *ip)); p++) {
                        bool start = p == log || !is_addr_char(p[-1]);
                        /* "\b" after the address: the next character is no
                         * word character (a ':' or ']' or '%' is fine) */
                        bool end = !isalnum((unsigned char)p[len]) && p[len] != '_';
                        if (start && end && ignition_request_follows(p + len))
                                return true;
                }
        }
        return false;
}

/* ---- dry run ------------------------------------------------------------ */

void dry_cluster_hosts_free(DryClusterHost *h, size_t n)
{
        for (size_t i = 0; h && i < n; i++) {
                free(h[i].hostname);
                free(h[i].ip);
                free(h[i].reboot_marker_path);
        }
        free(h);
}

int dry_cluster_hosts_parse(const char *json, size_t len, DryClusterHost **ret, size_t *ret_n, char **reterr)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        DryClusterHost *hosts = NULL;
        size_t n = 0;
        int r;

        r = json_parse(json, len, BUF_MAX_JSON_DOC, &o, reterr);
        if (r < 0)
                return r;
        if (!json_object_is_type(o, json_type_array)) {
                if (reterr)
                        *reterr = strdup_printf("expected a JSON array of hosts, got %s", json_kind_name(o));
                return -EBADMSG;
        }
        hosts = calloc(json_object_array_length(o) + 1, sizeof(DryClusterHost));
        if (!hosts)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(o); i++) {
                static const JsonDispatch table[] = {
                        { "hostname", json_dispatch_string, offsetof(DryClusterHost, hostname), 0 },
                        { "ip", json_dispatch_string, offsetof(DryClusterHost, ip), 0 },
                        { "rebootMarkerPath", json_dispatch_string,
                          offsetof(DryClusterHost, reboot_marker_path), 0 },
                        {},
                };
                _cleanup_free_ char *err = NULL;

                r = json_dispatch(json_object_array_get_idx(o, i), table, &hosts[n++], 0, &err);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("host %zu: %s", i, strna(err));
                        dry_cluster_hosts_free(hosts, n);
                        return r;
                }
        }
        *ret = hosts;
        *ret_n = n;
        return 0;
}
