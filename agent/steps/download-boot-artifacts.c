/* SPDX-License-Identifier: Apache-2.0 */
/*
 * download-boot-artifacts: put the discovery kernel and initrd into the
 * host's /boot with a boot loader entry, so that reboot-for-reclaim boots
 * an installed host back into discovery.
 *
 * Argument: DownloadBootArtifactsRequest {"kernel_url", "initrd_url",
 * "rootfs_url", "host_fs_mount_dir"}. Output: the text "Successfully
 * downloaded boot artifacts" (exit 0), or the error with exit -1.
 *
 * As the Go agent (notes §6.10), under MNT = host_fs_mount_dir:
 *  1. MNT/boot/discovery/{vmlinuz,initrd} and MNT/boot/loader/entries/
 *     00-assisted-discovery.conf present: done;
 *  2. remount MNT/boot read-write (mount(2) MS_REMOUNT) and create
 *     MNT/boot/discovery and MNT/boot/loader/entries, up to 5 attempts;
 *  3. download the kernel and the initrd (5 attempts each, a minute apart;
 *     the agent's --cacert is the only CA when given, as the Go client's
 *     pool) into a private temporary directory (the Go agent's /tmp/boot);
 *  4. write the BLS entry "Assisted Installer Discovery", version 999,
 *     options random.trust_cpu=on ignition.firstboot
 *     ignition.platform.id=metal 'coreos.live.rootfs_url=URL';
 *  5. make room: when MNT/boot has less free space than the three files,
 *     `rpm-ostree cleanup --os=rhcos -r` on the host, then check again;
 *  6. copy the three files into MNT/boot (each written beside its target
 *     and renamed into place).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "http.h"
#include "log.h"
#include "spawn.h"
#include "step-util.h"
#include "strutil.h"

#define ATTEMPTS 5
#define DOWNLOAD_RETRY_DELAY (60 * USEC_PER_SEC)
#define ENTRY_NAME "00-assisted-discovery.conf"

static bool exists(const char *dir, const char *name)
{
        _cleanup_free_ char *p = strdup_printf("%s/%s", dir, name);

        return p && access(p, F_OK) == 0;
}

static int create_folders(const char *boot, char **reterr)
{
        _cleanup_free_ char *discovery = strdup_printf("%s/discovery", boot);
        _cleanup_free_ char *entries = strdup_printf("%s/loader/entries", boot);
        int r = 0;

        if (!discovery || !entries)
                return -ENOMEM;
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                if (mount(boot, boot, NULL, MS_REMOUNT, NULL) < 0) {
                        r = -errno;
                        log_warning_errno(r, "failed to mount boot folder [%s]: %m", boot);
                        continue;
                }
                sync();
                r = mkdir_p(discovery, 0755);
                if (r >= 0)
                        r = mkdir_p(entries, 0755);
                if (r >= 0)
                        return 0;
                log_warning_errno(r, "failed to create the boot artifact folders under [%s]: %m", boot);
        }
        {
                _cleanup_free_ char *t = go_errno_string(-r);
                *reterr = strdup_printf("failed creating folders: failed to create folders: %s", strna(t));
        }
        return r;
}

static int write_chunk(void *userdata, const char *data, size_t n)
{
        int fd = *(int *)userdata;

        while (n > 0) {
                ssize_t k = write(fd, data, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                data += k;
                n -= (size_t)k;
        }
        return 0;
}

static int download(HttpClient *c, const char *url, const char *path, char **reterr)
{
        _cleanup_free_ char *last = NULL;

        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                _cleanup_http_response_ HttpResponse resp = {};
                _cleanup_free_ char *err = NULL;
                _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                HttpRequest req = { .path = url, .on_data = write_chunk, .userdata = &fd };
                int r;

                if (fd < 0) {
                        r = -errno;
                        *reterr = strdup_printf("failed writing file %s: %s", path, strerror(-r));
                        return r;
                }
                if (attempt > 0) {
                        r = sleep_usec(DOWNLOAD_RETRY_DELAY);
                        if (r < 0)
                                return r;
                }
                r = http_request(c, &req, &resp, &err);
                if (r >= 0 && resp.status >= 200 && resp.status < 300)
                        return 0;
                free(last);
                last = strdup_printf(
                        "failed downloading boot artifact from %s, status code received: %ld, attempt "
                        "%d/%d, download error: %s",
                        url, r >= 0 ? resp.status : 0L, attempt, ATTEMPTS, r >= 0 ? "<nil>" : strna(err));
                log_warning("%s", strna(last));
        }
        *reterr = strdup_printf("failed getting %s: %s", url, strna(last));
        return -EIO;
}

static int file_size(const char *path, uint64_t *ret)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        *ret = (uint64_t)st.st_size;
        return 0;
}

static int free_space(const char *dir, uint64_t *ret)
{
        struct statfs s;

        if (statfs(dir, &s) < 0)
                return -errno;
        *ret = (uint64_t)s.f_bavail * (uint64_t)s.f_bsize;
        return 0;
}

static int ensure_space(const StepContext *ctx, const char *boot, const char *tmp, char **reterr)
{
        const char *names[] = { "vmlinuz", "initrd", ENTRY_NAME };
        uint64_t need = 0, avail = 0;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *p = strdup_printf("%s/%s", tmp, names[i]);
                uint64_t s = 0;

                if (!p)
                        return -ENOMEM;
                r = file_size(p, &s);
                if (r < 0) {
                        *reterr = strdup_printf(
                                "failed to ensure boot folder has enough space: failed to calculate "
                                "size of boot artifacts: %s",
                                strerror(-r));
                        return r;
                }
                need += s;
        }
        r = free_space(boot, &avail);
        if (r < 0) {
                *reterr = strdup_printf(
                        "failed to ensure boot folder has enough space: failed to get free space of "
                        "boot folder [%s]: %s",
                        boot, strerror(-r));
                return r;
        }
        if (avail > need)
                return 0;

        log_warning("Boot folder does not have enough space. Wanted: %llu bytes, Available: %llu bytes. "
                    "Attempting "
                    "to reclaim space",
                    (unsigned long long)need, (unsigned long long)avail);
        {
                char *argv[] = { (char *)"rpm-ostree", (char *)"cleanup", (char *)"--os=rhcos", (char *)"-r",
                                 NULL };
                _cleanup_spawn_result_ SpawnResult res = {};

                r = step_host_run(ctx, argv, 0, &res);
                if (r < 0 || res.exit_status != 0) {
                        *reterr = strdup_printf(
                                "failed to ensure boot folder has enough space: failed to reclaim boot "
                                "folder space: Cleanup command for RHCOS failed: %s: %s",
                                r < 0 ? "" : strempty(res.out), r < 0 ? strerror(-r) : strempty(res.err));
                        return -ENOSPC;
                }
        }
        r = free_space(boot, &avail);
        if (r < 0 || avail < need) {
                *reterr = strdup_printf(
                        "failed to ensure boot folder has enough space: boot folder does not have enough "
                        "space, artifacts size: %llu, free space: %llu",
                        (unsigned long long)need, (unsigned long long)avail);
                return -ENOSPC;
        }
        return 0;
}

static int copy_into(const char *src, const char *dst)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        /* kernel and initrd are tens of MiB: read whole, written atomically */
        r = read_full_file(src, (size_t)2 * 1024 * 1024 * 1024, &data, &len);
        if (r < 0)
                return r;
        return write_file_atomic(dst, data, len, 0644);
}

static int remove_tree_flat(const char *dir)
{
        const char *names[] = { "vmlinuz", "initrd", ENTRY_NAME };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *p = strdup_printf("%s/%s", dir, names[i]);
                if (p)
                        (void)unlink(p);
        }
        return rmdir(dir) < 0 ? -errno : 0;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL;
        _cleanup_(http_client_freep) HttpClient *client = NULL;
        _cleanup_free_ char *boot = NULL, *discovery = NULL, *entries = NULL, *err = NULL, *entry = NULL,
                            *tmp = NULL;
        const char *mnt, *kernel_url, *initrd_url, *rootfs_url;
        HttpClientOptions ho = { .retry = HTTP_RETRY_NONE };
        char tmpl[] = "/tmp/cradle-boot-XXXXXX";
        int r;

        r = step_parse_arg(args[0], &model_download_boot_artifacts_request, ret, &req);
        if (r <= 0)
                return r;
        mnt = model_get_string(req, "host_fs_mount_dir");
        kernel_url = model_get_string(req, "kernel_url");
        initrd_url = model_get_string(req, "initrd_url");
        rootfs_url = model_get_string(req, "rootfs_url");

        boot = strdup_printf("%s/boot", mnt);
        discovery = strdup_printf("%s/boot/discovery", mnt);
        entries = strdup_printf("%s/boot/loader/entries", mnt);
        if (!boot || !discovery || !entries)
                return -ENOMEM;
        if (exists(discovery, "vmlinuz") && exists(discovery, "initrd") && exists(entries, ENTRY_NAME)) {
                log_info("Boot artifacts already exist on the host");
                return step_succeed(ret, strdup("Successfully downloaded boot artifacts"));
        }

        r = create_folders(boot, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return step_fail(ret, -1, "%s", strna(err));

        if (!mkdtemp(tmpl))
                return step_fail(ret, -1, "failed creating folders: %s", strerror(errno));
        tmp = strdup(tmpl);
        if (!tmp)
                return -ENOMEM;

        if (ctx->config && !isempty(ctx->config->cacert)) {
                ho.ca_file = ctx->config->cacert;
                ho.ca_replace_system = true;
        }
        r = http_client_new(&ho, &client, &err);
        if (r < 0) {
                (void)remove_tree_flat(tmp);
                return step_fail(ret, -1,
                                 "failed downloading boot artifacts: failed creating secure assisted "
                                 "service client: %s",
                                 strna(err));
        }
        {
                const struct {
                        const char *url, *name, *what;
                } files[] = { { kernel_url, "vmlinuz", "kernel" }, { initrd_url, "initrd", "initrd" } };

                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        _cleanup_free_ char *path = strdup_printf("%s/%s", tmp, files[i].name);

                        if (!path)
                                return -ENOMEM;
                        free(err);
                        err = NULL;
                        r = download(client, files[i].url, path, &err);
                        if (r < 0) {
                                (void)remove_tree_flat(tmp);
                                if (r == -ECANCELED)
                                        return r;
                                return step_fail(ret, -1,
                                                 "failed downloading boot artifacts: failed downloading %s "
                                                 "to host: %s",
                                                 files[i].what, strna(err));
                        }
                }
        }
        log_info("Successfully downloaded boot artifacts");

        entry = strdup_printf("title Assisted Installer Discovery\nversion 999\n"
#if defined(__s390x__)
                              "options random.trust_cpu=on ai.ip_cfg_override=1 ignition.firstboot "
                              "ignition.platform.id=metal coreos.live.rootfs_url=%s\n"
#else
                              "options random.trust_cpu=on ignition.firstboot ignition.platform.id=metal "
                              "'coreos.live.rootfs_url=%s'\n"
#endif
                              "linux /boot/discovery/vmlinuz\ninitrd /boot/discovery/initrd",
                              rootfs_url);
        if (!entry)
                return -ENOMEM;
        {
                _cleanup_free_ char *p = strdup_printf("%s/%s", tmp, ENTRY_NAME);
                if (!p)
                        return -ENOMEM;
                r = write_file_atomic(p, entry, strlen(entry), 0644);
                if (r < 0) {
                        (void)remove_tree_flat(tmp);
                        return step_fail(
                                ret, -1,
                                "failed creating bootloader config file on host: failed writing bootloader "
                                "config content to %s: %s",
                                p, strerror(-r));
                }
        }
        log_info("Successfully created bootloader config.");

        free(err);
        err = NULL;
        r = ensure_space(ctx, boot, tmp, &err);
        if (r < 0) {
                (void)remove_tree_flat(tmp);
                return r == -ENOMEM ? r : step_fail(ret, -1, "%s", strna(err));
        }

        {
                const struct {
                        const char *name, *dir;
                } files[] = { { "vmlinuz", discovery }, { "initrd", discovery }, { ENTRY_NAME, entries } };

                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        _cleanup_free_ char *src = strdup_printf("%s/%s", tmp, files[i].name);
                        _cleanup_free_ char *dst = strdup_printf("%s/%s", files[i].dir, files[i].name);

                        if (!src || !dst)
                                return -ENOMEM;
                        r = copy_into(src, dst);
                        if (r < 0) {
                                (void)remove_tree_flat(tmp);
                                return step_fail(ret, -1, "failed copying boot artifacts into %s: %s", dst,
                                                 strerror(-r));
                        }
                }
        }
        (void)remove_tree_flat(tmp);
        return step_succeed(ret, strdup("Successfully downloaded boot artifacts"));
}

const StepHandler step_download_boot_artifacts = {
        .type = STEP_DOWNLOAD_BOOT_ARTIFACTS,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
