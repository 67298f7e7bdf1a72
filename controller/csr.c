/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "assisted/cluster-hosts.h"
#include "base64.h"
#include "cleanup.h"
#include "controller/csr.h"
#include "jsonutil.h"
#include "kube/kube-csr.h"
#include "kube/kube.h"
#include "strutil.h"

#define NODE_USER_PREFIX "system:node:"
#define NODES_GROUP "system:nodes"
#define AUTHENTICATED_GROUP "system:authenticated"
/* a request larger than this is no kubelet's */
#define CSR_REQUEST_MAX (64u * 1024)

DEFINE_TRIVIAL_CLEANUP_FUNC(BIO *, BIO_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(X509_REQ *, X509_REQ_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(GENERAL_NAMES *, GENERAL_NAMES_free)

static void extensions_freep(STACK_OF(X509_EXTENSION) * *exts)
{
        if (*exts)
                sk_X509_EXTENSION_pop_free(*exts, X509_EXTENSION_free);
}

void csr_request_done(CsrRequest *r)
{
        free(r->common_name);
        strv_free(r->organizations);
        strv_free(r->dns_names);
        strv_free(r->ip_addresses);
        *r = (CsrRequest){};
}

/* An ASN.1 string as UTF-8; NULL when it cannot be converted or holds a
 * NUL (a name that would read differently in C than in the certificate) */
static char *asn1_text(const ASN1_STRING *s)
{
        unsigned char *utf8 = NULL;
        char *out;
        int n;

        n = ASN1_STRING_to_UTF8(&utf8, s);
        if (n < 0)
                return NULL;
        out = memchr(utf8, 0, (size_t)n) ? NULL : strndup((const char *)utf8, (size_t)n);
        OPENSSL_free(utf8);
        return out;
}

static int subject_read(X509_REQ *req, CsrRequest *out)
{
        X509_NAME *subject = X509_REQ_get_subject_name(req);

        for (int i = 0; subject && i < X509_NAME_entry_count(subject); i++) {
                X509_NAME_ENTRY *e = X509_NAME_get_entry(subject, i);
                int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
                _cleanup_free_ char *v = NULL;

                if (nid != NID_commonName && nid != NID_organizationName)
                        continue;
                v = asn1_text(X509_NAME_ENTRY_get_data(e));
                if (!v)
                        return -EBADMSG;
                if (nid == NID_organizationName) {
                        if (strv_extend(&out->organizations, v) < 0)
                                return -ENOMEM;
                } else if (out->common_name)
                        return -EBADMSG; /* two names: none is the one */
                else
                        out->common_name = TAKE_PTR(v);
        }
        return 0;
}

static int alt_names_read(X509_REQ *req, CsrRequest *out)
{
        _cleanup_(extensions_freep) STACK_OF(X509_EXTENSION) *exts = X509_REQ_get_extensions(req);
        _cleanup_(GENERAL_NAMES_freep) GENERAL_NAMES *names = NULL;
        int crit = 0;

        if (!exts)
                return 0;
        names = X509V3_get_d2i(exts, NID_subject_alt_name, &crit, NULL);
        if (!names)
                /* none, or one that does not decode (crit -2: twice) */
                return crit == -1 ? 0 : -EBADMSG;
        for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
                const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
                char ip[INET6_ADDRSTRLEN];

                if (g->type == GEN_DNS) {
                        _cleanup_free_ char *v = asn1_text(g->d.dNSName);
                        if (!v)
                                return -EBADMSG;
                        if (strv_extend(&out->dns_names, v) < 0)
                                return -ENOMEM;
                } else if (g->type == GEN_IPADD) {
                        int len = ASN1_STRING_length(g->d.iPAddress);
                        const unsigned char *p = ASN1_STRING_get0_data(g->d.iPAddress);
                        if ((len != 4 && len != 16) ||
                            !inet_ntop(len == 4 ? AF_INET : AF_INET6, p, ip, sizeof(ip)))
                                return -EBADMSG;
                        if (strv_extend(&out->ip_addresses, ip) < 0)
                                return -ENOMEM;
                } else
                        out->n_other_names++;
        }
        return 0;
}

int csr_request_parse(const char *pem, size_t len, CsrRequest *ret, char **reterr)
{
        _cleanup_(BIO_freep) BIO *bio = NULL;
        _cleanup_(X509_REQ_freep) X509_REQ *req = NULL;
        CsrRequest out = {};
        EVP_PKEY *key;
        int r;

        if (len > CSR_REQUEST_MAX || len > INT32_MAX) {
                if (reterr)
                        *reterr = strdup_printf("the request has %zu bytes, more than %u", len,
                                                CSR_REQUEST_MAX);
                return -EBADMSG;
        }
        bio = BIO_new_mem_buf(pem, (int)len);
        if (!bio)
                return -ENOMEM;
        req = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL);
        ERR_clear_error();
        if (!req) {
                if (reterr)
                        *reterr = strdup("the request holds no PEM CERTIFICATE REQUEST");
                return -EBADMSG;
        }
        r = subject_read(req, &out);
        if (r >= 0)
                r = alt_names_read(req, &out);
        if (r < 0) {
                csr_request_done(&out);
                if (r == -EBADMSG && reterr)
                        *reterr = strdup("the request's subject or alternative names do not decode");
                return r;
        }
        key = X509_REQ_get0_pubkey(req);
        out.signature_valid = key && X509_REQ_verify(req, key) == 1;
        ERR_clear_error();
        *ret = out;
        return 0;
}

/* ---- the decision ------------------------------------------------------------ */

void csr_decision_done(CsrDecision *d)
{
        free(d->node);
        free(d->reason);
        *d = (CsrDecision){};
}

static bool csr_decided(json_object *csr)
{
        json_object *conds = json_get_path(csr, "status.conditions");

        for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
                const char *type = json_get_string(json_object_array_get_idx(conds, i), "type");
                if (STR_IN_SET(type, "Approved", "Denied", "Failed"))
                        return true;
        }
        return false;
}

static char **string_list(json_object *a)
{
        _cleanup_strv_free_ char **l = NULL;

        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(a, i));
                if (s && strv_extend(&l, s) < 0)
                        return NULL;
        }
        return l ? TAKE_PTR(l) : calloc(1, sizeof(char *));
}

/* "a" and "a.b.c" name the same host; so do equal names */
static bool names_match(const char *host, const char *node)
{
        size_t hl, nl;

        if (isempty(host) || isempty(node))
                return false;
        if (strcasecmp(host, node) == 0)
                return true;
        hl = strcspn(host, ".");
        nl = strcspn(node, ".");
        if (host[hl] == node[nl])
                return false; /* both short, or both qualified, and different */
        return hl == nl && strncasecmp(host, node, hl) == 0;
}

static int host_of(const ClusterHosts *hosts, const char *node)
{
        for (size_t i = 0; i < hosts->n; i++)
                if (names_match(hosts->hosts[i].name, node))
                        return (int)i;
        return -ENOENT;
}

static bool node_exists(json_object *nodes, const char *name)
{
        json_object *items = json_get(nodes, "items");

        for (size_t i = 0; items && i < json_object_array_length(items); i++)
                if (streq_ptr(kube_object_name(json_object_array_get_idx(items, i)), name))
                        return true;
        return false;
}

/* every usage among allowed, and every one of needed present */
static bool usages_fit(char *const *usages, char *const *needed, char *const *allowed)
{
        STRV_FOREACH (u, usages)
                if (!strv_contains(needed, *u) && !strv_contains(allowed, *u))
                        return false;
        STRV_FOREACH (n, needed)
                if (!strv_contains(usages, *n))
                        return false;
        return true;
}

static bool groups_equal(char *const *groups, char *const *want)
{
        STRV_FOREACH (g, groups)
                if (!strv_contains(want, *g))
                        return false;
        STRV_FOREACH (w, want)
                if (!strv_contains(groups, *w))
                        return false;
        return true;
}

static bool ip_equal(const char *a, const char *b)
{
        unsigned char x[16], y[16];
        int fa = strchr(a, ':') ? AF_INET6 : AF_INET, fb = strchr(b, ':') ? AF_INET6 : AF_INET;

        if (fa != fb || inet_pton(fa, a, x) != 1 || inet_pton(fb, b, y) != 1)
                return false;
        return memcmp(x, y, fa == AF_INET ? 4 : 16) == 0;
}

static bool host_has_ip(const ClusterHost *h, const char *ip)
{
        STRV_FOREACH (a, h->ips)
                if (ip_equal(*a, ip))
                        return true;
        return false;
}

static int refuse(CsrDecision *ret, char *reason)
{
        if (!reason)
                return -ENOMEM;
        *ret = (CsrDecision){ .verdict = CSR_REFUSE, .host = -1, .reason = reason };
        return 0;
}

/* The subject of a node's certificate: CN=system:node:<name>, O=system:nodes
 * alone. Returns the name (in req), or NULL. */
static const char *node_subject(const CsrRequest *req)
{
        const char *name = startswith(strempty(req->common_name), NODE_USER_PREFIX);

        if (isempty(name) || strv_length(req->organizations) != 1 ||
            !streq(req->organizations[0], NODES_GROUP))
                return NULL;
        return name;
}

static int decide_client(const CsrRequest *req, const char *username, char *const *groups,
                         char *const *usages, const ClusterHosts *hosts, json_object *nodes,
                         CsrDecision *ret)
{
        static char *const bootstrapper_groups[] = {
                "system:serviceaccounts:openshift-machine-config-operator", "system:serviceaccounts",
                AUTHENTICATED_GROUP, NULL
        };
        static char *const needed[] = { "digital signature", "client auth", NULL };
        static char *const allowed[] = { "key encipherment", NULL };
        const char *name = node_subject(req);
        bool renewal;
        int host;

        if (!name) {
                _cleanup_free_ char *orgs = strv_join(req->organizations, ",");
                return refuse(ret, strdup_printf("subject CN=%s O=%s is not a node's",
                                                 strna(req->common_name), strempty(orgs)));
        }
        if (req->dns_names || req->ip_addresses || req->n_other_names > 0)
                return refuse(ret, strdup("a kubelet client certificate has no alternative names"));
        if (!usages_fit(usages, needed, allowed))
                return refuse(ret, strdup("its usages are not a kubelet client certificate's"));
        renewal = streq(username, req->common_name);
        if (renewal) {
                if (!strv_contains(groups, NODES_GROUP) || !strv_contains(groups, AUTHENTICATED_GROUP))
                        return refuse(ret, strdup_printf("requested by %s outside the groups %s and %s",
                                                         username, NODES_GROUP, AUTHENTICATED_GROUP));
        } else if (!streq(username, CSR_NODE_BOOTSTRAPPER))
                return refuse(ret,
                              strdup_printf("requested by %s, neither the node bootstrapper nor node %s",
                                            username, name));
        else if (!groups_equal(groups, bootstrapper_groups))
                return refuse(ret,
                              strdup("requested by the node bootstrapper with other groups than its own"));
        else if (node_exists(nodes, name))
                return refuse(ret, strdup_printf("node %s already exists", name));
        host = host_of(hosts, name);
        if (host < 0)
                return refuse(ret, strdup_printf("node %s is no host of this cluster", name));
        *ret = (CsrDecision){ .verdict = CSR_APPROVE, .host = host, .node = strdup(name) };
        return ret->node ? 0 : -ENOMEM;
}

static int decide_serving(const CsrRequest *req, const char *username, char *const *groups,
                          char *const *usages, const ClusterHosts *hosts, CsrDecision *ret)
{
        static char *const needed[] = { "digital signature", "server auth", NULL };
        static char *const allowed[] = { "key encipherment", NULL };
        const char *name = startswith(username, NODE_USER_PREFIX);
        const ClusterHost *h;
        int host;

        if (isempty(name))
                return refuse(ret, strdup_printf("requested by %s, not a node", username));
        if (!strv_contains(groups, NODES_GROUP) || !strv_contains(groups, AUTHENTICATED_GROUP))
                return refuse(ret, strdup_printf("requested by %s outside the groups %s and %s", username,
                                                 NODES_GROUP, AUTHENTICATED_GROUP));
        if (!node_subject(req) || !streq(req->common_name, username))
                return refuse(ret, strdup_printf("subject CN=%s is not the requester %s",
                                                 strna(req->common_name), username));
        if (!usages_fit(usages, needed, allowed))
                return refuse(ret, strdup("its usages are not a kubelet serving certificate's"));
        if (req->n_other_names > 0)
                return refuse(ret, strdup("it asks for e-mail, URI or other names"));
        host = host_of(hosts, name);
        if (host < 0)
                return refuse(ret, strdup_printf("node %s is no host of this cluster", name));
        h = &hosts->hosts[host];
        STRV_FOREACH (d, req->dns_names)
                if (!names_match(h->name, *d) && !names_match(name, *d))
                        return refuse(ret,
                                      strdup_printf("DNS name %s is not a name of host %s", *d, h->name));
        STRV_FOREACH (ip, req->ip_addresses)
                if (!host_has_ip(h, *ip))
                        return refuse(ret, strdup_printf("IP address %s is not an address of host %s", *ip,
                                                         h->name));
        *ret = (CsrDecision){ .verdict = CSR_APPROVE, .host = host, .node = strdup(name) };
        return ret->node ? 0 : -ENOMEM;
}

int csr_decide(json_object *csr, const ClusterHosts *hosts, json_object *nodes, CsrDecision *ret)
{
        json_object *spec = json_get(csr, "spec");
        const char *signer = json_get_string(spec, "signerName"),
                   *username = json_get_string(spec, "username");
        _cleanup_strv_free_ char **groups = string_list(json_get(spec, "groups")),
                                 **usages = string_list(json_get(spec, "usages"));
        _cleanup_(csr_request_done) CsrRequest req = {};
        _cleanup_(erase_and_freep) char *pem = NULL;
        _cleanup_free_ char *err = NULL;
        size_t len;
        int r;

        if (!groups || !usages)
                return -ENOMEM;
        if (csr_decided(csr)) {
                *ret = (CsrDecision){ .verdict = CSR_DECIDED, .host = -1 };
                return 0;
        }
        if (!STR_IN_SET(signer, CSR_SIGNER_KUBELET_CLIENT, CSR_SIGNER_KUBELET_SERVING))
                return refuse(ret, strdup_printf("signer %s is not a kubelet's", strna(signer)));
        if (isempty(username))
                return refuse(ret, strdup("no requester"));
        r = base64_decode(strempty(json_get_string(spec, "request")), "\r\n", &pem, &len);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret, strdup("spec.request is not base64"));
        r = csr_request_parse(pem, len, &req, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret, strdup_printf("the request does not parse: %s", strna(err)));
        if (!req.signature_valid)
                return refuse(ret, strdup("the request's signature does not verify"));
        if (streq(signer, CSR_SIGNER_KUBELET_CLIENT))
                return decide_client(&req, username, groups, usages, hosts, nodes, ret);
        return decide_serving(&req, username, groups, usages, hosts, ret);
}

json_object *csr_approval(json_object *csr, const char *now_rfc3339)
{
        return kube_csr_approval(csr, CSR_APPROVED_REASON, CSR_APPROVED_MESSAGE, now_rfc3339);
}
