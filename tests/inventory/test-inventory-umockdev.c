/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The udev-facing parts of the inventory against recorded device trees:
 * each tests/inventory/umockdev/<case>.umockdev (sysfs attributes + udev
 * database, written by hand after real devices: this machine has no such
 * hardware and no udevd) is loaded into a umockdev testbed, optionally
 * with a mount table (<case>.mountinfo, placed at /proc/1/mountinfo) and
 * extra firmware files, and the module's JSON must equal
 * <case>.expected.json exactly. Runs under umockdev-wrapper.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <umockdev.h>
/* glib has its own */
#undef MIN
#undef MAX

#include "cleanup.h"
#include "fileio.h"
#include "inventory/disks.h"
#include "inventory/gpus.h"
#include "inventory/interfaces.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

static UMockdevTestbed *testbed;
static bool registered;

static void testbed_drop(void)
{
        if (testbed) {
                g_object_unref(testbed);
                testbed = NULL;
        }
}

static char *case_path(const char *name, const char *suffix)
{
        _cleanup_free_ char *rel = strdup_printf("tests/inventory/umockdev/%s%s", name, suffix);

        return rel ? test_src_path(rel) : NULL;
}

static void write_under_root(const char *rel, const char *content)
{
        _cleanup_free_ char *root = umockdev_testbed_get_root_dir(testbed), *path = NULL, *dir = NULL;

        path = strdup_printf("%s%s", root, rel);
        ASSERT_NOT_NULL(path);
        dir = strndup(path, strrchr(path, '/') - path);
        ASSERT_NOT_NULL(dir);
        ASSERT_OK(mkdir_p(dir, 0755));
        ASSERT_OK(write_file_atomic(path, content, strlen(content), 0644));
}

/* Loads the recording, its mount table and its "<case>.files" extras
 * (lines "PATH<TAB>CONTENT", PATH under the testbed root: /sys/... or
 * /proc/...). */
static void testbed_load(const char *name)
{
        _cleanup_free_ char *rec = case_path(name, ".umockdev"), *mi = case_path(name, ".mountinfo"),
                            *files = case_path(name, ".files"), *text = NULL;
        GError *error = NULL;

        if (!getenv("UMOCKDEV_DIR") && !getenv("LD_PRELOAD"))
                test_skip("not running under umockdev-wrapper");
        testbed_drop();
        if (!registered) {
                /* a failing case longjmps out: remove its testbed at exit */
                atexit(testbed_drop);
                registered = true;
        }
        testbed = umockdev_testbed_new();
        ASSERT_NOT_NULL(testbed);
        if (!umockdev_testbed_add_from_file(testbed, rec, &error))
                test_fail(__FILE__, __LINE__, "cannot load '%s': %s", rec, error ? error->message : "?");
        /* an empty mount table unless the case brings one: the tests must
         * not see this machine's mounts */
        if (read_full_file(mi, 1 << 20, &text, NULL) < 0)
                text = strdup("");
        ASSERT_NOT_NULL(text);
        write_under_root("/proc/1/mountinfo", text);
        write_under_root("/proc/self/mountinfo", text);
        free(text);
        text = NULL;
        if (read_full_file(files, 1 << 20, &text, NULL) >= 0) {
                _cleanup_strv_free_ char **lines = NULL;
                ASSERT_OK(strv_split(text, "\n", &lines));
                STRV_FOREACH (l, lines) {
                        char *tab = strchr(*l, '\t');
                        _cleanup_free_ char *content = NULL;
                        ASSERT_NOT_NULL(tab);
                        *tab = 0;
                        content = strdup_printf("%s\n", tab + 1);
                        write_under_root(*l, content);
                }
        }
}

static void assert_json_equal(json_object *got, const char *name, const char *suffix)
{
        _cleanup_free_ char *path = case_path(name, suffix), *err = NULL, *g = NULL, *w = NULL;
        _cleanup_(json_object_putp) json_object *want = NULL;

        if (json_parse_file(path, 1 << 20, &want, &err) < 0 && !getenv("TEST_UPDATE_EXPECTED"))
                test_fail(__FILE__, __LINE__, "cannot parse '%s': %s", path, strna(err));
        g = json_to_string(got, JSON_FORMAT_PRETTY);
        w = json_to_string(want, JSON_FORMAT_PRETTY);
        if (getenv("TEST_UPDATE_EXPECTED")) {
                /* regenerating golden files: review the diff before committing */
                _cleanup_free_ char *text = strdup_printf("%s\n", g);
                ASSERT_OK(write_file_atomic(path, text, strlen(text), 0644));
                return;
        }
        /* exact: same keys in the same order, same values */
        if (!streq(g, w))
                test_fail(__FILE__, __LINE__, "%s%s differs:\n--- got\n%s\n--- want\n%s", name, suffix, g,
                          w);
}

static void check_disks(const char *name)
{
        _cleanup_(json_object_putp) json_object *disks = NULL;
        InventoryOptions o = {};

        testbed_load(name);
        ASSERT_OK(disks_collect(&o, &disks));
        assert_json_equal(disks, name, ".expected.json");
        testbed_drop();
}

TEST(nvme_ssd)
{
        check_disks("nvme-ssd");
}

TEST(sata_hdd)
{
        check_disks("sata-hdd");
}

TEST(usb_stick)
{
        check_disks("usb-stick");
}

TEST(cdrom_live_iso)
{
        check_disks("cdrom-live-iso");
}

TEST(multipath)
{
        check_disks("multipath");
}

TEST(iscsi)
{
        check_disks("iscsi");
}

TEST(lvm)
{
        check_disks("lvm");
}

TEST(mdraid)
{
        check_disks("mdraid");
}

TEST(too_small_and_skipped)
{
        check_disks("too-small");
}

TEST(virtio)
{
        check_disks("virtio");
}

TEST(appliance)
{
        check_disks("appliance");
}

TEST(gpu)
{
        _cleanup_(json_object_putp) json_object *gpus = NULL, *filtered = NULL;
        _cleanup_free_ char *cfg = case_path("gpu", ".config.yaml");
        InventoryOptions o = {};

        testbed_load("gpu");
        ASSERT_OK(gpus_collect(&o, &gpus));
        assert_json_equal(gpus, "gpu", ".expected.json");
        o.gpu_config_file = cfg;
        ASSERT_OK(gpus_collect(&o, &filtered));
        assert_json_equal(filtered, "gpu", ".filtered.expected.json");
        testbed_drop();
}

TEST(nic)
{
        _cleanup_(json_object_putp) json_object *j = NULL;
        InterfaceInfo i = { .index = 2,
                            .flags = 0x11043 /* up|broadcast|running|multicast|lower_up */,
                            .mtu = 9000 };
        InventoryOptions o = {};

        testbed_load("nic");
        snprintf(i.name, sizeof(i.name), "enp1s0f0");
        snprintf(i.mac, sizeof(i.mac), "b4:96:91:a1:b2:c3");
        ASSERT_OK(strv_extend(&i.ipv4, "198.51.100.10/24"));
        ASSERT_OK(strv_extend(&i.ipv6, "2001:db8::10/64"));
        ASSERT_OK(interface_fill_sysfs(&o, &i));
        ASSERT_OK(interface_to_json(&i, &j));
        assert_json_equal(j, "nic", ".expected.json");
        interface_info_done(&i);
        testbed_drop();
}

DEFINE_TEST_MAIN
