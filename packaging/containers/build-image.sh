#!/bin/sh
# build-image.sh [--save FILE] BINARY TAG: builds cradle's container image
# (Containerfile here) from a static cradle executable, with podman (or
# buildah bud when podman is missing). The image holds:
#   /usr/bin/cradle                      BINARY, stripped
#   /usr/bin/{agent,installer,next_step_runner,inventory,free_addresses,
#            disk_speed_check,logs_sender,cp,
#            assisted-installer-controller}   links to it: the program
#                                        names of the upstream images
#   /tmp                                 1777, for the steps' temporary files
# --save FILE also writes the image as an OCI archive (podman save).
# Honours CONTAINERS_CONF/CONTAINERS_STORAGE_CONF, STRIP, SOURCE_DATE_EPOCH
# (file times in the layer and the image's creation time; default: the
# binary's modification time, so a rebuild of the same binary gives the
# same layer).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
save=""
if [ "${1:-}" = "--save" ]; then
        save=$2
        shift 2
fi
if [ $# -ne 2 ]; then
        echo "usage: build-image.sh [--save FILE] BINARY TAG" >&2
        exit 2
fi
binary=$1
tag=$2
[ -x "$binary" ] || { echo "build-image.sh: '$binary' is not an executable" >&2; exit 1; }
# FROM scratch has no libc: only a static executable runs there
if ! head -c 4 "$binary" | grep -q 'ELF' || readelf -lW "$binary" | grep -q 'program interpreter'; then
        echo "build-image.sh: '$binary' is not a static executable (build with -Dstatic=true)" >&2
        exit 1
fi
if command -v podman > /dev/null; then
        build="podman build"
elif command -v buildah > /dev/null; then
        build="buildah bud"
else
        echo "build-image.sh: neither podman nor buildah is installed" >&2
        exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/root
mkdir -p "$root/usr/bin" "$root/tmp"
chmod 1777 "$root/tmp"
"${STRIP:-strip}" -o "$root/usr/bin/cradle" "$binary"
chmod 0755 "$root/usr/bin/cradle"
for name in agent installer next_step_runner inventory free_addresses disk_speed_check logs_sender cp \
        assisted-installer-controller; do
        ln -s cradle "$root/usr/bin/$name"
done
epoch=${SOURCE_DATE_EPOCH:-$(stat -c %Y "$binary")}
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$root" -cf "$ctx/rootfs.tar" .
cp "$here/Containerfile" "$ctx/Containerfile"

version=$("$binary" --version | sed -n 's/^cradle \([^ ]*\) (git \([^)]*\)).*/\1 \2/p')
# shellcheck disable=SC2086
$build --quiet --timestamp "$epoch" \
        --label org.opencontainers.image.title=cradle \
        --label "org.opencontainers.image.version=${version% *}" \
        --label "org.opencontainers.image.revision=${version#* }" \
        --label "org.opencontainers.image.description=assisted-service agent, installer and controller (cradle, static)" \
        --tag "$tag" -f "$ctx/Containerfile" "$ctx" > /dev/null
if [ -n "$save" ]; then
        rm -f "$save"
        podman save --format oci-archive -o "$save" "$tag"
fi
echo "$tag"
