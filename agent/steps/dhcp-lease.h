/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * dhclient lease files, as dhcp-lease-allocate reads and writes them.
 */

/* The last "lease { ... }" block of a lease file (it must end the file,
 * trailing white space aside), as the Go agent's
 * (?:\A|\s)(lease\s*[{][^}{]*[}])\s*\z; -ENOENT when there is none. */
int dhcp_lease_last(const char *text, char **ret);

/* The fixed-address of a lease block; -ENOENT when absent. */
int dhcp_lease_address(const char *lease, char **ret);

/* The lease text with every `interface "X"` naming iface instead. */
char *dhcp_lease_set_interface(const char *text, const char *iface);
