/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubeconfig and in-cluster configuration: parsing, merging and errors
 * (no server), then every credential kind against the test kube-apiserver.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "jsonutil.h"
#include "kube/kube-config.h"
#include "kube-test.h"
#include "kube/kube.h"
#include "strutil.h"
#include "tests.h"

/* "hello\n" */
#define B64_HELLO "aGVsbG8K"

static const char *const basic_yaml = "apiVersion: v1\n"
                                      "kind: Config\n"
                                      "clusters:\n"
                                      "- name: c1\n"
                                      "  cluster:\n"
                                      "    server: https://example.test:6443/\n"
                                      "    certificate-authority-data: " B64_HELLO "\n"
                                      "- name: c2\n"
                                      "  cluster:\n"
                                      "    server: https://other.test:6443\n"
                                      "    insecure-skip-tls-verify: true\n"
                                      "users:\n"
                                      "- name: u1\n"
                                      "  user:\n"
                                      "    client-certificate-data: " B64_HELLO "\n"
                                      "    client-key-data: " B64_HELLO "\n"
                                      "- name: u2\n"
                                      "  user:\n"
                                      "    token: 'tok-abcdef-123456'\n"
                                      "contexts:\n"
                                      "- name: one\n"
                                      "  context: {cluster: c1, user: u1, namespace: ns1}\n"
                                      "- name: two\n"
                                      "  context:\n"
                                      "    cluster: c2\n"
                                      "    user: u2\n"
                                      "current-context: one\n";

TEST(parse_current_and_named_context)
{
        _cleanup_(kube_config_freep) KubeConfig *one = NULL, *two = NULL;
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(kube_config_parse(basic_yaml, strlen(basic_yaml), NULL, NULL, &one, &err));
        ASSERT_STREQ(one->context, "one");
        ASSERT_STREQ(one->cluster, "c1");
        ASSERT_STREQ(one->user, "u1");
        ASSERT_STREQ(one->server, "https://example.test:6443");
        ASSERT_STREQ(one->ca_pem, "hello\n");
        ASSERT_STREQ(one->client_cert_pem, "hello\n");
        ASSERT_STREQ(one->client_key_pem, "hello\n");
        ASSERT_STREQ(one->namespace, "ns1");
        ASSERT_FALSE(one->insecure);
        ASSERT_NULL(one->token);

        ASSERT_OK(kube_config_parse(basic_yaml, strlen(basic_yaml), NULL, "two", &two, &err));
        ASSERT_STREQ(two->server, "https://other.test:6443");
        ASSERT_TRUE(two->insecure);
        ASSERT_STREQ(two->token, "tok-abcdef-123456");
        ASSERT_STREQ(two->namespace, "default");
        ASSERT_NULL(two->ca_pem);
}

TEST(parse_json_kubeconfig_and_exec)
{
        const char *json =
                "{\"clusters\": [{\"name\": \"c\", \"cluster\": {\"server\": \"https://[::1]:1\"}}],"
                " \"users\": [{\"name\": \"u\", \"user\": {\"exec\": {\"apiVersion\":"
                " \"client.authentication.k8s.io/v1\", \"command\": \"bin/plugin\", \"args\": [\"a\", "
                "\"b\"],"
                " \"env\": [{\"name\": \"X\", \"value\": \"1\"}], \"provideClusterInfo\": true,"
                " \"interactiveMode\": \"Never\"}}}],"
                " \"contexts\": [{\"name\": \"x\", \"context\": {\"cluster\": \"c\", \"user\": \"u\"}}],"
                " \"current-context\": \"x\"}";
        _cleanup_(kube_config_freep) KubeConfig *c = NULL, *copy = NULL;
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(kube_config_parse(json, strlen(json), "/etc/kube", NULL, &c, &err));
        ASSERT_NOT_NULL(c->exec);
        /* a command with a slash is relative to the kubeconfig's folder */
        ASSERT_STREQ(c->exec->command, "/etc/kube/bin/plugin");
        ASSERT_STREQ(c->exec->args[1], "b");
        ASSERT_STREQ(c->exec->env[0], "X=1");
        ASSERT_TRUE(c->exec->provide_cluster_info);
        ASSERT_STREQ(c->exec->interactive_mode, "Never");
        ASSERT_OK(kube_config_copy(c, &copy));
        ASSERT_STREQ(copy->exec->args[0], "a");
        ASSERT_STREQ(copy->server, "https://[::1]:1");
}

static void expect_error(const char *yaml, const char *context, int error, const char *needle)
{
        _cleanup_(kube_config_freep) KubeConfig *c = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        r = kube_config_parse(yaml, strlen(yaml), NULL, context, &c, &err);
        if (r != -error)
                test_fail(__FILE__, __LINE__, "expected %s for:\n%s\ngot %d (%s)", strerror(error), yaml, r,
                          strna(err));
        ASSERT_NOT_NULL(err);
        ASSERT_CONTAINS(err, needle);
        ASSERT_NULL(c);
}

TEST(parse_errors_name_what_is_wrong)
{
        expect_error(basic_yaml, "three", ENOENT, "context 'three' not found");
        expect_error("clusters: []\n", NULL, ENOENT, "no current-context");
        expect_error("contexts:\n- name: a\n  context: {cluster: nope}\ncurrent-context: a\n", NULL, ENOENT,
                     "cluster 'nope' not found");
        expect_error("clusters:\n- name: c\n  cluster: {server: https://x}\n"
                     "contexts:\n- name: a\n  context: {cluster: c, user: who}\ncurrent-context: a\n",
                     NULL, ENOENT, "user 'who' not found");
        expect_error("clusters:\n- name: c\n  cluster: {certificate-authority-data: " B64_HELLO "}\n"
                     "contexts:\n- name: a\n  context: {cluster: c}\ncurrent-context: a\n",
                     NULL, EBADMSG, "cluster 'c': no server");
        expect_error("clusters:\n- name: c\n  cluster: {server: ftp://x}\n"
                     "contexts:\n- name: a\n  context: {cluster: c}\ncurrent-context: a\n",
                     NULL, EBADMSG, "is not an http(s) URL");
        expect_error(
                "clusters:\n- name: c\n  cluster: {server: https://x, certificate-authority-data: '%%%'}\n"
                "contexts:\n- name: a\n  context: {cluster: c}\ncurrent-context: a\n",
                NULL, EBADMSG, "'certificate-authority-data' is not valid base64");
        expect_error("clusters:\n- name: c\n  cluster: {server: https://x, certificate-authority: "
                     "/nonexistent/ca}\n"
                     "contexts:\n- name: a\n  context: {cluster: c}\ncurrent-context: a\n",
                     NULL, ENOENT, "cannot read certificate-authority /nonexistent/ca");
        expect_error("clusters:\n- name: c\n  cluster: {server: https://x}\n"
                     "users:\n- name: u\n  user: {auth-provider: {name: gcp}}\n"
                     "contexts:\n- name: a\n  context: {cluster: c, user: u}\ncurrent-context: a\n",
                     NULL, EOPNOTSUPP, "'auth-provider' is not supported");
        expect_error("clusters:\n- name: c\n  cluster: {server: https://x}\n"
                     "users:\n- name: u\n  user: {client-certificate-data: " B64_HELLO "}\n"
                     "contexts:\n- name: a\n  context: {cluster: c, user: u}\ncurrent-context: a\n",
                     NULL, EBADMSG, "needs a client key");
        expect_error("clusters:\n- name: c\n  cluster: {server: https://x}\n"
                     "users:\n- name: u\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1}}\n"
                     "contexts:\n- name: a\n  context: {cluster: c, user: u}\ncurrent-context: a\n",
                     NULL, EBADMSG, "'command' is missing");
        expect_error("clusters:\n- name: c\n  cluster: {server: https://x}\n"
                     "users:\n- name: u\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1,"
                     " command: x}}\n"
                     "contexts:\n- name: a\n  context: {cluster: c, user: u}\ncurrent-context: a\n",
                     NULL, EOPNOTSUPP, "v1alpha1 is not supported");
        expect_error(
                "clusters:\n- name: c\n  cluster: {server: https://x, insecure-skip-tls-verify: maybe}\n"
                "contexts:\n- name: a\n  context: {cluster: c}\ncurrent-context: a\n",
                NULL, EBADMSG, "'insecure-skip-tls-verify' must be true or false");
        expect_error("a: &x 1\nb: *x\n", NULL, EBADMSG, "not supported");
        expect_error("a: 1\na: 2\n", NULL, EBADMSG, "duplicate mapping key");
        expect_error("- 1\n- 2\n", NULL, EBADMSG, "not a kubeconfig");
        expect_error("clusters: {a: 1}\n", NULL, EBADMSG, "'clusters' must be a list");
        expect_error("a: [\n", NULL, EBADMSG, "YAML");
        expect_error("a: 1\n---\nb: 2\n", NULL, EBADMSG, "more than one document");
}

static char *write_tmp(const char *name, const char *text)
{
        char *p = strdup_printf("%s/%s", test_tmpdir(), name);

        ASSERT_NOT_NULL(p);
        ASSERT_OK(write_file_atomic(p, text, strlen(text), 0600));
        return p;
}

TEST(kubeconfig_list_merges_like_kubectl)
{
        _cleanup_free_ char *dir = strdup_printf("%s/merge", test_tmpdir()), *a = NULL, *b = NULL,
                            *list = NULL, *ca = NULL, *err = NULL, *want_ca = NULL;
        _cleanup_(kube_config_freep) KubeConfig *c = NULL, *d = NULL;

        ASSERT_OK(mkdir_p(dir, 0700));
        ca = write_tmp("merge/ca.pem", "CA PEM\n");
        a = write_tmp("merge/a.yaml", "clusters:\n- name: shared\n  cluster:\n    server: https://first\n"
                                      "    certificate-authority: ca.pem\n"
                                      "current-context: ctx\n");
        b = write_tmp("merge/b.yaml",
                      "clusters:\n- name: shared\n  cluster: {server: https://second}\n"
                      "contexts:\n- name: ctx\n  context: {cluster: shared, namespace: fromb}\n"
                      "- name: other\n  context: {cluster: shared}\n"
                      "current-context: other\n");
        list = strdup_printf("%s:%s/missing.yaml:%s", a, dir, b);
        ASSERT_OK(setenv("KUBECONFIG", list, 1));
        ASSERT_OK(kube_config_load(NULL, NULL, &c, &err));
        /* current-context and the cluster come from the first file that sets them */
        ASSERT_STREQ(c->context, "ctx");
        ASSERT_STREQ(c->server, "https://first");
        ASSERT_STREQ(c->namespace, "fromb");
        want_ca = strdup_printf("%s/ca.pem", dir);
        ASSERT_STREQ(c->ca_file, want_ca);
        ASSERT_STREQ(c->ca_pem, "CA PEM\n");
        ASSERT_OK(kube_config_load_default(NULL, "other", &d, &err));
        ASSERT_STREQ(d->context, "other");
        ASSERT_OK(unsetenv("KUBECONFIG"));

        /* an explicit file must exist */
        free(err);
        err = NULL;
        ASSERT_ERROR(kube_config_load("/nonexistent/kubeconfig", NULL, &d, &err), ENOENT);
        ASSERT_CONTAINS(err, "/nonexistent/kubeconfig");
}

TEST(in_cluster_needs_its_environment)
{
        _cleanup_(kube_config_freep) KubeConfig *c = NULL;
        _cleanup_free_ char *err = NULL;

        ASSERT_OK(unsetenv("KUBERNETES_SERVICE_HOST"));
        ASSERT_ERROR(kube_config_in_cluster(NULL, &c, &err), ENXIO);
        ASSERT_CONTAINS(err, "KUBERNETES_SERVICE_HOST");
        free(err);
        err = NULL;
        ASSERT_OK(setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1));
        ASSERT_OK(setenv("KUBERNETES_SERVICE_PORT", "443", 1));
        ASSERT_ERROR(kube_config_in_cluster("/nonexistent/sa", &c, &err), ENOENT);
        ASSERT_CONTAINS(err, "/nonexistent/sa/token");
        ASSERT_OK(unsetenv("KUBERNETES_SERVICE_HOST"));
        ASSERT_OK(unsetenv("KUBERNETES_SERVICE_PORT"));
}

/* ---- against the server ---- */

static char *state_file(const char *name)
{
        char *p = strdup_printf("%s/%s", kube_test_state_dir(), name);

        ASSERT_NOT_NULL(p);
        return p;
}

static char *server_url(void)
{
        _cleanup_free_ char *pf = state_file("port"), *port = NULL;

        ASSERT_OK(read_one_line_file(pf, &port));
        return strdup_printf("https://127.0.0.1:%s", port);
}

static int check_client_cfg(const KubeConfig *cfg, KubeStatus *st)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_free_ char *err = NULL;

        if (kube_client_new(cfg, NULL, &c, &err) < 0)
                test_fail(__FILE__, __LINE__, "client: %s", strna(err));
        return kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, st);
}

TEST(every_kubeconfig_of_the_server)
{
        static const char *const names[] = { "kubeconfig", "kubeconfig-files", "kubeconfig-token" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *path = state_file(names[i]), *err = NULL;
                _cleanup_(kube_client_freep) KubeClient *c = NULL;
                _cleanup_(json_object_putp) json_object *ns = NULL;
                _cleanup_kube_status_ KubeStatus st = {};

                if (kube_client_new_from_kubeconfig(path, NULL, &c, &err) < 0)
                        test_fail(__FILE__, __LINE__, "%s: %s", names[i], strna(err));
                ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", &ns, &st));
                ASSERT_STREQ(kube_object_name(ns), "default");
        }
}

TEST(token_file_is_reread_when_it_changes)
{
        _cleanup_free_ char *ca = state_file("ca.crt"), *tokf = state_file("admin-token"), *token = NULL,
                            *server = server_url(), *kc = NULL, *path = NULL, *mytok = NULL, *err = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        ASSERT_OK(read_one_line_file(tokf, &token));
        mytok = write_tmp("token", token);
        kc = strdup_printf("clusters:\n- name: k\n  cluster: {server: '%s', certificate-authority: '%s'}\n"
                           "users:\n- name: u\n  user: {tokenFile: token}\n"
                           "contexts:\n- name: k\n  context: {cluster: k, user: u}\ncurrent-context: k\n",
                           server, ca);
        path = write_tmp("kubeconfig-tokenfile", kc);
        ASSERT_OK(kube_client_new_from_kubeconfig(path, NULL, &c, &err));
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));

        ASSERT_OK(write_file_atomic(mytok, "wrong-token-0000000000", 22, 0600));
        ASSERT_ERROR(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st), EKEYREJECTED);
        ASSERT_STREQ(st.reason, "Unauthorized");
        ASSERT_OK(write_file_atomic(mytok, token, strlen(token), 0600));
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));
}

static char *exec_plugin(void)
{
        /* MODE: token (from TOKEN_FILE; "bad" first when BAD_FIRST=1), cert, fail */
        return write_tmp("plugin.py",
                         "#!/usr/bin/python3\n"
                         "import json, os, sys\n"
                         "d = os.environ['PLUGIN_DIR']\n"
                         "n = int(open(d + '/count').read()) if os.path.exists(d + '/count') else 0\n"
                         "open(d + '/count', 'w').write(str(n + 1))\n"
                         "open(d + '/exec-info', 'w').write(os.environ.get('KUBERNETES_EXEC_INFO', ''))\n"
                         "mode = os.environ['MODE']\n"
                         "if mode == 'fail':\n"
                         "    sys.stderr.write('plugin says no\\n')\n"
                         "    sys.exit(3)\n"
                         "st = {}\n"
                         "if mode == 'token':\n"
                         "    st['token'] = open(os.environ['TOKEN_FILE']).read().strip()\n"
                         "    if os.environ.get('BAD_FIRST') == '1' and n == 0:\n"
                         "        st['token'] = 'bad-token-from-plugin'\n"
                         "else:\n"
                         "    st['clientCertificateData'] = open(os.environ['CERT']).read()\n"
                         "    st['clientKeyData'] = open(os.environ['KEY']).read()\n"
                         "if os.environ.get('EXPIRY'):\n"
                         "    st['expirationTimestamp'] = os.environ['EXPIRY']\n"
                         "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1',"
                         " 'kind': 'ExecCredential', 'status': st}))\n");
}

static unsigned plugin_runs(const char *dir)
{
        _cleanup_free_ char *p = strdup_printf("%s/count", dir), *s = NULL;
        unsigned n = 0;

        if (read_one_line_file(p, &s) >= 0)
                ASSERT_OK(safe_atou(s, &n));
        return n;
}

static KubeClient *exec_client(const char *name, const char *mode, const char *expiry, bool bad_first,
                               char **ret_dir)
{
        _cleanup_free_ char *plugin = exec_plugin(), *dir = strdup_printf("%s/%s", test_tmpdir(), name),
                            *tokf = state_file("admin-token"), *cert = state_file("admin.crt"),
                            *key = state_file("admin.key"), *ca = state_file("ca.crt"),
                            *server = server_url(), *kc = NULL, *kcname = NULL, *path = NULL, *err = NULL;
        KubeClient *c = NULL;

        ASSERT_OK(chmod(plugin, 0755));
        ASSERT_OK(mkdir_p(dir, 0700));
        kc = strdup_printf(
                "clusters:\n- name: k\n  cluster: {server: '%s', certificate-authority: '%s'}\n"
                "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                "      command: '%s'\n      provideClusterInfo: true\n      env:\n"
                "      - {name: PLUGIN_DIR, value: '%s'}\n      - {name: MODE, value: '%s'}\n"
                "      - {name: TOKEN_FILE, value: '%s'}\n      - {name: CERT, value: '%s'}\n"
                "      - {name: KEY, value: '%s'}\n      - {name: EXPIRY, value: '%s'}\n"
                "      - {name: BAD_FIRST, value: '%s'}\n"
                "contexts:\n- name: k\n  context: {cluster: k, user: u}\ncurrent-context: k\n",
                server, ca, plugin, dir, mode, tokf, cert, key, strempty(expiry), bad_first ? "1" : "0");
        kcname = strdup_printf("%s/kubeconfig", name);
        path = write_tmp(kcname, kc);
        if (kube_client_new_from_kubeconfig(path, NULL, &c, &err) < 0)
                test_fail(__FILE__, __LINE__, "exec kubeconfig: %s", strna(err));
        *ret_dir = TAKE_PTR(dir);
        return c;
}

TEST(exec_plugin_token_cached_until_expiry)
{
        _cleanup_free_ char *dir = NULL, *info = NULL, *info_path = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        c = exec_client("exec-cached", "token", "2999-01-01T00:00:00Z", false, &dir);
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "kube-system", NULL, &st));
        ASSERT_EQ(plugin_runs(dir), 1u);
        info_path = strdup_printf("%s/exec-info", dir);
        ASSERT_OK(read_full_file(info_path, BUF_MAX_SMALL_FILE, &info, NULL));
        ASSERT_CONTAINS(info, "\"kind\":\"ExecCredential\"");
        ASSERT_CONTAINS(info, "\"interactive\":false");
        ASSERT_CONTAINS(info, "\"server\":\"https://127.0.0.1:");
        ASSERT_CONTAINS(info, "\"certificate-authority-data\":\"");
}

TEST(exec_plugin_expired_token_is_renewed)
{
        _cleanup_free_ char *dir = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        c = exec_client("exec-expired", "token", "2001-02-03T04:05:06.5+01:00", false, &dir);
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));
        ASSERT_EQ(plugin_runs(dir), 2u);
}

TEST(exec_plugin_rerun_on_401)
{
        _cleanup_free_ char *dir = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        c = exec_client("exec-401", "token", NULL, true, &dir);
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));
        ASSERT_EQ(plugin_runs(dir), 2u);
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st));
        ASSERT_EQ(plugin_runs(dir), 2u);
}

TEST(exec_plugin_client_certificate)
{
        _cleanup_free_ char *dir = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_(json_object_putp) json_object *ns = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        c = exec_client("exec-cert", "cert", NULL, false, &dir);
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "default", &ns, &st));
        ASSERT_EQ(plugin_runs(dir), 1u);
}

TEST(exec_plugin_failure)
{
        _cleanup_free_ char *dir = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        c = exec_client("exec-fail", "fail", NULL, false, &dir);
        ASSERT_ERROR(kube_get(c, &kube_resource_namespaces, NULL, "default", NULL, &st), EKEYREJECTED);
        ASSERT_CONTAINS(st.message, "plugin says no");
        ASSERT_CONTAINS(st.message, "status 3");
}

TEST(in_cluster_files)
{
        _cleanup_free_ char *sa = strdup_printf("%s/sa", test_tmpdir()), *tokf = state_file("admin-token"),
                            *ca = state_file("ca.crt"), *pf = state_file("port"), *port = NULL,
                            *token = NULL, *ca_pem = NULL, *p_token = NULL, *p_ca = NULL, *p_ns = NULL,
                            *err = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        ASSERT_OK(mkdir_p(sa, 0700));
        ASSERT_OK(read_one_line_file(tokf, &token));
        ASSERT_OK(read_full_file(ca, BUF_MAX_SMALL_FILE, &ca_pem, NULL));
        ASSERT_OK(read_one_line_file(pf, &port));
        p_token = write_tmp("sa/token", token);
        p_ca = write_tmp("sa/ca.crt", ca_pem);
        p_ns = write_tmp("sa/namespace", "kube-system\n");

        ASSERT_OK(setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1));
        ASSERT_OK(setenv("KUBERNETES_SERVICE_PORT", port, 1));
        ASSERT_OK(kube_client_new_in_cluster(sa, &c, &err));
        ASSERT_STREQ(kube_client_namespace(c), "kube-system");
        ASSERT_TRUE(kube_client_config(c)->in_cluster);
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "kube-system", NULL, &st));

        /* the token rotates */
        ASSERT_OK(write_file_atomic(p_token, "rotated-but-unknown-0000", 24, 0600));
        ASSERT_ERROR(kube_get(c, &kube_resource_namespaces, NULL, "kube-system", NULL, &st), EKEYREJECTED);
        ASSERT_OK(write_file_atomic(p_token, token, strlen(token), 0600));
        ASSERT_OK(kube_get(c, &kube_resource_namespaces, NULL, "kube-system", NULL, &st));
        ASSERT_OK(unsetenv("KUBERNETES_SERVICE_HOST"));
        ASSERT_OK(unsetenv("KUBERNETES_SERVICE_PORT"));
}

TEST(insecure_and_wrong_ca)
{
        _cleanup_free_ char *server = server_url();
        _cleanup_free_ char *cfgpath = state_file("kubeconfig"), *err = NULL;
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        ASSERT_OK(kube_config_load(cfgpath, NULL, &cfg, &err));
        /* a CA that did not sign the server's certificate */
        free(cfg->ca_pem);
        cfg->ca_pem = strdup(cfg->client_cert_pem);
        ASSERT_TRUE(check_client_cfg(cfg, &st) < 0);
        ASSERT_EQ(st.code, 0);
        /* insecure-skip-tls-verify */
        free(cfg->ca_pem);
        cfg->ca_pem = NULL;
        cfg->insecure = true;
        ASSERT_OK(check_client_cfg(cfg, &st));
        (void)server;
}

DEFINE_TEST_MAIN
