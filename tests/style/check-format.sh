#!/bin/sh
# Every C file is formatted as .clang-format says.
set -eu
clang_format=$1
cd "${CRADLE_SOURCE_ROOT:?}"
files=$(git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^packaging/static/' || true)
[ -n "$files" ] || { echo "no files (not a git checkout?)"; exit 77; }
existing=""
for f in $files; do [ -f "$f" ] && existing="$existing $f"; done
# one process for all files; on failure name the culprits
# shellcheck disable=SC2086
if ! "$clang_format" --dry-run --Werror $existing > /dev/null 2>&1; then
        bad=""
        for f in $existing; do
                "$clang_format" --dry-run --Werror "$f" > /dev/null 2>&1 || bad="$bad $f"
        done
        echo "not formatted (run: clang-format -i$bad)"
        exit 1
fi
echo ok
