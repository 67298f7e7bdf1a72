#!/usr/bin/python3
"""`cradle controller` end to end (notes/controller.md §11), the test playing
what the new cluster's own components would do:

  - the service is the reference assisted-service (tests/service), with a
    cluster registered through the REST API, so that the service decides
    `finalizing` and `installed` by its own rules (notes §0.2); its hosts
    are put in `installing` by the fake's control API and report their
    stages through the agent API up to `Rebooting`, as the installer does;
  - the new cluster is the test kube-apiserver (tests/kubeapi), or the
    cluster CRADLE_TEST_KUBECONFIG names, with the OpenShift CRDs of
    tests/reference/openshift-api: the test creates proxies/cluster, Nodes
    that register and turn Ready (tests/installer/kubelab.py), kubelets'
    certificate requests made as the kubelet and the node bootstrapper make
    them, and the machine-config-server's log (test server only);
  - the controller runs as its Job runs it, configured by upstream's
    variables, by its upstream program name, with intervals of a fraction
    of a second (its cradle options).

Each test asserts on what the service recorded and on the cluster's state.
On a real cluster and service the tests that need a fake's control API
(seeding installing hosts, faults, pod log text) skip, saying why; every
name a test makes is its own (nodes, namespaces), and nothing assumes the
test is alone in the cluster.

Environment: CRADLE_BINARY, CRADLE_SOURCE_ROOT, CRADLE_TEST_KUBECONFIG and
CRADLE_TEST_SERVICE_URL (optional); CRADLE_TEST_SHOW_LOG=1 prints each
controller's log after its test.
"""
import copy
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "installer"))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, os.path.join(SRC, "tests", "kubeapi"))

try:
    import yaml  # noqa: F401
except ImportError:
    print("SKIP: python3-yaml is not installed")
    sys.exit(77)

import kubeapi_harness  # noqa: E402
import kubelab  # noqa: E402
from refclient import HubClient, RefService  # noqa: E402

BINARY = os.environ.get("CRADLE_BINARY") or os.path.join(SRC, "build", "cradle")
REFERENCE = os.path.join(SRC, "tests", "reference")
# proxies, ClusterVersion, ClusterOperators, BMHs, Provisioning, Machines,
# MachineConfigPools, OLM (notes §5.3-§5.5)
OPENSHIFT_CRDS = kubeapi_harness.openshift_crd_files()
CV_PATH = "/apis/config.openshift.io/v1/clusterversions"
CO_PATH = "/apis/config.openshift.io/v1/clusteroperators"
INGRESS_CA_PATH = "/api/v1/namespaces/openshift-config-managed/configmaps"
OBSERVED_INVENTORY = os.path.join(REFERENCE, "observed", "07-step-replies.json")
CSR_PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
BOOTSTRAPPER = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"
BOOTSTRAPPER_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:openshift-machine-config-operator"]
# the controller's rounds, a fraction of upstream's 30 s and 60 s
FAST = ["--poll-interval", "0.3", "--slow-poll-interval", "0.5", "--ready-interval", "0.2",
        "--fetch-interval", "0.2", "--retry-delay", "0.05", "--retry-max-delay", "0.2",
        "--dns-interval", "0.2", "--deletion-interval", "0.1", "--reboots-interval", "0.2"]
WAIT = 60
KUBECONFIG_NOINGRESS = ("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://api.test.example.com:6443\n"
                        "  name: test\ncontexts: []\nusers: []\n")


def wait_for(what, predicate, timeout=WAIT, interval=0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %d s waiting for %s" % (timeout, what))
        time.sleep(interval)


def observed_inventory():
    with open(OBSERVED_INVENTORY) as f:
        return json.load(f)["by_step_type"]["inventory"]["request_body_output_decoded"]



def without_cel_rules(o):
    """a copy of o without x-kubernetes-validations anywhere"""
    if isinstance(o, dict):
        return {k: without_cel_rules(v) for k, v in o.items() if k != "x-kubernetes-validations"}
    if isinstance(o, list):
        return [without_cel_rules(v) for v in o]
    return o

class Controller:
    """One `cradle controller` process, by the upstream program name."""

    def __init__(self, lab, env, args=(), wrapper=()):
        self.lab = lab
        self.log_path = os.path.join(lab.tmp, "controller-%s.stderr" % uuid.uuid4().hex[:6])
        link = os.path.join(lab.tmp, "assisted-installer-controller")
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(BINARY), link)
        full_env = {k: v for k, v in os.environ.items()
                    if k.startswith(("ASAN_", "UBSAN_", "LSAN_", "CRADLE_LOG_TARGET")) or k in ("PATH", "HOME")}
        full_env.update(env)
        self.stderr = open(self.log_path, "w")
        self.proc = subprocess.Popen(list(wrapper) + [link, "--token-file", os.path.join(lab.tmp, "no-token-file"),
                                      "--log-file", "", "--log-level", "debug"] + FAST + list(args),
                                     stdout=subprocess.DEVNULL, stderr=self.stderr, env=full_env,
                                     start_new_session=True)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def wait(self, timeout=WAIT):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            interesting = [line for line in self.log().splitlines() if 'msg="task ' not in line]
            raise AssertionError("the controller did not exit in %d s:\n%s" % (timeout, "\n".join(interesting[-40:])))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.stderr.close()
        return self.proc.returncode


class Lab(unittest.TestCase):
    """The service, the cluster and what the tests made in them."""

    @classmethod
    def setUpClass(cls):
        cls.start_lab()

    @classmethod
    def start_lab(cls, service_args=()):
        # class cleanups run even when setUpClass fails (tearDownClass
        # does not): nothing is left in /tmp or on the cluster then
        import shutil
        cls.tmp = tempfile.mkdtemp(prefix="cradle-controller-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.kube = kubelab.Cluster().start()
        cls.addClassCleanup(cls.kube.stop)
        cls.svc = RefService(token="t0k-controller", extra_args=list(service_args)).start()
        cls.addClassCleanup(cls.svc.stop)
        cls.hub = HubClient(cls.svc)
        for crd in OPENSHIFT_CRDS:
            cls.apply_crd(crd)
        cls.subnet = 0

    @classmethod
    def apply_crd(cls, path):
        for d in kubeapi_harness.yaml_docs(path):
            r = cls.kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", d)
            text = (r.raw or b"").decode("utf-8", "replace")
            if r.status == 422 and "x-kubernetes-validations" in text and "compilation failed" in text:
                # a cluster older than the CRD's CEL rules (the reference's
                # MachineConfigPool uses the format library, Kubernetes
                # 1.31; kube-apiserver 1.26 cannot compile it): what the
                # tests need is the schema, not those rules
                sys.stderr.write("CRD %s: this cluster cannot compile its CEL rules; applied without them\n"
                                 % d["metadata"]["name"])
                r = cls.kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                     without_cel_rules(d))
            if r.status not in (201, 409):
                raise AssertionError("CRD %s: %s" % (d["metadata"]["name"], r))
            cls.kube.wait_established(d["metadata"]["name"])

    def setUp(self):
        self.controllers = []
        self.prefix = "ctl-%s" % uuid.uuid4().hex[:6]
        self.namespace = self.prefix
        self.kube.ensure_namespace(self.namespace)
        self.proxy_cluster()
        type(self).subnet += 1
        self.net = "10.%d.%d" % (100 + self.subnet // 200, self.subnet % 200)

    def tearDown(self):
        for c in self.controllers:
            c.stop()
        if os.environ.get("CRADLE_TEST_SHOW_LOG"):
            # debugging: each controller's log (CRADLE_LOG_TARGET=stderr, as meson sets it)
            for c in self.controllers:
                print("controller exit %s:\n%s" % (c.proc.returncode, "\n".join(
                    line for line in c.log().splitlines() if 'msg="task ' not in line)[-6000:]))
        self.kube.cleanup()
        if not self.svc.real:
            self.svc.control("DELETE", "/faults")
        if self.kube.fake:
            self.kube.ctl("DELETE", "/faults")

    # -- the cluster --------------------------------------------------------
    def proxy_cluster(self):
        """proxies.config.openshift.io/cluster, which every OpenShift cluster
        has (a real one's is left as it is)."""
        r = self.kube.request("POST", "/apis/config.openshift.io/v1/proxies",
                              {"apiVersion": "config.openshift.io/v1", "kind": "Proxy",
                               "metadata": {"name": "cluster"}, "spec": {}})
        if r.status not in (201, 409):
            raise AssertionError("proxies/cluster: %s" % r)

    def node(self, name, ip, ready, role="master"):
        self.kube.node(name, ip, role=role, ready=ready)

    def csr(self, name, user, groups, signer, usages, cn, orgs, sans=()):
        """A kubelet's certificate request, created as user (the test
        server's bearer token for it, or impersonation on a real cluster)."""
        key = os.path.join(self.tmp, name + ".key")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-out", key], check=True, capture_output=True)
        subj = "".join("/O=%s" % o for o in orgs) + "/CN=%s" % cn
        cmd = ["openssl", "req", "-new", "-key", key, "-subj", subj]
        if sans:
            cmd += ["-addext", "subjectAltName=" + ",".join(sans)]
        pem = subprocess.run(cmd, check=True, capture_output=True).stdout
        import base64
        obj = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
               "metadata": {"name": name},
               "spec": {"request": base64.b64encode(pem).decode(), "signerName": signer, "usages": usages}}
        if self.kube.fake:
            token = "tok-" + uuid.uuid4().hex
            self.kube.ctl("POST", "/tokens", {"token": token, "user": user, "groups": groups})
            headers = {"Authorization": "Bearer " + token}
        else:
            headers = {"Impersonate-User": user}
            if user == BOOTSTRAPPER:
                self.bootstrapper_may_request()
        r = self.raw_request("POST", CSR_PATH, obj, headers, impersonate_groups=None if self.kube.fake else groups)
        if r[0] != 201:
            raise AssertionError("CSR %s: %s %s" % (name, r[0], r[1][:500]))
        self.kube.made.append(CSR_PATH + "/" + name)
        return name

    def bootstrapper_may_request(self):
        """On a real cluster: what OpenShift grants the machine-config
        operator's node-bootstrapper (Kubernetes' own system:node-bootstrapper
        ClusterRole: create and read CSRs), bound for this test's run only."""
        name = "cradle-test-%s-node-bootstrapper" % self.prefix
        path = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
        if path + "/" + name in self.kube.made:
            return
        r = self.kube.request("POST", path, {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "system:node-bootstrapper"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": BOOTSTRAPPER}]})
        if r.status not in (201, 409):
            raise AssertionError("ClusterRoleBinding %s: %s" % (name, r))
        self.kube.made.append(path + "/" + name)

    def raw_request(self, method, path, body, headers, impersonate_groups=None):
        import http.client
        k = self.kube
        h = {"Accept": "application/json", "Content-Type": "application/json"}
        if not headers.get("Authorization") and k.kc["token"]:
            h["Authorization"] = "Bearer " + k.kc["token"]
        h.update(headers)
        ctx = k.ctx
        if headers.get("Authorization"):
            # the token is the identity: no client certificate beside it
            ctx = ssl.create_default_context()
            if k.kc["insecure"]:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            elif k.kc["ca"]:
                ctx.load_verify_locations(cadata=k.kc["ca"].decode())
        c = http.client.HTTPSConnection(k.host, k.port, context=ctx, timeout=60)
        try:
            c.putrequest(method, k.base + path)
            for name, value in h.items():
                c.putheader(name, value)
            for g in impersonate_groups or ():
                c.putheader("Impersonate-Group", g)
            data = json.dumps(body).encode()
            c.putheader("Content-Length", str(len(data)))
            c.endheaders(data)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def get(self, path):
        """The object at path, or None when there is none."""
        r = self.kube.request("GET", path)
        if r.status == 404:
            return None
        if r.status != 200:
            raise AssertionError("GET %s: %s" % (path, r))
        return r.json

    def own(self, path, obj):
        """Creates obj at path for this test (deleted afterwards); skips when
        the cluster has its own already (a real OpenShift cluster's
        ClusterVersion, console, ingress CA are never touched)."""
        r = self.kube.request("POST", path, obj)
        if r.status == 409:
            raise unittest.SkipTest("the cluster has its own %s/%s" % (path, obj["metadata"]["name"]))
        if r.status != 201:
            raise AssertionError("create %s: %s" % (path, r))
        self.kube.made.append(path + "/" + obj["metadata"]["name"])
        return r.json

    def status_patch(self, path, status):
        self.kube.ok("PATCH", path + "/status", {"status": status}, ctype="application/merge-patch+json")

    @staticmethod
    def condition(type_, status, message=""):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return {"type": type_, "status": status, "lastTransitionTime": now, "message": message}

    def openshift_objects(self, console_conditions):
        """What the cluster's own operators publish: the ClusterVersion (the
        Console capability on) and the console ClusterOperator."""
        self.own(CV_PATH, {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
                           "metadata": {"name": "version"}, "spec": {"clusterID": str(uuid.uuid4())}})
        self.status_patch(CV_PATH + "/version", {
            "availableUpdates": [], "observedGeneration": 1, "versionHash": "x",
            "desired": {"image": "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64", "version": "4.13.18"},
            "capabilities": {"enabledCapabilities": ["Console", "Insights"],
                             "knownCapabilities": ["Console", "Insights"]},
            "conditions": [self.condition("Available", "False"), self.condition("Progressing", "True")]})
        self.own(CO_PATH, {"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
                           "metadata": {"name": "console"}, "spec": {}})
        self.status_patch(CO_PATH + "/console", {"conditions": console_conditions,
                                                  "versions": [{"name": "operator", "version": "4.13.18"}]})

    def ingress_ca(self, pem):
        self.kube.ensure_namespace("openshift-config-managed")
        self.own(INGRESS_CA_PATH, {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "default-ingress-cert"}, "data": {"ca-bundle.crt": pem}})

    def olm_cluster(self, timeout_seconds):
        """A one-master cluster whose service monitors the OLM operator lso
        (its Subscription local-storage-operator in the test's namespace,
        returned), with no manifest to apply; the console available and the
        ingress CA there."""
        cid, ie, hosts = self.seed(masters=1)
        ns = self.prefix + "-lso"
        self.kube.ensure_namespace(ns)
        self.kube.ensure_namespace("openshift-marketplace")
        self.svc.control("POST", "/clusters/%s" % cid, {"monitored_operators": [
            {"name": "lso", "operator_type": "olm", "namespace": ns, "subscription_name": "local-storage-operator",
             "timeout_seconds": timeout_seconds}]})
        # what the service generates at install: no manifest to apply
        self.svc.raw("PUT", "/__control/clusters/%s/files/custom_manifests.json" % cid, "[]")
        self.openshift_objects([self.condition("Available", "True", "All is well")])
        self.ingress_ca(HubClient.TEST_INGRESS_CA)
        return cid, hosts, ns

    def lso_csv_installing(self, ns):
        """OLM resolved the Subscription: its CSV, installing."""
        self.status_patch(SUBSCRIPTIONS % ns + "/local-storage-operator",
                          {"currentCSV": "lso.v4.13.0", "lastUpdated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self.own(CSVS % ns, {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                             "metadata": {"name": "lso.v4.13.0"},
                             "spec": {"displayName": "Local Storage", "version": "4.13.0",
                                      "install": {"strategy": "deployment"}}})
        self.status_patch(CSVS % ns + "/lso.v4.13.0", {"phase": "Installing", "message": "waiting for install "
                                                                                         "components to report healthy"})

    def cluster_requests(self, cid, suffix, method):
        return [r for r in self.svc.requests(path="/clusters/%s/%s$" % (cid, suffix), method=method)
                if r.get("status") is not None and r["status"] < 300]

    def finalizing_stages(self, cid):
        return [r["body"]["finalizing_stage"] for r in self.cluster_requests(cid, "progress", "PUT")]

    def csr_get(self, name):
        return self.kube.ok("GET", CSR_PATH + "/" + name).json

    # -- the service --------------------------------------------------------
    def seed(self, masters=3, workers=0, names=None, host_fields=None):
        """A cluster registered through the REST API, its hosts installing
        and at Rebooting, each with an inventory (one address on self.net).
        Returns (cluster id, infra-env id, [(host id, name, ip, role)])."""
        self.svc.need_control("hosts put in installing without agents")
        st, c = self.hub.register_cluster(name=self.prefix, control_plane_count=masters)
        if st == 400 and "control_plane_count" in str(c):
            # a late-2023 service: three masters are high availability Full
            st, c = self.hub.register_cluster(name=self.prefix, high_availability_mode="Full")
        self.assertEqual(st, 201, c)
        cid = c["id"]
        self.addCleanup(self.hub.call, "DELETE", "/v2/clusters/%s" % cid)
        st, ie = self.hub.register_infra_env(cluster_id=cid)
        self.assertEqual(st, 201, ie)
        hosts = []
        for i in range(masters + workers):
            role = "master" if i < masters else "worker"
            name = (names or {}).get(i) or "%s-%s-%d" % (self.prefix, role, i if role == "master" else i - masters)
            ip = "%s.%d" % (self.net, 10 + i)
            inv = copy.deepcopy(observed_inventory())
            inv["hostname"] = name
            itf = inv["interfaces"][0]
            itf["mac_address"] = "52:54:00:%02x:%02x:%02x" % (self.subnet // 256, self.subnet % 256, i)
            itf["ipv4_addresses"] = ["%s/24" % ip]
            itf["ipv6_addresses"] = []
            hid = str(uuid.uuid4())
            spec = {"infra_env_id": ie["id"], "id": hid, "inventory": inv, "requested_hostname": name, "role": role}
            spec.update((host_fields or {}).get(i) or {})
            self.svc.control("POST", "/hosts", spec)
            hosts.append((hid, name, ip, role))
        self.svc.install(cid, force=True)
        # what the service generates when the installation starts (the
        # control API's install does not): the ingress CA is merged into it
        self.svc.raw("PUT", "/__control/clusters/%s/files/kubeconfig-noingress" % cid, KUBECONFIG_NOINGRESS)
        for hid, name, ip, role in hosts:
            for stage in ("Starting installation", "Rebooting"):
                st, body = self.svc.progress(ie["id"], hid, stage)
                self.assertEqual(st, 200, body)
        return cid, ie["id"], hosts

    def path_without_oc(self):
        """PATH without any directory that has an oc."""
        return ":".join(d for d in os.environ.get("PATH", "/usr/bin:/bin").split(":")
                        if d and not os.access(os.path.join(d, "oc"), os.X_OK))

    def hosts_file(self, hosts):
        """The dry run's hosts file (notes §8) and each host's reboot marker
        (none exists yet)."""
        path = os.path.join(self.tmp, self.prefix + "-hosts.json")
        markers = {}
        with open(path, "w") as f:
            entries = []
            for hid, name, ip, role in hosts:
                markers[hid] = os.path.join(self.tmp, "%s-rebooted" % name)
                entries.append({"hostname": name, "ip": ip, "rebootMarkerPath": markers[hid]})
            json.dump(entries, f)
        return path, markers

    def dry_controller(self, cid, env=None, args=(), wrapper=()):
        e = {"DRY_ENABLE": "true", "SKIP_CERT_VERIFICATION": "true",
             "KUBECONFIG": os.path.join(self.tmp, "no-such-kubeconfig")}
        e.update(env or {})
        return self.controller(cid, env=e, args=args, wrapper=wrapper)

    def stages(self, host_id):
        """The stages the service recorded for a host, in order."""
        return [r["body"]["current_stage"] for r in self.svc.requests(path="/hosts/%s/progress$" % host_id,
                                                                         method="PUT")
                if r.get("status") == 200]

    def controller(self, cluster_id, args=(), env=None, wrapper=()):
        e = {"CLUSTER_ID": cluster_id, "INVENTORY_URL": self.svc.url, "OPENSHIFT_VERSION": "4.13",
             "NAMESPACE": self.namespace, "KUBECONFIG": self.kube.kubeconfig_path}
        if self.svc.token:
            e["PULL_SECRET_TOKEN"] = self.svc.token
        e.update(env or {})
        c = Controller(self, e, args, wrapper)
        self.controllers.append(c)
        return c


class TestStart(Lab):
    def test_usage_errors(self):
        c = self.controller("x", env={"CLUSTER_ID": ""})
        self.assertEqual(c.wait(), 2)
        self.assertIn("required key CLUSTER_ID missing value", c.log())
        c = self.controller("x", args=["stray"])
        self.assertEqual(c.wait(), 2)

    def test_ready_event_and_exit_when_the_cluster_is_gone(self):
        """SetReadyState: the Event the bootstrap waits for, once; then a
        cluster the service no longer knows ends the run with 0."""
        st, cl = self.hub.register_cluster(name=self.prefix)
        self.assertEqual(st, 201, cl)
        cid = cl["id"]
        c = self.controller(cid)
        path = "/api/v1/namespaces/%s/events/AssistedControllerIsReady" % self.namespace
        ev = wait_for("the ready event", lambda: self.get(path))
        self.assertEqual(ev["reason"], "AssistedControllerIsReady")
        self.assertEqual(ev["type"], "Normal")
        self.assertEqual(ev["count"], 1)
        self.assertEqual(ev["message"], "Assisted controller managed to connect to assisted service and "
                                        "kube-apiserver and is ready to start")
        self.assertEqual(ev["involvedObject"]["name"], "assisted-installer-controller")
        self.assertEqual(ev["involvedObject"]["namespace"], self.namespace)
        self.assertEqual(ev["firstTimestamp"], ev["lastTimestamp"])
        # a second controller (the Job's next pod) finds it there: no error
        c2 = self.controller(cid)
        wait_for("the second controller's start", lambda: "Remove uninitialized taint" in c2.log())
        self.assertNotIn("Failed to spawn event", c2.log())
        self.assertEqual(self.kube.request("GET", path).json["metadata"]["uid"], ev["metadata"]["uid"])
        # the cluster goes: both end, with 0 (the Job is complete)
        st, body = self.hub.call("DELETE", "/v2/clusters/%s" % cid)
        self.assertEqual(st, 204, body)
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        self.assertEqual(c2.wait(), 0, c2.log()[-3000:])
        self.assertIn("errors from assisted service in a row, exiting", c.log())

    def test_missing_proxy_is_fatal(self):
        self.kube.need_server("a fault on proxies/cluster (every OpenShift cluster has it)")
        self.kube.ctl("POST", "/faults", {"match": {"resource": "proxies", "name": "cluster", "verb": "get"},
                                          "code": 404, "reason": "NotFound",
                                          "message": 'proxies.config.openshift.io "cluster" not found', "count": 0})
        c = self.controller(str(uuid.uuid4()))
        self.assertEqual(c.wait(), 1)
        self.assertIn("Failed to set env vars for installer-controller pod", c.log())
        # nothing was asked of the service
        self.assertEqual(self.kube.request("GET", "/api/v1/namespaces/%s/events/AssistedControllerIsReady"
                                           % self.namespace).status, 404)

    def test_proxy_variables_reach_the_service_client(self):
        """The cluster-wide proxy's status becomes HTTP(S)_PROXY/NO_PROXY for
        the service client: the service, by a name only the proxy resolves,
        is reached through the proxy named in proxies/cluster."""
        self.kube.need_server("a proxies/cluster status of the test's choosing")
        self.svc.need_control("a service the proxy can name")
        proxy = ForwardProxy({"assisted-api.proxied.test": urllib.parse.urlsplit(self.svc.url).port})
        self.addCleanup(proxy.stop)
        self.kube.ctl("POST", "/faults", {
            "match": {"resource": "proxies", "name": "cluster", "verb": "get"}, "code": 200, "count": 0,
            "body": {"apiVersion": "config.openshift.io/v1", "kind": "Proxy", "metadata": {"name": "cluster"},
                     "spec": {}, "status": {"httpProxy": proxy.url, "httpsProxy": proxy.url,
                                            "noProxy": ".cluster.local,.svc"}}})
        st, cl = self.hub.register_cluster(name=self.prefix)
        self.assertEqual(st, 201, cl)
        c = self.controller(cl["id"], env={"INVENTORY_URL": "http://assisted-api.proxied.test:%d"
                                                            % urllib.parse.urlsplit(self.svc.url).port})
        wait_for("the ready event", lambda: self.get("/api/v1/namespaces/%s/events/AssistedControllerIsReady"
                                                      % self.namespace))
        self.assertIn("GET /api/assisted-install/v2/clusters/%s" % cl["id"], " ".join(proxy.seen))
        self.assertIn("to set env-vars for installer-controller pod", c.log())


class ForwardProxy:
    """An HTTP proxy on 127.0.0.1 that knows some names the resolver does
    not (name -> port on 127.0.0.1); it records the requests it forwards."""

    def __init__(self, names):
        import http.client
        import http.server
        import threading
        proxy = self
        self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def forward(self):
                u = urllib.parse.urlsplit(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                if u.hostname not in names:
                    self.send_error(502)
                    return
                proxy.seen.append("%s %s" % (self.command, u.path))
                c = http.client.HTTPConnection("127.0.0.1", names[u.hostname], timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection",)}
                c.request(self.command, u.path + ("?" + u.query if u.query else ""), body, headers)
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                c.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = forward

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class TestHosts(Lab):
    def test_joined_done_and_finalizing(self):
        """Nodes join NotReady (Joined), then turn Ready (Done): every host
        installed, the cluster finalizing by the service's own rule. A node
        known by another name than its host's is matched by its address."""
        cid, ie, hosts = self.seed(masters=3, workers=1)
        # master-2 registers under a name of its own
        names = {h[0]: (h[1] if i != 2 else self.prefix + "-renamed") for i, h in enumerate(hosts)}
        c = self.controller(cid)
        for hid, name, ip, role in hosts:
            self.node(names[hid], ip, ready=False, role=role)
        for hid, name, ip, role in hosts:
            wait_for("Joined of %s" % name, lambda: "Joined" in self.stages(hid))
        self.assertTrue(all("Done" not in self.stages(h[0]) for h in hosts))
        for hid, name, ip, role in hosts:
            self.kube.node_status(names[hid], ip, True)
        for hid, name, ip, role in hosts:
            wait_for("Done of %s" % name, lambda: "Done" in self.stages(hid))
        for hid, name, ip, role in hosts:
            st = self.stages(hid)
            self.assertEqual(st[-2:], ["Joined", "Done"], (name, st))
            self.assertEqual(st.count("Done"), 1, (name, st))
        st, cl = self.hub.cluster(cid)
        self.assertEqual(cl["status"], "finalizing", cl.get("status_info"))
        self.assertTrue(all(h["status"] == "installed" for h in cl["hosts"]))
        wait_for("the end of the node rounds", lambda: "All nodes were successfully installed" in c.log())

    def test_ready_at_first_sight(self):
        """A node first seen Ready gets Joined and Done in the same round."""
        cid, ie, hosts = self.seed(masters=1, workers=0)
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        self.controller(cid)
        wait_for("Done", lambda: "Done" in self.stages(hid))
        self.assertEqual(self.stages(hid)[-2:], ["Joined", "Done"])

    def test_configuring_from_the_mcs_log(self):
        """A host whose address fetched its Ignition config from the
        machine-config-server is Configuring (workers too)."""
        self.kube.need_server("pod log text")
        cid, ie, hosts = self.seed(masters=1, workers=1)
        worker = hosts[1]
        self.kube.ensure_namespace("openshift-machine-config-operator")
        pod = "machine-config-server-" + uuid.uuid4().hex[:5]
        self.kube.create("/api/v1/namespaces/openshift-machine-config-operator/pods",
                         {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": pod, "labels": {"k8s-app": "machine-config-server"}},
                          "spec": {"nodeName": hosts[0][1],
                                   "containers": [{"name": "machine-config-server", "image": "x"}]}})
        self.kube.ctl("POST", "/pods/log", {
            "namespace": "openshift-machine-config-operator", "name": pod, "container": "machine-config-server",
            "text": 'I0101 00:00:00.000000 1 api.go:116] Pool worker requested by address:"%s:50000" '
                    'User-Agent:"Ignition/2.14.0" Accept-Header: "application/vnd.coreos.ignition+json"\n'
                    % worker[2]})
        self.controller(cid)
        wait_for("Configuring of the worker", lambda: "Configuring" in self.stages(worker[0]))
        self.assertNotIn("Configuring", self.stages(hosts[0][0]))


class TestFinalize(Lab):
    def test_to_installed(self):
        """From every host Rebooting to installed: the finalizing stages in
        order, console reported as it changes, the ingress CA from its
        ConfigMap, complete-installation; the service decides installed by
        its own rules, and the controller ends with 0."""
        cid, ie, hosts = self.seed(masters=3, workers=1)
        self.openshift_objects([self.condition("Progressing", "True", "rolling out the console"),
                                self.condition("Available", "False", "no console pods")])
        c = self.controller(cid)
        for hid, name, ip, role in hosts:
            self.node(name, ip, ready=True, role=role)
        wait_for("finalizing", lambda: self.hub.cluster(cid)[1]["status"] == "finalizing")
        wait_for("the operators stage", lambda: self.finalizing_stages(cid) == ["Waiting for cluster operators"])
        reports = wait_for("console reported", lambda: self.cluster_requests(cid, "monitored-operators", "PUT"))
        self.assertEqual(reports[0]["body"], {"name": "console", "status": "progressing",
                                              "status_info": "rolling out the console", "version": "4.13.18"})
        # nothing changes: nothing more is reported
        wait_for("two more operator checks", lambda: c.log().count("will wait for the console operator") >= 3)
        self.assertEqual(len(self.cluster_requests(cid, "monitored-operators", "PUT")), 1)
        self.assertEqual(self.finalizing_stages(cid), ["Waiting for cluster operators"])
        self.status_patch(CO_PATH + "/console", {"conditions": [self.condition("Available", "True", "All is well")]})
        wait_for("the router CA stage", lambda: "Adding router ca" in self.finalizing_stages(cid))
        reports = self.cluster_requests(cid, "monitored-operators", "PUT")
        self.assertEqual(reports[-1]["body"], {"name": "console", "status": "available", "status_info": "All is well",
                                               "version": "4.13.18"})
        # the ingress CA appears later than the stage: the controller keeps reading
        time.sleep(1)
        self.assertEqual(self.cluster_requests(cid, "uploads/ingress-cert", "POST"), [])
        self.ingress_ca(HubClient.TEST_INGRESS_CA)
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        uploads = self.cluster_requests(cid, "uploads/ingress-cert", "POST")
        self.assertEqual(len(uploads), 1)
        self.assertEqual(uploads[0]["body"], HubClient.TEST_INGRESS_CA)
        self.assertEqual(self.finalizing_stages(cid), ["Waiting for cluster operators", "Adding router ca",
                                                       "Waiting for olm operators csv initialization", "Done"])
        done = self.cluster_requests(cid, "actions/complete-installation", "POST")
        self.assertEqual([r["body"] for r in done], [{"is_success": True}])
        st, cl = self.hub.cluster(cid)
        self.assertEqual((cl["status"], cl["status_info"]), ("installed", "Cluster is installed"))
        self.assertIn("Cluster installation successfully finished.", c.log())

    def test_operators_time_out(self):
        """The console never available in time: complete-installation says
        so with the operators report; the service fails the cluster and the
        controller ends with 0."""
        cid, ie, hosts = self.seed(masters=1, workers=0)
        self.openshift_objects([self.condition("Degraded", "True", "route not admitted")])
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        c = self.controller(cid, args=["--operators-timeout", "2"])
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        done = self.cluster_requests(cid, "actions/complete-installation", "POST")
        self.assertEqual(len(done), 1)
        body = done[0]["body"]
        self.assertEqual(body["is_success"], False)
        self.assertEqual(body["error_info"], "Stopped waiting for cluster operators to be available: context "
                                             "deadline exceeded")
        report = body["data"]["CLUSTER_OPERATORS_REPORT"]
        self.assertIn({"name": "console", "status": "failed", "status_info": "route not admitted"}, report)
        self.assertEqual(self.finalizing_stages(cid), ["Waiting for cluster operators"])
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "error")
        self.assertIn("Cluster installation failed.", c.log())


FAKE_OC = r"""#!/usr/bin/python3
# a recording `oc`: its argv, its directory and what the kubeconfig it was
# given held (a digest, never the text); `adm must-gather` makes what the
# real one makes, a must-gather.local.<n> directory
import hashlib, json, os, sys
kc = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--kubeconfig=")), None)
rec = {"argv": sys.argv[1:], "cwd": os.getcwd(), "kubeconfig": kc,
       "kubeconfig_sha256": hashlib.sha256(open(kc, "rb").read()).hexdigest() if kc and os.path.exists(kc) else None,
       "kubeconfig_mode": oct(os.stat(kc).st_mode & 0o777) if kc and os.path.exists(kc) else None}
with open(os.environ["FAKE_OC_RECORD"], "a") as f:
    f.write(json.dumps(rec) + "\n")
if sys.argv[1:2] and sys.argv[2:4] == ["adm", "must-gather"]:
    d = os.path.join("must-gather.local.4242", "quay-io-must-gather", "cluster-scoped-resources")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "nodes.yaml"), "w") as f:
        f.write("kind: NodeList\n")
    print("[must-gather      ] OUT gathered")
"""


class TestLogs(Lab):
    """UploadLogs (notes §5.7): controller_logs.tar.gz to the service's
    logs API (logs_type=controller, multipart upfile) while the
    installation goes on and once at its end between logs-progress
    requested and completed; after a failure with must-gather (oc on PATH,
    with the service's kubeconfig-noingress) or, without oc, the cluster's
    Nodes, ClusterOperators and Events read by cradle itself."""

    def log_file(self):
        return os.path.join(self.tmp, self.prefix + "-controller.log")

    def uploads(self, cid):
        """The controller's uploads the service recorded for cid, each with
        its members read back with tarfile: [(record, {name: bytes})]."""
        import io
        import tarfile
        out = []
        for meta in self.svc.logs():
            if meta["cluster_id"] != cid or meta["logs_type"] != "controller":
                continue
            data = self.svc.control("GET", "/logs/" + meta["name"])
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
                members = {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}
                modes = {m.name: m.mode for m in tf.getmembers()}
            out.append((meta, members, modes))
        return out

    def upload_requests(self, cid):
        return [r for r in self.svc.requests(path="/clusters/%s/logs$" % cid, method="POST") if r.get("status") == 204]

    def logs_progress(self, cid):
        return [r["body"]["logs_state"] for r in self.cluster_requests(cid, "logs-progress", "PUT")]

    def fake_oc(self):
        bindir = os.path.join(self.tmp, self.prefix + "-bin")
        os.makedirs(bindir)
        path = os.path.join(bindir, "oc")
        with open(path, "w") as f:
            f.write(FAKE_OC)
        os.chmod(path, 0o755)
        return bindir, os.path.join(self.tmp, self.prefix + "-oc.jsonl")

    def failed_installation(self, env, args=()):
        """One master, its console never available: the operators wait out
        of time, the service fails the cluster, the controller ends with 0."""
        cid, ie, hosts = self.seed(masters=1, workers=0)
        self.openshift_objects([self.condition("Degraded", "True", "route not admitted")])
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        c = self.controller(cid, args=["--operators-timeout", "2", "--log-file", self.log_file(),
                                       "--must-gather-dir", os.path.join(self.tmp, self.prefix + "-mg")] + list(args),
                            env=env)
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "error")
        return cid, name, c

    def test_uploads_on_success(self):
        cid, ie, hosts = self.seed(masters=1, workers=0)
        self.openshift_objects([self.condition("Available", "True", "All is well")])
        self.ingress_ca(HubClient.TEST_INGRESS_CA)
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        oc_dir, record = self.fake_oc()
        # an oc on PATH is not run when nothing failed
        c = self.controller(cid, args=["--log-file", self.log_file(), "--logs-interval", "0.1"],
                            env={"PATH": oc_dir + ":" + os.environ.get("PATH", ""), "FAKE_OC_RECORD": record})
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "installed")
        reqs = self.upload_requests(cid)
        # at least one upload while the installation went on, and the last one
        self.assertGreaterEqual(len(reqs), 2, [r["query"] for r in reqs])
        for r in reqs:
            self.assertEqual(r["query"], "logs_type=controller")
            self.assertEqual(r["body_multipart"]["upfile"]["filename"], "controller_logs.tar.gz")
        self.assertEqual(self.logs_progress(cid), ["requested", "completed"])
        # the last upload came between requested and completed
        progress = self.cluster_requests(cid, "logs-progress", "PUT")
        self.assertLess(progress[0]["time"], reqs[-1]["time"])
        self.assertLessEqual(reqs[-1]["time"], progress[1]["time"])
        uploads = self.uploads(cid)
        self.assertEqual(len(uploads), len(reqs))
        for meta, members, modes in uploads:
            self.assertTrue(meta["gzip"])
            self.assertEqual(list(members), ["assisted-installer-controller.logs"])
            self.assertEqual(modes["assisted-installer-controller.logs"], 0o644)
        text = uploads[-1][1]["assisted-installer-controller.logs"].decode()
        # no pod of the controller in this cluster: its text log file
        self.assertIn("Start running Assisted-controller", text)
        self.assertIn("Cluster installation successfully finished.", text)
        self.assertNotIn(self.svc.token or "no token", text)
        self.assertFalse(os.path.exists(record), "oc ran without a failure")
        st, cl = self.hub.cluster(cid)
        self.assertEqual(cl.get("logs_info"), "completed")
        self.assertNotEqual(cl["controller_logs_collected_at"], "0001-01-01T00:00:00.000Z")

    def test_own_pod_log(self):
        """The log of the controller's own pod (the Job's Running pod) is
        what the service gets, not the file."""
        self.kube.need_server("pod log text")
        cid, ie, hosts = self.seed(masters=1, workers=0)
        self.openshift_objects([self.condition("Available", "True", "All is well")])
        self.ingress_ca(HubClient.TEST_INGRESS_CA)
        pod = "assisted-installer-controller-" + uuid.uuid4().hex[:5]
        self.kube.create("/api/v1/namespaces/%s/pods" % self.namespace,
                         {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": pod, "labels": {"job-name": "assisted-installer-controller"}},
                          "spec": {"nodeName": hosts[0][1],
                                   "containers": [{"name": "assisted-installer-controller", "image": "x"}]}})
        self.status_patch("/api/v1/namespaces/%s/pods/%s" % (self.namespace, pod), {"phase": "Running"})
        self.kube.ctl("POST", "/pods/log", {"namespace": self.namespace, "name": pod,
                                            "container": "assisted-installer-controller",
                                            "text": "the pod's own log line\n"})
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        c = self.controller(cid, args=["--log-file", self.log_file()])
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        meta, members, modes = self.uploads(cid)[-1]
        self.assertEqual(members, {"assisted-installer-controller.logs": b"the pod's own log line\n"},
                         [x for x in c.log().splitlines() if "from the pod" in x][-1:])

    def test_must_gather_with_oc(self):
        """The cluster fails: oc adm must-gather with the images of
        MUST_GATHER_IMAGE's map for a general error, run with the service's
        kubeconfig-noingress (removed after), its directory in the archive
        as must-gather.tar.gz beside the log."""
        oc_dir, record = self.fake_oc()
        images = {"ocp": "quay.io/openshift/must-gather:4.13", "lso": "quay.io/lso/must-gather:1"}
        cid, name, c = self.failed_installation({"PATH": oc_dir + ":" + os.environ.get("PATH", ""),
                                                 "FAKE_OC_RECORD": record, "MUST_GATHER_IMAGE": json.dumps(images)})
        with open(record) as f:
            runs = [json.loads(line) for line in f]
        self.assertEqual(len(runs), 1, runs)
        run = runs[0]
        kc = run["kubeconfig"]
        self.assertEqual(run["argv"], ["--kubeconfig=" + kc, "adm", "must-gather",
                                       "--image=quay.io/openshift/must-gather:4.13"])
        self.assertEqual(run["cwd"], os.path.join(self.tmp, self.prefix + "-mg"))
        import hashlib
        self.assertEqual(run["kubeconfig_sha256"], hashlib.sha256(KUBECONFIG_NOINGRESS.encode()).hexdigest())
        self.assertEqual(run["kubeconfig_mode"], "0o600")
        self.assertFalse(os.path.exists(kc))
        self.assertNotIn("server: https://api.test.example.com", c.log())
        downloads = self.svc.requests(path="/clusters/%s/downloads/credentials$" % cid, method="GET")
        self.assertEqual([r["query"] for r in downloads], ["file_name=kubeconfig-noingress"])
        self.assertEqual(self.logs_progress(cid), ["requested", "completed"])
        meta, members, modes = self.uploads(cid)[-1]
        self.assertEqual(sorted(members), ["assisted-installer-controller.logs", "must-gather.tar.gz"])
        import io
        import tarfile
        with tarfile.open(fileobj=io.BytesIO(members["must-gather.tar.gz"]), mode="r:gz") as tf:
            self.assertIn("must-gather.local.4242/quay-io-must-gather/cluster-scoped-resources/nodes.yaml",
                          tf.getnames())
        self.assertIn("Cluster installation failed.", members["assisted-installer-controller.logs"].decode())

    def test_gather_without_oc(self):
        """The cluster fails and no oc is on PATH: cradle reads the Nodes,
        the ClusterOperators and the Events itself, and the README in the
        archive says so."""
        cid, name, c = self.failed_installation({"PATH": self.path_without_oc()})
        self.assertEqual(self.svc.requests(path="/clusters/%s/downloads/credentials$" % cid, method="GET"), [])
        meta, members, modes = self.uploads(cid)[-1]
        self.assertEqual(sorted(members), ["assisted-installer-controller.logs", "cluster/README",
                                           "cluster/clusteroperators.json", "cluster/events.json",
                                           "cluster/nodes.json"])
        readme = members["cluster/README"].decode()
        self.assertIn("This is not a must-gather: oc is not on the controller's PATH", readme)
        self.assertIn("cluster/nodes.json: the Nodes", readme)
        nodes = json.loads(members["cluster/nodes.json"])
        self.assertIn(name, [n["metadata"]["name"] for n in nodes["items"]])
        cos = json.loads(members["cluster/clusteroperators.json"])
        console = next(co for co in cos["items"] if co["metadata"]["name"] == "console")
        self.assertEqual(console["status"]["conditions"][0]["message"], "route not admitted")
        events = json.loads(members["cluster/events.json"])
        self.assertIn("AssistedControllerIsReady", [e["metadata"]["name"] for e in events["items"]
                                                    if e["metadata"].get("namespace") == self.namespace])
        self.assertEqual(self.logs_progress(cid), ["requested", "completed"])


class TestCsrs(Lab):
    def test_only_the_cluster_kubelets_are_approved(self):
        cid, ie, hosts = self.seed(masters=1, workers=1)
        master, worker = hosts
        self.node(master[1], master[2], ready=False)
        c = self.controller(cid)
        client = self.csr(self.prefix + "-client", BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                          "kubernetes.io/kube-apiserver-client-kubelet", ["digital signature", "client auth"],
                          "system:node:" + worker[1], ["system:nodes"])
        serving = self.csr(self.prefix + "-serving", "system:node:" + master[1], ["system:nodes"],
                           "kubernetes.io/kubelet-serving", ["digital signature", "server auth"],
                           "system:node:" + master[1], ["system:nodes"], ["DNS:" + master[1], "IP:" + master[2]])
        # a node that is no host of this cluster, and a host's serving
        # certificate for an address that is not its own
        stranger = self.csr(self.prefix + "-stranger", BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                            "kubernetes.io/kube-apiserver-client-kubelet", ["digital signature", "client auth"],
                            "system:node:%s-intruder" % self.prefix, ["system:nodes"])
        other_ip = self.csr(self.prefix + "-other-ip", "system:node:" + master[1], ["system:nodes"],
                            "kubernetes.io/kubelet-serving", ["digital signature", "server auth"],
                            "system:node:" + master[1], ["system:nodes"], ["IP:203.0.113.99"])

        def approved(name):
            conds = (self.csr_get(name).get("status") or {}).get("conditions") or []
            return next((x for x in conds if x["type"] == "Approved"), None)

        for name in (client, serving):
            cond = wait_for("approval of %s" % name, lambda: approved(name))
            self.assertEqual(cond["status"], "True")
            if self.kube.fake or cond["reason"] == "NodeCSRApprove":
                self.assertEqual(cond["reason"], "NodeCSRApprove")
                self.assertEqual(cond["message"], "This CSR was approved by the assisted-installer-controller")
        # the others refused, and two rounds later still pending, each
        # refusal logged once with its reason (rounds are counted from the
        # refusals: under load, rounds may pass before the requests exist)
        wait_for("both refusals", lambda: all("Not approving CSR %s:" % n in c.log() for n in (stranger, other_ip)))
        rounds = c.log().count("task csrs")
        wait_for("two more CSR rounds", lambda: c.log().count("task csrs") >= rounds + 2)
        self.assertIsNone(approved(stranger))
        self.assertIsNone(approved(other_ip))
        log = c.log()
        self.assertEqual(log.count("Not approving CSR %s:" % stranger), 1, log[-3000:])
        self.assertIn("node %s-intruder is no host of this cluster" % self.prefix, log)
        self.assertEqual(log.count("Not approving CSR %s:" % other_ip), 1)
        self.assertIn("IP address 203.0.113.99 is not an address of host %s" % master[1], log)
        # the kubelet gets its certificate (the test server's signer, or the real one)
        wait_for("the signed certificate", lambda: (self.csr_get(client).get("status") or {}).get("certificate"))


NODES_PATH = "/api/v1/nodes"
MCP_PATH = "/apis/machineconfiguration.openshift.io/v1/machineconfigpools"
BMH_PATH = "/apis/metal3.io/v1alpha1/namespaces/openshift-machine-api/baremetalhosts"
MACHINES_PATH = "/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machines"
PROVISIONINGS_PATH = "/apis/metal3.io/v1alpha1/provisionings"
BMH_STATUS_ANNOTATION = "baremetalhost.metal3.io/status"
BMH_PAUSED_ANNOTATION = "baremetalhost.metal3.io/paused"


class TestLabels(Lab):
    """UpdateNodeLabels (notes §5.4): the labels the service has for each
    host land on its Node once Ready; a Node of no host of the cluster is
    never touched."""

    def labels_of(self, name):
        return (self.get(NODES_PATH + "/" + name)["metadata"].get("labels")) or {}

    def test_labels(self):
        want = {0: {"cradle.test/rack": self.prefix, "cradle.test/tier": "gold"}, 1: {"cradle.test/tier": "bronze"}}
        cid, ie, hosts = self.seed(masters=1, workers=1, host_fields={i: {"node_labels": v} for i, v in want.items()})
        stranger = self.prefix + "-stranger"
        # a Ready Node of no host, with the worker's name but one letter,
        # at an address no host has
        self.node(stranger, "%s.250" % self.net, ready=True, role="worker")
        for hid, name, ip, role in hosts:
            self.node(name, ip, ready=False, role=role)
        before = {h[1]: self.labels_of(h[1]) for h in hosts}
        c = self.controller(cid)
        wait_for("two label rounds", lambda: c.log().count("Not all host labels where added yet") >= 2)
        for hid, name, ip, role in hosts:
            self.assertNotIn("cradle.test/tier", self.labels_of(name))
        for hid, name, ip, role in hosts:
            self.kube.node_status(name, ip, True)
        for i, (hid, name, ip, role) in enumerate(hosts):
            wait_for("the labels of %s" % name,
                     lambda: all(self.labels_of(name).get(k) == v for k, v in want[i].items()))
        wait_for("the end of the label rounds", lambda: "Finished UpdateNodeLabels" in c.log())
        self.assertNotIn("cradle.test/tier", self.labels_of(stranger))
        # the Nodes' own labels stay
        for name, labels in before.items():
            self.assertEqual({k: v for k, v in self.labels_of(name).items() if k in labels}, labels)
        self.assertNotIn("Setting pause MCP", c.log())

    def test_worker_pool_paused_while_labelling(self):
        """A labelled worker that names a machine config pool: the pool
        worker is paused before the labels and unpaused after them."""
        pool = self.own(MCP_PATH, {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
                                   "metadata": {"name": "worker"}, "spec": {"paused": False}})
        cid, ie, hosts = self.seed(masters=1, workers=1, host_fields={
            1: {"node_labels": {"node-role.kubernetes.io/infra": ""}, "machine_config_pool_name": "infra"}})
        for hid, name, ip, role in hosts:
            self.node(name, ip, ready=True, role=role)
        c = self.controller(cid)
        wait_for("the end of the label rounds", lambda: "Finished UpdateNodeLabels" in c.log())
        worker = hosts[1][1]
        self.assertEqual(self.labels_of(worker).get("node-role.kubernetes.io/infra"), "")
        after = self.get(MCP_PATH + "/worker")
        self.assertFalse(after["spec"].get("paused"))
        # paused, then unpaused: two changes of the spec
        self.assertEqual(after["metadata"]["generation"], pool["metadata"]["generation"] + 2)
        log = c.log()
        paused = log.index("Setting pause MCP worker to true")
        labelled = log.index("Successfully patched label for host %s" % worker)
        unpaused = log.index("Setting pause MCP worker to false")
        self.assertLess(paused, labelled)
        self.assertLess(labelled, unpaused)


class TestBareMetalHosts(Lab):
    """UpdateBMHs (notes §5.5), the cluster's platform being baremetal: the
    BMHs of openshift-machine-api as the bootstrap created them, edited as
    upstream edits them."""

    def setUp(self):
        super().setUp()
        self.kube.ensure_namespace("openshift-machine-api")
        r = self.kube.request("GET", BMH_PATH)
        if r.status == 200 and r.json.get("items"):
            raise unittest.SkipTest("the cluster has BareMetalHosts of its own: the controller would edit them")

    def seed_baremetal(self):
        """A cluster of the baremetal platform (a registered one without
        VIPs is of platform none)."""
        cid, ie, hosts = self.seed(masters=1, workers=1)
        self.svc.control("POST", "/clusters/%s" % cid, {"platform_type": "baremetal"})
        self.assertEqual(self.hub.cluster(cid)[1]["platform"]["type"], "baremetal")
        return cid

    def machine(self, name, role):
        return self.own(MACHINES_PATH, {
            "apiVersion": "machine.openshift.io/v1beta1", "kind": "Machine",
            "metadata": {"name": name, "namespace": "openshift-machine-api",
                         "labels": {"machine.openshift.io/cluster-api-machine-role": role}}, "spec": {}})

    def bmh(self, name, annotations, consumer=None):
        spec = {"online": True, "bootMACAddress": "52:54:00:00:00:%02x" % (len(self.kube.made) % 256)}
        if consumer:
            spec["consumerRef"] = {"apiVersion": "machine.openshift.io/v1beta1", "kind": "Machine",
                                   "namespace": "openshift-machine-api", "name": consumer}
        return self.own(BMH_PATH, {"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
                                   "metadata": {"name": name, "annotations": annotations}, "spec": spec})

    @staticmethod
    def status_annotation(hostname):
        return json.dumps({"hardware": {"hostname": hostname, "cpu": {"count": 4}}, "poweredOn": True,
                           "operationalStatus": "OK", "provisioning": {"state": "externally provisioned"}})

    def test_without_provisioning(self):
        """No metal3 provisioning: the status annotation becomes the status,
        then goes; the worker's BMH gets the free worker Machine."""
        if self.get(PROVISIONINGS_PATH + "/provisioning-configuration"):
            self.skipTest("the cluster has its metal3 provisioning")
        cid = self.seed_baremetal()
        master, worker = self.prefix + "-bmh-master", self.prefix + "-bmh-worker"
        self.machine(self.prefix + "-master-0", "master")
        self.machine(self.prefix + "-worker-a", "worker")
        self.bmh(master, {BMH_STATUS_ANNOTATION: self.status_annotation(master)}, consumer=self.prefix + "-master-0")
        self.bmh(worker, {BMH_STATUS_ANNOTATION: self.status_annotation(worker), "keep": "me"})
        c = self.controller(cid)
        wait_for("the end of the BMH rounds", lambda: "Finished UpdateBMHs" in c.log())
        for name in (master, worker):
            b = self.get(BMH_PATH + "/" + name)
            self.assertNotIn(BMH_STATUS_ANNOTATION, b["metadata"].get("annotations") or {})
            st = b["status"]
            self.assertEqual(st["hardware"], {"hostname": name, "cpu": {"count": 4}})
            self.assertEqual((st["operationalStatus"], st["poweredOn"], st["provisioning"]["state"]),
                             ("OK", True, "externally provisioned"))
            self.assertTrue(st["lastUpdated"])
        b = self.get(BMH_PATH + "/" + worker)
        self.assertEqual(b["metadata"]["annotations"], {"keep": "me"})
        self.assertEqual(b["spec"]["consumerRef"], {"apiVersion": "machine.openshift.io/v1beta1", "kind": "Machine",
                                                    "namespace": "openshift-machine-api",
                                                    "name": self.prefix + "-worker-a"})
        self.assertEqual(self.get(BMH_PATH + "/" + master)["spec"]["consumerRef"]["name"], self.prefix + "-master-0")

    def test_with_provisioning(self):
        """metal3 provisioning: BMHs not provisioned yet become externally
        provisioned and lose the paused annotation; a worker's BMH waits for
        a free worker Machine."""
        self.own(PROVISIONINGS_PATH, {"apiVersion": "metal3.io/v1alpha1", "kind": "Provisioning",
                                      "metadata": {"name": "provisioning-configuration"},
                                      "spec": {"provisioningNetwork": "Disabled"}})
        cid = self.seed_baremetal()
        master, worker = self.prefix + "-bmh-master", self.prefix + "-bmh-worker"
        self.bmh(master, {BMH_PAUSED_ANNOTATION: "", BMH_STATUS_ANNOTATION: self.status_annotation(master)},
                 consumer=self.prefix + "-master-0")
        self.bmh(worker, {})
        c = self.controller(cid)
        wait_for("the master's BMH", lambda: self.get(BMH_PATH + "/" + master)["spec"].get("externallyProvisioned"))
        b = self.get(BMH_PATH + "/" + master)
        self.assertEqual(b["metadata"]["annotations"], {BMH_STATUS_ANNOTATION: self.status_annotation(master)})
        # no worker Machine yet: the worker's BMH is not updated, the rounds go on
        wait_for("two BMH rounds", lambda: c.log().count("no available machine for bmh %s" % worker) >= 2)
        self.assertFalse(self.get(BMH_PATH + "/" + worker)["spec"].get("externallyProvisioned"))
        self.assertNotIn("Finished UpdateBMHs", c.log())
        self.machine(self.prefix + "-worker-a", "worker")
        wait_for("the end of the BMH rounds", lambda: "Finished UpdateBMHs" in c.log())
        b = self.get(BMH_PATH + "/" + worker)
        self.assertTrue(b["spec"]["externallyProvisioned"])
        self.assertEqual(b["spec"]["consumerRef"]["name"], self.prefix + "-worker-a")


SUBSCRIPTIONS = "/apis/operators.coreos.com/v1alpha1/namespaces/%s/subscriptions"
CSVS = "/apis/operators.coreos.com/v1alpha1/namespaces/%s/clusterserviceversions"
INSTALL_PLANS = "/apis/operators.coreos.com/v1alpha1/namespaces/%s/installplans"


class TestOlmOperators(Lab):
    """The OLM operators' stages (notes §5.3): the service monitors an OLM
    operator; the controller follows its Subscription and CSV and reports
    it; the service says installed only once it is available."""

    def test_to_installed(self):
        cid, hosts, ns = self.olm_cluster(4200)
        # OLM: the subscription, and a failed InstallPlan of it (deleted,
        # as OLM's early-setup workaround) and of another one (kept); no CSV
        # yet (owners exist: the garbage collector removes orphans)
        subs = {}
        for sub in ("local-storage-operator", self.prefix + "-other"):
            subs[sub] = self.own(SUBSCRIPTIONS % ns, {
                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "metadata": {"name": sub},
                "spec": {"name": sub, "source": "redhat-operators", "sourceNamespace": "openshift-marketplace"}})
        for name, owner in (("install-failed", "local-storage-operator"), ("install-other", self.prefix + "-other")):
            self.own(INSTALL_PLANS % ns, {
                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                "metadata": {"name": name, "ownerReferences": [{
                    "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "name": owner,
                    "uid": subs[owner]["metadata"]["uid"]}]},
                "spec": {"approval": "Automatic", "approved": True, "clusterServiceVersionNames": ["lso.v4.13"]}})
            self.status_patch(INSTALL_PLANS % ns + "/" + name, {"phase": "Failed", "catalogSources": []})
        c = self.controller(cid)
        for hid, name, ip, role in hosts:
            self.node(name, ip, ready=True, role=role)
        wait_for("the CSV initialization stage",
                 lambda: "Waiting for olm operators csv initialization" in self.finalizing_stages(cid))
        wait_for("two initialization rounds", lambda: c.log().count("Checking if lso operator is initialized") >= 3)
        if self.kube.request("GET", "/apis/batch/v1/namespaces/openshift-marketplace/jobs").status == 200:
            wait_for("the failed InstallPlan deleted",
                     lambda: self.get(INSTALL_PLANS % ns + "/install-failed") is None)
        else:
            # the test server serves no Jobs: as upstream, no InstallPlan is
            # deleted when the marketplace's Jobs cannot be listed
            self.assertIn("Failed to delete olm jobs", c.log())
            self.assertIsNotNone(self.get(INSTALL_PLANS % ns + "/install-failed"))
        self.assertIsNotNone(self.get(INSTALL_PLANS % ns + "/install-other"))
        self.assertNotIn("Applying olm manifests", self.finalizing_stages(cid))
        # OLM resolves the subscription: its CSV, installing
        self.lso_csv_installing(ns)
        reports = wait_for("lso reported", lambda: [r["body"] for r in self.cluster_requests(cid, "monitored-operators", "PUT")
                                                    if r["body"]["name"] == "lso"])
        self.assertEqual(reports[0], {"name": "lso", "status": "progressing",
                                      "status_info": "waiting for install components to report healthy",
                                      "version": "4.13.0"})
        # not available yet: the service keeps the cluster finalizing
        wait_for("two more CSV checks", lambda: c.log().count("Checking availability of operator <lso>") >= 3)
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "finalizing")
        self.status_patch(CSVS % ns + "/lso.v4.13.0", {"phase": "Succeeded",
                                                       "message": "install strategy completed with no errors"})
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        reports = [r["body"] for r in self.cluster_requests(cid, "monitored-operators", "PUT") if r["body"]["name"] == "lso"]
        self.assertEqual(reports[-1], {"name": "lso", "status": "available",
                                       "status_info": "install strategy completed with no errors", "version": "4.13.0"})
        self.assertEqual(len(reports), 2, reports)
        self.assertEqual(self.finalizing_stages(cid), [
            "Waiting for cluster operators", "Adding router ca", "Waiting for olm operators csv initialization",
            "Applying olm manifests", "Waiting for olm operators csv", "Done"])
        self.assertEqual([r["body"] for r in self.cluster_requests(cid, "actions/complete-installation", "POST")],
                         [{"is_success": True}])
        st, cl = self.hub.cluster(cid)
        self.assertEqual((cl["status"], cl["status_info"]), ("installed", "Cluster is installed"))
        ops = {o["name"]: o for o in cl["monitored_operators"]}
        self.assertEqual(ops["lso"]["status"], "available")


class TestStageTimeouts(Lab):
    """The service's finalizing stage timeouts (notes §0.7, §5.3, §7;
    finalizing_stages.go), made seconds through the reference service's
    settings: they, not the controller, end its waits."""

    def stage_timeouts(self, timeouts):
        self.svc.need_control("finalizing stage timeouts of seconds (the service's environment)")
        self.svc.control("POST", "/settings", {"finalizing_stage_timeouts": timeouts})
        self.addCleanup(self.svc.control, "POST", "/settings", {"finalizing_stage_timeouts": {}})

    def events(self, cid, name):
        st, evs = self.hub.events(cluster_id=cid)
        self.assertEqual(st, 200, evs)
        return [e["message"] for e in evs if e.get("name") == name]

    def test_olm_operator_that_never_succeeds(self):
        """The CSV stays Installing: the service marks the stage "Waiting for
        olm operators csv" timed out (the cluster stays finalizing), the
        controller stops waiting, reports the operator failed ("Waiting for
        operator timed out"), then Done and complete-installation with
        success (OLM failures never fail the installation); the service says
        installed and the controller exits 0, after gathering the logs a
        failed operator calls for."""
        self.stage_timeouts({"Waiting for olm operators csv": 3})
        # the operator's own timeout below the stage's: the stage's holds
        cid, hosts, ns = self.olm_cluster(1)
        self.own(SUBSCRIPTIONS % ns, {
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": "local-storage-operator"},
            "spec": {"name": "local-storage-operator", "source": "redhat-operators",
                     "sourceNamespace": "openshift-marketplace"}})
        # and it never gets past Installing
        self.lso_csv_installing(ns)
        c = self.controller(cid, env={"PATH": self.path_without_oc()})
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        # the service timed the stage out, once, and kept the cluster finalizing
        self.assertEqual(self.events(cid, "finalizing_stage_timed_out"), [
            "Cluster %s: finalizing stage Waiting for olm operators csv has been active more than the expected "
            "completion time (0 minutes)" % cid])
        self.assertEqual(self.events(cid, "cluster_installation_failed"), [])
        self.assertIn("the service timed the stage Waiting for olm operators csv out", c.log())
        self.assertEqual(self.finalizing_stages(cid), [
            "Waiting for cluster operators", "Adding router ca", "Waiting for olm operators csv initialization",
            "Applying olm manifests", "Waiting for olm operators csv", "Done"])
        reports = [r["body"] for r in self.cluster_requests(cid, "monitored-operators", "PUT")
                   if r["body"]["name"] == "lso"]
        self.assertEqual(reports[0], {"name": "lso", "status": "progressing",
                                      "status_info": "waiting for install components to report healthy",
                                      "version": "4.13.0"})
        self.assertEqual(reports[-1], {"name": "lso", "status": "failed",
                                       "status_info": "Waiting for operator timed out", "version": "4.13.0"})
        self.assertEqual([r["body"] for r in self.cluster_requests(cid, "actions/complete-installation", "POST")],
                         [{"is_success": True}])
        st, cl = self.hub.cluster(cid)
        self.assertEqual((cl["status"], cl["status_info"]), ("installed", "Cluster is installed"))
        self.assertEqual({o["name"]: o["status"] for o in cl["monitored_operators"]},
                         {"console": "available", "lso": "failed"})
        # a failed operator: the last upload gathers (no oc here: cradle's own)
        self.assertIn("oc is not on PATH: no must-gather", c.log())
        self.assertIn("Cluster installation successfully finished.", c.log())

    def test_router_ca_stage_fails_the_cluster(self):
        """The ingress CA never appears: the controller keeps reading it
        (upstream has no limit there), the service fails the cluster when
        the stage "Adding router ca" runs past its timeout, and the
        controller ends with 0 without completing the installation."""
        cid, ie, hosts = self.seed(masters=1)
        self.stage_timeouts({"Adding router ca": 2})
        self.openshift_objects([self.condition("Available", "True", "All is well")])
        if self.get(INGRESS_CA_PATH + "/default-ingress-cert") is not None:
            raise unittest.SkipTest("the cluster has its own ingress CA")
        c = self.controller(cid, env={"PATH": self.path_without_oc()})
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        reason = "Cluster finalizing stage 'Adding router ca' has been timed out after timeout duration of 0 minutes"
        st, cl = self.hub.cluster(cid)
        self.assertEqual((cl["status"], cl["status_info"]), ("error", reason))
        self.assertEqual(self.events(cid, "cluster_installation_failed"), ["Failed installing cluster. Reason: " + reason])
        self.assertEqual(self.finalizing_stages(cid), ["Waiting for cluster operators", "Adding router ca"])
        self.assertEqual(self.cluster_requests(cid, "uploads/ingress-cert", "POST"), [])
        self.assertEqual(self.cluster_requests(cid, "actions/complete-installation", "POST"), [])
        self.assertGreaterEqual(c.log().count("fetching default-ingress-cert configmap"), 2)
        self.assertIn("Cluster installation failed.", c.log())


class TestDnsAddress(Lab):
    """HackDNSAddressConflict (notes §5.6): the tenth address of the
    install-config's service network belongs to openshift-dns/dns-default;
    a Service of another name holding it is deleted, and the DNS operator's
    pods with it, so that the operator makes dns-default again.

    The service network is the test's: a /24 of the cluster's real service
    range (read from a Service the test makes), so that the address can be
    given to a Service on a real cluster too. On a cluster that has its own
    kube-system/cluster-config-v1 (a real OpenShift cluster) the tests skip:
    its DNS Service and operator are never touched."""

    SERVICES = "/api/v1/namespaces/%s/services"
    OPERATOR_PODS = "/api/v1/namespaces/openshift-dns-operator/pods"

    def service(self, ns, name, ip=None):
        spec = {"ports": [{"port": 53, "protocol": "UDP"}]}
        if ip:
            spec["clusterIP"] = ip
        return self.kube.request("POST", self.SERVICES % ns, {"apiVersion": "v1", "kind": "Service",
                                                              "metadata": {"name": name}, "spec": spec})

    def address_network(self):
        """A network of the cluster's service range whose .10 no Service
        holds: (network, address)."""
        import random
        r = self.service(self.namespace, "range-probe")
        self.assertEqual(r.status, 201, r)
        self.kube.made.append(self.SERVICES % self.namespace + "/range-probe")
        ip = r.json["spec"]["clusterIP"]
        if ":" in ip:
            raise unittest.SkipTest("an IPv6 service range (the IPv6 address is a unit test's)")
        a, b, c, _ = ip.split(".")
        taken = set(s["spec"].get("clusterIP") for s in self.kube.ok("GET", "/api/v1/services").json["items"])
        for third in random.sample(range(1, 255), 254):
            address = "%s.%s.%d.10" % (a, b, third)
            if address not in taken:
                return "%s.%s.%d.0/24" % (a, b, third), address
        raise unittest.SkipTest("no free .10 address in %s.%s.0.0/16" % (a, b))

    def at(self, ns, name, address):
        """A Service of the test's holding address (made again while a
        real cluster still holds a just-released address)."""
        def made():
            r = self.service(ns, name, address)
            if r.status == 422:
                return None
            self.assertEqual(r.status, 201, r)
            return r
        wait_for("a Service %s/%s at %s" % (ns, name, address), made, timeout=30, interval=0.5)
        self.kube.made.append(self.SERVICES % ns + "/" + name)

    def install_config(self, network):
        self.own("/api/v1/namespaces/kube-system/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-config-v1"},
            "data": {"install-config": "apiVersion: v1\nbaseDomain: example.com\nmetadata:\n  name: %s\n"
                                       "networking:\n  networkType: OVNKubernetes\n  serviceNetwork:\n"
                                       "  - %s\n  - fd02::/112\nplatform:\n  none: {}\n"
                                       % (self.prefix, network)}})

    def operator_pods(self):
        """Two pods of the DNS operator's namespace, the test's own; skips
        where the namespace has pods of its own (a real operator's)."""
        self.kube.ensure_namespace("openshift-dns-operator")
        mine = ["%s-dns-operator-%d" % (self.prefix, i) for i in range(2)]
        others = [p["metadata"]["name"] for p in self.kube.ok("GET", self.OPERATOR_PODS).json["items"]]
        if others:
            raise unittest.SkipTest("openshift-dns-operator has pods of its own (%s): the deletecollection "
                                    "would delete them" % ", ".join(others[:3]))
        for name in mine:
            self.kube.create(self.OPERATOR_PODS, {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "dns-operator", "image": "quay.io/openshift/dns-operator"}]}})
        return mine

    def started(self):
        st, cl = self.hub.register_cluster(name=self.prefix)
        self.assertEqual(st, 201, cl)
        self.addCleanup(self.hub.call, "DELETE", "/v2/clusters/%s" % cl["id"])
        return self.controller(cl["id"])

    def test_foreign_service_deleted_with_the_operator_pods(self):
        network, address = self.address_network()
        self.install_config(network)
        pods = self.operator_pods()
        self.at(self.namespace, "squatter", address)
        c = self.started()
        wait_for("the squatter deleted",
                 lambda: self.kube.request("GET", self.SERVICES % self.namespace + "/squatter").status == 404)
        wait_for("the DNS operator's pods deleted", lambda: not [
            p for p in self.kube.ok("GET", self.OPERATOR_PODS).json["items"] if p["metadata"]["name"] in pods])
        self.assertIn("Deleting service squatter in namespace %s whose IP %s conflicts with dns-default"
                      % (self.namespace, address), c.log())
        # the operator makes dns-default again: the hack is over
        self.kube.ensure_namespace("openshift-dns")
        if self.get(self.SERVICES % "openshift-dns" + "/dns-default") is not None:
            raise unittest.SkipTest("the cluster has its own openshift-dns/dns-default")
        self.at("openshift-dns", "dns-default", address)
        wait_for("the hack's end", lambda: "Service dns-default has successfully taken IP %s" % address in c.log()
                 and "HackDNSAddressConflict finished" in c.log())
        # the Service of the test's range probe, at another address, stays
        self.assertEqual(self.kube.request("GET", self.SERVICES % self.namespace + "/range-probe").status, 200)

    def test_dns_default_holding_it_is_left_alone(self):
        network, address = self.address_network()
        self.install_config(network)
        pods = self.operator_pods()
        self.kube.ensure_namespace("openshift-dns")
        if self.get(self.SERVICES % "openshift-dns" + "/dns-default") is not None:
            raise unittest.SkipTest("the cluster has its own openshift-dns/dns-default")
        self.at("openshift-dns", "dns-default", address)
        c = self.started()
        wait_for("the hack's end", lambda: "HackDNSAddressConflict finished" in c.log())
        self.assertIn("Service dns-default has successfully taken IP %s" % address, c.log())
        self.assertNotIn("Deleting service", c.log())
        self.assertEqual(self.kube.request("GET", self.SERVICES % "openshift-dns" + "/dns-default").status, 200)
        names = [p["metadata"]["name"] for p in self.kube.ok("GET", self.OPERATOR_PODS).json["items"]]
        self.assertEqual(sorted(set(pods) & set(names)), sorted(pods))

    def test_no_install_config_no_hack(self):
        """Without cluster-config-v1 (or with a network that does not parse)
        the hack ends at once, as upstream's, and nothing is listed."""
        if self.get("/api/v1/namespaces/kube-system/configmaps/cluster-config-v1") is not None:
            raise unittest.SkipTest("the cluster has its own kube-system/cluster-config-v1")
        c = self.started()
        wait_for("the hack's end", lambda: "HackDNSAddressConflict finished" in c.log())
        self.assertIn("Failed to get service networks", c.log())
        self.assertNotIn("No service found with IP", c.log())


FAKE_OC_DEBUG = r"""#!/usr/bin/python3
# oc debug node/<n> -- chroot /host last reboot, as a node rebooted twice
# answers it; the first try of each node fails (no debug pod yet). Each
# call is recorded with the kubeconfig's modes and text.
import json, os, sys
record = os.environ["FAKE_OC_RECORD"]
args = sys.argv[1:]
kc = args[1] if len(args) > 1 else ""
seen = []
if os.path.exists(record):
    with open(record) as f:
        seen = [json.loads(line) for line in f]
entry = {"argv": args}
if os.path.isfile(kc):
    entry["kubeconfig_mode"] = os.stat(kc).st_mode & 0o777
    entry["dir_mode"] = os.stat(os.path.dirname(kc)).st_mode & 0o777
    with open(kc) as f:
        entry["kubeconfig"] = f.read()
with open(record, "a") as f:
    f.write(json.dumps(entry) + "\n")
if not [e for e in seen if e["argv"] == args]:
    print("error: the debug pod did not start", file=sys.stderr)
    sys.exit(1)
print("reboot   system boot  5.14.0-284.el9 Thu Nov 27 10:02   still running")
print("reboot   system boot  5.14.0-284.el9 Thu Nov 27 09:41 - 10:01  (00:20)")
print("")
print("wtmp begins Thu Nov 27 09:41:07 2026")
"""


class TestReboots(Lab):
    """NOTIFY_NUM_REBOOTS (notes §5.8): each host reported Done gets its
    node's reboots counted with oc debug (a recording oc here) and the
    event reboots_for_node in the service's record."""

    def debug_oc(self):
        """A directory with the recording oc, and its record."""
        bindir = os.path.join(self.tmp, self.prefix + "-bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "oc"), "w") as f:
            f.write(FAKE_OC_DEBUG)
        os.chmod(os.path.join(bindir, "oc"), 0o755)
        return bindir, os.path.join(self.tmp, self.prefix + "-oc.jsonl")

    def test_reboots_for_node(self):
        cid, ie, hosts = self.seed(masters=2, workers=0)
        bindir, record = self.debug_oc()
        c = self.controller(cid, env={"NOTIFY_NUM_REBOOTS": "true", "FAKE_OC_RECORD": record,
                                      "PATH": bindir + ":" + os.environ.get("PATH", "")})
        for hid, name, ip, role in hosts:
            self.node(name, ip, ready=True)

        def reboot_events():
            st, evs = self.hub.events(cluster_id=cid)
            self.assertEqual(st, 200, evs)
            return [e for e in evs if e.get("name") == "reboots_for_node"]
        evs = wait_for("an event per host", lambda: len(reboot_events()) == len(hosts) and reboot_events())
        by_host = {e["host_id"]: e for e in evs}
        for hid, name, ip, role in hosts:
            e = by_host[hid]
            self.assertEqual(e["message"], "Node %s has been rebooted 2 times before completing installation" % name)
            self.assertEqual(e["severity"], "info")
            self.assertEqual(e["infra_env_id"], ie)
            self.assertEqual(e["cluster_id"], cid)
            self.assertIn("Done", self.stages(hid))
        # upstream's command line, tried again after a failure, with the
        # service's kubeconfig-noingress (0600 in a 0700 directory)
        with open(record) as f:
            calls = [json.loads(line) for line in f]
        for hid, name, ip, role in hosts:
            mine = [x for x in calls if x["argv"][3:4] == ["node/" + name]]
            self.assertEqual(len(mine), 2, calls)
            self.assertEqual(mine[0]["argv"][0], "--kubeconfig")
            self.assertEqual(mine[0]["argv"][2:], ["debug", "node/" + name, "--", "chroot", "/host", "last",
                                                   "reboot"])
            self.assertEqual(mine[0]["kubeconfig"], KUBECONFIG_NOINGRESS)
            self.assertEqual(mine[0]["kubeconfig_mode"], 0o600)
            self.assertEqual(mine[0]["dir_mode"], 0o700)
        kubeconfig = calls[0]["argv"][1]
        self.assertIn("number of reboots for node %s is 2" % hosts[0][1], c.log())
        self.assertNotIn("server: https://api.test.example.com", c.log())
        # downloaded once, removed at the end
        self.assertEqual(len(self.svc.requests(path="/clusters/%s/downloads/credentials" % cid, method="GET")), 1)
        c.stop()
        self.assertFalse(os.path.exists(kubeconfig))
        self.assertFalse(os.path.exists(os.path.dirname(kubeconfig)))

    def test_without_notify_no_oc(self):
        cid, ie, hosts = self.seed(masters=1, workers=0)
        bindir, record = self.debug_oc()
        self.controller(cid, env={"FAKE_OC_RECORD": record, "PATH": bindir + ":" + os.environ.get("PATH", "")})
        hid, name, ip, role = hosts[0]
        self.node(name, ip, ready=True)
        wait_for("Done", lambda: "Done" in self.stages(hid))
        time.sleep(1)
        self.assertFalse(os.path.exists(record))
        st, evs = self.hub.events(cluster_id=cid)
        self.assertEqual([e for e in evs if e.get("name") == "reboots_for_node"], [])


FAKE_OC_APPLY = r"""#!/usr/bin/python3
# a recording `oc ... apply -f F`: its argv, the manifest it was given and
# a digest of the kubeconfig (never its text)
import hashlib, json, os, sys
kc = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--kubeconfig=")), None)
f = sys.argv[sys.argv.index("-f") + 1] if "-f" in sys.argv else None
rec = {"argv": sys.argv[1:], "kubeconfig": kc,
       "kubeconfig_sha256": hashlib.sha256(open(kc, "rb").read()).hexdigest() if kc and os.path.exists(kc) else None,
       "manifest": open(f).read() if f else None}
with open(os.environ["FAKE_OC_RECORD"], "a") as out:
    out.write(json.dumps(rec) + "\n")
print("localvolume.local.storage.openshift.io/local-disks created")
"""
LOCAL_VOLUME = ("apiVersion: local.storage.openshift.io/v1\nkind: LocalVolume\nmetadata:\n  name: local-disks\n"
                "  namespace: openshift-local-storage")
UNINITIALIZED_TAINT = {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true",
                       "effect": "NoSchedule"}


class AgentService:
    """An INVENTORY_URL where no assisted-service answers: a listening
    socket on 127.0.0.1 that counts the connections made to it and closes
    each at once (the controller's client sees the connection reset)."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def stop(self):
        import socket
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class TestAgentInstaller(Lab):
    """The agent-based installer (notes §3 steps 7-11, §5.3 ABI variant,
    §6): openshift-install-manifests says invoker agent-installer; the
    service ran on the rendezvous host and goes away with it. A single
    node never calls it; with several nodes the controller reports what it
    can while the service answers, keeps approving the rendezvous host's
    kubelet, and ends on the new cluster's word: the ClusterVersion
    Available and every master listed. The OLM operators' manifests come
    from the ConfigMap olm-operator-manifests, as the service renders it
    (operators/manager.go: metadata YAML, base64 files).

    On a cluster that has its own openshift-install-manifests,
    ClusterVersion or cluster-config-v1 (a real OpenShift cluster) the
    tests skip; the masters the cluster has of its own are counted in."""

    def setUp(self):
        super().setUp()
        self.kube.ensure_namespace("openshift-config")
        self.own("/api/v1/namespaces/openshift-config/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "openshift-install-manifests"},
            "data": {"invoker": "agent-installer"}})

    def cluster_version(self, available):
        if self.get(CV_PATH + "/version") is None:
            self.own(CV_PATH, {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
                               "metadata": {"name": "version"}, "spec": {"clusterID": str(uuid.uuid4())}})
        self.status_patch(CV_PATH + "/version", {
            "availableUpdates": [], "observedGeneration": 1, "versionHash": "x",
            "desired": {"image": "quay.io/openshift-release-dev/ocp-release:4.16.3-x86_64", "version": "4.16.3"},
            "conditions": [self.condition("Available", "True" if available else "False"),
                           self.condition("Progressing", "False" if available else "True")]})

    def olm_operator(self):
        """lso, initialized (its Subscription's current CSV exists), and the
        ConfigMap the service renders for it in the controller's namespace."""
        import base64
        ns = self.prefix + "-lso"
        self.kube.ensure_namespace(ns)
        self.own(SUBSCRIPTIONS % ns, {
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": "local-storage-operator"},
            "spec": {"name": "local-storage-operator", "source": "redhat-operators",
                     "sourceNamespace": "openshift-marketplace"}})
        self.status_patch(SUBSCRIPTIONS % ns + "/local-storage-operator",
                          {"currentCSV": "lso.v4.16.0",
                           "lastUpdated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self.own(CSVS % ns, {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                             "metadata": {"name": "lso.v4.16.0"},
                             "spec": {"displayName": "Local Storage", "version": "4.16.0",
                                      "install": {"strategy": "deployment"}}})
        self.kube.create("/api/v1/namespaces/%s/configmaps" % self.namespace, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "olm-operator-manifests"},
            "data": {"lso.metadata.yaml": "manifests:\n- lso-01.yaml\nnamespace: %s\n"
                                          "subscriptionName: local-storage-operator\n" % ns,
                     "lso-01.yaml": base64.b64encode(LOCAL_VOLUME.encode()).decode()}})

    def recording_oc(self):
        bindir = os.path.join(self.tmp, self.prefix + "-bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "oc"), "w") as f:
            f.write(FAKE_OC_APPLY)
        os.chmod(os.path.join(bindir, "oc"), 0o755)
        record = os.path.join(self.tmp, self.prefix + "-oc.jsonl")
        return {"PATH": bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"), "FAKE_OC_RECORD": record}, record

    @staticmethod
    def applied(record):
        if not os.path.exists(record):
            return []
        with open(record) as f:
            return [json.loads(line) for line in f]

    def masters_of_its_own(self):
        return len(self.kube.ok("GET", "/api/v1/nodes?labelSelector=node-role.kubernetes.io/master").json["items"])

    def ready_event(self):
        return self.get("/api/v1/namespaces/%s/events/AssistedControllerIsReady" % self.namespace)

    def test_single_node_never_calls_the_service(self):
        nowhere = AgentService()
        self.addCleanup(nowhere.stop)
        self.cluster_version(available=False)
        self.olm_operator()
        env, record = self.recording_oc()
        env.update({"INVENTORY_URL": nowhere.url, "CONTROL_PLANE_COUNT": "1"})
        c = self.controller(str(uuid.uuid4()), env=env)
        calls = wait_for("the operator's manifest applied", lambda: self.applied(record))
        self.assertEqual(calls[0]["argv"][:3], ["--kubeconfig=" + self.kube.kubeconfig_path, "apply", "-f"])
        self.assertEqual(calls[0]["manifest"], LOCAL_VOLUME)
        self.assertIsNotNone(calls[0]["kubeconfig_sha256"])
        # the ClusterVersion not Available yet: the run goes on
        wait_for("two checks of the ClusterVersion", lambda: c.log().count("ClusterVersion Available!=True") >= 2)
        self.assertIsNone(c.proc.poll())
        self.cluster_version(available=True)
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        # applied once; the service never heard of it, nor the bootstrap's wait
        self.assertEqual(len(self.applied(record)), 1)
        self.assertEqual(nowhere.connections, 0)
        self.assertIsNone(self.ready_event())
        self.assertIn("skipping access to assisted-service API", c.log())
        self.assertNotIn("final log uploads", c.log())

    def test_several_nodes_to_the_last_master(self):
        own_masters = self.masters_of_its_own()
        cid, ie, hosts = self.seed(masters=3)
        self.cluster_version(available=True)
        self.olm_operator()
        env, record = self.recording_oc()
        env["CONTROL_PLANE_COUNT"] = str(own_masters + 3)
        # the two masters that are not the rendezvous host joined
        for hid, name, ip, role in hosts[:2]:
            self.node(name, ip, ready=True)
        c = self.controller(cid, env=env)
        wait_for("the ready event", self.ready_event)
        for hid, name, ip, role in hosts[:2]:
            wait_for("%s Done" % name, lambda: "Done" in self.stages(hid))
            self.assertEqual(self.stages(hid)[-2:], ["Joined", "Done"])
        calls = wait_for("the operator's manifest applied", lambda: self.applied(record))
        self.assertEqual(calls[0]["manifest"], LOCAL_VOLUME)
        # with the service's kubeconfig-noingress
        import hashlib
        self.assertEqual(calls[0]["kubeconfig_sha256"], hashlib.sha256(KUBECONFIG_NOINGRESS.encode()).hexdigest())
        # the rendezvous host reboots: the service goes with it
        self.svc.control("POST", "/faults", [{"path": "/clusters/%s" % cid, "action": "reset", "count": 1000000}])
        rendezvous = hosts[2]
        client = self.csr(self.prefix + "-rendezvous", BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                          "kubernetes.io/kube-apiserver-client-kubelet", ["digital signature", "client auth"],
                          "system:node:" + rendezvous[1], ["system:nodes"])
        stranger = self.csr(self.prefix + "-stranger", BOOTSTRAPPER, BOOTSTRAPPER_GROUPS,
                            "kubernetes.io/kube-apiserver-client-kubelet", ["digital signature", "client auth"],
                            "system:node:%s-intruder" % self.prefix, ["system:nodes"])

        def approved(name):
            conds = (self.csr_get(name).get("status") or {}).get("conditions") or []
            return next((x for x in conds if x["type"] == "Approved"), None)

        wait_for("the rendezvous host's kubelet approved", lambda: approved(client))
        wait_for("the stranger refused", lambda: "Not approving CSR %s:" % stranger in c.log())
        self.assertIsNone(approved(stranger))
        self.assertIn("Deciding the CSRs on the hosts the service gave last", c.log())
        # two masters of three: the run goes on
        wait_for("a count of the masters", lambda: "Waiting for all control-plane nodes to join the cluster (%d/%d)"
                 % (own_masters + 2, own_masters + 3) in c.log())
        self.assertIsNone(c.proc.poll())
        self.node(rendezvous[1], rendezvous[2], ready=True)
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        self.assertIn("All expected control-plane nodes have joined the cluster", c.log())
        self.assertIn("final log uploads skipped", c.log())
        # gone for good: after one call's tries, one try per call, so that
        # no round spends minutes on retries while the CSRs wait
        log = c.log()
        vanished = log.find("assisted-service did not answer the ")
        self.assertGreater(vanished, 0, log[-3000:])
        self.assertRegex(log[:vanished], r"failed \(.*\), retry 15 in ")
        self.assertNotRegex(log[vanished:], r"failed \(.*\), retry \d+ in ")
        # none of the finalizing stages, no completion, no final upload
        self.assertEqual(self.finalizing_stages(cid), [])
        self.assertEqual(self.cluster_requests(cid, "actions/complete-installation", "POST"), [])
        self.assertEqual(self.svc.requests(path="/clusters/%s/logs-progress$" % cid), [])
        self.assertEqual(len(self.applied(record)), 1)

    def test_several_nodes_without_the_service(self):
        """The controller starts after the service went away (the Job's
        next pod): 5 minutes (here 1 s) of SetReadyState, then the platform
        from the install-config; vSphere without credentials: every Node
        loses the uninitialized taint."""
        if self.get("/api/v1/namespaces/kube-system/configmaps/cluster-config-v1") is not None:
            raise unittest.SkipTest("the cluster has its own kube-system/cluster-config-v1")
        self.own("/api/v1/namespaces/kube-system/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-config-v1"},
            "data": {"install-config": "apiVersion: v1\nbaseDomain: example.com\nmetadata:\n  name: %s\n"
                                       "platform:\n  vsphere:\n    vcenters:\n    - server: vcenterplaceholder\n"
                                       "      user: usernameplaceholder\n" % self.prefix}})
        nowhere = AgentService()
        self.addCleanup(nowhere.stop)
        own_masters = self.masters_of_its_own()
        names = ["%s-master-%d" % (self.prefix, i) for i in range(3)]
        for i, name in enumerate(names):
            self.kube.node(name, "%s.%d" % (self.net, 10 + i), role="master", ready=i < 2,
                           taints=[UNINITIALIZED_TAINT])
        self.cluster_version(available=True)
        c = self.controller(str(uuid.uuid4()), args=["--agent-ready-timeout", "1"],
                            env={"INVENTORY_URL": nowhere.url, "CONTROL_PLANE_COUNT": str(own_masters + 3),
                                 "OPENSHIFT_VERSION": "4.16"})

        def tainted():
            return [n for n in names if UNINITIALIZED_TAINT["key"] in
                    [t["key"] for t in (self.kube.ok("GET", NODES_PATH + "/" + n).json["spec"].get("taints") or [])]]

        wait_for("every node untainted", lambda: not tainted())
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        log = c.log()
        self.assertIn("SetReadyState timed out fetching cluster from assisted-service", log)
        self.assertIn("platform type from install-config: vsphere", log)
        self.assertIn("Remove uninitialized taint: true", log)
        self.assertGreater(nowhere.connections, 0)
        self.assertIsNone(self.ready_event())


class TestDryRun(Lab):
    """DRY_ENABLE (notes §8): no Kubernetes API at all (the kubeconfig names
    nothing that exists); the new cluster is the hosts file, each host a
    Ready node once its reboot marker exists; every call to the service is
    real, and the service decides finalizing and installed by its own
    rules."""

    def test_needs_the_hosts_file(self):
        c = self.dry_controller("x")
        self.assertEqual(c.wait(), 2)
        self.assertIn("the dry run (DRY_ENABLE) needs DRY_CLUSTER_HOSTS_PATH", c.log())

    def test_to_installed(self):
        cid, ie, hosts = self.seed(masters=3, workers=1)
        path, markers = self.hosts_file(hosts)
        first = hosts[0][0]
        c = self.dry_controller(cid, {"DRY_CLUSTER_HOSTS_PATH": path, "DRY_FAKE_REBOOT_MARKER_PATH": markers[first]})
        # nothing before the first host's reboot
        wait_for("the wait for the marker", lambda: "dry run: waiting for %s" % markers[first] in c.log())
        time.sleep(1)
        self.assertIsNone(c.proc.poll())
        self.assertEqual(self.stages(first), ["Starting installation", "Rebooting"])
        # the first host reboots: its node is Ready, it is Joined and Done;
        # the others have not rebooted and stay at Rebooting
        open(markers[first], "w").close()
        wait_for("the first host Done", lambda: "Done" in self.stages(first))
        self.assertEqual(self.stages(first), ["Starting installation", "Rebooting", "Joined", "Done"])
        rounds = c.log().count("task nodes")
        wait_for("two node rounds more", lambda: c.log().count("task nodes") >= rounds + 2)
        for hid, name, ip, role in hosts[1:]:
            self.assertEqual(self.stages(hid), ["Starting installation", "Rebooting"])
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "installing")
        # the others reboot
        for hid, name, ip, role in hosts[1:]:
            open(markers[hid], "w").close()
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        for hid, name, ip, role in hosts:
            self.assertEqual(self.stages(hid), ["Starting installation", "Rebooting", "Joined", "Done"])
        # the finalizing stages, the console operator the dry cluster has
        # (the reference service monitors no cvo), its ingress CA, completion
        self.assertEqual(self.finalizing_stages(cid), ["Waiting for cluster operators", "Adding router ca",
                                                       "Waiting for olm operators csv initialization", "Done"])
        reports = {r["body"]["name"]: r["body"] for r in self.cluster_requests(cid, "monitored-operators", "PUT")}
        self.assertEqual(reports["console"], {"name": "console", "status": "available", "status_info": "All is well",
                                              "version": "4.13"})
        uploads = self.cluster_requests(cid, "uploads/ingress-cert", "POST")
        self.assertEqual(len(uploads), 1)
        self.assertTrue(uploads[0]["body"].startswith("-----BEGIN CERTIFICATE-----\n"), uploads[0]["body"])
        done = self.cluster_requests(cid, "actions/complete-installation", "POST")
        self.assertEqual([r["body"] for r in done], [{"is_success": True}])
        st, cl = self.hub.cluster(cid)
        self.assertEqual((cl["status"], cl["status_info"]), ("installed", "Cluster is installed"))
        log = c.log()
        self.assertIn("dry run: the cluster is the 4 hosts of %s" % path, log)
        self.assertNotIn("k8 client", log)


class TestLate2023Service(TestDryRun):
    """The reference service playing the late-2023 API: it has no
    v2UpdateClusterFinalizingProgress (its router answers 404 "path ... was
    not found"); the controller says so once and finalizes without stages."""

    @classmethod
    def setUpClass(cls):
        import refclient
        if refclient.real_service():
            raise unittest.SkipTest("plays the late-2023 API with the reference service; "
                                    "CRADLE_TEST_SERVICE_URL is set")
        cls.start_lab(["--api-generation", "2023"])

    test_needs_the_hosts_file = None

    def test_to_installed(self):
        cid, ie, hosts = self.seed(masters=3, workers=0)
        path, markers = self.hosts_file(hosts)
        for hid, name, ip, role in hosts:
            open(markers[hid], "w").close()
        c = self.dry_controller(cid, {"DRY_CLUSTER_HOSTS_PATH": path,
                                      "DRY_FAKE_REBOOT_MARKER_PATH": markers[hosts[0][0]]})
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        self.assertEqual(c.log().count("This assisted-service has no finalizing stages"), 1)
        done = self.cluster_requests(cid, "actions/complete-installation", "POST")
        self.assertEqual([r["body"] for r in done], [{"is_success": True}])
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "installed")


if __name__ == "__main__":
    if not os.path.exists(BINARY):
        print("SKIP: %s is missing" % BINARY)
        sys.exit(77)
    unittest.main(verbosity=2)
