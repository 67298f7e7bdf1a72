#!/usr/bin/python3
"""The installer's disk cleanup and its busy-disk refusals on a real kernel:
what tests/installer/test_installer.py skips in this machine's namespaces
(no device-mapper, no md RAID, no partition devices of loop devices) runs
here in a VM, with real LVM, md RAID1, dm-crypt (LUKS2) and GPT partition
tables set up by the guest's own tools on the VM's disks.

One VM (BIOS) for the class; the reference service in the installer's
scenario listens on the lab's bridge, and `cradle installer` runs in the
guest as the agent's install step would run it, with the image's
coreos-installer stand-in (tests/vm/coreos-installer) writing the RHCOS-like
test image (tests/installer/lab.py's, attached as the disk with serial
cradle-osimage). In order:

1. the cleanup: the target (NVMe) has a GPT with an LVM volume group, an md
   RAID1 member (the other member on a second disk, a volume group on the
   array), an open LUKS2 volume and an ext4 file system; a bystander disk
   (SATA) has an open LUKS2 volume and an active volume group of its own.
   After the installation exactly the target is clean (its groups, array
   and mapping gone, the image and the Ignition config on it), the second
   disk keeps its RAID superblock, the bystander is byte for byte as it
   was, its group active and its LUKS volume open. The reboot the
   installer scheduled (`shutdown -r +1`, through logind) is checked and
   cancelled. The logs it uploaded before the reboot come from the guest's
   real journal, compressed by journald (a long entry, above journald's
   compression threshold, is in the tarball whole);
2. a disk whose partition is mounted is refused, its bytes unchanged;
3. a disk whose partition is held by an open LUKS volume is refused (the
   cleanup skipped, as --skip-installation-disk-cleanup asks), naming the
   holder, its bytes unchanged.

Skips where qemu cannot run (vmlab.why_not_runnable), and against a real
service (the VM's network is the test's namespace). The serial console, the
journal, the installer's outputs and the service's record are kept in
meson-logs/vm-disks/.
"""
import io
import json
import os
import re
import shlex
import shutil
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, os.path.join(SRC, "tests", "installer"))
sys.path.insert(0, HERE)
from refclient import RefService, real_service  # noqa: E402
import lab as L  # noqa: E402
import vmlab  # noqa: E402

OSIMAGE_SERIAL = "cradle-osimage"
KEY = "/run/cradle-test.key"
LUKS_FORMAT = ("cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "
               "--key-file %s" % KEY)


def profile(osimage):
    return {"cpus": 2, "memory_mib": 1536, "firmware": "bios",
            "disks": [{"bus": "nvme", "size": "256M", "serial": "CRTARGET"},
                      {"bus": "virtio", "size": "128M", "serial": "CRSECOND"},
                      {"bus": "sata", "size": "128M", "serial": "CRBYSTANDER"},
                      {"bus": "virtio", "size": "128M", "serial": "CRBUSY"},
                      {"bus": "virtio", "serial": OSIMAGE_SERIAL, "image": osimage}],
            "nics": [{"model": "virtio", "mac": "52:54:00:c7:ad:41", "address": "203.0.113.41/24"}]}


def log(msg):
    sys.stderr.write("vm-disks: %s\n" % msg)
    sys.stderr.flush()


class Disks(vmlab.BootedTestCase, unittest.TestCase):
    KEEP = "vm-disks"
    VM_NAME = "disks0"
    svc = None

    @classmethod
    def setUpClass(cls):
        reason = vmlab.why_not_runnable()
        if reason is None and real_service():
            reason = "the VM's only network is the test's namespace; the service of CRADLE_TEST_SERVICE_URL is outside it"
        if reason:
            raise unittest.SkipTest(reason)
        cls.work = tempfile.mkdtemp(prefix="cradle-vm-disks-image-")
        try:
            cls.osimage = L.build_image(os.path.join(cls.work, "rhcos-test.img"), os.path.join(cls.work, "build"))
            cls.PROFILE = profile(cls.osimage)
            super().setUpClass()
        except BaseException:
            shutil.rmtree(cls.work, ignore_errors=True)
            raise

    @classmethod
    def booted(cls):
        cls.svc = RefService(scenario=L.scenario(), token=L.TOKEN, workdir=cls.tmp, bind=cls.lab.address)
        cls.svc.start()
        # the guest's disks by serial: /dev/NAME
        _, out, _ = cls.vm.run("lsblk -J -d -o NAME,SERIAL", check=True)
        cls.dev = {d["serial"]: "/dev/" + d["name"] for d in json.loads(out)["blockdevices"] if d.get("serial")}
        for serial in ("CRTARGET", "CRSECOND", "CRBYSTANDER", "CRBUSY", OSIMAGE_SERIAL):
            if serial not in cls.dev:
                raise vmlab.VMError("no disk with serial %s in the guest: %s" % (serial, cls.dev))
        cls.vm.run("printf cradle-test-passphrase > %s" % KEY, check=True)

    @classmethod
    def tearDownClass(cls):
        if cls.svc is not None:
            cls.svc.stop()
            for name in (os.path.basename(cls.svc.stderr_path), os.path.basename(cls.svc.record_path)):
                p = os.path.join(cls.tmp, name)
                if os.path.exists(p):
                    shutil.copy(p, cls.keep)
        super().tearDownClass()
        shutil.rmtree(cls.work, ignore_errors=True)

    def setUp(self):
        self.svc.reset(L.scenario())
        self.svc.set_host(L.H1, ignition=L.host_ignition("node-1"))

    # -- helpers --
    def sh(self, command, timeout=120):
        return self.vm.run(command, timeout=timeout, check=True)[1]

    def sha256(self, dev):
        return self.sh("sha256sum %s" % dev).split()[0]

    def partition(self, disk, n):
        return disk + ("p%d" % n if disk[-1].isdigit() else "%d" % n)

    def installer(self, device, extra=(), name="installer"):
        argv = ["cradle", "installer", "--role", "master", "--infra-env-id", L.IE, "--cluster-id", L.CL,
                "--host-id", L.H1, "--boot-device", device, "--url", self.svc.url,
                "--controller-image", L.CONTROLLER, "--agent-image", L.AGENT,
                "--mco-image", "quay.io/test/mco@sha256:0", "--openshift-version", "4.13.18", "--insecure",
                "--installer-args", L.KARGS, "--retry-delay=0.1", "--retry-max-delay=0.5",
                "--command-retry-delay=0.5", "--write-retry-delay=0.1"] + list(extra)
        command = "PULL_SECRET_TOKEN=%s %s 2>&1" % (shlex.quote(L.TOKEN), " ".join(shlex.quote(a) for a in argv))
        rc, out, _ = self.vm.run(command, timeout=900)
        with open(os.path.join(self.keep, "%s.log" % name), "w") as f:
            f.write(out)
        self.assertNotIn(L.TOKEN, out)
        return rc, out

    def stages(self):
        return L.progress_of(self.svc, L.H1)

    # -- tests, in order --
    def test_1_cleanup_takes_exactly_the_target(self):
        target, second, bystander = self.dev["CRTARGET"], self.dev["CRSECOND"], self.dev["CRBYSTANDER"]
        p = lambda n: self.partition(target, n)  # noqa: E731
        b = lambda n: self.partition(bystander, n)  # noqa: E731
        # the target: LVM, an md RAID1 member (a volume group on the array),
        # an open LUKS2 volume, an ext4 file system
        self.sh("sgdisk -n 1:0:+48M -n 2:0:+48M -n 3:0:+48M -n 4:0:0 %s && udevadm settle" % target)
        self.sh("pvcreate -y %s && vgcreate crtgt %s && lvcreate -y -L 8M -n lv0 crtgt" % (p(1), p(1)))
        self.sh("mdadm --create /dev/md/crtest --run --level=1 --raid-devices=2 --metadata=1.2 %s %s "
                "&& udevadm settle" % (p(2), second))
        self.sh("pvcreate -y /dev/md/crtest && vgcreate crmd /dev/md/crtest && lvcreate -y -L 8M -n lv0 crmd")
        self.sh("%s %s && cryptsetup open --key-file %s %s crtgt-crypt" % (LUKS_FORMAT, p(3), KEY, p(3)))
        self.sh("mkfs.ext4 -q %s" % p(4))
        # the bystander: an open LUKS2 volume and an active volume group
        self.sh("sgdisk -n 1:0:+48M -n 2:0:0 %s && udevadm settle" % bystander)
        self.sh("%s %s && cryptsetup open --key-file %s %s crby-crypt" % (LUKS_FORMAT, b(1), KEY, b(1)))
        self.sh("pvcreate -y %s && vgcreate crby %s && lvcreate -y -L 8M -n lv0 crby" % (b(2), b(2)))
        self.sh("udevadm settle")
        before = self.sha256(bystander)
        log("layouts made:\n" + self.sh("lsblk -o NAME,TYPE,FSTYPE,SIZE"))
        # an entry above journald's compression threshold (512 bytes), with
        # the agent's tag: the logs sender must read it back decompressed
        long_line = "cradle-vm-disks compressed entry " + "0123456789abcdef" * 64
        self.sh("printf 'MESSAGE=%s\\nTAG=agent\\nSYSLOG_IDENTIFIER=vm-disks\\n' | logger --journald "
                "&& journalctl --flush" % long_line)

        rc, out = self.installer(target)
        self.assertEqual(rc, 0, out)
        # the reboot the installer asked for, through the real shutdown:
        # scheduled with logind; cancelled here
        scheduled = self.sh("cat /run/systemd/shutdown/scheduled")
        self.sh("shutdown -c")
        self.assertIn("MODE=reboot", scheduled)
        self.assertIn(("Rebooting", ""), self.stages())
        self.assertNotIn("Could not clean install device", json.dumps(self.stages()))

        # the cleanup's commands, from what the guest's tools reported
        for line in ("Running vgremove crtgt -y", "Running vgremove crmd -y",
                     "Running dmsetup remove --retry crtgt-crypt", "Running mdadm --stop /dev/md/crtest",
                     "Running mdadm --zero-superblock %s" % p(2),
                     "Running wipefs --all --force %s (libblkid)" % target):
            self.assertIn(line, out)
        for other in ("crby", second, bystander):
            self.assertNotRegex(out, r"Running (vgremove|pvremove|dmsetup remove|mdadm)[^\n]* %s" % re.escape(other))

        # the target is clean and holds the image: no group, array or mapping left
        vgs = self.sh("vgs --noheadings -o vg_name").split()
        self.assertNotIn("crtgt", vgs)
        self.assertNotIn("crmd", vgs)
        self.assertEqual(self.sh("mdadm --detail --scan"), "")
        dms = self.sh("dmsetup ls").split()
        self.assertNotIn("crtgt-crypt", dms)
        self.assertNotRegex(self.sh("pvs --noheadings -o pv_name"), re.escape(target))
        parts = json.loads(self.sh("lsblk -J -o NAME,PARTLABEL %s" % target))["blockdevices"][0]["children"]
        self.assertEqual([c["partlabel"] for c in parts], ["BIOS-BOOT", "EFI-SYSTEM", "boot", "root"])
        self.assertEqual(self.sh("debugfs -R 'cat /etc/cradle-test-image' %s 2>/dev/null" % p(4)), L.ROOT_MARKER)
        config = self.sh("debugfs -R 'cat /ignition/config.ign' %s 2>/dev/null" % p(3))
        self.assertEqual(json.loads(config), L.host_ignition("node-1"))
        bls = self.sh("debugfs -R 'cat /loader/entries/ostree-1-rhcos.conf' %s 2>/dev/null" % p(3))
        self.assertIn("options %s ip=enp1s0:dhcp\n" % L.BLS_OPTIONS, bls)

        # nothing else: the second member keeps its superblock, the
        # bystander its bytes, its active group and its open LUKS volume
        self.assertIn("linux_raid_member", self.sh("wipefs --no-act %s" % second))
        self.assertEqual(self.sha256(bystander), before, "the bystander disk was not touched")
        self.assertIn("crby", vgs)
        self.assertEqual(self.sh("lvs --noheadings -o lv_active crby/lv0").strip(), "active")
        self.assertIn("crby-crypt", dms)
        self.assertIn("is active", self.sh("cryptsetup status crby-crypt"))

        # the logs uploaded before the reboot: the guest's journal, as
        # journald wrote it (compressed), read back by the logs sender
        header = self.sh("journalctl --header")
        log("journal header flags: %s" % [ln for ln in header.splitlines() if "flags" in ln.lower()])
        self.assertRegex(header, r"COMPRESSED-(ZSTD|XZ|LZ4)")
        logs = [m for m in self.svc.logs() if m["host_id"] == L.H1]
        self.assertEqual(len(logs), 1, logs)
        with open(logs[0]["path"], "rb") as f:
            data = f.read()
        shutil.copy(logs[0]["path"], self.keep)
        members = {}
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
            for m in tf.getmembers():
                if m.isfile():
                    members[os.path.basename(m.name)] = tf.extractfile(m).read().decode(errors="replace")
        self.assertIn(long_line, members.get("agent.logs", ""), sorted(members))
        self.assertRegex(members.get("installer.logs", ""),
                         r"disks0 [^\n]*Cleaning up installation device %s" % re.escape(target))

    def test_2_mounted_partition_is_refused(self):
        disk = self.dev["CRBUSY"]
        part = self.partition(disk, 1)
        self.sh("sgdisk -Z -n 1:0:0 %s && udevadm settle && mkfs.ext4 -q %s && mkdir -p /mnt/busy "
                "&& mount -o ro %s /mnt/busy" % (disk, part, part))
        try:
            before = self.sha256(disk)
            rc, out = self.installer(disk, name="installer-mounted")
            self.assertEqual(rc, 1, out)
            self.assertEqual(self.stages()[-1],
                             ("Failed", "found busy partitions on %s: %s mounted on /mnt/busy" % (disk, part)))
            self.assertNotIn("Installing to", out)
            self.assertEqual(self.sha256(disk), before, "nothing was written to the busy disk")
        finally:
            self.vm.run("umount /mnt/busy")

    def test_3_held_partition_is_refused_naming_the_holder(self):
        disk = self.dev["CRBUSY"]
        part = self.partition(disk, 1)
        self.sh("%s %s && cryptsetup open --key-file %s %s crhold" % (LUKS_FORMAT, part, KEY, part))
        try:
            before = self.sha256(disk)
            rc, out = self.installer(disk, extra=["--skip-installation-disk-cleanup"], name="installer-held")
            self.assertEqual(rc, 1, out)
            stage, info = self.stages()[-1]
            self.assertEqual(stage, "Failed")
            self.assertRegex(info, r"^found busy partitions on %s: %s in use by dm-\d+ \(crhold\)$" % (
                re.escape(disk), re.escape(part)))
            self.assertNotIn("Cleaning up installation device", out)
            self.assertEqual(self.sha256(disk), before, "nothing was written to the held disk")
        finally:
            self.vm.run("cryptsetup close crhold")


if __name__ == "__main__":
    vmlab.unittest_main()
