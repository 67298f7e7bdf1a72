/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/cluster-hosts.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/labels.h"
#include "jsonutil.h"
#include "kube/kube-node.h"
#include "kube/kube.h"
#include "strutil.h"

void node_labels_plan_done(NodeLabelsPlan *p)
{
        strv_free(p->nodes);
        for (size_t i = 0; i < p->n; i++)
                json_object_put(p->patches[i]);
        free(p->patches);
        *p = (NodeLabelsPlan){};
}

/* node_labels as a JSON object, NULL when it is none */
static json_object *labels_parse(const char *labels_json)
{
        json_object *o = NULL;

        if (isempty(labels_json) ||
            json_parse(labels_json, strlen(labels_json), BUF_MAX_JSON_DOC, &o, NULL) < 0)
                return NULL;
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

bool node_labels_present(json_object *node, const char *labels_json)
{
        _cleanup_(json_object_putp) json_object *want = labels_parse(labels_json);
        json_object *have = json_get_path(node, "metadata.labels");

        if (!want)
                return true;
        json_object_object_foreach (want, key, value) {
                const char *v =
                        json_object_is_type(value, json_type_string) ? json_object_get_string(value) : NULL;
                if (!v || !streq_ptr(json_get_string(have, key), v))
                        return false;
        }
        return true;
}

static json_object *labels_patch(const char *labels_json)
{
        _cleanup_(json_object_putp) json_object *labels = labels_parse(labels_json), *patch = NULL,
                                                *meta = NULL;

        if (!labels)
                return NULL;
        patch = json_new_object();
        meta = json_new_object();
        if (!patch || !meta || json_add(meta, "labels", TAKE_PTR(labels)) < 0 ||
            json_add(patch, "metadata", TAKE_PTR(meta)) < 0)
                return NULL;
        return TAKE_PTR(patch);
}

/* the service's host of a ClusterHost (by id), borrowed */
static json_object *service_host(json_object *cluster, const char *id)
{
        json_object *hosts = json_get(cluster, "hosts");

        for (size_t i = 0; hosts && i < json_object_array_length(hosts); i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                if (streq_ptr(json_get_string(h, "id"), id))
                        return h;
        }
        return NULL;
}

int node_labels_plan(json_object *cluster, json_object *nodes, NodeLabelsPlan *ret, char **reterr)
{
        _cleanup_(cluster_hosts_done) ClusterHosts all = {};
        _cleanup_free_ const char **labels = NULL;
        NodeLabelsPlan p = {};
        ClusterHosts asking = {};
        json_object *items;
        int r;

        r = cluster_hosts_from_cluster(cluster, NULL, &all, reterr);
        if (r < 0)
                return r;
        asking.hosts = calloc(all.n + 1, sizeof(ClusterHost));
        labels = calloc(all.n + 1, sizeof(char *));
        if (!asking.hosts || !labels) {
                free(asking.hosts);
                return -ENOMEM;
        }
        /* getAIHostsWithLabels: without disabled (already left out) and
         * error hosts; the matching sees only these (borrowed entries) */
        for (size_t i = 0; i < all.n; i++) {
                json_object *h = service_host(cluster, all.hosts[i].id);
                const char *l = json_get_string(h, "node_labels");

                if (streq(all.hosts[i].status, "error") || isempty(l))
                        continue;
                if (streq(all.hosts[i].role, "worker") &&
                    !isempty(json_get_string(h, "machine_config_pool_name")))
                        p.pause_worker_pool = true;
                labels[asking.n] = l;
                asking.hosts[asking.n++] = all.hosts[i];
        }
        p.labelled = asking.n;
        items = json_get(nodes, "items");
        for (size_t i = 0; p.labelled > 0 && items && i < json_object_array_length(items); i++) {
                json_object *node = json_object_array_get_idx(items, i);
                json_object *patch, **grown;
                int h;

                if (!kube_node_ready(node))
                        continue;
                h = cluster_hosts_match_node(&asking, node);
                if (h < 0)
                        continue;
                if (node_labels_present(node, labels[h])) {
                        p.present++;
                        continue;
                }
                patch = labels_patch(labels[h]);
                grown = reallocarray(p.patches, p.n + 1, sizeof(json_object *));
                if (grown)
                        p.patches = grown;
                if (!patch || !grown || strv_extend(&p.nodes, strempty(kube_object_name(node))) < 0) {
                        json_object_put(patch);
                        free(asking.hosts);
                        node_labels_plan_done(&p);
                        return -ENOMEM;
                }
                p.patches[p.n++] = patch;
        }
        free(asking.hosts);
        *ret = p;
        return 0;
}

bool pool_pause_needed(json_object *pool, bool pause)
{
        bool paused = false;

        (void)json_get_bool(json_get(pool, "spec"), "paused", &paused);
        return paused != pause;
}

json_object *pool_paused_patch(bool pause)
{
        _cleanup_(json_object_putp) json_object *patch = json_new_object(), *spec = json_new_object();

        if (!patch || !spec || json_add_bool(spec, "paused", pause) < 0 ||
            json_add(patch, "spec", TAKE_PTR(spec)) < 0)
                return NULL;
        return TAKE_PTR(patch);
}
