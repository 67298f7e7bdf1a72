/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* cradle kube get|watch: see main/kube-cli.c. */
int kube_cli_main(int argc, char **argv);
