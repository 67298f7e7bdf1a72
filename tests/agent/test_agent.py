#!/usr/bin/python3
"""The cradle agent against the reference service (tests/service/).

Runs inside a network namespace made by tests/helpers/in-netns.sh: the
service listens on the namespace's 127.0.0.1 and the agents run there too,
so nothing reaches this machine's network. Timing is compressed with
cradle's own flags (--interval, --transport-retry-delay,
--backoff-max-elapsed, --terminal-error-block); no test sleeps a minute.

Environment: CRADLE_BINARY (the cradle executable), CRADLE_SOURCE_ROOT.
CRADLE_SOAK_SECONDS (default 120) and CRADLE_SOAK_AGENTS (default 50) size
the soak test.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
try:
    from refclient import RefService
except ImportError as e:  # python3-yaml missing
    print("SKIP: cannot load the reference service: %s" % e)
    sys.exit(77)

CRADLE = os.environ.get("CRADLE_BINARY")
IE = "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"       # the observed infra-env (scenario default)
CLUSTER = "fb127e4c-aa1c-4cf4-898f-aadb690c4ded"
AGENT_IMAGE = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
TOKEN = "t0ken-for-agent-tests"
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
FAST = ["--interval=1", "--transport-retry-delay=0.05", "--backoff-max-elapsed=3"]


def wait_for(pred, timeout=30, step=0.1, what="condition"):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))


class Agent(object):
    """A cradle agent started through a link named "agent", as agent.service does."""

    def __init__(self, tmp, url, args=(), env=None, name="agent", infra_env=IE, token=TOKEN):
        self.link = os.path.join(tmp, name)
        if not os.path.exists(self.link):
            os.symlink(CRADLE, self.link)
        self.log = open(os.path.join(tmp, "agent-%s.log" % uuid.uuid4().hex[:8]), "w+")
        e = dict(os.environ)
        e["CRADLE_LOG_TARGET"] = "stderr"
        if token is not None:
            e["PULL_SECRET_TOKEN"] = token
        else:
            e.pop("PULL_SECRET_TOKEN", None)
        e.update(env or {})
        argv = [self.link, "--url", url, "--infra-env-id", infra_env, "--agent-version", AGENT_IMAGE,
                "--insecure=true"] + FAST + list(args)
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=e)

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=15):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("agent did not stop on SIGTERM:\n" + self.output())
        return rc


class AgentTestCase(unittest.TestCase):
    scenario = None
    token = TOKEN

    def setUp(self):
        if not CRADLE:
            self.skipTest("CRADLE_BINARY not set")
        self.tmp = tempfile.mkdtemp(prefix="cradle-agent-")
        self.addCleanup(subprocess.call, ["rm", "-rf", self.tmp])
        scenario = self.scenario or {"settings": {"next_instruction_seconds": 1, "min_disk_size_gb": 1,
                                                  "min_cpu_cores": 1, "min_ram_mib": 256}}
        # with CRADLE_TEST_SERVICE_URL (a real service) this skips: every
        # test here starts from a scenario and reads the recorded requests
        self.svc = RefService(scenario=scenario, token=self.token, workdir=self.tmp)
        self.svc.start()
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            if a.alive():
                a.proc.kill()
                a.proc.wait()
        self.svc.stop()

    def agent(self, *args, **kw):
        a = Agent(self.tmp, self.svc.url, args, **kw)
        self.agents.append(a)
        return a

    def reqs(self, **kw):
        return self.svc.requests(**kw)

    def stop_ok(self, a):
        rc = a.stop()
        self.assertEqual(rc, 0, "agent exit status %s (ASan/LSan reports show here):\n%s" % (rc, a.output()))


class Registration(AgentTestCase):
    def test_registers_answers_inventory_and_keeps_polling(self):
        a = self.agent()
        regs = wait_for(lambda: [r for r in self.reqs(operation="v2RegisterHost") if r["status"] == 201],
                        what="a registration")
        host_id = regs[0]["body"]["host_id"]
        self.assertRegex(host_id, UUID_RE)
        self.assertEqual(regs[0]["body"], {"discovery_agent_version": AGENT_IMAGE, "host_id": host_id})
        # the inventory reply is valid for the service's Inventory model
        replies = wait_for(lambda: [r for r in self.reqs(operation="v2PostStepReply")
                                    if r["body"].get("step_type") == "inventory"], what="the inventory reply")
        r = replies[0]
        self.assertEqual(r["status"], 204, r)
        self.assertEqual(r["step_reply"]["output_errors"], [], r["step_reply"])
        self.assertNotIn("exit_code", r["body"])  # success omits it, as the Go agent
        inv = json.loads(r["body"]["output"])
        self.assertIn("disks", inv)
        self.assertIn("interfaces", inv)
        host = self.svc.host(host_id)
        self.assertIn(host["status"], ("known", "insufficient"), host)
        # it keeps polling
        n = len(self.reqs(operation="v2GetNextSteps"))
        wait_for(lambda: len(self.reqs(operation="v2GetNextSteps")) >= n + 2, what="more polls")
        self.assertTrue(a.alive())
        self.stop_ok(a)

    def test_wire_headers_match_the_go_agent(self):
        a = self.agent()
        wait_for(lambda: self.reqs(operation="v2PostStepReply"), what="a step reply")
        self.stop_ok(a)
        capture = json.load(open(os.path.join(SRC, "tests", "reference", "observed",
                                              "go-agent-wire-capture.json")))
        go_reg = capture["register_ok_first_request"]
        go_get = capture["next_step_runner_session"][0]
        go_post = capture["next_step_runner_session"][1]
        ours = {"v2RegisterHost": go_reg, "v2GetNextSteps": go_get, "v2PostStepReply": go_post}
        ignored = {"host", "content-length"}
        for op, go in ours.items():
            mine = self.reqs(operation=op)[0]
            go_names = {k.lower() for k in go["headers"]} - ignored
            my_names = {k.lower() for k in mine["headers"]} - ignored
            self.assertEqual(my_names, go_names, "%s headers: %s" % (op, mine["headers"]))
            self.assertEqual(mine["headers"].get("Discovery_agent_version"), AGENT_IMAGE)
            self.assertRegex(mine["headers"]["X-Request-Id"], UUID_RE)
            self.assertEqual(mine["headers"]["Accept"], "application/json")
            self.assertEqual(mine["auth"], "ok")
        # the step reply of a poll carries that poll's request id
        get = self.reqs(operation="v2GetNextSteps")[0]
        post = self.reqs(operation="v2PostStepReply")[0]
        self.assertEqual(post["headers"]["X-Request-Id"], get["headers"]["X-Request-Id"])
        # the register body has the Go keys
        self.assertEqual(sorted(self.reqs(operation="v2RegisterHost")[0]["body"]), sorted(go_reg["body"]))
        # the token never reaches the agent's log
        self.assertNotIn(TOKEN, a.output())

    def test_restart_registers_again(self):
        a = self.agent()
        wait_for(lambda: self.reqs(operation="v2PostStepReply"), what="a step reply")
        self.stop_ok(a)
        n = len(self.reqs(operation="v2RegisterHost"))
        b = self.agent()
        regs = wait_for(lambda: self.reqs(operation="v2RegisterHost")[n:], what="the second registration")
        self.assertEqual(regs[0]["status"], 201)
        self.assertEqual(regs[0]["body"]["host_id"], self.reqs(operation="v2RegisterHost")[0]["body"]["host_id"])
        wait_for(lambda: len(self.reqs(operation="v2GetNextSteps")) > 0, what="polling again")
        self.stop_ok(b)

    def terminal(self, expect_status, args=(), **agent_kw):
        a = self.agent(*args, **agent_kw)
        wait_for(lambda: [r for r in self.reqs(operation="v2RegisterHost") if r["status"] == expect_status],
                 what="a %d answer" % expect_status)
        time.sleep(2.5)  # several --interval periods: a terminal answer is not retried
        regs = self.reqs(operation="v2RegisterHost")
        self.assertEqual(len(regs), 1, "registered %d times after %d" % (len(regs), expect_status))
        self.assertTrue(a.alive(), "the agent must block, not exit:\n" + a.output())
        self.stop_ok(a)
        return a

    def test_401_blocks(self):
        a = self.terminal(401, token="wrong-token-value")
        self.assertIn("not authenticated", a.output())
        self.assertNotIn("wrong-token-value", a.output())

    def test_404_blocks(self):
        a = self.terminal(404, infra_env="00000000-1111-2222-3333-444444444444")
        self.assertIn("does not exist", a.output())

    def test_403_blocks(self):
        host_id = str(uuid.uuid4())
        self.svc.control("POST", "/hosts", {"id": host_id, "infra_env_id": IE, "status": "installed"})
        a = self.terminal(403, args=("--dry-run", "--force-id", host_id))
        self.assertIn("not allowed", a.output())

    def test_409_blocks(self):
        self.svc.control("POST", "/clusters/%s" % CLUSTER, {"status": "installing"})
        a = self.terminal(409)
        self.assertIn("cannot accept new hosts", a.output())

    def test_500_is_retried_every_interval(self):
        self.svc.add_fault(path="/hosts$", method="POST", status=500, count=2)
        a = self.agent()
        regs = wait_for(lambda: [r for r in self.reqs(operation="v2RegisterHost") if r["status"] == 201],
                        timeout=20, what="registration after two 500s")
        self.assertEqual(len(self.reqs(path="/hosts$", method="POST")), 3)
        self.assertTrue(a.alive())
        self.stop_ok(a)

    def test_503_is_retried_by_the_transport(self):
        self.svc.add_fault(path="/hosts$", method="POST", status=503, count=3)
        a = self.agent()
        wait_for(lambda: [r for r in self.reqs(operation="v2RegisterHost") if r["status"] == 201],
                 timeout=20, what="registration after three 503s")
        self.assertEqual(len(self.reqs(path="/hosts$", method="POST")), 4)
        self.assertIn("Request will be retried", a.output())
        self.stop_ok(a)

    def test_service_down_then_up(self):
        port = self.svc.url.rsplit(":", 1)[1]
        self.svc.stop()
        a = self.agent()
        time.sleep(1.5)
        self.assertTrue(a.alive())
        workdir = os.path.join(self.tmp, "second-service")
        os.mkdir(workdir)
        self.svc = RefService(scenario={"settings": {"next_instruction_seconds": 1}}, token=TOKEN,
                              workdir=workdir, extra_args=["--port", port])
        self.svc.start()
        wait_for(lambda: self.reqs(operation="v2RegisterHost"), timeout=20, what="registration once up")
        self.stop_ok(a)


class Loop(AgentTestCase):
    def registered(self, *args):
        a = self.agent(*args)
        regs = wait_for(lambda: [r for r in self.reqs(operation="v2RegisterHost") if r["status"] == 201],
                        what="registration")
        return a, regs[0]["body"]["host_id"]

    def test_identical_outputs_are_posted_once(self):
        a, host_id = self.registered()
        wait_for(lambda: len(self.reqs(operation="v2GetNextSteps")) >= 4, what="four polls")
        inv = [r for r in self.reqs(operation="v2PostStepReply") if r["body"].get("step_type") == "inventory"]
        self.assertEqual(len(inv), 1, "inventory replies: %d" % len(inv))
        self.assertIn("already exists in assisted service", a.output())
        self.stop_ok(a)

    def test_instruction_errors_back_off_then_register_again(self):
        a, host_id = self.registered()
        self.svc.add_fault(path="/instructions$", method="GET", status=500, count=None)
        wait_for(lambda: len(self.reqs(operation="v2RegisterHost")) >= 2, timeout=30,
                 what="re-registration after the back-off ran out")
        self.assertIn("will exit", a.output())
        self.stop_ok(a)

    def test_instructions_404_freezes(self):
        a, host_id = self.registered()
        wait_for(lambda: self.reqs(operation="v2GetNextSteps"), what="a poll")
        self.svc.add_fault(path="/instructions$", method="GET", status=404, count=None)
        wait_for(lambda: "will freeze" in a.output(), what="the freeze")
        n = len(self.reqs(operation="v2GetNextSteps"))
        time.sleep(2.5)
        self.assertEqual(len(self.reqs(operation="v2GetNextSteps")), n)
        self.assertTrue(a.alive())
        self.stop_ok(a)

    def test_garbage_and_html_do_not_crash(self):
        a, host_id = self.registered()
        self.svc.add_fault(path="/instructions$", method="GET", action="garbage", count=2)
        self.svc.add_fault(path="/instructions$", method="GET", action="html", status=502, count=1)
        self.svc.add_fault(path="/instructions$", method="GET", action="reset", count=1)
        self.svc.add_fault(path="/instructions$", method="GET", action="truncate", count=1)
        n = len(self.reqs(operation="v2GetNextSteps"))
        wait_for(lambda: [r for r in self.reqs(operation="v2GetNextSteps")[n:] if r["status"] == 200
                          and not r.get("fault")], timeout=30, what="a clean poll after the faults")
        self.assertTrue(a.alive())
        self.stop_ok(a)

    def steps_body(self, instructions, action="continue"):
        return json.dumps({"next_instruction_seconds": 1, "post_step_action": action,
                           "instructions": instructions})

    def test_unknown_step_type_reply_is_the_go_agents(self):
        a, host_id = self.registered()
        self.svc.add_fault(path="/instructions$", method="GET", status=200, count=1,
                           content_type="application/json",
                           body=self.steps_body([{"step_type": "no-such-step", "step_id": "no-such-step-aaaa0010",
                                                  "args": []}]))
        r = wait_for(lambda: [r for r in self.reqs(operation="v2PostStepReply")
                              if r["body"].get("step_id") == "no-such-step-aaaa0010"], what="the reply")[0]
        # byte for byte what the Go agent posted (observed/go-agent-wire-capture.json)
        self.assertEqual(r["body"], {"error": "failed to find action for step type no-such-step",
                                     "exit_code": -1, "step_id": "no-such-step-aaaa0010",
                                     "step_type": "no-such-step"})
        self.assertEqual(r["status"], 422)  # the service refuses the enum value, as observed
        self.assertTrue(a.alive())
        self.stop_ok(a)

    def test_logs_gather_uploads_through_logs_sender(self):
        logs_dir = os.path.join(self.tmp, "var-log")
        journal = os.path.join(self.tmp, "journal")  # empty: this machine's journal stays out
        os.makedirs(logs_dir)
        os.makedirs(journal)
        # the environment reaches logs_sender as it reaches the upstream container
        a = self.agent("--host-exec=direct", env={"CRADLE_LOGS_DIR": logs_dir, "CRADLE_JOURNAL_DIR": journal})
        host_id = wait_for(lambda: [r for r in self.reqs(operation="v2RegisterHost") if r["status"] == 201],
                           what="registration")[0]["body"]["host_id"]
        req = {"cluster_id": CLUSTER, "infra_env_id": IE, "host_id": host_id, "bootstrap": False,
               "installer_gather": False}
        self.svc.add_fault(path="/instructions$", method="GET", status=200, count=1,
                           content_type="application/json",
                           body=self.steps_body([{"step_type": "logs-gather", "step_id": "logs-gather-aaaa0020",
                                                  "args": [json.dumps(req)]}]))
        r = wait_for(lambda: [r for r in self.reqs(operation="v2PostStepReply")
                              if r["body"].get("step_id") == "logs-gather-aaaa0020"], timeout=120,
                     what="the logs-gather reply")[0]
        self.assertEqual(r["status"], 204, r)
        self.assertEqual(r["body"].get("exit_code", 0), 0, r["body"])  # omitempty
        self.assertIn("Logs were sent", r["body"]["output"])
        logs = self.svc.logs()
        self.assertEqual(len(logs), 1, logs)
        states = [q["body"]["logs_state"] for q in self.reqs(operation="v2UpdateHostLogsProgress")]
        self.assertEqual(states, ["requested", "collecting", "completed"])
        # the archive and its directory are gone, as without -dont-clean
        self.assertFalse([f for f in os.listdir(logs_dir) if f.startswith("logs_host_") or f == "logs.tar.gz"])
        self.assertNotIn(TOKEN, r["body"]["output"])
        self.stop_ok(a)

    def test_null_instructions_and_exit_action(self):
        a, host_id = self.registered()
        n = len(self.reqs(operation="v2RegisterHost"))
        self.svc.add_fault(path="/instructions$", method="GET", status=200, count=1,
                           content_type="application/json",
                           body=json.dumps({"next_instruction_seconds": 1, "instructions": None}))
        self.svc.add_fault(path="/instructions$", method="GET", status=200, count=1,
                           content_type="application/json", body=self.steps_body(None, "exit"))
        wait_for(lambda: len(self.reqs(operation="v2RegisterHost")) > n, what="re-registration after exit")
        self.stop_ok(a)

    def test_step_argument_errors(self):
        a, host_id = self.registered()
        self.svc.add_fault(path="/instructions$", method="GET", status=200, count=1,
                           content_type="application/json",
                           body=self.steps_body([
                               {"step_type": "stop-installation", "step_id": "stop-installation-00000001",
                                "args": ["extra"]},
                               {"step_type": "inventory", "step_id": "inventory-00000002", "args": ["not-a-uuid"]},
                               {"step_type": "execute", "step_id": "execute-00000003", "args": []}]))
        got = wait_for(lambda: {r["body"]["step_id"]: r["body"] for r in self.reqs(operation="v2PostStepReply")
                                if r["body"].get("step_id", "").endswith(("00000001", "00000002", "00000003"))}
                       if len([r for r in self.reqs(operation="v2PostStepReply")
                               if r["body"].get("step_id", "").endswith(("00000001", "00000002", "00000003"))]) == 3
                       else None, what="three replies")
        self.assertEqual(got["stop-installation-00000001"]["error"], "stop-installation cmd accepts only 0 params")
        self.assertEqual(got["inventory-00000002"]["exit_code"], -1)
        self.assertEqual(got["execute-00000003"]["error"], "failed to find action for step type execute")
        self.stop_ok(a)


    def test_inventory_size_arguments_of_newer_services(self):
        a, host_id = self.registered()
        self.svc.add_fault(path="/instructions$", method="GET", status=200, count=1,
                           content_type="application/json",
                           body=self.steps_body([
                               {"step_type": "inventory", "step_id": "inventory-0000000a",
                                "args": [host_id, "--disk-min-size=1000000000000000"]},
                               {"step_type": "inventory", "step_id": "inventory-0000000b",
                                "args": [host_id, "--output-max-size=200"]},
                               {"step_type": "inventory", "step_id": "inventory-0000000c",
                                "args": [host_id, "--bogus=1"]}]))
        want = ("inventory-0000000a", "inventory-0000000b", "inventory-0000000c")
        got = wait_for(lambda: (lambda d: d if len(d) == 3 else None)(
            {r["body"]["step_id"]: r for r in self.reqs(operation="v2PostStepReply")
             if r["body"].get("step_id") in want}), what="three inventory replies")
        small = got["inventory-0000000a"]
        inv = json.loads(small["body"]["output"])
        self.assertEqual(inv["disks"], [])
        self.assertEqual(inv["truncation"]["type"], "partial")
        self.assertEqual(small["step_reply"]["output_errors"], [])
        full = got["inventory-0000000b"]
        inv = json.loads(full["body"]["output"])
        self.assertEqual(inv["truncation"]["type"], "full")
        self.assertEqual(sorted(inv), ["cpu", "hostname", "memory", "system_vendor", "truncation"])
        self.assertEqual(full["step_reply"]["output_errors"], [])
        bad = got["inventory-0000000c"]["body"]
        self.assertEqual(bad["exit_code"], -1)
        self.assertEqual(bad["error"], "inventory: invalid argument '--bogus=1'")
        self.stop_ok(a)


class DryRun(AgentTestCase):
    def test_fake_reboot_marker_stops_the_agent(self):
        marker = os.path.join(self.tmp, "rebooted")
        host_id = str(uuid.uuid4())
        a = self.agent("--dry-run", "--force-id", host_id, "--force-hostname", "dry-1",
                       "--force-mac", "02:00:00:00:00:01", "--forced-ipv4", "198.51.100.51",
                       "--fake-reboot-marker-path", marker)
        reply = wait_for(lambda: [r for r in self.reqs(operation="v2PostStepReply")
                                  if r["body"].get("step_type") == "inventory"], what="inventory")[0]
        self.assertEqual(self.reqs(operation="v2RegisterHost")[0]["body"]["host_id"], host_id)
        inv = json.loads(reply["body"]["output"])
        self.assertEqual(inv["hostname"], "dry-1")
        open(marker, "w").close()
        self.assertEqual(a.proc.wait(15), 0, a.output())


class Soak(AgentTestCase):
    # the Python service validates every body: poll at a pace it sustains for 50 hosts.
    # The steps whose replies grow with the fleet (a connectivity-check of 50 hosts names
    # 49 others, validated in Python for each host every round) or that probe the network
    # are disabled as DISABLED_STEPS does on a real service: they are proven in
    # tests/agent/steps (fleet test); here the point is 50 agents polling, registering,
    # replying validly and stopping cleanly.
    scenario = {"settings": {"next_instruction_seconds": 5, "min_disk_size_gb": 1, "min_cpu_cores": 1,
                             "min_ram_mib": 256,
                             "disabled_steps": ["connectivity-check", "free-network-addresses",
                                                "domain-resolution", "ntp-synchronizer", "verify-vips",
                                                "tang-connectivity-check"]}}

    def test_many_dry_run_agents(self):
        seconds = float(os.environ.get("CRADLE_SOAK_SECONDS", "120"))
        count = int(os.environ.get("CRADLE_SOAK_AGENTS", "50"))
        ids = [str(uuid.uuid4()) for _ in range(count)]
        for i, hid in enumerate(ids):
            self.agent("--dry-run", "--force-id", hid, "--force-hostname", "soak-%03d" % i,
                       "--force-mac", "02:00:00:00:%02x:%02x" % (i // 256, i % 256),
                       "--forced-ipv4", "198.51.100.%d" % (100 + i % 100))
        end = time.time() + seconds
        while time.time() < end:
            dead = [a for a in self.agents if not a.alive()]
            self.assertEqual(dead, [], "agents died:\n" + "\n".join(d.output()[-3000:] for d in dead))
            time.sleep(1)
        for a in self.agents:
            self.stop_ok(a)
        replies = self.reqs(operation="v2PostStepReply")
        registered = {r["body"]["host_id"] for r in self.reqs(operation="v2RegisterHost") if r["status"] == 201}
        self.assertEqual(registered, set(ids))
        bad = [r for r in replies if r["status"] != 204 or r["step_reply"]["output_errors"]]
        self.assertEqual(bad, [], "invalid replies: %s" % json.dumps(bad[:3], indent=1)[:4000])
        invalid_requests = [r for r in self.reqs() if r.get("validation_errors")]
        self.assertEqual(invalid_requests, [])
        self.assertGreaterEqual(len(self.reqs(operation="v2GetNextSteps")), count * 2)


if __name__ == "__main__":
    names = sys.argv[1:]
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    if names:
        for n in names:
            suite.addTests(loader.loadTestsFromName(n, sys.modules[__name__]))
    else:
        suite = loader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
