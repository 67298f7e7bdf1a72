/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AgentClusterInstall's status (notes §1.8): what upstream's
 * updateStatus writes at every reconcile, as a pure function of the
 * service's cluster, the counts of §1.7 and the sync error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "cluster.h"
#include "hub-links.h"
#include "hub-text.h"
#include "jsonutil.h"
#include "strutil.h"

/* ---- counts (notes §1.7) ---- */

static unsigned spec_count(json_object *aci, const char *key)
{
        int64_t v = 0;

        if (json_get_int64(json_get_path(aci, "spec.provisionRequirements"), key, &v) < 0 || v < 0)
                return 0;
        return (unsigned)v;
}

/* the host's role as GetHostCountByRole(suggested) sees it: the
 * suggested role, which the service sets to the role a user chose */
static const char *suggested_role(json_object *h)
{
        const char *s = json_get_string(h, "suggested_role"), *r = json_get_string(h, "role");

        if (!isempty(r) && !streq(r, "auto-assign"))
                return r;
        return s;
}

static json_object *agent_named(json_object *const *agents, size_t n, const char *name)
{
        for (size_t i = 0; name && i < n; i++)
                if (streq_ptr(kube_object_name(agents[i]), name))
                        return agents[i];
        return NULL;
}

void cd_counts_hosts(json_object *hosts, ClusterHostApproved approved, const void *userdata,
                     ClusterCounts *c)
{
        for (size_t i = 0;
             json_object_is_type(hosts, json_type_array) && i < json_object_array_length(hosts); i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                const char *role = suggested_role(h);

                if (streq_ptr(role, "master"))
                        c->masters++;
                else if (streq_ptr(role, "arbiter"))
                        c->arbiters++;
                else if (streq_ptr(role, "worker"))
                        c->workers++;
                if (!streq_ptr(json_get_string(h, "status"), "known"))
                        continue;
                c->known++;
                if (approved(h, userdata))
                        c->approved++;
        }
}

typedef struct AgentList {
        json_object *const *agents;
        size_t n;
} AgentList;

/* the host's Agent is approved (Agent.spec.approved: the ClusterDeployment path's approval) */
static bool agent_approved(json_object *host, const void *userdata)
{
        const AgentList *l = userdata;
        json_object *agent = agent_named(l->agents, l->n, json_get_string(host, "id"));
        bool approved = false;

        return agent && json_get_bool(json_get(agent, "spec"), "approved", &approved) >= 0 && approved;
}

void cd_counts(json_object *aci, json_object *hosts, json_object *const *agents, size_t n_agents,
               ClusterCounts *ret)
{
        *ret = (ClusterCounts){
                .expected_masters = spec_count(aci, "controlPlaneAgents"),
                .expected_arbiters = spec_count(aci, "arbiterAgents"),
                .expected_workers = spec_count(aci, "workerAgents"),
        };
        cd_counts_hosts(hosts, agent_approved, &(AgentList){ agents, n_agents }, ret);
        for (size_t i = 0; i < n_agents; i++) {
                json_object *c = hub_conditions_find(agents[i], HUB_COND_SPEC_SYNCED);

                if (c && streq_ptr(json_get_string(c, "status"), HUB_FALSE))
                        ret->unsynced++;
        }
}

static unsigned expected(const ClusterCounts *c)
{
        return c->expected_masters + c->expected_arbiters + c->expected_workers;
}

static bool roles_match(const ClusterCounts *c)
{
        return c->masters == c->expected_masters && c->arbiters == c->expected_arbiters &&
               c->workers == c->expected_workers;
}

bool cd_ready_for_installation(json_object *cluster, const ClusterCounts *c, bool hold)
{
        return !hold && streq_ptr(json_get_string(cluster, "status"), "ready") && c->known == expected(c) &&
               c->approved == expected(c) && roles_match(c) && c->unsynced == 0;
}

/* ---- conditions (notes §1.8) ---- */

static int requirements_met(json_object *d, const char *status, const ClusterCounts *c, usec_t now)
{
        if (streq(status, "ready")) {
                if (!roles_match(c))
                        return hub_conditions_setf(d, true, HUB_COND_REQUIREMENTS_MET, HUB_FALSE,
                                                   HUB_REASON_INSUFFICIENT_AGENTS, now,
                                                   HUB_MSG_INSUFFICIENT_AGENTS, c->expected_masters,
                                                   c->expected_arbiters, c->expected_workers, c->masters,
                                                   c->arbiters, c->workers);
                if (c->unsynced > 0)
                        return hub_conditions_setf(d, true, HUB_COND_REQUIREMENTS_MET, HUB_FALSE,
                                                   HUB_REASON_UNSYNCED_AGENTS, now, HUB_MSG_UNSYNCED_AGENTS,
                                                   c->unsynced);
                if (c->approved < expected(c))
                        return hub_conditions_setf(d, true, HUB_COND_REQUIREMENTS_MET, HUB_FALSE,
                                                   HUB_REASON_UNAPPROVED_AGENTS, now,
                                                   HUB_MSG_UNAPPROVED_AGENTS, expected(c) - c->approved);
                return hub_hive_conditions_set(d, HUB_COND_REQUIREMENTS_MET, HUB_TRUE,
                                               HUB_REASON_CLUSTER_READY, HUB_MSG_CLUSTER_READY, now);
        }
        if (STR_IN_SET(status, "insufficient", "pending-for-input"))
                return hub_hive_conditions_set(d, HUB_COND_REQUIREMENTS_MET, HUB_FALSE,
                                               HUB_REASON_CLUSTER_NOT_READY, HUB_MSG_CLUSTER_NOT_READY, now);
        if (STR_IN_SET(status, "preparing-for-installation", "installing", "installing-pending-user-action",
                       "adding-hosts", "finalizing"))
                return hub_hive_conditions_set(d, HUB_COND_REQUIREMENTS_MET, HUB_TRUE,
                                               HUB_REASON_CLUSTER_ALREADY_INSTALLING,
                                               HUB_MSG_CLUSTER_ALREADY_INSTALLING, now);
        if (STR_IN_SET(status, "installed", "error"))
                return hub_hive_conditions_set(d, HUB_COND_REQUIREMENTS_MET, HUB_TRUE,
                                               HUB_REASON_CLUSTER_INSTALLATION_STOPPED,
                                               HUB_MSG_CLUSTER_INSTALLATION_STOPPED, now);
        return hub_conditions_setf(d, true, HUB_COND_REQUIREMENTS_MET, HUB_UNKNOWN,
                                   HUB_REASON_UNKNOWN_STATUS, now, "%s %s", HUB_MSG_UNKNOWN_STATUS, status);
}

static int validated(json_object *d, const char *status, json_object *cluster, usec_t now)
{
        const char *info = json_get_string(cluster, "validations_info");
        _cleanup_free_ char *failing = hub_failing_validations(info, false);

        if (!failing)
                return -ENOMEM;
        if (streq(status, "insufficient"))
                return hub_conditions_setf(d, true, HUB_COND_VALIDATED, HUB_FALSE,
                                           HUB_REASON_VALIDATIONS_FAILING, now, "%s %s",
                                           HUB_MSG_CLUSTER_VALIDATIONS_FAILING, failing);
        if (streq(status, "pending-for-input"))
                return hub_conditions_setf(d, true, HUB_COND_VALIDATED, HUB_FALSE,
                                           HUB_REASON_VALIDATIONS_USER_PENDING, now, "%s %s",
                                           HUB_MSG_CLUSTER_VALIDATIONS_USER_PENDING, failing);
        if (streq(status, "adding-hosts"))
                return hub_hive_conditions_set(d, HUB_COND_VALIDATED, HUB_TRUE,
                                               HUB_REASON_VALIDATIONS_PASSING,
                                               HUB_MSG_CLUSTER_VALIDATIONS_PASSING, now);
        if (isempty(info))
                return hub_hive_conditions_set(d, HUB_COND_VALIDATED, HUB_UNKNOWN,
                                               HUB_REASON_VALIDATIONS_UNKNOWN,
                                               HUB_MSG_CLUSTER_VALIDATIONS_UNKNOWN, now);
        return hub_hive_conditions_set(d, HUB_COND_VALIDATED, HUB_TRUE, HUB_REASON_VALIDATIONS_PASSING,
                                       HUB_MSG_CLUSTER_VALIDATIONS_PASSING, now);
}

/* ". Cluster version status: S, message: M" of the cvo monitored operator */
static char *cvo_message(json_object *cluster)
{
        json_object *ops = json_get(cluster, "monitored_operators");

        for (size_t i = 0; json_object_is_type(ops, json_type_array) && i < json_object_array_length(ops);
             i++) {
                json_object *op = json_object_array_get_idx(ops, i);

                if (streq_ptr(json_get_string(op, "name"), "cvo") && !isempty(json_get_string(op, "status")))
                        return strdup_printf(". Cluster version status: %s, message: %s",
                                             json_get_string(op, "status"),
                                             strempty(json_get_string(op, "status_info")));
        }
        return strdup("");
}

bool cd_status_before_installation(const char *status)
{
        return STR_IN_SET(strempty(status), "insufficient", "ready", "pending-for-input");
}

static int completed(json_object *d, const char *status, const char *info, json_object *cluster, bool hold,
                     usec_t now)
{
        if (STR_IN_SET(status, "installed", "adding-hosts"))
                return hub_conditions_setf(d, true, HUB_COND_COMPLETED, HUB_TRUE,
                                           HUB_REASON_INSTALLATION_COMPLETED, now, "%s %s",
                                           HUB_MSG_INSTALLATION_COMPLETED, info);
        if (streq(status, "error"))
                return hub_conditions_setf(d, true, HUB_COND_COMPLETED, HUB_FALSE,
                                           HUB_REASON_INSTALLATION_FAILED, now, "%s %s",
                                           HUB_MSG_INSTALLATION_HAS_FAILED, info);
        if (streq(status, "ready") && hold)
                return hub_hive_conditions_set(d, HUB_COND_COMPLETED, HUB_FALSE,
                                               HUB_REASON_INSTALLATION_ON_HOLD, HUB_MSG_INSTALLATION_ON_HOLD,
                                               now);
        if (cd_status_before_installation(status))
                return hub_hive_conditions_set(d, HUB_COND_COMPLETED, HUB_FALSE,
                                               HUB_REASON_INSTALLATION_NOT_STARTED,
                                               HUB_MSG_INSTALLATION_NOT_STARTED, now);
        if (STR_IN_SET(status, "preparing-for-installation", "installing", "finalizing",
                       "installing-pending-user-action")) {
                _cleanup_free_ char *cvo = cvo_message(cluster);

                if (!cvo)
                        return -ENOMEM;
                return hub_conditions_setf(d, true, HUB_COND_COMPLETED, HUB_FALSE,
                                           HUB_REASON_INSTALLATION_IN_PROGRESS, now, "%s %s%s",
                                           HUB_MSG_INSTALLATION_IN_PROGRESS, info, cvo);
        }
        return hub_conditions_setf(d, true, HUB_COND_COMPLETED, HUB_UNKNOWN, HUB_REASON_UNKNOWN_STATUS, now,
                                   "%s %s", HUB_MSG_UNKNOWN_STATUS, status);
}

static int failed(json_object *d, const char *status, const char *info, usec_t now)
{
        if (streq(status, "error"))
                return hub_conditions_setf(d, true, HUB_COND_FAILED, HUB_TRUE,
                                           HUB_REASON_INSTALLATION_FAILED, now, "%s %s",
                                           HUB_MSG_INSTALLATION_FAILED, info);
        return hub_hive_conditions_set(d, HUB_COND_FAILED, HUB_FALSE, HUB_REASON_INSTALLATION_NOT_FAILED,
                                       HUB_MSG_INSTALLATION_NOT_FAILED, now);
}

static int stopped(json_object *d, const char *status, usec_t now)
{
        if (streq(status, "error"))
                return hub_hive_conditions_set(d, HUB_COND_STOPPED, HUB_TRUE, HUB_REASON_INSTALLATION_FAILED,
                                               HUB_MSG_STOPPED_FAILED, now);
        if (streq(status, "cancelled"))
                return hub_hive_conditions_set(d, HUB_COND_STOPPED, HUB_TRUE,
                                               HUB_REASON_INSTALLATION_CANCELLED, HUB_MSG_STOPPED_CANCELLED,
                                               now);
        if (STR_IN_SET(status, "installed", "adding-hosts"))
                return hub_hive_conditions_set(d, HUB_COND_STOPPED, HUB_TRUE,
                                               HUB_REASON_INSTALLATION_COMPLETED, HUB_MSG_STOPPED_COMPLETED,
                                               now);
        return hub_hive_conditions_set(d, HUB_COND_STOPPED, HUB_FALSE, HUB_REASON_INSTALLATION_NOT_STOPPED,
                                       HUB_MSG_INSTALLATION_NOT_STOPPED, now);
}

/* from the cluster's last-installation-preparation; an unknown status
 * leaves the condition as it is */
static int last_preparation(json_object *d, json_object *cluster, usec_t now)
{
        json_object *lp = json_get(cluster, "last-installation-preparation");
        const char *st = json_get_string(lp, "status");

        if (isempty(st) || streq(st, "not_started"))
                return hub_hive_conditions_set(d, HUB_COND_LAST_PREPARATION_FAILED, HUB_FALSE,
                                               HUB_REASON_PREPARATION_NEVER, "", now);
        if (streq(st, "success"))
                return hub_hive_conditions_set(d, HUB_COND_LAST_PREPARATION_FAILED, HUB_FALSE,
                                               HUB_REASON_PREPARATION_OK, "", now);
        if (streq(st, "failed"))
                return hub_hive_conditions_set(d, HUB_COND_LAST_PREPARATION_FAILED, HUB_TRUE,
                                               HUB_REASON_PREPARATION_FAILED,
                                               strempty(json_get_string(lp, "reason")), now);
        return 0;
}

/* ---- the other status fields ---- */

static int strings_of(json_object *list, const char *key, json_object **ret)
{
        json_object *a = json_new_array();

        if (!a)
                return -ENOMEM;
        for (size_t i = 0; json_object_is_type(list, json_type_array) && i < json_object_array_length(list);
             i++) {
                const char *s = json_get_string(json_object_array_get_idx(list, i), key);

                if (!isempty(s) && json_append(a, json_new_string(s)) < 0) {
                        json_object_put(a);
                        return -ENOMEM;
                }
        }
        *ret = a;
        return 0;
}

static const char *platform_type(json_object *cluster)
{
        const char *t = json_get_string(json_get(cluster, "platform"), "type");

        if (streq_ptr(t, "baremetal"))
                return "BareMetal";
        if (streq_ptr(t, "none"))
                return "None";
        if (streq_ptr(t, "vsphere"))
                return "VSphere";
        if (streq_ptr(t, "nutanix"))
                return "Nutanix";
        if (streq_ptr(t, "external"))
                return "External";
        return NULL;
}

static bool time_set(const char *t)
{
        return !isempty(t) && !startswith(t, "0001-01-01");
}

/* controller logs, or any host's logs, were collected */
static bool logs_collected(json_object *cluster)
{
        json_object *hosts = json_get(cluster, "hosts");

        if (time_set(json_get_string(cluster, "controller_logs_collected_at")))
                return true;
        for (size_t i = 0;
             json_object_is_type(hosts, json_type_array) && i < json_object_array_length(hosts); i++)
                if (time_set(json_get_string(json_object_array_get_idx(hosts, i), "logs_collected_at")))
                        return true;
        return false;
}

const char *cd_link_source(json_object *const *agents, json_object *const *agent_infraenvs, size_t n)
{
        const char *best = NULL, *best_name = NULL;

        for (size_t i = 0; i < n; i++) {
                const char *u = hub_link_source_of_infraenv(agent_infraenvs[i]),
                           *name = kube_object_name(agents[i]);

                if (u && (!best || strcmp(strempty(name), strempty(best_name)) < 0)) {
                        best = u;
                        best_name = name;
                }
        }
        return best;
}

static int vip_fields(json_object *st, json_object *cluster)
{
        json_object *api = NULL, *ingress = NULL;
        int r;

        r = strings_of(json_get(cluster, "api_vips"), "ip", &api);
        if (r < 0)
                return r;
        r = strings_of(json_get(cluster, "ingress_vips"), "ip", &ingress);
        if (r < 0) {
                json_object_put(api);
                return r;
        }
        r = json_add_string_nonempty(st, "apiVIP",
                                     json_object_array_length(api) > 0
                                             ? json_object_get_string(json_object_array_get_idx(api, 0))
                                             : json_get_string(cluster, "api_vip"));
        if (r >= 0)
                r = json_add_string_nonempty(
                        st, "ingressVIP",
                        json_object_array_length(ingress) > 0
                                ? json_object_get_string(json_object_array_get_idx(ingress, 0))
                                : json_get_string(cluster, "ingress_vip"));
        json_object_object_del(st, "apiVIPs");
        json_object_object_del(st, "ingressVIPs");
        if (r >= 0 && json_object_array_length(api) > 0)
                r = json_add(st, "apiVIPs", json_object_get(api));
        if (r >= 0 && json_object_array_length(ingress) > 0)
                r = json_add(st, "ingressVIPs", json_object_get(ingress));
        json_object_put(api);
        json_object_put(ingress);
        return r;
}

static int cluster_fields(json_object *st, json_object *cluster, const char *link_source)
{
        _cleanup_(hub_link_signer_done) HubLinkSigner signer = {};
        json_object *dbg = hub_json_ensure_object(st, "debugInfo"), *mn, *progress, *p;
        const char *status = strempty(json_get_string(cluster, "status")),
                   *id = json_get_string(cluster, "id"),
                   *vinfo = json_get_string(cluster, "validations_info"), *pt = platform_type(cluster);
        int64_t pct = 0;
        bool umn = false;
        int r;

        if (!dbg)
                return -ENOMEM;
        if (json_add_string(dbg, "state", status) < 0 ||
            hub_json_add_bounded(dbg, "stateInfo", json_get_string(cluster, "status_info"), HUB_TEXT_MAX) <
                    0)
                return -ENOMEM;
        /* upstream's status.progress is a struct, so it is always there with
         * its required totalPercentage; a cluster without progress keeps
         * the last figure */
        progress = json_get(cluster, "progress");
        p = hub_json_ensure_object(st, "progress");
        if (!p)
                return -ENOMEM;
        if (json_object_is_type(progress, json_type_object))
                (void)json_get_int64(progress, "total_percentage", &pct);
        else
                (void)json_get_int64(p, "totalPercentage", &pct);
        if (json_add_int64(p, "totalPercentage", pct) < 0)
                return -ENOMEM;
        r = vip_fields(st, cluster);
        if (r < 0)
                return r;
        json_object_object_del(st, "userManagedNetworking");
        if (json_get_bool(cluster, "user_managed_networking", &umn) >= 0 &&
            json_add_bool(st, "userManagedNetworking", umn) < 0)
                return -ENOMEM;
        json_object_object_del(st, "platformType");
        if (json_add_string_nonempty(st, "platformType", pt) < 0)
                return -ENOMEM;
        json_object_object_del(st, "machineNetwork");
        mn = json_get(cluster, "machine_networks");
        if (json_object_is_type(mn, json_type_array) && json_object_array_length(mn) > 0) {
                json_object *a = json_new_array();

                if (!a || json_add(st, "machineNetwork", a) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < json_object_array_length(mn); i++) {
                        json_object *e = json_new_object();

                        if (!e || json_append(a, e) < 0 ||
                            json_add_string(
                                    e, "cidr",
                                    strempty(json_get_string(json_object_array_get_idx(mn, i), "cidr"))) < 0)
                                return -ENOMEM;
                }
        }
        json_object_object_del(st, "connectivityMajorityGroups");
        if (json_add_string_nonempty(st, "connectivityMajorityGroups",
                                     json_get_string(cluster, "connectivity_majority_groups")) < 0)
                return -ENOMEM;
        if (!isempty(vinfo)) {
                _cleanup_(json_object_putp) json_object *v = NULL;

                /* the service's own JSON: kept as it was when it does not parse */
                if (json_parse(vinfo, strlen(vinfo), BUF_MAX_JSON_DOC, &v, NULL) >= 0 &&
                    json_object_is_type(v, json_type_object) &&
                    (hub_json_bound_strings(v, HUB_VALIDATION_TEXT_MAX) < 0 ||
                     json_add(st, "validationsInfo", TAKE_PTR(v)) < 0))
                        return -ENOMEM;
        }
        /* the debug URLs (populateEventsURL, populateLogsURL: not for an
         * installed cluster), as the service's controllers make them
         * (hub-links.h); upstream signs them with the cluster's key, the
         * hub with the key of an infra-env of the cluster, which the
         * service's local authentication takes alike */
        if (!streq(status, "installed") && !isempty(id) &&
            hub_link_signer_parse(link_source, &signer) >= 0) {
                _cleanup_free_ char *events = hub_link_events(&signer, "cluster_id", id), *logs = NULL;

                if (!events || hub_link_set(dbg, "eventsURL", events) < 0)
                        return -ENOMEM;
                if (logs_collected(cluster)) {
                        logs = hub_link_cluster_logs(&signer, id);
                        if (!logs || hub_link_set(dbg, "logsURL", logs) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

int cd_aci_status(json_object *desired, json_object *cluster, const ClusterCounts *counts,
                  const char *sync_error, bool sync_user, bool hold, const char *link_source, usec_t now)
{
        json_object *st = hub_json_ensure_object(desired, "status");
        const char *status, *info;
        int r;

        if (!st)
                return -ENOMEM;
        if (!sync_error)
                r = hub_hive_conditions_set(desired, HUB_COND_SPEC_SYNCED, HUB_TRUE, HUB_REASON_SYNC_OK,
                                            HUB_MSG_ACI_SYNC_OK, now);
        else if (sync_user)
                r = hub_conditions_setf(desired, true, HUB_COND_SPEC_SYNCED, HUB_FALSE,
                                        HUB_REASON_INPUT_ERROR, now, "%s: %s", HUB_MSG_INPUT_ERROR,
                                        sync_error);
        else
                r = hub_conditions_setf(desired, true, HUB_COND_SPEC_SYNCED, HUB_FALSE,
                                        HUB_REASON_BACKEND_ERROR, now, "%s: %s", HUB_MSG_BACKEND_ERROR,
                                        sync_error);
        if (r < 0)
                return r;

        if (!cluster) {
                /* setClusterConditionsUnknown */
                static const char *const types[] = { HUB_COND_VALIDATED, HUB_COND_REQUIREMENTS_MET,
                                                     HUB_COND_COMPLETED, HUB_COND_FAILED, HUB_COND_STOPPED };
                json_object *dbg = json_get(st, "debugInfo");

                for (size_t i = 0; dbg && i < 4; i++)
                        json_object_object_del(
                                dbg, (const char *[]){ "state", "stateInfo", "logsURL", "eventsURL" }[i]);
                for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                        r = hub_hive_conditions_set(desired, types[i], HUB_UNKNOWN, HUB_REASON_NOT_AVAILABLE,
                                                    HUB_MSG_NOT_AVAILABLE, now);
                        if (r < 0)
                                return r;
                }
                return 0;
        }

        r = cluster_fields(st, cluster, link_source);
        if (r < 0)
                return r;
        status = strempty(json_get_string(cluster, "status"));
        info = strempty(json_get_string(cluster, "status_info"));
        r = requirements_met(desired, status, counts, now);
        if (r >= 0)
                r = validated(desired, status, cluster, now);
        if (r >= 0)
                r = completed(desired, status, info, cluster, hold, now);
        if (r >= 0)
                r = failed(desired, status, info, now);
        if (r >= 0)
                r = stopped(desired, status, now);
        if (r >= 0)
                r = last_preparation(desired, cluster, now);
        return r;
}
