/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The SMBIOS structure table (/sys/firmware/dmi/tables/DMI), parsed
 * in-process instead of running dmidecode, and the DMI identity strings of
 * /sys/class/dmi/id. The table is outside input: every access is bounds
 * checked (tests/fuzz/fuzz-smbios.c).
 */

#include <stddef.h>
#include <stdint.h>

#include "inventory.h"

#define SMBIOS_TABLE_PATH "/sys/firmware/dmi/tables/DMI"
#define SMBIOS_TABLE_MAX (1u * 1024 * 1024)

typedef struct SmbiosStructure {
        uint8_t type;
        uint8_t length; /* of the formatted area, header included */
        uint16_t handle;
        const uint8_t *data; /* formatted area (length bytes) */
        const char *strings; /* string-set: NUL-separated, ends with an empty string */
        size_t strings_len;
} SmbiosStructure;

/* Calls cb for every structure until the end-of-table (type 127) or the
 * end of the buffer; stops early when cb returns non-zero (returned). */
typedef int (*SmbiosCallback)(const SmbiosStructure *s, void *userdata);
int smbios_foreach(const uint8_t *table, size_t len, SmbiosCallback cb, void *userdata);

/* The n-th (1-based) string of the structure, NULL when absent. */
const char *smbios_string(const SmbiosStructure *s, uint8_t n);

/* Sum of the type 17 (memory device) sizes, as the Go agent adds up the
 * "Size:" lines of `dmidecode -t 17`; 0 when none has a size. */
uint64_t smbios_memory_bytes(const uint8_t *table, size_t len);

/* A PCI function's slot (type 9) or on-board device (type 41) entry, for
 * biosdevname-style names. */
typedef struct SmbiosPciRef {
        int kind; /* 9: system slot, 41: on-board device */
        unsigned number; /* slot ID (type 9) or device type instance (type 41) */
        unsigned segment, bus, devfn;
        unsigned device_type; /* type 41 device type, enabled bit stripped */
        bool enabled;
} SmbiosPciRef;

/* Finds the entry for segment:bus:devfn; type 41 entries win over type 9
 * slots. Returns 1 when found, 0 otherwise. For a slot, devfn's function
 * bits are ignored (a slot holds every function of its device). */
int smbios_find_pci(const uint8_t *table, size_t len, unsigned segment, unsigned bus, unsigned devfn,
                    SmbiosPciRef *ret);

/* Reads the table (root-relative); -ENOENT when the firmware has none. */
int smbios_read_table(const InventoryOptions *o, uint8_t **ret, size_t *ret_len);

/* /sys/class/dmi/id/<name> trimmed, or "unknown" when it cannot be read,
 * as ghw reports a missing DMI file. Newly allocated; NULL on OOM. */
char *dmi_id_item(const InventoryOptions *o, const char *name);
