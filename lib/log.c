/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "buf.h"
#include "cleanup.h"
#include "log.h"
#include "redact.h"
#include "strutil.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define LOG_MAX_FIELDS 16
#define LOG_LINE_MAX (64u * 1024)

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_identifier[64] = "cradle";
static unsigned log_targets = LOG_TARGET_STDERR;
static int log_max_level = LOG_INFO;
static int log_file_fd = -1;
/* "NAME=value" strings, owned */
static char **log_fields;

static _Thread_local LogContext *log_context_head;

static unsigned targets_from_env(void)
{
        const char *e = getenv("CRADLE_LOG_TARGET");
        _cleanup_strv_free_ char **words = NULL;
        unsigned t = 0;

        if (!e || strv_split(e, ",", &words) < 0)
                return 0;
        STRV_FOREACH (w, words) {
                if (streq(*w, "journal"))
                        t |= LOG_TARGET_JOURNAL;
                else if (streq(*w, "stderr"))
                        t |= LOG_TARGET_STDERR;
                else if (streq(*w, "stdout"))
                        t |= LOG_TARGET_STDOUT;
                else if (streq(*w, "null"))
                        t |= 1u << 31; /* explicit "nowhere" */
        }
        return t;
}

void log_setup(const char *identifier)
{
        unsigned t;
        const char *lvl;

        if (identifier)
                snprintf(log_identifier, sizeof(log_identifier), "%s", identifier);

        t = targets_from_env();
        if (t == 0)
                t = access(JOURNAL_SOCKET, W_OK) == 0 ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
        log_set_targets(t & ~(1u << 31));

        lvl = getenv("CRADLE_LOG_LEVEL");
        if (lvl) {
                int l = log_level_from_string(lvl);
                if (l >= 0)
                        log_set_max_level(l);
        }
}

void log_set_targets(unsigned targets)
{
        pthread_mutex_lock(&log_lock);
        log_targets = (log_targets & LOG_TARGET_FILE) | (targets & ~(unsigned)LOG_TARGET_FILE);
        pthread_mutex_unlock(&log_lock);
}

void log_set_default_targets(unsigned wanted, unsigned fallback)
{
        if (getenv("CRADLE_LOG_TARGET"))
                return;
        if ((wanted & LOG_TARGET_JOURNAL) && access(JOURNAL_SOCKET, W_OK) < 0)
                wanted &= ~(unsigned)LOG_TARGET_JOURNAL;
        log_set_targets(wanted ?: fallback);
}

unsigned log_get_targets(void)
{
        return log_targets;
}

int log_open_file(const char *path)
{
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);

        if (fd < 0)
                return negative_errno();
        pthread_mutex_lock(&log_lock);
        safe_close(log_file_fd);
        log_file_fd = fd;
        log_targets |= LOG_TARGET_FILE;
        pthread_mutex_unlock(&log_lock);
        return 0;
}

void log_close_file(void)
{
        pthread_mutex_lock(&log_lock);
        log_file_fd = safe_close(log_file_fd);
        log_targets &= ~(unsigned)LOG_TARGET_FILE;
        pthread_mutex_unlock(&log_lock);
}

void log_set_max_level(int level)
{
        log_max_level = level;
}

int log_get_max_level(void)
{
        return log_max_level;
}

static const char *const level_names[] = {
        [LOG_EMERG] = "panic",     [LOG_ALERT] = "fatal", [LOG_CRIT] = "fatal", [LOG_ERR] = "error",
        [LOG_WARNING] = "warning", [LOG_NOTICE] = "info", [LOG_INFO] = "info",  [LOG_DEBUG] = "debug",
};

int log_level_from_string(const char *s)
{
        static const struct {
                const char *name;
                int level;
        } table[] = {
                { "panic", LOG_EMERG },   { "fatal", LOG_CRIT },      { "error", LOG_ERR },
                { "err", LOG_ERR },       { "warning", LOG_WARNING }, { "warn", LOG_WARNING },
                { "notice", LOG_NOTICE }, { "info", LOG_INFO },       { "debug", LOG_DEBUG },
                { "trace", LOG_DEBUG },
        };
        unsigned n;

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (strcasecmp(s, table[i].name) == 0)
                        return table[i].level;
        if (safe_atou(s, &n) >= 0 && n <= LOG_DEBUG)
                return (int)n;
        return -EINVAL;
}

const char *log_level_to_string(int level)
{
        if (level < 0 || level > LOG_DEBUG)
                return "unknown";
        return level_names[level];
}

int log_set_field(const char *name, const char *value)
{
        size_t nl = strlen(name);
        int r = 0;

        pthread_mutex_lock(&log_lock);
        for (size_t i = 0; log_fields && log_fields[i]; i++)
                if (strneq(log_fields[i], name, nl) && log_fields[i][nl] == '=') {
                        free(log_fields[i]);
                        memmove(log_fields + i, log_fields + i + 1,
                                (strv_length(log_fields + i + 1) + 1) * sizeof(char *));
                        break;
                }
        if (value)
                r = strv_extendf(&log_fields, "%s=%s", name, value);
        pthread_mutex_unlock(&log_lock);
        return r;
}

void log_context_push(LogContext *c)
{
        c->prev = log_context_head;
        log_context_head = c;
}

void log_context_pop(LogContext *c)
{
        /* Scopes unwind in order, so c is the head. */
        log_context_head = c->prev;
}

/* Appends a logrus-style value: bare when it is a plain word, else quoted. */
static int append_text_value(Buf *b, const char *v)
{
        bool bare = !isempty(v) && strcspn(v, " \t\n\r\"=\\") == strlen(v);
        int r;

        if (bare)
                return buf_append_str(b, v);
        r = buf_append_char(b, '"');
        for (const char *p = v; r >= 0 && *p; p++) {
                if (*p == '"' || *p == '\\')
                        r = buf_append_char(b, '\\');
                if (r >= 0)
                        r = *p == '\n' ? buf_append_str(b, "\\n") : buf_append_char(b, *p);
        }
        return r < 0 ? r : buf_append_char(b, '"');
}

static int format_text_line(Buf *b, int level, const char *message)
{
        struct timespec ts;
        struct tm tm;
        char when[64];
        int r;

        clock_gettime(CLOCK_REALTIME, &ts);
        localtime_r(&ts.tv_sec, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);

        r = buf_appendf(b, "time=\"%s.%03ld\" level=%s msg=", when, ts.tv_nsec / 1000000,
                        log_level_to_string(level));
        if (r >= 0)
                r = append_text_value(b, message);
        for (LogContext *c = log_context_head; r >= 0 && c; c = c->prev) {
                _cleanup_free_ char *key = strdup_lower(c->name);
                if (!key)
                        return -ENOMEM;
                r = buf_appendf(b, " %s=", key);
                if (r >= 0)
                        r = append_text_value(b, strempty(c->value));
        }
        return r < 0 ? r : buf_append_char(b, '\n');
}

static void write_all_ignoring(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                p += k;
                n -= (size_t)k;
        }
}

static void send_journal(int level, int error, const char *file, int line, const char *func,
                         const char *message)
{
        char prio[16], errno_field[32], line_field[32];
        _cleanup_free_ char *msg = NULL, *ident = NULL, *code_file = NULL, *code_func = NULL;
        _cleanup_strv_free_ char **ctx = NULL;
        struct iovec iov[LOG_MAX_FIELDS * 2 + 8];
        size_t n = 0;

        msg = strdup_printf("MESSAGE=%s", message);
        ident = strdup_printf("SYSLOG_IDENTIFIER=%s", log_identifier);
        code_file = strdup_printf("CODE_FILE=%s", file);
        code_func = strdup_printf("CODE_FUNC=%s", func);
        if (!msg || !ident || !code_file || !code_func)
                return;
        snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
        snprintf(line_field, sizeof(line_field), "CODE_LINE=%d", line);

#define IOV_STR(s) (iov[n++] = (struct iovec){ .iov_base = (void *)(s), .iov_len = strlen(s) })
        IOV_STR(msg);
        IOV_STR(prio);
        IOV_STR(ident);
        IOV_STR(code_file);
        IOV_STR(line_field);
        IOV_STR(code_func);
        if (error != 0) {
                snprintf(errno_field, sizeof(errno_field), "ERRNO=%d", ERRNO_VALUE(error));
                IOV_STR(errno_field);
        }
        for (LogContext *c = log_context_head; c && n < ELEMENTSOF(iov) - LOG_MAX_FIELDS; c = c->prev)
                if (strv_extendf(&ctx, "%s=%s", c->name, strempty(c->value)) < 0)
                        return;
        STRV_FOREACH (f, ctx)
                IOV_STR(*f);
        STRV_FOREACH (f, log_fields) {
                if (n >= ELEMENTSOF(iov))
                        break;
                IOV_STR(*f);
        }
#undef IOV_STR
        (void)sd_journal_sendv(iov, (int)n);
}

int log_internalv(int level, int error, const char *file, int line, const char *func, const char *format,
                  va_list ap)
{
        _cleanup_buf_ Buf raw = BUF_INIT(LOG_LINE_MAX), text = BUF_INIT(LOG_LINE_MAX + 4096);
        _cleanup_free_ char *message = NULL;
        int saved_errno = errno;
        unsigned targets;

        /* %m means the error we were given, not whatever errno happens to be */
        errno = ERRNO_VALUE(error);
        if (buf_appendv(&raw, format, ap) < 0)
                goto out;
        message = redact_known_secrets(buf_str(&raw));
        if (!message)
                goto out;

        pthread_mutex_lock(&log_lock);
        targets = log_targets;
        if (targets & LOG_TARGET_JOURNAL)
                send_journal(level, error, file, line, func, message);
        if ((targets & (LOG_TARGET_STDERR | LOG_TARGET_STDOUT | LOG_TARGET_FILE)) &&
            format_text_line(&text, level, message) >= 0) {
                if (targets & LOG_TARGET_STDERR)
                        write_all_ignoring(STDERR_FILENO, text.data, text.len);
                if (targets & LOG_TARGET_STDOUT)
                        write_all_ignoring(STDOUT_FILENO, text.data, text.len);
                if ((targets & LOG_TARGET_FILE) && log_file_fd >= 0)
                        write_all_ignoring(log_file_fd, text.data, text.len);
        }
        pthread_mutex_unlock(&log_lock);
out:
        errno = saved_errno;
        return error == 0 ? 0 : -ERRNO_VALUE(error);
}

int log_internal(int level, int error, const char *file, int line, const char *func, const char *format, ...)
{
        va_list ap;
        int r;

        va_start(ap, format);
        r = log_internalv(level, error, file, line, func, format, ap);
        va_end(ap);
        return r;
}
