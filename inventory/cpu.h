/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The `cpu` object, from /proc/cpuinfo and sysfs, filled the way the Go
 * agent fills it from `lscpu -J` (util-linux 2.37+, as in its UBI9 image):
 * architecture = uname machine; count = "CPU(s)" = present CPUs; model_name
 * = "Model name" (x86 "model name", ppc "cpu", ARM part table) or s390x
 * "Machine type"; frequency = max of "CPU max MHz" (cpufreq) and s390x
 * "CPU static MHz"; flags = "Flags".
 */

#include <stddef.h>

#include "inventory.h"

typedef struct CpuInfo {
        char *model_name;
        char **flags;
        unsigned processors; /* "processor" entries (fallback count) */
        double static_mhz; /* s390x "cpu MHz static" */
} CpuInfo;

void cpu_info_done(CpuInfo *c);

/* Parses /proc/cpuinfo text for the architecture arch (uname machine).
 * Outside input: fuzzed (tests/fuzz/fuzz-cpuinfo.c). */
int cpuinfo_parse(const char *text, size_t len, const char *arch, CpuInfo *ret);

/* Counts the CPUs in a sysfs CPU list ("0-3,5"); -EINVAL when malformed. */
int cpu_list_count(const char *s, unsigned *ret);

int cpu_collect(const InventoryOptions *o, json_object **ret);
