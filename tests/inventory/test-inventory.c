/* SPDX-License-Identifier: Apache-2.0 */
/* The inventory's parsers and decisions, from fixtures and synthetic input. */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "fileio.h"
#include "inventory/bmc.h"
#include "inventory/boot.h"
#include "inventory/cpu.h"
#include "inventory/dmi.h"
#include "inventory/gpus.h"
#include "inventory/interfaces.h"
#include "inventory/inventory.h"
#include "inventory/memory.h"
#include "inventory/mountinfo.h"
#include "inventory/netlink.h"
#include "inventory/system_vendor.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"
#include "uuid.h"

TEST(cpuinfo_x86)
{
        static const char text[] = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n"
                                   "cpu MHz\t\t: 2595.124\nflags\t\t: fpu vme de pse\n\n"
                                   "processor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme de pse\n";
        _cleanup_(cpu_info_done) CpuInfo c = {};

        ASSERT_OK(cpuinfo_parse(text, strlen(text), "x86_64", &c));
        ASSERT_STREQ(c.model_name, "AMD EPYC");
        ASSERT_EQ(c.processors, 2);
        ASSERT_EQ(strv_length(c.flags), 4);
        ASSERT_STREQ(c.flags[3], "pse");
        ASSERT_TRUE(c.static_mhz == 0);
}

TEST(cpuinfo_arm_s390_ppc)
{
        static const char arm[] = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes\n"
                                  "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
                                  "CPU part\t: 0xd0c\nCPU revision\t: 1\n";
        static const char s390[] = "vendor_id       : IBM/S390\n# processors    : 4\n"
                                   "features\t: esan3 zarch stfle msa\n"
                                   "processor 0: version = FF,  identification = 0D9AC8,  machine = 3931\n"
                                   "processor 1: version = FF,  identification = 0D9AC8,  machine = 3931\n"
                                   "cpu number      : 0\ncpu MHz dynamic : 5200\ncpu MHz static  : 5200\n";
        static const char ppc[] = "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\n"
                                  "clock\t\t: 2200.000000MHz\n";
        CpuInfo c = {};

        ASSERT_OK(cpuinfo_parse(arm, strlen(arm), "aarch64", &c));
        ASSERT_STREQ(c.model_name, "Neoverse-N1");
        ASSERT_STREQ(c.flags[1], "asimd");
        cpu_info_done(&c);

        ASSERT_OK(cpuinfo_parse(s390, strlen(s390), "s390x", &c));
        ASSERT_STREQ(c.model_name, "3931");
        ASSERT_EQ(c.processors, 2);
        ASSERT_TRUE(c.static_mhz == 5200);
        ASSERT_STREQ(c.flags[0], "esan3");
        cpu_info_done(&c);

        ASSERT_OK(cpuinfo_parse(ppc, strlen(ppc), "ppc64le", &c));
        ASSERT_STREQ(c.model_name, "POWER9 (architected), altivec supported");
        ASSERT_NULL(c.flags);
        cpu_info_done(&c);
}

TEST(cpu_list)
{
        unsigned n = 0;

        ASSERT_OK(cpu_list_count("0-3,5\n", &n));
        ASSERT_EQ(n, 5);
        ASSERT_OK(cpu_list_count("0", &n));
        ASSERT_EQ(n, 1);
        ASSERT_ERROR(cpu_list_count("3-1", &n), EINVAL);
        ASSERT_ERROR(cpu_list_count("a", &n), EINVAL);
}

TEST(meminfo)
{
        static const char text[] = "MemFree:        23598236 kB\nMemTotal:       24683620 kB\n";
        uint64_t v = 0;

        ASSERT_OK(meminfo_parse_total(text, strlen(text), &v));
        ASSERT_EQ(v, 24683620ull * 1024);
        ASSERT_OK(meminfo_parse_total("MemTotal: 3 MB\n", 15, &v));
        ASSERT_EQ(v, 3ull << 20);
        ASSERT_ERROR(meminfo_parse_total("MemFree: 1 kB\n", 14, &v), ENOENT);
        ASSERT_ERROR(meminfo_parse_total("MemTotal: 1 PB\n", 15, &v), EBADMSG);
}

/* A type 17 structure (SMBIOS 3.x layout, 0x28 bytes) with the given size
 * word and extended size, then its string-set. */
static size_t put_type17(uint8_t *p, uint16_t handle, uint16_t size, uint32_t ext)
{
        memset(p, 0, 0x28);
        p[0] = 17;
        p[1] = 0x28;
        p[2] = handle & 0xff;
        p[3] = handle >> 8;
        p[0x0C] = size & 0xff;
        p[0x0D] = size >> 8;
        memcpy(p + 0x1C, &ext, 4);
        memcpy(p + 0x28, "DIMM A\0\0", 8);
        return 0x28 + 8;
}

TEST(smbios_memory)
{
        uint8_t t[512] = {};
        size_t off = 0;

        off += put_type17(t + off, 1, 16384, 0); /* 16384 MB */
        off += put_type17(t + off, 2, 0, 0); /* No Module Installed */
        off += put_type17(t + off, 3, 0xFFFF, 0); /* Unknown */
        off += put_type17(t + off, 4, 0x7FFF, 65536); /* extended: 64 GB */
        off += put_type17(t + off, 5, 0x8000 | 512, 0); /* 512 KB */
        t[off] = 127;
        t[off + 1] = 4;
        off += 6;
        ASSERT_EQ(smbios_memory_bytes(t, off), (16384ull << 20) + (65536ull << 20) + (512ull << 10));
        /* truncated tables stop cleanly */
        ASSERT_EQ(smbios_memory_bytes(t, 0x28 + 3), 0);
        ASSERT_EQ(smbios_memory_bytes(t, 0x28 + 8), 16384ull << 20);
}

TEST(smbios_pci)
{
        /* type 41: "Onboard LAN", enabled Ethernet (0x85), instance 1, 0000:19:00.0 */
        static const uint8_t t[] = { 41, 11, 0x10, 0, 1, 0x85, 1, 0, 0, 0x19, 0x00, 'L', 'A', 'N', 0, 0,
                                     /* type 9: slot 3 at 0000:3b:00.x */
                                     9, 17, 0x11, 0, 1, 0xB6, 0x0D, 0x03, 0x04, 3, 0, 0x0C, 0x01, 0, 0, 0x3b,
                                     0x00, 'S', 'L', 'O', 'T', '3', 0, 0, 127, 4, 0x12, 0, 0, 0 };
        SmbiosPciRef ref;

        ASSERT_EQ(smbios_find_pci(t, sizeof(t), 0, 0x19, 0, &ref), 1);
        ASSERT_EQ(ref.kind, 41);
        ASSERT_EQ(ref.number, 1);
        ASSERT_EQ(ref.device_type, 5);
        ASSERT_TRUE(ref.enabled);
        ASSERT_EQ(smbios_find_pci(t, sizeof(t), 0, 0x3b, 1, &ref), 1);
        ASSERT_EQ(ref.kind, 9);
        ASSERT_EQ(ref.number, 3);
        ASSERT_EQ(smbios_find_pci(t, sizeof(t), 0, 0x5e, 0, &ref), 0);
}

static char *dmi_fixture_root(void)
{
        /* a copy of the Go agent's recorded /sys/class/dmi/id (a laptop) */
        _cleanup_free_ char *src = test_src_path("tests/inventory/fixtures/dmi-laptop");
        char *root = strdup_printf("%s/dmi-root", test_tmpdir());
        _cleanup_free_ char *dst = strdup_printf("%s/sys/class", root);

        ASSERT_OK(mkdir_p(dst, 0755));
        {
                char *argv[] = { (char *)"cp", (char *)"-rT", src, NULL, NULL };
                _cleanup_free_ char *id = strdup_printf("%s/dmi/id", dst);
                _cleanup_free_ char *dmi = strdup_printf("%s/dmi", dst);
                ASSERT_OK(mkdir_p(dmi, 0755));
                argv[3] = id;
                ASSERT_EQ(test_run(argv, NULL), 0);
        }
        return root;
}

static void set_dmi(const char *root, const char *name, const char *value)
{
        _cleanup_free_ char *p = strdup_printf("%s/sys/class/dmi/id/%s", root, name);

        ASSERT_OK(write_file_atomic(p, value, strlen(value), 0644));
}

TEST(system_vendor_dmi)
{
        _cleanup_free_ char *root = dmi_fixture_root(), *text = NULL;
        _cleanup_(json_object_putp) json_object *j = NULL, *k = NULL;
        InventoryOptions o = { .root = root };

        ASSERT_OK(system_vendor_collect(&o, VIRT_DETECT_NO_CPUID, &j));
        text = json_to_string(j, 0);
        ASSERT_STREQ(text, "{\"manufacturer\":\"LENOVO\",\"product_name\":\"20NYS7K91V\","
                           "\"serial_number\":\"PC1E81XA\"}");
        free(text);

        /* oVirt is named by its family; a QEMU vendor string is a VM */
        set_dmi(root, "product_family", "oVirt\n");
        set_dmi(root, "sys_vendor", "QEMU\n");
        set_dmi(root, "chassis_asset_tag", "OracleCloud.com\n");
        ASSERT_OK(system_vendor_collect(&o, VIRT_DETECT_NO_CPUID, &k));
        text = json_to_string(k, 0);
        ASSERT_STREQ(text, "{\"manufacturer\":\"OracleCloud.com\",\"product_name\":\"oVirt\","
                           "\"serial_number\":\"PC1E81XA\",\"virtual\":true}");
}

TEST(system_vendor_missing_dmi_and_s390)
{
        _cleanup_free_ char *root = strdup_printf("%s/empty-root", test_tmpdir()), *text = NULL;
        _cleanup_(json_object_putp) json_object *j = NULL;
        InventoryOptions o = { .root = root };
        char *manufacturer = strdup("unknown"), *product = strdup("unknown");
        bool virt = true;

        ASSERT_OK(mkdir_p(root, 0755));
        ASSERT_OK(system_vendor_collect(&o, VIRT_DETECT_NO_CPUID, &j));
        text = json_to_string(j, 0);
        ASSERT_STREQ(text, "{\"manufacturer\":\"unknown\",\"product_name\":\"unknown\","
                           "\"serial_number\":\"unknown\"}");

        system_vendor_s390x("vendor_id       : IBM/S390\n", "VM00 Control Program: z/VM    7.3.0\n",
                            &manufacturer, &product, &virt);
        ASSERT_STREQ(manufacturer, "IBM/S390");
        ASSERT_STREQ(product, "z/VM    7.3.0");
        ASSERT_FALSE(virt);
        system_vendor_s390x("vendor_id       : IBM/S390\n", "VM00 Control Program: KVM/Linux\n",
                            &manufacturer, &product, &virt);
        ASSERT_STREQ(product, "KVM/Linux");
        ASSERT_TRUE(virt);
        free(manufacturer);
        free(product);
}

TEST(host_id)
{
        _cleanup_free_ char *root = dmi_fixture_root();
        InventoryOptions o = { .root = root };
        char id[UUID_STRING_MAX], want[UUID_STRING_MAX];

        /* the baseboard serial */
        ASSERT_OK(inventory_host_id(&o, id));
        ASSERT_OK(uuid_from_md5("L1HF02A02SD", 11, want));
        ASSERT_STREQ(id, want);
        /* a placeholder serial: the product UUID, lower-cased */
        set_dmi(root, "board_serial", "Default String\n");
        set_dmi(root, "product_uuid", "0B825DCC-3064-11B2-A85C-968EC80B7FCF\n");
        ASSERT_OK(inventory_host_id(&o, id));
        ASSERT_STREQ(id, "0b825dcc-3064-11b2-a85c-968ec80b7fcf");
        /* a placeholder UUID too: the lowest MAC of this host's links */
        set_dmi(root, "product_uuid", "03000200-0400-0500-0006-000700080009\n");
        ASSERT_OK(inventory_host_id(&o, id));
        ASSERT_TRUE(uuid_is_valid(id));
        ASSERT_TRUE(!streq(id, "0b825dcc-3064-11b2-a85c-968ec80b7fcf"));
}

/* A BMC answering like the ipmitool samples: LAN on channel 3 only. */
static int fake_bmc(void *userdata, uint8_t netfn, uint8_t cmd, const uint8_t *data, size_t len,
                    uint8_t *resp, size_t resp_max, size_t *resp_len)
{
        unsigned ch = data[0] & 0x0F, param = data[1], set = data[2];
        bool v6 = userdata != NULL;

        ASSERT_EQ(netfn, 0x0C);
        ASSERT_EQ(cmd, 0x02);
        ASSERT_EQ(len, 4);
        ASSERT_TRUE(resp_max >= 24);
        memset(resp, 0, resp_max);
        *resp_len = 1;
        resp[0] = 0xCC; /* invalid data field: not a LAN channel */
        if (ch != 3)
                return 0;
        resp[0] = 0;
        resp[1] = 0x11;
        if (param == 3) {
                static const uint8_t ip[] = { 10, 16, 218, 144 };
                memcpy(resp + 2, ip, 4);
                *resp_len = 6;
        } else if (param == 0x33) {
                resp[2] = v6 ? 2 : 0; /* both / ipv4 only */
                *resp_len = 3;
        } else if (param == 0x35) {
                resp[2] = 1;
                resp[3] = 2;
                *resp_len = 5;
        } else if (param == 0x3B || param == 0x38) {
                /* dynamic 0: static ::/0 (not counted); dynamic 1: SLAAC 2001:db8::5 active */
                resp[2] = (uint8_t)set;
                if (param == 0x3B && set == 1) {
                        resp[3] = 1;
                        inet_pton(AF_INET6, "2001:db8::5", resp + 4);
                        resp[20] = 64;
                        resp[21] = 0;
                }
                *resp_len = 22;
        }
        return 0;
}

TEST(bmc)
{
        char v4[64], v6[64];
        InventoryOptions o = { .root = test_tmpdir() };

        bmc_v4_address(fake_bmc, NULL, v4, sizeof(v4));
        ASSERT_STREQ(v4, "10.16.218.144");
        bmc_v6_address(fake_bmc, NULL, v6, sizeof(v6));
        ASSERT_STREQ(v6, "::/0"); /* addressing enables: ipv4 only */
        bmc_v6_address(fake_bmc, (void *)1, v6, sizeof(v6));
        ASSERT_STREQ(v6, "2001:db8::5");
        /* no IPMI device: the defaults at once */
        bmc_addresses(&o, v4, sizeof(v4), v6, sizeof(v6));
        ASSERT_STREQ(v4, "0.0.0.0");
        ASSERT_STREQ(v6, "::/0");
}

TEST(boot_parsers)
{
        _cleanup_free_ char *a = cmdline_bootif("root=live:x BOOTIF=01-52-54-00-aa-bb-cc ip=dhcp\n"),
                            *b = NULL;
        static const unsigned char on[] = { 6, 0, 0, 0, 1 }, off[] = { 6, 0, 0, 0, 0 }, odd[] = { 6, 0, 0 };

        ASSERT_STREQ(a, "01-52-54-00-aa-bb-cc");
        b = cmdline_bootif("quiet");
        ASSERT_NULL(b);
        ASSERT_STREQ(secure_boot_state_from_var(NULL, 0), "NotSupported");
        ASSERT_STREQ(secure_boot_state_from_var(on, 5), "Enabled");
        ASSERT_STREQ(secure_boot_state_from_var(off, 5), "Disabled");
        ASSERT_STREQ(secure_boot_state_from_var(odd, 3), "Unknown");
}

TEST(mountinfo)
{
        static const char text[] = "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
                                   "70 22 11:0 / /run/media/iso ro - iso9660 /dev/sr0 ro\n"
                                   "71 22 7:0 / /sysroot ro shared:5 master:2 - squashfs /dev/loop0 ro\n"
                                   "72 22 8:1 / /mnt/with\\040space rw - ext4 /dev/sda1 rw\n"
                                   "garbage line\n";
        _cleanup_(mount_table_done) MountTable t = {};

        ASSERT_OK(mountinfo_parse(text, strlen(text), &t));
        ASSERT_EQ(t.n, 4);
        ASSERT_STREQ(mount_table_find_dev(&t, 11, 0)->mount_point, "/run/media/iso");
        ASSERT_STREQ(mount_table_find_path(&t, "/sysroot")->source, "/dev/loop0");
        ASSERT_STREQ(mount_table_find_dev(&t, 8, 1)->mount_point, "/mnt/with space");
        ASSERT_NULL(mount_table_find_dev(&t, 8, 2));
}

TEST(gpu_config)
{
        static const char yaml[] =
                "---\n# comment\nclasses:\n  - '0300'\n  - \"0380\"\nvendors: ['0302 10de']\n"
                "models:\n  - 1200 1DA3 1020 # Gaudi2\nother: x\n";
        _cleanup_(gpu_config_done) GpuConfig c = {}, d = {};

        ASSERT_OK(gpu_config_parse(yaml, strlen(yaml), &c));
        ASSERT_EQ(strv_length(c.classes), 2);
        ASSERT_STREQ(c.vendors[0], "030210de");
        ASSERT_STREQ(c.models[0], "12001da31020");
        ASSERT_TRUE(gpu_config_match(&c, "0300", "8086", "3ea0"));
        ASSERT_TRUE(gpu_config_match(&c, "0302", "10de", "1db6"));
        ASSERT_FALSE(gpu_config_match(&c, "0302", "1002", "1234"));
        ASSERT_TRUE(gpu_config_match(&c, "1200", "1da3", "1020"));
        ASSERT_FALSE(gpu_config_match(&c, "1200", "1da3", "1000"));
        ASSERT_ERROR(gpu_config_parse("classes: 0300\n", 14, &d), EBADMSG);
        ASSERT_OK(gpu_config_default(&d));
        ASSERT_TRUE(gpu_config_match(&d, "1200", "ffff", "0000"));
        ASSERT_FALSE(gpu_config_match(&d, "0403", "8086", "0000"));
}

TEST(ip_format)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "::", "::" },
                { "::1", "::1" },
                { "2001:db8::1", "2001:db8::1" },
                { "1:0:0:1::", "1:0:0:1::" },
                { "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1" },
                { "::ffff:192.0.2.1", "192.0.2.1" },
                { "::102:304", "::102:304" },
                { "fe80::fc:ff:fe00:1", "fe80::fc:ff:fe00:1" },
        };
        uint8_t a[16];
        char buf[64];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ASSERT_EQ(inet_pton(AF_INET6, cases[i].in, a), 1);
                ASSERT_STREQ(nl_format_ip(AF_INET6, a, buf, sizeof(buf)), cases[i].out);
        }
        ASSERT_STREQ(nl_format_mac((const uint8_t *)"\x02\xfc\x00\x00\x00\x01", 6, buf, sizeof(buf)),
                     "02:fc:00:00:00:01");
}

TEST(interface_flags)
{
        _cleanup_strv_free_ char **none = NULL, **lo = NULL;

        ASSERT_OK(interface_flag_names(0, &none));
        ASSERT_NOT_NULL(none);
        ASSERT_EQ(strv_length(none), 0);
        ASSERT_OK(
                interface_flag_names(IFF_UP | IFF_LOOPBACK | IFF_RUNNING | 0x10000 /* IFF_LOWER_UP */, &lo));
        ASSERT_EQ(strv_length(lo), 3);
        ASSERT_STREQ(lo[2], "running");
}

TEST(interfaces_match_netlink)
{
        InterfaceInfo *l = NULL;
        size_t n = 0;
        bool have_lo = false;

        ASSERT_OK(interfaces_list(&(InventoryOptions){}, &l, &n));
        for (size_t i = 0; i < n; i++)
                if (streq(l[i].name, "lo")) {
                        have_lo = true;
                        ASSERT_STREQ(l[i].type, "device");
                        ASSERT_STREQ(l[i].mac, "");
                        ASSERT_STREQ(l[i].ipv4[0], "127.0.0.1/8");
                }
        ASSERT_TRUE(have_lo);
        interfaces_free(l, n);
}

DEFINE_TEST_MAIN
