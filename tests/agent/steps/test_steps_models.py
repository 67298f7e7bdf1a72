#!/usr/bin/python3
"""The step models against swagger.yaml.

Arguments (agent/steps/step-models.c): for every request model, each
required field missing is reported as go-openapi words it, an example
holding only the required fields passes, each pattern appears verbatim and
accepts and rejects the same strings as the swagger expression (Python's re
standing in for Go's RE2 on these), and enums list the same values.
Validation only: no step runs (step-run --validate-only).

Outputs (the handlers' sources): every JSON key a handler writes is a
property of its response model, every property of the model is written
somewhere, and the outputs the real service and the Go agent exchanged
(observed/07-step-replies.json, observed/go-agent-wire-capture.json) use
only those keys and validate. The integration tests check each reply they
get; this catches a misspelt key on a path no test reaches.
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


# step type -> (response model, the sources that build its output)
RESPONSES = {
    "connectivity-check": ("connectivity-report", ["connectivity-check.c"]),
    "free-network-addresses": ("free_networks_addresses", ["free-addresses.c", "free-network-addresses.c"]),
    "ntp-synchronizer": ("ntp_synchronization_response", ["ntp-synchronizer.c"]),
    "installation-disk-speed-check": ("disk_speed_check_response",
                                      ["disk-speed.c", "installation-disk-speed-check.c"]),
    "container-image-availability": ("container_image_availability_response", ["container-image-availability.c"]),
    "domain-resolution": ("domain_resolution_response", ["domain-resolution.c"]),
    "tang-connectivity-check": ("tang_connectivity_response", ["tang-connectivity-check.c", "tang.c"]),
    "api-vip-connectivity-check": ("api_vip_connectivity_response", ["api-vip-connectivity-check.c"]),
    "dhcp-lease-allocate": ("dhcp_allocation_response", ["dhcp-lease-allocate.c"]),
    "verify-vips": ("verify_vips_response", ["verify-vips.c"]),
    "upgrade-agent": ("upgrade_agent_response", ["upgrade-agent.c"]),
}
# a JSON key as the handlers write it: the key argument of the json_add_*
# builders, or a literal of a key table (connectivity-check's three lists)
KEY_CALL = re.compile(r'json_(?:add\w*|object_object_add)\(\s*\w+\s*,\s*"([^"]+)"')
KEY_TABLE = re.compile(r'(?:const\s+)?char\s*\*\s*(?:const\s+)?keys?\w*\s*\[\w*\]\s*=\s*\{([^}]*)\}')


def model_keys(schema):
    """Every property name reachable from a schema."""
    s = SW.resolve(schema)
    out = set()
    t = SW.schema_type(s)
    if t == "object":
        props, _ = SW.properties(s)
        for k, v in props.items():
            out.add(k)
            out |= model_keys(v)
    elif t == "array":
        out |= model_keys(s.get("items", {}))
    return out


def written_keys(files):
    src = "".join(open(os.path.join(stepslib.SRC, "agent", "steps", f)).read() for f in files)
    keys = set(KEY_CALL.findall(src))
    for table in KEY_TABLE.findall(src):
        keys |= set(re.findall(r'"([^"]+)"', table))
    return keys


def json_keys(v):
    if isinstance(v, dict):
        return set(v) | set().union(*[json_keys(x) for x in v.values()]) if v else set()
    if isinstance(v, list):
        return set().union(*[json_keys(x) for x in v]) if v else set()
    return set()


def test_output_keys_match_models():
    # the reference service checks outputs against the same table
    assert set(RESPONSES) | {"inventory"} == set(M.OUTPUT_MODELS), set(M.OUTPUT_MODELS) ^ set(RESPONSES)
    for step_type, (name, files) in sorted(RESPONSES.items()):
        assert M.OUTPUT_MODELS[step_type] == name, (step_type, name)
        want = model_keys({"$ref": "#/definitions/" + name})
        got = written_keys(files)
        assert want and got, (step_type, want, got)
        assert got <= want, "%s writes keys its model %s lacks: %s" % (step_type, name, sorted(got - want))
        assert want <= got, "%s never writes %s of %s" % (step_type, sorted(want - got), name)


def observed_replies():
    """(source, step_type, output) of every step reply with an output in
    the observed exchanges."""
    out = []
    o7 = json.load(open(os.path.join(stepslib.SRC, "tests", "reference", "observed", "07-step-replies.json")))
    for step_type, v in o7["by_step_type"].items():
        body = v.get("request_body") or {}
        if body.get("output"):
            out.append(("07-step-replies", step_type, body["output"]))
    cap = json.load(open(os.path.join(stepslib.SRC, "tests", "reference", "observed", "go-agent-wire-capture.json")))
    for k, v in cap.items():
        for req in v if isinstance(v, list) else []:
            body = req.get("body") if isinstance(req, dict) else None
            if isinstance(body, dict) and body.get("step_type") and body.get("output"):
                out.append(("go-agent-wire-capture", body["step_type"], body["output"]))
    return out


def test_observed_outputs_use_model_keys():
    seen = set()
    for source, step_type, output in observed_replies():
        if step_type not in RESPONSES:
            continue
        name, files = RESPONSES[step_type]
        keys = json_keys(json.loads(output))
        assert keys <= model_keys({"$ref": "#/definitions/" + name}), (source, step_type, keys)
        assert keys <= written_keys(files), (source, step_type, sorted(keys - written_keys(files)))
        stepslib.check_output(step_type, output)
        seen.add(step_type)
    # every discovery output the real exchanges show
    assert {"connectivity-check", "free-network-addresses", "ntp-synchronizer", "domain-resolution", "verify-vips",
            "installation-disk-speed-check", "container-image-availability", "tang-connectivity-check",
            "api-vip-connectivity-check", "upgrade-agent"} <= seen, seen


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
