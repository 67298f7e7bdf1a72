/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The applet table and the multi-call dispatch: "cradle VERB ARGS" runs an
 * applet, and so does a copy or link of the binary named after the applet
 * ("agent", "next_step_runner", "installer", ...), so that images can
 * provide the program names assisted-service's generated command lines
 * expect. main.c calls multicall_main(); the man page generator
 * (packaging/man/) walks the same table.
 */
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/steps/applets.h"
#include "controller/controller.h"
#include "cp.h"
#include "ignition/ignition-verb.h"
#include "installer/installer.h"
#include "inventory/inventory.h"
#include "kube-cli.h"
#include "logs/logs-sender.h"
#include "macro.h"
#include "strutil.h"
#include "verbs.h"
#include "version.h"

static int verb_version(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        printf("cradle %s (git %s)\n", cradle_version(), cradle_git_revision());
        return 0;
}

static void list_verbs(FILE *f)
{
        fprintf(f, "Usage: cradle VERB [ARGS...]   (or call a link named after the verb)\n\n"
                   "cradle is the Assisted Installer's on-host half: discovery agent, installer and\n"
                   "hardware inventory in one static binary.\n\nVerbs:\n");
        for (const Verb *v = cradle_verbs; v->name; v++)
                if (!(v->flags & VERB_HIDDEN))
                        fprintf(f, "  %-18s %s\n", v->name, v->summary);
        fprintf(f, "\nRun 'cradle VERB --help' for the options of a verb.\n"
                   "Options: --help, --version.\n");
}

static int verb_help(int argc, char **argv)
{
        if (argc > 1) {
                const Verb *v = verb_find(argv[1]);
                char *help_argv[] = { argv[1], (char *)"--help", NULL };
                if (!v) {
                        fprintf(stderr, "cradle: unknown verb '%s'\n", argv[1]);
                        return 2;
                }
                return v->run(2, help_argv);
        }
        list_verbs(stdout);
        return 0;
}

/* The container image's entrypoint (packaging/containers/): one image
 * answers both contracts. The agent image's command lines name a program
 * ("cp /usr/bin/agent /hostbin", "next_step_runner --url ...", also by
 * path), the installer image's start with the installer's flags
 * ("--role master ..."), as its upstream entrypoint /usr/bin/installer. */
static int verb_entrypoint(int argc, char **argv)
{
        if (argc < 2) {
                list_verbs(stderr);
                return 2;
        }
        if (argv[1][0] == '-') {
                argv[0] = (char *)"installer";
                return installer_main(argc, argv);
        }
        return multicall_main(argc - 1, argv + 1);
}

const Verb cradle_verbs[] = {
        { "agent", agent_main, "register this host with assisted-service and run its steps", 0 },
        { "next_step_runner", next_step_runner_main, "poll and run the steps of a registered host", 0 },
        { "installer", installer_main,
          "install this host: write RHCOS and its Ignition config, report, reboot", 0 },
        { "controller", controller_main,
          "the assisted-installer-controller: a Job in the new cluster that takes it to installed", 0 },
        { "logs_sender", logs_sender_main, "collect this host's logs and upload them to assisted-service",
          0 },
        { "free_addresses", free_addresses_main, "list the free addresses of IPv4 networks (ARP/ICMP sweep)",
          0 },
        { "disk_speed_check", disk_speed_check_main,
          "measure a disk's fdatasync latency (writes its first 22 MiB, as the Go agent's fio job)", 0 },
        { "version", verb_version, "print the version and git revision", 0 },
        { "help", verb_help, "list the verbs, or show a verb's options", 0 },
        { "ignition", ignition_main, "validate, merge, build and apply Ignition v3 configs", 0 },
        { "inventory", inventory_main, "print the hardware inventory as JSON (assisted-service Inventory)",
          0 },
        { "kube", kube_cli_main, "get and watch Kubernetes objects (a small kubectl)", 0 },
        /* the container image's plumbing (packaging/containers/README.md) */
        { "cp", cp_main, "copy regular files (the agent image's \"cp /usr/bin/agent /hostbin\")",
          VERB_HIDDEN },
        /* the upstream controller image's program, /usr/bin/assisted-installer-controller */
        { "assisted-installer-controller", controller_main, "cradle controller by its upstream name",
          VERB_HIDDEN },
        { "entrypoint", verb_entrypoint,
          "the container image's entrypoint: a program name or installer flags", VERB_HIDDEN },
        {},
};

const Verb *verb_find(const char *name)
{
        for (const Verb *v = cradle_verbs; v->name; v++)
                if (streq(v->name, name))
                        return v;
        return NULL;
}

int multicall_main(int argc, char **argv)
{
        const char *self = argc > 0 && argv[0] ? argv[0] : "cradle";
        const Verb *v;

        /* Called by an applet's name (or path): behave like that program. */
        if (strrchr(self, '/'))
                self = strrchr(self, '/') + 1;
        if (!startswith(self, "cradle")) {
                v = verb_find(self);
                if (!v) {
                        fprintf(stderr,
                                "unknown binary name %s, expected 'cradle' or one of its verbs "
                                "(see 'cradle help')\n",
                                self);
                        return 1;
                }
                return v->run(argc, argv);
        }

        if (argc < 2) {
                list_verbs(stderr);
                return 2;
        }
        if (streq(argv[1], "--help") || streq(argv[1], "-h"))
                return verb_help(1, argv);
        if (streq(argv[1], "--version"))
                return verb_version(1, argv);

        v = verb_find(argv[1]);
        if (!v) {
                fprintf(stderr, "cradle: unknown verb '%s' (see 'cradle help')\n", argv[1]);
                return 2;
        }
        return v->run(argc - 1, argv + 1);
}
