#!/bin/sh
# Every tool in tools/ is documented and conventional (issue 42 item 5); no perf needed:
#  - --help and -h exit 0 with a usage on standard output and nothing on standard error;
#    an unknown option exits 2;
#  - doc/<tool>.1 exists, renders without a warning (groff -ww), names every long option
#    --help prints, and make install installs it;
#  - a missing input, a directory given as the input and an output in a directory that does
#    not exist each fail (exit 1) with the system's reason (strerror), not a bare "cannot
#    write" nor "input/output error: cannot open";
#  - symbolize warns about damaged input in jitanon-inject's words: a jitdump with garbage
#    after its last record, a recording whose perf record was killed (data size 0).
# The inputs are tests/jitgen's (a perf.data and its jitdump, written in a blink).
jt_name="tools"; . "$(dirname "$0")/common.sh"
b="$root/build"

# 1. --help, -h, an unknown option; the man page
render() { # PAGE: groff's (or man's) warnings about it, nothing when it renders clean
  if command -v groff >/dev/null 2>&1; then groff -man -ww -z "$1" 2>&1
  else MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null; fi
}
have_render=1
command -v groff >/dev/null 2>&1 || command -v man >/dev/null 2>&1 || have_render=0
[ $have_render = 1 ] || echo "SKIP tools man render: neither groff nor man installed (apt-get install groff-base)"
installs=$(cd "$root" && make -s -n install DESTDIR="$tmp/inst" 2>/dev/null | grep 'share/man/man1')
tools=""
for src in "$root"/tools/*.c; do
  t=${src##*/}; t=${t%.c}
  if [ ! -x "$b/$t" ]; then echo "SKIP tools $t: build/$t not built (make)"; continue; fi
  tools="$tools $t"
  bad=""
  "$b/$t" --help > "$tmp/help" 2> "$tmp/help.err"; rc=$?
  "$b/$t" -h > "$tmp/h" 2>/dev/null; rc2=$?
  [ $rc = 0 ] && [ $rc2 = 0 ] || bad="$bad --help/-h exit $rc/$rc2;"
  head -n 1 "$tmp/help" | grep -q "^usage: $t " || bad="$bad no usage on stdout;"
  [ -s "$tmp/help.err" ] && bad="$bad --help writes to stderr;"
  cmp -s "$tmp/help" "$tmp/h" || bad="$bad -h differs from --help;"
  "$b/$t" --no-such-option x y > "$tmp/u" 2> "$tmp/u.err"; rc=$?
  { [ $rc = 2 ] && [ ! -s "$tmp/u" ] && [ -s "$tmp/u.err" ]; } || bad="$bad unknown option: exit $rc (not 2 on stderr);"
  page="$root/doc/$t.1"
  if [ ! -f "$page" ]; then bad="$bad no doc/$t.1;"
  else
    if [ $have_render = 1 ]; then w=$(render "$page"); [ -z "$w" ] || bad="$bad doc/$t.1 warns: $(echo "$w" | head -1);"; fi
    # the long options --help names, each in the page (\- is how a page writes -)
    for o in $(grep -o -- '--[a-z][a-z0-9-]*' "$tmp/help" | sort -u); do
      sed 's/\\-/-/g' "$page" | grep -q -- "$o" || bad="$bad doc/$t.1 lacks $o;"
    done
    printf '%s\n' "$installs" | grep -q "doc/$t\.1" || bad="$bad make install does not install doc/$t.1;"
  fi
  if [ -z "$bad" ]; then echo "PASS tools $t: --help and -h exit 0 with the usage on stdout; doc/$t.1 renders clean, names every option of --help, is installed"
  else echo "FAIL tools $t:$bad"; fi
done
[ -n "$tools" ] || jt_skip "no tool built (make)"

# 2. the system's reason for a file that cannot be used.  expect TOOL WHAT PATTERN CMD...:
#    CMD fails with exit 1 ($rc_want: 127 for a program that cannot be run, as a shell
#    says it) and a message matching PATTERN (grep -E), without "input/output error"
if [ -x "$b/jitgen" ]; then
  "$b/jitgen" --loads 40 --samples 300 --seed 5 --quiet "$tmp/g" >/dev/null 2>&1
  data="$tmp/g/perf.data"; dump=$(ls "$tmp"/g/jit-*.dump 2>/dev/null | head -1)
else data=""; dump=""; echo "SKIP tools outputs: build/jitgen not built (make): no input to write from"; fi
missing="$tmp/missing.data"; nodir="$tmp/no/such"
mkdir "$tmp/out"
expect() {
  t=$1; what=$2; pat=$3; shift 3
  [ -x "$b/$t" ] || return 0
  "$@" > /dev/null 2> "$tmp/err" < /dev/null; rc=$?
  if [ $rc = "${rc_want:-1}" ] && grep -Eq "$pat" "$tmp/err" && ! grep -q 'input/output error' "$tmp/err"; then ok="$ok $t:$what"
  else fails="$fails
FAIL tools $t $what: exit $rc: $(head -n 2 "$tmp/err" | tr '\n' ' ')"; fi
}
enoent="No such file or directory"
ok=""; fails=""
expect jitanon-inject missing "^jitanon-inject: cannot open $missing: $enoent\$" "$b/jitanon-inject" -i "$missing" -o "$tmp/out/x.data"
expect symbolize missing "^symbolize: cannot open $missing: $enoent\$" "$b/symbolize" "$missing"
expect perfdata-cat missing "^perfdata-cat: cannot open $missing: $enoent\$" "$b/perfdata-cat" "$missing"
expect jitdump-cat missing "^jitdump-cat: cannot open $missing: $enoent\$" "$b/jitdump-cat" "$missing"
expect jitdump-elf missing "^jitdump-elf: cannot open $missing: $enoent\$" "$b/jitdump-elf" "$missing" "$tmp/out"
rc_want=127 expect jitanon-record missing "$tmp/missing-prog: $enoent" "$b/jitanon-record" -o "$tmp/out/r.data" -- "$tmp/missing-prog"
expect jitanon-inject directory "is a directory" "$b/jitanon-inject" -i "$tmp/out" -o "$tmp/out/x.data"
expect symbolize directory "is a directory" "$b/symbolize" "$tmp/out"
expect perfdata-cat directory "is a directory" "$b/perfdata-cat" "$tmp/out"
expect jitdump-cat directory "is a directory" "$b/jitdump-cat" "$tmp/out"
expect jitdump-elf directory "is a directory" "$b/jitdump-elf" "$tmp/out" "$tmp/out"
expect jitanon-record output "$nodir.*$enoent" "$b/jitanon-record" -o "$nodir/x.data" -- true
if [ -n "$data" ]; then
  expect jitanon-inject output "cannot write $nodir/x.data: .*$enoent" "$b/jitanon-inject" -N -i "$data" -o "$nodir/x.data"
  expect symbolize output-svg "cannot write $nodir/x.svg: .*$enoent" "$b/symbolize" --svg "$nodir/x.svg" "$data"
  expect symbolize output-pprof "cannot write $nodir/x.pb: .*$enoent" "$b/symbolize" --pprof "$nodir/x.pb" "$data"
  expect perfdata-cat output "cannot write $nodir/x.data: .*$enoent" "$b/perfdata-cat" --copy "$nodir/x.data" "$data"
  expect jitdump-elf output "$nodir.*$enoent" "$b/jitdump-elf" "$dump" "$nodir"
  expect symbolize output-is-dir "cannot write $tmp/out: Is a directory" "$b/symbolize" --svg "$tmp/out" "$data"
fi
if [ -z "$fails" ]; then echo "PASS tools errors: every message names the system's reason ($(echo $ok | wc -w) cases:$ok)"
else printf '%s\n' "$fails" | sed 1d; fi

# a device as the output is written in place: no room beside it is needed (as a user,
# /dev is not writable)
if [ -n "$data" ] && [ -x "$b/jitanon-inject" ] && [ -x "$b/symbolize" ]; then
  if "$b/jitanon-inject" -N -i "$data" -o /dev/null 2>"$tmp/err" && "$b/symbolize" --svg /dev/null "$data" >/dev/null 2>>"$tmp/err"; then
    echo "PASS tools output /dev/null: jitanon-inject -o and symbolize --svg write it ($(id -un))"
  else echo "FAIL tools output /dev/null: $(head -n 2 "$tmp/err" | tr '\n' ' ')"; fi
fi

# 3. damaged input: symbolize says what jitanon-inject says (its lines, the tool's name aside)
same_warning() { # NAME PATTERN INPUT: the lines matching PATTERN of both tools on INPUT
  "$b/jitanon-inject" -N -i "$3" -o "$tmp/out/inj.data" 2>&1 >/dev/null | grep -E "$2" | sed 's/^jitanon-inject: //' > "$tmp/w.inj"
  "$b/symbolize" "$3" 2>&1 >/dev/null | grep -E "$2" | sed 's/^symbolize: //' > "$tmp/w.sym"
  "$b/symbolize" --folded "$3" 2>&1 >/dev/null | grep -E "$2" | sed 's/^symbolize: //' > "$tmp/w.sym2"
  if [ "$(wc -l < "$tmp/w.inj")" = 1 ] && cmp -s "$tmp/w.inj" "$tmp/w.sym" && cmp -s "$tmp/w.inj" "$tmp/w.sym2"; then
    echo "PASS tools symbolize damaged $1: the warning jitanon-inject prints: $(cut -c 1-100 "$tmp/w.inj")..."
  else echo "FAIL tools symbolize damaged $1: jitanon-inject: '$(cat "$tmp/w.inj")'; symbolize: '$(cat "$tmp/w.sym")'"; fi
}
if [ -n "$data" ] && [ -x "$b/symbolize" ] && [ -x "$b/jitanon-inject" ]; then
  cp "$dump" "$tmp/clean.dump"
  head -c 100 /dev/zero >> "$dump"
  same_warning jitdump 'is damaged or cut short at record' "$data"
  cp "$tmp/clean.dump" "$dump"
  # a killed perf record: its header's data size (at byte 48) is 0
  cp "$data" "$tmp/killed.data"
  printf '\000\000\000\000\000\000\000\000' | dd of="$tmp/killed.data" bs=1 seek=48 conv=notrunc 2>/dev/null
  same_warning killed 'perf.data input is damaged' "$tmp/killed.data"
fi
