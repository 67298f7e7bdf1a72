/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Fuzz targets: each tests/fuzz/fuzz-<name>.c defines LLVMFuzzerTestOneInput.
 * Built by meson with fuzz-replay.c as main, they replay the committed
 * corpus in tests/fuzz/corpus/<name>/ as ordinary tests (suite "fuzz"); built
 * by run-fuzzers.sh with clang's libFuzzer they explore for a bounded time.
 *
 * The first line naming "fuzz-sources:" lists the sources a target needs
 * besides lib/ (for the clang build).
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a C string. Not strndup(): the input has no terminator, and
 * ASan's strict_string_checks makes strndup read past it. NULL on ENOMEM. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1);

        if (s) {
                if (size > 0)
                        memcpy(s, data, size);
                s[size] = 0;
        }
        return s;
}
