/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Reading the journal in-process with sd-journal, written the way
 * "journalctl --all [--since S] [MATCHES]" prints it in its default "short"
 * format, so that the log files the logs sender uploads read like the Go
 * agent's (which runs journalctl):
 *
 *         Nov 23 10:04:29 host installer[4242]: Writing image to disk
 *
 * Continuation lines of multi-line messages are indented under the
 * message, as journalctl does.
 */

#include <stdbool.h>
#include <stddef.h>

#include "timeutil.h"

/* The subset of journalctl's --since syntax (systemd.time(7)) cradle
 * understands: "now", "today", "yesterday", "tomorrow", "@EPOCH",
 * "YYYY-MM-DD[ HH:MM[:SS]]", "HH:MM[:SS]" (today), and relative times
 * "N unit [N unit...] ago", "-N unit", "+N unit" (units: us, ms, s/sec/
 * second(s), m/min/minute(s), h/hour(s), d/day(s), w/week(s), M/month(s),
 * y/year(s); a month is 30.44 days and a year 365.25 days, as systemd).
 * Local time. now is the reference (CLOCK_REALTIME usec). Returns 0 with
 * the time in *ret, or -EINVAL. */
int journal_since_parse(const char *s, usec_t now, usec_t *ret);

typedef enum JournalSelect {
        JOURNAL_SELECT_ALL,
        JOURNAL_SELECT_TAG, /* TAG=<value> */
        JOURNAL_SELECT_UNIT, /* -u <value>: the unit's own lines and what PID 1 says about it */
} JournalSelect;

typedef struct JournalQuery {
        const char *directory; /* a journal directory; NULL or missing: the local journal */
        JournalSelect select;
        const char *value; /* the tag or the unit name ("bootkube" means bootkube.service) */
        usec_t since; /* 0: from the start */
} JournalQuery;

/* Writes the matching entries to fd. *ret_count (may be NULL) is the
 * number of entries written. Returns 0 or a negative errno. */
int journal_write_text(const JournalQuery *q, int fd, size_t *ret_count);

/* One entry in the short format (no trailing newline handling: the result
 * ends with "\n"); for tests. realtime in usec. Allocated. */
char *journal_format_short(usec_t realtime, const char *hostname, const char *identifier, const char *pid,
                           const char *message, size_t message_len);
