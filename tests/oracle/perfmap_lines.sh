#!/bin/sh
# Perf maps as runtimes write them (issue #33), generated: jitgen's functions written as a
# perf map (node --perf-basic-prof's form; every 9th line in jcmd Compiler.perfmap's 0x
# form) and, a second time, with every 7th name holding newlines as Node 24 writes RegExp
# sources (node#62131): each rest is a line of its own, one of them looking like an entry
# far below the code.  With the dump gone, --perf-map=elf must name every sample the same
# from both maps (a broken name costs its rest, never another entry), and say why lines
# were skipped.
jt_name="perfmap lines"; . "$(dirname "$0")/common.sh"
jt_need perf
d="$tmp/g"
"$root/build/jitgen" --loads 300 --samples 3000 --duration-ms 300 --debug-every 0 --pid 4243 --quiet "$d" >/dev/null 2>&1 ||
  { echo "FAIL perfmap lines: jitgen failed"; exit 0; }
"$root/build/jitdump-cat" "$d/jit-4243.dump" | awk -v c="$tmp/clean.map" -v b="$tmp/broken.map" '$2 == "LOAD" {
    for (i = 1; i <= NF; i++) { if ($i == "addr") a = $(i + 1); if ($i == "size") s = $(i + 1); if ($i == "index") { x = i + 2; break } }
    name = $x; a = substr(a, 3); n++; z = substr("0000000000000000" a, length(a) + 1)
    if (n % 7 == 0) { # what survives of a broken name: the part before its first newline
      printf "%s %x RegExp:%s\n", a, s, name > c
      printf "%s %x RegExp:%s\n(?:b|c)\n\n ab cd\nab cd ef\n", a, s, name > b
    } else if (n % 9 == 0) {
      printf "0x%s 0x%016x %s\n", z, s, name > c; printf "0x%s 0x%016x %s\n", z, s, name > b
    } else { printf "%s %x %s\n", a, s, name > c; printf "%s %x %s\n", a, s, name > b }
  }'
mv "$d/jit-4243.dump" "$tmp/away.dump"
for m in clean broken; do
  mkdir -p "$tmp/$m"
  cp "$tmp/$m.map" "$tmp/$m/perf-4243.map"
  "$root/build/jitanon-inject" -i "$d/perf.data" -o "$tmp/$m.data" --perf-map=elf --jitdump-dir "$tmp/$m" \
    --elf-dir "$tmp/$m/elf" -N --stats 2> "$tmp/$m.err"
  perf script -i "$tmp/$m.data" -F ip,sym 2>/dev/null > "$tmp/$m.s"
done
named=$(grep -cv unknown "$tmp/clean.s")
skipped=$(sed -n 's/.* lines skipped (\([0-9]*\) not START SIZE NAME.*/\1/p' "$tmp/broken.err")
want=$(( $(wc -l < "$tmp/broken.map") - $(wc -l < "$tmp/clean.map") - $(grep -c '^ab cd ef$' "$tmp/broken.map") ))
if [ "$named" -gt 0 ] && cmp -s "$tmp/clean.s" "$tmp/broken.s" && [ "${skipped:-0}" = "$want" ]; then
  echo "PASS perfmap lines: Node 24's broken RegExp names and jcmd's 0x lines: the same $named samples named as from a clean map; $skipped rests skipped as not START SIZE NAME"
else echo "FAIL perfmap lines: $named named from the clean map, $(grep -cv unknown "$tmp/broken.s") from the broken one; skipped '${skipped:-}' (want $want): $(head -c 400 "$tmp/broken.err")"; fi
