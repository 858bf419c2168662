#!/bin/sh
# Oracle for the layouts perf writes and reads that are not today's file mode: stdout
# output, the README's own pipe examples, file -> pipe copies of every recording kind,
# and old layouts rebuilt byte by byte from today's recordings (tests/oracle/layouts.py):
# perf 4.x's 12-byte HEADER_TRACING_DATA and kernel 3.10's first MMAP2.  Each check
# compares what perf prints for our output with what it prints for the input.
# Prints PASS/FAIL/SKIP lines only.  Run from the repository root.
jt_name="layouts oracle"; . "$(dirname "$0")/common.sh"
perf=${PERF:-/usr/bin/perf}
inj=$root/build/jitanon-inject
cat_bin=$root/build/perfdata-cat
py=$root/tests/oracle/layouts.py
[ -x "$inj" ] && [ -x "$cat_bin" ] || jt_skip "build/jitanon-inject not built (make all)"
[ -x "$perf" ] || jt_skip "perf not installed"
jt_need python3
# tinyjit runs behind perf's pipe: its "pid N" line lands in $tmp/pid.*, read at exit
jt_cleanup_hook() {
  for f in "$tmp"/pid.*; do [ -f "$f" ] && pids="$pids $(sed -n 's/^pid //p' "$f")"; done
}
work='i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'
record() { out=$1; shift; "$perf" record -N -q -k mono "$@" -o "$out" -- sh -c "$work" >/dev/null 2>&1; }
script() { "$perf" script -i "$1" --show-mmap-events --show-task-events >"$2" 2>&1; }

# same NAME INPUT OUTPUT: perf script prints the same for both (and something).
same() {
  script "$2" "$tmp/a.txt"; script "$3" "$tmp/b.txt"
  if ! grep -q . "$tmp/a.txt"; then echo "FAIL $1: perf printed nothing for the input"
  elif cmp -s "$tmp/a.txt" "$tmp/b.txt"; then echo "PASS $1"
  else echo "FAIL $1: perf script differs"; diff "$tmp/a.txt" "$tmp/b.txt" | head -5; fi
}

# -- 1. stdout is pipe mode from any input ---------------------------------------------
if record "$tmp/f.data" -e cpu-clock -g; then
  for o in "" "-o -"; do
    # shellcheck disable=SC2086
    if "$inj" -i "$tmp/f.data" $o >"$tmp/o.pipe" 2>"$tmp/err" && [ "$(head -c 16 "$tmp/o.pipe" | od -An -tx1 | tr -d ' \n')" = 50455246494c45321000000000000000 ]; then
      same "layouts file -> stdout (${o:-no -o}) is a pipe perf reads" "$tmp/f.data" "$tmp/o.pipe"
    else echo "FAIL layouts file -> stdout (${o:-no -o}): $(cat "$tmp/err")"; fi
  done
else echo "SKIP layouts stdout: perf record failed"; fi

# -- 2. the README's pipe examples, exactly as written ---------------------------------
# Every line of the README's "Using the CLI" sh block that pipes through jitanon-inject,
# run in a directory where ./myjit is tinyjit, perf.data its recording and build/ ours.
readme_lines=$(awk '/^## Using the CLI/ {on=1} on && /^```sh/ {blk=1; next} blk && /^```/ {exit} blk' README.md |
  grep 'jitanon-inject' | grep '|')
if [ -z "$readme_lines" ]; then echo "FAIL layouts README: no pipe example through jitanon-inject found"
elif ! tj=$(jt_tinyjit) || ! "$tj" -p 1 -t 1 -d "$tmp" >"$tmp/pid.probe" 2>/dev/null; then
  echo "SKIP layouts README: build/tinyjit does not run here"
else
  mkdir -p "$tmp/rd/bin"
  ln -s "$inj" "$tmp/rd/bin/jitanon-inject"
  ln -s "$(dirname "$inj")" "$tmp/rd/build" # the README writes build/jitanon-inject
  n=0
  # tinyjit's stdout would land inside perf's pipe: its "pid" line goes to a file.
  printf '#!/bin/sh\nexec "%s" -d "%s" -t 300 >"%s/pid.$$"\n' "$tj" "$tmp/rd" "$tmp" >"$tmp/rd/myjit"
  chmod +x "$tmp/rd/myjit"
  if (cd "$tmp/rd" && "$perf" record -q -k mono -e cpu-clock -g -- ./myjit >/dev/null 2>&1); then
    echo "$readme_lines" | {
      while IFS= read -r line; do
        n=$((n + 1))
        if (cd "$tmp/rd" && PATH="$tmp/rd/bin:$PATH" sh -c "$line" >"$tmp/rd/out.$n" 2>"$tmp/rd/err.$n") &&
           grep -q 'tinyjit_f' "$tmp/rd/out.$n"; then
          echo "PASS layouts README example $n: $line"
        else echo "FAIL layouts README example $n: $line: $(grep -v '^$' "$tmp/rd/err.$n" | head -3)"; fi
      done
    }
  else echo "SKIP layouts README: perf record of tinyjit failed"; fi
fi

# views NAME INPUT OUTPUT: perf script and perf report (--no-children: perf turns the
# Children column on by itself only for file input) print the same for both.
views() { # views NAME A B [mods]: perf script and perf report of A and B the same (mods: but
          # for the modifiers of the event names)
  "$perf" script -i "$2" --show-mmap-events --show-task-events >"$tmp/a.txt" 2>&1
  "$perf" script -i "$3" --show-mmap-events --show-task-events >"$tmp/b.txt" 2>&1
  if [ "${4:-}" = mods ]; then
    # perf script pads the event column to the longest name it has seen so far: the
    # names from the attrs (cpu-clock:uH) are longer, and when perf learns the recorded
    # names depends on where the recording's rounds fall; the columns' spacing aside
    for v in a b; do sed 's/\( [a-z-]*\):[ukhHGpP]*:/\1:/; s/  */ /g' "$tmp/$v.txt" > "$tmp/$v.m" && mv "$tmp/$v.m" "$tmp/$v.txt"; done
  fi
  "$perf" report -i "$2" --stdio --no-children 2>&1 | grep -v '^# (Tip: ' >"$tmp/a.rep"
  "$perf" report -i "$3" --stdio --no-children 2>&1 | grep -v '^# (Tip: ' >"$tmp/b.rep"
  if [ "${4:-}" = mods ]; then
    for v in a b; do sed "s/event '\([a-z-]*\):[ukhHGpP]*'/event '\1'/" "$tmp/$v.rep" > "$tmp/$v.m" && mv "$tmp/$v.m" "$tmp/$v.rep"; done
  fi
  LC_ALL=C sort "$tmp/b.rep" > "$tmp/b.sorted"
  if ! grep -q . "$tmp/a.txt"; then echo "FAIL $1: perf printed nothing for the input"
  elif ! cmp -s "$tmp/a.txt" "$tmp/b.txt"; then echo "FAIL $1: perf script differs"; diff "$tmp/a.txt" "$tmp/b.txt" | head -5
  elif ! cmp -s "$tmp/a.rep" "$tmp/b.rep" && ! { LC_ALL=C sort "$tmp/a.rep" | cmp -s - "$tmp/b.sorted"; }; then
    echo "FAIL $1: perf report differs"; diff "$tmp/a.rep" "$tmp/b.rep" | head -5
  elif ! cmp -s "$tmp/a.rep" "$tmp/b.rep"; then
    # the same lines, branches of one weight in another order: perf orders a callchain's
    # branches by weight and ties by the order it met them (with perf script's output
    # identical above, the same samples and chains): seen in CI and in 3 runs of 4 by hand
    # one afternoon, then in none of 30
    echo "PASS $1 (perf report's lines the same, $(diff "$tmp/a.rep" "$tmp/b.rep" | grep -c '^<') of them in another order: branches of equal weight)"
  else echo "PASS $1"; fi
}

# -- 3. file -> pipe writes only the features perf reads from a pipe --------------------
# Each recording gets an empty CPUDESC section (bit 8) and an AUXTRACE index (bit 18, no
# entries): perf reads both from a file, but stops on either in a pipe.
for kind in "callchain:-e cpu-clock -g" "two-events:-e cpu-clock,task-clock" "two-events-g:-e cpu-clock,task-clock -g"; do
  name=${kind%%:*}
  # shellcheck disable=SC2086
  if ! record "$tmp/$name.data" ${kind#*:}; then echo "SKIP layouts $name: perf record failed"; continue; fi
  python3 "$py" feature "$tmp/$name.data" "$tmp/$name.f1" 8 "" &&
    python3 "$py" feature "$tmp/$name.f1" "$tmp/$name.feat" 18 0000000000000000 || { echo "FAIL layouts $name: layouts.py"; continue; }
  if "$cat_bin" --copy - "$tmp/$name.feat" >"$tmp/$name.pipe" 2>"$tmp/err"; then
    views "layouts $name: file with empty CPUDESC and AUXTRACE index -> pipe" "$tmp/$name.feat" "$tmp/$name.pipe"
  else echo "FAIL layouts $name -> pipe: $(cat "$tmp/err")"; fi
  # a file on stdin is read as a file (it seeks: its features, event names among them,
  # come before its records)
  if "$inj" <"$tmp/$name.feat" >"$tmp/$name.inj" 2>"$tmp/err"; then
    views "layouts $name: jitanon-inject <file >pipe" "$tmp/$name.feat" "$tmp/$name.inj"
  else echo "FAIL layouts $name: jitanon-inject <file >pipe: $(cat "$tmp/err")"; fi
  # through a pipe the file cannot seek: its features follow its records, so the event
  # names come after the samples, and perf names the events from their attrs (with the
  # modifiers those imply: cpu-clock:uH for perf's cpu-clock:u of a user's recording,
  # doc/differences.md); everything else must print the same
  if cat "$tmp/$name.feat" | "$inj" >"$tmp/$name.inj2" 2>"$tmp/err"; then
    views "layouts $name: cat file | jitanon-inject >pipe (event modifiers aside)" "$tmp/$name.feat" "$tmp/$name.inj2" mods
  else echo "FAIL layouts $name: cat file | jitanon-inject >pipe: $(cat "$tmp/err")"; fi
done

# through NAME PIPE: perf prints the same for PIPE, our file copy of it, and what
# jitanon-inject writes from it to stdout.
through() {
  if "$cat_bin" --copy "$2.file" "$2" 2>"$tmp/err"; then same "layouts $1 pipe -> file" "$2" "$2.file"
  else echo "FAIL layouts $1 pipe -> file: $(cat "$tmp/err")"; fi
  if "$inj" -i "$2" >"$2.out" 2>"$tmp/err"; then same "layouts $1 through jitanon-inject" "$2" "$2.out"
  else echo "FAIL layouts $1 through jitanon-inject: $(cat "$tmp/err")"; fi
}

# -- 4. perf 4.x pipes: a 12-byte HEADER_TRACING_DATA ------------------------------------
if "$perf" record -N -q -e sched:sched_switch -g -o - -- sh -c 'sleep 0.01' 2>/dev/null >"$tmp/tp.pipe" && [ -s "$tmp/tp.pipe" ]; then
  python3 "$py" tracing12 "$tmp/tp.pipe" "$tmp/t12.pipe"
  same "layouts perf 6.1 reads the 12-byte HEADER_TRACING_DATA as the 16-byte one" "$tmp/tp.pipe" "$tmp/t12.pipe"
  through "12-byte HEADER_TRACING_DATA" "$tmp/t12.pipe"
else echo "SKIP layouts tracing data: perf record -e sched:sched_switch not permitted"; fi

# -- 5. kernel 3.10's first MMAP2 layout (no prot and flags) -----------------------------
if "$perf" record -N -q -k mono -e cpu-clock -g -o - -- sh -c "$work" 2>/dev/null >"$tmp/m.pipe" && [ -s "$tmp/m.pipe" ]; then
  python3 "$py" mmap2v1 "$tmp/m.pipe" "$tmp/v1.pipe"
  "$cat_bin" "$tmp/m.pipe" 2>/dev/null | grep ' MMAP2 ' >"$tmp/m.cat"
  "$cat_bin" "$tmp/v1.pipe" 2>"$tmp/err" | grep ' MMAP2 ' >"$tmp/v1.cat"
  sed 's/^[0-9]* //; s/ prot=.* flags=[^ ]*//' "$tmp/m.cat" >"$tmp/m.names"
  sed 's/^[0-9]* //; s/ prot=.* flags=[^ ]* first-layout//' "$tmp/v1.cat" >"$tmp/v1.names"
  if [ -s "$tmp/m.names" ] && cmp -s "$tmp/m.names" "$tmp/v1.names" && ! grep -q first-layout "$tmp/m.cat"; then
    echo "PASS layouts first MMAP2 layout: every mapping read with its full name ($(wc -l <"$tmp/m.names") MMAP2s)"
  else echo "FAIL layouts first MMAP2 layout names: $(cat "$tmp/err")"; diff "$tmp/m.names" "$tmp/v1.names" | head -3; fi
  through "first MMAP2 layout (passed through as recorded)" "$tmp/v1.pipe"
else echo "SKIP layouts first MMAP2 layout: perf record -o - failed"; fi
# A JIT recorded on such a kernel: the jitdump marker is an MMAP2 of the first layout too.
if [ -x "$tmp/rd/myjit" ] &&
   (cd "$tmp/rd" && "$perf" record -q -k mono -e cpu-clock -o - -- ./myjit 2>/dev/null >"$tmp/rd/j.pipe") && [ -s "$tmp/rd/j.pipe" ]; then
  python3 "$py" mmap2v1 "$tmp/rd/j.pipe" "$tmp/rd/j1.pipe"
  if "$inj" -i "$tmp/rd/j1.pipe" -o "$tmp/rd/j1.data" 2>"$tmp/err" &&
     "$perf" script -i "$tmp/rd/j1.data" -F ip,sym 2>/dev/null | grep -q tinyjit_fn; then
    echo "PASS layouts first MMAP2 layout: jitanon-inject finds the jitdump marker and names the JIT functions"
  else echo "FAIL layouts first MMAP2 layout: no JIT function named after injection: $(cat "$tmp/err")"; fi
fi
