#!/usr/bin/python3
"""The single node's router probe after a failure (notes/controller.md §5.7,
upstream's logRouterStatus), for real, run by tests/helpers/in-netns.sh:

  - the controller runs in the network namespace in-netns.sh made (nic0,
    198.51.100.10/24, a default route the test adds so that the host has an
    outbound address), in a mount namespace of its own where a private
    /etc/hosts names the cluster's ingress canary (the resolver reads it);
  - the ingress canary is an HTTPS server on 198.51.100.10:443 with a
    self-signed certificate, the router's health check an HTTP server on
    198.51.100.10:80; both record what they were asked;
  - HTTP_PROXY and HTTPS_PROXY name a recording proxy: the probe must not
    use it;
  - the controller is the dry run (tests/controller/test_controller.py's
    Lab) of a single-node cluster on the reference service, which the test
    puts in error.

Asserts on the controller's log lines and the servers' records.
"""
import datetime
import http.server
import os
import ssl
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import test_controller  # noqa: E402
from test_controller import ForwardProxy, Lab, wait_for  # noqa: E402

ADDRESS = "198.51.100.10"
CANARY_HEALTH = "/health"
ROUTER_HEALTH = "/_______internal_router_healthz"
# what in-netns.sh's namespace lacks for an outbound address: a route
GATEWAY = "198.51.100.1"


class Server:
    """An HTTP(S) server on ADDRESS:port that answers GET with 200 and body,
    after delay seconds; it records (time, path, Host) of each request."""

    def __init__(self, port, body, tls_dir=None, delay=0):
        rec = self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                rec.append((time.time(), self.path, self.headers.get("Host")))
                time.sleep(delay)
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((ADDRESS, port), Handler)
        if tls_dir:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(os.path.join(tls_dir, "cert.pem"), os.path.join(tls_dir, "key.pem"))
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


SLOW_OC = r"""#!/bin/sh
# oc adm must-gather that takes a while, as the real one does
sleep "$SLOW_OC_SECONDS"
mkdir -p must-gather.local.1/gathered
echo gathered > must-gather.local.1/gathered/nodes.yaml
"""


def service_time(rec):
    return datetime.datetime.strptime(rec["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


class TestRouterProbe(Lab):
    @classmethod
    def setUpClass(cls):
        if not os.environ.get("CRADLE_TEST_NETNS"):
            raise unittest.SkipTest("needs the network namespace of tests/helpers/in-netns.sh")
        if subprocess.run(["ip", "-4", "route", "show", "default"], capture_output=True, text=True).stdout == "":
            subprocess.run(["ip", "route", "add", "default", "via", GATEWAY, "dev", "nic0"], check=True)
        super().setUpClass()
        cls.tls = os.path.join(cls.tmp, "tls")
        os.makedirs(cls.tls)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=router-default", "-keyout",
                        os.path.join(cls.tls, "key.pem"), "-out", os.path.join(cls.tls, "cert.pem")],
                       check=True, capture_output=True)

    def setUp(self):
        super().setUp()
        self.svc.need_control("a cluster in installing without agents, then in error")
        self.proxy = ForwardProxy({})
        self.addCleanup(self.proxy.stop)

    def servers(self, canary_delay=0):
        canary = Server(443, "healthy", self.tls, canary_delay)
        self.addCleanup(canary.stop)
        router = Server(80, "")
        self.addCleanup(router.stop)
        return canary, router

    def canary_host(self):
        return "canary-openshift-ingress-canary.apps.%s.example.com" % self.prefix

    def failed_single_node(self, control_plane_count="1", env=None, args=()):
        """The dry run of a single node that never reboots, its cluster put in
        error by the service: the controller's end, its log upload; a
        private /etc/hosts names the canary."""
        cid, ie, hosts = self.seed(masters=1)
        path, markers = self.hosts_file(hosts)
        started = os.path.join(self.tmp, self.prefix + "-started")
        open(started, "w").close()
        etc_hosts = os.path.join(self.tmp, self.prefix + "-etc-hosts")
        with open(etc_hosts, "w") as f:
            f.write("127.0.0.1 localhost\n::1 localhost\n%s %s\n" % (ADDRESS, self.canary_host()))
        wrapper = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                   'mount --bind "$0" /etc/hosts && exec "$@"', etc_hosts]
        e = {"DRY_CLUSTER_HOSTS_PATH": path, "DRY_FAKE_REBOOT_MARKER_PATH": started,
             "CONTROL_PLANE_COUNT": control_plane_count,
             "HTTP_PROXY": self.proxy.url, "HTTPS_PROXY": self.proxy.url, "PATH": self.path_without_oc()}
        e.update(env or {})
        c = self.dry_controller(cid, env=e, args=list(args), wrapper=wrapper)
        wait_for("the controller's rounds", lambda: "monitor cluster installation status" in c.log())
        self.svc.control("POST", "/clusters/%s" % cid, {"status": "error", "status_info": "the test failed it"})
        self.assertEqual(c.wait(), 0, c.log()[-3000:])
        return cid, c

    def logs_progress(self, cid):
        return [r for r in self.cluster_requests(cid, "logs-progress", "PUT")]

    def test_probes_while_must_gather_runs(self):
        """Every interval while the last upload's must-gather runs: the
        canary's status and answer, the router's status, Go's status
        lines; straight to the servers (the proxy sees nothing), the
        canary by the cluster's apps name; nothing once the controller
        ended."""
        canary, router = self.servers()
        bindir = os.path.join(self.tmp, self.prefix + "-bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "oc"), "w") as f:
            f.write(SLOW_OC)
        os.chmod(os.path.join(bindir, "oc"), 0o755)
        cid, c = self.failed_single_node(env={"PATH": bindir + ":" + self.path_without_oc(),
                                              "SLOW_OC_SECONDS": "2"},
                                         args=["--must-gather-dir", os.path.join(self.tmp, self.prefix + "-mg")])
        log = c.log()
        self.assertEqual(log.count("Start checking router status"), 1)
        self.assertGreaterEqual(log.count("canary url status 200 OK, response healthy"), 3, log[-3000:])
        self.assertGreaterEqual(log.count("route internal health status 200 OK"), 3)
        self.assertNotIn("Failed to reach", log)
        self.assertGreaterEqual(len(canary.requests), 3)
        self.assertEqual({(path, host) for t, path, host in canary.requests}, {(CANARY_HEALTH, self.canary_host())})
        self.assertEqual({path for t, path, host in router.requests}, {ROUTER_HEALTH})
        self.assertEqual(self.proxy.seen, [])
        # the rounds came while the upload went on, an interval apart
        progress = self.logs_progress(cid)
        self.assertEqual([r["body"]["logs_state"] for r in progress], ["requested", "completed"])
        times = [t for t, path, host in canary.requests]
        self.assertLess(service_time(progress[0]), times[0])
        self.assertLess(times[1], service_time(progress[1]))
        self.assertGreaterEqual(times[1] - times[0], 0.25)
        # the controller ended: so did the probe
        seen = (len(canary.requests), len(router.requests))
        time.sleep(1)
        self.assertEqual((len(canary.requests), len(router.requests)), seen)

    def test_a_slow_canary_delays_nothing(self):
        """The canary answers after 3 s: the upload and logs-progress
        completed do not wait for it (it runs beside them); the controller's
        end waits only for the answer in flight, then no router check."""
        canary, router = self.servers(canary_delay=3)
        cid, c = self.failed_single_node()
        progress = self.logs_progress(cid)
        self.assertEqual([r["body"]["logs_state"] for r in progress], ["requested", "completed"])
        self.assertEqual(len(canary.requests), 1)
        asked = canary.requests[0][0]
        self.assertLess(service_time(progress[1]), asked + 2)
        self.assertIn("canary url status 200 OK, response healthy", c.log())
        self.assertEqual(router.requests, [])

    def test_not_for_several_control_planes(self):
        canary, router = self.servers()
        cid, c = self.failed_single_node(control_plane_count="3")
        self.assertNotIn("Start checking router status", c.log())
        self.assertEqual((canary.requests, router.requests), ([], []))


if __name__ == "__main__":
    if not os.path.exists(test_controller.BINARY):
        print("SKIP: %s is missing" % test_controller.BINARY)
        sys.exit(77)
    unittest.main(verbosity=2)
