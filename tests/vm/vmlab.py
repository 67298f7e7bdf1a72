#!/usr/bin/python3
"""Boot cradle's discovery live image as virtual machines (tests/vm/README.md).

    lab = Lab(workdir)                      # a bridge in the test's network namespace
    img = image(cradle_binary)              # tests/vm/build-image.sh, cached
    vm = VM(lab, img, profile, name="host0", files={"/etc/cradle/agent.env": (0o600, text)})
    vm.start(); vm.wait_guest(timeout=600)
    rc, out, err = vm.run("systemctl show cradle-agent", timeout=30)
    vm.stop(); lab.close()

The lab runs inside a network namespace the test made (tests/helpers/
in-netns.sh sets CRADLE_TEST_NETNS): a bridge with the lab's address
(203.0.113.1/24) and one tap device per NIC of every VM; the test's servers
listen on the bridge's address. Nothing is routed out of the namespace.

A hardware profile is a small declarative dict (or a JSON file):

    {"cpus": 2, "memory_mib": 2048, "firmware": "bios" | "uefi",
     "disks": [{"bus": "virtio" | "nvme" | "sata" | "scsi" | "usb", "size": "8G",
                "serial": "...", "wwn": "0x5000c500a0b1c2d3", "model": "...",
                "rotation": 1 | 7200, "image": "/path/to/raw"}],
     "nics": [{"model": "virtio" | "e1000e", "mac": "52:54:00:..", "address": "203.0.113.21/24"}],
     "smbios": {"1": {"manufacturer": "...", "product": "...", "serial": "...", "uuid": "..."},
                "2": {...}, "3": {...}, "0": {...}, "4": {...}, "17": {...}},
     "bmc": true | {"address": "203.0.113.50"}, "tpm": "2.0" | "1.2"}

A property the bus cannot emulate (a WWN on virtio-blk) is refused, so a
profile never asks for what the VM does not show. The disks are sparse files
in the VM's work directory (disk_path()), removed with it; a disk with an
"image" starts as a copy of that raw file (its size unless "size" says
more). Each NIC with an address gets
a systemd-networkd file matched on its MAC in the per-VM archive. A TPM is
swtpm's emulator (a process per VM, its state in the work directory) on
qemu's tpm-tis. "bmc": true is qemu's own simulated BMC (no LAN
configuration); a BMC with an address is OpenIPMI's ipmi_sim (a process
per VM, reached by qemu's ipmi-bmc-extern on a loopback port) whose LAN
channel 1 reports that address.

The VM's command channel is qemu's guest agent on a virtio-serial port
(guest-exec): no network, no login. The serial console goes to
WORKDIR/serial.log; save_journal() copies the guest's journal out. Every
wait has a deadline; a VM is stopped (SIGTERM, then SIGKILL) in stop().

Acceleration: KVM when /dev/kvm opens and a probe guest boots under it
within a bounded time (a nested hypervisor may hang guests right after the
firmware), otherwise TCG (software emulation). CRADLE_VM_ACCEL=tcg|kvm
forces one.

Standard library only.
"""
import base64
import io
import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "helpers"))
from proctools import stop_group  # noqa: E402

BUILD_IMAGE = os.path.join(HERE, "build-image.sh")
QEMU = "qemu-system-x86_64"
SWTPM = "swtpm"
IPMI_SIM = "ipmi_sim"
OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"
LAB_ADDRESS = "203.0.113.1"
LAB_PREFIX = 24
KVM_PROBE_SECONDS = 30


class VMError(Exception):
    pass


class ProfileError(VMError):
    pass


def why_not_runnable(profile=None):
    """The reason VMs (of profile, when given) cannot run here, or None."""
    if profile is not None and load_profile(profile).get("tpm") and shutil.which(SWTPM) is None:
        return "the profile has a TPM and swtpm is not installed (package swtpm; tools/deps --test)"
    if profile is not None and bmc_address(load_profile(profile)) and shutil.which(IPMI_SIM) is None:
        return "the profile's BMC has an address and ipmi_sim is not installed (package openipmi; tools/deps --test)"
    if os.geteuid() != 0:
        return "VMs need root (debootstrap, tap devices)"
    for prog, pkg in ((QEMU, "qemu-system-x86"), ("debootstrap", "debootstrap"), ("cpio", "cpio")):
        if shutil.which(prog) is None:
            return "%s is not installed (package %s; tools/deps --test)" % (prog, pkg)
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing: no tap devices for the VMs' NICs"
    if not os.environ.get("CRADLE_TEST_NETNS"):
        return "the VMs' network must be a namespace the test made: run through tests/helpers/in-netns.sh"
    if not os.environ.get("CRADLE_BINARY"):
        return "CRADLE_BINARY is not set"
    if os.environ.get("CRADLE_STATIC") != "1":
        return "the image carries the static cradle: a -Dstatic=true build runs this suite"
    return None


def deadline_loop(timeout, step=0.5):
    """Yields until timeout seconds have passed (then stops)."""
    end = time.monotonic() + timeout
    while True:
        yield
        if time.monotonic() >= end:
            return
        time.sleep(step)


def wait_for(pred, timeout, what, step=1.0):
    """pred()'s first true value, tried every step seconds; AssertionError
    (a test's failure) after timeout."""
    for _ in deadline_loop(timeout, step):
        v = pred()
        if v:
            return v
    raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))


# --- the image -----------------------------------------------------------------

class Image(object):
    def __init__(self, directory):
        self.directory = directory
        self.initrds = []
        self.fields = {}
        with open(os.path.join(directory, "manifest")) as f:
            for line in f:
                key, _, value = line.strip().partition(" ")
                if key == "initrd":
                    self.initrds.append(value)
                else:
                    self.fields[key] = value
        self.kernel = self.fields["kernel"]


def image(binary, timeout=1800, log=None):
    """The image for this cradle binary: CRADLE_VM_IMAGE's (with-image.sh
    built it), or built now, or taken from the cache. Building needs
    Debian's archive: not from inside a test's network namespace."""
    if os.environ.get("CRADLE_VM_IMAGE"):
        return Image(os.environ["CRADLE_VM_IMAGE"])
    r = subprocess.run(["bash", BUILD_IMAGE, binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    err = r.stderr.decode(errors="replace")
    if log is not None and err:
        log.write(err)
    if r.returncode != 0:
        raise VMError("build-image.sh failed (%d):\n%s" % (r.returncode, err))
    return Image(r.stdout.decode().strip().splitlines()[-1])


# --- acceleration ----------------------------------------------------------------

_accel = None


def accel(img, workdir):
    """'kvm' or 'tcg', decided once per process by a bounded probe boot."""
    global _accel
    forced = os.environ.get("CRADLE_VM_ACCEL")
    if forced in ("kvm", "tcg"):
        return forced
    if _accel is None:
        _accel = _probe_kvm(img, workdir)
    return _accel


def _probe_kvm(img, workdir):
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError:
        return "tcg"
    # a kernel whose initramfs is one /init that prints a line and powers off
    busybox = shutil.which("busybox")
    if busybox is None or "static" not in subprocess.run(["file", "-L", busybox], stdout=subprocess.PIPE,
                                                          text=True).stdout:
        return "tcg"
    probe = tempfile.mkdtemp(prefix="kvm-probe-", dir=workdir)
    try:
        init = "#!/bin/busybox sh\n/bin/busybox echo CRADLE-KVM-PROBE-OK\n/bin/busybox poweroff -f\n"
        cpio = os.path.join(probe, "probe.cpio")
        with open(cpio, "wb") as f:
            f.write(newc([("bin", 0o040755, b""), ("bin/busybox", 0o100755, open(busybox, "rb").read()),
                          ("init", 0o100755, init.encode())]))
        serial = os.path.join(probe, "serial.log")
        p = subprocess.Popen([QEMU, "-machine", "q35,accel=kvm", "-cpu", "host", "-m", "256", "-nodefaults",
                              "-display", "none", "-no-reboot", "-kernel", img.kernel, "-initrd", cpio,
                              "-append", "console=ttyS0 panic=-1", "-serial", "file:" + serial],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            p.wait(KVM_PROBE_SECONDS)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        with open(serial, "rb") as f:
            return "kvm" if b"CRADLE-KVM-PROBE-OK" in f.read() else "tcg"
    finally:
        shutil.rmtree(probe, ignore_errors=True)


# --- the per-VM archive ----------------------------------------------------------

def newc(entries):
    """A cpio archive (newc, as the kernel unpacks) of (path, mode, data)."""
    out = io.BytesIO()
    ino = 1
    for path, mode, data in list(entries) + [("TRAILER!!!", 0, b"")]:
        name = path.encode() + b"\0"
        hdr = "070701" + "".join("%08X" % v for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name), 0))
        out.write(hdr.encode() + name)
        out.write(b"\0" * ((4 - (110 + len(name)) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))
        ino += 1
    return out.getvalue()


def config_archive(files):
    """files: {absolute path: (mode, text or bytes)}; parent directories
    are added (0755) before their files."""
    entries, dirs = [], set()
    for path in sorted(files):
        mode, data = files[path]
        rel = path.lstrip("/")
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d not in dirs:
                dirs.add(d)
                entries.append((d, stat.S_IFDIR | 0o755, b""))
        entries.append((rel, stat.S_IFREG | mode, data.encode() if isinstance(data, str) else data))
    return newc(entries)


# --- profiles --------------------------------------------------------------------

DISK_PROPS = {
    # bus: the profile's properties it can emulate
    "virtio": {"serial"},
    "nvme": {"serial"},
    "sata": {"serial", "model", "wwn", "rotation"},
    "scsi": {"serial", "model", "wwn", "rotation", "vendor"},
    "usb": {"serial"},
}
NIC_MODELS = {"virtio": "virtio-net-pci", "e1000e": "e1000e"}
SMBIOS_TYPES = {"0", "1", "2", "3", "4", "17"}
DEFAULT_PROFILE = {"cpus": 2, "memory_mib": 2048, "firmware": "bios",
                   "disks": [{"bus": "virtio", "size": "8G", "serial": "cradle-disk0"}],
                   "nics": [{"model": "virtio", "mac": "52:54:00:c7:ad:01", "address": "203.0.113.21/24"}]}


def load_profile(p):
    if isinstance(p, str):
        with open(p) as f:
            p = json.load(f)
    prof = dict(DEFAULT_PROFILE)
    prof.update(p or {})
    known = {"cpus", "memory_mib", "firmware", "disks", "nics", "smbios", "bmc", "tpm"}
    if set(prof) - known:
        raise ProfileError("unknown profile keys: %s" % sorted(set(prof) - known))
    if prof["firmware"] not in ("bios", "uefi"):
        raise ProfileError("firmware is bios or uefi, not %r" % prof["firmware"])
    for d in prof["disks"]:
        bus = d.get("bus")
        if bus not in DISK_PROPS:
            raise ProfileError("disk bus %r: one of %s" % (bus, sorted(DISK_PROPS)))
        extra = set(d) - DISK_PROPS[bus] - {"bus", "size", "image"}
        if extra:
            raise ProfileError("a %s disk cannot emulate %s" % (bus, sorted(extra)))
        parse_size(d.get("size", "8G"))
        if "image" in d and not os.path.isfile(d["image"]):
            raise ProfileError("a disk's image %r is not a file" % d["image"])
    for n in prof["nics"]:
        if n.get("model") not in NIC_MODELS:
            raise ProfileError("NIC model %r: one of %s" % (n.get("model"), sorted(NIC_MODELS)))
        if not re.match(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$", n.get("mac", "")):
            raise ProfileError("NIC MAC %r" % n.get("mac"))
    bmc = prof.get("bmc")
    if not (bmc in (None, True, False) or (isinstance(bmc, dict) and set(bmc) == {"address"}
                                           and re.match(r"^\d+\.\d+\.\d+\.\d+$", str(bmc["address"])))):
        raise ProfileError("bmc is true or {\"address\": \"a.b.c.d\"}, not %r" % bmc)
    if prof.get("tpm") not in (None, "1.2", "2.0"):
        raise ProfileError("tpm is \"1.2\" or \"2.0\", not %r" % prof["tpm"])
    if set(prof.get("smbios", {})) - SMBIOS_TYPES:
        raise ProfileError("SMBIOS types: %s" % sorted(SMBIOS_TYPES))
    return prof


def parse_size(s):
    m = re.match(r"^(\d+)([KMGT]?)$", str(s))
    if not m:
        raise ProfileError("size %r (a number with K, M, G or T)" % s)
    return int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")


def qemu_opt(value):
    """A value in qemu's option syntax (a comma doubled)."""
    return str(value).replace(",", ",,")


def hardware_args(prof, workdir, taps):
    """qemu's arguments for the profile's devices."""
    args = []
    nvme = scsi = usb = sata = 0
    for i, d in enumerate(prof["disks"]):
        path = disk_path(workdir, i)
        if "image" in d:
            # the disk starts as a copy of the image (sparse where it is),
            # at least as large as the profile says
            subprocess.run(["cp", "--sparse=always", d["image"], path], check=True)
        with open(path, "r+b" if "image" in d else "wb") as f:
            # an image's disk is the image's size unless the profile says more
            size = parse_size(d.get("size", "0" if "image" in d else "8G"))
            if "image" not in d or os.fstat(f.fileno()).st_size < size:
                f.truncate(size)
        drive = "disk%d" % i
        args += ["-drive", "file=%s,if=none,id=%s,format=raw,cache=unsafe" % (qemu_opt(path), drive)]
        props = []
        if "serial" in d:
            props.append("serial=" + qemu_opt(d["serial"]))
        if d["bus"] == "virtio":
            args += ["-device", ",".join(["virtio-blk-pci", "drive=" + drive] + props)]
        elif d["bus"] == "nvme":
            args += ["-device", ",".join(["nvme", "id=nvme%d" % nvme] + props),
                     "-device", "nvme-ns,drive=%s,bus=nvme%d,nsid=1" % (drive, nvme)]
            nvme += 1
        elif d["bus"] == "sata":
            # q35's own ich9-ahci: ide.0 .. ide.5
            props += ["model=" + qemu_opt(d["model"])] if "model" in d else []
            props += ["wwn=%d" % int(str(d["wwn"]), 0)] if "wwn" in d else []
            props += ["rotation_rate=%d" % d["rotation"]] if "rotation" in d else []
            args += ["-device", ",".join(["ide-hd", "drive=" + drive, "bus=ide.%d" % sata] + props)]
            sata += 1
        elif d["bus"] == "scsi":
            if scsi == 0:
                args += ["-device", "virtio-scsi-pci,id=scsi0"]
            props += ["product=" + qemu_opt(d["model"])] if "model" in d else []
            props += ["vendor=" + qemu_opt(d["vendor"])] if "vendor" in d else []
            props += ["wwn=%d" % int(str(d["wwn"]), 0)] if "wwn" in d else []
            props += ["rotation_rate=%d" % d["rotation"]] if "rotation" in d else []
            args += ["-device", ",".join(["scsi-hd", "drive=" + drive, "bus=scsi0.0"] + props)]
            scsi += 1
        elif d["bus"] == "usb":
            if usb == 0:
                args += ["-device", "qemu-xhci,id=xhci0"]
            args += ["-device", ",".join(["usb-storage", "drive=" + drive, "bus=xhci0.0"] + props)]
            usb += 1
    for n, tap in zip(prof["nics"], taps):
        args += ["-netdev", "tap,id=%s,ifname=%s,script=no,downscript=no" % (tap, tap),
                 "-device", "%s,netdev=%s,mac=%s" % (NIC_MODELS[n["model"]], tap, n["mac"])]
    for t, fields in sorted(prof.get("smbios", {}).items()):
        args += ["-smbios", ",".join(["type=" + t] + ["%s=%s" % (k, qemu_opt(v)) for k, v in fields.items()])]
    if bmc_address(prof):
        args += ["-chardev", "socket,id=ipmichr,host=127.0.0.1,port=%d,reconnect=1" % ipmi_sim_port(workdir),
                 "-device", "ipmi-bmc-extern,chardev=ipmichr,id=bmc0", "-device", "isa-ipmi-kcs,bmc=bmc0"]
    elif prof.get("bmc"):
        args += ["-device", "ipmi-bmc-sim,id=bmc0", "-device", "isa-ipmi-kcs,bmc=bmc0"]
    if prof.get("tpm"):
        args += ["-chardev", "socket,id=tpmchr,path=" + qemu_opt(swtpm_socket(workdir)),
                 "-tpmdev", "emulator,id=tpm0,chardev=tpmchr", "-device", "tpm-tis,tpmdev=tpm0"]
    return args


def disk_path(workdir, i):
    """The file behind the profile's disk i (removed when the VM stops)."""
    return os.path.join(workdir, "disk%d.img" % i)


def bmc_address(prof):
    bmc = prof.get("bmc")
    return bmc.get("address") if isinstance(bmc, dict) else None


def ipmi_sim_port(workdir):
    """ipmi_sim's port for qemu (the next one is its LAN port), on the
    namespace's loopback: one per work directory, so that VMs side by side
    do not share a BMC."""
    return 20000 + 2 * (int.from_bytes(os.path.normpath(workdir).encode()[-4:].rjust(4, b"\0"), "big") % 10000)


def ipmi_sim_files(prof, workdir):
    """ipmi_sim's LAN configuration, its MC and the lan_config_program that
    reports the profile's address as channel 1's (ipmi_sim takes the
    address, mask and gateway from that program's "get" answers)."""
    lancontrol = os.path.join(workdir, "ipmi-lancontrol")
    port = ipmi_sim_port(workdir)
    answers = {"ip_addr": bmc_address(prof), "ip_addr_src": "static", "subnet_mask": "255.255.255.0",
               "default_gw_ip_addr": LAB_ADDRESS}
    script = "#!/bin/sh\n# DEVICE get PARM...: PARM:VALUE lines (OpenIPMI's ipmi_sim_lancontrol)\n" \
             "[ \"$2\" = get ] || exit 0\nshift 2\nfor p; do\n\tcase $p in\n"
    for k, v in answers.items():
        script += "\t%s) echo %s:%s ;;\n" % (k, k, v)
    script += "\t*mac_addr) echo $p:00:00:00:00:00:00 ;;\n\t*) echo $p:0.0.0.0 ;;\n\tesac\ndone\n"
    conf = ("name \"cradle\"\nset_working_mc 0x20\n  startlan 1\n    addr 127.0.0.1 %d\n"
            "    priv_limit admin\n    allowed_auths_admin none md5\n"
            "    lan_config_program \"%s eth0\"\n  endlan\n"
            "  serial 15 127.0.0.1 %d codec VM\n  startnow false\n  user 1 true \"\" \"\" user 10 none\n"
            % (port + 1, lancontrol, port))
    emu = "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nmc_enable 0x20\n"
    return {lancontrol: (0o755, script), os.path.join(workdir, "ipmi-lan.conf"): (0o644, conf),
            os.path.join(workdir, "ipmi-bmc.emu"): (0o644, emu)}


def swtpm_socket(workdir):
    return os.path.join(workdir, "swtpm.sock")


def swtpm_args(prof, workdir):
    """swtpm's command line for the profile's TPM: its state in workdir,
    its control channel the socket qemu's emulator backend connects to;
    it ends when qemu closes the channel (--terminate)."""
    state = os.path.join(workdir, "tpm")
    return ([SWTPM, "socket", "--tpmstate", "dir=" + state, "--ctrl",
             "type=unixio,path=" + swtpm_socket(workdir), "--terminate"]
            + (["--tpm2"] if prof["tpm"] == "2.0" else []))


def network_files(prof):
    files = {}
    for i, n in enumerate(prof["nics"]):
        if n.get("address"):
            files["/etc/systemd/network/10-cradle-nic%d.network" % i] = (0o644, (
                "[Match]\nMACAddress=%s\n\n[Network]\nAddress=%s\n" % (n["mac"], n["address"])))
    return files


# --- the lab's network -------------------------------------------------------------

def ip(*args):
    r = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=30)
    if r.returncode != 0:
        raise VMError("ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


class Lab(object):
    """A bridge, with LAB_ADDRESS, in the test's network namespace (the
    current one: the test runs inside it)."""

    def __init__(self, workdir):
        if not os.environ.get("CRADLE_TEST_NETNS"):
            raise VMError("refusing to make a bridge outside a test's network namespace")
        self.workdir = workdir
        self.bridge = "crbr0"
        self.address = LAB_ADDRESS
        self.taps = []
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", "%s/%d" % (LAB_ADDRESS, LAB_PREFIX), "dev", self.bridge)
        ip("link", "set", self.bridge, "up")

    def tap(self):
        name = "crtap%d" % len(self.taps)
        ip("tuntap", "add", name, "mode", "tap")
        ip("link", "set", name, "master", self.bridge, "up")
        self.taps.append(name)
        return name

    def close(self):
        for t in self.taps + [self.bridge]:
            subprocess.run(["ip", "link", "del", t], stderr=subprocess.DEVNULL, timeout=30)
        self.taps = []


# --- the guest agent ---------------------------------------------------------------

class GuestAgent(object):
    """qemu-guest-agent's JSON protocol over the VM's virtio-serial port."""

    def __init__(self, path):
        self.path = path
        self.sock = None
        self.buf = b""
        self.sync_id = int(time.time()) & 0xffffff

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None
        self.buf = b""

    def _read_until(self, pred, deadline):
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("guest agent: no answer")
            self.sock.settimeout(left)
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("guest agent: channel closed")
            self.buf += data

    def sync(self, timeout):
        """Connects and synchronises (guest-sync-delimited); False on no answer."""
        self.close()
        deadline = time.monotonic() + timeout
        try:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(self.path)
            self.sync_id += 1
            # 0xff resets the guest's parser; the answer follows a 0xff
            self.sock.sendall(b"\xff" + json.dumps({"execute": "guest-sync-delimited",
                                                    "arguments": {"id": self.sync_id}}).encode() + b"\n")
            while True:
                self._read_until(lambda: b"\xff" in self.buf, deadline)
                self.buf = self.buf.rsplit(b"\xff", 1)[1]
                self._read_until(lambda: b"\n" in self.buf, deadline)
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    if json.loads(line).get("return") == self.sync_id:
                        return True
                except ValueError:
                    pass
        except (OSError, ConnectionError):
            self.close()
            return False

    def call(self, command, timeout=30, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        deadline = time.monotonic() + timeout
        while True:
            self._read_until(lambda: b"\n" in self.buf, deadline)
            line, self.buf = self.buf.split(b"\n", 1)
            line = line.strip(b"\xff").strip()
            if not line:
                continue
            r = json.loads(line)
            if "error" in r:
                raise VMError("guest agent %s: %s" % (command, r["error"].get("desc")))
            return r.get("return")


# --- a VM --------------------------------------------------------------------------

class VM(object):
    def __init__(self, lab, img, profile=None, name="host0", workdir=None, files=None, append=""):
        self.lab = lab
        self.img = img
        self.profile = load_profile(profile)
        self.name = name
        self.workdir = workdir or tempfile.mkdtemp(prefix="vm-%s-" % name, dir=lab.workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.files = network_files(self.profile)
        self.files["/etc/hostname"] = (0o644, name + "\n")
        self.files.update(files or {})
        self.append = append
        self.proc = None
        self.serial_path = os.path.join(self.workdir, "serial.log")
        self.qga = GuestAgent(os.path.join(self.workdir, "qga.sock"))
        self.accel = None
        self.started = None
        self.swtpm = None
        self.ipmi_sim = None

    def start(self):
        initrd = os.path.join(self.workdir, "initrd")
        with open(initrd, "wb") as out:
            for part in self.img.initrds:
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
            out.write(config_archive(self.files))
        self.accel = accel(self.img, self.workdir)
        taps = [self.lab.tap() for _ in self.profile["nics"]]
        p = self.profile
        args = [QEMU, "-name", self.name, "-machine", "q35,accel=" + self.accel,
                "-cpu", "host" if self.accel == "kvm" else "max",
                "-smp", str(p["cpus"]), "-m", str(p["memory_mib"]), "-nodefaults", "-display", "none",
                "-no-reboot", "-kernel", self.img.kernel, "-initrd", initrd,
                "-append", ("console=ttyS0,115200 panic=-1 " + self.append).strip(),
                "-serial", "file:" + self.serial_path,
                "-device", "virtio-serial-pci",
                "-chardev", "socket,id=qga,path=%s,server=on,wait=off" % self.qga.path,
                "-device", "virtserialport,chardev=qga,name=org.qemu.guest_agent.0"]
        uuid = p.get("smbios", {}).get("1", {}).get("uuid")
        if uuid:
            args += ["-uuid", uuid]
        if p["firmware"] == "uefi":
            vars_copy = os.path.join(self.workdir, "OVMF_VARS.fd")
            shutil.copyfile(OVMF_VARS, vars_copy)
            args += ["-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + OVMF_CODE,
                     "-drive", "if=pflash,format=raw,unit=1,file=" + vars_copy]
        args += hardware_args(p, self.workdir, taps)
        with open(os.path.join(self.workdir, "qemu.cmdline"), "w") as f:
            f.write(" ".join(shlex.quote(a) for a in args) + "\n")
        self.qemu_log = open(os.path.join(self.workdir, "qemu.log"), "w")
        if p.get("tpm"):
            self._start_swtpm()
        if bmc_address(p):
            self._start_ipmi_sim()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.qemu_log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def _start_swtpm(self, timeout=30):
        os.makedirs(os.path.join(self.workdir, "tpm"), exist_ok=True)
        self.swtpm = subprocess.Popen(swtpm_args(self.profile, self.workdir), stdin=subprocess.DEVNULL,
                                      stdout=self.qemu_log, stderr=subprocess.STDOUT, start_new_session=True)
        for _ in deadline_loop(timeout, step=0.1):
            if os.path.exists(swtpm_socket(self.workdir)):
                return
            if self.swtpm.poll() is not None:
                break
        raise VMError("swtpm did not make its socket within %ds (exit %s); see qemu.log" % (
            timeout, self.swtpm.poll()))

    def _start_ipmi_sim(self):
        for path, (mode, text) in ipmi_sim_files(self.profile, self.workdir).items():
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, mode)
        state = os.path.join(self.workdir, "ipmi-state")
        os.makedirs(state, exist_ok=True)
        # qemu's chardev reconnects until ipmi_sim listens
        self.ipmi_sim = subprocess.Popen([IPMI_SIM, "-n", "-c", os.path.join(self.workdir, "ipmi-lan.conf"),
                                          "-f", os.path.join(self.workdir, "ipmi-bmc.emu"), "-s", state],
                                         stdin=subprocess.DEVNULL, stdout=self.qemu_log, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def serial(self):
        try:
            with open(self.serial_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def wait_guest(self, timeout):
        """Waits for the guest agent to answer (the guest is up: udev found
        its port, systemd started it). Raises VMError after timeout."""
        for _ in deadline_loop(timeout, step=1):
            if not self.alive():
                raise VMError("qemu exited (%s) before the guest answered; serial console:\n%s" % (
                    self.proc.returncode, self.serial()[-3000:]))
            if os.path.exists(self.qga.path) and self.qga.sync(timeout=5):
                return time.monotonic() - self.started
        raise VMError("the guest did not answer within %ds; serial console:\n%s" % (timeout, self.serial()[-3000:]))

    def run(self, command, timeout=60, check=False):
        """Runs command with /bin/sh -c in the guest; (exit code, stdout, stderr)."""
        if not self.alive():
            raise VMError("the VM is not running")
        if self.qga.sock is None and not self.qga.sync(timeout=min(timeout, 30)):
            raise VMError("the guest agent does not answer")
        try:
            pid = self.qga.call("guest-exec", path="/bin/sh", arg=["-c", command],
                                **{"capture-output": True})["pid"]
            for _ in deadline_loop(timeout, step=0.2):
                st = self.qga.call("guest-exec-status", pid=pid)
                if st.get("exited"):
                    out = base64.b64decode(st.get("out-data", "")).decode(errors="replace")
                    err = base64.b64decode(st.get("err-data", "")).decode(errors="replace")
                    rc = st.get("exitcode", 128 + st.get("signal", 0))
                    if check and rc != 0:
                        raise VMError("%r in the guest: exit %s: %s" % (command, rc, err or out))
                    return rc, out, err
        except (OSError, ConnectionError) as e:
            self.qga.close()
            raise VMError("guest agent: %s" % e)
        raise VMError("%r did not end in the guest within %ds" % (command, timeout))

    def show(self, unit, *props):
        """systemctl show's properties of unit, as a dict."""
        _, out, _ = self.run("systemctl show %s -p %s" % (shlex.quote(unit), ",".join(props)), check=True)
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def save_journal(self, path=None, timeout=120):
        path = path or os.path.join(self.workdir, "journal.txt")
        try:
            _, out, _ = self.run("journalctl -b -o short-monotonic --no-pager", timeout=timeout)
        except VMError as e:
            out = "(journal unavailable: %s)\n" % e
        with open(path, "w") as f:
            f.write(out)
        return path

    def stop_and_keep(self, keep):
        """stop(), with the journal (while the guest runs), the serial
        console and qemu's command line and output copied to keep/."""
        if self.alive():
            self.save_journal(os.path.join(keep, "journal.txt"))
        self.stop()
        for name in ("serial.log", "qemu.cmdline", "qemu.log"):
            p = os.path.join(self.workdir, name)
            if os.path.exists(p):
                shutil.copy(p, keep)

    def stop(self, timeout=30):
        self.qga.close()
        if self.proc is not None:
            stop_group(self.proc, grace=timeout)
        for helper in (self.swtpm, self.ipmi_sim):
            if helper is not None:
                stop_group(helper, grace=timeout)
        self.swtpm = self.ipmi_sim = None
        if self.proc is None:
            return
        self.qemu_log.close()
        for name in os.listdir(self.workdir):
            if name.startswith("disk") or name == "initrd":
                os.unlink(os.path.join(self.workdir, name))


def keep_dir(name):
    """CRADLE_BUILD_ROOT/meson-logs/NAME, emptied: where a test keeps its
    VMs' serial consoles and journals for the person reading the log."""
    root = os.environ.get("CRADLE_BUILD_ROOT") or tempfile.mkdtemp(prefix="cradle-vm-logs-")
    path = os.path.join(root, "meson-logs", name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class BootedTestCase(object):
    """A mixin for a unittest.TestCase class whose tests share one VM:
    setUpClass boots PROFILE as VM_NAME (skipping with the reason where VMs
    cannot run), waits for the guest, settles udev and calls the class's
    booted(); tearDownClass keeps the VM's logs in meson-logs/KEEP."""
    PROFILE = None
    VM_NAME = "host0"
    KEEP = "vm"
    BOOT_TIMEOUT = int(os.environ.get("CRADLE_VM_BOOT_TIMEOUT", "900"))
    vm = None
    lab = None

    @classmethod
    def setUpClass(cls):
        import unittest
        reason = why_not_runnable(cls.PROFILE)
        if reason:
            raise unittest.SkipTest(reason)
        cls.tmp = tempfile.mkdtemp(prefix="cradle-%s-" % cls.KEEP)
        cls.keep = keep_dir(cls.KEEP)
        try:
            cls.lab = Lab(cls.tmp)
            cls.vm = VM(cls.lab, image(os.environ["CRADLE_BINARY"]), cls.PROFILE, name=cls.VM_NAME,
                        workdir=os.path.join(cls.tmp, cls.VM_NAME))
            cls.vm.start()
            sys.stderr.write("%s: booting under %s, %s\n" % (cls.KEEP, cls.vm.accel,
                                                              cls.vm.profile["firmware"].upper()))
            up = cls.vm.wait_guest(cls.BOOT_TIMEOUT)
            sys.stderr.write("%s: guest agent answers %.1f s after power-on\n" % (cls.KEEP, up))
            # the tests read what udev and the drivers made of the devices
            cls.vm.run("udevadm settle --timeout=120", timeout=180)
            cls.booted()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def booted(cls):
        pass

    @classmethod
    def tearDownClass(cls):
        if cls.vm is not None:
            cls.vm.stop_and_keep(cls.keep)
        if cls.lab is not None:
            cls.lab.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)


def unittest_main():
    """unittest.main for the suite's programs: exit 77 (meson's skip) when
    every test skipped, with the reasons in the log above."""
    import unittest
    r = unittest.main(exit=False, verbosity=2).result
    if r.wasSuccessful() and r.testsRun and len(r.skipped) == r.testsRun:
        sys.exit(77)
    sys.exit(0 if r.wasSuccessful() and r.testsRun else 1)


def command_line(argv):
    """vmlab.py run [--profile FILE] [--keep DIR] [--timeout S] -- COMMAND:
    boots one VM of the image CRADLE_VM_IMAGE (or of CRADLE_BINARY, built
    now), runs COMMAND in the guest with /bin/sh -c, prints its output,
    keeps the VM's logs in DIR and stops it; exits with COMMAND's status.
    For a person looking at a VM, inside a namespace:

        CRADLE_STATIC=1 CRADLE_BINARY=build-static/cradle tests/vm/with-image.sh \\
            tests/helpers/in-netns.sh python3 tests/vm/vmlab.py run \\
            --profile tests/vm/profiles/every-bus.json -- lsblk -J -O
    """
    import argparse
    ap = argparse.ArgumentParser(prog="vmlab.py")
    sub = ap.add_subparsers(dest="verb", required=True)
    run = sub.add_parser("run", help="boot a VM, run a command in it, stop it")
    run.add_argument("--profile", help="a hardware profile (JSON); the default has one disk and one NIC")
    run.add_argument("--keep", default=".", help="where the serial console and the journal go")
    run.add_argument("--timeout", type=int, default=900, help="seconds for the boot, and for the command")
    run.add_argument("command", nargs="+")
    args = ap.parse_args(argv)
    reason = why_not_runnable()
    if reason:
        sys.stderr.write("vmlab.py: %s\n" % reason)
        return 77
    tmp = tempfile.mkdtemp(prefix="cradle-vmlab-")
    lab = Lab(tmp)
    vm = None
    try:
        vm = VM(lab, image(os.environ["CRADLE_BINARY"]), args.profile, workdir=os.path.join(tmp, "vm"))
        vm.start()
        sys.stderr.write("vmlab.py: booting under %s; serial console in %s\n" % (vm.accel, vm.serial_path))
        sys.stderr.write("vmlab.py: guest up after %.1f s\n" % vm.wait_guest(args.timeout))
        rc, out, err = vm.run(" ".join(shlex.quote(a) for a in args.command), timeout=args.timeout)
        sys.stdout.write(out)
        sys.stderr.write(err)
        return rc
    finally:
        if vm is not None:
            os.makedirs(args.keep, exist_ok=True)
            vm.stop_and_keep(args.keep)
        lab.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(command_line(sys.argv[1:]))
