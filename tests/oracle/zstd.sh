#!/bin/sh
# perf record -z (zstd-compressed records) of a short node --perf-prof run, in file and
# pipe mode: jitanon-inject keeps every sample (perf script on the output shows the
# samples perf script shows on the compressed input, same tid/time/ip, in order), names
# the jitted functions as `perf inject --jit` does (on an uncompressed copy: perf 6.1
# injects nothing into a -z recording) and writes the output uncompressed.
jt_name="zstd oracle"; . "$(dirname "$0")/common.sh"
jt_need_perf
jt_need node "apt-get install nodejs"
jt_perf_records -z || jt_skip "perf record -z cannot record here (perf built without zstd?)"
cmp_py="$root/tests/oracle/compare_samples.py"
js='function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
    function g(n){let a=[];for(let i=0;i<n;i++)a.push(i*2);return a.reduce((x,y)=>x+y,0)}
    let t=0; for (let k=0;k<300;k++) t+=f(2e4)+g(3e3); console.log(t)'
script() { perf script -i "$1" -F tid,time,ip,sym,dso 2>/dev/null > "$2"; }
samples() { sed -n 's/^ *\([0-9][0-9]*\) *\([0-9.]*\): *\([0-9a-f][0-9a-f]*\) .*/\1 \2 \3/p' "$1"; }

# check NAME DIR INPUT: INPUT is the -z recording (file or pipe)
check() {
  name=$1 dir=$2 in=$3
  if ! perf report --header-only -i "$in" 2>/dev/null | grep -q '^# compressed'; then
    echo "FAIL zstd $name: the recording is not compressed"; return; fi
  mkdir -p "$dir/ours" "$dir/copy" "$dir/perfinj"
  if ! "$root/build/jitanon-inject" -i "$in" -o "$dir/ours.data" --elf-dir "$dir/ours" 2> "$dir/err"; then
    echo "FAIL zstd $name: jitanon-inject failed: $(cat "$dir/err")"; return; fi
  script "$in" "$dir/raw.txt"
  script "$dir/ours.data" "$dir/ours.txt"
  samples "$dir/raw.txt" > "$dir/raw.s"; samples "$dir/ours.txt" > "$dir/ours.s"
  n_raw=$(wc -l < "$dir/raw.s"); n_jit=$(grep -c 'jitted-' "$dir/ours.txt")
  if [ "$n_raw" -gt 0 ] && cmp -s "$dir/raw.s" "$dir/ours.s"; then
    echo "PASS zstd $name: every sample kept ($n_raw samples, same tid/time/ip as perf script of the -z input)"
  else echo "FAIL zstd $name: samples differ ($n_raw in the input, $(wc -l < "$dir/ours.s") in ours)"; fi
  if perf report --header-only -i "$dir/ours.data" 2>/dev/null | grep -q '^# compressed'; then
    echo "FAIL zstd $name: the output still claims compression"
  else echo "PASS zstd $name: the output is written uncompressed"; fi
  if [ "$name" = "pipe mode" ]; then pipe_names "$dir"; return; fi
  # the reference: perf inject --jit on an uncompressed copy of the same recording
  "$root/build/perfdata-cat" --copy "$dir/copy.data" "$in" 2>/dev/null
  (cd "$dir/perfinj" && perf inject --jit -i "$dir/copy.data" -o "$dir/perfinj.data" 2>/dev/null)
  script "$dir/perfinj.data" "$dir/perf.txt"
  if [ "$n_jit" -gt 0 ] && out=$(python3 "$cmp_py" contract "$dir/raw.txt" "$dir/perf.txt" "$dir/ours.txt"); then
    echo "PASS zstd $name: JIT functions named as perf inject --jit names them ($n_jit jitted samples; $out)"
  else echo "FAIL zstd $name: JIT names: $n_jit jitted samples; ${out:-}"; fi
}

# pipe_names DIR: perf inject --jit 6.1 injects nothing from a pipe, so the reference is
# the jitdump itself: every function our jitted samples name is a name V8 wrote there.
pipe_names() {
  dir=$1
  grep 'jitted-' "$dir/ours.txt" | sed 's/^ *[0-9]* *[0-9.]*: *[0-9a-f]* \(.*\)+0x[0-9a-f]* (.*$/\1/; s/^ *[0-9]* *[0-9.]*: *[0-9a-f]* \(.*\) (.*$/\1/' |
    sort -u > "$dir/jitsyms.txt"
  n_sym=$(wc -l < "$dir/jitsyms.txt"); missing=0
  while IFS= read -r sym; do
    cat "$dir"/jit-*.dump | grep -a -q -F -- "$sym" || missing=$((missing + 1))
  done < "$dir/jitsyms.txt"
  if [ "$n_jit" -gt 0 ] && [ "$n_sym" -gt 0 ] && [ "$missing" -eq 0 ]; then
    echo "PASS zstd $name: JIT functions named ($n_jit jitted samples, $n_sym functions, each named in the jitdump)"
  else echo "FAIL zstd $name: JIT names: $n_jit jitted samples, $n_sym functions, $missing not in the jitdump"; fi
}

# 1. file mode
mkdir "$tmp/file"
(cd "$tmp/file" && perf record -q -z -k mono -e cpu-clock -o perf.data node --perf-prof -e "$js" >/dev/null 2>&1)
jt_dump_pids "$tmp/file"
if [ -f "$tmp/file/perf.data" ]; then check "file mode" "$tmp/file" "$tmp/file/perf.data"
else echo "FAIL zstd file mode: could not record node"; fi

# 2. pipe mode (perf record -z -o -), read from a file and from stdin
mkdir "$tmp/pipe"
(cd "$tmp/pipe" && perf record -q -z -k mono -e cpu-clock -o - node --perf-prof -e "$js" > perf.pipe 2>/dev/null)
jt_dump_pids "$tmp/pipe"
if [ -s "$tmp/pipe/perf.pipe" ]; then
  check "pipe mode" "$tmp/pipe" "$tmp/pipe/perf.pipe"
  mkdir -p "$tmp/pipe/stdin"
  if "$root/build/jitanon-inject" -o "$tmp/pipe/stdin.data" --elf-dir "$tmp/pipe/stdin" < "$tmp/pipe/perf.pipe" 2>/dev/null; then
    script "$tmp/pipe/stdin.data" "$tmp/pipe/stdin.txt"
    if sed 's|/stdin/jitted|/ours/jitted|' "$tmp/pipe/stdin.txt" | cmp -s - "$tmp/pipe/ours.txt"; then
      echo "PASS zstd pipe mode from stdin: perf script output identical to reading the file"
    else echo "FAIL zstd pipe mode from stdin: perf script output differs"; fi
  else echo "FAIL zstd pipe mode from stdin: jitanon-inject failed"; fi
else echo "FAIL zstd pipe mode: could not record node"; fi

# 3. the largest window perf makes (level 22: 128 MiB) is read with the default cap
mkdir "$tmp/l22"
(cd "$tmp/l22" && perf record -q --compression-level=22 -k mono -e cpu-clock -o perf.data node -e \
  'let s=0; for (let i=0;i<2e7;i++) s+=Math.sqrt(i); console.log(s)' >/dev/null 2>&1)
if [ -f "$tmp/l22/perf.data" ] && "$root/build/jitanon-inject" -i "$tmp/l22/perf.data" -o "$tmp/l22/ours.data" 2>"$tmp/l22/err"; then
  script "$tmp/l22/perf.data" "$tmp/l22/raw.txt"; script "$tmp/l22/ours.data" "$tmp/l22/ours.txt"
  samples "$tmp/l22/raw.txt" > "$tmp/l22/raw.s"; samples "$tmp/l22/ours.txt" > "$tmp/l22/ours.s"
  if [ -s "$tmp/l22/raw.s" ] && cmp -s "$tmp/l22/raw.s" "$tmp/l22/ours.s"; then
    echo "PASS zstd level 22: every sample kept ($(wc -l < "$tmp/l22/raw.s") samples)"
  else echo "FAIL zstd level 22: samples differ"; fi
else echo "FAIL zstd level 22: $(cat "$tmp/l22/err" 2>/dev/null)"; fi
