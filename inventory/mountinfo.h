/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * /proc/<pid>/mountinfo, parsed (outside input: fuzzed by fuzz-mountinfo).
 * Mount points and sources are unescaped (\040 and friends).
 */

#include <stddef.h>

#include "inventory.h"

typedef struct MountEntry {
        unsigned major, minor;
        char *mount_point;
        char *fstype;
        char *source;
} MountEntry;

typedef struct MountTable {
        MountEntry *entries;
        size_t n;
} MountTable;

void mount_table_done(MountTable *t);
int mountinfo_parse(const char *text, size_t len, MountTable *ret);
/* The host's table: /proc/1/mountinfo (the host's mount namespace when
 * running in a container with --pid=host), else /proc/self/mountinfo. */
int mount_table_read(const InventoryOptions *o, MountTable *ret);
/* First entry for the device, or NULL. */
const MountEntry *mount_table_find_dev(const MountTable *t, unsigned major, unsigned minor);
/* Last entry mounted on path (the visible one), or NULL. */
const MountEntry *mount_table_find_path(const MountTable *t, const char *path);
