/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: inventory/[a-z]*.c */
/* /proc/cmdline, /proc/<pid>/mountinfo and /proc/meminfo parsers. */
#include <string.h>

#include "cleanup.h"
#include "fuzz.h"
#include "inventory/invutil.h"
#include "inventory/boot.h"
#include "inventory/memory.h"
#include "inventory/mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = inv_memdup_str(data, size), *bootif = NULL;
        _cleanup_(mount_table_done) MountTable t = {};
        uint64_t v;

        if (!text)
                return 0;
        bootif = cmdline_bootif(text);
        (void)meminfo_parse_total((const char *)data, size, &v);
        (void)secure_boot_state_from_var(data, size);
        if (mountinfo_parse((const char *)data, size, &t) >= 0) {
                (void)mount_table_find_dev(&t, 8, 1);
                (void)mount_table_find_path(&t, "/sysroot");
        }
        return 0;
}
