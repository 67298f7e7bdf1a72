/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Keeping secrets out of log lines and error texts.
 *
 * Two mechanisms: a process-wide registry of known secret values (the pull
 * secret token, bearer tokens, key passphrases), which every log line and
 * every error text built from outside output is scrubbed against; and
 * shape-based helpers for URLs and HTTP headers, for secrets we do not know
 * in advance (a token in a query string, a password in userinfo).
 *
 * All functions are thread-safe. Returned strings are newly allocated and
 * owned by the caller; NULL means out of memory.
 */

#include <stdbool.h>

#define REDACTED "***"

/* Remembers a copy of value (values shorter than 4 bytes are ignored: they
 * would mangle ordinary text). Erased at exit. */
int redact_register_secret(const char *value);

/* s with every registered secret replaced by REDACTED. */
char *redact_known_secrets(const char *s);

/* The URL with the password of its userinfo and the values of
 * token-like query parameters (token, api_key, access_token, password,
 * secret, signature, X-Amz-Signature, ...) replaced by REDACTED. */
char *redact_url(const char *url);

/* True for header names whose values are credentials (Authorization,
 * Proxy-Authorization, X-Secret-Key, Cookie, ...), case-insensitively. */
bool redact_header_is_sensitive(const char *name);

/* "Name: value" with the value replaced by REDACTED when the name is
 * sensitive; otherwise a copy. */
char *redact_header(const char *line);
