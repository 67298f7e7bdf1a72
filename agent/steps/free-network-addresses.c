/* SPDX-License-Identifier: Apache-2.0 */
/*
 * free-network-addresses: which addresses of the host's networks no host
 * answers for (the service offers them as VIPs).
 *
 * Argument: FreeAddressesRequest, ["198.51.100.0/24", ...]. Output:
 * FreeNetworksAddresses. The Go agent runs its free_addresses program (an
 * nmap sweep) in a container named free_addresses_scanner, unless one is
 * running already (then: exit 0, no output); here the same scan runs
 * in-process (free-addresses.c), one at a time: a request that arrives
 * while a scan of the same networks runs gets that scan's result (not the
 * Go agent's empty output, which the service refuses). Its exit code is the
 * program's, so an error is 255 (the program's -1), not -1 (which is for
 * an invalid argument); the output is not logged (it is long).
 */
#include <stdlib.h>

#include "agent/steps.h"
#include "cleanup.h"
#include "free-addresses.h"
#include "step-util.h"

static StepCoalescer scans = STEP_COALESCER_INIT;

static int scan(void *userdata, StepResult *ret)
{
        const char *arg = userdata;
        char *out = NULL, *err = NULL;
        int r, code;

        r = free_addresses_run(arg, &out, &err, &code);
        if (r < 0)
                return r;
        ret->output = out;
        ret->error = err;
        ret->exit_code = code < 0 ? 255 : code; /* a process exit status */
        return 0;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL;
        int r;

        (void)ctx;
        r = step_parse_arg(args[0], &model_free_addresses_request, ret, &req);
        if (r <= 0)
                return r;
        return step_coalesce(&scans, args[0], scan, args[0], ret);
}

const StepHandler step_free_network_addresses = {
        .type = STEP_FREE_NETWORK_ADDRESSES,
        .min_args = 1,
        .max_args = 1,
        .run = run,
        .flags = STEP_QUIET_OUTPUT,
};
