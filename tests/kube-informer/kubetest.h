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

/* extra: more arguments for kubeapi.py (NULL-terminated, may be NULL).
 * Skips the program (exit 77) when python3-yaml is missing. */
void kubetest_start(KubeTest *t, char *const *extra);
void kubetest_stop(KubeTest *t);
bool kubetest_has_control(const KubeTest *t);
/* A control API request; body and ret may be NULL. Returns the HTTP status
 * or a negative errno. */
int kubetest_control(KubeTest *t, const char *method, const char *path, json_object *body,
                     json_object **ret);
/* Another client on the same server (for a second elector). */
KubeClient *kubetest_new_client(KubeTest *t);
