#!/bin/sh
# with-image.sh COMMAND...: makes sure the discovery image of $CRADLE_BINARY
# exists (tests/vm/build-image.sh: built, or found in the cache), then runs
# COMMAND with CRADLE_VM_IMAGE naming it. The image is built here, in this
# machine's own network namespace, because debootstrap fetches Debian's
# packages from the archive as apt does; COMMAND (tests/helpers/in-netns.sh
# and the test) then runs the VMs in a namespace of its own, which has no
# way out. Exits 77 (skip), saying why, where no image can be made.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "VMs need root (debootstrap, tap devices)"
[ "${CRADLE_STATIC:-0}" = 1 ] || skip "the image carries the static cradle: a -Dstatic=true build runs this suite"
[ -n "${CRADLE_BINARY:-}" ] || skip "CRADLE_BINARY is not set"
for p in qemu-system-x86_64:qemu-system-x86 debootstrap:debootstrap cpio:cpio; do
        command -v "${p%%:*}" > /dev/null || skip "${p%%:*} is not installed (package ${p#*:}; tools/deps --test)"
done
start=$(date +%s)
image=$(bash "$here/build-image.sh" "$CRADLE_BINARY" | tail -n 1)
base_seconds=$(sed -n 's/^base-build-seconds //p' "$image/manifest")
echo "with-image: $image ($(($(date +%s) - start)) s; base built in $base_seconds s when it was made)"
export CRADLE_VM_IMAGE="$image"
exec "$@"
