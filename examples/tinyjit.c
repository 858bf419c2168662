/* tinyjit: a small real x86-64 JIT that provokes the coalesced-//anon problem.

   It reserves a code region PROT_NONE and commits it one page at a time with
   mprotect(RWX).  Each commit merges the new page into the previous RWX pages, so the
   kernel emits an //anon MMAP2 covering *all* committed pages, timestamped after the
   earlier code loads - the event that hides jitted code in perf report.  Into each page
   it writes a few small looping functions recorded in a jitdump (jit-<pid>.dump, written
   with jitanon.h's writer API) and one stub that is left out of the jitdump and named
   only in /tmp/perf-<pid>.map.  Then it spends time in every function.

   --late MS writes each function's load record MS milliseconds after its code, as a JIT
   that posts its records asynchronously does (HotSpot), and prints the truth for every
   function when its code is written: "code <name> <hex address> <size> <ns>" (the time
   on the jitdump clock), so a test knows which function every sample ran.

   usage: tinyjit [-d DUMPDIR] [-p PAGES] [-f FUNCS_PER_PAGE] [-t MILLISECONDS] [--no-map]
                  [--late MS]
   Prints "pid <pid>" first.  The caller removes /tmp/perf-<pid>.map and the dump. */
#ifndef _GNU_SOURCE /* (g++ defines it) */
#define _GNU_SOURCE
#endif
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && JITANON__POSIX
#define SLOT 64u /* bytes per function */

typedef uint32_t (*jit_fn)(void);

/* A load record not written yet (--late). */
typedef struct late_load {
    uint8_t *code;
    size_t pg, k;
    uint64_t written;
} late_load;

typedef struct tinyjit {
    uint8_t *region;
    size_t page, pages, funcs;
    jitanon_jitdump_file dump;
    FILE *map;
    jit_fn *fns;
    size_t nfns;
    uint64_t late_ns;
    late_load *late;
    size_t nlate, late_done;
} tinyjit;

static int write_load(tinyjit *t, uint8_t *code, size_t pg, size_t k)
{
    jitanon_error err;
    jitanon_jitdump_record rec;
    char name[64];
    sprintf(name, "tinyjit_fn_p%zu_%zu", pg, k);
    memset(&rec, 0, sizeof rec);
    rec.id = JITANON_JITDUMP_CODE_LOAD;
    rec.timestamp = jitanon_jitdump_now();
    rec.load.pid = rec.load.tid = (uint32_t)getpid();
    rec.load.vma = rec.load.code_addr = (uint64_t)(uintptr_t)code;
    rec.load.code.data = code;
    rec.load.code.size = SLOT;
    rec.load.code_size = SLOT;
    rec.load.code_index = pg * 1000 + k;
    rec.load.name.data = name;
    rec.load.name.length = strlen(name);
    if (jitanon_jitdump_write(&t->dump.writer, &rec, &err) != JITANON_OK)
        return fprintf(stderr, "tinyjit: jitdump write failed\n"), 1;
    return 0;
}

/* Writes the late records that came due (all of them with `all`). */
static int flush_late(tinyjit *t, int all)
{
    uint64_t now = jitanon_jitdump_now();
    while (t->late_done < t->nlate && (all || t->late[t->late_done].written + t->late_ns <= now)) {
        late_load *l = &t->late[t->late_done++];
        if (write_load(t, l->code, l->pg, l->k)) return 1;
    }
    return 0;
}

/* mov ecx, iterations; 1: dec ecx; jnz 1b; mov eax, tag; ret */
static void emit_loop(uint8_t *p, uint32_t iterations, uint32_t tag)
{
    static const uint8_t body[] = {0xb9, 0, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xb8, 0, 0, 0, 0, 0xc3};
    memcpy(p, body, sizeof body);
    memcpy(p + 1, &iterations, 4);
    memcpy(p + 10, &tag, 4);
    memset(p + sizeof body, 0xcc, SLOT - sizeof body); /* int3 padding */
}

static int commit_page(tinyjit *t, size_t pg)
{
    uint8_t *base = t->region + pg * t->page;
    size_t k;
    if (mprotect(base, t->page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return perror("mprotect"), 1;
    for (k = 0; k <= t->funcs; k++) {
        uint8_t *code = base + k * SLOT;
        int stub = k == t->funcs;
        emit_loop(code, stub ? 30000u : 20000u, (uint32_t)(pg * 100 + k));
        t->fns[t->nfns++] = (jit_fn)(uintptr_t)code;
        if (stub) {
            /* a stub: no jitdump record, only a perf-map line (like V8 or HotSpot stubs) */
            if (t->map) fprintf(t->map, "%lx %x tinyjit_stub_p%zu\n", (unsigned long)(uintptr_t)code, (unsigned)SLOT, pg);
            continue;
        }
        if (t->late) {
            late_load *l = &t->late[t->nlate++];
            l->code = code;
            l->pg = pg;
            l->k = k;
            l->written = jitanon_jitdump_now();
            printf("code tinyjit_fn_p%zu_%zu %lx %u %llu\n", pg, k, (unsigned long)(uintptr_t)code, (unsigned)SLOT,
                   (unsigned long long)l->written);
        } else if (write_load(t, code, pg, k)) {
            return 1;
        }
    }
    fflush(stdout);
    if (t->map) fflush(t->map);
    return 0;
}

static volatile uint32_t sink;

static int run_all(tinyjit *t)
{
    size_t i;
    for (i = 0; i < t->nfns; i++) sink += t->fns[i]();
    return t->late ? flush_late(t, 0) : 0;
}

int main(int argc, char **argv)
{
    tinyjit t;
    const char *dir = ".";
    long ms = 1000;
    int i, use_map = 1;
    uint64_t start, end;
    jitanon_error err;
    size_t pg;
    char mapname[64];
    memset(&t, 0, sizeof t);
    t.pages = 8;
    t.funcs = 3;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-d") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) t.pages = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-f") && i + 1 < argc) t.funcs = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) ms = atol(argv[++i]);
        else if (!strcmp(argv[i], "--no-map")) use_map = 0;
        else if (!strcmp(argv[i], "--late") && i + 1 < argc) t.late_ns = (uint64_t)atol(argv[++i]) * 1000000u;
        else return fprintf(stderr, "usage: tinyjit [-d DIR] [-p PAGES] [-f FUNCS] [-t MS] [--no-map] [--late MS]\n"), 2;
    }
    t.page = (size_t)sysconf(_SC_PAGESIZE);
    if (t.pages < 1 || t.funcs < 1 || (t.funcs + 1) * SLOT > t.page) return fprintf(stderr, "tinyjit: bad sizes\n"), 2;
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    t.fns = (jit_fn *)calloc(t.pages * (t.funcs + 1), sizeof *t.fns);
    if (t.late_ns && !(t.late = (late_load *)calloc(t.pages * t.funcs, sizeof *t.late))) return perror("tinyjit"), 1;
    t.region = (uint8_t *)mmap(NULL, t.pages * t.page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!t.fns || t.region == MAP_FAILED) return perror("tinyjit"), 1;
    if (jitanon_jitdump_file_open(&t.dump, dir, 0 /* this machine's */, &err) != JITANON_OK)
        return fprintf(stderr, "tinyjit: %s\n", err.info), 1;
    sprintf(mapname, "/tmp/perf-%d.map", (int)getpid());
    if (use_map && !(t.map = fopen(mapname, "w"))) return perror(mapname), 1;
    /* Grow the code cache page by page, running what exists in between, so samples land
       in early pages both before and after the coalesced //anon events. */
    start = jitanon_jitdump_now();
    end = start + (uint64_t)ms * 1000000u;
    for (pg = 0; pg < t.pages; pg++) {
        uint64_t until = start + (uint64_t)ms * 1000000u * (pg + 1) / (2 * t.pages);
        if (commit_page(&t, pg)) return 1;
        while (jitanon_jitdump_now() < until)
            if (run_all(&t)) return 1;
    }
    while (jitanon_jitdump_now() < end)
        if (run_all(&t)) return 1;
    if (t.late && flush_late(&t, 1)) return 1;
    jitanon_jitdump_file_close(&t.dump, &err);
    if (t.map) fclose(t.map);
    munmap(t.region, t.pages * t.page);
    free(t.fns);
    free(t.late);
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "tinyjit: needs x86-64 Linux\n");
    return 77;
}
#endif
