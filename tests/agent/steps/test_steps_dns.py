#!/usr/bin/python3
"""domain-resolution against a resolver this test starts.

A network namespace with loopback only; dnsmasq on its 127.0.0.1:53,
authoritative for lab.example.test (A, AAAA, a CNAME chain, names that do
not exist) and refusing everything else; the step runs in a private mount
namespace whose /etc/resolv.conf names that server and whose /etc/hosts
holds one more name. The resolver is the one the static build uses
(c-ares), reading those two files itself.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import check_output, step  # noqa: E402

stepslib.require_root()
DNSMASQ = shutil.which("dnsmasq") or ("/usr/sbin/dnsmasq" if os.path.exists("/usr/sbin/dnsmasq") else None)
if not DNSMASQ:
    stepslib.skip("dnsmasq is not installed (Debian: dnsmasq-base)")
stepslib.model()
lab = stepslib.Lab()
NS = lab.ns("dns")

resolv = os.path.join(lab.tmp, "resolv.conf")
hosts = os.path.join(lab.tmp, "hosts")
with open(resolv, "w") as f:
    f.write("nameserver 127.0.0.1\noptions timeout:1 attempts:2\n")
with open(hosts, "w") as f:
    f.write("127.0.0.1 localhost\n::1 localhost\n198.51.100.77 hosts-only.lab.test\n")

lab.spawn(NS, [DNSMASQ, "--keep-in-foreground", "--no-resolv", "--no-hosts", "--listen-address=127.0.0.1",
               "--bind-interfaces", "--port=53", "--user=root", "--pid-file=" + os.path.join(lab.tmp, "dnsmasq.pid"),
               "--local=/lab.example.test/",
               "--host-record=api.lab.example.test,198.51.100.100,2001:db8::100",
               "--host-record=api-int.lab.example.test,198.51.100.100",
               "--host-record=v6only.lab.example.test,2001:db8::6",
               "--cname=console.apps.lab.example.test,ingress.lab.example.test",
               "--host-record=ingress.lab.example.test,198.51.100.101",
               "--cname=alias2.lab.example.test,alias1.lab.example.test",
               "--cname=alias1.lab.example.test,api.lab.example.test",
               "--log-queries", "--log-facility=" + os.path.join(lab.tmp, "dnsmasq.log")])

# the server is up when it answers
probe = "import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.3); " \
        "s.sendto(bytes.fromhex('12340100000100000000000003617069036c6162076578616d706c6504746573740000010001'), " \
        "('127.0.0.1', 53)); s.recv(512)"
for _ in range(50):
    if subprocess.run(["ip", "netns", "exec", NS, "/usr/bin/python3", "-c", probe],
                      stderr=subprocess.DEVNULL).returncode == 0:
        break
    time.sleep(0.1)
else:
    stepslib.skip("dnsmasq did not start")



def wrap(resolv_conf):
    """a private mount namespace whose resolv.conf and hosts are ours"""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind "$1" /etc/resolv.conf && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"',
            "sh", resolv_conf, hosts]


WRAP = wrap(resolv)
# 127.0.0.2: nothing listens (ICMP port unreachable); 127.0.0.3: a server
# that reads every query and never answers
for name, server in (("refused", "127.0.0.2"), ("silent", "127.0.0.3")):
    with open(os.path.join(lab.tmp, "resolv-%s.conf" % name), "w") as f:
        f.write("nameserver %s\noptions timeout:1 attempts:1\n" % server)
lab.spawn(NS, ["/usr/bin/python3", "-c", "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
               "s.bind(('127.0.0.3', 53)); open(%r, 'w').close()\nwhile True: s.recv(512)"
               % os.path.join(lab.tmp, "silent.ready")])


def resolve(*names):
    req = {"domains": [{"domain_name": n} for n in names]}
    r = step("domain-resolution", json.dumps(req), netns=NS, wrap=WRAP)
    assert r["exit_code"] == 0, r
    out = check_output("domain-resolution", r["output"])
    assert [x["domain_name"] for x in out["resolutions"]] == list(names), out
    return out["resolutions"]


def test_a_aaaa_cname_nxdomain():
    res = resolve("api.lab.example.test", "api-int.lab.example.test", "v6only.lab.example.test",
                  "console.apps.lab.example.test", "alias2.lab.example.test", "nope.lab.example.test",
                  "validateNoWildcardDNS.lab.example.test.")
    assert res == [
        {"cnames": ["api.lab.example.test."], "domain_name": "api.lab.example.test",
         "ipv4_addresses": ["198.51.100.100"], "ipv6_addresses": ["2001:db8::100"]},
        {"cnames": ["api-int.lab.example.test."], "domain_name": "api-int.lab.example.test",
         "ipv4_addresses": ["198.51.100.100"], "ipv6_addresses": []},
        {"cnames": ["v6only.lab.example.test."], "domain_name": "v6only.lab.example.test",
         "ipv4_addresses": [], "ipv6_addresses": ["2001:db8::6"]},
        # a CNAME: LookupCNAME's canonical name, the chain's end
        {"cnames": ["ingress.lab.example.test."], "domain_name": "console.apps.lab.example.test",
         "ipv4_addresses": ["198.51.100.101"], "ipv6_addresses": []},
        {"cnames": ["api.lab.example.test."], "domain_name": "alias2.lab.example.test",
         "ipv4_addresses": ["198.51.100.100"], "ipv6_addresses": ["2001:db8::100"]},
        # NXDOMAIN is no error: empty lists
        {"cnames": [], "domain_name": "nope.lab.example.test", "ipv4_addresses": [], "ipv6_addresses": []},
        {"cnames": [], "domain_name": "validateNoWildcardDNS.lab.example.test.", "ipv4_addresses": [],
         "ipv6_addresses": []},
    ], json.dumps(res, indent=1)


def test_hosts_file_and_refused_names():
    res = resolve("hosts-only.lab.test", "localhost", "quay.io")
    assert res[0] == {"cnames": ["hosts-only.lab.test."], "domain_name": "hosts-only.lab.test",
                      "ipv4_addresses": ["198.51.100.77"], "ipv6_addresses": []}, res
    assert res[1]["ipv4_addresses"] == ["127.0.0.1"] and res[1]["ipv6_addresses"] == ["::1"], res
    # dnsmasq has no upstream: the lookup fails, reported as empty lists
    assert res[2] == {"cnames": [], "domain_name": "quay.io", "ipv4_addresses": [], "ipv6_addresses": []}, res


def test_failures_in_go_words():
    """A failed lookup is logged in the Go resolver's words (net.DNSError),
    each kind its own, never c-ares' ("DNS query cancelled"); the reply
    holds empty lists, as the Go agent's."""
    for _ in range(50):
        if os.path.exists(os.path.join(lab.tmp, "silent.ready")):
            break
        time.sleep(0.1)
    empty = {"cnames": [], "domain_name": None, "ipv4_addresses": [], "ipv6_addresses": []}
    cases = [
        # dnsmasq answers REFUSED for what it is not authoritative for
        (resolv, "quay.io", "lookup quay.io on 127.0.0.1:53: server misbehaving"),
        (os.path.join(lab.tmp, "resolv-refused.conf"), "api.lab.example.test",
         "lookup api.lab.example.test on 127.0.0.2:53: read udp 127.0.0.2:53: read: connection refused"),
        (os.path.join(lab.tmp, "resolv-silent.conf"), "api.lab.example.test",
         "lookup api.lab.example.test on 127.0.0.3:53: i/o timeout"),
    ]
    for conf, name, want in cases:
        r = step("domain-resolution", json.dumps({"domains": [{"domain_name": name}]}), netns=NS, wrap=wrap(conf))
        assert r["exit_code"] == 0, r
        assert json.loads(r["output"])["resolutions"] == [dict(empty, domain_name=name)], r
        line = "error occurred during domain resolution of %s: %s" % (name, want)
        assert line in stepslib.last_log, "%r not in:\n%s" % (line, stepslib.last_log)
        assert "DNS query" not in stepslib.last_log and "DNS server" not in stepslib.last_log, stepslib.last_log


def test_invalid_requests():
    r = step("domain-resolution", '{"domains":[{"domain_name":"a.lab.example.test"},{}]}', netns=NS, wrap=WRAP)
    assert r == {"exit_code": -1, "output": "", "error": "Every domain in a domain request must have a domain "
                 "name field", "end_runner": False}, r
    r = step("domain-resolution", '{}', netns=NS, wrap=WRAP)
    assert r["exit_code"] == -1 and r["error"] == "validation failure list:\ndomains in body is required", r
    r = step("domain-resolution", '{"domains":[]}', netns=NS, wrap=WRAP)
    assert r["exit_code"] == 0 and r["output"] == '{"resolutions":[]}', r


def test_queries_stayed_on_loopback():
    log = open(os.path.join(lab.tmp, "dnsmasq.log")).read()
    assert "query[A] api.lab.example.test from 127.0.0.1" in log, log[-2000:]
    assert "query[CNAME] alias2.lab.example.test from 127.0.0.1" in log, log[-2000:]


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
