/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: inventory/[a-z]*.c */
#include <string.h>

#include "cleanup.h"
#include "fuzz.h"
#include "inventory/invutil.h"
#include "inventory/cpu.h"
#include "inventory/system_vendor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const arches[] = { "x86_64", "aarch64", "s390x", "ppc64le" };
        _cleanup_free_ char *text = inv_memdup_str(data, size);
        unsigned n;

        if (!text)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(arches); i++) {
                CpuInfo c = {};
                if (cpuinfo_parse((const char *)data, size, arches[i], &c) >= 0)
                        cpu_info_done(&c);
        }
        (void)cpu_list_count(text, &n);
        {
                char *m = strdup("unknown"), *p = strdup("unknown");
                bool v = false;
                if (m && p)
                        system_vendor_s390x(text, text, &m, &p, &v);
                free(m);
                free(p);
        }
        return 0;
}
