#!/bin/sh
# build-image.sh [--save FILE] BINARY TAG: builds cradle-hub's container
# image (Containerfile here) from a static cradle-hub executable, with
# podman (or buildah bud when podman is missing). The image holds:
#   /usr/bin/cradle-hub                  BINARY, stripped (the entrypoint)
#   /etc/ssl/certs/ca-certificates.crt   the build machine's CA bundle
#                                        (CA_BUNDLE), the system trust that
#                                        --service-ca-file adds to
#   /etc/passwd, /etc/group              the user 65532 (nonroot), which
#                                        the image runs as
# --save FILE also writes the image as an OCI archive (podman save).
# Honours CONTAINERS_CONF/CONTAINERS_STORAGE_CONF, STRIP, CA_BUNDLE,
# SOURCE_DATE_EPOCH (file times in the layer and the image's creation
# time; default: the binary's modification time).
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
ca_bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -x "$binary" ] || { echo "build-image.sh: '$binary' is not an executable" >&2; exit 1; }
# FROM scratch has no libc: only a static executable runs there
if ! head -c 4 "$binary" | grep -q 'ELF' || readelf -lW "$binary" | grep -q 'program interpreter'; then
        echo "build-image.sh: '$binary' is not a static executable (build with -Dstatic=true)" >&2
        exit 1
fi
[ -r "$ca_bundle" ] || { echo "build-image.sh: no CA bundle at '$ca_bundle' (set CA_BUNDLE)" >&2; exit 1; }
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
mkdir -p "$root/usr/bin" "$root/etc/ssl/certs"
"${STRIP:-strip}" -o "$root/usr/bin/cradle-hub" "$binary"
chmod 0755 "$root/usr/bin/cradle-hub"
cp "$ca_bundle" "$root/etc/ssl/certs/ca-certificates.crt"
chmod 0644 "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
epoch=${SOURCE_DATE_EPOCH:-$(stat -c %Y "$binary")}
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$root" -cf "$ctx/rootfs.tar" .
cp "$here/Containerfile" "$ctx/Containerfile"

# "cradle-hub VERSION", and " (git REVISION)" when the build knew it
line=$("$binary" --version | head -n 1)
version=$(echo "$line" | sed -n 's/^cradle-hub \([^ ]*\).*/\1/p')
revision=$(echo "$line" | sed -n 's/.*(git \([^)]*\)).*/\1/p')
[ -n "$version" ] || { echo "build-image.sh: cannot read the version of '$binary'" >&2; exit 1; }
# shellcheck disable=SC2086
$build --quiet --timestamp "$epoch" \
        --label org.opencontainers.image.title=cradle-hub \
        --label "org.opencontainers.image.version=$version" \
        ${revision:+--label "org.opencontainers.image.revision=$revision"} \
        --label "org.opencontainers.image.description=assisted-service's Kubernetes controllers over its REST API (cradle-hub, static)" \
        --tag "$tag" -f "$ctx/Containerfile" "$ctx" > /dev/null
if [ -n "$save" ]; then
        rm -f "$save"
        podman save --format oci-archive -o "$save" "$tag"
fi
echo "$tag"
