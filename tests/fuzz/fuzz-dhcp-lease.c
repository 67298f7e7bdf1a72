/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/dhcp-lease.c */
/* dhclient lease files (what a DHCP server put in them) and lease texts. */
#include <stdlib.h>
#include <string.h>

#include "agent/steps/dhcp-lease.h"
#include "cleanup.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = fuzz_text(data, size);
        _cleanup_free_ char *last = NULL, *address = NULL, *renamed = NULL;

        if (!text)
                return 0;
        if (dhcp_lease_last(text, &last) >= 0)
                (void)dhcp_lease_address(last, &address);
        renamed = dhcp_lease_set_interface(text, "api");
        return 0;
}
