#!/bin/sh
# `cradle ignition apply` against the real Ignition runtime (Debian's
# ignition package): the same config, applied to two roots prepared alike
# (pre-existing files to exercise overwrite rules), one by Ignition's
# fetch-offline + files stages with -platform file, one by cradle; then the
# two trees are compared entry by entry (type, mode, owner, contents, link
# targets, hard links) and the preset files line by line. Needs root (chown)
# and the ignition + policycoreutils packages; skips with the reason
# otherwise. Also checks that cradle refuses paths escaping the root.
set -eu
cradle=${CRADLE_BINARY:?}
ign=/usr/lib/dracut/modules.d/30ignition/ignition
[ "$(id -u)" = 0 ] || { echo "not root: skipping (Ignition's files stage chowns)"; exit 77; }
[ -x "$ign" ] || { echo "Ignition runtime not installed (apt-get install ignition): skipping"; exit 77; }
command -v setfiles > /dev/null || { echo "setfiles missing (apt-get install policycoreutils): skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

/usr/bin/python3 - "$tmp/config.ign" <<'PY'
import base64, gzip, hashlib, json, sys, urllib.parse
def b64(b): return "data:;base64," + base64.b64encode(b).decode()
def pct(s): return "data:," + urllib.parse.quote(s, safe="")
unit = "[Unit]\nDescription=Foo\n\n[Service]\nExecStart=/usr/bin/true\n\n[Install]\nWantedBy=multi-user.target\n"
cfg = {
 "ignition": {"version": "3.3.0"},
 "storage": {
  "directories": [{"path": "/var/lib/app", "mode": 488}, {"path": "/opt/deep/nested/dir"},
                  {"path": "/srv/owned", "user": {"id": 1234}, "group": {"id": 4321}}],
  "files": [
   {"path": "/etc/hostname", "overwrite": True, "contents": {"source": pct("node-1\n")}},
   {"path": "/etc/motd", "append": [{"source": pct("appended one\n")}, {"source": b64(b"appended two\n")}]},
   {"path": "/etc/b64", "contents": {"source": b64(bytes(range(256)))}},
   {"path": "/etc/pct", "mode": 384, "contents": {"source": pct("percent encoded: 100% & more\n")}},
   {"path": "/etc/gz", "contents": {"source": b64(gzip.compress(b"gzip payload\n" * 50, mtime=0)), "compression": "gzip"}},
   {"path": "/usr/local/bin/tool", "mode": 493, "user": {"id": 1234}, "group": {"id": 4321}, "contents": {"source": pct("#!/bin/sh\necho tool\n")}},
   {"path": "/etc/empty"},
   {"path": "/etc/checked", "contents": {"source": pct("hello\n"), "verification": {"hash": "sha512-" + hashlib.sha512(b"hello\n").hexdigest()}}},
   {"path": "/var/lib/app/config", "mode": 416, "contents": {"source": pct("key=value\n")}},
   {"path": "/etc/setuid-masked", "mode": 2541, "contents": {"source": "data:,x"}},
   {"path": "/etc/replace-dir", "overwrite": True, "contents": {"source": pct("was a directory\n")}}],
  "links": [
   {"path": "/etc/localtime", "target": "/usr/share/zoneinfo/UTC", "overwrite": True},
   {"path": "/var/lib/app/hard", "target": "/etc/hostname", "hard": True},
   {"path": "/opt/rel", "target": "../etc/motd"},
   {"path": "/etc/existing-link", "target": "/etc/hostname"}]},
 "systemd": {"units": [
   {"name": "foo.service", "enabled": True, "contents": unit, "dropins": [{"name": "10-env.conf", "contents": "[Service]\nEnvironment=A=1\n"}]},
   {"name": "bar.service", "mask": True},
   {"name": "baz.service", "dropins": [{"name": "empty.conf", "contents": ""}, {"name": "skipped.conf"}]},
   {"name": "qux.service", "mask": False},
   {"name": "multi.target", "enabled": True, "contents": "[Unit]\nDescription=Multi\n\n[Install]\nWantedBy=default.target\n"}]}}
json.dump(cfg, open(sys.argv[1], "w"), indent=1)
PY

prepare() {
        mkdir -p "$1/etc/selinux/targeted/contexts/files" "$1/etc/replace-dir/sub" "$1/etc/systemd/system" "$1/usr/share/zoneinfo"
        printf 'SELINUX=disabled\nSELINUXTYPE=targeted\n' > "$1/etc/selinux/config"
        : > "$1/etc/selinux/targeted/contexts/files/file_contexts"
        printf 'old-name\n' > "$1/etc/hostname"
        printf 'existing motd\n' > "$1/etc/motd"
        printf 'a file in the way\n' > "$1/etc/localtime"
        printf 'x\n' > "$1/etc/replace-dir/sub/file"
        ln -s /etc/hostname "$1/etc/existing-link"
        ln -s /dev/null "$1/etc/systemd/system/qux.service"
        printf 'UTC\n' > "$1/usr/share/zoneinfo/UTC"
}
prepare "$tmp/ignition-root"
prepare "$tmp/cradle-root"

# the real Ignition
export IGNITION_CONFIG_FILE="$tmp/config.ign"
for stage in fetch-offline files; do
        if ! "$ign" -platform file -stage "$stage" -root "$tmp/ignition-root" -config-cache "$tmp/cache.json" \
                -state-file "$tmp/state" -neednet "$tmp/neednet" -log-to-stdout > "$tmp/ignition-$stage.log" 2>&1; then
                cat "$tmp/ignition-$stage.log"
                fail "Ignition's $stage stage failed"
        fi
done
grep -q "Ignition finished successfully" "$tmp/ignition-files.log" || fail "Ignition did not finish"

# cradle
"$cradle" ignition apply -root "$tmp/cradle-root" "$tmp/config.ign" || fail "cradle ignition apply failed"

/usr/bin/python3 - "$tmp/ignition-root" "$tmp/cradle-root" <<'PY'
import os, stat, sys
a, b = sys.argv[1], sys.argv[2]
# Ignition's own records, not part of the config
skip = {"etc/.ignition-result.json", "etc/selinux", ".autorelabel"}
def tree(root):
    out, inodes = {}, {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            full = os.path.join(dirpath, n)
            rel = os.path.relpath(full, root)
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            st = os.lstat(full)
            e = {"type": stat.S_IFMT(st.st_mode), "mode": oct(stat.S_IMODE(st.st_mode)), "owner": (st.st_uid, st.st_gid)}
            if stat.S_ISLNK(st.st_mode):
                e["target"] = os.readlink(full)
            elif stat.S_ISREG(st.st_mode):
                data = open(full, "rb").read()
                if rel.endswith(".preset"):
                    data = sorted(data.decode().splitlines())  # Go map order
                e["data"] = data
                inodes.setdefault(st.st_ino, []).append(rel)
            out[rel] = e
    for group in inodes.values():
        for rel in group:
            out[rel]["hardlinks"] = sorted(group)
    return out
ta, tb = tree(a), tree(b)
bad = 0
for rel in sorted(set(ta) | set(tb)):
    if ta.get(rel) != tb.get(rel):
        print("differs: %s\n  ignition: %s\n  cradle:   %s" % (rel, ta.get(rel), tb.get(rel)))
        bad += 1
print("%d entries compared, %d differ" % (len(set(ta) | set(tb)), bad))
sys.exit(1 if bad else 0)
PY

# paths that escape the root are refused, and nothing lands outside
mkdir -p "$tmp/escape-root" "$tmp/outside"
ln -s "$tmp/outside" "$tmp/escape-root/abs"
ln -s ../outside "$tmp/escape-root/rel"
for p in /abs/x /rel/y; do
        printf '{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"%s","contents":{"source":"data:,pwned"}}]}}' "$p" > "$tmp/escape.ign"
        set +e
        "$cradle" ignition apply -root "$tmp/escape-root" "$tmp/escape.ign" 2> "$tmp/escape.err"
        rc=$?
        set -e
        [ "$rc" = 1 ] || fail "writing $p through a symlink out of the root: exit $rc"
        grep -q "outside the root" "$tmp/escape.err" || { cat "$tmp/escape.err"; fail "no clear refusal for $p"; }
done
[ -z "$(ls -A "$tmp/outside")" ] || fail "something was written outside the root"
echo ok
