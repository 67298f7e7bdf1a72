/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The installer's decisions as tables: the steps of each role, the texts
 * stages report, the coreos-installer percentage rule, the retry policy,
 * the worker's wait, the reboot, the efibootmgr command lines, the cleanup
 * planners for given device trees, the OS image plans, and the command line.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "cleanup.h"
#include "ignition/ignition.h"
#include "installer/config.h"
#include "installer/devclean.h"
#include "installer/osimage.h"
#include "assisted/assisted.h"
#include "installer/plan.h"
#include "jsonutil.h"
#include "shell.h"
#include "strutil.h"
#include "tests.h"

static char *plan_text(const InstallPlanInput *in)
{
        InstallStep steps[_STEP_MAX];
        size_t n = install_plan(in, steps);
        char **words = NULL;
        char *s;

        for (size_t i = 0; i < n; i++)
                ASSERT_OK(strv_extend(&words, install_step_to_string(steps[i])));
        s = strv_join(words, " ");
        strv_free(words);
        return s;
}

TEST(plan_per_role)
{
        static const struct {
                InstallPlanInput in;
                const char *steps;
        } cases[] = {
                { { .role = "master", .control_plane_count = 3, .upload_logs = true },
                  "format-disks report-starting resolve-device cleanup-device mkdir-install-dir "
                  "report-installing "
                  "fetch-ignition write-image set-boot-order copy-registry upload-logs finalize" },
                { { .role = "worker", .upload_logs = true },
                  "format-disks report-starting resolve-device cleanup-device mkdir-install-dir "
                  "report-installing "
                  "fetch-ignition write-image wait-control-plane set-boot-order copy-registry upload-logs "
                  "finalize" },
                { { .role = "arbiter", .control_plane_count = 2, .upload_logs = true },
                  "format-disks report-starting resolve-device cleanup-device mkdir-install-dir "
                  "report-installing "
                  "fetch-ignition write-image set-boot-order copy-registry upload-logs finalize" },
                /* skip-MCO-reboot comes after the worker's wait, before the boot order */
                { { .role = "worker", .enable_skip_mco_reboot = true, .upload_logs = true },
                  "format-disks report-starting resolve-device cleanup-device mkdir-install-dir "
                  "report-installing "
                  "fetch-ignition write-image wait-control-plane skip-mco-reboot set-boot-order "
                  "copy-registry "
                  "upload-logs finalize" },
                /* the existing root: no format, cleanup, skip-MCO, boot order, registry */
                { { .role = "master",
                    .coreos_image = true,
                    .enable_skip_mco_reboot = true,
                    .upload_logs = true },
                  "report-starting resolve-device mkdir-install-dir report-installing fetch-ignition "
                  "write-image "
                  "upload-logs finalize" },
                /* dry run: nothing that changes the host but the write */
                { { .role = "master", .dry_run = true, .enable_skip_mco_reboot = true, .upload_logs = true },
                  "format-disks report-starting resolve-device mkdir-install-dir report-installing "
                  "fetch-ignition "
                  "write-image upload-logs finalize" },
                { { .role = "master", .skip_cleanup = true },
                  "format-disks report-starting resolve-device mkdir-install-dir report-installing "
                  "fetch-ignition "
                  "write-image set-boot-order copy-registry finalize" },
                /* the flows of the next issue plug in here */
                { { .role = "bootstrap", .control_plane_count = 3, .upload_logs = true },
                  "format-disks report-starting resolve-device cleanup-device mkdir-install-dir "
                  "start-bootstrap "
                  "report-installing fetch-ignition write-image set-boot-order copy-registry "
                  "bootstrap-waits "
                  "upload-logs finalize" },
                { { .role = "bootstrap", .control_plane_count = 1, .upload_logs = true },
                  "format-disks report-starting resolve-device cleanup-device mkdir-install-dir "
                  "report-installing "
                  "single-node-ignition write-image set-boot-order copy-registry upload-logs finalize" },
                { { .role = "nonsense" }, "" },
                { { .role = NULL }, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = plan_text(&cases[i].in);
                ASSERT_STREQ(got, cases[i].steps);
        }
}

TEST(flows_and_fatality)
{
        ASSERT_EQ(install_flow_for("master", 3), INSTALL_FLOW_NODE);
        ASSERT_EQ(install_flow_for("worker", 0), INSTALL_FLOW_NODE);
        ASSERT_EQ(install_flow_for("arbiter", 2), INSTALL_FLOW_NODE);
        ASSERT_EQ(install_flow_for("bootstrap", 3), INSTALL_FLOW_BOOTSTRAP);
        ASSERT_EQ(install_flow_for("bootstrap", 1), INSTALL_FLOW_SINGLE_NODE);
        ASSERT_EQ(install_flow_for("master", 1), INSTALL_FLOW_SINGLE_NODE);
        ASSERT_EQ(install_flow_for("auto-assign", 3), _INSTALL_FLOW_INVALID);

        /* notes §9: fatal vs best effort */
        ASSERT_TRUE(install_step_is_fatal(STEP_MKDIR_INSTALL_DIR));
        ASSERT_TRUE(install_step_is_fatal(STEP_FETCH_IGNITION));
        ASSERT_TRUE(install_step_is_fatal(STEP_WRITE_IMAGE));
        ASSERT_TRUE(install_step_is_fatal(STEP_COPY_REGISTRY));
        ASSERT_TRUE(install_step_is_fatal(STEP_FINALIZE));
        ASSERT_FALSE(install_step_is_fatal(STEP_FORMAT_DISKS));
        ASSERT_FALSE(install_step_is_fatal(STEP_CLEANUP_DEVICE));
        ASSERT_FALSE(install_step_is_fatal(STEP_SKIP_MCO_REBOOT));
        ASSERT_FALSE(install_step_is_fatal(STEP_SET_BOOT_ORDER));
        ASSERT_FALSE(install_step_is_fatal(STEP_UPLOAD_LOGS));
        ASSERT_FALSE(install_step_is_fatal(STEP_REPORT_STARTING));
}

TEST(reported_roles_and_texts)
{
        _cleanup_free_ char *w = install_cleanup_warning("/dev/sda");

        ASSERT_STREQ(install_reported_role("bootstrap", 3, false), "bootstrap");
        ASSERT_STREQ(install_reported_role("bootstrap", 3, true), "master");
        ASSERT_STREQ(install_reported_role("bootstrap", 1, true), "bootstrap");
        ASSERT_STREQ(install_reported_role("worker", 0, true), "worker");
        ASSERT_STREQ(w, "Could not clean install device /dev/sda. The installation will continue. If the "
                        "installation fails, clean the disk and try again");
        /* the wire names */
        ASSERT_STREQ(host_stage_to_string(HOST_STAGE_WRITING_IMAGE_TO_DISK), "Writing image to disk");
        ASSERT_STREQ(host_stage_to_string(HOST_STAGE_WAITING_FOR_CONTROL_PLANE),
                     "Waiting for control plane");
        ASSERT_STREQ(host_stage_to_string(HOST_STAGE_COPYING_REGISTRY_DATA_TO_DISK),
                     "Copying registry data to disk");
}

TEST(coreos_installer_argv)
{
        char *extra[] = { (char *)"--append-karg", (char *)"ip=ens3:dhcp", (char *)"--copy-network", NULL };
        _cleanup_strv_free_ char **a = coreos_installer_argv("coreos-installer",
                                                             "/opt/install-dir/master-h.ign", extra,
                                                             "/dev/sda"),
                                 **b = coreos_installer_argv("dry-installer", "/x.ign", NULL, "/dev/vda");
        _cleanup_free_ char *ta = shell_join(a), *tb = shell_join(b);

        ASSERT_STREQ(ta,
                     "coreos-installer install --insecure -i /opt/install-dir/master-h.ign --append-karg "
                     "ip=ens3:dhcp --copy-network /dev/sda");
        ASSERT_STREQ(tb, "dry-installer install --insecure -i /x.ign /dev/vda");
}

TEST(coreos_progress)
{
        static const struct {
                const char *line;
                int percent; /* -1: none */
        } cases[] = {
                { "> Read disk 473.8 MiB/844.7 MiB (56%)   ", 56 },
                { "> Read disk 1.2 GiB/2.6 GiB (45%)", 45 },
                { "Read disk 12.0 MiB/64.0 MiB (18%)", 18 },
                { "> Read disk 64.0 MiB/64.0 MiB (100%)", 100 },
                { "Installing Red Hat Enterprise Linux CoreOS 416.94 (Ootpa) x86_64 (512-byte sectors)",
                  -1 },
                { "Writing Ignition config", -1 },
                { "(abc%)", -1 },
                { "(%)", -1 },
                { "half (5", -1 },
                { "", -1 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned p = 0;
                int r = coreos_progress_parse(cases[i].line, &p);
                if (cases[i].percent < 0)
                        ASSERT_ERROR(r, ENOENT);
                else {
                        ASSERT_OK(r);
                        ASSERT_EQ(p, cases[i].percent);
                }
        }
}

TEST(progress_rule)
{
        /* a stream of percentages and what gets reported (the last reported
         * value advancing only on reports) */
        static const unsigned stream[] = { 0, 1, 3, 4, 5, 6, 9, 10, 12, 14, 15, 50, 52, 99, 100, 100 };
        static const unsigned want[] = { 5, 10, 15, 50, 99, 100 };
        unsigned last = 0, n = 0;

        for (size_t i = 0; i < ELEMENTSOF(stream); i++)
                if (progress_should_report(last, stream[i])) {
                        ASSERT_TRUE(n < ELEMENTSOF(want));
                        ASSERT_EQ(stream[i], want[n]);
                        n++;
                        last = stream[i];
                }
        ASSERT_EQ(n, ELEMENTSOF(want));
        /* 100 once even when close to the last one */
        ASSERT_TRUE(progress_should_report(98, 100));
        ASSERT_FALSE(progress_should_report(100, 100));
        ASSERT_FALSE(progress_should_report(96, 99));
}

TEST(rsync_progress)
{
        unsigned p = 0;

        ASSERT_OK(
                rsync_progress_parse("      1,234,567  45%   12.34MB/s    0:00:01 (xfr#1, to-chk=0/2)", &p));
        ASSERT_EQ(p, 45);
        ASSERT_OK(rsync_progress_parse("  3.00G 100%  120.00MB/s    0:00:25 (xfr#9, to-chk=0/10)", &p));
        ASSERT_EQ(p, 100);
        ASSERT_ERROR(rsync_progress_parse("sending incremental file list", &p), ENOENT);
        ASSERT_ERROR(rsync_progress_parse("to-chk=0/2 % done", &p), ENOENT);
        ASSERT_ERROR(rsync_progress_parse(" 250%", &p), ENOENT);
}

TEST(service_retry_policy)
{
        AssistedRetryPolicy p = ASSISTED_RETRY_INSTALLER;
        static const struct {
                int r;
                long status;
                unsigned retries;
                bool retry;
        } cases[] = {
                { 0, 200, 0, false },
                { -EREMOTEIO, 404, 0, true },
                { -EREMOTEIO, 404, 9, true },
                { -EREMOTEIO, 404, 10, false },
                { -EREMOTEIO, 423, 3, true },
                { -EREMOTEIO, 425, 3, true },
                { -EREMOTEIO, 503, 0, true },
                { -EREMOTEIO, 500, 359, true },
                { -EREMOTEIO, 500, 360, false },
                { -EREMOTEIO, 599, 1, true },
                { -EREMOTEIO, 408, 1, true },
                { -EREMOTEIO, 429, 1, true },
                { -EREMOTEIO, 400, 0, false },
                { -EREMOTEIO, 401, 0, false },
                { -EREMOTEIO, 403, 0, false },
                { -EREMOTEIO, 409, 0, false },
                { -EREMOTEIO, 422, 0, false },
                { -ECONNREFUSED, 0, 100, true },
                { -ECONNRESET, 0, 0, true },
                { -ETIMEDOUT, 0, 0, true },
                { -EHOSTUNREACH, 0, 0, true },
                { -ECONNREFUSED, 0, 360, false },
                { -EPERM, 0, 0, false }, /* a rejected certificate will not get better */
                { -E2BIG, 0, 0, false },
                { -ENOMEM, 0, 0, false },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ASSERT_EQ(assisted_should_retry(&p, cases[i].r, cases[i].status, cases[i].retries),
                          cases[i].retry);
        ASSERT_EQ(p.base_delay, 2 * USEC_PER_SEC);
        ASSERT_EQ(p.max_delay, 10 * USEC_PER_SEC);
}

TEST(worker_wait)
{
        static const char *hosts_json =
                "[{\"id\":\"a\",\"progress\":{\"current_stage\":\"Done\"}},"
                "{\"id\":\"b\",\"progress\":{\"current_stage\":\"Joined\"}},"
                "{\"id\":\"c\",\"progress\":{\"current_stage\":\"Done\"}},{\"id\":\"d\"}]";
        _cleanup_(json_object_putp) json_object *hosts = NULL;

        ASSERT_OK(json_parse(hosts_json, strlen(hosts_json), 1 << 20, &hosts, NULL));
        ASSERT_EQ(hosts_done_count(hosts), 2);
        ASSERT_EQ(hosts_done_count(NULL), 0);
        ASSERT_TRUE(worker_may_continue("Cluster", 2));
        ASSERT_TRUE(worker_may_continue("Cluster", 3));
        ASSERT_FALSE(worker_may_continue("Cluster", 1));
        ASSERT_FALSE(worker_may_continue(NULL, 0));
        ASSERT_TRUE(worker_may_continue("AddHostsCluster", 0));
}

TEST(reboot)
{
        _cleanup_strv_free_ char **a = reboot_argv(REBOOT_SHUTDOWN, 3, NULL),
                                 **b = reboot_argv(REBOOT_SHUTDOWN, 1, NULL),
                                 **c = reboot_argv(REBOOT_IRONIC, 3, NULL),
                                 **d = reboot_argv(REBOOT_FAKE, 3, "/tmp/m");

        ASSERT_EQ(reboot_kind(true, true), REBOOT_FAKE);
        ASSERT_EQ(reboot_kind(false, true), REBOOT_IRONIC);
        ASSERT_EQ(reboot_kind(false, false), REBOOT_SHUTDOWN);
        ASSERT_STREQ(reboot_progress_info(REBOOT_IRONIC), "Ironic will reboot the node shortly");
        ASSERT_STREQ(reboot_progress_info(REBOOT_SHUTDOWN), "");
        ASSERT_EQ(strv_length(a), 4);
        ASSERT_STREQ(a[0], "shutdown");
        ASSERT_STREQ(a[1], "-r");
        ASSERT_STREQ(a[2], "+1");
        /* one argument, the quotes included, as the Go installer passes it */
        ASSERT_STREQ(a[3], "'Installation completed, server is going to reboot.'");
        ASSERT_STREQ(b[2], "now");
        ASSERT_EQ(strv_length(c), 3);
        ASSERT_STREQ(c[2], "agent.service");
        ASSERT_STREQ(d[0], "touch");
        ASSERT_STREQ(d[1], "/tmp/m");
}

TEST(efibootmgr)
{
        static const struct {
                const char *ls;
                const char *machine;
                const char *loader; /* NULL: no vendor */
        } cases[] = {
                { "BOOT\nredhat\n", "x86_64", "\\EFI\\redhat\\shimx64.efi" },
                { "BOOT\ncentos\n", "x86_64", "\\EFI\\centos\\shimx64.efi" },
                { "centos\nredhat\n", "x86_64", "\\EFI\\redhat\\shimx64.efi" },
                { "BOOT\nredhat", "aarch64", "\\EFI\\redhat\\shimaa64.efi" },
                { "BOOT\nfedora\n", "x86_64", NULL },
                { "", "x86_64", NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *v = efi_vendor_pick(cases[i].ls);
                _cleanup_free_ char *l = NULL;
                if (!cases[i].loader) {
                        ASSERT_NULL(v);
                        continue;
                }
                ASSERT_NOT_NULL(v);
                l = efi_loader_path(v, cases[i].machine);
                ASSERT_STREQ(l, cases[i].loader);
        }

        {
                _cleanup_strv_free_ char **create =
                        efibootmgr_create_argv("/dev/sda", "\\EFI\\redhat\\shimx64.efi");
                _cleanup_free_ char *t = shell_join(create);
                ASSERT_STREQ(t, "efibootmgr -v -d /dev/sda -p 2 -c -L 'Red Hat Enterprise Linux' -l "
                                "'\\EFI\\redhat\\shimx64.efi'");
                ASSERT_STREQ(create[8], "Red Hat Enterprise Linux");
        }
        {
                /* efibootmgr -c warns about entries with the same label: each is deleted */
                const char *out = "** Warning ** : Boot0004 has same label Red Hat Enterprise Linux\n"
                                  "** Warning ** : Boot0007 has same label Red Hat Enterprise Linux\n"
                                  "BootCurrent: 0001\nBootOrder: 0008,0004,0007,0001\n"
                                  "Boot0008* Red Hat Enterprise Linux\tHD(2,GPT,...)\n";
                char ***del = efibootmgr_delete_argvs(out, "\\EFI\\redhat\\shimx64.efi");
                _cleanup_free_ char *t0 = NULL, *t1 = NULL;
                ASSERT_NOT_NULL(del);
                t0 = shell_join(del[0]);
                t1 = shell_join(del[1]);
                ASSERT_STREQ(
                        t0, "efibootmgr -v --delete-bootnum --bootnum 0004 -l '\\EFI\\redhat\\shimx64.efi'");
                ASSERT_STREQ(
                        t1, "efibootmgr -v --delete-bootnum --bootnum 0007 -l '\\EFI\\redhat\\shimx64.efi'");
                ASSERT_NULL(del[2]);
                argvs_free(del);
        }
        ASSERT_NULL(efibootmgr_delete_argvs("BootOrder: 0001\n", "x"));
}

TEST(partition_paths)
{
        static const struct {
                const char *dev;
                const char *p4;
        } cases[] = {
                { "/dev/sda", "/dev/sda4" },          { "/dev/vda", "/dev/vda4" },
                { "/dev/nvme0n1", "/dev/nvme0n1p4" }, { "/dev/mmcblk0", "/dev/mmcblk0p4" },
                { "/dev/loop3", "/dev/loop3p4" },     { "/dev/dm-1", "/dev/dm-1p4" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *p = partition_path(cases[i].dev, 4);
                ASSERT_STREQ(p, cases[i].p4);
        }
}

/* ---- cleanup planners --------------------------------------------------- */

static BlockRef ref(const char *path, const char *kname, const char *disk)
{
        BlockRef b = { .path = strdup(path),
                       .kname = kname ? strdup(kname) : NULL,
                       .disk_kname = disk ? strdup(disk) : NULL };
        return b;
}

TEST(cleanup_parsers)
{
        VgPv *vgs = NULL;
        size_t n = 0;
        _cleanup_strv_free_ char **pvs = NULL, **dms = NULL, **none = NULL, **deps = NULL;
        MdArray *arrays = NULL;

        ASSERT_OK(cleanup_parse_vgs("  vg0     /dev/sda2 \n  vg0     /dev/sdb1\n  data /dev/md127\n\n", &vgs,
                                    &n));
        ASSERT_EQ(n, 3);
        ASSERT_STREQ(vgs[0].vg, "vg0");
        ASSERT_STREQ(vgs[1].pv, "/dev/sdb1");
        ASSERT_STREQ(vgs[2].pv, "/dev/md127");
        vgpv_free(vgs, n);

        ASSERT_OK(cleanup_parse_pvs("  /dev/sda2 \n  /dev/sdb1\n", &pvs));
        ASSERT_EQ(strv_length(pvs), 2);
        ASSERT_STREQ(pvs[0], "/dev/sda2");

        ASSERT_OK(cleanup_parse_dmsetup_ls("vg0-lv0\t(253:0)\npool_tdata\t(253:1)\n", &dms));
        ASSERT_EQ(strv_length(dms), 2);
        ASSERT_STREQ(dms[1], "pool_tdata");
        ASSERT_OK(cleanup_parse_dmsetup_ls("No devices found\n", &none));
        ASSERT_NULL(none);

        ASSERT_OK(cleanup_parse_dmsetup_deps(" 2 dependencies  : (sda2) (sdb1)\n", &deps));
        ASSERT_EQ(strv_length(deps), 2);
        ASSERT_STREQ(deps[0], "sda2");
        ASSERT_STREQ(deps[1], "sdb1");

        ASSERT_OK(cleanup_parse_mdadm_scan(
                "ARRAY /dev/md/raid1 level=raid1 num-devices=2 metadata=1.2 name=x:raid1 "
                "UUID=12345678:12345678:12345678:12345678\n"
                "   devices=/dev/sda3,/dev/sdb3\n"
                "ARRAY /dev/md127 level=raid0 num-devices=2 metadata=1.2\n"
                "   devices=/dev/sdc,/dev/sdd\n",
                &arrays, &n));
        ASSERT_EQ(n, 2);
        ASSERT_STREQ(arrays[0].device, "/dev/md/raid1");
        ASSERT_EQ(strv_length(arrays[0].members), 2);
        ASSERT_STREQ(arrays[0].members[1], "/dev/sdb3");
        ASSERT_STREQ(arrays[1].members[0], "/dev/sdc");
        md_arrays_free(arrays, n);
}

TEST(cleanup_plan_lvm)
{
        /* target sda; "sdaa" must not match (the Go code's substring match did) */
        VgPv vgs[] = {
                { (char *)"vg0", (char *)"/dev/sda2" },    { (char *)"vg0", (char *)"/dev/sda3" },
                { (char *)"span", (char *)"/dev/sda4" },   { (char *)"span", (char *)"/dev/sdb1" },
                { (char *)"other", (char *)"/dev/sdaa1" }, { (char *)"whole", (char *)"/dev/sda" },
        };
        BlockRef refs[] = {
                ref("/dev/sda2", "sda2", "sda"),    ref("/dev/sda3", "sda3", "sda"),
                ref("/dev/sda4", "sda4", "sda"),    ref("/dev/sdb1", "sdb1", "sdb"),
                ref("/dev/sdaa1", "sdaa1", "sdaa"), ref("/dev/sda", "sda", "sda"),
        };
        _cleanup_strv_free_ char **remove = NULL, **spanning = NULL, **pv_remove = NULL;
        char *pvs[] = { (char *)"/dev/sda2",
                        (char *)"/dev/sda3",
                        (char *)"/dev/sda4",
                        (char *)"/dev/sdb1",
                        (char *)"/dev/sdaa1",
                        (char *)"/dev/sda",
                        NULL };
        _cleanup_free_ char *t1 = NULL, *t2 = NULL, *t3 = NULL;

        ASSERT_OK(cleanup_plan_vgs(vgs, refs, ELEMENTSOF(vgs), "sda", &remove, &spanning));
        t1 = strv_join(remove, " ");
        t2 = strv_join(spanning, " ");
        ASSERT_STREQ(t1, "vg0 whole");
        ASSERT_STREQ(t2, "span");
        ASSERT_OK(cleanup_plan_pvs(pvs, refs, "sda", &pv_remove));
        t3 = strv_join(pv_remove, " ");
        ASSERT_STREQ(t3, "/dev/sda2 /dev/sda3 /dev/sda4 /dev/sda");
        for (size_t i = 0; i < ELEMENTSOF(refs); i++)
                block_ref_done(&refs[i]);
}

TEST(cleanup_plan_device_mapper)
{
        BlockRef d_lv[] = { ref("/dev/sda2", "sda2", "sda") };
        BlockRef d_tdata[] = { ref("/dev/sda3", "sda3", "sda") };
        BlockRef d_tmeta[] = { ref("/dev/sda3", "sda3", "sda") };
        BlockRef d_pool[] = { ref("/dev/dm-1", "dm-1", "dm-1"), ref("/dev/dm-2", "dm-2", "dm-2") };
        BlockRef d_other[] = { ref("/dev/sdb1", "sdb1", "sdb") };
        BlockRef d_near[] = { ref("/dev/sdaa", "sdaa", "sdaa") };
        DmDeps dms[] = {
                { (char *)"vg-lv", d_lv, 1 },         { (char *)"pool_tdata", d_tdata, 1 },
                { (char *)"pool_tmeta", d_tmeta, 1 }, { (char *)"pool", d_pool, 2 },
                { (char *)"elsewhere", d_other, 1 },  { (char *)"near-miss", d_near, 1 },
        };
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *t = NULL;

        ASSERT_OK(cleanup_plan_dm(dms, ELEMENTSOF(dms), "sda", &l));
        t = strv_join(l, " ");
        /* everything else first (the pool base joins them), then _tdata/_tmeta */
        ASSERT_STREQ(t, "pool vg-lv pool_tdata pool_tmeta");
        block_ref_done(&d_lv[0]);
        block_ref_done(&d_tdata[0]);
        block_ref_done(&d_tmeta[0]);
        block_ref_done(&d_pool[0]);
        block_ref_done(&d_pool[1]);
        block_ref_done(&d_other[0]);
        block_ref_done(&d_near[0]);
}

TEST(cleanup_plan_md_raid)
{
        char *m0[] = { (char *)"/dev/sda3", (char *)"/dev/sdb3", NULL };
        char *m1[] = { (char *)"/dev/sdc", (char *)"/dev/sdd", NULL };
        char *m2[] = { (char *)"/dev/sda", (char *)"/dev/sde", NULL };
        MdArray arrays[] = { { (char *)"/dev/md/raid1", m0 },
                             { (char *)"/dev/md127", m1 },
                             { (char *)"/dev/md126", m2 } };
        BlockRef r0[] = { ref("/dev/sda3", "sda3", "sda"), ref("/dev/sdb3", "sdb3", "sdb") };
        BlockRef r1[] = { ref("/dev/sdc", "sdc", "sdc"), ref("/dev/sdd", "sdd", "sdd") };
        BlockRef r2[] = { ref("/dev/sda", "sda", "sda"), ref("/dev/sde", "sde", "sde") };
        BlockRef *refs[] = { r0, r1, r2 };
        MdPlan p = {};
        _cleanup_free_ char *ta = NULL, *tm = NULL;

        ASSERT_OK(cleanup_plan_md(arrays, refs, ELEMENTSOF(arrays), "sda", &p));
        ta = strv_join(p.arrays, " ");
        tm = strv_join(p.members, " ");
        /* stop the arrays on the disk; zero only the disk's members (never sdb3, sde) */
        ASSERT_STREQ(ta, "/dev/md/raid1 /dev/md126");
        ASSERT_STREQ(tm, "/dev/sda3 /dev/sda");
        md_plan_done(&p);
        for (size_t i = 0; i < 2; i++) {
                block_ref_done(&r0[i]);
                block_ref_done(&r1[i]);
                block_ref_done(&r2[i]);
        }
        /* a device that is not a block device is on no disk */
        {
                BlockRef none = ref("/dev/nothing", NULL, NULL);
                ASSERT_FALSE(block_ref_on_disk(&none, "sda"));
                block_ref_done(&none);
        }
}

/* ---- OS image plans ----------------------------------------------------- */

static char *plan_join(char ***plan)
{
        char **lines = NULL;
        char *s;

        for (size_t i = 0; plan && plan[i]; i++) {
                char *l = shell_join(plan[i]);
                ASSERT_NOT_NULL(l);
                ASSERT_OK(strv_push(&lines, l));
        }
        s = strv_join(lines, "\n");
        strv_free(lines);
        return s;
}

TEST(overwrite_os_image)
{
        char *kargs[] = { (char *)"ip=enp1s0:dhcp", (char *)"systemd.unified_cgroup_hierarchy=1", NULL };
        OverwritePlanInput in = {
                .device = "/dev/nvme0n1",
                .os_image_url = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:abc",
                .kargs = kargs,
                .platform_id = "metal",
                .mount_dir = "/mnt",
                .machine = "x86_64",
        };
        char ***plan = NULL;
        _cleanup_free_ char *t = NULL;

        ASSERT_EQ(overwrite_os_image_plan(&in, &plan), 12);
        t = plan_join(plan);
        ASSERT_STREQ(
                t,
                "mount /dev/nvme0n1p4 /mnt\n"
                "mount /dev/nvme0n1p3 /mnt/boot\n"
                "growpart /dev/nvme0n1 4\n"
                "xfs_growfs /mnt\n"
                "setenforce 0\n"
                "ostree container image deploy --sysroot /mnt --authfile /root/.docker/config.json --imgref "
                "ostree-unverified-registry:quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:abc "
                "--karg ignition.platform.id=metal --karg '$ignition_firstboot' --stateroot rhcos --karg "
                "ip=enp1s0:dhcp --karg systemd.unified_cgroup_hierarchy=1\n"
                "fsfreeze --freeze /mnt/boot\nfsfreeze --unfreeze /mnt/boot\numount /mnt/boot\n"
                "fsfreeze --freeze /mnt\nfsfreeze --unfreeze /mnt\numount /mnt");
        argvs_free(plan);

        in.machine = "s390x";
        plan = NULL;
        ASSERT_EQ(overwrite_os_image_plan(&in, &plan), 0);
        ASSERT_NULL(plan);
}

TEST(kargs_and_platform)
{
        char *args[] = { (char *)"--append-karg",
                         (char *)"ip=a",
                         (char *)"--copy-network",
                         (char *)"--append-karg",
                         (char *)"rd.md=1",
                         (char *)"--append-karg",
                         NULL };
        _cleanup_strv_free_ char **k = installer_args_append_kargs(args),
                                 **none = installer_args_append_kargs(NULL);
        _cleanup_free_ char *p1 = cmdline_platform_id("BOOT_IMAGE=/x ignition.platform.id=qemu quiet"),
                            *p2 = cmdline_platform_id("BOOT_IMAGE=/x quiet\n"),
                            *p3 = cmdline_platform_id(NULL);

        ASSERT_EQ(strv_length(k), 2);
        ASSERT_STREQ(k[0], "ip=a");
        ASSERT_STREQ(k[1], "rd.md=1");
        ASSERT_NOT_NULL(none);
        ASSERT_EQ(strv_length(none), 0);
        ASSERT_STREQ(p1, "qemu");
        ASSERT_STREQ(p2, "metal");
        ASSERT_STREQ(p3, "metal");
}

TEST(registry_copy)
{
        char ***plan = NULL;
        _cleanup_free_ char *t = NULL;

        ASSERT_EQ(registry_copy_plan("/dev/sda", "/mnt", "/run/media/iso/registry", &plan), 6);
        t = plan_join(plan);
        ASSERT_STREQ(t, "growpart /dev/sda 4\nmount /dev/sda4 /mnt\nxfs_growfs /mnt\n"
                        "mkdir -p /mnt/ostree/deploy/rhcos/var/lib/iri-registry/\n"
                        "rsync -ah --info=progress2 /run/media/iso/registry/ "
                        "/mnt/ostree/deploy/rhcos/var/lib/iri-registry/\n"
                        "umount /mnt");
        argvs_free(plan);
}

TEST(existing_root)
{
        char *args[] = { (char *)"--append-karg", (char *)"ip=a", (char *)"--delete-karg",
                         (char *)"quiet",         (char *)"-n",   NULL };
        ExistingRootPlanInput in = {
                .coreos_image = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:def",
                .ignition = "/opt/install-dir/master-h.ign",
                .installer_args = args,
                .has_node_image_ref = true,
        };
        char ***plan = NULL;
        _cleanup_free_ char *t = NULL, *t2 = NULL;

        ASSERT_OK(existing_root_plan(&in, &plan));
        t = plan_join(plan);
        ASSERT_STREQ(
                t,
                "mount -o remount,rw /sysroot\nmount -o remount,rw /boot\n"
                "ostree refs --delete coreos/node-image\nostree admin stateroot-init install\n"
                "ostree container image deploy --stateroot install --sysroot / --authfile "
                "/root/.docker/config.json --karg '$ignition_firstboot' --karg ignition.platform.id=metal "
                "--image quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:def\n"
                "ostree admin finalize-staged\n"
                "rpm-ostree kargs --os install --append=ip=a --delete-if-present=quiet\n"
                "ostree admin finalize-staged\n"
                "mkdir -p /boot/coreos-firstboot-network\n"
                "rsync -a /etc/NetworkManager/system-connections/ /boot/coreos-firstboot-network/\n"
                "mkdir -p /boot/ignition\ncp /opt/install-dir/master-h.ign /boot/ignition/config.ign\n"
                "touch /boot/ignition.firstboot");
        argvs_free(plan);

        in.installer_args = NULL;
        in.has_node_image_ref = false;
        plan = NULL;
        ASSERT_OK(existing_root_plan(&in, &plan));
        t2 = plan_join(plan);
        ASSERT_NOT_CONTAINS(t2, "rpm-ostree");
        ASSERT_NOT_CONTAINS(t2, "refs --delete");
        ASSERT_NOT_CONTAINS(t2, "coreos-firstboot-network");
        argvs_free(plan);
}

/* ---- skip-MCO-reboot: pointer configs and the machine config -------------- */

TEST(skip_mco_pointer)
{
        /* CA "hello" as a data URL */
        const char *ptr =
                "{\"ignition\":{\"config\":{\"merge\":[{\"source\":\"https://api-int.x.example.com:22623/"
                "config/master\"}]},\"security\":{\"tls\":{\"certificateAuthorities\":[{\"source\":"
                "\"data:text/plain;charset=utf-8;base64,aGVsbG8=\"}]}},\"version\":\"3.2.0\"}}";
        const char *plain = "{\"ignition\":{\"version\":\"3.2.0\"}}";
        _cleanup_free_ char *src = NULL, *ca = NULL, *err = NULL, *src2 = NULL;

        ASSERT_OK(skipmco_pointer_source(ptr, strlen(ptr), &src, &ca, &err));
        ASSERT_STREQ(src, "https://api-int.x.example.com:22623/config/master");
        ASSERT_STREQ(ca, "hello");
        ASSERT_ERROR(skipmco_pointer_source(plain, strlen(plain), &src2, NULL, &err), ENOENT);
        ASSERT_CONTAINS(err, "merges no other config");
}

TEST(skip_mco_machine_config)
{
        /* an MCS answer whose encapsulated MachineConfig is in a data URL,
         * fetched through a data: merge source (gzip-compressed) */
        const char *mc =
                "{\"apiVersion\":\"machineconfiguration.openshift.io/v1\",\"kind\":\"MachineConfig\","
                "\"spec\":{\"osImageURL\":\"quay.io/x/"
                "rhcos@sha256:1\",\"kernelArguments\":[\"a=1\",\"b\"]}}";
        _cleanup_free_ char *mc_url = ign_data_url_encode(mc, strlen(mc), false), *mcs = NULL,
                            *mcs_url = NULL, *ptr = NULL, *err = NULL;
        MachineConfigInfo info = {};

        mcs = strdup_printf(
                "{\"ignition\":{\"version\":\"3.4.0\"},\"storage\":{\"files\":[{\"path\":"
                "\"/etc/ignition-machine-config-encapsulated.json\",\"contents\":{\"source\":\"%s\"}}]}}",
                mc_url);
        ASSERT_OK(skipmco_parse_mcs_config(mcs, strlen(mcs), &info, &err));
        ASSERT_STREQ(info.os_image_url, "quay.io/x/rhcos@sha256:1");
        ASSERT_EQ(strv_length(info.kernel_arguments), 2);
        ASSERT_STREQ(info.kernel_arguments[1], "b");
        machine_config_info_done(&info);

        mcs_url = ign_data_url_encode(mcs, strlen(mcs), false);
        ptr = strdup_printf(
                "{\"ignition\":{\"config\":{\"merge\":[{\"source\":\"%s\"}]},\"version\":\"3.2.0\"}}",
                mcs_url);
        ASSERT_OK(skipmco_fetch(ptr, strlen(ptr), &info, &err));
        ASSERT_STREQ(info.os_image_url, "quay.io/x/rhcos@sha256:1");
        machine_config_info_done(&info);

        {
                const char *nofile = "{\"ignition\":{\"version\":\"3.4.0\"}}";
                ASSERT_TRUE(skipmco_parse_mcs_config(nofile, strlen(nofile), &info, &err) < 0);
                ASSERT_CONTAINS(err, "/etc/ignition-machine-config-encapsulated.json");
        }
}

/* ---- command line -------------------------------------------------------- */

static int parse(InstallerConfig *c, char **argv)
{
        return installer_config_parse((int)strv_length(argv), argv, c);
}

TEST(config_defaults)
{
        InstallerConfig c = {};
        char *argv[] = { (char *)"installer",
                         (char *)"--role",
                         (char *)"worker",
                         (char *)"--cluster-id",
                         (char *)"c1",
                         (char *)"--control-plane-count",
                         (char *)"3",
                         (char *)"--installer-args",
                         (char *)"[\"--append-karg\",\"ip=ens3:dhcp\"]",
                         (char *)"--format-disk",
                         (char *)"/dev/sdb",
                         (char *)"--format-disk=/dev/sdc",
                         (char *)"--insecure",
                         NULL };

        unsetenv("DRY_ENABLE");
        ASSERT_EQ(parse(&c, argv), 1);
        ASSERT_STREQ(c.role, "worker");
        ASSERT_STREQ(c.infra_env_id, "c1"); /* defaults to the cluster */
        ASSERT_EQ(c.control_plane_count, 0); /* forced for workers */
        ASSERT_EQ(strv_length(c.installer_args), 2);
        ASSERT_STREQ(c.installer_args[1], "ip=ens3:dhcp");
        ASSERT_EQ(strv_length(c.format_disks), 2);
        ASSERT_STREQ(c.format_disks[1], "/dev/sdc");
        ASSERT_TRUE(c.insecure);
        ASSERT_STREQ(c.openshift_version, "4.4");
        ASSERT_STREQ(c.controller_image, "quay.io/ocpmetal/assisted-installer-controller:latest");
        ASSERT_STREQ(c.agent_image, "quay.io/ocpmetal/assisted-installer-agent:latest");
        ASSERT_STREQ(c.install_dir, "/opt/install-dir");
        ASSERT_STREQ(c.log_file, "/var/log/assisted-installer.log");
        ASSERT_EQ(c.retry_delay, 2 * USEC_PER_SEC);
        ASSERT_EQ(c.write_retry_delay, USEC_PER_SEC);
        ASSERT_FALSE(c.dry_run);
        installer_config_done(&c);
}

TEST(config_dry_run_env)
{
        InstallerConfig c = {};
        char *argv[] = { (char *)"installer", (char *)"--role", (char *)"master", NULL };

        setenv("DRY_ENABLE", "true", 1);
        setenv("DRY_HOST_ID", "dry-host", 1);
        setenv("DRY_FAKE_REBOOT_MARKER_PATH", "/tmp/marker", 1);
        ASSERT_EQ(parse(&c, argv), 1);
        ASSERT_TRUE(c.dry_run);
        ASSERT_STREQ(c.host_id, "dry-host");
        ASSERT_STREQ(c.fake_reboot_marker_path, "/tmp/marker");
        installer_config_done(&c);
        unsetenv("DRY_ENABLE");
        unsetenv("DRY_HOST_ID");
        unsetenv("DRY_FAKE_REBOOT_MARKER_PATH");
}

/* The installers before 2025-03 took --high-availability-mode, which the
 * agents of the 2023 service send: None is one control-plane node */
TEST(config_high_availability_mode)
{
        static const struct {
                const char *role, *mode, *count;
                int ret, want_count;
                const char *want_mode;
        } cases[] = {
                { "bootstrap", "None", NULL, 1, 1, "None" },
                { "master", "Full", NULL, 1, 0, "Full" },
                { "bootstrap", "Full", "3", 1, 3, "Full" },
                { "bootstrap", "None", "1", 1, 1, "None" },
                { "worker", "Full", NULL, 1, 0, NULL }, /* workers keep neither, as upstream */
                { "master", "", NULL, 1, 0, "" },
                { "bootstrap", "None", "3", -EINVAL, 0, NULL },
                { "bootstrap", "Full", "1", -EINVAL, 0, NULL },
                { "master", "none", NULL, -EINVAL, 0, NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                InstallerConfig c = {};
                char *argv[] = {
                        (char *)"installer",    (char *)"--role",
                        (char *)cases[i].role,  (char *)"--high-availability-mode",
                        (char *)cases[i].mode,  cases[i].count ? (char *)"--control-plane-count" : NULL,
                        (char *)cases[i].count, NULL
                };
                ASSERT_EQ(parse(&c, argv), cases[i].ret);
                if (cases[i].ret < 0)
                        continue;
                ASSERT_EQ(c.control_plane_count, cases[i].want_count);
                if (cases[i].want_mode)
                        ASSERT_STREQ(c.high_availability_mode, cases[i].want_mode);
                else
                        ASSERT_NULL(c.high_availability_mode);
                ASSERT_EQ(install_flow_for(c.role, c.control_plane_count),
                          streq(cases[i].mode, "None") ? INSTALL_FLOW_SINGLE_NODE
                          : streq(c.role, "bootstrap") ? INSTALL_FLOW_BOOTSTRAP
                                                       : INSTALL_FLOW_NODE);
                installer_config_done(&c);
        }
}

TEST(config_usage_errors)
{
        static const char *const bad[][4] = {
                { "--installer-args", "not json", NULL }, { "--installer-args", "[\"a\", 2]", NULL },
                { "--installer-args", "\"a\"", NULL },    { "--high-availability-mode", "full", NULL },
                { "--insecure", "true", NULL },           { "--retry-delay", "-1", NULL },
                { "--host-exec", "sideways", NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                InstallerConfig c = {};
                char *argv[4] = { (char *)"installer", (char *)bad[i][0], (char *)bad[i][1], NULL };
                ASSERT_ERROR(parse(&c, argv), EINVAL);
        }
        {
                InstallerConfig c = {};
                char *argv[] = { (char *)"installer", (char *)"--help", NULL };
                ASSERT_EQ(parse(&c, argv), 0);
        }
        {
                char **l = NULL;
                _cleanup_free_ char *err = NULL;
                ASSERT_OK(installer_args_parse("[]", &l, &err));
                ASSERT_NULL(l);
                ASSERT_OK(installer_args_parse("", &l, &err));
                ASSERT_NULL(l);
        }
}

DEFINE_TEST_MAIN
