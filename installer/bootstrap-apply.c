/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "installer/bootstrap-apply.h"
#include "strutil.h"

static const char *const apply_names[_BOOTSTRAP_APPLY_MAX] = {
        [BOOTSTRAP_APPLY_MCD] = "mcd",
        [BOOTSTRAP_APPLY_NATIVE] = "native",
};

BootstrapApply bootstrap_apply_from_string(const char *s)
{
        for (size_t i = 0; i < ELEMENTSOF(apply_names); i++)
                if (streq_ptr(s, apply_names[i]))
                        return (BootstrapApply)i;
        return _BOOTSTRAP_APPLY_INVALID;
}

const char *bootstrap_apply_to_string(BootstrapApply a)
{
        return a >= 0 && a < _BOOTSTRAP_APPLY_MAX ? apply_names[a] : NULL;
}

char **mcd_podman_argv(const char *mco_image, const char *root, const char *once_from)
{
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *rootfs = NULL, *rpm_ostree = NULL;
        bool slash = streq(root, "/");

        rootfs = strdup_printf("%s:/rootfs:rw", root);
        rpm_ostree = strdup_printf("%s/usr/bin/rpm-ostree:/usr/bin/rpm-ostree", slash ? "" : root);
        if (!rootfs || !rpm_ostree)
                return NULL;
        {
                const char *words[] = { "podman",       "run",          "--net",
                                        "host",         "--pid=host",   "--volume",
                                        rootfs,         "--volume",     rpm_ostree,
                                        "--privileged", "--entrypoint", "/usr/bin/machine-config-daemon",
                                        mco_image,      "start",        "--node-name",
                                        "localhost",    "--root-mount", "/rootfs",
                                        "--once-from",  once_from,      "--skip-reboot" };
                for (size_t i = 0; i < ELEMENTSOF(words); i++)
                        if (strv_extend(&l, strempty(words[i])) < 0)
                                return NULL;
        }
        return TAKE_PTR(l);
}

void native_apply_plan_done(NativeApplyPlan *p)
{
        ign_config_free(p->config);
        strv_free(p->remove);
        strv_free(p->disable_first);
        strv_free(p->enable);
        strv_free(p->disable);
        strv_free(p->preset);
        strv_free(p->ignored);
        *p = (NativeApplyPlan){};
}

static int note_ignored(char ***l, const char *what, size_t n)
{
        return n > 0 ? strv_extendf(l, "%s (%zu)", what, n) : 0;
}

static int refuse(char **reterr, const char *path, const char *why)
{
        if (reterr)
                *reterr = strdup_printf("\"%s\" %s", path, why);
        return -EOPNOTSUPP;
}

int native_apply_plan(const IgnConfig *bootstrap, NativeApplyPlan *ret, char **reterr)
{
        _cleanup_(native_apply_plan_done) NativeApplyPlan p = {};
        _cleanup_ign_config_ IgnConfig *copy = NULL;
        const IgnStorage *s = &bootstrap->storage;
        int r;

        /* first what cannot be done, before anything is planned */
        for (size_t i = 0; i < s->n_files; i++) {
                const IgnFile *f = &s->files[i];
                _cleanup_free_ void *data = NULL;
                _cleanup_free_ char *err = NULL;
                size_t len;

                if (f->n_append > 0)
                        return refuse(
                                reterr, f->path,
                                "has append entries: the machine-config-daemon does not apply those either");
                if (f->contents.source && !startswith(f->contents.source, "data:"))
                        return refuse(
                                reterr, f->path,
                                "has contents that are not a data: URL: neither the native apply nor the "
                                "machine-config-daemon fetches them");
                if (!f->contents.source)
                        continue;
                r = ign_config_extract_file(bootstrap, f->path, IGN_PARSE_MAX, &data, &len, &err);
                if (r < 0) {
                        if (reterr)
                                *reterr = strdup_printf("cannot read the contents of \"%s\": %s", f->path,
                                                        strna(err));
                        return r == -ENOMEM ? r : -EOPNOTSUPP;
                }
        }

        copy = ign_config_copy(bootstrap);
        p.config = ign_config_new(bootstrap->version);
        if (!copy || !p.config)
                return -ENOMEM;

        /* what the MCD's once-from ignores, for the log */
        if (note_ignored(&p.ignored, "storage.directories", s->n_directories) < 0 ||
            note_ignored(&p.ignored, "storage.links", s->n_links) < 0 ||
            note_ignored(&p.ignored, "storage.disks", s->n_disks) < 0 ||
            note_ignored(&p.ignored, "storage.filesystems", s->n_filesystems) < 0 ||
            note_ignored(&p.ignored, "storage.raid", s->n_raid) < 0 ||
            note_ignored(&p.ignored, "storage.luks", s->n_luks) < 0 ||
            note_ignored(&p.ignored, "passwd.users", bootstrap->passwd.n_users) < 0 ||
            note_ignored(&p.ignored, "passwd.groups", bootstrap->passwd.n_groups) < 0 ||
            note_ignored(&p.ignored, "kernelArguments",
                         strv_length(bootstrap->kernel_arguments.should_exist) +
                                 strv_length(bootstrap->kernel_arguments.should_not_exist)) < 0 ||
            note_ignored(&p.ignored, "ignition.config.merge", bootstrap->ignition.config.n_merge) < 0 ||
            note_ignored(&p.ignored, "ignition.config.replace",
                         bootstrap->ignition.config.replace.source ? 1 : 0) < 0)
                return -ENOMEM;

        /* the files and units move into the plan's config; the rest goes
         * with the copy */
        p.config->storage.files = TAKE_PTR(copy->storage.files);
        p.config->storage.n_files = copy->storage.n_files;
        copy->storage.n_files = 0;
        p.config->systemd.units = TAKE_PTR(copy->systemd.units);
        p.config->systemd.n_units = copy->systemd.n_units;
        copy->systemd.n_units = 0;

        for (size_t i = 0; i < p.config->storage.n_files; i++) {
                IgnFile *f = &p.config->storage.files[i];
                /* writeFiles replaces whatever is there; no contents is an
                 * empty file */
                f->overwrite = (IgnBool){ .set = true, .value = true };
                if (!f->contents.source) {
                        f->contents.source = strdup("data:,");
                        if (!f->contents.source)
                                return -ENOMEM;
                }
        }

        for (size_t i = 0; i < p.config->systemd.n_units; i++) {
                IgnUnit *u = &p.config->systemd.units[i];
                bool masked = u->mask.set && u->mask.value;

                for (size_t k = 0; k < u->n_dropins; k++) {
                        IgnDropin *d = &u->dropins[k];
                        if (!isempty(d->contents))
                                continue;
                        /* "no content": the MCD removes an existing drop-in */
                        if (strv_extendf(&p.remove, "/etc/systemd/system/%s.d/%s", u->name, d->name) < 0)
                                return -ENOMEM;
                        free(d->contents);
                        d->contents = NULL;
                }
                if (masked)
                        ;
                else if (!isempty(u->contents)) {
                        if (strv_extend(&p.disable_first, u->name) < 0)
                                return -ENOMEM;
                } else if (u->mask.set) {
                        /* mask: false without contents: a previous mask goes */
                        if (strv_extendf(&p.remove, "/etc/systemd/system/%s", u->name) < 0)
                                return -ENOMEM;
                        u->mask = (IgnBool){};
                }
                if (u->enabled.set) {
                        r = strv_extend(u->enabled.value ? &p.enable : &p.disable, u->name);
                        if (r < 0)
                                return r;
                } else if (strv_extend(&p.preset, u->name) < 0)
                        return -ENOMEM;
                /* enabling is systemctl's job here, not a preset file */
                u->enabled = (IgnBool){};
        }
        *ret = p;
        p = (NativeApplyPlan){};
        return 0;
}
