/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Helpers shared by the inventory modules: paths under the options' root,
 * small sysfs/procfs reads. Internal to inventory/.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"

/* Newly allocated root + path; NULL on allocation failure. */
char *inv_path(const InventoryOptions *o, const char *path);
/* First line of root + path, trimmed (sysfs attributes). */
int inv_read_line(const InventoryOptions *o, const char *path, char **ret);
/* Whole file at root + path, at most max bytes. */
int inv_read_file(const InventoryOptions *o, const char *path, size_t max, char **ret, size_t *ret_len);
/* Reads a trimmed attribute into ret, "" on any error; returns ret. */
char *inv_read_attr(const char *path, char *buf, size_t size);
/* True when root + path exists. */
bool inv_exists(const InventoryOptions *o, const char *path);
/* True when the file holds "1" (sysfs boolean), false on any error. */
bool inv_read_bool(const char *path);

/* A NUL-terminated copy of n bytes that need not be NUL-terminated (outside
 * input handed over with a length). NULL on OOM. */
char *inv_memdup_str(const void *p, size_t n);

/* Parses a decimal or "0x" hexadecimal unsigned number, trimmed. */
int inv_parse_u64(const char *s, int base, uint64_t *ret);

typedef struct json_object json_object;
/* Adds "key": null (Go's nil slice). */
int inv_add_null(json_object *o, const char *key);
/* Adds v, or null when v is NULL, as a nil-able Go slice. Takes v. */
int inv_add_nullable(json_object *o, const char *key, json_object *v);
