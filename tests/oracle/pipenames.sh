#!/bin/sh
# Oracle: a pipe written from a recording names its events as the file did.  perf script
# names the first event of each type from its attr as a pipe's HEADER_ATTRs arrive and
# keeps that name over EVENT_DESC's, so without EVENT_UPDATE NAME records `cycles:P`
# prints as `cycles:ppG`, a lone `cpu-clock/name=bar/` as `cpu-clock`, and the columns
# shift with them.  For every fixture, perf script (default fields, and -F with the event
# name) of the file must print the same lines as of `jitanon-inject -i FILE -o -` and
# (default fields) of `perfdata-cat --copy - --pipe FILE`; a pipe input passes through
# with the same lines.  Fixtures: real `perf record -k mono` recordings of many event
# specs, and recordings rewritten by tests/pipenames_fixture.c (jitanon's writer) with
# hardware attrs and the names such machines give them (perf script needs no hardware).
# PIPENAMES_INJECT / PIPENAMES_CAT run another build's tools (to count what it gets right).
jt_name="pipenames oracle"; . "$(dirname "$0")/common.sh"
inj=${PIPENAMES_INJECT:-$root/build/jitanon-inject}
cat_bin=${PIPENAMES_CAT:-$root/build/perfdata-cat}
[ -x "$inj" ] && [ -x "$cat_bin" ] || jt_skip "build/jitanon-inject or build/perfdata-cat not built (make all)"
jt_need_perf
fx=$tmp/pipenames_fixture
${CC:-cc} -std=c99 -O1 -I"$root" -o "$fx" "$root/tests/pipenames_fixture.c" 2>"$tmp/cc.err" ||
  jt_skip "cannot build tests/pipenames_fixture.c: $(head -1 "$tmp/cc.err")"
export DEBUGINFOD_URLS=

work='i=0; while [ $i -lt 4000 ]; do i=$((i+1)); done'
n_rec=0
# rec NAME PERF-RECORD-ARGS...: records the workload into $tmp/NAME.data (listed in $fixtures).
# -N: no build-id cache; --no-bpf-event: synthesizing BPF events takes a second here.
fixtures=""
rec() {
  name=$1; shift
  if perf record -q -N --no-bpf-event -k mono "$@" -o "$tmp/$name.data" -- sh -c "$work" >/dev/null 2>&1 &&
     [ -s "$tmp/$name.data" ]; then
    fixtures="$fixtures $name"; n_rec=$((n_rec + 1))
  else echo "SKIP pipenames $name: perf record $* does not record here"; fi
}
# gen NAME FROM "OPTIONS" SPEC...: a rewritten recording (tests/pipenames_fixture.c).
gen() {
  name=$1; from=$2; opts=$3; shift 3
  # shellcheck disable=SC2086
  if [ ! -s "$tmp/$from.data" ]; then echo "SKIP pipenames $name: no $from recording to rewrite"
  elif "$fx" $opts "$tmp/$from.data" "$tmp/$name.data" "$@" 2>"$tmp/fx.err"; then fixtures="$fixtures $name"
  else echo "FAIL pipenames $name: pipenames_fixture: $(cat "$tmp/fx.err")"; fi
}

rec clock -e cpu-clock
rec clock_u -e cpu-clock:u
rec named_one -e 'cpu-clock/name=bar/'
rec task_faults -e task-clock,page-faults
rec group -e '{cpu-clock,task-clock}'
rec mixed -e cpu-clock:u -e 'cpu-clock/name=foo/' -e '{cpu-clock,task-clock}'
rec period -e cpu-clock -c 100000
rec freq -e 'task-clock/name=tc_freq/' -F 2000
rec callgraph -e cpu-clock --call-graph fp
rec dwarf -e 'cpu-clock/name=dw/' --call-graph dwarf,4096
rec dummy -e dummy -e 'cpu-clock/name=after_dummy/'
rec tracepoint -e sched:sched_process_exec -e 'cpu-clock/name=cc/'
# system-wide: few samples (a 20 ms period), or perf script reads every DSO on the machine
if perf record -q -N --no-bpf-event -k mono -a -e 'cpu-clock/name=sys/' -c 20000000 -o "$tmp/system.data" -- sleep 0.05 >/dev/null 2>&1; then
  fixtures="$fixtures system"; n_rec=$((n_rec + 1))
else echo "SKIP pipenames system: perf record -a is not permitted here"; fi

# Hardware attrs as recordings from machines with counters carry them.
gen hw mixed '' 'cycles:P|0|0|2|H' 'cycles:|0|0|3|' 'cpu/mem-loads/pp|4|0x1cd|2|H' '='
gen hw_one named_one '' 'cycles:P|0|0|2|H'
gen hw_raw group '' 'cpu/event=0x3c,umask=0x0/u|4|0x3c|0|kh' 'instructions:u|0|1|0|kh'
gen hw_112 mixed '-s 112' 'cycles:pp|0|0|2|' 'L1-dcache-load-misses|3|0x10000|0|H'
# (perf 6.1 reads attrs of 136 bytes from a pipe, but no file that holds them)
gen hw_120 mixed '-s 120' 'cycles:P|0|0|2|H' 'branch-misses:P|0|5|3|'
gen hw_bigdesc mixed '-x 2100' 'cycles:P|0|0|2|H' 'cycles:|0|0|3|'
gen hw_nodesc mixed -n 'cycles:P|0|0|2|H' 'cycles:|0|0|3|'

pass=0; fail=0
# same LABEL VIEW-ARGS INPUT PIPE: perf script prints the same for both.
same() {
  # shellcheck disable=SC2086
  perf script $2 -i "$3" >"$tmp/a.txt" 2>&1
  # shellcheck disable=SC2086
  perf script $2 -i - <"$4" >"$tmp/b.txt" 2>&1
  if ! grep -q . "$tmp/a.txt"; then echo "FAIL pipenames $1: perf script printed nothing for the input"; fail=$((fail + 1))
  elif cmp -s "$tmp/a.txt" "$tmp/b.txt"; then pass=$((pass + 1))
  else
    echo "FAIL pipenames $1: perf script differs (input < > pipe):"; diff "$tmp/a.txt" "$tmp/b.txt" | sed -n '2,3p;5p'
    fail=$((fail + 1))
  fi
}
# The -F view (no callchains: perf prints their symbols in a pipe only) on the fixtures
# whose names perf cannot rebuild; the copy is the injector's output byte for byte when
# there is no jitdump, else perf script checks it too.
view='-F comm,tid,time,event,period,ip'
for f in $fixtures; do
  d=$tmp/$f.data
  if "$inj" -i "$d" -o - >"$tmp/inj.pipe" 2>"$tmp/inj.err"; then
    # dummy first: perf checks the CPU field of the first event of a type in a pipe,
    # skips dummy events there, and prints [-01] for the next (a perf quirk, with or
    # without jitanon): only the -F view
    [ "$f" = dummy ] || same "$f: jitanon-inject -o -" "" "$d" "$tmp/inj.pipe"
    case $f in named_one|mixed|freq|dummy|hw*) same "$f: jitanon-inject -o - ($view)" "$view" "$d" "$tmp/inj.pipe" ;; esac
  else echo "FAIL pipenames $f: jitanon-inject: $(head -1 "$tmp/inj.err")"; fail=$((fail + 1)); fi
  if ! "$cat_bin" --copy - --pipe "$d" >"$tmp/cat.pipe" 2>"$tmp/cat.err"; then
    echo "FAIL pipenames $f: perfdata-cat: $(head -1 "$tmp/cat.err")"; fail=$((fail + 1))
  elif ! cmp -s "$tmp/cat.pipe" "$tmp/inj.pipe"; then same "$f: perfdata-cat --copy - --pipe" "" "$d" "$tmp/cat.pipe"; fi
done
nf=$(echo $fixtures | wc -w)
if [ "$fail" -eq 0 ] && [ "$nf" -gt 0 ]; then
  echo "PASS pipenames: $nf fixtures ($n_rec recorded, $((nf - n_rec)) rewritten), $pass perf script views of our pipes print as the file"
else echo "FAIL pipenames: $fail of $((pass + fail)) views differ over $nf fixtures"; fi

# A pipe input keeps its own names: perf record -o - writes EVENT_UPDATE NAME records,
# perf inject -o - none; either way the output prints what the input prints.
if perf record -q -N --no-bpf-event -k mono -e cpu-clock:u -e 'cpu-clock/name=foo/' -o - -- sh -c "$work" >"$tmp/rec.pipe" 2>/dev/null &&
   "$fx" "$tmp/mixed.data" "$tmp/hwp.data" 'cycles:P|0|0|2|H' 2>/dev/null && perf inject -i "$tmp/hwp.data" -o - >"$tmp/pi.pipe" 2>/dev/null; then
  for p in rec pi; do
    if "$inj" -i - -o - <"$tmp/$p.pipe" >"$tmp/inj.pipe" 2>"$tmp/inj.err"; then
      pass=0; fail=0
      same "pipe input ($p)" "" "$tmp/$p.pipe" "$tmp/inj.pipe"
      [ "$fail" -eq 0 ] && echo "PASS pipenames pipe input ($p.pipe): the output prints as the input"
    else echo "FAIL pipenames pipe input ($p): $(head -1 "$tmp/inj.err")"; fi
  done
else echo "SKIP pipenames pipe input: perf record -o - or perf inject -o - failed here"; fi
