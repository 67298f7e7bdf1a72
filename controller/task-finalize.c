/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The finalize task (PostInstallConfigs, notes/controller.md §5.3): waits
 * for the service to say finalizing, then walks the stages in upstream's
 * order, one step per round (finalize.h decides): the cluster operators,
 * the ingress CA, the OLM operators, Done, complete-installation.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "cleanup.h"
#include "controller/finalize.h"
#include "controller/run.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"
#include "timeutil.h"

static const KubeResource resource_cluster_versions =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusterversions", "ClusterVersion", false);
static const KubeResource resource_cluster_operators =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusteroperators", "ClusterOperator", false);

bool controller_stage_report(Controller *ctl, FinalizingStage stage)
{
        _cleanup_free_ char *err = NULL;
        const char *s = finalizing_stage_to_string(stage);
        int r;

        if (ctl->no_finalizing_stages)
                return true;
        log_info("Updating cluster finalizing stage to %s", s);
        r = controller_service_finalizing_stage(&ctl->svc, s, &err);
        if (r < 0 && err && strstr(err, "[404] path ") && strstr(err, " was not found")) {
                /* the router knows no such operation: a service older than
                 * v2UpdateClusterFinalizingProgress (late 2023) finalizes
                 * without stages */
                log_warning("This assisted-service has no finalizing stages (%s): not reported", err);
                ctl->no_finalizing_stages = true;
                return true;
        }
        if (r < 0) {
                /* retried every round without limit, as upstream */
                log_error("Failed to update the finalizing stage %s: %s", s, err ? err : strerror(-r));
                return false;
        }
        return true;
}

/* checkAndUpdateOperatorAvailability: true once the service has the
 * operator available; reports the cluster's status when it differs */
static bool operator_available(Controller *ctl, const char *name, json_object *conditions,
                               const char *version)
{
        _cleanup_(json_object_putp) json_object *list = NULL, *body = NULL;
        _cleanup_free_ char *err = NULL;
        const char *message, *status;
        json_object *svc_op;
        int r;

        r = controller_service_operators(&ctl->svc, &list, &err);
        if (r < 0) {
                log_error("Failed to get cluster %s %s operator status: %s", ctl->cfg->cluster_id, name,
                          strna(err));
                return false;
        }
        svc_op = monitored_operator_find(list, name, ctl->cfg->openshift_version);
        if (monitored_operator_available(svc_op)) {
                log_info("Service acknowledged <%s> operator is available for cluster %s", name,
                         ctl->cfg->cluster_id);
                return true;
        }
        if (!conditions)
                return false;
        status = operator_status_of(conditions, &message);
        if (!operator_report_needed(svc_op, status, message))
                return false;
        log_info("Operator <%s> updated, status: %s -> %s, message: %s -> %s.", name,
                 strempty(json_get_string(svc_op, "status")), status,
                 strempty(json_get_string(svc_op, "status_info")), message);
        body = operator_report_body(name, status, message, version);
        if (!body)
                return log_oom(), false;
        free(err);
        err = NULL;
        r = controller_service_report_operator(&ctl->svc, body, &err);
        if (r < 0) {
                log_warning("Failed to update %s operator status %s with message %s: %s", name, status,
                            message, strna(err));
                return false;
        }
        return streq(status, OPERATOR_STATUS_AVAILABLE);
}

/* waitingForClusterOperators' check: console (when the capability is on)
 * and, with CHECK_CLUSTER_VERSION, the cluster version */
static bool operators_available(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cv = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        bool result = true;
        int r;

        r = controller_cluster_get(ctl, &resource_cluster_versions, NULL, "version", &cv, &st);
        if (r < 0) {
                log_error("Failed to check if console is enabled: %s", strna(st.message));
                return false;
        }
        if (cluster_capability_enabled(cv, CONSOLE_CAPABILITY)) {
                _cleanup_(json_object_putp) json_object *co = NULL;
                _cleanup_kube_status_ KubeStatus st2 = {};
                json_object *versions;

                log_info("Console is enabled, will wait for the console operator to be available");
                r = controller_cluster_get(ctl, &resource_cluster_operators, NULL, CONSOLE_OPERATOR, &co,
                                           &st2);
                if (r < 0)
                        log_warning("Failed to get <%s> operator: %s", CONSOLE_OPERATOR, strna(st2.message));
                versions = json_get_path(co, "status.versions");
                result = operator_available(
                        ctl, CONSOLE_OPERATOR, r < 0 ? NULL : json_get_path(co, "status.conditions"),
                        json_get_string(json_object_array_get_idx(versions, 0), "version"));
        } else
                log_info("Console is disabled, will not wait for the console operator to be available");
        if (ctl->cfg->check_cluster_version)
                result = operator_available(
                                 ctl, CVO_OPERATOR, json_get_path(cv, "status.conditions"),
                                 json_get_string(json_get_path(cv, "status.desired"), "version")) &&
                         result;
        return result;
}

/* operatorReport: every cluster operator in the log, and the report sent
 * with a failure */
static void operators_report_take(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *items;
        int r;

        r = controller_cluster_list(ctl, &resource_cluster_operators, NULL, NULL, &list, &st);
        if (r < 0) {
                log_warning("Failed to list cluster operators: %s", strna(st.message));
                return;
        }
        items = json_get(list, "items");
        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *co = json_object_array_get_idx(items, i);
                json_object *conds = json_get_path(co, "status.conditions");
                log_info("Operator %s, statuses: %s", strna(kube_object_name(co)),
                         conds ? json_object_to_json_string_ext(conds, JSON_C_TO_STRING_PLAIN) : "[]");
        }
        json_object_put(ctl->fin.report);
        ctl->fin.report = operators_report(list);
}

/* addRouterCAToClusterCA */
static bool router_ca_upload(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;
        const char *pem;
        int r;

        log_info("Start adding ingress ca to cluster");
        r = controller_cluster_get(ctl, &kube_resource_configmaps, INGRESS_CA_NAMESPACE,
                                   INGRESS_CA_CONFIGMAP, &cm, &st);
        if (r < 0) {
                log_warning("fetching %s configmap from %s namespace: %s", INGRESS_CA_CONFIGMAP,
                            INGRESS_CA_NAMESPACE, strna(st.message));
                return false;
        }
        pem = strempty(json_get_string(json_get(cm, "data"), INGRESS_CA_KEY));
        log_info("Sending ingress certificate to inventory service. Certificate data %s", pem);
        r = controller_service_ingress_ca(&ctl->svc, pem, &err);
        if (r < 0) {
                log_error("Failed to upload ingress ca to assisted-service: %s", strna(err));
                return false;
        }
        log_info("Ingress ca successfully sent to inventory");
        return true;
}

static void finalize_fail(Controller *ctl, const char *error)
{
        free(ctl->fin.error);
        ctl->fin.error = strdup(error);
        ctl->fin.success = false;
        log_error("%s", error);
        ctl->fin.step = FINALIZE_COMPLETE;
}

static usec_t finalize_step(Controller *ctl)
{
        const ControllerConfig *c = ctl->cfg;
        Finalize *f = &ctl->fin;

        switch (f->step) {
        case FINALIZE_WAIT_FINALIZING: {
                _cleanup_(json_object_putp) json_object *cluster = NULL;
                _cleanup_free_ char *err = NULL;

                if (controller_service_get_cluster(&ctl->svc, false, NULL, &cluster, &err) < 0) {
                        log_error("Failed to get cluster %s from assisted-service: %s", c->cluster_id,
                                  strna(err));
                        return c->poll_interval;
                }
                if (!streq_ptr(json_get_string(cluster, "status"), "finalizing"))
                        return c->poll_interval;
                log_info("Start post install configs");
                f->step = FINALIZE_STAGE_OPERATORS;
                return 0;
        }
        case FINALIZE_STAGE_OPERATORS:
                if (!controller_stage_report(ctl, FINALIZING_STAGE_WAITING_FOR_CLUSTER_OPERATORS))
                        return c->poll_interval;
                log_info("Waiting for cluster operators");
                f->operators_deadline = now_usec(CLOCK_MONOTONIC) + c->operators_timeout;
                f->step = FINALIZE_OPERATORS;
                return 0;
        case FINALIZE_OPERATORS:
                if (operators_available(ctl)) {
                        operators_report_take(ctl);
                        f->step = FINALIZE_STAGE_ROUTER_CA;
                        return 0;
                }
                if (now_usec(CLOCK_MONOTONIC) + c->slow_poll_interval <= f->operators_deadline)
                        return c->slow_poll_interval;
                operators_report_take(ctl);
                finalize_fail(ctl, "Stopped waiting for cluster operators to be available: context deadline "
                                   "exceeded");
                return 0;
        case FINALIZE_STAGE_ROUTER_CA:
                if (!controller_stage_report(ctl, FINALIZING_STAGE_ADDING_ROUTER_CA))
                        return c->poll_interval;
                f->step = FINALIZE_ROUTER_CA;
                return 0;
        case FINALIZE_ROUTER_CA:
                if (!router_ca_upload(ctl))
                        return c->fetch_interval;
                f->step = FINALIZE_STAGE_OLM;
                return 0;
        case FINALIZE_STAGE_OLM:
                if (!controller_stage_report(ctl,
                                             FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV_INITIALIZATION))
                        return c->poll_interval;
                f->step = FINALIZE_OLM;
                return 0;
        case FINALIZE_OLM: {
                usec_t next = olm_wait_step(ctl, &f->olm);

                if (f->olm.step != OLM_FINISHED)
                        return next;
                /* OLM failures never fail the installation: the service
                 * degrades the cluster */
                f->step = FINALIZE_STAGE_DONE;
                return 0;
        }
        case FINALIZE_STAGE_DONE:
                if (!controller_stage_report(ctl, FINALIZING_STAGE_DONE))
                        return c->poll_interval;
                f->success = true;
                f->step = FINALIZE_COMPLETE;
                return 0;
        case FINALIZE_COMPLETE: {
                _cleanup_(json_object_putp) json_object *body =
                        completion_body(f->success, f->error, f->success ? NULL : f->report);
                _cleanup_free_ char *err = NULL;

                log_info("Start complete installation step, with params success: %s, error info: %s",
                         f->success ? "true" : "false", strempty(f->error));
                if (!body)
                        return log_oom(), c->slow_poll_interval;
                if (controller_service_complete(&ctl->svc, body, &err) < 0) {
                        log_error("Failed to complete the installation: %s", strna(err));
                        return c->slow_poll_interval;
                }
                log_info("Done complete installation step");
                f->step = FINALIZE_FINISHED;
                return USEC_INFINITY;
        }
        case FINALIZE_FINISHED:
        case _FINALIZE_STEP_MAX:
                break;
        }
        return USEC_INFINITY;
}

/* The service may say installed before the last stages were reported (it
 * decides on its own, notes §0.2): what is left and waits for nothing is
 * still sent, as upstream's stages reach the service before its minute-long
 * check ends the run. */
static void finalize_drain(Controller *ctl)
{
        for (unsigned i = 0; i < 2 * _FINALIZE_STEP_MAX && ctl->fin.step >= FINALIZE_STAGE_OLM &&
                             ctl->fin.step < FINALIZE_FINISHED;
             i++)
                if (finalize_step(ctl) != 0)
                        break;
}

static usec_t task_finalize(Controller *ctl)
{
        usec_t next = finalize_step(ctl);

        if (next == USEC_INFINITY)
                log_info("Finished PostInstallConfigs");
        return next;
}

static void task_finalize_done(Controller *ctl)
{
        free(ctl->fin.error);
        json_object_put(ctl->fin.report);
        olm_wait_done(&ctl->fin.olm);
        strv_free(ctl->failed_operators);
}

const ControllerTask controller_task_finalize = {
        .name = "finalize",
        .round = task_finalize,
        .finish = finalize_drain,
        .done = task_finalize_done,
};
