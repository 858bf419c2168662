#!/bin/sh
# arm64 end to end on any host: Debian's arm64 node runs under qemu-user and writes a real
# A64 jitdump; aarch64 binutils, eu-elflint and gdb-multiarch read our stubs of it, and a
# recording of it built with our perf writer (examples/jitgen.c --dump, HEADER_ARCH
# aarch64, fp and dwarf-style call graphs) is injected and read by perf.  .ci/run installs
# qemu-user-static, binutils-aarch64-linux-gnu, gdb-multiarch and unpacks the arm64
# packages of node into build/arm64/root (JT_ARM64_ROOT elsewhere).
jt_name="arm64 oracle"; . "$(dirname "$0")/common.sh"
ar=${JT_ARM64_ROOT:-$root/build/arm64/root}
jt_need qemu-aarch64-static "apt-get install qemu-user-static"
jt_need aarch64-linux-gnu-objdump "apt-get install binutils-aarch64-linux-gnu"
for t in eu-elflint readelf python3 gdb-multiarch; do jt_need $t; done
[ -x "$ar/usr/bin/node" ] || jt_skip "no arm64 node in $ar (.ci/run unpacks it)"
for b in jitdump-elf jitanon-inject jitgen; do [ -x "build/$b" ] || jt_skip "build/$b not built"; done
pass() { echo "PASS arm64 $1"; }
fail() { echo "FAIL arm64 $1${2:+: $2}"; }

# fib turns hot enough for TurboFan, whose code comes with .eh_frame (the baseline tiers
# write an .eh_frame_hdr only).
mkdir "$tmp/node"
cat > "$tmp/node/app.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 30; i++) s += fib(20);
console.log(s);
EOF
(cd "$tmp/node" && qemu-aarch64-static -L "$ar" "$ar/usr/bin/node" --perf-prof --perf-prof-unwinding-info app.js \
   > out.txt 2>&1)
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
