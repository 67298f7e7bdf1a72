/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Logging for applets (agent, installer, ...). lib/ code logs at debug at
 * most; the applet that knows the context logs once and returns the error:
 *
 *         if (r < 0)
 *                 return log_error_errno(r, "cannot open '%s': %m", path);
 *
 * Destinations: the journal (native protocol, structured fields), stderr,
 * stdout and an append-only text file, in any combination. By default the
 * journal is used when its socket exists and stderr otherwise; the
 * CRADLE_LOG_TARGET environment variable (journal, stderr, stdout, null,
 * comma-separated) overrides that, for tests and debugging.
 *
 * Journal entries carry SYSLOG_IDENTIFIER, CODE_FILE/LINE/FUNC, ERRNO and
 * PRIORITY, the process-wide fields set with log_set_field() (for example
 * TAG=agent, CRADLE_VERB=agent, HOST_ID=...) and the fields of the calling
 * thread pushed with LOG_CONTEXT_PUSH() (STEP_TYPE=, STEP_ID=, STAGE=).
 *
 * Every line is scrubbed against the secrets registered with
 * redact_register_secret() before it leaves the process.
 */

#include <stdarg.h>
#include <syslog.h>

#include "macro.h"

typedef enum LogTarget {
        LOG_TARGET_JOURNAL = 1 << 0,
        LOG_TARGET_STDERR = 1 << 1,
        LOG_TARGET_STDOUT = 1 << 2,
        LOG_TARGET_FILE = 1 << 3,
} LogTarget;

/* Identifier for SYSLOG_IDENTIFIER and text lines; chooses the default
 * targets (see above). Call once from main(); safe to call again. */
void log_setup(const char *identifier);
void log_set_targets(unsigned targets);
/* The targets a program's own logging flags ask for, unless
 * CRADLE_LOG_TARGET chose already (then nothing changes): `wanted`, less
 * the journal when its socket is not writable (no journald: a container,
 * early boot, a test), or `fallback` when nothing is left. */
void log_set_default_targets(unsigned wanted, unsigned fallback);
unsigned log_get_targets(void);
/* Adds LOG_TARGET_FILE: appends to path (created 0600 if missing). */
int log_open_file(const char *path);
void log_close_file(void);

void log_set_max_level(int level);
int log_get_max_level(void);
/* "trace", "debug", "info", "warn", "warning", "error", "fatal", "panic",
 * or a syslog number 0-7; returns the syslog level or -EINVAL. */
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);

/* A field attached to every journal entry of the process (name in journal
 * syntax: upper case, digits, underscores). A NULL value removes it. */
int log_set_field(const char *name, const char *value);

/* Thread-local fields, valid for the enclosing scope; the value is not
 * copied and must outlive the scope. */
typedef struct LogContext {
        const char *name;
        const char *value;
        struct LogContext *prev;
} LogContext;
void log_context_push(LogContext *c);
void log_context_pop(LogContext *c);
#define LOG_CONTEXT_PUSH_IMPL(var, n, v) \
        _cleanup_(log_context_pop) LogContext var = { .name = (n), .value = (v) }; \
        log_context_push(&var)
#define LOG_CONTEXT_CAT_(a, b) a##b
#define LOG_CONTEXT_CAT(a, b) LOG_CONTEXT_CAT_(a, b)
#define LOG_CONTEXT_PUSH(n, v) LOG_CONTEXT_PUSH_IMPL(LOG_CONTEXT_CAT(_log_ctx_, __COUNTER__), n, v)

/* Returns -ERRNO_VALUE(error) (or 0 for error == 0), so callers can
 * "return log_error_errno(r, ...)". %m prints strerror(error). */
int log_internal(int level, int error, const char *file, int line, const char *func, const char *format, ...)
        _printf_(6, 7);
int log_internalv(int level, int error, const char *file, int line, const char *func, const char *format,
                  va_list ap) _printf_(6, 0);

#define log_full_errno(level, error, ...) \
        ({ \
                int _l = (level), _e = (error); \
                _l <= log_get_max_level() ? log_internal(_l, _e, __FILE__, __LINE__, __func__, __VA_ARGS__) \
                                          : -ERRNO_VALUE(_e); \
        })
#define log_full(level, ...) (void)log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)

#define log_oom() log_error_errno(SYNTHETIC_ERRNO(ENOMEM), "out of memory")
