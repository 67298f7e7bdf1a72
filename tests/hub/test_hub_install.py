#!/usr/bin/python3
"""The installation side of cradle-hub end to end, with real hosts: cradle
agents in dry run inside network namespaces (tests/hub/hublab.py), the test
kube-apiserver, the reference service in REST mode.

  * the rehearsal (tools/rehearse) as a test: day 1 from the
    documentation's resources to Completed with both Secrets, everything
    removed afterwards; and interrupted (SIGINT) halfway, everything removed;
  * the rehearsal the Cluster API way (tools/rehearse --capi): a Cluster,
    an OpenshiftAssistedControlPlane with three replicas and Metal3,
    cradle-hub --capi the provider, CAPI core played by
    tests/capi/capicore.py, to the Cluster initialized and available with
    its Machines Running (it needs the reference service's control API);
  * cradle-hub killed in the middle of an installation and started again:
    no second v2InstallCluster, no object rewritten;
  * a ClusterDeployment deleted in the middle of an installation;
  * a day-2 worker joining an installed cluster, imported (spec.installed)
    and after a day-1 installation: CSRs approved and the Node labelled on
    a second test kube-apiserver playing the spoke, the host Done.

Day 1 runs the installer's bootstrap flow in dry run on the bootstrap
host (its waits see the other hosts' fake reboot markers as Ready nodes),
then cradle's controller against a second test kube-apiserver playing the
new cluster (hublab.NewCluster: the kubelets' certificate requests and
Nodes as the hosts reboot, the operators' objects), always the test one:
it plays the cluster the installation makes.

Against the real programs too: CRADLE_TEST_KUBECONFIG (a real cluster:
the lab applies the CRDs it lacks, removes its namespace and
ClusterImageSet at the end) and CRADLE_TEST_SERVICE_URL (a real
assisted-service in REST mode: cradle-hub talks to it directly, the hosts
through the lab's relay). What the reference service's record of requests
told (how many installs, cancels, imports) is then what cradle-hub itself
counted (its cradle_hub_service_request_duration_seconds metric)."""
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hublab as H  # noqa: E402


def skip(reason):
    print("SKIP: %s" % reason)
    sys.exit(77)


if os.geteuid() != 0:
    skip("needs root (network namespaces, loop devices)")
for _tool in ("ip", "losetup", "openssl"):
    if not H.which(_tool):
        skip("%s is not installed (tools/deps --rehearse)" % _tool)
if importlib.util.find_spec("yaml") is None:
    skip("python3-yaml is not installed")
T0 = time.monotonic()


def say(msg):
    sys.stderr.write("[%6.1fs] %s\n" % (time.monotonic() - T0, msg))
    sys.stderr.flush()


def leftovers(output):
    """What is left on this machine of the lab a rehearsal's output names
    ("lab: files in DIR, network namespaces TAG-*"): its network
    namespaces, loop devices and files (others' labs may come and go
    meanwhile)."""
    m = re.search(r"lab: files in (/\S+), network namespaces (\w+)-\*", output)
    if not m:
        return ["the rehearsal did not name its lab"]
    tmp, tag = m.groups()
    ns = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                        universal_newlines=True).stdout
    loops = subprocess.run(["losetup", "-a"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True).stdout
    return ([line.split()[0] for line in ns.splitlines() if line.startswith(tag + "-")] +
            [line.split(":")[0] for line in loops.splitlines() if tmp + "/" in line] +
            ([tmp] if os.path.exists(tmp) else []))


def cluster_leftovers(ns):
    """the rehearsal's namespace and ClusterImageSet on CRADLE_TEST_KUBECONFIG's
    cluster (with the test kube-apiserver they went with it)"""
    kube = real_cluster()
    if not kube:
        return []
    try:
        return [what for what, o in (("Namespace/" + ns, kube.get("Namespace", None, ns)),
                                     ("ClusterImageSet/" + H.image_set_name(ns),
                                      kube.get("ClusterImageSet", None, H.image_set_name(ns)))) if o]
    finally:
        kube.close()


def rehearse_argv(ns, *more):
    return [sys.executable, os.path.join(H.SRC, "tools", "rehearse"), "--namespace", ns, "--timeout", "600"] + list(
        more)


def real_cluster():
    """a client of CRADLE_TEST_KUBECONFIG's cluster, or None"""
    kubeconfig = os.environ.get("CRADLE_TEST_KUBECONFIG")
    return H.Kube(kubeconfig) if kubeconfig else None


class Base(unittest.TestCase):
    def setUp(self):
        self.lab = H.Lab("hub-install")
        self.ns = "hub-install-" + uuid.uuid4().hex[:8]
        self.earlier = {}

    def tearDown(self):
        res = getattr(self._outcome, "result", None)
        failed = res is not None and any(t is self for t, _ in res.errors + res.failures)
        if failed and hasattr(self, "flow"):
            for name in ("cradle-hub", "cradle-hub-again", "h1", "h4"):
                say("--- %s (tail)\n%s" % (name, self.lab.log(name)[-3000:]))
        self.lab.close()
        if not failed and hasattr(self, "flow") and self.flow.owns_namespace:
            # what the test made on the cluster went, cradle-hub's finalizers first
            self.assertEqual(self.flow.left, [], "the lab's objects kept their finalizers")
            kube = real_cluster()
            if kube:
                self.assertIsNone(kube.get("Namespace", None, self.ns))
                self.assertIsNone(kube.get("ClusterImageSet", None, self.flow.image_set))
                kube.close()

    def install(self, hosts=3, **kw):
        self.flow = H.Install(self.lab, self.ns, say=say, hosts=hosts, **kw).up()
        return self.flow

    def wait(self, what, fn, timeout=120):
        return H.wait(what, fn, timeout)

    def counted(self, hub):
        """cradle-hub's requests to the service so far: {(operation, code): count}"""
        out = {}
        for line in hub.metrics().splitlines():
            m = re.match(r'cradle_hub_service_request_duration_seconds_count\{operation="([^"]*)",code="(\d+)"\} '
                         r'(\S+)$', line)
            if m:
                out[(m.group(1), int(m.group(2)))] = int(float(m.group(3)))
        return out

    def remember(self, hub):
        """before a cradle-hub goes: what it counted (calls() adds it up)"""
        for k, v in self.counted(hub).items():
            self.earlier[k] = self.earlier.get(k, 0) + v

    def calls(self, operation, status=None):
        """How many times the service was asked operation (status: and
        answered status): the reference service's record, or on a real
        service what the test's cradle-hubs counted."""
        if not self.flow.svc.real:
            return len([r for r in self.flow.svc.requests(operation=operation)
                        if status is None or r.get("status") == status])
        counts = dict(self.earlier)
        for k, v in self.counted(self.flow.hub).items():
            counts[k] = counts.get(k, 0) + v
        return sum(v for (op, code), v in counts.items() if op == operation and status in (None, code))

    def install_calls(self):
        return self.calls("v2InstallCluster", 202)

    def snapshot(self):
        """every object of the namespace cradle-hub could write, by kind/name;
        compared with assertSameObjects, which names the fields that changed"""
        out = {}
        for kind in ("Agent", "AgentClusterInstall", "ClusterDeployment", "InfraEnv", "NMStateConfig", "Secret",
                     "ConfigMap"):
            for o in self.flow.kube.list(kind, self.ns):
                out["%s/%s" % (kind, o["metadata"]["name"])] = o
        return out

    def assertSameObjects(self, before, after):
        """the same objects at the same resourceVersions; where not, the
        fields that differ (a Secret's data only by key: never its values)"""
        def version(o):
            return o["metadata"]["resourceVersion"]

        def flat(o, prefix=""):
            if isinstance(o, dict):
                for k, v in o.items():
                    yield from flat(v, "%s.%s" % (prefix, k) if prefix else k)
            else:
                yield prefix, json.dumps(o, sort_keys=True)

        if {k: version(o) for k, o in before.items()} == {k: version(o) for k, o in after.items()}:
            return
        changes = ["gone: %s" % k for k in sorted(set(before) - set(after))]
        changes += ["new: %s" % k for k in sorted(set(after) - set(before))]
        for k in sorted(set(before) & set(after)):
            if version(before[k]) == version(after[k]):
                continue
            a, b = dict(flat(before[k])), dict(flat(after[k]))
            secret = k.startswith("Secret/")
            for f in sorted(set(a) | set(b)):
                if a.get(f) == b.get(f) or f.startswith("metadata.managedFields") or f == "metadata.resourceVersion":
                    continue
                if secret and (f.startswith("data.") or f.startswith("stringData.")):
                    changes.append("%s: %s changed" % (k, f))
                else:
                    changes.append("%s: %s: %s -> %s" % (k, f, (a.get(f) or "-")[:200], (b.get(f) or "-")[:200]))
        self.fail("objects rewritten:\n  " + "\n  ".join(changes))

    def writes(self, hub):
        """cradle-hub's writes so far, by controller/verb/kind"""
        out = {}
        for line in hub.metrics().splitlines():
            m = re.match(r'cradle_hub_writes_total\{(.*)\} (\S+)$', line)
            if m and float(m.group(2)) > 0:
                out[m.group(1)] = float(m.group(2))
        return out

    def quiet(self, hub, seconds=4, timeout=90):
        """waits until cradle-hub has written nothing for seconds"""
        last, since = None, time.monotonic()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            w = self.writes(hub)
            if w != last:
                last, since = w, time.monotonic()
            elif time.monotonic() - since >= seconds:
                return last
            time.sleep(0.5)
        self.fail("cradle-hub kept writing: %s" % last)

    def pause_agents(self, sig):
        for p in self.flow.agents.values():
            os.killpg(p.pid, sig)


class RelayTest(unittest.TestCase):
    """The hosts' way to the service: a Relay on the switch, to one address
    of this process's namespace and nowhere else."""

    def setUp(self):
        self.lab = H.Lab("relay")
        self.sw = H.make_switch(self.lab)
        # the service: an echo server on this process's 127.0.0.1, which the
        # switch's namespace (its own loopback) cannot reach by itself
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self.echo, daemon=True).start()

    def tearDown(self):
        self.lab.close()
        self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()

    def echo(self):
        while True:
            try:
                c, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.echo_one, args=(c,), daemon=True).start()

    @staticmethod
    def echo_one(c):
        with c:
            while True:
                data = c.recv(65536)
                if not data:
                    break
                c.sendall(data)

    def connect(self, host, port):
        """a connection made on the switch, as a host's would be"""
        with self.lab.sockets_in(self.sw):
            s = socket.socket()
        s.settimeout(10)
        try:
            s.connect((host, port))
        except OSError:
            s.close()
            raise
        return s

    def exchange(self, s, data):
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return got
            got += chunk

    def test_bytes_both_ways_until_each_end(self):
        relay = H.Relay(self.lab, self.sw, "198.51.100.1", "http://127.0.0.1:%d/api" % self.port).start()
        self.assertEqual(relay.url, "http://198.51.100.1:%d/api" % self.port)
        with self.assertRaises(ConnectionRefusedError):
            self.connect("127.0.0.1", self.port)
        data = os.urandom(3 << 20)
        with self.connect("198.51.100.1", self.port) as s:
            # the half-close passes on: the echo ends, so does the answer
            self.assertEqual(self.exchange(s, data), data)
        self.assertEqual((relay.accepted, relay.refused, relay.errors), (1, 0, []))

    def test_bounded_and_stopped_with_the_lab(self):
        relay = H.Relay(self.lab, self.sw, "198.51.100.1", "http://127.0.0.1:%d" % self.port)
        relay.MAX_CONNECTIONS = 2
        relay.start()
        held = [self.connect("198.51.100.1", self.port) for _ in range(2)]
        for s in held:
            s.sendall(b"x")
            self.assertEqual(s.recv(1), b"x")
        with self.connect("198.51.100.1", self.port) as third:
            self.assertEqual(third.recv(1), b"", "a third connection was relayed")
        self.assertEqual(relay.refused, 1)
        self.lab.close()
        for s in held:
            self.assertEqual(s.recv(1), b"")
            s.close()
        self.assertFalse([t for t in relay.threads if t.is_alive()])
        self.assertEqual(relay.listener.fileno(), -1)

    def test_only_its_target(self):
        # nothing listens on the target (a port bound, not listening): the
        # connection is closed, nothing else tried
        with socket.socket() as quiet:
            quiet.bind(("127.0.0.1", 0))
            port = quiet.getsockname()[1]
            relay = H.Relay(self.lab, self.sw, "198.51.100.1", "http://127.0.0.1:%d" % port).start()
            with self.connect("198.51.100.1", port) as s:
                self.assertEqual(s.recv(1), b"")
            self.wait_for(lambda: relay.errors)
            self.assertIn("cannot connect to 127.0.0.1:%d" % port, relay.errors[0])
            self.assertEqual(relay.accepted, 1)

    def test_in_netns_reaches_the_real_programs(self):
        """tests/helpers/in-netns.sh relays CRADLE_TEST_KUBECONFIG's server
        and CRADLE_TEST_SERVICE_URL into the namespace it makes, by the
        very addresses (here this process's 127.0.0.1: the echo server),
        and removes everything at the end."""
        kubeconfig = os.path.join(self.lab.tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: real\n  cluster:\n"
                    "    server: https://127.0.0.1:%d\ncontexts:\n- name: real\n  context:\n    cluster: real\n"
                    "current-context: real\n" % self.port)
        other = socket.create_server(("127.0.0.1", 0))
        self.addCleanup(other.close)
        service_port = other.getsockname()[1]
        other.close()
        probe = ("import socket,sys\n"
                 "for port in (%d, %d):\n"
                 "    try:\n"
                 "        s = socket.create_connection(('127.0.0.1', port), timeout=10)\n"
                 "        s.sendall(b'through'); s.shutdown(socket.SHUT_WR)\n"
                 "        print(port, s.recv(100).decode() or 'closed')\n"
                 "    except ConnectionRefusedError:\n"
                 "        print(port, 'refused')\n"
                 "    except ConnectionResetError:\n"
                 "        print(port, 'closed')\n"
                 % (self.port, service_port))
        env = dict(os.environ, CRADLE_TEST_KUBECONFIG=kubeconfig,
                   CRADLE_TEST_SERVICE_URL="http://127.0.0.1:%d" % service_port)
        p = subprocess.run([os.path.join(H.SRC, "tests", "helpers", "in-netns.sh"), sys.executable, "-c", probe],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        # the kube server's address answers inside (the echo came back);
        # the service's too: relayed, its connection closed since nothing
        # listens there outside (not refused inside, as without the relay)
        self.assertEqual(p.stdout.decode().split("\n")[:2], ["%d through" % self.port, "%d closed" % service_port])
        # the relay ended with the script
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if kubeconfig.encode() in f.read():
                        left.append(pid)
            except OSError:
                pass
        self.assertEqual(left, [])

    def wait_for(self, fn):
        H.wait("the relay", fn, 10, 0.05)


class Rehearsal(Base):
    HOSTS = ("spoke-master-1", "spoke-master-2", "spoke-master-3")

    def rehearse(self, *more):
        t = time.monotonic()
        p = subprocess.run(rehearse_argv(self.ns, *more), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=900)
        took = time.monotonic() - t
        say("tools/rehearse %s exit %d after %.0f s:\n%s" % (" ".join(more), p.returncode, took, p.stdout[-9000:]))
        # nothing of it left, whatever the outcome
        self.assertEqual(leftovers(p.stdout), [])
        self.assertEqual(cluster_leftovers(self.ns), [])
        self.assertIn("cleaning up: processes, namespaces, loop devices", p.stdout)
        # the controller is cradle's, and no stand-in is left
        self.assertNotIn("stand-in", p.stdout.lower())
        return p

    def assertDoneByTheService(self, out, hosts=HOSTS):
        """every host installed (Done) in the service's events, which a real
        service keeps too"""
        for host in hosts:
            self.assertRegex(out, r"the service's event: Host %s: updated status from \S+ to installed \(Done\)\n"
                             % host)

    def test_rehearsal_day1(self):
        """tools/rehearse, as the README's first command runs it: cradle's
        controller in the new cluster (a second test kube-apiserver) takes
        the installation to Completed; the service's record and the new
        cluster's CSRs say it did"""
        with open(os.path.join(H.SRC, "README.md")) as fh:
            first = re.findall(r"^    (tools/deps .*)$", fh.read(), re.M)[0]
        self.assertTrue(first.endswith("&& tools/rehearse"), first)
        p = self.rehearse()
        for row in ("applied ClusterDeployment/single-node", "applied AgentClusterInstall/test-agent-cluster-install",
                    "applied InfraEnv/myinfraenv", "approved agent/spoke-master-1",
                    "assisted-installer-controller started: cradle controller in the new cluster"):
            self.assertIn(row, p.stdout)
        self.assertEqual(p.returncode, 0)
        self.assertIn("Completed: The installation has completed", p.stdout)
        self.assertIn("secrets: single-node-admin-kubeconfig (kubeconfig), single-node-admin-password", p.stdout)
        # hive's clusterMetadata: the OpenShift cluster id the service gave the installation, its own id
        self.assertRegex(p.stdout, r'"clusterID": "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", '
                                   r'"infraID": "[0-9a-f-]{36}"')
        self.assertRegex(p.stdout, r"REHEARSAL COMPLETED in \d+ s")
        self.assertIn("stage=Done", p.stdout)
        self.assertIn("finished by cradle's controller in the new cluster", p.stdout)
        self.assertDoneByTheService(p.stdout)
        # the kubelets' requests, each approved by the controller (nothing
        # else approves on the new cluster), and the router CA it uploaded
        # in the admin kubeconfig the service made of it
        for host in self.HOSTS:
            for kind in ("client", "serving"):
                self.assertRegex(p.stdout, r"the new cluster: csr-\w+ \(kubelet %s of %s\) approved, NodeCSRApprove: "
                                           r"This CSR was approved by the assisted-installer-controller\n" % (kind, host))
        self.assertIn("the admin kubeconfig trusts the new cluster's router CA (the controller's upload)", p.stdout)
        import refclient
        if refclient.real_service():
            # a real service records no requests, and complete-installation
            # leaves nothing behind but a log line (notes/controller.md §0.2)
            self.assertIn("the service's requests: a real service keeps no record of them", p.stdout)
            return
        for host in self.HOSTS:
            self.assertIn("the service's record: %s reported Joined, Done after Rebooting\n" % host, p.stdout)
        self.assertIn('the service\'s record: operator {"name": "console", "status": "available"', p.stdout)
        self.assertIn("the service's record: ingress CA upload the new cluster's router CA\n", p.stdout)
        self.assertEqual(p.stdout.count("the service's record: complete-installation"), 1, p.stdout)
        self.assertIn('the service\'s record: complete-installation {"is_success": true}\n', p.stdout)

    def test_rehearsal_with_the_controller_in_its_dry_run(self):
        """--controller dry-run: no new cluster, upstream's dry run (no
        certificate requests); Completed all the same"""
        p = self.rehearse("--controller", "dry-run")
        self.assertIn("assisted-installer-controller started: cradle controller in its dry run", p.stdout)
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"REHEARSAL COMPLETED in \d+ s: .*finished by cradle's controller in its dry run")
        self.assertDoneByTheService(p.stdout)
        self.assertNotIn("the new cluster", p.stdout)

    def test_rehearsal_capi(self):
        """tools/rehearse --capi: the user's resources are Cluster API ones
        (three control-plane replicas and a worker MachineDeployment of
        one), cradle-hub --capi their provider; each host boots with its Machine's
        name from the Machine's bootstrap data, the Cluster ends initialized
        and available, its kubeconfig Secret the full one, the Machines
        Running on their Nodes; cradle's controller finished it"""
        import refclient
        if refclient.real_service():
            self.skipTest(refclient.control_skip_reason("the cluster's kubeconfig is the lab's new cluster's"))
        p = self.rehearse("--capi")
        self.assertEqual(p.returncode, 0)
        for row in ("applied Cluster/spoke", "applied OpenshiftAssistedControlPlane/spoke-control-plane",
                    "applied Metal3Cluster/spoke", "applied Metal3MachineTemplate/spoke-controlplane",
                    "assisted-installer-controller started: cradle controller in the new cluster",
                    "cluster/spoke ControlPlaneInitialized=True (Initialized), Available=True (Available)"):
            self.assertIn(row, p.stdout)
        machines = ["spoke-control-plane-%d" % i for i in range(3)]
        for i, m in enumerate(machines):
            # the hostname is what the Machine's bootstrap data writes to /etc/hostname
            self.assertIn("h%d boots from machine/%s's bootstrap data: hostname %s (its Ignition's /etc/hostname)"
                          % (i + 1, m, m), p.stdout)
            # kubectl-get-like rows: the phases and the host's install stage
            self.assertRegex(p.stdout, r"machine/%s +phase=Provisioned node=- host=\w+" % m)
            self.assertRegex(p.stdout, r"machine/%s +phase=\w+ node=\S+ host=Installed Done 100%%" % m)
            self.assertIn("machine/%s Running, node %s, providerID metal3://%s/%s/" % (m, m, self.ns, m), p.stdout)
            for kind in ("client", "serving"):
                self.assertRegex(p.stdout, r"the new cluster: csr-\w+ \(kubelet %s of %s\) approved, NodeCSRApprove"
                                 % (kind, m))
        # (cradle-hub's own kubeconfig of its short-lived client certificate quotes the URL)
        self.assertRegex(p.stdout, r"secret/spoke-kubeconfig \(type cluster.x-k8s.io/secret, key value\): the "
                                   r"kubeconfig of \"?https://127\.0\.0\.1:\d+\"?, trusting the new cluster's "
                                   r"router CA")
        self.assertDoneByTheService(p.stdout, machines)
        # the day-1 worker of the MachineDeployment (--workers 1, the default): its Machine, booted from
        # its own bootstrap data, installed with the cluster as a worker and Running on its Node
        self.assertIn("applied MachineDeployment/spoke-workers", p.stdout)
        self.assertRegex(p.stdout, r"h4 boots from machine/(spoke-workers-\w+-\w+)'s bootstrap data: hostname \1 ")
        self.assertRegex(p.stdout, r"machine/(spoke-workers-\w+-\w+) Running, node \1, providerID metal3://%s/\1/"
                         % self.ns)
        self.assertRegex(p.stdout,
                         r"the service's record: spoke-workers-\w+-\w+ reported Joined(, Done)? after Rebooting")
        self.assertIn("the service's record: ingress CA upload the new cluster's router CA\n", p.stdout)
        self.assertIn('the service\'s record: complete-installation {"is_success": true}\n', p.stdout)
        self.assertRegex(p.stdout, r"REHEARSAL COMPLETED in \d+ s: the cluster installed from Cluster API resources "
                                   r"alone \(cradle-hub --capi")
        # no ClusterDeployment path was taken
        self.assertNotIn("agentclusterinstall/", p.stdout)
        self.assertNotIn("agent/", p.stdout)

    def test_rehearsal_interrupted(self):
        """Ctrl-C halfway: everything it made is removed"""
        p = subprocess.Popen(rehearse_argv(self.ns), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
        out = []
        for line in p.stdout:
            out.append(line)
            if "approved agent/" in line:
                break
        p.send_signal(signal.SIGINT)
        rest, _ = p.communicate(timeout=60)
        text = "".join(out) + rest
        self.assertEqual(p.returncode, 128 + signal.SIGINT, text)
        self.assertIn("interrupted (signal 2): everything the lab made is removed", text)
        self.assertEqual(leftovers(text), [])
        self.assertEqual(cluster_leftovers(self.ns), [])
        ps = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE, universal_newlines=True).stdout
        self.assertNotIn(self.ns, ps)


class Refused(Base):
    def test_a_refused_image_stops_the_lab(self):
        """an input error of the InfraEnv's image (the service refuses its
        static network config) ends the wait as soon as it has stayed, with
        the service's words"""
        f = self.install(hosts=1)
        f.REFUSAL_SETTLES = 2
        resources = f.resources()
        for o in resources:
            if o["kind"] == "NMStateConfig":
                o["spec"]["config"]["interfaces"][0]["type"] = "token-ring"
        f.apply(resources)
        with self.assertRaisesRegex(H.LabError, r"(?s)the InfraEnv's image was refused for 2 s: .*token-ring"):
            f.boot(timeout=300)


    def test_an_input_error_that_passes_is_no_refusal(self):
        """the AgentClusterInstall before its ClusterDeployment: the input
        error (no such ClusterDeployment) goes once it exists, and the lab
        goes on (a run whose informer saw the ACI first stopped there)"""
        f = self.install(hosts=1, static_network=False)
        resources = f.resources()
        cd = next(o for o in resources if o["kind"] == "ClusterDeployment")
        f.apply([o for o in resources if o is not cd])
        self.wait("the ACI's input error", lambda: (H.condition(f.aci(), "SpecSynced") or {}).get("reason") ==
                  "InputError")
        later = threading.Timer(1, f.apply, ([cd],))
        later.start()
        try:
            self.assertTrue(f.boot(timeout=120))
        finally:
            later.join()


class MidInstall(Base):
    def start_installation(self):
        # no NMStateConfigs: what these tests try is not static networking
        # (the rehearsal has it), so that they run on a service without
        # nmstate too
        f = self.install(static_network=False)
        f.apply()
        f.boot()
        # as far as the installation, the controller not started
        f.run(timeout=300, until=lambda f: f.state() in ("installing", "installing-in-progress"), controller=False)
        return f

    def hosts_installing(self, f):
        """the service moves its hosts to installing a round after their
        cluster, on its own (its host monitor): until then the world does
        not stand still, agents or not"""
        self.wait("the service to move every host to installing", lambda: not [
            a for a in f.kube.list("Agent", self.ns)
            if (((a.get("status") or {}).get("debugInfo") or {}).get("state") or "").startswith("preparing")], 120)

    def test_restart_installs_once_and_rewrites_nothing(self):
        f = self.start_installation()
        self.assertEqual(self.install_calls(), 1)
        # the world stands still (the agents stopped before they fetched
        # the install step, the service done with what it does alone),
        # cradle-hub has caught up
        self.pause_agents(signal.SIGSTOP)
        self.hosts_installing(f)
        self.quiet(f.hub)
        before = self.snapshot()
        self.assertIn("Secret/single-node-admin-kubeconfig", before)
        # killed, as a crash would, and started again
        self.remember(f.hub)
        f.hub.stop(signal.SIGKILL)
        hub = H.Hub(self.lab, f.kubeconfig, f.svc.url, self.ns, name="cradle-hub-again").start()
        f.hub = hub
        # every object reconciled, a resync of the service (5 s) and more
        self.wait("the restarted cradle-hub to reconcile", lambda: all(
            re.search(r'controller_runtime_reconcile_total\{controller="%s",result="success"\} [1-9]' % c,
                      hub.metrics()) for c in ("clusterdeployment", "agent", "infraenv")), 60)
        time.sleep(7)
        self.assertSameObjects(before, self.snapshot())
        self.assertEqual(self.writes(hub), {})
        self.assertEqual(self.install_calls(), 1)
        # and it goes on from there
        self.pause_agents(signal.SIGCONT)
        f.run(timeout=600)
        self.assertEqual(self.install_calls(), 1)
        self.assertEqual(hub.stop(), 0)

    def test_cluster_deployment_deleted_mid_install(self):
        f = self.start_installation()
        cid = f.cluster_id
        f.kube.delete("ClusterDeployment", self.ns, H.CD_NAME)
        say("deleted ClusterDeployment/%s while the cluster was %s" % (H.CD_NAME, f.state()))
        self.wait("the ClusterDeployment to go", lambda: f.kube.get("ClusterDeployment", self.ns, H.CD_NAME) is None)
        self.wait("the AgentClusterInstall to go", lambda: f.aci() is None)
        import refclient
        client = refclient.HubClient(f.svc)
        self.wait("the cluster to be deregistered", lambda: client.call("GET", "/v2/clusters/%s" % cid)[0] == 404)
        # its Agents went with it (their InfraEnv named the ClusterDeployment), none stuck deleting
        self.wait("no Agent of the cluster", lambda: not [
            a for a in f.kube.list("Agent", self.ns)
            if ((a.get("spec") or {}).get("clusterDeploymentName") or {}).get("name") == H.CD_NAME
            or (a["metadata"].get("deletionTimestamp"))], 120)
        self.assertGreaterEqual(self.calls("V2CancelInstallation"), 1, "the installation was not cancelled")
        self.assertEqual(self.calls("v2DeregisterCluster", 204), 1, "the cluster was not deregistered")
        self.assertEqual(f.hub.stop(), 0)


class Generations(Base):
    """Day 1 to Completed on the reference service playing each generation
    of the API strictly (tests/service/generations.py): the late-2023 one
    (no control_plane_count, high_availability_mode) and the current one
    (control_plane_count, no singular VIPs). Against CRADLE_TEST_SERVICE_URL
    the service is whichever it is: the rehearsal and the other classes
    install on it."""

    def day1(self, generation):
        import refclient
        if refclient.real_service():
            self.skipTest("plays a generation with the reference service; CRADLE_TEST_SERVICE_URL is set "
                          "(the other classes install on that service, whichever it is)")
        f = self.install(static_network=False, service_settings={"api_generation": generation})
        f.apply()
        f.boot()
        f.run(timeout=600)
        aci = f.kube.get("AgentClusterInstall", self.ns, "test-agent-cluster-install")
        completed = H.condition(aci, "Completed")
        self.assertEqual((completed["status"], completed["reason"]), ("True", "InstallationCompleted"), completed)
        # the cluster as the service's API shows it
        status, cluster = f.svc.api("GET", "/v2/clusters/" + f.cluster_id)
        self.assertEqual(status, 200, cluster)
        return f, cluster

    def test_day1_on_a_late_2023_service(self):
        f, cluster = self.day1("2023")
        self.assertNotIn("control_plane_count", cluster)
        self.assertEqual(cluster.get("high_availability_mode"), "Full")
        # one refusal taught cradle-hub the API, one registration took
        self.assertEqual(self.calls("v2RegisterCluster", 400), 1)
        self.assertEqual(self.calls("v2RegisterCluster", 201), 1)
        self.assertEqual(self.install_calls(), 1)

    def test_day1_on_a_current_service(self):
        f, cluster = self.day1("head")
        self.assertEqual(cluster.get("control_plane_count"), 3)
        self.assertNotIn("api_vip", cluster)
        self.assertEqual(self.calls("v2RegisterCluster", 201), 1)
        self.assertEqual(self.install_calls(), 1)


class Day2(Base):
    def spoke_network(self, f, hosts):
        """What the spoke's network gives a day-2 host: its machine-config
        server at the API VIP, and DNS names for the cluster (an imported
        cluster is known to the service by api.<cluster>.<domain> alone).
        Returns the machine-config server."""
        resources = f.resources()
        cd = next(o for o in resources if o["kind"] == "ClusterDeployment")["spec"]
        vip = next(o for o in resources if o["kind"] == "AgentClusterInstall")["spec"]["apiVIP"]
        H.ClusterDNS(self.lab, f.sw, "%s.%s" % (cd["clusterName"], cd["baseDomain"]), vip).serve(hosts)
        return H.MachineConfigServer(self.lab, f.sw, vip)

    def join(self, f, spoke, host, labels):
        """the host's Agent approved with labels, its installation, the
        node joining the spoke; returns the Agent when Done"""
        agent = self.wait("the Agent of %s" % host["hostname"], lambda: f.kube.get("Agent", self.ns, host["id"]))
        f.kube.patch("Agent", self.ns, host["id"], {"spec": {"approved": True, "nodeLabels": labels}})
        say("approved agent/%s with node labels %s" % (host["hostname"], labels))
        try:
            self.wait("the host to reboot", lambda: (f.step(approve=False, controller=False),
                                                     os.path.exists(host["marker"]))[1], 300)
        except H.LabError as e:
            raise H.LabError("%s\n%s" % (e, f.where()))
        say("%s rebooted: its kubelet joins the spoke" % host["hostname"])
        kubelet = H.SpokeKubelet(spoke, host)
        client = kubelet.client_csr()
        self.wait("the client CSR approved", lambda: kubelet.approved(client), 60)
        kubelet.node()
        serving = kubelet.serving_csr()
        self.wait("the serving CSR approved", lambda: kubelet.approved(serving), 60)
        node = self.wait("the node labels", lambda: all(
            ((kubelet.get("/api/v1/nodes/" + host["hostname"]) or {}).get("metadata", {}).get("labels") or {}).get(k)
            == v for k, v in labels.items()), 60)
        self.assertTrue(node)

        def done():
            f.report()
            a = f.kube.get("Agent", self.ns, host["id"])
            return a if ((a.get("status") or {}).get("progress") or {}).get("currentStage") == "Done" else None
        agent = self.wait("the host Done", done, 120)
        approved = [c["type"] for c in (agent["status"].get("csrStatus") or {}).get("approvedCSRs") or []]
        self.assertEqual(sorted(approved), ["client", "serving"])
        installed = H.condition(agent, "Installed")
        self.assertEqual((installed["status"], installed["reason"]), ("True", "InstallationCompleted"), installed)
        return agent

    # no NMStateConfigs, as MidInstall
    def test_day2_worker_of_an_imported_cluster(self):
        f = self.install(hosts=1, static_network=False)
        host = f.hosts[0]
        host["hostname"] = "spoke-worker-1"
        spoke = H.start_spoke(self.lab)
        with open(spoke.path("kubeconfig")) as fh:
            kubeconfig = fh.read()
        f.namespace()
        f.kube.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "spoke-admin-kubeconfig",
                                                                            "namespace": self.ns},
                       "stringData": {"kubeconfig": kubeconfig}})
        resources = f.resources()
        for o in resources:
            if o["kind"] == "ClusterDeployment":
                # installed already: hive's clusterMetadata, the spoke's admin kubeconfig
                o["spec"]["installed"] = True
                o["spec"]["clusterMetadata"] = {"clusterID": str(uuid.uuid4()), "infraID": "spoke-x1",
                                                "adminKubeconfigSecretRef": {"name": "spoke-admin-kubeconfig"}}
        f.apply(resources)
        mcs = self.spoke_network(f, [host])
        f.boot()
        self.wait("the imported cluster", lambda: (f.step(approve=False), f.state() == "adding-hosts")[1], 120)
        self.join(f, spoke, host, {"node-role.kubernetes.io/infra": "", "location": "rack-7"})
        if f.svc.real:
            # the service asked for the check (the reference service never does)
            self.assertIn(host["ip"], mcs.served)
        self.assertEqual(self.calls("v2ImportCluster", 201), 1)
        self.assertEqual(f.hub.stop(), 0)

    def test_day2_worker_after_day1(self):
        f = self.install(static_network=False)
        f.apply()
        f.boot()
        f.run(timeout=600)
        # the cluster day 1 installed (cradle's controller approved its
        # kubelets there) is the spoke the worker joins
        spoke = f.new_cluster.server
        with open(spoke.path("kubeconfig")) as fh:
            kubeconfig = fh.read()
        # the installed cluster is the spoke: its admin kubeconfig, as an
        # administrator would point it elsewhere (the service's names
        # api.<cluster>.<domain>, which this machine cannot resolve)
        f.kube.patch("Secret", self.ns, f.secrets()[0], {"stringData": {"kubeconfig": kubeconfig}})
        self.wait("the day-2 cluster", lambda: (f.step(approve=False), f.state() == "adding-hosts")[1], 60)
        worker, = f.add_hosts(1)
        # the new host's check of the spoke's machine-config server, at the API VIP
        mcs = self.spoke_network(f, [worker])
        f.boot([worker])
        self.join(f, spoke, worker, {"node-role.kubernetes.io/worker": ""})
        if f.svc.real:
            # the service asked for the check and the host made it (the
            # reference service never asks)
            self.assertIn(worker["ip"], mcs.served)
        self.assertEqual(self.install_calls(), 1)
        self.assertEqual(self.calls("v2InstallHost", 202), 1)
        self.assertEqual(f.hub.stop(), 0)



class CapiDay2(Base):
    def installed(self):
        """the --capi installation with one day-1 worker, to its end"""
        import refclient
        if refclient.real_service():
            self.skipTest(refclient.control_skip_reason("the cluster's kubeconfig is the lab's new cluster's"))
        f = self.flow = H.CapiInstall(self.lab, self.ns, say=say, workers=1).up()
        f.apply()
        f.boot()
        f.run(timeout=600)
        f.controller_ended(timeout=120)
        return f

    def boot_new_machine(self, f, known, host=None):
        """The Machine not in known, once its bootstrap data is there; its
        host (host, reprovisioned, or a new one on the switch) boots from
        it. Returns (Machine name, host)."""
        def new_machine():
            f.report()
            return f.boot_data_of(set(m["metadata"]["name"] for m in f.machines()) - known)
        machine, hostname, ie_id = self.wait("the new Machine's bootstrap data", new_machine, 120)
        self.assertEqual(machine, hostname)
        if host is None:
            host, = f.add_hosts(1)
        host["hostname"], host["machine"] = hostname, machine
        f.agents[host["id"]] = H.start_agent(self.lab, host, f.relay.url, ie_id, f.hosts_file())
        say("%s boots from machine/%s's bootstrap data" % (host["name"], machine))
        return machine, host

    def joins(self, f, machine, host, role="worker"):
        """The day-2 host installed, rebooted into the cluster, its
        kubelet's CSRs approved by cradle-hub, the Machine Joined and
        Running on its Node, the host in the service's record with that
        role. Returns the Machine."""
        self.wait("the host to reboot into the cluster", lambda: (f.report(), os.path.exists(host["marker"]))[1],
                  300)
        cluster = f.service_cluster()
        self.assertEqual((cluster["kind"], cluster["status"]), ("AddHostsCluster", "adding-hosts"))
        kubelet = H.SpokeKubelet(f.new_cluster.server, host)
        client = kubelet.client_csr()
        self.wait("the client CSR approved", lambda: kubelet.approved(client), 120)
        self.assertEqual(kubelet.approval(client)["reason"], "NodeCSRApprove")
        kubelet.node(ready=False)
        serving = kubelet.serving_csr()
        self.wait("the serving CSR approved", lambda: kubelet.approved(serving), 120)
        kubelet.ready(True)
        # the infrastructure provider's part: the Node gets its Machine's providerID
        pid = self.wait("the Machine's providerID",
                        lambda: (f.kube.get("Machine", self.ns, machine).get("spec") or {}).get("providerID"))
        r = f.new_cluster.request("PATCH", "/api/v1/nodes/" + host["hostname"], {"spec": {"providerID": pid}},
                                  "application/merge-patch+json")
        self.assertEqual(r.status, 200, r.raw[:300])

        def joined_and_running():
            f.report()
            m = f.kube.get("Machine", self.ns, machine)
            c = H.condition(m, "HostInstallation") or {}
            return m if c.get("status") == "True" and (m.get("status") or {}).get("phase") == "Running" else None
        m = self.wait("the Machine Joined and Running", joined_and_running, 180)
        self.assertEqual(H.condition(m, "HostInstallation")["reason"], "Joined")
        self.assertEqual(((m.get("status") or {}).get("nodeRef") or {}).get("name"), host["hostname"])
        host_record = next(h for h in f.service_cluster()["hosts"] if h.get("requested_hostname") == host["hostname"])
        self.assertEqual((host_record["role"], host_record["status"]), (role, "added-to-existing-cluster"))
        return m

    def test_capi_day2_worker(self):
        """Cluster API's scale-up after the installation: the workers'
        MachineDeployment from one replica to two once the cluster is
        installed; the new Machine's host boots from its bootstrap data,
        cradle-hub turns the cluster into a day-2 cluster, binds the host as
        a worker and installs it (v2InstallHost); once it rebooted, its
        kubelet's client and serving CSRs on the new cluster are approved by
        cradle-hub (the installation's controller ended with day 1) and the
        Machine shows the host Joined, then Running on its Node."""
        f = self.installed()
        day1 = {m["metadata"]["name"] for m in f.machines()}
        f.kube.patch("MachineDeployment", self.ns, H.CAPI_WORKERS, {"spec": {"replicas": 2}})
        say("scaled machinedeployment/%s to 2 replicas" % H.CAPI_WORKERS)
        machine, host = self.boot_new_machine(f, day1)
        self.joins(f, machine, host)
        # the service's record: one day-1 installation, one day-2 transform, the host installed once
        self.assertEqual(self.install_calls(), 1)
        self.assertEqual(self.calls("TransformClusterToDay2", 202), 1)
        self.assertEqual(self.calls("v2InstallHost", 202), 1)
        self.assertEqual(f.hub.stop(), 0)


    def rejoins(self, f, machine, host, role):
        """The host of a removed Machine joins again as a day-2 host of that
        role for the Machine made in its place; the service's record: the
        day-1 installation, its deregistration, one day-2 transform, one
        host installation."""
        self.joins(f, machine, host, role)
        self.assertEqual(self.install_calls(), 1)
        self.assertEqual(self.calls("v2DeregisterHost", 204), 1)
        self.assertEqual(self.calls("TransformClusterToDay2", 202), 1)
        self.assertEqual(self.calls("v2InstallHost", 202), 1)
        self.assertEqual(f.hub.stop(), 0)

    def remove_machine(self, f, machine):
        """CAPI core's deletion of a Machine whose host is powered off for
        its reprovisioning (Metal3's part): its bootstrap config first,
        whose finalizer cradle-hub holds until the host is deregistered
        from the service, then the Machine and its Node. Returns the
        host."""
        import refclient
        name, config = machine["metadata"]["name"], machine["spec"]["bootstrap"]["configRef"]["name"]
        host = next(h for h in f.hosts if h.get("machine") == name)
        hub = refclient.HubClient(f.svc)
        ie_path = "/v2/infra-envs/%s/hosts/%s" % (
            f.oacp()["metadata"]["annotations"][H.ANNOTATION_INFRA_ENV_ID], host["id"])
        self.assertEqual(hub.call("GET", ie_path)[0], 200)
        self.lab.stop(f.agents.pop(host["id"]))
        f.kube.delete("OpenshiftAssistedConfig", self.ns, config)
        self.wait("the config gone, its host deregistered",
                  lambda: f.kube.get("OpenshiftAssistedConfig", self.ns, config) is None, 120)
        self.assertEqual(hub.call("GET", ie_path)[0], 404)
        f.kube.delete("Machine", self.ns, name)

        def gone():
            # a control plane makes its Machine again under the same name
            m = f.kube.get("Machine", self.ns, name)
            return m is None or m["metadata"]["uid"] != machine["metadata"]["uid"]
        self.wait("machine/%s gone" % name, gone, 120)
        r = f.new_cluster.request("DELETE", "/api/v1/nodes/" + name)
        self.assertEqual(r.status, 200, r.raw[:300])
        say("machine/%s removed: its config, the Machine and its Node deleted" % name)
        os.remove(host["marker"])
        return host

    def test_capi_control_plane_machine_replaced(self):
        """A control-plane Machine deleted after the installation (by its
        user, or a remediation) and made again by cradle-hub's control
        plane, which keeps its replicas: the same host, reprovisioned with
        the new Machine's bootstrap data, registers again; the cluster turns
        day-2 and the host joins it as a master (the service's day-2
        master), its CSRs approved, the Machine Joined and Running."""
        f = self.installed()
        old = next(m for m in f.machines() if H.CAPI_LABEL_CONTROL_PLANE in (m["metadata"].get("labels") or {}))
        host = self.remove_machine(f, old)
        known = {m["metadata"]["name"] for m in f.machines()} - {old["metadata"]["name"]}
        machine, host = self.boot_new_machine(f, known, host)
        self.assertIn(H.CAPI_LABEL_CONTROL_PLANE, f.kube.get("Machine", self.ns, machine)["metadata"]["labels"])
        self.rejoins(f, machine, host, "master")

    def test_capi_control_plane_machine_remediated(self):
        """A MachineHealthCheck marks a control-plane Machine whose host
        went down for its owner's remediation (HealthCheckSucceeded and
        OwnerRemediated False): cradle-hub's control plane deletes it
        (OwnerRemediated MachineDeleting). CAPI core's Machine deletion,
        played here as test_capi_worker_remediated plays it, lets the host
        go (its config's finalizer deregisters it); the control plane makes
        the Machine again, and the same host, reprovisioned, joins the
        cluster as a day-2 master."""
        import refclient
        f = self.installed()
        old = next(m for m in f.machines() if H.CAPI_LABEL_CONTROL_PLANE in (m["metadata"].get("labels") or {}))
        name, config = old["metadata"]["name"], old["spec"]["bootstrap"]["configRef"]["name"]
        host = next(h for h in f.hosts if h.get("machine") == name)
        hub = refclient.HubClient(f.svc)
        ie_path = "/v2/infra-envs/%s/hosts/%s" % (
            f.oacp()["metadata"]["annotations"][H.ANNOTATION_INFRA_ENV_ID], host["id"])
        # CAPI core's finalizer on the Machine (capicore plays none)
        f.kube.patch("Machine", self.ns, name, {"metadata": {"finalizers": ["machine.cluster.x-k8s.io"]}})
        self.lab.stop(f.agents.pop(host["id"]))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        f.kube.patch("Machine", self.ns, name, {"status": {"conditions": (
            f.kube.get("Machine", self.ns, name)["status"].get("conditions") or []) + [
            {"type": "HealthCheckSucceeded", "status": "False", "reason": "UnhealthyNode",
             "message": "Node not ready for 5m", "lastTransitionTime": stamp},
            {"type": "OwnerRemediated", "status": "False", "reason": "WaitingForRemediation",
             "message": "", "lastTransitionTime": stamp}]}}, "status")
        say("machine/%s marked unhealthy, for its owner to remediate" % name)

        def deleted():
            f.report()
            m = f.kube.get("Machine", self.ns, name)
            return m if m and m["metadata"].get("deletionTimestamp") else None
        m = self.wait("the control plane to delete the Machine", deleted, 120)
        self.assertEqual(H.condition(m, "OwnerRemediated")["reason"], "MachineDeleting")
        self.assertEqual(hub.call("GET", ie_path)[0], 200)
        # CAPI core's deletion: the bootstrap config and the infrastructure
        # machine first, then the Node, then its finalizer
        infra = old["spec"]["infrastructureRef"]["name"]
        f.kube.delete("OpenshiftAssistedConfig", self.ns, config)
        f.kube.delete("Metal3Machine", self.ns, infra)
        self.wait("the config gone, its host deregistered",
                  lambda: f.kube.get("OpenshiftAssistedConfig", self.ns, config) is None, 120)
        self.assertEqual(hub.call("GET", ie_path)[0], 404)
        self.wait("the infrastructure machine gone", lambda: f.kube.get("Metal3Machine", self.ns, infra) is None, 60)
        r = f.new_cluster.request("DELETE", "/api/v1/nodes/" + name)
        self.assertEqual(r.status, 200, r.raw[:300])
        f.kube.patch("Machine", self.ns, name, {"metadata": {"finalizers": None}})
        os.remove(host["marker"])
        known = {m["metadata"]["name"] for m in f.machines()} - {name}
        machine, host = self.boot_new_machine(f, known, host)
        self.assertEqual(machine, name)
        self.assertNotEqual(f.kube.get("Machine", self.ns, machine)["metadata"]["uid"], old["metadata"]["uid"])
        self.rejoins(f, machine, host, "master")

    def test_capi_worker_remediated(self):
        """A worker Machine remediated, as a MachineHealthCheck does it: the
        Machine deleted, its MachineSet makes another. CAPI core's Machine
        controller deletes the bootstrap config first, whose finalizer
        cradle-hub holds until the host is deregistered from the service,
        then the Machine and its Node; the same host (same hardware id),
        reprovisioned with the new Machine's bootstrap data as Metal3 does,
        registers again and is installed as a day-2 worker."""
        f = self.installed()
        old = next(m for m in f.machines() if m["metadata"]["name"].startswith(H.CAPI_WORKERS + "-"))
        name = old["metadata"]["name"]
        known = {m["metadata"]["name"] for m in f.machines()}
        host = self.remove_machine(f, old)
        machine, host = self.boot_new_machine(f, known, host)
        self.assertNotEqual(machine, name)
        self.rejoins(f, machine, host, "worker")

if __name__ == "__main__":
    unittest.main(verbosity=2)
