/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "dmi.h"
#include "invutil.h"
#include "jsonutil.h"
#include "memory.h"
#include "strutil.h"

static int unit_shift(const char *unit, size_t n, unsigned *ret)
{
        static const struct {
                const char *name;
                unsigned shift;
        } units[] = { { "bytes", 0 }, { "kb", 10 }, { "mb", 20 }, { "gb", 30 },
                      { "tb", 40 },   { "eb", 50 }, { "zb", 60 } };
        /* The Go agent's table skips PB: "EB" is 2^50 there, "ZB" 2^60.
         * Kept, since meminfo only ever says "kB". */
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (strlen(units[i].name) == n && strncasecmp(units[i].name, unit, n) == 0) {
                        *ret = units[i].shift;
                        return 0;
                }
        return -EINVAL;
}

int meminfo_parse_total(const char *text, size_t len, uint64_t *ret)
{
        const char *p = text, *end = text + len;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
                uint64_t v = 0;
                unsigned shift;
                size_t ulen;

                if (!eol)
                        eol = end;
                q = p;
                while (q < eol && (*q == ' ' || *q == '\t'))
                        q++;
                if ((size_t)(eol - q) > 9 && memcmp(q, "MemTotal:", 9) == 0) {
                        q += 9;
                        if (q >= eol || (*q != ' ' && *q != '\t'))
                                return -EBADMSG;
                        while (q < eol && (*q == ' ' || *q == '\t'))
                                q++;
                        if (q >= eol || *q < '0' || *q > '9')
                                return -EBADMSG;
                        for (; q < eol && *q >= '0' && *q <= '9'; q++) {
                                if (v > (UINT64_MAX - 9) / 10)
                                        return -ERANGE;
                                v = v * 10 + (uint64_t)(*q - '0');
                        }
                        if (q >= eol || (*q != ' ' && *q != '\t'))
                                return -EBADMSG;
                        while (q < eol && (*q == ' ' || *q == '\t'))
                                q++;
                        for (ulen = 0;
                             q + ulen < eol && ((q[ulen] | 0x20) >= 'a' && (q[ulen] | 0x20) <= 'z'); ulen++)
                                ;
                        if (ulen == 0 || unit_shift(q, ulen, &shift) < 0)
                                return -EBADMSG;
                        if (shift > 0 && v > (UINT64_MAX >> shift))
                                return -ERANGE;
                        *ret = v << shift;
                        return 0;
                }
                p = eol + 1;
        }
        return -ENOENT;
}

/* ghw's TotalPhysicalBytes: block_size_bytes (hex) x memory blocks whose
 * state is "online". 0 when the directory is missing or unreadable. */
static uint64_t memory_blocks_bytes(const InventoryOptions *o)
{
        _cleanup_free_ char *dir = inv_path(o, "/sys/devices/system/memory");
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *bs = NULL;
        struct dirent *de;
        uint64_t block, total = 0;
        bool any = false;

        if (!dir || inv_read_line(o, "/sys/devices/system/memory/block_size_bytes", &bs) < 0 ||
            inv_parse_u64(bs, 16, &block) < 0)
                return 0;
        d = opendir(dir);
        while (d && (de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                char b[32];

                if (!startswith(de->d_name, "memory") || !de->d_name[6] ||
                    !strchr("0123456789", de->d_name[6]))
                        continue;
                any = true;
                p = strdup_printf("%s/%s/state", dir, de->d_name);
                if (!p)
                        return 0;
                if (streq(inv_read_attr(p, b, sizeof(b)), "online"))
                        total += block;
        }
        return any ? total : 0;
}

int memory_collect(const InventoryOptions *o, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object();
        _cleanup_free_ char *meminfo = NULL;
        _cleanup_free_ uint8_t *table = NULL;
        uint64_t usable = 0, physical = 0;
        const char *method = NULL;
        size_t len;

        if (!j)
                return -ENOMEM;
        if (inv_read_file(o, "/proc/meminfo", 1u << 20, &meminfo, &len) >= 0)
                (void)meminfo_parse_total(meminfo, len, &usable);

        if (smbios_read_table(o, &table, &len) >= 0)
                physical = smbios_memory_bytes(table, len);
        if (physical > 0)
                method = "dmidecode";
        if (physical == 0) {
                physical = memory_blocks_bytes(o);
                if (physical == 0)
                        physical = usable; /* ghw's fallback to the usable amount */
                if (physical > 0)
                        method = "ghw";
        }
        /* "meminfo" would follow only when ghw fails, which it does exactly
         * when MemTotal is unreadable: then there is nothing to report. */

        if (json_add_int64_nonzero(j, "physical_bytes", (int64_t)physical) < 0 ||
            json_add_string_nonempty(j, "physical_bytes_method", method) < 0 ||
            json_add_int64_nonzero(j, "usable_bytes", (int64_t)usable) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}
