/* SPDX-License-Identifier: Apache-2.0 */
/*
 * upgrade-agent: pull the agent image the service wants, so that the next
 * registration runs it.
 *
 * Argument: UpgradeAgentRequest {"agent_image": ...}. Output:
 * UpgradeAgentResponse {"agent_image", "result": "success"|"failure"},
 * always exit 0 (notes §6, observed). `podman pull IMAGE` on the host, one
 * pull at a time: a request that arrives while another pull runs answers
 * {"agent_image": ...} without a result. A successful pull ends the
 * instruction loop after the reply (end_runner), so that the agent
 * re-registers and its runner starts from the new image.
 */
#include <pthread.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "log.h"
#include "spawn.h"
#include "step-util.h"
#include "strutil.h"

static pthread_mutex_t pull_lock = PTHREAD_MUTEX_INITIALIZER;

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *resp = NULL;
        _cleanup_spawn_result_ SpawnResult res = {};
        const char *image, *result;
        int r;

        r = step_parse_arg(args[0], &model_upgrade_agent_request, ret, &req);
        if (r <= 0)
                return r;
        image = strempty(model_get_string(req, "agent_image"));
        resp = json_new_object();
        if (!resp || json_add_string_nonempty(resp, "agent_image", image) < 0)
                return -ENOMEM;

        if (pthread_mutex_trylock(&pull_lock) != 0) {
                log_info("Image pull is in progress: %s", image);
                return step_succeed_json(ret, resp);
        }
        {
                char *argv[] = { (char *)"podman", (char *)"pull", (char *)image, NULL };

                log_info("Pulling image %s", image);
                r = step_host_run(ctx, argv, 0, &res);
        }
        pthread_mutex_unlock(&pull_lock);

        if (r >= 0 && res.exit_status == 0) {
                log_info("Successfully pulled image %s", image);
                result = "success";
                ret->end_runner = true;
        } else {
                if (r < 0)
                        log_error_errno(r, "Failed to pull image %s: %m", image);
                else
                        log_error("Failed to pull image %s (exit code %d): %s", image, res.exit_status,
                                  strempty(res.err));
                result = "failure";
        }
        if (json_add_string(resp, "result", result) < 0)
                return -ENOMEM;
        return step_succeed_json(ret, resp);
}

const StepHandler step_upgrade_agent = {
        .type = STEP_UPGRADE_AGENT,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
