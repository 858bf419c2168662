#!/bin/sh
# Bun (JavaScriptCore): its jitdump markers are named as JSC names them, jit-<tid>-<pid>.dump
# with BUN_JSC_jitDumpDirectory, a mkstemp /tmp/jit-<tid>-<pid>-XXXXXX (mode 0600, left
# behind) without; the thread that maps it is JSC's "PerfLog" thread, not the main one.
# perf inject --jit recognises neither; we must name at least 90% of the samples in JIT
# code (the samples the recording puts in anonymous memory, perf's /tmp/perf-<pid>.map).
jt_name="bun oracle"; . "$(dirname "$0")/common.sh"
jt_need_perf
bun=$(jt_bun) || jt_skip "bun not installed (.ci/run installs @oven/bun-linux-x64 into build/npm)"
inject="$root/build/jitanon-inject"
[ -x "$inject" ] || { echo "FAIL bun: build/jitanon-inject missing (make all)"; exit 0; }
cat > "$tmp/app.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const end = Date.now() + 1500;
let s = 0;
while (Date.now() < end) s += fib(20);
console.log(s > 0);
EOF
mkdir "$tmp/dumps" "$tmp/elf"
count() { perf script -i "$1" -F ip,dso 2>/dev/null | grep -c "$2"; }
for mode in dir mkstemp; do
  if [ $mode = dir ]; then
    (cd "$tmp" && BUN_JSC_useJITDump=1 BUN_JSC_jitDumpDirectory="$tmp/dumps" \
      perf record -q -k mono -e cpu-clock -o "$tmp/$mode.data" "$bun" app.js > "$tmp/$mode.out" 2>&1)
  else
    (cd "$tmp" && BUN_JSC_useJITDump=1 perf record -q -k mono -e cpu-clock -o "$tmp/$mode.data" "$bun" app.js \
      > "$tmp/$mode.out" 2>&1)
  fi
  marker=$(perf script -i "$tmp/$mode.data" --show-mmap-events 2>/dev/null | sed -n 's/.*PERF_RECORD_MMAP2 \([0-9]*\)\/.* \(\/[^ ]*jit-[0-9-]*[^ ]*\)$/\1 \2/p' | head -1)
  pid=${marker%% *}; dump=${marker#* }
  [ -n "$pid" ] && pids="$pids $pid"
  case "$mode:$dump" in
    dir:"$tmp"/dumps/jit-*-"$pid".dump) ;;
    mkstemp:/tmp/jit-*-"$pid"-??????) ;;
    *) echo "FAIL bun: $mode: no marker of the form JSC writes (found '$marker')"; continue ;;
  esac
  "$inject" -N -i "$tmp/$mode.data" -o "$tmp/$mode-ours.data" --elf-dir "$tmp/elf" --stats > "$tmp/$mode-ours.log" 2>&1
  perf inject --jit -i "$tmp/$mode.data" -o "$tmp/$mode-perf.data" > "$tmp/$mode-perf.log" 2>&1
  anon=$(count "$tmp/$mode.data" "perf-$pid.map")
  ours=$(count "$tmp/$mode-ours.data" 'jitted-')
  theirs=$(count "$tmp/$mode-perf.data" 'jitted-')
  # what JSC writes beyond CODE_LOAD (Bun 1.4.5: nothing - no DEBUG_INFO, UNWINDING_INFO,
  # MOVE or CLOSE), told in the PASS line
  kinds=$("$root/build/jitdump-cat" --summary "$dump" 2>/dev/null | awk '$1 ~ /^(LOAD|MOVE|DEBUG_INFO|CLOSE|UNWINDING_INFO)$/ {printf "%s%s %s", sep, $1, $2; sep=", "}')
  [ $mode = mkstemp ] && rm -f "$dump" # JSC leaves its 0600 file in /tmp
  if [ "$anon" -gt 0 ] && [ $((ours * 10)) -ge $((anon * 9)) ] && [ "$theirs" = 0 ]; then
    echo "PASS bun: $mode ($(basename "$dump" | sed "s/$pid/<pid>/")): $ours of $anon samples in JIT code named, perf inject names $theirs (dump: $kinds)"
  else
    echo "FAIL bun: $mode: $ours of $anon samples in JIT code named (perf inject $theirs)"; cat "$tmp/$mode-ours.log"
  fi
done
