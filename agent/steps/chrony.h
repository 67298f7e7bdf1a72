/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * chronyd's sources, read the way the Go agent reads them: `chronyc -n
 * sources` on the host (bounded by CHRONYC_TIMEOUT_SECONDS, as its
 * `timeout 30`), one source per line that starts with '^' (a server, not a
 * peer or reference clock), the state from the character after it.
 */

#include <stddef.h>

#define CHRONYC_TIMEOUT_SECONDS 30

typedef struct ChronySource {
        char *name; /* the second field: an address with -n */
        const char *state; /* synced, combined, not_combined, unreachable, error, variable */
} ChronySource;

void chrony_sources_free(ChronySource *l, size_t n);

/* The source_state of chronyc's mode/state column character: '*' synced,
 * '+' combined, '-' not_combined, '?' unreachable, 'x' error, '~' variable,
 * anything else error. */
const char *chrony_state_name(char c);

/* Parses `chronyc -n sources` output (any length, any bytes). */
int chrony_parse_sources(const char *output, ChronySource **ret, size_t *ret_n);
