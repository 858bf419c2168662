#!/bin/sh
# A JIT in a container: node in its own pid and mount namespace with a private tmpfs /tmp
# (what docker, podman and Kubernetes give a service), recorded from the host with
# `perf record -p` while it serves and injected while it still runs.  The recording
# names /tmp/jit-1.dump, which only the container has: both we and `perf inject --jit`
# must find it through the process's root, and we must name at least as many JIT samples
# as perf does (side by side, same recording).  After the process has exited: one message
# that names the container case and --jitdump-dir, and --jitdump-dir with a copy works.
jt_name="container oracle"; . "$(dirname "$0")/common.sh"
jt_need_perf
command -v node >/dev/null 2>&1 || jt_skip "node not installed"
command -v unshare >/dev/null 2>&1 || jt_skip "unshare not installed (util-linux)"
[ "$(id -u)" = 0 ] || jt_skip "needs root (unshare --mount, mount -t tmpfs)"
inject="$root/build/jitanon-inject"
[ -x "$inject" ] || { echo "FAIL container: build/jitanon-inject missing (make all)"; exit 0; }
unshare --pid --fork --mount --mount-proc true 2>/dev/null || jt_skip "unshare --pid --mount does not work here"

# A service: its hot function is optimized first, then a burst of new code flushes V8's
# dump buffer (V8 writes its dump through a large stdio buffer: without the burst the hot
# function's record would still sit in it), then it serves, compiling now and then.
cat > "$tmp/app.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0, i = 0, t = Date.now() + 400;
while (Date.now() < t) s += fib(18);
for (; i < 3000; i++) s += new Function('x', 'return x * ' + i + ' + ' + (s & 7) + ';')(i) & 1;
const end = Date.now() + 60000; // the oracle stops it once both have injected
while (Date.now() < end) {
  s += fib(18);
  if ((s & 63) == 0) s += new Function('x', 'return x + ' + (i++) + ';')(s) & 1;
}
console.log(s > 0);
EOF
unshare --pid --fork --mount --mount-proc sh -c \
  'app=$(cat "$1") && mount -t tmpfs tmpfs /tmp && cd /tmp && printf "%s\n" "$app" > app.js && exec node --perf-prof app.js' \
  sh "$tmp/app.js" > "$tmp/node.out" 2>&1 &
ushare=$!
np=""
jt_cleanup_hook() { [ -n "$np" ] && kill -KILL "$np" 2>/dev/null; kill "$ushare" 2>/dev/null; wait "$ushare" 2>/dev/null; }
np=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
  sleep 0.2; np=$(pgrep -P "$ushare" 2>/dev/null | head -1)
  [ -n "$np" ] && [ -e "/proc/$np/root/tmp/jit-1.dump" ] && break
done
[ -n "$np" ] && [ -e "/proc/$np/root/tmp/jit-1.dump" ] || { echo "FAIL container: node did not start in its namespace: $(cat "$tmp/node.out")"; exit 0; }
sleep 1
perf record -q -k mono -e cpu-clock -p "$np" -o "$tmp/c.data" -- sleep 2 > "$tmp/rec.log" 2>&1
kill -0 "$np" 2>/dev/null || { echo "FAIL container: node exited before the injection ($(cat "$tmp/node.out"))"; exit 0; }
mkdir "$tmp/elf" "$tmp/copy"
t0=$(date +%s); perf inject --jit -i "$tmp/c.data" -o "$tmp/perf.data" > "$tmp/perf.log" 2>&1; t1=$(date +%s)
"$inject" -N -i "$tmp/c.data" -o "$tmp/ours.data" --elf-dir "$tmp/elf" --stats > "$tmp/ours.log" 2>&1
t2=$(date +%s)
cp "/proc/$np/root/tmp/jit-1.dump" "$tmp/copy/" # what a user would copy out of the container
alive=0; kill -0 "$np" 2>/dev/null && alive=1
# Hostile containers (the tree under its root is theirs): its dump replaced by a symlink
# to a host file only root may read (a valid dump of pid 1: read, it would name samples),
# then by a FIFO, then by a dump whose header names another pid: refused with a warning, nothing named, the run goes on and ends.
cp "$tmp/copy/jit-1.dump" "$tmp/secret.dump" && chmod 600 "$tmp/secret.dump"
croot="/proc/$np/root"
hostile() { # $1: what; the dump's place already holds it
  timeout 60 "$inject" -N --elf=process -i "$tmp/c.data" -o "$tmp/h.data" --elf-dir "$tmp/elf" > "$tmp/h.log" 2>&1
  rc=$?
  if [ $rc = 0 ] && [ "$(named "$tmp/h.data")" = 0 ] && grep -q "refused: $2" "$tmp/h.log"; then
    echo "PASS container: hostile $1: refused with a warning ($(sed -n 's/.*refused: //p' "$tmp/h.log" | head -1 | cut -c1-60)...), nothing read"
  else echo "FAIL container: hostile $1: rc $rc, named $(named "$tmp/h.data")"; cat "$tmp/h.log"; fi
}
named() { perf script -i "$1" -F ip,dso 2>/dev/null | grep -c 'jitted-'; }
if [ "$alive" = 1 ]; then
  rm -f "$croot/tmp/jit-1.dump" && ln -s "$tmp/secret.dump" "$croot/tmp/jit-1.dump" && hostile "absolute symlink to a host file" "a symlink"
  rm -f "$croot/tmp/jit-1.dump" && ln -s "../../../../../../../..$tmp/secret.dump" "$croot/tmp/jit-1.dump" &&
    hostile "relative symlink to a host file" "a symlink"
  rm -f "$croot/tmp/jit-1.dump" && mkfifo "$croot/tmp/jit-1.dump" && hostile "FIFO" "a FIFO"
  rm -f "$croot/tmp/jit-1.dump" && cp "$tmp/copy/jit-1.dump" "$croot/tmp/jit-1.dump" &&
    printf '\222\020\000\000' | dd of="$croot/tmp/jit-1.dump" bs=1 seek=20 conv=notrunc 2>/dev/null &&
    hostile "dump of pid 4242 (neither pid)" "its header names pid 4242"
fi
kill -KILL "$np" 2>/dev/null # pid 1 of its namespace: only KILL reaches it from here
wait "$ushare"
total=$(perf script -i "$tmp/c.data" -F ip 2>/dev/null | wc -l)
ours=$(named "$tmp/ours.data"); theirs=$(named "$tmp/perf.data")
if [ "$alive" = 1 ] && grep -q 'read inside its root' "$tmp/ours.log" && grep -q 'inside their process.s root.* 1 ' "$tmp/ours.log" &&
   [ "$theirs" -gt 0 ] && [ "$ours" -ge "$theirs" ]; then
  echo "PASS container: injected while it runs: JIT samples named ours $ours >= perf inject $theirs (of $total samples; perf inject $((t1 - t0)) s, ours $((t2 - t1)) s)"
else
  echo "FAIL container: while it runs: ours $ours, perf inject $theirs of $total (alive $alive)"; cat "$tmp/ours.log"
fi

# after the process has exited: its root is gone with it
"$inject" -N --elf=process -i "$tmp/c.data" -o "$tmp/gone.data" --elf-dir "$tmp/elf" > "$tmp/gone.log" 2>&1
"$inject" -N --elf=process -i "$tmp/c.data" -o "$tmp/dir.data" --elf-dir "$tmp/elf" --jitdump-dir "$tmp/copy" > "$tmp/dir.log" 2>&1
viadir=$(named "$tmp/dir.data")
if [ "$(grep -c 'jitdump' "$tmp/gone.log")" = 1 ] && grep -q 'container.*--jitdump-dir' "$tmp/gone.log" &&
   [ "$(named "$tmp/gone.data")" = 0 ] && [ "$viadir" -gt 0 ] && [ "$viadir" -ge $((ours * 9 / 10)) ]; then
  echo "PASS container: after exit: one message names the container case and --jitdump-dir; with it $viadir JIT samples named"
else
  echo "FAIL container: after exit: --jitdump-dir named $viadir"; cat "$tmp/gone.log" "$tmp/dir.log"
fi
