/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inventory: the host's Inventory document, collected in-process (the Go
 * agent starts a privileged container with host views mounted for this).
 *
 * Arguments: [host_id] and, from services since May 2026, optionally
 * "--output-max-size=N" and "--disk-min-size=N" (both > 0 when sent).
 */
#include <json-c/json.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Drops disks smaller than min_size; returns how many went. */
static unsigned drop_small_disks(json_object *inv, uint64_t min_size)
{
        json_object *disks = json_get(inv, "disks"), *kept;
        unsigned dropped = 0;

        if (!json_object_is_type(disks, json_type_array))
                return 0;
        kept = json_object_new_array();
        if (!kept)
                return 0;
        for (size_t i = 0; i < json_object_array_length(disks); i++) {
                json_object *d = json_object_array_get_idx(disks, i);
                int64_t size = 0;
                if (json_get_int64(d, "size_bytes", &size) >= 0 && (uint64_t)size < min_size) {
                        dropped++;
                        continue;
                }
                json_object_array_add(kept, json_object_get(d));
        }
        json_object_object_add(inv, "disks", kept);
        return dropped;
}

static int add_reason(json_object *reasons, const char *fmt, ...) _printf_(2, 3);
static int add_reason(json_object *reasons, const char *fmt, ...)
{
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&text, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        return json_append(reasons, json_new_string(text));
}

/* The service's size limits (args of services since May 2026). The Go agent
 * of that time did not implement them yet; cradle reads them as their names
 * say and reports what it left out in the model's "truncation" object:
 * "partial" when parts were dropped, "full" when only the host's identity
 * (hostname, system vendor, cpu, memory) fits. */
static int apply_limits(json_object *inv, uint64_t disk_min_size, uint64_t max_size, char **ret_text)
{
        _cleanup_(json_object_putp) json_object *reasons = json_new_array();
        static const char *const droppable[] = { "gpus", "routes" };
        _cleanup_free_ char *text = NULL;
        const char *type = NULL;
        int r;

        if (!reasons)
                return -ENOMEM;
        if (disk_min_size > 0) {
                unsigned n = drop_small_disks(inv, disk_min_size);
                if (n > 0) {
                        r = add_reason(reasons, "%u disks smaller than %" PRIu64 " bytes omitted", n,
                                       disk_min_size);
                        if (r < 0)
                                return r;
                        type = "partial";
                }
        }

        text = json_to_string(inv, 0);
        for (size_t i = 0; text && max_size > 0 && strlen(text) > max_size && i < ELEMENTSOF(droppable);
             i++) {
                r = json_add(inv, droppable[i], json_new_array());
                if (r >= 0)
                        r = add_reason(reasons, "%s omitted: inventory larger than %" PRIu64 " bytes",
                                       droppable[i], max_size);
                if (r < 0)
                        return r;
                type = "partial";
                free(text);
                text = json_to_string(inv, 0);
        }
        if (text && max_size > 0 && strlen(text) > max_size) {
                static const char *const keep[] = { "cpu", "hostname", "memory", "system_vendor" };
                _cleanup_(json_object_putp) json_object *small = json_new_object();
                if (!small)
                        return -ENOMEM;
                for (size_t i = 0; i < ELEMENTSOF(keep); i++) {
                        json_object *v = json_get(inv, keep[i]);
                        if (v && json_add(small, keep[i], json_object_get(v)) < 0)
                                return -ENOMEM;
                }
                r = add_reason(reasons, "inventory larger than %" PRIu64 " bytes", max_size);
                if (r < 0)
                        return r;
                type = "full";
                {
                        json_object *t = json_new_object();
                        if (!t || json_add(t, "reasons", json_object_get(reasons)) < 0 ||
                            json_add_string(t, "type", type) < 0 || json_add(small, "truncation", t) < 0)
                                return -ENOMEM;
                }
                free(text);
                text = json_to_string(small, 0);
        } else if (type) {
                json_object *t = json_new_object();
                if (!t || json_add(t, "reasons", json_object_get(reasons)) < 0 ||
                    json_add_string(t, "type", type) < 0 || json_add(inv, "truncation", t) < 0)
                        return -ENOMEM;
                free(text);
                text = json_to_string(inv, 0);
        }
        if (!text)
                return -ENOMEM;
        *ret_text = TAKE_PTR(text);
        return 0;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *inv = NULL;
        InventoryOptions o = {
                .dry_run = ctx->config->dry_run,
                .forced_hostname = ctx->config->force_hostname,
                .forced_mac = ctx->config->force_mac,
                .forced_ipv4 = ctx->config->forced_ipv4,
                .lab_disks = ctx->config->lab_disks,
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
        r = inventory_collect(&o, &inv);
        if (r < 0)
                return step_fail(ret, -1, "cannot collect the inventory: %s", strerror(-r));
        r = apply_limits(inv, disk_min_size, max_size, &text);
        if (r < 0)
                return r;
        return step_succeed(ret, text);
}

const StepHandler step_inventory = {
        .type = STEP_INVENTORY,
        .min_args = 1,
        .max_args = 3,
        .run = run,
};
