/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The `routes` list: IPv4 then IPv6 routes of the main table (what
 * vishvananda/netlink's RouteList(nil, family) returns: cloned routes and
 * other tables are dropped), each {destination, family, gateway, interface,
 * metric}; a route whose interface cannot be named (no oif: blackhole,
 * unreachable) is skipped; multipath routes use their first hop.
 */

#include "inventory.h"

typedef struct NlState NlState;

int routes_to_json(const NlState *s, json_object **ret);
