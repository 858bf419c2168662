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

# jt_region_frames LABEL DIR DATA [PERF-SCRIPT-ARGS...]: region files (--elf=region) and
# per-function files (--elf=function, perf's own layout) made from the same recording DATA
# give perf script the same symbol for every frame of every sample (callchains included,
# unwound as ARGS say: a --call-graph dwarf recording unwinds through the JIT frames with
# each layout's .eh_frame), and perf annotate the same instructions and source lines for
# the five hottest JIT symbols; so do region files written for a pipe (laid out as each
# dump is read: the reader may open a file at the first sample into it).  Writes DIR/fr,
# DIR/ff, DIR/fp and their .data/.txt/.ann; prints "PASS LABEL: ..." or "FAIL LABEL: ...".
# jt_regions DIR: how many of the files in DIR are region files (jitted-<pid>-r<N>.so; the
# region layout gives some functions a file of their own, e.g. code with unwinding info in a
# --call-graph dwarf recording)
jt_regions() { ls "$1" | grep -c '^jitted-[0-9]*-r[0-9]*\.so$'; }
jt_region_frames() {
  jt_l=$1 jt_d=$2 jt_in=$3; shift 3
  mkdir -p "$jt_d/fr" "$jt_d/ff" "$jt_d/fp"
  # -N: perf reads the files where they are, and thousands of per-function files (deno's
  # 2482) took 1-2 s more to copy into the cache
  # (a callchain entry in a jitted file prints its address in that file: dropped)
  "$root/build/jitanon-inject" -N -i "$jt_in" -o - --elf=region --elf-dir "$jt_d/fp" 2>/dev/null |
    perf script -i - -F tid,time,ip,sym "$@" 2>/dev/null | awk '/^[ \t]/ { $1 = "" } { print }' > "$jt_d/fp.txt"
  "$root/build/jitanon-inject" -N -i "$jt_in" -o "$jt_d/fr.data" --elf=region --elf-dir "$jt_d/fr" 2>/dev/null
  "$root/build/jitanon-inject" -N -i "$jt_in" -o "$jt_d/ff.data" --elf=function --elf-files=all --elf-dir "$jt_d/ff" 2>/dev/null
  for jt_k in fr ff; do
    perf script -i "$jt_d/$jt_k.data" -F tid,time,ip,sym "$@" 2>/dev/null | awk '/^[ \t]/ { $1 = "" } { print }' > "$jt_d/$jt_k.txt"
  done
  jt_nr=$(ls "$jt_d/fr" | wc -l) jt_nf=$(ls "$jt_d/ff" | wc -l) jt_nl=$(wc -l < "$jt_d/ff.txt")
  # perf annotate of the five hottest JIT symbols whose name no other function has (-s
  # takes a name): the same instructions and source lines (addresses dropped: each file
  # has its own)
  perf report -i "$jt_d/ff.data" --stdio --no-children --sort dso,sym 2>/dev/null |
    awk '/jitted-/ { sub(/^.*\] /, ""); print }' |
    awk '{ if (!($0 in n)) order[++k] = $0; n[$0]++ }
         END { for (i = 1; i <= k && c < 5; i++) if (n[order[i]] == 1) { print order[i]; c++ } }' > "$jt_d/top.syms"
  jt_ok=1; : > "$jt_d/fr.ann"; : > "$jt_d/ff.ann"
  while IFS= read -r jt_s; do
    for jt_k in fr ff; do
      perf annotate -i "$jt_d/$jt_k.data" --stdio -s "$jt_s" 2>/dev/null |
        sed -n -e 's/^ *[0-9.]* *: *[0-9a-f]*:[[:space:]]*\([^[:space:]]*\).*/I \1/p' \
               -e '/Disassembly of section\|^ *: *[0-9]* *[0-9a-f]* <.*>:$\|():$/d' \
               -e 's/^ *: *[0-9][0-9]*[[:space:]]*\(.*[^[:space:]].*\)$/S \1/p' >> "$jt_d/$jt_k.ann"
    done
  done < "$jt_d/top.syms"
  # a recording whose samples all land outside JIT code (python's trampolines get a few
  # of their own, some runs none: they are in the callchains) has nothing to annotate; its
  # frames are compared all the same
  if [ -s "$jt_d/top.syms" ]; then
    { cmp -s "$jt_d/fr.ann" "$jt_d/ff.ann" && [ -s "$jt_d/ff.ann" ]; } || jt_ok=0
    jt_ann="annotate of the $(wc -l < "$jt_d/top.syms") hottest JIT symbols the same ($(grep -c '^I' "$jt_d/ff.ann") instructions, $(grep -c '^S' "$jt_d/ff.ann") source lines)"
  else jt_ann="no sample's own address in JIT code: nothing to annotate"; fi
  if [ "$jt_nl" -gt 0 ] && cmp -s "$jt_d/fr.txt" "$jt_d/ff.txt" && cmp -s "$jt_d/fp.txt" "$jt_d/ff.txt" && [ $jt_ok = 1 ]; then
    echo "PASS $jt_l: region layout ($jt_nr files, $(jt_regions "$jt_d/fr") of them regions; for a pipe $(ls "$jt_d/fp" | wc -l), $(jt_regions "$jt_d/fp")) and per-function files ($jt_nf): every frame's symbol the same ($jt_nl lines), $jt_ann"
  elif [ $jt_ok = 0 ]; then echo "FAIL $jt_l: perf annotate of the hottest JIT symbols ('$(head -n 1 "$jt_d/top.syms")' first) differs: $(diff "$jt_d/ff.ann" "$jt_d/fr.ann" | head -3 | tr '\n' ' ')"
  elif ! cmp -s "$jt_d/fr.txt" "$jt_d/ff.txt"; then
    echo "FAIL $jt_l: region files and per-function files differ: $(diff "$jt_d/ff.txt" "$jt_d/fr.txt" | head -3 | tr '\n' ' ')"
  else echo "FAIL $jt_l: region files for a pipe and per-function files differ: $(diff "$jt_d/ff.txt" "$jt_d/fp.txt" | head -3 | tr '\n' ' ')"; fi
}

# jt_jit_maps DATA > FILE: the MMAP2s of jitted files (jitted-*.so) in DATA, in order, one a
# line: start end base path (decimal; base = start - pgoff, where the file's offset 0 lies in
# the process: addr2line and gdb take ADDR - base in a region file, ET_DYN with p_vaddr ==
# p_offset).  Needs perf.
jt_jit_maps() {
  perf script --show-mmap-events -i "$1" 2>/dev/null |
    sed -n 's/.*PERF_RECORD_MMAP2 [0-9/]*: \[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)) @ \([0-9a-fx]*\) .*\]: [-rwxps]* \(.*\/jitted-[^/]*\.so\)$/\1 \2 \3 \4/p' |
    while read -r jt_s jt_n jt_o jt_p; do echo "$((jt_s)) $((jt_s + jt_n)) $((jt_s - jt_o)) $jt_p"; done
}
# jt_jit_at MAPS ADDR: "PATH REL" for the jitted file mapped last over ADDR in MAPS (from
# jt_jit_maps), REL = ADDR - its base in hex; nothing when none is
jt_jit_at() {
  jt_r=""
  while read -r jt_s jt_e jt_b jt_p; do
    [ $(($2)) -ge "$jt_s" ] && [ $(($2)) -lt "$jt_e" ] && jt_r="$jt_p $(printf '0x%x' $(($2 - jt_b)))"
  done < "$1"
  echo "$jt_r"
}
