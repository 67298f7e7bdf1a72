/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "cpu.h"
#include "invutil.h"
#include "jsonutil.h"
#include "strutil.h"

#define CPUINFO_MAX (4u * 1024 * 1024)

void cpu_info_done(CpuInfo *c)
{
        free(c->model_name);
        strv_free(c->flags);
        *c = (CpuInfo){};
}

/* lscpu names ARM cores from (implementer, part); the common server and
 * board parts, as util-linux's lscpu-arm.c names them. */
static const struct {
        unsigned implementer, part;
        const char *name;
} arm_parts[] = {
        { 0x41, 0xd03, "Cortex-A53" },     { 0x41, 0xd04, "Cortex-A35" },  { 0x41, 0xd05, "Cortex-A55" },
        { 0x41, 0xd07, "Cortex-A57" },     { 0x41, 0xd08, "Cortex-A72" },  { 0x41, 0xd09, "Cortex-A73" },
        { 0x41, 0xd0a, "Cortex-A75" },     { 0x41, 0xd0b, "Cortex-A76" },  { 0x41, 0xd0c, "Neoverse-N1" },
        { 0x41, 0xd0d, "Cortex-A77" },     { 0x41, 0xd40, "Neoverse-V1" }, { 0x41, 0xd41, "Cortex-A78" },
        { 0x41, 0xd49, "Neoverse-N2" },    { 0x41, 0xd4f, "Neoverse-V2" }, { 0x41, 0xd8e, "Neoverse-N3" },
        { 0x43, 0x0af, "ThunderX2 99xx" }, { 0x48, 0xd01, "Kunpeng-920" }, { 0x50, 0x000, "X-Gene" },
        { 0xc0, 0xac3, "Ampere-1" },       { 0xc0, 0xac4, "Ampere-1a" },
};

static const char *arm_part_name(const char *implementer, const char *part)
{
        uint64_t i, p;

        if (inv_parse_u64(implementer, 16, &i) < 0 || inv_parse_u64(part, 16, &p) < 0)
                return NULL;
        for (size_t k = 0; k < ELEMENTSOF(arm_parts); k++)
                if (arm_parts[k].implementer == i && arm_parts[k].part == p)
                        return arm_parts[k].name;
        return NULL;
}

int cpuinfo_parse(const char *text, size_t len, const char *arch, CpuInfo *ret)
{
        _cleanup_free_ char *copy = inv_memdup_str(text, len), *implementer = NULL, *part = NULL;
        _cleanup_(cpu_info_done) CpuInfo c = {};
        char *line, *next;
        bool s390 = arch && startswith(arch, "s390");
        int r;

        if (!copy)
                return -ENOMEM;
        for (line = copy; line && *line; line = next) {
                char *colon, *key, *value;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                colon = strchr(line, ':');
                if (!colon)
                        continue;
                *colon = 0;
                key = strstrip(line);
                value = strstrip(colon + 1);

                if (streq(key, "processor")) {
                        c.processors++;
                        continue;
                }
                if (s390 && startswith(key, "processor ")) {
                        /* "processor 0: version = FF,  identification = ..., machine = 3931" */
                        const char *m = strstr(value, "machine = ");
                        c.processors++;
                        if (m && !c.model_name) {
                                c.model_name = strndup(m + 10, strcspn(m + 10, ", \t"));
                                if (!c.model_name)
                                        return -ENOMEM;
                        }
                        continue;
                }
                if (!c.model_name &&
                    (streq(key, "model name") || (streq(key, "cpu") && arch && startswith(arch, "ppc")))) {
                        c.model_name = strdup(value);
                        if (!c.model_name)
                                return -ENOMEM;
                        continue;
                }
                if (!c.flags && (streq(key, "flags") || streq(key, "Features") || streq(key, "features"))) {
                        r = strv_split(value, " \t", &c.flags);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!implementer && streq(key, "CPU implementer")) {
                        implementer = strdup(value);
                        if (!implementer)
                                return -ENOMEM;
                        continue;
                }
                if (!part && streq(key, "CPU part")) {
                        part = strdup(value);
                        if (!part)
                                return -ENOMEM;
                        continue;
                }
                if (s390 && streq(key, "cpu MHz static")) {
                        double d;
                        if (safe_atod(value, &d) >= 0 && d > c.static_mhz)
                                c.static_mhz = d;
                }
        }
        if (!c.model_name && implementer && part) {
                const char *n = arm_part_name(implementer, part);
                if (n) {
                        c.model_name = strdup(n);
                        if (!c.model_name)
                                return -ENOMEM;
                }
        }
        *ret = c;
        c = (CpuInfo){};
        return 0;
}

int cpu_list_count(const char *s, unsigned *ret)
{
        _cleanup_strv_free_ char **ranges = NULL;
        unsigned n = 0;
        int r;

        r = strv_split(s, ",\n \t", &ranges);
        if (r < 0)
                return r;
        STRV_FOREACH (x, ranges) {
                unsigned a, b;
                char *dash = strchr(*x, '-');
                if (dash) {
                        *dash = 0;
                        if (safe_atou(*x, &a) < 0 || safe_atou(dash + 1, &b) < 0 || b < a)
                                return -EINVAL;
                } else if (safe_atou(*x, &a) < 0)
                        return -EINVAL;
                else
                        b = a;
                if (b - a >= 65536 || n + (b - a + 1) < n)
                        return -EINVAL;
                n += b - a + 1;
        }
        *ret = n;
        return 0;
}

/* lscpu's "CPU max MHz": the highest cpuinfo_max_freq (kHz) of any CPU. */
static double cpufreq_max_mhz(const InventoryOptions *o)
{
        _cleanup_free_ char *dir = inv_path(o, "/sys/devices/system/cpu");
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        uint64_t best = 0;

        if (!dir)
                return 0;
        d = opendir(dir);
        while (d && (de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                char b[32];
                uint64_t v;

                if (!startswith(de->d_name, "cpu") || !strchr("0123456789", de->d_name[3]) || !de->d_name[3])
                        continue;
                p = strdup_printf("%s/%s/cpufreq/cpuinfo_max_freq", dir, de->d_name);
                if (p && inv_parse_u64(inv_read_attr(p, b, sizeof(b)), 10, &v) >= 0 && v > best)
                        best = v;
        }
        return (double)best / 1000.0;
}

int cpu_collect(const InventoryOptions *o, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object();
        _cleanup_(cpu_info_done) CpuInfo c = {};
        _cleanup_free_ char *text = NULL, *present = NULL;
        struct utsname u;
        unsigned count = 0;
        double freq;
        size_t len;
        int r;

        if (!j)
                return -ENOMEM;
        if (uname(&u) < 0)
                u.machine[0] = 0;

        r = inv_read_file(o, "/proc/cpuinfo", CPUINFO_MAX, &text, &len);
        if (r >= 0) {
                r = cpuinfo_parse(text, len, u.machine, &c);
                if (r == -ENOMEM)
                        return r;
        }
        /* lscpu's "CPU(s)" counts the present CPUs */
        if (inv_read_line(o, "/sys/devices/system/cpu/present", &present) < 0 ||
            cpu_list_count(present, &count) < 0 || count == 0)
                count = c.processors;

        freq = MAX(cpufreq_max_mhz(o), c.static_mhz);

        if (json_add_string_nonempty(j, "architecture", u.machine) < 0 ||
            json_add_int64_nonzero(j, "count", count) < 0 ||
            (c.flags ? json_add(j, "flags", json_new_strv(c.flags)) : inv_add_null(j, "flags")) < 0 ||
            json_add_double_nonzero(j, "frequency", freq) < 0 ||
            json_add_string_nonempty(j, "model_name", c.model_name) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}
