#!/bin/sh
# Real dumps from node (--perf-prof) and erlang (+JPperf dump), recorded now, read by
# build/jitdump-cat; record counts are checked against an independent reader (python3).
jt_name="jitdump"; . "$(dirname "$0")/common.sh"
count_py='
import struct, sys
d = open(sys.argv[1], "rb").read()
e = "<" if struct.unpack_from("<I", d, 0)[0] == 0x4A695444 else ">"
pos = struct.unpack_from(e + "I", d, 8)[0]
n = {}
while pos + 16 <= len(d):
    i, size = struct.unpack_from(e + "II", d, pos)
    if size < 16 or pos + size > len(d): break
    n[i] = n.get(i, 0) + 1
    pos += size
names = ["LOAD", "MOVE", "DEBUG_INFO", "CLOSE", "UNWINDING_INFO"]
for k in range(5): print("%-16s %d" % (names[k], n.get(k, 0)))
print("%-16s %d" % ("UNKNOWN", sum(v for k, v in n.items() if k >= 5)))
'
check_counts() { # name dump
  if ! command -v python3 >/dev/null 2>&1; then echo "SKIP jitdump $1 counts: python3 not installed"; return; fi
  python3 -c "$count_py" "$2" > "$tmp/expect" 2>&1
  ./build/jitdump-cat --summary "$2" | sed -n '/^\(LOAD\|MOVE\|DEBUG_INFO\|CLOSE\|UNWINDING_INFO\|UNKNOWN\) /p' > "$tmp/got"
  if cmp -s "$tmp/expect" "$tmp/got" && [ -s "$tmp/got" ]; then echo "PASS jitdump $1 counts match an independent reader ($(tr -s ' ' < "$tmp/got" | tr '\n' ' '))"
  else echo "FAIL jitdump $1 counts"; diff "$tmp/expect" "$tmp/got"; fi
  if ./build/jitdump-cat --check "$2" > "$tmp/check" 2>&1; then echo "PASS jitdump $1 --check reads it"
  else echo "FAIL jitdump $1 --check"; tail -5 "$tmp/check"; fi
}

if command -v node >/dev/null 2>&1; then
  mkdir "$tmp/node"
  (cd "$tmp/node" && node --perf-prof -e 'function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
    let t=0; for (let k=0;k<200;k++) t+=f(2e4); console.log(t)' >/dev/null 2>&1)
  d=$(ls "$tmp"/node/jit-*.dump 2>/dev/null | head -1)
  if [ -n "$d" ]; then check_counts node "$d"; else echo "FAIL jitdump node: node --perf-prof wrote no dump"; fi
else
  echo "SKIP jitdump node: node not installed"
fi

if command -v erl >/dev/null 2>&1; then
  erl -noshell +JPperf dump -eval 'io:format("~p~n", [os:getpid()]), halt().' > "$tmp/erl.out" 2>&1
  pid=$(grep -o '[0-9][0-9]*' "$tmp/erl.out" | head -1)
  if [ -n "$pid" ] && [ -f "/tmp/jit-$pid.dump" ]; then
    mv "/tmp/jit-$pid.dump" "$tmp/jit-$pid.dump"; rm -f "/tmp/perf-$pid.map"
    check_counts erlang "$tmp/jit-$pid.dump"
  else
    echo "FAIL jitdump erlang: erl +JPperf dump wrote no /tmp/jit-$pid.dump"; rm -f "/tmp/perf-$pid.map"
  fi
else
  echo "SKIP jitdump erlang: erl not installed (apt-get install erlang-base)"
fi

# Malformed input: a clear error with a byte offset and a non-zero exit.
printf 'JiTD' > "$tmp/bad.dump"
head -c 100 tests/data/node-head.dump > "$tmp/cut.dump"
if ! ./build/jitdump-cat --check "$tmp/cut.dump" > "$tmp/o" 2>&1 && grep -q 'at byte' "$tmp/o"; then
  echo "PASS jitdump-cat reports a truncated dump with its byte offset"
else echo "FAIL jitdump-cat truncated dump"; cat "$tmp/o"; fi
printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' > "$tmp/bad.dump"
if ! ./build/jitdump-cat "$tmp/bad.dump" > "$tmp/o" 2>&1 && grep -q 'magic' "$tmp/o"; then
  echo "PASS jitdump-cat rejects a bad magic"
else echo "FAIL jitdump-cat bad magic"; cat "$tmp/o"; fi
# A dump with no records: --check must not hand qsort a NULL array (UBSan stops on it).
head -c 40 tests/data/node-head.dump > "$tmp/empty.dump"
if ${CC:-cc} -std=c99 -O0 -fsanitize=undefined -fno-sanitize-recover=undefined -I. tools/jitdump-cat.c \
     -o "$tmp/jitdump-cat-ubsan" 2>/dev/null; then
  if "$tmp/jitdump-cat-ubsan" --check "$tmp/empty.dump" > "$tmp/o" 2>&1 && grep -q '^0 record(s)' "$tmp/o"; then
    echo "PASS jitdump-cat --check on a dump without records (UBSan)"
  else echo "FAIL jitdump-cat --check on a dump without records"; cat "$tmp/o"; fi
else echo "SKIP jitdump-cat --check under UBSan: cc -fsanitize=undefined not available"; fi
# --summary: no table of zeros after a refused file; after a cut one, the table says so.
if ! ./build/jitdump-cat --summary "$tmp/bad.dump" > "$tmp/o" 2>/dev/null && ! grep -q '^LOAD ' "$tmp/o"; then
  echo "PASS jitdump-cat --summary prints no table for a refused file"
else echo "FAIL jitdump-cat --summary on a refused file"; cat "$tmp/o"; fi
head -c 3000 tests/data/node-head.dump > "$tmp/cut.dump"
if ! ./build/jitdump-cat --summary "$tmp/cut.dump" > "$tmp/o" 2>/dev/null && grep -q 'before the error' "$tmp/o"; then
  echo "PASS jitdump-cat --summary of a cut dump says it counts the records before the error"
else echo "FAIL jitdump-cat --summary of a cut dump"; cat "$tmp/o"; fi
# jitdump-elf on a cut dump: the files before the cut, a message, exit status 3.
mkdir "$tmp/elf"
./build/jitdump-elf "$tmp/cut.dump" "$tmp/elf" > "$tmp/o" 2> "$tmp/e"; rc=$?
if [ $rc -eq 3 ] && grep -q 'cut' "$tmp/e" && [ "$(wc -l < "$tmp/o")" -eq "$(ls "$tmp/elf" | wc -l)" ] && [ -s "$tmp/o" ]; then
  echo "PASS jitdump-elf on a cut dump writes the functions before the cut and exits 3"
else echo "FAIL jitdump-elf on a cut dump (exit $rc): $(cat "$tmp/e")"; fi
if ./build/jitdump-elf "$tmp/empty.dump" "$tmp/elf" > /dev/null 2>&1; then echo "PASS jitdump-elf on a whole dump without records exits 0"
else echo "FAIL jitdump-elf on a whole dump without records"; fi
