/* Builds the synthetic seed files of fuzz/corpus/ with the library's own writers.

     cc -std=c99 -I. -o build/mkseeds fuzz/mkseeds.c && build/mkseeds fuzz/corpus

   writes, for the targets perfdata, perfdata_roundtrip, elf and inject:

   - a perf.data in file mode and in pipe mode (both byte orders): one attr with
     use_clockid + clockid 1 (CLOCK_MONOTONIC), sample_id_all, sample_type
     IP|TID|TIME|ID|CPU|PERIOD|IDENTIFIER; COMM, a file-backed MMAP2, the marker MMAP2
     /tmp/jit-1234.dump, //anon MMAP2s over the jitted code that grow (coalesce) as the
     JIT commits pages, SAMPLEs in jitted and file-backed code, FINISHED_ROUNDs, EXIT;
   - a jitdump for pid 1234 whose timestamps interleave with those records: LOADs, a
     DEBUG_INFO, an UNWINDING_INFO (a real x86-64 CIE/FDE), a MOVE, a CLOSE;
   - for inject: u16 dump length | u16 flags | jitdump | perf.data (see fuzz_inject.c);
   - for elf: the jitdumps, and one ELF file written from them (for the raw-ELF parse).

   Seeds from real recordings (perf record of build/tinyjit) are added by hand; see
   fuzz/README.md. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>
#include <stdlib.h>
#include "../tests/memio.h"
#include "../tests/jdrec.h"

#define PID 1234u
#define CODE 0x7f1000000000ull /* the JIT's code region */

#define ST (JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_ID | \
            JITANON_PERF_SAMPLE_CPU | JITANON_PERF_SAMPLE_PERIOD | JITANON_PERF_SAMPLE_IDENTIFIER)
#define ATTR_ID 100u

static void die(const char *what)
{
    fprintf(stderr, "mkseeds: %s\n", what);
    exit(1);
}

static void ok(jitanon_result r, const char *what)
{
    if (r != JITANON_OK) die(what);
}

static void save(const char *dir, const char *target, const char *name, const void *p1, size_t n1, const void *p2,
                 size_t n2, const void *p3, size_t n3)
{
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s/%s", dir, target, name);
    f = fopen(path, "wb");
    if (!f) die(path);
    if ((n1 && fwrite(p1, 1, n1, f) != n1) || (n2 && fwrite(p2, 1, n2, f) != n2) || (n3 && fwrite(p3, 1, n3, f) != n3))
        die(path);
    if (fclose(f)) die(path);
}

/* -- jitdump ---------------------------------------------------------------------------- */

/* A CIE (zR, pcrel sdata4 FDE pointers, CFA = rsp + 8, RA at CFA - 8) and one FDE for a
   function of `code_size` bytes, laid out as V8 assumes: .eh_frame at ALIGN8(code_size)
   after the function start, .eh_frame_hdr right after it. */
static size_t build_eh(uint8_t *eh, uint8_t *hdr, uint64_t code_size, size_t *hdr_size)
{
    static const uint8_t cie[24] = {0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b,
                                    0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0};
    uint64_t base = (code_size + 7) & ~7ull; /* eh_frame start, relative to the function */
    int64_t pc_begin = -(int64_t)(base + 24 + 8);
    size_t n = 0;
    memcpy(eh, cie, sizeof cie);
    n = sizeof cie;
    jitanon__wr32(eh + n, 0x14, 0);        /* FDE length */
    jitanon__wr32(eh + n + 4, n + 4, 0);   /* CIE pointer: back to the CIE */
    jitanon__wr32(eh + n + 8, (uint64_t)pc_begin, 0);
    jitanon__wr32(eh + n + 12, code_size, 0);
    memset(eh + n + 16, 0, 8);             /* aug length 0, DW_CFA_nop padding */
    n += 24;
    memset(eh + n, 0, 4);                  /* terminator */
    n += 4;
    /* .eh_frame_hdr: version 1, eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
    hdr[0] = 1, hdr[1] = 0x1b, hdr[2] = 0x03, hdr[3] = 0x3b;
    jitanon__wr32(hdr + 4, (uint64_t)(-(int64_t)(n + 4)), 0);
    jitanon__wr32(hdr + 8, 1, 0);
    jitanon__wr32(hdr + 12, (uint64_t)(-(int64_t)(base + n)), 0);                /* initial loc - hdr */
    jitanon__wr32(hdr + 16, (uint64_t)(-(int64_t)(n - 24)), 0);                  /* FDE - hdr */
    *hdr_size = 20;
    return n;
}

static void fn_code(uint8_t *code, size_t n, uint8_t tag)
{
    size_t i;
    for (i = 0; i < n; i++) code[i] = 0x90; /* nop sled, then mov eax, tag; ret */
    code[n - 6] = 0xb8, code[n - 5] = tag, code[n - 4] = 0, code[n - 3] = 0, code[n - 2] = 0, code[n - 1] = 0xc3;
}

static void build_dump(jitanon_membuf *out, int big)
{
    jitanon_jitdump_writer w;
    jitanon_sink sink;
    jitanon_error err;
    jitanon_jitdump_debug_entry e[3];
    uint8_t code[4][64], eh[64], hdr[32];
    size_t ehn, hdrn, i;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    sink = jdrec_sink(out);
    for (i = 0; i < 4; i++) fn_code(code[i], sizeof code[i], (uint8_t)i);
    memset(e, 0, sizeof e);
    e[0].addr = CODE + 0x40, e[0].lineno = 10, e[0].file.data = "app.js", e[0].file.length = 6;
    e[1].addr = CODE + 0x48, e[1].lineno = 11, e[1].file = e[0].file;
    e[2].addr = CODE + 0x50, e[2].lineno = 3, e[2].discrim = 1, e[2].file.data = "lib/util.js", e[2].file.length = 11;
    ehn = build_eh(eh, hdr, sizeof code[2], &hdrn);
    ok(jdrec_begin(&w, sink, 62 /* EM_X86_64 */, PID, 1000, big, &err), "jitdump header");
    ok(jdrec_write(&w, jdrec_load(1250, PID, PID, CODE, code[0], 64, 1, "js:fn_one"), &err), "load 1");
    ok(jitanon_jitdump_write_debug_info(&w, 1340, CODE + 0x40, e, 3, &err), "debug");
    ok(jdrec_write(&w, jdrec_load(1350, PID, PID + 1, CODE + 0x40, code[1], 64, 2, "js:fn_two"), &err), "load 2");
    ok(jdrec_write(&w, jdrec_unwind(2190, eh, ehn, hdr, hdrn, (ehn + hdrn + 7) & ~(size_t)7), &err), "unwind");
    ok(jdrec_write(&w, jdrec_load(2200, PID, PID, CODE + 0x1000, code[2], 64, 3, "js:fn_three"), &err), "load 3");
    ok(jdrec_write(&w, jdrec_move(2250, PID, PID, CODE, CODE + 0x2000, 64, 1), &err), "move");
    ok(jdrec_write(&w, jdrec_load(2260, PID, PID, CODE + 0x2100, code[3], 64, 4, "js:fn_four"), &err), "load 4");
    ok(jdrec_write(&w, jdrec_make(JITANON_JITDUMP_CODE_CLOSE, 3000), &err), "close");
}

/* -- perf.data ------------------------------------------------------------------------------ */

/* Every record comes from the library's encoder; `attr` gives the trailer (cpu 1). */
static void put(jitanon_perf_writer *w, const jitanon_perf_attr *a, jitanon_perf_record *rec, int big, uint32_t type,
                uint16_t misc, uint64_t time)
{
    uint8_t b[512];
    size_t n;
    jitanon_error err;
    rec->type = type;
    rec->misc = misc;
    rec->big_endian = big;
    rec->sid.time = time;
    rec->sid.cpu = 1;
    ok(jitanon_perf_encode(b, sizeof b, &n, rec, a, &err), "encode");
    ok(jitanon_perf_writer_write(w, b, n, &err), "record");
}

static void mmap2(jitanon_perf_writer *w, const jitanon_perf_attr *a, int big, uint64_t time, uint64_t start,
                  uint64_t len, uint64_t pgoff, uint32_t prot, const char *name)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    rec.mmap.pid = rec.mmap.tid = PID;
    rec.mmap.start = start, rec.mmap.len = len, rec.mmap.pgoff = pgoff;
    rec.mmap.maj = 8, rec.mmap.min = 1, rec.mmap.ino = 4242;
    rec.mmap.prot = prot, rec.mmap.flags = 2 /* MAP_PRIVATE */;
    rec.mmap.filename.data = name, rec.mmap.filename.length = strlen(name);
    put(w, a, &rec, big, JITANON_PERF_RECORD_MMAP2, JITANON_PERF_MISC_USER, time);
}

static void sample(jitanon_perf_writer *w, const jitanon_perf_attr *a, int big, uint64_t time, uint64_t ip)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    rec.sample.ip = ip;
    rec.sid.pid = rec.sid.tid = PID;
    rec.sample.period = 100000;
    put(w, a, &rec, big, JITANON_PERF_RECORD_SAMPLE, JITANON_PERF_MISC_USER, time);
}

static void round_end(jitanon_perf_writer *w, const jitanon_perf_attr *a, int big)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    put(w, a, &rec, big, JITANON_PERF_RECORD_FINISHED_ROUND, 0, 0);
}

static void build_perf(jitanon_membuf *out, jitanon_perf_mode mode, int big)
{
    static const uint8_t hostname[] = "fuzzhost\0\0\0\0\0\0\0\0";
    jitanon_perf_writer w;
    jitanon_perf_attr a;
    jitanon_sink sink;
    jitanon_error err;
    uint8_t raw[128];
    uint64_t ids[1] = {ATTR_ID};
    uint64_t flags = 1ull << 0 /* disabled */ | 1ull << 8 /* mmap */ | 1ull << 9 /* comm */ | 1ull << 18 /* sample_id_all */ |
                     1ull << 23 /* mmap2 */ | 1ull << 25 /* use_clockid */;
    uint8_t hostsec[4 + sizeof hostname];
    jitanon_perf_record rec;
    int i;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    sink = jdrec_sink(out);
    memset(&a, 0, sizeof a);
    a.type = 1; /* PERF_TYPE_SOFTWARE, config 0: cpu-clock */
    a.size = 128;
    a.sample_type = ST;
    a.flags = flags;
    a.clockid = 1; /* CLOCK_MONOTONIC */
    a.ids = ids;
    a.id_count = 1;
    ok(jitanon_perf_encode_attr(raw, sizeof raw, &a, 4000, big, &err), "attr");
    ok(jitanon_perf_writer_init(&w, mode, big, sink, mode == JITANON_PERF_FILE ? membuf_pwrite : NULL, NULL, &err),
       "writer");
    ok(jitanon_perf_writer_add_attr(&w, &a, &err), "attr");
    jitanon__wr32(hostsec, sizeof hostname, big); /* perf string: u32 len, padded string */
    memcpy(hostsec + 4, hostname, sizeof hostname);
    ok(jitanon_perf_writer_add_feature(&w, 2 + 1 /* HOSTNAME */, hostsec, sizeof hostsec, &err), "feature");

    memset(&rec, 0, sizeof rec);
    rec.comm.pid = rec.comm.tid = PID;
    rec.comm.comm.data = "node", rec.comm.comm.length = 4;
    put(&w, &a, &rec, big, JITANON_PERF_RECORD_COMM, 0, 1000);
    mmap2(&w, &a, big, 1100, 0x400000, 0x200000, 0, 5, "/usr/bin/node");
    mmap2(&w, &a, big, 1200, 0x7f0000000000ull, 4096, 0, 5, "/tmp/jit-1234.dump");
    mmap2(&w, &a, big, 1300, CODE, 0x1000, 0, 7, "//anon");
    sample(&w, &a, big, 1400, CODE + 0x10);
    sample(&w, &a, big, 1500, CODE + 0x50);
    sample(&w, &a, big, 1600, 0x400123);
    sample(&w, &a, big, 1700, CODE + 0x800); /* unnamed jitted code: stays //anon */
    round_end(&w, &a, big);
    mmap2(&w, &a, big, 2150, CODE, 0x2000, 0, 7, "//anon"); /* the JIT committed a page: coalesced */
    mmap2(&w, &a, big, 2255, CODE, 0x3000, 0, 7, "//anon");
    for (i = 0; i < 4; i++) {
        sample(&w, &a, big, 2300 + 100 * (uint64_t)i, CODE + 0x1010);
        sample(&w, &a, big, 2350 + 100 * (uint64_t)i, CODE + 0x2010); /* fn_one after its MOVE */
    }
    sample(&w, &a, big, 2800, CODE + 0x2110);
    round_end(&w, &a, big);
    memset(&rec, 0, sizeof rec);
    rec.task.pid = rec.task.tid = PID;
    rec.task.ppid = rec.task.ptid = 1;
    rec.task.time = 3100;
    put(&w, &a, &rec, big, JITANON_PERF_RECORD_EXIT, 0, 3100);
    round_end(&w, &a, big);
    ok(jitanon_perf_writer_finish(&w, &err), "finish");
    jitanon_perf_writer_release(&w);
}

/* Writes one ELF for every function of the dump (the per-process layout). */
static void build_elf(const jitanon_membuf *dump, jitanon_membuf *out)
{
    jitanon_jitdump *d;
    jitanon_jitdump_func_iter it;
    jitanon_jitdump_func f;
    jitanon_elf_builder b;
    jitanon_elf_func fn;
    jitanon_sink sink;
    jitanon_error err;
    jitanon_result res;
    memset(out, 0, sizeof *out);
    sink = jdrec_sink(out);
    if (jitanon_jitdump_load_memory(dump->data, dump->size, NULL, &d, &err) != JITANON_OK) die("reload dump");
    ok(jitanon_elf_builder_init(&b, &d->header, NULL, &err), "elf init");
    jitanon_jitdump_func_iter_begin(&it, d, NULL);
    while ((res = jitanon_jitdump_func_iter_next(&it, &f, &err)) == JITANON_OK) {
        jitanon_elf_func_of(&f, &fn);
        fn.map_size = 0; /* the seed as it always was: each function right after the last */
        ok(jitanon_elf_builder_add(&b, &fn, NULL, &err), "elf add");
    }
    if (res != JITANON_END) die("functions");
    jitanon_jitdump_func_iter_release(&it);
    ok(jitanon_elf_builder_finish(&b, sink, NULL, &err), "elf finish");
    jitanon_elf_builder_release(&b);
    jitanon_jitdump_destroy(d);
}

static void inject_seed(const char *dir, const char *name, const jitanon_membuf *dump, const jitanon_membuf *perf,
                        unsigned flags)
{
    uint8_t pre[4];
    if (dump->size > 0xffff) die("dump too large for the inject prefix");
    jitanon__wr16(pre, dump->size, 0);
    jitanon__wr16(pre + 2, flags, 0);
    save(dir, "inject", name, pre, 4, dump->data, dump->size, perf->data, perf->size);
}

int main(int argc, char **argv)
{
    static const char *const targets[2] = {"perfdata", "perfdata_roundtrip"};
    jitanon_membuf dump_le, dump_be, file_le, file_be, pipe_le, pipe_be, elf;
    int t;
    if (argc != 2) die("usage: mkseeds CORPUS_DIR");
    build_dump(&dump_le, 0);
    build_dump(&dump_be, 1);
    build_perf(&file_le, JITANON_PERF_FILE, 0);
    build_perf(&file_be, JITANON_PERF_FILE, 1);
    build_perf(&pipe_le, JITANON_PERF_PIPE, 0);
    build_perf(&pipe_be, JITANON_PERF_PIPE, 1);
    build_elf(&dump_le, &elf);
    for (t = 0; t < 2; t++) {
        save(argv[1], targets[t], "gen-file-le.data", file_le.data, file_le.size, NULL, 0, NULL, 0);
        save(argv[1], targets[t], "gen-file-be.data", file_be.data, file_be.size, NULL, 0, NULL, 0);
        save(argv[1], targets[t], "gen-pipe-le.data", pipe_le.data, pipe_le.size, NULL, 0, NULL, 0);
        save(argv[1], targets[t], "gen-pipe-be.data", pipe_be.data, pipe_be.size, NULL, 0, NULL, 0);
    }
    save(argv[1], "elf", "gen-le.dump", dump_le.data, dump_le.size, NULL, 0, NULL, 0);
    save(argv[1], "elf", "gen-be.dump", dump_be.data, dump_be.size, NULL, 0, NULL, 0);
    save(argv[1], "elf", "gen-per-process.so", elf.data, elf.size, NULL, 0, NULL, 0);
    /* flags: see fuzz_inject.c (0 = defaults; 0x0102 = per-process + resolve-only run;
       0x0011 = forward-only input into the other mode; 0x02a0 = dump dir fallback, elf_dir,
       tiny rounds; 0x4000 = the dump with a damaged tail; 0xc002 = the dump cut, per-process) */
    inject_seed(argv[1], "gen-file-le.bin", &dump_le, &file_le, 0);
    inject_seed(argv[1], "gen-pipe-le.bin", &dump_le, &pipe_le, 0x0102);
    inject_seed(argv[1], "gen-file-be.bin", &dump_be, &file_be, 0x0011);
    inject_seed(argv[1], "gen-pipe-be-tiny-rounds.bin", &dump_be, &pipe_be, 0x02a0);
    inject_seed(argv[1], "gen-file-le-damaged-tail.bin", &dump_le, &file_le, 0x4000);
    inject_seed(argv[1], "gen-file-be-cut-dump.bin", &dump_be, &file_be, 0xc002);
    jitanon_membuf_release(&dump_le), jitanon_membuf_release(&dump_be), jitanon_membuf_release(&elf);
    jitanon_membuf_release(&file_le), jitanon_membuf_release(&file_be), jitanon_membuf_release(&pipe_le), jitanon_membuf_release(&pipe_be);
    return 0;
}
