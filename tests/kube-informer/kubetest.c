/* SPDX-License-Identifier: Apache-2.0 */

#include <json-c/json.h>
#include <stdlib.h>

#include "cleanup.h"
#include "http.h"
#include "kube/kube.h"
#include "fileio.h"
#include "macro.h"
#include "strutil.h"
#include "tests/kube-informer/kubetest.h"
#include "tests/tests.h"
#include "timeutil.h"

bool kubetest_has_control(const KubeTest *t)
{
        return t->control != NULL;
}

/* No client-side rate limit: the storm makes 1,000 writes. */
static KubeClient *client_from(const char *kubeconfig)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        _cleanup_free_ char *err = NULL;
        KubeClientOptions o = { .qps = -1 };
        KubeClient *c = NULL;
        int r;

        r = kube_config_load(kubeconfig, NULL, &cfg, &err);
        if (r >= 0)
                r = kube_client_new(cfg, &o, &c, &err);
        if (r < 0)
                test_fail(__FILE__, __LINE__, "cannot make a client from '%s': %s", kubeconfig, strna(err));
        return c;
}

KubeClient *kubetest_new_client(KubeTest *t)
{
        return client_from(t->kubeconfig);
}

KubeClient *kubetest_new_user_client(KubeTest *t, const char *user)
{
        _cleanup_(json_object_putp) json_object *body = json_object_new_object(), *answer = NULL;
        json_object *kc = NULL;

        json_object_object_add(body, "user", json_object_new_string(user));
        ASSERT_EQ(kubetest_control(t, "POST", "/certs", body, &answer), 200);
        ASSERT_TRUE(json_object_object_get_ex(answer, "kubeconfig", &kc));
        return client_from(json_object_get_string(kc));
}

static void create_namespace(KubeTest *t)
{
        _cleanup_(json_object_putp) json_object *ns = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        int r;

        t->ns = strdup_printf("cradle-test-%08llx", (unsigned long long)(random_u64() & 0xffffffffULL));
        ASSERT_TRUE(t->ns);
        ns = json_object_new_object();
        json_object_object_add(ns, "metadata", json_object_new_object());
        json_object_object_add(json_object_object_get(ns, "metadata"), "name",
                               json_object_new_string(t->ns));
        r = kube_create(t->client, &kube_resource_namespaces, NULL, ns, NULL, &st);
        if (r < 0)
                test_fail(__FILE__, __LINE__, "cannot create namespace %s: %s", t->ns, strna(st.message));
}

static KubeTest *registered;

static void stop_at_exit(void)
{
        if (registered)
                kubetest_stop(registered);
}

static void start(KubeTest *t, char *const *extra);

void kubetest_setup(KubeTest *t, char *const *extra)
{
        if (t->client)
                return;
        if (!registered) {
                registered = t;
                /* not atexit(): the namespace is deleted while OpenSSL still works */
                test_at_end(stop_at_exit);
        }
        start(t, extra);
}

static void start(KubeTest *t, char *const *extra)
{
        const char *real = getenv("CRADLE_TEST_KUBECONFIG");
        _cleanup_free_ char *script = NULL, *state = NULL, *port_file = NULL, *cport = NULL,
                            *cport_text = NULL, *url = NULL, *err = NULL;
        char *argv[64];
        size_t n = 0;
        unsigned port, control_port = 0;
        int pid;

        *t = (KubeTest){};
        if (real && *real) {
                t->kubeconfig = strdup(real);
                t->client = kubetest_new_client(t);
                create_namespace(t);
                return;
        }
        if (test_run((char *const[]){ "/usr/bin/python3", "-c", "import yaml", NULL }, NULL) != 0)
                test_skip("python3-yaml is missing: the test kube-apiserver cannot run");

        script = test_src_path("tests/kubeapi/kubeapi.py");
        state = strdup_printf("%s/kubeapi-%d", test_tmpdir(), getpid());
        port_file = strdup_printf("%s/port", test_tmpdir());
        cport = strdup_printf("%s/control-port", test_tmpdir());
        argv[n++] = (char *)"/usr/bin/python3";
        argv[n++] = script;
        argv[n++] = (char *)"--state-dir";
        argv[n++] = state;
        argv[n++] = (char *)"--port-file";
        argv[n++] = port_file;
        argv[n++] = (char *)"--control-port-file";
        argv[n++] = cport;
        for (char *const *e = extra; e && *e && n < ELEMENTSOF(argv) - 1; e++)
                argv[n++] = *e;
        argv[n] = NULL;
        (void)unlink(cport);
        ASSERT_OK(test_server_start(argv, port_file, &pid, &port));
        t->pid = pid;

        ASSERT_OK(read_one_line_file(cport, &cport_text));
        ASSERT_OK(safe_atou(cport_text, &control_port));
        url = strdup_printf("http://127.0.0.1:%u", control_port);
        ASSERT_OK(http_client_new(&(HttpClientOptions){ .base_url = url, .retry = HTTP_RETRY_NONE },
                                  &t->control, &err));
        t->kubeconfig = strdup_printf("%s/kubeconfig", state);
        t->client = kubetest_new_client(t);
        create_namespace(t);
}

int kubetest_control(KubeTest *t, const char *method, const char *path, json_object *body, json_object **ret)
{
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_free_ char *err = NULL;
        int r;

        if (!t->control)
                return -EOPNOTSUPP;
        r = http_request_json(t->control, method, path, body, &resp, ret, &err);
        if (r < 0)
                return r;
        return (int)resp.status;
}

void kubetest_stop(KubeTest *t)
{
        if (t->client && t->ns && !t->pid) {
                _cleanup_kube_status_ KubeStatus st = {};

                (void)kube_delete(t->client, &kube_resource_namespaces, NULL, t->ns, NULL, NULL, &st);
        }
        t->client = kube_client_free(t->client);
        t->control = http_client_free(t->control);
        if (t->pid > 0)
                test_server_stop(t->pid);
        free(t->kubeconfig);
        free(t->ns);
        *t = (KubeTest){};
}
