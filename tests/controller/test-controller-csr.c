/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which certificate signing requests the controller approves
 * (controller/csr.h), as a table of requests made here with OpenSSL as a
 * kubelet makes them (EC P-256 keys, the kubelet's subjects and
 * alternative names) and the requester, groups and usages the API server
 * records: only a kubelet's requests for a host of the cluster pass, and
 * every refusal says why. Also the request parser's limits and the
 * approval's body.
 */
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/cluster-hosts.h"
#include "base64.h"
#include "cleanup.h"
#include "controller/csr.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

#define BOOTSTRAPPER_GROUPS \
        "[\"system:serviceaccounts\", \"system:serviceaccounts:openshift-machine-config-operator\", " \
        "\"system:authenticated\"]"
#define NODE_GROUPS "[\"system:nodes\", \"system:authenticated\"]"
#define CLIENT_USAGES "[\"digital signature\", \"client auth\"]"
#define SERVING_USAGES "[\"digital signature\", \"server auth\"]"

static EVP_PKEY *key;

/* A PEM certificate request: subject "CN=cn" plus each O of orgs
 * (comma-separated), alternative names in OpenSSL's syntax
 * ("DNS:a,IP:192.0.2.1") or NULL; `tamper` changes the subject after
 * signing, so the signature no longer verifies. */
static char *request_pem(const char *cn, const char *orgs, const char *sans, bool tamper)
{
        X509_REQ *req = X509_REQ_new();
        X509_NAME *name = X509_REQ_get_subject_name(req);
        BIO *bio = BIO_new(BIO_s_mem());
        _cleanup_strv_free_ char **o = NULL;
        char *data, *pem;
        long len;

        if (!key) {
                key = EVP_EC_gen("P-256");
                ASSERT_NOT_NULL(key);
        }
        ASSERT_OK(strv_split(strempty(orgs), ",", &o));
        STRV_FOREACH (org, o)
                ASSERT_TRUE(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (unsigned char *)*org, -1,
                                                       -1, 0));
        ASSERT_TRUE(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (unsigned char *)cn, -1, -1, 0));
        ASSERT_TRUE(X509_REQ_set_pubkey(req, key));
        if (sans) {
                STACK_OF(X509_EXTENSION) *exts = sk_X509_EXTENSION_new_null();
                X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, sans);
                ASSERT_NOT_NULL(ext);
                sk_X509_EXTENSION_push(exts, ext);
                ASSERT_TRUE(X509_REQ_add_extensions(req, exts));
                sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
        }
        ASSERT_TRUE(X509_REQ_sign(req, key, EVP_sha256()) > 0);
        if (tamper)
                ASSERT_TRUE(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                                       (unsigned char *)"system:masters", -1, -1, 0));
        ASSERT_TRUE(PEM_write_bio_X509_REQ(bio, req));
        len = BIO_get_mem_data(bio, &data);
        pem = calloc(1, (size_t)len + 1);
        ASSERT_NOT_NULL(pem);
        memcpy(pem, data, (size_t)len);
        BIO_free(bio);
        X509_REQ_free(req);
        return pem;
}

/* A CertificateSigningRequest as the API server stores it */
static json_object *csr_object(const char *signer, const char *username, const char *groups,
                               const char *usages, const char *pem, const char *conditions)
{
        _cleanup_free_ char *b64 = base64_encode(pem, strlen(pem)), *text = NULL;
        json_object *o = NULL;

        text = strdup_printf(
                "{\"apiVersion\": \"certificates.k8s.io/v1\", \"kind\": \"CertificateSigningRequest\", "
                "\"metadata\": {\"name\": \"csr-x\", \"uid\": \"u-1\", \"resourceVersion\": \"7\"}, "
                "\"spec\": {\"request\": \"%s\", \"signerName\": \"%s\", \"username\": \"%s\", "
                "\"groups\": %s, \"usages\": %s}, \"status\": {%s}}",
                b64, signer, username, groups, usages, strempty(conditions));
        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

static void hosts_make(ClusterHosts *ret)
{
        static const char *cluster =
                "{\"hosts\": ["
                "{\"id\": \"h0\", \"infra_env_id\": \"ie\", \"requested_hostname\": \"master-0\", "
                "\"status\": "
                "\"installing-in-progress\", \"inventory\": \"{\\\"interfaces\\\": "
                "[{\\\"ipv4_addresses\\\": "
                "[\\\"192.0.2.10/24\\\"], \\\"ipv6_addresses\\\": [\\\"2001:db8::a/64\\\"]}]}\"},"
                "{\"id\": \"h1\", \"infra_env_id\": \"ie\", \"requested_hostname\": "
                "\"worker-0.example.com\", "
                "\"status\": \"installing-in-progress\", \"inventory\": \"{\\\"interfaces\\\": "
                "[{\\\"ipv4_addresses\\\": [\\\"192.0.2.20/24\\\"]}]}\"}]}";
        _cleanup_(json_object_putp) json_object *c = NULL;

        ASSERT_OK(json_parse(cluster, strlen(cluster), 1 << 20, &c, NULL));
        ASSERT_OK(cluster_hosts_from_cluster(c, NULL, ret, NULL));
}

/* master-0 already has its Node */
static json_object *nodes_make(void)
{
        static const char *text = "{\"items\": [{\"metadata\": {\"name\": \"master-0\"}}]}";
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

typedef struct Case {
        const char *what;
        const char *signer;
        const char *username;
        const char *groups;
        const char *usages;
        const char *cn;
        const char *orgs;
        const char *sans;
        bool tamper;
        const char *conditions;
        CsrVerdict verdict;
        const char *node_or_reason; /* CSR_APPROVE: the node; CSR_REFUSE: a part of the reason */
} Case;

#define CLIENT CSR_SIGNER_KUBELET_CLIENT
#define SERVING CSR_SIGNER_KUBELET_SERVING
#define BOOT CSR_NODE_BOOTSTRAPPER

static const Case cases[] = {
        /* kubelet client certificates */
        { "bootstrap of a new worker", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES,
          "system:node:worker-0", "system:nodes", NULL, false, NULL, CSR_APPROVE, "worker-0" },
        { "key encipherment is allowed", CLIENT, BOOT, BOOTSTRAPPER_GROUPS,
          "[\"digital signature\", \"key encipherment\", \"client auth\"]",
          "system:node:worker-0.example.com", "system:nodes", NULL, false, NULL, CSR_APPROVE,
          "worker-0.example.com" },
        { "renewal by the node itself", CLIENT, "system:node:master-0", NODE_GROUPS, CLIENT_USAGES,
          "system:node:master-0", "system:nodes", NULL, false, NULL, CSR_APPROVE, "master-0" },
        { "bootstrap for a node that exists", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES,
          "system:node:master-0", "system:nodes", NULL, false, NULL, CSR_REFUSE,
          "node master-0 already exists" },
        { "a node of another cluster", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES,
          "system:node:intruder", "system:nodes", NULL, false, NULL, CSR_REFUSE,
          "node intruder is no host of this cluster" },
        { "requested by someone else", CLIENT, "alice", "[\"system:authenticated\"]", CLIENT_USAGES,
          "system:node:worker-0", "system:nodes", NULL, false, NULL, CSR_REFUSE,
          "requested by alice, neither the node bootstrapper nor node worker-0" },
        { "a node renewing another's", CLIENT, "system:node:master-0", NODE_GROUPS, CLIENT_USAGES,
          "system:node:worker-0", "system:nodes", NULL, false, NULL, CSR_REFUSE,
          "requested by system:node:master-0, neither the node bootstrapper nor node worker-0" },
        { "the bootstrapper with other groups", CLIENT, BOOT,
          "[\"system:serviceaccounts\", \"system:masters\", \"system:authenticated\"]", CLIENT_USAGES,
          "system:node:worker-0", "system:nodes", NULL, false, NULL, CSR_REFUSE, "other groups" },
        { "a client certificate with names", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES,
          "system:node:worker-0", "system:nodes", "DNS:worker-0", false, NULL, CSR_REFUSE,
          "no alternative names" },
        { "the masters' group", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES, "system:node:worker-0",
          "system:nodes,system:masters", NULL, false, NULL, CSR_REFUSE, "is not a node's" },
        { "not a node's name", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES, "admin", "system:nodes",
          NULL, false, NULL, CSR_REFUSE, "subject CN=admin O=system:nodes is not a node's" },
        { "server auth in a client certificate", CLIENT, BOOT, BOOTSTRAPPER_GROUPS,
          "[\"digital signature\", \"client auth\", \"server auth\"]", "system:node:worker-0",
          "system:nodes", NULL, false, NULL, CSR_REFUSE, "usages" },
        { "a forged signature", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES, "system:node:worker-0",
          "system:nodes", NULL, true, NULL, CSR_REFUSE, "signature does not verify" },
        /* kubelet serving certificates */
        { "serving with the node's names", SERVING, "system:node:master-0", NODE_GROUPS, SERVING_USAGES,
          "system:node:master-0", "system:nodes", "DNS:master-0,IP:192.0.2.10,IP:2001:db8:0::a", false, NULL,
          CSR_APPROVE, "master-0" },
        { "serving with the legacy usages", SERVING, "system:node:worker-0", NODE_GROUPS,
          "[\"digital signature\", \"key encipherment\", \"server auth\"]", "system:node:worker-0",
          "system:nodes", "DNS:worker-0.example.com,DNS:worker-0,IP:192.0.2.20", false, NULL, CSR_APPROVE,
          "worker-0" },
        { "serving for another host's address", SERVING, "system:node:master-0", NODE_GROUPS, SERVING_USAGES,
          "system:node:master-0", "system:nodes", "DNS:master-0,IP:192.0.2.20", false, NULL, CSR_REFUSE,
          "IP address 192.0.2.20 is not an address of host master-0" },
        { "serving for another name", SERVING, "system:node:master-0", NODE_GROUPS, SERVING_USAGES,
          "system:node:master-0", "system:nodes", "DNS:api.example.com,IP:192.0.2.10", false, NULL,
          CSR_REFUSE, "DNS name api.example.com is not a name of host master-0" },
        { "serving with an e-mail name", SERVING, "system:node:master-0", NODE_GROUPS, SERVING_USAGES,
          "system:node:master-0", "system:nodes", "email:a@example.com", false, NULL, CSR_REFUSE, "e-mail" },
        { "serving for another node than the requester", SERVING, "system:node:master-0", NODE_GROUPS,
          SERVING_USAGES, "system:node:worker-0", "system:nodes", "DNS:worker-0", false, NULL, CSR_REFUSE,
          "is not the requester" },
        { "serving outside system:nodes", SERVING, "system:node:master-0", "[\"system:authenticated\"]",
          SERVING_USAGES, "system:node:master-0", "system:nodes", NULL, false, NULL, CSR_REFUSE,
          "outside the groups" },
        { "serving requested by a service account", SERVING, BOOT, BOOTSTRAPPER_GROUPS, SERVING_USAGES,
          "system:node:master-0", "system:nodes", NULL, false, NULL, CSR_REFUSE, "not a node" },
        { "serving for a node of another cluster", SERVING, "system:node:intruder", NODE_GROUPS,
          SERVING_USAGES, "system:node:intruder", "system:nodes", "IP:192.0.2.10", false, NULL, CSR_REFUSE,
          "node intruder is no host of this cluster" },
        { "client auth in a serving certificate", SERVING, "system:node:master-0", NODE_GROUPS,
          "[\"digital signature\", \"server auth\", \"client auth\"]", "system:node:master-0",
          "system:nodes", NULL, false, NULL, CSR_REFUSE, "usages" },
        /* other signers, decided requests */
        { "another signer", "kubernetes.io/kube-apiserver-client", "system:node:master-0", NODE_GROUPS,
          CLIENT_USAGES, "system:node:master-0", "system:nodes", NULL, false, NULL, CSR_REFUSE,
          "signer kubernetes.io/kube-apiserver-client is not a kubelet's" },
        { "already approved", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES, "system:node:worker-0",
          "system:nodes", NULL, false, "\"conditions\": [{\"type\": \"Approved\", \"status\": \"True\"}]",
          CSR_DECIDED, NULL },
        { "denied", CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES, "system:node:worker-0", "system:nodes",
          NULL, false, "\"conditions\": [{\"type\": \"Denied\", \"status\": \"True\"}]", CSR_DECIDED, NULL },
};

TEST(decisions)
{
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_(json_object_putp) json_object *nodes = nodes_make();

        hosts_make(&hosts);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const Case *c = &cases[i];
                _cleanup_free_ char *pem = request_pem(c->cn, c->orgs, c->sans, c->tamper);
                _cleanup_(json_object_putp) json_object *csr =
                        csr_object(c->signer, c->username, c->groups, c->usages, pem, c->conditions);
                CsrDecision d = {};

                fprintf(stderr, "case: %s\n", c->what);
                ASSERT_OK(csr_decide(csr, &hosts, nodes, &d));
                if (d.verdict != c->verdict)
                        test_fail(__FILE__, __LINE__, "%s: verdict %d, expected %d (%s)", c->what, d.verdict,
                                  c->verdict, strna(d.reason));
                if (c->verdict == CSR_APPROVE)
                        ASSERT_STREQ(d.node, c->node_or_reason);
                if (c->verdict == CSR_REFUSE)
                        ASSERT_CONTAINS(d.reason, c->node_or_reason);
                csr_decision_done(&d);
        }
}

TEST(unreadable_requests)
{
        static const char *const requests[] = {
                "not base64!",
                /* base64 of text that holds no request */
                "aGVsbG8=",
                /* a PEM block of the right type whose body is no request */
                "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KQUFBQQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVN"
                "ULS0t"
                "LS0K",
        };
        _cleanup_(cluster_hosts_done) ClusterHosts hosts = {};
        _cleanup_(json_object_putp) json_object *nodes = nodes_make();

        hosts_make(&hosts);
        for (size_t i = 0; i < ELEMENTSOF(requests); i++) {
                _cleanup_(json_object_putp) json_object *csr =
                        csr_object(CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES, "x", NULL);
                _cleanup_(csr_decision_done) CsrDecision d = {};

                ASSERT_OK(json_add_string(json_get(csr, "spec"), "request", requests[i]));
                ASSERT_OK(csr_decide(csr, &hosts, nodes, &d));
                ASSERT_EQ(d.verdict, CSR_REFUSE);
                ASSERT_NOT_NULL(d.reason);
        }
}

TEST(request_parse)
{
        _cleanup_free_ char *pem = request_pem("system:node:master-0", "system:nodes",
                                               "DNS:master-0,IP:192.0.2.10,URI:spiffe://x", false);
        _cleanup_(csr_request_done) CsrRequest r = {};
        _cleanup_free_ char *err = NULL, *big = calloc(1, 70000);
        CsrRequest none = {};

        ASSERT_OK(csr_request_parse(pem, strlen(pem), &r, NULL));
        ASSERT_STREQ(r.common_name, "system:node:master-0");
        ASSERT_EQ(strv_length(r.organizations), 1u);
        ASSERT_STREQ(r.dns_names[0], "master-0");
        ASSERT_STREQ(r.ip_addresses[0], "192.0.2.10");
        ASSERT_EQ(r.n_other_names, 1u);
        ASSERT_TRUE(r.signature_valid);

        memset(big, 'A', 69999);
        ASSERT_ERROR(csr_request_parse(big, strlen(big), &none, &err), EBADMSG);
        ASSERT_CONTAINS(err, "more than");
}

TEST(approval_body)
{
        _cleanup_free_ char *pem = request_pem("system:node:worker-0", "system:nodes", NULL, false);
        _cleanup_(json_object_putp)
                json_object *csr = csr_object(CLIENT, BOOT, BOOTSTRAPPER_GROUPS, CLIENT_USAGES, pem, NULL),
                            *body = csr_approval(csr, "2026-01-02T03:04:05Z");
        json_object *conds = json_get_path(body, "status.conditions"), *c;

        ASSERT_NOT_NULL(body);
        ASSERT_EQ(json_object_array_length(conds), 1u);
        c = json_object_array_get_idx(conds, 0);
        ASSERT_STREQ(json_get_string(c, "type"), "Approved");
        ASSERT_STREQ(json_get_string(c, "status"), "True");
        ASSERT_STREQ(json_get_string(c, "reason"), "NodeCSRApprove");
        ASSERT_STREQ(json_get_string(c, "message"),
                     "This CSR was approved by the assisted-installer-controller");
        ASSERT_STREQ(json_get_string(c, "lastUpdateTime"), "2026-01-02T03:04:05Z");
        /* the rest as read: the resourceVersion makes the update conditional */
        ASSERT_STREQ(json_get_string(json_get(body, "metadata"), "resourceVersion"), "7");
        ASSERT_NULL(json_get_path(csr, "status.conditions"));
}

static void key_free(void)
{
        EVP_PKEY_free(key);
}

int main(int argc, char **argv)
{
        int r = test_main(argc, argv);

        key_free();
        return r;
}
