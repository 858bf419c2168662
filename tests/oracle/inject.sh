#!/bin/sh
# End to end with real perf: record a real JIT (tinyjit, node, erlang), inject with
# jitanon-inject and with `perf inject --jit`, and compare what perf reports.
jt_name="inject oracle"; jt_tmpfs=1; . "$(dirname "$0")/common.sh"
jt_need_perf
cmp_py="$root/tests/oracle/compare_samples.py"
script() { perf script -i "$1" -F tid,time,ip,sym,dso 2>/dev/null > "$2"; }

# check NAME DIR DATA: inject DATA in every mode, compare sample resolutions.
check() {
  name=$1 dir=$2 data=$3
  mkdir -p "$dir/ours" "$dir/all" "$dir/proc" "$dir/fn" "$dir/rg"
  if ! "$root/build/jitanon-inject" -i "$data" -o "$dir/ours.data" --elf-dir "$dir/ours" 2> "$dir/err"; then
    echo "FAIL inject $name: jitanon-inject failed: $(cat "$dir/err")"; return; fi
  "$root/build/jitanon-inject" -i "$data" -o "$dir/all.data" --anon=all --elf=function --elf-dir "$dir/all" 2>/dev/null
  "$root/build/jitanon-inject" -i "$data" -o "$dir/proc.data" --elf=process --elf-dir "$dir/proc" 2>/dev/null
  "$root/build/jitanon-inject" -i "$data" -o "$dir/fn.data" --elf=function --elf-dir "$dir/fn" 2>/dev/null
  "$root/build/jitanon-inject" -i "$data" -o "$dir/rg.data" --elf=region --elf-dir "$dir/rg" 2>/dev/null
  perf inject --jit -i "$data" -o "$dir/perfinj.data" 2>/dev/null
  script "$data" "$dir/raw.txt"; script "$dir/perfinj.data" "$dir/perf.txt"; script "$dir/ours.data" "$dir/ours.txt"
  script "$dir/all.data" "$dir/all.txt"; script "$dir/proc.data" "$dir/proc.txt"; script "$dir/fn.data" "$dir/fn.txt"
  script "$dir/rg.data" "$dir/rg.txt"
  # one comparison of perf script's lines (script_cmp-style modes of $cmp_py): what, then
  # the two listings, what a PASS says and what a FAIL says
  cmp_check() {
    if out=$(python3 "$cmp_py" "$1" "$dir/raw.txt" "$2" "$3"); then echo "PASS inject $name: $4 ($out)"
    else echo "FAIL inject $name: $5: $out"; fi
  }
  cmp_check contract "$dir/perf.txt" "$dir/ours.txt" "range mode keeps every answer" "range mode"
  cmp_check same "$dir/perf.txt" "$dir/all.txt" "--anon=all --elf=function gives perf inject's sample lines" \
    "--anon=all differs from perf inject"
  cmp_check samesym "$dir/fn.txt" "$dir/rg.txt" "region files resolve every sample as per-function files" \
    "region files differ from per-function files"
  cmp_check samesym "$dir/fn.txt" "$dir/proc.txt" "--elf=process resolves every sample as per-function mode" \
    "--elf=process differs from per-function"
  # the per-process file is the one jitdump-elf --process makes from the dump alone
  for so in "$dir"/proc/jitted-*.so; do
    [ -f "$so" ] || continue
    p=${so##*/jitted-}; p=${p%.so}
    d="$dir/jit-$p.dump"; [ -f "$d" ] || d="/tmp/jit-$p.dump"
    mkdir -p "$dir/je"
    if "$root/build/jitdump-elf" --process "$d" "$dir/je" >/dev/null 2>&1 && cmp -s "$so" "$dir/je/jitted-$p.so"; then
      echo "PASS inject $name: --elf=process file is byte-identical to jitdump-elf --process"
    else echo "FAIL inject $name: --elf=process file differs from jitdump-elf --process ($d)"; fi
  done
  sampled "$name" "$dir" "$data"
}

# sampled NAME DIR DATA [PERF-SCRIPT-ARGS]: --elf-files=sampled writes fewer files, each
# byte-identical to the one of that name --elf-files=all writes, and perf script prints the
# same lines (callchains included) as with every file written.
sampled() {
  name=$1 dir=$2 data=$3 args=${4:-}
  mkdir -p "$dir/every" "$dir/samp"
  "$root/build/jitanon-inject" -i "$data" -o "$dir/every.data" --elf=function --elf-files=all --elf-dir "$dir/every" 2>/dev/null
  "$root/build/jitanon-inject" -i "$data" -o "$dir/samp.data" --elf=function --elf-files=sampled --elf-dir "$dir/samp" 2>/dev/null
  perf script -i "$dir/every.data" $args -F tid,time,ip,sym,dso 2>/dev/null | sed 's|every/jitted|X/jitted|' > "$dir/every.txt"
  perf script -i "$dir/samp.data" $args -F tid,time,ip,sym,dso 2>/dev/null | sed 's|samp/jitted|X/jitted|' > "$dir/samp.txt"
  n_all=$(ls "$dir/every" | wc -l); n_samp=$(ls "$dir/samp" | wc -l)
  n_jit=$(grep -c 'X/jitted' "$dir/every.txt")
  differ=""
  for f in "$dir"/samp/*; do [ -f "$f" ] && ! cmp -s "$f" "$dir/every/${f##*/}" && differ="$differ ${f##*/}"; done
  if [ "$n_jit" -gt 0 ] && [ "$n_samp" -le "$n_all" ] && [ -z "$differ" ] && cmp -s "$dir/every.txt" "$dir/samp.txt"; then
    echo "PASS inject $name: --elf-files=sampled: $n_samp of $n_all files, perf script output identical ($n_jit jitted lines)"
  elif [ -n "$differ" ]; then echo "FAIL inject $name: --elf-files=sampled: files differ from --elf-files=all's:$(echo $differ | cut -c1-200)"
  else echo "FAIL inject $name: --elf-files=sampled: $n_samp of $n_all files, $n_jit jitted lines, outputs $(cmp "$dir/every.txt" "$dir/samp.txt" 2>&1 | head -1)"; fi
}

# 1. tinyjit: coalesced //anon mmaps over jitted code, stubs named only in the perf map.
mkdir "$tmp/tj"
(cd "$tmp/tj" && perf record -q -k mono -e cpu-clock -o perf.data "$root/build/tinyjit" -t 400 > out.txt 2>/dev/null)
tjpid=$(sed -n 's/^pid //p' "$tmp/tj/out.txt"); pids="$pids $tjpid"
if [ -n "$tjpid" ]; then
  check tinyjit "$tmp/tj" "$tmp/tj/perf.data"
  perf report -i "$tmp/tj/ours.data" --stdio --sort sym 2>/dev/null > "$tmp/tj/report.txt"
  missing=""
  for p in 0 1 2 3 4 5 6 7; do
    for f in fn_p${p}_0 fn_p${p}_1 fn_p${p}_2 stub_p$p; do
      grep -q "tinyjit_$f\$" "$tmp/tj/report.txt" || missing="$missing $f"
    done
  done
  if [ -z "$missing" ]; then echo "PASS inject tinyjit: every jitdump function and every perf-map stub resolves by name"
  else echo "FAIL inject tinyjit: not in perf report:$missing"; fi
  perf report -i "$tmp/tj/perfinj.data" --stdio --sort sym 2>/dev/null > "$tmp/tj/report-perf.txt"
  if grep -q 'tinyjit_stub' "$tmp/tj/report-perf.txt"; then
    echo "FAIL inject tinyjit: expected perf inject --jit to lose the stubs (demo premise)"
  else echo "PASS inject tinyjit: perf inject --jit shows the stubs as [unknown] (the problem we fix)"; fi
  # pipe mode: perf record -o - | jitanon-inject | perf report -i -
  (cd "$tmp/tj" && perf record -q -k mono -e cpu-clock -o - "$root/build/tinyjit" -t 200 2>/dev/null > pipe.data)
  ppid=$(grep -ao 'jit-[0-9]*\.dump' "$tmp/tj/pipe.data" | head -1 | tr -dc 0-9); pids="$pids $ppid"
  if "$root/build/jitanon-inject" --elf-dir "$tmp/tj/ours" < "$tmp/tj/pipe.data" 2>"$tmp/tj/perr" | perf report -i - --stdio --sort sym 2>/dev/null > "$tmp/tj/pipe-report.txt" \
     && grep -q 'tinyjit_stub_p0$' "$tmp/tj/pipe-report.txt" && grep -q 'tinyjit_fn_p0_0$' "$tmp/tj/pipe-report.txt"; then
    echo "PASS inject tinyjit: pipe mode (perf record -o - | jitanon-inject | perf report -i -)"
  else echo "FAIL inject tinyjit: pipe mode: $(head -3 "$tmp/tj/perr")"; fi
else
  echo "FAIL inject tinyjit: could not record tinyjit"
fi

# 1b. jitgen: a synthesized recording (unwinding info kept mapped after the code,
#     debug info, V8-like names) - perf inject must agree with us on it too.
mkdir "$tmp/gen"
if "$root/build/jitgen" --loads 400 --samples 20000 --quiet "$tmp/gen" >/dev/null 2>&1; then
  check jitgen "$tmp/gen" "$tmp/gen/perf.data"
  jt_region_frames "inject jitgen" "$tmp/gen" "$tmp/gen/perf.data"
else echo "FAIL inject jitgen: build/jitgen failed"; fi

# 2. node --perf-prof (V8 writes ./jit-<pid>.dump), with a perf map too.
if command -v node >/dev/null 2>&1; then
  mkdir "$tmp/node"
  (cd "$tmp/node" && perf record -q -k mono -e cpu-clock -o perf.data node --perf-prof --perf-basic-prof -e '
    function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
    function g(n){let a=[];for(let i=0;i<n;i++)a.push(i*2);return a.reduce((x,y)=>x+y,0)}
    let t=0; for (let k=0;k<300;k++) t+=f(2e4)+g(3e3); console.log(t)' >/dev/null 2>&1)
  jt_dump_pids "$tmp/node"
  if [ -f "$tmp/node/perf.data" ]; then check node "$tmp/node" "$tmp/node/perf.data"
  else echo "FAIL inject node: could not record node"; fi
  # with call graphs: the callchain entries decide which files are needed too
  mkdir "$tmp/nodeg"
  (cd "$tmp/nodeg" && perf record -q -g -k mono -e cpu-clock -o perf.data node --perf-prof -e '
    function leaf(n){let s=0;for(let i=0;i<n;i++)s+=i%13;return s}
    function mid(n){return leaf(n)+leaf(n>>1)}
    let t=0; for (let k=0;k<400;k++) t+=mid(2e4); console.log(t)' >/dev/null 2>&1)
  jt_dump_pids "$tmp/nodeg"
  if [ -f "$tmp/nodeg/perf.data" ]; then sampled "node -g" "$tmp/nodeg" "$tmp/nodeg/perf.data"
    jt_region_frames "inject node -g" "$tmp/nodeg" "$tmp/nodeg/perf.data"
  else echo "FAIL inject node -g: could not record node"; fi
  # --call-graph=dwarf: perf report unwinds user stacks through jitted files, so sampled
  # mode writes every file a word of a stack copy points into (tests/oracle/sampled.sh
  # compares report, script and annotate)
  mkdir "$tmp/noded"
  (cd "$tmp/noded" && perf record -q --call-graph dwarf -k mono -e cpu-clock -o perf.data node --perf-prof -e '
    function leaf(n){let s=0;for(let i=0;i<n;i++)s+=i%13;return s}
    let t=0; for (let k=0;k<100;k++) t+=leaf(2e4); console.log(t)' >/dev/null 2>&1)
  jt_dump_pids "$tmp/noded"
  # (--no-inline: perf script asks addr2line for every frame's inline stack, and on node's
  # 98 MB binary with DWARF that took 200 s per view, most of this oracle; what it would
  # add is a function of each frame's file and address, which are compared anyway - and
  # the files are byte-identical - as tests/oracle/sampled.sh does)
  if [ -f "$tmp/noded/perf.data" ]; then sampled "node --call-graph=dwarf" "$tmp/noded" "$tmp/noded/perf.data" --no-inline
    jt_region_frames "inject node --call-graph=dwarf" "$tmp/noded" "$tmp/noded/perf.data" --no-inline
  else echo "FAIL inject node --call-graph=dwarf: could not record node"; fi
else echo "SKIP inject node: node not installed"; fi

# 3. erlang +JPperf true (dump and map in /tmp; its JIT emits coalesced //anon events).
if command -v erl >/dev/null 2>&1; then
  mkdir "$tmp/erl"
  (cd "$tmp/erl" && perf record -q -k mono -e cpu-clock -o perf.data erl -noshell +S 1 +JPperf true -eval '
    F = fun F(0, A) -> A; F(N, A) -> F(N - 1, A + N rem 7) end,
    io:format("~p ~p~n", [os:getpid(), F(3000000, 0)]), halt().' > out.txt 2>/dev/null)
  epid=$(awk '{print $1; exit}' "$tmp/erl/out.txt" | tr -dc 0-9); pids="$pids $epid"
  if [ -f "$tmp/erl/perf.data" ] && [ -n "$epid" ]; then check erlang "$tmp/erl" "$tmp/erl/perf.data"; jt_region_frames "inject erlang" "$tmp/erl" "$tmp/erl/perf.data"
  else echo "FAIL inject erlang: could not record erl"; fi
else echo "SKIP inject erlang: erl not installed (apt-get install erlang-base)"; fi
