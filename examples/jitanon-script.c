/* jitanon-script: what `perf script -F comm,tid,time,ip,sym,dso` prints for the
   jitanon-inject output of a recording, in one pass over the recording itself: no
   injection first, no file written (jitanon_inject with no writer and opts.on_sample).
   Built on the public API only, as a profiler that embeds jitanon.h would be.

   usage: jitanon-script [--jitdump-dir DIR] perf.data

   For every sample: `comm tid time:`, then its frames leaf first, `ip sym (dso)`:
     - JIT code: the jitdump's function name, in the file jitanon-inject writes for it
       (jitted-<pid>-<code_index>.so next to the dump);
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
#include <sys/stat.h>

#if defined(__cplusplus) && !defined(JITANON_CXA_DEMANGLE)
#define JITANON_CXA_DEMANGLE 1
#endif
#ifdef JITANON_CXA_DEMANGLE
/* libstdc++'s demangler (C linkage: a C program links it with -lstdc++) */
#ifdef __cplusplus
extern "C"
#endif
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* perf 6.1 prints a C++ name without its parameters and return type (the demangler's
   default options): "long ns::spin<long>(std::vector<long>&) const [clone .cold]" is
   "ns::spin<long>", while the parameters of a function a lambda or local class is in
   stay ("f(int)::{lambda()#1}::operator()").  Cuts d in place: a " [clone ...]" suffix,
   then the last parameter list when the name ends with it (and its qualifiers), then a
   return type before the last top-level space that is not in an operator's name. */
static size_t perf_style(char *d, size_t n)
{
    static const char *const quals[] = {" const", " volatile", " &&", " &"};
    const char *c = strstr(d, " [clone ");
    size_t i, k, end, space = 0;
    int depth = 0, again = 1;
    /* a thunk's target is printed whole, its parameters too ("non-virtual thunk to
       A::f(int)"), as the demangler prints special names whatever its options */
    if (!strncmp(d, "non-virtual thunk to ", 21) || !strncmp(d, "virtual thunk to ", 17) ||
        !strncmp(d, "covariant return thunk to ", 26) || !strncmp(d, "transaction clone for ", 22) ||
        !strncmp(d, "non-transaction clone for ", 26))
        return n;
    if (c) n = (size_t)(c - d);
    end = n;
    while (again) { /* the qualifiers after the parameters */
        again = 0;
        for (k = 0; k < 4; k++) {
            size_t q = strlen(quals[k]);
            if (end >= q && !memcmp(d + end - q, quals[k], q)) end -= q, again = 1;
        }
    }
    if (end && d[end - 1] == ')') {
        for (i = end; i-- > 0;) {
            if (d[i] == ')') depth++;
            else if (d[i] == '(' && --depth == 0) break;
        }
        if (i < end) n = i;
    }
    d[n] = 0;
    for (i = 0, depth = 0; i < n; i++) {
        if (d[i] == '<' || d[i] == '(' || d[i] == '[' || d[i] == '{') depth++;
        else if (d[i] == '>' || d[i] == ')' || d[i] == ']' || d[i] == '}') depth--;
        else if (d[i] == ' ' && depth == 0 && !(i >= 8 && !strncmp(d + i - 8, "operator", 8))) space = i + 1;
    }
    if (space) memmove(d, d + space, n - space + 1), n -= space;
    return n;
}

static size_t demangle(void *user, const char *name, char *out, size_t cap)
{
    int status = 0;
    size_t n;
    char *d;
    (void)user;
    if (name[0] != '_' || name[1] != 'Z') return 0;
    if (!(d = __cxa_demangle(name, NULL, NULL, &status)) || status != 0) return 0;
    n = perf_style(d, strlen(d));
    if (n < cap) memcpy(out, d, n + 1);
    free(d);
    return n;
}
#endif

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
    case JITANON_FRAME_JIT: { /* the file jitanon-inject makes of it: next to the dump */
        size_t dir = f->path.length;
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
    jitanon_perf_reader r;
    jitanon_error err;
    jitanon_result res;
    const char *path = NULL;
    jitanon_buildid_cache cache;
    char cache_dir[4096];
    struct stat st;
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
    /* perf's build-id cache, where perf record left copies of the files it saw (and the
       kernel's kallsyms): read only, so only when it is there */
    if (want_symbol && jitanon_buildid_cache_dir(cache_dir, sizeof cache_dir, &err) == JITANON_OK &&
        stat(cache_dir, &st) == 0 && S_ISDIR(st.st_mode) && jitanon_buildid_cache_open(&cache, cache_dir, &err) == JITANON_OK) {
        o.buildid_cache = &cache;
        have_cache = 1;
    }
#ifdef JITANON_CXA_DEMANGLE
    if (!no_demangle) o.demangle = demangle;
#endif
    (void)no_demangle;
    o.on_sample = on_sample;
    o.sample_fields = JITANON_SAMPLE_COMM;
    res = jitanon_perf_reader_open(&r, path, NULL, &err);
    if (res == JITANON_OK) {
        res = jitanon_inject(&r, NULL, &o, NULL, &err); /* no writer: resolve only */
        jitanon_perf_reader_release(&r);
    }
    if (have_cache) jitanon_buildid_cache_release(&cache);
    if (res != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "jitanon-script: %s: %s\n", path, msg);
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
