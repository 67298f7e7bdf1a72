/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DNS service address hack (controller/dns.h) as tables: the
 * install-config's service network, the address dns-default wants (IPv4
 * and IPv6, as Go's net.ParseCIDR and IP.String), which Service holds it,
 * and upstream's attempts: 45 lookups 20 s apart, 5 tries 10 s apart for
 * each deletion (notes/controller.md §5.6).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "controller/dns.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"

static json_object *parse_json(const char *text)
{
        json_object *o = NULL;

        ASSERT_OK(json_parse(text, strlen(text), 1 << 20, &o, NULL));
        return o;
}

static void network_is(const char *yaml, const char *expected)
{
        _cleanup_free_ char *net = NULL, *err = NULL;

        ASSERT_OK(install_config_service_network(yaml, strlen(yaml), &net, &err));
        if (expected)
                ASSERT_STREQ(net, expected);
        else
                ASSERT_NULL(net);
}

static void network_refused(const char *yaml)
{
        _cleanup_free_ char *net = NULL, *err = NULL;

        ASSERT_ERROR(install_config_service_network(yaml, strlen(yaml), &net, &err), EBADMSG);
        ASSERT_NULL(net);
        ASSERT_NOT_NULL(err);
        /* never the text itself: it may hold a pull secret */
        ASSERT_NOT_CONTAINS(err, "s3cr3t");
}

TEST(service_network)
{
        /* what the installer stores in cluster-config-v1 */
        network_is("apiVersion: v1\nbaseDomain: example.com\nmetadata:\n  name: test\n"
                   "networking:\n  clusterNetwork:\n  - cidr: 10.128.0.0/14\n    hostPrefix: 23\n"
                   "  machineNetwork:\n  - cidr: 192.168.122.0/24\n  networkType: OVNKubernetes\n"
                   "  serviceNetwork:\n  - 172.30.0.0/16\n  - fd02::/112\n"
                   "platform:\n  none: {}\npullSecret: \"\"\n",
                   "172.30.0.0/16");
        network_is("networking:\n  serviceNetwork: [\"fd02::/112\"]\n", "fd02::/112");
        /* none: upstream's "Failed to get service networks" */
        network_is("", NULL);
        network_is("apiVersion: v1\n", NULL);
        network_is("networking:\n  networkType: OVNKubernetes\n", NULL);
        network_is("networking:\n  serviceNetwork: []\n", NULL);
        /* what yaml.v2 cannot decode into []string */
        network_refused("networking: [a]\npullSecret: s3cr3t\n");
        network_refused("networking:\n  serviceNetwork: 172.30.0.0/16\npullSecret: s3cr3t\n");
        network_refused("networking:\n  serviceNetwork:\n  - {cidr: 172.30.0.0/16}\npullSecret: s3cr3t\n");
        network_refused("- 1\n- 2\n");
        network_refused("networking: {\npullSecret: s3cr3t\n");
}

static void address_is(const char *cidr, const char *expected)
{
        _cleanup_free_ char *a = NULL;

        if (!expected) {
                ASSERT_ERROR(dns_conflict_address(cidr, &a), EINVAL);
                return;
        }
        ASSERT_OK(dns_conflict_address(cidr, &a));
        ASSERT_STREQ(a, expected);
}

TEST(conflict_address)
{
        address_is("172.30.0.0/16", "172.30.0.10");
        /* the address as written, not the network's (ParseCIDR's IP) */
        address_is("10.96.3.7/12", "10.96.3.10");
        address_is("fd02::/112", "fd02::a");
        address_is("fd02:0:0:0:0:0:1:0/112", "fd02::1:a");
        address_is("::ffff:172.30.0.0/112", "172.30.0.10");
        address_is("172.30.0.0/32", "172.30.0.10");
        address_is("fd02::/128", "fd02::a");
        /* what ParseCIDR refuses: upstream skips the hack */
        address_is("172.30.0.0", NULL);
        address_is("172.30.0.0/33", NULL);
        address_is("172.30.0.0/", NULL);
        address_is("172.30.0.0/1x", NULL);
        address_is("172.30.0/16", NULL);
        address_is("fd02::/129", NULL);
        address_is("dns/16", NULL);
        address_is("", NULL);
        address_is(NULL, NULL);
}

TEST(address_owner)
{
        _cleanup_(json_object_putp) json_object *list = parse_json(
                "{\"items\": ["
                "{\"metadata\": {\"namespace\": \"default\", \"name\": \"kubernetes\"}, "
                "\"spec\": {\"clusterIP\": \"172.30.0.1\"}},"
                "{\"metadata\": {\"namespace\": \"web\", \"name\": \"shop\"}, "
                "\"spec\": {\"clusterIP\": \"172.30.0.10\"}},"
                "{\"metadata\": {\"namespace\": \"openshift-dns\", \"name\": \"dns-default\"}, "
                "\"spec\": {\"clusterIP\": \"172.30.0.10\"}},"
                "{\"metadata\": {\"namespace\": \"openshift-dns\", \"name\": \"dns-default\"}, "
                "\"spec\": {\"clusterIP\": \"fd02::a\"}},"
                "{\"metadata\": {\"namespace\": \"other\", \"name\": \"dns-default\"}, "
                "\"spec\": {\"clusterIP\": \"172.30.0.11\"}},"
                "{\"metadata\": {\"namespace\": \"web\", \"name\": \"external\"}, \"spec\": {}}]}");
        _cleanup_(json_object_putp) json_object *empty = parse_json("{\"items\": []}");
        json_object *s = NULL;

        /* the first Service holding it, as findServiceByIP */
        ASSERT_EQ(dns_address_owner(list, "172.30.0.10", &s), DNS_ADDRESS_FOREIGN);
        ASSERT_STREQ(json_get_string(json_get(s, "metadata"), "name"), "shop");
        ASSERT_EQ(dns_address_owner(list, "fd02::a", &s), DNS_ADDRESS_DNS);
        /* the name alone is not dns-default's */
        ASSERT_EQ(dns_address_owner(list, "172.30.0.11", NULL), DNS_ADDRESS_FOREIGN);
        ASSERT_EQ(dns_address_owner(list, "172.30.0.12", NULL), DNS_ADDRESS_FREE);
        ASSERT_EQ(dns_address_owner(empty, "172.30.0.10", NULL), DNS_ADDRESS_FREE);
        ASSERT_EQ(dns_address_owner(NULL, "172.30.0.10", NULL), DNS_ADDRESS_FREE);
}

TEST(lookups_run_out)
{
        DnsHack h = {};

        /* 45 lookups, each (failed or finding nothing) followed by 20 s */
        for (unsigned i = 0; i < DNS_LOOKUP_ATTEMPTS - 1; i++) {
                ASSERT_EQ(h.step, DNS_HACK_LOOK);
                ASSERT_EQ(dns_hack_next(&h, i % 2 ? DNS_OUTCOME_FREE : DNS_OUTCOME_FAILED, NULL),
                          DNS_WAIT_LOOKUP);
        }
        ASSERT_EQ(h.step, DNS_HACK_LOOK);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FREE, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(h.step, DNS_HACK_OVER);
        ASSERT_EQ(h.lookups, 45u);
}

TEST(dns_default_holds_it)
{
        DnsHack h = {};

        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FREE, NULL), DNS_WAIT_LOOKUP);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_DNS, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(h.step, DNS_HACK_OVER);
}

TEST(foreign_service_deleted)
{
        DnsHack h = {};
        bool gave_up = true;

        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FOREIGN, &gave_up), DNS_WAIT_NONE);
        ASSERT_FALSE(gave_up);
        ASSERT_EQ(h.step, DNS_HACK_DELETE_SERVICE);
        /* a failed try: 10 s, the same deletion again */
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FAILED, &gave_up), DNS_WAIT_DELETION);
        ASSERT_EQ(h.step, DNS_HACK_DELETE_SERVICE);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_DONE, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(h.step, DNS_HACK_DELETE_PODS);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FAILED, NULL), DNS_WAIT_DELETION);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_DONE, NULL), DNS_WAIT_NONE);
        /* the next lookup at once, the second of 45 */
        ASSERT_EQ(h.step, DNS_HACK_LOOK);
        ASSERT_EQ(h.lookups, 1u);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_DNS, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(h.step, DNS_HACK_OVER);
}

TEST(deletions_run_out)
{
        DnsHack h = {};
        bool gave_up = false;

        /* the Service cannot be deleted: 5 tries, then the next lookup at
         * once, the pods left alone */
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FOREIGN, NULL), DNS_WAIT_NONE);
        for (unsigned i = 0; i < DNS_DELETION_ATTEMPTS - 1; i++) {
                ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FAILED, &gave_up), DNS_WAIT_DELETION);
                ASSERT_FALSE(gave_up);
        }
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FAILED, &gave_up), DNS_WAIT_NONE);
        ASSERT_TRUE(gave_up);
        ASSERT_EQ(h.step, DNS_HACK_LOOK);
        /* the pods cannot be deleted: 5 tries, then the next lookup */
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FOREIGN, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_DONE, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(h.step, DNS_HACK_DELETE_PODS);
        for (unsigned i = 0; i < DNS_DELETION_ATTEMPTS - 1; i++)
                ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FAILED, &gave_up), DNS_WAIT_DELETION);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FAILED, &gave_up), DNS_WAIT_NONE);
        ASSERT_TRUE(gave_up);
        ASSERT_EQ(h.step, DNS_HACK_LOOK);
        ASSERT_EQ(h.lookups, 2u);
}

TEST(last_lookup_deletes_then_ends)
{
        DnsHack h = { .lookups = DNS_LOOKUP_ATTEMPTS - 1 };

        /* the 45th lookup finds a foreign Service: deleted, then over */
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_FOREIGN, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_DONE, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(dns_hack_next(&h, DNS_OUTCOME_DONE, NULL), DNS_WAIT_NONE);
        ASSERT_EQ(h.step, DNS_HACK_OVER);
}

DEFINE_TEST_MAIN
