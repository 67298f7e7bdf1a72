/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The logs task (UploadLogs, notes/controller.md §5.7): while the
 * installation goes on, the controller's log to the service every
 * logs_interval; once it is over, logs-progress requested, the last upload
 * (after a failure with must-gather, or without oc with cradle's own
 * reading of the cluster), tried every poll_interval for at most
 * logs_timeout, then logs-progress completed; a failed single node's
 * router probe (router-probe.c) runs beside that until the end. logs.h
 * decides what the archive holds and which command runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assisted/assisted-models.h"
#include "assisted/controller-contract.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/logs.h"
#include "controller/router.h"
#include "controller/run.h"
#include "fileio.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "spawn.h"
#include "strutil.h"
#include "targz.h"
#include "timeutil.h"

/* what oc adm must-gather prints is only logged, its tail */
#define MUST_GATHER_OUTPUT_TAIL 4096

static const KubeResource resource_cluster_operators =
        KUBE_RESOURCE("config.openshift.io", "v1", "clusteroperators", "ClusterOperator", false);

/* the controller's own pod's whole log (upstream: the first Running pod of
 * its Job) */
static char *own_pod_log(Controller *ctl, char **reterr)
{
        _cleanup_(json_object_putp) json_object *pods = NULL;
        _cleanup_kube_status_ KubeStatus st = {}, st2 = {};
        char *text = NULL;
        const char *name;
        int r;

        r = controller_cluster_list(ctl, &kube_resource_pods, ctl->cfg->namespace,
                                    &(KubeListOptions){ .label_selector = "job-name=" CONTROLLER_NAME,
                                                        .field_selector = "status.phase=Running" },
                                    &pods, &st);
        if (r < 0) {
                *reterr = strdup_printf("cannot list the pods: %s", strna(st.message));
                return NULL;
        }
        name = kube_object_name(json_object_array_get_idx(json_get(pods, "items"), 0));
        if (!name) {
                *reterr = strdup_printf("no Running pod of the job %s in %s", CONTROLLER_NAME,
                                        ctl->cfg->namespace);
                return NULL;
        }
        r = kube_pod_logs(ctl->kube, ctl->cfg->namespace, name, NULL, &text, &st2);
        if (r < 0) {
                *reterr = strdup_printf("cannot read the log of %s: %s", name, strna(st2.message));
                return NULL;
        }
        return text;
}

/* The log member: the pod's log, else the text log file (streamed from
 * disk), else why neither could be read. *ret_text is what m->data points
 * at. */
static int log_member(Controller *ctl, LogsMember *m, char **ret_text)
{
        _cleanup_free_ char *pod_err = NULL, *text = NULL;
        const char *file = ctl->cfg->log_file;
        int fd;

        *m = (LogsMember){ .name = CONTROLLER_LOGS_ENTRY };
        text = controller_dry_run(ctl) ? (pod_err = strdup("dry run: no pod"), NULL)
                                       : own_pod_log(ctl, &pod_err);
        if (!text) {
                log_debug("controller logs from the pod: %s", strna(pod_err));
                fd = isempty(file) ? -ENOENT : open(file, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        close(fd);
                        m->path = file;
                        return 0;
                }
                text = controller_log_unavailable(pod_err, isempty(file) ? "no log file" : strerror(errno));
                if (!text)
                        return -ENOMEM;
        }
        m->data = text;
        m->len = strlen(text);
        *ret_text = TAKE_PTR(text);
        return 0;
}

/* The archive of members into a temporary file, uploaded. */
static int upload(Controller *ctl, const LogsMember *members, size_t n)
{
        _cleanup_free_ char *path = NULL, *err = NULL;
        _cleanup_close_ int fd = -1;
        const char *tmp = getenv("TMPDIR");
        int r;

        path = strdup_printf("%s/" CONTROLLER_LOGS_ARCHIVE ".XXXXXX", isempty(tmp) ? "/tmp" : tmp);
        if (!path)
                return log_oom();
        fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Failed to upload the controller's logs: %m");
        r = logs_archive_write(fd, members, n);
        if (r < 0)
                log_error_errno(r, "Failed to upload the controller's logs: cannot write the archive: %m");
        else {
                r = controller_service_upload_logs(&ctl->svc, path, &err);
                if (r < 0)
                        log_error("Failed to upload the controller's logs: %s", err ? err : strerror(-r));
                else
                        log_info("Uploaded the controller's logs (%zu members)", n);
        }
        (void)unlink(path);
        return r;
}

static int upload_log(Controller *ctl)
{
        _cleanup_free_ char *text = NULL;
        LogsMember m;
        int r;

        r = log_member(ctl, &m, &text);
        if (r < 0)
                return log_oom();
        return upload(ctl, &m, 1);
}

static usec_t task_logs(Controller *ctl)
{
        log_info("Start uploading the controller's logs");
        (void)upload_log(ctl);
        return ctl->cfg->logs_interval;
}

/* ---- after a failure: must-gather, or what cradle reads itself ---------------- */

static void resolv_conf_log(void)
{
        static const char *const files[] = { "/etc/resolv.conf", "/tmp/var-run-resolv.conf",
                                             "/tmp/host-resolv.conf" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                int r = read_full_file(files[i], BUF_MAX_JSON_DOC, &text, &len);
                if (r < 0)
                        log_warning_errno(r, "Failed to read %s: %m", files[i]);
                else
                        log_info("%s:\n%s", files[i], text);
        }
}

static bool oc_in_path(void)
{
        _cleanup_free_ char *path = strdup(strempty(getenv("PATH")));
        char *save = NULL;

        for (char *dir = path ? strtok_r(path, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *oc = strdup_printf("%s/oc", dir);
                if (oc && access(oc, X_OK) == 0)
                        return true;
        }
        return false;
}

/* the directory oc made in dir (must-gather.local.<n>) */
static char *must_gather_output(const char *dir)
{
        _cleanup_free_ struct dirent **names = NULL;
        _cleanup_close_ int dirfd_of_scan = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char *found = NULL;
        int n;

        n = scandir(dir, &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
                _cleanup_free_ struct dirent *de = names[i];
                struct stat st;
                /* some file systems leave d_type unknown */
                if (!found && startswith(de->d_name, "must-gather") &&
                    (de->d_type == DT_DIR ||
                     (de->d_type == DT_UNKNOWN &&
                      fstatat(dirfd_of_scan, de->d_name, &st, AT_SYMLINK_NOFOLLOW) >= 0 &&
                      S_ISDIR(st.st_mode))))
                        found = strdup(de->d_name);
        }
        return found;
}

/* GetMustGatherLogs: oc adm must-gather in the directory, what it made
 * into MUST_GATHER_ARCHIVE there (reused when already there). */
static int must_gather_run(Controller *ctl, usec_t deadline, char **ret_archive)
{
        const ControllerConfig *c = ctl->cfg;
        _cleanup_free_ char *archive = NULL, *partial = NULL, *kc_dir = NULL, *kc = NULL, *out = NULL,
                            *top = NULL, *top_path = NULL;
        _cleanup_strv_free_ char **images = NULL, **argv = NULL;
        _cleanup_spawn_result_ SpawnResult res = {};
        _cleanup_close_ int fd = -1;
        struct stat st;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        archive = strdup_printf("%s/" MUST_GATHER_ARCHIVE, c->must_gather_dir);
        partial = strdup_printf("%s.partial", strempty(archive));
        if (!archive || !partial)
                return log_oom();
        if (stat(archive, &st) >= 0) {
                log_info("Reusing the must-gather logs of %s", archive);
                *ret_archive = TAKE_PTR(archive);
                return 0;
        }
        r = mkdir_p(c->must_gather_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", c->must_gather_dir);
        if (must_gather_images(c->must_gather_image, ctl->end == INSTALLATION_FAILED, ctl->failed_operators,
                               &images) < 0)
                return log_oom();
        r = controller_kubeconfig_noingress(ctl, "controller-must-gather", &kc_dir, &kc);
        if (r < 0)
                return r;
        argv = must_gather_argv(kc, images);
        if (!argv)
                r = log_oom();
        else {
                _cleanup_free_ char *line = strv_join(argv, " ");
                log_info("collecting must-gather logs: %s (at most %.0f s)", strna(line),
                         (double)(deadline > now ? deadline - now : 0) / (double)USEC_PER_SEC);
                r = spawn_run(&(SpawnOptions){ .argv = argv,
                                               .cwd = c->must_gather_dir,
                                               .timeout = deadline > now ? deadline - now : 1,
                                               .merge_output = true },
                              &res);
        }
        /* the admin kubeconfig is gone as soon as oc is */
        (void)unlink(kc);
        (void)rmdir(kc_dir);
        if (r < 0)
                return log_error_errno(r, "Failed to run oc adm must-gather: %m");
        out = spawn_output_tail(strempty(res.out), MUST_GATHER_OUTPUT_TAIL);
        if (res.exit_status != 0)
                return log_error_errno(-EIO, "oc adm must-gather failed (%s): %s",
                                       res.timed_out ? "out of time"
                                       : res.signal  ? strsignal(res.signal)
                                                     : "exit status not 0",
                                       strna(out));
        log_info("must-gather output: %s", strna(out));
        top = must_gather_output(c->must_gather_dir);
        if (!top)
                return log_error_errno(-ENOENT, "oc adm must-gather made no must-gather directory in %s",
                                       c->must_gather_dir);
        top_path = strdup_printf("%s/%s", c->must_gather_dir, top);
        fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (!top_path || fd < 0)
                return log_error_errno(top_path ? negative_errno() : -ENOMEM, "Failed to archive %s: %m",
                                       top);
        {
                _cleanup_(tar_writer_freep) TarWriter *t = NULL;
                r = tar_writer_new(fd, time(NULL), &t);
                if (r >= 0)
                        r = tar_writer_add_tree(t, top, top_path);
                if (r >= 0)
                        r = tar_writer_finish(t);
        }
        if (r >= 0 && rename(partial, archive) < 0)
                r = negative_errno();
        if (r < 0) {
                (void)unlink(partial);
                return log_error_errno(r, "Failed to archive %s: %m", top);
        }
        *ret_archive = TAKE_PTR(archive);
        return 0;
}

/* Without oc: the Nodes, the ClusterOperators and the Events as JSON, and
 * a README saying so (and why a list is missing). texts[] receives what
 * members point at. Returns the number of members. */
static int cluster_gather(Controller *ctl, LogsMember *members, char **texts)
{
        static const KubeResource *const resources[] = {
                [CLUSTER_GATHER_NODES] = &kube_resource_nodes,
                [CLUSTER_GATHER_CLUSTER_OPERATORS] = &resource_cluster_operators,
                [CLUSTER_GATHER_EVENTS] = &kube_resource_events,
        };
        char *errors[CLUSTER_GATHER_N_ITEMS + 1] = {};
        int n = 0;

        for (size_t i = 0; i < CLUSTER_GATHER_N_ITEMS; i++) {
                const ClusterGatherItem *item = &cluster_gather_items[i];
                _cleanup_(json_object_putp) json_object *list = NULL;
                _cleanup_kube_status_ KubeStatus st = {};

                if (controller_cluster_list(ctl, resources[item->kind], NULL, NULL, &list, &st) < 0) {
                        log_warning("Failed to collect %s: %s", item->what, strna(st.message));
                        errors[i] = strdup(strna(st.message));
                        if (!errors[i])
                                goto oom;
                        continue;
                }
                texts[n] = strdup(json_object_to_json_string_ext(
                        list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                if (!texts[n])
                        goto oom;
                members[n] = (LogsMember){ .name = item->member, .data = texts[n], .len = strlen(texts[n]) };
                n++;
        }
        texts[n] = cluster_gather_readme("oc is not on the controller's PATH", errors);
        if (!texts[n])
                goto oom;
        members[n] =
                (LogsMember){ .name = CLUSTER_GATHER_README, .data = texts[n], .len = strlen(texts[n]) };
        n++;
        for (size_t i = 0; i < CLUSTER_GATHER_N_ITEMS; i++)
                free(errors[i]);
        return n;
oom:
        for (size_t i = 0; i < CLUSTER_GATHER_N_ITEMS; i++)
                free(errors[i]);
        return -ENOMEM;
}

/* uploadSummaryLogs, one attempt */
static int summary_upload(Controller *ctl, usec_t deadline)
{
        _cleanup_free_ char *log_text = NULL, *mg_archive = NULL;
        /* the gathered lists and their README, or must-gather; the log */
        LogsMember members[CLUSTER_GATHER_N_ITEMS + 2];
        char *texts[ELEMENTSOF(members)] = {};
        size_t n = 0;
        int r = 0;

        if (logs_gather_needed(ctl->end == INSTALLATION_FAILED, ctl->failed_operators)) {
                resolv_conf_log();
                (void)upload_log(ctl);
                if (oc_in_path()) {
                        r = must_gather_run(ctl, deadline, &mg_archive);
                        if (r < 0)
                                goto finish;
                        members[n++] = (LogsMember){ .name = MUST_GATHER_ARCHIVE, .path = mg_archive };
                } else {
                        log_info("oc is not on PATH: no must-gather; collecting the Nodes, the "
                                 "ClusterOperators and the Events instead");
                        r = cluster_gather(ctl, members, texts);
                        if (r < 0) {
                                log_oom();
                                goto finish;
                        }
                        n = (size_t)r;
                }
        }
        r = log_member(ctl, &members[n], &log_text);
        if (r < 0) {
                log_oom();
                goto finish;
        }
        n++;
        r = upload(ctl, members, n);
finish:
        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                free(texts[i]);
        return r;
}

static void logs_finish(Controller *ctl)
{
        const ControllerConfig *c = ctl->cfg;
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + c->logs_timeout;
        _cleanup_free_ char *err = NULL;

        if (controller_service_logs_progress(&ctl->svc, LOGS_STATE_REQUESTED, &err) < 0)
                log_error("Failed to update the cluster's logs progress to %s: %s", LOGS_STATE_REQUESTED,
                          strna(err));
        /* upstream's goroutine: in the background from here to the end */
        if (router_probe_needed(ctl->end == INSTALLATION_FAILED || ctl->fin.error, c->control_plane_count))
                (void)router_probe_start(ctl->cluster_name, ctl->base_dns_domain, c->poll_interval,
                                         c->logs_timeout, &ctl->router_probe);
        for (;;) {
                if (summary_upload(ctl, deadline) >= 0)
                        break;
                if (now_usec(CLOCK_MONOTONIC) + c->poll_interval > deadline) {
                        log_error("Gave up uploading the controller's logs after %.0f s",
                                  (double)c->logs_timeout / (double)USEC_PER_SEC);
                        break;
                }
                if (sleep_usec(c->poll_interval) < 0)
                        return;
        }
        free(err);
        err = NULL;
        if (controller_service_logs_progress(&ctl->svc, LOGS_STATE_COMPLETED, &err) < 0)
                log_error("Failed to update the cluster's logs progress to %s: %s", LOGS_STATE_COMPLETED,
                          strna(err));
}

static void task_logs_done(Controller *ctl)
{
        /* the controller ends: so does the router probe */
        ctl->router_probe = router_probe_stop(ctl->router_probe);
}

const ControllerTask controller_task_logs = {
        .name = "logs",
        /* upstream's ticker: the first upload after one interval */
        .first_delay = controller_after_logs_interval,
        .round = task_logs,
        .finish = logs_finish,
        .done = task_logs_done,
};
