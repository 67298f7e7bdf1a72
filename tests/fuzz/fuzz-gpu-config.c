/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: inventory/[a-z]*.c */
#include "fuzz.h"
#include "inventory/gpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        GpuConfig c = {};

        if (gpu_config_parse((const char *)data, size, &c) >= 0) {
                (void)gpu_config_match(&c, "0300", "10de", "1db6");
                gpu_config_done(&c);
        }
        return 0;
}
