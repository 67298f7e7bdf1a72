"""A stand-in for Cluster API core's side of the v1beta2 provider contracts.

Written from the contract pages of the Cluster API book
(tests/reference has no copy; ../shared/reference/cluster-api/docs/book/src/
developer/providers/contracts/: bootstrap-config.md, control-plane.md, cited
below as "bootstrap §…" and "control plane §…"), so that a bootstrap or
control-plane provider (cradle-hub's) can be tested without the real core
controllers. It plays, against any kube-apiserver (tests/kubeapi's or the
cluster of CRADLE_TEST_KUBECONFIG), what those controllers do to the objects
of one namespace:

  * Cluster: owns its InfraCluster and ControlPlane (an owner reference and
    the cluster-name label), copies the InfraCluster's
    spec.controlPlaneEndpoint to the Cluster (control plane §"endpoint"; a
    control plane's own spec.controlPlaneEndpoint is not read: CAPOA's
    kind has none), sets status.initialization.
    infrastructureProvisioned from the InfraCluster's
    status.initialization.provisioned (or v1beta1 status.ready) and
    controlPlaneInitialized from the control plane's
    status.initialization.controlPlaneInitialized (or v1beta1
    status.initialized) with the ControlPlaneInitialized condition (control
    plane §"initialization completed"), and mirrors the control plane's
    Available condition as ControlPlaneAvailable (control plane
    §"conditions");
  * Machine: takes its bootstrap config and infrastructure machine as their
    controller owner, copies the config's status.dataSecretName to
    spec.bootstrap.dataSecretName and sets status.initialization.
    bootstrapDataSecretCreated once the config says
    status.initialization.dataSecretCreated (or v1beta1 status.ready)
    (bootstrap §"data secret", §"initialization completed"); mirrors the
    config's Ready condition as BootstrapConfigReady (bootstrap
    §"conditions"); copies providerID and addresses from the provisioned
    infrastructure machine; finds its Node in the workload cluster (the
    <cluster>-kubeconfig Secret, control plane §"Cluster kubeconfig
    management") by providerID; phase Pending, Provisioning, Provisioned,
    Running;
  * MachineSet / MachineDeployment: Machines whose bootstrap config and
    infrastructure machine are cloned from the templates their
    spec.template names (the template's spec.template.spec, bootstrap
    §"BootstrapConfigTemplate"), with owner references and the
    cluster-name label;
  * pausing (bootstrap and control plane §"pausing"): nothing of a Cluster
    whose spec.paused is true, nor any object with the
    cluster.x-k8s.io/paused annotation, is reconciled; each of the core
    kinds shows a Paused condition.

And a minimal infrastructure provider, Metal3's kinds without Metal3's
controllers (no BareMetalHost): a Metal3Cluster with a
spec.controlPlaneEndpoint is provisioned; a Metal3Machine is provisioned
with a providerID once its Machine has a dataSecretName.

Objects served at v1beta1 (a cluster whose CAPI CRDs store v1beta1, as
Cluster API up to 1.10 installs them, and the providers of that time, CAPOA
bc5cc25d among them) are read and written in their own shape: the stand-in
reasons in v1beta2 terms and converts at the edge (from_v1beta1(),
to_v1beta1()), as the real core's conversion does for the fields it touches.

What it leaves out is in README.md. Its writes are merge patches of what
changed only, so a provider writing the same objects is not overwritten.
Standard library and python3-yaml.
"""

import copy
import glob
import hashlib
import os
import random
import re
import string
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "hub"))
from hublab import Kube, KubeError, LabError, wait  # noqa: E402,F401 (Kube, LabError: for callers)

CORE = "/apis/cluster.x-k8s.io/v1beta2"
CORE_API_VERSION = "cluster.x-k8s.io/v1beta2"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = "application/merge-patch+json"

# labels and annotations the contract pages name
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
# the Machine controller's finalizer (MachineFinalizer, api/v1beta1/machine_types.go in v1.9.5, the same in
# v1beta2)
MACHINE_FINALIZER = "machine.cluster.x-k8s.io"
# Cluster API core's own selector labels (api/core/v1beta2/common_types.go);
# providers must not depend on them
SET_NAME_LABEL = "cluster.x-k8s.io/set-name"
DEPLOYMENT_NAME_LABEL = "cluster.x-k8s.io/deployment-name"

INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


def reference_dir():
    return os.environ.get("KUBEAPI_REFERENCE") or os.path.join(TESTS, "reference")


def crd_files():
    """The CRDs of tests/reference the CAPI tests need: CAPI core's, CAPOA's
    bootstrap and control-plane kinds, Metal3's clusters and machines."""
    ref = reference_dir()
    out = []
    for pat in ("cluster-api/core/config/crd/bases/*.yaml", "capoa/*/config/crd/bases/*.yaml",
                "metal3-capi/config/crd/bases/*.yaml"):
        out.extend(sorted(glob.glob(os.path.join(ref, pat))))
    return out


# The contract labels a provider's installation puts on its CRDs (kustomize,
# from the provider's config/crd/kustomization.yaml; the bases copied into the
# reference have none): which of a CRD's versions speak which contract. CAPI
# core picks the version of a reference by them and refuses a CRD without one
# (contracts/overview.md §"API version labels"). Per group, as
# openshift-assisted/cluster-api-provider-openshift-assisted's
# {bootstrap,controlplane}/config/crd/kustomization.yaml and
# metal3-io/cluster-api-provider-metal3's config/crd/kustomization.yaml (at
# the commits the reference copies) say them.
CONTRACT_LABELS = {
    "bootstrap.cluster.x-k8s.io": {"cluster.x-k8s.io/v1beta1": "v1alpha1", "cluster.x-k8s.io/v1beta2": "v1alpha2"},
    "controlplane.cluster.x-k8s.io": {"cluster.x-k8s.io/v1beta1": "v1alpha2",
                                      "cluster.x-k8s.io/v1beta2": "v1alpha3"},
    INFRA_GROUP: {"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"},
}
CONTRACT_LABEL_PREFIX = "cluster.x-k8s.io/v"


def contract_labels(doc, labels=None):
    """The contract labels (labels, default CONTRACT_LABELS, by group) of
    the versions doc serves, for a CRD that has none of its own."""
    meta = doc.setdefault("metadata", {})
    if any(k.startswith(CONTRACT_LABEL_PREFIX) for k in meta.get("labels") or {}):
        return doc
    served = {v["name"] for v in doc["spec"].get("versions") or [] if v.get("served")}
    pairs = {}
    for label, versions in ((labels or CONTRACT_LABELS).get(doc["spec"].get("group")) or {}).items():
        keep = [v for v in versions.split("_") if v in served]
        if keep:
            pairs[label] = "_".join(keep)
    if pairs:
        meta["labels"] = dict(meta.get("labels") or {}, **pairs)
    return doc


def kube_version_key(v):
    """Kubernetes' order of API versions (v1alpha1 < v1beta1 < v1 < v2)."""
    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", v)
    if not m:
        return (-1, 0, 0, v)
    return (int(m.group(1)), {"alpha": 0, "beta": 1, None: 2}[m.group(2)], int(m.group(3) or 0), v)


def latest_contract_version(labels, contracts):
    """The latest version named by the first of contracts (e.g. ["v1beta2",
    "v1beta1"]) whose cluster.x-k8s.io/<contract> label labels has, or
    None (upstream's GetLatestContractAndAPIVersionFromContract)."""
    for c in contracts:
        versions = [v for v in (labels.get("cluster.x-k8s.io/" + c) or "").split("_") if v]
        if versions:
            return max(versions, key=kube_version_key)
    return None


def crd_documents(files=None, storage=None, labels=None):
    """The CRDs of files, with their contract labels (contract_labels();
    labels as there). storage="v1beta1" installs them as in Cluster API's
    v1beta1 era (CAPI and CAPM3 up to 1.10, CAPOA up to bc5cc25d): each kind
    stored and served at its v1beta1-contract version only (CAPI core's
    v1beta1; a provider's the latest its cluster.x-k8s.io/v1beta1 label
    names). The reference bases serve a newer version beside it with no
    conversion webhook, so an API server would convert between the two with
    None, which prunes what the other schema lacks: a real kube-apiserver's
    namespace controller, deleting at the preferred v1beta2, wrote Machines
    back without their references' apiVersion."""
    import yaml
    for f in files or crd_files():
        with open(f) as fh:
            for doc in yaml.safe_load_all(fh):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    if storage:
                        _install_era(doc, storage, labels)
                    yield contract_labels(doc, labels)


def _install_era(doc, contract, labels):
    """Stores and serves doc at the version that speaks contract only."""
    versions = doc["spec"].get("versions") or []
    group = doc["spec"].get("group")
    if group == "cluster.x-k8s.io":
        keep = contract
    else:
        keep = latest_contract_version(dict((labels or CONTRACT_LABELS).get(group) or {}, **_labels(doc)), [contract])
    if keep and any(v["name"] == keep for v in versions):
        for v in versions:
            v["storage"] = v["served"] = v["name"] == keep


def write_crds(directory, files=None, storage=None, labels=None, prefix="capi"):
    """crd_documents() written one per file into directory (for a test
    kube-apiserver's --apply); returns their paths."""
    import yaml
    os.makedirs(directory, exist_ok=True)
    paths = []
    for i, doc in enumerate(crd_documents(files, storage, labels)):
        p = os.path.join(directory, "%s-%03d.yaml" % (prefix, i))
        with open(p, "w") as f:
            yaml.safe_dump(doc, f)
        paths.append(p)
    return paths


def workload_node(kube, kubeconfig, namespace, cluster, provider_id, prefix="capi-node-"):
    """A test's workload cluster, the API server of kubeconfig itself: the
    <cluster>-kubeconfig Secret naming it (as a control plane writes it)
    and a Node with provider_id, its name unique. Returns the Node; the
    caller deletes it (Nodes are cluster-wide)."""
    import base64
    with open(kubeconfig, "rb") as f:
        kc = f.read()
    kube.request("POST", "/api/v1/namespaces/%s/secrets" % namespace, {
        "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {"name": cluster + "-kubeconfig", "labels": {CLUSTER_NAME_LABEL: cluster}},
        "data": {"value": base64.b64encode(kc).decode()}})
    return kube.request("POST", "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": prefix + _rand(8)},
        "spec": {"providerID": provider_id}})


def remove_namespace(kube, namespace, timeout=60):
    """Deletes namespace and waits until it is gone, while the core that
    put its finalizers on the namespace's objects still runs (the real
    core always does; the stand-in with deletion=True). If it is not gone
    in time, the core kinds' finalizers are removed, so that nothing stays
    behind on a real cluster, and LabError says what held it."""
    path = "/api/v1/namespaces/" + namespace
    try:
        kube.request("DELETE", path)
    except KubeError as e:
        if e.status == 404:
            return
        raise

    def gone():
        try:
            kube.request("GET", path)
            return False
        except KubeError as e:
            if e.status == 404:
                return True
            raise
    try:
        wait("namespace %s gone" % namespace, gone, timeout, 0.2)
        return
    except LabError:
        held = []
    for plural in ("machinedeployments", "machinesets", "machines", "clusters"):
        base = "/apis/cluster.x-k8s.io/%s/namespaces/%s/%s" % (
            stored_version(kube, "cluster.x-k8s.io", plural) or "v1beta2", namespace, plural)
        for o in kube.request("GET", base).get("items") or []:
            if o["metadata"].get("finalizers"):
                held.append("%s/%s %s" % (plural, o["metadata"]["name"], o["metadata"]["finalizers"]))
                kube.request("PATCH", "%s/%s" % (base, o["metadata"]["name"]),
                             [{"op": "remove", "path": "/metadata/finalizers"}], "application/json-patch+json")
    raise LabError("namespace %s not gone after %ss; finalizers removed by the lab: %s" % (
        namespace, timeout, "; ".join(held) or "none of CAPI core's kinds"))


def stored_version(kube, group, plural):
    """The version a CRD of the cluster stores, or None without that CRD."""
    try:
        crd = kube.request("GET", "%s/%s.%s" % (CRDS, plural, group))
    except KubeError as e:
        if e.status == 404:
            return None
        raise
    return next((v["name"] for v in crd["spec"]["versions"] if v.get("storage")), None)


def ensure_crds(kube, files=None, timeout=60, storage=None, labels=None):
    """Creates each CRD of files (default crd_files(); storage and labels as
    crd_documents()) the cluster lacks and waits until all are Established.
    A CRD already there is left as it is and none is ever removed: a CRD is
    cluster-wide, and deleting it deletes every object of its kind, others'
    too. Returns the CRD names."""
    names = []
    for doc in crd_documents(files, storage, labels):
        names.append(doc["metadata"]["name"])
        try:
            kube.request("POST", CRDS, doc)
        except KubeError as e:
            if e.status != 409:
                raise
    wait("the CAPI CRDs to be established", lambda: all(_established(kube, n) for n in names), timeout, 0.1)
    return names


def _established(kube, name):
    conds = (kube.request("GET", CRDS + "/" + name).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conds)


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def condition(obj, type_):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def ref(api_group, kind, name):
    """A ContractVersionedObjectReference (v1beta2: apiGroup, kind, name)."""
    return {"apiGroup": api_group, "kind": kind, "name": name}


def _rand(n=5):
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def _labels(obj):
    return (obj.get("metadata") or {}).get("labels") or {}


def _truthy_init(obj, field, v1beta1_field):
    st = (obj or {}).get("status") or {}
    return bool((st.get("initialization") or {}).get(field)) or bool(st.get(v1beta1_field))


# ---- the v1beta1 shape --------------------------------------------------------------
# Cluster API v1beta1 (up to 1.10) differs from v1beta2, for the fields the
# stand-in touches, in: references (ObjectReference: apiVersion, kind, name,
# namespace against apiGroup, kind, name), the initialization flags (plain
# booleans in status), the conditions (v1beta2's under status.v1beta2), a
# Machine's nodeRef (an ObjectReference) and the set counters
# (updatedReplicas; v1beta2's under status.v1beta2). Metal3's v1beta1 kinds say
# status.ready where v1beta2 says status.initialization.provisioned.

V1BETA1_READY = {  # kind -> {v1beta2 initialization field: v1beta1 status field}
    "Cluster": {"infrastructureProvisioned": "infrastructureReady", "controlPlaneInitialized": "controlPlaneReady"},
    "Machine": {"bootstrapDataSecretCreated": "bootstrapReady", "infrastructureProvisioned": "infrastructureReady"},
    "Metal3Cluster": {"provisioned": "ready"},
    "Metal3Machine": {"provisioned": "ready"},
}
SET_KINDS = ("MachineSet", "MachineDeployment")
REF_PATHS = (("infrastructureRef",), ("controlPlaneRef",), ("bootstrap", "configRef"),
             ("template", "spec", "infrastructureRef"), ("template", "spec", "bootstrap", "configRef"))


def served_v1beta1(obj):
    api = (obj or {}).get("apiVersion") or ""
    return api.endswith("/v1beta1") and api.split("/")[0] in ("cluster.x-k8s.io", INFRA_GROUP)


def _at(d, path):
    for k in path[:-1]:
        d = d.get(k) if isinstance(d, dict) else None
        if not isinstance(d, dict):
            return None, None
    return d, path[-1]


def _map_refs(spec, shape_key, convert):
    """Replaces, in place, each reference of spec (REF_PATHS) that has
    shape_key with convert(reference)."""
    for path in REF_PATHS:
        parent, key = _at(spec or {}, path)
        r = parent.get(key) if parent else None
        if isinstance(r, dict) and shape_key in r:
            parent[key] = convert(r)


def from_v1beta1(obj):
    """obj (as served at v1beta1) in the v1beta2 shape; anything else as it is."""
    if not served_v1beta1(obj):
        return obj
    obj = copy.deepcopy(obj)
    kind = obj.get("kind")
    _map_refs(obj.get("spec"), "apiVersion",
              lambda r: ref(r["apiVersion"].rpartition("/")[0], r.get("kind"), r.get("name")))
    st = obj.get("status")
    if isinstance(st, dict):
        v2 = st.pop("v1beta2", None) or {}
        st.pop("conditions", None)
        if "conditions" in v2:
            st["conditions"] = v2["conditions"]
        init = {new: True for new, old in (V1BETA1_READY.get(kind) or {}).items() if st.pop(old, None)}
        if init:
            st["initialization"] = init
        if isinstance(st.get("nodeRef"), dict):
            st["nodeRef"] = {"name": st["nodeRef"].get("name")}
        if kind in SET_KINDS:
            for k in ("readyReplicas", "availableReplicas", "upToDateReplicas"):
                st.pop(k, None)
                if k in v2:
                    st[k] = v2[k]
    return obj


def to_v1beta1(obj, patch, api_version_of, namespace):
    """patch (a body or merge patch in the v1beta2 shape) for obj, which is
    served at v1beta1. api_version_of(group, kind) is the apiVersion a
    reference to that kind names."""
    if not served_v1beta1(obj):
        return patch
    patch = copy.deepcopy(patch)
    kind = obj.get("kind")
    _map_refs(patch.get("spec"), "apiGroup",
              lambda r: {"apiVersion": api_version_of(r["apiGroup"], r.get("kind")), "kind": r.get("kind"),
                         "name": r.get("name"), "namespace": namespace})
    st = patch.get("status")
    if isinstance(st, dict):
        v2 = {}
        for new, old in (V1BETA1_READY.get(kind) or {}).items():
            if (st.get("initialization") or {}).get(new):
                st[old] = True
        st.pop("initialization", None)
        if "conditions" in st:
            v2["conditions"] = st["conditions"]
            # v1beta1 omits an empty reason or message (its schema wants at least one character)
            st["conditions"] = [dict({k: c[k] for k in ("type", "status", "reason", "message", "lastTransitionTime")
                                      if c.get(k)},
                                     **({} if c["status"] == "True" else {"severity": "Info"}))
                                for c in st["conditions"]]
        if isinstance(st.get("nodeRef"), dict):
            st["nodeRef"] = dict({"apiVersion": "v1", "kind": "Node", "name": st["nodeRef"].get("name")},
                                 **{k: v for k, v in st["nodeRef"].items() if k == "uid"})
        if kind in SET_KINDS:
            for k in ("readyReplicas", "availableReplicas", "upToDateReplicas"):
                if k in st:
                    v2[k] = st[k]
            if "upToDateReplicas" in st:
                st["updatedReplicas"] = st.pop("upToDateReplicas")
        if v2:
            st["v1beta2"] = v2
    return patch


class Resolver(object):
    """Paths of the objects a reference names. A provider's kind is read at
    the latest version its CRD's contract label names: the label of the
    contract the core speaks (v1beta1 where the Cluster CRD stores v1beta1,
    as Cluster API up to 1.10 installs it; else v1beta2) or, under v1beta2,
    of the older v1beta1 it stays compatible with; a CRD with neither is
    refused, as the real core refuses it (contracts/overview.md §"API
    version labels"). CAPI core's own kinds are read at their storage
    version."""

    def __init__(self, kube):
        self.kube = kube
        self.cache = {}

    def resource(self, group, kind):
        key = (group, kind)
        if key not in self.cache:
            self.cache[key] = self._lookup(group, kind)
        return self.cache[key]

    def contract(self):
        """The contract the core speaks: the Cluster CRD's storage version."""
        return self.resource("cluster.x-k8s.io", "Cluster")[0]

    def _lookup(self, group, kind):
        gdoc = self.kube.request("GET", "/apis/" + group)
        for v in gdoc.get("versions") or []:
            res = self.kube.request("GET", "/apis/%s/%s" % (group, v["version"]))
            for r in res.get("resources") or []:
                if r.get("kind") == kind and "/" not in r["name"]:
                    crd = self.kube.request("GET", "%s/%s.%s" % (CRDS, r["name"], group))
                    if group == "cluster.x-k8s.io":
                        return next(x["name"] for x in crd["spec"]["versions"] if x.get("storage")), r["name"]
                    return self._contract_version(crd), r["name"]
        raise LookupError("no resource of kind %s in group %s" % (kind, group))

    def _contract_version(self, crd):
        contract = self.contract()
        compatible = [contract] + (["v1beta1"] if contract == "v1beta2" else [])
        version = latest_contract_version(_labels(crd), compatible)
        if version:
            return version
        raise LookupError("the CRD %s has no contract label %s: CAPI core cannot tell which of its versions "
                          "speaks the contract" % (crd["metadata"]["name"],
                                                   " or ".join("cluster.x-k8s.io/" + c for c in compatible)))

    def path(self, ns, group, kind, name=None, sub=None):
        version, plural = self.resource(group, kind)
        p = "/apis/%s/%s/namespaces/%s/%s" % (group, version, ns, plural)
        if name:
            p += "/" + name
        if sub:
            p += "/" + sub
        return p

    def api_version(self, group, kind):
        return "%s/%s" % (group, self.resource(group, kind)[0])


class Loop(object):
    """A controller's loop in a thread: reconcile() every interval seconds
    until stop(); a failed pass is recorded in errors (the last 50) and the
    next pass retries. Subclasses set name and define reconcile()."""

    name = "loop"

    def __init__(self, interval):
        self.interval = interval
        self.errors = []        # (time, repr) of failed passes, the last 50
        self.passes = 0
        self._stop = threading.Event()
        self._thread = None
        self._pass_done = threading.Condition()

    def start(self):
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=10):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError("%s did not stop within %ss" % (self.name, timeout))
            self._thread = None

    def _run(self):
        while not self._stop.is_set():
            try:
                self.reconcile()
            except Exception as e:  # noqa: BLE001 - a controller retries; the test reads .errors
                self._error(e)
            with self._pass_done:
                self.passes += 1
                self._pass_done.notify_all()
            self._stop.wait(self.interval)

    def _error(self, e):
        self.errors = (self.errors + [(time.time(), repr(e))])[-50:]

    def settle(self, n=2, timeout=30):
        """Returns after n more complete passes (so everything written
        before the call has been seen)."""
        with self._pass_done:
            target = self.passes + n
            if not self._pass_done.wait_for(lambda: self.passes >= target, timeout):
                raise TimeoutError("%s made no pass in %ss (errors: %s)" % (self.name, timeout, self.errors[-3:]))

    def reconcile(self):
        raise NotImplementedError


class CapiCore(Loop):
    """CAPI core's controllers (and a Metal3 stand-in) over one namespace.

    CapiCore(kube, namespace).start() ... .stop(). kube: anything with
    request(method, path, body=None, ctype=...) that returns the decoded
    JSON and raises an exception with .status on HTTP errors (hublab.Kube).
    infrastructure=False leaves the Metal3 kinds to someone else;
    node_lookup(cluster, provider_id) -> (Node name, uid) or None replaces reading
    the workload cluster through <cluster>-kubeconfig. core=False plays
    only the Metal3 stand-in (the real core is someone else: capijudge.py).
    """

    name = "capicore"

    def __init__(self, kube, namespace, interval=0.2, infrastructure=True, node_lookup=None, deletion=False,
                 core=True):
        super().__init__(interval)
        self.core_kinds = core
        self.kube = kube
        self.ns = namespace
        self.infrastructure = infrastructure
        # CAPI core's Machine finalizer: a deleted Machine goes after its
        # bootstrap config and infrastructure machine (off by default: a
        # test that stops the stand-in before removing its namespace would
        # leave its Machines behind)
        self.deletion = deletion
        self.node_lookup = node_lookup or self._workload_node
        self.res = Resolver(kube)

    def admit(self, obj, operation="CREATE"):
        """obj as it is: the stand-in plays none of CAPI's webhooks (the real
        core's, capijudge.RealCore.admit(), default and validate)."""
        return obj

    @property
    def core(self):
        """The core kinds' API path, at the version the Cluster CRD stores
        (v1beta2, or v1beta1 on a cluster of Cluster API up to 1.10)."""
        return "/apis/cluster.x-k8s.io/" + self.res.resource("cluster.x-k8s.io", "Cluster")[0]

    def reconcile(self):
        """One pass over the namespace (also usable without start())."""
        core = self.core
        clusters = {c["metadata"]["name"]: c for c in self._list(core + "/namespaces/%s/clusters" % self.ns)}
        if not self.core_kinds:
            if self.infrastructure:
                self.reconcile_metal3(clusters, self._list(core + "/namespaces/%s/machines" % self.ns))
            return
        for md in self._list(core + "/namespaces/%s/machinedeployments" % self.ns):
            self._guard(self.reconcile_machine_deployment, md, clusters)
        for ms in self._list(core + "/namespaces/%s/machinesets" % self.ns):
            self._guard(self.reconcile_machine_set, ms, clusters)
        machines = self._list(core + "/namespaces/%s/machines" % self.ns)
        if self.infrastructure:
            self.reconcile_metal3(clusters, machines)
        for m in machines:
            self._guard(self.reconcile_machine, m, clusters)
        for c in clusters.values():
            self._guard(self.reconcile_cluster, c)

    def _guard(self, fn, *args):
        """One object's reconciliation; its failure is recorded in errors
        and does not stop the pass (a conflict or a vanished object is
        simply retried by the next pass)."""
        try:
            fn(*args)
        except KubeError as e:
            if e.status not in (404, 409):
                self._error(e)
        except (LookupError, OSError) as e:
            self._error(e)

    # ---- helpers ----------------------------------------------------------------------

    def _list(self, path):
        try:
            doc = self.kube.request("GET", path)
            api = doc.get("apiVersion")
            return [from_v1beta1(dict(o, apiVersion=o.get("apiVersion") or api, kind=o.get("kind") or
                                      (doc.get("kind") or "")[:-len("List")]))
                    for o in doc.get("items") or []]
        except KubeError as e:
            if e.status == 404:
                return []
            raise

    def _get_ref(self, r):
        if not r or not r.get("name"):
            return None
        try:
            return from_v1beta1(self.kube.request("GET", self.res.path(self.ns, r["apiGroup"], r["kind"], r["name"])))
        except KubeError as e:
            if e.status == 404:
                return None
            raise

    def _obj_path(self, obj, sub=None):
        group = obj["apiVersion"].split("/")[0]
        return self.res.path(self.ns, group, obj["kind"], obj["metadata"]["name"], sub)

    def _patch(self, obj, patch, sub=None):
        if not patch:
            return obj
        body = to_v1beta1(obj, dict(patch), self.res.api_version, self.ns)
        body.setdefault("metadata", {})["resourceVersion"] = obj["metadata"]["resourceVersion"]
        return from_v1beta1(self.kube.request("PATCH", self._obj_path(obj, sub), body, MERGE))

    def _create(self, group, kind, obj):
        """POSTs obj (in the v1beta2 shape, apiVersion as served)."""
        body = to_v1beta1(obj, obj, self.res.api_version, self.ns)
        return from_v1beta1(self.kube.request("POST", self.res.path(self.ns, group, kind), body))

    def _patch_status(self, obj, status):
        """A merge patch of the fields of status that differ; conditions
        (a list) as a whole, keeping lastTransitionTime where the status did
        not change."""
        cur = obj.get("status") or {}
        diff = {}
        for k, v in status.items():
            if k == "conditions":
                v = self._merge_conditions(cur.get("conditions") or [], v, obj)
            if k == "initialization":
                v = dict(cur.get("initialization") or {}, **v)
            if cur.get(k) != v:
                diff[k] = v
        if diff:
            return self._patch(obj, {"status": diff}, "status")
        return obj

    @staticmethod
    def _merge_conditions(old, new, obj):
        gen = obj["metadata"].get("generation")
        by_type = {c["type"]: c for c in old}
        for c in new:
            prev = by_type.get(c["type"])
            c = dict(c, observedGeneration=gen) if gen else dict(c)
            c.setdefault("message", "")
            if prev and prev.get("status") == c["status"]:
                c["lastTransitionTime"] = prev.get("lastTransitionTime") or now()
            else:
                c["lastTransitionTime"] = now()
            by_type[c["type"]] = c
        return sorted(by_type.values(), key=lambda c: c["type"])

    @staticmethod
    def _cond(type_, ok, reason_true, reason_false, message=""):
        return {"type": type_, "status": "True" if ok else "False",
                "reason": reason_true if ok else reason_false, "message": message}

    def _paused(self, obj, cluster):
        return bool((cluster or {}).get("spec", {}).get("paused")) or \
            PAUSED_ANNOTATION in ((obj.get("metadata") or {}).get("annotations") or {})

    def _paused_condition(self, obj, paused):
        return self._cond("Paused", paused, "Paused", "NotPaused")

    def _own(self, obj, owner, controller, cluster_name):
        """Adds owner (and the cluster-name label) to obj's metadata; as
        controller it replaces another controller reference (a MachineSet's
        on what it cloned, before the Machine takes it over)."""
        meta = obj["metadata"]
        refs = list(meta.get("ownerReferences") or [])
        mine = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"]}
        if controller:
            mine.update(controller=True, blockOwnerDeletion=True)
        patch = {}
        if mine not in refs:
            refs = [r for r in refs if r.get("uid") != mine["uid"] and not (controller and r.get("controller"))]
            patch["ownerReferences"] = refs + [mine]
        if cluster_name and _labels(obj).get(CLUSTER_NAME_LABEL) != cluster_name:
            patch["labels"] = {CLUSTER_NAME_LABEL: cluster_name}
        if patch:
            return self._patch(obj, {"metadata": patch})
        return obj

    # ---- Cluster --------------------------------------------------------------------

    def reconcile_cluster(self, c):
        spec = c.get("spec") or {}
        paused = self._paused(c, c)
        conds = [self._paused_condition(c, paused)]
        if paused:
            self._patch_status(c, {"conditions": conds})
            return
        name = c["metadata"]["name"]
        infra = self._get_ref(spec.get("infrastructureRef"))
        cp = self._get_ref(spec.get("controlPlaneRef"))
        if infra is not None:
            infra = self._own(infra, c, False, name)
        if cp is not None:
            cp = self._own(cp, c, False, name)
        # the endpoint is the InfraCluster's (CAPOA's control plane has no spec.controlPlaneEndpoint)
        ep = ((infra or {}).get("spec") or {}).get("controlPlaneEndpoint") or {}
        endpoint = {"host": ep["host"], "port": ep.get("port") or 6443} if ep.get("host") else None
        if endpoint and not (spec.get("controlPlaneEndpoint") or {}).get("host"):
            c = self._patch(c, {"spec": {"controlPlaneEndpoint": endpoint}})
        init = (c.get("status") or {}).get("initialization") or {}
        infra_ok = spec.get("infrastructureRef") is None or _truthy_init(infra, "provisioned", "ready") or \
            bool(init.get("infrastructureProvisioned"))
        cp_init = _truthy_init(cp, "controlPlaneInitialized", "initialized") or \
            bool(init.get("controlPlaneInitialized"))
        conds.append(self._cond("InfrastructureReady", infra_ok, "Ready", "NotReady"))
        conds.append(self._cond("ControlPlaneInitialized", cp_init, "Initialized", "NotInitialized"))
        avail = condition(cp, "Available")
        if avail:
            cp_avail = dict(type="ControlPlaneAvailable", status=avail["status"],
                            reason=avail.get("reason") or "Available", message=avail.get("message") or "")
        else:
            cp_avail = dict(type="ControlPlaneAvailable", status="Unknown", reason="NoReasonReported",
                            message="" if cp else "the control plane does not exist")
        conds.append(cp_avail)
        available = infra_ok and cp_avail["status"] == "True"
        conds.append(self._cond("Available", available, "Available", "NotAvailable"))
        new_init = {}
        if infra_ok:
            new_init["infrastructureProvisioned"] = True
        if cp_init:
            new_init["controlPlaneInitialized"] = True
        has_ep = bool(((c.get("spec") or {}).get("controlPlaneEndpoint") or {}).get("host"))
        phase = "Provisioned" if infra_ok and has_ep else ("Provisioning" if spec.get("infrastructureRef")
                                                            else "Pending")
        status = {"conditions": conds, "phase": phase}
        if new_init:
            status["initialization"] = new_init
        self._patch_status(c, status)

    # ---- Machine --------------------------------------------------------------------

    def reconcile_machine(self, m, clusters):
        spec = m.get("spec") or {}
        cname = spec.get("clusterName")
        cluster = clusters.get(cname)
        paused = self._paused(m, cluster)
        if self.deletion and m["metadata"].get("deletionTimestamp") and not paused:
            # CAPI core deletes what a Machine references even when its Cluster is gone already;
            # a paused Machine's deletion waits, as everything else of it does
            self._delete_machine(m)
            return
        conds = [self._paused_condition(m, paused)]
        if paused or cluster is None:
            self._patch_status(m, {"conditions": conds})
            return
        if _labels(m).get(CLUSTER_NAME_LABEL) != cname:
            m = self._patch(m, {"metadata": {"labels": {CLUSTER_NAME_LABEL: cname}}})
        finalizers = m["metadata"].get("finalizers") or []
        if self.deletion and MACHINE_FINALIZER not in finalizers:
            m = self._patch(m, {"metadata": {"finalizers": finalizers + [MACHINE_FINALIZER]}})
        bootstrap = spec.get("bootstrap") or {}
        cfg = self._get_ref(bootstrap.get("configRef"))
        status = {}
        init = {}
        if cfg is not None:
            cfg = self._own(cfg, m, True, cname)
            created = _truthy_init(cfg, "dataSecretCreated", "ready")
            secret = (cfg.get("status") or {}).get("dataSecretName")
            if created and secret:
                if bootstrap.get("dataSecretName") != secret:
                    m = self._patch(m, {"spec": {"bootstrap": {"dataSecretName": secret}}})
                init["bootstrapDataSecretCreated"] = True
            ready = condition(cfg, "Ready")
            if ready:
                conds.append({"type": "BootstrapConfigReady", "status": ready["status"],
                              "reason": ready.get("reason") or "Ready", "message": ready.get("message") or ""})
            else:
                conds.append(self._cond("BootstrapConfigReady", created and bool(secret), "Ready", "NotReady"))
        elif bootstrap.get("dataSecretName"):
            init["bootstrapDataSecretCreated"] = True
        infra = self._get_ref(spec.get("infrastructureRef"))
        if infra is not None:
            infra = self._own(infra, m, True, cname)
            provisioned = _truthy_init(infra, "provisioned", "ready")
            conds.append(self._cond("InfrastructureReady", provisioned, "Ready", "NotReady"))
            if provisioned:
                init["infrastructureProvisioned"] = True
                pid = (infra.get("spec") or {}).get("providerID")
                if pid and (m.get("spec") or {}).get("providerID") != pid:
                    m = self._patch(m, {"spec": {"providerID": pid}})
                addrs = (infra.get("status") or {}).get("addresses")
                if addrs:
                    status["addresses"] = addrs
        node = (m.get("status") or {}).get("nodeRef")
        pid = (m.get("spec") or {}).get("providerID")
        if not node and pid and init.get("infrastructureProvisioned"):
            found = self.node_lookup(cluster, pid)
            if found:
                node = {"name": found[0]}
                if served_v1beta1(m):
                    node["uid"] = found[1]  # v1beta1's nodeRef is an ObjectReference, uid and all
                status["nodeRef"] = node
        if node:
            phase = "Running"
        elif init.get("infrastructureProvisioned"):
            phase = "Provisioned"
        elif init.get("bootstrapDataSecretCreated"):
            phase = "Provisioning"
        else:
            phase = "Pending"
        status.update(phase=phase, conditions=conds)
        if init:
            status["initialization"] = init
        self._patch_status(m, status)

    def _delete_machine(self, m):
        """A deleted Machine (its finalizer ours): its bootstrap config and
        infrastructure machine deleted, and the finalizer removed once both
        are gone (the real controller's reconcileDelete, without the drain
        and the Node's deletion)."""
        finalizers = m["metadata"].get("finalizers") or []
        if MACHINE_FINALIZER not in finalizers:
            return
        spec = m.get("spec") or {}
        waiting = False
        for r in (((spec.get("bootstrap") or {}).get("configRef")), spec.get("infrastructureRef")):
            obj = self._get_ref(r)
            if obj is None:
                continue
            waiting = True
            if not obj["metadata"].get("deletionTimestamp"):
                self.kube.request("DELETE", self._obj_path(obj))
        if not waiting:
            self._patch(m, {"metadata": {"finalizers": [f for f in finalizers if f != MACHINE_FINALIZER]}})

    def _workload_node(self, cluster, provider_id):
        """(name, uid) of the Node of the workload cluster (through
        <cluster>-kubeconfig, key value) whose spec.providerID is
        provider_id, or None."""
        try:
            sec = self.kube.request("GET", "/api/v1/namespaces/%s/secrets/%s-kubeconfig"
                                    % (self.ns, cluster["metadata"]["name"]))
        except KubeError as e:
            if e.status == 404:
                return None
            raise
        import base64
        data = base64.b64decode((sec.get("data") or {}).get("value") or "")
        if not data:
            return None
        with tempfile.NamedTemporaryFile(prefix="capicore-kubeconfig-", mode="wb") as f:
            f.write(data)
            f.flush()
            try:
                wl = Kube(f.name)
            except Exception:  # noqa: BLE001 - an unusable kubeconfig: no Node yet
                return None
        try:
            for n in wl.request("GET", "/api/v1/nodes").get("items") or []:
                if (n.get("spec") or {}).get("providerID") == provider_id:
                    return n["metadata"]["name"], n["metadata"]["uid"]
        except (OSError, KubeError):
            return None
        finally:
            wl.close()
        return None

    # ---- MachineSet, MachineDeployment --------------------------------------------

    def _clone(self, template_ref, owner, cname, labels):
        """A new object from a <Kind>Template's spec.template (bootstrap
        §"BootstrapConfigTemplate"), owned by owner (not as controller: the
        Machine takes that over). Returns its reference."""
        tpl = self._get_ref(template_ref)
        if tpl is None:
            raise LookupError("template %s %s not found" % (template_ref.get("kind"), template_ref.get("name")))
        kind = template_ref["kind"][:-len("Template")] if template_ref["kind"].endswith("Template") \
            else template_ref["kind"]
        group = template_ref["apiGroup"]
        t = (tpl.get("spec") or {}).get("template") or {}
        tmeta = t.get("metadata") or {}
        name = "%s-%s" % (owner["metadata"]["name"], _rand())
        obj = {"apiVersion": self.res.api_version(group, kind), "kind": kind,
               "metadata": {"name": name, "namespace": self.ns,
                            "labels": {**(tmeta.get("labels") or {}), **labels, CLUSTER_NAME_LABEL: cname},
                            "ownerReferences": [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                                 "name": owner["metadata"]["name"],
                                                 "uid": owner["metadata"]["uid"]}]},
               "spec": t.get("spec") or {}}
        if tmeta.get("annotations"):
            obj["metadata"]["annotations"] = tmeta["annotations"]
        self._create(group, kind, obj)
        return ref(group, kind, name)

    def reconcile_machine_set(self, ms, clusters):
        spec = ms.get("spec") or {}
        cname = spec.get("clusterName")
        cluster = clusters.get(cname)
        paused = self._paused(ms, cluster)
        if paused or cluster is None:
            self._patch_status(ms, {"conditions": [self._paused_condition(ms, paused)]})
            return
        name = ms["metadata"]["name"]
        if _labels(ms).get(CLUSTER_NAME_LABEL) != cname:
            ms = self._patch(ms, {"metadata": {"labels": {CLUSTER_NAME_LABEL: cname}}})
        uid = ms["metadata"]["uid"]
        machines = [m for m in self._list(self.core + "/namespaces/%s/machines?labelSelector=%s"
                                          % (self.ns, urllib.parse.quote("%s=%s" % (SET_NAME_LABEL, name))))
                    if any(r.get("uid") == uid and r.get("controller") for r in
                           m["metadata"].get("ownerReferences") or [])
                    and not m["metadata"].get("deletionTimestamp")]
        want = spec.get("replicas")
        want = 1 if want is None else want  # CAPI's defaulting webhook: nil is 1
        t = spec.get("template") or {}
        tspec = t.get("spec") or {}
        labels = dict((t.get("metadata") or {}).get("labels") or {}, **{SET_NAME_LABEL: name})
        if DEPLOYMENT_NAME_LABEL in _labels(ms):
            labels[DEPLOYMENT_NAME_LABEL] = _labels(ms)[DEPLOYMENT_NAME_LABEL]
        for _ in range(want - len(machines)):
            boot = dict(tspec.get("bootstrap") or {})
            if boot.get("configRef"):
                boot = {"configRef": self._clone(boot["configRef"], ms, cname, labels)}
            infra = self._clone(tspec["infrastructureRef"], ms, cname, labels)
            mspec = dict(tspec, bootstrap=boot, infrastructureRef=infra, clusterName=cname)
            m = {"apiVersion": self.res.api_version("cluster.x-k8s.io", "Machine"), "kind": "Machine",
                 "metadata": {"name": "%s-%s" % (name, _rand()), "namespace": self.ns,
                              "labels": dict(labels, **{CLUSTER_NAME_LABEL: cname}),
                              "ownerReferences": [{"apiVersion": ms["apiVersion"], "kind": "MachineSet",
                                                   "name": name, "uid": uid, "controller": True,
                                                   "blockOwnerDeletion": True}]},
                 "spec": mspec}
            ann = (t.get("metadata") or {}).get("annotations")
            if ann:
                m["metadata"]["annotations"] = ann
            machines.append(self._create("cluster.x-k8s.io", "Machine", m))
        if len(machines) > want:
            machines.sort(key=lambda x: x["metadata"]["creationTimestamp"])
            for m in machines[want:]:
                self.kube.request("DELETE", self._obj_path(m))
            machines = machines[:want]
        running = sum(1 for m in machines if (m.get("status") or {}).get("phase") == "Running")
        sel = (spec.get("selector") or {}).get("matchLabels") or {}
        status = {"replicas": len(machines), "readyReplicas": running, "availableReplicas": running,
                  "upToDateReplicas": len(machines), "conditions": [self._paused_condition(ms, False)]}
        if sel:
            status["selector"] = ",".join("%s=%s" % kv for kv in sorted(sel.items()))
        self._patch_status(ms, status)

    def reconcile_machine_deployment(self, md, clusters):
        spec = md.get("spec") or {}
        cname = spec.get("clusterName")
        cluster = clusters.get(cname)
        paused = self._paused(md, cluster) or bool(spec.get("paused"))
        if paused or cluster is None:
            self._patch_status(md, {"conditions": [self._paused_condition(md, paused)]})
            return
        name = md["metadata"]["name"]
        if _labels(md).get(CLUSTER_NAME_LABEL) != cname:
            md = self._patch(md, {"metadata": {"labels": {CLUSTER_NAME_LABEL: cname}}})
        t = spec.get("template") or {}
        digest = hashlib.sha256(repr(sorted((t.get("spec") or {}).items())).encode()).hexdigest()[:8]
        ms_name = "%s-%s" % (name, digest)
        want = spec.get("replicas")
        want = 1 if want is None else want
        try:
            ms = from_v1beta1(self.kube.request("GET", self.res.path(self.ns, "cluster.x-k8s.io", "MachineSet", ms_name)))
        except KubeError as e:
            if e.status != 404:
                raise
            tmeta = dict(t.get("metadata") or {})
            tmeta["labels"] = dict(tmeta.get("labels") or {}, **{DEPLOYMENT_NAME_LABEL: name})
            sel = dict(spec.get("selector") or {})
            sel["matchLabels"] = dict(sel.get("matchLabels") or {}, **{DEPLOYMENT_NAME_LABEL: name})
            ms = self._create("cluster.x-k8s.io", "MachineSet", {
                "apiVersion": self.res.api_version("cluster.x-k8s.io", "MachineSet"), "kind": "MachineSet",
                "metadata": {"name": ms_name, "namespace": self.ns,
                             "labels": {CLUSTER_NAME_LABEL: cname, DEPLOYMENT_NAME_LABEL: name},
                             "ownerReferences": [{"apiVersion": md["apiVersion"], "kind": "MachineDeployment",
                                                  "name": name, "uid": md["metadata"]["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]},
                "spec": {"clusterName": cname, "replicas": want, "selector": sel,
                         "template": dict(t, metadata=tmeta)}})
        if (ms.get("spec") or {}).get("replicas") != want:
            ms = self._patch(ms, {"spec": {"replicas": want}})
        st = ms.get("status") or {}
        status = {k: st.get(k, 0) for k in ("replicas", "readyReplicas", "availableReplicas", "upToDateReplicas")}
        if st.get("selector"):
            status["selector"] = st["selector"]
        status["conditions"] = [self._paused_condition(md, False)]
        self._patch_status(md, status)

    # ---- the Metal3 stand-in -------------------------------------------------------

    def reconcile_metal3(self, clusters, machines):
        """Metal3Cluster: provisioned once it has a controlPlaneEndpoint.
        Metal3Machine: provisioned once the Machine that owns it as
        controller has a spec.bootstrap.dataSecretName, with providerID
        metal3://<namespace>/<machine>/<metal3machine> and a Hostname
        address (no BareMetalHost: the stand-in has no hosts to pick)."""
        try:
            m3c = self._list(self.res.path(self.ns, INFRA_GROUP, "Metal3Cluster"))
            m3m = self._list(self.res.path(self.ns, INFRA_GROUP, "Metal3Machine"))
        except (LookupError, KubeError):
            return  # no Metal3 CRDs here
        for o in m3c:
            owner = self._owner_cluster(o, clusters)
            if self._paused(o, owner):
                continue
            ep = (o.get("spec") or {}).get("controlPlaneEndpoint") or {}
            ok = bool(ep.get("host"))
            self._guard(self._patch_status, o, {"initialization": {"provisioned": True}} if ok else {})
        by_uid = {m["metadata"]["uid"]: m for m in machines}
        for o in m3m:
            machine = next((by_uid.get(r.get("uid")) for r in o["metadata"].get("ownerReferences") or []
                            if r.get("kind") == "Machine" and r.get("controller")), None)
            if machine is None:
                continue
            cluster = clusters.get((machine.get("spec") or {}).get("clusterName"))
            if self._paused(o, cluster):
                continue
            if not ((machine.get("spec") or {}).get("bootstrap") or {}).get("dataSecretName"):
                continue
            name = o["metadata"]["name"]
            pid = "metal3://%s/%s/%s" % (self.ns, machine["metadata"]["name"], name)
            if (o.get("spec") or {}).get("providerID") != pid:
                o = self._patch(o, {"spec": {"providerID": pid}})
            self._guard(self._patch_status, o, {"initialization": {"provisioned": True},
                                                "addresses": [{"type": "Hostname", "address": name}]})

    @staticmethod
    def _owner_cluster(obj, clusters):
        for r in obj["metadata"].get("ownerReferences") or []:
            if r.get("kind") == "Cluster" and r.get("name") in clusters:
                return clusters[r["name"]]
        return None
