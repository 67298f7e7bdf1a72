/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: hub/hub-*.c hub/infraenv.c hub/agent.c hub/bmac.c hub/ppi.c */
#include <string.h>

#include <json-c/json.h>

#include "agent.h"
#include "bmac.h"
#include "buf.h"
#include "cleanup.h"
#include "fuzz.h"
#include "hub-claim.h"
#include "hub-nmstate.h"
#include "infraenv.h"
#include "jsonutil.h"
#include "ppi.h"

/* The hub's decisions on objects from the cluster and the service, which
 * are outside input: a JSON document {"object", "secret", "cd", "nmstate":
 * [...], "service", "candidates", "hosts", "host", "infraenv", "agent",
 * "ppi", "bmh", "text"} feeds each controller's decide once (every field
 * may be anything), and the parsers of service text (inventory, iPXE
 * script, static network config, times, claim markers). A decision may
 * refuse, never crash. */

static json_object *field(json_object *in, const char *k)
{
        return json_object_get(json_get(in, k));
}

static void results(HubObserved *o, json_object *in)
{
        json_object *r = json_get(in, "results");

        if (!json_object_is_type(r, json_type_object))
                return;
        json_object_object_foreach (r, k, v) {
                (void)hub_call_results_add(&o->results, k, json_object_is_type(v, json_type_null) ? -EIO : 0,
                                           json_object_is_type(v, json_type_null) ? 500 : 200,
                                           json_object_get(v), "x");
        }
}

static void run(const HubControllerType *t, HubObserved *o)
{
        _cleanup_hub_plan_ HubPlan p = {};

        o->now = 1790000000ULL * 1000000ULL;
        o->ns = strdup("ns");
        o->name = strdup("name");
        (void)t->decide(o, &p);
        if (t->observed_done)
                t->observed_done(o);
        hub_observed_done(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(json_object_putp) json_object *in = NULL;
        const char *text;

        if (size > 1 << 20 || json_parse((const char *)data, size, BUF_MAX_JSON_DOC, &in, NULL) < 0 ||
            !json_object_is_type(in, json_type_object))
                return 0;
        {
                InfraEnvObserved o = { .image_type = "minimal-iso",
                                       .service_url = "http://s",
                                       .identity = "me" };
                json_object *nm = json_get(in, "nmstate");
                size_t n = hub_json_array_length(nm);

                o.base.object = field(in, "object");
                o.secret = field(in, "secret");
                o.cd = field(in, "cd");
                o.cd_error = o.cd ? 0 : -ENOENT;
                o.cd_message = strdup("not found");
                o.nmstate = calloc(n + 1, sizeof(json_object *));
                for (size_t i = 0; o.nmstate && i < n; i++)
                        o.nmstate[o.n_nmstate++] = json_object_get(json_object_array_get_idx(nm, i));
                o.infraenv_read = json_get(in, "service") != NULL;
                o.infraenv = (HubCallResult){ .status = 200, .body = field(in, "service") };
                o.searched = json_get(in, "candidates") != NULL;
                o.candidates = (HubCallResult){ .status = 200, .body = field(in, "candidates") };
                o.hosts_read = json_get(in, "hosts") != NULL;
                o.hosts = (HubCallResult){ .status = 200, .body = field(in, "hosts") };
                results(&o.base, in);
                run(&hub_infraenv_controller, &o.base);
        }
        {
                AgentObserved o = {};

                o.base.object = field(in, "agent");
                o.host = field(in, "host");
                o.infraenv = field(in, "infraenv");
                o.infra_env_id = strdup("ie");
                o.old_infraenv = field(in, "object");
                results(&o.base, in);
                if (o.host && !o.infraenv)
                        o.infraenv = json_object_new_object();
                run(&hub_agent_controller, &o.base);
        }
        {
                BmacObserved o = { .cooldown = 60 * USEC_PER_SEC,
                                   .converged = json_get(in, "converged") != NULL };

                o.base.object = field(in, "bmh");
                o.agent = field(in, "agent");
                o.infraenv = field(in, "infraenv");
                o.ppi = field(in, "ppi");
                run(&hub_bmac_controller, &o.base);
        }
        {
                PpiObserved o = { .cooldown = 60 * USEC_PER_SEC };

                o.base.object = field(in, "ppi");
                o.infraenv = field(in, "infraenv");
                o.bmh = field(in, "bmh");
                run(&hub_ppi_controller, &o.base);
        }
        text = json_get_string(in, "text");
        if (text) {
                _cleanup_(json_object_putp) json_object *inv = NULL, *list = NULL;
                _cleanup_free_ char *k = NULL, *i = NULL, *r = NULL, *holder = NULL, *yaml = NULL;
                usec_t t;

                (void)agent_inventory_status(text, &inv);
                (void)infraenv_parse_ipxe(text, &k, &i, &r);
                (void)hub_nmstate_from_service(text, &list);
                (void)hub_parse_time(text, &t);
                (void)hub_claim_parse_marker(text, &t, &holder);
                (void)hub_nmstate_yaml(in, &yaml);
        }
        return 0;
}
