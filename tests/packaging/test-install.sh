#!/bin/sh
# `meson install --destdir`: the executable lands in bindir with a link per
# program name (packaging/meson.build), each link runs its verb, nothing
# else lands in bindir, and every verb of `cradle help` is either linked or
# meant to run as `cradle VERB` only. In a static build the installed
# executable is static.
set -eu
build=${CRADLE_BUILD_ROOT:?}
bindir=${CRADLE_INSTALL_BINDIR:?}
links=${CRADLE_PROGRAM_LINKS:?}
nolinks=${CRADLE_VERBS_WITHOUT_LINK:?}
fail() {
        echo "FAIL: $*" >&2
        exit 1
}
command -v meson >/dev/null || { echo "SKIP: meson is not on the PATH"; exit 77; }

tmp=$(mktemp -d /tmp/cradle-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --destdir "$tmp/root" --no-rebuild >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log"; fail "meson install --destdir failed"; }
b=$tmp/root$bindir
[ -f "$b/cradle" ] && [ ! -L "$b/cradle" ] && [ -x "$b/cradle" ] || fail "no executable $bindir/cradle"
"$b/cradle" --version | grep -q '^cradle ' || fail "the installed cradle does not run"

for l in $links; do
        [ -L "$b/$l" ] || fail "$bindir/$l is not a symlink"
        [ "$(readlink "$b/$l")" = cradle ] || fail "$bindir/$l points to $(readlink "$b/$l"), not cradle"
        "$b/$l" --help >"$tmp/help" 2>&1 || fail "$l --help through the installed link: $(cat "$tmp/help")"
        [ -s "$tmp/help" ] || fail "$l --help printed nothing"
done
others=${CRADLE_OTHER_PROGRAMS:-}
for p in $others; do
        [ -f "$b/$p" ] && [ -x "$b/$p" ] || fail "no executable $bindir/$p"
        "$b/$p" --help >/dev/null 2>&1 || fail "the installed $p does not run"
done
want=$(printf '%s\n' cradle $links $others | sort | tr '\n' ' ')
have=$(ls -A "$b" | sort | tr '\n' ' ')
[ "$have" = "$want" ] || fail "$bindir holds '$have', expected '$want'"

for verb in $("$b/cradle" help | sed -n 's/^  \([a-z_][a-z_-]*\) .*/\1/p'); do
        case " $links $nolinks " in
        *" $verb "*) ;;
        *) fail "verb '$verb' has no program link and is not listed as linkless (packaging/meson.build)" ;;
        esac
done

if [ "${CRADLE_STATIC:-0}" = 1 ]; then
        command -v readelf >/dev/null || fail "readelf is missing"
        if readelf -lW "$b/cradle" | grep -q INTERP || readelf -dW "$b/cradle" | grep -q '(NEEDED)'; then
                fail "the installed cradle of a static build is not static"
        fi
fi
echo "ok: $bindir/cradle and links: $links"
