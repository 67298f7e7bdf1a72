/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: inventory/[a-z]*.c */
#include "fuzz.h"
#include "inventory/dmi.h"

static int visit(const SmbiosStructure *s, void *userdata)
{
        size_t *count = userdata;

        for (unsigned i = 1; i < 8; i++)
                (void)smbios_string(s, (uint8_t)i);
        (*count)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        SmbiosPciRef ref;
        size_t count = 0;

        (void)smbios_foreach(data, size, visit, &count);
        (void)smbios_memory_bytes(data, size);
        (void)smbios_find_pci(data, size, 0, size > 0 ? data[0] : 0, size > 1 ? data[1] : 0, &ref);
        return 0;
}
