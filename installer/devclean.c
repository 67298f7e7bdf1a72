/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "hostexec.h"
#include "installer/devclean.h"
#include "installer/disk.h"
#include "log.h"
#include "shell.h"
#include "strutil.h"

void block_ref_done(BlockRef *b)
{
        free(b->path);
        free(b->kname);
        free(b->disk_kname);
        *b = (BlockRef){};
}

int block_ref_resolve(const char *path, BlockRef *ret)
{
        _cleanup_free_ char *real = NULL, *sys = NULL, *link = NULL, *part = NULL;
        BlockRef b = {};
        struct stat st;
        char buf[PATH_MAX];
        ssize_t n;
        char *slash;

        b.path = strdup(path);
        if (!b.path)
                return -ENOMEM;
        real = realpath(path, NULL);
        if (!real || stat(real, &st) < 0 || !S_ISBLK(st.st_mode)) {
                *ret = b;
                return 0;
        }
        sys = strdup_printf("/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
        if (!sys)
                goto oom;
        n = readlink(sys, buf, sizeof(buf) - 1);
        if (n <= 0) {
                *ret = b;
                return 0;
        }
        buf[n] = 0;
        /* .../block/loop0/loop0p1 or .../block/loop0 */
        slash = strrchr(buf, '/');
        b.kname = strdup(slash ? slash + 1 : buf);
        if (!b.kname)
                goto oom;
        part = strdup_printf("%s/partition", sys);
        if (!part)
                goto oom;
        if (slash && access(part, F_OK) == 0) {
                char *parent;
                *slash = 0;
                parent = strrchr(buf, '/');
                b.disk_kname = strdup(parent ? parent + 1 : buf);
        } else
                b.disk_kname = strdup(b.kname);
        if (!b.disk_kname)
                goto oom;
        *ret = b;
        return 0;
oom:
        block_ref_done(&b);
        return -ENOMEM;
}

bool block_ref_on_disk(const BlockRef *b, const char *target_kname)
{
        return b->kname && target_kname &&
               (streq(b->kname, target_kname) || streq_ptr(b->disk_kname, target_kname));
}

/* ---- parsers ---------------------------------------------------------------- */

void vgpv_free(VgPv *l, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(l[i].vg);
                free(l[i].pv);
        }
        free(l);
}

int cleanup_parse_vgs(const char *out, VgPv **ret, size_t *ret_n)
{
        _cleanup_strv_free_ char **lines = NULL;
        VgPv *l = NULL;
        size_t n = 0;

        if (strv_split(strempty(out), "\n", &lines) < 0)
                return -ENOMEM;
        STRV_FOREACH (line, lines) {
                _cleanup_strv_free_ char **f = NULL;
                VgPv *g;

                if (strv_split(*line, " \t", &f) < 0)
                        goto oom;
                if (strv_length(f) < 2)
                        continue;
                g = realloc(l, (n + 1) * sizeof(*l));
                if (!g)
                        goto oom;
                l = g;
                l[n].vg = strdup(f[0]);
                l[n].pv = strdup(f[1]);
                n++;
                if (!l[n - 1].vg || !l[n - 1].pv)
                        goto oom;
        }
        *ret = l;
        *ret_n = n;
        return 0;
oom:
        vgpv_free(l, n);
        return -ENOMEM;
}

int cleanup_parse_pvs(const char *out, char ***ret)
{
        _cleanup_strv_free_ char **lines = NULL, **l = NULL;

        if (strv_split(strempty(out), "\n", &lines) < 0)
                return -ENOMEM;
        STRV_FOREACH (line, lines) {
                strstrip(*line);
                if (isempty(*line))
                        continue;
                if (strv_extend(&l, *line) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int cleanup_parse_dmsetup_ls(const char *out, char ***ret)
{
        _cleanup_strv_free_ char **lines = NULL, **l = NULL;

        if (strv_split(strempty(out), "\n", &lines) < 0)
                return -ENOMEM;
        STRV_FOREACH (line, lines) {
                _cleanup_strv_free_ char **f = NULL;

                strstrip(*line);
                if (isempty(*line) || streq(*line, "No devices found"))
                        continue;
                if (strv_split(*line, " \t", &f) < 0)
                        return -ENOMEM;
                if (strv_length(f) < 1)
                        continue;
                if (strv_extend(&l, f[0]) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int cleanup_parse_dmsetup_deps(const char *out, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        const char *p = strchr(strempty(out), ':');

        for (p = p ? p + 1 : ""; (p = strchr(p, '('));) {
                const char *e = strchr(p, ')');
                _cleanup_free_ char *name = NULL;
                if (!e)
                        break;
                name = strndup(p + 1, (size_t)(e - p - 1));
                if (!name)
                        return -ENOMEM;
                /* "-o devname" gives kernel names; without it, "major, minor" */
                if (!isempty(name) && !strchr(name, ',') && strv_extend(&l, name) < 0)
                        return -ENOMEM;
                p = e + 1;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

void md_arrays_free(MdArray *l, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(l[i].device);
                strv_free(l[i].members);
        }
        free(l);
}

int cleanup_parse_mdadm_scan(const char *out, MdArray **ret, size_t *ret_n)
{
        _cleanup_strv_free_ char **lines = NULL;
        MdArray *l = NULL;
        size_t n = 0;

        if (strv_split(strempty(out), "\n", &lines) < 0)
                return -ENOMEM;
        for (size_t i = 0; lines[i]; i++) {
                _cleanup_strv_free_ char **f = NULL;
                const char *devices;
                MdArray *g;

                if (strv_split(lines[i], " \t", &f) < 0)
                        goto oom;
                if (strv_length(f) < 2 || !streq(f[0], "ARRAY"))
                        continue;
                g = realloc(l, (n + 1) * sizeof(*l));
                if (!g)
                        goto oom;
                l = g;
                l[n] = (MdArray){ .device = strdup(f[1]) };
                n++;
                if (!l[n - 1].device)
                        goto oom;
                if (!lines[i + 1])
                        continue;
                devices = startswith(lines[i + 1] + strspn(lines[i + 1], " \t"), "devices=");
                if (!devices)
                        continue;
                if (strv_split(devices, ",", &l[n - 1].members) < 0)
                        goto oom;
                i++;
        }
        *ret = l;
        *ret_n = n;
        return 0;
oom:
        md_arrays_free(l, n);
        return -ENOMEM;
}

/* ---- planners -------------------------------------------------------------- */

int cleanup_plan_vgs(const VgPv *vgs, const BlockRef *pv_refs, size_t n, const char *target_kname,
                     char ***ret_remove, char ***ret_spanning)
{
        _cleanup_strv_free_ char **remove = NULL, **spanning = NULL;

        for (size_t i = 0; i < n; i++) {
                bool elsewhere = false;

                if (!block_ref_on_disk(&pv_refs[i], target_kname))
                        continue;
                if (strv_contains(remove, vgs[i].vg) || strv_contains(spanning, vgs[i].vg))
                        continue;
                for (size_t j = 0; j < n; j++)
                        if (streq(vgs[j].vg, vgs[i].vg) && !block_ref_on_disk(&pv_refs[j], target_kname))
                                elsewhere = true;
                if (strv_extend(elsewhere ? &spanning : &remove, vgs[i].vg) < 0)
                        return -ENOMEM;
        }
        *ret_remove = TAKE_PTR(remove);
        if (ret_spanning)
                *ret_spanning = TAKE_PTR(spanning);
        return 0;
}

int cleanup_plan_pvs(char *const *pvs, const BlockRef *refs, const char *target_kname, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        size_t i = 0;

        STRV_FOREACH (pv, pvs) {
                if (block_ref_on_disk(&refs[i], target_kname) && !strv_contains(l, *pv) &&
                    strv_extend(&l, *pv) < 0)
                        return -ENOMEM;
                i++;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int cleanup_plan_dm(const DmDeps *dms, size_t n, const char *target_kname, char ***ret)
{
        _cleanup_strv_free_ char **selected = NULL, **first = NULL, **last = NULL;

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < dms[i].n_deps; j++)
                        if (block_ref_on_disk(&dms[i].deps[j], target_kname)) {
                                if (!strv_contains(selected, dms[i].name) &&
                                    strv_extend(&selected, dms[i].name) < 0)
                                        return -ENOMEM;
                                break;
                        }
        /* a thin pool X is made of X_tdata and X_tmeta: X goes too */
        STRV_FOREACH (s, selected) {
                const char *suffix = endswith(*s, "_tdata")   ? "_tdata"
                                     : endswith(*s, "_tmeta") ? "_tmeta"
                                                              : NULL;
                _cleanup_free_ char *base = NULL;
                bool exists = false;

                if (!suffix)
                        continue;
                base = strndup(*s, strlen(*s) - strlen(suffix));
                if (!base)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        exists = exists || streq(dms[i].name, base);
                if (exists && !strv_contains(first, base) && !strv_contains(selected, base) &&
                    strv_extend(&first, base) < 0)
                        return -ENOMEM;
        }
        STRV_FOREACH (s, selected) {
                bool data = endswith(*s, "_tdata") || endswith(*s, "_tmeta");
                if (strv_extend(data ? &last : &first, *s) < 0)
                        return -ENOMEM;
        }
        STRV_FOREACH (s, last)
                if (strv_extend(&first, *s) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(first);
        return 0;
}

void md_plan_done(MdPlan *p)
{
        strv_free(p->arrays);
        strv_free(p->members);
        *p = (MdPlan){};
}

int cleanup_plan_md(const MdArray *arrays, BlockRef *const *member_refs, size_t n, const char *target_kname,
                    MdPlan *ret)
{
        MdPlan p = {};

        for (size_t i = 0; i < n; i++) {
                size_t nm = strv_length(arrays[i].members);
                bool any = false;

                for (size_t j = 0; j < nm; j++) {
                        if (!block_ref_on_disk(&member_refs[i][j], target_kname))
                                continue;
                        any = true;
                        if (!strv_contains(p.members, arrays[i].members[j]) &&
                            strv_extend(&p.members, arrays[i].members[j]) < 0)
                                goto oom;
                }
                if (any && !strv_contains(p.arrays, arrays[i].device) &&
                    strv_extend(&p.arrays, arrays[i].device) < 0)
                        goto oom;
        }
        *ret = p;
        return 0;
oom:
        md_plan_done(&p);
        return -ENOMEM;
}

/* ---- running it ----------------------------------------------------------- */

void cleanup_result_done(CleanupResult *r)
{
        strv_free(r->commands);
        strv_free(r->errors);
        *r = (CleanupResult){};
}

/* Runs a host command; its stdout in *ret_out (may be NULL). A failure is
 * recorded in the result with the upstream error text. */
static int run(HostExec *host, CleanupResult *res, char *const *argv, char **ret_out)
{
        _cleanup_spawn_result_ SpawnResult sr = {};
        _cleanup_free_ char *line = shell_join(argv);
        SpawnOptions o = { .argv = argv, .merge_output = true, .timeout = 10 * 60 * USEC_PER_SEC };
        int r;

        if (line) {
                log_info("Running %s", line);
                (void)strv_extend(&res->commands, line);
        }
        r = host_exec_run(host, &o, &sr);
        if (r < 0 || sr.exit_status != 0) {
                _cleanup_free_ char *text = host_exec_failure_text(argv, r, &sr);
                log_warning("%s", strna(text));
                (void)strv_extend(&res->errors, text ? text : "command failed");
                return r < 0 ? r : -EIO;
        }
        if (ret_out)
                *ret_out = TAKE_PTR(sr.out);
        return 0;
}

static void refs_free(BlockRef *refs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                block_ref_done(&refs[i]);
        free(refs);
}

static int resolve_all(char *const *paths, size_t n, BlockRef **ret)
{
        BlockRef *refs = calloc(n + 1, sizeof(BlockRef));

        if (!refs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (block_ref_resolve(paths[i], &refs[i]) < 0) {
                        refs_free(refs, n);
                        return -ENOMEM;
                }
        *ret = refs;
        return 0;
}

/* LVM and device-mapper on the disk with kernel name kname (the Go
 * cleanupDevice). */
static void cleanup_device(HostExec *host, const char *kname, CleanupResult *res)
{
        char *vgs_argv[] = { (char *)"vgs", (char *)"--noheadings", (char *)"-o", (char *)"vg_name,pv_name",
                             NULL };
        char *pvs_argv[] = { (char *)"pvs", (char *)"--noheadings", (char *)"-o", (char *)"pv_name", NULL };
        char *ls_argv[] = { (char *)"dmsetup", (char *)"ls", NULL };
        _cleanup_free_ char *out = NULL;

        /* volume groups */
        if (run(host, res, vgs_argv, &out) >= 0) {
                VgPv *vgs = NULL;
                size_t n = 0;
                if (cleanup_parse_vgs(out, &vgs, &n) >= 0) {
                        _cleanup_strv_free_ char **pvs = NULL, **remove = NULL, **spanning = NULL;
                        BlockRef *refs = NULL;
                        for (size_t i = 0; i < n; i++)
                                (void)strv_extend(&pvs, vgs[i].pv);
                        if (strv_length(pvs) == n && resolve_all(pvs, n, &refs) >= 0 &&
                            cleanup_plan_vgs(vgs, refs, n, kname, &remove, &spanning) >= 0) {
                                STRV_FOREACH (s, spanning)
                                        log_warning(
                                                "volume group %s also uses other disks: not removing it, "
                                                "only the physical volumes on %s",
                                                *s, kname);
                                STRV_FOREACH (vg, remove) {
                                        char *argv[] = { (char *)"vgremove", *vg, (char *)"-y", NULL };
                                        (void)run(host, res, argv, NULL);
                                }
                        }
                        refs_free(refs, n);
                        vgpv_free(vgs, n);
                }
        }

        /* physical volumes */
        free(out);
        out = NULL;
        if (run(host, res, pvs_argv, &out) >= 0) {
                _cleanup_strv_free_ char **pvs = NULL, **remove = NULL;
                BlockRef *refs = NULL;
                size_t n;
                if (cleanup_parse_pvs(out, &pvs) >= 0 &&
                    resolve_all(pvs, n = strv_length(pvs), &refs) >= 0) {
                        if (cleanup_plan_pvs(pvs, refs, kname, &remove) >= 0)
                                STRV_FOREACH (pv, remove) {
                                        char *argv[] = { (char *)"pvremove", *pv, (char *)"-y",
                                                         (char *)"-ff", NULL };
                                        (void)run(host, res, argv, NULL);
                                }
                        refs_free(refs, n);
                }
        }

        /* device-mapper */
        free(out);
        out = NULL;
        if (run(host, res, ls_argv, &out) >= 0) {
                _cleanup_strv_free_ char **names = NULL, **remove = NULL;
                DmDeps *dms = NULL;
                size_t n = 0;

                if (cleanup_parse_dmsetup_ls(out, &names) >= 0 && (n = strv_length(names)) > 0 &&
                    (dms = calloc(n, sizeof(DmDeps)))) {
                        for (size_t i = 0; i < n; i++) {
                                _cleanup_free_ char *dout = NULL;
                                _cleanup_strv_free_ char **deps = NULL, **paths = NULL;
                                char *argv[] = { (char *)"dmsetup", (char *)"deps", (char *)"-o",
                                                 (char *)"devname", names[i],       NULL };
                                dms[i].name = names[i];
                                if (run(host, res, argv, &dout) < 0 ||
                                    cleanup_parse_dmsetup_deps(dout, &deps) < 0)
                                        continue;
                                STRV_FOREACH (d, deps)
                                        (void)strv_extendf(&paths, "/dev/%s", *d);
                                dms[i].n_deps = strv_length(paths);
                                if (resolve_all(paths, dms[i].n_deps, &dms[i].deps) < 0)
                                        dms[i].n_deps = 0;
                        }
                        if (cleanup_plan_dm(dms, n, kname, &remove) >= 0)
                                STRV_FOREACH (dm, remove) {
                                        char *argv[] = { (char *)"dmsetup", (char *)"remove",
                                                         (char *)"--retry", *dm, NULL };
                                        (void)run(host, res, argv, NULL);
                                }
                        for (size_t i = 0; i < n; i++)
                                refs_free(dms[i].deps, dms[i].n_deps);
                        free(dms);
                }
        }
}

int cleanup_install_device(HostExec *host, const char *device, CleanupResult *ret)
{
        char *scan_argv[] = { (char *)"mdadm",    (char *)"-v",     (char *)"--query",
                              (char *)"--detail", (char *)"--scan", NULL };
        _cleanup_free_ char *out = NULL;
        CleanupResult res = {};
        BlockRef target = {};
        int r;

        r = block_ref_resolve(device, &target);
        if (r < 0)
                return r;
        if (!target.kname) {
                (void)strv_extendf(&res.errors, "%s is not a block device", device);
                block_ref_done(&target);
                *ret = res;
                return -EIO;
        }
        log_info("Cleaning up installation device %s (%s)", device, target.kname);

        cleanup_device(host, target.kname, &res);

        /* md RAID with a member on the disk */
        if (run(host, &res, scan_argv, &out) >= 0) {
                MdArray *arrays = NULL;
                size_t n = 0;
                if (cleanup_parse_mdadm_scan(out, &arrays, &n) >= 0) {
                        BlockRef **refs = calloc(n + 1, sizeof(BlockRef *));
                        MdPlan plan = {};
                        bool ok = refs != NULL;
                        for (size_t i = 0; ok && i < n; i++)
                                ok = resolve_all(arrays[i].members, strv_length(arrays[i].members),
                                                 &refs[i]) >= 0;
                        if (ok && cleanup_plan_md(arrays, refs, n, target.kname, &plan) >= 0) {
                                /* what sits on the arrays first */
                                STRV_FOREACH (a, plan.arrays) {
                                        BlockRef ar = {};
                                        if (block_ref_resolve(*a, &ar) >= 0 && ar.kname)
                                                cleanup_device(host, ar.kname, &res);
                                        block_ref_done(&ar);
                                }
                                STRV_FOREACH (a, plan.arrays) {
                                        char *argv[] = { (char *)"mdadm", (char *)"--stop", *a, NULL };
                                        (void)run(host, &res, argv, NULL);
                                }
                                STRV_FOREACH (m, plan.members) {
                                        char *argv[] = { (char *)"mdadm", (char *)"--zero-superblock", *m,
                                                         NULL };
                                        (void)run(host, &res, argv, NULL);
                                }
                        }
                        md_plan_done(&plan);
                        for (size_t i = 0; refs && i < n; i++)
                                refs_free(refs[i], strv_length(arrays[i].members));
                        free(refs);
                        md_arrays_free(arrays, n);
                }
        }

        /* signatures: wipefs --all --force */
        {
                _cleanup_free_ char *err = NULL;
                log_info("Running wipefs --all --force %s (libblkid)", device);
                (void)strv_extendf(&res.commands, "wipefs --all --force %s (libblkid)", device);
                r = disk_wipe_signatures(device, &err);
                if (r < 0) {
                        log_warning("cannot wipe the signatures of %s: %s", device, strna(err));
                        (void)strv_extendf(&res.errors, "wipefs %s: %s", device, err ? err : strerror(-r));
                }
        }

        block_ref_done(&target);
        r = strv_length(res.errors) > 0 ? -EIO : 0;
        *ret = res;
        return r;
}
