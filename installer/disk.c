/* SPDX-License-Identifier: Apache-2.0 */
#include <blkid.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "installer/devclean.h"
#include "installer/disk.h"
#include "strutil.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(blkid_probe, blkid_free_probe)

int disk_resolve(const char *device, char **ret)
{
        char *p = realpath(device, NULL);

        if (!p)
                return negative_errno();
        *ret = p;
        return 0;
}

int disk_wipe_signatures(const char *device, char **reterr)
{
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        _cleanup_close_ int fd = -1;
        bool table_wiped = false;
        struct stat st;
        int r, n = 0;

        fd = open(device, O_RDWR | O_CLOEXEC | O_EXCL);
        if (fd < 0) {
                r = negative_errno();
                if (reterr)
                        *reterr = strdup_printf("cannot open %s exclusively: %s", device,
                                                r == -EBUSY ? "device is in use" : strerror(-r));
                return r;
        }
        pr = blkid_new_probe();
        if (!pr)
                return -ENOMEM;
        if (blkid_probe_set_device(pr, fd, 0, 0) < 0) {
                if (reterr)
                        *reterr = strdup_printf("cannot probe %s", device);
                return -EIO;
        }
        /* what wipefs enables: every superblock, even with a bad checksum,
         * and partition tables (GPT also behind a foreign protective MBR) */
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
                                                      BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
                                                      BLKID_SUBLKS_BADCSUM);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);

        while ((r = blkid_do_probe(pr)) == 0) {
                const char *type = NULL;

                if (blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0)
                        table_wiped = true;
                r = blkid_do_wipe(pr, 0);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("cannot erase a signature of %s", device);
                        return -EIO;
                }
                /* a corrupt probe that keeps finding the same thing must end */
                if (++n > 1024) {
                        if (reterr)
                                *reterr = strdup_printf("too many signatures on %s", device);
                        return -ELOOP;
                }
        }
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("cannot probe %s", device);
                return -EIO;
        }
        if (fsync(fd) < 0)
                return negative_errno();
        /* as wipefs: the kernel forgets the partitions of the erased table */
        if (table_wiped && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode))
                (void)ioctl(fd, BLKRRPART, NULL);
        return 0;
}

int disk_zero_first_sector(const char *device)
{
        _cleanup_close_ int fd = open(device, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        static const char zeros[512];
        ssize_t n;

        if (fd < 0)
                return negative_errno();
        n = pwrite(fd, zeros, sizeof(zeros), 0);
        if (n < 0)
                return negative_errno();
        if (n != (ssize_t)sizeof(zeros))
                return -EIO;
        return fsync(fd) < 0 ? negative_errno() : 0;
}

/* The kernel names of the disk and its partitions. */
static int disk_and_partitions(const char *kname, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *dir = strdup_printf("/sys/class/block/%s", kname);
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (!dir || strv_extend(&l, kname) < 0)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                _cleanup_free_ char *part = NULL;
                if (!startswith(de->d_name, kname))
                        continue;
                part = strdup_printf("%s/%s/partition", dir, de->d_name);
                if (!part)
                        return -ENOMEM;
                if (access(part, F_OK) == 0 && strv_extend(&l, de->d_name) < 0)
                        return -ENOMEM;
        }
        strv_sort(l + 1);
        *ret = TAKE_PTR(l);
        return 0;
}

static int kname_devnum(const char *kname, dev_t *ret)
{
        _cleanup_free_ char *p = strdup_printf("/sys/class/block/%s/dev", kname), *v = NULL;
        unsigned ma, mi;
        int r;

        if (!p)
                return -ENOMEM;
        r = read_one_line_file(p, &v);
        if (r < 0)
                return r;
        if (sscanf(v, "%u:%u", &ma, &mi) != 2)
                return -EINVAL;
        *ret = makedev(ma, mi);
        return 0;
}

_printf_(2, 3) static int add_reason(char ***reasons, const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);

        if (!s)
                return -ENOMEM;
        if (strv_contains(*reasons, s))
                return 0;
        return strv_extend(reasons, s);
}

/* "/dev/X mounted on Y" for the mounts of the given devices in mountinfo. */
static int check_mounts(const char *mountinfo, char *const *knames, const dev_t *devs, char ***reasons)
{
        _cleanup_free_ char *data = NULL;
        _cleanup_strv_free_ char **lines = NULL;
        int r;

        if (read_full_file(mountinfo, 16u * 1024 * 1024, &data, NULL) < 0)
                return 0; /* not ours to see: nothing to add */
        r = strv_split(data, "\n", &lines);
        if (r < 0)
                return r;
        STRV_FOREACH (line, lines) {
                _cleanup_strv_free_ char **f = NULL;
                unsigned ma, mi;

                /* id parent major:minor root mountpoint ... */
                if (strv_split(*line, " ", &f) < 0)
                        return -ENOMEM;
                if (strv_length(f) < 5 || sscanf(f[2], "%u:%u", &ma, &mi) != 2)
                        continue;
                for (size_t i = 0; knames[i]; i++)
                        if (devs[i] == makedev(ma, mi)) {
                                _cleanup_free_ char *node = strdup_printf("/dev/%s", knames[i]);
                                /* mountinfo escapes blanks as \040: fine for a message */
                                if (!node || add_reason(reasons, "%s mounted on %s", node, f[4]) < 0)
                                        return -ENOMEM;
                        }
        }
        return 0;
}

static int check_swaps(char *const *knames, char ***reasons)
{
        _cleanup_free_ char *data = NULL;
        _cleanup_strv_free_ char **lines = NULL;

        if (read_full_file("/proc/swaps", 1024 * 1024, &data, NULL) < 0)
                return 0;
        if (strv_split(data, "\n", &lines) < 0)
                return -ENOMEM;
        STRV_FOREACH (line, lines) {
                _cleanup_strv_free_ char **f = NULL;
                BlockRef b = {};

                if (strv_split(*line, " \t", &f) < 0)
                        return -ENOMEM;
                if (strv_length(f) < 1 || !startswith(f[0], "/"))
                        continue;
                if (block_ref_resolve(f[0], &b) < 0)
                        return -ENOMEM;
                for (size_t i = 0; b.kname && knames[i]; i++)
                        if (streq(b.kname, knames[i])) {
                                _cleanup_free_ char *node = strdup_printf("/dev/%s", knames[i]);
                                if (!node || add_reason(reasons, "%s is swap device", node) < 0) {
                                        block_ref_done(&b);
                                        return -ENOMEM;
                                }
                        }
                block_ref_done(&b);
        }
        return 0;
}

static int check_holders(char *const *knames, char ***reasons)
{
        for (size_t i = 0; knames[i]; i++) {
                _cleanup_free_ char *dir = strdup_printf("/sys/class/block/%s/holders", knames[i]);
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;

                if (!dir)
                        return -ENOMEM;
                d = opendir(dir);
                if (!d)
                        continue;
                while ((de = readdir(d))) {
                        _cleanup_free_ char *node = NULL, *holder = NULL, *dmname = NULL, *namefile = NULL;
                        if (de->d_name[0] == '.')
                                continue;
                        node = strdup_printf("/dev/%s", knames[i]);
                        namefile = strdup_printf("/sys/class/block/%s/dm/name", de->d_name);
                        if (!node || !namefile)
                                return -ENOMEM;
                        /* device-mapper holders are named after their table */
                        if (read_one_line_file(namefile, &dmname) >= 0 && !isempty(dmname))
                                holder = strdup_printf("%s (%s)", de->d_name, dmname);
                        else
                                holder = strdup(de->d_name);
                        if (!holder || add_reason(reasons, "%s in use by %s", node, holder) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* The kernel names of device (a disk) and its partitions, the disk first. */
static int device_knames(const char *device, char ***ret)
{
        BlockRef target = {};
        int r;

        r = block_ref_resolve(device, &target);
        if (r < 0)
                return r;
        r = target.kname ? disk_and_partitions(target.kname, ret) : -ENOTBLK;
        block_ref_done(&target);
        return r;
}

int disk_check_not_busy(const char *device, char ***ret_reasons)
{
        _cleanup_strv_free_ char **knames = NULL, **reasons = NULL;
        _cleanup_free_ dev_t *devs = NULL;
        size_t n;
        int r;

        r = device_knames(device, &knames);
        if (r < 0)
                return r;
        n = strv_length(knames);
        devs = calloc(n, sizeof(dev_t));
        if (!devs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (kname_devnum(knames[i], &devs[i]) < 0)
                        devs[i] = makedev(0, 0);

        /* our mount namespace, and the host's (PID 1's) when we run in a container */
        if ((r = check_mounts("/proc/self/mountinfo", knames, devs, &reasons)) < 0 ||
            (r = check_mounts("/proc/1/mountinfo", knames, devs, &reasons)) < 0 ||
            (r = check_swaps(knames, &reasons)) < 0 || (r = check_holders(knames, &reasons)) < 0)
                return r;

        if (strv_length(reasons) == 0) {
                /* nothing we can name, but is it free? (a process may hold it) */
                _cleanup_close_ int fd = open(device, O_RDONLY | O_CLOEXEC | O_EXCL);
                if (fd < 0 && errno == EBUSY && strv_extendf(&reasons, "%s is in use", device) < 0)
                        return -ENOMEM;
        }
        if (strv_length(reasons) > 0) {
                if (ret_reasons)
                        *ret_reasons = TAKE_PTR(reasons);
                return -EBUSY;
        }
        return 0;
}

int disk_partition_by_number(const char *device, unsigned n, char **ret)
{
        _cleanup_strv_free_ char **knames = NULL;
        int r;

        r = device_knames(device, &knames);
        if (r < 0)
                return r;
        for (size_t i = 1; knames[i]; i++) {
                _cleanup_free_ char *p = strdup_printf("/sys/class/block/%s/partition", knames[i]),
                                    *v = NULL;
                unsigned num;
                if (!p)
                        return -ENOMEM;
                if (read_one_line_file(p, &v) >= 0 && safe_atou(v, &num) >= 0 && num == n) {
                        *ret = strdup_printf("/dev/%s", knames[i]);
                        return *ret ? 0 : -ENOMEM;
                }
        }
        return -ENOENT;
}
