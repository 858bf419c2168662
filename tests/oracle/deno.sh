#!/bin/sh
# Deno (V8 15) with real perf: V8 maps the builtins of its executable into its code range (a
# file-backed r-xp MMAP2 of the deno binary) and then writes a CODE_LOAD for each of them,
# after the jitdump marker.  Every sample perf inject --jit puts in jitted code, jitanon-inject
# must put there with the same name (at least 99%), bytecode handlers included; and what V8
# writes beyond CODE_LOAD reaches our ELF stubs: DEBUG_INFO as line tables (perf annotate -l),
# UNWINDING_INFO as .eh_frame that perf's --call-graph dwarf unwinds through.
jt_name="deno oracle"; . "$(dirname "$0")/common.sh"
jt_need_perf
deno=$(jt_deno) || jt_skip "deno not installed (.ci/run installs @deno/linux-x64-glibc into build/npm)"
inj="$root/build/jitanon-inject"
fold="$root/tests/oracle/fold_perf_script.py"

# record DIR FLAGS [perf options]: runs app.js in DIR under perf; perf inject --jit and ours.
record() {
  d=$1 flags=$2; shift 2
  (cd "$d" && perf record -q -k mono -e cpu-clock "$@" -o raw.data "$deno" run --v8-flags="$flags" app.js \
     > out.txt 2>/dev/null)
  p=$(sed -n 's/^pid //p' "$d/out.txt"); pids="$pids $p"
  [ -n "$p" ] || return 1
  perf inject --jit -i "$d/raw.data" -o "$d/perf.data" 2>/dev/null || return 1
  "$inj" -i "$d/raw.data" -o "$d/ours.data" --elf-dir "$d/elf" --stats 2> "$d/ours.err"
}
cat > "$tmp/app.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0; const t = Date.now();
while (Date.now() - t < 500) { s += fib(18); s ^= JSON.stringify({a: s, b: [s, 1]}).length; }
console.log("pid " + Deno.pid);
JS

# 1. the interpreter only: the bytecode handlers are the builtins V8 remapped
d="$tmp/interp"; mkdir -p "$d/elf"; cp "$tmp/app.js" "$d/"
if ! record "$d" --perf-prof,--no-opt,--no-maglev,--no-sparkplug -F 4000; then
  echo "FAIL deno builtins: the recording or an injection failed: $(cat "$d"/*.err 2>/dev/null)"
else
  for m in perf ours; do perf script -i "$d/$m.data" -F tid,time,ip,sym,dso --ns 2>/dev/null > "$d/$m.txt"; done
  if out=$(python3 - "$d/perf.txt" "$d/ours.txt" <<'PY'
import re, sys
def load(path):
    rows = []
    for line in open(path, errors="replace"):
        m = re.match(r"\s*(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", line)
        if m:
            rows.append((m.group(2), m.group(3), re.sub(r"\+0x[0-9a-f]+$", "", m.group(4)), "jitted-" in m.group(5)))
    return rows
perf, ours = load(sys.argv[1]), load(sys.argv[2])
if len(perf) != len(ours) or not perf:
    print("sample counts differ or empty: perf inject %d, ours %d" % (len(perf), len(ours))); sys.exit(1)
jit = [(p, o) for p, o in zip(perf, ours) if p[3]]
same = sum(1 for p, o in jit if o[3] and o[2] == p[2])
bh = [(p, o) for p, o in jit if p[2].startswith("BytecodeHandler:")]
bh_same = sum(1 for p, o in bh if o[3] and o[2] == p[2])
print("%d samples, %d in jitted code by perf inject, %d of them the same in ours; bytecode handlers %d of %d"
      % (len(perf), len(jit), same, bh_same, len(bh)))
sys.exit(0 if jit and same >= 0.99 * len(jit) and bh and bh_same >= 0.99 * len(bh) else 1)
PY
  ); then echo "PASS deno builtins: every sample perf inject puts in jitted code is named so by us ($out)"
  else echo "FAIL deno builtins: $out"; fi
fi

# 2. the optimizing tiers, with dwarf call graphs: line tables and unwinding
d="$tmp/opt"; mkdir -p "$d/elf"; cp "$tmp/app.js" "$d/"
if ! record "$d" --perf-prof -F 1000 --call-graph dwarf,8192; then
  echo "FAIL deno records: the recording or an injection failed: $(cat "$d"/*.err 2>/dev/null)"
else
  dump=$(ls "$d"/jit-*.dump)
  kinds=$("$root/build/jitdump-cat" --summary "$dump" | awk '$1 ~ /^(LOAD|MOVE|DEBUG_INFO|CLOSE|UNWINDING_INFO)$/ {printf "%s%s %s", (n++ ? ", " : ""), $1, $2}')
  for m in perf ours; do perf script -i "$d/$m.data" -F comm,tid,ip,sym,dso 2>/dev/null | python3 "$fold" > "$d/$m.fold"; done
  fn=$(tr ';' '\n' < "$d/ours.fold" | grep -m1 "^JS:\*'fib" | sed 's/ [0-9]*$//')
  lines=0
  [ -n "$fn" ] && lines=$(timeout 60 perf annotate -i "$d/ours.data" -l --stdio -s "$fn" 2>/dev/null | grep -c 'app\.js:[0-9]*$')
  if [ "$lines" -gt 0 ]; then echo "PASS deno records: DEBUG_INFO reaches our stubs: perf annotate -l shows $lines app.js lines in '$fn' ($kinds)"
  else echo "FAIL deno records: perf annotate -l shows no app.js line in '$fn' ($kinds)"; fi
  # frames of optimized fib (the code V8 writes .eh_frame for) under the leaf: unwound by its CFI
  cfi() { awk '{n = $NF; $NF = ""; k = split($0, f, ";"); c = 0; for (i = 1; i < k; i++) if (f[i] ~ /^JS:\*.fib/) c++; s += c * n} END {print s + 0}' "$1"; }
  p=$(cfi "$d/perf.fold") o=$(cfi "$d/ours.fold")
  if [ "$p" -gt 0 ] && [ "$o" -ge $((p * 99 / 100)) ]; then
    echo "PASS deno unwinding: --call-graph dwarf unwinds through the optimized frames as with perf's stubs ($o frames of fib under the leaf, perf inject $p)"
  else echo "FAIL deno unwinding: $o frames of optimized fib under the leaf, perf inject's output $p"; fi
  # the region layout on the same recording: perf script unwinds (dwarf) through its files
  # as through per-function ones
  jt_region_frames "deno region" "$d" "$d/raw.data"
fi
