/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include "base64.h"
#include "cleanup.h"
#include "tests.h"

static void expect(const char *in, const char *skip, const char *want)
{
        _cleanup_free_ char *out = NULL;
        size_t len = 0;

        ASSERT_OK(base64_decode(in, skip, &out, &len));
        ASSERT_EQ(len, strlen(want));
        ASSERT_STREQ(out, want);
}

static void refuse(const char *in, const char *skip)
{
        _cleanup_free_ char *out = NULL;

        ASSERT_ERROR(base64_decode(in, skip, &out, NULL), EINVAL);
        ASSERT_NULL(out);
}

TEST(decodes_as_go_std_encoding)
{
        expect("", NULL, "");
        expect("Zg==", NULL, "f");
        expect("Zm8=", NULL, "fo");
        expect("Zm9v", NULL, "foo");
        expect("aGVsbG8sIHdvcmxkIQ==", NULL, "hello, world!");
}

TEST(padding_is_required_and_only_at_the_end)
{
        refuse("Zg", NULL);
        refuse("Zg=", NULL);
        refuse("Z===", NULL);
        refuse("Zg==Zg==", NULL);
        refuse("Zm=v", NULL);
        refuse("Zm9v!", NULL);
}

TEST(skipped_characters)
{
        expect("Zm9v\r\nYmFy", "\r\n", "foobar");
        refuse("Zm9v YmFy", "\r\n");
        expect("Zm9v YmFy\t", " \t\r\n", "foobar");
        refuse("Zm9v\nYmFy", NULL);
}

TEST(encoding_round_trips)
{
        static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
        static const char *const out[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };

        for (size_t i = 0; i < ELEMENTSOF(in); i++) {
                _cleanup_free_ char *e = base64_encode(in[i], strlen(in[i]));
                ASSERT_STREQ(e, out[i]);
                expect(e, NULL, in[i]);
        }
}

DEFINE_TEST_MAIN
