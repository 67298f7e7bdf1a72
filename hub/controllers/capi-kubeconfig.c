/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include <json-c/json.h>

#include "capi-kubeconfig.h"
#include "cleanup.h"
#include "hub-inputs.h"
#include "hub-plan.h"
#include "jsonutil.h"
#include "kube/kube-config.h"
#include "kube/kube-csr.h"
#include "strutil.h"

usec_t capi_kubeconfig_renew_at(usec_t not_before, usec_t not_after, usec_t renew_before)
{
        if (not_after <= not_before)
                return not_before;
        if (renew_before > 0)
                return renew_before >= not_after - not_before ? not_before : not_after - renew_before;
        return not_before + (not_after - not_before) / 2;
}

bool capi_kubeconfig_renew_now(const CapiKubeconfigCert *cert, bool same_file, usec_t now,
                               usec_t renew_before, usec_t *ret_after)
{
        usec_t at;

        if (!cert->minted || !same_file || cert->not_after == 0)
                return true;
        at = capi_kubeconfig_renew_at(cert->not_before, cert->not_after, renew_before);
        if (now >= at)
                return true;
        *ret_after = at - now;
        return false;
}

int capi_kubeconfig_mint_body(const char *ns, const char *cluster, usec_t expiration, json_object **ret)
{
        _cleanup_free_ char *user = strdup_printf("%s-admin", cluster),
                            *context = strdup_printf("%s-admin@%s", cluster, cluster),
                            *why = strdup_printf("cradle-hub for the Cluster API kubeconfig Secret "
                                                 "%s/%s-kubeconfig",
                                                 ns, cluster);
        _cleanup_(json_object_putp) json_object *b = json_new_object();
        json_object *usages = json_new_array(), *subjects = json_new_array(), *subject = json_new_object();

        if (!user || !context || !why || !b || !usages || !subjects || !subject) {
                json_object_put(usages), json_object_put(subjects), json_object_put(subject);
                return -ENOMEM;
        }
        if (json_add_string(b, "commonName", CAPI_KUBECONFIG_USER) < 0 ||
            hub_json_set_string(b, "csr.apiVersion", "certificates.k8s.io/v1") < 0 ||
            hub_json_set_string(b, "csr.kind", "CertificateSigningRequest") < 0 ||
            hub_json_set_string(b, "csr.metadata.generateName", "cradle-hub-kubeconfig-") < 0 ||
            hub_json_set_string(b, "csr.spec.signerName", CAPI_KUBECONFIG_SIGNER) < 0 ||
            json_add_int64(hub_json_ensure_object(b, "csr.spec"), "expirationSeconds",
                           (int64_t)(expiration / USEC_PER_SEC)) < 0 ||
            json_add(hub_json_ensure_object(b, "csr.spec"), "usages", usages) < 0 ||
            json_append(usages, json_new_string("client auth")) < 0 ||
            hub_json_set_string(b, "approval.reason", "CradleHubApproved") < 0 ||
            hub_json_set_string(b, "approval.message", why) < 0 ||
            hub_json_set_string(b, "kubeconfig.cluster", cluster) < 0 ||
            hub_json_set_string(b, "kubeconfig.user", user) < 0 ||
            hub_json_set_string(b, "kubeconfig.context", context) < 0 ||
            hub_json_set_string(b, "binding.apiVersion", "rbac.authorization.k8s.io/v1") < 0 ||
            hub_json_set_string(b, "binding.kind", "ClusterRoleBinding") < 0 ||
            hub_json_set_string(b, "binding.metadata.name", CAPI_KUBECONFIG_BINDING) < 0 ||
            hub_json_set_string(b, "binding.roleRef.apiGroup", "rbac.authorization.k8s.io") < 0 ||
            hub_json_set_string(b, "binding.roleRef.kind", "ClusterRole") < 0 ||
            hub_json_set_string(b, "binding.roleRef.name", "cluster-admin") < 0 ||
            json_add(hub_json_ensure_object(b, "binding"), "subjects", subjects) < 0 ||
            json_append(subjects, subject) < 0 || json_add_string(subject, "kind", "User") < 0 ||
            json_add_string(subject, "apiGroup", "rbac.authorization.k8s.io") < 0 ||
            json_add_string(subject, "name", CAPI_KUBECONFIG_USER) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(b);
        return 0;
}

int capi_kubeconfig_cert_read(json_object *secret, const char *annotation, CapiKubeconfigCert *ret)
{
        _cleanup_erase_ char *text = NULL;
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        _cleanup_free_ char *err = NULL;

        *ret = (CapiKubeconfigCert){ .minted = !isempty(annotation) };
        if (!secret)
                return 0;
        text = hub_secret_value(secret, "value");
        if (!text)
                return 0;
        if (kube_config_parse(text, strlen(text), NULL, NULL, &cfg, &err) < 0 || !cfg->client_cert_pem ||
            kube_cert_validity(cfg->client_cert_pem, &ret->not_before, &ret->not_after, NULL) < 0) {
                ret->not_before = ret->not_after = 0;
                return 0;
        }
        return 0;
}
