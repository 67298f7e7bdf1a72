#!/usr/bin/python3
"""The Kubernetes side of the bootstrap tests: the test kube-apiserver
(tests/kubeapi/kubeapi.py, one per test class), or, when
CRADLE_TEST_KUBECONFIG names a kubeconfig, that cluster. The test plays the
new cluster through it: it installs the CRDs the bootstrap reads
(etcds.operator.openshift.io, machineconfigs.machineconfiguration.openshift.io),
writes kube-system/cluster-config-v1 and openshift-install-manifests,
creates Nodes and turns them Ready through the status subresource, posts
the controller's Event and gives its pod logs (the test server only).

A real cluster has other writers, and some names are fixed by the upstream
contract (kube-system/cluster-config-v1, etcds/cluster, the namespace
assisted-installer, the AssistedControllerIsReady event): the tests run one
after another (meson: is_parallel false), every object a test makes is
removed afterwards (the namespaces it had to create when the class ends),
nodes and machine configs have names of their own per test, and nothing
assumes a namespace holds only what the test put there.

Other writers also change what the test made, right after it made it: the
controller manager annotates and taints every new Node and turns the
Ready condition of a node without kubelet heartbeats Unknown after 40 s,
and a new CRD has no conditions (null) until the apiserver names it. So a
node's status is patched (never read and written back), each node the test
plays has a kubelet's heartbeat (its Lease in kube-node-lease, renewed every
10 s), and the test server runs with the same 40 s grace period.

Standard library + python3-yaml (for kubeconfigs and the CRD files).
"""
import base64
import http.client
import json
import os
import socket
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "kubeapi"))
CRDS = os.path.join(HERE, "crds")


class Response:
    def __init__(self, status, raw):
        self.status = status
        self.raw = raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return "<Response %d %s>" % (self.status, self.raw[:300])


def _load_kubeconfig(path):
    import yaml
    with open(path) as f:
        kc = yaml.safe_load(f)
    base = os.path.dirname(os.path.abspath(path))
    ctx_name = kc.get("current-context")
    ctx = next(c["context"] for c in kc["contexts"] if c["name"] == ctx_name)
    cluster = next(c["cluster"] for c in kc["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in kc["users"] if u["name"] == ctx["user"])

    def data(obj, key):
        if obj.get(key + "-data"):
            return base64.b64decode(obj[key + "-data"])
        if obj.get(key):
            p = obj[key] if os.path.isabs(obj[key]) else os.path.join(base, obj[key])
            with open(p, "rb") as f:
                return f.read()
        return None

    return {"server": cluster["server"], "ca": data(cluster, "certificate-authority"),
            "insecure": cluster.get("insecure-skip-tls-verify", False),
            "cert": data(user, "client-certificate"), "key": data(user, "client-key"),
            "token": user.get("token") or (open(user["tokenFile"]).read().strip() if user.get("tokenFile") else None)}


# kube-controller-manager's --node-monitor-grace-period
NODE_MONITOR_GRACE = 40
# the kubelet's node lease renewal (a quarter of its 40 s duration)
KUBELET_HEARTBEAT = 10


class Cluster:
    """Either the test server (fake: start() starts it) or a real cluster."""

    def __init__(self):
        self.kubeconfig_path = os.environ.get("CRADLE_TEST_KUBECONFIG")
        self.fake = not self.kubeconfig_path
        self.server = None
        self.tmp = tempfile.mkdtemp(prefix="cradle-kubelab-")
        self.made = []  # paths to delete at cleanup, in reverse
        self.namespaces_made = []  # deleted at stop()
        self.kubelets = set()  # nodes whose Lease the heartbeat renews
        self.heartbeat_lock = threading.Lock()
        self.heartbeat_stop = threading.Event()
        self.heartbeat = None

    def start(self):
        if self.fake:
            import kubeapi_harness
            args = ["--node-monitor-grace-period", str(NODE_MONITOR_GRACE)] + kubeapi_harness.args_from_env()
            self.server = kubeapi_harness.Server(args).start()
            self.kubeconfig_path = self.server.path("kubeconfig")
        self.kc = _load_kubeconfig(self.kubeconfig_path)
        u = urllib.parse.urlsplit(self.kc["server"])
        self.host, self.port = u.hostname, u.port or 443
        self.base = u.path.rstrip("/")
        ctx = ssl.create_default_context()
        if self.kc["insecure"]:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.kc["ca"]:
            ctx.load_verify_locations(cadata=self.kc["ca"].decode())
        if self.kc["cert"]:
            cf, kf = os.path.join(self.tmp, "c.crt"), os.path.join(self.tmp, "c.key")
            for p, d in ((cf, self.kc["cert"]), (kf, self.kc["key"])):
                with open(os.open(p, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                    f.write(d)
            ctx.load_cert_chain(cf, kf)
        self.ctx = ctx
        self.apply_crds()
        return self

    def stop(self):
        self.cleanup()
        self.heartbeat_stop.set()
        if self.heartbeat:
            self.heartbeat.join()
        for ns in reversed(self.namespaces_made):
            self.delete("/api/v1/namespaces/" + ns)
        self.namespaces_made = []
        if self.server:
            self.server.stop()
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)

    def need_server(self, why):
        """Skips (unittest) on a real cluster: the test needs the test server's control API."""
        if not self.fake:
            import unittest
            raise unittest.SkipTest("needs the test kube-apiserver's control API (%s); CRADLE_TEST_KUBECONFIG "
                                    "names a real cluster" % why)

    # -- requests ---------------------------------------------------------
    def request(self, method, path, body=None, ctype="application/json"):
        h = {"Accept": "application/json"}
        if self.kc["token"]:
            h["Authorization"] = "Bearer " + self.kc["token"]
        data = None
        if body is not None:
            data = json.dumps(body)
            h["Content-Type"] = ctype
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)
        try:
            c.request(method, self.base + path, body=data, headers=h)
            r = c.getresponse()
            return Response(r.status, r.read())
        finally:
            c.close()

    def ok(self, method, path, body=None, ctype="application/json", allow=()):
        r = self.request(method, path, body, ctype)
        if r.status >= 300 and r.status not in allow:
            raise AssertionError("%s %s: %s" % (method, path, r))
        return r

    def ctl(self, method, path, body=None):
        self.need_server("control " + path)
        return self.server.ctl(method, path, body)

    # -- objects ------------------------------------------------------------
    def create(self, path, obj, cleanup=True):
        """POST obj to the collection path; AlreadyExists replaces it (read
        again and retried while another writer changes it in between). The
        object is deleted at cleanup."""
        r = self.request("POST", path, obj)
        name = obj["metadata"]["name"]
        for _ in range(20):
            if r.status != 409:
                break
            cur = self.ok("GET", path + "/" + name).json
            put = dict(obj, metadata=dict(obj["metadata"], resourceVersion=cur["metadata"]["resourceVersion"]))
            r = self.request("PUT", path + "/" + name, put)
        if r.status >= 300:
            raise AssertionError("create %s/%s: %s" % (path, name, r))
        if cleanup:
            self.made.append(path + "/" + name)
        return r.json

    def ensure_namespace(self, name, timeout=180):
        """The namespace, Active. One a previous class deleted is still
        Terminating on a real cluster until the namespace controller has
        emptied it, and refuses new objects (403 "being terminated"): wait
        for it to go, then make it anew."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": name}})
            if r.status == 201:
                self.namespaces_made.append(name)
                return
            if r.status != 409:
                raise AssertionError("namespace %s: %s" % (name, r))
            g = self.request("GET", "/api/v1/namespaces/" + name)
            if g.status == 200 and not (g.json.get("metadata") or {}).get("deletionTimestamp"):
                return
            if time.monotonic() > deadline:
                raise AssertionError("namespace %s still Terminating after %d s" % (name, timeout))
            time.sleep(0.5)

    def delete(self, path):
        self.request("DELETE", path)

    def cleanup(self):
        with self.heartbeat_lock:
            self.kubelets.clear()
        for p in reversed(self.made):
            self.delete(p)
        self.made = []

    def apply_crds(self):
        import kubeapi_harness
        for f in sorted(os.listdir(CRDS)):
            for d in kubeapi_harness.yaml_docs(os.path.join(CRDS, f)):
                path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
                r = self.request("POST", path, d)
                if r.status not in (201, 409):
                    raise AssertionError("CRD %s: %s" % (d["metadata"]["name"], r))
                self.wait_established(d["metadata"]["name"])

    def wait_established(self, name, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            r = self.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name)
            # null until the apiserver's naming controller ran
            conds = ((r.json or {}).get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conds):
                return
            time.sleep(0.2)
        raise AssertionError("CRD %s is not Established" % name)

    # -- the cluster the bootstrap sees ---------------------------------------
    def install_config(self, masters, arbiters=0):
        text = "apiVersion: v1\nbaseDomain: example.com\nmetadata:\n  name: test\ncontrolPlane:\n  name: master\n" \
               "  replicas: %d\n" % masters
        if arbiters:
            text += "arbiter:\n  name: arbiter\n  replicas: %d\n" % arbiters
        self.create("/api/v1/namespaces/kube-system/configmaps",
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-config-v1"},
                     "data": {"install-config": text}})

    def invoker(self, invoker):
        self.ensure_namespace("openshift-config")
        self.create("/api/v1/namespaces/openshift-config/configmaps",
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "openshift-install-manifests"},
                     "data": {"invoker": invoker}})

    def node(self, name, ip, role="master", ready=False, mc=None, taints=None):
        labels = {"node-role.kubernetes.io/%s" % role: ""}
        meta = {"name": name, "labels": labels}
        if mc:
            meta["annotations"] = {"machineconfiguration.openshift.io/currentConfig": mc,
                                   "machineconfiguration.openshift.io/desiredConfig": mc}
        obj = {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": {}}
        if taints:
            obj["spec"]["taints"] = taints
        self.create("/api/v1/nodes", obj)
        self.node_status(name, ip, ready)

    def node_status(self, name, ip, ready):
        """The node's Ready condition and addresses, as its kubelet posts them
        (a strategic merge patch: the controllers write the same Node), and
        the kubelet's heartbeat from then on."""
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.ok("PATCH", "/api/v1/nodes/%s/status" % name,
                {"status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                            "reason": "KubeletReady" if ready else "KubeletNotReady",
                                            "message": "test", "lastHeartbeatTime": now,
                                            "lastTransitionTime": now}],
                            "addresses": [{"type": "InternalIP", "address": ip},
                                          {"type": "Hostname", "address": name}]}},
                ctype="application/strategic-merge-patch+json")
        self.kubelet(name)

    def kubelet(self, name):
        """The node lease a kubelet keeps renewing, so that the node
        lifecycle controller never finds the node silent."""
        with self.heartbeat_lock:
            if name in self.kubelets:
                return
        self.ensure_namespace("kube-node-lease")
        self.create("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                    {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
                     "spec": {"holderIdentity": name, "leaseDurationSeconds": NODE_MONITOR_GRACE,
                              "renewTime": _micro_time()}})
        with self.heartbeat_lock:
            self.kubelets.add(name)
            if self.heartbeat is None:
                self.heartbeat = threading.Thread(target=self._heartbeats, name="kubelets", daemon=True)
                self.heartbeat.start()

    def _heartbeats(self):
        while not self.heartbeat_stop.wait(KUBELET_HEARTBEAT):
            with self.heartbeat_lock:
                names = sorted(self.kubelets)
            for n in names:
                try:
                    self.request("PATCH", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + n,
                                 {"spec": {"renewTime": _micro_time()}}, ctype="application/merge-patch+json")
                except OSError:
                    pass  # the next beat tries again

    def dry_run_create(self, obj):
        """POST obj with dryRun=All to its collection; None when the server
        does not serve the kind (the test server serves only some)."""
        group, _, version = obj["apiVersion"].rpartition("/")
        base = "/api/%s" % version if not group else "/apis/%s/%s" % (group, version)
        r = self.request("GET", base)
        if r.status != 200:
            return None
        res = next((x for x in r.json.get("resources", []) if x["kind"] == obj["kind"] and "/" not in x["name"]),
                   None)
        if not res:
            return None
        ns = obj["metadata"].get("namespace")
        if ns:
            self.ensure_namespace(ns)
        path = base + ("/namespaces/%s" % ns if res["namespaced"] else "") + "/" + res["name"]
        return self.request("POST", path + "?dryRun=All", obj)

    def get_node(self, name):
        return self.ok("GET", "/api/v1/nodes/" + name).json

    def machine_config(self, name):
        self.create("/apis/machineconfiguration.openshift.io/v1/machineconfigs",
                    {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
                     "metadata": {"name": name}, "spec": {"config": {"ignition": {"version": "3.2.0"}}}})

    def etcd(self):
        """etcds.operator.openshift.io/cluster, fresh (no overrides)."""
        path = "/apis/operator.openshift.io/v1/etcds"
        self.request("DELETE", path + "/cluster")
        for _ in range(100):
            if self.request("GET", path + "/cluster").status == 404:
                break
            time.sleep(0.1)
        return self.create(path, {"apiVersion": "operator.openshift.io/v1", "kind": "Etcd",
                                  "metadata": {"name": "cluster"}, "spec": {"managementState": "Managed"}})

    def get_etcd(self):
        return self.ok("GET", "/apis/operator.openshift.io/v1/etcds/cluster").json

    def controller_ready_event(self):
        self.ensure_namespace("assisted-installer")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return self.create("/api/v1/namespaces/assisted-installer/events",
                           {"apiVersion": "v1", "kind": "Event",
                            "metadata": {"name": "AssistedControllerIsReady", "namespace": "assisted-installer"},
                            # as the controller writes it (k8s_client CreateEvent)
                            "involvedObject": {"namespace": "assisted-installer",
                                               "name": "assisted-installer-controller"},
                            "reason": "AssistedControllerIsReady", "message": "Assisted controller is ready",
                            "type": "Normal", "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                            "source": {"component": "assisted-installer-controller"}})

    def controller_event_absent(self):
        self.ensure_namespace("assisted-installer")
        self.delete("/api/v1/namespaces/assisted-installer/events/AssistedControllerIsReady")

    def controller_pod(self, log_text):
        """A Running controller pod whose log is log_text (test server only)."""
        self.need_server("pod log text")
        self.ensure_namespace("assisted-installer")
        name = "assisted-installer-controller-" + uuid.uuid4().hex[:5]
        self.create("/api/v1/namespaces/assisted-installer/pods",
                    {"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "labels": {"job-name": "assisted-installer-controller"}},
                     "spec": {"nodeName": "master-x", "containers": [{"name": "assisted-installer-controller",
                                                                     "image": "quay.io/x/controller:latest"}]}})
        pod = self.ok("GET", "/api/v1/namespaces/assisted-installer/pods/" + name).json
        pod["status"] = {"phase": "Running"}
        self.ok("PUT", "/api/v1/namespaces/assisted-installer/pods/%s/status" % name, pod)
        self.ctl("POST", "/pods/log", {"namespace": "assisted-installer", "name": name,
                                       "container": "assisted-installer-controller", "text": log_text})
        return name

    def kubeconfig_text(self):
        """The kubeconfig with everything embedded, as bootstrap.ign carries
        /opt/openshift/auth/kubeconfig."""
        import yaml
        with open(self.kubeconfig_path) as f:
            kc = yaml.safe_load(f)
        base = os.path.dirname(os.path.abspath(self.kubeconfig_path))
        for section, key in (("clusters", "cluster"), ("users", "user")):
            for entry in kc.get(section, []):
                obj = entry[key]
                for k in ("certificate-authority", "client-certificate", "client-key"):
                    if obj.get(k):
                        p = obj[k] if os.path.isabs(obj[k]) else os.path.join(base, obj[k])
                        with open(p, "rb") as f:
                            obj[k + "-data"] = base64.b64encode(f.read()).decode()
                        del obj[k]
        return yaml.safe_dump(kc)

    def requests(self, **match):
        """What cradle sent (test server only)."""
        out = self.ctl("GET", "/requests")["requests"]
        return [r for r in out if all(r.get(k) == v for k, v in match.items())]


def _micro_time():
    """metav1.MicroTime, as a Lease's renewTime."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Proxy:
    """A TCP forwarder on 127.0.0.1:port to host:target_port (the API server
    coming up late)."""

    def __init__(self, port, host, target_port):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.target = (host, target_port)
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(self.target, timeout=30)
            except OSError:
                c.close()
                continue
            pair = {"lock": threading.Lock(), "left": 2}
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b, pair), daemon=True).start()

    @staticmethod
    def _pipe(a, b, pair):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with pair["lock"]:
            pair["left"] -= 1
            last = pair["left"] == 0
        if last:  # the other direction is done too
            a.close()
            b.close()

    def stop(self):
        self.stopping = True
        self.sock.close()
