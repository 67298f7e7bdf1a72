/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The host's hardware inventory, serialized exactly as assisted-service's
 * Inventory model (../shared/reference/assisted-service/swagger.yaml) with
 * the Go agent's key order (alphabetical, as Go's encoding/json writes the
 * generated structs) and omission rules (every scalar omitempty; the lists
 * disks, gpus, interfaces, routes, cpu.flags, interface.flags,
 * ipv4/ipv6_addresses and not_eligible_reasons always present).
 *
 * Sources, per area (one module each, see the headers beside this one):
 * cpu (/proc/cpuinfo, sysfs), memory (SMBIOS type 17, sysfs memory blocks,
 * /proc/meminfo), disks (libudev + libblkid + sysfs), interfaces and routes
 * (rtnetlink), boot (/proc/cmdline, efivars, /proc/1/mountinfo),
 * system_vendor (/sys/class/dmi/id + virtualization detection), bmc (kernel
 * IPMI ioctls), gpus (PCI via libudev + hwdb), tpm (sysfs), hostname.
 *
 * Nothing here logs above debug. A source that is missing or unreadable
 * gives the field its documented default (what the Go agent sends then);
 * only an allocation failure makes inventory_collect() fail.
 */

#include <stdbool.h>

#include "uuid.h"

typedef struct json_object json_object;

typedef struct InventoryOptions {
        bool dry_run; /* --dry-run: forced values below, BMC defaults */
        const char *forced_hostname; /* dry run */
        const char *forced_mac; /* dry run */
        const char *forced_ipv4; /* dry run */
        const char *gpu_config_file; /* YAML: classes/vendors/models; NULL: the default classes */
        /* "" (or NULL) or a directory prefixed to every /sys, /proc, /dev and
         * /run/udev path read directly, for tests with fixture trees. libudev
         * enumeration cannot be redirected this way: tests of the udev-based
         * parts run under umockdev, which redirects /sys, /dev and /proc. */
        const char *root;
        bool skip_bmc; /* do not talk to the IPMI device (tests) */
        /* labs: comma-separated block device names (sysfs names, "loop3");
         * when set, the only disks listed, loop devices included */
        const char *lab_disks;
} InventoryOptions;

/* The Inventory document. Returns 0 and a new object, or -ENOMEM. */
int inventory_collect(const InventoryOptions *o, json_object **ret);

/* The host ID as the Go agent derives it (notes §4.1): md5 of the baseboard
 * serial, else the DMI product UUID, else md5 of the lowest MAC, else
 * deaddead-dead-dead-dead-deaddeaddead. Always succeeds. */
int inventory_host_id(const InventoryOptions *o, char ret[static UUID_STRING_MAX]);

/* The `inventory` verb (Go agent's command line; always exits 0 unless the
 * document cannot be produced at all). */
int inventory_main(int argc, char **argv);
