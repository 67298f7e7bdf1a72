/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "dmi.h"
#include "fileio.h"
#include "invutil.h"
#include "strutil.h"

int smbios_foreach(const uint8_t *table, size_t len, SmbiosCallback cb, void *userdata)
{
        size_t off = 0;

        while (off + 4 <= len) {
                SmbiosStructure s = {
                        .type = table[off],
                        .length = table[off + 1],
                        .handle = (uint16_t)(table[off + 2] | table[off + 3] << 8),
                        .data = table + off,
                };
                size_t end;
                int r;

                /* a header shorter than itself means a corrupt table: stop
                 * there, as dmidecode does */
                if (s.length < 4 || off + s.length > len)
                        break;
                /* the string-set ends with two NULs */
                end = off + s.length;
                while (end + 1 < len && !(table[end] == 0 && table[end + 1] == 0))
                        end++;
                if (end + 1 >= len)
                        break;
                s.strings = (const char *)table + off + s.length;
                s.strings_len = end + 2 - (off + s.length);

                r = cb(&s, userdata);
                if (r != 0)
                        return r;
                if (s.type == 127)
                        break;
                off = end + 2;
        }
        return 0;
}

const char *smbios_string(const SmbiosStructure *s, uint8_t n)
{
        const char *p = s->strings, *end = s->strings + s->strings_len;

        if (n == 0)
                return NULL;
        while (p < end && *p) {
                size_t l = strnlen(p, (size_t)(end - p));
                if (--n == 0)
                        return p + l < end ? p : NULL;
                p += l + 1;
        }
        return NULL;
}

static int add_memory_device(const SmbiosStructure *s, void *userdata)
{
        uint64_t *total = userdata;
        unsigned size;

        if (s->type != 17 || s->length < 0x0E)
                return 0;
        size = s->data[0x0C] | s->data[0x0D] << 8;
        if (size == 0 || size == 0xFFFF) /* "No Module Installed", "Unknown" */
                return 0;
        if (size == 0x7FFF && s->length >= 0x20) {
                /* Extended Size, in MB (bits 30:0) */
                uint32_t ext = s->data[0x1C] | s->data[0x1D] << 8 | s->data[0x1E] << 16 |
                               (uint32_t)s->data[0x1F] << 24;
                *total += (uint64_t)(ext & 0x7FFFFFFFu) << 20;
        } else if (size & 0x8000)
                *total += (uint64_t)(size & 0x7FFF) << 10; /* KB granularity */
        else
                *total += (uint64_t)size << 20;
        return 0;
}

uint64_t smbios_memory_bytes(const uint8_t *table, size_t len)
{
        uint64_t total = 0;

        (void)smbios_foreach(table, len, add_memory_device, &total);
        return total;
}

typedef struct PciSearch {
        unsigned segment, bus, devfn;
        SmbiosPciRef found;
        bool have_slot, have_onboard;
} PciSearch;

static int match_pci(const SmbiosStructure *s, void *userdata)
{
        PciSearch *q = userdata;

        if (s->type == 41 && s->length >= 0x0B && !q->have_onboard) {
                unsigned seg = s->data[0x07] | s->data[0x08] << 8, bus = s->data[0x09],
                         devfn = s->data[0x0A];
                if (seg == q->segment && bus == q->bus && devfn == q->devfn) {
                        q->found = (SmbiosPciRef){ .kind = 41,
                                                   .number = s->data[0x06],
                                                   .segment = seg,
                                                   .bus = bus,
                                                   .devfn = devfn,
                                                   .device_type = s->data[0x05] & 0x7F,
                                                   .enabled = (s->data[0x05] & 0x80) != 0 };
                        q->have_onboard = true;
                }
        } else if (s->type == 9 && s->length >= 0x11 && !q->have_slot && !q->have_onboard) {
                unsigned seg = s->data[0x0D] | s->data[0x0E] << 8, bus = s->data[0x0F],
                         devfn = s->data[0x10];
                if (seg == q->segment && bus == q->bus && devfn >> 3 == q->devfn >> 3 &&
                    !(seg == 0xFFFF && bus == 0xFF)) {
                        q->found = (SmbiosPciRef){ .kind = 9,
                                                   .number = s->data[0x09] | s->data[0x0A] << 8,
                                                   .segment = seg,
                                                   .bus = bus,
                                                   .devfn = devfn,
                                                   .enabled = true };
                        q->have_slot = true;
                }
        }
        return 0;
}

int smbios_find_pci(const uint8_t *table, size_t len, unsigned segment, unsigned bus, unsigned devfn,
                    SmbiosPciRef *ret)
{
        PciSearch q = { .segment = segment, .bus = bus, .devfn = devfn };

        (void)smbios_foreach(table, len, match_pci, &q);
        if (!q.have_onboard && !q.have_slot)
                return 0;
        *ret = q.found;
        return 1;
}

int smbios_read_table(const InventoryOptions *o, uint8_t **ret, size_t *ret_len)
{
        char *data = NULL;
        int r;

        r = inv_read_file(o, SMBIOS_TABLE_PATH, SMBIOS_TABLE_MAX, &data, ret_len);
        if (r < 0)
                return r;
        *ret = (uint8_t *)data;
        return 0;
}

char *dmi_id_item(const InventoryOptions *o, const char *name)
{
        _cleanup_free_ char *p = strdup_printf("/sys/class/dmi/id/%s", name);
        char *v = NULL;

        if (!p)
                return NULL;
        if (inv_read_file(o, p, 64 * 1024, &v, NULL) < 0)
                return strdup("unknown");
        /* ghw trims the whole file (strings.TrimSpace), newlines inside kept */
        strstrip(v);
        return v;
}
