#!/usr/bin/python3
"""packaging/systemd/'s unit under a real systemd: the discovery image
(tests/vm/build-image.sh) booted in a VM (tests/vm/vmlab.py) whose NIC is
on a bridge, in the test's network namespace, where the reference service
listens. The environment file comes in the VM's per-boot archive, as a live
ISO's Ignition config would write it.

One VM for the class (a boot under software emulation takes a minute or
more); the tests run in their numbered order, each on the state the one
before left:

1. registration refused (a 503 fault): the unit stays "activating", its
   STATUS= says it is registering: no READY=1 before the registration;
2. the fault cleared: "active" only once the service answered 201, with
   the registered STATUS=;
3. the environment file honoured (token, infra-env, version, the URL, the
   extra arguments split on blanks);
4. the agent's lines in `journalctl TAG=agent`, and no secret anywhere in
   the journal;
5. a crash (SIGSEGV) restarted by systemd, and registered again;
6. a hung agent (SIGSTOP) killed by the watchdog and restarted (with a
   runtime drop-in shortening WatchdogSec=, as `systemctl edit --runtime`).

Skips (exit 77 through unittest's skip) where qemu cannot run, in a build
whose cradle is not static, and against a real service (the VM's network
is the test's namespace). Environment: CRADLE_BINARY, CRADLE_STATIC,
CRADLE_BUILD_ROOT (the serial console, the journal and qemu's command line
are kept in meson-logs/vm-unit/), CRADLE_VM_BOOT_TIMEOUT (default 900 s).
"""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, HERE)
from refclient import RefService, real_service  # noqa: E402
import vmlab  # noqa: E402

CRADLE = os.environ.get("CRADLE_BINARY")
BOOT_TIMEOUT = int(os.environ.get("CRADLE_VM_BOOT_TIMEOUT", "900"))
IE = "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"       # the scenario's default infra-env
TOKEN = "t0ken-for-the-vm-unit-tests"
VERSION = "quay.io/example/cradle:vm-unit"
UNIT = "cradle-agent.service"
SCENARIO = {"settings": {"next_instruction_seconds": 2, "min_disk_size_gb": 1, "min_cpu_cores": 1,
                         "min_ram_mib": 256}}
STATE = ("ActiveState", "SubState", "StatusText", "MainPID", "NRestarts", "Result")


def log(msg):
    sys.stderr.write("vm-unit: %s\n" % msg)
    sys.stderr.flush()


class Unit(unittest.TestCase):
    vm = None

    @classmethod
    def setUpClass(cls):
        reason = vmlab.why_not_runnable()
        if reason is None and real_service():
            reason = ("the VM's only network is the test's namespace; the service of "
                      "CRADLE_TEST_SERVICE_URL is outside it")
        if reason:
            raise unittest.SkipTest(reason)
        cls.tmp = tempfile.mkdtemp(prefix="cradle-vm-unit-")
        cls.keep = vmlab.keep_dir("vm-unit")
        try:
            cls._start()
        except BaseException:
            cls._cleanup()
            raise

    @classmethod
    def _start(cls):
        with open(os.path.join(cls.keep, "build-image.log"), "w") as f:
            cls.img = vmlab.image(CRADLE, log=f)
        log("image %s (base built in %s s when it was made)" % (
            cls.img.directory, cls.img.fields.get("base-build-seconds")))
        cls.lab = vmlab.Lab(cls.tmp)
        cls.svc = RefService(scenario=SCENARIO, token=TOKEN, workdir=cls.tmp, bind=cls.lab.address)
        cls.svc.start()
        # registration refused until test 2 clears it
        cls.svc.add_fault(method="POST", path="/v2/infra-envs/[^/]+/hosts$", status=503, count=None)
        env = ("CRADLE_URL=%s\nCRADLE_INFRA_ENV_ID=%s\nCRADLE_AGENT_VERSION=%s\nPULL_SECRET_TOKEN=%s\n"
               "CRADLE_INSECURE=false\nCRADLE_AGENT_ARGS=--interval=2  --log-level=debug\n" % (
                   cls.svc.url, IE, VERSION, TOKEN))
        cls.vm = vmlab.VM(cls.lab, cls.img, name="unit0", workdir=os.path.join(cls.tmp, "unit0"),
                          files={"/etc/cradle/agent.env": (0o600, env)})
        cls.vm.start()
        log("booting under %s" % cls.vm.accel)
        up = cls.vm.wait_guest(BOOT_TIMEOUT)
        log("guest agent answers %.1f s after power-on" % up)

    @classmethod
    def _cleanup(cls):
        if cls.vm is not None:
            cls.vm.stop_and_keep(cls.keep)
        if getattr(cls, "svc", None) is not None:
            cls.svc.stop()
            shutil.copy(cls.svc.stderr_path, os.path.join(cls.keep, "refservice.stderr"))
        if getattr(cls, "lab", None) is not None:
            cls.lab.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        cls._cleanup()

    # -- helpers --
    def state(self):
        return self.vm.show(UNIT, *STATE)

    def registrations(self, status=None):
        # (a fault's answer is recorded without the operation's name)
        return [r for r in self.svc.requests(method="POST", path="^/api/assisted-install/v2/infra-envs/[^/]+/hosts$")
                if status is None or r["status"] == status]

    def journal(self, *match):
        _, out, _ = self.vm.run("journalctl -b -o json --no-pager %s" % " ".join(match), timeout=120,
                                check=True)
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def wait_active_again(self, old_pid, restarts, timeout=600):
        def again():
            s = self.state()
            if s["ActiveState"] == "active" and s["MainPID"] not in ("0", old_pid) and \
                    int(s["NRestarts"]) >= restarts:
                return s
            return None
        return vmlab.wait_for(again, timeout, "the agent active again after a restart")

    # -- tests, in order --
    def test_1_not_ready_while_registration_refused(self):
        refused = vmlab.wait_for(lambda: self.registrations(503), BOOT_TIMEOUT, "a registration attempt")
        log("first registration attempt %.1f s after power-on" % (time.monotonic() - self.vm.started))
        self.assertEqual(refused[0]["body"]["discovery_agent_version"], VERSION)
        s = self.state()
        self.assertEqual(s["ActiveState"], "activating", s)
        self.assertEqual(s["SubState"], "start", s)
        self.assertTrue(s["StatusText"].startswith("registering host "), s)
        self.assertIn(" with infra-env", s["StatusText"])
        self.assertEqual(self.registrations(201), [])

    def test_2_ready_once_registered(self):
        self.svc.clear_faults()
        s = vmlab.wait_for(lambda: (lambda s: s if s["ActiveState"] == "active" else None)(self.state()), 600,
                     "the unit active (READY=1)")
        regs = self.registrations(201)
        self.assertTrue(regs, "the unit is active but the service saw no registration")
        host_id = regs[0]["body"]["host_id"]
        self.assertEqual(s["SubState"], "running")
        self.assertEqual(s["StatusText"], "registered host %s, polling instructions" % host_id)
        self.assertGreaterEqual(len(self.svc.requests(operation="v2GetNextSteps")), 1)
        self.assertEqual(s["NRestarts"], "0")
        type(self).host_id = host_id
        type(self).main_pid = s["MainPID"]
        log("registered %.1f s after power-on" % (time.monotonic() - self.vm.started))
        # a measurement for the log, no verdict: the agent's peak RSS so far
        _, out, _ = self.vm.run("grep VmHWM /proc/%s/status" % s["MainPID"])
        log("the agent's %s" % " ".join(out.split()))

    def test_3_environment_file_honoured(self):
        reg = self.registrations(201)[0]
        # the infra-env and the version of the file; the token too: the
        # service refuses a registration without it (401)
        self.assertEqual(reg["path"], "/api/assisted-install/v2/infra-envs/%s/hosts" % IE)
        self.assertEqual(reg["body"]["discovery_agent_version"], VERSION)
        st, _ = self.svc.api("POST", "/v2/infra-envs/%s/hosts" % IE, {"host_id": self.host_id}, auth=False)
        self.assertEqual(st, 401)
        # the command line: CRADLE_AGENT_ARGS split on blanks ($VAR), the
        # unit's defaults overridden by the file
        _, out, _ = self.vm.run("tr '\\0' '\\n' < /proc/%s/cmdline" % self.main_pid, check=True)
        self.assertEqual(out.splitlines(), [
            "/usr/bin/cradle", "agent", "--url", self.svc.url, "--infra-env-id", IE, "--agent-version", VERSION,
            "--insecure=false", "--interval=2", "--log-level=debug"])
        _, out, _ = self.vm.run("stat -c %a /etc/cradle/agent.env", check=True)
        self.assertEqual(out.strip(), "600")

    def test_4_journal_tag_agent(self):
        lines = self.journal("TAG=agent")
        self.assertTrue(lines, "journalctl TAG=agent shows nothing")
        self.assertEqual({e.get("_SYSTEMD_UNIT") for e in lines}, {UNIT})
        self.assertEqual({e.get("SYSLOG_IDENTIFIER") for e in lines}, {"agent"})
        self.assertTrue([e for e in lines if self.host_id in e.get("MESSAGE", "")],
                        "no line of the agent names its host id")
        # the token never reaches the journal (searched here: qemu-ga logs
        # the command lines it runs)
        _, out, _ = self.vm.run("journalctl -b -o export --no-pager", timeout=120, check=True)
        self.assertIn("SYSLOG_IDENTIFIER=agent", out)
        self.assertNotIn(TOKEN, out)

    def test_5_crash_restarted(self):
        before = self.state()
        regs = len(self.registrations(201))
        self.vm.run("systemctl kill --kill-who=main -s SIGSEGV %s" % UNIT, check=True)
        s = self.wait_active_again(before["MainPID"], int(before["NRestarts"]) + 1)
        self.assertEqual(int(s["NRestarts"]), int(before["NRestarts"]) + 1)
        self.assertGreater(len(self.registrations(201)), regs, "the restarted agent did not register")
        msgs = [e.get("MESSAGE", "") for e in self.journal("_PID=1", "UNIT=%s" % UNIT)]
        self.assertTrue([m for m in msgs if "Main process exited" in m and "SEGV" in m], msgs[-20:])
        self.assertTrue([m for m in msgs if "Scheduled restart job" in m], msgs[-20:])
        type(self).main_pid = s["MainPID"]

    def test_6_hung_agent_killed_by_watchdog(self):
        self.vm.run("mkdir -p /run/systemd/system/%s.d && printf '[Service]\\nWatchdogSec=20\\n' "
                    "> /run/systemd/system/%s.d/50-vm-test.conf && systemctl daemon-reload" % (UNIT, UNIT),
                    check=True)
        # the new WatchdogSec= takes effect at the next start
        before = self.state()
        self.vm.run("systemctl restart --no-block %s" % UNIT, check=True)
        s = self.wait_active_again(before["MainPID"], 0)
        self.assertEqual(self.vm.show(UNIT, "WatchdogUSec")["WatchdogUSec"], "20s")
        self.vm.run("kill -STOP %s" % s["MainPID"], check=True)
        after = self.wait_active_again(s["MainPID"], int(s["NRestarts"]) + 1)
        self.assertEqual(int(after["NRestarts"]), int(s["NRestarts"]) + 1)
        msgs = [e.get("MESSAGE", "") for e in self.journal("_PID=1", "UNIT=%s" % UNIT)]
        self.assertTrue([m for m in msgs if "Watchdog timeout" in m], msgs[-20:])


if __name__ == "__main__":
    vmlab.unittest_main()
