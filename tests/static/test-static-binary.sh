#!/bin/bash
# The executable that ships, on its own: is it one static executable, and
# does it work in a root that holds nothing but itself and a few files of
# /etc (no libc, no NSS modules, no CA bundle, no openssl.cnf)? In that root:
#   - `kube get` against the test kube-apiserver over TLS, the server's name
#     resolved by c-ares from the root's /etc/hosts, then from a DNS server
#     of the test's own that the root's /etc/resolv.conf names; the same
#     against a kubeconfig naming another CA must fail verification;
#   - a warning logged to the journal: a stand-in journald socket in the
#     root must receive it (sd-journal's native protocol);
#   - `inventory` with /sys, /proc, /dev and /run/udev bind-mounted must
#     find the disks (libblkid, libudev), interfaces and CPUs that the same
#     binary finds outside the root.
# Run inside a network namespace (tests/helpers/in-netns.sh): the DNS
# server takes 127.0.0.2:53 of the namespace's own loopback.
#
# With CRADLE_TEST_KUBECONFIG (a real cluster; certificates embedded as
# *-data), the kube part runs against that cluster with the machine's own
# /etc/hosts and /etc/resolv.conf; the name-resolution cases that need the
# test server's certificate names are left out (said so on stdout).
set -euo pipefail

cradle=${CRADLE_BINARY:?}
src=${CRADLE_SOURCE_ROOT:?}
py=/usr/bin/python3

skip() {
        echo "SKIP: $*"
        exit 77
}
fail() {
        echo "FAIL: $*" >&2
        exit 1
}

[ "$(id -u)" = 0 ] || skip "needs root (chroot, bind mounts)"
for t in readelf openssl unshare chroot mount "$py"; do
        command -v "$t" >/dev/null || skip "'$t' is not installed"
done
"$py" -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (the test kube-apiserver needs it)"

# ---- one static executable
if readelf -lW "$cradle" | grep -q 'INTERP'; then
        fail "$cradle has a program interpreter: it is not static"
fi
if readelf -dW "$cradle" | grep -q '(NEEDED)'; then
        fail "$cradle needs shared libraries: $(readelf -dW "$cradle" | grep '(NEEDED)' | tr -s ' ')"
fi
echo "ok   static: no program interpreter, no shared libraries"

tmp=$(mktemp -d /tmp/cradle-static-binary.XXXXXX)
pids=()
cleanup() {
        local p
        for p in "${pids[@]}"; do
                kill "$p" 2>/dev/null || true
        done
        wait 2>/dev/null || true
        rm -rf "$tmp"
}
trap cleanup EXIT

# ---- the root
R=$tmp/root
mkdir -p "$R/etc" "$R/sys" "$R/proc" "$R/dev" "$R/run/udev" "$R/run/systemd/journal" "$R/tmp"
cp "$cradle" "$R/cradle"

if [ -n "${CRADLE_TEST_KUBECONFIG:-}" ]; then
        real=1
        cp /etc/hosts /etc/resolv.conf "$R/etc/"
        cp "$CRADLE_TEST_KUBECONFIG" "$R/kubeconfig"
else
        real=0
        # A name only the root's /etc/hosts knows and one only its DNS server
        # knows, both on the test server's certificate
        # (DNS:kubernetes.default.svc and DNS:kubernetes.default).
        printf '127.0.0.1 localhost\n127.0.0.1 kubernetes.default.svc\n' >"$R/etc/hosts"
        printf 'nameserver 127.0.0.2\noptions timeout:2 attempts:2\n' >"$R/etc/resolv.conf"
        "$py" "$src/tests/kubeapi/kubeapi.py" --state-dir "$tmp/kube" --port-file "$tmp/kube-port" \
                >"$tmp/kubeapi.log" 2>&1 &
        pids+=($!)
        : >"$tmp/dns.log"
        "$py" "$src/packaging/static/dns-server.py" 127.0.0.2 kubernetes.default 127.0.0.1 "$tmp/dns.log" \
                >"$tmp/dns-server.out" 2>&1 &
        pids+=($!)
        for _ in $(seq 300); do
                [ -s "$tmp/kube-port" ] && grep -q ready "$tmp/dns-server.out" && break
                sleep 0.2
        done
        [ -s "$tmp/kube-port" ] || fail "the test kube-apiserver did not start: $(tail -n 20 "$tmp/kubeapi.log")"
        grep -q ready "$tmp/dns-server.out" || fail "the test DNS server did not start: $(cat "$tmp/dns-server.out")"
        cp "$tmp/kube/kubeconfig" "$R/kubeconfig"
fi

# kubeconfig variants: the server under another name, or another CA
# kubeconfig_with IN OUT [server URL|-] [CA PEM file|-]
kubeconfig_with() {
        "$py" - "$@" <<'EOF'
import base64, sys, urllib.parse, yaml
src, dst, server, ca = sys.argv[1:5]
kc = yaml.safe_load(open(src))
for c in kc["clusters"]:
    cl = c["cluster"]
    if server != "-":
        u = urllib.parse.urlsplit(cl["server"])
        cl["server"] = "https://%s:%d" % (server, u.port or 443)
    if ca != "-":
        cl.pop("certificate-authority", None)
        cl.pop("insecure-skip-tls-verify", None)
        cl["certificate-authority-data"] = base64.b64encode(open(ca, "rb").read()).decode()
yaml.safe_dump(kc, open(dst, "w"))
EOF
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=some other CA" \
        -keyout "$tmp/other-ca.key" -out "$tmp/other-ca.pem" 2>/dev/null
kubeconfig_with "$R/kubeconfig" "$R/kubeconfig-other-ca" - "$tmp/other-ca.pem"
if [ "$real" = 0 ]; then
        kubeconfig_with "$R/kubeconfig" "$R/kubeconfig-hosts" kubernetes.default.svc -
        kubeconfig_with "$R/kubeconfig" "$R/kubeconfig-dns" kubernetes.default -
fi

# ---- a stand-in journald: the datagram sd_journal_sendv() sends
"$py" - "$R/run/systemd/journal/socket" "$tmp/journal.bin" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(300)
open(sys.argv[2], "wb").write(s.recv(65536))
EOF
pids+=($!)
for _ in $(seq 50); do
        [ -S "$R/run/systemd/journal/socket" ] && break
        sleep 0.1
done

# ---- in the root
# in_root CMD...: run CMD chrooted into R with /sys, /proc, /dev and
# /run/udev bind-mounted in a private mount namespace.
in_root() {
        unshare -m --propagation private sh -c '
                r=$1
                shift
                for d in sys proc dev run/udev; do
                        [ -d "/$d" ] && mount --rbind "/$d" "$r/$d"
                done
                exec chroot "$r" "$@"
        ' sh "$R" "$@"
}

out=$(in_root /cradle --version) || fail "cradle --version in the root"
echo "ok   runs alone: $out"

# kube_get KUBECONFIG: the namespaces by name, through the root's resolver and TLS
kube_get() {
        in_root /cradle kube get namespaces --kubeconfig "$1" -o name 2>&1
}
out=$(kube_get /kubeconfig) || fail "kube get over TLS: $out"
grep -qx 'namespace/default' <<<"$out" || fail "kube get over TLS did not list namespace/default: $out"
echo "ok   TLS: kube get namespaces -> $(wc -l <<<"$out") namespaces"
if [ "$real" = 0 ]; then
        out=$(kube_get /kubeconfig-hosts) || fail "kube get, server named in /etc/hosts: $out"
        grep -qx 'namespace/default' <<<"$out" || fail "kube get via /etc/hosts: $out"
        echo "ok   c-ares, /etc/hosts: https://kubernetes.default.svc"
        out=$(kube_get /kubeconfig-dns) || fail "kube get, server named by the DNS server: $out"
        grep -qx 'namespace/default' <<<"$out" || fail "kube get via DNS: $out"
        grep -qx 'kubernetes.default 1' "$tmp/dns.log" || fail "no A query for kubernetes.default reached the DNS server"
        echo "ok   c-ares, DNS: https://kubernetes.default ($(sort -u "$tmp/dns.log" | tr '\n' ' '))"
else
        echo "info real cluster: the /etc/hosts and DNS server cases need the test server's names, left out"
fi
if out=$(kube_get /kubeconfig-other-ca); then
        fail "kube get trusted a server its CA did not sign: $out"
fi
grep -qi 'certificate' <<<"$out" || fail "kube get against another CA failed, but not on the certificate: $out"
echo "ok   TLS verification: another CA is refused ($(head -n 1 <<<"$out"))"

# free_addresses without its argument logs a warning (the Go program's own)
CRADLE_LOG_TARGET=journal in_root /cradle free_addresses >/dev/null 2>&1 || true
for _ in $(seq 100); do
        [ -s "$tmp/journal.bin" ] && break
        sleep 0.1
done
[ -s "$tmp/journal.bin" ] || fail "the stand-in journald received nothing"
grep -aq 'MESSAGE=Expecting exactly single argument to free_addresses' "$tmp/journal.bin" ||
        fail "the journal datagram lacks the warning: $(tr '\n' ' ' <"$tmp/journal.bin")"
echo "ok   journal: $(tr '\n' ' ' <"$tmp/journal.bin" | cut -c1-200)"

in_root /cradle inventory >"$tmp/inventory-root.json" 2>"$tmp/inventory-root.err" ||
        fail "inventory in the root: $(cat "$tmp/inventory-root.err")"
"$cradle" inventory >"$tmp/inventory-host.json" 2>"$tmp/inventory-host.err" ||
        fail "inventory outside the root: $(cat "$tmp/inventory-host.err")"
"$py" - "$tmp/inventory-root.json" "$tmp/inventory-host.json" <<'EOF' || fail "inventory differs in the root"
import json, sys
root, host = (json.load(open(p)) for p in sys.argv[1:3])
def view(d):
    return {
        "disks": sorted((x.get("name"), x.get("size_bytes"), x.get("drive_type"), x.get("serial"))
                        for x in d.get("disks", [])),
        "interfaces": sorted(x.get("name") for x in d.get("interfaces", [])),
        "cpus": d.get("cpu", {}).get("count"),
        "memory": d.get("memory", {}).get("physical_bytes"),
    }
a, b = view(root), view(host)
for k in a:
    if a[k] != b[k]:
        sys.exit("%s: in the root %r, outside %r" % (k, a[k], b[k]))
if not a["disks"] or not a["cpus"]:
    sys.exit("no disks or no CPUs found: %r" % a)
print("ok   inventory (libblkid, libudev): disks %s, interfaces %s, %d CPUs, as outside the root"
      % ([d[0] for d in a["disks"]], a["interfaces"], a["cpus"]))
EOF
echo "all passed"
