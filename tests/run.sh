#!/bin/sh
# Runs every test layer and prints "N passed, M failed, K skipped" last (and how long each
# oracle script took, on lines starting with "#").  With JITANON_CI=1 (.ci/run) a SKIP
# fails the run unless ci_may_skip below allows it.
# Layers: compile matrix, unit tests (ASan+UBSan), fuzz corpus/regression replay,
# oracle scripts that check our output with real tools (perf, readelf, gdb, node, erl).
set -u
cd "$(dirname "$0")/.."
log=$(mktemp); trap 'rm -f "$log"' EXIT
# Progress: every layer and oracle streams its PASS/FAIL/SKIP lines as they come, and
# a "#" line after each says how long it took and the counts so far (counted from what
# it printed, so the figures never lag behind the lines above them).
np=0 nf=0 nk=0
counted() { # counted LABEL T0 FILE: add FILE's counts to the totals, print the "#" line
  np=$((np + $(grep -c '^PASS ' "$3"))); nf=$((nf + $(grep -c '^FAIL ' "$3"))); nk=$((nk + $(grep -c '^SKIP ' "$3")))
  echo "# $1: $(( $(date +%s) - $2 )) s (so far $np passed, $nf failed, $nk skipped)"
  rm -f "$3"
}
# the layers before the oracles
layers() {
  # the compile matrix (compilers only, ~85 s of CPU) runs beside the binaries below, on
  # the CPU they leave idle; its lines come when both are done, the units' as they run
  echo "# unit tests (build/test_main; one alone: build/test_main NAME), fuzz replays and, beside them, the compile matrix"
  t0=$(date +%s)
  sh tests/compile_matrix.sh > "$log.cm" 2>&1 &
  cm=$!
  units 2>&1 | tee "$log.units"
  counted "unit tests and fuzz replays" "$t0" "$log.units"
  wait "$cm"
  cat "$log.cm"; counted "compile matrix" "$t0" "$log.cm"
}
units() {
  ./build/test_main || echo "FAIL unit test binary exited non-zero"
  # the zstd decoder against libzstd (prints SKIP without libzstd-dev)
  if [ -x build/test_zstd_diff ]; then ./build/test_zstd_diff || echo "FAIL zstd differential exited non-zero"
  else echo "SKIP zstd differential: build/test_zstd_diff not built"; fi
  # the injector tests again under ThreadSanitizer (writer threads; any report fails them)
  if [ -x build/test_tsan ]; then
    if TSAN_OPTIONS=halt_on_error=1:exitcode=66 ./build/test_tsan test_inject_ >"$log.tsan" 2>&1 &&
      TSAN_OPTIONS=halt_on_error=1:exitcode=66 ./build/test_tsan test_region_threads >>"$log.tsan" 2>&1; then
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
}
# `sh tests/run.sh zstd late` runs only those oracle scripts, and no other layer
if [ $# -eq 0 ]; then set -- tests/oracle/*.sh; all=1; else all=0; fi
# Oracles that record nothing (they read what node and erl write, and our files) run in
# the background from the start of the oracles, beside the ones that record with perf
# (which mostly leave a CPU idle); their lines come out in their place.  They all sort
# before the system-wide recordings (perfdata, pipenames), which are never run beside them.
# Off for now: beside the perf oracles they slowed buildid and container under load and
# gained ~30 s at most; timing-sensitive checks (record sigint, jvmti attach) come first.
bg_oracles="" # was: elf jitdump jitlink linebias
oracle() { t0=$(date +%s); sh "$1" 2>&1 | tee "$log.o.${1##*/}"; counted "$1" "$t0" "$log.o.${1##*/}"; }
bg_name() { b=${1##*/}; b=${b%.sh}; case " $bg_oracles " in *" $b "*) return 0 ;; esac; return 1; }
{
  [ $all = 0 ] || layers
  for s in "$@"; do
    case $s in */*) ;; *) s=tests/oracle/${s%.sh}.sh ;; esac
    if [ -f "$s" ] && bg_name "$s" && eval "[ -z \"\${bg_$b:-}\" ]"; then oracle "$s" > "$log.bg.$b" 2>&1 & eval "bg_$b=\$!"; fi
  done
  for s in "$@"; do
    case $s in */common.sh) continue ;; */*) ;; *) s=tests/oracle/${s%.sh}.sh ;; esac # common.sh: the oracles' shared preamble
    [ -f "$s" ] || { echo "FAIL run.sh: no oracle $s"; continue; }
    if bg_name "$s" && eval "[ -n \"\${bg_$b:-}\" ]"; then eval "wait \$bg_$b; bg_$b="; cat "$log.bg.$b"; rm -f "$log.bg.$b"; continue; fi
    oracle "$s"
  done
} 2>&1 | tee "$log" | grep -v '^[0-9]* passed, [0-9]* failed'
rm -f "$log.err"
p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); k=$(grep -c '^SKIP ' "$log")

# In CI (.ci/run exports JITANON_CI=1) every tool the tests use is installed, so a SKIP
# means one went missing or stopped working: it fails the run.  Except these, which
# depend on the machine CI runs on (kernel, permissions, file system), not on anything
# .ci/run can install; they pass there today, but a runner without them is no bug of ours.
ci_may_skip() {
  case $1 in
    # tests/oracle/paths.sh runs oracles from a copy of the checkout: judged as theirs
    "SKIP paths: "* | "SKIP paths as nobody: "*[a-z]*": "*) ci_may_skip "SKIP ${1#SKIP paths*: }"; return ;;
    # ... and as a user, which needs root to become
    "SKIP paths as nobody: needs root"*) return 0 ;;
    # perf record -a: needs perf_event_paranoid <= 0 or CAP_PERFMON
    "SKIP perfdata system-wide: "* | "SKIP pipenames system: "*) return 0 ;;
    # tracepoints: need tracefs mounted and readable
    "SKIP layouts tracing data: "* | "SKIP pipenames tracepoint: "*) return 0 ;;
    # chattr +i: the file system under $TMPDIR must support the immutable flag
    "SKIP buildid hostile: "*) return 0 ;;
    # an overlay mount in a private mount namespace (perf's own pipeline, for comparison)
    "SKIP live "*" vs perf: no private overlay"*) return 0 ;;
    # another user's symlink: needs root and a user 'nobody'
    "SKIP damage symlink: "*) return 0 ;;
    # containers: root, and unshare --pid --mount allowed by the kernel
    "SKIP container oracle: needs root"* | "SKIP container oracle: unshare --pid --mount"*) return 0 ;;
  esac
  return 1
}
if [ "${JITANON_CI:-0}" != 0 ]; then
  grep '^SKIP ' "$log" | while IFS= read -r line; do
    ci_may_skip "$line" || echo "FAIL (CI must not skip) ${line#SKIP }"
  done > "$log.ci"
  cat "$log.ci"
  f=$((f + $(grep -c '^FAIL ' "$log.ci")))
  rm -f "$log.ci"
fi
echo "$p passed, $f failed, $k skipped"
[ "$f" -eq 0 ]
