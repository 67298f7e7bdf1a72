/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <blkid/blkid.h>
#include <json-c/json.h>
#include <libudev.h>

#include "cleanup.h"
#include "disks.h"
#include "fileio.h"
#include "invutil.h"
#include "jsonutil.h"
#include "log.h"
#include "mountinfo.h"
#include "strutil.h"
#include "udevutil.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(blkid_probe, blkid_free_probe)

#define APPLIANCE_PREFIX "agent"
#define APPLIANCE_SIZE (100ull * 1024 * 1024 * 1024)

/* ghw's storage controller, from the kernel name prefix */
typedef enum Controller {
        CONTROLLER_UNKNOWN,
        CONTROLLER_KNOWN,
} Controller;

typedef struct Disk {
        char name[64];
        char syspath[PATH_MAX];
        unsigned major, minor;
        uint64_t size_bytes;
        bool removable, rotational, hidden, lab;
        char *vendor, *model, *serial, *wwn, *id_path;
        char **devlinks;
        char *dm_uuid, *dm_name;
} Disk;

static void disk_done(Disk *d)
{
        free(d->vendor);
        free(d->model);
        free(d->serial);
        free(d->wwn);
        free(d->id_path);
        strv_free(d->devlinks);
        free(d->dm_uuid);
        free(d->dm_name);
}

void disk_partitions_free(DiskPartition *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(p[i].name);
                free(p[i].label);
                free(p[i].uuid);
                free(p[i].fs_type);
                free(p[i].mount_point);
        }
        free(p);
}

bool disk_sector_is_mbr(const unsigned char *s, size_t len)
{
        return len >= 512 && s[510] == 0x55 && s[511] == 0xAA;
}

static char *attr_dup(const char *dir, const char *rel)
{
        _cleanup_free_ char *p = strdup_printf("%s/%s", dir, rel);
        char b[512];

        return p ? strdup(inv_read_attr(p, b, sizeof(b))) : NULL;
}

static const char *unknown_to_empty(const char *s)
{
        return s && !streq(s, "unknown") ? s : NULL;
}

static int dup_prop(struct udev_device *d, char **ret, const char *const *names)
{
        for (; *names; names++) {
                const char *v = udev_device_get_property_value(d, *names);
                if (v) {
                        *ret = strdup(v);
                        return *ret ? 0 : -ENOMEM;
                }
        }
        return 0;
}

static int disk_load(const InventoryOptions *o, struct udev_device *d, Disk *ret)
{
        static const char *const model[] = { "ID_MODEL", NULL };
        /* the HEAD agent's order of serial sources */
        static const char *const serial[] = { "SCSI_IDENT_SERIAL", "ID_SCSI_SERIAL", "ID_SERIAL_SHORT",
                                              "ID_SERIAL", NULL };
        static const char *const wwn[] = { "ID_WWN_WITH_EXTENSION", "ID_WWN", "DM_WWN", NULL };
        static const char *const id_path[] = { "ID_PATH", NULL };
        struct udev_list_entry *it;
        const char *syspath = udev_device_get_syspath(d);
        dev_t devnum = udev_device_get_devnum(d);
        char b[64];
        uint64_t v;
        Disk k = {};

        (void)o;
        snprintf(k.name, sizeof(k.name), "%s", udev_device_get_sysname(d));
        snprintf(k.syspath, sizeof(k.syspath), "%s", syspath);
        k.major = major(devnum);
        k.minor = minor(devnum);
#define ATTR(rel) \
        ({ \
                _cleanup_free_ char *_p = strdup_printf("%s/%s", syspath, rel); \
                _p ? inv_read_attr(_p, b, sizeof(b)) : ""; \
        })
        if (inv_parse_u64(ATTR("size"), 10, &v) >= 0 && v <= UINT64_MAX / 512)
                k.size_bytes = v * 512;
        k.removable = streq(ATTR("removable"), "1");
        k.rotational = streq(ATTR("queue/rotational"), "1");
        k.hidden = streq(ATTR("hidden"), "1");
        if (k.major == 0 && k.minor == 0) {
                unsigned ma, mi;
                if (sscanf(ATTR("dev"), "%u:%u", &ma, &mi) == 2) {
                        k.major = ma;
                        k.minor = mi;
                }
        }
#undef ATTR
        k.vendor = attr_dup(syspath, "device/vendor");
        if (startswith(k.name, "dm-")) {
                k.dm_uuid = attr_dup(syspath, "dm/uuid");
                k.dm_name = attr_dup(syspath, "dm/name");
        }
        if (!k.vendor || (startswith(k.name, "dm-") && (!k.dm_uuid || !k.dm_name)) ||
            dup_prop(d, &k.model, model) < 0 || dup_prop(d, &k.serial, serial) < 0 ||
            dup_prop(d, &k.wwn, wwn) < 0 || dup_prop(d, &k.id_path, id_path) < 0)
                goto oom;
        udev_list_entry_foreach(it, udev_device_get_devlinks_list_entry(d))
        {
                if (strv_extend(&k.devlinks, udev_list_entry_get_name(it)) < 0)
                        goto oom;
        }
        *ret = k;
        return 0;
oom:
        disk_done(&k);
        return -ENOMEM;
}

static bool is_mpath(const Disk *d)
{
        return d->dm_uuid && startswith(d->dm_uuid, "mpath-");
}

static bool is_lvm(const Disk *d)
{
        return d->dm_uuid && startswith(d->dm_uuid, "LVM-");
}

static bool is_iscsi(const Disk *d)
{
        return d->id_path && strstr(d->id_path, "-iscsi-");
}

static bool is_fc(const Disk *d)
{
        return d->id_path && (strstr(d->id_path, "-fc-") || startswith(d->id_path, "fc-"));
}

/* ghw's drive type and controller from the name; then, as ghw does for
 * every disk, a non-rotational device becomes an SSD (so an "sr" drive
 * reporting rotational=0 is an SSD, not an ODD, and then no longer counts
 * as installation media -- the Go agent's behaviour on the wire). */
static const char *ghw_drive_type(const Disk *d, Controller *ret_controller)
{
        static const struct {
                const char *prefix, *type;
                Controller controller;
        } prefixes[] = {
                { "fd", "FDD", CONTROLLER_UNKNOWN }, { "sd", "HDD", CONTROLLER_KNOWN },
                { "hd", "HDD", CONTROLLER_KNOWN },   { "vd", "HDD", CONTROLLER_KNOWN },
                { "nvme", "SSD", CONTROLLER_KNOWN }, { "sr", "ODD", CONTROLLER_KNOWN },
                { "xvd", "HDD", CONTROLLER_KNOWN },  { "mmc", "SSD", CONTROLLER_KNOWN },
        };
        const char *type = "Unknown";

        *ret_controller = CONTROLLER_UNKNOWN;
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (startswith(d->name, prefixes[i].prefix)) {
                        type = prefixes[i].type;
                        *ret_controller = prefixes[i].controller;
                        break;
                }
        /* a simulated host's disk (--lab-disks) is the plain disk it stands
         * for, whatever its kernel name */
        if (d->lab && streq(type, "Unknown")) {
                type = "HDD";
                *ret_controller = CONTROLLER_KNOWN;
        }
        if (!d->rotational)
                type = "SSD";
        return type;
}

static const char *dasd_type(const Disk *d)
{
        /* the discipline file sits two levels above the block device */
        _cleanup_free_ char *base = strdup(d->syspath), *disc = NULL, *ese = NULL;
        char *slash;
        char b[32];

        if (!base)
                return "Unknown";
        for (int i = 0; i < 2; i++) {
                slash = strrchr(base, '/');
                if (!slash)
                        return "Unknown";
                *slash = 0;
        }
        disc = strdup_printf("%s/discipline", base);
        ese = strdup_printf("%s/ese", base);
        if (!disc || !ese)
                return "Unknown";
        inv_read_attr(disc, b, sizeof(b));
        if (streq(b, "ECKD")) {
                inv_read_attr(ese, b, sizeof(b));
                if (!b[0])
                        return "Unknown";
                return streq(b, "1") ? "ECKD (ESE)" : "ECKD";
        }
        return streq(b, "FBA") ? "FBA" : "Unknown";
}

static const char *drive_type(const Disk *d)
{
        Controller c;

        if (startswith(d->name, "dasd"))
                return dasd_type(d);
        if (is_iscsi(d))
                return "iSCSI";
        if (is_fc(d))
                return "FC";
        if (is_mpath(d))
                return "Multipath";
        if (is_lvm(d))
                return "LVM";
        if (startswith(d->name, "md"))
                return "RAID";
        return ghw_drive_type(d, &c);
}

static bool devlink_exists(const Disk *d, const char *link)
{
        struct stat st;

        return strv_contains(d->devlinks, link) || lstat(link, &st) == 0;
}

static int sorted_dir_entries(const char *dir, char ***ret)
{
        _cleanup_closedir_ DIR *dh = opendir(dir);
        _cleanup_strv_free_ char **l = NULL;
        struct dirent *de;

        while (dh && (de = readdir(dh))) {
                if (de->d_name[0] == '.')
                        continue;
                if (strv_extend(&l, de->d_name) < 0)
                        return -ENOMEM;
        }
        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

char *disk_holders_of(const char *name)
{
        _cleanup_free_ char *dir = strdup_printf("/sys/class/block/%s/holders", name);
        _cleanup_strv_free_ char **l = NULL;

        if (!dir || sorted_dir_entries(dir, &l) < 0)
                return NULL;
        return strv_join(l, ",");
}

/* by_id: the wwn-* / nvme-eui* link of the device; with several, the one
 * sorting last, as the Go agent's map (target -> link, filled in
 * directory order) keeps the last. The directory is read, as the Go agent
 * does, rather than trusting the udev database's S: lines alone; a link
 * belongs to the disk whose kernel name its target ends in (udev's links
 * are "../../<name>"). */
static char *disk_by_id(const Disk *d)
{
        _cleanup_strv_free_ char **entries = NULL;
        _cleanup_free_ char *best = NULL;
        char target[PATH_MAX];

        STRV_FOREACH (l, d->devlinks) {
                const char *n = startswith(*l, "/dev/disk/by-id/");
                if (!n || (!startswith(n, "wwn-") && !startswith(n, "nvme-eui")))
                        continue;
                if ((!best || strcmp(*l, best) > 0) && free_and_strdup(&best, *l) < 0)
                        return NULL;
        }
        if (sorted_dir_entries("/dev/disk/by-id", &entries) < 0)
                return NULL;
        STRV_FOREACH (e, entries) {
                _cleanup_free_ char *link = NULL;
                const char *base;
                ssize_t n;

                if (!startswith(*e, "wwn-") && !startswith(*e, "nvme-eui"))
                        continue;
                link = strdup_printf("/dev/disk/by-id/%s", *e);
                if (!link)
                        return NULL;
                n = readlink(link, target, sizeof(target) - 1);
                if (n <= 0)
                        continue;
                target[n] = 0;
                base = strrchr(target, '/');
                base = base ? base + 1 : target;
                if (!streq(base, d->name))
                        continue;
                if (!best || strcmp(link, best) > 0) {
                        free(best);
                        best = TAKE_PTR(link);
                }
        }
        return best ? TAKE_PTR(best) : strdup("");
}

static char *disk_path(const Disk *d)
{
        _cleanup_free_ char *dev = strdup_printf("/dev/%s", d->name), *link = NULL;
        char resolved[PATH_MAX];
        struct stat st;

        if (!dev)
                return NULL;
        if (stat(dev, &st) == 0)
                return TAKE_PTR(dev);
        if (!d->id_path)
                return strdup("");
        link = strdup_printf("/dev/disk/by-path/%s", d->id_path);
        if (!link)
                return NULL;
        return strdup(realpath(link, resolved) ? resolved : "");
}

static char *disk_hctl(const Disk *d)
{
        _cleanup_free_ char *dir = strdup_printf("%s/device/scsi_device", d->syspath);
        _cleanup_closedir_ DIR *dh = NULL;
        struct dirent *de;
        char *best = NULL;

        if (!dir)
                return NULL;
        dh = opendir(dir);
        while (dh && (de = readdir(dh))) {
                if (de->d_name[0] == '.')
                        continue;
                if (!best || strcmp(de->d_name, best) < 0) {
                        free(best);
                        best = strdup(de->d_name);
                        if (!best)
                                return NULL;
                }
        }
        return best ?: strdup("");
}

static char *disk_holders(const Disk *d)
{
        _cleanup_free_ char *dir = strdup_printf("%s/holders", d->syspath);
        _cleanup_strv_free_ char **l = NULL;

        if (!dir || sorted_dir_entries(dir, &l) < 0)
                return NULL;
        return strv_join(l, ",");
}

/* sg_inq -p 0x83 sends a live INQUIRY for the Device Identification VPD
 * page and succeeds when the device answers it. We read what the kernel
 * fetched at scan time instead: the SCSI layer's cached copy
 * (device/vpd_pg83, kernel >= 4.10), an NVMe namespace's identifiers
 * (sg3_utils translates the INQUIRY for NVMe), and for a multipath map the
 * copy of its first path (SG_IO on the map reaches a path). Differences: a
 * device whose VPD pages the kernel skips (some USB bridges) or fails to
 * read at scan reads false here while sg_inq could still get an answer;
 * virtio-blk, md and plain dm devices are false in both. */
static bool disk_has_uuid(const Disk *d)
{
        _cleanup_free_ char *p = NULL;
        _cleanup_free_ char *data = NULL;
        size_t len = 0;

        if (startswith(d->name, "nvme")) {
                p = strdup_printf("%s/wwid", d->syspath);
                return p && access(p, F_OK) == 0;
        }
        if (is_mpath(d)) {
                _cleanup_free_ char *dir = strdup_printf("%s/slaves", d->syspath);
                _cleanup_strv_free_ char **l = NULL;
                if (!dir || sorted_dir_entries(dir, &l) < 0 || !l || !l[0])
                        return false;
                p = strdup_printf("%s/%s/device/vpd_pg83", dir, l[0]);
        } else
                p = strdup_printf("%s/device/vpd_pg83", d->syspath);
        if (!p || read_full_file(p, 64 * 1024, &data, &len) < 0)
                return false;
        return len > 4;
}

static bool disk_bootable(const char *path)
{
        _cleanup_close_ int fd = -1;
        unsigned char sector[512];
        ssize_t n;

        if (isempty(path))
                return false;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return false;
        n = pread(fd, sector, sizeof(sector), 0);
        return n == (ssize_t)sizeof(sector) && disk_sector_is_mbr(sector, (size_t)n);
}

static char *iscsi_host_component(const Disk *d, const char *prefix, int position)
{
        /* Go: strings.Split(resolved, "/")[4] for the host ("hostN") */
        _cleanup_strv_free_ char **parts = NULL;
        const char *p = d->syspath;
        int idx = 0;

        if (position >= 0) {
                for (;;) {
                        size_t n = strcspn(p, "/");
                        if (idx == position)
                                return strndup(p, n);
                        if (!p[n])
                                return NULL;
                        p += n + 1;
                        idx++;
                }
        }
        if (strv_split(d->syspath, "/", &parts) < 0)
                return NULL;
        STRV_FOREACH (x, parts)
                if (startswith(*x, prefix))
                        return strdup(*x);
        return NULL;
}

static int iscsi_reasons(const InventoryOptions *o, const Disk *d, char ***reasons)
{
        _cleanup_free_ char *state_path = strdup_printf("%s/device/state", d->syspath), *state = NULL,
                            *session = NULL, *tn_path = NULL, *target = NULL, *pattern = NULL;
        _cleanup_strv_free_ char **targets = NULL;
        bool found = false, any = false;
        int r;

        if (!state_path)
                return -ENOMEM;
        if (read_one_line_file(state_path, &state) < 0)
                return strv_extend(reasons, "Failed to read state of iSCSI disk");
        if (!streq(state, "running"))
                return strv_extend(reasons, "iSCSI disk is not in running state");
        session = iscsi_host_component(d, "session", -1);
        if (!session)
                return strv_extend(reasons, "Cannot find iSCSI session");
        tn_path = strdup_printf("/sys/class/iscsi_session/%s/targetname", session);
        if (!tn_path)
                return -ENOMEM;
        if (inv_read_line(o, tn_path, &target) < 0 || isempty(target))
                return strv_extend(reasons, "Cannot find iSCSI target name");
        /* /sys/firmware/ibft/target<N>/target-name, read without glob(3) so
         * that umockdev's redirection of opendir() applies */
        pattern = inv_path(o, "/sys/firmware/ibft");
        if (!pattern)
                return -ENOMEM;
        r = sorted_dir_entries(pattern, &targets);
        if (r < 0)
                return r;
        STRV_FOREACH (t, targets) {
                _cleanup_free_ char *tn = NULL, *name = NULL;
                if (!strstr(*t, "target"))
                        continue;
                any = true;
                tn = strdup_printf("%s/%s/target-name", pattern, *t);
                if (!tn)
                        return -ENOMEM;
                if (read_one_line_file(tn, &name) >= 0 && streq(name, target))
                        found = true;
        }
        if (!any)
                return strv_extend(reasons, "iBFT firmware is missing");
        if (!found)
                return strv_extend(reasons, "iSCSI disk is missing from iBFT");
        return 0;
}

int disk_partitions(const InventoryOptions *o, const char *name, DiskPartitionFlags flags,
                    DiskPartition **ret, size_t *ret_n)
{
        _cleanup_(udev_unrefp) struct udev *udev = udev_new();
        _cleanup_(udev_device_unrefp) struct udev_device *disk = NULL;
        _cleanup_(mount_table_done) MountTable mounts = {};
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        _cleanup_strv_free_ char **entries = NULL;
        _cleanup_free_ char *devpath = NULL;
        blkid_partlist pl = NULL;
        DiskPartition *l = NULL;
        size_t n = 0;
        int r;

        if (!udev)
                return -ENOMEM;
        disk = udev_device_new_from_subsystem_sysname(udev, "block", name);
        if (!disk)
                return -ENODEV;
        r = sorted_dir_entries(udev_device_get_syspath(disk), &entries);
        if (r < 0)
                return r;
        (void)mount_table_read(o, &mounts);

        /* libblkid reads the partition table once, for the labels and
         * UUIDs udev would have recorded (no udevd, or no database yet) */
        devpath = strdup_printf("/dev/%s", name);
        if (!devpath)
                return -ENOMEM;

        STRV_FOREACH (e, entries) {
                _cleanup_free_ char *sub = NULL;
                _cleanup_(udev_device_unrefp) struct udev_device *p = NULL;
                DiskPartition *nl, *part;
                const MountEntry *m;
                const char *v;
                dev_t devnum;

                /* ghw: every entry of /sys/block/<disk>/ starting with the disk's name */
                if (!startswith(*e, name))
                        continue;
                p = udev_device_new_from_subsystem_sysname(udev, "block", *e);
                if (!p)
                        continue;
                nl = reallocarray(l, n + 1, sizeof(*l));
                if (!nl)
                        goto oom;
                l = nl;
                part = &l[n++];
                *part = (DiskPartition){ .name = strdup(*e) };
                if (!part->name)
                        goto oom;
                devnum = udev_device_get_devnum(p);
                m = mount_table_find_dev(&mounts, major(devnum), minor(devnum));
                if (m && !(part->mount_point = strdup(m->mount_point)))
                        goto oom;
                if (m && !(part->fs_type = strdup(m->fstype)))
                        goto oom;
                if ((v = udev_device_get_property_value(p, "ID_PART_ENTRY_NAME")) &&
                    !(part->label = strdup(v)))
                        goto oom;
                if ((v = udev_device_get_property_value(p, "ID_PART_ENTRY_UUID")) &&
                    !(part->uuid = strdup(v)))
                        goto oom;
                if (!part->fs_type && (v = udev_device_get_property_value(p, "ID_FS_TYPE")) &&
                    !(part->fs_type = strdup(v)))
                        goto oom;

                if ((!part->label || !part->uuid) && !pl) {
                        if (!pr) {
                                pr = blkid_new_probe_from_filename(devpath);
                                if (pr) {
                                        blkid_probe_enable_superblocks(pr, 0);
                                        blkid_probe_enable_partitions(pr, 1);
                                        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
                                }
                        }
                        if (pr)
                                pl = blkid_probe_get_partitions(pr);
                }
                if (pl && (!part->label || !part->uuid)) {
                        /* match by partition number: the sysfs "partition" attribute */
                        char b[16];
                        _cleanup_free_ char *pn = strdup_printf("%s/partition", udev_device_get_syspath(p));
                        int partno = 0;
                        if (pn && safe_atoi(inv_read_attr(pn, b, sizeof(b)), &partno) >= 0) {
                                int cnt = blkid_partlist_numof_partitions(pl);
                                for (int k = 0; k < cnt; k++) {
                                        blkid_partition bp = blkid_partlist_get_partition(pl, k);
                                        if (!bp || blkid_partition_get_partno(bp) != partno)
                                                continue;
                                        if (!part->label && (v = blkid_partition_get_name(bp)) && *v &&
                                            !(part->label = strdup(v)))
                                                goto oom;
                                        if (!part->uuid && (v = blkid_partition_get_uuid(bp)) && *v &&
                                            !(part->uuid = strdup(v)))
                                                goto oom;
                                }
                        }
                }
                if (!part->fs_type && (flags & DISK_PARTITIONS_PROBE_FS)) {
                        _cleanup_free_ char *pdev = strdup_printf("/dev/%s", *e);
                        _cleanup_(blkid_free_probep) blkid_probe fp =
                                pdev ? blkid_new_probe_from_filename(pdev) : NULL;
                        if (fp && blkid_do_safeprobe(fp) == 0 &&
                            blkid_probe_lookup_value(fp, "TYPE", &v, NULL) == 0 &&
                            !(part->fs_type = strdup(v)))
                                goto oom;
                }
        }
        *ret = l;
        *ret_n = n;
        return 0;
oom:
        disk_partitions_free(l, n);
        return -ENOMEM;
}

static int eligibility(const InventoryOptions *o, const Disk *d, char ***reasons, bool *installation_media)
{
        DiskPartition *parts = NULL;
        size_t n = 0;
        Controller c;
        int r;

        (void)ghw_drive_type(d, &c);
        if (c == CONTROLLER_UNKNOWN && !is_mpath(d) && !is_lvm(d) && !startswith(d->name, "dasd") &&
            !startswith(d->name, "md") && strv_extend(reasons, "Disk has unknown storage controller") < 0)
                return -ENOMEM;
        if (is_lvm(d) && strv_extend(reasons, "Disk is an LVM logical volume") < 0)
                return -ENOMEM;
        if (is_iscsi(d)) {
                r = iscsi_reasons(o, d, reasons);
                if (r < 0)
                        return r;
        }

        r = disk_partitions(o, d->name, 0, &parts, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        /* an appliance disk (a partition named agent*) is eligible whatever
         * is mounted from it */
        for (size_t i = 0; i < n; i++)
                if (parts[i].label && startswith(parts[i].label, APPLIANCE_PREFIX))
                        goto done;
        for (size_t i = 0; i < n; i++) {
                if (parts[i].mount_point && endswith(parts[i].mount_point, "iso")) {
                        if (strv_extend(reasons,
                                        "Disk appears to be an ISO installation media (has partition "
                                        "with mountpoint suffix iso)") < 0)
                                goto oom;
                        *installation_media = true;
                }
                if (*installation_media)
                        continue;
                if (parts[i].mount_point && strv_extendf(reasons, "Disk has partition '%s' mounted on '%s'",
                                                         parts[i].name, parts[i].mount_point) < 0)
                        goto oom;
        }
done:
        disk_partitions_free(parts, n);
        return 0;
oom:
        disk_partitions_free(parts, n);
        return -ENOMEM;
}

static int disk_to_json(const InventoryOptions *o, const Disk *d, const Disk *all, size_t n_all,
                        json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object(), *elig = json_new_object();
        _cleanup_strv_free_ char **reasons = NULL;
        _cleanup_free_ char *path = disk_path(d), *hctl = disk_hctl(d), *holders = disk_holders(d),
                            *by_path = NULL, *wwn = NULL;
        _cleanup_free_ char *by_id = disk_by_id(d);
        const char *type = drive_type(d), *id;
        bool media = false, eligible;
        Controller c;
        int r;

        if (!j || !elig || !path || !hctl || !holders || !by_id)
                return -ENOMEM;
        r = eligibility(o, d, &reasons, &media);
        if (r < 0)
                return r;
        eligible = !reasons;
        if (streq(ghw_drive_type(d, &c), "ODD"))
                media = true; /* optical drives are installation media too */

        /* by_path: the link named after ID_PATH, unless another disk shares
         * the bus path (then neither gets one, to avoid mixing them up) */
        if (unknown_to_empty(d->id_path)) {
                bool shared = false;
                for (size_t i = 0; i < n_all; i++)
                        if (&all[i] != d && all[i].id_path && streq(all[i].id_path, d->id_path))
                                shared = true;
                if (!shared) {
                        by_path = strdup_printf("/dev/disk/by-path/%s", d->id_path);
                        if (!by_path)
                                return -ENOMEM;
                        if (!devlink_exists(d, by_path)) {
                                free(by_path);
                                by_path = NULL;
                        }
                }
        }
        if (unknown_to_empty(d->wwn))
                wwn = strdup(d->wwn);
        else if (by_id && startswith(by_id, "/dev/disk/by-id/wwn-"))
                wwn = strdup(by_id + strlen("/dev/disk/by-id/wwn-"));
        id = !isempty(by_id) ? by_id : by_path ?: path;

        if (json_add_bool_true(elig, "eligible", eligible) < 0 ||
            inv_add_nullable(elig, "not_eligible_reasons", reasons ? json_new_strv(reasons) : NULL) < 0)
                return -ENOMEM;

        if (json_add_bool_true(j, "bootable", disk_bootable(path)) < 0 ||
            json_add_string_nonempty(j, "by_id", by_id) < 0 ||
            json_add_string_nonempty(j, "by_path", by_path) < 0 ||
            json_add_string_nonempty(j, "drive_type", type) < 0 ||
            json_add_bool_true(j, "has_uuid", disk_has_uuid(d)) < 0 ||
            json_add_string_nonempty(j, "hctl", hctl) < 0 ||
            json_add_string_nonempty(j, "holders", holders) < 0 ||
            json_add_string_nonempty(j, "id", id) < 0 ||
            json_add(j, "installation_eligibility", TAKE_PTR(elig)) < 0 ||
            json_add_bool_true(j, "is_installation_media", media) < 0)
                return -ENOMEM;
        if (is_iscsi(d)) {
                _cleanup_free_ char *host = iscsi_host_component(d, NULL, 4), *ipp = NULL, *ip = NULL;
                _cleanup_(json_object_putp) json_object *isc = json_new_object();
                if (!isc)
                        return -ENOMEM;
                if (host && (ipp = strdup_printf("/sys/class/iscsi_host/%s/ipaddress", host)))
                        (void)inv_read_line(o, ipp, &ip);
                if (json_add_string_nonempty(isc, "host_ip_address", ip) < 0 ||
                    json_add(j, "iscsi", TAKE_PTR(isc)) < 0)
                        return -ENOMEM;
        }
        if (json_add_string_nonempty(j, "model", unknown_to_empty(d->model)) < 0 ||
            json_add_string_nonempty(j, "name", d->name) < 0 ||
            json_add_string_nonempty(j, "path", path) < 0 ||
            json_add_bool_true(j, "removable", d->removable) < 0 ||
            json_add_string_nonempty(j, "serial", unknown_to_empty(d->serial)) < 0 ||
            json_add_int64_nonzero(j, "size_bytes", (int64_t)d->size_bytes) < 0 ||
            json_add_string_nonempty(j, "vendor", unknown_to_empty(d->vendor)) < 0 ||
            json_add_string_nonempty(j, "wwn", wwn) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}

static int disk_cmp(const void *a, const void *b)
{
        return strcmp(((const Disk *)a)->name, ((const Disk *)b)->name);
}

static bool disk_skipped(const Disk *d)
{
        return d->hidden || (startswith(d->name, "dm-") && !is_mpath(d) && !is_lvm(d)) ||
               startswith(d->name, "zram");
}

static int appliance_json(const Disk *d, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *j = json_new_object(), *elig = json_new_object();
        _cleanup_free_ char *path = strdup_printf("/dev/%s", d->name);

        if (!j || !elig || !path || json_add_bool(elig, "eligible", true) < 0 ||
            inv_add_null(elig, "not_eligible_reasons") < 0 || json_add_string(j, "drive_type", "SSD") < 0 ||
            json_add_string(j, "id", path) < 0 ||
            json_add(j, "installation_eligibility", TAKE_PTR(elig)) < 0 ||
            json_add_string(j, "name", d->name) < 0 || json_add_string(j, "path", path) < 0 ||
            json_add_int64(j, "size_bytes", (int64_t)APPLIANCE_SIZE) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}

int disks_collect(const InventoryOptions *o, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *a = json_new_array();
        _cleanup_(udev_unrefp) struct udev *udev = udev_new();
        _cleanup_(udev_enumerate_unrefp) struct udev_enumerate *e = NULL;
        struct udev_list_entry *it;
        _cleanup_strv_free_ char **lab = NULL;
        Disk *disks = NULL;
        size_t n = 0;
        int r = 0;

        if (!a || !udev)
                return -ENOMEM;
        if (!isempty(o->lab_disks)) {
                r = strv_split(o->lab_disks, ", ", &lab);
                if (r < 0)
                        return r;
                /* "/dev/loop3" names the same disk as "loop3" */
                STRV_FOREACH (l, lab)
                        if (startswith(*l, "/dev/"))
                                memmove(*l, *l + 5, strlen(*l + 5) + 1);
        }
        e = udev_enumerate_new(udev);
        if (!e)
                return -ENOMEM;
        if (udev_enumerate_add_match_subsystem(e, "block") < 0 || udev_enumerate_scan_devices(e) < 0) {
                log_debug("cannot enumerate block devices, reporting no disks");
                *ret = TAKE_PTR(a);
                return 0;
        }
        udev_list_entry_foreach(it, udev_enumerate_get_list_entry(e))
        {
                _cleanup_(udev_device_unrefp) struct udev_device *d =
                        udev_device_new_from_syspath(udev, udev_list_entry_get_name(it));
                Disk *nd;

                if (!d || !streq_ptr(udev_device_get_devtype(d), "disk"))
                        continue;
                if (lab) {
                        /* a simulated host: its own disks and no other */
                        if (!strv_contains(lab, strempty(udev_device_get_sysname(d))))
                                continue;
                } else if (startswith(udev_device_get_sysname(d), "loop"))
                        /* ghw does not list loop devices at all */
                        continue;
                nd = reallocarray(disks, n + 1, sizeof(Disk));
                if (!nd) {
                        r = -ENOMEM;
                        goto finish;
                }
                disks = nd;
                r = disk_load(o, d, &disks[n]);
                if (r < 0)
                        goto finish;
                disks[n++].lab = lab != NULL;
        }
        if (n > 0)
                qsort(disks, n, sizeof(Disk), disk_cmp);

        /* the appliance: a device-mapper disk named agent* is the only disk */
        for (size_t i = 0; i < n; i++)
                if (startswith(disks[i].name, "dm-") && disks[i].dm_name &&
                    startswith(disks[i].dm_name, APPLIANCE_PREFIX)) {
                        json_object *j = NULL;
                        r = appliance_json(&disks[i], &j);
                        if (r >= 0)
                                r = json_append(a, j);
                        goto finish;
                }

        for (size_t i = 0; i < n; i++) {
                json_object *j = NULL;
                if (disk_skipped(&disks[i]))
                        continue;
                r = disk_to_json(o, &disks[i], disks, n, &j);
                if (r < 0)
                        goto finish;
                r = json_append(a, j);
                if (r < 0)
                        goto finish;
        }
finish:
        for (size_t i = 0; i < n; i++)
                disk_done(&disks[i]);
        free(disks);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}
