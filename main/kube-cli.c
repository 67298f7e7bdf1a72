/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle kube: a small kubectl for people checking what lib/kube sees.
 *
 *   cradle kube get KIND [NAME] [-n NS | -A] [-o json|name|table] [-l SEL]
 *                       [--field-selector SEL] [--kubeconfig F] [--context C]
 *   cradle kube watch KIND [-n NS | -A] [-o json|name|table] [-l SEL] ...
 *
 * The table is what kubectl prints for kinds without server-side columns:
 * NAME and AGE (NAMESPACE first with -A), aligned as kubectl's tabwriter
 * aligns them. Errors read "Error from server (Reason): message".
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "jsonutil.h"
#include "kube-cli.h"
#include "kube/kube.h"
#include "strutil.h"
#include "timeutil.h"

typedef enum Output {
        OUTPUT_TABLE,
        OUTPUT_JSON,
        OUTPUT_NAME,
} Output;

typedef struct Args {
        const char *verb;
        const char *kind;
        const char *name;
        const char *ns;
        bool all_namespaces;
        Output output;
        const char *selector;
        const char *field_selector;
        const char *kubeconfig;
        const char *context;
        const char *resource_version;
        unsigned chunk_size;
        unsigned timeout;
} Args;

static void help(FILE *f, const char *prog)
{
        fprintf(f,
                "Usage: %1$s get KIND [NAME] [OPTIONS]\n"
                "       %1$s watch KIND [OPTIONS]\n"
                "\n"
                "Read Kubernetes objects as kubectl would show them.\n"
                "KIND: a kind, plural, singular or short name, optionally with its group\n"
                "(Agent, agents, cm, agents.agent-install.openshift.io).\n"
                "\n"
                "Options:\n"
                "  -n, --namespace NS         the namespace (default: the context's)\n"
                "  -A, --all-namespaces       every namespace\n"
                "  -o, --output FORMAT        table (default), json or name\n"
                "  -l, --selector SEL         label selector (app=x,tier!=db,env in (a,b))\n"
                "      --field-selector SEL   field selector (metadata.name=x)\n"
                "      --kubeconfig FILE      kubeconfig (default: $KUBECONFIG, ~/.kube/config,\n"
                "                             or in-cluster configuration)\n"
                "      --context NAME         kubeconfig context (default: current-context)\n"
                "      --chunk-size N         list page size (default 500)\n"
                "      --resource-version RV  watch: start after RV\n"
                "      --timeout SECONDS      watch: stop after that long (default: never)\n"
                "  -h, --help                 this text\n",
                prog);
}

static int parse_args(int argc, char **argv, Args *a)
{
        enum {
                ARG_FIELD_SELECTOR = 0x100,
                ARG_KUBECONFIG,
                ARG_CONTEXT,
                ARG_CHUNK_SIZE,
                ARG_RESOURCE_VERSION,
                ARG_TIMEOUT,
        };
        static const struct option options[] = {
                { "namespace", required_argument, NULL, 'n' },
                { "all-namespaces", no_argument, NULL, 'A' },
                { "output", required_argument, NULL, 'o' },
                { "selector", required_argument, NULL, 'l' },
                { "field-selector", required_argument, NULL, ARG_FIELD_SELECTOR },
                { "kubeconfig", required_argument, NULL, ARG_KUBECONFIG },
                { "context", required_argument, NULL, ARG_CONTEXT },
                { "chunk-size", required_argument, NULL, ARG_CHUNK_SIZE },
                { "resource-version", required_argument, NULL, ARG_RESOURCE_VERSION },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        optind = 1;
        opterr = 1;
        while ((c = getopt_long(argc, argv, "n:Ao:l:h", options, NULL)) >= 0) {
                switch (c) {
                case 'n':
                        a->ns = optarg;
                        break;
                case 'A':
                        a->all_namespaces = true;
                        break;
                case 'o':
                        if (streq(optarg, "json"))
                                a->output = OUTPUT_JSON;
                        else if (streq(optarg, "name"))
                                a->output = OUTPUT_NAME;
                        else if (streq(optarg, "table") || streq(optarg, "wide"))
                                a->output = OUTPUT_TABLE;
                        else {
                                fprintf(stderr,
                                        "error: unable to match a printer suitable for the output format "
                                        "\"%s\", the allowed formats are: json,name,table\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case 'l':
                        a->selector = optarg;
                        break;
                case ARG_FIELD_SELECTOR:
                        a->field_selector = optarg;
                        break;
                case ARG_KUBECONFIG:
                        a->kubeconfig = optarg;
                        break;
                case ARG_CONTEXT:
                        a->context = optarg;
                        break;
                case ARG_CHUNK_SIZE:
                        if (safe_atou(optarg, &a->chunk_size) < 0) {
                                fprintf(stderr, "error: --chunk-size: '%s' is not a number\n", optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_RESOURCE_VERSION:
                        a->resource_version = optarg;
                        break;
                case ARG_TIMEOUT:
                        if (safe_atou(optarg, &a->timeout) < 0) {
                                fprintf(stderr, "error: --timeout: '%s' is not a number of seconds\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case 'h':
                        help(stdout, argv[0]);
                        return 1;
                default:
                        return -EINVAL;
                }
        }
        /* GNU getopt moved the positional arguments to the end */
        if (optind >= argc) {
                help(stderr, argv[0]);
                return -EINVAL;
        }
        a->verb = argv[optind];
        if (optind + 1 < argc)
                a->kind = argv[optind + 1];
        if (optind + 2 < argc)
                a->name = argv[optind + 2];
        if (optind + 3 < argc) {
                fprintf(stderr, "error: unexpected argument '%s'\n", argv[optind + 3]);
                return -EINVAL;
        }
        return 0;
}

/* kubectl's duration.HumanDuration */
static void human_duration(int64_t secs, char *buf, size_t n)
{
        int64_t mins = secs / 60, hours = secs / 3600;

        if (secs < -1)
                snprintf(buf, n, "<invalid>");
        else if (secs < 0)
                snprintf(buf, n, "0s");
        else if (secs < 60 * 2)
                snprintf(buf, n, "%llds", (long long)secs);
        else if (mins < 10) {
                if (secs % 60 == 0)
                        snprintf(buf, n, "%lldm", (long long)mins);
                else
                        snprintf(buf, n, "%lldm%llds", (long long)mins, (long long)(secs % 60));
        } else if (mins < 60 * 3)
                snprintf(buf, n, "%lldm", (long long)mins);
        else if (hours < 8) {
                if (mins % 60 == 0)
                        snprintf(buf, n, "%lldh", (long long)hours);
                else
                        snprintf(buf, n, "%lldh%lldm", (long long)hours, (long long)(mins % 60));
        } else if (hours < 48)
                snprintf(buf, n, "%lldh", (long long)hours);
        else if (hours < 24 * 8) {
                if (hours % 24 == 0)
                        snprintf(buf, n, "%lldd", (long long)(hours / 24));
                else
                        snprintf(buf, n, "%lldd%lldh", (long long)(hours / 24), (long long)(hours % 24));
        } else if (hours < 24 * 365 * 2)
                snprintf(buf, n, "%lldd", (long long)(hours / 24));
        else if (hours < 24 * 365 * 8) {
                int64_t days = hours / 24 % 365;

                if (days == 0)
                        snprintf(buf, n, "%lldy", (long long)(hours / 24 / 365));
                else
                        snprintf(buf, n, "%lldy%lldd", (long long)(hours / 24 / 365), (long long)days);
        } else
                snprintf(buf, n, "%lldy", (long long)(hours / 24 / 365));
}

static void object_age(json_object *o, char *buf, size_t n)
{
        const char *ts = json_get_string(json_get(o, "metadata"), "creationTimestamp");
        struct tm tm = {};
        const char *end;

        if (!ts || !(end = strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm)) || *end) {
                snprintf(buf, n, "<unknown>");
                return;
        }
        human_duration((int64_t)(time(NULL) - timegm(&tm)), buf, n);
}

static char *object_ref(const KubeResource *r, json_object *o)
{
        _cleanup_free_ char *kind = strdup_lower(r->kind ? r->kind : r->resource);

        if (!kind)
                return NULL;
        if (isempty(r->group))
                return strdup_printf("%s/%s", kind, strna(kube_object_name(o)));
        return strdup_printf("%s.%s/%s", kind, r->group, strna(kube_object_name(o)));
}

/* kubectl's tabwriter: minwidth 6, padding 3 */
static void print_table(char ***rows, size_t nrows, size_t ncols)
{
        size_t widths[8] = {};

        for (size_t i = 0; i < nrows; i++)
                for (size_t j = 0; j < ncols && j < ELEMENTSOF(widths); j++)
                        widths[j] = MAX(widths[j], strlen(rows[i][j]));
        for (size_t i = 0; i < nrows; i++) {
                for (size_t j = 0; j < ncols; j++) {
                        if (j + 1 == ncols)
                                printf("%s\n", rows[i][j]);
                        else
                                printf("%-*s", (int)MAX(widths[j] + 3, (size_t)6), rows[i][j]);
                }
        }
}

static void print_error(const char *what, const KubeStatus *st, int r)
{
        if (st->code > 0)
                fprintf(stderr, "Error from server (%s): %s\n", strna(st->reason), strna(st->message));
        else
                fprintf(stderr, "error: %s: %s\n", what, st->message ? st->message : strerror(-r));
}

static int print_objects(const Args *a, const KubeResource *res, json_object *items)
{
        size_t n = json_object_array_length(items), nrows = 0, ncols = a->all_namespaces ? 3 : 2;
        char ***rows = NULL;
        int ret = 0;

        if (a->output == OUTPUT_NAME) {
                for (size_t i = 0; i < n; i++) {
                        _cleanup_free_ char *ref = object_ref(res, json_object_array_get_idx(items, i));

                        if (!ref)
                                return -ENOMEM;
                        printf("%s\n", ref);
                }
                return 0;
        }
        rows = calloc(n + 1, sizeof(*rows));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i <= n; i++) {
                json_object *o = i > 0 ? json_object_array_get_idx(items, i - 1) : NULL;
                char age[32];
                size_t k = 0;

                rows[i] = calloc(ncols, sizeof(char *));
                if (!rows[i]) {
                        ret = -ENOMEM;
                        goto finish;
                }
                nrows++;
                if (i == 0) {
                        if (a->all_namespaces)
                                rows[i][k++] = strdup("NAMESPACE");
                        rows[i][k++] = strdup("NAME");
                        rows[i][k++] = strdup("AGE");
                } else {
                        object_age(o, age, sizeof(age));
                        if (a->all_namespaces)
                                rows[i][k++] = strdup(strempty(kube_object_namespace(o)));
                        rows[i][k++] = strdup(strna(kube_object_name(o)));
                        rows[i][k++] = strdup(age);
                }
                for (size_t j = 0; j < ncols; j++)
                        if (!rows[i][j]) {
                                ret = -ENOMEM;
                                goto finish;
                        }
        }
        print_table(rows, nrows, ncols);
finish:
        for (size_t i = 0; i < nrows; i++) {
                for (size_t j = 0; j < ncols; j++)
                        free(rows[i][j]);
                free(rows[i]);
        }
        free(rows);
        return ret;
}

static void print_json(json_object *o)
{
        _cleanup_free_ char *s = json_to_string(o, JSON_FORMAT_PRETTY);

        printf("%s\n", strna(s));
}

static int do_get(KubeClient *c, const Args *a, const KubeResource *res, const char *ns)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_(json_object_putp) json_object *obj = NULL, *list = NULL;
        json_object *items;
        int r;

        if (a->name) {
                _cleanup_(json_object_putp) json_object *one = NULL;

                r = kube_get(c, res, ns, a->name, &obj, &st);
                if (r < 0) {
                        print_error("get", &st, r);
                        return 1;
                }
                if (a->output == OUTPUT_JSON) {
                        print_json(obj);
                        return 0;
                }
                one = json_new_array();
                if (!one || json_append(one, json_object_get(obj)) < 0)
                        return 1;
                return print_objects(a, res, one) < 0 ? 1 : 0;
        }

        r = kube_list_all(c, res, ns,
                          &(KubeListOptions){ .label_selector = a->selector,
                                              .field_selector = a->field_selector,
                                              .limit = a->chunk_size },
                          &list, &st);
        if (r < 0) {
                print_error("list", &st, r);
                return 1;
        }
        items = json_get(list, "items");
        if (a->output == OUTPUT_JSON) {
                /* as kubectl: a v1 List of the items */
                _cleanup_(json_object_putp) json_object *out = json_new_object(), *meta = json_new_object();

                if (!out || !meta || json_add_string(out, "apiVersion", "v1") < 0 ||
                    json_add(out, "items", json_object_get(items)) < 0 ||
                    json_add_string(out, "kind", "List") < 0 ||
                    json_add_string(meta, "resourceVersion", "") < 0 ||
                    json_add(out, "metadata", TAKE_PTR(meta)) < 0)
                        return 1;
                print_json(out);
                return 0;
        }
        if (json_object_array_length(items) == 0) {
                if (ns && res->namespaced)
                        fprintf(stderr, "No resources found in %s namespace.\n", ns);
                else
                        fprintf(stderr, "No resources found\n");
                return 0;
        }
        return print_objects(a, res, items) < 0 ? 1 : 0;
}

typedef struct WatchPrint {
        const Args *a;
        const KubeResource *res;
        bool header;
} WatchPrint;

static int on_watch_event(KubeWatchEventType type, json_object *o, void *userdata)
{
        WatchPrint *w = userdata;
        char age[32];

        if (type == KUBE_WATCH_BOOKMARK)
                return 0;
        if (w->a->output == OUTPUT_JSON) {
                _cleanup_(json_object_putp) json_object *ev = json_new_object();
                _cleanup_free_ char *s = NULL;

                if (!ev || json_add_string(ev, "type", kube_watch_event_type_to_string(type)) < 0 ||
                    json_add(ev, "object", json_object_get(o)) < 0)
                        return -ENOMEM;
                s = json_to_string(ev, 0);
                if (!s)
                        return -ENOMEM;
                printf("%s\n", s);
        } else if (w->a->output == OUTPUT_NAME) {
                _cleanup_free_ char *ref = object_ref(w->res, o);

                printf("%s %s\n", kube_watch_event_type_to_string(type), strna(ref));
        } else {
                if (!w->header) {
                        if (w->a->all_namespaces)
                                printf("%-11s%-23s%-43s%s\n", "EVENT", "NAMESPACE", "NAME", "AGE");
                        else
                                printf("%-11s%-43s%s\n", "EVENT", "NAME", "AGE");
                        w->header = true;
                }
                object_age(o, age, sizeof(age));
                if (w->a->all_namespaces)
                        printf("%-11s%-23s%-43s%s\n", kube_watch_event_type_to_string(type),
                               strempty(kube_object_namespace(o)), strna(kube_object_name(o)), age);
                else
                        printf("%-11s%-43s%s\n", kube_watch_event_type_to_string(type),
                               strna(kube_object_name(o)), age);
        }
        fflush(stdout);
        return 0;
}

static bool watch_retryable(int r)
{
        static const int retryable[] = { ECONNRESET, ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH, EPROTO,
                                         EBADMSG,    EIO,          EAGAIN,    EPIPE };

        for (size_t i = 0; i < ELEMENTSOF(retryable); i++)
                if (-r == retryable[i])
                        return true;
        return false;
}

static int do_watch(KubeClient *c, const Args *a, const KubeResource *res, const char *ns)
{
        _cleanup_free_ char *rv = a->resource_version ? strdup(a->resource_version) : NULL;
        WatchPrint w = { .a = a, .res = res };
        usec_t deadline = a->timeout > 0 ? now_usec(CLOCK_MONOTONIC) + a->timeout * USEC_PER_SEC : 0;
        int r;

        (void)stop_on_signals();
        for (;;) {
                _cleanup_kube_status_ KubeStatus st = {};
                unsigned left = 0;

                if (stop_requested())
                        return 0;
                if (deadline) {
                        usec_t now = now_usec(CLOCK_MONOTONIC);

                        if (now >= deadline)
                                return 0;
                        left = (unsigned)((deadline - now + USEC_PER_SEC - 1) / USEC_PER_SEC);
                }
                r = kube_watch(c, res, ns,
                               &(KubeWatchOptions){ .label_selector = a->selector,
                                                    .field_selector = a->field_selector,
                                                    .timeout_seconds = left,
                                                    .allow_bookmarks = true },
                               &rv, on_watch_event, &w, &st);
                if (r == -ECANCELED && stop_requested())
                        return 0;
                if (r == -ESTALE) {
                        /* too old: start again from the current state */
                        free(rv);
                        rv = NULL;
                        continue;
                }
                if (r < 0 && watch_retryable(r)) {
                        fprintf(stderr, "watch interrupted (%s), watching again\n", strna(st.message));
                        if (sleep_usec(USEC_PER_SEC) < 0)
                                return 0;
                        continue;
                }
                if (r < 0) {
                        print_error("watch", &st, r);
                        return 1;
                }
        }
}

int kube_cli_main(int argc, char **argv)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;
        KubeResource res;
        Args a = {};
        const char *ns;
        int r;

        r = parse_args(argc, argv, &a);
        if (r > 0)
                return 0;
        if (r < 0)
                return 2;
        if (!streq(a.verb, "get") && !streq(a.verb, "watch")) {
                fprintf(stderr, "error: unknown command \"%s\"; see '%s --help'\n", a.verb, argv[0]);
                return 2;
        }
        if (!a.kind) {
                fprintf(stderr, "error: you must specify the type of resource to %s\n", a.verb);
                return 2;
        }
        if (a.all_namespaces && a.ns) {
                fprintf(stderr, "error: --namespace and --all-namespaces cannot be used together\n");
                return 2;
        }

        r = kube_client_new_default(a.kubeconfig, a.context, &c, &err);
        if (r < 0) {
                fprintf(stderr, "error: %s\n", err ? err : strerror(-r));
                return 1;
        }
        r = kube_resolve(c, a.kind, &res, &st);
        if (r < 0) {
                if (r == -ENOENT)
                        fprintf(stderr, "error: the server doesn't have a resource type \"%s\"\n", a.kind);
                else
                        print_error("discovery", &st, r);
                return 1;
        }
        ns = a.all_namespaces ? NULL : (a.ns ?: kube_client_namespace(c));
        if (streq(a.verb, "get"))
                return do_get(c, &a, &res, ns);
        return do_watch(c, &a, &res, ns);
}
