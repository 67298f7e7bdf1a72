#!/bin/sh
# The corpus through `cradle ignition validate`: every valid config passes
# without a finding, every invalid one gives exactly the lines of its
# .expected file (exit 1 when one of them is an error, 0 for warnings only),
# and the verbs answer usage errors with exit 2.
set -eu
cradle=${CRADLE_BINARY:?}
corpus=${CRADLE_SOURCE_ROOT:?}/tests/ignition/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
n=0

for f in "$corpus"/valid/*.ign; do
        n=$((n + 1))
        if ! "$cradle" ignition validate "$f" > "$tmp/out" 2> "$tmp/err"; then
                fail "$(basename "$f") is rejected:"; cat "$tmp/err"
        elif [ -s "$tmp/err" ]; then
                fail "$(basename "$f") has findings:"; cat "$tmp/err"
        fi
done

for f in "$corpus"/invalid/*.ign; do
        n=$((n + 1))
        name=$(basename "$f" .ign)
        expected="$corpus/invalid/$name.expected"
        [ -f "$expected" ] || { fail "$name has no .expected file"; continue; }
        set +e
        "$cradle" ignition validate "$f" > /dev/null 2> "$tmp/err"
        rc=$?
        set -e
        grep -v ': invalid Ignition config$' "$tmp/err" > "$tmp/got" || true
        if ! cmp -s "$expected" "$tmp/got"; then
                fail "$name: report differs"; diff -u "$expected" "$tmp/got" || true
        fi
        want=0
        grep -qv ': warning: ' "$expected" && want=1
        [ "$rc" = "$want" ] || fail "$name: exit status $rc, expected $want"
done

# usage errors exit 2, --help exits 0 for every verb
for verb in validate merge pointer apply extract translate; do
        "$cradle" ignition "$verb" --help > /dev/null 2>&1 || fail "ignition $verb --help"
done
set +e
"$cradle" ignition > /dev/null 2>&1; [ $? = 2 ] || fail "ignition without a verb: expected exit 2"
"$cradle" ignition nope > /dev/null 2>&1; [ $? = 2 ] || fail "unknown ignition verb: expected exit 2"
"$cradle" ignition validate > /dev/null 2>&1; [ $? = 2 ] || fail "validate without FILE: expected exit 2"
"$cradle" ignition merge "$corpus/valid/minimal-3.2.0.ign" > /dev/null 2>&1; [ $? = 2 ] || fail "merge with one file: expected exit 2"
"$cradle" ignition pointer -ca /dev/null > /dev/null 2>&1; [ $? = 2 ] || fail "pointer without -url: expected exit 2"
"$cradle" ignition apply "$corpus/valid/minimal-3.2.0.ign" > /dev/null 2>&1; [ $? = 2 ] || fail "apply without -root: expected exit 2"
"$cradle" ignition extract "$corpus/valid/minimal-3.2.0.ign" > /dev/null 2>&1; [ $? = 2 ] || fail "extract without PATH: expected exit 2"
"$cradle" ignition extract "$corpus/valid/minimal-3.2.0.ign" /nope > /dev/null 2>&1; [ $? = 1 ] || fail "extract of a missing file: expected exit 1"
set -e

# extract decodes what the installer needs (ExtractFromIgnition)
"$cradle" ignition extract "$corpus/valid/bootstrap-like-3.2.ign" /root/.docker/config.json > "$tmp/ps"
printf '%s' '{"auths":{"quay.io":{"auth":"Zm9vOmJhcg=="}}}' | cmp -s - "$tmp/ps" || fail "extract of the pull secret"
"$cradle" ignition extract "$corpus/valid/hive-readme-bmh-override.ign" /tmp/example > "$tmp/ex"
printf 'helpimtrappedinaswaggerspec' | cmp -s - "$tmp/ex" || fail "extract of the README example"
"$cradle" ignition extract "$corpus/valid/v3.1-proxy-headers-gzip.ign" /etc/compressed.txt > "$tmp/gz"
[ "$(wc -l < "$tmp/gz")" = 20 ] && [ "$(sort -u "$tmp/gz")" = "compressed payload" ] || fail "extract of a gzip file"
"$cradle" ignition extract "$corpus/valid/v3.0-all-sections.ign" /etc/motd > "$tmp/motd"
printf 'line one\nline two\n' | cmp -s - "$tmp/motd" || fail "extract of an append-only file"

echo "$n corpus files checked, $failed failures"
[ "$failed" = 0 ]
