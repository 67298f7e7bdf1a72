/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz-sources: */
/* The dry run's hosts file (DRY_CLUSTER_HOSTS_PATH), as the bootstrap
 * installer and the controller read it before playing its hosts as Nodes. */
#include <stdlib.h>
#include <string.h>

#include "assisted/cluster-hosts.h"
#include "cleanup.h"
#include "fuzz.h"
#include "strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *err = NULL;
        DryClusterHost *hosts = NULL;
        size_t n = 0;

        if (dry_cluster_hosts_parse((const char *)data, size, &hosts, &n, &err) >= 0) {
                /* what the views read must be terminated (or absent) */
                for (size_t i = 0; i < n; i++)
                        (void)(strlen(strempty(hosts[i].hostname)) + strlen(strempty(hosts[i].ip)) +
                               strlen(strempty(hosts[i].reboot_marker_path)));
                dry_cluster_hosts_free(hosts, n);
        } else if (!err)
                abort();
        return 0;
}
