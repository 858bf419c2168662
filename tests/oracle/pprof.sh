#!/bin/sh
# symbolize --pprof against pprof's own readers, on one `perf record -g` of node --perf-prof:
#  - go tool pprof (Debian's golang-go) and the npm pprof-format decoder (build/npm, from
#    .ci/run) read the profile; pprof-format's check of every id and string reference passes;
#  - their flat profiles (samples by leaf function) equal the leaves of symbolize --folded
#    exactly (every name, every count; go's shortened C++ names compared as it shortens
#    them), and the JIT rows equal symbolize's own flat profile (its "NAME [jitdump]"
#    rows); native frames are there by function name (Builtins_*, v8::..., libc's);
#  - go tool pprof -lines puts the hot JS functions on the line of the hot loop, a line the
#    dump's DEBUG_INFO gives (the functions come from `node -e`: node 20 writes DEBUG_INFO
#    for them; for the same code in a script file it wrote none for the script's functions,
#    with or without --no-enable-lazy-source-positions);
#  - every Location keeps its address in go tool pprof -raw; a JIT frame's Mapping names the
#    file jitanon-inject writes it to (a region file: its functions at one base);
#  - jitgen's recording with plain and with +0x40-biased debug addresses: the same lines;
#  - two events (cpu-clock, task-clock): a value column each, summing to perf script's;
#  - sample types cpu-clock's (samples/count, cpu/nanoseconds; the periods add up to perf
#    script's), time_nanos from perf's clock data, labels pid/tid/comm, the same bytes from
#    two runs and on standard output (-), and a zlib build's gzip that gunzips to them.
# speedscope in headless Chromium: tests/manual/speedscope.sh (by hand; Chromium is not in CI).
jt_name="pprof"; . "$(dirname "$0")/common.sh"
sym="$root/build/symbolize"
npm="${JT_NPM:-$root/build/npm}"
jt_need_perf
command -v node >/dev/null 2>&1 || jt_skip "node not installed (apt-get install nodejs)"
command -v go >/dev/null 2>&1 || jt_skip "go not installed (apt-get install golang-go)"
[ -d "$npm/node_modules/pprof-format" ] || jt_skip "pprof-format not in $npm (npm install --prefix build/npm pprof-format)"
export GOCACHE="$tmp/gocache" GOTOOLCHAIN=local

jt_record_node_g "$tmp/rec"
[ -s "$tmp/rec/perf.data" ] || { echo "FAIL pprof: could not record node"; exit 0; }
cd "$tmp/rec"

if ! "$sym" --pprof prof.pb perf.data 2> err || ! "$sym" --pprof prof2.pb perf.data 2>> err; then
  echo "FAIL pprof: symbolize --pprof: $(head -2 err)"; exit 0; fi
if cmp -s prof.pb prof2.pb; then echo "PASS pprof: two runs write the same bytes ($(wc -c < prof.pb) bytes)"
else echo "FAIL pprof: two runs differ"; fi

# "-" is standard output; a path that cannot be written fails (exit 1) and leaves nothing
"$sym" --pprof - perf.data > stdout.pb 2>/dev/null; rc=$?
"$sym" --pprof "$tmp/no/such/dir/x.pb" perf.data 2>/dev/null; rc2=$?
if [ $rc = 0 ] && cmp -s stdout.pb prof.pb && [ $rc2 = 1 ] && [ ! -e ./- ]; then
  echo "PASS pprof: --pprof - writes the same bytes to standard output; an unwritable path exits 1"
else echo "FAIL pprof: --pprof - (exit $rc) or an unwritable path (exit $rc2)"; fi

# the reference: leaves of the folded stacks (a stack of the comm alone has no frames)
"$sym" --folded perf.data 2>/dev/null | awk '{n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";");
  leaf = k > 1 ? f[k] : "(no frames)"; c[leaf] += n} END {for (x in c) print c[x], x}' | LC_ALL=C sort > folded.flat
"$sym" --top 100000 perf.data 2>/dev/null | sed -n 's/^ *[0-9.]*% *\([0-9]*\)  \(.*\) \[jitdump\]$/\1 \2/p' | LC_ALL=C sort > jit.flat
total=$(awk '{n += $1} END {print n + 0}' folded.flat)

# 1. pprof-format
if node "$root/tests/oracle/pprof_read.js" "$npm" prof.pb > pf.txt 2>&1; then
  sed -n 's/^flat //p' pf.txt | LC_ALL=C sort > pf.flat
  if cmp -s pf.flat folded.flat && grep -q '^info sample_types samples/count,cpu/nanoseconds$' pf.txt &&
     grep -q '^info labels comm:str,pid:num,tid:num$' pf.txt; then
    echo "PASS pprof pprof-format: decodes, references check out, flat = symbolize --folded leaves ($(wc -l < pf.flat) functions, $total samples; $(sed -n 's/^info counts //p' pf.txt))"
  else
    echo "FAIL pprof pprof-format: flat profile, sample types or labels differ:"; grep '^info' pf.txt | head -4
    diff folded.flat pf.flat | head -6
  fi
else echo "FAIL pprof pprof-format: $(head -3 pf.txt)"; fi
# every sample's own period in the cpu column: their sum is perf script's
ours=$(sed -n 's/^info value1_total //p' pf.txt)
theirs=$(perf script -i perf.data -F period 2>/dev/null | awk '{n += $1} END {print n + 0}')
if [ -n "$ours" ] && [ "$ours" = "$theirs" ] && [ "$theirs" -gt 0 ]; then
  echo "PASS pprof: the cpu/nanoseconds column sums the samples' periods as perf script prints them ($ours ns)"
else echo "FAIL pprof: cpu/nanoseconds sums to ${ours:-?}, perf script's periods to $theirs"; fi

# time_nanos from perf's clock data (-k mono): the first sample's wall time, within the
# seconds before perf.data was last written (its mtime)
set -- $(sed -n 's/^info time_s //p' pf.txt) 0 0 0
mtime=$(stat -c %Y perf.data)
if [ "$1" -gt 0 ] && [ "$1" -le "$mtime" ] && [ "$((mtime - $1))" -le 30 ] && [ "$3" -gt 0 ]; then
  echo "PASS pprof: time_nanos from perf's clock data, $((mtime - $1)) s before perf.data's mtime; duration $3 ms"
else echo "FAIL pprof: time_nanos $1 s, perf.data's mtime $mtime, duration $3 ms"; fi

# 2. go tool pprof -top: every function with samples (flat column: counts with -sample_index=samples)
go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=1000000 prof.pb > top.txt 2> goerr
awk 'go && $1 > 0 {n = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print n, $0} /^ *flat +flat%/ {go = 1}' top.txt |
  LC_ALL=C sort > go.flat
# (a sample whose callchain perf drops has no frames: go lists no row for it, it counts in
# the total)
# go tool pprof shortens names it takes for demangled C++ (its heuristic for a Function
# whose system_name is its name: "::" or <>[] in it, java's ".<" and go's "])." aside):
# parameter lists, then template arguments, removed; names that become one are one row.
# The leaves here are what perf prints (demangled, full); compared through the same cut.
go_names() {
  python3 -c '
import sys
def cut(n, a, b):
    depth, first, i = 0, 0, 0
    while i < len(n):
        if n[i] == a:
            depth += 1
            if depth == 1: first = i
        elif n[i] == b:
            depth -= 1
            if depth < 0: return n
            if depth == 0:
                n = n[:first] + n[i + 1:]; i = first - 1
        i += 1
    return n
c = {}
for line in sys.stdin:
    k, name = line.rstrip("\n").split(" ", 1)
    if ".<" not in name and "])." not in name and (any(x in name for x in "<>[]") or "::" in name):
        name = cut(cut(name, "(", ")"), "<", ">")
    c[name] = c.get(name, 0) + int(k)
for name in c: print(c[name], name)
' | LC_ALL=C sort
}
grep -v ' (no frames)$' folded.flat | go_names > folded.rows
gototal=$(sed -n 's/.* of \([0-9]*\) total$/\1/p' top.txt | head -1)
if [ -s go.flat ] && cmp -s go.flat folded.rows && [ "$gototal" = "$total" ]; then
  echo "PASS pprof go tool pprof -top: flat counts = symbolize --folded leaves ($(wc -l < go.flat) functions; $(sed -n 's/^Type: //p' top.txt | head -1), $(grep -c . jit.flat) JIT functions)"
else
  echo "FAIL pprof go tool pprof -top: total ${gototal:-?} of $total; $(head -2 goerr)"; diff folded.rows go.flat | head -6
fi
# native frames by function (node's, libc's: what perf prints), not by their file
nat=$(awk '{$1 = ""; sub(/^ /, "")} !/^\[/ && !/^(JS|Builtin|BytecodeHandler|Handler|Function|RegExp|Stub|LazyCompile):/' go.flat)
if [ -n "$nat" ]; then echo "PASS pprof go tool pprof -top: $(echo "$nat" | wc -l) native functions by name ($(echo "$nat" | grep -m1 -E '^(Builtins_|v8::)' || echo "$nat" | head -1))"
else echo "FAIL pprof go tool pprof -top: no native function by name (only files: $(grep -c ' \[' go.flat) rows)"; fi
# the JIT rows = symbolize's own flat profile
bad=$(go_names < jit.flat | while read -r n name; do grep -qxF "$n $name" go.flat || echo "$name"; done)
if [ -s jit.flat ] && [ -z "$bad" ]; then echo "PASS pprof go tool pprof -top: the $(grep -c . jit.flat) JIT functions have symbolize's flat counts"
else echo "FAIL pprof go tool pprof -top: JIT rows differ from symbolize's flat profile: $(echo "$bad" | head -3)"; fi
# go tool pprof keeps every Location's address: it merges mappings of one file, offset
# and size class and rebases their addresses, so each jitted function needs its own file
sed -n 's/^loc //p' pf.txt | LC_ALL=C sort > pf.locs
go tool pprof -raw prof.pb 2>/dev/null | sed -n '/^Locations/,/^Mappings/p' |
  awk '$1 ~ /^[0-9]+:$/ {sub(":", "", $1); print $1, $2}' | LC_ALL=C sort > go.locs
if [ -s pf.locs ] && cmp -s pf.locs go.locs; then echo "PASS pprof go tool pprof -raw: the $(wc -l < pf.locs) locations keep their addresses"
else echo "FAIL pprof go tool pprof -raw: $(comm -3 pf.locs go.locs | wc -l) location addresses differ"; fi
# a JIT frame's Mapping is the file jitanon-inject writes it to from the same recording (a
# region file's functions at their offsets in it: one base, start - offset, per file)
mkdir -p elf; "$root/build/jitanon-inject" -i perf.data -o inj.data --elf-dir elf 2>/dev/null
go tool pprof -raw prof.pb 2>/dev/null | sed -n '/^Mappings/,$p' | awk '$3 ~ /\/jitted-[^\/]*\.so$/' |
  awk '{ split($2, a, "/"); n = split($3, p, "/"); print p[n], a[1], a[3] }' > jitmaps
jm=$(python3 - jitmaps elf <<'PY'
import os, sys
files, base, bad = set(os.listdir(sys.argv[2])), {}, []
rows = [l.split() for l in open(sys.argv[1])]
for f, start, off in rows:
    b = int(start, 16) - int(off, 16)
    if f not in files: bad.append(f + ' not written')
    elif '-r' in f and base.setdefault(f, b) != b: bad.append('%s at two bases' % f)
print('%d %d %d %s' % (len(rows), len({r[0] for r in rows if '-r' in r[0]}), len(bad), '; '.join(bad[:2])))
PY
)
set -- $jm
if [ "${1:-0}" -gt 0 ] && [ "${2:-0}" -gt 0 ] && [ "${3:-1}" = 0 ]; then
  echo "PASS pprof: the $1 JIT Mappings name the files jitanon-inject writes for them ($2 region files, each at one base)"
else echo "FAIL pprof: JIT Mappings against jitanon-inject's files: ${jm:-none}"; fi
# Mappings carry the file's build-id from the recording's table (perf record -g writes no
# MMAP2 build-ids): the main binary's is node's as perf buildid-list gives it
node_bin=$(readlink -f "$(command -v node)")
got=$(go tool pprof -raw prof.pb 2>/dev/null | sed -n '/^Mappings/{n;p;q;}' | awk '{print $3, $4}')
want=$(perf buildid-list -i perf.data 2>/dev/null | awk -v f="$node_bin" '$2 == f {print $2, $1; exit}')
if [ -n "$want" ] && [ "$got" = "$want" ]; then echo "PASS pprof: the main binary's Mapping has its build-id ($got)"
else echo "FAIL pprof: the main binary's Mapping is '$got', perf buildid-list says '$want'"; fi
# sample types, period
if go tool pprof -raw prof.pb 2>/dev/null | grep -q '^samples/count cpu/nanoseconds' &&
   grep -q '^Type: samples' top.txt && go tool pprof -raw prof.pb 2>/dev/null | grep -q '^PeriodType: cpu nanoseconds'; then
  echo "PASS pprof: sample types samples/count and cpu/nanoseconds, period type cpu/nanoseconds"
else echo "FAIL pprof: sample types: $(go tool pprof -raw prof.pb 2>&1 | sed -n '/^Samples/{n;p}')"; fi

# 3. -lines: the hot JS functions at line 4 (s += i % 13, the script starting with a newline)
go tool pprof -top -lines -sample_index=samples -nodefraction=0 -nodecount=1000000 prof.pb > lines.txt 2>/dev/null
hot=$(awk '/JS:.*\[eval\]:[0-9]+:[0-9]+ \[eval\]:[0-9]+$/ && $1 > 0 {n = split($NF, a, ":"); c[a[n]] += $1; t += $1}
  END {m = ""; for (l in c) if (m == "" || c[l] > c[m]) m = l; if (t) printf "%s %d %d", m, c[m], t}' lines.txt)
set -- $hot
if [ "${1:-}" = 4 ] && [ "$(($2 * 2))" -gt "$3" ]; then
  echo "PASS pprof go tool pprof -lines: JS frames carry DEBUG_INFO lines; line 4 (the loop) holds $2 of the $3 JS samples with lines"
else echo "FAIL pprof go tool pprof -lines: hottest JS line ${1:-none} (${2:-0} of ${3:-0})"; grep 'JS:' lines.txt | head -4; fi

# 4. a zlib build: gzip on disk, the same protobuf inside, read by both
if printf '#include <zlib.h>\n' | cc -E -x c - >/dev/null 2>&1; then
  # demangling as the Makefile builds symbolize (libstdc++'s __cxa_demangle when it links)
  cxx=; printf 'int main(void){return 0;}\n' | cc -x c -o /dev/null - -lstdc++ >/dev/null 2>&1 && cxx="-DJITANON_CXA_DEMANGLE -lstdc++"
  if cc -std=c99 -O0 -DJITANON_USE_ZLIB -I"$root" -o symz "$root/tools/symbolize.c" -lz $cxx 2> ccerr &&
     ./symz --pprof prof.pb.gz perf.data && gunzip -c prof.pb.gz | cmp -s - prof.pb &&
     go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=1000000 prof.pb.gz 2>/dev/null | cmp -s - top.txt &&
     node "$root/tests/oracle/pprof_read.js" "$npm" prof.pb.gz | grep -q '^info gzip true'; then
    echo "PASS pprof zlib: gzipped ($(wc -c < prof.pb.gz) of $(wc -c < prof.pb) bytes), gunzips to the plain build's bytes, both readers read it"
  else echo "FAIL pprof zlib: $(head -2 ccerr)"; fi
else echo "SKIP pprof zlib: zlib.h not installed (apt-get install zlib1g-dev)"; fi
# 5. two events (tinyjit, cpu-clock and task-clock, fixed periods): a column each, with
#    every sample's period in its own event's column, as perf script sums them per event
#    (its names without their modifiers: a user's recording has cpu-clock:u)
mkdir "$tmp/tj"
(cd "$tmp/tj" && perf record -q -k mono -e cpu-clock -e task-clock -c 200000 -o perf.data "$root/build/tinyjit" -t 150 > out.txt 2>/dev/null)
p=$(sed -n 's/^pid //p' "$tmp/tj/out.txt"); pids="$pids $p"
"$sym" --pprof "$tmp/tj.pb" "$tmp/tj/perf.data" 2>/dev/null
node "$root/tests/oracle/pprof_read.js" "$npm" "$tmp/tj.pb" 2>&1 | sed -n 's/^column //p' |
  sed 's|^cpu/|cpu-clock/|' > "$tmp/tj.cols"
perf script -i "$tmp/tj/perf.data" -F event,period 2>/dev/null | awk '{sub(/:.*$/, "", $2); s[$2] += $1; n++}
  END {print "samples/count", n; for (e in s) print e "/nanoseconds", s[e]}' | LC_ALL=C sort > "$tmp/tj.perf"
if [ "$(wc -l < "$tmp/tj.cols")" = 3 ] && LC_ALL=C sort "$tmp/tj.cols" | cmp -s - "$tmp/tj.perf"; then
  echo "PASS pprof two events: columns $(cut -d' ' -f1 "$tmp/tj.cols" | tr '\n' ' ')with perf script's sums per event"
else echo "FAIL pprof two events: $(tr '\n' ';' < "$tmp/tj.cols") vs perf script $(tr '\n' ';' < "$tmp/tj.perf")"; fi

# 6. the line bias: jitgen writes one recording twice, with plain debug addresses and with
#    V8's/LLVM's +0x40; the lines pprof shows must be the same (the bias found from the data)
for c in plain llvm; do
  b=; [ $c = llvm ] && b="--line-bias 64"
  "$root/build/jitgen" --loads 120 --samples 2000 --debug-every 2 --seed 7 --quiet $b "$tmp/$c" >/dev/null 2>&1
  "$sym" --pprof "$tmp/$c.pb" "$tmp/$c/perf.data" 2>/dev/null
  go tool pprof -top -lines -sample_index=samples -nodefraction=0 -nodecount=1000000 "$tmp/$c.pb" 2>/dev/null > "$tmp/$c.lines"
done
nl=$(grep -c 'JS:.* [^ ]*\.js:[0-9]*$' "$tmp/plain.lines")
if [ "$nl" -gt 10 ] && cmp -s "$tmp/plain.lines" "$tmp/llvm.lines"; then
  echo "PASS pprof lines: a +0x40 (V8/LLVM) dump gives the plain dump's lines ($nl JS rows with lines)"
else echo "FAIL pprof lines: the +0x40 dump's lines differ from the plain one's ($nl JS rows with lines)"; fi
