/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The `boot` object: command_line (/proc/cmdline, raw, newline included),
 * current_boot_mode ("uefi" when /sys/firmware/efi is a directory, else
 * "bios"), device_type (source of the /sysroot mount: /dev/loop* gives
 * "ephemeral", anything else "persistent", no mount: omitted -- the Go
 * agent runs `findmnt /sysroot` in the host's namespaces; we read
 * /proc/1/mountinfo), pxe_interface (BOOTIF= of the command line) and
 * secure_boot_state (the SecureBoot EFI variable).
 */

#include <stddef.h>

#include "inventory.h"

/* The value of the first BOOTIF= word of a kernel command line, newly
 * allocated, or NULL (also on OOM). Fuzzed. */
char *cmdline_bootif(const char *cmdline);

/* "NotSupported" (no variable), "Enabled"/"Disabled" (5-byte variable:
 * 4 attribute bytes + value), "Unknown" otherwise. data NULL: missing. */
const char *secure_boot_state_from_var(const unsigned char *data, size_t len);

int boot_collect(const InventoryOptions *o, json_object **ret);
