/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The applet table of the multi-call binary. Each applet is a function
 * taking the command line as its program would see it: argv[0] is the
 * program name ("agent", or "cradle agent" when called as a verb).
 * It returns the process exit status.
 */

typedef enum VerbFlags {
        VERB_HIDDEN = 1 << 0, /* not listed by "cradle help" (upstream alias names) */
} VerbFlags;

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
        VerbFlags flags;
} Verb;

/* NULL-name-terminated, in the order "cradle help" lists them. */
extern const Verb cradle_verbs[];

const Verb *verb_find(const char *name);

/* What main() does: runs the verb named by argv[0]'s last path component
 * (a link named after the applet) or, when that starts with "cradle", by
 * argv[1]. Returns the exit status. */
int multicall_main(int argc, char **argv);
