/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * UUIDs as strings in the canonical 8-4-4-4-12 lower-case form, as
 * assisted-service and the Go agent write them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UUID_STRING_MAX 37

/* A random (version 4) UUID. */
void uuid_random(char ret[static UUID_STRING_MAX]);
/* Formats 16 bytes as 8-4-4-4-12 without touching version bits: the Go
 * agent's host IDs are raw MD5 digests in UUID layout. */
void uuid_format(const uint8_t bytes[static 16], char ret[static UUID_STRING_MAX]);
/* MD5 of data, formatted with uuid_format(). */
int uuid_from_md5(const void *data, size_t len, char ret[static UUID_STRING_MAX]);
/* 8-4-4-4-12 hex digits (either case), as strfmt's "uuid" format accepts. */
bool uuid_is_valid(const char *s);
