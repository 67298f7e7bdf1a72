/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/chrony.c */
/* `chronyc -n sources` output, as ntp-synchronizer parses it. */
#include <stdlib.h>
#include <string.h>

#include "agent/steps/chrony.h"
#include "cleanup.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = fuzz_text(data, size);
        ChronySource *l = NULL;
        size_t n = 0;

        if (!text)
                return 0;
        if (chrony_parse_sources(text, &l, &n) >= 0) {
                for (size_t i = 0; i < n; i++)
                        if (!l[i].name || !l[i].state)
                                abort();
                chrony_sources_free(l, n);
        }
        return 0;
}
