#!/usr/bin/python3
"""`cradle installer` for masters and workers, end to end: the reference
service in the installer scenario, a loop device as --boot-device, the
coreos-installer stand-in first on PATH (tests/installer/stand-ins/), and the
written disk read back (partition table, Ignition config, kernel arguments),
the config applied by the real Ignition runtime.

Run by tests/helpers/in-netns.sh: the service and the installer talk over the
namespace's loopback only. Environment: CRADLE_BINARY, CRADLE_SOURCE_ROOT.
"""
import json
import os
import subprocess
import sys
import tarfile
import io
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab as L  # noqa: E402

L.require_basics()
from refclient import RefService  # noqa: E402

TYPICAL_MASTER = [("Starting installation", "master"), ("Installing", "master"), ("Writing image to disk", "")]
REBOOT_ARGV = ["shutdown", "-r", "+1", "'Installation completed, server is going to reboot.'"]


def cleanup_warning(dev):
    return ("Starting installation", "Could not clean install device %s. The installation will continue. If the "
            "installation fails, clean the disk and try again" % dev)


class Base(L.ServiceCase):
    def setUp(self):
        L.ServiceCase.setUp(self)
        self.inst = L.Installer(self.lab, self.svc)
        for n, h in ((1, L.H1), (2, L.H2), (3, L.H3)):
            self.svc.set_host(h, ignition=L.host_ignition("node-%d" % n))

    # -- helpers --------------------------------------------------------
    def stages(self, host=L.H1):
        return L.progress_of(self.svc, host)

    def cleanup_expected(self, dev):
        """The cleanup's warning stage when this machine's kernel has no
        device-mapper (then "dmsetup ls" fails, as it would upstream)."""
        return [] if L.kernel_has("dm") else [cleanup_warning(dev)]

    def assert_written(self, dev, ignition_for=L.H1, kargs=("ip=enp1s0:dhcp",)):
        names = L.gpt_names(dev)
        self.assertEqual(names, {1: "BIOS-BOOT", 2: "EFI-SYSTEM", 3: "boot", 4: "root"})
        table = L.gpt_partitions(dev)
        served = self.svc.host(ignition_for)
        config = L.ext4_cat(dev, table[3][0], "/ignition/config.ign")
        self.assertEqual(json.loads(config), L.host_ignition("node-%d" % {L.H1: 1, L.H2: 2, L.H3: 3}[ignition_for]),
                         "the config on the boot partition is the one the service served")
        bls = L.ext4_cat(dev, table[3][0], "/loader/entries/ostree-1-rhcos.conf").decode()
        options = [ln for ln in bls.splitlines() if ln.startswith("options ")][0]
        self.assertEqual(options, "options " + " ".join([L.BLS_OPTIONS] + list(kargs)))
        self.assertEqual(L.ext4_cat(dev, table[4][0], "/etc/cradle-test-image").decode(), L.ROOT_MARKER)
        self.assertIsNotNone(served)
        return config

    def assert_exact_argv(self, dev, ign_name):
        runs = self.inst.standin_runs("coreos-installer")
        self.assertTrue(runs)
        for argv in runs:
            self.assertEqual(argv, ["coreos-installer", "install", "--insecure", "-i",
                                    os.path.join(self.lab.path("opt-install-dir"), ign_name),
                                    "--append-karg", "ip=enp1s0:dhcp", dev])


class TestMaster(Base):
    def test_master_install(self):
        dev = self.lab.loop()
        # the service gives a by-path style name: a symlink to the device
        link = self.lab.path("pci-0000:04:00.0")
        os.symlink(dev, link)
        rc = self.inst.run(link)
        out = self.inst.output()
        self.assertEqual(rc, 0, out)

        expected = TYPICAL_MASTER[:1] + self.cleanup_expected(dev) + TYPICAL_MASTER[1:]
        expected += [("Writing image to disk", p) for p in L.expected_percents()]
        expected += [("Rebooting", "")]
        self.assertEqual(self.stages(), expected)

        # bodies exactly as upstream: an empty progress_info is left out
        bodies = [r["body"] for r in self.svc.requests(operation="v2UpdateHostInstallProgress")]
        self.assertIn({"current_stage": "Installing", "progress_info": "master"}, bodies)
        self.assertIn({"current_stage": "Rebooting"}, bodies)
        self.assertIn({"current_stage": "Writing image to disk"}, bodies)
        for r in self.svc.requests():
            self.assertEqual(r["auth"], "ok", r["path"])
        self.assertNotIn(L.TOKEN, out)

        # the ignition download uses the singular infra-env path, no Accept: application/json
        ign = self.svc.requests(operation="v2DownloadHostIgnition")
        self.assertEqual(len(ign), 1)
        self.assertEqual(ign[0]["path"], "/api/assisted-install/v2/infra-env/%s/hosts/%s/downloads/ignition"
                         % (L.IE, L.H1))
        self.assertEqual(ign[0]["status"], 200)

        # coreos-installer: the exact argv, device last and resolved
        self.assert_exact_argv(dev, "master-%s.ign" % L.H1)
        self.assertEqual(len(self.inst.standin_runs("coreos-installer")), 1)
        with open(os.path.join(self.lab.path("opt-install-dir"), "master-%s.ign" % L.H1), "rb") as f:
            downloaded = f.read()

        # the disk holds the image, the config and the kernel arguments
        config = self.assert_written(dev)
        self.assertEqual(config, downloaded)

        # the real Ignition runtime applies the written config
        root = self.lab.path("ignition-root")
        ok, log = L.apply_with_ignition(config, root)
        if ok is None:
            print("note: %s; not applying with Ignition" % log)
        else:
            self.assertTrue(ok, log)
            with open(os.path.join(root, "etc", "hostname")) as f:
                self.assertEqual(f.read(), "node-1\n")
            self.assertEqual(os.stat(os.path.join(root, "etc", "cradle-installed")).st_mode & 0o777, 0o600)

        # logs uploaded before the reboot, then the reboot with upstream's argv
        logs = self.svc.logs()
        self.assertEqual(len(logs), 1)
        self.assertEqual(logs[0]["host_id"], L.H1)
        self.assertIn("logs_host_%s/installer.logs" % L.H1, logs[0]["tar_members"])
        states = [r["body"]["logs_state"] for r in self.svc.requests(operation="v2UpdateHostLogsProgress")]
        self.assertEqual(states, ["requested", "requested", "collecting", "completed"])
        self.assertEqual(self.inst.standin_runs("shutdown"), [REBOOT_ARGV])
        self.assertEqual(self.inst.standin_runs("systemctl")[-1],
                         ["systemctl", "list-units", "--no-legend", "ironic-agent.service"])

        # the text log as upstream names it (here under the test's directory)
        with open(self.lab.path("var-log", "assisted-installer.log")) as f:
            text = f.read()
        self.assertIn("Updating node installation stage: Writing image to disk - 100%", text)
        self.assertIn("Assisted installer started. Configuration is:", text)
        self.assertNotIn(L.TOKEN, text)
        host = self.svc.host(L.H1)
        self.assertEqual(host["progress"]["current_stage"], "Rebooting")


    def test_enter_pid1_namespaces(self):
        """--host-exec=enter: every host command enters PID 1's namespaces, as
        in the upstream --pid=host container. This machine's own PID 1 cannot
        be entered from here, so the test makes a PID namespace whose PID 1
        (a shell) stays in one mount namespace while the installer runs in
        another: the commands must find PID 1's mounts, not the installer's."""
        dev = self.lab.loop()
        flags = [f for f in self.inst.cradle_flags() if f != "--host-exec=direct"] + ["--host-exec=enter",
                                                                                       "--log-level=debug"]
        wrapper = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "--", "sh", "-c",
                   'unshare --mount --propagation private -- "$@"; exit $?', "pid1"]
        rc = self.inst.run(dev, cradle_extra=flags, wrapper=wrapper)
        out = self.inst.output()
        self.assertEqual(rc, 0, out)
        self.assertIn("host commands enter PID 1's namespaces", out)
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))
        self.assert_written(dev)

    def test_proxies_reach_the_commands(self):
        """--http-proxy/--https-proxy/--no-proxy go into the environment of
        the commands the installer runs (execute.go), and NO_PROXY into its
        own."""
        dev = self.lab.loop()
        rc = self.inst.run(dev, extra=["--http-proxy", "http://proxy.example.test:3128", "--https-proxy",
                                       "http://proxy.example.test:3129", "--no-proxy", ".example.test,127.0.0.1"])
        self.assertEqual(rc, 0, self.inst.output())
        recs = self.inst.standin_records("coreos-installer")
        self.assertEqual(recs[0]["proxy_env"], {"HTTP_PROXY": "http://proxy.example.test:3128",
                                                "HTTPS_PROXY": "http://proxy.example.test:3129",
                                                "NO_PROXY": ".example.test,127.0.0.1"})
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))

    def test_service_over_https_with_cacert(self):
        """--cacert is added to the system trust: the service's certificate
        from a test CA is accepted with it (no --insecure), and without it
        every call fails on the certificate (not retried: no answer will
        change it), so the ignition download fails the install."""
        certs = self.lab.path("certs")
        L.run(["sh", os.path.join(L.SRC, "tests", "helpers", "mkcerts.sh"), certs])
        tls = (os.path.join(certs, "server.pem"), os.path.join(certs, "server-key.pem"), os.path.join(certs, "ca.pem"))
        with RefService(scenario=L.scenario(), token=L.TOKEN, tls=tls) as svc:
            svc.set_host(L.H1, ignition=L.host_ignition("node-1"))
            inst = L.Installer(self.lab, svc)
            dev = self.lab.loop()
            argv_extra = ["--cacert", tls[2]]
            p = subprocess.run([a for a in inst.argv(dev) if a != "--insecure"] + argv_extra, env=inst.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertEqual(L.progress_of(svc, L.H1)[-1], ("Rebooting", ""))
            svc.reset(L.scenario())
            dev2 = self.lab.loop()
            p = subprocess.run([a for a in inst.argv(dev2) if a != "--insecure"], env=inst.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertEqual(L.progress_of(svc, L.H1), [])
            self.assertIn("Failed to fetch file", p.stdout)


class TestWorker(Base):
    def test_worker_waits_for_two_masters(self):
        dev = self.lab.loop()
        p = self.inst.start(dev, role="worker", host=L.H3)
        try:
            # it reaches the wait and keeps polling the masters, without rebooting
            deadline = time.time() + 600
            while time.time() < deadline:
                if ("Waiting for control plane", "") in self.stages(L.H3) and \
                        len(self.svc.requests(operation="ListClusterHosts")) >= 6:
                    break
                self.assertIsNone(p.poll(), self.inst.output())
                time.sleep(0.1)
            else:
                self.fail("the worker never reached the wait:\n" + self.inst.output())
            self.assertIsNone(p.poll(), "the worker went on without two masters Done")
            self.assertNotIn(("Rebooting", ""), self.stages(L.H3))
            self.assertEqual(self.inst.standin_runs("shutdown"), [])
            queries = self.svc.requests(operation="ListClusterHosts")
            self.assertEqual(queries[0]["query"], "role=master")
            cluster = self.svc.requests(operation="v2GetCluster")
            self.assertEqual(len(cluster), 1, "the cluster is read once")
            self.assertEqual(cluster[0]["query"], "exclude-hosts=true")
            # one master Done is not enough
            self.svc.set_host(L.H1, status="installed", stage="Done")
            n = len(self.svc.requests(operation="ListClusterHosts"))
            while len(self.svc.requests(operation="ListClusterHosts")) < n + 4:
                self.assertIsNone(p.poll(), self.inst.output())
                time.sleep(0.05)
            self.assertIsNone(p.poll())
            self.svc.set_host(L.H2, status="installed", stage="Done")
            rc = p.wait(600)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(rc, 0, self.inst.output())
        expected = [("Starting installation", "worker")] + self.cleanup_expected(dev) + \
            [("Installing", "worker"), ("Writing image to disk", "")] + \
            [("Writing image to disk", x) for x in L.expected_percents()] + \
            [("Waiting for control plane", ""), ("Rebooting", "")]
        self.assertEqual(self.stages(L.H3), expected)
        self.assert_exact_argv(dev, "worker-%s.ign" % L.H3)
        self.assert_written(dev, ignition_for=L.H3)
        self.assertEqual(self.inst.standin_runs("shutdown"), [REBOOT_ARGV])

    def test_day2_worker_does_not_wait(self):
        """A worker added to an installed cluster (AddHostsCluster) does not
        wait for masters (the service's answer is rewritten by a fault rule)."""
        st, cluster = self.svc.api("GET", "/v2/clusters/%s?exclude-hosts=true" % L.CL)
        self.assertEqual(st, 200)
        cluster["kind"] = "AddHostsCluster"
        self.svc.add_fault(path="/v2/clusters/%s$" % L.CL, method="GET", status=200, body=cluster, count=None)
        dev = self.lab.loop()
        rc = self.inst.run(dev, role="worker", host=L.H3)
        self.assertEqual(rc, 0, self.inst.output())
        self.assertEqual(self.svc.requests(operation="ListClusterHosts"), [])
        self.assertIn(("Waiting for control plane", ""), self.stages(L.H3))
        self.assertEqual(self.stages(L.H3)[-1], ("Rebooting", ""))


class TestFailures(Base):
    def test_ignition_404_fails(self):
        dev = self.lab.loop()
        before = L.sha256_file(dev)
        self.svc.add_fault(path="/downloads/ignition$", status=404, count=None)
        rc = self.inst.run(dev)
        out = self.inst.output()
        self.assertEqual(rc, 1, out)
        stages = self.stages()
        self.assertEqual(stages[:-1], TYPICAL_MASTER[:1] + self.cleanup_expected(dev) + TYPICAL_MASTER[1:2])
        stage, info = stages[-1]
        self.assertEqual(stage, "Failed")
        self.assertIn("/v2/infra-env/%s/hosts/%s/downloads/ignition" % (L.IE, L.H1), info)
        self.assertIn("[404]", info)
        # 404 is retried 10 times (notes §9), then it is the answer
        self.assertEqual([r["status"] for r in self.svc.requests(path="/downloads/ignition$")], [404] * 11)
        self.assertIn("Failed to fetch file (master-%s.ign) from server. err:" % L.H1, out)
        self.assertEqual(self.inst.standin_runs("coreos-installer"), [])
        self.assertEqual(self.inst.standin_runs("shutdown"), [])
        self.assertEqual(L.sha256_file(dev), before)
        self.assertEqual(self.svc.host(L.H1)["status"], "error")

    def test_coreos_installer_fails_twice_then_succeeds(self):
        dev = self.lab.loop()
        rc = self.inst.run(dev, env=self.inst.env(STANDIN_FAIL_TIMES=2, STANDIN_STATE=self.lab.path("attempts")))
        self.assertEqual(rc, 0, self.inst.output())
        self.assertEqual(len(self.inst.standin_runs("coreos-installer")), 3)
        self.assert_exact_argv(dev, "master-%s.ign" % L.H1)
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))
        self.assertNotIn("Failed", [s for s, _ in self.stages()])
        self.assert_written(dev)

    def test_coreos_installer_fails_three_times(self):
        dev = self.lab.loop()
        rc = self.inst.run(dev, env=self.inst.env(STANDIN_FAIL_TIMES=3, STANDIN_STATE=self.lab.path("attempts")))
        self.assertEqual(rc, 1, self.inst.output())
        self.assertEqual(len(self.inst.standin_runs("coreos-installer")), 3)
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertTrue(info.startswith("failed after 3 attempts, last error: failed executing coreos-installer "
                                        "install --insecure -i %s/master-%s.ign --append-karg ip=enp1s0:dhcp %s, "
                                        "Error exit status 1, LastOutput \"Error: fetching image: simulated failure "
                                        "3 of 3\"" % (self.lab.path("opt-install-dir"), L.H1, dev)), info)
        self.assertEqual(self.inst.standin_runs("shutdown"), [])
        self.assertEqual(self.svc.host(L.H1)["status_info"], "Failed - " + info)

    def test_progress_503_is_retried(self):
        dev = self.lab.loop()
        self.svc.add_fault(path="/progress$", status=503, count=7)
        rc = self.inst.run(dev)
        self.assertEqual(rc, 0, self.inst.output())
        # every stage arrived in the end, in order
        expected = TYPICAL_MASTER[:1] + self.cleanup_expected(dev) + TYPICAL_MASTER[1:]
        expected += [("Writing image to disk", p) for p in L.expected_percents()] + [("Rebooting", "")]
        self.assertEqual(self.stages(), expected)
        answered = [r["status"] for r in self.svc.requests(path="/progress$")]
        self.assertEqual(answered[:8], [503] * 7 + [200])

    def test_progress_failing_for_good_does_not_stop_the_install(self):
        dev = self.lab.loop()
        # 409 is not retried: every progress call fails, the install goes on
        self.svc.add_fault(path="/progress$", status=409, count=None)
        rc = self.inst.run(dev)
        self.assertEqual(rc, 0, self.inst.output())
        self.assertIn("Failed to update node installation stage", self.inst.output())
        self.assert_written(dev)
        self.assertEqual(self.inst.standin_runs("shutdown"), [REBOOT_ARGV])

    def test_service_down_during_log_upload_still_reboots(self):
        dev = self.lab.loop()
        self.svc.add_fault(path="/logs-progress$", action="reset", count=None)
        self.svc.add_fault(path="/logs$", action="reset", count=None)
        rc = self.inst.run(dev)
        out = self.inst.output()
        self.assertEqual(rc, 0, out)
        self.assertIn("upload installation logs", out)
        self.assertEqual(self.svc.logs(), [])
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))
        self.assertEqual(self.inst.standin_runs("shutdown"), [REBOOT_ARGV])

    def test_reboot_failure_fails(self):
        dev = self.lab.loop()
        rc = self.inst.run(dev, env=self.inst.env(STANDIN_FAIL="shutdown"))
        self.assertEqual(rc, 1, self.inst.output())
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertIn("failed executing shutdown -r +1 ", info)
        self.assertIn("LastOutput \"shutdown: simulated failure\"", info)
        self.assertEqual(self.stages()[-2], ("Rebooting", ""))


class TestReboot(Base):
    def test_ironic_agent_present(self):
        dev = self.lab.loop()
        rc = self.inst.run(dev, env=self.inst.env(STANDIN_IRONIC=1))
        self.assertEqual(rc, 0, self.inst.output())
        self.assertEqual(self.stages()[-1], ("Rebooting", "Ironic will reboot the node shortly"))
        self.assertIn(["systemctl", "stop", "agent.service"], self.inst.standin_runs("systemctl"))
        self.assertEqual(self.inst.standin_runs("shutdown"), [])

    def test_dry_run(self):
        dev = self.lab.loop()
        marker = self.lab.path("rebooted")
        rc = self.inst.run(dev, extra=["--dry-run", "--fake-reboot-marker-path", marker])
        self.assertEqual(rc, 0, self.inst.output())
        self.assertTrue(os.path.exists(marker))
        # no cleanup in dry run, so no cleanup warning either; dry-installer writes
        expected = TYPICAL_MASTER + [("Writing image to disk", p) for p in L.expected_percents()]
        self.assertEqual(self.stages(), expected + [("Rebooting", "")])
        runs = self.inst.standin_runs()
        self.assertEqual([r[0] for r in runs if r[0] in ("coreos-installer", "dry-installer")], ["dry-installer"])
        self.assertEqual(self.inst.standin_runs("shutdown"), [])
        self.assertNotIn(["systemctl", "stop", "agent.service"], self.inst.standin_runs("systemctl"))


    def test_refused_flow_still_starts(self):
        """Every flow reports "Starting installation" (info = role) first,
        as upstream's do, also one this installer refuses before its first
        step; then "Failed" with the reason."""
        dev = self.lab.loop()
        before = L.sha256_file(dev)
        rc = self.inst.run(dev, role="auto-assign")
        self.assertEqual(rc, 1, self.inst.output())
        self.assertEqual(self.stages(), [("Starting installation", "auto-assign"),
                                         ("Failed", "unknown role 'auto-assign'")])
        self.assertEqual(self.inst.standin_runs("coreos-installer"), [])
        self.assertEqual(L.sha256_file(dev), before)


class TestDisks(Base):
    def test_format_disk(self):
        dev = self.lab.loop()
        other = self.lab.loop(size=8 * L.MiB)
        with open(other, "r+b") as f:
            f.write(b"\xab" * (8 * L.MiB))
        rc = self.inst.run(dev, extra=["--format-disk", other])
        self.assertEqual(rc, 0, self.inst.output())
        with open(other, "rb") as f:
            data = f.read()
        self.assertEqual(data[:512], b"\0" * 512)
        self.assertEqual(data[512:], b"\xab" * (8 * L.MiB - 512))

    def test_cleanup_wipes_like_wipefs(self):
        """The signatures of the target go as "wipefs --all --force" removes
        them (the coreos-installer stand-in fails, so the disk keeps what the
        cleanup left)."""
        a = self.lab.loop(image=self.image, name="a.img")
        b = self.lab.loop(image=self.image, name="b.img")
        rc = self.inst.run(a, env=self.inst.env(STANDIN_FAIL_TIMES=3, STANDIN_STATE=self.lab.path("attempts")))
        self.assertEqual(rc, 1, self.inst.output())
        L.run(["wipefs", "--all", "--force", b])
        self.assertEqual(L.sha256_file(a), L.sha256_file(b))
        self.assertEqual(L.blkid_type(a), "")
        self.assertIn("wipefs --all --force %s (libblkid)" % a, self.inst.output())

    def test_mounted_target_is_refused(self):
        dev = self.lab.loop()
        L.run(["mkfs.ext4", "-q", "-L", "busy", dev])
        where = self.lab.mount(dev, opts="ro")
        before = L.sha256_file(dev)
        rc = self.inst.run(dev)
        out = self.inst.output()
        self.assertEqual(rc, 1, out)
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertEqual(info, "found busy partitions on %s: %s mounted on %s" % (dev, dev, where))
        # the cleanup could not open it either: the upstream warning, and the
        # log line triage signatures match (notes §3.1)
        self.assertIn(cleanup_warning(dev), self.stages())
        self.assertIn("failed to prepare install device %s, err " % dev, out)
        self.assertEqual(self.inst.standin_runs("coreos-installer"), [])
        self.assertEqual(L.sha256_file(dev), before, "nothing was written to the busy disk")

    def test_dry_run_goes_on_with_a_mounted_target(self):
        """A dry run writes nothing (upstream's never looks at the disk): a
        target in use is logged and the installation goes on; the real run
        refuses it (test_mounted_target_is_refused). dry-installer is a
        stand-in that only logs its argv here, like upstream's."""
        dev = self.lab.loop()
        L.run(["mkfs.ext4", "-q", "-L", "busy", dev])
        where = self.lab.mount(dev, opts="ro")
        before = L.sha256_file(dev)
        bindir = self.lab.path("dry-bin")
        os.makedirs(bindir)
        os.symlink(os.path.join(L.STAND_INS, "host-tool"), os.path.join(bindir, "dry-installer"))
        env = self.inst.env()
        env["PATH"] = bindir + ":" + env["PATH"]
        marker = self.lab.path("rebooted")
        rc = self.inst.run(dev, env=env, extra=["--dry-run", "--fake-reboot-marker-path", marker])
        out = self.inst.output()
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.stages(), TYPICAL_MASTER + [("Rebooting", "")])
        self.assertIn("dry run: %s is in use, going on: %s mounted on %s" % (dev, dev, where), out)
        self.assertEqual([r[0] for r in self.inst.standin_runs() if r[0].endswith("installer")], ["dry-installer"])
        self.assertTrue(os.path.exists(marker))
        self.assertEqual(L.sha256_file(dev), before)

    def test_swap_target_is_refused(self):
        dev = self.lab.loop()
        L.run(["mkswap", dev])
        L.run(["swapon", dev])
        self.lab.swaps.append(dev)
        before = L.sha256_file(dev)
        rc = self.inst.run(dev)
        self.assertEqual(rc, 1, self.inst.output())
        stage, info = self.stages()[-1]
        self.assertEqual((stage, info), ("Failed", "found busy partitions on %s: %s is swap device" % (dev, dev)))
        self.assertEqual(self.inst.standin_runs("coreos-installer"), [])
        self.assertEqual(L.sha256_file(dev), before)

    def test_held_target_is_refused_naming_holders(self):
        if not L.kernel_has("dm"):
            self.skipTest("this kernel has no device-mapper")
        dev = self.lab.loop()
        sectors = L.IMAGE_SIZE // 512
        for name in ("cradle-hold-a", "cradle-hold-b"):
            L.run(["dmsetup", "create", name, "--table", "0 %d linear %s 0" % (sectors // 2, dev)])
            self.lab.dm.append(name)
        before = L.sha256_file(dev)
        rc = self.inst.run(dev, extra=["--skip-installation-disk-cleanup"])
        self.assertEqual(rc, 1, self.inst.output())
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertRegex(info, r"^found busy partitions on %s: %s in use by dm-\d+ \(cradle-hold-a\); %s in use by "
                         r"dm-\d+ \(cradle-hold-b\)$" % (dev, dev, dev))
        self.assertEqual(L.sha256_file(dev), before)

    def test_cleanup_lvm_and_md(self):
        if not (L.kernel_has("dm") and L.kernel_has("md")):
            self.skipTest("this kernel has no device-mapper or no md RAID (CONFIG_MD): LVM and RAID cleanup "
                          "cannot be exercised here; the decisions are covered by test-installer-plan")
        if not L.kernel_partitions():
            self.skipTest("this kernel makes no partition devices of loop devices (CONFIG_EFI_PARTITION)")
        tag = os.urandom(3).hex()
        vg, md, bystander_vg = "cradletest%s" % tag, "/dev/md/cradletest%s" % tag, "cradlebystander%s" % tag
        dev = self.lab.loop(size=128 * L.MiB)
        second = self.lab.loop(size=64 * L.MiB)
        bystander = self.lab.loop(size=64 * L.MiB)
        L.run(["sgdisk", "-n", "1:2048:+40M", "-n", "2:0:+40M", dev])
        L.run(["blockdev", "--rereadpt", dev])
        L.wait_for(dev + "p2")
        L.run(["pvcreate", "-y", dev + "p1"])
        L.run(["vgcreate", vg, dev + "p1"])
        self.lab.vgs.append(vg)
        L.run(["lvcreate", "-y", "-L", "8M", "-n", "lv0", vg])
        L.run(["mdadm", "--create", md, "--run", "--level=1", "--raid-devices=2", "--metadata=1.2",
               dev + "p2", second])
        self.lab.md.append(md)
        L.run(["vgcreate", bystander_vg, bystander])
        self.lab.vgs.append(bystander_vg)
        L.run(["vgchange", "-an", bystander_vg])
        before = L.sha256_file(bystander)

        rc = self.inst.run(dev)
        out = self.inst.output()
        self.assertEqual(rc, 0, out)
        self.assertNotIn(cleanup_warning(dev), self.stages())
        self.assertIn("Running vgremove %s -y" % vg, out)
        self.assertIn("Running mdadm --stop %s" % md, out)
        self.assertIn("Running mdadm --zero-superblock %sp2" % dev, out)
        vgs = L.run(["vgs", "--noheadings", "-o", "vg_name"]).stdout.split()
        self.assertNotIn(vg, vgs)
        self.assertIn(bystander_vg, vgs)
        self.assertNotIn(md, L.run(["mdadm", "--detail", "--scan"], check=False).stdout)
        self.assertEqual(L.blkid_type(second), "linux_raid_member", "only the target's member was zeroed")
        self.assertEqual(L.sha256_file(bystander), before, "the bystander disk was not touched")
        self.assert_written(dev)


class MachineConfigServer(object):
    """A machine config server on 127.0.0.1 over HTTPS with a test CA: GET
    /config/<role> answers an Ignition 3.4 config holding the encapsulated
    MachineConfig; the Accept headers are kept."""

    def __init__(self, lab, mc):
        import base64
        import http.server
        import ssl
        import threading
        certs = lab.path("certs")
        L.run(["sh", os.path.join(L.SRC, "tests", "helpers", "mkcerts.sh"), certs])
        with open(os.path.join(certs, "ca.pem"), "rb") as f:
            self.ca = f.read()
        mc_url = "data:;base64," + base64.b64encode(json.dumps(mc).encode()).decode()
        body = json.dumps({"ignition": {"version": "3.4.0"}, "storage": {"files": [
            {"path": "/etc/ignition-machine-config-encapsulated.json", "contents": {"source": mc_url}}]}}).encode()
        accepts = self.accepts = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                accepts.append((self.path, self.headers.get("Accept")))
                self.send_response(200 if self.path.startswith("/config/") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(certs, "server.pem"), os.path.join(certs, "server-key.pem"))
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.url = "https://127.0.0.1:%d/config/master" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        lab.files.append(self)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def pointer(self, url=None):
        import base64
        return {"ignition": {"version": "3.2.0", "config": {"merge": [{"source": url or self.url}]},
                             "security": {"tls": {"certificateAuthorities": [
                                 {"source": "data:text/plain;charset=utf-8;base64," +
                                  base64.b64encode(self.ca).decode()}]}}}}


class TestOsImage(Base):
    MC = {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
          "spec": {"osImageURL": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123",
                   "kernelArguments": ["systemd.unified_cgroup_hierarchy=1"]}}

    def test_skip_mco_reboot_fetches_the_machine_config(self):
        """--enable-skip-mco-reboot: the machine config behind the written
        pointer config is fetched over HTTPS with the config's CA, then the
        OS image overwrite runs; its failures (no growpart, no ostree here)
        are warnings and the installation goes on."""
        mcs = MachineConfigServer(self.lab, self.MC)
        self.svc.set_host(L.H1, ignition=mcs.pointer())
        dev = self.lab.loop()
        rc = self.inst.run(dev, extra=["--enable-skip-mco-reboot"])
        out = self.inst.output()
        self.assertEqual(rc, 0, out)
        self.assertEqual(mcs.accepts[0], ("/config/master", "application/vnd.coreos.ignition+json; version=3.4.0"))
        self.assertIn("Overwriting the OS image with quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123", out)
        self.assertIn("Continuing installation without skipping MCO reboot", out)
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))
        # nothing of the new disk is left mounted
        with open("/proc/self/mountinfo") as f:
            self.assertNotIn(self.lab.path("mnt"), f.read())
        self.assertEqual(self.inst.standin_runs("shutdown"), [REBOOT_ARGV])

    def test_skip_mco_reboot_without_a_server_goes_on(self):
        mcs = MachineConfigServer(self.lab, self.MC)
        self.svc.set_host(L.H1, ignition=mcs.pointer("https://127.0.0.1:1/config/master"))
        dev = self.lab.loop()
        rc = self.inst.run(dev, extra=["--enable-skip-mco-reboot"])
        out = self.inst.output()
        self.assertEqual(rc, 0, out)
        self.assertIn("failed getting encapsulated machine config.  Continuing installation without skipping MCO "
                      "reboot", out)
        self.assertEqual(mcs.accepts, [])
        self.assertEqual(self.stages()[-1], ("Rebooting", ""))

    def test_registry_copy_failure_is_fatal(self):
        """The appliance's registry data (present for a master) is copied to
        the new disk; unlike the other extras, a failure fails the install."""
        os.makedirs(self.lab.path("registry", "docker"))
        dev = self.lab.loop()
        flags = self.inst.cradle_flags()
        flags[flags.index("--registry-dir") + 1] = self.lab.path("registry")
        env = self.inst.env(PATH=L.STAND_INS + ":/usr/sbin:/usr/bin:/sbin:/bin")
        path = env["PATH"]
        if L.shutil.which("growpart", path=path) and L.shutil.which("xfs_growfs", path=path):
            self.skipTest("growpart is installed: the copy would go further than this test expects")
        rc = self.inst.run(dev, cradle_extra=flags, env=env)
        self.assertEqual(rc, 1, self.inst.output())
        stage, info = self.stages()[-1]
        self.assertEqual(stage, "Failed")
        self.assertTrue(info.startswith("failed after 3 attempts, last error: failed executing growpart %s 4" % dev),
                        info)
        self.assertEqual(self.inst.standin_runs("shutdown"), [])
        requested = [r["body"] for r in self.svc.requests(path="/progress$")]
        self.assertIn({"current_stage": "Copying registry data to disk"}, requested)

    def test_no_registry_copy_for_workers(self):
        os.makedirs(self.lab.path("registry"))
        self.svc.set_host(L.H1, status="installed", stage="Done")
        self.svc.set_host(L.H2, status="installed", stage="Done")
        dev = self.lab.loop()
        flags = self.inst.cradle_flags()
        flags[flags.index("--registry-dir") + 1] = self.lab.path("registry")
        rc = self.inst.run(dev, role="worker", host=L.H3, cradle_extra=flags)
        self.assertEqual(rc, 0, self.inst.output())
        self.assertNotIn("Copying registry data to disk", [s for s, _ in self.stages(L.H3)])


class TestCommandLine(unittest.TestCase):
    UPSTREAM_FLAGS = ["role", "cluster-id", "infra-env-id", "host-id", "boot-device", "url", "openshift-version",
                      "mco-image", "verbose", "controller-image", "agent-image", "insecure", "cacert", "http-proxy",
                      "https-proxy", "no-proxy", "service-ips", "control-plane-count", "check-cluster-version",
                      "must-gather-image", "format-disk", "skip-installation-disk-cleanup",
                      "enable-skip-mco-reboot", "notify-num-reboots", "coreos-image", "installer-args", "help",
                      "dry-run", "force-id", "fake-reboot-marker-path", "dry-run-cluster-hosts-path"]

    def setUp(self):
        self.lab = L.Lab()
        self.addCleanup(self.lab.cleanup)
        self.link = self.lab.path("installer")
        os.symlink(L.CRADLE, self.link)

    def call(self, *args):
        return subprocess.run([self.link] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, CRADLE_LOG_TARGET="stderr"))

    def test_help_lists_every_upstream_flag(self):
        p = self.call("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("Usage of installer:"), p.stdout[:100])
        listed = [ln.split()[0][1:] for ln in p.stdout.splitlines() if ln.startswith("  -")]
        for f in self.UPSTREAM_FLAGS:
            self.assertIn(f, listed)
        self.assertIn('-controller-image string\n    \tAssisted Installer Controller image URL (default '
                      '"quay.io/ocpmetal/assisted-installer-controller:latest")', p.stdout)
        self.assertIn("-format-disk string", p.stdout)
        self.assertIn("[$DRY_ENABLE", p.stdout)
        # the installers before --control-plane-count took this one (agents of the 2023 service send it)
        self.assertIn("-high-availability-mode string", p.stdout)

    def test_usage_errors_exit_2(self):
        for args, message in ((["--nope"], "flag provided but not defined: -nope"),
                              (["--high-availability-mode", "Half"],
                               "invalid --high-availability-mode 'Half' (Full or None)"),
                              (["--high-availability-mode", "None", "--control-plane-count", "3"],
                               "--high-availability-mode None contradicts --control-plane-count 3"),
                              (["--control-plane-count", "three"], "invalid value \"three\" for flag -control-plane-count"),
                              (["--insecure", "true"], "unexpected argument 'true'"),
                              (["--installer-args", "[\"--append-karg\""], "invalid --installer-args"),
                              (["--installer-args", "{\"a\": 1}"], "expected a JSON array of strings"),
                              (["--installer-args", "[1]"], "element 0 is a number, not a string"),
                              (["--insecure=maybe"], "invalid boolean value \"maybe\" for -insecure")):
            p = self.call(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(message, p.stderr, args)

    def test_go_flag_syntax(self):
        # "-flag value", "--flag=value", repeated --format-disk, --insecure=true: parsed, then the run
        # fails for the missing service (exit 1, not 2)
        p = self.call("-role", "worker", "--cluster-id=c", "--format-disk", "/dev/null", "--format-disk=/dev/zero",
                      "--insecure=true", "--url", "http://127.0.0.1:9", "--host-exec=direct",
                      "--log-file=", "--retry-delay=0", "--retry-max-delay=0", "--boot-device", "/nonexistent",
                      "--install-dir", self.lab.path("opt"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("role=worker cluster-id=c infra-env-id=c", p.stderr)
        self.assertIn("format-disk=[/dev/null,/dev/zero]", p.stderr)
        self.assertIn("insecure=true", p.stderr)
        self.assertIn("control-plane-count=0", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
