/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Command lines with the syntax of Go's "flag" package, because the
 * programs cradle replaces are Go programs and assisted-service generates
 * their command lines: "-name value", "--name value", "-name=value";
 * booleans as "-name" or "-name=false" (a separate "false" is NOT consumed
 * and ends flag parsing); parsing stops at the first non-flag argument or
 * at "--"; -h/-help print the usage and succeed.
 *
 * A flag's default comes from the table, overridden by its environment
 * variable(s) when set (the Go programs' envconfig defaults, e.g.
 * DRY_ENABLE), overridden by the command line.
 */

#include <stdbool.h>
#include <stdio.h>

typedef enum GoFlagType {
        GOFLAG_STRING, /* char *           (allocated; goflags_free() releases) */
        GOFLAG_BOOL, /* bool */
        GOFLAG_INT, /* int */
        GOFLAG_UINT64, /* uint64_t */
        GOFLAG_DOUBLE, /* double */
        GOFLAG_STRV, /* char **, repeatable: every use appends */
} GoFlagType;

typedef struct GoFlag {
        const char *name;
        GoFlagType type;
        void *value;
        const char *def; /* default as text; NULL: the zero value */
        const char *usage;
        const char *env; /* environment variables giving the default */
        const char *env2;
        bool hidden; /* accepted but not listed in the usage */
} GoFlag;

/* Sets defaults, then parses argv[1..]. Returns 1 to go on (with
 * *ret_optind at the first positional argument), 0 when the usage was
 * printed on request (exit 0), or -EINVAL after printing the error and the
 * usage to stderr (exit 2, as Go's ExitOnError). */
int goflags_parse(const char *prog, const char *synopsis, const GoFlag flags[], int argc, char **argv,
                  int *ret_optind);

/* "Usage of PROG:" followed by the flags sorted by name, as Go prints it. */
void goflags_usage(FILE *f, const char *prog, const char *synopsis, const GoFlag flags[]);

/* What the usage shows of a flag: the type word after its name ("string",
 * "int", "uint", "float"; NULL for booleans), and whether its default is
 * printed (Go leaves zero values out). */
const char *goflags_type_word(const GoFlag *f);
bool goflags_has_default(const GoFlag *f);

/* Replaces what goflags_usage() prints, for every table, while set (NULL
 * restores the text): the man page generator (packaging/man/) receives the
 * tables themselves through each verb's own --help path, so the pages
 * cannot drift from the usage. */
typedef void (*GoFlagsUsageHook)(void *userdata, const char *prog, const char *synopsis,
                                 const GoFlag flags[]);
void goflags_set_usage_hook(GoFlagsUsageHook hook, void *userdata);

/* Frees the string and list values the parser allocated. */
void goflags_free(const GoFlag flags[]);
