/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "installer/cluster-view.h"
#include "jsonutil.h"
#include "strutil.h"

const KubeResource kube_resource_machineconfigs =
        KUBE_RESOURCE("machineconfiguration.openshift.io", "v1", "machineconfigs", "MachineConfig", false);
const KubeResource kube_resource_etcds =
        KUBE_RESOURCE("operator.openshift.io", "v1", "etcds", "Etcd", false);

#define DRY_MACHINE_CONFIG "rendered-master-dry-run"

struct ClusterView {
        KubeClient *kube; /* NULL in dry run */
        DryClusterHost *hosts;
        size_t n_hosts;
        int replicas;
};

int cluster_view_new_kube(const char *kubeconfig, ClusterView **ret, char **reterr)
{
        _cleanup_(cluster_view_freep) ClusterView *v = calloc(1, sizeof(ClusterView));
        int r;

        if (!v)
                return -ENOMEM;
        r = kube_client_new_from_kubeconfig(kubeconfig, NULL, &v->kube, reterr);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

int cluster_view_new_dry(const DryClusterHost *hosts, size_t n, int replicas, ClusterView **ret)
{
        _cleanup_(cluster_view_freep) ClusterView *v = calloc(1, sizeof(ClusterView));

        if (!v)
                return -ENOMEM;
        v->hosts = calloc(n + 1, sizeof(DryClusterHost));
        if (!v->hosts)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                v->hosts[i] = (DryClusterHost){
                        .hostname = strdup(strempty(hosts[i].hostname)),
                        .ip = strdup(strempty(hosts[i].ip)),
                        .reboot_marker_path = strdup(strempty(hosts[i].reboot_marker_path)),
                };
                v->n_hosts++;
                if (!v->hosts[i].hostname || !v->hosts[i].ip || !v->hosts[i].reboot_marker_path)
                        return -ENOMEM;
        }
        v->replicas = replicas;
        *ret = TAKE_PTR(v);
        return 0;
}

ClusterView *cluster_view_free(ClusterView *v)
{
        if (!v)
                return NULL;
        kube_client_free(v->kube);
        dry_cluster_hosts_free(v->hosts, v->n_hosts);
        free(v);
        return NULL;
}

bool cluster_view_is_dry(const ClusterView *v)
{
        return !v->kube;
}

/* ---- dry run ------------------------------------------------------------ */

static json_object *literal(const char *text)
{
        json_object *o = NULL;

        (void)json_parse(text, strlen(text), 1u << 20, &o, NULL);
        return o;
}

static int dry_answer(json_object *o, json_object **ret)
{
        if (!o)
                return -ENOMEM;
        if (ret)
                *ret = o;
        else
                json_object_put(o);
        return 0;
}

static bool rebooted(const DryClusterHost *h)
{
        struct stat st;

        return !isempty(h->reboot_marker_path) && stat(h->reboot_marker_path, &st) == 0;
}

static json_object *dry_node(const DryClusterHost *h)
{
        json_object *n =
                literal("{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"labels\": "
                        "{\"node-role.kubernetes.io/master\": \"\"}, \"annotations\": {"
                        "\"" MC_CURRENT_CONFIG "\": \"" DRY_MACHINE_CONFIG "\", \"" MC_DESIRED_CONFIG
                        "\": \"" DRY_MACHINE_CONFIG "\"}}, \"status\": {\"conditions\": [{\"type\": "
                        "\"Ready\", \"status\": \"True\"}], \"addresses\": []}}");
        json_object *addr = json_new_object();

        if (!n || !addr || json_add_string(json_get(n, "metadata"), "name", h->hostname) < 0 ||
            json_add_string(addr, "type", "InternalIP") < 0 || json_add_string(addr, "address", h->ip) < 0 ||
            json_append(json_get_path(n, "status.addresses"), addr) < 0) {
                json_object_put(addr);
                json_object_put(n);
                return NULL;
        }
        return n;
}

static int dry_list_nodes(ClusterView *v, const char *label_selector, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *list = literal("{\"kind\": \"NodeList\", \"items\": []}");

        if (!list)
                return -ENOMEM;
        /* every rebooted host is a master, as upstream's mock lists them */
        if (streq_ptr(label_selector, "node-role.kubernetes.io/master"))
                for (size_t i = 0; i < v->n_hosts; i++) {
                        if (!rebooted(&v->hosts[i]))
                                continue;
                        if (json_append(json_get(list, "items"), dry_node(&v->hosts[i])) < 0)
                                return -ENOMEM;
                }
        return dry_answer(TAKE_PTR(list), ret);
}

static int dry_configmap(ClusterView *v, const char *ns, const char *name, json_object **ret,
                         KubeStatus *err)
{
        _cleanup_(json_object_putp) json_object *cm = literal("{\"kind\": \"ConfigMap\", \"data\": {}}");

        if (!cm)
                return -ENOMEM;
        if (streq(ns, "kube-system") && streq(name, "cluster-config-v1")) {
                _cleanup_free_ char *ic = strdup_printf("apiVersion: v1\ncontrolPlane:\n  name: master\n  "
                                                        "replicas: %d\n",
                                                        v->replicas);
                if (!ic || json_add_string(json_get(cm, "data"), "install-config", ic) < 0)
                        return -ENOMEM;
                return dry_answer(TAKE_PTR(cm), ret);
        }
        if (streq(ns, "openshift-config") && streq(name, "openshift-install-manifests")) {
                if (json_add_string(json_get(cm, "data"), "invoker", INVOKER_DEFAULT) < 0)
                        return -ENOMEM;
                return dry_answer(TAKE_PTR(cm), ret);
        }
        if (err) {
                err->error = -ENOENT;
                err->code = 404;
                err->message = strdup_printf("dry run: no configmap %s/%s", ns, name);
        }
        return -ENOENT;
}

/* ---- the interface ------------------------------------------------------- */

int cluster_view_get_configmap(ClusterView *v, const char *ns, const char *name, json_object **ret,
                               KubeStatus *err)
{
        if (!v->kube)
                return dry_configmap(v, ns, name, ret, err);
        return kube_get(v->kube, &kube_resource_configmaps, ns, name, ret, err);
}

int cluster_view_list_nodes(ClusterView *v, const char *label_selector, json_object **ret, KubeStatus *err)
{
        if (!v->kube)
                return dry_list_nodes(v, label_selector, ret);
        return kube_list_all(v->kube, &kube_resource_nodes, NULL,
                             &(KubeListOptions){ .label_selector = label_selector }, ret, err);
}

int cluster_view_get_node(ClusterView *v, const char *name, json_object **ret, KubeStatus *err)
{
        if (!v->kube) {
                for (size_t i = 0; i < v->n_hosts; i++)
                        if (streq(v->hosts[i].hostname, name) && rebooted(&v->hosts[i]))
                                return dry_answer(dry_node(&v->hosts[i]), ret);
                return -ENOENT;
        }
        return kube_get(v->kube, &kube_resource_nodes, NULL, name, ret, err);
}

int cluster_view_patch_node(ClusterView *v, const char *name, json_object *json_patch, KubeStatus *err)
{
        if (!v->kube)
                return 0;
        return kube_patch_json(v->kube, &kube_resource_nodes, NULL, name, json_patch, NULL, err);
}

int cluster_view_list_events(ClusterView *v, const char *ns, json_object **ret, KubeStatus *err)
{
        if (!v->kube)
                return dry_answer(literal("{\"kind\": \"EventList\", \"items\": [{\"metadata\": {\"name\": "
                                          "\"" CONTROLLER_READY_EVENT
                                          "\", \"uid\": \"dry-run\"}, \"message\": "
                                          "\"dry run: the installer looks for this event to know the "
                                          "controller started\"}]}"),
                                  ret);
        return kube_list_all(v->kube, &kube_resource_events, ns, NULL, ret, err);
}

int cluster_view_list_pods(ClusterView *v, const char *ns, const char *label_selector, json_object **ret,
                           KubeStatus *err)
{
        if (!v->kube)
                return dry_answer(literal("{\"kind\": \"PodList\", \"items\": [{\"metadata\": {\"name\": "
                                          "\"" CONTROLLER_NAME
                                          "-dry\"}, \"status\": {\"phase\": \"Running\"}}]}"),
                                  ret);
        return kube_list_all(v->kube, &kube_resource_pods, ns,
                             &(KubeListOptions){ .label_selector = label_selector }, ret, err);
}

int cluster_view_pod_logs(ClusterView *v, const char *ns, const char *name, int64_t since_seconds,
                          char **ret, KubeStatus *err)
{
        if (!v->kube) {
                *ret = strdup("Dry\nDry\nDry\nDry\n");
                return *ret ? 0 : -ENOMEM;
        }
        return kube_pod_logs(v->kube, ns, name, &(KubePodLogOptions){ .since_seconds = since_seconds }, ret,
                             err);
}

int cluster_view_machineconfig_exists(ClusterView *v, const char *name, KubeStatus *err)
{
        if (!v->kube)
                return streq(name, DRY_MACHINE_CONFIG) ? 0 : -ENOENT;
        return kube_get(v->kube, &kube_resource_machineconfigs, NULL, name, NULL, err);
}

int cluster_view_patch_etcd(ClusterView *v, json_object *merge_patch, KubeStatus *err)
{
        if (!v->kube)
                return 0;
        return kube_patch_merge(v->kube, &kube_resource_etcds, NULL, "cluster", merge_patch, NULL, err);
}
