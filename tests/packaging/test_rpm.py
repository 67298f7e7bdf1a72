#!/usr/bin/python3
"""packaging/rpm/cradle.spec with Debian's rpmbuild, through build-rpm.sh,
from the -Dstatic=true build under test (skips with the reason otherwise).

The package holds exactly what "meson install" installs (the executable,
its program-name links, the unit and its preset, the example environment
file, the man pages, gzipped by rpm's brp-compress where it works) and
requires nothing but rpmlib's own format features: the executable is static.

Environment: CRADLE_BINARY, CRADLE_BUILD_ROOT, CRADLE_SOURCE_ROOT.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("CRADLE_BUILD_ROOT", "")
CRADLE = os.environ.get("CRADLE_BINARY", "")


def skip(reason):
    print("SKIP: %s" % reason)
    sys.exit(77)


def run(argv, **kw):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (" ".join(argv), p.returncode, p.stdout, p.stderr))
    return p.stdout


def run_bytes(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise AssertionError("%s: exit %d\n%s" % (" ".join(argv), p.returncode, p.stderr.decode()))
    return p.stdout


def cpio_member(data, name):
    """One file of a cpio archive in the "newc" format rpm2cpio writes."""
    i = 0
    while data[i:i + 6] == b"070701":
        fields = [int(data[i + 6 + 8 * k:i + 14 + 8 * k], 16) for k in range(13)]
        size, namesize = fields[6], fields[11]
        n = data[i + 110:i + 110 + namesize - 1].decode()
        start = (i + 110 + namesize + 3) & ~3
        if n == name:
            return data[start:start + size]
        i = (start + size + 3) & ~3
    raise AssertionError("%s is not in the package's payload" % name)


def static_build():
    opts = json.loads(run(["meson", "introspect", "--buildoptions", BUILD]))
    return {o["name"]: o["value"] for o in opts}


if not BUILD or not shutil.which("meson"):
    skip("CRADLE_BUILD_ROOT or meson missing")
if not shutil.which("rpmbuild"):
    skip("rpmbuild is not installed (Debian's rpm; tools/deps --test)")
OPTS = static_build()
if not OPTS["static"]:
    skip("not a -Dstatic=true build: the package ships the static executable")


def prefixed(d):
    return d if d.startswith("/") else os.path.join(OPTS["prefix"], d)


class Rpm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cradle-rpm-")
        out = run([os.path.join(SRC, "packaging", "rpm", "build-rpm.sh"), BUILD, os.path.join(cls.tmp, "out")])
        cls.rpm = out.strip().split("\n")[-1]
        # what meson installs, for comparison
        cls.root = os.path.join(cls.tmp, "root")
        run(["meson", "install", "-C", BUILD, "--destdir", cls.root, "--no-rebuild", "--strip", "--quiet"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def query(self, *args):
        return run(["rpm", "-qp"] + list(args) + [self.rpm])

    def test_name_version(self):
        version = json.loads(run(["meson", "introspect", "--projectinfo", BUILD]))["version"]
        self.assertTrue(os.path.basename(self.rpm).startswith("cradle-%s-1." % version), self.rpm)
        self.assertIn("cradle = %s-1" % version, self.query("--provides").split("\n"))
        self.assertIn("License     : Apache-2.0", self.query("-i"))

    def test_files_are_what_meson_installs(self):
        installed = set()
        for d, dirs, files in os.walk(self.root):
            for n in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
                installed.add("/" + os.path.relpath(os.path.join(d, n), self.root))
        datadir = prefixed(OPTS["datadir"])
        packaged = {f[:-3] if f.endswith(".1.gz") else f for f in self.query("-l").split("\n") if f}
        self.assertEqual(packaged, installed | {datadir + "/cradle"})
        # and that is everything that ships
        bindir, mandir = prefixed(OPTS["bindir"]), prefixed(OPTS["mandir"])
        unitdir = OPTS["systemdsystemunitdir"] or OPTS["prefix"] + "/lib/systemd/system"
        pages = sorted(f for f in os.listdir(os.path.join(BUILD, "packaging", "man")) if f.endswith(".1"))
        self.assertIn("cradle-agent.1", pages)
        for f in [bindir + "/cradle", unitdir + "/cradle-agent.service",
                  OPTS["prefix"] + "/lib/systemd/system-preset/80-cradle.preset",
                  datadir + "/cradle/agent.env.example"] + [mandir + "/man1/" + p for p in pages]:
            self.assertIn(f, packaged)

    def test_modes_and_links(self):
        bindir = prefixed(OPTS["bindir"])
        rows = self.query("--qf", "[%{FILEMODES:perms} %{FILENAMES} %{FILELINKTOS}\\n]").split("\n")
        entries = {r.split()[1]: (r.split()[0], r.split()[2] if len(r.split()) > 2 else "") for r in rows if r}
        self.assertEqual(entries[bindir + "/cradle"][0], "-rwxr-xr-x")
        for path, (perms, target) in entries.items():
            if perms.startswith("l"):
                self.assertEqual(os.path.dirname(path), bindir, path)
                self.assertIn(target, ("cradle", bindir + "/cradle"), path)
            elif not perms.startswith("d") and path != bindir + "/cradle":
                self.assertEqual(perms, "-rw-r--r--", path)
        # the packaged executable: static and stripped (rpm's brp-strip
        # scripts may drop more notes, so not byte for byte meson's)
        exe = os.path.join(self.tmp, "packaged-cradle")
        data = cpio_member(run_bytes(["rpm2cpio", self.rpm]), "." + bindir + "/cradle")
        self.assertEqual(data[:4], b"\x7fELF")
        with open(exe, "wb") as f:
            f.write(data)
        self.assertNotIn("program interpreter", run(["readelf", "-lW", exe]))
        self.assertNotIn(".symtab", run(["readelf", "-SW", exe]))

    def test_requires_nothing(self):
        requires = [r for r in self.query("--requires").split("\n") if r]
        self.assertTrue(requires)
        self.assertEqual([r for r in requires if not r.startswith("rpmlib(")], [], requires)
        self.assertEqual(self.query("--scripts").strip(), "", "no scriptlets: they would require /bin/sh")


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
