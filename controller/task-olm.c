/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OLM operators' I/O (controller/task-olm.h): the service's monitored
 * operators, the new cluster's Subscriptions, CSVs, InstallPlans and Jobs,
 * the stage reports and the operator reports; controller/olm.h and
 * controller/finalize.h decide.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "controller/config.h"
#include "controller/finalize.h"
#include "controller/run.h"
#include "controller/service.h"
#include "controller/task-olm.h"
#include "fileio.h"
#include "jsonutil.h"
#include "log.h"
#include "spawn.h"
#include "strutil.h"

#define CUSTOM_MANIFESTS_FILE "custom_manifests.json"
/* failedOperatorRetry: attempts at marking the pending operators failed */
#define MARK_FAILED_ATTEMPTS 10

static const KubeResource resource_subscriptions =
        KUBE_RESOURCE("operators.coreos.com", "v1alpha1", "subscriptions", "Subscription", true);
static const KubeResource resource_csvs = KUBE_RESOURCE(
        "operators.coreos.com", "v1alpha1", "clusterserviceversions", "ClusterServiceVersion", true);
static const KubeResource resource_install_plans =
        KUBE_RESOURCE("operators.coreos.com", "v1alpha1", "installplans", "InstallPlan", true);
static const KubeResource resource_jobs = KUBE_RESOURCE("batch", "v1", "jobs", "Job", true);

static void *mfree(void *p)
{
        free(p);
        return NULL;
}

void olm_wait_done(OlmWait *w)
{
        olm_operators_free(w->ops, w->n);
        olm_operators_free(w->waiting, w->n_waiting);
        *w = (OlmWait){};
}

/* isStageTimedOut */
static bool stage_timed_out(Controller *ctl, FinalizingStage stage)
{
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_free_ char *err = NULL;

        if (controller_service_get_cluster(controller_service(ctl), false, NULL, &cluster, &err) < 0) {
                log_error("failed to get cluster: %s", strna(err));
                return false;
        }
        return finalizing_stage_timed_out(cluster, finalizing_stage_to_string(stage));
}

/* the OLM operators of the service, all or those still progressing */
static int service_olm_operators(Controller *ctl, bool only_progressing, OlmOperator **ret, size_t *ret_n)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        r = controller_service_operators(controller_service(ctl), &list, &err);
        if (r < 0) {
                log_warning("Failed to connect to assisted service: %s", strna(err));
                return r;
        }
        r = olm_operators_of(list, controller_config(ctl)->openshift_version, only_progressing, ret, ret_n);
        if (r < 0)
                return log_oom();
        return 0;
}

/* handleOLMEarlySetupBug: failed marketplace Jobs, then the operator's
 * failed InstallPlans, go (OLM recreates them) */
static int olm_early_setup_cleanup(KubeClient *kube, const OlmOperator *op)
{
        _cleanup_(json_object_putp) json_object *jobs = NULL, *plans = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        _cleanup_strv_free_ char **failed = NULL;
        json_object *items;
        int r;

        r = kube_list(kube, &resource_jobs, OLM_JOBS_NAMESPACE, NULL, &jobs, &st);
        if (r < 0)
                return log_warning_errno(r, "Failed to delete olm jobs: %s", strna(st.message));
        items = json_get(jobs, "items");
        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *job = json_object_array_get_idx(items, i);
                _cleanup_kube_status_ KubeStatus st3 = {};

                if (!olm_job_failed(job))
                        continue;
                log_info("Found failed olm job %s, deleting it", strna(kube_object_name(job)));
                r = kube_delete(kube, &resource_jobs, OLM_JOBS_NAMESPACE, kube_object_name(job),
                                &(KubeDeleteOptions){ .grace_period_seconds = KUBE_GRACE_UNSET }, NULL,
                                &st3);
                if (r < 0 && r != -ENOENT)
                        return log_warning_errno(r, "Failed to delete olm jobs: %s", strna(st3.message));
        }
        r = kube_list(kube, &resource_install_plans, op->namespace, NULL, &plans, &st2);
        if (r < 0)
                return log_warning_errno(r, "Failed to delete %s install plan: %s", op->name,
                                         strna(st2.message));
        failed = olm_failed_install_plans(plans, op->subscription);
        if (!failed)
                return log_oom();
        STRV_FOREACH (name, failed) {
                _cleanup_kube_status_ KubeStatus st3 = {};

                log_info("Deleting failed install plan %s", *name);
                r = kube_delete(kube, &resource_install_plans, op->namespace, *name,
                                &(KubeDeleteOptions){ .grace_period_seconds = KUBE_GRACE_UNSET }, NULL,
                                &st3);
                if (r < 0 && r != -ENOENT)
                        return log_warning_errno(r, "Failed to delete %s install plan: %s", op->name,
                                                 strna(st3.message));
        }
        return 0;
}

/* the operator's CSV (GetCSVFromSubscription, GetCSV) */
static int operator_csv(Controller *ctl, const OlmOperator *op, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *sub = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        const char *csv;
        int r;

        r = controller_cluster_get(ctl, &resource_subscriptions, op->namespace, op->subscription, &sub, &st);
        if (r < 0) {
                log_warning("Failed to get subscription %s in %s: %s", op->subscription, op->namespace,
                            strna(st.message));
                return r;
        }
        csv = subscription_current_csv(sub);
        if (!csv) {
                log_warning("subscription CurrentCSV is empty, subscription status: %s",
                            json_object_to_json_string_ext(json_get(sub, "status"), JSON_C_TO_STRING_PLAIN));
                return -ENOENT;
        }
        log_info("Operator %s csv name is %s", op->name, csv);
        r = controller_cluster_get(ctl, &resource_csvs, op->namespace, csv, ret, &st2);
        if (r < 0) {
                log_warning("%s csv %s for %s: %s", r == -ENOENT ? "No" : "Failed to get", csv, op->name,
                            strna(st2.message));
                return r;
        }
        return 0;
}

/* IsInitialized */
static bool operator_initialized(Controller *ctl, const OlmOperator *op)
{
        _cleanup_(json_object_putp) json_object *csv = NULL;
        KubeClient *kube = controller_kube(ctl);

        log_info("Checking if %s operator is initialized", op->name);
        if (kube)
                (void)olm_early_setup_cleanup(kube, op);
        if (operator_csv(ctl, op, &csv) < 0)
                return false;
        log_info("%s operator is initialized", op->name);
        return true;
}

static size_t operators_initialized(Controller *ctl, const OlmOperator *ops, size_t n, bool *ready)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                ready[i] = operator_initialized(ctl, &ops[i]);
                k += ready[i];
        }
        return k;
}

/* ops.CreateManifests: oc --kubeconfig=<k> apply -f <file> */
static int manifest_apply(const char *dir, const char *kubeconfig, const CustomManifest *m)
{
        _cleanup_free_ char *file = strdup_printf("%s/operator-manifest-XXXXXX", dir), *opt = NULL;
        _cleanup_spawn_result_ SpawnResult res = {};
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!file)
                return -ENOMEM;
        fd = mkstemp(file);
        if (fd < 0)
                return log_error_errno(negative_errno(), "cannot create a file for manifest %s: %m",
                                       m->name);
        r = write_all(fd, m->content, m->len);
        if (r < 0)
                return log_error_errno(r, "cannot write manifest %s: %m", m->name);
        opt = strdup_printf("--kubeconfig=%s", kubeconfig);
        if (!opt)
                return -ENOMEM;
        r = spawn_simple((char *[]){ (char *)"oc", opt, (char *)"apply", (char *)"-f", file, NULL },
                         10 * 60 * USEC_PER_SEC, &res);
        (void)unlink(file);
        if (r < 0)
                return log_error_errno(r, "Failed to apply manifest file: cannot run oc: %m");
        if (res.exit_status != 0) {
                _cleanup_free_ char *tail = spawn_output_tail(res.err, 2000);
                log_error("Failed to apply manifest file: oc exited with %d: %s", res.exit_status,
                          strna(tail));
                return -EIO;
        }
        log_info("Applying custom manifest file %s succeed %s", file, strempty(res.out));
        return 0;
}

bool olm_manifests_apply(Controller *ctl, const OlmOperator *ops, size_t n, const CustomManifest *m,
                         size_t nm, const char *dir, const char *kubeconfig)
{
        _cleanup_free_ bool *ready = calloc(n + 1, sizeof(bool));
        bool ok = true;

        if (!ready)
                return log_oom(), false;
        if (operators_initialized(ctl, ops, n, ready) != n) {
                log_info("Not all operators are currently ready");
                return false;
        }
        for (size_t i = 0; i < nm; i++) {
                bool initialized = false;

                log_info("Applying manifest %s", m[i].name);
                for (size_t j = 0; j < n; j++)
                        if (ready[j] && streq(ops[j].name, m[i].name))
                                initialized = true;
                if (!initialized) {
                        log_info("Skipping operator %s as it's not initialized by CSV", m[i].name);
                        continue;
                }
                if (!m[i].content) {
                        log_error("Failed to decode content of operator CR %s.", m[i].name);
                        ok = false;
                        continue;
                }
                if (manifest_apply(dir, kubeconfig, &m[i]) < 0) {
                        ok = false;
                        continue;
                }
                log_info("Manifest %s applied.", m[i].name);
        }
        return ok;
}

/* applyPostInstallManifests: true once every manifest of an initialized
 * operator is applied (nothing until every operator is initialized) */
static bool manifests_apply(Controller *ctl, const OlmWait *w)
{
        ControllerService *svc = controller_service(ctl);
        const ControllerConfig *c = controller_config(ctl);
        _cleanup_free_ char *data = NULL, *kubeconfig = NULL, *err = NULL, *kpath = NULL;
        char dir[] = "/tmp/controller-custom-manifests-XXXXXX";
        CustomManifest *m = NULL;
        size_t len = 0, klen = 0, n = 0;
        int r;

        if (!mkdtemp(dir)) {
                log_error("Failed to create temporary directory to create custom manifests: %m");
                return false;
        }
        log_info("Created temporary directory %s to store custom manifest content.", dir);
        r = controller_service_download(svc, "files", CUSTOM_MANIFESTS_FILE, &data, &len, &err);
        if (r < 0) {
                log_error("Failed to download %s: %s", CUSTOM_MANIFESTS_FILE, strna(err));
                goto out;
        }
        err = mfree(err);
        r = controller_service_download(svc, "credentials", CONTROLLER_KUBECONFIG_NOINGRESS, &kubeconfig,
                                        &klen, &err);
        if (r < 0) {
                log_error("Failed to download noingress kubeconfig %s", strna(err));
                goto out;
        }
        kpath = strdup_printf("%s/%s", dir, CONTROLLER_KUBECONFIG_NOINGRESS);
        if (!kpath || write_file_atomic(kpath, kubeconfig, klen, 0600) < 0) {
                r = -EIO;
                log_error("Failed to store %s in %s", CONTROLLER_KUBECONFIG_NOINGRESS, dir);
                goto out;
        }
        log_info("Downloaded %s to %s.", CONTROLLER_KUBECONFIG_NOINGRESS, kpath);
        err = mfree(err);
        r = custom_manifests_parse(data, len, c->openshift_version, &m, &n, &err);
        if (r < 0) {
                log_error("%s", strna(err));
                goto out;
        }
        r = olm_manifests_apply(ctl, w->ops, w->n, m, n, dir, kpath) ? 0 : -EIO;
out:
        custom_manifests_free(m, n);
        if (kpath)
                (void)unlink(kpath);
        (void)rmdir(dir);
        return r >= 0;
}

/* checkAndUpdateOperatorAvailability for a CSV: true once the service has
 * it available */
static bool csv_available(Controller *ctl, OlmOperator *op)
{
        _cleanup_(json_object_putp) json_object *list = NULL, *csv = NULL, *body = NULL;
        ControllerService *svc = controller_service(ctl);
        const char *status, *message, *version;
        _cleanup_free_ char *err = NULL;
        json_object *svc_op;

        if (controller_service_operators(svc, &list, &err) < 0) {
                log_error("Failed to get cluster %s %s operator status: %s",
                          controller_config(ctl)->cluster_id, op->name, strna(err));
                return false;
        }
        svc_op = monitored_operator_find(list, op->name, controller_config(ctl)->openshift_version);
        log_info("Checking availability of operator <%s>: %s", op->name,
                 monitored_operator_available(svc_op) ? "true" : "false");
        if (monitored_operator_available(svc_op))
                return true;
        if (operator_csv(ctl, op, &csv) < 0) {
                log_warning("Failed to get <%s> operator", op->name);
                return false;
        }
        status = csv_operator_status(csv, &message, &version);
        if (!svc_op || !operator_report_needed(svc_op, status, message))
                return false;
        log_info("Operator <%s> updated, status: %s -> %s, message: %s -> %s.", op->name,
                 strempty(json_get_string(svc_op, "status")), status,
                 strempty(json_get_string(svc_op, "status_info")), message);
        if (!csv_report_allowed(op, status)) {
                log_warning("<%s> operator's OnChange() returned false. Will skip an update.", op->name);
                return false;
        }
        body = operator_report_body(op->name, status, message, version);
        if (!body)
                return log_oom(), false;
        err = mfree(err);
        if (controller_service_report_operator(svc, body, &err) < 0) {
                log_warning("Failed to update %s operator status %s with message %s: %s", op->name, status,
                            message, strna(err));
                return false;
        }
        log_info("Operator %s, status %s", op->name, status);
        if (streq(status, OPERATOR_STATUS_FAILED))
                controller_operator_failed(ctl, op->name);
        return streq(status, OPERATOR_STATUS_AVAILABLE);
}

/* updatePendingOLMOperators */
static bool pending_mark_failed(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        ControllerService *svc = controller_service(ctl);
        _cleanup_free_ char *err = NULL;
        OlmOperator *pending = NULL;
        size_t n = 0;
        bool ok = true;

        log_info("Updating pending OLM operators");
        if (controller_service_operators(svc, &list, &err) < 0) {
                log_warning("Failed to connect to assisted service: %s", strna(err));
                return false;
        }
        if (olm_operators_of(list, controller_config(ctl)->openshift_version, true, &pending, &n) < 0)
                return log_oom(), false;
        for (size_t i = 0; ok && i < n; i++) {
                json_object *op = monitored_operator_find(list, pending[i].name,
                                                          controller_config(ctl)->openshift_version);
                _cleanup_(json_object_putp) json_object *body =
                        operator_report_body(pending[i].name, OPERATOR_STATUS_FAILED, OPERATOR_TIMED_OUT,
                                             json_get_string(op, "version"));
                _cleanup_free_ char *err2 = NULL;

                log_info("Updating operator %s status to 'failed'", pending[i].name);
                if (!body || controller_service_report_operator(svc, body, &err2) < 0) {
                        log_warning("Failed to update olm %s status: %s", pending[i].name, strna(err2));
                        ok = false;
                } else
                        controller_operator_failed(ctl, pending[i].name);
        }
        olm_operators_free(pending, n);
        return ok;
}

/* a wait's round did not end it: again after interval, or on to next when
 * the service timed its stage out */
static usec_t wait_or_cut(Controller *ctl, OlmWait *w, FinalizingStage stage, OlmStep next, usec_t interval,
                          const char *what)
{
        if (!stage_timed_out(ctl, stage))
                return interval;
        log_warning("%s: the service timed the stage %s out", what, finalizing_stage_to_string(stage));
        w->cut_short = true;
        w->step = next;
        return 0;
}

usec_t olm_wait_step(Controller *ctl, OlmWait *w)
{
        const ControllerConfig *c = controller_config(ctl);

        switch (w->step) {
        case OLM_FETCH:
                if (service_olm_operators(ctl, false, &w->ops, &w->n) < 0) {
                        log_error("Error fetching the monitored operators from assisted-service");
                        if (stage_timed_out(ctl,
                                            FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV_INITIALIZATION)) {
                                /* upstream returns before its deferred marking */
                                log_warning("Failed to fetch monitored operators: the stage timed out");
                                w->step = OLM_FINISHED;
                                return 0;
                        }
                        return c->fetch_interval;
                }
                if (w->n == 0) {
                        log_info("No OLM operators found.");
                        w->step = OLM_FINISHED;
                        return 0;
                }
                w->step = OLM_INITIALIZED;
                return 0;
        case OLM_INITIALIZED: {
                _cleanup_free_ bool *ready = calloc(w->n + 1, sizeof(bool));

                if (!ready)
                        return log_oom(), c->poll_interval;
                log_info("Waiting for csv to be created");
                if (operators_initialized(ctl, w->ops, w->n, ready) == w->n) {
                        w->step = OLM_STAGE_APPLY;
                        return 0;
                }
                /* on anyway: the manifests of the operators that are ready */
                return wait_or_cut(ctl, w, FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV_INITIALIZATION,
                                   OLM_STAGE_APPLY, c->poll_interval,
                                   "Failed to wait for some of the OLM operators to be initialized");
        }
        case OLM_STAGE_APPLY:
                if (!controller_stage_report(ctl, FINALIZING_STAGE_APPLYING_OLM_MANIFESTS))
                        return c->poll_interval;
                w->step = OLM_APPLY;
                return 0;
        case OLM_APPLY:
                if (manifests_apply(ctl, w)) {
                        w->step = OLM_STAGE_CSV;
                        return 0;
                }
                log_error("Failed to apply operators to cluster");
                return wait_or_cut(ctl, w, FINALIZING_STAGE_APPLYING_OLM_MANIFESTS, OLM_STAGE_CSV,
                                   c->poll_interval, "Stopped applying post manifests");
        case OLM_STAGE_CSV:
                if (!controller_stage_report(ctl, FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV))
                        return c->poll_interval;
                w->step = OLM_CSV_START;
                return 0;
        case OLM_CSV_START:
                /* fresh: which operators are still progressing */
                if (service_olm_operators(ctl, true, &w->waiting, &w->n_waiting) < 0) {
                        w->cut_short = true;
                        w->step = OLM_MARK_FAILED;
                        return 0;
                }
                w->step = w->n_waiting == 0 ? (w->cut_short ? OLM_MARK_FAILED : OLM_FINISHED) : OLM_CSV;
                return 0;
        case OLM_CSV: {
                size_t left = 0;

                for (size_t i = 0; i < w->n_waiting; i++) {
                        if (csv_available(ctl, &w->waiting[i])) {
                                /* done with it: it leaves the wait */
                                free(w->waiting[i].name);
                                free(w->waiting[i].namespace);
                                free(w->waiting[i].subscription);
                                continue;
                        }
                        w->waiting[left++] = w->waiting[i];
                }
                w->n_waiting = left;
                if (left == 0) {
                        w->step = w->cut_short ? OLM_MARK_FAILED : OLM_FINISHED;
                        return 0;
                }
                return wait_or_cut(ctl, w, FINALIZING_STAGE_WAITING_FOR_OLM_OPERATORS_CSV, OLM_MARK_FAILED,
                                   c->poll_interval, "Stopped waiting for OLM operators be installed");
        }
        case OLM_MARK_FAILED:
                if (!pending_mark_failed(ctl) && ++w->mark_attempts < MARK_FAILED_ATTEMPTS)
                        return c->poll_interval;
                if (w->mark_attempts >= MARK_FAILED_ATTEMPTS)
                        log_error(
                                "Timeout while waiting for some of the operators and not able to update its "
                                "state");
                w->step = OLM_FINISHED;
                return 0;
        case OLM_FINISHED:
                break;
        }
        return 0;
}
