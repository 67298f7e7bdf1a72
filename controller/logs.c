/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assisted/controller-contract.h"
#include "buf.h"
#include "cleanup.h"
#include "controller/logs.h"
#include "jsonutil.h"
#include "strutil.h"
#include "targz.h"

bool logs_gather_needed(bool cluster_failed, char *const *failed_operators)
{
        return cluster_failed || strv_length(failed_operators) > 0;
}

int must_gather_images(const char *config, bool cluster_failed, char *const *failed_operators, char ***ret)
{
        _cleanup_(json_object_putp) json_object *map = NULL;
        _cleanup_strv_free_ char **images = NULL;
        const char *ocp;

        images = calloc(1, sizeof(char *));
        if (!images)
                return -ENOMEM;
        if (isempty(config)) {
                *ret = TAKE_PTR(images);
                return 0;
        }
        /* json.Unmarshal into map[string]string: anything else is "not a
         * JSON", passed as is */
        if (json_parse(config, strlen(config), BUF_MAX_JSON_DOC, &map, NULL) < 0 ||
            !json_object_is_type(map, json_type_object)) {
                if (strv_extend(&images, config) < 0)
                        return -ENOMEM;
                *ret = TAKE_PTR(images);
                return 0;
        }
        json_object_object_foreach (map, key, value) {
                (void)key;
                if (!json_object_is_type(value, json_type_string)) {
                        if (strv_extend(&images, config) < 0)
                                return -ENOMEM;
                        *ret = TAKE_PTR(images);
                        return 0;
                }
        }
        ocp = json_get_string(map, "ocp");
        if (cluster_failed && !isempty(ocp) && strv_extend(&images, ocp) < 0)
                return -ENOMEM;
        STRV_FOREACH (op, failed_operators) {
                const char *img = json_get_string(map, *op);
                if (!isempty(img) && !strv_contains(images, img) && strv_extend(&images, img) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(images);
        return 0;
}

char **must_gather_argv(const char *kubeconfig, char *const *images)
{
        _cleanup_strv_free_ char **argv = NULL;

        if (strv_extend(&argv, "oc") < 0 || strv_extendf(&argv, "--kubeconfig=%s", kubeconfig) < 0 ||
            strv_extend(&argv, "adm") < 0 || strv_extend(&argv, "must-gather") < 0)
                return NULL;
        STRV_FOREACH (img, images)
                if (strv_extendf(&argv, "--image=%s", *img) < 0)
                        return NULL;
        return TAKE_PTR(argv);
}

char *controller_log_unavailable(const char *pod_error, const char *file_error)
{
        return strdup_printf("Failed to get the logs of the %s pod (%s) and to read %s (%s)\n",
                             CONTROLLER_NAME, strna(pod_error), CONTROLLER_LOG_FILE, strna(file_error));
}

const ClusterGatherItem cluster_gather_items[CLUSTER_GATHER_N_ITEMS] = {
        { CLUSTER_GATHER_DIR "/nodes.json", "the Nodes (a NodeList)", CLUSTER_GATHER_NODES },
        { CLUSTER_GATHER_DIR "/clusteroperators.json", "the ClusterOperators (a ClusterOperatorList)",
          CLUSTER_GATHER_CLUSTER_OPERATORS },
        { CLUSTER_GATHER_DIR "/events.json", "the Events of every namespace (an EventList)",
          CLUSTER_GATHER_EVENTS },
};

char *cluster_gather_readme(const char *why_no_oc, char *const *errors)
{
        _cleanup_free_ char *text = NULL;

        text = strdup_printf("This is not a must-gather: %s, so the controller (cradle) read what it could "
                             "of the cluster itself, with its own credentials.\n\n"
                             "%s is the controller's log.\n",
                             strna(why_no_oc), CONTROLLER_LOGS_ENTRY);
        for (size_t i = 0; text && i < CLUSTER_GATHER_N_ITEMS; i++) {
                const char *err = errors ? errors[i] : NULL;
                char *more = err ? strdup_printf("%s%s: not collected: %s\n", text,
                                                 cluster_gather_items[i].member, err)
                                 : strdup_printf("%s%s: %s\n", text, cluster_gather_items[i].member,
                                                 cluster_gather_items[i].what);
                free(text);
                text = more;
        }
        return TAKE_PTR(text);
}

int logs_archive_write(int fd, const LogsMember *members, size_t n)
{
        _cleanup_(tar_writer_freep) TarWriter *t = NULL;
        int r;

        r = tar_writer_new(fd, time(NULL), &t);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const LogsMember *m = &members[i];
                r = m->path ? tar_writer_add_file_mode(t, m->name, m->path, 0644)
                            : tar_writer_add_data(t, m->name, 0644, m->data, m->len);
                if (r < 0)
                        return r;
        }
        return tar_writer_finish(t);
}
