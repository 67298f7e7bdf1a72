/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The `gpus` list: PCI devices (libudev enumeration of the pci subsystem,
 * ordered by address as ghw lists /sys/bus/pci/devices) whose class and
 * subclass is selected by the GPU configuration, each {address, device_id,
 * name, vendor, vendor_id}; names come from the udev hwdb (the device's
 * modalias), else from the device's ID_*_FROM_DATABASE udev properties,
 * else "unknown" (what ghw's pcidb says for an unlisted id).
 *
 * Configuration (--gpu-config-file, YAML): `classes` ("0300"), `vendors`
 * ("0302 10de") and `models` ("1200 1da3 1020"), spaces ignored; a device
 * matches when any list names it. A file replaces the default, which is
 * classes 0300, 0302, 0380 and 1200.
 */

#include <stddef.h>

#include "inventory.h"

typedef struct GpuConfig {
        char **classes, **vendors, **models; /* normalized: lower-case, no spaces */
} GpuConfig;

void gpu_config_done(GpuConfig *c);
/* Parses the YAML subset these files use (block or flow lists of plain or
 * quoted scalars under the three keys; other keys ignored). Fuzzed. */
int gpu_config_parse(const char *text, size_t len, GpuConfig *ret);
int gpu_config_default(GpuConfig *ret);
/* class: 4 hex digits ("0300"); vendor/device: 4 hex digits. */
bool gpu_config_match(const GpuConfig *c, const char *class_, const char *vendor, const char *device);

int gpus_collect(const InventoryOptions *o, json_object **ret);
