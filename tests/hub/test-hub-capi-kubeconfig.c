/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubeconfig Secret's short-lived client certificate
 * (hub/controllers/capi-kubeconfig.h): when it is renewed, from the
 * certificate the Secret holds, and what is asked of the spoke's CSR API.
 * The reconcile around it is test-hub-capi.c's.
 */
#include <json-c/json.h>

#include "capi-kubeconfig.h"
#include "cleanup.h"
#include "hubtest.h"
#include "jsonutil.h"
#include "strutil.h"

#define S USEC_PER_SEC
#define NOW (UINT64_C(1790000000) * S)
#define DAY (86400 * S)

TEST(renewal_time)
{
        static const struct {
                usec_t not_before, not_after, renew_before, at;
        } cases[] = {
                /* half its validity: a day from the real signer's backdated start */
                { NOW - 300 * S, NOW - 300 * S + DAY, 0, NOW - 300 * S + DAY / 2 },
                /* 600 s asked: notBefore now-5m, notAfter now+10m, half at now+2m30s */
                { NOW - 300 * S, NOW + 600 * S, 0, NOW + 150 * S },
                /* --kubeconfig-cert-renew-before: that long before the end */
                { NOW - 300 * S, NOW + 600 * S, 590 * S, NOW + 10 * S },
                /* longer than the validity: at once from its start */
                { NOW - 300 * S, NOW + 600 * S, 2000 * S, NOW - 300 * S },
                /* a certificate that ends before it begins: renewed at its start */
                { NOW, NOW - S, 0, NOW },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ASSERT_EQ(capi_kubeconfig_renew_at(cases[i].not_before, cases[i].not_after,
                                                   cases[i].renew_before),
                          cases[i].at);
}

TEST(renew_now_or_later)
{
        static const struct {
                const char *name;
                bool minted, same_file;
                usec_t not_before, not_after, renew_before, now;
                bool renew;
                usec_t after; /* when not renewed */
        } cases[] = {
                { "fresh, half a day to go", true, true, NOW, NOW + DAY, 0, NOW, false, DAY / 2 },
                { "a second before half-life", true, true, NOW, NOW + DAY, 0, NOW + DAY / 2 - S, false, S },
                { "at half-life", true, true, NOW, NOW + DAY, 0, NOW + DAY / 2, true, 0 },
                { "expired", true, true, NOW, NOW + DAY, 0, NOW + 2 * DAY, true, 0 },
                { "the admin's certificate (not minted here)", false, true, NOW, NOW + 3650 * DAY, 0, NOW,
                  true, 0 },
                { "of kubeconfig-noingress once installed", true, false, NOW, NOW + DAY, 0, NOW, true, 0 },
                { "unreadable", true, true, 0, 0, 0, NOW, true, 0 },
                { "renew-before 590 s of 600, 5 s in", true, true, NOW - 300 * S, NOW + 600 * S, 590 * S,
                  NOW + 5 * S, false, 5 * S },
                { "renew-before 590 s of 600, 10 s in", true, true, NOW - 300 * S, NOW + 600 * S, 590 * S,
                  NOW + 10 * S, true, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CapiKubeconfigCert c = { .minted = cases[i].minted,
                                         .not_before = cases[i].not_before,
                                         .not_after = cases[i].not_after };
                usec_t after = 0;
                bool renew = capi_kubeconfig_renew_now(&c, cases[i].same_file, cases[i].now,
                                                       cases[i].renew_before, &after);

                if (renew != cases[i].renew || (!renew && after != cases[i].after))
                        test_fail(__FILE__, __LINE__, "%s: renew %d after %llu", cases[i].name, renew,
                                  (unsigned long long)after);
        }
}

/* what the spoke is asked: the kube-apiserver-client signer, the
 * expiration in seconds, client auth alone, a user of its own (never
 * system:masters: the API refuses it for this signer), bound to
 * cluster-admin; the kubeconfig's names as KCP's */
TEST(mint_request)
{
        _cleanup_(json_object_putp) json_object *b = NULL;

        ASSERT_OK(capi_kubeconfig_mint_body("ns1", "spoke", 600 * S, &b));
        ASSERT_STREQ(hubtest_str(b, "commonName"), "cradle-hub:cluster-api");
        ASSERT_NULL(json_get(b, "organizations"));
        ASSERT_STREQ(hubtest_str(b, "csr.metadata.generateName"), "cradle-hub-kubeconfig-");
        ASSERT_STREQ(hubtest_str(b, "csr.spec.signerName"), "kubernetes.io/kube-apiserver-client");
        ASSERT_EQ(json_object_get_int64(json_get_path(b, "csr.spec.expirationSeconds")), 600);
        ASSERT_EQ(hub_json_array_length(json_get_path(b, "csr.spec.usages")), (size_t)1);
        ASSERT_STREQ(
                json_object_get_string(json_object_array_get_idx(json_get_path(b, "csr.spec.usages"), 0)),
                "client auth");
        ASSERT_NULL(json_get_path(b, "csr.spec.request"));
        ASSERT_STREQ(hubtest_str(b, "approval.reason"), "CradleHubApproved");
        ASSERT_STREQ(hubtest_str(b, "kubeconfig.cluster"), "spoke");
        ASSERT_STREQ(hubtest_str(b, "kubeconfig.user"), "spoke-admin");
        ASSERT_STREQ(hubtest_str(b, "kubeconfig.context"), "spoke-admin@spoke");
        ASSERT_STREQ(hubtest_str(b, "binding.metadata.name"), "cradle-hub-cluster-api");
        ASSERT_STREQ(hubtest_str(b, "binding.roleRef.name"), "cluster-admin");
        ASSERT_STREQ(hubtest_str(json_object_array_get_idx(json_get_path(b, "binding.subjects"), 0), "name"),
                     "cradle-hub:cluster-api");
}

DEFINE_TEST_MAIN
