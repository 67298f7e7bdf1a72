#!/usr/bin/python3
"""download-boot-artifacts and reboot-for-reclaim against a directory tree
standing in for the host's file system (host_fs_mount_dir).

Each step runs in a private mount namespace: the stand-in's /boot is a
tmpfs mounted there (the step remounts it read-write, as on a host), and
for the reboot the stand-in root borrows this machine's /usr read-only so
that a shell works after the chroot. The reboot command is replaced at the
process boundary: a stand-in `systemctl` first on PATH (inside the
stand-in root) records its argv instead of rebooting anything. Nothing is
written outside the test's temporary directory.
"""
import hashlib
import json
import os
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import step  # noqa: E402

stepslib.require_root()
lab = stepslib.Lab()
NS = lab.ns("reclaim")
T = lab.tmp
KERNEL = os.urandom(300 * 1024)
INITRD = os.urandom(700 * 1024)
for name, data in (("vmlinuz", KERNEL), ("initrd", INITRD)):
    with open(os.path.join(T, name), "wb") as f:
        f.write(data)
PORT, RECORD = lab.httpd(NS, {"/vmlinuz": {"body_file": os.path.join(T, "vmlinuz"), "content_type": "application/octet-stream"},
                              "/initrd": {"body_file": os.path.join(T, "initrd"), "content_type": "application/octet-stream"}})
URL = "http://127.0.0.1:%d" % PORT
ROOTFS = "https://example.invalid/rootfs.img?arch=x86_64"
ENTRY = ("title Assisted Installer Discovery\nversion 999\n"
         "options random.trust_cpu=on ignition.firstboot ignition.platform.id=metal "
         "'coreos.live.rootfs_url=%s'\nlinux /boot/discovery/vmlinuz\ninitrd /boot/discovery/initrd" % ROOTFS)


def host_tree(name, boot_size="16m"):
    root = os.path.join(T, name)
    os.makedirs(os.path.join(root, "boot"))
    os.makedirs(os.path.join(root, "after"))
    return root


def in_host_tree(root, boot_size="16m", keep_after=True, extra_path=None):
    """A private mount namespace with a tmpfs on ROOT/boot; the step's
    result tree is copied to ROOT/after for the checks."""
    script = ('mount -t tmpfs -o size=%s tmpfs "$0/boot" && mkdir -p "$0/boot/loader/entries" && '
              '"$@"; rc=$?; cp -a "$0/boot/." "$0/after/"; exit $rc' % boot_size)
    wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, root]
    if extra_path:
        wrap = ["env", "PATH=%s:%s" % (extra_path, os.environ.get("PATH", "/usr/bin:/bin"))] + wrap
    return wrap


def download(root, **kw):
    req = {"kernel_url": URL + "/vmlinuz", "initrd_url": URL + "/initrd", "rootfs_url": ROOTFS,
           "host_fs_mount_dir": root}
    return step("download-boot-artifacts", json.dumps(req), netns=NS, wrap=in_host_tree(root, **kw))


def requests():
    return [json.loads(x)["path"] for x in open(RECORD)] if os.path.exists(RECORD) else []


def test_download_boot_artifacts():
    root = host_tree("host1")
    before = len(requests())
    r = download(root)
    assert r == {"exit_code": 0, "output": "Successfully downloaded boot artifacts", "error": "",
                 "end_runner": False}, r
    after = os.path.join(root, "after")
    assert open(os.path.join(after, "discovery", "vmlinuz"), "rb").read() == KERNEL
    assert open(os.path.join(after, "discovery", "initrd"), "rb").read() == INITRD
    assert open(os.path.join(after, "loader", "entries", "00-assisted-discovery.conf")).read() == ENTRY
    assert sorted(requests()[before:]) == ["/initrd", "/vmlinuz"], requests()


def test_artifacts_already_there_are_not_downloaded():
    root = host_tree("host2")
    os.makedirs(os.path.join(root, "boot", "discovery"))
    before = len(requests())
    # present on the host's /boot (not the tmpfs): run without the tmpfs
    for p in ("discovery/vmlinuz", "discovery/initrd", "loader/entries/00-assisted-discovery.conf"):
        os.makedirs(os.path.dirname(os.path.join(root, "boot", p)), exist_ok=True)
        open(os.path.join(root, "boot", p), "w").close()
    req = {"kernel_url": URL + "/vmlinuz", "initrd_url": URL + "/initrd", "rootfs_url": ROOTFS,
           "host_fs_mount_dir": root}
    r = step("download-boot-artifacts", json.dumps(req), netns=NS)
    assert r["exit_code"] == 0 and r["output"] == "Successfully downloaded boot artifacts", r
    assert len(requests()) == before


def test_boot_not_remountable_and_no_room():
    root = host_tree("host3")
    req = {"kernel_url": URL + "/vmlinuz", "initrd_url": URL + "/initrd", "rootfs_url": ROOTFS,
           "host_fs_mount_dir": root}
    # ROOT/boot is a plain directory here: the remount fails (5 tries)
    r = step("download-boot-artifacts", json.dumps(req), netns=NS)
    assert r["exit_code"] == -1 and r["error"] == "failed creating folders: failed to create folders: invalid argument", r

    # a /boot too small: rpm-ostree cleanup (a stand-in) is asked, then the step fails
    stand_in = os.path.join(T, "bin-rpm-ostree")
    os.makedirs(stand_in)
    with open(os.path.join(stand_in, "rpm-ostree"), "w") as f:
        f.write('#!/bin/sh\necho "$@" > "%s/rpm-ostree.argv"\n' % T)
    os.chmod(os.path.join(stand_in, "rpm-ostree"), 0o755)
    root = host_tree("host4")
    r = download(root, boot_size="512k", extra_path=stand_in)
    assert r["exit_code"] == -1 and "boot folder does not have enough space" in r["error"], r
    assert open(os.path.join(T, "rpm-ostree.argv")).read() == "cleanup --os=rhcos -r\n"
    assert not os.path.exists(os.path.join(root, "after", "discovery", "vmlinuz"))


def reboot_tree():
    """A stand-in host root with /usr borrowed from this machine (read-only
    bind in the step's mount namespace) and a recording systemctl."""
    root = os.path.join(T, "host-root")
    os.makedirs(os.path.join(root, "usr"))
    os.makedirs(os.path.join(root, "standin"))
    for d in ("bin", "sbin", "lib", "lib64"):
        if os.path.islink("/" + d):
            os.symlink(os.readlink("/" + d), os.path.join(root, d))
    with open(os.path.join(root, "standin", "systemctl"), "w") as f:
        f.write('#!/bin/sh\necho "$@" > /standin/argv\nls / > /standin/root-listing\necho "stand-in $1"\n')
    os.chmod(os.path.join(root, "standin", "systemctl"), 0o755)
    with open(os.path.join(root, "marker-of-the-host-root"), "w") as f:
        f.write("x")
    return root


def test_reboot_for_reclaim():
    if not all(os.path.islink("/" + d) for d in ("bin", "lib")):
        stepslib.skip("this machine's / is not merged-usr: cannot borrow /usr for the stand-in root")
    root = reboot_tree()
    wrap = ["env", "PATH=/standin:/usr/sbin:/usr/bin:/sbin:/bin",
            "unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind /usr "$0/usr" && mount -o remount,bind,ro "$0/usr" && exec "$@"', root]
    r = step("reboot-for-reclaim", json.dumps({"host_fs_mount_dir": root}), netns=NS, wrap=wrap)
    assert r == {"exit_code": 0, "output": "stand-in reboot\n", "error": "", "end_runner": False}, r
    assert open(os.path.join(root, "standin", "argv")).read() == "reboot\n"
    # it ran chroot()ed into the stand-in root
    assert "marker-of-the-host-root" in open(os.path.join(root, "standin", "root-listing")).read()

    r = step("reboot-for-reclaim", json.dumps({"host_fs_mount_dir": os.path.join(T, "nonexistent")}), netns=NS)
    assert r["exit_code"] == -1 and r["error"] == "no such file or directory", r
    r = step("reboot-for-reclaim", "{}", netns=NS)
    assert r["exit_code"] == -1 and r["error"] == "validation failure list:\nhost_fs_mount_dir in body is required", r


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
