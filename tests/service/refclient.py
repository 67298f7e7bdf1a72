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
    refclient.py --port-file F user POST /v2/clusters '{"name": ...}'   (userAuth: Authorization: Bearer)
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


class HubClient(object):
    """The user-facing REST API cradle-hub calls (userAuth: the token as
    `Authorization: Bearer`), over a RefService (started, attached, or the
    real service of CRADLE_TEST_SERVICE_URL).  Calls return (status, body):
    body is the decoded JSON, or bytes when the answer is not JSON.  The
    last answer's headers are in self.headers.  set_host()/set_cluster()
    need the fake's control API (they skip on a real service)."""

    OBSERVED_PULL_SECRET = ('{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl","email":"dev@example.com"},'
                            '"registry.redhat.io":{"auth":"ZmFrZTpmYWtl","email":"dev@example.com"},'
                            '"cloud.openshift.com":{"auth":"ZmFrZTpmYWtl","email":"dev@example.com"}}}')
    SSH_KEY = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1Yg6s2pT6fYzKx9k4JQm3m8c0zQ0v8V0f3bq9n8jF "
               "dev@example.com")

    def __init__(self, svc):
        self.svc = svc
        self.headers = {}

    @property
    def real(self):
        return bool(getattr(self.svc, "real", False))

    def call(self, method, path, body=None, headers=None, accept="application/json"):
        """path below /api/assisted-install (or an absolute URL path when it
        does not start with /v2/)."""
        hdrs = {}
        if accept:
            hdrs["Accept"] = accept
        if self.svc.token:
            hdrs["Authorization"] = "Bearer " + self.svc.token
        hdrs.update(headers or {})
        full = BASE + path if path.startswith("/v2/") else path
        r = self.svc.raw(method, full, body, hdrs)
        self.headers = r.headers
        ct = r.headers.get("Content-Type", "")
        if r.body and (ct.startswith("application/json") or r.status >= 400):
            try:
                return r.status, r.json()
            except ValueError:
                pass
        return r.status, r.body

    @staticmethod
    def unique(prefix):
        import uuid
        return "%s-%s" % (prefix, uuid.uuid4().hex[:8])

    REFUSES_CONTROL_PLANE_COUNT = 'json: unknown field "control_plane_count"'

    def api_generation(self):
        """The generation of the service's API, learned from what the
        service says, as cradle-hub learns it (hub_service_api_learn): a
        cluster registration that names control_plane_count is refused for
        that field by the late-2023 service ("2023"); a service that
        registers it answers with control_plane_count in the 2026 one
        ("head"), without it in the reference service's default generation
        (None: the late-2023 answers, request bodies read with the 2026
        models). A cluster so registered is deregistered at once; the
        answer is kept for the next calls."""
        if not hasattr(self, "_api_generation"):
            st, body = self.register_cluster(control_plane_count=3)
            if st == 400 and self.REFUSES_CONTROL_PLANE_COUNT in str((body or {}).get("message")):
                self._api_generation = "2023"
            elif st == 201:
                self.deregister_cluster(body["id"])
                self._api_generation = "head" if "control_plane_count" in body else None
            else:
                raise RuntimeError("cannot learn the service's API generation: a registration answered %s %s"
                                   % (st, str(body)[:500]))
        return self._api_generation

    # -- clusters -------------------------------------------------------------
    def register_cluster(self, **params):
        body = {"name": self.unique("hub"), "openshift_version": "4.13", "base_dns_domain": "example.com",
                "pull_secret": self.OBSERVED_PULL_SECRET}
        body.update(params)
        return self.call("POST", "/v2/clusters", body)

    def cluster(self, cluster_id):
        return self.call("GET", "/v2/clusters/%s" % cluster_id)

    def update_cluster(self, cluster_id, **params):
        return self.call("PATCH", "/v2/clusters/%s" % cluster_id, params)

    def deregister_cluster(self, cluster_id):
        return self.call("DELETE", "/v2/clusters/%s" % cluster_id)

    def install_cluster(self, cluster_id):
        return self.call("POST", "/v2/clusters/%s/actions/install" % cluster_id)

    def update_install_config(self, cluster_id, overrides):
        """overrides: the install-config patch (an object, or its JSON text);
        the body is that text as a JSON string."""
        text = overrides if isinstance(overrides, str) else json.dumps(overrides)
        return self.call("PATCH", "/v2/clusters/%s/install-config" % cluster_id, json.dumps(text),
                         headers={"Content-Type": "application/json"})

    # -- infra-envs -----------------------------------------------------------
    def register_infra_env(self, **params):
        body = {"name": self.unique("hub-ie"), "pull_secret": self.OBSERVED_PULL_SECRET,
                "ssh_authorized_key": self.SSH_KEY, "image_type": "full-iso"}
        body.update(params)
        return self.call("POST", "/v2/infra-envs", body)

    def infra_env(self, ie_id):
        return self.call("GET", "/v2/infra-envs/%s" % ie_id)

    def list_infra_envs(self, cluster_id=None):
        return self.call("GET", "/v2/infra-envs" + ("?cluster_id=%s" % cluster_id if cluster_id else ""))

    def update_infra_env(self, ie_id, **params):
        return self.call("PATCH", "/v2/infra-envs/%s" % ie_id, params)

    def deregister_infra_env(self, ie_id):
        return self.call("DELETE", "/v2/infra-envs/%s" % ie_id)

    def infra_env_file(self, ie_id, file_name, **query):
        import urllib.parse
        q = urllib.parse.urlencode(dict(file_name=file_name, **query))
        return self.call("GET", "/v2/infra-envs/%s/downloads/files?%s" % (ie_id, q), accept=None)

    # -- hosts ----------------------------------------------------------------
    def hosts(self, ie_id):
        return self.call("GET", "/v2/infra-envs/%s/hosts" % ie_id)

    def host(self, ie_id, host_id):
        return self.call("GET", "/v2/infra-envs/%s/hosts/%s" % (ie_id, host_id))

    def update_host(self, ie_id, host_id, **params):
        return self.call("PATCH", "/v2/infra-envs/%s/hosts/%s" % (ie_id, host_id), params)

    def bind_host(self, ie_id, host_id, cluster_id):
        return self.call("POST", "/v2/infra-envs/%s/hosts/%s/actions/bind" % (ie_id, host_id),
                         {"cluster_id": cluster_id})

    def unbind_host(self, ie_id, host_id):
        return self.call("POST", "/v2/infra-envs/%s/hosts/%s/actions/unbind" % (ie_id, host_id))

    def deregister_host(self, ie_id, host_id):
        return self.call("DELETE", "/v2/infra-envs/%s/hosts/%s" % (ie_id, host_id))

    # -- events ---------------------------------------------------------------
    def events(self, **query):
        """v2ListEvents; list values (host_ids, severities, categories) are
        sent comma-separated.  Returns (status, events); the counts are in
        self.headers (Event-Count, Severity-Count-*)."""
        import urllib.parse
        q = {k: ",".join(v) if isinstance(v, (list, tuple)) else
             (str(v).lower() if isinstance(v, bool) else v) for k, v in query.items()}
        return self.call("GET", "/v2/events" + ("?" + urllib.parse.urlencode(q) if q else ""))

    # -- the assisted-installer-controller's calls (agentAuth: X-Secret-Key) -----
    # The controller's calls, for the service's own tests that play its part
    # (the hub's rehearsal runs cradle's controller itself).
    TEST_INGRESS_CA = """-----BEGIN CERTIFICATE-----
MIIBrTCCAVOgAwIBAgIUfX0g5gM8khl6fsPHEQnaq6/xnrswCgYIKoZIzj0EAwIw
KzEpMCcGA1UEAwwgcmVmc2VydmljZS10ZXN0LWluZ3Jlc3Mtb3BlcmF0b3IwIBcN
MjYxMTI0MjEwODQ2WhgPMjEyNjEwMzEyMTA4NDZaMCsxKTAnBgNVBAMMIHJlZnNl
cnZpY2UtdGVzdC1pbmdyZXNzLW9wZXJhdG9yMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEwxy4pkY1OQ5iaD9IyHh0e4UVm/hBXuQvMbFG0gDC6EjHTb9MtUAnOR2N
pXtIDxWzu+3i81BYJ08WQKq6ozYOOqNTMFEwHQYDVR0OBBYEFLwDt5wCqWRZ1vuT
mz/4plY0XUfHMB8GA1UdIwQYMBaAFLwDt5wCqWRZ1vuTmz/4plY0XUfHMA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgMADqjDGcwG9fgEAfwa/CeFXF
6EfbMesWLd95xduH62sCIQDUH889Pro78cOFiTm581cg0sedHwynIH4wmjczqACR
lA==
-----END CERTIFICATE-----
"""

    def agent_call(self, method, path, body=None):
        hdrs = {"Accept": "application/json"}
        if self.svc.token:
            hdrs["X-Secret-Key"] = self.svc.token
        if isinstance(body, str):
            # a body whose schema is a string travels as a JSON string
            body = json.dumps(body)
            hdrs["Content-Type"] = "application/json"
        r = self.svc.raw(method, BASE + path, body, hdrs)
        self.headers = r.headers
        try:
            return r.status, (r.json() if r.body else r.body)
        except ValueError:
            return r.status, r.body

    def host_progress(self, ie_id, host_id, stage, info=""):
        body = {"current_stage": stage}
        if info:
            body["progress_info"] = info
        return self.agent_call("PUT", "/v2/infra-envs/%s/hosts/%s/progress" % (ie_id, host_id), body)

    def upload_ingress_cert(self, cluster_id, pem=None):
        return self.agent_call("POST", "/v2/clusters/%s/uploads/ingress-cert" % cluster_id,
                               pem if pem is not None else self.TEST_INGRESS_CA)

    def report_operator(self, cluster_id, name, status="available", info="All is well", version=None):
        body = {"name": name, "status": status, "status_info": info}
        if version:
            body["version"] = version
        return self.agent_call("PUT", "/v2/clusters/%s/monitored-operators" % cluster_id, body)

    def complete_installation(self, cluster_id, success=True, error_info=None):
        body = {"is_success": success}
        if error_info:
            body["error_info"] = error_info
        return self.agent_call("POST", "/v2/clusters/%s/actions/complete-installation" % cluster_id, body)

    def finish_installation(self, cluster_id, version=None):
        """What the controller does once the masters are up: the finalizing
        stage, the ingress CA, every monitored builtin operator available,
        then complete-installation.  Returns the list of (call, status)."""
        done = []
        st, ops = self.agent_call("GET", "/v2/clusters/%s/monitored-operators" % cluster_id)
        done.append(("monitored-operators", st))
        done.append(("progress", self.agent_call("PUT", "/v2/clusters/%s/progress" % cluster_id,
                                                 {"finalizing_stage": "Waiting for cluster operators"})[0]))
        done.append(("ingress-cert", self.upload_ingress_cert(cluster_id)[0]))
        for op in ops if st == 200 else []:
            if op.get("operator_type") == "builtin":
                done.append(("operator " + op["name"], self.report_operator(cluster_id, op["name"],
                                                                            version=version)[0]))
        done.append(("complete-installation", self.complete_installation(cluster_id)[0]))
        return done

    # -- the fake's control API (skips on a real service) ----------------------
    def set_host(self, host_id, **fields):
        return self.svc.set_host(host_id, **fields)

    def set_cluster(self, cluster_id, **fields):
        return self.svc.control("POST", "/clusters/%s" % cluster_id, fields)


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
    u = sub.add_parser("user", help="v2 API call as a user (Authorization: Bearer): METHOD PATH [JSON]")
    u.add_argument("method")
    u.add_argument("path")
    u.add_argument("body", nargs="?")
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
    if opts.cmd in ("ctl", "api", "user"):
        body = json.loads(opts.body) if opts.body else None
        if opts.cmd == "ctl":
            r = svc.raw(opts.method.upper(), "/__control" + opts.path, body)
        else:
            hdrs = {"Accept": "application/json"}
            if opts.token and opts.cmd == "api":
                hdrs["X-Secret-Key"] = opts.token
            elif opts.token:
                hdrs["Authorization"] = "Bearer " + opts.token
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
