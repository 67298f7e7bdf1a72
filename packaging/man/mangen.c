/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle-mangen OUT.json: the build-time half of the man pages (never
 * installed). It runs each verb's own --help path in-process, as
 * "cradle VERB --help" would, with goflags' usage hook set: so it receives
 * the very flag tables that print --help (names, types, defaults, usage
 * texts, environment variables), not a parse of their text. What a verb
 * prints itself (kube's getopt help, the list of ignition's sub-verbs) is
 * captured from stdout; names and summaries come from the verb tables. mangen.py renders the pages from
 * the JSON. A verb or a flag added anywhere shows up without an edit here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "fileio.h"
#include "goflags.h"
#include "ignition/ignition-verb.h"
#include "jsonutil.h"
#include "main/verbs.h"
#include "strutil.h"
#include "version.h"

#define HELP_MAX (1024 * 1024)

static json_object *json_str(const char *s)
{
        return s ? json_object_new_string(s) : json_object_new_null();
}

static void on_usage(void *userdata, const char *prog, const char *synopsis, const GoFlag flags[])
{
        json_object *tables = userdata, *t = json_object_new_object(), *list = json_object_new_array();

        json_object_object_add(t, "prog", json_str(prog));
        json_object_object_add(t, "synopsis", json_str(synopsis));
        for (const GoFlag *g = flags; g->name; g++) {
                json_object *f;

                if (g->hidden)
                        continue;
                f = json_object_new_object();
                json_object_object_add(f, "name", json_str(g->name));
                json_object_object_add(f, "type", json_str(goflags_type_word(g)));
                json_object_object_add(f, "default", goflags_has_default(g) ? json_str(g->def) : NULL);
                json_object_object_add(f, "quoted", json_object_new_boolean(g->type == GOFLAG_STRING));
                json_object_object_add(f, "usage", json_str(strempty(g->usage)));
                json_object_object_add(f, "env", json_str(g->env));
                json_object_object_add(f, "env2", json_str(g->env2));
                json_object_object_add(f, "repeatable", json_object_new_boolean(g->type == GOFLAG_STRV));
                json_object_array_add(list, f);
        }
        json_object_object_add(t, "flags", list);
        json_object_array_add(tables, t);
}

/* Runs run(argc, argv) with stdout in a memory file and the usage hook
 * collecting into a new "tables" array. */
static int capture(int (*run)(int, char **), int argc, char **argv, json_object *into)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -1, saved = -1;
        json_object *tables = json_object_new_array();
        int r, status;

        fd = memfd_create("cradle-help", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        fflush(stdout);
        saved = dup(STDOUT_FILENO);
        if (saved < 0 || dup2(fd, STDOUT_FILENO) < 0)
                return negative_errno();

        goflags_set_usage_hook(on_usage, tables);
        status = run(argc, argv);
        goflags_set_usage_hook(NULL, NULL);

        fflush(stdout);
        if (dup2(saved, STDOUT_FILENO) < 0)
                return negative_errno();
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        r = read_full_fd(fd, HELP_MAX, &text, NULL);
        if (r < 0)
                return r;
        if (status != 0) {
                fprintf(stderr, "cradle-mangen: '%s --help' exited %d\n", argv[0], status);
                return -EINVAL;
        }
        json_object_object_add(into, "tables", tables);
        json_object_object_add(into, "text", json_str(text));
        return 0;
}

int main(int argc, char **argv)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
        _cleanup_free_ char *out = NULL;
        json_object *verbs = json_object_new_array();
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: cradle-mangen OUT.json\n");
                return 2;
        }
        json_object_object_add(doc, "version", json_str(cradle_version()));
        json_object_object_add(doc, "verbs", verbs);
        for (const Verb *v = cradle_verbs; v->name; v++) {
                json_object *o = json_object_new_object();
                char *verb_argv[] = { (char *)v->name, (char *)"--help", NULL };

                json_object_array_add(verbs, o);
                json_object_object_add(o, "name", json_str(v->name));
                json_object_object_add(o, "summary", json_str(v->summary));
                json_object_object_add(o, "hidden", json_object_new_boolean(v->flags & VERB_HIDDEN));
                /* the verbs without options of their own, and the image's
                 * entrypoint, whose --help is the installer's */
                if (streq(v->name, "help") || streq(v->name, "version") || streq(v->name, "entrypoint"))
                        continue;
                r = capture(v->run, 2, verb_argv, o);
                if (r < 0)
                        return 1;
                if (streq(v->name, "ignition")) {
                        json_object *subs = json_object_new_array();

                        json_object_object_add(o, "subverbs", subs);
                        for (const IgnitionVerb *s = ignition_verbs; s->name; s++) {
                                json_object *so = json_object_new_object();
                                char *sub_argv[] = { (char *)"ignition", (char *)s->name, (char *)"--help",
                                                     NULL };

                                json_object_array_add(subs, so);
                                json_object_object_add(so, "name", json_str(s->name));
                                json_object_object_add(so, "summary", json_str(s->summary));
                                r = capture(v->run, 3, sub_argv, so);
                                if (r < 0)
                                        return 1;
                        }
                }
        }

        out = json_to_string(doc, JSON_FORMAT_PRETTY);
        if (!out)
                return 1;
        r = write_file_atomic(argv[1], out, strlen(out), 0644);
        if (r < 0) {
                errno = -r;
                fprintf(stderr, "cradle-mangen: cannot write '%s': %m\n", argv[1]);
                return 1;
        }
        return 0;
}
