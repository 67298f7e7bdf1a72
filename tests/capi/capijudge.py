"""The real Cluster API core controllers, as the judge of capicore.py.

capicore.CapiCore plays CAPI core's side of the provider contracts, written
from the contract pages. When CRADLE_TEST_CAPI_CORE names a Cluster API core
manager binary (built from cluster-api's main.go; v1.9.x speaks the v1beta1
contract, the one CAPOA bc5cc25d speaks), core_for() runs that program over
the test's namespace instead, and keeps only capicore's Metal3 stand-in
(core=False): the same test then holds capicore's behaviour against the
real one. Without the variable, core_for() is capicore alone.

The manager runs with --namespace (it sees only the test's objects, so a
real cluster's other namespaces are left alone), without leader election,
with MachinePool and ClusterResourceSet off (the reference CRDs have neither
kind), its webhook server on a free loopback port with a self-signed
certificate of its own, and its health and diagnostics endpoints on
loopback. Nothing registers its webhooks with the API server (tests/kubeapi
calls none): RealCore.admit() plays the API server's part for the objects a
lab creates, sending them through CAPI's own defaulting and validating
webhooks first, as a cluster with CAPI installed would. It reads the workload cluster through <cluster>-kubeconfig, as
the real controllers do, so the tests give their Nodes that way.

Standard library; openssl(1) for the certificate.
"""

import base64
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hub"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kubeapi"))
from hublab import LabError, free_port  # noqa: E402
from kpatch import json_patch  # noqa: E402

import capicore as C  # noqa: E402

ENV = "CRADLE_TEST_CAPI_CORE"
# the kinds whose CRDs the reference set (../shared/reference/cluster-api) lacks
GATES_OFF = "MachinePool=false,ClusterResourceSet=false"
# klog's header: severity letter, mmdd, time
KLOG_ERROR = re.compile(r"^E\d{4} ")


def binary():
    """The manager CRADLE_TEST_CAPI_CORE names, or None; a name that is not
    an executable file is the caller's mistake and says so."""
    path = os.environ.get(ENV)
    if not path:
        return None
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise LabError("%s=%s: not an executable file" % (ENV, path))
    return path


class RealCore(object):
    """One Cluster API core manager over one namespace: start() ... stop().

    errors: the manager's error lines (klog severity E), the last 50, so
    that a test's failure message shows what the program complained of."""

    name = "capi-core"

    def __init__(self, kubeconfig, namespace, path=None, startup=60):
        self.kubeconfig = kubeconfig
        self.ns = namespace
        self.path = path or binary()
        self.startup = startup
        self.dir = None
        self.proc = None
        self.log = None

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="cradle-capi-core-")
        try:
            self._certificate()
            health, self.webhook_port = free_port(), free_port()
            self.log = os.path.join(self.dir, "manager.log")
            with open(self.log, "wb") as out:
                self.proc = subprocess.Popen(
                    [self.path, "--kubeconfig", self.kubeconfig, "--namespace", self.ns,
                     "--leader-elect=false", "--feature-gates=" + GATES_OFF,
                     "--webhook-cert-dir", self.dir, "--webhook-port", str(self.webhook_port),
                     "--health-addr", "127.0.0.1:%d" % health,
                     "--diagnostics-address", "127.0.0.1:%d" % free_port(), "--insecure-diagnostics"],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            self._ready(health)
        except BaseException:
            self.stop()
            raise
        return self

    def _certificate(self):
        r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                            "-subj", "/CN=127.0.0.1", "-keyout", os.path.join(self.dir, "tls.key"),
                            "-out", os.path.join(self.dir, "tls.crt")],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode:
            raise LabError("openssl req: %s" % r.stderr.strip())

    def _ready(self, port):
        """Until the manager's /readyz answers 200 (its caches synced)."""
        deadline = time.monotonic() + self.startup
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LabError("%s exited %s at start: %s" % (self.path, self.proc.returncode, self.tail()))
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise LabError("%s not ready within %ss: %s" % (self.path, self.startup, self.tail()))

    def admit(self, obj, operation="CREATE"):
        """obj as the API server would store it with CAPI's webhooks
        registered: through the mutating webhook of its kind (defaults:
        a MachineDeployment's strategy, the cluster-name labels, ...), then
        the validating one. A refusal raises LabError with the webhook's
        message. Kinds CAPI core has no webhook for come back unchanged."""
        group, _, version = obj["apiVersion"].rpartition("/")
        if group not in ("cluster.x-k8s.io",):
            return obj
        hook = "%s-%s-%s" % (group.replace(".", "-"), version, obj["kind"].lower())
        out = self._review("/mutate-" + hook, obj, operation)
        if out is not None:
            if not out.get("allowed"):
                raise LabError("CAPI's defaulting webhook refused %s %s: %s" % (
                    obj["kind"], obj["metadata"].get("name"), (out.get("status") or {}).get("message")))
            if out.get("patch"):
                obj = json_patch(obj, json.loads(base64.b64decode(out["patch"])))
        out = self._review("/validate-" + hook, obj, operation)
        if out is not None and not out.get("allowed"):
            raise LabError("CAPI's validating webhook refused %s %s: %s" % (
                obj["kind"], obj["metadata"].get("name"), (out.get("status") or {}).get("message")))
        return obj

    def _review(self, path, obj, operation):
        """An AdmissionReview (admission.k8s.io/v1) of obj sent to path;
        its response, or None where the manager serves no such webhook."""
        group, _, version = obj["apiVersion"].rpartition("/")
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": str(uuid.uuid4()), "kind": {"group": group, "version": version, "kind": obj["kind"]},
            "resource": {"group": group, "version": version, "resource": obj["kind"].lower() + "s"},
            "name": obj["metadata"].get("name", ""), "namespace": obj["metadata"].get("namespace", self.ns),
            "operation": operation, "object": obj, "oldObject": None, "dryRun": False,
            "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]}}}
        ctx = ssl.create_default_context(cafile=os.path.join(self.dir, "tls.crt"))
        ctx.check_hostname = False  # the certificate names 127.0.0.1 in its subject only
        req = urllib.request.Request("https://127.0.0.1:%d%s" % (self.webhook_port, path),
                                     json.dumps(review).encode(), {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
                return json.loads(r.read()).get("response") or {}
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise LabError("CAPI's webhook %s: HTTP %s" % (path, e.code))

    def tail(self, n=2000):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except (OSError, TypeError):
            return ""

    @property
    def errors(self):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return [line.rstrip()[:400] for line in f if KLOG_ERROR.match(line)][-50:]
        except (OSError, TypeError):
            return []

    def settle(self, quiet=1.0, timeout=30):
        """Returns once the manager has logged nothing for quiet seconds
        (it has acted on what was written before the call); the real
        program has no pass to count."""
        deadline = time.monotonic() + timeout
        time.sleep(quiet)
        last = -1
        while time.monotonic() < deadline:
            size = os.path.getsize(self.log)
            if size == last:
                return
            last = size
            time.sleep(quiet)
        raise TimeoutError("%s kept logging for %ss" % (self.name, timeout))

    def stop(self, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.dir:
            keep = os.environ.get("CRADLE_TEST_KEEP_CAPI_CORE_LOG")
            if keep and self.log and os.path.exists(self.log):
                shutil.copy(self.log, os.path.join(keep, "capi-core-%s.log" % self.ns))
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


class Judged(object):
    """The real core and capicore's Metal3 stand-in, as one controller."""

    def __init__(self, real, metal3):
        self.real, self.metal3 = real, metal3
        self.name = real.name

    def start(self):
        self.metal3.start()
        try:
            self.real.start()
        except BaseException:
            self.metal3.stop()
            raise
        return self

    def stop(self, timeout=30):
        try:
            self.real.stop(timeout)
        finally:
            self.metal3.stop()

    def settle(self, *a, **kw):
        self.metal3.settle()
        self.real.settle()

    @property
    def errors(self):
        return self.real.errors + self.metal3.errors

    def admit(self, obj, operation="CREATE"):
        return self.real.admit(obj, operation)


def core_for(kube, kubeconfig, namespace, interval=0.2, deletion=False):
    """CAPI core (and the Metal3 stand-in) over namespace, not started:
    the real manager when CRADLE_TEST_CAPI_CORE names one, else capicore.
    The real manager always has CAPI core's Machine finalizer; deletion
    asks capicore for it."""
    path = binary()
    if path:
        return Judged(RealCore(kubeconfig, namespace, path),
                      C.CapiCore(kube, namespace, interval=interval, core=False))
    return C.CapiCore(kube, namespace, interval=interval, deletion=deletion)


def judging():
    """What runs as CAPI core, for a test's log line."""
    path = binary()
    return ("the real Cluster API core (%s)" % path) if path else "capicore"
