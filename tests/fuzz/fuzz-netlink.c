/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: inventory/[a-z]*.c */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "fuzz.h"
#include "inventory/interfaces.h"
#include "inventory/netlink.h"
#include "inventory/routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(nl_state_done) NlState s = {};
        _cleanup_free_ void *copy = NULL;
        json_object *routes = NULL;
        InterfaceInfo *ifs = NULL;
        size_t n = 0;
        NlLink l;
        NlAddr a;
        NlRoute r;

        /* netlink buffers are aligned; so is the socket's */
        copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        (void)nl_parse_link(copy, size, &l);
        (void)nl_parse_addr(copy, size, &a);
        (void)nl_parse_route(copy, size, &r);
        (void)nl_consume(copy, size, &s);
        if (routes_to_json(&s, &routes) >= 0)
                json_object_put(routes);
        /* the interface assembly on what was parsed (sysfs reads go to an
         * empty root) */
        if (interfaces_from_state(&(InventoryOptions){ .root = "/nonexistent" }, &s, &ifs, &n) >= 0)
                interfaces_free(ifs, n);
        return 0;
}
