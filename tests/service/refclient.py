#!/usr/bin/python3
"""Client helper for the reference service (tests/service/refservice.py).

As a library (Python tests):

    from refclient import RefService
    with RefService(scenario={...}, token="t0k") as svc:      # starts refservice.py
        st, body = svc.api("POST", "/v2/infra-envs/%s/hosts" % ie, {"host_id": hid})
        svc.control("POST", "/faults", {"path": "/instructions$", "status": 503, "count": 2})
        svc.install(cluster_id)
        svc.requests(path="/progress$")

    RefService.attach("http://127.0.0.1:PORT") talks to one that is already running.

Against a real assisted-service: when CRADLE_TEST_SERVICE_URL is set (and
CRADLE_TEST_SERVICE_TOKEN when that service wants auth), start() starts
nothing and uses that URL and token; svc.real is True. Whatever needs the
fake's control API (a scenario, control(), install(), set_host(), hosts(),
requests(), faults, logs(), reset(), ...) raises unittest.SkipTest naming
what needed it; svc.need_control("why") does the same for a test that
relies on the fake's behaviour without calling it. Tests use svc.url and
svc.token (never their own token constant), so they run unchanged on both.

As a command (shell tests):

    refclient.py start --port 0 --port-file F [--scenario S] [other refservice options]   (foreground)
    refclient.py --url http://127.0.0.1:PORT ctl GET /hosts
    refclient.py --port-file F ctl POST /clusters/<id>/install '{"prepare": false}'
    refclient.py --port-file F api POST /v2/infra-envs/<ie>/hosts '{"host_id": "..."}'
    refclient.py --port-file F wait-status <host_id> installed [timeout_s]
    refclient.py --port-file F url          (the service's URL: the real one when CRADLE_TEST_SERVICE_URL is set)

Exit status of ctl/api: 0 if HTTP status < 400, 1 otherwise; the body is printed.
With CRADLE_TEST_SERVICE_URL set: `start` starts nothing (exit 0; exit 77
with --scenario), `api` goes to that service with CRADLE_TEST_SERVICE_TOKEN,
and `ctl`/`wait-status` exit 77 (skip), saying why.
Standard library only.
"""

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = "/api/assisted-install"
SERVICE = os.path.join(HERE, "refservice.py")
URL_ENV = "CRADLE_TEST_SERVICE_URL"
TOKEN_ENV = "CRADLE_TEST_SERVICE_TOKEN"
SKIP_EXIT = 77


def real_service():
    """(url, token) of the real assisted-service to test against
    (CRADLE_TEST_SERVICE_URL, CRADLE_TEST_SERVICE_TOKEN), or None."""
    url = os.environ.get(URL_ENV, "").strip()
    if not url:
        return None
    return url.rstrip("/"), os.environ.get(TOKEN_ENV) or None


def control_skip_reason(what):
    return "needs the reference service's control API (%s); %s is set" % (what, URL_ENV)


class HTTPResult(object):
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8")) if self.body else None


def request(url, method="GET", body=None, headers=None, cafile=None, timeout=30):
    """One HTTP request with urllib; returns HTTPResult (also for 4xx/5xx)."""
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode("utf-8")
            hdrs.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            data = body.encode("utf-8")
        else:
            data = body
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    ctx = None
    if url.startswith("https:"):
        ctx = ssl.create_default_context(cafile=cafile) if cafile else ssl.create_default_context()
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            return HTTPResult(r.status, dict(r.headers.items()), r.read())
    except urllib.error.HTTPError as e:
        return HTTPResult(e.code, dict(e.headers.items()), e.read())


class RefService(object):
    def __init__(self, scenario=None, token=None, tls=None, extra_args=None, workdir=None, bind="127.0.0.1",
                 quiet=True, python="/usr/bin/python3"):
        self.scenario = scenario
        self.token = token
        self.tls = tls            # (certfile, keyfile, cafile)
        self.extra_args = list(extra_args or [])
        self.workdir = workdir
        self.bind = bind
        self.quiet = quiet
        self.python = python
        self.proc = None
        self.url = None
        self.cafile = tls[2] if tls else None
        self.record_path = None
        self.returncode = None
        self.real = False

    @classmethod
    def attach(cls, url, token=None, cafile=None):
        svc = cls(token=token)
        svc.url = url.rstrip("/")
        svc.cafile = cafile
        return svc

    # -- process ----------------------------------------------------------
    def start(self, timeout=20):
        real = real_service()
        if real:
            if self.scenario is not None:
                raise unittest.SkipTest(control_skip_reason("a scenario"))
            self.url, self.token = real
            self.real = True
            return self
        import tempfile
        if self.workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="refservice-")
            self.workdir = self._tmp.name
        port_file = os.path.join(self.workdir, "port")
        self.record_path = os.path.join(self.workdir, "requests.jsonl")
        args = [self.python, SERVICE, "--bind", self.bind, "--port", "0", "--port-file", port_file,
                "--record", self.record_path, "--logs-dir", os.path.join(self.workdir, "logs")]
        if self.quiet:
            args.append("--quiet")
        if self.scenario is not None:
            path = os.path.join(self.workdir, "scenario.json")
            with open(path, "w") as f:
                json.dump(self.scenario, f)
            args += ["--scenario", path]
        if self.token:
            args += ["--token", self.token]
        if self.tls:
            args += ["--tls-cert", self.tls[0], "--tls-key", self.tls[1]]
        args += self.extra_args
        self.stderr_path = os.path.join(self.workdir, "stderr")
        self._stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._stderr)
        deadline = time.monotonic() + timeout
        while not os.path.exists(port_file):
            if self.proc.poll() is not None:
                raise RuntimeError("refservice exited with %s: %s" % (self.proc.returncode, self.stderr()))
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("refservice did not start: %s" % self.stderr())
            time.sleep(0.05)
        with open(port_file) as f:
            port = int(f.read().strip())
        host = "[%s]" % self.bind if ":" in self.bind else self.bind
        self.url = "%s://%s:%d" % ("https" if self.tls else "http", host, port)
        return self

    def stderr(self):
        try:
            with open(self.stderr_path) as f:
                return f.read()
        except (OSError, AttributeError):
            return ""

    def stop(self, timeout=10):
        if self.real:
            return None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self.returncode = self.proc.returncode
            self._stderr.close()
        self.proc = None
        return self.returncode

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        if getattr(self, "_tmp", None):
            self._tmp.cleanup()

    # -- API ----------------------------------------------------------------
    def raw(self, method, path, body=None, headers=None):
        """Request on the service's origin: path is absolute (e.g. /api/...)."""
        return request(self.url + path, method, body, headers, self.cafile)

    def api(self, method, path, body=None, headers=None, auth=True):
        """A v2 API call: path below /api/assisted-install. Returns (status, json-or-bytes)."""
        hdrs = {"Accept": "application/json"}
        if auth and self.token:
            hdrs["X-Secret-Key"] = self.token
        hdrs.update(headers or {})
        r = self.raw(method, BASE + path, body, hdrs)
        try:
            return r.status, r.json()
        except ValueError:
            return r.status, r.body

    def need_control(self, what):
        """SkipTest on a real service: the test relies on the fake for what."""
        if self.real:
            raise unittest.SkipTest(control_skip_reason(what))

    def control(self, method, path, body=None):
        self.need_control("%s %s" % (method, path))
        r = self.raw(method, "/__control" + path, body)
        if r.status >= 400:
            raise RuntimeError("control %s %s: %d %s" % (method, path, r.status, r.body[:500]))
        ct = r.headers.get("Content-Type", "")
        return r.json() if ct.startswith("application/json") else r.body

    # conveniences
    def register(self, infra_env_id, host_id, version="quay.io/edge-infrastructure/assisted-installer-agent:latest"):
        return self.api("POST", "/v2/infra-envs/%s/hosts" % infra_env_id,
                        {"host_id": host_id, "discovery_agent_version": version},
                        {"discovery_agent_version": version})

    def instructions(self, infra_env_id, host_id):
        return self.api("GET", "/v2/infra-envs/%s/hosts/%s/instructions?timestamp=%d" % (
            infra_env_id, host_id, int(time.time())))

    def reply(self, infra_env_id, host_id, step, output="", exit_code=0, error=""):
        body = {"step_id": step.get("step_id", ""), "step_type": step["step_type"]}
        if exit_code:
            body["exit_code"] = exit_code
        if output:
            body["output"] = output if isinstance(output, str) else json.dumps(output)
        if error:
            body["error"] = error
        return self.api("POST", "/v2/infra-envs/%s/hosts/%s/instructions" % (infra_env_id, host_id), body)

    def progress(self, infra_env_id, host_id, stage, info=""):
        body = {"current_stage": stage}
        if info:
            body["progress_info"] = info
        return self.api("PUT", "/v2/infra-envs/%s/hosts/%s/progress" % (infra_env_id, host_id), body)

    def reset(self, scenario=None):
        return self.control("POST", "/reset", {"scenario": scenario} if scenario is not None else {})

    def install(self, cluster_id, prepare=False, force=False, bootstrap_host_id=None):
        body = {"prepare": prepare, "force": force}
        if bootstrap_host_id:
            body["bootstrap_host_id"] = bootstrap_host_id
        return self.control("POST", "/clusters/%s/install" % cluster_id, body)

    def set_host(self, host_id, **fields):
        return self.control("POST", "/hosts/%s" % host_id, fields)

    def host(self, host_id):
        return self.control("GET", "/hosts/%s" % host_id)

    def hosts(self):
        return self.control("GET", "/hosts")

    def add_fault(self, **rule):
        return self.control("POST", "/faults", rule)[0]

    def clear_faults(self):
        return self.control("DELETE", "/faults")

    def requests(self, since=0, path=None, method=None, operation=None):
        q = ["since=%d" % since]
        import urllib.parse
        if path:
            q.append("path=" + urllib.parse.quote(path))
        if method:
            q.append("method=" + method)
        if operation:
            q.append("operation=" + operation)
        return self.control("GET", "/requests?" + "&".join(q))

    def logs(self):
        return self.control("GET", "/logs")


# ---------------------------------------------------------------------------


def _cli(argv):
    import argparse
    if argv[:1] == ["start"]:
        # everything after "start" belongs to refservice.py
        rest = [x for x in argv[1:] if x != "--"]
        if real_service():
            if any(x == "--scenario" or x.startswith("--scenario=") for x in rest):
                sys.stderr.write("SKIP: %s\n" % control_skip_reason("refservice.py --scenario"))
                return SKIP_EXIT
            sys.stderr.write("refclient: %s is set: no refservice started (refclient.py url names the service)\n"
                             % URL_ENV)
            return 0
        os.execv("/usr/bin/python3", ["/usr/bin/python3", SERVICE] + rest)
    ap = argparse.ArgumentParser(description="talk to a running refservice")
    ap.add_argument("--url", help="service origin, e.g. http://127.0.0.1:8090")
    ap.add_argument("--port-file", help="read the port from this file (http://127.0.0.1:PORT)")
    ap.add_argument("--token", default=os.environ.get("REFSERVICE_TOKEN"))
    ap.add_argument("--cacert")
    sub = ap.add_subparsers(dest="cmd")
    c = sub.add_parser("ctl", help="control API call: METHOD PATH [JSON]")
    c.add_argument("method")
    c.add_argument("path")
    c.add_argument("body", nargs="?")
    a = sub.add_parser("api", help="v2 API call: METHOD PATH [JSON] (path below /api/assisted-install)")
    a.add_argument("method")
    a.add_argument("path")
    a.add_argument("body", nargs="?")
    w = sub.add_parser("wait-status", help="poll the control API until a host has a status")
    w.add_argument("host_id")
    w.add_argument("status")
    w.add_argument("timeout", nargs="?", type=float, default=60.0)
    sub.add_parser("start", help="run refservice.py in the foreground: start [refservice options]")
    sub.add_parser("url", help="print the service's URL")
    opts = ap.parse_args(argv)
    real = real_service()
    if real and opts.cmd in ("ctl", "wait-status"):
        sys.stderr.write("SKIP: %s\n" % control_skip_reason("refclient.py %s" % opts.cmd))
        return SKIP_EXIT
    url = opts.url
    if real:
        url = real[0]
        if opts.token is None:
            opts.token = real[1]
    if not url and opts.port_file:
        try:
            with open(opts.port_file) as f:
                url = "http://127.0.0.1:%d" % int(f.read().strip())
        except (OSError, ValueError) as e:
            sys.stderr.write("refclient: no port in %s: %s\n" % (opts.port_file, e))
            return 2
    if not url:
        ap.error("--url or --port-file is required")
    if opts.cmd == "url":
        print(url)
        return 0
    svc = RefService.attach(url, token=opts.token, cafile=opts.cacert)
    if opts.cmd in ("ctl", "api"):
        body = json.loads(opts.body) if opts.body else None
        if opts.cmd == "ctl":
            r = svc.raw(opts.method.upper(), "/__control" + opts.path, body)
        else:
            hdrs = {"Accept": "application/json"}
            if opts.token:
                hdrs["X-Secret-Key"] = opts.token
            r = svc.raw(opts.method.upper(), BASE + opts.path, body, hdrs)
        sys.stdout.write(r.body.decode("utf-8", "replace"))
        if r.body and not r.body.endswith(b"\n"):
            sys.stdout.write("\n")
        return 0 if r.status < 400 else 1
    if opts.cmd == "wait-status":
        deadline = time.monotonic() + opts.timeout
        while True:
            r = svc.raw("GET", "/__control/hosts/%s" % opts.host_id)
            if r.status == 200 and r.json().get("status") == opts.status:
                return 0
            if time.monotonic() > deadline:
                sys.stderr.write("host %s: status %s, wanted %s\n" % (
                    opts.host_id, r.json().get("status") if r.status == 200 else r.status, opts.status))
                return 1
            time.sleep(0.2)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
