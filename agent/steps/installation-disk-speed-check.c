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
 * in-process) runs at most once at a time, within T; a request for the same
 * disk that arrives meanwhile gets the running test's result instead of
 * the Go agent's empty output (which the service refuses). Exit codes are the
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

typedef struct Job {
        const char *request;
        bool dry_run;
        usec_t deadline;
} Job;

static StepCoalescer checks = STEP_COALESCER_INIT;

static int check(void *userdata, StepResult *ret)
{
        const Job *j = userdata;
        char *out = NULL, *err = NULL;
        int r, code;

        r = disk_speed_check_run(j->request, j->dry_run, j->deadline, &out, &err, &code);
        if (r < 0)
                return r;
        ret->output = out;
        ret->error = err;
        ret->exit_code = code < 0 ? 255 : code;
        return 0;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL;
        Job j = { .request = args[0], .dry_run = ctx->config && ctx->config->dry_run };
        double seconds;
        int r;

        r = step_parse_arg(args[0], &model_disk_speed_check_request, ret, &req);
        if (r <= 0)
                return r;
        if (safe_atod(args[1], &seconds) < 0 || !isfinite(seconds))
                return step_fail(ret, -1, "strconv.ParseFloat: parsing \"%s\": invalid syntax", args[1]);

        /* timeout(1) with a duration <= 0 waits forever */
        j.deadline = seconds > 0 ? now_usec(CLOCK_MONOTONIC) + (usec_t)(seconds * USEC_PER_SEC) : 0;
        return step_coalesce(&checks, args[0], check, &j, ret);
}

const StepHandler step_installation_disk_speed_check = {
        .type = STEP_INSTALLATION_DISK_SPEED_CHECK,
        .min_args = 2,
        .max_args = 2,
        .run = run,
};
