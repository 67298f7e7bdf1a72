/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base64.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "node-csr.h"
#include "strutil.h"

typedef struct Csr {
        char *cn;
        char **orgs;
        char **dns;
        char **ips;
        unsigned n_emails;
} Csr;

static void csr_done(Csr *c)
{
        free(c->cn);
        strv_free(c->orgs);
        strv_free(c->dns);
        strv_free(c->ips);
}

static int csr_parse(json_object *csr, Csr *ret)
{
        const char *req = json_get_string(json_get(csr, "spec"), "request");
        _cleanup_free_ char *pem = NULL;
        size_t len = 0;
        BIO *bio;
        X509_REQ *x;
        X509_NAME *subj;
        STACK_OF(X509_EXTENSION) * exts;
        int r = 0;

        *ret = (Csr){};
        if (!req || base64_decode(req, NULL, &pem, &len) < 0)
                return -EBADMSG;
        bio = BIO_new_mem_buf(pem, (int)len);
        if (!bio)
                return -ENOMEM;
        x = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL);
        BIO_free(bio);
        if (!x)
                return -EBADMSG;
        subj = X509_REQ_get_subject_name(x);
        for (int i = -1; (i = X509_NAME_get_index_by_NID(subj, NID_commonName, i)) >= 0;) {
                ASN1_STRING *s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, i));

                free(ret->cn);
                ret->cn = strndup((const char *)ASN1_STRING_get0_data(s), (size_t)ASN1_STRING_length(s));
        }
        for (int i = -1; r >= 0 && (i = X509_NAME_get_index_by_NID(subj, NID_organizationName, i)) >= 0;) {
                ASN1_STRING *s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, i));
                _cleanup_free_ char *o =
                        strndup((const char *)ASN1_STRING_get0_data(s), (size_t)ASN1_STRING_length(s));

                r = o ? strv_extend(&ret->orgs, o) : -ENOMEM;
        }
        exts = X509_REQ_get_extensions(x);
        for (int i = 0; r >= 0 && exts && i < sk_X509_EXTENSION_num(exts); i++) {
                X509_EXTENSION *e = sk_X509_EXTENSION_value(exts, i);
                GENERAL_NAMES *names;

                if (OBJ_obj2nid(X509_EXTENSION_get_object(e)) != NID_subject_alt_name)
                        continue;
                names = X509V3_EXT_d2i(e);
                for (int j = 0; r >= 0 && names && j < sk_GENERAL_NAME_num(names); j++) {
                        GENERAL_NAME *g = sk_GENERAL_NAME_value(names, j);
                        char buf[INET6_ADDRSTRLEN];

                        if (g->type == GEN_DNS) {
                                _cleanup_free_ char *d =
                                        strndup((const char *)ASN1_STRING_get0_data(g->d.dNSName),
                                                (size_t)ASN1_STRING_length(g->d.dNSName));

                                r = d ? strv_extend(&ret->dns, d) : -ENOMEM;
                        } else if (g->type == GEN_IPADD) {
                                int n = ASN1_STRING_length(g->d.iPAddress);

                                if ((n == 4 || n == 16) &&
                                    inet_ntop(n == 4 ? AF_INET : AF_INET6,
                                              ASN1_STRING_get0_data(g->d.iPAddress), buf, sizeof(buf)))
                                        r = strv_extend(&ret->ips, buf);
                        } else if (g->type == GEN_EMAIL)
                                ret->n_emails++;
                }
                GENERAL_NAMES_free(names);
        }
        sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
        X509_REQ_free(x);
        if (r >= 0 && !ret->cn)
                r = -EBADMSG;
        if (r < 0)
                csr_done(ret);
        return r;
}

static bool usages_exactly(json_object *csr, const char *const *want)
{
        json_object *u = json_get_path(csr, "spec.usages");
        size_t n = strv_length((char **)want);

        if (!json_object_is_type(u, json_type_array) || json_object_array_length(u) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strv_contains((char **)want,
                                   strempty(json_object_get_string(json_object_array_get_idx(u, i)))))
                        return false;
        return true;
}

static char **strv_of(json_object *a)
{
        char **l = NULL;

        for (size_t i = 0; json_object_is_type(a, json_type_array) && i < json_object_array_length(a); i++)
                if (strv_extend(&l, strempty(json_object_get_string(json_object_array_get_idx(a, i)))) < 0) {
                        strv_free(l);
                        return NULL;
                }
        return l;
}

/* the addresses of a Node of the given types */
static bool node_has_address(json_object *node, const char *value, bool ip)
{
        json_object *a = json_get_path(node, "status.addresses");

        if (!ip && streq_ptr(value, kube_object_name(node)))
                return true;
        for (size_t i = 0; json_object_is_type(a, json_type_array) && i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *t = json_get_string(e, "type");

                if (!streq_ptr(json_get_string(e, "address"), value))
                        continue;
                if (ip ? STR_IN_SET(strempty(t), "InternalIP", "ExternalIP")
                       : STR_IN_SET(strempty(t), "InternalDNS", "ExternalDNS", "Hostname"))
                        return true;
        }
        return false;
}

int node_csr_kind(const char *hostname, json_object *csr, json_object *node, char **ret_why)
{
        _cleanup_(csr_done) Csr c = {};
        _cleanup_strv_free_ char **groups = strv_of(json_get_path(csr, "spec.groups"));
        _cleanup_free_ char *want_cn = strdup_printf("system:node:%s", strempty(hostname));
        const char *username = json_get_string(json_get(csr, "spec"), "username");
        int r;

        *ret_why = NULL;
        if (!want_cn)
                return -ENOMEM;
        r = csr_parse(csr, &c);
        if (r == -EBADMSG) {
                *ret_why = strdup_printf("Failed to parse CSR %s", strempty(kube_object_name(csr)));
                return *ret_why ? 0 : -ENOMEM;
        }
        if (r < 0)
                return r;
        /* isCsrAssociatedWithAgent */
        if (strcasecmp(c.cn, want_cn) != 0)
                return 0;
        if (!node) {
                /* validateNodeClientCSR */
                if (strv_length(c.orgs) != 1 || !streq(c.orgs[0], "system:nodes"))
                        *ret_why = strdup("Organization does not contain single element system:nodes");
                else if (c.dns || c.ips || c.n_emails > 0)
                        *ret_why = strdup("DNS names, Email addresses, IPAddresses are not empty");
                else if (!usages_exactly(
                                 csr, (const char *const[]){ "digital signature", "client auth", NULL }) &&
                         !usages_exactly(csr, (const char *const[]){ "key encipherment", "digital signature",
                                                                     "client auth", NULL }))
                        *ret_why = strdup("No exact match between CSR usages and required usages");
                else if (!streq_ptr(username, "system:serviceaccount:openshift-machine-config-operator:node-"
                                              "bootstrapper") ||
                         strv_length(groups) != 3 ||
                         !strv_contains(groups,
                                        "system:serviceaccounts:openshift-machine-config-operator") ||
                         !strv_contains(groups, "system:serviceaccounts") ||
                         !strv_contains(groups, "system:authenticated"))
                        *ret_why = strdup("Not from bootstrapper");
                else
                        return 1;
                return *ret_why ? 0 : -ENOMEM;
        }
        /* validateNodeServerCSR */
        if (!startswith(strempty(username), "system:node:") || isempty(username + strlen("system:node:")))
                *ret_why = strdup("CSR does not appear to be a node serving CSR");
        else if (strv_length(groups) < 2 || !strv_contains(groups, "system:authenticated"))
                *ret_why = strdup("groups too small or not containing system:authenticated");
        else if (!usages_exactly(csr, (const char *const[]){ "digital signature", "server auth", NULL }) &&
                 !usages_exactly(csr, (const char *const[]){ "digital signature", "key encipherment",
                                                             "server auth", NULL }))
                *ret_why = strdup("No exact match between CSR usages and required usages");
        else if (!strv_contains(c.orgs, "system:nodes"))
                *ret_why = strdup("Organization doesn't include system:nodes");
        else if (!streq(c.cn, username))
                *ret_why = strdup("Mismatched CommonName and username");
        else {
                STRV_FOREACH (d, c.dns)
                        if (!node_has_address(node, *d, false)) {
                                *ret_why = strdup_printf("DNS name %s missing from the node's names", *d);
                                return *ret_why ? 0 : -ENOMEM;
                        }
                STRV_FOREACH (ip, c.ips)
                        if (!node_has_address(node, *ip, true)) {
                                *ret_why = strdup_printf("IP address %s missing from the node's IPs", *ip);
                                return *ret_why ? 0 : -ENOMEM;
                        }
                return 2;
        }
        return *ret_why ? 0 : -ENOMEM;
}

bool node_csr_approved(json_object *csr)
{
        json_object *c = json_get_path(csr, "status.conditions");

        for (size_t i = 0; json_object_is_type(c, json_type_array) && i < json_object_array_length(c); i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(c, i), "type"), "Approved"))
                        return true;
        return false;
}
