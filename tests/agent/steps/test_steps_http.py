#!/usr/bin/python3
"""tang-connectivity-check and api-vip-connectivity-check against small
HTTP(S) servers this test starts inside a network namespace it makes
(loopback only): a Tang advertisement, worker Ignition configs behind a
bearer token and an extra header, over HTTP and over HTTPS with a CA the
request carries.
"""
import base64
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402
from stepslib import check_output, step  # noqa: E402

stepslib.require_root()
if not shutil.which("openssl"):
    stepslib.skip("openssl is not installed (test certificates)")
stepslib.model()
lab = stepslib.Lab()
NS = lab.ns("http")
PKI = lab.certs()

ADV = {"payload": "eyJrZXlzIjpbXX0", "signatures": [{"protected": "eyJhbGciOiJFUzUxMiJ9", "signature": "c2ln"}],
       "extra": "dropped"}
WORKER = {
    "ignition": {"version": "3.2.0"},
    "storage": {
        "files": [
            {"path": "/etc/kubernetes/manifests/coredns.yaml", "contents": {"source": "data:,coredns"}, "mode": 420},
            {"path": "/etc/motd", "contents": {"source": "data:,hello"}},
            {"path": "/etc/kubernetes/kubeconfig", "contents": {"source": "data:,kubeconfig"}},
        ],
        "luks": [{"name": "root", "device": "/dev/disk/by-partlabel/root",
                  "clevis": {"tang": [{"url": "http://198.51.100.50:7500", "thumbprint": "THUMB"}]}}],
    },
    "systemd": {"units": [{"name": "kubelet.service", "enabled": True}]},
}
WORKER_31 = {"ignition": {"version": "3.1.0"},
             "storage": {"files": [{"path": "/etc/kubernetes/manifests/keepalived.yaml",
                                    "contents": {"source": "data:,keepalived"}}]}}
WORKER_35 = {"ignition": {"version": "3.5.0"}}
NEED = {"Authorization": "Bearer tok123", "X-Extra": "v",
        "Accept": "application/vnd.coreos.ignition+json; version=3.2.0"}
routes = {
    "/adv/THUMB": {"body": json.dumps(ADV)},
    "/adv/EMPTY": {"body": ""},
    "/adv/GARBAGE": {"body": "{not json"},
    "/config/worker": {"body": json.dumps(WORKER), "require_headers": NEED},
    "/config/worker31": {"body": json.dumps(WORKER_31)},
    "/config/worker35": {"body": json.dumps(WORKER_35)},
    "/config/garbage": {"body": "<html>"},
    "/config/empty": {"body": ""},
}
PORT, RECORD = lab.httpd(NS, routes)
TLS_PORT, TLS_RECORD = lab.httpd(NS, routes, tls=(os.path.join(PKI, "server.pem"), os.path.join(PKI, "server-key.pem")),
                                 name="https")
URL = "http://127.0.0.1:%d" % PORT


def tang(servers):
    return step("tang-connectivity-check", json.dumps({"tang_servers": json.dumps(servers)}), netns=NS)


def test_tang_success():
    r = tang([{"url": URL, "thumbprint": "THUMB"}])
    assert r["exit_code"] == 0 and r["error"] == "", r
    # byte for byte the Go agent's reply shape (observed/go-agent-wire-capture)
    assert r["output"] == json.dumps({"is_success": True, "tang_server_response": [
        {"payload": "eyJrZXlzIjpbXX0", "signatures": [{"protected": "eyJhbGciOiJFUzUxMiJ9", "signature": "c2ln"}],
         "tang_url": URL + "/adv/THUMB"}]}, separators=(",", ":")), r
    check_output("tang-connectivity-check", r["output"])


def test_tang_failures():
    r = tang([{"url": URL, "thumbprint": "THUMB"}, {"url": URL, "thumbprint": "NOPE"}, {"url": URL},
              {"url": "no-scheme", "thumbprint": "X"}])
    assert r["exit_code"] == -1 and r["output"] == '{"tang_server_response":null}', r
    check_output("tang-connectivity-check", r["output"])
    assert r["error"] == ("3 errors occurred:\n\t* HTTP GET failure. Status Code: 404\n"
                          "\t* Tang thumbprint isn't set for server: %s\n"
                          "\t* parse \"no-scheme\": invalid URI for request\n\n" % URL), r
    r = tang([{"url": URL, "thumbprint": "EMPTY"}])
    assert r["exit_code"] == -1 and r["error"] == "1 error occurred:\n\t* Empty tang response\n\n", r
    r = tang([{"url": URL, "thumbprint": "GARBAGE"}])
    assert r["exit_code"] == -1 and "\t* Error unmarshaling tang response: " in r["error"], r
    r = tang([{"url": "http://127.0.0.1:1", "thumbprint": "X"}])
    assert r["exit_code"] == -1 and "HTTP GET failure: Get \"http://127.0.0.1:1/adv/X\"" in r["error"], r
    r = step("tang-connectivity-check", json.dumps({"tang_servers": "not json"}), netns=NS)
    assert r["exit_code"] == -1 and r["output"] == '{"tang_server_response":null}', r
    r = step("tang-connectivity-check", "{}", netns=NS)
    assert r == {"exit_code": -1, "output": "", "end_runner": False,
                 "error": "validation failure list:\ntang_servers in body is required"}, r


def api_vip(req):
    r = step("api-vip-connectivity-check", json.dumps(req), netns=NS)
    assert r["exit_code"] == 0, r
    return r, check_output("api-vip-connectivity-check", r["output"])


def test_api_vip_filters_worker_ignition():
    url = URL + "/config/worker"
    r, out = api_vip({"url": url, "ignition_endpoint_token": "tok123", "verify_cidr": True,
                      "request_headers": [{"key": "X-Extra", "value": "v"}]})
    assert r["error"] == "" and out["is_success"] is True and out["url"] == url, out
    ign = json.loads(out["ignition"])
    assert ign["ignition"]["version"] == "3.2.0", ign
    assert [f["path"] for f in ign["storage"]["files"]] == ["/etc/kubernetes/manifests/coredns.yaml",
                                                            "/etc/kubernetes/kubeconfig"], ign
    assert ign["storage"]["luks"] == WORKER["storage"]["luks"], ign
    assert "units" not in ign.get("systemd", {}), ign
    last = [json.loads(x) for x in open(RECORD)][-1]
    for k, v in NEED.items():
        assert last["headers"].get(k) == v, last
    assert "tok123" not in r["error"]


def test_api_vip_translates_and_refuses_versions():
    _, out = api_vip({"url": URL + "/config/worker31"})
    ign = json.loads(out["ignition"])
    assert ign["ignition"]["version"] == "3.2.0" and \
        ign["storage"]["files"][0]["path"] == "/etc/kubernetes/manifests/keepalived.yaml", ign
    r, out = api_vip({"url": URL + "/config/worker35"})
    assert out.get("is_success") is None and "unsupported config version" in out["download_error"], out
    assert r["error"] == "ignition download error"


def test_api_vip_download_problems():
    for path, why in (("/config/worker", "Status Code: 403"), ("/config/nothing", "Status Code: 404"),
                      ("/config/garbage", "Error unmarshaling Ignition string"),
                      ("/config/empty", "Empty Ignition file")):
        r, out = api_vip({"url": URL + path})
        assert r["error"] == "ignition download error", r
        assert out == {"download_error": out["download_error"], "url": URL + path}, out
        assert out["download_error"].startswith("ignition file download failed: ") and why in out["download_error"], out


def test_api_vip_https_with_ca():
    ca = base64.b64encode(open(os.path.join(PKI, "ca.pem"), "rb").read()).decode()
    other = base64.b64encode(open(os.path.join(PKI, "other-ca.pem"), "rb").read()).decode()
    url = "https://127.0.0.1:%d/config/worker31" % TLS_PORT
    _, out = api_vip({"url": url, "ca_certificate": ca})
    assert out["is_success"] is True, out
    _, out = api_vip({"url": url, "ca_certificate": other})
    assert "download_error" in out and "is_success" not in out, out
    _, out = api_vip({"url": url})     # the system CAs do not know ours
    assert "download_error" in out, out
    _, out = api_vip({"url": url, "ca_certificate": "%%%"})
    assert "Failed to decode CaCertificate" in out["download_error"], out


def test_api_vip_invalid_request():
    r = step("api-vip-connectivity-check", '{"request_headers":[]}', netns=NS)
    assert r["exit_code"] == -1 and r["error"] == "validation failure list:\nurl in body is required", r


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
