/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify-vips: are the cluster's API and ingress VIPs still free?
 *
 * Argument: VerifyVipsRequest [{"vip","vip_type"}]. Output:
 * VerifyVipsResponse [{"verification","vip","vip_type"}], in request
 * order: "failed" when something answers for the VIP, "succeeded" when
 * nothing does. The Go agent asks nmap -sn (ARP on the local link, echo
 * and TCP probes elsewhere); here: this host's own addresses count as
 * taken (nmap reports them up), on-link VIPs get ARP requests (IPv4) or a
 * neighbor solicitation (IPv6) on the interface of their subnet, others
 * ICMP echo requests. A probe that cannot run aborts the step with exit -1
 * ("failed to verify vip X: ..."), as an nmap failure does.
 *
 * Dry run: every VIP "succeeded".
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "net-local.h"
#include "step-util.h"
#include "strutil.h"

/* nmap -sn's ARP / ND ping: a retry, then a second of patience */
static const NeighProbeOptions vip_neigh = {
        .count = 2, .interval = 300 * USEC_PER_MSEC, .wait = USEC_PER_SEC, .stop_on_reply = true
};
static const PingOptions vip_ping = { .count = 2, .interval = 300 * USEC_PER_MSEC, .wait = USEC_PER_SEC };

/* 1: something answered, 0: free, <0: the probe could not run */
static int vip_taken(const LocalNics *nics, const IpAddr *vip)
{
        const LocalAddr *src = NULL;
        const LocalNic *nic;
        NeighResult res = {};
        bool up = false;
        int r;

        if (local_nics_owns(nics, vip))
                return 1;
        nic = local_nics_onlink(nics, vip, &src);
        if (nic && nic->has_mac && vip->family == AF_INET) {
                r = arp_probe(nic->index, nic->mac, src->addr.v4, &vip->v4, 1, &vip_neigh, &res);
                return r < 0 ? r : res.n_macs > 0;
        }
        if (nic && nic->has_mac) {
                r = ndp_probe(nic->index, nic->mac, &vip->v6, 1, &vip_neigh, &res);
                if (r < 0)
                        return r;
                if (res.n_macs > 0)
                        return 1;
        }
        r = ping_sweep(vip, 1, &vip_ping, &up);
        return r < 0 ? r : up;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *resp = NULL;
        _cleanup_(local_nics_done) LocalNics nics = {};
        bool dry = ctx->config && ctx->config->dry_run;
        size_t n;
        int r;

        r = step_parse_arg(args[0], &model_verify_vips_request, ret, &req);
        if (r <= 0)
                return r;
        n = model_array_length(req);
        if (!dry && n > 0) {
                r = local_nics_load(NULL, &nics);
                if (r < 0)
                        return step_fail(ret, -1, "failed to verify vips: cannot list the interfaces: %s",
                                         strerror(-r));
        }

        for (size_t i = 0; i < n; i++) {
                json_object *item = json_object_array_get_idx(req, i);
                _cleanup_(json_object_putp) json_object *e = json_new_object();
                const char *vip = strempty(model_get_string(item, "vip"));
                const char *verification = "succeeded";

                if (!e)
                        return -ENOMEM;
                if (!dry) {
                        IpAddr a;

                        /* what nmap -n cannot parse ("" passes the swagger pattern)
                         * it does not scan: no host is up */
                        if (ip_addr_parse(vip, &a) >= 0) {
                                r = vip_taken(&nics, &a);
                                if (r < 0)
                                        return step_fail(ret, -1, "failed to verify vip %s: %s", vip,
                                                         strerror(-r));
                                if (r > 0)
                                        verification = "failed";
                        }
                }
                if (!resp) {
                        resp = json_new_array();
                        if (!resp)
                                return -ENOMEM;
                }
                /* VerifiedVip: verification, vip, vip_type (omitempty) */
                if (json_add_string(e, "verification", verification) < 0 ||
                    json_add_string_nonempty(e, "vip", vip) < 0 ||
                    json_add_string_nonempty(e, "vip_type", model_get_string(item, "vip_type")) < 0 ||
                    json_append(resp, TAKE_PTR(e)) < 0)
                        return -ENOMEM;
        }
        /* an empty request leaves the response a nil slice: null */
        {
                char *text = json_to_string(resp, 0);
                if (!text)
                        return -ENOMEM;
                return step_succeed(ret, text);
        }
}

const StepHandler step_verify_vips = {
        .type = STEP_VERIFY_VIPS,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
