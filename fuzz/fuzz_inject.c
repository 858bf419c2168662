/* libFuzzer harness: the whole injector on an in-memory perf.data + jitdump pair.

   Input layout:  u16 LE dump_len | u16 LE flags | dump_len bytes of jitdump | perf.data
   (dump_len: its low 14 bits, clamped to what is there; its top two bits are flags 16
   and 17).  Every marker path (jit-<digits>.dump) loads
   the same jitdump from memory (io.load_dump); ELF files are collected in memory
   (io.write_elf); the output perf.data goes to a memory sink.  flags pick the options:

       bit 0      output in the other mode (file <-> pipe)
       bit 1      one ELF per process instead of one per function (with bit 13 and not
                  bit 12: one per region of code)
       bits 2-3   anon_mode (3 = RANGE)
       bit 4      forward-only input (no seek callback)
       bit 5      the recorded dump path fails; opts.jitdump_dir must find it
       bit 6      write_elf refuses every third file
       bit 7      tiny max_round_bytes_ (rounds processed in parts)
       bit 8      a second run with out == NULL (resolve samples only)
       bit 9      opts.elf_dir set
       bit 10/11  elf.no_debug / elf.no_unwind
       bit 12     elf_files = SAMPLED (files only for sampled functions, at the end); with
                  per-process files only when bit 13 is set too (a refused combination)
       bit 14     one more pair of runs, with the dump damaged: 100 zero bytes appended
                  (bit 15 clear: when the dump alone loads without a tail_error, the output
                  and every ELF file must equal those of the undamaged dump), or cut in
                  half (bit 15 set: only a typed result is checked)
       bit 16/17  late = NAME; with bit 17 also a window of 1000 time units instead of the default

   Checks: the result is OK or a typed error; load_dump sees only marker names; ELF names
   are plain file names and every ELF parses with our reader; on success the output reads
   back completely with write.records records, read.records equals the records read (inside
   COMPRESSED records: the reader counts the container too), every
   SAMPLE reached on_sample, and every MMAP2 that names one of our ELFs points (pgoff) at
   a function symbol in it.  All memory goes through a capped allocator that must end at
   zero live bytes.  Nothing is written anywhere. */
#define JITANON_MAX_RECORD_SIZE (1u << 20)
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "../tests/elfread.h"
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_MEM_CAP ((size_t)96 << 20)
#define FUZZ_OUT_CAP ((size_t)16 << 20)
#define FUZZ_ELF_CAP ((size_t)16 << 20) /* total bytes of ELF files kept */
#define FUZZ_MAX_ELFS 256u

#define FUZZ_NAME "fuzz_inject"
#include "fuzz_common.h"

/* -- memory input, memory output ---------------------------------------------------------- */


/* -- the io callbacks --------------------------------------------------------------------- */

typedef struct elf_file {
    char *path; /* dir/name */
    uint8_t *data;
    size_t size;
    int written; /* times this path was written */
} elf_file;

typedef struct world {
    const uint8_t *dump;
    size_t dump_size;
    unsigned flags;
    const char *jitdump_dir;
    elf_file elfs[FUZZ_MAX_ELFS];
    size_t nelfs, elf_bytes;
    uint64_t write_calls, loads, samples;
    int keep;             /* inject() keeps its result and output here: */
    jitanon_result kept_res;
    uint8_t *kept;
    size_t kept_size;
} world;

/* JITANON_FRAME_WANT_UNWIND reads mapped files: every file is the input's jitdump bytes
   (a garbage ELF for the loader's checks), never the file system. */
static size_t io_read_file(void *user, const char *path, uint64_t offset, void *dst, size_t size)
{
    const world *w = (const world *)user;
    size_t n;
    CHECK(path != NULL);
    if (offset >= w->dump_size) return 0;
    n = w->dump_size - (size_t)offset < size ? w->dump_size - (size_t)offset : size;
    memcpy(dst, w->dump + offset, n);
    return n;
}

static jitanon_result io_load_dump(void *user, const char *path, const jitanon_jitdump_opts *opts, jitanon_jitdump **out,
                                   jitanon_error *err)
{
    world *w = (world *)user;
    CHECK(path != NULL && jitanon_jitdump_is_marker(path, strlen(path), NULL));
    w->loads++;
    if ((w->flags & 1u << 5) && strncmp(path, w->jitdump_dir, strlen(w->jitdump_dir)) != 0) {
        if (err) {
            memset(err, 0, sizeof *err);
            err->type = JITANON_ERR_IO;
            err->description = jitanon_result_string(JITANON_ERR_IO);
        }
        *out = NULL;
        return JITANON_ERR_IO;
    }
    return jitanon_jitdump_load_memory(w->dump, w->dump_size, opts, out, err);
}

static int plain_name(const char *name)
{
    size_t i, n = strlen(name);
    if (n < 4 || name[0] == '.' || strcmp(name + n - 3, ".so") != 0) return 0;
    for (i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return 0;
    }
    return 1;
}

static int io_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    world *w = (world *)user;
    jitanon_test_elf_file f;
    jitanon_error err;
    size_t i, dl, nl;
    char *path;
    CHECK(dir != NULL && name != NULL && data != NULL);
    CHECK(plain_name(name));
    CHECK(jitanon_test_elf_parse(&f, data, size, &err) == JITANON_OK);
    CHECK(f.type == 3 && f.build_id.size == 20);
    w->write_calls++;
    if ((w->flags & 1u << 6) && w->write_calls % 3 == 0) return 1;
    dl = strlen(dir);
    nl = strlen(name);
    path = (char *)malloc(dl + nl + 2);
    CHECK(path != NULL);
    memcpy(path, dir, dl);
    path[dl] = '/';
    memcpy(path + dl + 1, name, nl + 1);
    for (i = 0; i < w->nelfs; i++)
        if (strcmp(w->elfs[i].path, path) == 0) break;
    if (i == w->nelfs) {
        if (w->nelfs == FUZZ_MAX_ELFS || size > FUZZ_ELF_CAP - w->elf_bytes) {
            free(path);
            return 0; /* stored, as far as the injector knows; we just do not keep it */
        }
        w->nelfs++;
        memset(&w->elfs[i], 0, sizeof w->elfs[i]);
        w->elfs[i].path = path;
    } else {
        free(path);
        if (size > FUZZ_ELF_CAP - w->elf_bytes) {
            w->elfs[i].written++;
            return 0;
        }
        w->elf_bytes -= w->elfs[i].size;
        free(w->elfs[i].data);
        w->elfs[i].data = NULL;
        w->elfs[i].size = 0;
    }
    w->elfs[i].written++;
    w->elfs[i].data = (uint8_t *)malloc(size ? size : 1);
    CHECK(w->elfs[i].data != NULL);
    memcpy(w->elfs[i].data, data, size);
    w->elfs[i].size = size;
    w->elf_bytes += size;
    return 0;
}

static void io_log(void *user, const char *message)
{
    (void)user;
    CHECK(message != NULL && strlen(message) < 4096);
}

static void io_progress(void *user, uint64_t bytes_done)
{
    (void)user;
    (void)bytes_done;
}

static void on_sample(void *user, const jitanon_inject_sample *s)
{
    world *w = (world *)user;
    volatile uint8_t x = 0;
    size_t i;
    w->samples++;
    CHECK(s->name.length == 0 || s->name.data != NULL);
    for (i = 0; i < s->name.length; i++) x = (uint8_t)(x + (uint8_t)s->name.data[i]);
    /* the symbolizer's frames over whatever callchain, build-id table, DEBUG_INFO, user
       registers and stack the input holds (unwound with the dump's UNWINDING_INFO and
       "files" that are the dump's bytes; no perf maps: the default loader would read /tmp) */
    {
        jitanon_inject_frame_iter it;
        jitanon_frame f;
        jitanon_inject_frame_iter_begin(&it, s,
                                        JITANON_FRAME_WANT_LINE | JITANON_FRAME_WANT_BUILD_ID | JITANON_FRAME_WANT_UNWIND |
                                            JITANON_FRAME_WANT_SYMBOL);
        while (jitanon_inject_frame_iter_next(&it, &f)) {
            CHECK(f.path.length == 0 || f.path.data != NULL);
            CHECK(f.build_id.size <= 20 && f.line < 0x80000000u);
            for (i = 0; i < f.src_file.length; i++) x = (uint8_t)(x + (uint8_t)f.src_file.data[i]);
            for (i = 0; i < f.build_id.size; i++) x = (uint8_t)(x + f.build_id.data[i]);
        }
        for (i = 0; i < s->comm.length; i++) x = (uint8_t)(x + (uint8_t)s->comm.data[i]);
    }
    (void)x;
}

static void world_free(world *w)
{
    size_t i;
    for (i = 0; i < w->nelfs; i++) {
        free(w->elfs[i].path);
        free(w->elfs[i].data);
    }
    w->nelfs = 0;
    w->elf_bytes = 0;
}

/* -- checking the output ------------------------------------------------------------------- */

static int occurs(const uint8_t *hay, size_t n, const char *needle, size_t k)
{
    size_t i;
    if (k == 0 || k > n) return k == 0;
    for (i = 0; i + k <= n; i++)
        if (hay[i] == (uint8_t)needle[0] && memcmp(hay + i, needle, k) == 0) return 1;
    return 0;
}

/* An MMAP2 naming one of our ELF files must point at a function in it: at its start, or,
   in a region file, at or past one's (code mapped later over code no sample hit takes
   its place there, with the tail the runtime maps after it: an MMAP2 made before may
   point into either; t_region checks every sample's bytes and symbol instead). */
static void check_mmap(const world *w, const jitanon_perf_record *rec, const uint8_t *input, size_t input_size)
{
    size_t i;
    const jitanon_str *fn = &rec->mmap.filename;
    for (i = 0; i < w->nelfs; i++) {
        const elf_file *e = &w->elfs[i];
        jitanon_test_elf_file f;
        jitanon_test_elf_section symtab;
        jitanon_error err;
        uint64_t k, n;
        int found = 0;
        if (strlen(e->path) != fn->length || memcmp(e->path, fn->data, fn->length) != 0) continue;
        /* Only our own synthesized MMAP2s: skip files written twice (overwritten, as on
           disk) and names the input itself contains. */
        if (e->written != 1 || occurs(input, input_size, fn->data, fn->length)) return;
        if (rec->mmap.len == 1 && rec->mmap.pgoff == 0) return; /* a region file's base, framing a slice */
        CHECK(jitanon_test_elf_parse(&f, e->data, e->size, &err) == JITANON_OK);
        CHECK(jitanon_test_elf_find_section(&f, ".symtab", &symtab) != 0);
        n = jitanon_test_elf_symbol_count(&f, &symtab);
        for (k = 1; k < n && !found; k++) {
            jitanon_test_elf_symbol s;
            CHECK(jitanon_test_elf_symbol_at(&f, &symtab, k, &s, &err) == JITANON_OK);
            found = s.value == rec->mmap.pgoff || (strstr(e->path, "-r") && s.value < rec->mmap.pgoff);
        }
        CHECK(found);
        return;
    }
}

static void read_back(const world *w, const jitanon_membuf *out, const jitanon_inject_stats *st, const uint8_t *input,
                      size_t input_size)
{
    memin in;
    capped cap;
    jitanon_perf_opts po;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res;
    uint64_t n = 0;
    fuzz_perf_opts(&po, &cap);
    in = memin_make(out->data, out->size, 0, 0);
    res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &po, &err);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
        n++;
        if (rec.type == JITANON_PERF_RECORD_MMAP2) check_mmap(w, &rec, input, input_size);
    }
    if (!cap.hit) {
        if (res != JITANON_END) {
            char msg[256];
            jitanon_format_error(msg, sizeof msg, &err);
            fprintf(stderr, "fuzz_inject: output does not read back: %s\n", msg);
        }
        CHECK(res == JITANON_END);
        CHECK(n == st->write.records);
    }
    jitanon_perf_reader_release(&r);
    CHECK(cap.live == 0);
}

static int is_typed_error(jitanon_result r) { return r > JITANON_AGAIN && r < JITANON_RESULT_COUNT; }

/* One injection; out_mode 0 = resolve only (out == NULL). */
static void inject(world *w, const uint8_t *perf, size_t perf_size, int out_mode)
{
    memin in;
    capped cap;
    jitanon_perf_opts po;
    jitanon_inject_opts io;
    jitanon_inject_stats st;
    jitanon_perf_reader r;
    jitanon_perf_writer wr;
    jitanon_membuf out;
    jitanon_sink sink;
    jitanon_error err;
    jitanon_result res;
    unsigned fl = w->flags;
    fuzz_perf_opts(&po, &cap);
    memset(&io, 0, sizeof io);
    io.allocator = po.allocator;
    io.anon_mode = (fl >> 2 & 3) == 3 ? JITANON_ANON_RANGE : (jitanon_anon_mode)(fl >> 2 & 3);
    io.elf_layout = !(fl & 2) ? JITANON_ELF_PER_FUNCTION
                    : (fl >> 13 & 1) && !(fl >> 12 & 1) ? JITANON_ELF_PER_REGION : JITANON_ELF_PER_PROCESS;
    io.jitdump_dir = fl & 1u << 5 ? w->jitdump_dir : NULL;
    io.elf_dir = fl & 1u << 9 ? "/fuzz-elf-out" : NULL;
    io.max_round_bytes_ = fl & 1u << 7 ? 512 : 1u << 20;
    io.elf.no_debug = (fl >> 10) & 1;
    io.elf.no_unwind = (fl >> 11) & 1;
    io.elf_files = (fl >> 12) & 1 && (!(fl & 2) || (fl >> 13) & 1) ? JITANON_ELF_FILES_SAMPLED : JITANON_ELF_FILES_ALL;
    io.late = (fl >> 16) & 1 ? JITANON_LATE_NAME : JITANON_LATE_KEEP;
    io.late_window_ns = (fl >> 17) & 1 ? 1000 : 0;
    io.jitdump.allocator = po.allocator;
    io.jitdump.memory_limit = 16u << 20;
    io.jitdump.max_record_size = 1u << 20;
    io.io.load_dump = io_load_dump;
    io.io.write_elf = io_write_elf;
    io.io.read_file = io_read_file;
    io.io.log = io_log;
    io.io.progress = io_progress;
    io.io.user = w;
    io.on_sample = on_sample;
    io.sample_fields = JITANON_SAMPLE_COMM;
    w->samples = 0;
    sink = fuzz_sink(&out, FUZZ_OUT_CAP);
    out.allocator = po.allocator;
    memset(&wr, 0, sizeof wr);
    memset(&st, 0, sizeof st);
    in = memin_make(perf, perf_size, 0, 0);
    res = jitanon_perf_reader_init(&r, memin_read, fl & 1u << 4 ? NULL : memin_seek, &in, &po, &err);
    if (res == JITANON_OK && out_mode) {
        jitanon_perf_mode mode = r.mode;
        if (fl & 1) mode = mode == JITANON_PERF_FILE ? JITANON_PERF_PIPE : JITANON_PERF_FILE;
        res = jitanon_perf_writer_init(&wr, mode, r.big_endian, sink, mode == JITANON_PERF_FILE ? membuf_pwrite : NULL,
                                       &po, &err);
    }
    if (res == JITANON_OK) {
        res = jitanon_inject(&r, out_mode ? &wr : NULL, &io, &st, &err);
        if (getenv("FUZZ_VERBOSE")) {
            char msg[256];
            jitanon_format_error(msg, sizeof msg, &err);
            fprintf(stderr,
                    "inject(flags %#x, out %d): %s; in %llu out %llu samples %llu markers %llu loaded %llu failed %llu "
                    "loads %llu moves %llu synth %llu anon kept/split/dropped/pieces %llu/%llu/%llu/%llu elf %llu "
                    "refused %llu rounds %llu\n",
                    fl, out_mode, res == JITANON_OK ? "ok" : msg, (unsigned long long)st.read.records,
                    (unsigned long long)st.write.records, (unsigned long long)st.read.samples, (unsigned long long)st.dumps.markers,
                    (unsigned long long)st.dumps.loaded, (unsigned long long)st.dumps.failed, (unsigned long long)st.trim.loads,
                    (unsigned long long)st.trim.moves, (unsigned long long)st.write.mmaps_synthesized,
                    (unsigned long long)st.trim.kept, (unsigned long long)st.trim.split,
                    (unsigned long long)st.trim.dropped, (unsigned long long)st.trim.pieces,
                    (unsigned long long)st.elf.files, (unsigned long long)st.elf.refused, (unsigned long long)st.read.rounds);
        }
        CHECK(res == JITANON_OK || is_typed_error(res));
        /* the reader counts a COMPRESSED record and then the records inside it; the
           injector sees only those */
        CHECK(st.read.records + r.stats.compressed_records <= r.stats.records);
        if (res == JITANON_OK) {
            CHECK(st.read.records + r.stats.compressed_records == r.stats.records);
            CHECK(w->samples == r.stats.by_type[JITANON_PERF_RECORD_SAMPLE]);
            CHECK(st.dumps.loaded + st.dumps.failed <= st.dumps.markers);
            if (out_mode) {
                CHECK(st.write.records == wr.records);
                read_back(w, &out, &st, perf, perf_size);
            } else {
                CHECK(st.write.records == 0 && st.elf.files == 0);
            }
        }
    }
    if (w->keep) {
        w->kept_res = cap.hit ? JITANON_ERR_NOMEM : res;
        w->kept = (uint8_t *)malloc(out.size ? out.size : 1);
        CHECK(w->kept != NULL);
        if (out.size) memcpy(w->kept, out.data, out.size);
        w->kept_size = out.size;
    }
    jitanon_perf_writer_release(&wr);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&out);
    CHECK(cap.live == 0);
}

/* The dump with garbage after it gives what the dump alone gives (issue 18): the valid
   prefix is kept, nothing after it counts. */
static void damaged(const world *base, const uint8_t *perf, size_t perf_size)
{
    world *a = (world *)calloc(2, sizeof *a), *b = a + 1; /* large: not on the stack */
    jitanon_jitdump *d = NULL;
    int cut = (base->flags >> 15) & 1, clean;
    size_t i, n = cut ? base->dump_size / 2 : base->dump_size + 100;
    uint8_t *dg = (uint8_t *)calloc(n + 1, 1);
    CHECK(dg != NULL && a != NULL);
    memcpy(dg, base->dump, cut ? n : base->dump_size);
    clean = jitanon_jitdump_load_memory(base->dump, base->dump_size, NULL, &d, NULL) == JITANON_OK &&
            d->tail_error.type == JITANON_OK;
    jitanon_jitdump_destroy(d);
    a->flags = base->flags;
    a->dump = base->dump;
    a->dump_size = base->dump_size;
    a->jitdump_dir = base->jitdump_dir;
    a->keep = 1;
    *b = *a;
    b->dump = dg;
    b->dump_size = n;
    inject(a, perf, perf_size, 1);
    inject(b, perf, perf_size, 1);
    if (!cut && clean && a->kept_res == JITANON_OK && b->kept_res == JITANON_OK) {
        CHECK(a->kept_size == b->kept_size && memcmp(a->kept, b->kept, a->kept_size) == 0);
        CHECK(a->nelfs == b->nelfs);
        for (i = 0; i < a->nelfs && i < b->nelfs; i++)
            CHECK(strcmp(a->elfs[i].path, b->elfs[i].path) == 0 && a->elfs[i].size == b->elfs[i].size &&
                  memcmp(a->elfs[i].data, b->elfs[i].data, a->elfs[i].size) == 0);
    }
    free(a->kept);
    free(b->kept);
    world_free(a);
    world_free(b);
    free(a);
    free(dg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    world w;
    size_t dump_len;
    if (size < 4) return 0;
    dump_len = (size_t)data[0] | (size_t)(data[1] & 0x3f) << 8;
    if (dump_len > size - 4) dump_len = size - 4;
    memset(&w, 0, sizeof w);
    w.flags = (unsigned)data[2] | (unsigned)data[3] << 8 | (unsigned)(data[1] >> 6) << 16;
    w.dump = data + 4;
    w.dump_size = dump_len;
    w.jitdump_dir = "/fuzz-dumps";
    inject(&w, data + 4 + dump_len, size - 4 - dump_len, 1);
    world_free(&w);
    if (w.flags & 1u << 8) {
        inject(&w, data + 4 + dump_len, size - 4 - dump_len, 0);
        world_free(&w);
    }
    if (w.flags & 1u << 14) damaged(&w, data + 4 + dump_len, size - 4 - dump_len);
    return 0;
}
