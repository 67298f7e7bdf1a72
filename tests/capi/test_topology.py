#!/usr/bin/python3
"""ClusterClass with cradle-hub's templates (issue 22 §3: "a control-plane
template for ClusterClass, with server-side-apply dry runs accepted").

The topology controller (played by topology.py) makes a Cluster's control
plane from the class's OpenshiftAssistedControlPlaneTemplate and its
workers' configs from an OpenshiftAssistedConfigTemplate, and decides every
change with a server-side-apply dry run; CAPI core and Metal3 are played by
capicore.py; cradle-hub --capi is the provider, against the reference
service (or the one of CRADLE_TEST_SERVICE_URL).

Against tests/kubeapi's server, or unchanged against the cluster of
CRADLE_TEST_KUBECONFIG: the CRDs it lacks (CAPI's, CAPOA's, Metal3's and the
provider's template, from packaging/capi) are created and left there; the
test works in a namespace of its own, removed at the end.
"""

import base64
import os
import sys
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
SRC = os.path.dirname(TESTS)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TESTS, "hub"))
sys.path.insert(0, os.path.join(TESTS, "kubeapi"))
sys.path.insert(0, os.path.join(TESTS, "service"))

try:
    import yaml  # noqa: F401
except ImportError:
    sys.exit(77)

import capicore as C  # noqa: E402
import hublab as H  # noqa: E402
import topology as T  # noqa: E402

TIMEOUT = 120
LAB = KUBE = SVC = HUB = None
NS = "capi-class-" + uuid.uuid4().hex[:6]
CP = "controlplane.cluster.x-k8s.io"
BOOT = "bootstrap.cluster.x-k8s.io"
INFRA = C.INFRA_GROUP
CLUSTER_ID = "cradle.agent-install.openshift.io/cluster-id"
COMPONENTS = [os.path.join(SRC, "packaging", "capi", "repository", p) for p in (
    "control-plane-cradle/v0.1.0/control-plane-components.yaml",
    "bootstrap-cradle/v0.1.0/bootstrap-components.yaml")]


def setUpModule():
    global LAB, KUBE, SVC, HUB
    LAB = H.Lab("capi-class")
    try:
        kubeconfig, _ = H.start_kubeapi(LAB, capi=True)
        KUBE = H.Kube(kubeconfig)
        LAB.on_close.append(KUBE.close)
        # the provider's own CRDs: its control-plane template is not CAPOA's
        C.ensure_crds(KUBE, COMPONENTS)
        SVC = H.start_refservice(LAB, "127.0.0.1", {})
        KUBE.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        HUB = H.Hub(LAB, kubeconfig, SVC.url, NS, extra=("--capi",)).start(timeout=TIMEOUT)
        # removed first (on_close runs backwards): while cradle-hub still runs
        LAB.on_close.append(remove_namespace)
    except BaseException:
        LAB.close()
        raise


def tearDownModule():
    if LAB:
        LAB.close()


def remove_namespace():
    KUBE.delete("Namespace", None, NS)
    H.wait("namespace %s to be gone" % NS, lambda: not _exists("/api/v1/namespaces/" + NS), TIMEOUT)


def _exists(path):
    try:
        KUBE.request("GET", path)
        return True
    except H.KubeError as e:
        if e.status == 404:
            return False
        raise


class ClusterClassTest(unittest.TestCase):
    def setUp(self):
        self.res = C.Resolver(KUBE)

    def path(self, group, kind, name=None):
        return self.res.path(NS, group, kind, name)

    def create(self, group, kind, name, spec):
        return KUBE.request("POST", self.path(group, kind), {
            "apiVersion": self.res.api_version(group, kind), "kind": kind,
            "metadata": {"name": name, "namespace": NS}, "spec": spec})

    def get(self, group, kind, name):
        return KUBE.request("GET", self.path(group, kind, name))

    def template_ref(self, group, kind, name):
        """A ClusterClass templateRef (v1beta2: apiVersion, kind, name)"""
        return {"apiVersion": self.res.api_version(group, kind), "kind": kind, "name": name}

    def control_plane_spec(self, suffix):
        return {"distributionVersion": H.release_version(H.RELEASE),
                "config": {"baseDomain": H.CAPI_DOMAIN, "apiVIPs": [H.CAPI_API_VIP],
                           "ingressVIPs": [H.CAPI_INGRESS_VIP], "pullSecretRef": {"name": "pull-" + suffix}},
                "openshiftAssistedConfigSpec": {"cpuArchitecture": "x86_64"}}

    def test_templates_take_server_side_apply_dry_runs(self):
        """The topology controller's dry runs on both templates are
        accepted (no immutability check refuses them) and change nothing
        stored (bootstrap §"BootstrapConfigTemplate: support for SSA dry
        run", control plane §"ControlPlaneTemplate")."""
        topo = T.Topology(KUBE, NS)
        cpt = self.create(CP, "OpenshiftAssistedControlPlaneTemplate", "dry-cp",
                          {"template": {"spec": self.control_plane_spec("dry")}})
        oact = self.create(BOOT, "OpenshiftAssistedConfigTemplate", "dry-worker",
                           {"template": {"spec": {"cpuArchitecture": "x86_64"}}})
        for obj in (cpt, oact):
            changed = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                       "metadata": {"name": obj["metadata"]["name"], "namespace": NS},
                       "spec": {"template": dict(obj["spec"]["template"],
                                                 metadata={"labels": {"dry-run": "yes"}})}}
            if obj["kind"] == "OpenshiftAssistedControlPlaneTemplate":
                changed["spec"]["template"]["spec"] = dict(obj["spec"]["template"]["spec"],
                                                           distributionVersion="4.99.0")
            else:
                changed["spec"]["template"]["spec"] = {"cpuArchitecture": "aarch64"}
            answer = topo.apply(changed, dry_run=True)
            self.assertEqual(answer["spec"]["template"]["metadata"]["labels"], {"dry-run": "yes"})
            stored = KUBE.request("GET", self.path(obj["apiVersion"].split("/")[0], obj["kind"],
                                                   obj["metadata"]["name"]))
            self.assertEqual(stored["metadata"]["resourceVersion"], obj["metadata"]["resourceVersion"])
            self.assertEqual(stored["spec"], obj["spec"])

    def test_cluster_class_makes_a_control_plane_cradle_hub_registers(self):
        """A Cluster with a topology: its control plane comes from the
        class's template (three replicas from the topology), cradle-hub
        registers it and serves each Machine's bootstrap data, and the
        topology's dry runs find nothing to change once cradle-hub has
        written its annotations and status: the two do not fight."""
        ps = H.docs("pullsecret.yaml")
        ps["metadata"].update(name="pull-class", namespace=NS)
        KUBE.apply(ps)
        self.create(INFRA, "Metal3ClusterTemplate", "class-infra", {"template": {"spec": {
            "controlPlaneEndpoint": {"host": H.CAPI_API_VIP, "port": 6443}}}})
        image = {"url": "http://198.51.100.1/rhcos.qcow2", "checksum": "http://198.51.100.1/rhcos.qcow2.sha256sum",
                 "checksumType": "sha256", "format": "qcow2"}
        self.create(INFRA, "Metal3MachineTemplate", "class-cp-machine", {"template": {"spec": {"image": image}}})
        self.create(INFRA, "Metal3MachineTemplate", "class-worker-machine", {"template": {"spec": {"image": image}}})
        self.create(CP, "OpenshiftAssistedControlPlaneTemplate", "class-cp",
                    {"template": {"spec": self.control_plane_spec("class")}})
        self.create(BOOT, "OpenshiftAssistedConfigTemplate", "class-worker",
                    {"template": {"spec": {"cpuArchitecture": "x86_64"}}})
        KUBE.request("POST", C.CORE + "/namespaces/%s/clusterclasses" % NS, {
            "apiVersion": C.CORE_API_VERSION, "kind": "ClusterClass",
            "metadata": {"name": "openshift-assisted", "namespace": NS},
            "spec": {"infrastructure": {"templateRef": self.template_ref(INFRA, "Metal3ClusterTemplate",
                                                                         "class-infra")},
                     "controlPlane": {
                         "templateRef": self.template_ref(CP, "OpenshiftAssistedControlPlaneTemplate", "class-cp"),
                         "machineInfrastructure": {"templateRef": self.template_ref(
                             INFRA, "Metal3MachineTemplate", "class-cp-machine")}},
                     "workers": {"machineDeployments": [{
                         "class": "worker",
                         "bootstrap": {"templateRef": self.template_ref(BOOT, "OpenshiftAssistedConfigTemplate",
                                                                        "class-worker")},
                         "infrastructure": {"templateRef": self.template_ref(INFRA, "Metal3MachineTemplate",
                                                                             "class-worker-machine")}}]}}})
        KUBE.request("POST", C.CORE + "/namespaces/%s/clusters" % NS, {
            "apiVersion": C.CORE_API_VERSION, "kind": "Cluster", "metadata": {"name": "classy", "namespace": NS},
            "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["10.128.0.0/14"]},
                                        "services": {"cidrBlocks": ["172.30.0.0/16"]}},
                     "topology": {"classRef": {"name": "openshift-assisted"}, "version": "v1.26.4",
                                  "controlPlane": {"replicas": 3},
                                  "workers": {"machineDeployments": [{"class": "worker", "name": "md-0",
                                                                      "replicas": 1}]}}}})
        topo = T.Topology(KUBE, NS).start()
        self.addCleanup(topo.stop)
        core = C.CapiCore(KUBE, NS, interval=0.2).start()
        self.addCleanup(core.stop)

        def control_plane():
            ref = KUBE.request("GET", C.CORE + "/namespaces/%s/clusters/classy" % NS)["spec"].get("controlPlaneRef")
            return self.get(CP, ref["kind"], ref["name"]) if ref else None
        H.wait("the topology to make the control plane", control_plane, TIMEOUT)
        oacp = control_plane()
        self.assertEqual(oacp["kind"], "OpenshiftAssistedControlPlane")
        self.assertEqual(oacp["spec"]["replicas"], 3)
        self.assertEqual(oacp["spec"]["distributionVersion"], H.release_version(H.RELEASE))
        self.assertEqual(oacp["metadata"]["labels"][C.CLUSTER_NAME_LABEL], "classy")
        self.assertIn(T.OWNED_LABEL, oacp["metadata"]["labels"])
        infra_ref = oacp["spec"]["machineTemplate"]["infrastructureRef"]
        self.assertNotEqual(infra_ref["name"], "class-cp-machine", "the class's template is cloned, not shared")

        def registered():
            o = control_plane()
            return (o["metadata"].get("annotations") or {}).get(CLUSTER_ID)
        cluster_id = H.wait("cradle-hub to register the cluster", registered, TIMEOUT)
        status, cluster = SVC.api("GET", "/v2/clusters/" + cluster_id)
        self.assertEqual(status, 200)
        self.assertEqual(cluster["name"], "classy")
        self.assertEqual(cluster["base_dns_domain"], H.CAPI_DOMAIN)

        def machines_with_data():
            ms = KUBE.request("GET", C.CORE + "/namespaces/%s/machines?labelSelector=%s" % (
                NS, "cluster.x-k8s.io/control-plane"))["items"]
            if len(ms) != 3 or not all(m["spec"]["bootstrap"].get("dataSecretName") for m in ms):
                return None
            return ms
        try:
            machines = H.wait("three control-plane Machines with bootstrap data", machines_with_data, TIMEOUT)
        except H.LabError as e:
            raise AssertionError("%s; capicore's errors: %s; the topology's: %s" % (e, core.errors[-3:],
                                                                                   topo.errors[-3:]))
        for m in machines:
            sec = KUBE.request("GET", "/api/v1/namespaces/%s/secrets/%s" % (
                NS, m["spec"]["bootstrap"]["dataSecretName"]))
            self.assertEqual(H.ignition_hostname(base64.b64decode(sec["data"]["value"]).decode()),
                             m["metadata"]["name"])

        mds = KUBE.request("GET", C.CORE + "/namespaces/%s/machinedeployments?labelSelector=%s=md-0" % (
            NS, T.DEPLOYMENT_TOPOLOGY_LABEL))["items"]
        self.assertEqual(len(mds), 1)
        boot = mds[0]["spec"]["template"]["spec"]["bootstrap"]["configRef"]
        self.assertEqual(boot["kind"], "OpenshiftAssistedConfigTemplate")
        self.assertNotEqual(boot["name"], "class-worker")
        self.get(BOOT, boot["kind"], boot["name"])

        # its worker Machine's bootstrap data, served from the same infra-env
        def worker_with_data():
            ms = KUBE.request("GET", C.CORE + "/namespaces/%s/machines?labelSelector=%s=md-0" % (
                NS, T.DEPLOYMENT_TOPOLOGY_LABEL))["items"]
            return ms[0] if len(ms) == 1 and ms[0]["spec"]["bootstrap"].get("dataSecretName") else None
        worker = H.wait("the worker Machine's bootstrap data", worker_with_data, TIMEOUT)
        sec = KUBE.request("GET", "/api/v1/namespaces/%s/secrets/%s" % (
            NS, worker["spec"]["bootstrap"]["dataSecretName"]))
        self.assertEqual(H.ignition_hostname(base64.b64decode(sec["data"]["value"]).decode()),
                         worker["metadata"]["name"])

        # cradle-hub's writes (annotations, status) are not the topology's
        # fields: its dry runs keep finding nothing to apply
        core.settle(3)
        applies, dry_runs, generation = topo.applies, topo.dry_runs, control_plane()["metadata"]["generation"]
        H.wait("more topology passes", lambda: topo.dry_runs >= dry_runs + 6, TIMEOUT, 0.1)
        self.assertEqual(topo.applies, applies, "a dry run found a difference after cradle-hub's writes")
        self.assertEqual(control_plane()["metadata"]["generation"], generation)
        self.assertEqual(topo.errors, [])

        # and the comparison is not blind: a field of the topology's that
        # someone else removes is applied again
        cp = control_plane()
        KUBE.request("PATCH", self.path(CP, cp["kind"], cp["metadata"]["name"]),
                     {"metadata": {"labels": {T.OWNED_LABEL: None}}}, C.MERGE)
        H.wait("the topology to apply its label again",
               lambda: T.OWNED_LABEL in control_plane()["metadata"].get("labels", {}), TIMEOUT, 0.1)
        self.assertEqual(topo.applies, applies + 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
