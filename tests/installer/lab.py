#!/usr/bin/python3
"""Shared fixtures of the installer tests: loop devices the test creates (and
always removes), the RHCOS-like test image, the reference service in the
installer scenario, the stand-ins on PATH, running `cradle installer`, and
reading a written disk back.

Everything that touches a block device uses loop devices made here; all of
them, and every mount, swap, device-mapper table, md array and volume group a
test makes, are torn down by Lab.cleanup(), which runs at exit and on SIGTERM
as well (the Python equivalent of a shell trap).
"""
import atexit
import copy
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
sys.path.insert(0, os.path.join(SRC, "tests", "helpers"))
from proctools import stop_group  # noqa: E402
CRADLE = os.environ.get("CRADLE_BINARY")
STAND_INS = os.path.join(SRC, "tests", "installer", "stand-ins")
IGNITION_RUNTIME = "/usr/lib/dracut/modules.d/30ignition/ignition"

CL = "fb127e4c-aa1c-4cf4-898f-aadb690c4ded"
IE = "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"
H1 = "a1a1a1a1-0000-4000-8000-000000000001"
H2 = "a1a1a1a1-0000-4000-8000-000000000002"
H3 = "a1a1a1a1-0000-4000-8000-000000000003"
TOKEN = "installer-test-t0ken-secret"
CONTROLLER = "quay.io/edge-infrastructure/assisted-installer-controller:latest"
AGENT = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
KARGS = '["--append-karg","ip=enp1s0:dhcp"]'

MiB = 1 << 20
IMAGE_SIZE = 64 * MiB
# (number, name, type GUID, start MiB, size MiB or None for the rest): RHCOS's layout
PARTITIONS = [
    (1, "BIOS-BOOT", "21686148-6449-6E6F-744E-656564454649", 1, 1),
    (2, "EFI-SYSTEM", "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", 2, 8),
    (3, "boot", "0FC63DAF-8483-4772-8E79-3D69D8477DE4", 10, 16),
    (4, "root", "0FC63DAF-8483-4772-8E79-3D69D8477DE4", 26, None),
]
BLS_OPTIONS = "ignition.platform.id=metal $ignition_firstboot ostree=/ostree/boot.1/rhcos/0/0 root=LABEL=root rw"
ROOT_MARKER = "cradle test image root\n"


def skip(reason):
    print("SKIP: %s" % reason)
    sys.exit(77)


def require_basics():
    """Skips (77) when this machine cannot run the installer tests at all."""
    if not CRADLE:
        skip("CRADLE_BINARY is not set")
    if os.geteuid() != 0:
        skip("needs root (loop devices, mounts)")
    for tool in ("losetup", "sgdisk", "mkfs.ext4", "debugfs", "mount"):
        if not shutil.which(tool):
            skip("%s is not installed (tools/deps --test)" % tool)
    try:
        import refservice
        refservice.find_swagger()
    except (ImportError, FileNotFoundError) as e:
        skip("cannot run the reference service: %s" % e)


def run(argv, check=True, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("text", True)
    p = subprocess.run(argv, **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s%s" % (" ".join(argv), p.returncode, p.stdout, p.stderr))
    return p


def kernel_has(what):
    """'partitions' (GPT partition nodes of loop devices), 'dm', 'md'."""
    if what == "dm":
        with open("/proc/devices") as f:
            return "device-mapper" in f.read()
    if what == "md":
        return os.path.exists("/proc/mdstat")
    raise ValueError(what)


_partitions = None


def kernel_partitions():
    """Does this kernel make partition devices (loopNpM) of GPT disks? Tried
    on a small loop device of our own."""
    global _partitions
    if _partitions is None:
        with tempfile.NamedTemporaryFile(prefix="cradle-probe-", suffix=".img") as f:
            f.truncate(4 * MiB)
            f.flush()
            run(["sgdisk", "-n", "1:2048:0", f.name])
            dev = run(["losetup", "-fP", "--show", f.name]).stdout.strip()
            try:
                name = os.path.basename(dev)
                _partitions = os.path.exists("/sys/class/block/%s/%sp1" % (name, name))
            finally:
                subprocess.run(["losetup", "-d", dev])
    return _partitions


def wait_for(path, timeout=10):
    end = time.time() + timeout
    while not os.path.exists(path):
        if time.time() > end:
            raise AssertionError("%s did not appear" % path)
        time.sleep(0.05)


def sha256_file(path, length=None):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        left = length
        while True:
            chunk = f.read(MiB if left is None else min(MiB, left))
            if not chunk:
                break
            h.update(chunk)
            if left is not None:
                left -= len(chunk)
                if left <= 0:
                    break
    return h.hexdigest()


def build_image(path, work):
    """The RHCOS-like GPT image, built without loop devices: each filesystem
    is made in its own file (mkfs.ext4 -d fills it from a directory) and
    copied into place."""
    os.makedirs(work, exist_ok=True)
    boot = os.path.join(work, "bootfs")
    os.makedirs(os.path.join(boot, "loader", "entries"), exist_ok=True)
    os.makedirs(os.path.join(boot, "grub2"), exist_ok=True)
    with open(os.path.join(boot, "loader", "entries", "ostree-1-rhcos.conf"), "w") as f:
        f.write("title Red Hat Enterprise Linux CoreOS 416.94 (test image)\nversion 1\n"
                "options %s\nlinux /ostree/rhcos-0/vmlinuz\ninitrd /ostree/rhcos-0/initramfs.img\n" % BLS_OPTIONS)
    with open(os.path.join(boot, "grub2", "grub.cfg"), "w") as f:
        f.write("blscfg\n")
    open(os.path.join(boot, "ignition.firstboot"), "w").close()
    root = os.path.join(work, "rootfs")
    for d in ("boot", "etc", "ostree/deploy/rhcos/var/lib", "sysroot"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    with open(os.path.join(root, "etc", "cradle-test-image"), "w") as f:
        f.write(ROOT_MARKER)

    with open(path, "wb") as f:
        f.truncate(IMAGE_SIZE)
    args = ["sgdisk", "-Z"]
    for n, name, guid, start, size in PARTITIONS:
        end = "0" if size is None else "+%dM" % size
        args += ["-n", "%d:%d:%s" % (n, start * 2048, end), "-t", "%d:%s" % (n, guid), "-c", "%d:%s" % (n, name)]
    run(args + [path])
    table = gpt_partitions(path)
    for n, name, fs, src in ((2, "EFI-SYSTEM", "vfat", None), (3, "boot", "ext4", boot), (4, "root", "ext4", root)):
        start, size = table[n]
        part = os.path.join(work, "p%d.img" % n)
        with open(part, "wb") as f:
            f.truncate(size)
        if fs == "vfat":
            if shutil.which("mkfs.vfat"):
                run(["mkfs.vfat", "-n", name, part])
        else:
            run(["mkfs.ext4", "-q", "-F", "-L", name, "-d", src, part])
        with open(part, "rb") as fi, open(path, "r+b") as fo:
            fo.seek(start)
            shutil.copyfileobj(fi, fo)
        os.unlink(part)
    return path


def gpt_entries(path):
    """{number: raw entry} of the used GPT entries on path."""
    with open(path, "rb") as f:
        f.seek(512)
        hdr = f.read(92)
        if hdr[:8] != b"EFI PART":
            return {}
        entries_lba, count, esize = struct.unpack_from("<QII", hdr, 72)
        f.seek(entries_lba * 512)
        entries = {}
        for i in range(count):
            e = f.read(esize)
            if e[:16] != b"\0" * 16:
                entries[i + 1] = e
        return entries


def gpt_partitions(path):
    """{number: (offset bytes, size bytes)} from the GPT on path."""
    table = {}
    for n, e in gpt_entries(path).items():
        first, last = struct.unpack_from("<QQ", e, 32)
        table[n] = (first * 512, (last - first + 1) * 512)
    return table


def gpt_names(path):
    """{number: name} from the GPT (UTF-16 names)."""
    return {n: e[56:128].decode("utf-16-le").rstrip("\0") for n, e in gpt_entries(path).items()}


def ext4_cat(dev, offset, path):
    """A file out of the ext4 filesystem at offset on dev (debugfs: no mount)."""
    p = run(["debugfs", "-R", "cat %s" % path, "%s?offset=%d" % (dev, offset)], check=False,
            text=False)
    if p.returncode != 0:
        raise AssertionError("debugfs cat %s: %s" % (path, p.stderr))
    return p.stdout


def blkid_type(dev):
    p = run(["blkid", "-p", "-o", "value", "-s", "TYPE", dev], check=False)
    return p.stdout.strip()


class Lab(object):
    """One test's resources: a temporary directory, loop devices, mounts,
    swaps, device-mapper tables, md arrays and volume groups, and the
    processes it started (spawn()), all removed by cleanup() (also at exit
    and on SIGTERM). A test that failed while its installer was still
    running thus leaves nothing that reports to the service under the same
    host ids while the next test runs."""

    instances = []

    def __init__(self, prefix="cradle-installer-"):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.loops = []
        self.mounts = []
        self.swaps = []
        self.dm = []
        self.md = []
        self.vgs = []
        self.files = []
        self.procs = []
        self.done = False
        Lab.instances.append(self)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def loop(self, size=IMAGE_SIZE, image=None, name=None):
        f = self.path(name or "disk-%s.img" % uuid.uuid4().hex[:8])
        if image:
            shutil.copyfile(image, f)
        else:
            with open(f, "wb") as fh:
                fh.truncate(size)
        dev = run(["losetup", "-fP", "--show", f]).stdout.strip()
        self.loops.append(dev)
        return dev

    def loop_over(self, dev, offset, size):
        """A loop device over a range of dev (a partition without kernel partition support)."""
        p = run(["losetup", "-o", str(offset), "--sizelimit", str(size), "-f", "--show", dev])
        d = p.stdout.strip()
        self.loops.append(d)
        return d

    def spawn(self, argv, **kw):
        """subprocess.Popen in a session of its own: cleanup() stops it and
        everything it started (SIGTERM, then SIGKILL)."""
        p = subprocess.Popen(argv, start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def stop_processes(self, grace=5):
        # only the groups whose leader was not reaped: a reaped leader's
        # number may belong to another process by now
        for p in self.procs:
            if p.poll() is None:
                stop_group(p, grace)
        self.procs = []

    def mount(self, dev, where=None, opts=None):
        where = where or tempfile.mkdtemp(dir=self.tmp, prefix="mnt-")
        run(["mount"] + (["-o", opts] if opts else []) + [dev, where])
        self.mounts.append(where)
        return where

    def cleanup(self):
        if self.done:
            return
        self.done = True
        self.stop_processes()  # before the devices and files they use go
        for f in self.files:
            f.close()  # files and servers
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)
        for s in self.swaps:
            subprocess.run(["swapoff", s], stderr=subprocess.DEVNULL)
        for vg in self.vgs:
            subprocess.run(["vgchange", "-an", vg], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for a in self.md:
            subprocess.run(["mdadm", "--stop", a], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for d in reversed(self.dm):
            subprocess.run(["dmsetup", "remove", "--retry", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for lo in reversed(self.loops):
            subprocess.run(["losetup", "-d", lo], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.tmp, ignore_errors=True)


def _cleanup_all(*_):
    for lab in Lab.instances:
        lab.cleanup()


atexit.register(_cleanup_all)


def _on_term(signum, frame):
    _cleanup_all()
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, _on_term)


def observed_inventory():
    import refservice
    obs = os.path.join(os.path.dirname(os.path.dirname(refservice.find_swagger())), "observed")
    with open(os.path.join(obs, "07-step-replies.json")) as f:
        return json.load(f)["by_step_type"]["inventory"]["request_body_output_decoded"]


def inventory_for(n):
    inv = copy.deepcopy(observed_inventory())
    inv["hostname"] = "master-%d" % n if n < 3 else "worker-%d" % n
    inv["interfaces"][0]["mac_address"] = "52:54:00:00:00:%02x" % n
    inv["interfaces"][0]["ipv4_addresses"] = ["198.51.100.%d/24" % (10 + n)]
    return inv


def scenario():
    """The cluster installing, three hosts pre-registered (two masters, one
    of them the bootstrap, and a worker)."""
    return {
        "settings": {"min_disk_size_gb": 1},
        "clusters": [{"id": CL, "status": "installing", "control_plane_count": 3}],
        "infra_envs": [{"id": IE, "cluster_id": CL}],
        "hosts": [{"id": H1, "infra_env_id": IE, "inventory": inventory_for(1), "role": "master",
                   "status": "installing"},
                  {"id": H2, "infra_env_id": IE, "inventory": inventory_for(2), "role": "master",
                   "bootstrap": True, "status": "installing"},
                  {"id": H3, "infra_env_id": IE, "inventory": inventory_for(3), "role": "worker",
                   "status": "installing"}],
    }


class ServiceCase(unittest.TestCase):
    """One reference service and one built test image per class; per test, a
    reset service and a fresh Lab that holds the image."""

    @classmethod
    def service_scenario(cls):
        return scenario()

    @classmethod
    def setUpClass(cls):
        from refclient import RefService
        cls.svc = RefService(scenario=cls.service_scenario(), token=TOKEN).start()
        cls.image_lab = Lab(prefix="cradle-image-")
        cls.image = build_image(cls.image_lab.path("rhcos-test.img"), cls.image_lab.path("build"))

    @classmethod
    def tearDownClass(cls):
        cls.svc.stop()
        cls.svc.__exit__(None, None, None)
        cls.image_lab.cleanup()

    def setUp(self):
        self.svc.reset(self.service_scenario())
        self.lab = Lab()
        self.lab.image = self.image
        self.addCleanup(self.lab.cleanup)


def host_ignition(hostname):
    """A self-contained Ignition config (no merge source: it can be applied
    offline by the real runtime)."""
    return {
        "ignition": {"version": "3.2.0"},
        "storage": {"files": [
            {"path": "/etc/hostname", "mode": 420, "overwrite": True,
             "contents": {"source": "data:,%s%%0A" % hostname}},
            {"path": "/etc/cradle-installed", "mode": 384,
             "contents": {"source": "data:,written%20by%20cradle%20installer%0A"}}]},
    }


def expected_percents(size=IMAGE_SIZE, chunk=MiB):
    """The "N%" progress_info values the installer reports for the stand-in's
    output: every value at least 5 above the last reported, and 100."""
    out, last = [], 0
    for done in range(chunk, size + 1, chunk):
        p = done * 100 // size
        if p >= last + 5 or (p == 100 and last != 100):
            out.append("%d%%" % p)
            last = p
    return out


class Installer(object):
    """`cradle installer` through a link named "installer", with the test's
    paths (never /opt, /var/log or /mnt of this machine) and short delays."""

    def __init__(self, lab, svc):
        self.lab = lab
        self.svc = svc
        self.link = lab.path("installer")
        if not os.path.exists(self.link):
            os.symlink(CRADLE, self.link)
        self.standin_log = lab.path("standin.jsonl")
        for d in ("opt-install-dir", "var-log", "mnt", "journal"):
            os.makedirs(lab.path(d), exist_ok=True)

    def argv(self, device, role="master", host=H1, extra=(), cradle_extra=None, installer_args=KARGS):
        a = [self.link, "--role", role, "--infra-env-id", IE, "--cluster-id", CL, "--host-id", host,
             "--boot-device", device, "--url", self.svc.url, "--controller-image", CONTROLLER,
             "--agent-image", AGENT, "--mco-image", "quay.io/test/mco@sha256:0", "--openshift-version",
             "4.13.18", "--insecure"]
        if installer_args is not None:
            a += ["--installer-args", installer_args]
        a += list(extra)
        a += cradle_extra if cradle_extra is not None else self.cradle_flags()
        return a

    def cradle_flags(self):
        lab = self.lab
        return ["--host-exec=direct", "--install-dir", lab.path("opt-install-dir"),
                "--log-file", lab.path("var-log", "assisted-installer.log"), "--logs-dir", lab.path("var-log"),
                "--journal-dir", lab.path("journal"), "--mount-dir", lab.path("mnt"),
                "--registry-dir", lab.path("no-registry"), "--efi-dir", lab.path("no-efi"),
                "--retry-delay=0.01", "--retry-max-delay=0.05", "--poll-interval=0.1",
                "--write-retry-delay=0.05", "--command-retry-delay=0.05", "--mc-fetch-timeout=1"]

    def env(self, **extra):
        e = dict(os.environ)
        e["PATH"] = STAND_INS + ":" + e.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        e["PULL_SECRET_TOKEN"] = TOKEN
        e["CRADLE_LOG_TARGET"] = "stderr"
        e["STANDIN_LOG"] = self.standin_log
        e["STANDIN_IMAGE"] = self.lab.image
        e["TZ"] = "UTC"
        e.update({k: str(v) for k, v in extra.items()})
        # the stand-ins must win: never a real shutdown or systemctl
        for tool in ("shutdown", "systemctl", "coreos-installer"):
            found = shutil.which(tool, path=e["PATH"])
            assert found and found.startswith(STAND_INS), "%s would not be the stand-in: %s" % (tool, found)
        return e

    def start(self, device, env=None, wrapper=(), **kw):
        self.out = open(self.lab.path("installer-%s.log" % uuid.uuid4().hex[:6]), "w+")
        self.lab.files.append(self.out)
        return self.lab.spawn(list(wrapper) + self.argv(device, **kw), env=env or self.env(), stdout=self.out,
                              stderr=subprocess.STDOUT)

    def run(self, device, env=None, timeout=600, **kw):
        p = self.start(device, env=env, **kw)
        try:
            rc = p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise AssertionError("the installer did not finish in %ss:\n%s" % (timeout, self.output()))
        return rc

    def output(self):
        self.out.flush()
        self.out.seek(0)
        return self.out.read()

    def standin_records(self, name):
        if not os.path.exists(self.standin_log):
            return []
        with open(self.standin_log) as f:
            recs = [json.loads(line) for line in f if line.strip()]
        return [r for r in recs if r["argv"][0] == name]

    def standin_runs(self, name=None):
        if not os.path.exists(self.standin_log):
            return []
        with open(self.standin_log) as f:
            runs = [json.loads(line)["argv"] for line in f if line.strip()]
        return [r for r in runs if name is None or r[0] == name]


def progress_of(svc, host=H1):
    """The progress bodies the service received for host, in order: (stage, info)."""
    out = []
    for r in svc.requests(operation="v2UpdateHostInstallProgress"):
        if r["path"].endswith("/hosts/%s/progress" % host) and r.get("status") == 200:
            b = r["body"]
            out.append((b["current_stage"], b.get("progress_info", "")))
    return out


def apply_with_ignition(config_bytes, root):
    """Runs the real Ignition runtime's fetch-offline and files stages on the
    config against root (TESTING.md). Returns (ok, log)."""
    if not os.access(IGNITION_RUNTIME, os.X_OK) or not shutil.which("setfiles"):
        return None, "the Ignition runtime (ignition) or setfiles (policycoreutils) is not installed"
    os.makedirs(os.path.join(root, "etc", "selinux", "targeted", "contexts", "files"), exist_ok=True)
    with open(os.path.join(root, "etc", "selinux", "config"), "w") as f:
        f.write("SELINUX=disabled\nSELINUXTYPE=targeted\n")
    open(os.path.join(root, "etc", "selinux", "targeted", "contexts", "files", "file_contexts"), "w").close()
    work = root + ".ign"
    os.makedirs(work, exist_ok=True)
    cfg = os.path.join(work, "config.ign")
    with open(cfg, "wb") as f:
        f.write(config_bytes)
    env = dict(os.environ, IGNITION_CONFIG_FILE=cfg)
    log = ""
    for stage in ("fetch-offline", "files"):
        p = subprocess.run([IGNITION_RUNTIME, "-platform", "file", "-stage", stage, "-root", root, "-config-cache",
                            os.path.join(work, "cache.json"), "-state-file", os.path.join(work, "state"),
                            "-neednet", os.path.join(work, "neednet"), "-log-to-stdout"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        log += p.stdout
        if p.returncode != 0:
            return False, log
    return "Ignition finished successfully" in log, log


class Podman(object):
    """podman as ../shared/TESTING.md says it works here: runc, a test-owned
    containers.conf (ulimits from this machine's hard limits, an optional
    container environment) and a vfs storage under the lab, the cgroup
    hierarchies mounted when the mount namespace lacks them. Needs the
    private mount namespace of tests/helpers/in-netns.sh or in-pidns.sh;
    skips (unittest) otherwise. cleanup() removes the images it built and
    undoes its mounts."""

    def __init__(self, lab, container_env=()):
        self.lab = lab
        self.mounts = []
        self.images = []
        if not shutil.which("podman") or not shutil.which("runc"):
            raise unittest.SkipTest("podman and runc are not installed (tools/deps --test)")
        if not os.environ.get("CRADLE_TEST_NETNS") and not os.environ.get("CRADLE_TEST_PIDNS"):
            raise unittest.SkipTest("the podman tests change their mount namespace: run them through "
                                    "tests/helpers/in-netns.sh or in-pidns.sh")
        if not os.path.isdir("/sys/fs/cgroup/cpu") and not self._mount_cgroups():
            raise unittest.SkipTest("cannot mount the cgroup hierarchies podman needs")
        nofile = subprocess.run(["sh", "-c", "ulimit -Hn"], stdout=subprocess.PIPE, text=True).stdout.strip()
        self.conf = lab.path("containers.conf")
        self.storage = lab.path("storage.conf")
        with open(self.conf, "w") as f:
            f.write("[containers]\ndefault_ulimits = [\"nofile=%s:%s\", \"nproc=4096:4096\"]\nenv = %s\n"
                    "[engine]\nruntime = \"runc\"\n" % (nofile, nofile, json.dumps(list(container_env))))
        with open(self.storage, "w") as f:
            f.write("[storage]\ndriver = \"vfs\"\ngraphroot = \"%s\"\nrunroot = \"%s\"\n"
                    % (lab.path("containers", "graph"), lab.path("containers", "run")))
        self.env = dict(os.environ, CONTAINERS_CONF=self.conf, CONTAINERS_STORAGE_CONF=self.storage)

    def _mount_cgroups(self):
        try:
            run(["mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/sys/fs/cgroup"])
            self.mounts.append("/sys/fs/cgroup")
            with open("/proc/cgroups") as f:
                ctrls = [ln.split()[0] for ln in f if not ln.startswith("#") and ln.split()[1] != "0"]
            for c in ctrls + ["name=systemd"]:
                d = "/sys/fs/cgroup/" + c.replace("name=", "")
                os.makedirs(d, exist_ok=True)
                run(["mount", "-t", "cgroup", "-o", ("none," + c) if c.startswith("name=") else c, "cgroup", d])
            return True
        except AssertionError:
            return False

    def overlay(self, target, name):
        """A writable overlay over target, private to the test."""
        up, work = self.lab.path("ov", name, "up"), self.lab.path("ov", name, "work")
        os.makedirs(up)
        os.makedirs(work)
        run(["mount", "-t", "overlay", "overlay", "-o", "lowerdir=%s,upperdir=%s,workdir=%s" % (target, up, work),
             target])
        self.mounts.append(target)

    @staticmethod
    def add_binary(root, binary, dest):
        """binary at dest in the image's root, and the libraries ldd lists
        (none for a static binary)."""
        for d in ("usr/bin", "lib64", "lib/x86_64-linux-gnu", "tmp", "etc", "dev", "proc", "sys", "run"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        os.makedirs(os.path.dirname(os.path.join(root, dest.lstrip("/"))), exist_ok=True)
        shutil.copy(binary, os.path.join(root, dest.lstrip("/")))
        ldd = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
        for line in ldd.split("\n"):
            parts = line.split()
            path = parts[2] if "=>" in parts and len(parts) > 2 else (parts[0] if parts and parts[0].startswith("/")
                                                                     else None)
            if not path or not path.startswith("/"):
                continue
            lib = os.path.join(root, "lib64" if path.startswith("/lib64") else "lib/x86_64-linux-gnu",
                               os.path.basename(path))
            shutil.copy(os.path.realpath(path), lib)

    def build(self, tag, context, entrypoint):
        """podman build of FROM scratch with context/rootfs; removed at cleanup."""
        with open(os.path.join(context, "Containerfile"), "w") as f:
            f.write("FROM scratch\nCOPY rootfs/ /\nENTRYPOINT [\"%s\"]\n" % entrypoint)
        run(["podman", "build", "-q", "-t", tag, context], env=self.env)
        self.images.append(tag)

    def cleanup(self):
        for tag in self.images:
            subprocess.run(["podman", "rmi", "-f", tag], env=self.env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)
        self.mounts = []
