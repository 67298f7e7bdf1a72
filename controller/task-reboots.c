/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reboots notifier's I/O (notes/controller.md §5.8, NOTIFY_NUM_REBOOTS
 * only): for each host the nodes task reported Done, oc debug counts its
 * node's reboots (controller/reboots.h), the service gets the event
 * reboots_for_node. The admin kubeconfig is downloaded once into a 0700
 * directory of its own, never logged, and removed at the end.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "controller/reboots.h"
#include "controller/run.h"
#include "jsonutil.h"
#include "log.h"
#include "spawn.h"
#include "strutil.h"

static void pending_free(RebootsPending *p)
{
        free(p->node);
        free(p->host_id);
        free(p->infra_env_id);
}

void controller_reboots_start(Controller *ctl, const char *node, const ClusterHost *h)
{
        RebootsPending *more, *p;

        if (!ctl->cfg->notify_num_reboots)
                return;
        more = reallocarray(ctl->reboots, ctl->n_reboots + 1, sizeof(RebootsPending));
        if (!more) {
                log_oom();
                return;
        }
        ctl->reboots = more;
        p = &ctl->reboots[ctl->n_reboots];
        *p = (RebootsPending){ .node = strdup(node),
                               .host_id = strdup(h->id),
                               .infra_env_id = strdup(strempty(h->infra_env_id)),
                               .deadline = now_usec(CLOCK_MONOTONIC) + REBOOTS_BUDGET };
        if (!p->node || !p->host_id || !p->infra_env_id) {
                pending_free(p);
                log_oom();
                return;
        }
        ctl->n_reboots++;
}

/* GetKubeconfigPath: downloaded once, for every node */
const char *controller_admin_kubeconfig(Controller *ctl)
{
        if (!ctl->reboots_kubeconfig &&
            controller_kubeconfig_noingress(ctl, "controller-kubedir", &ctl->reboots_kubeconfig_dir,
                                            &ctl->reboots_kubeconfig) < 0)
                return NULL;
        return ctl->reboots_kubeconfig;
}

/* one attempt for p: true when p is over (sent, or given up) */
static bool reboots_attempt(Controller *ctl, RebootsPending *p)
{
        _cleanup_(json_object_putp) json_object *ev = NULL;
        _cleanup_spawn_result_ SpawnResult res = {};
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *err = NULL, *tail = NULL;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        const char *kc;
        unsigned n;
        int r;

        kc = controller_admin_kubeconfig(ctl);
        if (!kc) {
                log_warning("failed to get kubeconfig.  aborting notifying reboots for %s", p->node);
                return true;
        }
        argv = reboots_argv(kc, p->node);
        if (!argv)
                return log_oom(), true;
        r = now < p->deadline
                    ? spawn_run(&(SpawnOptions){ .argv = argv, .timeout = p->deadline - now }, &res)
                    : -ETIMEDOUT;
        p->attempts++;
        if (r >= 0 && res.exit_status == 0) {
                n = reboots_count(res.out);
                log_info("number of reboots for node %s is %u", p->node, n);
                ev = reboots_event(ctl->cfg->cluster_id, p->host_id, p->infra_env_id, p->node, n,
                                   now_usec(CLOCK_REALTIME));
                if (!ev)
                        return log_oom(), true;
                r = controller_service_event(&ctl->svc, ev, &err);
                if (r < 0)
                        log_error("failed to trigger number of reboots event for node %s: %s", p->node,
                                  err ? err : strerror(-r));
                return true;
        }
        tail = r < 0 ? strdup(strerror(-r))
                     : spawn_output_tail(!isempty(res.err) ? res.err : strempty(res.out), 512);
        if (p->attempts >= REBOOTS_ATTEMPTS || now_usec(CLOCK_MONOTONIC) >= p->deadline) {
                log_error("failed to get number of reboots for node %s: failed after %u attempts, last "
                          "error: %s",
                          p->node, p->attempts, strna(tail));
                return true;
        }
        log_warning("Retrying after error: %s", strna(tail));
        return false;
}

/* one attempt for each node waiting */
static void reboots_round(Controller *ctl)
{
        size_t kept = 0;

        for (size_t i = 0; i < ctl->n_reboots; i++) {
                if (reboots_attempt(ctl, &ctl->reboots[i]))
                        pending_free(&ctl->reboots[i]);
                else
                        ctl->reboots[kept++] = ctl->reboots[i];
        }
        ctl->n_reboots = kept;
}

static usec_t task_reboots(Controller *ctl)
{
        if (!ctl->cfg->notify_num_reboots)
                return USEC_INFINITY;
        reboots_round(ctl);
        /* no host left to be reported Done, none waiting: over */
        if (ctl->nodes_done && ctl->n_reboots == 0)
                return USEC_INFINITY;
        return ctl->cfg->reboots_interval;
}

static void kubeconfig_remove(Controller *ctl)
{
        if (ctl->reboots_kubeconfig)
                (void)unlink(ctl->reboots_kubeconfig);
        if (ctl->reboots_kubeconfig_dir)
                (void)rmdir(ctl->reboots_kubeconfig_dir);
        free(ctl->reboots_kubeconfig);
        free(ctl->reboots_kubeconfig_dir);
        ctl->reboots_kubeconfig = ctl->reboots_kubeconfig_dir = NULL;
}

/* Finalize: what is still waiting gets its attempts, then the kubeconfig
 * goes */
static void task_reboots_finish(Controller *ctl)
{
        while (ctl->n_reboots > 0 && !stop_requested()) {
                reboots_round(ctl);
                if (ctl->n_reboots > 0 && sleep_usec(ctl->cfg->reboots_interval) < 0)
                        break;
        }
        kubeconfig_remove(ctl);
}

static void task_reboots_done(Controller *ctl)
{
        for (size_t i = 0; i < ctl->n_reboots; i++)
                pending_free(&ctl->reboots[i]);
        free(ctl->reboots);
        kubeconfig_remove(ctl);
}

const ControllerTask controller_task_reboots = {
        .name = "reboots",
        .round = task_reboots,
        .finish = task_reboots_finish,
        .done = task_reboots_done,
};
