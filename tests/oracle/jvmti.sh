#!/bin/sh
# The JVMTI agent (build/libjitanon-jvmti.so) on a real OpenJDK: a small program with a
# hot method, compiled with javac at test time, recorded with perf, injected with
# jitanon-inject; perf report must name the hot method, perf annotate must show its
# .java:LINE, and no JIT sample may stay [unknown] unless it came before the load record
# of its code (counted and printed).  Plus the agent's options on short runs.
jt_name="jvmti"; . "$(dirname "$0")/common.sh"
agent="$root/build/libjitanon-jvmti.so"
command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 ||
  jt_skip "no java/javac (apt-get install openjdk-17-jdk-headless)"
[ -f "$agent" ] || jt_skip "build/libjitanon-jvmti.so not built (no JDK include/jvmti.h found by make)"

mkdir -p "$tmp/demo"
cat > "$tmp/demo/Hot.java" <<'EOF'
package demo;

public class Hot {
    static long mix(long acc, long i) {
        return (acc >>> 3) ^ (i * 0x9E3779B97F4A7C15L);
    }

    static long spin(long n) {
        long acc = 1;
        for (long i = 0; i < n; i++) {
            acc += mix(acc, i) % 1000003;
        }
        return acc;
    }

    public static void main(String[] args) {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000L, s = 0;
        while (System.nanoTime() < end) s += spin(200_000);
        System.out.println(s);
    }
}
EOF
if ! javac -d "$tmp" "$tmp/demo/Hot.java" 2>"$tmp/javac.err"; then
  echo "FAIL jvmti: javac failed: $(head -c 300 "$tmp/javac.err")"; exit 0; fi
run() { # run DIR MS AGENT-OPTIONS: java with the agent writing into DIR
  mkdir -p "$1" && (cd "$1" && java "-agentpath:$agent=dir=$1$3" -XX:+PreserveFramePointer -XX:-UsePerfData -cp "$tmp" demo.Hot "$2")
}
dump_of() { ls "$1"/jit-*.dump 2>/dev/null | head -n 1; }

# 1. Options, without perf: names, nodebug, a bad option, the dump closed at VMDeath.
run "$tmp/sig" 300 ",names=signature" >/dev/null 2>&1
d=$(dump_of "$tmp/sig")
if [ -n "$d" ] && "$root/build/jitdump-cat" "$d" > "$tmp/sig.txt" 2>&1 &&
   grep -q 'LOAD.* demo\.Hot\.spin(long)$' "$tmp/sig.txt" && grep -q 'DEBUG_INFO.* first demo/Hot.java:' "$tmp/sig.txt" &&
   grep -q 'LOAD.* Interpreter$' "$tmp/sig.txt" && tail -n 1 "$tmp/sig.txt" | grep -q CLOSE; then
  echo "PASS jvmti options: names=signature (demo.Hot.spin(long)), DEBUG_INFO demo/Hot.java, stubs, CLOSE at exit"
else echo "FAIL jvmti options: names=signature dump $(head -c 300 "$tmp/sig.txt" 2>/dev/null)"; fi
run "$tmp/jvm" 300 ",names=jvm,nodebug" >/dev/null 2>&1
d=$(dump_of "$tmp/jvm")
if [ -n "$d" ] && "$root/build/jitdump-cat" "$d" > "$tmp/jvm.txt" 2>&1 &&
   grep -q 'LOAD.* Ldemo/Hot;\.spin(J)J$' "$tmp/jvm.txt" && ! grep -q DEBUG_INFO "$tmp/jvm.txt"; then
  echo "PASS jvmti options: names=jvm (Ldemo/Hot;.spin(J)J), nodebug writes no DEBUG_INFO"
else echo "FAIL jvmti options: names=jvm,nodebug dump"; fi
# a class without line tables (javac -g:none): names, no lines, no crash
mkdir -p "$tmp/nolines/cls"
if javac -g:none -d "$tmp/nolines/cls" "$tmp/demo/Hot.java" 2>/dev/null &&
   (cd "$tmp/nolines" && java "-agentpath:$agent=dir=$tmp/nolines" -XX:-UsePerfData -cp cls demo.Hot 300 >/dev/null 2>&1) &&
   d=$(dump_of "$tmp/nolines") && [ -n "$d" ] && "$root/build/jitdump-cat" "$d" > "$tmp/nolines.txt" 2>&1 &&
   grep -q 'LOAD.* demo\.Hot\.spin$' "$tmp/nolines.txt" && ! grep -q 'demo/Hot\.java' "$tmp/nolines.txt" &&
   grep -q 'DEBUG_INFO' "$tmp/nolines.txt"; then
  echo "PASS jvmti options: a class compiled with -g:none gets names and no lines (the JDK's keep theirs)"
else echo "FAIL jvmti options: class without line tables"; fi
if run "$tmp/bad" 0 ",colour=blue" >/dev/null 2>"$tmp/bad.err"; then
  echo "FAIL jvmti options: an unknown option was accepted"
elif grep -q "unknown option 'colour=blue'" "$tmp/bad.err"; then
  echo "PASS jvmti options: an unknown option stops the JVM with a message"
else echo "FAIL jvmti options: unknown option: $(head -c 200 "$tmp/bad.err")"; fi

# attached to a running JVM (jcmd JVMTI.agent_load): what was compiled before comes from
# the GenerateEvents replay.  jcmd joins its arguments with spaces and the JVM splits them
# again at spaces and at '=': the agent's path and its options go quoted, and both have a
# space here (a checkout or an output directory may), which the quotes must keep.
mkdir -p "$tmp/x y" && cp "$agent" "$root/build/jitanon-record" "$tmp/x y/" 2>/dev/null
if command -v jcmd >/dev/null 2>&1; then
  mkdir -p "$tmp/at tach"
  # 6 s: each jcmd starts a JVM of its own, which takes seconds on a loaded machine (with
  # 2.5 s the program had exited before the agent came)
  (cd "$tmp/at tach" && exec java -XX:-UsePerfData -cp "$tmp" demo.Hot 6000 >/dev/null 2>&1) &
  jpid=$!
  i=0; while [ $i -lt 50 ] && ! jcmd "$jpid" VM.version >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
  sleep 0.5 # let spin() be compiled before the agent comes
  jcmd "$jpid" JVMTI.agent_load "\"$tmp/x y/${agent##*/}\"" "\"dir=$tmp/at tach\"" > "$tmp/attach.txt" 2>&1
  wait "$jpid"
  d=$(dump_of "$tmp/at tach")
  if [ -n "$d" ] && "$root/build/jitdump-cat" "$d" > "$tmp/attach.dump.txt" 2>&1 &&
     grep -q 'LOAD.* demo\.Hot\.spin$' "$tmp/attach.dump.txt" && grep -q 'LOAD.* Interpreter$' "$tmp/attach.dump.txt" &&
     tail -n 1 "$tmp/attach.dump.txt" | grep -q CLOSE; then
    echo "PASS jvmti attach: loaded into a running JVM, earlier code replayed (demo.Hot.spin, Interpreter), CLOSE at exit"
  else echo "FAIL jvmti attach: $(tr '\n' ' ' < "$tmp/attach.txt" | head -c 200)"; fi
else echo "SKIP jvmti attach: no jcmd"; fi

# 2. perf: record, inject, report, annotate.
jt_name="jvmti perf"; jt_need_record

# jitanon-record -p of a running JVM loads the agent with jcmd: from a directory with a
# space (the agent is found beside jitanon-record), into an output directory with one
if command -v jcmd >/dev/null 2>&1 && [ -x "$tmp/x y/jitanon-record" ]; then
  mkdir -p "$tmp/o ut"
  java -XX:-UsePerfData -cp "$tmp" demo.Hot 4000 >/dev/null 2>&1 &
  jpid=$!
  i=0; while [ $i -lt 50 ] && ! jcmd "$jpid" VM.version >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
  "$tmp/x y/jitanon-record" -o "$tmp/o ut/p.data" --no-svg -p "$jpid" > "$tmp/p.out" 2>&1
  wait "$jpid"
  # the agent is loaded before perf starts: every sample in JIT code comes after the
  # records of its code, however long jcmd took, so (nearly) all are named
  named=$(grep -o '[0-9.]*% named' "$tmp/p.out" | head -n 1)
  if ! grep -q 'jcmd could not\|jcmd cannot' "$tmp/p.out" && grep -q 'java, .* 1 jitdump$' "$tmp/p.out" &&
     grep -A 1 'self  samples  function' "$tmp/p.out" | grep -q 'demo\.Hot\.spin' &&
     awk -v n="${named%%%*}" 'BEGIN { exit !(n + 0 >= 98) }'; then
    echo "PASS jvmti record -p: jcmd loaded the agent from a path with a space; demo.Hot.spin on top ($named of the samples in JIT code)"
  else echo "FAIL jvmti record -p: $(tr '\n' ' ' < "$tmp/p.out" | head -c 300)"; fi
else echo "SKIP jvmti record -p: no jcmd, or build/jitanon-record not built"; fi
mkdir -p "$tmp/rec"
(cd "$tmp/rec" && perf record -q -k mono -e cpu-clock -g -o perf.data java "-agentpath:$agent=dir=$tmp/rec" \
   -XX:+PreserveFramePointer -XX:-UsePerfData -cp "$tmp" demo.Hot 1500 >/dev/null 2>&1)
d=$(dump_of "$tmp/rec")
if [ ! -f "$tmp/rec/perf.data" ] || [ -z "$d" ]; then echo "FAIL jvmti perf: could not record java with the agent"; exit 0; fi
# our ELFs in their own directory: perf inject --jit below writes files of the same names
# next to the dump
mkdir -p "$tmp/rec/ours"
if ! "$root/build/jitanon-inject" -i "$tmp/rec/perf.data" -o "$tmp/rec/perf.jit.data" --elf-dir "$tmp/rec/ours" 2>"$tmp/inject.err"; then
  echo "FAIL jvmti perf: jitanon-inject: $(head -c 300 "$tmp/inject.err")"; exit 0; fi
cd "$tmp/rec"
top=$(perf report -i perf.jit.data --stdio --no-children --sort sym 2>/dev/null | grep '\[\.\]' | head -n 1)
case "$top" in
  *"[.] demo.Hot.spin"*) echo "PASS jvmti report: the hottest user symbol is demo.Hot.spin ($(echo "$top" | awk '{print $1}'))";;
  *) echo "FAIL jvmti report: hottest user symbol: $top";;
esac
# perf annotate finds demo/Hot.java from the current directory: the source sits in $tmp.
cp -r "$tmp/demo" "$tmp/rec/"
perf annotate -i perf.jit.data --stdio -l -s demo.Hot.spin > "$tmp/annotate.txt" 2>/dev/null
lines=$(grep -o 'Hot\.java:[0-9]*' "$tmp/annotate.txt" | sort -u | tr '\n' ' ')
if ! command -v objdump >/dev/null 2>&1; then
  echo "SKIP jvmti annotate: objdump not installed (perf annotate needs binutils)"
elif grep -q 'Hot\.java:\(5\|11\)$' "$tmp/annotate.txt" && grep -q 'acc += mix(acc, i) % 1000003;' "$tmp/annotate.txt"; then
  echo "PASS jvmti annotate: demo.Hot.spin shows its lines and source ($lines)"
else echo "FAIL jvmti annotate: no demo/Hot.java:LINE for demo.Hot.spin (saw: $lines)"; fi
# perf's own injector reads the agent's dump too: every sample it names in jitted code,
# we name the same (compare_samples.py contract, as tests/oracle/inject.sh does)
if perf inject --jit -i perf.data -o perfinj.data 2>/dev/null; then
  for f in perf.data:raw perfinj.data:perf perf.jit.data:ours; do
    perf script -i "${f%%:*}" -F tid,time,ip,sym,dso -G 2>/dev/null > "$tmp/${f##*:}.txt"
  done
  if out=$(python3 "$root/tests/oracle/compare_samples.py" contract "$tmp/raw.txt" "$tmp/perf.txt" "$tmp/ours.txt"); then
    echo "PASS jvmti perf inject: perf inject --jit reads the agent's dump and agrees with us ($out)"
  else echo "FAIL jvmti perf inject: $out"; fi
else echo "SKIP jvmti perf inject: perf inject --jit failed on this perf"; fi
# the region layout on the same recording: every frame (-g, frame pointers) and annotate as
# with per-function files
jt_region_frames "jvmti region" "$tmp/rec" perf.data
# [unknown] samples in JIT code: every sample of the java process whose symbol stays
# [unknown] and whose address some LOAD covers, split by whether a LOAD covered it at
# the sample's time (that would be a failure) or only later.
"$root/build/jitdump-cat" "$d" > "$tmp/loads.txt" 2>/dev/null
perf script -i perf.jit.data -F pid,time,ip,sym,dso -G --ns 2>/dev/null > "$tmp/samples.txt"
python3 - "$tmp/loads.txt" "$tmp/samples.txt" "$(basename "$d" .dump | sed 's/jit-//')" <<'EOF'
import re, sys
loads = []
for l in open(sys.argv[1]):
    m = re.search(r'LOAD\s+t=(\d+) .* addr 0x([0-9a-f]+) size (\d+) index \d+ (.*)$', l)
    if m: loads.append((int(m.group(1)), int(m.group(2), 16), int(m.group(3)), m.group(4)))
pid = sys.argv[3]
total = jit = before = covered = 0
where = {}
for l in open(sys.argv[2]):
    m = re.match(r'\s*(\d+)\s+(\d+)\.(\d+):\s+([0-9a-f]+)\s+(.*)$', l)
    if not m or m.group(1) != pid: continue
    total += 1
    t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, '0')[:9]); ip = int(m.group(4), 16)
    rest = m.group(5)
    hits = [(lt, n) for lt, a, s, n in loads if a <= ip < a + s]
    if not hits: continue
    jit += 1
    if '[unknown]' not in rest: continue
    if min(hits)[0] <= t: covered += 1
    else: before += 1
    n = min(hits)[1]
    where[n] = where.get(n, 0) + 1
ok = jit > 0 and covered == 0
print("%s jvmti unknown: %d of %d samples in jitted code stay [unknown], %d of them after a load record covered them"
      " (%d samples of java; in: %s)" % ("PASS" if ok else "FAIL", before + covered, jit, covered, total,
      ", ".join("%s %d" % (k, v) for k, v in sorted(where.items(), key=lambda x: -x[1])[:5]) or "-"))
EOF
