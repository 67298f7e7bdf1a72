#!/bin/bash
# Prove the static build: build probe.c with this folder's meson.build in a
# throw-away meson project, check the result is one static executable, and
# run it in a root that holds nothing but the binary, /etc/hosts,
# /etc/resolv.conf, a CA file, a file system image and /sys (bind-mounted),
# against an HTTPS server on 127.0.0.1 and a stand-in journald socket.
#
#   packaging/static/check.sh [WORKDIR]
#
# WORKDIR (default: a new temporary directory, removed at the end) keeps the
# meson build directory, so a second run reuses the built dependencies; set
# CRADLE_STATIC_DEPS to share them with other build directories.
# Runs as root (chroot, mounts). Exits 77 when it cannot run here.

set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
fail() {
        echo "check: FAIL: $*" >&2
        exit 1
}
skip() {
        echo "check: SKIP: $*" >&2
        exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root (chroot, bind mounts)"
for t in meson ninja openssl mkfs.ext4 unshare chroot file /usr/bin/python3; do
        command -v "$t" >/dev/null || skip "'$t' is not installed"
done

if [ $# -ge 1 ]; then
        WORK=$1
        mkdir -p "$WORK"
        WORK=$(cd "$WORK" && pwd)
        KEEP=1
else
        WORK=$(mktemp -d /tmp/cradle-static-check.XXXXXX)
        KEEP=0
fi
SERVER_PID=
JOURNAL_PID=
DNS_PID=
cleanup() {
        [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
        [ -n "$DNS_PID" ] && kill "$DNS_PID" 2>/dev/null || true
        [ -n "$JOURNAL_PID" ] && kill "$JOURNAL_PID" 2>/dev/null || true
        if [ "$KEEP" = 0 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# ---- a meson project that uses packaging/static the way the main tree does
PROJ=$WORK/proj
mkdir -p "$PROJ/packaging"
ln -sfn "$HERE" "$PROJ/packaging/static"
cat >"$PROJ/meson.build" <<'EOF'
project('static-probe', 'c', default_options : ['c_std=gnu11', 'warning_level=2', 'buildtype=minsize'])
subdir('packaging/static')
executable('probe', 'packaging/static/probe.c',
        dependencies : static_deps, link_args : static_link_args)
EOF
B=$WORK/build
if [ ! -f "$B/build.ninja" ]; then
        T0=$(date +%s)
        meson setup "$B" "$PROJ" >"$WORK/setup.log" 2>&1 || {
                tail -n 40 "$WORK/setup.log"
                fail "meson setup failed"
        }
        echo "check: meson setup (with the dependency build) took $(($(date +%s) - T0)) s"
fi
ninja -C "$B" -v >"$WORK/ninja.log" 2>&1 || {
        tail -n 40 "$WORK/ninja.log"
        fail "build failed"
}
P=$B/probe

# ---- is it one static executable?
file "$P" | tee /dev/stderr | grep -q "statically linked" || fail "'file' does not call it statically linked"
LDD=$(ldd "$P" 2>&1 || true)
echo "check: ldd: $LDD"
[[ "$LDD" == *"not a dynamic executable"* ]] || fail "ldd finds it dynamic"
grep -h "statically linked applications" "$WORK/ninja.log" | sed 's/^.*warning: /check: link warning: /' | sort -u || true
strip -o "$WORK/probe.stripped" "$P"
echo "check: probe stripped size: $(stat -c %s "$WORK/probe.stripped") bytes"

# ---- the root: nothing but what the probe needs
R=$WORK/root
rm -rf "$R"
mkdir -p "$R/etc" "$R/sys" "$R/tmp" "$R/run/systemd/journal"
cp "$WORK/probe.stripped" "$R/probe"
# A name only this root's /etc/hosts knows, and one only its DNS server
# knows: curl must resolve both through c-ares reading those files (the
# DNS server is ours, on loopback: no query leaves the machine).
printf '127.0.0.1 localhost\n::1 localhost\n127.0.0.1 cradle-probe.test\n' >"$R/etc/hosts"
DNS_ADDR=127.0.0.2
printf 'nameserver %s\noptions timeout:2 attempts:2\n' "$DNS_ADDR" >"$R/etc/resolv.conf"

# ---- test CA and server certificate
C=$WORK/ca
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=cradle probe CA" -keyout "$C/ca.key" -out "$C/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=cradle-probe.test" \
        -keyout "$C/srv.key" -out "$C/srv.csr" 2>/dev/null
printf 'subjectAltName=DNS:cradle-probe.test,DNS:dns-only.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$C/ext"
openssl x509 -req -in "$C/srv.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
        -days 2 -extfile "$C/ext" -out "$C/srv.pem" 2>/dev/null
cp "$C/ca.pem" "$R/ca.pem"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=some other CA" -keyout "$C/other.key" -out "$R/other-ca.pem" 2>/dev/null

# ---- HTTPS server on 127.0.0.1 (openssl s_server -WWW serves files from its cwd)
mkdir -p "$WORK/www"
echo '{"probe": true}' >"$WORK/www/probe.json"
PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$WORK/www" && exec openssl s_server -quiet -accept "127.0.0.1:$PORT" \
        -cert "$C/srv.pem" -key "$C/srv.key" -WWW) >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

# ---- the DNS server the root's resolv.conf names
: >"$WORK/dns.log"
/usr/bin/python3 "$HERE/dns-server.py" "$DNS_ADDR" dns-only.test 127.0.0.1 "$WORK/dns.log" \
        >"$WORK/dns-server.out" 2>&1 &
DNS_PID=$!

# ---- a stand-in journald: receives the datagram sd_journal_send() sends
TOKEN=probe-$$-$RANDOM
/usr/bin/python3 - "$R/run/systemd/journal/socket" "$WORK/journal.bin" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)
data = s.recv(65536)
open(sys.argv[2], "wb").write(data)
EOF
JOURNAL_PID=$!

# s_server, the DNS server and the journal socket take a moment to appear.
for _ in $(seq 50); do
        [ -S "$R/run/systemd/journal/socket" ] && grep -q ready "$WORK/dns-server.out" &&
                /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null &&
                break
        sleep 0.2
done

# ---- the file system image blkid must recognise
truncate -s 8M "$R/fs.img"
mkfs.ext4 -q -F "$R/fs.img"

echo "check: running the probe in $R (contents: $(cd "$R" && find . -path ./sys -prune -o -type f -print -o -type s -print | sort | tr '\n' ' '))"
set +e
unshare -m --propagation private sh -c '
        mount --rbind /sys "$1/sys" || exit 3
        exec chroot "$1" /probe "https://cradle-probe.test:$2/probe.json" \
                "https://dns-only.test:$2/probe.json" /ca.pem /other-ca.pem /fs.img ext4 "$3"
' sh "$R" "$PORT" "$TOKEN" | tee "$WORK/probe.out"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || fail "probe exited $rc"

wait "$JOURNAL_PID" || fail "the stand-in journald received nothing"
JOURNAL_PID=
grep -aq "CRADLE_PROBE=$TOKEN" "$WORK/journal.bin" || fail "the journal datagram lacks CRADLE_PROBE=$TOKEN"
echo "check: journald stand-in received: $(tr '\n' ' ' <"$WORK/journal.bin")"
echo "check: DNS queries the probe sent: $(sort -u "$WORK/dns.log" | tr '\n' ' ')"
grep -q "^dns-only.test 1$" "$WORK/dns.log" || fail "no A query for dns-only.test reached the DNS server"
echo "check: all passed"
