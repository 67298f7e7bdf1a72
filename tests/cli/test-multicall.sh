#!/bin/sh
# One binary, many names: verbs through "cradle VERB" and through links named
# after the applet, --help and --version everywhere, usage errors exit 2.
set -eu
cradle=${CRADLE_BINARY:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cradle" --help > "$tmp/help"
grep -q '^  version ' "$tmp/help" || fail "cradle --help does not list the version verb"
"$cradle" help > "$tmp/help2"
cmp -s "$tmp/help" "$tmp/help2" || fail "cradle help differs from cradle --help"

"$cradle" --version | grep -Eq '^cradle [0-9]+\.[0-9]+\.[0-9]+ \(git [^)]+\)$' || fail "cradle --version"
"$cradle" version | grep -q '^cradle ' || fail "cradle version"

set +e
"$cradle" no-such-verb 2> "$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "unknown verb exits $rc, expected 2"
grep -q "unknown verb 'no-such-verb'" "$tmp/err" || fail "unknown verb message"

set +e
"$cradle" > /dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "no verb exits $rc, expected 2"

# every verb answers --help with 0 and a usage text, both as a verb and by link name
for verb in $("$cradle" help | sed -n 's/^  \([a-z_][a-z_-]*\) .*/\1/p'); do
        [ "$verb" = help ] && continue
        out=$("$cradle" "$verb" --help 2>&1) || fail "cradle $verb --help failed"
        [ -n "$out" ] || fail "cradle $verb --help printed nothing"
        ln -sf "$cradle" "$tmp/$verb"
        "$tmp/$verb" --help > /dev/null 2>&1 || fail "$verb --help through a link failed"
done

# an unknown program name is refused, as the Go agent refuses one
ln -sf "$cradle" "$tmp/not-an-applet"
set +e
"$tmp/not-an-applet" 2> "$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "unknown binary name exits $rc, expected 1"
grep -q "unknown binary name not-an-applet" "$tmp/err" || fail "unknown binary name message"
echo ok
