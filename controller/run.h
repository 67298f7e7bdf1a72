/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Inside the controller's I/O (controller/ only): the state of one run and
 * the tasks that share it. controller/run.c starts up and runs the tasks on
 * one clock; each task's rounds live in a file of their own
 * (controller/task-*.c), which observes the service and the new cluster,
 * asks its pure module (nodes.h, csr.h, finalize.h, ending.h, ...) and
 * acts. A task is its ControllerTask below plus one line in run.c's table.
 */

#include <json-c/json.h>
#include <stdbool.h>

#include "assisted/assisted-models.h"
#include "assisted/cluster-hosts.h"
#include "controller/config.h"
#include "controller/dns.h"
#include "controller/dry.h"
#include "controller/ending.h"
#include "controller/service.h"
#include "controller/task-olm.h"
#include "kube/kube.h"
#include "timeutil.h"

/* The single node's router probe (router-probe.c, router.h): a thread that
 * logs the ingress canary's and the router's health every interval until
 * timeout, or until stopped; logged when it cannot start. */
typedef struct RouterProbe RouterProbe;
int router_probe_start(const char *cluster_name, const char *base_dns_domain, usec_t interval,
                       usec_t timeout, RouterProbe **ret);
/* Ends it (the request in flight ends first: at most 10 s); NULL. */
RouterProbe *router_probe_stop(RouterProbe *p);

/* PostInstallConfigs, one step per round (task-finalize.c) */
typedef enum FinalizeStep {
        FINALIZE_WAIT_FINALIZING, /* the service says finalizing */
        FINALIZE_STAGE_OPERATORS,
        FINALIZE_OPERATORS, /* console (and cvo) available, at most operators_timeout */
        FINALIZE_STAGE_ROUTER_CA,
        FINALIZE_ROUTER_CA, /* the ingress CA uploaded */
        FINALIZE_STAGE_OLM,
        FINALIZE_OLM, /* the OLM operators (task-olm.h) */
        FINALIZE_STAGE_DONE,
        FINALIZE_COMPLETE, /* complete-installation, until the service takes it */
        FINALIZE_FINISHED,
        _FINALIZE_STEP_MAX,
} FinalizeStep;

typedef struct Finalize {
        FinalizeStep step;
        usec_t operators_deadline;
        bool success;
        char *error;
        json_object *report; /* CLUSTER_OPERATORS_REPORT, sent with a failure */
        OlmWait olm;
} Finalize;

/* a host reported Done whose reboots are still to be counted (task-reboots.c) */
typedef struct RebootsPending {
        char *node;
        char *host_id;
        char *infra_env_id;
        usec_t deadline; /* CLOCK_MONOTONIC: the 6 minutes of each */
        unsigned attempts;
} RebootsPending;

typedef struct ControllerTask ControllerTask;

typedef struct Controller {
        const ControllerConfig *cfg;
        KubeClient *kube; /* NULL in dry run */
        DryCluster dry; /* the dry run's cluster (dry.hosts set) */
        bool *dry_rebooted;
        ControllerService svc;
        /* the service has no finalizing stages (late 2023) */
        bool no_finalizing_stages;
        bool remove_uninitialized_taint;
        bool baremetal; /* the BareMetalHost rounds run */
        bool nodes_done; /* the node rounds ended: so does CSR approval */
        char **warned_nodes; /* Nodes of no host of the cluster, warned once */
        char **refused_csrs; /* uids of the refused requests, logged once */
        InstallationState end;
        unsigned refusals;
        Finalize fin;
        /* the OLM operators the controller reported failed (their
         * must-gather images) */
        char **failed_operators;
        /* the DNS address hack (task-dns.c) */
        DnsHack dns;
        char *dns_address; /* the address dns-default wants */
        char *dns_foreign_namespace, *dns_foreign_name; /* the Service that holds it */
        /* the reboots notifier (task-reboots.c) */
        RebootsPending *reboots;
        size_t n_reboots;
        char *reboots_kubeconfig_dir, *reboots_kubeconfig;
        /* the agent-based installer (abi.h, task-abi.c) */
        bool agent_installer;
        /* the kubeconfig its operator manifests are applied with: the
         * single node's bootstrap one; NULL: the service's
         * kubeconfig-noingress */
        const char *agent_kubeconfig;
        int agent_expected_nodes; /* master Nodes to wait for; 0: none */
        bool agent_cluster_version_available;
        /* the cluster (with hosts) the service last gave: the CSRs task's
         * hosts once the service is gone (the agent-based installer's
         * rendezvous host rebooted) */
        json_object *last_cluster;
        /* the tasks of this run (run.c's table for the invoker) */
        const ControllerTask *const *tasks;
        size_t n_tasks;
        /* the cluster's name and base domain, from the start-up's read of
         * it (the router probe's canary URL) */
        char *cluster_name, *base_dns_domain;
        /* the single node's router probe after a failure (router-probe.c),
         * while the last log upload goes on and until the end */
        RouterProbe *router_probe;
} Controller;

struct ControllerTask {
        const char *name;
        /* the delay before the first round; NULL: at once */
        usec_t (*first_delay)(const ControllerConfig *c);
        /* one round; returns the delay to the next, USEC_INFINITY when done */
        usec_t (*round)(Controller *ctl);
        /* once the installation is over (not when the service stopped
         * answering), in the table's order; may be NULL */
        void (*finish)(Controller *ctl);
        /* frees what the task kept in the Controller; may be NULL */
        void (*done)(Controller *ctl);
};

extern const ControllerTask controller_task_nodes; /* task-nodes.c */
extern const ControllerTask controller_task_csrs; /* task-csrs.c */
extern const ControllerTask controller_task_finalize; /* task-finalize.c */
extern const ControllerTask controller_task_installation; /* task-installation.c */
extern const ControllerTask controller_task_logs; /* task-logs.c */
extern const ControllerTask controller_task_labels; /* task-labels.c */
extern const ControllerTask controller_task_bmhs; /* task-bmh.c */
extern const ControllerTask controller_task_dns; /* task-dns.c */
extern const ControllerTask controller_task_reboots; /* task-reboots.c */
extern const ControllerTask controller_task_agent_manifests; /* task-abi.c */
extern const ControllerTask controller_task_agent_installation; /* task-abi.c */
extern const ControllerTask controller_task_agent_logs; /* task-abi.c */

/* NOTIFY_NUM_REBOOTS: the reboots of the host's node are to be counted
 * and sent (the host was just reported Done); nothing otherwise. */
void controller_reboots_start(Controller *ctl, const char *node, const ClusterHost *h);

/* upstream's first round after one interval */
usec_t controller_after_poll_interval(const ControllerConfig *c);
usec_t controller_after_slow_poll_interval(const ControllerConfig *c);
usec_t controller_after_logs_interval(const ControllerConfig *c);

/* The new cluster: its API server, or the dry run's (dry.h). */
bool controller_dry_run(const Controller *ctl);
int controller_cluster_get(Controller *ctl, const KubeResource *res, const char *ns, const char *name,
                           json_object **ret, KubeStatus *st);
int controller_cluster_list(Controller *ctl, const KubeResource *res, const char *ns,
                            const KubeListOptions *o, json_object **ret, KubeStatus *st);

/* The cluster's hosts from the service (without the disabled ones);
 * logged when it fails. */
int controller_hosts_get(Controller *ctl, ClusterHosts *ret);

/* What the tasks of the cluster's objects (labels, BareMetalHosts, OLM)
 * borrow, without reaching into the Controller. */
const ControllerConfig *controller_config(Controller *ctl);
ControllerService *controller_service(Controller *ctl);
/* The API server's client; NULL in dry run, where nothing is written. */
KubeClient *controller_kube(Controller *ctl);
/* PUT progress {"finalizing_stage"}: true once the service took it (or has
 * no finalizing stages at all); logged (task-finalize.c). */
bool controller_stage_report(Controller *ctl, FinalizingStage stage);
/* The service's kubeconfig-noingress (the cluster's admin kubeconfig, a
 * secret) as a 0600 file in a new 0700 directory $TMPDIR/<dir_name>.XXXXXX;
 * logged when it fails, never its content. The caller removes both. */
#define CONTROLLER_KUBECONFIG_NOINGRESS "kubeconfig-noingress"
int controller_kubeconfig_noingress(Controller *ctl, const char *dir_name, char **ret_dir, char **ret_path);
/* The service's kubeconfig-noingress, downloaded once for the run
 * (GetKubeconfigPath: the reboots notifier's and the agent-based
 * installer's operator manifests), removed at the end; NULL when it cannot
 * be had (logged). */
const char *controller_admin_kubeconfig(Controller *ctl);
/* UntaintNode: the uninitialized taint off the Node, when it has it;
 * false when that failed (logged). */
bool controller_node_untaint(Controller *ctl, const char *name);
/* An OLM operator the controller reported failed: must-gather collects
 * its image too. */
void controller_operator_failed(Controller *ctl, const char *name);
