#!/usr/bin/python3
"""`cradle installer` as the bootstrap (notes §4) and as the single node
(§4.9), end to end:

  - the reference service in the installer scenario records every stage,
    also those the bootstrap reports for the OTHER hosts (Joined,
    Configuring, Waiting for ignition);
  - the new cluster is the test kube-apiserver (tests/kubeapi), or the
    cluster CRADLE_TEST_KUBECONFIG names (tests/installer/kubelab.py): the
    test creates the nodes and turns them Ready, writes cluster-config-v1,
    posts the controller's Event, creates the MachineConfigs, and watches
    the etcd override come and go;
  - the host is a directory the test made (--host-root): bootstrap.ign is
    laid into it (natively, or by a machine-config-daemon stand-in in a real
    podman container), and systemctl is a stand-in at the process boundary
    that plays the units and records every call (stand-ins/host-tool);
  - the image is written to a loop device by the coreos-installer stand-in.

The test is the cluster's director: it waits for the installer to report a
stage, checks what must hold then, and makes the next thing happen. No
timing decides a verdict.

Run by tests/helpers/in-pidns.sh (PID and mount namespace of its own; the
machine's network, so that a real cluster is reachable; everything it serves
binds 127.0.0.1). Environment: CRADLE_BINARY, CRADLE_SOURCE_ROOT,
CRADLE_BUILD_ROOT, CRADLE_TEST_KUBECONFIG (optional).
"""
import base64
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab as L  # noqa: E402

L.require_basics()
try:
    import yaml  # noqa: F401
except ImportError:
    L.skip("python3-yaml is not installed (the test kube-apiserver and kubeconfigs need it)")
import kubelab  # noqa: E402

HB = "a1a1a1a1-0000-4000-8000-0000000000b0"  # the bootstrap
WAIT = int(os.environ.get("BOOTSTRAP_TEST_WAIT", "240"))

BOOTSTRAP_STAGES = [("Waiting for control plane", "Waiting for bootstrap node preparation"),
                    ("Waiting for control plane", "Waiting for masters to join bootstrap control plane"),
                    ("Waiting for bootkube", ""),
                    ("Waiting for bootkube", "waiting for ETCD bootstrap to be complete"),
                    ("Waiting for controller", "waiting for controller pod ready event"),
                    ("Rebooting", "")]
BEFORE_4_7_STAGES = [("Waiting for control plane", "Waiting for bootstrap node preparation"),
                     ("Waiting for control plane", "Waiting for masters to join bootstrap control plane"),
                     ("Waiting for bootkube", ""),
                     ("Waiting for controller", "waiting for controller pod ready event"),
                     ("Rebooting", "")]
UNITS = {
    "bootkube.service": "[Unit]\nDescription=Bootstrap a Kubernetes cluster\nWants=kubelet.service\n"
                        "[Service]\nExecStart=/usr/local/bin/bootkube.sh\n[Install]\nWantedBy=multi-user.target\n",
    "approve-csr.service": "[Unit]\nDescription=Approve CSRs\n[Service]\nExecStart=/usr/local/bin/approve-csr.sh\n"
                           "[Install]\nWantedBy=multi-user.target\n",
    "progress.service": "[Unit]\nDescription=Report the completion of the cluster bootstrap process\n"
                        "[Service]\nExecStart=/usr/local/bin/report-progress.sh\n[Install]\n"
                        "WantedBy=multi-user.target\n",
    "kubelet.service": "[Unit]\nDescription=Kubernetes Kubelet\n[Service]\nExecStart=/usr/bin/kubelet\n"
                       "[Install]\nWantedBy=multi-user.target\n",
}


def data_url(b):
    return "data:;base64," + base64.b64encode(b if isinstance(b, bytes) else b.encode()).decode()


def bootstrap_ign(kubeconfig, marker=True, extra_files=(), extra_units=()):
    """A bootstrap.ign as the service serves it: the assets the bootstrap
    needs (admin kubeconfig, pull secret, bootkube.sh), the units, and the
    delayed-HA marker the service adds from 4.7 on."""
    files = [{"path": "/opt/openshift/auth/kubeconfig", "mode": 0o600, "overwrite": True,
              "contents": {"source": data_url(kubeconfig)}},
             {"path": "/root/.docker/config.json", "mode": 0o600, "overwrite": True,
              "contents": {"source": data_url(json.dumps({"auths": {"quay.io": {"auth": "dGVzdDp0ZXN0"}}}))}},
             {"path": "/usr/local/bin/bootkube.sh", "mode": 0o555,
              "contents": {"source": "data:,%23!%2Fusr%2Fbin%2Fenv%20bash%0Aecho%20bootkube%0A"}},
             {"path": "/etc/motd", "mode": 0o644, "contents": {"source": "data:,bootstrap%20node%0A",
                                                                "compression": ""}}]
    if marker:
        files.append({"path": "/opt/openshift/assisted-install-bootstrap", "mode": 0o644,
                      "contents": {"source": "data:,"}})
    files += list(extra_files)
    units = [{"name": n, "contents": c, "enabled": n in ("kubelet.service",)} for n, c in sorted(UNITS.items())]
    units.append({"name": "crio.service", "dropins": [{"name": "10-mirror.conf", "contents": "[Service]\n"}]})
    units += list(extra_units)
    return {"ignition": {"version": "3.2.0"},
            "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAtest"]}]},
            "storage": {"files": files}, "systemd": {"units": units}}


def mcs_log_line(ip, pool="master"):
    host = "[%s]" % ip if ":" in ip else ip
    return ('I1124 10:00:01.123456       1 api.go:117] Pool %s requested by address:"%s:43212" '
            'User-Agent:"Ignition/2.14.0" Accept-Header: "application/vnd.coreos.ignition+json;version=3.2.0"\n'
            % (pool, host))


def tree(root, skip=()):
    """{path: (kind, mode, content or target)} under root."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = "/" + os.path.relpath(p, root)
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), None)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", stat.S_IMODE(st.st_mode), f.read())
    return out


class BootstrapBase(L.ServiceCase):
    """One service and one kube API per class; per test a host root, a
    bootstrap.ign for this cluster, nodes of its own."""

    version = "4.13.18"
    delayed_ha = True  # >= 4.7
    control_plane_count = 3
    apply = "native"

    @classmethod
    def service_scenario(cls):
        s = L.scenario()
        s["clusters"][0]["control_plane_count"] = cls.control_plane_count
        s["clusters"][0]["openshift_version"] = cls.version
        # the bootstrap, two masters at Rebooting, a worker at Rebooting
        s["hosts"] = [{"id": HB, "infra_env_id": L.IE, "inventory": L.inventory_for(0), "role": "master",
                       "bootstrap": True, "status": "installing"},
                      {"id": L.H1, "infra_env_id": L.IE, "inventory": L.inventory_for(1), "role": "master",
                       "status": "installing", "stage": "Rebooting"},
                      {"id": L.H2, "infra_env_id": L.IE, "inventory": L.inventory_for(2), "role": "master",
                       "status": "installing", "stage": "Rebooting"},
                      {"id": L.H3, "infra_env_id": L.IE, "inventory": L.inventory_for(3), "role": "worker",
                       "status": "installing", "stage": "Rebooting"}]
        return s

    @classmethod
    def setUpClass(cls):
        L.ServiceCase.setUpClass.__func__(cls)
        cls.kube = kubelab.Cluster().start()

    @classmethod
    def tearDownClass(cls):
        cls.kube.stop()
        L.ServiceCase.tearDownClass.__func__(cls)

    def setUp(self):
        L.ServiceCase.setUp(self)
        self.addCleanup(self.kube.cleanup)
        self.tag = uuid.uuid4().hex[:6]
        # names of this test's own: a real cluster may hold another run's
        self.names = {h: "%s-%s" % (n, self.tag) for h, n in ((L.H1, "master-1"), (L.H2, "master-2"),
                                                               (L.H3, "worker-3"), (HB, "bootstrap-0"))}
        present = [h["id"] for h in self.service_scenario()["hosts"]]
        self.names = {h: n for h, n in self.names.items() if h in present}
        for h, name in self.names.items():
            self.svc.set_host(h, requested_hostname=name)
        self.svc.set_host(HB, ignition=L.host_ignition("bootstrap-0"))
        self.root = self.lab.path("root")
        for d in ("etc/systemd/system", "usr/lib/systemd/system", "usr/bin", "opt/install-dir", "var/log/containers",
                  "root", "var/log/journal", "mnt"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        for f in ("usr/lib/systemd/system/NetworkManager.service", "usr/bin/oc", "usr/bin/rpm-ostree"):
            open(os.path.join(self.root, f), "w").close()
        self.inst = L.Installer(self.lab, self.svc)
        self.kube.controller_event_absent()
        self.mc = "rendered-master-" + self.tag
        self.units = {"progress.service": {"state": "active"}}

    # -- the flow -----------------------------------------------------------------
    def set_bootstrap_ign(self, ign):
        self.svc.control("POST", "/clusters/%s" % L.CL, {"files": {"bootstrap.ign": ign}})

    def cradle_flags(self):
        flags = self.inst.cradle_flags()
        flags[flags.index("--install-dir") + 1] = os.path.join(self.root, "opt/install-dir")
        flags += ["--host-root", self.root, "--bootstrap-apply=%s" % self.apply, "--poll-interval=0.05",
                  "--slow-poll-interval=0.1", "--controller-logs-interval=0.3"]
        return flags

    def env(self, **extra):
        e = self.inst.env(STANDIN_ROOT=self.root, STANDIN_UNITS=json.dumps(self.units), **extra)
        for tool in ("hostnamectl",):
            found = shutil.which(tool, path=e["PATH"])
            assert found and found.startswith(L.STAND_INS), "%s would not be the stand-in: %s" % (tool, found)
        return e

    def start(self, dev, role="bootstrap", host=HB, extra=(), env=None):
        a = ["--openshift-version", self.version, "--control-plane-count", str(self.control_plane_count)]
        return self.inst.start(dev, role=role, host=host, extra=a + list(extra), cradle_extra=self.cradle_flags(),
                               env=env or self.env())

    def stages(self, host=HB):
        return L.progress_of(self.svc, host)

    def wait_stage(self, stage, info=None, host=HB, proc=None, timeout=WAIT):
        end = time.time() + timeout
        while time.time() < end:
            for s, i in self.stages(host):
                if s == stage and (info is None or i == info):
                    return
            if proc is not None and proc.poll() is not None:
                raise AssertionError("the installer exited (%s) before %s - %s:\n%s" % (
                    proc.returncode, stage, info, self.inst.output()[-6000:]))
            time.sleep(0.05)
        raise AssertionError("no %s - %s for %s in %ss:\n%s" % (stage, info, host, timeout, self.inst.output()[-6000:]))

    def wait_output(self, text, proc, timeout=WAIT):
        end = time.time() + timeout
        while time.time() < end:
            if text in self.inst.output():
                return
            if proc.poll() is not None:
                raise AssertionError("the installer exited (%s) before logging %r:\n%s" % (
                    proc.returncode, text, self.inst.output()[-6000:]))
            time.sleep(0.05)
        raise AssertionError("no %r in the installer's output in %ss:\n%s" % (text, timeout,
                                                                             self.inst.output()[-4000:]))

    def finish(self, proc, timeout=WAIT):
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("the installer did not finish:\n%s" % self.inst.output()[-8000:])

    def failed_info(self, env=None):
        """Runs the bootstrap to its end, which must be Failed: its info."""
        self.assertEqual(self.finish(self.start(self.lab.loop(), env=env)), 1, self.inst.output()[-5000:])
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed", self.stages())
        return info

    def set_unit_state(self, unit, state):
        path = self.inst.standin_log + ".units.json"
        with open(path) as f:
            st = json.load(f)
        st[unit] = {"state": state, "started": time.time()}
        with open(path + ".tmp", "w") as f:
            json.dump(st, f)
        os.rename(path + ".tmp", path)

    def bootkube_done(self):
        p = os.path.join(self.root, "opt/openshift/.bootkube.done")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").close()

    def masters_ready(self, proc, by_ip=False):
        """The two other masters join; one by name, the other (by_ip) under
        another name, found by its InternalIP."""
        n1, n2 = self.names[L.H1], ("node-" + self.tag if by_ip else self.names[L.H2])
        self.kube.node(n1, "198.51.100.11", mc=self.mc)
        self.kube.node(n2, "198.51.100.12", mc=self.mc)
        self.kube.node_status(n1, "198.51.100.11", True)
        self.wait_stage("Joined", host=L.H1, proc=proc)
        self.assertNotIn("Joined", [s for s, _ in self.stages(L.H2)], "Joined before its node was Ready")
        self.kube.node_status(n2, "198.51.100.12", True)
        self.wait_stage("Joined", host=L.H2, proc=proc)

    def drive_to_controller(self, proc):
        """Masters Ready, bootkube done, progress.service inactive, the
        controller's Event: each once the installer waits for it."""
        self.masters_ready(proc)
        self.wait_stage("Waiting for bootkube", "", proc=proc)
        self.bootkube_done()
        self.wait_stage("Waiting for bootkube", "waiting for ETCD bootstrap to be complete", proc=proc)
        self.set_unit_state("progress.service", "inactive")
        self.wait_stage("Waiting for controller", proc=proc)
        self.kube.controller_ready_event()

    def common_start(self, version_marker=True):
        self.kube.install_config(self.control_plane_count)
        self.kube.machine_config(self.mc)
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text(), marker=version_marker))
        with open(os.path.join(self.root, "var/log/containers", "machine-config-server-abc_openshift-machine-config-"
                               "operator_machine-config-server-0123.log"), "w") as f:
            f.write(mcs_log_line("198.51.100.11") + mcs_log_line("198.51.100.12") +
                    mcs_log_line("198.51.100.13", "worker"))

    def run_happy_flow(self, dev, expect_stages):
        proc = self.start(dev)
        # Configuring for the other hosts from the MCS log, in parallel
        self.wait_stage("Configuring", host=L.H1, proc=proc)
        self.wait_stage("Configuring", host=L.H2, proc=proc)
        self.wait_stage("Waiting for ignition", host=L.H3, proc=proc)
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.masters_ready(proc, by_ip=True)
        self.wait_stage("Waiting for bootkube", "", proc=proc)
        self.after_bootkube_stage(proc)
        self.bootkube_done()
        if self.delayed_ha:
            self.wait_stage("Waiting for bootkube", "waiting for ETCD bootstrap to be complete", proc=proc)
            self.wait_output("progress.service is active", proc)
            self.set_unit_state("progress.service", "inactive")
        self.wait_stage("Waiting for controller", proc=proc)
        self.before_controller_ready(proc)
        self.kube.controller_ready_event()
        rc = self.finish(proc)
        out = self.inst.output()
        self.assertEqual(rc, 0, out[-8000:])
        got = self.stages()
        expected = [("Starting installation", "bootstrap")] + self.cleanup_expected(dev) + \
            [("Installing", "master"), ("Writing image to disk", "")] + \
            [("Writing image to disk", p) for p in L.expected_percents()] + expect_stages
        self.assertEqual(got, expected)
        # the other hosts, by their own ids
        self.assertEqual(self.stages(L.H1), [("Configuring", ""), ("Joined", "")])
        self.assertEqual(self.stages(L.H2), [("Configuring", ""), ("Joined", "")])
        self.assertEqual(self.stages(L.H3), [("Waiting for ignition", "")])
        return out

    def after_bootkube_stage(self, proc):
        pass

    def before_controller_ready(self, proc):
        pass

    def cleanup_expected(self, dev):
        return [] if L.kernel_has("dm") else [
            ("Starting installation", "Could not clean install device %s. The installation will continue. If the "
             "installation fails, clean the disk and try again" % dev)]

    def systemctl_calls(self):
        return [r[1:] for r in self.inst.standin_runs("systemctl")]


class TestBootstrap(BootstrapBase):
    """OpenShift >= 4.7: the delayed-HA etcd bootstrap (progress.service)."""

    def test_bootstrap_flow(self):
        self.common_start()
        dev = self.lab.loop()
        out = self.run_happy_flow(dev, BOOTSTRAP_STAGES)

        # the bodies: the texts upstream sends
        bodies = [r["body"] for r in self.svc.requests(operation="v2UpdateHostInstallProgress")
                  if "/hosts/%s/" % HB in r["path"]]
        self.assertIn({"current_stage": "Waiting for bootkube"}, bodies)
        # bootstrap.ign downloaded once, the host's own ignition as master-<id>.ign
        files = self.svc.requests(operation="V2DownloadClusterFiles")
        self.assertEqual([r["query"] for r in files], ["file_name=bootstrap.ign"])
        with open(os.path.join(self.root, "opt/install-dir/bootstrap.ign")) as f:
            self.assertIn("/opt/openshift/auth/kubeconfig", f.read())
        self.assertEqual(os.stat(os.path.join(self.root, "opt/install-dir/bootstrap.ign")).st_mode & 0o777, 0o600)
        runs = self.inst.standin_runs("coreos-installer")
        self.assertEqual(runs[0][:5], ["coreos-installer", "install", "--insecure", "-i",
                                       os.path.join(self.root, "opt/install-dir", "master-%s.ign" % HB)])

        # the host: the pull secret, the assets, the units
        with open(os.path.join(self.root, "root/.docker/config.json")) as f:
            self.assertEqual(json.load(f)["auths"]["quay.io"]["auth"], "dGVzdDp0ZXN0")
        self.assertEqual(os.stat(os.path.join(self.root, "root/.docker/config.json")).st_mode & 0o777, 0o600)
        self.assertTrue(os.path.exists(os.path.join(self.root, "etc/systemd/system/bootkube.service")))
        self.assertEqual(os.readlink(os.path.join(self.root, "etc/systemd/system/multi-user.target.wants/"
                                                  "kubelet.service")), "/etc/systemd/system/kubelet.service")
        self.assertEqual(os.stat(os.path.join(self.root, "usr/local/bin/bootkube.sh")).st_mode & 0o777, 0o555)
        self.assertIn("Not applied, as the machine-config-daemon's once-from does not apply them either: "
                      "passwd.users (1)", out)

        # the ssh key and its MachineConfig
        self.assertTrue(os.path.exists(os.path.join(self.root, "root/.ssh/id_rsa")))
        with open(os.path.join(self.root, "opt/openshift/openshift/"
                               "99_openshift-machineconfig_99-assisted-installer-master-ssh.yaml")) as f:
            mc = yaml.safe_load(f)
        with open(os.path.join(self.root, "root/.ssh/id_rsa.pub")) as f:
            self.assertEqual(mc["spec"]["config"]["passwd"]["users"][0]["sshAuthorizedKeys"], [f.read().strip()])
        self.assertEqual(mc["metadata"]["name"], "99-assisted-installer-master-ssh")

        # the controller's manifests, before bootkube started
        mdir = os.path.join(self.root, "opt/openshift/manifests")
        objs = {}
        for n in sorted(os.listdir(mdir)):
            with open(os.path.join(mdir, n)) as f:
                o = yaml.safe_load(f)
            objs[o["kind"]] = o
        self.assertEqual(sorted(objs), ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Job", "Namespace",
                                        "NetworkPolicy", "Role", "RoleBinding", "Secret", "ServiceAccount"])
        self.assertEqual(objs["ConfigMap"]["data"]["cluster-id"], L.CL)
        self.assertEqual(objs["ConfigMap"]["data"]["skip-cert-verification"], "true")
        self.assertEqual(base64.b64decode(objs["Secret"]["data"]["pull-secret-token"]).decode(), L.TOKEN)
        self.assertEqual(os.stat(os.path.join(mdir, "assisted-installer-controller-secret.yaml")).st_mode & 0o777,
                         0o600)
        self.assertEqual(objs["Job"]["spec"]["template"]["spec"]["containers"][0]["image"], L.CONTROLLER)
        self.assertNotIn(L.TOKEN, out)

        # systemd: the calls in upstream order (the native apply's presets
        # and enables first)
        calls = self.systemctl_calls()
        order = [c for c in calls if c[0] in ("daemon-reload", "restart", "start")]
        self.assertEqual(order, [["daemon-reload"], ["restart", "NetworkManager.service"],
                                 ["start", "bootkube.service"], ["start", "approve-csr.service"],
                                 ["start", "progress.service"]])
        self.assertIn(["enable", "kubelet.service"], calls)
        self.assertLess(calls.index(["enable", "kubelet.service"]), calls.index(["daemon-reload"]))
        self.assertIn(["is-active", "progress.service"], calls)
        self.assertEqual(calls[-1], ["list-units", "--no-legend", "ironic-agent.service"])
        self.assertEqual(self.inst.standin_runs("shutdown"),
                         [["shutdown", "-r", "+1", "'Installation completed, server is going to reboot.'"]])
        self.assertEqual(self.inst.standin_runs("hostnamectl"), [])

        # the journal says where it stands at every wait
        for text in ("waiting for master nodes: 1 of 2 master nodes Ready", "2 of 2 master nodes Ready",
                     "Waiting for bootkube: /opt/openshift/.bootkube.done does not exist yet",
                     "All master nodes have consistent MachineConfig annotations (desired=%s)" % self.mc,
                     "Assisted controller is ready", "Setting bootstrap node new role to master"):
            self.assertIn(text, out)
        # each manifest is an object the API server takes (dryRun=All: nothing
        # is created); the test server serves only some of the kinds
        for n in sorted(os.listdir(mdir)):
            with open(os.path.join(mdir, n)) as f:
                o = yaml.safe_load(f)
            r = self.kube.dry_run_create(o)
            if r is None:
                print("note: the API server does not serve %s; %s checked by structure only "
                      "(test-controller-manifests)" % (o["kind"], n))
                continue
            # AlreadyExists comes after validation (the namespace is there)
            self.assertIn(r.status, (201, 409), (n, r))
            if r.status == 409:
                self.assertEqual(r.json["reason"], "AlreadyExists", (n, r))
        # logs uploaded as the bootstrap's
        self.assertEqual(self.svc.logs()[0]["host_id"], HB)
        # etcd: untouched from 4.7 on
        self.assertIn("etcd bootstrap delayed-ha", out)

    def test_a_failed_test_does_not_disturb_the_next(self):
        """Two tests of this class in a row, the first failing while its
        installer waits for the masters: the second one, on the same host
        ids, still goes through (issue 23: the first one's installer went on
        reporting, and the next test's reports were refused as a lower
        stage)."""
        owner = type(self)
        started = []

        class Failing(owner):
            def runTest(t):
                t.common_start()
                proc = t.start(t.lab.loop())
                started.append(proc)
                t.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                             proc=proc)
                t.fail("failing while the installer waits for the masters")

        class Passing(owner):
            def runTest(t):
                t.common_start()
                t.run_happy_flow(t.lab.loop(), BOOTSTRAP_STAGES)

        result = unittest.TestResult()
        Failing().run(result)
        self.assertEqual([str(e[1]).splitlines()[-1] for e in result.failures],
                         ["AssertionError: failing while the installer waits for the masters"], result.errors)
        self.assertIsNotNone(started[0].poll(), "the failed test's installer still runs")
        Passing().run(result)
        self.assertEqual(result.testsRun, 2)
        self.assertEqual(len(result.failures) + len(result.errors), 1, result.failures[1:] + result.errors)

    def test_machine_config_annotations_are_waited_for(self):
        """The masters must agree on an existing MachineConfig (notes §4.7)."""
        self.common_start()
        self.kube.cleanup()  # no MachineConfig yet
        self.kube.install_config(3)
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text()))
        dev = self.lab.loop()
        proc = self.start(dev)
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.drive_to_controller(proc)
        self.wait_output("MachineConfig %s of node %s does not exist yet" % (self.mc, self.names[L.H1]), proc)
        self.assertNotIn("Rebooting", [s for s, _ in self.stages()])
        self.kube.machine_config(self.mc)
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))

    def test_controller_logs_are_uploaded(self):
        """While waiting for the controller, and once it is ready, its pod's
        log goes to the service as controller_logs.tar.gz."""
        self.kube.need_server("pod log text")
        self.common_start()
        self.kube.controller_pod("controller line 1\ncontroller line 2\n")
        dev = self.lab.loop()
        self.run_happy_flow(dev, BOOTSTRAP_STAGES)
        logs = [x for x in self.svc.logs() if x.get("logs_type") == "controller"]
        self.assertTrue(logs, self.svc.logs())
        self.assertIn("assisted-installer-controller.logs", logs[-1]["tar_members"])
        req = [r for r in self.kube.requests(subresource="log")]
        self.assertTrue(req)
        self.assertEqual(req[-1]["query"].get("sinceSeconds"), "3600")
        states = [r["body"]["logs_state"] for r in self.svc.requests(operation="v2UpdateClusterLogsProgress")]
        self.assertEqual(states, ["requested"])

    def test_api_server_not_up_yet_keeps_waiting(self):
        """The kubeconfig's server does not answer at first: the bootstrap
        keeps waiting (upstream never gives up) and goes on once it does."""
        self.common_start()
        port = kubelab.free_port()
        kc = yaml.safe_load(self.kube.kubeconfig_text())
        real = kc["clusters"][0]["cluster"]["server"]
        import urllib.parse
        u = urllib.parse.urlsplit(real)
        cl = kc["clusters"][0]["cluster"]
        cl["server"] = "https://127.0.0.1:%d" % port
        if u.hostname not in ("127.0.0.1", "localhost"):
            # a real cluster's certificate names its own host, not the proxy
            cl.pop("certificate-authority-data", None)
            cl["insecure-skip-tls-verify"] = True
        self.set_bootstrap_ign(bootstrap_ign(yaml.safe_dump(kc)))
        dev = self.lab.loop()
        proc = self.start(dev)
        self.wait_output("still waiting for the kube API server to be available", proc)
        self.assertNotIn("Failed", [s for s, _ in self.stages()])
        proxy = kubelab.Proxy(port, u.hostname, u.port or 443)
        self.addCleanup(proxy.stop)
        self.drive_to_controller(proc)
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])

    def test_progress_service_failing_keeps_waiting(self):
        """A failed progress.service never ends the wait (upstream): the log
        says so; once it is inactive the bootstrap goes on."""
        self.common_start()
        dev = self.lab.loop()
        self.units = {"progress.service": {"state": "failed"}}
        proc = self.start(dev)
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.masters_ready(proc)
        self.bootkube_done()
        self.wait_stage("Waiting for bootkube", "waiting for ETCD bootstrap to be complete", proc=proc)
        self.wait_output("progress.service failed; it never ends the wait", proc)
        self.assertNotIn("Waiting for controller", [s for s, _ in self.stages()])
        self.set_unit_state("progress.service", "inactive")
        self.wait_stage("Waiting for controller", proc=proc)
        self.kube.controller_ready_event()
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])

    def test_kubeconfig_that_does_not_parse_fails(self):
        self.common_start()
        self.set_bootstrap_ign(bootstrap_ign("apiVersion: v1\nclusters: [\n"))
        dev = self.lab.loop()
        proc = self.start(dev)
        rc = self.finish(proc)
        self.assertEqual(rc, 1, self.inst.output()[-5000:])
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertTrue(info.startswith("cannot build a Kubernetes client from /opt/openshift/auth/kubeconfig: "),
                        info)
        self.assertEqual(self.inst.standin_runs("shutdown"), [])

    def test_bootstrap_ign_404_fails(self):
        self.svc.add_fault(path="/downloads/files$", status=404, count=None)
        dev = self.lab.loop()
        proc = self.start(dev)
        self.assertEqual(self.finish(proc), 1)
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertIn("404", info)
        # 404: 10 retries, as upstream's client
        self.assertEqual(len(self.svc.requests(path="/downloads/files$")), 11)
        self.assertIn("Failed to fetch file (bootstrap.ign) from server", self.inst.output())
        self.assertEqual(self.systemctl_calls(), [])
        # the Installing stage comes after startBootstrap
        self.assertNotIn("Installing", [s for s, _ in self.stages()])

    def test_native_apply_refuses_what_it_cannot_do(self):
        self.common_start()
        ign = bootstrap_ign(self.kube.kubeconfig_text())
        ign["storage"]["files"].append({"path": "/etc/appended", "append": [{"source": "data:,x"}]})
        self.set_bootstrap_ign(ign)
        dev = self.lab.loop()
        proc = self.start(dev)
        self.assertEqual(self.finish(proc), 1)
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertIn("refusing to apply bootstrap.ign natively: \"/etc/appended\" has append entries", info)
        # nothing of it was written
        self.assertFalse(os.path.exists(os.path.join(self.root, "opt/openshift/auth/kubeconfig")))
        self.assertFalse(os.path.exists(os.path.join(self.root, "etc/systemd/system/bootkube.service")))

    def test_network_manager_failure_is_fatal(self):
        self.common_start()
        info = self.failed_info(env=self.env(STANDIN_FAIL_UNITS="NetworkManager.service"))
        self.assertTrue(info.startswith("Failed executing systemctl restart [NetworkManager.service]: "), info)
        self.assertNotIn(["start", "bootkube.service"], self.systemctl_calls())

    def test_pull_secret_missing_fails(self):
        """bootstrap.ign without /root/.docker/config.json: ExtractFromIgnition
        fails, so does the installation, before anything is laid."""
        self.common_start()
        ign = bootstrap_ign(self.kube.kubeconfig_text())
        ign["storage"]["files"] = [f for f in ign["storage"]["files"] if f["path"] != "/root/.docker/config.json"]
        self.set_bootstrap_ign(ign)
        info = self.failed_info()
        self.assertTrue(info.startswith("cannot extract /root/.docker/config.json from bootstrap.ign"), info)
        self.assertFalse(os.path.exists(os.path.join(self.root, "opt/openshift/auth/kubeconfig")))

    def test_ssh_keygen_failure_is_fatal(self):
        """ssh-keygen cannot write the key (notes §9: fatal), before bootkube."""
        self.common_start()
        os.makedirs(os.path.join(self.root, "root/.ssh/id_rsa"))  # a directory where the key goes
        info = self.failed_info()
        self.assertIn("ssh-keygen", info)
        self.assertIn("Failed to generate SSH key pair", self.inst.output())
        self.assertNotIn(["start", "bootkube.service"], self.systemctl_calls())

    def test_controller_manifests_failure_is_fatal(self):
        """The manifests cannot be written (PrepareController: fatal)."""
        self.common_start()
        os.makedirs(os.path.join(self.root, "opt/openshift"), exist_ok=True)
        open(os.path.join(self.root, "opt/openshift/manifests"), "w").close()  # a file, not a directory
        info = self.failed_info()
        self.assertIn("/opt/openshift/manifests/", info)
        self.assertNotIn(["start", "bootkube.service"], self.systemctl_calls())

    def test_bootkube_start_failure_is_fatal(self):
        self.common_start()
        info = self.failed_info(env=self.env(STANDIN_FAIL_UNITS="bootkube.service"))
        self.assertTrue(info.startswith("Failed executing systemctl start [bootkube.service]: "), info)
        self.assertNotIn(["start", "approve-csr.service"], self.systemctl_calls())
        self.assertIn("failed to start bootstrap services", self.inst.output())

    def test_cluster_query_failure_is_fatal(self):
        """GetCluster in waitForControlPlane failing for good (a 403 is not
        retried) fails the installation; the image is on disk by then."""
        self.common_start()
        self.svc.add_fault(method="GET", path="/v2/clusters/%s$" % L.CL, query="exclude-hosts=true", status=403,
                           count=None)
        dev = self.lab.loop()
        proc = self.start(dev)
        self.assertEqual(self.finish(proc), 1)
        got = self.stages()
        self.assertEqual(got[-2:], [("Waiting for control plane", "Waiting for masters to join bootstrap control plane"),
                                    ("Failed", got[-1][1])])
        self.assertIn("403", got[-1][1])
        self.assertEqual(self.inst.standin_runs("shutdown"), [])

    def test_invalid_hostname_is_replaced(self):
        """hostname "localhost" (a UTS namespace of the test's): a random one
        through hostnamectl."""
        self.common_start()
        dev = self.lab.loop()
        a = ["--openshift-version", self.version, "--control-plane-count", "3"]
        argv = ["unshare", "--uts", "sh", "-c", 'hostname localhost && exec "$@"', "sh"] + \
            self.inst.argv(dev, role="bootstrap", host=HB, extra=a, cradle_extra=self.cradle_flags())
        out = open(self.lab.path("uts.log"), "w+")
        self.lab.files.append(out)
        self.inst.out = out
        proc = self.lab.spawn(argv, env=self.env(STANDIN_FAIL="systemctl"), stdout=out, stderr=subprocess.STDOUT)
        self.assertEqual(self.finish(proc), 1)  # systemctl fails at daemon-reload: before the hostname
        runs = self.inst.standin_runs("hostnamectl")
        self.assertEqual(runs, [])
        # now with systemctl working: the hostname is fixed after daemon-reload
        os.unlink(self.inst.standin_log)
        self.svc.reset(self.service_scenario())
        for h, name in self.names.items():
            self.svc.set_host(h, requested_hostname=name)
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text()))
        shutil.rmtree(os.path.join(self.root, "root/.ssh"))
        proc = self.lab.spawn(argv, env=self.env(STANDIN_FAIL_UNITS="NetworkManager.service"), stdout=out,
                              stderr=subprocess.STDOUT)
        self.assertEqual(self.finish(proc), 1)
        runs = self.inst.standin_runs("hostnamectl")
        self.assertEqual(len(runs), 1, self.inst.output()[-3000:])
        self.assertEqual(runs[0][:2], ["hostnamectl", "set-hostname"])
        self.assertTrue(runs[0][2].startswith("random-hostname-"), runs[0])
        self.assertEqual(len(runs[0][2]), len("random-hostname-") + 36)


class TestBootstrapWaits(BootstrapBase):
    """The waits around the control plane: the node-image overlay, the
    uninitialized taint, arbiters, the agent-based installer's workers."""

    def node_image_units(self):
        return [{"name": "node-image-pull.service", "contents": "[Unit]\n[Service]\nType=oneshot\n"},
                {"name": "node-image-overlay.service", "contents": "[Unit]\n[Service]\nType=oneshot\n"}]

    def test_node_image_overlay_when_oc_is_missing(self):
        self.common_start()
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text(), extra_units=self.node_image_units()))
        os.unlink(os.path.join(self.root, "usr/bin/oc"))
        self.units["node-image-pull.service"] = {"state": "activating", "then": "active", "after": 0.3}
        self.units["node-image-overlay.service"] = {"state": "active", "touch": {"/usr/bin/oc": ""}}
        dev = self.lab.loop()
        proc = self.start(dev)
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.drive_to_controller(proc)
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])
        calls = self.systemctl_calls()
        start = calls.index(["start", "--no-block", "node-image-pull.service", "node-image-overlay.service"])
        self.assertLess(start, calls.index(["start", "bootkube.service"]))
        shows = [c for c in calls if c[:3] == ["show", "-P", "ActiveState"]]
        self.assertEqual(shows[-1], ["show", "-P", "ActiveState", "node-image-overlay.service"])
        self.assertIn("node-image-pull.service status: activating", self.inst.output())

    def test_node_image_failing_fails(self):
        self.common_start()
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text(), extra_units=self.node_image_units()))
        os.unlink(os.path.join(self.root, "usr/bin/oc"))
        self.units["node-image-pull.service"] = {"state": "failed"}
        dev = self.lab.loop()
        self.assertEqual(self.finish(self.start(dev)), 1)
        self.assertEqual(self.stages()[-1], ("Failed", "service node-image-pull.service failed"))
        self.assertIn(["status", "node-image-pull.service"], self.systemctl_calls())
        self.assertNotIn(["start", "bootkube.service"], self.systemctl_calls())

    def test_uninitialized_taint_goes_on_nutanix(self):
        self.svc.control("POST", "/clusters/%s" % L.CL, {"platform_type": "nutanix"})
        self.common_start()
        dev = self.lab.loop()
        proc = self.start(dev)
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        taint = {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}
        keep = {"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}
        n1 = self.names[L.H1]
        self.kube.node(n1, "198.51.100.11", mc=self.mc, taints=[keep, taint])
        end = time.time() + WAIT
        while time.time() < end:
            if taint["key"] not in [t["key"] for t in self.kube.get_node(n1)["spec"].get("taints", [])]:
                break
            time.sleep(0.05)
        # the taints of the test's own: the node controller adds its not-ready
        # one to this NotReady node, which the installer leaves alone
        left = [t for t in self.kube.get_node(n1)["spec"]["taints"] if t["key"] in (keep["key"], taint["key"])]
        self.assertEqual(left, [keep])
        self.wait_output("Removed the taint node.cloudprovider.kubernetes.io/uninitialized from node " + n1, proc)
        self.kube.node_status(n1, "198.51.100.11", True)
        self.kube.node(self.names[L.H2], "198.51.100.12", mc=self.mc, ready=True)
        self.wait_stage("Waiting for bootkube", "", proc=proc)
        self.bootkube_done()
        self.wait_stage("Waiting for bootkube", "waiting for ETCD bootstrap to be complete", proc=proc)
        self.set_unit_state("progress.service", "inactive")
        self.wait_stage("Waiting for controller", proc=proc)
        self.kube.controller_ready_event()
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])

    def test_two_masters_and_an_arbiter(self):
        """replicas 2 and an arbiter: one master besides this one, then the
        arbiter (its node label node-role.kubernetes.io/arbiter)."""
        self.common_start()
        self.kube.install_config(2, arbiters=1)
        self.svc.set_host(L.H2, role="arbiter")
        dev = self.lab.loop()
        proc = self.start(dev)
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.kube.node(self.names[L.H1], "198.51.100.11", mc=self.mc, ready=True)
        self.wait_stage("Joined", host=L.H1, proc=proc)
        self.wait_output("waiting for arbiter nodes: 0 of 1 arbiter nodes Ready", proc)
        self.assertNotIn("Waiting for bootkube", [s for s, _ in self.stages()])
        self.kube.node(self.names[L.H2], "198.51.100.12", role="arbiter", ready=True)
        self.wait_stage("Joined", host=L.H2, proc=proc)
        self.wait_stage("Waiting for bootkube", "", proc=proc)
        self.bootkube_done()
        self.wait_stage("Waiting for bootkube", "waiting for ETCD bootstrap to be complete", proc=proc)
        self.set_unit_state("progress.service", "inactive")
        self.wait_stage("Waiting for controller", proc=proc)
        self.kube.controller_ready_event()
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])

    def test_agent_based_installer_waits_for_the_workers(self):
        self.common_start()
        # the worker has not fetched its Ignition config yet
        with open(os.path.join(self.root, "var/log/containers", "machine-config-server-abc_openshift-machine-config-"
                               "operator_machine-config-server-0123.log"), "w") as f:
            f.write(mcs_log_line("198.51.100.11") + mcs_log_line("198.51.100.12"))
        self.kube.invoker("agent-installer")
        self.svc.set_host(L.H3, stage="Installing")
        dev = self.lab.loop()
        proc = self.start(dev, extra=[])
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.drive_to_controller(proc)
        self.wait_output("still waiting for worker %s (current stage: Installing) to start the joining process"
                         % L.H3, proc)
        self.assertNotIn("Rebooting", [s for s, _ in self.stages()])
        self.svc.set_host(L.H3, stage="Rebooting")
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])
        self.assertIn(("Rebooting", ""), self.stages())


class TestBootstrapBefore47(BootstrapBase):
    """OpenShift < 4.7: the unsafe non-HA etcd override once the masters are
    Ready, removed again once bootkube is done, before the reboot."""

    version = "4.6.16"
    delayed_ha = False

    def test_bootstrap_flow_with_etcd_override(self):
        self.kube.etcd()
        self.common_start(version_marker=False)
        dev = self.lab.loop()
        self.seen_override = None
        self.run_happy_flow(dev, BEFORE_4_7_STAGES)
        self.assertTrue(self.seen_override, "the override was not on while bootkube ran")
        etcd = self.kube.get_etcd()
        self.assertNotIn("unsupportedConfigOverrides", etcd["spec"], etcd)
        out = self.inst.output()
        self.assertIn("etcd: the unsafe non-HA override is on", out)
        self.assertIn("etcd: the unsafe non-HA override is off", out)
        self.assertNotIn(["is-active", "progress.service"], self.systemctl_calls())
        if self.kube.fake:
            patches = [r for r in self.kube.requests(resource="etcds") if r["method"] == "PATCH"]
            self.assertEqual([p["body"] for p in patches],
                             [{"spec": {"unsupportedConfigOverrides": {
                                 "useUnsupportedUnsafeNonHANonProductionUnstableEtcd": True}}},
                              {"spec": {"unsupportedConfigOverrides": None}}])
            self.assertEqual(patches[0]["contentType"], "application/merge-patch+json")

    def override(self):
        return self.kube.get_etcd()["spec"].get("unsupportedConfigOverrides", {}).get(
            "useUnsupportedUnsafeNonHANonProductionUnstableEtcd")

    def start_to_masters_ready(self):
        self.common_start(version_marker=False)
        proc = self.start(self.lab.loop())
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.masters_ready(proc)
        return proc

    def after_bootkube_stage(self, proc):
        # bootkube runs: the override is on
        self.seen_override = self.override()

    def before_controller_ready(self, proc):
        # bootkube is done: the override is off before the controller wait
        self.assertNotIn("unsupportedConfigOverrides", self.kube.get_etcd()["spec"])

    def test_etcd_override_waits_for_the_etcd_object(self):
        """No etcds/cluster yet when the masters are Ready: the bootstrap
        keeps trying until it exists."""
        self.kube.request("DELETE", "/apis/operator.openshift.io/v1/etcds/cluster")
        proc = self.start_to_masters_ready()
        self.wait_output("cannot patch etcds.operator.openshift.io/cluster yet", proc)
        self.assertNotIn("Waiting for bootkube", [s for s, _ in self.stages()])
        self.kube.etcd()
        self.wait_stage("Waiting for bootkube", "", proc=proc)
        self.assertTrue(self.override())
        self.bootkube_done()
        self.wait_stage("Waiting for controller", proc=proc)
        self.kube.controller_ready_event()
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])
        self.assertNotIn("unsupportedConfigOverrides", self.kube.get_etcd()["spec"])

    def test_stopped_with_the_override_on_says_so(self):
        """SIGTERM while bootkube runs (the override on): every request is
        aborted, the undo with them, so the log says to remove it by hand
        and the override stays."""
        self.kube.etcd()
        proc = self.start_to_masters_ready()
        self.wait_stage("Waiting for bootkube", "", proc=proc)
        self.assertTrue(self.override())
        proc.send_signal(signal.SIGTERM)
        self.assertNotEqual(self.finish(proc), 0)
        self.assertIn("cannot remove the unsafe etcd override (etcds.operator.openshift.io/cluster "
                      "spec.unsupportedConfigOverrides)", self.inst.output())
        self.assertIn("unsupportedConfigOverrides", self.kube.get_etcd()["spec"])
        self.assertEqual(self.inst.standin_runs("shutdown"), [])


class TestSingleNode(BootstrapBase):
    """Bootstrap in place (notes §4.9)."""

    control_plane_count = 1

    @classmethod
    def service_scenario(cls):
        s = L.scenario()
        s["clusters"][0]["control_plane_count"] = 1
        s["hosts"] = [{"id": HB, "infra_env_id": L.IE, "inventory": L.inventory_for(0), "role": "master",
                       "bootstrap": True, "status": "installing"}]
        return s

    def master_ign(self):
        return {"ignition": {"version": "3.2.0"}, "storage": {"files": [
            {"path": "/etc/kubernetes/bootstrap-secrets/kubeconfig", "mode": 384,
             "contents": {"source": "data:,kubeconfig"}},
            {"path": "/etc/hostname", "mode": 420, "overwrite": True, "contents": {"source": "data:,from-bootkube"}}]},
            "systemd": {"units": [{"name": "kubelet.service", "enabled": True,
                                   "contents": "[Unit]\n[Install]\nWantedBy=multi-user.target\n"}]}}

    def test_single_node_flow(self):
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text(), marker=False))
        src = self.lab.path("master.ign")
        with open(src, "w") as f:
            json.dump(self.master_ign(), f)
        # bootkube (bootstrap in place) renders master.ign, then .bootkube.done
        self.units = {"bootkube.service": {"copy": {"/opt/openshift/master.ign": src},
                                           "touch": {"/opt/openshift/.bootkube.done": ""}, "after": 0.2}}
        dev = self.lab.loop()
        proc = self.start(dev)
        rc = self.finish(proc)
        out = self.inst.output()
        self.assertEqual(rc, 0, out[-8000:])
        expected = [("Starting installation", "bootstrap")] + self.cleanup_expected(dev) + \
            [("Installing", "bootstrap"), ("Waiting for bootkube", ""), ("Writing image to disk", "")] + \
            [("Writing image to disk", p) for p in L.expected_percents()] + [("Rebooting", "")]
        self.assertEqual(self.stages(), expected)

        master = os.path.join(self.root, "opt/openshift/master.ign")
        self.assertEqual(self.inst.standin_runs("coreos-installer")[0][:5],
                         ["coreos-installer", "install", "--insecure", "-i", master])
        self.assertEqual(self.inst.standin_runs("shutdown"),
                         [["shutdown", "-r", "now", "'Installation completed, server is going to reboot.'"]])
        # master.ign: bootkube's, with this host's files over it, 3.2.0, 0600
        with open(master) as f:
            merged = json.load(f)
        self.assertEqual(merged["ignition"]["version"], "3.2.0")
        self.assertNotIn("config", merged["ignition"])
        paths = {f["path"]: f for f in merged["storage"]["files"]}
        self.assertEqual(paths["/etc/hostname"]["contents"]["source"], "data:,bootstrap-0%0A")
        self.assertIn("/etc/kubernetes/bootstrap-secrets/kubeconfig", paths)
        self.assertIn("/etc/cradle-installed", paths)
        self.assertEqual(os.stat(master).st_mode & 0o777, 0o600)
        if shutil.which("ignition-validate"):
            p = L.run(["ignition-validate", master], check=False)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # what the disk holds is that config
        table = L.gpt_partitions(dev)
        written = json.loads(L.ext4_cat(dev, table[3][0], "/ignition/config.ign"))
        self.assertEqual(written, merged)
        # no ssh key, no NetworkManager restart, no waits for other hosts
        self.assertFalse(os.path.exists(os.path.join(self.root, "root/.ssh/id_rsa")))
        calls = self.systemctl_calls()
        self.assertNotIn(["restart", "NetworkManager.service"], calls)
        self.assertEqual([c for c in calls if c[0] == "start"],
                         [["start", "bootkube.service"], ["start", "approve-csr.service"],
                          ["start", "progress.service"]])
        # the controller's Job with the single-node extras
        with open(os.path.join(self.root, "opt/openshift/manifests/assisted-installer-controller-pod.yaml")) as f:
            job = yaml.safe_load(f)
        spec = job["spec"]["template"]["spec"]
        self.assertIn("/etc/kubernetes/bootstrap-secrets",
                      [v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v])
        self.assertIn("node.kubernetes.io/not-ready", [t["key"] for t in spec["tolerations"]])

    def test_missing_master_ign_fails(self):
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text(), marker=False))
        self.units = {"bootkube.service": {"touch": {"/opt/openshift/.bootkube.done": ""}, "after": 0.1}}
        dev = self.lab.loop()
        rc = self.finish(self.start(dev))
        self.assertEqual(rc, 1)
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertIn("cannot find /opt/openshift/master.ign", info)

    def test_invalid_merge_names_the_path(self):
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text(), marker=False))
        bad = self.master_ign()
        src = self.lab.path("master.ign")
        with open(src, "w") as f:
            json.dump(bad, f)
        self.svc.set_host(HB, ignition={"ignition": {"version": "3.2.0"}, "storage": {"files": [
            {"path": "etc/not-absolute", "contents": {"source": "data:,x"}}]}})
        self.units = {"bootkube.service": {"copy": {"/opt/openshift/master.ign": src},
                                           "touch": {"/opt/openshift/.bootkube.done": ""}, "after": 0.1}}
        dev = self.lab.loop()
        rc = self.finish(self.start(dev))
        self.assertEqual(rc, 1)
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertTrue(info.startswith("merged ignition config is invalid: $.storage.files[2].path"), info)
        self.assertEqual(self.inst.standin_runs("coreos-installer"), [])


class TestMachineConfigDaemon(BootstrapBase):
    """The upstream way: the machine-config-daemon of --mco-image through a
    real podman; the image's daemon is a stand-in (mcd-standin.c) that
    records its arguments and lays the files as the daemon would. The
    native way writes the same tree from the same bootstrap.ign."""

    apply = "mcd"

    def setUp(self):
        BootstrapBase.setUp(self)
        self.podman = L.Podman(self.lab)
        self.addCleanup(self.podman.cleanup)
        standin = os.path.join(os.environ.get("CRADLE_BUILD_ROOT", ""), "tests", "installer", "mcd-standin")
        if not os.access(standin, os.X_OK):
            self.skipTest("no mcd-standin in the build tree (%s)" % standin)
        self.image = "localhost/cradle-test-mco-%s:test" % self.tag
        rootfs = self.lab.path("mco-image", "rootfs")
        L.Podman.add_binary(rootfs, standin, "/usr/bin/machine-config-daemon")
        self.podman.build(self.image, self.lab.path("mco-image"), "/usr/bin/machine-config-daemon")

    def env(self, **extra):
        return BootstrapBase.env(self, CONTAINERS_CONF=self.podman.conf,
                                 CONTAINERS_STORAGE_CONF=self.podman.storage, **extra)

    def start(self, dev, role="bootstrap", host=HB, extra=(), env=None):
        return BootstrapBase.start(self, dev, role, host, list(extra) + ["--mco-image", self.image], env)

    def test_mcd_lays_the_same_tree_as_the_native_apply(self):
        self.common_start()
        dev = self.lab.loop()
        out = self.run_happy_flow(dev, BOOTSTRAP_STAGES).replace('\\"', '"')
        self.assertIn('machine-config-daemon stand-in: argv ["start","--node-name","localhost","--root-mount",'
                      '"/rootfs","--once-from","/opt/install-dir/bootstrap.ign","--skip-reboot"]', out)
        self.assertIn("Writing rendered data to /opt/openshift/manifests", out)
        self.assertIn("podman run --net host --pid=host --volume %s:/rootfs:rw --volume "
                      "%s/usr/bin/rpm-ostree:/usr/bin/rpm-ostree --privileged --entrypoint "
                      "/usr/bin/machine-config-daemon %s start --node-name localhost --root-mount /rootfs "
                      "--once-from /opt/install-dir/bootstrap.ign --skip-reboot" % (self.root, self.root, self.image),
                      out)
        # the native apply of the same bootstrap.ign on another root, up to
        # the NetworkManager restart (made to fail: the tree is complete by then)
        mcd_root = self.root
        self.root = self.lab.path("root-native")
        for d in ("etc/systemd/system", "usr/lib/systemd/system", "usr/bin", "opt/install-dir", "root"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        for f in ("usr/lib/systemd/system/NetworkManager.service", "usr/bin/oc", "usr/bin/rpm-ostree"):
            open(os.path.join(self.root, f), "w").close()
        self.apply = "native"
        self.svc.reset(self.service_scenario())
        self.set_bootstrap_ign(bootstrap_ign(self.kube.kubeconfig_text()))
        proc = BootstrapBase.start(self, self.lab.loop(), env=self.env(STANDIN_FAIL_UNITS="NetworkManager.service"))
        self.assertEqual(self.finish(proc), 1)
        skip = ["/opt", "/root", "/var", "/usr/bin", "/usr/lib/systemd/system/NetworkManager.service", "/mnt",
                "/mcd-standin-fail"]
        native = tree(self.root, skip)
        mcd = tree(mcd_root, skip)
        self.assertEqual(mcd, native)
        self.assertIn("/etc/systemd/system/bootkube.service", native)
        self.assertIn("/etc/systemd/system/crio.service.d/10-mirror.conf", native)
        self.assertIn("/etc/systemd/system/multi-user.target.wants/kubelet.service", native)
        # and the assets under /opt the same too
        for p in ("/opt/openshift/auth/kubeconfig", "/opt/openshift/assisted-install-bootstrap",
                  "/root/.docker/config.json"):
            self.assertEqual(tree(mcd_root).get(p), tree(self.root).get(p), p)

    def test_mcd_failing_three_times_fails(self):
        self.common_start()
        with open(os.path.join(self.root, "mcd-standin-fail"), "w") as f:
            f.write("3\n")
        dev = self.lab.loop()
        proc = self.start(dev)
        self.assertEqual(self.finish(proc), 1)
        out = self.inst.output()
        self.assertEqual(out.count('msg="machine-config-daemon stand-in: argv'), 3)
        self.assertIn("Failed to extract ignition to disk, giving up", out)
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertTrue(info.startswith("failed executing podman run --net host --pid=host"), info)
        self.assertIn("simulated failure of the machine-config-daemon stand-in", info)

    def test_mcd_failing_twice_then_succeeding(self):
        self.common_start()
        with open(os.path.join(self.root, "mcd-standin-fail"), "w") as f:
            f.write("2\n")
        dev = self.lab.loop()
        proc = self.start(dev, env=self.env(STANDIN_FAIL_UNITS="NetworkManager.service"))
        self.assertEqual(self.finish(proc), 1)
        out = self.inst.output()
        self.assertEqual(out.count('msg="machine-config-daemon stand-in: argv'), 3)
        self.assertIn("Done extracting ignition to filesystem", out)
        self.assertTrue(os.path.exists(os.path.join(self.root, "etc/systemd/system/bootkube.service")))


class TestDryRun(BootstrapBase):
    """Dry run: nothing of the machine changes; the cluster is the hosts
    file's, each host a Ready node once its fake reboot marker exists."""

    def start_dry(self):
        """The bootstrap in dry run, waiting for its masters (the inventory
        read). Returns (process, markers, disk, its digest)."""
        self.set_bootstrap_ign(bootstrap_ign("not used in dry run"))
        markers = {h: self.lab.path("reboot-%s" % h[-4:]) for h in (L.H1, L.H2, HB)}
        hosts = [{"hostname": self.names[h], "ip": "198.51.100.%d" % (10 + n), "rebootMarkerPath": markers[h]}
                 for n, h in ((1, L.H1), (2, L.H2), (0, HB))]
        path = self.lab.path("cluster-hosts.json")
        with open(path, "w") as f:
            json.dump(hosts, f)
        # the load tests' dry-installer: progress, no write
        bindir = self.lab.path("dry-bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "dry-installer"), "w") as f:
            f.write("#!/bin/sh\nfor p in 10 50 100; do printf '> Read disk (%s%%)\\n' $p; done\n")
        os.chmod(os.path.join(bindir, "dry-installer"), 0o755)
        env = self.env()
        env["PATH"] = bindir + ":" + env["PATH"]
        dev = self.lab.loop()
        before = L.sha256_file(dev)
        proc = self.start(dev, env=env, extra=["--dry-run", "--fake-reboot-marker-path", markers[HB],
                                               "--dry-run-cluster-hosts-path", path])
        self.wait_stage("Waiting for control plane", "Waiting for masters to join bootstrap control plane",
                        proc=proc)
        self.wait_output("waiting for master nodes: 0 of 2 master nodes Ready", proc)
        return proc, markers, dev, before

    def test_a_master_installed_meanwhile_counts(self):
        """The controller reports a Ready master Done as soon as it sees it:
        the host may be installed between the bootstrap's read of the
        inventory and its node turning Ready. The service refuses Joined
        for it; the bootstrap reads the inventory again and counts the
        host, instead of asking again for ever."""
        proc, markers, dev, before = self.start_dry()
        self.svc.set_host(L.H1, status="installed")
        open(markers[L.H1], "w").close()
        open(markers[L.H2], "w").close()
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])
        self.assertEqual(self.stages(L.H2), [("Joined", "")])
        self.assertNotIn(("Joined", ""), self.stages(L.H1))

    def test_dry_run_bootstrap(self):
        proc, markers, dev, before = self.start_dry()
        open(markers[L.H1], "w").close()
        self.wait_stage("Joined", host=L.H1, proc=proc)
        open(markers[L.H2], "w").close()
        self.assertEqual(self.finish(proc), 0, self.inst.output()[-5000:])
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))
        self.assertTrue(os.path.exists(markers[HB]))
        self.assertEqual(self.stages(L.H2), [("Joined", "")])
        # nothing written: no disk, no host files, no units, no reboot
        self.assertEqual(L.sha256_file(dev), before)
        self.assertFalse(os.path.exists(os.path.join(self.root, "root/.docker/config.json")))
        self.assertFalse(os.path.exists(os.path.join(self.root, "opt/openshift")))
        self.assertFalse(os.path.exists(os.path.join(self.root, "root/.ssh")))
        # (the log upload lists the bootkube unit whose journal it collects)
        self.assertEqual([c for c in self.systemctl_calls() if c[0] != "list-units"], [])
        self.assertEqual(self.inst.standin_runs("shutdown"), [])
        self.assertEqual(self.inst.standin_runs("hostnamectl"), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
