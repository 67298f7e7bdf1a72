#!/usr/bin/python3
"""The VM runner itself (tests/vm/vmlab.py).

    test_runner.py Profile     the profile's checks, qemu's arguments and the
                               per-VM archive (no VM: runs in every build)
    test_runner.py Hardware    one VM booted under UEFI with a profile of
                               every disk bus, two NIC models, SMBIOS strings
                               and a BMC: the guest's own tools (lsblk,
                               dmidecode, ip, ipmitool) see what the profile
                               asked for (through with-image.sh and
                               in-netns.sh; skips with the reason where qemu
                               cannot run)

Environment: CRADLE_BINARY, CRADLE_STATIC, CRADLE_BUILD_ROOT (the serial
console and the journal are kept in meson-logs/vm-hardware/),
CRADLE_VM_BOOT_TIMEOUT (default 900 s).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vmlab  # noqa: E402

PROFILE_FILE = os.path.join(HERE, "profiles", "every-bus.json")
with open(PROFILE_FILE) as f:
    PROFILE = json.load(f)
UUID = PROFILE["smbios"]["1"]["uuid"]


class Profile(unittest.TestCase):
    def test_refuses_what_the_bus_cannot_emulate(self):
        for bad, what in (
                ({"disks": [{"bus": "virtio", "wwn": "0x5000c500a0b1c2d3"}]}, "wwn"),
                ({"disks": [{"bus": "nvme", "rotation": 1}]}, "rotation"),
                ({"disks": [{"bus": "floppy"}]}, "floppy"),
                ({"disks": [{"bus": "sata", "size": "2 GB"}]}, "size"),
                ({"nics": [{"model": "rtl8139", "mac": "52:54:00:00:00:01"}]}, "rtl8139"),
                ({"nics": [{"model": "virtio", "mac": "52-54-00-00-00-01"}]}, "MAC"),
                ({"firmware": "coreboot"}, "coreboot"),
                ({"smbios": {"38": {}}}, "SMBIOS"),
                ({"tpm": "3.0"}, "tpm"),
                ({"bmc": {"address": "203.0.113"}}, "bmc"),
                ({"bmc": {"address": "203.0.113.50", "user": "admin"}}, "bmc"),
                ({"gpus": 1}, "gpus")):
            with self.subTest(bad=bad):
                with self.assertRaisesRegex(vmlab.ProfileError, what):
                    vmlab.load_profile(bad)

    def test_qemu_arguments(self):
        tmp = tempfile.mkdtemp(prefix="vm-profile-")
        self.addCleanup(shutil.rmtree, tmp)
        prof = vmlab.load_profile(PROFILE)
        args = vmlab.hardware_args(prof, tmp, ["tap0", "tap1"])
        devices = [args[i + 1] for i, a in enumerate(args) if a == "-device"]
        self.assertEqual(devices, [
            "virtio-blk-pci,drive=disk0,serial=CRVIRTIO0001",
            "nvme,id=nvme0,serial=CRNVME0001",
            "nvme-ns,drive=disk1,bus=nvme0,nsid=1",
            "ide-hd,drive=disk2,bus=ide.0,serial=CRSATA0001,model=CRADLE SATA DISK,wwn=%d,rotation_rate=7200"
            % 0x5000c500a0b1c2d3,
            "virtio-scsi-pci,id=scsi0",
            "scsi-hd,drive=disk3,bus=scsi0.0,serial=CRSCSI0001,product=SCSI SSD,vendor=CRADLE,wwn=%d,"
            "rotation_rate=1" % 0x5000c500a0b1c2d4,
            "qemu-xhci,id=xhci0",
            "usb-storage,drive=disk4,bus=xhci0.0,serial=CRUSB0001",
            "virtio-net-pci,netdev=tap0,mac=52:54:00:c7:ad:11",
            "e1000e,netdev=tap1,mac=52:54:00:c7:ad:12",
            "ipmi-bmc-extern,chardev=ipmichr,id=bmc0",
            "isa-ipmi-kcs,bmc=bmc0",
            "tpm-tis,tpmdev=tpm0",
        ])
        self.assertIn("emulator,id=tpm0,chardev=tpmchr", args)
        self.assertIn("socket,id=tpmchr,path=" + os.path.join(tmp, "swtpm.sock"), args)
        self.assertEqual(vmlab.swtpm_args(prof, tmp)[-1], "--tpm2")
        # a comma in an SMBIOS string is doubled (qemu's option syntax)
        smbios = [args[i + 1] for i, a in enumerate(args) if a == "-smbios"]
        self.assertEqual(smbios[0], "type=1,manufacturer=Cradle Labs,, Inc.,product=Discovery VM,"
                                    "serial=CR-VM-0001,uuid=%s" % UUID)
        # the disks: sparse files of the profile's sizes
        self.assertEqual(os.path.getsize(os.path.join(tmp, "disk3.img")), 3 << 30)
        self.assertLess(os.stat(os.path.join(tmp, "disk3.img")).st_blocks, 64)

    def test_disk_from_an_image(self):
        """A disk with an "image" starts as a copy of it, the image's size
        unless "size" says more; a missing image is refused."""
        tmp = tempfile.mkdtemp(prefix="vm-profile-")
        self.addCleanup(shutil.rmtree, tmp)
        image = os.path.join(tmp, "raw.img")
        with open(image, "wb") as f:
            f.write(b"cradle" * 1000)
            f.truncate(3 << 20)
        prof = vmlab.load_profile({"disks": [{"bus": "virtio", "serial": "cradle-osimage", "image": image},
                                             {"bus": "virtio", "size": "8M", "image": image}], "nics": []})
        vmlab.hardware_args(prof, tmp, [])
        for i, size in ((0, 3 << 20), (1, 8 << 20)):
            with open(vmlab.disk_path(tmp, i), "rb") as f:
                data = f.read()
            self.assertEqual(len(data), size)
            self.assertEqual(data[:6000], b"cradle" * 1000)
            self.assertEqual(data[6000:], b"\0" * (size - 6000))
        with self.assertRaisesRegex(vmlab.ProfileError, "image"):
            vmlab.load_profile({"disks": [{"bus": "virtio", "image": os.path.join(tmp, "missing.img")}]})

    def test_bmc_with_an_address(self):
        """ipmi_sim's lan_config_program answers the profile's address for
        channel 1; qemu reaches ipmi_sim on the port of its serial line;
        a BMC without an address is qemu's own simulator."""
        tmp = tempfile.mkdtemp(prefix="vm-bmc-")
        self.addCleanup(shutil.rmtree, tmp)
        prof = vmlab.load_profile(PROFILE)
        files = vmlab.ipmi_sim_files(prof, tmp)
        lancontrol = os.path.join(tmp, "ipmi-lancontrol")
        with open(lancontrol, "w") as f:
            f.write(files[lancontrol][1])
        r = subprocess.run(["sh", lancontrol, "eth0", "get", "ip_addr", "ip_addr_src", "subnet_mask",
                            "mac_addr"], stdout=subprocess.PIPE, text=True)
        self.assertEqual(r.stdout.splitlines(), ["ip_addr:203.0.113.50", "ip_addr_src:static",
                                                 "subnet_mask:255.255.255.0", "mac_addr:00:00:00:00:00:00"])
        conf = files[os.path.join(tmp, "ipmi-lan.conf")][1]
        port = vmlab.ipmi_sim_port(tmp)
        self.assertIn("  serial 15 127.0.0.1 %d codec VM\n" % port, conf)
        self.assertIn("    lan_config_program \"%s eth0\"\n" % lancontrol, conf)
        args = vmlab.hardware_args(prof, tmp, ["tap0", "tap1"])
        self.assertIn("socket,id=ipmichr,host=127.0.0.1,port=%d,reconnect=1" % port, args)
        sim = vmlab.hardware_args(vmlab.load_profile({"bmc": True}), tmp, ["tap0"])
        self.assertIn("ipmi-bmc-sim,id=bmc0", sim)

    def test_archive_unpacks_as_the_kernel_would(self):
        if shutil.which("cpio") is None:
            self.skipTest("cpio is not installed")
        tmp = tempfile.mkdtemp(prefix="vm-archive-")
        self.addCleanup(shutil.rmtree, tmp)
        files = {"/etc/cradle/agent.env": (0o600, "CRADLE_URL=http://203.0.113.1:8090\n"),
                 "/etc/hostname": (0o644, "host0\n")}
        files.update(vmlab.network_files(vmlab.load_profile(PROFILE)))
        r = subprocess.run(["cpio", "-idm", "--quiet", "--no-absolute-filenames"], cwd=tmp,
                           input=vmlab.config_archive(files), stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 0, r.stderr)
        for path, (mode, text) in files.items():
            with self.subTest(path=path):
                with open(tmp + path) as f:
                    self.assertEqual(f.read(), text)
                self.assertEqual(os.stat(tmp + path).st_mode & 0o7777, mode)
        with open(tmp + "/etc/systemd/network/10-cradle-nic0.network") as f:
            self.assertEqual(f.read(), "[Match]\nMACAddress=52:54:00:c7:ad:11\n\n[Network]\n"
                                       "Address=203.0.113.31/24\n")
        # the NIC without an address gets no file
        self.assertFalse(os.path.exists(tmp + "/etc/systemd/network/10-cradle-nic1.network"))


class Hardware(vmlab.BootedTestCase, unittest.TestCase):
    PROFILE = PROFILE_FILE
    VM_NAME = "hw0"
    KEEP = "vm-hardware"

    def json_of(self, command):
        _, out, _ = self.vm.run(command, timeout=120, check=True)
        return json.loads(out)

    def test_disks_as_the_profile_says(self):
        disks = {d["serial"]: d for d in self.json_of(
            "lsblk -J -d -b -o NAME,SERIAL,WWN,MODEL,VENDOR,ROTA,TRAN,SIZE")["blockdevices"] if d.get("serial")}
        self.assertEqual(set(disks), {d["serial"] for d in PROFILE["disks"]}, disks)
        for want in PROFILE["disks"]:
            got = disks[want["serial"]]
            with self.subTest(bus=want["bus"]):
                self.assertEqual(got["size"], vmlab.parse_size(want["size"]))
                self.assertTrue(got["name"].startswith(
                    {"virtio": "vd", "nvme": "nvme", "sata": "sd", "scsi": "sd", "usb": "sd"}[want["bus"]]), got)
                if want["bus"] in ("nvme", "sata", "usb"):
                    self.assertEqual(got["tran"], want["bus"])
                if "wwn" in want:
                    self.assertEqual(got["wwn"], want["wwn"])
                if "model" in want:
                    self.assertEqual(got["model"], want["model"])
                if "vendor" in want:
                    self.assertEqual(got["vendor"].strip(), want["vendor"])
                if "rotation" in want:
                    self.assertEqual(got["rota"], want["rotation"] != 1)

    def test_nics_by_model_and_mac(self):
        links = {link.get("address"): link for link in self.json_of("ip -j -d link show")}
        drivers = {"virtio": "virtio_net", "e1000e": "e1000e"}
        for nic in PROFILE["nics"]:
            with self.subTest(mac=nic["mac"]):
                self.assertIn(nic["mac"], links)
                name = links[nic["mac"]]["ifname"]
                _, out, _ = self.vm.run("basename $(readlink /sys/class/net/%s/device/driver)" % name,
                                        check=True)
                self.assertEqual(out.strip(), drivers[nic["model"]])
        addrs = self.json_of("ip -j addr show")
        self.assertIn("203.0.113.31", [a["local"] for link in addrs for a in link.get("addr_info", [])])

    def test_smbios_strings(self):
        for key, want in (("system-manufacturer", "Cradle Labs, Inc."), ("system-product-name", "Discovery VM"),
                          ("system-serial-number", "CR-VM-0001"), ("system-uuid", UUID),
                          ("baseboard-manufacturer", "Cradle Labs"), ("baseboard-serial-number", "CR-BOARD-0001"),
                          ("chassis-serial-number", "CR-CHASSIS-0001")):
            with self.subTest(key=key):
                _, out, _ = self.vm.run("dmidecode -s %s" % key, check=True)
                self.assertEqual(out.strip(), want)

    def test_bmc_answers(self):
        rc, out, err = self.vm.run("modprobe ipmi_devintf && ipmitool mc info", timeout=120)
        self.assertEqual(rc, 0, err)
        self.assertIn("IPMI Version", out)

    def test_nothing_of_the_build_machine(self):
        """debootstrap copies the build machine's /etc/resolv.conf into the
        root: a guest would send its DNS queries (the agent's
        domain-resolution step, chrony's pool) to this machine's resolver.
        The image has no nameserver; /etc/hosts names only localhost."""
        _, out, _ = self.vm.run("cat /etc/resolv.conf", check=True)
        self.assertEqual([line for line in out.splitlines() if line.split()[:1] == ["nameserver"]], [], out)
        _, out, _ = self.vm.run("cat /etc/hosts", check=True)
        names = {w for line in out.splitlines() if not line.startswith("#") for w in line.split()[1:]}
        self.assertLessEqual(names, {"localhost", "ip6-localhost", "ip6-loopback", "ip6-allnodes",
                                     "ip6-allrouters"}, out)

    def test_tpm(self):
        _, out, _ = self.vm.run("cat /sys/class/tpm/tpm0/tpm_version_major", check=True)
        self.assertEqual(out.strip(), PROFILE["tpm"].split(".")[0])

    def test_uefi(self):
        rc, _, _ = self.vm.run("test -d /sys/firmware/efi")
        self.assertEqual(rc, 0, "booted without UEFI")


if __name__ == "__main__":
    vmlab.unittest_main()
