#!/usr/bin/python3
"""The network steps between network namespaces this test creates.

Lab: namespaces A and B joined by a veth pair (a0 <-> b0), both in
198.51.100.0/29 and 2001:db8:5::/64; B also holds 198.51.100.5 (a VIP);
198.51.100.6 and 2001:db8:5::9 are free. Nothing leaves the namespaces.

* connectivity-check from A: L2 by ARP and NDP (B's MAC, from A's address),
  L3 by ICMP echo with an RTT, an unused address unreachable; an MTU
  mismatch (a0 at 9000, b0 at 1500) and then a match; without --lab-nics
  no outgoing NIC (veth is virtual, as the Go agent decides); dry run;
* verify-vips: B's VIP failed, A's own address failed, free ones succeeded;
* free-network-addresses: the /29 sweep finds exactly the unused addresses;
* every output validates against its swagger model (the reference
  service's check); invalid arguments give exit -1 and run nothing.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import check_output, step  # noqa: E402

stepslib.require_root()
stepslib.model()
lab = stepslib.Lab()
A = lab.ns("a")
B = lab.ns("b")
lab.veth(A, "a0", B, "b0")
for ns, dev, v4, v6 in ((A, "a0", "198.51.100.1/29", "2001:db8:5::1/64"),
                        (B, "b0", "198.51.100.2/29", "2001:db8:5::2/64")):
    lab.addr(ns, dev, v4)
    lab.addr(ns, dev, v6)
lab.addr(B, "b0", "198.51.100.5/29")
B_MAC = lab.mac(B, "b0")
A_MAC = lab.mac(A, "a0")
B_ID = "a1a1a1a1-0000-4000-8000-000000000002"


def params(mac=B_MAC, ips=("198.51.100.2", "2001:db8:5::2")):
    return json.dumps([{"host_id": B_ID, "nics": [{"name": "b0", "mac": mac, "ip_addresses": list(ips)}]}])


def connectivity(*args, **kw):
    r = step("connectivity-check", *args, netns=A, **kw)
    assert r["exit_code"] == 0, r
    report = check_output("connectivity-check", r["output"])
    assert len(report["remote_hosts"]) == 1, report
    host = report["remote_hosts"][0]
    assert host["host_id"] == B_ID
    return host


def test_l2_l3_between_namespaces():
    host = connectivity(params(ips=("198.51.100.2", "2001:db8:5::2", "198.51.100.6")), lab_nics="a0")
    l2 = host["l2_connectivity"]
    assert l2 == [
        {"outgoing_ip_address": "198.51.100.1", "outgoing_nic": "a0", "remote_ip_address": "198.51.100.2",
         "remote_mac": B_MAC, "successful": True},
        {"outgoing_nic": "a0", "remote_ip_address": "2001:db8:5::2", "remote_mac": B_MAC, "successful": True},
    ], l2
    l3 = {e["remote_ip_address"]: e for e in host["l3_connectivity"]}
    assert [e["remote_ip_address"] for e in host["l3_connectivity"]] == \
        ["198.51.100.2", "198.51.100.6", "2001:db8:5::2"], host["l3_connectivity"]
    for ip in ("198.51.100.2", "2001:db8:5::2"):
        assert l3[ip]["successful"] is True, l3[ip]
        assert isinstance(l3[ip]["average_rtt_ms"], float) and l3[ip]["average_rtt_ms"] >= 0, l3[ip]
        assert "packet_loss_percentage" not in l3[ip], l3[ip]   # 0 % is omitted
    # nobody holds .6: no reply, the Go agent's bare entry
    assert l3["198.51.100.6"] == {"remote_ip_address": "198.51.100.6"}, l3["198.51.100.6"]
    assert host["mtu_report"] is None     # MTU 1500: not checked


def test_unexpected_mac_is_unsuccessful():
    host = connectivity(params(mac="02:00:00:00:00:99", ips=("198.51.100.2",)), lab_nics="a*")
    assert host["l2_connectivity"] == [
        {"outgoing_ip_address": "198.51.100.1", "outgoing_nic": "a0", "remote_ip_address": "198.51.100.2",
         "remote_mac": B_MAC}], host["l2_connectivity"]


def test_virtual_nics_are_not_outgoing_without_lab_option():
    host = connectivity(params())
    assert host["l2_connectivity"] is None, host
    assert host["mtu_report"] is None, host
    assert all(e["successful"] for e in host["l3_connectivity"]), host


def test_mtu_mismatch_then_match():
    lab.ip(A, "link", "set", "a0", "mtu", "9000")
    try:
        host = connectivity(params(), lab_nics="a0")
        assert host["mtu_report"] == [
            {"outgoing_nic": "a0", "remote_ip_address": "198.51.100.2"},
            {"outgoing_nic": "a0", "remote_ip_address": "2001:db8:5::2"}], host["mtu_report"]
        lab.ip(B, "link", "set", "b0", "mtu", "9000")
        host = connectivity(params(), lab_nics="a0")
        assert host["mtu_report"] == [
            {"mtu_successful": True, "outgoing_nic": "a0", "remote_ip_address": "198.51.100.2"},
            {"mtu_successful": True, "outgoing_nic": "a0", "remote_ip_address": "2001:db8:5::2"}], host["mtu_report"]
    finally:
        lab.ip(A, "link", "set", "a0", "mtu", "1500")
        lab.ip(B, "link", "set", "b0", "mtu", "1500")


def test_connectivity_dry_run():
    host = connectivity(params(), dry_run=True, lab_nics="a0")
    assert host["l2_connectivity"] == [
        {"outgoing_nic": "a0", "remote_ip_address": "198.51.100.2", "remote_mac": B_MAC, "successful": True},
        {"outgoing_nic": "a0", "remote_ip_address": "2001:db8:5::2", "remote_mac": B_MAC, "successful": True},
    ], host
    assert host["l3_connectivity"] == [{"remote_ip_address": "198.51.100.2", "successful": True},
                                       {"remote_ip_address": "2001:db8:5::2", "successful": True}], host
    assert host["mtu_report"] is None


def test_connectivity_empty_and_invalid():
    r = step("connectivity-check", "[]", netns=A, lab_nics="a0")
    assert r["exit_code"] == 0 and r["output"] == '{"remote_hosts":null}', r
    check_output("connectivity-check", r["output"])
    r = step("connectivity-check", '[{"host_id":"not-a-uuid"}]', netns=A)
    assert r == {"exit_code": -1, "output": "", "end_runner": False,
                 "error": 'validation failure list:\n0.host_id in body must be of type uuid: "not-a-uuid"'}, r
    r = step("connectivity-check", '[{"host_id":"%s","nics":[{"ip_addresses":["198.51.100.2/24"]}]}]' % B_ID,
             netns=A)
    assert r["exit_code"] == -1 and "0.nics.0.ip_addresses.0 in body should match" in r["error"], r
    r = step("connectivity-check", '{"host_id":1}', netns=A)
    assert r["exit_code"] == -1 and r["error"] == \
        "json: cannot unmarshal object into Go value of type models.ConnectivityCheckParams", r


def test_verify_vips():
    req = [{"vip": "198.51.100.5", "vip_type": "api"}, {"vip": "198.51.100.6", "vip_type": "ingress"},
           {"vip": "198.51.100.1", "vip_type": "api"}, {"vip": "2001:db8:5::2", "vip_type": "api"},
           {"vip": "2001:db8:5::9", "vip_type": "ingress"}, {"vip": "203.0.113.9", "vip_type": "api"}]
    r = step("verify-vips", json.dumps(req), netns=A)
    assert r["exit_code"] == 0, r
    out = check_output("verify-vips", r["output"])
    assert [(v["vip"], v["verification"]) for v in out] == [
        ("198.51.100.5", "failed"),      # B answers ARP for it
        ("198.51.100.6", "succeeded"),
        ("198.51.100.1", "failed"),      # A's own address
        ("2001:db8:5::2", "failed"),     # B answers the neighbor solicitation
        ("2001:db8:5::9", "succeeded"),
        ("203.0.113.9", "succeeded"),    # off-link, no route: no echo reply
    ], out
    assert [v["vip_type"] for v in out] == [v["vip_type"] for v in req]
    r = step("verify-vips", json.dumps(req), netns=A, dry_run=True)
    assert [v["verification"] for v in check_output("verify-vips", r["output"])] == ["succeeded"] * len(req), r
    r = step("verify-vips", "[]", netns=A)
    assert r["exit_code"] == 0 and r["output"] == "null", r
    r = step("verify-vips", '[{"vip":"198.51.100.5","vip_type":"egress"}]', netns=A)
    assert r["exit_code"] == -1 and r["error"] == \
        "validation failure list:\n0.vip_type in body should be one of [api ingress]", r


def test_free_addresses_of_a_29():
    r = step("free-network-addresses", '["198.51.100.0/29"]', netns=A)
    assert r["exit_code"] == 0, r
    out = check_output("free-network-addresses", r["output"])
    # .1 is A, .2 and .5 are B; the network and broadcast addresses count,
    # as nmap scans them
    assert out == [{"free_addresses": ["198.51.100.0", "198.51.100.3", "198.51.100.4", "198.51.100.6",
                                       "198.51.100.7"], "network": "198.51.100.0/29"}], out
    # the same from B's side
    r = step("free-network-addresses", '["198.51.100.0/29"]', netns=B)
    assert json.loads(r["output"])[0]["free_addresses"] == ["198.51.100.0", "198.51.100.3", "198.51.100.4",
                                                            "198.51.100.6", "198.51.100.7"], r


def test_free_addresses_other_networks_and_errors():
    r = step("free-network-addresses", '["203.0.113.0/30", "2001:db8:5::/64"]', netns=A)
    out = check_output("free-network-addresses", r["output"])
    assert out == [{"free_addresses": ["203.0.113.0", "203.0.113.1", "203.0.113.2", "203.0.113.3"],
                    "network": "203.0.113.0/30"},
                   {"free_addresses": None, "network": "2001:db8:5::/64"}], out
    # not the network's canonical form: the program fails (-1, shown as 255)
    r = step("free-network-addresses", '["198.51.100.3/29"]', netns=A)
    assert r["exit_code"] == 255 and r["output"] == "" and r["error"] == \
        "Requested CIDR 198.51.100.0/29 is not equal to provided network 198.51.100.3/29", r
    r = step("free-network-addresses", '"198.51.100.0/29"', netns=A)
    assert r["exit_code"] == -1 and "cannot unmarshal string" in r["error"], r
    r = step("free-network-addresses", '[]', netns=A)
    assert r["exit_code"] == 0 and r["output"] == "[]", r


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
