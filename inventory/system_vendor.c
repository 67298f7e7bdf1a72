/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <sys/utsname.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <json-c/json.h>

#include "cleanup.h"
#include "dmi.h"
#include "invutil.h"
#include "jsonutil.h"
#include "strutil.h"
#include "system_vendor.h"

/* Prefixes of DMI strings that name a hypervisor (systemd's dmi_vendor_table). */
static const char *const vm_dmi_vendors[] = {
        "KVM",
        "OpenStack",
        "KubeVirt",
        "Amazon EC2",
        "QEMU",
        "VMware",
        "VMW",
        "innotek GmbH",
        "VirtualBox",
        "Xen",
        "Bochs",
        "Parallels",
        "BHYVE",
        "Hyper-V",
        "Apple Virtualization",
        "Google Compute Engine",
};

static bool dmi_says_vm(const InventoryOptions *o)
{
        static const char *const items[] = { "product_name", "sys_vendor", "board_vendor", "bios_vendor",
                                             "product_version" };

        for (size_t i = 0; i < ELEMENTSOF(items); i++) {
                _cleanup_free_ char *v = dmi_id_item(o, items[i]);
                if (!v)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(vm_dmi_vendors); k++)
                        if (startswith(v, vm_dmi_vendors[k]))
                                return true;
        }
        return false;
}

static bool xen_domu(const InventoryOptions *o)
{
        _cleanup_free_ char *type = NULL, *caps = NULL;

        if (inv_read_line(o, "/sys/hypervisor/type", &type) >= 0 && streq(type, "xen"))
                goto xen;
        if (!inv_exists(o, "/proc/xen"))
                return false;
xen:
        /* dom0 is the host, not a guest */
        if (inv_read_file(o, "/proc/xen/capabilities", 4096, &caps, NULL) >= 0 && strstr(caps, "control_d"))
                return false;
        return true;
}

static bool cpuid_hypervisor(void)
{
#if defined(__x86_64__) || defined(__i386__)
        unsigned eax, ebx, ecx, edx;

        if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 1 && (ecx & 0x80000000u))
                return true;
#endif
        return false;
}

bool virt_detect_vm(const InventoryOptions *o, VirtDetectFlags flags)
{
        _cleanup_free_ char *compat = NULL, *sysinfo = NULL;
        size_t len = 0;

        if (!(flags & VIRT_DETECT_NO_CPUID) && cpuid_hypervisor())
                return true;
        if (xen_domu(o))
                return true;
#if !defined(__x86_64__) && !defined(__i386__)
        if (dmi_says_vm(o))
                return true;
#else
        /* On x86 the CPUID bit is authoritative (bare-metal cloud hosts
         * keep hypervisor vendor strings in DMI); tests without CPUID
         * judge from DMI like the other architectures. */
        if ((flags & VIRT_DETECT_NO_CPUID) && dmi_says_vm(o))
                return true;
#endif
        if (inv_exists(o, "/proc/device-tree/hypervisor/compatible"))
                return true;
        if (inv_read_file(o, "/proc/device-tree/compatible", 4096, &compat, &len) >= 0 &&
            memmem(compat, len, "linux,dummy-virt", 16))
                return true;
        if (inv_read_file(o, "/proc/sysinfo", 1u << 20, &sysinfo, NULL) >= 0 &&
            strstr(sysinfo, "Control Program:"))
                return true;
        return false;
}

void system_vendor_s390x(const char *cpuinfo, const char *sysinfo, char **manufacturer, char **product_name,
                         bool *virtual_)
{
        /* The Go agent greps the first "vendor_id" line, splits it on ':'
         * and wants every other part to read "IBM/S390"; then it greps all
         * lines matching "VM.*Control Program" and, splitting their text
         * on ':', takes every part not starting with "Control Program" as
         * the product name (so the last one wins) -- replayed here as is. */
        _cleanup_free_ char *line = NULL, *matches = NULL;
        _cleanup_strv_free_ char **parts = NULL;
        const char *v;

        if (!cpuinfo || !(v = strstr(cpuinfo, "vendor_id")))
                return;
        while (v > cpuinfo && v[-1] != '\n')
                v--;
        line = strndup(v, strcspn(v, "\n"));
        if (!line || strv_split(line, ":", &parts) < 0)
                return;
        STRV_FOREACH (p, parts) {
                if (startswith(*p, "vendor_id"))
                        continue;
                if (!streq(strstrip(*p), "IBM/S390"))
                        return;
                if (free_and_strdup(manufacturer, "IBM/S390") < 0)
                        return;
        }
        if (free_and_strdup(product_name, "LPAR") < 0)
                return;
        *virtual_ = false;
        if (!sysinfo)
                return;

        strv_free(parts);
        parts = NULL;
        for (const char *l = sysinfo; l && *l;) {
                size_t n = strcspn(l, "\n");
                const char *vm = memmem(l, n, "VM", 2);
                if (vm && memmem(vm, n - (size_t)(vm - l), "Control Program", 15)) {
                        _cleanup_free_ char *joined = NULL;
                        joined =
                                strdup_printf("%s%s%.*s", strempty(matches), matches ? "\n" : "", (int)n, l);
                        if (!joined)
                                return;
                        free(matches);
                        matches = TAKE_PTR(joined);
                }
                l += n;
                if (*l)
                        l++;
        }
        if (!matches || strv_split(matches, ":", &parts) < 0)
                return;
        STRV_FOREACH (p, parts) {
                if (startswith(*p, "Control Program"))
                        continue;
                if (free_and_strdup(product_name, strstrip(*p)) < 0)
                        return;
                if (streq(*product_name, "KVM/Linux"))
                        *virtual_ = true;
        }
}

int system_vendor_collect(const InventoryOptions *o, VirtDetectFlags flags, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object();
        _cleanup_free_ char *vendor = dmi_id_item(o, "sys_vendor"), *name = dmi_id_item(o, "product_name"),
                            *serial = dmi_id_item(o, "product_serial"),
                            *family = dmi_id_item(o, "product_family"),
                            *asset = dmi_id_item(o, "chassis_asset_tag");
        bool virtual_ = false;

        if (!j || !vendor || !name || !serial || !family || !asset)
                return -ENOMEM;

        if (streq(family, "oVirt") || streq(family, "RHV"))
                if (free_and_strdup(&name, "oVirt") < 0)
                        return -ENOMEM;
        if (streq(asset, "OracleCloud.com"))
                if (free_and_strdup(&vendor, asset) < 0)
                        return -ENOMEM;
        if (streq(vendor, "unknown")) {
                _cleanup_free_ char *cpuinfo = NULL, *sysinfo = NULL;
                (void)inv_read_file(o, "/proc/cpuinfo", 4u << 20, &cpuinfo, NULL);
                (void)inv_read_file(o, "/proc/sysinfo", 1u << 20, &sysinfo, NULL);
                system_vendor_s390x(cpuinfo, sysinfo, &vendor, &name, &virtual_);
        }
        /* systemd-detect-virt only ever turns virtual on */
        if (virt_detect_vm(o, flags))
                virtual_ = true;

        if (json_add_string_nonempty(j, "manufacturer", vendor) < 0 ||
            json_add_string_nonempty(j, "product_name", name) < 0 ||
            json_add_string_nonempty(j, "serial_number", serial) < 0 ||
            json_add_bool_true(j, "virtual", virtual_) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}
