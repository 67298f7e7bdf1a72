/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: hub/hub-controllers.c hub/core/hub-*.c hub/controllers/[a-z]*.c */
#include <string.h>

#include <json-c/json.h>

#include "agent-install.h"
#include "agent.h"
#include "bmac.h"
#include "capi-binding.h"
#include "capi-bootstrap.h"
#include "capi-controlplane.h"
#include "buf.h"
#include "cleanup.h"
#include "cluster.h"
#include "fuzz.h"
#include "hub-claim.h"
#include "hub-links.h"
#include "hub-names.h"
#include "hub-nmstate.h"
#include "hub-service.h"
#include "hub-text.h"
#include "infraenv.h"
#include "jsonutil.h"
#include "ppi.h"

/* The hub's decisions on objects from the cluster and the service, which
 * are outside input: a JSON document {"object", "secret", "cd", "nmstate":
 * [...], "service", "candidates", "hosts", "host", "infraenv", "agent",
 * "ppi", "bmh", "aci", "image_set", "config_maps": [...], "agents": [...],
 * "cluster", "manifests", "kubeconfig", "node", "csrs", "versions", "api",
 * "oacp", "capi_cluster", "machines": [...], "template", "oac", "machine",
 * "text"} feeds each controller's decide once (every field may be anything),
 * and the parsers of service text (inventory, iPXE script, static network
 * config, times, claim markers, the service's URLs, the inventory
 * annotation, bounded texts, release tags and labels, the service's offered
 * releases, the refusals that show its API). A decision may refuse, never
 * crash. */

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

static HubRef ref(json_object *in, const char *k)
{
        json_object *v = json_get(in, k);

        return v ? (HubRef){ .object = json_object_get(v) }
                 : (HubRef){ .error = -ENOENT, .message = strdup("not found") };
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
                InfraEnvObserved o = { .image_type = "minimal-iso", .identity = "me" };
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
                o.install.cd = ref(in, "cd");
                o.install.aci = field(in, "aci");
                o.install.token_secret = ref(in, "secret");
                o.install.spoke_read = json_get(in, "kubeconfig") != NULL;
                o.install.spoke_kubeconfig = o.install.spoke_read ? strdup("kubeconfig") : NULL;
                o.install.spoke_node = field(in, "node");
                o.install.spoke_csrs = field(in, "csrs");
                results(&o.base, in);
                if (o.host && !o.infraenv)
                        o.infraenv = json_object_new_object();
                run(&hub_agent_controller, &o.base);
        }
        {
                ClusterObserved o = { .identity = "me" };
                json_object *cms = json_get(in, "config_maps"), *agents = json_get(in, "agents");
                size_t n_cms = hub_json_array_length(cms), n_agents = hub_json_array_length(agents);

                o.base.object = field(in, "object");
                o.aci = field(in, "aci");
                o.secret = ref(in, "secret");
                o.image_set = ref(in, "image_set");
                o.ca_secret = ref(in, "secret");
                o.config_maps = calloc(n_cms + 1, sizeof(HubRef));
                for (size_t i = 0; o.config_maps && i < n_cms; i++)
                        o.config_maps[o.n_config_maps++] =
                                (HubRef){ .object = json_object_get(json_object_array_get_idx(cms, i)) };
                o.agents = calloc(n_agents + 1, sizeof(json_object *));
                o.agent_infraenvs = calloc(n_agents + 1, sizeof(json_object *));
                for (size_t i = 0; o.agents && o.agent_infraenvs && i < n_agents; i++) {
                        o.agents[i] = json_object_get(json_object_array_get_idx(agents, i));
                        o.agent_infraenvs[i] = field(in, "infraenv");
                        o.n_agents++;
                }
                o.kubeconfig_secret = ref(in, "kubeconfig");
                o.password_secret = ref(in, "secret");
                o.cluster_read = json_get(in, "cluster") != NULL;
                o.cluster = (HubCallResult){ .status = 200, .body = field(in, "cluster") };
                o.searched = json_get(in, "candidates") != NULL;
                o.candidates = (HubCallResult){ .status = 200, .body = field(in, "candidates") };
                o.manifests_read = json_get(in, "manifests") != NULL;
                o.manifests = (HubCallResult){ .status = 200, .body = field(in, "manifests") };
                {
                        int64_t api = 0;

                        (void)json_get_int64(in, "api", &api);
                        o.api = (HubServiceApi)((uint64_t)api % _HUB_SERVICE_API_MAX);
                }
                results(&o.base, in);
                run(&hub_cd_controller, &o.base);
        }
        {
                AciObserved o = {};

                o.base.object = field(in, "aci");
                o.cd = field(in, "cd");
                o.cd_error = o.cd ? 0 : -ENOENT;
                run(&hub_aci_controller, &o.base);
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
        {
                /* the Cluster API provider (--capi) */
                ControlPlaneObserved o = { .image_type = "minimal-iso", .readyz = -ENOENT };
                json_object *machines = json_get(in, "machines"), *workers = json_get(in, "workers"),
                            *mds = json_get(in, "machine_deployments");

                o.base.object = field(in, "oacp");
                o.cluster = field(in, "capi_cluster");
                o.secret = ref(in, "secret");
                o.infra_template = ref(in, "template");
                o.kubeconfig = ref(in, "kubeconfig");
                o.cluster_read = json_get(in, "cluster") != NULL;
                o.service_cluster = (HubCallResult){ .status = 200, .body = field(in, "cluster") };
                o.hosts_read = json_get(in, "hosts") != NULL;
                o.hosts = (HubCallResult){ .status = 200, .body = field(in, "hosts") };
                o.machines = calloc(hub_json_array_length(machines) + 1, sizeof(json_object *));
                for (size_t i = 0; o.machines && i < hub_json_array_length(machines); i++)
                        o.machines[o.n_machines++] = json_object_get(json_object_array_get_idx(machines, i));
                /* the day-1 workers, as the observer keeps them */
                o.workers = calloc(hub_json_array_length(workers) + 1, sizeof(json_object *));
                for (size_t i = 0; o.workers && i < hub_json_array_length(workers); i++) {
                        json_object *m = json_object_array_get_idx(workers, i);

                        if (capi_worker_machine(m, "c"))
                                o.workers[o.n_workers++] = json_object_get(m);
                }
                for (size_t i = 0; i < hub_json_array_length(mds); i++)
                        o.worker_replicas += capi_worker_replicas(json_object_array_get_idx(mds, i), "c");
                (void)capi_installation_started(o.service_cluster.body);
                /* a day-2 worker joining: the new cluster's CSRs and Nodes */
                o.spoke_csrs = field(in, "spoke_csrs");
                o.spoke_nodes = field(in, "spoke_nodes");
                results(&o.base, in);
                run(&hub_capi_controlplane_controller, &o.base);
        }
        {
                ConfigObserved o = {};

                o.base.object = field(in, "oac");
                o.machine = field(in, "machine");
                o.cluster = field(in, "capi_cluster");
                o.control_plane = field(in, "oacp");
                o.secret = ref(in, "secret");
                results(&o.base, in);
                run(&hub_capi_bootstrap_controller, &o.base);
        }
        {
                json_object *hosts = json_get(in, "hosts");

                for (size_t i = 0; i < hub_json_array_length(hosts); i++) {
                        _cleanup_free_ char *n = capi_host_name(json_object_array_get_idx(hosts, i)),
                                            *st = NULL, *reason = NULL, *msg = NULL;

                        if (capi_host_progress(json_object_array_get_idx(hosts, i), &st, &reason, &msg) < 0)
                                continue;
                }
        }
        text = json_get_string(in, "text");
        if (text) {
                _cleanup_free_ char *ign = NULL;

                (void)capi_ignition_with_hostname(text, "name-0", &ign);
                _cleanup_(json_object_putp) json_object *inv = NULL, *list = NULL;
                _cleanup_free_ char *k = NULL, *i = NULL, *r = NULL, *holder = NULL, *yaml = NULL;
                usec_t t;

                (void)agent_inventory_status(text, &inv);
                (void)infraenv_parse_ipxe(text, &k, &i, &r);
                (void)hub_nmstate_from_service(text, &list);
                (void)hub_parse_time(text, &t);
                (void)hub_claim_parse_marker(text, &t, &holder);
                (void)hub_nmstate_yaml(in, &yaml);
                {
                        _cleanup_free_ char *version = NULL, *arch = NULL, *why = NULL, *key = NULL,
                                            *offered = NULL;
                        _cleanup_(json_object_putp) json_object *cis = NULL;
                        /* a refusal's text, as the service words it */
                        HubCallResult refused = { .error = -EREMOTEIO,
                                                  .status = 400,
                                                  .message = (char *)text,
                                                  .body = json_get(in, "cluster") };
                        char f[64];

                        (void)cd_release_from_image(text, &version, &arch, &why);
                        (void)cd_release_offered(json_get(in, "versions"), text, text, &key, &offered);
                        (void)hub_call_unknown_field(&refused, f, sizeof(f));
                        (void)hub_service_api_learn(HUB_SERVICE_API_UNKNOWN, &refused);
                        refused = (HubCallResult){ .status = 200, .body = json_get(in, "cluster") };
                        (void)hub_service_api_learn(HUB_SERVICE_API_2023, &refused);
                        (void)cd_release_registered(json_get(in, "cluster"), text);
                        cis = json_object_new_object();
                        if (cis && hub_object_set_label(cis, HUB_LABEL_CIS_OPENSHIFT_VERSION, text) >= 0) {
                                free(version);
                                free(arch);
                                free(why);
                                version = arch = why = NULL;
                                (void)cd_release_asked(cis, json_get(in, "control_plane"), &version, &arch,
                                                       &why);
                        }
                }
                {
                        /* the service's URLs, the inventory annotation (a small
                         * limit: trimmed), a bounded text */
                        _cleanup_(hub_link_signer_done) HubLinkSigner s = {};
                        _cleanup_free_ char *ann = NULL, *note = NULL, *b = hub_text_bound(text, 64);

                        if (hub_link_signer_parse(text, &s) >= 0)
                                free(hub_link_events(&s, "infra_env_id", text));
                        (void)agent_inventory_annotation(text, 4096, &ann, &note);
                }
        }
        {
                json_object *csrs = json_get(in, "csrs");

                for (size_t i = 0; i < hub_json_array_length(csrs); i++) {
                        _cleanup_free_ char *why = NULL;

                        (void)agent_csr_kind(json_get(in, "agent"), json_object_array_get_idx(csrs, i),
                                             json_get(in, "node"), &why);
                }
        }
        return 0;
}
