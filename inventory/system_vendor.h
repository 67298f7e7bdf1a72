/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The `system_vendor` object: manufacturer, product_name and serial_number
 * from /sys/class/dmi/id (sys_vendor, product_name, product_serial; "unknown"
 * when a file is missing, as ghw says), with the Go agent's corrections
 * (product_family oVirt/RHV gives "oVirt"; chassis asset tag
 * "OracleCloud.com" becomes the manufacturer; s390x from /proc/cpuinfo and
 * /proc/sysinfo when the vendor is unknown), and `virtual` from
 * virt_detect_vm() instead of `systemd-detect-virt --vm`.
 */

#include <stdbool.h>

#include "inventory.h"

typedef enum VirtDetectFlags {
        VIRT_DETECT_NO_CPUID = 1 << 0, /* tests: judge from files only */
} VirtDetectFlags;

/* True when the host looks like a virtual machine (containers do not
 * count, as with --vm). Method, in systemd-detect-virt's spirit:
 *  - x86: the CPUID hypervisor bit (leaf 1, ECX bit 31), which every
 *    hypervisor systemd knows sets; Xen PV guests are caught by
 *    /proc/xen (without "control_d", i.e. not dom0) or
 *    /sys/hypervisor/type = "xen";
 *  - elsewhere: DMI vendor strings (sys_vendor, product_name,
 *    board_vendor, bios_vendor) against the known hypervisor vendors,
 *    a device tree "hypervisor" node or a QEMU "linux,dummy-virt"
 *    machine, and on s390x a "Control Program" in /proc/sysinfo
 *    (z/VM or KVM).
 * libsystemd has no public detect-virt API, hence this. */
bool virt_detect_vm(const InventoryOptions *o, VirtDetectFlags flags);

/* The s390x fallback, applied when sys_vendor is unknown: pure function of
 * the two files' texts (either may be NULL). Fuzzed with the cpuinfo target. */
void system_vendor_s390x(const char *cpuinfo, const char *sysinfo, char **manufacturer, char **product_name,
                         bool *virtual_);

int system_vendor_collect(const InventoryOptions *o, VirtDetectFlags flags, json_object **ret);
