#!/bin/sh
# Builds the header in every supported configuration, warnings as errors.
# Prints PASS/FAIL/SKIP lines for tests/run.sh to count.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
W="-std=c99 -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes -Wconversion -Wsign-conversion -Wundef"
printf '#define JITANON_IMPLEMENTATION\n#include "jitanon.h"\nint main(void){return (int)jitanon_version() == 0;}\n' > "$tmp/impl.c"
printf '#define JITANON_STATIC\n#define JITANON_IMPLEMENTATION\n#include "jitanon.h"\nint main(void){return (int)jitanon_version() == 0;}\n' > "$tmp/static.c"
printf '#define JITANON_NO_STDIO\n#define JITANON_IMPLEMENTATION\n#include "jitanon.h"\nint main(void){return (int)jitanon_version() == 0;}\n' > "$tmp/nostdio.c"
printf '#include "jitanon.h"\n#include "jitanon.h"\n#define JITANON_IMPLEMENTATION\n#include "jitanon.h"\n#include "jitanon.h"\nint main(void){return (int)jitanon_version() == 0;}\n' > "$tmp/twice.c"
printf '#include <stdlib.h>\nstatic void *my_malloc(size_t n) { return malloc(n); }\nstatic void *my_realloc(void *p, size_t n) { return realloc(p, n); }\nstatic void my_free(void *p) { free(p); }\n#define JITANON_MALLOC(s) my_malloc(s)\n#define JITANON_REALLOC(p, s) my_realloc(p, s)\n#define JITANON_FREE(p) my_free(p)\n#define JITANON_ASSERT(x) ((void)0)\n#define JITANON_IMPLEMENTATION\n#include "jitanon.h"\nint main(void){return (int)jitanon_version() == 0;}\n' > "$tmp/hooks.c"
printf '#define JITANON_COMPAT_0_2\n#define JITANON_IMPLEMENTATION\n#include "jitanon.h"\nint main(void){jitanon_elf_opts o = {0}; jitanon_elf_v8_bias b = JITANON_ELF_V8_BIAS_ON; o.line_bias = b; return (int)(o.line_bias == JITANON_ELF_V8_BIAS_OFF) + (int)(JITANON_ELF_NOTE_V8_BIAS & 0) + (int)JITANON_ELF_V8_BIAS_AUTO;}\n' > "$tmp/compat02.c"
cp "$tmp/impl.c" "$tmp/impl.cpp"
# a C++ includer of the API (the implementation lives in another file) with the strictest
# C++ warnings an embedder may use: the public macros must not trip them
printf '#define JITANON_COMPAT_0_1\n#include "jitanon.h"\nint f(void);\nint f(void) { jitanon_jit_record r; r.id = JITANON_JIT_CODE_LOAD; return jitanon_version() == JITANON_VERSION && jitanon_pack_version(0, 4, r.id) > 0; }\n' > "$tmp/includer.cpp"
SWITCHES="JITANON_NO_UNWIND JITANON_NO_LIVE JITANON_MINIMAL"
run() { name=$1; shift
  if out=$("$@" 2>&1); then echo "PASS compile: $name"; else echo "FAIL compile: $name"; printf '%s\n' "$out" | head -20; fi; }
for cc in gcc clang; do
  if ! command -v $cc >/dev/null 2>&1; then echo "SKIP compile: $cc: not installed"; continue; fi
  for v in impl static nostdio; do run "$cc $v" $cc $W -I. "$tmp/$v.c" -o "$tmp/$v-$cc"; done
  # twice and hooks include a system header before the implementation: in strict mode they
  # must ask for POSIX themselves, or build without it, or stop with a message that says so
  for v in twice hooks; do
    run "$cc $v, -D_POSIX_C_SOURCE" $cc $W -D_POSIX_C_SOURCE=200809L -I. "$tmp/$v.c" -o "$tmp/$v-$cc"
    run "$cc $v, -std=gnu99" $cc $W -std=gnu99 -I. "$tmp/$v.c" -o "$tmp/$v-$cc"
    run "$cc $v, JITANON_NO_POSIX" $cc $W -DJITANON_NO_POSIX -I. "$tmp/$v.c" -o "$tmp/$v-$cc"
    if out=$($cc $W -I. -c "$tmp/$v.c" -o "$tmp/late.o" 2>&1); then echo "FAIL compile: $cc $v, strict: no #error"
    elif printf '%s\n' "$out" | grep -q '#error.*_POSIX_C_SOURCE=200809L.*_GNU_SOURCE.*JITANON_NO_POSIX'
    then echo "PASS compile: $cc $v, strict: #error names the macros"
    else echo "FAIL compile: $cc $v, strict: not the #error"; printf '%s\n' "$out" | head -5; fi
  done
  # strict -std=c99 -pedantic gets what gnu99 gets: same features, and the OS calls work
  for std in gnu99 c99; do
    mkdir "$tmp/$std-$cc"
    run "$cc -std=$std features" $cc $W -std=$std -pedantic -I. tests/features.c -o "$tmp/features-$std-$cc"
    [ -x "$tmp/features-$std-$cc" ] && "$tmp/features-$std-$cc" "$tmp/$std-$cc" > "$tmp/features-$std-$cc.txt"
  done
  if [ -s "$tmp/features-c99-$cc.txt" ] && cmp -s "$tmp/features-gnu99-$cc.txt" "$tmp/features-c99-$cc.txt" &&
     grep -q 'jitdump file 1, atomic output 1, clock 1' "$tmp/features-c99-$cc.txt" &&
     [ "$(cat "$tmp/c99-$cc/out")" = ok ] && ls "$tmp/c99-$cc"/jit-*.dump >/dev/null 2>&1
  then echo "PASS features: $cc -std=c99 -pedantic = -std=gnu99 ($(paste -s -d ' ' "$tmp/features-c99-$cc.txt"))"
  else echo "FAIL features: $cc -std=c99 -pedantic differs from -std=gnu99"; cat "$tmp"/features-*-$cc.txt; fi
  run "$cc -O3 impl" $cc $W -O3 -I. -c "$tmp/impl.c" -o "$tmp/o3-$cc.o"
  run "$cc 0.1 names (JITANON_COMPAT_0_1)" $cc $W -D_POSIX_C_SOURCE=200809L -I. tests/compat01.c -o "$tmp/compat-$cc"
  run "$cc 0.2 names (JITANON_COMPAT_0_2)" $cc $W -Wno-missing-field-initializers -I. "$tmp/compat02.c" -o "$tmp/compat02-$cc"
  # with POSIX: file output, the marker mmap and the ELF writer threads are compiled in
  run "$cc posix" $cc $W -D_POSIX_C_SOURCE=200809L -I. "$tmp/impl.c" -o "$tmp/posix-$cc"
  run "$cc no SHA-NI" $cc $W -DJITANON_NO_SHA_NI -I. "$tmp/impl.c" -o "$tmp/nosha-$cc"
  run "$cc posix, no threads" $cc $W -D_POSIX_C_SOURCE=200809L -DJITANON_NO_THREADS -I. "$tmp/impl.c" -o "$tmp/nothr-$cc"
  run "$cc no threads" $cc $W -DJITANON_NO_THREADS -I. "$tmp/impl.c" -o "$tmp/nothr-$cc"
  # the switches that leave a large part out (doc/embedding.md): C99 and C11, warning-free
  for sw in $SWITCHES; do
    for std in c99 c11; do run "$cc -std=$std -D$sw" $cc $W -std=$std -D$sw -I. "$tmp/impl.c" -o "$tmp/sw-$cc"; done
  done
  # JITANON_MINIMAL: the readers work (tests/minimal.c checks what they read), and no writer,
  # ELF or injector symbol is linked in
  run "$cc JITANON_MINIMAL" $cc $W -I. -Itests tests/minimal.c -o "$tmp/minimal-$cc"
  run "$cc JITANON_MINIMAL reads a jitdump and a cut perf.data header" "$tmp/minimal-$cc" tests/data/node-head.dump
  syms=$(nm "$tmp/minimal-$cc" 2>&1 | grep -c ' T jitanon_\(inject\|elf\|trim\|rangemap\|perf_writer\|jitdump_writer\)\|No such')
  [ "$syms" = 0 ] && echo "PASS features: $cc JITANON_MINIMAL links no writer, ELF or injector" ||
    echo "FAIL features: $cc JITANON_MINIMAL links $syms writer, ELF or injector symbols (or was not built)"
  # JITANON_NO_ZSTD: the decoder is left out and says so; by default it is in
  mkdir "$tmp/nozstd-$cc"
  run "$cc no zstd" $cc $W -DJITANON_NO_ZSTD -I. tests/features.c -o "$tmp/features-nozstd-$cc"
  out=$([ -x "$tmp/features-nozstd-$cc" ] && "$tmp/features-nozstd-$cc" "$tmp/nozstd-$cc")
  f=$(printf '%s\n' "$out" | sed -n 's/^features \([0-9]*\),.*/\1/p')
  if [ -n "$f" ] && [ $((f & 32)) -eq 0 ] && printf '%s\n' "$out" | grep -qx 'zstd 0' &&
     grep -qx 'zstd 1' "$tmp/features-c99-$cc.txt" && [ $(( $(sed -n 's/^features \([0-9]*\),.*/\1/p' "$tmp/features-c99-$cc.txt") & 32 )) -eq 32 ]
  then echo "PASS features: $cc JITANON_NO_ZSTD leaves the zstd decoder out (built in by default)"
  else echo "FAIL features: $cc JITANON_NO_ZSTD"; printf '%s\n' "$out"; fi
  # JITANON_NO_POSIX: the OS calls report the missing feature instead of running
  mkdir "$tmp/noposix-$cc"
  run "$cc no POSIX features" $cc $W -DJITANON_NO_POSIX -I. tests/features.c -o "$tmp/features-noposix-$cc"
  out=$([ -x "$tmp/features-noposix-$cc" ] && "$tmp/features-noposix-$cc" "$tmp/noposix-$cc")
  f=$(printf '%s\n' "$out" | sed -n 's/^features \([0-9]*\), jitdump file 0, atomic output 0, clock 0$/\1/p')
  if [ -n "$f" ] && [ $((f & 3)) -eq 0 ] && [ -z "$(ls -A "$tmp/noposix-$cc")" ]
  then echo "PASS features: $cc JITANON_NO_POSIX has no OS calls"
  else echo "FAIL features: $cc JITANON_NO_POSIX"; fi
done
if command -v g++ >/dev/null 2>&1; then
  run "g++ as C++11" g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. "$tmp/impl.cpp" -o "$tmp/cpp"
  for sw in $SWITCHES; do
    run "g++ as C++11, -D$sw" g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -D$sw -I. "$tmp/impl.cpp" -o "$tmp/cpp"
  done
else echo "SKIP compile: g++: not installed"; fi
if command -v clang++ >/dev/null 2>&1; then
  run "clang++ as C++11" clang++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. "$tmp/impl.cpp" -o "$tmp/cpp2"
fi
for cxx in g++ clang++; do
  command -v $cxx >/dev/null 2>&1 || continue
  run "$cxx includer, -Wold-style-cast" $cxx -std=c++17 -Wall -Wextra -Wpedantic -Werror -Wold-style-cast -Wconversion \
    -Wsign-conversion -Wshadow -I. -c "$tmp/includer.cpp" -o "$tmp/includer-$cxx.o"
done
# An embedder's files (issue #34): examples/jitanon-script.c and the program of
# doc/embedding.md (its ```c blocks in order), as C99 and as C++ with -Wall -Wextra: the
# header first, jitanon_inject_opts_init instead of `= {0}` (C++'s -Wextra flags that)
awk '/^```c$/ { on = 1; next } /^```$/ { on = 0 } on' doc/embedding.md > "$tmp/guide.c"
for cc in "gcc -std=c99" "clang -std=c99" "g++ -x c++ -std=c++11" "clang++ -x c++ -std=c++11"; do
  command -v ${cc%% *} >/dev/null 2>&1 || { echo "SKIP compile: ${cc%% *}: not installed"; continue; }
  for f in examples/jitanon-script.c "$tmp/guide.c"; do
    run "$cc -Wall -Wextra ${f##*/}" $cc -Wall -Wextra -Wpedantic -Werror -I. -c "$f" -o "$tmp/embed.o"
  done
done
# the tools and examples as C++ too (g++ defines _GNU_SOURCE itself: a tool that defines
# it again must not clash)
if command -v g++ >/dev/null 2>&1; then
  for f in tools/*.c examples/*.c; do
    run "g++ -x c++ ${f#*/}" g++ -x c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. -c "$f" -o "$tmp/tool.o"
  done
fi
