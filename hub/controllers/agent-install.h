/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The Agent controller's installation side (notes §5), beside agent.c
 * (creation, status.inventory, the InfraEnv label):
 *
 * - the finalizer, and deletion (the host deregistered, its Node removed
 *   from the spoke when it joined one);
 * - the host's facts mirrored in annotations (for backup and restore), and
 *   the restore of an Agent whose host the service no longer has: its
 *   status rebuilt from those annotations (REST has no call that creates
 *   a host: CreateHostInKubeKeyNamespace is NO-REST);
 * - binding and unbinding (BindHost, UnbindHost), auto-approval from the
 *   InfraEnv;
 * - spec → service (§5.3): installer args, ignition overrides, one
 *   v2UpdateHost with only what differs;
 * - the status (§5.6): role, progress, debug info, the seven conditions;
 * - day-2 (§5.6): the node's CSRs approved on the spoke cluster through the
 *   ClusterDeployment's admin kubeconfig, its labels, and the host's
 *   Joined / Done.
 */

#include <stdbool.h>

#include "hub-controller.h"
#include "hub-inputs.h"

struct AgentObserved;

typedef struct AgentInstallObserved {
        usec_t csr_requeue; /* the day-2 loop's delay (--approve-csrs-requeue-duration) */
        /* spec.clusterDeploymentName's ClusterDeployment, or why not */
        HubRef cd;
        /* its AgentClusterInstall (the platform, for day-2 CSRs) */
        json_object *aci;
        /* spec.ignitionEndpointTokenReference's Secret */
        HubRef token_secret;
        /* day-2: the spoke cluster, through the admin kubeconfig Secret */
        char *spoke_kubeconfig; /* a secret */
        bool spoke_read;
        int spoke_error;
        char *spoke_message;
        json_object *spoke_node; /* the Node named by the Agent's hostname, or NULL */
        json_object *spoke_csrs; /* the CSR list's items */
        /* restore: the host id registered in an infra-env of another namespace */
        char *conflict_infra_env_id;
        char *conflict_namespace;
} AgentInstallObserved;

void agent_install_observed_done(AgentInstallObserved *o);

/* The facts of the installation side (after agent.c's observe). */
int agent_install_observe(HubContext *ctx, struct AgentObserved *o);

/* The Agent exists and its host is known: desired carries agent.c's
 * labels and status.inventory; this adds the rest and plans the writes
 * (the calls first, the Agent's patches once their answers are in). */
int agent_install_decide(const struct AgentObserved *o, json_object *desired, HubPlan *plan);
/* The Agent exists, the service has no host for it: restore from the
 * annotations, or the conditions Unknown. */
int agent_install_decide_without_host(const struct AgentObserved *o, HubPlan *plan);
/* The Agent is being deleted. */
int agent_install_decide_deletion(const struct AgentObserved *o, HubPlan *plan);

/* ---- pure parts, exposed for tests ---- */

/* The Agent's mirror annotations (backup and restore, notes §5.2 step 5)
 * stay well under Kubernetes' 256 KiB for all of an object's annotations,
 * whatever the host: the inventory within this, the validations within
 * that (the Agent's status.inventory has the whole inventory). */
#define HUB_AGENT_INVENTORY_ANNOTATION_MAX (64u * 1024)
#define HUB_AGENT_VALIDATIONS_ANNOTATION_MAX (16u * 1024)

/* The inventory annotation's text (NULL for none): the service's
 * inventory without its timestamp; when that is over max bytes, only
 * what status.inventory shows (notes §5.4) of as many disks (those the
 * installation may use first) and interfaces (those with a MAC first) as
 * fit, and *ret_note says what was left out (else NULL). */
int agent_inventory_annotation(const char *inventory, size_t max, char **ret, char **ret_note);

/* The status (§5.6) from the host: role, bootstrap, debugInfo, progress,
 * validationsInfo, kind, installation_disk_id, ntpSources, the conditions
 * (sync_error NULL: SpecSynced True). cluster_id: the bound cluster (debug
 * URLs), or NULL. link_source: a URL the service handed out for the
 * host's infra-env (hub-links.h; NULL: no debug URLs). host NULL: the
 * conditions Unknown NotAvailable. */
int agent_status(json_object *desired, json_object *host, const char *cluster_id, const char *sync_error,
                 bool sync_user, const char *link_source, usec_t now);

/* The v2UpdateHost body with only what differs (§5.3), NULL when nothing;
 * *ret_error: an input error of the spec. token: the ignition endpoint
 * token (NULL: none). */
int agent_update_params(json_object *agent, json_object *host, const char *token, json_object **ret,
                        char **ret_error);

/* A CSR of the spoke this Agent's node may have approved: 1 client CSR,
 * 2 serving CSR (validated against node), 0 not for this Agent or not
 * valid (*ret_why says why when it is the Agent's but invalid). */
int agent_csr_kind(json_object *agent, json_object *csr, json_object *node, char **ret_why);
