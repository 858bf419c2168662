#!/bin/sh
# jitanon-script against perf script (issue #34): one pass over a `perf record -g`
# recording with jitanon_inject, no writer and on_sample (examples/jitanon-script.c, the
# public frame API only), prints for every sample the `comm tid time:` line and its frames
# as `perf script -F comm,tid,time,ip,sym,dso` prints them for jitanon-inject's output of
# the same recording: the same samples in the same order, the same frames, the same
# symbol for every JIT and perf-map frame, the same dso for every other frame
# (tests/oracle/script_cmp.py).  Recordings: node with its jitdump (--perf-prof, JS
# compiled throughout: --interpreted-frames-native-stack), node with its perf map only
# (--perf-basic-prof), erlang with its dump and perf map (+JPperf true), Java with our
# JVMTI agent (build/libjitanon-jvmti.so), CPython 3.13 -X perf_jit with --call-graph
# dwarf (the frames jitanon-script unwinds from the copied stacks with the files' and the
# dump's CFI, as perf's unwinder does with the injected output).  Every frame is compared
# by its symbol too (--symbols: native and kernel symbols from the frame iterator's
# JITANON_FRAME_WANT_SYMBOL) for node (jitdump and perf map), a C program built -O2 -g with
# and without PIE and a C++ one (names demangled, as perf 6.1 prints them).  perf's inlined
# frames (functions inlined at a frame's address, from the file's DWARF: no frames of the
# recording) are set aside and counted: the comparison is with perf script --no-inline,
# and its listing without --no-inline is read against that one, its inlined frames counted
# in the PASS (script_cmp.py --inlined).  perf 6.1 built without libbfd (Debian's) prints
# them with --call-graph dwarf only (CPython's case); for the programs built -g the PASS
# also counts the inlined functions their DWARF holds at perf's frames (addr2line -i).
# Each PASS says how many native and kernel frames perf named and how many it left
# [unknown].  The cost of names: jitanon-script with and without them on the node
# recording (printed, not checked).
jt_name="jitanon-script"; . "$(dirname "$0")/common.sh"
S="$root/build/jitanon-script" J="$root/build/jitanon-inject"
[ -x "$S" ] && [ -x "$J" ] || jt_skip "build/jitanon-script or build/jitanon-inject not built (make all)"
jt_need_perf -g

# compare NAME DIR WANT [--edge-ok] [--symbols] [--dwarf FILE]: jitanon-script
# DIR/perf.data = perf script of the injected copy (perf's inlined frames set aside and
# counted); WANT (jit, map or native) frames must be among them (--edge-ok, --symbols,
# --dwarf: script_cmp.py; without --symbols both sides print names as stored).
compare() {
  name=$1 dir=$2 want=$3; shift 3
  dm=--no-demangle; case " $* " in *" --symbols "*) dm=;; esac
  mkdir -p "$dir/elf"
  if ! "$J" -i "$dir/perf.data" -o "$dir/ours.data" --elf-dir "$dir/elf" 2> "$dir/err"; then
    echo "FAIL jitanon-script $name: jitanon-inject failed: $(head -2 "$dir/err")"; return; fi
  perf script -i "$dir/ours.data" -F comm,tid,time,ip,sym,dso $dm --no-inline 2>/dev/null > "$dir/perf.txt"
  perf script -i "$dir/ours.data" -F comm,tid,time,ip,sym,dso $dm 2>/dev/null > "$dir/perf-inline.txt"
  if ! "$S" $dm "$dir/perf.data" > "$dir/ours.txt" 2> "$dir/err"; then
    echo "FAIL jitanon-script $name: $(head -2 "$dir/err")"; return; fi
  if out=$(python3 "$root/tests/oracle/script_cmp.py" "$dir/perf.txt" "$dir/ours.txt" --inlined "$dir/perf-inline.txt" "$@") &&
     printf '%s\n' "$out" | grep -Eq "[1-9][0-9]* $want"; then
    echo "PASS jitanon-script $name: as perf script prints the injected output ($out)"
  else echo "FAIL jitanon-script $name: ${out:-no output}"; fi
}

# guide DIR: the program of doc/embedding.md on DIR/perf.data names the same JIT frames
# as jitanon-script, leaf() with its source line; with its own I/O (--own-io) the same.
guide() {
  awk '/^```c$/ { on = 1; next } /^```$/ { on = 0 } on' "$root/doc/embedding.md" > "$tmp/guide.c"
  if ! ${CC:-cc} -std=c99 -O1 -I"$root" -o "$tmp/guide" "$tmp/guide.c" 2> "$tmp/guide.err"; then
    echo "FAIL doc/embedding.md: its program does not build: $(head -2 "$tmp/guide.err")"; return; fi
  "$tmp/guide" "$1/perf.data" > "$1/guide.txt" 2> "$1/guide.err"
  "$tmp/guide" --own-io "$1/perf.data" > "$1/guide-own.txt" 2>/dev/null
  jit=$(grep -c 'jitted-[0-9]*-r\{0,1\}[0-9]*\.so)$' "$1/ours.txt")
  leaf=$(grep -c '^	JS:[*~^]*leaf .*+0x[0-9a-f]* at \[eval\]:[0-9]' "$1/guide.txt")
  # its lines are what addr2line reads from the injected ELF files (the same frames, in
  # order, as jitanon-script's and perf script's of the injected output, which names the
  # file each JIT frame is in: a function's own, or a region file holding many)
  lines=$(python3 - "$1" <<'PY'
import re, subprocess, sys
d = sys.argv[1]
def frames(name):
    return [l.rstrip() for l in open(d + name, errors='replace') if l.startswith('\t')]
ours, perf, guide = frames('/ours.txt'), frames('/perf.txt'), frames('/guide.txt')
if len(perf) != len(ours):
    perf = []  # not frame for frame: nothing checked (the summary then fails)
seen, ok, bad, syms = set(), 0, [], {}
for o, p, g in zip(ours, perf, guide):
    mo = re.search(r'jitted-\d+-r?\d+\.so\)$', o)
    mp = re.match(r'\s*[0-9a-f]+ (.*) \((.*/jitted-[^/]*\.so)\)$', p)
    mg = re.search(r'\+0x([0-9a-f]+) at .*:(\d+)$', g)
    if not mo or not mp or not mg or (mp.group(2), mp.group(1), mg.group(1)) in seen or len(seen) >= 100:
        continue
    seen.add((mp.group(2), mp.group(1), mg.group(1)))
    f = mp.group(2)
    short = '%s(%s)+0x%s' % (f.rsplit('/', 1)[-1], mp.group(1), mg.group(1))
    try:
        if f not in syms:  # name -> values in f (a region file holds many functions)
            syms[f] = {}
            for l in subprocess.run(['nm', '--defined-only', f], capture_output=True, text=True).stdout.splitlines():
                v = l.split(' ', 2)
                syms[f].setdefault(v[2], []).append(int(v[0], 16))
        at = syms[f].get(mp.group(1), [])
        if len(at) != 1:  # a name twice in one file: which one is not known here
            continue
        a = '%x' % (at[0] + int(mg.group(1), 16))
        got = subprocess.run(['addr2line', '-e', f, a], capture_output=True, text=True).stdout
        line = got.strip().rsplit(':', 1)[-1].split(' ')[0]
    except (OSError, IndexError, ValueError):
        line = '?'
    if line == mg.group(2):
        ok += 1
    else:
        bad.append('%s: %s, addr2line %s' % (short, mg.group(2), line))
print('%d %d %s' % (ok, len(bad), '; '.join(bad[:2])))
PY
)
  set -- "$1" $lines
  # the build-ids it prints are perf buildid-list's for those files
  perf buildid-list -i "$1/perf.data" 2>/dev/null | awk '{ print $2 " " $1 }' | LC_ALL=C sort -u > "$1/bids.perf"
  sed -n 's/^	\(.*\)+0x[0-9a-f]* build-id \([0-9a-f]*\)$/\1 \2/p' "$1/guide.txt" |
    sed 's/^\[kernel.kallsyms\]_text /[kernel.kallsyms] /' | LC_ALL=C sort -u > "$1/bids.ours"
  nb=$(wc -l < "$1/bids.ours")
  if grep -q "samples, .* frames, $jit in JIT code" "$1/guide.err" && [ "$leaf" -gt 0 ] && [ "$nb" -gt 1 ] &&
     [ "${2:-0}" -gt 0 ] && [ "${3:-1}" = 0 ] &&
     cmp -s "$1/guide.txt" "$1/guide-own.txt" && [ -z "$(LC_ALL=C comm -23 "$1/bids.ours" "$1/bids.perf")" ]; then
    echo "PASS doc/embedding.md: its program names the $jit JIT frames jitanon-script names, $leaf leaf() frames with their line ($2 checked: addr2line on the ELF files gives the same), the build-ids of $nb files as perf buildid-list; the same with its own I/O ($(cat "$1/guide.err"))"
  else echo "FAIL doc/embedding.md: $(cat "$1/guide.err"); jitanon-script: $jit JIT frames; $leaf leaf() frames with a line; lines against addr2line: ${2:-?} same, ${3:-?} not (${4:-}); $nb build-ids, not perf's: $(LC_ALL=C comm -23 "$1/bids.ours" "$1/bids.perf" | head -2)"; fi
}

# node PROG: a second and a half of leaf() and mid() under perf record -g
node_js='function leaf(n){let s=0;for(let i=0;i<n;i++)s+=i%13;return s}
function mid(n){return leaf(n)+leaf(n>>1)}
let t=0,end=Date.now()+1500; while(Date.now()<end) t+=mid(2e4); console.log(t)'
record_node() {
  d=$1; shift
  mkdir -p "$d"
  (cd "$d" && perf record -q -g -k mono -e cpu-clock -o perf.data -- sh -c 'echo $$ > pid; exec "$@"' sh \
     node "$@" -e "$node_js" >/dev/null 2>&1)
  pids="$pids $(cat "$d/pid" 2>/dev/null)"
  [ -s "$d/perf.data" ]
}

# symaddr: node's symbols at chosen addresses.  A recording of node without callchains is
# rewritten (tests/symaddr_fixture.c) so that its user samples land, one each, just after
# every label inside a function in node's .symtab, halfway to the function's end and at
# its last byte (where both symbols hold the address and perf's tree of symbols decides),
# and at 3,000 random addresses of .text (gaps, PLT, aliases); jitanon-script names them
# as perf script does.
symaddr() {
  d=$tmp/symaddr; mkdir -p "$d"
  if ! ${CC:-cc} -std=c99 -O1 -I"$root" -o "$d/fx" "$root/tests/symaddr_fixture.c" 2> "$d/cc.err"; then
    echo "FAIL jitanon-script symaddr: tests/symaddr_fixture.c does not build: $(head -1 "$d/cc.err")"; return; fi
  node_bin=$(readlink -f "$(command -v node)")
  python3 - "$node_bin" > "$d/addrs" <<'PY'
import bisect, random, subprocess, sys
elf = sys.argv[1]
text = None
for l in subprocess.run(['readelf', '-SW', elf], capture_output=True, text=True).stdout.splitlines():
    f = l.replace('[ ', '[').split()
    if len(f) > 5 and f[1] == '.text':
        text = (int(f[3], 16), int(f[3], 16) + int(f[5], 16))
funcs, labels, tab = [], [], None
for l in subprocess.run(['readelf', '-sW', elf], capture_output=True, text=True).stdout.splitlines():
    if l.startswith('Symbol table'):
        tab = '.symtab' in l
    f = l.split()
    if not tab or len(f) < 8 or not f[0].endswith(':'):
        continue
    try:
        v, size = int(f[1], 16), int(f[2], 0)
    except ValueError:
        continue
    if f[3] == 'FUNC' and size:
        funcs.append((v, v + size))
    elif f[3] == 'NOTYPE' and f[6] not in ('UND', 'ABS') and text and text[0] <= v < text[1]:
        labels.append(v)
funcs.sort()
starts = [a for a, b in funcs]
out = []
for v in labels:
    i = bisect.bisect_right(starts, v) - 1
    if i >= 0 and funcs[i][0] < v < funcs[i][1]:
        out += [v + 1, (v + funcs[i][1]) // 2, funcs[i][1] - 1]
random.seed(7)
if text:
    out += [random.randrange(text[0], text[1]) for _ in range(3000)]
print('\n'.join('%x' % a for a in out))
PY
  (cd "$d" && perf record -q -k mono -e cpu-clock -o raw.data node -e \
     'let t=0,end=Date.now()+1500; while(Date.now()<end) t+=Math.sqrt(t+1); console.log(t)' > /dev/null 2>&1)
  if [ ! -s "$d/raw.data" ] || ! "$d/fx" "$d/raw.data" "$d/perf.data" "$d/addrs" 2> "$d/fx.err"; then
    echo "FAIL jitanon-script symaddr: $(head -1 "$d/fx.err" 2>/dev/null)"; return; fi
  nested=$(grep -c . "$d/addrs"); nested=$((nested - 3000))
  compare "node's .symtab at $nested addresses where symbols nest and 3000 random ones" "$d" "native named" --symbols
}

if command -v node >/dev/null 2>&1; then
  if record_node "$tmp/node" --perf-prof --interpreted-frames-native-stack; then
    compare "node (jitdump)" "$tmp/node" JIT --symbols
    guide "$tmp/node"
    # the cost of names: the same pass with and without them (tables read cold, demangled)
    t0=$(date +%s%N); "$S" --no-symbols "$tmp/node/perf.data" > /dev/null 2>&1; t1=$(date +%s%N)
    "$S" "$tmp/node/perf.data" > /dev/null 2>&1; t2=$(date +%s%N)
    echo "INFO jitanon-script node: $(( (t1 - t0) / 1000000 )) ms without native names, $(( (t2 - t1) / 1000000 )) ms with them"
  else echo "FAIL jitanon-script node (jitdump): could not record node"; fi
  if record_node "$tmp/nodemap" --perf-basic-prof --interpreted-frames-native-stack; then
    compare "node (perf map)" "$tmp/nodemap" perf-map --symbols
    symaddr
  else echo "FAIL jitanon-script node (perf map): could not record node"; fi
  # JS and wasm compiled while it runs: code placed over freed code, moves, tiers
  node_js='const w = new Uint8Array([0,97,115,109,1,0,0,0,1,7,1,96,2,127,127,1,127,3,2,1,0,7,7,1,3,97,100,100,0,0,10,9,1,7,0,32,0,32,1,106,11]);
let t = 0;
for (let k = 0; k < 400; k++) {
  const f = new Function("n", "let s = " + k + "; for (let i = 0; i < n; i++) s = (s * 31 + i) | 0; return s");
  const add = new WebAssembly.Instance(new WebAssembly.Module(w)).exports.add;
  for (let r = 0; r < 40; r++) t = add(t, f(2000)) | 0;
}
console.log(t)'
  if record_node "$tmp/nodebusy" --perf-prof; then
    # (its frames land in v8's String::GetImpl dispatcher at times, one of 2 of node's
    # 78,865 C++ names libstdc++ 12's __cxa_demangle rejects (status -2, as binutils 2.40's
    # c++filt does) and perf 6.1 prints demangled, reading no parameters: tools/symbols.h's
    # sy_demangle_head, c++filt -p's name)
    compare "node (JS and wasm compiled throughout)" "$tmp/nodebusy" JIT --symbols
  else echo "FAIL jitanon-script node (compiling throughout): could not record node"; fi
else echo "SKIP jitanon-script node: node not installed (apt-get install nodejs)"; fi

# native programs under perf record -g: C built -O2 -g as PIE (ET_DYN) and not (ET_EXEC),
# calling libc through the PLT, with a label inside a function (a NOTYPE symbol that
# reaches to the next: where both hold an address, perf's tree of symbols decides, which
# jitanon.h rebuilds); C++ (names demangled as perf prints them)
c_prog='#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static inline unsigned mix(unsigned x) { x ^= x >> 13; x *= 0x5bd1e995u; return x ^ (x >> 15); }
__attribute__((noinline)) static unsigned fill(int *v, int n, unsigned s) { for (int i = 0; i < n; i++) v[i] = (int)(s = mix(s + (unsigned)i)); return s; }
__attribute__((noinline)) size_t work(char *buf, int n) { size_t t = 0; for (int i = 0; i < n; i++) { memset(buf, 97 + i % 26, 4096); __asm__ volatile("jt_inner_label:"); buf[4095 - i % 64] = 0; t += strlen(buf); } return t; }
int main(void) {
  int *v = malloc(1 << 18); char *buf = malloc(4096); unsigned s = 1; size_t t = 0;
  clock_t end = clock() + CLOCKS_PER_SEC * 6 / 10;
  while (clock() < end) { s = fill(v, 1 << 16, s); qsort(v, 1 << 16, sizeof *v, cmp); t += work(buf, 200); }
  printf("%u %zu\n", s, t); free(v); free(buf); return 0; }'
cxx_prog='#include <vector>
#include <cstdio>
namespace ns { struct Acc { long v = 0; __attribute__((noinline)) void add(long x, int k) { for (int i = 0; i < k; i++) v += (x * i) % 7; } };
template <typename T> __attribute__((noinline)) T spin(std::vector<T> &w) { T s = 0; for (auto &x : w) s += x * 3 % 11; return s; } }
int main() { ns::Acc a; std::vector<long> w(1 << 16, 3); long t = 0; for (int r = 0; r < 2000; r++) { a.add(r, 20000); t += ns::spin(w); } std::printf("%ld %ld\n", a.v, t); }'
native() { # native NAME COMPILER SOURCE-SUFFIX SOURCE FLAGS...
  n=$1 comp=$2 sfx=$3 src=$4; shift 4
  d="$tmp/native-$sfx-$#-$(printf '%s' "$*" | tr -dc a-z)"
  mkdir -p "$d"; printf '%s\n' "$src" > "$d/prog.$sfx"
  if ! $comp -O2 -g "$@" -o "$d/prog" "$d/prog.$sfx" 2> "$d/cc.err"; then
    echo "FAIL jitanon-script $n: does not build: $(head -2 "$d/cc.err")"; return; fi
  (cd "$d" && perf record -q -g -k mono -e cpu-clock -o perf.data ./prog > /dev/null 2>&1)
  if [ -s "$d/perf.data" ]; then compare "$n (-O2 -g $*)" "$d" "native named" --symbols --dwarf "$d/prog"
  else echo "FAIL jitanon-script $n: could not record it"; fi
}
native "C PIE" "${CC:-cc}" c "$c_prog" -fPIE -pie
native "C no-PIE" "${CC:-cc}" c "$c_prog" -fno-PIE -no-pie
if command -v "${CXX:-c++}" >/dev/null 2>&1; then native "C++" "${CXX:-c++}" cpp "$cxx_prog"
else echo "SKIP jitanon-script C++: no C++ compiler"; fi

# the vdso: a C program spending its time in clock_gettime and gettimeofday (the vdso's),
# recorded without build-ids (-B: perf 6.1 reads the vdso of its own process, the same
# kernel's, and names them __vdso_*) and raw (-N: the recording names the vdso's build-id
# and perf's cache has no copy: perf leaves them [unknown], jitanon-script too).  Each with
# a build-id cache of its own, empty: jt_need_perf's probe left the vdso in $tmp/.debug.
vdso_prog='#include <stdio.h>
#include <sys/time.h>
#include <time.h>
int main(void) {
  struct timespec ts, end; struct timeval tv; unsigned long s = 0;
  clock_gettime(CLOCK_MONOTONIC, &end); end.tv_nsec += 600000000; if (end.tv_nsec >= 1000000000) end.tv_sec++, end.tv_nsec -= 1000000000;
  do { for (int i = 0; i < 1000; i++) { gettimeofday(&tv, 0); s += (unsigned long)tv.tv_usec; } clock_gettime(CLOCK_MONOTONIC, &ts); }
  while (ts.tv_sec < end.tv_sec || (ts.tv_sec == end.tv_sec && ts.tv_nsec < end.tv_nsec));
  printf("%lu\n", s); return 0; }'
vdso_run() { # vdso_run NAME PERF-RECORD-FLAG WANT: WANT (named or unknown) vdso frames, none of the other
  d="$tmp/vdso$2"; mkdir -p "$d"; printf '%s\n' "$vdso_prog" > "$d/prog.c"
  if ! ${CC:-cc} -std=gnu99 -O2 -o "$d/prog" "$d/prog.c" 2> "$d/cc.err"; then
    echo "FAIL jitanon-script vdso: does not build: $(head -2 "$d/cc.err")"; return; fi
  (export HOME="$d" PERF_BUILDID_DIR="$d/.debug"; cd "$d" && perf record -q $2 -g -k mono -e cpu-clock -o perf.data ./prog > /dev/null 2>&1)
  if [ ! -s "$d/perf.data" ]; then echo "FAIL jitanon-script vdso $1: could not record it"; return; fi
  out=$(export HOME="$d" PERF_BUILDID_DIR="$d/.debug"; compare "vdso $1 ($2)" "$d" "native named" --symbols)
  named=$(grep -c '__vdso_.* (\[vdso\])$' "$d/ours.txt"); unk=$(grep -c '\[unknown\] (\[vdso\])$' "$d/ours.txt")
  pnamed=$(grep -c '__vdso_.* (\[vdso\])$' "$d/perf.txt")
  case "$3:$named:$unk" in
    named:0:*|named:*:[1-9]*|unknown:*:0|unknown:[1-9]*:*) echo "FAIL jitanon-script vdso $1: $named vdso frames named, $unk [unknown] (want $3; perf named $pnamed): $out";;
    *) printf '%s\n' "$out" | sed "s/^PASS [^:]*:/& $named vdso frames named, $unk [unknown] (perf: $pnamed named);/";;
  esac
}
vdso_run "without build-ids" -B named
vdso_run "raw" -N unknown

if command -v erl >/dev/null 2>&1; then
  mkdir "$tmp/erl"
  (cd "$tmp/erl" && perf record -q -g -k mono -e cpu-clock -o perf.data erl -noshell +S 1 +JPperf true -eval '
    F = fun F(0, A) -> A; F(N, A) -> F(N - 1, A + N rem 7) end,
    io:format("~p ~p~n", [os:getpid(), F(1000000, 0)]), halt().' > out.txt 2>/dev/null)
  epid=$(awk '{print $1; exit}' "$tmp/erl/out.txt" | tr -dc 0-9); pids="$pids $epid"
  if [ -s "$tmp/erl/perf.data" ] && [ -n "$epid" ]; then compare "erlang (dump and perf map)" "$tmp/erl" JIT --symbols
  else echo "FAIL jitanon-script erlang: could not record erl"; fi
else echo "SKIP jitanon-script erlang: erl not installed (apt-get install erlang-base)"; fi

agent="$root/build/libjitanon-jvmti.so"
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 && [ -f "$agent" ]; then
  mkdir -p "$tmp/java/demo"
  printf '%s\n' 'package demo;' 'public class Hot {' \
    '  static long mix(long a, long i) { return (a >>> 3) ^ (i * 0x9E3779B97F4A7C15L); }' \
    '  static long spin(long n) { long a = 1; for (long i = 0; i < n; i++) a += mix(a, i) % 1000003; return a; }' \
    '  public static void main(String[] x) { long end = System.nanoTime() + 1_500_000_000L, s = 0;' \
    '    while (System.nanoTime() < end) s += spin(200_000); System.out.println(s); } }' > "$tmp/java/demo/Hot.java"
  if javac -d "$tmp/java" "$tmp/java/demo/Hot.java" 2> "$tmp/java/err"; then
    (cd "$tmp/java" && perf record -q -g -k mono -e cpu-clock -o perf.data java "-agentpath:$agent=dir=$tmp/java" \
       -XX:+PreserveFramePointer -XX:-UsePerfData -cp "$tmp/java" demo.Hot >/dev/null 2>&1)
    if [ -s "$tmp/java/perf.data" ]; then compare "java (JVMTI agent)" "$tmp/java" JIT --symbols
    else echo "FAIL jitanon-script java: could not record java"; fi
  else echo "FAIL jitanon-script java: javac failed: $(head -c 200 "$tmp/java/err")"; fi
else echo "SKIP jitanon-script java: java, javac or build/libjitanon-jvmti.so missing (a JDK: make builds the agent)"; fi

if py=$(jt_python 3.13); then
  mkdir -p "$tmp/py"
  printf '%s\n' 'import os, time' 'def fib(n):' '    return n if n < 2 else fib(n - 1) + fib(n - 2)' \
    't = time.time()' 'while time.time() - t < 0.5:' '    fib(18)' 'print("pid", os.getpid())' > "$tmp/py/app.py"
  (cd "$tmp/py" && perf record -q -k mono -e cpu-clock --call-graph dwarf -o perf.data -- "$py" -X perf_jit app.py \
     > out.txt 2>/dev/null)
  ppid=$(sed -n 's/^pid //p' "$tmp/py/out.txt"); pids="$pids $ppid"
  if [ -s "$tmp/py/perf.data" ] && [ -n "$ppid" ]; then compare "CPython 3.13 (-X perf_jit, --call-graph dwarf)" "$tmp/py" JIT --edge-ok --symbols
  else echo "FAIL jitanon-script CPython 3.13: could not record python3.13 -X perf_jit"; fi
else echo "SKIP jitanon-script CPython 3.13: no CPython 3.13 (pyenv install 3.13.0)"; fi
