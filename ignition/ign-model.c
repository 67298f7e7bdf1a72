/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The spec tables and the generic engine over them: parse, serialize, copy,
 * free, merge, duplicate checks. Field order in each table is the order Go's
 * encoding/json writes (the generated types' field order), so what cradle
 * writes reads like what Ignition's own tools write.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "ign-internal.h"
#include "jsonutil.h"
#include "strutil.h"

/* ---- Unknown keys ---------------------------------------------------------- */

struct IgnExtra {
        size_t n;
        char **keys;
        json_object **values;
};

static IgnExtra *extra_free(IgnExtra *e)
{
        if (!e)
                return NULL;
        for (size_t i = 0; i < e->n; i++) {
                free(e->keys[i]);
                json_object_put(e->values[i]);
        }
        free(e->keys);
        free(e->values);
        free(e);
        return NULL;
}

static int extra_set(IgnExtra **e, const char *key, json_object *v)
{
        char **k;
        json_object **vals;

        if (!*e) {
                *e = calloc(1, sizeof(IgnExtra));
                if (!*e)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < (*e)->n; i++)
                if (streq((*e)->keys[i], key)) {
                        json_object_put((*e)->values[i]);
                        (*e)->values[i] = json_object_get(v);
                        return 0;
                }
        k = reallocarray((*e)->keys, (*e)->n + 1, sizeof(char *));
        if (!k)
                return -ENOMEM;
        (*e)->keys = k;
        vals = reallocarray((*e)->values, (*e)->n + 1, sizeof(json_object *));
        if (!vals)
                return -ENOMEM;
        (*e)->values = vals;
        k[(*e)->n] = strdup(key);
        if (!k[(*e)->n])
                return -ENOMEM;
        vals[(*e)->n] = json_object_get(v);
        (*e)->n++;
        return 0;
}

static int extra_copy(IgnExtra **dst, const IgnExtra *src)
{
        int r;

        if (!src)
                return 0;
        for (size_t i = 0; i < src->n; i++) {
                _cleanup_(json_object_putp) json_object *copy = NULL;
                if (json_object_deep_copy(src->values[i], &copy, NULL) < 0)
                        return -ENOMEM;
                r = extra_set(dst, src->keys[i], copy);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- Keys (Go's Key() methods) --------------------------------------------- */

static char *key_resource(const void *o)
{
        return strdup(strempty(((const IgnResource *)o)->source));
}
static char *key_header(const void *o)
{
        return strdup(strempty(((const IgnHttpHeader *)o)->name));
}
/* IgnFile, IgnDirectory and IgnLink start alike: path is at the same offset. */
static char *key_file(const void *o)
{
        return strdup(strempty(((const IgnFile *)o)->path));
}
static char *key_directory(const void *o)
{
        return strdup(strempty(((const IgnDirectory *)o)->path));
}
static char *key_link(const void *o)
{
        return strdup(strempty(((const IgnLink *)o)->path));
}
static char *key_disk(const void *o)
{
        return strdup(strempty(((const IgnDisk *)o)->device));
}
static char *key_partition(const void *o)
{
        const IgnPartition *p = o;
        if (p->number.set && p->number.value != 0)
                return strdup_printf("number:%" PRIi64, p->number.value);
        if (p->label)
                return strdup_printf("label:%s", p->label);
        return strdup("");
}
static char *key_filesystem(const void *o)
{
        return strdup(strempty(((const IgnFilesystem *)o)->device));
}
static char *key_raid(const void *o)
{
        return strdup(strempty(((const IgnRaid *)o)->name));
}
static char *key_luks(const void *o)
{
        return strdup(strempty(((const IgnLuks *)o)->name));
}
static char *key_tang(const void *o)
{
        return strdup(strempty(((const IgnTang *)o)->url));
}
static char *key_unit(const void *o)
{
        return strdup(strempty(((const IgnUnit *)o)->name));
}
static char *key_dropin(const void *o)
{
        return strdup(strempty(((const IgnDropin *)o)->name));
}
static char *key_user(const void *o)
{
        return strdup(strempty(((const IgnPasswdUser *)o)->name));
}
static char *key_group(const void *o)
{
        return strdup(strempty(((const IgnPasswdGroup *)o)->name));
}

/* ---- The tables ------------------------------------------------------------ */

#define S(st, json, member, since, flags) \
        { \
                json, IGN_FK_STRING, offsetof(st, member), 0, NULL, since, flags \
        }
#define I(st, json, member, since, flags) \
        { \
                json, IGN_FK_INT, offsetof(st, member), 0, NULL, since, flags \
        }
#define B(st, json, member, since, flags) \
        { \
                json, IGN_FK_BOOL, offsetof(st, member), 0, NULL, since, flags \
        }
#define V(st, json, member, since, flags) \
        { \
                json, IGN_FK_STRV, offsetof(st, member), 0, NULL, since, flags \
        }
#define O(st, json, member, t, since, flags) \
        { \
                json, IGN_FK_OBJECT, offsetof(st, member), 0, &t, since, flags \
        }
#define L(st, json, member, t, since, flags) \
        { \
                json, IGN_FK_LIST, offsetof(st, member), offsetof(st, n_##member), &t, since, flags \
        }
#define TYPE(var, st, k, ...) \
        static const IgnField var##_fields[] = { __VA_ARGS__, {} }; \
        const IgnType var = { #st, sizeof(st), offsetof(st, extra), var##_fields, k }

#define P IGN_FF_PRIMITIVE
#define A (IGN_FF_PRIMITIVE | IGN_FF_ALWAYS)

extern const IgnType ign_type_header, ign_type_verification, ign_type_resource_file,
        ign_type_resource_config;

TYPE(ign_type_header, IgnHttpHeader, key_header, S(IgnHttpHeader, "name", name, IGN_V3_1, A),
     S(IgnHttpHeader, "value", value, IGN_V3_1, 0));
TYPE(ign_type_verification, IgnVerification, NULL, S(IgnVerification, "hash", hash, IGN_V3_0, 0));
/* File contents, append and luks key files: compression since 3.0. */
TYPE(ign_type_resource_file, IgnResource, key_resource,
     S(IgnResource, "compression", compression, IGN_V3_0, 0),
     L(IgnResource, "httpHeaders", http_headers, ign_type_header, IGN_V3_1, 0),
     S(IgnResource, "source", source, IGN_V3_0, 0),
     O(IgnResource, "verification", verification, ign_type_verification, IGN_V3_0, 0));
/* Config merge/replace and CAs: 3.0's ConfigReference/CaReference had no
 * compression. */
TYPE(ign_type_resource_config, IgnResource, key_resource,
     S(IgnResource, "compression", compression, IGN_V3_1, 0),
     L(IgnResource, "httpHeaders", http_headers, ign_type_header, IGN_V3_1, 0),
     S(IgnResource, "source", source, IGN_V3_0, 0),
     O(IgnResource, "verification", verification, ign_type_verification, IGN_V3_0, 0));

extern const IgnType ign_type_ignition_config, ign_type_proxy, ign_type_tls, ign_type_security,
        ign_type_timeouts, ign_type_ignition;
TYPE(ign_type_ignition_config, IgnIgnitionConfig, NULL,
     L(IgnIgnitionConfig, "merge", merge, ign_type_resource_config, IGN_V3_0, 0),
     O(IgnIgnitionConfig, "replace", replace, ign_type_resource_config, IGN_V3_0, 0));
TYPE(ign_type_proxy, IgnProxy, NULL, S(IgnProxy, "httpProxy", http_proxy, IGN_V3_1, 0),
     S(IgnProxy, "httpsProxy", https_proxy, IGN_V3_1, 0), V(IgnProxy, "noProxy", no_proxy, IGN_V3_1, 0));
TYPE(ign_type_tls, IgnTls, NULL,
     L(IgnTls, "certificateAuthorities", certificate_authorities, ign_type_resource_config, IGN_V3_0, 0));
TYPE(ign_type_security, IgnSecurity, NULL, O(IgnSecurity, "tls", tls, ign_type_tls, IGN_V3_0, 0));
TYPE(ign_type_timeouts, IgnTimeouts, NULL,
     I(IgnTimeouts, "httpResponseHeaders", http_response_headers, IGN_V3_0, 0),
     I(IgnTimeouts, "httpTotal", http_total, IGN_V3_0, 0));
TYPE(ign_type_ignition, IgnIgnition, NULL,
     O(IgnIgnition, "config", config, ign_type_ignition_config, IGN_V3_0, 0),
     O(IgnIgnition, "proxy", proxy, ign_type_proxy, IGN_V3_1, 0),
     O(IgnIgnition, "security", security, ign_type_security, IGN_V3_0, 0),
     O(IgnIgnition, "timeouts", timeouts, ign_type_timeouts, IGN_V3_0, 0),
     S(IgnIgnition, "version", version, IGN_V3_0, A));

extern const IgnType ign_type_owner;
TYPE(ign_type_owner, IgnNodeOwner, NULL, I(IgnNodeOwner, "id", id, IGN_V3_0, 0),
     S(IgnNodeOwner, "name", name, IGN_V3_0, 0));

#define NODE_FIELDS(st) \
        O(st, "group", group, ign_type_owner, IGN_V3_0, 0), B(st, "overwrite", overwrite, IGN_V3_0, 0), \
                S(st, "path", path, IGN_V3_0, A), O(st, "user", user, ign_type_owner, IGN_V3_0, 0)

extern const IgnType ign_type_directory, ign_type_link;
TYPE(ign_type_file, IgnFile, key_file, NODE_FIELDS(IgnFile),
     L(IgnFile, "append", append, ign_type_resource_file, IGN_V3_0, IGN_FF_IGNORE_DUPS),
     O(IgnFile, "contents", contents, ign_type_resource_file, IGN_V3_0, 0),
     I(IgnFile, "mode", mode, IGN_V3_0, 0));
TYPE(ign_type_directory, IgnDirectory, key_directory, NODE_FIELDS(IgnDirectory),
     I(IgnDirectory, "mode", mode, IGN_V3_0, 0));
TYPE(ign_type_link, IgnLink, key_link, NODE_FIELDS(IgnLink), B(IgnLink, "hard", hard, IGN_V3_0, 0),
     S(IgnLink, "target", target, IGN_V3_0, 0));

extern const IgnType ign_type_partition, ign_type_disk, ign_type_filesystem, ign_type_raid, ign_type_tang,
        ign_type_clevis_custom, ign_type_clevis, ign_type_cex, ign_type_luks, ign_type_storage;
TYPE(ign_type_partition, IgnPartition, key_partition, S(IgnPartition, "guid", guid, IGN_V3_0, 0),
     S(IgnPartition, "label", label, IGN_V3_0, 0), I(IgnPartition, "number", number, IGN_V3_0, P),
     B(IgnPartition, "resize", resize, IGN_V3_2, 0),
     B(IgnPartition, "shouldExist", should_exist, IGN_V3_0, 0),
     I(IgnPartition, "sizeMiB", size_mib, IGN_V3_0, 0), I(IgnPartition, "startMiB", start_mib, IGN_V3_0, 0),
     S(IgnPartition, "typeGuid", type_guid, IGN_V3_0, 0),
     B(IgnPartition, "wipePartitionEntry", wipe_partition_entry, IGN_V3_0, 0));
TYPE(ign_type_disk, IgnDisk, key_disk, S(IgnDisk, "device", device, IGN_V3_0, A),
     L(IgnDisk, "partitions", partitions, ign_type_partition, IGN_V3_0, 0),
     B(IgnDisk, "wipeTable", wipe_table, IGN_V3_0, 0));
TYPE(ign_type_filesystem, IgnFilesystem, key_filesystem, S(IgnFilesystem, "device", device, IGN_V3_0, A),
     S(IgnFilesystem, "format", format, IGN_V3_0, 0), S(IgnFilesystem, "label", label, IGN_V3_0, 0),
     V(IgnFilesystem, "mountOptions", mount_options, IGN_V3_1, IGN_FF_IGNORE_DUPS),
     V(IgnFilesystem, "options", options, IGN_V3_0, IGN_FF_IGNORE_DUPS),
     S(IgnFilesystem, "path", path, IGN_V3_0, 0), S(IgnFilesystem, "uuid", uuid, IGN_V3_0, 0),
     B(IgnFilesystem, "wipeFilesystem", wipe_filesystem, IGN_V3_0, 0));
TYPE(ign_type_raid, IgnRaid, key_raid, V(IgnRaid, "devices", devices, IGN_V3_0, 0),
     S(IgnRaid, "level", level, IGN_V3_0, 0), S(IgnRaid, "name", name, IGN_V3_0, A),
     V(IgnRaid, "options", options, IGN_V3_0, IGN_FF_IGNORE_DUPS),
     I(IgnRaid, "spares", spares, IGN_V3_0, 0));
TYPE(ign_type_tang, IgnTang, key_tang, S(IgnTang, "advertisement", advertisement, IGN_V3_4, 0),
     S(IgnTang, "thumbprint", thumbprint, IGN_V3_2, 0), S(IgnTang, "url", url, IGN_V3_2, P));
TYPE(ign_type_clevis_custom, IgnClevisCustom, NULL, S(IgnClevisCustom, "config", config, IGN_V3_2, 0),
     B(IgnClevisCustom, "needsNetwork", needs_network, IGN_V3_2, 0),
     S(IgnClevisCustom, "pin", pin, IGN_V3_2, 0));
TYPE(ign_type_clevis, IgnClevis, NULL, O(IgnClevis, "custom", custom, ign_type_clevis_custom, IGN_V3_2, 0),
     L(IgnClevis, "tang", tang, ign_type_tang, IGN_V3_2, 0),
     I(IgnClevis, "threshold", threshold, IGN_V3_2, 0), B(IgnClevis, "tpm2", tpm2, IGN_V3_2, 0));
TYPE(ign_type_cex, IgnCex, NULL, B(IgnCex, "enabled", enabled, IGN_V3_5, 0));
TYPE(ign_type_luks, IgnLuks, key_luks, O(IgnLuks, "cex", cex, ign_type_cex, IGN_V3_5, 0),
     O(IgnLuks, "clevis", clevis, ign_type_clevis, IGN_V3_2, 0), S(IgnLuks, "device", device, IGN_V3_2, 0),
     B(IgnLuks, "discard", discard, IGN_V3_4, 0),
     O(IgnLuks, "keyFile", key_file, ign_type_resource_file, IGN_V3_2, 0),
     S(IgnLuks, "label", label, IGN_V3_2, 0), S(IgnLuks, "name", name, IGN_V3_2, A),
     V(IgnLuks, "openOptions", open_options, IGN_V3_4, IGN_FF_IGNORE_DUPS),
     V(IgnLuks, "options", options, IGN_V3_2, IGN_FF_IGNORE_DUPS), S(IgnLuks, "uuid", uuid, IGN_V3_2, 0),
     B(IgnLuks, "wipeVolume", wipe_volume, IGN_V3_2, 0));
TYPE(ign_type_storage, IgnStorage, NULL,
     L(IgnStorage, "directories", directories, ign_type_directory, IGN_V3_0, IGN_FF_NODE),
     L(IgnStorage, "disks", disks, ign_type_disk, IGN_V3_0, 0),
     L(IgnStorage, "files", files, ign_type_file, IGN_V3_0, IGN_FF_NODE),
     L(IgnStorage, "filesystems", filesystems, ign_type_filesystem, IGN_V3_0, 0),
     L(IgnStorage, "links", links, ign_type_link, IGN_V3_0, IGN_FF_NODE),
     L(IgnStorage, "luks", luks, ign_type_luks, IGN_V3_2, 0),
     L(IgnStorage, "raid", raid, ign_type_raid, IGN_V3_0, 0));

extern const IgnType ign_type_dropin, ign_type_unit, ign_type_systemd;
TYPE(ign_type_dropin, IgnDropin, key_dropin, S(IgnDropin, "contents", contents, IGN_V3_0, 0),
     S(IgnDropin, "name", name, IGN_V3_0, A));
TYPE(ign_type_unit, IgnUnit, key_unit, S(IgnUnit, "contents", contents, IGN_V3_0, 0),
     L(IgnUnit, "dropins", dropins, ign_type_dropin, IGN_V3_0, 0),
     B(IgnUnit, "enabled", enabled, IGN_V3_0, 0), B(IgnUnit, "mask", mask, IGN_V3_0, 0),
     S(IgnUnit, "name", name, IGN_V3_0, A));
TYPE(ign_type_systemd, IgnSystemd, NULL, L(IgnSystemd, "units", units, ign_type_unit, IGN_V3_0, 0));

extern const IgnType ign_type_group, ign_type_user, ign_type_passwd, ign_type_kargs;
TYPE(ign_type_group, IgnPasswdGroup, key_group, I(IgnPasswdGroup, "gid", gid, IGN_V3_0, 0),
     S(IgnPasswdGroup, "name", name, IGN_V3_0, A),
     S(IgnPasswdGroup, "passwordHash", password_hash, IGN_V3_0, 0),
     B(IgnPasswdGroup, "shouldExist", should_exist, IGN_V3_2, 0),
     B(IgnPasswdGroup, "system", system, IGN_V3_0, 0));
TYPE(ign_type_user, IgnPasswdUser, key_user, S(IgnPasswdUser, "gecos", gecos, IGN_V3_0, 0),
     V(IgnPasswdUser, "groups", groups, IGN_V3_0, 0), S(IgnPasswdUser, "homeDir", home_dir, IGN_V3_0, 0),
     S(IgnPasswdUser, "name", name, IGN_V3_0, A),
     B(IgnPasswdUser, "noCreateHome", no_create_home, IGN_V3_0, 0),
     B(IgnPasswdUser, "noLogInit", no_log_init, IGN_V3_0, 0),
     B(IgnPasswdUser, "noUserGroup", no_user_group, IGN_V3_0, 0),
     S(IgnPasswdUser, "passwordHash", password_hash, IGN_V3_0, 0),
     S(IgnPasswdUser, "primaryGroup", primary_group, IGN_V3_0, 0),
     V(IgnPasswdUser, "sshAuthorizedKeys", ssh_authorized_keys, IGN_V3_0, 0),
     S(IgnPasswdUser, "shell", shell, IGN_V3_0, 0),
     B(IgnPasswdUser, "shouldExist", should_exist, IGN_V3_2, 0),
     B(IgnPasswdUser, "system", system, IGN_V3_0, 0), I(IgnPasswdUser, "uid", uid, IGN_V3_0, 0));
TYPE(ign_type_passwd, IgnPasswd, NULL, L(IgnPasswd, "groups", groups, ign_type_group, IGN_V3_0, 0),
     L(IgnPasswd, "users", users, ign_type_user, IGN_V3_0, 0));
TYPE(ign_type_kargs, IgnKernelArguments, NULL,
     V(IgnKernelArguments, "shouldExist", should_exist, IGN_V3_3, IGN_FF_KARG),
     V(IgnKernelArguments, "shouldNotExist", should_not_exist, IGN_V3_3, IGN_FF_KARG));

TYPE(ign_type_config, IgnConfig, NULL, O(IgnConfig, "ignition", ignition, ign_type_ignition, IGN_V3_0, 0),
     O(IgnConfig, "kernelArguments", kernel_arguments, ign_type_kargs, IGN_V3_3, 0),
     O(IgnConfig, "passwd", passwd, ign_type_passwd, IGN_V3_0, 0),
     O(IgnConfig, "storage", storage, ign_type_storage, IGN_V3_0, 0),
     O(IgnConfig, "systemd", systemd, ign_type_systemd, IGN_V3_0, 0));

#undef S
#undef I
#undef B
#undef V
#undef O
#undef L
#undef TYPE
#undef P
#undef A

static bool strv_isempty_const(char *const *l)
{
        return !l || !l[0];
}

typedef char *str_t;
typedef char **strv_t;

/* ---- Field access ------------------------------------------------------------ */

#define FIELD(obj, f, type) ((type *)((char *)(obj) + (f)->offset))
#define CFIELD(obj, f, type) ((const type *)((const char *)(obj) + (f)->offset))
#define COUNT(obj, f) ((size_t *)((char *)(obj) + (f)->count_offset))
#define CCOUNT(obj, f) (*(const size_t *)((const char *)(obj) + (f)->count_offset))
#define EXTRA(obj, t) ((IgnExtra **)((char *)(obj) + (t)->extra_offset))
#define CEXTRA(obj, t) (*(IgnExtra *const *)((const char *)(obj) + (t)->extra_offset))
#define ELEM(base, t, i) ((void *)((char *)(base) + (i) * (t)->size))
#define CELEM(base, t, i) ((const void *)((const char *)(base) + (i) * (t)->size))

static void list_free(const IgnType *t, void *items, size_t n)
{
        for (size_t i = 0; i < n; i++)
                ign_obj_done(t, ELEM(items, t, i));
        free(items);
}

void ign_obj_done(const IgnType *t, void *obj)
{
        for (const IgnField *f = t->fields; f->name; f++)
                switch (f->kind) {
                case IGN_FK_STRING:
                        free(*FIELD(obj, f, str_t));
                        break;
                case IGN_FK_STRV:
                        strv_free(*FIELD(obj, f, strv_t));
                        break;
                case IGN_FK_OBJECT:
                        ign_obj_done(f->type, FIELD(obj, f, void));
                        break;
                case IGN_FK_LIST:
                        list_free(f->type, *FIELD(obj, f, void *), *COUNT(obj, f));
                        break;
                case IGN_FK_INT:
                case IGN_FK_BOOL:
                        break;
                }
        extra_free(*EXTRA(obj, t));
        memset(obj, 0, t->size);
}

void ign_obj_drop_extras(const IgnType *t, void *obj)
{
        for (const IgnField *f = t->fields; f->name; f++)
                if (f->kind == IGN_FK_OBJECT)
                        ign_obj_drop_extras(f->type, FIELD(obj, f, void));
                else if (f->kind == IGN_FK_LIST)
                        for (size_t i = 0; i < *COUNT(obj, f); i++)
                                ign_obj_drop_extras(f->type, ELEM(*FIELD(obj, f, void *), f->type, i));
        *EXTRA(obj, t) = extra_free(*EXTRA(obj, t));
}

static int list_copy(const IgnType *t, void **dst, size_t *dst_n, const void *src, size_t n)
{
        void *items;
        int r;

        *dst = NULL;
        *dst_n = 0;
        if (n == 0)
                return 0;
        items = calloc(n, t->size);
        if (!items)
                return -ENOMEM;
        *dst = items;
        for (size_t i = 0; i < n; i++) {
                r = ign_obj_copy(t, ELEM(items, t, i), CELEM(src, t, i));
                *dst_n = i + 1; /* the partly copied element is freed with the list */
                if (r < 0)
                        return r;
        }
        return 0;
}

/* dst must be zeroed; on failure it holds what was copied (free it). */
int ign_obj_copy(const IgnType *t, void *dst, const void *src)
{
        int r;

        for (const IgnField *f = t->fields; f->name; f++)
                switch (f->kind) {
                case IGN_FK_STRING: {
                        const char *s = *CFIELD(src, f, str_t);
                        if (s && !(*FIELD(dst, f, str_t) = strdup(s)))
                                return -ENOMEM;
                        break;
                }
                case IGN_FK_STRV: {
                        char *const *l = *CFIELD(src, f, strv_t);
                        if (l && !(*FIELD(dst, f, strv_t) = strv_copy(l)))
                                return -ENOMEM;
                        break;
                }
                case IGN_FK_INT:
                        *FIELD(dst, f, IgnInt) = *CFIELD(src, f, IgnInt);
                        break;
                case IGN_FK_BOOL:
                        *FIELD(dst, f, IgnBool) = *CFIELD(src, f, IgnBool);
                        break;
                case IGN_FK_OBJECT:
                        r = ign_obj_copy(f->type, FIELD(dst, f, void), CFIELD(src, f, void));
                        if (r < 0)
                                return r;
                        break;
                case IGN_FK_LIST:
                        r = list_copy(f->type, FIELD(dst, f, void *), COUNT(dst, f), *CFIELD(src, f, void *),
                                      CCOUNT(src, f));
                        if (r < 0)
                                return r;
                        break;
                }
        return extra_copy(EXTRA(dst, t), CEXTRA(src, t));
}

bool ign_obj_is_empty(const IgnType *t, const void *obj)
{
        const IgnExtra *e = CEXTRA(obj, t);

        if (e && e->n > 0)
                return false;
        for (const IgnField *f = t->fields; f->name; f++)
                switch (f->kind) {
                case IGN_FK_STRING:
                        if (*CFIELD(obj, f, str_t))
                                return false;
                        break;
                case IGN_FK_STRV:
                        if (!strv_isempty_const(*CFIELD(obj, f, strv_t)))
                                return false;
                        break;
                case IGN_FK_INT:
                        if (CFIELD(obj, f, IgnInt)->set)
                                return false;
                        break;
                case IGN_FK_BOOL:
                        if (CFIELD(obj, f, IgnBool)->set)
                                return false;
                        break;
                case IGN_FK_OBJECT:
                        if (!ign_obj_is_empty(f->type, CFIELD(obj, f, void)))
                                return false;
                        break;
                case IGN_FK_LIST:
                        if (CCOUNT(obj, f) > 0)
                                return false;
                        break;
                }
        return true;
}

/* ---- Paths and reports --------------------------------------------------------- */

char *ign_path_field(const char *path, const char *name)
{
        return strdup_printf("%s.%s", path, name);
}

char *ign_path_index(const char *path, size_t i)
{
        return strdup_printf("%s[%zu]", path, i);
}

int ign_report_addv(IgnReport *r, IgnSeverity severity, const char *path, const char *fmt, va_list ap)
{
        _cleanup_free_ char *p = NULL, *m = NULL;
        IgnReportEntry *e;

        if (!r)
                return 0;
        p = strdup(path);
        if (vasprintf(&m, fmt, ap) < 0) {
                m = NULL;
                return -ENOMEM;
        }
        if (!p)
                return -ENOMEM;
        e = reallocarray(r->entries, r->n_entries + 1, sizeof(IgnReportEntry));
        if (!e)
                return -ENOMEM;
        r->entries = e;
        e[r->n_entries++] = (IgnReportEntry){ severity, TAKE_PTR(p), TAKE_PTR(m) };
        return 0;
}

int ign_report_add(IgnReport *r, IgnSeverity severity, const char *path, const char *fmt, ...)
{
        va_list ap;
        int ret;

        va_start(ap, fmt);
        ret = ign_report_addv(r, severity, path, fmt, ap);
        va_end(ap);
        return ret;
}

void ign_report_done(IgnReport *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_entries; i++) {
                free(r->entries[i].path);
                free(r->entries[i].message);
        }
        free(r->entries);
        *r = IGN_REPORT_INIT;
}

bool ign_report_has_errors(const IgnReport *r)
{
        for (size_t i = 0; r && i < r->n_entries; i++)
                if (r->entries[i].severity == IGN_ERROR)
                        return true;
        return false;
}

char *ign_report_format(const IgnReport *r)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_JSON_DOC);
        char *s;

        for (size_t i = 0; r && i < r->n_entries; i++)
                if (buf_appendf(&b, "%s: %s%s\n", r->entries[i].path,
                                r->entries[i].severity == IGN_WARNING ? "warning: " : "",
                                r->entries[i].message) < 0)
                        return NULL;
        if (buf_take(&b, &s, NULL) < 0)
                return NULL;
        return s;
}

/* ---- Versions ------------------------------------------------------------------ */

static const char *const version_names[_IGN_VERSION_MAX] = {
        [IGN_V3_0] = "3.0.0", [IGN_V3_1] = "3.1.0", [IGN_V3_2] = "3.2.0",
        [IGN_V3_3] = "3.3.0", [IGN_V3_4] = "3.4.0", [IGN_V3_5] = "3.5.0",
};

const char *ign_version_to_string(IgnVersion v)
{
        return ign_version_valid(v) ? version_names[v] : NULL;
}

IgnVersion ign_version_from_string(const char *s)
{
        if (!s)
                return _IGN_VERSION_INVALID;
        for (IgnVersion v = 0; v < _IGN_VERSION_MAX; v++)
                if (streq(s, version_names[v]) || (strlen(s) == 3 && strneq(s, version_names[v], 3)))
                        return v;
        return _IGN_VERSION_INVALID;
}

/* A semantic version (go-semver's grammar, simplified): MAJOR.MINOR.PATCH
 * with optional -PRERELEASE and +BUILD. */
static bool is_semver(const char *s)
{
        for (int part = 0; part < 3; part++) {
                size_t n = strspn(s, "0123456789");
                if (n == 0 || (n > 1 && s[0] == '0'))
                        return false;
                s += n;
                if (part < 2) {
                        if (*s != '.')
                                return false;
                        s++;
                }
        }
        if (*s == '-') {
                s++;
                if (!*s)
                        return false;
                s += strspn(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-.");
        }
        if (*s == '+') {
                s++;
                if (!*s)
                        return false;
                s += strspn(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-.");
        }
        return *s == 0;
}

/* ---- Parsing ---------------------------------------------------------------------- */

typedef struct ParseCtx {
        IgnVersion version;
        IgnReport *report;
        bool failed;
} ParseCtx;

static int parse_object(const IgnType *t, json_object *j, void *obj, const char *path, ParseCtx *ctx);

static int type_error(ParseCtx *ctx, const char *path, const char *want, json_object *v)
{
        ctx->failed = true;
        return ign_report_add(ctx->report, IGN_ERROR, path, "expected %s, got %s", want, json_kind_name(v));
}

static int parse_string(json_object *v, char **ret, const char *path, ParseCtx *ctx)
{
        const char *s;
        size_t len;

        if (!json_object_is_type(v, json_type_string))
                return type_error(ctx, path, "a string", v);
        s = json_object_get_string(v);
        len = (size_t)json_object_get_string_len(v);
        if (strlen(s) != len) {
                ctx->failed = true;
                return ign_report_add(ctx->report, IGN_ERROR, path, "string contains a NUL character");
        }
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int parse_field(const IgnField *f, json_object *v, void *obj, const char *path, ParseCtx *ctx)
{
        int r;

        /* Go's decoder leaves the target alone for null, whatever its type. */
        if (json_object_is_type(v, json_type_null))
                return 0;

        switch (f->kind) {
        case IGN_FK_STRING:
                free(*FIELD(obj, f, str_t));
                *FIELD(obj, f, str_t) = NULL;
                return parse_string(v, FIELD(obj, f, str_t), path, ctx);
        case IGN_FK_INT: {
                int64_t x;
                if (!json_object_is_type(v, json_type_int))
                        return type_error(ctx, path, "an integer", v);
                x = json_object_get_int64(v);
                if (x == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX) {
                        ctx->failed = true;
                        return ign_report_add(ctx->report, IGN_ERROR, path, "integer out of range");
                }
                *FIELD(obj, f, IgnInt) = (IgnInt){ true, x };
                return 0;
        }
        case IGN_FK_BOOL:
                if (!json_object_is_type(v, json_type_boolean))
                        return type_error(ctx, path, "a boolean", v);
                *FIELD(obj, f, IgnBool) = (IgnBool){ true, json_object_get_boolean(v) };
                return 0;
        case IGN_FK_STRV: {
                size_t n;
                char **l;
                if (!json_object_is_type(v, json_type_array))
                        return type_error(ctx, path, "an array", v);
                n = json_object_array_length(v);
                strv_free(*FIELD(obj, f, strv_t));
                *FIELD(obj, f, strv_t) = NULL;
                if (n == 0)
                        return 0;
                l = calloc(n + 1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
                *FIELD(obj, f, strv_t) = l;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        _cleanup_free_ char *p = ign_path_index(path, i);
                        if (!p)
                                return -ENOMEM;
                        if (json_object_is_type(e, json_type_null)) {
                                l[i] = strdup(""); /* what Go decodes null into */
                                if (!l[i])
                                        return -ENOMEM;
                                continue;
                        }
                        r = parse_string(e, &l[i], p, ctx);
                        if (r < 0)
                                return r;
                        if (!l[i])
                                l[i] = strdup(""); /* keep the list terminated where it should be */
                        if (!l[i])
                                return -ENOMEM;
                }
                return 0;
        }
        case IGN_FK_OBJECT:
                if (!json_object_is_type(v, json_type_object))
                        return type_error(ctx, path, "an object", v);
                return parse_object(f->type, v, FIELD(obj, f, void), path, ctx);
        case IGN_FK_LIST: {
                size_t n;
                void *items;
                if (!json_object_is_type(v, json_type_array))
                        return type_error(ctx, path, "an array", v);
                n = json_object_array_length(v);
                list_free(f->type, *FIELD(obj, f, void *), *COUNT(obj, f));
                *FIELD(obj, f, void *) = NULL;
                *COUNT(obj, f) = 0;
                if (n == 0)
                        return 0;
                items = calloc(n, f->type->size);
                if (!items)
                        return -ENOMEM;
                *FIELD(obj, f, void *) = items;
                *COUNT(obj, f) = n;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        _cleanup_free_ char *p = ign_path_index(path, i);
                        if (!p)
                                return -ENOMEM;
                        if (json_object_is_type(e, json_type_null))
                                continue;
                        if (!json_object_is_type(e, json_type_object)) {
                                r = type_error(ctx, p, "an object", e);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        r = parse_object(f->type, e, ELEM(items, f->type, i), p, ctx);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        }
        return -EINVAL;
}

static int parse_object(const IgnType *t, json_object *j, void *obj, const char *path, ParseCtx *ctx)
{
        int r;

        json_object_object_foreach (j, key, v) {
                const IgnField *found = NULL;
                _cleanup_free_ char *p = ign_path_field(path, key);

                if (!p)
                        return -ENOMEM;
                for (const IgnField *f = t->fields; f->name; f++)
                        if (streq(f->name, key)) {
                                found = f;
                                break;
                        }
                if (!found || found->since > ctx->version) {
                        r = ign_report_add(ctx->report, IGN_WARNING, p,
                                           found ? "unused key \"%s\" (spec %s has it, not %s)"
                                                 : "unused key \"%s\"",
                                           key, found ? ign_version_to_string(found->since) : "",
                                           ign_version_to_string(ctx->version));
                        if (r < 0)
                                return r;
                        r = extra_set(EXTRA(obj, t), key, v);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = parse_field(found, v, obj, p, ctx);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_version(json_object *root, IgnVersion *ret, IgnReport *report)
{
        json_object *ign, *v;
        const char *s;
        IgnVersion version;

        if (!json_object_object_get_ex(root, "ignition", &ign) || json_object_is_type(ign, json_type_null))
                return ign_report_add(report, IGN_ERROR, "$.ignition.version", "required");
        if (!json_object_is_type(ign, json_type_object))
                return ign_report_add(report, IGN_ERROR, "$.ignition", "expected an object, got %s",
                                      json_kind_name(ign));
        if (!json_object_object_get_ex(ign, "version", &v) || json_object_is_type(v, json_type_null))
                return ign_report_add(report, IGN_ERROR, "$.ignition.version", "required");
        if (!json_object_is_type(v, json_type_string))
                return ign_report_add(report, IGN_ERROR, "$.ignition.version", "expected a string, got %s",
                                      json_kind_name(v));
        s = json_object_get_string(v);
        if (!is_semver(s))
                return ign_report_add(report, IGN_ERROR, "$.ignition.version",
                                      "invalid config version \"%s\" (not a semantic version)", s);
        version = ign_version_from_string(s);
        if (version < 0 || !streq(s, ign_version_to_string(version))) {
                if (strneq(s, "2.", 2) || strneq(s, "1.", 2))
                        return ign_report_add(
                                report, IGN_ERROR, "$.ignition.version",
                                "spec %s is an Ignition v2 config; cradle reads 3.0.0 to 3.5.0", s);
                return ign_report_add(report, IGN_ERROR, "$.ignition.version",
                                      "unsupported config version \"%s\" (cradle reads 3.0.0 to 3.5.0)", s);
        }
        *ret = version;
        return 1;
}

int ign_config_parse(const char *data, size_t len, size_t max_size, IgnConfig **ret, IgnReport *report)
{
        _cleanup_(json_object_putp) json_object *root = NULL;
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_free_ char *err = NULL;
        ParseCtx ctx = { .report = report };
        IgnVersion version = IGN_V3_0; /* set by parse_version() when it returns > 0 */
        int r;

        if (max_size == 0)
                max_size = IGN_PARSE_MAX;
        if (len == 0) {
                (void)ign_report_add(report, IGN_ERROR, "$", "not a config (empty)");
                return -EBADMSG;
        }
        r = json_parse(data, len, max_size, &root, &err);
        if (r == -E2BIG) {
                (void)ign_report_add(report, IGN_ERROR, "$", "config of %zu bytes exceeds the limit of %zu",
                                     len, max_size);
                return r;
        }
        if (r < 0) {
                (void)ign_report_add(report, IGN_ERROR, "$", "%s", err ? err : "malformed JSON");
                return r == -ENOMEM ? r : -EBADMSG;
        }
        if (!json_object_is_type(root, json_type_object)) {
                (void)ign_report_add(report, IGN_ERROR, "$", "expected an object, got %s",
                                     json_kind_name(root));
                return -EBADMSG;
        }
        r = parse_version(root, &version, report);
        if (r < 0)
                return r;
        if (r == 0)
                return -EBADMSG;

        c = ign_config_new(version);
        if (!c)
                return -ENOMEM;
        ctx.version = version;
        free(c->ignition.version);
        c->ignition.version = NULL;
        r = parse_object(&ign_type_config, root, c, "$", &ctx);
        if (r < 0)
                return r;
        if (ctx.failed)
                return -EBADMSG;
        c->version = version;
        if (ret)
                *ret = TAKE_PTR(c);
        return 0;
}

/* ---- Serializing ------------------------------------------------------------------ */

static int serialize_object(const IgnType *t, const void *obj, bool extras, json_object **ret);

static int serialize_field(const IgnField *f, const void *obj, bool extras, json_object **ret)
{
        *ret = NULL;
        switch (f->kind) {
        case IGN_FK_STRING: {
                const char *s = *CFIELD(obj, f, str_t);
                if (!s && !(f->flags & IGN_FF_ALWAYS))
                        return 0;
                *ret = json_object_new_string(strempty(s));
                return *ret ? 0 : -ENOMEM;
        }
        case IGN_FK_INT: {
                const IgnInt *i = CFIELD(obj, f, IgnInt);
                if (!i->set)
                        return 0;
                *ret = json_object_new_int64(i->value);
                return *ret ? 0 : -ENOMEM;
        }
        case IGN_FK_BOOL: {
                const IgnBool *b = CFIELD(obj, f, IgnBool);
                if (!b->set)
                        return 0;
                *ret = json_object_new_boolean(b->value);
                return *ret ? 0 : -ENOMEM;
        }
        case IGN_FK_STRV: {
                char *const *l = *CFIELD(obj, f, strv_t);
                if (!l || !l[0])
                        return 0;
                *ret = json_new_strv(l);
                return *ret ? 0 : -ENOMEM;
        }
        case IGN_FK_OBJECT:
                if (ign_obj_is_empty(f->type, CFIELD(obj, f, void)))
                        return 0;
                return serialize_object(f->type, CFIELD(obj, f, void), extras, ret);
        case IGN_FK_LIST: {
                size_t n = CCOUNT(obj, f);
                const void *items = *CFIELD(obj, f, void *);
                _cleanup_(json_object_putp) json_object *a = NULL;
                int r;

                if (n == 0)
                        return 0;
                a = json_object_new_array();
                if (!a)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = NULL;
                        r = serialize_object(f->type, CELEM(items, f->type, i), extras, &e);
                        if (r < 0)
                                return r;
                        if (json_object_array_add(a, e) < 0) {
                                json_object_put(e);
                                return -ENOMEM;
                        }
                }
                *ret = TAKE_PTR(a);
                return 0;
        }
        }
        return -EINVAL;
}

static int serialize_object(const IgnType *t, const void *obj, bool extras, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        const IgnExtra *e = CEXTRA(obj, t);
        int r;

        if (!o)
                return -ENOMEM;
        for (const IgnField *f = t->fields; f->name; f++) {
                json_object *v = NULL;
                r = serialize_field(f, obj, extras, &v);
                if (r < 0)
                        return r;
                if (v && json_object_object_add(o, f->name, v) < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; extras && e && i < e->n; i++) {
                if (json_object_object_get_ex(o, e->keys[i], NULL))
                        continue;
                if (json_object_object_add(o, e->keys[i], json_object_get(e->values[i])) < 0) {
                        json_object_put(e->values[i]);
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(o);
        return 0;
}

int ign_config_serialize(const IgnConfig *c, IgnVersion version, IgnSerializeFlags flags, char **ret,
                         size_t *ret_len, char **reterr)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_ign_config_ IgnConfig *copy = NULL;
        const IgnConfig *out = c;
        char *s;
        int r;

        if (version < 0)
                version = c->version;
        if (!ign_version_valid(version) || !ign_version_valid(c->version))
                return -EINVAL;
        if (version != c->version) {
                copy = ign_config_copy(c);
                if (!copy)
                        return -ENOMEM;
                r = ign_config_translate(copy, version, reterr);
                if (r < 0)
                        return r;
                out = copy;
        }
        r = serialize_object(&ign_type_config, out, /* extras= */ true, &o);
        if (r < 0)
                return r;
        s = json_to_string(o, (flags & IGN_SERIALIZE_PRETTY) ? JSON_FORMAT_PRETTY : 0);
        if (!s)
                return -ENOMEM;
        if (ret_len)
                *ret_len = strlen(s);
        *ret = s;
        return 0;
}

/* ---- Lifecycle ----------------------------------------------------------------------- */

IgnConfig *ign_config_new(IgnVersion version)
{
        IgnConfig *c;

        if (!ign_version_valid(version))
                return NULL;
        c = calloc(1, sizeof(IgnConfig));
        if (!c)
                return NULL;
        c->version = version;
        c->ignition.version = strdup(ign_version_to_string(version));
        if (!c->ignition.version)
                return ign_config_free(c);
        return c;
}

IgnConfig *ign_config_free(IgnConfig *c)
{
        if (!c)
                return NULL;
        ign_obj_done(&ign_type_config, c);
        free(c);
        return NULL;
}

IgnConfig *ign_config_copy(const IgnConfig *c)
{
        IgnConfig *n = calloc(1, sizeof(IgnConfig));

        if (!n)
                return NULL;
        if (ign_obj_copy(&ign_type_config, n, c) < 0)
                return ign_config_free(n);
        n->version = c->version;
        return n;
}

void ign_config_clear_pointers(IgnConfig *c)
{
        ign_obj_done(&ign_type_ignition_config, &c->ignition.config);
        c->ignition.config = (IgnIgnitionConfig){};
}

/* ---- Duplicates (Ignition's ValidateDups, on every struct) ---------------------------- */

typedef struct KeySeen {
        char *key;
        int handle;
        char *path;
} KeySeen;

static int field_handle(const IgnField *f, const IgnField *first)
{
        if (f->flags & IGN_FF_NODE)
                return -1;
        if (f->flags & IGN_FF_KARG)
                return -2;
        return (int)(f - first);
}

int ign_obj_check_dups(const IgnType *t, const void *obj, const char *path, IgnReport *report)
{
        KeySeen *seen = NULL;
        size_t n_seen = 0;
        int r = 0;

        for (const IgnField *f = t->fields; f->name && r >= 0; f++) {
                _cleanup_free_ char *fp = ign_path_field(path, f->name);
                size_t n;

                if (!fp) {
                        r = -ENOMEM;
                        break;
                }
                if (f->kind == IGN_FK_OBJECT) {
                        r = ign_obj_check_dups(f->type, CFIELD(obj, f, void), fp, report);
                        continue;
                }
                if (f->kind != IGN_FK_LIST && f->kind != IGN_FK_STRV)
                        continue;
                n = f->kind == IGN_FK_LIST ? CCOUNT(obj, f) : strv_length(*CFIELD(obj, f, strv_t));
                for (size_t i = 0; i < n && r >= 0; i++) {
                        _cleanup_free_ char *ip = ign_path_index(fp, i), *key = NULL;
                        const void *item = NULL;
                        KeySeen *grown;

                        if (!ip) {
                                r = -ENOMEM;
                                break;
                        }
                        if (f->kind == IGN_FK_LIST) {
                                item = CELEM(*CFIELD(obj, f, void *), f->type, i);
                                r = ign_obj_check_dups(f->type, item, ip, report);
                                if (r < 0)
                                        break;
                        }
                        if (f->flags & IGN_FF_IGNORE_DUPS)
                                continue;
                        key = f->kind == IGN_FK_LIST ? (f->type->key ? f->type->key(item) : NULL)
                                                     : strdup((*CFIELD(obj, f, strv_t))[i]);
                        if (!key) {
                                if (f->kind == IGN_FK_LIST && !f->type->key)
                                        continue;
                                r = -ENOMEM;
                                break;
                        }
                        for (size_t k = 0; k < n_seen; k++)
                                if (seen[k].handle == field_handle(f, t->fields) &&
                                    streq(seen[k].key, key)) {
                                        r = ign_report_add(
                                                report, IGN_ERROR, ip, "duplicate entry (same %s as %s)",
                                                f->flags & IGN_FF_NODE ? "path" : "key", seen[k].path);
                                        goto next;
                                }
                        grown = reallocarray(seen, n_seen + 1, sizeof(KeySeen));
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        seen = grown;
                        seen[n_seen++] =
                                (KeySeen){ TAKE_PTR(key), field_handle(f, t->fields), TAKE_PTR(ip) };
next:;
                }
        }
        for (size_t k = 0; k < n_seen; k++) {
                free(seen[k].key);
                free(seen[k].path);
        }
        free(seen);
        return r;
}

/* ---- Down-translation check ----------------------------------------------------------- */

int ign_obj_find_newer(const IgnType *t, const void *obj, IgnVersion version, const char *path, char **ret)
{
        int r;

        for (const IgnField *f = t->fields; f->name; f++) {
                _cleanup_free_ char *fp = ign_path_field(path, f->name);
                bool set = false;

                if (!fp)
                        return -ENOMEM;
                switch (f->kind) {
                case IGN_FK_STRING:
                        set = *CFIELD(obj, f, str_t) != NULL;
                        break;
                case IGN_FK_STRV:
                        set = !strv_isempty_const(*CFIELD(obj, f, strv_t));
                        break;
                case IGN_FK_INT:
                        set = CFIELD(obj, f, IgnInt)->set;
                        break;
                case IGN_FK_BOOL:
                        set = CFIELD(obj, f, IgnBool)->set;
                        break;
                case IGN_FK_OBJECT:
                        set = !ign_obj_is_empty(f->type, CFIELD(obj, f, void));
                        break;
                case IGN_FK_LIST:
                        set = CCOUNT(obj, f) > 0;
                        break;
                }
                if (!set)
                        continue;
                if (f->since > version) {
                        *ret = TAKE_PTR(fp);
                        return 1;
                }
                if (f->kind == IGN_FK_OBJECT) {
                        r = ign_obj_find_newer(f->type, CFIELD(obj, f, void), version, fp, ret);
                        if (r != 0)
                                return r;
                } else if (f->kind == IGN_FK_LIST)
                        for (size_t i = 0; i < CCOUNT(obj, f); i++) {
                                _cleanup_free_ char *ip = ign_path_index(fp, i);
                                if (!ip)
                                        return -ENOMEM;
                                r = ign_obj_find_newer(f->type, CELEM(*CFIELD(obj, f, void *), f->type, i),
                                                       version, ip, ret);
                                if (r != 0)
                                        return r;
                        }
        }
        return 0;
}

/* ---- Merging (Ignition's config/merge, rule for rule) ------------------------------------ */

typedef struct ChildKey {
        char *key;
        int handle;
        const IgnField *field;
        size_t index;
} ChildKey;

static void child_keys_free(ChildKey *k, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(k[i].key);
        free(k);
}

static char *item_key(const IgnField *f, const void *list, size_t i)
{
        if (f->kind == IGN_FK_STRV)
                return strdup(((char *const *)list)[i]);
        return f->type->key ? f->type->key(CELEM(list, f->type, i)) : strdup("");
}

static size_t field_len(const IgnField *f, const void *obj)
{
        return f->kind == IGN_FK_LIST ? CCOUNT(obj, f) : strv_length(*CFIELD(obj, f, strv_t));
}

static const void *field_items(const IgnField *f, const void *obj)
{
        return f->kind == IGN_FK_LIST ? *CFIELD(obj, f, void *) : (const void *)*CFIELD(obj, f, strv_t);
}

/* Appends element i of src (a list or strv of field f) to the result field,
 * merged with the child's element when child_item is given. */
static int result_append(const IgnField *f, void *result, const void *src, size_t i, const void *child_item)
{
        int r;

        if (f->kind == IGN_FK_STRV)
                return strv_extend(FIELD(result, f, strv_t), ((char *const *)src)[i]);

        void *items = *FIELD(result, f, void *);
        size_t n = *COUNT(result, f);
        void *grown = reallocarray(items, n + 1, f->type->size);
        if (!grown)
                return -ENOMEM;
        *FIELD(result, f, void *) = grown;
        memset(ELEM(grown, f->type, n), 0, f->type->size);
        *COUNT(result, f) = n + 1;
        if (child_item)
                r = ign_obj_merge(f->type, CELEM(src, f->type, i), child_item, ELEM(grown, f->type, n));
        else
                r = ign_obj_copy(f->type, ELEM(grown, f->type, n), CELEM(src, f->type, i));
        return r;
}

static int merge_keyed_list(const IgnType *t, const IgnField *f, const void *parent, const void *child,
                            void *result, const ChildKey *ck, size_t n_ck)
{
        size_t np = field_len(f, parent), nc = field_len(f, child);
        const void *pl = field_items(f, parent), *cl = field_items(f, child);
        int handle = field_handle(f, t->fields);
        int r;

        for (size_t i = 0; i < np; i++) {
                _cleanup_free_ char *key = item_key(f, pl, i);
                const ChildKey *match = NULL;

                if (!key)
                        return -ENOMEM;
                for (size_t k = 0; k < n_ck; k++)
                        if (ck[k].handle == handle && streq(ck[k].key, key))
                                match = &ck[k]; /* the last one wins, as Go's map assignment */
                if (!match) {
                        r = result_append(f, result, pl, i, NULL);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (match->field != f)
                        continue; /* it lives in a sibling list now (file -> link): dropped here */
                if (f->kind == IGN_FK_STRV) {
                        r = strv_extend(FIELD(result, f, strv_t), ((char *const *)cl)[match->index]);
                        if (r < 0)
                                return r;
                        continue;
                }
                const void *citem = CELEM(cl, f->type, match->index);
                /* a child header without a value removes the parent's header */
                if (f->type->key == ign_type_header.key && !((const IgnHttpHeader *)citem)->value)
                        continue;
                r = result_append(f, result, pl, i, citem);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < nc; i++) {
                _cleanup_free_ char *key = item_key(f, cl, i);
                bool in_parent = false;

                if (!key)
                        return -ENOMEM;
                for (size_t j = 0; j < np && !in_parent; j++) {
                        _cleanup_free_ char *pk = item_key(f, pl, j);
                        if (!pk)
                                return -ENOMEM;
                        in_parent = streq(pk, key);
                }
                if (in_parent)
                        continue;
                r = result_append(f, result, cl, i, NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* result must be zeroed. */
int ign_obj_merge(const IgnType *t, const void *parent, const void *child, void *result)
{
        ChildKey *ck = NULL;
        size_t n_ck = 0;
        int r = 0;

        /* index the child's keyed lists, per handle */
        for (const IgnField *f = t->fields; f->name && r >= 0; f++) {
                if ((f->kind != IGN_FK_LIST && f->kind != IGN_FK_STRV) || (f->flags & IGN_FF_IGNORE_DUPS))
                        continue;
                for (size_t i = 0; i < field_len(f, child); i++) {
                        ChildKey *grown = reallocarray(ck, n_ck + 1, sizeof(ChildKey));
                        char *key = item_key(f, field_items(f, child), i);
                        if (!grown || !key) {
                                if (grown)
                                        ck = grown;
                                free(key);
                                r = -ENOMEM;
                                break;
                        }
                        ck = grown;
                        ck[n_ck++] = (ChildKey){ key, field_handle(f, t->fields), f, i };
                }
        }

        for (const IgnField *f = t->fields; f->name && r >= 0; f++)
                switch (f->kind) {
                case IGN_FK_STRING: {
                        const char *p = *CFIELD(parent, f, str_t), *c = *CFIELD(child, f, str_t);
                        const char *v = (f->flags & IGN_FF_PRIMITIVE) || c ? c : p;
                        if (v && !(*FIELD(result, f, str_t) = strdup(v)))
                                r = -ENOMEM;
                        break;
                }
                case IGN_FK_INT: {
                        const IgnInt *c = CFIELD(child, f, IgnInt);
                        *FIELD(result, f, IgnInt) =
                                (f->flags & IGN_FF_PRIMITIVE) || c->set ? *c : *CFIELD(parent, f, IgnInt);
                        break;
                }
                case IGN_FK_BOOL: {
                        const IgnBool *c = CFIELD(child, f, IgnBool);
                        *FIELD(result, f, IgnBool) =
                                (f->flags & IGN_FF_PRIMITIVE) || c->set ? *c : *CFIELD(parent, f, IgnBool);
                        break;
                }
                case IGN_FK_OBJECT:
                        r = ign_obj_merge(f->type, CFIELD(parent, f, void), CFIELD(child, f, void),
                                          FIELD(result, f, void));
                        break;
                case IGN_FK_STRV:
                case IGN_FK_LIST:
                        if (f->flags & IGN_FF_IGNORE_DUPS) {
                                for (size_t i = 0; i < field_len(f, parent) && r >= 0; i++)
                                        r = result_append(f, result, field_items(f, parent), i, NULL);
                                for (size_t i = 0; i < field_len(f, child) && r >= 0; i++)
                                        r = result_append(f, result, field_items(f, child), i, NULL);
                        } else
                                r = merge_keyed_list(t, f, parent, child, result, ck, n_ck);
                        break;
                }
        child_keys_free(ck, n_ck);
        if (r < 0)
                return r;
        r = extra_copy(EXTRA(result, t), CEXTRA(parent, t));
        if (r < 0)
                return r;
        return extra_copy(EXTRA(result, t), CEXTRA(child, t));
}
