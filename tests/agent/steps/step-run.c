/* SPDX-License-Identifier: Apache-2.0 */
/*
 * step-run: runs one step handler in this process, as the agent's runner
 * would, and prints the reply fields as JSON on stdout:
 *
 *   step-run [--dry-run] [--lab-nics GLOBS] [--cacert FILE] STEP_TYPE [ARG...]
 *   {"exit_code": N, "output": "...", "error": "..."}
 *
 * With --validate-only it checks the first argument against the step's
 * request model and runs nothing (exit_code 0 or -1).
 *
 * The network, DNS, disk and host tests drive it inside the namespaces
 * and mount trees they build (the python tests beside this file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/config.h"
#include "agent/steps.h"
#include "agent/steps/step-model.h"
#include "cleanup.h"
#include "hostexec.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"

int main(int argc, char **argv)
{
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        AgentConfig config = { .max_concurrent_steps = 1 };
        StepResult res = {};
        StepContext ctx = { .config = &config,
                            .host_id = "00000000-0000-0000-0000-000000000000",
                            .infra_env_id = "00000000-0000-0000-0000-000000000000",
                            .step_id = "test" };
        bool validate_only = false;
        char *text;
        int i = 1, r;

        log_setup("step-run");
        for (; i < argc && startswith(argv[i], "--"); i++) {
                if (streq(argv[i], "--dry-run"))
                        config.dry_run = true;
                else if (streq(argv[i], "--validate-only"))
                        validate_only = true;
                else if (streq(argv[i], "--lab-nics") && i + 1 < argc)
                        config.lab_nics = argv[++i];
                else if (streq(argv[i], "--cacert") && i + 1 < argc)
                        config.cacert = argv[++i];
                else {
                        fprintf(stderr, "step-run: unknown option %s\n", argv[i]);
                        return 2;
                }
        }
        if (i >= argc) {
                fprintf(stderr, "usage: step-run [--dry-run] [--lab-nics GLOBS] [--cacert FILE] STEP_TYPE "
                                "[ARG...]\n");
                return 2;
        }
        r = host_exec_new(HOST_EXEC_DIRECT, HOST_NS_AGENT, &host);
        if (r < 0) {
                fprintf(stderr, "step-run: cannot set up host commands: %s\n", strerror(-r));
                return 1;
        }
        ctx.host = host;

        if (validate_only) {
                const ModelSchema *m = step_request_model(step_type_from_string(argv[i]));
                json_object *doc = NULL;

                if (!m || i + 1 >= argc) {
                        fprintf(stderr, "step-run: no request model for %s, or no argument\n", argv[i]);
                        return 2;
                }
                if (model_parse_arg(argv[i + 1], m, &doc, &res.error) < 0)
                        res.exit_code = -1;
                json_object_put(doc);
        } else
                step_run(&ctx, argv[i], argv + i + 1, &res);

        o = json_new_object();
        if (!o || json_add_int64(o, "exit_code", res.exit_code) < 0 ||
            json_add_string(o, "output", strempty(res.output)) < 0 ||
            json_add_string(o, "error", strempty(res.error)) < 0 ||
            json_add_bool(o, "end_runner", res.end_runner) < 0)
                return 1;
        text = json_to_string(o, 0);
        if (!text)
                return 1;
        puts(text);
        free(text);
        step_result_done(&res);
        return 0;
}
