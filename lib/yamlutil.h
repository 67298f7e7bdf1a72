/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * YAML <-> json-c, with libyaml (a small, well-kept C library that Debian
 * ships with a static archive, so the static build links it as it is).
 *
 * Reading accepts what Kubernetes documents use: one document of mappings,
 * sequences and scalars. Anchors, aliases and tags other than the core ones
 * are errors. Every scalar becomes a string (no YAML 1.1 type guessing: the
 * caller reads "3" as a number or "true" as a boolean where it expects one),
 * except plain null, ~ and the empty plain scalar, which become null.
 *
 * Writing emits block style with two-space indentation. Strings are written
 * plain only when no YAML reader could take them for anything else (a
 * number, a boolean, null, a date, an indicator); otherwise double-quoted,
 * so that a ConfigMap value "false" or "3" stays a string for kube's YAML
 * 1.1 decoder.
 */

#include <stddef.h>

typedef struct json_object json_object;

/* One YAML (or JSON, a subset) document into json-c; an empty document
 * gives NULL. -EBADMSG with *reterr ("YAML line 3: duplicate mapping key")
 * on malformed or unsupported input. */
int yaml_to_json(const char *data, size_t len, json_object **ret, char **reterr);

/* The YAML text of o (one document, "---" omitted, ending in a newline);
 * allocated, NUL-terminated. */
int json_to_yaml(json_object *o, char **ret, size_t *ret_len);
