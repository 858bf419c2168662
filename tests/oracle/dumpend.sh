#!/bin/sh
# Samples after a dump's last record (issue #33): a JIT killed before flushing its dump
# leaves samples in its memory that nothing can name.  jitgen writes a recording, its
# dump is cut to an eighth (what a killed runtime leaves); jitanon-inject must say once
# when the JIT stopped, and --stats must count those samples.  perf script, where it is
# installed, must show at least as many samples of the process after that time outside
# every jitted-*.so (the count seen from the output).  The whole dump: nothing said.
jt_name="dumpend"; . "$(dirname "$0")/common.sh"
d="$tmp/g"
"$root/build/jitgen" --loads 400 --samples 4000 --duration-ms 400 --quiet "$d" >/dev/null 2>&1 ||
  { echo "FAIL dumpend: jitgen failed"; exit 0; }
dump="$d/jit-31337.dump"
"$root/build/jitanon-inject" -i "$d/perf.data" -o "$tmp/whole.data" --elf-dir "$tmp/whole" --stats 2> "$tmp/whole.err"
if grep -q 'stopped describing' "$tmp/whole.err"; then echo "FAIL dumpend: the whole dump was said to stop early"
else echo "PASS dumpend: a dump whose last record follows the samples is not said to stop"; fi
head -c $(($(wc -c < "$dump") / 8)) "$dump" > "$tmp/cut" && mv "$tmp/cut" "$dump"
"$root/build/jitanon-inject" -i "$d/perf.data" -o "$tmp/out.data" --elf-dir "$tmp/elf" --stats 2> "$tmp/err"
said=$(grep -c 'the JIT stopped describing its code at' "$tmp/err")
t=$(sed -n 's/.*stopped describing its code at \([0-9.]*\) .*/\1/p' "$tmp/err")
n=$(sed -n 's/^jitdumps that stopped before .*: \([0-9]*\) samples in JIT memory.*/\1/p' "$tmp/err")
if [ "$said" = 1 ] && [ "${n:-0}" -gt 0 ] && grep -q "killed, or exited without flushing" "$tmp/err"; then
  echo "PASS dumpend: a dump cut to an eighth: said once (stopped at $t s), $n samples after it counted"
else echo "FAIL dumpend: cut dump: said $said times, counted '${n:-}'; $(head -c 600 "$tmp/err")"; fi
command -v perf >/dev/null 2>&1 || { echo "SKIP dumpend perf: perf not installed"; exit 0; }
seen=$(perf script -i "$tmp/out.data" -F pid,time,ip,dso 2>/dev/null |
  awk -v t="$t" '$1 == 31337 { sub(/:$/, "", $2); if ($2 + 0 > t + 0 && $0 !~ /jitted-/ && $0 ~ /anon|unknown|JIT|perf-[0-9]*\.map/) n++ } END { print n + 0 }')
# (the count leaves out pages where samples went unnamed before the dump stopped: jitgen's
# stubs, code a runtime never describes; most of the code after the cut is new)
if [ "${n:-0}" -le "$seen" ] && [ "$((2 * ${n:-0}))" -ge "$seen" ]; then
  echo "PASS dumpend perf: perf script shows $seen unnamed samples after $t s; $n of them in pages with no unnamed sample before"
else echo "FAIL dumpend perf: perf script shows $seen unnamed samples after $t s, --stats counted ${n:-0}"; fi
