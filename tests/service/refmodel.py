#!/usr/bin/python3
"""State and behaviour of the reference service: infra-envs, clusters, hosts.

Everything here follows what was observed from the real assisted-service
(shared/reference/observed/, commit b29f9bcf, 2023-10-27) and what its
source does at the places named in the comments.  Where the real service
runs a periodic monitor (host validations, cluster status), this model
applies the same result at once, when the request that triggers it is
handled: tests get deterministic state without waiting.
"""

import copy
import datetime
import ipaddress
import json
import random
import threading
import uuid

from swaggerval import go_dumps, humanize_bytes

# ---------------------------------------------------------------------------
# defaults (values from observed/05, 06, 08, 02)

DEFAULT_SETTINGS = {
    # service image set (observed 01 component-versions, 08 install step)
    "agent_image": "quay.io/edge-infrastructure/assisted-installer-agent:latest",
    "installer_image": "quay.io/edge-infrastructure/assisted-installer:latest",
    "controller_image": "quay.io/edge-infrastructure/assisted-installer-controller:latest",
    # steps: intervals from instruction_manager.go (60 s; 120 s backed off)
    "next_instruction_seconds": 60,
    "backoff_instruction_seconds": 120,
    # "2023": install step as observed (high_availability_mode);
    # "head": as the 2026 swagger (control_plane_count)
    "install_cmd_style": "2023",
    # ENABLE_UPGRADE_AGENT: a host whose discovery_agent_version differs from
    # agent_image gets a single upgrade-agent step (observed 06)
    "enable_upgrade_agent": False,
    # DISABLED_STEPS
    "disabled_steps": [],
    # hardware validation (hardware/validator.go; versioned requirements give
    # 100 GB disks, observed 09 "100 GB are required")
    "min_disk_size_gb": 100,
    "min_cpu_cores": 2,
    "min_ram_mib": 8192,
    "eligible_drive_types": ["HDD", "SSD", "Multipath"],
    # the real service also needs synced NTP, connectivity, DNS...: off by
    # default so that a single agent in a test namespace can become known
    "require_ntp_synced": False,
    "disk_check_timeout": "480.00",
    "image_availability_timeout": 960,
    "check_cvo": False,
    "enable_skip_mco_reboot": True,
}

DEFAULT_CLUSTER = {
    "id": "fb127e4c-aa1c-4cf4-898f-aadb690c4ded",
    "name": "demo",
    "base_dns_domain": "example.com",
    "openshift_version": "4.13.18",
    "ocp_release_image": "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64",
    "mco_image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
                 "35855191065d777e85d53f903628d99ec5c829ee07c075d884a8b7d23c5790fd",
    "must_gather_image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
                         "3c7ecafe368dd4b6209005d8499821d8deec85d5a8e4539572151568c6c7fa94",
    "cpu_architecture": "x86_64",
    "control_plane_count": 3,
    "api_vips": ["192.168.122.100"],
    "ingress_vips": ["192.168.122.101"],
    "machine_networks": ["192.168.122.0/24"],
    "cluster_networks": [{"cidr": "10.128.0.0/14", "host_prefix": 23}],
    "service_networks": ["172.30.0.0/16"],
    "vip_dhcp_allocation": False,
    "user_managed_networking": False,
    "network_type": "OVNKubernetes",
    "ssh_public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1Yg6s2pT6fYzKx9k4JQm3m8c0zQ0v8V0f3bq9n8jF "
                      "dev@example.com",
    "http_proxy": "",
    "https_proxy": "",
    "no_proxy": "",
    "tang_servers": "",
}

DEFAULT_INFRA_ENV = {
    "id": "be728aba-3689-4fbe-85ab-b3ff6fbc3f2f",
    "name": "demo-infraenv",
    "cluster_id": DEFAULT_CLUSTER["id"],
    "openshift_version": "4.13",
    "cpu_architecture": "x86_64",
    "type": "full-iso",
    "additional_ntp_sources": "",
    "ssh_authorized_key": DEFAULT_CLUSTER["ssh_public_key"],
}

# internal/host/common.go stage lists (the 2026 source; observed/11 lists the
# same three for master, worker and bootstrap)
MASTER_STAGES = ["Starting installation", "Installing", "Writing image to disk", "Rebooting",
                 "Configuring", "Joined", "Done"]
WORKER_STAGES = ["Starting installation", "Installing", "Writing image to disk", "Waiting for control plane",
                 "Rebooting", "Waiting for ignition", "Configuring", "Joined", "Done"]
BOOTSTRAP_STAGES = ["Starting installation", "Installing", "Writing image to disk", "Waiting for control plane",
                    "Waiting for bootkube", "Waiting for controller", "Rebooting", "Configuring", "Joined",
                    "Done"]
SNO_STAGES = ["Starting installation", "Installing", "Waiting for bootkube", "Writing image to disk",
              "Rebooting", "Joined", "Done"]

HOST_STATUSES_BEFORE_INSTALLATION = ["discovering", "known", "disconnected", "insufficient", "pending-for-input"]
UNBOUND_STATUSES = ["discovering-unbound", "known-unbound", "insufficient-unbound", "disconnected-unbound",
                    "disabled-unbound"]
CLUSTER_ACCEPTS_REGISTRATION = ["insufficient", "ready", "pending-for-input", "adding-hosts"]
# cluster.CanDownloadFiles
CLUSTER_CAN_DOWNLOAD = ["installing", "finalizing", "installed", "error", "adding-hosts", "cancelled",
                        "installing-pending-user-action"]

ZERO_MS = "0001-01-01T00:00:00.000Z"
ZERO_RFC = "0001-01-01T00:00:00Z"


def now_ms():
    """strfmt.DateTime JSON: milliseconds, Z."""
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def now_rfc():
    """time.Time JSON (RFC3339Nano, trailing zeros trimmed)."""
    t = datetime.datetime.now(datetime.timezone.utc)
    frac = ("%06d" % t.microsecond).rstrip("0")
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ("." + frac if frac else "") + "Z"


def step_id(step_type):
    return "%s-%08x" % (step_type, random.getrandbits(32))


class ApiError(Exception):
    """An error answer of the service.

    kind "error": models.Error {code:"<n>", href:"", id:n, kind:"Error", reason}
    kind "infra": models.InfraError {code:n, message}
    kind "openapi": go-openapi errors {code:n, message} (status asHTTPCode)
    """

    def __init__(self, status, message, kind="error"):
        Exception.__init__(self, message)
        self.status = status
        self.message = message
        self.kind = kind

    def body(self):
        if self.kind == "error":
            return {"code": str(self.status), "href": "", "id": self.status, "kind": "Error", "reason": self.message}
        return {"code": self.status, "message": self.message}

    def http_status(self):
        return 422 if self.status >= 600 else self.status


def _cidr_contains(cidr, addr_with_prefix):
    try:
        net = ipaddress.ip_network(cidr, strict=False)
        ip = ipaddress.ip_interface(addr_with_prefix).ip
        return ip.version == net.version and ip in net
    except ValueError:
        return False


# ---------------------------------------------------------------------------


class InfraEnv(object):
    def __init__(self, spec):
        d = {k: v for k, v in DEFAULT_INFRA_ENV.items() if k not in ("id", "cluster_id")}
        d.update(spec)
        if "id" not in spec:
            d["id"] = str(uuid.uuid4())
        self.spec = d
        self.id = d["id"]
        self.cluster_id = d.get("cluster_id") or None
        self.created_at = now_rfc()
        self.updated_at = self.created_at

    def to_api(self):
        d = self.spec
        out = {
            "cpu_architecture": d.get("cpu_architecture", "x86_64"),
            "created_at": self.created_at,
            "download_url": "http://127.0.0.1:8888/byid/%s/%s/%s/%s.iso" % (
                self.id, d.get("openshift_version", "4.13"), d.get("cpu_architecture", "x86_64"),
                "minimal" if d.get("type") == "minimal-iso" else "full"),
            "email_domain": "Unknown",
            "expires_at": ZERO_MS,
            "href": "/api/assisted-install/v2/infra-envs/%s" % self.id,
            "id": self.id,
            "kind": "InfraEnv",
            "name": d.get("name", "infraenv"),
            "openshift_version": d.get("openshift_version", "4.13"),
            "proxy": {},
            "pull_secret_set": True,
            "ssh_authorized_key": d.get("ssh_authorized_key", ""),
            "type": d.get("type", "full-iso"),
            "updated_at": self.updated_at,
            "user_name": "admin",
        }
        if self.cluster_id:
            out["cluster_id"] = self.cluster_id
        if d.get("additional_ntp_sources"):
            out["additional_ntp_sources"] = d["additional_ntp_sources"]
        return dict(sorted(out.items()))


class Cluster(object):
    def __init__(self, spec):
        d = copy.deepcopy(DEFAULT_CLUSTER)
        d.update(spec)
        if "id" not in spec and spec:
            d["id"] = str(uuid.uuid4())
        if "high_availability_mode" in spec and "control_plane_count" not in spec:
            d["control_plane_count"] = 1 if spec["high_availability_mode"] == "None" else 3
        self.spec = d
        self.id = d["id"]
        self.status = d.get("status", "insufficient")
        self.status_info = d.get("status_info", "Cluster is not ready for install")
        self.status_updated_at = now_ms()
        self.created_at = now_rfc()
        self.updated_at = self.created_at
        self.install_started_at = ZERO_MS
        self.install_completed_at = ZERO_MS
        self.logs_info = None
        self.controller_logs_started_at = ZERO_MS
        self.controller_logs_collected_at = ZERO_MS
        self.files = {}
        for name, content in (d.get("files") or {}).items():
            self.set_file(name, content)
        self.status_fixed = "status" in spec

    def set_file(self, name, content):
        if isinstance(content, (dict, list)):
            content = json.dumps(content)
        if isinstance(content, str):
            content = content.encode("utf-8")
        self.files[name] = content

    @property
    def sno(self):
        return int(self.spec.get("control_plane_count", 3)) == 1

    @property
    def ha_mode(self):
        return "None" if self.sno else "Full"

    def touch(self):
        self.updated_at = now_rfc()

    def set_status(self, status, info):
        if status != self.status or info != self.status_info:
            self.status = status
            self.status_info = info
            self.status_updated_at = now_ms()
            self.touch()

    def to_api(self, hosts, style, include_hosts=True):
        d = self.spec
        cid = self.id
        known = [h for h in hosts if h.status == "known"]
        out = {
            "api_vip": d["api_vips"][0] if d.get("api_vips") else "",
            "api_vips": [{"cluster_id": cid, "ip": ip} for ip in d.get("api_vips") or []],
            "base_dns_domain": d.get("base_dns_domain", ""),
            "cluster_networks": [{"cidr": n["cidr"], "cluster_id": cid, "host_prefix": n.get("host_prefix", 23)}
                                 for n in d.get("cluster_networks") or []],
            "controller_logs_collected_at": self.controller_logs_collected_at,
            "controller_logs_started_at": self.controller_logs_started_at,
            "cpu_architecture": d.get("cpu_architecture", "x86_64"),
            "created_at": self.created_at,
            "deleted_at": None,
            "disk_encryption": {"enable_on": "none", "mode": "tpmv2"},
            "email_domain": "Unknown",
            "enabled_host_count": len(hosts),
            "feature_usage": "{}",
            "high_availability_mode": self.ha_mode,
            "host_networks": None,
            "href": "/api/assisted-install/v2/clusters/%s" % cid,
            "hyperthreading": "all",
            "id": cid,
            "ignition_endpoint": {},
            "image_info": {"created_at": ZERO_RFC, "expires_at": ZERO_MS},
            "ingress_vip": d["ingress_vips"][0] if d.get("ingress_vips") else "",
            "ingress_vips": [{"cluster_id": cid, "ip": ip} for ip in d.get("ingress_vips") or []],
            "install_completed_at": self.install_completed_at,
            "install_started_at": self.install_started_at,
            "kind": "Cluster",
            "machine_networks": [{"cidr": c, "cluster_id": cid} for c in d.get("machine_networks") or []],
            "monitored_operators": [{"cluster_id": cid, "name": "console", "operator_type": "builtin",
                                     "status_updated_at": ZERO_MS, "timeout_seconds": 3600}],
            "name": d.get("name", ""),
            "network_type": d.get("network_type", "OVNKubernetes"),
            "ocp_release_image": d.get("ocp_release_image", ""),
            "openshift_version": d.get("openshift_version", ""),
            "platform": {"is_external": False, "type": d.get("platform_type") or
                         ("none" if d.get("user_managed_networking") else "baremetal")},
            "progress": {},
            "pull_secret_set": True,
            "ready_host_count": len(known),
            "schedulable_masters": False,
            "schedulable_masters_forced_true": len(hosts) < 5,
            "service_networks": [{"cidr": c, "cluster_id": cid} for c in d.get("service_networks") or []],
            "ssh_public_key": d.get("ssh_public_key", ""),
            "status": self.status,
            "status_info": self.status_info,
            "status_updated_at": self.status_updated_at,
            "total_host_count": len(hosts),
            "updated_at": self.updated_at,
            "user_managed_networking": bool(d.get("user_managed_networking")),
            "user_name": "admin",
            "vip_dhcp_allocation": bool(d.get("vip_dhcp_allocation")),
        }
        if style == "head":
            out["control_plane_count"] = int(d.get("control_plane_count", 3))
        if self.logs_info is not None:
            out["logs_info"] = self.logs_info
        if include_hosts:
            out["hosts"] = [h.to_api() for h in hosts]
        if self.status == "installed":
            out["progress"] = {"finalizing_stage_percentage": 100, "installing_stage_percentage": 100,
                               "preparing_for_installation_stage_percentage": 100, "total_percentage": 100}
        if d.get("http_proxy"):
            out["http_proxy"] = d["http_proxy"]
        if d.get("https_proxy"):
            out["https_proxy"] = d["https_proxy"]
        if d.get("no_proxy"):
            out["no_proxy"] = d["no_proxy"]
        return dict(sorted(out.items()))


class Host(object):
    def __init__(self, host_id, infra_env_id, cluster_id):
        self.id = host_id
        self.infra_env_id = infra_env_id
        self.cluster_id = cluster_id
        self.kind = "Host"
        self.status = None
        self.status_info = None
        self.status_updated_at = ZERO_MS
        self.role = "auto-assign"
        self.suggested_role = "auto-assign"
        self.bootstrap = False
        self.discovery_agent_version = ""
        self.requested_hostname = ""
        self.inventory = ""          # the stored (re-marshalled) JSON string
        self.inventory_obj = None    # decoded
        self.installation_disk_id = ""
        self.installation_disk_path = ""
        self.progress = {"current_stage": "", "progress_info": "", "installation_percentage": 0,
                         "stage_started_at": ZERO_MS, "stage_updated_at": ZERO_MS}
        self.registered_at = now_ms()
        self.checked_in_at = self.registered_at
        self.created_at = now_rfc()
        self.updated_at = self.created_at
        self.timestamp = 0
        self.fields = {}             # connectivity, ntp_sources, ... (strings)
        self.logs_info = None
        self.logs_started_at = ZERO_MS
        self.logs_collected_at = ZERO_MS
        self.installer_version = ""
        self.validations = None
        self.media_status = None
        self.ignition = None         # bytes set through the control API
        self.installer_args = None   # list set through the control API
        self.issued = {}             # step_id -> step_type
        self.replies = []
        self.seq = 0

    def touch(self):
        self.updated_at = now_rfc()

    def set_status(self, status, info):
        if status != self.status or info != self.status_info:
            self.status = status
            self.status_info = info
            self.status_updated_at = now_ms()
        self.touch()

    def effective_role(self):
        return self.suggested_role if self.role == "auto-assign" else self.role

    def stages(self, sno):
        role = self.role
        if self.bootstrap or role == "bootstrap":
            return SNO_STAGES if sno else BOOTSTRAP_STAGES
        if role in ("master", "arbiter"):
            # an arbiter joins the control plane as a master does
            return MASTER_STAGES
        if role == "worker":
            return WORKER_STAGES
        return []

    def to_api(self, include_inventory=True, include_connectivity=True):
        out = {
            "checked_in_at": self.checked_in_at,
            "created_at": self.created_at,
            "deleted_at": None,
            "discovery_agent_version": self.discovery_agent_version,
            "href": "/api/assisted-install/v2/infra-envs/%s/hosts/%s" % (self.infra_env_id, self.id),
            "id": self.id,
            "infra_env_id": self.infra_env_id,
            "kind": self.kind,
            "logs_collected_at": self.logs_collected_at,
            "logs_started_at": self.logs_started_at,
            "progress": self._progress_api(),
            "progress_stages": self.progress_stages,
            "registered_at": self.registered_at,
            "requested_hostname": self.requested_hostname or self.id,
            "role": self.role,
            "stage_started_at": ZERO_MS,
            "stage_updated_at": ZERO_MS,
            "status": self.status,
            "status_info": self.status_info,
            "status_updated_at": self.status_updated_at,
            "suggested_role": self.suggested_role,
            "updated_at": self.updated_at,
            "user_name": "admin",
        }
        if self.cluster_id:
            out["cluster_id"] = self.cluster_id
        if self.bootstrap:
            out["bootstrap"] = True
        if self.inventory and include_inventory:
            out["inventory"] = self.inventory
        if self.installation_disk_id:
            out["installation_disk_id"] = self.installation_disk_id
            out["installation_disk_path"] = self.installation_disk_path
        if self.timestamp:
            out["timestamp"] = self.timestamp
        if self.installer_version:
            out["installer_version"] = self.installer_version
        if self.logs_info is not None:
            out["logs_info"] = self.logs_info
        if self.media_status:
            out["media_status"] = self.media_status
        if self.validations is not None:
            out["validations_info"] = go_dumps(self.validations)
        for k, v in self.fields.items():
            if k == "free_addresses":
                continue  # cleared before the API answers (V2GetHost)
            if k == "connectivity" and not include_connectivity:
                continue
            if v:
                out[k] = v
        return dict(sorted(out.items()))

    @property
    def progress_stages(self):
        return list(self._stages_cache) if getattr(self, "_stages_cache", None) else []

    def _progress_api(self):
        p = {"stage_started_at": self.progress["stage_started_at"],
             "stage_updated_at": self.progress["stage_updated_at"]}
        if self.progress["current_stage"]:
            p["current_stage"] = self.progress["current_stage"]
        if self.progress["installation_percentage"]:
            p["installation_percentage"] = self.progress["installation_percentage"]
        if self.progress["progress_info"]:
            p["progress_info"] = self.progress["progress_info"]
        return dict(sorted(p.items()))

    def registration_api(self, next_step_args, sno=False):
        """The 201 body of register: the Host struct V2RegisterHost builds
        afresh (default role, no inventory, zero created/updated times) +
        next_step_runner_command."""
        role = "master" if sno else "auto-assign"
        out = {
            "checked_in_at": self.checked_in_at,
            "created_at": ZERO_RFC,
            "deleted_at": None,
            "discovery_agent_version": self.discovery_agent_version,
            "href": "/api/assisted-install/v2/infra-envs/%s/hosts/%s" % (self.infra_env_id, self.id),
            "id": self.id,
            "infra_env_id": self.infra_env_id,
            "kind": self.kind,
            "logs_collected_at": ZERO_MS,
            "logs_started_at": ZERO_MS,
            "progress_stages": [],
            "registered_at": self.registered_at,
            "requested_hostname": self.id,
            "role": role,
            "stage_started_at": ZERO_MS,
            "stage_updated_at": ZERO_MS,
            "status": self.status,
            "status_info": self.status_info,
            "status_updated_at": self.status_updated_at,
            "suggested_role": role,
            "updated_at": ZERO_RFC,
            "user_name": "admin",
        }
        if self.cluster_id:
            out["cluster_id"] = self.cluster_id
        if sno:
            out["bootstrap"] = True
        out = dict(sorted(out.items()))
        out["next_step_runner_command"] = {"args": next_step_args}
        return out


# ---------------------------------------------------------------------------


class Model(object):
    """All service state; every public method is called with self.lock held."""

    def __init__(self, swagger, scenario=None):
        self.sw = swagger
        self.lock = threading.RLock()
        self.scenario = scenario or {}
        self.load(self.scenario)

    # -- scenario -------------------------------------------------------
    def load(self, scenario):
        check_scenario(scenario)
        self.scenario = scenario
        self.settings = dict(DEFAULT_SETTINGS)
        self.settings.update(scenario.get("settings") or {})
        self.clusters = {}
        self.infra_envs = {}
        self.hosts = {}   # (infra_env_id, host_id) -> Host
        self.order = 0
        clusters = scenario.get("clusters")
        infra_envs = scenario.get("infra_envs")
        if clusters is None and infra_envs is None:
            clusters = [{}]
            infra_envs = [{}]
        for c in clusters or []:
            self.add_cluster(c)
        for ie in infra_envs or []:
            self.add_infra_env(ie)
        for h in scenario.get("hosts") or []:
            self.add_host(h)

    def add_cluster(self, spec):
        c = Cluster(spec)
        self.clusters[c.id] = c
        return c

    def add_infra_env(self, spec):
        if not spec:
            spec = dict(DEFAULT_INFRA_ENV)
        ie = InfraEnv(spec)
        self.infra_envs[ie.id] = ie
        return ie

    def add_host(self, spec):
        ie = self.infra_envs[spec["infra_env_id"]]
        h = Host(spec["id"], ie.id, spec.get("cluster_id", ie.cluster_id))
        self.order += 1
        h.seq = self.order
        h.discovery_agent_version = spec.get("discovery_agent_version", self.settings["agent_image"])
        h.set_status("discovering" if h.cluster_id else "discovering-unbound",
                     "Waiting for host to send hardware details")
        self.hosts[(ie.id, h.id)] = h
        if spec.get("inventory") is not None:
            inv = spec["inventory"]
            self.apply_inventory(h, inv if isinstance(inv, dict) else json.loads(inv))
        self.control_update_host(h, spec)
        return h

    # -- lookups ----------------------------------------------------------
    def infra_env(self, ie_id):
        ie = self.infra_envs.get(ie_id)
        if ie is None:
            # GetInfraEnvFromDB returns gorm's error; GenerateErrorResponder
            # maps gorm.ErrRecordNotFound to 404
            raise ApiError(404, "record not found")
        return ie

    def host(self, ie_id, host_id):
        h = self.hosts.get((ie_id, host_id))
        if h is None:
            raise ApiError(404, "failed to get host %s in infra_env %s: record not found" % (host_id, ie_id))
        return h

    def find_host(self, host_id):
        for (ie, hid), h in self.hosts.items():
            if hid == host_id:
                return h
        return None

    def cluster(self, cluster_id):
        c = self.clusters.get(cluster_id)
        if c is None:
            raise ApiError(404, "Failed to get cluster %s: record not found" % cluster_id)
        return c

    def cluster_hosts(self, cluster_id):
        return sorted((h for h in self.hosts.values() if h.cluster_id == cluster_id), key=lambda h: h.seq)

    # -- register (V2RegisterHost + host state machine) ------------------
    def register(self, ie_id, params, header_version):
        ie = self.infra_env(ie_id)
        host_id = params["host_id"]
        h = self.hosts.get((ie_id, host_id))
        cluster = None
        cluster_id = h.cluster_id if h is not None else ie.cluster_id
        if cluster_id:
            cluster = self.clusters.get(cluster_id)
        version = params.get("discovery_agent_version") or ""
        if h is None:
            if cluster is not None and cluster.status not in CLUSTER_ACCEPTS_REGISTRATION:
                raise ApiError(409, "Cluster %s is in %s state, host can register only in one of %s" % (
                    cluster.id, cluster.status, "[" + " ".join(CLUSTER_ACCEPTS_REGISTRATION) + "]"))
            h = Host(host_id, ie_id, cluster.id if cluster else None)
            self.order += 1
            h.seq = self.order
            if cluster is not None and cluster.sno:
                h.role = "master"
                h.bootstrap = True
                h.suggested_role = "master"
            h.discovery_agent_version = version
            h.set_status("discovering" if cluster else "discovering-unbound",
                         "Waiting for host to send hardware details")
            self.hosts[(ie_id, host_id)] = h
            self.refresh_cluster(cluster)
            return h.registration_api(self.next_step_args(h), cluster is not None and cluster.sno), h
        # existing host: TransitionTypeRegisterHost rules (statemachine.go)
        st = h.status
        stage = h.progress["current_stage"]
        if st in ("installing-in-progress",) and stage == "Rebooting":
            h.set_status("installing-pending-user-action", self._wrong_boot_order_message(h))
        elif st == "installing-pending-user-action":
            raise ApiError(403, "Host is required to be booted from disk %s" % h.installation_disk_path,
                           kind="infra")
        elif st in ("installing", "installing-in-progress"):
            h.set_status("error", "The host unexpectedly restarted during the installation")
        elif st == "error":
            pass
        elif st == "installed":
            raise ApiError(403, "Host is trying to register after the cluster has already been installed. "
                                "That most probably means that the host is booting from the installation ISO, "
                                "and therefore not effectively joining the cluster. The request will be "
                                "ignored. Fix the boot order and reboot the host.", kind="infra")
        elif st == "resetting" and stage == "Rebooting":
            pass
        elif st in ("discovering", "known", "disconnected", "insufficient", "resetting-pending-user-action",
                    "preparing-for-installation", "preparing-successful", "binding", "pending-for-input",
                    "resetting"):
            h.set_status("discovering", "Waiting for host to send hardware details")
        elif st in UNBOUND_STATUSES:
            h.set_status("discovering-unbound", "Waiting for host to send hardware details")
        else:
            # stateswitch finds no rule -> returnRegisterHostTransitionError(400)
            raise ApiError(400, "no condition found to run transition RegisterHost from state %s" % st)
        h.discovery_agent_version = version
        h.registered_at = now_ms()
        h.checked_in_at = h.registered_at
        h.touch()
        self.refresh_cluster(cluster)
        body = h.registration_api(self.next_step_args(h), cluster is not None and cluster.sno)
        # observed 05: re-registration answers with status/status_info null
        body["status"] = None
        body["status_info"] = None
        body["status_updated_at"] = ZERO_MS
        body = dict(sorted((k, v) for k, v in body.items() if k != "next_step_runner_command"),
                    next_step_runner_command=body["next_step_runner_command"])
        return body, h

    def _wrong_boot_order_message(self, h):
        msgs = ["Expected the host to boot from disk, but it booted the installation image - please reboot "
                "and fix boot order to boot from disk"]
        disk = self._install_disk(h)
        if disk:
            if disk.get("model"):
                msgs.append(disk["model"])
            if disk.get("serial"):
                msgs.append(disk["serial"])
            msgs.append("(%s, %s)" % (disk.get("name", ""), disk.get("id") or "/dev/" + disk.get("name", "")))
        return " ".join(msgs)

    def next_step_args(self, h):
        req = {"agent_version": self.settings["agent_image"], "host_id": h.id, "infra_env_id": h.infra_env_id}
        return [go_dumps(req)]

    # -- instructions (instruction_manager.go) --------------------------
    def next_steps(self, ie_id, host_id, timestamp, header_version):
        h = self.host(ie_id, host_id)
        h.checked_in_at = now_ms()
        if timestamp:
            h.timestamp = timestamp
        if header_version is not None:
            h.discovery_agent_version = header_version
        s = self.settings
        cluster = self.clusters.get(h.cluster_id) if h.cluster_id else None
        st = h.status
        interval = s["next_instruction_seconds"]
        action = "continue"
        steps = []
        upgrade_states = ("binding", "discovering", "insufficient", "known", "pending-for-input",
                          "discovering-unbound", "insufficient-unbound", "known-unbound")
        if s.get("enable_upgrade_agent") and st in upgrade_states and \
                h.discovery_agent_version != s["agent_image"]:
            # observed 06: a lone upgrade-agent step, without a step_id
            return {"instructions": [{"args": [go_dumps({"agent_image": s["agent_image"]})],
                                      "step_type": "upgrade-agent"}],
                    "next_instruction_seconds": interval, "post_step_action": action}
        if st == "discovering":
            steps = [self._step(h, "inventory", [h.id])]
        elif st in ("known", "insufficient", "pending-for-input"):
            steps = [self._step(h, "inventory", [h.id]),
                     self._connectivity_step(h),
                     self._tang_step(h, cluster),
                     self._free_addresses_step(h),
                     self._dhcp_step(h, cluster),
                     self._step(h, "ntp-synchronizer", [go_dumps({"ntp_source": self._ntp_source(h)})]),
                     self._domain_step(h, cluster),
                     self._verify_vips_step(h, cluster)]
        elif st == "disconnected":
            steps = [self._step(h, "inventory", [h.id])]
            interval = s["backoff_instruction_seconds"]
        elif st == "preparing-for-installation":
            steps = [self._dhcp_step(h, cluster),
                     self._step(h, "installation-disk-speed-check",
                                [go_dumps({"path": h.installation_disk_id or h.installation_disk_path}),
                                 s["disk_check_timeout"]]),
                     self._step(h, "container-image-availability",
                                [go_dumps({"images": self._images(cluster),
                                           "timeout": s["image_availability_timeout"]})])]
        elif st in ("preparing-successful", "installing-in-progress"):
            steps = [self._dhcp_step(h, cluster)]
        elif st == "installing":
            steps = [self._step(h, "install", [self.install_args(h, cluster)]), self._dhcp_step(h, cluster)]
            h.installer_version = s["installer_image"]
        elif st in ("error", "cancelled"):
            steps = [self._logs_gather_step(h, cluster), self._step(h, "stop-installation", [])]
            interval = s["backoff_instruction_seconds"]
        elif st in ("discovering-unbound", "disconnected-unbound"):
            steps = [self._step(h, "inventory", [h.id])]
        elif st in ("known-unbound", "insufficient-unbound"):
            steps = [self._step(h, "inventory", [h.id]),
                     self._step(h, "ntp-synchronizer", [go_dumps({"ntp_source": self._ntp_source(h)})])]
        elif st in ("binding", "unbinding", "unbinding-pending-user-action", "reclaiming-rebooting"):
            action = "exit"
        elif st in ("resetting", "disabled"):
            interval = s["backoff_instruction_seconds"]
        steps = [x for x in steps if x is not None and x["step_type"] not in s.get("disabled_steps", [])]
        for x in steps:
            h.issued[x["step_id"]] = x["step_type"]
        return {"instructions": steps or None, "next_instruction_seconds": interval, "post_step_action": action}

    def _step(self, h, step_type, args):
        return {"args": args, "step_id": step_id(step_type), "step_type": step_type}

    def _ntp_source(self, h):
        ie = self.infra_envs.get(h.infra_env_id)
        return (ie.spec.get("additional_ntp_sources") or "") if ie else ""

    def _inv(self, h):
        return h.inventory_obj or {}

    def _connectivity_step(self, h):
        others = []
        for o in self.cluster_hosts(h.cluster_id):
            if o is h or not o.inventory_obj:
                continue
            nics = []
            for itf in o.inventory_obj.get("interfaces") or []:
                ips = [a.split("/")[0] for a in (itf.get("ipv4_addresses") or []) + (itf.get("ipv6_addresses") or [])]
                if ips:
                    nics.append({"ip_addresses": ips, "mac": itf.get("mac_address", ""), "name": itf.get("name", "")})
            others.append({"host_id": o.id, "nics": nics})
        if not others:
            return None
        return self._step(h, "connectivity-check", [go_dumps(others)])

    def _free_addresses_step(self, h):
        nets = []
        for itf in self._inv(h).get("interfaces") or []:
            for a in itf.get("ipv4_addresses") or []:
                try:
                    n = ipaddress.ip_interface(a).network
                except ValueError:
                    continue
                if n.prefixlen >= 22 and str(n) not in nets:   # MaxSmallV4PrefixSize = 10
                    nets.append(str(n))
        if not nets:
            return None
        return self._step(h, "free-network-addresses", [go_dumps(nets)])

    def _tang_step(self, h, cluster):
        if cluster is None or not cluster.spec.get("tang_servers"):
            return None
        return self._step(h, "tang-connectivity-check",
                          [go_dumps({"tang_servers": cluster.spec["tang_servers"]})])

    def _dhcp_step(self, h, cluster):
        if cluster is None or not cluster.spec.get("vip_dhcp_allocation"):
            return None
        nic = None
        for itf in self._inv(h).get("interfaces") or []:
            if any(_cidr_contains(c, a) for c in cluster.spec.get("machine_networks") or []
                   for a in itf.get("ipv4_addresses") or []):
                nic = itf.get("name")
                break
        if nic is None:
            return None
        cid = cluster.id.replace("-", "")
        return self._step(h, "dhcp-lease-allocate", [go_dumps({
            "api_vip_mac": "00:1a:4a:%s:%s:%s" % (cid[0:2], cid[2:4], cid[4:6]),
            "ingress_vip_mac": "00:1a:4a:%s:%s:%s" % (cid[6:8], cid[8:10], cid[10:12]),
            "interface": nic})])

    def _domain_step(self, h, cluster):
        if cluster is None:
            return None
        name = cluster.spec.get("name", "")
        base = cluster.spec.get("base_dns_domain", "")
        domains = ["api.%s.%s" % (name, base), "api-int.%s.%s" % (name, base),
                   "console-openshift-console.apps.%s.%s" % (name, base),
                   "validateNoWildcardDNS.%s.%s." % (name, base), "validateNoWildcardDNS.%s.%s" % (name, base)]
        release = cluster.spec.get("ocp_release_image", "")
        if "/" in release:
            domains.append(release.split("/")[0])
        return self._step(h, "domain-resolution", [go_dumps({"domains": [{"domain_name": d} for d in domains]})])

    def _verify_vips_step(self, h, cluster):
        if cluster is None or cluster.spec.get("user_managed_networking") or cluster.spec.get("vip_dhcp_allocation"):
            return None
        vips = [{"vip": v, "vip_type": "api"} for v in cluster.spec.get("api_vips") or []] + \
               [{"vip": v, "vip_type": "ingress"} for v in cluster.spec.get("ingress_vips") or []]
        if not vips:
            return None
        return self._step(h, "verify-vips", [go_dumps(vips)])

    def _logs_gather_step(self, h, cluster):
        if cluster is None:
            return None
        req = {"bootstrap": bool(h.bootstrap), "cluster_id": cluster.id, "host_id": h.id,
               "infra_env_id": h.infra_env_id, "installer_gather": True}
        if h.bootstrap:
            ips = []
            for o in self.cluster_hosts(cluster.id):
                if o.effective_role() == "master" and not o.bootstrap and o.inventory_obj:
                    for itf in o.inventory_obj.get("interfaces") or []:
                        ips.extend(a.split("/")[0] for a in itf.get("ipv4_addresses") or [])
            req["master_ips"] = ips
        return self._step(h, "logs-gather", [go_dumps(req)])

    def _images(self, cluster):
        s = self.settings
        if cluster is None:
            return [s["installer_image"]]
        return [cluster.spec.get("ocp_release_image", ""), cluster.spec.get("mco_image", ""),
                cluster.spec.get("must_gather_image", ""), s["installer_image"]]

    # -- install command (hostcommands/install_cmd.go, observed 08) ------
    def install_args(self, h, cluster):
        s = self.settings
        role = "bootstrap" if h.bootstrap else h.effective_role()
        disk_path = h.installation_disk_id or h.installation_disk_path
        args = self._installer_args(h, cluster)
        fmt = self._disks_to_format(h)
        if s.get("install_cmd_style") == "head":
            req = {
                "boot_device": disk_path,
                "check_cvo": bool(s["check_cvo"]),
                "cluster_id": cluster.id,
                "control_plane_count": int(cluster.spec.get("control_plane_count", 3)),
                "controller_image": s["controller_image"],
                "disks_to_format": fmt,
                "enable_skip_mco_reboot": bool(s["enable_skip_mco_reboot"]),
                "host_id": h.id,
                "infra_env_id": h.infra_env_id,
            }
            if args:
                req["installer_args"] = go_dumps(args)
            req.update({
                "installer_image": s["installer_image"],
                "mco_image": cluster.spec.get("mco_image", ""),
                "must_gather_image": cluster.spec.get("must_gather_image", ""),
                "openshift_version": cluster.spec.get("openshift_version", ""),
            })
            proxy = self._proxy(cluster)
            if proxy:
                req["proxy"] = proxy
            req["role"] = role
            req["service_ips"] = None
            if "--save-partlabel" in args or "--save-partindex" in args:
                req["skip_installation_disk_cleanup"] = True
        else:
            req = {
                "boot_device": disk_path,
                "check_cvo": bool(s["check_cvo"]),
                "cluster_id": cluster.id,
                "controller_image": s["controller_image"],
                "disks_to_format": fmt,
                "enable_skip_mco_reboot": bool(s["enable_skip_mco_reboot"]),
                "high_availability_mode": cluster.ha_mode,
                "host_id": h.id,
                "infra_env_id": h.infra_env_id,
            }
            if args:
                req["installer_args"] = go_dumps(args)
            req.update({
                "installer_image": s["installer_image"],
                "mco_image": cluster.spec.get("mco_image", ""),
                "must_gather_image": cluster.spec.get("must_gather_image", ""),
                "openshift_version": cluster.spec.get("openshift_version", ""),
            })
            proxy = self._proxy(cluster)
            if proxy:
                req["proxy"] = proxy
            req["role"] = role
            req["service_ips"] = None
            if "--save-partlabel" in args or "--save-partindex" in args:
                req["skip_installation_disk_cleanup"] = True
        return go_dumps(req)

    def _proxy(self, cluster):
        d = cluster.spec
        if not d.get("http_proxy") and not d.get("https_proxy"):
            return None
        p = {}
        if d.get("http_proxy"):
            p["http_proxy"] = d["http_proxy"]
        if d.get("https_proxy"):
            p["https_proxy"] = d["https_proxy"]
        no = (d.get("no_proxy") or "").strip()
        if no == "*":
            p["no_proxy"] = no
        else:
            parts = ([no] if no else []) + ["127.0.0.1", "localhost", ".svc", ".cluster.local",
                                             "api-int.%s.%s" % (d.get("name"), d.get("base_dns_domain"))]
            p["no_proxy"] = ",".join(parts)
        return p

    def _installer_args(self, h, cluster):
        args = list(h.installer_args or cluster.spec.get("installer_args") or [])
        if not any(a.startswith("ip=") for a in args):
            nets = cluster.spec.get("machine_networks") or []
            if nets:
                v6 = ":" in nets[0]
                for itf in self._inv(h).get("interfaces") or []:
                    addrs = itf.get("ipv6_addresses" if v6 else "ipv4_addresses") or []
                    if any(_cidr_contains(nets[0], a) for a in addrs):
                        args += ["--append-karg", "ip=%s:%s" % (itf.get("name"), "dhcp6" if v6 else "dhcp")]
        disk = self._install_disk(h)
        if disk and disk.get("drive_type") == "Multipath":
            args += ["--append-karg", "root=/dev/disk/by-label/dm-mpath-root", "--append-karg", "rw",
                     "--append-karg", "rd.multipath=default"]
        return args

    def _disks_to_format(self, h):
        out = []
        for d in self._inv(h).get("disks") or []:
            removable = d.get("removable") or "mmcblk" in (d.get("by_path") or "")
            if d.get("bootable") and not removable and not d.get("is_installation_media") and \
                    d.get("drive_type") not in ("FC", "iSCSI", "LVM", "Multipath"):
                out.append(d.get("id") or "/dev/" + d.get("name", ""))
        return out

    def _install_disk(self, h):
        for d in self._inv(h).get("disks") or []:
            if (d.get("id") or "/dev/" + d.get("name", "")) == h.installation_disk_id:
                return d
        return None

    # -- step replies (V2PostStepReply) ----------------------------------
    OUTPUT_MODELS = {
        "inventory": "inventory",
        "connectivity-check": "connectivity-report",
        "free-network-addresses": "free_networks_addresses",
        "dhcp-lease-allocate": "dhcp_allocation_response",
        "api-vip-connectivity-check": "api_vip_connectivity_response",
        "tang-connectivity-check": "tang_connectivity_response",
        "ntp-synchronizer": "ntp_synchronization_response",
        "installation-disk-speed-check": "disk_speed_check_response",
        "container-image-availability": "container_image_availability_response",
        "domain-resolution": "domain_resolution_response",
        "upgrade-agent": "upgrade_agent_response",
        "verify-vips": "verify_vips_response",
    }

    def check_output(self, step_type, output):
        """Decode + validate a step output against its model.

        Returns (value, unmarshal_error, validation_errors, unknown_keys)."""
        model = self.OUTPUT_MODELS.get(step_type)
        if model is None:
            return None, None, [], []
        from swaggerval import go_decode, GoJSONError
        schema = {"$ref": "#/definitions/" + model}
        try:
            value = go_decode(output or "", strict=True)   # json.Unmarshal in filterReply
        except GoJSONError as e:
            msg = str(e)
            if msg == "EOF":
                msg = "unexpected end of JSON input"
            return None, msg, [], []
        err = self.sw.go_unmarshal_error(schema, value)
        verrs = [e.message for e in self.sw.validate(schema, value, "", "body")]
        unknown = self.sw.unknown_keys(schema, value)
        return value, err, verrs, unknown

    def step_reply(self, ie_id, host_id, reply):
        h = self.host(ie_id, host_id)
        cluster = self.clusters.get(h.cluster_id) if h.cluster_id else None
        st_type = reply.get("step_type") or ""
        exit_code = reply.get("exit_code") or 0
        sid = reply.get("step_id") or ""
        rec = {"step_id": sid, "step_type": st_type, "exit_code": exit_code, "time": now_ms(),
               "issued": sid in h.issued, "output_errors": [], "output_warnings": []}
        if sid and sid in h.issued and h.issued[sid] != st_type:
            rec["output_warnings"].append("step_id %s was issued as %s" % (sid, h.issued[sid]))
        if sid and sid not in h.issued:
            rec["output_warnings"].append("step_id %s was never issued to this host" % sid)
        h.replies.append(rec)
        if exit_code != 0:
            if st_type == "install":
                if not (exit_code == 125 and 'the container name "assisted-installer" is already in use'
                        in (reply.get("error") or "")):
                    if h.status in ("installing", "installing-in-progress"):
                        h.set_status("error", "installation command failed")
                        self.refresh_cluster(cluster)
            return rec
        value, uerr, verrs, unknown = self.check_output(st_type, reply.get("output"))
        rec["output_errors"] = ([uerr] if uerr else []) + verrs
        rec["output_warnings"].extend("unknown key %s" % k for k in unknown)
        if st_type in self.OUTPUT_MODELS and uerr:
            raise ApiError(400, uerr)
        if st_type not in self.OUTPUT_MODELS:
            return rec
        schema = {"$ref": "#/definitions/" + self.OUTPUT_MODELS[st_type]}
        _p, filtered = self.sw.go_filter(schema, value)
        stored = go_dumps(filtered)
        if st_type == "inventory":
            allowed = HOST_STATUSES_BEFORE_INSTALLATION + UNBOUND_STATUSES + ["installing-in-progress", "binding"]
            if h.status not in allowed:
                raise ApiError(500, "Host is in %s state, host can be updated only in one of %s states" % (
                    h.status, "[" + " ".join(allowed) + "]"))
            self.apply_inventory(h, filtered)
        elif st_type == "connectivity-check":
            h.fields["connectivity"] = stored
        elif st_type == "free-network-addresses":
            if not filtered:
                raise ApiError(500, "Free addresses for host %s is empty" % h.id)
            h.fields["free_addresses"] = stored
        elif st_type == "dhcp-lease-allocate":
            if cluster is None or not cluster.spec.get("vip_dhcp_allocation"):
                raise ApiError(500, "DHCP not enabled in cluster %s" % (h.cluster_id or ""))
        elif st_type == "api-vip-connectivity-check":
            h.fields["api_vip_connectivity"] = stored
        elif st_type == "tang-connectivity-check":
            h.fields["tang_connectivity"] = stored
        elif st_type == "ntp-synchronizer":
            h.fields["ntp_sources"] = go_dumps(filtered.get("ntp_sources") or [])
            self.refresh_host(h)
        elif st_type == "domain-resolution":
            h.fields["domain_name_resolutions"] = stored
        elif st_type == "installation-disk-speed-check":
            path = filtered.get("path", "")
            h.fields["disks_info"] = go_dumps({path: {"disk_speed": {"speed_ms": filtered.get("io_sync_duration", 0),
                                                                      "tested": True}, "path": path}})
            h._disk_checked = True
            self._maybe_prepared(h, cluster)
        elif st_type == "container-image-availability":
            statuses = {}
            for img in filtered.get("images") or []:
                statuses[img.get("name", "")] = img
            h.fields["images_status"] = go_dumps(dict(sorted(statuses.items())))
            h._images_checked = all((i or {}).get("result") == "success" for i in filtered.get("images") or [])
            self._maybe_prepared(h, cluster)
        h.touch()
        return rec

    def _maybe_prepared(self, h, cluster):
        if h.status != "preparing-for-installation":
            return
        if getattr(h, "_disk_checked", False) and getattr(h, "_images_checked", False):
            h.set_status("preparing-successful", "Host finished successfully to prepare for installation")
            hosts = self.cluster_hosts(cluster.id)
            if all(x.status == "preparing-successful" for x in hosts):
                self._start_installing(cluster, hosts)

    # -- inventory -> host fields, validations, status --------------------
    def apply_inventory(self, h, inv):
        schema = {"$ref": "#/definitions/inventory"}
        _p, inv = self.sw.go_filter(schema, inv)
        cluster = self.clusters.get(h.cluster_id) if h.cluster_id else None
        min_bytes = int(self.settings["min_disk_size_gb"]) * 1000 ** 3
        allowed = self.settings["eligible_drive_types"]
        for d in inv.get("disks") or []:
            reasons = []
            if (d.get("size_bytes") or 0) < min_bytes:
                reasons.append("Disk is too small (disk only has %s, but %s are required)" % (
                    humanize_bytes(d.get("size_bytes") or 0), humanize_bytes(min_bytes)))
            if d.get("drive_type") not in allowed:
                reasons.append("Drive type is %s, it must be one of %s." % (d.get("drive_type", ""),
                                                                            ", ".join(allowed)))
            if reasons:
                d["installation_eligibility"] = {"not_eligible_reasons": reasons}
            else:
                d["installation_eligibility"] = {"eligible": True, "not_eligible_reasons": None}
        # re-sort keys of disks after adding installation_eligibility
        inv["disks"] = [dict(sorted(d.items())) for d in inv.get("disks") or []] if inv.get("disks") is not None \
            else None
        h.inventory_obj = inv
        h.inventory = go_dumps(inv)
        if inv.get("hostname"):
            h.requested_hostname = inv["hostname"]
        eligible = [d for d in inv.get("disks") or [] if d["installation_eligibility"].get("eligible")]
        eligible.sort(key=lambda d: (d.get("name", "").startswith("nvme"), d.get("drive_type", ""),
                                     d.get("size_bytes") or 0))
        if eligible and h.installation_disk_id not in [x.get("id") or "/dev/" + x.get("name", "") for x in eligible]:
            d = eligible[0]
            h.installation_disk_id = d.get("id") or "/dev/" + d.get("name", "")
            h.installation_disk_path = "/dev/" + d.get("name", "")
        elif not eligible:
            h.installation_disk_id = ""
            h.installation_disk_path = ""
        self.refresh_host(h)
        self.refresh_cluster(cluster)

    def validations(self, h):
        s = self.settings
        inv = h.inventory_obj
        hw = []
        net = []

        def add(cat, vid, ok, good, bad):
            cat.append({"id": vid, "status": "success" if ok else "failure", "message": good if ok else bad})

        add(hw, "has-inventory", inv is not None, "Valid inventory exists for the host",
            "Inventory has not been received for the host")
        if inv is None:
            return {"hardware": hw}
        cores = (inv.get("cpu") or {}).get("count") or 0
        add(hw, "has-min-cpu-cores", cores >= s["min_cpu_cores"], "Sufficient CPU cores",
            "The host is not eligible to participate in Openshift Cluster because the minimum required CPU "
            "cores for any role is %d, found only %d" % (s["min_cpu_cores"], cores))
        ram = (inv.get("memory") or {}).get("physical_bytes") or 0
        need = int(s["min_ram_mib"]) * 1024 * 1024
        add(hw, "has-min-memory", ram >= need, "Sufficient minimum RAM",
            "The host is not eligible to participate in Openshift Cluster because the minimum required RAM for "
            "any role is %s, found only %s" % (_gib(need), _gib(ram)))
        add(hw, "has-min-valid-disks", bool(h.installation_disk_id), "Sufficient disk capacity",
            "No eligible disks were found, please check specific disks to see why they are not eligible")
        name = h.requested_hostname or inv.get("hostname") or ""
        forbidden = name in ("localhost", "localhost.localdomain", "localhost4", "localhost4.localdomain4",
                             "localhost6", "localhost6.localdomain6", "")
        add(hw, "hostname-valid", not forbidden, "Hostname %s is allowed" % name,
            "Hostname %s is forbidden" % name)
        if s.get("require_ntp_synced"):
            srcs = []
            try:
                srcs = json.loads(h.fields.get("ntp_sources") or "[]")
            except ValueError:
                pass
            synced = any((x or {}).get("source_state") == "synced" for x in srcs)
            add(net, "ntp-synced", synced, "Host NTP is synced", "Host couldn't synchronize with any NTP server")
        out = {"hardware": hw}
        if net:
            out["network"] = net
        return out

    def refresh_host(self, h):
        v = self.validations(h)
        h.validations = v
        cluster = self.clusters.get(h.cluster_id) if h.cluster_id else None
        if cluster is not None and h.inventory_obj is not None and h.role == "auto-assign":
            masters = [x for x in self.cluster_hosts(cluster.id)
                       if x is not h and x.seq < h.seq and x.effective_role() == "master"]
            want = int(cluster.spec.get("control_plane_count", 3))
            h.suggested_role = "master" if len(masters) < want else "worker"
        failing = [x["message"] for cat in v.values() for x in cat if x["status"] == "failure"]
        # minimal hardware failures get their own status_info (host/statemachine.go, common.go)
        hw_failing = [x["message"] for cat in v.values() for x in cat
                      if x["status"] == "failure" and x["id"] in ("has-min-cpu-cores", "has-min-memory",
                                                                   "has-min-valid-disks")]
        st = h.status
        if st in ("discovering", "known", "insufficient", "pending-for-input", "disconnected"):
            if h.inventory_obj is None:
                return
            if hw_failing:
                h.set_status("insufficient", "Host does not meet the minimum hardware requirements: "
                             + " ; ".join(hw_failing))
            elif failing:
                h.set_status("insufficient", "Host cannot be installed due to following failing validation(s): "
                             + " ; ".join(failing))
            else:
                h.set_status("known", "Host is ready to be installed")
        elif st in UNBOUND_STATUSES:
            if h.inventory_obj is None:
                return
            if failing:
                h.set_status("insufficient-unbound", "Host cannot be bound to a cluster due to following failing "
                             "validation(s): " + " ; ".join(failing))
            else:
                h.set_status("known-unbound", "Host is ready to be bound to a cluster")

    def refresh_cluster(self, cluster):
        if cluster is None or cluster.status_fixed:
            return
        if cluster.status not in ("insufficient", "ready", "pending-for-input"):
            return
        hosts = self.cluster_hosts(cluster.id)
        need = int(cluster.spec.get("control_plane_count", 3))
        if hosts and len(hosts) >= need and all(h.status == "known" for h in hosts):
            cluster.set_status("ready", "Cluster ready to be installed")
        else:
            cluster.set_status("insufficient", "Cluster is not ready for install")

    # -- install ----------------------------------------------------------
    def install_cluster(self, cluster_id, prepare=False, force=False, bootstrap_host=None):
        cluster = self.cluster(cluster_id)
        hosts = self.cluster_hosts(cluster.id)
        if not force:
            if cluster.status != "ready":
                raise ApiError(409, "cluster %s is expected to be ready but is %s" % (cluster.id, cluster.status))
        if not hosts:
            raise ApiError(409, "cluster %s has no hosts" % cluster.id)
        need = int(cluster.spec.get("control_plane_count", 3))
        masters = [h for h in hosts if h.role == "master"]
        for h in hosts:
            if h.role == "auto-assign":
                if len(masters) < need:
                    h.role = "master"
                    masters.append(h)
                else:
                    h.role = "worker"
            h.suggested_role = h.role
        for h in hosts:
            h.bootstrap = False
        boot = None
        if bootstrap_host:
            boot = next((h for h in hosts if h.id == bootstrap_host), None)
        if boot is None and masters:
            boot = masters[0]
        if boot is not None:
            boot.bootstrap = True
        for h in hosts:
            h._stages_cache = h.stages(cluster.sno)
        cluster.install_started_at = now_ms()
        cluster.status_fixed = False
        if prepare:
            cluster.set_status("preparing-for-installation", "Preparing cluster for installation")
            for h in hosts:
                h._disk_checked = False
                h._images_checked = False
                h.set_status("preparing-for-installation", "Host is preparing for installation")
        else:
            self._start_installing(cluster, hosts)
        return cluster

    def _start_installing(self, cluster, hosts):
        cluster.set_status("installing", "Installation in progress")
        for h in hosts:
            h.set_status("installing", "Installation is in progress")

    # -- progress (V2UpdateHostInstallProgress + host.UpdateInstallProgress)
    def update_progress(self, ie_id, host_id, progress):
        h = self.host(ie_id, host_id)
        if not h.cluster_id:
            raise ApiError(400, "host %s is not bound to any cluster, cannot update progress" % host_id)
        cluster = self.clusters.get(h.cluster_id)
        stage = progress.get("current_stage") or ""
        info = progress.get("progress_info") or ""
        prev = h.progress
        if stage == prev["current_stage"]:
            if info == prev["progress_info"]:
                return
            prev["progress_info"] = info
            prev["stage_updated_at"] = now_ms()
            h.touch()
            return
        if h.status not in ("installing", "installing-in-progress", "installing-pending-user-action"):
            raise ApiError(409, "Can't set progress <%s> to host in status <%s>" % (stage, h.status))
        pct = None
        if stage != "Failed":
            stages = h.stages(cluster.sno if cluster else False)
            if prev["current_stage"]:
                if stage not in stages:
                    raise ApiError(409, "Stages %s isn't available for host role %s bootstrap %s" % (
                        stage, h.role, "true" if h.bootstrap else "false"))
                if stages.index(stage) < (stages.index(prev["current_stage"]) if prev["current_stage"] in stages
                                          else -1):
                    raise ApiError(409, "Can't assign lower stage \"%s\" after host has been in stage \"%s\"" % (
                        stage, prev["current_stage"]))
            idx = stages.index(stage) if stage in stages else -1
            if stages:
                pct = int((idx + 1) / float(len(stages)) * 100 + 0.5)
            else:
                pct = 0
        t = now_ms()
        if stage == "Failed":
            status_info = "Failed" + (" - %s" % info if info else "")
            h.set_status("error", status_info)
        else:
            prev["current_stage"] = stage
            prev["progress_info"] = info
            prev["stage_started_at"] = t
            prev["stage_updated_at"] = t
            if pct is not None:
                prev["installation_percentage"] = pct
            if stage == "Done":
                h.set_status("installed", "Done")
            else:
                h.set_status("installing-in-progress", stage)
        self.refresh_cluster_install(cluster)

    def refresh_cluster_install(self, cluster):
        if cluster is None:
            return
        hosts = self.cluster_hosts(cluster.id)
        if cluster.status not in ("installing", "finalizing", "installing-pending-user-action"):
            return
        if any(h.status == "error" for h in hosts):
            cluster.set_status("error", "cluster has hosts in error")
            return
        if any(h.status == "installing-pending-user-action" for h in hosts):
            cluster.set_status("installing-pending-user-action", "Cluster has hosts with wrong boot order")
            return
        if all(h.status == "installed" for h in hosts):
            cluster.install_completed_at = now_ms()
            cluster.set_status("installed", "Cluster is installed")
            return
        masters = [h for h in hosts if h.role == "master"]
        if masters and all(h.status == "installed" for h in masters):
            cluster.set_status("finalizing", "Finalizing cluster installation")

    # -- logs ---------------------------------------------------------------
    def host_logs_progress(self, ie_id, host_id, state):
        h = self.host(ie_id, host_id)
        h.logs_info = state
        if state == "requested":
            h.logs_started_at = now_ms()
        h.touch()

    def cluster_logs_progress(self, cluster_id, state):
        c = self.cluster(cluster_id)
        c.logs_info = state
        if state == "requested":
            c.controller_logs_started_at = now_ms()
        c.touch()

    # -- downloads ----------------------------------------------------------
    def host_ignition(self, ie_id, host_id):
        h = self.host(ie_id, host_id)
        if not h.cluster_id:
            raise ApiError(409, "host %s is not bound to any cluster" % host_id)
        c = self.cluster(h.cluster_id)
        if c.status not in CLUSTER_CAN_DOWNLOAD:
            raise ApiError(409, "cluster %s is in %s state, files can be downloaded only when status is one of: "
                                "%s" % (c.id, c.status, "[" + " ".join(CLUSTER_CAN_DOWNLOAD) + "]"))
        role = h.effective_role() if h.effective_role() in ("master", "worker", "arbiter") else "master"
        name = "%s-%s.ign" % (role, h.id)
        if h.ignition is not None:
            return name, h.ignition
        source = "https://api-int.%s.%s:22623/config/%s" % (c.spec.get("name"), c.spec.get("base_dns_domain"),
                                                             role)
        ign = {"ignition": {"config": {"merge": [{"source": source}]}, "version": "3.2.0"},
               "storage": {"files": [{"contents": {"source": "data:,%s" % (h.requested_hostname or h.id)},
                                      "mode": 420, "overwrite": True, "path": "/etc/hostname"}]}}
        return name, go_dumps(ign).encode("utf-8")

    def cluster_file(self, cluster_id, name):
        c = self.cluster(cluster_id)
        if c.status not in CLUSTER_CAN_DOWNLOAD:
            raise ApiError(409, "cluster %s is in %s state, files can be downloaded only when status is one of: "
                                "%s" % (c.id, c.status, "[" + " ".join(CLUSTER_CAN_DOWNLOAD) + "]"))
        if name in c.files:
            return c.files[name]
        if name.endswith(".ign"):
            return go_dumps({"ignition": {"version": "3.2.0"}}).encode("utf-8")
        raise ApiError(409, "failed to download file %s/%s: not found" % (c.id, name))

    # -- control -------------------------------------------------------------
    def control_update_host(self, h, spec):
        if "status" in spec:
            h.set_status(spec["status"], spec.get("status_info", h.status_info or ""))
        elif "status_info" in spec:
            h.status_info = spec["status_info"]
        if "role" in spec:
            h.role = spec["role"]
            if spec["role"] != "auto-assign":
                h.suggested_role = spec["role"]
        if "suggested_role" in spec:
            h.suggested_role = spec["suggested_role"]
        if "bootstrap" in spec:
            h.bootstrap = bool(spec["bootstrap"])
        if "stage" in spec or "current_stage" in spec:
            t = now_ms()
            h.progress["current_stage"] = spec.get("stage", spec.get("current_stage")) or ""
            h.progress["progress_info"] = spec.get("progress_info", "")
            h.progress["stage_started_at"] = t
            h.progress["stage_updated_at"] = t
        if "installation_disk_id" in spec:
            h.installation_disk_id = spec["installation_disk_id"]
            h.installation_disk_path = spec.get("installation_disk_path", h.installation_disk_path)
        if "requested_hostname" in spec:
            h.requested_hostname = spec["requested_hostname"]
        if "installer_args" in spec:
            h.installer_args = spec["installer_args"]
        if "ignition" in spec:
            ign = spec["ignition"]
            h.ignition = (json.dumps(ign) if isinstance(ign, (dict, list)) else ign).encode("utf-8")
        if "media_status" in spec:
            h.media_status = spec["media_status"]
        if "role" in spec or "bootstrap" in spec:
            c = self.clusters.get(h.cluster_id) if h.cluster_id else None
            h._stages_cache = h.stages(c.sno if c else False)
        h.touch()

    def control_update_cluster(self, c, spec):
        if "status" in spec:
            c.set_status(spec["status"], spec.get("status_info", c.status_info))
            c.status_fixed = bool(spec.get("fixed", spec["status"] not in ("insufficient", "ready")))
        for k in ("files",):
            for name, content in (spec.get(k) or {}).items():
                c.set_file(name, content)
        for k, v in spec.items():
            if k in ("status", "status_info", "files", "fixed", "id"):
                continue
            c.spec[k] = v
        c.touch()

    def snapshot(self):
        style = self.settings.get("install_cmd_style")
        return {
            "settings": self.settings,
            "clusters": [c.to_api(self.cluster_hosts(c.id), style) for c in self.clusters.values()],
            "infra_envs": [ie.to_api() for ie in self.infra_envs.values()],
            "hosts": [self.host_debug(h) for h in sorted(self.hosts.values(), key=lambda x: x.seq)],
        }

    def host_debug(self, h):
        d = h.to_api()
        d["_issued_steps"] = dict(h.issued)
        d["_replies"] = list(h.replies)
        return d


CLUSTER_KEYS = set(DEFAULT_CLUSTER) | {"id", "status", "status_info", "files", "installer_args", "platform_type",
                                       "high_availability_mode"}
INFRA_ENV_KEYS = set(DEFAULT_INFRA_ENV) | {"id", "cluster_id"}
HOST_KEYS = {"id", "infra_env_id", "cluster_id", "discovery_agent_version", "inventory", "status", "status_info",
             "role", "suggested_role", "bootstrap", "stage", "current_stage", "progress_info",
             "installation_disk_id", "installation_disk_path", "requested_hostname", "installer_args", "ignition",
             "media_status"}


def check_scenario(sc):
    """Fail fast on a misspelt scenario key (raises ValueError)."""
    if not isinstance(sc, dict):
        raise ValueError("a scenario is a JSON object")

    def keys(obj, allowed, where):
        if not isinstance(obj, dict):
            raise ValueError("%s: expected an object" % where)
        bad = sorted(k for k in obj if k not in allowed and not k.startswith("_"))
        if bad:
            raise ValueError("%s: unknown key(s) %s (allowed: %s)" % (where, ", ".join(bad),
                                                                    ", ".join(sorted(allowed))))

    keys(sc, {"settings", "clusters", "infra_envs", "hosts", "faults"}, "scenario")
    keys(sc.get("settings") or {}, set(DEFAULT_SETTINGS), "settings")
    for i, c in enumerate(sc.get("clusters") or []):
        keys(c, CLUSTER_KEYS, "clusters[%d]" % i)
    for i, ie in enumerate(sc.get("infra_envs") or []):
        keys(ie, INFRA_ENV_KEYS, "infra_envs[%d]" % i)
    for i, h in enumerate(sc.get("hosts") or []):
        keys(h, HOST_KEYS, "hosts[%d]" % i)
        if "id" not in h or "infra_env_id" not in h:
            raise ValueError("hosts[%d]: id and infra_env_id are required" % i)
    style = (sc.get("settings") or {}).get("install_cmd_style", "2023")
    if style not in ("2023", "head"):
        raise ValueError("settings.install_cmd_style must be \"2023\" or \"head\"")


def _gib(n):
    g = n / float(1024 ** 3)
    return ("%.2f GiB" % g).replace(".00 GiB", " GiB")


def load_scenario(path):
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f)

