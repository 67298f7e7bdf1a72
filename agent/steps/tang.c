/* SPDX-License-Identifier: Apache-2.0 */
/* The Tang advertisement parser of tang.h (fuzzed alone). */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "step-model.h"
#include "strutil.h"
#include "tang.h"

static const ModelSchema string_schema = { .kind = MODEL_STRING, .go_type = "string" };

static const ModelField signature_fields[] = {
        { "protected", &string_schema, false },
        { "signature", &string_schema, false },
        {},
};
static const ModelSchema signature_schema = { .kind = MODEL_OBJECT,
                                              .go_type = "TangServerSignatures",
                                              .fields = signature_fields };
static const ModelSchema signatures_schema = { .kind = MODEL_ARRAY,
                                               .go_type = "[]*models.TangServerSignatures",
                                               .items = &signature_schema };
static const ModelField response_fields[] = {
        { "payload", &string_schema, false },
        { "signatures", &signatures_schema, false },
        { "tang_url", &string_schema, false },
        {},
};
static const ModelSchema response_schema = { .kind = MODEL_OBJECT,
                                             .go_type = "TangServerResponse",
                                             .fields = response_fields };

int tang_parse_advertisement(const char *body, size_t len, const char *tang_url, json_object **ret,
                             char **reterr)
{
        _cleanup_(json_object_putp) json_object *doc = NULL, *e = NULL;
        _cleanup_free_ char *copy = NULL, *err = NULL;
        json_object *sigs;
        int r;

        if (len == 0) {
                *reterr = strdup("Empty tang response");
                return -EBADMSG;
        }
        /* body need not be terminated: not strndup(), which may look past len */
        copy = malloc(len + 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, body, len);
        copy[len] = 0;
        if (strlen(copy) != len) {
                *reterr = strdup(
                        "Error unmarshaling tang response: invalid character '\\x00' in string literal");
                return -EBADMSG;
        }
        r = model_parse_arg(copy, &response_schema, &doc, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *reterr = strdup_printf("Error unmarshaling tang response: %s", strna(err));
                return -EBADMSG;
        }

        /* re-marshalled as models.TangServerResponse: payload, signatures
         * (a nil slice is null), tang_url; unknown keys dropped */
        e = json_new_object();
        if (!e || json_add_string_nonempty(e, "payload", model_get_string(doc, "payload")) < 0)
                return -ENOMEM;
        sigs = model_get(doc, "signatures");
        if (sigs) {
                _cleanup_(json_object_putp) json_object *list = json_new_array();

                if (!list)
                        return -ENOMEM;
                for (size_t i = 0; i < model_array_length(sigs); i++) {
                        json_object *s = json_object_array_get_idx(sigs, i);
                        _cleanup_(json_object_putp) json_object *o = NULL;

                        if (!s) {
                                /* a null element stays a nil pointer: null */
                                if (json_object_array_add(list, NULL) < 0)
                                        return -ENOMEM;
                                continue;
                        }
                        o = json_new_object();
                        if (!o ||
                            json_add_string_nonempty(o, "protected", model_get_string(s, "protected")) < 0 ||
                            json_add_string_nonempty(o, "signature", model_get_string(s, "signature")) < 0 ||
                            json_append(list, TAKE_PTR(o)) < 0)
                                return -ENOMEM;
                }
                if (json_add(e, "signatures", TAKE_PTR(list)) < 0)
                        return -ENOMEM;
        } else if (json_object_object_add(e, "signatures", NULL) < 0) /* a nil slice: null */
                return -ENOMEM;
        if (json_add_string_nonempty(e, "tang_url", tang_url) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(e);
        return 0;
}
