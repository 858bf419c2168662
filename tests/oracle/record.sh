#!/bin/sh
# jitanon-record on real runtimes: `jitanon-record -- node app.js` (and deno, bun, python
# 3.13, java with the agent built, erl), with no runtime flag typed, must give a
# perf.jit.data in which perf script names at least 90% of the samples that landed in JIT
# code, and leave nothing in /tmp for the recording's pids.  SIGINT to jitanon-record 2 s
# into a 10 s run, and Ctrl-C (SIGINT to the process group), `timeout -s INT` with a
# group SIGINT on top, with node, python, deno, bun and java, must still give a named
# profile (the same 90%): SIGINTs that come together are one Ctrl-C.  Plus what the
# tool adds to a command (--print-command: wrappers, unknown programs) and perf's errors
# turned into one sentence.  One small app per runtime, ~1 s each.
jt_name="record"; . "$(dirname "$0")/common.sh"
rec="$root/build/jitanon-record"
[ -x "$rec" ] || jt_skip "build/jitanon-record not built (make)"
mkdir -p "$tmp/w" "$tmp/bin"
cd "$tmp/w" || exit 1

# 1. What it would run (no perf needed).
pc() { "$rec" --print-command -- "$@" 2>&1; }
bad=""
pc node app.js | grep -q -- ' node --perf-prof ' || bad="$bad node"
pc env FOO=1 node app.js | grep -q -- 'env .*FOO=1 node --perf-prof ' || bad="$bad env"
pc sh -c 'exec node app.js' | grep -q -- '^NODE_OPTIONS=.*--perf-prof' || bad="$bad sh-c"
pc true | grep -q -- 'no JIT flag added' || bad="$bad unknown"
"$rec" --print-command --no-jit-flags -- node app.js 2>&1 | grep -q -- " -- node app.js$" || bad="$bad --no-jit-flags"
pc erl -noshell | grep -q -- ' erl +JPperf true -noshell' || bad="$bad erl"
if d=$(jt_deno); then
  pc "$d" run app.js | grep -q -- " run '--v8-flags=--perf-prof,--perf-prof-path=" || bad="$bad deno"; fi
if b=$(jt_bun); then pc "$b" app.js | grep -q -- '^BUN_JSC_useJITDump=1 BUN_JSC_jitDumpDirectory=' || bad="$bad bun"; fi
if p=$(jt_python 3.13); then pc "$p" app.py | grep -q -- ' -X perf_jit app.py' || bad="$bad python3.13"
  pc "$p" app.py | grep -q -- '--call-graph dwarf' || bad="$bad python-dwarf"; fi
if [ -z "$bad" ]; then echo "PASS record --print-command: node, env, sh -c, deno, bun, python, erl flags; unknown programs noted"
else echo "FAIL record --print-command: wrong for$bad"; fi

# 2. perf's trouble is one sentence with the fix.
ln -s "$(command -v node 2>/dev/null || echo /usr/bin/node)" "$tmp/bin/node"
out=$(PATH="$tmp/bin" "$rec" -- node -e 0 2>&1)
cat > "$tmp/perf" <<'EOF'
#!/bin/sh
echo "Error:" >&2
echo "Access to performance monitoring and observability operations is limited." >&2
echo "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open" >&2
exit 255
EOF
chmod +x "$tmp/perf"; ln -s "$tmp/perf" "$tmp/bin/perf"
out2=$(PATH="$tmp/bin" "$rec" -- node -e 0 2>&1)
rm -f "$tmp/bin/perf"
if [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q 'perf is not installed: install it' &&
   [ "$(printf '%s\n' "$out2" | wc -l)" -eq 1 ] && printf '%s' "$out2" | grep -q 'perf_event_paranoid.*sysctl kernel.perf_event_paranoid=1'; then
  echo "PASS record perf errors: no perf, perf_event_paranoid: one sentence each, with the fix"
else echo "FAIL record perf errors: '$out' / '$out2'"; fi

# 3. Every CLI's front door: binary output refused on a terminal (script(1) gives one), the
# OS's reason for an input that cannot be opened, --help on one screen (24 lines).
inj="$root/build/jitanon-inject"
bad=""
if command -v script >/dev/null 2>&1; then
  script -qc "'$inj' -i '$root/README.md'" /dev/null > "$tmp/tty.txt" 2>&1
  grep -q 'refusing to write binary perf.data to a terminal: give -o FILE, or pipe it: jitanon-inject -i .* | perf report -i -' "$tmp/tty.txt" || bad="$bad tty"
  script -qc "'$root/build/perfdata-cat' --copy - '$root/README.md'" /dev/null 2>&1 | grep -q 'refusing to write binary' || bad="$bad perfdata-cat-tty"
else echo "SKIP record front door tty: no script(1) (apt-get install bsdutils)"; fi
"$inj" -i "$tmp/missing.data" -o "$tmp/x.data" 2>&1 | grep -q "^jitanon-inject: cannot open $tmp/missing.data: No such file or directory$" || bad="$bad missing"
"$root/build/perfdata-cat" "$tmp/missing.data" 2>&1 | grep -q "No such file or directory" || bad="$bad perfdata-cat-missing"
"$rec" -- "$tmp/missing-prog" 2>&1 | grep -q "missing-prog: No such file or directory" || bad="$bad record-missing"
for t in jitanon-inject jitanon-record symbolize jitdump-cat perfdata-cat jitdump-elf tinyjit jitgen; do
  [ -x "$root/build/$t" ] || continue
  n=$("$root/build/$t" --help 2>&1 | wc -l); [ "$n" -le 24 ] || bad="$bad $t-help:$n-lines"
done
"$rec" --help | head -n 1 | grep -q -- '-- COMMAND.*jitanon-record -- node app.js' || bad="$bad record-help-first"
# the output named with the OS's reason; a directory, an empty file, an empty stdin said as such
"$inj" -i "$root/README.md" -o /nonexistent/x.data 2>&1 | grep -q "cannot write /nonexistent/x.data: /nonexistent: No such file or directory" || bad="$bad output"
"$inj" -i . -o "$tmp/x.data" 2>&1 | grep -q "^jitanon-inject: \. is a directory" || bad="$bad dir"
: > "$tmp/empty.data"
"$inj" -i "$tmp/empty.data" -o "$tmp/x.data" 2>&1 | grep -q "empty.data is empty" || bad="$bad empty"
"$inj" -o "$tmp/x.data" < "$tmp/empty.data" 2>&1 | grep -q "nothing came in on stdin" || bad="$bad stdin"
if [ -z "$bad" ]; then echo "PASS record front door: terminal refused, OS reason named, --help within 24 lines, common case first"
else echo "FAIL record front door:$bad"; fi

jt_need_perf

cat > app.js <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const ms = +(process.argv[2] || globalThis.Deno?.args[0] || 800);
console.log("started");
const end = Date.now() + ms; let s = 0;
while (Date.now() < end) s += fib(20);
console.log(s);
EOF

# check NAME OUT [stacks]: >= 90% of the samples in JIT code named (perf script's answer
# on the output; with "stacks", of the callchain frames in JIT code: python's JIT code is
# a trampoline per function, which few samples land in), and no file of the recording's
# pids in /tmp.  JIT code: an ELF we wrote, or anonymous memory (perf calls it
# /tmp/perf-<pid>.map, //anon or [unknown]; shared, as PHP's JIT buffer: /dev/zero (deleted)).
check() {
  name=$1; data=$2; mode=${3:-}
  if [ ! -s "$data" ]; then echo "FAIL record $name: no $data ($(tail -n 3 "$tmp/$name.err" | tr '\n' ' '))"; return; fi
  if [ "$mode" = stacks ]; then
    perf script -i "$data" -F pid,ip,sym,dso 2>/dev/null > "$tmp/$name.script"
  else
    perf script -i "$data" -F pid,ip,sym,dso -G 2>/dev/null > "$tmp/$name.script"
  fi
  set -- $(awk -v m="$mode" 'm != "stacks" || /^\t/ { d = $NF; s = $(NF-1)
      if (d ~ /jitted-/ || d ~ /\/\/anon/ || d ~ /\[anon/ || d ~ /memfd/ || d ~ /\/dev\/zero/ || d ~ /perf-[0-9]+\.map/ || d == "([unknown])") {
        j++; if (d ~ /jitted-/ && s != "[unknown]") n++ } }
      END { printf "%d %d\n", j, n }' "$tmp/$name.script")
  jit=$1; named=$2
  left=""
  # the pids: every line's first field (-G), else the sample header lines' (frames start with a tab)
  pidlist=$(awk -v m="$mode" 'NF && (m != "stacks" || !/^\t/) {print $1}' "$tmp/$name.script" | sort -u)
  for p in $pidlist; do
    for f in /tmp/jit-$p.dump /tmp/perf-$p.map /tmp/jitted-$p-*.so /tmp/jit-*-$p.dump; do
      [ -e "$f" ] && left="$left $f"; done
  done
  what=samples; [ "$mode" = stacks ] && what="stack frames"
  if [ -n "$left" ]; then echo "FAIL record $name: left in /tmp:$left"
  elif [ "$jit" -gt 0 ] && [ $((named * 100)) -ge $((jit * 90)) ]; then
    echo "PASS record $name: $named of $jit JIT $what named ($(echo $pidlist | wc -w) pids, nothing left in /tmp)"
  else echo "FAIL record $name: $named of $jit JIT $what named (bar: 90%)"; fi
}

# 4. One run per runtime.
pp=""; [ -x "$root/build/symbolize" ] && pp="--pprof node.pb" # (it runs symbolize from beside it)
"$rec" -q -o node.data $pp -- node app.js 800 >/dev/null 2>"$tmp/node.err"; check node node.data
if [ -f node.svg ] && grep -q 'fib' node.svg && ls jitted/jitted-*.so >/dev/null 2>&1 && ! ls .jitanon-record-* jit-*.dump isolate-*.log >/dev/null 2>&1
then echo "PASS record node files: node.svg names fib; ELF files in jitted/; no dump, log or private directory left"
else echo "FAIL record node files: $(ls -a | tr '\n' ' ')"; fi
# native frames by their symbols (issue 44): V8's builtins and C++ (demangled) in the flame graph.
# A builtin's frame takes its node symbol (Builtins_X) or, where V8 logged the builtin in
# its jitdump and a sample hit it, the jitdump's name (Builtin:X, as perf inject --jit's
# output names it too): which of them a short run draws varies from run to run (CI: 0
# Builtins_* once), so either counts.
nb=$(grep -c '<title>Builtins\?[_:]' node.svg); nv=$(grep -c '<title>v8::internal::' node.svg)
if [ "$nb" -gt 0 ] && [ "$nv" -gt 0 ]; then echo "PASS record node flame graph: native frames by name ($nb Builtins_*/Builtin:*, $nv v8::internal::*)"
else echo "FAIL record node flame graph: $nb Builtins_*/Builtin:* and $nv v8::internal::* frames ($(grep -o '<title>\[[^]]*\]' node.svg | sort -u | head -3 | tr '\n' ' '))"; fi
# --pprof: the profile's main binary (its first Mapping, go tool pprof's "File:") is the
# program recorded, not jitanon-record, which perf starts and which execs the program
if [ -z "$pp" ]; then echo "SKIP record node pprof: build/symbolize not built (make)"
elif ! command -v go >/dev/null 2>&1; then echo "SKIP record node pprof: go not installed (apt-get install golang-go)"
else
  main=$(GOCACHE="$tmp/gocache" GOTOOLCHAIN=local go tool pprof -raw node.pb 2>/dev/null | sed -n '/^Mappings/{n;p;q;}' | awk '{print $3}')
  if [ -n "$main" ] && [ "$main" = "$(readlink -f "$(command -v node)")" ]; then
    echo "PASS record node pprof: the main binary (first mapping) is $main"
  else echo "FAIL record node pprof: the main binary is '${main:-none}', not node ($(tail -n 2 "$tmp/node.err" | tr '\n' ' '))"; fi
  nat=$(GOCACHE="$tmp/gocache" GOTOOLCHAIN=local go tool pprof -top -nodecount=100000 node.pb 2>/dev/null | grep -c -E ' (Builtins_|v8::)')
  if [ "$nat" -gt 0 ]; then echo "PASS record node pprof: go tool pprof -top names native functions ($nat Builtins_* / v8::* rows)"
  else echo "FAIL record node pprof: no Builtins_* or v8::* function in go tool pprof -top"; fi
fi
# the runtime's flag forgotten: jitanon-inject says so, with the flags
perf record -q -k mono -e cpu-clock -o plain.data node app.js 200 >/dev/null 2>&1
if "$root/build/jitanon-inject" -i plain.data -o plain.out 2>&1 | grep -q "no jitdump in plain.data.*node --perf-prof"
then echo "PASS record no jitdump: jitanon-inject names the runtimes' flags"
else echo "FAIL record no jitdump: jitanon-inject said nothing of the missing jitdump"; fi
# --clean: the ELF files and their build-id cache entries go, the profile stays
n=$(ls "$PERF_BUILDID_DIR$tmp/w/jitted" 2>/dev/null | wc -l)
"$rec" -o node.data --clean > "$tmp/clean.out" 2>&1
if [ "$n" -gt 0 ] && [ ! -e jitted ] && [ ! -e "$PERF_BUILDID_DIR$tmp/w/jitted" ] && [ -s node.data ] &&
   grep -q "removed .*jitted" "$tmp/clean.out" && ! find "$PERF_BUILDID_DIR/.build-id" -type l -lname "*$tmp/w/jitted/*" | grep -q .
then echo "PASS record --clean: jitted/ and its $n build-id cache entries removed, the profile kept"
else echo "FAIL record --clean: cache had $n; $(ls | tr '\n' ' '); $(cat "$tmp/clean.out")"; fi

if d=$(jt_deno); then
  "$rec" -q -o deno.data -- "$d" run app.js 800 >/dev/null 2>"$tmp/deno.err"; check deno deno.data
else echo "SKIP record deno: no deno (build/npm: .ci/run installs it)"; fi

if b=$(jt_bun); then
  "$rec" -q -o bun.data -- "$b" app.js 800 >/dev/null 2>"$tmp/bun.err"; check bun bun.data
else echo "SKIP record bun: no bun (build/npm: .ci/run installs it)"; fi

if p=$(jt_python 3.13); then
  cat > app.py <<'EOF'
import sys, time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.time() + int(sys.argv[1]) / 1000; s = 0
while time.time() < end: s += fib(15)
print(s)
EOF
  "$rec" -q -o py.data --folded py.folded -- "$p" app.py 800 >/dev/null 2>"$tmp/python.err"; check python3.13 py.data stacks
  if grep -q 'py::fib:' py.folded 2>/dev/null; then echo "PASS record python3.13 stacks: py::fib in the DWARF-unwound flame graph"
  else echo "FAIL record python3.13 stacks: no py::fib in py.folded"; fi
else echo "SKIP record python3.13: no python3.13 (pyenv 3.13.x)"; fi

if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 && [ -f "$root/build/libjitanon-jvmti.so" ]; then
  mkdir -p j && cat > j/App.java <<'EOF'
public class App {
    static long mix(long acc, long i) { return (acc >>> 3) ^ (i * 0x9E3779B97F4A7C15L); }
    static long spin(long n) { long acc = 1; for (long i = 0; i < n; i++) acc += mix(acc, i) % 1000003; return acc; }
    public static void main(String[] a) {
        long end = System.nanoTime() + Long.parseLong(a[0]) * 1_000_000L, s = 0;
        System.out.println("started");
        while (System.nanoTime() < end) s += spin(200_000);
        System.out.println(s);
    }
}
EOF
  if javac -d j j/App.java 2>"$tmp/javac.err"; then
    "$rec" -q -o java.data -- java -cp j App 800 >/dev/null 2>"$tmp/java.err"; check java java.data
  else echo "FAIL record java: javac: $(head -c 200 "$tmp/javac.err")"; fi
else echo "SKIP record java: needs java, javac and build/libjitanon-jvmti.so"; fi

if command -v erl >/dev/null 2>&1 && command -v erlc >/dev/null 2>&1; then
  cat > e.erl <<'EOF'
-module(e).
-export([main/1]).
fib(N) when N < 2 -> N;
fib(N) -> fib(N - 1) + fib(N - 2).
loop(End, S) -> case erlang:monotonic_time(millisecond) < End of true -> loop(End, S + fib(15)); false -> S end.
main([Ms]) -> io:format("~p~n", [loop(erlang:monotonic_time(millisecond) + list_to_integer(Ms), 0)]).
EOF
  erlc e.erl && "$rec" -q -o erl.data -- erl -noshell -run e main 800 -s init stop >/dev/null 2>"$tmp/erl.err"
  check erl erl.data
else echo "SKIP record erl: no erl/erlc (apt-get install erlang-base)"; fi
if command -v php >/dev/null 2>&1 && php -m 2>/dev/null | grep -qi 'opcache'; then
  # written just now: jitanon-record must lift opcache.file_update_protection (2 s)
  cat > app.php <<'EOF'
<?php
function fib($n) { return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }
$end = microtime(true) + $argv[1] / 1000; $s = 0;
while (microtime(true) < $end) $s += fib(20);
echo $s, "\n";
EOF
  pc php app.php | grep -q -- ' php -d opcache.enable_cli=1 .* -d opcache.jit_debug=0x20 .*app.php' ||
    echo "FAIL record php --print-command: $(pc php app.php | tail -n 1)"
  "$rec" -q -o php.data -- php app.php 800 >/dev/null 2>"$tmp/php.err"; check php php.data
else echo "SKIP record php: no php with opcache (apt-get install php-cli php8.2-opcache)"; fi

# 5. SIGINT to jitanon-record 2 s into a 10 s run: the recording stops, the profile is made.
"$rec" -q -o int.data -- node app.js 10000 > "$tmp/int.out" 2>"$tmp/int.err" &
rp=$!
i=0; while [ $i -lt 100 ] && ! grep -q started "$tmp/int.out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
sleep 2 # 1 s on a loaded machine was mostly V8 starting: 5 of 121 samples were named
kill -INT $rp
wait $rp; rc=$?
if [ $rc -eq 0 ] && ! grep -q '^[0-9]' "$tmp/int.out"; then check "sigint" int.data
else echo "FAIL record sigint: exit $rc, the program ran to its end or no profile ($(tail -n 2 "$tmp/int.err" | tr '\n' ' '))"; fi

# 6. Ctrl-C: SIGINT to the whole process group (as a terminal sends it) 2 s into a program
# that runs until stopped.  The program gets it alone (perf keeps recording until it has
# ended): python unwinds and writes out its jitdump; node dies with the tail of its
# jitdump in its buffer, and its perf map (line-buffered) names what that held.  Deno,
# bun and java: section 4's programs run for 3 s, stopped 1.5 s in (~4 s each).  Then
# the same with the SIGINTs of timeout(1) and of a supervisor that signals it too.
cat > srv.js <<'EOF2'
console.log("started");
function mk(i) { return { id: i, score: (i * 2654435761) % 1000 }; }
function cmp(a, b) { return a.score - b.score || a.id - b.id; }
function work() { const a = []; for (let i = 0; i < 2000; i++) a.push(mk(i)); a.sort(cmp); return a[0].id; }
let s = 0;
function tick() { const end = Date.now() + 50; while (Date.now() < end) s += work(); setImmediate(tick); }
tick();
EOF2
cat > srv.py <<'EOF2'
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
print("started", flush=True)
while True: fib(15)
EOF2
# SIGINT AFTER seconds past the program's "started", delivered HOW:
#   group    to jitanon-record's process group (setsid), as a terminal sends Ctrl-C
#   timeout  by `timeout -s INT` (to its child, then to its group, microseconds apart),
#            fired early with SIGALRM (what its timer sends it), so the delay counts from
#            "started" and not from a start that a loaded machine makes slow
#   both     a group SIGINT to a `timeout -s INT` (a CI job cancelled): timeout passes it
#            on to its child and its group, so jitanon-record has up to three at once
#   twice    to jitanon-record alone, twice, the second as soon as the first is no
#            longer pending (/proc: ShdPnd; one awk's time, a millisecond or two): two
#            SIGINTs together that the kernel did not merge into one (timeout's two
#            often are merged, and then they never made a second Ctrl-C)
# All are one Ctrl-C: perf must keep recording until the program has ended.  A program
# that printed its result (a number) ran to its end: the interrupt did not reach it.
sigint_pending() { awk '/^(ShdPnd|SigPnd):/ { if (index("2367abef", substr($2, length($2)))) p = 1 } END { exit !p }' "/proc/$1/status" 2>/dev/null; }
stop() { # NAME MODE AFTER HOW COMMAND...
  name=$1; mode=$2; after=$3; how=$4; shift 4
  case $how in
    timeout | both) timeout -s INT 600 "$rec" -q -o "$name.data" -- "$@" > "$tmp/$name.out" 2>"$tmp/$name.err" & ;;
    *) setsid "$rec" -q -o "$name.data" -- "$@" > "$tmp/$name.out" 2>"$tmp/$name.err" & ;;
  esac
  sp=$! # timeout makes a process group of its own, as setsid does
  i=0; while [ $i -lt 100 ] && ! grep -q started "$tmp/$name.out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
  sleep "$after"
  case $how in
    group | both) kill -INT -"$sp" 2>/dev/null || kill -INT "$sp" ;;
    timeout) kill -ALRM "$sp" ;;
    twice) kill -INT "$sp"; i=0; while [ $i -lt 1000 ] && sigint_pending "$sp"; do i=$((i + 1)); done; kill -INT "$sp" ;;
  esac
  wait $sp
  if grep -q '^[0-9]' "$tmp/$name.out"; then echo "FAIL record $name: the program ran to its end, SIGINT did not stop it"
  else check "$name" "$name.data" $mode; fi
}
if ! command -v setsid >/dev/null 2>&1; then echo "SKIP record ctrl-c: no setsid(1) (util-linux)"
elif ! timeout --version 2>/dev/null | grep -q coreutils; then echo "SKIP record ctrl-c: no GNU timeout(1) (coreutils)"
else
  py=$(jt_python 3.13) || echo "SKIP record ctrl-c-python3.13: no python3.13 (pyenv 3.13.x)"
  de=$(jt_deno) || echo "SKIP record ctrl-c-deno: no deno (build/npm: .ci/run installs it)"
  bu=$(jt_bun) || echo "SKIP record ctrl-c-bun: no bun (build/npm: .ci/run installs it)"
  [ -f j/App.class ] || echo "SKIP record ctrl-c-java: no j/App.class (section 4: needs java, javac and build/libjitanon-jvmti.so)"
  # Every runtime under a group SIGINT and under both (timeout's two plus the group's);
  # python, the one whose names are lost when perf stops early (CPython buffers its
  # jitdump and writes it out at exit: 1-8% named when perf stopped at once), under all
  # four; sigint-twice failed so every time before SIGINTs were taken in bursts.  Node,
  # deno and bun keep their names even then: for them these check the delivery only
  # (~5 s a recording: each mode for each runtime would add a minute).
  for how in group both; do
    n=$how; [ $how = group ] && n=ctrl-c
    stop $n-node "" 2 $how node srv.js
    [ -z "$py" ] || stop $n-python3.13 stacks 2 $how "$py" srv.py
    [ -z "$de" ] || stop $n-deno "" 1.5 $how "$de" run app.js 3000
    [ -z "$bu" ] || stop $n-bun "" 1.5 $how "$bu" app.js 3000
    [ ! -f j/App.class ] || stop $n-java "" 1.5 $how java -cp j App 3000
  done
  if [ -n "$py" ]; then
    stop timeout-python3.13 stacks 1 timeout "$py" srv.py
    stop sigint-twice-python3.13 stacks 1 twice "$py" srv.py
  fi
fi
