/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `inventory`: prints the Inventory JSON on stdout, with the Go agent's
 * command line (logging and dry-run flags with their DRY_* environment
 * defaults, --gpu-config-file) plus cradle's --pretty. Like the Go program
 * it exits 0 whatever is missing; only when no document can be produced
 * at all (out of memory, stdout unwritable) does it fail.
 *
 * stdout carries nothing but the document: --with-stdout-logging sends
 * the log to stderr here (the Go program would interleave it with the
 * JSON, which no consumer can parse).
 */
#include <stdio.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "goflags.h"
#include "inventory.h"
#include "jsonutil.h"
#include "log.h"
#include "strutil.h"

int inventory_main(int argc, char **argv)
{
        bool journal = true, text = false, stdout_log = false, dry_run = false, pretty = false;
        char *force_id = NULL, *force_mac = NULL, *force_hostname = NULL, *forced_ipv4 = NULL,
             *reboot_marker = NULL, *gpu_config = NULL;
        const GoFlag flags[] = {
                { "with-journal-logging", GOFLAG_BOOL, &journal, "true", "Use journal logging" },
                { "with-text-logging", GOFLAG_BOOL, &text, "false", "Use text logging" },
                { "with-stdout-logging", GOFLAG_BOOL, &stdout_log, "false",
                  "Use stdout logging (written to stderr: stdout holds the JSON)" },
                { "dry-run", GOFLAG_BOOL, &dry_run, "false",
                  "Dry run avoids/fakes certain actions while communicating with the service", "DRY_ENABLE",
                  "DRYCONFIG_DRY_ENABLE" },
                { "force-id", GOFLAG_STRING, &force_id, NULL, "The fake host ID to give to the host",
                  "DRY_HOST_ID", "DRYCONFIG_DRY_HOST_ID" },
                { "force-mac", GOFLAG_STRING, &force_mac, NULL,
                  "The fake mac address to give to the first network interface", "DRY_FORCED_MAC_ADDRESS",
                  "DRYCONFIG_DRY_FORCED_MAC_ADDRESS" },
                { "force-hostname", GOFLAG_STRING, &force_hostname, NULL,
                  "The fake hostname to give to this host", "DRY_FORCED_HOSTNAME",
                  "DRYCONFIG_DRY_FORCED_HOSTNAME" },
                { "forced-ipv4", GOFLAG_STRING, &forced_ipv4, NULL,
                  "The fake ip address to give to the host's network interface", "DRY_FORCED_HOST_IPV4",
                  "DRYCONFIG_DRY_FORCED_HOST_IPV4" },
                { "fake-reboot-marker-path", GOFLAG_STRING, &reboot_marker, NULL,
                  "A path whose existence indicates a fake reboot happened", "DRY_FAKE_REBOOT_MARKER_PATH",
                  "DRYCONFIG_DRY_FAKE_REBOOT_MARKER_PATH" },
                { "gpu-config-file", GOFLAG_STRING, &gpu_config, NULL,
                  "Configuration file for GPU discovery" },
                { "pretty", GOFLAG_BOOL, &pretty, "false", "Indent the JSON (cradle)" },
                {},
        };
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_free_ char *out = NULL;
        InventoryOptions o;
        int optind = 0, r, ret = 0;

        log_setup("inventory");
        r = goflags_parse(argv[0], NULL, flags, argc, argv, &optind);
        if (r <= 0) {
                goflags_free(flags);
                return r == 0 ? 0 : 2;
        }
        /* stdout carries the inventory: "stdout logging" goes to stderr */
        log_set_default_targets((journal ? LOG_TARGET_JOURNAL : 0) | (stdout_log ? LOG_TARGET_STDERR : 0),
                                0);
        if (text) {
                r = log_open_file("/var/log/inventory.log");
                if (r < 0)
                        log_warning_errno(r, "cannot open '/var/log/inventory.log', ignoring: %m");
        }
        if (optind < argc)
                log_warning("ignoring extra arguments starting with '%s'", argv[optind]);

        o = (InventoryOptions){
                .dry_run = dry_run,
                .forced_hostname = force_hostname,
                .forced_mac = force_mac,
                .forced_ipv4 = forced_ipv4,
                .gpu_config_file = isempty(gpu_config) ? NULL : gpu_config,
                .root = getenv("CRADLE_INVENTORY_ROOT"),
        };
        r = inventory_collect(&o, &doc);
        if (r < 0) {
                ret = 1;
                log_error_errno(r, "cannot produce the inventory: %m");
                goto finish;
        }
        out = json_to_string(doc, pretty ? JSON_FORMAT_PRETTY : 0);
        if (!out) {
                ret = 1;
                log_oom();
                goto finish;
        }
        /* Go's fmt.Print of the marshalled document: no trailing newline */
        if (fputs(out, stdout) < 0 || (pretty && fputc('\n', stdout) < 0) || fflush(stdout) != 0) {
                ret = 1;
                log_error_errno(negative_errno(), "cannot write the inventory: %m");
        }
finish:
        goflags_free(flags);
        log_close_file();
        return ret;
}
