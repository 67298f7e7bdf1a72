/* SPDX-License-Identifier: Apache-2.0 */
/*
 * domain-resolution: resolve the cluster's names (api, api-int, *.apps,
 * the wildcard probes, the release registry) with the host's resolver.
 *
 * Argument: DomainResolutionRequest {"domains":[{"domain_name":...}]}; a
 * domain without domain_name gives "Every domain in a domain request must
 * have a domain name field" and exit -1. Output: DomainResolutionResponse,
 * one entry per domain in request order:
 *   {"cnames":[...],"domain_name":...,"ipv4_addresses":[...],"ipv6_addresses":[...]}
 * The address lists are always arrays ([] for a name that does not exist,
 * or whose lookup failed: the Go agent logs and reports it empty). cnames
 * holds what net.LookupCNAME gives, as the Go agent adds it when not
 * empty: the canonical name, i.e. the end of the CNAME chain with a
 * trailing dot, or the name itself ("name.") when it has no CNAME; []
 * when the name does not resolve. Resolution is resolver.c (c-ares:
 * /etc/hosts, /etc/resolv.conf), the same in the static build.
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "resolver.h"
#include "step-util.h"
#include "strutil.h"

#define RESOLVE_TIMEOUT (15 * USEC_PER_SEC)
#define RESOLVE_THREADS 4

typedef struct Lookup {
        const char *name;
        ResolveResult res;
        int error;
} Lookup;

static void lookup_one(size_t i, void *userdata)
{
        Lookup *l = (Lookup *)userdata + i;
        _cleanup_free_ char *err = NULL;

        l->error = resolve_host(l->name, RESOLVE_TIMEOUT, &l->res, &err);
        if (l->error < 0)
                log_error("error occurred during domain resolution of %s: %s", l->name, strna(err));
}

static json_object *resolution(const Lookup *l)
{
        _cleanup_(json_object_putp) json_object *e = json_new_object();
        bool ok = l->error >= 0 && !l->res.not_found;
        char *empty[] = { NULL };
        char *cname[] = { l->res.canonical, NULL };

        /* DomainResolutionResponseDomain, alphabetical; domain_name required */
        if (!e || json_add(e, "cnames", json_new_strv(ok && l->res.canonical ? cname : empty)) < 0 ||
            json_add_string(e, "domain_name", l->name) < 0 ||
            json_add(e, "ipv4_addresses", json_new_strv(ok ? l->res.ipv4 : empty)) < 0 ||
            json_add(e, "ipv6_addresses", json_new_strv(ok ? l->res.ipv6 : empty)) < 0)
                return NULL;
        return TAKE_PTR(e);
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *resp = NULL, *list = NULL;
        _cleanup_free_ Lookup *lookups = NULL;
        json_object *domains;
        size_t n;
        int r;

        (void)ctx;
        r = step_parse_arg(args[0], &model_domain_resolution_request, ret, &req);
        if (r <= 0)
                return r;
        domains = model_get(req, "domains");
        n = model_array_length(domains);
        lookups = calloc(MAX(n, (size_t)1), sizeof(Lookup));
        if (!lookups)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                lookups[i].name = model_get_string(json_object_array_get_idx(domains, i), "domain_name");
                if (!lookups[i].name)
                        return step_fail(ret, -1,
                                         "Every domain in a domain request must have a domain name field");
        }

        parallel_for(n, RESOLVE_THREADS, lookup_one, lookups);

        resp = json_new_object();
        list = json_new_array();
        r = resp && list ? 0 : -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = json_append(list, resolution(&lookups[i]));
        for (size_t i = 0; i < n; i++)
                resolve_result_done(&lookups[i].res);
        if (r < 0 || json_add(resp, "resolutions", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        return step_succeed_json(ret, resp);
}

const StepHandler step_domain_resolution = {
        .type = STEP_DOMAIN_RESOLUTION,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
