/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: controller/csr.c */
/* A kubelet's certificate request (CertificateSigningRequest spec.request,
 * decoded), as the controller reads it before deciding to approve it. */
#include <stdlib.h>

#include "cleanup.h"
#include "controller/csr.h"
#include "fuzz.h"
#include "strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(csr_request_done) CsrRequest r = {};
        _cleanup_free_ char *err = NULL;

        if (csr_request_parse((const char *)data, size, &r, &err) >= 0) {
                /* what the decision reads must be there and terminated */
                (void)strlen(strempty(r.common_name));
                (void)strv_length(r.organizations);
                (void)strv_length(r.dns_names);
                STRV_FOREACH (ip, r.ip_addresses)
                        if (!strchr(*ip, '.') && !strchr(*ip, ':'))
                                abort();
        } else if (!err)
                abort();
        return 0;
}
