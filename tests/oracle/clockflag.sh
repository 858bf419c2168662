#!/bin/sh
# JITDUMP_FLAGS_ARCH_TIMESTAMP on CLOCK_MONOTONIC times (issue #33; libxsmm#1093 on VMs):
# jitgen writes the same recording twice, the second dump flagged as TSC with its times
# left CLOCK_MONOTONIC.  jitanon-inject must read the flagged one's times as CLOCK_MONOTONIC,
# say so once, and make the same ELF files (and, with perf, name the same samples) as from
# the plain one.  perf inject --jit, which refuses such a dump, is measured alongside.
jt_name="clockflag"; . "$(dirname "$0")/common.sh"
for c in plain flag; do
  "$root/build/jitgen" --loads 200 --samples 2000 --duration-ms 200 --seed 3 --quiet \
    $([ $c = flag ] && echo --arch-flag) "$tmp/$c" >/dev/null 2>&1 || { echo "FAIL clockflag: jitgen failed"; exit 0; }
  "$root/build/jitanon-inject" -i "$tmp/$c/perf.data" -o "$tmp/$c.data" --elf-dir "$tmp/$c/elf" -N --stats 2> "$tmp/$c.err"
done
said=$(grep -c 'but they are CLOCK_MONOTONIC' "$tmp/flag.err")
n=$(ls "$tmp/plain/elf" 2>/dev/null | wc -l)
if [ "$said" = 1 ] && [ "$n" -gt 0 ] && diff -r "$tmp/plain/elf" "$tmp/flag/elf" >/dev/null &&
   grep -q 'jitdumps flagged as TSC whose times were CLOCK_MONOTONIC, read as such: 1' "$tmp/flag.err"; then
  echo "PASS clockflag: a TSC-flagged dump of CLOCK_MONOTONIC times read as such and said once; the same $n ELF files"
else echo "FAIL clockflag: said $said times, $n files; $(head -c 500 "$tmp/flag.err")"; fi
command -v perf >/dev/null 2>&1 || { echo "SKIP clockflag perf: perf not installed"; exit 0; }
for c in plain flag; do perf script -i "$tmp/$c.data" -F ip,sym 2>/dev/null > "$tmp/$c.s"; done
theirs="refused"
perf inject --jit -i "$tmp/flag/perf.data" -o "$tmp/perf.out" >/dev/null 2>&1 &&
  theirs="$(perf script -i "$tmp/perf.out" -F sym 2>/dev/null | grep -cv unknown) named"
named=$(grep -cv unknown "$tmp/plain.s")
if [ "$named" -gt 0 ] && cmp -s "$tmp/plain.s" "$tmp/flag.s"; then
  echo "PASS clockflag perf: perf script names the same $named samples as from the plain dump (perf inject --jit: $theirs)"
else echo "FAIL clockflag perf: $named named from the plain dump, $(grep -cv unknown "$tmp/flag.s") from the flagged one"; fi
