#!/usr/bin/python3
"""A whole host, booted for real: the discovery image in a VM under UEFI,
its agent (packaging/systemd's unit) registering with the reference service
on the lab's bridge, answering the discovery steps, told to install; the
install step runs cradle's installer in-process (the service's installer
image is the agent's own, so the agent's --install-mode=auto picks it),
which cleans the disk, runs the image's coreos-installer stand-in
(tests/vm/coreos-installer: the RHCOS-like test image of
tests/installer/lab.py, its EFI system partition given EFI/redhat in the
guest, and the Ignition config), sets the boot entry with the real efibootmgr, uploads
its logs and asks for the reboot with the real `shutdown -r +1`. The VM
reboots (qemu runs with -no-reboot: it exits, and the kernel said so on
the serial console), then the test reads on this side:

  - the installed disk: the image's partitions byte for byte (but the boot
    partition, which coreos-installer writes to), the Ignition config the
    service served, the kernel arguments in the BLS entry;
  - OVMF's variable store: the boot entry cradle created with efibootmgr
    ("Red Hat Enterprise Linux", partition 2 of the installed disk by its
    GPT partition GUID, \\EFI\\redhat\\shimx64.efi), first in BootOrder.

One VM, one test. Skips where qemu cannot run, and against a real service
(the VM's network is the test's namespace). The serial console, the
journal (saved before the reboot), the service's record and the uploaded
logs are kept in meson-logs/vm-install/.
"""
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import time
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, os.path.join(SRC, "tests", "installer"))
sys.path.insert(0, HERE)
from refclient import HubClient, RefService, real_service  # noqa: E402
import lab as L  # noqa: E402
import vmlab  # noqa: E402

CRADLE = os.environ.get("CRADLE_BINARY")
BOOT_TIMEOUT = int(os.environ.get("CRADLE_VM_BOOT_TIMEOUT", "900"))
VERSION = "quay.io/example/cradle:vm-install"
TARGET_SERIAL = "CRINSTALL"
SHIM = b"cradle test shim: not a real loader"


def log(msg):
    sys.stderr.write("vm-install: %s\n" % msg)
    sys.stderr.flush()


def scenario():
    """The cluster (its machine network the lab's), its infra-env and the
    bootstrap master already there; the VM registers as H1. The installer
    image is the agent's own: the in-process installer."""
    return {
        "settings": {"min_disk_size_gb": 1, "next_instruction_seconds": 2, "min_cpu_cores": 1,
                     "min_ram_mib": 256, "installer_image": VERSION},
        "clusters": [{"id": L.CL, "control_plane_count": 3, "machine_networks": ["203.0.113.0/24"]}],
        "infra_envs": [{"id": L.IE, "cluster_id": L.CL}],
        "hosts": [{"id": L.H2, "infra_env_id": L.IE, "inventory": L.inventory_for(2), "role": "master",
                   "bootstrap": True}],
    }


# --- OVMF's variable store -------------------------------------------------------

EFI_GLOBAL_VARIABLE = uuid.UUID("8be4df61-93ca-11d2-aa0d-00e098032b8c")
VAR_ADDED = 0x3F


def align4(n):
    return (n + 3) & ~3


def efi_variables(path):
    """{name: data} of the valid variables of EFI_GLOBAL_VARIABLE in an
    OVMF VARS file (a firmware volume holding an authenticated variable
    store: edk2 MdeModulePkg/Include/Guid/VariableFormat.h)."""
    with open(path, "rb") as f:
        fv = f.read()
    header_length = struct.unpack_from("<H", fv, 0x30)[0]
    store = header_length
    size = struct.unpack_from("<I", fv, store + 16)[0]
    pos, end = store + 28, store + size
    out = {}
    while pos + 60 <= end:
        start_id, state, attrs = struct.unpack_from("<HBxI", fv, pos)
        if start_id != 0x55AA:
            break
        name_size, data_size = struct.unpack_from("<II", fv, pos + 36)
        guid = uuid.UUID(bytes_le=fv[pos + 44:pos + 60])
        name = fv[pos + 60:pos + 60 + name_size].decode("utf-16-le").rstrip("\0")
        # x64: the name and the data unpadded (ALIGNMENT 1), the next
        # header on 4 bytes (HEADER_ALIGNMENT)
        data_at = pos + 60 + name_size
        data = fv[data_at:data_at + data_size]
        if state == VAR_ADDED and guid == EFI_GLOBAL_VARIABLE:
            out[name] = data
        pos = align4(data_at + data_size)
    return out


def load_option(data):
    """An EFI_LOAD_OPTION: (description, [(type, subtype, node bytes)])."""
    path_length = struct.unpack_from("<H", data, 4)[0]
    desc_end = 6
    while data[desc_end:desc_end + 2] != b"\0\0":
        desc_end += 2
    description = data[6:desc_end].decode("utf-16-le")
    pos, end, nodes = desc_end + 2, desc_end + 2 + path_length, []
    while pos + 4 <= end:
        t, st, length = struct.unpack_from("<BBH", data, pos)
        nodes.append((t, st, data[pos + 4:pos + length]))
        if t == 0x7F and st == 0xFF:
            break
        pos += length
    return description, nodes


def sha256_range(path, start, size):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(start)
        while size > 0:
            chunk = f.read(min(size, L.MiB))
            if not chunk:
                break
            h.update(chunk)
            size -= len(chunk)
    return h.hexdigest()


def gpt_partition_guid(path, n):
    return uuid.UUID(bytes_le=L.gpt_entries(path)[n][16:32])


class Install(unittest.TestCase):
    vm = svc = lab = None

    @classmethod
    def setUpClass(cls):
        reason = vmlab.why_not_runnable()
        if reason is None and real_service():
            reason = "the VM's only network is the test's namespace; the service of CRADLE_TEST_SERVICE_URL is outside it"
        if reason is None and not shutil.which("mkfs.vfat"):
            reason = "mkfs.vfat is not installed (dosfstools): the image needs its EFI system partition"
        if reason:
            raise unittest.SkipTest(reason)
        cls.tmp = tempfile.mkdtemp(prefix="cradle-vm-install-")
        cls.keep = vmlab.keep_dir("vm-install")
        try:
            cls.osimage = L.build_image(os.path.join(cls.tmp, "rhcos-test.img"), os.path.join(cls.tmp, "build"))
            cls.img = vmlab.image(CRADLE)
            cls.lab = vmlab.Lab(cls.tmp)
            cls.svc = RefService(scenario=scenario(), token=L.TOKEN, workdir=cls.tmp, bind=cls.lab.address)
            cls.svc.start()
        except BaseException:
            cls._cleanup()
            raise

    @classmethod
    def _cleanup(cls):
        if cls.vm is not None:
            cls.vm.stop_and_keep(cls.keep)
        if cls.svc is not None:
            cls.svc.stop()
            for p in (cls.svc.stderr_path, cls.svc.record_path):
                if p and os.path.exists(p):
                    shutil.copy(p, cls.keep)
        if cls.lab is not None:
            cls.lab.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        cls._cleanup()

    def install_step(self):
        for r in self.svc.requests(operation="v2GetNextSteps"):
            for step in (r.get("response") or {}).get("instructions") or []:
                if step["step_type"] == "install":
                    return json.loads(step["args"][0])
        self.fail("no install step was sent")

    def test_whole_host(self):
        env = ("CRADLE_URL=%s\nCRADLE_INFRA_ENV_ID=%s\nCRADLE_AGENT_VERSION=%s\nPULL_SECRET_TOKEN=%s\n"
               "CRADLE_AGENT_ARGS=--interval=2\n" % (self.svc.url, L.IE, VERSION, L.TOKEN))
        prof = {"cpus": 2, "memory_mib": 2048, "firmware": "uefi",
                "disks": [{"bus": "virtio", "size": "2G", "serial": TARGET_SERIAL},
                          {"bus": "virtio", "serial": "cradle-osimage", "image": self.osimage}],
                "nics": [{"model": "virtio", "mac": "52:54:00:c7:ad:51", "address": "203.0.113.51/24"}],
                "smbios": {"1": {"manufacturer": "Cradle Labs, Inc.", "product": "Install VM", "uuid": L.H1}}}
        type(self).vm = vm = vmlab.VM(self.lab, self.img, prof, name="install0",
                                      workdir=os.path.join(self.tmp, "install0"),
                                      files={"/etc/cradle/agent.env": (0o600, env)})
        vm.start()
        log("booting under %s, UEFI" % vm.accel)
        vm.wait_guest(BOOT_TIMEOUT)
        # RHCOS's EFI system partition holds EFI/redhat/shimx64.efi, which
        # the installer looks for; this machine's kernel has no vfat, the
        # guest's has: the image's ESP is given it there, on the image's disk
        vm.run("udevadm settle && esp=$(readlink -f /dev/disk/by-id/virtio-cradle-osimage-part2) && "
               "mount -t vfat $esp /mnt && mkdir -p /mnt/EFI/redhat && printf '%s' > /mnt/EFI/redhat/shimx64.efi "
               "&& umount /mnt" % SHIM.decode().strip(), timeout=120, check=True)

        # registration and discovery: the inventory reply makes the host known to the service
        host = vmlab.wait_for(lambda: [h for h in self.svc.hosts() if h["id"] == L.H1 and h.get("inventory")],
                        BOOT_TIMEOUT, "the VM's registration and inventory", step=2)[0]
        log("registered and inventoried %.1f s after power-on" % (time.monotonic() - vm.started))
        inv = json.loads(host["inventory"]) if isinstance(host["inventory"], str) else host["inventory"]
        disk = [d for d in inv["disks"] if d.get("serial") == TARGET_SERIAL]
        self.assertEqual(len(disk), 1, inv["disks"])
        disk = disk[0]
        self.assertEqual(inv["system_vendor"]["product_name"], "Install VM")
        self.assertEqual(inv["boot"]["current_boot_mode"], "uefi")

        # every step the service issued during discovery was answered, and taken
        def replies():
            return {r["body"]["step_type"]: r for r in self.svc.requests(operation="v2PostStepReply")}

        def all_answered():
            issued = set(self.svc.host(L.H1)["_issued_steps"].values())
            return issued if len(issued) >= 3 and issued <= set(replies()) else None
        issued = vmlab.wait_for(all_answered, 600, "replies to every discovery step", step=2)
        log("discovery steps issued and answered: %s" % sorted(issued))
        for step, r in replies().items():
            self.assertEqual(r["status"], 204, (step, r))

        # the image's disk is bootable (a GPT with an ESP): the service would
        # have the installer zero its first sector as any other bootable
        # disk (disks_to_format), and the stand-in would then copy an image
        # without its protective MBR. The user keeps it, as for a disk with
        # data on it
        image_disk = [d for d in inv["disks"] if d.get("serial") == "cradle-osimage"][0]
        status, body = HubClient(self.svc).update_host(
            L.IE, L.H1, disks_skip_formatting=[{"disk_id": image_disk["id"], "skip_formatting": True}])
        self.assertEqual(status, 201, body)
        image = vmlab.disk_path(vm.workdir, 1)
        image_before = sha256_range(image, 0, os.path.getsize(image))

        # told to install, on the disk by its id, as the service would name it
        self.svc.set_host(L.H1, role="master", installation_disk_id=disk["id"], installation_disk_path=disk["path"],
                          ignition=L.host_ignition("node-1"))
        self.svc.install(L.CL, force=True, bootstrap_host_id=L.H2)
        def rebooting():
            stages = L.progress_of(self.svc, L.H1)
            failed = [s for s in stages if s[0] == "Failed"]
            if failed:
                raise AssertionError("the installation failed: %s" % (failed,))
            return ("Rebooting", "") in stages
        vmlab.wait_for(rebooting, 900, "the Rebooting stage", step=2)
        log("Rebooting reported %.1f s after power-on" % (time.monotonic() - vm.started))
        vm.save_journal(os.path.join(self.keep, "journal.txt"))
        scheduled = vm.run("cat /run/systemd/shutdown/scheduled", check=True)[1]
        self.assertIn("MODE=reboot", scheduled)
        # shutdown -r +1: the reboot a minute later; qemu (-no-reboot) exits
        vmlab.wait_for(lambda: not vm.alive(), 300, "the VM's reboot", step=2)
        log("rebooted %.1f s after power-on (qemu exit %s)" % (time.monotonic() - vm.started, vm.proc.returncode))
        self.assertEqual(vm.proc.returncode, 0)
        self.assertIn("reboot: Restarting system", vm.serial())

        stages = L.progress_of(self.svc, L.H1)
        self.assertEqual(stages[:3], [("Starting installation", "master"), ("Installing", "master"),
                                      ("Writing image to disk", "")], stages)
        self.assertEqual(stages[-1], ("Rebooting", ""))
        self.assertNotIn("Failed", [s for s, _ in stages])

        # the disk, on this side
        target = vmlab.disk_path(vm.workdir, 0)
        self.assertEqual(L.gpt_names(target), {1: "BIOS-BOOT", 2: "EFI-SYSTEM", 3: "boot", 4: "root"})
        table = L.gpt_partitions(target)
        self.assertEqual(table, L.gpt_partitions(self.osimage))
        self.assertEqual(sha256_range(image, 0, os.path.getsize(image)), image_before,
                         "the image's disk was left alone (disks_skip_formatting)")
        req = self.install_step()
        self.assertEqual(req.get("disks_to_format") or [], [])
        for n in (1, 2, 4):
            start, size = table[n]
            self.assertEqual(sha256_range(target, start, size), sha256_range(image, start, size),
                             "partition %d is the image's" % n)
        config = L.ext4_cat(target, table[3][0], "/ignition/config.ign")
        self.assertEqual(json.loads(config), L.host_ignition("node-1"))
        bls = L.ext4_cat(target, table[3][0], "/loader/entries/ostree-1-rhcos.conf").decode()
        options = [ln for ln in bls.splitlines() if ln.startswith("options ")]
        args = json.loads(self.install_step().get("installer_args") or "[]")
        kargs = [args[i + 1] for i in range(len(args) - 1) if args[i] == "--append-karg"]
        self.assertEqual(options, [" ".join(["options", L.BLS_OPTIONS] + kargs)])

        # the boot entry in OVMF's variable store
        shutil.copy(os.path.join(vm.workdir, "OVMF_VARS.fd"), self.keep)
        variables = efi_variables(os.path.join(vm.workdir, "OVMF_VARS.fd"))
        entries = {name: load_option(data) for name, data in variables.items()
                   if len(name) == 8 and name.startswith("Boot") and name != "BootNext"}
        rhel = [name for name, (desc, _) in entries.items() if desc == "Red Hat Enterprise Linux"]
        self.assertEqual(len(rhel), 1, ({n: d for n, (d, _) in entries.items()}, sorted(variables)))
        _, nodes = entries[rhel[0]]
        hd = [n for t, st, n in nodes if (t, st) == (4, 1)]
        files = [n.decode("utf-16-le").rstrip("\0") for t, st, n in nodes if (t, st) == (4, 4)]
        self.assertEqual(len(hd), 1, nodes)
        part_number, = struct.unpack_from("<I", hd[0], 0)
        self.assertEqual(part_number, 2)
        self.assertEqual(uuid.UUID(bytes_le=hd[0][20:36]), gpt_partition_guid(target, 2))
        self.assertEqual(files, ["\\EFI\\redhat\\shimx64.efi"])
        order = struct.unpack("<%dH" % (len(variables["BootOrder"]) // 2), variables["BootOrder"])
        self.assertEqual("Boot%04X" % order[0], rhel[0])

        # the logs the installer uploaded before the reboot
        logs = [m for m in self.svc.logs() if m["host_id"] == L.H1]
        self.assertEqual(len(logs), 1, logs)
        shutil.copy(logs[0]["path"], self.keep)
        self.assertIn("logs_host_%s/installer.logs" % L.H1, logs[0]["tar_members"])


if __name__ == "__main__":
    vmlab.unittest_main()
