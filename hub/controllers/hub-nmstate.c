/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <yaml.h>

#include "buf.h"
#include "cleanup.h"
#include "hub-nmstate.h"
#include "hub-plan.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "strutil.h"

/* ---- YAML ---- */

typedef struct Emitter {
        yaml_emitter_t e;
        Buf out;
        int error;
} Emitter;

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
        Emitter *em = data;
        int r = buf_append(&em->out, buffer, size);

        if (r < 0) {
                em->error = r;
                return 0;
        }
        return 1;
}

static int emit(Emitter *em, yaml_event_t *ev)
{
        if (!yaml_emitter_emit(&em->e, ev))
                return em->error < 0 ? em->error : -EIO;
        return 0;
}

static bool all_digits(const char *s, const char *set)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!strchr(set, *s))
                        return false;
        return true;
}

/* Would this plain scalar read back as something other than a string
 * (YAML 1.1 as go-yaml resolves it, or 1.2 as nmstate's parser does)? */
static bool needs_quotes(const char *s)
{
        static const char *const words[] = {
                "~",     "null",  "Null",  "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
                "yes",   "Yes",   "YES",   "no",   "No",   "NO",   "on",   "On",    "ON",    "off",
                "Off",   "OFF",   "y",     "Y",    "n",    "N",    ".inf", ".Inf",  ".INF",  "-.inf",
                "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN", "<<",
        };
        const char *p = s;
        char *end;

        if (isempty(s))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(s, words[i]))
                        return true;
        if (*p == '+' || *p == '-')
                p++;
        /* integers (with _ as YAML 1.1 allows), 0x, 0o, 0b, and sexagesimal 1:20:30 */
        if (all_digits(p, "0123456789_") ||
            (startswith(p, "0x") && all_digits(p + 2, "0123456789abcdefABCDEF_")) ||
            (startswith(p, "0o") && all_digits(p + 2, "01234567_")) ||
            (startswith(p, "0b") && all_digits(p + 2, "01_")))
                return true;
        if (*p >= '1' && *p <= '9' && all_digits(p, "0123456789_:") && strchr(p, ':'))
                return true;
        /* floats */
        errno = 0;
        (void)strtod(s, &end);
        if (end != s && *end == 0)
                return true;
        return false;
}

static int emit_value(Emitter *em, json_object *v);

static int compare_keys(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int emit_scalar(Emitter *em, const char *text, bool quoted)
{
        yaml_event_t ev;

        if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), !quoted,
                                          quoted,
                                          quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE))
                return -ENOMEM;
        return emit(em, &ev);
}

static int emit_value(Emitter *em, json_object *v)
{
        yaml_event_t ev;
        char num[64];
        int r;

        switch (json_object_get_type(v)) {
        case json_type_null:
                return emit_scalar(em, "null", false);
        case json_type_boolean:
                return emit_scalar(em, json_object_get_boolean(v) ? "true" : "false", false);
        case json_type_int:
                snprintf(num, sizeof(num), "%" PRId64, json_object_get_int64(v));
                return emit_scalar(em, num, false);
        case json_type_double: {
                double d = json_object_get_double(v);

                /* what Go's yaml writes for a JSON number that is whole */
                if (d == floor(d) && fabs(d) < 1e15)
                        snprintf(num, sizeof(num), "%.0f", d);
                else
                        snprintf(num, sizeof(num), "%.17g", d);
                return emit_scalar(em, num, false);
        }
        case json_type_string: {
                const char *s = json_object_get_string(v);

                return emit_scalar(em, s, needs_quotes(s));
        }
        case json_type_array:
                if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE))
                        return -ENOMEM;
                r = emit(em, &ev);
                for (size_t i = 0; r >= 0 && i < json_object_array_length(v); i++)
                        r = emit_value(em, json_object_array_get_idx(v, i));
                if (r < 0)
                        return r;
                yaml_sequence_end_event_initialize(&ev);
                return emit(em, &ev);
        case json_type_object: {
                size_t n = (size_t)json_object_object_length(v), i = 0;
                _cleanup_free_ const char **keys = calloc(n + 1, sizeof(char *));

                if (!keys)
                        return -ENOMEM;
                json_object_object_foreach (v, k, val) {
                        (void)val;
                        keys[i++] = k;
                }
                qsort(keys, n, sizeof(char *), compare_keys);
                if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE))
                        return -ENOMEM;
                r = emit(em, &ev);
                for (i = 0; r >= 0 && i < n; i++) {
                        r = emit_scalar(em, keys[i], needs_quotes(keys[i]));
                        if (r >= 0)
                                r = emit_value(em, json_object_object_get(v, keys[i]));
                }
                if (r < 0)
                        return r;
                yaml_mapping_end_event_initialize(&ev);
                return emit(em, &ev);
        }
        }
        return -EINVAL;
}

int hub_nmstate_yaml(json_object *value, char **ret)
{
        Emitter em = { .out = BUF_INIT(BUF_MAX_JSON_DOC) };
        yaml_event_t ev;
        int r = -ENOMEM;

        if (!yaml_emitter_initialize(&em.e))
                return -ENOMEM;
        yaml_emitter_set_output(&em.e, write_handler, &em);
        yaml_emitter_set_unicode(&em.e, 1);
        yaml_emitter_set_width(&em.e, -1);
        yaml_emitter_set_indent(&em.e, 2);
        if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING))
                goto out;
        r = emit(&em, &ev);
        if (r < 0)
                goto out;
        if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1)) {
                r = -ENOMEM;
                goto out;
        }
        r = emit(&em, &ev);
        if (r >= 0)
                r = emit_value(&em, value);
        if (r < 0)
                goto out;
        yaml_document_end_event_initialize(&ev, 1);
        r = emit(&em, &ev);
        if (r < 0)
                goto out;
        yaml_stream_end_event_initialize(&ev);
        r = emit(&em, &ev);
        if (r < 0)
                goto out;
        r = buf_take(&em.out, ret, NULL);
out:
        yaml_emitter_delete(&em.e);
        buf_release(&em.out);
        return r;
}

/* ---- the service's order (FormatStaticNetworkConfigForDB) ---- */

static int compare_items(json_object *a, json_object *b)
{
        int c = strcmp(strempty(json_get_string(a, "logical_nic_name")),
                       strempty(json_get_string(b, "logical_nic_name")));

        if (c != 0)
                return c;
        return strcmp(strempty(json_get_string(a, "mac_address")),
                      strempty(json_get_string(b, "mac_address")));
}

static int compare_items_qsort(const void *a, const void *b)
{
        return compare_items(*(json_object *const *)a, *(json_object *const *)b);
}

static int compare_maps(json_object *a, json_object *b)
{
        size_t na = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
        size_t nb = json_object_is_type(b, json_type_array) ? json_object_array_length(b) : 0;

        if (na != nb)
                return na < nb ? -1 : 1;
        for (size_t i = 0; i < na; i++) {
                int c = compare_items(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i));

                if (c != 0)
                        return c;
        }
        return 0;
}

static int compare_configs(const void *pa, const void *pb)
{
        json_object *a = *(json_object *const *)pa, *b = *(json_object *const *)pb;
        int c = strcmp(strempty(json_get_string(a, "network_yaml")),
                       strempty(json_get_string(b, "network_yaml")));

        if (c != 0)
                return c;
        return compare_maps(json_get(a, "mac_interface_map"), json_get(b, "mac_interface_map"));
}

int hub_nmstate_sort(json_object *list)
{
        if (!json_object_is_type(list, json_type_array))
                return -EINVAL;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *m = json_get(json_object_array_get_idx(list, i), "mac_interface_map");

                if (json_object_is_type(m, json_type_array))
                        json_object_array_sort(m, compare_items_qsort);
        }
        json_object_array_sort(list, compare_configs);
        return 0;
}

int hub_nmstate_static_config(json_object *const *configs, size_t n, json_object **ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *list = json_new_array();

        if (!list)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *c = configs[i], *ifs = json_get_path(c, "spec.interfaces"),
                            *config = json_get_path(c, "spec.config");
                _cleanup_(json_object_putp) json_object *host = json_new_object(), *map = json_new_array();
                _cleanup_free_ char *yaml = NULL;
                int r;

                if (!host || !map)
                        return -ENOMEM;
                if (ifs && !json_object_is_type(ifs, json_type_array)) {
                        if (reterr)
                                *reterr = strdup_printf("NMStateConfig %s/%s: spec.interfaces is not a list",
                                                        strna(kube_object_namespace(c)),
                                                        strna(kube_object_name(c)));
                        return -EINVAL;
                }
                for (size_t j = 0; ifs && j < json_object_array_length(ifs); j++) {
                        json_object *it = json_object_array_get_idx(ifs, j), *item;
                        const char *name = json_get_string(it, "name"),
                                   *mac = json_get_string(it, "macAddress");

                        if (!name || !mac) {
                                if (reterr)
                                        *reterr = strdup_printf(
                                                "NMStateConfig %s/%s: spec.interfaces[%zu].%s is missing or "
                                                "not a string",
                                                strna(kube_object_namespace(c)), strna(kube_object_name(c)),
                                                j, !name ? "name" : "macAddress");
                                return -EINVAL;
                        }
                        item = json_new_object();
                        if (!item || json_append(map, item) < 0)
                                return -ENOMEM;
                        if (json_add_string(item, "logical_nic_name", name) < 0 ||
                            json_add_string(item, "mac_address", mac) < 0)
                                return -ENOMEM;
                }
                /* no spec.config: the service says what is wrong with an
                 * empty YAML, as for the real controller */
                if (config) {
                        r = hub_nmstate_yaml(config, &yaml);
                        if (r < 0)
                                return r;
                }
                if (json_add(host, "mac_interface_map", TAKE_PTR(map)) < 0 ||
                    json_add_string(host, "network_yaml", strempty(yaml)) < 0 ||
                    json_append(list, TAKE_PTR(host)) < 0)
                        return -ENOMEM;
        }
        (void)hub_nmstate_sort(list);
        *ret = TAKE_PTR(list);
        return 0;
}

int hub_nmstate_from_service(const char *s, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        int r;

        if (isempty(s)) {
                list = json_new_array();
                if (!list)
                        return -ENOMEM;
        } else {
                r = json_parse(s, strlen(s), BUF_MAX_HTTP_BODY, &list, NULL);
                if (r < 0)
                        return -EBADMSG;
                if (json_object_is_type(list, json_type_null)) {
                        json_object_put(list);
                        list = json_new_array();
                        if (!list)
                                return -ENOMEM;
                }
                if (!json_object_is_type(list, json_type_array))
                        return -EBADMSG;
                (void)hub_nmstate_sort(list);
        }
        *ret = TAKE_PTR(list);
        return 0;
}
