#!/usr/bin/python3
"""The agent's sd_notify messages, as systemd would receive them from
packaging/systemd/cradle-agent.service (Type=notify, WatchdogSec=).

The test owns the notification socket: an AF_UNIX datagram socket with
SO_PASSCRED, named in the agent's $NOTIFY_SOCKET, so every message comes
with the sender's PID (systemd's NotifyAccess=main accepts only the main
PID's). The agent runs against the reference service (tests/service/),
inside the network namespace tests/helpers/in-netns.sh made; the service's
request log (its control API) shows that READY=1 comes only once the host
is registered and polling.

Environment: CRADLE_BINARY, CRADLE_SOURCE_ROOT.
"""
import array
import os
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import unittest

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "agent"))
from test_agent import Agent, TOKEN, wait_for  # noqa: E402
from refclient import RefService  # noqa: E402

CRADLE = os.environ.get("CRADLE_BINARY")
SCENARIO = {"settings": {"next_instruction_seconds": 1, "min_disk_size_gb": 1, "min_cpu_cores": 1,
                         "min_ram_mib": 256}}


class NotifySocket(object):
    """Collects (pid, {key: value}) of every datagram, as systemd parses them."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.bind(path)
        self.messages = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        space = socket.CMSG_SPACE(struct.calcsize("3i"))
        while True:
            try:
                data, anc, _, _ = self.sock.recvmsg(4096, space)
            except OSError:
                return
            pid = None
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = array.array("i", payload[:12])[0]
            fields = dict(line.split("=", 1) for line in data.decode().split("\n") if "=" in line)
            with self.lock:
                self.messages.append((pid, fields))

    def all(self):
        with self.lock:
            return list(self.messages)

    def with_key(self, key, value=None):
        return [(p, m) for p, m in self.all() if key in m and (value is None or m[key] == value)]

    def close(self):
        self.sock.close()


class Notify(unittest.TestCase):
    def setUp(self):
        if not CRADLE:
            self.skipTest("CRADLE_BINARY not set")
        if not os.environ.get("CRADLE_TEST_NETNS"):
            self.skipTest("the agent answers network steps: run this through tests/helpers/in-netns.sh")
        self.tmp = tempfile.mkdtemp(prefix="cradle-notify-")
        self.svc = RefService(scenario=SCENARIO, token=TOKEN, workdir=self.tmp)
        self.svc.start()
        self.agents = []
        self.notify = NotifySocket(os.path.join(self.tmp, "notify.sock"))

    def tearDown(self):
        for a in self.agents:
            if a.alive():
                a.proc.kill()
                a.proc.wait()
            a.log.close()
        self.notify.close()
        self.svc.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def agent(self, *args, env=None):
        e = {"NOTIFY_SOCKET": self.notify.path}
        e.update(env or {})
        a = Agent(self.tmp, self.svc.url, args, env=e)
        self.agents.append(a)
        return a

    def polls(self):
        return len(self.svc.requests(operation="v2GetNextSteps"))

    def test_ready_once_registered_and_polling_then_watchdog_and_stopping(self):
        a = self.agent(env={"WATCHDOG_USEC": "2000000"})
        ready = wait_for(lambda: self.notify.with_key("READY"), timeout=120, what="READY=1")
        # the service had seen the registration and a poll when READY=1 came
        regs = [r for r in self.svc.requests(operation="v2RegisterHost") if r["status"] == 201]
        self.assertTrue(regs, "READY=1 before the registration")
        self.assertGreaterEqual(self.polls(), 1, "READY=1 before the first instructions poll")
        host_id = regs[0]["body"]["host_id"]
        pid, msg = ready[0]
        self.assertEqual(msg["READY"], "1")
        self.assertEqual(msg["STATUS"], "registered host %s, polling instructions" % host_id)
        # what came before: the registration's status, no READY
        before = self.notify.all()[:self.notify.all().index(ready[0])]
        self.assertIn("registering host %s with infra-env" % host_id,
                      " ".join(m.get("STATUS", "") for _, m in before))
        # WATCHDOG=1 keeps coming from the polling loop
        n = len(self.notify.with_key("WATCHDOG"))
        wait_for(lambda: len(self.notify.with_key("WATCHDOG", "1")) >= n + 3, timeout=120,
                 what="three more WATCHDOG=1")
        # polling goes on, READY=1 is not repeated and the status not resent at every poll
        p = self.polls()
        wait_for(lambda: self.polls() >= p + 3, timeout=120, what="more polls")
        self.assertEqual(len(self.notify.with_key("READY")), 1)
        self.assertEqual(len(self.notify.with_key("STATUS", msg["STATUS"])), 1)
        # every message from the agent's own PID (NotifyAccess=main)
        self.assertEqual({p for p, _ in self.notify.all()}, {a.proc.pid})
        # a stop says STOPPING=1, and the agent ends well
        a.proc.send_signal(signal.SIGTERM)
        self.assertEqual(a.proc.wait(60), 0, a.output())
        # the datagram was sent before the exit; the collecting thread may read it after
        wait_for(lambda: self.notify.with_key("STOPPING", "1"), timeout=30, what="STOPPING=1")
        self.assertEqual(self.notify.all()[-1][1].get("STOPPING"), "1")

    def test_no_watchdog_unless_asked(self):
        """Without $WATCHDOG_USEC, or with another process's $WATCHDOG_PID
        (sd_watchdog_enabled(3)), no WATCHDOG=1."""
        for env in ({}, {"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"}):
            with self.subTest(env=env):
                a = self.agent(env=env)
                wait_for(lambda: [m for p, m in self.notify.with_key("READY") if p == a.proc.pid], timeout=120,
                         what="READY=1")
                p = self.polls()
                wait_for(lambda: self.polls() >= p + 3, timeout=120, what="more polls")
                self.assertEqual([m for pid, m in self.notify.with_key("WATCHDOG") if pid == a.proc.pid], [])
                a.stop()

    def test_podman_mode_children_do_not_inherit_the_socket(self):
        """With --step-runner=podman the agent is ready once registered, feeds
        the watchdog while it waits for the container, and podman (here a
        stand-in that records its environment) never sees $NOTIFY_SOCKET nor
        the watchdog variables: it would hand them to its containers."""
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir)
        record = os.path.join(self.tmp, "podman-env")
        with open(os.path.join(bindir, "podman"), "w") as f:
            f.write("#!/bin/sh\nenv > %s.$$\n[ \"$1\" = run ] && sleep 3\nexit 0\n" % record)
        os.chmod(os.path.join(bindir, "podman"), 0o755)
        a = self.agent("--step-runner=podman", env={
            "WATCHDOG_USEC": "2000000", "CRADLE_HOST_EXEC": "direct",
            "PATH": bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")})
        ready = wait_for(lambda: self.notify.with_key("READY"), timeout=120, what="READY=1")
        self.assertIn("steps run in the next-step-runner container", ready[0][1]["STATUS"])
        wait_for(lambda: len(self.notify.with_key("WATCHDOG", "1")) >= 3, timeout=120, what="WATCHDOG=1")
        runs = wait_for(lambda: [n for n in os.listdir(self.tmp) if n.startswith("podman-env.")], timeout=120,
                        what="podman runs")
        a.stop()
        for n in runs:
            with open(os.path.join(self.tmp, n)) as f:
                names = {line.split("=", 1)[0] for line in f}
            self.assertTrue({"PATH"} <= names)
            self.assertEqual(names & {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}, set(), n)


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
