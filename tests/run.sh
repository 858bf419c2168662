#!/bin/sh
# Runs every test layer and prints "N passed, M failed, K skipped" last (and how long each
# oracle script took, on lines starting with "#").
# Layers: compile matrix, unit tests (ASan+UBSan), fuzz corpus/regression replay,
# oracle scripts that check our output with real tools (perf, readelf, gdb, node, erl).
set -u
cd "$(dirname "$0")/.."
log=$(mktemp); trap 'rm -f "$log"' EXIT
{
  sh tests/compile_matrix.sh
  ./build/test_main || echo "FAIL unit test binary exited non-zero"
  # the zstd decoder against libzstd (prints SKIP without libzstd-dev)
  if [ -x build/test_zstd_diff ]; then ./build/test_zstd_diff || echo "FAIL zstd differential exited non-zero"
  else echo "SKIP zstd differential: build/test_zstd_diff not built"; fi
  # the injector tests again under ThreadSanitizer (writer threads; any report fails them)
  if [ -x build/test_tsan ]; then
    if TSAN_OPTIONS=halt_on_error=1:exitcode=66 ./build/test_tsan test_inject_ >"$log.tsan" 2>&1; then
      sed -n 's/^PASS /PASS tsan: /p' "$log.tsan"
    else echo "FAIL tsan: injector tests"; tail -30 "$log.tsan"; fi
    rm -f "$log.tsan"
  else echo "SKIP tsan: build/test_tsan could not be built (is libtsan installed?)"
  fi
  for r in build/fuzz-replay-*; do
    [ -x "$r" ] || continue
    t=${r#build/fuzz-replay-}; cc=gcc
    case $t in clang-*) t=${t#clang-}; cc=clang ;; esac
    [ -f "fuzz/fuzz_$t.c" ] || continue
    if "$r" fuzz/corpus/$t fuzz/regressions/$t >/dev/null 2>"$log.err" && ! grep -q 'runtime error' "$log.err"; then
      echo "PASS fuzz replay ($cc): $t"
    else echo "FAIL fuzz replay ($cc): $t"; tail -20 "$log.err"; fi
  done
  for s in tests/oracle/*.sh; do
    case $s in */common.sh) continue ;; esac # the oracles' shared preamble
    t0=$(date +%s); [ -f "$s" ] && sh "$s"; echo "# $s: $(( $(date +%s) - t0 )) s"
  done
} 2>&1 | tee "$log" | grep -v '^[0-9]* passed, [0-9]* failed'
rm -f "$log.err"
p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); k=$(grep -c '^SKIP ' "$log")
echo "$p passed, $f failed, $k skipped"
[ "$f" -eq 0 ]
