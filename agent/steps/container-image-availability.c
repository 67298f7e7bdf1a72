/* SPDX-License-Identifier: Apache-2.0 */
/*
 * container-image-availability: can the host pull the images the
 * installation needs, and how fast?
 *
 * Argument: ContainerImageAvailabilityRequest {"images":[...],"timeout":S}
 * (S seconds for the whole request). Output:
 * ContainerImageAvailabilityResponse {"images":[{"download_rate","name",
 * "result","size_bytes","time"}]}; the exit code is 2 when any image
 * failed (the JSON is still the output).
 *
 * Per image, with podman on the host (as the Go agent, notes §6.4):
 * `podman images --quiet IMG` (was it there already?); failure when no
 * time is left; `podman pull IMG` bounded by the time left (timeout(1)
 * semantics: 124); for an image that was not there before,
 * `podman image inspect --format={{.Size}} IMG` gives size_bytes, the pull
 * time gives time and size/1e6/time the rate in MB/s; an image that was
 * there already reports only name and result. One check at a time: a
 * request that arrives while the same one runs gets its result (the Go
 * agent answers it with exit 0 and no output, which the service refuses).
 *
 * Dry run: every image succeeds with the Go agent's fake figures
 * (download_rate 100, size_bytes 400000000, time 10).
 */
#include <math.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "spawn.h"
#include "step-util.h"
#include "strutil.h"

#define FAILED_TO_PULL_EXIT_CODE 2

static bool image_present(const StepContext *ctx, const char *image)
{
        char *argv[] = { (char *)"podman", (char *)"images", (char *)"--quiet", (char *)image, NULL };
        _cleanup_spawn_result_ SpawnResult res = {};

        return step_host_run(ctx, argv, 0, &res) >= 0 && res.exit_status == 0 && res.out_len > 0;
}

static int image_size(const StepContext *ctx, const char *image, double *ret)
{
        char *argv[] = { (char *)"podman",  (char *)"image",
                         (char *)"inspect", (char *)"--format={{.Size}}",
                         (char *)image,     NULL };
        _cleanup_spawn_result_ SpawnResult res = {};
        int r;

        r = step_host_run(ctx, argv, 0, &res);
        if (r < 0)
                return r;
        if (res.exit_status != 0) {
                log_warning("Couldn't get the image size of %s: podman inspect exited with non-zero exit "
                            "code %d: "
                            "%s\n %s",
                            image, res.exit_status, strempty(res.out), strempty(res.err));
                return -EIO;
        }
        return safe_atod(strstrip(res.out), ret);
}

static json_object *check_image(const StepContext *ctx, const char *image, usec_t deadline)
{
        _cleanup_(json_object_putp) json_object *e = json_new_object();
        char *argv[] = { (char *)"podman", (char *)"pull", (char *)image, NULL };
        _cleanup_spawn_result_ SpawnResult res = {};
        double size = 0, seconds = 0;
        bool present, ok = false;
        usec_t start, left;
        int64_t left_s;
        int r;

        if (!e)
                return NULL;
        present = image_present(ctx, image);
        log_info("Image %s exists locally before pull: %s", image, present ? "true" : "false");

        /* int64(time.Until(deadline).Seconds()): whole seconds left */
        left = deadline > now_usec(CLOCK_MONOTONIC) ? deadline - now_usec(CLOCK_MONOTONIC) : 0;
        left_s = (int64_t)(left / USEC_PER_SEC);
        if (left_s <= 0)
                log_warning("Couldn't pull image %s. Timeout expired", image);
        else {
                start = now_usec(CLOCK_MONOTONIC);
                r = step_host_run(ctx, argv, (usec_t)left_s * USEC_PER_SEC, &res);
                seconds = (double)(now_usec(CLOCK_MONOTONIC) - start) / USEC_PER_SEC;
                if (r < 0)
                        log_warning_errno(r, "Pulling image %s wasn't available: cannot run podman: %m",
                                          image);
                else if (res.timed_out)
                        log_warning(
                                "Pulling image %s wasn't available: podman pull was timed out after %" PRIi64
                                " seconds",
                                image, left_s);
                else if (res.exit_status != 0)
                        log_warning(
                                "Pulling image %s wasn't available: podman pull exited with non-zero exit "
                                "code %d: %s\n %s",
                                image, res.exit_status, strempty(res.out), strempty(res.err));
                else if (present)
                        ok = true;
                else if (image_size(ctx, image, &size) >= 0)
                        ok = true;
        }

        /* ContainerImageAvailability, alphabetical, numbers omitempty */
        if (ok && !present &&
            (json_add_double_nonzero(e, "download_rate", seconds > 0 ? size / 1e6 / seconds : 0) < 0))
                return NULL;
        if (json_add_string_nonempty(e, "name", image) < 0 ||
            json_add_string(e, "result", ok ? "success" : "failure") < 0)
                return NULL;
        if (ok && !present &&
            (json_add_double_nonzero(e, "size_bytes", size) < 0 ||
             json_add_double_nonzero(e, "time", seconds) < 0))
                return NULL;
        return TAKE_PTR(e);
}

static json_object *dry_image(const char *image)
{
        _cleanup_(json_object_putp) json_object *e = json_new_object();

        if (!e || json_add_double(e, "download_rate", 100) < 0 ||
            json_add_string_nonempty(e, "name", image) < 0 || json_add_string(e, "result", "success") < 0 ||
            json_add_double(e, "size_bytes", 400000000) < 0 || json_add_double(e, "time", 10) < 0)
                return NULL;
        return TAKE_PTR(e);
}

typedef struct Check {
        const StepContext *ctx;
        json_object *req;
} Check;

static StepCoalescer checks = STEP_COALESCER_INIT;

static int check(void *userdata, StepResult *ret)
{
        const Check *c = userdata;
        const StepContext *ctx = c->ctx;
        _cleanup_(json_object_putp) json_object *resp = NULL, *list = NULL;
        bool dry = ctx->config && ctx->config->dry_run;
        json_object *images, *req = c->req;
        usec_t deadline;
        int code = 0;

        images = model_get(req, "images");
        deadline =
                now_usec(CLOCK_MONOTONIC) + (usec_t)MAX(model_get_int(req, "timeout"), 0LL) * USEC_PER_SEC;

        for (size_t i = 0; i < model_array_length(images); i++) {
                const char *image = strempty(json_object_get_string(json_object_array_get_idx(images, i)));
                json_object *e;

                if (dry)
                        log_info("Running in dry mode - skipping image availability test, returning fake "
                                 "results");
                e = dry ? dry_image(image) : check_image(ctx, image, deadline);
                if (!e)
                        return -ENOMEM;
                if (!streq(strempty(json_get_string(e, "result")), "success"))
                        code = FAILED_TO_PULL_EXIT_CODE;
                if (!list) {
                        list = json_new_array();
                        if (!list) {
                                json_object_put(e);
                                return -ENOMEM;
                        }
                }
                if (json_append(list, e) < 0)
                        return -ENOMEM;
        }
        resp = json_new_object();
        /* images is required, so not omitempty: null for an empty request */
        if (!resp || json_add_or_null(resp, "images", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        return step_set_result(ret, resp, code, NULL);
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL;
        Check c = { .ctx = ctx };
        int r;

        r = step_parse_arg(args[0], &model_container_image_availability_request, ret, &req);
        if (r <= 0)
                return r;
        c.req = req;
        return step_coalesce(&checks, args[0], check, &c, ret);
}

const StepHandler step_container_image_availability = {
        .type = STEP_CONTAINER_IMAGE_AVAILABILITY,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
