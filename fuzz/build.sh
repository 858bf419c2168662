#!/bin/sh
# OSS-Fuzz build script (also works locally).  Builds every fuzz/fuzz_<name>.c as
# $OUT/fuzz_<name>, with $OUT/fuzz_<name>_seed_corpus.zip (fuzz/corpus/<name> plus
# fuzz/regressions/<name>) and $OUT/fuzz_<name>.dict (fuzz/<name>.dict) next to it.
#
# Uses only what OSS-Fuzz provides: $CC $CFLAGS $CXX $CXXFLAGS $LIB_FUZZING_ENGINE $OUT
# (and $WORK for objects when set).  Locally, for example:
#
#   CC=clang CXX=clang++ CFLAGS="-fsanitize=fuzzer-no-link,address" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/jitanon-fuzz sh fuzz/build.sh
set -eu

SRC=$(cd "$(dirname "$0")/.." && pwd)
: "${CC:=clang}"
: "${CXX:=clang++}"
: "${CFLAGS:=-g -O1 -fsanitize=fuzzer-no-link,address,undefined}"
: "${CXXFLAGS:=$CFLAGS}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}"
: "${OUT:?set OUT to the output directory}"

mkdir -p "$OUT"
if [ -n "${WORK:-}" ]; then
    obj=$WORK/jitanon-fuzz-obj
    mkdir -p "$obj"
    cleanup=
else
    obj=$(mktemp -d)
    cleanup=$obj
fi
trap '[ -z "$cleanup" ] || rm -rf "$cleanup"' EXIT

for src in "$SRC"/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)       # fuzz_perfdata
    short=${name#fuzz_}              # perfdata
    # shellcheck disable=SC2086  # the flag variables are word lists
    $CC $CFLAGS -I"$SRC" -c "$src" -o "$obj/$name.o"
    # shellcheck disable=SC2086
    $CXX $CXXFLAGS $LIB_FUZZING_ENGINE "$obj/$name.o" -o "$OUT/$name"

    rm -f "$OUT/${name}_seed_corpus.zip"
    seeds=
    for d in "$SRC/fuzz/corpus/$short" "$SRC/fuzz/regressions/$short"; do
        [ -d "$d" ] || continue
        for f in "$d"/*; do [ -f "$f" ] && seeds="$seeds $f"; done
    done
    if [ -n "$seeds" ]; then
        # shellcheck disable=SC2086  # file names in the repository have no spaces
        zip -q -j "$OUT/${name}_seed_corpus.zip" $seeds
    fi
    if [ -f "$SRC/fuzz/$short.dict" ]; then cp "$SRC/fuzz/$short.dict" "$OUT/$name.dict"; fi
done
