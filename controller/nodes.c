/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "assisted/cluster-hosts.h"
#include "cleanup.h"
#include "controller/nodes.h"
#include "jsonutil.h"
#include "kube/kube-node.h"
#include "strutil.h"

static bool host_installed(const ClusterHost *h)
{
        return streq_ptr(h->status, "installed");
}

static bool stage_is(const ClusterHost *h, HostStage s)
{
        return streq_ptr(h->stage, host_stage_to_string(s));
}

NodesProgress nodes_progress(const ClusterHosts *hosts, size_t *ret_remaining)
{
        size_t remaining = 0, failed = 0;

        for (size_t i = 0; i < hosts->n; i++) {
                if (host_installed(&hosts->hosts[i]))
                        continue;
                remaining++;
                if (streq_ptr(hosts->hosts[i].status, "error"))
                        failed++;
        }
        if (ret_remaining)
                *ret_remaining = remaining;
        if (remaining == 0)
                return NODES_ALL_INSTALLED;
        if (failed == remaining)
                return NODES_ALL_FAILED;
        return NODES_WAITING;
}

/* common.HostMatchByNameOrIPAddress over GetHostsInStatus(not installed)
 * for names and every host for addresses */
static int node_host(const ClusterHosts *hosts, json_object *node)
{
        const char *name = json_get_string(json_get(node, "metadata"), "name");
        _cleanup_free_ char *lower = name ? strdup_lower(name) : NULL;
        _cleanup_strv_free_ char **ips = NULL;
        int found = -ENOENT;

        if (!lower)
                return name ? -ENOMEM : -ENOENT;
        for (size_t i = 0; i < hosts->n; i++)
                if (!host_installed(&hosts->hosts[i]) && streq_ptr(hosts->hosts[i].name, lower))
                        return (int)i;
        ips = kube_node_internal_ips(node);
        if (!ips)
                return -ENOMEM;
        STRV_FOREACH (ip, ips)
                for (size_t i = 0; i < hosts->n; i++)
                        if (strv_contains(hosts->hosts[i].ips, *ip)) {
                                found = (int)i;
                                break;
                        }
        return found;
}

void node_status_actions_free(NodeStatusAction *a, size_t n)
{
        for (size_t i = 0; a && i < n; i++)
                free(a[i].node);
        free(a);
}

int node_status_plan(const ClusterHosts *hosts, json_object *nodes, bool remove_uninitialized_taint,
                     NodeStatusAction **ret, size_t *ret_n)
{
        json_object *items = json_get(nodes, "items");
        NodeStatusAction *out = NULL;
        size_t n = 0;

        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *node = json_object_array_get_idx(items, i);
                const char *name = json_get_string(json_get(node, "metadata"), "name");
                bool ready = kube_node_ready(node);
                NodeStatusAction a = { .host = -1 }, *grown;
                int host;

                if (isempty(name))
                        continue;
                host = node_host(hosts, node);
                if (host == -ENOMEM)
                        goto oom;
                if (host >= 0) {
                        const ClusterHost *h = &hosts->hosts[host];
                        a.host = host;
                        a.report_joined =
                                stage_is(h, HOST_STAGE_CONFIGURING) || stage_is(h, HOST_STAGE_REBOOTING);
                        a.untaint = !ready && remove_uninitialized_taint;
                        a.report_done = ready && !stage_is(h, HOST_STAGE_DONE);
                        if (!a.report_joined && !a.untaint && !a.report_done)
                                continue;
                }
                a.node = strdup(name);
                grown = reallocarray(out, n + 1, sizeof(NodeStatusAction));
                if (!a.node || !grown) {
                        free(a.node);
                        if (grown)
                                out = grown;
                        goto oom;
                }
                out = grown;
                out[n++] = a;
        }
        *ret = out;
        *ret_n = n;
        return 0;
oom:
        node_status_actions_free(out, n);
        return -ENOMEM;
}

int configuring_plan(const ClusterHosts *hosts, const char *mcs_log, int **ret)
{
        _cleanup_free_ int *out = calloc(hosts->n + 1, sizeof(int));
        size_t n = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < hosts->n; i++) {
                const ClusterHost *h = &hosts->hosts[i];
                if (stage_is(h, HOST_STAGE_CONFIGURING) || stage_is(h, HOST_STAGE_JOINED) ||
                    stage_is(h, HOST_STAGE_DONE))
                        continue;
                if (mcs_log_shows(mcs_log, h->ips))
                        out[n++] = (int)i;
        }
        out[n] = -1;
        *ret = TAKE_PTR(out);
        return 0;
}
