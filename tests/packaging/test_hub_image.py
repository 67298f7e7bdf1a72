#!/usr/bin/python3
"""cradle-hub's container image (packaging/hub/) with a real podman, run
as packaging/hub/deployment.yaml runs it.

The image is built from the static cradle-hub under test (CRADLE_HUB_BINARY,
default CRADLE_BUILD_ROOT/hub/cradle-hub; the test skips when that is not a
static executable) with packaging/hub/build-image.sh, under a unique tag in
a podman storage of the test's own (tests/helpers/podmanlab.py), inside the
network namespace in-netns.sh made. Checked:

  * the image: its entrypoint is cradle-hub, its user the Deployment's
    runAsUser (numeric, not root), its name the one `ninja hub-image` tags;
  * `podman run IMAGE --help` exits 0 and lists the flags;
  * every flag of the Deployment's args and every variable of its env is one
    the program has (its --help, or the log target lib/ reads), and the
    probe and metrics ports are the ones the args bind;
  * the Deployment's container as the kubelet runs it: the args exactly,
    the env, its securityContext (user, read-only root, no capabilities),
    the service-account files and KUBERNETES_SERVICE_HOST/PORT of the
    in-cluster configuration, the service CA volume, against the test
    kube-apiserver (with the hub's CRDs) and the reference service under
    the name the args give it (TLS, port 8090, signed by that CA; no auth,
    as the args give no token file): the liveness and readiness probes
    answer 200, the leader-election Lease is taken in POD_NAMESPACE, it
    stops with exit 0 on SIGTERM, and the service account's token is not
    in its log.

Environment: CRADLE_HUB_BINARY, CRADLE_SOURCE_ROOT, CRADLE_BUILD_ROOT,
CRADLE_TEST_KUBECONFIG (the Deployment case then skips: it needs the fake's
control API to mint the service account's token).
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("CRADLE_BUILD_ROOT", os.path.join(SRC, "build"))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, os.path.join(SRC, "tests", "kubeapi"))
HUB = os.environ.get("CRADLE_HUB_BINARY") or os.path.join(BUILD, "hub", "cradle-hub")
BUILD_IMAGE = os.path.join(SRC, "packaging", "hub", "build-image.sh")
DEPLOYMENT = os.path.join(SRC, "packaging", "hub", "deployment.yaml")
CRDS = os.path.join(SRC, "tests", "reference", "assisted-service")
CRD_DIRS = ("config/crd/bases", "hack/crds/hive", "hack/crds/metal3")


def skip(reason):
    print("SKIP: %s" % reason)
    sys.exit(77)


from podmanlab import PodmanLab, Unavailable, is_static  # noqa: E402
if not is_static(HUB):
    skip("%s is not a static cradle-hub: its image is FROM scratch (-Dstatic=true)" % HUB)
try:
    import yaml
except ImportError:
    skip("python3-yaml is not installed (tools/deps --test)")


WORK = tempfile.mkdtemp(prefix="cradle-hub-image-")
RUN_ID = uuid.uuid4().hex[:10]
IMAGE = "localhost/cradle-hub-test-%s:%s" % (RUN_ID, RUN_ID)
try:
    LAB = PodmanLab(WORK)
except Unavailable as e:
    shutil.rmtree(WORK, ignore_errors=True)
    skip(str(e))


def project_version():
    with open(os.path.join(SRC, "meson.build")) as f:
        return re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)


def deployment():
    with open(DEPLOYMENT) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    return [d for d in docs if d["kind"] == "Deployment"][0]


def container(dep):
    return [c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "cradle-hub"][0]


def help_flags(text):
    return set(re.findall(r"^  (--[a-z0-9-]+)", text, re.M))


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def setUpModule():
    p = subprocess.run([BUILD_IMAGE, HUB, IMAGE], env=LAB.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        raise AssertionError("build-image.sh failed:\n" + p.stdout)


def tearDownModule():
    LAB.cleanup()
    shutil.rmtree(WORK, ignore_errors=True)


class Image(unittest.TestCase):
    def test_configuration(self):
        cfg = json.loads(LAB.podman("image", "inspect", IMAGE).stdout)[0]["Config"]
        self.assertEqual(cfg["Entrypoint"], ["/usr/bin/cradle-hub"])
        self.assertFalse(cfg.get("Cmd"))
        sc = deployment()["spec"]["template"]["spec"]["securityContext"]
        self.assertTrue(sc["runAsNonRoot"])
        # numeric, so that a kubelet can check runAsNonRoot on the image alone
        self.assertEqual(cfg["User"], "%d:%d" % (sc["runAsUser"], sc["runAsUser"]))
        self.assertEqual(cfg["Labels"]["org.opencontainers.image.title"], "cradle-hub")
        self.assertEqual(cfg["Labels"]["org.opencontainers.image.version"], project_version())

    def test_contents(self):
        root = LAB.podman("image", "mount", IMAGE).stdout.strip()
        try:
            files = sorted(os.path.relpath(os.path.join(d, f), root)
                           for d, _, fs in os.walk(root) for f in fs)
            with open(os.path.join(root, "etc", "passwd")) as f:
                self.assertIn("nonroot:x:65532:65532:", f.read())
        finally:
            LAB.podman("image", "unmount", IMAGE, check=False)
        self.assertEqual(files, ["etc/group", "etc/passwd", "etc/ssl/certs/ca-certificates.crt",
                                 "usr/bin/cradle-hub"])

    def test_deployment_names_the_built_image(self):
        # "ninja hub-image" tags localhost/cradle-hub:VERSION (packaging/meson.build)
        self.assertEqual(container(deployment())["image"], "localhost/cradle-hub:" + project_version())

    def test_help(self):
        p = LAB.podman("run", "--rm", "--net=none", IMAGE, "--help", check=False)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        text = p.stdout + p.stderr
        self.assertIn("Usage: cradle-hub [flags]", text)
        for flag in ("--service-url", "--service-ca-file", "--leader-elect", "--health-probe-bind-address",
                     "--metrics-bind-address", "--kubeconfig", "--namespace"):
            self.assertIn(flag, help_flags(text))

    def test_deployment_flags_exist(self):
        text = LAB.podman("run", "--rm", "--net=none", IMAGE, "--help").stdout
        flags = help_flags(text)
        c = container(deployment())
        self.assertNotIn("command", c)  # the image's entrypoint
        for arg in c["args"]:
            self.assertRegex(arg, r"^--[a-z0-9-]+(=.*)?$")
            self.assertIn(arg.split("=", 1)[0], flags, arg)
        envs = set(re.findall(r"Environment: ([A-Z_]+)", text))
        for e in c["env"]:
            # CRADLE_LOG_TARGET is lib/'s (lib/log.c), every program's
            self.assertTrue(e["name"] in envs or e["name"] == "CRADLE_LOG_TARGET", e["name"])
        args = dict(a.split("=", 1) for a in c["args"] if "=" in a)
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        self.assertEqual(args["--health-probe-bind-address"], ":%d" % ports["probes"])
        self.assertEqual(args["--metrics-bind-address"], ":%d" % ports["metrics"])
        for probe in ("livenessProbe", "readinessProbe"):
            self.assertEqual(c[probe]["httpGet"]["port"], "probes")


class Deployment(unittest.TestCase):
    """The Deployment's container, as the kubelet would run it."""

    def setUp(self):
        if os.environ.get("CRADLE_TEST_KUBECONFIG"):
            self.skipTest("needs the test kube-apiserver's control API (/tokens) for the service account's token")
        import kcerts
        import kubeapi_harness
        from refclient import RefService
        self.tmp = tempfile.mkdtemp(prefix="deploy-", dir=WORK)
        args = []
        for d in CRD_DIRS:
            args += ["--apply", os.path.join(CRDS, d)]
        self.kube = kubeapi_harness.Server(args, state_dir=os.path.join(self.tmp, "kubeapi")).start(timeout=180)
        self.addCleanup(self.kube.stop)
        # the service as the args name it, signed by the CA the volume holds
        ca = kcerts.CA.generate(self.tmp, cn="service-ca")
        cert, key = ca.issue(self.tmp, "service", "assisted-service.multicluster-engine.svc", server=True,
                             sans=["DNS:assisted-service.multicluster-engine.svc"])
        self.svc = RefService(tls=(cert, key, ca.cert_path), workdir=self.tmp,
                              extra_args=["--port", "8090"]).start()
        self.addCleanup(self.svc.stop)
        self.ca = ca

    def test_runs_with_the_deployments_command_line(self):
        dep = deployment()
        c = container(dep)
        spec = dep["spec"]["template"]["spec"]
        ns = dep["metadata"]["namespace"]
        sa = spec["serviceAccountName"]
        token = "sa-" + uuid.uuid4().hex
        self.kube.ctl("POST", "/tokens", {"token": token, "user": "system:serviceaccount:%s:%s" % (ns, sa),
                                          "groups": ["system:serviceaccounts", "system:authenticated"]})
        r = self.kube.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": ns}})
        self.assertIn(r.status, (201, 409), r)
        # the service account's projected volume and the service CA ConfigMap
        sadir = os.path.join(self.tmp, "serviceaccount")
        os.makedirs(sadir)
        for name, data in (("token", token), ("namespace", ns)):
            with open(os.path.join(sadir, name), "w") as f:
                f.write(data)
        shutil.copy(self.kube.path("ca.crt"), os.path.join(sadir, "ca.crt"))
        cadir = os.path.join(self.tmp, "service-ca")
        os.makedirs(cadir)
        shutil.copy(self.ca.cert_path, os.path.join(cadir, "service-ca.crt"))
        for d in (sadir, cadir):
            os.chmod(d, 0o755)
            for f in os.listdir(d):
                os.chmod(os.path.join(d, f), 0o644)
        mount = [m for m in c["volumeMounts"] if m["name"] == "service-ca"][0]
        env = []
        for e in c["env"]:
            if "value" in e:
                env += ["--env", "%s=%s" % (e["name"], e["value"])]
            else:  # the downward API's metadata.namespace
                self.assertEqual(e["valueFrom"]["fieldRef"]["fieldPath"], "metadata.namespace")
                env += ["--env", "%s=%s" % (e["name"], ns)]
        psc, csc = spec["securityContext"], c["securityContext"]
        self.assertEqual(csc["capabilities"]["drop"], ["ALL"])
        argv = ["run", "--rm", "--name", "cradle-hub-" + RUN_ID, "--net=host",
                "--add-host", "assisted-service.multicluster-engine.svc:127.0.0.1",
                "--user", "%d" % psc["runAsUser"], "--cap-drop=all",
                "--security-opt", "no-new-privileges",
                "--env", "KUBERNETES_SERVICE_HOST=%s" % self.kube.host,
                "--env", "KUBERNETES_SERVICE_PORT=%d" % self.kube.port,
                "-v", "%s:/var/run/secrets/kubernetes.io/serviceaccount:ro" % sadir,
                "-v", "%s:%s:ro" % (cadir, mount["mountPath"])] + env
        if csc.get("readOnlyRootFilesystem"):
            argv.append("--read-only")
        argv += [IMAGE] + c["args"]
        log = open(os.path.join(self.tmp, "hub.log"), "w+")
        proc = subprocess.Popen(["podman"] + argv, env=LAB.env, stdout=log, stderr=subprocess.STDOUT)

        def output():
            log.flush()
            with open(log.name) as f:
                return f.read()

        def probe(path):
            if proc.poll() is not None:
                raise AssertionError("cradle-hub exited (%s):\n%s" % (proc.returncode, output()[-3000:]))
            try:
                h = http.client.HTTPConnection("127.0.0.1", 8081, timeout=2)
                h.request("GET", path)
                return h.getresponse().status
            except OSError:
                return None
        try:
            wait_for(lambda: probe(c["livenessProbe"]["httpGet"]["path"]) == 200, 60, "/healthz")
            wait_for(lambda: probe(c["readinessProbe"]["httpGet"]["path"]) == 200, 120, "/readyz")
            lease = "/apis/coordination.k8s.io/v1/namespaces/%s/leases/cradle-hub.agent-install.openshift.io" % ns
            wait_for(lambda: self.kube.get(lease).status == 200, 60, "the leader-election Lease")
            h = http.client.HTTPConnection("127.0.0.1", 8080, timeout=5)
            h.request("GET", "/metrics")
            metrics = h.getresponse().read().decode()
            self.assertIn("leader_election_master_status", metrics)
        finally:
            LAB.podman("stop", "--time", "10", "cradle-hub-" + RUN_ID, check=False)
            rc = proc.wait(60)
            text = output()
            log.close()
        self.assertEqual(rc, 0, text[-3000:])
        self.assertNotIn(token, text)


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
