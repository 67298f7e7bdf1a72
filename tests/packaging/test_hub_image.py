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

  * the Cluster API provider's Deployment (packaging/capi/'s
    control-plane components, clusterctl's variables substituted) on a
    management cluster as clusterctl leaves it: the test kube-apiserver
    with CAPI core's and Metal3's CRDs and both components files applied,
    no Hive or agent-install CRDs, the container run with the components'
    service account and nothing more (the fake enforces RBAC): the probes
    answer, the Lease is taken, and a Cluster with an
    OpenshiftAssistedControlPlane of three replicas, CAPI core played by
    tests/capi/capicore.py, gets its cluster and infra-env registered in
    the reference service, its three Machines, OpenshiftAssistedConfigs
    and Metal3Machines, and a data Secret per Machine; nothing was refused
    (no 403 in the server's request log for the service account).

Environment: CRADLE_HUB_BINARY, CRADLE_SOURCE_ROOT, CRADLE_BUILD_ROOT,
CRADLE_TEST_KUBECONFIG (the Deployment case then skips: it needs the fake's
control API to mint the service account's token).
"""
import base64
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
        sadir = service_account_files(self.kube, self.tmp, ns, token)
        cadir = os.path.join(self.tmp, "service-ca")
        os.makedirs(cadir)
        shutil.copy(self.ca.cert_path, os.path.join(cadir, "service-ca.crt"))
        os.chmod(cadir, 0o755)
        os.chmod(os.path.join(cadir, "service-ca.crt"), 0o644)
        mount = [m for m in c["volumeMounts"] if m["name"] == "service-ca"][0]
        env = container_env(self, c, ns)
        pod = Pod(self, self.kube, dep, c, sadir, env,
                  ["--add-host", "assisted-service.multicluster-engine.svc:127.0.0.1",
                   "-v", "%s:%s:ro" % (cadir, mount["mountPath"])])
        try:
            pod.wait_probes()
            lease = "/apis/coordination.k8s.io/v1/namespaces/%s/leases/cradle-hub.agent-install.openshift.io" % ns
            wait_for(lambda: self.kube.get(lease).status == 200, 60, "the leader-election Lease")
            h = http.client.HTTPConnection("127.0.0.1", 8080, timeout=5)
            h.request("GET", "/metrics")
            metrics = h.getresponse().read().decode()
            self.assertIn("leader_election_master_status", metrics)
        finally:
            rc, text = pod.stop()
        self.assertEqual(rc, 0, text[-3000:])
        self.assertNotIn(token, text)


class Pod:
    """A Deployment's container run by podman as the kubelet would: its args
    exactly, its env, its securityContext, the service account's files and
    the in-cluster configuration's KUBERNETES_SERVICE_HOST/PORT."""

    def __init__(self, test, kube, dep, c, sadir, env, extra):
        psc, csc = dep["spec"]["template"]["spec"]["securityContext"], c["securityContext"]
        test.assertEqual(csc["capabilities"]["drop"], ["ALL"])
        self.c = c
        self.name = "cradle-hub-" + RUN_ID
        argv = ["run", "--rm", "--name", self.name, "--net=host",
                "--user", "%d" % psc["runAsUser"], "--cap-drop=all",
                "--security-opt", "no-new-privileges",
                "--env", "KUBERNETES_SERVICE_HOST=%s" % kube.host,
                "--env", "KUBERNETES_SERVICE_PORT=%d" % kube.port,
                "-v", "%s:/var/run/secrets/kubernetes.io/serviceaccount:ro" % sadir] + extra + env
        if csc.get("readOnlyRootFilesystem"):
            argv.append("--read-only")
        argv += [IMAGE] + c["args"]
        self.log = open(os.path.join(os.path.dirname(sadir), "hub.log"), "w+")
        self.proc = subprocess.Popen(["podman"] + argv, env=LAB.env, stdout=self.log, stderr=subprocess.STDOUT)

    def output(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def alive(self):
        if self.proc.poll() is not None:
            raise AssertionError("cradle-hub exited (%s):\n%s" % (self.proc.returncode, self.output()[-3000:]))

    def probe(self, path):
        self.alive()
        try:
            h = http.client.HTTPConnection("127.0.0.1", 8081, timeout=2)
            h.request("GET", path)
            return h.getresponse().status
        except OSError:
            return None

    def wait_probes(self):
        wait_for(lambda: self.probe(self.c["livenessProbe"]["httpGet"]["path"]) == 200, 60, "/healthz")
        wait_for(lambda: self.probe(self.c["readinessProbe"]["httpGet"]["path"]) == 200, 120, "/readyz")

    def stop(self):
        """SIGTERM as the kubelet sends it: (exit status, log)."""
        LAB.podman("stop", "--time", "10", self.name, check=False)
        rc = self.proc.wait(60)
        text = self.output()
        self.log.close()
        return rc, text


def service_account_files(kube, tmp, ns, token):
    """The service account's projected volume, as the kubelet mounts it."""
    sadir = os.path.join(tmp, "serviceaccount")
    os.makedirs(sadir)
    for name, data in (("token", token), ("namespace", ns)):
        with open(os.path.join(sadir, name), "w") as f:
            f.write(data)
    shutil.copy(kube.path("ca.crt"), os.path.join(sadir, "ca.crt"))
    os.chmod(sadir, 0o755)
    for f in os.listdir(sadir):
        os.chmod(os.path.join(sadir, f), 0o644)
    return sadir


def container_env(test, c, ns):
    """podman's --env for the container's env: values, and the downward
    API's metadata.namespace."""
    env = []
    for e in c["env"]:
        if "value" in e:
            env += ["--env", "%s=%s" % (e["name"], e["value"])]
        else:
            test.assertEqual(e["valueFrom"]["fieldRef"]["fieldPath"], "metadata.namespace")
            env += ["--env", "%s=%s" % (e["name"], ns)]
    return env


PULL_SECRET = '{"auths":{"cloud.openshift.com":{"auth":"dXNlcjpwYXNzd29yZAo=","email":"r@rr.com"}}}'


class CapiDeployment(unittest.TestCase):
    """packaging/capi's Deployment on a management cluster that has Cluster
    API and nothing of Hive or the assisted-service operator."""

    def setUp(self):
        if os.environ.get("CRADLE_TEST_KUBECONFIG"):
            self.skipTest("needs the test kube-apiserver's control API (/tokens) for the service account's token")
        sys.path.insert(0, os.path.join(SRC, "tests", "packaging"))
        sys.path.insert(0, os.path.join(SRC, "tests", "capi"))
        import capicore
        import kubeapi_harness
        import test_capi_repository as repo
        from refclient import RefService
        self.capicore, self.repo = capicore, repo
        self.tmp = tempfile.mkdtemp(prefix="capi-deploy-", dir=WORK)
        self.svc = RefService(workdir=self.tmp).start()
        self.addCleanup(self.svc.stop)
        values = {"CRADLE_SERVICE_URL": self.svc.url, "CRADLE_HUB_IMAGE": IMAGE}
        self.objects = repo.objects("bootstrap-cradle", values) + repo.objects("control-plane-cradle", values)
        # CAPI core's and Metal3's CRDs from the reference, CAPOA's kinds from the components
        crds = capicore.write_crds(os.path.join(self.tmp, "capi-crds"),
                                   [f for f in capicore.crd_files() if os.sep + "capoa" + os.sep not in f])
        args = []
        for f in crds:
            args += ["--apply", f]
        for i, o in enumerate(d for d in self.objects if d["kind"] == "CustomResourceDefinition"):
            path = os.path.join(self.tmp, "components-crd-%d.yaml" % i)
            with open(path, "w") as f:
                yaml.safe_dump(o, f)
            args += ["--apply", path]
        self.kube = kubeapi_harness.Server(args, state_dir=os.path.join(self.tmp, "kubeapi")).start(timeout=180)
        self.addCleanup(self.kube.stop)

    def create(self, path, body):
        r = self.kube.post(path, body)
        self.assertEqual(r.status, 201, (path, r.text))
        return r.json

    def install_components(self):
        """What clusterctl init creates besides the CRDs, of what the test
        kube-apiserver serves: the Namespaces. It serves no RBAC kinds and
        authorizes everything; the components' rules are held against the
        requests the provider made instead (test_provider_...)."""
        for o in self.objects:
            if o["kind"] == "Namespace":
                r = self.kube.post(self.repo.API_PATHS["Namespace"], o)
                self.assertIn(r.status, (201, 409), r.text)

    def test_provider_runs_under_its_rbac_alone(self):
        self.install_components()
        dep = [o for o in self.objects if o["kind"] == "Deployment"][0]
        c = [x for x in dep["spec"]["template"]["spec"]["containers"] if x["name"] == "manager"][0]
        self.assertEqual(c["image"], IMAGE)
        pod_ns = dep["metadata"]["namespace"]
        sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
        user = "system:serviceaccount:%s:%s" % (pod_ns, sa)
        token = "sa-" + uuid.uuid4().hex
        self.kube.ctl("POST", "/tokens", {"token": token, "user": user,
                                          "groups": ["system:serviceaccounts", "system:authenticated"]})
        sadir = service_account_files(self.kube, self.tmp, pod_ns, token)
        env = container_env(self, c, pod_ns)
        pod = Pod(self, self.kube, dep, c, sadir, env, [])
        try:
            pod.wait_probes()
            lease_id = [a.split("=", 1)[1] for a in c["args"] if a.startswith("--leader-election-id=")][0]
            lease = "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (pod_ns, lease_id)
            wait_for(lambda: self.kube.get(lease).status == 200, 60, "the leader-election Lease")
            self.cluster_of_three(pod)
        finally:
            rc, text = pod.stop()
        self.assertEqual(rc, 0, text[-3000:])
        self.assertNotIn(token, text)
        # every request it made, granted by the rules its service account is bound to
        dep, cluster_rules, ns_rules = self.repo.service_account_rules(self.objects)
        log = self.kube.ctl("GET", "/requests")
        made = {(r["group"], r["resource"] + ("/" + r["subresource"] if r.get("subresource") else ""),
                 r["verb"], r.get("namespace") == pod_ns)
                for r in log["requests"] if r.get("user") == user and r.get("resource")}
        self.assertTrue(any(res == "openshiftassistedcontrolplanes" for _, res, _, _ in made), made)
        refused = sorted((g, res, verb) for g, res, verb, own in made
                         if not self.repo.granted(cluster_rules + (ns_rules if own else []), g, res, verb))
        self.assertEqual(refused, [], "requests the components' RBAC would refuse")

    def cluster_of_three(self, pod):
        C = self.capicore
        ns = "capi-" + RUN_ID
        self.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self.create("/api/v1/namespaces/%s/secrets" % ns, {
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "pull-secret"}, "stringData": {".dockerconfigjson": PULL_SECRET}})
        infra = "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/%s/" % ns
        self.create(infra + "metal3clusters", {
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3Cluster",
            "metadata": {"name": "spoke"},
            "spec": {"controlPlaneEndpoint": {"host": "198.51.100.40", "port": 6443}}})
        self.create(infra + "metal3machinetemplates", {
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3MachineTemplate",
            "metadata": {"name": "spoke-controlplane"},
            "spec": {"template": {"spec": {"image": {
                "url": "http://192.0.2.1/rhcos.qcow2", "checksum": "http://192.0.2.1/rhcos.qcow2.sha256sum",
                "checksumType": "sha256", "format": "qcow2"}}}}})
        cp_path = "/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/%s/openshiftassistedcontrolplanes" % ns
        cp_name = "cp-" + RUN_ID
        self.create(cp_path, {
            "apiVersion": "controlplane.cluster.x-k8s.io/v1alpha3", "kind": "OpenshiftAssistedControlPlane",
            "metadata": {"name": cp_name, "labels": {C.CLUSTER_NAME_LABEL: "spoke"}},
            "spec": {"distributionVersion": "4.13.18", "replicas": 3,
                     "config": {"baseDomain": "lab.home", "clusterName": "spoke",
                                "apiVIPs": ["198.51.100.40"], "ingressVIPs": ["198.51.100.41"],
                                "pullSecretRef": {"name": "pull-secret"}},
                     "openshiftAssistedConfigSpec": {"cpuArchitecture": "x86_64"},
                     "machineTemplate": {"infrastructureRef": {
                         "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3MachineTemplate",
                         "name": "spoke-controlplane"}}}})
        self.create("/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/clusters" % ns, {
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "spoke"},
            "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["10.128.0.0/14"]},
                                        "services": {"cidrBlocks": ["172.30.0.0/16"]}},
                     "controlPlaneRef": C.ref("controlplane.cluster.x-k8s.io", "OpenshiftAssistedControlPlane",
                                              cp_name),
                     "infrastructureRef": C.ref("infrastructure.cluster.x-k8s.io", "Metal3Cluster", "spoke")}})
        core = C.CapiCore(C.Kube(self.kube.path("kubeconfig")), ns).start()
        try:
            def registered():
                pod.alive()
                ann = self.kube.get(cp_path + "/" + cp_name).json["metadata"].get("annotations") or {}
                return ann.get("cradle.agent-install.openshift.io/cluster-id") and \
                    ann.get("cradle.agent-install.openshift.io/infra-env-id")
            wait_for(registered, 120, "the control plane's cluster and infra-env registered")
            ann = self.kube.get(cp_path + "/" + cp_name).json["metadata"]["annotations"]
            st, cluster = self.svc.api("GET", "/v2/clusters/%s" %
                                       ann["cradle.agent-install.openshift.io/cluster-id"])
            self.assertEqual((st, cluster["name"], cluster["base_dns_domain"]), (200, "spoke", "lab.home"))

            def machines_with_data():
                pod.alive()
                items = self.kube.get("/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/machines" % ns).json["items"]
                return len(items) == 3 and all((m["spec"].get("bootstrap") or {}).get("dataSecretName")
                                               for m in items) and items
            machines = None
            wait_for(lambda: bool(machines_with_data()), 180, "three Machines with their data Secrets")
            machines = machines_with_data()
            for m in machines:
                name = m["spec"]["bootstrap"]["dataSecretName"]
                secret = self.kube.get("/api/v1/namespaces/%s/secrets/%s" % (ns, name)).json
                self.assertEqual(secret["type"], "cluster.x-k8s.io/secret")
                self.assertEqual(base64.b64decode(secret["data"]["format"]), b"ignition")
            m3 = self.kube.get(infra + "metal3machines").json["items"]
            self.assertEqual(len(m3), 3)
            self.assertEqual(core.errors, [])
        finally:
            core.stop()


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
