#!/bin/sh
# LLVM ORC JITLink's order with real tools: a generated dump (jitgen --debug-batch, our
# jitdump writer) writes the DEBUG_INFO of each batch of functions, then the batch's
# LOADs.  jitanon-inject pairs each DEBUG_INFO with its LOAD by code address: addr2line on
# every function's ELF must print that function's own first file:line.  perf inject --jit,
# which pairs a LOAD with the DEBUG_INFO just before it, is measured alongside.
jt_name="jitlink oracle"; . "$(dirname "$0")/common.sh"
command -v addr2line >/dev/null 2>&1 || jt_skip "addr2line not installed (apt-get install binutils)"
d="$tmp/gen"
"$root/build/jitgen" --loads 60 --samples 500 --duration-ms 200 --debug-every 1 --unwind-every 3 --debug-batch 5 \
  --quiet "$d" || { echo "FAIL jitlink: jitgen failed"; exit 0; }
dump="$d/jit-31337.dump"
# --elf=function: a file per function, at perf's offsets, as perf inject --jit's beside it
# (and the reference of the region files below)
if ! "$root/build/jitanon-inject" -i "$d/perf.data" -o "$d/ours.data" --elf=function --elf-dir "$d/elf" --elf-files=all -N --stats 2> "$d/ours.err"; then
  echo "FAIL jitlink: jitanon-inject failed: $(cat "$d/ours.err")"; exit 0
fi
perfdir=""
if command -v perf >/dev/null 2>&1 && perf inject --jit -i "$d/perf.data" -o "$d/perf.out" 2>/dev/null; then perfdir=$d; fi
# code address -> code_index (LOAD), and each DEBUG_INFO's code address, first file:line and its address
"$root/build/jitdump-cat" "$dump" | awk '
  $2 == "LOAD" { for (i = 1; i <= NF; i++) { if ($i == "addr") a = $(i + 1); if ($i == "index") { x = $(i + 1); break } }; idx[a] = x }
  $2 == "DEBUG_INFO" { for (i = 1; i <= NF; i++) { if ($i == "addr") a = $(i + 1); if ($i == "first") { fl = $(i + 1); at = $(i + 2) } }
                       n++; da[n] = a; dfl[n] = fl; dat[n] = substr(at, 2) }
  END { for (k = 1; k <= n; k++) if (da[k] in idx) print idx[da[k]], da[k], dat[k], dfl[k] }' > "$d/want.txt"
total=0 ours=0 theirs=0
while read -r x a at fl; do
  total=$((total + 1))
  off=$(printf '0x%x' $((0xf0 + at - a)))  # per-function files: the code at 0xf0 (perf's at 0x80)
  want=${fl%:*}                            # file:line (jitdump-cat adds :discriminator)
  got=$(addr2line -e "$d/elf/jitted-31337-$x.so" "$off")
  [ "$got" = "$want" ] && ours=$((ours + 1))
  if [ -n "$perfdir" ]; then
    got=$(addr2line -e "$d/jitted-31337-$x.so" "$(printf '0x%x' $((0x80 + at - a)))")
    [ "$got" = "$want" ] && theirs=$((theirs + 1))
  fi
done < "$d/want.txt"
cmp="${perfdir:+; perf inject --jit: $theirs}"
if [ "$total" -gt 0 ] && [ "$ours" -eq "$total" ]; then
  echo "PASS jitlink: addr2line gives every function its own lines ($ours of $total functions$cmp)"
else echo "FAIL jitlink: addr2line gives $ours of $total functions their own lines$cmp"; fi
# the region layout (--elf=region) of the same recording: at every function's first line
# address, addr2line (and gdb) on the region file mapped there, at address - base, give the
# line the per-function file gives at that address
command -v perf >/dev/null 2>&1 || { echo "SKIP jitlink region: perf not installed (reads the MMAP2s)"; exit 0; }
"$root/build/jitanon-inject" -i "$d/perf.data" -o "$d/rg.data" --elf=region --elf-dir "$d/rg" --elf-files=all -N 2>/dev/null
jt_jit_maps "$d/rg.data" > "$d/rg.maps"
n=0 same=0 bad=""
while read -r x a at fl; do
  n=$((n + 1))
  set -- $(jt_jit_at "$d/rg.maps" "$at")
  fn=$(addr2line -e "$d/elf/jitted-31337-$x.so" "$(printf '0x%x' $((0xf0 + at - a)))")
  if [ $# = 2 ] && [ "$(addr2line -e "$1" "$2")" = "$fn" ]; then same=$((same + 1))
    echo "info line *$2" >> "$d/rg.gdb.${1##*/}"; echo "Line ${fn##*:} of \"${fn%:*}\"" >> "$d/rg.want.${1##*/}"
  else bad="${bad:-$at ${1:-(no file)} ${2:-} addr2line '$(addr2line -e "${1:-/dev/null}" "${2:-0}" 2>/dev/null)', per-function '$fn'}"; fi
done < "$d/want.txt"
# gdb, one run a region file: "info line" at each of those names the per-function file's line
gdbn=0
if command -v gdb >/dev/null 2>&1; then
  for g in "$d"/rg.gdb.*; do
    [ -f "$g" ] || continue; f=${g##*/rg.gdb.}
    gdb -batch -nx -x "$g" "$d/rg/$f" 2>/dev/null | sed -n 's/^\(Line [0-9]* of ".*"\) starts at .*/\1/p' > "$d/rg.got.$f"
    gdbn=$((gdbn + $(paste -d '|' "$d/rg.got.$f" "$d/rg.want.$f" | awk -F'|' '$1 == $2' | wc -l)))
  done
fi
if [ "$n" -gt 0 ] && [ "$same" = "$n" ] && { [ "$gdbn" = "$n" ] || ! command -v gdb >/dev/null 2>&1; }; then
  echo "PASS jitlink region: region files ($(ls "$d/rg" | wc -l)) and per-function files ($(ls "$d/elf" | wc -l)): addr2line gives the same line at every function's first line address ($same of $n; gdb the same at $gdbn)"
else echo "FAIL jitlink region: addr2line the same at $same of $n addresses, gdb at $gdbn; first: $bad"; fi
