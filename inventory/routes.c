/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <linux/rtnetlink.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "netlink.h"
#include "routes.h"

int routes_to_json(const NlState *s, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *a = json_new_array();
        static const int families[] = { AF_INET, AF_INET6 };

        if (!a)
                return -ENOMEM;
        for (size_t f = 0; f < ELEMENTSOF(families); f++)
                for (size_t k = 0; k < s->n_routes; k++) {
                        const NlRoute *r = &s->routes[k];
                        _cleanup_(json_object_putp) json_object *j = NULL;
                        const NlLink *l;
                        char dst[64], gw[64];

                        if (r->family != families[f] || r->table != RT_TABLE_MAIN ||
                            (r->flags & RTM_F_CLONED))
                                continue;
                        l = r->oif > 0 ? nl_state_link(s, r->oif) : NULL;
                        if (!l)
                                continue;
                        if (r->has_dst)
                                nl_format_ip(r->family, r->dst, dst, sizeof(dst));
                        else
                                snprintf(dst, sizeof(dst), "%s", r->family == AF_INET ? "0.0.0.0" : "::");
                        gw[0] = 0;
                        if (r->has_gateway)
                                nl_format_ip(r->family, r->gateway, gw, sizeof(gw));
                        j = json_new_object();
                        if (!j || json_add_string(j, "destination", dst) < 0 ||
                            json_add_int64(j, "family", r->family) < 0 ||
                            json_add_string_nonempty(j, "gateway", gw) < 0 ||
                            json_add_string_nonempty(j, "interface", l->name) < 0 ||
                            json_add_int64_nonzero(j, "metric", (int32_t)r->priority) < 0 ||
                            json_append(a, TAKE_PTR(j)) < 0)
                                return -ENOMEM;
                }
        *ret = TAKE_PTR(a);
        return 0;
}
