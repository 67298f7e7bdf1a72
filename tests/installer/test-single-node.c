/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single node's master.ign merge (installer/single-node.h): the host's
 * config over bootkube's master.ign as spec 3.2, its pointer dropped, the
 * result validated (an invalid one names the path that is wrong), newer
 * specs refused. tests/installer/test_bootstrap.py runs it end to end and
 * has the real Ignition validator check the written file.
 */
#include <json-c/json.h>
#include <string.h>

#include "cleanup.h"
#include "installer/single-node.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

static const char *master =
        "{\"ignition\": {\"version\": \"3.2.0\"}, \"storage\": {\"files\": ["
        "{\"path\": \"/etc/kubernetes/bootstrap-secrets/kubeconfig\", \"mode\": 384, \"contents\": "
        "{\"source\": "
        "\"data:,kubeconfig\"}},"
        "{\"path\": \"/etc/hostname\", \"mode\": 420, \"overwrite\": true, \"contents\": {\"source\": "
        "\"data:,from-bootkube\"}}]},"
        " \"systemd\": {\"units\": [{\"name\": \"kubelet.service\", \"enabled\": true, \"contents\": "
        "\"[Unit]\\n[Install]\\nWantedBy=multi-user.target\\n\"}]}}";

static json_object *merge_ok(const char *host)
{
        _cleanup_free_ char *out = NULL, *err = NULL;
        json_object *o = NULL;
        size_t len = 0;

        if (single_node_merge(master, strlen(master), host, strlen(host), &out, &len, &err) < 0)
                test_fail(__FILE__, __LINE__, "merge failed: %s", strna(err));
        ASSERT_OK(json_parse(out, len, 1 << 20, &o, NULL));
        return o;
}

static const char *file_source(json_object *cfg, const char *path)
{
        json_object *files = json_get_path(cfg, "storage.files");

        for (size_t i = 0; files && i < json_object_array_length(files); i++) {
                json_object *f = json_object_array_get_idx(files, i);
                if (streq_ptr(json_get_string(f, "path"), path))
                        return json_get_string(json_get(f, "contents"), "source");
        }
        return NULL;
}

TEST(host_overrides_win_and_the_pointer_goes)
{
        _cleanup_(json_object_putp) json_object *o = merge_ok(
                "{\"ignition\": {\"version\": \"3.2.0\", \"config\": {\"merge\": [{\"source\": "
                "\"https://api-int.sno.example.com:22623/config/master\"}]}}, \"storage\": {\"files\": ["
                "{\"path\": \"/etc/hostname\", \"mode\": 420, \"overwrite\": true, \"contents\": "
                "{\"source\": "
                "\"data:,sno-0\"}},"
                "{\"path\": \"/etc/NetworkManager/system-connections/eth0.nmconnection\", \"mode\": 384, "
                "\"contents\": {\"source\": \"data:,x\"}}]}}");

        ASSERT_STREQ(json_get_string(json_get(o, "ignition"), "version"), "3.2.0");
        ASSERT_NULL(json_get_path(o, "ignition.config.merge"));
        ASSERT_STREQ(file_source(o, "/etc/hostname"), "data:,sno-0");
        ASSERT_STREQ(file_source(o, "/etc/kubernetes/bootstrap-secrets/kubeconfig"), "data:,kubeconfig");
        ASSERT_STREQ(file_source(o, "/etc/NetworkManager/system-connections/eth0.nmconnection"), "data:,x");
        ASSERT_EQ(json_object_array_length(json_get_path(o, "systemd.units")), 1u);
}

TEST(older_specs_are_translated)
{
        _cleanup_(json_object_putp) json_object *o =
                merge_ok("{\"ignition\": {\"version\": \"3.1.0\"}, \"storage\": {\"files\": [{\"path\": "
                         "\"/etc/motd\", "
                         "\"contents\": {\"source\": \"data:,hi\"}}]}}");

        ASSERT_STREQ(json_get_string(json_get(o, "ignition"), "version"), "3.2.0");
        ASSERT_STREQ(file_source(o, "/etc/motd"), "data:,hi");
}

TEST(refusals)
{
        static const struct {
                const char *host;
                int r;
                const char *why;
        } cases[] = {
                { "{\"ignition\": {\"version\": \"3.3.0\"}}", -EOPNOTSUPP,
                  "the host's ignition is Ignition spec 3.3.0; the single-node merge takes 3.2 at most" },
                { "{\"ignition\": {\"version\": \"3.2.0\"}, \"storage\": {\"files\": [{\"path\": "
                  "\"etc/relative\", "
                  "\"contents\": {\"source\": \"data:,x\"}}]}}",
                  -EBADMSG, "merged ignition config is invalid: $.storage.files[2].path" },
                { "{\"ignition\": {\"version\": \"3.2.0\"}, \"systemd\": {\"units\": [{\"name\": \"nodot\", "
                  "\"contents\": \"x\"}]}}",
                  -EBADMSG, "merged ignition config is invalid: $.systemd.units[1].name" },
                { "{\"ignition\": ", -EBADMSG, "cannot parse the host's ignition" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL, *err = NULL;
                size_t len;
                int r = single_node_merge(master, strlen(master), cases[i].host, strlen(cases[i].host), &out,
                                          &len, &err);
                if (r != cases[i].r)
                        test_fail(__FILE__, __LINE__, "case %zu: %d (%s)", i, r, strna(err));
                ASSERT_CONTAINS(err, cases[i].why);
                ASSERT_NULL(out);
        }
}

DEFINE_TEST_MAIN
