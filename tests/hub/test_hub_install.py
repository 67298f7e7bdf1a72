#!/usr/bin/python3
"""The installation side of cradle-hub end to end, with real hosts: cradle
agents in dry run inside network namespaces (tests/hub/hublab.py), the test
kube-apiserver, the reference service in REST mode.

  * the rehearsal (tools/rehearse) as a test: day 1 from the
    documentation's resources to Completed with both Secrets, everything
    removed afterwards; and interrupted (SIGINT) halfway, everything removed;
  * cradle-hub killed in the middle of an installation and started again:
    no second v2InstallCluster, no object rewritten;
  * a ClusterDeployment deleted in the middle of an installation;
  * a day-2 worker joining an installed cluster, imported (spec.installed)
    and after a day-1 installation: CSRs approved and the Node labelled on
    a second test kube-apiserver playing the spoke, the host Done.

Day 1 runs the installer's bootstrap flow in dry run on the bootstrap
host (its waits see the other hosts' fake reboot markers as Ready nodes).
The hosts' namespaces reach only the lab's own servers: with
CRADLE_TEST_KUBECONFIG or CRADLE_TEST_SERVICE_URL set the file skips
(test-hub-e2e.c is the suite that runs against real servers)."""
import importlib.util
import os
import re
import signal
import subprocess
import sys
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
if os.environ.get("CRADLE_TEST_KUBECONFIG") or os.environ.get("CRADLE_TEST_SERVICE_URL"):
    skip("the lab's hosts live in network namespaces that reach only the lab's own kube-apiserver and service")

T0 = time.monotonic()


def say(msg):
    sys.stderr.write("[%6.1fs] %s\n" % (time.monotonic() - T0, msg))
    sys.stderr.flush()


def labs():
    """The lab namespaces and loop devices on this machine (a rehearsal's
    included), to see that nothing is left behind."""
    ns = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                        universal_newlines=True).stdout
    loops = subprocess.run(["losetup", "-a"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True).stdout
    return ({line.split()[0] for line in ns.splitlines() if line.startswith("chl")},
            {line.split(":")[0] for line in loops.splitlines() if "/cradle-rehearse-" in line})


def rehearse_dirs():
    return {d for d in os.listdir("/tmp") if d.startswith("cradle-rehearse-")}


def rehearse_argv(ns):
    return [sys.executable, os.path.join(H.SRC, "tools", "rehearse"), "--namespace", ns, "--timeout", "600"]


class Base(unittest.TestCase):
    def setUp(self):
        self.lab = H.Lab("hub-install")
        self.ns = "hub-install-" + uuid.uuid4().hex[:8]

    def tearDown(self):
        res = getattr(self._outcome, "result", None)
        failed = res is not None and any(t is self for t, _ in res.errors + res.failures)
        if failed and hasattr(self, "flow"):
            for name in ("cradle-hub", "cradle-hub-again", "h1", "h4"):
                say("--- %s (tail)\n%s" % (name, self.lab.log(name)[-3000:]))
        self.lab.close()

    def install(self, hosts=3, **kw):
        self.flow = H.Install(self.lab, self.ns, say=say, hosts=hosts, **kw).up()
        return self.flow

    def wait(self, what, fn, timeout=120):
        return H.wait(what, fn, timeout)

    def calls(self, operation, status=None):
        """the service's answers to operation (status: only those)"""
        return [r for r in self.flow.svc.requests(operation=operation) if status is None or r.get("status") == status]

    def install_calls(self):
        return self.calls("v2InstallCluster", 202)

    def snapshot(self):
        """resourceVersions of every object of the namespace cradle-hub could write"""
        out = {}
        for kind in ("Agent", "AgentClusterInstall", "ClusterDeployment", "InfraEnv", "NMStateConfig", "Secret",
                     "ConfigMap"):
            for o in self.flow.kube.list(kind, self.ns):
                out["%s/%s" % (kind, o["metadata"]["name"])] = o["metadata"]["resourceVersion"]
        return out

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


class Rehearsal(Base):
    def test_rehearsal_day1(self):
        """tools/rehearse, as the README's first command runs it"""
        with open(os.path.join(H.SRC, "README.md")) as fh:
            first = re.findall(r"^    (tools/deps .*)$", fh.read(), re.M)[0]
        self.assertTrue(first.endswith("&& tools/rehearse"), first)
        before, dirs = labs(), rehearse_dirs()
        t = time.monotonic()
        p = subprocess.run(rehearse_argv(self.ns), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=900)
        took = time.monotonic() - t
        say("tools/rehearse exit %d after %.0f s:\n%s" % (p.returncode, took, p.stdout[-6000:]))
        # nothing of it left, whatever the outcome
        after = labs()
        self.assertEqual(after[0] - before[0], set())
        self.assertEqual(after[1] - before[1], set())
        self.assertEqual(rehearse_dirs() - dirs, set())
        self.assertIn("cleaning up: processes, namespaces, loop devices", p.stdout)
        for row in ("applied ClusterDeployment/single-node", "applied AgentClusterInstall/test-agent-cluster-install",
                    "applied InfraEnv/myinfraenv", "approved agent/spoke-master-1",
                    "controller stand-in started: the DRY-RUN STAND-IN for the assisted-installer-controller"):
            self.assertIn(row, p.stdout)
        self.assertEqual(p.returncode, 0)
        self.assertIn("Completed: The installation has completed", p.stdout)
        self.assertIn("secrets: single-node-admin-kubeconfig (kubeconfig), single-node-admin-password", p.stdout)
        # hive's clusterMetadata: the OpenShift cluster id the service gave the installation, its own id
        self.assertRegex(p.stdout, r'"clusterID": "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", '
                                   r'"infraID": "[0-9a-f-]{36}"')
        self.assertRegex(p.stdout, r"REHEARSAL COMPLETED in \d+ s")
        self.assertIn("stage=Done", p.stdout)

    def test_rehearsal_interrupted(self):
        """Ctrl-C halfway: everything it made is removed"""
        before, dirs = labs(), rehearse_dirs()
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
        after = labs()
        self.assertEqual(after[0] - before[0], set())
        self.assertEqual(after[1] - before[1], set())
        self.assertEqual(rehearse_dirs() - dirs, set())
        ps = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE, universal_newlines=True).stdout
        self.assertNotIn(self.ns, ps)


class MidInstall(Base):
    def start_installation(self):
        f = self.install()
        f.apply()
        f.boot()
        # as far as the installation, the controller stand-in not started
        f.run(timeout=300, until=lambda f: f.state() in ("installing", "installing-in-progress"), controller=False)
        return f

    def test_restart_installs_once_and_rewrites_nothing(self):
        f = self.start_installation()
        self.assertEqual(len(self.install_calls()), 1)
        # the world stands still (the agents stopped), cradle-hub has caught up
        self.pause_agents(signal.SIGSTOP)
        self.quiet(f.hub)
        before = self.snapshot()
        self.assertIn("Secret/single-node-admin-kubeconfig", before)
        # killed, as a crash would, and started again
        f.hub.stop(signal.SIGKILL)
        hub = H.Hub(self.lab, f.kubeconfig, f.svc.url, self.ns, name="cradle-hub-again").start()
        f.hub = hub
        # every object reconciled, a resync of the service (5 s) and more
        self.wait("the restarted cradle-hub to reconcile", lambda: all(
            re.search(r'controller_runtime_reconcile_total\{controller="%s",result="success"\} [1-9]' % c,
                      hub.metrics()) for c in ("clusterdeployment", "agent", "infraenv")), 60)
        time.sleep(7)
        self.assertEqual(self.writes(hub), {})
        self.assertEqual(self.snapshot(), before)
        self.assertEqual(len(self.install_calls()), 1)
        # and it goes on from there
        self.pause_agents(signal.SIGCONT)
        f.run(timeout=600)
        self.assertEqual(len(self.install_calls()), 1)
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
        self.assertTrue(self.calls("V2CancelInstallation"), "the installation was not cancelled")
        self.assertTrue(self.calls("v2DeregisterCluster", 204), "the cluster was not deregistered")
        self.assertEqual(f.hub.stop(), 0)


class Day2(Base):
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

    def test_day2_worker_of_an_imported_cluster(self):
        f = self.install(hosts=1)
        host = f.hosts[0]
        host["hostname"] = "spoke-worker-1"
        spoke = H.start_spoke(self.lab)
        with open(spoke.path("kubeconfig")) as fh:
            kubeconfig = fh.read()
        f.kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns}})
        f.kube.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "spoke-admin-kubeconfig",
                                                                            "namespace": self.ns},
                       "stringData": {"kubeconfig": kubeconfig}})
        for o in H.docs_resources(self.ns, f.hosts):
            if o["kind"] == "ClusterDeployment":
                # installed already: hive's clusterMetadata, the spoke's admin kubeconfig
                o["spec"]["installed"] = True
                o["spec"]["clusterMetadata"] = {"clusterID": str(uuid.uuid4()), "infraID": "spoke-x1",
                                                "adminKubeconfigSecretRef": {"name": "spoke-admin-kubeconfig"}}
            f.kube.apply(o)
        f.boot()
        self.wait("the imported cluster", lambda: (f.step(approve=False), f.state() == "adding-hosts")[1], 120)
        self.join(f, spoke, host, {"node-role.kubernetes.io/infra": "", "location": "rack-7"})
        self.assertEqual(len(self.calls("v2ImportCluster", 201)), 1)
        self.assertEqual(f.hub.stop(), 0)

    def test_day2_worker_after_day1(self):
        f = self.install()
        f.apply()
        f.boot()
        f.run(timeout=600)
        spoke = H.start_spoke(self.lab)
        with open(spoke.path("kubeconfig")) as fh:
            kubeconfig = fh.read()
        # the installed cluster is the spoke: its admin kubeconfig, as an
        # administrator would point it elsewhere (the service's names
        # api.<cluster>.<domain>, which this machine cannot resolve)
        f.kube.patch("Secret", self.ns, f.secrets()[0], {"stringData": {"kubeconfig": kubeconfig}})
        self.wait("the day-2 cluster", lambda: (f.step(approve=False), f.state() == "adding-hosts")[1], 60)
        worker, = f.add_hosts(1)
        f.kube.apply(H.nmstate_config(self.ns, worker))
        f.boot([worker])
        self.join(f, spoke, worker, {"node-role.kubernetes.io/worker": ""})
        self.assertEqual(len(self.install_calls()), 1)
        self.assertEqual(len(self.calls("v2InstallHost", 202)), 1)
        self.assertEqual(f.hub.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
