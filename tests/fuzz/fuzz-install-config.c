/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: controller/dns.c */
/* The install-config of kube-system/cluster-config-v1, as the controller
 * reads its service network for the DNS address hack, and the address it
 * computes from what it found. */
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/dns.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *net = NULL, *err = NULL, *address = NULL;

        if (install_config_service_network((const char *)data, size, &net, &err) < 0) {
                if (!err || net)
                        abort();
                return 0;
        }
        if (net && dns_conflict_address(net, &address) >= 0 && strlen(address) == 0)
                abort();
        return 0;
}
