#!/bin/sh
# run-fuzzers.sh SECONDS [TARGET...]: builds each fuzz target with clang's
# libFuzzer (+ASan/UBSan) and fuzzes it for SECONDS, starting from the
# committed corpus. New crashers land in tests/fuzz/artifacts/ (git-ignored):
# commit them into the corpus once fixed. Exits 77 when clang is missing.
set -eu
seconds=${1:-30}
shift || true
src=${CRADLE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
clang=$(command -v clang || command -v clang-14 || true)
[ -n "$clang" ] || { echo "clang not installed: skipping libFuzzer runs"; exit 77; }
out=${CRADLE_BUILD_ROOT:-$src/build}/fuzz-clang
mkdir -p "$out" "$src/tests/fuzz/artifacts"
targets=${*:-$(cd "$src/tests/fuzz" && ls fuzz-*.c | grep -v fuzz-replay | sed 's/\.c$//')}
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -std=gnu11 -I$src/lib -I$src -I$src/hub -I$src/hub/core -I$src/hub/controllers -I$src/tests/fuzz -I${CRADLE_BUILD_ROOT:-$src/build}"
libs=$(pkg-config --cflags --libs libcurl json-c blkid libudev libsystemd openssl libcares zlib yaml-0.1)
for t in $targets; do
        extra=$(sed -n 's|.*fuzz-sources:\(.*\)\*/.*|\1|p' "$src/tests/fuzz/$t.c" | head -n1)
        sources=""
        for pattern in $extra; do sources="$sources $(cd "$src" && ls $pattern)"; done
        (cd "$src" && "$clang" $cflags -o "$out/$t" "tests/fuzz/$t.c" lib/*.c lib/kube/*.c lib/assisted/*.c $sources $libs -lm -lpthread)
        corpus="$src/tests/fuzz/corpus/${t#fuzz-}"
        work="$out/$t-corpus"
        mkdir -p "$work"
        echo "fuzzing $t for ${seconds}s"
        CRADLE_LOG_TARGET=null "$out/$t" -error_exitcode=1 -max_total_time="$seconds" -artifact_prefix="$src/tests/fuzz/artifacts/$t-" \
                -print_final_stats=1 "$work" "$corpus"
done
