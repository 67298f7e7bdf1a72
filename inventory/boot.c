/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "boot.h"
#include "cleanup.h"
#include "invutil.h"
#include "jsonutil.h"
#include "mountinfo.h"
#include "strutil.h"

#define SECURE_BOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

char *cmdline_bootif(const char *cmdline)
{
        const char *p = cmdline;

        while (p && *p) {
                size_t n;
                p += strspn(p, " \t\n");
                n = strcspn(p, " \t\n");
                if (n >= 7 && strneq(p, "BOOTIF=", 7))
                        return strndup(p + 7, n - 7);
                p += n;
        }
        return NULL;
}

const char *secure_boot_state_from_var(const unsigned char *data, size_t len)
{
        if (!data)
                return "NotSupported";
        if (len == 5) {
                if (data[4] == 0)
                        return "Disabled";
                if (data[4] == 1)
                        return "Enabled";
        }
        return "Unknown";
}

static const char *secure_boot_state(const InventoryOptions *o)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r;

        r = inv_read_file(o, SECURE_BOOT_VAR, 4096, &data, &len);
        if (r == -ENOENT || r == -ENOTDIR)
                return secure_boot_state_from_var(NULL, 0);
        if (r < 0)
                return "Unknown";
        return secure_boot_state_from_var((const unsigned char *)data, len);
}

int boot_collect(const InventoryOptions *o, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object();
        _cleanup_(mount_table_done) MountTable mounts = {};
        _cleanup_free_ char *cmdline = NULL, *bootif = NULL, *efi = inv_path(o, "/sys/firmware/efi");
        const char *device_type = NULL;
        struct stat st;

        if (!j || !efi)
                return -ENOMEM;
        (void)inv_read_file(o, "/proc/cmdline", 64 * 1024, &cmdline, NULL);
        if (cmdline)
                bootif = cmdline_bootif(cmdline);
        if (mount_table_read(o, &mounts) >= 0) {
                const MountEntry *e = mount_table_find_path(&mounts, "/sysroot");
                if (e)
                        device_type = startswith(e->source, "/dev/loop") ? "ephemeral" : "persistent";
        }

        if (json_add_string_nonempty(j, "command_line", cmdline) < 0 ||
            json_add_string(j, "current_boot_mode",
                            stat(efi, &st) == 0 && S_ISDIR(st.st_mode) ? "uefi" : "bios") < 0 ||
            json_add_string_nonempty(j, "device_type", device_type) < 0 ||
            json_add_string_nonempty(j, "pxe_interface", bootif) < 0 ||
            json_add_string(j, "secure_boot_state", secure_boot_state(o)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}
