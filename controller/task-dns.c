/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HackDNSAddressConflict's I/O (notes/controller.md §5.6): the service
 * network from kube-system/cluster-config-v1, then one step of
 * controller/dns.h per round: a lookup of every Service, the deletion of a
 * foreign Service holding the DNS address, the deletecollection of the DNS
 * operator's pods. Never in the dry run (upstream does not start it there).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "cleanup.h"
#include "controller/dns.h"
#include "controller/run.h"
#include "jsonutil.h"
#include "kube/kube.h"
#include "log.h"
#include "strutil.h"

/* the first round: the address dns-default wants; false when the hack
 * cannot run */
static bool dns_address_find(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *cm = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *network = NULL, *err = NULL;
        const char *install_config;
        int r;

        log_info("Making sure service %s can reserve the .10 address", DNS_SERVICE_NAME);
        r = kube_get(ctl->kube, &kube_resource_configmaps, CLUSTER_CONFIG_NAMESPACE, CLUSTER_CONFIG_NAME,
                     &cm, &st);
        if (r < 0) {
                log_error("Failed to get service networks: Failed to get config map: %s", strna(st.message));
                return false;
        }
        install_config = json_get_string(json_get(cm, "data"), CLUSTER_CONFIG_KEY);
        if (!install_config) {
                log_error("Failed to get service networks: Failed to get install config");
                return false;
        }
        r = install_config_service_network(install_config, strlen(install_config), &network, &err);
        if (r < 0 || !network) {
                log_error("Failed to get service networks: %s",
                          r < 0 ? strna(err) : "none in the install-config");
                return false;
        }
        r = dns_conflict_address(network, &ctl->dns_address);
        if (r < 0) {
                log_info("Failed to parse service network cidr %s, skipping", network);
                return false;
        }
        return true;
}

static DnsOutcome dns_lookup(Controller *ctl)
{
        _cleanup_(json_object_putp) json_object *services = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        json_object *owner = NULL;
        unsigned attempt = ctl->dns.lookups + 1;
        int r;

        r = kube_list(ctl->kube, &kube_resource_services, NULL, NULL, &services, &st);
        if (r < 0) {
                log_warning("Failed to list running services, attempt %u/%u: %s", attempt,
                            DNS_LOOKUP_ATTEMPTS, strna(st.message));
                return DNS_OUTCOME_FAILED;
        }
        switch (dns_address_owner(services, ctl->dns_address, &owner)) {
        case DNS_ADDRESS_FREE:
                log_info("No service found with IP %s, attempt %u/%u", ctl->dns_address, attempt,
                         DNS_LOOKUP_ATTEMPTS);
                return DNS_OUTCOME_FREE;
        case DNS_ADDRESS_DNS:
                log_info("Service %s has successfully taken IP %s", DNS_SERVICE_NAME, ctl->dns_address);
                return DNS_OUTCOME_DNS;
        default:
                free(ctl->dns_foreign_namespace);
                free(ctl->dns_foreign_name);
                ctl->dns_foreign_namespace = strdup(strempty(kube_object_namespace(owner)));
                ctl->dns_foreign_name = strdup(strempty(kube_object_name(owner)));
                if (!ctl->dns_foreign_namespace || !ctl->dns_foreign_name) {
                        log_oom();
                        return DNS_OUTCOME_FAILED;
                }
                log_warning("Deleting service %s in namespace %s whose IP %s conflicts with %s",
                            ctl->dns_foreign_name, ctl->dns_foreign_namespace, ctl->dns_address,
                            DNS_SERVICE_NAME);
                return DNS_OUTCOME_FOREIGN;
        }
}

static DnsOutcome dns_delete(Controller *ctl, char **ret_error)
{
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *path = NULL;
        int r;

        if (ctl->dns.step == DNS_HACK_DELETE_SERVICE)
                r = kube_delete(ctl->kube, &kube_resource_services, ctl->dns_foreign_namespace,
                                ctl->dns_foreign_name, NULL, NULL, &st);
        else {
                /* DeletePods: deletecollection, no options */
                path = kube_resource_path(&kube_resource_pods, DNS_OPERATOR_NAMESPACE, NULL, NULL);
                if (!path)
                        return log_oom(), DNS_OUTCOME_FAILED;
                r = kube_request(ctl->kube, "DELETE", path, NULL, NULL, NULL, &st);
        }
        if (r >= 0)
                return DNS_OUTCOME_DONE;
        free(*ret_error);
        *ret_error = strdup(strna(st.message));
        return DNS_OUTCOME_FAILED;
}

static usec_t task_dns(Controller *ctl)
{
        const ControllerConfig *c = ctl->cfg;
        _cleanup_free_ char *error = NULL;
        DnsHackStep step = ctl->dns.step;
        DnsOutcome outcome;
        bool gave_up;
        DnsWait wait;

        if (controller_dry_run(ctl))
                return USEC_INFINITY;
        if (!ctl->dns_address && !dns_address_find(ctl)) {
                log_info("HackDNSAddressConflict finished");
                return USEC_INFINITY;
        }
        if (step == DNS_HACK_LOOK)
                outcome = dns_lookup(ctl);
        else
                outcome = dns_delete(ctl, &error);
        wait = dns_hack_next(&ctl->dns, outcome, &gave_up);
        if (outcome == DNS_OUTCOME_FAILED && step != DNS_HACK_LOOK) {
                if (gave_up && step == DNS_HACK_DELETE_SERVICE)
                        log_warning("Failed to delete service %s in namespace %s: failed after %u attempts, "
                                    "last error: %s",
                                    ctl->dns_foreign_name, ctl->dns_foreign_namespace, DNS_DELETION_ATTEMPTS,
                                    strna(error));
                else if (gave_up)
                        log_warning("Failed to delete DNS operator pods: failed after %u attempts, last "
                                    "error: %s",
                                    DNS_DELETION_ATTEMPTS, strna(error));
                else
                        log_warning("Retrying after error: %s", strna(error));
        }
        if (ctl->dns.step == DNS_HACK_OVER) {
                log_info("HackDNSAddressConflict finished");
                return USEC_INFINITY;
        }
        return wait == DNS_WAIT_LOOKUP     ? c->dns_interval
               : wait == DNS_WAIT_DELETION ? c->deletion_interval
                                           : 0;
}

static void task_dns_done(Controller *ctl)
{
        free(ctl->dns_address);
        free(ctl->dns_foreign_namespace);
        free(ctl->dns_foreign_name);
}

const ControllerTask controller_task_dns = {
        .name = "dns",
        .round = task_dns,
        .done = task_dns_done,
};
