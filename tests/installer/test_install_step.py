#!/usr/bin/python3
"""The agent's install step end to end: the cradle agent registers with the
reference service, the service sends it the install step (observed/08
shape), and the agent runs the installer

  - in-process (cradle's own installer, dry run), against a loop device;
  - with podman, for real: an image holding cradle, built with podman build,
    run with the upstream "podman run ..." command line;
  - and fails with exit 2 when the installer image cannot be pulled.

Runs inside a network namespace (tests/helpers/in-netns.sh). The podman test
needs more of that namespace's mount namespace (all of it private to the
test): the cgroup hierarchies mounted again under the netns' fresh /sys,
/etc/pki and /run/systemd/journal/socket (which the upstream command binds)
made through overlays over /etc and /run/systemd, with a socket of the test
standing in for journald; and a PID namespace whose PID 1 is the agent,
because this machine's real PID 1 cannot be entered: the installer in its
--pid=host container enters PID 1's namespaces, as it would on a host.
Podman uses runc, a test-owned containers.conf and a storage under the test's
directory. The image is FROM scratch: it holds the static cradle when
CRADLE_STATIC_BINARY names one (a -Dstatic=true build of the same tree, see
packaging/static/), else the test's own (sanitized, dynamic) binary and the
libraries ldd lists, which the test says.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab as L  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from proctools import LoggedProcess  # noqa: E402

L.require_basics()

AGENT_IMAGE = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
LOCAL_IMAGE = "localhost/cradle-installer:test"
FAST = ["--interval=1", "--transport-retry-delay=0.05", "--backoff-max-elapsed=3"]


def scenario(installer_image=None):
    s = {
        "settings": {"min_disk_size_gb": 1, "next_instruction_seconds": 1},
        "clusters": [{"id": L.CL, "control_plane_count": 3, "machine_networks": ["198.51.100.0/24"]}],
        "infra_envs": [{"id": L.IE, "cluster_id": L.CL}],
        "hosts": [{"id": L.H2, "infra_env_id": L.IE, "inventory": L.inventory_for(2), "role": "master",
                   "bootstrap": True}],
    }
    if installer_image:
        s["settings"]["installer_image"] = installer_image
    return s


def wait_for(pred, timeout=300, what="condition", alive=None):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        if alive is not None and alive.poll() is not None:
            raise AssertionError("the agent exited (%s) while waiting for %s" % (alive.returncode, what))
        time.sleep(0.1)
    raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))


class AgentRun(LoggedProcess):
    def __init__(self, lab, svc, extra_args, env, wrapper=()):
        self.lab = lab
        link = lab.path("agent")
        if not os.path.exists(link):
            os.symlink(L.CRADLE, link)
        argv = list(wrapper) + [link, "--url", svc.url, "--infra-env-id", L.IE, "--agent-version", AGENT_IMAGE,
                                "--insecure=true", "--dry-run", "--force-id", L.H1, "--force-hostname", "master-1",
                                "--forced-ipv4", "198.51.100.11"] + FAST + list(extra_args)
        # its own process group: stop() reaches a wrapper's children too
        LoggedProcess.__init__(self, argv, env, lab.path("agent.log"))
        lab.files.append(self.log)


def installer_env(lab, **extra):
    """The installer's cradle options, through the environment the agent
    passes on (so the agent's command line stays the upstream one)."""
    e = dict(os.environ)
    for d in ("opt-install-dir", "var-log", "mnt", "journal"):
        os.makedirs(lab.path(d), exist_ok=True)
    e.update({
        "PATH": L.STAND_INS + ":" + e.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
        "PULL_SECRET_TOKEN": L.TOKEN,
        "CRADLE_LOG_TARGET": "stderr",
        "CRADLE_HOST_EXEC": "direct",
        "CRADLE_INSTALL_DIR": lab.path("opt-install-dir"),
        "CRADLE_INSTALLER_LOG_FILE": lab.path("var-log", "assisted-installer.log"),
        "CRADLE_LOGS_DIR": lab.path("var-log"),
        "CRADLE_JOURNAL_DIR": lab.path("journal"),
        "CRADLE_MOUNT_DIR": lab.path("mnt"),
        "CRADLE_REGISTRY_DIR": lab.path("no-registry"),
        "CRADLE_EFI_DIR": lab.path("no-efi"),
        "CRADLE_RETRY_DELAY": "0.01",
        "CRADLE_RETRY_MAX_DELAY": "0.05",
        "CRADLE_POLL_INTERVAL": "0.1",
        "CRADLE_WRITE_RETRY_DELAY": "0.05",
        "CRADLE_COMMAND_RETRY_DELAY": "0.05",
        "CRADLE_MC_FETCH_TIMEOUT": "1",
        "STANDIN_LOG": lab.path("standin.jsonl"),
        "STANDIN_IMAGE": lab.image,
        "TZ": "UTC",
    })
    e.update(extra)
    return e


FD_PROBE = os.path.join(L.SRC, "tests", "installer", "fd-probe")


def probe_dir(lab, *names):
    """A directory, to put first on PATH, where fd-probe stands for names."""
    d = lab.path("probe-bin")
    os.makedirs(d, exist_ok=True)
    for n in names:
        os.symlink(FD_PROBE, os.path.join(d, n))
    return d


def probe_records(lab):
    path = lab.path("fd-probe.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def live_service_sockets(rec, proc_fds, port):
    """The socket inodes among proc_fds that are ESTABLISHED TCP connections
    to port, from the probe's view of /proc/net/tcp{,6} at that moment."""
    inodes = {t[1:-1] for t in (v[len("socket:"):] for v in proc_fds.values()) if t.startswith("[")}
    live = set()
    for row in rec["tcp"]:
        # sl local rem st tx:rx tr:when retrnsmt uid timeout inode
        if row[3] == "01" and int(row[2].rsplit(":", 1)[1], 16) == port and row[9] in inodes:
            live.add(row[9])
    return live


class Base(L.ServiceCase):
    installer_image = None

    def assert_children_got_only_what_they_were_given(self, agent, rec, via):
        """rec: the probe's record from a program the agent started (through
        `via`); the agent then held a live service connection, and neither
        the program nor any process between it and the agent holds any of the
        agent's descriptors."""
        chain = rec["ancestors"]
        pids = [a["pid"] for a in chain]
        self.assertIn(agent.proc.pid, pids, "the probe does not descend from the agent: %s" % chain)
        agent_fds = chain[pids.index(agent.proc.pid)]["fds"]
        port = int(self.svc.url.rsplit(":", 1)[1])
        live = live_service_sockets(rec, agent_fds, port)
        self.assertTrue(live, "the agent held no live service connection while %s ran: %s" % (via, agent_fds))
        self.assertEqual(sorted(rec["fds"]), ["0", "1", "2"], "%s: the program got %s" % (via, rec["fds"]))
        # sockets and pipes name their inode; anon_inode:[eventfd] and the like do not
        theirs = {v for v in agent_fds.values() if v.startswith(("socket:", "pipe:"))}
        for a in chain[:pids.index(agent.proc.pid)]:
            # their standard streams are the pipes the agent reads: given
            leaked = theirs & {v for k, v in a["fds"].items() if k not in ("0", "1", "2")}
            self.assertEqual(leaked, set(), "%s (%s) holds the agent's %s" % (a["comm"], a["pid"], leaked))

    @classmethod
    def service_scenario(cls):
        return scenario(cls.installer_image)

    def install_when_registered(self, agent, dev):
        wait_for(lambda: any(h["id"] == L.H1 and h.get("inventory") for h in self.svc.hosts()),
                 what="the agent's registration and inventory", alive=agent.proc)
        self.svc.set_host(L.H1, role="master", installation_disk_id=dev, installation_disk_path=dev,
                          ignition=L.host_ignition("node-1"))
        self.svc.install(L.CL, force=True, bootstrap_host_id=L.H2)

    def install_step(self):
        steps = [s for s in self.svc.host(L.H1)["_issued_steps"].values()]
        self.assertIn("install", steps)
        for r in self.svc.requests(operation="v2GetNextSteps"):
            for step in (r.get("response") or {}).get("instructions") or []:
                if step["step_type"] == "install":
                    return json.loads(step["args"][0])
        self.fail("no install step was sent")

    def install_reply(self):
        """The reply of the install step that ran (the service resends the
        step while the host is "installing"; the agent answers those with an
        empty success while the first one runs, as the Go agent does)."""
        for r in self.svc.requests(operation="v2PostStepReply"):
            b = r["body"]
            if b.get("step_type") == "install" and (b.get("output") or b.get("error") or b.get("exit_code")):
                return b
        return None


class TestInProcess(Base):
    def test_dry_run_install_in_process(self):
        """The 2023 request (high_availability_mode Full) through cradle's own
        installer; the installer is started through lib/spawn, its
        dry-installer through its host-exec: fd-probe in front of the
        dry-installer stand-in records what each of them holds."""
        dev = self.lab.loop()
        marker = self.lab.path("rebooted")
        env = installer_env(self.lab, FD_PROBE_LOG=self.lab.path("fd-probe.jsonl"))
        env["PATH"] = probe_dir(self.lab, "dry-installer") + ":" + env["PATH"]
        agent = AgentRun(self.lab, self.svc, ["--fake-reboot-marker-path", marker, "--install-mode=inprocess"], env)
        try:
            self.install_when_registered(agent, dev)
            wait_for(lambda: os.path.exists(marker), timeout=600, what="the fake reboot", alive=agent.proc)
            # a dry-run agent ends once the marker is there, as the Go one
            agent.proc.wait(300)
        finally:
            agent.stop()
        out = agent.output()
        req = self.install_step()
        self.assertEqual(req["boot_device"], dev)
        self.assertEqual(req["role"], "master")
        expected = [("Starting installation", "master"), ("Installing", "master"), ("Writing image to disk", "")]
        expected += [("Writing image to disk", p) for p in L.expected_percents()] + [("Rebooting", "")]
        self.assertEqual(L.progress_of(self.svc, L.H1), expected, out)
        self.assertEqual(agent.proc.returncode, 0, out)
        # the reply may or may not have left before the agent saw the marker
        reply = self.install_reply()
        if reply is not None:
            self.assertNotIn("exit_code", reply, reply)
            self.assertIn("Updating node installation stage: Rebooting", reply.get("output", ""))
        with open(self.lab.path("var-log", "assisted-installer-%s.log" % L.H1)) as f:
            # the dry run's text log, one per simulated host, as upstream names it
            self.assertIn("Updating node installation stage: Rebooting", f.read())
        self.assertIn("install step: inprocess mode", out)
        self.assertIn("starting cradle's installer: installer --role master", out)
        self.assertIn("--dry-run --force-id %s --fake-reboot-marker-path %s" % (L.H1, marker), out)
        # the 2023 request's high_availability_mode, passed on as that release's agent did
        self.assertEqual(req["high_availability_mode"], "Full")
        self.assertNotIn("control_plane_count", req)
        self.assertIn("--agent-image %s --high-availability-mode Full --mco-image " % AGENT_IMAGE, out)
        with open(self.lab.path("var-log", "assisted-installer-%s.log" % L.H1)) as f:
            self.assertIn("control-plane-count=0 high-availability-mode=Full ", f.read())
        # the installer (lib/spawn) and its dry-installer (host-exec) got nothing of the agent's
        recs = [r for r in probe_records(self.lab) if r["argv"][0] == "dry-installer"]
        self.assertEqual(len(recs), 1, recs)
        self.assert_children_got_only_what_they_were_given(agent, recs[0], "the installer's dry-installer")
        self.assertNotIn("podman", [r[0] for r in L.Installer(self.lab, self.svc).standin_runs()])
        # dry-installer wrote the image to the loop device
        self.assertEqual(L.gpt_names(dev), {1: "BIOS-BOOT", 2: "EFI-SYSTEM", 3: "boot", 4: "root"})
        self.assertNotIn(L.TOKEN, out)

    def test_invalid_request_is_refused(self):
        """boot_device not under /dev: exit code -1 with the Go agent's text, nothing runs."""
        dev = self.lab.loop()
        before = L.sha256_file(dev)
        env = installer_env(self.lab)
        agent = AgentRun(self.lab, self.svc, ["--install-mode=inprocess"], env)
        try:
            wait_for(lambda: any(h["id"] == L.H1 and h.get("inventory") for h in self.svc.hosts()),
                     what="registration", alive=agent.proc)
            self.svc.set_host(L.H1, role="master", installation_disk_id="sda", installation_disk_path="sda")
            self.svc.install(L.CL, force=True, bootstrap_host_id=L.H2)
            reply = wait_for(lambda: self.install_reply(), what="the install step's reply", alive=agent.proc)
        finally:
            agent.stop()
        self.assertEqual(reply["exit_code"], -1)
        self.assertEqual(reply["error"], "disk sda should start of with /dev/")
        self.assertEqual(L.progress_of(self.svc, L.H1), [])
        self.assertEqual(L.sha256_file(dev), before)


class TestInstallRequestGenerations(Base):
    """Both generations of the install request (the 2023 service's
    high_availability_mode, the head model's control_plane_count) through
    both install modes, each passed on in its own release's form; podman
    mode with fd-probe as podman, which also shows what a host command of
    the agent holds while the agent holds a live service connection."""

    def run_podman_mode(self, style):
        self.svc.control("POST", "/settings", {"install_cmd_style": style})
        dev = self.lab.loop()
        env = installer_env(self.lab, FD_PROBE_LOG=self.lab.path("fd-probe.jsonl"))
        env["PATH"] = probe_dir(self.lab, "podman") + ":" + env["PATH"]
        agent = AgentRun(self.lab, self.svc, ["--install-mode=podman"], env)
        try:
            self.install_when_registered(agent, dev)
            reply = wait_for(lambda: self.install_reply(), what="the install step's reply", alive=agent.proc)
        finally:
            agent.stop()
        self.assertNotIn("exit_code", reply, "%s\n%s" % (reply, agent.output()[-3000:]))
        runs = {r["argv"][1]: r for r in probe_records(self.lab)}
        self.assertEqual(sorted(runs), ["images", "run"], runs.keys())
        return agent, self.install_step(), runs

    def test_2023_request_in_podman_mode(self):
        agent, req, runs = self.run_podman_mode("2023")
        self.assertEqual(req["high_availability_mode"], "Full")
        argv = runs["run"]["argv"]
        i = argv.index("--agent-image")
        self.assertEqual(argv[i:i + 4], ["--agent-image", AGENT_IMAGE, "--high-availability-mode", "Full"])
        self.assertNotIn("--control-plane-count", argv)
        # podman images runs through host-exec, podman run through host-exec's sh -c
        for sub in ("images", "run"):
            self.assert_children_got_only_what_they_were_given(agent, runs[sub], "podman " + sub)

    def test_head_request_in_podman_mode(self):
        agent, req, runs = self.run_podman_mode("head")
        self.assertEqual(req["control_plane_count"], 3)
        argv = runs["run"]["argv"]
        i = argv.index("--agent-image")
        self.assertEqual(argv[i:i + 4], ["--agent-image", AGENT_IMAGE, "--control-plane-count", "3"])
        self.assertNotIn("--high-availability-mode", argv)

    def test_head_request_in_process(self):
        """The 2023 request in-process is test_dry_run_install_in_process."""
        self.svc.control("POST", "/settings", {"install_cmd_style": "head"})
        dev = self.lab.loop()
        env = installer_env(self.lab)
        log = self.lab.path("var-log", "assisted-installer-%s.log" % L.H1)
        agent = AgentRun(self.lab, self.svc, ["--fake-reboot-marker-path", self.lab.path("rebooted"),
                                              "--install-mode=inprocess"], env)
        try:
            self.install_when_registered(agent, dev)
            wait_for(lambda: os.path.exists(log) and "Configuration is:" in open(log).read(), what="the installer",
                     alive=agent.proc)
        finally:
            agent.stop()
        self.assertEqual(self.install_step()["control_plane_count"], 3)
        self.assertIn("--agent-image %s --control-plane-count 3 --mco-image " % AGENT_IMAGE, agent.output())
        with open(log) as f:
            self.assertIn("control-plane-count=3 high-availability-mode= ", f.read())


class JournalListener(threading.Thread):
    """The journald socket the upstream command line binds into the
    container: every datagram, parsed as the native protocol."""

    def __init__(self, path):
        threading.Thread.__init__(self, daemon=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.entries = []
        self.start()

    def run(self):
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except OSError:
                return
            self.entries.append(self.parse(data))

    @staticmethod
    def parse(data):
        fields, i = {}, 0
        while i < len(data):
            nl = data.index(b"\n", i)
            line = data[i:nl]
            if b"=" in line:
                k, v = line.split(b"=", 1)
                fields[k.decode()] = v.decode("utf-8", "replace")
                i = nl + 1
            else:  # binary-safe form: NAME\n<le64 size><data>\n
                size = int.from_bytes(data[nl + 1:nl + 9], "little")
                fields[line.decode()] = data[nl + 9:nl + 9 + size].decode("utf-8", "replace")
                i = nl + 9 + size + 1
        return fields


class PodmanLab(object):
    """The mount namespace set-up the podman test needs (see the module
    docstring) on top of lab.Podman; everything is undone by cleanup()."""

    def __init__(self, lab):
        self.lab = lab
        if not os.path.isdir("/run/systemd"):
            raise unittest.SkipTest("no /run/systemd to lay the journal socket over")
        env = installer_env(lab)
        keys = [k for k in env if k.startswith("CRADLE_") or k.startswith("STANDIN_")]
        # the container's environment: the test's paths and short delays
        cenv = ["CRADLE_LOG_LEVEL=debug"] + \
            ["%s=%s" % (k, env[k]) for k in sorted(keys) if k not in ("CRADLE_HOST_EXEC", "CRADLE_LOG_TARGET")]
        self.podman = L.Podman(lab, container_env=cenv)
        self.env = self.podman.env
        self.podman.overlay("/etc", "etc")
        os.makedirs("/etc/pki", exist_ok=True)
        self.podman.overlay("/run/systemd", "run-systemd")
        os.makedirs("/run/systemd/journal", exist_ok=True)
        self.journal = JournalListener("/run/systemd/journal/socket")
        # the stand-ins on the default PATH of the "host" the installer enters
        # (/usr/local/bin comes first), through an overlay private to the test
        self.podman.overlay("/usr/local/bin", "usr-local-bin")
        for name in os.listdir(L.STAND_INS):
            src = os.path.join(L.STAND_INS, name)
            dst = os.path.join("/usr/local/bin", name)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            else:
                shutil.copy(src, dst)

    @staticmethod
    def static_binary():
        """CRADLE_STATIC_BINARY when it is set and names a static executable,
        else CRADLE_BINARY when it is one (a -Dstatic=true build)."""
        path = os.environ.get("CRADLE_STATIC_BINARY", "")
        if not path:
            out = subprocess.run(["readelf", "-lW", L.CRADLE], stdout=subprocess.PIPE, text=True).stdout
            return L.CRADLE if "program interpreter" not in out else None
        if not os.access(path, os.X_OK):
            raise AssertionError("CRADLE_STATIC_BINARY=%s is not an executable" % path)
        ldd = subprocess.run(["ldd", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
        if "not a dynamic executable" not in ldd and "statically linked" not in ldd:
            raise AssertionError("CRADLE_STATIC_BINARY=%s is not static:\n%s" % (path, ldd))
        return path

    def build_image(self):
        static = self.static_binary()
        self.static = static is not None
        if static:
            # the image that ships (packaging/containers/): one image for
            # both roles, its entrypoint takes the installer's flags
            print("note: the image is packaging/containers/'s, holding the static cradle %s" % static)
            L.run([os.path.join(L.SRC, "packaging", "containers", "build-image.sh"), static, LOCAL_IMAGE],
                  env=self.env)
            return
        root = self.lab.path("image", "rootfs")
        for d in ("opt", "var/log"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        L.Podman.add_binary(root, L.CRADLE, "/usr/bin/cradle")
        os.symlink("cradle", os.path.join(root, "usr/bin/installer"))
        print("note: the binary is not static: the image holds the test's dynamic cradle and its libraries")
        self.podman.build(LOCAL_IMAGE, self.lab.path("image"), "/usr/bin/installer")

    def cleanup(self):
        subprocess.run(["podman", "rm", "-f", "assisted-installer"], env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        self.journal.sock.close()
        self.podman.cleanup()


class TestPodman(Base):
    installer_image = LOCAL_IMAGE

    def setUp(self):
        Base.setUp(self)
        self.pl = PodmanLab(self.lab)
        self.addCleanup(self.pl.cleanup)

    def test_podman_mode_runs_the_image_with_the_upstream_command(self):
        self.pl.build_image()
        dev = self.lab.loop()
        env = installer_env(self.lab, **{k: self.pl.env[k] for k in ("CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF")})
        # the agent is PID 1 of its own PID namespace: the --pid=host
        # container's "PID 1" to enter, in the test's mount namespace
        agent = AgentRun(self.lab, self.svc, ["--install-mode=auto"], env,
                         wrapper=["unshare", "--pid", "--fork", "--kill-child=SIGTERM", "--mount-proc", "--"])
        try:
            self.install_when_registered(agent, dev)
            reply = wait_for(lambda: self.install_reply(), timeout=600, what="the install step's reply",
                             alive=agent.proc)
        finally:
            agent.stop()
        out = agent.output()
        self.assertIn("install step: podman mode (--install-mode=auto)", out)
        req = self.install_step()
        self.assertEqual(req["installer_image"], LOCAL_IMAGE)
        self.assertNotIn("exit_code", reply, "%s\n%s" % (reply, out))
        # the upstream command line, exactly
        cmd = [ln for ln in out.splitlines() if "starting the installer: " in ln][0]
        cmd = cmd[cmd.index("starting the installer: ") + len("starting the installer: "):].rstrip('"')
        self.assertTrue(cmd.startswith(
            "podman run --privileged --pid=host --net=host --name=assisted-installer -v /dev:/dev:rw -v "
            "/opt:/opt:rw -v /var/log:/var/log:rw -v /run/systemd/journal/socket:/run/systemd/journal/socket -v "
            "/etc/pki:/etc/pki -v /tmp:/tmp --env=PULL_SECRET_TOKEN %s --role master --infra-env-id %s "
            "--cluster-id %s --host-id %s --boot-device %s --url %s --controller-image " % (
                LOCAL_IMAGE, L.IE, L.CL, L.H1, dev, self.svc.url)), cmd)
        # the installer in the container did the whole installation on the host
        stages = L.progress_of(self.svc, L.H1)
        if stages[-1] != ("Rebooting", ""):
            print("installer output:\n%s\n%s" % (reply.get("output", ""), reply.get("error", "")))
        self.assertEqual(stages[0], ("Starting installation", "master"))
        self.assertEqual(stages[-1], ("Rebooting", ""))
        self.assertIn(("Writing image to disk", "100%"), stages)
        self.assertEqual(L.gpt_names(dev), {1: "BIOS-BOOT", 2: "EFI-SYSTEM", 3: "boot", 4: "root"})
        # every stage also on stderr (the step's error field), the logs on stdout (its output)
        self.assertIn("installer: stage Writing image to disk - 100%", reply.get("error", ""))
        self.assertIn("Updating node installation stage: Rebooting", reply.get("output", ""))
        runs = [r for r in L.Installer(self.lab, self.svc).standin_runs()]
        self.assertIn(["shutdown", "-r", "+1", "'Installation completed, server is going to reboot.'"], runs)
        self.assertEqual([r[0] for r in runs if r[0] == "coreos-installer"], ["coreos-installer"])
        # its journald entries carry the fields (TAG=installer, STAGE=, HOST_ID=, ROLE=)
        entries = [e for e in self.pl.journal.entries if e.get("TAG") == "installer"]
        self.assertTrue(entries, "no journal entries from the installer")
        writing = [e for e in entries if e.get("STAGE") == "Writing image to disk"]
        self.assertTrue(writing)
        self.assertEqual(writing[0]["HOST_ID"], L.H1)
        self.assertEqual(writing[0]["ROLE"], "master")
        self.assertEqual(writing[0]["SYSLOG_IDENTIFIER"], "installer")
        for e in entries:
            self.assertNotIn(L.TOKEN, e.get("MESSAGE", ""))
        ps = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}} {{.Image}}"], env=self.pl.env,
                            stdout=subprocess.PIPE, text=True).stdout
        self.assertIn("assisted-installer %s" % LOCAL_IMAGE, ps, "a foreground container, no --rm")

    def test_pull_failure_exits_2(self):
        """An image that cannot be pulled: three "timeout 600 podman pull"
        attempts, then exit code 2 with the Go agent's text."""
        image = "127.0.0.1:9/cradle/missing:1"
        self.svc.control("POST", "/settings", {"installer_image": image})
        dev = self.lab.loop()
        env = installer_env(self.lab, **{k: self.pl.env[k] for k in ("CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF")})
        agent = AgentRun(self.lab, self.svc, ["--install-mode=podman"], env)
        try:
            self.install_when_registered(agent, dev)
            reply = wait_for(lambda: self.install_reply(), timeout=600, what="the install step's reply",
                             alive=agent.proc)
        finally:
            agent.stop()
        self.assertEqual(reply.get("exit_code"), 2, "%s\n%s" % (reply, agent.output()[-3000:]))
        self.assertTrue(reply["error"].startswith("pulling the installer image %s exited with non-zero exit code "
                                                  % image), reply["error"])
        # three pulls in the step that answered (the service may resend the
        # step before the test stops the agent: count the first run only)
        first = agent.output().split("install step: podman mode")[1]
        self.assertEqual(first.count("pulling the installer image %s\"" % image), 3)
        self.assertEqual(L.progress_of(self.svc, L.H1), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
