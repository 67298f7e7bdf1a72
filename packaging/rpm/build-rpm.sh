#!/bin/sh
# build-rpm.sh BUILDDIR OUTDIR: the RPM of a built -Dstatic=true meson build
# directory (cradle.spec here): "meson install --destdir" into a staging
# tree, then "rpmbuild -bb" with the build's prefix and version. Writes
# OUTDIR/ARCH/cradle-VERSION-1.ARCH.rpm and prints its path. A package for
# RHEL/Fedora wants a build configured with --prefix=/usr.
set -eu
if [ $# -ne 2 ]; then
        echo "usage: build-rpm.sh BUILDDIR OUTDIR" >&2
        exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
builddir=$(cd "$1" && pwd)
mkdir -p "$2"
outdir=$(cd "$2" && pwd)
command -v rpmbuild > /dev/null || { echo "build-rpm.sh: rpmbuild is not installed (Debian: rpm)" >&2; exit 1; }

option() {
        meson introspect --buildoptions "$builddir" |
                python3 -c 'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]][0])' "$1"
}
if [ "$(option static)" != True ]; then
        echo "build-rpm.sh: $builddir is not a -Dstatic=true build: the package ships the static executable" >&2
        exit 1
fi
# rpm's directories are meson's: the spec's %files then name what
# "meson install" installed, whatever the prefix and the dirs
prefix=$(option prefix)
unitdir=$(option systemdsystemunitdir)
[ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
dir() {
        case $1 in
        /*) echo "$1" ;;
        *) echo "$prefix/$1" ;;
        esac
}
version=$(meson introspect --projectinfo "$builddir" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$builddir" --destdir "$stage/root" --no-rebuild --strip --quiet > /dev/null
rpmbuild -bb \
        --define "_topdir $stage/top" \
        --define "_rpmdir $outdir" \
        --define "_prefix $prefix" \
        --define "_exec_prefix $prefix" \
        --define "_bindir $(dir "$(option bindir)")" \
        --define "_datadir $(dir "$(option datadir)")" \
        --define "_mandir $(dir "$(option mandir)")" \
        --define "_unitdir $unitdir" \
        --define "_presetdir $prefix/lib/systemd/system-preset" \
        --define "cradle_destdir $stage/root" \
        --define "cradle_version $version" \
        "$here/cradle.spec" > "$stage/rpmbuild.log" 2>&1 || { cat "$stage/rpmbuild.log" >&2; exit 1; }
sed -n 's/^Wrote: //p' "$stage/rpmbuild.log"
