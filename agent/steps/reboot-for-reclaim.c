/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reboot-for-reclaim: reboot a host that was installed into the discovery
 * image prepared by download-boot-artifacts.
 *
 * Argument: RebootForReclaimRequest {"host_fs_mount_dir": DIR}, the
 * directory where the host's root file system is reachable. The Go agent
 * chroot()s its whole process into DIR and runs `systemctl reboot` (on
 * s390x first `unshare --mount bash -c "mount -o remount,rw /boot && zipl
 * ..."` to write the IPL record). Here only the child process is
 * chroot()ed (between fork and exec), so the agent itself keeps running
 * where it is; the output, error and exit code are systemctl's, -1 when it
 * cannot start.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "spawn.h"
#include "step-util.h"
#include "strutil.h"

static int enter_root(void *userdata)
{
        const char *root = userdata;

        /* async-signal-safe only: we are between fork and exec */
        if (chroot(root) < 0 || chdir("/") < 0)
                return -errno;
        return 0;
}

static int run_in_root(const char *root, char *const *argv, StepResult *ret)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        SpawnOptions o = { .argv = argv, .pre_exec = enter_root, .pre_exec_userdata = (void *)root };
        int r;

        r = spawn_run(&o, &res);
        if (r == -ENOENT)
                return step_fail(ret, -1, "exec: \"%s\": executable file not found in $PATH", argv[0]);
        if (r < 0)
                return step_fail(ret, -1, "chroot %s: %s", root, strerror(-r));
        step_result_from_spawn(ret, &res);
        return 0;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL;
        const char *root;
        int r;

        (void)ctx;
        r = step_parse_arg(args[0], &model_reboot_for_reclaim_request, ret, &req);
        if (r <= 0)
                return r;
        root = model_get_string(req, "host_fs_mount_dir");
        {
                struct stat st;

                /* syscall.Chroot's error, before anything runs */
                _cleanup_free_ char *why = NULL;

                int e = stat(root, &st) < 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;

                if (e != 0) {
                        why = go_errno_string(e);
                        return step_fail(ret, -1, "%s", strna(why));
                }
        }

#if defined(__s390x__)
        {
                char *zipl[] = {
                        (char *)"unshare",
                        (char *)"--mount",
                        (char *)"bash",
                        (char *)"-c",
                        (char *)"mount -o remount,rw /boot && zipl -V -t /boot -i /boot/discovery/vmlinuz "
                                "-r /boot/discovery/initrd -p "
                                "/boot/loader/entries/00-assisted-discovery.conf",
                        NULL
                };
                r = run_in_root(root, zipl, ret);
                if (r < 0 || ret->exit_code != 0)
                        return r;
                step_result_done(ret);
        }
#endif
        {
                char *argv[] = { (char *)"systemctl", (char *)"reboot", NULL };
                return run_in_root(root, argv, ret);
        }
}

const StepHandler step_reboot_for_reclaim = {
        .type = STEP_REBOOT_FOR_RECLAIM,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
