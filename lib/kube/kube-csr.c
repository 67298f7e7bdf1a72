/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "base64.h"
#include "cleanup.h"
#include "jsonutil.h"
#include "kube-csr.h"
#include "kube-config.h"
#include "redact.h"
#include "strutil.h"
#include "yamlutil.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(EVP_PKEY *, EVP_PKEY_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(X509_REQ *, X509_REQ_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(X509 *, X509_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(BIO *, BIO_free)

/* how often the CSR is read again while the signer works */
#define POLL_INTERVAL (100 * USEC_PER_MSEC)

static const KubeResource csr_resource = { "certificates.k8s.io", "v1", "certificatesigningrequests",
                                           "CertificateSigningRequest", false };

void kube_client_cert_done(KubeClientCert *c)
{
        free(c->csr_name);
        free(c->cert_pem);
        erase_and_free(c->key_pem);
        *c = (KubeClientCert){};
}

static char *bio_text(BIO *b)
{
        char *data, *t;
        long n = BIO_get_mem_data(b, &data);

        /* not strndup: the BIO's buffer has no terminator, and strndup
         * may read one byte past n looking for it */
        if (n < 0)
                return NULL;
        t = malloc((size_t)n + 1);
        if (!t)
                return NULL;
        memcpy(t, data, (size_t)n);
        t[n] = 0;
        return t;
}

/* a new EC P-256 key and a PKCS#10 request for the subject, both PEM */
static int make_request(const KubeClientCertRequest *req, char **ret_csr, char **ret_key)
{
        _cleanup_(EVP_PKEY_freep) EVP_PKEY *key = EVP_EC_gen("P-256");
        _cleanup_(X509_REQ_freep) X509_REQ *x = X509_REQ_new();
        _cleanup_(BIO_freep) BIO *kb = BIO_new(BIO_s_mem()), *rb = BIO_new(BIO_s_mem());
        _cleanup_free_ char *csr = NULL;
        _cleanup_erase_ char *keypem = NULL;
        X509_NAME *name;

        if (!key || !x || !kb || !rb)
                return -ENOMEM;
        name = X509_REQ_get_subject_name(x);
        for (char *const *o = req->organizations; o && *o; o++)
                if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)*o, -1, -1,
                                                0))
                        return -EINVAL;
        if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)req->common_name,
                                        -1, -1, 0) ||
            !X509_REQ_set_version(x, 0) || !X509_REQ_set_pubkey(x, key) ||
            X509_REQ_sign(x, key, EVP_sha256()) <= 0)
                return -EINVAL;
        if (!PEM_write_bio_X509_REQ(rb, x) || !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL))
                return -ENOMEM;
        csr = bio_text(rb);
        keypem = bio_text(kb);
        /* the BIO's copy of the key */
        (void)BIO_reset(kb);
        if (!csr || !keypem)
                return -ENOMEM;
        (void)redact_register_secret(keypem);
        *ret_csr = TAKE_PTR(csr);
        *ret_key = TAKE_PTR(keypem);
        return 0;
}

json_object *kube_csr_approval(json_object *csr, const char *reason, const char *message,
                               const char *now_rfc3339)
{
        _cleanup_(json_object_putp) json_object *copy = NULL, *cond = json_new_object();
        json_object *status, *conds;

        if (!cond || json_object_deep_copy(csr, &copy, NULL) < 0)
                return NULL;
        status = json_get(copy, "status");
        if (!json_object_is_type(status, json_type_object)) {
                status = json_new_object();
                if (!status || json_add(copy, "status", status) < 0)
                        return NULL;
        }
        conds = json_get(status, "conditions");
        if (!json_object_is_type(conds, json_type_array)) {
                conds = json_new_array();
                if (!conds || json_add(status, "conditions", conds) < 0)
                        return NULL;
        }
        if (json_add_string(cond, "type", "Approved") < 0 || json_add_string(cond, "status", "True") < 0 ||
            json_add_string(cond, "reason", reason) < 0 || json_add_string(cond, "message", message) < 0 ||
            (now_rfc3339 && json_add_string(cond, "lastUpdateTime", now_rfc3339) < 0) ||
            json_append(conds, TAKE_PTR(cond)) < 0)
                return NULL;
        return TAKE_PTR(copy);
}

/* 1: signed (*ret the PEM), 0: not yet, -EPERM: denied or failed */
static int csr_outcome(json_object *csr, char **ret)
{
        const char *cert = json_get_string(json_get(csr, "status"), "certificate");
        json_object *conds = json_get_path(csr, "status.conditions");
        size_t len = 0;

        for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
                json_object *c = json_object_array_get_idx(conds, i);
                const char *type = json_get_string(c, "type");

                if ((streq_ptr(type, "Denied") || streq_ptr(type, "Failed")) &&
                    streq_ptr(json_get_string(c, "status"), "True"))
                        return -EPERM;
        }
        if (isempty(cert))
                return 0;
        return base64_decode(cert, NULL, ret, &len) < 0 ? -EBADMSG : 1;
}

int kube_client_cert_request(KubeClient *c, const KubeClientCertRequest *req, KubeClientCert *ret,
                             char **reterr)
{
        _cleanup_(json_object_putp) json_object *body = NULL, *created = NULL, *approval = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *csr = NULL, *b64 = NULL, *path = NULL, *cert = NULL, *name = NULL;
        _cleanup_erase_ char *key = NULL;
        json_object *spec;
        usec_t deadline;
        int r;

        r = make_request(req, &csr, &key);
        if (r < 0) {
                *reterr = strdup_printf("cannot make a certificate request for '%s'", req->common_name);
                return r;
        }
        if (json_object_deep_copy(req->csr, &body, NULL) < 0)
                return -ENOMEM;
        b64 = base64_encode(csr, strlen(csr));
        spec = json_get(body, "spec");
        if (!spec || !b64 || json_add_string(spec, "request", b64) < 0)
                return -ENOMEM;
        r = kube_create(c, &csr_resource, NULL, body, &created, &st);
        if (r < 0) {
                *reterr =
                        strdup_printf("cannot create the CertificateSigningRequest: %s", strna(st.message));
                return r;
        }
        name = strdup(strempty(json_get_string(json_get(created, "metadata"), "name")));
        if (!name)
                return -ENOMEM;

        /* approved as `kubectl certificate approve` does */
        approval = kube_csr_approval(created, req->approval_reason, req->approval_message, NULL);
        if (!approval)
                return -ENOMEM;
        path = kube_resource_path(&csr_resource, NULL, name, "approval");
        if (!path)
                return -ENOMEM;
        kube_status_done(&st);
        r = kube_request(c, "PUT", path, "application/json", approval, NULL, &st);
        if (r < 0) {
                *reterr = strdup_printf("cannot approve the CertificateSigningRequest '%s': %s", name,
                                        strna(st.message));
                return r;
        }

        deadline = now_usec(CLOCK_MONOTONIC) + req->timeout;
        for (;;) {
                _cleanup_(json_object_putp) json_object *cur = NULL;

                kube_status_done(&st);
                r = kube_get(c, &csr_resource, NULL, name, &cur, &st);
                if (r < 0) {
                        *reterr = strdup_printf("cannot read the CertificateSigningRequest '%s': %s", name,
                                                strna(st.message));
                        return r;
                }
                r = csr_outcome(cur, &cert);
                if (r == -EPERM) {
                        *reterr = strdup_printf("the CertificateSigningRequest '%s' was denied or failed",
                                                name);
                        return r;
                }
                if (r < 0) {
                        *reterr = strdup_printf("the CertificateSigningRequest '%s' has no PEM certificate",
                                                name);
                        return r;
                }
                if (r > 0)
                        break;
                if (now_usec(CLOCK_MONOTONIC) >= deadline) {
                        *reterr = strdup_printf("the CertificateSigningRequest '%s' was approved but not "
                                                "signed within %llu s",
                                                name, (unsigned long long)(req->timeout / USEC_PER_SEC));
                        return -ETIMEDOUT;
                }
                (void)sleep_usec(POLL_INTERVAL);
        }
        ret->csr_name = TAKE_PTR(name);
        ret->cert_pem = TAKE_PTR(cert);
        ret->key_pem = TAKE_PTR(key);
        return 0;
}

int kube_config_format_client_cert(const KubeConfig *cfg, const char *cluster, const char *user,
                                   const char *context, const char *cert_pem, const char *key_pem,
                                   char **ret)
{
        _cleanup_(json_object_putp) json_object *kc = json_new_object();
        _cleanup_free_ char *ca = NULL, *crt = NULL;
        _cleanup_erase_ char *key = NULL, *text = NULL;
        json_object *clusters = json_new_array(), *users = json_new_array(), *contexts = json_new_array(),
                    *c = json_new_object(), *cd = json_new_object(), *u = json_new_object(),
                    *ud = json_new_object(), *x = json_new_object(), *xd = json_new_object();
        size_t len = 0;
        int r;

        crt = base64_encode(cert_pem, strlen(cert_pem));
        key = base64_encode(key_pem, strlen(key_pem));
        ca = cfg->ca_pem ? base64_encode(cfg->ca_pem, strlen(cfg->ca_pem)) : NULL;
        if (!kc || !crt || !key || (cfg->ca_pem && !ca) || !clusters || !users || !contexts || !c || !cd ||
            !u || !ud || !x || !xd) {
                json_object_put(clusters), json_object_put(users), json_object_put(contexts);
                json_object_put(c), json_object_put(cd), json_object_put(u), json_object_put(ud);
                json_object_put(x), json_object_put(xd);
                return -ENOMEM;
        }
        if (json_add_string(kc, "apiVersion", "v1") < 0 || json_add_string(kc, "kind", "Config") < 0 ||
            json_add(kc, "clusters", clusters) < 0 || json_add(kc, "users", users) < 0 ||
            json_add(kc, "contexts", contexts) < 0 || json_add_string(kc, "current-context", context) < 0 ||
            json_append(clusters, c) < 0 || json_add_string(c, "name", cluster) < 0 ||
            json_add(c, "cluster", cd) < 0 || json_add_string(cd, "server", cfg->server) < 0 ||
            json_add_string_nonempty(cd, "certificate-authority-data", ca) < 0 ||
            json_add_string_nonempty(cd, "tls-server-name", cfg->tls_server_name) < 0 ||
            (cfg->insecure && json_add_bool(cd, "insecure-skip-tls-verify", true) < 0) ||
            json_append(users, u) < 0 || json_add_string(u, "name", user) < 0 ||
            json_add(u, "user", ud) < 0 || json_add_string(ud, "client-certificate-data", crt) < 0 ||
            json_add_string(ud, "client-key-data", key) < 0 || json_append(contexts, x) < 0 ||
            json_add_string(x, "name", context) < 0 || json_add(x, "context", xd) < 0 ||
            json_add_string(xd, "cluster", cluster) < 0 || json_add_string(xd, "user", user) < 0)
                return -ENOMEM;
        r = json_to_yaml(kc, &text, &len);
        if (r < 0)
                return r;
        (void)redact_register_secret(key);
        (void)redact_register_secret(text);
        *ret = TAKE_PTR(text);
        return 0;
}

static int asn1_usec(const ASN1_TIME *t, usec_t *ret)
{
        struct tm tm = {};
        time_t s;

        if (!t || !ASN1_TIME_to_tm(t, &tm))
                return -EBADMSG;
        s = timegm(&tm);
        if (s < 0)
                return -ERANGE;
        *ret = (usec_t)s * USEC_PER_SEC;
        return 0;
}

int kube_cert_validity(const char *pem, usec_t *ret_not_before, usec_t *ret_not_after,
                       char **ret_common_name)
{
        _cleanup_(BIO_freep) BIO *b = NULL;
        _cleanup_(X509_freep) X509 *x = NULL;
        _cleanup_free_ char *cn = NULL;
        usec_t nb, na;
        int i, r;

        if (isempty(pem))
                return -EBADMSG;
        b = BIO_new_mem_buf(pem, -1);
        if (!b)
                return -ENOMEM;
        x = PEM_read_bio_X509(b, NULL, NULL, NULL);
        if (!x)
                return -EBADMSG;
        r = asn1_usec(X509_get0_notBefore(x), &nb);
        if (r >= 0)
                r = asn1_usec(X509_get0_notAfter(x), &na);
        if (r < 0)
                return r;
        i = X509_NAME_get_index_by_NID(X509_get_subject_name(x), NID_commonName, -1);
        if (i >= 0) {
                const ASN1_STRING *s =
                        X509_NAME_ENTRY_get_data(X509_NAME_get_entry(X509_get_subject_name(x), i));

                cn = strndup((const char *)ASN1_STRING_get0_data(s), (size_t)ASN1_STRING_length(s));
                if (!cn)
                        return -ENOMEM;
        }
        *ret_not_before = nb;
        *ret_not_after = na;
        if (ret_common_name)
                *ret_common_name = TAKE_PTR(cn);
        return 0;
}
