/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kube test harness itself (kube-test.c): a test program that ran
 * against a cluster which outlives it (a real one) leaves none of its
 * namespaces behind, even one that holds an object with a finalizer nobody
 * removes any more. The program runs itself as that test program, against
 * this program's cluster given as CRADLE_TEST_KUBECONFIG.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "jsonutil.h"
#include "kube-test.h"
#include "kube/kube.h"
#include "spawn.h"
#include "strutil.h"
#include "tests.h"
#include "timeutil.h"

/* set in the child: where it writes the names of the namespaces it made */
#define NAMES_FILE_ENV "CRADLE_TEST_HARNESS_NAMESPACES_FILE"

static void make_namespaces(const char *names_file)
{
        _cleanup_(kube_client_freep) KubeClient *c = kube_test_client();
        _cleanup_(json_object_putp)
                json_object *cm = kube_test_json("{\"metadata\": {\"name\": \"content\"}}"),
                            *held = kube_test_json("{\"metadata\": {\"name\": \"held\", "
                                                   "\"finalizers\": [\"cradle.test/held\"]}}");
        _cleanup_kube_status_ KubeStatus st = {};
        const char *a = kube_test_namespace("exit-a"), *b = kube_test_namespace("exit-b");
        _cleanup_free_ char *text = strdup_printf("%s\n%s\n", a, b);

        /* content the namespace controller removes before the namespace goes,
         * and content whose finalizer no controller of this program removes
         * any more (a hub stopped at the end of its case leaves such) */
        ASSERT_OK(kube_create(c, &kube_resource_configmaps, a, cm, NULL, &st));
        ASSERT_OK(kube_create(c, &kube_resource_configmaps, b, held, NULL, &st));
        ASSERT_NOT_NULL(text);
        ASSERT_OK(write_file_atomic(names_file, text, strlen(text), 0600));
}

TEST(namespaces_deleted_once_the_program_ends)
{
        const char *names_file = getenv(NAMES_FILE_ENV);
        _cleanup_free_ char *file = NULL, *kc_env = NULL, *file_env = NULL, *names = NULL, *out = NULL;
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_strv_free_ char **made = NULL;
        SpawnResult res = {};
        int r;

        if (!isempty(names_file)) {
                make_namespaces(names_file);
                return;
        }

        c = kube_test_client();
        file = strdup_printf("%s/namespaces", test_tmpdir());
        kc_env = strdup_printf("CRADLE_TEST_KUBECONFIG=%s", kube_test_kubeconfig());
        file_env = strdup_printf(NAMES_FILE_ENV "=%s", file);
        ASSERT_NOT_NULL(file_env);
        /* this program again, as another test program on the same cluster */
        r = spawn_run(
                &(SpawnOptions){ .argv = (char *const[]){ (char *)"test-kube-harness", NULL },
                                 .path = "/proc/self/exe",
                                 .env_extra =
                                         (char *const[]){ kc_env, file_env,
                                                          (char *)"TEST_FILTER="
                                                                  "namespaces_deleted_once_the_program_ends",
                                                          NULL },
                                 .timeout = 300 * USEC_PER_SEC,
                                 .merge_output = true },
                &res);
        ASSERT_OK(r);
        out = TAKE_PTR(res.out);
        if (res.exit_status != 0)
                test_fail(__FILE__, __LINE__, "the test program failed (%d):\n%s", res.exit_status,
                          strna(out));
        spawn_result_done(&res);
        ASSERT_OK(read_full_file(file, 4096, &names, NULL));
        ASSERT_OK(strv_split(names, "\n", &made));
        ASSERT_EQ(strv_length(made), 2u);

        /* the program waited for them to go (a real namespace controller
         * takes seconds), releasing the finalizer nobody would remove */
        STRV_FOREACH (ns, made) {
                _cleanup_kube_status_ KubeStatus st = {};
                int q = kube_get(c, &kube_resource_namespaces, NULL, *ns, NULL, &st);

                if (q != -ENOENT)
                        test_fail(__FILE__, __LINE__, "namespace %s is left on the cluster (%d)", *ns, q);
        }
        ASSERT_CONTAINS(out, "removed the finalizers of configmaps held");
}

DEFINE_TEST_MAIN
