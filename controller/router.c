/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "controller/router.h"
#include "http.h"
#include "strutil.h"

bool router_probe_needed(bool has_error, int control_plane_count)
{
        return has_error && control_plane_count == 1;
}

char *router_canary_url(const char *cluster_name, const char *base_dns_domain)
{
        return strdup_printf("https://canary-openshift-ingress-canary.apps.%s.%s/health",
                             strempty(cluster_name), strempty(base_dns_domain));
}

char *router_health_url(const char *outbound_address)
{
        const char *a = isempty(outbound_address) ? "localhost" : outbound_address;

        /* upstream's address is IPv4 (its UDP dial to 8.8.8.8); an IPv6 one
         * needs the brackets a URL wants */
        return strdup_printf(strchr(a, ':') ? "http://[%s]/_______internal_router_healthz"
                                            : "http://%s/_______internal_router_healthz",
                             a);
}

char *router_status_line(long status)
{
        return strdup_printf("%ld %s", status, http_status_text(status));
}
