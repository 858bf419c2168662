/* jitanon-script: what `perf script -F comm,tid,time,ip,sym,dso` prints for the
   jitanon-inject output of a recording, in one pass over the recording itself: no
   injection first, no file written (jitanon_inject with no writer and opts.on_sample).
   Built on the public API only, as a profiler that embeds jitanon.h would be.

   usage: jitanon-script [--jitdump-dir DIR] perf.data

   For every sample: `comm tid time:`, then its frames leaf first, `ip sym (dso)`:
     - JIT code: the jitdump's function name, in the file jitanon-inject writes it to
       (jitanon_frame.file: a region's jitted-<pid>-r<N>.so, or a function's own
       jitted-<pid>-<code_index>.so, next to the dump);
     - anonymous memory a perf map names: the map's symbol in /tmp/perf-<pid>.map; what
       no map names is [unknown] there, as perf shows it;
     - the kernel: its kallsyms symbol in [kernel.kallsyms]; other mappings: the file's
       ELF symbol (JITANON_FRAME_WANT_SYMBOL: .symtab or .dynsym, the PLT, a debug file,
       perf's build-id cache: as perf 6.1 finds them) and the file; [unknown] where
       perf has none;
     - no mapping: [unknown] ([unknown]).
   C++ names come demangled as perf 6.1 prints them (no parameters, no return type) when
   the program links libstdc++ for __cxa_demangle (the Makefile does when it can:
   -DJITANON_CXA_DEMANGLE -lstdc++; compiled as C++ it always does); else as stored.
   A sample without a callchain prints its own ip as its one frame.  ips are absolute. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h" /* first: under -std=c99 it asks for POSIX before any system header */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/symbols.h" /* the demangler and perf's build-id cache, as the tools use them */

static void print_frame(const jitanon_inject_sample *s, const jitanon_frame *f)
{
    const char *sym = "[unknown]";
    int sym_len = 9;
    printf("\t%16" PRIx64 " ", f->ip);
    if (f->name.length) {
        sym = f->name.data;
        sym_len = (int)f->name.length;
    }
    printf("%.*s (", sym_len, sym);
    switch (f->kind) {
    case JITANON_FRAME_JIT: { /* the file jitanon-inject maps it from (next to the dump) */
        size_t dir = f->path.length;
        if (f->file.length) {
            printf("%.*s)\n", (int)f->file.length, f->file.data);
            return;
        }
        while (dir > 0 && f->path.data[dir - 1] != '/') dir--;
        printf("%.*sjitted-%u-%" PRIu64 ".so)\n", (int)dir, f->path.data, (unsigned)s->pid, f->code_index);
        return;
    }
    case JITANON_FRAME_FILE:
        /* perf names executable anonymous memory after the process's perf map */
        if ((f->path.length >= 6 && !memcmp(f->path.data, "//anon", 6)) ||
            (f->path.length >= 14 && !memcmp(f->path.data, "/anon_hugepage", 14))) {
            printf("/tmp/perf-%u.map)\n", (unsigned)s->pid);
            return;
        }
        break;
    case JITANON_FRAME_KERNEL:
        if (f->path.length >= 17 && !memcmp(f->path.data, "[kernel.kallsyms]", 17)) {
            printf("[kernel.kallsyms])\n");
            return;
        }
        break;
    case JITANON_FRAME_UNKNOWN:
        printf("[unknown])\n");
        return;
    default:
        break;
    }
    printf("%.*s)\n", (int)f->path.length, f->path.data);
}

static unsigned want_symbol = JITANON_FRAME_WANT_SYMBOL;

static void on_sample(void *user, const jitanon_inject_sample *s)
{
    jitanon_inject_frame_iter it;
    jitanon_frame f;
    (void)user;
    if (s->comm.length) printf("%16.*s %6u ", (int)s->comm.length, s->comm.data, (unsigned)s->tid);
    else printf("%16s %6u ", ":", (unsigned)s->tid); /* perf's name for a thread it never saw named */
    printf("%5" PRIu64 ".%06" PRIu64 ":\n", s->time / 1000000000u, s->time % 1000000000u / 1000u);
    jitanon_inject_frame_iter_begin(&it, s, JITANON_FRAME_WANT_PERF_MAP | JITANON_FRAME_WANT_UNWIND | want_symbol);
    while (jitanon_inject_frame_iter_next(&it, &f)) print_frame(s, &f);
    printf("\n");
}

int main(int argc, char **argv)
{
    jitanon_inject_opts o;
    jitanon_error err;
    jitanon_result res;
    const char *path = NULL;
    jitanon_buildid_cache cache;
    int i, no_demangle = 0, have_cache = 0;
    jitanon_inject_opts_init(&o);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--jitdump-dir") && i + 1 < argc) o.jitdump_dir = argv[++i];
        else if (!strcmp(argv[i], "--no-symbols")) want_symbol = 0; /* native frames as [unknown] (the cost of names) */
        else if (!strcmp(argv[i], "--no-demangle")) no_demangle = 1;
        else if (argv[i][0] == '-' && argv[i][1]) path = NULL, i = argc;
        else path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: jitanon-script [--jitdump-dir DIR] [--no-symbols] [--no-demangle] perf.data\n");
        return 2;
    }
    have_cache = want_symbol && sy_setup(&o, &cache, !no_demangle);
    o.on_sample = on_sample;
    o.sample_fields = JITANON_SAMPLE_COMM | JITANON_SAMPLE_FILES; /* (JIT frames' files) */
    res = jitanon_symbolize_file(path, &o, NULL, NULL, &err); /* one pass, nothing written */
    if (have_cache) jitanon_buildid_cache_release(&cache);
    if (res != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "jitanon-script: %s: %s\n", path, msg);
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
