/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "goflags.h"
#include "strutil.h"

static const GoFlag *flag_find(const GoFlag flags[], const char *name, size_t len)
{
        for (const GoFlag *f = flags; f->name; f++)
                if (strlen(f->name) == len && strneq(f->name, name, len))
                        return f;
        return NULL;
}

static int flag_set(const GoFlag *f, const char *text)
{
        switch (f->type) {
        case GOFLAG_STRING:
                return free_and_strdup((char **)f->value, text);
        case GOFLAG_BOOL:
                return parse_bool_go(text, (bool *)f->value);
        case GOFLAG_INT: {
                /* Go's strconv.ParseInt(s, 0, ...) also takes 0x.. */
                int64_t v;
                char *end;
                if (safe_atoi64(text, &v) < 0) {
                        if (isempty(text))
                                return -EINVAL;
                        errno = 0;
                        v = strtoll(text, &end, 0);
                        if (errno != 0 || *end != 0)
                                return -EINVAL;
                }
                if (v < INT32_MIN || v > INT32_MAX)
                        return -ERANGE;
                *(int *)f->value = (int)v;
                return 0;
        }
        case GOFLAG_UINT64:
                return safe_atou64(text, (uint64_t *)f->value);
        case GOFLAG_DOUBLE:
                return safe_atod(text, (double *)f->value);
        case GOFLAG_STRV:
                return strv_extend((char ***)f->value, text);
        }
        return -EINVAL;
}

static void flag_reset(const GoFlag *f)
{
        switch (f->type) {
        case GOFLAG_STRING:
                free(*(char **)f->value);
                *(char **)f->value = NULL;
                break;
        case GOFLAG_BOOL:
                *(bool *)f->value = false;
                break;
        case GOFLAG_INT:
                *(int *)f->value = 0;
                break;
        case GOFLAG_UINT64:
                *(uint64_t *)f->value = 0;
                break;
        case GOFLAG_DOUBLE:
                *(double *)f->value = 0;
                break;
        case GOFLAG_STRV:
                strv_free(*(char ***)f->value);
                *(char ***)f->value = NULL;
                break;
        }
}

static int flags_set_defaults(const char *prog, const GoFlag flags[])
{
        int r;

        for (const GoFlag *f = flags; f->name; f++) {
                const char *env = NULL;

                flag_reset(f);
                if (f->env && getenv(f->env))
                        env = getenv(f->env);
                else if (f->env2 && getenv(f->env2))
                        env = getenv(f->env2);

                if (f->def && f->type != GOFLAG_STRV) {
                        r = flag_set(f, f->def);
                        if (r < 0)
                                return r;
                } else if (f->type == GOFLAG_STRING) {
                        r = flag_set(f, "");
                        if (r < 0)
                                return r;
                }
                if (env && !(f->type != GOFLAG_STRING && isempty(env))) {
                        r = flag_set(f, env);
                        if (r < 0) {
                                fprintf(stderr, "%s: invalid value \"%s\" in $%s for flag -%s\n", prog, env,
                                        getenv(f->env ? f->env : "") ? f->env : f->env2, f->name);
                                return r;
                        }
                }
        }
        return 0;
}

const char *goflags_type_word(const GoFlag *f)
{
        switch (f->type) {
        case GOFLAG_STRING:
        case GOFLAG_STRV:
                return "string";
        case GOFLAG_INT:
                return "int";
        case GOFLAG_UINT64:
                return "uint";
        case GOFLAG_DOUBLE:
                return "float";
        case GOFLAG_BOOL:
                return NULL;
        }
        return NULL;
}

bool goflags_has_default(const GoFlag *g)
{
        /* Go's isZeroValue(): zero defaults are not shown */
        return g->def && !isempty(g->def) && !(g->type == GOFLAG_BOOL && streq(g->def, "false")) &&
               !(g->type != GOFLAG_STRING && streq(g->def, "0"));
}

static int cmp_flag_ptr(const void *a, const void *b)
{
        return strcmp((*(const GoFlag *const *)a)->name, (*(const GoFlag *const *)b)->name);
}

static GoFlagsUsageHook usage_hook;
static void *usage_hook_userdata;

void goflags_set_usage_hook(GoFlagsUsageHook hook, void *userdata)
{
        usage_hook = hook;
        usage_hook_userdata = userdata;
}

void goflags_usage(FILE *f, const char *prog, const char *synopsis, const GoFlag flags[])
{
        const GoFlag *sorted[256];
        size_t n = 0;

        if (usage_hook) {
                usage_hook(usage_hook_userdata, prog, synopsis, flags);
                return;
        }

        fprintf(f, "Usage of %s:\n", prog);
        if (synopsis)
                fprintf(f, "%s\n", synopsis);
        for (const GoFlag *g = flags; g->name && n < ELEMENTSOF(sorted); g++)
                if (!g->hidden)
                        sorted[n++] = g;
        qsort(sorted, n, sizeof(sorted[0]), cmp_flag_ptr);
        for (size_t i = 0; i < n; i++) {
                const GoFlag *g = sorted[i];
                const char *tw = goflags_type_word(g);

                fprintf(f, "  -%s%s%s\n    \t%s", g->name, tw ? " " : "", tw ? tw : "", strempty(g->usage));
                if (goflags_has_default(g))
                        fprintf(f, g->type == GOFLAG_STRING ? " (default \"%s\")" : " (default %s)", g->def);
                if (g->env)
                        fprintf(f, " [$%s%s%s]", g->env, g->env2 ? ", $" : "", g->env2 ? g->env2 : "");
                if (g->type == GOFLAG_STRV)
                        fprintf(f, " (repeatable)");
                fputc('\n', f);
        }
}

int goflags_parse(const char *prog, const char *synopsis, const GoFlag flags[], int argc, char **argv,
                  int *ret_optind)
{
        int i, r;

        r = flags_set_defaults(prog, flags);
        if (r < 0)
                return -EINVAL;

        for (i = 1; i < argc; i++) {
                const char *a = argv[i], *name, *eq, *value = NULL;
                const GoFlag *f;
                size_t len;

                if (a[0] != '-' || a[1] == 0)
                        break;
                if (streq(a, "--")) {
                        i++;
                        break;
                }
                name = a + 1 + (a[1] == '-');
                if (name[0] == 0 || name[0] == '-' || name[0] == '=') {
                        fprintf(stderr, "bad flag syntax: %s\n", a);
                        goflags_usage(stderr, prog, synopsis, flags);
                        return -EINVAL;
                }
                eq = strchr(name, '=');
                len = eq ? (size_t)(eq - name) : strlen(name);
                if (eq)
                        value = eq + 1;

                f = flag_find(flags, name, len);
                if (!f) {
                        if ((len == 1 && name[0] == 'h') || (len == 4 && strneq(name, "help", 4))) {
                                goflags_usage(stdout, prog, synopsis, flags);
                                return 0;
                        }
                        fprintf(stderr, "flag provided but not defined: -%.*s\n", (int)len, name);
                        goflags_usage(stderr, prog, synopsis, flags);
                        return -EINVAL;
                }

                if (f->type == GOFLAG_BOOL) {
                        r = flag_set(f, value ? value : "true");
                        if (r < 0) {
                                fprintf(stderr, "invalid boolean value \"%s\" for -%s: parse error\n", value,
                                        f->name);
                                goflags_usage(stderr, prog, synopsis, flags);
                                return -EINVAL;
                        }
                        continue;
                }
                if (!value) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "flag needs an argument: -%s\n", f->name);
                                goflags_usage(stderr, prog, synopsis, flags);
                                return -EINVAL;
                        }
                        value = argv[++i];
                }
                r = flag_set(f, value);
                if (r < 0) {
                        fprintf(stderr, "invalid value \"%s\" for flag -%s: %s\n", value, f->name,
                                r == -ERANGE ? "value out of range" : "parse error");
                        goflags_usage(stderr, prog, synopsis, flags);
                        return -EINVAL;
                }
        }
        if (ret_optind)
                *ret_optind = i;
        return 1;
}

void goflags_free(const GoFlag flags[])
{
        for (const GoFlag *f = flags; f->name; f++)
                if (f->type == GOFLAG_STRING || f->type == GOFLAG_STRV)
                        flag_reset(f);
}
