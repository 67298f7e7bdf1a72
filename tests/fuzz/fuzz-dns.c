/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/dns-parse.c */
/* DNS answers to the CNAME queries of domain-resolution. */
#include <stdlib.h>
#include <string.h>

#include "agent/steps/resolver.h"
#include "cleanup.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_strv_free_ char **chain = NULL;
        _cleanup_free_ char *qname = NULL;

        if (dns_parse_cname_chain(data, size, &qname, &chain) >= 0) {
                if (!qname || strlen(qname) > 255)
                        abort();
                for (char **c = chain; c && *c; c++)
                        if (strlen(*c) > 255)
                                abort();
        }
        return 0;
}
