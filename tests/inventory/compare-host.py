#!/usr/bin/python3
"""`cradle inventory` against the tools on the machine it runs on: disks
against `lsblk -J -b -O`, the CPU count against nproc and sysfs,
interfaces and addresses against `ip -j addr`, routes against
`ip -j route`, memory against /proc/meminfo. Reads local state only."""
import json
import os
import subprocess
import sys

failures = []


def fail(msg):
    failures.append(msg)


def run(*argv):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True).stdout


inv = json.loads(run(os.environ["CRADLE_BINARY"], "inventory"))

# CPU: lscpu's "CPU(s)" is the present CPUs; nproc the usable ones
present = open("/sys/devices/system/cpu/present").read().strip()
count = 0
for part in present.split(","):
    a, _, b = part.partition("-")
    count += int(b or a) - int(a) + 1
if inv["cpu"].get("count") != count:
    fail(f"cpu.count {inv['cpu'].get('count')} != present CPUs {count}")
if int(run("nproc", "--all").strip()) != count:
    fail(f"nproc --all disagrees with sysfs present ({count})")
if inv["cpu"].get("architecture") != os.uname().machine:
    fail(f"cpu.architecture {inv['cpu'].get('architecture')} != {os.uname().machine}")

# memory
for line in open("/proc/meminfo"):
    if line.startswith("MemTotal:"):
        kb = int(line.split()[1])
if inv["memory"].get("usable_bytes") != kb * 1024:
    fail(f"memory.usable_bytes {inv['memory'].get('usable_bytes')} != MemTotal {kb * 1024}")
if inv["memory"].get("physical_bytes", 0) < kb * 1024:
    fail("memory.physical_bytes below MemTotal")

# disks: every whole disk lsblk shows, minus what the agent skips
lsblk = json.loads(run("lsblk", "-J", "-b", "-O"))["blockdevices"]
want = {}
for d in lsblk:
    name = d["kname"]
    if d["type"] not in ("disk", "rom", "mpath", "lvm", "raid1", "raid0", "raid5", "raid6", "raid10"):
        continue
    if name.startswith(("loop", "zram")):
        continue
    if name.startswith("dm-"):
        uuid = open(f"/sys/block/{name}/dm/uuid").read()
        if not uuid.startswith(("mpath-", "LVM-")):
            continue
    want[name] = d
got = {d["name"]: d for d in inv["disks"]}
if set(got) != set(want):
    fail(f"disks {sorted(got)} != lsblk {sorted(want)}")
for name, d in want.items():
    g = got.get(name)
    if not g:
        continue
    if g.get("size_bytes", 0) != d["size"]:
        fail(f"{name}: size_bytes {g.get('size_bytes')} != lsblk {d['size']}")
    if g.get("removable", False) != bool(d["rm"]):
        fail(f"{name}: removable {g.get('removable')} != lsblk {d['rm']}")
    if (g.get("hctl") or None) != d["hctl"]:
        fail(f"{name}: hctl {g.get('hctl')} != lsblk {d['hctl']}")
    if (g.get("vendor") or None) != (d["vendor"].strip() if d["vendor"] else None):
        fail(f"{name}: vendor {g.get('vendor')} != lsblk {d['vendor']}")
    if (g.get("model") or None) != d["model"] and d["model"] is not None:
        # lsblk prints the udev ID_MODEL with '_' turned back into spaces
        if (g.get("model") or "").replace("_", " ") != d["model"]:
            fail(f"{name}: model {g.get('model')} != lsblk {d['model']}")
    if (g.get("wwn") or None) != d["wwn"]:
        fail(f"{name}: wwn {g.get('wwn')} != lsblk {d['wwn']}")
    if g.get("path") != d["path"]:
        fail(f"{name}: path {g.get('path')} != lsblk {d['path']}")
    rota = d["rota"]
    if g.get("drive_type") in ("HDD", "SSD") and (g["drive_type"] == "HDD") != rota:
        fail(f"{name}: drive_type {g['drive_type']} but lsblk rota={rota}")

# interfaces and addresses
ip = json.loads(run("ip", "-j", "addr"))
names = [l["ifname"] for l in ip]
if [i["name"] for i in inv["interfaces"]] != names:
    fail(f"interfaces {[i['name'] for i in inv['interfaces']]} != ip {names}")
for l in ip:
    g = next((i for i in inv["interfaces"] if i["name"] == l["ifname"]), None)
    if not g:
        continue
    if g.get("mtu") != l["mtu"]:
        fail(f"{l['ifname']}: mtu {g.get('mtu')} != {l['mtu']}")
    mac = l.get("address")
    if mac and mac.strip("0:") and l.get("link_type") != "none":
        if g.get("mac_address") != mac:
            fail(f"{l['ifname']}: mac {g.get('mac_address')} != {mac}")
    flags = set(l["flags"])
    want_flags = [n for f, n in (("UP", "up"), ("BROADCAST", "broadcast"), ("LOOPBACK", "loopback"),
                                 ("POINTOPOINT", "pointtopoint"), ("MULTICAST", "multicast")) if f in flags]
    if [f for f in g["flags"] if f != "running"] != want_flags:
        fail(f"{l['ifname']}: flags {g['flags']} vs ip {l['flags']}")
    for fam, key in (("inet", "ipv4_addresses"), ("inet6", "ipv6_addresses")):
        addrs = [f"{a['local']}/{a['prefixlen']}" for a in l.get("addr_info", []) if a["family"] == fam
                 and not a["local"].startswith(("169.254.", "fe80:"))]
        if g[key] != addrs:
            fail(f"{l['ifname']}: {key} {g[key]} != ip {addrs}")

# routes of the main table, IPv4 then IPv6
routes = []
for fam, num in (("-4", 2), ("-6", 10)):
    for r in json.loads(run("ip", "-j", fam, "route", "show", "table", "main")):
        if "dev" not in r or r.get("type", "unicast") not in ("unicast",):
            continue
        dst = r["dst"]
        if dst == "default":
            dst = "0.0.0.0" if num == 2 else "::"
        routes.append((dst.split("/")[0], num, r.get("gateway", ""), r["dev"], r.get("metric", 0)))
got_routes = [(r["destination"], r["family"], r.get("gateway", ""), r["interface"], r.get("metric", 0))
              for r in inv["routes"]]
if got_routes != routes:
    fail(f"routes {got_routes} != ip {routes}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"ok: {len(got)} disks, {len(names)} interfaces, {len(routes)} routes, {count} CPUs agree")
