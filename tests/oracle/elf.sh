#!/bin/sh
# Oracle for the ELF emitter: records real jitdumps (node, erl), writes ELFs with
# build/jitdump-elf in per-function and per-process mode, and checks them with real tools:
# eu-elflint --gnu-ld, readelf -a -W (+ debug dumps), objdump -d, addr2line, gdb.
# Prints only PASS/FAIL/SKIP lines.  Everything lives in a mktemp -d directory; the files
# erl leaves in /tmp (jit-<pid>.dump, perf-<pid>.map) are moved or removed at once.
jt_name="elf oracle"; . "$(dirname "$0")/common.sh"
trap 'exit 1' INT TERM HUP
bin=$root/build/jitdump-elf
max_files=300 # per-function mode: check a bounded sample of the files

pass() { echo "PASS elf oracle: $1"; }
fail() { echo "FAIL elf oracle: $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | head -10; return 0; }
skip() { echo "SKIP elf oracle: $1: $2"; }

[ -x "$bin" ] || jt_skip "all: build/jitdump-elf is not built (make all)"
missing=""
for t in readelf objdump eu-elflint addr2line gdb; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -z "$missing" ] || jt_skip "all: not installed:$missing"

record_node() {
  command -v node >/dev/null 2>&1 || { skip node "node is not installed"; return 1; }
  mkdir "$tmp/node-run"
  (cd "$tmp/node-run" && node --perf-prof --perf-prof-unwinding-info -e '
     let s = 0;
     function f(x) { return x * 2 + 1; }
     function g(x) { let t = 0; for (let j = 0; j < 20; j++) t += f(x + j) % 7; return t; }
     for (let i = 0; i < 300000; i++) s += g(i);
     console.log(s);' >/dev/null 2>&1)
  set -- "$tmp"/node-run/jit-*.dump
  [ -f "$1" ] || { fail "node: no jit-<pid>.dump was written"; return 1; }
  mv "$1" "$tmp/node.dump"
  rm -rf "$tmp/node-run"
}

record_erl() {
  command -v erl >/dev/null 2>&1 || { skip erl "erl is not installed"; return 1; }
  mkdir "$tmp/erl-run"
  # erl execs erlexec which execs beam.smp, so $! is the pid in /tmp/jit-<pid>.dump.
  cd "$tmp/erl-run" || return 1
  erl -noshell +JPperf dump -eval 'halt().' >/dev/null 2>&1 &
  pid=$!
  wait "$pid"
  cd "$root" || return 1
  if [ -f "/tmp/jit-$pid.dump" ]; then mv "/tmp/jit-$pid.dump" "$tmp/erl.dump"; fi
  rm -f "/tmp/perf-$pid.map"
  rm -rf "$tmp/erl-run"
  [ -f "$tmp/erl.dump" ] || { fail "erl: no /tmp/jit-$pid.dump was written"; return 1; }
}

# $1 runtime, $2 mode (function|process)
check() {
  r=$1 m=$2 out="$tmp/$1-$2"
  flag=""; [ "$m" = process ] && flag=--process
  mkdir "$out"
  if ! "$bin" $flag --lines "$tmp/$r.dump" "$out" > "$out.lst" 2> "$out.err"; then
    fail "$r $m: jitdump-elf failed" "$(cat "$out.err")"; return
  fi
  grep -v '^line ' "$out.lst" > "$out.fn"
  grep '^line ' "$out.lst" > "$out.ln"
  n=$(wc -l < "$out.fn")
  k=$(( (n + max_files - 1) / max_files )); [ "$k" -ge 1 ] || k=1
  awk -v k="$k" '(NR - 1) % k == 0' "$out.fn" > "$out.sample"
  cut -d' ' -f5 "$out.sample" | sort -u > "$out.files"
  nfiles=$(wc -l < "$out.files")

  bad=""
  while read -r f; do
    o=$(eu-elflint --gnu-ld "$f" 2>&1)
    case $o in ""|"No errors") ;; *) bad="$f: $o"; break ;; esac
  done < "$out.files"
  if [ -z "$bad" ]; then pass "$r $m: eu-elflint --gnu-ld clean ($nfiles files, $n functions)"
  else fail "$r $m: eu-elflint --gnu-ld" "$bad"; fi

  bad=""
  while read -r f; do
    o=$(readelf -a -W --debug-dump=rawline,info,frames "$f" 2>&1 >/dev/null)
    w=$(readelf -a -W --debug-dump=rawline,info,frames "$f" 2>/dev/null | grep -E '^(readelf: )?(Warning|Error):')
    [ -z "$o$w" ] || { bad="$f: $o$w"; break; }
  done < "$out.files"
  if [ -z "$bad" ]; then pass "$r $m: readelf -a -W and debug dumps print no warning"
  else fail "$r $m: readelf warnings" "$bad"; fi

  # objdump: every sampled function of non-zero size has a label at its pgoff.
  : > "$out.labels"
  bad=""
  while read -r f; do
    objdump -d "$f" 2>"$out.oerr" | awk -v f="$f" '/^[0-9a-f]+ <.*>:$/ { a = $1; sub(/^0+/, "", a); print f, a }' >> "$out.labels"
    [ -s "$out.oerr" ] && { bad="$f: $(cat "$out.oerr")"; break; }
  done < "$out.files"
  miss=$(awk 'NR == FNR { have[$1 " " $2] = 1; next }
              $3 > 0 { a = $4; sub(/^0x/, "", a); if (!((($5 " " a)) in have)) print $5, $4, $6 }' \
           "$out.labels" "$out.sample" | head -5)
  if [ -z "$bad$miss" ]; then pass "$r $m: objdump -d disassembles every sampled function at its symbol"
  else fail "$r $m: objdump" "$bad$miss"; fi

  # FDEs: every .eh_frame FDE starts at some function's pgoff.
  : > "$out.fde"
  while read -r f; do
    readelf -W --debug-dump=frames "$f" 2>/dev/null |
      awk -v f="$f" '/ FDE / { for (i = 1; i <= NF; i++) if ($i ~ /^pc=/) { a = substr($i, 4); sub(/\.\..*/, "", a); sub(/^0+/, "", a); print f, a } }' >> "$out.fde"
  done < "$out.files"
  nfde=$(wc -l < "$out.fde")
  miss=$(awk 'NR == FNR { a = $4; sub(/^0x/, "", a); ok[$5 " " a] = 1; next } !(($1 " " $2) in ok)' "$out.fn" "$out.fde" | head -5)
  if [ -z "$miss" ]; then pass "$r $m: every FDE ($nfde) starts at its function's pgoff"
  else fail "$r $m: FDE pc_begin not at a function start" "$miss"; fi

  # addr2line: each debug entry with a unique offset and a real line maps back to file:line.
  awk 'function hex(s,  i, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
         for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
         return v }
       NR == FNR { path[$1] = $5; pg[$1] = $4; next }
       { key = $2 " " $3; cnt[key]++; line[key] = $0 }
       END { for (key in cnt) if (cnt[key] == 1) { split(line[key], w, " "); if (w[4] > 0 && (w[2] in path)) {
               l = line[key]; sub(/^line [^ ]+ [^ ]+ [^ ]+ /, "", l)
               printf "%s 0x%x %s:%s\n", path[w[2]], hex(pg[w[2]]) + w[3], l, w[4] } } }' \
      "$out.fn" "$out.ln" | sort | awk 'NR % 5 == 1' | head -400 > "$out.expect"
  nexp=$(wc -l < "$out.expect")
  if [ "$nexp" -eq 0 ]; then skip "$r $m: addr2line" "the dump has no debug entries inside functions"; return; fi
  bad=""
  for f in $(cut -d' ' -f1 "$out.expect" | sort -u); do
    grep "^$f " "$out.expect" > "$out.one"
    cut -d' ' -f2 "$out.one" | xargs addr2line -e "$f" 2>&1 | sed 's/ (discriminator [0-9]*)$//' > "$out.got"
    cut -d' ' -f3- "$out.one" > "$out.want"
    d=$(paste -d'|' "$out.want" "$out.got" | awk -F'|' '$1 != $2' | head -3)
    [ -z "$d" ] || { bad="$f: want|got: $d"; break; }
  done
  if [ -z "$bad" ]; then pass "$r $m: addr2line prints the dump's file:line ($nexp entries)"
  else fail "$r $m: addr2line" "$bad"; fi

  bad=""
  for a in $(awk 'NR % 97 == 1' "$out.expect" | head -3 | tr ' ' '@'); do
    f=${a%%@*}; rest=${a#*@}; addr=${rest%%@*}; want=${rest#*@}
    file=${want%:*}; line=${want##*:}
    o=$(gdb -batch -nx -ex "info line *$addr" "$f" 2>&1)
    # gdb's complaints start a line ("warning: ...", "Dwarf Error: ..."); symbol names
    # such as erl_parse:return_error/2 must not count.
    if printf '%s\n' "$o" | grep -Eq '^(warning|Error|Dwarf Error|BFD)'; then bad="$f $addr: $o"; break; fi
    printf '%s\n' "$o" | grep -F "Line $line of \"$file\"" >/dev/null || { bad="$f $addr: want $want, got: $o"; break; }
  done
  if [ -z "$bad" ]; then pass "$r $m: gdb loads the file and 'info line' agrees"
  else fail "$r $m: gdb" "$bad"; fi
}

if record_node; then check node function; check node process; fi
if record_erl; then check erl function; check erl process; fi
exit 0
