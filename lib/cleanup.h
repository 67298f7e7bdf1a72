/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Cleanup wrappers for third-party handles, in one place so that no module
 * invents its own. Each accepts a pointer to a possibly-NULL handle.
 */

#include <stdio.h>
#include <dirent.h>

#include "macro.h"

struct json_object;
int json_object_put(struct json_object *obj);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put)

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose)
#define _cleanup_fclose_ _cleanup_(fclosep)

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* A NULL-terminated array of strings owned along with its elements. */
void strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free)
#define _cleanup_strv_free_ _cleanup_(strv_freep)
