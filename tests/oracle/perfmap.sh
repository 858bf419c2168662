#!/bin/sh
# Perf maps carried by perf archive (issue #24): node --perf-basic-prof and CPython 3.12
# -X perf write only /tmp/perf-<pid>.map.  Inject with --perf-map=elf, perf archive, delete
# the map and the stubs, unpack the archive under another HOME: perf script must name every
# sample and callchain frame as it did from the map (sample by sample).  Then node with
# --perf-prof and --perf-basic-prof: jitdump names where the dump has them, map names for
# the rest, the same after the archive round trip.  Last, a probe's map with several
# names at one address (issue #42): perf script, perfparser and symbolize on our output
# name every sample as perf script did with the map.
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
#    whole, and with its dump cut inside a record (as by a crash) so the functions loaded
#    after the cut are in the map only
name="node --perf-prof --perf-basic-prof"
both() { # NAME MIN_DUMP MIN_MAP: roundtrip of $tmp/NAME against our injection without the option
  d=$tmp/$1 p=$(cat "$tmp/$1/pid")
  usehome "$d/home-ref"
  mkdir -p "$d/elf-ref"
  "$J" -i "$d/perf.data" -o "$d/ref.data" --elf-dir "$d/elf-ref" 2>/dev/null
  syms "$d/ref.data" "$d/ref"
  fromdump=$(grep -v '\[unknown\]' "$d/ref.dso" | grep -cE 'jitted-[0-9]+-r?[0-9]+\.so')
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
  # The cut falls inside the LOAD record of a sampled function, chosen so that sampled
  # functions stay on both sides (the most samples on the smaller side): a cut at a fixed
  # size tested nothing when every sample was in code loaded after it.
  name="node --perf-prof --perf-basic-prof, the dump cut in a record"
  mkdir -p "$tmp/cut" && cp "$tmp/both/perf.data" "$tmp/both/pid" "$tmp/cut/"
  f="$tmp/both/jit-$(cat "$tmp/both/pid").dump"
  "$root/build/jitdump-cat" "$f" > "$tmp/cut/records.txt" 2>/dev/null
  at=$(python3 - "$tmp/both/ref.dso" "$tmp/cut/records.txt" <<'PY'
import re, sys
counts = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s*[0-9a-f]+ (.*) \(([^()]*)\)$", line.rstrip("\n"))
    if m and m.group(1) != "[unknown]" and re.search(r"jitted-[0-9]+-r?[0-9]+\.so$", m.group(2)):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
first = {}
for line in open(sys.argv[2], errors="replace"):
    m = re.match(r"\s*([0-9]+) LOAD .* index [0-9]+ (.*)$", line.rstrip("\n"))
    if m and m.group(2) in counts and m.group(2) not in first:
        first[m.group(2)] = int(m.group(1))
names = sorted(first, key=first.get)
best, at = 0, 0
for k in range(1, len(names)):
    before = sum(counts[n] for n in names[:k])
    after = sum(counts[n] for n in names[k:])
    if min(before, after) > best:
        best, at = min(before, after), first[names[k]]
print(at + 20 if best else 0)  # 20 bytes into the record: a cut one, as by a crash
PY
)
  if [ "${at:-0}" -gt 0 ]; then
    # the marker names the dump by its recorded path: the cut copy replaces the original
    head -c "$at" "$f" > "$tmp/cut/$(basename "$f")" && mv "$tmp/cut/$(basename "$f")" "$f"
  fi
  both cut 1 1
fi

# 4. Several names at one address (issue #42): a map listing trampolines under two and
#    three names, code replaced in place (same START, other sizes), entries inside others,
#    duplicates further down the file (tests/t_perfmap.c's TPM_MANY_NAMES, at a page of
#    this process).  Perf 6.1 keeps every line in a tree and names by its shape, not the
#    first, last or longest line; with the map removed, perf script on our output (the
#    stub) must name every sample as it did with the map, and symbolize (the map read in
#    memory) the same.
name="several names at one address"
d=$tmp/names && mkdir -p "$d"
sed -n '/^#define TPM_MANY_NAMES/,/[^\\]$/p' "$root/tests/t_perfmap.c" | sed -n 's/^ *"\(.*\)\\n" *\\*$/\1/p' > "$d/rel.map"
cat > "$d/names.c" <<'C'
/* names REL_MAP OFF...: an RWX region; a counting loop at each OFF (hex, from the
   region's start); /tmp/perf-<pid>.map written from REL_MAP ("OFF SIZE NAME" lines at
   the region); then every loop runs twice.  Prints the pid. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
typedef void (*fn)(void);
int main(int argc, char **argv)
{
    static const unsigned char loop[] = {0xb9, 0, 0, 0, 0x02, 0xff, 0xc9, 0x75, 0xfc, 0xc3}; /* mov ecx; dec; jnz; ret */
    unsigned char *r = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char path[64], line[512];
    FILE *in, *out;
    int i, k;
    if (r == MAP_FAILED || argc < 3) return 1;
    memset(r, 0xc3, 4 * 4096);
    for (i = 2; i < argc; i++) memcpy(r + strtoul(argv[i], NULL, 16), loop, sizeof loop);
    sprintf(path, "/tmp/perf-%d.map", (int)getpid());
    if (!(in = fopen(argv[1], "r")) || !(out = fopen(path, "w"))) return 1;
    while (fgets(line, sizeof line, in)) {
        unsigned long off, size;
        int n = 0;
        if (sscanf(line, "%lx %lx %n", &off, &size, &n) == 2 && n) fprintf(out, "%lx %lx %s", (unsigned long)(r + off), size, line + n);
    }
    fclose(in);
    fclose(out);
    printf("%d\n", (int)getpid());
    fflush(stdout);
    for (k = 0; k < 2; k++)
        for (i = 2; i < argc; i++) ((fn)(r + strtoul(argv[i], NULL, 16)))();
    return 0;
}
C
offs="0 100 200 300 400 420 500 520 600 620 700 800 900 940 960" # the unit test's probes, less 5
p=""
if [ "$(uname -m)" = x86_64 ] && ${CC:-cc} -std=c99 -O1 -o "$d/names" "$d/names.c" 2> "$d/cc.err"; then
  (cd "$d" && perf record -q -e cpu-clock -o perf.data -- ./names rel.map $offs > pid 2>/dev/null)
  p=$(cat "$d/pid" 2>/dev/null); pids="$pids $p"
fi
# ip and name of the samples in the probe's page (its code holds only the loops)
inpage() { perf script -i "$1" -F ip,sym,dso 2>/dev/null | grep -E "(perf-$p\.map|jitted-$p\.map\.so|//anon)\)\$" | sed 's/ ([^()]*)$//'; }
if [ "$(uname -m)" != x86_64 ]; then echo "SKIP perfmap $name: the probe's loops are x86-64 code"
elif [ "$(wc -l < "$d/rel.map")" -lt 19 ]; then echo "FAIL perfmap $name: TPM_MANY_NAMES not found in tests/t_perfmap.c"
elif [ ! -x "$d/names" ]; then echo "FAIL perfmap $name: the probe does not build: $(head -2 "$d/cc.err")"
elif [ -z "$p" ] || [ ! -f "$d/perf.data" ] || [ ! -f "/tmp/perf-$p.map" ]; then echo "FAIL perfmap $name: could not record (or no map)"
else
  inpage "$d/perf.data" > "$d/ref"
  "$J" -i "$d/perf.data" -o "$d/out.data" --perf-map=elf --elf-dir "$d/elf" 2> "$d/inj.err"
  symbolize=$root/build/symbolize
  [ -x "$symbolize" ] && "$symbolize" --folded "$d/perf.data" > "$d/folded" 2> "$d/sym.err"
  mv "/tmp/perf-$p.map" "$d/map.away"
  inpage "$d/out.data" > "$d/stub"
  pp=""
  for c in hotspot-perfparser /usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser /usr/libexec/hotspot-perfparser; do
    if command -v "$c" >/dev/null 2>&1; then pp=$(command -v "$c"); break; fi
  done
  if [ -n "$pp" ]; then # hotspot's parser reads the stub with elfutils
    perf script --ns -i "$d/out.data" -F tid,time,ip,sym,dso 2>/dev/null > "$d/out.script"
    "$pp" --input "$d/out.data" --output "$d/out.pp" 2>/dev/null
    python3 "$root/tests/oracle/hotspot_cmp.py" "$d/out.pp" "$d/out.script" > "$d/pp.cmp"
  fi
  rm -f "$d/map.away"
  total=$(grep -c . "$d/ref")
  shared=$(grep -vc ' fill_[0-9]*$' "$d/ref") # every other probe is at an address of 2-3 lines
  names=$(awk '{ print $NF }' "$d/ref" | sort -u | tr '\n' ' ')
  if [ "$total" -lt 300 ] || [ "$shared" -lt 200 ]; then echo "FAIL perfmap $name: too few samples in the page ($total, $shared at shared addresses)"
  elif ! cmp -s "$d/ref" "$d/stub"; then
    echo "FAIL perfmap $name: $(diff "$d/ref" "$d/stub" | grep -c '^>') of $total samples named otherwise from the stub than from the map, e.g.: $(diff "$d/ref" "$d/stub" | grep '^[<>]' | sort -k3 | uniq | head -4 | tr '\n' ' ')"
  else
    echo "PASS perfmap $name: map removed, perf script names all $total samples in the page as with the map ($shared at addresses of 2-3 lines; perf named: $names)"
  fi
  if [ -z "$pp" ]; then echo "SKIP perfmap $name, perfparser: hotspot-perfparser not installed (apt-get install hotspot)"
  elif grep -q ' 0 of [1-9][0-9]* jitted frames differ' "$d/pp.cmp"; then echo "PASS perfmap $name, perfparser: names from the stub as perf ($(head -1 "$d/pp.cmp"))"
  else echo "FAIL perfmap $name, perfparser: $(head -3 "$d/pp.cmp" | tr '\n' ' ')"; fi
  # symbolize names from the map in memory: per name, as many samples as perf script (its
  # leaves counted for every name of the map, so that one perf never gave shows too)
  if [ ! -x "$symbolize" ]; then echo "SKIP perfmap $name, symbolize: build/symbolize not built"
  else
    awk '$NF != "[unknown]" { n[$NF]++ } END { for (k in n) print k, n[k] }' "$d/ref" | sort > "$d/ref.count"
    cut -d' ' -f3 "$d/rel.map" | sort -u > "$d/map.names"
    awk -v names="$d/map.names" 'BEGIN { while ((getline l < names) > 0) want[l] = 1 }
      { c = $NF; k = $0; sub(/ [0-9]+$/, "", k); sub(/^.*;/, "", k); if (k in want) n[k] += c }
      END { for (k in n) print k, n[k] }' "$d/folded" | sort > "$d/sym.count"
    if [ -s "$d/ref.count" ] && cmp -s "$d/ref.count" "$d/sym.count"; then
      echo "PASS perfmap $name, symbolize: the map in memory gives each of $(wc -l < "$d/ref.count") names as many samples as perf script with the map"
    else echo "FAIL perfmap $name, symbolize: samples per name differ: perf $(tr '\n' ' ' < "$d/ref.count"), symbolize $(tr '\n' ' ' < "$d/sym.count")"; fi
  fi
fi
