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
  the image's entrypoint: no command, --help (the installer's), a program by path

The installer role (IMAGE --role ...) installing for real is
tests/installer/test_install_step.py's TestPodman, which builds this same
image when its binary is static (meson test "image-install-step").

Environment: CRADLE_BINARY, CRADLE_SOURCE_ROOT.
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import uuid

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
sys.path.insert(0, os.path.join(SRC, "tests", "agent"))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
CRADLE = os.environ.get("CRADLE_BINARY", "")
BUILD_IMAGE = os.path.join(SRC, "packaging", "containers", "build-image.sh")
IE = "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"
TOKEN = "images-test-t0ken"
PROGRAMS = ["agent", "installer", "next_step_runner", "inventory", "free_addresses", "disk_speed_check",
            "logs_sender", "cp"]


def skip(reason):
    print("SKIP: %s" % reason)
    sys.exit(77)


def is_static(path):
    if not path or not os.access(path, os.X_OK):
        return False
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return False
    out = subprocess.run(["readelf", "-lW", path], stdout=subprocess.PIPE, text=True).stdout
    return "program interpreter" not in out


if not is_static(CRADLE):
    skip("CRADLE_BINARY (%s) is not a static executable: the image is FROM scratch (-Dstatic=true)" % CRADLE)

from podmanlab import PodmanLab, Unavailable  # noqa: E402
from proctools import LoggedProcess  # noqa: E402
from refclient import RefService  # noqa: E402
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
        self.assertEqual(cfg["Cmd"], ["help"])
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
        # no command: CMD ["help"], the verbs
        p = LAB.podman("run", "--rm", IMAGE)
        self.assertIn("Usage: cradle VERB", p.stdout)
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


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
