/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Each manifest is a fixed skeleton (a JSON literal: the names and the
 * shape, never a value from outside) into which the values of the
 * configuration are set as json-c strings, so nothing from the command line
 * is ever spliced into text.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "cleanup.h"
#include "installer/bootstrap-plan.h"
#include "installer/controller-manifests.h"
#include "jsonutil.h"
#include "strutil.h"

#define APP_LABEL "{\"app\": \"assisted-installer-controller\"}"

void manifests_free(Manifest *m, size_t n)
{
        for (size_t i = 0; m && i < n; i++) {
                free(m[i].file);
                json_object_put(m[i].object);
        }
        free(m);
}

static json_object *skeleton(const char *text)
{
        json_object *o = NULL;

        if (json_parse(text, strlen(text), BUF_MAX_SMALL_FILE, &o, NULL) < 0)
                return NULL;
        return o;
}

/* The object at a dotted path, created as objects where missing. */
static json_object *path_object(json_object *o, const char *dotted)
{
        _cleanup_strv_free_ char **parts = NULL;

        if (strv_split(dotted, ".", &parts) < 0)
                return NULL;
        STRV_FOREACH (p, parts) {
                json_object *next = json_get(o, *p);
                if (!next) {
                        next = json_new_object();
                        if (!next || json_add(o, *p, next) < 0)
                                return NULL;
                }
                o = next;
        }
        return o;
}

static int set(json_object *o, const char *dotted_parent, const char *key, json_object *v)
{
        json_object *parent = dotted_parent ? path_object(o, dotted_parent) : o;

        if (!v)
                return -ENOMEM;
        if (!parent) {
                json_object_put(v);
                return -ENOMEM;
        }
        return json_add(parent, key, v);
}

static int set_str(json_object *o, const char *dotted_parent, const char *key, const char *s)
{
        return set(o, dotted_parent, key, json_new_string(strempty(s)));
}

static const char *bool_text(bool b)
{
        return b ? "true" : "false";
}

static int add_manifest(Manifest **l, size_t *n, const char *file, json_object *o, bool secret)
{
        Manifest *grown;

        if (!o)
                return -ENOMEM;
        grown = reallocarray(*l, *n + 1, sizeof(Manifest));
        if (!grown) {
                json_object_put(o);
                return -ENOMEM;
        }
        *l = grown;
        (*l)[*n] = (Manifest){ .file = strdup(file), .object = o, .secret = secret };
        if (!(*l)[*n].file) {
                json_object_put(o);
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

static json_object *namespace_manifest(void)
{
        /* privileged: the controller runs on the host network, mounts host
         * paths and must start before the node is fully Ready */
        return skeleton("{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": "
                        "\"" CONTROLLER_NAMESPACE "\", \"labels\": {"
                        "\"pod-security.kubernetes.io/enforce\": \"privileged\","
                        " \"pod-security.kubernetes.io/audit\": \"privileged\","
                        " \"pod-security.kubernetes.io/warn\": \"privileged\","
                        " \"security.openshift.io/scc.podSecurityLabelSync\": \"false\","
                        " \"openshift.io/run-level\": \"0\"},"
                        " \"annotations\": {\"openshift.io/node-selector\": \"\"}}}");
}

static json_object *service_account_manifest(void)
{
        return skeleton("{\"apiVersion\": \"v1\", \"kind\": \"ServiceAccount\", \"metadata\": {\"name\": "
                        "\"" CONTROLLER_NAME "\", \"namespace\": \"" CONTROLLER_NAMESPACE "\"}}");
}

/* Upstream's ClusterRole rules (deploy/assisted-installer-controller/
 * assisted-installer-controller-role.yaml at 880389d4, notes §1.2), so that
 * the upstream controller image, which a hub may keep in CONTROLLER_IMAGE
 * (packaging/containers/README.md), has every grant it uses with the Job
 * cradle's bootstrap renders: OLM subscriptions, install plans and the
 * marketplace's Jobs, the machine-config pools, the machine-approver's
 * status, the SCCs its pod and oc debug need. */
#define UPSTREAM_RULES \
        "{\"apiGroups\": [\"\"], \"resources\": [\"pods\", \"configmaps\", \"pods/log\"], \"verbs\": " \
        "[\"get\", \"list\", \"watch\"]}," \
        "{\"apiGroups\": [\"\"], \"resources\": [\"nodes\"], \"verbs\": [\"get\", \"list\", \"watch\", " \
        "\"patch\"]}," \
        "{\"apiGroups\": [\"\"], \"resources\": [\"events\"], \"verbs\": [\"create\"]}," \
        "{\"apiGroups\": [\"\"], \"resources\": [\"namespaces\"], \"verbs\": [\"patch\"]}," \
        "{\"apiGroups\": [\"certificates.k8s.io\"], \"resources\": [\"certificatesigningrequests\"], " \
        "\"verbs\": [\"get\", \"list\", \"watch\"]}," \
        "{\"apiGroups\": [\"batch\"], \"resources\": [\"jobs\"], \"verbs\": [\"get\", \"list\", " \
        "\"delete\"]}," \
        "{\"apiGroups\": [\"certificates.k8s.io\"], \"resources\": " \
        "[\"certificatesigningrequests/approval\"], \"verbs\": [\"update\"]}," \
        "{\"apiGroups\": [\"authentication.k8s.io\"], \"resources\": [\"tokenreviews\"], \"verbs\": " \
        "[\"create\"]}," \
        "{\"apiGroups\": [\"authorization.k8s.io\"], \"resources\": [\"subjectaccessreviews\"], " \
        "\"verbs\": [\"create\"]}," \
        "{\"apiGroups\": [\"config.openshift.io\"], \"resources\": [\"clusteroperators\"], \"verbs\": " \
        "[\"get\", \"create\", \"list\", \"watch\"]}," \
        "{\"apiGroups\": [\"config.openshift.io\"], \"resources\": [\"clusteroperators/status\"], " \
        "\"resourceNames\": [\"machine-approver\"], \"verbs\": [\"update\"]}," \
        "{\"apiGroups\": [\"config.openshift.io\"], \"resources\": [\"proxies\"], \"verbs\": [\"get\", " \
        "\"list\"]}," \
        "{\"apiGroups\": [\"certificates.k8s.io\"], \"resources\": [\"signers\"], \"resourceNames\": " \
        "[\"kubernetes.io/kube-apiserver-client-kubelet\", \"kubernetes.io/kubelet-serving\"], \"verbs\": " \
        "[\"approve\"]}," \
        "{\"apiGroups\": [\"operator.openshift.io\"], \"resources\": [\"etcds\", \"ingresscontrollers\"], " \
        "\"verbs\": [\"patch\"]}," \
        "{\"apiGroups\": [\"metal3.io\"], \"resources\": [\"baremetalhosts\"], \"verbs\": [\"get\", " \
        "\"list\", \"watch\", \"update\", \"patch\"]}," \
        "{\"apiGroups\": [\"metal3.io\"], \"resources\": [\"baremetalhosts/status\"], \"verbs\": " \
        "[\"get\", \"patch\", \"update\"]}," \
        "{\"apiGroups\": [\"machine.openshift.io\"], \"resources\": [\"machines\"], \"verbs\": [\"get\", " \
        "\"list\", \"watch\"]}," \
        "{\"apiGroups\": [\"metal3.io\"], \"resources\": [\"provisionings\"], \"verbs\": [\"get\", " \
        "\"list\"]}," \
        "{\"apiGroups\": [\"config.openshift.io\"], \"resources\": [\"clusterversions\"], \"verbs\": " \
        "[\"get\", \"list\"]}," \
        "{\"apiGroups\": [\"operators.coreos.com\"], \"resources\": [\"clusterserviceversions\"], " \
        "\"verbs\": [\"get\", \"list\"]}," \
        "{\"apiGroups\": [\"operators.coreos.com\"], \"resources\": [\"subscriptions\", " \
        "\"installplans\"], \"verbs\": [\"get\", \"list\", \"update\", \"delete\"]}," \
        "{\"apiGroups\": [\"\"], \"resources\": [\"services\"], \"verbs\": [\"list\", \"delete\"]}," \
        "{\"apiGroups\": [\"\"], \"resources\": [\"pods\"], \"verbs\": [\"deletecollection\"]}," \
        "{\"apiGroups\": [\"security.openshift.io\"], \"resources\": [\"securitycontextconstraints\"], " \
        "\"resourceNames\": [\"anyuid\", \"nonroot\", \"hostmount-anyuid\", " \
        "\"machine-api-termination-handler\", \"hostnetwork\", \"hostaccess\", \"node-exporter\"], " \
        "\"verbs\": [\"use\"]}," \
        "{\"apiGroups\": [\"machineconfiguration.openshift.io\"], \"resources\": [\"*\"], \"verbs\": " \
        "[\"patch\", \"get\"]},"

/* Upstream's rules, then cradle's (notes §7): nodes and their labels and
 * taints, CSR approval, cluster operators and versions, OLM,
 * BareMetalHosts and Machines, MachineConfigs, the console route, the
 * etcd operator's configuration. */
static json_object *cluster_role_manifest(void)
{
        return skeleton(
                "{\"apiVersion\": \"rbac.authorization.k8s.io/v1\", \"kind\": \"ClusterRole\", "
                "\"metadata\": "
                "{\"name\": \"" CONTROLLER_NAME "\"}, \"rules\": [" UPSTREAM_RULES
                "{\"apiGroups\": [\"\"], \"resources\": [\"nodes\"], \"verbs\": [\"get\", \"list\", "
                "\"watch\", "
                "\"patch\", \"update\"]},"
                "{\"apiGroups\": [\"\"], \"resources\": [\"pods\", \"pods/log\", \"configmaps\", "
                "\"services\", "
                "\"namespaces\", \"secrets\"], \"verbs\": [\"get\", \"list\", \"watch\"]},"
                "{\"apiGroups\": [\"\"], \"resources\": [\"pods\"], \"verbs\": [\"delete\", "
                "\"deletecollection\"]},"
                "{\"apiGroups\": [\"\"], \"resources\": [\"services\"], \"verbs\": [\"delete\"]},"
                "{\"apiGroups\": [\"\"], \"resources\": [\"namespaces\"], \"verbs\": [\"patch\"]},"
                "{\"apiGroups\": [\"\"], \"resources\": [\"events\"], \"verbs\": [\"create\", \"patch\"]},"
                "{\"apiGroups\": [\"certificates.k8s.io\"], \"resources\": "
                "[\"certificatesigningrequests\"], "
                "\"verbs\": [\"get\", \"list\", \"watch\"]},"
                "{\"apiGroups\": [\"certificates.k8s.io\"], \"resources\": "
                "[\"certificatesigningrequests/approval\"], \"verbs\": [\"update\"]},"
                "{\"apiGroups\": [\"certificates.k8s.io\"], \"resources\": [\"signers\"], "
                "\"resourceNames\": "
                "[\"kubernetes.io/kube-apiserver-client-kubelet\", \"kubernetes.io/kubelet-serving\"], "
                "\"verbs\": "
                "[\"approve\"]},"
                "{\"apiGroups\": [\"config.openshift.io\"], \"resources\": [\"clusteroperators\", "
                "\"clusterversions\", \"proxies\", \"infrastructures\"], \"verbs\": [\"get\", \"list\", "
                "\"watch\"]},"
                "{\"apiGroups\": [\"operator.openshift.io\"], \"resources\": [\"etcds\"], \"verbs\": "
                "[\"get\", "
                "\"patch\"]},"
                "{\"apiGroups\": [\"machineconfiguration.openshift.io\"], \"resources\": "
                "[\"machineconfigs\", "
                "\"machineconfigpools\"], \"verbs\": [\"get\", \"list\"]},"
                "{\"apiGroups\": [\"metal3.io\"], \"resources\": [\"baremetalhosts\", "
                "\"baremetalhosts/status\"], "
                "\"verbs\": [\"get\", \"list\", \"watch\", \"patch\", \"update\"]},"
                "{\"apiGroups\": [\"metal3.io\"], \"resources\": [\"provisionings\"], \"verbs\": [\"get\", "
                "\"list\"]},"
                "{\"apiGroups\": [\"machine.openshift.io\"], \"resources\": [\"machines\"], \"verbs\": "
                "[\"get\", "
                "\"list\", \"watch\"]},"
                "{\"apiGroups\": [\"operators.coreos.com\"], \"resources\": [\"subscriptions\", "
                "\"clusterserviceversions\"], \"verbs\": [\"get\", \"list\"]},"
                "{\"apiGroups\": [\"route.openshift.io\"], \"resources\": [\"routes\"], \"verbs\": "
                "[\"get\", "
                "\"list\"]},"
                "{\"apiGroups\": [\"security.openshift.io\"], \"resources\": "
                "[\"securitycontextconstraints\"], "
                "\"resourceNames\": [\"privileged\", \"hostnetwork\", \"hostaccess\"], \"verbs\": [\"use\"]}"
                "]}");
}

static json_object *binding_manifest(bool cluster)
{
        json_object *o =
                skeleton("{\"apiVersion\": \"rbac.authorization.k8s.io/v1\", \"metadata\": {\"name\": "
                         "\"" CONTROLLER_NAME "\"}, \"roleRef\": {\"apiGroup\": "
                         "\"rbac.authorization.k8s.io\", \"name\": \"" CONTROLLER_NAME "\"}, "
                         "\"subjects\": [{\"kind\": \"ServiceAccount\", \"name\": \"" CONTROLLER_NAME "\", "
                         "\"namespace\": \"" CONTROLLER_NAMESPACE "\"}]}");

        if (!o)
                return NULL;
        if (set_str(o, NULL, "kind", cluster ? "ClusterRoleBinding" : "RoleBinding") < 0 ||
            set_str(o, "roleRef", "kind", cluster ? "ClusterRole" : "Role") < 0 ||
            (!cluster && set_str(o, "metadata", "namespace", CONTROLLER_NAMESPACE) < 0)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* Its own namespace: events it creates (AssistedControllerIsReady), its
 * pods, config maps and secrets, its Job. */
static json_object *role_manifest(void)
{
        return skeleton(
                "{\"apiVersion\": \"rbac.authorization.k8s.io/v1\", \"kind\": \"Role\", \"metadata\": "
                "{\"name\": \"" CONTROLLER_NAME "\", \"namespace\": \"" CONTROLLER_NAMESPACE "\"}, "
                "\"rules\": ["
                "{\"apiGroups\": [\"\"], \"resources\": [\"events\"], \"verbs\": [\"create\", \"get\", "
                "\"list\", \"patch\"]},"
                "{\"apiGroups\": [\"\"], \"resources\": [\"pods\", \"pods/log\", \"configmaps\", "
                "\"secrets\"], \"verbs\": [\"get\", \"list\", \"watch\"]},"
                "{\"apiGroups\": [\"batch\"], \"resources\": [\"jobs\"], \"verbs\": [\"get\", \"list\", "
                "\"delete\"]}"
                "]}");
}

/* The controller's pod runs on the host network (where NetworkPolicy does
 * not apply); for clusters that deny by default, it may reach out and
 * serves nothing. */
static json_object *network_policy_manifest(void)
{
        return skeleton(
                "{\"apiVersion\": \"networking.k8s.io/v1\", \"kind\": \"NetworkPolicy\", \"metadata\": "
                "{\"name\": \"" CONTROLLER_NAME "\", \"namespace\": \"" CONTROLLER_NAMESPACE "\"}, "
                "\"spec\": {\"podSelector\": {\"matchLabels\": " APP_LABEL "}, \"policyTypes\": "
                "[\"Ingress\", \"Egress\"], \"ingress\": [], \"egress\": [{}]}}");
}

static json_object *configmap_manifest(const ControllerManifestsInput *in)
{
        json_object *o =
                skeleton("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": "
                         "\"" CONTROLLER_CONFIGMAP "\", \"namespace\": \"" CONTROLLER_NAMESPACE "\", "
                         "\"labels\": " APP_LABEL "}, \"data\": {}}");
        _cleanup_free_ char *count = strdup_printf("%d", in->control_plane_count);

        if (!o || !count || set_str(o, "data", "cluster-id", in->cluster_id) < 0 ||
            set_str(o, "data", "inventory-url", in->inventory_url) < 0 ||
            set_str(o, "data", "skip-cert-verification", bool_text(in->skip_cert_verification)) < 0 ||
            set_str(o, "data", "ca-cert-path", in->ca_cert_path) < 0 ||
            set_str(o, "data", "check-cluster-version", bool_text(in->check_cluster_version)) < 0 ||
            set_str(o, "data", "control-plane-count", count) < 0 ||
            set_str(o, "data", "must-gather-image", in->must_gather_image) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *secret_manifest(const ControllerManifestsInput *in)
{
        json_object *o = skeleton("{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"type\": \"Opaque\", "
                                  "\"metadata\": {\"name\": \"" CONTROLLER_SECRET "\", \"namespace\": "
                                  "\"" CONTROLLER_NAMESPACE "\", \"labels\": " APP_LABEL "}, \"data\": {}}");
        _cleanup_free_ char *b64 = NULL;

        if (!o)
                return NULL;
        b64 = base64_encode(strempty(in->pull_secret_token), strlen(strempty(in->pull_secret_token)));
        if (!b64 || set_str(o, "data", "pull-secret-token", b64) < 0) {
                json_object_put(o);
                return NULL;
        }
        erase_and_free(TAKE_PTR(b64));
        return o;
}

static int append(json_object *array, json_object *v)
{
        if (!v)
                return -ENOMEM;
        return json_append(array, v);
}

static json_object *env_from(const char *name, const char *kind, const char *ref, const char *key,
                             bool optional)
{
        json_object *e = skeleton("{\"valueFrom\": {}}");
        json_object *sel = json_new_object();

        if (!e || !sel || set_str(e, NULL, "name", name) < 0 || set_str(sel, NULL, "name", ref) < 0 ||
            set_str(sel, NULL, "key", key) < 0 ||
            (optional && set(sel, NULL, "optional", json_new_bool(true)) < 0) ||
            set(e, "valueFrom", kind, TAKE_PTR(sel)) < 0) {
                json_object_put(sel);
                json_object_put(e);
                return NULL;
        }
        return e;
}

static json_object *env_value(const char *name, const char *value)
{
        json_object *e = json_new_object();

        if (!e || set_str(e, NULL, "name", name) < 0 || set_str(e, NULL, "value", value) < 0) {
                json_object_put(e);
                return NULL;
        }
        return e;
}

/* Upstream's order and names (deploy/assisted-installer-controller/
 * assisted-installer-controller-pod.yaml.template): the token is no
 * variable, it is the file of the pull-secret volume */
static int job_env(json_object *env, const ControllerManifestsInput *in)
{
        const char *cm = "configMapKeyRef";

        if (append(env, env_from("CLUSTER_ID", cm, CONTROLLER_CONFIGMAP, "cluster-id", false)) < 0 ||
            append(env, env_from("INVENTORY_URL", cm, CONTROLLER_CONFIGMAP, "inventory-url", false)) < 0 ||
            append(env, env_from("CA_CERT_PATH", cm, CONTROLLER_CONFIGMAP, "ca-cert-path", true)) < 0 ||
            append(env, env_from("SKIP_CERT_VERIFICATION", cm, CONTROLLER_CONFIGMAP,
                                 "skip-cert-verification", true)) < 0 ||
            append(env, env_value("OPENSHIFT_VERSION", in->openshift_version)) < 0 ||
            append(env, env_value("NOTIFY_NUM_REBOOTS", bool_text(in->notify_num_reboots))) < 0 ||
            append(env, env_from("CONTROL_PLANE_COUNT", cm, CONTROLLER_CONFIGMAP, "control-plane-count",
                                 true)) < 0 ||
            append(env, env_from("CHECK_CLUSTER_VERSION", cm, CONTROLLER_CONFIGMAP, "check-cluster-version",
                                 true)) < 0 ||
            append(env, env_from("MUST_GATHER_IMAGE", cm, CONTROLLER_CONFIGMAP, "must-gather-image", true)) <
                    0)
                return -ENOMEM;
        return 0;
}

/* A volume (its source a JSON literal, or a host path) and its mount. */
static int add_volume(json_object *spec, json_object *container, const char *name, json_object *volume,
                      const char *host_path, const char *mount_path)
{
        json_object *m = json_new_object();

        if (!volume || !m || set_str(volume, NULL, "name", name) < 0 ||
            (host_path && set_str(volume, "hostPath", "path", host_path) < 0) ||
            set_str(m, NULL, "name", name) < 0 || set_str(m, NULL, "mountPath", mount_path) < 0) {
                json_object_put(volume);
                json_object_put(m);
                return -ENOMEM;
        }
        if (json_append(json_get(spec, "volumes"), volume) < 0) {
                json_object_put(m);
                return -ENOMEM;
        }
        return json_append(json_get(container, "volumeMounts"), m);
}

static int host_path_volume(json_object *spec, json_object *container, const char *name,
                            const char *host_path, const char *mount_path)
{
        return add_volume(spec, container, name, json_new_object(), host_path, mount_path);
}

/* The Job as upstream renders it: no command (the image's entrypoint,
 * /usr/bin/assisted-installer-controller, which is cradle in cradle's
 * image), the token as the file CONTROLLER_TOKEN_FILE (mode 0400), the
 * host's CA bundle and resolver files for the controller's diagnostics,
 * and on a single node the bootstrap secrets, whose kubeconfig it uses
 * before the node is Ready. */
static json_object *job_manifest(const ControllerManifestsInput *in)
{
        _cleanup_(json_object_putp) json_object *o = skeleton(
                "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": "
                "\"" CONTROLLER_NAME "\", \"namespace\": \"" CONTROLLER_NAMESPACE "\"}, "
                "\"spec\": {\"backoffLimit\": 100, \"template\": {\"metadata\": {\"labels\": " APP_LABEL
                "}, "
                "\"spec\": {\"containers\": [{\"name\": \"" CONTROLLER_NAME "\", \"imagePullPolicy\": "
                "\"IfNotPresent\", \"env\": [], \"volumeMounts\": []}], "
                "\"restartPolicy\": \"OnFailure\", \"hostNetwork\": true, "
                "\"nodeSelector\": {\"node-role.kubernetes.io/master\": \"\"}, "
                "\"serviceAccountName\": \"" CONTROLLER_NAME "\", "
                "\"tolerations\": [{\"key\": \"node-role.kubernetes.io/master\", \"effect\": "
                "\"NoSchedule\", "
                "\"operator\": \"Exists\"}], \"volumes\": []}}}}");
        json_object *spec = json_get_path(o, "spec.template.spec");
        json_object *container = json_object_array_get_idx(json_get(spec, "containers"), 0);
        _cleanup_strv_free_ char **ips = NULL;

        if (!o || !spec || !container)
                return NULL;
        if (set_str(container, NULL, "image", in->controller_image) < 0 ||
            job_env(json_get(container, "env"), in) < 0)
                return NULL;
        if (strv_split(strempty(in->service_ips), ", ", &ips) < 0)
                return NULL;
        if (ips && *ips) {
                json_object *aliases = json_new_array();
                if (set(spec, NULL, "hostAliases", aliases) < 0)
                        return NULL;
                STRV_FOREACH (ip, ips) {
                        json_object *a = skeleton("{\"hostnames\": [\"assisted-api.local.openshift.io\"]}");
                        if (set_str(a, NULL, "ip", *ip) < 0 || json_append(aliases, a) < 0)
                                return NULL;
                }
        }
        if (host_path_volume(spec, container, "host-ca-bundle", "/etc/pki", "/etc/pki") < 0 ||
            host_path_volume(spec, container, "host-var-run-resolv-conf",
                             "/var/run/NetworkManager/resolv.conf", "/tmp/var-run-resolv.conf") < 0 ||
            host_path_volume(spec, container, "host-resolv-conf", "/etc/resolv.conf",
                             "/tmp/host-resolv.conf") < 0 ||
            /* mode 0400 (256): the token is for the controller alone */
            add_volume(spec, container, "pull-secret",
                       skeleton("{\"secret\": {\"secretName\": \"" CONTROLLER_SECRET "\", \"items\": "
                                "[{\"key\": \"pull-secret-token\", \"path\": \"token\", \"mode\": 256}]}}"),
                       NULL, CONTROLLER_TOKEN_DIR) < 0)
                return NULL;
        if (in->control_plane_count == 1) {
                /* single node: the controller starts on the one node before
                 * it is Ready, with the bootstrap's kubeconfig */
                json_object *tol = json_get(spec, "tolerations");
                if (append(tol, skeleton("{\"effect\": \"NoSchedule\", \"key\": "
                                         "\"node.kubernetes.io/not-ready\", \"operator\": \"Exists\"}")) <
                            0 ||
                    append(tol, skeleton("{\"effect\": \"NoSchedule\", \"key\": "
                                         "\"node.kubernetes.io/network-unavailable\", \"operator\": "
                                         "\"Exists\"}")) < 0 ||
                    host_path_volume(spec, container, "sno-bootstrap-files",
                                     "/etc/kubernetes/bootstrap-secrets", CONTROLLER_SNO_SECRETS_DIR) < 0)
                        return NULL;
        }
        if (!isempty(in->ca_cert_path) && host_path_volume(spec, container, "service-ca-cert-config",
                                                           in->ca_cert_path, in->ca_cert_path) < 0)
                return NULL;
        return TAKE_PTR(o);
}

int controller_manifests(const ControllerManifestsInput *in, Manifest **ret, size_t *ret_n)
{
        Manifest *l = NULL;
        size_t n = 0;
        int r;

        if ((r = add_manifest(&l, &n, "assisted-installer-controller-nm.yaml", namespace_manifest(),
                              false)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-sa.yaml", service_account_manifest(),
                              false)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-cluster-role.yaml",
                              cluster_role_manifest(), false)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-cluster-role-binding.yaml",
                              binding_manifest(true), false)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-role.yaml", role_manifest(), false)) <
                    0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-role-binding.yaml",
                              binding_manifest(false), false)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-network-policy.yaml",
                              network_policy_manifest(), false)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-cm.yaml", configmap_manifest(in),
                              false)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-secret.yaml", secret_manifest(in),
                              true)) < 0 ||
            (r = add_manifest(&l, &n, "assisted-installer-controller-pod.yaml", job_manifest(in), false)) <
                    0) {
                manifests_free(l, n);
                return r;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

json_object *ssh_machine_config(const char *public_key)
{
        _cleanup_(json_object_putp) json_object *o = skeleton(
                "{\"apiVersion\": \"machineconfiguration.openshift.io/v1\", \"kind\": \"MachineConfig\", "
                "\"metadata\": {\"name\": \"" SSH_MACHINE_CONFIG "\", \"labels\": "
                "{\"machineconfiguration.openshift.io/role\": \"master\"}}, \"spec\": {\"config\": "
                "{\"ignition\": "
                "{\"version\": \"3.1.0\"}, \"passwd\": {\"users\": [{\"name\": \"core\", "
                "\"sshAuthorizedKeys\": "
                "[]}]}}}}");
        json_object *users = json_get_path(o, "spec.config.passwd.users");
        _cleanup_free_ char *key = strdup(strempty(public_key));

        if (!o || !users || !key)
                return NULL;
        strstrip(key);
        if (json_append(json_get(json_object_array_get_idx(users, 0), "sshAuthorizedKeys"),
                        json_new_string(key)) < 0)
                return NULL;
        return TAKE_PTR(o);
}
