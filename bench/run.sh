#!/bin/sh
# bench/run.sh (`make bench`): jitanon-inject side by side with `perf inject --jit` on the
# same inputs, in the same run, plus micro benchmarks (bench/micro.c).
#
#   BENCH_SCALE=big     larger inputs (2M and 20M samples, a longer node run; the long
#                       recording at 20M samples)
#   BENCH_LONG=0        skip the long recording (5M samples, 200 MB: issue #23)
#   BENCH_REPEAT=N      run every injector N times and print medians (default 3)
#   BENCH_NODE=0        skip the real node --perf-prof workload
#   BENCH_MICRO=0       skip the micro benchmarks (among them, on the long recording, a
#                       symbolizer's one pass with nothing asked and with every field)
#   BENCH_ZSTD=0        skip the zstd decode benchmark (perf record -z, beside libzstd)
#   BENCH_FLOOR_ATOMIC=1 also time the floor with temporary name + rename per file
#   BENCH_SETTLE=S      seconds to wait (after sync) before each timed run (default 2)
#   BENCH_THREADS0=1    also time --elf=function --threads 0
#   BENCH_TMP=DIR       where the scratch directory goes (default: $TMPDIR, else /work,
#                       else build/: the disk file system users write to); the "on tmpfs"
#                       rows write into a second one in /dev/shm when it is writable
#
# Inputs: jitgen's synthetic node-like perf.data + jitdump at two perf.data sizes (to show
# that peak RSS does not grow with the perf.data), and, when perf and node are there and
# `perf record` works, a real `node --perf-prof` run.  Everything goes under one
# mktemp -d (see BENCH_TMP) that is removed at exit.  Every timed run starts from an empty
# build-id cache of its own inside it (perf: a fresh HOME, as perf 6.1 reads
# ~/.debug and not $PERF_BUILDID_DIR; jitanon: --buildid-dir), so ~/.debug is not
# touched.  Timings are informative only: nothing here fails on a slow result.
set -eu
cd "$(dirname "$0")/.."
CC=${CC:-cc}
SCALE=${BENCH_SCALE:-default}
REPEAT=${BENCH_REPEAT:-3}
# The node run is issue #6's large input: 8 s of node --perf-prof with call graphs, about
# 45,000 code loads.
case $SCALE in
big) LOADS=45000 SAMPLES_A=2000000 SAMPLES_B=20000000 SAMPLES_L=20000000 NODE_FUNCS=30000 NODE_MS=15000 ;;
*) LOADS=45000 SAMPLES_A=200000 SAMPLES_B=2000000 SAMPLES_L=5000000 NODE_FUNCS=14000 NODE_MS=8000 ;;
esac

if [ -n "${BENCH_TMP:-}" ]; then BASE=$BENCH_TMP
elif [ -n "${TMPDIR:-}" ] && [ -d "$TMPDIR" ]; then BASE=$TMPDIR
elif [ -d /work ] && [ -w /work ]; then BASE=/work
else BASE=$PWD/build
fi
W=$(mktemp -d "$BASE/jitanon-bench.XXXXXX")
SHM=
if [ -d /dev/shm ] && [ -w /dev/shm ]; then SHM=$(mktemp -d /dev/shm/jitanon-bench.XXXXXX); fi
NODE_PID=
cleanup() {
    rm -rf "$W"
    [ -z "$SHM" ] || rm -rf "$SHM"
    # node --perf-prof writes its dump into the working directory (under $W); remove
    # anything it may have left in /tmp for its pid all the same.
    if [ -n "$NODE_PID" ]; then rm -f "/tmp/perf-$NODE_PID.map" "/tmp/jit-$NODE_PID.dump" /tmp/jitted-"$NODE_PID"-*.so; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/home" "$W/buildid"
PERFENV="env HOME=$W/home PERF_BUILDID_DIR=$W/buildid"

# with libstdc++ its symbolizer pass demangles C++ names as the tools do (tools/symbols.h)
if printf 'int main(void){return 0;}\n' | $CC -x c -o /dev/null - -lstdc++ >/dev/null 2>&1; then
    $CC -O2 -I. -DJITANON_CXA_DEMANGLE -o build/bench-micro bench/micro.c -lstdc++
else $CC -O2 -I. -o build/bench-micro bench/micro.c; fi
MICRO=build/bench-micro

# timeit OUT CMD...: one line "wall user sys maxrss_kb" in OUT
timeit() {
    out=$1
    shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%e %U %S %M' -o "$out.raw" "$@" >"$out.log" 2>&1 || { cat "$out.log" >&2; return 1; }
        tail -n 1 "$out.raw" >"$out"
    else
        "$MICRO" time "$out" "$@" >"$out.log" 2>&1 || { cat "$out.log" >&2; return 1; }
    fi
}

# med FILE COLUMN: median of a column
med() {
    sort -n -k "$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

count_files() { find "$1" -maxdepth 1 -type f -name "$2" | wc -l | tr -d ' '; }
count_cached() { if [ -d "$1/.build-id" ]; then find "$1/.build-id" -type l | wc -l | tr -d ' '; else echo 0; fi; }

ROWS=$W/rows
: >"$ROWS"

# row INPUT TOOL FILES OUTBYTES RUNSFILE [CACHED]
row() {
    wall=$(med "$5" 1)
    cpu=$(awk '{ print $2 + $3 }' "$5" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    rss=$(med "$5" 4)
    echo "$1 $2 $wall $cpu $rss $3 $4 ${6:-0}" >>"$ROWS"
}

# Nothing is deleted before the end: ext4 allocates inodes slowly right after many
# files were deleted (find_inode_bit -> recently_deleted scans the freed ones for a
# minute or so), which made the runs after a cleanup 10x slower.  So every run writes
# into a fresh directory under $W/runs, and perf's run (which writes jitted-*.so next to
# the dump) is followed by moving the input directory aside and re-linking its inputs.
# On tmpfs (the default scratch) deleting is quick and its inodes are few and shared
# (a run with the cache makes about 200,000): there every run's files go once counted.
TMPFS=0
[ "$(df -P -T "$W" 2>/dev/null | awk 'NR == 2 { print $2 }')" != tmpfs ] || TMPFS=1
drop() { [ "$TMPFS" = 0 ] || rm -rf "$@"; }
RUN=0
fresh() { RUN=$((RUN + 1)); D=$W/runs/$RUN; mkdir -p "$D"; }
# the "on tmpfs" rows: a fresh directory there, emptied once counted (tmpfs deletes fast)
fresh_shm() { RUN=$((RUN + 1)); D=$SHM/$RUN; mkdir -p "$D"; }
# Before each timed run: the previous run's 45,000 files are still being written back
# after sync returns (a per-process run right after one took 0.46 s instead of 0.2), so
# every tool gets the same quiet start.
settle() { sync; sleep "${BENCH_SETTLE:-2}"; }

# bench_input NAME DIR [TOOLS]: every injector on DIR/perf.data (+ its jitdump)
bench_input() {
    name=$1 dir=$2
    in=$dir/perf.data
    tools=${3:-"def fn all fnN proc"}
    [ -z "$SHM" ] || tools="$tools shm"
    [ "${BENCH_THREADS0:-0}" = 0 ] || tools="$tools fn1"
    [ "$have_perf" = 0 ] || tools="$tools perf"
    for tool in $tools; do
        : >"$W/runs.$tool"
        i=0
        while [ "$i" -lt "$REPEAT" ]; do
            i=$((i + 1))
            if [ "$tool" = shm ]; then fresh_shm; else fresh; fi
            settle
            # the output and ELFs in $D, the cache in $D/cache: *.so counts stay as before
            C="--buildid-dir $D/cache"
            case $tool in
            cp) timeit "$W/t" cp "$in" "$D/out.data" ;;
            def | shm) timeit "$W/t" build/jitanon-inject -i "$in" -o "$D/out.data" $C --elf-dir "$D" ;;
            fn) timeit "$W/t" build/jitanon-inject -i "$in" -o "$D/out.data" --elf=function $C --elf-dir "$D" ;;
            all) timeit "$W/t" build/jitanon-inject -i "$in" -o "$D/out.data" --elf=function --elf-files=all $C --elf-dir "$D" ;;
            fnN) timeit "$W/t" build/jitanon-inject -i "$in" -o "$D/out.data" --elf=function --elf-files=all -N --elf-dir "$D" ;;
            fn1) timeit "$W/t" build/jitanon-inject -i "$in" -o "$D/out.data" --elf=function --elf-files=all --threads 0 $C --elf-dir "$D" ;;
            proc) timeit "$W/t" build/jitanon-inject -i "$in" -o "$D/out.data" --elf=process $C --elf-dir "$D" ;;
            perf) mkdir -p "$D/home"
                timeit "$W/t" env HOME="$D/home" PERF_BUILDID_DIR="$D/home/.debug" perf inject --jit -i "$in" -o "$D/out.data" ;;
            esac
            cat "$W/t" >>"$W/runs.$tool"
            if [ "$tool" = perf ]; then
                cached=$(count_cached "$D/home/.debug")
                files=$(count_files "$dir" 'jitted-*.so')
                mv "$dir" "$D/input"
                mkdir "$dir"
                ln "$D/input/perf.data" "$D/input"/jit-*.dump "$dir/"
            else
                files=$(count_files "$D" '*.so')
                cached=$(count_cached "$D/cache")
            fi
            outb=$(wc -c <"$D/out.data" | tr -d ' ')
            if [ "$tool" = shm ]; then rm -rf "$D"
            elif [ "$tool" = all ] && [ "$i" = "$REPEAT" ]; then ELFS=$D
            else drop "$D"; fi
        done
        row "$name" "$tool" "$files" "$outb" "$W/runs.$tool" "$cached"
        if [ "$tool" = all ]; then
            # the floor: as many files of the same sizes, plain and written atomically, and
            # with a build-id cache entry each (directories, hard link, .build-id symlink)
            kinds="create cache"
            [ "${BENCH_FLOOR_ATOMIC:-0}" = 0 ] || kinds="create cache atomic"
            for kind in $kinds; do
                : >"$W/runs.floor"
                i=0
                while [ "$i" -lt "$REPEAT" ]; do
                    i=$((i + 1))
                    fresh
                    rmdir "$D"
                    settle
                    if [ $kind = atomic ]; then timeit "$W/t" "$MICRO" floor "$ELFS" "$D" --atomic
                    elif [ $kind = cache ]; then timeit "$W/t" "$MICRO" floor "$ELFS" "$D" --cache "$D.cache"
                    else timeit "$W/t" "$MICRO" floor "$ELFS" "$D"; fi
                    cat "$W/t" >>"$W/runs.floor"
                    files=$(count_files "$D" '*.so')
                    cached=$(count_cached "$D.cache")
                    drop "$D" "$D.cache"
                done
                row "$name" "floor-$kind" "$files" 0 "$W/runs.floor" "$cached"
            done
            drop "$ELFS"
        fi
    done
}

have_perf=0
if command -v perf >/dev/null 2>&1 && $PERFENV perf inject --help >/dev/null 2>&1; then have_perf=1; fi
[ "$have_perf" = 1 ] || echo "bench: perf not found: perf inject rows are skipped"

describe() {
    perf_bytes=$(wc -c <"$2/perf.data" | tr -d ' ')
    dump=$(ls "$2"/jit-*.dump | head -n 1)
    dump_bytes=$(wc -c <"$dump" | tr -d ' ')
    loads=$(build/jitdump-cat "$dump" 2>/dev/null | grep -c ' LOAD ' || true)
    awk -v n="$1" -v p="$perf_bytes" -v d="$dump_bytes" -v l="$loads" \
        'BEGIN { printf "%-10s perf.data %7.1f MB, jitdump %6.1f MB, %d loads\n", n, p / 1e6, d / 1e6, l }' >>"$W/inputs"
}
: >"$W/inputs"

echo "bench: generating inputs (scale $SCALE, $REPEAT run(s) each)"
build/jitgen --quiet --loads "$LOADS" --samples "$SAMPLES_A" "$W/genA"
build/jitgen --quiet --loads "$LOADS" --samples "$SAMPLES_B" "$W/genB"
A=gen-$((SAMPLES_A / 1000))k
B=gen-$((SAMPLES_B / 1000))k
L=long-$((SAMPLES_L / 1000000))M
describe "$A" "$W/genA"
describe "$B" "$W/genB"
if [ "${BENCH_LONG:-1}" != 0 ]; then
    build/jitgen --quiet --loads "$LOADS" --samples "$SAMPLES_L" "$W/genL"
    describe "$L" "$W/genL"
fi

node_ok=0
if [ "${BENCH_NODE:-1}" != 0 ] && [ "$have_perf" = 1 ] && command -v node >/dev/null 2>&1 &&
    $PERFENV perf record -N -q -k mono -e cpu-clock -o "$W/probe.data" true >/dev/null 2>&1; then
    mkdir -p "$W/node"
    cat >"$W/node/w.js" <<'EOF'
// Many distinct functions, each compiled and called: a JIT-heavy node workload.
const n = +process.argv[2], ms = +process.argv[3];
const fns = [];
for (let i = 0; i < n; i++)
  fns.push(new Function('a', 'b', `let s = a ^ ${i}; for (let k = 0; k < b; k++) s = (s * 31 + k + ${i % 97}) | 0; return s;`));
let acc = 0, t0 = Date.now(), round = 0;
while (Date.now() - t0 < ms) {
  for (let i = 0; i < n; i++) acc = fns[i](acc, 8 + (round & 7)) | 0;
  round++;
}
console.log('functions', n, 'rounds', round, acc);
EOF
    echo "bench: recording node --perf-prof ($NODE_FUNCS functions, ${NODE_MS} ms)"
    if (cd "$W/node" && $PERFENV perf record -N -q -g -k mono -e cpu-clock -o perf.data \
        node --perf-prof --interpreted-frames-native-stack w.js "$NODE_FUNCS" "$NODE_MS" >node.log 2>&1); then
        d=$(ls "$W/node"/jit-*.dump 2>/dev/null | head -n 1)
        if [ -n "$d" ]; then
            NODE_PID=$(basename "$d" .dump | sed 's/^jit-//')
            rm -f "$W/node"/isolate-*.log
            describe node "$W/node"
            node_ok=1
        fi
    fi
    [ "$node_ok" = 1 ] || echo "bench: node --perf-prof recording failed: node rows are skipped"
else
    echo "bench: perf record or node unavailable: node rows are skipped"
fi
rm -f "$W/probe.data"

for x in "$A:$W/genA" "$B:$W/genB"; do
    echo "bench: running ${x%%:*}"
    bench_input "${x%%:*}" "${x#*:}"
done
if [ "${BENCH_LONG:-1}" != 0 ]; then
    # the long recording (issue #23): beside cp of the same bytes
    echo "bench: running $L"
    bench_input "$L" "$W/genL" "cp def fn all proc"
fi
# hotspot's parser (what hotspot spends loading a recording) on each layout's output
PP=""
for c in hotspot-perfparser /usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser; do
    if command -v "$c" >/dev/null 2>&1; then PP=$(command -v "$c"); break; fi
done
: >"$W/hotspot.txt"
# parse_rows NAME DIR: the parser on DIR/perf.data injected in each layout, REPEAT times
# each, alternating (issue #43: region files within 1.1x of per-function files' time)
parse_rows() {
    echo "bench: hotspot-perfparser on $1, each layout"
    for lay in region function; do
        fresh
        build/jitanon-inject -i "$2/perf.data" -o "$D/out.data" --elf=$lay -N --elf-dir "$D" 2>/dev/null
        eval "D_$lay=\$D"
        : >"$W/pp.$lay"
    done
    i=0
    while [ "$i" -lt "$REPEAT" ]; do
        i=$((i + 1))
        for lay in region function; do
            eval "D=\$D_$lay"
            settle
            timeit "$W/t" "$PP" --input "$D/out.data" --output "$D/out.pp"
            cat "$W/t" >>"$W/pp.$lay"
        done
    done
    for lay in region function; do
        eval "D=\$D_$lay"
        echo "$1 $lay $(med "$W/pp.$lay" 1) $(awk '{ print $2 + $3 }' "$W/pp.$lay" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') $(med "$W/pp.$lay" 4) $(count_files "$D" '*.so')" >>"$W/hotspot.txt"
        drop "$D"
    done
}
[ -z "$PP" ] || parse_rows "$A" "$W/genA"

if [ "$node_ok" = 1 ]; then
    echo "bench: running node"
    bench_input node "$W/node"
    # the one pass on a real recording (issue #44: every field asked - native and kernel
    # symbols read cold each pass, C++ names demangled - within 1.5x of none)
    if [ "${BENCH_MICRO:-1}" != 0 ]; then
        echo "== micro: a symbolizer's one pass over the node recording (jitanon_inject, no writer)" >"$W/micro-node.txt"
        "$MICRO" symbolize "$W/node/perf.data" 3 >>"$W/micro-node.txt" 2>&1
    fi
    [ -z "$PP" ] || parse_rows node "$W/node"
fi

echo
echo "== inputs"
cat "$W/inputs"
echo
echo "== end to end (medians of $REPEAT run(s); cpu = user + sys; ratios = perf / this row; scratch in $BASE)"
echo "   every run starts from an empty build-id cache; x/floor: against creating the same files"
echo "   (and, for the rows that fill the cache, the same cache entries) with plain calls;"
echo "   x/cp: against cp of the same perf.data; every run writes into a fresh directory, nothing"
echo "   is deleted before the end (on tmpfs: once counted)"
awk '
{ input[NR] = $1; tool[NR] = $2; wall[NR] = $3; cpu[NR] = $4; rss[NR] = $5; files[NR] = $6; out[NR] = $7; cached[NR] = $8
  if ($2 == "perf") { pw[$1] = $3; pr[$1] = $5 }
  if ($2 == "cp") cw[$1] = $3
  if ($2 == "floor-create") fl[$1] = $3
  if ($2 == "floor-cache") fc[$1] = $3 }
END {
  names["def"] = "jitanon (default)"; names["fn"] = "jitanon --elf=function"
  names["all"] = "jitanon --elf-files=all"; names["proc"] = "jitanon --elf=process"
  names["perf"] = "perf inject --jit"; names["fnN"] = "  same, -N (no cache)"
  names["fn1"] = "  same, --threads 0"; names["shm"] = "  default, on tmpfs"; names["cp"] = "cp (the copy floor)"
  names["floor-create"] = "floor: create files"; names["floor-atomic"] = "floor: create+rename"
  names["floor-cache"] = "floor: files + cache"
  printf "%-10s %-24s %8s %8s %9s %7s %7s %8s %8s %8s %9s %7s\n", "input", "tool", "wall s", "cpu s", "RSS MB", "files", "cached", "out MB", "perf/x", "RSS p/x", "x/floor", "x/cp"
  for (i = 1; i <= NR; i++) {
    r = (input[i] in pw && wall[i] > 0) ? sprintf("%.1fx", pw[input[i]] / wall[i]) : "-"
    m = (input[i] in pr && rss[i] > 0 && tool[i] !~ /floor/) ? sprintf("%.1fx", pr[input[i]] / rss[i]) : "-"
    f = "-"
    if (tool[i] == "fnN" && input[i] in fl && fl[input[i]] > 0) f = sprintf("%.2fx", wall[i] / fl[input[i]])
    if ((tool[i] == "all" || tool[i] == "fn1") && cached[i] > 1 && input[i] in fc && fc[input[i]] > 0)
      f = sprintf("%.2fx", wall[i] / fc[input[i]])
    c = (input[i] in cw && cw[input[i]] > 0) ? sprintf("%.1fx", wall[i] / cw[input[i]]) : "-"
    if (tool[i] == "perf") r = m = "1.0x"
    printf "%-10s %-24s %8.2f %8.2f %9.1f %7d %7d %8.1f %8s %8s %9s %7s\n", input[i], names[tool[i]], wall[i], cpu[i], rss[i] / 1024, files[i], cached[i], out[i] / 1e6, r, m, f, c
  }
}' "$ROWS"

if [ -s "$W/hotspot.txt" ]; then
    echo
    echo "== hotspot-perfparser parsing each layout's output (hotspot's load time; medians of $REPEAT, alternating)"
    awk '{ if ($2 == "function") fw[$1] = $3; row[NR] = $0 }
         END { printf "%-10s %-10s %8s %8s %9s %7s %12s\n", "input", "layout", "wall s", "cpu s", "RSS MB", "files", "x/function"
               for (i = 1; i <= NR; i++) { split(row[i], f, " ")
                 printf "%-10s %-10s %8.2f %8.2f %9.1f %7d %12s\n", f[1], f[2], f[3], f[4], f[5] / 1024, f[6],
                        (f[1] in fw && fw[f[1]] > 0) ? sprintf("%.2fx", f[3] / fw[f[1]]) : "-" } }' "$W/hotspot.txt"
fi

if [ "${BENCH_MICRO:-1}" != 0 ]; then
    echo
    echo "== micro ($A input; medians of 3)"
    mkdir -p "$W/micro"
    "$MICRO" run "$W/genA/perf.data" "$W/genA"/jit-*.dump "$W/micro" 3
    rm -rf "$W/micro"
    echo
    echo "== micro: perf.data scan of the $B input"
    "$MICRO" scan "$W/genB/perf.data" 3
fi

# The scan of the long recording (issue #23's target: at least 2.5 GB/s from the page
# cache), beside read() of the same file; its cp and --elf=process rows are above.
if [ "${BENCH_MICRO:-1}" != 0 ] && [ "${BENCH_LONG:-1}" != 0 ]; then
    echo
    echo "== micro: perf.data scan of the $L input"
    "$MICRO" scan "$W/genL/perf.data" 3
    # a profiler's one pass (issue #34: every field asked for within 1.5x of none)
    echo
    echo "== micro: a symbolizer's one pass over the $L input (jitanon_inject, no writer)"
    "$MICRO" symbolize "$W/genL/perf.data" 3
fi
if [ -f "$W/micro-node.txt" ]; then echo; cat "$W/micro-node.txt"; fi

# zstd (issue #13): decode speed on a perf record -z recording of node with dwarf call
# graphs (about 20 MB decompressed), jitanon's decoder beside libzstd's (bench/zstd.c;
# only that binary links libzstd, when zstd.h is there).  BENCH_ZSTD=0 skips it.
if [ "${BENCH_ZSTD:-1}" != 0 ] && [ "$have_perf" = 1 ] && command -v node >/dev/null 2>&1 &&
    $PERFENV perf record -N -q -z -k mono -e cpu-clock -o "$W/zprobe.data" true >/dev/null 2>&1; then
    zdefs= zlibs=
    if printf '#include <zstd.h>\n' | $CC -E -x c - >/dev/null 2>&1; then zdefs=-DJT_LIBZSTD zlibs=-lzstd; fi
    $CC -O2 -D_POSIX_C_SOURCE=200809L $zdefs -I. -o build/bench-zstd bench/zstd.c $zlibs
    mkdir -p "$W/zstd"
    (cd "$W/zstd" && $PERFENV perf record -z -N -q --call-graph dwarf,4096 -k mono -e cpu-clock -c 250000 -o z.data \
        node -e 'function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
                 function g(n){let a=[];for(let i=0;i<n;i++)a.push(i*2);return a.reduce((x,y)=>x+y,0)}
                 let t=0,e=Date.now()+3000; while(Date.now()<e) t+=f(2e4)+g(3e3); console.log(t)' >/dev/null 2>&1)
    echo
    echo "== zstd: perf record -z (node, dwarf call graphs) decoded record by record, best of 5"
    build/bench-zstd "$W/zstd/z.data" 5
else
    echo "bench: perf record -z or node unavailable: the zstd row is skipped"
fi
