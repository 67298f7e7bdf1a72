/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The DNS service address hack (HackDNSAddressConflict,
 * notes/controller.md §5.6), as pure functions; controller/task-dns.c does
 * the I/O, once, never in the dry run.
 *
 * The cluster DNS service openshift-dns/dns-default wants the tenth address
 * of the service network (".10", or "::a" for IPv6): the first entry of
 * networking.serviceNetwork in the install-config of
 * kube-system/cluster-config-v1, with its last byte set to 10. Up to 45
 * lookups, 20 s apart, list every Service: when none holds the address the
 * next lookup waits; dns-default holding it ends the hack; another Service
 * holding it is deleted (5 tries, 10 s apart) and then every pod of
 * openshift-dns-operator (deletecollection, 5 tries, 10 s apart), so that
 * the operator makes dns-default again, and the next lookup follows at
 * once. Out of lookups: over, silently.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct json_object json_object;

#define DNS_SERVICE_NAMESPACE "openshift-dns"
#define DNS_SERVICE_NAME "dns-default"
#define DNS_OPERATOR_NAMESPACE "openshift-dns-operator"
#define CLUSTER_CONFIG_NAMESPACE "kube-system"
#define CLUSTER_CONFIG_NAME "cluster-config-v1"
#define CLUSTER_CONFIG_KEY "install-config"
#define DNS_LOOKUP_ATTEMPTS 45 /* maxDNSServiceIPAttempts */
#define DNS_DELETION_ATTEMPTS 5 /* maxDeletionAttempts */

/* GetServiceNetworks: the first of networking.serviceNetwork in the
 * install-config's YAML; *ret NULL when there is none. -EBADMSG with
 * *reterr when the YAML does not parse or the field is no list of strings
 * (as yaml.v2 refuses it). The text is never quoted in *reterr: an
 * install-config may hold a pull secret. */
int install_config_service_network(const char *yaml, size_t len, char **ret, char **reterr);

/* The address of the network cidr (Go's net.ParseCIDR: "172.30.0.0/16",
 * "fd02::/112") with its last byte set to 10: "172.30.0.10", "fd02::a".
 * -EINVAL when cidr does not parse. */
int dns_conflict_address(const char *cidr, char **ret);

typedef enum DnsAddressOwner {
        DNS_ADDRESS_FREE, /* no Service holds it */
        DNS_ADDRESS_DNS, /* openshift-dns/dns-default */
        DNS_ADDRESS_FOREIGN, /* another Service */
} DnsAddressOwner;

/* findServiceByIP on a ServiceList: the first item whose spec.clusterIP is
 * address. *ret_service (may be NULL) borrows it. */
DnsAddressOwner dns_address_owner(json_object *services, const char *address, json_object **ret_service);

/* The hack's steps, one at a time. */
typedef enum DnsHackStep {
        DNS_HACK_LOOK, /* list the Services */
        DNS_HACK_DELETE_SERVICE, /* the foreign Service */
        DNS_HACK_DELETE_PODS, /* the pods of openshift-dns-operator */
        DNS_HACK_OVER,
} DnsHackStep;

typedef enum DnsOutcome {
        DNS_OUTCOME_FAILED, /* the step's request failed */
        DNS_OUTCOME_DONE, /* a deletion succeeded */
        DNS_OUTCOME_FREE, /* a lookup: no Service holds the address */
        DNS_OUTCOME_DNS, /* a lookup: dns-default holds it */
        DNS_OUTCOME_FOREIGN, /* a lookup: another Service holds it */
} DnsOutcome;

typedef enum DnsWait {
        DNS_WAIT_NONE, /* the next step at once */
        DNS_WAIT_LOOKUP, /* DNSAddressRetryInterval: 20 s */
        DNS_WAIT_DELETION, /* DeletionRetryInterval: 10 s */
} DnsWait;

typedef struct DnsHack {
        DnsHackStep step;
        unsigned lookups; /* made so far */
        unsigned tries; /* of the deletion in progress */
} DnsHack;

/* After the current step ended with outcome: the next step in h, and the
 * wait before it. *ret_gave_up (may be NULL) is set when a deletion ran
 * out of tries (upstream logs it, then looks again). */
DnsWait dns_hack_next(DnsHack *h, DnsOutcome outcome, bool *ret_gave_up);
