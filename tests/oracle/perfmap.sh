#!/bin/sh
# Perf maps carried by perf archive (issue #24): node --perf-basic-prof and CPython 3.12
# -X perf write only /tmp/perf-<pid>.map.  Inject with --perf-map=elf, perf archive, delete
# the map and the stubs, unpack the archive under another HOME: perf script must name every
# sample and callchain frame as it did from the map (sample by sample).  Then node with
# --perf-prof and --perf-basic-prof: jitdump names where the dump has them, map names for
# the rest, the same after the archive round trip.
jt_name="perfmap"; . "$(dirname "$0")/common.sh"
jt_need_perf
command -v bzip2 >/dev/null 2>&1 || jt_skip "perf archive needs bzip2"
J="$root/build/jitanon-inject"
[ -x "$J" ] || jt_skip "build/jitanon-inject not built (make all)"
usehome() { export HOME="$1" PERF_BUILDID_DIR="$1/.debug"; mkdir -p "$1"; }
# perf archive picks the files (what is checked here) and pipes them through bzip2, which
# takes 20 s for node's 95 MB binary on a busy box: a stand-in that stores them keeps the
# selection and the tar layout and skips the compression
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nexec cat\n' > "$tmp/bin/bzip2" && chmod +x "$tmp/bin/bzip2"

# syms DATA: every sample's ip and symbol, callchain frames included ([unknown] stays so);
# only the samples' own ips with G=-G.  perf archive bundles the files that a sample's own
# ip lands in (perf buildid-list --with-hits marks no callchain frame), so a file that only
# callchains reach is not carried: our stubs and jitted files as perf inject's.
# syms DATA OUT: OUT gets ip and symbol, OUT.dso the same with the file (one perf script)
G=""
syms() { perf script -i "$1" -F ip,sym,dso $G 2>/dev/null > "$2.dso"; sed 's/ ([^()]*)$//' "$2.dso" > "$2"; }

# record NAME CALLGRAPH CMD...: perf record of CMD in $tmp/NAME (its pid in $tmp/NAME/pid)
record() {
  d=$tmp/$1 cg=$2; shift 2
  mkdir -p "$d"
  (cd "$d" && perf record -q --call-graph "$cg" -k mono -e cpu-clock -o perf.data -- sh -c 'echo $$ > pid; exec "$@"' sh "$@" >/dev/null 2>&1)
  p=$(cat "$d/pid" 2>/dev/null)
  pids="$pids $p"
  [ -f "$d/perf.data" ] && [ -f "/tmp/perf-$p.map" ]
}

# roundtrip NAME REF [OPTS]: inject NAME's recording with --perf-map=elf, perf archive it,
# delete the map and the stubs, unpack under another HOME and compare perf script with REF
# (what perf named with the map present); $2 lines of REF that are named count as checked
roundtrip() {
  d=$tmp/$1 ref=$2; shift 2
  p=$(cat "$d/pid")
  usehome "$d/home"
  mkdir -p "$d/elf"
  if ! "$J" -i "$d/perf.data" -o "$d/out.data" --perf-map=elf --elf-dir "$d/elf" --stats "$@" 2> "$d/stats"; then
    echo "FAIL perfmap $name: jitanon-inject failed: $(head -3 "$d/stats")"; return 1; fi
  (cd "$d" && PATH="$tmp/bin:$PATH" perf archive out.data >/dev/null 2>&1) || { echo "FAIL perfmap $name: perf archive failed"; return 1; }
  [ -f "/tmp/perf-$p.map" ] && mv "/tmp/perf-$p.map" "$d/map.away"
  rm -rf "$d/elf" "$d/home"
  usehome "$d/elsewhere"
  mkdir -p "$HOME/.debug" && PATH="$tmp/bin:$PATH" tar xjf "$d/out.data.tar.bz2" -C "$HOME/.debug"
  syms "$d/out.data" "$d/archived"
  PATH="$tmp/bin:$PATH" tar tjf "$d/out.data.tar.bz2" > "$d/carried"
  stubnamed=$(grep -v '\[unknown\]' "$d/archived.dso" | grep -c "jitted-$p.map.so")
  rm -rf "$HOME" "$d/out.data.tar.bz2"
  [ -f "$d/map.away" ] && mv "$d/map.away" "/tmp/perf-$p.map" # for the next check of this recording
  total=$(grep -c . "$ref")
  named=$(grep -v '\[unknown\]' "$ref" | grep -c .)
  # A line may differ only where perf archive did not carry the file: a file a callchain
  # alone reaches ([vdso] under clock_gettime, say; see syms) is perf's choice, not ours.
  # A differing line in a JIT file (a map, a stub, a jitted ELF) always fails.
  awk -v carried="$d/carried" -v dsos="$ref.dso" -v arch="$d/archived" '
    BEGIN { while ((getline l < carried) > 0) have[l] = 1 }
    { r = $0; getline dl < dsos; if ((getline a < arch) <= 0) a = "(missing)"
      if (r == a) next
      dso = dl; sub(/^.*\(/, "", dso); sub(/\)$/, "", dso); path = dso; sub(/^\//, "", path)
      in_tar = 0; for (f in have) if (index(f, path "/") == 1) { in_tar = 1; break }
      if (dso ~ /jitted-|perf-[0-9]+\.map|\.map\.so/ || in_tar) { hard++; if (hard <= 2) ex = ex " < " r " > " a }
      else { soft++; sdso[dso] = 1 } }
    END { if ((getline a < arch) > 0) { hard++; ex = ex " (archived has more lines)" }
          s = ""; for (x in sdso) s = s (s == "" ? "" : " ") x
          printf "%d|%d|%s|%s\n", hard, soft, s, ex }' "$ref" > "$d/cmp"
  hard=$(cut -d'|' -f1 "$d/cmp") soft=$(cut -d'|' -f2 "$d/cmp")
  softdsos=$(cut -d'|' -f3 "$d/cmp") ex=$(cut -d'|' -f4- "$d/cmp")
  if [ "$hard" = 0 ]; then
    echo "PASS perfmap $name: map and stubs deleted, from perf archive elsewhere perf script names all $named of $total samples and frames as before ($stubnamed from the stub)$( [ "$soft" = 0 ] || echo "; $soft frames in files perf archive does not carry ($softdsos) left aside")"
  else
    echo "FAIL perfmap $name: after the archive round trip $hard of $total lines differ, e.g.:$ex"
    return 1
  fi
}

cat > "$tmp/busy.js" <<'JS'
function busy(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
function other(n){let a=[];for(let i=0;i<n;i++)a.push(i*2);return a.reduce((x,y)=>x+y,0)}
let t=0; for (let k=0;k<120;k++) t+=busy(2e4)+other(3e3); console.log(t)
JS
# calls, so that some samples land in the trampolines themselves (a dozen or so of 2000):
# perf archive carries the stub only then
cat > "$tmp/busy.py" <<'PY'
def f(x):
    return x
def g(n):
    s = 0
    for i in range(n):
        s += f(i)
    return s
print(g(6000000))
PY

# 1. node --perf-basic-prof: the map only
name="node --perf-basic-prof"
if ! command -v node >/dev/null 2>&1; then echo "SKIP perfmap $name: node not installed (apt-get install nodejs)"
elif ! record node fp node --perf-basic-prof "$tmp/busy.js"; then echo "FAIL perfmap $name: could not record (or no map)"
else
  syms "$tmp/node/perf.data" "$tmp/node/ref"
  roundtrip node "$tmp/node/ref"
fi

# 2. CPython 3.12 -X perf: trampolines in the map, seen in callchains (the pyenv build has
#    no frame pointers: perf unwinds the user stack with DWARF up to the trampoline)
name="CPython 3.12 -X perf"
if ! py=$(jt_python 3.12); then echo "SKIP perfmap $name: no python3.12 (pyenv build under /root/.pyenv/versions/3.12.1)"
elif ! record py dwarf,8192 "$py" -X perf "$tmp/busy.py"; then echo "FAIL perfmap $name: could not record (or no map)"
else
  syms "$tmp/py/perf.data" "$tmp/py/ref"
  if [ "$(grep -c 'py::' "$tmp/py/ref")" -lt 10 ]; then echo "FAIL perfmap $name: perf names fewer than 10 frames py::* from the map"
  else roundtrip py "$tmp/py/ref"; fi
fi

# 3. node --perf-prof --perf-basic-prof: the reference is our usual injection read with the
#    map present (jitdump names where the dump has them, the map for the rest).  V8 puts
#    every piece of code a sample can land in into both, so the run is checked twice:
#    whole, and with its dump cut at half its size (as by a crash) so the functions loaded
#    after the cut are in the map only
name="node --perf-prof --perf-basic-prof"
both() { # NAME MIN_DUMP MIN_MAP: roundtrip of $tmp/NAME against our injection without the option
  d=$tmp/$1 p=$(cat "$tmp/$1/pid")
  usehome "$d/home-ref"
  mkdir -p "$d/elf-ref"
  "$J" -i "$d/perf.data" -o "$d/ref.data" --elf-dir "$d/elf-ref" 2>/dev/null
  syms "$d/ref.data" "$d/ref"
  fromdump=$(grep -v '\[unknown\]' "$d/ref.dso" | grep -c 'jitted-[0-9]*-[0-9]*\.so')
  frommap=$(grep -v '\[unknown\]' "$d/ref.dso" | grep -c "perf-$p.map")
  rm -rf "$d/elf-ref" "$d/home-ref"
  if [ "$fromdump" -lt "$2" ] || [ "$frommap" -lt "$3" ]; then
    echo "FAIL perfmap $name: the recording does not test both (named from the dump $fromdump, from the map $frommap)"
  elif roundtrip "$1" "$d/ref"; then
    echo "PASS perfmap $name: $fromdump samples keep their jitdump names, $frommap named from the map keep theirs"
  fi
}
G=-G # the builtins' jitted files are often reached by callchains only (see syms)
if ! command -v node >/dev/null 2>&1; then echo "SKIP perfmap $name: node not installed"
elif ! record both fp node --perf-prof --perf-basic-prof "$tmp/busy.js"; then echo "FAIL perfmap $name: could not record (or no map)"
else
  both both 10 0
  name="node --perf-prof --perf-basic-prof, the dump cut at half"
  mkdir -p "$tmp/cut" && cp "$tmp/both/perf.data" "$tmp/both/pid" "$tmp/cut/"
  for f in "$tmp/both"/jit-*.dump; do
    head -c $(( $(wc -c < "$f") / 2 )) "$f" > "$tmp/cut/$(basename "$f")"
  done
  # the marker names the dump by its recorded path: --jitdump-dir is not needed when the
  # copy replaces the original
  for f in "$tmp/both"/jit-*.dump; do mv "$tmp/cut/$(basename "$f")" "$f"; done
  both cut 1 10
fi
