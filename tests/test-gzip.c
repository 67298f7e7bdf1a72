/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "gzip.h"
#include "spawn.h"
#include "strutil.h"
#include "tests.h"

TEST(writer_output_reads_back_with_gzip_tool_and_ourselves)
{
        _cleanup_free_ char *path = strdup_printf("%s/out.gz", test_tmpdir()), *data = NULL, *plain = NULL;
        _cleanup_(gzip_writer_freep) GzipWriter *w = NULL;
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        char *argv[] = { "gzip", "-dc", path, NULL };
        void *back = NULL;
        size_t len, back_len;

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(gzip_writer_new(fd, -1, &w));
        for (int i = 0; i < 10000; i++)
                ASSERT_OK(gzip_writer_write(w, "line of log text\n", 17));
        ASSERT_OK(gzip_writer_finish(w));
        fd = safe_close(fd);

        ASSERT_EQ(test_run(argv, &plain), 0);
        ASSERT_EQ(strlen(plain), 170000);

        ASSERT_OK(read_full_file(path, 1 << 20, &data, &len));
        ASSERT_TRUE(len < 170000 / 10);
        ASSERT_OK(gzip_decompress(data, len, 1 << 20, &back, &back_len));
        ASSERT_EQ(back_len, 170000);
        ASSERT_TRUE(memcmp(back, plain, back_len) == 0);
        ASSERT_ERROR(gzip_decompress(data, len, 1000, &(void *){ NULL }, NULL), E2BIG);
        ASSERT_ERROR(gzip_decompress(data, len - 4, 1 << 20, &(void *){ NULL }, NULL), EBADMSG);
        free(back);
}

TEST(concatenated_members_and_garbage)
{
        /* printf one | gzip; printf two | gzip; concatenated */
        _cleanup_free_ char *path = strdup_printf("%s/multi.gz", test_tmpdir()), *data = NULL;
        _cleanup_free_ char *cmd =
                strdup_printf("(printf 'one\\n' | gzip; printf 'two\\n' | gzip) > %s", path);
        char *argv[] = { "sh", "-c", cmd, NULL };
        void *out = NULL;
        size_t len, out_len;

        ASSERT_EQ(test_run(argv, NULL), 0);
        ASSERT_OK(read_full_file(path, 1 << 20, &data, &len));
        ASSERT_OK(gzip_decompress(data, len, 1 << 20, &out, &out_len));
        ASSERT_EQ(out_len, 8);
        ASSERT_TRUE(memcmp(out, "one\ntwo\n", 8) == 0);
        free(out);
        ASSERT_ERROR(gzip_decompress("not gzip at all", 15, 1 << 20, &out, NULL), EBADMSG);
        ASSERT_ERROR(gzip_decompress("", 0, 1 << 20, &out, NULL), EBADMSG);
}

DEFINE_TEST_MAIN
