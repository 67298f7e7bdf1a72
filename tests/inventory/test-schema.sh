#!/bin/sh
# Every key and enum string of `cradle inventory` (on this machine, also in
# dry-run mode) and of every umockdev case's expected JSON, against the
# Inventory definitions of assisted-service's swagger.yaml.
set -eu
src=${CRADLE_SOURCE_ROOT:?}
# the tree's vendored copy of the reference (tests/reference), else ../shared's
swagger=${CRADLE_REFERENCE:-$src/tests/reference}/assisted-service/swagger.yaml
[ -f "$swagger" ] || swagger=$src/../shared/reference/assisted-service/swagger.yaml
[ -f "$swagger" ] || { echo "swagger.yaml not found (tests/reference, ../shared/reference): skipping"; exit 77; }
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "python3-yaml missing: skipping"; exit 77; }
check=$src/tests/inventory/check-schema.py
u=$src/tests/inventory/umockdev
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 "$check" "$swagger"
"${CRADLE_BINARY:?}" inventory --dry-run --force-mac 02:00:00:00:00:01 --forced-ipv4 198.51.100.7/24 \
        --force-hostname fake-1 > "$tmp/dry.json"
/usr/bin/python3 "$check" "$swagger" "$tmp/dry.json"
for f in "$u"/*.expected.json; do
        case $f in
        */gpu*.json) def=gpu ;;
        */nic.expected.json) def=interface ;;
        *) def=disk ;;
        esac
        /usr/bin/python3 "$check" "$swagger" --definition "$def" "$f"
done

# a schema check that cannot fail proves nothing: a wrong key must fail
echo '{"disks":[{"drive_typ":"HDD"}]}' > "$tmp/bad.json"
if /usr/bin/python3 "$check" "$swagger" "$tmp/bad.json" > /dev/null; then
        echo "FAIL: an unknown key passed the schema check"; exit 1
fi
echo '{"tpm_version":"3.0"}' > "$tmp/bad2.json"
if /usr/bin/python3 "$check" "$swagger" "$tmp/bad2.json" > /dev/null; then
        echo "FAIL: a wrong enum value passed the schema check"; exit 1
fi
echo ok
