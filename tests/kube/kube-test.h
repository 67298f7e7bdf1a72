/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Where the Kubernetes client tests run: the test kube-apiserver
 * (tests/kubeapi/kubeapi.py, started once per test program with the
 * assisted-service CRDs applied), or, when CRADLE_TEST_KUBECONFIG names a
 * kubeconfig, that cluster. Each test works in a namespace of its own,
 * deleted once the last case is done (test_at_end()). CRADLE_TEST_KUBEAPI_ARGS
 * gives the test server more options (e.g. --openshift-service-ca: every
 * namespace then also holds openshift-service-ca.crt, as on an OpenShift
 * hub). Tests that need the server's control API
 * (faults, tokens, pod logs, history compaction) call kube_test_need_server(),
 * which skips with the reason on a real cluster.
 */

#include <stdbool.h>

#include "kube/kube.h"

typedef struct json_object json_object;

/* Before the first call of any other function: the test server also
 * applies these (a path under the source tree: a YAML file or a directory
 * of them, e.g. the hive and metal3 CRDs the hub reads). On a real cluster
 * they must be installed already. */
void kube_test_add_apply(const char *rel);
/* True when running against CRADLE_TEST_KUBECONFIG. */
bool kube_test_real(void);
/* The kubeconfig path of the cluster (the test server's admin certificate
 * kubeconfig). */
const char *kube_test_kubeconfig(void);
/* The test server's state directory (certificates, kubeconfig-token...);
 * skips on a real cluster. */
const char *kube_test_state_dir(void);
/* Skips the test on a real cluster, naming why. */
void kube_test_need_server(const char *why);
/* A new client of the cluster (its own; the caller frees it). */
KubeClient *kube_test_client(void);
/* A fresh namespace "cradle-test-<tag>-<random>", deleted once the last
 * case is done. Other writers may put objects there too (kube-root-ca.crt,
 * openshift-service-ca.crt...): count only what the test made. */
const char *kube_test_namespace(const char *tag);
/* The control API of the test server: JSON in, JSON out (ret may be NULL).
 * Returns the HTTP status. */
long kube_test_ctl(const char *method, const char *path, const char *json_body, json_object **ret);
/* A JSON object from text (aborts the test on a parse error). */
json_object *kube_test_json(const char *text);
/* Waits until the server's controllers settled (no-op on a real cluster). */
void kube_test_settle(void);
