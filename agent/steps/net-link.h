/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The two rtnetlink operations dhcp-lease-allocate needs (the Go agent uses
 * vishvananda/netlink for them): create a macvlan in private mode with a
 * given MAC on a parent interface and bring it up; delete a link by name.
 */

#include <stdint.h>

int macvlan_create(const char *parent, const char *name, const uint8_t mac[static 6]);
int link_delete(const char *name);
