#!/bin/sh
# The default writes only the per-function files an address of a sample lands in (issue #23):
# on real recordings, perf report, perf script and perf annotate must print the same with
# the default as with --elf-files=all (every file, perf's set), and the default must write
# fewer files.  Recordings: node -g (frame pointers: callchains), node --call-graph dwarf
# and CPython 3.13 -X perf_jit --call-graph dwarf (perf unwinds the copied user stacks
# through the jitted files' .eh_frame itself).  A file the default leaves out is named by
# an MMAP2 all the same: perf would show a sample there in the file with no symbol
# ([unknown]), so identical output also proves no sample, callchain entry or unwound frame
# reaches one.  Each recording is made once and shared by its checks.
jt_name="sampled oracle"; . "$(dirname "$0")/common.sh"
jt_need_perf
[ -x "$root/build/jitanon-inject" ] || jt_skip "build/jitanon-inject not built (make all)"

# views DIR: what perf prints of DIR/NAME.data (NAME = def, all) with the ELF directory
# renamed, so the two can be compared line by line.
views() {
  d=$1 n=$2
  perf report -i "$d/$n.data" --stdio --no-inline --no-children --sort dso,sym -g caller,0.5,callee,function,percent \
    2>/dev/null | grep -v '^#' | sed "s|$d/$n/|X/|g" > "$d/$n.report"
  perf script -i "$d/$n.data" --no-inline -F tid,time,ip,sym,dso 2>/dev/null | sed "s|$d/$n/|X/|g" > "$d/$n.script"
  # the hottest jitted symbol, annotated
  sym=$(grep '%' "$d/$n.report" | grep -m1 ' jitted-.*\[\.\] ' | sed 's/.*\[\.\] //; s/ *$//')
  : > "$d/$n.annotate"
  [ -z "$sym" ] || perf annotate -i "$d/$n.data" --stdio "$sym" 2>/dev/null | grep -v 'Percent.*Source' |
    sed "s|$d/$n/|X/|g" > "$d/$n.annotate"
  printf '%s' "$sym" > "$d/$n.sym"
}

# check NAME DIR: inject DIR/perf.data both ways, compare the views.  --elf=function:
# the files left out are per-function files (--elf-files=auto writes every region file).
check() {
  name=$1 d=$2
  mkdir -p "$d/def" "$d/all"
  if ! "$root/build/jitanon-inject" -N -i "$d/perf.data" -o "$d/def.data" --elf=function --elf-dir "$d/def" 2>"$d/def.err" ||
     ! "$root/build/jitanon-inject" -N -i "$d/perf.data" -o "$d/all.data" --elf=function --elf-files=all --elf-dir "$d/all" 2>"$d/all.err"
  then echo "FAIL sampled $name: jitanon-inject failed: $(head -c 300 "$d"/*.err)"; return; fi
  views "$d" def
  views "$d" all
  nd=$(ls "$d/def" | wc -l); na=$(ls "$d/all" | wc -l)
  nj=$(grep -c 'X/jitted' "$d/all.script")
  unk=$(grep 'X/jitted' "$d/def.script" | grep -c 'unknown')
  if [ "$nj" -eq 0 ]; then echo "FAIL sampled $name: no sample or frame in a jitted file"
  elif [ "$nd" -ge "$na" ]; then echo "FAIL sampled $name: the default wrote $nd files, --elf-files=all $na"
  elif ! cmp -s "$d/def.script" "$d/all.script"; then
    echo "FAIL sampled $name: perf script differs ($nd of $na files): $(diff "$d/all.script" "$d/def.script" | head -3 | tr '\n' ' ')"
  elif ! cmp -s "$d/def.report" "$d/all.report"; then
    echo "FAIL sampled $name: perf report differs: $(diff "$d/all.report" "$d/def.report" | head -3 | tr '\n' ' ')"
  elif [ -s "$d/all.sym" ] && { [ ! -s "$d/all.annotate" ] || ! cmp -s "$d/def.annotate" "$d/all.annotate"; }; then
    echo "FAIL sampled $name: perf annotate of $(cat "$d/all.sym") differs or is empty"
  else
    # CPython's trampolines are frames, hardly ever a sample's own ip: nothing to annotate
    ann="annotate of $(cut -c1-40 "$d/all.sym")"; [ -s "$d/all.sym" ] || ann="no jitted symbol with samples of its own to annotate"
    echo "PASS sampled $name: report, script ($nj jitted lines, $unk [unknown] in jitted files) identical with $nd of $na files; $ann"
  fi
}

js='function mk(i){return new Function("n","let s="+i+";for(let k=0;k<n;k++)s=(s*31+k)%1000003;return s")}
const fs=[];for(let i=0;i<3000;i++)fs.push(mk(i));
function mid(n){let t=0;for(let i=0;i<40;i++)t+=fs[(i*7+n)%fs.length](n);return t}
let t=0;const end=Date.now()+900;let r=0;while(Date.now()<end){t+=mid(2000+r%50);r++}console.log(t)'
if command -v node >/dev/null 2>&1; then
  for mode in g dwarf; do
    d="$tmp/node-$mode"; mkdir -p "$d"
    if [ $mode = g ]; then cg=-g; else cg="--call-graph=dwarf,16384"; fi
    (cd "$d" && perf record -q $cg -k mono -e cpu-clock -F 2000 -o perf.data node --perf-prof -e "$js" >/dev/null 2>&1)
    jt_dump_pids "$d"
    if [ -f "$d/perf.data" ]; then check "node $cg" "$d"; else echo "FAIL sampled node $cg: could not record node"; fi
  done
else echo "SKIP sampled node: node not installed"; fi

if py=$(jt_python 3.13); then
  d="$tmp/py"; mkdir -p "$d"
  cat > "$d/app.py" <<'EOF'
import time
def leaf(n):
    s = 0
    for i in range(n):
        s = (s * 31 + i) % 1000003
    return s
def mid(k):
    return sum(leaf(200 + j) for j in range(k))
end = time.time() + 0.9
t = 0
while time.time() < end:
    t += mid(20)
print(t)
EOF
  (cd "$d" && perf record -q --call-graph=dwarf,16384 -k mono -e cpu-clock -F 2000 -o perf.data "$py" -X perf_jit app.py >/dev/null 2>&1)
  for p in $(perf script -i "$d/perf.data" -F pid 2>/dev/null | sort -u); do pids="$pids $p"; done
  if [ -f "$d/perf.data" ]; then check "python3.13 -X perf_jit --call-graph=dwarf" "$d"
  else echo "FAIL sampled python3.13: could not record"; fi
else echo "SKIP sampled python3.13: no CPython 3.13 (pyenv)"; fi
