#!/bin/sh
# --late=name with real perf: tinyjit writes its load records late and prints when each
# function's code really appeared, so every sample has a known answer; node writes its
# perf map as it creates code, and a JVM its map of the code cache at exit, which tell
# the name of every address.  --late=name must name every sample tinyjit ran in a
# function, and change no other sample; no name may contradict the runtimes' maps.
jt_name="late oracle"; . "$(dirname "$0")/common.sh"
jt_need_perf
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

if ! tj=$(jt_tinyjit); then echo "SKIP late tinyjit: build/tinyjit not built (x86-64 only)"
else
  d="$tmp/tj"; mkdir -p "$d"
  # loads 60 ms late, pages every 100 ms: the default window (100 ms) covers the delay
  perf record -q -k mono -e cpu-clock -F 4000 -o "$d/perf.data" "$tj" -d "$d" -p 4 -t 800 \
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

agent="$root/build/libjitanon-jvmti.so"
if ! command -v javac >/dev/null 2>&1; then echo "SKIP late java: no javac (apt-get install openjdk-17-jdk-headless)"
elif [ ! -f "$agent" ]; then echo "SKIP late java: build/libjitanon-jvmti.so not built (no JDK headers)"
else
  # 20 methods, each hot for 40 ms in turn: HotSpot reports each compiled method a few ms
  # after it started running
  d="$tmp/java"; mkdir -p "$d/demo"
  python3 - "$d/demo/Many.java" <<'PY'
import sys
n = 20
ms = "\n".join("    static long m%d(long n) { long a = %d; for (long i = 0; i < n; i++) a = a * 6364136223846793005L + (i ^ %d); return a; }" % (k, k + 1, k) for k in range(n))
calls = "\n".join("                case %d: s += m%d(20000); break;" % (k, k) for k in range(n))
open(sys.argv[1], "w").write('''package demo;
public class Many {
%s
    public static void main(String[] args) {
        long s = 0;
        for (int k = 0; k < %d; k++) {
            long end = System.nanoTime() + 40_000_000L;
            while (System.nanoTime() < end) switch (k) {
%s
            }
        }
        System.out.println("pid " + ProcessHandle.current().pid() + " " + s);
    }
}
''' % (ms, n, calls))
PY
  if ! javac -d "$d" "$d/demo/Many.java" 2>"$d/javac.err"; then echo "FAIL late java: javac: $(head -c 300 "$d/javac.err")"
  else
    (cd "$d" && perf record -q -k mono -e cpu-clock -F 4000 -o perf.data java "-agentpath:$agent=dir=$d" \
      -XX:+PreserveFramePointer -XX:-UsePerfData -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
      -cp "$d" demo.Many > out.txt 2>/dev/null)
    p=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$d/out.txt"); pids="$pids $p"
    if [ -z "$p" ] || [ ! -f "/tmp/perf-$p.map" ]; then echo "SKIP late java: the JVM wrote no perf map"
    elif ! both "$d" "$d/perf.data"; then echo "FAIL late java: jitanon-inject failed: $(cat "$d"/*.err)"
    elif out=$(python3 "$chk" map "/tmp/perf-$p.map" "$d/keep.txt" "$d/name.txt"); then
      echo "PASS late java: no sample named wrongly by the JVM's own map ($out)"
    else echo "FAIL late java: $out"; fi
  fi
fi
