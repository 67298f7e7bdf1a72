#!/bin/sh
# cradle's cp (main/cp.c), the agent image's "cp /usr/bin/agent /hostbin":
# a link is followed, a directory target takes the source's name, the mode
# is the source's less the umask, a running executable is replaced (not
# rewritten: coreutils' cp fails there with ETXTBSY), and the errors of
# coreutils' cp with exit status 1.
set -eu
cradle=${CRADLE_BINARY:?}
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2> /dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ln -s "$cradle" "$tmp/cp"
cp=$tmp/cp

mkdir "$tmp/bin" "$tmp/hostbin"
printf 'payload\n' > "$tmp/bin/real"
chmod 0750 "$tmp/bin/real"
ln -s real "$tmp/bin/agent"

# the image's line: a link as the source, a directory as the target
(umask 022 && "$cp" "$tmp/bin/agent" "$tmp/hostbin") || fail "cp into a directory"
[ -f "$tmp/hostbin/agent" ] && [ ! -L "$tmp/hostbin/agent" ] || fail "the copy is not a regular file"
cmp -s "$tmp/bin/real" "$tmp/hostbin/agent" || fail "the copy differs"
[ "$(stat -c %a "$tmp/hostbin/agent")" = 750 ] || fail "mode $(stat -c %a "$tmp/hostbin/agent"), expected 750"
(umask 077 && "$cp" "$tmp/bin/agent" "$tmp/hostbin/other") || fail "cp to a file name"
[ "$(stat -c %a "$tmp/hostbin/other")" = 700 ] || fail "the umask is not applied"
"$cp" -- "$tmp/bin/real" "$tmp/bin/agent" "$tmp/hostbin/" || fail "two sources into a directory"
[ -f "$tmp/hostbin/real" ] || fail "the second of two sources"
ls "$tmp/hostbin" | grep -q cradle && fail "a temporary file was left behind"

# over a running executable: replaced, the running program undisturbed
sleep_copy=$tmp/hostbin/sleep
cp "$(command -v sleep)" "$sleep_copy"
"$sleep_copy" 30 &
pid=$!
sleep 0.2
"$cp" "$tmp/bin/real" "$sleep_copy" || fail "cp over a running executable"
cmp -s "$tmp/bin/real" "$sleep_copy" || fail "the running executable was not replaced"
kill -0 "$pid" || fail "the running program died"
kill "$pid"
pid=""

expect() {
        want_rc=$1 want_msg=$2
        shift 2
        set +e
        "$cp" "$@" > "$tmp/out" 2> "$tmp/err"
        rc=$?
        set -e
        [ "$rc" = "$want_rc" ] || fail "cp $*: exit $rc, expected $want_rc ($(cat "$tmp/err"))"
        grep -qF -e "$want_msg" "$tmp/err" || fail "cp $*: '$(cat "$tmp/err")' lacks '$want_msg'"
}
expect 1 "missing file operand"
expect 1 "missing destination file operand after '$tmp/bin/real'" "$tmp/bin/real"
expect 1 "cannot stat '$tmp/none': No such file or directory" "$tmp/none" "$tmp/hostbin"
expect 1 "-r not specified; omitting directory '$tmp/bin'" "$tmp/bin" "$tmp/hostbin"
expect 1 "are the same file" "$tmp/bin/real" "$tmp/bin/agent"
expect 1 "target '$tmp/bin/real' is not a directory" "$tmp/bin/real" "$tmp/bin/agent" "$tmp/bin/real"
expect 1 "option '-p' is not supported" -p "$tmp/bin/real" "$tmp/x"
expect 1 "cannot create regular file '$tmp/no/dir/x'" "$tmp/bin/real" "$tmp/no/dir/x"
mkdir -p "$tmp/d3/real"
expect 1 "cannot overwrite directory '$tmp/d3/real' with non-directory" "$tmp/bin/real" "$tmp/d3"
# one failed source does not stop the others
mkdir "$tmp/d2"
expect 1 "cannot stat '$tmp/none'" "$tmp/none" "$tmp/bin/real" "$tmp/d2"
[ -f "$tmp/d2/real" ] || fail "the good source after a bad one was not copied"

"$cp" --help | grep -q "^Usage: cp SOURCE DEST" || fail "cp --help"
"$cradle" cp --help > /dev/null || fail "cradle cp --help"
echo ok
