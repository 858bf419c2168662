#!/bin/sh
# make demo: record a real JIT (examples/tinyjit) whose code cache grows page by page, so
# the kernel emits coalesced //anon mmaps over already-jitted code; inject it with
# jitanon-inject and with `perf inject --jit`; show what each resolves; end with a flame
# graph of the recording (build/demo.svg, from build/symbolize --svg).
set -u
root=$(pwd)
tmp=$(mktemp -d)
# perf record and perf inject fill a build-id cache: keep it in $tmp, not in ~/.debug
# (perf 6.1 finds it through HOME)
export PERF_BUILDID_DIR="$tmp/.debug" HOME="$tmp"
pid=""
cleanup() { [ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"; rm -rf "$tmp"; }
trap cleanup EXIT

recorded=0
# DEMO_SYNTH=1 shows the path taken on machines where perf cannot record.
if [ "${DEMO_SYNTH:-0}" != 1 ] && command -v perf >/dev/null 2>&1 &&
   perf record -q -k mono -e cpu-clock -o "$tmp/probe.data" true >/dev/null 2>&1; then
  echo "== recording build/tinyjit with: perf record -k mono -e cpu-clock -g"
  (cd "$tmp" && perf record -q -k mono -e cpu-clock -g -o perf.data "$root/build/tinyjit" -t 800 > tinyjit.out 2>/dev/null)
  pid=$(sed -n 's/^pid //p' "$tmp/tinyjit.out")
  [ -n "$pid" ] && [ -s "$tmp/perf.data" ] && recorded=1
fi
if [ $recorded = 0 ]; then
  echo "== this machine cannot run perf record: using a recording synthesized by the library (build/jitgen)"
  if ! "$root/build/jitgen" --loads 64 --samples 4000 --quiet "$tmp" > "$tmp/jitgen.out" 2>&1; then
    echo "jitgen failed:"; cat "$tmp/jitgen.out"; exit 1
  fi
  pid=$(ls "$tmp" | sed -n 's/^jit-\([0-9]*\)\.dump$/\1/p' | head -1)
fi

mkdir -p "$tmp/ours" "$tmp/proc"
"$root/build/jitanon-inject" -i "$tmp/perf.data" -o "$tmp/ours.data" --elf-dir "$tmp/ours" --stats 2> "$tmp/stats.txt" || { cat "$tmp/stats.txt"; exit 1; }
echo "== jitanon-inject -i perf.data -o ours.data --stats"
sed 's/^/   /' "$tmp/stats.txt"
have_perf_inject=0
if command -v perf >/dev/null 2>&1 && perf inject --jit -i "$tmp/perf.data" -o "$tmp/perfinj.data" 2>/dev/null; then have_perf_inject=1; fi

# Samples of the JIT process, by what they resolve to.
classify() {
  perf script -i "$1" -F pid,ip,sym,dso -G 2>/dev/null | awk -v pid="$pid" '
    $1 == pid {
      dso = $NF; sym = $3
      if (dso ~ /jitted-/) j++
      else if (sym ~ /^\[unknown\]/ && dso ~ /unknown|JIT|perf-/) u++
      else if (dso ~ /\[JIT\]|perf-[0-9]+\.map/) m++
      else o++
    }
    END { printf "%8d %8d %8d %8d", j, m, u, o }'
}
if command -v perf >/dev/null 2>&1; then
  echo
  echo "== samples of pid $pid by what perf report resolves them to"
  printf "%-28s %8s %8s %8s %8s\n" "" "jitdump" "perf-map" "unknown" "other"
  printf "%-28s %s\n" "no injection" "$(classify "$tmp/perf.data")"
  [ $have_perf_inject = 1 ] && printf "%-28s %s\n" "perf inject --jit" "$(classify "$tmp/perfinj.data")"
  printf "%-28s %s\n" "jitanon-inject" "$(classify "$tmp/ours.data")"
  echo
  echo "  jitdump: a function from jit-$pid.dump; perf-map: a name from /tmp/perf-$pid.map;"
  echo "  unknown: JIT code nobody can name.  tinyjit leaves one stub per page out of its"
  echo "  jitdump (named only in the perf map): perf inject --jit drops every //anon mmap of"
  echo "  the process and so loses them; jitanon-inject keeps the parts of //anon it can."
  for f in perf.data perfinj.data ours.data; do
    [ -f "$tmp/$f" ] || continue
    case $f in perf.data) t="no injection";; perfinj.data) t="perf inject --jit";; *) t="jitanon-inject";; esac
    echo
    echo "== perf report --sort dso,sym ($t), top lines"
    perf report -i "$tmp/$f" --stdio --sort dso,sym --no-children -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8
  done
else
  echo "perf is not installed: symbolizing in memory instead (build/symbolize)"
  "$root/build/symbolize" --top 12 "$tmp/perf.data"
fi

# The picture: call stacks resolved in memory (same names as perf script on ours.data).
echo
echo "== flame graph: build/symbolize --svg build/demo.svg perf.data"
if [ $recorded = 1 ]; then what="tinyjit recorded by perf record -g"; else what="a recording synthesized by jitgen"; fi
if "$root/build/symbolize" --svg "$root/build/demo.svg" --title "$what, named by jitanon (symbolize --svg)" "$tmp/perf.data"; then
  echo "   wrote $root/build/demo.svg (open it in a browser: hover for names, click to zoom, Ctrl-F to search)"
else
  echo "   symbolize --svg failed"; exit 1
fi
