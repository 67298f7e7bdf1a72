#!/usr/bin/python3
"""Three cradle agents in three network namespaces against the reference
service scripted like the real one: every discovery step is answered with
output that validates against its swagger model (the service's own check
on each reply) and that reflects the namespaces' real state.

Lab (all addresses from the documentation ranges, nothing leaves it):

  namespace "sw": bridge br0 198.51.100.1/24, 2001:db8:100::1/64, with
    - the reference service (tests/service/refservice.py) on 198.51.100.1,
    - dnsmasq: DNS for fleet.lab.test (api, api-int, *.apps) and DHCP
      (198.51.100.150-160) for dhcp-lease-allocate,
    - chronyd as NTP server (-x: never touches this machine's clock),
    - a Tang advertisement server;
  namespaces "h1", "h2", "h3": one veth into the bridge each (eth0,
    198.51.100.11-13, 2001:db8:100::11-13), a private mount namespace
    (/run for chronyd's socket, /etc as an overlay: resolv.conf naming the
    lab's DNS, /etc/keepalived for leases), a chronyd client, and the
    agent (`cradle agent ... --host-exec=direct --lab-nics=eth0`).
  h1 also holds 198.51.100.101, the cluster's ingress VIP.

Checked from the service's recorded replies: connectivity (each host
reaches the two others by ARP, NDP and ICMP, with the MACs their
inventories report), free addresses (exactly the /24 minus the bridge,
the three hosts and the taken VIP), verify-vips (api free, ingress
taken), NTP (the lab server, synced), DNS (the lab's records), Tang; then,
with DHCP VIP allocation switched on, dhcp-lease-allocate.

Then the installation: three dry-run agents (`--dry-run --force-id ...`,
as for load tests) take new hosts of a second cluster in the same
namespaces from discovery (known, cluster ready: the connectivity majority
group of the three) through preparing-for-installation to `installing`;
the service's installer image is the agents' own, so each runs cradle's
installer in-process, in dry run. The lab's stand-ins come first on PATH
(dry-installer, podman, shutdown, systemctl: tests/installer/stand-ins/
host-tool, which only logs its argv): nothing is written to this
machine's disk, which the dry-run hosts report as their installation disk
and which is in use (mounted on /). Each non-bootstrap master reaches
`Rebooting`; so does the bootstrap, through its whole flow in dry run: its
cluster is the three hosts listed in a --dry-run-cluster-hosts-path file
(DRY_CLUSTER_HOSTS_PATH), each a Ready node once its fake reboot marker
exists, so it reports Joined for the two others, waits for its own
(faked) bootkube and reboots (its marker).

The service runs with its defaults as the real one (inventory interfaces
of a virtual type dropped, connectivity majority groups of at least three
hosts) except ENABLE_VIRTUAL_INTERFACES: the lab's NICs are veth pairs,
and a dry-run host's only interface is lo with its forced address.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepslib  # noqa: E402

stepslib.require_root()
CRADLE = os.environ.get("CRADLE_BINARY") or os.path.join(stepslib.BUILD, "cradle")
if not os.path.exists(CRADLE):
    stepslib.skip("no cradle binary (%s)" % CRADLE)
TOOLS = {}
for tool in ("dnsmasq", "chronyd", "chronyc", "dhclient"):
    TOOLS[tool] = shutil.which(tool) or next((p for p in ("/usr/sbin/" + tool,) if os.path.exists(p)), None)
    if not TOOLS[tool]:
        stepslib.skip("%s is not installed" % tool)
M = stepslib.model()
import refclient  # noqa: E402
from refclient import RefService  # noqa: E402

if refclient.real_service():
    stepslib.skip(refclient.control_skip_reason("the fleet's scenario, its settings and the recorded replies"))

lab = stepslib.Lab()
T = lab.tmp
SW = lab.ns("sw")
lab.ip(SW, "link", "add", "br0", "type", "bridge")
lab.ip(SW, "link", "set", "br0", "up")
lab.addr(SW, "br0", "198.51.100.1/24")
lab.addr(SW, "br0", "2001:db8:100::1/64")

HOSTS = {}
for i in (1, 2, 3):
    ns = lab.ns("h%d" % i)
    lab.ip(ns, "link", "add", "eth0", "type", "veth", "peer", "name", "sw-h%d" % i, "netns", SW)
    lab.ip(SW, "link", "set", "sw-h%d" % i, "master", "br0")
    lab.ip(SW, "link", "set", "sw-h%d" % i, "up")
    lab.ip(ns, "link", "set", "eth0", "up")
    lab.addr(ns, "eth0", "198.51.100.1%d/24" % i)
    lab.addr(ns, "eth0", "2001:db8:100::1%d/64" % i)
    HOSTS[ns] = {"ip": "198.51.100.1%d" % i, "ip6": "2001:db8:100::1%d" % i, "mac": lab.mac(ns, "eth0")}
H1 = sorted(HOSTS)[0]
lab.addr(H1, "eth0", "198.51.100.101/24")

# --- the lab's services in "sw" ------------------------------------------------
lab.spawn(SW, [TOOLS["dnsmasq"], "--keep-in-foreground", "--no-resolv", "--no-hosts", "--user=root",
               "--interface=br0", "--bind-interfaces", "--listen-address=198.51.100.1",
               "--pid-file=" + os.path.join(T, "dnsmasq.pid"), "--log-facility=" + os.path.join(T, "dnsmasq.log"),
               "--local=/lab.test/", "--host-record=api.fleet.lab.test,198.51.100.100",
               "--host-record=api-int.fleet.lab.test,198.51.100.100",
               "--address=/apps.fleet.lab.test/198.51.100.101",
               "--dhcp-range=198.51.100.150,198.51.100.160,255.255.255.0,12h",
               "--dhcp-leasefile=" + os.path.join(T, "dnsmasq.leases")])
with open(os.path.join(T, "ntp-server.conf"), "w") as f:
    f.write("local stratum 8\nallow 198.51.100.0/24\npidfile /run/chrony/chronyd.pid\ncmdport 0\n")
lab.spawn(SW, ["unshare", "--mount", "--propagation", "private", "sh", "-c",
               'mount -t tmpfs tmpfs /run && mkdir -m 0750 -p /run/chrony && exec "$0" -x -d -u root -f "$1"',
               TOOLS["chronyd"], os.path.join(T, "ntp-server.conf")],
          stdout=open(os.path.join(T, "ntp-server.log"), "w"), stderr=subprocess.STDOUT)
ADV = {"payload": "eyJrZXlzIjpbXX0", "signatures": [{"protected": "eyJhbGciOiJFUzUxMiJ9", "signature": "c2ln"}]}
TANG_PORT, _ = lab.httpd(SW, {"/adv/THUMB": {"body": json.dumps(ADV)}}, bind="198.51.100.1", name="tang")
TANG_URL = "http://198.51.100.1:%d" % TANG_PORT

CLUSTER = "3c5e6d1a-0b7f-4c2e-9a41-0d5f1e2a3b4c"
IE = "7d0c9f4e-2b1a-4e3d-8c5b-6a7f8e9d0c1b"
scenario = {
    # the lab's NICs are veth pairs (type "veth"), a dry-run host's is lo ("device"):
    # the real service keeps them only with ENABLE_VIRTUAL_INTERFACES
    "settings": {"next_instruction_seconds": 3, "backoff_instruction_seconds": 3, "min_disk_size_gb": 1,
                 "min_cpu_cores": 1, "min_ram_mib": 512, "enable_virtual_interfaces": True},
    "clusters": [{"id": CLUSTER, "name": "fleet", "base_dns_domain": "lab.test", "control_plane_count": 3,
                  "api_vips": ["198.51.100.100"], "ingress_vips": ["198.51.100.101"],
                  "machine_networks": ["198.51.100.0/24"],
                  "tang_servers": json.dumps([{"url": TANG_URL, "thumbprint": "THUMB"}])}],
    "infra_envs": [{"id": IE, "name": "fleet-ie", "cluster_id": CLUSTER, "additional_ntp_sources": "198.51.100.1"}],
}
with open(os.path.join(T, "scenario.json"), "w") as f:
    json.dump(scenario, f)
PORT_FILE = os.path.join(T, "refservice.port")
svc_proc = lab.spawn(SW, ["/usr/bin/python3", os.path.join(stepslib.SRC, "tests", "service", "refservice.py"),
                          "--bind", "198.51.100.1", "--port", "0", "--port-file", PORT_FILE,
                          "--scenario", os.path.join(T, "scenario.json"), "--quiet"],
                     stderr=open(os.path.join(T, "refservice.log"), "w"))
for _ in range(200):
    if os.path.exists(PORT_FILE):
        break
    time.sleep(0.1)
else:
    raise AssertionError("refservice did not start: " + open(os.path.join(T, "refservice.log")).read())
URL = "http://198.51.100.1:%d" % int(open(PORT_FILE).read())

# --- the hosts -------------------------------------------------------------------
with open(os.path.join(T, "ntp-client.conf"), "w") as f:
    f.write("server 198.51.100.1 iburst minpoll 0 maxpoll 0\npidfile /run/chrony/chronyd.pid\ncmdport 0\n")
for ns, h in HOSTS.items():
    d = os.path.join(T, ns)
    for sub in ("upper", "work"):
        os.makedirs(os.path.join(d, sub))
    with open(os.path.join(d, "upper", "resolv.conf"), "w") as f:
        f.write("nameserver 198.51.100.1\noptions timeout:1 attempts:2\n")
    with open(os.path.join(d, "upper", "hosts"), "w") as f:
        f.write("127.0.0.1 localhost\n::1 localhost\n198.51.100.1 ntp.lab.test\n")
    # holds the host's mount namespace: /run and /etc of its own
    h["holder"] = lab.spawn(ns, ["sh", "-c",
                                 'mount -t tmpfs tmpfs /run && mkdir -m 0750 -p /run/chrony && '
                                 'mount -t overlay overlay -o lowerdir=/etc,upperdir="$0/upper",workdir="$0/work" /etc'
                                 ' && touch "$0/ready" && exec sleep 100000', d])
    for _ in range(100):
        if os.path.exists(os.path.join(d, "ready")):
            break
        time.sleep(0.05)
    h["enter"] = ["nsenter", "-t", str(h["holder"].pid), "--mount", "--net"]
    lab.spawn(None, h["enter"] + [TOOLS["chronyd"], "-x", "-d", "-u", "root", "-f", os.path.join(T, "ntp-client.conf")],
              stdout=open(os.path.join(d, "chronyd.log"), "w"), stderr=subprocess.STDOUT)
    env = dict(os.environ, CRADLE_LOG_TARGET="stderr", PULL_SECRET_TOKEN="")
    h["log"] = os.path.join(d, "agent.log")
    h["agent"] = lab.spawn(None, h["enter"] + [CRADLE, "agent", "--url", URL, "--infra-env-id", IE,
                                               "--agent-version", "quay.io/edge-infrastructure/assisted-installer-agent:latest",
                                               "--host-exec=direct", "--lab-nics=eth0", "--interval=1",
                                               "--transport-retry-delay=0.1"],
                           stdout=open(h["log"], "w"), stderr=subprocess.STDOUT, env=env)

# the test talks to the service from inside "sw"
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/run/netns/" + SW, os.O_RDONLY)
if libc.setns(fd, 0x40000000) != 0:          # CLONE_NEWNET
    raise OSError(ctypes.get_errno(), "setns")
os.close(fd)
svc = RefService.attach(URL)

DISCOVERY = ("inventory", "connectivity-check", "tang-connectivity-check", "free-network-addresses",
             "ntp-synchronizer", "domain-resolution", "verify-vips")


def replies():
    reqs = svc.requests(operation="v2PostStepReply")
    out = []
    for r in reqs:
        body = r.get("body") or {}
        out.append({"host": r["path"].split("/hosts/")[1].split("/")[0], "type": body.get("step_type"),
                    "exit_code": body.get("exit_code", 0), "output": body.get("output", ""),
                    "error": body.get("error", ""), "status": r.get("status"),
                    "errors": (r.get("step_reply") or {}).get("output_errors", [])})
    return out


def host_ids():
    return {h["id"]: h for h in svc.control("GET", "/hosts")}


def wait(pred, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        # (a dry-run agent stops once its fake reboot marker exists)
        if any(h["agent"].poll() is not None and not os.path.exists(h.get("marker") or "/nonexistent")
               for h in HOSTS.values()):
            raise AssertionError("an agent exited:\n" + "\n".join(open(h["log"]).read()[-3000:] for h in HOSTS.values()))
        time.sleep(0.5)
    raise AssertionError("timed out waiting for %s" % what)


def latest(types, pred=lambda r: True):
    """The newest successful reply of each (host, type)."""
    got = {}
    for r in replies():
        if r["type"] in types and r["exit_code"] == 0 and r["status"] == 204 and pred(r):
            got[(r["host"], r["type"])] = r
    return got


def by_ip():
    """host id -> the namespace whose eth0 the inventory reports"""
    out = {}
    for hid, h in host_ids().items():
        inv = json.loads(h.get("inventory") or "{}")
        for itf in inv.get("interfaces") or []:
            for ns, info in HOSTS.items():
                if itf.get("mac_address") == info["mac"]:
                    out[hid] = ns
    return out


def test_1_every_discovery_step_answered_valid():
    def all_there():
        ids = by_ip()
        if len(ids) < 3:
            return None
        got = latest(DISCOVERY)
        return got if all((hid, t) in got for hid in ids for t in DISCOVERY) else None
    got = wait(all_there, 240, "every discovery step from every host")
    bad = [r for r in replies() if r["errors"] or r["status"] != 204 or r["exit_code"] != 0]
    assert not bad, json.dumps(bad, indent=1)[:4000]
    assert len({hid for hid, _ in got}) == 3
    global IDS
    IDS = by_ip()


def test_2_connectivity_reflects_the_lab():
    got = latest(("connectivity-check",), lambda r: json.loads(r["output"]).get("remote_hosts"))
    for hid, ns in IDS.items():
        report = json.loads(got[(hid, "connectivity-check")]["output"])
        others = sorted(h for h in IDS if h != hid)
        assert [r["host_id"] for r in report["remote_hosts"]] == others, report
        for remote in report["remote_hosts"]:
            info = HOSTS[IDS[remote["host_id"]]]
            l2 = {(e["remote_ip_address"], e.get("remote_mac")): e for e in remote["l2_connectivity"] or []}
            v4 = l2[(info["ip"], info["mac"])]
            assert v4 == {"outgoing_ip_address": HOSTS[ns]["ip"], "outgoing_nic": "eth0",
                          "remote_ip_address": info["ip"], "remote_mac": info["mac"], "successful": True}, v4
            assert l2[(info["ip6"], info["mac"])]["successful"] is True, l2
            l3 = {e["remote_ip_address"]: e for e in remote["l3_connectivity"]}
            assert l3[info["ip"]]["successful"] is True and l3[info["ip6"]]["successful"] is True, l3


def test_3_free_addresses_vips_ntp_dns_tang():
    taken = {"198.51.100.1", "198.51.100.101"} | {h["ip"] for h in HOSTS.values()}
    want = ["198.51.100.%d" % i for i in range(256) if "198.51.100.%d" % i not in taken]
    got = latest(("free-network-addresses", "verify-vips", "domain-resolution", "tang-connectivity-check"))
    for hid in IDS:
        free = json.loads(got[(hid, "free-network-addresses")]["output"])
        assert free == [{"free_addresses": want, "network": "198.51.100.0/24"}], free
        vips = json.loads(got[(hid, "verify-vips")]["output"])
        assert vips == [{"verification": "succeeded", "vip": "198.51.100.100", "vip_type": "api"},
                        {"verification": "failed", "vip": "198.51.100.101", "vip_type": "ingress"}], vips
        dns = {d["domain_name"]: d for d in json.loads(got[(hid, "domain-resolution")]["output"])["resolutions"]}
        assert dns["api.fleet.lab.test"]["ipv4_addresses"] == ["198.51.100.100"], dns
        assert dns["api-int.fleet.lab.test"]["ipv4_addresses"] == ["198.51.100.100"], dns
        assert dns["console-openshift-console.apps.fleet.lab.test"]["ipv4_addresses"] == ["198.51.100.101"], dns
        assert dns["validateNoWildcardDNS.fleet.lab.test"]["ipv4_addresses"] == [], dns
        tang = json.loads(got[(hid, "tang-connectivity-check")]["output"])
        assert tang["is_success"] is True and tang["tang_server_response"][0]["tang_url"] == TANG_URL + "/adv/THUMB"
    # NTP: the lab server (by its name in the hosts' /etc/hosts), synced
    synced = wait(lambda: latest(("ntp-synchronizer",), lambda r: '"synced"' in r["output"])
                  if len(latest(("ntp-synchronizer",), lambda r: '"synced"' in r["output"])) == 3 else None,
                  120, "NTP synced on every host")
    for r in synced.values():
        assert json.loads(r["output"]) == {"ntp_sources": [{"source_name": "ntp.lab.test",
                                                            "source_state": "synced"}]}, r


def test_4_dhcp_vip_allocation():
    svc.control("POST", "/clusters/" + CLUSTER, {"vip_dhcp_allocation": True})
    got = wait(lambda: (lambda g: g if len(g) == 3 else None)(latest(("dhcp-lease-allocate",))), 180,
               "dhcp-lease-allocate from every host")
    for r in got.values():
        out = stepslib.check_output("dhcp-lease-allocate", r["output"])
        for k in ("api_vip_address", "ingress_vip_address"):
            assert out[k].startswith("198.51.100.1") and 150 <= int(out[k].split(".")[3]) <= 160, out
    bad = [r for r in replies() if r["errors"] or r["status"] != 204]
    assert not bad, json.dumps(bad, indent=1)[:4000]


# ---- the installation, with dry-run agents ---------------------------------------

# the bootstrap's stages in dry run (installer/README.md, notes §5): what changes
# the machine is logged, not done; the masters' nodes are Ready once they "reboot"
BOOTSTRAP_STAGES = [("Starting installation", "bootstrap"), ("Installing", "master"), ("Writing image to disk", ""),
                    ("Waiting for control plane", "Waiting for bootstrap node preparation"),
                    ("Waiting for control plane", "Waiting for masters to join bootstrap control plane"),
                    ("Waiting for bootkube", ""), ("Waiting for bootkube", "waiting for ETCD bootstrap to be complete"),
                    ("Waiting for controller", "waiting for controller pod ready event")]
MASTER_STAGES = [("Starting installation", "master"), ("Installing", "master"),
                 ("Writing image to disk", ""), ("Rebooting", "")]

CLUSTER2 = "5e1f0c3b-8a2d-4b6e-9c7f-1a2b3c4d5e6f"
IE2 = "6f2a1d4c-9b3e-4c7f-8d1a-2b3c4d5e6f70"
AGENT_IMAGE = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
DRY = {ns: str(uuid.UUID(int=0xd17e << 112 | i)) for i, ns in enumerate(sorted(HOSTS), 1)}
STAND_INS = os.path.join(stepslib.SRC, "tests", "installer", "stand-ins")


def progress():
    """host id -> [(stage, info)] as the service accepted them"""
    out = {}
    for r in svc.requests(operation="v2UpdateHostInstallProgress"):
        if r.get("status") == 200:
            hid = r["path"].split("/hosts/")[1].split("/")[0]
            out.setdefault(hid, []).append((r["body"]["current_stage"], r["body"].get("progress_info", "")))
    return out


def test_5_dry_run_agents_install():
    for h in HOSTS.values():
        h["agent"].terminate()
    for h in HOSTS.values():
        h["agent"].wait(30)
    svc.control("POST", "/clusters/" + CLUSTER, {"vip_dhcp_allocation": False})
    # the service's installer image is the agents' own: cradle's installer in-process
    svc.control("POST", "/settings", {"installer_image": AGENT_IMAGE})
    svc.control("POST", "/clusters", {"id": CLUSTER2, "name": "fleet2", "base_dns_domain": "lab.test",
                                      "control_plane_count": 3, "api_vips": ["198.51.100.102"],
                                      "ingress_vips": ["198.51.100.103"], "machine_networks": ["198.51.100.0/24"]})
    svc.control("POST", "/infra-envs", {"id": IE2, "name": "fleet2-ie", "cluster_id": CLUSTER2,
                                        "additional_ntp_sources": "198.51.100.1"})
    # the stand-ins (argv logged, nothing done) first on PATH: never this machine's disk or power
    bindir = os.path.join(T, "dry-bin")
    os.makedirs(bindir)
    for tool in ("dry-installer", "coreos-installer", "podman", "shutdown", "systemctl"):
        os.symlink(os.path.join(STAND_INS, "host-tool"), os.path.join(bindir, tool))
    path = bindir + ":" + os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    assert shutil.which("dry-installer", path=path) == os.path.join(bindir, "dry-installer")
    standin_log = os.path.join(T, "standin.jsonl")
    # the bootstrap's view of the cluster in dry run: the three hosts, each Ready once rebooted
    cluster_hosts = os.path.join(T, "cluster-hosts.json")
    with open(cluster_hosts, "w") as f:
        json.dump([{"hostname": "fleet2-master-%d" % i, "ip": h["ip"],
                    "rebootMarkerPath": os.path.join(T, ns, "install", "rebooted")}
                   for i, (ns, h) in enumerate(sorted(HOSTS.items()), 1)], f)
    for i, (ns, h) in enumerate(sorted(HOSTS.items()), 1):
        d = os.path.join(T, ns, "install")
        for sub in ("opt-install-dir", "var-log", "journal", "mnt"):
            os.makedirs(os.path.join(d, sub))
        env = dict(os.environ, CRADLE_LOG_TARGET="stderr", PULL_SECRET_TOKEN="", PATH=path,
                   STANDIN_LOG=standin_log, CRADLE_HOST_EXEC="direct",
                   CRADLE_INSTALL_DIR=os.path.join(d, "opt-install-dir"),
                   CRADLE_INSTALLER_LOG_FILE=os.path.join(d, "var-log", "assisted-installer.log"),
                   CRADLE_LOGS_DIR=os.path.join(d, "var-log"), CRADLE_JOURNAL_DIR=os.path.join(d, "journal"),
                   CRADLE_MOUNT_DIR=os.path.join(d, "mnt"), CRADLE_REGISTRY_DIR=os.path.join(d, "no-registry"),
                   CRADLE_EFI_DIR=os.path.join(d, "no-efi"), CRADLE_RETRY_DELAY="0.1",
                   CRADLE_RETRY_MAX_DELAY="0.5", CRADLE_POLL_INTERVAL="0.5",
                   CRADLE_SLOW_POLL_INTERVAL="1", DRY_CLUSTER_HOSTS_PATH=cluster_hosts)
        h["marker"] = os.path.join(d, "rebooted")
        h["log"] = os.path.join(d, "agent.log")
        h["agent"] = lab.spawn(None, h["enter"] + [
            CRADLE, "agent", "--url", URL, "--infra-env-id", IE2, "--agent-version", AGENT_IMAGE,
            "--host-exec=direct", "--lab-nics=eth0", "--interval=1", "--transport-retry-delay=0.1",
            "--dry-run", "--force-id", DRY[ns], "--force-hostname", "fleet2-master-%d" % i,
            "--force-mac", h["mac"], "--forced-ipv4", h["ip"] + "/24",
            "--fake-reboot-marker-path", h["marker"]],
            stdout=open(h["log"], "w"), stderr=subprocess.STDOUT, env=env)
    ids = sorted(DRY.values())

    def cluster2_hosts():
        return {x["id"]: x for x in svc.control("GET", "/hosts") if x["id"] in ids}

    wait(lambda: (lambda hs: len(hs) == 3 and all(x["status"] == "known" for x in hs.values()))(cluster2_hosts())
         and svc.control("GET", "/clusters/" + CLUSTER2)["status"] == "ready", 300,
         "three known dry-run hosts, cluster ready")
    groups = json.loads(svc.control("GET", "/clusters/" + CLUSTER2)["connectivity_majority_groups"])
    assert sorted(groups["198.51.100.0/24"]) == ids, groups
    # the bootstrap: the first namespace's host
    bootstrap = DRY[sorted(HOSTS)[0]]
    svc.install(CLUSTER2, prepare=True, bootstrap_host_id=bootstrap)
    masters = [x for x in ids if x != bootstrap]
    wait(lambda: all(("Rebooting", "") in progress().get(x, []) for x in ids), 400,
         "every host at Rebooting, the bootstrap included")
    got = progress()
    for x in masters:
        # Joined: the bootstrap saw its node Ready
        assert got[x] == MASTER_STAGES + [("Joined", "")], (x, got[x])
    assert got[bootstrap] == BOOTSTRAP_STAGES + [("Rebooting", "")], got[bootstrap]
    # through installing: every host got the install step and ran it in-process, in dry run
    for ns, h in HOSTS.items():
        out = open(h["log"]).read()
        assert "install step: inprocess mode (--install-mode=auto)" in out, out[-3000:]
        assert "--dry-run --force-id %s" % DRY[ns] in out, out[-3000:]
    with open(standin_log) as f:
        runs = [json.loads(line)["argv"] for line in f if line.strip()]
    writes = [r for r in runs if r[0] in ("dry-installer", "coreos-installer")]
    assert writes and all(r[0] == "dry-installer" for r in writes), runs
    assert not [r for r in runs if r[0] == "shutdown"], runs
    # no unit touched (the log upload lists the bootkube unit), no pull secret, no manifests
    assert not [r for r in runs if r[0] == "systemctl" and r[1:2] != ["list-units"]], runs
    # the installer's own log file: its output also goes into the install step's reply, but the
    # agent logs that reply only when it sends it, and the service may tell it to exit first;
    # in dry run each simulated host logs to a file of its own
    blog = os.path.join(T, sorted(HOSTS)[0], "install", "var-log", "assisted-installer-%s.log" % bootstrap)
    bout = open(blog).read()
    assert "dry run: the cluster is the 3 hosts of %s" % cluster_hosts in bout, bout[-3000:]
    for x in ids:
        ns = [n for n, v in DRY.items() if v == x][0]
        assert os.path.exists(HOSTS[ns]["marker"]), "no fake reboot for %s" % x


stepslib.run_tests([(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")])
