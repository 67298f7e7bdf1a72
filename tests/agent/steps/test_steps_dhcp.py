#!/usr/bin/python3
"""dhcp-lease-allocate against a DHCP server this test starts.

Namespace D runs dnsmasq as a DHCP server (198.51.100.150-160) on its end
of a veth pair; the host under test, namespace H, has the other end. The
step runs in H and in a private mount namespace whose /etc is an overlay
(the lease files go to /etc/keepalived there, never to this machine's
/etc): it creates the "api" and "ingress" macvlans with the requested
MACs, runs dhclient on each and deletes them again.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import check_output, step  # noqa: E402

stepslib.require_root()
DNSMASQ = shutil.which("dnsmasq") or ("/usr/sbin/dnsmasq" if os.path.exists("/usr/sbin/dnsmasq") else None)
DHCLIENT = shutil.which("dhclient") or ("/usr/sbin/dhclient" if os.path.exists("/usr/sbin/dhclient") else None)
if not DNSMASQ:
    stepslib.skip("dnsmasq is not installed (Debian: dnsmasq-base)")
if not DHCLIENT:
    stepslib.skip("dhclient is not installed (Debian: isc-dhcp-client)")
stepslib.model()
lab = stepslib.Lab()
D = lab.ns("dhcps")
H = lab.ns("dhcph")
lab.veth(D, "d0", H, "eth0")
lab.addr(D, "d0", "198.51.100.1/24")
lab.addr(H, "eth0", "198.51.100.10/24")
T = lab.tmp
LEASES = os.path.join(T, "dnsmasq.leases")
lab.spawn(D, [DNSMASQ, "--keep-in-foreground", "--port=0", "--interface=d0", "--bind-interfaces", "--user=root",
              "--dhcp-range=198.51.100.150,198.51.100.160,255.255.255.0,12h", "--dhcp-leasefile=" + LEASES,
              "--pid-file=" + os.path.join(T, "dnsmasq.pid"), "--log-dhcp",
              "--log-facility=" + os.path.join(T, "dnsmasq.log")])
time.sleep(0.5)

for d in ("upper", "work"):
    os.makedirs(os.path.join(T, d))
UPPER = os.path.join(T, "upper")
# /etc as an overlay: what the step writes lands in T/upper
WRAP = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
        'mount -t overlay overlay -o lowerdir=/etc,upperdir="$1",workdir="$2" /etc && shift 2 && exec "$@"',
        "sh", UPPER, os.path.join(T, "work")]
API_MAC, INGRESS_MAC = "00:1a:4a:fb:12:7e", "00:1a:4a:4a:aa:1c"
IN_RANGE = re.compile(r"^198\.51\.100\.1(5[0-9]|60)$")


def allocate(req):
    r = step("dhcp-lease-allocate", json.dumps(req), netns=H, wrap=WRAP, timeout=120)
    # dhclient went to the background with each lease: the step ended it
    # (SIGTERM; allow it a moment to exit)
    for _ in range(50):
        left = [p for p in lab.pids_in(H) if comm(p) == "dhclient"]
        if not left:
            break
        time.sleep(0.1)
    assert not left, "dhclient still running in the host namespace: %s" % left
    return r


def comm(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ...": a zombie has ended
    name, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2]
    return None if state == "Z" else name


def links():
    return [link["ifname"] for link in lab.ipj(H, "link", "show")]


def test_1_allocates_both_vips():
    r = allocate({"interface": "eth0", "api_vip_mac": API_MAC, "ingress_vip_mac": INGRESS_MAC})
    assert r["exit_code"] == 0, r
    out = check_output("dhcp-lease-allocate", r["output"])
    assert IN_RANGE.match(out["api_vip_address"]) and IN_RANGE.match(out["ingress_vip_address"]), out
    assert out["api_vip_address"] != out["ingress_vip_address"], out
    for name in ("api", "ingress"):
        lease = out[name + "_vip_lease"]
        assert lease.startswith("lease {") and lease.endswith("}"), lease
        assert 'interface "%s";' % name in lease and "fixed-address %s;" % out[name + "_vip_address"] in lease, lease
        assert os.path.exists(os.path.join(UPPER, "keepalived", "lease-" + name))
    # the server saw the VIP MACs and the Go agent's client names
    server = open(LEASES).read()
    assert API_MAC in server and INGRESS_MAC in server, server
    assert "00-1a-4a-fb-12-7e-api" in server and "00-1a-4a-4a-aa-1c-ingress" in server, server
    assert "api" not in links() and "ingress" not in links(), links()
    global FIRST
    FIRST = out


def test_2_renews_with_the_given_leases():
    req = {"interface": "eth0", "api_vip_mac": API_MAC, "ingress_vip_mac": INGRESS_MAC,
           "api_vip_lease": FIRST["api_vip_lease"].replace('interface "api"', 'interface "old-name"'),
           "ingress_vip_lease": FIRST["ingress_vip_lease"]}
    r = allocate(req)
    assert r["exit_code"] == 0, r
    out = check_output("dhcp-lease-allocate", r["output"])
    assert out["api_vip_address"] == FIRST["api_vip_address"], (out, FIRST)
    assert out["ingress_vip_address"] == FIRST["ingress_vip_address"], (out, FIRST)


def test_3_errors():
    r = allocate({"interface": "nosuch0", "api_vip_mac": API_MAC, "ingress_vip_mac": INGRESS_MAC})
    assert r["exit_code"] == -1 and r["error"].startswith("Failed to create macvlan api on nosuch0"), r
    r = allocate({"interface": "eth0", "api_vip_mac": "zz", "ingress_vip_mac": INGRESS_MAC})
    assert r["exit_code"] == -1 and r["error"] == 'validation failure list:\napi_vip_mac in body must be of type mac: "zz"', r
    r = allocate({"interface": "eth0", "api_vip_mac": API_MAC})
    assert r["exit_code"] == -1 and "ingress_vip_mac in body is required" in r["error"], r
    assert "api" not in links() and "ingress" not in links(), links()


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
