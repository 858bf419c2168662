#!/bin/sh
# hotspot (KDAB's perf GUI) reads perf.data through its headless parser,
# hotspot-perfparser.  Record node with call graphs, inject in both layouts, and check
# sample by sample that every jitted frame perf names carries the same name there
# (tests/oracle/hotspot_cmp.py reads the parser's output stream).
jt_name="hotspot oracle"; . "$(dirname "$0")/common.sh"
pp=""
for c in hotspot-perfparser /usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser \
         /usr/lib/aarch64-linux-gnu/libexec/hotspot-perfparser /usr/libexec/hotspot-perfparser; do
  if command -v "$c" >/dev/null 2>&1; then pp=$(command -v "$c"); break; fi
done
[ -n "$pp" ] || jt_skip "hotspot-perfparser not installed (apt-get install hotspot)"
for t in perf node python3; do jt_need $t; done
jt_need_record
cmp_py="$root/tests/oracle/hotspot_cmp.py"

# V8 writes ./jit-<pid>.dump, so the recording and the ELFs stay in $tmp.
record() {
  rm -f "$tmp/perf.data" "$tmp"/jit-*.dump
  (cd "$tmp" && perf record -q -g -k mono -e cpu-clock -o perf.data node --perf-prof -e '
  function leaf(n){let s=0;for(let i=0;i<n;i++)s+=i%13;return s}
  function mid(n){return leaf(n)+leaf(n>>1)}
  let t=0; for (let k=0;k<300;k++) t+=mid(2e4); console.log(t)' >/dev/null 2>&1)
  [ -f "$tmp/perf.data" ]
}
if ! record; then echo "FAIL hotspot: could not record node"; exit 0; fi

# check NAME DATA: perfparser must name every jitted frame of DATA as perf does.
check() {
  perf script --ns -i "$2" -F tid,time,ip,sym,dso 2>/dev/null > "$2.script"
  "$pp" --input "$2" --output "$2.pp" 2>/dev/null
  python3 "$cmp_py" "$2.pp" "$2.script" > "$2.cmp"
}
# layouts NAME DATA: per-function files (the default) and region files: perfparser names
# every jitted frame as perf does in both (region: see below)
# A third argument: region files (opt-in, not the default) may leave that many frames in a
# thousand to perfparser's own module lookup: elfutils fails to report a file whose module
# overlaps another's (a new file's room below its code lies over the code just below it),
# and perfparser then answers "??" or, where the runtime writes a perf map, the map's name
# (erlang's carry a leading '$').  Any other name that differs fails.  How many depends on
# where samples fall and on code placed over older code (a new file's module then lies
# over the older file's): 0 to 2.4 in 1000 on node compiling throughout, 0 on erlang since
# no two files' modules overlap otherwise (they did, and erlang lost up to 340 in 1000;
# then ~20 in 1000 in one recording in 6, where packed code ran over a file's headers).
layouts() {
  for lay in region function; do
    rm -rf "$tmp/$lay" && mkdir "$tmp/$lay"
    "$root/build/jitanon-inject" -i "$2" -o "$tmp/$lay.data" --elf=$lay -N --elf-dir "$tmp/$lay" 2>/dev/null
    if check $lay "$tmp/$lay.data"; then
      echo "PASS hotspot $1 --elf=$lay ($(ls "$tmp/$lay" | wc -l) files): perfparser names every jitted frame as perf ($(head -1 "$tmp/$lay.data.cmp"))"
      continue
    fi
    line=$(head -1 "$tmp/$lay.data.cmp")
    if [ $lay = region ] && [ "${3:-}" = note ]; then
      echo "note hotspot $1 --elf=region (opt-in; a known gap, doc/layouts.md): $line"; continue; fi
    bad=$(echo "$line" | sed -n 's/.* \([0-9]*\) of \([0-9]*\) jitted frames differ.*/\1/p')
    all=$(echo "$line" | sed -n 's/.* \([0-9]*\) of \([0-9]*\) jitted frames differ.*/\2/p')
    if [ $lay = region ] && [ -n "${3:-}" ] && [ -n "$bad" ] && [ "${all:-0}" -gt 0 ] && [ $((bad * 1000)) -le $((all * $3)) ] &&
       ! grep '^  differs:' "$tmp/$lay.data.cmp" | awk '{ i = index($0, " perfparser="); j = index($0, " perf="); q = substr($0, i + 12)
            p = substr($0, j + 6, i - j - 6); if (q != "??" && q != "$" p) bad = 1 } END { exit !bad }'; then
      echo "PASS hotspot $1 --elf=$lay ($(ls "$tmp/$lay" | wc -l) files): perfparser names all but $bad of $all jitted frames as perf, the rest '??' or the perf map's name (its module lookup; at most $3 in 1000) ($line)"
    else echo "FAIL hotspot $1 --elf=$lay: $(cat "$tmp/$lay.data.cmp")"; fi
  done
}
layouts node "$tmp/perf.data"
# perfparser keys its address cache by file path and offset from each mapping's start,
# so one file mapped once per function (at a different pgoff each time) mixes functions
# up; see doc/faq.md.  Until perfparser keys by file offset the check guards the
# share it gets right (measured: 92-93%; it fails below 75%).
# Which frames the cache mixes up depends on where the samples fall: when the hottest
# function happens to share offsets with another, over half can go (seen once in ~20 runs,
# 1502 of 2734), so a share below the bar gets one more recording before it fails.
proc_share() { # 0: every frame or at least 75% named as perf; the message in $proc_msg
  rm -rf "$tmp/proc" && mkdir "$tmp/proc"
  "$root/build/jitanon-inject" -i "$tmp/perf.data" -o "$tmp/proc.data" --elf=process --elf-dir "$tmp/proc" 2>/dev/null
  if check proc "$tmp/proc.data"; then
    proc_msg="perfparser names every jitted frame as perf ($(head -1 "$tmp/proc.data.cmp"))"; return 0; fi
  line=$(head -1 "$tmp/proc.data.cmp")
  bad=$(echo "$line" | sed -n 's/.* \([0-9]*\) of \([0-9]*\) jitted frames differ.*/\1/p')
  all=$(echo "$line" | sed -n 's/.* \([0-9]*\) of \([0-9]*\) jitted frames differ.*/\2/p')
  if [ -n "$bad" ] && [ "${all:-0}" -gt 0 ] && [ $((bad * 4)) -le "$all" ]; then
    proc_msg="perfparser names $((all - bad)) of $all jitted frames as perf; the rest fall to its offset-keyed cache, a known limitation (doc/faq.md) ($line)"
    return 0
  fi
  proc_msg="more misnamed than its offset-keyed cache explains: $(cat "$tmp/proc.data.cmp")"; return 1
}
if proc_share; then echo "PASS hotspot --elf=process: $proc_msg"
else
  first=$proc_msg
  if record && proc_share; then echo "PASS hotspot --elf=process: $proc_msg (second recording; the first: $first)"
  else echo "FAIL hotspot --elf=process: $proc_msg (first recording: $first)"; fi
fi
# node compiling throughout (JS and wasm functions made while it runs: code placed over
# freed code, many runs of pages), and erlang's JIT (one dump, coalesced //anon)
mkdir "$tmp/busy"
(cd "$tmp/busy" && perf record -q -g -k mono -e cpu-clock -o perf.data node --perf-prof -e '
  const w = new Uint8Array([0,97,115,109,1,0,0,0,1,7,1,96,2,127,127,1,127,3,2,1,0,7,7,1,3,97,100,100,0,0,10,9,1,7,0,32,0,32,1,106,11]);
  let t = 0;
  for (let k = 0; k < 600; k++) {
    const f = new Function("n", "let s = " + k + "; for (let i = 0; i < n; i++) s = (s * 31 + i) | 0; return s");
    const add = new WebAssembly.Instance(new WebAssembly.Module(w)).exports.add;
    for (let r = 0; r < 40; r++) t = add(t, f(2000)) | 0;
  }
  console.log(t)' >/dev/null 2>&1)
if [ -f "$tmp/busy/perf.data" ]; then layouts "node (compiling throughout)" "$tmp/busy/perf.data" 5
else echo "FAIL hotspot: could not record the busy node"; fi
if command -v erl >/dev/null 2>&1; then
  mkdir "$tmp/erl"
  (cd "$tmp/erl" && perf record -q -g -k mono -e cpu-clock -o perf.data erl -noshell +S 1 +JPperf true -eval '
    F = fun F(0, A) -> A; F(N, A) -> F(N - 1, A + N rem 7) end,
    io:format("~p ~p~n", [os:getpid(), F(3000000, 0)]), halt().' > out.txt 2>/dev/null)
  epid=$(awk '{print $1; exit}' "$tmp/erl/out.txt" | tr -dc 0-9); pids="$pids $epid"
  if [ -f "$tmp/erl/perf.data" ] && [ -n "$epid" ]; then layouts erlang "$tmp/erl/perf.data" 5
  else echo "FAIL hotspot: could not record erl"; fi
fi
# perf's own files (p_align 8) put every symbol p_vaddr bytes early in perfparser
perf inject --jit -i "$tmp/perf.data" -o "$tmp/perfinj.data" 2>/dev/null
if check perf "$tmp/perfinj.data"; then r=names; else r=misnames; fi
echo "note hotspot: perf inject --jit output: perfparser $r jitted frames ($(head -1 "$tmp/perfinj.data.cmp"))"
