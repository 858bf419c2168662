#!/bin/sh
# Oracle: pipes of recordings this machine cannot make print as the file does.  perf
# script of `jitanon-inject -i FILE -o -`, read through a real pipe, must print the same
# lines (stdout) as of FILE, for recordings of three layouts (issue #33 item 6):
#   - LBR call stacks (`--call-graph lbr`: BRANCH_STACK with CALL_STACK, with and without
#     the hw_idx word, some empty; BRANCH_STACK and CPU_PMU_CAPS features),
#   - Intel PT (AUXTRACE_INFO, AUX, ITRACE_START, AUXTRACE records and their trace data,
#     the HEADER_AUXTRACE index; the trace in time order or all of it at the end),
#   - `perf record -z` with kernel callchains (zstd, decompressed into the pipe),
# the first two rewritten from a real `perf record -g` by tests/pipeshapes_fixture.c
# (jitanon's writer; no PMU needed to read them), and a pipe input of each (perf's own
# `perf inject -o -` / `perf record -z -o -`) through `jitanon-inject -i - -o -`.
# Through a pipe, not `perf script -i - < FILE`: perf 6.1 seeks its input to an
# AUXTRACE record's trace data counting from after the 16-byte pipe header, so pipe-format
# data in a regular file loses its place at the first AUXTRACE record (perf's own pipes
# too; doc/differences.md).
jt_name="pipeshapes oracle"; . "$(dirname "$0")/common.sh"
inj=$root/build/jitanon-inject
[ -x "$inj" ] || jt_skip "build/jitanon-inject not built (make all)"
jt_need_perf -g
fx=$tmp/pipeshapes_fixture
${CC:-cc} -std=c99 -O1 -I"$root" -o "$fx" "$root/tests/pipeshapes_fixture.c" 2>"$tmp/cc.err" ||
  jt_skip "cannot build tests/pipeshapes_fixture.c: $(head -1 "$tmp/cc.err")"
export DEBUGINFOD_URLS=

# A shell loop (user frames), then a few processes reading /proc (kernel frames): a few
# hundred samples of 100 us.
work='i=0; while [ $i -lt 6000 ]; do i=$((i+1)); done; for j in 1 2 3 4 5 6; do cat /proc/cpuinfo /proc/self/maps; done >/dev/null'
rec() { perf record -q -N --no-bpf-event -k mono -e cpu-clock -c 100000 "$@" -- sh -c "$work" 2>/dev/null; }
rec -g -o "$tmp/g.data" >/dev/null && [ -s "$tmp/g.data" ] || jt_skip "perf record -g does not record here"

pass=0; fail=0; lines=0; kframes=0
# same LABEL VIEW INPUT PIPE-CMD: perf script VIEW prints the same lines for INPUT (a
# perf.data file, or `| CMD`: a pipe) and for what PIPE-CMD writes to its pipe.
# shellcheck disable=SC2086
same() {
  case $3 in
    "| "*) sh -c "${3#| }" | perf script $2 -i - >"$tmp/a.txt" 2>"$tmp/a.err" ;;
    *) perf script $2 -i "$3" >"$tmp/a.txt" 2>"$tmp/a.err" ;;
  esac
  sh -c "$4" | perf script $2 -i - >"$tmp/b.txt" 2>"$tmp/b.err"
  n=$(grep -c . "$tmp/a.txt")
  if [ "$n" -eq 0 ]; then
    echo "FAIL pipeshapes $1: perf script printed nothing for the input ($(head -1 "$tmp/a.err"))"; fail=$((fail + 1))
  elif cmp -s "$tmp/a.txt" "$tmp/b.txt"; then pass=$((pass + 1)); lines=$((lines + n))
  else
    echo "FAIL pipeshapes $1: $(diff "$tmp/a.txt" "$tmp/b.txt" | grep -c '^<') of $n lines differ (input < > pipe):"
    diff "$tmp/a.txt" "$tmp/b.txt" | sed -n '2,3p;5p'; head -2 "$tmp/b.err"
    fail=$((fail + 1))
  fi
}
# check NAME FILE VIEWS...: the file against our pipe of it for every view ('' = perf's
# defaults), then perf's pipe of it (perf inject -o -) against ours of that pipe in the
# first view.
check() {
  name=$1; d=$2; shift 2
  for v in "$@"; do same "$name ${v:-(default)}" "$v" "$d" "'$inj' -i '$d' -o - 2>/dev/null"; done
  if perf inject -i "$d" -o - >"$tmp/pi.pipe" 2>/dev/null; then
    same "$name pipe input (perf inject -o -)" "$1" "| cat '$tmp/pi.pipe'" "'$inj' -i - -o - <'$tmp/pi.pipe' 2>/dev/null"
  else echo "FAIL pipeshapes $name: perf inject -o - failed"; fail=$((fail + 1)); fi
}
fixture() {
  if "$fx" "$1" "$tmp/g.data" "$tmp/$1.data" 2>"$tmp/fx.err"; then return 0; fi
  echo "FAIL pipeshapes $1: pipeshapes_fixture: $(cat "$tmp/fx.err")"; fail=$((fail + 1)); return 1
}

for s in lbr lbr-nohw; do
  fixture $s && check $s "$tmp/$s.data" '' '-F comm,tid,time,ip,sym,dso,brstack' '-F +brstacksym' '-G'
done
# An empty LBR stack (nr 0): perf 6.1 still reads a first entry, past the sample's end (from
# a file the next record's bytes, from a pipe its own heap), so callchains differ there
# whatever the pipe holds (doc/pipes.md); the views without callchains must not.
fixture lbr-empty && check lbr-empty "$tmp/lbr-empty.data" '-G' '-F comm,tid,time,ip,sym,brstack -G'
for s in pt pt-late; do
  fixture $s && check $s "$tmp/$s.data" '' '--itrace=e' '--itrace=bei'
done
if rec -z -g -o "$tmp/z.data" >/dev/null && [ -s "$tmp/z.data" ]; then
  check zstd "$tmp/z.data" '-G' '-F comm,tid,time,ip,sym,dso' ''
  kframes=$(grep -c "kernel.kallsyms" "$tmp/a.txt") # default view (check ends with it, of the pipe input)
  # perf's own compressed pipe: our pipe of it is decompressed
  if rec -z -g -o - >"$tmp/zp.pipe" && [ -s "$tmp/zp.pipe" ]; then
    same "zstd pipe input (perf record -z -o -)" "" "| cat '$tmp/zp.pipe'" "'$inj' -i - -o - <'$tmp/zp.pipe' 2>/dev/null"
  else echo "SKIP pipeshapes zstd pipe input: perf record -z -o - does not record here"; fi
else echo "SKIP pipeshapes zstd: perf record -z does not record here (perf built without zstd)"; fi

if [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]; then
  echo "PASS pipeshapes: $pass perf script views of our pipes print as their input ($lines lines; LBR call stacks, Intel PT, zstd with $kframes kernel frames)"
else echo "FAIL pipeshapes: $fail of $((pass + fail)) views differ"; fi
