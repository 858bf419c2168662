#!/bin/sh
# CPython 3.13 -X perf_jit with real perf and dwarf call graphs: CPython 3.13.0 writes
# e_machine 0 in its jitdump header, which jitanon-inject replaces by the recording's
# machine (with a warning), so the ELF stubs disassemble; the py:: frames of every sample
# come out as in perf inject --jit's output, and perf annotate disassembles a Python function.
jt_name="python313 oracle"; . "$(dirname "$0")/common.sh"
jt_need_perf
py=$(jt_python 3.13) || jt_skip "no CPython 3.13 (pyenv install 3.13.0)"
inj="$root/build/jitanon-inject"
d="$tmp/py"; mkdir -p "$d/elf"
cat > "$d/app.py" <<'PY'
import os, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
t = time.time()
while time.time() - t < 0.5:
    fib(18)
print("pid", os.getpid())
PY
(cd "$d" && perf record -q -k mono -e cpu-clock -F 1000 --call-graph dwarf,8192 -o raw.data "$py" -X perf_jit app.py \
   > out.txt 2>/dev/null)
p=$(sed -n 's/^pid //p' "$d/out.txt"); pids="$pids $p"
[ -n "$p" ] && [ -f "/tmp/jit-$p.dump" ] || jt_skip "python3.13 -X perf_jit wrote no /tmp/jit-<pid>.dump"
if ! perf inject --jit -i "$d/raw.data" -o "$d/perf.data" 2>/dev/null ||
   ! "$inj" -i "$d/raw.data" -o "$d/ours.data" --elf-dir "$d/elf" 2> "$d/ours.err"; then
  echo "FAIL python313: an injection failed: $(cat "$d/ours.err")"; exit 0
fi
mach=$(sed -n 's/.*has e_machine \([0-9]*\).*/\1/p' "$d/ours.err" | head -1)
elf=$(ls "$d/elf" | head -1)
echo "# dump e_machine ${mach:-as the host}; our stub: $(readelf -h "$d/elf/$elf" | sed -n 's/^ *Machine: *//p')"
for m in perf ours; do perf script -i "$d/$m.data" -F comm,tid,ip,sym,dso 2>/dev/null > "$d/$m.txt"; done
if out=$(python3 - "$d/perf.txt" "$d/ours.txt" <<'PY'
import re, sys
def stacks(path):
    out, cur = [], None
    for line in open(path, errors="replace"):
        if not line.strip():
            if cur is not None: out.append(tuple(cur))
            cur = None
        elif cur is None: cur = []
        else:
            m = re.match(r"\s*[0-9a-f]+\s(.*?)(\+0x[0-9a-f]+)?\s+\(", line)
            if m and m.group(1).startswith("py::"): cur.append(m.group(1))
    if cur is not None: out.append(tuple(cur))
    return out
perf, ours = stacks(sys.argv[1]), stacks(sys.argv[2])
if len(perf) != len(ours) or not perf:
    print("sample counts differ or empty: perf inject %d, ours %d" % (len(perf), len(ours))); sys.exit(1)
withpy = [i for i, s in enumerate(perf) if s]
same = sum(1 for i in withpy if ours[i] == perf[i])
frames = sum(len(perf[i]) for i in withpy)
print("%d samples, %d with py:: frames in perf inject's output (%d frames), %d of them the same in ours"
      % (len(perf), len(withpy), frames, same))
sys.exit(0 if withpy and same >= 0.99 * len(withpy) else 1)
PY
); then echo "PASS python313 frames: py:: frames as perf inject's output has them ($out)"
else echo "FAIL python313 frames: $out"; fi
# the region layout on the same recording: perf script unwinds (dwarf) through its files as
# through per-function ones
jt_region_frames "python313 region" "$d" "$d/raw.data"
fn="py::fib:$d/app.py"
annotated() { timeout 60 perf annotate -i "$1" --stdio -s "$fn" 2>&1 | grep -c '^ *[0-9.]* : *[0-9a-f]*: '; }
n=$(annotated "$d/ours.data")
if [ "$n" -eq 0 ]; then
  # perf annotate lists only functions a sample's own ip is in, and fib's trampoline is a
  # few instructions: a half-second run can leave it without one (1 run in ~10 under
  # load).  Where the samples fall decides that, not our output: one more recording.
  (cd "$d" && perf record -q -k mono -e cpu-clock -F 1000 --call-graph dwarf,8192 -o raw2.data "$py" -X perf_jit app.py \
     > out2.txt 2>/dev/null)
  p2=$(sed -n 's/^pid //p' "$d/out2.txt"); pids="$pids $p2"
  mkdir -p "$d/elf2"
  "$inj" -i "$d/raw2.data" -o "$d/ours2.data" --elf-dir "$d/elf2" 2>/dev/null && n=$(annotated "$d/ours2.data")
  echo "# python313 annotate: no sample in fib's own code in the first recording; a second one: $n instructions"
fi
if [ "$n" -gt 0 ] && [ -n "$mach" ]; then
  echo "PASS python313 annotate: perf annotate disassembles '$fn' in our output ($n instructions; dump e_machine $mach replaced, with a warning)"
else echo "FAIL python313 annotate: perf annotate of '$fn': $n instructions; warning: $(cat "$d/ours.err")"; fi
