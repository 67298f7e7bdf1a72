#!/bin/sh
# Functions cradle does not use (../shared/STYLE.md): unbounded copies and
# formats, unchecked number parsing, shell strings, non-reentrant helpers.
set -eu
cd "${CRADLE_SOURCE_ROOT:?}"
pattern='\b(atoi|atol|atoll|strcpy|strcat|sprintf|vsprintf|gets|system|popen|strtok|tmpnam|mktemp)[[:space:]]*\('
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.c' -o -name '*.h')
found=$(printf '%s\n' $files | grep -v '^tests/fuzz/corpus/' | xargs grep -nE "$pattern" 2>/dev/null | grep -v 'banned-ok' || true)
if [ -n "$found" ]; then
        echo "banned functions used (see ../shared/STYLE.md; mark a justified use with /* banned-ok: why */):"
        echo "$found"
        exit 1
fi
echo ok
