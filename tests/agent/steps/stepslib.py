#!/usr/bin/python3
"""Shared pieces of the step tests.

* step(): runs one step handler through the step-run helper (optionally
  inside a network namespace, a private mount namespace, with --dry-run or
  --lab-nics) and returns {"exit_code", "output", "error", "end_runner"};
* check_output(): the reference service's own check of a step reply's
  output: Go's json.Unmarshal into the model (strict) and go-swagger's
  validation of swagger.yaml's model (tests/service/refmodel.py);
* Lab: network namespaces joined by veth pairs, removed at exit (also on
  failures and signals), with the documentation address ranges only.

Environment: CRADLE_SOURCE_ROOT, CRADLE_BUILD_ROOT (meson sets both).
"""
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BUILD = os.environ.get("CRADLE_BUILD_ROOT", os.path.join(SRC, "build"))
STEP_RUN = os.path.join(BUILD, "tests", "agent", "steps", "step-run")
sys.path.insert(0, os.path.join(SRC, "tests", "service"))


def skip(reason):
    print("SKIP: " + reason)
    sys.stdout.flush()
    sys.exit(77)


def require_root():
    if os.geteuid() != 0:
        skip("needs root (network namespaces, raw sockets, mounts)")
    if not shutil.which("ip"):
        skip("iproute2 is not installed")


_model = None


def model():
    """The reference service's model, for its step output checks."""
    global _model
    if _model is None:
        try:
            import refmodel
            import refservice
            from swaggerval import Swagger
        except ImportError as e:
            skip("cannot load the reference service (python3-yaml missing?): %s" % e)
        try:
            path = refservice.find_swagger()
        except FileNotFoundError as e:
            skip(str(e))
        _model = refmodel.Model(Swagger(path))
    return _model


def check_output(step_type, output):
    """Raises AssertionError unless output unmarshals into the step's model
    and validates (what the reference service checks on every reply)."""
    value, uerr, verrs, unknown = model().check_output(step_type, output)
    problems = ([uerr] if uerr else []) + list(verrs) + ["unknown key %s" % k for k in unknown]
    if problems:
        raise AssertionError("%s output does not validate: %s\n%s" % (step_type, problems, output))
    return json.loads(output)


last_log = ""  # the step-run helper's log (stderr) of the last step()


def step(step_type, *args, netns=None, dry_run=False, lab_nics=None, cacert=None, env=None, wrap=None,
         timeout=600):
    argv = [STEP_RUN]
    if dry_run:
        argv.append("--dry-run")
    if lab_nics:
        argv += ["--lab-nics", lab_nics]
    if cacert:
        argv += ["--cacert", cacert]
    argv += [step_type] + list(args)
    if wrap:
        argv = list(wrap) + argv
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    e = dict(os.environ)
    e["CRADLE_LOG_TARGET"] = "stderr"
    e.update(env or {})
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, timeout=timeout)
    global last_log
    last_log = p.stderr.decode(errors="replace")
    sys.stderr.write(last_log)
    if p.returncode != 0:
        raise AssertionError("step-run failed (%d): %s" % (p.returncode, p.stderr.decode(errors="replace")))
    return json.loads(p.stdout)


class Lab(object):
    """Network namespaces made for one test program; deleted at exit."""

    def __init__(self):
        self.tag = "cst" + uuid.uuid4().hex[:8]   # getpid() is 1 in the PID namespace
        self.namespaces = []
        self.pids = []
        self.hurry = False
        self.tmp = tempfile.mkdtemp(prefix="cradle-steps-")
        atexit.register(self.close)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self._on_signal)

    def _on_signal(self, signum, frame):
        # meson follows its SIGTERM with SIGKILL a moment later: no graceful
        # waits, only what leaves nothing behind (the namespaces' names)
        self.hurry = True
        self.close()
        sys.exit(128 + signum)

    def ns(self, name):
        full = "%s-%s" % (self.tag, name)
        r = subprocess.run(["ip", "netns", "add", full], stderr=subprocess.PIPE)
        if r.returncode != 0:
            skip("cannot create a network namespace: %s" % r.stderr.decode().strip())
        self.namespaces.append(full)
        self.ip(full, "link", "set", "lo", "up")
        return full

    def ip(self, ns, *args):
        subprocess.run(["ip", "-n", ns] + list(args), check=True)

    def ipj(self, ns, *args):
        return json.loads(subprocess.run(["ip", "-j", "-n", ns] + list(args), check=True,
                                         stdout=subprocess.PIPE).stdout)

    def mac(self, ns, dev):
        return self.ipj(ns, "link", "show", dev)[0]["address"]

    def veth(self, ns_a, dev_a, ns_b, dev_b):
        self.ip(ns_a, "link", "add", dev_a, "type", "veth", "peer", "name", dev_b, "netns", ns_b)
        self.ip(ns_a, "link", "set", dev_a, "up")
        self.ip(ns_b, "link", "set", dev_b, "up")

    def addr(self, ns, dev, cidr):
        if ":" in cidr:
            self.ip(ns, "addr", "add", cidr, "dev", dev, "nodad")
        else:
            self.ip(ns, "addr", "add", cidr, "dev", dev)

    def spawn(self, ns, argv, **kw):
        """A background process in the namespace, killed at exit."""
        full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
        p = subprocess.Popen(full, **kw)
        self.pids.append(p)
        return p

    def httpd(self, ns, routes, tls=None, bind="127.0.0.1", name="httpd"):
        """steps-httpd.py serving routes (dict) in the namespace; returns
        (port, record file). tls: (cert, key) or None."""
        base = os.path.join(self.tmp, name)
        with open(base + ".routes", "w") as f:
            json.dump(routes, f)
        port_file = base + ".port"
        argv = ["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "steps-httpd.py"),
                "--routes", base + ".routes", "--port-file", port_file, "--bind", bind, "--record", base + ".jsonl"]
        if tls:
            argv += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        p = self.spawn(ns, argv, stderr=open(base + ".log", "w"))
        for _ in range(150):
            if os.path.exists(port_file):
                return int(open(port_file).read()), base + ".jsonl"
            if p.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError("steps-httpd did not start: " + open(base + ".log").read())

    def certs(self):
        """A throw-away CA and a server certificate for 127.0.0.1/localhost
        (tests/helpers/mkcerts.sh)."""
        d = os.path.join(self.tmp, "pki")
        subprocess.run(["sh", os.path.join(SRC, "tests", "helpers", "mkcerts.sh"), d], check=True)
        return d

    def pids_in(self, ns):
        """The processes in network namespace ns (ip netns pids), alive."""
        out = subprocess.run(["ip", "netns", "pids", ns], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        return [int(p) for p in out.split() if os.path.exists("/proc/%d" % int(p))]

    def close(self):
        for p in self.pids:
            if p.poll() is None:
                if self.hurry:
                    p.kill()
                else:
                    p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.pids = []
        for ns in self.namespaces:
            # whatever a test started in its namespaces ends with them (a
            # daemon a tool forked would keep the namespace alive)
            for pid in self.pids_in(ns):
                if pid == os.getpid():      # a test that setns()ed into its lab
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        self.namespaces = []
        if self.tmp and os.environ.get("TEST_KEEP") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def run_tests(tests):
    """Runs [(name, fn)] in order; prints one line each; exits 0/1."""
    failed = 0
    only = os.environ.get("TEST_FILTER")
    for name, fn in tests:
        if only and only not in name:
            continue
        try:
            fn()
            print("ok   %s" % name)
        except Exception as e:  # noqa: BLE001 - report every failure, go on
            failed += 1
            import traceback
            traceback.print_exc()
            print("FAIL %s: %s" % (name, e))
        sys.stdout.flush()
    print("%d failed" % failed)
    sys.exit(1 if failed else 0)
