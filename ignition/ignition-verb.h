/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The "ignition" applet: cradle ignition validate|merge|pointer|apply|extract|translate. */
int ignition_main(int argc, char **argv);

/* Its sub-verbs, in the order the usage lists them; NULL-name-terminated
 * (the man page generator walks them). */
typedef struct IgnitionVerb {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
} IgnitionVerb;
extern const IgnitionVerb ignition_verbs[];
