/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CSRs task (ApproveCsrs, notes/controller.md §5.2): every round the
 * requests not yet decided, each approved or refused (csr.h decides; a
 * refusal logged once). It ends with the node rounds.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <time.h>

#include "assisted/cluster-hosts.h"
#include "cleanup.h"
#include "controller/csr.h"
#include "controller/run.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static void csr_approve(Controller *ctl, json_object *csr, const CsrDecision *d)
{
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *path = NULL;
        const char *name = kube_object_name(csr);
        char now[32];
        int r;

        format_rfc3339_utc(time(NULL), now);
        body = csr_approval(csr, now);
        path = kube_resource_path(&kube_resource_csrs, NULL, name, "approval");
        if (!body || !path) {
                log_oom();
                return;
        }
        log_info("Approving CSR %s of node %s", name, d->node);
        r = kube_request(ctl->kube, "PUT", path, NULL, body, NULL, &st);
        if (r < 0)
                /* the next round tries again */
                log_warning("Failed to approve CSR %s: %s", name, strna(st.message));
}

static void csrs_round(Controller *ctl)
{
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_(json_object_putp) json_object *csrs = NULL, *nodes = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *items;
        int r;

        r = controller_cluster_list(ctl, &kube_resource_csrs, NULL, NULL, &csrs, &st);
        if (r < 0) {
                log_debug("Failed to list CSRs: %s", strna(st.message));
                return;
        }
        items = json_get(csrs, "items");
        if (!items || json_object_array_length(items) == 0)
                return;
        if (controller_hosts_get(ctl, &hosts) < 0) {
                _cleanup_free_ char *err = NULL;

                /* the service is gone (the agent-based installer's
                 * rendezvous host rebooted into the cluster): its last word
                 * on the hosts still tells this cluster's kubelets apart */
                if (!ctl->last_cluster ||
                    cluster_hosts_from_cluster(ctl->last_cluster, NULL, &hosts, &err) < 0)
                        return;
                log_info("Deciding the CSRs on the hosts the service gave last");
        }
        kube_status_done(&st);
        r = controller_cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st);
        if (r < 0) {
                log_error("Failed to get list of nodes from k8s client: %s", strna(st.message));
                return;
        }
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                json_object *csr = json_object_array_get_idx(items, i);
                const char *uid = json_get_string(json_get(csr, "metadata"), "uid");
                CsrDecision d = {};

                if (csr_decide(csr, &hosts, nodes, &d) < 0) {
                        log_oom();
                        return;
                }
                if (d.verdict == CSR_APPROVE)
                        csr_approve(ctl, csr, &d);
                else if (d.verdict == CSR_REFUSE && !strv_contains(ctl->refused_csrs, strempty(uid))) {
                        log_warning("Not approving CSR %s: %s", strna(kube_object_name(csr)), d.reason);
                        (void)strv_extend(&ctl->refused_csrs, strempty(uid));
                }
                csr_decision_done(&d);
        }
}

static usec_t task_csrs(Controller *ctl)
{
        if (ctl->nodes_done) {
                log_info("Finish approving CSRs");
                return USEC_INFINITY;
        }
        csrs_round(ctl);
        return ctl->cfg->poll_interval;
}

static void task_csrs_done(Controller *ctl)
{
        strv_free(ctl->refused_csrs);
}

const ControllerTask controller_task_csrs = {
        .name = "csrs",
        /* upstream's ticker: the first round after one interval */
        .first_delay = controller_after_poll_interval,
        .round = task_csrs,
        .done = task_csrs_done,
};
