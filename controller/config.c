/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/controller-contract.h"
#include "cleanup.h"
#include "controller/config.h"
#include "fileio.h"
#include "goflags.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

/* envconfig.Process("myapp", &Options) with ControllerConfig nested in
 * Options: the prefixed key first, the struct tag's name second */
#define ENV(name) "MYAPP_CONTROLLERCONFIG_" name, name

/* a token file larger than this is no token */
#define TOKEN_MAX (64u * 1024)

void controller_config_done(ControllerConfig *c)
{
        char **strs[] = {
                &c->cluster_id,
                &c->inventory_url,
                &c->openshift_version,
                &c->ca_cert_path,
                &c->namespace,
                &c->must_gather_image,
                &c->kubeconfig,
                &c->token_file,
                &c->log_file,
                &c->log_level,
                &c->dry_fake_reboot_marker_path,
                &c->dry_cluster_hosts_path,
                &c->must_gather_dir,
        };

        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                free(*strs[i]);
        erase_and_free(c->token);
        *c = (ControllerConfig){};
}

int controller_token_read(const char *path, const char *env_value, char **ret)
{
        _cleanup_(erase_and_freep) char *data = NULL;
        int r;

        r = read_full_file(path, TOKEN_MAX, &data, NULL);
        if (r == -ENOENT) {
                if (!env_value) {
                        *ret = NULL;
                        return 0;
                }
                data = strdup(env_value);
                if (!data)
                        return -ENOMEM;
        } else if (r < 0)
                return r;
        strstrip(data);
        *ret = TAKE_PTR(data);
        return 0;
}

static const char *bool_text(bool b)
{
        return b ? "true" : "false";
}

char *controller_config_describe(const ControllerConfig *c)
{
        return strdup_printf(
                "cluster-id=%s inventory-url=%s openshift-version=%s skip-cert-verification=%s "
                "ca-cert-path=%s namespace=%s control-plane-count=%d check-cluster-version=%s "
                "must-gather-image=%s notify-num-reboots=%s dry-run=%s dry-fake-reboot-marker-path=%s "
                "dry-cluster-hosts-path=%s pull-secret-token=%s",
                strempty(c->cluster_id), strempty(c->inventory_url), strempty(c->openshift_version),
                bool_text(c->skip_cert_verification), strempty(c->ca_cert_path), strempty(c->namespace),
                c->control_plane_count, bool_text(c->check_cluster_version), strempty(c->must_gather_image),
                bool_text(c->notify_num_reboots), bool_text(c->dry_run),
                strempty(c->dry_fake_reboot_marker_path), strempty(c->dry_cluster_hosts_path),
                c->token ? "<SECRET>" : "");
}

int controller_config_parse(int argc, char **argv, ControllerConfig *ret)
{
        ControllerConfig c = {};
        double ready_interval = 1, ready_timeout = 70 * 60, poll = 30, slow_poll = 60, fetch = 10,
               operators_timeout = 10 * 60 * 60, retry_delay = 2, retry_max_delay = 10,
               logs_interval = 5 * 60, logs_timeout = 70 * 60, dns_interval = 20, deletion_interval = 10,
               reboots_interval = 15, agent_ready_timeout = 5 * 60;
        bool help = false;
        int optind, r;
        const GoFlag flags[] = {
                { "cluster-id", GOFLAG_STRING, &c.cluster_id, NULL, "The cluster id (required)",
                  ENV("CLUSTER_ID") },
                { "inventory-url", GOFLAG_STRING, &c.inventory_url, NULL,
                  "The assisted-service URL, including a scheme and optionally a port (required)",
                  ENV("INVENTORY_URL") },
                { "openshift-version", GOFLAG_STRING, &c.openshift_version, NULL,
                  "The OpenShift version of the cluster (required)", ENV("OPENSHIFT_VERSION") },
                { "skip-cert-verification", GOFLAG_BOOL, &c.skip_cert_verification, "false",
                  "Do not validate the service's TLS certificate", ENV("SKIP_CERT_VERIFICATION") },
                { "ca-cert-path", GOFLAG_STRING, &c.ca_cert_path, NULL,
                  "Path to a CA certificate (PEM) the service's certificate is also checked against",
                  ENV("CA_CERT_PATH") },
                { "namespace", GOFLAG_STRING, &c.namespace, CONTROLLER_NAMESPACE,
                  "The namespace of the controller's Job and of its ready event", ENV("NAMESPACE") },
                { "control-plane-count", GOFLAG_INT, &c.control_plane_count, "3",
                  "The number of control plane nodes (1: single node)", ENV("CONTROL_PLANE_COUNT") },
                { "check-cluster-version", GOFLAG_BOOL, &c.check_cluster_version, "false",
                  "Also wait for the cluster version (cvo) to be available", ENV("CHECK_CLUSTER_VERSION") },
                { "must-gather-image", GOFLAG_STRING, &c.must_gather_image, NULL,
                  "Custom must-gather image (a plain image, or JSON {operator: image})",
                  ENV("MUST_GATHER_IMAGE") },
                { "notify-num-reboots", GOFLAG_BOOL, &c.notify_num_reboots, "false",
                  "Report the number of reboots of each node", ENV("NOTIFY_NUM_REBOOTS") },
                { "dry-run", GOFLAG_BOOL, &c.dry_run, "false", "Dry run avoids/fakes certain actions",
                  ENV("DRY_ENABLE") },
                { "dry-fake-reboot-marker-path", GOFLAG_STRING, &c.dry_fake_reboot_marker_path, NULL,
                  "Dry run: the controller starts once this path exists (a host's fake reboot marker)",
                  ENV("DRY_FAKE_REBOOT_MARKER_PATH") },
                { "dry-cluster-hosts-path", GOFLAG_STRING, &c.dry_cluster_hosts_path, NULL,
                  "Dry run: a JSON file of the cluster's hosts [{hostname, ip, rebootMarkerPath}], each a "
                  "Ready node once its reboot marker exists",
                  ENV("DRY_CLUSTER_HOSTS_PATH") },
                { "help", GOFLAG_BOOL, &help, "false", "Help message" },
                /* cradle's own */
                { "kubeconfig", GOFLAG_STRING, &c.kubeconfig, NULL,
                  "cradle: the new cluster's kubeconfig (default: " CONTROLLER_SNO_KUBECONFIG
                  " when it exists, else the pod's service account)",
                  "KUBECONFIG" },
                { "token-file", GOFLAG_STRING, &c.token_file, CONTROLLER_TOKEN_FILE,
                  "cradle: the file holding the service's token (absent: $PULL_SECRET_TOKEN)",
                  "CRADLE_CONTROLLER_TOKEN_FILE" },
                { "log-file", GOFLAG_STRING, &c.log_file, CONTROLLER_LOG_FILE,
                  "cradle: the text log beside stdout (\"\" for none)", "CRADLE_CONTROLLER_LOG_FILE" },
                { "log-level", GOFLAG_STRING, &c.log_level, "info", "cradle: debug, info, warning or error",
                  "CRADLE_LOG_LEVEL" },
                { "ready-interval", GOFLAG_DOUBLE, &ready_interval, "1",
                  "cradle: seconds between the attempts to reach the service and the cluster at start",
                  "CRADLE_CONTROLLER_READY_INTERVAL" },
                { "ready-timeout", GOFLAG_DOUBLE, &ready_timeout, "4200",
                  "cradle: seconds the start waits for them before it fails (the Job starts it again)",
                  "CRADLE_CONTROLLER_READY_TIMEOUT" },
                { "agent-ready-timeout", GOFLAG_DOUBLE, &agent_ready_timeout, "300",
                  "cradle: the same for the agent-based installer, whose service goes away with the "
                  "rendezvous host (then the run goes on without it)",
                  "CRADLE_CONTROLLER_AGENT_READY_TIMEOUT" },
                { "poll-interval", GOFLAG_DOUBLE, &poll, "30",
                  "cradle: seconds between the rounds upstream repeats every 30 s (nodes, CSRs, the wait "
                  "for finalizing, finalizing stage reports)",
                  "CRADLE_CONTROLLER_POLL_INTERVAL" },
                { "slow-poll-interval", GOFLAG_DOUBLE, &slow_poll, "60",
                  "cradle: seconds between the checks upstream repeats every 60 s (cluster operators, "
                  "complete-installation, the end of the installation)",
                  "CRADLE_CONTROLLER_SLOW_POLL_INTERVAL" },
                { "fetch-interval", GOFLAG_DOUBLE, &fetch, "10",
                  "cradle: seconds between the reads of the ingress CA",
                  "CRADLE_CONTROLLER_FETCH_INTERVAL" },
                { "operators-timeout", GOFLAG_DOUBLE, &operators_timeout, "36000",
                  "cradle: seconds the controller waits for the cluster operators",
                  "CRADLE_CONTROLLER_OPERATORS_TIMEOUT" },
                { "logs-interval", GOFLAG_DOUBLE, &logs_interval, "300",
                  "cradle: seconds between the uploads of the controller's log while the installation "
                  "goes on",
                  "CRADLE_CONTROLLER_LOGS_INTERVAL" },
                { "logs-timeout", GOFLAG_DOUBLE, &logs_timeout, "4200",
                  "cradle: seconds the last upload of the logs (with must-gather after a failure) is "
                  "tried for",
                  "CRADLE_CONTROLLER_LOGS_TIMEOUT" },
                { "must-gather-dir", GOFLAG_STRING, &c.must_gather_dir, "/tmp/must-gather-logs",
                  "cradle: where oc adm must-gather runs after a failure (its archive there is reused)",
                  "CRADLE_CONTROLLER_MUST_GATHER_DIR" },
                { "dns-interval", GOFLAG_DOUBLE, &dns_interval, "20",
                  "cradle: seconds between the lookups of the DNS service's address",
                  "CRADLE_CONTROLLER_DNS_INTERVAL" },
                { "deletion-interval", GOFLAG_DOUBLE, &deletion_interval, "10",
                  "cradle: seconds between the tries of a deletion the DNS address asks for",
                  "CRADLE_CONTROLLER_DELETION_INTERVAL" },
                { "reboots-interval", GOFLAG_DOUBLE, &reboots_interval, "15",
                  "cradle: seconds between the tries to count a node's reboots (NOTIFY_NUM_REBOOTS)",
                  "CRADLE_CONTROLLER_REBOOTS_INTERVAL" },
                { "retry-delay", GOFLAG_DOUBLE, &retry_delay, "2",
                  "cradle: seconds, base of the jittered back-off of service calls", "CRADLE_RETRY_DELAY" },
                { "retry-max-delay", GOFLAG_DOUBLE, &retry_max_delay, "10",
                  "cradle: seconds, cap of that back-off", "CRADLE_RETRY_MAX_DELAY" },
                {},
        };
        const char *synopsis =
                "Runs in the new cluster as the Job assisted-installer-controller: reports each host\n"
                "Joined and Done as its Node joins and turns Ready, approves its kubelet's certificate\n"
                "requests, uploads the ingress CA, reports the cluster operators and completes the\n"
                "installation. Upstream's configuration: the variables below (the Job's ConfigMap),\n"
                "the service's token in " CONTROLLER_TOKEN_FILE " or $PULL_SECRET_TOKEN.";
        static const struct {
                const char *name;
                size_t offset;
        } required[] = {
                { "CLUSTER_ID", offsetof(ControllerConfig, cluster_id) },
                { "INVENTORY_URL", offsetof(ControllerConfig, inventory_url) },
                { "OPENSHIFT_VERSION", offsetof(ControllerConfig, openshift_version) },
        };

        r = goflags_parse(CONTROLLER_PROGRAM, synopsis, flags, argc, argv, &optind);
        if (r <= 0)
                goto fail;
        if (help) {
                goflags_usage(stdout, CONTROLLER_PROGRAM, synopsis, flags);
                r = 0;
                goto fail;
        }
        if (optind < argc) {
                fprintf(stderr, "%s: unexpected argument '%s'\n", CONTROLLER_PROGRAM, argv[optind]);
                r = -EINVAL;
                goto fail;
        }
        /* envconfig: "required key CLUSTER_ID missing value" (an empty one
         * passes there, and fails every call after: refused here) */
        for (size_t i = 0; i < ELEMENTSOF(required); i++)
                if (isempty(*(char **)((char *)&c + required[i].offset))) {
                        fprintf(stderr, "%s: required key %s missing value\n", CONTROLLER_PROGRAM,
                                required[i].name);
                        r = -EINVAL;
                        goto fail;
                }
        /* upstream's mock would play a cluster of no hosts: nothing would
         * ever join */
        if (c.dry_run && isempty(c.dry_cluster_hosts_path)) {
                fprintf(stderr,
                        "%s: the dry run (DRY_ENABLE) needs DRY_CLUSTER_HOSTS_PATH, the hosts that "
                        "play the new cluster's nodes\n",
                        CONTROLLER_PROGRAM);
                r = -EINVAL;
                goto fail;
        }
        if (log_level_from_string(c.log_level) < 0 ||
            usec_from_seconds(ready_interval, &c.ready_interval) < 0 ||
            usec_from_seconds(ready_timeout, &c.ready_timeout) < 0 ||
            usec_from_seconds(agent_ready_timeout, &c.agent_ready_timeout) < 0 ||
            usec_from_seconds(poll, &c.poll_interval) < 0 ||
            usec_from_seconds(slow_poll, &c.slow_poll_interval) < 0 ||
            usec_from_seconds(fetch, &c.fetch_interval) < 0 ||
            usec_from_seconds(operators_timeout, &c.operators_timeout) < 0 ||
            usec_from_seconds(logs_interval, &c.logs_interval) < 0 ||
            usec_from_seconds(logs_timeout, &c.logs_timeout) < 0 ||
            usec_from_seconds(dns_interval, &c.dns_interval) < 0 ||
            usec_from_seconds(deletion_interval, &c.deletion_interval) < 0 ||
            usec_from_seconds(reboots_interval, &c.reboots_interval) < 0 ||
            usec_from_seconds(retry_delay, &c.retry_delay) < 0 ||
            usec_from_seconds(retry_max_delay, &c.retry_max_delay) < 0) {
                fprintf(stderr, "%s: invalid value of a cradle option (--log-level or a delay)\n",
                        CONTROLLER_PROGRAM);
                r = -EINVAL;
                goto fail;
        }
        if (c.retry_max_delay < c.retry_delay)
                c.retry_max_delay = c.retry_delay;

        r = controller_token_read(c.token_file, getenv("PULL_SECRET_TOKEN"), &c.token);
        if (r < 0) {
                fprintf(stderr, "%s: Failed to parse pull secret token: cannot read %s: %s\n",
                        CONTROLLER_PROGRAM, c.token_file, strerror(-r));
                goto fail;
        }
        if (!isempty(c.token))
                (void)redact_register_secret(c.token);

        /* the values now belong to c; the flag table only pointed at them */
        *ret = c;
        return 1;
fail:
        controller_config_done(&c);
        goflags_free(flags);
        return r;
}
