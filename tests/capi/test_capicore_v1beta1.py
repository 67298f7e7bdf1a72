#!/usr/bin/python3
"""The CAPI core stand-in (capicore.py) on a cluster whose CAPI core and
Metal3 CRDs store v1beta1, as Cluster API up to 1.10 installs them and as
the providers of that time (CAPOA bc5cc25d, cluster-api v1.9.5) speak: the
stand-in reads and writes those objects in their v1beta1 shape.

Against tests/kubeapi's server with the reference CRDs stored at v1beta1, or
unchanged against the cluster of CRADLE_TEST_KUBECONFIG when its CAPI CRDs
store v1beta1 (a cluster whose CRDs store v1beta2 is skipped, saying so: a
CRD's storage is the cluster's, and this suite does not change another
user's CRDs). Each test works in a namespace of its own.

With CRADLE_TEST_CAPI_CORE naming a Cluster API core manager of the v1beta1
contract (v1.9.x), the server cases run that program instead of capicore's
core (capijudge.py): the real controllers judge the stand-in, on the same
assertions.
"""

import os
import sys
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
import capijudge  # noqa: E402
from capicore import MERGE, Kube, KubeError  # noqa: E402

TIMEOUT = 30
KUBE = None
KUBECONFIG = None
SERVER = None
SKIP = None
BOOT = "bootstrap.cluster.x-k8s.io"
CP = "controlplane.cluster.x-k8s.io"
CORE = "/apis/cluster.x-k8s.io/v1beta1"
INFRA = "/apis/infrastructure.cluster.x-k8s.io/v1beta1"


def setUpModule():
    global KUBE, KUBECONFIG, SERVER, SKIP
    # a wrong CRADLE_TEST_CAPI_CORE fails before any server starts
    print("CAPI core here: " + capijudge.judging(), file=sys.stderr)
    KUBECONFIG = os.environ.get("CRADLE_TEST_KUBECONFIG")
    if not KUBECONFIG:
        import kubeapi_harness
        SERVER = kubeapi_harness.Server([]).start(timeout=120)
        KUBECONFIG = os.path.join(SERVER.state, "kubeconfig")
    try:
        KUBE = Kube(KUBECONFIG)
        C.ensure_crds(KUBE, storage="v1beta1")
        for group, plural in (("cluster.x-k8s.io", "clusters"), ("cluster.x-k8s.io", "machines"),
                              ("cluster.x-k8s.io", "machinedeployments"), (C.INFRA_GROUP, "metal3machines")):
            stored = C.stored_version(KUBE, group, plural)
            if stored != "v1beta1":
                SKIP = "this cluster's %s.%s CRD stores %s, not v1beta1" % (plural, group, stored)
                break
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


def objref(api_version, kind, name, ns):
    """A v1beta1 reference (corev1.ObjectReference)."""
    return {"apiVersion": api_version, "kind": kind, "name": name, "namespace": ns}


def v1beta1_condition(obj, type_):
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


def v1beta2_condition(obj, type_):
    st = (obj or {}).get("status") or {}
    return next((c for c in (st.get("v1beta2") or {}).get("conditions") or [] if c["type"] == type_), None)


class Conversion(unittest.TestCase):
    """from_v1beta1() and to_v1beta1(), without a server."""

    def test_machine_round_trip(self):
        served = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
                  "metadata": {"name": "m", "resourceVersion": "1"},
                  "spec": {"clusterName": "c",
                           "bootstrap": {"configRef": objref(BOOT + "/v1alpha1", "OpenshiftAssistedConfig", "m",
                                                             "ns")},
                           "infrastructureRef": objref(C.INFRA_GROUP + "/v1beta1", "Metal3Machine", "m", "ns")},
                  "status": {"bootstrapReady": True, "phase": "Provisioning",
                             "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u"},
                             "conditions": [{"type": "Ready", "status": "False", "severity": "Info",
                                             "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                             "v1beta2": {"conditions": [{"type": "Paused", "status": "False", "reason": "NotPaused",
                                                         "message": "",
                                                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}}
        seen = C.from_v1beta1(served)
        self.assertEqual(seen["spec"]["bootstrap"]["configRef"],
                         {"apiGroup": BOOT, "kind": "OpenshiftAssistedConfig", "name": "m"})
        self.assertEqual(seen["spec"]["infrastructureRef"]["apiGroup"], C.INFRA_GROUP)
        self.assertEqual(seen["status"]["initialization"], {"bootstrapDataSecretCreated": True})
        self.assertEqual(seen["status"]["nodeRef"], {"name": "n1"})
        self.assertEqual([c["type"] for c in seen["status"]["conditions"]], ["Paused"])
        self.assertEqual(served["status"]["bootstrapReady"], True, "the served object is not changed")

        def api_version(group, kind):
            return {BOOT: BOOT + "/v1alpha1", C.INFRA_GROUP: C.INFRA_GROUP + "/v1beta1"}[group]
        patch = C.to_v1beta1(served, {
            "spec": {"bootstrap": {"dataSecretName": "m-data"}},
            "status": {"initialization": {"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
                       "nodeRef": {"name": "n2"},
                       "conditions": [{"type": "InfrastructureReady", "status": "True", "reason": "Ready",
                                       "message": "", "lastTransitionTime": "2026-01-02T00:00:00Z"},
                                      {"type": "Paused", "status": "False", "reason": "NotPaused", "message": "",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}, api_version, "ns")
        self.assertEqual(patch["spec"], {"bootstrap": {"dataSecretName": "m-data"}})
        st = patch["status"]
        self.assertNotIn("initialization", st)
        self.assertEqual((st["bootstrapReady"], st["infrastructureReady"]), (True, True))
        self.assertEqual(st["nodeRef"], {"apiVersion": "v1", "kind": "Node", "name": "n2"})
        self.assertEqual([c["type"] for c in st["v1beta2"]["conditions"]], ["InfrastructureReady", "Paused"])
        self.assertEqual(st["conditions"][0], {"type": "InfrastructureReady", "status": "True", "reason": "Ready",
                                               "lastTransitionTime": "2026-01-02T00:00:00Z"},
                         "v1beta1 omits an empty message (its schema wants at least one character)")
        self.assertEqual(st["conditions"][1]["severity"], "Info", "a False v1beta1 condition has a severity")
        ref_patch = C.to_v1beta1(served, {"spec": {"infrastructureRef": C.ref(C.INFRA_GROUP, "Metal3Machine", "x")}},
                                 api_version, "ns")
        self.assertEqual(ref_patch["spec"]["infrastructureRef"],
                         objref(C.INFRA_GROUP + "/v1beta1", "Metal3Machine", "x", "ns"))

    def test_sets_and_metal3_and_v1beta2_objects(self):
        ms = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet", "metadata": {"name": "s"},
              "status": {"replicas": 2, "readyReplicas": 1, "availableReplicas": 1,
                         "v1beta2": {"readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 2}}}
        self.assertEqual(C.from_v1beta1(ms)["status"], {"replicas": 2, "readyReplicas": 1, "availableReplicas": 1,
                                                        "upToDateReplicas": 2})
        st = C.to_v1beta1(ms, {"status": {"replicas": 3, "readyReplicas": 2, "upToDateReplicas": 3}},
                          None, "ns")["status"]
        self.assertEqual(st, {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3,
                              "v1beta2": {"readyReplicas": 2, "upToDateReplicas": 3}})
        m3m = {"apiVersion": C.INFRA_GROUP + "/v1beta1", "kind": "Metal3Machine", "metadata": {"name": "x"},
               "status": {"ready": True}}
        self.assertEqual(C.from_v1beta1(m3m)["status"], {"initialization": {"provisioned": True}})
        self.assertEqual(C.to_v1beta1(m3m, {"status": {"initialization": {"provisioned": True}}}, None, "ns"),
                         {"status": {"ready": True}})
        v2 = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "status": {"bootstrapReady": True}}
        self.assertIs(C.from_v1beta1(v2), v2)
        cfg = {"apiVersion": BOOT + "/v1alpha1", "kind": "OpenshiftAssistedConfig", "status": {"ready": True}}
        self.assertIs(C.from_v1beta1(cfg), cfg, "a provider's kind is the provider's own shape")


class Base(unittest.TestCase):
    deletion = False  # capicore's Machine finalizer (the real core always has it)

    def setUp(self):
        if SKIP:
            self.skipTest(SKIP)
        self.ns = "capi1-" + uuid.uuid4().hex[:8]
        # the core first, so that it is stopped after the namespace is gone: the real
        # core's finalizers (Cluster, Machine, sets) need it to go
        self.core = capijudge.core_for(KUBE, KUBECONFIG, self.ns, interval=0.1, deletion=self.deletion).start()
        self.addCleanup(self.core.stop)
        KUBE.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": self.ns}})
        self.addCleanup(C.remove_namespace, KUBE, self.ns)
        self.res = C.Resolver(KUBE)

    def post(self, base, plural, body):
        """body created as a cluster with CAPI's webhooks stores it (the
        real core's webhooks; capicore plays none)."""
        body = dict(body)
        body["metadata"] = dict(body.get("metadata") or {}, namespace=self.ns)
        return KUBE.request("POST", "%s/namespaces/%s/%s" % (base, self.ns, plural), self.core.admit(body))

    def get(self, base, plural, name):
        try:
            return KUBE.request("GET", "%s/namespaces/%s/%s/%s" % (base, self.ns, plural, name))
        except KubeError as e:
            if e.status == 404:
                return None
            raise

    def provider(self, group, kind, name, spec=None):
        """A provider's object at the version its CRD stores."""
        return KUBE.request("POST", self.res.path(self.ns, group, kind), {
            "apiVersion": self.res.api_version(group, kind), "kind": kind,
            "metadata": {"name": name, "namespace": self.ns}, "spec": spec or {}})

    def provider_status(self, group, kind, name, status):
        return KUBE.request("PATCH", self.res.path(self.ns, group, kind, name, "status"), {"status": status}, MERGE)

    def until(self, what, fn, timeout=TIMEOUT):
        try:
            return C.wait(what, fn, timeout, 0.1)
        except C.LabError:
            raise AssertionError("%s (%s errors: %s)" % (what, self.core.name, self.core.errors[-3:]))

    @staticmethod
    def controller_of(obj):
        return [(r["kind"], r["name"]) for r in (obj or {})["metadata"].get("ownerReferences") or []
                if r.get("controller")]

    def cluster(self, name, paused=False):
        self.post(INFRA, "metal3clusters", {
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3Cluster",
            "metadata": {"name": name},
            "spec": {"controlPlaneEndpoint": {"host": "api.%s.example.com" % name, "port": 6443}}})
        self.provider(CP, "OpenshiftAssistedControlPlane", name, {
            "distributionVersion": "4.14.0", "replicas": 3,
            "machineTemplate": {"infrastructureRef": objref("infrastructure.cluster.x-k8s.io/v1beta1",
                                                            "Metal3MachineTemplate", name + "-cp", self.ns)}})
        spec = {"infrastructureRef": objref("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Cluster", name, self.ns),
                "controlPlaneRef": objref(self.res.api_version(CP, "OpenshiftAssistedControlPlane"),
                                          "OpenshiftAssistedControlPlane", name, self.ns)}
        if paused:
            spec["paused"] = True
        return self.post(CORE, "clusters", {
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": name}, "spec": spec})

    def machine(self, name, cluster, **meta):
        self.provider(BOOT, "OpenshiftAssistedConfig", name)
        self.post(INFRA, "metal3machines", {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                            "kind": "Metal3Machine", "metadata": {"name": name}, "spec": {}})
        return self.post(CORE, "machines", {
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine", "metadata": dict(meta, name=name),
            "spec": {"clusterName": cluster,
                     "bootstrap": {"configRef": objref(self.res.api_version(BOOT, "OpenshiftAssistedConfig"),
                                                       "OpenshiftAssistedConfig", name, self.ns)},
                     "infrastructureRef": objref("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", name,
                                                 self.ns)}})

    def patch_if_there(self, path, patch):
        """A merge patch that a vanished object does not fail (clean-ups)."""
        try:
            KUBE.request("PATCH", path, patch, MERGE)
        except KubeError as e:
            if e.status != 404:
                raise

    def config(self, name):
        try:
            return KUBE.request("GET", self.res.path(self.ns, BOOT, "OpenshiftAssistedConfig", name))
        except KubeError as e:
            if e.status == 404:
                return None
            raise


class Clusters(Base):
    def test_cluster_initialization_in_v1beta1_terms(self):
        self.cluster("c1")
        c = self.until("infrastructureReady", lambda: (lambda o: o if (o.get("status") or {}).get(
            "infrastructureReady") else None)(self.get(CORE, "clusters", "c1")))
        self.assertEqual(c["spec"]["controlPlaneEndpoint"], {"host": "api.c1.example.com", "port": 6443})
        self.assertEqual(c["status"]["phase"], "Provisioned")
        self.assertEqual(v1beta2_condition(c, "InfrastructureReady")["status"], "True")
        self.assertEqual(v1beta1_condition(c, "InfrastructureReady")["status"], "True")
        self.assertEqual(v1beta1_condition(c, "ControlPlaneInitialized")["severity"], "Info")
        self.assertNotIn("controlPlaneReady", c["status"])
        self.assertEqual(c["spec"]["infrastructureRef"]["apiVersion"], "infrastructure.cluster.x-k8s.io/v1beta1",
                         "the reference keeps its v1beta1 shape")
        m3c = self.get(INFRA, "metal3clusters", "c1")
        self.assertIs(m3c["status"]["ready"], True)
        self.assertEqual([r["kind"] for r in m3c["metadata"]["ownerReferences"]], ["Cluster"])
        self.assertEqual(m3c["metadata"]["ownerReferences"][0]["apiVersion"], "cluster.x-k8s.io/v1beta1")
        # CAPOA bc5cc25d's control plane says status.initialized (v1alpha2); v1alpha3 says initialization
        self.provider_status(CP, "OpenshiftAssistedControlPlane", "c1", {
            "initialized": True, "ready": True, "initialization": {"controlPlaneInitialized": True}})
        c = self.until("controlPlaneReady", lambda: (lambda o: o if o["status"].get("controlPlaneReady")
                                                     else None)(self.get(CORE, "clusters", "c1")))
        self.assertEqual(v1beta2_condition(c, "ControlPlaneInitialized")["status"], "True")
        self.assertNotIn("initialization", c["status"], "a v1beta1 Cluster has no status.initialization")


class Machines(Base):
    def test_machine_through_running_in_v1beta1_terms(self):
        self.cluster("c1")
        self.machine("m1", "c1")
        cfg = self.until("config controlled by the Machine", lambda: (lambda o: o if self.controller_of(o) else None)(
            self.config("m1")))
        self.assertEqual(self.controller_of(cfg), [("Machine", "m1")])
        self.assertEqual(cfg["metadata"]["labels"][C.CLUSTER_NAME_LABEL], "c1")
        self.core.settle()
        self.assertEqual(self.get(CORE, "machines", "m1")["status"]["phase"], "Pending")
        # CAPOA bc5cc25d's config says status.ready (v1alpha1); v1alpha2 says initialization
        self.provider_status(BOOT, "OpenshiftAssistedConfig", "m1", {
            "dataSecretName": "m1-data", "ready": True, "initialization": {"dataSecretCreated": True}})
        m = self.until("Machine provisioned", lambda: (lambda o: o if o["status"].get("phase") == "Provisioned"
                                                       else None)(self.get(CORE, "machines", "m1")))
        self.assertEqual(m["spec"]["bootstrap"]["dataSecretName"], "m1-data")
        self.assertEqual(m["spec"]["bootstrap"]["configRef"]["kind"], "OpenshiftAssistedConfig")
        self.assertIn("apiVersion", m["spec"]["bootstrap"]["configRef"])
        self.assertIs(m["status"]["bootstrapReady"], True)
        self.assertIs(m["status"]["infrastructureReady"], True)
        pid = "metal3://%s/m1/m1" % self.ns
        self.assertEqual(m["spec"]["providerID"], pid)
        self.assertIs(self.get(INFRA, "metal3machines", "m1")["status"]["ready"], True)
        self.assertEqual(v1beta2_condition(m, "InfrastructureReady")["status"], "True")
        # the workload cluster (here: the same API server) gets the Node
        meta = C.workload_node(KUBE, KUBECONFIG, self.ns, "c1", pid, prefix="capi1-node-")["metadata"]
        node, uid = meta["name"], meta["uid"]
        self.addCleanup(KUBE.request, "DELETE", "/api/v1/nodes/" + node)
        m = self.until("Machine Running", lambda: (lambda o: o if o["status"].get("phase") == "Running"
                                                   else None)(self.get(CORE, "machines", "m1")))
        self.assertEqual(m["status"]["nodeRef"], {"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid})


    def test_data_secret_name_waits_for_ready(self):
        """status.dataSecretName alone is not copied: the Machine acts once
        the config says status.ready (bootstrap §initialization completed)."""
        self.cluster("c1")
        self.machine("m2", "c1")
        self.until("config controlled", lambda: self.controller_of(self.config("m2")))
        self.provider_status(BOOT, "OpenshiftAssistedConfig", "m2", {"dataSecretName": "m2-data"})
        self.core.settle()
        m = self.get(CORE, "machines", "m2")
        self.assertNotIn("dataSecretName", m["spec"]["bootstrap"], "copied before the config was ready")
        self.assertEqual(m["status"]["phase"], "Pending")
        self.assertIsNot(m["status"].get("bootstrapReady"), True)


class Deletion(Base):
    deletion = True

    def drop_provider_finalizer(self, name):
        self.patch_if_there(self.res.path(self.ns, BOOT, "OpenshiftAssistedConfig", name),
                            {"metadata": {"finalizers": None}})

    def test_machine_goes_after_its_config_and_infrastructure(self):
        """CAPI core's Machine finalizer: a deleted Machine deletes its
        infrastructure machine and bootstrap config and goes once both are
        gone, a provider's finalizer on the config holding it, even when
        its Cluster went first."""
        self.addCleanup(self.drop_provider_finalizer, "m1")
        self.cluster("c1")
        self.machine("m1", "c1")
        self.until("the Machine's finalizer", lambda: C.MACHINE_FINALIZER in (
            self.get(CORE, "machines", "m1")["metadata"].get("finalizers") or []))
        self.until("config controlled", lambda: self.controller_of(self.config("m1")))
        KUBE.request("PATCH", self.res.path(self.ns, BOOT, "OpenshiftAssistedConfig", "m1"),
                     {"metadata": {"finalizers": ["example.com/provider"]}}, MERGE)
        KUBE.request("DELETE", "%s/namespaces/%s/clusters/c1" % (CORE, self.ns))
        KUBE.request("DELETE", "%s/namespaces/%s/machines/m1" % (CORE, self.ns))
        self.until("the infrastructure machine deleted", lambda: self.get(INFRA, "metal3machines", "m1") is None)
        cfg = self.until("the config deleting", lambda: (lambda o: o if o and o["metadata"].get(
            "deletionTimestamp") else None)(self.config("m1")))
        self.assertIsNotNone(cfg)
        self.core.settle()
        self.assertIsNotNone(self.get(CORE, "machines", "m1"), "the Machine waits for its config")
        self.drop_provider_finalizer("m1")
        self.until("the Machine gone", lambda: self.get(CORE, "machines", "m1") is None)


    def test_paused_machine_deletion_waits(self):
        """A paused Machine's deletion waits until it is unpaused: its
        infrastructure machine stays, and so does the Machine."""
        self.cluster("c1")
        self.machine("m1", "c1")
        self.until("the Machine's finalizer", lambda: C.MACHINE_FINALIZER in (
            self.get(CORE, "machines", "m1")["metadata"].get("finalizers") or []))
        path = "%s/namespaces/%s/machines/m1" % (CORE, self.ns)
        KUBE.request("PATCH", path, {"metadata": {"annotations": {C.PAUSED_ANNOTATION: ""}}}, MERGE)
        self.addCleanup(self.patch_if_there, path, {"metadata": {"annotations": {C.PAUSED_ANNOTATION: None}}})
        self.until("Paused", lambda: (v1beta2_condition(self.get(CORE, "machines", "m1"), "Paused") or {})
                   .get("status") == "True")
        KUBE.request("DELETE", path)
        self.core.settle()
        self.assertIsNotNone(self.get(INFRA, "metal3machines", "m1"), "deleted while paused")
        self.assertIsNotNone(self.get(CORE, "machines", "m1"))
        KUBE.request("PATCH", path, {"metadata": {"annotations": {C.PAUSED_ANNOTATION: None}}}, MERGE)
        self.until("the Machine gone once unpaused", lambda: self.get(CORE, "machines", "m1") is None)
        self.assertIsNone(self.get(INFRA, "metal3machines", "m1"))


class Pausing(Base):
    def unpause(self, plural, name, patch):
        self.patch_if_there("%s/namespaces/%s/%s/%s" % (CORE, self.ns, plural, name), patch)

    def test_paused_cluster(self):
        """Nothing of a Cluster with spec.paused is reconciled; its objects
        say so in a v1beta2 Paused condition (bootstrap §pausing)."""
        self.cluster("c1", paused=True)
        # the real core does not delete what is paused either: unpaused before the namespace goes
        self.addCleanup(self.unpause, "clusters", "c1", {"spec": {"paused": False}})
        self.machine("m1", "c1")
        self.until("Paused on the Machine", lambda: (v1beta2_condition(self.get(CORE, "machines", "m1"), "Paused")
                                                     or {}).get("status") == "True")
        self.core.settle()
        self.assertEqual(self.controller_of(self.config("m1")), [])
        c = self.get(CORE, "clusters", "c1")
        self.assertEqual(v1beta2_condition(c, "Paused")["status"], "True")
        # not copied from the Metal3Cluster (the real core writes v1beta1's empty struct)
        self.assertIn((c["spec"].get("controlPlaneEndpoint") or {}).get("host"), (None, ""))
        self.unpause("clusters", "c1", {"spec": {"paused": False}})
        self.until("config controlled once unpaused", lambda: self.controller_of(self.config("m1")))
        self.until("Paused False", lambda: (v1beta2_condition(self.get(CORE, "machines", "m1"), "Paused")
                                            or {}).get("status") == "False")

    def test_paused_annotation(self):
        self.cluster("c1")
        self.machine("m1", "c1", annotations={C.PAUSED_ANNOTATION: ""})
        self.addCleanup(self.unpause, "machines", "m1", {"metadata": {"annotations": {C.PAUSED_ANNOTATION: None}}})
        self.machine("m2", "c1")
        self.until("m2 reconciled", lambda: self.controller_of(self.config("m2")))
        self.until("m1's Paused condition", lambda: v1beta2_condition(self.get(CORE, "machines", "m1"), "Paused"))
        self.core.settle()
        self.assertEqual(self.controller_of(self.config("m1")), [])
        self.assertEqual(v1beta2_condition(self.get(CORE, "machines", "m1"), "Paused")["status"], "True")
        self.assertEqual(v1beta2_condition(self.get(CORE, "machines", "m2"), "Paused")["status"], "False")


class Sets(Base):
    def test_machine_deployment_in_v1beta1_terms(self):
        self.cluster("c1")
        boot_tpl = self.res.api_version(BOOT, "OpenshiftAssistedConfigTemplate")
        self.provider(BOOT, "OpenshiftAssistedConfigTemplate", "workers",
                      {"template": {"spec": {"cpuArchitecture": "x86_64"}}})
        self.post(INFRA, "metal3machinetemplates", {
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3MachineTemplate",
            "metadata": {"name": "workers"},
            "spec": {"template": {"spec": {"image": {"url": "http://192.0.2.1/rhcos.qcow2", "checksum": "abc",
                                                     "checksumType": "sha256", "diskFormat": "qcow2"}}}}})
        self.post(CORE, "machinedeployments", {
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": {"name": "w"},
            # as CAPI's defaulting webhook leaves it (the real controller refuses a
            # MachineDeployment without a strategy; nothing here calls webhooks)
            "spec": {"clusterName": "c1", "replicas": 2,
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "selector": {"matchLabels": {"pool": "w", C.CLUSTER_NAME_LABEL: "c1"}},
                     "template": {"metadata": {"labels": {"pool": "w", C.CLUSTER_NAME_LABEL: "c1"}},
                                  "spec": {"clusterName": "c1",
                                           "bootstrap": {"configRef": objref(boot_tpl,
                                                                             "OpenshiftAssistedConfigTemplate",
                                                                             "workers", self.ns)},
                                           "infrastructureRef": objref("infrastructure.cluster.x-k8s.io/v1beta1",
                                                                       "Metal3MachineTemplate", "workers",
                                                                       self.ns)}}}})
        sel = C.DEPLOYMENT_NAME_LABEL + "%3Dw"

        def machines():
            return KUBE.request("GET", CORE + "/namespaces/%s/machines?labelSelector=%s" % (self.ns, sel))["items"]
        self.until("2 Machines", lambda: len(machines()) == 2)
        for m in machines():
            cref = m["spec"]["bootstrap"]["configRef"]
            self.assertEqual((cref["apiVersion"], cref["kind"], cref["namespace"]),
                             (self.res.api_version(BOOT, "OpenshiftAssistedConfig"), "OpenshiftAssistedConfig",
                              self.ns))
            iref = m["spec"]["infrastructureRef"]
            self.assertEqual((iref["apiVersion"], iref["kind"]),
                             ("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine"))
            m3m = self.get(INFRA, "metal3machines", iref["name"])
            self.assertEqual(m3m["spec"]["image"]["url"], "http://192.0.2.1/rhcos.qcow2")
            self.assertEqual(self.controller_of(m)[0][0], "MachineSet")
        # the counters may arrive in separate writes (the real core updates v1beta2's
        # upToDateReplicas once each Machine's UpToDate condition is in)
        def counted():
            st = (self.get(CORE, "machinedeployments", "w") or {}).get("status") or {}
            return (st.get("replicas"), st.get("updatedReplicas"), (st.get("v1beta2") or {}).get("upToDateReplicas"))
        self.until("MachineDeployment counts", lambda: counted() == (2, 2, 2))


if __name__ == "__main__":
    unittest.main(verbosity=2)
