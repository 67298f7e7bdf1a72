#!/usr/bin/python3
"""packaging/systemd/ as "meson install" installs it, checked by systemd's
own tools in a root of the test's (no systemd runs here):

  - systemd-analyze verify passes on cradle-agent.service, silently: the
    unit parses, ExecStart's executable is in the root, the Documentation=
    man page exists (MANPATH points into the root);
  - systemctl --root preset enables it (its [Install] and 80-cradle.preset,
    against a "disable *" distribution default, as Fedora and RHEL ship);
  - the unit gives the agent what assisted-service's agent.service gives
    the Go agent (observed/04): its Unit ordering, restart policy and
    environment, and the same command line once systemd expands the
    example environment file into ExecStart;
  - Type=notify with NotifyAccess=main and a watchdog (the messages
    themselves: test_notify.py).

Environment: CRADLE_BUILD_ROOT, CRADLE_REFERENCE (tests/reference).
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ.get("CRADLE_BUILD_ROOT", "")
REFERENCE = os.environ.get("CRADLE_REFERENCE", "")


def skip(reason):
    print("SKIP: %s" % reason)
    sys.exit(77)


if not BUILD or not shutil.which("meson"):
    skip("CRADLE_BUILD_ROOT or meson missing")
for tool in ("systemd-analyze", "systemctl"):
    if not shutil.which(tool):
        skip("%s is not installed" % tool)


def run(argv, **kw):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError("%s: exit %d\n%s" % (" ".join(argv), p.returncode, p.stdout))
    return p.stdout


def parse_unit(text):
    """{section: [(key, value)]}, as systemd reads unit files (repeated keys
    kept, comments and blank lines dropped)."""
    units, section = {}, None
    for line in text.split("\n"):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            units.setdefault(section, [])
        else:
            k, v = line.split("=", 1)
            units[section].append((k.strip(), v.strip()))
    return units


def values(unit, section, key):
    return [v for k, v in unit.get(section, []) if k == key]


def environment(unit):
    """Environment= assignments (each line holds several) then EnvironmentFile= overrides."""
    env = {}
    for line in values(unit, "Service", "Environment"):
        for word in shlex.split(line):
            k, v = word.split("=", 1)
            env[k] = v
    return env


def expand(cmdline, env):
    """systemd's ExecStart= expansion: ${X} is one word, $X splits on blanks."""
    words = []
    for w in shlex.split(cmdline):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", w)
        if m:
            words += env.get(m.group(1), "").split()
        else:
            words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), w))
    return words


class Units(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="cradle-units-")
        cls.root = os.path.join(cls.tmp, "root")
        run(["meson", "install", "-C", BUILD, "--destdir", cls.root, "--no-rebuild", "--quiet"])
        opts = {o["name"]: o["value"] for o in json.loads(run(["meson", "introspect", "--buildoptions", BUILD]))}
        cls.prefix = opts["prefix"]
        cls.unitdir = opts["systemdsystemunitdir"] or cls.prefix + "/lib/systemd/system"
        cls.mandir = os.path.join(cls.prefix, opts["mandir"])
        cls.sysconfdir = os.path.join(cls.prefix, opts["sysconfdir"])
        cls.datadir = os.path.join(cls.prefix, opts["datadir"])
        cls.bindir = os.path.join(cls.prefix, opts["bindir"])
        # the distribution's units (sysinit.target, network-online.target, ...)
        # beside ours, so that verify can load the dependencies
        host_units = "/usr/lib/systemd/system" if os.path.isdir("/usr/lib/systemd/system/sysinit.target.wants") \
            else "/lib/systemd/system"
        dist = os.path.join(cls.root, "usr/lib/systemd/system")
        os.makedirs(dist, exist_ok=True)
        for n in os.listdir(host_units):
            if not os.path.exists(os.path.join(dist, n)):
                src = os.path.join(host_units, n)
                if os.path.isdir(src) and not os.path.islink(src):
                    shutil.copytree(src, os.path.join(dist, n), symlinks=True)
                else:
                    shutil.copy(src, os.path.join(dist, n), follow_symlinks=False)
        cls.unit_path = os.path.join(cls.root, cls.unitdir.lstrip("/"), "cradle-agent.service")
        with open(cls.unit_path) as f:
            cls.unit = parse_unit(f.read())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_verify(self):
        env = dict(os.environ, MANPATH=os.path.join(self.root, self.mandir.lstrip("/")))
        p = subprocess.run(["systemd-analyze", "verify", "--man=yes", "--root=" + self.root, self.unit_path],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual((p.returncode, p.stdout), (0, ""))

    def test_verify_finds_a_broken_unit(self):
        """verify does check what this test relies on (the executable in
        the root, the man page)."""
        broken = os.path.join(self.root, self.unitdir.lstrip("/"), "cradle-broken-test.service")
        with open(self.unit_path) as f:
            text = f.read().replace(self.bindir + "/cradle ", self.bindir + "/no-such-cradle ")
        with open(broken, "w") as f:
            f.write(text.replace("man:cradle-agent(1)", "man:no-such-page(1)"))
        try:
            p = subprocess.run(["systemd-analyze", "verify", "--man=yes", "--root=" + self.root, broken],
                               env=dict(os.environ, MANPATH=os.path.join(self.root, self.mandir.lstrip("/"))),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        finally:
            os.unlink(broken)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no-such-cradle is not executable", p.stdout)
        self.assertIn("man no-such-page(1)", p.stdout)

    def test_preset_enables_it(self):
        presets = os.path.join(self.root, "usr/lib/systemd/system-preset")
        os.makedirs(presets, exist_ok=True)
        with open(os.path.join(presets, "99-default-disable.preset"), "w") as f:
            f.write("disable *\n")
        run(["systemctl", "--root=" + self.root, "preset", "cradle-agent.service"])
        link = os.path.join(self.root, "etc/systemd/system/multi-user.target.wants/cradle-agent.service")
        self.assertEqual(os.readlink(link), self.unitdir + "/cradle-agent.service")

    def test_as_the_services_agent_service(self):
        with open(os.path.join(REFERENCE, "observed", "04-discovery-ignition-units.json")) as f:
            obs = json.load(f)
        files = obs["GET /api/assisted-install/v2/infra-envs/{id}/downloads/files?file_name=discovery.ign"]
        upstream = parse_unit([u for u in files["systemd_units"] if u["name"] == "agent.service"][0]["contents"])
        u = self.unit
        for key in ("Wants", "After"):
            self.assertEqual(values(u, "Unit", key), values(upstream, "Unit", key), key)
        self.assertEqual(values(u, "Install", "WantedBy"), values(upstream, "Install", "WantedBy"))
        for key in ("Restart", "RestartSec", "TimeoutStartSec"):
            self.assertEqual(values(u, "Service", key), values(upstream, "Service", key), key)
        # StartLimitInterval=0, in its current name and section
        self.assertEqual(values(upstream, "Service", "StartLimitInterval"), ["0"])
        self.assertEqual(values(u, "Unit", "StartLimitIntervalSec"), ["0"])
        # the same environment: every variable the service sets, set
        up_env, env = environment(upstream), environment(u)
        self.assertEqual({k: v for k, v in env.items() if k in up_env}, up_env)
        # readiness and watchdog
        self.assertEqual(values(u, "Service", "Type"), ["notify"])
        self.assertEqual(values(u, "Service", "NotifyAccess"), ["main"])
        self.assertTrue(values(u, "Service", "WatchdogSec"))
        self.assertEqual(values(u, "Service", "EnvironmentFile"), [self.sysconfdir + "/cradle/agent.env"])
        self.assertEqual(values(u, "Unit", "ConditionPathExists"), [self.sysconfdir + "/cradle/agent.env"])

    def test_command_line_from_the_environment_file(self):
        """ExecStart, expanded as systemd does with the example file (its
        commented settings filled in), is the service's agent command line,
        through "cradle agent" instead of /usr/local/bin/agent."""
        with open(os.path.join(self.root, self.datadir.lstrip("/"), "cradle", "agent.env.example")) as f:
            example = f.read()
        self.assertNotIn("@", example, "unsubstituted configuration variable")
        env = environment(self.unit)
        for line in example.split("\n"):
            line = re.sub(r"^#(?=[A-Z_]+=)", "", line.strip())
            if line and not line.startswith("#"):
                k, v = line.split("=", 1)
                env[k] = v
        argv = expand(values(self.unit, "Service", "ExecStart")[0], env)
        self.assertEqual(argv[:2], [self.bindir + "/cradle", "agent"])
        self.assertEqual(argv[2:], [
            "--url", env["CRADLE_URL"], "--infra-env-id", env["CRADLE_INFRA_ENV_ID"],
            "--agent-version", env["CRADLE_AGENT_VERSION"], "--insecure=" + env["CRADLE_INSECURE"],
            "--cacert", "/etc/assisted-service/service-ca-cert.crt"])


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if r.wasSuccessful() else 1)
