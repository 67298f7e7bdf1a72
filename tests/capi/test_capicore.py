#!/usr/bin/python3
"""Tests of the CAPI core stand-in (capicore.py): the test plays the
bootstrap and control-plane providers (it writes their status as the
contract pages say they do) and checks what the stand-in does with it.

Against tests/kubeapi's server, or unchanged against the cluster of
CRADLE_TEST_KUBECONFIG (the CAPI, CAPOA and Metal3 CRDs it lacks are created
and left there; each test works in a namespace of its own, and the Node the
workload lookup needs has a unique name and is deleted at the end).
"""

import os
import sys
import time
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kubeapi"))

try:
    import yaml  # noqa: F401
except ImportError:
    sys.exit(77)

import capicore as C  # noqa: E402
from capicore import CORE, MERGE, Kube, KubeError, condition, ref  # noqa: E402

TIMEOUT = 30
KUBE = None
KUBECONFIG = None
SERVER = None
BOOT = "bootstrap.cluster.x-k8s.io"
CP = "controlplane.cluster.x-k8s.io"


def setUpModule():
    global KUBE, KUBECONFIG, SERVER
    KUBECONFIG = os.environ.get("CRADLE_TEST_KUBECONFIG")
    if not KUBECONFIG:
        import kubeapi_harness
        SERVER = kubeapi_harness.Server([]).start(timeout=120)
        KUBECONFIG = os.path.join(SERVER.state, "kubeconfig")
    try:
        KUBE = Kube(KUBECONFIG)
        C.ensure_crds(KUBE)
    except BaseException:
        # unittest runs no tearDownModule after a failed setUpModule: the server would outlive the test
        if SERVER:
            SERVER.stop()
        raise


def tearDownModule():
    if KUBE:
        KUBE.close()
    if SERVER:
        rc = SERVER.stop()
        if rc != 0 or "Traceback" in SERVER.stderr():
            raise AssertionError("kubeapi: exit %s %s" % (rc, SERVER.stderr()[-2000:]))


class Base(unittest.TestCase):
    def setUp(self):
        self.ns = "capi-" + uuid.uuid4().hex[:8]
        KUBE.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": self.ns}})
        self.addCleanup(KUBE.request, "DELETE", "/api/v1/namespaces/" + self.ns)
        self.core = C.CapiCore(KUBE, self.ns, interval=0.1).start()
        self.addCleanup(self.core.stop)
        self.res = C.Resolver(KUBE)

    # ---- objects --------------------------------------------------------------------

    def path(self, group, kind, name=None, sub=None):
        return self.res.path(self.ns, group, kind, name, sub)

    def create(self, group, kind, name, spec, **meta):
        body = {"apiVersion": self.res.api_version(group, kind), "kind": kind,
                "metadata": dict(meta, name=name, namespace=self.ns), "spec": spec}
        return KUBE.request("POST", self.path(group, kind), body)

    def get(self, group, kind, name):
        try:
            return KUBE.request("GET", self.path(group, kind, name))
        except KubeError as e:
            if e.status == 404:
                return None
            raise

    def status(self, group, kind, name, status):
        return KUBE.request("PATCH", self.path(group, kind, name, "status"), {"status": status}, MERGE)

    def until(self, what, fn, timeout=TIMEOUT):
        try:
            return C.wait(what, fn, timeout, 0.1)
        except C.LabError:
            raise AssertionError("%s (capicore errors: %s)" % (what, self.core.errors[-3:]))

    def cluster(self, name, paused=False, endpoint=True):
        self.create(C.INFRA_GROUP, "Metal3Cluster", name,
                    {"controlPlaneEndpoint": {"host": "api.%s.example.com" % name, "port": 6443}} if endpoint
                    else {})
        self.create(CP, "OpenshiftAssistedControlPlane", name, {
            "distributionVersion": "4.19.0", "replicas": 3,
            "machineTemplate": {"infrastructureRef": ref(C.INFRA_GROUP, "Metal3MachineTemplate", name + "-cp")}})
        spec = {"infrastructureRef": ref(C.INFRA_GROUP, "Metal3Cluster", name),
                "controlPlaneRef": ref(CP, "OpenshiftAssistedControlPlane", name)}
        if paused:
            spec["paused"] = True
        return self.create("cluster.x-k8s.io", "Cluster", name, spec)

    def machine(self, name, cluster, **meta):
        self.create(BOOT, "OpenshiftAssistedConfig", name, {})
        self.create(C.INFRA_GROUP, "Metal3Machine", name, {})
        return self.create("cluster.x-k8s.io", "Machine", name, {
            "clusterName": cluster,
            "bootstrap": {"configRef": ref(BOOT, "OpenshiftAssistedConfig", name)},
            "infrastructureRef": ref(C.INFRA_GROUP, "Metal3Machine", name)}, **meta)

    def machine_obj(self, name):
        return self.get("cluster.x-k8s.io", "Machine", name)

    def controller_of(self, obj):
        return [(r["kind"], r["name"]) for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")]


class Clusters(Base):
    def test_infrastructure_endpoint_and_control_plane_initialization(self):
        self.cluster("c1")
        # the InfraCluster and the control plane are the Cluster's (owner reference, cluster-name label)
        m3c = self.until("Metal3Cluster owned by the Cluster", lambda: (lambda o: o if any(
            r["kind"] == "Cluster" and r["name"] == "c1" for r in o["metadata"].get("ownerReferences") or [])
            else None)(self.get(C.INFRA_GROUP, "Metal3Cluster", "c1")))
        self.assertEqual(m3c["metadata"]["labels"][C.CLUSTER_NAME_LABEL], "c1")
        c = self.until("infrastructure provisioned", lambda: (lambda o: o if (o.get("status") or {}).get(
            "initialization", {}).get("infrastructureProvisioned") else None)(self.get("cluster.x-k8s.io",
                                                                                       "Cluster", "c1")))
        self.assertEqual(c["spec"]["controlPlaneEndpoint"], {"host": "api.c1.example.com", "port": 6443})
        self.assertEqual(condition(c, "InfrastructureReady")["status"], "True")
        self.assertEqual(c["status"]["phase"], "Provisioned")
        oacp = self.get(CP, "OpenshiftAssistedControlPlane", "c1")
        self.assertIn(("Cluster", "c1"), [(r["kind"], r["name"]) for r in oacp["metadata"]["ownerReferences"]])
        # not initialized until the control plane says so
        self.core.settle()
        c = self.get("cluster.x-k8s.io", "Cluster", "c1")
        self.assertNotIn("controlPlaneInitialized", c["status"].get("initialization") or {})
        self.assertEqual(condition(c, "ControlPlaneInitialized")["status"], "False")
        self.assertEqual(condition(c, "ControlPlaneAvailable")["status"], "Unknown")
        self.assertEqual(condition(c, "Available")["status"], "False")
        t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.status(CP, "OpenshiftAssistedControlPlane", "c1", {
            "initialization": {"controlPlaneInitialized": True},
            "conditions": [{"type": "Available", "status": "False", "reason": "Installing",
                            "message": "3 hosts installing", "lastTransitionTime": t}]})
        c = self.until("control plane initialized", lambda: (lambda o: o if (
            o["status"].get("initialization") or {}).get("controlPlaneInitialized") else None)(
            self.get("cluster.x-k8s.io", "Cluster", "c1")))
        self.assertEqual(condition(c, "ControlPlaneInitialized")["status"], "True")
        self.until("ControlPlaneAvailable mirrored", lambda: (condition(self.get(
            "cluster.x-k8s.io", "Cluster", "c1"), "ControlPlaneAvailable") or {}).get("reason") == "Installing")
        c = self.get("cluster.x-k8s.io", "Cluster", "c1")
        self.assertEqual(condition(c, "ControlPlaneAvailable")["message"], "3 hosts installing")
        self.assertEqual(condition(c, "Available")["status"], "False")
        self.status(CP, "OpenshiftAssistedControlPlane", "c1", {"conditions": [
            {"type": "Available", "status": "True", "reason": "Available", "message": "",
             "lastTransitionTime": t}]})
        self.until("Cluster Available", lambda: (condition(self.get(
            "cluster.x-k8s.io", "Cluster", "c1"), "Available") or {}).get("status") == "True")

    def test_endpoint_arrives_later(self):
        """An InfraCluster without an endpoint is not provisioned (the
        stand-in's Metal3Cluster rule) and the Cluster stays Provisioning;
        the endpoint is copied once the InfraCluster has one."""
        self.cluster("c2", endpoint=False)
        self.core.settle()
        c = self.get("cluster.x-k8s.io", "Cluster", "c2")
        self.assertNotIn("controlPlaneEndpoint", c["spec"])
        self.assertEqual(c["status"]["phase"], "Provisioning")
        self.assertEqual(condition(c, "InfrastructureReady")["status"], "False")
        KUBE.request("PATCH", self.path(C.INFRA_GROUP, "Metal3Cluster", "c2"),
                     {"spec": {"controlPlaneEndpoint": {"host": "10.1.2.3", "port": 6443}}}, MERGE)
        self.until("endpoint from the InfraCluster", lambda: self.get("cluster.x-k8s.io", "Cluster", "c2")[
            "spec"].get("controlPlaneEndpoint") == {"host": "10.1.2.3", "port": 6443})
        self.until("Provisioned", lambda: self.get("cluster.x-k8s.io", "Cluster", "c2")["status"].get("phase")
                   == "Provisioned")


class Machines(Base):
    def test_bootstrap_infrastructure_and_node(self):
        self.cluster("c1")
        self.machine("m1", "c1")
        # the Machine controls its bootstrap config and infrastructure machine
        cfg = self.until("config controlled by the Machine", lambda: (lambda o: o if self.controller_of(o)
                                                                      else None)(self.get(BOOT,
                                                                                          "OpenshiftAssistedConfig",
                                                                                          "m1")))
        self.assertEqual(self.controller_of(cfg), [("Machine", "m1")])
        self.assertEqual(cfg["metadata"]["labels"][C.CLUSTER_NAME_LABEL], "c1")
        m3m = self.until("Metal3Machine controlled", lambda: (lambda o: o if self.controller_of(o) else None)(
            self.get(C.INFRA_GROUP, "Metal3Machine", "m1")))
        self.assertEqual(self.controller_of(m3m), [("Machine", "m1")])
        self.core.settle()
        m = self.machine_obj("m1")
        self.assertEqual(m["status"]["phase"], "Pending")
        self.assertNotIn("dataSecretName", m["spec"]["bootstrap"])
        self.assertNotIn("providerID", self.get(C.INFRA_GROUP, "Metal3Machine", "m1")["spec"])
        # the bootstrap provider writes its Secret's name and dataSecretCreated
        self.status(BOOT, "OpenshiftAssistedConfig", "m1", {"dataSecretName": "m1-data",
                                                            "initialization": {"dataSecretCreated": True}})
        m = self.until("Machine provisioned", lambda: (lambda o: o if o["status"].get("phase") == "Provisioned"
                                                       else None)(self.machine_obj("m1")))
        self.assertEqual(m["spec"]["bootstrap"]["dataSecretName"], "m1-data")
        self.assertEqual(m["status"]["initialization"], {"bootstrapDataSecretCreated": True,
                                                         "infrastructureProvisioned": True})
        pid = "metal3://%s/m1/m1" % self.ns
        self.assertEqual(m["spec"]["providerID"], pid)
        self.assertEqual(m["status"]["addresses"], [{"type": "Hostname", "address": "m1"}])
        self.assertNotIn("nodeRef", m["status"])
        # the workload cluster (here: the same API server) gets the Node
        node = C.workload_node(KUBE, KUBECONFIG, self.ns, "c1", pid)["metadata"]["name"]
        self.addCleanup(KUBE.request, "DELETE", "/api/v1/nodes/" + node)
        m = self.until("Machine Running", lambda: (lambda o: o if o["status"].get("phase") == "Running"
                                                   else None)(self.machine_obj("m1")))
        self.assertEqual(m["status"]["nodeRef"], {"name": node})

    def test_data_secret_name_waits_for_data_secret_created(self):
        """status.dataSecretName alone is not copied: the Machine controller
        acts once the config reports initialization.dataSecretCreated
        (bootstrap §initialization completed)."""
        self.cluster("c1")
        self.machine("m2", "c1")
        self.until("config controlled", lambda: self.controller_of(self.get(BOOT, "OpenshiftAssistedConfig", "m2")))
        self.status(BOOT, "OpenshiftAssistedConfig", "m2", {"dataSecretName": "m2-data"})
        self.core.settle()
        m = self.machine_obj("m2")
        self.assertNotIn("dataSecretName", m["spec"]["bootstrap"], "copied before dataSecretCreated")
        self.assertEqual(m["status"]["phase"], "Pending")


class Deletion(Base):
    def strip_finalizers(self, kind, name):
        group = "cluster.x-k8s.io" if kind == "Machine" else BOOT
        try:
            KUBE.request("PATCH", self.path(group, kind, name), {"metadata": {"finalizers": None}}, MERGE)
        except KubeError as e:
            if e.status != 404:
                raise

    def test_machine_goes_after_its_config_and_infrastructure(self):
        """deletion=True: CAPI core's Machine finalizer; a deleted Machine
        deletes its bootstrap config and infrastructure machine and goes
        once both are gone (a provider's finalizer on its config is
        honoured: the Machine waits), even when its Cluster went first."""
        self.core.stop()
        self.core = C.CapiCore(KUBE, self.ns, interval=0.1, deletion=True).start()
        # a failure midway must not leave the namespace stuck on the Machine's finalizer
        self.addCleanup(self.strip_finalizers, "Machine", "m1")
        self.addCleanup(self.strip_finalizers, "OpenshiftAssistedConfig", "m1")
        self.cluster("c1")
        self.machine("m1", "c1")
        m = self.until("the Machine's finalizer", lambda: (lambda o: o if C.MACHINE_FINALIZER in (
            o["metadata"].get("finalizers") or []) else None)(self.machine_obj("m1")))
        self.assertIsNotNone(m)
        self.until("config controlled", lambda: self.controller_of(self.get(BOOT, "OpenshiftAssistedConfig", "m1")))
        # the bootstrap provider's own finalizer on its config
        KUBE.request("PATCH", self.path(BOOT, "OpenshiftAssistedConfig", "m1"),
                     {"metadata": {"finalizers": ["example.com/provider"]}}, MERGE)
        KUBE.request("DELETE", self.path("cluster.x-k8s.io", "Cluster", "c1"))
        KUBE.request("DELETE", self.path("cluster.x-k8s.io", "Machine", "m1"))
        self.until("the infrastructure machine deleted", lambda: self.get(C.INFRA_GROUP, "Metal3Machine", "m1") is None)
        cfg = self.until("the config deleting", lambda: (lambda o: o if o and o["metadata"].get(
            "deletionTimestamp") else None)(self.get(BOOT, "OpenshiftAssistedConfig", "m1")))
        self.assertIsNotNone(cfg)
        self.core.settle()
        self.assertIsNotNone(self.machine_obj("m1"), "the Machine waits for its config")
        KUBE.request("PATCH", self.path(BOOT, "OpenshiftAssistedConfig", "m1"), {"metadata": {"finalizers": None}},
                     MERGE)
        self.until("the Machine gone", lambda: self.machine_obj("m1") is None)


class Sets(Base):
    def templates(self):
        self.create(BOOT, "OpenshiftAssistedConfigTemplate", "workers",
                    {"template": {"metadata": {"labels": {"role": "worker"}},
                                  "spec": {"cpuArchitecture": "x86_64", "sshAuthorizedKey": "ssh-ed25519 AAAA test"}}})
        self.create(C.INFRA_GROUP, "Metal3MachineTemplate", "workers",
                    {"template": {"spec": {"image": {"url": "http://192.0.2.1/rhcos.qcow2", "checksum": "abc",
                                                     "checksumType": "sha256", "diskFormat": "qcow2"}}}})

    def md(self, name, replicas):
        spec = {"clusterName": "c1", "selector": {"matchLabels": {"pool": name}},
                "template": {"metadata": {"labels": {"pool": name}},
                             "spec": {"clusterName": "c1",
                                      "bootstrap": {"configRef": ref(BOOT, "OpenshiftAssistedConfigTemplate",
                                                                     "workers")},
                                      "infrastructureRef": ref(C.INFRA_GROUP, "Metal3MachineTemplate", "workers")}}}
        if replicas is not None:
            spec["replicas"] = replicas
        return self.create("cluster.x-k8s.io", "MachineDeployment", name, spec)

    def machines(self, selector):
        return KUBE.request("GET", CORE + "/namespaces/%s/machines?labelSelector=%s" % (self.ns, selector))["items"]

    def test_machine_deployment_clones_and_scales(self):
        self.cluster("c1")
        self.templates()
        self.md("w", 2)
        ms = self.until("2 Machines", lambda: len(self.machines(C.DEPLOYMENT_NAME_LABEL + "%3Dw")) == 2)
        del ms
        for m in self.machines(C.DEPLOYMENT_NAME_LABEL + "%3Dw"):
            self.assertEqual(m["metadata"]["labels"][C.CLUSTER_NAME_LABEL], "c1")
            self.assertEqual(m["metadata"]["labels"]["pool"], "w")
            owner = self.controller_of(m)
            self.assertEqual(len(owner), 1)
            self.assertEqual(owner[0][0], "MachineSet")
            msobj = self.get("cluster.x-k8s.io", "MachineSet", owner[0][1])
            self.assertEqual(self.controller_of(msobj), [("MachineDeployment", "w")])
            cref = m["spec"]["bootstrap"]["configRef"]
            self.assertEqual((cref["apiGroup"], cref["kind"]), (BOOT, "OpenshiftAssistedConfig"))
            cfg = self.until("cloned config controlled by its Machine", lambda: (lambda o: o if self.controller_of(
                o) == [("Machine", m["metadata"]["name"])] else None)(self.get(BOOT, "OpenshiftAssistedConfig",
                                                                                cref["name"])))
            self.assertEqual(cfg["spec"]["sshAuthorizedKey"], "ssh-ed25519 AAAA test")
            self.assertEqual(cfg["metadata"]["labels"]["role"], "worker")
            self.assertEqual(cfg["metadata"]["labels"][C.CLUSTER_NAME_LABEL], "c1")
            iref = m["spec"]["infrastructureRef"]
            self.assertEqual(iref["kind"], "Metal3Machine")
            m3m = self.get(C.INFRA_GROUP, "Metal3Machine", iref["name"])
            self.assertEqual(m3m["spec"]["image"]["url"], "http://192.0.2.1/rhcos.qcow2")
        # scale down through the scale subresource, as kubectl scale does
        KUBE.request("PATCH", CORE + "/namespaces/%s/machinedeployments/w/scale" % self.ns,
                     {"spec": {"replicas": 1}}, MERGE)
        self.until("1 Machine", lambda: len([m for m in self.machines(C.DEPLOYMENT_NAME_LABEL + "%3Dw")
                                             if not m["metadata"].get("deletionTimestamp")]) == 1)
        self.until("MachineDeployment status.replicas 1", lambda: (self.get(
            "cluster.x-k8s.io", "MachineDeployment", "w").get("status") or {}).get("replicas") == 1)


class Pausing(Base):
    def test_paused_cluster(self):
        self.cluster("c1", paused=True)
        self.machine("m1", "c1")
        self.until("Paused condition on the Machine", lambda: (condition(self.machine_obj("m1"), "Paused") or {})
                   .get("status") == "True")
        self.core.settle()
        self.assertEqual(self.controller_of(self.get(BOOT, "OpenshiftAssistedConfig", "m1")), [])
        c = self.get("cluster.x-k8s.io", "Cluster", "c1")
        self.assertEqual(condition(c, "Paused")["status"], "True")
        self.assertNotIn("controlPlaneEndpoint", c["spec"])
        KUBE.request("PATCH", self.path("cluster.x-k8s.io", "Cluster", "c1"), {"spec": {"paused": False}}, MERGE)
        self.until("config controlled once unpaused", lambda: self.controller_of(
            self.get(BOOT, "OpenshiftAssistedConfig", "m1")))
        self.until("Paused False", lambda: (condition(self.machine_obj("m1"), "Paused") or {})
                   .get("status") == "False")

    def test_paused_annotation(self):
        self.cluster("c1")
        self.machine("m1", "c1", annotations={C.PAUSED_ANNOTATION: ""})
        self.machine("m2", "c1")
        self.until("m2 reconciled", lambda: self.controller_of(self.get(BOOT, "OpenshiftAssistedConfig", "m2")))
        self.core.settle()
        self.assertEqual(self.controller_of(self.get(BOOT, "OpenshiftAssistedConfig", "m1")), [])
        self.assertEqual(condition(self.machine_obj("m1"), "Paused")["status"], "True")
        self.assertEqual(condition(self.machine_obj("m2"), "Paused")["status"], "False")


class Loop(unittest.TestCase):
    def test_stop_is_bounded(self):
        """stop() returns promptly while the loop waits between passes (a
        pass in progress is bounded by the client's 30 s request timeout)."""
        ns = "capi-" + uuid.uuid4().hex[:8]
        core = C.CapiCore(KUBE, ns, interval=5).start()
        core.settle(1)
        t = time.monotonic()
        core.stop()
        self.assertLess(time.monotonic() - t, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
