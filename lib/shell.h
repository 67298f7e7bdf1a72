/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The one audited place that turns words into POSIX shell text, for the
 * command lines whose upstream contract *is* a shell string (the install
 * and logs-gather steps run "sh -c <command>") and for logging argv.
 * Returned strings are newly allocated; NULL means out of memory.
 */

/* Single-quoted unless s is made only of characters that need no quoting. */
char *shell_quote(const char *s);
/* Quoted words joined with spaces. */
char *shell_join(char *const *argv);
