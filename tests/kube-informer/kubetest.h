/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The Kubernetes side of the informer, leader and event tests: the test
 * kube-apiserver (tests/kubeapi/kubeapi.py) in a scratch directory, or, when
 * CRADLE_TEST_KUBECONFIG names a kubeconfig, that cluster. Either way each
 * test program works in a namespace of its own ("cradle-test-<random>"),
 * deleted at kubetest_stop(). The control API (faults, watch drops) exists
 * only with the test server: kubetest_has_control() says so, and tests skip
 * what needs it.
 */

#include <stdbool.h>

typedef struct KubeClient KubeClient;
typedef struct HttpClient HttpClient;
typedef struct json_object json_object;

typedef struct KubeTest {
        int pid; /* the test server, 0 with a real cluster */
        char *kubeconfig;
        HttpClient *control;
        KubeClient *client;
        char *ns;
} KubeTest;

/* Called at the start of every test case (test_fail/test_skip need one):
 * the first call starts the server (extra: more arguments for kubeapi.py,
 * NULL-terminated, may be NULL) and creates the namespace, the others
 * return at once; kubetest_stop() runs once the last case is done
 * (test_at_end()). Skips the case when python3-yaml is missing. */
void kubetest_setup(KubeTest *t, char *const *extra);
void kubetest_stop(KubeTest *t);
bool kubetest_has_control(const KubeTest *t);
/* A control API request; body and ret may be NULL. Returns the HTTP status
 * or a negative errno. */
int kubetest_control(KubeTest *t, const char *method, const char *path, json_object *body,
                     json_object **ret);
/* Another client on the same server, as the admin. */
KubeClient *kubetest_new_client(KubeTest *t);
/* A client authenticated as user (a client certificate from the control
 * API); only with the test server. */
KubeClient *kubetest_new_user_client(KubeTest *t, const char *user);
