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
cp "$tmp/impl.c" "$tmp/impl.cpp"
run() { name=$1; shift
  if out=$("$@" 2>&1); then echo "PASS compile: $name"; else echo "FAIL compile: $name"; printf '%s\n' "$out" | head -20; fi; }
for cc in gcc clang; do
  if ! command -v $cc >/dev/null 2>&1; then echo "SKIP compile: $cc: not installed"; continue; fi
  for v in impl static nostdio twice hooks; do run "$cc $v" $cc $W -I. "$tmp/$v.c" -o "$tmp/$v-$cc"; done
  run "$cc -O3 impl" $cc $W -O3 -I. -c "$tmp/impl.c" -o "$tmp/o3-$cc.o"
  # with POSIX: file output, the marker mmap and the ELF writer threads are compiled in
  run "$cc posix" $cc $W -D_POSIX_C_SOURCE=200809L -I. "$tmp/impl.c" -o "$tmp/posix-$cc"
  run "$cc no SHA-NI" $cc $W -DJITANON_NO_SHA_NI -I. "$tmp/impl.c" -o "$tmp/nosha-$cc"
  run "$cc posix, no threads" $cc $W -D_POSIX_C_SOURCE=200809L -DJITANON_NO_THREADS -I. "$tmp/impl.c" -o "$tmp/nothr-$cc"
done
if command -v g++ >/dev/null 2>&1; then
  run "g++ as C++11" g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. "$tmp/impl.cpp" -o "$tmp/cpp"
else echo "SKIP compile: g++: not installed"; fi
if command -v clang++ >/dev/null 2>&1; then
  run "clang++ as C++11" clang++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. "$tmp/impl.cpp" -o "$tmp/cpp2"
fi
