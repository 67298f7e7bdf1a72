/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "controller/reboots.h"
#include "jsonutil.h"
#include "strutil.h"

unsigned reboots_count(const char *out)
{
        unsigned n = 0;

        for (const char *line = out; line && *line;) {
                const char *nl = strchr(line, '\n');

                if (startswith(line, "reboot "))
                        n++;
                line = nl ? nl + 1 : NULL;
        }
        return n;
}

char **reboots_argv(const char *kubeconfig, const char *node)
{
        _cleanup_free_ char *target = strdup_printf("node/%s", node);
        char **argv = NULL;

        if (!target)
                return NULL;
        if (strv_extend(&argv, "oc") < 0 || strv_extend(&argv, "--kubeconfig") < 0 ||
            strv_extend(&argv, kubeconfig) < 0 || strv_extend(&argv, "debug") < 0 ||
            strv_extend(&argv, target) < 0 || strv_extend(&argv, "--") < 0 ||
            strv_extend(&argv, "chroot") < 0 || strv_extend(&argv, "/host") < 0 ||
            strv_extend(&argv, "last") < 0 || strv_extend(&argv, "reboot") < 0) {
                strv_free(argv);
                return NULL;
        }
        return argv;
}

/* strfmt.DateTime: RFC 3339 with milliseconds, UTC */
static void format_event_time(usec_t now, char ret[static 32])
{
        time_t secs = (time_t)(now / USEC_PER_SEC);
        struct tm tm;
        char base[24];

        gmtime_r(&secs, &tm);
        strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(ret, 32, "%s.%03uZ", base, (unsigned)(now % USEC_PER_SEC / 1000));
}

json_object *reboots_event(const char *cluster_id, const char *host_id, const char *infra_env_id,
                           const char *node, unsigned n, usec_t now)
{
        _cleanup_(json_object_putp) json_object *ev = json_new_object();
        _cleanup_free_ char *message =
                strdup_printf("Node %s has been rebooted %u times before completing installation", node, n);
        char when[32];

        format_event_time(now, when);
        if (!ev || !message || json_add_string(ev, "category", "user") < 0 ||
            (!isempty(cluster_id) && json_add_string(ev, "cluster_id", cluster_id) < 0) ||
            json_add_string(ev, "event_time", when) < 0 ||
            (!isempty(host_id) && json_add_string(ev, "host_id", host_id) < 0) ||
            (!isempty(infra_env_id) && json_add_string(ev, "infra_env_id", infra_env_id) < 0) ||
            json_add_string(ev, "message", message) < 0 ||
            json_add_string(ev, "name", REBOOTS_EVENT_NAME) < 0 ||
            json_add_string(ev, "severity", "info") < 0)
                return NULL;
        return TAKE_PTR(ev);
}
