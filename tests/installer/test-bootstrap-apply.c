/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Laying bootstrap.ign onto the live root (installer/bootstrap-apply.h):
 * the machine-config-daemon's podman command line, and the native plan as
 * the MCD's once-from would write the config (what is written, removed,
 * enabled, preset, ignored) and what it refuses before writing anything.
 * tests/installer/test_bootstrap.py lays the same bootstrap.ign both ways
 * and compares the trees.
 */
#include <string.h>

#include "cleanup.h"
#include "ignition/ignition.h"
#include "installer/bootstrap-apply.h"
#include "shell.h"
#include "strutil.h"
#include "tests.h"

static IgnConfig *parse(const char *text)
{
        IgnConfig *c = NULL;
        IgnReport rep = IGN_REPORT_INIT;

        if (ign_config_parse(text, strlen(text), 0, &c, &rep) < 0) {
                _cleanup_free_ char *why = ign_report_format(&rep);
                ign_report_done(&rep);
                test_fail(__FILE__, __LINE__, "test config does not parse: %s", strna(why));
        }
        ign_report_done(&rep);
        return c;
}

TEST(mcd_argv)
{
        _cleanup_strv_free_ char **host =
                mcd_podman_argv("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1", "/",
                                "/opt/install-dir/bootstrap.ign");
        _cleanup_strv_free_ char **test =
                mcd_podman_argv("localhost/mcd:test", "/tmp/root", "/opt/install-dir/bootstrap.ign");
        _cleanup_free_ char *a = shell_join(host), *b = shell_join(test);

        ASSERT_STREQ(a,
                     "podman run --net host --pid=host --volume /:/rootfs:rw --volume "
                     "/usr/bin/rpm-ostree:/usr/bin/rpm-ostree --privileged --entrypoint "
                     "/usr/bin/machine-config-daemon "
                     "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1 start "
                     "--node-name localhost --root-mount /rootfs --once-from /opt/install-dir/bootstrap.ign "
                     "--skip-reboot");
        ASSERT_STREQ(
                b,
                "podman run --net host --pid=host --volume /tmp/root:/rootfs:rw --volume "
                "/tmp/root/usr/bin/rpm-ostree:/usr/bin/rpm-ostree --privileged --entrypoint "
                "/usr/bin/machine-config-daemon localhost/mcd:test start --node-name localhost --root-mount "
                "/rootfs --once-from /opt/install-dir/bootstrap.ign --skip-reboot");
        ASSERT_EQ(bootstrap_apply_from_string("native"), BOOTSTRAP_APPLY_NATIVE);
        ASSERT_EQ(bootstrap_apply_from_string("mcd"), BOOTSTRAP_APPLY_MCD);
        ASSERT_EQ(bootstrap_apply_from_string("podman"), _BOOTSTRAP_APPLY_INVALID);
}

static const char *bootstrap_ign =
        "{\"ignition\": {\"version\": \"3.2.0\", \"config\": {\"merge\": [{\"source\": \"https://x/y\"}]}},"
        " \"passwd\": {\"users\": [{\"name\": \"core\", \"sshAuthorizedKeys\": [\"ssh-ed25519 AAAA\"]}]},"
        " \"storage\": {"
        "  \"directories\": [{\"path\": \"/opt/openshift/tls\", \"mode\": 448}],"
        "  \"links\": [{\"path\": \"/usr/local/bin/x\", \"target\": \"/usr/bin/true\"}],"
        "  \"files\": ["
        "   {\"path\": \"/opt/openshift/auth/kubeconfig\", \"mode\": 384, \"contents\": {\"source\": "
        "\"data:;base64,a3ViZWNvbmZpZw==\"}},"
        "   {\"path\": \"/usr/local/bin/bootkube.sh\", \"mode\": 365, \"overwrite\": false, \"contents\": "
        "{\"source\": \"data:,%23!%2Fbin%2Fbash%0A\"}},"
        "   {\"path\": \"/opt/openshift/assisted-install-bootstrap\", \"mode\": 420, \"contents\": "
        "{\"source\": "
        "\"data:,\"}},"
        "   {\"path\": \"/etc/empty\"}"
        "  ]},"
        " \"systemd\": {\"units\": ["
        "  {\"name\": \"bootkube.service\", \"contents\": "
        "\"[Unit]\\n[Install]\\nWantedBy=multi-user.target\\n\"},"
        "  {\"name\": \"kubelet.service\", \"enabled\": true, \"contents\": \"[Unit]\\n\","
        "   \"dropins\": [{\"name\": \"10-a.conf\", \"contents\": \"[Service]\\n\"}, {\"name\": "
        "\"20-gone.conf\"}]},"
        "  {\"name\": \"zincati.service\", \"enabled\": false},"
        "  {\"name\": \"masked.service\", \"mask\": true},"
        "  {\"name\": \"unmasked.service\", \"mask\": false}"
        " ]}}";

TEST(native_plan_as_the_mcd_writes)
{
        _cleanup_ign_config_ IgnConfig *c = parse(bootstrap_ign);
        _cleanup_(native_apply_plan_done) NativeApplyPlan p = {};
        _cleanup_free_ char *err = NULL, *ignored = NULL, *enable = NULL, *disable = NULL, *preset = NULL,
                            *removed = NULL, *first = NULL;
        const IgnConfig *pc;

        ASSERT_OK(native_apply_plan(c, &p, &err));
        pc = p.config;
        ignored = strv_join(p.ignored, ", ");
        ASSERT_STREQ(ignored, "storage.directories (1), storage.links (1), passwd.users (1), "
                              "ignition.config.merge (1)");
        ASSERT_EQ(pc->storage.n_files, 4u);
        ASSERT_EQ(pc->storage.n_directories, 0u);
        ASSERT_EQ(pc->storage.n_links, 0u);
        ASSERT_EQ(pc->passwd.n_users, 0u);
        ASSERT_EQ(pc->ignition.config.n_merge, 0u);
        for (size_t i = 0; i < pc->storage.n_files; i++)
                ASSERT_TRUE(pc->storage.files[i].overwrite.set && pc->storage.files[i].overwrite.value);
        for (size_t i = 0; i < pc->systemd.n_units; i++)
                ASSERT_FALSE(pc->systemd.units[i].enabled.set);

        enable = strv_join(p.enable, " ");
        disable = strv_join(p.disable, " ");
        preset = strv_join(p.preset, " ");
        removed = strv_join(p.remove, " ");
        first = strv_join(p.disable_first, " ");
        ASSERT_STREQ(enable, "kubelet.service");
        ASSERT_STREQ(disable, "zincati.service");
        ASSERT_STREQ(preset, "bootkube.service masked.service unmasked.service");
        ASSERT_STREQ(
                removed,
                "/etc/systemd/system/kubelet.service.d/20-gone.conf /etc/systemd/system/unmasked.service");
        ASSERT_STREQ(first, "bootkube.service kubelet.service");
        /* the input is untouched */
        ASSERT_EQ(c->storage.n_directories, 1u);
        ASSERT_TRUE(c->systemd.units[1].enabled.set);
        ASSERT_NULL(c->storage.files[0].overwrite.set ? "set" : NULL);
        /* and the plan's config is still a valid config */
        {
                IgnReport rep = IGN_REPORT_INIT;
                int r = ign_config_validate(pc, &rep);
                _cleanup_free_ char *why = ign_report_format(&rep);
                if (r < 0)
                        test_fail(__FILE__, __LINE__, "plan config invalid: %s", strna(why));
                ign_report_done(&rep);
        }
}

TEST(native_refuses_what_it_cannot_do)
{
        static const struct {
                const char *files;
                const char *why;
        } cases[] = {
                { "{\"path\": \"/etc/a\", \"append\": [{\"source\": \"data:,x\"}]}",
                  "\"/etc/a\" has append entries" },
                { "{\"path\": \"/etc/b\", \"contents\": {\"source\": \"https://example.com/b\"}}",
                  "\"/etc/b\" has contents that are not a data: URL" },
                { "{\"path\": \"/etc/c\", \"contents\": {\"source\": \"data:;base64,!!!\"}}",
                  "cannot read the contents of \"/etc/c\"" },
                { "{\"path\": \"/etc/d\", \"contents\": {\"source\": \"data:,x\", \"verification\": "
                  "{\"hash\": "
                  "\"sha256-0000000000000000000000000000000000000000000000000000000000000000\"}}}",
                  "cannot read the contents of \"/etc/d\"" },
                { "{\"path\": \"/etc/e\", \"contents\": {\"source\": \"data:,notgzip\", \"compression\": "
                  "\"gzip\"}}",
                  "cannot read the contents of \"/etc/e\"" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text =
                        strdup_printf("{\"ignition\": {\"version\": \"3.2.0\"}, \"storage\": {\"files\": "
                                      "[{\"path\": \"/etc/ok\", "
                                      "\"contents\": {\"source\": \"data:,ok\"}}, %s]}}",
                                      cases[i].files);
                _cleanup_ign_config_ IgnConfig *c = parse(text);
                _cleanup_(native_apply_plan_done) NativeApplyPlan p = {};
                _cleanup_free_ char *err = NULL;

                int r = native_apply_plan(c, &p, &err);
                if (r != -EOPNOTSUPP)
                        test_fail(__FILE__, __LINE__, "case %zu: %d %s", i, r, strna(err));
                ASSERT_CONTAINS(err, cases[i].why);
                ASSERT_NULL(p.config);
        }
}

DEFINE_TEST_MAIN
