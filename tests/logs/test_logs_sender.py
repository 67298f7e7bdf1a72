#!/usr/bin/python3
"""The logs_sender verb end to end, against the reference service.

Runs inside a network namespace (tests/helpers/in-netns.sh): the service
listens on the namespace's 127.0.0.1. The journal it reads is a journal file
the test writes with systemd-journal-remote; work files go to a temporary
directory (-logs-dir), never to /var/log.

Environment: CRADLE_BINARY, CRADLE_SOURCE_ROOT.
"""
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

SRC = os.environ.get("CRADLE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "service"))
try:
    import refservice
    from refclient import RefService
    refservice.find_swagger()
except (ImportError, FileNotFoundError) as e:  # python3-yaml or swagger.yaml missing
    print("SKIP: cannot run the reference service: %s" % e)
    sys.exit(77)

CRADLE = os.environ.get("CRADLE_BINARY")
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"
CL = "fb127e4c-aa1c-4cf4-898f-aadb690c4ded"
IE = "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"
H1 = "a1a1a1a1-0000-4000-8000-000000000001"
TOKEN = "logs-sender-test-t0ken"

SCENARIO = {
    "settings": {"min_disk_size_gb": 1},
    "clusters": [{"id": CL, "status": "installing"}],
    "infra_envs": [{"id": IE, "cluster_id": CL}],
    "hosts": [{"id": H1, "infra_env_id": IE, "role": "master", "status": "installing"}],
}

ENTRIES = [
    {"__REALTIME_TIMESTAMP": "%d" % (1795400000 * 10**6), "TAG": "installer", "SYSLOG_IDENTIFIER": "installer",
     "_PID": "42", "MESSAGE": "Writing image to disk"},
    {"__REALTIME_TIMESTAMP": "%d" % (1795400001 * 10**6), "TAG": "agent", "SYSLOG_IDENTIFIER": "agent",
     "_PID": "7", "MESSAGE": "Sending step reply"},
]


def make_journal(tmp):
    d = os.path.join(tmp, "journal")
    os.makedirs(d)
    export = os.path.join(tmp, "export.txt")
    with open(export, "w") as f:
        for i, e in enumerate(ENTRIES):
            e = dict(e)
            e.setdefault("__MONOTONIC_TIMESTAMP", str(1000000 * (i + 1)))
            e.setdefault("_BOOT_ID", "0123456789abcdef0123456789abcdef")
            e.setdefault("_HOSTNAME", "master-1")
            for k, v in e.items():
                f.write("%s=%s\n" % (k, v))
            f.write("\n")
    subprocess.run([JOURNAL_REMOTE, "--output=%s/remote.journal" % d, export], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return d


class LogsSenderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.svc = RefService(scenario=SCENARIO, token=TOKEN).start()

    @classmethod
    def tearDownClass(cls):
        cls.svc.stop()
        cls.svc.__exit__(None, None, None)

    def setUp(self):
        self.svc.reset(SCENARIO)
        self.tmp = tempfile.TemporaryDirectory(prefix="cradle-logs-")
        self.journal = make_journal(self.tmp.name)
        self.logs_dir = os.path.join(self.tmp.name, "var-log")
        os.makedirs(self.logs_dir)

    def tearDown(self):
        self.tmp.cleanup()

    def run_sender(self, *extra, url=None, env_token=True):
        env = dict(os.environ, CRADLE_LOG_TARGET="stderr", TZ="UTC")
        if env_token:
            env["PULL_SECRET_TOKEN"] = TOKEN
        argv = [CRADLE, "logs_sender", "-url", url or self.svc.url, "-cluster-id", CL, "-host-id", H1,
                "-infra-env-id", IE, "-insecure=true", "-with-text-logging=false", "--host-exec=direct",
                "--logs-dir", self.logs_dir, "--journal-dir", self.journal, "-since", "@1795300000",
                "--transport-retry-delay=0.01"] + list(extra)
        return subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=120)

    def upload(self):
        logs = self.svc.logs()
        self.assertEqual(len(logs), 1, logs)
        data = self.svc.control("GET", "/logs/" + logs[0]["name"])
        return logs[0], tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")

    def logs_states(self):
        return [r["body"]["logs_state"] for r in self.svc.requests(operation="v2UpdateHostLogsProgress")]

    def test_collects_and_uploads(self):
        p = self.run_sender()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("Logs were sent\n"), p.stdout)
        meta, tf = self.upload()
        top = "logs_host_%s" % H1
        self.assertEqual(meta["logs_type"], "host")
        self.assertEqual(meta["host_id"], H1)
        self.assertEqual(meta["infra_env_id"], IE)
        self.assertEqual(meta["filename"], "logs.tar.gz")
        self.assertTrue(meta["gzip"])
        names = tf.getnames()
        self.assertEqual(names[0], top)
        self.assertTrue(tf.getmember(top).isdir())
        for f in ("mount.logs", "agent.logs", "installer.logs"):
            self.assertIn("%s/%s" % (top, f), names)
        self.assertNotIn("%s/dmesg.logs" % top, names, "installer-gather is off")
        inst = tf.extractfile("%s/installer.logs" % top).read().decode()
        self.assertEqual(inst, "Nov 23 02:13:20 master-1 installer[42]: Writing image to disk\n")
        agent = tf.extractfile("%s/agent.logs" % top).read().decode()
        self.assertEqual(agent, "Nov 23 02:13:21 master-1 agent[7]: Sending step reply\n")
        mount = tf.extractfile("%s/mount.logs" % top).read().decode()
        self.assertTrue(mount.startswith("List block devices\nlsblk -o NAME,MAJ:MIN,"), mount[:200])
        self.assertIn("List mounts\nfindmnt --df\n", mount)
        self.assertEqual(self.logs_states(), ["requested", "collecting", "completed"])
        # the token is sent, and only as X-Secret-Key
        for r in self.svc.requests():
            self.assertEqual(r["auth"], "ok", r["path"])
        self.assertNotIn(TOKEN, p.stderr + p.stdout)
        # cleaned up afterwards
        self.assertEqual(os.listdir(self.logs_dir), [])

    def test_installer_gather_and_dont_clean(self):
        p = self.run_sender("-with-installer-gather-logging", "-dont-clean")
        self.assertEqual(p.returncode, 0, p.stderr)
        _, tf = self.upload()
        names = tf.getnames()
        top = "logs_host_%s" % H1
        self.assertIn("%s/dmesg.logs" % top, names)
        self.assertIn("%s/journal.logs" % top, names)
        journal = tf.extractfile("%s/journal.logs" % top).read().decode()
        self.assertIn("Writing image to disk", journal)
        self.assertIn("Sending step reply", journal)
        dmesg = tf.extractfile("%s/dmesg.logs" % top).read().decode()
        if dmesg:
            self.assertRegex(dmesg.splitlines()[0], r"^\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\] ")
        self.assertEqual(sorted(os.listdir(self.logs_dir)), ["logs.tar.gz", top])

    def test_since_filters(self):
        p = self.run_sender("-since", "2026-11-23 02:13:21")
        self.assertEqual(p.returncode, 0, p.stderr)
        _, tf = self.upload()
        inst = tf.extractfile("logs_host_%s/installer.logs" % H1).read().decode()
        self.assertEqual(inst, "")

    def test_bad_since_is_reported(self):
        p = self.run_sender("-since", "whenever")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("cannot parse --since 'whenever'", p.stdout)
        _, tf = self.upload()
        self.assertIn("logs_host_%s/report.logs" % H1, tf.getnames())

    def test_missing_required_flags(self):
        for drop, name in (("-cluster-id", "cluster-id"), ("-url", "url"), ("-host-id", "host-id")):
            argv = [CRADLE, "logs_sender", "-url", self.svc.url, "-cluster-id", CL, "-host-id", H1]
            i = argv.index(drop)
            del argv[i:i + 2]
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("missing required -%s argument/flag" % name, p.stderr)
        p = subprocess.run([CRADLE, "logs_sender", "-nope"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("flag provided but not defined: -nope", p.stderr)

    def test_token_from_flag(self):
        p = self.run_sender("-pull-secret-token", TOKEN, env_token=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        for r in self.svc.requests():
            self.assertEqual(r["auth"], "ok", r["path"])

    def test_service_down(self):
        p = self.run_sender(url="http://127.0.0.1:9")
        self.assertEqual(p.returncode, 255, p.stderr)
        self.assertIn("Failed to run send logs", p.stdout)


if __name__ == "__main__":
    if not CRADLE:
        print("SKIP: CRADLE_BINARY is not set")
        sys.exit(77)
    if os.geteuid() != 0:
        print("SKIP: needs root (journal files, namespaces)")
        sys.exit(77)
    if not os.access(JOURNAL_REMOTE, os.X_OK):
        print("SKIP: systemd-journal-remote is not installed (tools/deps --test)")
        sys.exit(77)
    unittest.main(verbosity=2)
