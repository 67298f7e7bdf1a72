/* SPDX-License-Identifier: Apache-2.0 */
/*
 * installation-disk-speed-check: is the installation disk fast enough for
 * etcd (fdatasync latency)?
 *
 * Arguments: DiskSpeedCheckRequest {"path": ...} and the timeout in
 * seconds as text ("480.00"); exactly two. Output: DiskSpeedCheckResponse
 * {"io_sync_duration": ms, "path": ...}.
 *
 * The Go agent runs `timeout T podman run ... disk_speed_check JSON` unless
 * its disk_performance container runs already (then exit 0, no output);
 * here the same measurement (disk-speed.c: fio's region and job, written
 * in-process) runs at most once at a time, within T. Exit codes are the
 * program's as the shell saw them: 0; 255 when no job could measure
 * ({"path": ...} and the error); 124 when T ran out (no output).
 *
 * Dry run: nothing is written; io_sync_duration is 1 (the Go agent's
 * dryModeSyncDurationInNS).
 */
#include <math.h>
#include <stdlib.h>

#include "cleanup.h"
#include "disk-speed.h"
#include "step-util.h"
#include "strutil.h"

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL;
        char *out = NULL, *err = NULL;
        double seconds;
        usec_t deadline;
        int r, code;

        r = step_parse_arg(args[0], &model_disk_speed_check_request, ret, &req);
        if (r <= 0)
                return r;
        if (safe_atod(args[1], &seconds) < 0 || !isfinite(seconds))
                return step_fail(ret, -1, "strconv.ParseFloat: parsing \"%s\": invalid syntax", args[1]);

        /* timeout(1) with a duration <= 0 waits forever */
        deadline = seconds > 0 ? now_usec(CLOCK_MONOTONIC) + (usec_t)(seconds * USEC_PER_SEC) : 0;
        r = disk_speed_check_run(args[0], ctx->config && ctx->config->dry_run, deadline, &out, &err, &code);
        if (r < 0)
                return r;
        ret->output = out;
        ret->error = err;
        ret->exit_code = code < 0 ? 255 : code;
        return 0;
}

const StepHandler step_installation_disk_speed_check = {
        .type = STEP_INSTALLATION_DISK_SPEED_CHECK,
        .min_args = 2,
        .max_args = 2,
        .run = run,
        .flags = STEP_SINGLETON,
};
