/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent-based installer's tasks (abi.h decides): the OLM operators'
 * manifests from the ConfigMap olm-operator-manifests
 * (PostInstallConfigsK8sClient), the end of the run on the new cluster's
 * word alone (waitForInstallationAgentBasedInstaller), and the logs task
 * without its final upload (the service is gone by then).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <unistd.h>

#include "cleanup.h"
#include "controller/abi.h"
#include "controller/run.h"
#include "controller/task-olm.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"

static const KubeResource resource_cluster_versions =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusterversions", "ClusterVersion", false);

/* ---- PostInstallConfigsK8sClient ----------------------------------------------- */

/* the operators' manifests applied in a directory of their own */
static bool manifests_apply(Controller *ctl, const OlmOperator *ops, size_t n, const CustomManifest *m,
                            size_t nm, const char *kubeconfig)
{
        char dir[] = "/tmp/controller-olm-operator-manifests-XXXXXX";
        bool ok;

        if (!mkdtemp(dir)) {
                log_error("Failed to create temporary directory to create custom manifests: %m");
                return false;
        }
        ok = olm_manifests_apply(ctl, ops, n, m, nm, dir, kubeconfig);
        (void)rmdir(dir);
        return ok;
}

/* one round; true when over (applied, or given up) */
static bool agent_manifests_round(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;
        CustomManifest *m = NULL;
        OlmOperator *ops = NULL;
        size_t n = 0, nm = 0;
        const char *kubeconfig;
        bool over;
        int r;

        r = controller_cluster_get(ctl, &kube_resource_configmaps, ctl->cfg->namespace,
                                   OLM_MANIFESTS_CONFIGMAP, &cm, &st);
        if (r < 0) {
                if (st.code == 404) {
                        log_info("ConfigMap not found yet, waiting...");
                        return false;
                }
                if (st.code == 401 || st.code == 403) {
                        log_error("Permanent error accessing ConfigMap: %s", strna(st.message));
                        return true;
                }
                log_error("Failed to get ConfigMap: %s", strna(st.message));
                return false;
        }
        r = olm_manifests_configmap_read(cm, ctl->cfg->openshift_version, &ops, &n, &m, &nm, &err);
        if (r == -EBADMSG) {
                log_warning("Failed to unmarshal metadata for %s, not retrying", strna(err));
                return true;
        }
        if (r == -ENOENT) {
                log_error("%s - retrying until ConfigMap is updated", strna(err));
                return false;
        }
        if (r < 0)
                return log_oom(), false;
        kubeconfig = ctl->agent_kubeconfig ?: controller_admin_kubeconfig(ctl);
        if (!kubeconfig) {
                log_info("Failed to get kubeconfig path");
                over = false;
        } else if (manifests_apply(ctl, ops, n, m, nm, kubeconfig)) {
                log_info("Successfully applied manifests");
                over = true;
        } else {
                log_info("Failed to apply manifests");
                over = false;
        }
        olm_operators_free(ops, n);
        custom_manifests_free(m, nm);
        return over;
}

static usec_t task_agent_manifests(Controller *ctl)
{
        if (!agent_manifests_round(ctl))
                return ctl->cfg->poll_interval;
        log_info("Finished PostInstallConfigsK8sClient");
        return USEC_INFINITY;
}

const ControllerTask controller_task_agent_manifests = {
        .name = "agent-manifests",
        /* first round at once, as upstream's wait */
        .round = task_agent_manifests,
};

/* ---- waitForInstallationAgentBasedInstaller -------------------------------------- */

static void untaint_all(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *nodes = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *items;

        if (controller_cluster_list(ctl, &kube_resource_nodes, NULL, NULL, &nodes, &st) < 0) {
                log_error("Failed to get list of nodes from k8s client: %s", strna(st.message));
                return;
        }
        items = json_get(nodes, "items");
        for (size_t i = 0; items && i < json_object_array_length(items); i++)
                (void)controller_node_untaint(
                        ctl, strempty(kube_object_name(json_object_array_get_idx(items, i))));
}

static bool agent_installation_check(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cv = NULL, *masters = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        json_object *items;
        size_t n;

        /* assisted-service may be gone: the nodes task cannot untaint any more */
        if (ctl->remove_uninitialized_taint)
                untaint_all(ctl);
        if (!ctl->agent_cluster_version_available) {
                if (controller_cluster_get(ctl, &resource_cluster_versions, NULL, "version", &cv, &st) < 0)
                        log_error("Failed to get cluster version from k8s client: %s", strna(st.message));
                else if (cluster_version_available(cv)) {
                        ctl->agent_cluster_version_available = true;
                        log_info("ClusterVersion Available=True");
                }
        }
        if (!ctl->agent_cluster_version_available) {
                log_info("ClusterVersion Available!=True, sleeping");
                return false;
        }
        if (agent_installation_done(true, 0, ctl->agent_expected_nodes))
                return true;
        if (controller_cluster_list(ctl, &kube_resource_nodes, NULL,
                                    &(KubeListOptions){ .label_selector = MASTER_ROLE_SELECTOR }, &masters,
                                    &st2) < 0) {
                log_error("Failed to list control-plane nodes while waiting for all nodes to join: %s",
                          strna(st2.message));
                return false;
        }
        items = json_get(masters, "items");
        n = items ? json_object_array_length(items) : 0;
        if (agent_installation_done(true, n, ctl->agent_expected_nodes)) {
                log_info("All expected control-plane nodes have joined the cluster (%zu/%d)", n,
                         ctl->agent_expected_nodes);
                return true;
        }
        log_info("Waiting for all control-plane nodes to join the cluster (%zu/%d)", n,
                 ctl->agent_expected_nodes);
        return false;
}

static usec_t task_agent_installation(Controller *ctl)
{
        if (!agent_installation_check(ctl))
                return ctl->cfg->slow_poll_interval;
        ctl->end = INSTALLATION_OVER;
        return USEC_INFINITY;
}

const ControllerTask controller_task_agent_installation = {
        .name = "agent-installation",
        /* upstream checks at once, then every minute */
        .round = task_agent_installation,
};

/* ---- the logs, without the final upload ----------------------------------------- */

static usec_t agent_logs_first_delay(const ControllerConfig *c)
{
        return controller_task_logs.first_delay ? controller_task_logs.first_delay(c) : 0;
}

static usec_t agent_logs_round(Controller *ctl)
{
        return controller_task_logs.round(ctl);
}

static void agent_logs_finish(Controller *ctl)
{
        (void)ctl;
        /* the service ran on the rendezvous host, which is a node now */
        log_info("assisted-service is offline in agent installer mode. final log uploads skipped.");
}

static void agent_logs_done(Controller *ctl)
{
        if (controller_task_logs.done)
                controller_task_logs.done(ctl);
}

const ControllerTask controller_task_agent_logs = {
        .name = "logs",
        .first_delay = agent_logs_first_delay,
        .round = agent_logs_round,
        .finish = agent_logs_finish,
        .done = agent_logs_done,
};
