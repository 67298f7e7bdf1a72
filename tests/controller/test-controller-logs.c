/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's logs (controller/logs.h): when must-gather runs, its
 * images (upstream's parseMustGatherImages cases) and command line, the
 * README of cradle's own gathering, and controller_logs.tar.gz read back
 * with zlib and a ustar reader of its own here (not the writer's code).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assisted/controller-contract.h"
#include "cleanup.h"
#include "controller/logs.h"
#include "fileio.h"
#include "gzip.h"
#include "macro.h"
#include "strutil.h"
#include "tests.h"

static char *images_joined(const char *config, bool failed, char *const *ops)
{
        _cleanup_strv_free_ char **images = NULL;

        ASSERT_OK(must_gather_images(config, failed, ops, &images));
        ASSERT_NOT_NULL(images);
        return strv_join(images, " ");
}

TEST(gather_needed)
{
        ASSERT_FALSE(logs_gather_needed(false, NULL));
        ASSERT_FALSE(logs_gather_needed(false, (char *[]){ NULL }));
        ASSERT_TRUE(logs_gather_needed(true, NULL));
        ASSERT_TRUE(logs_gather_needed(false, (char *[]){ (char *)"lso", NULL }));
}

#define MAP \
        "{\"ocp\": \"quay.io/openshift/must-gather:4.13\", \"lso\": \"quay.io/lso/must-gather:1\", " \
        "\"odf\": \"quay.io/odf/must-gather:2\"}"

TEST(images)
{
        static const struct {
                const char *config;
                bool failed;
                const char *ops[3];
                const char *expect;
        } cases[] = {
                /* empty: the release's image */
                { NULL, true, {}, "" },
                { "", true, { "lso" }, "" },
                /* not JSON: the string as is, whatever failed */
                { "quay.io/custom/must-gather:1", true, {}, "quay.io/custom/must-gather:1" },
                { "quay.io/custom/must-gather:1", false, { "lso" }, "quay.io/custom/must-gather:1" },
                /* a JSON map: ocp for a general error, one per failed operator */
                { MAP, true, {}, "quay.io/openshift/must-gather:4.13" },
                { MAP, false, { "lso" }, "quay.io/lso/must-gather:1" },
                { MAP,
                  true,
                  { "odf", "lso" },
                  "quay.io/openshift/must-gather:4.13 quay.io/odf/must-gather:2 quay.io/lso/must-gather:1" },
                /* an operator without an image of its own adds none */
                { MAP, false, { "cnv" }, "" },
                /* no ocp in the map */
                { "{\"lso\": \"quay.io/lso/must-gather:1\"}", true, {}, "" },
                /* JSON that is no map of strings is a plain value to Go's
                 * json.Unmarshal into map[string]string: passed as is */
                { "[\"a\"]", true, {}, "[\"a\"]" },
                { "{\"ocp\": 1}", true, {}, "{\"ocp\": 1}" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *ops[4] = {};
                for (size_t j = 0; j < 3 && cases[i].ops[j]; j++)
                        ops[j] = (char *)cases[i].ops[j];
                _cleanup_free_ char *got = images_joined(cases[i].config, cases[i].failed, ops);
                ASSERT_STREQ(got, cases[i].expect);
        }
}

TEST(argv)
{
        _cleanup_strv_free_ char **none = must_gather_argv("/tmp/k/kubeconfig-noingress", NULL);
        _cleanup_strv_free_ char **two = must_gather_argv("/tmp/k/kubeconfig-noingress",
                                                          (char *[]){ (char *)"a:1", (char *)"b:2", NULL });
        _cleanup_free_ char *j1 = strv_join(none, "|"), *j2 = strv_join(two, "|");

        ASSERT_STREQ(j1, "oc|--kubeconfig=/tmp/k/kubeconfig-noingress|adm|must-gather");
        ASSERT_STREQ(j2,
                     "oc|--kubeconfig=/tmp/k/kubeconfig-noingress|adm|must-gather|--image=a:1|--image=b:2");
}

TEST(texts)
{
        _cleanup_free_ char *none =
                controller_log_unavailable("no Running pod", "No such file or directory");
        _cleanup_free_ char *all = cluster_gather_readme("oc is not on the controller's PATH", NULL);
        _cleanup_free_ char *some = cluster_gather_readme(
                "oc is not on the controller's PATH",
                (char *[]){ NULL, (char *)"clusteroperators is forbidden", NULL, NULL });

        ASSERT_CONTAINS(none, "no Running pod");
        ASSERT_CONTAINS(none, CONTROLLER_LOG_FILE " (No such file or directory)");
        ASSERT_CONTAINS(all, "This is not a must-gather: oc is not on the controller's PATH");
        ASSERT_CONTAINS(all, CONTROLLER_LOGS_ENTRY " is the controller's log");
        ASSERT_CONTAINS(all, "cluster/nodes.json: the Nodes");
        ASSERT_CONTAINS(all, "cluster/clusteroperators.json: the ClusterOperators");
        ASSERT_CONTAINS(all, "cluster/events.json: the Events of every namespace");
        ASSERT_CONTAINS(some, "cluster/nodes.json: the Nodes");
        ASSERT_CONTAINS(some, "cluster/clusteroperators.json: not collected: clusteroperators is forbidden");
}

/* one member of a ustar stream */
typedef struct Member {
        char name[101];
        char type;
        unsigned mode;
        size_t size;
        const char *data;
} Member;

static size_t tar_read(const char *tar, size_t len, Member *out, size_t max)
{
        size_t n = 0, off = 0;

        while (off + 512 <= len) {
                const char *h = tar + off;
                unsigned long sum = 0, want;
                Member *m = &out[n];

                if (h[0] == 0)
                        break; /* the end blocks */
                ASSERT_TRUE(n < max);
                for (size_t i = 0; i < 512; i++)
                        sum += (i >= 148 && i < 156) ? ' ' : (unsigned char)h[i];
                want = strtoul(h + 148, NULL, 8);
                ASSERT_EQ(sum, want);
                ASSERT_STREQ(h + 257, "ustar");
                memcpy(m->name, h, 100);
                m->name[100] = 0;
                m->type = h[156];
                m->mode = (unsigned)strtoul(h + 100, NULL, 8);
                m->size = strtoul(h + 124, NULL, 8);
                m->data = h + 512;
                off += 512 + (m->size + 511) / 512 * 512;
                ASSERT_LE(off, len);
                n++;
        }
        return n;
}

TEST(archive)
{
        _cleanup_free_ char *path = strdup_printf("%s/controller_logs.tar.gz", test_tmpdir());
        _cleanup_free_ char *src = strdup_printf("%s/mg.tar.gz", test_tmpdir());
        _cleanup_free_ char *gz = NULL, *must_gather = NULL;
        _cleanup_free_ void *tar = NULL;
        size_t gz_len = 0, tar_len = 0, mg_len = 0;
        static const char log[] = "time=\"x\" level=info msg=\"Start running Assisted-controller\"\n";
        Member m[4];
        int fd;

        /* a file member is copied as it is on disk */
        ASSERT_OK(write_file_atomic(src, "\x1f\x8b not really", 14, 0600));
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_OK(logs_archive_write(
                fd,
                (LogsMember[]){
                        { .name = MUST_GATHER_ARCHIVE, .path = src },
                        { .name = CLUSTER_GATHER_README, .data = "why\n", .len = 4 },
                        { .name = CONTROLLER_LOGS_ENTRY, .data = log, .len = strlen(log) },
                },
                3));
        close(fd);

        ASSERT_OK(read_full_file(path, 1 << 20, &gz, &gz_len));
        ASSERT_EQ((unsigned char)gz[0], 0x1f);
        ASSERT_EQ((unsigned char)gz[1], 0x8b);
        ASSERT_OK(gzip_decompress(gz, gz_len, 1 << 20, &tar, &tar_len));
        ASSERT_EQ(tar_len % 512, 0u);
        ASSERT_EQ(tar_read(tar, tar_len, m, ELEMENTSOF(m)), 3u);

        ASSERT_STREQ(m[0].name, "must-gather.tar.gz");
        ASSERT_EQ(m[0].type, '0');
        ASSERT_EQ(m[0].mode, 0644u); /* not the file's 0600 */
        ASSERT_EQ(m[0].size, 14u);
        ASSERT_OK(read_full_file(src, 100, &must_gather, &mg_len));
        ASSERT_TRUE(memcmp(m[0].data, must_gather, 14) == 0);

        ASSERT_STREQ(m[1].name, "cluster/README");
        ASSERT_EQ(m[1].mode, 0644u);
        ASSERT_EQ(m[1].size, 4u);
        ASSERT_TRUE(memcmp(m[1].data, "why\n", 4) == 0);

        ASSERT_STREQ(m[2].name, "assisted-installer-controller.logs");
        ASSERT_EQ(m[2].mode, 0644u);
        ASSERT_EQ(m[2].size, strlen(log));
        ASSERT_TRUE(memcmp(m[2].data, log, strlen(log)) == 0);
}

TEST(archive_missing_file)
{
        _cleanup_free_ char *path = strdup_printf("%s/bad.tar.gz", test_tmpdir());
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ASSERT_GE(fd, 0);
        ASSERT_ERROR(logs_archive_write(fd, (LogsMember[]){ { .name = "x", .path = "/nonexistent/x" } }, 1),
                     ENOENT);
        close(fd);
}

DEFINE_TEST_MAIN
