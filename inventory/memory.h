/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The `memory` object. physical_bytes, first that is non-zero:
 *  1. the SMBIOS type 17 device sizes (what the Go agent adds up from
 *     `dmidecode -t 17`; method "dmidecode");
 *  2. what ghw reports: online memory blocks x block_size_bytes from
 *     /sys/devices/system/memory, or else -- ghw's own fallback -- MemTotal
 *     (method "ghw" in both cases, as the Go agent labels ghw's answer);
 *  3. MemTotal (method "meminfo"; only reached when ghw would fail too).
 * usable_bytes is MemTotal from /proc/meminfo.
 */

#include <stddef.h>
#include <stdint.h>

#include "inventory.h"

/* MemTotal in bytes from /proc/meminfo text (units as the Go agent
 * accepts them: bytes, kB, MB, ... powers of 1024). Fuzzed. */
int meminfo_parse_total(const char *text, size_t len, uint64_t *ret);

int memory_collect(const InventoryOptions *o, json_object **ret);
