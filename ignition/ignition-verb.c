/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle ignition VERB: validate, merge, pointer, apply, extract, translate.
 * Exit status: 0 ok, 1 invalid config or failure, 2 usage.
 * Findings go to stderr as "PATH: MESSAGE" lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "goflags.h"
#include "ignition-verb.h"
#include "ignition.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

#define EXIT_INVALID 1
#define EXIT_USAGE 2

static void print_report(const IgnReport *r)
{
        _cleanup_free_ char *s = ign_report_format(r);
        if (s)
                fputs(s, stderr);
}

/* Reads and parses FILE ("-" for stdin); reports go to stderr. Returns an
 * exit status, 0 with *ret set when the file parsed. */
static int load(const char *path, bool validate, IgnConfig **ret, size_t *ret_len)
{
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        if (streq(path, "-"))
                r = read_full_fd(STDIN_FILENO, IGN_PARSE_MAX, &data, &len);
        else
                r = read_full_file(path, IGN_PARSE_MAX, &data, &len);
        if (r < 0) {
                log_error_errno(r, "cannot read '%s': %m", path);
                return EXIT_INVALID;
        }
        r = ign_config_parse(data, len, IGN_PARSE_MAX, ret, &report);
        if (r >= 0 && validate) {
                (void)ign_size_check(len, &report);
                r = ign_config_validate(*ret, &report);
                if (r < 0) {
                        *ret = ign_config_free(*ret);
                }
        }
        print_report(&report);
        if (r == -ENOMEM) {
                log_error_errno(r, "cannot parse '%s': %m", path);
                return EXIT_INVALID;
        }
        if (r < 0) {
                fprintf(stderr, "%s: invalid Ignition config\n", path);
                return EXIT_INVALID;
        }
        if (ret_len)
                *ret_len = len;
        return 0;
}

static int output(const IgnConfig *c, IgnVersion version, bool pretty)
{
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        _cleanup_free_ char *s = NULL, *err = NULL;
        size_t len;
        int r;

        r = ign_config_serialize(c, version, pretty ? IGN_SERIALIZE_PRETTY : 0, &s, &len, &err);
        if (r < 0) {
                if (err)
                        fprintf(stderr, "%s\n", err);
                else
                        log_error_errno(r, "cannot serialize the config: %m");
                return EXIT_INVALID;
        }
        if (ign_size_check(len, &report))
                print_report(&report);
        fputs(s, stdout);
        fputc('\n', stdout);
        return fflush(stdout) == 0 ? 0 : EXIT_INVALID;
}

static int parse_version_arg(const char *s, IgnVersion *ret)
{
        if (isempty(s)) {
                *ret = -1;
                return 0;
        }
        *ret = ign_version_from_string(s);
        if (*ret < 0) {
                fprintf(stderr, "unknown Ignition spec version '%s' (3.0 to 3.5)\n", s);
                return -EINVAL;
        }
        return 0;
}

static int verb_validate(int argc, char **argv)
{
        static const GoFlag flags[] = { {} };
        _cleanup_ign_config_ IgnConfig *c = NULL;
        size_t len = 0;
        int optind, r;

        r = goflags_parse("cradle ignition validate",
                          "cradle ignition validate FILE\n"
                          "Checks an Ignition config (spec 3.0.0 to 3.5.0) like Ignition's "
                          "validator; findings on stderr as 'PATH: MESSAGE'.",
                          flags, argc, argv, &optind);
        if (r <= 0)
                return r == 0 ? 0 : EXIT_USAGE;
        if (argc - optind != 1) {
                fprintf(stderr, "cradle ignition validate: expected one FILE\n");
                return EXIT_USAGE;
        }
        r = load(argv[optind], true, &c, &len);
        if (r != 0)
                return r;
        printf("%s: valid Ignition %s config, %zu bytes\n", argv[optind], ign_version_to_string(c->version),
               len);
        return 0;
}

static int verb_merge(int argc, char **argv)
{
        char *version_s = NULL;
        bool pretty = false;
        const GoFlag flags[] = {
                { "version", GOFLAG_STRING, &version_s, NULL,
                  "spec version of the output (default: the newer input's)" },
                { "pretty", GOFLAG_BOOL, &pretty, NULL, "indent the output" },
                {},
        };
        _cleanup_ign_config_ IgnConfig *base = NULL, *over = NULL, *merged = NULL;
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        IgnVersion version;
        int optind, r, ret = EXIT_USAGE;

        r = goflags_parse(
                "cradle ignition merge",
                "cradle ignition merge [-version 3.x] [-pretty] BASE OVERRIDE\n"
                "Applies OVERRIDE (e.g. ignition-config-overrides) onto BASE with Ignition's merge rules "
                "and prints the result.",
                flags, argc, argv, &optind);
        if (r <= 0) {
                ret = r == 0 ? 0 : EXIT_USAGE;
                goto finish;
        }
        if (argc - optind != 2) {
                fprintf(stderr, "cradle ignition merge: expected BASE and OVERRIDE\n");
                goto finish;
        }
        if (parse_version_arg(version_s, &version) < 0)
                goto finish;
        ret = load(argv[optind], true, &base, NULL);
        if (ret != 0)
                goto finish;
        ret = load(argv[optind + 1], true, &over, NULL);
        if (ret != 0)
                goto finish;
        ret = EXIT_INVALID;
        r = ign_config_merge(base, over, &merged);
        if (r < 0) {
                log_error_errno(r, "cannot merge the configs: %m");
                goto finish;
        }
        r = ign_config_validate(merged, &report);
        print_report(&report);
        if (r < 0) {
                fprintf(stderr, "merged config is invalid\n");
                goto finish;
        }
        ret = output(merged, version, pretty);
finish:
        goflags_free(flags);
        return ret;
}

static int verb_pointer(int argc, char **argv)
{
        char *url = NULL, *ca = NULL, *token = NULL, *version_s = NULL;
        char **headers = NULL;
        bool pretty = false;
        const GoFlag flags[] = {
                { "url", GOFLAG_STRING, &url, NULL,
                  "merge source (e.g. https://api-int.CLUSTER:22623/config/worker)" },
                { "ca", GOFLAG_STRING, &ca, NULL, "PEM file of the CA bundle to trust" },
                { "header", GOFLAG_STRV, &headers, NULL, "HTTP header for the merge source, NAME=VALUE" },
                { "token", GOFLAG_STRING, &token, NULL, "bearer token for the merge source" },
                { "version", GOFLAG_STRING, &version_s, "3.2", "spec version of the pointer config" },
                { "pretty", GOFLAG_BOOL, &pretty, NULL, "indent the output" },
                {},
        };
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_free_ char *pem = NULL;
        IgnPointerOptions o = {};
        size_t pem_len = 0;
        int optind, r, ret = EXIT_USAGE;

        r = goflags_parse("cradle ignition pointer",
                          "cradle ignition pointer -url URL [-ca FILE] [-header NAME=VALUE]... [-token T] "
                          "[-version 3.x]\nPrints a pointer config that merges URL.",
                          flags, argc, argv, &optind);
        if (r <= 0) {
                ret = r == 0 ? 0 : EXIT_USAGE;
                goto finish;
        }
        if (!isempty(token))
                redact_register_secret(token);
        if (optind != argc || isempty(url)) {
                fprintf(stderr,
                        "cradle ignition pointer: -url is required and takes no positional arguments\n");
                goto finish;
        }
        if (parse_version_arg(version_s, &o.version) < 0)
                goto finish;
        ret = EXIT_INVALID;
        if (!isempty(ca)) {
                r = read_full_file(ca, BUF_MAX_SMALL_FILE * 4, &pem, &pem_len);
                if (r < 0) {
                        log_error_errno(r, "cannot read '%s': %m", ca);
                        goto finish;
                }
        }
        o.url = url;
        o.ca_pem = pem;
        o.ca_len = pem_len;
        o.headers = headers;
        o.token = isempty(token) ? NULL : token;
        r = ign_pointer_new(&o, &c);
        if (r == -EOPNOTSUPP) {
                fprintf(stderr, "spec 3.0.0 has no httpHeaders: use -version 3.1 or later\n");
                goto finish;
        }
        if (r == -EINVAL) {
                fprintf(stderr, "invalid -header (expected NAME=VALUE)\n");
                ret = EXIT_USAGE;
                goto finish;
        }
        if (r < 0) {
                log_error_errno(r, "cannot build the pointer config: %m");
                goto finish;
        }
        {
                _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
                r = ign_config_validate(c, &report);
                print_report(&report);
                if (r < 0)
                        goto finish;
        }
        ret = output(c, -1, pretty);
finish:
        goflags_free(flags);
        return ret;
}

static int verb_apply(int argc, char **argv)
{
        char *root = NULL;
        bool in_root = false, skip = false;
        const GoFlag flags[] = {
                { "root", GOFLAG_STRING, &root, NULL, "directory to write into (required)" },
                { "symlinks-in-root", GOFLAG_BOOL, &in_root, NULL,
                  "resolve absolute symlinks inside the root like Ignition's runtime, instead of refusing "
                  "them" },
                { "skip-unsupported", GOFLAG_BOOL, &skip, NULL,
                  "skip passwd, disks, raid, luks and filesystems instead of refusing the config" },
                {},
        };
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_free_ char *err = NULL;
        int optind, r, ret = EXIT_USAGE;

        r = goflags_parse(
                "cradle ignition apply",
                "cradle ignition apply -root DIR FILE\n"
                "Writes the config's files, directories, links and systemd units under DIR, as Ignition's "
                "files stage does.",
                flags, argc, argv, &optind);
        if (r <= 0) {
                ret = r == 0 ? 0 : EXIT_USAGE;
                goto finish;
        }
        if (isempty(root) || argc - optind != 1) {
                fprintf(stderr, "cradle ignition apply: -root DIR and one FILE are required\n");
                goto finish;
        }
        ret = load(argv[optind], true, &c, NULL);
        if (ret != 0)
                goto finish;
        r = ign_config_apply(
                c, root,
                (in_root ? IGN_APPLY_SYMLINKS_IN_ROOT : 0) | (skip ? IGN_APPLY_SKIP_UNSUPPORTED : 0), &err);
        if (r < 0) {
                if (err)
                        log_error_errno(r, "%s: %m", err);
                else
                        log_error_errno(r, "cannot apply '%s' to '%s': %m", argv[optind], root);
                ret = EXIT_INVALID;
        }
finish:
        goflags_free(flags);
        return ret;
}

static int verb_extract(int argc, char **argv)
{
        static const GoFlag flags[] = { {} };
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_free_ void *data = NULL;
        _cleanup_free_ char *err = NULL;
        size_t len;
        int optind, r;

        r = goflags_parse(
                "cradle ignition extract",
                "cradle ignition extract FILE PATH\nPrints the decoded contents of storage.files[PATH].",
                flags, argc, argv, &optind);
        if (r <= 0)
                return r == 0 ? 0 : EXIT_USAGE;
        if (argc - optind != 2) {
                fprintf(stderr, "cradle ignition extract: expected FILE and PATH\n");
                return EXIT_USAGE;
        }
        r = load(argv[optind], false, &c, NULL);
        if (r != 0)
                return r;
        r = ign_config_extract_file(c, argv[optind + 1], IGN_PARSE_MAX, &data, &len, &err);
        if (r < 0) {
                fprintf(stderr, "%s\n", err ? err : strerror(-r));
                return EXIT_INVALID;
        }
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
                return EXIT_INVALID;
        return 0;
}

static int verb_translate(int argc, char **argv)
{
        char *version_s = NULL;
        bool pretty = false;
        const GoFlag flags[] = {
                { "version", GOFLAG_STRING, &version_s, NULL, "target spec version (required)" },
                { "pretty", GOFLAG_BOOL, &pretty, NULL, "indent the output" },
                {},
        };
        _cleanup_ign_config_ IgnConfig *c = NULL;
        IgnVersion v;
        int optind, r, ret = EXIT_USAGE;

        r = goflags_parse(
                "cradle ignition translate",
                "cradle ignition translate -version 3.x FILE\nPrints FILE in another 3.x spec version "
                "(down-translation that would lose data is refused).",
                flags, argc, argv, &optind);
        if (r <= 0) {
                ret = r == 0 ? 0 : EXIT_USAGE;
                goto finish;
        }
        if (argc - optind != 1 || isempty(version_s) || parse_version_arg(version_s, &v) < 0) {
                fprintf(stderr, "cradle ignition translate: -version and one FILE are required\n");
                goto finish;
        }
        ret = load(argv[optind], true, &c, NULL);
        if (ret == 0)
                ret = output(c, v, pretty);
finish:
        goflags_free(flags);
        return ret;
}

const IgnitionVerb ignition_verbs[] = {
        { "validate", verb_validate, "check a config; findings as PATH: MESSAGE" },
        { "merge", verb_merge, "apply an override config onto a base config and print the result" },
        { "pointer", verb_pointer, "print a pointer config merging a URL, with CA and headers" },
        { "apply", verb_apply, "write a config's files, links, directories and units under a root" },
        { "extract", verb_extract, "print the decoded contents of one file of a config" },
        { "translate", verb_translate, "print a config in another 3.x spec version" },
        {},
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: cradle ignition VERB [OPTIONS] ARGS...\n\n"
                   "Ignition v3 configs (spec 3.0.0 to 3.5.0).\n\nVerbs:\n");
        for (const IgnitionVerb *v = ignition_verbs; v->name; v++)
                fprintf(f, "  %-10s %s\n", v->name, v->summary);
        fprintf(f, "\nRun 'cradle ignition VERB --help' for a verb's options.\n"
                   "Exit status: 0 ok, 1 invalid config or failure, 2 usage.\n");
}

int ignition_main(int argc, char **argv)
{
        log_setup("cradle-ignition");
        if (argc < 2) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "-help") ||
            streq(argv[1], "help")) {
                usage(stdout);
                return 0;
        }
        for (const IgnitionVerb *v = ignition_verbs; v->name; v++)
                if (streq(argv[1], v->name))
                        return v->run(argc - 1, argv + 1);
        fprintf(stderr, "cradle ignition: unknown verb '%s'\n", argv[1]);
        usage(stderr);
        return EXIT_USAGE;
}
