#!/bin/sh
# Line bias end to end: jitgen writes the same recording twice, once with plain debug
# addresses and once with LLVM's/V8's +0x40 (no pad1 marker: LLVM writes none).  With no
# flag, jitanon-inject and jitdump-elf must make byte-identical ELFs of both (the bias is
# found from the data and removed), addr2line must put each function's first row at its
# first instruction, and --line-bias=none must leave the biased one as the dump says.
jt_name="linebias"; . "$(dirname "$0")/common.sh"
gen() { "$root/build/jitgen" --loads 120 --samples 2000 --debug-every 2 --seed 7 --quiet "$@" >/dev/null 2>&1; }
if ! gen "$tmp/plain" || ! gen --line-bias 64 "$tmp/llvm"; then echo "FAIL linebias: jitgen failed"; exit 0; fi
# --elf=function: a line table a file, each checked at its function's first instruction
# below, and the reference of the region files at the end
for c in plain llvm; do
  mkdir -p "$tmp/$c/elf" "$tmp/$c/je"
  "$root/build/jitanon-inject" -i "$tmp/$c/perf.data" -o "$tmp/$c/out.data" --elf=function --elf-dir "$tmp/$c/elf" 2>/dev/null
  "$root/build/jitdump-elf" --lines "$tmp/$c"/jit-*.dump "$tmp/$c/je" 2>/dev/null | sed "s|$tmp/$c/||" > "$tmp/$c/je.txt"
done
if [ -n "$(ls "$tmp/plain/elf")" ] && diff -r "$tmp/plain/elf" "$tmp/llvm/elf" >/dev/null &&
   diff -r "$tmp/plain/je" "$tmp/llvm/je" >/dev/null && cmp -s "$tmp/plain/je.txt" "$tmp/llvm/je.txt"; then
  echo "PASS linebias: +0x40 dump found from the data: jitanon-inject and jitdump-elf ELFs identical to the plain dump's ($(ls "$tmp/llvm/elf" | wc -l) files)"
else echo "FAIL linebias: the +0x40 dump's ELFs differ from the plain dump's"; fi
# LLVM ORC JITLink: 6-byte functions (shorter than the bias), a batch's DEBUG_INFOs before
# its LOADs; every function has lines, so every file must have a .debug_line.
jl="--fn-size 6 --debug-every 1 --debug-batch 4"
if gen $jl "$tmp/jlplain" && gen $jl --line-bias 64 "$tmp/jl"; then
  for c in jlplain jl; do
    mkdir -p "$tmp/$c/elf"
    "$root/build/jitanon-inject" -i "$tmp/$c/perf.data" -o "$tmp/$c/out.data" --elf-dir "$tmp/$c/elf" 2>/dev/null
  done
  n=$(ls "$tmp/jl/elf" | wc -l); w=$(grep -l '\.debug_line' "$tmp/jl/elf"/* 2>/dev/null | wc -l)
  if [ "$n" -gt 0 ] && [ "$w" = "$n" ] && diff -r "$tmp/jlplain/elf" "$tmp/jl/elf" >/dev/null; then
    echo "PASS linebias jitlink: 6-byte functions' +0x40 found: $w of $n files with lines, identical to the plain dump's"
  else echo "FAIL linebias jitlink: 6-byte functions' +0x40: $w of $n files with lines"; fi
else echo "FAIL linebias jitlink: jitgen failed"; fi
mkdir -p "$tmp/none"
"$root/build/jitanon-inject" -i "$tmp/llvm/perf.data" -o "$tmp/none.data" --elf=function --elf-dir "$tmp/none" --line-bias=none 2>/dev/null
if ! diff -r "$tmp/plain/elf" "$tmp/none" >/dev/null; then
  echo "PASS linebias: --line-bias=none keeps the dump's addresses"
else echo "FAIL linebias: --line-bias=none changed nothing"; fi
if ! command -v addr2line >/dev/null 2>&1 || ! command -v readelf >/dev/null 2>&1; then
  echo "SKIP linebias addr2line: binutils not installed"; exit 0; fi
# every function with a line table: addr2line at its symbol address names the first row's line
bad=0; n=0
for f in "$tmp/llvm/elf"/jitted-*.so; do
  readelf -wL "$f" 2>/dev/null | grep -q '\.js' || continue
  sym=$(readelf -s "$f" | awk '$4 == "FUNC" {print $2; exit}')
  first=$(readelf -wL "$f" 2>/dev/null | awk '/\.js/ && $3 ~ /^0x/ {print $2 " " $3; exit}')
  line=${first% *}; addr=${first#* }
  got=$(addr2line -e "$f" "0x$sym" 2>/dev/null | sed 's/.*://; s/ .*//')
  n=$((n + 1))
  if [ "$((addr))" != "$((0x$sym))" ] || [ "$got" != "$line" ]; then bad=$((bad + 1)); fi
done
if [ "$n" -gt 0 ] && [ "$bad" = 0 ]; then
  echo "PASS linebias addr2line: all $n line tables of the +0x40 dump start at their function's first instruction"
else echo "FAIL linebias addr2line: $bad of $n line tables do not start at the first instruction"; fi
# the region layout (--elf=region) of the same +0x40 recording: at each of those first
# instructions (address = the per-function file's base + its symbol), addr2line on the region
# file mapped there, at address - base, gives what it gives on the per-function file
command -v perf >/dev/null 2>&1 || { echo "SKIP linebias region: perf not installed (reads the MMAP2s)"; exit 0; }
mkdir -p "$tmp/llvm/rg"
"$root/build/jitanon-inject" -i "$tmp/llvm/perf.data" -o "$tmp/llvm/rg.data" --elf=region --elf-dir "$tmp/llvm/rg" 2>/dev/null
jt_jit_maps "$tmp/llvm/out.data" > "$tmp/fn.maps"; jt_jit_maps "$tmp/llvm/rg.data" > "$tmp/rg.maps"
n=0 same=0 bad=""
for f in "$tmp/llvm/elf"/jitted-*.so; do
  readelf -wL "$f" 2>/dev/null | grep -q '\.js' || continue
  sym=$(readelf -s "$f" | awk '$4 == "FUNC" {print $2; exit}')
  b=$(awk -v p="$f" '$4 == p { print $3; exit }' "$tmp/fn.maps")
  [ -n "$b" ] || continue
  n=$((n + 1)) a=$((b + 0x$sym))
  want=$(addr2line -e "$f" "0x$sym" 2>/dev/null)
  set -- $(jt_jit_at "$tmp/rg.maps" "$a")
  if [ $# = 2 ] && [ "$(addr2line -e "$1" "$2" 2>/dev/null)" = "$want" ]; then same=$((same + 1))
  else bad="${bad:-$(printf '0x%x' "$a") ${1:-(no file)} ${2:-}: '$(addr2line -e "${1:-/dev/null}" "${2:-0}" 2>/dev/null)', per-function '$want'}"; fi
done
if [ "$n" -gt 0 ] && [ "$same" = "$n" ]; then
  echo "PASS linebias region: region files ($(ls "$tmp/llvm/rg" | wc -l)) and per-function files ($(ls "$tmp/llvm/elf" | wc -l)): addr2line gives the same line at every first instruction with lines ($same of $n)"
else echo "FAIL linebias region: addr2line the same at $same of $n addresses; first: $bad"; fi
