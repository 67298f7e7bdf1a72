/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "hub-text.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"

/* lib/log.h refuses lines over 64 KiB; a part escaped (at most twice its
 * size) stays well under */
#define LOG_PART_MAX (16u * 1024)

/* The largest n <= max such that s[0..n) ends before a UTF-8 character:
 * s[n] is not a continuation byte (10xxxxxx). */
static size_t utf8_prefix(const char *s, size_t len, size_t max)
{
        size_t n = max < len ? max : len;

        while (n > 0 && n < len && ((unsigned char)s[n] & 0xc0) == 0x80)
                n--;
        return n;
}

bool hub_text_too_long(const char *s, size_t max)
{
        return s && strlen(s) > max;
}

#define CUT_MARKER " … [%zu bytes cut]"

char *hub_text_bound(const char *s, size_t max)
{
        size_t len = s ? strlen(s) : 0, keep;
        int room;

        if (len <= max)
                return strdup(strempty(s));
        /* the marker with the longest count it can show */
        room = snprintf(NULL, 0, CUT_MARKER, len);
        if (room < 0 || (size_t)room >= max)
                return strndup(s, utf8_prefix(s, len, max));
        keep = utf8_prefix(s, len, max - (size_t)room);
        return strdup_printf("%.*s" CUT_MARKER, (int)keep, s, len - keep);
}

int hub_json_add_bounded(json_object *obj, const char *key, const char *s, size_t max)
{
        _cleanup_free_ char *b = hub_text_bound(s, max);

        if (!b)
                return -ENOMEM;
        return json_add_string(obj, key, b);
}

int hub_json_bound_strings(json_object *v, size_t max)
{
        int r;

        switch (json_object_get_type(v)) {
        case json_type_object: {
                json_object_object_foreach (v, k, e) {
                        if (json_object_is_type(e, json_type_string)) {
                                if (!hub_text_too_long(json_object_get_string(e), max))
                                        continue;
                                r = hub_json_add_bounded(v, k, json_object_get_string(e), max);
                        } else
                                r = hub_json_bound_strings(e, max);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *e = json_object_array_get_idx(v, i);

                        if (json_object_is_type(e, json_type_string)) {
                                _cleanup_free_ char *b = NULL;
                                json_object *n;

                                if (!hub_text_too_long(json_object_get_string(e), max))
                                        continue;
                                b = hub_text_bound(json_object_get_string(e), max);
                                n = b ? json_new_string(b) : NULL;
                                if (!n || json_object_array_put_idx(v, i, n) < 0) {
                                        json_object_put(n);
                                        return -ENOMEM;
                                }
                        } else {
                                r = hub_json_bound_strings(e, max);
                                if (r < 0)
                                        return r;
                        }
                }
                return 0;
        default:
                return 0;
        }
}

/* the next part of text to log: whole characters, unless the text is
 * not UTF-8 there */
static size_t log_part(const char *text, size_t len)
{
        size_t n = utf8_prefix(text, len, LOG_PART_MAX);

        return n > 0 ? n : (len < LOG_PART_MAX ? len : LOG_PART_MAX);
}

void hub_text_log_long(const char *tag, long status, const char *text)
{
        size_t len = text ? strlen(text) : 0, parts = 0;

        /* what a condition carries whole is not repeated in the log */
        if (len <= HUB_TEXT_MAX / 2)
                return;
        for (size_t off = 0; off < len; parts++)
                off += log_part(text + off, len - off);
        log_warning("%s answered %ld with a %zu-byte text; statuses carry its beginning, the log all of it "
                    "in %zu parts",
                    strna(tag), status, len, parts);
        for (size_t i = 1, off = 0; off < len; i++) {
                size_t n = log_part(text + off, len - off);

                log_warning("%s answered %ld (part %zu/%zu): %.*s", strna(tag), status, i, parts, (int)n,
                            text + off);
                off += n;
        }
}
