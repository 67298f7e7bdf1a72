/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * bmc_address / bmc_v6address through the kernel IPMI device
 * (/dev/ipmi0, /dev/ipmi/0, /dev/ipmidev/0) with "Get LAN Configuration
 * Parameters" requests, instead of the Go agent's 24+ ipmitool runs.
 * Without the device (no BMC, no ipmi_devintf), the agent's defaults are
 * returned at once: "0.0.0.0" and "::/0". Channels 1..12 are tried in
 * order, as `ipmitool lan print N` / `lan6 print N` are.
 */

#include <stddef.h>
#include <stdint.h>

#include "inventory.h"

#define BMC_V4_DEFAULT "0.0.0.0"
#define BMC_V6_DEFAULT "::/0"

/* Sends one request and waits for its response (data[0] = completion code).
 * Implemented over the IPMI device; replaceable in tests. */
typedef int (*BmcTransport)(void *userdata, uint8_t netfn, uint8_t cmd, const uint8_t *data, size_t len,
                            uint8_t *resp, size_t resp_max, size_t *resp_len);

/* The decisions, given a transport (ret: at least 46 bytes). */
void bmc_v4_address(BmcTransport t, void *userdata, char *ret, size_t size);
void bmc_v6_address(BmcTransport t, void *userdata, char *ret, size_t size);

/* Both addresses (defaults when there is no IPMI device). */
void bmc_addresses(const InventoryOptions *o, char *v4, size_t v4_size, char *v6, size_t v6_size);
