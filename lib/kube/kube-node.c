/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "kube-node.h"
#include "strutil.h"

bool kube_node_ready(json_object *node)
{
        json_object *conds = json_get_path(node, "status.conditions");

        /* a Node from another API server: anything can be there */
        for (size_t i = 0;
             json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
                json_object *c = json_object_array_get_idx(conds, i);
                if (streq_ptr(json_get_string(c, "type"), "Ready"))
                        return streq_ptr(json_get_string(c, "status"), "True");
        }
        return false;
}

char **kube_node_internal_ips(json_object *node)
{
        json_object *addrs = json_get_path(node, "status.addresses");
        _cleanup_strv_free_ char **l = NULL;

        for (size_t i = 0;
             json_object_is_type(addrs, json_type_array) && i < json_object_array_length(addrs); i++) {
                json_object *a = json_object_array_get_idx(addrs, i);
                const char *ip = json_get_string(a, "address");
                if (streq_ptr(json_get_string(a, "type"), "InternalIP") && !isempty(ip) &&
                    strv_extend(&l, ip) < 0)
                        return NULL;
        }
        if (!l)
                return calloc(1, sizeof(char *));
        return TAKE_PTR(l);
}

int kube_node_taint_index(json_object *node, const char *key)
{
        json_object *taints = json_get_path(node, "spec.taints");

        for (size_t i = 0; taints && i < json_object_array_length(taints); i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(taints, i), "key"), key))
                        return (int)i;
        return -ENOENT;
}

json_object *kube_node_taint_remove_patch(unsigned index, const char *key)
{
        _cleanup_(json_object_putp) json_object *patch = json_object_new_array(), *test = NULL,
                                                *remove = NULL;
        _cleanup_free_ char *key_path = strdup_printf("/spec/taints/%u/key", index),
                            *path = strdup_printf("/spec/taints/%u", index);

        /* the node controller adds and removes its own taints between our
         * read and this patch: the test makes the server refuse the patch
         * rather than remove whichever taint has moved to that index */
        test = json_object_new_object();
        remove = json_object_new_object();
        if (!patch || !key_path || !path || !test || !remove || json_add_string(test, "op", "test") < 0 ||
            json_add_string(test, "path", key_path) < 0 || json_add_string(test, "value", key) < 0 ||
            json_add_string(remove, "op", "remove") < 0 || json_add_string(remove, "path", path) < 0 ||
            json_object_array_add(patch, TAKE_PTR(test)) < 0 ||
            json_object_array_add(patch, TAKE_PTR(remove)) < 0)
                return NULL;
        return TAKE_PTR(patch);
}
