/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inventory: the host's Inventory document, collected in-process (the Go
 * agent starts a privileged container with host views mounted for this).
 *
 * Arguments: [host_id] and, from services since May 2026, optionally
 * "--output-max-size=N" and "--disk-min-size=N" (both > 0 when sent).
 */
#include <json-c/json.h>
#include <stdlib.h>

#include "cleanup.h"
#include "inventory/inventory.h"
#include "jsonutil.h"
#include "log.h"
#include "agent/steps.h"
#include "strutil.h"
#include "uuid.h"

static int parse_size_arg(const char *arg, const char *name, uint64_t *ret)
{
        const char *v = startswith(arg, name);

        if (!v || *v != '=')
                return 0;
        return safe_atou64(v + 1, ret) < 0 ? -EINVAL : 1;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *inv = NULL;
        InventoryOptions o = {
                .dry_run = ctx->config->dry_run,
                .forced_hostname = ctx->config->force_hostname,
                .forced_mac = ctx->config->force_mac,
                .forced_ipv4 = ctx->config->forced_ipv4,
        };
        uint64_t max_size = 0, disk_min_size = 0;
        char *text;
        int r;

        if (!uuid_is_valid(args[0]))
                return step_fail(ret, -1, "inventory: host id '%s' is not a valid UUID", args[0]);
        for (size_t i = 1; args[i]; i++) {
                int a = parse_size_arg(args[i], "--output-max-size", &max_size);
                int b = a != 0 ? 0 : parse_size_arg(args[i], "--disk-min-size", &disk_min_size);
                if (a < 0 || b < 0 || (a == 0 && b == 0))
                        return step_fail(ret, -1, "inventory: invalid argument '%s'", args[i]);
        }
        /* accepted as the 2026 service sends them; the inventory module
         * has no size limits to apply them to yet */
        (void)disk_min_size;
        (void)max_size;

        r = inventory_collect(&o, &inv);
        if (r < 0)
                return step_fail(ret, -1, "cannot collect the inventory: %s", strerror(-r));
        text = json_to_string(inv, 0);
        if (!text)
                return -ENOMEM;
        return step_succeed(ret, text);
}

const StepHandler step_inventory = {
        .type = STEP_INVENTORY,
        .min_args = 1,
        .max_args = 3,
        .run = run,
};
