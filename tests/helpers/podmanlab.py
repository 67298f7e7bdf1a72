"""podman for tests on this machine kind (../shared/TESTING.md).

PodmanLab(workdir) gives a test its own podman: runc, a containers.conf of
the test's (nofile derived from "ulimit -Hn", optional environment for every
container), and a storage of its own under workdir (vfs; its own runroot and
tmp_dir), so the test's images, containers and the container names that
upstream command lines fix ("next-step-runner", "assisted-installer") never
meet another test's. Inside the network namespace tests/helpers/in-netns.sh
made, whose fresh /sys hides them, it mounts the cgroup hierarchies again.
overlay() lays a private writable layer over a host directory, so a test can
run an upstream command line that names host paths (/usr/local/bin,
/etc/pki, /run/media) exactly as it is. Every mount lives in the test's
private mount namespace; cleanup() removes the containers and images and
undoes the mounts.
"""
import os
import shutil
import socket
import subprocess
import threading


def is_static(path):
    """path is an ELF executable with no program interpreter: what a
    FROM scratch image can run."""
    if not path or not os.access(path, os.X_OK):
        return False
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return False
    out = subprocess.run(["readelf", "-lW", path], stdout=subprocess.PIPE, text=True).stdout
    return "program interpreter" not in out


class Unavailable(Exception):
    """podman cannot run here; the message says why (a test skips with it)."""


class PodmanLab(object):
    def __init__(self, workdir, container_env=()):
        self.workdir = workdir
        self.mounts = []
        self.overlays = []
        self.sinks = []
        if not shutil.which("podman") or not shutil.which("runc"):
            raise Unavailable("podman and runc are not installed (tools/deps --test)")
        if not os.environ.get("CRADLE_TEST_NETNS"):
            raise Unavailable("podman tests change their mount namespace: run them through in-netns.sh")
        if not os.path.isdir("/sys/fs/cgroup/cpu") and not self._mount_cgroups():
            raise Unavailable("cannot mount the cgroup hierarchies podman needs")
        nofile = subprocess.run(["sh", "-c", "ulimit -Hn"], stdout=subprocess.PIPE, text=True).stdout.strip()
        self.conf = self.path("containers.conf")
        self.storage = self.path("storage.conf")
        env = "env = [%s]\n" % ", ".join('"%s"' % e for e in container_env) if container_env else ""
        with open(self.conf, "w") as f:
            f.write("[containers]\ndefault_ulimits = [\"nofile=%s:%s\", \"nproc=4096:4096\"]\n%s"
                    "[engine]\nruntime = \"runc\"\ntmp_dir = \"%s\"\n"
                    % (nofile, nofile, env, self.path("containers", "tmp")))
        with open(self.storage, "w") as f:
            f.write("[storage]\ndriver = \"vfs\"\ngraphroot = \"%s\"\nrunroot = \"%s\"\n"
                    % (self.path("containers", "graph"), self.path("containers", "run")))
        self.env = dict(os.environ, CONTAINERS_CONF=self.conf, CONTAINERS_STORAGE_CONF=self.storage)

    def path(self, *names):
        return os.path.join(self.workdir, *names)

    def _mount_cgroups(self):
        try:
            self._mount(["-t", "tmpfs", "-o", "mode=755", "tmpfs", "/sys/fs/cgroup"])
            with open("/proc/cgroups") as f:
                ctrls = [ln.split()[0] for ln in f if not ln.startswith("#") and ln.split()[1] != "0"]
            for c in ctrls + ["name=systemd"]:
                d = "/sys/fs/cgroup/" + c.replace("name=", "")
                os.makedirs(d, exist_ok=True)
                self._mount(["-t", "cgroup", "-o", ("none," + c) if c.startswith("name=") else c, "cgroup", d])
            return True
        except (subprocess.CalledProcessError, OSError):
            return False

    def _mount(self, args):
        subprocess.run(["mount"] + args, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.mounts.append(args[-1])

    def overlay(self, target):
        """A writable layer of the test's own over target; a missing target
        is made in a layer over its parent. Layer the outer directory first:
        a later layer over a parent hides the earlier ones inside it."""
        if any(target == o or target.startswith(o + "/") for o in self.overlays):
            os.makedirs(target, exist_ok=True)
            return
        if not os.path.isdir(target):
            self.overlay(os.path.dirname(target))
            os.makedirs(target)
            return
        self.overlays.append(target)
        name = target.strip("/").replace("/", "-") or "root"
        up, work = self.path("ov", name, "up"), self.path("ov", name, "work")
        os.makedirs(up)
        os.makedirs(work)
        self._mount(["-t", "overlay", "overlay", "-o", "lowerdir=%s,upperdir=%s,workdir=%s" % (target, up, work),
                     target])

    def journal_sink(self, path="/run/systemd/journal/socket"):
        """A datagram socket at path that reads and drops what it gets (the
        journald socket the upstream command lines bind into containers)."""
        self.overlay(os.path.dirname(path))
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        self.sinks.append(sock)

        def drain():
            while True:
                try:
                    sock.recv(1 << 20)
                except OSError:
                    return
        threading.Thread(target=drain, daemon=True).start()

    def podman(self, *args, check=True, timeout=600):
        p = subprocess.run(["podman"] + list(args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("podman %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
        return p

    def cleanup(self):
        for args in (["rm", "--all", "--force", "--time", "0"], ["rmi", "--all", "--force"]):
            subprocess.run(["podman"] + args, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for s in self.sinks:
            s.close()
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)
        self.mounts = []
