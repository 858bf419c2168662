# jitanon - build, test, demo, fuzz, bench, install.
# CFLAGS/CPPFLAGS/LDFLAGS are yours; the flags we insist on live in JITANON_* variables.

CC       ?= cc
CXX      ?= c++
FUZZ_CC  ?= clang
FUZZ_TIME ?= 60
PREFIX   ?= /usr/local
DESTDIR  ?=
Q        := $(if $(V),,@)

CFLAGS   ?= -O2 -g
JITANON_WARN := -std=c99 -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ifeq ($(ZLIB),1)
JITANON_DEFS := -DJITANON_USE_ZLIB
JITANON_LIBS := -lz
endif
ALL_CFLAGS := $(JITANON_WARN) $(JITANON_DEFS) $(CPPFLAGS) $(CFLAGS) -I.

# libzstd is the reference of the zstd tests and fuzzing only (never of the header or
# the tools): used when zstd.h is there.
HAVE_LIBZSTD := $(shell printf '\043include <zstd.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
ZSTD_REF_DEFS = $(if $(and $(filter zstd,$(1)),$(HAVE_LIBZSTD)),-DJT_LIBZSTD)
ZSTD_REF_LIBS = $(if $(and $(filter zstd,$(1)),$(HAVE_LIBZSTD)),-lzstd)

HEADER   := jitanon.h
# tools/: the command-line tools we ship (make install); examples/: programs that show how
# a profiler or a JIT embeds the header (the demo's JIT among them); tests/jitgen.c: the
# generator of synthetic recordings the tests and benchmarks run.
TOOLS    := $(patsubst tools/%.c,build/%,$(wildcard tools/*.c))
EXAMPLES := $(patsubst examples/%.c,build/%,$(wildcard examples/*.c)) build/jitgen
FUZZERS  := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_DEPS := $(wildcard fuzz/*.h tests/*.h) # shared by the harnesses (tests/elfread.h: the ELF reader)

.PHONY: all test check demo fuzz fuzz-run bench install uninstall clean compile-matrix unit

# The JVMTI agent (tools/jvmti/) is built when a JDK's include/jvmti.h is found:
# JAVA_HOME, else the JDK of the javac on PATH, else /usr/lib/jvm/default-java.
JDK_HOME ?= $(or $(JAVA_HOME),$(shell j=$$(readlink -f "$$(command -v javac 2>/dev/null)" 2>/dev/null) && [ -n "$$j" ] && dirname "$$(dirname "$$j")"),/usr/lib/jvm/default-java)
JVMTI_AGENT := $(if $(wildcard $(JDK_HOME)/include/jvmti.h),build/libjitanon-jvmti.so)

all: $(TOOLS) $(EXAMPLES) $(JVMTI_AGENT)

build:
	$(Q)mkdir -p build

# each binary says its name as its build starts: make test compiles for minutes
say = $(if $(Q),@echo "  $(1)$(if $(2), ($(2)))")
define build_program
	$(call say,CC      $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) $(JITANON_LIBS)
endef
build/%: tools/%.c $(HEADER) | build
	$(build_program)
build/%: examples/%.c $(HEADER) | build
	$(build_program)
build/jitgen: tests/jitgen.c $(HEADER) | build
	$(build_program)
# jitanon-script prints C++ names demangled, as perf 6.1 does: libstdc++'s __cxa_demangle
# when it links (the header itself stays libc-only)
HAVE_LIBSTDCXX := $(shell printf 'int main(void){return 0;}\n' | $(CC) -x c -o /dev/null - -lstdc++ >/dev/null 2>&1 && echo 1)
# (symbolize and jitanon-record too: tools/symbols.h)
define build_demangling
	$(call say,CC      $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(if $(HAVE_LIBSTDCXX),-DJITANON_CXA_DEMANGLE) -o $@ $< $(LDFLAGS) $(JITANON_LIBS) $(if $(HAVE_LIBSTDCXX),-lstdc++)
endef
build/jitanon-script: examples/jitanon-script.c tools/symbols.h $(HEADER) | build
	$(build_demangling)
build/symbolize: tools/symbolize.c $(HEADER) | build
	$(build_demangling)
build/jitanon-record: tools/jitanon-record.c $(HEADER) | build
	$(build_demangling)

build/symbolize: tools/flamegraph.h tools/frames.h tools/ixhash.h tools/pprof.h tools/symbols.h
# jitanon-record and jitanon-inject share the injection options (tools/inject_cli.h).
build/jitanon-record: tools/flamegraph.h tools/frames.h tools/inject_cli.h tools/ixhash.h tools/symbols.h
build/jitanon-inject: tools/inject_cli.h
# what the tools say of a file on their command line they cannot use (tools/cli_files.h)
build/jitanon-inject build/symbolize build/perfdata-cat build/jitdump-cat build/jitdump-elf: tools/cli_files.h
build/libjitanon-jvmti.so: tools/jvmti/jitanon-jvmti.c $(HEADER) | build
	$(call say,CC      $@,the JVMTI agent)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -isystem $(JDK_HOME)/include -isystem $(JDK_HOME)/include/linux -o $@ $< $(LDFLAGS) $(JITANON_LIBS) -pthread

# Unit tests and fuzz replays run under ASan+UBSan; the compile matrix checks every
# supported configuration warning-free.
build/test_main: tests/test_main.c tests/*.c tests/*.h tools/pprof.h tools/ixhash.h $(HEADER) | build
	$(call say,CC      $@,unit tests; ASan+UBSan)
	$(Q)$(CC) $(JITANON_WARN) $(JITANON_DEFS) -D_POSIX_C_SOURCE=200809L -O1 -g $(SANFLAGS) -I. -o $@ tests/test_main.c $(JITANON_LIBS)

# The zstd decoder against libzstd (the only binary besides the zstd fuzz harness that
# links it; without zstd.h it prints SKIP).
build/test_zstd_diff: tests/zstd_diff.c $(HEADER) | build
	$(call say,CC      $@,zstd against libzstd)
	$(Q)$(CC) $(JITANON_WARN) -D_POSIX_C_SOURCE=200809L $(call ZSTD_REF_DEFS,zstd) -O1 -g $(SANFLAGS) -I. -o $@ tests/zstd_diff.c $(call ZSTD_REF_LIBS,zstd)

# The injector's writer threads, under ThreadSanitizer (tests/run.sh runs the thread tests).
build/test_tsan: tests/test_main.c tests/*.c tests/*.h $(HEADER) | build
	$(call say,CC      $@,unit tests; ThreadSanitizer)
	$(Q)$(CC) $(JITANON_WARN) $(JITANON_DEFS) -D_POSIX_C_SOURCE=200809L -O1 -g -fsanitize=thread -I. -o $@ tests/test_main.c $(JITANON_LIBS) \
	  || { rm -f $@; echo "(no ThreadSanitizer build: tests/run.sh prints SKIP)"; }

build/fuzz-replay-%: fuzz/fuzz_%.c fuzz/standalone.c $(HEADER) $(FUZZ_DEPS) | build
	$(call say,CC      $@,fuzz corpus replay; ASan+UBSan)
	$(Q)$(CC) $(JITANON_WARN) $(call ZSTD_REF_DEFS,$*) -O1 -g $(SANFLAGS) -I. -o $@ fuzz/standalone.c $< $(JITANON_LIBS) $(call ZSTD_REF_LIBS,$*)

# The same replays built with clang when it is there: its UBSan also flags NULL + 0,
# which gcc's does not (and libFuzzer runs with clang).
HAVE_CLANG := $(shell command -v clang >/dev/null 2>&1 && echo 1)
build/fuzz-replay-clang-%: fuzz/fuzz_%.c fuzz/standalone.c $(HEADER) $(FUZZ_DEPS) | build
	$(call say,CLANG   $@,fuzz corpus replay; ASan+UBSan)
	$(Q)clang $(JITANON_WARN) $(call ZSTD_REF_DEFS,$*) -O1 -g $(SANFLAGS) -I. -o $@ fuzz/standalone.c $< $(JITANON_LIBS) $(call ZSTD_REF_LIBS,$*)

build/fuzz-%: fuzz/fuzz_%.c $(HEADER) $(FUZZ_DEPS) | build
	$(Q)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(call ZSTD_REF_DEFS,$*) -I. -o $@ $< $(call ZSTD_REF_LIBS,$*)

compile-matrix: | build
	$(Q)sh tests/compile_matrix.sh

unit: build/test_main
	$(Q)./build/test_main

# make test builds what the tests run in parallel, one job per CPU unless -j was given
# (each target writes only its own file; 29 binaries, ~460 s of compiler CPU), then runs
# the tests.
TEST_BINS := all build/test_main build/test_tsan build/test_zstd_diff $(addprefix build/fuzz-replay-,$(FUZZERS)) \
             $(if $(HAVE_CLANG),$(addprefix build/fuzz-replay-clang-,$(FUZZERS)))
NPROC := $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))
.PHONY: test-bins
test-bins: $(TEST_BINS)
test check:
	@echo "== make test: building what is not built yet (the tools, examples and $(words $(filter-out all,$(TEST_BINS))) test binaries; each compiles jitanon.h), then tests/run.sh"
	$(Q)$(MAKE) --no-print-directory $(JOBS) test-bins
	$(Q)sh tests/run.sh

# Every tool compiles the whole header at -O2 (~20 s each on one core): in parallel.
demo:
	@echo "== building the tools (each compiles jitanon.h at -O2, one per CPU at a time)"
	$(Q)$(MAKE) --no-print-directory $(JOBS) all
	$(Q)sh examples/demo.sh

fuzz: $(addprefix build/fuzz-,$(FUZZERS))

# New inputs go to build/fuzz-work/<harness> (the first directory); fuzz/corpus/<harness>
# is only read.  A crash stops the run and leaves the input in build/fuzz-work/ under the
# harness's name; the end of its log (the sanitizer's report) and the input itself (as
# base64, up to 64 KiB: a CI run's log may be all that is left of it) are printed.
# The harnesses are built, and run FUZZ_TIME s each, one per CPU at a time (-j as for
# make test); each one's lines come out together (-Otarget).  libFuzzer runs one
# process per harness, so each still gets FUZZ_TIME s of a CPU.
.PHONY: $(addprefix fuzz-run-,$(FUZZERS))
fuzz-run:
	$(Q)$(MAKE) --no-print-directory $(JOBS) -Otarget $(addprefix fuzz-run-,$(FUZZERS))
$(addprefix fuzz-run-,$(FUZZERS)): fuzz-run-%: build/fuzz-%
	$(Q)f=$*; mkdir -p build/fuzz-work/$$f; \
	  echo "== fuzzing $$f for $(FUZZ_TIME) s (log: build/fuzz-work/$$f.log)"; \
	  ./build/fuzz-$$f -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -rss_limit_mb=2048 \
	    -artifact_prefix=build/fuzz-work/$$f- $$( [ -f fuzz/$$f.dict ] && echo -dict=fuzz/$$f.dict ) \
	    build/fuzz-work/$$f fuzz/corpus/$$f >build/fuzz-work/$$f.log 2>&1; \
	  grep -E '^(#[0-9]+ +DONE|stat::|==[0-9]+==ERROR|SUMMARY|Done)' build/fuzz-work/$$f.log; \
	  bad=$$(ls build/fuzz-work/$$f-crash-* build/fuzz-work/$$f-leak-* build/fuzz-work/$$f-timeout-* \
	    build/fuzz-work/$$f-oom-* 2>/dev/null); \
	  test -z "$$bad" || { echo "fuzzing $$f found a problem: $$bad (replay: build/fuzz-$$f $$bad); the log's end:"; \
	    grep -v '^#[0-9]' build/fuzz-work/$$f.log | tail -40; \
	    for x in $$bad; do [ $$(wc -c <$$x) -gt 65536 ] || \
	      { echo "$$x as base64 (to replay it where only this log is left):"; base64 -w 120 $$x; }; done; exit 1; }

bench: all
	$(Q)sh bench/run.sh

# Every tool in tools/ (symbolize among them: jitanon-record --pprof runs it from beside
# itself); examples/ and jitgen are not installed.
INSTALL_BINS := $(notdir $(TOOLS))
# a man page per tool (tests/oracle/tools.sh checks that each renders and names the
# options of the tool's --help)
MAN_PAGES := $(patsubst build/%,doc/%.1,$(TOOLS))
install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 jitanon.h $(DESTDIR)$(PREFIX)/include/jitanon.h
	for b in $(INSTALL_BINS); do [ -f build/$$b ] && install -m 755 build/$$b $(DESTDIR)$(PREFIX)/bin/$$b; done; true
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	[ -f build/libjitanon-jvmti.so ] && install -m 755 build/libjitanon-jvmti.so $(DESTDIR)$(PREFIX)/lib/libjitanon-jvmti.so || true
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define JITANON_VERSION_STRING "\(.*\)"/\1/p' jitanon.h)|' jitanon.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/jitanon.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/jitanon.h $(DESTDIR)$(PREFIX)/lib/pkgconfig/jitanon.pc
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/man/man1/,$(notdir $(MAN_PAGES)))
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(INSTALL_BINS))
	rm -f $(DESTDIR)$(PREFIX)/lib/libjitanon-jvmti.so

clean:
	rm -rf build
