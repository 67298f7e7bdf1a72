/* SPDX-License-Identifier: Apache-2.0 */
#include "buf.h"
#include "tests.h"

static void assert_sane(const Buf *b)
{
        if (b->data) {
                ASSERT_LE(b->len + 1, b->allocated);
                ASSERT_EQ(b->data[b->len], 0);
        } else {
                ASSERT_EQ(b->len, 0);
        }
        ASSERT_LE(b->len, b->max);
}

TEST(untouched_buffer_holds_nothing)
{
        _cleanup_buf_ Buf b = BUF_INIT(16);

        ASSERT_NULL(b.data);
        ASSERT_STREQ(buf_str(&b), "");
        assert_sane(&b);
}

TEST(append_and_take)
{
        _cleanup_buf_ Buf b = BUF_INIT(64);
        _cleanup_free_ char *s = NULL;
        size_t n;

        ASSERT_OK(buf_append_str(&b, "host"));
        ASSERT_OK(buf_append_char(&b, '-'));
        ASSERT_OK(buf_appendf(&b, "%d/%s", 42, "x"));
        assert_sane(&b);
        ASSERT_STREQ(buf_str(&b), "host-42/x");
        ASSERT_OK(buf_take(&b, &s, &n));
        ASSERT_EQ(n, 9);
        ASSERT_STREQ(s, "host-42/x");
        ASSERT_NULL(b.data);
        ASSERT_EQ(b.max, 64);
}

TEST(take_of_empty_gives_empty_string)
{
        _cleanup_buf_ Buf b = BUF_INIT(8);
        _cleanup_free_ char *s = NULL;

        ASSERT_OK(buf_take(&b, &s, NULL));
        ASSERT_STREQ(s, "");
}

TEST(ceiling_frees_and_fails)
{
        _cleanup_buf_ Buf b = BUF_INIT(8);

        ASSERT_OK(buf_append_str(&b, "12345678"));
        assert_sane(&b);
        ASSERT_ERROR(buf_append_char(&b, '9'), E2BIG);
        /* a failed append never leaves a half-filled buffer */
        ASSERT_NULL(b.data);
        ASSERT_EQ(b.len, 0);
        ASSERT_ERROR(buf_appendf(&b, "%s", "123456789"), E2BIG);
        ASSERT_NULL(b.data);
}

TEST(growth_keeps_contents)
{
        _cleanup_buf_ Buf b = BUF_INIT(1 << 20);

        for (int i = 0; i < 10000; i++)
                ASSERT_OK(buf_appendf(&b, "%04d", i % 10000));
        assert_sane(&b);
        ASSERT_EQ(b.len, 40000);
        ASSERT_TRUE(memcmp(b.data + 4 * 9999, "9999", 4) == 0);
}

TEST(consume_keeps_rest)
{
        _cleanup_buf_ Buf b = BUF_INIT(64);

        ASSERT_OK(buf_append_str(&b, "line1\nline2"));
        buf_consume(&b, 6);
        ASSERT_STREQ(buf_str(&b), "line2");
        buf_consume(&b, 100);
        ASSERT_STREQ(buf_str(&b), "");
        assert_sane(&b);
}

DEFINE_TEST_MAIN
