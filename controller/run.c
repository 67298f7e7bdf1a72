/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's I/O: start-up, then its duties as tasks on one clock
 * (upstream runs them as goroutines; one at a time is enough here, every
 * duty being a round every few tens of seconds). Each task's round
 * (controller/task-*.c) observes (the service's cluster, the API server's
 * objects), asks the module that decides, and performs the decision; it
 * then says when it runs again.
 */
#include <assert.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assisted/assisted-models.h"
#include "assisted/assisted.h"
#include "assisted/cluster-hosts.h"
#include "assisted/controller-contract.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/abi.h"
#include "controller/config.h"
#include "controller/controller.h"
#include "controller/dns.h"
#include "controller/dry.h"
#include "controller/ending.h"
#include "controller/run.h"
#include "controller/service.h"
#include "fileio.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static const KubeResource resource_proxies =
        KUBE_RESOURCE("config.openshift.io", "v1", "proxies", "Proxy", false);

/* The tasks, in the order they run when due at the same time and finish
 * once the installation is over. */
static const ControllerTask *const tasks_assisted[] = {
        &controller_task_dns, /* dns-default's address, as soon as possible (not in dry run) */
        &controller_task_nodes, /* Joined, Done, Configuring */
        &controller_task_csrs, /* the kubelets' certificate requests */
        &controller_task_finalize, /* the finalizing stages, complete-installation */
        &controller_task_installation, /* the end of the run */
        &controller_task_labels, /* the labels the service asks for, the worker pool paused meanwhile */
        &controller_task_bmhs, /* BareMetalHosts and Machines (baremetal only) */
        &controller_task_reboots, /* NOTIFY_NUM_REBOOTS: reboots_for_node of each host Done */
        &controller_task_logs, /* controller_logs.tar.gz, last: after everything else was said */
};

/* the agent-based installer (abi.h): the service may go away at any time */
static const ControllerTask *const tasks_agent[] = {
        &controller_task_dns,
        &controller_task_nodes,
        &controller_task_csrs, /* until the rendezvous host's kubelet is approved too */
        &controller_task_agent_manifests, /* olm-operator-manifests, not the finalizing stages */
        &controller_task_agent_installation, /* the ClusterVersion and the masters, not the service */
        &controller_task_labels,
        &controller_task_bmhs,
        &controller_task_reboots,
        &controller_task_agent_logs, /* no final upload */
};

/* ... on a single node, which never calls the service */
static const ControllerTask *const tasks_agent_single_node[] = {
        &controller_task_dns,
        &controller_task_agent_manifests,
        &controller_task_agent_installation,
};

static void controller_done(Controller *ctl)
{
        for (size_t i = 0; i < ctl->n_tasks; i++)
                if (ctl->tasks[i]->done)
                        ctl->tasks[i]->done(ctl);
        json_object_put(ctl->last_cluster);
        /* run.c's, whichever tasks ran */
        free(ctl->cluster_name);
        free(ctl->base_dns_domain);
        kube_client_free(ctl->kube);
        dry_cluster_hosts_free(ctl->dry.hosts, ctl->dry.n);
        free(ctl->dry_rebooted);
        assisted_client_free(ctl->svc.client);
}

usec_t controller_after_poll_interval(const ControllerConfig *c)
{
        return c->poll_interval;
}

usec_t controller_after_slow_poll_interval(const ControllerConfig *c)
{
        return c->slow_poll_interval;
}

usec_t controller_after_logs_interval(const ControllerConfig *c)
{
        return c->logs_interval;
}

/* ---- the new cluster: its API server, or the dry run's ------------------------ */

bool controller_dry_run(const Controller *ctl)
{
        return !!ctl->dry.hosts;
}

/* which hosts of the dry run rebooted, now */
static void dry_markers_look(Controller *ctl)
{
        struct stat st;

        for (size_t i = 0; i < ctl->dry.n; i++)
                ctl->dry_rebooted[i] = !isempty(ctl->dry.hosts[i].reboot_marker_path) &&
                                       stat(ctl->dry.hosts[i].reboot_marker_path, &st) == 0;
}

static int dry_status(int r, const KubeResource *res, const char *name, KubeStatus *st)
{
        if (r < 0 && st) {
                st->error = r;
                st->code = r == -ENOENT ? 404 : 0;
                st->message = strdup_printf("dry run: %s %s %s", r == -ENOENT ? "no" : "cannot make",
                                            res->resource, strempty(name));
        }
        return r;
}

int controller_cluster_get(Controller *ctl, const KubeResource *res, const char *ns, const char *name,
                           json_object **ret, KubeStatus *st)
{
        if (!controller_dry_run(ctl))
                return kube_get(ctl->kube, res, ns, name, ret, st);
        dry_markers_look(ctl);
        return dry_status(dry_cluster_get(&ctl->dry, res, ns, name, ret), res, name, st);
}

int controller_cluster_list(Controller *ctl, const KubeResource *res, const char *ns,
                            const KubeListOptions *o, json_object **ret, KubeStatus *st)
{
        if (!controller_dry_run(ctl))
                return kube_list(ctl->kube, res, ns, o, ret, st);
        /* the dry run lists no pods and no certificate requests: the
         * writes that follow them (approvals, pod logs) never happen */
        dry_markers_look(ctl);
        return dry_status(dry_cluster_list(&ctl->dry, res, ns, ret), res, NULL, st);
}

/* Dry run: the hosts file, then the wait for the fake reboot marker
 * (upstream's start is delayed until it exists). */
static int dry_cluster_load(Controller *ctl)
{
        const ControllerConfig *c = ctl->cfg;
        _cleanup_free_ char *data = NULL, *err = NULL;
        struct stat st;
        size_t len = 0;
        int r;

        r = read_full_file(c->dry_cluster_hosts_path, BUF_MAX_JSON_DOC, &data, &len);
        if (r >= 0)
                r = dry_cluster_hosts_parse(data, len, &ctl->dry.hosts, &ctl->dry.n, &err);
        if (r < 0)
                return log_error_errno(r, "dry run: cannot read the cluster hosts %s: %s",
                                       c->dry_cluster_hosts_path, err ? err : strerror(-r));
        ctl->dry_rebooted = calloc(ctl->dry.n + 1, sizeof(bool));
        if (!ctl->dry_rebooted)
                return log_oom();
        ctl->dry.rebooted = ctl->dry_rebooted;
        ctl->dry.openshift_version = c->openshift_version;
        log_info("dry run: the cluster is the %zu hosts of %s, each a Ready node once its reboot marker "
                 "exists",
                 ctl->dry.n, c->dry_cluster_hosts_path);
        if (isempty(c->dry_fake_reboot_marker_path))
                return 0;
        log_info("dry run: waiting for %s", c->dry_fake_reboot_marker_path);
        while (stat(c->dry_fake_reboot_marker_path, &st) < 0)
                if (sleep_usec(c->ready_interval) < 0 || stop_requested())
                        return -ECANCELED;
        return 0;
}

/* ---- start-up -------------------------------------------------------------- */

static int kube_client_for(const ControllerConfig *c, KubeClient **ret)
{
        _cleanup_free_ char *err = NULL;
        const char *path = c->kubeconfig;
        struct stat st;
        int r;

        /* single node: the bootstrap's secrets, so that the controller
         * starts before the node's own credentials work */
        if (isempty(path) && stat(CONTROLLER_SNO_KUBECONFIG, &st) >= 0)
                path = CONTROLLER_SNO_KUBECONFIG;
        if (!isempty(path))
                r = kube_client_new_from_kubeconfig(path, NULL, ret, &err);
        else
                r = kube_client_new_in_cluster(NULL, ret, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to create k8 client %s", strna(err));
        return 0;
}

/* SetProxyEnvVars: the cluster-wide proxy, for the service client (and the
 * commands the controller runs) */
static int proxy_env_set(Controller *ctl)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(json_object_putp) json_object *proxy = NULL;
        static const struct {
                const char *field;
                const char *env;
        } vars[] = {
                { "httpProxy", "HTTP_PROXY" },
                { "httpsProxy", "HTTPS_PROXY" },
                { "noProxy", "NO_PROXY" },
        };
        json_object *status;
        int r;

        r = controller_cluster_get(ctl, &resource_proxies, NULL, "cluster", &proxy, &st);
        if (r < 0)
                return log_error_errno(r, "Failed to set env vars for installer-controller pod: %s",
                                       strna(st.message));
        status = json_get(proxy, "status");
        log_info("Using proxy %s to set env-vars for installer-controller pod",
                 status ? json_object_to_json_string_ext(status, JSON_C_TO_STRING_PLAIN) : "{}");
        for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
                const char *v = json_get_string(status, vars[i].field);
                if (!isempty(v) && setenv(vars[i].env, v, 1) < 0)
                        return log_error_errno(negative_errno(), "cannot set %s: %m", vars[i].env);
        }
        return 0;
}

static int service_client_for(const ControllerConfig *c, AssistedClient **ret)
{
        _cleanup_free_ char *err = NULL;
        AssistedClientOptions o = {
                .url = c->inventory_url,
                .ca_file = isempty(c->ca_cert_path) ? NULL : c->ca_cert_path,
                .insecure = c->skip_cert_verification,
                .token = c->token,
                .retry = HTTP_RETRY_NONE, /* the controller's own rule: service.c */
        };
        int r;

        if (c->skip_cert_verification)
                log_warning("Certificate verification is turned off. This is not recommended in production "
                            "environments");
        r = assisted_client_new(&o, ret, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to create inventory client %s", strna(err));
        return 0;
}

static int ready_event_create(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *ev = json_new_object(), *meta = json_new_object(),
                                                *involved = json_new_object();
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns = ctl->cfg->namespace;
        char now[32];
        int r;

        format_rfc3339_utc(time(NULL), now);
        /* k8s_client.CreateEvent */
        if (!ev || !meta || !involved || json_add_string(meta, "name", CONTROLLER_READY_EVENT) < 0 ||
            json_add_string(meta, "namespace", ns) < 0 || json_add(ev, "metadata", TAKE_PTR(meta)) < 0 ||
            json_add_string(involved, "namespace", ns) < 0 ||
            json_add_string(involved, "name", CONTROLLER_NAME) < 0 ||
            json_add(ev, "involvedObject", TAKE_PTR(involved)) < 0 ||
            json_add_string(ev, "reason", CONTROLLER_READY_EVENT) < 0 ||
            json_add_string(ev, "message", CONTROLLER_READY_MESSAGE) < 0 ||
            json_add_int64(ev, "count", 1) < 0 || json_add_string(ev, "firstTimestamp", now) < 0 ||
            json_add_string(ev, "lastTimestamp", now) < 0 || json_add_string(ev, "type", "Normal") < 0)
                return log_oom();
        if (controller_dry_run(ctl))
                return log_info("dry run: the event %s is not sent anywhere", CONTROLLER_READY_EVENT), 0;
        r = kube_create(ctl->kube, &kube_resource_events, ns, ev, NULL, &st);
        if (r == -EEXIST)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to spawn event: %s", strna(st.message));
        return 0;
}

/* SetReadyState: the service and the API server answer, the Event is
 * there. Returns the cluster, or -ETIMEDOUT. */
static int ready_state(Controller *ctl, usec_t timeout, json_object **ret_cluster)
{
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;

        log_info("Start waiting to be ready");
        for (;;) {
                _cleanup_(json_object_putp) json_object *cluster = NULL, *nodes = NULL;
                _cleanup_kube_status_ KubeStatus st = {};
                _cleanup_free_ char *err = NULL;
                int r;

                r = controller_service_get_cluster(&ctl->svc, false, NULL, &cluster, &err);
                if (r == -ECANCELED)
                        return r;
                if (r < 0)
                        log_warning("Failed to connect to assisted service: %s", strna(err));
                else {
                        log_info("assisted-service is available");
                        r = controller_cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st);
                        if (r < 0)
                                log_warning("Failed to connect to ocp cluster: %s", strna(st.message));
                        else {
                                log_info("kube-apiserver is available");
                                log_info("Sending ready event");
                                r = ready_event_create(ctl);
                        }
                }
                if (r >= 0) {
                        *ret_cluster = TAKE_PTR(cluster);
                        return 0;
                }
                if (now_usec(CLOCK_MONOTONIC) + ctl->cfg->ready_interval > deadline)
                        return -ETIMEDOUT;
                if (sleep_usec(ctl->cfg->ready_interval) < 0)
                        return -ECANCELED;
        }
}

/* ---- the service's hosts ---------------------------------------------------------- */

const ControllerConfig *controller_config(Controller *ctl)
{
        return ctl->cfg;
}

ControllerService *controller_service(Controller *ctl)
{
        return &ctl->svc;
}

KubeClient *controller_kube(Controller *ctl)
{
        return ctl->kube;
}

void controller_operator_failed(Controller *ctl, const char *name)
{
        if (!strv_contains(ctl->failed_operators, name) && strv_extend(&ctl->failed_operators, name) < 0)
                log_oom();
}

int controller_hosts_get(Controller *ctl, ClusterHosts *ret)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        r = controller_service_get_cluster(&ctl->svc, true, NULL, &cluster, &err);
        if (r >= 0)
                r = cluster_hosts_from_cluster(cluster, NULL, ret, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to get node map from the assisted service: %s",
                                       strna(err));
        json_object_put(ctl->last_cluster);
        ctl->last_cluster = json_object_get(cluster);
        return 0;
}

int controller_kubeconfig_noingress(Controller *ctl, const char *dir_name, char **ret_dir, char **ret_path)
{
        _cleanup_free_ char *data = NULL, *err = NULL, *dir = NULL, *path = NULL;
        const char *tmp = getenv("TMPDIR");
        size_t len = 0;
        int r;

        r = controller_service_download(&ctl->svc, "credentials", CONTROLLER_KUBECONFIG_NOINGRESS, &data,
                                        &len, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to download %s: %s", CONTROLLER_KUBECONFIG_NOINGRESS,
                                       strna(err));
        dir = strdup_printf("%s/%s.XXXXXX", isempty(tmp) ? "/tmp" : tmp, dir_name);
        if (!dir || !mkdtemp(dir))
                r = dir ? negative_errno() : -ENOMEM;
        else {
                path = strdup_printf("%s/" CONTROLLER_KUBECONFIG_NOINGRESS, dir);
                r = path ? write_file_atomic(path, data, len, 0600) : -ENOMEM;
                if (r < 0)
                        (void)rmdir(dir);
        }
        explicit_bzero(data, len);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", CONTROLLER_KUBECONFIG_NOINGRESS);
        *ret_dir = TAKE_PTR(dir);
        *ret_path = TAKE_PTR(path);
        return 0;
}

/* ---- the tasks on one clock ------------------------------------------------------ */

static int tasks_run(Controller *ctl)
{
        const ControllerTask *const *tasks = ctl->tasks;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        usec_t due[ELEMENTSOF(tasks_assisted)]; /* CLOCK_MONOTONIC; USEC_INFINITY: finished */
        size_t n = ctl->n_tasks;

        assert(n <= ELEMENTSOF(due));
        for (size_t i = 0; i < n; i++)
                due[i] = now + (tasks[i]->first_delay ? tasks[i]->first_delay(ctl->cfg) : 0);
        log_info("Waiting till all nodes will join and update status to assisted installer");
        log_info("monitor cluster installation status");
        while (ctl->end == INSTALLATION_GOES_ON) {
                size_t next = n;
                usec_t delay;

                for (size_t i = 0; i < n; i++)
                        if (due[i] != USEC_INFINITY && (next == n || due[i] < due[next]))
                                next = i;
                if (next == n)
                        break;
                now = now_usec(CLOCK_MONOTONIC);
                if (due[next] > now && sleep_usec(due[next] - now) < 0)
                        return -ECANCELED;
                if (stop_requested())
                        return -ECANCELED;
                log_debug("task %s", tasks[next]->name);
                delay = tasks[next]->round(ctl);
                due[next] = delay == USEC_INFINITY ? USEC_INFINITY : now_usec(CLOCK_MONOTONIC) + delay;
        }
        return 0;
}

/* ---- the run --------------------------------------------------------------------- */

/* GetInvoker: who rendered the installation's manifests */
static bool agent_installer(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *invoker;

        if (controller_cluster_get(ctl, &kube_resource_configmaps, INSTALL_MANIFESTS_NAMESPACE,
                                   INSTALL_MANIFESTS_NAME, &cm, &st) < 0)
                log_warning("error retrieving %s ConfigMap, cannot determine invoker: %s",
                            INSTALL_MANIFESTS_NAME, strna(st.message));
        invoker = install_invoker(cm);
        if (cm)
                log_info("%s ConfigMap attribute %s = %s", INSTALL_MANIFESTS_NAME,
                         INSTALL_MANIFESTS_INVOKER_KEY, invoker);
        return streq(invoker, INVOKER_AGENT);
}

/* kube-system/cluster-config-v1's install-config; NULL when there is none
 * (logged) */
static char *install_config_get(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        const char *text;

        if (controller_cluster_get(ctl, &kube_resource_configmaps, CLUSTER_CONFIG_NAMESPACE,
                                   CLUSTER_CONFIG_NAME, &cm, &st) < 0) {
                log_warning("error retrieving %s ConfigMap: %s", CLUSTER_CONFIG_NAME, strna(st.message));
                return NULL;
        }
        text = json_get_string(json_get(cm, "data"), CLUSTER_CONFIG_KEY);
        return strdup(strempty(text));
}

/* the agent-based installer without the service: the install-config's platform */
static char *platform_from_install_config(Controller *ctl)
{
        _cleanup_free_ char *yaml = install_config_get(ctl), *err = NULL;
        char *platform = NULL;

        if (!yaml)
                return NULL;
        if (install_config_platform(yaml, strlen(yaml), &platform, &err) < 0) {
                log_warning("error determining platform type from install-config: %s", strna(err));
                return NULL;
        }
        log_info("platform type from install-config: %s", platform);
        return platform;
}

/* RemoveUninitializedTaint; the vSphere credentials from the service's
 * cluster, else (the service gone) from the install-config */
static bool taint_removed(Controller *ctl, json_object *cluster, const char *platform)
{
        bool credentials = false;

        if (ctl->agent_installer && streq_ptr(platform, "vsphere")) {
                if (cluster)
                        credentials = vsphere_credentials_in_cluster(cluster);
                else {
                        _cleanup_free_ char *yaml = install_config_get(ctl);

                        credentials = yaml && vsphere_server_in_install_config(yaml, strlen(yaml));
                }
                if (credentials)
                        log_info("Has valid vSphere credentials: true");
        }
        return uninitialized_taint_removed(platform, ctl->agent_installer, ctl->cfg->openshift_version,
                                           credentials);
}

#define TASKS(t) ctl.tasks = (t), ctl.n_tasks = ELEMENTSOF(t)

int controller_run(const ControllerConfig *c)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_(controller_done) Controller ctl = {
                .cfg = c,
                .svc = { .cluster_id = c->cluster_id, .retry = ASSISTED_RETRY_CONTROLLER },
        };
        _cleanup_free_ char *platform_fallback = NULL;
        const char *platform;
        int r;

        ctl.svc.retry.base_delay = c->retry_delay;
        ctl.svc.retry.max_delay = c->retry_max_delay;

        if (c->dry_run) {
                r = dry_cluster_load(&ctl);
                if (r == -ECANCELED) {
                        log_info("stopped before the dry run's first reboot");
                        return 1;
                }
                if (r < 0)
                        return 1;
        } else if (kube_client_for(c, &ctl.kube) < 0)
                return 1;
        if (proxy_env_set(&ctl) < 0 || service_client_for(c, &ctl.svc.client) < 0)
                return 1;

        ctl.agent_installer = agent_installer(&ctl);
        if (ctl.agent_installer && c->control_plane_count == 1) {
                /* the service ran on this very node, which rebooted into the
                 * cluster: it is never reachable again */
                log_warning("cluster is SNO and invoker = %s, skipping access to assisted-service API",
                            INVOKER_AGENT);
                /* the bootstrap's kubeconfig, or cradle's own --kubeconfig */
                ctl.agent_kubeconfig = isempty(c->kubeconfig) ? CONTROLLER_SNO_KUBECONFIG : c->kubeconfig;
                ctl.agent_expected_nodes = 0;
                TASKS(tasks_agent_single_node);
        } else if (ctl.agent_installer) {
                /* the service runs on the rendezvous host, nearby, until
                 * that host reboots */
                ctl.svc.may_vanish = true;
                r = ready_state(&ctl, c->agent_ready_timeout, &cluster);
                if (r == -ECANCELED) {
                        log_info("stopped before the controller was ready");
                        return 1;
                }
                if (r < 0) {
                        log_warning("SetReadyState timed out fetching cluster from assisted-service, "
                                    "invoker = %s",
                                    INVOKER_AGENT);
                        platform_fallback = platform_from_install_config(&ctl);
                }
                ctl.agent_expected_nodes = c->control_plane_count;
                TASKS(tasks_agent);
        } else {
                r = ready_state(&ctl, c->ready_timeout, &cluster);
                if (r == -ECANCELED) {
                        log_info("stopped before the controller was ready");
                        return 1;
                }
                if (r < 0) {
                        log_error("Failed to retrieve cluster from assisted service");
                        return 1;
                }
                TASKS(tasks_assisted);
        }
        platform = cluster ? json_get_string(json_get(cluster, "platform"), "type") : platform_fallback;
        if (ctl.tasks != tasks_agent_single_node) {
                /* external cloud providers that the fake credentials keep
                 * from initializing the nodes */
                ctl.remove_uninitialized_taint = taint_removed(&ctl, cluster, platform);
                log_info("Remove uninitialized taint: %s",
                         ctl.remove_uninitialized_taint ? "true" : "false");
                ctl.baremetal = cluster && streq_ptr(platform, "baremetal");
                if (!ctl.baremetal)
                        log_info("Cluster platform is not baremetal, skipping BMH");
        }
        /* the router probe's canary URL; without the service, none */
        ctl.cluster_name = strdup(strempty(json_get_string(cluster, "name")));
        ctl.base_dns_domain = strdup(strempty(json_get_string(cluster, "base_dns_domain")));

        r = tasks_run(&ctl);
        if (r == -ECANCELED) {
                log_info("stopped before the installation ended");
                return 1;
        }
        if (ctl.end != INSTALLATION_UNREACHABLE && ctl.tasks != tasks_agent_single_node)
                for (size_t i = 0; i < ctl.n_tasks; i++)
                        if (ctl.tasks[i]->finish)
                                ctl.tasks[i]->finish(&ctl);
        log_info("Finished all");
        return 0;
}

/* ---- the verb -------------------------------------------------------------------- */

static int setup_logging(const ControllerConfig *c)
{
        int r;

        log_setup(CONTROLLER_PROGRAM);
        log_set_max_level(log_level_from_string(c->log_level));
        /* as upstream: stdout, and the text log beside it */
        log_set_default_targets(LOG_TARGET_STDOUT, LOG_TARGET_STDOUT);
        (void)log_set_field("CRADLE_VERB", "controller");
        (void)log_set_field("CLUSTER_ID", c->cluster_id);
        if (!isempty(c->log_file)) {
                r = log_open_file(c->log_file);
                if (r < 0)
                        return log_error_errno(r, "cannot open the log file %s: %m", c->log_file);
        }
        return 0;
}

int controller_main(int argc, char **argv)
{
        _cleanup_free_ char *desc = NULL;
        ControllerConfig c = {};
        int r;

        r = controller_config_parse(argc, argv, &c);
        if (r <= 0)
                return r == 0 ? 0 : r == -EINVAL ? 2 : 1;
        if (setup_logging(&c) < 0) {
                controller_config_done(&c);
                return 1;
        }
        (void)stop_on_signals();

        desc = controller_config_describe(&c);
        log_info("Start running Assisted-controller. Configuration is:\n %s", strna(desc));
        r = controller_run(&c);
        controller_config_done(&c);
        return r;
}
