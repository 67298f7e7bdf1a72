/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "free-addresses.h"
#include "jsonutil.h"
#include "log.h"
#include "net-local.h"
#include "step-model.h"
#include "step-util.h"
#include "strutil.h"

/* nmap's ARP ping sends a retry; so do we, 300 ms apart, then waits 1 s */
static const NeighProbeOptions sweep_arp = {
        .count = 2, .interval = 300 * USEC_PER_MSEC, .wait = USEC_PER_SEC, .stop_on_reply = true
};
static const PingOptions sweep_ping = { .count = 2, .interval = 300 * USEC_PER_MSEC, .wait = USEC_PER_SEC };

/* json.Unmarshal into FreeAddressesRequest ([]string), no Validate() */
static const ModelSchema item_schema = { .kind = MODEL_STRING, .go_type = "string" };
static const ModelSchema request_schema = { .kind = MODEL_ARRAY,
                                            .go_type = "models.FreeAddressesRequest",
                                            .items = &item_schema };

/* net.ParseCIDR + IPNet.String(): the canonical network text */
static int parse_cidr(const char *s, IpAddr *ret_net, unsigned *ret_len, char **ret_canonical)
{
        IpAddr a;
        unsigned len;
        char text[IP_ADDR_STRING_MAX];
        uint8_t *b;
        size_t nb;
        int r;

        r = ip_prefix_parse(s, &a, &len);
        if (r < 0)
                return r;
        b = a.family == AF_INET ? (uint8_t *)&a.v4 : (uint8_t *)&a.v6;
        nb = a.family == AF_INET ? 4 : 16;
        for (size_t i = 0; i < nb; i++) {
                unsigned bits = len > i * 8 ? len - (unsigned)i * 8 : 0;
                b[i] &= bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
        }
        *ret_canonical = strdup_printf("%s/%u", ip_addr_format(&a, text), len);
        if (!*ret_canonical)
                return -ENOMEM;
        *ret_net = a;
        *ret_len = len;
        return 0;
}

/* The free addresses of base/prefix (IPv4, prefix >= 22) appended to list. */
static int scan_chunk(const LocalNics *nics, uint32_t base, unsigned prefix, json_object *list,
                      char **reterr)
{
        size_t n = (size_t)1 << (32 - prefix);
        _cleanup_free_ bool *up = calloc(n, sizeof(bool));
        _cleanup_free_ bool *arp_done = calloc(n, sizeof(bool));
        int r;

        if (!up || !arp_done)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                IpAddr a = { .family = AF_INET, .v4.s_addr = htonl(base + (uint32_t)i) };
                if (local_nics_owns(nics, &a))
                        up[i] = true; /* nmap: "Host is up (localhost-response)" */
        }

        /* on-link targets, interface by interface */
        for (size_t k = 0; k < nics->n; k++) {
                const LocalNic *nic = &nics->nics[k];
                _cleanup_free_ struct in_addr *targets = NULL;
                _cleanup_free_ size_t *index = NULL;
                _cleanup_free_ NeighResult *res = NULL;
                size_t m = 0;

                if (!nic->has_mac || nic->index <= 0)
                        continue;
                targets = calloc(n, sizeof(struct in_addr));
                index = calloc(n, sizeof(size_t));
                if (!targets || !index)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        IpAddr a = { .family = AF_INET, .v4.s_addr = htonl(base + (uint32_t)i) };
                        if (up[i] || arp_done[i] || !local_nic_onlink_addr(nic, &a))
                                continue;
                        targets[m] = a.v4;
                        index[m++] = i;
                }
                if (m == 0)
                        continue;
                res = calloc(m, sizeof(NeighResult));
                if (!res)
                        return -ENOMEM;
                {
                        IpAddr first = { .family = AF_INET, .v4 = targets[0] };
                        const LocalAddr *src = local_nic_onlink_addr(nic, &first);

                        r = arp_probe(nic->index, nic->mac, src->addr.v4, targets, m, &sweep_arp, res);
                }
                if (r < 0) {
                        *reterr =
                                strdup_printf("cannot send ARP requests on %s: %s", nic->name, strerror(-r));
                        return r;
                }
                for (size_t j = 0; j < m; j++) {
                        arp_done[index[j]] = true;
                        if (res[j].n_macs > 0)
                                up[index[j]] = true;
                }
        }

        /* the rest (not on a local link): echo requests */
        {
                _cleanup_free_ IpAddr *targets = calloc(n, sizeof(IpAddr));
                _cleanup_free_ size_t *index = calloc(n, sizeof(size_t));
                _cleanup_free_ bool *answered = NULL;
                size_t m = 0;

                if (!targets || !index)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        if (!up[i] && !arp_done[i]) {
                                targets[m] = (IpAddr){ .family = AF_INET,
                                                       .v4.s_addr = htonl(base + (uint32_t)i) };
                                index[m++] = i;
                        }
                if (m > 0) {
                        answered = calloc(m, sizeof(bool));
                        if (!answered)
                                return -ENOMEM;
                        r = ping_sweep(targets, m, &sweep_ping, answered);
                        if (r < 0) {
                                *reterr = strdup_printf("cannot send echo requests: %s", strerror(-r));
                                return r;
                        }
                        for (size_t j = 0; j < m; j++)
                                if (answered[j])
                                        up[index[j]] = true;
                }
        }

        for (size_t i = 0; i < n; i++) {
                IpAddr a = { .family = AF_INET, .v4.s_addr = htonl(base + (uint32_t)i) };
                char text[IP_ADDR_STRING_MAX];

                if (up[i])
                        continue;
                if (json_append(list, json_new_string(ip_addr_format(&a, text))) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int scan_network(const LocalNics *nics, const char *network, json_object **ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *entry = json_new_object();
        _cleanup_(json_object_putp) json_object *list = json_new_array();
        _cleanup_free_ char *canonical = NULL;
        IpAddr net;
        unsigned len, mask;
        uint64_t start, end;
        int r;

        if (!entry || !list)
                return -ENOMEM;
        r = parse_cidr(network, &net, &len, &canonical);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *reterr = strdup_printf("Network %s is not a valid CIDR: invalid CIDR address: %s", network,
                                        network);
                return -EINVAL;
        }
        if (!streq(canonical, network)) {
                *reterr = strdup_printf("Requested CIDR %s is not equal to provided network %s", canonical,
                                        network);
                return -EINVAL;
        }

        if (net.family == AF_INET) {
                mask = MAX(len, (unsigned)FREE_ADDRESSES_MIN_PREFIX);
                start = ntohl(net.v4.s_addr);
                end = start + ((uint64_t)1 << (32 - len));
                for (uint64_t chunk = start; chunk < end && model_array_length(list) < FREE_ADDRESSES_LIMIT;
                     chunk += (uint64_t)1 << (32 - mask)) {
                        r = scan_chunk(nics, (uint32_t)chunk, mask, list, reterr);
                        if (r < 0)
                                return r;
                }
        }

        /* FreeNetworkAddresses: free_addresses (no omitempty; nil when none
         * was found), network (omitempty) */
        if (json_add_or_null(entry, "free_addresses", model_array_length(list) > 0 ? TAKE_PTR(list) : NULL) <
                    0 ||
            json_add_string_nonempty(entry, "network", network) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(entry);
        return 0;
}

int free_addresses_run(const char *request, char **ret_output, char **ret_error, int *ret_exit_code)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *result = NULL;
        _cleanup_(local_nics_done) LocalNics nics = {};
        _cleanup_free_ char *err = NULL;
        int r;

        *ret_output = *ret_error = NULL;
        *ret_exit_code = -1;
        r = model_parse_arg(request, &request_schema, &req, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret_error = TAKE_PTR(err);
                return 0;
        }
        r = local_nics_load(NULL, &nics);
        if (r < 0) {
                *ret_error = strdup_printf("cannot list the network interfaces: %s", strerror(-r));
                return 0;
        }

        result = json_new_array();
        if (!result)
                return -ENOMEM;
        for (size_t i = 0; i < model_array_length(req); i++) {
                json_object *entry = NULL;
                const char *network = json_object_get_string(json_object_array_get_idx(req, i));

                r = scan_network(&nics, strempty(network), &entry, &err);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        log_warning("free addresses: %s", strna(err));
                        *ret_error = TAKE_PTR(err);
                        return 0;
                }
                if (json_append(result, entry) < 0)
                        return -ENOMEM;
        }
        *ret_output = json_to_string(result, 0);
        if (!*ret_output)
                return -ENOMEM;
        *ret_exit_code = 0;
        return 0;
}
