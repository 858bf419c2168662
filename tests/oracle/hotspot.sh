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
mkdir "$tmp/fn"
"$root/build/jitanon-inject" -i "$tmp/perf.data" -o "$tmp/fn.data" --elf-dir "$tmp/fn" 2>/dev/null
if check fn "$tmp/fn.data"; then
  echo "PASS hotspot --elf=function: perfparser names every jitted frame as perf ($(head -1 "$tmp/fn.data.cmp"))"
else echo "FAIL hotspot --elf=function: $(cat "$tmp/fn.data.cmp")"; fi
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
# perf's own files (p_align 8) put every symbol p_vaddr bytes early in perfparser
perf inject --jit -i "$tmp/perf.data" -o "$tmp/perfinj.data" 2>/dev/null
if check perf "$tmp/perfinj.data"; then r=names; else r=misnames; fi
echo "note hotspot: perf inject --jit output: perfparser $r jitted frames ($(head -1 "$tmp/perfinj.data.cmp"))"
