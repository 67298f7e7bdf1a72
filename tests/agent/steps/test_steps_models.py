#!/usr/bin/python3
"""The step argument models (agent/steps/step-models.c) against
swagger.yaml: for every request model, each required field missing is
reported as go-openapi words it, an example holding only the required
fields passes, each pattern appears verbatim and accepts and rejects the
same strings as the swagger expression (Python's re standing in for Go's
RE2 on these), and enums list the same values. Validation only: no step
runs (step-run --validate-only).
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402

M = stepslib.model()
SW = M.sw
MODELS_C = open(os.path.join(stepslib.SRC, "agent", "steps", "step-models.c")).read()

REQUESTS = {
    "connectivity-check": "connectivity-check-params",
    "free-network-addresses": "free_addresses_request",
    "ntp-synchronizer": "ntp_synchronization_request",
    "installation-disk-speed-check": "disk_speed_check_request",
    "container-image-availability": "container_image_availability_request",
    "domain-resolution": "domain_resolution_request",
    "tang-connectivity-check": "tang_connectivity_request",
    "api-vip-connectivity-check": "api_vip_connectivity_request",
    "dhcp-lease-allocate": "dhcp_allocation_request",
    "verify-vips": "verify_vips_request",
    "logs-gather": "logs_gather_cmd_request",
    "upgrade-agent": "upgrade_agent_request",
    "download-boot-artifacts": "download_boot_artifacts_request",
    "reboot-for-reclaim": "reboot_for_reclaim_request",
}
SAMPLE = {"string": "x", "boolean": True, "integer": 1}
FORMAT_SAMPLE = {"uuid": "a1a1a1a1-0000-4000-8000-000000000001", "mac": "00:1a:4a:fb:12:7e"}


def validate(step_type, arg):
    p = subprocess.run([stepslib.STEP_RUN, "--validate-only", step_type, arg], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(os.environ, CRADLE_LOG_TARGET="null"))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    return r["exit_code"], r["error"]


def minimal(schema):
    """A value with only the required fields, from the swagger schema."""
    s = SW.resolve(schema)
    t = SW.schema_type(s)
    if t == "object":
        props, req = SW.properties(s)
        return {k: minimal(props[k]) for k in req}
    if t == "array":
        return []
    if s.get("format") in FORMAT_SAMPLE:
        return FORMAT_SAMPLE[s["format"]]
    if "enum" in s:
        return s["enum"][0]
    return SAMPLE.get(t, "x")


def test_required_fields():
    checked = 0
    for step_type, name in sorted(REQUESTS.items()):
        schema = {"$ref": "#/definitions/" + name}
        s = SW.resolve(schema)
        if SW.schema_type(s) != "object":
            continue
        example = minimal(schema)
        code, err = validate(step_type, json.dumps(example))
        assert code == 0, (step_type, example, err)
        for field in example:
            less = dict(example)
            del less[field]
            code, err = validate(step_type, json.dumps(less))
            assert code == -1 and "%s in body is required" % field in err, (step_type, field, err)
            checked += 1
    assert checked >= 19, checked


def patterns(schema, path=""):
    s = SW.resolve(schema)
    out = []
    if "pattern" in s:
        out.append((path, s["pattern"]))
    t = SW.schema_type(s)
    if t == "object":
        props, _ = SW.properties(s)
        for k, v in props.items():
            out += patterns(v, path + "." + k)
    elif t == "array":
        out += patterns(s.get("items", {}), path + "[]")
    return out


CANDIDATES = ["192.168.122.12", "fe80::1", "2001:db8::", "::", "1.2.3", "1.2.3.4/24", "x", "", "a:b",
              "10.0.0.0/24", "10.0.0.0/8", "2001:db8::/64", "29", "foo-3", "quay.io/openshift/release:4.13",
              "registry.local:5000/a/b@sha256:abc", "UPPER/case", "a b", "image", "ns/image:tag",
              "999.999.999.999", "1.2.3.4.5", "::ffff:1.2.3.4"]


def test_patterns_match_swagger():
    seen = 0
    for step_type, name in sorted(REQUESTS.items()):
        for path, pattern in patterns({"$ref": "#/definitions/" + name}):
            c_literal = json.dumps(pattern)[1:-1]     # as a C string literal writes it
            assert c_literal in MODELS_C, (name, path, pattern)
            seen += 1
    assert seen >= 5, seen
    # and they decide alike (checked through one field per pattern)
    probes = [
        ("free-network-addresses", lambda v: json.dumps([v]),
         SW.resolve({"$ref": "#/definitions/free_addresses_request"})["items"]["pattern"]),
        ("connectivity-check", lambda v: json.dumps([{"nics": [{"ip_addresses": [v]}]}]),
         SW.resolve({"$ref": "#/definitions/connectivity-check-nic"})["properties"]["ip_addresses"]["items"]["pattern"]),
        ("verify-vips", lambda v: json.dumps([{"vip": v}]), SW.resolve({"$ref": "#/definitions/ip"})["pattern"]),
        ("container-image-availability", lambda v: json.dumps({"images": [v]}),
         SW.resolve({"$ref": "#/definitions/container_image_availability_request"})["properties"]["images"]["items"]
         ["pattern"]),
        ("logs-gather", lambda v: json.dumps({"cluster_id": FORMAT_SAMPLE["uuid"], "host_id": FORMAT_SAMPLE["uuid"],
                                              "infra_env_id": FORMAT_SAMPLE["uuid"], "bootstrap": False,
                                              "installer_gather": False, "master_ips": [v]}),
         SW.resolve({"$ref": "#/definitions/logs_gather_cmd_request"})["properties"]["master_ips"]["items"]["pattern"]),
    ]
    for step_type, make, pattern in probes:
        for v in CANDIDATES:
            want = re.search(pattern, v) is not None
            # go-swagger skips the checks of an optional field's empty value
            if v == "" and step_type == "verify-vips":
                want = True
            code, err = validate(step_type, make(v))
            assert (code == 0) == want, (step_type, v, pattern, err)


def test_enums_and_formats():
    vip_types = SW.resolve({"$ref": "#/definitions/vip_type"})["enum"]
    for v in vip_types + ["egress", "API"]:
        code, err = validate("verify-vips", json.dumps([{"vip": "198.51.100.5", "vip_type": v}]))
        assert (code == 0) == (v in vip_types), (v, err)
    assert "should be one of [%s]" % " ".join(vip_types) in validate("verify-vips", '[{"vip_type":"x"}]')[1]
    for mac, ok in (("00:1a:4a:fb:12:7e", True), ("00-1A-4A-FB-12-7E", True), ("001a.4afb.127e", True),
                    ("00:1a:4a:fb:12", False), ("0:1a:4a:fb:12:7e", False), ("zz:1a:4a:fb:12:7e", False)):
        code, err = validate("dhcp-lease-allocate", json.dumps({"interface": "eth0", "api_vip_mac": mac,
                                                                "ingress_vip_mac": "00:1a:4a:fb:12:7f"}))
        assert (code == 0) == ok, (mac, err)
    for u, ok in (("a1a1a1a1-0000-4000-8000-000000000001", True), ("A1A1A1A1-0000-4000-8000-00000000000F", True),
                  ("a1a1a1a1000040008000000000000001", False), ("x", False)):
        code, err = validate("connectivity-check", json.dumps([{"host_id": u}]))
        assert (code == 0) == ok, (u, err)


def test_observed_instructions_validate():
    """Every argument the real service sent (observed/06) passes."""
    doc = json.load(open(os.path.join(stepslib.SRC, "tests", "reference", "observed", "06-instructions.json")))
    found = []

    def walk(o):
        if isinstance(o, dict):
            if o.get("step_type") in REQUESTS and o.get("args"):
                found.append((o["step_type"], o["args"][0]))
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(doc)
    assert len(found) >= 6, found
    for step_type, arg in found:
        code, err = validate(step_type, arg)
        assert code == 0, (step_type, arg, err)


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
