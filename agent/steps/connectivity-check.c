/* SPDX-License-Identifier: Apache-2.0 */
/*
 * connectivity-check: can this host reach each other host of the cluster,
 * and how.
 *
 * Argument: ConnectivityCheckParams, the other hosts with their NICs
 * (name, MAC, plain IP addresses). Output: ConnectivityReport.
 *
 * For every remote address, as the Go agent's checkers (notes §6.2):
 *  - L3, once per address: 10 ICMP echo requests (ping -c 10 -W 3); an
 *    entry with the average RTT and the loss when any reply came back,
 *    {"remote_ip_address"} alone otherwise;
 *  - L2 per outgoing NIC: IPv4 addresses inside one of the NIC's subnets
 *    get ARP requests (arping -c 10 -w 5 -I NIC), one entry per distinct
 *    MAC that answered by unicast, `successful` when that MAC is one of the
 *    remote host's; IPv6 addresses (NICs with IPv6) get a neighbor
 *    solicitation (nmap -6 -sn -e NIC), one entry for the first MAC;
 *  - MTU per outgoing NIC whose MTU is above 1500: for each local address
 *    of the remote's family, 3 echo requests out of the NIC, then 3 with
 *    don't-fragment at the NIC's MTU (payload MTU-28 / MTU-48); no report
 *    when the first ones fail, mtu_successful false when the large ones do.
 * Outgoing NICs: physical, bond or VLAN with an address that is not
 * link-local (plus --lab-nics matches). Results are sorted as the Go
 * agent's Finalize() sorts them: hosts by id, L3 and MTU by remote address,
 * L2 by remote address + MAC (string order, stable).
 *
 * Differences: packets are paced faster than ping/arping's one per second
 * (see the intervals below), so a check takes about 3 s instead of 10;
 * the probes run in-process, at most CHECK_THREADS at a time.
 *
 * Dry run: every address gets a successful L3 entry and, per outgoing NIC,
 * a successful L2 entry with the MAC from the request; no MTU reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "net-local.h"
#include "step-util.h"
#include "strutil.h"

#define CHECK_THREADS 16
#define MTU_THRESHOLD 1500

/* ping -c 10 -W 3, faster: 10 requests 200 ms apart, 3 s for the last */
static const PingOptions l3_ping = { .count = 10,
                                     .interval = 200 * USEC_PER_MSEC,
                                     .wait = 3 * USEC_PER_SEC };
/* ping -c 3 [-M do -s N] -I NIC */
static const PingOptions mtu_ping = { .count = 3,
                                      .interval = 200 * USEC_PER_MSEC,
                                      .wait = 3 * USEC_PER_SEC };
/* arping -c 10 -w 5: 10 requests 200 ms apart, 1 s more for late replies */
static const NeighProbeOptions arp_opts = { .count = 10,
                                            .interval = 200 * USEC_PER_MSEC,
                                            .wait = USEC_PER_SEC };
/* nmap -6 -sn: a solicitation, one retry */
static const NeighProbeOptions ndp_opts = { .count = 2,
                                            .interval = 500 * USEC_PER_MSEC,
                                            .wait = USEC_PER_SEC };

typedef enum TaskKind {
        TASK_L3,
        TASK_L2,
        TASK_MTU,
} TaskKind;

typedef struct Task {
        TaskKind kind;
        size_t host;
        const char *remote_ip; /* as given (no prefix) */
        const char *remote_mac; /* of the NIC the address belongs to */
        const LocalNic *nic; /* L2 and MTU */
        json_object *result; /* an array of entries, or NULL for no report */
} Task;

typedef struct Check {
        bool dry_run;
        json_object **host_macs; /* per host: array of MAC strings */
        Task *tasks;
        size_t n_tasks;
} Check;

static bool mac_in(json_object *macs, const char *mac)
{
        for (size_t i = 0; i < model_array_length(macs); i++)
                if (strcasecmp(json_object_get_string(json_object_array_get_idx(macs, i)), mac) == 0)
                        return true;
        return false;
}

static json_object *single(json_object *entry)
{
        json_object *a;

        if (!entry)
                return NULL;
        a = json_new_array();
        if (!a || json_append(a, entry) < 0) {
                json_object_put(a);
                return NULL;
        }
        return a;
}

static json_object *l3_entry(const char *remote_ip, bool ok, const PingResult *p)
{
        _cleanup_(json_object_putp) json_object *e = json_new_object();

        /* L3Connectivity, alphabetical, omitempty */
        /* p is NULL in dry run: successful, no figures */
        if (!e || (ok && p && json_add_double_nonzero(e, "average_rtt_ms", ping_average_ms(p)) < 0) ||
            (ok && p && json_add_double_nonzero(e, "packet_loss_percentage", ping_loss_percent(p)) < 0) ||
            json_add_string_nonempty(e, "remote_ip_address", remote_ip) < 0 ||
            json_add_bool_true(e, "successful", ok) < 0)
                return NULL;
        return TAKE_PTR(e);
}

static json_object *l2_entry(const char *outgoing_ip, const char *nic, const char *remote_ip,
                             const char *mac, bool ok)
{
        _cleanup_(json_object_putp) json_object *e = json_new_object();

        if (!e || json_add_string_nonempty(e, "outgoing_ip_address", outgoing_ip) < 0 ||
            json_add_string_nonempty(e, "outgoing_nic", nic) < 0 ||
            json_add_string_nonempty(e, "remote_ip_address", remote_ip) < 0 ||
            json_add_string_nonempty(e, "remote_mac", mac) < 0 ||
            json_add_bool_true(e, "successful", ok) < 0)
                return NULL;
        return TAKE_PTR(e);
}

static json_object *mtu_entry(const char *nic, const char *remote_ip, bool ok)
{
        _cleanup_(json_object_putp) json_object *e = json_new_object();

        if (!e || json_add_bool_true(e, "mtu_successful", ok) < 0 ||
            json_add_string_nonempty(e, "outgoing_nic", nic) < 0 ||
            json_add_string_nonempty(e, "remote_ip_address", remote_ip) < 0)
                return NULL;
        return TAKE_PTR(e);
}

static void format_mac(const uint8_t m[6], char buf[static 18])
{
        snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static json_object *run_l3(const Task *t)
{
        PingResult p = {};
        IpAddr a;
        bool ok = false;

        if (ip_addr_parse(t->remote_ip, &a) >= 0 && ping_run(&a, &l3_ping, &p) >= 0)
                ok = p.received > 0; /* ping exits 0 when a reply came back */
        if (!ok)
                log_debug("no echo reply from %s", t->remote_ip);
        return single(l3_entry(t->remote_ip, ok, &p));
}

static json_object *run_l2(const Check *c, const Task *t)
{
        _cleanup_(json_object_putp) json_object *list = json_new_array();
        json_object *macs = c->host_macs[t->host];
        NeighResult res = {};
        IpAddr a;
        int r;

        if (!list || ip_addr_parse(t->remote_ip, &a) < 0)
                return NULL;
        if (a.family == AF_INET) {
                const LocalAddr *src = local_nic_onlink_addr(t->nic, &a);
                char src_text[IP_ADDR_STRING_MAX];

                if (!src || !t->nic->has_mac)
                        return NULL;
                r = arp_probe(t->nic->index, t->nic->mac, src->addr.v4, &a.v4, 1, &arp_opts, &res);
                if (r < 0) {
                        log_warning_errno(r, "cannot send ARP requests on %s: %m", t->nic->name);
                        return NULL;
                }
                ip_addr_format(&src->addr, src_text);
                for (unsigned i = 0; i < res.n_macs; i++) {
                        char mac[18];

                        /* arping prints "Unicast reply" for those only; the
                         * Go agent parses no other line */
                        if (!res.unicast[i])
                                continue;
                        format_mac(res.macs[i], mac);
                        if (!mac_in(macs, mac))
                                log_warning("unexpected MAC address for ARP %s on %s: %s", t->remote_ip,
                                            t->nic->name, mac);
                        if (json_append(list, l2_entry(src_text, t->nic->name, t->remote_ip, mac,
                                                       mac_in(macs, mac))) < 0)
                                return NULL;
                }
        } else {
                char mac[18];

                if (!t->nic->has_mac)
                        return NULL;
                r = ndp_probe(t->nic->index, t->nic->mac, &a.v6, 1, &ndp_opts, &res);
                if (r < 0) {
                        log_warning_errno(r, "cannot send neighbor solicitations on %s: %m", t->nic->name);
                        return NULL;
                }
                if (res.n_macs == 0)
                        return NULL;
                format_mac(res.macs[0], mac);
                if (json_append(list, l2_entry(NULL, t->nic->name, t->remote_ip, mac, mac_in(macs, mac))) <
                    0)
                        return NULL;
        }
        return model_array_length(list) > 0 ? TAKE_PTR(list) : NULL;
}

static json_object *run_mtu(const Task *t)
{
        IpAddr a;
        bool ok = true;

        if (t->nic->mtu <= MTU_THRESHOLD)
                return NULL;
        if (ip_addr_parse(t->remote_ip, &a) < 0)
                return single(mtu_entry(t->nic->name, t->remote_ip, false));
        for (size_t k = 0; k < t->nic->n_addrs && ok; k++) {
                PingOptions big = mtu_ping;
                PingResult p = {};

                if (t->nic->addrs[k].addr.family != a.family)
                        continue;
                /* rule out failures that have nothing to do with the MTU */
                big.ifname = t->nic->name;
                {
                        PingOptions first = mtu_ping;
                        first.ifname = t->nic->name;
                        if (ping_run(&a, &first, &p) < 0 || p.received == 0)
                                return NULL;
                }
                big.dont_fragment = true;
                big.payload = t->nic->mtu - (a.family == AF_INET ? 28 : 48);
                if (ping_run(&a, &big, &p) < 0 || p.received == 0) {
                        log_info("MTU %u from %s to %s failed%s", t->nic->mtu, t->nic->name, t->remote_ip,
                                 p.send_error == -EMSGSIZE ? " (message too long)" : "");
                        ok = false;
                }
        }
        return single(mtu_entry(t->nic->name, t->remote_ip, ok));
}

static void run_task(size_t i, void *userdata)
{
        Check *c = userdata;
        Task *t = &c->tasks[i];

        if (c->dry_run) {
                if (t->kind == TASK_L3)
                        t->result = single(l3_entry(t->remote_ip, true, NULL));
                else if (t->kind == TASK_L2)
                        t->result = single(l2_entry(NULL, t->nic->name, t->remote_ip, t->remote_mac, true));
                return;
        }
        switch (t->kind) {
        case TASK_L3:
                t->result = run_l3(t);
                break;
        case TASK_L2:
                t->result = run_l2(c, t);
                break;
        case TASK_MTU:
                t->result = run_mtu(t);
                break;
        }
}

static int add_task(Check *c, Task t)
{
        Task *n = reallocarray(c->tasks, c->n_tasks + 1, sizeof(Task));

        if (!n)
                return -ENOMEM;
        c->tasks = n;
        c->tasks[c->n_tasks++] = t;
        return 0;
}

/* The remote address without a prefix, as getIPAddressFromCIDR. */
static char *plain_ip(const char *s)
{
        return strndup(s, strcspn(s, "/"));
}

static int plan(Check *c, json_object *params, const LocalNics *nics, char ***owned)
{
        size_t n_hosts = model_array_length(params);
        int r;

        c->host_macs = calloc(MAX(n_hosts, (size_t)1), sizeof(json_object *));
        if (!c->host_macs)
                return -ENOMEM;
        for (size_t h = 0; h < n_hosts; h++) {
                json_object *host = json_object_array_get_idx(params, h);
                json_object *hnics = model_get(host, "nics");

                c->host_macs[h] = json_new_array();
                if (!c->host_macs[h])
                        return -ENOMEM;
                for (size_t k = 0; k < model_array_length(hnics); k++)
                        if (json_append(c->host_macs[h],
                                        json_new_string(strempty(model_get_string(
                                                json_object_array_get_idx(hnics, k), "mac")))) < 0)
                                return -ENOMEM;

                for (size_t k = 0; k < model_array_length(hnics); k++) {
                        json_object *rnic = json_object_array_get_idx(hnics, k);
                        json_object *ips = model_get(rnic, "ip_addresses");
                        const char *mac = strempty(model_get_string(rnic, "mac"));

                        for (size_t a = 0; a < model_array_length(ips); a++) {
                                char *ip = plain_ip(
                                        strempty(json_object_get_string(json_object_array_get_idx(ips, a))));
                                IpAddr addr;
                                bool v4;

                                if (!ip || strv_push(owned, ip) < 0) {
                                        free(ip);
                                        return -ENOMEM;
                                }
                                if (isempty(ip))
                                        continue;
                                v4 = ip_addr_parse(ip, &addr) >= 0 && addr.family == AF_INET;
                                r = add_task(c, (Task){ .kind = TASK_L3,
                                                        .host = h,
                                                        .remote_ip = ip,
                                                        .remote_mac = mac });
                                if (r < 0)
                                        return r;
                                for (size_t o = 0; o < nics->n; o++) {
                                        const LocalNic *nic = &nics->nics[o];
                                        bool l2;

                                        if (!nic->outgoing)
                                                continue;
                                        if (c->dry_run)
                                                l2 = true;
                                        else if (v4)
                                                /* arping only inside the NIC's subnets */
                                                l2 = nic->has_ipv4 && local_nic_onlink_addr(nic, &addr);
                                        else
                                                l2 = nic->has_ipv6 && ip_addr_parse(ip, &addr) >= 0;
                                        if (l2) {
                                                r = add_task(c, (Task){ .kind = TASK_L2,
                                                                        .host = h,
                                                                        .remote_ip = ip,
                                                                        .remote_mac = mac,
                                                                        .nic = nic });
                                                if (r < 0)
                                                        return r;
                                        }
                                        if (!c->dry_run) {
                                                r = add_task(c, (Task){ .kind = TASK_MTU,
                                                                        .host = h,
                                                                        .remote_ip = ip,
                                                                        .remote_mac = mac,
                                                                        .nic = nic });
                                                if (r < 0)
                                                        return r;
                                        }
                                }
                        }
                }
        }
        return 0;
}

static const char *entry_string(json_object *e, const char *key)
{
        return strempty(json_get_string(e, key));
}

typedef enum SortKey {
        SORT_BY_IP,
        SORT_BY_IP_MAC,
} SortKey;

/* sort.SliceStable on string keys: insertion sort keeps equal keys in order */
static void sort_stable(json_object *array, SortKey key)
{
        size_t n = model_array_length(array);

        for (size_t i = 1; i < n; i++)
                for (size_t k = i; k > 0; k--) {
                        json_object *a = json_object_array_get_idx(array, k - 1);
                        json_object *b = json_object_array_get_idx(array, k);
                        _cleanup_free_ char *ka = NULL, *kb = NULL;

                        if (key == SORT_BY_IP_MAC) {
                                ka = strdup_printf("%s%s", entry_string(a, "remote_ip_address"),
                                                   entry_string(a, "remote_mac"));
                                kb = strdup_printf("%s%s", entry_string(b, "remote_ip_address"),
                                                   entry_string(b, "remote_mac"));
                        } else {
                                ka = strdup(entry_string(a, "remote_ip_address"));
                                kb = strdup(entry_string(b, "remote_ip_address"));
                        }
                        if (!ka || !kb || strcmp(ka, kb) <= 0)
                                break;
                        json_object_get(a);
                        json_object_get(b);
                        json_object_array_put_idx(array, k - 1, b);
                        json_object_array_put_idx(array, k, a);
                }
}

static int build_report(Check *c, json_object *params, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *report = json_new_object();
        _cleanup_(json_object_putp) json_object *hosts = NULL;
        size_t n_hosts = model_array_length(params);

        if (!report)
                return -ENOMEM;
        if (n_hosts > 0) {
                hosts = json_new_array();
                if (!hosts)
                        return -ENOMEM;
        }
        for (size_t h = 0; h < n_hosts; h++) {
                _cleanup_(json_object_putp) json_object *host = json_new_object();
                json_object *lists[3] = {};
                const char *keys[3] = { "l2_connectivity", "l3_connectivity", "mtu_report" };
                const TaskKind kinds[3] = { TASK_L2, TASK_L3, TASK_MTU };

                if (!host || json_add_string_nonempty(
                                     host, "host_id",
                                     model_get_string(json_object_array_get_idx(params, h), "host_id")) < 0)
                        return -ENOMEM;
                for (size_t l = 0; l < 3; l++) {
                        for (size_t i = 0; i < c->n_tasks; i++) {
                                Task *t = &c->tasks[i];
                                if (t->host != h || t->kind != kinds[l] || !t->result)
                                        continue;
                                if (!lists[l]) {
                                        lists[l] = json_new_array();
                                        if (!lists[l])
                                                return -ENOMEM;
                                }
                                for (size_t e = 0; e < model_array_length(t->result); e++)
                                        if (json_append(lists[l], json_object_get(json_object_array_get_idx(
                                                                          t->result, e))) < 0)
                                                return -ENOMEM;
                        }
                        if (lists[l])
                                sort_stable(lists[l], kinds[l] == TASK_L2 ? SORT_BY_IP_MAC : SORT_BY_IP);
                        /* a check that reported nothing leaves a nil slice: null */
                        if (json_add_or_null(host, keys[l], lists[l]) < 0)
                                return -ENOMEM;
                }
                if (json_append(hosts, TAKE_PTR(host)) < 0)
                        return -ENOMEM;
        }
        /* hosts by id (sort.SliceStable) */
        for (size_t i = 1; i < n_hosts; i++)
                for (size_t k = i; k > 0; k--) {
                        json_object *a = json_object_array_get_idx(hosts, k - 1);
                        json_object *b = json_object_array_get_idx(hosts, k);
                        if (strcmp(entry_string(a, "host_id"), entry_string(b, "host_id")) <= 0)
                                break;
                        json_object_get(a);
                        json_object_get(b);
                        json_object_array_put_idx(hosts, k - 1, b);
                        json_object_array_put_idx(hosts, k, a);
                }
        if (json_add_or_null(report, "remote_hosts", TAKE_PTR(hosts)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(report);
        return 0;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *params = NULL, *report = NULL;
        _cleanup_strv_free_ char **lab = NULL, **owned = NULL;
        _cleanup_(local_nics_done) LocalNics nics = {};
        Check c = { .dry_run = ctx->config && ctx->config->dry_run };
        size_t n_hosts;
        int r;

        r = step_parse_arg(args[0], &model_connectivity_check_params, ret, &params);
        if (r <= 0)
                return r;
        r = step_lab_patterns(ctx, &lab);
        if (r < 0)
                return r;
        r = local_nics_load(lab, &nics);
        if (r < 0)
                /* the Go agent logs and goes on without outgoing NICs */
                log_warning_errno(r, "cannot list the network interfaces, ignoring: %m");

        n_hosts = model_array_length(params);
        r = plan(&c, params, &nics, &owned);
        if (r >= 0) {
                /* dry run answers at once: no threads for it */
                parallel_for(c.n_tasks, c.dry_run ? 1 : CHECK_THREADS, run_task, &c);
                r = build_report(&c, params, &report);
        }
        for (size_t i = 0; i < c.n_tasks; i++)
                json_object_put(c.tasks[i].result);
        free(c.tasks);
        for (size_t h = 0; c.host_macs && h < n_hosts; h++)
                json_object_put(c.host_macs[h]);
        free(c.host_macs);
        if (r < 0)
                return r;
        return step_succeed_json(ret, report);
}

const StepHandler step_connectivity_check = {
        .type = STEP_CONNECTIVITY_CHECK,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
