/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle-hub: the hub-side controllers of the Assisted Installer, driving
 * assisted-service over its REST API from Kubernetes resources
 * (hub/README.md). A thin program around libcradle-hub.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cradle-hub.h"
#include "log.h"
#include "macro.h"
#include "strutil.h"

static CradleHub *the_hub;

static void on_signal(int sig)
{
        (void)sig;
        cradle_hub_stop(the_hub);
}

static void help(FILE *f)
{
        fprintf(f, "Usage: cradle-hub [flags]\n\n"
                   "Runs the Assisted Installer's hub controllers (InfraEnv, NMStateConfig, Agent,\n"
                   "BareMetalHost, PreprovisioningImage, ...) against an assisted-service in REST mode\n"
                   "(ENABLE_KUBE_API=false). See hub/README.md.\n\n"
                   "Flags:\n");
        cradle_hub_print_options(f);
        fprintf(f, "  --version\n        Print the version and exit.\n");
}

int main(int argc, char **argv)
{
        _cleanup_free_ char *err = NULL;
        struct sigaction sa = { .sa_handler = on_signal };
        int r;

        log_setup("cradle-hub");
        log_set_default_targets(LOG_TARGET_JOURNAL, LOG_TARGET_STDERR);
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "--version") || streq(argv[i], "-version")) {
                        printf("cradle-hub %s\n", cradle_hub_version());
                        return 0;
                }
        r = cradle_hub_new(&the_hub);
        if (r < 0) {
                log_error_errno(r, "cannot make the hub: %m");
                return 1;
        }
        r = cradle_hub_parse_args(the_hub, argc, argv, &err);
        if (r == 0) {
                help(stdout);
                the_hub = cradle_hub_free(the_hub);
                return 0;
        }
        if (r < 0) {
                fprintf(stderr, "%s\n", err ? err : strerror(-r));
                help(stderr);
                the_hub = cradle_hub_free(the_hub);
                return 2;
        }
        sigemptyset(&sa.sa_mask);
        (void)sigaction(SIGTERM, &sa, NULL);
        (void)sigaction(SIGINT, &sa, NULL);
        (void)signal(SIGPIPE, SIG_IGN);
        r = cradle_hub_start(the_hub, &err);
        if (r < 0) {
                log_error_errno(r, "cannot start: %s", err ? err : strerror(-r));
                the_hub = cradle_hub_free(the_hub);
                return 1;
        }
        r = cradle_hub_wait(the_hub);
        the_hub = cradle_hub_free(the_hub);
        if (r < 0) {
                log_error_errno(r, "stopped: %m");
                return 1;
        }
        log_info("stopped");
        return 0;
}
