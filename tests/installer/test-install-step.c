/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's install step, its pure parts: the request as the observed
 * service sends it (observed/08-install-step.json), the Go agent's
 * validation errors, the installer arguments and the exact podman command
 * line, and the choice between podman and cradle's own installer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "agent/steps/install.h"
#include "cleanup.h"
#include "shell.h"
#include "strutil.h"
#include "tests.h"

/* observed/08-install-step.json, host1 (the 2023 service: it still sends
 * high_availability_mode, which the model no longer has) */
static const char *observed_host1 =
        "{\"boot_device\":\"/dev/disk/by-path/"
        "pci-0000:04:00.0\",\"check_cvo\":false,\"cluster_id\":\"fb127e4c-aa1c-"
        "4cf4-898f-aadb690c4ded\",\"controller_image\":\"quay.io/edge-infrastructure/"
        "assisted-installer-controller:"
        "latest\",\"disks_to_format\":[],\"enable_skip_mco_reboot\":true,\"high_availability_mode\":"
        "\"Full\","
        "\"host_id\":\"a1a1a1a1-0000-4000-8000-000000000001\",\"infra_env_id\":\"be728aba-3689-4fbe-85ab-"
        "b3ff6fbc3f2f\",\"installer_args\":\"[\\\"--append-karg\\\",\\\"ip=enp1s0:dhcp\\\"]\",\"installer_"
        "image\":"
        "\"quay.io/edge-infrastructure/assisted-installer:latest\",\"mco_image\":\"quay.io/"
        "openshift-release-dev/ocp-"
        "v4.0-art-dev@sha256:35855191065d777e85d53f903628d99ec5c829ee07c075d884a8b7d23c5790fd\",\"must_"
        "gather_"
        "image\":\"quay.io/openshift-release-dev/"
        "ocp-v4.0-art-dev@sha256:3c7ecafe368dd4b6209005d8499821d8deec85d5a8e"
        "4539572151568c6c7fa94\",\"openshift_version\":\"4.13.18\",\"role\":\"master\",\"service_ips\":"
        "null}";

static AgentConfig agent_config(void)
{
        return (AgentConfig){
                .url = (char *)"http://198.51.100.1:6000",
                .agent_version = (char *)"quay.io/edge-infrastructure/assisted-installer-agent:latest",
                .insecure = true,
        };
}

TEST(observed_request)
{
        InstallRequest r = {};
        AgentConfig c = agent_config();
        _cleanup_free_ char *err = NULL, *cmd = NULL;

        ASSERT_OK(install_request_parse(observed_host1, &r, &err));
        ASSERT_STREQ(r.role, "master");
        ASSERT_STREQ(r.boot_device, "/dev/disk/by-path/pci-0000:04:00.0");
        ASSERT_TRUE(r.enable_skip_mco_reboot);
        ASSERT_EQ(r.control_plane_count, 0);
        ASSERT_STREQ(r.high_availability_mode, "Full");
        ASSERT_NULL(r.service_ips);

        cmd = install_podman_command(&r, &c, false);
        ASSERT_STREQ(
                cmd,
                "podman run --privileged --pid=host --net=host --name=assisted-installer -v /dev:/dev:rw -v "
                "/opt:/opt:rw -v /var/log:/var/log:rw -v "
                "/run/systemd/journal/socket:/run/systemd/journal/socket -v /etc/pki:/etc/pki -v /tmp:/tmp "
                "--env=PULL_SECRET_TOKEN quay.io/edge-infrastructure/assisted-installer:latest "
                "--role master --infra-env-id be728aba-3689-4fbe-85ab-b3ff6fbc3f2f "
                "--cluster-id fb127e4c-aa1c-4cf4-898f-aadb690c4ded "
                "--host-id a1a1a1a1-0000-4000-8000-000000000001 "
                "--boot-device /dev/disk/by-path/pci-0000:04:00.0 --url http://198.51.100.1:6000 "
                "--controller-image quay.io/edge-infrastructure/assisted-installer-controller:latest "
                "--agent-image quay.io/edge-infrastructure/assisted-installer-agent:latest "
                "--high-availability-mode Full "
                "--mco-image quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
                "35855191065d777e85d53f903628d99ec5c829ee07c075d884a8b7d23c5790fd "
                "--must-gather-image quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
                "3c7ecafe368dd4b6209005d8499821d8deec85d5a8e4539572151568c6c7fa94 "
                "--openshift-version 4.13.18 --insecure "
                "--installer-args '[\"--append-karg\",\"ip=enp1s0:dhcp\"]' --enable-skip-mco-reboot");
        install_request_done(&r);
}

/* The two generations of the request, each passed on in its own release's
 * form, in both modes (the in-process installer gets the same argv) */
TEST(control_plane_generations)
{
        static const struct {
                const char *from, *to, *want, *not ;
        } cases[] = {
                /* 2023 (observed): high_availability_mode, right after --agent-image as that
                 * release's Go agent put it */
                { "\"high_availability_mode\":\"Full\"", "\"high_availability_mode\":\"None\"",
                  "--agent-image quay.io/edge-infrastructure/assisted-installer-agent:latest "
                  "--high-availability-mode None --mco-image ",
                  "--control-plane-count" },
                /* head: control_plane_count */
                { "\"high_availability_mode\":\"Full\"", "\"control_plane_count\":1",
                  "--agent-image quay.io/edge-infrastructure/assisted-installer-agent:latest "
                  "--control-plane-count 1 --mco-image ",
                  "--high-availability-mode" },
                /* neither: nothing passed, the installer's default */
                { "\"high_availability_mode\":\"Full\",", "",
                  "--agent-image quay.io/edge-infrastructure/assisted-installer-agent:latest --mco-image ",
                  "-mode" },
        };
        AgentConfig c = agent_config();

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *req = str_replace_all(observed_host1, cases[i].from, cases[i].to),
                                    *err = NULL, *cmd = NULL, *line = NULL;
                _cleanup_strv_free_ char **argv = NULL;
                InstallRequest r = {};

                ASSERT_OK(install_request_parse(req, &r, &err));
                cmd = install_podman_command(&r, &c, false);
                argv = install_installer_argv(&r, &c, false);
                line = shell_join(argv);
                ASSERT_CONTAINS(cmd, cases[i].want);
                ASSERT_NOT_CONTAINS(cmd, cases[i].not );
                ASSERT_CONTAINS(line, cases[i].want);
                ASSERT_NOT_CONTAINS(line, cases[i].not );
                install_request_done(&r);
        }
        {
                _cleanup_free_ char *req = str_replace_all(observed_host1, "\"Full\"", "\"Half\""),
                                    *err = NULL;
                InstallRequest r = {};
                ASSERT_ERROR(install_request_parse(req, &r, &err), EINVAL);
                ASSERT_STREQ(err, "validation failure list:\n"
                                  "high_availability_mode in body should be one of [Full None]");
                install_request_done(&r);
        }
}

TEST(every_field)
{
        const char *req =
                "{\"boot_device\":\"/dev/"
                "sda\",\"check_cvo\":true,\"cluster_id\":\"cd78ab12-0000-4000-8000-000000000001\","
                "\"control_plane_count\":3,\"controller_image\":\"quay.io/x/controller:latest\","
                "\"coreos_image\":\"quay.io/x/rhcos@sha256:1\",\"disks_to_format\":[\"/dev/sdb\",\"/dev/"
                "sdc\"],"
                "\"enable_skip_mco_reboot\":true,\"host_id\":\"f7ac0000-0000-4000-8000-000000000001\","
                "\"infra_env_id\":\"456e0000-0000-4000-8000-000000000001\",\"installer_args\":\"[\\\"--"
                "append-karg\\\","
                "\\\"a<b\\\"]\",\"installer_image\":\"quay.io/x/installer:latest\",\"mco_image\":\"quay.io/"
                "x/mco:1\","
                "\"must_gather_image\":\"{\\\"cnv\\\":\\\"quay.io/x/cnv:1\\\",\\\"ocp\\\":\\\"quay.io/x/"
                "mg:1\\\"}\","
                "\"notify_num_reboots\":true,\"openshift_version\":\"4.9.24\",\"proxy\":{\"http_proxy\":"
                "\"http://proxy.example.com:3128\",\"https_proxy\":\"http://"
                "proxy.example.com:3129\",\"no_proxy\":"
                "\" .example.com,198.51.100.0/24 "
                "\"},\"role\":\"bootstrap\",\"service_ips\":[\"198.51.100.1\","
                "\"2001:db8::1\"],\"skip_installation_disk_cleanup\":true}";
        InstallRequest r = {};
        AgentConfig c = agent_config();
        _cleanup_free_ char *err = NULL, *text = NULL;
        _cleanup_strv_free_ char **argv = NULL;

        c.cacert = (char *)"/etc/assisted/ca.pem";
        /* the no_proxy with blanks around it fails the format check */
        ASSERT_ERROR(install_request_parse(req, &r, &err), EINVAL);
        ASSERT_CONTAINS(err, "NO Proxy format is not valid");
        {
                _cleanup_free_ char *fixed = str_replace_all(req, "\" .example.com,198.51.100.0/24 \"",
                                                             "\".example.com,198.51.100.0/24\"");
                free(err);
                err = NULL;
                ASSERT_OK(install_request_parse(fixed, &r, &err));
        }
        argv = install_installer_argv(&r, &c, true);
        text = shell_join(argv);
        ASSERT_STREQ(
                text,
                "--role bootstrap --infra-env-id 456e0000-0000-4000-8000-000000000001 "
                "--cluster-id cd78ab12-0000-4000-8000-000000000001 "
                "--host-id f7ac0000-0000-4000-8000-000000000001 --boot-device /dev/sda "
                "--url http://198.51.100.1:6000 --controller-image quay.io/x/controller:latest "
                "--agent-image quay.io/edge-infrastructure/assisted-installer-agent:latest "
                "--control-plane-count 3 --mco-image quay.io/x/mco:1 "
                "--must-gather-image '{\"cnv\":\"quay.io/x/cnv:1\",\"ocp\":\"quay.io/x/mg:1\"}' "
                "--openshift-version 4.9.24 --format-disk /dev/sdb --format-disk /dev/sdc --insecure "
                "--check-cluster-version --skip-installation-disk-cleanup --cacert /etc/assisted/ca.pem "
                "--installer-args '[\"--append-karg\",\"a\\u003cb\",\"--copy-network\"]' "
                "--enable-skip-mco-reboot --notify-num-reboots --http-proxy http://proxy.example.com:3128 "
                "--https-proxy http://proxy.example.com:3129 --no-proxy .example.com,198.51.100.0/24 "
                "--service-ips 198.51.100.1,2001:db8::1 --coreos-image quay.io/x/rhcos@sha256:1");
        {
                _cleanup_free_ char *cmd = install_podman_command(&r, &c, false);
                ASSERT_CONTAINS(cmd,
                                "--env=PULL_SECRET_TOKEN -v /etc/assisted/ca.pem:/etc/assisted/ca.pem:rw "
                                "quay.io/x/installer:latest --role bootstrap");
        }
        install_request_done(&r);
}

TEST(validation_errors)
{
        static const struct {
                const char *json;
                const char *error;
        } cases[] = {
                { "[]", "json: cannot unmarshal array into Go value of type models.InstallCmdRequest" },
                { "{\"cluster_id\":5}", "json: cannot unmarshal number into Go struct field "
                                        "InstallCmdRequest.cluster_id of type strfmt.UUID" },
                { "{\"disks_to_format\":[1]}", "InstallCmdRequest.disks_to_format of type string" },
                { "{\"check_cvo\":\"yes\"}", "InstallCmdRequest.check_cvo of type bool" },
                { "{}", "validation failure list:\nboot_device in body is required\ncluster_id in body is "
                        "required\n"
                        "controller_image in body is required\nhost_id in body is required\n"
                        "infra_env_id in body is required\ninstaller_image in body is required\n"
                        "role in body is required" },
                { "{\"boot_device\":\"/dev/sda\",\"cluster_id\":\"not-a-uuid\",\"controller_image\":\"c:1\","
                  "\"host_id\":\"a1a1a1a1-0000-4000-8000-000000000001\",\"infra_env_id\":\"a1a1a1a1-0000-"
                  "4000-8000-"
                  "000000000001\",\"installer_image\":\"Bad "
                  "Image!\",\"role\":\"king\",\"service_ips\":[\"x\"]}",
                  "validation failure list:\ncluster_id in body must be of type uuid: \"not-a-uuid\"\n"
                  "installer_image in body should match "
                  "'^(([a-zA-Z0-9\\-\\.]+)(:[0-9]+)?\\/)?[a-z0-9\\._\\-\\/@]+"
                  "[?::a-zA-Z0-9_\\-.]+$'\nrole in body should be one of [auto-assign master arbiter worker "
                  "bootstrap]\n"
                  "service_ips.0 in body should match" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                InstallRequest r = {};
                _cleanup_free_ char *err = NULL;
                ASSERT_ERROR(install_request_parse(cases[i].json, &r, &err), EINVAL);
                ASSERT_NOT_NULL(err);
                if (!startswith(err, cases[i].error) && !strstr(err, cases[i].error))
                        test_fail(__FILE__, __LINE__, "case %zu:\n  %s\n  expected %s", i, err,
                                  cases[i].error);
        }
}

static char *with(const char *key_value)
{
        return strdup_printf(
                "{\"boot_device\":\"/dev/sda\",\"cluster_id\":\"a1a1a1a1-0000-4000-8000-000000000001\","
                "\"controller_image\":\"quay.io/c:1\",\"host_id\":\"a1a1a1a1-0000-4000-8000-000000000001\","
                "\"infra_env_id\":\"a1a1a1a1-0000-4000-8000-000000000001\",\"installer_image\":"
                "\"quay.io/i:1\",\"role\":\"worker\",%s}",
                key_value);
}

TEST(agent_checks)
{
        static const struct {
                const char *kv;
                const char *error; /* NULL: valid */
        } cases[] = {
                { "\"must_gather_image\":\"quay.io/mg:1\"", NULL },
                { "\"must_gather_image\":\"{\\\"ocp\\\":\\\"quay.io/mg:1\\\",\\\"odf\\\":\\\"quay.io/"
                  "odf:1\\\"}\"",
                  NULL },
                { "\"must_gather_image\":\"{\\\"nope\\\":\\\"quay.io/mg:1\\\"}\"",
                  "operator name nope validation failed" },
                { "\"must_gather_image\":\"bad image\"",
                  "must gather image bad image validation failed map[ocp:bad image]" },
                { "\"must_gather_image\":\"{\\\"ocp\\\":\\\"quay.io/mg:1\\\",\\\"cnv\\\":\\\"b a d\\\"}\"",
                  "must gather image b a d validation failed map[cnv:b a d ocp:quay.io/mg:1]" },
                { "\"proxy\":{\"http_proxy\":\"http://p.example.com:3128\"}", NULL },
                { "\"proxy\":{\"http_proxy\":\"https://p.example.com:3128\"}",
                  "The URL scheme must be http; https is currently not supported: "
                  "'https://p.example.com:3128'" },
                { "\"proxy\":{\"https_proxy\":\"ftp://p.example.com\"}",
                  "The URL scheme must be http and specified in the URL: 'ftp://p.example.com'" },
                { "\"proxy\":{\"http_proxy\":\"not a url\"}", "Proxy URL format is not valid: 'not a url'" },
                { "\"proxy\":{\"no_proxy\":\"*\"}", NULL },
                { "\"proxy\":{\"no_proxy\":\"a.example.com,10.0.0.0/8,2001:db8::1,.svc\"}", NULL },
                { "\"proxy\":{\"no_proxy\":\"a.example.com,,b\"}",
                  "NO Proxy format is not valid: 'a.example.com,,b'" },
                { "\"installer_args\":\"[\\\"--append-karg\\\",\\\"rd.md=1\\\",\\\"-n\\\",\\\"--save-"
                  "partlabel\\\","
                  "\\\"data*\\\"]\"",
                  NULL },
                { "\"installer_args\":\"[\\\"--firstboot-args\\\",\\\"x\\\"]\"",
                  "found unexpected flag --firstboot-args for installer - allowed flags are [--append-karg "
                  "--delete-karg -n --copy-network --network-dir --save-partlabel --save-partindex "
                  "--image-url "
                  "--image-file]" },
                { "\"installer_args\":\"[\\\"--append-karg\\\",\\\"a b\\\"]\"",
                  "found unexpected chars in value a b for installer" },
                { "\"installer_args\":\"[\\\"--append-karg\\\",\\\"a>b\\\"]\"",
                  "found unexpected chars in value a>b for installer" },
                { "\"installer_args\":\"{}\"",
                  "json: cannot unmarshal object into Go value of type []string" },
                { "\"openshift_version\":\"4.13.0-ec.2\"", NULL },
                { "\"openshift_version\":\"v4.14\"", NULL },
                { "\"openshift_version\":\"4.x\"",
                  "Failed to parse OCP version 4.x: Malformed version: 4.x" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *json = with(cases[i].kv), *err = NULL;
                InstallRequest r = {};
                int q = install_request_parse(json, &r, &err);
                if (!cases[i].error) {
                        if (q < 0)
                                test_fail(__FILE__, __LINE__, "case %zu: %s", i, strna(err));
                        install_request_done(&r);
                } else {
                        ASSERT_ERROR(q, EINVAL);
                        if (!startswith(strempty(err), cases[i].error))
                                test_fail(__FILE__, __LINE__, "case %zu:\n  %s\n  expected %s", i,
                                          strna(err), cases[i].error);
                }
        }
}

TEST(disks)
{
        InstallRequest r = { .boot_device = (char *)"/dev/null" };
        char *disks[] = { (char *)"/dev/zero", (char *)"sdb", NULL };
        char *err = NULL;

        ASSERT_OK(install_request_check_disks(&r, &err));
        r.disks_to_format = disks;
        ASSERT_ERROR(install_request_check_disks(&r, &err), EINVAL);
        ASSERT_STREQ(err, "disk sdb should start of with /dev/");
        free(err);
        err = NULL;
        r.disks_to_format = NULL;
        r.boot_device = (char *)"/dev/does-not-exist";
        ASSERT_ERROR(install_request_check_disks(&r, &err), ENOENT);
        ASSERT_STREQ(err, "disk /dev/does-not-exist was not found on the host");
        free(err);
}

TEST(mode)
{
        const char *cradle = "quay.io/cradle/cradle:1.0";

        ASSERT_EQ(install_mode_from_string("auto"), INSTALL_MODE_AUTO);
        ASSERT_EQ(install_mode_from_string("podman"), INSTALL_MODE_PODMAN);
        ASSERT_EQ(install_mode_from_string("inprocess"), INSTALL_MODE_INPROCESS);
        ASSERT_EQ(install_mode_from_string("docker"), _INSTALL_MODE_INVALID);
        ASSERT_EQ(install_mode_decide(INSTALL_MODE_AUTO, cradle, cradle), INSTALL_MODE_INPROCESS);
        ASSERT_EQ(install_mode_decide(INSTALL_MODE_AUTO,
                                      "quay.io/edge-infrastructure/assisted-installer:latest", cradle),
                  INSTALL_MODE_PODMAN);
        ASSERT_EQ(install_mode_decide(INSTALL_MODE_AUTO, cradle, NULL), INSTALL_MODE_PODMAN);
        ASSERT_EQ(install_mode_decide(INSTALL_MODE_AUTO, "", ""), INSTALL_MODE_PODMAN);
        ASSERT_EQ(install_mode_decide(INSTALL_MODE_PODMAN, cradle, cradle), INSTALL_MODE_PODMAN);
        ASSERT_EQ(install_mode_decide(INSTALL_MODE_INPROCESS, "quay.io/x:1", cradle),
                  INSTALL_MODE_INPROCESS);
}

TEST(go_helpers)
{
        char *l[] = { (char *)"a\"b", (char *)"c\\d", (char *)"<&>", (char *)"\n\x01", NULL };
        _cleanup_free_ char *j = go_json_marshal_strv(l), *e = go_json_marshal_strv(NULL);

        ASSERT_STREQ(j, "[\"a\\\"b\",\"c\\\\d\",\"\\u003c\\u0026\\u003e\",\"\\n\\u0001\"]");
        ASSERT_STREQ(e, "[]");
        ASSERT_TRUE(go_version_valid("4.13.18"));
        ASSERT_TRUE(go_version_valid("4.9"));
        ASSERT_TRUE(go_version_valid("1.2.3-beta.1+build.5"));
        ASSERT_TRUE(go_version_valid("4.14.0-0.nightly-2023-10-20-000000"));
        ASSERT_FALSE(go_version_valid(""));
        ASSERT_FALSE(go_version_valid("four"));
        ASSERT_FALSE(go_version_valid("4.13.x"));
}

DEFINE_TEST_MAIN
