/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A Tang server's advertisement (GET URL/adv/THUMBPRINT): a JWS in JSON
 * serialization, {"payload": ..., "signatures": [{"protected", "signature"}]},
 * decoded as the Go agent decodes it into models.TangServerResponse.
 */

#include <stddef.h>

typedef struct json_object json_object;

/* The TangServerResponse entry for the reply ({"payload", "signatures",
 * "tang_url"}), or -EBADMSG with the Go agent's message ("Empty tang
 * response", "Error unmarshaling tang response: ..."). */
int tang_parse_advertisement(const char *body, size_t len, const char *tang_url, json_object **ret,
                             char **reterr);
