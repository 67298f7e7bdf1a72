/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * String and string-list helpers, and the safe number parsers that replace
 * atoi and strtol everywhere. Parsers return 0 or a negative errno and write
 * their result only on success.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Numbers: the whole string must be the number (no trailing junk, no
 * leading blanks); out-of-range values give -ERANGE. */
int safe_atoi64(const char *s, int64_t *ret);
int safe_atou64(const char *s, uint64_t *ret);
int safe_atoi(const char *s, int *ret);
int safe_atou(const char *s, unsigned *ret);
int safe_atod(const char *s, double *ret);
/* Go's strconv.ParseBool: 1 t T TRUE true True 0 f F FALSE false False. */
int parse_bool_go(const char *s, bool *ret);

/* Returns a pointer into s just past the prefix, or NULL. */
const char *startswith(const char *s, const char *prefix) _pure_;
const char *startswith_no_case(const char *s, const char *prefix) _pure_;
bool endswith(const char *s, const char *suffix) _pure_;

/* Removes leading and trailing whitespace in place; returns s. */
char *strstrip(char *s);
/* Newly allocated formatted string, NULL on allocation failure. */
char *strdup_printf(const char *fmt, ...) _printf_(1, 2);
char *strdup_vprintf(const char *fmt, va_list ap) _printf_(1, 0);
/* Newly allocated copy with every occurrence of needle replaced. */
char *str_replace_all(const char *s, const char *needle, const char *replacement);
/* Newly allocated, lower-cased copy. */
char *strdup_lower(const char *s);
/* Frees *p and stores a copy of s (NULL allowed) there. */
int free_and_strdup(char **p, const char *s);

/* NULL-terminated string lists ("strv"), owned with their elements. */
size_t strv_length(char *const *l) _pure_;
bool strv_contains(char *const *l, const char *s) _pure_;
/* Appends a copy of s; on failure the list is unchanged. */
int strv_extend(char ***l, const char *s);
/* Appends s itself (ownership moves into the list on success only). */
int strv_push(char ***l, char *s);
int strv_extendf(char ***l, const char *fmt, ...) _printf_(2, 3);
/* Appends copies of a and b (a flag and its value); both or neither. */
int strv_extend_pair(char ***l, const char *a, const char *b);
/* Splits on any of the separator characters, dropping empty fields. */
int strv_split(const char *s, const char *separators, char ***ret);
/* Newly allocated join; "" for an empty or NULL list. */
char *strv_join(char *const *l, const char *separator);
char **strv_copy(char *const *l);
void strv_sort(char **l);

#define STRV_FOREACH(s, l) for (char *const *s = (l); s && *s; s++)
/* True when x (not NULL) equals one of the strings given. */
#define STR_IN_SET(x, ...) strv_contains((char *const[]){ __VA_ARGS__, NULL }, (x))
