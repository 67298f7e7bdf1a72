/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A client certificate from a cluster's own signer, through the
 * certificates.k8s.io/v1 CSR API (as kubeadm's "kubeconfig user" or
 * `kubectl certificate approve` do it by hand): a new key (EC P-256) never
 * leaves the caller, a PKCS#10 request with the subject asked for, the
 * CertificateSigningRequest created, approved through its approval
 * subresource, and its status.certificate waited for. The client must be
 * allowed to create and approve CSRs of that signer (an admin's).
 *
 * Also: a kubeconfig text for such a certificate, and the validity of a
 * PEM certificate. Keys and kubeconfigs are secrets: they are registered
 * with redact.h and never appear in *reterr.
 */

#include "kube.h"
#include "timeutil.h"

typedef struct KubeClientCertRequest {
        const char *common_name; /* the user */
        char *const *organizations; /* the groups, may be NULL */
        /* the CSR object to create, without spec.request (metadata.name
         * or generateName, spec.signerName, spec.expirationSeconds,
         * spec.usages): borrowed, not changed */
        json_object *csr;
        const char *approval_reason; /* the Approved condition's reason and message */
        const char *approval_message;
        usec_t timeout; /* how long the signer may take after the approval */
} KubeClientCertRequest;

typedef struct KubeClientCert {
        char *csr_name; /* the CSR object's name */
        char *cert_pem;
        char *key_pem; /* erased when freed */
} KubeClientCert;

void kube_client_cert_done(KubeClientCert *c);

/* The body `kubectl certificate approve` PUTs to a CSR's approval
 * subresource: a copy of csr with an Approved condition appended to its
 * status.conditions (reason, message; lastUpdateTime when now_rfc3339 is
 * given). NULL when out of memory. */
json_object *kube_csr_approval(json_object *csr, const char *reason, const char *message,
                               const char *now_rfc3339);

/* -ETIMEDOUT when the signer did not sign in time, -EPERM when the CSR was
 * denied or failed; API errors as kube.h's. *reterr says what failed (no
 * secret). */
int kube_client_cert_request(KubeClient *c, const KubeClientCertRequest *req, KubeClientCert *ret,
                             char **reterr);

/* A kubeconfig (YAML) for the cluster of cfg (server, CA data, TLS server
 * name) with the client certificate and key embedded, one cluster, user and
 * context of those names, the context current. */
int kube_config_format_client_cert(const KubeConfig *cfg, const char *cluster, const char *user,
                                   const char *context, const char *cert_pem, const char *key_pem,
                                   char **ret);

/* The first certificate of a PEM text: its validity (CLOCK_REALTIME usec)
 * and its subject's common name (may be NULL). -EBADMSG when there is no
 * certificate. */
int kube_cert_validity(const char *pem, usec_t *ret_not_before, usec_t *ret_not_after,
                       char **ret_common_name);
