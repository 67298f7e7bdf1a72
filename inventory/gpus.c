/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <libudev.h>

#include "cleanup.h"
#include "fileio.h"
#include "gpus.h"
#include "invutil.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"
#include "udevutil.h"

#define GPU_CONFIG_MAX (1u << 20)

void gpu_config_done(GpuConfig *c)
{
        strv_free(c->classes);
        strv_free(c->vendors);
        strv_free(c->models);
        *c = (GpuConfig){};
}

static char *normalize(const char *s, size_t n)
{
        char *r = malloc(n + 1), *w = r;

        if (!r)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!isspace((unsigned char)s[i]))
                        *w++ = (char)tolower((unsigned char)s[i]);
        *w = 0;
        return r;
}

/* One scalar: quoted ('..' with '' escapes, ".." with \ escapes kept
 * literal) or plain up to a comment or the end. */
static int add_scalar(char ***list, const char *s, size_t n)
{
        _cleanup_free_ char *v = NULL;

        while (n > 0 && isspace((unsigned char)*s))
                s++, n--;
        while (n > 0 && isspace((unsigned char)s[n - 1]))
                n--;
        if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
                s++;
                n -= 2;
        }
        if (n == 0)
                return 0;
        v = normalize(s, n);
        if (!v)
                return -ENOMEM;
        if (!*v)
                return 0;
        return strv_push(list, TAKE_PTR(v));
}

static size_t comment_start(const char *l, size_t n)
{
        char q = 0;

        for (size_t i = 0; i < n; i++) {
                if (q) {
                        if (l[i] == q)
                                q = 0;
                } else if (l[i] == '\'' || l[i] == '"')
                        q = l[i];
                else if (l[i] == '#' && (i == 0 || isspace((unsigned char)l[i - 1])))
                        return i;
        }
        return n;
}

static int add_flow(char ***list, const char *s, size_t n)
{
        /* [a, 'b', "c"] */
        const char *end = memchr(s, ']', n);
        size_t i = 0;
        char q = 0;
        int r;

        if (!end)
                return -EBADMSG;
        n = (size_t)(end - s);
        for (size_t start = 0; i <= n; i++) {
                if (i < n && q) {
                        if (s[i] == q)
                                q = 0;
                        continue;
                }
                if (i < n && (s[i] == '\'' || s[i] == '"')) {
                        q = s[i];
                        continue;
                }
                if (i == n || s[i] == ',') {
                        r = add_scalar(list, s + start, i - start);
                        if (r < 0)
                                return r;
                        start = i + 1;
                }
        }
        return 0;
}

int gpu_config_parse(const char *text, size_t len, GpuConfig *ret)
{
        _cleanup_(gpu_config_done) GpuConfig c = {};
        const char *p = text, *end = text + len;
        char ***current = NULL;
        int r;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p)), *l = p, *colon;
                size_t n;

                if (!eol)
                        eol = end;
                p = eol + 1;
                n = comment_start(l, (size_t)(eol - l));
                while (n > 0 && isspace((unsigned char)l[n - 1]))
                        n--;
                if (n == 0 || (n >= 3 && strneq(l, "---", 3)) || (n >= 3 && strneq(l, "...", 3)))
                        continue;
                if (!isspace((unsigned char)l[0]) && l[0] != '-') {
                        /* a top-level key */
                        colon = memchr(l, ':', n);
                        if (!colon)
                                return -EBADMSG;
                        if ((size_t)(colon - l) == 7 && strneq(l, "classes", 7))
                                current = &c.classes;
                        else if ((size_t)(colon - l) == 7 && strneq(l, "vendors", 7))
                                current = &c.vendors;
                        else if ((size_t)(colon - l) == 6 && strneq(l, "models", 6))
                                current = &c.models;
                        else
                                current = NULL;
                        {
                                const char *v = colon + 1;
                                size_t vn = n - (size_t)(v - l);
                                while (vn > 0 && isspace((unsigned char)*v))
                                        v++, vn--;
                                if (vn > 0 && *v == '[' && current) {
                                        r = add_flow(current, v + 1, vn - 1);
                                        if (r < 0)
                                                return r;
                                } else if (vn > 0 && current && !(vn == 2 && strneq(v, "[]", 2)))
                                        return -EBADMSG; /* a scalar where a list belongs */
                        }
                        continue;
                }
                /* "  - item" */
                while (n > 0 && isspace((unsigned char)*l))
                        l++, n--;
                if (n == 0 || *l != '-')
                        return -EBADMSG;
                if (current) {
                        r = add_scalar(current, l + 1, n - 1);
                        if (r < 0)
                                return r;
                }
        }
        *ret = c;
        c = (GpuConfig){};
        return 0;
}

int gpu_config_default(GpuConfig *ret)
{
        static const char *const classes[] = { "0300", "0302", "0380", "1200", NULL };
        char **l = strv_copy((char **)classes);

        if (!l)
                return -ENOMEM;
        *ret = (GpuConfig){ .classes = l };
        return 0;
}

bool gpu_config_match(const GpuConfig *c, const char *class_, const char *vendor, const char *device)
{
        char cv[16], cvd[16];

        snprintf(cv, sizeof(cv), "%s%s", class_, vendor);
        snprintf(cvd, sizeof(cvd), "%s%s%s", class_, vendor, device);
        return strv_contains(c->classes, class_) || strv_contains(c->vendors, cv) ||
               strv_contains(c->models, cvd);
}

typedef struct Gpu {
        char *address;
        json_object *json;
} Gpu;

static int gpu_cmp(const void *a, const void *b)
{
        return strcmp(((const Gpu *)a)->address, ((const Gpu *)b)->address);
}

/* "0x10de" -> "10de"; "0x030000" -> "0300" */
static void hex_id(const char *s, size_t digits, char *buf, size_t size)
{
        const char *h = startswith(s, "0x") ?: s;
        size_t n = MIN(strlen(h), digits);

        snprintf(buf, size, "%.*s", (int)n, h);
        for (char *p = buf; *p; p++)
                *p = (char)tolower((unsigned char)*p);
}

int gpus_collect(const InventoryOptions *o, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *a = json_new_array();
        _cleanup_(gpu_config_done) GpuConfig cfg = {};
        _cleanup_(udev_unrefp) struct udev *udev = NULL;
        _cleanup_(udev_enumerate_unrefp) struct udev_enumerate *e = NULL;
        _cleanup_(udev_hwdb_unrefp) struct udev_hwdb *hwdb = NULL;
        struct udev_list_entry *it;
        Gpu *list = NULL;
        size_t n = 0;
        int r = 0;

        if (!a)
                return -ENOMEM;
        if (o->gpu_config_file) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                r = read_full_file(o->gpu_config_file, GPU_CONFIG_MAX, &text, &len);
                if (r >= 0)
                        r = gpu_config_parse(text, len, &cfg);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_debug_errno(r,
                                        "cannot use GPU configuration '%s', using the default classes: %m",
                                        o->gpu_config_file);
        }
        if (!o->gpu_config_file || r < 0) {
                r = gpu_config_default(&cfg);
                if (r < 0)
                        return r;
        }

        udev = udev_new();
        e = udev ? udev_enumerate_new(udev) : NULL;
        if (!e || udev_enumerate_add_match_subsystem(e, "pci") < 0 || udev_enumerate_scan_devices(e) < 0) {
                /* no udev, no PCI: an empty list, as ghw gives */
                *ret = TAKE_PTR(a);
                return 0;
        }
        hwdb = udev_hwdb_new(udev);

        udev_list_entry_foreach(it, udev_enumerate_get_list_entry(e))
        {
                _cleanup_(udev_device_unrefp) struct udev_device *d =
                        udev_device_new_from_syspath(udev, udev_list_entry_get_name(it));
                const char *cls, *ven, *dev, *vname = NULL, *dname = NULL, *modalias;
                char c4[8], v4[8], d4[8];
                _cleanup_(json_object_putp) json_object *j = NULL;
                Gpu *nl;

                if (!d)
                        continue;
                cls = udev_device_get_sysattr_value(d, "class");
                ven = udev_device_get_sysattr_value(d, "vendor");
                dev = udev_device_get_sysattr_value(d, "device");
                if (!cls || !ven || !dev)
                        continue;
                hex_id(cls, 4, c4, sizeof(c4));
                hex_id(ven, 4, v4, sizeof(v4));
                hex_id(dev, 4, d4, sizeof(d4));
                if (!gpu_config_match(&cfg, c4, v4, d4))
                        continue;

                modalias = udev_device_get_sysattr_value(d, "modalias");
                if (hwdb && modalias) {
                        struct udev_list_entry *h;
                        udev_list_entry_foreach(h, udev_hwdb_get_properties_list_entry(hwdb, modalias, 0))
                        {
                                if (streq(udev_list_entry_get_name(h), "ID_VENDOR_FROM_DATABASE"))
                                        vname = udev_list_entry_get_value(h);
                                else if (streq(udev_list_entry_get_name(h), "ID_MODEL_FROM_DATABASE"))
                                        dname = udev_list_entry_get_value(h);
                        }
                }
                if (!vname)
                        vname = udev_device_get_property_value(d, "ID_VENDOR_FROM_DATABASE");
                if (!dname)
                        dname = udev_device_get_property_value(d, "ID_MODEL_FROM_DATABASE");

                j = json_new_object();
                if (!j || json_add_string(j, "address", udev_device_get_sysname(d)) < 0 ||
                    json_add_string_nonempty(j, "device_id", d4) < 0 ||
                    json_add_string(j, "name", dname ?: "unknown") < 0 ||
                    json_add_string(j, "vendor", vname ?: "unknown") < 0 ||
                    json_add_string_nonempty(j, "vendor_id", v4) < 0)
                        goto oom;
                nl = reallocarray(list, n + 1, sizeof(Gpu));
                if (!nl)
                        goto oom;
                list = nl;
                list[n].address = strdup(udev_device_get_sysname(d));
                if (!list[n].address)
                        goto oom;
                list[n++].json = TAKE_PTR(j);
        }
        if (n > 0)
                qsort(list, n, sizeof(Gpu), gpu_cmp);
        r = 0;
        for (size_t k = 0; k < n; k++) {
                free(list[k].address);
                if (json_append(a, list[k].json) < 0)
                        r = -ENOMEM;
                list[k].json = NULL;
        }
        free(list);
        if (r == -ENOMEM)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
oom:
        for (size_t k = 0; k < n; k++) {
                free(list[k].address);
                json_object_put(list[k].json);
        }
        free(list);
        return -ENOMEM;
}
