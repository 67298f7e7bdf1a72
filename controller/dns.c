/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/dns.h"
#include "jsonutil.h"
#include "strutil.h"
#include "yamlutil.h"

static int bad_install_config(char **reterr, const char *why)
{
        if (reterr)
                *reterr = strdup_printf("the install-config %s", why);
        return -EBADMSG;
}

int install_config_service_network(const char *yaml, size_t len, char **ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_free_ char *err = NULL;
        json_object *networking, *list, *first;
        int r;

        *ret = NULL;
        r = yaml_to_json(yaml, len, &doc, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("the install-config does not parse: %s", strna(err));
                return -EBADMSG;
        }
        if (!doc)
                return 0;
        if (!json_object_is_type(doc, json_type_object))
                return bad_install_config(reterr, "is not a mapping");
        networking = json_get(doc, "networking");
        if (!networking)
                return 0;
        if (!json_object_is_type(networking, json_type_object))
                return bad_install_config(reterr, "has a networking that is not a mapping");
        list = json_get(networking, "serviceNetwork");
        if (!list)
                return 0;
        if (!json_object_is_type(list, json_type_array))
                return bad_install_config(reterr, "has a networking.serviceNetwork that is not a list");
        for (size_t i = 0; i < json_object_array_length(list); i++)
                if (!json_object_is_type(json_object_array_get_idx(list, i), json_type_string))
                        return bad_install_config(reterr, "has a networking.serviceNetwork entry that is "
                                                          "not a string");
        first = json_object_array_get_idx(list, 0);
        if (!first)
                return 0;
        *ret = strdup(json_object_get_string(first));
        return *ret ? 0 : -ENOMEM;
}

/* Go's dtoi for the prefix: decimal digits only, at most max */
static bool prefix_valid(const char *s, unsigned max)
{
        unsigned long v = 0;

        if (isempty(s) || strlen(s) > 3)
                return false;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return false;
                v = v * 10 + (unsigned long)(*p - '0');
        }
        return v <= max;
}

int dns_conflict_address(const char *cidr, char **ret)
{
        _cleanup_free_ char *addr = NULL;
        char text[INET6_ADDRSTRLEN];
        unsigned char bytes[sizeof(struct in6_addr)];
        const char *slash;

        slash = cidr ? strchr(cidr, '/') : NULL;
        if (!slash)
                return -EINVAL;
        addr = strndup(cidr, (size_t)(slash - cidr));
        if (!addr)
                return -ENOMEM;
        if (inet_pton(AF_INET, addr, bytes) == 1) {
                if (!prefix_valid(slash + 1, 32))
                        return -EINVAL;
                bytes[3] = 10;
                if (!inet_ntop(AF_INET, bytes, text, sizeof(text)))
                        return -EINVAL;
        } else if (inet_pton(AF_INET6, addr, bytes) == 1) {
                if (!prefix_valid(slash + 1, 128))
                        return -EINVAL;
                bytes[15] = 10;
                /* Go prints an IPv4-mapped address as IPv4 */
                if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)bytes)) {
                        if (!inet_ntop(AF_INET, bytes + 12, text, sizeof(text)))
                                return -EINVAL;
                } else if (!inet_ntop(AF_INET6, bytes, text, sizeof(text)))
                        return -EINVAL;
        } else
                return -EINVAL;
        *ret = strdup(text);
        return *ret ? 0 : -ENOMEM;
}

DnsAddressOwner dns_address_owner(json_object *services, const char *address, json_object **ret_service)
{
        json_object *items = json_get(services, "items");

        if (!json_object_is_type(items, json_type_array))
                return DNS_ADDRESS_FREE;
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                json_object *s = json_object_array_get_idx(items, i);
                json_object *meta = json_get(s, "metadata");

                if (!streq_ptr(json_get_string(json_get(s, "spec"), "clusterIP"), address))
                        continue;
                if (ret_service)
                        *ret_service = s;
                return streq_ptr(json_get_string(meta, "name"), DNS_SERVICE_NAME) &&
                                       streq_ptr(json_get_string(meta, "namespace"), DNS_SERVICE_NAMESPACE)
                               ? DNS_ADDRESS_DNS
                               : DNS_ADDRESS_FOREIGN;
        }
        return DNS_ADDRESS_FREE;
}

/* after a lookup, or a deletion that ended: the next lookup, if any left */
static DnsWait next_lookup(DnsHack *h, DnsWait wait)
{
        h->tries = 0;
        if (h->lookups >= DNS_LOOKUP_ATTEMPTS) {
                h->step = DNS_HACK_OVER;
                return DNS_WAIT_NONE;
        }
        h->step = DNS_HACK_LOOK;
        return wait;
}

DnsWait dns_hack_next(DnsHack *h, DnsOutcome outcome, bool *ret_gave_up)
{
        if (ret_gave_up)
                *ret_gave_up = false;
        switch (h->step) {
        case DNS_HACK_LOOK:
                h->lookups++;
                switch (outcome) {
                case DNS_OUTCOME_DNS:
                        h->step = DNS_HACK_OVER;
                        return DNS_WAIT_NONE;
                case DNS_OUTCOME_FOREIGN:
                        h->step = DNS_HACK_DELETE_SERVICE;
                        h->tries = 0;
                        return DNS_WAIT_NONE;
                default: /* failed or free: sleep, look again */
                        return next_lookup(h, DNS_WAIT_LOOKUP);
                }
        case DNS_HACK_DELETE_SERVICE:
        case DNS_HACK_DELETE_PODS:
                h->tries++;
                if (outcome == DNS_OUTCOME_DONE) {
                        if (h->step == DNS_HACK_DELETE_PODS)
                                return next_lookup(h, DNS_WAIT_NONE);
                        h->step = DNS_HACK_DELETE_PODS;
                        h->tries = 0;
                        return DNS_WAIT_NONE;
                }
                if (h->tries < DNS_DELETION_ATTEMPTS)
                        return DNS_WAIT_DELETION;
                if (ret_gave_up)
                        *ret_gave_up = true;
                /* the service kept: no pods deleted; the pods kept: all the
                 * same, the next lookup at once */
                return next_lookup(h, DNS_WAIT_NONE);
        default:
                return DNS_WAIT_NONE;
        }
}
