/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Which certificate signing requests the controller approves (issue 20,
 * Build §2: better than upstream, which approves every pending request
 * every 30 s). Only a kubelet's, and only for a host of this cluster:
 *
 *  - client certificates (signer kubernetes.io/kube-apiserver-client-kubelet):
 *    subject O=system:nodes, CN=system:node:<name>, no alternative names,
 *    usages digital signature and client auth (key encipherment allowed);
 *    requested by the node bootstrapper (the service account
 *    system:serviceaccount:openshift-machine-config-operator:node-bootstrapper
 *    with exactly its three groups, as cluster-machine-approver wants) for a
 *    Node that does not exist yet, or by the node itself
 *    (system:node:<name> in system:nodes) to renew;
 *  - serving certificates (signer kubernetes.io/kubelet-serving): requested
 *    by system:node:<name> in system:nodes and system:authenticated, CN the
 *    same, O system:nodes, usages digital signature and server auth (key
 *    encipherment allowed), DNS names the node's or its host's name, IP
 *    addresses among the host's inventory addresses, nothing else;
 *
 * where <name> is a host's: its requested hostname, lower-cased, or the
 * same name short or fully qualified (a host known as "master-0" may join
 * as "master-0.example.com" and the other way round). Everything else is
 * refused with the reason, never denied (another approver may know
 * better). Requests already approved, denied or failed are left alone.
 *
 * Pure: the CertificateSigningRequest, the hosts (lib/assisted/
 * cluster-hosts.h) and the NodeList in, a decision out.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;
typedef struct ClusterHosts ClusterHosts;

#define CSR_SIGNER_KUBELET_CLIENT "kubernetes.io/kube-apiserver-client-kubelet"
#define CSR_SIGNER_KUBELET_SERVING "kubernetes.io/kubelet-serving"
#define CSR_NODE_BOOTSTRAPPER "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"
/* the condition upstream writes (k8s_client.ApproveCsr) */
#define CSR_APPROVED_REASON "NodeCSRApprove"
#define CSR_APPROVED_MESSAGE "This CSR was approved by the assisted-installer-controller"

/* ---- the request itself (spec.request: a PEM CERTIFICATE REQUEST) ---------- */

typedef struct CsrRequest {
        char *common_name;
        char **organizations;
        char **dns_names;
        char **ip_addresses; /* as inet_ntop writes them */
        size_t n_other_names; /* email, URI and other alternative names */
        bool signature_valid; /* signed by the key it carries */
} CsrRequest;

void csr_request_done(CsrRequest *r);
/* pem: the decoded spec.request. -EBADMSG (with *reterr) when it holds no
 * parsable certificate request. */
int csr_request_parse(const char *pem, size_t len, CsrRequest *ret, char **reterr);

/* ---- the decision -------------------------------------------------------- */

typedef enum CsrVerdict {
        CSR_DECIDED, /* already approved, denied or failed: nothing to do */
        CSR_APPROVE,
        CSR_REFUSE,
        _CSR_VERDICT_MAX,
        _CSR_VERDICT_INVALID = -22,
} CsrVerdict;

typedef struct CsrDecision {
        CsrVerdict verdict;
        int host; /* CSR_APPROVE: the host's index */
        char *node; /* CSR_APPROVE: the node name asked for */
        char *reason; /* CSR_REFUSE: why, for the log */
} CsrDecision;

void csr_decision_done(CsrDecision *d);
/* -ENOMEM only; a request that cannot be read is refused, saying why. */
int csr_decide(json_object *csr, const ClusterHosts *hosts, json_object *nodes, CsrDecision *ret);

/* The body of PUT .../certificatesigningrequests/<name>/approval: csr with
 * upstream's Approved condition (status "True", reason and message above,
 * lastUpdateTime now_rfc3339) appended. A new object; csr is not changed. */
json_object *csr_approval(json_object *csr, const char *now_rfc3339);
