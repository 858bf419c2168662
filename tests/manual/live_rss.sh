#!/bin/sh
# By hand, not part of make test (it runs a minute or more): what a long live pipe costs,
# the figures doc/live-pipes.md quotes.  node runs three hot functions (live.sh's hot3.js)
# for SECONDS under `perf record -k mono -g -o -`; the stream goes at the same time through
# jitanon-inject and through perf's own `perf inject --jit -i - -o -` (in a mount namespace
# where the dump's directory is an overlay, as in live.sh), and, saved with tee, through
# jitanon-inject from the file afterwards.  Prints the stream's size, what perf report
# names in jitted code in each output (samples), each injector's peak RSS (GNU time) and
# when its first byte, its first 100 KB and its last byte came out, and our --stats hold
# lines.  Needs root (unshare --mount), node, /usr/bin/time.
#   sh tests/manual/live_rss.sh [SECONDS [jitanon-inject options]]   (default 60)
#   sh tests/manual/live_rss.sh 60 --hold-back 16
jt_name="live_rss"; jt_tmpfs=1; . "$(dirname "$0")/../oracle/common.sh"
jt_need node "apt-get install nodejs"
[ -x /usr/bin/time ] || jt_skip "/usr/bin/time not installed (apt-get install time)"
jt_need_perf
secs=${1:-60}; [ $# -gt 0 ] && shift
inj="$root/build/jitanon-inject"
d=$tmp; mkdir -p "$d/w" "$d/up/u" "$d/up/wk" "$d/home" "$d/phome"
# the oracle's hot3.js, taken from live.sh: the same workload by construction
sed -n "/cat > hot3.js <<'JS'/,/^JS\$/p" "$root/tests/oracle/live.sh" | sed '1d;$d' > "$d/w/hot3.js"
[ -s "$d/w/hot3.js" ] || { echo "FAIL live_rss: no hot3.js in tests/oracle/live.sh"; exit 0; }
# first.py OUT T0: copies stdin to stdout; OUT gets when bytes came out (seconds after T0)
cat > "$d/first.py" <<'PY'
import os, sys, time
t0 = float(sys.argv[2]); n = 0; first = k100 = None
while True:
    b = os.read(0, 1 << 16)
    if not b: break
    if first is None: first = time.time() - t0
    n += len(b)
    if k100 is None and n >= 100000: k100 = time.time() - t0
    os.write(1, b)
with open(sys.argv[1], "w") as f:
    f.write("first byte %.1f s, first 100 KB %.1f s, last %.1f s, %d bytes\n" % (first or -1, k100 or -1, time.time() - t0, n))
PY
report() { perf report -i "$1" --stdio --no-children --sort dso -q -g none -n 2>/dev/null; }
export HOME="$d/home" PERF_BUILDID_DIR="$d/home/.debug"
cd "$d/w" && mkfifo toperf
t0=$(date +%s.%N)
HOME="$d/phome" PERF_BUILDID_DIR="$d/phome/.debug" unshare --mount sh -c '
  mount -t overlay overlay -o "lowerdir=$1/w,upperdir=$1/up/u,workdir=$1/up/wk" "$1/w" && cd "$1/w" || exit 3
  /usr/bin/time -f "perf inject: peak RSS %M KB" -o "$1/perf.time" perf inject --jit -i - -o - 2>/dev/null |
    python3 "$1/first.py" "$1/perf.first" "$2" > perf.out
  perf report -i perf.out --stdio --no-children --sort dso -q -g none -n 2>/dev/null > "$1/perf.report"' \
  sh "$d" "$t0" < toperf &
side=$!
perf record -q -k mono -g -o - -- node --perf-prof hot3.js $((secs * 1000)) 2>/dev/null | tee toperf live.data |
  /usr/bin/time -f "jitanon-inject: peak RSS %M KB" -o "$d/ours.time" "$inj" --stats "$@" 2> "$d/ours.err" |
  python3 "$d/first.py" "$d/ours.first" "$t0" > ours.out
wait $side
pids="$pids $(ls jit-*.dump 2>/dev/null | sed 's/jit-\([0-9]*\)\.dump/\1/')"
report ours.out > "$d/ours.report"
"$inj" -N -i live.data -o file.out 2>/dev/null && report file.out > "$d/file.report"
echo "# stream $(wc -c < live.data) bytes"
for f in ours file perf; do
  awk -v f="$f" '{ n += $2 } $3 ~ /jitted-/ { j += $2 } END { printf "# %s: %d of %d samples in jitted code\n", f, j, n }' "$d/$f.report"
done
sed 's/^/# /' "$d/ours.time" "$d/perf.time"
printf '# jitanon-inject: %s# perf inject: %s' "$(cat "$d/ours.first")
" "$(cat "$d/perf.first" 2>/dev/null)
"
grep -E '^(held back|live|jitanon-inject: live pipe)' "$d/ours.err" | sed 's/^/# /'
