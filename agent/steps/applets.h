/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The Go agent's two stand-alone step programs as applets, with their
 * command lines (the logging flags, the dry-run flags, --help, then the
 * request JSON as a positional argument; notes §1.1): JSON on stdout, the
 * error on stderr, the exit status of the step (-1 shows as 255).
 */

int free_addresses_main(int argc, char **argv);
int disk_speed_check_main(int argc, char **argv);
