/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "agent-install.h"
#include "agent.h"
#include "base64.h"
#include "buf.h"
#include "cleanup.h"
#include "hub-cache.h"
#include "hub-exec.h"
#include "hub-links.h"
#include "hub-service.h"
#include "hub-text.h"
#include "http.h"
#include "jsonutil.h"
#include "kube/kube-csr.h"
#include "kube/kube.h"
#include "kube/kube-node.h"
#include "node-csr.h"
#include "redact.h"
#include "strutil.h"

#define TAG_BIND "bind-host"
#define TAG_UNBIND "unbind-host"
#define TAG_INSTALLER_ARGS "installer-args"
#define TAG_IGNITION "host-ignition"
#define TAG_UPDATE_HOST "update-host"
#define TAG_PROGRESS "day2-progress"
#define TAG_DEREGISTER "deregister-host"

#define CSR_APPROVE_MESSAGE "This CSR was approved by the assisted-service"

/* host statuses in which v2UpdateHost is sent (updateIfNeeded) */
static const char *const updatable_statuses[] = {
        "discovering",
        "known",
        "disconnected",
        "insufficient",
        "pending-for-input",
        "disconnected-unbound",
        "insufficient-unbound",
        "discovering-unbound",
        "known-unbound",
        "binding",
        NULL,
};

/* HostInstallingStatuses */
static const char *const installing_statuses[] = {
        "preparing-for-installation", "preparing-successful",           "installing",
        "installing-in-progress",     "installing-pending-user-action", NULL,
};

void agent_install_observed_done(AgentInstallObserved *o)
{
        hub_ref_done(&o->cd);
        json_object_put(o->aci);
        hub_ref_done(&o->token_secret);
        erase_and_free(o->spoke_kubeconfig);
        free(o->spoke_message);
        json_object_put(o->spoke_node);
        json_object_put(o->spoke_csrs);
        free(o->conflict_infra_env_id);
        free(o->conflict_namespace);
        *o = (AgentInstallObserved){};
}

/* ---- small facts ---- */

static const char *host_stage(json_object *host)
{
        return json_get_string(json_get(host, "progress"), "current_stage");
}

static const char *agent_hostname(json_object *agent)
{
        const char *h = json_get_string(json_get(agent, "spec"), "hostname");

        return !isempty(h) ? h : json_get_string(json_get_path(agent, "status.inventory"), "hostname");
}

/* A day-2 host after its reboot, the service done with it: over REST the
 * service sets its stage Done (and added-to-existing-cluster) at once,
 * where with its own controllers (kube-api mode) it keeps Rebooting until
 * they report the node. The Agent says Done only once the node is Ready
 * on the spoke (day2_stage()): until then cradle-hub does what those
 * controllers do. */
static bool is_day2_rest_done(json_object *host, json_object *agent)
{
        return streq_ptr(host_stage(host), "Done") &&
               streq_ptr(json_get_string(host, "status"), "added-to-existing-cluster") &&
               !streq_ptr(json_get_string(json_get_path(agent, "status.progress"), "currentStage"), "Done");
}

static bool is_day2_joining(json_object *host, json_object *agent)
{
        return streq_ptr(json_get_string(host, "kind"), "AddToExistingClusterHost") &&
               (STR_IN_SET(strempty(host_stage(host)), "Rebooting", "Joined", "Configuring") ||
                is_day2_rest_done(host, agent));
}

static json_object *cd_ref(json_object *agent)
{
        json_object *ref = json_get_path(agent, "spec.clusterDeploymentName");

        return ref && !isempty(json_get_string(ref, "name")) ? ref : NULL;
}

static const char *cd_ref_namespace(json_object *agent)
{
        const char *ns = json_get_string(cd_ref(agent), "namespace");

        return isempty(ns) ? kube_object_namespace(agent) : ns;
}

/* ---- observe ---- */

typedef struct ConflictSearch {
        const char *ns;
        const char *host_id;
        HubService *service;
        AgentInstallObserved *ai;
} ConflictSearch;

static int find_conflict(json_object *ie, void *userdata)
{
        ConflictSearch *s = userdata;
        const char *id = hub_object_annotation(ie, HUB_ANNOTATION_INFRAENV_ID);
        _cleanup_(json_object_putp) json_object *h = NULL;

        if (s->ai->conflict_infra_env_id || isempty(id) || streq_ptr(kube_object_namespace(ie), s->ns))
                return 0;
        if (hub_service_host(s->service, id, s->host_id, &h) < 0)
                return 0;
        s->ai->conflict_infra_env_id = strdup(id);
        s->ai->conflict_namespace = strdup(strempty(kube_object_namespace(ie)));
        return s->ai->conflict_infra_env_id && s->ai->conflict_namespace ? 0 : -ENOMEM;
}

/* the spoke's Node of this Agent and its CSRs, through the admin
 * kubeconfig of the ClusterDeployment */
static int observe_spoke(HubContext *ctx, AgentInstallObserved *ai, json_object *agent)
{
        json_object *cd = ai->cd.object;
        const char *ref =
                json_get_string(json_get_path(cd, "spec.clusterMetadata.adminKubeconfigSecretRef"), "name");
        _cleanup_free_ char *name =
                !isempty(ref) ? strdup(ref)
                              : strdup_printf("%s-admin-kubeconfig", strempty(kube_object_name(cd)));
        _cleanup_(hub_ref_done) HubRef secret = {};
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *err = NULL;
        _cleanup_(json_object_putp) json_object *list = NULL;
        const char *hostname = agent_hostname(agent);
        int r;

        if (!name)
                return -ENOMEM;
        ai->spoke_read = true;
        r = hub_observe_ref(ctx, HUB_KIND_SECRET, kube_object_namespace(cd), name, &secret);
        if (r < 0)
                return r;
        if (!secret.object) {
                ai->spoke_error = secret.error;
                ai->spoke_message =
                        strdup_printf("failed to get spoke secret %s: %s", name, strna(secret.message));
                return ai->spoke_message ? 0 : -ENOMEM;
        }
        ai->spoke_kubeconfig = hub_secret_value(secret.object, "kubeconfig");
        if (!ai->spoke_kubeconfig) {
                ai->spoke_error = -EINVAL;
                ai->spoke_message = strdup_printf("Secret %s has no kubeconfig", name);
                return ai->spoke_message ? 0 : -ENOMEM;
        }
        (void)redact_register_secret(ai->spoke_kubeconfig);
        r = hub_spoke_client(ai->spoke_kubeconfig, &c, &err);
        if (r < 0) {
                ai->spoke_error = r;
                ai->spoke_message = TAKE_PTR(err);
                return 0;
        }
        if (!isempty(hostname)) {
                r = kube_get(c, hub_spoke_resource(HUB_SPOKE_NODE), NULL, hostname, &ai->spoke_node, &st);
                if (r < 0 && r != -ENOENT) {
                        ai->spoke_error = r;
                        ai->spoke_message =
                                strdup_printf("failed to get node %s: %s", hostname, strna(st.message));
                        return ai->spoke_message ? 0 : -ENOMEM;
                }
                if (r < 0)
                        ai->spoke_node = NULL;
        }
        kube_status_done(&st);
        r = kube_list(c, hub_spoke_resource(HUB_SPOKE_CSR), NULL, NULL, &list, &st);
        if (r < 0) {
                ai->spoke_error = r;
                ai->spoke_message = strdup_printf("failed to list CSRs: %s", strna(st.message));
                return ai->spoke_message ? 0 : -ENOMEM;
        }
        ai->spoke_csrs = json_object_get(json_get(list, "items"));
        return 0;
}

int agent_install_observe(HubContext *ctx, AgentObserved *o)
{
        AgentInstallObserved *ai = &o->install;
        json_object *agent = o->base.object, *ref, *tref;
        bool skip_spoke;
        int r;

        ai->csr_requeue = ctx->config->approve_csrs_requeue > 0 ? ctx->config->approve_csrs_requeue
                                                                : HUB_REQUEUE_APPROVE_CSRS;
        if (!agent)
                return 0;
        ref = cd_ref(agent);
        if (ref) {
                r = hub_cache_get(ctx->cache, HUB_KIND_CLUSTERDEPLOYMENT, cd_ref_namespace(agent),
                                  json_get_string(ref, "name"), &ai->cd.object);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (r == -ENOENT) {
                        ai->cd.object = NULL;
                        ai->cd.error = r;
                        ai->cd.message =
                                strdup_printf("clusterdeployments.hive.openshift.io \"%s\" not found",
                                              json_get_string(ref, "name"));
                        if (!ai->cd.message)
                                return -ENOMEM;
                } else {
                        const char *aci = json_get_string(
                                json_get_path(ai->cd.object, "spec.clusterInstallRef"), "name");

                        if (hub_cache_get(ctx->cache, HUB_KIND_AGENTCLUSTERINSTALL,
                                          kube_object_namespace(ai->cd.object), aci, &ai->aci) < 0)
                                ai->aci = NULL;
                }
        }
        tref = json_get_path(agent, "spec.ignitionEndpointTokenReference");
        if (tref && !hub_object_deleting(agent)) {
                const char *tns = json_get_string(tref, "namespace");

                r = hub_observe_ref(ctx, HUB_KIND_SECRET, isempty(tns) ? kube_object_namespace(agent) : tns,
                                    json_get_string(tref, "name"), &ai->token_secret);
                if (r < 0)
                        return r;
        }
        /* the host gone: is it registered in another namespace? */
        if (!o->host && o->host_error == 0 && !hub_object_deleting(agent)) {
                ConflictSearch s = { .ns = kube_object_namespace(agent),
                                     .host_id = kube_object_name(agent),
                                     .service = ctx->service,
                                     .ai = ai };

                r = hub_cache_foreach(ctx->cache, HUB_KIND_INFRAENV, find_conflict, &s);
                if (r < 0)
                        return r;
        }
        if (!ai->cd.object || hub_object_deleting(ai->cd.object))
                return 0;
        /* day-2 joining, or deletion of a node that joined: the spoke */
        skip_spoke = hub_object_annotation(agent, HUB_ANNOTATION_SKIP_SPOKE_CLEANUP) != NULL;
        if ((o->host && is_day2_joining(o->host, agent)) ||
            (hub_object_deleting(agent) && !skip_spoke && ai->aci && !hub_object_deleting(ai->aci) &&
             streq_ptr(json_get_string(json_get_path(agent, "status.progress"), "currentStage"), "Done")))
                return observe_spoke(ctx, ai, agent);
        return 0;
}

/* ---- status (notes §5.6) ---- */

static int cond(json_object *d, const char *type, const char *status, const char *reason, const char *msg,
                usec_t now)
{
        return hub_conditions_set(d, type, status, reason, msg, now);
}

static int unknown_status(json_object *d, const char *type, const char *status, usec_t now)
{
        return hub_conditions_setf(d, false, type, HUB_UNKNOWN, HUB_REASON_UNKNOWN_STATUS, now, "%s %s",
                                   HUB_MSG_UNKNOWN_STATUS, status);
}

static int connected(json_object *d, const char *s, usec_t now)
{
        if (STR_IN_SET(s, "disconnected", "disconnected-unbound"))
                return cond(d, HUB_COND_CONNECTED, HUB_FALSE, HUB_REASON_AGENT_DISCONNECTED,
                            HUB_MSG_AGENT_DISCONNECTED, now);
        return cond(d, HUB_COND_CONNECTED, HUB_TRUE, HUB_REASON_AGENT_CONNECTED, HUB_MSG_AGENT_CONNECTED,
                    now);
}

static int requirements_met(json_object *d, const char *s, bool approved, usec_t now)
{
        const char *T = HUB_COND_REQUIREMENTS_MET;

        if (STR_IN_SET(s, "known", "known-unbound"))
                return approved ? cond(d, T, HUB_TRUE, HUB_REASON_AGENT_READY, HUB_MSG_AGENT_READY, now)
                                : cond(d, T, HUB_FALSE, HUB_REASON_AGENT_NOT_APPROVED,
                                       HUB_MSG_AGENT_NOT_APPROVED, now);
        if (STR_IN_SET(s, "insufficient", "disconnected", "insufficient-unbound", "disconnected-unbound",
                       "discovering-unbound", "discovering", "pending-for-input"))
                return cond(d, T, HUB_FALSE, HUB_REASON_AGENT_NOT_READY, HUB_MSG_AGENT_NOT_READY, now);
        if (strv_contains((char **)installing_statuses, s))
                return cond(d, T, HUB_TRUE, HUB_REASON_AGENT_ALREADY_INSTALLING,
                            HUB_MSG_AGENT_ALREADY_INSTALLING, now);
        if (STR_IN_SET(s, "installed", "error", "added-to-existing-cluster"))
                return cond(d, T, HUB_TRUE, HUB_REASON_AGENT_INSTALLATION_STOPPED,
                            HUB_MSG_AGENT_INSTALLATION_STOPPED, now);
        if (streq(s, "binding"))
                return cond(d, T, HUB_FALSE, HUB_REASON_BINDING, HUB_MSG_BINDING, now);
        if (STR_IN_SET(s, "unbinding", "unbinding-pending-user-action"))
                return cond(d, T, HUB_FALSE, HUB_REASON_UNBINDING, HUB_MSG_UNBINDING, now);
        return unknown_status(d, T, s, now);
}

static int validated(json_object *d, const char *s, json_object *host, usec_t now)
{
        const char *info = json_get_string(host, "validations_info"), *T = HUB_COND_VALIDATED;
        _cleanup_free_ char *failing = hub_failing_validations(info, true);

        if (!failing)
                return -ENOMEM;
        if (streq(s, "binding"))
                return cond(d, T, HUB_FALSE, HUB_REASON_BINDING, HUB_MSG_BINDING, now);
        if (STR_IN_SET(s, "unbinding", "unbinding-pending-user-action"))
                return cond(d, T, HUB_FALSE, HUB_REASON_UNBINDING, HUB_MSG_UNBINDING, now);
        if (STR_IN_SET(s, "insufficient", "insufficient-unbound"))
                return hub_conditions_setf(d, false, T, HUB_FALSE, HUB_REASON_VALIDATIONS_FAILING, now,
                                           "%s %s", HUB_MSG_AGENT_VALIDATIONS_FAILING, failing);
        if (streq(s, "pending-for-input"))
                return hub_conditions_setf(d, false, T, HUB_FALSE, HUB_REASON_VALIDATIONS_USER_PENDING, now,
                                           "%s %s", HUB_MSG_AGENT_VALIDATIONS_USER_PENDING, failing);
        if (isempty(info))
                return cond(d, T, HUB_UNKNOWN, HUB_REASON_VALIDATIONS_UNKNOWN,
                            HUB_MSG_AGENT_VALIDATIONS_UNKNOWN, now);
        return cond(d, T, HUB_TRUE, HUB_REASON_VALIDATIONS_PASSING, HUB_MSG_AGENT_VALIDATIONS_PASSING, now);
}

static int installed(json_object *d, const char *s, const char *info, usec_t now)
{
        const char *T = HUB_COND_INSTALLED;

        if (STR_IN_SET(s, "installed", "added-to-existing-cluster"))
                return hub_conditions_setf(d, false, T, HUB_TRUE, HUB_REASON_INSTALLATION_COMPLETED, now,
                                           "%s %s", HUB_MSG_INSTALLATION_COMPLETED, info);
        if (streq(s, "error"))
                return hub_conditions_setf(d, false, T, HUB_FALSE, HUB_REASON_INSTALLATION_FAILED, now,
                                           "%s %s", HUB_MSG_INSTALLATION_HAS_FAILED, info);
        if (STR_IN_SET(s, "insufficient", "insufficient-unbound", "disconnected", "disconnected-unbound",
                       "discovering", "discovering-unbound", "known", "known-unbound", "pending-for-input"))
                return cond(d, T, HUB_FALSE, HUB_REASON_INSTALLATION_NOT_STARTED,
                            HUB_MSG_INSTALLATION_NOT_STARTED, now);
        if (strv_contains((char **)installing_statuses, s))
                return hub_conditions_setf(d, false, T, HUB_FALSE, HUB_REASON_INSTALLATION_IN_PROGRESS, now,
                                           "%s %s", HUB_MSG_INSTALLATION_IN_PROGRESS, info);
        if (streq(s, "binding"))
                return cond(d, T, HUB_FALSE, HUB_REASON_BINDING, HUB_MSG_BINDING, now);
        if (STR_IN_SET(s, "unbinding", "unbinding-pending-user-action"))
                return cond(d, T, HUB_FALSE, HUB_REASON_UNBINDING, HUB_MSG_UNBINDING, now);
        return unknown_status(d, T, s, now);
}

static int bound(json_object *d, const char *s, usec_t now)
{
        const char *T = HUB_COND_BOUND;

        if (streq(s, "binding"))
                return cond(d, T, HUB_FALSE, HUB_REASON_BINDING, HUB_MSG_BINDING, now);
        if (streq(s, "unbinding"))
                return cond(d, T, HUB_FALSE, HUB_REASON_UNBINDING, HUB_MSG_UNBINDING, now);
        if (streq(s, "unbinding-pending-user-action"))
                return cond(d, T, HUB_FALSE, HUB_REASON_UNBINDING_PENDING, HUB_MSG_UNBINDING_PENDING, now);
        if (STR_IN_SET(s, "disconnected-unbound", "known-unbound", "insufficient-unbound",
                       "disabled-unbound", "discovering-unbound"))
                return cond(d, T, HUB_FALSE, HUB_REASON_UNBOUND, HUB_MSG_UNBOUND, now);
        return cond(d, T, HUB_TRUE, HUB_REASON_BOUND, HUB_MSG_BOUND, now);
}

static int set_time(json_object *o, const char *key, const char *service_time)
{
        usec_t t;
        char ts[32];

        if (isempty(service_time) || hub_parse_time(service_time, &t) < 0)
                return 0;
        hub_format_time(t, ts);
        return json_add_string(o, key, ts);
}

static int progress(json_object *st, json_object *host)
{
        json_object *hp = json_get(host, "progress"), *p, *stages = json_get(host, "progress_stages");
        const char *stage = json_get_string(hp, "current_stage");
        int64_t pct = 0;

        json_object_object_del(st, "progress");
        if (isempty(stage))
                return 0;
        p = hub_json_ensure_object(st, "progress");
        if (!p || json_add_string(p, "currentStage", stage) < 0 ||
            (!isempty(json_get_string(hp, "progress_info")) &&
             hub_json_add_bounded(p, "progressInfo", json_get_string(hp, "progress_info"), HUB_TEXT_MAX) <
                     0) ||
            (json_get_int64(hp, "installation_percentage", &pct) >= 0 &&
             json_add_int64_nonzero(p, "installationPercentage", pct) < 0) ||
            set_time(p, "stageStartTime", json_get_string(hp, "stage_started_at")) < 0 ||
            set_time(p, "stageUpdateTime", json_get_string(hp, "stage_updated_at")) < 0)
                return -ENOMEM;
        if (json_object_is_type(stages, json_type_array) &&
            json_add(p, "progressStages", hub_json_copy(stages)) < 0)
                return -ENOMEM;
        return 0;
}

static bool time_set(const char *t)
{
        return !isempty(t) && !startswith(t, "0001-01-01");
}

/* populateEventsURL and the host's logs URL, as the service's controllers
 * make them (hub-links.h), once the host is bound: link_source is a URL
 * the service handed out for the host's infra-env (the events URL
 * carries that infra-env's key upstream) */
static int debug_urls(json_object *dbg, json_object *host, const char *cluster_id, const char *link_source)
{
        _cleanup_(hub_link_signer_done) HubLinkSigner signer = {};
        const char *id = json_get_string(host, "id");
        _cleanup_free_ char *events = NULL, *logs = NULL;

        if (isempty(cluster_id) || isempty(id) || hub_link_signer_parse(link_source, &signer) < 0)
                return 0;
        events = hub_link_events(&signer, "host_id", id);
        if (!events || hub_link_set(dbg, "eventsURL", events) < 0)
                return -ENOMEM;
        if (time_set(json_get_string(host, "logs_collected_at"))) {
                logs = hub_link_host_logs(&signer, cluster_id, id);
                if (!logs || hub_link_set(dbg, "logsURL", logs) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int ntp_sources(json_object *st, json_object *host)
{
        const char *text = json_get_string(host, "ntp_sources");
        _cleanup_(json_object_putp) json_object *l = NULL;
        json_object *out;

        if (isempty(text) || json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &l, NULL) < 0 ||
            !json_object_is_type(l, json_type_array))
                return 0;
        out = json_new_array();
        if (!out || json_add(st, "ntpSources", out) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(l); i++) {
                json_object *e = json_object_array_get_idx(l, i), *n = json_new_object();

                if (!n || json_append(out, n) < 0 ||
                    json_add_string_nonempty(n, "sourceName", json_get_string(e, "source_name")) < 0 ||
                    json_add_string_nonempty(n, "sourceState", json_get_string(e, "source_state")) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int agent_status(json_object *desired, json_object *host, const char *cluster_id, const char *sync_error,
                 bool sync_user, const char *link_source, usec_t now)
{
        json_object *st = hub_json_ensure_object(desired, "status"), *dbg;
        const char *status = json_get_string(host, "status"), *role = json_get_string(host, "role"),
                   *suggested = json_get_string(host, "suggested_role"),
                   *vinfo = json_get_string(host, "validations_info");
        bool approved = false, bootstrap = false;
        int r;

        if (!st)
                return -ENOMEM;
        if (!sync_error)
                r = cond(desired, HUB_COND_SPEC_SYNCED, HUB_TRUE, HUB_REASON_SYNC_OK, HUB_MSG_SPEC_SYNCED,
                         now);
        else
                r = hub_conditions_setf(desired, false, HUB_COND_SPEC_SYNCED, HUB_FALSE,
                                        sync_user ? HUB_REASON_INPUT_ERROR : HUB_REASON_BACKEND_ERROR, now,
                                        "%s: %s", sync_user ? HUB_MSG_INPUT_ERROR : HUB_MSG_BACKEND_ERROR,
                                        sync_error);
        if (r < 0)
                return r;
        dbg = hub_json_ensure_object(st, "debugInfo");
        if (!dbg)
                return -ENOMEM;
        if (!host || isempty(status)) {
                static const char *const types[] = { HUB_COND_INSTALLED, HUB_COND_CONNECTED,
                                                     HUB_COND_REQUIREMENTS_MET, HUB_COND_VALIDATED,
                                                     HUB_COND_BOUND };

                json_object_object_del(dbg, "state");
                json_object_object_del(dbg, "stateInfo");
                for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                        r = cond(desired, types[i], HUB_UNKNOWN, HUB_REASON_NOT_AVAILABLE,
                                 HUB_MSG_NOT_AVAILABLE, now);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        (void)json_get_bool(host, "bootstrap", &bootstrap);
        json_object_object_del(st, "bootstrap");
        if (bootstrap && json_add_bool(st, "bootstrap", true) < 0)
                return -ENOMEM;
        if (streq_ptr(role, "auto-assign") && !isempty(suggested))
                role = suggested;
        json_object_object_del(st, "role");
        json_object_object_del(st, "kind");
        json_object_object_del(st, "installation_disk_id");
        if (json_add_string_nonempty(st, "role", role) < 0 || json_add_string(dbg, "state", status) < 0 ||
            hub_json_add_bounded(dbg, "stateInfo", json_get_string(host, "status_info"), HUB_TEXT_MAX) < 0 ||
            json_add_string_nonempty(st, "installation_disk_id",
                                     json_get_string(host, "installation_disk_id")) < 0 ||
            json_add_string_nonempty(st, "kind", json_get_string(host, "kind")) < 0)
                return -ENOMEM;
        if (!isempty(vinfo)) {
                _cleanup_(json_object_putp) json_object *v = NULL;

                if (json_parse(vinfo, strlen(vinfo), BUF_MAX_JSON_DOC, &v, NULL) >= 0 &&
                    json_object_is_type(v, json_type_object) &&
                    (hub_json_bound_strings(v, HUB_VALIDATION_TEXT_MAX) < 0 ||
                     json_add(st, "validationsInfo", TAKE_PTR(v)) < 0))
                        return -ENOMEM;
        }
        r = progress(st, host);
        if (r >= 0)
                r = debug_urls(dbg, host, cluster_id, link_source);
        if (r >= 0)
                r = ntp_sources(st, host);
        if (r < 0)
                return r;
        (void)json_get_bool(json_get(desired, "spec"), "approved", &approved);
        r = connected(desired, status, now);
        if (r >= 0)
                r = requirements_met(desired, status, approved, now);
        if (r >= 0)
                r = validated(desired, status, host, now);
        if (r >= 0)
                r = installed(desired, status, strempty(json_get_string(host, "status_info")), now);
        if (r >= 0)
                r = bound(desired, status, now);
        return r;
}

/* ---- the host's facts in annotations (backup and restore, §5.2 step 5) ---- */

/* ---- the inventory annotation, bounded (issue 23, finding 9) ---- */

/* what status.inventory shows of the inventory (notes §5.4, agent.c), the
 * restore's only reader of the annotation: the rest goes first when the
 * inventory is too large for an annotation */
static const char *const annotation_inventory_keys[] = {
        "hostname",      "bmc_address", "bmc_v6address", "memory", "cpu", "boot",
        "system_vendor", "interfaces",  "disks",         "gpus",   NULL,
};
static const char *const annotation_interface_keys[] = {
        "ipv4_addresses", "ipv6_addresses", "flags", "vendor",      "name",
        "has_carrier",    "product",        "mtu",   "biosdevname", "client_id",
        "mac_address",    "speed_mbps",     NULL,
};
/* not smart: a disk's SMART report is the largest part of it */
static const char *const annotation_disk_keys[] = {
        "id",      "by_id", "drive_type", "vendor", "name",       "path",     "hctl",
        "by_path", "model", "wwn",        "serial", "size_bytes", "bootable", "installation_eligibility",
        "io_perf", NULL,
};
/* and when even that is too much for hundreds of them: what names a NIC
 * (BMAC matches it by MAC) and a disk (the installation disk is chosen
 * by id or path) */
static const char *const annotation_interface_ids[] = {
        "name", "mac_address", "ipv4_addresses", "ipv6_addresses", NULL,
};
static const char *const annotation_disk_ids[] = {
        "id", "by_path", "name", "path", "drive_type", "size_bytes", "bootable", "installation_eligibility",
        NULL,
};

static int keep_keys(json_object *o, const char *const *keys)
{
        _cleanup_strv_free_ char **drop = NULL;

        if (!json_object_is_type(o, json_type_object))
                return 0;
        json_object_object_foreach (o, k, v) {
                (void)v;
                if (!strv_contains((char **)keys, k) && strv_extend(&drop, k) < 0)
                        return -ENOMEM;
        }
        STRV_FOREACH (d, drop)
                json_object_object_del(o, *d);
        return 0;
}

/* list's items with keys, those for which first() holds first (stable) */
static json_object *ordered_items(json_object *list, const char *const *keys, bool (*first)(json_object *))
{
        _cleanup_(json_object_putp) json_object *out = json_new_array();
        size_t n = hub_json_array_length(list);

        if (!out)
                return NULL;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(list, i), *c;

                        if (first(e) != (pass == 0))
                                continue;
                        c = hub_json_copy(e);
                        if (!c || keep_keys(c, keys) < 0 || json_append(out, c) < 0) {
                                json_object_put(c);
                                return NULL;
                        }
                }
        return TAKE_PTR(out);
}

/* the disks the installation may use come first */
static bool disk_first(json_object *d)
{
        bool eligible = false;

        (void)json_get_bool(json_get(d, "installation_eligibility"), "eligible", &eligible);
        return eligible;
}

/* the NICs with a MAC (BMAC matches Agents by them) */
static bool interface_first(json_object *i)
{
        return !isempty(json_get_string(i, "mac_address"));
}

/* inv with the first nd disks and ni interfaces, as text when it fits */
static int inventory_text(json_object *inv, json_object *disks, json_object *ifaces, size_t nd, size_t ni,
                          size_t max, char **ret)
{
        json_object *d = json_new_array(), *f = json_new_array();
        _cleanup_free_ char *text = NULL;

        if (!d || !f || json_add(inv, "disks", d) < 0) {
                json_object_put(f);
                return -ENOMEM;
        }
        if (json_add(inv, "interfaces", f) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < nd; i++)
                if (json_append(d, json_object_get(json_object_array_get_idx(disks, i))) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < ni; i++)
                if (json_append(f, json_object_get(json_object_array_get_idx(ifaces, i))) < 0)
                        return -ENOMEM;
        text = json_to_string(inv, 0);
        if (!text)
                return -ENOMEM;
        *ret = strlen(text) <= max ? TAKE_PTR(text) : NULL;
        return 0;
}

/* the most of the first n items that fits: a binary search, the text
 * growing with the count; *ret the text of the count found */
static int most_that_fit(json_object *inv, json_object *disks, json_object *ifaces, bool of_disks, size_t n,
                         size_t max, size_t *ret_n, char **ret)
{
        size_t lo = 0, hi = n;
        _cleanup_free_ char *best = NULL;
        int r;

        r = inventory_text(inv, disks, ifaces, 0, of_disks ? hub_json_array_length(ifaces) : 0, max, &best);
        if (r < 0 || !best)
                return r;
        while (lo < hi) {
                size_t mid = lo + (hi - lo + 1) / 2;
                _cleanup_free_ char *t = NULL;

                r = inventory_text(inv, disks, ifaces, of_disks ? mid : 0,
                                   of_disks ? hub_json_array_length(ifaces) : mid, max, &t);
                if (r < 0)
                        return r;
                if (t) {
                        lo = mid;
                        free(best);
                        best = TAKE_PTR(t);
                } else
                        hi = mid - 1;
        }
        *ret_n = lo;
        *ret = TAKE_PTR(best);
        return 0;
}

int agent_inventory_annotation(const char *inventory, size_t max, char **ret, char **ret_note)
{
        _cleanup_(json_object_putp) json_object *inv = NULL, *disks = NULL, *ifaces = NULL;
        _cleanup_free_ char *text = NULL;
        size_t nd, ni, kept_d = 0, kept_i = 0;
        int tier, r;

        *ret = *ret_note = NULL;
        if (isempty(inventory))
                return 0;
        if (json_parse(inventory, strlen(inventory), BUF_MAX_JSON_DOC, &inv, NULL) < 0 ||
            !json_object_is_type(inv, json_type_object)) {
                /* not the service's JSON: kept only when it fits */
                if (strlen(inventory) > max) {
                        *ret_note = strdup("the inventory is not JSON and too large to keep");
                        return *ret_note ? 0 : -ENOMEM;
                }
                *ret = strdup(inventory);
                return *ret ? 0 : -ENOMEM;
        }
        /* the agent sends the inventory again every minute or so with only
         * its timestamp changed, and upstream's mirror of it rewrote the
         * Agent each time */
        json_object_object_del(inv, "timestamp");
        text = json_to_string(inv, 0);
        if (!text)
                return -ENOMEM;
        if (strlen(text) <= max) {
                *ret = TAKE_PTR(text);
                return 0;
        }
        /* too large (hundreds of disks and NICs): what status.inventory
         * shows; if still too large, what names each disk and NIC, as
         * many as fit, the disks the installation may use and the NICs
         * with a MAC first */
        nd = hub_json_array_length(json_get(inv, "disks"));
        ni = hub_json_array_length(json_get(inv, "interfaces"));
        free(text);
        text = NULL;
        r = keep_keys(inv, annotation_inventory_keys);
        if (r < 0)
                return r;
        /* tier 0: every disk and NIC with what status.inventory shows;
         * tier 1: what names them, as many as fit */
        for (tier = 0; tier < 2 && !text; tier++) {
                json_object_put(disks);
                json_object_put(ifaces);
                disks = ordered_items(json_get(inv, "disks"),
                                      tier == 0 ? annotation_disk_keys : annotation_disk_ids, disk_first);
                ifaces = ordered_items(json_get(inv, "interfaces"),
                                       tier == 0 ? annotation_interface_keys : annotation_interface_ids,
                                       interface_first);
                if (!disks || !ifaces)
                        return -ENOMEM;
                if (tier == 0) {
                        r = inventory_text(inv, disks, ifaces, nd, ni, max, &text);
                        if (r < 0)
                                return r;
                        kept_d = nd;
                        kept_i = ni;
                        continue;
                }
                r = most_that_fit(inv, disks, ifaces, true, nd, max, &kept_d, &text);
                if (r >= 0 && !text) {
                        kept_d = 0;
                        r = most_that_fit(inv, disks, ifaces, false, ni, max, &kept_i, &text);
                } else
                        kept_i = ni;
                if (r < 0)
                        return r;
        }
        *ret_note = strdup_printf("holds %zu of %zu disks and %zu of %zu interfaces, %s: the whole "
                                  "inventory did not fit in %zu bytes (status.inventory has it)",
                                  kept_d, nd, kept_i, ni,
                                  tier == 1 ? "without the fields status.inventory does not show"
                                            : "with only the fields that name them",
                                  max);
        if (!*ret_note)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}

/* validations_info for its annotation: the failing validations alone when
 * the whole is too large, nothing when even they are */
static char *validations_for_annotation(const char *text, size_t max)
{
        _cleanup_(json_object_putp) json_object *v = NULL;
        _cleanup_free_ char *failing = NULL;

        if (!text || strlen(text) <= max)
                return strdup(strempty(text));
        if (json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &v, NULL) < 0 ||
            !json_object_is_type(v, json_type_object))
                return strdup("");
        json_object_object_foreach (v, group, list) {
                json_object *kept = json_new_array();

                (void)group;
                for (size_t i = 0; kept && i < hub_json_array_length(list); i++) {
                        json_object *e = json_object_array_get_idx(list, i);

                        if (!streq_ptr(json_get_string(e, "status"), "success") &&
                            json_append(kept, json_object_get(e)) < 0) {
                                json_object_put(kept);
                                kept = NULL;
                        }
                }
                if (!kept)
                        return NULL;
                json_object_object_add(v, group, kept);
        }
        failing = json_to_string(v, 0);
        if (!failing)
                return NULL;
        return strlen(failing) <= max ? TAKE_PTR(failing) : strdup("");
}

static int mirror_annotations(json_object *desired, json_object *host)
{
        _cleanup_free_ char *inv = NULL, *note = NULL,
                            *vinfo = validations_for_annotation(json_get_string(host, "validations_info"),
                                                                HUB_AGENT_VALIDATIONS_ANNOTATION_MAX);
        const char *stage = host_stage(host);
        int r;

        if (!vinfo)
                return -ENOMEM;
        r = agent_inventory_annotation(json_get_string(host, "inventory"),
                                       HUB_AGENT_INVENTORY_ANNOTATION_MAX, &inv, &note);
        if (r >= 0)
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_AGENT_STATE,
                                              strempty(json_get_string(host, "status")));
        if (r >= 0)
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_AGENT_ROLE,
                                              strempty(json_get_string(host, "role")));
        if (r >= 0)
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_AGENT_INVENTORY, strempty(inv));
        if (r >= 0)
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_AGENT_INVENTORY_TRIMMED, note);
        if (r >= 0)
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_AGENT_VALIDATIONS, vinfo);
        if (r >= 0 && json_get(host, "progress"))
                r = hub_object_set_annotation(desired, HUB_ANNOTATION_AGENT_STAGE, strempty(stage));
        return r;
}

/* the host as the annotations remember it (restore) */
static json_object *host_from_annotations(json_object *agent)
{
        const char *state = hub_object_annotation(agent, HUB_ANNOTATION_AGENT_STATE);
        _cleanup_(json_object_putp) json_object *h = NULL;

        if (isempty(state))
                return NULL;
        h = json_new_object();
        if (!h || json_add_string(h, "id", kube_object_name(agent)) < 0 ||
            json_add_string(h, "status", state) < 0 ||
            json_add_string_nonempty(h, "role", hub_object_annotation(agent, HUB_ANNOTATION_AGENT_ROLE)) <
                    0 ||
            json_add_string_nonempty(h, "inventory",
                                     hub_object_annotation(agent, HUB_ANNOTATION_AGENT_INVENTORY)) < 0 ||
            json_add_string_nonempty(h, "validations_info",
                                     hub_object_annotation(agent, HUB_ANNOTATION_AGENT_VALIDATIONS)) < 0)
                return NULL;
        if (!isempty(hub_object_annotation(agent, HUB_ANNOTATION_AGENT_STAGE))) {
                json_object *p = hub_json_ensure_object(h, "progress");

                if (!p || json_add_string(p, "current_stage",
                                          hub_object_annotation(agent, HUB_ANNOTATION_AGENT_STAGE)) < 0)
                        return NULL;
        }
        return TAKE_PTR(h);
}

/* ---- spec → service (§5.3) ---- */

/* spec.installerArgs as the service stores it (json.Marshal of the list);
 * -EINVAL when it is not a JSON list of strings */
static int installer_args(json_object *agent, json_object **ret_list, char **ret_text)
{
        const char *spec = json_get_string(json_get(agent, "spec"), "installerArgs");
        _cleanup_(json_object_putp) json_object *l = NULL;

        if (isempty(spec))
                l = json_new_array();
        else if (json_parse(spec, strlen(spec), BUF_MAX_JSON_DOC, &l, NULL) < 0 ||
                 !json_object_is_type(l, json_type_array))
                return -EINVAL;
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(l); i++)
                if (!json_object_is_type(json_object_array_get_idx(l, i), json_type_string))
                        return -EINVAL;
        *ret_text = strdup(
                json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        if (!*ret_text)
                return -ENOMEM;
        *ret_list = TAKE_PTR(l);
        return 0;
}

/* the disk the spec names is the host's installation disk already */
static bool disk_is_current(json_object *host, const char *want)
{
        const char *text = json_get_string(host, "inventory"),
                   *cur = json_get_string(host, "installation_disk_id");
        _cleanup_(json_object_putp) json_object *inv = NULL;
        json_object *disks;

        if (streq_ptr(want, cur) || streq_ptr(want, json_get_string(host, "installation_disk_path")))
                return true;
        if (isempty(text) || json_parse(text, strlen(text), BUF_MAX_JSON_DOC, &inv, NULL) < 0)
                return false;
        disks = json_get(inv, "disks");
        for (size_t i = 0;
             json_object_is_type(disks, json_type_array) && i < json_object_array_length(disks); i++) {
                json_object *d = json_object_array_get_idx(disks, i);

                if (!streq_ptr(json_get_string(d, "id"), cur))
                        continue;
                return streq_ptr(json_get_string(d, "by_path"), want) ||
                       streq_ptr(json_get_string(d, "path"), want) ||
                       streq_ptr(json_get_string(d, "by_id"), want);
        }
        return false;
}

static int node_labels(json_object *agent, json_object *host, json_object **ret)
{
        json_object *want = json_get_path(agent, "spec.nodeLabels");
        const char *have_text = json_get_string(host, "node_labels");
        _cleanup_(json_object_putp) json_object *have = NULL, *w = NULL, *list = NULL;

        *ret = NULL;
        w = json_object_is_type(want, json_type_object) ? hub_json_copy(want) : json_new_object();
        if (!w)
                return -ENOMEM;
        if (!isempty(have_text))
                (void)json_parse(have_text, strlen(have_text), BUF_MAX_JSON_DOC, &have, NULL);
        if (!have)
                have = json_new_object();
        if (!have)
                return -ENOMEM;
        if (hub_json_equal(w, have))
                return 0;
        list = json_new_array();
        if (!list)
                return -ENOMEM;
        json_object_object_foreach (w, k, v) {
                json_object *e = json_new_object();

                if (!e || json_append(list, e) < 0 || json_add_string(e, "key", k) < 0 ||
                    json_add_string(e, "value", strempty(json_object_get_string(v))) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(list);
        return 0;
}

int agent_update_params(json_object *agent, json_object *host, const char *token, json_object **ret,
                        char **ret_error)
{
        json_object *spec = json_get(agent, "spec");
        _cleanup_(json_object_putp) json_object *p = json_new_object(), *labels = NULL;
        const char *hostname = json_get_string(spec, "hostname"),
                   *mcp = json_get_string(spec, "machineConfigPool"), *role = json_get_string(spec, "role"),
                   *disk = json_get_string(spec, "installation_disk_path");
        bool token_set = false;
        int r;

        *ret = NULL;
        *ret_error = NULL;
        if (!p)
                return -ENOMEM;
        r = node_labels(agent, host, &labels);
        if (r < 0)
                return r;
        if (labels && json_add(p, "node_labels", TAKE_PTR(labels)) < 0)
                return -ENOMEM;
        if (!isempty(hostname) && !streq_ptr(hostname, json_get_string(host, "requested_hostname")) &&
            json_add_string(p, "host_name", hostname) < 0)
                return -ENOMEM;
        if (!isempty(mcp) && !streq_ptr(mcp, json_get_string(host, "machine_config_pool_name")) &&
            json_add_string(p, "machine_config_pool_name", mcp) < 0)
                return -ENOMEM;
        if (!isempty(role) && !streq_ptr(role, json_get_string(host, "role")) &&
            json_add_string(p, "host_role", role) < 0)
                return -ENOMEM;
        if (isempty(disk))
                disk = json_get_string(spec, "installation_disk_id");
        if (!isempty(disk) && !disk_is_current(host, disk)) {
                json_object *a = json_new_array(), *d = json_new_object();

                if (!a || !d || json_append(a, d) < 0 || json_add(p, "disks_selected_config", a) < 0 ||
                    json_add_string(d, "id", disk) < 0 || json_add_string(d, "role", "install") < 0)
                        return -ENOMEM;
        }
        (void)json_get_bool(host, "ignition_endpoint_token_set", &token_set);
        if ((!isempty(token) && !token_set) || (isempty(token) && token_set))
                if (json_add_string(p, "ignition_endpoint_token", strempty(token)) < 0)
                        return -ENOMEM;
        if (json_object_object_length(p) > 0)
                *ret = TAKE_PTR(p);
        return 0;
}

/* ---- day-2 CSRs (csr_utils.go; the checks in node-csr.c) ---- */

int agent_csr_kind(json_object *agent, json_object *csr, json_object *node, char **ret_why)
{
        return node_csr_kind(agent_hostname(agent), csr, node, ret_why);
}

/* a call about the host (its infra-env and id in the path); body taken */
static int host_call(HubPlan *calls, const char *tag, AssistedOp op, json_object *host, json_object *body)
{
        return hub_plan_op(calls, tag, op,
                           (char *[]){ (char *)json_get_string(host, "infra_env_id"),
                                       (char *)json_get_string(host, "id"), NULL },
                           NULL, body, true);
}

/* {"key": value} (a string), for a call's body */
static json_object *body_with(const char *key, const char *value)
{
        json_object *b = json_new_object();

        if (b && json_add_string(b, key, value) < 0) {
                json_object_put(b);
                return NULL;
        }
        return b;
}

/* ---- day-2: the node joins the spoke (§5.6) ---- */

/* approve the node's CSRs when nothing else would: a platform None
 * cluster, or no BareMetalHost for the Agent (the bare-metal operator's
 * machine approver handles the others) */
static bool should_approve_csrs(const AgentObserved *o)
{
        json_object *agent = o->base.object;

        if (!STR_IN_SET(strempty(host_stage(o->host)), "Rebooting", "Joined") &&
            !is_day2_rest_done(o->host, agent))
                return false;
        return streq_ptr(json_get_string(json_get(o->install.aci, "status"), "platformType"), "None") ||
               isempty(hub_object_label(agent, HUB_LABEL_BMH));
}

static int record_approval(json_object *desired, const char *name, const char *type, usec_t now)
{
        json_object *cs = hub_json_ensure_object(desired, "status.csrStatus"), *l, *e;
        char ts[32];

        if (!cs)
                return -ENOMEM;
        hub_format_time(now, ts);
        l = json_get(cs, "approvedCSRs");
        if (!json_object_is_type(l, json_type_array)) {
                l = json_new_array();
                if (!l || json_add(cs, "approvedCSRs", l) < 0)
                        return -ENOMEM;
        }
        e = json_new_object();
        if (!e || json_append(l, e) < 0 || json_add_string(e, "name", name) < 0 ||
            json_add_string(e, "type", type) < 0 || json_add_string(e, "approvedAt", ts) < 0 ||
            json_add_string(cs, "lastApprovalAttempt", ts) < 0)
                return -ENOMEM;
        return 0;
}

static int approve_csrs(const AgentObserved *o, json_object *desired, HubPlan *spoke)
{
        const AgentInstallObserved *ai = &o->install;

        for (size_t i = 0; json_object_is_type(ai->spoke_csrs, json_type_array) &&
                           i < json_object_array_length(ai->spoke_csrs);
             i++) {
                json_object *csr = json_object_array_get_idx(ai->spoke_csrs, i), *body;
                _cleanup_free_ char *why = NULL;
                char ts[32];
                int kind, r;

                if (node_csr_approved(csr))
                        continue;
                kind = agent_csr_kind(o->base.object, csr, ai->spoke_node, &why);
                if (kind < 0)
                        return kind;
                if (kind == 0)
                        continue;
                hub_format_time(o->base.now, ts);
                body = kube_csr_approval(csr, NODE_CSR_APPROVE_REASON, CSR_APPROVE_MESSAGE, ts);
                if (!body)
                        return -ENOMEM;
                r = hub_plan_spoke(spoke, ai->spoke_kubeconfig, HUB_SPOKE_CSR, "approve",
                                   kube_object_name(csr), body);
                if (r >= 0)
                        r = record_approval(desired, kube_object_name(csr), kind == 1 ? "client" : "serving",
                                            o->base.now);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The node's client and serving CSRs are approved: recorded in the
 * Agent's csrStatus (this reconcile or before), or approved on the spoke
 * by anyone. Upstream reports Done once they are and the node is Ready. */
static int node_csrs_approved(const AgentObserved *o, json_object *desired, bool *ret)
{
        const AgentInstallObserved *ai = &o->install;
        json_object *l = json_get_path(desired, "status.csrStatus.approvedCSRs");
        bool client = false, serving = false;

        for (size_t i = 0; json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++) {
                const char *type = json_get_string(json_object_array_get_idx(l, i), "type");

                client = client || streq_ptr(type, "client");
                serving = serving || streq_ptr(type, "serving");
        }
        for (size_t i = 0; json_object_is_type(ai->spoke_csrs, json_type_array) &&
                           i < json_object_array_length(ai->spoke_csrs);
             i++) {
                json_object *csr = json_object_array_get_idx(ai->spoke_csrs, i);
                _cleanup_free_ char *why_client = NULL, *why_serving = NULL;
                int kind_client, kind_serving;

                if (!node_csr_approved(csr))
                        continue;
                /* a client CSR is one of a node not there yet */
                kind_client = agent_csr_kind(o->base.object, csr, NULL, &why_client);
                kind_serving = agent_csr_kind(o->base.object, csr, ai->spoke_node, &why_serving);
                if (kind_client < 0)
                        return kind_client;
                if (kind_serving < 0)
                        return kind_serving;
                client = client || kind_client == 1;
                serving = serving || kind_serving == 2;
        }
        *ret = client && serving;
        return 0;
}

/* The day-2 node's stage: Rebooting until it appears, Joined, Done once
 * Ready and (where cradle-hub approves them) its CSRs approved. */
static int day2_node_stage(const AgentObserved *o, json_object *desired, const char **ret)
{
        bool approved = true;
        int r;

        if (!o->install.spoke_node) {
                *ret = "Rebooting";
                return 0;
        }
        if (should_approve_csrs(o)) {
                r = node_csrs_approved(o, desired, &approved);
                if (r < 0)
                        return r;
        }
        *ret = kube_node_ready(o->install.spoke_node) && approved ? "Done" : "Joined";
        return 0;
}

/* spec.nodeLabels on the Node once it is Ready (applyDay2NodeLabels) */
static int node_labels_on_spoke(const AgentObserved *o, HubPlan *spoke)
{
        json_object *want = json_get_path(o->base.object, "spec.nodeLabels"), *node = o->install.spoke_node;
        json_object *have = json_get(json_get(node, "metadata"), "labels");
        _cleanup_(json_object_putp) json_object *patch = NULL;
        bool differs = false;

        if (!node || !kube_node_ready(node) || !json_object_is_type(want, json_type_object) ||
            json_object_object_length(want) == 0)
                return 0;
        json_object_object_foreach (want, k, v)
                if (!streq_ptr(json_get_string(have, k), json_object_get_string(v)))
                        differs = true;
        if (!differs)
                return 0;
        patch = json_new_object();
        if (!patch || json_add(patch, "metadata", json_new_object()) < 0 ||
            json_add(json_get(patch, "metadata"), "labels", hub_json_copy(want)) < 0)
                return -ENOMEM;
        return hub_plan_spoke(spoke, o->install.spoke_kubeconfig, HUB_SPOKE_NODE, "patch",
                              kube_object_name(node), TAKE_PTR(patch));
}

/* the day-2 host's CSRs, labels and stage; *ret_requeue until Done */
static int day2(const AgentObserved *o, json_object *host, json_object *desired, HubPlan *calls,
                HubPlan *spoke, usec_t csr_requeue, usec_t *ret_requeue)
{
        const AgentInstallObserved *ai = &o->install;
        const HubCallResult *pr = hub_call_results_find(&o->base.results, TAG_PROGRESS);
        const char *want, *have = host_stage(host);
        json_object *p, *body;
        int r;

        if (!is_day2_joining(host, o->base.object) || !cd_ref(o->base.object) || !ai->spoke_read)
                return 0;
        if (ai->spoke_error < 0) {
                *ret_requeue = HUB_REQUEUE_ON_ERROR;
                return 0;
        }
        if (should_approve_csrs(o)) {
                r = approve_csrs(o, desired, spoke);
                if (r < 0)
                        return r;
        }
        r = node_labels_on_spoke(o, spoke);
        if (r < 0)
                return r;
        *ret_requeue = csr_requeue;
        if (!ai->spoke_node)
                return 0;
        r = day2_node_stage(o, desired, &want);
        if (r < 0)
                return r;
        if (streq(want, "Done"))
                *ret_requeue = 0;
        p = hub_json_ensure_object(desired, "status.progress");
        if (!p || json_add_string(p, "currentStage", want) < 0)
                return -ENOMEM;
        /* a service that is done with the host takes no progress any more */
        if (streq_ptr(have, want) || streq_ptr(have, "Done") || pr)
                return 0;
        body = body_with("current_stage", want);
        if (!body)
                return -ENOMEM;
        return host_call(calls, TAG_PROGRESS, ASSISTED_OP_UPDATE_HOST_INSTALL_PROGRESS, host, body);
}

/* ---- decide ---- */

typedef struct Sync {
        char *error;
        bool user;
} Sync;

static void sync_done(Sync *s)
{
        free(s->error);
}

static int sync_set(Sync *s, bool user, const char *fmt, ...) _printf_(3, 4);
static int sync_set(Sync *s, bool user, const char *fmt, ...)
{
        va_list ap;

        if (s->error)
                return 0; /* the first error is the one shown */
        va_start(ap, fmt);
        s->error = strdup_vprintf(fmt, ap);
        va_end(ap);
        s->user = user;
        return s->error ? 0 : -ENOMEM;
}

static int sync_call(Sync *s, const HubCallResult *r)
{
        return sync_set(s, hub_call_is_user_error(r), "%s", strna(r->message));
}

static bool auto_approve(json_object *infraenv)
{
        bool a = false;

        (void)json_get_bool(json_get_path(infraenv, "spec.agentApproval"), "autoApprove", &a);
        return a;
}

/* binding and unbinding (§5.2 step 6): 1 when a call is planned or its
 * answer replaced *host */
static int binding(const AgentObserved *o, json_object *agent, json_object **host, HubPlan *calls,
                   Sync *sync, const char **ret_cluster)
{
        json_object *ref = cd_ref(agent), *cd = o->install.cd.object;
        const HubCallResult *br = hub_call_results_find(&o->base.results, TAG_BIND),
                            *ur = hub_call_results_find(&o->base.results, TAG_UNBIND);
        const char *have = json_get_string(*host, "cluster_id"), *want, *hid = json_get_string(*host, "id");
        json_object *body;

        *ret_cluster = NULL;
        if (ur || br) {
                const HubCallResult *r = ur ? ur : br;

                if (r->error < 0)
                        return sync_call(sync, r) < 0 ? -ENOMEM : 1;
                if (json_object_is_type(r->body, json_type_object))
                        *host = r->body;
                return 1;
        }
        if (!ref) {
                if (isempty(have))
                        return 0;
                if (strv_contains((char **)installing_statuses,
                                  strempty(json_get_string(*host, "status"))) &&
                    !streq_ptr(json_get_string(*host, "kind"), "AddToExistingClusterHost"))
                        return sync_set(sync, true,
                                        "cancelling non-day-2 host [%s] in the middle of installation is "
                                        "not allowed",
                                        strempty(hid)) < 0
                                       ? -ENOMEM
                                       : 0;
                return host_call(calls, TAG_UNBIND, ASSISTED_OP_UNBIND_HOST, *host, NULL) < 0 ? -ENOMEM : 1;
        }
        if (!cd)
                return sync_set(sync, false,
                                "failed to get clusterDeployment with name %s in namespace %s: %s",
                                json_get_string(ref, "name"), cd_ref_namespace(agent),
                                strna(o->install.cd.message)) < 0
                               ? -ENOMEM
                               : 0;
        want = hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID);
        if (isempty(want))
                return sync_set(sync, false, "record not found") < 0 ? -ENOMEM : 0;
        if (isempty(have)) {
                body = body_with("cluster_id", want);
                if (!body)
                        return -ENOMEM;
                return host_call(calls, TAG_BIND, ASSISTED_OP_BIND_HOST, *host, body) < 0 ? -ENOMEM : 1;
        }
        if (!streq(have, want))
                /* bound elsewhere: unbound first, bound on a later reconcile */
                return host_call(calls, TAG_UNBIND, ASSISTED_OP_UNBIND_HOST, *host, NULL) < 0 ? -ENOMEM : 1;
        *ret_cluster = want;
        return 0;
}

/* spec → service (§5.3): the calls that differ, or their answers */
static int spec_sync(const AgentObserved *o, json_object *agent, json_object **host, HubPlan *calls,
                     Sync *sync)
{
        json_object *spec = json_get(agent, "spec");
        const HubCallResult *ar = hub_call_results_find(&o->base.results, TAG_INSTALLER_ARGS),
                            *ir = hub_call_results_find(&o->base.results, TAG_IGNITION),
                            *ur = hub_call_results_find(&o->base.results, TAG_UPDATE_HOST);
        const char *hid = json_get_string(*host, "id"), *ie = json_get_string(*host, "infra_env_id");
        _cleanup_(json_object_putp) json_object *args = NULL, *params = NULL;
        _cleanup_free_ char *text = NULL, *perr = NULL, *token = NULL;
        const char *have_args = json_get_string(*host, "installer_args"),
                   *want_ign = strempty(json_get_string(spec, "ignitionConfigOverrides"));
        int r;

        if (ar) {
                if (ar->error < 0)
                        r = sync_call(sync, ar);
                else if (json_object_is_type(ar->body, json_type_object))
                        *host = ar->body;
        } else {
                r = installer_args(agent, &args, &text);
                if (r == -EINVAL)
                        r = sync_set(sync, true,
                                     "Fail to unmarshal installer args for host %s in infraEnv %s",
                                     strempty(hid), strempty(ie));
                else if (r >= 0 && !streq(text, isempty(have_args) ? "[]" : have_args)) {
                        json_object *body = json_new_object();

                        if (!body || json_add(body, "args", TAKE_PTR(args)) < 0) {
                                json_object_put(body);
                                return -ENOMEM;
                        }
                        r = host_call(calls, TAG_INSTALLER_ARGS, ASSISTED_OP_UPDATE_HOST_INSTALLER_ARGS,
                                      *host, body);
                }
                if (r < 0)
                        return r;
        }
        if (ir) {
                if (ir->error < 0 && sync_call(sync, ir) < 0)
                        return -ENOMEM;
        } else if (!streq(want_ign, strempty(json_get_string(*host, "ignition_config_overrides")))) {
                json_object *body = body_with("config", want_ign);

                if (!body)
                        return -ENOMEM;
                r = host_call(calls, TAG_IGNITION, ASSISTED_OP_UPDATE_HOST_IGNITION, *host, body);
                if (r < 0)
                        return r;
        }
        if (ur) {
                if (ur->error < 0)
                        return sync_call(sync, ur) < 0 ? -ENOMEM : 0;
                if (json_object_is_type(ur->body, json_type_object))
                        *host = ur->body;
                return 0;
        }
        /* upstream skips the update outside these states, silently */
        if (!strv_contains((char **)updatable_statuses, strempty(json_get_string(*host, "status"))))
                return 0;
        if (o->install.token_secret.object)
                token = hub_secret_value(o->install.token_secret.object, "ignition-token");
        else if (json_get_path(agent, "spec.ignitionEndpointTokenReference"))
                return sync_set(sync, false, "failed to get ignition endpoint token secret: %s",
                                strna(o->install.token_secret.message)) < 0
                               ? -ENOMEM
                               : 0;
        if (token)
                (void)redact_register_secret(token);
        r = agent_update_params(agent, *host, token, &params, &perr);
        if (r < 0)
                return r;
        if (perr)
                return sync_set(sync, true, "%s", perr) < 0 ? -ENOMEM : 0;
        if (!params)
                return 0;
        return hub_plan_op(calls, TAG_UPDATE_HOST, ASSISTED_OP_UPDATE_HOST,
                           (char *[]){ (char *)ie, (char *)hid, NULL }, NULL, TAKE_PTR(params), true);
}

int agent_install_decide(const AgentObserved *o, json_object *desired, HubPlan *plan)
{
        json_object *agent = o->base.object, *host = o->host, *spec;
        _cleanup_hub_plan_ HubPlan calls = {}, spoke = {};
        _cleanup_(sync_done) Sync sync = {};
        const char *cluster = NULL;
        usec_t requeue = 0;
        int r;

        r = hub_object_add_finalizer(desired, HUB_FINALIZER_AGENT);
        if (r >= 0)
                r = mirror_annotations(desired, host);
        if (r < 0)
                return r;
        spec = hub_json_ensure_object(desired, "spec");
        if (!spec)
                return -ENOMEM;
        {
                bool approved = false;

                (void)json_get_bool(spec, "approved", &approved);
                if (!approved && auto_approve(o->infraenv) && json_add_bool(spec, "approved", true) < 0)
                        return -ENOMEM;
        }
        /* the spec as this reconcile wants it (agent.c may have reset it) */
        r = binding(o, desired, &host, &calls, &sync, &cluster);
        if (r < 0)
                return r;
        if (r == 0 && !sync.error) {
                r = spec_sync(o, desired, &host, &calls, &sync);
                if (r < 0)
                        return r;
        }
        r = day2(o, host, desired, &calls, &spoke, o->install.csr_requeue, &requeue);
        if (r < 0)
                return r;
        if (calls.n > 0) {
                /* metadata now, the status once the answers are in */
                r = hub_plan_patch_object(plan, HUB_KIND_AGENT, agent, desired, true, false);
                if (r >= 0)
                        r = hub_plan_move(plan, &calls);
                return r;
        }
        r = agent_status(desired, host, json_get_string(host, "cluster_id"), sync.error, sync.user,
                         hub_link_source_of_infraenv(o->infraenv), o->base.now);
        if (r < 0)
                return r;
        /* a day-2 progress answered: the stage it set; a service done
         * with the host: the node's own (Rebooting until it appears) */
        if (is_day2_joining(host, agent) &&
            ((hub_call_results_find(&o->base.results, TAG_PROGRESS) && o->install.spoke_node) ||
             is_day2_rest_done(host, agent))) {
                json_object *p = hub_json_ensure_object(desired, "status.progress");
                const char *stage;

                r = day2_node_stage(o, desired, &stage);
                if (r < 0)
                        return r;
                if (!p || json_add_string(p, "currentStage", stage) < 0)
                        return -ENOMEM;
        }
        r = hub_plan_move(plan, &spoke);
        if (r >= 0)
                r = hub_plan_patch_object(plan, HUB_KIND_AGENT, agent, desired, true, true);
        if (r < 0)
                return r;
        if (sync.error && !sync.user)
                hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
        if (requeue)
                hub_plan_requeue_after(plan, requeue);
        return 0;
}

int agent_install_decide_without_host(const AgentObserved *o, HubPlan *plan)
{
        json_object *agent = o->base.object;
        _cleanup_(json_object_putp) json_object *desired = hub_json_copy(agent), *host = NULL, *inv = NULL;
        _cleanup_free_ char *conflict = NULL;
        const char *text;
        int r;

        if (!desired)
                return -ENOMEM;
        r = hub_object_add_finalizer(desired, HUB_FINALIZER_AGENT);
        if (r < 0)
                return r;
        if (o->install.conflict_infra_env_id) {
                conflict = strdup_printf(
                        "Host with ID %s already exists in infraEnv %s (namespace: %s). Cannot "
                        "restore.",
                        kube_object_name(agent), o->install.conflict_infra_env_id,
                        strempty(o->install.conflict_namespace));
                if (!conflict)
                        return -ENOMEM;
                r = agent_status(desired, NULL, NULL, conflict, true, NULL, o->base.now);
                return r < 0 ? r : hub_plan_patch_object(plan, HUB_KIND_AGENT, agent, desired, true, true);
        }
        if (isempty(hub_object_label(agent, HUB_LABEL_INFRAENV))) {
                hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
                return hub_plan_fail(plan, "Missing InfraEnv name label");
        }
        /* restoreHostByAgent: REST creates no host; the status is what the
         * annotations remember, until the agent registers again */
        host = host_from_annotations(agent);
        text = json_get_string(host, "inventory");
        if (!isempty(text) && agent_inventory_status(text, &inv) >= 0) {
                json_object *st = hub_json_ensure_object(desired, "status");

                if (!st || json_add(st, "inventory", json_object_get(inv)) < 0)
                        return -ENOMEM;
                r = agent_inventory_labels(desired, inv);
                if (r < 0)
                        return r;
        }
        r = agent_status(desired, host, NULL, NULL, false, NULL, o->base.now);
        if (r < 0)
                return r;
        if (host)
                hub_plan_requeue_after(plan, HUB_REQUEUE_LONGER_ON_ERROR);
        return hub_plan_patch_object(plan, HUB_KIND_AGENT, agent, desired, true, true);
}

static int cleanup_failed(const AgentObserved *o, HubPlan *plan, const char *fmt, ...) _printf_(3, 4);
static int cleanup_failed(const AgentObserved *o, HubPlan *plan, const char *fmt, ...)
{
        _cleanup_(json_object_putp) json_object *desired = hub_json_copy(o->base.object);
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        msg = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!desired || !msg)
                return -ENOMEM;
        r = hub_conditions_set(desired, HUB_COND_CLEANUP, HUB_FALSE, HUB_REASON_CLEANUP_FAILED, msg,
                               o->base.now);
        if (r < 0)
                return r;
        hub_plan_requeue_after(plan, HUB_REQUEUE_ON_ERROR);
        return hub_plan_patch_object(plan, HUB_KIND_AGENT, o->base.object, desired, true, true);
}

int agent_install_decide_deletion(const AgentObserved *o, HubPlan *plan)
{
        json_object *agent = o->base.object;
        const AgentInstallObserved *ai = &o->install;
        const HubCallResult *dr = hub_call_results_find(&o->base.results, TAG_DEREGISTER);
        _cleanup_(json_object_putp) json_object *desired = NULL;
        int r;

        if (!hub_object_has_finalizer(agent, HUB_FINALIZER_AGENT))
                return 0;
        if (o->host_error < 0)
                return cleanup_failed(o, plan, "failed to deregister host: %s: %s", kube_object_name(agent),
                                      strna(o->host_message));
        /* the node it became, when the cluster stays */
        if (ai->spoke_read && o->base.results.n == 0) {
                if (ai->spoke_error < 0)
                        return cleanup_failed(o, plan, "failed to clean spoke cluster resources: %s",
                                              strna(ai->spoke_message));
                if (ai->spoke_node) {
                        r = hub_plan_spoke(plan, ai->spoke_kubeconfig, HUB_SPOKE_NODE, "delete",
                                           kube_object_name(ai->spoke_node), NULL);
                        if (r < 0)
                                return r;
                }
        }
        if (o->host && !isempty(o->infra_env_id) && !dr)
                return hub_plan_op(plan, TAG_DEREGISTER, ASSISTED_OP_DEREGISTER_HOST,
                                   (char *[]){ o->infra_env_id, (char *)kube_object_name(agent), NULL },
                                   NULL, NULL, true);
        if (dr && dr->error < 0 && dr->status != 404)
                return cleanup_failed(o, plan, "failed to deregister host: %s: %s", kube_object_name(agent),
                                      strna(dr->message));
        desired = hub_json_copy(agent);
        if (!desired)
                return -ENOMEM;
        r = hub_object_remove_finalizer(desired, HUB_FINALIZER_AGENT);
        if (r < 0)
                return r;
        return hub_plan_patch_object(plan, HUB_KIND_AGENT, agent, desired, true, false);
}
