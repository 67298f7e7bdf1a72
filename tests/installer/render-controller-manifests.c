/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render-controller-manifests INPUT-JSON: prints, as one JSON array of
 * {"file", "secret", "object"}, the manifests installer/controller-manifests.c
 * renders for the input (the fields of ControllerManifestsInput by their C
 * names; absent: zero). For the tests that run what the bootstrap lays
 * down: tests/packaging/test_images.py runs the Job's container in cradle's
 * image from it, so the command line, the environment and the mounts are
 * the rendered ones, not a copy of them.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "installer/controller-manifests.h"
#include "jsonutil.h"
#include "strutil.h"

static bool flag(json_object *in, const char *key)
{
        bool b = false;

        (void)json_get_bool(in, key, &b);
        return b;
}

int main(int argc, char **argv)
{
        _cleanup_(json_object_putp) json_object *in = NULL, *out = NULL;
        _cleanup_free_ char *text = NULL;
        ControllerManifestsInput input;
        Manifest *m = NULL;
        size_t n = 0;
        int64_t count = 3;

        if (argc != 2 || json_parse(argv[1], strlen(argv[1]), BUF_MAX_SMALL_FILE, &in, NULL) < 0) {
                fprintf(stderr, "usage: render-controller-manifests INPUT-JSON\n");
                return 2;
        }
        (void)json_get_int64(in, "control_plane_count", &count);
        input = (ControllerManifestsInput){
                .cluster_id = json_get_string(in, "cluster_id"),
                .inventory_url = json_get_string(in, "inventory_url"),
                .skip_cert_verification = flag(in, "skip_cert_verification"),
                .ca_cert_path = json_get_string(in, "ca_cert_path"),
                .check_cluster_version = flag(in, "check_cluster_version"),
                .control_plane_count = (int)count,
                .must_gather_image = json_get_string(in, "must_gather_image"),
                .pull_secret_token = json_get_string(in, "pull_secret_token"),
                .controller_image = json_get_string(in, "controller_image"),
                .openshift_version = json_get_string(in, "openshift_version"),
                .service_ips = json_get_string(in, "service_ips"),
                .notify_num_reboots = flag(in, "notify_num_reboots"),
        };
        if (controller_manifests(&input, &m, &n) < 0 || !(out = json_new_array())) {
                fprintf(stderr, "render-controller-manifests: out of memory\n");
                return 1;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_new_object();
                if (!e || json_append(out, e) < 0 || json_add(e, "file", json_new_string(m[i].file)) < 0 ||
                    json_add(e, "secret", json_new_bool(m[i].secret)) < 0 ||
                    json_add(e, "object", json_object_get(m[i].object)) < 0) {
                        manifests_free(m, n);
                        return 1;
                }
        }
        manifests_free(m, n);
        text = json_to_string(out, JSON_FORMAT_PRETTY);
        if (!text)
                return 1;
        puts(text);
        return 0;
}
