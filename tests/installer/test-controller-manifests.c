/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The assisted-installer-controller manifests and the ssh MachineConfig
 * (installer/controller-manifests.h): every object a valid Kubernetes
 * object of its kind (the fields kube-apiserver's validation requires),
 * the configuration in the right places, the single-node variants, and the
 * YAML they are written as reads back to the same strings.
 * tests/installer/test_bootstrap.py also creates them with dryRun=All on a
 * real cluster when CRADLE_TEST_KUBECONFIG names one.
 */
#include <json-c/json.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "installer/bootstrap-plan.h"
#include "installer/controller-manifests.h"
#include "jsonutil.h"
#include "strutil.h"
#include "tests.h"
#include "yamlutil.h"

/* the length of an array, 0 for none */
static size_t alen(json_object *a)
{
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static const ControllerManifestsInput multi = {
        .cluster_id = "fb127e4c-aa1c-4cf4-898f-aadb690c4ded",
        .inventory_url = "http://203.0.113.1:8090",
        .skip_cert_verification = true,
        .check_cluster_version = false,
        .control_plane_count = 3,
        .must_gather_image = "{\"cnv\": \"quay.io/x/cnv-must-gather:1\"}",
        .pull_secret_token = "t0ken-secret",
        .controller_image = "quay.io/edge-infrastructure/assisted-installer-controller:latest",
        .openshift_version = "4.13.18",
        .service_ips = "203.0.113.1,2001:db8::1",
        .notify_num_reboots = true,
};

/* The checks kube-apiserver's validation makes that a wrong manifest would
 * fail, per kind. */
static void assert_valid_object(json_object *o)
{
        static const char *const namespaced[] = { "ServiceAccount", "Role",   "RoleBinding", "NetworkPolicy",
                                                  "ConfigMap",      "Secret", "Job",         NULL };
        const char *kind = json_get_string(o, "kind");
        json_object *meta = json_get(o, "metadata");

        ASSERT_NOT_NULL(json_get_string(o, "apiVersion"));
        ASSERT_NOT_NULL(kind);
        ASSERT_NOT_NULL(json_get_string(meta, "name"));
        if (strv_contains((char **)namespaced, kind))
                ASSERT_STREQ(json_get_string(meta, "namespace"), CONTROLLER_NAMESPACE);
        else
                ASSERT_NULL(json_get(meta, "namespace"));

        if (streq(kind, "Job")) {
                json_object *spec = json_get_path(o, "spec.template.spec");
                json_object *c = json_object_array_get_idx(json_get(spec, "containers"), 0);
                const char *rp = json_get_string(spec, "restartPolicy");

                ASSERT_STREQ(json_get_string(o, "apiVersion"), "batch/v1");
                ASSERT_NOT_NULL(c);
                ASSERT_NOT_NULL(json_get_string(c, "name"));
                ASSERT_NOT_NULL(json_get_string(c, "image"));
                ASSERT_TRUE(streq_ptr(rp, "OnFailure") || streq_ptr(rp, "Never"));
                /* every env entry has a name and exactly one of value/valueFrom */
                for (size_t i = 0; i < alen(json_get(c, "env")); i++) {
                        json_object *e = json_object_array_get_idx(json_get(c, "env"), i);
                        ASSERT_NOT_NULL(json_get_string(e, "name"));
                        ASSERT_TRUE(!!json_get(e, "value") != !!json_get(e, "valueFrom"));
                }
                /* every mount has its volume */
                for (size_t i = 0; i < alen(json_get(c, "volumeMounts")); i++) {
                        const char *name = json_get_string(
                                json_object_array_get_idx(json_get(c, "volumeMounts"), i), "name");
                        bool found = false;
                        for (size_t k = 0; k < alen(json_get(spec, "volumes")); k++)
                                found |= streq_ptr(json_get_string(json_object_array_get_idx(
                                                                           json_get(spec, "volumes"), k),
                                                                   "name"),
                                                   name);
                        ASSERT_TRUE(found);
                }
        } else if (streq(kind, "Role") || streq(kind, "ClusterRole")) {
                json_object *rules = json_get(o, "rules");
                ASSERT_GE(alen(rules), 1u);
                for (size_t i = 0; i < alen(rules); i++) {
                        json_object *r = json_object_array_get_idx(rules, i);
                        ASSERT_GE(alen(json_get(r, "verbs")), 1u);
                        ASSERT_GE(alen(json_get(r, "apiGroups")), 1u);
                        ASSERT_GE(alen(json_get(r, "resources")), 1u);
                }
        } else if (streq(kind, "RoleBinding") || streq(kind, "ClusterRoleBinding")) {
                json_object *ref = json_get(o, "roleRef");
                ASSERT_STREQ(json_get_string(ref, "apiGroup"), "rbac.authorization.k8s.io");
                ASSERT_STREQ(json_get_string(ref, "kind"),
                             streq(kind, "RoleBinding") ? "Role" : "ClusterRole");
                ASSERT_STREQ(json_get_string(ref, "name"), CONTROLLER_NAME);
                ASSERT_STREQ(
                        json_get_string(json_object_array_get_idx(json_get(o, "subjects"), 0), "namespace"),
                        CONTROLLER_NAMESPACE);
        } else if (streq(kind, "NetworkPolicy")) {
                ASSERT_NOT_NULL(json_get_path(o, "spec.podSelector"));
        } else if (streq(kind, "ConfigMap")) {
                json_object *data = json_get(o, "data");
                json_object_object_foreach (data, k, v) {
                        (void)k;
                        ASSERT_TRUE(json_object_is_type(v, json_type_string));
                }
        }
}

static json_object *find(Manifest *m, size_t n, const char *kind)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(json_get_string(m[i].object, "kind"), kind))
                        return m[i].object;
        test_fail(__FILE__, __LINE__, "no %s manifest", kind);
}

static const char *env_value(json_object *job, const char *name)
{
        json_object *env = json_get(
                json_object_array_get_idx(json_get_path(job, "spec.template.spec.containers"), 0), "env");

        for (size_t i = 0; i < alen(env); i++) {
                json_object *e = json_object_array_get_idx(env, i);
                if (streq_ptr(json_get_string(e, "name"), name))
                        return json_get_string(e, "value")
                                       ? json_get_string(e, "value")
                                       : json_get_string(
                                                 json_get_path(e, "valueFrom.configMapKeyRef")
                                                         ?: json_get_path(e, "valueFrom.secretKeyRef"),
                                                 "key");
        }
        return NULL;
}

/*
 * The Job upstream's installer renders from its template
 * (deploy/assisted-installer-controller/assisted-installer-controller-pod.yaml.template
 * at 880389d4, notes §1.2) for the inputs above, field for field: no
 * command (the image's entrypoint), the token only as the file of the
 * pull-secret volume (mode 0400 = 256), the host's CA bundle and resolver
 * files, the single node's tolerations and bootstrap secrets, the CA file
 * from the host.
 */
#define UPSTREAM_ENV(version, reboots) \
        "[{\"name\": \"CLUSTER_ID\", \"valueFrom\": {\"configMapKeyRef\": {\"name\": " \
        "\"assisted-installer-controller-config\", \"key\": \"cluster-id\"}}}," \
        " {\"name\": \"INVENTORY_URL\", \"valueFrom\": {\"configMapKeyRef\": {\"name\": " \
        "\"assisted-installer-controller-config\", \"key\": \"inventory-url\"}}}," \
        " {\"name\": \"CA_CERT_PATH\", \"valueFrom\": {\"configMapKeyRef\": {\"name\": " \
        "\"assisted-installer-controller-config\", \"key\": \"ca-cert-path\", \"optional\": true}}}," \
        " {\"name\": \"SKIP_CERT_VERIFICATION\", \"valueFrom\": {\"configMapKeyRef\": {\"name\": " \
        "\"assisted-installer-controller-config\", \"key\": \"skip-cert-verification\", \"optional\": " \
        "true}}}," \
        " {\"name\": \"OPENSHIFT_VERSION\", \"value\": \"" version "\"}," \
        " {\"name\": \"NOTIFY_NUM_REBOOTS\", \"value\": \"" reboots "\"}," \
        " {\"name\": \"CONTROL_PLANE_COUNT\", \"valueFrom\": {\"configMapKeyRef\": {\"name\": " \
        "\"assisted-installer-controller-config\", \"key\": \"control-plane-count\", \"optional\": " \
        "true}}}," \
        " {\"name\": \"CHECK_CLUSTER_VERSION\", \"valueFrom\": {\"configMapKeyRef\": {\"name\": " \
        "\"assisted-installer-controller-config\", \"key\": \"check-cluster-version\", \"optional\": " \
        "true}}}," \
        " {\"name\": \"MUST_GATHER_IMAGE\", \"valueFrom\": {\"configMapKeyRef\": {\"name\": " \
        "\"assisted-installer-controller-config\", \"key\": \"must-gather-image\", \"optional\": true}}}]"
#define UPSTREAM_MOUNTS \
        "{\"name\": \"host-ca-bundle\", \"mountPath\": \"/etc/pki\"}," \
        " {\"name\": \"host-var-run-resolv-conf\", \"mountPath\": \"/tmp/var-run-resolv.conf\"}," \
        " {\"name\": \"host-resolv-conf\", \"mountPath\": \"/tmp/host-resolv.conf\"}," \
        " {\"name\": \"pull-secret\", \"mountPath\": \"/etc/assisted-installer-controller\"}"
#define UPSTREAM_VOLUMES \
        "{\"name\": \"host-ca-bundle\", \"hostPath\": {\"path\": \"/etc/pki\"}}," \
        " {\"name\": \"host-var-run-resolv-conf\", \"hostPath\": {\"path\": " \
        "\"/var/run/NetworkManager/resolv.conf\"}}," \
        " {\"name\": \"host-resolv-conf\", \"hostPath\": {\"path\": \"/etc/resolv.conf\"}}," \
        " {\"name\": \"pull-secret\", \"secret\": {\"secretName\": " \
        "\"assisted-installer-controller-secret\", " \
        "\"items\": [{\"key\": \"pull-secret-token\", \"path\": \"token\", \"mode\": 256}]}}"
#define UPSTREAM_JOB(aliases, image, env, mounts, tolerations, volumes) \
        "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": " \
        "\"assisted-installer-controller\", \"namespace\": \"assisted-installer\"}, \"spec\": " \
        "{\"backoffLimit\": 100, \"template\": {\"metadata\": {\"labels\": {\"app\": " \
        "\"assisted-installer-controller\"}}, \"spec\": {" aliases "\"containers\": [{\"name\": " \
        "\"assisted-installer-controller\", \"image\": \"" image "\", \"imagePullPolicy\": " \
        "\"IfNotPresent\", \"env\": " env ", \"volumeMounts\": [" mounts "]}], \"restartPolicy\": " \
        "\"OnFailure\", \"hostNetwork\": true, \"nodeSelector\": {\"node-role.kubernetes.io/master\": " \
        "\"\"}, \"serviceAccountName\": \"assisted-installer-controller\", \"tolerations\": [{\"key\": " \
        "\"node-role.kubernetes.io/master\", \"effect\": \"NoSchedule\", \"operator\": " \
        "\"Exists\"}" tolerations "], \"volumes\": [" volumes "]}}}}"

static const char UPSTREAM_JOB_MULTI[] = UPSTREAM_JOB(
        "\"hostAliases\": [{\"ip\": \"203.0.113.1\", \"hostnames\": [\"assisted-api.local.openshift.io\"]}, "
        "{\"ip\": \"2001:db8::1\", \"hostnames\": [\"assisted-api.local.openshift.io\"]}], ",
        "quay.io/edge-infrastructure/assisted-installer-controller:latest", UPSTREAM_ENV("4.13.18", "true"),
        UPSTREAM_MOUNTS, "", UPSTREAM_VOLUMES);

static const char UPSTREAM_JOB_SINGLE_NODE[] = UPSTREAM_JOB(
        "", "quay.io/edge-infrastructure/assisted-installer-controller:latest",
        UPSTREAM_ENV("4.13.18", "true"),
        UPSTREAM_MOUNTS ", {\"name\": \"sno-bootstrap-files\", \"mountPath\": \"/tmp/bootstrap-secrets\"}, "
                        "{\"name\": \"service-ca-cert-config\", \"mountPath\": "
                        "\"/etc/assisted-service/service-ca.crt\"}",
        ", {\"effect\": \"NoSchedule\", \"key\": \"node.kubernetes.io/not-ready\", \"operator\": "
        "\"Exists\"}, "
        "{\"effect\": \"NoSchedule\", \"key\": \"node.kubernetes.io/network-unavailable\", \"operator\": "
        "\"Exists\"}",
        UPSTREAM_VOLUMES ", {\"name\": \"sno-bootstrap-files\", \"hostPath\": {\"path\": "
                         "\"/etc/kubernetes/bootstrap-secrets\"}}, {\"name\": \"service-ca-cert-config\", "
                         "\"hostPath\": {\"path\": \"/etc/assisted-service/service-ca.crt\"}}");

/* Equal as JSON (key order aside, array order kept); both shown if not. */
static void assert_upstream_job(json_object *job, const char *expected_text)
{
        _cleanup_(json_object_putp) json_object *expected = NULL;

        ASSERT_OK(json_parse(expected_text, strlen(expected_text), BUF_MAX_SMALL_FILE, &expected, NULL));
        if (!json_object_equal(job, expected))
                test_fail(__FILE__, __LINE__, "the Job differs from upstream's:\n%s\nexpected:\n%s",
                          json_object_to_json_string_ext(job, JSON_C_TO_STRING_PRETTY),
                          json_object_to_json_string_ext(expected, JSON_C_TO_STRING_PRETTY));
}

TEST(multi_node)
{
        Manifest *m = NULL;
        size_t n = 0;
        json_object *cm, *job, *spec;
        _cleanup_strv_free_ char **files = NULL;

        ASSERT_OK(controller_manifests(&multi, &m, &n));
        ASSERT_EQ(n, 10u);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *yaml = NULL, *err = NULL;
                _cleanup_(json_object_putp) json_object *back = NULL;
                size_t len;

                assert_valid_object(m[i].object);
                ASSERT_OK(strv_extend(&files, m[i].file));
                ASSERT_TRUE(endswith(m[i].file, ".yaml"));
                ASSERT_EQ(m[i].secret, streq(json_get_string(m[i].object, "kind"), "Secret"));
                /* written as YAML; every string reads back unchanged */
                ASSERT_OK(json_to_yaml(m[i].object, &yaml, &len));
                ASSERT_OK(yaml_to_json(yaml, len, &back, &err));
                ASSERT_STREQ(json_get_string(json_get(back, "metadata"), "name"),
                             json_get_string(json_get(m[i].object, "metadata"), "name"));
                if (streq(json_get_string(m[i].object, "kind"), "ConfigMap")) {
                        json_object *data = json_get(m[i].object, "data");
                        json_object_object_foreach (data, k, v) {
                                ASSERT_STREQ(json_get_string(json_get(back, "data"), k),
                                             json_object_get_string(v));
                        }
                }
                /* the token never in the clear */
                ASSERT_NOT_CONTAINS(yaml, "t0ken-secret");
        }
        ASSERT_STREQ(files[0], "assisted-installer-controller-nm.yaml");
        ASSERT_TRUE(strv_contains(files, "assisted-installer-controller-pod.yaml"));
        ASSERT_TRUE(strv_contains(files, "assisted-installer-controller-cm.yaml"));
        ASSERT_TRUE(strv_contains(files, "assisted-installer-controller-secret.yaml"));

        ASSERT_STREQ(json_get_string(json_get_path(find(m, n, "Namespace"), "metadata.labels"),
                                     "pod-security.kubernetes.io/enforce"),
                     "privileged");
        cm = json_get(find(m, n, "ConfigMap"), "data");
        ASSERT_STREQ(json_get_string(cm, "cluster-id"), multi.cluster_id);
        ASSERT_STREQ(json_get_string(cm, "inventory-url"), "http://203.0.113.1:8090");
        ASSERT_STREQ(json_get_string(cm, "skip-cert-verification"), "true");
        ASSERT_STREQ(json_get_string(cm, "ca-cert-path"), "");
        ASSERT_STREQ(json_get_string(cm, "check-cluster-version"), "false");
        ASSERT_STREQ(json_get_string(cm, "control-plane-count"), "3");
        ASSERT_STREQ(json_get_string(cm, "must-gather-image"), multi.must_gather_image);
        ASSERT_STREQ(json_get_string(json_get(find(m, n, "Secret"), "data"), "pull-secret-token"),
                     "dDBrZW4tc2VjcmV0");

        job = find(m, n, "Job");
        spec = json_get_path(job, "spec.template.spec");
        ASSERT_STREQ(json_get_string(json_object_array_get_idx(json_get(spec, "containers"), 0), "image"),
                     multi.controller_image);
        ASSERT_STREQ(env_value(job, "OPENSHIFT_VERSION"), "4.13.18");
        ASSERT_STREQ(env_value(job, "NOTIFY_NUM_REBOOTS"), "true");
        ASSERT_STREQ(env_value(job, "CLUSTER_ID"), "cluster-id");
        assert_upstream_job(job, UPSTREAM_JOB_MULTI);
        manifests_free(m, n);
}

TEST(single_node_and_cacert)
{
        ControllerManifestsInput in = multi;
        Manifest *m = NULL;
        size_t n = 0;
        json_object *spec;

        in.control_plane_count = 1;
        in.service_ips = NULL;
        in.ca_cert_path = "/etc/assisted-service/service-ca.crt";
        ASSERT_OK(controller_manifests(&in, &m, &n));
        for (size_t i = 0; i < n; i++)
                assert_valid_object(m[i].object);
        spec = json_get_path(find(m, n, "Job"), "spec.template.spec");
        ASSERT_NULL(json_get(spec, "hostAliases"));
        assert_upstream_job(find(m, n, "Job"), UPSTREAM_JOB_SINGLE_NODE);
        ASSERT_STREQ(json_get_string(json_get(find(m, n, "ConfigMap"), "data"), "control-plane-count"), "1");
        ASSERT_STREQ(json_get_string(json_get(find(m, n, "ConfigMap"), "data"), "ca-cert-path"),
                     in.ca_cert_path);
        manifests_free(m, n);
}

/* Whether the string array at key holds s ("*" matching any when wild). */
static bool array_has(json_object *o, const char *key, const char *s, bool wild)
{
        json_object *a = json_get(o, key);

        for (size_t i = 0; i < alen(a); i++) {
                const char *e = json_object_get_string(json_object_array_get_idx(a, i));
                if (streq_ptr(e, s) || (wild && streq_ptr(e, "*")))
                        return true;
        }
        return false;
}

/* Whether one of the rules grants verb on group/resource (of that name,
 * when name is set), as RBAC evaluates it: "*" matches any resource. */
static bool rules_allow(json_object *rules, const char *group, const char *resource, const char *verb,
                        const char *name)
{
        for (size_t i = 0; i < alen(rules); i++) {
                json_object *r = json_object_array_get_idx(rules, i);

                if (array_has(r, "apiGroups", group, false) && array_has(r, "resources", resource, true) &&
                    array_has(r, "verbs", verb, false) &&
                    (alen(json_get(r, "resourceNames")) == 0 ||
                     (name && array_has(r, "resourceNames", name, false))))
                        return true;
        }
        return false;
}

/* Every grant of upstream's ClusterRole (assisted-installer-controller-role.yaml
 * at 880389d4): the upstream controller image run by cradle's Job has them
 * all. Group, resources, verbs, names (comma lists). */
TEST(cluster_role_covers_upstream)
{
        static const char *const upstream[][4] = {
                { "", "pods,configmaps,pods/log", "get,list,watch", NULL },
                { "", "nodes", "get,list,watch,patch", NULL },
                { "", "events", "create", NULL },
                { "", "namespaces", "patch", NULL },
                { "certificates.k8s.io", "certificatesigningrequests", "get,list,watch", NULL },
                { "batch", "jobs", "get,list,delete", NULL },
                { "certificates.k8s.io", "certificatesigningrequests/approval", "update", NULL },
                { "authentication.k8s.io", "tokenreviews", "create", NULL },
                { "authorization.k8s.io", "subjectaccessreviews", "create", NULL },
                { "config.openshift.io", "clusteroperators", "get,create,list,watch", NULL },
                { "config.openshift.io", "clusteroperators/status", "update", "machine-approver" },
                { "config.openshift.io", "proxies", "get,list", NULL },
                { "certificates.k8s.io", "signers", "approve",
                  "kubernetes.io/kube-apiserver-client-kubelet,kubernetes.io/kubelet-serving" },
                { "operator.openshift.io", "etcds,ingresscontrollers", "patch", NULL },
                { "metal3.io", "baremetalhosts", "get,list,watch,update,patch", NULL },
                { "metal3.io", "baremetalhosts/status", "get,patch,update", NULL },
                { "machine.openshift.io", "machines", "get,list,watch", NULL },
                { "metal3.io", "provisionings", "get,list", NULL },
                { "config.openshift.io", "clusterversions", "get,list", NULL },
                { "operators.coreos.com", "clusterserviceversions", "get,list", NULL },
                { "operators.coreos.com", "subscriptions,installplans", "get,list,update,delete", NULL },
                { "", "services", "list,delete", NULL },
                { "", "pods", "deletecollection", NULL },
                { "security.openshift.io", "securitycontextconstraints", "use",
                  "anyuid,nonroot,hostmount-anyuid,machine-api-termination-handler,hostnetwork,hostaccess,"
                  "node-exporter" },
                { "machineconfiguration.openshift.io", "machineconfigpools,machineconfigs", "patch,get",
                  NULL },
        };
        Manifest *m = NULL;
        size_t n = 0;
        json_object *rules;

        ASSERT_OK(controller_manifests(&multi, &m, &n));
        rules = json_get(find(m, n, "ClusterRole"), "rules");
        for (size_t i = 0; i < ELEMENTSOF(upstream); i++) {
                _cleanup_strv_free_ char **resources = NULL, **verbs = NULL, **names = NULL;

                ASSERT_OK(strv_split(upstream[i][1], ",", &resources));
                ASSERT_OK(strv_split(upstream[i][2], ",", &verbs));
                ASSERT_OK(strv_split(upstream[i][3] ?: "", ",", &names));
                STRV_FOREACH (res, resources)
                        STRV_FOREACH (verb, verbs) {
                                if (strv_length(names) == 0 &&
                                    !rules_allow(rules, upstream[i][0], *res, *verb, NULL))
                                        test_fail(__FILE__, __LINE__, "%s/%s %s not granted", upstream[i][0],
                                                  *res, *verb);
                                STRV_FOREACH (name, names)
                                        if (!rules_allow(rules, upstream[i][0], *res, *verb, *name))
                                                test_fail(__FILE__, __LINE__, "%s/%s %s %s not granted",
                                                          upstream[i][0], *res, *verb, *name);
                        }
        }
        manifests_free(m, n);
}

TEST(ssh_machine_config)
{
        _cleanup_(json_object_putp) json_object *mc =
                ssh_machine_config("ssh-rsa AAAAB3NzaC1yc2E root@bootstrap\n");
        json_object *user = json_object_array_get_idx(json_get_path(mc, "spec.config.passwd.users"), 0);

        ASSERT_STREQ(json_get_string(mc, "kind"), "MachineConfig");
        ASSERT_STREQ(json_get_string(json_get(mc, "metadata"), "name"), SSH_MACHINE_CONFIG);
        ASSERT_STREQ(json_get_string(json_get_path(mc, "metadata.labels"),
                                     "machineconfiguration.openshift.io/role"),
                     "master");
        ASSERT_STREQ(json_get_string(json_get_path(mc, "spec.config.ignition"), "version"), "3.1.0");
        ASSERT_STREQ(json_get_string(user, "name"), "core");
        ASSERT_STREQ(
                json_object_get_string(json_object_array_get_idx(json_get(user, "sshAuthorizedKeys"), 0)),
                "ssh-rsa AAAAB3NzaC1yc2E root@bootstrap");
}

DEFINE_TEST_MAIN
