#!/bin/sh
# Oracle for the perf.data reader/writer: records with the real perf, copies each recording
# with build/perfdata-cat (file->file, file->pipe, pipe->file, pipe->pipe) and checks that
# `perf script` and `perf report --stdio` print exactly the same for copy and original.
# Prints PASS/FAIL/SKIP lines only.  Run from the repository root.
jt_name="perfdata oracle"; . "$(dirname "$0")/common.sh"
cat_bin=build/perfdata-cat
perf=${PERF:-/usr/bin/perf}
[ -x "$cat_bin" ] || jt_skip "$cat_bin not built (make all)"
[ -x "$perf" ] || jt_skip "perf not installed"

# < 0.3 s of user-space work in a child shell.
work='i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'

# -N: no build-id cache, so nothing is written outside $tmp.
record() { out=$1; shift; "$perf" record -N -q -k mono "$@" -o "$out" -- sh -c "$work" >/dev/null 2>&1; }

# script and report output of one input.  The only line stripped is perf report's
# "# (Tip: ...)" line, which perf picks at random on every run.
views() {
  "$perf" script -i "$1" --show-mmap-events --show-task-events >"$2.script" 2>&1
  "$perf" report -i "$1" --stdio $3 2>&1 | grep -v '^# (Tip: ' >"$2.report"
}

# compare NAME ORIGINAL COPY [REPORT-OPTIONS]
# Comparisons with a pipe-mode side pass --no-children: perf report turns the Children
# column on by itself only for file input (perf's own `perf inject -o -` output shows
# the same), so the default views of a file and its pipe form legitimately differ.
compare() {
  views "$2" "$tmp/a" "${4:-}"; views "$3" "$tmp/b" "${4:-}"
  if [ ! -s "$tmp/a.script" ] || ! grep -q . "$tmp/a.report"; then echo "FAIL $1: perf printed nothing for the original"
  elif ! cmp -s "$tmp/a.script" "$tmp/b.script"; then echo "FAIL $1: perf script differs"; diff "$tmp/a.script" "$tmp/b.script" | head -5
  elif ! cmp -s "$tmp/a.report" "$tmp/b.report"; then echo "FAIL $1: perf report differs"; diff "$tmp/a.report" "$tmp/b.report" | head -5
  else echo "PASS $1"; fi
}

# file_case NAME PERF-RECORD-ARGS...: file->file and file->pipe copies.
file_case() {
  name=$1; shift
  if ! record "$tmp/$name.data" "$@"; then echo "SKIP perfdata $name: perf record $* failed"; return; fi
  if "$cat_bin" --copy "$tmp/$name.copy" "$tmp/$name.data" 2>"$tmp/err"; then
    compare "perfdata $name file->file" "$tmp/$name.data" "$tmp/$name.copy"
  else echo "FAIL perfdata $name file->file: $(cat "$tmp/err")"; fi
  if "$cat_bin" --copy - "$tmp/$name.data" >"$tmp/$name.pipe" 2>"$tmp/err"; then
    compare "perfdata $name file->pipe" "$tmp/$name.data" "$tmp/$name.pipe" --no-children
  else echo "FAIL perfdata $name file->pipe: $(cat "$tmp/err")"; fi
  if "$cat_bin" "$tmp/$name.data" >/dev/null 2>"$tmp/err"; then echo "PASS perfdata $name: cat reads every record"
  else echo "FAIL perfdata $name: cat: $(cat "$tmp/err")"; fi
}

file_case cpu-clock -e cpu-clock
file_case callchain -e cpu-clock -g
file_case two-events -e cpu-clock,task-clock
if "$perf" record -N -q -a -k mono -e cpu-clock -o "$tmp/sys.probe" -- true >/dev/null 2>&1; then
  file_case system-wide -a -e cpu-clock
else echo "SKIP perfdata system-wide: perf record -a not permitted"; fi

# Pipe mode: keep perf's own stream (tee) and compare it with what we wrote from it.
if "$perf" record -N -q -k mono -e cpu-clock,task-clock -g -o - -- sh -c "$work" 2>/dev/null |
   tee "$tmp/p.pipe" | "$cat_bin" --copy "$tmp/p.copy" - 2>"$tmp/err"; then
  compare "perfdata pipe->file" "$tmp/p.pipe" "$tmp/p.copy" --no-children
  if "$cat_bin" --copy - - <"$tmp/p.pipe" >"$tmp/pp.pipe" && cmp -s "$tmp/p.pipe" "$tmp/pp.pipe"; then
    echo "PASS perfdata pipe->pipe byte-identical"
  else echo "FAIL perfdata pipe->pipe byte-identical"; fi
else echo "FAIL perfdata pipe->file: $(cat "$tmp/err")"; fi

# Compressed input (perf record -z) is decoded: the copy is uncompressed and perf reads
# the same events from it.
if record "$tmp/z.data" -z -e cpu-clock; then
  if ! "$cat_bin" --copy "$tmp/z.copy" "$tmp/z.data" 2>"$tmp/err"; then echo "FAIL perfdata compressed: $(cat "$tmp/err")"
  elif ! "$perf" report --header-only -i "$tmp/z.data" 2>/dev/null | grep -q '^# compressed' ||
       "$perf" report --header-only -i "$tmp/z.copy" 2>/dev/null | grep -q '^# compressed'; then
    echo "FAIL perfdata compressed: the input should claim compression and the copy not"
  else compare "perfdata compressed -> uncompressed copy" "$tmp/z.data" "$tmp/z.copy"; fi
else echo "SKIP perfdata compressed: perf record -z failed (no zstd?)"; fi

# A temporary file never survives a failed copy.
if ls -A "$tmp" | grep -q '\.tmp$'; then echo "FAIL perfdata no temporary files left"
else echo "PASS perfdata no temporary files left"; fi
