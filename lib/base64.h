/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <stddef.h>

/* Decodes standard base64 as Go's base64.StdEncoding does: padding
 * required, '=' only at the end, at most two; the characters in `skip` are
 * ignored wherever they stand (Go skips "\r\n"). *ret is NUL-terminated,
 * *ret_len (when given) does not count the NUL. -EINVAL on malformed input. */
int base64_decode(const char *s, const char *skip, char **ret, size_t *ret_len);

/* Standard base64 with padding (Go's base64.StdEncoding.EncodeToString);
 * allocated, NUL-terminated; NULL on allocation failure. */
char *base64_encode(const void *data, size_t len);
