/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: controller/olm.c controller/finalize.c */
/* The service's custom_manifests.json, as the controller reads it before
 * applying the OLM operators' manifests. */
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/olm.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *err = NULL;
        CustomManifest *m = NULL;
        size_t n = 0;

        if (custom_manifests_parse((const char *)data, size, "4.8", &m, &n, &err) >= 0) {
                for (size_t i = 0; i < n; i++)
                        (void)(strlen(m[i].name) + (m[i].content ? m[i].len : 0));
                custom_manifests_free(m, n);
        } else if (!err)
                abort();
        return 0;
}
