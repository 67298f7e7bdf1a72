/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Single node's master.ign (notes §4.9), the decision part: bootkube's
 * /opt/openshift/master.ign merged with this host's own Ignition config as
 * the Go installer does (both as spec 3.2, the host's merge/replace
 * pointers dropped, Ignition's merge rules, the result validated), with
 * cradle's Ignition module. installer/single-node.c does the I/O around it.
 */

#include <stddef.h>

/* The merged config, spec 3.2.0 JSON. An invalid result fails with
 * "merged ignition config is invalid: $.storage.files[3].path: ..."
 * (every problem with its path); a config newer than 3.2 with
 * -EOPNOTSUPP. */
int single_node_merge(const char *master, size_t master_len, const char *host, size_t host_len, char **ret,
                      size_t *ret_len, char **reterr);
