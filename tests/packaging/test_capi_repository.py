#!/usr/bin/python3
"""The Cluster API provider repository (packaging/capi/repository/), as
clusterctl's provider contract (contracts/clusterctl.md of the Cluster API
book) and the bootstrap and control-plane contracts ask:

  * layout: <provider-label>/v<version>/ with the components YAML and
    metadata.yaml, for bootstrap-cradle and control-plane-cradle, at the
    project's version; what packaging/capi/generate.py writes now;
  * metadata.yaml: clusterctl's validation rules, the release series of the
    version folder, contract v1beta2;
  * components: one Namespace, every namespaced object in it, the
    cluster.x-k8s.io/provider label on everything, only ${VAR} forms
    clusterctl substitutes, the Deployment's container called manager with
    the image packaging/hub names and --capi;
  * CRDs: name = plural.group, the cluster.x-k8s.io/v1beta2 label naming
    served versions, the template's shape (control plane
    §ControlPlaneTemplate);
  * RBAC: CAPI core's manager gets every verb on every provider kind through
    the aggregation label; the provider's own ClusterRole grants every
    (group, resource, verb) of NEEDS;
  * every CRD is accepted and Established by the test kube-apiserver (a real
    cluster gets those it lacks, and keeps them), which then takes a
    template through a server-side-apply dry run (ClusterClass) and a
    control plane without spec.replicas; with CRADLE_TEST_KUBECONFIG,
    every object of both files is accepted by a dry-run create (or, for a
    CRD that already exists there, a dry-run update) in a namespace of the
    test's own, as clusterctl would install it there.
"""
import copy
import json
import os
import re
import sys
import unittest
import uuid

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "kubeapi"))
sys.path.insert(0, os.path.join(SRC, "tests", "capi"))
sys.path.insert(0, os.path.join(SRC, "packaging", "capi"))

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed")
    sys.exit(77)

import generate  # noqa: E402

REPO = os.path.join(SRC, "packaging", "capi", "repository")
VERSION = generate.project_version()
PROVIDER_LABEL = "cluster.x-k8s.io/provider"
FILES = {"bootstrap-cradle": "bootstrap-components.yaml", "control-plane-cradle": "control-plane-components.yaml"}
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAMESPACED = {"Namespace": False, "CustomResourceDefinition": False, "ClusterRole": False,
              "ClusterRoleBinding": False, "ServiceAccount": True, "Role": True, "RoleBinding": True,
              "Deployment": True, "ConfigMap": True, "Service": True}
API_PATHS = {"Namespace": "/api/v1/namespaces", "ServiceAccount": "/api/v1/namespaces/%s/serviceaccounts",
             "CustomResourceDefinition": CRDS,
             "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
             "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
             "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles",
             "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings",
             "Deployment": "/apis/apps/v1/namespaces/%s/deployments"}

# What the provider (cradle-hub --capi) needs on the management cluster, and why
NEEDS = [
    # pausing (bootstrap and control plane §pausing: Cluster.spec.paused), the owner Cluster
    ("cluster.x-k8s.io", "clusters", ("get", "list", "watch")),
    # the control plane's Machines: made, labelled, deleted on scale-down (control plane §machines);
    # a config's owner Machine read (bootstrap §typical reconciliation)
    ("cluster.x-k8s.io", "machines", ("get", "list", "watch", "create", "patch", "delete")),
    # day-1 workers counted (capi.md §8)
    ("cluster.x-k8s.io", "machinedeployments", ("get", "list", "watch")),
    ("cluster.x-k8s.io", "machinesets", ("get", "list", "watch")),
    # its own kinds, their status (initialization, conditions, counters) and finalizers
    ("controlplane.cluster.x-k8s.io", "openshiftassistedcontrolplanes", ("get", "list", "watch", "patch")),
    ("controlplane.cluster.x-k8s.io", "openshiftassistedcontrolplanes/status", ("patch",)),
    ("controlplane.cluster.x-k8s.io", "openshiftassistedcontrolplanetemplates", ("get", "list", "watch")),
    ("bootstrap.cluster.x-k8s.io", "openshiftassistedconfigs", ("get", "list", "watch", "create", "patch",
                                                               "delete")),
    ("bootstrap.cluster.x-k8s.io", "openshiftassistedconfigs/status", ("patch",)),
    ("bootstrap.cluster.x-k8s.io", "openshiftassistedconfigtemplates", ("get", "list", "watch")),
    # the machine template's infrastructure kind read, machines cloned from it (control plane §machines)
    ("infrastructure.cluster.x-k8s.io", "metal3machinetemplates", ("get", "list", "watch")),
    ("infrastructure.cluster.x-k8s.io", "metal3machines", ("get", "list", "watch", "create", "patch", "delete")),
    # a Metal3Machine's host: its boot MAC binds the host (issue 22 §3)
    ("metal3.io", "baremetalhosts", ("get", "list", "watch")),
    # the data Secret (bootstrap §data secret), <cluster>-kubeconfig (control plane §kubeconfig),
    # pull secrets
    ("", "secrets", ("get", "list", "watch", "create", "patch", "delete")),
    ("", "events", ("create", "patch")),
    # leader election (--leader-elect), in its own namespace
    ("coordination.k8s.io", "leases", ("get", "create", "update")),
]


def components(provider):
    with open(os.path.join(REPO, provider, "v" + VERSION, FILES[provider])) as f:
        return f.read()


def substitute(text, values):
    """clusterctl's variables: ${VAR}, ${VAR:=default}, ${VAR=default},
    ${VAR:-default} (drone/envsubst); a variable without a value or a
    default is an error, as clusterctl reports it."""
    def one(m):
        name, op, default = m.group(1), m.group(2), m.group(3)
        if values.get(name):
            return values[name]
        if op:
            return default
        raise KeyError(name)
    return re.sub(r"\$\{\s*([A-Za-z_][A-Za-z0-9_]*)(?:(:=|=|:-)([^}]*))?\s*\}", one, text)


def objects(provider, values=None):
    if values is None:
        values = {"CRADLE_SERVICE_URL": "https://assisted.example.com"}
    text = substitute(components(provider), values)
    return [d for d in yaml.safe_load_all(text) if d]


def granted(rules, group, resource, verb):
    for r in rules:
        if (group in r.get("apiGroups", []) or "*" in r.get("apiGroups", [])) and \
                (resource in r.get("resources", []) or "*" in r.get("resources", [])) and \
                (verb in r.get("verbs", []) or "*" in r.get("verbs", [])):
            return True
    return False


class Layout(unittest.TestCase):
    def test_files(self):
        self.assertEqual(sorted(os.listdir(REPO)), sorted(FILES))
        for provider, name in FILES.items():
            self.assertEqual(os.listdir(os.path.join(REPO, provider)), ["v" + VERSION])
            self.assertEqual(sorted(os.listdir(os.path.join(REPO, provider, "v" + VERSION))),
                             sorted([name, "metadata.yaml"]))

    def test_generated(self):
        for rel, text in generate.files(VERSION).items():
            with open(os.path.join(REPO, rel)) as f:
                self.assertEqual(f.read(), text, "%s differs from what packaging/capi/generate.py writes" % rel)

    def test_metadata(self):
        major, minor = (int(x) for x in VERSION.split(".")[:2])
        for provider in FILES:
            with open(os.path.join(REPO, provider, "v" + VERSION, "metadata.yaml")) as f:
                m = yaml.safe_load(f)
            self.assertEqual(m["apiVersion"], "clusterctl.cluster.x-k8s.io/v1alpha3")
            self.assertEqual(m["kind"], "Metadata")
            self.assertIn({"major": major, "minor": minor, "contract": "v1beta2"}, m["releaseSeries"])


class Components(unittest.TestCase):
    def test_namespace_labels_variables(self):
        for provider in FILES:
            objs = objects(provider)
            nss = [o for o in objs if o["kind"] == "Namespace"]
            self.assertEqual(len(nss), 1, provider)
            for o in objs:
                self.assertIn(o["kind"], NAMESPACED, o["kind"])
                if NAMESPACED[o["kind"]]:
                    self.assertEqual(o["metadata"].get("namespace"), nss[0]["metadata"]["name"],
                                     (provider, o["kind"], o["metadata"]["name"]))
                else:
                    self.assertNotIn("namespace", o["metadata"])
                self.assertEqual(o["metadata"]["labels"][PROVIDER_LABEL], provider, (o["kind"], o["metadata"]["name"]))
            # a variable without a default must be given
            with self.assertRaises(KeyError):
                substitute(components(provider) + "${CRADLE_UNSET_VARIABLE}", {})
        with self.assertRaises(KeyError):
            objects("control-plane-cradle", {})

    def test_deployment(self):
        deps = [o for o in objects("control-plane-cradle") if o["kind"] == "Deployment"]
        self.assertEqual(len(deps), 1)
        self.assertEqual([o for o in objects("bootstrap-cradle") if o["kind"] == "Deployment"], [],
                         "one cradle-hub serves both kinds: only the control-plane provider runs it")
        c = deps[0]["spec"]["template"]["spec"]["containers"]
        self.assertEqual([x["name"] for x in c], ["manager"])
        self.assertEqual(c[0]["image"], "localhost/cradle-hub:" + VERSION)
        with open(os.path.join(SRC, "packaging", "hub", "deployment.yaml")) as f:
            hub = [d for d in yaml.safe_load_all(f) if d and d["kind"] == "Deployment"][0]
        self.assertEqual(c[0]["image"], hub["spec"]["template"]["spec"]["containers"][0]["image"])
        self.assertIn("--capi", c[0]["args"])
        self.assertIn("--service-url=https://assisted.example.com", c[0]["args"])
        sa = deps[0]["spec"]["template"]["spec"]["serviceAccountName"]
        self.assertIn(sa, [o["metadata"]["name"] for o in objects("control-plane-cradle")
                           if o["kind"] == "ServiceAccount"])

    def test_crds(self):
        kinds = {}
        for provider in FILES:
            for crd in [o for o in objects(provider) if o["kind"] == "CustomResourceDefinition"]:
                spec = crd["spec"]
                self.assertEqual(crd["metadata"]["name"], "%s.%s" % (spec["names"]["plural"], spec["group"]))
                served = [v["name"] for v in spec["versions"] if v.get("served")]
                label = crd["metadata"]["labels"]["cluster.x-k8s.io/v1beta2"]
                for v in label.split("_"):
                    self.assertIn(v, served, crd["metadata"]["name"])
                self.assertEqual([v["name"] for v in spec["versions"] if v.get("storage")], [label.split("_")[-1]])
                self.assertNotIn("conversion", spec)
                kinds[spec["names"]["kind"]] = crd
        self.assertEqual(sorted(kinds), ["OpenshiftAssistedConfig", "OpenshiftAssistedConfigTemplate",
                                         "OpenshiftAssistedControlPlane", "OpenshiftAssistedControlPlaneTemplate"])
        self.assertIn("scale", kinds["OpenshiftAssistedControlPlane"]["spec"]["versions"][0]["subresources"])
        # the template: spec.template.{metadata, spec}, its spec the control plane's without replicas and
        # the machine template's infrastructureRef (control plane §ControlPlaneTemplate)
        t = kinds["OpenshiftAssistedControlPlaneTemplate"]["spec"]["versions"][0]
        self.assertEqual(t["name"], kinds["OpenshiftAssistedControlPlane"]["spec"]["versions"][0]["name"])
        tpl = t["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["template"]
        self.assertEqual(sorted(tpl["properties"]), ["metadata", "spec"])
        cp = kinds["OpenshiftAssistedControlPlane"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"][
            "properties"]["spec"]
        self.assertEqual(sorted(tpl["properties"]["spec"]["properties"]), sorted(set(cp["properties"]) - {"replicas"}))
        self.assertNotIn("infrastructureRef", tpl["properties"]["spec"]["properties"]["machineTemplate"]["properties"])
        for k in set(cp["properties"]) - {"replicas", "machineTemplate"}:
            self.assertEqual(tpl["properties"]["spec"]["properties"][k], cp["properties"][k], k)

    def test_rbac(self):
        every = objects("bootstrap-cradle") + objects("control-plane-cradle")
        crds = [o for o in every if o["kind"] == "CustomResourceDefinition"]
        agg = [o for o in every if o["kind"] == "ClusterRole"
               and o["metadata"]["labels"].get("cluster.x-k8s.io/aggregate-to-manager") == "true"]
        rules = [r for o in agg for r in o["rules"]]
        for crd in crds:
            for verb in ("create", "delete", "get", "list", "patch", "update", "watch"):
                self.assertTrue(granted(rules, crd["spec"]["group"], crd["spec"]["names"]["plural"], verb),
                                (crd["metadata"]["name"], verb))
        # the provider's own: bound to the Deployment's service account
        dep = [o for o in every if o["kind"] == "Deployment"][0]
        sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
        ns = dep["metadata"]["namespace"]

        def rules_of(binding_kind, role_kind):
            out = []
            for b in [o for o in every if o["kind"] == binding_kind]:
                if {"kind": "ServiceAccount", "name": sa, "namespace": ns} in b["subjects"]:
                    role = [o for o in every if o["kind"] == role_kind
                            and o["metadata"]["name"] == b["roleRef"]["name"]]
                    self.assertEqual(len(role), 1, b["roleRef"])
                    out += role[0]["rules"]
            return out
        cluster_rules = rules_of("ClusterRoleBinding", "ClusterRole")
        ns_rules = rules_of("RoleBinding", "Role")
        for group, resource, verbs in NEEDS:
            for verb in verbs:
                rules = ns_rules if resource == "leases" else cluster_rules
                self.assertTrue(granted(rules, group, resource, verb), (group, resource, verb))


class Server(unittest.TestCase):
    """The CRDs on the test kube-apiserver; everything on a real one (dry
    run). kubeapi.py serves no RBAC or apps kinds, so the other objects are
    checked only against CRADLE_TEST_KUBECONFIG."""

    @classmethod
    def setUpClass(cls):
        import capicore
        cls.server = None
        real = os.environ.get("CRADLE_TEST_KUBECONFIG")
        if not real:
            import kubeapi_harness
            cls.server = kubeapi_harness.Server([]).start(timeout=120)
        cls.kube = capicore.Kube(real or os.path.join(cls.server.state, "kubeconfig"))
        cls.real = bool(real)
        cls.ns = "capi-pkg-" + uuid.uuid4().hex[:8]
        cls.kube.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                        "metadata": {"name": cls.ns}})

    @classmethod
    def tearDownClass(cls):
        try:
            cls.kube.request("DELETE", "/api/v1/namespaces/" + cls.ns)
        finally:
            cls.kube.close()
            if cls.server:
                rc = cls.server.stop()
                if rc != 0 or "Traceback" in cls.server.stderr():
                    raise AssertionError("kubeapi: exit %s %s" % (rc, cls.server.stderr()[-2000:]))

    def crds(self):
        return [o for p in FILES for o in objects(p) if o["kind"] == "CustomResourceDefinition"]

    def test_crds_established_and_used(self):
        import capicore
        for crd in self.crds():
            try:
                self.kube.request("POST", CRDS, crd)
            except capicore.KubeError as e:
                # a real cluster's CRD is left as it is (CAPOA's, or an earlier run's): cluster-wide
                if e.status != 409 or not self.real:
                    raise
        capicore.wait("the provider's CRDs", lambda: all(capicore._established(self.kube, c["metadata"]["name"])
                                                         for c in self.crds()), 60, 0.1)
        base = "/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/%s/" % self.ns
        tpl = {"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha3", "kind": "OpenshiftAssistedControlPlaneTemplate",
               "metadata": {"name": "cc-cp", "namespace": self.ns},
               "spec": {"template": {"spec": {"distributionVersion": "4.19.0",
                                              "machineTemplate": {"deletion": {"nodeDrainTimeoutSeconds": 60}}}}}}
        # a server-side-apply dry run, as ClusterClass's topology controller makes one (bootstrap
        # §BootstrapConfigTemplate: support for SSA dry run)
        out = self.kube.request("PATCH", base + "openshiftassistedcontrolplanetemplates/cc-cp?dryRun=All&"
                                "fieldManager=capi-topology", tpl, "application/apply-patch+yaml")
        self.assertEqual(out["spec"], tpl["spec"])
        self.kube.request("POST", base + "openshiftassistedcontrolplanetemplates", tpl)
        # a control plane without spec.replicas is accepted
        cp = {"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha3", "kind": "OpenshiftAssistedControlPlane",
              "metadata": {"name": "cp", "namespace": self.ns},
              "spec": {"distributionVersion": "4.19.0", "machineTemplate": {"infrastructureRef": {
                  "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3MachineTemplate", "name": "cp"}}}}
        got = self.kube.request("POST", base + "openshiftassistedcontrolplanes", cp)
        self.assertNotIn("replicas", got["spec"])
        # a template that sets replicas is pruned of them (not part of the template)
        bad = copy.deepcopy(tpl)
        bad["metadata"]["name"] = "cc-cp2"
        bad["spec"]["template"]["spec"]["replicas"] = 3
        got = self.kube.request("POST", base + "openshiftassistedcontrolplanetemplates", bad)
        self.assertNotIn("replicas", got["spec"]["template"]["spec"])

    def test_dry_run_everything(self):
        if not self.real:
            self.skipTest("kubeapi.py serves no RBAC or apps kinds: against CRADLE_TEST_KUBECONFIG only")
        for provider in FILES:
            for o in objects(provider):
                o = copy.deepcopy(o)
                kind = o["kind"]
                if kind == "Namespace":
                    continue  # the test's own namespace stands in for the target namespace
                # clusterctl's target-namespace transformation, to the test's namespace
                if NAMESPACED[kind]:
                    o["metadata"]["namespace"] = self.ns
                for s in o.get("subjects") or []:
                    s["namespace"] = self.ns
                if kind in ("ClusterRole", "ClusterRoleBinding"):
                    o["metadata"]["name"] += "-" + self.ns
                    if "roleRef" in o:
                        o["roleRef"]["name"] += "-" + self.ns
                path = API_PATHS[kind] % self.ns if "%s" in API_PATHS[kind] else API_PATHS[kind]
                try:
                    self.kube.request("POST", path + "?dryRun=All", o)
                except Exception as e:  # noqa: BLE001
                    if getattr(e, "status", None) != 409 or kind != "CustomResourceDefinition":
                        raise AssertionError("%s %s: %s" % (kind, o["metadata"]["name"], e))
                    cur = self.kube.request("GET", path + "/" + o["metadata"]["name"])
                    o["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
                    self.kube.request("PUT", path + "/" + o["metadata"]["name"] + "?dryRun=All", o)


if __name__ == "__main__":
    unittest.main(verbosity=2)
