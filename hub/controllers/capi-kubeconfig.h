/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The <cluster>-kubeconfig Secret's short-lived client certificate (the
 * control-plane contract: "client certificates ... MUST be kept with a
 * reasonably short expiration period and periodically regenerated";
 * capi.md §6 item 5). Once the new cluster's API has answered, the Secret
 * holds a kubeconfig whose client certificate the cluster's own
 * kubernetes.io/kube-apiserver-client signer issued through its CSR API,
 * asked for and approved with the admin kubeconfig the service keeps; it
 * is renewed at half its validity (or --kubeconfig-cert-renew-before
 * before its end).
 *
 * The user: KCP's kubeconfig user is CN=kubernetes-admin, O=system:masters,
 * signed with the cluster CA it holds; through the CSR API system:masters
 * is refused (the CertificateSubjectRestriction admission plugin, on by
 * default, 403), so the certificate names a user of its own,
 * CAPI_KUBECONFIG_USER, bound to the cluster-admin ClusterRole by the
 * ClusterRoleBinding CAPI_KUBECONFIG_BINDING (made on the spoke with the
 * admin credentials before each CSR). OpenShift's kube-apiserver trusts
 * that signer's CA for client certificates (its client-ca bundle holds the
 * csr-signer CA). The kubeconfig's names are KCP's: cluster <cluster>,
 * user <cluster>-admin, context <cluster>-admin@<cluster>.
 *
 * Pure: the decision (renew now, or when) from the certificate the Secret
 * holds, and the mint's request (hub_plan_spoke_mint()); the reading of
 * the Secret's certificate is observe's.
 */

#include <stdbool.h>

#include "timeutil.h"

typedef struct json_object json_object;

#define CAPI_KUBECONFIG_USER "cradle-hub:cluster-api"
#define CAPI_KUBECONFIG_BINDING "cradle-hub-cluster-api"
#define CAPI_KUBECONFIG_SIGNER "kubernetes.io/kube-apiserver-client"
/* the CSR API's least spec.expirationSeconds */
#define CAPI_KUBECONFIG_MIN_EXPIRATION (600 * USEC_PER_SEC)
/* --kubeconfig-cert-expiration's default: "short-lived" (KCP's is a year) */
#define CAPI_KUBECONFIG_DEFAULT_EXPIRATION (24 * 3600 * USEC_PER_SEC)

/* The certificate of the Secret's kubeconfig, as observe read it. */
typedef struct CapiKubeconfigCert {
        /* the Secret says which CSR issued it (the annotation
         * cradle.agent-install.openshift.io/kubeconfig-csr): minted here,
         * not the admin's */
        bool minted;
        /* its validity, CLOCK_REALTIME; both 0 when none could be read */
        usec_t not_before, not_after;
} CapiKubeconfigCert;

/* When a certificate valid from not_before to not_after is renewed:
 * renew_before before its end when not 0 (never before not_before), else
 * at half its validity. */
usec_t capi_kubeconfig_renew_at(usec_t not_before, usec_t not_after, usec_t renew_before);

/* True when the Secret's certificate is to be replaced now: not minted
 * here (the admin's), of another credentials file than wanted
 * (same_file false: kubeconfig-noingress once installed), unreadable, or
 * at or past its renewal time. Else *ret_after: how long until then. */
bool capi_kubeconfig_renew_now(const CapiKubeconfigCert *cert, bool same_file, usec_t now,
                               usec_t renew_before, usec_t *ret_after);

/* The body of hub_plan_spoke_mint() for the cluster's kubeconfig: the
 * CSR (generateName cradle-hub-kubeconfig-, the signer, expiration, usage
 * "client auth"), its approval, the binding, the kubeconfig's names. */
int capi_kubeconfig_mint_body(const char *ns, const char *cluster, usec_t expiration, json_object **ret);

/* The Secret's certificate (secret: the Secret object or NULL;
 * annotation: which CSR issued it, or NULL). Never fails but for memory:
 * what cannot be read is left 0. */
int capi_kubeconfig_cert_read(json_object *secret, const char *annotation, CapiKubeconfigCert *ret);
