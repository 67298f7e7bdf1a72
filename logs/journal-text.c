/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "logs/journal-text.h"
#include "strutil.h"

static const struct {
        const char *name;
        usec_t usec;
} time_units[] = {
        { "us", 1 },
        { "usec", 1 },
        { "ms", USEC_PER_MSEC },
        { "msec", USEC_PER_MSEC },
        { "s", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "second", USEC_PER_SEC },
        { "seconds", USEC_PER_SEC },
        { "m", 60 * USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC },
        { "minute", 60 * USEC_PER_SEC },
        { "minutes", 60 * USEC_PER_SEC },
        { "h", 3600 * USEC_PER_SEC },
        { "hr", 3600 * USEC_PER_SEC },
        { "hour", 3600 * USEC_PER_SEC },
        { "hours", 3600 * USEC_PER_SEC },
        { "d", 86400 * USEC_PER_SEC },
        { "day", 86400 * USEC_PER_SEC },
        { "days", 86400 * USEC_PER_SEC },
        { "w", 7 * 86400 * USEC_PER_SEC },
        { "week", 7 * 86400 * USEC_PER_SEC },
        { "weeks", 7 * 86400 * USEC_PER_SEC },
        /* systemd's: 30.44 days and 365.25 days */
        { "M", 2629800 * USEC_PER_SEC },
        { "month", 2629800 * USEC_PER_SEC },
        { "months", 2629800 * USEC_PER_SEC },
        { "y", 31557600 * USEC_PER_SEC },
        { "year", 31557600 * USEC_PER_SEC },
        { "years", 31557600 * USEC_PER_SEC },
};

/* "5 hours", "1h 30min", "90s": a sum of number+unit components. */
static int parse_span(const char *s, usec_t *ret)
{
        usec_t total = 0;
        bool any = false;
        const char *p = s;

        for (;;) {
                uint64_t n = 0;
                const char *u;
                size_t ul;
                bool found = false;

                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                if (!isdigit((unsigned char)*p))
                        return -EINVAL;
                while (isdigit((unsigned char)*p)) {
                        if (n > UINT64_MAX / 10 - 10)
                                return -ERANGE;
                        n = n * 10 + (uint64_t)(*p - '0');
                        p++;
                }
                while (*p == ' ')
                        p++;
                u = p;
                while (*p && isalpha((unsigned char)*p))
                        p++;
                ul = (size_t)(p - u);
                if (ul == 0) {
                        /* a bare number is seconds */
                        total += n * USEC_PER_SEC;
                        any = true;
                        continue;
                }
                for (size_t i = 0; i < ELEMENTSOF(time_units); i++)
                        if (strlen(time_units[i].name) == ul && strneq(time_units[i].name, u, ul)) {
                                if (n > UINT64_MAX / time_units[i].usec)
                                        return -ERANGE;
                                total += n * time_units[i].usec;
                                found = true;
                                break;
                        }
                if (!found)
                        return -EINVAL;
                any = true;
        }
        if (!any)
                return -EINVAL;
        *ret = total;
        return 0;
}

static usec_t local_midnight(usec_t now, int day_offset)
{
        time_t t = (time_t)(now / USEC_PER_SEC);
        struct tm tm;

        localtime_r(&t, &tm);
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday += day_offset;
        tm.tm_isdst = -1;
        t = mktime(&tm);
        return t < 0 ? 0 : (usec_t)t * USEC_PER_SEC;
}

int journal_since_parse(const char *s, usec_t now, usec_t *ret)
{
        _cleanup_free_ char *copy = NULL;
        const char *rest;
        usec_t span;
        struct tm tm = {};
        time_t t;
        char *end;
        int r;

        if (isempty(s))
                return -EINVAL;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        strstrip(copy);

        if (streq(copy, "now")) {
                *ret = now;
                return 0;
        }
        if (streq(copy, "today")) {
                *ret = local_midnight(now, 0);
                return 0;
        }
        if (streq(copy, "yesterday")) {
                *ret = local_midnight(now, -1);
                return 0;
        }
        if (streq(copy, "tomorrow")) {
                *ret = local_midnight(now, 1);
                return 0;
        }
        if ((rest = startswith(copy, "@"))) {
                uint64_t secs;
                r = safe_atou64(rest, &secs);
                if (r < 0 || secs > UINT64_MAX / USEC_PER_SEC)
                        return -EINVAL;
                *ret = secs * USEC_PER_SEC;
                return 0;
        }
        if (copy[0] == '-' || copy[0] == '+') {
                r = parse_span(copy + 1, &span);
                if (r < 0)
                        return -EINVAL;
                if (copy[0] == '-')
                        *ret = span > now ? 0 : now - span;
                else
                        *ret = now + span;
                return 0;
        }
        if (endswith(copy, " ago")) {
                copy[strlen(copy) - 4] = 0;
                r = parse_span(copy, &span);
                if (r < 0)
                        return -EINVAL;
                *ret = span > now ? 0 : now - span;
                return 0;
        }

        /* absolute: a date with an optional time, or a time of today */
        {
                time_t nt = (time_t)(now / USEC_PER_SEC);
                localtime_r(&nt, &tm);
        }
        end = strptime(copy, "%Y-%m-%d", &tm);
        if (end) {
                tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
                if (*end == ' ' || *end == 'T')
                        end++;
                if (*end) {
                        char *e2 = strptime(end, "%H:%M:%S", &tm);
                        if (!e2 || *e2) {
                                e2 = strptime(end, "%H:%M", &tm);
                                tm.tm_sec = 0;
                        }
                        if (!e2 || *e2)
                                return -EINVAL;
                }
        } else {
                /* the failed date parse may have written into tm */
                time_t nt = (time_t)(now / USEC_PER_SEC);
                localtime_r(&nt, &tm);
                end = strptime(copy, "%H:%M:%S", &tm);
                if (!end || *end) {
                        end = strptime(copy, "%H:%M", &tm);
                        tm.tm_sec = 0;
                }
                if (!end || *end)
                        return -EINVAL;
        }
        tm.tm_isdst = -1;
        t = mktime(&tm);
        if (t < 0)
                return -EINVAL;
        *ret = (usec_t)t * USEC_PER_SEC;
        return 0;
}

char *journal_format_short(usec_t realtime, const char *hostname, const char *identifier, const char *pid,
                           const char *message, size_t message_len)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_PROCESS_OUTPUT);
        time_t t = (time_t)(realtime / USEC_PER_SEC);
        struct tm tm;
        char when[32];
        size_t prefix;
        char *ret;
        int r;

        localtime_r(&t, &tm);
        strftime(when, sizeof(when), "%b %d %H:%M:%S", &tm);
        r = buf_appendf(&b, "%s %s %s", when, strempty(hostname), strempty(identifier));
        if (r >= 0 && !isempty(pid))
                r = buf_appendf(&b, "[%s]", pid);
        if (r >= 0)
                r = buf_append_str(&b, ": ");
        if (r < 0)
                return NULL;
        prefix = b.len;
        for (size_t i = 0; r >= 0 && i < message_len; i++) {
                r = buf_append_char(&b, message[i]);
                /* continuation lines line up under the message */
                if (r >= 0 && message[i] == '\n' && i + 1 < message_len)
                        for (size_t k = 0; r >= 0 && k < prefix; k++)
                                r = buf_append_char(&b, ' ');
        }
        if (r >= 0 && (message_len == 0 || message[message_len - 1] != '\n'))
                r = buf_append_char(&b, '\n');
        if (r < 0 || buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}

/* The value of field name in the current entry, or NULL; *ret_len set. */
static const char *entry_field(sd_journal *j, const char *name, size_t *ret_len)
{
        const void *d;
        size_t l, nl = strlen(name);

        if (sd_journal_get_data(j, name, &d, &l) < 0 || l < nl + 1)
                return NULL;
        *ret_len = l - nl - 1;
        return (const char *)d + nl + 1;
}

static char *entry_field_dup(sd_journal *j, const char *name)
{
        size_t l;
        const char *v = entry_field(j, name, &l);

        return v ? strndup(v, l) : NULL;
}

static int add_unit_matches(sd_journal *j, const char *unit)
{
        _cleanup_free_ char *u = strchr(unit, '.') ? strdup(unit) : strdup_printf("%s.service", unit);
        _cleanup_free_ char *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL;
        int r;

        if (!u)
                return -ENOMEM;
        m1 = strdup_printf("_SYSTEMD_UNIT=%s", u);
        m2 = strdup_printf("UNIT=%s", u);
        m3 = strdup_printf("COREDUMP_UNIT=%s", u);
        m4 = strdup_printf("OBJECT_SYSTEMD_UNIT=%s", u);
        if (!m1 || !m2 || !m3 || !m4)
                return -ENOMEM;
        /* journalctl -u: the unit's processes, PID 1 about the unit, and
         * coredumps and objects of the unit logged by root */
        if ((r = sd_journal_add_match(j, m1, 0)) < 0 || (r = sd_journal_add_disjunction(j)) < 0 ||
            (r = sd_journal_add_match(j, "_PID=1", 0)) < 0 || (r = sd_journal_add_match(j, m2, 0)) < 0 ||
            (r = sd_journal_add_disjunction(j)) < 0 || (r = sd_journal_add_match(j, "_UID=0", 0)) < 0 ||
            (r = sd_journal_add_match(j, m3, 0)) < 0 || (r = sd_journal_add_disjunction(j)) < 0 ||
            (r = sd_journal_add_match(j, "_UID=0", 0)) < 0 || (r = sd_journal_add_match(j, m4, 0)) < 0)
                return r;
        return 0;
}

int journal_write_text(const JournalQuery *q, int fd, size_t *ret_count)
{
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        struct stat st;
        size_t count = 0;
        int r;

        if (q->directory && stat(q->directory, &st) == 0 && S_ISDIR(st.st_mode))
                r = sd_journal_open_directory(&j, q->directory, 0);
        else
                r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
        if (r < 0)
                return r;
        /* --all: print long and unprintable fields too */
        (void)sd_journal_set_data_threshold(j, 0);

        switch (q->select) {
        case JOURNAL_SELECT_TAG: {
                _cleanup_free_ char *m = strdup_printf("TAG=%s", strempty(q->value));
                if (!m)
                        return -ENOMEM;
                r = sd_journal_add_match(j, m, 0);
                break;
        }
        case JOURNAL_SELECT_UNIT:
                r = add_unit_matches(j, strempty(q->value));
                break;
        default:
                r = 0;
        }
        if (r < 0)
                return r;

        if (q->since > 0)
                r = sd_journal_seek_realtime_usec(j, q->since);
        else
                r = sd_journal_seek_head(j);
        if (r < 0)
                return r;

        for (;;) {
                _cleanup_free_ char *host = NULL, *ident = NULL, *pid = NULL, *line = NULL;
                const char *msg;
                size_t msg_len = 0;
                uint64_t when;

                r = sd_journal_next(j);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (sd_journal_get_realtime_usec(j, &when) < 0)
                        continue;
                if (q->since > 0 && when < q->since)
                        continue;
                msg = entry_field(j, "MESSAGE", &msg_len);
                if (!msg)
                        continue;
                host = entry_field_dup(j, "_HOSTNAME");
                ident = entry_field_dup(j, "SYSLOG_IDENTIFIER");
                if (!ident)
                        ident = entry_field_dup(j, "_COMM");
                pid = entry_field_dup(j, "_PID");
                if (!pid)
                        pid = entry_field_dup(j, "SYSLOG_PID");
                line = journal_format_short(when, host, ident, pid, msg, msg_len);
                if (!line)
                        return -ENOMEM;
                r = write_all(fd, line, strlen(line));
                if (r < 0)
                        return r;
                count++;
        }
        if (ret_count)
                *ret_count = count;
        return 0;
}
