/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: */
#include <string.h>

#include "cleanup.h"
#include "fuzz.h"
#include "kube/kube-config.h"
#include "kube/kube-csr.h"

/* kubeconfig documents (YAML through libyaml, then the kubeconfig walk);
 * the current context, then a named one; an embedded client certificate's
 * validity (what cradle-hub --capi reads of a kubeconfig Secret) */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const contexts[] = { NULL, "a", "one" };

        if (size > 1 << 20)
                return 0;
        for (size_t i = 0; i < sizeof(contexts) / sizeof(contexts[0]); i++) {
                _cleanup_(kube_config_freep) KubeConfig *c = NULL, *copy = NULL;
                _cleanup_free_ char *err = NULL;

                if (kube_config_parse((const char *)data, size, "/nonexistent", contexts[i], &c, &err) < 0) {
                        if (!err)
                                __builtin_trap(); /* every failure explains itself */
                        continue;
                }
                if (!c->server || !c->namespace || kube_config_copy(c, &copy) < 0)
                        __builtin_trap();
                if (strcmp(copy->server, c->server) != 0)
                        __builtin_trap();
                if (c->client_cert_pem) {
                        _cleanup_free_ char *cn = NULL;
                        usec_t nb, na;

                        (void)kube_cert_validity(c->client_cert_pem, &nb, &na, &cn);
                }
        }
        return 0;
}
