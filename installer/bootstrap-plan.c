/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "assisted/assisted-models.h"
#include "buf.h"
#include "cleanup.h"
#include "installer/bootstrap-plan.h"
#include "jsonutil.h"
#include "strutil.h"
#include "yamlutil.h"

/* ---- plans ------------------------------------------------------------------ */

static const char *const action_names[_BOOTSTRAP_ACTION_MAX] = {
        [BOOTSTRAP_MKDIR_SSH] = "mkdir-ssh",
        [BOOTSTRAP_DOWNLOAD] = "download-bootstrap-ignition",
        [BOOTSTRAP_PULL_SECRET] = "pull-secret",
        [BOOTSTRAP_APPLY] = "apply-bootstrap-ignition",
        [BOOTSTRAP_SSH_KEY] = "ssh-key",
        [BOOTSTRAP_DAEMON_RELOAD] = "daemon-reload",
        [BOOTSTRAP_HOSTNAME] = "hostname",
        [BOOTSTRAP_NETWORK_MANAGER] = "restart-network-manager",
        [BOOTSTRAP_CONTROLLER_MANIFESTS] = "controller-manifests",
        [BOOTSTRAP_NODE_IMAGE] = "node-image",
        [BOOTSTRAP_START_UNITS] = "start-units",
};

const char *bootstrap_action_to_string(BootstrapAction a)
{
        return a >= 0 && a < _BOOTSTRAP_ACTION_MAX ? action_names[a] : NULL;
}

size_t start_bootstrap_plan(bool single_node, BootstrapAction out[static _BOOTSTRAP_ACTION_MAX])
{
        size_t n = 0;

        out[n++] = BOOTSTRAP_MKDIR_SSH;
        out[n++] = BOOTSTRAP_DOWNLOAD;
        out[n++] = BOOTSTRAP_PULL_SECRET;
        out[n++] = BOOTSTRAP_APPLY;
        /* the bootstrap's root can ssh to the masters for log gathering;
         * single node has nobody to ssh to */
        if (!single_node)
                out[n++] = BOOTSTRAP_SSH_KEY;
        out[n++] = BOOTSTRAP_DAEMON_RELOAD;
        out[n++] = BOOTSTRAP_HOSTNAME;
        /* to run the 30-local-dns-prepender dispatcher script, which the
         * none platform of single node does not have */
        if (!single_node)
                out[n++] = BOOTSTRAP_NETWORK_MANAGER;
        /* before bootkube starts: bootkube applies them */
        out[n++] = BOOTSTRAP_CONTROLLER_MANIFESTS;
        out[n++] = BOOTSTRAP_NODE_IMAGE;
        out[n++] = BOOTSTRAP_START_UNITS;
        return n;
}

bool hostname_valid(const char *name)
{
        size_t label = 0, len = strlen(strempty(name));

        if (len == 0 || len > 253)
                return false;
        for (size_t i = 0; i <= len; i++) {
                char c = name[i];
                if (c == '.' || c == 0) {
                        /* a label: 1-63, alphanumeric at both ends */
                        if (label == 0 || label > 63 || name[i - 1] == '-' || name[i - label] == '-')
                                return false;
                        label = 0;
                        continue;
                }
                if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-')
                        return false;
                label++;
        }
        return true;
}

bool hostname_needs_replacing(const char *name)
{
        return !hostname_valid(name) || streq(name, "localhost");
}

const char *const bootstrap_units[] = { "bootkube.service", "approve-csr.service", "progress.service",
                                        NULL };

static const char *const wait_names[_WAIT_MAX] = {
        [WAIT_RELOAD_RESOLV_CONF] = "reload-resolv-conf",
        [WAIT_KUBE_CLIENT] = "kube-client",
        [WAIT_REPORT_MASTERS_JOIN] = "report-masters-join",
        [WAIT_GET_CLUSTER] = "get-cluster",
        [WAIT_MASTERS] = "masters",
        [WAIT_ETCD_OVERRIDE] = "etcd-override",
        [WAIT_ARBITERS] = "arbiters",
        [WAIT_BOOTKUBE] = "bootkube",
        [WAIT_ETCD_OVERRIDE_UNDO] = "etcd-override-undo",
        [WAIT_ETCD_BOOTSTRAP] = "etcd-bootstrap",
        [WAIT_CONTROLLER] = "controller",
        [WAIT_WORKERS] = "workers",
        [WAIT_MC_ANNOTATIONS] = "machine-config-annotations",
};

const char *bootstrap_wait_to_string(BootstrapWait w)
{
        return w >= 0 && w < _WAIT_MAX ? wait_names[w] : NULL;
}

size_t bootstrap_waits_plan(EtcdBootstrap e, BootstrapWait out[static _WAIT_MAX])
{
        size_t n = 0;

        out[n++] = WAIT_RELOAD_RESOLV_CONF;
        out[n++] = WAIT_KUBE_CLIENT;
        out[n++] = WAIT_REPORT_MASTERS_JOIN;
        out[n++] = WAIT_GET_CLUSTER;
        out[n++] = WAIT_MASTERS;
        /* the original flow: with the bootstrap as the missing third master,
         * cluster-etcd-operator removes the bootstrap member only in the
         * unsafe non-HA mode, set once the other masters are Ready */
        if (e == ETCD_BOOTSTRAP_UNSAFE_OVERRIDE)
                out[n++] = WAIT_ETCD_OVERRIDE;
        out[n++] = WAIT_ARBITERS;
        out[n++] = WAIT_BOOTKUBE;
        /* bootkube.sh ends with cluster-etcd-operator's wait-for-ceo: once
         * .bootkube.done is there the bootstrap member is gone and the
         * override has done its work; off before this host reboots, so the
         * cluster never stays in the unsafe mode */
        if (e == ETCD_BOOTSTRAP_UNSAFE_OVERRIDE)
                out[n++] = WAIT_ETCD_OVERRIDE_UNDO;
        else
                out[n++] = WAIT_ETCD_BOOTSTRAP;
        out[n++] = WAIT_CONTROLLER;
        out[n++] = WAIT_WORKERS;
        out[n++] = WAIT_MC_ANNOTATIONS;
        return n;
}

/* ---- versions and etcd ----------------------------------------------------- */

EtcdBootstrap etcd_bootstrap_for(const char *openshift_version)
{
        return openshift_version_at_least(openshift_version, 4, 7) ? ETCD_BOOTSTRAP_DELAYED_HA
                                                                   : ETCD_BOOTSTRAP_UNSAFE_OVERRIDE;
}

const char *etcd_bootstrap_to_string(EtcdBootstrap e)
{
        switch (e) {
        case ETCD_BOOTSTRAP_DELAYED_HA:
                return "delayed-ha";
        case ETCD_BOOTSTRAP_UNSAFE_OVERRIDE:
                return "unsafe-override";
        default:
                return NULL;
        }
}

static json_object *json_literal(const char *text)
{
        json_object *o = NULL;

        if (json_parse(text, strlen(text), BUF_MAX_SMALL_FILE, &o, NULL) < 0)
                return NULL;
        return o;
}

json_object *etcd_override_patch(void)
{
        return json_literal("{\"spec\": {\"unsupportedConfigOverrides\": "
                            "{\"useUnsupportedUnsafeNonHANonProductionUnstableEtcd\": true}}}");
}

json_object *etcd_override_undo_patch(void)
{
        return json_literal("{\"spec\": {\"unsupportedConfigOverrides\": null}}");
}

bool etcd_override_is_set(json_object *etcd)
{
        json_object *o = json_get_path(etcd, "spec.unsupportedConfigOverrides");
        json_object *v = json_get(o, "useUnsupportedUnsafeNonHANonProductionUnstableEtcd");

        if (!v)
                return false;
        /* Go's bool, or the string kube's unstructured overrides may hold */
        if (json_object_is_type(v, json_type_boolean))
                return json_object_get_boolean(v);
        if (json_object_is_type(v, json_type_string)) {
                bool b;
                return parse_bool_go(json_object_get_string(v), &b) >= 0 && b;
        }
        return false;
}

/* ---- install config ---------------------------------------------------------- */

int install_config_replicas(const char *install_config, const char *pool, int64_t *ret, char **reterr)
{
        _cleanup_(json_object_putp) json_object *ic = NULL;
        _cleanup_free_ char *err = NULL;
        json_object *p, *v;
        int r;

        r = yaml_to_json(strempty(install_config), strlen(strempty(install_config)), &ic, &err);
        if (r < 0) {
                if (reterr)
                        *reterr = strdup_printf("install-config: %s", strna(err));
                return -EBADMSG;
        }
        p = json_get(ic, pool);
        v = json_get(p, "replicas");
        if (!v) {
                *ret = 0;
                return 0;
        }
        if (json_object_is_type(v, json_type_int)) {
                *ret = json_object_get_int64(v);
                return 0;
        }
        if (json_object_is_type(v, json_type_string) && safe_atoi64(json_object_get_string(v), ret) >= 0)
                return 0;
        if (reterr)
                *reterr = strdup_printf("install-config: %s.replicas is not a number: %s", pool,
                                        json_object_get_string(v));
        return -EBADMSG;
}

unsigned nodes_wait_target(const char *role, int64_t replicas)
{
        if (replicas < 1)
                return 0;
        if (streq_ptr(role, "arbiter"))
                return 1;
        /* masters: all but this one, at most two (the minimum the etcd
         * bootstrap needs besides the bootstrap) */
        return (unsigned)MIN(replicas - 1, 2);
}

/* ---- the other hosts ------------------------------------------------------- */

void node_actions_free(NodeAction *a, size_t n)
{
        for (size_t i = 0; a && i < n; i++)
                free(a[i].node);
        free(a);
}

int ready_nodes_plan(json_object *nodes, char *const *ready, const ClusterHosts *inv, NodeAction **ret,
                     size_t *ret_n)
{
        json_object *items = json_get(nodes, "items");
        NodeAction *out = NULL;
        size_t n = 0;

        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *node = json_object_array_get_idx(items, i);
                const char *name = json_get_string(json_get(node, "metadata"), "name");
                NodeAction *grown;
                int host;

                if (isempty(name) || !kube_node_ready(node) || strv_contains(ready, name))
                        continue;
                host = cluster_hosts_match_node(inv, node);
                grown = reallocarray(out, n + 1, sizeof(NodeAction));
                if (!grown)
                        goto oom;
                out = grown;
                out[n] = (NodeAction){
                        .node = strdup(name),
                        .host = host < 0 ? -1 : host,
                        .report_joined = host >= 0 && !streq(inv->hosts[host].status, "installed"),
                };
                if (!out[n++].node)
                        goto oom;
                if (host < 0)
                        break;
        }
        *ret = out;
        *ret_n = n;
        return (int)n;
oom:
        node_actions_free(out, n);
        return -ENOMEM;
}

/* ---- Configuring ----------------------------------------------------------- */

bool configuring_stage_done(const char *stage)
{
        static const HostStage done[] = { HOST_STAGE_CONFIGURING, HOST_STAGE_JOINED, HOST_STAGE_DONE,
                                          HOST_STAGE_WAITING_FOR_IGNITION };

        for (size_t i = 0; i < ELEMENTSOF(done); i++)
                if (streq_ptr(stage, host_stage_to_string(done[i])))
                        return true;
        return false;
}

const char *configuring_stage_for(const char *role)
{
        return host_stage_to_string(streq_ptr(role, "worker") ? HOST_STAGE_WAITING_FOR_IGNITION
                                                              : HOST_STAGE_CONFIGURING);
}

/* ---- taint --------------------------------------------------------------------- */

static bool credential_set(const char *v, const char *placeholder)
{
        return !isempty(v) && !streq(v, placeholder);
}

bool vsphere_credentials_valid(json_object *install_config)
{
        json_object *vs = json_get_path(install_config, "platform.vsphere");
        json_object *vcenters = json_get(vs, "vcenters");

        if (!vs)
                return false;
        if (vcenters && json_object_array_length(vcenters) > 0) {
                json_object *v = json_object_array_get_idx(vcenters, 0);
                return credential_set(json_get_string(v, "user"), "usernameplaceholder") &&
                       credential_set(json_get_string(v, "password"), "passwordplaceholder") &&
                       credential_set(json_get_string(v, "server"), "vcenterplaceholder");
        }
        /* the deprecated flat fields */
        return credential_set(json_get_string(vs, "username"), "usernameplaceholder") &&
               credential_set(json_get_string(vs, "password"), "passwordplaceholder") &&
               credential_set(json_get_string(vs, "vCenter"), "vcenterplaceholder");
}

bool remove_uninitialized_taint(const char *platform, const char *openshift_version, const char *invoker,
                                bool vsphere_credentials)
{
        if (streq_ptr(platform, "nutanix"))
                return true;
        if (!streq_ptr(platform, "vsphere"))
                return false;
        /* the agent-based installer with credentials has the vSphere cloud
         * provider initialize the nodes itself */
        if (streq_ptr(invoker, INVOKER_AGENT_INSTALLER) && vsphere_credentials &&
            openshift_version_at_least(openshift_version, 4, 15))
                return false;
        return true;
}

const char *invoker_of(json_object *configmap)
{
        const char *v = json_get_string(json_get(configmap, "data"), "invoker");

        return isempty(v) ? INVOKER_DEFAULT : v;
}

/* ---- controller --------------------------------------------------------------- */

bool controller_events_scan(json_object *events, char ***seen, char ***new_messages)
{
        json_object *items = json_get(events, "items");
        bool ready = false;

        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *e = json_object_array_get_idx(items, i);
                json_object *meta = json_get(e, "metadata");
                const char *uid = json_get_string(meta, "uid");

                if (!isempty(uid) && !strv_contains(*seen, uid)) {
                        if (strv_extend(seen, uid) < 0 ||
                            strv_extend(new_messages, strempty(json_get_string(e, "message"))) < 0)
                                return ready; /* out of memory: the next round sees them again */
                }
                if (streq_ptr(json_get_string(meta, "name"), CONTROLLER_READY_EVENT))
                        ready = true;
        }
        return ready;
}

json_object *controller_pod_pick(json_object *pods)
{
        json_object *items = json_get(pods, "items");

        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *p = json_object_array_get_idx(items, i);
                if (startswith(strempty(json_get_string(json_get(p, "metadata"), "name")),
                               CONTROLLER_NAME) &&
                    streq_ptr(json_get_string(json_get(p, "status"), "phase"), "Running"))
                        return p;
        }
        return NULL;
}

/* ---- MachineConfig annotations ---------------------------------------------------- */

static const char *annotation(json_object *node, const char *key)
{
        return json_get_string(json_get_path(node, "metadata.annotations"), key);
}

char **mc_annotation_names(json_object *nodes)
{
        json_object *items = json_get(nodes, "items");
        _cleanup_strv_free_ char **l = NULL;

        for (size_t i = 0; items && i < json_object_array_length(items); i++) {
                json_object *node = json_object_array_get_idx(items, i);
                const char *names[] = { annotation(node, MC_CURRENT_CONFIG),
                                        annotation(node, MC_DESIRED_CONFIG) };
                for (size_t k = 0; k < ELEMENTSOF(names); k++)
                        if (!isempty(names[k]) && !strv_contains(l, names[k]) &&
                            strv_extend(&l, names[k]) < 0)
                                return NULL;
        }
        if (!l)
                return calloc(1, sizeof(char *));
        strv_sort(l);
        return TAKE_PTR(l);
}

bool mc_annotations_consistent(json_object *nodes, char *const *existing, char **ret_reason,
                               char **ret_desired)
{
        json_object *items = json_get(nodes, "items");
        const char *desired = NULL;
        size_t n = items ? json_object_array_length(items) : 0;

        if (n == 0) {
                *ret_reason = strdup("no master nodes yet");
                return false;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *node = json_object_array_get_idx(items, i);
                const char *name = strna(json_get_string(json_get(node, "metadata"), "name"));
                const char *cur = annotation(node, MC_CURRENT_CONFIG),
                           *want = annotation(node, MC_DESIRED_CONFIG);

                if (isempty(cur) || isempty(want)) {
                        *ret_reason = strdup_printf("node %s has no %s annotation yet", name,
                                                    isempty(cur) ? "currentConfig" : "desiredConfig");
                        return false;
                }
                if (!strv_contains(existing, cur) || !strv_contains(existing, want)) {
                        *ret_reason = strdup_printf("MachineConfig %s of node %s does not exist yet",
                                                    strv_contains(existing, cur) ? want : cur, name);
                        return false;
                }
                if (desired && !streq(desired, want)) {
                        *ret_reason =
                                strdup_printf("node %s wants %s, another node %s", name, want, desired);
                        return false;
                }
                desired = want;
        }
        *ret_desired = strdup(desired);
        return true;
}

/* ---- agent-based installer workers -------------------------------------------------- */

bool abi_workers_joining(json_object *workers, char **ret_waiting)
{
        static const HostStage before[] = { HOST_STAGE_WAITING_FOR_CONTROL_PLANE, HOST_STAGE_INSTALLING,
                                            HOST_STAGE_STARTING_INSTALLATION };

        for (size_t i = 0; workers && i < json_object_array_length(workers); i++) {
                json_object *w = json_object_array_get_idx(workers, i);
                const char *stage = json_get_string(json_get(w, "progress"), "current_stage");
                for (size_t k = 0; k < ELEMENTSOF(before); k++)
                        if (streq_ptr(stage, host_stage_to_string(before[k]))) {
                                if (ret_waiting)
                                        *ret_waiting = strdup_printf("%s (current stage: %s)",
                                                                     strna(json_get_string(w, "id")), stage);
                                return false;
                        }
        }
        return true;
}

/* ---- messages ----------------------------------------------------------------------- */

char *nodes_wait_status(const char *role, char *const *ready, unsigned target)
{
        _cleanup_free_ char *names = strv_join(ready, ", ");

        if (!names)
                return NULL;
        return strdup_printf("%zu of %u %s nodes Ready%s%s%s", strv_length(ready), target, role,
                             isempty(names) ? "" : " (", names, isempty(names) ? "" : ")");
}
