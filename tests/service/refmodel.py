#!/usr/bin/python3
"""State and behaviour of the reference service: infra-envs, clusters, hosts.

Everything here follows what was observed from the real assisted-service
(shared/reference/observed/, commit b29f9bcf, 2023-10-27) and what its
source does at the places named in the comments.  Where the real service
runs a periodic monitor (host validations, cluster status), this model
applies the same result at once, when the request that triggers it is
handled: tests get deterministic state without waiting.
"""

import base64
import copy
import datetime
import hashlib
import ipaddress
import json
import random
import re
import secrets
import threading
import time
import uuid

import generations
import refvalid
from refvalid import yaml
from refvalid import ValidationFailed
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
    # the API generation played (generations.py): None (observed answers,
    # request bodies decoded leniently against the 2026 swagger), "2023"
    # (the b29f9bcf service as it runs: its models, unknown body fields
    # refused), "head" (the 2026 service)
    "api_generation": None,
    # "2023": install step as observed (high_availability_mode);
    # "head": as the 2026 swagger (control_plane_count); a generation
    # implies its own
    "install_cmd_style": "2023",
    # RELEASE_IMAGES (what the service installs; observed/01, 02)
    "release_images": None,
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
    # ENABLE_VIRTUAL_INTERFACES: off, the service stores only the inventory
    # interfaces whose type is empty (older agents), physical, vlan or bond
    # (host.go UpdateInventory); labs whose NICs are veth pairs turn it on
    "enable_virtual_interfaces": False,
    # IMAGE_SERVICE_BASE_URL / SERVICE_BASE_URL; "" = this service's own
    # base URL (it serves the image-service paths too)
    "image_service_base_url": "",
    "service_base_url": "",
    # AUTH_TYPE: "none", "local" (image URLs /byapikey/<token>/...), "rhsso"
    # (/bytoken/<token>/..., expiring after 4 h); "" = none, or local when
    # the service runs with --token
    "auth_type": "",
    # PUBLIC_CONTAINER_REGISTRIES-derived: registries a pull secret needs
    # credentials for (validations.go ValidatePullSecret); none by default
    "registries_requiring_auth": [],
    # the builtin operators a REST-registered cluster monitors (observed:
    # console; newer services add cvo); all must report available before the
    # cluster is installed
    "builtin_operators": ["console"],
    # FINALIZING_STAGE_<STAGE>_TIMEOUT (internal/cluster/finalizing_stages.go):
    # seconds by stage name, over the defaults below, so that a test can
    # make a stage's timeout seconds
    "finalizing_stage_timeouts": {},
    # ENABLE_SOFT_TIMEOUTS together with the organization's soft timeouts:
    # off in the service's default configuration
    "soft_timeouts": False,
    # INSTALLATION_TIMEOUT (24h) and FINALIZING_TIMEOUT (5h) of
    # internal/cluster/cluster.go, in seconds
    "installation_timeout": 24 * 3600,
    "finalizing_timeout": 5 * 3600,
}

# internal/cluster/finalizing_stages.go at 063b2579: each finalizing
# stage's timeout in seconds, hard (the default) and soft; the cluster
# monitor fails the cluster when a stage runs past it, except in the
# non-failing stages (and with soft timeouts), where it only sets
# progress.finalizing_stage_timed_out, says so in status_info and emits
# finalizing_stage_timed_out. For the OLM stages the timeout is raised to
# the largest timeout_seconds of the cluster's OLM operators.
_GENERAL_WAIT, _LONG_WAIT, _SHORT_WAIT = 70 * 60, 10 * 3600, 10 * 60
FINALIZING_STAGE_TIMEOUTS_HARD = {
    "Waiting for cluster operators": _LONG_WAIT,
    "Adding router ca": _GENERAL_WAIT,
    "Applying olm manifests": _SHORT_WAIT,
    "Waiting for olm operators csv": _GENERAL_WAIT,
    "Waiting for olm operators csv initialization": _GENERAL_WAIT,
    "Waiting for OLM operator setup jobs": _SHORT_WAIT,
    "Done": _GENERAL_WAIT,
}
FINALIZING_STAGE_TIMEOUTS_SOFT = dict(FINALIZING_STAGE_TIMEOUTS_HARD, **{
    "Waiting for cluster operators": _GENERAL_WAIT})
NON_FAILING_FINALIZING_STAGES = ("Applying olm manifests", "Waiting for olm operators csv initialization",
                                 "Waiting for olm operators csv")
OLM_FINALIZING_STAGES = ("Waiting for olm operators csv initialization", "Waiting for olm operators csv",
                         "Waiting for OLM operator setup jobs")
# internal/cluster/common.go
STATUS_INFO_FINALIZING_STAGE_TIMEOUT = ("Cluster finalizing stage '%s' has been timed out after timeout duration "
                                        "of %d minutes")
STATUS_INFO_FINALIZING_TIMEOUT = "Cluster installation timeout while finalizing"
STATUS_INFO_INSTALLATION_TIMEOUT = "cluster installation timeout (%d minutes) has expired"
STATUS_INFO_PENDING_USER_ACTION_TIMEOUT = ("cluster installation timed out while pending user action (a manual booting "
                                           "from installation disk)")
STATUS_INFO_FINALIZING_STAGE_SOFT_TIMEOUT = ("Cluster finalizing stage '%s' is taking longer than the expected "
                                             "duration (%d minutes). To troubleshoot use kubeconfig or connect to "
                                             "any node using ssh")


def finalizing_stage_timeout(stage, operators, settings):
    """finalizingStageTimeout: seconds. A stage the table does not know
    gets the general 70 minutes (finalizingStageDefaultTimeout)."""
    soft = bool(settings.get("soft_timeouts"))
    table = FINALIZING_STAGE_TIMEOUTS_SOFT if soft else FINALIZING_STAGE_TIMEOUTS_HARD
    timeout = (settings.get("finalizing_stage_timeouts") or {}).get(stage)
    if timeout is None:
        timeout = table.get(stage, _GENERAL_WAIT)
    if stage in OLM_FINALIZING_STAGES:
        # math.Max over the OLM operators, then whole seconds
        timeout = int(max([float(timeout)] + [float(o.get("timeout_seconds") or 0) for o in operators
                                                 if o.get("operator_type") == "olm"]))
    return timeout

# interface types the service keeps without ENABLE_VIRTUAL_INTERFACES
PHYSICAL_INTERFACE_TYPES = ("", "physical", "vlan", "bond")

# observed/01 (v2ListSupportedOpenshiftVersions); the OS images the
# infra-env's openshift_version resolves to are these minor versions
OPENSHIFT_VERSIONS = {
    "4.13": {"cpu_architectures": ["x86_64"], "default": True, "display_name": "4.13.18",
             "support_level": "production"},
    "4.14": {"cpu_architectures": ["x86_64"], "display_name": "4.14.0-rc.7", "support_level": "beta"}}
# RELEASE_IMAGES behind observed/01 and 02 (models.ReleaseImage); the list
# the setting release_images replaces
DEFAULT_RELEASE_IMAGES = [
    {"openshift_version": "4.13", "cpu_architecture": "x86_64", "cpu_architectures": ["x86_64"],
     "url": "quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64", "version": "4.13.18", "default": True},
    {"openshift_version": "4.14", "cpu_architecture": "x86_64", "cpu_architectures": ["x86_64"],
     "url": "quay.io/openshift-release-dev/ocp-release:4.14.0-rc.7-x86_64", "version": "4.14.0-rc.7"},
]
OBSERVED_PULL_SECRET = ('{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl","email":"dev@example.com"},'
                        '"registry.redhat.io":{"auth":"ZmFrZTpmYWtl","email":"dev@example.com"},'
                        '"cloud.openshift.com":{"auth":"ZmFrZTpmYWtl","email":"dev@example.com"}}}')

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
    "pull_secret": OBSERVED_PULL_SECRET,
}
# further infra-env fields a scenario may set (stored as the service stores
# them; static_network_config may be given as the API's list)
INFRA_ENV_EXTRA_KEYS = {"proxy", "static_network_config", "ignition_config_override", "kernel_arguments",
                        "additional_trust_bundle", "network_discovery_delay_seconds"}

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


def fmt_ms(ms):
    """Milliseconds since the epoch as strfmt.DateTime."""
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def epoch_ms():
    return int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)


def os_image_version(version):
    """The minor version of the OS image an openshift_version resolves to
    (versions.Handler.GetOsImageOrLatest); None when there is none."""
    parts = (version or "").split(".")
    minor = ".".join(parts[:2])
    return minor if minor in OPENSHIFT_VERSIONS else None


def _version_at_least(version, major, minor):
    """openshift_version ("4.13.18", "4.14.0-rc.1") is major.minor or later"""
    try:
        got = [int(x) for x in (version or "").split("-")[0].split(".")[:2]]
    except ValueError:
        return False
    return len(got) == 2 and got >= [major, minor]


def latest_os_image_version():
    return max(OPENSHIFT_VERSIONS, key=lambda v: [int(x) for x in v.split(".")])


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


# the kube-apiserver CA of the generated kubeconfigs: a self-signed test
# certificate made for this fake (its private key was discarded)
KUBE_APISERVER_CA = """-----BEGIN CERTIFICATE-----
MIIB1jCCAX2gAwIBAgIUZAQEfOJEX0bLMeRY0+tottkDjWYwCgYIKoZIzj0EAwIw
QDESMBAGA1UECwwJb3BlbnNoaWZ0MSowKAYDVQQDDCFyZWZzZXJ2aWNlLXRlc3Qt
a3ViZS1hcGlzZXJ2ZXItY2EwIBcNMjYxMTI0MjEwODQ2WhgPMjEyNjEwMzEyMTA4
NDZaMEAxEjAQBgNVBAsMCW9wZW5zaGlmdDEqMCgGA1UEAwwhcmVmc2VydmljZS10
ZXN0LWt1YmUtYXBpc2VydmVyLWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
Y2eHxnSKjlsk1mGKQkQuYeGJo4eDLlYNaaq4VuVtjN60ioSmmXRirnTKlX4gotBk
LkMDO1qkvT8VRjQ3XMqeQKNTMFEwHQYDVR0OBBYEFMEaJSGYmUrBkG/43m5mgeHd
VhIJMB8GA1UdIwQYMBaAFMEaJSGYmUrBkG/43m5mgeHdVhIJMA8GA1UdEwEB/wQF
MAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgUDI+0YbGO6pu49UUAtyWGC5yUmtwL4mx
BSkmnyBE6XoCIGHEHPrMagJjk/3uSyN8bTaykJHmTChPNIvB1NTIsv2G
-----END CERTIFICATE-----
"""


def kubeconfig_text(name, domain, ca_pem):
    """The cluster's admin kubeconfig as the installer writes it, without
    user credentials (nothing here could accept them)."""
    return ("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: %s\n"
            "    server: https://api.%s.%s:6443\n  name: %s\ncontexts:\n- context:\n    cluster: %s\n"
            "    user: admin\n  name: admin\ncurrent-context: admin\nkind: Config\npreferences: {}\nusers:\n"
            "- name: admin\n  user: {}\n") % (base64.b64encode(ca_pem.encode("ascii")).decode("ascii"),
                                             name, domain, name, name)


def merge_ingress_ca(kubeconfig, certs):
    """mergeIngressCaIntoKubeconfig: the stored kubeconfig-noingress (bytes)
    with the ingress CA prepended to each cluster's CA data."""
    def merge(m):
        return m.group(1) + base64.b64encode(certs.encode("ascii") + base64.b64decode(m.group(2)))
    return re.sub(rb"(certificate-authority-data:[ \t]*)(\S+)", merge, kubeconfig)


def append_ignition(base, over):
    """The override's users, files, directories, links and units appended
    to base, the version raised to the override's (Ignition's own merge
    replaces same-path entries; not modelled)."""
    base.setdefault("ignition", {})["version"] = max(base["ignition"].get("version", "3.1.0"),
                                                     (over.get("ignition") or {}).get("version", "3.1.0"))
    for sect, key in (("passwd", "users"), ("storage", "files"), ("storage", "directories"),
                      ("storage", "links"), ("systemd", "units")):
        extra = (over.get(sect) or {}).get(key)
        if extra:
            base.setdefault(sect, {}).setdefault(key, []).extend(extra)
    return base


class InfraEnv(object):
    """An infra-env as the service stores it (common.InfraEnv): spec holds
    the stored columns (strings as stored: static_network_config sorted and
    JSON-marshalled, kernel_arguments as a JSON string, proxy as its three
    columns), plus the image state (generated, expires_at, the URL's key)."""

    def __init__(self, spec, model=None):
        d = {k: v for k, v in DEFAULT_INFRA_ENV.items() if k not in ("id", "cluster_id")}
        d.update(spec)
        if "id" not in spec:
            d["id"] = str(uuid.uuid4())
        if isinstance(d.get("static_network_config"), list):
            d["static_network_config"] = refvalid.format_static_network_config(d["static_network_config"])
        if isinstance(d.get("kernel_arguments"), list):
            d["kernel_arguments"] = go_dumps(d["kernel_arguments"]) if d["kernel_arguments"] else ""
        self.model = model
        self.spec = d
        self.id = d["id"]
        self.cluster_id = d.get("cluster_id") or None
        self.created_at = now_rfc()
        self.updated_at = self.created_at
        self.generated = False
        self.generated_at = ZERO_MS      # internal column, not in the REST model
        self.expires_at = ZERO_MS
        self.image_key = None            # (type, version, arch, auth, token) of the current download URL

    def image_type_name(self):
        return {"minimal-iso": "minimal", "disconnected-iso": "disconnected"}.get(self.spec.get("type"), "full")

    def download_url(self):
        if self.image_key is None:
            return ""
        itype, version, arch, auth, token = self.image_key
        base = self.model.image_base() if self.model is not None else "http://127.0.0.1:8090"
        if auth == "local":
            prefix = "/byapikey/%s" % token
        elif auth == "rhsso":
            prefix = "/bytoken/%s" % token
        else:
            prefix = "/byid/%s" % self.id
        return "%s%s/%s/%s/%s.iso" % (base, prefix, version, arch, itype)

    def to_api(self):
        d = self.spec
        out = {
            "cpu_architecture": d.get("cpu_architecture", "x86_64"),
            "created_at": self.created_at,
            "download_url": self.download_url(),
            "email_domain": "Unknown",
            "expires_at": self.expires_at,
            "href": "/api/assisted-install/v2/infra-envs/%s" % self.id,
            "id": self.id,
            "kind": "InfraEnv",
            "name": d.get("name", "infraenv"),
            "openshift_version": d.get("openshift_version", "4.13"),
            "proxy": dict(sorted((d.get("proxy") or {}).items())),
            "pull_secret_set": bool(d.get("pull_secret")),
            "type": d.get("type", "full-iso"),
            "updated_at": self.updated_at,
            "user_name": "admin",
        }
        if not out["download_url"]:
            del out["download_url"]
        if self.cluster_id:
            out["cluster_id"] = self.cluster_id
        for k in ("ssh_authorized_key", "additional_ntp_sources", "static_network_config",
                  "ignition_config_override", "kernel_arguments", "additional_trust_bundle"):
            if d.get(k):
                out[k] = d[k]
        if d.get("network_discovery_delay_seconds") is not None:
            out["network_discovery_delay_seconds"] = d["network_discovery_delay_seconds"]
        return dict(sorted(out.items()))



class _IgnoredIds(object):
    """`id in ignored`: the cluster ignores that validation."""

    def __init__(self, ids, never):
        self.ids = [i for i in ids if isinstance(i, str)]
        self.never = never

    def __contains__(self, vid):
        return vid not in self.never and ("all" in self.ids or vid in self.ids)


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
        self.status_changed = time.monotonic()     # status_updated_at's clock, for the timeouts
        self.created_at = now_rfc()
        self.updated_at = self.created_at
        self.install_started_at = ZERO_MS
        self.install_started = None                # install_started_at's clock
        self.install_completed_at = ZERO_MS
        self.logs_info = None
        self.controller_logs_started_at = ZERO_MS
        self.controller_logs_collected_at = ZERO_MS
        self.files = {}
        for name, content in (d.get("files") or {}).items():
            self.set_file(name, content)
        self.status_fixed = "status" in spec
        self.on_status = None   # callback(cluster, old_status)
        self.majority_groups = ""    # connectivity_majority_groups, as the service stores it
        # registered through the REST API: validations, status, progress and
        # the controller's finish are the service's (scenario clusters keep
        # the simple rules the agent and installer suites rely on)
        self.managed = False
        self.operators = [dict(o) for o in d.get("monitored_operators") or [
            {"name": "console", "operator_type": "builtin", "status_updated_at": ZERO_MS, "timeout_seconds": 3600}]]
        self.manifests = []          # {"folder", "file_name", "content" (bytes)}
        self.validations = None      # cluster validations (managed clusters)
        self.finalizing_stage = None
        self.finalizing_stage_started_at = None
        self.finalizing_stage_started = None   # time.monotonic() of the stage's start
        self.finalizing_stage_timed_out = False
        self.last_preparation = {"status": "not_started"}

    def _managed_api(self, out, hosts, style):
        """The fields a REST-registered cluster carries beyond the scenario
        shape (observed/02, 10; the 2026 swagger for `head`)."""
        d = self.spec
        out["kind"] = d.get("kind", "Cluster")
        out["hyperthreading"] = d.get("hyperthreading", "all")
        out["schedulable_masters"] = bool(d.get("schedulable_masters"))
        out["pull_secret_set"] = bool(d.get("pull_secret"))
        out["platform"] = {"is_external": False, "type": d.get("platform_type") or
                           ("none" if d.get("user_managed_networking") else "baremetal")}
        features = {"Hyperthreading": {"data": {"hyperthreading_enabled": out["hyperthreading"]},
                                       "id": "HYPERTHREADING", "name": "Hyperthreading"}}
        if d.get("network_type") == "OVNKubernetes":
            features["OVN network type"] = {"id": "OVN_NETWORK_TYPE", "name": "OVN network type"}
        out["feature_usage"] = go_dumps(features)
        nets = {}
        for h in hosts:
            for itf in (h.inventory_obj or {}).get("interfaces") or []:
                for a in (itf.get("ipv4_addresses") or []) + (itf.get("ipv6_addresses") or []):
                    try:
                        n = str(ipaddress.ip_interface(a).network)
                    except ValueError:
                        continue
                    if h.id not in nets.setdefault(n, []):
                        nets[n].append(h.id)
        out["host_networks"] = [{"cidr": n, "host_ids": ids} for n, ids in sorted(nets.items())]
        for k in ("api_vip_dns_name", "openshift_cluster_id", "tags", "additional_ntp_source",
                  "install_config_overrides", "ignored_cluster_validations", "ignored_host_validations"):
            if d.get(k):
                out[k] = d[k]
        if d.get("imported"):
            out["imported"] = True
        if self.validations is not None:
            out["validations_info"] = go_dumps(self.validations)
        out["progress"] = self.progress_api(hosts)
        if style == "head":
            out["last-installation-preparation"] = dict(sorted(self.last_preparation.items()))
        for k in ("ingress_vip", "api_vip"):
            # omitempty in the 2023 model; not in the 2026 one
            if not out.get(k) or style == "head":
                out.pop(k, None)

    def progress_api(self, hosts):
        """cluster progress (internal/cluster/progress.go weights: 10 %
        preparing, 70 % installing, 20 % finalizing); zero values omitted."""
        st = self.status
        p = {}
        if st in ("installing", "installing-pending-user-action", "finalizing", "installed"):
            p["preparing_for_installation_stage_percentage"] = 100
            if st in ("finalizing", "installed"):
                inst = 100
            else:
                pcts = [h.progress.get("installation_percentage") or 0 for h in hosts]
                inst = int(sum(pcts) / len(pcts)) if pcts else 0
            p["installing_stage_percentage"] = inst
            if st == "installed":
                fin = 100
            elif st == "finalizing":
                ops = [o for o in self.operators if o.get("operator_type") == "builtin"]
                fin = int(100 * sum(1 for o in ops if o.get("status") == "available") / len(ops)) if ops else 0
            else:
                fin = 0
            p["finalizing_stage_percentage"] = fin
            p["total_percentage"] = int(10 + 0.7 * inst + 0.2 * fin)
        if self.finalizing_stage:
            p["finalizing_stage"] = self.finalizing_stage
            p["finalizing_stage_started_at"] = self.finalizing_stage_started_at
        p["finalizing_stage_timed_out"] = self.finalizing_stage_timed_out
        return dict(sorted((k, v) for k, v in p.items() if v))

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
        """updateClusterStatus: status_updated_at (and, into installed, error
        or cancelled, install_completed_at) only when the status changes,
        not when only status_info does."""
        old = self.status
        if status != self.status or info != self.status_info:
            self.status = status
            self.status_info = info
            if status != old:
                self.status_updated_at = now_ms()
                self.status_changed = time.monotonic()
                if status in ("installed", "error", "cancelled"):
                    self.install_completed_at = self.status_updated_at
            self.touch()
        if old != status and self.on_status is not None:
            self.on_status(self, old)

    def start_install_clock(self):
        self.install_started_at = now_ms()
        self.install_started = time.monotonic()

    def to_api(self, hosts, style, include_hosts=True, generation=None):
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
            "monitored_operators": [dict(sorted(dict(o, cluster_id=cid).items())) for o in self.operators],
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
        if self.majority_groups:
            out["connectivity_majority_groups"] = self.majority_groups
        if style == "head":
            out["control_plane_count"] = int(d.get("control_plane_count", 3))
        if self.logs_info is not None:
            out["logs_info"] = self.logs_info
        if include_hosts:
            out["hosts"] = [h.to_api() for h in hosts]
        if self.status == "installed":
            out["progress"] = {"finalizing_stage_percentage": 100, "installing_stage_percentage": 100,
                               "preparing_for_installation_stage_percentage": 100, "total_percentage": 100}
        if self.managed:
            self._managed_api(out, hosts, style)
        if d.get("http_proxy"):
            out["http_proxy"] = d["http_proxy"]
        if d.get("https_proxy"):
            out["https_proxy"] = d["https_proxy"]
        if d.get("no_proxy"):
            out["no_proxy"] = d["no_proxy"]
        if generation != "head":
            # b29f9bcf keeps them in common.Cluster's own fields, which shadow
            # the model's: its cluster answers never carry them (only
            # v2GetIgnoredValidations tells)
            out.pop("ignored_cluster_validations", None)
            out.pop("ignored_host_validations", None)
        if generation == "head":
            # the 2026 model: no singular VIPs, no platform.is_external
            out.pop("api_vip", None)
            out.pop("ingress_vip", None)
            out["platform"] = {k: v for k, v in out["platform"].items() if k != "is_external"}
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
        self.on_status = None        # callback(host, old_status): the status-change event
        # set through the user API (v2UpdateHost, installer-args, ignition)
        self.installer_args_json = ""        # installer_args as stored (JSON string)
        self.ignition_overrides = ""         # ignition_config_overrides
        self.machine_config_pool_name = ""
        self.node_labels = ""                # JSON object string
        self.skip_formatting = []            # disk ids (skip_formatting_disks, comma-joined)
        self.ignition_endpoint_token_set = False

    def touch(self):
        self.updated_at = now_rfc()

    def set_status(self, status, info):
        old = self.status
        if status != self.status or info != self.status_info:
            self.status = status
            self.status_info = info
            self.status_updated_at = now_ms()
        self.touch()
        if old is not None and old != status and self.on_status is not None:
            self.on_status(self, old)

    def display_name(self):
        """hostutil.GetHostnameForMsg: the requested name, else the
        inventory's, else the id."""
        if self.requested_hostname:
            return self.requested_hostname
        return (self.inventory_obj or {}).get("hostname") or self.id

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
        if self.installer_args_json:
            out["installer_args"] = self.installer_args_json
        if self.ignition_overrides:
            out["ignition_config_overrides"] = self.ignition_overrides
        if self.machine_config_pool_name:
            out["machine_config_pool_name"] = self.machine_config_pool_name
        if self.node_labels:
            out["node_labels"] = self.node_labels
        if self.skip_formatting:
            out["skip_formatting_disks"] = ",".join(self.skip_formatting)
        if self.ignition_endpoint_token_set:
            out["ignition_endpoint_token_set"] = True
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
        day2 = self.kind == "AddToExistingClusterHost"
        role = "master" if sno else "worker" if day2 else "auto-assign"
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
        if day2:
            # a day-2 host is a worker of the worker pool from its registration
            out["machine_config_pool_name"] = self.machine_config_pool_name
        out = dict(sorted(out.items()))
        out["next_step_runner_command"] = {"args": next_step_args}
        return out


# ---------------------------------------------------------------------------


class Model(object):
    """All service state; every public method is called with self.lock held."""

    def __init__(self, swagger, scenario=None, token=None):
        self.sw = swagger
        self.lock = threading.RLock()
        self.scenario = scenario or {}
        self.base_url = "http://127.0.0.1:8090"   # the Service sets its own once it listens
        self.token = token                         # --token
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
        self.events = []
        self.last_event_ms = 0
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
        c.on_status = self._cluster_status_event
        self.clusters[c.id] = c
        return c

    def add_infra_env(self, spec):
        if not spec:
            spec = dict(DEFAULT_INFRA_ENV)
        ie = InfraEnv(spec, self)
        self.infra_envs[ie.id] = ie
        self.generate_image(ie, event=False)
        return ie

    def add_host(self, spec):
        ie = self.infra_envs[spec["infra_env_id"]]
        h = Host(spec["id"], ie.id, spec.get("cluster_id", ie.cluster_id))
        h.on_status = self._host_status_event
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

    def cluster(self, cluster_id, bare_not_found=False):
        """The cluster, else the 404 most operations answer; those that read
        it with GetClusterFromDBWhere unwrapped (v2GetCluster, the
        credentials and the cluster files: bare_not_found) say only
        "record not found" (b29f9bcf, observed)."""
        c = self.clusters.get(cluster_id)
        if c is None:
            raise ApiError(404, "record not found" if bare_not_found else
                           "Failed to get cluster %s: record not found" % cluster_id)
        return c

    def monitor(self):
        """The real service's host monitor, a round before every call here:
        it moves a prepared host to installing after its cluster went
        installing, on its own (no agent needed), so an answer may show the
        cluster installing and its hosts still preparing-successful (seen
        against b29f9bcf)."""
        for h in self.hosts.values():
            if h.status != "preparing-successful" or not h.cluster_id:
                continue
            cluster = self.clusters.get(h.cluster_id)
            if cluster is not None and cluster.status == "installing":
                h.set_status("installing", "Installation is in progress")
        for c in self.clusters.values():
            self._installation_timeouts(c) or self._finalizing_stage_timeout(c)

    def _installation_timeouts(self, c):
        """The cluster monitor's whole-installation timeouts (statemachine.go,
        in its order, before the finalizing stages'): pending user action
        past INSTALLATION_TIMEOUT since the start; with soft timeouts,
        installing or finalizing past it; without them, finalizing past
        FINALIZING_TIMEOUT since the status last changed. True when the
        cluster failed."""
        if c.install_started is None:
            return False
        now = time.monotonic()
        soft = bool(self.settings.get("soft_timeouts"))
        installation = self.settings.get("installation_timeout", 24 * 3600)
        over = now - c.install_started > installation
        reason = None
        if c.status == "installing-pending-user-action" and over:
            reason = STATUS_INFO_PENDING_USER_ACTION_TIMEOUT
        elif c.status in ("installing", "finalizing") and soft and over:
            reason = STATUS_INFO_INSTALLATION_TIMEOUT % int(installation // 60)
        elif c.status == "finalizing" and not soft and \
                now - c.status_changed > self.settings.get("finalizing_timeout", 5 * 3600):
            reason = STATUS_INFO_FINALIZING_TIMEOUT
        if reason is None:
            return False
        c.set_status("error", reason)
        self.cluster_event(c, "cluster_installation_failed", "Failed installing cluster. Reason: %s" % reason,
                           "critical")
        return True

    def _finalizing_stage_timeout(self, c):
        """The cluster monitor's finalizing-stage rules (statemachine.go, in
        its order: before "Finalizing complete"): a stage past its timeout
        fails the cluster, unless it is a non-failing stage or soft timeouts
        are on; then the cluster stays finalizing, once marked timed out."""
        if c.status != "finalizing" or not c.finalizing_stage or c.finalizing_stage_started is None:
            return
        timeout = finalizing_stage_timeout(c.finalizing_stage, c.operators, self.settings)
        if time.monotonic() - c.finalizing_stage_started <= timeout:
            return
        minutes = int(timeout // 60)
        soft = bool(self.settings.get("soft_timeouts"))
        if not soft and c.finalizing_stage not in NON_FAILING_FINALIZING_STAGES:
            reason = STATUS_INFO_FINALIZING_STAGE_TIMEOUT % (c.finalizing_stage, minutes)
            c.set_status("error", reason)
            self.cluster_event(c, "cluster_installation_failed", "Failed installing cluster. Reason: %s" % reason,
                               "critical")
            return
        if c.finalizing_stage_timed_out:
            return
        # notifyFinalizingStageTimeout: status_info and the flag, no status change
        c.finalizing_stage_timed_out = True
        c.status_info = STATUS_INFO_FINALIZING_STAGE_SOFT_TIMEOUT % (c.finalizing_stage, minutes)
        c.touch()
        self.cluster_event(c, "finalizing_stage_timed_out",
                           "Cluster %s: finalizing stage %s has been active more than the expected completion "
                           "time (%d minutes)" % (c.id, c.finalizing_stage, minutes), "warning")

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
            h.on_status = self._host_status_event
            self.order += 1
            h.seq = self.order
            if cluster is not None and cluster.sno:
                h.role = "master"
                h.bootstrap = True
                h.suggested_role = "master"
            if cluster is not None and cluster.spec.get("kind") == "AddHostsCluster":
                # V2RegisterHost: a day-2 host is a worker from the start
                h.kind = "AddToExistingClusterHost"
                h.role = h.suggested_role = "worker"
                h.machine_config_pool_name = "worker"
            h.discovery_agent_version = version
            h.set_status("discovering" if cluster else "discovering-unbound",
                         "Waiting for host to send hardware details")
            self.hosts[(ie_id, host_id)] = h
            self.host_event(h, "host_registration_succeeded", "Host %s: Successfully registered" % h.display_name())
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
            if st == "binding" and cluster is not None and cluster.sno:
                h.role = "master"
                h.suggested_role = "master"
                h.bootstrap = True
            h.set_status("discovering", "Waiting for host to send hardware details")
        elif st in UNBOUND_STATUSES + ["unbinding", "unbinding-pending-user-action", "reclaiming-rebooting"]:
            h.set_status("discovering-unbound", "Waiting for host to send hardware details")
        else:
            # stateswitch finds no rule -> returnRegisterHostTransitionError(400)
            raise ApiError(400, "no condition found to run transition")
        if h.status in ("discovering", "discovering-unbound"):
            # PostRegisterHost: "we reset the hw info and progress, and start
            # the discovery process again"
            h.inventory = ""
            h.inventory_obj = None
            h.validations = None
            h.fields = {}
            h.progress = {"current_stage": "", "progress_info": "", "installation_percentage": 0,
                          "stage_started_at": ZERO_MS, "stage_updated_at": ZERO_MS}
        h.discovery_agent_version = version
        h.registered_at = now_ms()
        h.checked_in_at = h.registered_at
        h.touch()
        self.host_event(h, "host_registration_succeeded", "Host %s: Successfully registered" % h.display_name())
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
        if self._style() == "head":
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
                    d.get("drive_type") not in ("FC", "iSCSI", "LVM", "Multipath") and \
                    (d.get("id") or "/dev/" + d.get("name", "")) not in h.skip_formatting:
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
            self.refresh_cluster(cluster)
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
        if not self.settings.get("enable_virtual_interfaces") and isinstance(inv.get("interfaces"), list):
            inv["interfaces"] = [i for i in inv["interfaces"] if (i or {}).get("type", "") in PHYSICAL_INTERFACE_TYPES]
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
        mg = self._majority_validation(h)
        if mg is not None:
            net.append({"id": "belongs-to-majority-group", "status": mg[0], "message": mg[1]})
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

    # -- connectivity majority groups (network/connectivity_groups.go,
    #    cluster.go setConnectivityMajorityGroupsForCluster, host validator) --
    @staticmethod
    def _connected(h, other, cidr=None, family=None):
        """h's connectivity report shows a successful L2 check to other on
        cidr (L3 of family 4/6 when cidr is None)."""
        try:
            report = json.loads(h.fields.get("connectivity") or "{}")
        except ValueError:
            return False
        for rh in report.get("remote_hosts") or []:
            if rh.get("host_id") != other.id:
                continue
            if cidr is not None:
                return any(e.get("successful") and _cidr_contains(cidr, e.get("remote_ip_address") or "")
                           for e in rh.get("l2_connectivity") or [])
            for e in rh.get("l3_connectivity") or []:
                try:
                    v = ipaddress.ip_address(e.get("remote_ip_address") or "").version
                except ValueError:
                    continue
                if e.get("successful") and v == family:
                    return True
        return False

    def _majority_group(self, hosts, edge):
        """The largest full mesh (both directions) of at least three hosts, in
        host order; [] when there is none (fewer than three hosts: always)."""
        n = len(hosts)
        conn = [[i != j and edge(hosts[i], hosts[j]) for j in range(n)] for i in range(n)]
        best = []
        if n <= 12:
            for mask in range(1, 1 << n):
                members = [i for i in range(n) if mask >> i & 1]
                if len(members) > len(best) and all(conn[a][b] and conn[b][a] for a in members for b in members
                                                    if a != b):
                    best = members
        else:
            for start in range(n):
                group = [start]
                for j in range(n):
                    if j not in group and all(conn[j][g] and conn[g][j] for g in group):
                        group.append(j)
                if len(group) > len(best):
                    best = sorted(group)
        return [hosts[i].id for i in best] if len(best) >= 3 else []

    def refresh_majority_groups(self, cluster):
        hosts = self.cluster_hosts(cluster.id)
        groups = {}
        for cidr in cluster.spec.get("machine_networks") or []:
            groups[cidr] = self._majority_group(hosts, lambda a, b, c=cidr: self._connected(a, b, cidr=c))
        for name, fam in (("IPv4", 4), ("IPv6", 6)):
            groups[name] = self._majority_group(hosts, lambda a, b, f=fam: self._connected(a, b, family=f))
        text = go_dumps(dict(sorted(groups.items())))
        if text == cluster.majority_groups:
            return False
        cluster.majority_groups = text
        return True

    def _majority_validation(self, h):
        """belongs-to-majority-group: (status, message), None when the host
        is not in a cluster."""
        cluster = self.clusters.get(h.cluster_id) if h.cluster_id else None
        if cluster is None:
            return None
        if h.kind == "AddToExistingClusterHost":
            return "success", "Day2 host is not required to be connected to other hosts in the cluster"
        if cluster.sno:
            return "success", "Host has connectivity to the majority of hosts in the cluster"
        if not cluster.spec.get("machine_networks") or not cluster.majority_groups:
            return "pending", "Machine Network CIDR or Connectivity Majority Groups missing"
        groups = json.loads(cluster.majority_groups)
        if cluster.spec.get("user_managed_networking"):
            inv = h.inventory_obj or {}
            fams = [k for k, key in (("IPv4", "ipv4_addresses"), ("IPv6", "ipv6_addresses"))
                    if any(i.get(key) for i in inv.get("interfaces") or [])]
            ok = bool(fams) and all(h.id in groups.get(f, []) for f in fams)
        else:
            ok = all(h.id in groups.get(c, []) for c in cluster.spec.get("machine_networks") or [])
        if ok:
            return "success", "Host has connectivity to the majority of hosts in the cluster"
        if len(self.cluster_hosts(cluster.id)) < 3:
            return "pending", "Not enough hosts in cluster to calculate connectivity groups"
        return "failure", "No connectivity to the majority of hosts in the cluster"

    def refresh_host(self, h):
        v = self.validations(h)
        h.validations = v
        cluster = self.clusters.get(h.cluster_id) if h.cluster_id else None
        if cluster is not None and cluster.spec.get("kind") == "AddHostsCluster":
            h.suggested_role = "worker"
        elif cluster is not None and h.inventory_obj is not None and h.role == "auto-assign":
            masters = [x for x in self.cluster_hosts(cluster.id)
                       if x is not h and x.seq < h.seq and x.effective_role() == "master"]
            want = int(cluster.spec.get("control_plane_count", 3))
            h.suggested_role = "master" if len(masters) < want else "worker"
        ignored = self._ignored(cluster, "ignored_host_validations") if cluster is not None else []
        failing = [x["message"] for cat in v.values() for x in cat if x["status"] == "failure" and
                   x["id"] not in ignored]
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
        if cluster.managed:
            self.refresh_managed_cluster(cluster)
            return
        if cluster.status not in ("insufficient", "ready", "pending-for-input"):
            return
        # computed in the pre-installation states only, as the service does;
        # the hosts' majority validation depends on the groups and the count
        self.refresh_majority_groups(cluster)
        for x in self.cluster_hosts(cluster.id):
            self.refresh_host(x)
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
        cluster.start_install_clock()
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
        # the installation files generated, the cluster has the OpenShift
        # cluster id of their metadata (observed/10-cluster-states.json: none
        # in v2InstallCluster's answer, one once installed)
        if not cluster.spec.get("openshift_cluster_id"):
            cluster.spec["openshift_cluster_id"] = str(uuid.uuid4())
        cluster.set_status("installing", "Installation in progress")
        for h in hosts:
            if h.status != "preparing-successful":
                h.set_status("installing", "Installation is in progress")

    # -- progress (V2UpdateHostInstallProgress + host.UpdateInstallProgress)
    def update_progress(self, ie_id, host_id, progress):
        h = self.host(ie_id, host_id)
        if not h.cluster_id:
            # (sic) V2UpdateHostInstallProgress
            raise ApiError(500, "host %s is not bound to any custer, cannot update progress" % host_id)
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
            elif stage == "Rebooting" and h.kind == "AddToExistingClusterHost":
                # a day-2 host posts nothing after its reboot: over REST the
                # service is done with it, stage Done at once (host.go
                # UpdateInstallProgress; only its own controllers, in kube-api
                # mode, keep Rebooting and report the node later)
                prev["current_stage"] = "Done"
                prev["installation_percentage"] = 100
                h.set_status("added-to-existing-cluster", "Host has rebooted and no further updates will be "
                             "posted. Please check console for progress and to possibly approve pending CSRs")
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
        if not cluster.managed and all(h.status == "installed" for h in hosts):
            cluster.install_completed_at = now_ms()
            cluster.set_status("installed", "Cluster is installed")
            return
        masters = [h for h in hosts if h.role == "master"]
        if masters and all(h.status == "installed" for h in masters):
            cluster.set_status("finalizing", "Finalizing cluster installation")
            # a REST-registered cluster is installed once the controller has
            # uploaded the ingress CA and the operators are available
            self._maybe_complete(cluster)

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
        h = self.hosts.get((ie_id, host_id))
        if h is None:
            raise ApiError(404, "host %s not found in infra env %s" % (host_id, ie_id))
        if not h.cluster_id:
            raise ApiError(404, "Cluster not found for host %s in infra env %s" % (host_id, ie_id))
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
        if h.ignition_overrides:
            append_ignition(ign, json.loads(h.ignition_overrides))
        return name, go_dumps(ign).encode("utf-8")

    def cluster_file(self, cluster_id, name):
        c = self.cluster(cluster_id, bare_not_found=True)
        if c.status not in CLUSTER_CAN_DOWNLOAD:
            raise ApiError(409, "cluster %s is in %s state, files can be downloaded only when status is one of: "
                                "%s" % (c.id, c.status, "[" + " ".join(CLUSTER_CAN_DOWNLOAD) + "]"))
        if name in c.files:
            return c.files[name]
        if name.endswith(".ign"):
            return go_dumps({"ignition": {"version": "3.2.0"}}).encode("utf-8")
        raise ApiError(409, "failed to download file %s/%s: not found" % (c.id, name))

    # -- clusters (user side: inventory.go V2RegisterCluster, V2UpdateCluster,
    #    DeregisterClusterInternal, V2ImportCluster, InstallClusterInternal,
    #    CancelInstallationInternal, ...; internal/cluster validations) ----
    CLUSTER_UPDATABLE = ["insufficient", "ready", "pending-for-input", "adding-hosts"]
    CLUSTER_PRE_INSTALL = ["insufficient", "ready", "pending-for-input", "adding-hosts"]

    def generation(self):
        return self.settings.get("api_generation")

    def late_2023(self):
        """The late-2023 service's rules: its own generation, and the
        default one, which plays its observed answers."""
        return self.generation() != "head"

    def _style(self):
        """The install step's and the cluster's shape: the generation's,
        else install_cmd_style's."""
        return generations.install_cmd_style(self.generation(), self.settings.get("install_cmd_style", "2023"))

    @staticmethod
    def _ips(items):
        return [str((x or {}).get("ip", "")) for x in items or []]

    def _vip_compat(self, p, kind, cluster=None):
        """The late-2023 service's backwards compatibility of the singular
        api_vip/ingress_vip with the plural lists (not in the 2026 swagger:
        `install_cmd_style: "head"` turns it off)."""
        single = p.get(kind + "_vip")
        plural = p.get(kind + "_vips")
        name = {"api": "apiVIP", "ingress": "ingressVIP"}[kind]
        if plural is None:
            if single:
                p[kind + "_vips"] = [{"ip": single}]
            elif single is not None and cluster is not None and self._style() != "head":
                # handleApiVipUpdateBackwardsCompatibility: the singular
                # cleared, the list not given: both cleared
                p[kind + "_vips"] = []
            return
        ips = self._ips(plural)
        if self._style() == "head":
            return
        if ips and not single:
            raise ApiError(400, "request must include %s alongside %ss" % (name, name))
        if ips and single != ips[0]:
            raise ApiError(400, "%s must be the same as the first element of %ss" % (name, name))

    def _check_vips(self, api, ingress, umn, dhcp, machine_networks, api_single="", ingress_single=""):
        """validateVIPAddresses (internal/cluster/validations, b29f9bcf and
        2026 alike): the input (at most two of each, parsable, as many API
        as Ingress VIPs) and the duplicates, each a go-multierror text; with
        user-managed networking no VIP, in DHCP mode no VIP (the late-2023
        service names the singular field first); else each VIP pair in the
        machine network of its index (VerifyVips, a go-multierror text)."""
        singular = self._style() != "head"
        errs = []
        for kind, ips in (("apiVIPs", api), ("ingressVips", ingress)):
            if len(ips) > 2:
                errs.append("%s supports 2 vips. got: %d" % (kind, len(ips)))
                continue
            for ip in ips:
                try:
                    if ip:
                        ipaddress.ip_address(ip)
                except ValueError:
                    errs.append("Could not parse VIP ip %s" % ip)
        if len(api) != len(ingress):
            errs.append("configuration must include the same number of apiVIPs (got %d) and ingressVIPs (got %d)"
                        % (len(api), len(ingress)))
        if errs:
            raise ApiError(400, refvalid.multierror(errs))
        errs = self._vip_duplicates(api, ingress)
        if errs:
            raise ApiError(400, refvalid.multierror(errs))
        if umn:
            # ValidateVIPsWereNotSetUserManagedNetworking
            for bad, text in ((dhcp, "VIP DHCP Allocation"), (singular and api_single, "API VIP"),
                              (api, "API VIPs"), (singular and ingress_single, "Ingress VIP"),
                              (ingress, "Ingress VIPs")):
                if bad:
                    raise ApiError(400, "%s cannot be set with User Managed Networking" % text)
        if dhcp:
            # ValidateVIPsWereNotSetDhcpMode
            for bad, text in ((singular and api_single, "API VIP"), (api, "API VIPs"),
                              (singular and ingress_single, "Ingress VIP"), (ingress, "Ingress VIPs")):
                if bad:
                    raise ApiError(400, "Setting %s is forbidden when cluster is in vip-dhcp-allocation mode" % text)
        elif machine_networks:
            errs = [e for e in (self._verify_vip_pair(machine_networks[i] if i < len(machine_networks) else "",
                                                      api[i], ingress[i]) for i in range(len(api))) if e]
            if errs:
                raise ApiError(400, refvalid.multierror(errs))

    @staticmethod
    def _vip_duplicates(api, ingress):
        """network.ValidateNoVIPAddressesDuplicates: its errors, in order."""
        errs = []
        seen_api, seen_ingress = set(), set()
        for ip in api:
            if ip and ip in seen_api:
                errs.append("The IP address \"%s\" appears multiple times in apiVIPs" % ip)
            seen_api.add(ip)
        for ip in ingress:
            if not ip:
                continue
            if ip in seen_ingress:
                errs.append("The IP address \"%s\" appears multiple times in ingressVIPs" % ip)
            seen_ingress.add(ip)
            if ip in seen_api:
                errs.append("The IP address \"%s\" appears both in apiVIPs and ingressVIPs" % ip)
        return errs

    @staticmethod
    def _verify_vip(cidr, ip, name):
        """network.VerifyVip without hosts: (failed, text)."""
        if not cidr:
            return False, "%s <%s> cannot be set if Machine Network CIDR is empty" % (name, ip)
        try:
            net = ipaddress.ip_network(cidr, strict=False)
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return True, "%s <%s> does not belong to machine-network-cidr <%s>" % (name, ip, cidr)
        if addr.version != net.version or addr not in net:
            return True, "%s <%s> does not belong to machine-network-cidr <%s>" % (name, ip, cidr)
        if net.version == 4 and net.prefixlen < 31 and addr == net.broadcast_address:
            return True, "%s <%s> is the broadcast address of machine-network-cidr <%s>" % (name, ip, cidr)
        return False, None

    def _verify_vip_pair(self, cidr, api, ingress):
        """network.VerifyVips: the API VIP's failure, else the Ingress VIP's,
        else the pair's duplicates (None when none)."""
        failed, text = self._verify_vip(cidr, api, "api-vip")
        if not failed:
            failed, text = self._verify_vip(cidr, ingress, "ingress-vip")
        if failed:
            return text
        dup = self._vip_duplicates([api], [ingress])
        return dup[0] if dup else None

    def _verify_vips(self, api, ingress, machine_networks):
        """The VIPs of an update against the machine networks calculated
        from the hosts: the first failure, as its own text."""
        for i in range(len(api)):
            text = self._verify_vip_pair(machine_networks[0] if machine_networks else "", api[i],
                                         ingress[i] if i < len(ingress) else "")
            if text:
                raise ApiError(400, text)

    # -- releases (internal/versions: v2ListSupportedOpenshiftVersions and
    #    GetReleaseImage; b29f9bcf's versions.go and api.go, the 2026
    #    rest_api_versions.go). The REST registration never reads
    #    ocp_release_image: the release is the one the version resolves to.
    def release_images(self):
        return self.settings.get("release_images") or DEFAULT_RELEASE_IMAGES

    @staticmethod
    def _release_archs(r):
        return list(r.get("cpu_architectures") or [r.get("cpu_architecture") or "x86_64"])

    @staticmethod
    def _support_level(r):
        """getSupportLevel"""
        if r.get("support_level"):
            return r["support_level"]
        if any(pre in r.get("version", "") for pre in ("-fc", "-rc", "nightly")):
            return "beta"
        return "production"

    def openshift_versions(self):
        """v2ListSupportedOpenshiftVersions: a release image per architecture
        with an OS image, keyed by its openshift_version (b29f9bcf: the first
        image of a key wins, its architectures merged) or by its display name,
        the release's version (head)."""
        out = {}
        for r in self.release_images():
            archs = self._release_archs(r)
            display = r.get("version", "")
            if len(archs) > 1 and not display.endswith("-multi"):
                display += "-multi"
            key = display if self.generation() == "head" else r.get("openshift_version", "")
            for arch in archs:
                osv = os_image_version(key)
                if osv is None or arch not in OPENSHIFT_VERSIONS[osv]["cpu_architectures"]:
                    continue   # GetOsImage(key, arch): no OS image, not offered
                have = out.get(key)
                if have is None:
                    have = out[key] = {"cpu_architectures": [], "display_name": display,
                                       "support_level": self._support_level(r)}
                if arch not in have["cpu_architectures"]:
                    have["cpu_architectures"].append(arch)
                if r.get("default"):
                    have["default"] = True
        return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}

    @staticmethod
    def _version_key(v):
        """(x, y, z, release after prerelease) of "4.14.0-rc.7"; None when not x.y[.z]"""
        base, _sep, pre = v.partition("-")
        parts = base.split(".")
        if not 2 <= len(parts) <= 3 or not all(x.isdigit() for x in parts):
            return None
        nums = [int(x) for x in parts] + [0] * (3 - len(parts))
        return tuple(nums) + (0 if pre else 1, pre)

    def release_for(self, version, arch):
        """The release image a new cluster of version and arch gets (raises
        the 400 the service answers)."""
        arch = arch or "x86_64"
        images = self.release_images()

        def fail(cause):
            raise ApiError(400, "Openshift version %s for CPU architecture %s is not supported: %s" % (
                version, arch, cause))
        if self.generation() == "head":
            # rest_api_versions.go GetReleaseImage (aarch64 normalised to arm64)
            arch = "arm64" if arch == "aarch64" else arch
            if self._version_key(version) is None:
                fail("invalid openshiftVersion '%s'. Expected format: 'major.minor' or 'major.minor.patch', "
                     "optionally followed by a prerelease identifier" % version)
            cands = [r for r in images if arch in self._release_archs(r) or r.get("cpu_architecture") == arch]
            if len(version.split("-")[0].split(".")) == 3:
                found = [r for r in cands if r.get("version") == version]
            else:
                found = sorted((r for r in cands if r.get("openshift_version") == version),
                               key=lambda r: (self._support_level(r) != "beta",
                                              self._version_key(r.get("version", "").replace("-multi", ""))
                                              or ()))[-1:]
            if not found:
                fail("no release image found for openshiftVersion: '%s' and CPU architecture '%s'" % (version, arch))
            rel = found[0]
        else:
            # b29f9bcf getReleaseImageFromCache: the exact openshift_version,
            # else the first of its x.y
            cands = [r for r in images if arch in self._release_archs(r) or r.get("cpu_architecture") == arch]
            if not cands:
                fail("The requested CPU architecture (%s) isn't specified in release images list" % arch)
            found = [r for r in cands if r.get("openshift_version") == version]
            if not found:
                key = self._version_key(version)
                if key is None:
                    fail("Malformed version: %s" % version)
                minor = "%d.%d" % key[:2]
                found = [r for r in cands if r.get("openshift_version", "").replace("-multi", "") == minor]
            if not found:
                fail("The requested release image for version (%s) and CPU architecture (%s) isn't specified in "
                     "release images list" % (version, arch))
            rel = found[0]
        if self._support_level(rel) == "maintenance":
            raise ApiError(400, "Openshift version %s support level is: maintenance, and can't be used for creating "
                                "a new cluster" % version)
        return rel

    def _host_networks_for(self, cluster, ip):
        """CalculateMachineNetworkCIDR: the network of a cluster host's
        address that contains ip."""
        addr = ipaddress.ip_address(ip)
        for h in self.cluster_hosts(cluster.id):
            for itf in (h.inventory_obj or {}).get("interfaces") or []:
                for a in (itf.get("ipv4_addresses") or []) + (itf.get("ipv6_addresses") or []):
                    try:
                        net = ipaddress.ip_interface(a).network
                    except ValueError:
                        continue
                    if net.version == addr.version and addr in net:
                        return str(net)
        return None

    def _validate_cluster_common(self, p, name, platform, version):
        try:
            if p.get("name") is not None:
                refvalid.validate_cluster_name(p["name"], platform)
            if p.get("base_dns_domain"):
                refvalid.validate_base_domain(p["base_dns_domain"])
            refvalid.validate_proxy(p.get("http_proxy") or "", p.get("https_proxy") or "", p.get("no_proxy") or "",
                                    version)
            if p.get("additional_ntp_source"):
                refvalid.validate_ntp_source(p["additional_ntp_source"])
            if p.get("tags"):
                refvalid.validate_tags(p["tags"])
            if p.get("ssh_public_key"):
                refvalid.validate_ssh_keys(p["ssh_public_key"].strip())
        except ValidationFailed as e:
            raise ApiError(400, str(e))

    def register_cluster(self, p):
        """RegisterClusterInternal, its checks in its order (b29f9bcf and 2026
        alike): the VIPs (validateVIPAddresses), the platform and user-managed
        networking of the availability mode (GetActualCreateClusterPlatformParams,
        in setDefaultRegisterClusterParams), then proxy, the single-node rules,
        NTP, tags (validateRegisterClusterInternalParams), the release, the
        pull secret, the name, the DNS domain, the SSH key.
        Returns the cluster and the registration's answer: the registrar's
        `insufficient`, before the monitor has looked at it (no
        validations_info); the monitor's view is applied right after."""
        p = dict(p)
        api_single, ingress_single = p.get("api_vip") or "", p.get("ingress_vip") or ""
        self._vip_compat(p, "api")
        self._vip_compat(p, "ingress")
        cp = p.get("control_plane_count")
        ha = p.get("high_availability_mode") or ("None" if cp == 1 else "Full")
        if cp is None:
            cp = 1 if ha == "None" else 3
        sno = cp == 1
        dhcp = bool(p.get("vip_dhcp_allocation"))
        api = self._ips(p.get("api_vips"))
        ingress = self._ips(p.get("ingress_vips"))
        machine = [m.get("cidr", "") for m in p.get("machine_networks") or []]
        self._check_vips(api, ingress, bool(p.get("user_managed_networking")), dhcp, machine, api_single,
                         ingress_single)
        given_platform = (p.get("platform") or {}).get("type")
        umn = p.get("user_managed_networking")
        if sno:
            if given_platform == "baremetal":
                raise ApiError(400, "Can't set baremetal platform on single node OpenShift")
            if umn is False:
                raise ApiError(400, "Can't disable user-managed-networking on single node OpenShift")
            umn = True
        elif umn is None:
            umn = given_platform == "none"
        net_type = p.get("network_type")
        if net_type is None:
            # getDefaultNetworkType reads the version asked for
            net_type = "OVNKubernetes" if sno or _version_at_least(p.get("openshift_version") or "", 4, 12) \
                else "OpenShiftSDN"
        try:
            # validateRegisterClusterInternalParams
            refvalid.validate_proxy(p.get("http_proxy") or "", p.get("https_proxy") or "", p.get("no_proxy") or "",
                                    p.get("openshift_version") or "")
            if sno and dhcp:
                raise ValidationFailed("VIP DHCP Allocation cannot be enabled on single node OpenShift")
            if sno and net_type == "OpenShiftSDN":
                raise ValidationFailed("OpenShiftSDN network type is not allowed in single node mode")
            if p.get("additional_ntp_source"):
                refvalid.validate_ntp_source(p["additional_ntp_source"])
            if p.get("tags"):
                refvalid.validate_tags(p["tags"])
        except ValidationFailed as e:
            raise ApiError(400, str(e))
        rel = self.release_for(p.get("openshift_version") or "", p.get("cpu_architecture"))
        arch = "multi" if len(self._release_archs(rel)) > 1 else (p.get("cpu_architecture") or "x86_64")
        platform = given_platform or ("none" if umn else "baremetal")
        try:
            refvalid.validate_pull_secret(p.get("pull_secret") or "",
                                          self.settings.get("registries_requiring_auth") or [])
        except ValidationFailed as e:
            raise ApiError(400, "pull secret for new cluster is invalid: %s" % e)
        try:
            # then the name, the DNS domain, the SSH key
            refvalid.validate_cluster_name(p.get("name") or "", platform)
            if p.get("base_dns_domain"):
                refvalid.validate_base_domain(p["base_dns_domain"])
            if (p.get("ssh_public_key") or "").strip():
                refvalid.validate_ssh_keys(p["ssh_public_key"].strip())
        except ValidationFailed as e:
            raise ApiError(400, str(e))
        cluster_networks = [{"cidr": n.get("cidr", ""), "host_prefix": n.get("host_prefix", 23)}
                            for n in p.get("cluster_networks") or []] or \
            [{"cidr": p.get("cluster_network_cidr") or "10.128.0.0/14",
              "host_prefix": p.get("cluster_network_host_prefix") or 23}]
        service_networks = [n.get("cidr", "") for n in p.get("service_networks") or []] or \
            [p.get("service_network_cidr") or "172.30.0.0/16"]
        spec = {
            "name": p.get("name") or "", "base_dns_domain": p.get("base_dns_domain") or "",
            "openshift_version": rel["version"], "ocp_release_image": rel["url"],
            "cpu_architecture": arch, "control_plane_count": cp,
            "api_vips": api, "ingress_vips": ingress, "machine_networks": machine,
            "cluster_networks": cluster_networks, "service_networks": service_networks,
            "vip_dhcp_allocation": dhcp, "user_managed_networking": bool(umn), "network_type": net_type,
            "ssh_public_key": (p.get("ssh_public_key") or "").strip(), "http_proxy": p.get("http_proxy") or "",
            "https_proxy": p.get("https_proxy") or "", "no_proxy": p.get("no_proxy") or "", "tang_servers": "",
            "kind": "Cluster", "pull_secret": p.get("pull_secret") or "",
            "hyperthreading": p.get("hyperthreading") or "all",
            "schedulable_masters": bool(p.get("schedulable_masters")),
            "additional_ntp_source": p.get("additional_ntp_source") or "", "tags": p.get("tags") or "",
            "platform_type": platform,
        }
        c = self.add_cluster(spec)
        c.managed = True
        c.operators = [{"name": n, "operator_type": "builtin", "status_updated_at": ZERO_MS,
                        "timeout_seconds": 3600} for n in self.settings.get("builtin_operators") or []]
        self.cluster_event(c, "cluster_registration_succeeded", "Successfully registered cluster")
        answer = self.cluster_api(c)
        self.refresh_cluster(c)
        return c, answer

    def import_cluster(self, p):
        """V2ImportClusterInternal: a day-2 cluster for an existing OCP."""
        spec = {"name": p.get("name") or "", "base_dns_domain": "",
                "openshift_version": p.get("openshift_version") or "",
                "ocp_release_image": "", "api_vips": [], "ingress_vips": [], "machine_networks": [],
                "kind": "AddHostsCluster", "api_vip_dns_name": p.get("api_vip_dnsname") or "",
                "openshift_cluster_id": p.get("openshift_cluster_id") or "", "imported": True,
                "pull_secret": "", "platform_type": "baremetal", "status": "adding-hosts",
                "status_info": "cluster is adding hosts to existing OCP cluster"}
        c = self.add_cluster(spec)
        c.managed = True
        c.status_fixed = False
        self.cluster_event(c, "cluster_registration_succeeded", "Successfully registered cluster")
        return c

    def _verify_updatable(self, c, code=409):
        if c.status not in self.CLUSTER_UPDATABLE:
            raise ApiError(code, "Cluster %s is in %s state, cluster can be updated only in one of %s" % (
                c.id, c.status, "[" + " ".join(self.CLUSTER_UPDATABLE) + "]"))

    def update_cluster(self, cluster_id, p):
        """V2UpdateCluster."""
        c = self.cluster(cluster_id)
        d = c.spec
        p = dict(p)
        api_single, ingress_single = p.get("api_vip"), p.get("ingress_vip")
        # updates keep the stored singular VIP compatible (ValidateClusterUpdateVIPAddresses)
        self._vip_compat(p, "api", c)
        self._vip_compat(p, "ingress", c)
        self._verify_updatable(c)
        if p.get("api_vip_dns_name") is not None and d.get("kind", "Cluster") == "Cluster":
            raise ApiError(400, "Can't update api vip to %s for day1 cluster %s" % (p["api_vip_dns_name"], c.id))
        umn = d.get("user_managed_networking") if p.get("user_managed_networking") is None \
            else p["user_managed_networking"]
        if c.sno and p.get("user_managed_networking") is False:
            raise ApiError(400, "disabling UserManagedNetworking is not allowed in single node mode")
        dhcp = d.get("vip_dhcp_allocation") if p.get("vip_dhcp_allocation") is None else p["vip_dhcp_allocation"]
        api = self._ips(p["api_vips"]) if p.get("api_vips") is not None else None
        ingress = self._ips(p["ingress_vips"]) if p.get("ingress_vips") is not None else None
        machine = [m.get("cidr", "") for m in p["machine_networks"]] if p.get("machine_networks") is not None \
            else None
        if p.get("user_managed_networking"):
            # validateVIPsWithUMA: the VIPs the cluster would keep refuse it,
            # "reformatted to match the order of actions" (both generations;
            # the late-2023 one names its singular fields first)
            singular = self._style() != "head"
            if d.get("vip_dhcp_allocation"):
                keep_api, keep_ingress, keep_api_single, keep_ingress_single = [], [], "", ""
            else:
                keep_api = d.get("api_vips") or [] if api is None else api
                keep_ingress = d.get("ingress_vips") or [] if ingress is None else ingress
                keep_api_single = (d.get("api_vips") or [""])[0] if api_single is None else api_single
                keep_ingress_single = (d.get("ingress_vips") or [""])[0] if ingress_single is None else ingress_single
            for bad, text in ((dhcp, "VIP DHCP Allocation"), (singular and keep_api_single, "API VIP"),
                              (keep_api, "API VIPs"), (singular and keep_ingress_single, "Ingress VIP"),
                              (keep_ingress, "Ingress VIPs")):
                if bad:
                    raise ApiError(400, "User Managed Networking cannot be set with %s" % text)
        if dhcp and not d.get("vip_dhcp_allocation"):
            api = api or []
            ingress = ingress or []
        self._check_vips(api or [], ingress or [], umn, dhcp, [], api_single or "", ingress_single or "")
        if not dhcp and not umn and machine:
            families = set(ipaddress.ip_network(m, strict=False).version for m in machine if m)
            if not (len(machine) == 2 and families == {4, 6}):
                raise ApiError(400, "Setting Machine network CIDR is forbidden when cluster is not in "
                                    "vip-dhcp-allocation mode")
        if not dhcp and not umn and (api or ingress):
            nets = []
            for ip in (api or [])[:1] + (ingress or [])[:1]:
                n = self._host_networks_for(c, ip)
                if n is None:
                    raise ApiError(400, "Calculate machine network CIDR: No suitable matching CIDR found for VIP %s"
                                   % ip)
                if n not in nets:
                    nets.append(n)
            self._verify_vips(api or [], ingress or [], nets)
            machine = nets
        name = p.get("name") if p.get("name") is not None else d.get("name")
        self._validate_cluster_common(p, name, d.get("platform_type") or "baremetal", d.get("openshift_version"))
        if p.get("pull_secret"):
            try:
                refvalid.validate_pull_secret(p["pull_secret"], self.settings.get("registries_requiring_auth") or [])
            except ValidationFailed as e:
                raise ApiError(400, str(e))
        proxy_changed = any(p.get(k) is not None and p[k] != d.get(k, "")
                            for k in ("http_proxy", "https_proxy", "no_proxy"))
        for k in ("name", "base_dns_domain", "http_proxy", "https_proxy", "no_proxy", "additional_ntp_source",
                  "tags", "hyperthreading", "network_type", "api_vip_dns_name"):
            if p.get(k) is not None:
                d[k] = p[k]
        if p.get("ssh_public_key") is not None:
            d["ssh_public_key"] = p["ssh_public_key"].strip()
        if p.get("pull_secret"):
            d["pull_secret"] = p["pull_secret"]
        if p.get("schedulable_masters") is not None:
            d["schedulable_masters"] = bool(p["schedulable_masters"])
        if p.get("cluster_networks") is not None:
            d["cluster_networks"] = [{"cidr": n.get("cidr", ""), "host_prefix": n.get("host_prefix", 23)}
                                     for n in p["cluster_networks"]]
        if p.get("service_networks") is not None:
            d["service_networks"] = [n.get("cidr", "") for n in p["service_networks"]]
        if p.get("control_plane_count") is not None:
            d["control_plane_count"] = p["control_plane_count"]
        d["user_managed_networking"] = bool(umn)
        d["vip_dhcp_allocation"] = bool(dhcp)
        if umn:
            d["platform_type"] = "none"
        elif (p.get("platform") or {}).get("type"):
            d["platform_type"] = p["platform"]["type"]
        elif d.get("platform_type") == "none":
            d["platform_type"] = "baremetal"
        if api is not None:
            d["api_vips"] = api
        if ingress is not None:
            d["ingress_vips"] = ingress
        if machine is not None:
            d["machine_networks"] = machine
        if umn:
            d["api_vips"], d["ingress_vips"], d["machine_networks"] = [], [], []
        c.touch()
        if proxy_changed:
            self.cluster_event(c, "proxy_settings_changed", "Proxy settings changed")
        for h in self.cluster_hosts(c.id):
            self.refresh_host(h)
        self.refresh_cluster(c)
        return c

    def deregister_cluster(self, cluster_id):
        c = self.cluster(cluster_id)
        if c.status in ("preparing-for-installation", "installing", "installing-pending-user-action", "finalizing"):
            raise ApiError(409, "cluster %s can not be removed while being installed, wait for the installation to "
                                "timeout or reset the installation" % c.id)
        bound = set(ie.id for ie in self.infra_envs.values() if ie.cluster_id == c.id)
        for key, h in list(self.hosts.items()):
            if h.cluster_id != c.id:
                continue
            if h.infra_env_id in bound:
                del self.hosts[key]
            else:
                # a late-bound host is let go (the agent re-registers unbound)
                h.cluster_id = None
                h.kind = "Host"
                h.role = h.suggested_role = "auto-assign"
                h.bootstrap = False
                h.set_status("unbinding", "Host is waiting to be unbound from the cluster")
        del self.clusters[c.id]
        self.cluster_event(c, "cluster_deregistered", "Deregistered cluster")

    # validations (internal/cluster/validator.go; texts as observed/10 for
    # success, failures from the validator's messages)
    def cluster_validations(self, c):
        d = c.spec
        hosts = self.cluster_hosts(c.id)
        umn = bool(d.get("user_managed_networking"))
        dhcp = bool(d.get("vip_dhcp_allocation"))
        machine = d.get("machine_networks") or []
        need = int(d.get("control_plane_count", 3))
        v = {"configuration": [], "hosts-data": [], "network": [], "operators": []}

        def add(cat, vid, ok, good, bad, status=None):
            v[cat].append({"id": vid, "status": status or ("success" if ok else "failure"),
                           "message": good if ok else bad})
        add("configuration", "platform-requirements-satisfied", True, "Platform requirements satisfied", "")
        add("configuration", "pull-secret-set", bool(d.get("pull_secret")), "The pull secret is set.",
            "The pull secret is not set.")
        add("hosts-data", "all-hosts-are-ready-to-install", all(h.status == "known" for h in hosts),
            "All hosts in the cluster are ready to install.", "The cluster has hosts that are not ready to install.")
        masters = [h for h in hosts if h.effective_role() == "master"]
        if need == 1:
            add("hosts-data", "sufficient-masters-count", len(masters) == 1 and len(hosts) == 1,
                "The cluster has the exact amount of dedicated control plane nodes.",
                "Single-node clusters must have a single control plane node and no workers.")
        else:
            add("hosts-data", "sufficient-masters-count", len(masters) == need,
                "The cluster has the exact amount of dedicated control plane nodes.",
                "The cluster must have exactly %d dedicated control plane nodes. Add or remove hosts, or change "
                "their roles configurations to meet the requirement." % need)
        for kind, key, title in (("api", "api_vips", "API"), ("ingress", "ingress_vips", "Ingress")):
            ips = d.get(key) or []
            if umn:
                add("network", "%s-vips-defined" % kind, True, "%s virtual IPs are not required: User Managed "
                    "Networking" % title, "")
                add("network", "%s-vips-valid" % kind, True, "%s virtual IPs are not required: User Managed "
                    "Networking" % title, "")
                continue
            add("network", "%s-vips-defined" % kind, bool(ips), "%s virtual IPs are defined." % title,
                "%s virtual IPs are undefined and must be provided." % title)
            if not ips:
                add("network", "%s-vips-valid" % kind, False, "", "%s virtual IPs are undefined." % title,
                    status="pending")
            else:
                bad = [ip for ip in ips if not any(_cidr_contains(m, ip) for m in machine)]
                add("network", "%s-vips-valid" % kind, not bad and bool(machine),
                    "%s vips %s belongs to the Machine CIDR and is not in use." % (kind, ", ".join(ips)),
                    "%s vips <%s> does not belong to machine-network-cidr <%s>." % (
                        kind, ", ".join(bad or ips), ", ".join(machine)))
        add("network", "cluster-cidr-defined", bool(d.get("cluster_networks")), "The Cluster Network CIDR is defined.",
            "The Cluster Network CIDR is undefined.")
        add("network", "dns-domain-defined", bool(d.get("base_dns_domain")), "The base domain is defined.",
            "The base domain is undefined and must be provided.")
        if umn:
            add("network", "machine-cidr-defined", True, "No Machine Network CIDR needed: User Managed Networking", "")
            add("network", "machine-cidr-equals-to-calculated-cidr", True,
                "The Cluster Machine CIDR is not required: User Managed Networking", "")
        elif not machine and not any(h.inventory_obj for h in hosts):
            add("network", "machine-cidr-defined", False, "", "Hosts have not been discovered yet", status="pending")
            add("network", "machine-cidr-equals-to-calculated-cidr", False, "", "Hosts have not been discovered yet",
                status="pending")
        else:
            add("network", "machine-cidr-defined", bool(machine), "The Machine Network CIDR is defined.",
                "The Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either "
                "the API or Ingress virtual IPs.")
            add("network", "machine-cidr-equals-to-calculated-cidr", True,
                "The Cluster Machine CIDR is equivalent to the calculated CIDR.", "")
        add("network", "network-prefix-valid", True, "The Cluster Network prefix is valid.", "")
        add("network", "network-type-valid", True, "The cluster has a valid network type", "")
        add("network", "networks-same-address-families", True, "Same address families for all networks.", "")
        add("network", "no-cidrs-overlapping", True, "No CIDRS are overlapping.", "")
        add("network", "ntp-server-configured", True, "No ntp problems found", "")
        add("network", "service-cidr-defined", bool(d.get("service_networks")), "The Service Network CIDR is defined.",
            "The Service Network CIDR is undefined.")
        for op in ("cnv", "lso", "lvm", "mce", "odf"):
            add("operators", "%s-requirements-satisfied" % op, True, "%s is disabled" % op, "")
        for cat in v.values():
            cat.sort(key=lambda x: x["id"])
        return v

    PENDING_FOR_INPUT_VALIDATIONS = ("machine-cidr-defined", "cluster-cidr-defined", "service-cidr-defined",
                                     "dns-domain-defined", "pull-secret-set", "api-vips-defined",
                                     "ingress-vips-defined")

    def _ignored(self, c, key):
        """The validation IDs ignored (ShouldIgnoreValidation): those listed,
        or every one with "all", never one that cannot be ignored."""
        try:
            ids = json.loads(c.spec.get(key) or "[]")
        except ValueError:
            ids = []
        kind = "cluster" if key == "ignored_cluster_validations" else "host"
        return _IgnoredIds(ids, self._non_ignorable(kind))

    def refresh_managed_cluster(self, c):
        d = c.spec
        if not d.get("user_managed_networking") and not d.get("vip_dhcp_allocation") and d.get("api_vips") and \
                not d.get("machine_networks"):
            n = self._host_networks_for(c, d["api_vips"][0])
            if n is not None:
                d["machine_networks"] = [n]
        if c.status in ("insufficient", "ready", "pending-for-input"):
            # the hosts' majority-group validation depends on the groups
            self.refresh_majority_groups(c)
            for x in self.cluster_hosts(c.id):
                self.refresh_host(x)
        old = c.validations
        v = self.cluster_validations(c)
        c.validations = v
        ignored = self._ignored(c, "ignored_cluster_validations")
        flat = [x for cat in v.values() for x in cat]
        if old is not None:
            before = {x["id"]: x["status"] for cat in old.values() for x in cat}
            for x in flat:
                prev = before.get(x["id"])
                if prev == "success" and x["status"] == "failure":
                    self.cluster_event(c, "cluster_validation_failed",
                                       "Cluster validation '%s' that used to succeed is now failing" % x["id"],
                                       "warning")
                elif prev == "failure" and x["status"] == "success":
                    self.cluster_event(c, "cluster_validation_fixed",
                                       "Cluster validation '%s' is now fixed" % x["id"])
        if c.status not in ("insufficient", "ready", "pending-for-input"):
            return
        failing = [x for x in flat if x["status"] != "success" and x["id"] not in ignored]
        if any(x["id"] in self.PENDING_FOR_INPUT_VALIDATIONS for x in failing):
            c.set_status("pending-for-input", "User input required")
        elif failing:
            c.set_status("insufficient", "Cluster is not ready for install")
        else:
            c.set_status("ready", "Cluster ready to be installed")

    # -- installation (InstallClusterInternal and what follows) -------------
    def rest_install_cluster(self, cluster_id):
        """v2InstallCluster: roles auto-assigned, the cluster refreshed; only
        `ready` installs (409 with the status info); then the cluster and
        its hosts are preparing-for-installation (the agents' disk-speed and
        image checks move them on to installing), the bootstrap is the last
        master, the installation files are generated."""
        c = self.cluster(cluster_id)
        hosts = self.cluster_hosts(c.id)
        need = int(c.spec.get("control_plane_count", 3))
        masters = [h for h in hosts if h.role == "master"]
        for h in hosts:
            if h.role == "auto-assign":
                h.role = "master" if len(masters) < need and c.spec.get("kind") != "AddHostsCluster" else "worker"
                if h.role == "master":
                    masters.append(h)
            h.suggested_role = h.role
        self.refresh_cluster(c)
        if c.status != "ready":
            raise ApiError(409, "Cluster is not ready for installation, %s validation_info=%s" % (
                c.status_info, go_dumps(c.validations) if c.validations is not None else ""))
        for h in hosts:
            h.bootstrap = False
        masters = [h for h in hosts if h.role == "master"]
        if masters:
            masters[-1].bootstrap = True
            self.host_event(masters[-1], "host_bootstrap_set", "Host %s: set as bootstrap" % masters[-1].display_name())
        for h in hosts:
            h._stages_cache = h.stages(c.sno)
        c.start_install_clock()
        c.status_fixed = False
        c.set_status("preparing-for-installation", "Preparing cluster for installation")
        self.cluster_event(c, "cluster_prepare_installation_started", "Cluster starting to prepare for installation")
        for h in hosts:
            h._disk_checked = False
            h._images_checked = False
            h.set_status("preparing-for-installation", "Host is preparing for installation")
        self._generate_install_files(c)
        c.last_preparation = {"reason": "", "status": "success"}
        return c

    def _generate_install_files(self, c):
        """The files the service generates for an installation (its
        installcfg/ignition generator; here: the kubeconfig without the
        ingress CA, the kubeadmin password, pointer ignitions)."""
        d = c.spec
        alphabet = "23456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
        pw = "-".join("".join(secrets.choice(alphabet) for _ in range(5)) for _ in range(4))
        c.set_file("kubeadmin-password", pw)
        c.set_file("kubeconfig-noingress", kubeconfig_text(d.get("name", ""), d.get("base_dns_domain", ""),
                                                          KUBE_APISERVER_CA))
        for role in ("bootstrap", "master", "worker"):
            name = "%s.ign" % role
            if name not in c.files:
                ign = {"ignition": {"version": "3.2.0"}}
                if role == "bootstrap" and not c.sno and _version_at_least(d.get("openshift_version", ""), 4, 7):
                    # the marker the service adds from 4.7 on for several
                    # masters: cluster-etcd-operator's delayed-HA bootstrap
                    # (notes/installer.md, c799e7db)
                    ign["storage"] = {"files": [{"path": "/opt/openshift/assisted-install-bootstrap", "mode": 420,
                                                 "contents": {"source": "data:,"}}]}
                c.set_file(name, go_dumps(ign))

    def upload_ingress_cert(self, cluster_id, ca):
        """v2UploadClusterIngressCert: the ingress CA merged into the
        kubeconfig (mergeIngressCaIntoKubeconfig)."""
        c = self.cluster(cluster_id)
        if c.status not in ("finalizing", "installed"):
            raise ApiError(400, "Cluster %s is in %s state, upload ingress ca can be done only in finalizing or "
                                "installed state" % (c.id, c.status))
        if "kubeconfig" in c.files:
            return c
        if "kubeconfig-noingress" not in c.files:
            raise ApiError(500, "failed to download kubeconfig-noingress: object not found")
        certs = refvalid.pem_certificates(ca)
        if not certs:
            raise ApiError(500, "given ingress-ca is not valid PEM format")
        c.set_file("kubeconfig", merge_ingress_ca(c.files["kubeconfig-noingress"], "".join(certs)))
        self._maybe_complete(c)
        return c

    def monitored_operators(self, cluster_id, name=None):
        """V2ListOfClusterOperators: the service selects the operators rows
        by cluster id, so an unknown cluster lists none (200 []); a name
        asks for one row, and a missing row (or cluster) is gorm's bare
        "record not found" (b29f9bcf, observed)."""
        c = self.clusters.get(cluster_id)
        ops = [dict(sorted(dict(o, cluster_id=c.id).items())) for o in (c.operators if c else [])
               if not name or o["name"] == name]
        if name and not ops:
            raise ApiError(404, "record not found")
        return ops

    def report_operator(self, cluster_id, report):
        name = report.get("name") or ""
        if not name:
            raise ApiError(400, "empty operator name is not allowed")
        c = self.clusters.get(cluster_id)
        op = next((o for o in c.operators if o["name"] == name), None) if c else None
        if op is None:
            # the row is looked up by cluster id and name in one query (observed)
            raise ApiError(404, "record not found")
        op["status"] = report.get("status") or ""
        op["status_info"] = report.get("status_info") or ""
        if report.get("version"):
            op["version"] = report["version"]
        op["status_updated_at"] = now_ms()
        self.cluster_event(c, "cluster_operator_status", "Operator %s status: %s message: %s" % (
            name, op["status"], op["status_info"]))
        self._maybe_complete(c)

    def complete_installation(self, cluster_id, params):
        """v2CompleteInstallation: success is a no-op in the observed service
        (deprecated; the cluster stays finalizing until the ingress CA and the
        operators are in); a failure puts the cluster in error."""
        c = self.cluster(cluster_id)
        if not params.get("is_success"):
            reason = params.get("error_info") or ""
            c.set_status("error", reason)
            self.cluster_event(c, "cluster_installation_failed", "Failed installing cluster. Reason: %s" % reason,
                               "critical")
        return c

    def set_finalizing_stage(self, cluster_id, stage):
        c = self.cluster(cluster_id)
        if stage and stage != c.finalizing_stage:
            c.finalizing_stage = stage
            c.finalizing_stage_started_at = now_ms()
            c.finalizing_stage_started = time.monotonic()
            c.finalizing_stage_timed_out = False
            c.touch()
            self.cluster_event(c, "cluster_finalizing_stage_updated",
                               "Updated finalizing stage of the cluster to '%s'" % stage)

    def _maybe_complete(self, c):
        """The cluster monitor's finalizing → installed (notes/controller.md
        §0.2): the kubeconfig with the ingress CA exists, every builtin
        operator is available and every OLM operator available or failed."""
        if not c.managed or c.status != "finalizing":
            return
        if "kubeconfig" not in c.files:
            return
        if any(o.get("status") != "available" for o in c.operators if o.get("operator_type") == "builtin"):
            return
        if any(o.get("status") not in ("available", "failed") for o in c.operators
               if o.get("operator_type") == "olm"):
            return
        c.install_completed_at = now_ms()
        c.set_status("installed", "Cluster is installed")
        self.cluster_event(c, "cluster_installation_completed", "Successfully completed installing cluster")

    CANCELLABLE = ("preparing-for-installation", "installing", "installing-pending-user-action", "error",
                   "finalizing")

    def cancel_installation(self, cluster_id):
        c = self.cluster(cluster_id)
        if c.status not in self.CANCELLABLE:
            raise ApiError(409, "no condition found to run transition")
        c.set_status("cancelled", "Installation was cancelled by user")
        self.cluster_event(c, "cluster_installation_canceled", "Canceled cluster installation")
        for h in self.cluster_hosts(c.id):
            if h.status in ("installing", "installing-in-progress", "installing-pending-user-action", "installed",
                            "error"):
                h.set_status("cancelled", "Installation was cancelled by user")
                self.host_event(h, "host_installation_cancelled", "Installation cancelled for host %s" %
                                h.display_name())
            elif h.status in ("preparing-for-installation", "preparing-successful"):
                h.set_status("known", "Host is ready to be installed")
        return c

    def reset_cluster(self, cluster_id):
        c = self.cluster(cluster_id)
        if c.status not in ("cancelled", "error"):
            raise ApiError(409, "no condition found to run transition")
        c.install_started_at = ZERO_MS
        c.install_started = None
        c.install_completed_at = ZERO_MS
        for name in ("kubeconfig", "kubeconfig-noingress", "kubeadmin-password"):
            c.files.pop(name, None)
        for o in c.operators:
            for k in ("status", "status_info", "version"):
                o.pop(k, None)
            o["status_updated_at"] = ZERO_MS
        c.finalizing_stage = None
        c.finalizing_stage_started = None
        c.finalizing_stage_timed_out = False
        c.last_preparation = {"status": "not_started"}
        c.set_status("insufficient", "Reset cluster installation")
        for h in self.cluster_hosts(c.id):
            h.bootstrap = False
            h.progress = {"current_stage": "", "progress_info": "", "installation_percentage": 0,
                          "stage_started_at": ZERO_MS, "stage_updated_at": ZERO_MS}
            h.set_status("resetting-pending-user-action",
                         "Host requires booting into the discovery image to complete resetting the installation")
        return c

    def transform_to_day2(self, cluster_id):
        c = self.cluster(cluster_id)
        if c.status != "installed":
            raise ApiError(400, "cannot transform cluster %s to day2. Expected cluster status: installed, but cluster "
                                "status is: %s" % (c.id, c.status))
        d = c.spec
        d["kind"] = "AddHostsCluster"
        d["api_vip_dns_name"] = "api.%s.%s" % (d.get("name", ""), d.get("base_dns_domain", ""))
        c.status_fixed = False
        c.set_status("adding-hosts", "cluster is adding hosts to existing OCP cluster")
        return c

    def update_install_config(self, cluster_id, overrides):
        c = self.cluster(cluster_id)
        try:
            refvalid.validate_install_config_overrides(overrides)
        except ValidationFailed as e:
            raise ApiError(400, str(e))
        c.spec["install_config_overrides"] = overrides
        c.touch()
        self.cluster_event(c, "install_config_applied", "Custom install config was applied to the cluster")
        return c

    # common/validations.go: what can never be ignored (b29f9bcf; the 2026
    # service drops cluster-preparation-succeeded and adds
    # inventory-not-fully-truncated)
    NON_IGNORABLE = {
        "cluster": ("api-vips-defined", "ingress-vips-defined", "all-hosts-are-ready-to-install",
                    "sufficient-masters-count", "pull-secret-set", "cluster-preparation-succeeded"),
        "host": ("connected", "has-inventory", "machine-cidr-defined", "hostname-unique", "hostname-valid"),
    }
    NON_IGNORABLE_HEAD = {
        "cluster": ("api-vips-defined", "ingress-vips-defined", "all-hosts-are-ready-to-install",
                    "sufficient-masters-count", "pull-secret-set"),
        "host": ("connected", "has-inventory", "inventory-not-fully-truncated", "machine-cidr-defined",
                 "hostname-unique", "hostname-valid"),
    }

    def _non_ignorable(self, kind):
        return (self.NON_IGNORABLE if self.late_2023() else self.NON_IGNORABLE_HEAD)[kind]

    def set_ignored_validations(self, cluster_id, body):
        """V2SetIgnoredValidations: both lists replaced by what is sent (one
        not sent is cleared); each checked (validateIgnoredValidations):
        unknown IDs, then those that can never be ignored; all the problems
        in one 400, joined by newlines."""
        c = self.cluster(cluster_id)
        self._verify_updatable(c, 400)
        problems = []
        for key, kind, enum in (("cluster-validation-ids", "cluster", "cluster-validation-id"),
                                ("host-validation-ids", "host", "host-validation-id")):
            raw = body.get(key) or ""
            if not raw:
                continue
            try:
                ids = json.loads(raw)
                if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                    raise ValueError(raw)
            except ValueError:
                problems.append("error during unmarshal of json for ignored %s validations" % kind)
                continue
            known = self.sw.definitions[enum].get("enum") or []
            for i in ids:
                if i.lower() != "all" and i not in known:
                    problems.append("Validation ID '%s' is not a known %s validation" % (i, kind))
            if "all" not in ids:
                cant = [i for i in ids if i in self._non_ignorable(kind)]
                if cant:
                    problems.append("unable to ignore the following %s validations (%s)" % (kind, ",".join(cant)))
        if problems:
            raise ApiError(400, "cannot proceed due to the following errors: " + "\n".join(problems))
        c.spec["ignored_cluster_validations"] = body.get("cluster-validation-ids") or ""
        c.spec["ignored_host_validations"] = body.get("host-validation-ids") or ""
        for h in self.cluster_hosts(c.id):
            self.refresh_host(h)
        self.refresh_cluster(c)
        return self.ignored_validations(cluster_id)

    def ignored_validations(self, cluster_id):
        """models.IgnoredValidations: both fields omitempty."""
        c = self.cluster(cluster_id)
        out = {}
        if c.spec.get("ignored_cluster_validations"):
            out["cluster-validation-ids"] = c.spec["ignored_cluster_validations"]
        if c.spec.get("ignored_host_validations"):
            out["host-validation-ids"] = c.spec["ignored_host_validations"]
        return out

    # manifests (internal/manifests)
    def _manifests_cluster(self, cluster_id):
        c = self.clusters.get(cluster_id)
        if c is None:
            raise ApiError(404, "Object Not Found")
        return c

    def list_manifests(self, cluster_id):
        c = self._manifests_cluster(cluster_id)
        out = []
        for m in sorted(c.manifests, key=lambda m: (m["folder"], m["file_name"])):
            item = {"file_name": m["file_name"], "folder": m["folder"]}
            if self._style() == "head":
                item["manifest_source"] = "user"
            out.append(item)
        return out

    def create_manifest(self, cluster_id, p):
        c = self._manifests_cluster(cluster_id)
        name = p.get("file_name") or ""
        folder = p.get("folder") or "manifests"
        if "/" in name:
            raise ApiError(400, "Cluster manifest %s for cluster %s should not include a directory in its name." % (
                name, c.id))
        if c.status not in self.CLUSTER_PRE_INSTALL:
            raise ApiError(400, "cluster %s is not in pre-installation states, can't modify manifests after "
                                "installation has been started" % c.id)
        try:
            content = base64.b64decode(p.get("content") or "", validate=True)
        except (ValueError, TypeError):
            raise ApiError(400, "failed to base64-decode cluster manifest content for cluster %s" % c.id)
        if len(content) > 1024 * 1024:
            raise ApiError(400, "Manifest content of file %s for cluster ID %s exceeds the maximum file size of "
                                "1MiB" % (name, c.id))
        ext = name.rsplit(".", 1)[-1] if "." in name else ""
        if ext in ("yaml", "yml") or ".yaml.patch" in name or ".yml.patch" in name:
            try:
                list(yaml.safe_load_all(content.decode("utf-8")))
            except (yaml.YAMLError, UnicodeDecodeError):
                raise ApiError(400, "Manifest content of file %s for cluster ID %s has an invalid YAML format" % (
                    name, c.id))
        elif ext == "json":
            try:
                json.loads(content.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                raise ApiError(400, "Manifest content of file %s for cluster ID %s has an illegal JSON format" % (
                    name, c.id))
        else:
            raise ApiError(400, "Manifest filename of file %s for cluster ID %s is invalid. Only json, yaml and yml "
                                "extensions are supported" % (name, c.id))
        c.manifests = [m for m in c.manifests if not (m["folder"] == folder and m["file_name"] == name)]
        c.manifests.append({"folder": folder, "file_name": name, "content": content})
        c.touch()
        item = {"file_name": name, "folder": folder}
        if self._style() == "head":
            item["manifest_source"] = "user"
        return item

    def delete_manifest(self, cluster_id, folder, name):
        c = self._manifests_cluster(cluster_id)
        if c.status not in self.CLUSTER_PRE_INSTALL:
            raise ApiError(400, "cluster %s is not in pre-installation states, can't modify manifests after "
                                "installation has been started" % c.id)
        folder = folder or "manifests"
        left = [m for m in c.manifests if not (m["folder"] == folder and m["file_name"] == name)]
        if len(left) == len(c.manifests):
            raise ApiError(404, "Manifest %s/%s for cluster %s not found" % (folder, name, c.id))
        c.manifests = left
        c.touch()

    def manifest_content(self, cluster_id, folder, name):
        c = self._manifests_cluster(cluster_id)
        for m in c.manifests:
            if m["folder"] == (folder or "manifests") and m["file_name"] == name:
                return m["content"]
        raise ApiError(404, "Manifest %s/%s for cluster %s not found" % (folder or "manifests", name, c.id))

    # credentials
    def cluster_credentials_file(self, cluster_id, name):
        c = self.cluster(cluster_id, bare_not_found=True)
        if name == "kubeconfig":
            if c.status not in ("finalizing", "installed"):
                raise ApiError(409, "cluster %s is in %s state, kubeconfig can be downloaded only when status is one "
                                    "of: [finalizing installed]" % (c.id, c.status))
            if "kubeconfig" not in c.files:
                name = "kubeconfig-noingress"
        elif c.status not in CLUSTER_CAN_DOWNLOAD:
            raise ApiError(409, "cluster %s is in %s state, files can be downloaded only when status is one of: "
                                "%s" % (c.id, c.status, "[" + " ".join(CLUSTER_CAN_DOWNLOAD) + "]"))
        if name not in c.files:
            raise ApiError(409, "failed to download file %s/%s: not found" % (c.id, name))
        return c.files[name]

    def credentials(self, cluster_id):
        c = self.cluster(cluster_id, bare_not_found=True)
        console = next((o for o in c.operators if o["name"] == "console"), None)
        if console is not None and console.get("status") != "available":
            raise ApiError(409, "console-url isn't available yet, it will be once console operator is ready as part "
                                "of cluster finalizing stage")
        if "kubeadmin-password" not in c.files:
            raise ApiError(500, "failed to download %s/kubeadmin-password: not found" % c.id)
        return {"console_url": "https://console-openshift-console.apps.%s.%s" % (
                    c.spec.get("name", ""), c.spec.get("base_dns_domain", "")),
                "password": c.files["kubeadmin-password"].decode("utf-8"), "username": "kubeadmin"}

    # -- events (internal/events: every event the service writes for a state
    #    change this model makes; v2ListEvents reads them) ----------------
    HOST_WARNING_STATUSES = ("disconnected", "installing-pending-user-action", "insufficient",
                             "disconnected-unbound", "insufficient-unbound", "resetting-pending-user-action",
                             "unbinding-pending-user-action")

    def add_event(self, name, message, severity="info", cluster_id=None, host_id=None, infra_env_id=None,
                  props=None, category="user"):
        # event_time strictly increases (1 ms steps on a collision) so that a
        # poller resuming after the last event_time it saw misses nothing
        t = max(epoch_ms(), self.last_event_ms + 1)
        self.last_event_ms = t
        ev = {"name": name, "severity": severity, "message": message, "event_time": fmt_ms(t),
              "category": category, "_ms": t}
        if cluster_id:
            ev["cluster_id"] = cluster_id
        if host_id:
            ev["host_id"] = host_id
        if infra_env_id:
            ev["infra_env_id"] = infra_env_id
        if props is not None:
            ev["props"] = props if isinstance(props, str) else go_dumps(props)
        self.events.append(ev)
        return ev

    def host_event(self, h, name, message, severity="info"):
        return self.add_event(name, message, severity, cluster_id=h.cluster_id, host_id=h.id,
                              infra_env_id=h.infra_env_id)

    def cluster_event(self, c, name, message, severity="info"):
        return self.add_event(name, message, severity, cluster_id=c.id)

    def _host_status_event(self, h, old):
        sev = "info"
        if h.status in self.HOST_WARNING_STATUSES:
            sev = "warning"
        elif h.status == "error":
            sev = "error"
        self.host_event(h, "host_status_updated", "Host %s: updated status from %s to %s (%s)" % (
            h.display_name(), old, h.status, h.status_info or ""), sev)

    def _cluster_status_event(self, c, old):
        sev = "error" if c.status == "error" else "info"
        self.cluster_event(c, "cluster_status_updated", "Updated status of the cluster to %s" % c.status, sev)

    def list_events(self, a):
        """events.go V2GetEvents: (events, headers)."""
        cats = a.get("categories") or ["user"]
        evs = [e for e in self.events if e["category"] in cats]
        counts = None
        cluster_id = a.get("cluster_id")
        host_ids = list(a.get("host_ids") or [])
        if a.get("host_id") and a["host_id"] not in host_ids:
            host_ids.append(a["host_id"])
        if cluster_id:
            evs = [e for e in evs if e.get("cluster_id") == cluster_id]
            if a.get("message"):
                evs = [e for e in evs if a["message"].lower() in e["message"].lower()]
            if host_ids or a.get("deleted_hosts") or a.get("cluster_level"):
                existing = set(h.id for h in self.hosts.values() if h.cluster_id == cluster_id)

                def wanted(e):
                    hid = e.get("host_id")
                    if hid is None:
                        return bool(a.get("cluster_level"))
                    return hid in host_ids or (bool(a.get("deleted_hosts")) and hid not in existing)
                evs = [e for e in evs if wanted(e)]
            counts = {s: sum(1 for e in evs if e["severity"] == s) for s in ("info", "warning", "error", "critical")}
        elif host_ids:
            existing = set(h.id for h in self.hosts.values())
            evs = [e for e in evs if e.get("host_id") in host_ids and e.get("host_id") in existing]
        elif a.get("infra_env_id"):
            evs = [e for e in evs if e.get("infra_env_id") == a["infra_env_id"]]
        if a.get("severities"):
            evs = [e for e in evs if e["severity"] in a["severities"]]
        total = len(evs)
        evs = sorted(evs, key=lambda e: e["_ms"], reverse=a.get("order") == "descending")
        offset = max(0, a.get("offset") or 0)
        evs = evs[offset:]
        limit = a.get("limit")
        if limit is not None and limit >= 0:
            evs = evs[:limit]
        counts = counts or {}
        headers = {"Severity-Count-Info": str(counts.get("info", 0)),
                   "Severity-Count-Warning": str(counts.get("warning", 0)),
                   "Severity-Count-Error": str(counts.get("error", 0)),
                   "Severity-Count-Critical": str(counts.get("critical", 0)),
                   "Event-Count": str(total)}
        out = [dict(sorted((k, v) for k, v in e.items() if k not in ("_ms", "category"))) for e in evs]
        return out, headers

    # -- image service and auth --------------------------------------------
    def auth_type(self):
        return self.settings.get("auth_type") or ("local" if self.token else "none")

    def image_base(self):
        return (self.settings.get("image_service_base_url") or self.base_url).rstrip("/")

    def service_base(self):
        return (self.settings.get("service_base_url") or self.base_url).rstrip("/")

    def generate_image(self, ie, event=True):
        """updateInfraEnvImage / GenerateInfraEnvISOInternal: generated_at
        moves on every call; the download URL (and expires_at, and the
        signed URL's token) only when the image type, version or arch
        changed or an update marked the image as not generated."""
        ie.generated_at = now_ms()
        d = ie.spec
        auth = self.auth_type()
        key = (ie.image_type_name(), d.get("openshift_version", ""), d.get("cpu_architecture", "x86_64"), auth)
        if ie.generated and ie.image_key is not None and ie.image_key[:4] == key:
            return
        token = secrets.token_urlsafe(32) if auth != "none" else ""
        ie.image_key = key + (token,)
        ie.expires_at = fmt_ms(epoch_ms() + 4 * 3600 * 1000) if auth == "rhsso" else ZERO_MS
        ie.generated = True
        if event:
            extras = []
            if (d.get("proxy") or {}).get("http_proxy"):
                extras.append('proxy URL is "%s"' % d["proxy"]["http_proxy"])
            extras.append('Image type is "%s"' % d.get("type", "full-iso"))
            extras.append("SSH public key is %s" % ("set" if d.get("ssh_authorized_key") else "not set"))
            self.add_event("image_info_updated", "Updated image information (%s)" % ", ".join(extras),
                           cluster_id=ie.cluster_id, infra_env_id=ie.id)

    def infra_env_by_token(self, token):
        for ie in self.infra_envs.values():
            if ie.image_key is not None and ie.image_key[4] and ie.image_key[4] == token:
                return ie
        return None

    # -- infra-envs (inventory.go RegisterInfraEnvInternal,
    #    UpdateInfraEnvInternal, DeregisterInfraEnvInternal) --------------
    def _resolve_os_version(self, version):
        if not version:
            return latest_os_image_version()
        v = os_image_version(version)
        if v is None:
            # getOsImageOrLatest
            raise ApiError(400, "No OS image for Openshift version %s" % version)
        return v

    def _check_proxy(self, proxy, ocp_version):
        if proxy is not None:
            refvalid.validate_proxy(proxy.get("http_proxy") or "", proxy.get("https_proxy") or "",
                                    proxy.get("no_proxy") or "", ocp_version)

    def _check_image_params(self, p):
        """The static network, ignition override, trust bundle and kernel
        argument checks (400s)."""
        if p.get("ignition_config_override"):
            refvalid.parse_ignition(p["ignition_config_override"])
            refvalid.validate_ignition_image_size(p["ignition_config_override"])
        if p.get("static_network_config"):
            e = refvalid.static_network_errors(p["static_network_config"], self.late_2023())
            if e:
                raise ValidationFailed(e)
        if p.get("additional_trust_bundle"):
            refvalid.validate_pem_bundle(p["additional_trust_bundle"])
        if p.get("kernel_arguments"):
            refvalid.validate_kernel_arguments(p["kernel_arguments"])

    def register_infra_env(self, p):
        """RegisterInfraEnvInternal, its checks in its order: proxy, NTP,
        OS image, SSH key, static network, ignition override, the cluster,
        pull secret."""
        arch = p.get("cpu_architecture") or "x86_64"
        # the proxy as given: no https_proxy taken from http_proxy (neither
        # b29f9bcf nor the 2026 source defaults one)
        proxy = (dict(p["proxy"]) if p.get("proxy") is not None else None)
        cluster = self.clusters.get(p["cluster_id"]) if p.get("cluster_id") else None
        # GetOsImageOrLatest(params.OpenshiftVersion): the version asked for,
        # else the latest OS image, bound to a cluster or not
        version = p.get("openshift_version") or ""
        try:
            self._check_proxy(proxy, version)
            if p.get("additional_ntp_sources"):
                refvalid.validate_ntp_source(p["additional_ntp_sources"])
            os_version = self._resolve_os_version(version)
            if p.get("ssh_authorized_key"):
                try:
                    refvalid.validate_ssh_keys(p["ssh_authorized_key"])
                except ValidationFailed:
                    raise ValidationFailed("SSH key is not valid")
            self._check_image_params(p)
        except ValidationFailed as e:
            raise ApiError(400, str(e))
        if p.get("cluster_id"):
            if cluster is None:
                raise ApiError(404, "Cluster ID %s does not exist" % p["cluster_id"])
            if cluster.spec.get("cpu_architecture", "x86_64") not in (arch, "multi"):
                raise ApiError(400, "Specified CPU architecture (%s) doesn't match the cluster (%s)" % (
                    arch, cluster.spec.get("cpu_architecture", "x86_64")))
        try:
            refvalid.validate_pull_secret(p.get("pull_secret") or "",
                                          self.settings.get("registries_requiring_auth") or [])
        except ValidationFailed as e:
            raise ApiError(400, "pull secret for new infraEnv is invalid: %s" % e)
        spec = {
            "name": p.get("name") or "",
            "cluster_id": cluster.id if cluster else None,
            "openshift_version": os_version,
            "cpu_architecture": arch,
            "type": p.get("image_type") or "full-iso",
            "additional_ntp_sources": p.get("additional_ntp_sources") or "",
            "ssh_authorized_key": p.get("ssh_authorized_key") or "",
            "pull_secret": p.get("pull_secret") or "",
            "proxy": {k: v for k, v in (proxy or {}).items() if v is not None},
            "static_network_config": refvalid.format_static_network_config(p.get("static_network_config")),
            "ignition_config_override": p.get("ignition_config_override") or "",
            "kernel_arguments": go_dumps(p["kernel_arguments"]) if p.get("kernel_arguments") else "",
            "additional_trust_bundle": (p.get("additional_trust_bundle") or "").strip(),
        }
        if p.get("network_discovery_delay_seconds") is not None:
            spec["network_discovery_delay_seconds"] = p["network_discovery_delay_seconds"]
        ie = InfraEnv(spec, self)
        self.infra_envs[ie.id] = ie
        self.add_event("infra_env_registered", "Registered infra env", infra_env_id=ie.id)
        self.generate_image(ie)
        return ie

    def update_infra_env(self, ie_id, p):
        """UpdateInfraEnvInternal: pull secret and SSH key checked first
        (their own texts), then the infra-env looked up (404), then proxy,
        ignition override, static network; only fields that differ change,
        and any change marks the image for regeneration."""
        try:
            if p.get("pull_secret"):
                refvalid.validate_pull_secret(p["pull_secret"], self.settings.get("registries_requiring_auth") or [])
            ssh = (p.get("ssh_authorized_key") or "").strip()
            if ssh:
                refvalid.validate_ssh_keys(ssh)
        except ValidationFailed as e:
            raise ApiError(400, str(e))
        ie = self.infra_env(ie_id)
        d = ie.spec
        proxy = (dict(p["proxy"]) if p.get("proxy") is not None else None)
        try:
            self._check_proxy(proxy, d.get("openshift_version"))
            self._check_image_params(p)
            if p.get("additional_ntp_sources"):
                refvalid.validate_ntp_source(p["additional_ntp_sources"])
            os_version = self._resolve_os_version(p["openshift_version"]) if p.get("openshift_version") else None
        except ValidationFailed as e:
            raise ApiError(400, str(e))
        changed = False

        def put(key, value):
            nonlocal changed
            if d.get(key) != value:
                d[key] = value
                changed = True
        if proxy is not None:
            merged = dict(d.get("proxy") or {})
            merged.update({k: v for k, v in proxy.items() if v is not None})
            put("proxy", merged)
        if ssh:
            put("ssh_authorized_key", ssh)
        if p.get("additional_ntp_sources") is not None:
            put("additional_ntp_sources", p["additional_ntp_sources"])
        if p.get("ignition_config_override"):
            put("ignition_config_override", p["ignition_config_override"])
        if p.get("image_type"):
            put("type", p["image_type"])
        if p.get("static_network_config") is not None:
            put("static_network_config", refvalid.format_static_network_config(p["static_network_config"]))
        if p.get("pull_secret"):
            put("pull_secret", p["pull_secret"])
        if p.get("kernel_arguments") is not None:
            put("kernel_arguments", go_dumps(p["kernel_arguments"]) if p["kernel_arguments"] else "")
        if p.get("additional_trust_bundle") is not None:
            put("additional_trust_bundle", p["additional_trust_bundle"].strip())
        if os_version is not None:
            put("openshift_version", os_version)
        if p.get("network_discovery_delay_seconds") is not None:
            put("network_discovery_delay_seconds", p["network_discovery_delay_seconds"])
        if changed:
            ie.generated = False
        ie.updated_at = now_rfc()
        self.generate_image(ie)
        return ie

    # -- hosts (user side) ----------------------------------------------------
    def deregister_host(self, ie_id, host_id):
        """V2DeregisterHostInternal: the host row goes (the agent's next call
        gets 404), event host_deregistered, the cluster re-evaluated."""
        h = self.host(ie_id, host_id)
        del self.hosts[(ie_id, host_id)]
        self.host_event(h, "host_deregistered", "Host %s deregistered" % h.display_name())
        if h.cluster_id:
            self.refresh_cluster(self.clusters.get(h.cluster_id))

    HOST_STATUSES_BEFORE_INSTALLATION_OR_UNBOUND = HOST_STATUSES_BEFORE_INSTALLATION + [
        "disconnected-unbound", "insufficient-unbound", "discovering-unbound", "known-unbound", "binding"]

    def is_day2(self, h):
        return h.kind == "AddToExistingClusterHost"

    def update_host(self, ie_id, host_id, p):
        """V2UpdateHostInternal: role, hostname, installation disk, machine
        config pool, ignition endpoint token, node labels, disks to skip
        formatting; then the host and its cluster are refreshed."""
        h = self.host(ie_id, host_id)
        allowed = self.HOST_STATUSES_BEFORE_INSTALLATION_OR_UNBOUND
        state_list = "[" + " ".join(allowed) + "]"
        if p.get("host_role") is not None:
            if h.status not in allowed:
                # updateRole's 400, wrapped by updateHostRole as a 500
                raise ApiError(500, "Host is in %s state, host role can be set only in one of %s states" % (
                    h.status, "[" + " ".join(HOST_STATUSES_BEFORE_INSTALLATION) + "]"))
            role = p["host_role"]
            # hostutil.IsRoleValid: a day-2 host may join the control plane
            # (docs/enhancements/day2-master.md), or go back to auto-assign
            # (b29f9bcf takes it: seen against the real service); the 2026
            # service also takes arbiter
            day2_roles = ("auto-assign", "master", "worker") + (() if self.late_2023() else ("arbiter",))
            if self.is_day2(h) and role not in day2_roles:
                raise ApiError(500, "Requested role (%s) is invalid for host %s from infraEnv %s" % (
                    role, h.id, h.infra_env_id))
            if role != h.role:
                if self.is_day2(h) and h.machine_config_pool_name in ("", h.role):
                    h.machine_config_pool_name = role
                h.role = role
                if role == "worker":
                    h.bootstrap = False
        if p.get("host_name") is not None:
            try:
                refvalid.validate_host_hostname(p["host_name"])
            except ValidationFailed as e:
                raise ApiError(400, str(e))
            if h.status not in allowed:
                raise ApiError(409, "Host is in %s state, host name can be set only in one of %s states" % (
                    h.status, state_list))
            h.requested_hostname = p["host_name"]
        if p.get("disks_selected_config") is not None:
            install = [d for d in p["disks_selected_config"] if d.get("role") == "install"]
            if len(install) > 1:
                raise ApiError(409, "duplicate setting of installation path by the user")
            if install:
                if h.status not in allowed:
                    raise ApiError(409, "Host is in %s state, host name can be set only in one of %s states" % (
                        h.status, state_list))
                disk = None
                for d in (h.inventory_obj or {}).get("disks") or []:
                    did = d.get("id") or "/dev/" + d.get("name", "")
                    if did == install[0]["id"] and (d.get("installation_eligibility") or {}).get("eligible"):
                        disk = d
                if disk is None:
                    raise ApiError(409, "Requested installation disk is not part of the host's valid disks")
                h.installation_disk_id = install[0]["id"]
                h.installation_disk_path = "/dev/" + disk.get("name", "")
        if p.get("machine_config_pool_name") is not None:
            # UpdateMachineConfigPoolName (any host, day 1 or 2), its 400
            # made a 409 by updateHostMachineConfigPoolName
            if h.status not in allowed:
                raise ApiError(409, "Host is in %s state, host machine config pool can be set only in one of %s "
                                    "states" % (h.status, "[" + " ".join(HOST_STATUSES_BEFORE_INSTALLATION) + "]"))
            h.machine_config_pool_name = p["machine_config_pool_name"]
        if p.get("ignition_endpoint_token") is not None:
            h.ignition_endpoint_token_set = bool(p["ignition_endpoint_token"])
        if p.get("node_labels") is not None:
            labels = {x.get("key", ""): x.get("value", "") for x in p["node_labels"]}
            err = refvalid.validate_node_labels(labels)
            if err:
                raise ApiError(400, err)
            h.node_labels = go_dumps(dict(sorted(labels.items()))) if labels else ""
        if p.get("disks_skip_formatting") is not None:
            ids = [d.get("id") or "/dev/" + d.get("name", "") for d in (h.inventory_obj or {}).get("disks") or []]
            skip = list(h.skip_formatting)
            for item in p["disks_skip_formatting"]:
                if item.get("disk_id") is None or item.get("skip_formatting") is None:
                    raise ApiError(400, "Missing required disk formatting param fields")
                if item["disk_id"] not in ids:
                    raise ApiError(400, "Disk identifier %s doesn't match any disk in the inventory, it cannot be "
                                        "skipped. Inventory disk identifiers are: %s" % (
                                            item["disk_id"], ", ".join(ids)))
                if item["skip_formatting"] and item["disk_id"] not in skip:
                    skip.append(item["disk_id"])
                elif not item["skip_formatting"] and item["disk_id"] in skip:
                    skip.remove(item["disk_id"])
            h.skip_formatting = skip
        h.touch()
        self.refresh_host(h)
        self.refresh_cluster(self.clusters.get(h.cluster_id) if h.cluster_id else None)
        return h

    def update_host_installer_args(self, ie_id, host_id, args):
        try:
            refvalid.validate_installer_args(args)
        except ValidationFailed as e:
            raise ApiError(400, str(e))
        h = self.host(ie_id, host_id)
        h.installer_args_json = go_dumps(args)
        h.installer_args = list(args)
        h.touch()
        self.host_event(h, "host_installer_args_applied",
                        "Host %s: custom installer arguments were applied" % h.display_name())
        return h

    def update_host_ignition(self, ie_id, host_id, config):
        h = self.host(ie_id, host_id)
        if config:
            try:
                refvalid.parse_ignition(config)
            except ValidationFailed as e:
                raise ApiError(400, str(e))
        self.host_event(h, "host_discovery_ignition_config_applied",
                        "Host %s: custom discovery ignition config was applied" % h.display_name())
        if not h.cluster_id and self.late_2023():
            # b29f9bcf's V2UpdateHostIgnitionInternal dereferences the
            # host's cluster id after the event: for a host bound to no
            # cluster the panic is recovered, the transaction rolled back and
            # 201 answered; nothing is kept (the 2026 service checks for nil)
            return h
        h.ignition_overrides = config
        h.touch()
        return h

    def accept_registration(self, cluster):
        """cluster.AcceptRegistration (409 texts)."""
        if cluster.status == "installed":
            raise ApiError(409, "Cannot add host to a cluster that is already installed, please use the day2 "
                                "cluster option")
        if cluster.status not in CLUSTER_ACCEPTS_REGISTRATION:
            raise ApiError(409, "Host can register only in one of the following states: %s" % (
                "[" + " ".join(CLUSTER_ACCEPTS_REGISTRATION) + "]"))

    def bind_host(self, ie_id, host_id, cluster_id):
        """BindHostInternal: only a known-unbound host binds (host state
        machine); it goes to binding, the agent is told to exit, and its
        re-registration makes it discovering in the cluster."""
        h = self.host(ie_id, host_id)
        if h.cluster_id:
            raise ApiError(409, "Host %s is already bound to cluster %s" % (host_id, h.cluster_id))
        cluster = self.clusters.get(cluster_id)
        if cluster is None:
            raise ApiError(400, "Failed to find cluster %s" % cluster_id)
        ie = self.infra_env(ie_id)
        c_arch = cluster.spec.get("cpu_architecture", "x86_64")
        ie_arch = ie.spec.get("cpu_architecture", "x86_64")
        if c_arch != ie_arch and c_arch != "multi":
            raise ApiError(400, "InfraEnv's CPU architecture (%s) doesn't match the cluster (%s)" % (ie_arch, c_arch))
        self.accept_registration(cluster)
        if h.status != "known-unbound":
            raise ApiError(500, "no condition found to run transition")
        h.cluster_id = cluster.id
        if cluster.spec.get("kind") == "AddHostsCluster":
            h.kind = "AddToExistingClusterHost"
            h.role = "worker"
            h.suggested_role = "worker"
            h.machine_config_pool_name = h.machine_config_pool_name or "worker"
        h.set_status("binding", "Host is waiting to be bound to the cluster")
        self.refresh_cluster(cluster)
        return h

    UNBIND_TO_UNBINDING = ("known", "discovering", "disconnected", "insufficient", "pending-for-input")
    UNBIND_TO_PENDING_USER_ACTION = ("installed", "added-to-existing-cluster", "error", "cancelled")

    def unbind_host(self, ie_id, host_id):
        h = self.host(ie_id, host_id)
        if not h.cluster_id:
            raise ApiError(409, "Host %s is already unbound" % host_id)
        ie = self.infra_env(ie_id)
        if ie.cluster_id:
            raise ApiError(409, "Cannot unbind Host %s. InfraEnv %s is bound to Cluster %s" % (
                host_id, ie_id, ie.cluster_id))
        if h.status in self.UNBIND_TO_UNBINDING:
            status = "unbinding"
        elif h.status in self.UNBIND_TO_PENDING_USER_ACTION:
            status = "unbinding-pending-user-action"
        else:
            raise ApiError(500, "no condition found to run transition")
        cluster = self.clusters.get(h.cluster_id)
        h.cluster_id = None
        h.kind = "Host"
        h.role = "auto-assign"
        h.suggested_role = "auto-assign"
        h.bootstrap = False
        h.machine_config_pool_name = ""
        h._stages_cache = []
        h.progress = {"current_stage": "", "progress_info": "", "installation_percentage": 0,
                      "stage_started_at": ZERO_MS, "stage_updated_at": ZERO_MS}
        h.set_status(status, "Host is waiting to be unbound from the cluster")
        self.refresh_cluster(cluster)
        return h

    def install_host(self, ie_id, host_id):
        """V2InstallHost: a host bound to no cluster is a 404 without a
        reason of its own (NewApiError of a nil error); then day 2 only,
        and known only."""
        h = self.host(ie_id, host_id)
        if not h.cluster_id:
            raise ApiError(404, "error is nil")
        if not self.is_day2(h):
            raise ApiError(409, "method only allowed when adding hosts to an existing cluster")
        if h.status != "known":
            raise ApiError(409, "cannot install host in state %s" % h.status)
        if h.role == "auto-assign":
            h.role = "worker"
        h.suggested_role = h.role
        cluster = self.clusters.get(h.cluster_id)
        h._stages_cache = h.stages(cluster.sno if cluster else False)
        h.set_status("installing", "Installation is in progress")
        return h

    def deregister_infra_env(self, ie_id):
        ie = self.infra_env(ie_id)
        n = sum(1 for h in self.hosts.values() if h.infra_env_id == ie.id)
        if n:
            raise ApiError(400, "failed to deregister infraEnv %s, %d hosts are still associated" % (ie.id, n))
        del self.infra_envs[ie.id]
        self.add_event("infra_env_deregistered", "Deregistered infra env", infra_env_id=ie.id)

    # -- infra-env files (v2DownloadInfraEnvFiles) ------------------------
    def agent_token(self, ie):
        """The agent's PULL_SECRET_TOKEN in the discovery ignition
        (internal/cluster/auth.go AgentToken): local auth, the infra-env's
        signed token (the one its image URL carries); rhsso, the pull
        secret's cloud.openshift.com auth; none, nothing."""
        auth = self.auth_type()
        if auth == "local":
            if ie.image_key is None:
                self.generate_image(ie, event=False)
            return ie.image_key[4]
        if auth == "rhsso":
            try:
                return ((json.loads(ie.spec.get("pull_secret") or "{}").get("auths") or {})
                        .get("cloud.openshift.com") or {}).get("auth") or ""
            except ValueError:
                return ""
        return ""

    def discovery_ignition(self, ie):
        """The discovery ignition: Ignition 3.1.0 with the units observed in
        observed/04 (agent.service pointing at this service, proxy
        variables from the infra-env, the agent's token but without auth), the SSH keys, the pull secret as
        /root/.docker/config.json, the static network config files, the
        additional trust bundle; the override merged (its users, files and
        units appended; version raised to the override's)."""
        d = ie.spec
        agent = self.settings["agent_image"]
        px = d.get("proxy") or {}
        hp, hsp, np = px.get("http_proxy") or "", px.get("https_proxy") or "", px.get("no_proxy") or ""
        token = self.agent_token(ie)
        agent_unit = ("[Service]\nType=simple\nRestart=always\nRestartSec=3\nStartLimitInterval=0\n"
                      "Environment=HTTP_PROXY=%s\nEnvironment=http_proxy=%s\nEnvironment=HTTPS_PROXY=%s\n"
                      "Environment=https_proxy=%s\nEnvironment=NO_PROXY=%s\nEnvironment=no_proxy=%s\n" +
                      ("Environment=PULL_SECRET_TOKEN=%s\n" % token if token else "") +
                      "TimeoutStartSec=600\nExecStartPre=/usr/local/bin/agent-fix-bz1964591 %s\n"
                      "ExecStartPre=podman run --privileged --rm -v /usr/local/bin:/hostbin %s cp /usr/bin/agent "
                      "/hostbin\nExecStart=/usr/local/bin/agent --url %s --infra-env-id %s --agent-version %s "
                      "--insecure=true  \n\n[Unit]\nWants=network-online.target\nAfter=network-online.target\n\n"
                      "[Install]\nWantedBy=multi-user.target\n") % (hp, hp, hsp, hsp, np, np, agent, agent,
                                                                   self.service_base(), ie.id, agent)
        selinux_unit = ("[Service]\nType=oneshot\nExecStartPre=checkmodule -M -m -o /root/assisted.mod "
                        "/root/assisted.te\nExecStartPre=semodule_package -o /root/assisted.pp -m "
                        "/root/assisted.mod\nExecStart=semodule -i /root/assisted.pp\n\n[Install]\n"
                        "WantedBy=multi-user.target\n")

        def data_file(path, content, mode=420):
            return {"contents": {"source": "data:text/plain;charset=utf-8;base64," +
                                 base64.b64encode(content.encode("utf-8")).decode("ascii")},
                    "mode": mode, "overwrite": True, "path": path}
        files = [data_file("/root/.docker/config.json", d.get("pull_secret") or "", 420)]
        if d.get("additional_trust_bundle"):
            files.append(data_file("/etc/pki/ca-trust/source/anchors/domain.crt", d["additional_trust_bundle"]))
        for i, host in enumerate(json.loads(d["static_network_config"]) if d.get("static_network_config") else []):
            lines = sorted("%s=%s" % (m.get("mac_address", ""), m.get("logical_nic_name", ""))
                           for m in host.get("mac_interface_map") or [])
            files.append(data_file("/etc/assisted/network/host%d/mac_interface.ini" % i, "\n".join(lines), 384))
            files.append(data_file("/etc/assisted/network/host%d/ymlFile%d.yml" % (i, i),
                                   refvalid._nmpolicy(host), 384))
        keys = [k.strip() for k in (d.get("ssh_authorized_key") or "").split("\n") if k.strip()]
        user = {"groups": ["sudo"], "name": "core", "passwordHash": "!"}
        if keys:
            user["sshAuthorizedKeys"] = keys
        ign = {"ignition": {"version": "3.1.0"},
               "passwd": {"users": [user]},
               "storage": {"files": files},
               "systemd": {"units": [{"contents": agent_unit, "enabled": True, "name": "agent.service"},
                                     {"contents": selinux_unit, "enabled": True, "name": "selinux.service"},
                                     {"enabled": True, "name": "multipathd.service"}]}}
        if d.get("ignition_config_override"):
            append_ignition(ign, json.loads(d["ignition_config_override"]))
        return go_dumps(ign)

    def _kargs_suffix(self, ie):
        if not ie.spec.get("kernel_arguments"):
            return ""
        return "".join(" " + (a.get("value") or "") for a in json.loads(ie.spec["kernel_arguments"])
                       if a.get("operation") == "append")

    def _image_query(self, ie, extra=()):
        q = list(extra)
        token = ie.image_key[4] if ie.image_key else ""
        if token:
            q.append(("api_key" if self.auth_type() == "local" else "image_token", token))
        return "&".join("%s=%s" % kv for kv in sorted(q))

    def boot_artifact_urls(self, ie):
        """initrd, kernel, rootfs URLs on the image service (the hub's iPXE
        script and the infra-env's boot artifacts)."""
        d = ie.spec
        va = (("arch", d.get("cpu_architecture", "x86_64")), ("version", d.get("openshift_version", "")))
        base = self.image_base()
        return ("%s/images/%s/pxe-initrd?%s" % (base, ie.id, self._image_query(ie, va)),
                "%s/boot-artifacts/kernel?%s" % (base, "&".join("%s=%s" % kv for kv in va)),
                "%s/boot-artifacts/rootfs?%s" % (base, "&".join("%s=%s" % kv for kv in va)))

    def files_url(self, ie, file_name, ipxe_script_type=None):
        q = [("file_name", file_name)]
        if ipxe_script_type:
            q.append(("ipxe_script_type", ipxe_script_type))
        token = ie.image_key[4] if ie.image_key else ""
        if token:
            q.append(("api_key" if self.auth_type() == "local" else "image_token", token))
        return "%s/api/assisted-install/v2/infra-envs/%s/downloads/files?%s" % (
            self.service_base(), ie.id, "&".join("%s=%s" % kv for kv in q))

    def ipxe_script(self, ie, mac=None, script_type=None):
        if mac:
            for h in self.hosts.values():
                if h.infra_env_id != ie.id:
                    continue
                macs = [(i.get("mac_address") or "").lower() for i in (h.inventory_obj or {}).get("interfaces") or []]
                if mac.lower() in macs and h.status in ("installed", "added-to-existing-cluster"):
                    raise ApiError(404, "IPXE booting skipped. InfraEnv %s: host %s having mac %s is already "
                                        "installed" % (ie.id, h.id, mac))
        if script_type == "boot-order-control" and not mac:
            # hostRedirectIPXEScript: the plain ipxe-script URL (signed), the
            # MAC appended; the script type is not carried on
            return "#!ipxe\nchain %s&mac=${net0/mac}\n" % self.files_url(ie, "ipxe-script")
        initrd, kernel, rootfs = self.boot_artifact_urls(ie)
        return ("#!ipxe\ninitrd --name initrd %s\nkernel %s initrd=initrd coreos.live.rootfs_url=%s "
                "random.trust_cpu=on rd.luks.options=discard ignition.firstboot ignition.platform.id=metal "
                "console=tty1 console=ttyS1,115200n8 coreos.inst.persistent-kargs=\"console=tty1 "
                "console=ttyS1,115200n8\"%s\nboot\n") % (initrd, kernel, rootfs, self._kargs_suffix(ie))

    def infra_env_file(self, ie_id, file_name, mac=None, script_type=None):
        """(filename, bytes) of v2DownloadInfraEnvFiles."""
        ie = self.infra_env(ie_id)
        if script_type and file_name != "ipxe-script":
            raise ApiError(400, "\"ipxe_script_type\"\" can be set only for \"ipxe-script\"")
        if file_name == "discovery.ign":
            return "discovery.ign", self.discovery_ignition(ie).encode("utf-8")
        if file_name == "ipxe-script":
            return "%s-ipxe-script" % ie.id, self.ipxe_script(ie, mac, script_type).encode("utf-8")
        stored = ie.spec.get("static_network_config") or ""
        if not stored:
            return "", b""
        return "%s-static-network-config.tar" % ie.id, refvalid.static_network_archive(stored)

    def iso_standin(self, ie):
        """The ISO body the image-service paths serve here: not an ISO (no
        RHCOS image is available), a small text naming what the real image
        would hold, with a digest of the discovery ignition embedded."""
        ign = self.discovery_ignition(ie).encode("utf-8")
        return ("refservice stand-in for the %s discovery ISO of infra-env %s\nopenshift_version=%s\n"
                "cpu_architecture=%s\nignition_sha256=%s\n" % (
                    ie.spec.get("type", "full-iso"), ie.id, ie.spec.get("openshift_version", ""),
                    ie.spec.get("cpu_architecture", "x86_64"), hashlib.sha256(ign).hexdigest())).encode("utf-8")

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
        if "node_labels" in spec:
            # as v2UpdateHost stores them: a JSON object string, keys sorted
            labels = spec["node_labels"] or {}
            h.node_labels = go_dumps(dict(sorted(labels.items()))) if labels else ""
        if "machine_config_pool_name" in spec:
            h.machine_config_pool_name = spec["machine_config_pool_name"] or ""
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
        # monitored operators the operators manager would have added (OLM
        # ones with their namespace and subscription), appended
        for o in spec.get("monitored_operators") or []:
            op = {"status_updated_at": ZERO_MS, "timeout_seconds": 0, "bundles": []}
            op.update(o)
            c.operators.append(op)
        for k, v in spec.items():
            if k in ("status", "status_info", "files", "fixed", "id", "monitored_operators"):
                continue
            c.spec[k] = v
        c.touch()

    def cluster_api(self, c, include_hosts=True):
        """A cluster as the service answers it."""
        return c.to_api(self.cluster_hosts(c.id), self._style(), include_hosts, self.generation())

    def snapshot(self):
        return {
            "settings": self.settings,
            "clusters": [self.cluster_api(c) for c in self.clusters.values()],
            "infra_envs": [ie.to_api() for ie in self.infra_envs.values()],
            "hosts": [self.host_debug(h) for h in sorted(self.hosts.values(), key=lambda x: x.seq)],
        }

    def host_debug(self, h):
        d = h.to_api()
        d["_issued_steps"] = dict(h.issued)
        d["_replies"] = list(h.replies)
        return d


CLUSTER_KEYS = set(DEFAULT_CLUSTER) | {"id", "status", "status_info", "files", "installer_args", "platform_type",
                                       "high_availability_mode", "kind", "pull_secret", "hyperthreading",
                                       "schedulable_masters", "additional_ntp_source", "tags", "api_vip_dns_name",
                                       "openshift_cluster_id", "imported", "monitored_operators"}
INFRA_ENV_KEYS = set(DEFAULT_INFRA_ENV) | {"id", "cluster_id"} | INFRA_ENV_EXTRA_KEYS
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
    settings = sc.get("settings") or {}
    style = settings.get("install_cmd_style", "2023")
    if style not in ("2023", "head"):
        raise ValueError("settings.install_cmd_style must be \"2023\" or \"head\"")
    gen = settings.get("api_generation")
    generations.check(gen)
    if gen is not None and "install_cmd_style" in settings and style != gen:
        raise ValueError("settings.install_cmd_style %s contradicts api_generation %s" % (style, gen))
    images = settings.get("release_images")
    if images is not None:
        if not isinstance(images, list) or not all(
                isinstance(r, dict) and r.get("openshift_version") and r.get("url") and r.get("version")
                for r in images):
            raise ValueError("settings.release_images: a list of release images, each with openshift_version, "
                             "url and version (RELEASE_IMAGES)")


def _gib(n):
    g = n / float(1024 ** 3)
    return ("%.2f GiB" % g).replace(".00 GiB", " GiB")


def load_scenario(path):
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f)

