/* SPDX-License-Identifier: Apache-2.0 */
#include "cleanup.h"
#include "redact.h"
#include "tests.h"

TEST(urls)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "http://s:6000/api/assisted-install/v2/infra-envs/x",
                  "http://s:6000/api/assisted-install/v2/infra-envs/x" },
                { "https://s/images/x?api_key=eyJhbGciOi&arch=x86_64",
                  "https://s/images/x?api_key=***&arch=x86_64" },
                { "https://s/x?arch=x86_64&token=abc#frag", "https://s/x?arch=x86_64&token=***#frag" },
                { "https://user:hunter22@registry/v2/", "https://user:***@registry/v2/" },
                { "https://user@registry/v2/", "https://user@registry/v2/" },
                { "https://s3/b/o?X-Amz-Signature=deadbeef&X-Amz-Credential=AK",
                  "https://s3/b/o?X-Amz-Signature=***&X-Amz-Credential=***" },
                { "/v2/clusters?password=p", "/v2/clusters?password=***" },
                { "https://s/x?flag", "https://s/x?flag" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *r = redact_url(cases[i].in);
                ASSERT_STREQ(r, cases[i].out);
        }
}

TEST(headers)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "X-Secret-Key: abcdef", "X-Secret-Key: ***" },
                { "authorization: Bearer eyJ", "authorization: ***" },
                { "Cookie:a=b", "Cookie: ***" },
                { "Accept: application/json", "Accept: application/json" },
                { "no colon", "no colon" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *r = redact_header(cases[i].in);
                ASSERT_STREQ(r, cases[i].out);
        }
        ASSERT_TRUE(redact_header_is_sensitive("PROXY-AUTHORIZATION"));
        ASSERT_FALSE(redact_header_is_sensitive("Content-Type"));
}

TEST(known_secrets)
{
        _cleanup_free_ char *a = NULL, *b = NULL;

        ASSERT_OK(redact_register_secret("s3cr3t-token"));
        ASSERT_OK(redact_register_secret("abc")); /* too short: ignored */
        a = redact_known_secrets(
                "failed executing podman --env PULL_SECRET_TOKEN=s3cr3t-token (s3cr3t-token)");
        ASSERT_STREQ(a, "failed executing podman --env PULL_SECRET_TOKEN=*** (***)");
        b = redact_known_secrets("abc is fine");
        ASSERT_STREQ(b, "abc is fine");
}

DEFINE_TEST_MAIN
