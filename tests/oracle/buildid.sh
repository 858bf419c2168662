#!/bin/sh
# Profiles that survive (issue #14): the output's build-id table and perf's build-id cache.
# Records node, injects (per-function files, one file per process, and perf inject --jit
# as the proof that the checks test what perf does), deletes the jitted files, and checks
# that perf report still names every JIT function it named before; that perf archive of
# the output, unpacked under another HOME's .debug, names them too; then the consumers of
# both layouts (report, script, annotate, buildid-list, addr2line, gdb) and hostile caches.
jt_name="buildid"; . "$(dirname "$0")/common.sh"
immutable=""
jt_cleanup_hook() {
  [ -z "$immutable" ] || chattr -i "$immutable" 2>/dev/null
  chmod -R u+w "$tmp" 2>/dev/null
}
# every run gets a HOME of its own: its .debug is the cache perf reads (perf 6.1 reads
# buildid.dir from its config, not $PERF_BUILDID_DIR; we honour both, so keep them equal)
usehome() { export HOME="$1" PERF_BUILDID_DIR="$1/.debug"; mkdir -p "$1"; }
usehome "$tmp/home0"
J="$root/build/jitanon-inject"
jt_need_record
jt_need node "apt-get install nodejs"

mkdir "$tmp/rec"
cat > "$tmp/rec/w.js" <<'EOF'
function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)%7;return s}
function g(n){let a=[];for(let i=0;i<n;i++)a.push(i*2);return a.reduce((x,y)=>x+y,0)}
function h(n){let o={};for(let i=0;i<n;i++)o['k'+(i%50)]=i;return Object.keys(o).length}
let t=0; for (let k=0;k<300;k++) t+=f(2e4)+g(3e3)+h(2e3); console.log(t)
EOF
(cd "$tmp/rec" && perf record -q -k mono -e cpu-clock -o perf.data node --perf-prof w.js >/dev/null 2>&1)
if [ ! -f "$tmp/rec/perf.data" ] || ! ls "$tmp/rec"/jit-*.dump >/dev/null 2>&1; then
  echo "FAIL buildid: could not record node --perf-prof"; exit 0; fi
rm -f "$tmp/rec"/isolate-*.log

# names FILE: the JIT functions perf report names (jitted DSOs), one per line, sorted
# (an unresolved address, 0x..., is no name)
names() { perf report -i "$1" --stdio --sort dso,sym 2>/dev/null | grep ' jitted-' | sed 's/.*\[\.\] //; s/ *$//' | grep -v '^0x' | sort -u; }
# archive DATA NAME: perf archive, unpack under a fresh HOME's .debug, then names with
# the original cache moved away
archive_names() {
  (cd "$(dirname "$1")" && perf archive "$(basename "$1")" >/dev/null 2>&1) || return 1
  h=$tmp/elsewhere-$2
  mkdir -p "$h/.debug" && tar xjf "$1.tar.bz2" -C "$h/.debug" || return 1
  mv "$HOME" "$HOME.away"
  (usehome "$h"; names "$1"; perf report -i "$1" --stdio --sort sym 2>/dev/null | grep -v '^#' | grep . > "$tmp/$2.archived-report") > "$tmp/$2.archived"
  mv "$HOME.away" "$HOME"
}

# survive NAME DATA FILES...: names before, after deleting FILES, and from perf archive
survive() {
  name=$1 data=$2
  shift 2
  names "$data" > "$tmp/$name.before"
  n=$(grep -c . "$tmp/$name.before")
  if [ "$n" -lt 2 ]; then echo "FAIL buildid $name: perf report names only $n JIT functions before deleting the files"; return; fi
  rm -rf "$@"
  names "$data" > "$tmp/$name.after"
  if cmp -s "$tmp/$name.before" "$tmp/$name.after"; then
    echo "PASS buildid $name: jitted files deleted, perf report still names all $n JIT functions (from the build-id cache)"
  else echo "FAIL buildid $name: after deleting the jitted files perf report lost: $(comm -23 "$tmp/$name.before" "$tmp/$name.after" | head -5 | tr '\n' ' ')"; fi
  if ! command -v bzip2 >/dev/null 2>&1; then echo "SKIP buildid $name: perf archive needs bzip2"; return; fi
  if archive_names "$data" "$name" && cmp -s "$tmp/$name.before" "$tmp/$name.archived"; then
    echo "PASS buildid $name: perf archive, unpacked under another HOME's .debug, names all $n JIT functions"
  else echo "FAIL buildid $name: perf archive elsewhere lost: $(comm -23 "$tmp/$name.before" "$tmp/$name.archived" 2>/dev/null | head -5 | tr '\n' ' ')"; fi
}

# 1. perf inject --jit: proof that the checks see what perf does (jitted files next to the dump)
cp -r "$tmp/rec" "$tmp/perf"
usehome "$tmp/home-perf"
perf inject --jit -i "$tmp/perf/perf.data" -o "$tmp/perf/out.data" 2>/dev/null
survive "perf inject --jit" "$tmp/perf/out.data" "$tmp/perf"/jitted-*.so

# 2. ours, every layout, each from an empty cache
for layout in function process region; do
  usehome "$tmp/home-$layout"
  mkdir -p "$tmp/$layout/elf"
  if ! "$J" -i "$tmp/rec/perf.data" -o "$tmp/$layout/out.data" --elf=$layout --elf-dir "$tmp/$layout/elf" --stats \
      2> "$tmp/$layout/stats"; then echo "FAIL buildid --elf=$layout: jitanon-inject failed: $(head -3 "$tmp/$layout/stats")"; continue; fi
  files=$(ls "$tmp/$layout/elf" | wc -l)
  listed=$(perf buildid-list -i "$tmp/$layout/out.data" 2>/dev/null | grep -c "$tmp/$layout/elf/jitted-")
  links=$(find "$HOME/.debug/.build-id" -type l 2>/dev/null | wc -l)
  if [ "$files" -gt 0 ] && [ "$listed" = "$files" ] && [ "$links" -ge "$files" ]; then
    echo "PASS buildid --elf=$layout: build-id table and cache list every ELF file ($files)"
  else echo "FAIL buildid --elf=$layout: $files files, $listed in the build-id table, $links cache links"; fi
  cp -r "$tmp/$layout/elf" "$tmp/$layout/keep" # for the consumer checks below
  survive "--elf=$layout" "$tmp/$layout/out.data" "$tmp/$layout/elf"
  rm -rf "$tmp/$layout/elf" && mv "$tmp/$layout/keep" "$tmp/$layout/elf"
done
# region files archived: perf report names what it names with per-function files archived
# the same way, with the same percentages (--sort sym: file names left out)
f="$tmp/--elf=function" r="$tmp/--elf=region"
if [ -s "$f.archived" ] && cmp -s "$f.archived" "$r.archived" && cmp -s "$f.archived-report" "$r.archived-report"; then
  echo "PASS buildid --elf=region: after perf archive elsewhere, region layout ($(ls "$tmp/region/elf" | wc -l) files, $(jt_regions "$tmp/region/elf") of them regions) and per-function files ($(ls "$tmp/function/elf" | wc -l)) give the same $(grep -c . "$f.archived") JIT names and perf report --sort sym ($(grep -c . "$f.archived-report") lines)"
else echo "FAIL buildid --elf=region: archived region files and per-function files differ: names $(diff "$f.archived" "$r.archived" | grep -c '^[<>]') lines, report $(diff "$f.archived-report" "$r.archived-report" | head -3 | tr '\n' ' ')"; fi

# 3. pipe mode: HEADER_BUILD_ID records before the MMAP2s that name the files
usehome "$tmp/home-pipe"
mkdir -p "$tmp/pipe/elf"
"$root/build/perfdata-cat" --copy "$tmp/pipe/in.data" --pipe "$tmp/rec/perf.data" >/dev/null 2>&1
if "$J" --elf-dir "$tmp/pipe/elf" < "$tmp/pipe/in.data" > "$tmp/pipe/out.data" 2>/dev/null; then
  names "$tmp/pipe/out.data" > "$tmp/pipe.before"
  rm -rf "$tmp/pipe/elf"
  names "$tmp/pipe/out.data" > "$tmp/pipe.after"
  if [ "$(grep -c . "$tmp/pipe.before")" -ge 2 ] && cmp -s "$tmp/pipe.before" "$tmp/pipe.after"; then
    echo "PASS buildid pipe mode: files deleted, perf report -i - still names all $(grep -c . "$tmp/pipe.before") JIT functions"
  else echo "FAIL buildid pipe mode: before $(grep -c . "$tmp/pipe.before") names, lost: $(comm -23 "$tmp/pipe.before" "$tmp/pipe.after" | head -3 | tr '\n' ' ')"; fi
else echo "FAIL buildid pipe mode: jitanon-inject failed"; fi

# 3b. issue #14 item 3: the build-id in the MMAP2 records instead of the table.  perf 6.1
#     resolves from the cache with it (and not without either: the control)
if command -v python3 >/dev/null 2>&1; then
  usehome "$tmp/home-mm"
  mkdir -p "$tmp/mm/elf"
  "$J" -i "$tmp/rec/perf.data" -o "$tmp/mm/out.data" --elf-dir "$tmp/mm/elf" 2>/dev/null
  python3 "$root/tests/oracle/mmap2_build_id.py" "$tmp/mm/out.data" "$tmp/mm/mmap.data" mmap > "$tmp/mm/n"
  python3 "$root/tests/oracle/mmap2_build_id.py" "$tmp/mm/out.data" "$tmp/mm/none.data" none > /dev/null
  names "$tmp/mm/out.data" > "$tmp/mm.before"
  rm -rf "$tmp/mm/elf"
  names "$tmp/mm/mmap.data" > "$tmp/mm.mmap"; names "$tmp/mm/none.data" > "$tmp/mm.none"
  nb=$(grep -c . "$tmp/mm.before"); nn=$(grep -c . "$tmp/mm.none")
  if [ "$nb" -ge 2 ] && cmp -s "$tmp/mm.before" "$tmp/mm.mmap" && [ "$nn" -lt "$nb" ]; then
    echo "PASS buildid MMAP2 build-ids: with them instead of the table ($(cut -d' ' -f1 "$tmp/mm/n") records), perf report names all $nb functions from the cache; without either, $nn"
  else echo "FAIL buildid MMAP2 build-ids: $nb names before, $(grep -c . "$tmp/mm.mmap") with MMAP2 build-ids, $nn with neither"; fi
else echo "SKIP buildid MMAP2 build-ids: python3 not installed"; fi

# 4. -N: no cache, and then the names are gone with the files (the cache is what keeps them)
usehome "$tmp/home-N"
mkdir -p "$tmp/N/elf"
"$J" -N -i "$tmp/rec/perf.data" -o "$tmp/N/out.data" --elf-dir "$tmp/N/elf" 2>/dev/null
rm -rf "$tmp/N/elf"
if [ ! -e "$HOME/.debug" ] && [ "$(names "$tmp/N/out.data" | grep -c .)" -lt "$(grep -c . "$tmp/--elf=function.before")" ]; then
  echo "PASS buildid -N: no cache written, and without the files perf report loses the names"
else echo "FAIL buildid -N: cache dir $(ls -d "$HOME/.debug" 2>/dev/null) / names $(names "$tmp/N/out.data" | grep -c .)"; fi

# 5. consumers of both layouts (issue #14 item 4): the same answers from per-function and
#    per-process files
usehome "$tmp/home-function"
perf report -i "$tmp/function/out.data" --stdio --sort sym 2>/dev/null | grep -v '^#' | grep . > "$tmp/c.report.function"
usehome "$tmp/home-process"
perf report -i "$tmp/process/out.data" --stdio --sort sym 2>/dev/null | grep -v '^#' | grep . > "$tmp/c.report.process"
if [ -s "$tmp/c.report.function" ] && cmp -s "$tmp/c.report.function" "$tmp/c.report.process"; then
  echo "PASS buildid consumers: perf report --sort sym is identical for both layouts"
else echo "FAIL buildid consumers: perf report --sort sym differs between layouts"; fi
for l in function process; do
  usehome "$tmp/home-$l"
  perf script -i "$tmp/$l/out.data" -F tid,time,ip,sym,symoff 2>/dev/null > "$tmp/c.script.$l"
done
if [ -s "$tmp/c.script.function" ] && cmp -s "$tmp/c.script.function" "$tmp/c.script.process"; then
  echo "PASS buildid consumers: perf script (ip, sym, symoff) is identical for both layouts"
else echo "FAIL buildid consumers: perf script differs between layouts: $(diff "$tmp/c.script.function" "$tmp/c.script.process" | grep -c '^[<>]') lines"; fi
for l in function process; do
  usehome "$tmp/home-$l"
  perf buildid-list -i "$tmp/$l/out.data" 2>/dev/null | grep "/jitted-" | sort > "$tmp/c.bl.$l"
  bad=0; k=0
  for so in $(ls "$tmp/$l/elf" | head -20); do
    want=$(readelf -n "$tmp/$l/elf/$so" 2>/dev/null | sed -n 's/.*Build ID: //p')
    grep -q "^$want $tmp/$l/elf/$so\$" "$tmp/c.bl.$l" || bad=$((bad + 1)); k=$((k + 1))
  done
  if [ "$k" -gt 0 ] && [ "$bad" = 0 ]; then echo "PASS buildid consumers --elf=$l: perf buildid-list gives each file's own build-id ($k checked)"
  else echo "FAIL buildid consumers --elf=$l: $bad of $k files listed with another build-id"; fi
done
# Source lines: node 20 writes unusable file names into DEBUG_INFO for a script run from a
# file (bytes like "v\xe3\x03"), so a jitgen recording with debug info for every function
# (files modN.js) shows what perf annotate -l, addr2line and gdb make of the line tables.
mkdir -p "$tmp/gen"
"$root/build/jitgen" --quiet --loads 300 --samples 5000 --debug-every 1 "$tmp/gen" >/dev/null 2>&1
for l in function process; do
  usehome "$tmp/home-gen-$l"
  mkdir -p "$tmp/gen/$l"
  "$J" -i "$tmp/gen/perf.data" -o "$tmp/gen/$l.data" --elf=$l --elf-dir "$tmp/gen/$l" 2>/dev/null
  top=$(perf report -i "$tmp/gen/$l.data" --stdio --sort dso,sym 2>/dev/null | grep -m1 ' jitted-' | sed 's/.*\[\.\] //; s/ *$//')
  perf annotate -i "$tmp/gen/$l.data" --stdio -l "$top" 2>/dev/null > "$tmp/c.annotate.$l"
  ins=$(grep -c '^ *[0-9.]* : *[0-9a-f]*:' "$tmp/c.annotate.$l"); src=$(grep -c 'mod[0-9]*\.js:[0-9]' "$tmp/c.annotate.$l")
  sed -n '/Sorted summary/,/Percent/p' "$tmp/c.annotate.$l" | grep 'js:' > "$tmp/c.summary.$l"
  if [ "$ins" -gt 0 ] && [ "$src" -gt 0 ]; then
    echo "PASS buildid consumers --elf=$l: perf annotate -l shows the hottest function with source lines ($ins instructions, $src mentions of modN.js:line)"
  else echo "FAIL buildid consumers --elf=$l: perf annotate -l: $ins instructions, $src source lines for '$top'"; fi
  if command -v addr2line >/dev/null 2>&1 && command -v gdb >/dev/null 2>&1; then
    so=$(perf report -i "$tmp/gen/$l.data" --stdio --sort dso,sym 2>/dev/null | grep -m1 ' jitted-' | awk '{print $2}')
    addr=$(readelf --debug-dump=decodedline "$tmp/gen/$l/$so" 2>/dev/null | awk '$1 ~ /\.js$/ && $3 ~ /^0x/ {print $3; exit}')
    a2l=$(addr2line -f -e "$tmp/gen/$l/$so" "$addr" 2>/dev/null | tr '\n' ' ')
    gdbl=$(gdb -batch -nx -ex "info line *$addr" "$tmp/gen/$l/$so" 2>/dev/null | tr '\n' ' ')
    echo "$a2l" | sed 's/jitted-[0-9.-]*\.so//' > "$tmp/c.a2l.$l"
    case "$a2l|$gdbl" in
    *'JS:'*mod*.js:[0-9]*'|'*'Line '[0-9]*' of "'*mod*.js'"'*) echo "PASS buildid consumers --elf=$l: addr2line and gdb give the function and its source line at $addr ($a2l)" ;;
    *) echo "FAIL buildid consumers --elf=$l: at $addr addr2line '$a2l' gdb '$gdbl'" ;;
    esac
  else echo "SKIP buildid consumers --elf=$l: addr2line or gdb not installed (apt-get install binutils gdb)"; fi
done
if [ -s "$tmp/c.summary.function" ] && cmp -s "$tmp/c.summary.function" "$tmp/c.summary.process"; then
  echo "PASS buildid consumers: perf annotate -l gives the same source-line summary for both layouts"
else echo "FAIL buildid consumers: perf annotate -l source-line summaries differ between layouts"; fi

# 6. hostile caches.  a) the recording names the ELF directory with ".." components: the
#    cache mirrors it by name and nothing lands outside the cache
usehome "$tmp/home-dots"
mkdir -p "$tmp/dots/a/b"
"$J" -i "$tmp/rec/perf.data" -o "$tmp/dots/out.data" --elf=process --elf-dir "$tmp/dots/a/b/../../a/../a/b/.." 2>/dev/null
outside=$(find "$tmp/dots" -name 'jitted-*.so' -type d | head -3)
inside=$(find "$HOME/.debug" -name elf -type f | wc -l)
if [ -z "$outside" ] && [ "$inside" = 1 ] && [ -d "$HOME/.debug$tmp/dots/a/jitted-"*.so ]; then
  echo "PASS buildid hostile: a path with .. components is cached under its resolved name, inside the cache"
else echo "FAIL buildid hostile: .. path: outside '$outside', inside $inside"; fi
# b) planted symlinks inside the cache (.build-id and the mirrored directory) point outside
usehome "$tmp/home-planted"
mkdir -p "$tmp/outside1" "$tmp/outside2" "$HOME/.debug$tmp/planted" "$tmp/planted/elf"
ln -s "$tmp/outside1" "$HOME/.debug/.build-id"
ln -s "$tmp/outside2" "$HOME/.debug$tmp/planted/elf"
"$J" -i "$tmp/rec/perf.data" -o "$tmp/planted/out.data" --elf=process --elf-dir "$tmp/planted/elf" 2> "$tmp/planted/err"
rc=$?
leaked=$(find "$tmp/outside1" "$tmp/outside2" -mindepth 1 | head -3)
if [ "$rc" = 0 ] && [ -s "$tmp/planted/out.data" ] && [ -z "$leaked" ] && grep -q 'build-id cache' "$tmp/planted/err"; then
  echo "PASS buildid hostile: planted symlinks in the cache are not followed (warning, output written)"
else echo "FAIL buildid hostile: planted symlinks: rc $rc, outside: $leaked err: $(head -2 "$tmp/planted/err")"; fi
# c) a read-only cache: a clear warning, the output still written
usehome "$tmp/home-ro"
mkdir -p "$HOME/.debug" "$tmp/ro/elf"
ro=""
if [ "$(id -u)" != 0 ]; then chmod 555 "$HOME/.debug" && ro=chmod
elif command -v chattr >/dev/null 2>&1 && chattr +i "$HOME/.debug" 2>/dev/null; then immutable="$HOME/.debug"; ro=chattr
fi
if [ -z "$ro" ]; then echo "SKIP buildid hostile: cannot make a read-only directory here (root without chattr +i)"
else
  "$J" -i "$tmp/rec/perf.data" -o "$tmp/ro/out.data" --elf-dir "$tmp/ro/elf" --stats 2> "$tmp/ro/err"
  rc=$?
  if [ "$rc" = 0 ] && [ -s "$tmp/ro/out.data" ] && [ -z "$(ls -A "$HOME/.debug")" ] &&
     [ "$(grep -c 'build-id cache.*not writable' "$tmp/ro/err")" = 1 ] && names "$tmp/ro/out.data" | grep -q 'JS:'; then
    echo "PASS buildid hostile: read-only cache ($ro): one clear warning, output written and resolves"
  else echo "FAIL buildid hostile: read-only cache: rc $rc, $(grep -c 'not writable' "$tmp/ro/err") warnings, cache: $(ls -A "$HOME/.debug" | head -3 | tr '\n' ' ')"; fi
  [ -z "$immutable" ] || { chattr -i "$immutable"; immutable=""; }
fi
