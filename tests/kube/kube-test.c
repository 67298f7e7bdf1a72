/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "http.h"
#include "jsonutil.h"
#include "kube-test.h"
#include "strutil.h"
#include "tests.h"
#include "timeutil.h"
#include "uuid.h"

static struct {
        bool started;
        bool real;
        char *kubeconfig;
        char *state_dir;
        unsigned control_port;
        pid_t pid;
        char **namespaces;
        char **applies;
} env;

void kube_test_add_apply(const char *rel)
{
        char *p = test_src_path(rel);

        ASSERT_NOT_NULL(p);
        ASSERT_OK(strv_push(&env.applies, p));
}

/* The condition of a namespace's status, or NULL. */
static json_object *namespace_condition(json_object *ns, const char *type)
{
        json_object *conds = json_get_path(ns, "status.conditions");

        for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
                json_object *c = json_object_array_get_idx(conds, i);

                if (streq_ptr(json_get_string(c, "type"), type))
                        return c;
        }
        return NULL;
}

/* A Terminating namespace kept by finalizers that nobody will remove any
 * more (the test's controllers have stopped): the resources its namespace
 * controller reports as remaining ("Some resources are remaining:
 * infraenvs.agent-install.openshift.io has 1 resource instances,
 * configmaps. has 2 resource instances"). Empty when no finalizer holds it. */
static char **finalizer_held_resources(json_object *ns)
{
        json_object *fins = namespace_condition(ns, "NamespaceFinalizersRemaining"),
                    *content = namespace_condition(ns, "NamespaceContentRemaining");
        _cleanup_strv_free_ char **parts = NULL;
        const char *list;
        char **out = NULL;

        if (!streq_ptr(json_get_string(fins, "status"), "True") ||
            !streq_ptr(json_get_string(content, "status"), "True"))
                return NULL;
        list = startswith(strempty(json_get_string(content, "message")), "Some resources are remaining: ");
        if (!list || strv_split(list, ",", &parts) < 0)
                return NULL;
        STRV_FOREACH (p, parts) {
                const char *gr = *p + strspn(*p, " ");
                size_t n = strcspn(gr, " ");

                /* "configmaps." is a core resource */
                if (n > 0 && gr[n - 1] == '.')
                        n--;
                if (n > 0 && strv_extendf(&out, "%.*s", (int)n, gr) < 0)
                        break;
        }
        return out;
}

/* Removes the finalizers of everything left in ns of those resources. */
static void release_finalizers(KubeClient *c, const char *ns, char **resources)
{
        STRV_FOREACH (r, resources) {
                _cleanup_(json_object_putp) json_object *list = NULL;
                _cleanup_kube_status_ KubeStatus st = {};
                KubeResource res;
                json_object *items;

                if (kube_resolve(c, *r, &res, &st) < 0 || kube_list_all(c, &res, ns, NULL, &list, &st) < 0)
                        continue;
                items = json_get(list, "items");
                for (size_t i = 0; i < json_object_array_length(items); i++) {
                        json_object *o = json_object_array_get_idx(items, i);
                        _cleanup_(json_object_putp) json_object *patch =
                                kube_test_json("{\"metadata\": {\"finalizers\": null}}");
                        _cleanup_kube_status_ KubeStatus pst = {};

                        if (!json_get_path(o, "metadata.finalizers"))
                                continue;
                        if (kube_patch_merge(c, &res, ns, kube_object_name(o), patch, NULL, &pst) >= 0)
                                fprintf(stderr,
                                        "namespace %s: removed the finalizers of %s %s (nothing is left to "
                                        "remove them)\n",
                                        ns, *r, kube_object_name(o));
                }
        }
}

/* Once the last case is done (test_at_end(): atexit() would run after
 * OpenSSL's own exit-time cleanup, when no client can be made any more).
 * The test server goes altogether; a real cluster keeps what the tests
 * made unless it is deleted, and keeps a namespace Terminating until its
 * namespace controller emptied it, so this waits for each to go, and
 * releases what finalizers of stopped controllers hold. A namespace left
 * fails the run. */
static void kube_test_delete_namespaces(void)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_strv_free_ char **left = NULL, **released = NULL;

        if (!env.namespaces || env.pid > 0)
                return;
        if (kube_client_new_from_kubeconfig(env.kubeconfig, NULL, &c, &err) < 0)
                test_fail(__FILE__, __LINE__, "cannot delete the test namespaces: no client of %s: %s",
                          env.kubeconfig, strna(err));
        STRV_FOREACH (ns, env.namespaces) {
                _cleanup_kube_status_ KubeStatus st = {};
                int r = kube_delete(c, &kube_resource_namespaces, NULL, *ns, NULL, NULL, &st);

                if (r < 0 && r != -ENOENT)
                        fprintf(stderr, "cannot delete namespace %s: %s\n", *ns, strna(st.message));
        }
        /* a real namespace controller takes seconds */
        for (usec_t end = now_usec(CLOCK_MONOTONIC) + 120 * USEC_PER_SEC; now_usec(CLOCK_MONOTONIC) < end;) {
                strv_free(left);
                left = NULL;
                STRV_FOREACH (ns, env.namespaces) {
                        _cleanup_(json_object_putp) json_object *o = NULL;
                        _cleanup_kube_status_ KubeStatus st = {};
                        _cleanup_strv_free_ char **held = NULL;

                        if (kube_get(c, &kube_resource_namespaces, NULL, *ns, &o, &st) == -ENOENT)
                                continue;
                        ASSERT_OK(strv_extend(&left, *ns));
                        held = finalizer_held_resources(o);
                        if (held && !strv_contains(released, *ns)) {
                                release_finalizers(c, *ns, held);
                                ASSERT_OK(strv_extend(&released, *ns));
                        }
                }
                if (!left)
                        break;
                (void)usleep(200 * 1000);
        }
        strv_free(env.namespaces);
        env.namespaces = NULL;
        if (left)
                test_fail(__FILE__, __LINE__, "test namespaces are left on the cluster: %s",
                          strempty(left[0]));
}

static void kube_test_stop_server(void)
{
        if (env.pid > 0) {
                (void)kill(env.pid, SIGTERM);
                (void)waitpid(env.pid, NULL, 0);
                env.pid = 0;
        }
}

/* CRADLE_TEST_KUBEAPI_ARGS: more options of the test server (split at
 * blanks), e.g. "--openshift-service-ca" to play an OpenShift hub. */
static int extend_with_extra_args(char ***argv)
{
        _cleanup_strv_free_ char **extra = NULL;
        const char *e = getenv("CRADLE_TEST_KUBEAPI_ARGS");
        int r;

        if (isempty(e))
                return 0;
        r = strv_split(e, " \t", &extra);
        if (r < 0)
                return r;
        STRV_FOREACH (a, extra)
                if (strv_extend(argv, *a) < 0)
                        return -ENOMEM;
        return 0;
}

static void kube_test_start(void)
{
        _cleanup_free_ char *script = NULL, *crds = NULL, *port_file = NULL, *cport_file = NULL,
                            *text = NULL;
        const char *real = getenv("CRADLE_TEST_KUBECONFIG");
        pid_t pid;

        static const char *skip_reason;
        char *check[] = { (char *)"/usr/bin/python3", (char *)"-c", (char *)"import yaml", NULL };

        if (skip_reason)
                test_skip("%s", skip_reason);
        if (env.started)
                return;
        env.started = true;
        test_at_end(kube_test_delete_namespaces);
        atexit(kube_test_stop_server);
        if (!isempty(real)) {
                env.real = true;
                env.kubeconfig = strdup(real);
                ASSERT_NOT_NULL(env.kubeconfig);
                return;
        }
        if (access("/usr/bin/python3", X_OK) < 0 || test_run(check, &text) != 0) {
                skip_reason =
                        "/usr/bin/python3 with python3-yaml is missing (the test kube-apiserver needs it)";
                test_skip("%s", skip_reason);
        }

        script = test_src_path("tests/kubeapi/kubeapi.py");
        crds = test_src_path("tests/reference/assisted-service/config/crd/bases");
        env.state_dir = strdup_printf("%s/kubeapi", test_tmpdir());
        port_file = strdup_printf("%s/port-file", test_tmpdir());
        cport_file = strdup_printf("%s/control-port-file", test_tmpdir());
        ASSERT_NOT_NULL(env.state_dir);
        ASSERT_OK(mkdir_p(env.state_dir, 0700));

        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                setpgid(0, 0);
                char **argv = NULL;

                if (strv_extend(&argv, "python3") < 0 || strv_extend(&argv, script) < 0 ||
                    strv_extend_pair(&argv, "--state-dir", env.state_dir) < 0 ||
                    strv_extend_pair(&argv, "--port-file", port_file) < 0 ||
                    strv_extend_pair(&argv, "--control-port-file", cport_file) < 0 ||
                    strv_extend_pair(&argv, "--apply", crds) < 0)
                        _exit(127);
                STRV_FOREACH (a, env.applies)
                        if (strv_extend_pair(&argv, "--apply", *a) < 0)
                                _exit(127);
                if (extend_with_extra_args(&argv) < 0)
                        _exit(127);
                execv("/usr/bin/python3", argv);
                _exit(127);
        }
        env.pid = pid;
        /* applying the CRDs takes seconds, more on a loaded machine */
        for (int i = 0; i < 1800; i++) {
                _cleanup_free_ char *p = NULL;
                unsigned port;
                int status;

                if (read_one_line_file(cport_file, &p) >= 0 && safe_atou(p, &port) >= 0 && port > 0 &&
                    access(port_file, F_OK) >= 0) {
                        env.control_port = port;
                        break;
                }
                if (waitpid(pid, &status, WNOHANG) == pid) {
                        env.pid = 0;
                        test_fail(__FILE__, __LINE__, "kubeapi.py exited before it was ready");
                }
                usleep(100 * 1000);
        }
        if (env.control_port == 0)
                test_fail(__FILE__, __LINE__, "kubeapi.py was not ready within 180 s");
        env.kubeconfig = strdup_printf("%s/kubeconfig", env.state_dir);
        ASSERT_NOT_NULL(env.kubeconfig);
}

bool kube_test_real(void)
{
        kube_test_start();
        return env.real;
}

const char *kube_test_kubeconfig(void)
{
        kube_test_start();
        return env.kubeconfig;
}

void kube_test_need_server(const char *why)
{
        if (kube_test_real())
                test_skip("needs the test kube-apiserver (%s); CRADLE_TEST_KUBECONFIG is set", why);
}

const char *kube_test_state_dir(void)
{
        kube_test_need_server("its certificates and kubeconfigs");
        return env.state_dir;
}

KubeClient *kube_test_client(void)
{
        _cleanup_free_ char *err = NULL;
        KubeClient *c = NULL;
        int r;

        r = kube_client_new_from_kubeconfig(kube_test_kubeconfig(), NULL, &c, &err);
        if (r < 0)
                test_fail(__FILE__, __LINE__, "cannot make a client of %s: %s", env.kubeconfig, strna(err));
        return c;
}

const char *kube_test_namespace(const char *tag)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp) json_object *ns = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        char id[UUID_STRING_MAX], *name;
        int r;

        uuid_random(id);
        name = strdup_printf("cradle-test-%s-%.8s", tag, id);
        ASSERT_NOT_NULL(name);
        ns = json_new_object();
        ASSERT_NOT_NULL(ns);
        ASSERT_OK(json_add(ns, "metadata", json_new_object()));
        ASSERT_OK(json_add_string(json_get(ns, "metadata"), "name", name));
        r = kube_create(c, &kube_resource_namespaces, NULL, ns, NULL, &st);
        if (r < 0)
                test_fail(__FILE__, __LINE__, "cannot create namespace %s: %s", name, strna(st.message));
        ASSERT_OK(strv_push(&env.namespaces, name));

        /* The root CA publisher (kube-controller-manager, or the test server's
         * stand-in) adds kube-root-ca.crt to every new namespace moments later.
         * Waiting for it keeps that known writer out of what a test lists or
         * watches next; a cluster without the publisher costs a few seconds. */
        for (unsigned i = 0; i < 100; i++) {
                _cleanup_(json_object_putp) json_object *cm = NULL;
                _cleanup_kube_status_ KubeStatus get_st = {};

                if (kube_get(c, &kube_resource_configmaps, name, "kube-root-ca.crt", &cm, &get_st) >= 0)
                        break;
                (void)usleep(50 * 1000);
        }
        return name;
}

long kube_test_ctl(const char *method, const char *path, const char *json_body, json_object **ret)
{
        _cleanup_(http_client_freep) HttpClient *h = NULL;
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_free_ char *base = NULL, *err = NULL;
        int r;

        kube_test_need_server("the control API");
        base = strdup_printf("http://127.0.0.1:%u", env.control_port);
        ASSERT_NOT_NULL(base);
        ASSERT_OK(http_client_new(&(HttpClientOptions){ .base_url = base }, &h, &err));
        r = http_request(h,
                         &(HttpRequest){ .method = method,
                                         .path = path,
                                         .body = json_body,
                                         .body_len = json_body ? strlen(json_body) : 0 },
                         &resp, &err);
        if (r < 0)
                test_fail(__FILE__, __LINE__, "control API %s %s: %s", method, path, strna(err));
        if (ret) {
                *ret = NULL;
                if (resp.body_len > 0)
                        ASSERT_OK(json_parse(resp.body, resp.body_len, BUF_MAX_JSON_DOC, ret, NULL));
        }
        return resp.status;
}

json_object *kube_test_json(const char *text)
{
        _cleanup_free_ char *err = NULL;
        json_object *o = NULL;

        if (json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &o, &err) < 0)
                test_fail(__FILE__, __LINE__, "bad test JSON: %s: %s", strna(err), text);
        return o;
}

void kube_test_settle(void)
{
        if (kube_test_real())
                return;
        ASSERT_EQ(kube_test_ctl("POST", "/settle", "{\"timeout\": 60}", NULL), 200);
}
