/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "config.h"
#include "cradle-hub.h"
#include "capi-kubeconfig.h"
#include "hub-cache.h"
#include "hub-controller.h"
#include "hub-exec.h"
#include "hub-glue.h"
#include "hub-http.h"
#include "hub-metrics.h"
#include "hub-private.h"
#include "hub-service.h"
#include "jsonutil.h"
#include "kube/kube-events.h"
#include "kube/kube-leader.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"
#include "uuid.h"

/* ---- options ---- */

typedef enum OptType {
        OPT_STRING,
        OPT_STRV,
        OPT_BOOL,
        OPT_DURATION,
        OPT_UINT,
        OPT_DOUBLE,
} OptType;

typedef struct Option {
        const char *name;
        OptType type;
        size_t offset;
        const char *def; /* default as text, or NULL */
        const char *env; /* environment variable giving the default */
        const char *help;
} Option;

#define OPT(n, t, field, d, e, h) \
        { \
                n, t, offsetof(HubOptions, field), d, e, h \
        }

/* sorted by name, as Go's flag package prints them */
static const Option options[] = {
        OPT("approve-csrs-requeue-duration", OPT_DURATION, approve_csrs_requeue, "1m",
            "APPROVE_CSRS_REQUEUE_DURATION",
            "How often a day-2 host joining its cluster is looked at again (its CSRs, its node) until it "
            "is\n"
            "Done."),
        OPT("capi", OPT_BOOL, capi, "false", NULL,
            "Run as the Cluster API bootstrap and control-plane provider for OpenShift: reconcile CAPOA's\n"
            "OpenshiftAssistedConfig and OpenshiftAssistedControlPlane (and the Machines they make) "
            "straight\n"
            "against the service, with no ClusterDeployment, AgentClusterInstall, InfraEnv or Agent.\n"
            "Only that: the assisted-installer controllers (InfraEnv, Agent, ClusterDeployment, ...) do "
            "not\n"
            "run, and the Cluster API and CAPOA CRDs must be installed.\n"
            "WARNING: NEVER run this against objects that cluster-api-provider-openshift-assisted (CAPOA)\n"
            "also reconciles: the two would fight over the same OpenshiftAssistedConfigs and control\n"
            "planes. Run CAPOA or cradle-hub --capi for a namespace, never both."),
        OPT("context", OPT_STRING, kube_context, NULL, NULL,
            "The kubeconfig context to use (default: its current-context)."),
        OPT("converged-flow", OPT_BOOL, converged_flow, "false", "ALLOW_CONVERGED_FLOW",
            "BareMetalHosts boot through their PreprovisioningImage and the bare-metal operator (the "
            "converged\n"
            "flow); false: the hub sets the BareMetalHost's image URL itself (the legacy flow)."),
        OPT("health-probe-bind-address", OPT_STRING, health_probe_bind_address, "127.0.0.1:8081", NULL,
            "The address the probe endpoint binds to: /healthz and /readyz. \":8081\" for every address, "
            "\"0\" to\n"
            "disable."),
        OPT("image-cooldown", OPT_DURATION, image_cooldown, "60s", NULL,
            "How long a new InfraEnv image rests before BareMetalHosts and PreprovisioningImages get it "
            "(the real\n"
            "controllers' InfraEnvImageCooldownPeriod)."),
        OPT("image-type", OPT_STRING, image_type, "minimal-iso", "ISO_IMAGE_TYPE",
            "The image type of the infra-envs the hub registers (full-iso or minimal-iso)."),
        OPT("kubeconfig", OPT_STRING, kubeconfig, NULL, "KUBECONFIG",
            "Paths to a kubeconfig. Only required if out-of-cluster (in-cluster: the pod's service "
            "account)."),
        OPT("kube-api-burst", OPT_UINT, kube_api_burst, "30", NULL,
            "Burst of requests to the Kubernetes API above --kube-api-qps."),
        OPT("kube-api-qps", OPT_DOUBLE, kube_api_qps, "20", NULL,
            "Requests per second to the Kubernetes API, sustained (controller-runtime's default)."),
        OPT("kubeconfig-cert-expiration", OPT_DURATION, kubeconfig_cert_expiration, "24h", NULL,
            "With --capi: the validity asked for the client certificate of a cluster's "
            "<cluster>-kubeconfig\n"
            "Secret, minted through the new cluster's CSR API (kubernetes.io/kube-apiserver-client "
            "signer);\n"
            "at least 10m (the API's minimum)."),
        OPT("kubeconfig-cert-renew-before", OPT_DURATION, kubeconfig_cert_renew_before, "0s", NULL,
            "With --capi: renew that certificate this long before it expires; 0: at half its validity."),
        OPT("leader-elect", OPT_BOOL, leader_elect, "false", NULL,
            "Enable leader election: of several replicas only the holder of a coordination.k8s.io Lease "
            "acts."),
        OPT("leader-election-id", OPT_STRING, leader_election_id, "cradle-hub.agent-install.openshift.io",
            NULL, "The name of the Lease used for leader election."),
        OPT("leader-election-namespace", OPT_STRING, leader_election_namespace, NULL, "POD_NAMESPACE",
            "The namespace of the Lease (default: the pod's namespace, else the kubeconfig's)."),
        OPT("log-level", OPT_STRING, log_level, "info", NULL, "Log level: debug, info, warning, error."),
        OPT("max-concurrent-reconciles", OPT_UINT, max_concurrent_reconciles, "1", NULL,
            "Workers per controller (the real controllers run one)."),
        OPT("metrics-bind-address", OPT_STRING, metrics_bind_address, "127.0.0.1:8080", NULL,
            "The address the metric endpoint binds to: /metrics, Prometheus text. \":8080\" for every "
            "address, \"0\"\n"
            "to disable."),
        OPT("namespace", OPT_STRV, namespaces, NULL, "WATCH_NAMESPACE",
            "A namespace to watch; repeat it for several (WATCH_NAMESPACE: comma-separated). Default: all."),
        OPT("service-ca-file", OPT_STRING, service_ca_file, NULL, NULL,
            "A PEM CA bundle trusted for the service's certificate, in addition to the system's."),
        OPT("service-poll-interval", OPT_DURATION, service_poll_interval, "10s", NULL,
            "How often the service's event feed of each infra-env is read (new hosts, changed hosts)."),
        OPT("service-resync-period", OPT_DURATION, service_resync_period, "2m", NULL,
            "How often each infra-env's whole host list is read again, events or not."),
        OPT("service-timeout", OPT_DURATION, service_timeout, "30s", NULL,
            "The timeout of one call to the service."),
        OPT("service-token-file", OPT_STRING, service_token_file, NULL, NULL,
            "A file holding the token sent to the service as \"Authorization: Bearer\", re-read when it "
            "changes.\n"
            "Default: none (a service with AUTH_TYPE none or local)."),
        OPT("service-url", OPT_STRING, service_url, NULL, "SERVICE_BASE_URL",
            "The base URL of assisted-service (REST mode, ENABLE_KUBE_API=false), e.g.\n"
            "https://assisted-service.multicluster-engine.svc:8090. Required."),
        OPT("sync-period", OPT_DURATION, sync_period, "10h", NULL,
            "How often every watched object is reconciled again even when nothing changed."),
        OPT("watch-filter", OPT_STRING, watch_filter, NULL, NULL,
            "With --capi: reconcile only the control planes and configs labelled\n"
            "cluster.x-k8s.io/watch-filter=VALUE (Cluster API's sharding of objects between provider\n"
            "instances; put it in spec.machineTemplate.metadata.labels too, for the configs a control\n"
            "plane makes). Default: every one."),
};

static const Option *option_find(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (streq(options[i].name, name))
                        return &options[i];
        return NULL;
}

static int option_set(HubOptions *o, const Option *opt, const char *value, bool from_env)
{
        void *p = (uint8_t *)o + opt->offset;
        int r;

        switch (opt->type) {
        case OPT_STRING:
                return free_and_strdup((char **)p, value);
        case OPT_STRV:
                if (from_env) {
                        _cleanup_strv_free_ char **l = NULL;

                        r = strv_split(value, ",", &l);
                        if (r < 0)
                                return r;
                        STRV_FOREACH (s, l) {
                                r = strv_extend((char ***)p, strstrip(*s));
                                if (r < 0)
                                        return r;
                        }
                        return 0;
                }
                if (isempty(value))
                        return -EINVAL;
                return strv_extend((char ***)p, value);
        case OPT_BOOL:
                return parse_bool_go(value, (bool *)p);
        case OPT_DURATION:
                return parse_go_duration(value, (usec_t *)p);
        case OPT_UINT:
                return safe_atou(value, (unsigned *)p);
        case OPT_DOUBLE:
                r = safe_atod(value, (double *)p);
                if (r >= 0 && *(double *)p <= 0)
                        return -ERANGE;
                return r;
        }
        return -EINVAL;
}

static void options_done(HubOptions *o)
{
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                void *p = (uint8_t *)o + options[i].offset;

                if (options[i].type == OPT_STRING) {
                        free(*(char **)p);
                        *(char **)p = NULL;
                } else if (options[i].type == OPT_STRV) {
                        strv_free(*(char ***)p);
                        *(char ***)p = NULL;
                }
        }
}

/* ---- the hub ---- */

struct CradleHub {
        HubOptions opts;
        bool set[ELEMENTSOF(options)];
        HubConfig config;

        KubeClient *kube;
        HubCache *cache;
        HubService *service;
        HubMetrics *metrics;
        KubeEventRecorder *events;
        HubRefusals *refusals;
        HubContext ctx;
        HubController **controllers;
        size_t n_controllers;
        KubeLeader *leader;
        HubHttp *health_http, *metrics_http;
        char *identity;

        int wake_fd; /* cradle_hub_stop() and a lost lease write here */
        atomic_bool stopping;
        atomic_int exit_code;
        atomic_bool leading;
        atomic_bool running; /* the controllers were started */
        pthread_t starter;
        bool have_starter;
        bool started;
};

const char *cradle_hub_version(void)
{
        return CRADLE_VERSION;
}

int cradle_hub_new(CradleHub **ret)
{
        _cleanup_free_ CradleHub *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        h->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (h->wake_fd < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (options[i].def) {
                        int r = option_set(&h->opts, &options[i], options[i].def, false);

                        if (r < 0) {
                                close(h->wake_fd);
                                return r;
                        }
                }
        *ret = TAKE_PTR(h);
        return 0;
}

static void wake(CradleHub *h)
{
        uint64_t one = 1;
        int saved = errno;

        (void)!write(h->wake_fd, &one, sizeof(one));
        errno = saved;
}

void cradle_hub_stop(CradleHub *h)
{
        if (!h)
                return;
        atomic_store(&h->stopping, true);
        /* lib/kube's watches end at once only through it */
        stop_request();
        wake(h);
}

static void teardown(CradleHub *h)
{
        atomic_store(&h->stopping, true);
        if (h->have_starter) {
                (void)pthread_join(h->starter, NULL);
                h->have_starter = false;
        }
        if (h->service)
                hub_service_stop(h->service);
        for (size_t i = 0; i < h->n_controllers; i++)
                hub_controller_stop(h->controllers[i]);
        if (h->leader)
                kube_leader_stop(h->leader);
        h->health_http = hub_http_stop(h->health_http);
        h->metrics_http = hub_http_stop(h->metrics_http);
        if (h->cache)
                hub_cache_stop(h->cache);
}

CradleHub *cradle_hub_free(CradleHub *h)
{
        if (!h)
                return NULL;
        teardown(h);
        for (size_t i = 0; i < h->n_controllers; i++)
                hub_controller_free(h->controllers[i]);
        free(h->controllers);
        kube_leader_free(h->leader);
        hub_cache_free(h->cache);
        hub_service_free(h->service);
        kube_event_recorder_free(h->events);
        hub_refusals_free(h->refusals);
        kube_client_free(h->kube);
        hub_metrics_free(h->metrics);
        options_done(&h->opts);
        free(h->config.image_type);
        free(h->config.watch_filter);
        free(h->identity);
        close(h->wake_fd);
        free(h);
        return NULL;
}

int cradle_hub_set_option(CradleHub *h, const char *name, const char *value, char **reterr)
{
        const Option *opt = option_find(name);
        size_t idx;
        int r;

        if (!opt) {
                if (reterr)
                        *reterr = strdup_printf("unknown option '%s'", name);
                return -ENOENT;
        }
        if (h->started)
                return -EBUSY;
        idx = (size_t)(opt - options);
        /* the first explicit value replaces the default list */
        if (opt->type == OPT_STRV && !h->set[idx]) {
                strv_free(*(char ***)((uint8_t *)&h->opts + opt->offset));
                *(char ***)((uint8_t *)&h->opts + opt->offset) = NULL;
        }
        r = option_set(&h->opts, opt, value, false);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("invalid value \"%s\" for --%s: %s", strempty(value), name,
                                                opt->type == OPT_DURATION ? "not a duration (10s, 2m, 1h30m)"
                                                : opt->type == OPT_BOOL   ? "not a boolean"
                                                : opt->type == OPT_UINT || opt->type == OPT_DOUBLE
                                                        ? "not a number"
                                                        : strerror(-r));
                return -EINVAL;
        }
        h->set[idx] = true;
        return 0;
}

void cradle_hub_print_options(FILE *f)
{
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                const Option *o = &options[i];
                const char *arg = o->type == OPT_BOOL       ? ""
                                  : o->type == OPT_DURATION ? " duration"
                                  : o->type == OPT_UINT     ? " int"
                                  : o->type == OPT_DOUBLE   ? " float"
                                                            : " string";
                _cleanup_free_ char *help = str_replace_all(o->help, "\n", "\n        ");

                fprintf(f, "  --%s%s\n        %s", o->name, arg, help ? help : o->help);
                if (o->def && !(o->type == OPT_BOOL && streq(o->def, "false")))
                        fprintf(f, " (default %s%s%s)", o->type == OPT_STRING ? "\"" : "", o->def,
                                o->type == OPT_STRING ? "\"" : "");
                if (o->env)
                        fprintf(f, "\n        Environment: %s.", o->env);
                fputc('\n', f);
        }
}

int cradle_hub_parse_args(CradleHub *h, int argc, char **argv, char **reterr)
{
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *name, *eq;
                _cleanup_free_ char *n = NULL;
                const Option *opt;
                const char *value;
                int r;

                if (streq(a, "--"))
                        break;
                if (a[0] != '-' || a[1] == 0) {
                        if (reterr)
                                *reterr = strdup_printf("unexpected argument '%s'", a);
                        return -EINVAL;
                }
                name = a + (a[1] == '-' ? 2 : 1);
                if (streq(name, "h") || streq(name, "help"))
                        return 0;
                eq = strchr(name, '=');
                n = eq ? strndup(name, (size_t)(eq - name)) : strdup(name);
                if (!n)
                        return -ENOMEM;
                opt = option_find(n);
                if (!opt) {
                        if (reterr)
                                *reterr = strdup_printf("flag provided but not defined: -%s", n);
                        return -EINVAL;
                }
                if (eq)
                        value = eq + 1;
                else if (opt->type == OPT_BOOL)
                        value = "true";
                else if (i + 1 < argc)
                        value = argv[++i];
                else {
                        if (reterr)
                                *reterr = strdup_printf("flag needs an argument: -%s", n);
                        return -EINVAL;
                }
                r = cradle_hub_set_option(h, n, value, reterr);
                if (r < 0)
                        return r;
        }
        return 1;
}

/* ---- glue between the poller, the cache and the controllers ---- */

static int tracked_infra_envs(char ***ret, void *userdata)
{
        return hub_tracked_ids(((CradleHub *)userdata)->cache, HUB_KIND_INFRAENV, HUB_ANNOTATION_INFRAENV_ID,
                               ret);
}

static int tracked_clusters(char ***ret, void *userdata)
{
        return hub_tracked_ids(((CradleHub *)userdata)->cache, HUB_KIND_CLUSTERDEPLOYMENT,
                               HUB_ANNOTATION_CLUSTER_ID, ret);
}

static void enqueue_keys(CradleHub *h, const char *controller, char **keys)
{
        HubController *c = hub_context_controller(&h->ctx, controller);

        if (c)
                STRV_FOREACH (k, keys)
                        (void)hub_controller_enqueue(c, *k);
}

static void cluster_changed(const char *cluster_id, void *userdata)
{
        CradleHub *h = userdata;
        _cleanup_strv_free_ char **keys = NULL;

        if (hub_cache_index_keys(h->cache, HUB_KIND_CLUSTERDEPLOYMENT, HUB_INDEX_CD_CLUSTER_ID, cluster_id,
                                 &keys) >= 0)
                enqueue_keys(h, "clusterdeployment", keys);
}

static void host_changed(const char *infra_env_id, const char *host_id, void *userdata)
{
        CradleHub *h = userdata;
        _cleanup_strv_free_ char **agents = NULL, **cds = NULL;

        if (hub_host_changed_keys(h->cache, h->service, infra_env_id, host_id, &agents, &cds) < 0)
                return;
        enqueue_keys(h, "agent", agents);
        enqueue_keys(h, "clusterdeployment", cds);
}

static void infra_env_changed(const char *infra_env_id, void *userdata)
{
        CradleHub *h = userdata;
        _cleanup_strv_free_ char **keys = NULL;

        if (hub_cache_index_keys(h->cache, HUB_KIND_INFRAENV, HUB_INDEX_INFRAENV_ID, infra_env_id, &keys) >=
            0)
                enqueue_keys(h, "infraenv", keys);
}

/* ---- probes and metrics ---- */

static void serve(const char *path, int *ret_status, char **ret_body, const char **ret_content_type,
                  void *userdata)
{
        CradleHub *h = userdata;

        *ret_content_type = "text/plain; charset=utf-8";
        if (streq(path, "/healthz") || streq(path, "/livez")) {
                *ret_status = 200;
                *ret_body = strdup("ok\n");
        } else if (streq(path, "/readyz")) {
                bool ready = h->cache && hub_cache_synced(h->cache);

                *ret_status = ready ? 200 : 503;
                *ret_body = strdup(ready ? "ok\n" : "informers not synced\n");
        } else if (streq(path, "/metrics")) {
                *ret_content_type = "text/plain; version=0.0.4; charset=utf-8";
                if (hub_metrics_render(h->metrics, ret_body) < 0) {
                        *ret_status = 500;
                        *ret_body = NULL;
                } else
                        *ret_status = 200;
        } else {
                *ret_status = 404;
                *ret_body = strdup("404 page not found\n");
        }
}

static void collect_leader(HubMetrics *m, void *userdata)
{
        CradleHub *h = userdata;
        _cleanup_free_ char *l = hub_metrics_label("name", h->opts.leader_election_id);

        if (l && h->opts.leader_elect)
                hub_metrics_set(m, "leader_election_master_status", l, atomic_load(&h->leading) ? 1 : 0);
}

/* ---- leader election ---- */

static void on_started_leading(void *userdata)
{
        CradleHub *h = userdata;

        log_info("acquired the lease %s/%s", h->opts.leader_election_namespace, h->opts.leader_election_id);
        atomic_store(&h->leading, true);
}

static void on_stopped_leading(void *userdata)
{
        CradleHub *h = userdata;

        atomic_store(&h->leading, false);
        if (atomic_load(&h->stopping))
                return;
        log_error("lost the lease %s/%s, stopping", h->opts.leader_election_namespace,
                  h->opts.leader_election_id);
        atomic_store(&h->exit_code, -ENOLCK);
        atomic_store(&h->stopping, true);
        wake(h);
}

/* Starts the poller and the controllers once the cache synced and, with
 * leader election, the lease is held. */
static void *starter_thread(void *p)
{
        CradleHub *h = p;
        bool told = false;
        int r;

        while (!atomic_load(&h->stopping)) {
                if (hub_cache_synced(h->cache) && (!h->opts.leader_elect || atomic_load(&h->leading)))
                        break;
                if (!told && hub_cache_synced(h->cache) && h->opts.leader_elect) {
                        log_info("waiting for the lease %s/%s", h->opts.leader_election_namespace,
                                 h->opts.leader_election_id);
                        told = true;
                }
                (void)usleep(50 * 1000);
        }
        if (atomic_load(&h->stopping))
                return NULL;
        /* from now on no other replica acts: a claim marker of another
         * holder older than this is a predecessor's (hub-claim.h) */
        h->ctx.active_since = now_usec(CLOCK_REALTIME);
        r = hub_service_start(h->service, &(HubServiceCallbacks){ .tracked_infra_envs = tracked_infra_envs,
                                                                  .host_changed = host_changed,
                                                                  .infra_env_changed = infra_env_changed,
                                                                  .tracked_clusters = tracked_clusters,
                                                                  .cluster_changed = cluster_changed,
                                                                  .userdata = h });
        for (size_t i = 0; r >= 0 && i < h->n_controllers; i++)
                r = hub_controller_start(h->controllers[i]);
        if (r < 0) {
                log_error_errno(r, "cannot start the controllers: %m");
                atomic_store(&h->exit_code, r);
                atomic_store(&h->stopping, true);
                wake(h);
                return NULL;
        }
        atomic_store(&h->running, true);
        log_info("controllers started");
        return NULL;
}

static char *default_identity(void)
{
        char host[256] = "", id[UUID_STRING_MAX];

        if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
                snprintf(host, sizeof(host), "cradle-hub");
        uuid_random(id);
        return strdup_printf("%s_%s", host, id);
}

int cradle_hub_start(CradleHub *h, char **reterr)
{
        _cleanup_free_ char *err = NULL;
        int r, level;

        if (h->started)
                return -EALREADY;
        h->started = true;
        /* environment defaults for what the command line did not set */
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                const char *v = options[i].env ? getenv(options[i].env) : NULL;

                if (h->set[i] || isempty(v))
                        continue;
                if (options[i].type == OPT_STRV) {
                        strv_free(*(char ***)((uint8_t *)&h->opts + options[i].offset));
                        *(char ***)((uint8_t *)&h->opts + options[i].offset) = NULL;
                }
                r = option_set(&h->opts, &options[i], v, true);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("invalid value \"%s\" in $%s", v, options[i].env);
                        return -EINVAL;
                }
        }
        level = log_level_from_string(h->opts.log_level);
        if (level < 0) {
                if (reterr)
                        *reterr = strdup_printf("invalid log level '%s'", h->opts.log_level);
                return -EINVAL;
        }
        log_set_max_level(level);
        if (isempty(h->opts.service_url)) {
                if (reterr)
                        *reterr = strdup("no service URL: give --service-url (or SERVICE_BASE_URL)");
                return -EINVAL;
        }
        h->config.image_type = strdup(h->opts.image_type);
        h->config.converged_flow = h->opts.converged_flow;
        h->config.image_cooldown = h->opts.image_cooldown;
        h->config.approve_csrs_requeue = h->opts.approve_csrs_requeue;
        if (h->opts.kubeconfig_cert_expiration < CAPI_KUBECONFIG_MIN_EXPIRATION) {
                if (reterr)
                        *reterr = strdup("--kubeconfig-cert-expiration must be at least 10m (the CSR API's "
                                         "least expirationSeconds)");
                return -EINVAL;
        }
        if (h->opts.kubeconfig_cert_renew_before >= h->opts.kubeconfig_cert_expiration) {
                if (reterr)
                        *reterr = strdup("--kubeconfig-cert-renew-before must be shorter than "
                                         "--kubeconfig-cert-expiration");
                return -EINVAL;
        }
        h->config.kubeconfig_cert_expiration = h->opts.kubeconfig_cert_expiration;
        h->config.kubeconfig_cert_renew_before = h->opts.kubeconfig_cert_renew_before;
        if (!isempty(h->opts.watch_filter)) {
                if (!h->opts.capi) {
                        if (reterr)
                                *reterr = strdup(
                                        "--watch-filter filters the Cluster API kinds: give --capi too");
                        return -EINVAL;
                }
                h->config.watch_filter = strdup(h->opts.watch_filter);
                if (!h->config.watch_filter)
                        return -ENOMEM;
        }
        h->identity = default_identity();
        if (!h->config.image_type || !h->identity)
                return -ENOMEM;

        r = hub_metrics_new(&h->metrics);
        if (r < 0)
                return r;
        (void)hub_metrics_describe(
                h->metrics, "leader_election_master_status", HUB_METRIC_GAUGE,
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                "backup, 1 indicates master. 'name' is the string used to identify the lease.");
        (void)hub_metrics_add_collector(h->metrics, collect_leader, h);

        {
                _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;

                r = kube_config_load_default(h->opts.kubeconfig, h->opts.kube_context, &cfg, &err);
                if (r >= 0)
                        r = kube_client_new(cfg,
                                            &(KubeClientOptions){ .qps = h->opts.kube_api_qps,
                                                                  .burst = h->opts.kube_api_burst,
                                                                  .user_agent = "cradle-hub/" CRADLE_VERSION,
                                                                  .field_manager = "cradle-hub",
                                                                  .timeout = h->opts.service_timeout },
                                            &h->kube, &err);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("cannot connect to the cluster: %s", strna(err));
                        return r;
                }
        }
        r = hub_service_new(&(HubServiceOptions){ .url = h->opts.service_url,
                                                  .ca_file = h->opts.service_ca_file,
                                                  .token_file = h->opts.service_token_file,
                                                  .timeout = h->opts.service_timeout,
                                                  .poll_interval = h->opts.service_poll_interval,
                                                  .resync_period = h->opts.service_resync_period },
                            h->metrics, &h->service, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("cannot set up the service client: %s", strna(err));
                return r;
        }
        r = kube_event_recorder_new(h->kube, "cradle-hub", NULL, &h->events);
        if (r < 0)
                return r;
        r = hub_refusals_new(&h->refusals);
        if (r < 0)
                return r;
        r = hub_cache_new(h->kube, h->opts.namespaces, h->opts.sync_period, &h->cache);
        if (r < 0)
                return r;
        hub_cache_want_cluster_api(h->cache, h->opts.capi);
        r = hub_cache_resolve(h->cache, reterr);
        if (r < 0)
                return r;

        h->ctx = (HubContext){
                .kube = h->kube,
                .cache = h->cache,
                .service = h->service,
                .metrics = h->metrics,
                .events = h->events,
                .refusals = h->refusals,
                .config = &h->config,
                .identity = h->identity,
        };
        h->controllers = calloc(hub_n_controller_types + 1, sizeof(HubController *));
        if (!h->controllers)
                return -ENOMEM;
        h->ctx.controllers = h->controllers;
        /* every controller exists before any sets up its watches: a watch
         * may enqueue another controller's keys */
        for (size_t i = 0; i < hub_n_controller_types; i++) {
                const HubControllerType *t = hub_controller_types[i];

                if (hub_kind_info(t->kind)->cluster_api != h->opts.capi)
                        continue;
                if (!hub_cache_has_kind(h->cache, t->kind)) {
                        log_notice("%s controller not started: the cluster does not serve %s", t->name,
                                   hub_kind_to_string(t->kind));
                        continue;
                }
                r = hub_controller_new(t, &h->ctx, h->opts.max_concurrent_reconciles,
                                       &h->controllers[h->n_controllers]);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("cannot set up the %s controller: %s", t->name,
                                                        strerror(-r));
                        return r;
                }
                h->n_controllers++;
                h->ctx.n_controllers = h->n_controllers;
        }
        r = hub_cache_start(h->cache, reterr);
        if (r < 0)
                return r;

        r = hub_http_start(h->opts.health_probe_bind_address, serve, h, &h->health_http, reterr);
        if (r < 0)
                return r;
        if (streq_ptr(h->opts.metrics_bind_address, h->opts.health_probe_bind_address) &&
            !streq_ptr(h->opts.metrics_bind_address, "0")) {
                /* one server answers both */
        } else {
                r = hub_http_start(h->opts.metrics_bind_address, serve, h, &h->metrics_http, reterr);
                if (r < 0)
                        return r;
        }

        if (h->opts.leader_elect) {
                const char *ns = !isempty(h->opts.leader_election_namespace)
                                         ? h->opts.leader_election_namespace
                                         : kube_client_namespace(h->kube);

                r = free_and_strdup(&h->opts.leader_election_namespace, ns);
                if (r < 0)
                        return r;
                r = kube_leader_new(h->kube,
                                    &(KubeLeaderConfig){ .ns = h->opts.leader_election_namespace,
                                                         .name = h->opts.leader_election_id,
                                                         .identity = h->identity,
                                                         .release_on_cancel = true },
                                    &(KubeLeaderCallbacks){ .on_started_leading = on_started_leading,
                                                            .on_stopped_leading = on_stopped_leading,
                                                            .userdata = h },
                                    &h->leader);
                if (r < 0)
                        return r;
                r = kube_leader_start(h->leader);
                if (r < 0)
                        return r;
        }
        r = -pthread_create(&h->starter, NULL, starter_thread, h);
        if (r < 0)
                return r;
        h->have_starter = true;
        log_info("cradle-hub %s started: service %s, %s", CRADLE_VERSION, h->opts.service_url,
                 h->opts.namespaces ? "watching the namespaces given" : "watching every namespace");
        return 0;
}

int cradle_hub_wait(CradleHub *h)
{
        while (!atomic_load(&h->stopping)) {
                struct pollfd p = { .fd = h->wake_fd, .events = POLLIN };

                if (poll(&p, 1, 1000) < 0 && errno != EINTR)
                        break;
        }
        teardown(h);
        return atomic_load(&h->exit_code);
}

/* For tests and benchmarks in the tree (not exported). */
HubContext *cradle_hub_context(CradleHub *h);
HubContext *cradle_hub_context(CradleHub *h)
{
        return &h->ctx;
}
