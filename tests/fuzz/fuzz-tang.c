/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: agent/steps/tang.c agent/steps/step-model.c */
/* A Tang server's advertisement, as tang-connectivity-check decodes it. */
#include <stdlib.h>

#include <json-c/json.h>

#include "agent/steps/tang.h"
#include "cleanup.h"
#include "fuzz.h"
#include "jsonutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(json_object_putp) json_object *e = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL;

        if (tang_parse_advertisement((const char *)data, size, "http://tang.test/adv/x", &e, &err) >= 0) {
                text = json_to_string(e, 0);
                if (!text)
                        abort();
        }
        return 0;
}
