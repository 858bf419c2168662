#!/bin/sh
# arm64 end to end on any host: Debian's arm64 node runs under qemu-user and writes a real
# A64 jitdump; aarch64 binutils, eu-elflint and gdb-multiarch read our stubs of it, and a
# recording of it built with our perf writer (tests/jitgen.c --dump, HEADER_ARCH
# aarch64, fp and dwarf-style call graphs) is injected and read by perf.  .ci/run installs
# qemu-user-static, binutils-aarch64-linux-gnu, gdb-multiarch and unpacks the arm64
# packages of node into build/arm64/root (JT_ARM64_ROOT elsewhere).
jt_name="arm64 oracle"; . "$(dirname "$0")/common.sh"
ar=${JT_ARM64_ROOT:-$root/build/arm64/root}
jt_need qemu-aarch64-static "apt-get install qemu-user-static"
jt_need aarch64-linux-gnu-objdump "apt-get install binutils-aarch64-linux-gnu"
for t in perf eu-elflint readelf python3 gdb-multiarch; do jt_need $t; done
[ -x "$ar/usr/bin/node" ] || jt_skip "no arm64 node in $ar (.ci/run unpacks it)"
for b in jitdump-elf jitanon-inject jitgen; do [ -x "build/$b" ] || jt_skip "build/$b not built"; done
pass() { echo "PASS arm64 $1"; }
fail() { echo "FAIL arm64 $1${2:+: $2}"; }

# fib turns hot enough for TurboFan, whose code comes with .eh_frame (the baseline tiers
# write an .eh_frame_hdr only); compiled on the main thread, so that a slow emulation
# cannot end before the background compile does.
mkdir "$tmp/node"
cat > "$tmp/node/app.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 30; i++) s += fib(20);
console.log(s);
EOF
(cd "$tmp/node" && qemu-aarch64-static -L "$ar" "$ar/usr/bin/node" --perf-prof --perf-prof-unwinding-info \
   --no-concurrent-recompilation app.js > out.txt 2>&1)
jt_dump_pids "$tmp/node"
dump=$(ls "$tmp"/node/jit-*.dump 2>/dev/null | head -1)
[ -n "$dump" ] || { fail "node under qemu wrote no jitdump" "$(head -3 "$tmp/node/out.txt")"; exit 0; }
mach=$(od -An -tu4 -j12 -N4 "$dump" | tr -d ' ')
[ "$mach" = 183 ] && pass "node under qemu-user writes a jitdump with e_machine 183 (EM_AARCH64)" ||
  fail "jitdump e_machine" "$mach"

# Per-function stubs: all AArch64, decoded as A64, elflint clean, lines for addr2line.
mkdir "$tmp/fn"
./build/jitdump-elf --lines "$dump" "$tmp/fn" > "$tmp/fn.lst" 2> "$tmp/fn.err" || fail "jitdump-elf" "$(cat "$tmp/fn.err")"
grep -v '^line ' "$tmp/fn.lst" > "$tmp/fn.fn"
nf=$(wc -l < "$tmp/fn.fn")
python3 - "$tmp/fn" > "$tmp/mach" <<'EOF'
import os, struct, sys
n = {}
for f in os.listdir(sys.argv[1]):
    h = open(os.path.join(sys.argv[1], f), "rb").read(20)
    k = (h[4], struct.unpack_from("<H", h, 18)[0])
    n[k] = n.get(k, 0) + 1
print(" ".join("class%d/machine%d:%d" % (c, m, v) for (c, m), v in sorted(n.items())))
EOF
[ "$(cat "$tmp/mach")" = "class2/machine183:$nf" ] && pass "$nf of $nf stubs are ELF64 AArch64" ||
  fail "stub e_machine" "$(cat "$tmp/mach") of $nf"
(cd "$tmp/fn" && ls | xargs aarch64-linux-gnu-objdump -d) |
  awk -F'\t' 'NF >= 3 { n++; if ($3 ~ /^(\.inst|udf|\(bad\))/) bad++ } END { print n + 0, bad + 0 }' > "$tmp/words"
read -r nw nbad < "$tmp/words"
# V8 keeps constant pools inside its code (the words left undecoded): well under 1%.
if [ "$nw" -gt 1000 ] && [ $((nbad * 100)) -lt "$nw" ]; then
  pass "aarch64-linux-gnu-objdump decodes $((nw - nbad)) of $nw words as A64"
else fail "aarch64 objdump" "$nbad of $nw words not A64"; fi
fib=$(awk '/ LazyCompile:\*fib /{ print $5 }' "$tmp/fn.fn" | tail -1)
[ -n "$fib" ] || fib=$(awk '/fib /{ print $5 }' "$tmp/fn.fn" | tail -1)
[ -n "$fib" ] || { fail "no stub of fib in the dump"; exit 0; }
bad=""
for f in "$fib" $(awk 'NR % 300 == 1 { print $5 }' "$tmp/fn.fn"); do
  o=$(eu-elflint --gnu-ld "$f" 2>&1) || bad="$bad ${f##*/}: $o"
done
[ -z "$bad" ] && pass "eu-elflint --gnu-ld clean on a sample of stubs (fib's among them)" || fail "eu-elflint" "$bad"
# aligned for kernels with 64 KiB pages, as aarch64 linkers align
al=$(readelf -lW "$fib" | awk '$1 == "LOAD" { print $NF; exit }')
[ "$al" = 0x10000 ] && pass "the stubs' PT_LOAD is 64 KiB-aligned, as aarch64 linkers write it" || fail "PT_LOAD p_align" "$al"
# addr2line: the first line entry of every function with one gives the dump's line.
awk 'NR == FNR { path[$1] = $5; pg[$1] = $4; next }
     $1 == "line" && !seen[$2]++ && $4 > 0 { printf "%s %s %d %s\n", path[$2], pg[$2], $3, $4 }' \
  "$tmp/fn.fn" "$tmp/fn.lst" > "$tmp/want"
nl=$(wc -l < "$tmp/want"); bad=""
while read -r f pg off ln; do
  got=$(aarch64-linux-gnu-addr2line -e "$f" "$(printf '0x%x' $((pg + off)))")
  case "$got" in *:"$ln"|*:"$ln "*) ;; *) bad="${f##*/} +$off: want line $ln, got $got"; break ;; esac
done < "$tmp/want"
[ "$nl" -gt 0 ] && [ -z "$bad" ] && pass "aarch64 addr2line gives the dump's line for each of $nl functions with .debug_line" ||
  fail "addr2line" "${bad:-no line entries}"
read -r f pg off ln < "$tmp/want"
a=$(printf '0x%x' $((pg + off)))
o=$(gdb-multiarch -nx -batch -ex "info line *$a" -ex "x/i $a" "$f" 2>&1)
case "$o" in *"Line $ln of "*"$a <"*":"*[a-z]*) pass "gdb-multiarch reads a stub as aarch64: line $ln and an A64 instruction at $a" ;;
  *) fail "gdb-multiarch" "$(echo "$o" | head -3)" ;; esac

# TurboFan's .eh_frame, copied into fib's stub: arm64's CFA and return address registers
# (x29 = 29, x30 = 30), and its FDE covering the function's .text.
readelf -W --debug-dump=frames "$fib" > "$tmp/frames" 2>&1
range=$(awk -v f="$fib" '$5 == f { printf "%x %x", $4, $4 + $3 }' "$tmp/fn.fn")
if grep -q 'Return address column: 30' "$tmp/frames" && grep -q 'DW_CFA_def_cfa: r29 (x29)' "$tmp/frames" &&
   grep -q 'r30 (x30) at cfa+8' "$tmp/frames" &&
   awk -v r="$range" '/ FDE /{ split(r, w, " "); for (i = 1; i <= NF; i++) if ($i ~ /^pc=/) { s = $i; sub(/^pc=0*/, "", s); n = split(s, p, /\.\.0*/)
       if (p[1] == w[1] && p[2] == w[2]) ok = 1 } } END { exit !ok }' "$tmp/frames"; then
  pass "readelf decodes fib's .eh_frame with arm64 registers (CFA x29, return address x30) over its .text 0x$(echo $range | tr ' ' '-')"
else fail "fib's .eh_frame" "$(grep -m3 'FDE\|def_cfa\|Return' "$tmp/frames" | tr '\n' ' ')"; fi

# The per-process layout: one AArch64 file, elflint clean, fib's FDE at fib's offset.
mkdir "$tmp/proc"
./build/jitdump-elf --process "$dump" "$tmp/proc" > "$tmp/proc.fn" 2> "$tmp/proc.err"
pf=$(ls "$tmp"/proc/*.so 2>/dev/null | head -1)
pg=$(awk '/ LazyCompile:\*fib /{ print $4 }' "$tmp/proc.fn" | tail -1)
if [ -n "$pf" ] && [ -n "$pg" ] && readelf -h "$pf" | grep -q 'Machine: *AArch64' && eu-elflint --gnu-ld "$pf" > /dev/null 2>&1 &&
   readelf -W --debug-dump=frames "$pf" | grep ' FDE ' | grep -q "pc=0*${pg#0x}\.\."; then
  pass "--process: one AArch64 file of $(wc -l < "$tmp/proc.fn") functions, eu-elflint clean, fib's FDE at its offset $pg"
else fail "--process stub" "$(head -c 300 "$tmp/proc.err") pgoff $pg"; fi

# An arm64 recording of this dump's functions, written with our perf writer (perf cannot
# record under qemu-user): fp call graphs (the caller of the leaf in the link register
# only, as perf records arm64) and dwarf ones (x0..x30, sp, pc and 64 bytes of stack).
check_py='
import bisect, re, sys
fns = []
for l in open(sys.argv[1]):
    w = l.split(" ", 5)
    fns.append((int(w[1], 16), int(w[2]), w[0], w[5].rstrip("\n")))
fns.sort()
starts = [f[0] for f in fns]
def fn(a):
    i = bisect.bisect_right(starts, a) - 1
    return fns[i] if i >= 0 and a < fns[i][0] + fns[i][1] else None
frame = re.compile(r"\s*([0-9a-f]+) (.*?) \(([^()]*)\)( ABI:.*)?$")
files = set(sys.argv[4].split())
frames = named = lrs = lr_files = 0
bad = []
# the recording before injection gives absolute addresses, after it the names (in a
# callchain perf prints addresses in their file): the same samples, line by line
for a, b in zip(open(sys.argv[2]), open(sys.argv[3])):
    ma, mb = frame.match(a), frame.match(b)
    if ma and mb:
        f = fn(int(ma.group(1), 16))
        if f:
            frames += 1
            if mb.group(2) == f[3] and mb.group(3).endswith("-%s.so" % f[2]): named += 1
            elif len(bad) < 3: bad.append("%s named %r in %s, not %r" % (ma.group(1), mb.group(2), mb.group(3), f[3]))
    m = re.search(r" lr:0x([0-9a-f]+)", b)
    if m:
        x = int(m.group(1), 16)
        f = fn(x) or fn(x - 1)
        if f:
            lrs += 1
            if "jitted-%s-%s.so" % (sys.argv[5], f[2]) in files: lr_files += 1
            elif len(bad) < 3: bad.append("no file for the function of lr %x" % x)
print("%d of %d jitted frames named, %d of %d link registers in a written file" % (named, frames, lr_files, lrs))
if bad or frames < 100 or lrs < 100: print("\n".join(bad)); sys.exit(1)
'
pid=$(basename "$dump" .dump); pid=${pid#jit-}
# jitanon-inject -N: no build-id cache (perf finds the files by path and build-id), whose
# copies would double the thousands of files removed at the end, the oracle's slowest part.
# --elf=function: the check is that the per-function files written for samples (not all:
# --elf-files=auto) include the function in the link register, a file a function.
for cg in fp dwarf; do
  d="$tmp/$cg"
  if ! ./build/jitgen --quiet --dump "$dump" --call-graph $cg --samples 2000 --duration-ms 500 "$d" 2> "$d.err"; then
    fail "jitgen --dump --call-graph $cg" "$(cat "$d.err")"; continue; fi
  perf report -i "$d/perf.data" --header-only 2>/dev/null | grep -q '^# arch : aarch64' || fail "$cg: HEADER_ARCH is not aarch64"
  if ! ./build/jitanon-inject -N --elf=function -i "$d/perf.data" -o "$d/out.data" 2> "$d.err"; then fail "$cg: jitanon-inject" "$(cat "$d.err")"; continue; fi
  perf script -i "$d/perf.data" -F ip,sym,dso,uregs 2>/dev/null > "$d.in"
  perf script -i "$d/out.data" -F ip,sym,dso,uregs 2>/dev/null > "$d.out"
  if python3 -c "$check_py" "$tmp/fn.fn" "$d.in" "$d.out" "$(ls "$d")" "$pid" > "$d.chk"; then
    pass "--call-graph $cg, injected: perf script names every jitted frame as the dump does, and the sampled files cover each function the link register is in ($(head -1 "$d.chk"))"
  else fail "--call-graph $cg: perf script" "$(tr '\n' ' ' < "$d.chk")"; fi
done

# jitgen's own arm64 input (for tests and bench): a kernel with 64 KiB pages, dwarf call
# graphs, V8's arm64 unwinding info on every function.
d="$tmp/syn"
if ./build/jitgen --quiet --arch arm64 --page-size 65536 --call-graph dwarf --loads 300 --samples 3000 \
     --unwind-every 1 "$d" 2> "$d.err" && ./build/jitanon-inject -N -i "$d/perf.data" -o "$d/out.data" 2>> "$d.err"; then
  f=$(ls "$d"/jitted-*.so | head -1)
  perf script -i "$d/perf.data" --show-mmap-events 2>/dev/null | grep 'PERF_RECORD_MMAP2' > "$d.mm"
  jit=$(perf report -i "$d/out.data" --stdio --sort dso 2>/dev/null | awk '/ jitted-/ { sub(/%/, "", $1); s += $1 } END { printf "%d", s }')
  if grep -q '(0x10000) @ 0 .*jit-31337.dump' "$d.mm" && ! grep '//anon' "$d.mm" | grep -qv '(0x[0-9a-f]*0000) @' &&
     aarch64-linux-gnu-objdump -d "$f" | grep -q 'stp[[:space:]]*x29, x30, \[sp, #-16\]!' &&
     readelf -W --debug-dump=frames "$f" | grep -q 'r30 (x30) at cfa+8' && [ "$jit" -ge 50 ]; then
    pass "jitgen --arch arm64 --page-size 65536: 64 KiB mappings, A64 functions with arm64 .eh_frame, injected: ${jit}% of samples in jitted files"
  else fail "jitgen --arch arm64" "$(head -c 300 "$d.err") jitted ${jit}%"; fi
else fail "jitgen --arch arm64" "$(head -c 300 "$d.err")"; fi

# perf report and annotate with aarch64 objdump: the hottest jitted function, disassembled.
d="$tmp/fp"
perf report -i "$d/out.data" --stdio --no-children --sort dso,sym 2>/dev/null | grep ' jitted-' > "$d.report"
sym=$(head -1 "$d.report" | sed 's/.*\[\.\] //; s/ *$//')
if [ -n "$sym" ]; then
  pass "perf report names jitted functions first ($(head -1 "$d.report" | tr -s ' ' | sed 's/^ //'))"
  perf annotate -i "$d/out.data" --stdio --objdump=aarch64-linux-gnu-objdump "$sym" 2>/dev/null > "$d.ann"
  n=$(grep -cE '^ +[0-9]+\.[0-9]+ : +[0-9a-f]+: +(stp|ldp|ldr|str|mov|add|sub|b|bl|blr|ret|cmp|ldur|stur|tst|csel|cbz|cbnz|b\.[a-z]+)[[:space:]]' "$d.ann")
  [ "$n" -gt 3 ] && pass "perf annotate --objdump=aarch64-linux-gnu-objdump disassembles $sym ($n A64 instructions)" ||
    fail "perf annotate of $sym" "$(head -5 "$d.ann" | tr '\n' ' ')"
else fail "perf report shows no jitted function" "$(head -3 "$d.report")"; fi

# hotspot's parser reads a foreign machine's recording: the same names as perf.
pp=""
for c in hotspot-perfparser /usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser \
         /usr/lib/aarch64-linux-gnu/libexec/hotspot-perfparser /usr/libexec/hotspot-perfparser; do
  if command -v "$c" >/dev/null 2>&1; then pp=$(command -v "$c"); break; fi
done
if [ -n "$pp" ]; then
  perf script --ns -i "$d/out.data" -F tid,time,ip,sym,dso 2>/dev/null > "$d.ns"
  "$pp" --input "$d/out.data" --output "$d.pp" 2>/dev/null
  if python3 "$root/tests/oracle/hotspot_cmp.py" "$d.pp" "$d.ns" > "$d.cmp"; then
    pass "hotspot-perfparser reads the aarch64 recording and names its jitted frames as perf ($(head -1 "$d.cmp"))"
  else fail "hotspot-perfparser on the aarch64 recording" "$(head -3 "$d.cmp" | tr '\n' ' ')"; fi
else echo "SKIP arm64 hotspot-perfparser: not installed (apt-get install hotspot)"; fi
