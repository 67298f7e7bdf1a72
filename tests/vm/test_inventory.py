#!/usr/bin/python3
"""`cradle inventory` in a real udev world (issue 21, Build §3, second
test): one VM of profiles/every-bus.json (virtio-blk, NVMe, SATA, SCSI and
USB disks, a virtio and an e1000e NIC, SMBIOS types 1-3, a BMC with a LAN
address, a TPM 2.0, UEFI) booted once; cradle's inventory taken in the guest
and compared field by field with what qemu was asked for (the profile) and
with the guest's own tools (lsblk -J -O, udevadm info --query=property,
ip -j, dmidecode, ipmitool lan print, systemd-detect-virt, sysfs). The
table of every field, with the differences and their reasons, is
tests/vm/INVENTORY.md; the known limits of the emulation are written here
as explicit expected values, so a change in qemu, udev or cradle shows up
as a failure.

The inventory's field names are assisted-service's (swagger.yaml:
inventory, disk, interface, system_vendor, memory, boot).

Skips (exit 77) where qemu cannot run and in a build whose cradle is not
static. Environment: CRADLE_BINARY, CRADLE_STATIC, CRADLE_BUILD_ROOT (the
serial console, the journal and the collected documents are kept in
meson-logs/vm-inventory/), CRADLE_VM_BOOT_TIMEOUT (default 900 s).
"""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vmlab  # noqa: E402

PROFILE_FILE = os.path.join(HERE, "profiles", "every-bus.json")
with open(PROFILE_FILE) as f:
    PROFILE = json.load(f)
PROF = vmlab.load_profile(PROFILE)         # with the runner's defaults (cpus, memory)
VM_NAME = "inv0"
MIB = 1 << 20

# What each bus shows where the profile cannot say (qemu's fixed strings and
# the kernel's defaults): the explicit expected values of INVENTORY.md.
BUS = {
    # name prefix, by-path suffix after the PCI address, vendor, model when the
    # profile gives none, drive_type when the profile gives no rotation
    "virtio": {"name": "vd", "path": "", "vendor": "0x1af4", "model": None, "drive_type": "HDD"},
    "nvme": {"name": "nvme", "path": "-nvme-1", "vendor": None, "model": "QEMU NVMe Ctrl", "drive_type": "SSD"},
    "sata": {"name": "sd", "path": "-ata-1.0", "vendor": "ATA", "model": None, "drive_type": None},
    "scsi": {"name": "sd", "path": "-scsi-0:0:0:0", "vendor": None, "model": None, "drive_type": None},
    "usb": {"name": "sd", "path": "-usb-0:1:1.0-scsi-0:0:0:0", "vendor": "QEMU", "model": "QEMU_HARDDISK",
            "drive_type": "HDD"},
}
# the PCI ids qemu's NIC models carry (interface.vendor, interface.product)
# and the guest's driver (not an inventory field: checked against the profile)
NIC = {"virtio": ("0x1af4", "0x0001", "virtio_net"), "e1000e": ("0x8086", "0x10d3", "e1000e")}


def udev_model(s):
    """udev's ID_MODEL of an ATA/SCSI model string: blanks become '_'."""
    return s.replace(" ", "_")


class Inventory(vmlab.BootedTestCase, unittest.TestCase):
    PROFILE = PROFILE_FILE
    VM_NAME = VM_NAME
    KEEP = "vm-inventory"

    @classmethod
    def booted(cls):
        """Everything the tests compare, taken once: the inventory last, so
        it sees what the tools saw (udev settled, the IPMI device there)."""
        vm = cls.vm
        vm.run("modprobe ipmi_devintf; modprobe ipmi_si; udevadm settle --timeout=60", timeout=120)

        def text(command, timeout=120):
            return vm.run(command, timeout=timeout, check=True)[1]

        t = {}
        t["lsblk"] = {d["name"]: d for d in json.loads(text("lsblk -J -O -b"))["blockdevices"]}
        t["udev"] = {}
        for name in t["lsblk"]:
            props = text("udevadm info --query=property --name=%s" % name)
            t["udev"][name] = dict(line.split("=", 1) for line in props.splitlines() if "=" in line)
        t["by_id"] = text("cd /dev/disk/by-id && for l in *; do echo \"$l $(basename $(readlink $l))\"; done")
        t["links"] = {link["address"]: link for link in json.loads(text("ip -j -d link show"))}
        t["addrs"] = {a["ifname"]: a for a in json.loads(text("ip -j addr show"))}
        t["sysnet"] = {}
        for name in t["addrs"]:
            t["sysnet"][name] = text("cd /sys/class/net/%s && echo $(cat device/vendor device/device 2>/dev/null) "
                                     "$(basename $(readlink device/driver) 2>/dev/null)" % name).split()
        t["dmi"] = {}
        for key in ("system-manufacturer", "system-product-name", "system-serial-number", "system-uuid",
                    "baseboard-manufacturer", "baseboard-product-name", "baseboard-serial-number",
                    "chassis-manufacturer", "chassis-serial-number"):
            t["dmi"][key] = text("dmidecode -s %s" % key).strip()
        t["dmi_memory"] = text("dmidecode -t 17")
        t["meminfo"] = text("cat /proc/meminfo")
        t["cmdline"] = text("cat /proc/cmdline")
        t["efi"] = vm.run("test -d /sys/firmware/efi")[0] == 0
        t["tpm"] = vm.run("cat /sys/class/tpm/tpm0/tpm_version_major")[1].strip()
        t["ipmi_dev"] = vm.run("test -c /dev/ipmi0")[0] == 0
        t["lan_print"] = vm.run("ipmitool lan print 1 2>&1", timeout=120)
        t["nproc"] = int(text("nproc --all"))
        t["detect_virt"] = vm.run("systemd-detect-virt --vm")[1].strip()
        t["hostname"] = text("hostname").strip()
        rc, out, err = vm.run("cradle inventory --with-journal-logging=false", timeout=300)
        if rc != 0:
            raise AssertionError("cradle inventory in the guest: exit %d: %s" % (rc, err))
        cls.inv = json.loads(out)
        cls.tools = t
        with open(os.path.join(cls.keep, "inventory.json"), "w") as f:
            json.dump(cls.inv, f, indent=1, sort_keys=True)
        with open(os.path.join(cls.keep, "tools.json"), "w") as f:
            json.dump(t, f, indent=1, sort_keys=True)

    def disks(self):
        """{profile disk: inventory disk}, matched by serial."""
        by_serial = {d.get("serial"): d for d in self.inv["disks"]}
        self.assertEqual(set(by_serial), {d["serial"] for d in PROFILE["disks"]}, by_serial)
        return [(want, by_serial[want["serial"]]) for want in PROFILE["disks"]]

    # --- disks -------------------------------------------------------------------

    def test_disks_against_the_profile(self):
        for want, got in self.disks():
            bus = BUS[want["bus"]]
            with self.subTest(bus=want["bus"]):
                self.assertTrue(got["name"].startswith(bus["name"]), got)
                self.assertEqual(got["path"], "/dev/" + got["name"])
                self.assertEqual(got["size_bytes"], vmlab.parse_size(want["size"]))
                # rotation 1 is a solid-state disk (SCSI/ATA's "non-rotating
                # medium"); virtio-blk and usb-storage cannot say: the kernel's
                # default, rotational
                if "rotation" in want:
                    self.assertEqual(got["drive_type"], "SSD" if want["rotation"] == 1 else "HDD")
                else:
                    self.assertEqual(got["drive_type"], bus["drive_type"])
                if "wwn" in want:
                    self.assertEqual(got["wwn"], want["wwn"])
                    self.assertEqual(got["by_id"], "/dev/disk/by-id/wwn-" + want["wwn"])
                    self.assertEqual(got["id"], got["by_id"])
                else:
                    # the Go agent's by_id is a wwn-*/nvme-eui* link only
                    self.assertNotIn("by_id", got)
                    self.assertEqual(got["id"], got["by_path"])
                if "model" in want:
                    self.assertEqual(got.get("model"), udev_model(want["model"]))
                else:
                    self.assertEqual(got.get("model"), bus["model"])
                self.assertEqual(got.get("vendor"), want.get("vendor", bus["vendor"]))
                self.assertRegex(got["by_path"], r"^/dev/disk/by-path/pci-0000:00:[0-9a-f]{2}\.[0-7]%s$"
                                 % bus["path"].replace(".", r"\."))
                self.assertEqual(got["installation_eligibility"]["eligible"], True, got)

    def test_disks_against_lsblk_and_udev(self):
        by_id = {}
        for line in self.tools["by_id"].splitlines():
            link, _, target = line.partition(" ")
            by_id.setdefault(target, []).append(link)
        self.assertEqual({d["name"] for d in self.inv["disks"]},
                         {n for n, d in self.tools["lsblk"].items() if d["type"] == "disk"})
        for got in self.inv["disks"]:
            name = got["name"]
            blk, udev = self.tools["lsblk"][name], self.tools["udev"][name]
            with self.subTest(disk=name):
                self.assertEqual(got["serial"], blk["serial"])
                self.assertEqual(got["size_bytes"], blk["size"])
                self.assertEqual(got.get("wwn"), blk["wwn"])
                self.assertEqual(got.get("wwn"), udev.get("ID_WWN"))
                self.assertEqual(got["drive_type"], "HDD" if blk["rota"] else "SSD")
                self.assertEqual(got.get("hctl"), blk["hctl"])
                # lsblk pads the SCSI vendor to its 8 bytes; the inventory trims it
                self.assertEqual(got.get("vendor"), blk["vendor"].strip() if blk["vendor"] else None)
                # the inventory's model is udev's ID_MODEL (ATA and SCSI
                # blanks as '_'; NVMe's kept); lsblk reads sysfs (blanks kept)
                self.assertEqual(got.get("model"), udev.get("ID_MODEL"))
                self.assertEqual(got["model"].replace("_", " ") if "model" in got else None, blk["model"])
                self.assertEqual(got["by_path"], "/dev/disk/by-path/" + udev["ID_PATH"])
                wwn_links = sorted(link for link in by_id.get(name, []) if link.startswith(("wwn-", "nvme-eui")))
                if wwn_links:
                    self.assertEqual(got["by_id"], "/dev/disk/by-id/" + wwn_links[-1])
                else:
                    self.assertNotIn("by_id", got)
                # every disk has by-id links; only wwn-* ones are the inventory's
                self.assertTrue(by_id.get(name), name)

    # --- NICs ----------------------------------------------------------------------

    def test_nics_against_the_profile_and_ip(self):
        by_mac = {i.get("mac_address"): i for i in self.inv["interfaces"]}
        for want in PROFILE["nics"]:
            vendor, product, driver = NIC[want["model"]]
            with self.subTest(mac=want["mac"]):
                got = by_mac[want["mac"]]
                link = self.tools["links"][want["mac"]]
                self.assertEqual(got["name"], link["ifname"])
                self.assertEqual(got["mtu"], link["mtu"])
                self.assertEqual(got["type"], "physical")
                self.assertEqual((got["vendor"], got["product"]), (vendor, product))
                self.assertEqual(self.tools["sysnet"][got["name"]], [vendor, product, driver])
                self.assertEqual("up" in got["flags"], "UP" in link["flags"])
                addrs = ["%s/%d" % (a["local"], a["prefixlen"]) for a in
                         self.tools["addrs"][got["name"]].get("addr_info", []) if a["family"] == "inet"]
                self.assertEqual(got["ipv4_addresses"], addrs)
                self.assertEqual(addrs, [want["address"]] if want.get("address") else [])
                # IPv6: ip's, but for the link-local ones (the Go agent leaves them out)
                addrs6 = ["%s/%d" % (a["local"], a["prefixlen"]) for a in
                          self.tools["addrs"][got["name"]].get("addr_info", []) if a["family"] == "inet6"]
                self.assertEqual(got["ipv6_addresses"], [a for a in addrs6 if not a.startswith("fe80:")])
        # the NIC that is up has its link-local address, which the inventory omits
        self.assertTrue([a for a in self.tools["addrs"][by_mac[PROFILE["nics"][0]["mac"]]["name"]]["addr_info"]
                         if a["local"].startswith("fe80:")])
        # the virtio NIC is up (networkd), the e1000e has no .network file:
        # down, so no carrier and no speed
        up = by_mac[PROFILE["nics"][0]["mac"]]
        self.assertTrue(up.get("has_carrier"))
        # virtio-net has no link speed: sysfs says -1, the Go agent reports it as is
        self.assertEqual(up.get("speed_mbps"), -1)
        down = by_mac[PROFILE["nics"][1]["mac"]]
        self.assertFalse(down.get("has_carrier", False))
        self.assertNotIn("speed_mbps", down)

    # --- SMBIOS, memory, CPU -----------------------------------------------------------

    def test_system_vendor_against_the_profile_and_dmidecode(self):
        sv, dmi, want = self.inv["system_vendor"], self.tools["dmi"], PROFILE["smbios"]["1"]
        for field, key, prof in (("manufacturer", "system-manufacturer", "manufacturer"),
                                 ("product_name", "system-product-name", "product"),
                                 ("serial_number", "system-serial-number", "serial")):
            with self.subTest(field=field):
                self.assertEqual(sv[field], want[prof])
                self.assertEqual(sv[field], dmi[key])
        # -cpu max under TCG (or the host's under KVM) has CPUID's hypervisor
        # bit; the profile's SMBIOS strings name no hypervisor
        self.assertIs(sv["virtual"], True)
        self.assertNotIn(self.tools["detect_virt"], ("", "none"))
        # baseboard (type 2) and chassis (type 3) are not Inventory fields: the
        # profile against dmidecode only, so that a miss is not qemu's
        for key, want in (("baseboard-manufacturer", PROFILE["smbios"]["2"]["manufacturer"]),
                          ("baseboard-product-name", PROFILE["smbios"]["2"]["product"]),
                          ("baseboard-serial-number", PROFILE["smbios"]["2"]["serial"]),
                          ("chassis-manufacturer", PROFILE["smbios"]["3"]["manufacturer"]),
                          ("chassis-serial-number", PROFILE["smbios"]["3"]["serial"]),
                          ("system-uuid", PROFILE["smbios"]["1"]["uuid"])):
            self.assertEqual(dmi[key], want, key)

    def test_memory_and_cpu(self):
        mem = self.inv["memory"]
        self.assertEqual(mem["physical_bytes"], PROF["memory_mib"] * MIB)
        self.assertEqual(mem["physical_bytes_method"], "dmidecode")
        sizes = [line.split(":", 1)[1].strip() for line in self.tools["dmi_memory"].splitlines()
                 if line.strip().startswith("Size:")]
        self.assertEqual(sizes, ["%d GB" % (PROF["memory_mib"] // 1024)])
        total = [int(line.split()[1]) for line in self.tools["meminfo"].splitlines()
                 if line.startswith("MemTotal:")]
        self.assertEqual(mem["usable_bytes"], total[0] * 1024)
        self.assertEqual(self.inv["cpu"]["count"], PROF["cpus"])
        self.assertEqual(self.inv["cpu"]["count"], self.tools["nproc"])

    # --- BMC, boot, TPM, hostname ---------------------------------------------------------

    def test_bmc(self):
        """The profile's BMC is OpenIPMI's ipmi_sim behind qemu's
        ipmi-bmc-extern, its LAN channel 1 at the profile's address (qemu's
        own ipmi-bmc-sim has no LAN configuration at all: INVENTORY.md).
        ipmi_sim has no IPv6 LAN parameters: the Go agent's default."""
        want = PROFILE["bmc"]["address"]
        self.assertTrue(self.tools["ipmi_dev"], "no /dev/ipmi0: the BMC is not seen")
        rc, out, _ = self.tools["lan_print"]
        self.assertEqual(rc, 0, out)
        lan = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines())}
        self.assertEqual(lan.get("IP Address"), want, out)
        self.assertEqual(self.inv["bmc_address"], want)
        self.assertEqual(self.inv["bmc_v6address"], "::/0")

    def test_boot(self):
        boot = self.inv["boot"]
        self.assertEqual(PROFILE["firmware"], "uefi")
        self.assertTrue(self.tools["efi"])
        self.assertEqual(boot["current_boot_mode"], "uefi")
        # OVMF_CODE_4M.fd is the build without Secure Boot
        self.assertEqual(boot["secure_boot_state"], "Disabled")
        # /proc/cmdline as read, its newline kept (as the Go agent's)
        self.assertEqual(boot["command_line"], self.tools["cmdline"])
        # the root is the initramfs: no /sysroot, so no device_type
        self.assertNotIn("device_type", boot)

    def test_tpm_and_hostname(self):
        # swtpm behind qemu's tpm-tis
        self.assertEqual(self.inv["tpm_version"], PROFILE["tpm"])
        self.assertEqual(self.tools["tpm"], PROFILE["tpm"].split(".")[0])
        self.assertEqual(self.inv["hostname"], VM_NAME)
        self.assertEqual(self.tools["hostname"], VM_NAME)


if __name__ == "__main__":
    vmlab.unittest_main()
