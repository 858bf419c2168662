#!/bin/sh
# Oracle for the layouts perf writes and reads that are not today's file mode: stdout
# output, the README's own pipe examples, file -> pipe copies of every recording kind,
# and old layouts rebuilt byte by byte from today's recordings (tests/oracle/layouts.py):
# perf 4.x's 12-byte HEADER_TRACING_DATA and kernel 3.10's first MMAP2.  Each check
# compares what perf prints for our output with what it prints for the input.
# Prints PASS/FAIL/SKIP lines only.  Run from the repository root.
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
perf=${PERF:-/usr/bin/perf}
inj=$root/build/jitanon-inject
cat_bin=$root/build/perfdata-cat
py=$root/tests/oracle/layouts.py
if [ ! -x "$inj" ] || [ ! -x "$cat_bin" ]; then echo "SKIP layouts oracle: build/jitanon-inject not built (make all)"; exit 0; fi
if [ ! -x "$perf" ]; then echo "SKIP layouts oracle: perf not installed"; exit 0; fi
if ! command -v python3 >/dev/null 2>&1; then echo "SKIP layouts oracle: python3 not installed"; exit 0; fi
tmp=$(mktemp -d) || exit 1
# perf record/inject fill the build-id cache: keep it in $tmp, never in ~/.debug
export PERF_BUILDID_DIR="$tmp/.debug" HOME="$tmp"
cleanup() {
  for f in "$tmp"/pid.*; do
    [ -f "$f" ] || continue
    p=$(sed -n 's/^pid //p' "$f")
    [ -n "$p" ] && rm -f "/tmp/perf-$p.map"
  done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
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
# run in a directory where ./myjit is tinyjit and perf.data its recording.
readme_lines=$(awk '/^## Using the CLI/ {on=1} on && /^```sh/ {blk=1; next} blk && /^```/ {exit} blk' README.md |
  grep 'jitanon-inject' | grep '|')
if [ -z "$readme_lines" ]; then echo "FAIL layouts README: no pipe example through jitanon-inject found"
elif [ ! -x "$root/build/tinyjit" ] || ! "$root/build/tinyjit" -p 1 -t 1 -d "$tmp" >"$tmp/pid.probe" 2>/dev/null; then
  echo "SKIP layouts README: build/tinyjit does not run here"
else
  mkdir -p "$tmp/rd/bin"
  ln -s "$inj" "$tmp/rd/bin/jitanon-inject"
  n=0
  # tinyjit's stdout would land inside perf's pipe: its "pid" line goes to a file.
  printf '#!/bin/sh\nexec "%s" -d "%s" -t 300 >"%s/pid.$$"\n' "$root/build/tinyjit" "$tmp/rd" "$tmp" >"$tmp/rd/myjit"
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
