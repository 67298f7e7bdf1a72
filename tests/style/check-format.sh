#!/bin/sh
# Every C file is formatted as .clang-format says.
set -eu
clang_format=$1
cd "${CRADLE_SOURCE_ROOT:?}"
files=$(git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^packaging/static/' || true)
[ -n "$files" ] || { echo "no files (not a git checkout?)"; exit 77; }
bad=""
for f in $files; do
        [ -f "$f" ] || continue
        if ! "$clang_format" --dry-run --Werror "$f" > /dev/null 2>&1; then
                bad="$bad $f"
        fi
done
if [ -n "$bad" ]; then
        echo "not formatted (run: clang-format -i$bad)"
        exit 1
fi
echo ok
