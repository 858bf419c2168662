#!/bin/sh
# --late=name with real perf: tinyjit writes its load records late and prints when each
# function's code really appeared, so every sample has a known answer; node writes its
# perf map as it creates code, which tells the name of every address.  --late=name must
# name every sample tinyjit ran in a function, and change no other sample.
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
tmp=$(mktemp -d)
export PERF_BUILDID_DIR="$tmp/.debug" HOME="$tmp"
pids=""
cleanup() {
  for p in $pids; do rm -f "/tmp/perf-$p.map"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
if ! command -v perf >/dev/null 2>&1; then echo "SKIP late oracle: perf not installed (apt-get install linux-perf)"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then echo "SKIP late oracle: python3 not installed"; exit 0; fi
if ! perf record -q -k mono -e cpu-clock -o "$tmp/probe.data" true >/dev/null 2>&1; then
  echo "SKIP late oracle: perf record cannot record here"; exit 0; fi
chk="$root/tests/oracle/late_check.py"

# both DIR DATA [options]: inject with --late=keep and --late=name, perf script both.
both() {
  dir=$1 data=$2; shift 2
  for m in keep name; do
    "$root/build/jitanon-inject" -i "$data" -o "$dir/$m.data" --elf-dir "$dir/elf-$m" --late=$m --stats "$@" \
      2> "$dir/$m.err" || return 1
    perf script -i "$dir/$m.data" -F time,ip,sym --ns 2>/dev/null > "$dir/$m.txt"
  done
}

if [ ! -x "$root/build/tinyjit" ]; then echo "SKIP late tinyjit: build/tinyjit not built (x86-64 only)"
else
  d="$tmp/tj"; mkdir -p "$d"
  # loads 60 ms late, pages every 100 ms: the default window (100 ms) covers the delay
  perf record -q -k mono -e cpu-clock -F 4000 -o "$d/perf.data" "$root/build/tinyjit" -d "$d" -p 4 -t 800 \
    --late 60 > "$d/truth.txt" 2>/dev/null
  p=$(sed -n 's/^pid //p' "$d/truth.txt"); pids="$pids $p"
  if ! both "$d" "$d/perf.data"; then echo "FAIL late tinyjit: jitanon-inject failed: $(cat "$d"/*.err)"
  elif out=$(python3 "$chk" truth "$d/truth.txt" "$d/keep.txt" "$d/name.txt"); then
    echo "PASS late tinyjit: every sample a function ran before its load record is named, nothing else changed ($out)"
  else echo "FAIL late tinyjit: $out"; fi
  # a window shorter than the delay names fewer samples, and still none wrongly
  if both "$d" "$d/perf.data" --late-window 20 && out=$(python3 "$chk" partial "$d/truth.txt" "$d/keep.txt" "$d/name.txt"); then
    echo "PASS late tinyjit: a 20 ms window names only what it may ($out)"
  else echo "FAIL late tinyjit: 20 ms window: $out"; fi
  # a pipe cannot promise the whole dump: the old behaviour, with the reason
  "$root/build/perfdata-cat" --copy - "$d/perf.data" | "$root/build/jitanon-inject" -i - -o "$d/pipe.data" \
    --elf-dir "$d/elf-pipe" --late=name --stats 2> "$d/pipe.err"
  if grep -q 'pipe' "$d/pipe.err" && grep -q 'fallbacks 0x10' "$d/pipe.err"; then
    echo "PASS late tinyjit: pipe input keeps load times and says why"
  else echo "FAIL late tinyjit: pipe input: $(cat "$d/pipe.err")"; fi
fi

if ! command -v node >/dev/null 2>&1; then echo "SKIP late node: node not installed (apt-get install nodejs)"
else
  d="$tmp/node"; mkdir -p "$d"
  cat > "$d/app.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0; const t = Date.now();
while (Date.now() - t < 800) { s += fib(18); for (let i = 0; i < 500; i++) s += String(i).length; }
console.log("pid " + process.pid);
JS
  (cd "$d" && perf record -q -k mono -e cpu-clock -F 2000 -o perf.data node --perf-prof --perf-basic-prof app.js > out.txt 2>/dev/null)
  p=$(sed -n 's/^pid //p' "$d/out.txt"); pids="$pids $p"
  if [ -z "$p" ] || [ ! -f "/tmp/perf-$p.map" ]; then echo "SKIP late node: node wrote no perf map"
  elif ! both "$d" "$d/perf.data" --late-window 1000; then echo "FAIL late node: jitanon-inject failed: $(cat "$d"/*.err)"
  elif out=$(python3 "$chk" map "/tmp/perf-$p.map" "$d/keep.txt" "$d/name.txt"); then
    echo "PASS late node: no sample named wrongly ($out)"
  else echo "FAIL late node: $out"; fi
fi
