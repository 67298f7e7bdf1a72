"""The hub lab: a whole installation driven by Kubernetes resources, on one
machine. tools/rehearse and tests/hub/test_hub_install.py build on it.

  * Lab: network namespaces (a switch "sw" with a bridge and an NTP
    server, hosts h1..hN with a veth into it, a default route to it and a
    chronyd; 198.51.100.0/24 only), loop-device disks (sparse files),
    background processes in their own process groups; everything removed
    at close(), also on SIGINT/SIGTERM. This process never enters them;
  * Relay: the hosts' only way out of the lab, to the service's address
    alone (the reference service's on 127.0.0.1, or the real one of
    CRADLE_TEST_SERVICE_URL);
  * Kube: a small Kubernetes client over a kubeconfig (the test
    kube-apiserver's, or CRADLE_TEST_KUBECONFIG's, given the CRDs it lacks);
  * Hub: the cradle-hub program;
  * start_agent(): a cradle agent in dry run inside a host's namespace,
    with its own disk (--lab-disks) and the installer's stand-ins first on
    PATH (nothing of this machine is ever written);
  * NewCluster: the cluster the installation makes, a second test
    kube-apiserver on which the lab plays only what the cluster's own
    components do (kubelets that ask for certificates and register their
    Nodes as the hosts reboot, the operators' objects);
  * start_controller(): cradle's assisted-installer-controller (`cradle
    controller`, controller/), the workload of the new cluster
    (notes/controller.md) that reports the hosts Joined and Done, approves
    the kubelets' requests and finishes the installation; against the
    NewCluster's API server, as in a real cluster, or in upstream's dry run
    (no API server: the hosts file the agents get is its cluster).

Standard library and python3-yaml; root for namespaces and loop devices.
"""
import atexit
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.normpath(os.path.join(HERE, "..", "..")))
BUILD = os.environ.get("CRADLE_BUILD_ROOT", os.path.join(SRC, "build"))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, os.path.join(SRC, "tests", "kubeapi"))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
import nsrelay  # noqa: E402

AGENT_IMAGE = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
CRDS = os.path.join(SRC, "tests", "reference", "assisted-service")
DOCS = os.path.join(CRDS, "docs", "hive-integration", "crds")


class LabError(Exception):
    """What stops the lab, in words for the person watching."""


def which(prog):
    return shutil.which(prog) or next((p for p in ("/usr/sbin/" + prog, "/sbin/" + prog) if os.path.exists(p)), None)


# ---- the lab --------------------------------------------------------------------------------------

class Lab(object):
    """Namespaces, disks and processes of one run; all gone at close()."""

    def __init__(self, name="lab", keep=False):
        self.tag = "chl" + uuid.uuid4().hex[:6]
        self.tmp = tempfile.mkdtemp(prefix="cradle-%s-" % name)
        self.keep = keep or os.environ.get("TEST_KEEP") == "1"
        self.procs = []
        self.namespaces = []
        self.loops = []
        self.closed = False
        self.hurrying = False
        self.on_close = []
        atexit.register(self.close)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, self._on_signal)

    def _on_signal(self, signum, frame):
        self.close(hurry=True)
        sys.stderr.write("\ninterrupted (signal %d): everything the lab made is removed\n" % signum)
        os._exit(128 + signum)

    def path(self, name):
        return os.path.join(self.tmp, name)

    # namespaces
    def netns(self, name):
        full = "%s-%s" % (self.tag, name)
        r = subprocess.run(["ip", "netns", "add", full], stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise LabError("cannot create the network namespace %s: %s" % (full, r.stderr.decode().strip()))
        self.namespaces.append(full)
        self.ip(full, "link", "set", "lo", "up")
        return full

    def ip(self, ns, *args):
        subprocess.run(["ip", "-n", ns] + list(args), check=True)

    def mac(self, ns, dev):
        out = subprocess.run(["ip", "-j", "-n", ns, "link", "show", dev], check=True, stdout=subprocess.PIPE).stdout
        return json.loads(out)[0]["address"]

    def sockets_in(self, ns):
        """A context in which the calling thread opens its sockets inside
        the lab namespace ns (setns is per thread); back to where the
        thread was afterwards. Other threads and started processes stay
        where they are."""
        return nsrelay.netns_context("/run/netns/" + ns)

    # disks
    def loop_disk(self, name, size_gib=120):
        """A sparse file as a loop device (it takes no space until written)."""
        f = self.path(name + ".img")
        with open(f, "wb") as fh:
            fh.truncate(size_gib << 30)
        r = subprocess.run(["losetup", "-f", "--show", f], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise LabError("cannot make a loop device: %s" % r.stderr.decode().strip())
        dev = r.stdout.decode().strip()
        self.loops.append(dev)
        return dev

    # processes
    def spawn(self, name, argv, ns=None, env=None):
        """A background process (its own process group), output in <name>.log."""
        full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
        log = open(self.path(name + ".log"), "ab")
        with log:
            p = subprocess.Popen(full, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                 start_new_session=True)
        p.lab_name = name
        self.procs.append(p)
        return p

    def stop(self, p, grace=10):
        import proctools
        proctools.stop_group(p, grace)
        if p in self.procs:
            self.procs.remove(p)

    def log(self, name):
        try:
            with open(self.path(name + ".log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def close(self, hurry=False):
        if self.closed:
            return
        self.closed = True
        self.hurrying = hurry
        for fn in reversed(self.on_close):
            try:
                fn()
            except Exception:  # noqa: BLE001 - cleaning up what can be
                pass
        for p in list(reversed(self.procs)):
            self.stop(p, 0.5 if hurry else 10)
        for ns in self.namespaces:
            out = subprocess.run(["ip", "netns", "pids", ns], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout
            for pid in out.split():
                if pid.decode() == str(os.getpid()):
                    continue
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        self.namespaces = []
        for dev in self.loops:
            subprocess.run(["losetup", "-d", dev], stderr=subprocess.DEVNULL)
        self.loops = []
        if not self.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)


# ---- the relay: the hosts' way to the service ---------------------------------------------------

class Relay(nsrelay.Relay):
    """nsrelay.Relay listening inside the lab namespace ns (the switch's
    198.51.100.1 as a rule), stopped at the lab's close."""

    def __init__(self, lab, ns, address, url):
        try:
            super().__init__("/run/netns/" + ns, address, url)
        except ValueError as e:
            raise LabError(str(e))
        self.lab = lab

    def start(self):
        super().start()
        self.lab.on_close.append(self.stop)
        return self


# ---- Kubernetes -----------------------------------------------------------------------------------

RESOURCES = {
    "Namespace": ("/api/v1", "namespaces", False),
    "Secret": ("/api/v1", "secrets", True),
    "ConfigMap": ("/api/v1", "configmaps", True),
    "Node": ("/api/v1", "nodes", False),
    "CertificateSigningRequest": ("/apis/certificates.k8s.io/v1", "certificatesigningrequests", False),
    "ClusterImageSet": ("/apis/hive.openshift.io/v1", "clusterimagesets", False),
    "ClusterDeployment": ("/apis/hive.openshift.io/v1", "clusterdeployments", True),
    "AgentClusterInstall": ("/apis/extensions.hive.openshift.io/v1beta1", "agentclusterinstalls", True),
    "InfraEnv": ("/apis/agent-install.openshift.io/v1beta1", "infraenvs", True),
    "NMStateConfig": ("/apis/agent-install.openshift.io/v1beta1", "nmstateconfigs", True),
    "Agent": ("/apis/agent-install.openshift.io/v1beta1", "agents", True),
    # the Cluster API flow (CapiInstall): each at its CRD's storage version
    "Cluster": ("/apis/cluster.x-k8s.io/v1beta2", "clusters", True),
    "Machine": ("/apis/cluster.x-k8s.io/v1beta2", "machines", True),
    "MachineDeployment": ("/apis/cluster.x-k8s.io/v1beta2", "machinedeployments", True),
    "MachineSet": ("/apis/cluster.x-k8s.io/v1beta2", "machinesets", True),
    "OpenshiftAssistedConfigTemplate": ("/apis/bootstrap.cluster.x-k8s.io/v1alpha2",
                                        "openshiftassistedconfigtemplates", True),
    "OpenshiftAssistedControlPlane": ("/apis/controlplane.cluster.x-k8s.io/v1alpha3",
                                      "openshiftassistedcontrolplanes", True),
    "OpenshiftAssistedConfig": ("/apis/bootstrap.cluster.x-k8s.io/v1alpha2", "openshiftassistedconfigs", True),
    "Metal3Cluster": ("/apis/infrastructure.cluster.x-k8s.io/v1beta2", "metal3clusters", True),
    "Metal3MachineTemplate": ("/apis/infrastructure.cluster.x-k8s.io/v1beta2", "metal3machinetemplates", True),
    "Metal3Machine": ("/apis/infrastructure.cluster.x-k8s.io/v1beta2", "metal3machines", True),
}


class KubeError(Exception):
    def __init__(self, status, body):
        Exception.__init__(self, "%s: %s" % (status, body))
        self.status = status
        self.body = body


class Kube(object):
    """A client of the cluster a kubeconfig names (client certificate or
    token, CA data or file)."""

    def __init__(self, kubeconfig):
        import yaml
        self.kubeconfig = kubeconfig
        with open(kubeconfig) as f:
            cfg = yaml.safe_load(f)
        ctx_name = cfg.get("current-context")
        ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == ctx_name)
        cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
        user = next((u["user"] for u in cfg.get("users") or [] if u["name"] == ctx.get("user")), {})
        u = urllib.parse.urlsplit(cluster["server"])
        self.host, self.port = u.hostname, u.port or 443
        self.tmp = tempfile.mkdtemp(prefix="kube-client-")
        self.ctx = ssl.create_default_context()
        base = os.path.dirname(os.path.abspath(kubeconfig))

        def material(data_key, file_key, src, name):
            if src.get(data_key):
                p = os.path.join(self.tmp, name)
                with open(p, "wb") as fh:
                    fh.write(base64.b64decode(src[data_key]))
                return p
            if src.get(file_key):
                return os.path.join(base, src[file_key])
            return None
        ca = material("certificate-authority-data", "certificate-authority", cluster, "ca.crt")
        if ca:
            self.ctx.load_verify_locations(ca)
        if cluster.get("insecure-skip-tls-verify"):
            self.ctx.check_hostname = False
            self.ctx.verify_mode = ssl.CERT_NONE
        cert = material("client-certificate-data", "client-certificate", user, "client.crt")
        key = material("client-key-data", "client-key", user, "client.key")
        if cert and key:
            self.ctx.load_cert_chain(cert, key)
        self.token = user.get("token")

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def request(self, method, path, body=None, ctype="application/json"):
        status, out = self.exchange(method, path, body, ctype)
        if status >= 400:
            raise KubeError(status, out.get("message") if isinstance(out, dict) else out)
        return out

    def exchange(self, method, path, body=None, ctype="application/json", headers=None):
        """One request: (status, the answer decoded from JSON, else its
        text), whatever the status."""
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        hdrs = dict({"Accept": "application/json"}, **(headers or {}))
        if self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = ctype
        try:
            conn.request(method, path, data, hdrs)
            r = conn.getresponse()
            raw = r.read()
        finally:
            conn.close()
        try:
            out = json.loads(raw) if raw else None
        except ValueError:
            out = raw.decode(errors="replace")
        return r.status, out

    @staticmethod
    def path(kind, ns=None, name=None, sub=None):
        prefix, plural, namespaced = RESOURCES[kind]
        p = prefix + ("/namespaces/%s" % ns if namespaced and ns else "") + "/" + plural
        if name:
            p += "/" + name
        if sub:
            p += "/" + sub
        return p

    def get(self, kind, ns, name):
        try:
            return self.request("GET", self.path(kind, ns, name))
        except KubeError as e:
            if e.status == 404:
                return None
            raise

    def list(self, kind, ns=None, selector=None):
        q = "?labelSelector=" + urllib.parse.quote(selector) if selector else ""
        return self.request("GET", self.path(kind, ns) + q).get("items") or []

    def create(self, obj, ns=None):
        return self.request("POST", self.path(obj["kind"], ns or obj["metadata"].get("namespace")), obj)

    def apply(self, obj, ns=None):
        """create, or a merge patch of what exists"""
        ns = ns or obj["metadata"].get("namespace")
        try:
            return self.create(obj, ns)
        except KubeError as e:
            if e.status != 409:
                raise
            return self.patch(obj["kind"], ns, obj["metadata"]["name"], obj)

    def patch(self, kind, ns, name, patch, sub=None):
        return self.request("PATCH", self.path(kind, ns, name, sub), patch, "application/merge-patch+json")

    def delete(self, kind, ns, name):
        try:
            return self.request("DELETE", self.path(kind, ns, name))
        except KubeError as e:
            if e.status != 404:
                raise
            return None


def condition(obj, type_):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def wait(what, fn, timeout, interval=0.5):
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise LabError("timed out after %ds waiting for %s" % (timeout, what))
        time.sleep(interval)


# ---- cradle-hub ------------------------------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Hub(object):
    """cradle-hub, watching one namespace."""

    def __init__(self, lab, kubeconfig, service_url, namespace, token_file=None, extra=(), name="cradle-hub"):
        self.lab, self.name = lab, name
        self.exe = os.environ.get("CRADLE_HUB_BINARY") or os.path.join(BUILD, "hub", "cradle-hub")
        if not os.path.exists(self.exe):
            raise LabError("no cradle-hub program at %s (build it: meson compile -C build)" % self.exe)
        self.args = ["--kubeconfig", kubeconfig, "--service-url", service_url, "--namespace", namespace,
                     "--service-poll-interval", "1s", "--service-resync-period", "5s", "--image-cooldown", "1s",
                     "--approve-csrs-requeue-duration", "2s", "--log-level", "debug"] + list(extra)
        if token_file:
            self.args += ["--service-token-file", token_file]
        self.proc = None

    def start(self, timeout=120):
        self.health, self.metrics_port = free_port(), free_port()
        env = dict(os.environ, CRADLE_LOG_TARGET="stderr")
        self.proc = self.lab.spawn(self.name, [self.exe] + self.args + [
            "--health-probe-bind-address", "127.0.0.1:%d" % self.health,
            "--metrics-bind-address", "127.0.0.1:%d" % self.metrics_port], env=env)

        def ready():
            if self.proc.poll() is not None:
                raise LabError("cradle-hub exited (%s):\n%s" % (self.proc.returncode, self.lab.log(self.name)[-4000:]))
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.health, timeout=2)
                c.request("GET", "/readyz")
                return c.getresponse().status == 200
            except OSError:
                return False
        wait("cradle-hub to be ready", ready, timeout, 0.1)
        return self

    def metrics(self):
        c = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=5)
        c.request("GET", "/metrics")
        return c.getresponse().read().decode()

    def stop(self, sig=signal.SIGTERM):
        """SIGTERM (then SIGKILL after a grace), or SIGKILL at once: a crash."""
        if self.proc:
            if sig == signal.SIGKILL:
                os.killpg(self.proc.pid, sig)
            self.lab.stop(self.proc)
            rc = self.proc.returncode
            self.proc = None
            return rc
        return None


# ---- servers -----------------------------------------------------------------------------------------

CRD_DIRS = ("config/crd/bases", "hack/crds/hive", "hack/crds/metal3")


def start_kubeapi(lab, capi=False):
    """The test kube-apiserver with the assisted-service, hive and metal3
    CRDs (capi: and Cluster API core's, CAPOA's and Metal3's CAPI kinds,
    tests/capi), or the cluster of CRADLE_TEST_KUBECONFIG (the CRDs it
    lacks applied to it). Returns (kubeconfig, server or None)."""
    real = os.environ.get("CRADLE_TEST_KUBECONFIG")
    if real:
        kube = Kube(real)
        try:
            ensure_crds(kube)
            if capi:
                capicore().ensure_crds(kube)
        finally:
            kube.close()
        return real, None
    import kubeapi_harness
    args = []
    for d in CRD_DIRS:
        args += ["--apply", os.path.join(CRDS, d)]
    for f in capicore().write_crds(lab.path("capi-crds")) if capi else ():
        args += ["--apply", f]
    srv = kubeapi_harness.Server(args, state_dir=lab.path("kubeapi")).start(timeout=180)
    lab.on_close.append(srv.stop)
    return os.path.join(srv.state, "kubeconfig"), srv


def crd_documents():
    import yaml
    for d in CRD_DIRS:
        for f in sorted(os.listdir(os.path.join(CRDS, d))):
            if f.endswith((".yaml", ".yml")):
                with open(os.path.join(CRDS, d, f)) as fh:
                    for doc in yaml.safe_load_all(fh):
                        if doc and doc.get("kind") == "CustomResourceDefinition":
                            yield doc


def ensure_crds(kube, timeout=60):
    """Creates each CRD the lab needs that the cluster lacks and waits until
    all are Established. A CRD already there is left as it is, and none is
    removed at the end: a CRD is cluster-wide, and deleting it deletes
    every object of its kind in every namespace, others' too."""
    base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    names = []
    for doc in crd_documents():
        names.append(doc["metadata"]["name"])
        try:
            kube.request("POST", base, doc)
        except KubeError as e:
            if e.status != 409:
                raise LabError("the cluster refused the CRD %s: %s" % (doc["metadata"]["name"], e))

    def established():
        for n in names:
            # conditions are null until the apiserver's naming controller runs
            conds = (kube.request("GET", base + "/" + n).get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conds):
                return False
        return True
    wait("the CRDs to be established", established, timeout)


def capicore():
    """tests/capi/capicore.py, CAPI core's stand-in (it imports this module)"""
    sys.path.insert(0, os.path.join(SRC, "tests", "capi"))
    import capicore as C
    return C


def start_refservice(lab, bind, settings):
    """The reference assisted-service (or the real one of
    CRADLE_TEST_SERVICE_URL). Returns the RefService."""
    import refclient
    svc = refclient.RefService(scenario={"settings": settings} if not refclient.real_service() else None,
                               bind=bind, workdir=lab.path("refservice"))
    os.makedirs(svc.workdir, exist_ok=True)
    svc.start(timeout=60)
    lab.on_close.append(svc.stop)
    return svc


# ---- hosts ---------------------------------------------------------------------------------------------

def stand_ins(lab):
    """The installer's host tools as stand-ins that only log their argv
    (tests/installer/stand-ins/host-tool): nothing is written to this
    machine's disks, nothing reboots it."""
    d = lab.path("dry-bin")
    if not os.path.isdir(d):
        os.makedirs(d)
        for tool in ("dry-installer", "coreos-installer", "podman", "shutdown", "systemctl"):
            os.symlink(os.path.join(SRC, "tests", "installer", "stand-ins", "host-tool"), os.path.join(d, tool))
    return d


def start_agent(lab, host, service_url, infra_env_id, cluster_hosts_file, token=""):
    """A cradle agent in dry run in the host's namespace (host: dict with
    ns, id, hostname, mac, ip, disk, marker), after the host's chronyd;
    token: its PULL_SECRET_TOKEN (the discovery ignition's, when the
    service authenticates agents)."""
    cradle = os.environ.get("CRADLE_BINARY") or os.path.join(BUILD, "cradle")
    d = lab.path(host["name"])
    for sub in ("opt-install-dir", "var-log", "journal", "mnt"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    env = dict(os.environ, CRADLE_LOG_TARGET="stderr", PULL_SECRET_TOKEN=token,
               PATH=stand_ins(lab) + ":" + os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
               STANDIN_LOG=lab.path("standin.jsonl"), CRADLE_HOST_EXEC="direct",
               CRADLE_INSTALL_DIR=os.path.join(d, "opt-install-dir"),
               CRADLE_INSTALLER_LOG_FILE=os.path.join(d, "var-log", "assisted-installer.log"),
               CRADLE_LOGS_DIR=os.path.join(d, "var-log"), CRADLE_JOURNAL_DIR=os.path.join(d, "journal"),
               CRADLE_MOUNT_DIR=os.path.join(d, "mnt"), CRADLE_REGISTRY_DIR=os.path.join(d, "no-registry"),
               CRADLE_EFI_DIR=os.path.join(d, "no-efi"), CRADLE_RETRY_DELAY="0.1", CRADLE_RETRY_MAX_DELAY="0.5",
               CRADLE_POLL_INTERVAL="0.5", DRY_CLUSTER_HOSTS_PATH=cluster_hosts_file)
    if not host.get("chronyd"):
        host["chronyd"] = start_chronyd(lab, host["name"], host["ns"], [
            "server 198.51.100.1 iburst minpoll -2 maxpoll -2", "port 0", "bindcmdaddress 127.0.0.1"])
    return lab.spawn(host["name"], [
        cradle, "agent", "--url", service_url, "--infra-env-id", infra_env_id, "--agent-version", AGENT_IMAGE,
        "--host-exec=direct", "--install-mode=inprocess", "--lab-nics=eth0", "--lab-disks", host["disk"], "--interval=1",
        "--transport-retry-delay=0.1", "--dry-run", "--force-id", host["id"], "--force-hostname", host["hostname"],
        "--force-mac", host["mac"], "--forced-ipv4", host["ip"] + "/24", "--fake-reboot-marker-path",
        host["marker"]], ns=host["ns"], env=env)


def make_hosts(lab, sw, count, first=1):
    """count host namespaces (h<first>...) with a veth into sw's bridge and
    a disk each; host hN has the address 198.51.100.(10+N)"""
    hosts = []
    for i in range(first, first + count):
        ns = lab.netns("h%d" % i)
        peer = "%s-h%d" % (lab.tag[:6], i)
        lab.ip(ns, "link", "add", "eth0", "type", "veth", "peer", "name", peer, "netns", sw)
        lab.ip(sw, "link", "set", peer, "master", "br0")
        lab.ip(sw, "link", "set", peer, "up")
        lab.ip(ns, "link", "set", "eth0", "up")
        ip = "198.51.100.%d" % (10 + i)
        lab.ip(ns, "addr", "add", ip + "/24", "dev", "eth0")
        # a default route, as a host on a real network has (the service
        # validates it): to the switch, which forwards nothing
        lab.ip(ns, "route", "add", "default", "via", "198.51.100.1")
        # no ::1: a dry-run inventory reports lo (the first interface with
        # an IPv4 address) with the host's forced MAC and IPv4 but keeps its
        # IPv6 addresses, as the Go agent's does; every host would then own
        # ::1 under its own MAC, which a real service's connectivity
        # reports turn into an IP collision on every host
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.lo.disable_ipv6=1"],
                       check=True)
        hosts.append({"name": "h%d" % i, "ns": ns, "ip": ip, "mac": lab.mac(ns, "eth0"),
                      "id": str(uuid.uuid4()), "disk": lab.loop_disk("h%d-disk" % i),
                      "marker": lab.path("h%d-rebooted" % i)})
    return hosts


def make_switch(lab):
    """The switch: a bridge with 198.51.100.1, and the lab's NTP server
    there (start_chronyd)."""
    sw = lab.netns("sw")
    lab.ip(sw, "link", "add", "br0", "type", "bridge")
    lab.ip(sw, "link", "set", "br0", "up")
    lab.ip(sw, "addr", "add", "198.51.100.1/24", "dev", "br0")
    start_chronyd(lab, "sw", sw, ["local stratum 8", "allow 198.51.100.0/24", "bindaddress 198.51.100.1",
                                  "cmdport 0"])
    return sw


def start_chronyd(lab, name, ns, lines):
    """chronyd in a lab namespace, if this machine has chrony: the switch
    serves its clock (never touching this machine's: -x) and each host
    follows it, so that the agents' ntp-synchronizer step (chronyc -n
    sources: the host's own chronyd on its 127.0.0.1) finds a synced
    source, as the real service's ntp-synced validation wants. No Unix
    command socket (its path would be shared by every host)."""
    exe = which("chronyd")
    if not exe:
        return None
    conf = lab.path(name + "-chrony.conf")
    with open(conf, "w") as f:
        f.write("\n".join(lines + ["pidfile " + lab.path(name + "-chrony.pid"), "bindcmdaddress /",
                                   "user root"]) + "\n")
    return lab.spawn(name + "-chrony", [exe, "-d", "-x", "-f", conf], ns=ns)


# ---- the controller and the new cluster ---------------------------------------------------------------

def pem_body(text):
    """the base64 of the certificates in text, whitespace removed"""
    return "".join(line.strip() for line in (text or "").splitlines() if line.strip() and "-----" not in line)


def start_controller(lab, svc, cluster_id, new_cluster=None, hosts_file=None, first_marker=None):
    """cradle's assisted-installer-controller (`cradle controller`),
    configured as its Job is but for its rounds (fractions of upstream's
    30 s and 60 s); output in controller.log. It ends by itself (0) once the
    service says installed.

    new_cluster (a NewCluster): the controller runs against its API server
    as it runs in a real new cluster. Without it, in upstream's dry run
    (DRY_ENABLE, notes/controller.md §8) from hosts_file and first_marker:
    no API server at all, each host a Ready node once its reboot marker
    exists, no certificate requests."""
    cradle = os.environ.get("CRADLE_BINARY") or os.path.join(BUILD, "cradle")
    env = dict(os.environ, CLUSTER_ID=cluster_id, INVENTORY_URL=svc.url, OPENSHIFT_VERSION="4.13",
               SKIP_CERT_VERIFICATION="true", CRADLE_LOG_TARGET="stderr")
    for k in ("KUBECONFIG", "PULL_SECRET_TOKEN", "DRY_ENABLE", "NAMESPACE"):
        env.pop(k, None)
    if new_cluster:
        env.update(KUBECONFIG=new_cluster.kubeconfig, NAMESPACE=NewCluster.CONTROLLER_NAMESPACE)
    else:
        env.update(DRY_ENABLE="true", DRY_CLUSTER_HOSTS_PATH=hosts_file, DRY_FAKE_REBOOT_MARKER_PATH=first_marker)
    if svc.token:
        env["PULL_SECRET_TOKEN"] = svc.token
    return lab.spawn("controller", [
        cradle, "controller", "--token-file", lab.path("no-controller-token"),
        "--log-file", lab.path("controller_logs.log"), "--ready-interval", "0.5", "--poll-interval", "1",
        "--slow-poll-interval", "1", "--fetch-interval", "0.5", "--retry-delay", "0.2",
        "--retry-max-delay", "1"], env=env)


class NewCluster(object):
    """The cluster a day-1 installation makes, for cradle's controller to
    run in as its Job runs in a real one: a second test kube-apiserver
    (start_spoke, with an OpenShift cluster's CRDs), on which the lab plays
    what the cluster's own components do, and nothing else; no CSR is
    approved and nothing reaches the service from here:

      * the cluster-version operator and the network and console operators,
        at once: proxies/cluster, the ClusterVersion (the Console
        capability, the release's version, Progressing), the console
        ClusterOperator (Progressing, not Available); and the namespace
        assisted-installer, which the bootstrap's manifests make
        (installer/controller-manifests.c);
      * each host's kubelet, once the host rebooted into its installed
        system (its reboot marker, as the installer's dry run writes it): the
        client certificate request as the node bootstrapper; once that
        certificate is issued the Node (NotReady, the host's addresses) and
        the serving certificate request as the node (SpokeKubelet); the
        Node turns Ready once the serving certificate is issued too (the
        lab's order: so every approval shows before the controller's node
        rounds end);
      * once every Node is Ready: the ingress operator's router CA
        (openshift-config-managed/default-ingress-cert), the console
        ClusterOperator and the ClusterVersion Available.

    step() advances it, a little each call (it never waits)."""

    CONTROLLER_NAMESPACE = "assisted-installer"
    VERSION = "4.13.18"
    CONFIG = "/apis/config.openshift.io/v1"

    def __init__(self, lab, hosts, say=None):
        import kubeapi_harness
        self.lab, self.say = lab, say or (lambda s: None)
        self.hosts = [dict(h) for h in hosts]
        args = []
        for f in kubeapi_harness.openshift_crd_files():
            args += ["--apply", f]
        self.server = kubeapi_harness.Server(args, state_dir=lab.path("new-cluster")).start(timeout=180)
        lab.on_close.append(self.server.stop)
        self.kubeconfig = self.server.path("kubeconfig")
        self.kubelets = {}      # hostname -> SpokeKubelet
        self.csrs = {}          # hostname -> {"client": name, "serving": name}
        self.state = {h["hostname"]: "installing" for h in self.hosts}
        self.finished = False
        self.ingress_ca = None
        wait("the new cluster's CRDs", lambda: self.request("GET", self.CONFIG + "/proxies").status == 200, 60)
        self.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": self.CONTROLLER_NAMESPACE}})
        self.create(self.CONFIG + "/proxies", {"apiVersion": "config.openshift.io/v1", "kind": "Proxy",
                                               "metadata": {"name": "cluster"}, "spec": {}})
        self.create(self.CONFIG + "/clusterversions", {"apiVersion": "config.openshift.io/v1",
                                                       "kind": "ClusterVersion", "metadata": {"name": "version"},
                                                       "spec": {"clusterID": str(uuid.uuid4())}})
        self.status(self.CONFIG + "/clusterversions/version", {
            "desired": {"image": RELEASE, "version": self.VERSION}, "observedGeneration": 1, "versionHash": "lab",
            "availableUpdates": [],
            "capabilities": {"enabledCapabilities": ["Console"], "knownCapabilities": ["Console"]},
            "conditions": self.conditions(False, "Working towards " + self.VERSION)})
        self.create(self.CONFIG + "/clusteroperators", {"apiVersion": "config.openshift.io/v1",
                                                        "kind": "ClusterOperator", "metadata": {"name": "console"},
                                                        "spec": {}})
        self.status(self.CONFIG + "/clusteroperators/console", {
            "conditions": self.conditions(False, "waiting for the console's pods"),
            "versions": [{"name": "operator", "version": self.VERSION}]})

    def request(self, method, path, body=None, ctype="application/json"):
        return self.server.request(method, path, body, ctype=ctype)

    def create(self, path, obj):
        r = self.request("POST", path, obj)
        if r.status != 201:
            raise LabError("the new cluster refused %s/%s: %s %s" % (path, obj["metadata"]["name"], r.status,
                                                                     r.raw[:300]))
        return r.json

    def status(self, path, status):
        r = self.request("PATCH", path + "/status", {"status": status}, "application/merge-patch+json")
        if r.status != 200:
            raise LabError("the new cluster refused the status of %s: %s %s" % (path, r.status, r.raw[:300]))

    @staticmethod
    def conditions(available, message):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return [{"type": t, "status": s, "lastTransitionTime": now, "message": message} for t, s in (
            ("Available", "True" if available else "False"), ("Progressing", "False" if available else "True"),
            ("Degraded", "False"))]

    def step(self):
        """One look at each host and at the cluster; True when something changed."""
        changed = False
        for h in self.hosts:
            name = h["hostname"]
            st = self.state[name]
            if st == "installing" and os.path.exists(h["marker"]):
                k = self.kubelets[name] = SpokeKubelet(self.server, h)
                self.csrs[name] = {"client": k.client_csr()}
                self.state[name] = "client"
                self.say("new cluster: %s rebooted; its kubelet asks for a client certificate (%s, as the node "
                         "bootstrapper)" % (name, self.csrs[name]["client"]))
            elif st == "client" and self.kubelets[name].issued(self.csrs[name]["client"]):
                k = self.kubelets[name]
                k.node(ready=False)
                self.csrs[name]["serving"] = k.serving_csr()
                self.state[name] = "serving"
                self.say("new cluster: node %s registered (NotReady); its kubelet asks for a serving certificate "
                         "(%s, as the node)" % (name, self.csrs[name]["serving"]))
            elif st == "serving" and self.kubelets[name].issued(self.csrs[name]["serving"]):
                self.kubelets[name].ready(True)
                self.state[name] = "ready"
                self.say("new cluster: node %s Ready" % name)
            else:
                continue
            changed = True
        if not self.finished and all(s == "ready" for s in self.state.values()):
            self.finish()
            changed = True
        return changed

    def finish(self):
        """The ingress operator's router CA, then the console and the cluster
        version available."""
        import kcerts
        d = self.lab.path("new-cluster-ingress")
        os.makedirs(d, exist_ok=True)
        ca = kcerts.CA.generate(d, cn="ingress-operator@lab")
        with open(ca.cert_path) as f:
            self.ingress_ca = f.read()
        self.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": "openshift-config-managed"}})
        self.create("/api/v1/namespaces/openshift-config-managed/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "default-ingress-cert"},
            "data": {"ca-bundle.crt": self.ingress_ca}})
        self.status(self.CONFIG + "/clusteroperators/console", {"conditions": self.conditions(True, "All is well")})
        self.status(self.CONFIG + "/clusterversions/version", {
            "conditions": self.conditions(True, "Cluster version is " + self.VERSION)})
        self.finished = True
        self.say("new cluster: every node Ready; the router CA published (default-ingress-cert), the console "
                 "operator and the cluster version Available")

    def approvals(self):
        """{hostname: {"client"|"serving": (csr name, Approved condition or None)}}"""
        out = {}
        for name, csrs in self.csrs.items():
            out[name] = {kind: (csr, self.kubelets[name].approval(csr)) for kind, csr in csrs.items()}
        return out


# ---- the documentation's day-1 flow ------------------------------------------------------------------

RELEASE = "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64"
CD_NAME = "single-node"          # the documentation's names (docs/hive-integration/crds)
ACI_NAME = "test-agent-cluster-install"
IE_NAME = "myinfraenv"
ANNOTATION_CLUSTER_ID = "cradle.agent-install.openshift.io/cluster-id"
ANNOTATION_INFRA_ENV_ID = "cradle.agent-install.openshift.io/infra-env-id"


def docs(name):
    import yaml
    with open(os.path.join(DOCS, name)) as f:
        return yaml.safe_load(f)


def nmstate_config(ns, host):
    """The documentation's NMStateConfig for one lab host: its MAC, its
    static address, the switch as DNS server and gateway."""
    tmpl = docs("nmstate.yaml")
    return {"apiVersion": tmpl["apiVersion"], "kind": tmpl["kind"],
            "metadata": {"name": "%s-%s" % (tmpl["metadata"]["name"], host["name"]), "namespace": ns,
                         "labels": dict(tmpl["metadata"]["labels"])},
            "spec": {"config": {
                "interfaces": [{"name": "eth0", "type": "ethernet", "state": "up", "mac-address": host["mac"],
                                "ipv4": {"enabled": True, "address": [{"ip": host["ip"], "prefix-length": 24}],
                                         "dhcp": False}}],
                "dns-resolver": {"config": {"server": ["198.51.100.1"]}},
                "routes": {"config": [{"destination": "0.0.0.0/0", "next-hop-address": "198.51.100.1",
                                       "next-hop-interface": "eth0", "table-id": 254}]}},
                "interfaces": [{"name": "eth0", "macAddress": host["mac"]}]}}


def image_set_name(ns):
    """The lab's ClusterImageSet: the documentation's name made the
    namespace's own (the kind is cluster-wide; a shared cluster may hold
    another run's)."""
    return "%s-%s" % (docs("agentClusterInstall.yaml")["spec"]["imageSetRef"]["name"], ns)


def docs_resources(ns, hosts, release=RELEASE, image_set=None, static_network=True):
    """The documentation's example resources, made to fit the lab: their
    names pointing at each other (the examples' do not: the ACI names
    ClusterDeployment test-cluster, the ClusterDeployment is single-node),
    a release the reference service serves, the lab's VIPs, no proxy (the
    example's would route the hosts through 11.11.11.33), one
    NMStateConfig per host unless static_network is False (the hosts'
    addresses are the lab's either way). image_set: the ClusterImageSet's
    name (default image_set_name(ns))."""
    out = [docs("pullsecret.yaml")]
    cis = docs("clusterImageSet.yaml")
    cd = docs("clusterDeployment.yaml")
    aci = docs("agentClusterInstall.yaml")
    ie = docs("infraEnv.yaml")
    aci["spec"]["imageSetRef"]["name"] = image_set or image_set_name(ns)
    cis["metadata"]["name"] = aci["spec"]["imageSetRef"]["name"]
    cis["spec"]["releaseImage"] = release
    aci["spec"]["clusterDeploymentRef"]["name"] = cd["metadata"]["name"]
    cd["spec"]["clusterInstallRef"]["name"] = aci["metadata"]["name"]
    aci["spec"].update({"apiVIP": "198.51.100.100", "apiVIPs": ["198.51.100.100"], "ingressVIP": "198.51.100.101",
                        "ingressVIPs": ["198.51.100.101"]})
    ie["spec"].pop("proxy", None)
    ie["spec"]["clusterRef"] = {"name": cd["metadata"]["name"], "namespace": ns}
    if not static_network:
        ie["spec"].pop("nmStateConfigLabelSelector", None)
    out += [cis, cd, aci, ie]
    for o in out:
        if o["kind"] != "ClusterImageSet":
            o["metadata"]["namespace"] = ns
    return out + ([nmstate_config(ns, h) for h in hosts] if static_network else [])


class Install(object):
    """The day-1 flow of tools/rehearse, in steps a test can interleave
    with faults: up() makes the lab, the servers and cradle-hub; apply()
    the documentation's resources; boot() the hosts' agents once the
    InfraEnv's image exists; step() approves new Agents, once the cluster
    installs brings up the new cluster (NewCluster) and plays it, starts
    cradle's controller in it once the first host rebooted, and reports
    what changed; run() steps until the AgentClusterInstall is Completed with
    both Secrets, or says why not (LabError).

    The servers are the lab's own (the test kube-apiserver, the reference
    service), or the real ones of CRADLE_TEST_KUBECONFIG and
    CRADLE_TEST_SERVICE_URL: this process, its cradle-hub and the servers
    it starts stay in the namespace it was started in and reach them
    directly; the hosts reach the service through a Relay on the switch.
    On the cluster, the lab removes what it made (its namespace, its
    ClusterImageSet) when it closes, cradle-hub still running so that its
    finalizers go as they should (and, on a real service, what it
    registered there with them)."""

    # seconds an input error of the InfraEnv's image stays before the lab stops
    REFUSAL_SETTLES = 30

    # how cradle's controller runs: "new-cluster" (against the NewCluster's
    # API server, as in a real cluster) or "dry-run" (upstream's DRY_ENABLE:
    # no API server, no certificate requests; for a machine that cannot run
    # a second one)
    CONTROLLER_MODES = ("new-cluster", "dry-run")

    # the kinds whose finalizers the lab removes when its namespace does not go
    FINALIZED_KINDS = ("Agent", "AgentClusterInstall", "ClusterDeployment", "InfraEnv", "NMStateConfig", "Secret",
                       "ConfigMap")
    CAPI = False
    # the documentation's ClusterDeployment and AgentClusterInstall (a
    # subclass whose resources name them otherwise says so)
    cd_name = CD_NAME
    aci_name = ACI_NAME

    def __init__(self, lab, ns, say=None, hosts=3, release=RELEASE, image_set=None, hub_args=(),
                 static_network=True, service_settings=None, controller="new-cluster"):
        self.lab, self.ns, self.release = lab, ns, release
        # settings of the reference service beyond the lab's (api_generation)
        self.service_settings = dict(service_settings or {})
        self.image_set = image_set or image_set_name(ns)
        self.static_network = static_network
        self.say = say or (lambda s: None)
        self.n_hosts = hosts
        self.hub_args = list(hub_args)
        self.hosts = []
        self.approved = set()
        if controller not in self.CONTROLLER_MODES:
            raise LabError("no controller mode %r (%s)" % (controller, ", ".join(self.CONTROLLER_MODES)))
        self.controller_mode = controller
        self.controller = None
        self.new_cluster = None
        self.cluster_id = None
        self.rows = {}
        self.hub = self.kube = self.svc = self.kubeconfig = self.sw = self.relay = None
        self.agents = {}
        self.owns_namespace = False
        self.left = None
        self.fitted = None
        self.refused = {}

    # bring-up
    def up(self, timeout=120):
        self.sw = make_switch(self.lab)
        self.hosts = make_hosts(self.lab, self.sw, self.n_hosts)
        for h in self.hosts:
            h["hostname"] = self.host_name(h)
        self.say("lab: switch 198.51.100.1/24, hosts %s, disks %s (120 GiB, sparse)" % (
            ", ".join("%s %s" % (h["hostname"] or h["name"], h["ip"]) for h in self.hosts),
            ", ".join(h["disk"] for h in self.hosts)))
        self.kubeconfig, srv = self.start_kube()
        self.kube = Kube(self.kubeconfig)
        self.lab.on_close.append(self.kube.close)
        self.say("%s ready (assisted-service, hive and metal3 CRDs%s)" % (
            "test kube-apiserver" if srv else "the cluster of CRADLE_TEST_KUBECONFIG (%s:%d)" % (
                self.kube.host, self.kube.port), "; Cluster API core's, CAPOA's and Metal3's" if self.CAPI else ""))
        self.svc = self.start_service({
            # the agents' own image is the installer image: cradle's installer runs in-process
            "installer_image": AGENT_IMAGE,
            # the lab's NICs are veth pairs, which the service drops unless told
            "enable_virtual_interfaces": True,
            "next_instruction_seconds": 2, "backoff_instruction_seconds": 2, **self.service_settings})
        self.relay = Relay(self.lab, self.sw, "198.51.100.1", self.svc.url).start()
        self.say("%s at %s, reached by the hosts through a relay at %s" % (
            "the assisted-service of CRADLE_TEST_SERVICE_URL" if self.svc.real else
            "reference assisted-service (REST mode)", self.svc.url, self.relay.url))
        self.hub = Hub(self.lab, self.kubeconfig, self.svc.url, self.ns, token_file=self.hub_token_file(),
                       extra=self.hub_args).start(timeout=timeout)
        self.say("cradle-hub ready (namespace %s)" % self.ns)
        return self

    def start_kube(self):
        """(kubeconfig, the test kube-apiserver or None) with the CRDs the flow needs."""
        return start_kubeapi(self.lab, capi=self.CAPI)

    def start_service(self, settings):
        return start_refservice(self.lab, "127.0.0.1", settings)

    def hub_token_file(self):
        """cradle-hub's --service-token-file: the service's token, when it has one."""
        if not self.svc.token:
            return None
        p = self.lab.path("service-token")
        with open(p, "w") as f:
            f.write(self.svc.token)
        os.chmod(p, 0o600)
        return p

    def host_name(self, host):
        return "spoke-master-%s" % host["name"][1:]

    def namespace(self):
        """The lab's namespace, made (once) with its removal at the lab's close."""
        if not self.owns_namespace:
            self.kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns}})
            self.owns_namespace = True
            self.lab.on_close.append(self.remove)
        return self.ns

    def resources(self):
        return docs_resources(self.ns, self.hosts, self.release, self.image_set, self.static_network)

    def apply(self, objects=None):
        self.namespace()
        for o in objects or self.resources():
            self.kube.apply(o)
            self.say("applied %s/%s" % (o["kind"], o["metadata"]["name"]))

    def remove(self, timeout=None):
        """Deletes the lab's namespace and ClusterImageSet and waits until the
        namespace is gone (cradle-hub, still running, removes its
        finalizers); what still holds a finalizer after the wait loses it,
        and says so. Sets self.left: what was left after the wait."""
        if timeout is None:
            timeout = 15 if self.lab.hurrying else 180
        # the hosts first: an agent still polling would register its host
        # again as cradle-hub deregisters it
        for p in self.agents.values():
            self.lab.stop(p, 0.5 if self.lab.hurrying else 10)
        if not self.lab.hurrying and (self.hub is None or self.hub.proc is None or self.hub.proc.poll() is not None):
            # a test stopped its cradle-hub: one more removes the finalizers
            self.hub = Hub(self.lab, self.kubeconfig, self.svc.url, self.ns, token_file=self.hub_token_file(),
                           extra=self.hub_args, name="cradle-hub-removal").start()
        self.kube.delete("ClusterImageSet", None, self.image_set)
        self.kube.delete("Namespace", None, self.ns)
        try:
            wait("the namespace %s to go" % self.ns, lambda: self.kube.get("Namespace", None, self.ns) is None,
                 timeout)
            self.left = []
            return
        except LabError:
            pass
        self.left = []
        for kind, path in self.finalized_collections():
            for o in self.kube.request("GET", path).get("items") or []:
                if o["metadata"].get("finalizers"):
                    self.left.append("%s/%s %s" % (kind, o["metadata"]["name"], o["metadata"]["finalizers"]))
                    self.kube.request("PATCH", path + "/" + o["metadata"]["name"],
                                      {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        self.say("the namespace %s was still there after %d s: finalizers removed from %s" % (
            self.ns, timeout, ", ".join(self.left) or "nothing"))
        try:
            wait("the namespace %s to go" % self.ns, lambda: self.kube.get("Namespace", None, self.ns) is None,
                 10 if self.lab.hurrying else 60)
        except LabError as e:
            self.say(str(e))

    def finalized_collections(self):
        """(kind, collection URL in the lab's namespace) of the kinds whose
        finalizers the lab removes when its namespace does not go."""
        return [(kind, self.kube.path(kind, self.ns)) for kind in self.FINALIZED_KINDS]

    def aci(self):
        return self.kube.get("AgentClusterInstall", self.ns, self.aci_name)

    def infra_env_id(self):
        ie = self.kube.get("InfraEnv", self.ns, IE_NAME)
        c = condition(ie, "ImageCreated")
        if c and c["status"] == "True":
            return ie["metadata"]["annotations"][ANNOTATION_INFRA_ENV_ID]
        image = c and c["status"] == "False" and c.get("reason") == "ImageCreationError" and \
            "internal error" not in c.get("message", "")
        sync = condition(self.aci(), "SpecSynced")
        spec = sync and sync["status"] == "False" and sync["reason"] == "InputError"
        self.settled("the InfraEnv's image was refused", c["message"] if image else None)
        self.settled("the AgentClusterInstall was refused", sync["message"] if spec else None)
        return None

    def settled(self, what, message):
        """A LabError when the same input error (message; None: none) has
        stayed REFUSAL_SETTLES seconds: one that comes and goes (an object
        the other's controller has not seen yet) is no refusal; the
        service's answer to the user's input (not retried by cradle-hub)
        stays until the input changes."""
        seen = self.refused.get(what)
        if message is None:
            self.refused.pop(what, None)
        elif not seen or seen[0] != message:
            self.refused[what] = (message, time.monotonic())
        elif time.monotonic() - seen[1] > self.REFUSAL_SETTLES:
            raise LabError("%s for %d s: %s" % (what, self.REFUSAL_SETTLES, message))

    def hosts_file(self):
        p = self.lab.path("cluster-hosts.json")
        with open(p, "w") as f:
            json.dump([{"hostname": h["hostname"], "ip": h["ip"], "rebootMarkerPath": h["marker"]}
                       for h in self.hosts], f)
        return p

    def boot(self, hosts=None, timeout=120):
        """The hosts' agents, in dry run, as if booted from the InfraEnv's image."""
        try:
            ie_id = wait("the InfraEnv's image", lambda: self.report() is not None and self.infra_env_id(), timeout)
        except LabError as e:
            if not str(e).startswith("timed out"):
                raise
            c = condition(self.kube.get("InfraEnv", self.ns, IE_NAME), "ImageCreated")
            raise LabError("%s; the InfraEnv's ImageCreated: %s" % (
                e, "%s %s: %s" % (c["status"], c.get("reason"), c.get("message")) if c else "none"))
        hf = self.hosts_file()
        for h in hosts or self.hosts:
            self.agents[h["id"]] = start_agent(self.lab, h, self.relay.url, ie_id, hf)
        return ie_id

    def add_hosts(self, count, prefix="spoke-worker-"):
        """More hosts on the switch (a day-2 worker, say); not booted yet."""
        new = make_hosts(self.lab, self.sw, count, first=len(self.hosts) + 1)
        for h in new:
            h["hostname"] = prefix + h["name"][1:]
        self.hosts += new
        return new

    # watching
    def names(self):
        return {h["id"]: h["hostname"] for h in self.hosts}

    def report(self):
        """The rows `kubectl get agents,agentclusterinstalls` would show;
        says each one that changed."""
        return self.show(self.install_rows())

    def install_rows(self):
        """{what: text} of the InfraEnv, the Agents and the AgentClusterInstall."""
        rows = {}
        names = self.names()
        c = condition(self.kube.get("InfraEnv", self.ns, IE_NAME), "ImageCreated")
        if c:
            rows["infraenv/" + IE_NAME] = "ImageCreated=%s %s" % (c["status"], c["reason"])
        for a in self.kube.list("Agent", self.ns):
            st, sp = a.get("status") or {}, a.get("spec") or {}
            name = names.get(a["metadata"]["name"], a["metadata"]["name"][:8])
            rows["agent/%s" % name] = "cluster=%s approved=%s role=%s state=%s stage=%s" % (
                (sp.get("clusterDeploymentName") or {}).get("name", "-"), str(sp.get("approved", False)).lower(),
                st.get("role", "-"), (st.get("debugInfo") or {}).get("state", "-"),
                (st.get("progress") or {}).get("currentStage", "-"))
        for aci in self.kube.list("AgentClusterInstall", self.ns):
            st = aci.get("status") or {}
            conds = " ".join("%s=%s(%s)" % (c["type"], c["status"], c["reason"]) for c in st.get("conditions") or []
                             if c["type"] in ("SpecSynced", "RequirementsMet", "Completed", "Failed"))
            pct = (st.get("progress") or {}).get("totalPercentage")
            rows["agentclusterinstall/%s" % aci["metadata"]["name"]] = "state=%s%s %s" % (
                (st.get("debugInfo") or {}).get("state", "-"), " %d%%" % pct if pct else "", conds)
        return rows

    def show(self, rows):
        """Says each row ({what: text}) that changed; True when any did."""
        for k in sorted(rows):
            if self.rows.get(k) != rows[k]:
                self.say("%-42s %s" % (k, rows[k]))
        changed = rows != self.rows
        self.rows = rows
        return changed

    def approve(self):
        """Approves the lab's Agents, as a user would."""
        names = self.names()
        for a in self.kube.list("Agent", self.ns):
            name = a["metadata"]["name"]
            if not (a.get("spec") or {}).get("approved") and name not in self.approved and name in names:
                self.kube.patch("Agent", self.ns, name, {"spec": {"approved": True}})
                self.approved.add(name)
                self.say("approved agent/%s (kubectl patch agent %s --type merge -p "
                         "'{\"spec\":{\"approved\":true}}')" % (names[name], name[:8]))

    def step(self, approve=True, controller=True):
        """One look: returns "completed", "failed: <why>", "changed" or None
        (nothing changed). controller: play the new cluster and start
        cradle's controller in it (or in its dry run) once the cluster
        installs."""
        changed = self.report()
        if approve:
            self.approve()
        cd = self.kube.get("ClusterDeployment", self.ns, self.cd_name)
        self.cluster_id = self.cluster_id or (((cd or {}).get("metadata") or {}).get("annotations") or {}).get(
            ANNOTATION_CLUSTER_ID)
        if self.cluster_id and self.fitted is None:
            self.fitted = self.fit_requirements()
        self.check_nics()
        aci = self.aci()
        state = ((aci or {}).get("status") or {}).get("debugInfo", {}).get("state")
        if controller and self.cluster_id:
            changed = self.play_new_cluster(state) or changed
        done = condition(aci, "Completed")
        if done and done["status"] == "True" and all(self.kube.get("Secret", self.ns, n) for n in self.secrets()):
            return "completed"
        failed = condition(aci, "Failed")
        if failed and failed["status"] == "True":
            return "failed: %s\n%s" % (failed["message"], self.where())
        failure = self.controller_failure()
        if failure:
            return failure
        return "changed" if changed else None

    def controller_failure(self):
        """"failed: ..." once cradle's controller exited with an error, else None."""
        if self.controller and self.controller.poll() not in (None, 0):
            tail = self.lab.log("controller").splitlines()[-15:]
            return "failed: the controller exited %d:\n%s" % (self.controller.returncode, "\n".join(tail))
        return None

    def play_new_cluster(self, state):
        """The new cluster once the cluster installs, and cradle's controller
        in it once the first host rebooted into its installed system (its
        control plane is up: the Job runs); in the dry run, the controller
        at once. True when something changed."""
        if self.controller_mode == "dry-run":
            if self.controller is None and state in ("installing", "finalizing"):
                self.controller = start_controller(self.lab, self.svc, self.cluster_id,
                                                   hosts_file=self.hosts_file(), first_marker=self.hosts[0]["marker"])
                self.say("assisted-installer-controller started: cradle controller in its dry run (no API server: "
                         "each host a Ready node once it reboots, no certificate requests; its calls to the service "
                         "are real)")
                return True
            return False
        changed = False
        if self.new_cluster is None and state in ("installing", "finalizing"):
            self.new_cluster = NewCluster(self.lab, self.hosts, self.say)
            self.say("the new cluster: a second test kube-apiserver with an OpenShift cluster's CRDs; the lab plays "
                     "its kubelets and operators only (proxies/cluster, the ClusterVersion and the console "
                     "operator progressing)")
            changed = True
        if self.new_cluster is None:
            return changed
        if self.controller is None and any(os.path.exists(h["marker"]) for h in self.new_cluster.hosts):
            self.controller = start_controller(self.lab, self.svc, self.cluster_id, new_cluster=self.new_cluster)
            self.say("assisted-installer-controller started: cradle controller in the new cluster (its API server "
                     "through a kubeconfig, its calls to the service real); it approves the kubelets' requests "
                     "and reports the hosts and the operators")
            changed = True
        return self.new_cluster.step() or changed

    def admin_kubeconfig(self):
        """The Secret of the new cluster's admin kubeconfig and its key
        (None: the record says nothing of it)."""
        return self.cd_name + "-admin-kubeconfig", "kubeconfig"

    def record(self):
        """What cradle's controller did, as the service and the new cluster
        keep it: lines for the person watching. The service's events (a
        real service's too), the admin kubeconfig's trust of the new
        cluster's router CA, the kubelets' requests on the new cluster and,
        on the reference service, its record of the controller's requests."""
        import refclient
        hub = refclient.HubClient(self.svc)
        names = self.names()
        out = []
        st, events = hub.events(cluster_id=self.cluster_id)
        for e in events if st == 200 and isinstance(events, list) else []:
            if e.get("name") == "host_status_updated" and " to installed " in e.get("message", ""):
                out.append("the service's event: %s" % e["message"])
        if not self.new_cluster:
            return out
        if self.new_cluster.ingress_ca and self.admin_kubeconfig():
            secret, key = self.admin_kubeconfig()
            kubeconfig = self.kube.get("Secret", self.ns, secret) or {}
            text = base64.b64decode(((kubeconfig.get("data") or {}).get(key)) or "").decode(errors="replace")
            import yaml
            trusted = ""
            try:
                for c in (yaml.safe_load(text) or {}).get("clusters") or []:
                    trusted += base64.b64decode((c.get("cluster") or {}).get("certificate-authority-data") or
                                                "").decode()
            except (ValueError, AttributeError):
                pass
            out.append("the admin kubeconfig %s the new cluster's router CA (the controller's upload)" % (
                "trusts" if pem_body(self.new_cluster.ingress_ca) in pem_body(trusted) else "does NOT trust"))
        for host, csrs in sorted(self.new_cluster.approvals().items()):
            for kind in ("client", "serving"):
                if kind in csrs:
                    csr, cond = csrs[kind]
                    out.append("the new cluster: %s (kubelet %s of %s) %s" % (
                        csr, kind, host, "approved, %s: %s" % (cond.get("reason"), cond.get("message"))
                        if cond else "not approved"))
        if self.svc.real:
            out.append("the service's requests: a real service keeps no record of them (its events above)")
            return out
        by_host = {}
        for r in self.svc.requests(method="PUT"):
            m = r.get("status") == 200 and re.search(r"/hosts/([0-9a-f-]{36})/progress$", r.get("path", ""))
            if m and m.group(1) in names:
                by_host.setdefault(names[m.group(1)], []).append(r["body"].get("current_stage"))
        for host, stages in sorted(by_host.items()):
            after = stages[stages.index("Rebooting") + 1:] if "Rebooting" in stages else []
            out.append("the service's record: %s reported %s after Rebooting" % (host, ", ".join(after) or "nothing"))
        for what, method, suffix in (("operator", "PUT", "monitored-operators"),
                                     ("ingress CA upload", "POST", "uploads/ingress-cert"),
                                     ("complete-installation", "POST", "actions/complete-installation")):
            for r in self.svc.requests(path="/clusters/%s/%s$" % (self.cluster_id, suffix), method=method):
                if r.get("status") is not None and r["status"] < 300:
                    body = r.get("body")
                    shown = json.dumps(body, sort_keys=True) if not isinstance(body, str) else (
                        "the new cluster's router CA" if pem_body(body) == pem_body(self.new_cluster.ingress_ca)
                        else "%d bytes" % len(body))
                    out.append("the service's record: %s %s" % (what, shown))
        return out

    def fit_requirements(self):
        """The lab's hosts are this machine: its CPUs and memory. Where the
        service wants more of a host of some role (its preflight
        requirements, a public call; the reference service has none and
        wants what a lab has), the AgentClusterInstall ignores that
        validation, as a user may (agent-install.openshift.io/ignored-host-
        validations), and says so. Returns the validations ignored."""
        import refclient
        st, req = refclient.HubClient(self.svc).call("GET", "/v2/clusters/%s/preflight-requirements" %
                                                      self.cluster_id)
        if st != 200 or not isinstance(req, dict):
            return []
        with open("/proc/meminfo") as f:
            ram_mib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:")) // 1024
        have = {"cpu_cores": os.cpu_count(), "ram_mib": ram_mib}
        ignore, why = [], []
        for key, validation in (("cpu_cores", "has-cpu-cores-for-role"), ("ram_mib", "has-memory-for-role")):
            for role in ("master", "worker"):
                want = ((((req.get("ocp") or {}).get(role) or {}).get("quantitative") or {}).get(key) or 0)
                if want > have[key]:
                    if validation not in ignore:
                        ignore.append(validation)
                    why.append("%s %s %d (this machine %d)" % (role, key, want, have[key]))
        if ignore:
            self.kube.patch("AgentClusterInstall", self.ns, self.aci_name, {"metadata": {"annotations": {
                "agent-install.openshift.io/ignored-host-validations": ",".join(ignore)}}})
            self.say("the service wants more than this machine has (%s): the AgentClusterInstall ignores %s" % (
                ", ".join(why), ", ".join(ignore)))
        return ignore

    def check_nics(self):
        """A LabError when the service dropped the hosts' NICs: a lab's are
        veth pairs, which assisted-service keeps only with
        ENABLE_VIRTUAL_INTERFACES=true (without them no host is ever known)."""
        for a in self.kube.list("Agent", self.ns):
            inv = (a.get("status") or {}).get("inventory") or {}
            if inv.get("hostname") and not inv.get("interfaces") and a["metadata"]["name"] in self.names():
                raise LabError("the service dropped the NICs of %s (virtual interfaces, as the lab's are): run "
                               "it with ENABLE_VIRTUAL_INTERFACES=true" % self.names()[a["metadata"]["name"]])

    def secrets(self):
        return (self.cd_name + "-admin-kubeconfig", self.cd_name + "-admin-password")

    def state(self):
        """The AgentClusterInstall's debugInfo.state, as last seen."""
        return ((self.aci() or {}).get("status") or {}).get("debugInfo", {}).get("state")

    def run(self, timeout, stall=300, until=None, controller=True):
        """step() until Completed (or until(self) is true); LabError with
        where things stand when it fails, stalls or runs out of time."""
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while True:
            got = self.step(controller=controller)
            if got == "completed" or (until and until(self)):
                return got
            if got and got.startswith("failed"):
                raise LabError("the installation " + got)
            if got == "changed":
                last = time.monotonic()
            now = time.monotonic()
            if now > deadline or now - last > stall:
                why = "nothing changed for %d s" % stall if now <= deadline else "the time limit passed"
                raise LabError("%s; last seen:\n  %s\n%s" % (why, "\n  ".join(
                    "%s %s" % kv for kv in sorted(self.rows.items())), self.where()))
            time.sleep(1)

    def controller_ended(self, timeout=120):
        """Waits for cradle's controller to end, as its Job does once the
        service says installed: its last calls (complete-installation
        among them: the service may turn installed before it, on the
        ingress CA and the operators alone) come after that, so the
        record is read once it is over. Its exit status; LabError when it
        does not end in time or fails. None without a controller."""
        if self.controller is None:
            return None
        try:
            rc = self.controller.wait(timeout)
        except subprocess.TimeoutExpired:
            raise LabError("the controller did not end %d s after the installation; its log:\n%s" % (
                timeout, "\n".join(self.lab.log("controller").splitlines()[-15:])))
        if rc != 0:
            raise LabError("the controller exited %d:\n%s" % (
                rc, "\n".join(self.lab.log("controller").splitlines()[-15:])))
        return rc

    def where(self):
        """Where each host stands in the service, and why."""
        import refclient
        if not self.cluster_id:
            return "  the cluster was never registered (see the AgentClusterInstall's SpecSynced)"
        st, c = refclient.HubClient(self.svc).call("GET", "/v2/clusters/%s" % self.cluster_id)
        if st != 200:
            return "  the service answered %s for the cluster" % st
        names = self.names()
        lines = ["  cluster %s: %s" % (c.get("status"), c.get("status_info"))]
        for h in c.get("hosts") or []:
            stage = (h.get("progress") or {}).get("current_stage", "")
            lines.append("  host %s%s: %s at %r (%s)" % (names.get(h["id"], h["id"]),
                                                          " (bootstrap)" if h.get("bootstrap") else "",
                                                          h.get("status"), stage, h.get("status_info")))
        return "\n".join(lines)


# ---- the Cluster API flow (tools/rehearse --capi) -------------------------------------------------

CAPI_CLUSTER = "spoke"                  # the Cluster, and the OpenShift cluster's name
CAPI_CONTROL_PLANE = "spoke-control-plane"
CAPI_MACHINE_TEMPLATE = "spoke-controlplane"
CAPI_LABEL_CONTROL_PLANE = "cluster.x-k8s.io/control-plane"
CAPI_WORKERS = "spoke-workers"          # the workers' MachineDeployment and its templates
CAPI_DOMAIN = "lab.home"
CAPI_API_VIP, CAPI_INGRESS_VIP = "198.51.100.100", "198.51.100.101"


def release_version(release):
    """x.y.z of a release image's tag (the control plane's distributionVersion)"""
    m = re.search(r":(\d+\.\d+\.\d+)", release)
    if not m:
        raise LabError("cannot tell the OpenShift version of %s (its tag has none)" % release)
    return m.group(1)


def capi_resources(ns, release=RELEASE, workers=0):
    """A user's Cluster API resources for a three-node OpenShift cluster on
    Metal3: the pull secret, the Metal3Cluster (the API VIP its endpoint),
    the control plane's Metal3MachineTemplate, CAPOA's
    OpenshiftAssistedControlPlane (three replicas) and the Cluster naming
    both (CAPI v1beta2 references)."""
    ps = docs("pullsecret.yaml")
    ps["metadata"]["namespace"] = ns
    infra = "infrastructure.cluster.x-k8s.io"
    meta = lambda name: {"name": name, "namespace": ns}  # noqa: E731
    return [
        ps,
        {"apiVersion": infra + "/v1beta2", "kind": "Metal3Cluster", "metadata": meta(CAPI_CLUSTER),
         "spec": {"controlPlaneEndpoint": {"host": CAPI_API_VIP, "port": 6443}}},
        {"apiVersion": infra + "/v1beta2", "kind": "Metal3MachineTemplate", "metadata": meta(CAPI_MACHINE_TEMPLATE),
         "spec": {"template": {"spec": {"image": {
             "url": "http://198.51.100.1/rhcos.qcow2", "checksum": "http://198.51.100.1/rhcos.qcow2.sha256sum",
             "checksumType": "sha256", "format": "qcow2"}}}}},
        {"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha3", "kind": "OpenshiftAssistedControlPlane",
         "metadata": dict(meta(CAPI_CONTROL_PLANE), labels={"cluster.x-k8s.io/cluster-name": CAPI_CLUSTER}),
         "spec": {"distributionVersion": release_version(release), "replicas": 3,
                  "config": {"baseDomain": CAPI_DOMAIN, "clusterName": CAPI_CLUSTER,
                             "apiVIPs": [CAPI_API_VIP], "ingressVIPs": [CAPI_INGRESS_VIP],
                             "pullSecretRef": {"name": ps["metadata"]["name"]}},
                  "openshiftAssistedConfigSpec": {"cpuArchitecture": "x86_64"},
                  "machineTemplate": {"infrastructureRef": {"apiGroup": infra, "kind": "Metal3MachineTemplate",
                                                            "name": CAPI_MACHINE_TEMPLATE}}}},
        {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": meta(CAPI_CLUSTER),
         "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["10.128.0.0/14"]},
                                     "services": {"cidrBlocks": ["172.30.0.0/16"]}},
                  "infrastructureRef": {"apiGroup": infra, "kind": "Metal3Cluster", "name": CAPI_CLUSTER},
                  "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io",
                                      "kind": "OpenshiftAssistedControlPlane", "name": CAPI_CONTROL_PLANE}}},
    ] + ([] if not workers else [
        # day-1 workers: a MachineDeployment of OpenshiftAssistedConfigs
        {"apiVersion": infra + "/v1beta2", "kind": "Metal3MachineTemplate", "metadata": meta(CAPI_WORKERS),
         "spec": {"template": {"spec": {"image": {
             "url": "http://198.51.100.1/rhcos.qcow2", "checksum": "http://198.51.100.1/rhcos.qcow2.sha256sum",
             "checksumType": "sha256", "format": "qcow2"}}}}},
        {"apiVersion": "bootstrap.cluster.x-k8s.io/v1alpha2", "kind": "OpenshiftAssistedConfigTemplate",
         "metadata": meta(CAPI_WORKERS), "spec": {"template": {"spec": {"cpuArchitecture": "x86_64"}}}},
        {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "metadata": meta(CAPI_WORKERS),
         "spec": {"clusterName": CAPI_CLUSTER, "replicas": workers,
                  "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": CAPI_WORKERS}},
                  "template": {"metadata": {"labels": {"cluster.x-k8s.io/deployment-name": CAPI_WORKERS}},
                               "spec": {"clusterName": CAPI_CLUSTER,
                                        "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io",
                                                                    "kind": "OpenshiftAssistedConfigTemplate",
                                                                    "name": CAPI_WORKERS}},
                                        "infrastructureRef": {"apiGroup": infra, "kind": "Metal3MachineTemplate",
                                                              "name": CAPI_WORKERS}}}}},
    ])


def ignition_hostname(value):
    """The /etc/hostname an Ignition config (a bootstrap data Secret's
    value) writes, or None."""
    try:
        ign = json.loads(value)
    except ValueError:
        return None
    for f in ((ign.get("storage") or {}).get("files") or []):
        if f.get("path") == "/etc/hostname":
            src = (f.get("contents") or {}).get("source") or ""
            head, _, data = src.partition(",")
            if not head.startswith("data:"):
                return None
            text = base64.b64decode(data).decode() if head.endswith(";base64") else urllib.parse.unquote(data)
            return text.strip() or None
    return None


class CapiInstall(Install):
    """The day-1 flow with Cluster API resources (tools/rehearse --capi):
    cradle-hub --capi is the bootstrap and control-plane provider, CAPI
    core and Metal3 are played by tests/capi/capicore.py.

    up() as Install's, with the Cluster API CRDs and cradle-hub --capi;
    apply() starts CAPI core's stand-in and applies capi_resources();
    boot() waits for each control-plane Machine's bootstrap data Secret and
    boots one host per Machine from it: the hostname its Ignition writes
    to /etc/hostname (the agent's --force-hostname: in dry run nothing
    reads the Ignition), the infra-env cradle-hub registered (the control
    plane's annotation). It brings up the new cluster (NewCluster) then,
    before the installation: what the service hands out as the cluster's
    kubeconfig must be the new cluster's, and the lab puts it there as
    the installer's output (the reference service's control API,
    PUT /__control/clusters/<id>/files/<name>: kubeconfig-noingress once
    the service made its own at the installation's start; the service's
    ingress-CA upload makes the full kubeconfig of it, as a real one
    does). As a real cluster's
    Metal3 provider does, the lab gives each Node the providerID of its
    Machine (by name: the stand-in has no BareMetalHosts to match).

    step() reports the Cluster, the control plane and a row per Machine
    (phase, Node, the host's install stage from its HostInstallation
    condition) and returns "completed" once the Cluster's
    ControlPlaneInitialized and Available are True, every Machine is
    Running, the service says installed and the <cluster>-kubeconfig
    Secret is the full kubeconfig (the new cluster's router CA in)."""

    CAPI = True
    FINALIZED_KINDS = Install.FINALIZED_KINDS + ("OpenshiftAssistedControlPlane", "OpenshiftAssistedConfig",
                                                 "Machine", "Cluster", "Metal3Cluster", "Metal3Machine",
                                                 "Metal3MachineTemplate", "MachineDeployment", "MachineSet",
                                                 "OpenshiftAssistedConfigTemplate")

    def __init__(self, lab, ns, say=None, hosts=3, release=RELEASE, controller="new-cluster", workers=0):
        if controller != "new-cluster":
            raise LabError("the Cluster API flow needs the new cluster (its API answers the control plane)")
        self.workers = workers
        super().__init__(lab, ns, say=say, hosts=hosts + workers, release=release, hub_args=("--capi",),
                         static_network=False, controller=controller)
        self.core = None
        self.files_put = set()

    def host_name(self, host):
        return None     # its Machine's, from the bootstrap data (boot())

    def up(self, timeout=120):
        import refclient
        if refclient.real_service():
            raise LabError("the Cluster API flow needs the reference service's control API (the cluster's "
                           "kubeconfig it hands out must be the lab's new cluster's); %s is set" %
                           refclient.URL_ENV)
        return super().up(timeout)

    def resources(self):
        return capi_resources(self.ns, self.release, self.workers)

    def apply(self, objects=None):
        self.namespace()
        if self.core is None:
            self.core = capicore().CapiCore(self.kube, self.ns, interval=1).start()
            self.lab.on_close.append(self.core.stop)
            self.say("Cluster API core's controllers and Metal3's, as tests/capi/capicore.py plays them, watching %s"
                     % self.ns)
        super().apply(objects)

    def admin_kubeconfig(self):
        return None

    def secrets(self):
        return (CAPI_CLUSTER + "-kubeconfig",)

    def oacp(self):
        return self.kube.get("OpenshiftAssistedControlPlane", self.ns, CAPI_CONTROL_PLANE)

    def machines(self):
        return sorted(self.kube.list("Machine", self.ns, "cluster.x-k8s.io/cluster-name=" + CAPI_CLUSTER),
                      key=lambda m: m["metadata"]["name"])

    def bootstrap_data(self, machine):
        """The value of a Machine's bootstrap data Secret, decoded ("" until
        the Machine names one that exists)."""
        name = ((machine.get("spec") or {}).get("bootstrap") or {}).get("dataSecretName")
        sec = self.kube.get("Secret", self.ns, name) if name else None
        return base64.b64decode(((sec or {}).get("data") or {}).get("value") or "").decode(errors="replace")

    def parsed_boot_data(self, machines, parse):
        """{Machine: parse(its bootstrap data)} once parse makes something
        of every one's; else None."""
        out = {}
        for m in machines:
            value = self.bootstrap_data(m)
            got = parse(value) if value else None
            if not got:
                return None
            out[m["metadata"]["name"]] = got
        return out

    def boot_data(self):
        """{Machine: hostname of its bootstrap data} once every control-plane
        Machine has its data Secret, with the infra-env id; else None."""
        cp = self.oacp()
        ann = ((cp or {}).get("metadata") or {}).get("annotations") or {}
        made = condition(cp, "MachinesCreated")
        if made and made["status"] == "False" and made.get("reason") in ("InputError", "RegistrationFailed"):
            self.settled("the control plane was refused", made.get("message"))
        else:
            self.settled("the control plane was refused", None)
        ie_id = ann.get(ANNOTATION_INFRA_ENV_ID)
        self.cluster_id = self.cluster_id or ann.get(ANNOTATION_CLUSTER_ID)
        ms = self.machines()
        if not ie_id or len(ms) < self.n_hosts:
            return None
        out = self.parsed_boot_data(ms, ignition_hostname)
        return (ie_id, out) if out is not None else None

    def boot_data_of(self, machines):
        """(Machine, hostname of its bootstrap data, infra-env id) for the
        first of machines whose data Secret is there, else None."""
        ie_id = (((self.oacp() or {}).get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_INFRA_ENV_ID)
        for name in sorted(machines):
            value = self.bootstrap_data(self.kube.get("Machine", self.ns, name) or {})
            hostname = ignition_hostname(value) if value else None
            if hostname and ie_id:
                return name, hostname, ie_id
        return None

    def boot(self, hosts=None, timeout=120):
        """One host per control-plane Machine, booted from its bootstrap data."""
        try:
            ie_id, data = wait("each control-plane Machine's bootstrap data", lambda: self.report() is not None and
                               self.boot_data(), timeout)
        except LabError as e:
            if not str(e).startswith("timed out"):
                raise
            raise LabError("%s; the control plane's MachinesCreated: %s" % (
                e, (condition(self.oacp(), "MachinesCreated") or {}).get("message", "none")))
        for h, (machine, hostname) in zip(self.hosts, sorted(data.items())):
            h["hostname"], h["machine"] = hostname, machine
            self.say("%s boots from machine/%s's bootstrap data: hostname %s (its Ignition's /etc/hostname)" % (
                h["name"], machine, hostname))
        self.new_cluster = NewCluster(self.lab, self.hosts, self.say)
        self.say("the new cluster: a second test kube-apiserver with an OpenShift cluster's CRDs (its kubeconfig "
                 "is the one the service will hand out); the lab plays its kubelets and operators only")
        hf = self.hosts_file()
        for h in hosts or self.hosts:
            self.agents[h["id"]] = start_agent(self.lab, h, self.relay.url, ie_id, hf)
        return ie_id

    # the cluster's kubeconfig, as the installer's output
    def service_cluster(self):
        import refclient
        if not self.cluster_id:
            return None
        st, c = refclient.HubClient(self.svc).call("GET", "/v2/clusters/%s" % self.cluster_id)
        return c if st == 200 and isinstance(c, dict) else None

    def put_file(self, name, text):
        r = self.svc.raw("PUT", "/__control/clusters/%s/files/%s" % (self.cluster_id, name), text.encode())
        if r.status != 200:
            raise LabError("the reference service refused the cluster's %s: %s" % (name, r.status))
        self.files_put.add(name)

    def play_kubeconfig(self, cluster):
        """The installer's kubeconfig-noingress, once the service made its
        own at the installation's start (its ingress-CA upload merges the
        router CA into it: the full kubeconfig)."""
        if "kubeconfig-noingress" not in self.files_put and (cluster or {}).get("status") in (
                "preparing-for-installation", "installing", "installing-pending-user-action", "finalizing"):
            with open(self.new_cluster.kubeconfig) as f:
                self.put_file("kubeconfig-noingress", f.read())
            self.say("the service's kubeconfig-noingress of the cluster: the new cluster's (the lab plays the "
                     "installer's output)")
            return True
        return False

    def play_installation(self, cluster, state, controller=True):
        """Once the new cluster is up: the installer's kubeconfig, cradle's
        controller (controller: True) and the new cluster, the Nodes'
        providerIDs. True when something changed."""
        if not self.new_cluster:
            return False
        changed = self.play_kubeconfig(cluster)
        if controller:
            changed = self.play_new_cluster(state) or changed
        return self.play_metal3_nodes() or changed

    def play_metal3_nodes(self):
        """The infrastructure provider's part on the new cluster: each
        Node gets its Machine's providerID (CAPM3 matches the Node by its
        BareMetalHost; the stand-in by the Machine's name)."""
        changed = False
        nc = self.new_cluster
        for m in self.machines():
            pid = (m.get("spec") or {}).get("providerID")
            host = next((h for h in self.hosts if h.get("machine") == m["metadata"]["name"]), None)
            if not pid or not host or nc.state.get(host["hostname"]) not in ("serving", "ready"):
                continue
            r = nc.request("GET", "/api/v1/nodes/" + host["hostname"])
            if r.status != 200 or (r.json.get("spec") or {}).get("providerID"):
                continue
            r = nc.request("PATCH", "/api/v1/nodes/" + host["hostname"], {"spec": {"providerID": pid}},
                           "application/merge-patch+json")
            if r.status != 200:
                raise LabError("cannot set the providerID of the Node %s: %s %s" % (host["hostname"], r.status,
                                                                                   r.raw[:300]))
            self.say("new cluster: node %s has providerID %s (the Metal3 provider's part)" % (host["hostname"], pid))
            changed = True
        return changed

    # watching
    def report(self):
        """The rows `kubectl get cluster,openshiftassistedcontrolplane,
        machines` would show (with the host's stage); says each that changed."""
        rows = {}
        c = self.kube.get("Cluster", self.ns, CAPI_CLUSTER)
        if c:
            conds = " ".join("%s=%s" % (t, (condition(c, t) or {}).get("status", "-")) for t in (
                "InfrastructureReady", "ControlPlaneInitialized", "ControlPlaneAvailable", "Available"))
            rows["cluster/" + CAPI_CLUSTER] = "phase=%s %s" % ((c.get("status") or {}).get("phase", "-"), conds)
        cp = self.oacp()
        if cp:
            st = cp.get("status") or {}
            av = condition(cp, "Available") or {}
            rows["openshiftassistedcontrolplane/" + CAPI_CONTROL_PLANE] = \
                "replicas=%s ready=%s initialized=%s version=%s Available=%s(%s)" % (
                    st.get("replicas", "-"), st.get("readyReplicas", "-"),
                    str(bool((st.get("initialization") or {}).get("controlPlaneInitialized"))).lower(),
                    st.get("version", "-"), av.get("status", "-"), av.get("message", ""))
        for m in self.machines():
            st = m.get("status") or {}
            hi = condition(m, "HostInstallation")
            rows["machine/" + m["metadata"]["name"]] = "phase=%s node=%s host=%s" % (
                st.get("phase", "-"), (st.get("nodeRef") or {}).get("name", "-"),
                "%s %s" % (hi.get("reason"), hi.get("message")) if hi else "-")
        return self.show(rows)

    def kubeconfig_trusts_router_ca(self):
        """Whether the <cluster>-kubeconfig Secret is the full kubeconfig
        (the new cluster's router CA in), or None without the Secret."""
        import yaml
        sec = self.kube.get("Secret", self.ns, self.secrets()[0])
        if sec is None:
            return None
        if not (self.new_cluster and self.new_cluster.ingress_ca):
            return False
        text = base64.b64decode(((sec.get("data") or {}).get("value")) or "").decode(errors="replace")
        try:
            cas = "".join(base64.b64decode((c.get("cluster") or {}).get("certificate-authority-data") or "").decode()
                          for c in (yaml.safe_load(text) or {}).get("clusters") or [])
        except (ValueError, AttributeError):
            return False
        return pem_body(self.new_cluster.ingress_ca) in pem_body(cas)

    def done(self, state):
        """The Cluster's ControlPlaneInitialized and Available True, every
        Machine Running, the installation over (the service says installed)
        and the <cluster>-kubeconfig Secret the full kubeconfig."""
        c = self.kube.get("Cluster", self.ns, CAPI_CLUSTER)
        ms = self.machines()
        return (all((condition(c, t) or {}).get("status") == "True" for t in ("ControlPlaneInitialized", "Available"))
                and len(ms) == self.n_hosts and all((m.get("status") or {}).get("phase") == "Running" for m in ms)
                and state == "installed" and self.kubeconfig_trusts_router_ca())

    def step(self, approve=True, controller=True):
        """One look: "completed", "failed: <why>", "changed" or None."""
        changed = self.report()
        cp = self.oacp()
        self.cluster_id = self.cluster_id or (((cp or {}).get("metadata") or {}).get("annotations") or {}).get(
            ANNOTATION_CLUSTER_ID)
        cluster = self.service_cluster()
        state = (cluster or {}).get("status")
        changed = self.play_installation(cluster, state, controller) or changed
        if self.done(state):
            return "completed"
        if state in ("error", "cancelled"):
            return "failed: the service's cluster is %s (%s)\n%s" % (state, cluster.get("status_info"), self.where())
        failure = self.controller_failure()
        if failure:
            return failure
        return "changed" if changed else None

    def summary(self):
        """Lines for the end: the Cluster's conditions, the kubeconfig
        Secret, the Machines."""
        c = self.kube.get("Cluster", self.ns, CAPI_CLUSTER) or {}
        out = ["cluster/%s %s" % (CAPI_CLUSTER, ", ".join(
            "%s=%s (%s)" % (t, (condition(c, t) or {}).get("status"), (condition(c, t) or {}).get("reason"))
            for t in ("ControlPlaneInitialized", "Available")))]
        sec = self.kube.get("Secret", self.ns, self.secrets()[0]) or {}
        text = base64.b64decode(((sec.get("data") or {}).get("value")) or "").decode(errors="replace")
        server = re.search(r"server:\s*(\S+)", text)
        out.append("secret/%s (type %s, key value): the kubeconfig of %s, %s the new cluster's router CA" % (
            self.secrets()[0], sec.get("type"), server.group(1) if server else "no server",
            "trusting" if self.kubeconfig_trusts_router_ca() else "NOT trusting"))
        for m in self.machines():
            st = m.get("status") or {}
            out.append("machine/%s %s, node %s, providerID %s" % (m["metadata"]["name"], st.get("phase"),
                                                                  (st.get("nodeRef") or {}).get("name"),
                                                                  (m.get("spec") or {}).get("providerID")))
        return out


# ---- the spoke cluster of a day-2 host ----------------------------------------------------------------

class ClusterDNS(object):
    """The DNS records an OpenShift installation needs of its network:
    api.<cluster>.<domain>, api-int and *.apps, all at the API VIP, served by
    dnsmasq on the switch (198.51.100.1:53, nothing else answered, nothing
    forwarded) to the hosts given, through /etc/netns/<host>/resolv.conf
    (`ip netns exec` mounts it over /etc/resolv.conf for the agents started
    afterwards). A day-2 host of an imported cluster reaches the spoke's
    machine-config server by that name, and a real service checks it."""

    def __init__(self, lab, sw, domain, address):
        exe = which("dnsmasq") or ("/usr/sbin/dnsmasq" if os.path.exists("/usr/sbin/dnsmasq") else None)
        if not exe:
            raise LabError("dnsmasq is not installed (tools/deps --test)")
        self.lab, self.domain, self.address = lab, domain, address
        self.dirs = []
        conf = lab.path("sw-dns.conf")
        with open(conf, "w") as f:
            f.write("\n".join(["no-resolv", "no-hosts", "no-poll", "bind-interfaces", "listen-address=198.51.100.1",
                               "except-interface=lo", "address=/%s/%s" % (domain, address),
                               "pid-file=" + lab.path("sw-dns.pid"), "log-queries",
                               "log-facility=" + lab.path("sw-dns-queries.log")]) + "\n")
        lab.spawn("sw-dns", [exe, "-k", "-C", conf], ns=sw)
        lab.on_close.append(self.close)

    def serve(self, hosts):
        for h in hosts:
            d = os.path.join("/etc/netns", h["ns"])
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "resolv.conf"), "w") as f:
                f.write("nameserver 198.51.100.1\n")
            self.dirs.append(d)

    def close(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


class MachineConfigServer(object):
    """THE SPOKE'S MACHINE CONFIG SERVER, a stand-in: a day-2 host's
    api-vip-connectivity-check fetches the worker Ignition config from
    http://<the cluster's API VIP>:22624/config/worker, and a real service
    keeps the host insufficient until it could (the reference service does
    not check). The lab's spoke has no machine-config server: this one, on
    the switch at the API VIP, answers that path with an empty Ignition 3.2
    config and counts what it served."""

    PORT = 22624

    def __init__(self, lab, sw, vip):
        import http.server
        self.lab, self.sw, self.vip = lab, sw, vip
        self.served = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.split("?")[0] != "/config/worker":
                    self.send_error(404)
                    return
                body = json.dumps({"ignition": {"version": "3.2.0"}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                outer.served.append(self.client_address[0])

            def log_message(self, *args):
                pass
        lab.ip(sw, "addr", "add", vip + "/32", "dev", "br0")
        with lab.sockets_in(sw):
            self.server = http.server.ThreadingHTTPServer((vip, self.PORT), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="machine-config-server")
        self.thread.start()
        lab.on_close.append(self.stop)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def start_spoke(lab):
    """A second test kube-apiserver playing the installed cluster (the
    spoke) that cradle-hub reaches through the admin kubeconfig Secret."""
    import kubeapi_harness
    srv = kubeapi_harness.Server([], state_dir=lab.path("spoke")).start(timeout=180)
    lab.on_close.append(srv.stop)
    return srv


class SpokeKubelet(object):
    """The new node's kubelet on the spoke, as a day-2 host joins (what the
    kubelet and kube-apiserver do upstream once the host has rebooted into
    its installed system): the client CSR as the node bootstrapper, then
    the Node (Ready, the host's addresses), then the serving CSR as the
    node. cradle-hub must approve both CSRs (notes §5.6) and label the
    Node; nothing here approves anything."""

    BOOTSTRAPPER = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"

    def __init__(self, spoke, host):
        import kcerts
        self.spoke, self.host = spoke, host
        self.dir = tempfile.mkdtemp(prefix="kubelet-", dir=os.path.dirname(spoke.state))
        ca = kcerts.CA(spoke.path("ca.crt"), spoke.path("ca.key"))
        # the bootstrapper is a service account: a token (its name is too
        # long for a certificate's CN); the node a client certificate
        self.bootstrap_token = uuid.uuid4().hex
        spoke.ctl("POST", "/tokens", {"token": self.bootstrap_token, "user": self.BOOTSTRAPPER, "groups": [
            "system:serviceaccounts", "system:serviceaccounts:openshift-machine-config-operator"]})
        self.node_id = ca.issue(self.dir, "node", "system:node:" + host["hostname"], ("system:nodes",))

    def _csr(self, name, signer, usages, sans, cert=None, token=None):
        key = os.path.join(self.dir, name + ".key")
        argv = ["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-subj", "/O=system:nodes/CN=system:node:" + self.host["hostname"]]
        if sans:
            argv += ["-addext", "subjectAltName=" + ",".join(sans)]
        pem = subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                "metadata": {"generateName": "csr-"},
                "spec": {"request": base64.b64encode(pem).decode(), "signerName": signer, "usages": usages}}
        r = self.spoke.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", body,
                               user_cert=cert, token=token)
        if r.status != 201:
            raise LabError("the spoke refused the %s CSR: %s %s" % (name, r.status, r.raw[:500]))
        return r.json["metadata"]["name"]

    def client_csr(self):
        return self._csr("client", "kubernetes.io/kube-apiserver-client-kubelet",
                         ["digital signature", "client auth"], None, token=self.bootstrap_token)

    def serving_csr(self):
        return self._csr("serving", "kubernetes.io/kubelet-serving",
                         ["digital signature", "key encipherment", "server auth"],
                         ["DNS:" + self.host["hostname"], "IP:" + self.host["ip"]], cert=self.node_id)

    def node(self, ready=True):
        """The Node, with the host's addresses; Ready or not yet."""
        name = self.host["hostname"]
        r = self.spoke.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                                         "metadata": {"name": name}})
        if r.status != 201:
            raise LabError("cannot create the Node %s: %s %s" % (name, r.status, r.raw[:500]))
        self.ready(ready)

    def ready(self, ready):
        """The Node's Ready condition and addresses, as the kubelet posts them."""
        name = self.host["hostname"]
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        r = self.spoke.request("PATCH", "/api/v1/nodes/%s/status" % name, {"status": {
            "addresses": [{"type": "InternalIP", "address": self.host["ip"]}, {"type": "Hostname", "address": name}],
            "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                            "reason": "KubeletReady" if ready else "KubeletNotReady",
                            "message": "kubelet is posting ready status" if ready else
                            "container runtime network not ready", "lastHeartbeatTime": now,
                            "lastTransitionTime": now}]}}, ctype="application/merge-patch+json")
        if r.status != 200:
            raise LabError("cannot post the status of the Node %s: %s %s" % (name, r.status, r.raw[:500]))

    def get(self, path):
        r = self.spoke.request("GET", path)
        if r.status == 404:
            return None
        if r.status != 200:
            raise LabError("spoke GET %s: %s %s" % (path, r.status, r.raw[:500]))
        return r.json

    def approval(self, csr):
        """The request's Approved condition, or None"""
        o = self.get("/apis/certificates.k8s.io/v1/certificatesigningrequests/" + csr) or {}
        return next((c for c in (o.get("status") or {}).get("conditions") or [] if c.get("type") == "Approved"), None)

    def approved(self, csr):
        return self.approval(csr) is not None

    def issued(self, csr):
        """the certificate, once the signer issued it (after an approval)"""
        o = self.get("/apis/certificates.k8s.io/v1/certificatesigningrequests/" + csr) or {}
        return (o.get("status") or {}).get("certificate")
