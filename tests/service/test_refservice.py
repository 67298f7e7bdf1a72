#!/usr/bin/python3
"""Tests of the reference service (refservice.py), driven over HTTP with urllib.

Run:  /usr/bin/python3 tests/service/test_refservice.py     (exit 77 without python3-yaml)
  or  /usr/bin/python3 -m unittest tests/service/test_refservice.py

Everything binds 127.0.0.1; nothing leaves the machine.
"""

import base64
import copy
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# With CRADLE_TEST_SERVICE_URL (+ CRADLE_TEST_SERVICE_TOKEN) set, the API
# tests run against that service (refclient.RefService attaches to it):
# the user-facing tests (HubBase) make their own objects and run there; the
# agent-API tests need scenarios and the control API and skip, as do the
# tests of the fake itself (local_only).

try:
    import yaml  # noqa: F401
except ImportError:
    if __name__ == "__main__":
        print("SKIP: python3-yaml is not installed (apt-get install python3-yaml); refservice needs it")
        sys.exit(77)
    raise unittest.SkipTest("python3-yaml is not installed")

import refservice  # noqa: E402
from refclient import HubClient, RefService, real_service  # noqa: E402
from swaggerval import Swagger  # noqa: E402

try:
    SWAGGER_PATH = refservice.find_swagger()
except FileNotFoundError as e:
    if __name__ == "__main__":
        print("SKIP: %s (set REFSERVICE_SWAGGER or keep shared/ beside the tree)" % e)
        sys.exit(77)
    raise unittest.SkipTest(str(e))
SWAGGER = Swagger(SWAGGER_PATH)
OBS = os.path.join(os.path.dirname(os.path.dirname(SWAGGER_PATH)), "observed")

CL = "fb127e4c-aa1c-4cf4-898f-aadb690c4ded"
IE = "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f"
H1 = "a1a1a1a1-0000-4000-8000-000000000001"
H2 = "a1a1a1a1-0000-4000-8000-000000000002"
H3 = "a1a1a1a1-0000-4000-8000-000000000003"
AGENT = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
STEP_ID_RE = re.compile(r"^[a-z-]+-[0-9a-f]{8}$")


def observed(name):
    with open(os.path.join(OBS, name)) as f:
        return json.load(f)


O5 = observed("05-host-register.json")
O6 = observed("06-instructions.json")
O7 = observed("07-step-replies.json")
O8 = observed("08-install-step.json")
O9 = observed("09-host-states.json")
O11 = observed("11-install-progress.json")
INVENTORY = O7["by_step_type"]["inventory"]["request_body_output_decoded"]


def inventory_for(n, ip=None):
    """The observed inventory, made into host n (hostname, MAC, address)."""
    inv = copy.deepcopy(INVENTORY)
    inv["hostname"] = "master-%d" % n
    itf = inv["interfaces"][0]
    itf["mac_address"] = "52:54:00:00:00:%02x" % n
    itf["ipv4_addresses"] = [ip or "192.168.122.%d/24" % (10 + n)]
    return inv


REAL = real_service()


def local_only(what):
    """Skip when CRADLE_TEST_SERVICE_URL is set: what starts its own
    refservice (with options, or to test the fake itself)."""
    return unittest.skipIf(REAL, "tests the reference service itself (%s); CRADLE_TEST_SERVICE_URL is set" % what)


def schema_errors(defname, value):
    return [e.message for e in SWAGGER.validate({"$ref": "#/definitions/" + defname}, value)]


def connect_hosts(tc, svc, ie, hosts):
    """hosts[i] has inventory_for(i + 1)'s address; each reports L2 and L3
    connectivity to the others."""
    for n, h in enumerate(hosts, 1):
        remote = []
        for m, other in enumerate(hosts, 1):
            if other == h:
                continue
            ip = "192.168.122.%d" % (10 + m)
            remote.append({"host_id": other, "l2_connectivity": [
                {"outgoing_ip_address": "192.168.122.%d" % (10 + n), "outgoing_nic": "enp1s0",
                 "remote_ip_address": ip, "remote_mac": "52:54:00:00:00:%02x" % m, "successful": True}],
                "l3_connectivity": [{"average_rtt_ms": 0.1, "outgoing_nic": "enp1s0", "remote_ip_address": ip,
                                     "successful": True}]})
        st, body = svc.reply(ie, h, {"step_type": "connectivity-check"}, json.dumps({"remote_hosts": remote}))
        tc.assertEqual(st, 204, body)


class Base(unittest.TestCase):
    svc = None
    token = None

    @classmethod
    def setUpClass(cls):
        cls.svc = RefService(token=cls.token, scenario=getattr(cls, "scenario", None)).start()

    @classmethod
    def tearDownClass(cls):
        rc = cls.svc.stop()
        cls.svc.__exit__(None, None, None)
        assert cls.svc.real or rc == 0, "refservice exited %s on SIGTERM" % rc

    def setUp(self):
        self.svc.reset(getattr(self, "scenario", None))

    # helpers
    def register(self, host_id, ie=IE, version=AGENT):
        st, body = self.svc.register(ie, host_id, version)
        self.assertEqual(st, 201, body)
        return body

    def steps(self, host_id, ie=IE):
        st, body = self.svc.instructions(ie, host_id)
        self.assertEqual(st, 200, body)
        self.assertEqual(schema_errors("steps", body), [])
        return body

    def discover(self, host_id, n, ie=IE):
        self.register(host_id, ie)
        step = self.steps(host_id, ie)["instructions"][0]
        st, body = self.svc.reply(ie, host_id, step, json.dumps(inventory_for(n)))
        self.assertEqual(st, 204, body)

    def connect(self, hosts=(H1, H2, H3), ie=IE):
        """Every host's connectivity-check reply: L2 and L3 to each other
        over inventory_for()'s addresses (the majority group needs them)."""
        connect_hosts(self, self.svc, ie, hosts)

    def three_known(self):
        for n, h in enumerate((H1, H2, H3), 1):
            self.discover(h, n)
        self.connect()
        for h in (H1, H2, H3):
            self.assertEqual(self.svc.host(h)["status"], "known")


class TestRegistration(Base):
    def test_register_shape_as_observed(self):
        body = self.register(H1)
        exp = O5["POST /api/assisted-install/v2/infra-envs/{infra_env_id}/hosts"]["response"]
        self.assertEqual(list(body.keys()), list(exp.keys()))
        for k in ("created_at", "deleted_at", "discovery_agent_version", "href", "id", "infra_env_id", "kind",
                  "logs_collected_at", "logs_started_at", "progress_stages", "requested_hostname", "role",
                  "stage_started_at", "stage_updated_at", "status", "status_info", "suggested_role",
                  "updated_at", "user_name", "cluster_id", "next_step_runner_command"):
            self.assertEqual(body[k], exp[k], k)
        self.assertRegex(body["registered_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertEqual(schema_errors("host_registration_response", body), [])

    def test_reregister_answers_status_null(self):
        self.register(H1)
        body = self.register(H1)
        self.assertIsNone(body["status"])
        self.assertIsNone(body["status_info"])
        self.assertEqual(body["status_updated_at"], "0001-01-01T00:00:00.000Z")
        self.assertEqual(self.svc.host(H1)["status"], "discovering")

    def test_register_unknown_infra_env_404(self):
        st, body = self.svc.register(str(uuid.uuid4()), H1)
        self.assertEqual(st, 404)
        self.assertEqual(body["kind"], "Error")
        self.assertEqual(body["id"], 404)

    def test_register_body_validation(self):
        ep = "/v2/infra-envs/%s/hosts" % IE
        st, body = self.svc.api("POST", ep, {"discovery_agent_version": AGENT})
        self.assertEqual((st, body), (422, {"code": 602, "message": "host_id in body is required"}))
        st, body = self.svc.api("POST", ep, {"host_id": "not-a-uuid"})
        self.assertEqual((st, body["code"]), (422, 601))
        st, body = self.svc.api("POST", ep, {"host_id": 7})
        self.assertEqual(st, 400)
        self.assertIn("cannot unmarshal number", body["message"])
        st, body = self.svc.api("POST", ep, "{\"host_id\": ", {"Content-Type": "application/json"})
        self.assertEqual(st, 400)
        st, body = self.svc.api("POST", ep, b"", {"Content-Type": "application/json"})
        self.assertEqual((st, body["code"]), (422, 602))
        st, body = self.svc.api("POST", ep, "null", {"Content-Type": "application/json"})
        self.assertEqual((st, body), (422, {"code": 602, "message": "host_id in body is required"}))
        st, body = self.svc.api("POST", ep, "[]", {"Content-Type": "application/json"})
        self.assertEqual(st, 400)
        st, body = self.svc.api("POST", ep, '{"host_id": "%s"} trailing' % H1, {"Content-Type": "application/json"})
        self.assertEqual(st, 201, "json.Decoder reads the first value only")
        r = self.svc.raw("POST", "/api/assisted-install" + ep, json.dumps({"host_id": H1}))
        self.assertEqual(r.status, 415)  # urllib sends x-www-form-urlencoded

    def test_register_after_installed_403(self):
        self.register(H1)
        self.svc.set_host(H1, status="installed", status_info="Done")
        st, body = self.svc.register(IE, H1)
        self.assertEqual(st, 403)
        self.assertEqual(body, O5["register after cluster installed"]["response"])

    def test_register_during_installation_and_reboot(self):
        self.register(H1)
        self.svc.set_host(H1, status="installing-in-progress", stage="Writing image to disk")
        self.register(H1)
        self.assertEqual(self.svc.host(H1)["status"], "error")
        self.svc.set_host(H1, status="installing-in-progress", stage="Rebooting")
        self.register(H1)
        self.assertEqual(self.svc.host(H1)["status"], "installing-pending-user-action")
        st, body = self.svc.register(IE, H1)
        self.assertEqual(st, 403)
        self.assertEqual(sorted(body), ["code", "message"])

    def test_new_host_conflict_when_cluster_installing(self):
        self.svc.control("POST", "/clusters/%s" % CL, {"status": "installing"})
        st, body = self.svc.register(IE, H1)
        self.assertEqual(st, 409)

    def test_late_binding_infra_env(self):
        ie = str(uuid.uuid4())
        self.svc.control("POST", "/infra-envs", {"id": ie, "name": "late"})
        body = self.register(H1, ie)
        self.assertNotIn("cluster_id", body)
        self.assertEqual(body["status"], "discovering-unbound")
        steps = self.steps(H1, ie)["instructions"]
        self.assertEqual([s["step_type"] for s in steps], ["inventory"])
        self.svc.reply(ie, H1, steps[0], json.dumps(inventory_for(4)))
        self.assertEqual(self.svc.host(H1)["status"], "known-unbound")
        steps = self.steps(H1, ie)["instructions"]
        self.assertEqual([s["step_type"] for s in steps], ["inventory", "ntp-synchronizer"])


class TestInstructions(Base):
    def test_discovering_inventory_step(self):
        self.register(H1)
        body = self.steps(H1)
        exp = O6["first GET after register (discovering)"]
        self.assertEqual(body["next_instruction_seconds"], exp["next_instruction_seconds"])
        self.assertEqual(body["post_step_action"], "continue")
        self.assertEqual(len(body["instructions"]), 1)
        step = body["instructions"][0]
        self.assertEqual(step["args"], exp["instructions"][0]["args"])
        self.assertEqual(step["step_type"], "inventory")
        self.assertRegex(step["step_id"], r"^inventory-[0-9a-f]{8}$")
        self.assertNotEqual(step["step_id"], self.steps(H1)["instructions"][0]["step_id"])

    def test_inventory_stored_as_service_does(self):
        self.discover(H1, 1)
        h = self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s" % (IE, H1))[1]
        # the service re-marshals the Inventory: observed/09 is byte-exact what it stored
        exp = O9["known"]
        self.assertEqual(h["inventory"], exp["inventory"])
        for k in ("installation_disk_id", "installation_disk_path", "requested_hostname", "status",
                  "status_info", "suggested_role", "role"):
            self.assertEqual(h[k], exp[k], k)
        self.assertEqual(schema_errors("host", h), [])

    def test_known_phase_steps_as_observed(self):
        self.discover(H1, 1)
        got = self.steps(H1)["instructions"]
        exp = O6["insufficient/known phase, single host"]["instructions"]
        self.assertEqual([s["step_type"] for s in got], [s["step_type"] for s in exp])
        for g, e in zip(got, exp):
            self.assertEqual(g["args"], e["args"], g["step_type"])
            self.assertRegex(g["step_id"], STEP_ID_RE)

    def test_connectivity_check_with_other_hosts(self):
        self.three_known()
        got = self.steps(H1)["instructions"]
        exp = O6["by_step_type_first_seen"]["connectivity-check"]["response"]["instructions"]
        self.assertEqual([s["step_type"] for s in got], [s["step_type"] for s in exp])
        cc = [s for s in got if s["step_type"] == "connectivity-check"][0]
        self.assertEqual(cc["args"], [s for s in exp if s["step_type"] == "connectivity-check"][0]["args"])
        self.assertEqual(schema_errors("connectivity-check-params", json.loads(cc["args"][0])), [])

    def test_virtual_interfaces_dropped_unless_enabled(self):
        """ENABLE_VIRTUAL_INTERFACES (off): the stored inventory keeps the
        interfaces of type "", physical, vlan and bond (host.go UpdateInventory)."""
        inv = inventory_for(1)
        base = inv["interfaces"][0]
        kinds = ["physical", "", "vlan", "bond", "veth", "bridge", "tuntap", "device"]
        inv["interfaces"] = []
        for i, kind in enumerate(kinds):
            itf = dict(base, name="if%d" % i, type=kind)
            if not kind:
                del itf["type"]
            inv["interfaces"].append(itf)
        for enabled, want in ((False, kinds[:4]), (True, kinds)):
            self.svc.reset()
            self.svc.control("POST", "/settings", {"enable_virtual_interfaces": enabled})
            self.register(H1)
            step = self.steps(H1)["instructions"][0]
            self.assertEqual(self.svc.reply(IE, H1, step, json.dumps(inv))[0], 204)
            stored = json.loads(self.svc.host(H1)["inventory"])["interfaces"]
            self.assertEqual([i.get("type", "") for i in stored], want)

    def test_connectivity_majority_groups(self):
        """No majority group below three hosts: the validation is pending
        ("Not enough hosts ...", which does not keep a host from known); with
        three hosts and no connectivity it fails; a full mesh makes the group."""
        def majority(h):
            v = json.loads(self.svc.host(h)["validations_info"])
            return [(x["status"], x["message"]) for x in v["network"] if x["id"] == "belongs-to-majority-group"][0]

        def groups():
            return json.loads(self.svc.control("GET", "/clusters/%s" % CL)["connectivity_majority_groups"])
        pending = ("pending", "Not enough hosts in cluster to calculate connectivity groups")
        self.discover(H1, 1)
        self.assertEqual(majority(H1), pending)
        self.assertEqual(self.svc.host(H1)["status"], "known")
        self.discover(H2, 2)
        self.connect((H1, H2))
        self.assertEqual(groups(), {"192.168.122.0/24": [], "IPv4": [], "IPv6": []})
        self.assertEqual([majority(h) for h in (H1, H2)], [pending, pending])
        self.discover(H3, 3)
        h = self.svc.host(H3)
        self.assertEqual(majority(H3), ("failure", "No connectivity to the majority of hosts in the cluster"))
        self.assertEqual((h["status"], h["status_info"]), (
            "insufficient", "Host cannot be installed due to following failing validation(s): No connectivity to "
            "the majority of hosts in the cluster"))
        self.connect()
        self.assertEqual(groups(), {"192.168.122.0/24": [H1, H2, H3], "IPv4": [H1, H2, H3], "IPv6": []})
        self.assertEqual([self.svc.host(h)["status"] for h in (H1, H2, H3)], ["known"] * 3)
        self.assertEqual(majority(H2), ("success", "Host has connectivity to the majority of hosts in the cluster"))
        cluster = self.svc.api("GET", "/v2/clusters/%s" % CL)[1]
        self.assertEqual(json.loads(cluster["connectivity_majority_groups"])["IPv4"], [H1, H2, H3])
        self.assertEqual(schema_errors("cluster", cluster), [])

    def test_insufficient_validation(self):
        self.register(H1)
        step = self.steps(H1)["instructions"][0]
        inv = inventory_for(1)
        inv["disks"][0]["size_bytes"] = 10 * 1000 ** 3
        self.svc.reply(IE, H1, step, json.dumps(inv))
        h = self.svc.host(H1)
        self.assertEqual(h["status"], "insufficient")
        self.assertEqual(h["status_info"], "Host does not meet the minimum hardware requirements: No eligible disks "
                                           "were found, please check specific disks to see why they are not eligible")
        disks = json.loads(h["inventory"])["disks"]
        self.assertEqual(disks[0]["installation_eligibility"]["not_eligible_reasons"],
                         ["Disk is too small (disk only has 10 GB, but 100 GB are required)"])
        # a smaller minimum (tests on loop devices) makes it known
        self.svc.control("POST", "/settings", {"min_disk_size_gb": 1})
        self.svc.reply(IE, H1, step, json.dumps(inv))
        self.assertEqual(self.svc.host(H1)["status"], "known")

    def test_ntp_requirement(self):
        self.svc.control("POST", "/settings", {"require_ntp_synced": True})
        self.discover(H1, 1)
        h = self.svc.host(H1)
        self.assertEqual(h["status_info"], O9["insufficient (inventory only, NTP not synced)"]["status_info"])
        ntp = [s for s in self.steps(H1)["instructions"] if s["step_type"] == "ntp-synchronizer"][0]
        self.svc.reply(IE, H1, ntp, O7["by_step_type"]["ntp-synchronizer"]["request_body"]["output"])
        h = self.svc.host(H1)
        self.assertEqual(h["status"], "known")
        self.assertEqual(h["ntp_sources"], O9["known"]["ntp_sources"])

    def test_unknown_host_404_as_observed(self):
        ie = "cd940517-65a3-4b9f-89b6-410d4e67c989"
        self.svc.control("POST", "/infra-envs", {"id": ie, "name": "late"})
        st, body = self.svc.instructions(ie, "a1a1a1a1-0000-4000-8000-0000000000ff")
        self.assertEqual(st, 404)
        self.assertEqual(body, O6["unknown host id (404)"])

    def test_header_name_near_miss_warned(self):
        self.register(H1)
        self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1),
                     headers={"Discovery-Agent-Version": AGENT})
        rec = self.svc.requests(operation="v2GetNextSteps")[-1]
        self.assertIn("header Discovery-Agent-Version is not discovery_agent_version: the service does not see it",
                      rec["warnings"])

    def test_timestamp_query_validated(self):
        self.register(H1)
        st, body = self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s/instructions?timestamp=abc" % (IE, H1))
        self.assertEqual((st, body["code"]), (422, 601))

    def test_upgrade_agent_step(self):
        self.svc.control("POST", "/settings", {"enable_upgrade_agent": True})
        self.register(H1, version="quay.io/edge-infrastructure/assisted-installer-agent:v0.0.1-old")
        st, body = self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1),
                                headers={"discovery_agent_version": "quay.io/x/agent:old"})
        self.assertEqual(body, O6["upgrade-agent (agent version mismatch, ENABLE_UPGRADE_AGENT=true)"])

    def test_disabled_steps(self):
        self.svc.control("POST", "/settings", {"disabled_steps": ["free-network-addresses", "verify-vips"]})
        self.discover(H1, 1)
        types = [s["step_type"] for s in self.steps(H1)["instructions"]]
        self.assertEqual(types, ["inventory", "ntp-synchronizer", "domain-resolution"])


ARG_MODELS = {
    "connectivity-check": "connectivity-check-params", "free-network-addresses": "free_addresses_request",
    "ntp-synchronizer": "ntp_synchronization_request", "domain-resolution": "domain_resolution_request",
    "verify-vips": "verify_vips_request", "installation-disk-speed-check": "disk_speed_check_request",
    "container-image-availability": "container_image_availability_request", "install": "install_cmd_request",
    "logs-gather": "logs_gather_cmd_request", "upgrade-agent": "upgrade_agent_request",
    "dhcp-lease-allocate": "dhcp_allocation_request", "tang-connectivity-check": "tang_connectivity_request",
}


class TestStepArgs(Base):
    """Every step the service sends carries args its request model accepts (what the agent validates)."""
    scenario = {
        "clusters": [{"id": CL, "vip_dhcp_allocation": True,
                      "tang_servers": '[{"url":"http://198.51.100.5:7500","thumbprint":"abc"}]'}],
        "infra_envs": [{"id": IE, "cluster_id": CL, "additional_ntp_sources": "ntp.example.test"}],
    }

    def check(self, steps, seen):
        for s in steps or []:
            seen.add(s["step_type"])
            if s["step_type"] == "inventory":
                self.assertEqual(len(s["args"]), 1)
                continue
            if s["step_type"] == "stop-installation":
                self.assertEqual(s["args"], [])
                continue
            model = ARG_MODELS[s["step_type"]]
            value = json.loads(s["args"][0])
            self.assertEqual(schema_errors(model, value), [], s)
            if s["step_type"] == "installation-disk-speed-check":
                self.assertEqual(s["args"][1], "480.00")

    def test_all_phases(self):
        seen = set()
        self.three_known()
        for h in (H1, H2, H3):
            self.check(self.steps(h)["instructions"], seen)
        self.svc.install(CL, prepare=True)
        self.check(self.steps(H1)["instructions"], seen)
        self.svc.install(CL, force=True)
        self.check(self.steps(H1)["instructions"], seen)
        self.svc.set_host(H1, status="error")
        self.svc.set_host(H3, status="error")
        self.check(self.steps(H1)["instructions"], seen)
        self.check(self.steps(H3)["instructions"], seen)
        self.svc.control("POST", "/settings", {"enable_upgrade_agent": True})
        self.svc.set_host(H2, status="known")
        st, body = self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H2),
                                headers={"discovery_agent_version": "quay.io/x/agent:old"})
        self.check(body["instructions"], seen)
        self.assertEqual(seen, (set(ARG_MODELS) | {"inventory", "stop-installation"}) - {"verify-vips"})


class TestStepReplies(Base):
    def test_every_observed_reply_204(self):
        self.three_known()
        for k, v in O7["by_step_type"].items():
            body = dict(v["request_body"])
            st, resp = self.svc.api("POST", "/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1), body)
            self.assertEqual(st, v["http_status"], (k, resp))

    def test_error_reply_204(self):
        self.register(H1)
        st, _ = self.svc.api("POST", "/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1),
                             O7["inventory_error_reply (exit_code 1) -> 204"])
        self.assertEqual(st, 204)

    def test_bad_step_type_422_as_observed(self):
        self.register(H1)
        bad = O7["bad step_type -> 422"]
        st, body = self.svc.api("POST", "/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1), bad["request_body"])
        self.assertEqual(st, 422)
        self.assertEqual(body, bad["response"])

    def test_output_decode_errors_400(self):
        self.register(H1)
        step = self.steps(H1)["instructions"][0]
        st, body = self.svc.reply(IE, H1, step, "{not json")
        self.assertEqual(st, 400)
        self.assertEqual(body["kind"], "Error")
        st, body = self.svc.reply(IE, H1, step, json.dumps(inventory_for(1)) + "\n{}")
        self.assertEqual((st, body["reason"]), (400, "invalid character '{' after top-level value"))
        inv = inventory_for(1)
        inv["cpu"]["count"] = "8"
        st, body = self.svc.reply(IE, H1, step, json.dumps(inv))
        self.assertEqual(st, 400)
        self.assertIn("cannot unmarshal string into Go struct field Inventory.cpu.count of type int64",
                      body["reason"])
        st, body = self.svc.api("POST", "/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1),
                                {"step_id": step["step_id"], "step_type": "inventory"})
        self.assertEqual(st, 400, "an empty inventory output does not unmarshal")

    def test_output_validation_recorded(self):
        self.register(H1)
        step = self.steps(H1)["instructions"][0]
        inv = inventory_for(1)
        inv["tpm_version"] = "3.0"
        inv["made_up_key"] = 1
        st, _ = self.svc.reply(IE, H1, step, json.dumps(inv))
        self.assertEqual(st, 204, "the service only unmarshals; it does not Validate()")
        rec = self.svc.requests(operation="v2PostStepReply")[-1]
        self.assertIn("tpm_version in body should be one of [none 1.2 2.0]", rec["step_reply"]["output_errors"])
        self.assertIn("unknown key made_up_key", rec["step_reply"]["output_warnings"])
        rep = self.svc.host(H1)["_replies"][-1]
        self.assertTrue(rep["issued"])

    def test_unissued_step_id_warned(self):
        self.register(H1)
        st, _ = self.svc.reply(IE, H1, {"step_id": "inventory-00000000", "step_type": "inventory"},
                               json.dumps(inventory_for(1)))
        self.assertEqual(st, 204)
        rep = self.svc.host(H1)["_replies"][-1]
        self.assertFalse(rep["issued"])
        self.assertTrue(any("never issued" in w for w in rep["output_warnings"]))

    def test_free_addresses_empty_500(self):
        self.discover(H1, 1)
        st, body = self.svc.reply(IE, H1, {"step_id": "x", "step_type": "free-network-addresses"}, "[]")
        self.assertEqual(st, 500)

    def test_reply_unknown_host_404(self):
        st, body = self.svc.reply(IE, H2, {"step_id": "x", "step_type": "inventory"}, "{}")
        self.assertEqual(st, 404)


class TestInstall(Base):
    def test_install_step_as_observed(self):
        self.three_known()
        self.svc.install(CL, bootstrap_host_id=H3)
        for n, h in enumerate((H1, H2, H3), 1):
            body = self.steps(h)
            self.assertEqual([s["step_type"] for s in body["instructions"]], ["install"])
            step = body["instructions"][0]
            self.assertRegex(step["step_id"], r"^install-[0-9a-f]{8}$")
            exp = O8["install steps (host3 was chosen bootstrap)"]["host%d" % n]
            self.assertEqual(step["args"], exp["args"], "host%d" % n)   # byte-exact
        self.assertEqual(self.svc.host(H3)["bootstrap"], True)
        self.assertEqual(self.svc.host(H1)["status"], "installing")

    def test_install_roles_workers_and_default_bootstrap(self):
        hosts = [str(uuid.UUID(int=i + 1)) for i in range(5)]
        for n, h in enumerate(hosts, 1):
            self.discover(h, n)
        self.connect(hosts)
        self.svc.install(CL)
        roles = []
        for h in hosts:
            args = json.loads(self.steps(h)["instructions"][0]["args"][0])
            roles.append(args["role"])
            self.assertEqual(args["boot_device"], "/dev/disk/by-path/pci-0000:04:00.0")
        self.assertEqual(roles, ["bootstrap", "master", "master", "worker", "worker"])

    def test_install_refused_unless_ready(self):
        self.register(H1)
        r = self.svc.raw("POST", "/__control/clusters/%s/install" % CL, {})
        self.assertEqual(r.status, 409)

    def test_head_style_install_args(self):
        self.svc.control("POST", "/settings", {"install_cmd_style": "head"})
        self.three_known()
        self.svc.install(CL)
        args = json.loads(self.steps(H1)["instructions"][0]["args"][0])
        self.assertEqual(args["control_plane_count"], 3)
        self.assertNotIn("high_availability_mode", args)
        self.assertEqual(schema_errors("install_cmd_request", args), [])
        self.assertEqual(SWAGGER.unknown_keys({"$ref": "#/definitions/install_cmd_request"}, args), [])

    def test_preparing_flow(self):
        self.three_known()
        self.svc.install(CL, prepare=True)
        for h in (H1, H2, H3):
            steps = self.steps(h)["instructions"]
            exp = O6["by_step_type_first_seen"]["installation-disk-speed-check"]["response"]["instructions"]
            self.assertEqual([s["args"] for s in steps], [s["args"] for s in exp])
            for s in steps:
                key = s["step_type"]
                out = O7["by_step_type"][key]["request_body"]["output"]
                self.assertEqual(self.svc.reply(IE, h, s, out)[0], 204)
        # the cluster first, then its hosts on the host monitor's next round
        # (here: before the next call, whoever makes it)
        self.assertEqual([h["status"] for h in self.svc.hosts()], ["preparing-successful"] * 3)
        st, c = self.svc.api("GET", "/v2/clusters/%s" % CL)
        self.assertEqual(c["status"], "installing")
        self.assertEqual([h["status"] for h in c["hosts"]], ["installing"] * 3)
        self.assertEqual([s["step_type"] for s in self.steps(H1)["instructions"]][:1], ["install"])

    def test_sno(self):
        scen = {"clusters": [{"id": CL, "control_plane_count": 1}], "infra_envs": [{"id": IE, "cluster_id": CL}]}
        self.svc.reset(scen)
        body = self.register(H1)
        self.assertEqual((body["role"], body.get("bootstrap")), ("master", True))
        step = self.steps(H1)["instructions"][0]
        self.svc.reply(IE, H1, step, json.dumps(inventory_for(1)))
        self.svc.install(CL)
        args = json.loads(self.steps(H1)["instructions"][0]["args"][0])
        self.assertEqual((args["role"], args["high_availability_mode"]), ("bootstrap", "None"))
        for stage in ("Starting installation", "Installing", "Waiting for bootkube", "Writing image to disk",
                      "Rebooting", "Done"):
            self.assertEqual(self.svc.progress(IE, H1, stage)[0], 200, stage)
        self.assertEqual(self.svc.host(H1)["status"], "installed")
        self.assertEqual(self.svc.api("GET", "/v2/clusters/%s" % CL)[1]["status"], "installed")


class TestProgress(Base):
    def installing(self):
        self.three_known()
        self.svc.install(CL, bootstrap_host_id=H3)

    def test_master_sequence_as_observed(self):
        self.installing()
        seq = [k for k in O11 if k.startswith("host1-progress-")]
        pct = {"Starting installation": 14, "Rebooting": 57, "Done": 100}
        for k in seq:
            body = O11[k]["request_body"]
            r = self.svc.raw("PUT", "/api/assisted-install/v2/infra-envs/%s/hosts/%s/progress" % (IE, H1),
                             json.dumps(body), {"Content-Type": "application/json"})
            self.assertEqual(r.status, O11[k]["http_status"], k)
            self.assertEqual(r.body, b"", "200 with an empty body")
            h = self.svc.host(H1)
            stage = body["current_stage"]
            if stage in pct:
                self.assertEqual(h["progress"]["installation_percentage"], pct[stage])
            if stage == "Starting installation":
                exp = O11["host after Starting installation"]
                self.assertEqual((h["status"], h["status_info"], h["progress_stages"]),
                                 (exp["status"], exp["status_info"], exp["progress_stages"]))
        h = self.svc.host(H1)
        exp = O9["installed (after Done)"]
        self.assertEqual((h["status"], h["status_info"], h["progress"]["current_stage"]),
                         (exp["status"], exp["status_info"], "Done"))
        st, body = self.svc.instructions(IE, H1)
        self.assertEqual(body, O6["after installed (instructions null)"])

    def test_stage_rules(self):
        self.installing()
        self.assertEqual(self.svc.progress(IE, H1, "Installing", "master")[0], 200)
        self.assertEqual(self.svc.progress(IE, H1, "Installing", "master")[0], 200)   # same stage: no-op
        st, body = self.svc.progress(IE, H1, "Starting installation")
        self.assertEqual(st, 409)
        self.assertEqual(body["reason"], 'Can\'t assign lower stage "Starting installation" after host has '
                                         'been in stage "Installing"')
        st, body = self.svc.progress(IE, H1, "Waiting for bootkube")
        self.assertEqual((st, body["reason"]),
                         (409, "Stages Waiting for bootkube isn't available for host role master bootstrap false"))
        st, body = self.svc.progress(IE, H1, "Not a stage")
        self.assertEqual((st, body["code"]), (422, 606))
        # bootstrap may use its own stages
        for s in ("Starting installation", "Installing", "Writing image to disk", "Waiting for control plane",
                  "Waiting for bootkube", "Waiting for controller", "Rebooting"):
            self.assertEqual(self.svc.progress(IE, H3, s)[0], 200, s)
        self.assertEqual(self.svc.host(H3)["progress"]["installation_percentage"], 70)

    def test_failed(self):
        self.installing()
        self.svc.progress(IE, H2, "Starting installation", "master")
        self.assertEqual(self.svc.progress(IE, H2, "Failed", "disk exploded")[0], 200)
        h = self.svc.host(H2)
        self.assertEqual((h["status"], h["status_info"]), ("error", "Failed - disk exploded"))
        self.assertEqual(self.svc.api("GET", "/v2/clusters/%s?exclude-hosts=true" % CL)[1]["status"], "error")
        steps = self.steps(H2)
        self.assertEqual([s["step_type"] for s in steps["instructions"]], ["logs-gather", "stop-installation"])
        self.assertEqual(steps["next_instruction_seconds"], 120)

    def test_progress_before_install_409(self):
        self.discover(H1, 1)
        st, body = self.svc.progress(IE, H1, "Starting installation")
        self.assertEqual((st, body["reason"]),
                         (409, "Can't set progress <Starting installation> to host in status <known>"))

    def test_install_step_failure_reply(self):
        self.installing()
        step = self.steps(H1)["instructions"][0]
        self.assertEqual(self.svc.reply(IE, H1, step, "", exit_code=2, error="pull failed")[0], 204)
        self.assertEqual(self.svc.host(H1)["status"], "error")

    def test_worker_wait_queries(self):
        self.installing()
        st, hosts = self.svc.api("GET", "/v2/clusters/%s/hosts?role=master" % CL)
        self.assertEqual(st, 200)
        self.assertEqual(sorted(h["id"] for h in hosts), [H1, H2, H3])
        self.assertTrue(all("inventory" not in h for h in hosts))
        self.assertEqual(schema_errors("host-list", hosts), [])
        st, body = self.svc.api("GET", "/v2/clusters/%s/hosts?role=boss" % CL)
        self.assertEqual((st, body["code"]), (422, 606))
        st, c = self.svc.api("GET", "/v2/clusters/%s?exclude-hosts=true" % CL)
        self.assertNotIn("hosts", c)
        self.assertEqual(schema_errors("cluster", c), [])
        st, c = self.svc.api("GET", "/v2/clusters/%s?exclude_hosts=true" % CL)
        self.assertEqual(len(c["hosts"]), 3, "the swagger name is exclude-hosts; exclude_hosts is ignored")
        rec = self.svc.requests(operation="v2GetCluster")[-1]
        self.assertTrue(any("exclude_hosts" in w for w in rec["warnings"]))


class TestInstallerOnly(Base):
    """A scenario that starts with the cluster installing: what an installer-only test needs."""
    scenario = {
        "settings": {"min_disk_size_gb": 1},
        "clusters": [{"id": CL, "status": "installing", "files": {"bootstrap.ign": {"ignition": {"version": "3.2.0"},
                                                                                    "storage": {}}}}],
        "infra_envs": [{"id": IE, "cluster_id": CL}],
        "hosts": [{"id": H1, "infra_env_id": IE, "inventory": inventory_for(1), "role": "master",
                   "bootstrap": True, "status": "installing"},
                  {"id": H2, "infra_env_id": IE, "inventory": inventory_for(2), "role": "master",
                   "status": "installing"},
                  {"id": H3, "infra_env_id": IE, "inventory": inventory_for(3), "role": "worker",
                   "status": "installing"}],
    }

    def test_installer_calls(self):
        st, body = self.svc.api("GET", "/v2/clusters/%s/downloads/files?file_name=bootstrap.ign" % CL,
                                headers={"Accept": "application/octet-stream"})
        self.assertEqual(st, 200)
        self.assertEqual(body, {"ignition": {"version": "3.2.0"}, "storage": {}})
        r = self.svc.raw("GET", "/api/assisted-install/v2/infra-env/%s/hosts/%s/downloads/ignition" % (IE, H3))
        self.assertEqual(r.headers["Content-Disposition"], 'attachment; filename="worker-%s.ign"' % H3)
        self.assertEqual(self.svc.progress(IE, H3, "Starting installation", "worker")[0], 200)
        self.assertEqual(self.svc.progress(IE, H3, "Installing", "worker")[0], 200)
        self.assertEqual(self.svc.progress(IE, H3, "Writing image to disk", "50%")[0], 200)
        self.assertEqual(self.svc.progress(IE, H3, "Waiting for control plane")[0], 200)
        # the worker waits for two masters Done
        for h in (H1, H2):
            self.svc.set_host(h, status="installed", stage="Done")
        st, masters = self.svc.api("GET", "/v2/clusters/%s/hosts?role=master" % CL)
        self.assertEqual([m["progress"]["current_stage"] for m in masters], ["Done", "Done"])
        self.assertEqual(self.svc.progress(IE, H3, "Rebooting")[0], 200)
        self.assertEqual(self.svc.host(H3)["progress_stages"][3], "Waiting for control plane")
        st, _ = self.svc.api("PUT", "/v2/infra-envs/%s/hosts/%s/logs-progress" % (IE, H3), {"logs_state": "requested"})
        self.assertEqual(st, 204)


class TestDownloadsAndLogs(Base):
    def test_host_ignition(self):
        self.three_known()
        path = "/v2/infra-env/%s/hosts/%s/downloads/ignition" % (IE, H1)
        r = self.svc.raw("GET", "/api/assisted-install" + path)
        self.assertEqual(r.status, 409, "not while the cluster is not installing")
        self.assertEqual(r.headers["Content-Type"], "application/octet-stream")
        self.assertEqual(json.loads(r.body)["kind"], "Error")
        self.svc.install(CL)
        r = self.svc.raw("GET", "/api/assisted-install" + path)
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["Content-Type"], "application/octet-stream")
        self.assertEqual(r.headers["Content-Disposition"], 'attachment; filename="master-%s.ign"' % H1)
        ign = json.loads(r.body)
        self.assertEqual(ign["ignition"]["version"], "3.2.0")
        r = self.svc.raw("GET", "/api/assisted-install" + path, headers={"Accept": "application/json"})
        self.assertEqual(r.status, 406, "go-openapi refuses a response format it cannot produce")
        self.svc.set_host(H1, ignition={"ignition": {"version": "3.4.0"}})
        r = self.svc.raw("GET", "/api/assisted-install" + path, headers={"Accept": "application/octet-stream"})
        self.assertEqual(json.loads(r.body), {"ignition": {"version": "3.4.0"}})
        r = self.svc.raw("GET", "/api/assisted-install/v2/infra-envs/%s/hosts/%s/downloads/ignition" % (IE, H1))
        self.assertEqual(r.status, 404, "plural infra-envs is not the download path")

    def test_cluster_files(self):
        self.three_known()
        self.svc.install(CL)
        self.svc.control("PUT", "/clusters/%s/files/bootstrap.ign" % CL, b'{"ignition":{"version":"3.2.0"}}')
        r = self.svc.raw("GET", "/api/assisted-install/v2/clusters/%s/downloads/files?file_name=bootstrap.ign" % CL)
        self.assertEqual((r.status, r.body), (200, b'{"ignition":{"version":"3.2.0"}}'))
        r = self.svc.raw("GET", "/api/assisted-install/v2/clusters/%s/downloads/files?file_name=x.ign" % CL)
        self.assertEqual(r.status, 422)
        r = self.svc.raw("GET", "/api/assisted-install/v2/clusters/%s/downloads/files" % CL)
        self.assertEqual((r.status, json.loads(r.body)["message"]), (422, "file_name in query is required"))

    def test_logs_progress(self):
        self.three_known()
        st, _ = self.svc.api("PUT", "/v2/infra-envs/%s/hosts/%s/logs-progress" % (IE, H1), {"logs_state": "requested"})
        self.assertEqual(st, 204)
        self.assertEqual(self.svc.host(H1)["logs_info"], "requested")
        st, _ = self.svc.api("PUT", "/v2/clusters/%s/logs-progress" % CL, {"logs_state": "requested"})
        self.assertEqual(st, 204)
        st, body = self.svc.api("PUT", "/v2/clusters/%s/logs-progress" % CL, {"logs_state": "done"})
        self.assertEqual((st, body["code"]), (422, 606))
        st, body = self.svc.api("PUT", "/v2/clusters/%s/logs-progress" % CL, {})
        self.assertEqual((st, body["message"]), (422, "logs_state in body is required"))

    def test_upload_logs(self):
        self.three_known()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            data = b"hello journal\n"
            ti = tarfile.TarInfo("logs_host_%s/agent.logs" % H1)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
        tgz = buf.getvalue()
        boundary = "b0undary"
        body = ("--%s\r\nContent-Disposition: form-data; name=\"upfile\"; filename=\"logs.tar.gz\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n" % boundary).encode() + tgz + \
            ("\r\n--%s--\r\n" % boundary).encode()
        hdr = {"Content-Type": "multipart/form-data; boundary=%s" % boundary}
        url = "/api/assisted-install/v2/clusters/%s/logs?logs_type=host&host_id=%s&infra_env_id=%s" % (CL, H1, IE)
        r = self.svc.raw("POST", url, body, hdr)
        self.assertEqual(r.status, 204, r.body)
        logs = self.svc.logs()
        self.assertEqual(logs[-1]["tar_members"], ["logs_host_%s/agent.logs" % H1])
        self.assertTrue(logs[-1]["gzip"])
        got = self.svc.control("GET", "/logs/" + logs[-1]["name"])
        self.assertEqual(got, tgz)
        r = self.svc.raw("POST", "/api/assisted-install/v2/clusters/%s/logs" % CL, body, hdr)
        self.assertEqual((r.status, json.loads(r.body)["message"]), (422, "logs_type in query is required"))
        r = self.svc.raw("POST", url, tgz, {"Content-Type": "application/gzip"})
        self.assertEqual(r.status, 415)
        r = self.svc.raw("POST", "/api/assisted-install/v2/clusters/%s/logs?logs_type=controller" % CL, body, hdr)
        self.assertEqual(r.status, 204)

    def test_infra_env_and_host_get(self):
        self.register(H1)
        st, ie = self.svc.api("GET", "/v2/infra-envs/%s" % IE)
        self.assertEqual(st, 200)
        self.assertEqual(schema_errors("infra-env", ie), [])
        self.assertEqual(sorted(ie), sorted(observed("03-infraenv-create.json")[
            "POST /api/assisted-install/v2/infra-envs (bound to cluster)"]["response"]))
        st, lst = self.svc.api("GET", "/v2/infra-envs/%s/hosts" % IE)
        self.assertEqual([h["id"] for h in lst], [H1])
        st, h = self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s" % (IE, H1))
        self.assertEqual((st, h["status"]), (200, "discovering"))


class TestFaultsAndRecording(Base):
    def test_503_twice_then_ok(self):
        self.svc.add_fault(path=r"/hosts$", method="POST", action="status", status=503, count=2)
        self.assertEqual(self.svc.register(IE, H1)[0], 503)
        self.assertEqual(self.svc.register(IE, H1)[0], 503)
        self.assertEqual(self.svc.register(IE, H1)[0], 201)
        faults = self.svc.control("GET", "/faults")
        self.assertEqual(faults[0]["applied"], 2)

    def test_skip_then_fault(self):
        self.register(H1)
        self.svc.add_fault(path="/instructions$", method="GET", status=404, skip=1, count=1)
        self.assertEqual(self.svc.instructions(IE, H1)[0], 200)
        self.assertEqual(self.svc.instructions(IE, H1)[0], 404)
        self.assertEqual(self.svc.instructions(IE, H1)[0], 200)

    def test_reset_and_close(self):
        self.svc.add_fault(path="/hosts$", action="reset")
        with self.assertRaises((ConnectionError, urllib.error.URLError, OSError)):
            self.svc.register(IE, H1)
        self.svc.add_fault(path="/hosts$", action="close")
        with self.assertRaises((ConnectionError, urllib.error.URLError, OSError)):
            self.svc.register(IE, H1)
        self.assertEqual(self.svc.register(IE, H1)[0], 201)
        recs = self.svc.requests(path="/hosts$")
        self.assertEqual([r["fault_action"] for r in recs], ["reset", "close", None])

    def test_garbage_html_truncate_delay(self):
        self.register(H1)
        self.svc.add_fault(path="/instructions$", action="garbage")
        r = self.svc.raw("GET", "/api/assisted-install/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1))
        self.assertEqual(r.status, 200)
        with self.assertRaises(ValueError):
            json.loads(r.body)
        self.svc.add_fault(path="/instructions$", action="html", status=502)
        r = self.svc.raw("GET", "/api/assisted-install/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1))
        self.assertEqual((r.status, r.headers["Content-Type"]), (502, "text/html"))
        self.svc.add_fault(path="/instructions$", action="truncate")
        with self.assertRaises(Exception):
            self.svc.raw("GET", "/api/assisted-install/v2/infra-envs/%s/hosts/%s/instructions" % (IE, H1))
        self.svc.add_fault(path="/instructions$", action="delay", delay=0.2)
        self.assertEqual(self.svc.instructions(IE, H1)[0], 200)
        recs = self.svc.requests(path="/instructions$")
        self.assertEqual([r.get("fault") is not None for r in recs], [True, True, True, True])

    def test_fault_after_processing(self):
        self.svc.add_fault(path="/hosts$", method="POST", status=500, after=True)
        self.assertEqual(self.svc.register(IE, H1)[0], 500)
        self.assertEqual(self.svc.host(H1)["status"], "discovering", "the request was processed")
        rec = self.svc.requests(path="/hosts$")[-1]
        self.assertEqual(rec["processed_status"], 201)

    def test_scenario_faults(self):
        scen = {"faults": [{"path": "/instructions$", "status": 503, "count": 1}]}
        self.svc.reset(scen)
        self.register(H1)
        self.assertEqual(self.svc.instructions(IE, H1)[0], 503)
        self.assertEqual(self.svc.instructions(IE, H1)[0], 200)

    def test_recorded_bodies_and_errors(self):
        self.register(H1)
        self.svc.api("POST", "/v2/infra-envs/%s/hosts" % IE, {"host_id": "nope", "extra": 1})
        recs = self.svc.requests(operation="v2RegisterHost")
        self.assertEqual(recs[0]["body"]["host_id"], H1)
        self.assertEqual(recs[0]["status"], 201)
        self.assertEqual(recs[0]["validation_errors"], [])
        self.assertEqual(recs[1]["validation_errors"], ['host_id in body must be of type uuid: "nope"'])
        self.assertIn("unknown body key extra (ignored by the service)", recs[1]["warnings"])
        with open(self.svc.record_path) as f:
            lines = [json.loads(x) for x in f]
        self.assertEqual(lines[-1]["seq"], recs[-1]["seq"])
        self.svc.control("DELETE", "/requests")
        self.assertEqual(self.svc.requests(), [])

    def test_unknown_path_404(self):
        r = self.svc.raw("GET", "/api/assisted-install/v2/no-such-thing")
        self.assertEqual(json.loads(r.body), {"code": 404, "message":
                                              "path /api/assisted-install/v2/no-such-thing was not found"})


class TestAuth(Base):
    token = "dummy-token-value"

    def test_auth(self):
        ep = "/v2/infra-envs/%s/hosts" % IE
        st, body = self.svc.api("POST", ep, {"host_id": H1}, auth=False)
        self.assertEqual((st, body), (401, {"code": 401, "message": "unauthenticated for invalid credentials"}))
        st, body = self.svc.api("POST", ep, {"host_id": H1}, {"X-Secret-Key": "wrong"}, auth=False)
        self.assertEqual(st, 401)
        self.assertEqual(self.svc.api("POST", ep, {"host_id": H1})[0], 201)
        # the installer's bootstrap.ign download accepts the agent key too
        st, _ = self.svc.api("GET", "/v2/clusters/%s" % CL)
        self.assertEqual(st, 200)
        # v2GetHost is userAuth only
        st, _ = self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s" % (IE, H1))
        self.assertEqual(st, 401)
        st, _ = self.svc.api("GET", "/v2/infra-envs/%s/hosts/%s" % (IE, H1),
                             headers={"Authorization": "Bearer " + self.token})
        self.assertEqual(st, 200)
        with open(self.svc.record_path) as f:
            self.assertNotIn(self.token, f.read())
        recs = self.svc.requests(operation="v2RegisterHost")
        self.assertEqual([r["auth"] for r in recs], ["missing", "wrong", "ok"])

    def test_replay_go_agent_capture(self):
        """The Go agent's own requests (observed/go-agent-wire-capture.json) get the real service's codes."""
        cap = observed("go-agent-wire-capture.json")
        ie = "11111111-2222-3333-4444-555555555555"
        self.svc.control("POST", "/infra-envs", {"id": ie, "name": "capture", "cluster_id": CL})
        reqs = [cap["register_ok_first_request"]] + cap["next_step_runner_session"] + \
            cap["next_step_runner_session_first_run_with_invalid_connectivity_args"]
        # the session's host registered before the capture started
        self.assertEqual(self.svc.register(ie, "e723d39a-3196-4349-91e2-2aeb34c91cce")[0], 201)
        seen = 0
        for rq in reqs:
            if not rq["path"].startswith("/api/assisted-install/"):
                continue   # the capture's own ignition / tang endpoints
            hdrs = {k: v for k, v in rq["headers"].items() if k not in ("Host", "Content-Length")}
            body = json.dumps(rq["body"]) if rq["body"] is not None else None
            r = self.svc.raw(rq["method"], rq["path"], body, hdrs)
            if rq["method"] == "POST" and rq["path"].endswith("/hosts"):
                exp = 201
            elif rq["method"] == "GET":
                exp = 200
            elif rq["body"].get("step_type") == "no-such-step":
                exp = 422   # observed/07: enum validation of step_type
            else:
                exp = 204
            self.assertEqual(r.status, exp, (rq["method"], rq["path"], rq["body"], r.body))
            if exp == 200:
                self.assertEqual(schema_errors("steps", json.loads(r.body)), [])
            seen += 1
        self.assertEqual(seen, 15)


@local_only("its TLS listener")
class TestTLS(unittest.TestCase):
    def test_https(self):
        openssl = shutil.which("openssl")
        if not openssl:
            self.skipTest("openssl command not found")
        with tempfile.TemporaryDirectory() as d:
            cert, key = os.path.join(d, "c.pem"), os.path.join(d, "k.pem")
            subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                            "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with RefService(tls=(cert, key, cert)) as svc:
                self.assertTrue(svc.url.startswith("https://127.0.0.1:"))
                st, body = svc.register(IE, H1)
                self.assertEqual(st, 201)
                # a plain-HTTP client on the TLS port gets no answer, and the server keeps serving
                s = socket.create_connection(("127.0.0.1", int(svc.url.rsplit(":", 1)[1])), timeout=5)
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                try:
                    s.recv(100)
                except OSError:
                    pass
                s.close()
                self.assertEqual(svc.instructions(IE, H1)[0], 200)
            self.assertEqual(svc.returncode, 0)


@local_only("scenario files and its CLI")
class TestScenarios(unittest.TestCase):
    def test_scenario_files(self):
        d = os.path.join(HERE, "scenarios")
        names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
        self.assertIn("lab-3node.json", names)
        for name in names:
            with open(os.path.join(d, name)) as f:
                scen = json.load(f)
            with RefService(extra_args=["--scenario", os.path.join(d, name)]) as svc:
                for ie in scen["infra_envs"]:
                    hid = str(uuid.uuid4())
                    self.assertEqual(svc.register(ie["id"], hid)[0], 201, name)
                    st, steps = svc.instructions(ie["id"], hid)
                    self.assertEqual(st, 200)
                    small = inventory_for(1, "198.51.100.11/24")
                    small["disks"][0]["size_bytes"] = 2 * 1000 ** 3
                    small["cpu"]["count"] = 2
                    small["memory"]["physical_bytes"] = 2 * 1024 ** 3
                    step = steps["instructions"][0]
                    self.assertEqual(svc.reply(ie["id"], hid, step, json.dumps(small))[0], 204)
                    h = svc.host(hid)
                    want = "known" if scen["settings"].get("min_disk_size_gb", 100) <= 2 else "insufficient"
                    self.assertEqual(h["status"].replace("-unbound", ""), want, (name, h["status_info"]))

    def test_bad_scenario_refused(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                json.dump({"clusters": [{"nmae": "typo"}]}, f)
            p = subprocess.run(["/usr/bin/python3", refservice.__file__, "--port", "0", "--scenario", path],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn(b"unknown key(s) nmae", p.stderr)

    def test_cli(self):
        with RefService() as svc:
            port_file = os.path.join(svc.workdir, "port")
            cli = ["/usr/bin/python3", os.path.join(HERE, "refclient.py"), "--port-file", port_file]
            p = subprocess.run(cli + ["api", "POST", "/v2/infra-envs/%s/hosts" % IE, json.dumps({"host_id": H1})],
                               stdout=subprocess.PIPE, timeout=30)
            self.assertEqual(p.returncode, 0)
            self.assertEqual(json.loads(p.stdout)["id"], H1)
            p = subprocess.run(cli + ["ctl", "POST", "/hosts/" + H1, json.dumps({"status": "installed"})],
                               stdout=subprocess.PIPE, timeout=30)
            self.assertEqual(p.returncode, 0)
            p = subprocess.run(cli + ["wait-status", H1, "installed", "5"], timeout=30)
            self.assertEqual(p.returncode, 0)
            p = subprocess.run(cli + ["api", "POST", "/v2/infra-envs/%s/hosts" % IE, json.dumps({"host_id": H1})],
                               stdout=subprocess.PIPE, timeout=30)
            self.assertEqual(p.returncode, 1, "403 after installation")
            p = subprocess.run(cli + ["ctl", "POST", "/settings", json.dumps({"no_such_setting": 1})],
                               stdout=subprocess.PIPE, timeout=30)
            self.assertEqual(p.returncode, 1)
        with RefService(token="cli-t0ken") as svc:
            cli = ["/usr/bin/python3", os.path.join(HERE, "refclient.py"), "--url", svc.url, "--token", "cli-t0ken"]
            p = subprocess.run(cli + ["user", "POST", "/v2/clusters", json.dumps({
                "name": "cli", "openshift_version": "4.13", "pull_secret": HubClient.OBSERVED_PULL_SECRET})],
                stdout=subprocess.PIPE, timeout=30)
            self.assertEqual(p.returncode, 0)
            self.assertEqual(json.loads(p.stdout)["name"], "cli")
            # the agent key is not userAuth
            p = subprocess.run(cli + ["api", "GET", "/v2/infra-envs"], stdout=subprocess.PIPE, timeout=30)
            self.assertEqual(p.returncode, 1)


@local_only("refclient's real-service mode, against a local refservice")
class TestRealServiceMode(unittest.TestCase):
    """refclient with CRADLE_TEST_SERVICE_URL: a refservice started here
    stands for the real service; the helper must start nothing, use that
    URL and token, and skip whatever needs the control API."""

    def setUp(self):
        self.real = RefService(token="real-t0ken").start()
        self.addCleanup(self.real.__exit__, None, None, None)
        self.env = dict(os.environ, CRADLE_TEST_SERVICE_URL=self.real.url + "/",
                        CRADLE_TEST_SERVICE_TOKEN="real-t0ken")
        os.environ.update(CRADLE_TEST_SERVICE_URL=self.real.url + "/", CRADLE_TEST_SERVICE_TOKEN="real-t0ken")
        self.addCleanup(os.environ.pop, "CRADLE_TEST_SERVICE_URL")
        self.addCleanup(os.environ.pop, "CRADLE_TEST_SERVICE_TOKEN")

    def test_library(self):
        with RefService(token="ignored") as svc:
            self.assertTrue(svc.real)
            self.assertIsNone(svc.proc)
            self.assertEqual((svc.url, svc.token), (self.real.url, "real-t0ken"))
            self.assertEqual(svc.register(IE, H1)[0], 201)
            self.assertEqual(self.real.host(H1)["status"], "discovering")
            for call in (lambda: svc.hosts(), lambda: svc.install(CL), lambda: svc.requests(),
                         lambda: svc.reset(), lambda: svc.need_control("the fake's fault injection")):
                with self.assertRaises(unittest.SkipTest) as cm:
                    call()
                self.assertIn("CRADLE_TEST_SERVICE_URL is set", str(cm.exception))
            with self.assertRaises(unittest.SkipTest) as cm:
                svc.control("POST", "/faults", {"path": "x"})
            self.assertEqual(str(cm.exception), "needs the reference service's control API (POST /faults); "
                             "CRADLE_TEST_SERVICE_URL is set")
        self.assertEqual(svc.stop(), None)
        with self.assertRaises(unittest.SkipTest) as cm:
            RefService(scenario={"settings": {}}).start()
        self.assertIn("a scenario", str(cm.exception))

    def test_cli(self):
        cli = ["/usr/bin/python3", os.path.join(HERE, "refclient.py")]

        def run(*args):
            return subprocess.run(cli + list(args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=60)
        p = run("url")
        self.assertEqual((p.returncode, p.stdout), (0, self.real.url + "\n"))
        p = run("api", "POST", "/v2/infra-envs/%s/hosts" % IE, json.dumps({"host_id": H2}))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["id"], H2)
        for args in (("ctl", "GET", "/hosts"), ("wait-status", H2, "known", "1"),
                     ("start", "--port", "0", "--scenario", "s.json")):
            p = run(*args)
            self.assertEqual(p.returncode, 77, args)
            self.assertIn("SKIP: needs the reference service's control API", p.stderr)
        p = run("start", "--port", "0")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no refservice started", p.stderr)
        self.assertEqual([r["status"] for r in self.real.requests(operation="v2RegisterHost")], [201])


@local_only("its command line and listeners")
class TestSelf(unittest.TestCase):
    def test_bind_all_refused(self):
        p = subprocess.run(["/usr/bin/python3", refservice.__file__, "--bind", "0.0.0.0", "--port", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(b"refusing to bind", p.stderr)

    def test_ipv6_loopback(self):
        try:
            s = socket.socket(socket.AF_INET6)
            s.bind(("::1", 0))
            s.close()
        except OSError:
            self.skipTest("no IPv6 loopback here")
        with RefService(bind="::1") as svc:
            self.assertEqual(svc.register(IE, H1)[0], 201)


# ---------------------------------------------------------------------------
# the user-facing API (what cradle-hub calls).  These tests make their own
# objects with unique names through the API and run unchanged against a real
# assisted-service (CRADLE_TEST_SERVICE_URL); only what needs the fake's
# control API skips there.

STATIC_YAML = "interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n  ipv4:\n    enabled: true\n" \
              "    dhcp: false\n    address:\n    - ip: 198.51.100.10\n      prefix-length: 24\n"


def static_host(mac, nic="eth0", net_yaml=None):
    return {"mac_interface_map": [{"mac_address": mac, "logical_nic_name": nic}],
            "network_yaml": STATIC_YAML.replace("eth0", nic) if net_yaml is None else net_yaml}


class HubBase(unittest.TestCase):
    """The user-facing API, against the reference service (in the API
    generation api_generation names: None, its default, and the variants
    below play "2023" and "head") or a real one (CRADLE_TEST_SERVICE_URL).
    Each class learns the generation it talks to from what the service
    says (HubClient.api_generation) and asserts that generation's
    behaviour."""
    svc = None
    api_generation = None
    # the real service evaluates hosts and clusters in a monitor loop, every
    # few seconds: what its monitor decides is waited for that long
    MONITOR_WAIT = 120

    @classmethod
    def setUpClass(cls):
        extra = ["--api-generation", cls.api_generation] if cls.api_generation else None
        cls.svc = RefService(extra_args=extra).start()
        cls.hub = HubClient(cls.svc)
        cls.generation = cls.hub.api_generation()

    @property
    def late_2023(self):
        """The service answers as the late-2023 one (its generation, or the
        reference service's default)."""
        return self.generation != "head"

    def vips(self, api=("192.168.122.100",), ingress=("192.168.122.101",)):
        """VIP fields as the service's API takes them: the late-2023 one
        wants the first of each list also in its singular field (api_vip,
        ingress_vip), which the 2026 one does not have."""
        out = {}
        for kind, ips in (("api", api), ("ingress", ingress)):
            if ips is None:
                continue
            out[kind + "_vips"] = [{"ip": ip} for ip in ips]
            if ips and self.late_2023:
                out[kind + "_vip"] = ips[0]
        return out

    def monitored(self, get, done, what):
        """get() until done(answer) holds: at once on the reference service,
        which applies its monitor when a request is handled; within
        MONITOR_WAIT seconds on a real one. Returns the last answer."""
        deadline = time.monotonic() + (self.MONITOR_WAIT if self.hub.real else 0)
        while True:
            answer = get()
            if done(answer) or time.monotonic() >= deadline:
                break
            time.sleep(1)
        self.assertTrue(done(answer), "%s: %s" % (what, str(answer)[:2000]))
        return answer

    def host_in(self, ie, host, status):
        return self.monitored(lambda: self.hub.host(ie, host),
                              lambda r: r[0] == 200 and r[1].get("status") == status,
                              "host %s %s" % (host, status))[1]

    def need_nmstate(self):
        """Skip unless the service runs nmstate: a static network
        configuration any nmstate accepts is refused by a service built
        without it (its own words say so)."""
        if not self.hub.real:
            return
        if not hasattr(type(self), "_nmstate_refusal"):
            st, ie = self.hub.register_infra_env(static_network_config=[
                static_host("52:54:00:00:00:01", nic="enp1s0")])
            if st == 201:
                self.hub.deregister_infra_env(ie["id"])
                type(self)._nmstate_refusal = None
            else:
                reason = ie.get("reason", "") if isinstance(ie, dict) else ""
                self.assertIn("nmstate GenerateConfiguration failed", reason, (st, ie))
                type(self)._nmstate_refusal = reason
        refusal = type(self)._nmstate_refusal
        if refusal:
            # its words after the configuration nmstate was given
            words = re.search(r"with rc: \d+, (err_msg: .*?)\s*$", refusal, re.S)
            self.skipTest("the service cannot run nmstate: it refuses a valid static network configuration with "
                          "'nmstate GenerateConfiguration failed ... %s'"
                          % (words.group(1) if words else refusal.strip()[:300]))

    @classmethod
    def tearDownClass(cls):
        cls.svc.stop()
        cls.svc.__exit__(None, None, None)

    def setUp(self):
        if not self.hub.real:
            self.svc.reset()
        self.cleanup_ies = []

    def tearDown(self):
        if not self.hub.real:
            self.check_recorded_answers()
        for ie in self.cleanup_ies:
            st, hosts = self.hub.hosts(ie)
            for h in hosts if st == 200 else []:
                self.hub.deregister_host(ie, h["id"])
            self.hub.deregister_infra_env(ie)

    def check_recorded_answers(self):
        """Every JSON answer this test got validates against the schema
        swagger gives its operation and status."""
        for rec in self.svc.requests():
            if rec.get("operation") in (None, "image-service") or rec.get("response") is None:
                continue
            if rec["operation"] == "v2RegisterHost" and rec["response"].get("status") is None:
                continue   # observed/05: a re-registration answers status null, against swagger
            if rec["status"] == 400 and set(rec["response"]) == {"code", "message"}:
                continue   # go-openapi's own answer to a body it does not take, as the service's
            _t, op, _p = SWAGGER.route(rec["method"], rec["path"][len(SWAGGER.base_path):])
            resp = (op or {}).get("responses", {}).get(str(rec["status"]))
            # the service also answers codes swagger does not list (422 of
            # go-openapi, DeregisterInfraEnv's 400, BindHost's 409 ...)
            schema = (resp or {}).get("schema")
            if schema is None:
                continue
            errs = [e.message for e in SWAGGER.validate(SWAGGER.resolve(schema), rec["response"]) if
                    "<redacted>" not in e.message]
            self.assertEqual(errs, [], (rec["operation"], rec["status"]))

    def new_ie(self, **params):
        st, ie = self.hub.register_infra_env(**params)
        self.assertEqual(st, 201, ie)
        self.assertEqual(schema_errors("infra-env", ie), [])
        self.cleanup_ies.append(ie["id"])
        return ie

    def assert_error(self, result, status, reason):
        st, body = result
        self.assertEqual((st, body.get("reason") if isinstance(body, dict) else body), (status, reason))
        self.assertEqual(body, {"code": str(status), "href": "", "id": status, "kind": "Error", "reason": reason})

    def agent_register(self, ie, host_id):
        st, body = self.svc.register(ie, host_id)
        self.assertEqual(st, 201, body)
        return body


class TestInfraEnvs(HubBase):
    def test_register_shape(self):
        params = dict(openshift_version="4.13", cpu_architecture="x86_64", image_type="minimal-iso",
                      additional_ntp_sources="pool.example.com",
                      proxy={"http_proxy": "http://proxy.example.com:3128", "no_proxy": ".example.com"},
                      kernel_arguments=[{"operation": "append", "value": "console=ttyS0"}])
        if self.generation == "2023":
            # its model has no network_discovery_delay_seconds, and its
            # consumer refuses a key the model lacks
            self.assertEqual(self.hub.register_infra_env(network_discovery_delay_seconds=30, **params),
                             (400, {"code": 400, "message": 'parsing infraenvCreateParams body from "" failed, '
                                                           'because json: unknown field '
                                                           '"network_discovery_delay_seconds"'}))
        else:
            params["network_discovery_delay_seconds"] = 30
        ie = self.new_ie(**params)
        for k in ("kind", "id", "href", "name", "type", "created_at", "updated_at", "download_url", "expires_at",
                  "pull_secret_set", "cpu_architecture", "openshift_version", "ssh_authorized_key", "proxy"):
            self.assertIn(k, ie)
        self.assertEqual((ie["kind"], ie["type"], ie["openshift_version"], ie["cpu_architecture"]),
                         ("InfraEnv", "minimal-iso", "4.13", "x86_64"))
        self.assertTrue(ie["pull_secret_set"])
        self.assertNotIn("pull_secret", ie)
        self.assertEqual(ie["href"], "/api/assisted-install/v2/infra-envs/%s" % ie["id"])
        # the proxy as given: an http_proxy alone does not become the https_proxy
        self.assertEqual(ie["proxy"], {"http_proxy": "http://proxy.example.com:3128", "no_proxy": ".example.com"})
        self.assertEqual(json.loads(ie["kernel_arguments"]), [{"operation": "append", "value": "console=ttyS0"}])
        self.assertEqual(ie["additional_ntp_sources"], "pool.example.com")
        if self.generation == "2023":
            self.assertNotIn("network_discovery_delay_seconds", ie)
        else:
            self.assertEqual(ie["network_discovery_delay_seconds"], 30)
        self.assertRegex(ie["download_url"], r"/(byid/%s|byapikey/[^/]+|bytoken/[^/]+)/4\.13/x86_64/minimal\.iso$"
                         % ie["id"])
        if not self.hub.real:
            self.assertEqual(ie["download_url"], "%s/byid/%s/4.13/x86_64/minimal.iso" % (self.svc.url, ie["id"]))
            self.assertEqual(ie["expires_at"], "0001-01-01T00:00:00.000Z")
        self.assertEqual(self.hub.infra_env(ie["id"]), (200, ie))
        # an update of one proxy field keeps the others
        st, upd = self.hub.update_infra_env(ie["id"], proxy={"http_proxy": "http://198.51.100.2:3128"})
        self.assertEqual((st, upd.get("proxy")), (201, {"http_proxy": "http://198.51.100.2:3128",
                                                        "no_proxy": ".example.com"}))

    def test_register_validations(self):
        cases = [
            ({"pull_secret": "not json"}, "pull secret for new infraEnv is invalid: pull secret must be a "
                                          "well-formed JSON"),
            ({"pull_secret": '{"auths":{}}'}, "pull secret for new infraEnv is invalid: pull secret must contain "
                                              "'auths' JSON-object field"),
            ({"ssh_authorized_key": "ssh-rsa nonsense"}, "SSH key is not valid"),
            ({"additional_ntp_sources": "bad_host!"}, "Invalid NTP source: bad_host!"),
            ({"proxy": {"http_proxy": "https://proxy.example.com"}},
             "Failed to validate HTTP Proxy: The URL scheme must be http; https is currently not supported: "
             "'https://proxy.example.com'"),
            ({"kernel_arguments": [{"operation": "delete", "value": "quiet"}]},
             "Only kernel argument operation append is supported.  Got delete"),
            ({"ignition_config_override": '{"ignition": {"version": "2.2.0"}}'},
             "error parsing ignition: unsupported config version"),
            ({"ignition_config_override": "{"}, "error parsing ignition: config is not valid"),
            # a static network configuration refused before nmstate reads it:
            # the late-2023 service checks only the MACs' and NICs'
            # uniqueness and the YAML, the 2026 one also wants a NIC
            ({"static_network_config": [{"mac_interface_map": [], "network_yaml": ""}]},
             "1 error occurred:\n\t* failed to validate network yaml for host 0, cannot generate configuration "
             "with an empty host YAML\n\n" if self.late_2023 else
             "2 errors occurred:\n\t* at least one interface for host 0 must be provided\n\t* failed to validate "
             "network yaml for host 0, cannot generate configuration with an empty host YAML\n\n"),
        ]
        for params, reason in cases:
            with self.subTest(params=params):
                self.assert_error(self.hub.register_infra_env(**params), 400, reason)

    def test_static_network_validations_with_nmstate(self):
        self.need_nmstate()
        self.assert_error(self.hub.register_infra_env(static_network_config=[
            {"mac_interface_map": [{"mac_address": "52:54:00:00:00:01", "logical_nic_name": "eth0"},
                                   {"mac_address": "52:54:00:00:00:01", "logical_nic_name": "eth1"}],
             "network_yaml": STATIC_YAML}]), 400, "1 error occurred:\n\t* MACs and Interfaces for host 0 must be "
                                                  "unique\n\n")
        # a predictable physical name needs no mapping
        self.new_ie(static_network_config=[static_host("52:54:00:00:00:01", nic="eth0",
                                                       net_yaml=STATIC_YAML.replace("eth0", "enp1s0"))])
        # a NIC of the YAML neither mapped nor physical: the 2026 service
        # refuses it, the late-2023 one leaves it to nmstate, which takes it
        unmapped = [static_host("52:54:00:00:00:01"),
                    static_host("52:54:00:00:00:02", nic="eth0", net_yaml=STATIC_YAML.replace("eth0", "mynic"))]
        if self.late_2023:
            self.new_ie(static_network_config=unmapped)
        else:
            self.assert_error(self.hub.register_infra_env(static_network_config=unmapped), 400,
                              "1 error occurred:\n\t* mac-interface mapping for interface mynic is missing and not "
                              "a physical interface\n\n")

    def test_ignition_override_size_limit(self):
        big = {"ignition": {"version": "3.2.0"}, "storage": {"files": [
            {"path": "/etc/big", "contents": {"source": "data:;base64," + base64.b64encode(os.urandom(300 * 1024))
                                              .decode()}}]}}
        st, body = self.hub.register_infra_env(ignition_config_override=json.dumps(big))
        self.assertEqual(st, 400, body)
        self.assertRegex(body["reason"], r"^The ignition archive size \(\d+ KiB\) is over the maximum allowable "
                                         r"size \(256 KiB\)$")
        ok = {"ignition": {"version": "3.1.0"}, "storage": {"files": [{"path": "/etc/small", "mode": 420,
                                                                       "contents": {"source": "data:,hello"}}]}}
        ie = self.new_ie(ignition_config_override=json.dumps(ok))
        self.assertEqual(ie["ignition_config_override"], json.dumps(ok))
        st, data = self.hub.infra_env_file(ie["id"], "discovery.ign")
        self.assertEqual(st, 200)
        ign = json.loads(data)
        self.assertIn("/etc/small", [f["path"] for f in ign["storage"]["files"]])

    def test_static_network_config_stored_sorted(self):
        self.need_nmstate()
        h1 = static_host("52:54:00:00:00:02", nic="eth1")
        h2 = {"mac_interface_map": [{"mac_address": "52:54:00:00:00:09", "logical_nic_name": "eth9"},
                                    {"mac_address": "52:54:00:00:00:03", "logical_nic_name": "eth3"}],
              "network_yaml": STATIC_YAML.replace("eth0", "eth3")}
        ie = self.new_ie(static_network_config=[h1, h2])
        stored = json.loads(ie["static_network_config"])
        self.assertEqual(stored[0]["mac_interface_map"],
                         [{"logical_nic_name": "eth1", "mac_address": "52:54:00:00:00:02"}])
        self.assertEqual([m["logical_nic_name"] for m in stored[1]["mac_interface_map"]], ["eth3", "eth9"])
        self.assertEqual(ie["static_network_config"],
                         json.dumps(stored, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e"))
        st, tar = self.hub.infra_env_file(ie["id"], "static-network-config")
        self.assertEqual(st, 200)
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            names = tf.getnames()
            self.assertIn("/etc/assisted/network/host0/mac_interface.ini", [("/" + n).replace("//", "/")
                                                                           for n in names])
            ini = tf.extractfile([m for m in tf.getmembers() if m.name.endswith("host0/mac_interface.ini")][0])
            self.assertEqual(ini.read().decode(), "52:54:00:00:00:02=eth1")
        # [] clears it
        st, upd = self.hub.update_infra_env(ie["id"], static_network_config=[])
        self.assertEqual(st, 201, upd)
        self.assertNotIn("static_network_config", upd)
        st, data = self.hub.infra_env_file(ie["id"], "static-network-config")
        self.assertEqual((st, data), (200, b""))

    def test_update(self):
        ie = self.new_ie()
        st, upd = self.hub.update_infra_env(ie["id"], image_type="minimal-iso",
                                            additional_ntp_sources="198.51.100.1",
                                            proxy={"http_proxy": "http://198.51.100.2:3128"})
        self.assertEqual(st, 201, upd)
        self.assertEqual(schema_errors("infra-env", upd), [])
        self.assertEqual(upd["type"], "minimal-iso")
        self.assertTrue(upd["download_url"].endswith("/minimal.iso"))
        self.assertNotEqual(upd["download_url"], ie["download_url"])
        self.assertGreater(upd["updated_at"], ie["updated_at"])
        self.assertEqual(upd["proxy"]["http_proxy"], "http://198.51.100.2:3128")
        self.assertEqual(upd["additional_ntp_sources"], "198.51.100.1")
        self.assertEqual(upd["name"], ie["name"])
        # update errors come without the register prefix
        self.assert_error(self.hub.update_infra_env(ie["id"], pull_secret="x"), 400,
                          "pull secret must be a well-formed JSON")
        self.assert_error(self.hub.update_infra_env(ie["id"], ssh_authorized_key="ssh-rsa nonsense"), 400,
                          "SSH key: ssh-rsa nonsense does not match any supported type: ssh-rsa, ssh-ed25519, "
                          "ecdsa-[VARIANT]")
        self.assert_error(self.hub.update_infra_env(str(uuid.uuid4()), image_type="full-iso"), 404,
                          "record not found")
        st, got = self.hub.infra_env(ie["id"])
        self.assertEqual(got["type"], "minimal-iso")
        # kernel arguments: [] clears
        st, upd = self.hub.update_infra_env(ie["id"], kernel_arguments=[{"operation": "append", "value": "a=b"}])
        self.assertEqual(json.loads(upd["kernel_arguments"]), [{"operation": "append", "value": "a=b"}])
        st, upd = self.hub.update_infra_env(ie["id"], kernel_arguments=[])
        self.assertNotIn("kernel_arguments", upd)

    def test_deregister(self):
        ie = self.new_ie()
        host = str(uuid.uuid4())
        self.agent_register(ie["id"], host)
        self.assert_error(self.hub.deregister_infra_env(ie["id"]), 400,
                          "failed to deregister infraEnv %s, 1 hosts are still associated" % ie["id"])
        self.assertEqual(self.hub.deregister_host(ie["id"], host)[0], 204)
        self.assertEqual(self.hub.deregister_infra_env(ie["id"]), (204, b""))
        self.cleanup_ies.remove(ie["id"])
        self.assert_error(self.hub.infra_env(ie["id"]), 404, "record not found")
        self.assert_error(self.hub.deregister_infra_env(ie["id"]), 404, "record not found")

    def test_downloads(self):
        ie = self.new_ie(kernel_arguments=[{"operation": "append", "value": "rd.debug"}])
        st, u = self.hub.call("GET", "/v2/infra-envs/%s/downloads/image-url" % ie["id"])
        self.assertEqual(st, 200, u)
        self.assertEqual(schema_errors("presigned-url", u), [])
        self.assertEqual(u["url"], ie["download_url"])
        st, ign = self.hub.infra_env_file(ie["id"], "discovery.ign")
        self.assertEqual(st, 200, ign)
        # filemiddleware: the name Go-quoted (%q)
        self.assertEqual(self.hub.headers.get("Content-Disposition"), 'attachment; filename="discovery.ign"')
        ign = json.loads(ign)
        units = {u["name"]: u for u in ign["systemd"]["units"]}
        self.assertIn("--infra-env-id %s" % ie["id"], units["agent.service"]["contents"])
        self.assertIn(HubClient.SSH_KEY, ign["passwd"]["users"][0]["sshAuthorizedKeys"])
        st, script = self.hub.infra_env_file(ie["id"], "ipxe-script")
        self.assertEqual(st, 200, script)
        lines = script.decode().split("\n")
        self.assertEqual(lines[0], "#!ipxe")
        self.assertRegex(lines[1], r"^initrd --name initrd \S+/images/%s/pxe-initrd\?\S*arch=x86_64\S*$" % ie["id"])
        self.assertRegex(lines[2], r"^kernel \S+/boot-artifacts/kernel\?arch=x86_64&version=4\.1\d initrd=initrd "
                                   r"coreos\.live\.rootfs_url=\S+/boot-artifacts/rootfs\?arch=x86_64&version=4\.1\d "
                                   r"random\.trust_cpu=on .* rd\.debug$")
        self.assertEqual(lines[3:], ["boot", ""])
        self.assert_error(self.hub.infra_env_file(ie["id"], "discovery.ign", ipxe_script_type="boot-order-control"),
                          400, '"ipxe_script_type"" can be set only for "ipxe-script"')
        st, body = self.hub.infra_env_file(ie["id"], "nonsense")
        self.assertEqual(st, 422, body)
        st, p = self.hub.call("GET", "/v2/infra-envs/%s/downloads/files-presigned?file_name=ipxe-script" % ie["id"])
        self.assertEqual(st, 200, p)
        self.assertRegex(p["url"], r"/api/assisted-install/v2/infra-envs/%s/downloads/files\?file_name=ipxe-script"
                         % ie["id"])
        st, p = self.hub.call("GET", "/v2/infra-envs/%s/downloads/files-presigned?file_name=discovery.ign&"
                                     "ipxe_script_type=boot-order-control" % ie["id"])
        self.assertEqual((st, p.get("reason")), (400, 'ipxe_script_type can be set only for "ipxe-script"'))
        st, chain = self.hub.infra_env_file(ie["id"], "ipxe-script", ipxe_script_type="boot-order-control")
        self.assertEqual(st, 200, chain)
        self.assertRegex(chain.decode(), r"^#!ipxe\nchain \S+/api/assisted-install/v2/infra-envs/%s/downloads/files"
                                         r"\?file_name=ipxe-script(&(api_key|image_token)=[^&\s]+)?"
                                         r"&mac=\$\{net0/mac\}\n$" % ie["id"])

    def test_image_service_standins(self):
        self.svc.need_control("the image-service stand-ins of the fake")
        ie = self.new_ie()
        path = ie["download_url"][len(self.svc.url):]
        r = self.svc.raw("GET", path)
        self.assertEqual(r.status, 200)
        self.assertIn(("infra-env %s" % ie["id"]).encode(), r.body)
        self.assertEqual(self.svc.raw("HEAD", path).status, 200)
        self.assertEqual(self.svc.raw("GET", path.replace(ie["id"], str(uuid.uuid4()))).status, 404)
        st, script = self.hub.infra_env_file(ie["id"], "ipxe-script")
        for url in re.findall(r"(http://\S+)", script.decode()):
            r = self.svc.raw("GET", url[len(self.svc.url):])
            self.assertEqual(r.status, 200, url)

    @local_only("a refservice started with --token")
    def test_signed_urls_with_token(self):
        with RefService(token="hub-t0ken") as svc:
            hub = HubClient(svc)
            st, ie = hub.register_infra_env()
            self.assertEqual(st, 201, ie)
            m = re.match(r"^%s/byapikey/([^/]+)/4\.14/x86_64/full\.iso$" % re.escape(svc.url), ie["download_url"])
            self.assertIsNotNone(m, ie["download_url"])
            self.assertNotIn("hub-t0ken", ie["download_url"])
            self.assertEqual(svc.raw("GET", ie["download_url"][len(svc.url):]).status, 200)
            self.assertEqual(svc.raw("GET", "/byapikey/wrong/4.14/x86_64/full.iso").status, 401)
            # userAuth: Bearer token; none or a wrong one is refused
            self.assertEqual(hub.infra_env(ie["id"])[0], 200)
            r = svc.raw("GET", "/api/assisted-install/v2/infra-envs/%s" % ie["id"])
            self.assertEqual(r.status, 401)
            r = svc.raw("GET", "/api/assisted-install/v2/infra-envs/%s" % ie["id"],
                        headers={"Authorization": "Bearer nope"})
            self.assertEqual(r.status, 401)
            st, p = hub.call("GET", "/v2/infra-envs/%s/downloads/files-presigned?file_name=discovery.ign" % ie["id"])
            self.assertIn("&api_key=", p["url"])
            r = svc.raw("GET", p["url"][len(svc.url):])
            self.assertEqual(r.status, 200)
            self.assertEqual(json.loads(r.body)["ignition"]["version"], "3.1.0")

    @staticmethod
    def agent_unit_token(ignition):
        unit = next(u["contents"] for u in json.loads(ignition)["systemd"]["units"] if u["name"] == "agent.service")
        m = re.search(r"^Environment=PULL_SECRET_TOKEN=(.*)$", unit, re.M)
        return m.group(1) if m else None

    def test_discovery_ignition_without_auth_has_no_agent_token(self):
        """AUTH_TYPE=none: agent.service has no PULL_SECRET_TOKEN (the
        template's {{if .PullSecretToken}})."""
        if self.svc.token:
            self.skipTest("this service has a token (its AUTH_TYPE is not none)")
        ie = self.new_ie()
        st, ign = self.hub.infra_env_file(ie["id"], "discovery.ign")
        self.assertEqual(st, 200, ign)
        self.assertIsNone(self.agent_unit_token(ign))

    @local_only("a refservice started with --token")
    def test_discovery_ignition_carries_the_agent_token(self):
        """AUTH_TYPE=local: agent.service says PULL_SECRET_TOKEN=<the
        infra-env's signed token> (internal/cluster/auth.go AgentToken), the
        one its image URL carries and not the service's own; a host booted
        from it registers with it as X-Secret-Key."""
        with RefService(token="hub-t0ken") as svc:
            hub = HubClient(svc)
            st, ie = hub.register_infra_env()
            self.assertEqual(st, 201, ie)
            st, ign = hub.infra_env_file(ie["id"], "discovery.ign")
            self.assertEqual(st, 200, ign)
            token = self.agent_unit_token(ign)
            self.assertTrue(token)
            self.assertNotEqual(token, "hub-t0ken")
            self.assertIn("/byapikey/%s/" % token, ie["download_url"])
            path = "/api/assisted-install/v2/infra-envs/%s/hosts" % ie["id"]
            body = json.dumps({"host_id": str(uuid.uuid4())}).encode()
            r = svc.raw("POST", path, body, {"Content-Type": "application/json", "X-Secret-Key": token})
            self.assertEqual(r.status, 201, r.body)
            r = svc.raw("POST", path, body, {"Content-Type": "application/json"})
            self.assertEqual(r.status, 401, r.body)

    # AUTH_TYPE=local: the infra-env's key of a presigned URL passes urlAuth
    # for any operation, as the real local authenticator's: the events of
    # the infra-env, of a cluster, of a host (the debug URLs cradle-hub
    # publishes); not the userAuth-only ones
    @local_only("a refservice started with --token")
    def test_local_auth_infra_env_key_opens_every_url_operation(self):
        with RefService(token="hub-t0ken") as svc:
            hub = HubClient(svc)
            st, ie = hub.register_infra_env()
            self.assertEqual(st, 201, ie)
            st, p = hub.call("GET", "/v2/infra-envs/%s/downloads/files-presigned?file_name=discovery.ign" % ie["id"])
            self.assertEqual(st, 200, p)
            key = urllib.parse.parse_qs(urllib.parse.urlsplit(p["url"]).query)["api_key"][0]
            for q in ("infra_env_id=%s" % ie["id"], "cluster_id=%s" % uuid.uuid4(), "host_id=%s" % uuid.uuid4()):
                r = svc.raw("GET", "/api/assisted-install/v2/events?api_key=%s&%s" % (key, q))
                self.assertEqual(r.status, 200, (q, r.body))
            r = svc.raw("GET", "/api/assisted-install/v2/events?api_key=wrong&infra_env_id=%s" % ie["id"])
            self.assertEqual(r.status, 401)
            r = svc.raw("GET", "/api/assisted-install/v2/clusters?api_key=%s" % key)
            self.assertEqual(r.status, 401)


class TestEvents(HubBase):
    def test_trigger_event(self):
        """v2TriggerEvent (the controller's reboots_for_node): 201, the event
        listed at the service's time; another category refused (400)."""
        ie = self.new_ie()
        host = str(uuid.uuid4())
        self.agent_register(ie["id"], host)
        ev = {"category": "user", "host_id": host, "infra_env_id": ie["id"], "name": "reboots_for_node",
              "message": "Node w-0 has been rebooted 2 times before completing installation",
              "severity": "info", "event_time": "2001-01-01T00:00:00.000Z"}
        st, body = self.hub.agent_call("POST", "/v2/events", ev)
        self.assertEqual(st, 201, body)
        st, evs = self.hub.events(host_ids=[host])
        mine = [e for e in evs if e["name"] == "reboots_for_node"]
        self.assertEqual(len(mine), 1, evs)
        self.assertEqual((mine[0]["message"], mine[0]["severity"], mine[0]["infra_env_id"]),
                         (ev["message"], "info", ie["id"]))
        self.assertNotEqual(mine[0]["event_time"], ev["event_time"])
        # swagger's enum refuses another category before the handler's 400
        st, body = self.hub.agent_call("POST", "/v2/events", dict(ev, category="nope"))
        self.assertEqual(st, 422, body)
        st, body = self.hub.agent_call("POST", "/v2/events", {"message": "no severity"})
        self.assertEqual(st, 422, body)

    def test_infra_env_and_host_events(self):
        ie = self.new_ie()
        st, evs = self.hub.events(infra_env_id=ie["id"])
        self.assertEqual(st, 200, evs)
        self.assertEqual(schema_errors("event-list", evs), [])
        names = [e["name"] for e in evs]
        self.assertIn("infra_env_registered", names)
        self.assertIn("image_info_updated", names)
        img = [e for e in evs if e["name"] == "image_info_updated"][0]
        self.assertEqual(img["message"], 'Updated image information (Image type is "full-iso", SSH public key is set)')
        self.assertEqual(self.hub.headers.get("Event-Count"), str(len(evs)))
        host = str(uuid.uuid4())
        self.agent_register(ie["id"], host)
        st, hevs = self.hub.events(host_ids=[host])
        self.assertEqual(st, 200, hevs)
        reg = [e for e in hevs if e["name"] == "host_registration_succeeded"]
        self.assertEqual(len(reg), 1, hevs)
        self.assertEqual(reg[0]["message"], "Host %s: Successfully registered" % host)
        self.assertEqual((reg[0]["host_id"], reg[0]["infra_env_id"], reg[0]["severity"]), (host, ie["id"], "info"))
        # resume after the last seen event: offset and event_time order
        st, all_evs = self.hub.events(infra_env_id=ie["id"])
        times = [e["event_time"] for e in all_evs]
        self.assertEqual(times, sorted(times))
        st, tail = self.hub.events(infra_env_id=ie["id"], offset=len(evs))
        self.assertEqual(tail, all_evs[len(evs):])
        st, first = self.hub.events(infra_env_id=ie["id"], limit=1)
        self.assertEqual(first, all_evs[:1])
        self.assertEqual(self.hub.headers.get("Event-Count"), str(len(all_evs)))
        st, desc = self.hub.events(infra_env_id=ie["id"], order="descending")
        self.assertEqual(desc, list(reversed(all_evs)))
        st, none = self.hub.events(infra_env_id=ie["id"], categories=["metrics"])
        self.assertEqual((st, none), (200, []))
        st, body = self.hub.events(host_ids=["not-a-uuid"])
        self.assertEqual(st, 422, body)

    def test_host_status_events(self):
        self.svc.need_control("a host known-unbound from the observed inventory alone (the fake's validations)")
        ie = self.new_ie()
        host = str(uuid.uuid4())
        self.agent_register(ie["id"], host)
        st, steps = self.svc.instructions(ie["id"], host)
        st, _ = self.svc.reply(ie["id"], host, steps["instructions"][0], json.dumps(inventory_for(7)))
        self.assertEqual(st, 204)
        st, evs = self.hub.events(host_ids=[host])
        msgs = [e["message"] for e in evs if e["name"] == "host_status_updated"]
        self.assertEqual(msgs, ["Host master-7: updated status from discovering-unbound to known-unbound "
                                "(Host is ready to be bound to a cluster)"])


class TestHostsUserSide(HubBase):
    def discovered(self, ie=None, n=5):
        """A host of a late-binding infra-env with the observed inventory
        (known-unbound on the fake)."""
        if ie is None:
            ie = self.new_ie()["id"]
        host = str(uuid.uuid4())
        self.agent_register(ie, host)
        st, steps = self.svc.instructions(ie, host)
        self.assertEqual(st, 200, steps)
        inv = [s for s in steps["instructions"] or [] if s["step_type"] == "inventory"][0]
        st, body = self.svc.reply(ie, host, inv, json.dumps(inventory_for(n)))
        self.assertEqual(st, 204, body)
        return ie, host

    def test_list_and_get(self):
        ie, host = self.discovered()
        st, hosts = self.hub.hosts(ie)
        self.assertEqual((st, [h["id"] for h in hosts]), (200, [host]))
        self.assertEqual(schema_errors("host-list", hosts), [])
        st, h = self.hub.host(ie, host)
        self.assertEqual(st, 200, h)
        self.assertEqual(schema_errors("host", h), [])
        self.assertEqual(h["requested_hostname"], "master-5")
        self.assertNotIn("free_addresses", h)
        self.assertNotIn("approved", h)
        # the infra-env is looked up first
        self.assert_error(self.hub.hosts(str(uuid.uuid4())), 404, "record not found")
        missing = str(uuid.uuid4())
        self.assert_error(self.hub.host(ie, missing), 404,
                          "failed to get host %s in infra_env %s: record not found" % (missing, ie))

    def test_update_host(self):
        ie, host = self.discovered()
        st, h = self.hub.update_host(ie, host, host_name="node-a.example.com", host_role="worker")
        self.assertEqual(st, 201, h)
        self.assertEqual(schema_errors("host", h), [])
        self.assertEqual((h["requested_hostname"], h["role"]), ("node-a.example.com", "worker"))
        self.assert_error(self.hub.update_host(ie, host, host_name="Bad_Name"), 400,
                          "Hostname does not pass required regex validation: "
                          "^[a-z0-9][a-z0-9-]{0,62}(?:[.][a-z0-9-]{1,63})*$. Hostname: Bad_Name")
        self.assert_error(self.hub.update_host(ie, host, disks_selected_config=[
            {"id": "/dev/nonexistent", "role": "install"}]), 409,
            "Requested installation disk is not part of the host's valid disks")
        self.assert_error(self.hub.update_host(ie, host, disks_selected_config=[
            {"id": "/dev/a", "role": "install"}, {"id": "/dev/b", "role": "install"}]), 409,
            "duplicate setting of installation path by the user")
        # a day-1 host takes a pool too (any host before its installation)
        st, h = self.hub.update_host(ie, host, machine_config_pool_name="infra")
        self.assertEqual((st, h.get("machine_config_pool_name")), (201, "infra"))
        st, h = self.hub.update_host(ie, host, node_labels=[{"key": "node-role.kubernetes.io/infra", "value": ""},
                                                            {"key": "b", "value": "1"}])
        self.assertEqual(st, 201, h)
        self.assertEqual(json.loads(h["node_labels"]), {"b": "1", "node-role.kubernetes.io/infra": ""})
        self.assert_error(self.hub.update_host(ie, host, node_labels=[{"key": "bad key", "value": "x"}]), 400,
                          "node_labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, "
                          "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                          "'my.name',  or '123-abc', regex used for validation is "
                          "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
        disk = json.loads(h["inventory"])["disks"][0]
        disk_id = disk.get("id") or "/dev/" + disk["name"]
        st, h = self.hub.update_host(ie, host, disks_skip_formatting=[{"disk_id": disk_id, "skip_formatting": True}])
        self.assertEqual((st, h.get("skip_formatting_disks")), (201, disk_id))
        st, body = self.hub.update_host(ie, host, disks_skip_formatting=[{"disk_id": "/dev/zz",
                                                                          "skip_formatting": True}])
        self.assertEqual(st, 400, body)
        self.assertTrue(body["reason"].startswith("Disk identifier /dev/zz doesn't match any disk in the inventory, "
                                                  "it cannot be skipped. Inventory disk identifiers are: "), body)
        missing = str(uuid.uuid4())
        self.assert_error(self.hub.update_host(ie, missing, host_role="master"), 404,
                          "failed to get host %s in infra_env %s: record not found" % (missing, ie))

    def test_role_refused_after_installation_started(self):
        self.svc.need_control("setting a host's status")
        ie, host = self.discovered()
        self.hub.set_host(host, status="installing")
        self.assert_error(self.hub.update_host(ie, host, host_role="master"), 500,
                          "Host is in installing state, host role can be set only in one of "
                          "[discovering known disconnected insufficient pending-for-input] states")
        self.assert_error(self.hub.update_host(ie, host, host_name="late"), 409,
                          "Host is in installing state, host name can be set only in one of [discovering known "
                          "disconnected insufficient pending-for-input disconnected-unbound insufficient-unbound "
                          "discovering-unbound known-unbound binding] states")
        self.assert_error(self.hub.update_host(ie, host, machine_config_pool_name="infra"), 409,
                          "Host is in installing state, host machine config pool can be set only in one of "
                          "[discovering known disconnected insufficient pending-for-input] states")

    def test_installer_args_and_ignition(self):
        ie, host = self.discovered()
        args = ["--append-karg", "ip=enp1s0:dhcp", "--save-partindex", "1"]
        st, h = self.hub.call("PATCH", "/v2/infra-envs/%s/hosts/%s/installer-args" % (ie, host), {"args": args})
        self.assertEqual(st, 201, h)
        self.assertEqual(json.loads(h["installer_args"]), args)
        self.assert_error(self.hub.call("PATCH", "/v2/infra-envs/%s/hosts/%s/installer-args" % (ie, host),
                                        {"args": ["--karg-nonsense"]}), 400,
                          "found unexpected flag --karg-nonsense for installer - allowed flags are [--append-karg "
                          "--delete-karg -n --copy-network --network-dir --save-partlabel --save-partindex "
                          "--image-url --image-file]")
        ign = json.dumps({"ignition": {"version": "3.2.0"}, "storage": {"files": [
            {"path": "/etc/extra", "contents": {"source": "data:,x"}}]}})
        st, body = self.hub.call("PATCH", "/v2/infra-envs/%s/hosts/%s/ignition" % (ie, host), {"config": ign})
        self.assertEqual((st, body), (201, b""))
        st, h = self.hub.host(ie, host)
        if self.late_2023:
            # b29f9bcf reads the cluster of the host after the event: a host
            # bound to none panics there, the update is rolled back and 201
            # answered
            self.assertNotIn("ignition_config_overrides", h)
        else:
            self.assertEqual(h["ignition_config_overrides"], ign)
        self.assert_error(self.hub.call("PATCH", "/v2/infra-envs/%s/hosts/%s/ignition" % (ie, host),
                                        {"config": '{"ignition":{"version":"9.9.9"}}'}), 400,
                          "error parsing ignition: unsupported config version")
        st, evs = self.hub.events(host_ids=[host])
        names = [e["name"] for e in evs]
        self.assertIn("host_installer_args_applied", names)
        self.assertIn("host_discovery_ignition_config_applied", names)

    def test_bind_unbind_errors(self):
        ie, host = self.discovered()
        missing = str(uuid.uuid4())
        self.assert_error(self.hub.bind_host(ie, host, missing), 400, "Failed to find cluster %s" % missing)
        self.assert_error(self.hub.unbind_host(ie, host), 409, "Host %s is already unbound" % host)
        self.assert_error(self.hub.bind_host(ie, missing, missing), 404,
                          "failed to get host %s in infra_env %s: record not found" % (missing, ie))
        # a host bound to no cluster: a 404 with a nil error's text
        self.assert_error(self.hub.call("POST", "/v2/infra-envs/%s/hosts/%s/actions/install" % (ie, host)), 404,
                          "error is nil")


class TestClusters(HubBase):
    def setUp(self):
        HubBase.setUp(self)
        self.cleanup_clusters = []

    def tearDown(self):
        HubBase.tearDown(self)
        for c in self.cleanup_clusters:
            self.hub.call("POST", "/v2/clusters/%s/actions/cancel" % c)
            self.hub.deregister_cluster(c)

    def new_cluster(self, **params):
        st, c = self.hub.register_cluster(**params)
        self.assertEqual(st, 201, c)
        self.assertEqual(schema_errors("cluster", c), [])
        self.cleanup_clusters.append(c["id"])
        return c

    def sno(self):
        """A single-node cluster in the API's words: the late-2023 one has
        only the availability mode, the 2026 one counts control planes."""
        return {"high_availability_mode": "None"} if self.late_2023 else {"control_plane_count": 1}

    def cluster_hosts(self, c, n=3):
        """n hosts of an infra-env bound to cluster c, discovered with the
        observed inventory (192.168.122.1x/24)."""
        ie = self.new_ie(cluster_id=c["id"])["id"]
        hosts = []
        for i in range(1, n + 1):
            host = str(uuid.uuid4())
            self.agent_register(ie, host)
            st, steps = self.svc.instructions(ie, host)
            inv = [s for s in steps["instructions"] or [] if s["step_type"] == "inventory"][0]
            self.assertEqual(self.svc.reply(ie, host, inv, json.dumps(inventory_for(i)))[0], 204)
            hosts.append(host)
        return ie, hosts

    def test_register_shape_and_defaults(self):
        c = self.new_cluster(machine_networks=[{"cidr": "192.168.122.0/24"}], **self.vips())
        platform = {"type": "baremetal"} if self.generation == "head" else {"is_external": False, "type": "baremetal"}
        # the registrar's status: the monitor has not looked at it yet
        for k, v in (("kind", "Cluster"), ("status", "insufficient"),
                     ("status_info", "Cluster is not ready for install"),
                     ("openshift_version", "4.13.18"), ("high_availability_mode", "Full"),
                     ("network_type", "OVNKubernetes"), ("hyperthreading", "all"), ("user_managed_networking", False),
                     ("vip_dhcp_allocation", False), ("pull_secret_set", True), ("schedulable_masters", False),
                     ("platform", platform), ("hosts", []),
                     ("ocp_release_image", "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64")):
            self.assertEqual(c.get(k), v, k)
        self.assertNotIn("validations_info", c)
        if self.generation == "head":
            self.assertEqual(c["control_plane_count"], 3)
        else:
            self.assertNotIn("control_plane_count", c)
            self.assertEqual((c["api_vip"], c["ingress_vip"]), ("192.168.122.100", "192.168.122.101"))
        self.assertEqual(c["cluster_networks"], [{"cidr": "10.128.0.0/14", "cluster_id": c["id"], "host_prefix": 23}])
        self.assertEqual(c["service_networks"], [{"cidr": "172.30.0.0/16", "cluster_id": c["id"]}])
        self.assertEqual([v["ip"] for v in c["api_vips"]], ["192.168.122.100"])
        self.assertEqual([o["name"] for o in c["monitored_operators"]], ["console"])
        st, got = self.monitored(lambda: self.hub.cluster(c["id"]),
                                 lambda r: r[0] == 200 and "validations_info" in r[1], "the monitor's validations")
        self.assertEqual(got["id"], c["id"])
        v = json.loads(got["validations_info"])
        self.assertEqual([x["id"] for x in v["hosts-data"]], ["all-hosts-are-ready-to-install",
                                                              "sufficient-masters-count"])
        self.assertEqual([x["status"] for x in v["hosts-data"] if x["id"] == "sufficient-masters-count"], ["failure"])
        self.assertEqual((got["status"], got["status_info"]), ("insufficient", "Cluster is not ready for install"))
        st, evs = self.hub.events(cluster_id=c["id"])
        self.assertIn("Successfully registered cluster", [e["message"] for e in evs])
        # without VIPs a multi-node cluster waits for input, once the
        # monitor has seen it
        c2 = self.new_cluster()
        self.assertEqual((c2["status"], c2["status_info"]), ("insufficient", "Cluster is not ready for install"))
        self.monitored(lambda: self.hub.cluster(c2["id"]),
                       lambda r: r[0] == 200 and (r[1]["status"], r[1]["status_info"]) ==
                       ("pending-for-input", "User input required"), "pending for input")

    def test_register_validations(self):
        vip, ivip = {"ip": "192.168.122.100"}, {"ip": "192.168.122.101"}
        if self.late_2023:
            # the late-2023 service wants the singular fields beside the lists
            self.assert_error(self.hub.register_cluster(api_vips=[vip], ingress_vips=[ivip]), 400,
                              "request must include apiVIP alongside apiVIPs")
            self.assert_error(self.hub.register_cluster(api_vips=[vip], api_vip="192.168.122.102",
                                                        **self.vips(api=None)), 400,
                              "apiVIP must be the same as the first element of apiVIPs")
        if self.generation == "2023":
            self.assertEqual(self.hub.register_cluster(control_plane_count=1),
                             (400, {"code": 400, "message": 'parsing newClusterParams body from "" failed, because '
                                                           'json: unknown field "control_plane_count"'}))
        # the VIPs first (validateVIPAddresses: the input as one
        # go-multierror, then user-managed networking, DHCP, the machine
        # network), then the single-node rules, the pull secret, the name
        one_api = self.vips(ingress=None)
        cases = [
            (one_api, "1 error occurred:\n\t* configuration must include the same number of apiVIPs (got 1) and "
                      "ingressVIPs (got 0)\n\n"),
            (dict(one_api, user_managed_networking=True),
             "1 error occurred:\n\t* configuration must include the same number of apiVIPs (got 1) and "
             "ingressVIPs (got 0)\n\n"),
            (dict(self.vips(api=("192.168.122.100", "192.168.122.102"))),
             "1 error occurred:\n\t* configuration must include the same number of apiVIPs (got 2) and "
             "ingressVIPs (got 1)\n\n"),
            (dict(self.vips(), user_managed_networking=True),
             "API VIP cannot be set with User Managed Networking" if self.late_2023 else
             "API VIPs cannot be set with User Managed Networking"),
            (dict(self.vips(), vip_dhcp_allocation=True),
             "Setting API VIP is forbidden when cluster is in vip-dhcp-allocation mode" if self.late_2023 else
             "Setting API VIPs is forbidden when cluster is in vip-dhcp-allocation mode"),
            (dict(self.vips(), machine_networks=[{"cidr": "10.0.0.0/24"}]),
             "1 error occurred:\n\t* api-vip <192.168.122.100> does not belong to machine-network-cidr "
             "<10.0.0.0/24>\n\n"),
            (dict(self.sno(), user_managed_networking=False),
             "Can't disable user-managed-networking on single node OpenShift"),
            (dict(self.sno(), vip_dhcp_allocation=True),
             "VIP DHCP Allocation cannot be enabled on single node OpenShift"),
            (dict(self.sno(), network_type="OpenShiftSDN"),
             "OpenShiftSDN network type is not allowed in single node mode"),
            ({"pull_secret": "{}"}, "pull secret for new cluster is invalid: pull secret must contain 'auths' "
                                    "JSON-object field"),
            ({"name": "Bad_Name"}, "Cluster name format is not valid: 'Bad_Name'. Name must start and end with "
                                   "either a "
                                   "letter or number and consist of lower-case letters, numbers, and hyphens. "
                                   "Subdomains in cluster names are only valid with none platform."),
        ]
        for params, reason in cases:
            with self.subTest(params=params):
                self.assert_error(self.hub.register_cluster(**params), 400, reason)

    def test_registration_takes_no_release_image_and_reports_its_own(self):
        """REST registration never reads ocp_release_image (b29f9bcf and 2026
        inventory.go: the release is the one openshift_version resolves
        to), and the answer names the release registered."""
        st, versions = self.hub.call("GET", "/v2/openshift-versions")
        self.assertEqual(st, 200, versions)
        key, offer = next((k, v) for k, v in sorted(versions.items()) if "x86_64" in v["cpu_architectures"])
        asked = "quay.io/openshift-release-dev/ocp-release:%s.987-x86_64" % ".".join(key.split(".")[:2])
        c = self.new_cluster(openshift_version=key, ocp_release_image=asked, cpu_architecture="x86_64")
        self.assertEqual(c["openshift_version"], offer["display_name"])
        self.assertNotEqual(c["ocp_release_image"], asked)
        self.assertTrue(c["ocp_release_image"])

    def test_sno_defaults(self):
        c = self.new_cluster(high_availability_mode="None")
        self.assertEqual((c["high_availability_mode"], c["user_managed_networking"], c["network_type"],
                          c["platform"]["type"]), ("None", True, "OVNKubernetes", "none"))

    def test_update_vip_rules(self):
        c = self.new_cluster()
        cid = c["id"]
        if self.late_2023:
            self.assert_error(self.hub.update_cluster(cid, api_vips=[{"ip": "192.168.122.100"}]), 400,
                              "request must include apiVIP alongside apiVIPs")
        self.assert_error(self.hub.update_cluster(cid, **self.vips(ingress=None)), 400,
                          "1 error occurred:\n\t* configuration must include the same number of apiVIPs (got 1) and "
                          "ingressVIPs (got 0)\n\n")
        self.assert_error(self.hub.update_cluster(cid, machine_networks=[{"cidr": "192.168.122.0/24"}]), 400,
                          "Setting Machine network CIDR is forbidden when cluster is not in vip-dhcp-allocation mode")
        self.assert_error(self.hub.update_cluster(cid, **self.vips()), 400,
                          "Calculate machine network CIDR: No suitable matching CIDR found for VIP 192.168.122.100")
        self.cluster_hosts(c, 1)
        st, upd = self.hub.update_cluster(cid, **self.vips())
        self.assertEqual(st, 201, upd)
        self.assertEqual(schema_errors("cluster", upd), [])
        self.assertEqual([m["cidr"] for m in upd["machine_networks"]], ["192.168.122.0/24"])
        self.assertEqual([v["ip"] for v in upd["api_vips"]], ["192.168.122.100"])
        if self.late_2023:
            self.assertEqual(upd["api_vip"], "192.168.122.100")
        else:
            self.assertNotIn("api_vip", upd)
        # user-managed networking refuses the VIPs the cluster would keep
        # (the late-2023 service names its singular field first); it comes
        # with the VIPs cleared, and clears the machine networks
        self.assert_error(self.hub.update_cluster(cid, user_managed_networking=True), 400,
                          "User Managed Networking cannot be set with API VIP" if self.late_2023 else
                          "User Managed Networking cannot be set with API VIPs")
        if self.late_2023:
            self.assert_error(self.hub.update_cluster(cid, user_managed_networking=True, api_vips=[],
                                                      ingress_vips=[]), 400,
                              "User Managed Networking cannot be set with API VIP")
        cleared = {"api_vips": [], "ingress_vips": []}
        if self.late_2023:
            cleared.update(api_vip="", ingress_vip="")
        st, upd = self.hub.update_cluster(cid, user_managed_networking=True, **cleared)
        self.assertEqual((st, upd.get("api_vips"), upd.get("machine_networks"), upd.get("platform", {}).get("type"),
                          upd.get("user_managed_networking")), (201, [], [], "none", True), upd)
        st, upd = self.hub.update_cluster(cid, name="renamed", base_dns_domain="example.org")
        self.assertEqual((upd["name"], upd["base_dns_domain"]), ("renamed", "example.org"))

    def latest_os_image(self):
        """x.y of the newest release the service offers (GetOsImageOrLatest's
        latest: every offered release has an OS image)."""
        st, versions = self.hub.call("GET", "/v2/openshift-versions")
        self.assertEqual(st, 200, versions)
        return max((".".join(k.split("-")[0].split(".")[:2]) for k in versions),
                   key=lambda v: [int(x) for x in v.split(".")])

    def test_register_bound_to_cluster(self):
        c = self.new_cluster(openshift_version="4.13.18")
        # the infra-env's OS image is the one it asks for, else the latest:
        # not the cluster's (both generations read only the request)
        ie = self.new_ie(cluster_id=c["id"])
        self.assertEqual((ie["cluster_id"], ie["openshift_version"]), (c["id"], self.latest_os_image()))
        ie13 = self.new_ie(cluster_id=c["id"], openshift_version="4.13")
        self.assertEqual(ie13["openshift_version"], "4.13")
        st, ies = self.hub.list_infra_envs(c["id"])
        self.assertEqual((st, sorted(x["id"] for x in ies)), (200, sorted([ie["id"], ie13["id"]])))
        st, all_ies = self.hub.list_infra_envs()
        self.assertIn(ie["id"], [x["id"] for x in all_ies])
        missing = str(uuid.uuid4())
        self.assert_error(self.hub.register_infra_env(cluster_id=missing), 404,
                          "Cluster ID %s does not exist" % missing)

    def test_cluster_events_filters_and_severity_counts(self):
        c = self.new_cluster()
        st, evs = self.hub.events(cluster_id=c["id"])
        self.assertEqual(st, 200, evs)
        self.assertIn("cluster_registration_succeeded", [e["name"] for e in evs])
        self.assertTrue(all(e["cluster_id"] == c["id"] for e in evs))
        infos = sum(1 for e in evs if e["severity"] == "info")
        self.assertEqual(self.hub.headers.get("Severity-Count-Info"), str(infos))
        st, lvl = self.hub.events(cluster_id=c["id"], cluster_level=True)
        self.assertTrue(all("host_id" not in e for e in lvl))
        st, msg = self.hub.events(cluster_id=c["id"], message="SUCCESSFULLY REGISTERED")
        self.assertEqual([e["name"] for e in msg], ["cluster_registration_succeeded"])

    def test_bind_unbind(self):
        c = self.new_cluster()
        ie = self.new_ie()["id"]
        host = str(uuid.uuid4())
        self.agent_register(ie, host)
        # only a known-unbound host binds (the host state machine has no
        # other rule)
        self.assert_error(self.hub.bind_host(ie, host, c["id"]), 500, "no condition found to run transition")
        st, steps = self.svc.instructions(ie, host)
        self.svc.reply(ie, host, steps["instructions"][0], json.dumps(inventory_for(4)))
        self.host_in(ie, host, "known-unbound")
        st, h = self.hub.bind_host(ie, host, c["id"])
        self.assertEqual(st, 200, h)
        self.assertEqual((h["status"], h["status_info"], h["cluster_id"]),
                         ("binding", "Host is waiting to be bound to the cluster", c["id"]))
        self.assert_error(self.hub.bind_host(ie, host, c["id"]), 409,
                          "Host %s is already bound to cluster %s" % (host, c["id"]))
        st, steps = self.svc.instructions(ie, host)
        self.assertEqual(steps["post_step_action"], "exit")
        self.agent_register(ie, host)
        st, h = self.hub.host(ie, host)
        self.assertEqual((h["status"], h["cluster_id"]), ("discovering", c["id"]))
        # a day-1 host is not installed on its own
        self.assert_error(self.hub.call("POST", "/v2/infra-envs/%s/hosts/%s/actions/install" % (ie, host)), 409,
                          "method only allowed when adding hosts to an existing cluster")
        st, steps = self.svc.instructions(ie, host)
        self.svc.reply(ie, host, steps["instructions"][0], json.dumps(inventory_for(4)))
        st, h = self.hub.unbind_host(ie, host)
        self.assertEqual(st, 200, h)
        self.assertEqual((h["status"], h.get("cluster_id")), ("unbinding", None))
        self.agent_register(ie, host)
        self.assertEqual(self.hub.host(ie, host)[1]["status"], "discovering-unbound")
        # a host of an infra-env bound to the cluster cannot be unbound
        bie, bhosts = self.cluster_hosts(c, 1)
        self.assert_error(self.hub.unbind_host(bie, bhosts[0]), 409,
                          "Cannot unbind Host %s. InfraEnv %s is bound to Cluster %s" % (bhosts[0], bie, c["id"]))

    def test_install_configs_ignored_validations_manifests(self):
        c = self.new_cluster()
        cid = c["id"]
        # 201 without a body; the overrides are kept as sent
        overrides = json.dumps({"networking": {"networkType": "OVNKubernetes"}})
        self.assertEqual(self.hub.update_install_config(cid, overrides), (201, b""))
        self.assertEqual(self.hub.cluster(cid)[1].get("install_config_overrides"), overrides)
        self.assert_error(self.hub.update_install_config(cid, "{not json"), 400,
                          "invalid character 'n' looking for beginning of object key string")
        ivs = "/v2/clusters/%s/ignored-validations" % cid
        self.assertEqual(self.hub.call("GET", ivs), (200, {}))
        st, iv = self.hub.call("PUT", ivs, {"cluster-validation-ids": '["network-prefix-valid"]',
                                            "host-validation-ids": '["has-cpu-cores-for-role"]'})
        self.assertEqual((st, iv), (201, {"cluster-validation-ids": '["network-prefix-valid"]',
                                          "host-validation-ids": '["has-cpu-cores-for-role"]'}))
        self.assertEqual(self.hub.call("GET", ivs), (200, iv))
        # what is not sent is cleared
        self.assertEqual(self.hub.call("PUT", ivs, {"cluster-validation-ids": '["network-prefix-valid"]'}),
                         (201, {"cluster-validation-ids": '["network-prefix-valid"]'}))
        self.assert_error(self.hub.call("PUT", ivs, {"cluster-validation-ids": '["no-such-validation"]'}), 400,
                          "cannot proceed due to the following errors: Validation ID 'no-such-validation' is not a "
                          "known cluster validation")
        # some are never ignored; every problem in one answer
        self.assert_error(self.hub.call("PUT", ivs, {"cluster-validation-ids": '["sufficient-masters-count", '
                                                                               '"pull-secret-set"]',
                                                     "host-validation-ids": '["hostname-valid", "nope"]'}), 400,
                          "cannot proceed due to the following errors: unable to ignore the following cluster "
                          "validations (sufficient-masters-count,pull-secret-set)\nValidation ID 'nope' is not a known "
                          "host validation\nunable to ignore the following host validations (hostname-valid)")
        self.assertEqual(self.hub.call("GET", ivs), (200, {"cluster-validation-ids": '["network-prefix-valid"]'}))
        content = base64.b64encode(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n").decode()
        st, m = self.hub.call("POST", "/v2/clusters/%s/manifests" % cid,
                              {"folder": "openshift", "file_name": "cm.yaml", "content": content})
        self.assertEqual(st, 201, m)
        self.assertEqual((m["file_name"], m["folder"]), ("cm.yaml", "openshift"))
        st, lst = self.hub.call("GET", "/v2/clusters/%s/manifests" % cid)
        self.assertEqual([(x["folder"], x["file_name"]) for x in lst], [("openshift", "cm.yaml")])
        st, body = self.hub.call("POST", "/v2/clusters/%s/manifests" % cid,
                                 {"file_name": "bad.yaml", "content": "***"})
        self.assertEqual((st, body.get("reason")), (400, "failed to base64-decode cluster manifest content for "
                                                         "cluster %s" % cid))
        st, body = self.hub.call("POST", "/v2/clusters/%s/manifests" % cid, {"file_name": "x.txt", "content": content})
        self.assertEqual(st, 422, body)
        self.assertEqual(self.hub.call("DELETE", "/v2/clusters/%s/manifests?folder=openshift&file_name=cm.yaml"
                                       % cid)[0], 200)
        self.assertEqual(self.hub.call("GET", "/v2/clusters/%s/manifests" % cid), (200, []))

    def test_deregister(self):
        c = self.new_cluster()
        ie, hosts = self.cluster_hosts(c, 1)
        self.assertEqual(self.hub.deregister_cluster(c["id"]), (204, b""))
        self.cleanup_clusters.remove(c["id"])
        self.assertEqual(self.hub.hosts(ie), (200, []))
        # v2GetCluster reads it unwrapped, the other operations say whose
        self.assert_error(self.hub.cluster(c["id"]), 404, "record not found")
        self.assert_error(self.hub.update_cluster(c["id"], name="gone"), 404,
                          "Failed to get cluster %s: record not found" % c["id"])

    def test_monitored_operators_unknown(self):
        """The operators list selects rows by cluster id: an unknown cluster
        lists none; one asked by name, or reported, that has no row is a
        bare 404; an empty name is refused before any lookup (observed)."""
        c = self.new_cluster()
        gone = str(uuid.uuid4())
        ops = "/v2/clusters/%s/monitored-operators"
        self.assertEqual(self.hub.call("GET", ops % gone), (200, []))
        st, listed = self.hub.call("GET", ops % c["id"])
        self.assertEqual(st, 200, listed)
        self.assertIn("console", [o["name"] for o in listed])
        st, one = self.hub.call("GET", (ops + "?operator_name=console") % c["id"])
        self.assertEqual((st, [o["name"] for o in one]), (200, ["console"]), one)
        for cid in (c["id"], gone):
            self.assert_error(self.hub.call("GET", (ops + "?operator_name=nosuch") % cid), 404, "record not found")
            self.assert_error(self.hub.report_operator(cid, "nosuch"), 404, "record not found")
            self.assert_error(self.hub.report_operator(cid, ""), 400, "empty operator name is not allowed")

    def imported(self):
        """A day-2 cluster (v2ImportCluster) with an infra-env bound to it."""
        st, c = self.hub.call("POST", "/v2/clusters/import", {"name": "day2", "api_vip_dnsname": "api.day2.example.com",
                                                               "openshift_cluster_id": str(uuid.uuid4())})
        self.assertEqual(st, 201, c)
        self.cleanup_clusters.append(c["id"])
        self.assertEqual(schema_errors("cluster", c), [])
        self.assertEqual((c["kind"], c["status"], c["status_info"], c["api_vip_dns_name"], c.get("imported")),
                         ("AddHostsCluster", "adding-hosts", "cluster is adding hosts to existing OCP cluster",
                          "api.day2.example.com", True))
        return c, self.new_ie(cluster_id=c["id"])["id"]

    def test_import_and_day2(self):
        c, ie = self.imported()
        host = str(uuid.uuid4())
        body = self.agent_register(ie, host)
        self.assertEqual((body["kind"], body["role"], body["suggested_role"], body.get("machine_config_pool_name")),
                         ("AddToExistingClusterHost", "worker", "worker", "worker"))
        # a day-2 host installs once known
        self.assert_error(self.hub.call("POST", "/v2/infra-envs/%s/hosts/%s/actions/install" % (ie, host)), 409,
                          "cannot install host in state discovering")
        st, h = self.hub.update_host(ie, host, machine_config_pool_name="infra")
        self.assertEqual((st, h["machine_config_pool_name"]), (201, "infra"))

    def test_day2_host_joins_the_control_plane(self):
        """A day-2 host may take the master role (hostutil.IsRoleValid,
        docs/enhancements/day2-master.md), its machine config pool with it,
        and go back to auto-assign (the late-2023 service takes it too, as
        the real one showed)."""
        c, ie = self.imported()
        host = str(uuid.uuid4())
        self.agent_register(ie, host)
        st, h = self.hub.update_host(ie, host, host_role="master")
        self.assertEqual((st, h["role"], h["machine_config_pool_name"], h["kind"]),
                         (201, "master", "master", "AddToExistingClusterHost"), h)
        st, h = self.hub.update_host(ie, host, host_role="auto-assign")
        self.assertEqual((st, h["role"], h["machine_config_pool_name"]), (201, "auto-assign", "auto-assign"), h)

    def test_day2_host_installs(self):
        self.svc.need_control("a day-2 host known from the observed inventory alone (the fake's simplified "
                              "validations; a real service also wants NTP, DNS and API connectivity replies)")
        c, ie = self.imported()
        host = str(uuid.uuid4())
        self.agent_register(ie, host)
        st, steps = self.svc.instructions(ie, host)
        self.svc.reply(ie, host, steps["instructions"][0], json.dumps(inventory_for(6)))
        st, h = self.hub.host(ie, host)
        self.assertEqual((h["status"], h["suggested_role"]), ("known", "worker"))
        st, h = self.hub.call("POST", "/v2/infra-envs/%s/hosts/%s/actions/install" % (ie, host))
        self.assertEqual((st, h["status"], h["role"]), (202, "installing", "worker"))
        for stage in ("Starting installation", "Installing", "Writing image to disk", "Rebooting"):
            self.assertEqual(self.hub.host_progress(ie, host, stage)[0], 200)
        st, h = self.hub.host(ie, host)
        # over REST the service is done with a day-2 host at its reboot
        self.assertEqual((h["status"], h["progress"]["current_stage"]), ("added-to-existing-cluster", "Done"))

    def _installed_flow(self, c):
        """Three hosts to ready, the REST install, the agents' preparation
        replies, every host to Done: the cluster is finalizing."""
        cid = c["id"]
        ie, hosts = self.cluster_hosts(c, 3)
        st, upd = self.hub.update_cluster(cid, **self.vips())
        self.assertEqual(st, 201, upd)
        connect_hosts(self, self.svc, ie, hosts)
        st, upd = self.hub.cluster(cid)
        self.assertEqual(upd["status"], "ready", upd.get("validations_info"))
        st, inst = self.hub.call("POST", "/v2/clusters/%s/actions/install" % cid)
        self.assertEqual(st, 202, inst)
        self.assertEqual((inst["status"], inst["status_info"]),
                         ("preparing-for-installation", "Preparing cluster for installation"))
        self.assertEqual(sum(1 for h in inst["hosts"] if h.get("bootstrap")), 1)
        for h in hosts:
            steps = self.svc.instructions(ie, h)[1]["instructions"]
            for s in steps:
                out = O7["by_step_type"][s["step_type"]]["request_body"]["output"]
                self.assertEqual(self.svc.reply(ie, h, s, out)[0], 204)
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "installing")
        for h in hosts:
            # as an agent does: its next call brings the install step
            steps = self.svc.instructions(ie, h)[1]["instructions"]
            self.assertEqual([s["step_type"] for s in steps][:1], ["install"])
            stages = self.hub.host(ie, h)[1]["progress_stages"]
            for stage in stages:
                self.assertEqual(self.hub.host_progress(ie, h, stage)[0], 200, stage)
        return ie, hosts

    def test_ingress_ca_merged_into_the_stored_kubeconfig(self):
        """the ingress-CA upload makes the kubeconfig of the stored
        kubeconfig-noingress (the installer's output, here put through the
        control API), the CA prepended to its CA data; not a new one"""
        self.svc.need_control("the installer's kubeconfig-noingress put through the control API")
        c = self.new_cluster()
        cid = c["id"]
        self._installed_flow(c)
        mine = ("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: %s\n    server: "
                "https://127.0.0.1:6443\n  name: lab\n") % base64.b64encode(b"LAB CA\n").decode()
        self.svc.control("PUT", "/clusters/%s/files/kubeconfig-noingress" % cid, mine.encode())
        self.hub.finish_installation(cid, version="4.13.18")
        st, kc = self.hub.call("GET", "/v2/clusters/%s/downloads/credentials?file_name=kubeconfig" % cid, accept=None)
        self.assertEqual(st, 200, kc)
        self.assertIn(b"server: https://127.0.0.1:6443\n", kc)
        ca = base64.b64decode(re.search(rb"certificate-authority-data: (\S+)", kc).group(1)).decode()
        self.assertEqual(ca, HubClient.TEST_INGRESS_CA + "LAB CA\n")

    def test_install_to_installed_with_controller_standin(self):
        self.svc.need_control("hosts that become known from the observed inventory alone")
        c = self.new_cluster()
        cid = c["id"]
        st, got = self.hub.cluster(cid)
        self.assert_error(self.hub.call("POST", "/v2/clusters/%s/actions/install" % cid), 409,
                          "Cluster is not ready for installation, User input required validation_info=%s"
                          % got["validations_info"])
        ie, hosts = self._installed_flow(c)
        st, fin = self.hub.cluster(cid)
        self.assertEqual(fin["status"], "finalizing")
        self.assertEqual(fin["progress"]["installing_stage_percentage"], 100)
        self.assertEqual(schema_errors("cluster", fin), [])
        st, kc = self.hub.call("GET", "/v2/clusters/%s/downloads/credentials?file_name=kubeconfig-noingress" % cid,
                               accept=None)
        self.assertEqual(st, 200, kc)
        self.assertIn(b"server: https://api.", kc)
        st, kc2 = self.hub.call("GET", "/v2/clusters/%s/downloads/credentials?file_name=kubeconfig" % cid, accept=None)
        self.assertEqual((st, kc2), (200, kc))
        self.assert_error(self.hub.call("GET", "/v2/clusters/%s/credentials" % cid), 409,
                          "console-url isn't available yet, it will be once console operator is ready as part of "
                          "cluster finalizing stage")
        steps = self.hub.finish_installation(cid, version="4.13.18")
        # the late-2023 service has no finalizing progress (its router: 404)
        self.assertEqual(steps, [("monitored-operators", 200),
                                 ("progress", 404 if self.generation == "2023" else 200), ("ingress-cert", 201),
                                 ("operator console", 200), ("complete-installation", 202)])
        st, done = self.hub.cluster(cid)
        self.assertEqual((done["status"], done["status_info"]), ("installed", "Cluster is installed"))
        self.assertEqual(done["progress"]["total_percentage"], 100)
        self.assertEqual(done["monitored_operators"][0]["status"], "available")
        st, kc = self.hub.call("GET", "/v2/clusters/%s/downloads/credentials?file_name=kubeconfig" % cid, accept=None)
        ca = base64.b64decode(re.search(rb"certificate-authority-data: (\S+)", kc).group(1)).decode()
        self.assertTrue(ca.startswith(HubClient.TEST_INGRESS_CA), ca)
        st, cred = self.hub.call("GET", "/v2/clusters/%s/credentials" % cid)
        self.assertEqual(st, 200, cred)
        self.assertEqual((cred["username"], cred["console_url"]),
                         ("kubeadmin", "https://console-openshift-console.apps.%s.example.com" % c["name"]))
        self.assertRegex(cred["password"], r"^[0-9A-Za-z]{5}(-[0-9A-Za-z]{5}){3}$")
        st, evs = self.hub.events(cluster_id=cid)
        names = [e["name"] for e in evs]
        for n in ("cluster_prepare_installation_started", "host_bootstrap_set", "cluster_operator_status",
                  "cluster_installation_completed"):
            self.assertIn(n, names)
        # day 2 from here
        self.assert_error(self.hub.call("POST", "/v2/clusters/%s/actions/cancel" % cid), 409,
                          "no condition found to run transition")
        st, d2 = self.hub.call("POST", "/v2/clusters/%s/actions/allow-add-workers" % cid)
        self.assertEqual((st, d2["kind"], d2["status"], d2["api_vip_dns_name"]),
                         (202, "AddHostsCluster", "adding-hosts", "api.%s.example.com" % c["name"]))

    def test_installed_waits_for_olm_operators(self):
        """notes/controller.md §0.2: finalizing → installed also needs every
        OLM operator available or failed (a failed one still completes)."""
        self.svc.need_control("hosts that become known from the observed inventory alone; OLM operators")
        c = self.new_cluster()
        cid = c["id"]
        self.svc.control("POST", "/clusters/%s" % cid, {"monitored_operators": [
            {"name": "lso", "operator_type": "olm", "namespace": "test-lso", "subscription_name": "test-lso-sub",
             "timeout_seconds": 4200}]})
        ie, hosts = self._installed_flow(c)
        self.hub.finish_installation(cid, version="4.13.18")
        st, fin = self.hub.cluster(cid)
        self.assertEqual(fin["status"], "finalizing")
        lso = next(o for o in fin["monitored_operators"] if o["name"] == "lso")
        self.assertEqual((lso["operator_type"], lso["namespace"], lso["subscription_name"]),
                         ("olm", "test-lso", "test-lso-sub"))
        self.assertEqual(schema_errors("cluster", fin), [])
        st, body = self.hub.agent_call("PUT", "/v2/clusters/%s/monitored-operators" % cid,
                                       {"name": "lso", "status": "progressing", "status_info": "Installing"})
        self.assertEqual(st, 200, body)
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "finalizing")
        st, body = self.hub.agent_call("PUT", "/v2/clusters/%s/monitored-operators" % cid,
                                       {"name": "lso", "status": "failed", "status_info": "Waiting for operator timed out"})
        self.assertEqual(st, 200, body)
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "installed")

    def _finalizing_with_stage_timeouts(self, timeouts, operators=(), **settings):
        """A cluster finalizing on a service whose finalizing stages time out
        after the given seconds (FINALIZING_STAGE_<STAGE>_TIMEOUT)."""
        self.svc.need_control("finalizing stage timeouts of seconds (the service's environment); hosts that "
                              "become known from the observed inventory alone")
        if self.generation == "2023":
            self.skipTest("the late-2023 service has no finalizing stages")
        self.svc.control("POST", "/settings", dict(settings, finalizing_stage_timeouts=timeouts))
        c = self.new_cluster()
        if operators:
            self.svc.control("POST", "/clusters/%s" % c["id"], {"monitored_operators": list(operators)})
        self._installed_flow(c)
        self.assertEqual(self.hub.cluster(c["id"])[1]["status"], "finalizing")
        return c["id"]

    def _stage(self, cid, stage):
        st, body = self.hub.agent_call("PUT", "/v2/clusters/%s/progress" % cid, {"finalizing_stage": stage})
        self.assertEqual(st, 200, body)

    def _events(self, cid, name):
        st, evs = self.hub.events(cluster_id=cid)
        self.assertEqual(st, 200, evs)
        return [(e["severity"], e["message"]) for e in evs if e["name"] == name]

    def test_finalizing_stage_timeout_fails_the_cluster(self):
        """finalizing_stages.go: a failing stage (here Adding router ca) past
        its timeout puts the cluster in error, with the stage and the whole
        minutes in status_info and the installation-failed event; the flag
        stays unset (only the non-failing stages set it)."""
        cid = self._finalizing_with_stage_timeouts({"Adding router ca": 1.5})
        self._stage(cid, "Adding router ca")
        st, c = self.hub.cluster(cid)
        self.assertEqual((c["status"], c["progress"]["finalizing_stage"]), ("finalizing", "Adding router ca"))
        self.assertNotIn("finalizing_stage_timed_out", c["progress"])
        self.assertEqual(self._events(cid, "cluster_finalizing_stage_updated"),
                         [("info", "Updated finalizing stage of the cluster to 'Adding router ca'")])
        time.sleep(1.7)
        st, c = self.hub.cluster(cid)
        reason = "Cluster finalizing stage 'Adding router ca' has been timed out after timeout duration of 0 minutes"
        self.assertEqual((c["status"], c["status_info"]), ("error", reason))
        self.assertNotIn("finalizing_stage_timed_out", c["progress"])
        self.assertEqual(schema_errors("cluster", c), [])
        self.assertEqual(self._events(cid, "cluster_installation_failed"),
                         [("critical", "Failed installing cluster. Reason: " + reason)])
        self.assertEqual(self._events(cid, "finalizing_stage_timed_out"), [])

    def test_olm_stage_timeout_only_marks_the_stage(self):
        """A non-failing stage (the OLM ones) past its timeout: the cluster
        stays finalizing, progress.finalizing_stage_timed_out is set (what
        the controller reads to end its wait), status_info and one event say
        so; the timeout is the largest of the stage's and the OLM
        operators' timeout_seconds; the next stage clears the flag, and the
        cluster still completes."""
        lso = {"name": "lso", "operator_type": "olm", "namespace": "test-lso", "subscription_name": "test-lso-sub",
               "timeout_seconds": 3}
        cid = self._finalizing_with_stage_timeouts({"Waiting for olm operators csv": 1}, [lso])
        self._stage(cid, "Waiting for olm operators csv")
        time.sleep(1.5)
        st, c = self.hub.cluster(cid)
        # the operator's 3 s, not the stage's 1 s
        self.assertEqual(c["status"], "finalizing")
        self.assertNotIn("finalizing_stage_timed_out", c["progress"])
        time.sleep(1.8)
        for _ in range(2):
            st, c = self.hub.cluster(cid)
            self.assertEqual((c["status"], c["status_info"]), (
                "finalizing", "Cluster finalizing stage 'Waiting for olm operators csv' is taking longer than the "
                              "expected duration (0 minutes). To troubleshoot use kubeconfig or connect to any node "
                              "using ssh"))
            self.assertIs(c["progress"]["finalizing_stage_timed_out"], True)
        self.assertEqual(schema_errors("cluster", c), [])
        self.assertEqual(self._events(cid, "finalizing_stage_timed_out"), [
            ("warning", "Cluster %s: finalizing stage Waiting for olm operators csv has been active more than the "
                        "expected completion time (0 minutes)" % cid)])
        self._stage(cid, "Done")
        self.assertNotIn("finalizing_stage_timed_out", self.hub.cluster(cid)[1]["progress"])
        # the controller marks the operator failed: the cluster completes
        self.hub.finish_installation(cid, version="4.13.18")
        st, body = self.hub.agent_call("PUT", "/v2/clusters/%s/monitored-operators" % cid,
                                       {"name": "lso", "status": "failed", "status_info": "Waiting for operator timed out"})
        self.assertEqual(st, 200, body)
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "installed")

    def test_soft_timeouts_never_fail(self):
        """With soft timeouts (ENABLE_SOFT_TIMEOUTS and the organization's)
        a failing stage past its timeout only marks it."""
        cid = self._finalizing_with_stage_timeouts({"Adding router ca": 1}, soft_timeouts=True)
        self._stage(cid, "Adding router ca")
        time.sleep(1.3)
        st, c = self.hub.cluster(cid)
        self.assertEqual(c["status"], "finalizing")
        self.assertIs(c["progress"]["finalizing_stage_timed_out"], True)

    def _finalizing_then(self, **settings):
        """A cluster finalizing; then the service's settings change (so that
        a timeout of seconds does not fire while it installs)."""
        self.svc.need_control("installation timeouts of seconds (the service's environment); hosts that become "
                              "known from the observed inventory alone")
        c = self.new_cluster()
        self._installed_flow(c)
        st, fin = self.hub.cluster(c["id"])
        self.assertEqual(fin["status"], "finalizing")
        self.svc.control("POST", "/settings", settings)
        return c["id"], fin

    def _failed_by_monitor(self, cid, reason):
        st, c = self.hub.cluster(cid)
        self.assertEqual((c["status"], c["status_info"]), ("error", reason))
        self.assertEqual(schema_errors("cluster", c), [])
        self.assertEqual(self._events(cid, "cluster_installation_failed"),
                         [("critical", "Failed installing cluster. Reason: " + reason)])
        self.assertNotEqual(c["install_completed_at"], "0001-01-01T00:00:00.000Z")
        self.assertEqual(c["install_completed_at"], c["status_updated_at"])
        return c

    def test_finalizing_timeout_fails_the_cluster(self):
        """FINALIZING_TIMEOUT (5 h; here 1 s): finalizing that long since the
        status last changed puts the cluster in error ("Timed out while
        finalizing"), without soft timeouts; a new status_info alone does
        not restart the clock (updateClusterStatus writes
        status_updated_at only on a status change)."""
        stages = self.generation != "2023"     # the late-2023 service has no finalizing stages
        cid, fin = self._finalizing_then(finalizing_timeout=1.5,
                                         finalizing_stage_timeouts={"Applying olm manifests": 0.3} if stages else {})
        if stages:
            self._stage(cid, "Applying olm manifests")
        time.sleep(0.8)
        st, c = self.hub.cluster(cid)
        self.assertEqual(c["status"], "finalizing")
        if stages:
            # the non-failing stage's timeout changed status_info, not the status
            self.assertIn("is taking longer than the expected duration", c["status_info"])
        self.assertEqual(c["status_updated_at"], fin["status_updated_at"])
        time.sleep(0.9)
        self._failed_by_monitor(cid, "Cluster installation timeout while finalizing")

    def test_finalizing_timeout_is_not_soft(self):
        """With soft timeouts the whole-finalizing timeout does not apply;
        INSTALLATION_TIMEOUT (24 h; here 1 s) since the installation's start
        does: "Timed out while installing"."""
        cid, fin = self._finalizing_then(finalizing_timeout=0.5, soft_timeouts=True)
        time.sleep(0.8)
        self.assertEqual(self.hub.cluster(cid)[1]["status"], "finalizing")
        self.svc.control("POST", "/settings", {"installation_timeout": 0.5})
        self._failed_by_monitor(cid, "cluster installation timeout (0 minutes) has expired")

    def test_complete_installation_with_operators_report(self):
        """The controller's failure body (notes/controller.md §4 #10): data's
        values are anything JSON (models.CompletionParams.Data is a
        map[string]interface{}), CLUSTER_OPERATORS_REPORT an array."""
        c = self.new_cluster()
        body = {"data": {"CLUSTER_OPERATORS_REPORT": [
                    {"name": "console", "status": "failed", "status_info": "route not admitted"},
                    {"name": "dns", "status": "available"}]},
                "error_info": "Stopped waiting for cluster operators to be available: context deadline exceeded",
                "is_success": False}
        st, answer = self.hub.agent_call("POST", "/v2/clusters/%s/actions/complete-installation" % c["id"], body)
        self.assertNotEqual(st, 400, answer)
        if not self.hub.real:
            self.assertEqual(st, 202, answer)

    def test_cancel_and_reset(self):
        self.svc.need_control("hosts that become known from the observed inventory alone")
        c = self.new_cluster()
        cid = c["id"]
        self.assert_error(self.hub.call("POST", "/v2/clusters/%s/actions/allow-add-workers" % cid), 400,
                          "cannot transform cluster %s to day2. Expected cluster status: installed, but cluster "
                          "status is: pending-for-input" % cid)
        ie, hosts = self.cluster_hosts(c, 3)
        self.hub.update_cluster(cid, **self.vips())
        connect_hosts(self, self.svc, ie, hosts)
        self.assertEqual(self.hub.install_cluster(cid)[0], 202)
        self.assert_error(self.hub.deregister_cluster(cid), 409,
                          "cluster %s can not be removed while being installed, wait for the installation to timeout "
                          "or reset the installation" % cid)
        st, cc = self.hub.call("POST", "/v2/clusters/%s/actions/cancel" % cid)
        self.assertEqual((st, cc["status"]), (202, "cancelled"))
        self.assertEqual({h["status"] for h in cc["hosts"]}, {"known"})
        st, rc = self.hub.call("POST", "/v2/clusters/%s/actions/reset" % cid)
        self.assertEqual((st, rc["status"]), (202, "insufficient"))
        self.assertEqual({h["status"] for h in rc["hosts"]}, {"resetting-pending-user-action"})
        self.agent_register(ie, hosts[0])
        self.assertEqual(self.hub.host(ie, hosts[0])[1]["status"], "discovering")


# The user-facing classes once more against the reference service playing
# each generation whole (--api-generation): what they assert of the
# late-2023 service and of the 2026 one stays tested without either.
for _cls in (TestInfraEnvs, TestEvents, TestHostsUserSide, TestClusters):
    for _gen in ("2023", "head"):
        _variant = type("%s_%s" % (_cls.__name__, _gen), (_cls,), {"api_generation": _gen})
        globals()[_variant.__name__] = local_only("plays --api-generation %s" % _gen)(_variant)
del _cls, _gen, _variant


HUB_OPERATIONS = [
    # (method, path template, operationId) of what cradle-hub calls
    ("POST", "/v2/infra-envs", "RegisterInfraEnv"), ("GET", "/v2/infra-envs", "ListInfraEnvs"),
    ("GET", "/v2/infra-envs/{ie}", "GetInfraEnv"), ("PATCH", "/v2/infra-envs/{ie}", "UpdateInfraEnv"),
    ("DELETE", "/v2/infra-envs/{ie}", "DeregisterInfraEnv"),
    ("GET", "/v2/infra-envs/{ie}/downloads/image-url", "GetInfraEnvDownloadURL"),
    ("GET", "/v2/infra-envs/{ie}/downloads/files?file_name=discovery.ign", "v2DownloadInfraEnvFiles"),
    ("GET", "/v2/infra-envs/{ie}/downloads/files-presigned?file_name=ipxe-script", "GetInfraEnvPresignedFileURL"),
    ("GET", "/v2/infra-envs/{ie}/hosts", "v2ListHosts"), ("GET", "/v2/infra-envs/{ie}/hosts/{h}", "v2GetHost"),
    ("PATCH", "/v2/infra-envs/{ie}/hosts/{h}", "v2UpdateHost"),
    ("DELETE", "/v2/infra-envs/{ie}/hosts/{h}", "v2DeregisterHost"),
    ("POST", "/v2/infra-envs/{ie}/hosts/{h}/actions/bind", "BindHost"),
    ("POST", "/v2/infra-envs/{ie}/hosts/{h}/actions/unbind", "UnbindHost"),
    ("POST", "/v2/infra-envs/{ie}/hosts/{h}/actions/install", "v2InstallHost"),
    ("PATCH", "/v2/infra-envs/{ie}/hosts/{h}/installer-args", "v2UpdateHostInstallerArgs"),
    ("PATCH", "/v2/infra-envs/{ie}/hosts/{h}/ignition", "v2UpdateHostIgnition"),
    ("GET", "/v2/events", "v2ListEvents"),
    ("POST", "/v2/clusters", "v2RegisterCluster"), ("GET", "/v2/clusters", "v2ListClusters"),
    ("GET", "/v2/clusters/{c}", "v2GetCluster"), ("PATCH", "/v2/clusters/{c}", "V2UpdateCluster"),
    ("DELETE", "/v2/clusters/{c}", "v2DeregisterCluster"), ("POST", "/v2/clusters/import", "v2ImportCluster"),
    ("POST", "/v2/clusters/{c}/actions/install", "v2InstallCluster"),
    ("POST", "/v2/clusters/{c}/actions/cancel", "V2CancelInstallation"),
    ("POST", "/v2/clusters/{c}/actions/reset", "v2ResetCluster"),
    ("POST", "/v2/clusters/{c}/actions/allow-add-workers", "TransformClusterToDay2"),
    ("PATCH", "/v2/clusters/{c}/install-config", "v2UpdateClusterInstallConfig"),
    ("GET", "/v2/clusters/{c}/ignored-validations", "v2GetIgnoredValidations"),
    ("PUT", "/v2/clusters/{c}/ignored-validations", "v2SetIgnoredValidations"),
    ("GET", "/v2/clusters/{c}/manifests", "V2ListClusterManifests"),
    ("POST", "/v2/clusters/{c}/manifests", "V2CreateClusterManifest"),
    ("DELETE", "/v2/clusters/{c}/manifests?file_name=x.yaml", "V2DeleteClusterManifest"),
    ("GET", "/v2/clusters/{c}/downloads/credentials?file_name=kubeconfig", "V2DownloadClusterCredentials"),
    ("GET", "/v2/clusters/{c}/credentials", "V2GetCredentials"),
]


PS = HubClient.OBSERVED_PULL_SECRET


@local_only("plays the API generations of --api-generation")
class TestApiGenerations(unittest.TestCase):
    """api_generation "2023": the b29f9bcf service as it runs (its models,
    unknown body fields refused with go-swagger's text, releases by its
    versions handler); "head": the 2026 swagger's service."""

    def start(self, generation, **settings):
        svc = RefService(extra_args=["--api-generation", generation],
                         scenario={"settings": settings} if settings else None).start()
        self.addCleanup(svc.__exit__, None, None, None)
        return svc, HubClient(svc)

    def refused(self, result, param, field):
        st, body = result
        self.assertEqual((st, body), (400, {"code": 400, "message": 'parsing %s body from "" failed, because json: '
                                                                    'unknown field "%s"' % (param, field)}))

    def test_2023_refuses_what_its_models_lack(self):
        svc, hub = self.start("2023")
        vips = {"api_vips": [{"ip": "192.168.122.100"}], "api_vip": "192.168.122.100",
                "ingress_vips": [{"ip": "192.168.122.101"}], "ingress_vip": "192.168.122.101"}
        # the issue's text, byte for byte
        self.refused(hub.register_cluster(control_plane_count=3, **vips), "newClusterParams", "control_plane_count")
        self.refused(hub.register_cluster(load_balancer={"type": "cluster-managed"}), "newClusterParams",
                     "load_balancer")
        self.refused(hub.register_cluster(platform={"type": "external", "external": {"platform_name": "oci"}}),
                     "newClusterParams", "external")
        self.refused(hub.register_cluster(made_up=1), "newClusterParams", "made_up")
        # the first unknown field in the body's order
        self.refused(hub.call("POST", "/v2/clusters", {"name": "x", "bogus": 1, "control_plane_count": 1}),
                     "newClusterParams", "bogus")
        self.refused(hub.register_infra_env(ntp_sources="pool.ntp.org"), "infraenvCreateParams", "ntp_sources")
        # what it knows: high_availability_mode, the singular VIPs
        st, c = hub.register_cluster(high_availability_mode="Full", **vips)
        self.assertEqual(st, 201, c)
        self.assertEqual((c["high_availability_mode"], c["api_vip"]), ("Full", "192.168.122.100"))
        self.assertNotIn("control_plane_count", c)
        st, got = hub.cluster(c["id"])
        self.assertNotIn("control_plane_count", got)
        self.refused(hub.update_cluster(c["id"], control_plane_count=1), "clusterUpdateParams",
                     "control_plane_count")
        st, upd = hub.update_cluster(c["id"], name="renamed")
        self.assertEqual((st, upd["name"]), (201, "renamed"))
        # operations added since: as its router answers
        self.assertEqual(hub.call("PUT", "/v2/clusters/%s/progress" % c["id"], {})[0], 404)
        st, body = hub.call("POST", "/v2/clusters/disconnected", {})
        self.assertEqual((st, body["code"]), (405, 405))
        # a generation brings its own install step
        with self.assertRaisesRegex(RuntimeError, "install_cmd_style head contradicts api_generation 2023"):
            svc.control("POST", "/settings", {"install_cmd_style": "head"})

    def test_2023_install_step_names_the_availability_mode(self):
        svc, hub = self.start("2023")
        st, _ = svc.register(IE, H1)
        self.assertEqual(st, 201)
        svc.set_host(H1, status="installing", role="master", inventory=json.dumps(INVENTORY))
        svc.control("POST", "/clusters/%s" % CL, {"status": "installing"})
        st, steps = svc.instructions(IE, H1)
        install = [x for x in steps["instructions"] or [] if x["step_type"] == "install"]
        self.assertEqual(len(install), 1, steps)
        args = json.loads(install[0]["args"][0])
        self.assertEqual(args["high_availability_mode"], "Full")
        self.assertNotIn("control_plane_count", args)

    def test_2023_releases(self):
        svc, hub = self.start("2023")
        # observed/01, keyed by openshift_version
        st, versions = hub.call("GET", "/v2/openshift-versions")
        self.assertEqual((st, versions), (200, observed("01-versions.json")["GET /api/assisted-install/v2/openshift-versions"]))
        # an unlisted z-stream: the default of its x.y, silently, whatever
        # release image is named (getReleaseImageFromCache's x.y fallback)
        st, c = hub.register_cluster(openshift_version="4.13.5",
                                     ocp_release_image="quay.io/openshift-release-dev/ocp-release:4.13.5-x86_64")
        self.assertEqual(st, 201, c)
        self.assertEqual((c["openshift_version"], c["ocp_release_image"]),
                         ("4.13.18", "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64"))
        st, body = hub.register_cluster(openshift_version="4.12.3")
        self.assertEqual((st, body["reason"]), (400, "Openshift version 4.12.3 for CPU architecture x86_64 is not "
                                                     "supported: The requested release image for version (4.12.3) and "
                                                     "CPU architecture (x86_64) isn't specified in release images list"))
        # a pinned z-stream listed under its own openshift_version is taken
        images = [{"openshift_version": "4.13.5", "cpu_architecture": "x86_64", "cpu_architectures": ["x86_64"],
                   "url": "mirror.example.com/ocp/release@sha256:" + "5" * 64, "version": "4.13.5"},
                  {"openshift_version": "4.13", "cpu_architecture": "x86_64", "cpu_architectures": ["x86_64"],
                   "url": "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64", "version": "4.13.18",
                   "default": True}]
        svc.control("POST", "/settings", {"release_images": images})
        st, versions = hub.call("GET", "/v2/openshift-versions")
        self.assertEqual({k: v["display_name"] for k, v in versions.items()}, {"4.13.5": "4.13.5", "4.13": "4.13.18"})
        st, c = hub.register_cluster(openshift_version="4.13.5")
        self.assertEqual((c["openshift_version"], c["ocp_release_image"]), ("4.13.5", images[0]["url"]))

    def test_head_refuses_the_singular_vips_and_keeps_the_count(self):
        svc, hub = self.start("head")
        self.refused(hub.register_cluster(api_vips=[{"ip": "192.168.122.100"}], api_vip="192.168.122.100"),
                     "newClusterParams", "api_vip")
        st, c = hub.register_cluster(control_plane_count=5, api_vips=[{"ip": "192.168.122.100"}],
                                     ingress_vips=[{"ip": "192.168.122.101"}])
        self.assertEqual(st, 201, c)
        self.assertEqual((c["control_plane_count"], c["high_availability_mode"]), (5, "Full"))
        self.assertNotIn("api_vip", c)
        self.assertNotIn("is_external", c["platform"])
        self.assertEqual([e.message for e in SWAGGER.validate({"$ref": "#/definitions/cluster"}, c)], [])
        # releases keyed by their version; a z-stream must be listed
        st, versions = hub.call("GET", "/v2/openshift-versions")
        self.assertEqual(sorted(versions), ["4.13.18", "4.14.0-rc.7"])
        st, c = hub.register_cluster(openshift_version="4.13.18")
        self.assertEqual((st, c.get("openshift_version")), (201, "4.13.18"))
        st, c = hub.register_cluster(openshift_version="4.13")
        self.assertEqual((st, c.get("openshift_version")), (201, "4.13.18"))
        st, body = hub.register_cluster(openshift_version="4.13.5")
        self.assertEqual((st, body["reason"]), (400, "Openshift version 4.13.5 for CPU architecture x86_64 is not "
                                                     "supported: no release image found for openshiftVersion: "
                                                     "'4.13.5' and CPU architecture 'x86_64'"))


@local_only("a refservice started with --token")
class TestHubAuth(unittest.TestCase):
    """userAuth: the token as `Authorization: Bearer`; each operation takes
    the credentials swagger's security names for it, no others."""

    def test_security_per_operation(self):
        token = "hub-auth-t0ken"
        with RefService(token=token) as svc:
            for method, tmpl, op_id in HUB_OPERATIONS:
                path = "/api/assisted-install" + tmpl.format(ie=IE, h=H1, c=CL)
                tmpl_path, op, _ = SWAGGER.route(method, path[len(SWAGGER.base_path):].split("?")[0])
                self.assertEqual(op.get("operationId"), op_id, (method, tmpl))
                schemes = SWAGGER.op_security(op)
                self.assertIn("userAuth", schemes, op_id)
                r = svc.raw(method, path, headers={"Accept": "*/*"})
                self.assertEqual((r.status, json.loads(r.body)), (401, {
                    "code": 401, "message": "unauthenticated for invalid credentials"}), op_id)
                r = svc.raw(method, path, headers={"Accept": "*/*", "Authorization": "Bearer wrong"})
                self.assertEqual(r.status, 401, op_id)
                r = svc.raw(method, path, headers={"Accept": "*/*", "Authorization": "Bearer " + token})
                self.assertNotIn(r.status, (401, 501), (op_id, r.body))
                r = svc.raw(method, path, headers={"Accept": "*/*", "X-Secret-Key": token})
                if "agentAuth" in schemes:
                    self.assertNotEqual(r.status, 401, op_id)
                else:
                    self.assertEqual(r.status, 401, op_id)
            recs = svc.requests()
            with open(svc.record_path) as f:
                text = f.read()
            self.assertNotIn(token, text)
            # pull secrets and passwords stay out of the record
            hub = HubClient(svc)
            self.assertEqual(hub.register_infra_env()[0], 201)
            rec = svc.requests(operation="RegisterInfraEnv")[-1]
            self.assertEqual(rec["body"]["pull_secret"], "<redacted>")
            with open(svc.record_path) as f:
                self.assertNotIn("ZmFrZTpmYWtl", f.read())
            self.assertGreater(len(recs), 4 * len(HUB_OPERATIONS) - 1)


@local_only("runs the user-facing tests against a second local refservice")
class TestHubSuiteAgainstAttachedService(unittest.TestCase):
    """The user-facing tests with CRADLE_TEST_SERVICE_URL pointing at a
    refservice started here (standing for a real service): they run there,
    only those that need the control API skip."""

    def test_hub_classes_attached(self):
        with RefService() as other:
            env = dict(os.environ, CRADLE_TEST_SERVICE_URL=other.url)
            env.pop("CRADLE_TEST_SERVICE_TOKEN", None)
            p = subprocess.run(["/usr/bin/python3", "-m", "unittest", "-v", "test_refservice.TestInfraEnvs",
                                "test_refservice.TestEvents", "test_refservice.TestHostsUserSide",
                                "test_refservice.TestClusters", "test_refservice.TestRegistration"],
                               cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=600)
            self.assertEqual(p.returncode, 0, p.stdout[-3000:])
            skipped = re.findall(r"^(test_\w+) \(test_refservice\.(\w+)\..* \.\.\. skipped ['\"](.*)['\"]$",
                                 p.stdout, re.M)
            self.assertEqual(set(c for _, c, _ in skipped if c == "TestRegistration"), {"TestRegistration"})
            self.assertEqual(sorted(t for t, c, _ in skipped if c != "TestRegistration"), sorted([
                "test_image_service_standins", "test_signed_urls_with_token",
                "test_local_auth_infra_env_key_opens_every_url_operation", "test_host_status_events",
                "test_role_refused_after_installation_started", "test_install_to_installed_with_controller_standin",
                "test_cancel_and_reset", "test_day2_host_installs"]), p.stdout[-3000:])
            for _, _, why in skipped:
                self.assertIn("CRADLE_TEST_SERVICE_URL is set", why)
            self.assertRegex(p.stdout, r"Ran \d+ tests")
            # the attached service saw the user-facing calls, none of the control API
            ops = set(r["operation"] for r in other.requests())
            self.assertTrue({"RegisterInfraEnv", "v2RegisterCluster", "v2ListEvents", "BindHost"} <= ops, ops)


def _main():
    loader = unittest.TestLoader()
    suite = loader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2).run(suite)

    def tests(entries):
        """The tests of failure or skip entries: a subtest counts as its
        test; a class's setUpClass as one entry of its own."""
        return {getattr(t, "test_case", t).id() if isinstance(getattr(t, "test_case", t), unittest.TestCase)
                else "class " + str(t) for t, _ in entries}
    failed = tests(result.failures + result.errors)
    skipped = tests(result.skipped) - failed
    ran = sum(1 for t in failed | skipped if not t.startswith("class "))
    passed = result.testsRun - ran
    print("refservice: %d passed, %d failed, %d skipped" % (passed, len(failed), len(skipped)))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(_main())
