/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's configuration (controller/config.h): upstream's
 * variables with envconfig's names, precedence, defaults and required keys,
 * the token file with its variable fallback, and the environment the
 * bootstrap's own manifests give the Job (installer/controller-manifests.c)
 * read back to the values the installer was given.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assisted/controller-contract.h"
#include "base64.h"
#include "cleanup.h"
#include "controller/config.h"
#include "fileio.h"
#include "installer/controller-manifests.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

static const char *const variables[] = {
        "CLUSTER_ID",
        "INVENTORY_URL",
        "OPENSHIFT_VERSION",
        "SKIP_CERT_VERIFICATION",
        "CA_CERT_PATH",
        "NAMESPACE",
        "CONTROL_PLANE_COUNT",
        "CHECK_CLUSTER_VERSION",
        "MUST_GATHER_IMAGE",
        "NOTIFY_NUM_REBOOTS",
        "DRY_ENABLE",
        "DRY_FAKE_REBOOT_MARKER_PATH",
        "DRY_CLUSTER_HOSTS_PATH",
};

/* a clean environment: none of upstream's variables, no token, a token
 * file that does not exist */
static char *clean_env(void)
{
        char *missing = strdup_printf("%s/no-token", test_tmpdir());

        for (size_t i = 0; i < ELEMENTSOF(variables); i++) {
                _cleanup_free_ char *prefixed = strdup_printf("MYAPP_CONTROLLERCONFIG_%s", variables[i]);
                unsetenv(variables[i]);
                unsetenv(prefixed);
        }
        unsetenv("PULL_SECRET_TOKEN");
        unsetenv("HIGH_AVAILABILITY_MODE");
        unsetenv("KUBECONFIG");
        setenv("CRADLE_CONTROLLER_TOKEN_FILE", missing, 1);
        return missing;
}

static void required_env(void)
{
        setenv("CLUSTER_ID", "fb127e4c-aa1c-4cf4-898f-aadb690c4ded", 1);
        setenv("INVENTORY_URL", "http://203.0.113.1:8090", 1);
        setenv("OPENSHIFT_VERSION", "4.13.18", 1);
}

static int parse(ControllerConfig *c, char **extra)
{
        char *argv[8] = { (char *)"assisted-installer-controller" };
        int argc = 1;

        STRV_FOREACH (e, extra)
                argv[argc++] = *e;
        return controller_config_parse(argc, argv, c);
}

TEST(defaults)
{
        _cleanup_free_ char *missing = clean_env();
        _cleanup_(controller_config_done) ControllerConfig c = {};

        required_env();
        ASSERT_EQ(parse(&c, NULL), 1);
        ASSERT_STREQ(c.cluster_id, "fb127e4c-aa1c-4cf4-898f-aadb690c4ded");
        ASSERT_STREQ(c.inventory_url, "http://203.0.113.1:8090");
        ASSERT_STREQ(c.openshift_version, "4.13.18");
        ASSERT_STREQ(c.namespace, "assisted-installer");
        ASSERT_EQ(c.control_plane_count, 3);
        ASSERT_FALSE(c.skip_cert_verification);
        ASSERT_FALSE(c.check_cluster_version);
        ASSERT_FALSE(c.notify_num_reboots);
        ASSERT_FALSE(c.dry_run);
        ASSERT_STREQ(c.ca_cert_path, "");
        ASSERT_STREQ(c.must_gather_image, "");
        ASSERT_NULL(c.token);
        ASSERT_EQ(c.poll_interval, 30 * USEC_PER_SEC);
        ASSERT_EQ(c.slow_poll_interval, 60 * USEC_PER_SEC);
        ASSERT_EQ(c.ready_interval, USEC_PER_SEC);
        ASSERT_EQ(c.ready_timeout, 70 * 60 * USEC_PER_SEC);
        ASSERT_EQ(c.operators_timeout, 10 * 60 * 60 * USEC_PER_SEC);
        ASSERT_STREQ(c.log_file, "/tmp/controller_logs.log");
}

/* upstream's dry-run variables; a dry run without the hosts file would
 * play a cluster of no nodes: a usage error */
TEST(dry_run)
{
        _cleanup_free_ char *missing = clean_env();
        ControllerConfig c = {};

        required_env();
        setenv("DRY_ENABLE", "true", 1);
        ASSERT_EQ(parse(&c, NULL), -EINVAL);
        setenv("DRY_CLUSTER_HOSTS_PATH", "/run/hosts.json", 1);
        setenv("MYAPP_CONTROLLERCONFIG_DRY_FAKE_REBOOT_MARKER_PATH", "/run/master-1-rebooted", 1);
        ASSERT_EQ(parse(&c, NULL), 1);
        ASSERT_TRUE(c.dry_run);
        ASSERT_STREQ(c.dry_cluster_hosts_path, "/run/hosts.json");
        ASSERT_STREQ(c.dry_fake_reboot_marker_path, "/run/master-1-rebooted");
        controller_config_done(&c);
        unsetenv("DRY_ENABLE");
        unsetenv("DRY_CLUSTER_HOSTS_PATH");
        unsetenv("MYAPP_CONTROLLERCONFIG_DRY_FAKE_REBOOT_MARKER_PATH");
}

TEST(required_keys)
{
        static const char *const required[] = { "CLUSTER_ID", "INVENTORY_URL", "OPENSHIFT_VERSION" };

        for (size_t i = 0; i < ELEMENTSOF(required); i++) {
                _cleanup_free_ char *missing = clean_env();
                ControllerConfig c = {};

                required_env();
                unsetenv(required[i]);
                ASSERT_ERROR(parse(&c, NULL), EINVAL);
                /* set but empty is refused too (upstream takes it, and fails every call) */
                setenv(required[i], "", 1);
                ASSERT_ERROR(parse(&c, NULL), EINVAL);
        }
}

TEST(envconfig_names)
{
        _cleanup_free_ char *missing = clean_env();
        _cleanup_(controller_config_done) ControllerConfig c = {};

        required_env();
        /* the prefixed key is looked up first */
        setenv("MYAPP_CONTROLLERCONFIG_CLUSTER_ID", "0f2f2b5e-5d8b-4c58-9b5f-7b1d4c0e8a10", 1);
        setenv("SKIP_CERT_VERIFICATION", "true", 1);
        setenv("CA_CERT_PATH", "/etc/assisted-service/service-ca-cert.crt", 1);
        setenv("NAMESPACE", "other", 1);
        setenv("CONTROL_PLANE_COUNT", "1", 1);
        setenv("CHECK_CLUSTER_VERSION", "True", 1);
        setenv("MUST_GATHER_IMAGE", "{\"ocp\": \"quay.io/x/mg:1\"}", 1);
        setenv("NOTIFY_NUM_REBOOTS", "1", 1);
        /* obsolete: ignored */
        setenv("HIGH_AVAILABILITY_MODE", "None", 1);
        ASSERT_EQ(parse(&c, NULL), 1);
        ASSERT_STREQ(c.cluster_id, "0f2f2b5e-5d8b-4c58-9b5f-7b1d4c0e8a10");
        ASSERT_TRUE(c.skip_cert_verification);
        ASSERT_STREQ(c.ca_cert_path, "/etc/assisted-service/service-ca-cert.crt");
        ASSERT_STREQ(c.namespace, "other");
        ASSERT_EQ(c.control_plane_count, 1);
        ASSERT_TRUE(c.check_cluster_version);
        ASSERT_STREQ(c.must_gather_image, "{\"ocp\": \"quay.io/x/mg:1\"}");
        ASSERT_TRUE(c.notify_num_reboots);
}

TEST(unparsable_values)
{
        static const char *const bad[][2] = {
                { "CONTROL_PLANE_COUNT", "three" },
                { "SKIP_CERT_VERIFICATION", "yes" },
                { "CHECK_CLUSTER_VERSION", "2" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *missing = clean_env();
                ControllerConfig c = {};

                required_env();
                setenv(bad[i][0], bad[i][1], 1);
                ASSERT_ERROR(parse(&c, NULL), EINVAL);
        }
}

TEST(flags_and_stray_words)
{
        _cleanup_free_ char *missing = clean_env();
        _cleanup_(controller_config_done) ControllerConfig c = {};
        ControllerConfig d = {};

        required_env();
        ASSERT_EQ(parse(&c, (char *[]){ (char *)"--poll-interval=0.2", (char *)"-control-plane-count",
                                        (char *)"1", NULL }),
                  1);
        ASSERT_EQ(c.poll_interval, 200 * USEC_PER_MSEC);
        ASSERT_EQ(c.control_plane_count, 1);
        ASSERT_ERROR(parse(&d, (char *[]){ (char *)"run", NULL }), EINVAL);
        ASSERT_ERROR(parse(&d, (char *[]){ (char *)"--poll-interval=-1", NULL }), EINVAL);
        ASSERT_EQ(parse(&d, (char *[]){ (char *)"--help", NULL }), 0);
}

TEST(token)
{
        _cleanup_free_ char *missing = clean_env(), *file = strdup_printf("%s/token", test_tmpdir());
        _cleanup_(controller_config_done) ControllerConfig a = {}, b = {}, c = {};
        ControllerConfig d = {};

        required_env();
        /* no file: the variable, trimmed */
        setenv("PULL_SECRET_TOKEN", " env-t0ken\n", 1);
        ASSERT_EQ(parse(&a, NULL), 1);
        ASSERT_STREQ(a.token, "env-t0ken");
        /* the file wins, trimmed */
        ASSERT_OK(write_file_atomic(file, "file-t0ken\n", 11, 0400));
        setenv("CRADLE_CONTROLLER_TOKEN_FILE", file, 1);
        ASSERT_EQ(parse(&b, NULL), 1);
        ASSERT_STREQ(b.token, "file-t0ken");
        /* neither */
        unsetenv("PULL_SECRET_TOKEN");
        setenv("CRADLE_CONTROLLER_TOKEN_FILE", missing, 1);
        ASSERT_EQ(parse(&c, NULL), 1);
        ASSERT_NULL(c.token);
        /* a file that cannot be read is fatal (exit 1, not a usage error) */
        setenv("CRADLE_CONTROLLER_TOKEN_FILE", test_tmpdir(), 1);
        ASSERT_ERROR(parse(&d, NULL), EISDIR);

        ASSERT_OK(controller_token_read(missing, NULL, &d.token));
        ASSERT_NULL(d.token);
}

/* ---- the manifests the bootstrap renders ------------------------------------- */

static json_object *manifest_of(Manifest *m, size_t n, const char *kind)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(json_get_string(m[i].object, "kind"), kind))
                        return m[i].object;
        return NULL;
}

static json_object *job_container(Manifest *m, size_t n)
{
        json_object *job = manifest_of(m, n, "Job");

        return json_object_array_get_idx(json_get_path(job, "spec.template.spec.containers"), 0);
}

/* The Job's environment as the kubelet sets it: values, and the keys of
 * the ConfigMap (an optional key that is absent sets nothing). */
static void job_env_apply(Manifest *m, size_t n)
{
        json_object *cm = json_get(manifest_of(m, n, "ConfigMap"), "data");
        json_object *env = json_get(job_container(m, n), "env");

        ASSERT_NOT_NULL(env);
        for (size_t i = 0; i < json_object_array_length(env); i++) {
                json_object *e = json_object_array_get_idx(env, i);
                const char *name = json_get_string(e, "name"), *value = json_get_string(e, "value");
                json_object *ref = json_get_path(e, "valueFrom.configMapKeyRef");

                /* the token is never a variable of the Job */
                ASSERT_FALSE(streq(name, "PULL_SECRET_TOKEN"));
                ASSERT_NULL(json_get_path(e, "valueFrom.secretKeyRef"));
                if (ref) {
                        ASSERT_STREQ(json_get_string(ref, "name"), CONTROLLER_CONFIGMAP);
                        value = json_get_string(cm, json_get_string(ref, "key"));
                }
                if (value)
                        ASSERT_OK(setenv(name, value, 1));
        }
}

/* The Job's volumes as the kubelet mounts them, under root: each item of a
 * Secret volume is a file of its mode at <mountPath>/<path>. Returns the
 * host path mounted at mount_path, NULL if none. */
static const char *job_volumes_apply(Manifest *m, size_t n, const char *root, const char *mount_path)
{
        json_object *secret = json_get(manifest_of(m, n, "Secret"), "data");
        json_object *spec = json_get_path(manifest_of(m, n, "Job"), "spec.template.spec");
        json_object *mounts = json_get(job_container(m, n), "volumeMounts");
        const char *host = NULL;

        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *mount = json_object_array_get_idx(mounts, i), *volume = NULL;
                const char *at = json_get_string(mount, "mountPath");
                json_object *items;

                for (size_t k = 0; k < json_object_array_length(json_get(spec, "volumes")); k++) {
                        json_object *v = json_object_array_get_idx(json_get(spec, "volumes"), k);
                        if (streq_ptr(json_get_string(v, "name"), json_get_string(mount, "name")))
                                volume = v;
                }
                ASSERT_NOT_NULL(volume);
                if (streq_ptr(at, mount_path))
                        host = json_get_string(json_get(volume, "hostPath"), "path");
                if (!json_get(volume, "secret"))
                        continue;
                ASSERT_STREQ(json_get_string(json_get(volume, "secret"), "secretName"), CONTROLLER_SECRET);
                items = json_get_path(volume, "secret.items");
                for (size_t k = 0; k < json_object_array_length(items); k++) {
                        json_object *item = json_object_array_get_idx(items, k);
                        _cleanup_free_ char *dir = strdup_printf("%s%s", root, at),
                                            *file = strdup_printf("%s/%s", dir,
                                                                  json_get_string(item, "path"));
                        _cleanup_free_ char *decoded = NULL;
                        size_t len = 0;
                        int64_t mode = 0;

                        ASSERT_OK(json_get_int64(item, "mode", &mode));
                        ASSERT_OK(base64_decode(json_get_string(secret, json_get_string(item, "key")), NULL,
                                                &decoded, &len));
                        ASSERT_OK(mkdir_p(dir, 0755));
                        ASSERT_OK(write_file_atomic(file, decoded, len, (mode_t)mode));
                }
        }
        return host;
}

TEST(bootstrap_manifests_agree)
{
        static const ControllerManifestsInput inputs[] = {
                {
                        .cluster_id = "fb127e4c-aa1c-4cf4-898f-aadb690c4ded",
                        .inventory_url = "https://assisted-api.local.openshift.io:8090",
                        .skip_cert_verification = false,
                        .ca_cert_path = "/etc/assisted-service/service-ca-cert.crt",
                        .check_cluster_version = true,
                        .control_plane_count = 3,
                        .must_gather_image = "{\"ocp\": \"quay.io/x/mg:1\", \"cnv\": \"quay.io/x/cnv:1\"}",
                        .pull_secret_token = "t0ken-secret",
                        .controller_image =
                                "quay.io/edge-infrastructure/assisted-installer-controller:latest",
                        .openshift_version = "4.13.18",
                        .service_ips = "203.0.113.1",
                        .notify_num_reboots = true,
                },
                {
                        .cluster_id = "0f2f2b5e-5d8b-4c58-9b5f-7b1d4c0e8a10",
                        .inventory_url = "http://203.0.113.1:8090",
                        .skip_cert_verification = true,
                        .control_plane_count = 1,
                        .pull_secret_token = "other-t0ken",
                        .controller_image = "quay.io/x/cradle:1",
                        .openshift_version = "4.16.3",
                },
        };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                const ControllerManifestsInput *in = &inputs[i];
                _cleanup_free_ char *missing = clean_env();
                _cleanup_(controller_config_done) ControllerConfig c = {};
                _cleanup_free_ char *root = strdup_printf("%s/pod-%zu", test_tmpdir(), i),
                                    *token_file = NULL;
                Manifest *m = NULL;
                size_t n = 0;
                struct stat st;

                ASSERT_OK(controller_manifests(in, &m, &n));
                job_env_apply(m, n);
                (void)job_volumes_apply(m, n, root, "/");
                /* the controller's own paths are where the Job mounts them:
                 * the token file (0400), the CA file from the host, the
                 * single node's bootstrap secrets */
                unsetenv("CRADLE_CONTROLLER_TOKEN_FILE");
                ASSERT_EQ(parse(&c, NULL), 1);
                ASSERT_STREQ(c.token_file, CONTROLLER_TOKEN_FILE);
                token_file = strdup_printf("%s%s", root, c.token_file);
                ASSERT_OK(stat(token_file, &st) < 0 ? -errno : 0);
                ASSERT_EQ(st.st_mode & 07777, 0400u);
                if (!isempty(in->ca_cert_path))
                        ASSERT_STREQ(job_volumes_apply(m, n, root, c.ca_cert_path), in->ca_cert_path);
                if (in->control_plane_count == 1)
                        ASSERT_STREQ(job_volumes_apply(m, n, root, CONTROLLER_SNO_SECRETS_DIR),
                                     "/etc/kubernetes/bootstrap-secrets");
                else
                        ASSERT_NULL(job_volumes_apply(m, n, root, CONTROLLER_SNO_SECRETS_DIR));
                ASSERT_TRUE(startswith(CONTROLLER_SNO_KUBECONFIG, CONTROLLER_SNO_SECRETS_DIR "/"));
                manifests_free(m, n);
                controller_config_done(&c);
                ASSERT_OK(setenv("CRADLE_CONTROLLER_TOKEN_FILE", token_file, 1));
                ASSERT_EQ(parse(&c, NULL), 1);
                ASSERT_STREQ(c.cluster_id, in->cluster_id);
                ASSERT_STREQ(c.inventory_url, in->inventory_url);
                ASSERT_STREQ(c.openshift_version, in->openshift_version);
                ASSERT_EQ(c.skip_cert_verification, in->skip_cert_verification);
                ASSERT_STREQ(c.ca_cert_path, strempty(in->ca_cert_path));
                ASSERT_EQ(c.control_plane_count, in->control_plane_count);
                ASSERT_EQ(c.check_cluster_version, in->check_cluster_version);
                ASSERT_STREQ(c.must_gather_image, strempty(in->must_gather_image));
                ASSERT_EQ(c.notify_num_reboots, in->notify_num_reboots);
                ASSERT_STREQ(c.token, in->pull_secret_token);
                ASSERT_STREQ(c.namespace, CONTROLLER_NAMESPACE);
        }
}

DEFINE_TEST_MAIN
