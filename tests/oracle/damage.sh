#!/bin/sh
# Damaged and hostile inputs, with real perf as the oracle (issue 18; the legacy header of
# issue 13): a node recording whose jitdump has garbage appended or a damaged record in the
# middle, the same recording as a killed `perf record` leaves it (data size 0, no feature
# sections) and cut inside a record, a FIFO or a device where the dump should be, a
# symlink another user planted in a sticky directory, and a legacy PERFFILE header built
# by hand.
jt_name="damage oracle"; . "$(dirname "$0")/common.sh"
inj="$root/build/jitanon-inject"
jt_need_perf
samples() { perf script -i "$1" -F tid,time,ip 2>/dev/null > "$2"; }
symbols() { perf script -i "$1" -F tid,time,ip,sym 2>/dev/null > "$2"; }
nfiles() { find "$1" -name 'jitted-*.so' | wc -l | tr -d ' '; }

# python3 helpers: jitdump record offsets, perf.data surgery, the legacy header fixture
py="$tmp/surgery.py"
cat > "$py" <<'EOF'
import struct, sys
def jd_records(path):
    b = open(path, "rb").read()
    hsize = struct.unpack_from("<I", b, 8)[0]
    pos, out = hsize, []
    while pos + 16 <= len(b):
        rid, size = struct.unpack_from("<II", b, pos)
        if size < 16 or pos + size > len(b): break
        out.append((pos, rid, size)); pos += size
    return out
cmd = sys.argv[1]
if cmd == "jd-middle":        # damage the record in the middle: zero its prefix; print loads before it
    recs = jd_records(sys.argv[2]); k = len(recs) // 2
    b = bytearray(open(sys.argv[2], "rb").read()); b[recs[k][0]:recs[k][0] + 16] = bytes(16)
    open(sys.argv[3], "wb").write(b)
    print(sum(1 for r in recs[:k] if r[1] == 0))
elif cmd == "killed":         # data size 0, everything after the data (the feature sections) gone
    b = bytearray(open(sys.argv[2], "rb").read())
    off, size = struct.unpack_from("<QQ", b, 40)
    cut = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    b = b[:off + size - cut]; struct.pack_into("<Q", b, 48, 0)
    open(sys.argv[3], "wb").write(b)
elif cmd == "garbage-features":  # the feature table overwritten with garbage
    b = bytearray(open(sys.argv[2], "rb").read())
    off, size = struct.unpack_from("<QQ", b, 40)
    for i in range(off + size, min(len(b), off + size + 64)): b[i] = (i * 73 + 41) & 0xff
    open(sys.argv[3], "wb").write(b)
elif cmd == "v1":             # a legacy PERFFILE file built by hand: one cpu-clock attr, samples
    binary = sys.argv[3]; pid = 4242
    st = 1 | 2 | 4 | 256      # IP, TID, TIME, PERIOD
    attr = struct.pack("<IIQQQQQIIQQ", 1, 104, 0, 4000, st, 0, 1 << 8 | 1 << 9, 0, 0, 0, 0)  # flags: mmap, comm
    attr = attr.ljust(104, b"\0")
    recs = b""
    comm = struct.pack("<II", pid, pid) + b"v1fixture\0".ljust(16, b"\0")
    recs += struct.pack("<IHH", 3, 0, 8 + len(comm)) + comm
    name = binary.encode() + b"\0"; name = name.ljust((len(name) + 7) // 8 * 8, b"\0")
    mmap = struct.pack("<IIQQQ", pid, pid, 0x400000, 0x100000, 0) + name
    recs += struct.pack("<IHH", 1, 2, 8 + len(mmap)) + mmap
    for i in range(int(sys.argv[4])):
        s = struct.pack("<QIIQQ", 0x401000 + 0x40 * i, pid, pid, 1000000 + 1000 * i, 4000)
        recs += struct.pack("<IHH", 9, 2, 8 + len(s)) + s
    hdr_size = 72
    ids_off = hdr_size; ids = struct.pack("<Q", 7)
    attrs_off = ids_off + len(ids); attrs = attr + struct.pack("<QQ", ids_off, len(ids))
    data_off = attrs_off + len(attrs)
    h = b"PERFFILE" + struct.pack("<QQQQQQQQ", hdr_size, len(attrs), attrs_off, len(attrs), data_off, len(recs), 0, 0)
    open(sys.argv[2], "wb").write(h + ids + attrs + recs)
EOF

# 1. node --perf-prof: its dump damaged two ways, its recording killed two ways
if ! command -v node >/dev/null 2>&1; then echo "SKIP damage node: node not installed"
else
  mkdir "$tmp/node"
  (cd "$tmp/node" && perf record -q -k mono -e cpu-clock -o perf.data node --perf-prof -e '
    function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
    let t=0; for (let k=0;k<200;k++) t+=f(2e4); console.log(t)' >/dev/null 2>&1)
  dump=$(ls "$tmp"/node/jit-*.dump 2>/dev/null | head -1)
  if [ ! -f "$tmp/node/perf.data" ] || [ -z "$dump" ]; then echo "FAIL damage node: could not record node"
  else
    # the checks below count ELF files: every function gets one (--elf-files=all)
    cp "$dump" "$tmp/clean.dump"
    mkdir "$tmp/e0" "$tmp/e1" "$tmp/e2" "$tmp/e3"
    "$inj" --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/clean.data" --elf-dir "$tmp/e0" 2>/dev/null
    n0=$(nfiles "$tmp/e0"); symbols "$tmp/clean.data" "$tmp/clean.sym"
    # 100 zero bytes appended: every ELF, the same perf script, one warning, exit 0
    head -c 100 /dev/zero >> "$dump"
    "$inj" --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/tail.data" --elf-dir "$tmp/e1" --stats 2> "$tmp/tail.err"; rc=$?
    n1=$(nfiles "$tmp/e1"); symbols "$tmp/tail.data" "$tmp/tail.sym"
    if [ $rc = 0 ] && [ "$n0" -gt 0 ] && [ "$n1" = "$n0" ] && cmp -s "$tmp/clean.sym" "$tmp/tail.sym" &&
       [ "$(grep -c 'is damaged or cut short at record' "$tmp/tail.err")" = 1 ] &&
       grep -q 'bytes ignored 100)' "$tmp/tail.err"; then
      echo "PASS damage node: 100 zero bytes after the dump: $n1 of $n0 ELFs, the same perf script, one warning"
    else echo "FAIL damage node: damaged tail: rc $rc, $n1 of $n0 ELFs: $(cat "$tmp/tail.err")"; fi
    if "$inj" --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/strict.data" --elf-dir "$tmp/e3" --strict 2> "$tmp/strict.err"; then
      echo "FAIL damage node: --strict accepted a damaged dump"
    elif [ ! -e "$tmp/strict.data" ]; then echo "PASS damage node: --strict refuses it (exit 1, no output)"
    else echo "FAIL damage node: --strict left an output behind"; fi
    # a damaged record in the middle: the CODE_LOADs before it, nothing after (counted as
    # files: --elf=function, one a CODE_LOAD; region files hold many, and no unsampled code
    # that a later load replaced)
    want=$(python3 "$py" jd-middle "$tmp/clean.dump" "$dump")
    "$inj" --elf=function --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/mid.data" --elf-dir "$tmp/e2" 2> "$tmp/mid.err"; rc=$?
    n2=$(nfiles "$tmp/e2")
    if [ $rc = 0 ] && [ "$n2" = "$want" ] && [ "$want" -gt 0 ] && samples "$tmp/mid.data" "$tmp/mid.s" &&
       [ -s "$tmp/mid.s" ]; then echo "PASS damage node: a damaged record in the middle: the $n2 functions before it"
    else echo "FAIL damage node: damaged middle record: rc $rc, $n2 ELFs, want $want: $(cat "$tmp/mid.err")"; fi
    cp "$tmp/clean.dump" "$dump"
    # killed: data size 0, no feature sections
    python3 "$py" killed "$tmp/node/perf.data" "$tmp/killed.data"
    samples "$tmp/node/perf.data" "$tmp/intact.s"
    mkdir "$tmp/ek" "$tmp/ec"
    "$inj" --elf-files=all -i "$tmp/killed.data" -o "$tmp/killed.out" --elf-dir "$tmp/ek" 2> "$tmp/killed.err"; rc=$?
    samples "$tmp/killed.out" "$tmp/killed.s"
    if [ $rc = 0 ] && [ -s "$tmp/intact.s" ] && cmp -s "$tmp/intact.s" "$tmp/killed.s" &&
       grep -q 'data size 0' "$tmp/killed.err" && [ "$(nfiles "$tmp/ek")" = "$n0" ]; then
      echo "PASS damage killed: data size 0 and no features: the same $(wc -l < "$tmp/intact.s") sample lines (tid, time, ip), $n0 ELFs"
    else echo "FAIL damage killed: rc $rc: $(cat "$tmp/killed.err"); $(diff "$tmp/intact.s" "$tmp/killed.s" | head -3)"; fi
    if "$root/build/perfdata-cat" "$tmp/killed.data" > "$tmp/killed.cat" 2> "$tmp/killed.caterr" &&
       [ "$(grep -c SAMPLE "$tmp/killed.cat")" = "$(wc -l < "$tmp/intact.s" | tr -d ' ')" ]; then
      echo "PASS damage killed: perfdata-cat reads it ($(grep -c SAMPLE "$tmp/killed.cat") samples)"
    else echo "FAIL damage killed: perfdata-cat: $(cat "$tmp/killed.caterr")"; fi
    # garbage in the feature table: the same sample lines, the features dropped with a warning
    python3 "$py" garbage-features "$tmp/node/perf.data" "$tmp/gf.data"
    mkdir "$tmp/eg"
    "$inj" --elf-files=all -i "$tmp/gf.data" -o "$tmp/gf.out" --elf-dir "$tmp/eg" 2> "$tmp/gf.err"; rc=$?
    samples "$tmp/gf.out" "$tmp/gf.s"
    if [ $rc = 0 ] && cmp -s "$tmp/intact.s" "$tmp/gf.s" && grep -q 'feature sections treated as absent' "$tmp/gf.err"; then
      echo "PASS damage features: a garbage feature table: the same sample lines, features treated as absent"
    else echo "FAIL damage features: rc $rc: $(cat "$tmp/gf.err")"; fi
    # ... and cut 5 bytes into its last record: every whole record, a warning, exit 0
    python3 "$py" killed "$tmp/node/perf.data" "$tmp/cut.data" 5
    "$inj" --elf-files=all -i "$tmp/cut.data" -o "$tmp/cut.out" --elf-dir "$tmp/ec" 2> "$tmp/cut.err"; rc=$?
    samples "$tmp/cut.out" "$tmp/cut.s"
    lines=$(wc -l < "$tmp/cut.s" | tr -d ' '); total=$(wc -l < "$tmp/intact.s" | tr -d ' ')
    if [ $rc = 0 ] && grep -q 'inside a record' "$tmp/cut.err" && [ "$lines" -ge $((total - 1)) ] &&
       head -n "$lines" "$tmp/intact.s" | cmp -s - "$tmp/cut.s"; then
      echo "PASS damage cut: a recording cut inside its last record: $lines of $total sample lines, exit 0"
    else echo "FAIL damage cut: rc $rc, $lines of $total lines: $(cat "$tmp/cut.err")"; fi
    if "$inj" --elf-files=all -i "$tmp/cut.data" -o "$tmp/cut2.out" --elf-dir "$tmp/ec" --strict 2>/dev/null; then
      echo "FAIL damage cut: --strict accepted a killed recording"
    else echo "PASS damage cut: --strict refuses a killed recording"; fi
    # a FIFO where the dump was: the run ends at once, the output is written
    rm -f "$dump"; mkfifo "$dump"; mkdir "$tmp/ef"
    start=$(date +%s%N)
    timeout 10 "$inj" --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/fifo.data" --elf-dir "$tmp/ef" 2> "$tmp/fifo.err"; rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    if [ $rc = 0 ] && [ "$ms" -lt 1000 ] && [ -s "$tmp/fifo.data" ] && grep -q 'FIFO' "$tmp/fifo.err"; then
      echo "PASS damage fifo: a FIFO named like the dump: refused in $ms ms, output written ($(cat "$tmp/fifo.err"))"
    else echo "FAIL damage fifo: rc $rc after $ms ms: $(cat "$tmp/fifo.err")"; fi
    # a symlink to a device
    rm -f "$dump"; ln -s /dev/zero "$dump"
    timeout 10 "$inj" --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/dev.data" --elf-dir "$tmp/ef" 2> "$tmp/dev.err"; rc=$?
    if [ $rc = 0 ] && grep -q 'device node' "$tmp/dev.err"; then echo "PASS damage device: a symlink to /dev/zero is refused"
    else echo "FAIL damage device: rc $rc: $(cat "$tmp/dev.err")"; fi
    # protected_symlinks: in a sticky world-writable directory, a symlink owned by another user
    if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
      rm -f "$dump"; mkdir "$tmp/sticky"; chmod 1777 "$tmp/sticky"; base=${dump##*/}
      ln -s "$tmp/clean.dump" "$tmp/sticky/$base"; chown -h nobody "$tmp/sticky/$base"
      mkdir "$tmp/es"
      "$inj" --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/sym.data" --elf-dir "$tmp/es" --jitdump-dir "$tmp/sticky" 2> "$tmp/sym.err"; rc=$?
      ns=$(nfiles "$tmp/es")
      chown -h root "$tmp/sticky/$base"
      "$inj" --elf-files=all -i "$tmp/node/perf.data" -o "$tmp/sym2.data" --elf-dir "$tmp/es" --jitdump-dir "$tmp/sticky" 2>/dev/null
      ns2=$(nfiles "$tmp/es")
      if [ $rc = 0 ] && [ "$ns" = 0 ] && grep -q 'protected_symlinks' "$tmp/sym.err" && [ "$ns2" = "$n0" ]; then
        echo "PASS damage symlink: another user's symlink in a sticky directory is refused, ours is followed"
      else echo "FAIL damage symlink: rc $rc, $ns then $ns2 ELFs: $(cat "$tmp/sym.err")"; fi
    else echo "SKIP damage symlink: needs root and a user 'nobody' to plant another user's symlink"; fi
  fi
fi

# 2. a real SIGKILL of perf record (and of node, mid-write of its dump): perf 6.1 shows
#    nothing; our output shows every sample the file holds, with the jitted functions
if command -v node >/dev/null 2>&1 && command -v pgrep >/dev/null 2>&1; then
  mkdir "$tmp/kill"; cd "$tmp/kill"
  perf record -q -k mono -e cpu-clock -c 50000 -m 4 -o k.data node --perf-prof -e '
    function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
    let t=0; for (let k=0;k<100000;k++) t+=f(2e4); console.log(t)' >/dev/null 2>&1 &
  P=$!; sleep 1.5; child=$(pgrep -P "$P")
  kill -9 "$P" 2>/dev/null; [ -n "$child" ] && kill -9 $child 2>/dev/null; wait "$P" 2>/dev/null; cd "$root"
  "$inj" --elf-files=all -i "$tmp/kill/k.data" -o "$tmp/kill/out.data" --elf-dir "$tmp/kill/e" --stats 2> "$tmp/kill/err"; rc=$?
  samples "$tmp/kill/k.data" "$tmp/kill/raw.s"; samples "$tmp/kill/out.data" "$tmp/kill/out.s"
  have=$("$root/build/perfdata-cat" "$tmp/kill/k.data" 2>/dev/null | grep -c ' SAMPLE ')
  got=$(wc -l < "$tmp/kill/out.s" | tr -d ' ')
  if [ $rc = 0 ] && [ "$got" -gt 0 ] && [ "$got" = "$have" ] && [ ! -s "$tmp/kill/raw.s" ] &&
     grep -q 'data size 0' "$tmp/kill/err"; then
    echo "PASS damage sigkill: perf record killed: perf script shows 0 samples, ours $got of $have, $(nfiles "$tmp/kill/e") ELFs"
    grep -v '^records\|^jitdumps\|^anon\|^ELF' "$tmp/kill/err" | head -3
  else echo "FAIL damage sigkill: rc $rc, $got of $have samples, raw $(wc -l < "$tmp/kill/raw.s"): $(cat "$tmp/kill/err")"; fi
else echo "SKIP damage sigkill: node or pgrep not installed"; fi

# 3. the legacy PERFFILE header (perf 6.1 reads it): perf script on the input equals perf
#    script on what jitanon-inject and perfdata-cat --copy write from it
python3 "$py" v1 "$tmp/v1.data" "$root/build/jitanon-inject" 40
"$inj" --elf-files=all -i "$tmp/v1.data" -o "$tmp/v1.out" 2> "$tmp/v1.err"; rc=$?
"$root/build/perfdata-cat" --copy "$tmp/v1.copy" "$tmp/v1.data" 2>> "$tmp/v1.err"
symbols "$tmp/v1.data" "$tmp/v1.in.s"; symbols "$tmp/v1.out" "$tmp/v1.out.s"; symbols "$tmp/v1.copy" "$tmp/v1.copy.s"
if [ $rc = 0 ] && [ "$(wc -l < "$tmp/v1.in.s")" = 40 ] && cmp -s "$tmp/v1.in.s" "$tmp/v1.out.s" &&
   cmp -s "$tmp/v1.in.s" "$tmp/v1.copy.s"; then
  echo "PASS damage legacy header: a PERFFILE (v1) file: perf script on our output equals perf script on it (40 samples)"
else echo "FAIL damage legacy header: rc $rc, $(wc -l < "$tmp/v1.in.s") lines: $(cat "$tmp/v1.err"); $(diff "$tmp/v1.in.s" "$tmp/v1.out.s" | head -3)"; fi
