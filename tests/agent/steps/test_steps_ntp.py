#!/usr/bin/python3
"""ntp-synchronizer against chronyd running in namespaces this test makes.

Two network namespaces joined by a veth pair: S runs chronyd as an NTP
server (local stratum 8), C runs chronyd as its client; each has a private
mount namespace with its own /run (chronyd's command socket), and C's has
an /etc/hosts naming the server. Both chronyd run with -x: they never
touch this machine's clock. The step runs in C's namespaces
(nsenter), where `chronyc` talks to C's chronyd as on a real host.
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import check_output, step  # noqa: E402

stepslib.require_root()
CHRONYD = shutil.which("chronyd") or ("/usr/sbin/chronyd" if os.path.exists("/usr/sbin/chronyd") else None)
if not CHRONYD or not shutil.which("chronyc"):
    stepslib.skip("chrony is not installed")
stepslib.model()
lab = stepslib.Lab()
S = lab.ns("ntps")
C = lab.ns("ntpc")
lab.veth(S, "s0", C, "c0")
lab.addr(S, "s0", "198.51.100.1/24")
lab.addr(C, "c0", "198.51.100.2/24")

T = lab.tmp
with open(os.path.join(T, "server.conf"), "w") as f:
    f.write("local stratum 8\nallow 198.51.100.0/24\npidfile /run/chrony/chronyd.pid\ncmdport 0\n")
with open(os.path.join(T, "client.conf"), "w") as f:
    f.write("server 198.51.100.1 iburst minpoll 0 maxpoll 0\npidfile /run/chrony/chronyd.pid\ncmdport 0\n")
with open(os.path.join(T, "hosts"), "w") as f:
    f.write("127.0.0.1 localhost\n198.51.100.1 ntp1.lab.test\n198.51.100.9 ntp9.lab.test\n")
with open(os.path.join(T, "resolv.conf"), "w") as f:
    f.write("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")   # nothing listens: names come from hosts


def chronyd(ns, conf, extra=""):
    script = ('mount -t tmpfs tmpfs /run && mkdir -m 0750 -p /run/chrony && %s'
              'exec "$0" -x -d -u root -f "$1"' % extra)
    return lab.spawn(ns, ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, CHRONYD, conf],
                     stdout=open(os.path.join(T, os.path.basename(conf) + ".log"), "w"), stderr=subprocess.STDOUT)


server = chronyd(S, os.path.join(T, "server.conf"))
client = chronyd(C, os.path.join(T, "client.conf"),
                 'mount --bind %s /etc/hosts && mount --bind %s /etc/resolv.conf && ' %
                 (os.path.join(T, "hosts"), os.path.join(T, "resolv.conf")))
IN_CLIENT = ["nsenter", "-t", str(client.pid), "--mount", "--net"]


def chronyc_sources():
    p = subprocess.run(IN_CLIENT + ["chronyc", "-n", "sources"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.stdout.decode()


# wait (bounded) until C's chronyd selected the server, as a host that has
# been up for a while would have
for _ in range(300):
    if "^* 198.51.100.1" in chronyc_sources():
        break
    time.sleep(0.1)
else:
    stepslib.skip("chronyd did not synchronize in 30 s:\n" + chronyc_sources())


def ntp(source):
    r = step("ntp-synchronizer", json.dumps({"ntp_source": source}), wrap=IN_CLIENT)
    assert r["exit_code"] == 0, r
    return check_output("ntp-synchronizer", r["output"])["ntp_sources"]


def test_1_reports_chronyd_sources():
    # the name comes from the reverse lookup (hosts file), as net.LookupAddr
    assert ntp("") == [{"source_name": "ntp1.lab.test", "source_state": "synced"}]


def test_2_adds_requested_sources():
    out = ntp("198.51.100.9,ntp1.lab.test")
    # .9 was added (nothing answers there: unreachable); ntp1.lab.test is
    # the configured 198.51.100.1 and was not added again
    assert out == [{"source_name": "ntp1.lab.test", "source_state": "synced"},
                   {"source_name": "ntp9.lab.test", "source_state": "unreachable"}], out
    assert chronyc_sources().count("^") == 2, chronyc_sources()
    # asking again changes nothing
    assert ntp("198.51.100.9") == out


def test_3_invalid_sources():
    for bad in ("-bad-", "a,,b", "ntp_1.lab.test", "UPPER.case"):
        r = step("ntp-synchronizer", json.dumps({"ntp_source": bad}), wrap=IN_CLIENT)
        assert r["exit_code"] == -1 and r["error"] == "Invalid NTP source: " + bad, r
    r = step("ntp-synchronizer", "{}", wrap=IN_CLIENT)
    assert r["exit_code"] == -1 and r["error"] == "validation failure list:\nntp_source in body is required", r
    assert chronyc_sources().count("^") == 2


def test_4_without_chronyd():
    # a namespace without chronyd: chronyc cannot talk to a daemon
    r = step("ntp-synchronizer", '{"ntp_source":""}', netns=S,
             wrap=["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount -t tmpfs tmpfs /run && exec "$@"', "sh"])
    assert r["exit_code"] == -1 and r["output"] == "", r
    # "...code N: STDOUT\nSTDERR", chronyc writes this one on stdout
    assert r["error"] == "chronyc exited with non-zero exit code 1: 506 Cannot talk to daemon\n\n", r


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
