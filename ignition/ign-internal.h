/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Internals of ignition/: the spec as data. Every JSON object type of the
 * spec is an IgnType describing its C struct (ignition.h) field by field:
 * JSON name, kind, offsets, the first spec version that has it, and the
 * merge/duplicate rules of Ignition's config/merge and config/validate.
 * One generic engine walks these tables to parse, serialize, copy, free,
 * merge, check duplicates and check down-translations, so a new field is a
 * new table row.
 */

#include <stdarg.h>

#include "ignition.h"
#include "macro.h"

typedef enum IgnFieldKind {
        IGN_FK_STRING, /* char * */
        IGN_FK_INT, /* IgnInt */
        IGN_FK_BOOL, /* IgnBool */
        IGN_FK_STRV, /* char ** */
        IGN_FK_OBJECT, /* embedded struct of `type` */
        IGN_FK_LIST, /* array of `type` at offset, size_t count at count_offset */
} IgnFieldKind;

typedef enum IgnFieldFlags {
        IGN_FF_PRIMITIVE = 1 << 0, /* Go non-pointer value: a merge takes the child's, set or not */
        IGN_FF_ALWAYS = 1 << 1, /* Go emits it even when empty (required string) */
        IGN_FF_IGNORE_DUPS = 1 << 2, /* list: appended on merge, never a duplicate */
        IGN_FF_NODE = 1 << 3, /* files/links/directories: one key namespace */
        IGN_FF_KARG = 1 << 4, /* kernel arguments: one key namespace */
} IgnFieldFlags;

typedef struct IgnType IgnType;

typedef struct IgnField {
        const char *name;
        IgnFieldKind kind;
        size_t offset;
        size_t count_offset;
        const IgnType *type;
        IgnVersion since;
        IgnFieldFlags flags;
} IgnField;

struct IgnType {
        const char *name;
        size_t size;
        size_t extra_offset;
        const IgnField *fields; /* terminated by a NULL name */
        /* The merge/duplicate key of a list element (Go's Key()); NULL for
         * types never in a keyed list. Newly allocated, NULL on OOM. */
        char *(*key)(const void *obj);
};

extern const IgnType ign_type_config;
extern const IgnType ign_type_file;

/* Generic engine (ign-model.c). */
void ign_obj_done(const IgnType *t, void *obj);
int ign_obj_copy(const IgnType *t, void *dst, const void *src);
bool ign_obj_is_empty(const IgnType *t, const void *obj);
void ign_obj_drop_extras(const IgnType *t, void *obj);
/* Appends "duplicate entry" errors under path, recursively. */
int ign_obj_check_dups(const IgnType *t, const void *obj, const char *path, IgnReport *report);
/* First field set in obj that `version` does not have: its path, or NULL. */
int ign_obj_find_newer(const IgnType *t, const void *obj, IgnVersion version, const char *path, char **ret);
int ign_obj_merge(const IgnType *t, const void *parent, const void *child, void *result);

/* Reports. */
int ign_report_add(IgnReport *r, IgnSeverity severity, const char *path, const char *fmt, ...)
        _printf_(4, 5);
int ign_report_addv(IgnReport *r, IgnSeverity severity, const char *path, const char *fmt, va_list ap)
        _printf_(4, 0);

/* "PATH.name" / "PATH[i]" helpers: newly allocated, NULL on OOM. */
char *ign_path_field(const char *path, const char *name);
char *ign_path_index(const char *path, size_t i);

/* Data URLs (ign-dataurl.c). */
bool ign_is_data_url(const char *s);

/* Resource contents: data URL decoded, decompressed, hash checked. */
int ign_resource_read(const IgnResource *res, size_t max, void **ret, size_t *ret_len, char **reterr);

/* Version ordering helper. */
static inline bool ign_version_valid(IgnVersion v)
{
        return v >= 0 && v < _IGN_VERSION_MAX;
}
