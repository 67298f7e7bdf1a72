/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "cleanup.h"
#include "installer/plan.h"
#include "jsonutil.h"
#include "strutil.h"

static const char *const flow_names[_INSTALL_FLOW_MAX] = {
        [INSTALL_FLOW_NODE] = "node",
        [INSTALL_FLOW_BOOTSTRAP] = "bootstrap",
        [INSTALL_FLOW_SINGLE_NODE] = "single-node",
};

const char *install_flow_to_string(InstallFlow f)
{
        return f >= 0 && f < _INSTALL_FLOW_MAX ? flow_names[f] : NULL;
}

InstallFlow install_flow_for(const char *role, int control_plane_count)
{
        if (isempty(role))
                return _INSTALL_FLOW_INVALID;
        /* keyed on the count, not the role: the Go installer's unit tests
         * run single node with role master */
        if (control_plane_count == 1)
                return INSTALL_FLOW_SINGLE_NODE;
        if (streq(role, "bootstrap"))
                return INSTALL_FLOW_BOOTSTRAP;
        if (streq(role, "master") || streq(role, "worker") || streq(role, "arbiter"))
                return INSTALL_FLOW_NODE;
        return _INSTALL_FLOW_INVALID;
}

static const char *const step_names[_STEP_MAX] = {
        [STEP_FORMAT_DISKS] = "format-disks",
        [STEP_REPORT_STARTING] = "report-starting",
        [STEP_RESOLVE_DEVICE] = "resolve-device",
        [STEP_CLEANUP_DEVICE] = "cleanup-device",
        [STEP_MKDIR_INSTALL_DIR] = "mkdir-install-dir",
        [STEP_START_BOOTSTRAP] = "start-bootstrap",
        [STEP_REPORT_INSTALLING] = "report-installing",
        [STEP_FETCH_IGNITION] = "fetch-ignition",
        [STEP_SINGLE_NODE_IGNITION] = "single-node-ignition",
        [STEP_WRITE_IMAGE] = "write-image",
        [STEP_WAIT_CONTROL_PLANE] = "wait-control-plane",
        [STEP_SKIP_MCO_REBOOT] = "skip-mco-reboot",
        [STEP_SET_BOOT_ORDER] = "set-boot-order",
        [STEP_COPY_REGISTRY] = "copy-registry",
        [STEP_BOOTSTRAP_WAITS] = "bootstrap-waits",
        [STEP_UPLOAD_LOGS] = "upload-logs",
        [STEP_FINALIZE] = "finalize",
};

const char *install_step_to_string(InstallStep s)
{
        return s >= 0 && s < _STEP_MAX ? step_names[s] : NULL;
}

bool install_step_is_fatal(InstallStep s)
{
        switch (s) {
        case STEP_MKDIR_INSTALL_DIR:
        case STEP_START_BOOTSTRAP:
        case STEP_FETCH_IGNITION:
        case STEP_SINGLE_NODE_IGNITION:
        case STEP_WRITE_IMAGE:
        case STEP_COPY_REGISTRY:
        case STEP_BOOTSTRAP_WAITS:
        case STEP_FINALIZE:
                return true;
        default:
                /* format disks, cleanup, boot order, skip-MCO-reboot, the
                 * worker wait (never gives up), log upload, progress */
                return false;
        }
}

size_t install_plan(const InstallPlanInput *in, InstallStep steps[static _STEP_MAX])
{
        InstallFlow flow = install_flow_for(in->role, in->control_plane_count);
        bool existing_root = in->coreos_image;
        size_t n = 0;

        if (flow < 0)
                return 0;
        if (!existing_root)
                steps[n++] = STEP_FORMAT_DISKS;
        steps[n++] = STEP_REPORT_STARTING;
        steps[n++] = STEP_RESOLVE_DEVICE;
        if (!in->dry_run && !in->skip_cleanup && !existing_root)
                steps[n++] = STEP_CLEANUP_DEVICE;
        steps[n++] = STEP_MKDIR_INSTALL_DIR;
        if (flow == INSTALL_FLOW_BOOTSTRAP)
                steps[n++] = STEP_START_BOOTSTRAP;
        steps[n++] = STEP_REPORT_INSTALLING;
        steps[n++] = flow == INSTALL_FLOW_SINGLE_NODE ? STEP_SINGLE_NODE_IGNITION : STEP_FETCH_IGNITION;
        steps[n++] = STEP_WRITE_IMAGE;
        if (flow == INSTALL_FLOW_NODE && streq(in->role, "worker"))
                steps[n++] = STEP_WAIT_CONTROL_PLANE;
        /* nothing of this is possible on the existing root; in dry run it
         * would change the host */
        if (!existing_root && !in->dry_run) {
                if (in->enable_skip_mco_reboot)
                        steps[n++] = STEP_SKIP_MCO_REBOOT;
                steps[n++] = STEP_SET_BOOT_ORDER;
                steps[n++] = STEP_COPY_REGISTRY;
        }
        if (flow == INSTALL_FLOW_BOOTSTRAP)
                steps[n++] = STEP_BOOTSTRAP_WAITS;
        if (in->upload_logs)
                steps[n++] = STEP_UPLOAD_LOGS;
        steps[n++] = STEP_FINALIZE;
        return n;
}

const char *install_reported_role(const char *role, int control_plane_count, bool installing)
{
        if (installing && control_plane_count != 1 && streq_ptr(role, "bootstrap"))
                return "master";
        return strempty(role);
}

char *install_cleanup_warning(const char *device)
{
        return strdup_printf("Could not clean install device %s. The installation will continue. If the "
                             "installation fails, clean the disk and try again",
                             device);
}

char **coreos_installer_argv(const char *program, const char *ignition, char *const *installer_args,
                             const char *device)
{
        _cleanup_strv_free_ char **l = NULL;

        if (strv_extend(&l, program) < 0 || strv_extend(&l, "install") < 0 ||
            strv_extend(&l, "--insecure") < 0 || strv_extend(&l, "-i") < 0 || strv_extend(&l, ignition) < 0)
                return NULL;
        STRV_FOREACH (a, installer_args)
                if (strv_extend(&l, *a) < 0)
                        return NULL;
        if (strv_extend(&l, device) < 0)
                return NULL;
        return TAKE_PTR(l);
}

int coreos_progress_parse(const char *line, unsigned *ret_percent)
{
        const char *open = strchr(line, '('), *close;
        _cleanup_free_ char *num = NULL;
        unsigned v;

        /* lazy "\((.*?\%)\)": from the first "(" to the first "%)" after it */
        if (!open)
                return -ENOENT;
        close = strstr(open + 1, "%)");
        if (!close)
                return -ENOENT;
        num = strndup(open + 1, (size_t)(close - open - 1));
        if (!num)
                return -ENOMEM;
        if (safe_atou(num, &v) < 0)
                return -ENOENT;
        *ret_percent = v;
        return 0;
}

bool progress_should_report(unsigned last_reported, unsigned percent)
{
        return percent >= last_reported + 5 || (percent == 100 && last_reported != 100);
}

int rsync_progress_parse(const char *line, unsigned *ret_percent)
{
        const char *p = strchr(line, '%');
        const char *start;
        _cleanup_free_ char *num = NULL;
        unsigned v;

        if (!p)
                return -ENOENT;
        start = p;
        while (start > line && isdigit((unsigned char)start[-1]))
                start--;
        if (start == p)
                return -ENOENT;
        num = strndup(start, (size_t)(p - start));
        if (!num)
                return -ENOMEM;
        if (safe_atou(num, &v) < 0 || v > 100)
                return -ENOENT;
        *ret_percent = v;
        return 0;
}

bool worker_may_continue(const char *cluster_kind, unsigned done_hosts)
{
        return streq_ptr(cluster_kind, "AddHostsCluster") || done_hosts >= 2;
}

unsigned hosts_done_count(json_object *hosts)
{
        unsigned n = 0;

        if (!hosts || !json_object_is_type(hosts, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(hosts); i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                json_object *progress = json_get(h, "progress");
                if (streq_ptr(json_get_string(progress, "current_stage"),
                              host_stage_to_string(HOST_STAGE_DONE)))
                        n++;
        }
        return n;
}

RebootKind reboot_kind(bool dry_run, bool ironic_agent_listed)
{
        if (dry_run)
                return REBOOT_FAKE;
        return ironic_agent_listed ? REBOOT_IRONIC : REBOOT_SHUTDOWN;
}

const char *reboot_progress_info(RebootKind k)
{
        return k == REBOOT_IRONIC ? "Ironic will reboot the node shortly" : "";
}

char **reboot_argv(RebootKind k, int control_plane_count, const char *marker)
{
        _cleanup_strv_free_ char **l = NULL;
        int r = 0;

        switch (k) {
        case REBOOT_FAKE:
                r = strv_extend(&l, "touch");
                if (r >= 0)
                        r = strv_extend(&l, strempty(marker));
                break;
        case REBOOT_IRONIC:
                r = strv_extend(&l, "systemctl");
                if (r >= 0)
                        r = strv_extend(&l, "stop");
                if (r >= 0)
                        r = strv_extend(&l, "agent.service");
                break;
        case REBOOT_SHUTDOWN:
                r = strv_extend(&l, "shutdown");
                if (r >= 0)
                        r = strv_extend(&l, "-r");
                if (r >= 0)
                        r = strv_extend(&l, control_plane_count == 1 ? "now" : "+1");
                if (r >= 0)
                        r = strv_extend(&l, "'Installation completed, server is going to reboot.'");
                break;
        }
        return r < 0 ? NULL : TAKE_PTR(l);
}

const char *efi_vendor_pick(const char *ls_output)
{
        _cleanup_strv_free_ char **l = NULL;

        if (strv_split(strempty(ls_output), "\n", &l) < 0)
                return NULL;
        STRV_FOREACH (e, l)
                if (streq(strstrip(*e), "redhat"))
                        return "redhat";
        STRV_FOREACH (e, l)
                if (streq(*e, "centos"))
                        return "centos";
        return NULL;
}

char *efi_loader_path(const char *vendor, const char *machine)
{
        return strdup_printf("\\EFI\\%s\\%s", vendor,
                             streq_ptr(machine, "aarch64") ? "shimaa64.efi" : "shimx64.efi");
}

char **efibootmgr_create_argv(const char *device, const char *loader)
{
        const char *words[] = { "efibootmgr", "-v",  "-d",
                                device,       "-p",  "2",
                                "-c",         "-L",  "Red Hat Enterprise Linux",
                                "-l",         loader };
        _cleanup_strv_free_ char **l = NULL;

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strv_extend(&l, words[i]) < 0)
                        return NULL;
        return TAKE_PTR(l);
}

void argvs_free(char ***l)
{
        for (size_t i = 0; l && l[i]; i++)
                strv_free(l[i]);
        free(l);
}

char ***efibootmgr_delete_argvs(const char *create_output, const char *loader)
{
        _cleanup_strv_free_ char **lines = NULL;
        char ***ret = NULL;
        size_t n = 0;

        if (strv_split(strempty(create_output), "\n", &lines) < 0)
                return NULL;
        STRV_FOREACH (line, lines) {
                /* "Boot(.*) has same label Red Hat Enterprise Linux" */
                const char *b = strstr(*line, "Boot"), *tail;
                _cleanup_free_ char *num = NULL;
                char ***grown;
                const char *words[7];

                if (!b)
                        continue;
                tail = strstr(b, " has same label Red Hat Enterprise Linux");
                if (!tail)
                        continue;
                num = strndup(b + 4, (size_t)(tail - b - 4));
                if (!num)
                        goto oom;
                words[0] = "efibootmgr";
                words[1] = "-v";
                words[2] = "--delete-bootnum";
                words[3] = "--bootnum";
                words[4] = num;
                words[5] = "-l";
                words[6] = loader;
                grown = realloc(ret, (n + 2) * sizeof(char **));
                if (!grown)
                        goto oom;
                ret = grown;
                ret[n] = NULL;
                for (size_t i = 0; i < ELEMENTSOF(words); i++)
                        if (strv_extend(&ret[n], words[i]) < 0) {
                                ret[n + 1] = NULL;
                                goto oom;
                        }
                ret[++n] = NULL;
        }
        return ret;
oom:
        argvs_free(ret);
        return NULL;
}

char *partition_path(const char *device, unsigned n)
{
        size_t l = strlen(device);

        if (l > 0 && isdigit((unsigned char)device[l - 1]))
                return strdup_printf("%sp%u", device, n);
        return strdup_printf("%s%u", device, n);
}
