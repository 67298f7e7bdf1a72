/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "applets.h"
#include "cleanup.h"
#include "disk-speed.h"
#include "free-addresses.h"
#include "goflags.h"
#include "log.h"
#include "strutil.h"

typedef struct AppletArgs {
        bool journal_logging;
        bool text_logging;
        bool stdout_logging;
        bool dry_run;
        char *force_id;
        char *force_mac;
        char *force_hostname;
        char *forced_ipv4;
        char *fake_reboot_marker_path;
} AppletArgs;

#define APPLET_N_FLAGS 9

/* The Go subprocess flags (logging) and dry-run flags; flags[] must hold
 * APPLET_N_FLAGS + 1 entries (the last is the terminator). */
static void applet_flags(AppletArgs *a, GoFlag flags[static APPLET_N_FLAGS + 1])
{
        const GoFlag l[APPLET_N_FLAGS + 1] = {
                { "with-journal-logging", GOFLAG_BOOL, &a->journal_logging, "true", "Use journal logging" },
                { "with-text-logging", GOFLAG_BOOL, &a->text_logging, "false", "Use text logging" },
                { "with-stdout-logging", GOFLAG_BOOL, &a->stdout_logging, "false", "Use stdout logging" },
                { "dry-run", GOFLAG_BOOL, &a->dry_run, "false",
                  "Dry run avoids/fakes certain actions while communicating with the service", "DRY_ENABLE",
                  "DRYCONFIG_DRY_ENABLE" },
                { "force-id", GOFLAG_STRING, &a->force_id, NULL, "The fake host ID to give to the host",
                  "DRY_HOST_ID", "DRYCONFIG_DRY_HOST_ID" },
                { "force-mac", GOFLAG_STRING, &a->force_mac, NULL,
                  "The fake mac address to give to the first network interface", "DRY_FORCED_MAC_ADDRESS",
                  "DRYCONFIG_DRY_FORCED_MAC_ADDRESS" },
                { "force-hostname", GOFLAG_STRING, &a->force_hostname, NULL,
                  "The fake hostname to give to this host", "DRY_FORCED_HOSTNAME",
                  "DRYCONFIG_DRY_FORCED_HOSTNAME" },
                { "forced-ipv4", GOFLAG_STRING, &a->forced_ipv4, NULL,
                  "The fake ip address to give to the host's network interface", "DRY_FORCED_HOST_IPV4",
                  "DRYCONFIG_DRY_FORCED_HOST_IPV4" },
                { "fake-reboot-marker-path", GOFLAG_STRING, &a->fake_reboot_marker_path, NULL,
                  "A path whose existence indicates a fake reboot happened", "DRY_FAKE_REBOOT_MARKER_PATH",
                  "DRYCONFIG_DRY_FAKE_REBOOT_MARKER_PATH" },
                {},
        };

        memcpy(flags, l, sizeof(l));
}

/* As the Go programs: journald by default, /var/log/NAME.log with
 * --with-text-logging, stdout with --with-stdout-logging; with none of
 * them logs are discarded, so that stdout carries only the JSON and stderr
 * only the error. CRADLE_LOG_TARGET overrides (tests). */
static void setup_logging(const AppletArgs *a, const char *identifier, const char *text_log_name)
{
        unsigned targets = 0;

        log_setup(identifier);
        log_set_field("TAG", "agent");
        log_set_field("DRY_AGENT_ID", a->dry_run ? strempty(a->force_id) : "");
        if (getenv("CRADLE_LOG_TARGET"))
                return;
        if (a->journal_logging)
                targets |= LOG_TARGET_JOURNAL;
        if (a->stdout_logging)
                targets |= LOG_TARGET_STDOUT;
        log_set_default_targets(targets, 0);
        if (a->text_logging) {
                _cleanup_free_ char *path = strdup_printf("/var/log/%s.log", text_log_name);
                if (path)
                        (void)log_open_file(path);
        }
}

static int finish(char *out, char *err, int code)
{
        if (out)
                fputs(out, stdout);
        if (err)
                fputs(err, stderr);
        fflush(stdout);
        free(out);
        free(err);
        return code & 0xff; /* os.Exit(-1) is 255 */
}

int free_addresses_main(int argc, char **argv)
{
        AppletArgs a = {};
        GoFlag flags[APPLET_N_FLAGS + 1];
        char *out = NULL, *err = NULL;
        int optind, r, code;

        applet_flags(&a, flags);
        r = goflags_parse("free_addresses",
                          "Lists the free addresses of IPv4 networks: free_addresses '[\"CIDR\", ...]'",
                          flags, argc, argv, &optind);
        if (r <= 0) {
                goflags_free(flags);
                return r == 0 ? 0 : 2;
        }
        setup_logging(&a, "free_addresses", "free_addresses");
        if (argc - optind != 1) {
                log_warning("Expecting exactly single argument to free_addresses. Received %d", argc - 1);
                goflags_free(flags);
                return 255;
        }
        r = free_addresses_run(argv[optind], &out, &err, &code);
        goflags_free(flags);
        if (r < 0)
                return finish(NULL, strdup("out of memory"), -1);
        return finish(out, err, code);
}

int disk_speed_check_main(int argc, char **argv)
{
        AppletArgs a = {};
        GoFlag flags[APPLET_N_FLAGS + 1];
        char *out = NULL, *err = NULL;
        int optind, r, code;

        applet_flags(&a, flags);
        r = goflags_parse(
                "disk_speed_check",
                "Measures the fdatasync latency of a disk as the installation disk check does:\n"
                "disk_speed_check '{\"path\":\"/dev/...\"}'. WRITES to the first 23069000 bytes of the "
                "device.",
                flags, argc, argv, &optind);
        if (r <= 0) {
                goflags_free(flags);
                return r == 0 ? 0 : 2;
        }
        setup_logging(&a, "disk_speed_check", "disk-speed-check");
        /* flag.Arg(flag.NArg() - 1): the last argument, "" when none */
        r = disk_speed_check_run(optind < argc ? argv[argc - 1] : "", a.dry_run, 0, &out, &err, &code);
        goflags_free(flags);
        if (r < 0)
                return finish(NULL, strdup("out of memory"), -1);
        if (code == 0 && out)
                log_info("FIO result on disk: %s", out);
        return finish(out, err, code);
}
