#!/usr/bin/python3
"""cradle's container image (packaging/containers/) with a real podman,
answering assisted-service's and the Go agent's exact command lines.

The image is built from the static binary under test (CRADLE_BINARY; the
test skips when that is not a static executable) with build-image.sh, under
a unique tag in a podman storage of the test's own (tests/helpers/
podmanlab.py). Everything runs inside the network namespace in-netns.sh
made, against the reference service (tests/service/) on its loopback; the
host paths the upstream command lines name (/usr/local/bin, /etc/pki,
/run/media, the journald socket) are private layers of the test's mount
namespace, so the lines run exactly as the discovery ignition and the Go
agent write them:

  AGENT_DOCKER_IMAGE (discovery ignition, observed/04 and notes/agent.md §2)
    podman run --privileged --rm -v /usr/local/bin:/hostbin IMAGE cp /usr/bin/agent /hostbin
    podman run --pull=never --privileged --rm -v /usr/local/bin:/hostbin IMAGE cp /usr/bin/agent /hostbin
    /usr/local/bin/agent --url URL --infra-env-id ID --agent-version IMAGE --insecure=true
  the Go agent's podman mode (notes/agent.md §2.1), through cradle's
  --step-runner=podman: podman run --rm -ti ... --name next-step-runner IMAGE next_step_runner ...
  the free_addresses step's container (notes/agent.md §6)
  CONTROLLER_IMAGE: the controller's Job (notes/controller.md §1.2) as the
    kubelet runs its pod, from the manifests cradle's bootstrap renders
    (tests/installer/render-controller-manifests): no command and no args
    (the image's entrypoint and CMD), the Job's environment from its
    ConfigMap, the token file of its Secret volume, its host mounts, host
    network and hostAliases; against the reference service and the test
    kube-apiserver (the single node's bootstrap kubeconfig, the one
    file-based way in): the ready Event, then exit 0 once the cluster is gone
  the image's entrypoint: no command (the controller), --help (the
    installer's), a program by path

The installer role (IMAGE --role ...) installing for real is
tests/installer/test_install_step.py's TestPodman, which builds this same
image when its binary is static (meson test "image-install-step").

Environment: CRADLE_BINARY, CRADLE_SOURCE_ROOT, CRADLE_BUILD_ROOT (for
render-controller-manifests), CRADLE_TEST_KUBECONFIG (optional).
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import unittest
import urllib.parse
import uuid

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
sys.path.insert(0, os.path.join(SRC, "tests", "agent"))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, os.path.join(SRC, "tests", "installer"))
sys.path.insert(0, os.path.join(SRC, "tests", "kubeapi"))
sys.path.insert(0, os.path.join(SRC, "tests", "controller"))
CRADLE = os.environ.get("CRADLE_BINARY", "")
BUILD_IMAGE = os.path.join(SRC, "packaging", "containers", "build-image.sh")
RENDER = os.path.join(os.environ.get("CRADLE_BUILD_ROOT", os.path.join(SRC, "build")), "tests", "installer",
                      "render-controller-manifests")
IE = "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"
TOKEN = "images-test-t0ken"
PROGRAMS = ["agent", "installer", "next_step_runner", "inventory", "free_addresses", "disk_speed_check",
            "logs_sender", "cp", "assisted-installer-controller"]


def skip(reason):
    print("SKIP: %s" % reason)
    sys.exit(77)


from podmanlab import PodmanLab, Unavailable, is_static  # noqa: E402
if not is_static(CRADLE):
    skip("CRADLE_BINARY (%s) is not a static executable: the image is FROM scratch (-Dstatic=true)" % CRADLE)

from proctools import LoggedProcess  # noqa: E402
from refclient import HubClient, RefService  # noqa: E402
from test_agent import wait_for  # noqa: E402

WORK = tempfile.mkdtemp(prefix="cradle-images-")
RUN_ID = uuid.uuid4().hex[:10]
IMAGE = "localhost/cradle-test-%s:%s" % (RUN_ID, RUN_ID)
try:
    LAB = PodmanLab(WORK)
except Unavailable as e:
    shutil.rmtree(WORK, ignore_errors=True)
    skip(str(e))


def tearDownModule():
    LAB.cleanup()
    shutil.rmtree(WORK, ignore_errors=True)


def setUpModule():
    # the host paths the upstream lines name, private to this test
    LAB.overlay("/usr/local/bin")
    LAB.overlay("/etc")
    os.makedirs("/etc/pki", exist_ok=True)
    LAB.overlay("/run")
    os.makedirs("/run/media", exist_ok=True)
    LAB.journal_sink("/run/systemd/journal/socket")
    # the CNI state of the containers without --net=host (the cp lines)
    LAB.overlay("/var/lib/cni")
    p = subprocess.run([BUILD_IMAGE, "--save", LAB.path("image.tar"), CRADLE, IMAGE], env=LAB.env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise AssertionError("build-image.sh failed:\n" + p.stdout)


class Images(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="svc-", dir=WORK)
        scenario = {"settings": {"next_instruction_seconds": 1, "min_disk_size_gb": 1, "min_cpu_cores": 1,
                                 "min_ram_mib": 256,
                                 # one image for both roles (packaging/containers/README.md)
                                 "agent_image": IMAGE, "installer_image": IMAGE}}
        self.svc = RefService(scenario=scenario, token=TOKEN, workdir=self.tmp)
        self.svc.start()
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.stop(60)
            a.log.close()
        self.svc.stop()
        LAB.podman("rm", "--force", "--time", "0", "next-step-runner", check=False)
        for f in ("/usr/local/bin/agent",):
            if os.path.exists(f):
                os.unlink(f)

    def copy_out(self, pull_never=False):
        """The discovery ignition's ExecStartPre, exactly."""
        argv = ["podman", "run"] + (["--pull=never"] if pull_never else []) + \
            ["--privileged", "--rm", "-v", "/usr/local/bin:/hostbin", IMAGE, "cp", "/usr/bin/agent", "/hostbin"]
        p = subprocess.run(argv, env=LAB.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)

    def start_agent(self, env=None):
        """The discovery ignition's ExecStart, exactly."""
        # its log on stderr (the journald socket here is a sink)
        e = dict(os.environ, PULL_SECRET_TOKEN=TOKEN, CRADLE_LOG_TARGET="stderr", HTTP_PROXY="", http_proxy="", HTTPS_PROXY="",
                 https_proxy="", NO_PROXY="", no_proxy="")
        e.update(env or {})
        a = LoggedProcess(["/usr/local/bin/agent", "--url", self.svc.url, "--infra-env-id", IE, "--agent-version",
                           IMAGE, "--insecure=true"], e, os.path.join(WORK, "agent-%s.log" % uuid.uuid4().hex[:8]))
        self.agents.append(a)
        return a

    def image_binary(self):
        with tarfile.open(LAB.path("image.tar")) as t:
            index = json.load(t.extractfile("index.json"))
            manifest = json.load(t.extractfile("blobs/sha256/" + index["manifests"][0]["digest"][7:]))
            layers = manifest["layers"]
            self.assertEqual(len(layers), 1, "one layer: the rootfs")
            with tarfile.open(fileobj=t.extractfile("blobs/sha256/" + layers[0]["digest"][7:])) as layer:
                members = {m.name.lstrip("./").rstrip("/"): m for m in layer.getmembers()}
                data = layer.extractfile(members["usr/bin/cradle"]).read()
        return members, data, manifest

    def test_image_holds_cradle_and_its_names(self):
        members, data, _ = self.image_binary()
        files = sorted(n for n, m in members.items() if m.isfile())
        self.assertEqual(files, ["usr/bin/cradle"])
        for name in PROGRAMS:
            self.assertTrue(members["usr/bin/" + name].issym(), name)
            self.assertEqual(members["usr/bin/" + name].linkname, "cradle")
        self.assertEqual(members["tmp"].mode & 0o7777, 0o1777)
        cfg = json.loads(LAB.podman("image", "inspect", IMAGE).stdout)[0]["Config"]
        self.assertEqual(cfg["Entrypoint"], ["/usr/bin/cradle", "entrypoint"])
        # no arguments at all (the controller's Job gives none): the controller
        self.assertEqual(cfg["Cmd"], ["/usr/bin/assisted-installer-controller"])
        size = int(LAB.podman("image", "inspect", "--format", "{{.Size}}", IMAGE).stdout)
        print("image %s: %d bytes, cradle %d bytes stripped" % (IMAGE, size, len(data)), file=sys.stderr)

    def test_agent_image_contract(self):
        """cp out of the image (both forms), then the agent on the host:
        registered with the image as its version, the inventory answered."""
        _, data, _ = self.image_binary()
        self.copy_out(pull_never=True)
        with open("/usr/local/bin/agent", "rb") as f:
            self.assertEqual(f.read(), data, "the copy is the image's cradle, through the link")
        self.assertTrue(os.access("/usr/local/bin/agent", os.X_OK))
        os.unlink("/usr/local/bin/agent")
        self.copy_out()
        a = self.start_agent()
        regs = wait_for(lambda: [r for r in self.svc.requests(operation="v2RegisterHost") if r["status"] == 201],
                        timeout=120, what="the registration")
        self.assertEqual(regs[0]["body"]["discovery_agent_version"], IMAGE)
        wait_for(lambda: [r for r in self.svc.requests(operation="v2PostStepReply")
                          if r["body"].get("step_type") == "inventory" and r["status"] == 204],
                 timeout=120, what="the inventory reply")
        # agent.service restarts run the copy again: over the running agent
        self.copy_out()
        self.assertTrue(a.proc.poll() is None, a.output())
        self.assertEqual(a.stop(60), 0, a.output())

    def test_next_step_runner_container(self):
        """The Go agent's podman mode: the agent on the host registers and
        runs "IMAGE next_step_runner ..." with the upstream line; the
        container polls and answers the steps."""
        self.copy_out()
        a = self.start_agent({"CRADLE_STEP_RUNNER": "podman", "CONTAINERS_CONF": LAB.conf,
                              "CONTAINERS_STORAGE_CONF": LAB.storage})
        regs = wait_for(lambda: [r for r in self.svc.requests(operation="v2RegisterHost") if r["status"] == 201],
                        timeout=120, what="the registration")
        host_id = regs[0]["body"]["host_id"]
        wait_for(lambda: [r for r in self.svc.requests(operation="v2PostStepReply")
                          if r["body"].get("step_type") == "inventory" and r["status"] == 204],
                 timeout=300, what="the inventory reply from the container")
        ps = LAB.podman("ps", "--format", "{{.Names}} {{.Image}} {{.Command}}").stdout
        self.assertIn("next-step-runner %s" % IMAGE, ps)
        out = a.output()
        line = [ln for ln in out.splitlines() if "starting the next step runner: " in ln][0]
        cmd = line.split("starting the next step runner: ", 1)[1].rstrip('"')
        self.assertTrue(cmd.startswith(
            "podman run --rm -ti --privileged --pid=host --uts=host --net=host --pids-limit=0 -v /dev:/dev:rw "
            "-v /opt:/opt:rw -v /run/systemd/journal/socket:/run/systemd/journal/socket -v /var/log:/var/log:rw "
            "-v /run/media:/run/media:rw -v /etc/pki:/etc/pki "), cmd)
        self.assertIn(" --name next-step-runner %s next_step_runner --url %s --infra-env-id %s --host-id %s "
                      "--agent-version %s --insecure=true" % (IMAGE, self.svc.url, IE, host_id, IMAGE), cmd)
        self.assertEqual(a.stop(60), 0, out)

    def test_free_addresses_container(self):
        """The free-network-addresses step's container line (notes/agent.md
        §6), on the namespace's 198.51.100.10/24 link."""
        p = LAB.podman("run", "--privileged", "--net=host", "--rm", "--quiet", "--name",
                       "free_addresses_scanner-" + RUN_ID, "-v", "/var/log:/var/log", "-v",
                       "/run/systemd/journal/socket:/run/systemd/journal/socket", IMAGE, "free_addresses",
                       '["198.51.100.8/30"]')
        res = json.loads(p.stdout)
        self.assertEqual(res[0]["network"], "198.51.100.8/30")
        self.assertNotIn("198.51.100.10", res[0]["free_addresses"], "the namespace's own address is in use")

    def test_entrypoint(self):
        # no command: CMD, the controller, which wants its Job's variables
        p = LAB.podman("run", "--rm", IMAGE, check=False)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("assisted-installer-controller: required key CLUSTER_ID missing value", p.stderr)
        p = LAB.podman("run", "--rm", IMAGE, "help")
        self.assertIn("Usage: cradle VERB", p.stdout)
        # upstream's entrypoint path, as "oc debug" or a pod spec may name it
        p = LAB.podman("run", "--rm", "--entrypoint=/usr/bin/assisted-installer-controller", IMAGE, "--help")
        self.assertTrue(p.stdout.startswith("Usage of assisted-installer-controller:"), p.stdout)
        # flags first: the installer's, as upstream's ENTRYPOINT /usr/bin/installer
        p = LAB.podman("run", "--rm", IMAGE, "--help")
        self.assertTrue(p.stdout.startswith("Usage of installer:"), p.stdout)
        p = LAB.podman("run", "--rm", IMAGE, "--role", "master", "--no-such-flag", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("flag provided but not defined: -no-such-flag", p.stderr)
        # a program by path, and with the entrypoint cleared, by PATH
        p = LAB.podman("run", "--rm", IMAGE, "/usr/bin/next_step_runner", "--help")
        self.assertTrue(p.stdout.startswith("Usage of next_step_runner:"), p.stdout)
        p = LAB.podman("run", "--rm", "--entrypoint=", IMAGE, "installer", "--help")
        self.assertTrue(p.stdout.startswith("Usage of installer:"), p.stdout)
        # anything else is refused as the Go agent refuses an unknown name
        p = LAB.podman("run", "--rm", IMAGE, "sh", "-c", "true", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("unknown binary name sh", p.stderr)


def job_container_args(manifests, workdir):
    """podman run's arguments for the rendered Job's container, as the
    kubelet runs it: the command and args of the spec (none: the image's
    entrypoint and CMD), env values and ConfigMap keys (an optional key that
    is absent sets nothing), each Secret item a file of its mode in a
    read-only mount, each hostPath bind-mounted, hostNetwork, hostAliases."""
    objs = {m["object"]["kind"]: m["object"] for m in manifests}
    cm, secret = objs["ConfigMap"]["data"], objs["Secret"]["data"]
    spec = objs["Job"]["spec"]["template"]["spec"]
    c = spec["containers"][0]
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    args = ["--net=host"] if spec.get("hostNetwork") else []
    for alias in spec.get("hostAliases", []):
        args += ["--add-host=%s:%s" % (name, alias["ip"]) for name in alias["hostnames"]]
    for e in c.get("env", []):
        if "value" in e:
            args += ["--env", "%s=%s" % (e["name"], e["value"])]
            continue
        ref = e["valueFrom"]["configMapKeyRef"]
        assert ref["name"] == objs["ConfigMap"]["metadata"]["name"], e
        if ref["key"] in cm:
            args += ["--env", "%s=%s" % (e["name"], cm[ref["key"]])]
        else:
            assert ref.get("optional"), "required key %s absent" % ref["key"]
    for mount in c.get("volumeMounts", []):
        v = volumes[mount["name"]]
        if "hostPath" in v:
            args += ["-v", "%s:%s" % (v["hostPath"]["path"], mount["mountPath"])]
        else:
            assert v["secret"]["secretName"] == objs["Secret"]["metadata"]["name"], v
            d = os.path.join(workdir, "secret-" + mount["name"])
            os.makedirs(d)
            for item in v["secret"]["items"]:
                fd = os.open(os.path.join(d, item["path"]), os.O_WRONLY | os.O_CREAT, item.get("mode", 0o644))
                with os.fdopen(fd, "wb") as f:
                    f.write(base64.b64decode(secret[item["key"]]))
            args += ["-v", "%s:%s:ro" % (d, mount["mountPath"])]
    if "command" in c:
        args.append("--entrypoint=" + json.dumps(c["command"]))
    return args + [c["image"]] + c.get("args", [])


class ControllerJob(unittest.TestCase):
    """CONTROLLER_IMAGE: the Job cradle's bootstrap renders, run from this
    image as the kubelet runs its pod, answers as the controller."""

    @classmethod
    def setUpClass(cls):
        try:
            import yaml  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("python3-yaml is not installed (tools/deps --test)")
        if not os.access(RENDER, os.X_OK):
            raise AssertionError("%s is not built (meson compile)" % RENDER)
        import kubelab
        from test_controller import OPENSHIFT_CRDS
        cls.tmp = tempfile.mkdtemp(prefix="job-", dir=WORK)
        cls.kube = kubelab.Cluster().start()
        import kubeapi_harness
        for crd in OPENSHIFT_CRDS:
            for d in kubeapi_harness.yaml_docs(crd):
                r = cls.kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", d)
                assert r.status in (201, 409), r
                cls.kube.wait_established(d["metadata"]["name"])
        r = cls.kube.request("POST", "/apis/config.openshift.io/v1/proxies",
                             {"apiVersion": "config.openshift.io/v1", "kind": "Proxy",
                              "metadata": {"name": "cluster"}, "spec": {}})
        assert r.status in (201, 409), r
        # bootkube makes the namespace from the Namespace manifest
        cls.kube.ensure_namespace("assisted-installer")
        cls.svc = RefService(token=TOKEN, workdir=cls.tmp).start()
        cls.hub = HubClient(cls.svc)

    @classmethod
    def tearDownClass(cls):
        cls.svc.stop()
        cls.kube.stop()

    def test_job_runs_the_controller(self):
        st, cl = self.hub.register_cluster(name="job-" + RUN_ID)
        self.assertEqual(st, 201, cl)
        cid = cl["id"]
        svc = urllib.parse.urlsplit(self.svc.url)
        # a single node: its Job mounts the bootstrap secrets, whose
        # kubeconfig is the controller's way to the test kube-apiserver (a
        # pod of a real cluster has its service account instead); the
        # service by the name the Job's hostAliases give it
        job_input = {"cluster_id": cid, "inventory_url": "%s://assisted-api.local.openshift.io:%d"
                                                         % (svc.scheme, svc.port or 443),
                     "skip_cert_verification": True, "control_plane_count": 1, "pull_secret_token": TOKEN,
                     "controller_image": IMAGE, "openshift_version": "4.16.3",
                     "service_ips": socket.gethostbyname(svc.hostname)}
        out = subprocess.run([RENDER, json.dumps(job_input)], stdout=subprocess.PIPE, check=True, text=True).stdout
        manifests = json.loads(out)
        job = [m["object"] for m in manifests if m["object"]["kind"] == "Job"][0]
        container = job["spec"]["template"]["spec"]["containers"][0]
        self.assertNotIn("command", container)
        self.assertNotIn("args", container)
        # the host paths the Job mounts, private to this test (setUpModule's
        # layers over /etc and /run)
        os.makedirs("/etc/kubernetes/bootstrap-secrets", exist_ok=True)
        with open("/etc/kubernetes/bootstrap-secrets/kubeconfig", "w") as f:
            f.write(self.kube.kubeconfig_text())
        os.makedirs("/run/NetworkManager", exist_ok=True)
        for path in ("/run/NetworkManager/resolv.conf", "/etc/resolv.conf"):
            if not os.path.exists(path):
                open(path, "w").close()
        argv = ["podman", "run", "--rm", "--name", "assisted-installer-controller-" + RUN_ID] + \
            job_container_args(manifests, self.tmp)
        log = open(os.path.join(self.tmp, "controller.log"), "w+")
        proc = subprocess.Popen(argv, env=LAB.env, stdout=log, stderr=subprocess.STDOUT)

        def output():
            log.flush()
            with open(log.name) as f:
                return f.read()
        try:
            path = "/api/v1/namespaces/assisted-installer/events/AssistedControllerIsReady"
            wait_for(lambda: "Sending ready event" in output(), timeout=120, what="the ready event")
            ev = self.kube.ok("GET", path).json
            self.assertEqual(ev["reason"], "AssistedControllerIsReady")
            text = output()
            self.assertIn("Start running Assisted-controller. Configuration is:", text)
            self.assertIn("cluster-id=%s inventory-url=%s openshift-version=4.16.3 skip-cert-verification=true"
                          % (cid, job_input["inventory_url"]), text)
            self.assertIn("control-plane-count=1", text)
            self.assertIn("pull-secret-token=<SECRET>", text)
            self.assertNotIn(TOKEN, text)
            # the service was reached by its alias, with the token of the file
            if not self.svc.real:
                gets = [r for r in self.svc.requests(operation="v2GetCluster") if cid in r.get("path", "")]
                self.assertTrue(gets and all(r["status"] == 200 for r in gets), gets)
            # the cluster goes: the installation check ends the Job (exit 0)
            st, body = self.hub.call("DELETE", "/v2/clusters/%s" % cid)
            self.assertEqual(st, 204, body)
            self.assertEqual(proc.wait(180), 0, output()[-3000:])
        finally:
            if proc.poll() is None:
                LAB.podman("rm", "--force", "--time", "0", "assisted-installer-controller-" + RUN_ID, check=False)
                proc.wait(60)
            log.close()


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
