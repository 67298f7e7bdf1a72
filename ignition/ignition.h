/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Ignition v3 configs (spec 3.0.0 - 3.5.0): the one place in cradle that
 * knows Ignition. Parse into the model below, validate like Ignition's own
 * validator, merge with Ignition's rules, translate between 3.x versions,
 * serialize, build pointer configs, and lay files and units onto a root.
 *
 * Layering: uses lib/ only; nothing here logs above debug, and JSON values
 * never leave the module (the model is plain C).
 *
 * Invariants of the model:
 *  - a `char *` field is NULL when the key was absent or null, "" when it
 *    was the empty string; IgnInt/IgnBool carry a `set` flag for the same
 *    distinction (Go's pointer fields);
 *  - lists are arrays with a count (`T *x; size_t n_x;`), string lists are
 *    NULL-terminated strv (NULL when empty);
 *  - `extra` holds keys the declared version does not know (Ignition ignores
 *    them with a warning); they are written back when the config is
 *    serialized at the version it was parsed with, and dropped when it is
 *    translated to another version (a key unknown to one version may mean
 *    something in the next);
 *  - IgnConfig.version always matches ignition.version.
 *
 * Everything a function returns is allocated and owned by the caller.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Spec versions cradle reads and writes. */
typedef enum IgnVersion {
        IGN_V3_0,
        IGN_V3_1,
        IGN_V3_2,
        IGN_V3_3,
        IGN_V3_4,
        IGN_V3_5,
        _IGN_VERSION_MAX,
        _IGN_VERSION_INVALID = -EINVAL,
} IgnVersion;

#define IGN_VERSION_LATEST IGN_V3_5

/* "3.2.0" <-> IGN_V3_2; also accepts "3.2" for command lines. */
const char *ign_version_to_string(IgnVersion v);
IgnVersion ign_version_from_string(const char *s);

/* The practical limit on the hub side (hive-integration README). */
#define IGN_SIZE_LIMIT (256u * 1024)
/* What cradle accepts to parse at all. */
#define IGN_PARSE_MAX (64u * 1024 * 1024)

typedef struct IgnExtra IgnExtra; /* unknown keys, opaque */

typedef struct IgnInt {
        bool set;
        int64_t value;
} IgnInt;

typedef struct IgnBool {
        bool set;
        bool value;
} IgnBool;

typedef struct IgnHttpHeader {
        char *name;
        char *value; /* NULL: in a child config, removes the parent's header */
        IgnExtra *extra;
} IgnHttpHeader;

typedef struct IgnVerification {
        char *hash; /* "sha512-HEX" or "sha256-HEX" */
        IgnExtra *extra;
} IgnVerification;

typedef struct IgnResource {
        char *compression; /* NULL, "" or "gzip" */
        IgnHttpHeader *http_headers;
        size_t n_http_headers;
        char *source; /* URL */
        IgnVerification verification;
        IgnExtra *extra;
} IgnResource;

typedef struct IgnIgnitionConfig {
        IgnResource *merge;
        size_t n_merge;
        IgnResource replace;
        IgnExtra *extra;
} IgnIgnitionConfig;

typedef struct IgnProxy {
        char *http_proxy;
        char *https_proxy;
        char **no_proxy;
        IgnExtra *extra;
} IgnProxy;

typedef struct IgnTls {
        IgnResource *certificate_authorities;
        size_t n_certificate_authorities;
        IgnExtra *extra;
} IgnTls;

typedef struct IgnSecurity {
        IgnTls tls;
        IgnExtra *extra;
} IgnSecurity;

typedef struct IgnTimeouts {
        IgnInt http_response_headers;
        IgnInt http_total;
        IgnExtra *extra;
} IgnTimeouts;

typedef struct IgnIgnition {
        IgnIgnitionConfig config;
        IgnProxy proxy;
        IgnSecurity security;
        IgnTimeouts timeouts;
        char *version;
        IgnExtra *extra;
} IgnIgnition;

typedef struct IgnNodeOwner {
        IgnInt id;
        char *name;
        IgnExtra *extra;
} IgnNodeOwner;

typedef struct IgnFile {
        IgnNodeOwner group;
        IgnBool overwrite;
        char *path;
        IgnNodeOwner user;
        IgnResource *append;
        size_t n_append;
        IgnResource contents;
        IgnInt mode;
        IgnExtra *extra;
} IgnFile;

typedef struct IgnDirectory {
        IgnNodeOwner group;
        IgnBool overwrite;
        char *path;
        IgnNodeOwner user;
        IgnInt mode;
        IgnExtra *extra;
} IgnDirectory;

typedef struct IgnLink {
        IgnNodeOwner group;
        IgnBool overwrite;
        char *path;
        IgnNodeOwner user;
        IgnBool hard;
        char *target;
        IgnExtra *extra;
} IgnLink;

typedef struct IgnPartition {
        char *guid;
        char *label;
        IgnInt number;
        IgnBool resize;
        IgnBool should_exist;
        IgnInt size_mib;
        IgnInt start_mib;
        char *type_guid;
        IgnBool wipe_partition_entry;
        IgnExtra *extra;
} IgnPartition;

typedef struct IgnDisk {
        char *device;
        IgnPartition *partitions;
        size_t n_partitions;
        IgnBool wipe_table;
        IgnExtra *extra;
} IgnDisk;

typedef struct IgnFilesystem {
        char *device;
        char *format;
        char *label;
        char **mount_options;
        char **options;
        char *path;
        char *uuid;
        IgnBool wipe_filesystem;
        IgnExtra *extra;
} IgnFilesystem;

typedef struct IgnRaid {
        char **devices;
        char *level;
        char *name;
        char **options;
        IgnInt spares;
        IgnExtra *extra;
} IgnRaid;

typedef struct IgnTang {
        char *advertisement;
        char *thumbprint;
        char *url;
        IgnExtra *extra;
} IgnTang;

typedef struct IgnClevisCustom {
        char *config;
        IgnBool needs_network;
        char *pin;
        IgnExtra *extra;
} IgnClevisCustom;

typedef struct IgnClevis {
        IgnClevisCustom custom;
        IgnTang *tang;
        size_t n_tang;
        IgnInt threshold;
        IgnBool tpm2;
        IgnExtra *extra;
} IgnClevis;

typedef struct IgnCex {
        IgnBool enabled;
        IgnExtra *extra;
} IgnCex;

typedef struct IgnLuks {
        IgnCex cex;
        IgnClevis clevis;
        char *device;
        IgnBool discard;
        IgnResource key_file;
        char *label;
        char *name;
        char **open_options;
        char **options;
        char *uuid;
        IgnBool wipe_volume;
        IgnExtra *extra;
} IgnLuks;

typedef struct IgnStorage {
        IgnDirectory *directories;
        size_t n_directories;
        IgnDisk *disks;
        size_t n_disks;
        IgnFile *files;
        size_t n_files;
        IgnFilesystem *filesystems;
        size_t n_filesystems;
        IgnLink *links;
        size_t n_links;
        IgnLuks *luks;
        size_t n_luks;
        IgnRaid *raid;
        size_t n_raid;
        IgnExtra *extra;
} IgnStorage;

typedef struct IgnDropin {
        char *contents;
        char *name;
        IgnExtra *extra;
} IgnDropin;

typedef struct IgnUnit {
        char *contents;
        IgnDropin *dropins;
        size_t n_dropins;
        IgnBool enabled;
        IgnBool mask;
        char *name;
        IgnExtra *extra;
} IgnUnit;

typedef struct IgnSystemd {
        IgnUnit *units;
        size_t n_units;
        IgnExtra *extra;
} IgnSystemd;

typedef struct IgnPasswdGroup {
        IgnInt gid;
        char *name;
        char *password_hash;
        IgnBool should_exist;
        IgnBool system;
        IgnExtra *extra;
} IgnPasswdGroup;

typedef struct IgnPasswdUser {
        char *gecos;
        char **groups;
        char *home_dir;
        char *name;
        IgnBool no_create_home;
        IgnBool no_log_init;
        IgnBool no_user_group;
        char *password_hash;
        char *primary_group;
        char **ssh_authorized_keys;
        char *shell;
        IgnBool should_exist;
        IgnBool system;
        IgnInt uid;
        IgnExtra *extra;
} IgnPasswdUser;

typedef struct IgnPasswd {
        IgnPasswdGroup *groups;
        size_t n_groups;
        IgnPasswdUser *users;
        size_t n_users;
        IgnExtra *extra;
} IgnPasswd;

typedef struct IgnKernelArguments {
        char **should_exist;
        char **should_not_exist;
        IgnExtra *extra;
} IgnKernelArguments;

typedef struct IgnConfig {
        IgnVersion version;
        IgnIgnition ignition;
        IgnKernelArguments kernel_arguments;
        IgnPasswd passwd;
        IgnStorage storage;
        IgnSystemd systemd;
        IgnExtra *extra;
} IgnConfig;

/* ---- Reports ------------------------------------------------------------ */

typedef enum IgnSeverity {
        IGN_WARNING,
        IGN_ERROR,
} IgnSeverity;

typedef struct IgnReportEntry {
        IgnSeverity severity;
        char *path; /* JSONPath-like: "$.storage.files[2].path" */
        char *message;
} IgnReportEntry;

/* A list of findings; IGN_REPORT_INIT needs no cleanup until used. */
typedef struct IgnReport {
        IgnReportEntry *entries;
        size_t n_entries;
} IgnReport;

#define IGN_REPORT_INIT ((IgnReport){})

void ign_report_done(IgnReport *r);
static inline void ign_report_donep(IgnReport *r)
{
        ign_report_done(r);
}
bool ign_report_has_errors(const IgnReport *r);
/* "PATH: MESSAGE" for errors, "PATH: warning: MESSAGE" for warnings; one per
 * line, in the order found. Newly allocated; "" for an empty report. */
char *ign_report_format(const IgnReport *r);

/* ---- Lifecycle, parsing, serializing ------------------------------------ */

IgnConfig *ign_config_new(IgnVersion version);
IgnConfig *ign_config_free(IgnConfig *c);
static inline void ign_config_freep(IgnConfig **c)
{
        if (*c)
                ign_config_free(*c);
}
#define _cleanup_ign_config_ __attribute__((cleanup(ign_config_freep)))
/* Deep copy; NULL on allocation failure. */
IgnConfig *ign_config_copy(const IgnConfig *c);
/* Drops ignition.config (the merge and replace pointers), as the installer
 * does to a host config before merging it into another one. */
void ign_config_clear_pointers(IgnConfig *c);

/*
 * Parses one Ignition config of at most max_size bytes (0: IGN_PARSE_MAX).
 * Type mismatches, a missing/unsupported version and malformed JSON are
 * errors in *report (which may be NULL) and fail with -EBADMSG; unknown keys
 * are warnings and keep the parse going; -E2BIG above the size cap. The
 * semantic rules are ign_config_validate()'s job: a parsed config can still
 * be invalid.
 */
int ign_config_parse(const char *data, size_t len, size_t max_size, IgnConfig **ret, IgnReport *report);

/* Parse + the semantic validation in one report. Returns 0 when the config
 * is valid (warnings allowed), -EBADMSG when the report holds errors. */
int ign_validate_buffer(const char *data, size_t len, size_t max_size, IgnReport *report);

/* Appends the semantic findings (paths, modes, URLs, duplicates, units...)
 * for the config's own version to *report. Returns 0, or -EBADMSG when it
 * found an error. */
int ign_config_validate(const IgnConfig *c, IgnReport *report);

typedef enum IgnSerializeFlags {
        IGN_SERIALIZE_PRETTY = 1 << 0,
} IgnSerializeFlags;

/*
 * JSON text of the config in `version` (the config's own version when
 * negative). Translating up is always possible; translating down fails
 * with -EOPNOTSUPP and an explanation in *reterr (naming the first field
 * the older spec cannot hold) instead of dropping data.
 */
int ign_config_serialize(const IgnConfig *c, IgnVersion version, IgnSerializeFlags flags, char **ret,
                         size_t *ret_len, char **reterr);

/* Translates the config in place to `version` (see above for the rules:
 * 3.3 masks setuid/setgid/sticky bits when going to 3.4, as Ignition does). */
int ign_config_translate(IgnConfig *c, IgnVersion version, char **reterr);

/* Size awareness: a warning entry at "$" when len exceeds IGN_SIZE_LIMIT.
 * Returns true when it warned. */
bool ign_size_check(size_t len, IgnReport *report);

/* ---- Merging ------------------------------------------------------------ */

/*
 * Ignition's merge (config/merge): child values override parent values key
 * by key (files/links/directories by path in one namespace, units, drop-ins,
 * users, groups, luks, raid by name, disks and filesystems by device,
 * partitions by number or label, resources by source, headers by name...);
 * lists without keys (file append, filesystem/raid/luks options) are
 * appended. Configs of different 3.x versions are first translated up to
 * the newer one. Returns a new config.
 */
int ign_config_merge(const IgnConfig *parent, const IgnConfig *child, IgnConfig **ret);

/* ---- Building ----------------------------------------------------------- */

typedef struct IgnPointerOptions {
        IgnVersion version; /* of the pointer config */
        const char *url; /* merge source, e.g. https://api-int.x:22623/config/worker */
        const char *ca_pem; /* CA bundle (PEM text), embedded as a data URL; may be NULL */
        size_t ca_len;
        char *const *headers; /* "Name: value" or "Name=value" strings; may be NULL */
        const char *token; /* bearer token, sent as "Authorization: Bearer ..."; may be NULL */
} IgnPointerOptions;

/* A config that only merges `url` (with the headers, version >= 3.1), and
 * trusts the CA. */
int ign_pointer_new(const IgnPointerOptions *o, IgnConfig **ret);

/* A data URL holding the bytes: "data:;base64,..." or, when percent is true,
 * the percent-encoded form "data:,..." (what Ignition's tools write). */
char *ign_data_url_encode(const void *data, size_t len, bool percent);
/* Decodes a data: URL (RFC 2397: base64 or percent-encoded). -EINVAL with
 * an explanation in *reterr when malformed. */
int ign_data_url_decode(const char *url, void **ret, size_t *ret_len, char **reterr);

/* ---- Reading files out of configs ---------------------------------------- */

/*
 * Decoded contents of storage.files[path] (data: URL, gzip, append entries
 * concatenated, verification hash checked). -ENOENT when no such file,
 * -EPROTONOSUPPORT when a source is not a data URL (remote sources need a
 * fetch), -EBADMSG when a data URL or the gzip stream is corrupt, -EIO on a
 * hash mismatch. *reterr explains.
 */
int ign_config_extract_file(const IgnConfig *c, const char *path, size_t max_size, void **ret,
                            size_t *ret_len, char **reterr);

/* The api-vip-connectivity-check filter: keeps storage.luks and the files
 * /etc/kubernetes/manifests/coredns.yaml, /etc/kubernetes/manifests/
 * keepalived.yaml and /etc/kubernetes/kubeconfig; drops everything else but
 * the ignition section's version. Returns a new config. */
int ign_config_filter_api_vip(const IgnConfig *c, IgnConfig **ret);

/* ---- Applying to a root -------------------------------------------------- */

typedef enum IgnApplyFlags {
        /* Resolve absolute symlinks inside the root as Ignition's runtime does
         * (chroot semantics) instead of refusing paths that traverse them. */
        IGN_APPLY_SYMLINKS_IN_ROOT = 1 << 0,
        /* Skip sections apply cannot do (passwd, disks, raid, luks,
         * filesystems) instead of refusing the config. */
        IGN_APPLY_SKIP_UNSUPPORTED = 1 << 1,
} IgnApplyFlags;

/*
 * Writes the config's directories, files, links and systemd units (and
 * drop-ins, masks, the preset file for enabled/disabled units) under root,
 * with the order and overwrite rules of Ignition's files stage. Paths never
 * leave root: every component is resolved with openat2() beneath the root
 * (or inside it, with IGN_APPLY_SYMLINKS_IN_ROOT); a path whose resolution
 * would escape fails with -EXDEV. Only data: URL sources can be applied.
 * *reterr explains a failure.
 */
int ign_config_apply(const IgnConfig *c, const char *root, IgnApplyFlags flags, char **reterr);
