# Shared preamble of the oracle scripts (POSIX sh).  Source it right at the top:
#   jt_name="deno oracle"; . "$(dirname "$0")/common.sh"
# It sets root (the checkout) and tmp (a private directory, removed at exit), keeps perf's
# build-id cache in $tmp (HOME and PERF_BUILDID_DIR: never the real ~/.debug), and removes
# at exit what runtimes leave in /tmp for every pid added to $pids.  jt_cleanup_hook, when
# a script defines it, runs first at exit.
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
# jt_tmpfs=1 (set before sourcing): tmp on /dev/shm when it is a writable tmpfs, for an
# oracle whose checks do not depend on the file system but which writes many small files
# (per-function ELFs, perf inject's, the build-id cache): ext4 creates files slowly
# after mass deletes, and a tmpfs takes the disk out of the time.
tmp=""
if [ "${jt_tmpfs:-0}" = 1 ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then tmp=$(TMPDIR=/dev/shm mktemp -d 2>/dev/null); fi
[ -n "$tmp" ] || tmp=$(mktemp -d)
jt_user_home=${HOME:-} # before it goes: where the user's own pyenv may be (jt_python)
export PERF_BUILDID_DIR="$tmp/.debug" HOME="$tmp"
pids=""
jt_cleanup() {
  if command -v jt_cleanup_hook >/dev/null 2>&1; then jt_cleanup_hook; fi
  for p in $pids; do
    rm -f "/tmp/perf-$p.map" "/tmp/jit-$p.dump"
    find /tmp -maxdepth 1 \( -name "jitted-$p-*.so" -o -name "jit-*-$p.dump" -o -name "jit-*-$p-??????" \) -delete 2>/dev/null
  done
  rm -rf "$tmp"
  # a JVM's perf-data directory, once no JVM of ours has a file in it (rmdir: only if empty)
  rmdir "/tmp/hsperfdata_$(id -un)" 2>/dev/null || true
}
trap jt_cleanup EXIT
trap 'exit 130' INT TERM

# jt_skip REASON: print the SKIP line for this script and stop it.
jt_skip() { echo "SKIP ${jt_name:-oracle}: $1"; exit 0; }

# jt_need TOOL [HINT]: TOOL on PATH, else SKIP "TOOL not installed (HINT)".
jt_need() { command -v "$1" >/dev/null 2>&1 || jt_skip "$1 not installed${2:+ ($2)}"; }

# jt_perf_records [ARGS...]: does `perf record -k mono -e cpu-clock ARGS` record here?
# (status only: software clock, as every oracle records; -g, -z ... as the caller needs)
jt_perf_records() {
  perf record -q -k mono -e cpu-clock "$@" -o "$tmp/probe.data" true >/dev/null 2>&1
  set -- $?; rm -f "$tmp/probe.data"; return "$1"
}

# jt_need_record [ARGS...]: perf present and perf record ARGS works here, else SKIP.
jt_need_record() {
  jt_need perf "apt-get install linux-perf"
  jt_perf_records "$@" || jt_skip "perf record${1:+ $*} cannot record here"
}

# jt_need_perf [ARGS...]: the same, and python3 (the oracles' comparison scripts).
jt_need_perf() { jt_need perf "apt-get install linux-perf"; jt_need python3; jt_need_record "$@"; }

# jt_dump_pids DIR...: add the pid of every DIR/jit-<pid>.dump to $pids (cleaned at exit).
jt_dump_pids() {
  for jt_d in "$@"; do for jt_f in "$jt_d"/jit-*.dump; do
    [ -f "$jt_f" ] || continue; jt_f=${jt_f##*/jit-}; pids="$pids ${jt_f%.dump}"; done; done
}

# jt_record_node_g DIR: DIR/perf.data, a `perf record -g` of 1.5 s of node --perf-prof
# running leaf() and mid() (its dump in DIR, its pid in $pids): the recording of
# pprof.sh and tests/manual/speedscope.sh.
jt_record_node_g() {
  mkdir "$1"
  (cd "$1" && perf record -q -g -k mono -e cpu-clock -o perf.data node --perf-prof -e '
function leaf(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += i % 13;
  return s;
}
function mid(n) { return leaf(n) + leaf(n >> 1); }
let t = 0, end = Date.now() + 1500;
while (Date.now() < end) t += mid(2e4);
console.log(t);' >/dev/null 2>&1)
  jt_dump_pids "$1"
}

# jt_tinyjit: the path of build/tinyjit (our C JIT that commits its code page by page;
# x86-64 only, so the Makefile may not build it), or nothing and fail.
jt_tinyjit() { [ -x "$root/build/tinyjit" ] && echo "$root/build/tinyjit"; }

# Runtimes: print the path of the binary, or nothing (then the caller SKIPs with a reason).
# Deno and Bun come from the npm registry into build/npm (.ci/run installs them).
jt_deno() { for f in "${JT_DENO:-}" "$root/build/npm/node_modules/@deno/linux-x64-glibc/deno"; do
  [ -n "$f" ] && [ -x "$f" ] && { echo "$f"; return 0; }; done; return 1; }
jt_bun() { for f in "${JT_BUN:-}" "$root/build/npm/node_modules/@oven/bun-linux-x64/bin/bun"; do
  [ -n "$f" ] && [ -x "$f" ] && { echo "$f"; return 0; }; done; return 1; }
# jt_kernel_samples: can perf record kernel samples here? (root, or perf_event_paranoid
# <= 1: else perf falls back to user space only, cpu-clock:u)
jt_kernel_samples() { [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)" -le 1 ]; }

# jt_python 3.13 -> a pyenv build of that version ($PYENV_ROOT, the user's ~/.pyenv, then
# root's, where the machines' builds are) or python3.13 on PATH; else nothing, and on
# stderr why when root's builds are there but not readable (a user other than root)
jt_python() {
  for f in ${PYENV_ROOT:+"$PYENV_ROOT"/versions/"$1".*/bin/python"$1"} \
           ${jt_user_home:+"$jt_user_home"/.pyenv/versions/"$1".*/bin/python"$1"} \
           /root/.pyenv/versions/"$1".*/bin/python"$1" "$(command -v python"$1" 2>/dev/null)"; do
    [ -n "$f" ] && [ -x "$f" ] && { echo "$f"; return 0; }; done
  [ -d /root/.pyenv ] || [ ! -d /root ] || [ -r /root ] ||
    echo "(pyenv's builds under /root are not readable by $(id -un))" >&2
  return 1
}
