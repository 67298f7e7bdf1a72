/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The free-addresses scan (the Go agent's free_addresses program, an nmap
 * ping sweep): for each IPv4 network of the request, which addresses no
 * host answers for. Networks larger than /22 are scanned /22 by /22, and
 * the scan of a network stops once FREE_ADDRESSES_LIMIT addresses were
 * found (the Go agent's MinSubnetMaskSize and AddressLimit). Every address
 * of the network counts, the network and broadcast addresses included, as
 * nmap scans them; this host's own addresses are taken (nmap reports them
 * up). Addresses inside a subnet of one of this host's interfaces are
 * probed with ARP on that interface (nmap -PR), others with ICMP echo.
 * IPv6 networks give a null list, as in the Go agent.
 */

#include <stdbool.h>

#define FREE_ADDRESSES_LIMIT 8000
#define FREE_ADDRESSES_MIN_PREFIX 22

/* request: the FreeAddressesRequest JSON. Fills the program's stdout,
 * stderr and exit code (-1 for errors, as the Go program returns it);
 * returns a negative errno only for allocation failures. */
int free_addresses_run(const char *request, char **ret_output, char **ret_error, int *ret_exit_code);
