/* The injector, end to end in memory: a hand-built perf.data + jitdump pair goes in, the
   output is read back and checked record by record. */

#define TI_PID 100u
#define TI_ID 77u

typedef struct ti_gen {
    jitanon_perf_writer w;
    jitanon_perf_attr attr;
    uint64_t id;
} ti_gen;

/* Appends the file at `path` to `m`. */
static void ti_read_file(const char *path, jitanon_membuf *m)
{
    FILE *f = fopen(path, "rb");
    int c;
    uint8_t b;
    JT_CHECK(f != NULL);
    while (f && (c = getc(f)) != EOF) {
        b = (uint8_t)c;
        JT_CHECK(jitanon_membuf_write(m, &b, 1) == 0);
    }
    if (f) fclose(f);
}

/* Writes `rec` (little-endian, cpu 0) with the public encoder. */
static void ti_put(ti_gen *g, jitanon_perf_record *rec, uint32_t type, uint16_t misc, uint64_t time)
{
    uint8_t buf[512];
    size_t size = 0;
    jitanon_error err;
    rec->type = type;
    rec->misc = misc;
    rec->sid.time = time;
    JT_CHECK(jitanon_perf_encode(buf, sizeof buf, &size, rec, &g->attr, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_write(&g->w, buf, size, &err) == JITANON_OK);
}

static void ti_mmap(ti_gen *g, uint64_t time, uint64_t start, uint64_t len, uint64_t pgoff, const char *name)
{
    jitanon_perf_record rec;
    jitanon_perf_mmap *m = &rec.mmap;
    memset(&rec, 0, sizeof rec);
    m->pid = m->tid = TI_PID;
    m->start = start;
    m->len = len;
    m->pgoff = pgoff;
    m->prot = 7;
    m->flags = 2;
    m->filename.data = name;
    m->filename.length = strlen(name);
    ti_put(g, &rec, JITANON_PERF_RECORD_MMAP2, JITANON_PERF_MISC_USER, time);
}

/* A sample of thread `tid` of TI_PID. */
static void ti_sample_tid(ti_gen *g, uint64_t time, uint64_t ip, uint32_t tid)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    rec.sample.ip = ip;
    rec.sid.pid = TI_PID;
    rec.sid.tid = tid;
    rec.sample.period = 250000;
    ti_put(g, &rec, JITANON_PERF_RECORD_SAMPLE, JITANON_PERF_MISC_USER, time);
}

static void ti_sample(ti_gen *g, uint64_t time, uint64_t ip) { ti_sample_tid(g, time, ip, TI_PID); }

static void ti_round(ti_gen *g)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    ti_put(g, &rec, JITANON_PERF_RECORD_FINISHED_ROUND, 0, 0);
}

/* A perf writer with one attr as `perf record -k mono -e cpu-clock` makes it. */
static void ti_gen_begin(ti_gen *g, uint8_t raw[128], int mono, jitanon_membuf *out, jitanon_perf_mode mode)
{
    jitanon_error err;
    memset(g, 0, sizeof *g);
    g->id = TI_ID;
    g->attr.type = 1; /* PERF_TYPE_SOFTWARE */
    g->attr.sample_type = JITANON_PERF_SAMPLE_IDENTIFIER | JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID |
                          JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_CPU | JITANON_PERF_SAMPLE_PERIOD;
    /* mmap, comm, sample_id_all, mmap2, use_clockid */
    g->attr.flags = (1u << 8) | (1u << 9) | (1u << 18) | (1u << 23) | (mono ? 1u << 25 : 0);
    g->attr.clockid = mono; /* CLOCK_MONOTONIC */
    g->attr.ids = &g->id;
    g->attr.id_count = 1;
    JT_CHECK(jitanon_perf_encode_attr(raw, 128, &g->attr, 4000, 0, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_init(&g->w, mode, 0, jdrec_sink(out), membuf_pwrite, NULL, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_add_attr(&g->w, &g->attr, &err) == JITANON_OK);
}

/* Ends the recording ti_gen_begin began (its header written, the writer released). */
static void ti_gen_end(ti_gen *g)
{
    jitanon_error err;
    JT_CHECK(jitanon_perf_writer_finish(&g->w, &err) == JITANON_OK);
    jitanon_perf_writer_release(&g->w);
}

/* The scenario: a JIT commits pages one at a time; each commit yields an //anon MMAP2
   over all pages so far, after earlier loads.  File order inside a round is not time
   order (records are only ordered across rounds). */
static void ti_build_perf(jitanon_membuf *out, int mono, jitanon_perf_mode mode)
{
    ti_gen g;
    uint8_t raw[128];
    memset(out, 0, sizeof *out);
    ti_gen_begin(&g, raw, mono, out, mode);
    ti_mmap(&g, 10, 0x400000, 0x1000, 0, "/usr/bin/fakejit");
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_mmap(&g, 30, 0x10000, 0x1000, 0x10000, "//anon");
    ti_sample(&g, 62, 0x11000);                               /* in file before the t=50 mmap */
    ti_mmap(&g, 50, 0x10000, 0x2000, 0x10000, "//anon");      /* covers f0 (t=40) and f1 (t=45) */
    ti_sample(&g, 60, 0x10010);                               /* f0 */
    ti_sample(&g, 61, 0x10150);                               /* a stub between f0 and f1 */
    ti_round(&g);
    ti_mmap(&g, 80, 0x10000, 0x3000, 0x10000, "//anon");      /* covers f0, f1, f2 (t=70) */
    ti_sample(&g, 90, 0x11010);                               /* f2 */
    ti_mmap(&g, 95, 0x12000, 0x1000, 0x0, "/usr/lib/libfile.so"); /* file over jit code */
    ti_round(&g);
    ti_gen_end(&g);
}

static void ti_build_dump(jitanon_membuf *out)
{
    static const uint8_t code[0x100] = {0xc3};
    jitanon_jitdump_writer w;
    jitanon_error err;
    jitanon_jitdump_debug_entry e;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    memset(&e, 0, sizeof e);
    e.addr = 0x10000;
    e.lineno = 3;
    e.file.data = "f0.js";
    e.file.length = 5;
    jdrec_begin(&w, jdrec_sink(out), 62, TI_PID, 5, 0, &err);
    jitanon_jitdump_write_debug_info(&w, 39, 0x10000, &e, 1, &err);
    jdrec_write(&w, jdrec_load(40, TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), &err);
    jdrec_write(&w, jdrec_load(45, TI_PID, TI_PID, 0x10200, code, 0x100, 1, "f1"), &err);
    jdrec_write(&w, jdrec_load(70, TI_PID, TI_PID, 0x11000, code, 0x80, 2, "f2"), &err);
    jdrec_write(&w, jdrec_load(96, TI_PID, TI_PID, 0x12000, code, 0x80, 3, "f3"), &err);
}

typedef struct ti_seen {
    unsigned n;
    jitanon_trim_kind kind[8];
    char name[8][32];
} ti_seen;

typedef struct ti_io {
    ti_seen seen;
    jitanon_membuf dump;
    int give_dump;
    unsigned elf_files;
    char last_name[64];
    int elf_ok;
} ti_io;

static jitanon_result ti_load_dump(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                   jitanon_jitdump **out, jitanon_error *err)
{
    ti_io *io = (ti_io *)user;
    JT_CHECK(strcmp(path, "/some/dir/jit-100.dump") == 0);
    if (!io->give_dump) {
        *out = NULL;
        return JITANON__FAIL(err, JITANON_ERR_IO, 0, "not here");
    }
    return jitanon_jitdump_load_memory(io->dump.data, io->dump.size, opts, out, err);
}

/* io.load_dump over memory, the path not looked at: `user` starts with the dump (a
   jitanon_membuf), or for ti_load_via with a pointer to it. */
static jitanon_result ti_load_held(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                   jitanon_jitdump **out, jitanon_error *err)
{
    const jitanon_membuf *dump = (const jitanon_membuf *)user;
    (void)path;
    return jitanon_jitdump_load_memory(dump->data, dump->size, opts, out, err);
}

static jitanon_result ti_load_via(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                  jitanon_jitdump **out, jitanon_error *err)
{
    const jitanon_membuf *dump = *(const jitanon_membuf **)user;
    (void)path;
    return jitanon_jitdump_load_memory(dump->data, dump->size, opts, out, err);
}

static int ti_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    ti_io *io = (ti_io *)user;
    jitanon_test_elf_file f;
    JT_CHECK(strcmp(dir, "/some/dir") == 0);
    io->elf_files++;
    strncpy(io->last_name, name, sizeof io->last_name - 1);
    if (jitanon_test_elf_parse(&f, data, size, NULL) != JITANON_OK) io->elf_ok = 0;
    return 0;
}

/* Zeroes `o` for a run in `layout` whose dumps come from ti_load_dump and whose files go
   to write_elf (NULL: the default), both over `user` (a ti_io, or a struct that starts
   with one). */
static void ti_opts(jitanon_inject_opts *o, jitanon_elf_layout layout, void *user,
                    int (*write_elf)(void *, const char *, const char *, const void *, size_t))
{
    memset(o, 0, sizeof *o);
    o->elf_layout = layout;
    o->io.load_dump = ti_load_dump;
    o->io.write_elf = write_elf;
    o->io.user = user;
}

typedef struct ti_out_rec {
    uint32_t type;
    uint64_t time, start, len, pgoff;
    char name[64];
} ti_out_rec;

/* What the checks look at in one output record. */
static void ti_out_set(ti_out_rec *x, const jitanon_perf_record *rec)
{
    memset(x, 0, sizeof *x);
    x->type = rec->type;
    x->time = rec->sid.time;
    if (rec->type == JITANON_PERF_RECORD_SAMPLE) x->start = rec->sample.ip;
    if (rec->type == JITANON_PERF_RECORD_MMAP2) {
        x->start = rec->mmap.start;
        x->len = rec->mmap.len;
        x->pgoff = rec->mmap.pgoff;
        memcpy(x->name, rec->mmap.filename.data, rec->mmap.filename.length < 63 ? rec->mmap.filename.length : 63);
    }
}

/* Injects the in-memory recording `perf` into `out` (appended) in `mode`. */
static jitanon_result ti_run(const jitanon_membuf *perf, const jitanon_inject_opts *o, jitanon_perf_mode mode,
                             jitanon_membuf *out, jitanon_inject_stats *st, jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_perf_writer w;
    jitanon_result res;
    memin in;
    in = memin_make(perf->data, perf->size, 0, 0);
    memset(&w, 0, sizeof w);
    res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, err);
    if (res == JITANON_OK) res = jitanon_perf_writer_init(&w, mode, 0, jdrec_sink(out), membuf_pwrite, NULL, err);
    if (res == JITANON_OK) res = jitanon_inject(&r, &w, o, st, err);
    jitanon_perf_writer_release(&w);
    jitanon_perf_reader_release(&r);
    return res;
}

/* A symbolizer's pass over `perf`, no output (o's callbacks see what it decides). */
static jitanon_result ti_run_no_output(const jitanon_membuf *perf, const jitanon_inject_opts *o,
                                       jitanon_inject_stats *st, jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_result res;
    memin in = memin_make(perf->data, perf->size, 0, 0);
    res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, err);
    if (res == JITANON_OK) res = jitanon_symbolize(&r, o, st, err);
    jitanon_perf_reader_release(&r);
    return res;
}

/* Decodes the records of an injector's output into `out` (at most `cap`); returns how many. */
static size_t ti_decode(const jitanon_membuf *result, ti_out_rec *out, size_t cap, jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    size_t n = 0;
    memin in = memin_make(result->data, result->size, 0, 0);
    JT_CHECK(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, err) == JITANON_OK);
    while (n < cap && jitanon_perf_reader_next(&r, &rec, err) == JITANON_OK) ti_out_set(&out[n++], &rec);
    jitanon_perf_reader_release(&r);
    return n;
}

/* Injects `perf` and decodes the output's records into `out` (at most 64). */
static jitanon_result ti_inject(const jitanon_membuf *perf, jitanon_inject_opts *o, ti_io *io, ti_out_rec *out,
                                size_t *n, jitanon_inject_stats *st, jitanon_error *err, jitanon_perf_mode out_mode)
{
    jitanon_membuf result;
    jitanon_result res;
    memset(&result, 0, sizeof result);
    result.allocator = o->allocator;
    o->io.load_dump = ti_load_dump;
    o->io.write_elf = ti_write_elf;
    o->io.user = io;
    *n = 0;
    res = ti_run(perf, o, out_mode, &result, st, err);
    if (res == JITANON_OK) *n = ti_decode(&result, out, 64, err);
    jitanon_membuf_release(&result);
    return res;
}

static size_t ti_count(const ti_out_rec *v, size_t n, uint32_t type, const char *name_prefix)
{
    size_t i, c = 0;
    for (i = 0; i < n; i++)
        if (v[i].type == type && (!name_prefix || !strncmp(v[i].name, name_prefix, strlen(name_prefix)))) c++;
    return c;
}

/* One scenario run: the recording, the dump, the options and what came out. */
typedef struct ti_case {
    jitanon_membuf perf;
    ti_io io;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    ti_out_rec v[64];
    size_t n;
} ti_case;

static void ti_case_begin(ti_case *c, int mono, jitanon_perf_mode mode, int give_dump)
{
    memset(c, 0, sizeof *c);
    c->o.elf_layout = JITANON_ELF_PER_FUNCTION; /* what these cases were written for; region: t_region.c */
    c->io.give_dump = give_dump;
    c->io.elf_ok = 1;
    ti_build_perf(&c->perf, mono, mode);
    ti_build_dump(&c->io.dump);
}

/* Injects with c->o (reset afterwards, so each run starts from defaults). */
static jitanon_result ti_case_run(ti_case *c, jitanon_perf_mode out_mode)
{
    jitanon_result r = ti_inject(&c->perf, &c->o, &c->io, c->v, &c->n, &c->st, &c->err, out_mode);
    if (r != JITANON_OK && r != JITANON_ERR_CLOCK) {
        char msg[256];
        jitanon_format_error(msg, sizeof msg, &c->err);
        fprintf(stderr, "  inject: %s\n", msg);
    }
    memset(&c->o, 0, sizeof c->o);
    c->o.elf_layout = JITANON_ELF_PER_FUNCTION;
    return r;
}

static size_t ti_case_count(const ti_case *c, uint32_t type, const char *name_prefix)
{
    return ti_count(c->v, c->n, type, name_prefix);
}

static void ti_case_end(ti_case *c)
{
    jitanon_membuf_release(&c->perf);
    jitanon_membuf_release(&c->io.dump);
}

static void test_inject_range_trims_only_overlaps(void)
{
    ti_case c;
    const ti_out_rec *v = c.v;
    size_t i, anon = 0;
    ti_case_begin(&c, 1, JITANON_PERF_FILE, 1);
    c.o.late = JITANON_LATE_KEEP; /* the pieces below are those of functions mapped from their loads */
    c.o.elf_files = JITANON_ELF_FILES_ALL;
    JT_CHECK(ti_case_run(&c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(c.io.elf_files, 4);
    JT_CHECK(c.io.elf_ok);
    JT_CHECK(strcmp(c.io.last_name, "jitted-100-3.so") == 0);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_FINISHED_ROUND, NULL), 2);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jit-"), 0); /* marker consumed */
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100-"), 4);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_SAMPLE, NULL), 4);
    for (i = 0; i < c.n; i++) {
        if (v[i].type != JITANON_PERF_RECORD_MMAP2 || strcmp(v[i].name, "//anon")) continue;
        /* every piece keeps pgoff - start constant, and none covers a live function */
        JT_CHECK_EQ_U(v[i].pgoff, v[i].start);
        if (v[i].time == 30) JT_CHECK(v[i].start == 0x10000 && v[i].len == 0x1000);
        /* t=50 covers f0 and f1 and the page mapped at t=30: only the new page is written;
           t=80 likewise (what identical //anon mappings already cover is not repeated) */
        if (v[i].time == 50) JT_CHECK(v[i].start == 0x11000 && v[i].len == 0x1000);
        if (v[i].time == 80) JT_CHECK(v[i].start == 0x12000 && v[i].len == 0x1000);
        anon++;
    }
    JT_CHECK_EQ_U(anon, 3);
    /* each synthesized mmap comes before the first record that is not older, and the
       round boundaries hold: no record after a FINISHED_ROUND is older than the round before */
    for (i = 0; i < c.n; i++) {
        if (v[i].type == JITANON_PERF_RECORD_MMAP2 && !strncmp(v[i].name, "/some/dir/jitted-", 17) && i > 0) {
            size_t k;
            for (k = 0; k < i; k++)
                if (v[k].type != JITANON_PERF_RECORD_FINISHED_ROUND) JT_CHECK(v[k].time < v[i].time);
        }
    }
    JT_CHECK_EQ_U(c.st.trim.loads, 4);
    JT_CHECK_EQ_U(c.st.trim.kept, 1);
    JT_CHECK_EQ_U(c.st.trim.split, 2);
    JT_CHECK_EQ_U(c.st.trim.pieces, 2);
    JT_CHECK_EQ_U(c.st.write.mmaps_synthesized, 4);
    JT_CHECK_EQ_U(c.st.write.records, c.n);
    ti_case_end(&c);
}

static void test_inject_modes_all_and_keep(void)
{
    ti_case c;
    ti_case_begin(&c, 1, JITANON_PERF_FILE, 1);
    c.o.anon_mode = JITANON_ANON_ALL;
    JT_CHECK(ti_case_run(&c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "//anon"), 0);
    c.o.anon_mode = JITANON_ANON_KEEP;
    JT_CHECK(ti_case_run(&c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "//anon"), 3);
    c.o.elf_layout = JITANON_ELF_PER_PROCESS;
    c.io.elf_files = 0;
    JT_CHECK(ti_case_run(&c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(c.io.elf_files, 1);
    JT_CHECK(strcmp(c.io.last_name, "jitted-100.so") == 0);
    /* f3, claimed early at t=80, again at its load (t=96) after the file mapped over it at t=95 */
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100.so"), 5);
    ti_case_end(&c);
}

/* The option enums still hold any int a caller stores: values past the last one are
   refused before anything is read or written. */
static void test_inject_enums_out_of_range(void)
{
    ti_case c;
    int k;
    ti_case_begin(&c, 1, JITANON_PERF_FILE, 1);
    for (k = 0; k < 3; k++) {
        memset(&c.o, 0, sizeof c.o);
        if (k == 0) c.o.anon_mode = (jitanon_anon_mode)3;
        if (k == 1) c.o.elf_layout = (jitanon_elf_layout)3; /* past JITANON_ELF_PER_FUNCTION */
        if (k == 2) c.o.elf_files = (jitanon_elf_files)3;
        c.io.elf_files = 0;
        JT_CHECK_EQ_U(ti_inject(&c.perf, &c.o, &c.io, c.v, &c.n, &c.st, &c.err, JITANON_PERF_FILE),
                      JITANON_ERR_INVALID_ARGUMENT);
        JT_CHECK(strstr(c.err.info, "anon_mode") != NULL);
        JT_CHECK(c.io.elf_files == 0 && c.st.read.records == 0);
    }
#if !defined(JITANON_NO_STDIO) && defined(__unix__)
    {
        jitanon_error err;
        /* refused before either path is opened: neither exists */
        JT_CHECK_EQ_U(jitanon_inject_file("/nonexistent/in.data", "/nonexistent/out.data", (jitanon_perf_mode)3, NULL,
                                          NULL, NULL, &err),
                      JITANON_ERR_INVALID_ARGUMENT);
        JT_CHECK(strstr(err.info, "out_mode") != NULL);
        JT_CHECK_EQ_U(jitanon_perf_copy_file("/nonexistent/in.data", "/nonexistent/out.data", (jitanon_perf_mode)3,
                                             NULL, &err),
                      JITANON_ERR_INVALID_ARGUMENT);
        /* a valid mode gets as far as opening the input */
        JT_CHECK_EQ_U(jitanon_perf_copy_file("/nonexistent/in.data", "/nonexistent/out.data", JITANON_PERF_SAME_MODE,
                                             NULL, &err),
                      JITANON_ERR_IO);
    }
#endif
    ti_case_end(&c);
}

static void test_inject_unusable_dump_changes_nothing(void)
{
    ti_case c;
    ti_case_begin(&c, 1, JITANON_PERF_FILE, 0);
    JT_CHECK(ti_case_run(&c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(c.st.dumps.failed, 1);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jit-100.dump"), 1);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "//anon"), 3);
    JT_CHECK_EQ_U(c.st.write.records, c.st.read.records);
    ti_case_end(&c);
}

static void test_inject_clock_mismatch(void)
{
    ti_case c;
    ti_case_begin(&c, 0, JITANON_PERF_FILE, 1);
    JT_CHECK(ti_case_run(&c, JITANON_PERF_FILE) == JITANON_ERR_CLOCK);
    JT_CHECK(strstr(c.err.info, "-k mono") != NULL);
    ti_case_end(&c);
}

static void test_inject_pipe_to_pipe_and_file(void)
{
    ti_case c;
    ti_case_begin(&c, 1, JITANON_PERF_PIPE, 1);
    JT_CHECK(ti_case_run(&c, JITANON_PERF_PIPE) == JITANON_OK);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100-"), 4);
    JT_CHECK_EQ_U(c.st.trim.pieces, 2);
    JT_CHECK(ti_case_run(&c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(ti_case_count(&c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100-"), 4);
    ti_case_end(&c);
}

static void test_inject_alloc_failures(void)
{
    jitanon_membuf perf;
    ti_io io;
    long k;
    memset(&io, 0, sizeof io);
    io.give_dump = io.elf_ok = 1;
    ti_build_perf(&perf, 1, JITANON_PERF_FILE);
    ti_build_dump(&io.dump);
    /* k < 400: without writer threads; from 400 on: with one (its ring and thread table) */
    for (k = 1; k < 800; k++) {
        jt_alloc a;
        jitanon_inject_opts o;
        jitanon_error err;
        ti_out_rec v[64];
        size_t n;
        jitanon_result r;
        memset(&o, 0, sizeof o);
        o.elf_layout = JITANON_ELF_PER_FUNCTION;
        o.allocator = jt_allocator(&a);
        o.elf.allocator = o.allocator;
        o.jitdump.allocator = o.allocator;
        o.elf_threads = k >= 400; /* one thread: ti_write_elf counts without a lock */
        a.fail_at = k >= 400 ? k - 399 : k;
        r = ti_inject(&perf, &o, &io, v, &n, NULL, &err, JITANON_PERF_FILE);
        JT_CHECK(r == JITANON_OK || jt_is_typed_error(r));
        JT_CHECK_EQ_U(a.live_bytes, 0);
        if (r == JITANON_OK && a.calls < a.fail_at) {
            if (k >= 400) break; /* no allocation left to fail */
            k = 399;
        }
    }
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.dump);
}

static void test_inject_marker_names(void)
{
    uint32_t pid = 0;
    JT_CHECK(jitanon_jitdump_is_marker("/tmp/jit-123.dump", 17, &pid) && pid == 123);
    JT_CHECK(jitanon_jitdump_is_marker("jit-1.dump", 10, NULL));
    JT_CHECK(!jitanon_jitdump_is_marker("/tmp/jit-.dump", 14, NULL));
    JT_CHECK(!jitanon_jitdump_is_marker("/tmp/jit-12a.dump", 17, NULL));
    JT_CHECK(!jitanon_jitdump_is_marker("/tmp/jit-12.dump.x", 18, NULL));
    JT_CHECK(!jitanon_jitdump_is_marker("/tmp/jit-99999999999.dump", 25, NULL));
    JT_CHECK(!jitanon_jitdump_is_marker("/jit-1.dump/x", 13, NULL));
    /* TSC conversion (perf-format.md 5.11): shift 10, mult 2^10 is the identity plus zero */
    {
        jitanon_perf_time_conv tc;
        memset(&tc, 0, sizeof tc);
        tc.time_shift = 10, tc.time_mult = 1024, tc.time_zero = 1000;
        JT_CHECK_EQ_U(jitanon_perf_tsc_to_time(&tc, 123456), 124456);
        tc.time_shift = 0, tc.time_mult = 3, tc.time_zero = 1, tc.extended = 1; /* no cap_user_time_zero */
        JT_CHECK_EQ_U(jitanon_perf_tsc_to_time(&tc, 5), 0);
        /* cap_user_time_short: only the cycles under time_mask count past time_cycles */
        tc.time_mult = 1, tc.time_zero = 0, tc.cap_user_time_zero = 1, tc.cap_user_time_short = 1;
        tc.time_cycles = 0x1000, tc.time_mask = 0xff;
        JT_CHECK_EQ_U(jitanon_perf_tsc_to_time(&tc, 0x1234), 0x1034);
    }
}

/* -- the contract, on random recordings ------------------------------------------------

   Random loads, //anon mmaps (each covering a random run of pages), file mmaps and
   samples, with unique times, written in rounds whose records are shuffled inside each
   round.  The output is replayed the way perf report does (sort by time, stable; later
   mappings win) and every sample is checked against the contract computed from the input:
   (a) in a function loaded before it and not replaced by a file mapping since: that
   function's ELF; (b) otherwise: what the input resolves it to. */

typedef struct ti_ev {
    uint32_t type;       /* SAMPLE, MMAP2, or 0 for a jit LOAD */
    uint64_t time, start, len, index;
    const char *name;
} ti_ev;

static uint64_t ti_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* perf's view: the latest (in processing order) mapping covering ip.  Mappings are kept
   in the order perf processes them. */
static const ti_out_rec *ti_perf_resolve(const ti_out_rec *const *maps, size_t n, uint64_t ip)
{
    while (n--)
        if (ip - maps[n]->start < maps[n]->len) return maps[n];
    return NULL;
}

static int ti_time_less(const void *a, const void *b)
{
    const ti_out_rec *x = *(const ti_out_rec *const *)a, *y = *(const ti_out_rec *const *)b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x < y ? -1 : x > y; /* stable: file order */
}

/* Replays records as perf report would and writes, per sample in time order, what it
   resolves to ("" when nothing). */
static size_t ti_replay(ti_out_rec *v, size_t n, char (*answers)[64], size_t max)
{
    const ti_out_rec **order = (const ti_out_rec **)malloc(n * sizeof *order);
    const ti_out_rec **maps = (const ti_out_rec **)malloc(n * sizeof *maps);
    size_t i, nm = 0, na = 0;
    for (i = 0; i < n; i++) order[i] = &v[i];
    qsort(order, n, sizeof *order, ti_time_less);
    for (i = 0; i < n; i++) {
        if (order[i]->type == JITANON_PERF_RECORD_MMAP2) maps[nm++] = order[i];
        if (order[i]->type == JITANON_PERF_RECORD_SAMPLE && na < max) {
            const ti_out_rec *m = ti_perf_resolve(maps, nm, order[i]->start);
            strcpy(answers[na], m ? m->name : "");
            if (m && strstr(m->name, "-r")) /* a region file: which of its bytes */
                sprintf(answers[na] + strlen(answers[na]), "@%llx",
                        (unsigned long long)(order[i]->start - m->start + m->pgoff));
            na++;
        }
    }
    free(order);
    free(maps);
    return na;
}

static void ti_random_case(uint64_t seed, int *failures, jitanon_anon_mode anon_mode, int quiet, jitanon_elf_layout layout)
{
    enum { NEV = 120, PAGE = 0x1000, BASE = 0x100000 };
    ti_ev ev[NEV];
    uint64_t s = seed * 2654435761u + 1, t = 100;
    size_t i, n = 0, k;
    uint8_t raw[128];
    ti_gen g;
    jitanon_error err;
    jitanon_membuf perf;
    ti_io io;
    jitanon_inject_opts o;
    ti_out_rec *in_recs, *out_recs;
    size_t nin = 0, nout = 0;
    char (*want)[64], (*got)[64];
    size_t nwant, ngot;
    jitanon_jitdump_writer jw;
    static const uint8_t code[PAGE] = {0xc3};
    /* events with unique times */
    memset(&io, 0, sizeof io);
    memset(&jw, 0, sizeof jw);
    jdrec_begin(&jw, jdrec_sink(&io.dump), 62, TI_PID, 1, 0, &err);
    for (i = 0; i < NEV; i++) {
        ti_ev *e = &ev[n++];
        uint64_t r = ti_rand(&s) % 10, page = ti_rand(&s) % 12;
        memset(e, 0, sizeof *e);
        t += 1 + ti_rand(&s) % 5;
        e->time = t;
        if (r < 3) { /* a jitted function somewhere in a page */
            e->type = 0;
            e->start = BASE + page * PAGE + (ti_rand(&s) % 16) * 0x40;
            e->len = 0x40 * (1 + ti_rand(&s) % 8);
            e->index = i;
            jdrec_write(&jw, jdrec_load(t, TI_PID, TI_PID, e->start, code, e->len, i, "f"), &err);
        } else if (r < 5) { /* a coalesced //anon over a run of pages */
            e->type = JITANON_PERF_RECORD_MMAP2;
            e->start = BASE + page * PAGE;
            e->len = PAGE * (1 + ti_rand(&s) % 6);
            e->name = "//anon";
        } else if (r < 6 && ti_rand(&s) % 3 == 0) { /* a file mapped over part of it */
            e->type = JITANON_PERF_RECORD_MMAP2;
            e->start = BASE + page * PAGE;
            e->len = PAGE;
            e->name = "/usr/lib/x.so";
        } else {
            e->type = JITANON_PERF_RECORD_SAMPLE;
            e->start = BASE + (ti_rand(&s) % (14 * PAGE));
        }
    }
    /* perf.data: marker first, then rounds of up to 6 records shuffled inside */
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 50, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_round(&g);
    for (i = 0; i < n; i += 6) {
        size_t idx[6], m = 0;
        for (k = i; k < n && k < i + 6; k++)
            if (ev[k].type) idx[m++] = k;
        for (k = m; k > 1; k--) { /* shuffle the round */
            size_t j = (size_t)(ti_rand(&s) % k), tmp = idx[k - 1];
            idx[k - 1] = idx[j];
            idx[j] = tmp;
        }
        for (k = 0; k < m; k++) {
            ti_ev *e = &ev[idx[k]];
            if (e->type == JITANON_PERF_RECORD_SAMPLE) ti_sample(&g, e->time, e->start);
            else ti_mmap(&g, e->time, e->start, e->len, e->start, e->name);
        }
        ti_round(&g);
    }
    jitanon_perf_writer_finish(&g.w, &err);
    jitanon_perf_writer_release(&g.w);
    /* expected answers: the input replayed, with (a) applied */
    in_recs = (ti_out_rec *)calloc(n + 1, sizeof *in_recs);
    want = (char (*)[64])calloc(n + 1, 64);
    got = (char (*)[64])calloc(n + 1, 64);
    for (i = 0; i < n; i++) {
        ti_out_rec *x = &in_recs[nin++];
        x->type = ev[i].type ? ev[i].type : JITANON_PERF_RECORD_MMAP2;
        x->time = ev[i].time;
        x->start = ev[i].start;
        x->len = ev[i].len;
        if (ev[i].type == 0) sprintf(x->name, "/some/dir/jitted-100-%u.so", (unsigned)ev[i].index);
        else if (ev[i].name) strcpy(x->name, ev[i].name);
    }
    /* Replaying input + loads with latest-wins, except that //anon never wins over a jit
       load, is exactly contract (a)+(b): compute it with the same replay by dropping the
       //anon parts that cover a load older than the //anon. */
    {
        char (*plain)[64] = (char (*)[64])calloc(n + 1, 64);
        size_t np, j2;
        /* (b): the input as recorded, without loads */
        ti_out_rec *only_in = (ti_out_rec *)calloc(n + 1, sizeof *only_in);
        size_t no = 0;
        for (i = 0; i < nin; i++)
            if (strncmp(in_recs[i].name, "/some/dir/jitted-", 17)) only_in[no++] = in_recs[i];
        np = ti_replay(only_in, no, plain, n);
        /* (a): per sample, the latest load covering it with no later file mapping */
        nwant = 0;
        for (i = 0; i < n; i++) {
            int found = 0;
            if (ev[i].type != JITANON_PERF_RECORD_SAMPLE) continue;
            for (j2 = i; j2-- > 0;) {
                if (ev[j2].type == JITANON_PERF_RECORD_MMAP2 && strcmp(ev[j2].name, "//anon") &&
                    ev[i].start - ev[j2].start < ev[j2].len)
                    break; /* a file replaced it since */
                if (ev[j2].type == 0 && ev[i].start - ev[j2].start < ev[j2].len) {
                    if (layout == JITANON_ELF_PER_REGION) /* resolved below, from its MMAP2 */
                        sprintf(want[nwant], "#%u %u", (unsigned)j2, (unsigned)i);
                    else sprintf(want[nwant], "/some/dir/jitted-100-%u.so", (unsigned)ev[j2].index);
                    found = 1;
                    break;
                }
            }
            if (!found && nwant < np) strcpy(want[nwant], plain[nwant]);
            nwant++;
        }
        free(plain);
        free(only_in);
    }
    /* inject and replay the output */
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    o.anon_mode = anon_mode;
    o.elf_layout = layout;
    o.late = JITANON_LATE_KEEP; /* the model maps a function from its LOAD (late names: tl_case) */
    io.give_dump = io.elf_ok = 1;
    out_recs = (ti_out_rec *)calloc(64, sizeof *out_recs);
    {
        /* ti_inject decodes at most 64 records: decode the whole output here instead */
        jitanon_perf_reader r;
        jitanon_membuf result;
        jitanon_perf_record rec;
        memin in;
        size_t cap = 64;
        memset(&result, 0, sizeof result);
        o.io.load_dump = ti_load_dump;
        o.io.write_elf = ti_write_elf;
        o.io.user = &io;
        JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &result, NULL, &err) == JITANON_OK);
        in = memin_make(result.data, result.size, 0, 0);
        JT_CHECK(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err) == JITANON_OK);
        while (jitanon_perf_reader_next(&r, &rec, &err) == JITANON_OK) {
            if (nout == cap) {
                out_recs = (ti_out_rec *)realloc(out_recs, (cap *= 2) * sizeof *out_recs);
            }
            ti_out_set(&out_recs[nout++], &rec);
        }
        jitanon_perf_reader_release(&r);
        jitanon_membuf_release(&result);
    }
    /* Region files: the LOAD's bytes are those at its MMAP2's pgoff (times are unique, so
       its MMAP2 is the one of its time and start); its file mirrors addresses, so every
       slice sits at start - pgoff = the file's base. */
    for (i = 0; i < nwant; i++) {
        unsigned l, smp;
        size_t q;
        if (want[i][0] != '#' || sscanf(want[i], "#%u %u", &l, &smp) != 2) continue;
        /* its mapping: the last MMAP2 of a jitted file over the sample by its load (a claim
           maps a run of functions ahead of their loads, jitanon__inj_claim; code over
           unsampled code of a region file may keep that file's mappings; t_region checks
           the bytes there) */
        for (q = nout; q-- > 0;)
            if (out_recs[q].type == JITANON_PERF_RECORD_MMAP2 && out_recs[q].time <= ev[l].time &&
                strstr(out_recs[q].name, "/jitted-") && ev[smp].start - out_recs[q].start < out_recs[q].len) {
                if (strstr(out_recs[q].name, "-r")) /* (code later overlaid keeps a file of its own) */
                    sprintf(want[i], "%s@%llx", out_recs[q].name,
                            (unsigned long long)(ev[smp].start - out_recs[q].start + out_recs[q].pgoff));
                else strcpy(want[i], out_recs[q].name);
                break;
            }
    }
    ngot = ti_replay(out_recs, nout, got, n);
    JT_CHECK_EQ_U(ngot, nwant);
    for (i = 0; i < ngot && i < nwant; i++)
        if (strcmp(got[i], want[i])) {
            if (++*failures <= 3 && !quiet) {
                size_t q, si = 0;
                fprintf(stderr, "  seed %u sample %u: got '%s', contract says '%s'\n", (unsigned)seed, (unsigned)i,
                        got[i], want[i]);
                for (q = 0; q < n; q++) {
                    if (ev[q].type == JITANON_PERF_RECORD_SAMPLE && si++ == i) {
                        size_t z;
                        for (z = 0; z <= q; z++)
                            if (ev[z].type != JITANON_PERF_RECORD_SAMPLE && ev[q].start - ev[z].start < ev[z].len)
                                fprintf(stderr, "    t=%u %s [%#x,+%#x) idx %u\n", (unsigned)ev[z].time,
                                        ev[z].type ? ev[z].name : "LOAD", (unsigned)ev[z].start, (unsigned)ev[z].len,
                                        (unsigned)ev[z].index);
                        fprintf(stderr, "    t=%u sample %#x\n", (unsigned)ev[q].time, (unsigned)ev[q].start);
                        break;
                    }
                }
            }
            if (!quiet) jt.cur_failed++;
            break;
        }
    free(in_recs);
    free(out_recs);
    free(want);
    free(got);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.dump);
}

static void test_inject_contract_random(void)
{
    uint64_t seed;
    int failures = 0;
    for (seed = 1; seed <= 300; seed++) ti_random_case(seed, &failures, JITANON_ANON_RANGE, 0, JITANON_ELF_PER_FUNCTION);
    /* the region layout keeps it: every sample lands on its function's bytes */
    for (seed = 1; seed <= 300; seed++) ti_random_case(seed, &failures, JITANON_ANON_RANGE, 0, JITANON_ELF_PER_REGION);
    /* negative controls: perf's way and no stripping both break the contract somewhere */
    failures = 0;
    for (seed = 1; seed <= 50; seed++) ti_random_case(seed, &failures, JITANON_ANON_ALL, 1, JITANON_ELF_PER_FUNCTION);
    JT_CHECK(failures > 0);
    failures = 0;
    for (seed = 1; seed <= 50; seed++) ti_random_case(seed, &failures, JITANON_ANON_KEEP, 1, JITANON_ELF_PER_FUNCTION);
    JT_CHECK(failures > 0);
}

static void ti_on_sample_record(void *user, const jitanon_inject_sample *si)
{
    ti_seen *s = &((ti_io *)user)->seen;
    size_t len = si->name.length < 31 ? si->name.length : 31;
    if (s->n < 8) {
        s->kind[s->n] = si->kind;
        if (len) memcpy(s->name[s->n], si->name.data, len);
        s->name[s->n][len] = 0;
    }
    s->n++;
}

/* The profiler's side: no writer, no ELF, every sample resolved in time order. */
/* Resolves ti_build_perf's samples with no writer; `io` (zeroed by the caller) is
   the first member of what on_sample gets. */
static void ti_resolve_run(ti_io *io, void (*on_sample)(void *, const jitanon_inject_sample *), jitanon_late_mode late)
{
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_error err;
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    io->give_dump = 1;
    ti_build_perf(&perf, 1, JITANON_PERF_FILE);
    ti_build_dump(&io->dump);
    o.io.load_dump = ti_load_dump;
    o.io.write_elf = ti_write_elf;
    o.io.user = io;
    o.on_sample = on_sample;
    o.late = late;
    JT_CHECK(ti_run_no_output(&perf, &o, NULL, &err) == JITANON_OK);
    jitanon_membuf_release(&perf);
}

static void test_inject_resolve_only(void)
{
    ti_io io;
    memset(&io, 0, sizeof io);
    int pass;
    for (pass = 0; pass < 2; pass++) {
        memset(&io, 0, sizeof io);
        ti_resolve_run(&io, ti_on_sample_record, pass ? JITANON_LATE_AUTO : JITANON_LATE_KEEP);
        JT_CHECK_EQ_U(io.elf_files, 0);
        JT_CHECK_EQ_U(io.seen.n, 4);
        /* in time order: t=60 f0, t=61 a stub in //anon, t=62 f2's code before its load at 70
           (//anon with KEEP; f2 by default: nothing else was ever there), t=90 f2 */
        JT_CHECK(io.seen.kind[0] == JITANON_TRIM_JIT && !strcmp(io.seen.name[0], "f0"));
        JT_CHECK(io.seen.kind[1] == JITANON_TRIM_ANON && !strcmp(io.seen.name[1], "//anon"));
        JT_CHECK(pass ? io.seen.kind[2] == JITANON_TRIM_JIT && !strcmp(io.seen.name[2], "f2")
                      : io.seen.kind[2] == JITANON_TRIM_ANON);
        JT_CHECK(io.seen.kind[3] == JITANON_TRIM_JIT && !strcmp(io.seen.name[3], "f2"));
        jitanon_membuf_release(&io.dump);
    }
}

/* jitanon_inject_sample_resolve: any address of the process, named as it is at the
   sample's moment (f2's code is //anon until its load at t=70). */
typedef struct ti_probe {
    ti_io io; /* first: the io callbacks take the same user pointer */
    unsigned n, bad;
    uint64_t time[8];
    jitanon_trim_kind kind[8][4];
    char name[8][4][20];
} ti_probe;

static void ti_on_sample_probe(void *user, const jitanon_inject_sample *si)
{
    ti_probe *p = (ti_probe *)user;
    const uint64_t at[4] = {0x10210, 0x11010, 0x400010, 0x900000}; /* f1, f2, a file, nothing */
    size_t i;
    if (p->n >= 8) return;
    for (i = 0; i < 4; i++) {
        jitanon_inject_sample f;
        jitanon_trim_kind k = jitanon_inject_sample_resolve(si, at[i], &f);
        size_t len = f.name.length < 19 ? f.name.length : 19;
        if (k != f.kind || f.ip != at[i] || f.pid != si->pid || f.time != si->time || f.callchain_nr != si->callchain_nr)
            p->bad++;
        p->kind[p->n][i] = k;
        if (len) memcpy(p->name[p->n][i], f.name.data, len);
        p->name[p->n][i][len] = 0;
    }
    p->time[p->n++] = si->time;
}

static void test_inject_sample_resolve(void)
{
    ti_probe pr;
    unsigned i;
    memset(&pr, 0, sizeof pr);
    ti_resolve_run(&pr.io, ti_on_sample_probe, JITANON_LATE_KEEP);
    JT_CHECK_EQ_U(pr.n, 4);
    JT_CHECK_EQ_U(pr.bad, 0);
    for (i = 0; i < pr.n && i < 4; i++) {
        int late = pr.time[i] >= 70;
        JT_CHECK(pr.kind[i][0] == JITANON_TRIM_JIT && !strcmp(pr.name[i][0], "f1"));
        JT_CHECK(pr.kind[i][1] == (late ? JITANON_TRIM_JIT : JITANON_TRIM_ANON));
        JT_CHECK(!strcmp(pr.name[i][1], late ? "f2" : "//anon"));
        JT_CHECK(pr.kind[i][2] == JITANON_TRIM_FILE && !strcmp(pr.name[i][2], "/usr/bin/fakejit"));
        JT_CHECK(pr.kind[i][3] == JITANON_TRIM_NONE && !pr.name[i][3][0]);
    }
    JT_CHECK(pr.time[3] >= 70);
    jitanon_membuf_release(&pr.io.dump);
}

#if JITANON__POSIX
/* Untrusted recordings: ELF files never follow a symlink and never replace a file that
   is not a jitted stub; an existing stub is replaced, a missing one created. */
static void test_inject_elf_files_safe(void)
{
    char dir[] = "build/elfsafe-XXXXXX", p[256], t[256];
    static const uint8_t stub[20] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 62, 0};
    FILE *f;
    uint8_t back[64];
    size_t n;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    sprintf(t, "%s/target", dir);
    f = fopen(t, "w");
    fputs("precious", f);
    fclose(f);
    sprintf(p, "%s/jitted-1-0.so", dir);
    JT_CHECK(symlink("target", p) == 0);
    JT_CHECK(jitanon__inj_write_default(NULL, dir, "jitted-1-0.so", stub, sizeof stub) != 0);
    f = fopen(t, "r");
    n = fread(back, 1, sizeof back, f);
    fclose(f);
    JT_CHECK(n == 8 && !memcmp(back, "precious", 8));
    sprintf(p, "%s/jitted-1-1.so", dir);
    f = fopen(p, "w");
    fputs("not an ELF file, somebody's data", f);
    fclose(f);
    JT_CHECK(jitanon__inj_write_default(NULL, dir, "jitted-1-1.so", stub, sizeof stub) != 0);
    sprintf(p, "%s/jitted-1-2.so", dir);
    f = fopen(p, "w");
    fwrite(stub, 1, sizeof stub, f);
    fputs("older", f);
    fclose(f);
    JT_CHECK(jitanon__inj_write_default(NULL, dir, "jitted-1-2.so", stub, sizeof stub) == 0);
    f = fopen(p, "r");
    JT_CHECK(fread(back, 1, sizeof back, f) == sizeof stub);
    fclose(f);
    JT_CHECK(jitanon__inj_write_default(NULL, dir, "jitted-1-3.so", stub, sizeof stub) == 0);
    JT_CHECK(jitanon__inj_write_default(NULL, dir, "jitted-1-3.so", stub, sizeof stub) == 0); /* identical: kept */
    remove(t);
    sprintf(p, "%s/jitted-1-0.so", dir), remove(p);
    sprintf(p, "%s/jitted-1-1.so", dir), remove(p);
    sprintf(p, "%s/jitted-1-2.so", dir), remove(p);
    sprintf(p, "%s/jitted-1-3.so", dir), remove(p);
    JT_CHECK(rmdir(dir) == 0); /* nothing else (no temporary file) was left */
}
#endif

#if JITANON__POSIX
/* perf's build-id cache: the layout perf reads (<cache>/<absolute path>/<hex>/elf, a hard
   link of the file; .build-id/<xx>/<rest> -> ../../<path>/<hex>), idempotent; planted
   symlinks and ".." never lead out of it; the directory from $PERF_BUILDID_DIR, perf's
   config or ~/.debug. */
static void test_inject_buildid_cache_layout(void)
{
    static const uint8_t stub[20] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 62, 0};
    char dir[] = "build/bcache-XXXXXX", p[4096], q[4096], cwd[2048], hex[41], got[4200], env[3][512], cmd[256];
    const char *names[3] = {"HOME", "PERF_CONFIG", "PERF_BUILDID_DIR"};
    uint8_t id[20];
    jitanon_buildid_cache c;
    jitanon_error err;
    struct stat a, b;
    ssize_t n;
    FILE *f;
    int i, had[3];
    if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    for (i = 0; i < 20; i++) id[i] = (uint8_t)(0xab + 7 * i);
    jitanon__bc_hex(id, hex);
    sprintf(p, "%s/elfs", dir);
    JT_CHECK(mkdir(p, 0755) == 0);
    sprintf(p, "%s/elfs/jitted-1-0.so", dir);
    f = fopen(p, "wb");
    fwrite(stub, 1, sizeof stub, f);
    fclose(f);
    sprintf(q, "%s/cache/sub", dir); /* created with its parents */
    JT_CHECK(jitanon_buildid_cache_open(&c, q, &err) == JITANON_OK);
    JT_CHECK(jitanon_buildid_cache_add(&c, p, id, &err) == JITANON_OK);
    JT_CHECK(jitanon_buildid_cache_add(&c, p, id, &err) == JITANON_OK); /* already there */
    sprintf(q, "%s/cache/sub%s/%s/elfs/jitted-1-0.so/%s/elf", dir, cwd, dir, hex);
    JT_CHECK(stat(p, &a) == 0 && lstat(q, &b) == 0 && S_ISREG(b.st_mode) && a.st_ino == b.st_ino); /* a hard link */
    sprintf(q, "%s/cache/sub/.build-id/ab/%s", dir, hex + 2);
    n = readlink(q, got, sizeof got - 1);
    JT_CHECK(n > 0);
    got[n > 0 ? n : 0] = 0;
    sprintf(q, "../..%s/%s/elfs/jitted-1-0.so/%s", cwd, dir, hex);
    JT_CHECK(!strcmp(got, q));
    /* a planted symlink at .build-id/<xx> pointing outside: refused, nothing written there */
    id[0] = 0xcd;
    sprintf(q, "%s/outside", dir);
    JT_CHECK(mkdir(q, 0755) == 0);
    sprintf(q, "%s/cache/sub/.build-id/cd", dir);
    JT_CHECK(symlink("../../../outside", q) == 0);
    JT_CHECK(jitanon_buildid_cache_add(&c, p, id, &err) == JITANON_ERR_IO);
    sprintf(q, "%s/outside", dir);
    JT_CHECK(rmdir(q) == 0); /* still empty */
    JT_CHECK(jitanon__bc_walk(c.fd_, "a/../b") < 0 && errno == EINVAL);
    JT_CHECK(jitanon_buildid_cache_add(&c, "no-such-dir/jitted-1-0.so", id, &err) == JITANON_ERR_IO);
    jitanon_buildid_cache_release(&c);
    /* where the cache is: $PERF_BUILDID_DIR, else buildid.dir of $PERF_CONFIG, else ~/.debug */
    for (i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        had[i] = v != NULL;
        snprintf(env[i], sizeof env[i], "%s", v ? v : "");
    }
    sprintf(q, "%s/perfconfig", dir);
    f = fopen(q, "w");
    fputs("# perf config\n[report]\n\tdir = /not/this\n[BuildId]\n\tdir = \"/x/y z\" ; comment\n", f);
    fclose(f);
    setenv("HOME", "/h", 1);
    setenv("PERF_CONFIG", q, 1);
    unsetenv("PERF_BUILDID_DIR");
    JT_CHECK(jitanon_buildid_cache_dir(got, sizeof got, &err) == JITANON_OK && !strcmp(got, "/x/y z"));
    setenv("PERF_BUILDID_DIR", "/b", 1);
    JT_CHECK(jitanon_buildid_cache_dir(got, sizeof got, &err) == JITANON_OK && !strcmp(got, "/b"));
    unsetenv("PERF_BUILDID_DIR");
    setenv("PERF_CONFIG", "", 1); /* perf then reads no config file */
    JT_CHECK(jitanon_buildid_cache_dir(got, sizeof got, &err) == JITANON_OK && !strcmp(got, "/h/.debug"));
    for (i = 0; i < 3; i++)
        if (had[i]) setenv(names[i], env[i], 1);
        else unsetenv(names[i]);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    JT_CHECK(system(cmd) == 0);
}
#endif

/* The build-id the output's table and the cache give a file is the one in its note, for
   64- and 32-bit ELF of either byte order; a cut-short file yields none (and reads nothing
   past its end). */
static void test_inject_elf_build_id_note(void)
{
    static const uint8_t code[4] = {0x90, 0x90, 0x90, 0xc3};
    static const uint32_t mach[3] = {62, 3, 21}; /* x86-64, i386, ppc64 */
    int k;
    for (k = 0; k < 3; k++) {
        jitanon_jitdump_header h;
        jitanon_elf_func fn;
        jitanon_membuf m;
        jitanon_elf_info info;
        jitanon_error err;
        uint8_t id[20];
        size_t n;
        int cut = 0;
        memset(&h, 0, sizeof h);
        memset(&fn, 0, sizeof fn);
        memset(&m, 0, sizeof m);
        h.elf_mach = mach[k];
        h.big_endian = k == 2;
        fn.name.data = "f";
        fn.name.length = 1;
        fn.code_addr = 0x1000;
        fn.code.data = code;
        fn.code.size = sizeof code;
        JT_CHECK(jitanon_elf_write_function(jdrec_sink(&m), &h, &fn, NULL, &info, &err) == JITANON_OK);
        JT_CHECK(jitanon__inj_elf_id(m.data, m.size, id) && !memcmp(id, info.build_id, 20));
        for (n = 0; n < m.size; n++) {
            uint8_t *copy = (uint8_t *)malloc(n ? n : 1);
            memcpy(copy, m.data, n);
            cut += jitanon__inj_elf_id(copy, n, id) && memcmp(id, info.build_id, 20) != 0;
            free(copy);
        }
        JT_CHECK(cut == 0);
        jitanon_membuf_release(&m);
    }
}

/* A process that opens a second jitdump (say after an exec) keeps the first one's files. */
static void test_inject_second_dump_same_pid(void)
{
    jitanon_membuf perf;
    ti_io io;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    ti_out_rec v[64];
    size_t n;
    ti_gen g;
    uint8_t raw[128];
    memset(&io, 0, sizeof io);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    io.give_dump = io.elf_ok = 1;
    ti_build_dump(&io.dump);
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_sample(&g, 60, 0x10010);
    ti_mmap(&g, 100, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_sample(&g, 110, 0x10010);
    ti_gen_end(&g);
    o.elf_files = JITANON_ELF_FILES_ALL;
    JT_CHECK(ti_inject(&perf, &o, &io, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(st.dumps.loaded, 2);
    JT_CHECK_EQ_U(io.elf_files, 8);
    JT_CHECK(strcmp(io.last_name, "jitted-100.1-3-0.so") == 0);
    JT_CHECK_EQ_U(ti_count(v, n, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100-"), 4);
    JT_CHECK_EQ_U(ti_count(v, n, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100.1-"), 4);
    o.elf_layout = JITANON_ELF_PER_PROCESS;
    io.elf_files = 0;
    JT_CHECK(ti_inject(&perf, &o, &io, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(io.elf_files, 2);
    JT_CHECK(strcmp(io.last_name, "jitted-100.1.so") == 0);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.dump);
}

#if JITANON__THREADS
/* Writer threads change when files are written, never what comes out: with failures
   (every fifth name), reused code indices and MOVEs, the output records, statistics, log
   lines and files are the same as when the calling thread writes every file. */
typedef struct tt_file {
    char name[40];
    size_t size;
    uint64_t hash;
} tt_file;

typedef struct tt_io {
    ti_io base; /* first: ti_load_dump takes the user pointer as a ti_io */
    pthread_mutex_t mu;
    pthread_t caller;
    tt_file files[1024];
    size_t nfiles;
    int log_off_caller, no_fail;
    uint64_t hit[1024]; /* code addresses samples resolved to (on_sample) */
    size_t nhit;
    jitanon_membuf log;
    const jitanon_thread_pool *pool; /* io.thread_pool (tests/t_seam.c) */
} tt_io;

static uint64_t tt_hash(const void *data, size_t size)
{
    const uint8_t *p = (const uint8_t *)data;
    uint64_t h = 1469598103934665603u;
    while (size--) h = (h ^ *p++) * 1099511628211u;
    return h;
}

static int tt_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    tt_io *io = (tt_io *)user;
    int fail = !io->no_fail && tt_hash(name, strlen(name)) % 5 == 0;
    (void)dir;
    pthread_mutex_lock(&io->mu);
    if (!fail && io->nfiles < 1024) {
        tt_file *f = &io->files[io->nfiles++];
        snprintf(f->name, sizeof f->name, "%s", name);
        f->size = size;
        f->hash = tt_hash(data, size);
    }
    pthread_mutex_unlock(&io->mu);
    return fail;
}

static void tt_log(void *user, const char *msg)
{
    tt_io *io = (tt_io *)user;
    if (!pthread_equal(pthread_self(), io->caller)) io->log_off_caller = 1;
    jitanon_membuf_write(&io->log, msg, strlen(msg) + 1);
}

static int tt_file_cmp(const void *a, const void *b)
{
    return strcmp(((const tt_file *)a)->name, ((const tt_file *)b)->name);
}

static void tt_on_sample(void *user, const jitanon_inject_sample *si)
{
    tt_io *io = (tt_io *)user;
    size_t i;
    if (si->kind != JITANON_TRIM_JIT) return;
    for (i = 0; i < io->nhit; i++)
        if (io->hit[i] == si->start) return;
    if (io->nhit < 1024) io->hit[io->nhit++] = si->start;
}

static void tt_run_mode(const jitanon_membuf *perf, uint32_t threads, jitanon_elf_files elf_files,
                        jitanon_perf_mode mode, tt_io *io, jitanon_membuf *out, jitanon_inject_stats *st)
{
    jitanon_inject_opts o;
    jitanon_error err;
    ti_opts(&o, JITANON_ELF_PER_FUNCTION, io, tt_write_elf);
    o.elf_threads = threads;
    o.elf_files = elf_files;
    o.on_sample = tt_on_sample;
    o.io.log = tt_log;
    o.io.thread_pool = io->pool;
    io->caller = pthread_self();
    JT_CHECK(ti_run(perf, &o, mode, out, st, &err) == JITANON_OK);
    qsort(io->files, io->nfiles, sizeof io->files[0], tt_file_cmp);
}

static void tt_run(const jitanon_membuf *perf, uint32_t threads, tt_io *io, jitanon_membuf *out,
                   jitanon_inject_stats *st)
{
    tt_run_mode(perf, threads, JITANON_ELF_FILES_ALL, JITANON_PERF_FILE, io, out, st);
}

/* 600 functions (every tenth reuses an index, every seventh moved later), //anon mmaps
   growing over them, two samples per round. */
static void tt_scenario(jitanon_membuf *dump, jitanon_membuf *perf)
{
    enum { N = 600 };
    static const uint8_t code[0x80] = {0x90, 0x90, 0xc3};
    jitanon_jitdump_writer jw;
    jitanon_jitdump_debug_entry e;
    jitanon_error err;
    uint8_t raw[128];
    ti_gen g;
    size_t i;
    char name[16];
    memset(&jw, 0, sizeof jw);
    memset(&e, 0, sizeof e);
    e.lineno = 7;
    e.file.data = "t.js";
    e.file.length = 4;
    JT_CHECK(jdrec_begin(&jw, jdrec_sink(dump), 62, TI_PID, 1, 0, &err) == JITANON_OK);
    for (i = 0; i < N; i++) {
        uint64_t addr = 0x100000 + i * 0x100, index = i % 10 == 9 ? i - 5 : i;
        sprintf(name, "fn%u", (unsigned)i);
        e.addr = addr;
        if (i % 3 == 0) JT_CHECK(jitanon_jitdump_write_debug_info(&jw, 100 + 2 * i, addr, &e, 1, &err) == JITANON_OK);
        JT_CHECK(jdrec_write(&jw, jdrec_load(100 + 2 * i, TI_PID, TI_PID, addr, code, sizeof code, index, name), &err) == JITANON_OK);
        if (i % 7 == 6) /* moves of earlier code, some of it written under a reused index */
            JT_CHECK(jdrec_write(&jw, jdrec_move(101 + 2 * i, TI_PID, TI_PID, 0x100000 + (i - 6) * 0x100, 0x800000 + i * 0x100, sizeof code, i - 6 - (i % 4)), &err) == JITANON_OK);
    }
    memset(perf, 0, sizeof *perf);
    ti_gen_begin(&g, raw, 1, perf, JITANON_PERF_FILE);
    ti_mmap(&g, 50, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_round(&g);
    for (i = 0; i < 40; i++) {
        ti_mmap(&g, 60 + 40 * i, 0x100000, 0x1000 * (1 + i), 0, "//anon");
        ti_sample(&g, 61 + 40 * i, 0x100000 + (i * 0x1234) % (N * 0x100));
        ti_sample(&g, 62 + 40 * i, 0x800000 + (i * 0x777) % (N * 0x100));
        ti_round(&g);
    }
    jitanon_perf_writer_finish(&g.w, &err);
    jitanon_perf_writer_release(&g.w);
}

static void test_inject_threads_same_output(void)
{
    static tt_io io[3];
    jitanon_membuf perf, out[3];
    jitanon_inject_stats st[3];
    uint32_t threads[3] = {0, 1, 4};
    size_t k;
    memset(io, 0, sizeof io);
    memset(out, 0, sizeof out);
    tt_scenario(&io[0].base.dump, &perf);
    for (k = 1; k < 3; k++) jitanon_membuf_write(&io[k].base.dump, io[0].base.dump.data, io[0].base.dump.size);
    for (k = 0; k < 3; k++) {
        io[k].base.give_dump = 1;
        pthread_mutex_init(&io[k].mu, NULL);
        tt_run(&perf, threads[k], &io[k], &out[k], &st[k]);
        pthread_mutex_destroy(&io[k].mu);
        JT_CHECK(!io[k].log_off_caller);
    }
    JT_CHECK(st[0].elf.refused > 0 && st[0].elf.files > 0 && st[0].trim.moves > 0);
    JT_CHECK_EQ_U(st[0].elf.files, io[0].nfiles);
    JT_CHECK_EQ_U(st[0].write.mmaps_synthesized, st[0].trim.loads + st[0].trim.moves);
    for (k = 1; k < 3; k++) {
        JT_CHECK(out[k].size == out[0].size && !memcmp(out[k].data, out[0].data, out[0].size));
        JT_CHECK(!memcmp(&st[k], &st[0], sizeof st[0]));
        JT_CHECK(io[k].log.size == io[0].log.size && !memcmp(io[k].log.data, io[0].log.data, io[0].log.size));
        JT_CHECK(io[k].nfiles == io[0].nfiles && !memcmp(io[k].files, io[0].files, io[0].nfiles * sizeof io[0].files[0]));
    }
    for (k = 0; k < 3; k++) {
        jitanon_membuf_release(&out[k]);
        jitanon_membuf_release(&io[k].log);
        jitanon_membuf_release(&io[k].base.dump);
    }
    jitanon_membuf_release(&perf);
}

/* File-mode perf.data in memory (little-endian): where the data section ends, and the
   number of entries of its build-id table naming a jitted file (0 without one). */
static uint64_t tt_u64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static size_t tt_records_end(const jitanon_membuf *b)
{
    return b->size < 104 ? 0 : (size_t)(tt_u64(b->data + 40) + tt_u64(b->data + 48));
}

static size_t tt_jitted_build_ids(const jitanon_membuf *b)
{
    size_t end = tt_records_end(b), n = 0;
    uint64_t off, size;
    int bit, idx = 0;
    if (!end || !(b->data[72] & 4)) return 0;
    for (bit = 1; bit < 2; bit++) idx += (b->data[72] >> bit) & 1; /* sections in bit order */
    off = tt_u64(b->data + end + 16 * (size_t)idx);
    size = tt_u64(b->data + end + 16 * (size_t)idx + 8);
    while (size >= 36 && off + size <= b->size) {
        size_t rs = (size_t)(b->data[off + 6] | b->data[off + 7] << 8);
        if (rs < 36 || rs > size) break;
        if (b->data[off + rs - 1] == 0 && strstr((const char *)b->data + off + 36, "jitted-")) n++;
        off += rs;
        size -= rs;
    }
    return n;
}

#if JITANON__POSIX
/* The build-id table lists every file written and the cache gets each one, the same with
   writer threads as without; files that exist only in memory (custom io.write_elf) are
   copied into the cache; a second run into the same cache finds them there. */
static void test_inject_buildid_table_and_cache(void)
{
    static tt_io io[3];
    jitanon_membuf perf, out[3];
    jitanon_inject_stats st[3];
    jitanon_buildid_cache c[2];
    jitanon_inject_opts o;
    jitanon_error err;
    char dir[] = "build/bctab-XXXXXX", q[256], cmd[256];
    struct stat sb;
    size_t k;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    memset(io, 0, sizeof io);
    memset(out, 0, sizeof out);
    tt_scenario(&io[0].base.dump, &perf);
    for (k = 0; k < 3; k++) {
        if (k) jitanon_membuf_write(&io[k].base.dump, io[0].base.dump.data, io[0].base.dump.size);
        io[k].base.give_dump = io[k].no_fail = 1;
        pthread_mutex_init(&io[k].mu, NULL);
        if (k < 2) {
            sprintf(q, "%s/cache%u", dir, (unsigned)k);
            JT_CHECK(jitanon_buildid_cache_open(&c[k], q, &err) == JITANON_OK);
        }
        ti_opts(&o, JITANON_ELF_PER_FUNCTION, &io[k], tt_write_elf);
        o.elf_files = JITANON_ELF_FILES_ALL;
        o.elf_threads = k == 1 ? 3 : 0;
        o.io.log = tt_log;
        o.buildid_cache = &c[k == 2 ? 0 : k];
        io[k].caller = pthread_self();
        JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out[k], &st[k], &err) == JITANON_OK);
        JT_CHECK(st[k].elf.files > 100 && st[k].elf.files == io[k].nfiles);
        JT_CHECK_EQ_U(st[k].buildid.entries, st[k].elf.files);
        JT_CHECK_EQ_U(st[k].buildid.cached, st[k].elf.files);
        JT_CHECK_EQ_U(st[k].buildid.cache_failed, 0);
        JT_CHECK_EQ_U(tt_jitted_build_ids(&out[k]), st[k].elf.files);
        pthread_mutex_destroy(&io[k].mu);
    }
    for (k = 1; k < 3; k++) JT_CHECK(out[k].size == out[0].size && !memcmp(out[k].data, out[0].data, out[0].size));
    sprintf(q, "%s/cache1/some/dir/jitted-100-5.so", dir);
    JT_CHECK(stat(q, &sb) == 0 && S_ISDIR(sb.st_mode));
    sprintf(q, "%s/cache1/.build-id", dir);
    JT_CHECK(stat(q, &sb) == 0 && S_ISDIR(sb.st_mode));
    for (k = 0; k < 3; k++) {
        jitanon_membuf_release(&out[k]);
        jitanon_membuf_release(&io[k].log);
        jitanon_membuf_release(&io[k].base.dump);
    }
    jitanon_buildid_cache_release(&c[0]);
    jitanon_buildid_cache_release(&c[1]);
    jitanon_membuf_release(&perf);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    JT_CHECK(system(cmd) == 0);
}
#endif

/* --elf-files=sampled: the same output records; only the files of functions a sample
   resolved into, each the same bytes as with every file written; a pipe gets them all. */
static void test_inject_sampled_files(void)
{
    static tt_io io[4];
    jitanon_membuf perf, out[4];
    jitanon_inject_stats st[4];
    size_t k, i, n;
    memset(io, 0, sizeof io);
    memset(out, 0, sizeof out);
    tt_scenario(&io[0].base.dump, &perf);
    for (k = 1; k < 4; k++) jitanon_membuf_write(&io[k].base.dump, io[0].base.dump.data, io[0].base.dump.size);
    for (k = 0; k < 4; k++) {
        io[k].base.give_dump = io[k].no_fail = 1;
        pthread_mutex_init(&io[k].mu, NULL);
    }
    tt_run_mode(&perf, 0, JITANON_ELF_FILES_ALL, JITANON_PERF_FILE, &io[0], &out[0], &st[0]);
    tt_run_mode(&perf, 0, JITANON_ELF_FILES_SAMPLED, JITANON_PERF_FILE, &io[1], &out[1], &st[1]);
    tt_run_mode(&perf, 3, JITANON_ELF_FILES_SAMPLED, JITANON_PERF_FILE, &io[2], &out[2], &st[2]);
    tt_run_mode(&perf, 0, JITANON_ELF_FILES_SAMPLED, JITANON_PERF_PIPE, &io[3], &out[3], &st[3]);
    for (k = 1; k < 3; k++) {
        /* the records are the same; the build-id table lists the files written */
        JT_CHECK(tt_records_end(&out[k]) > 0 && tt_records_end(&out[k]) == tt_records_end(&out[0]) &&
                 !memcmp(out[k].data, out[0].data, tt_records_end(&out[0])));
        JT_CHECK_EQ_U(tt_jitted_build_ids(&out[k]), io[k].nfiles);
        JT_CHECK_EQ_U(io[k].nfiles, io[0].nhit); /* one file per function hit */
        JT_CHECK_EQ_U(st[k].elf.files, io[k].nfiles);
        for (i = n = 0; i < io[k].nfiles; i++) { /* each one as in the full set */
            while (n < io[0].nfiles && strcmp(io[0].files[n].name, io[k].files[i].name) < 0) n++;
            JT_CHECK(n < io[0].nfiles && !memcmp(&io[0].files[n], &io[k].files[i], sizeof io[0].files[0]));
        }
    }
    JT_CHECK(io[0].nhit > 10 && io[1].nfiles < io[0].nfiles);
    JT_CHECK_EQ_U(tt_jitted_build_ids(&out[0]), io[0].nfiles); /* every file written is listed */
    JT_CHECK(!memcmp(io[1].files, io[2].files, sizeof io[1].files));
    JT_CHECK_EQ_U(io[3].nfiles, io[0].nfiles);
    for (k = 0; k < 4; k++) {
        pthread_mutex_destroy(&io[k].mu);
        jitanon_membuf_release(&out[k]);
        jitanon_membuf_release(&io[k].log);
        jitanon_membuf_release(&io[k].base.dump);
    }
    jitanon_membuf_release(&perf);
}
#endif

#if JITANON__POSIX
typedef struct tp_io {
    const jitanon_membuf *dump;
    jitanon_membuf elf;
    unsigned files;
} tp_io;

static int tp_write(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    tp_io *io = (tp_io *)user;
    (void)dir;
    (void)name;
    io->files++;
    io->elf.size = 0;
    return jitanon_membuf_write(&io->elf, data, size);
}

/* Writes `dump` as <dir>/jit-<TI_PID>.dump (dir: a mkdtemp template; 0 when it cannot be
   made) and a recording whose marker names it, with one sample at 0x10004. */
static int tp_dump_on_disk(const jitanon_membuf *dump, char *dir, char *path, jitanon_membuf *perf)
{
    ti_gen g;
    uint8_t raw[128];
    FILE *f;
    if (!mkdtemp(dir)) return 0;
    sprintf(path, "%s/jit-%u.dump", dir, TI_PID);
    f = fopen(path, "wb");
    fwrite(dump->data, 1, dump->size, f);
    fclose(f);
    memset(perf, 0, sizeof *perf);
    ti_gen_begin(&g, raw, 1, perf, JITANON_PERF_FILE);
    ti_mmap(&g, 50, 0x7000, 0x1000, 0, path);
    ti_round(&g);
    ti_sample(&g, 60, 0x10004);
    ti_round(&g);
    jitanon_perf_writer_finish(&g.w, NULL);
    jitanon_perf_writer_release(&g.w);
    return 1;
}

/* Reads dir/name into *file, then removes it, the dump tp_dump_on_disk wrote and dir. */
static void tp_take_file(const char *dir, const char *name, jitanon_membuf *file)
{
    char path[256];
    memset(file, 0, sizeof *file);
    sprintf(path, "%s/%s", dir, name);
    ti_read_file(path, file);
    remove(path);
    sprintf(path, "%s/jit-%u.dump", dir, TI_PID);
    remove(path);
    JT_CHECK(rmdir(dir) == 0);
}

static void tp_inject(const jitanon_membuf *perf, jitanon_inject_opts *o)
{
    jitanon_membuf out;
    jitanon_error err;
    memset(&out, 0, sizeof out);
    JT_CHECK(ti_run(perf, o, JITANON_PERF_FILE, &out, NULL, &err) == JITANON_OK);
    jitanon_membuf_release(&out);
}

/* A dump of five functions fn0..fn4, 0x100 apart from 0x10000, each 8 bytes shorter than
   the last, from code[0, 0x60) (`shifted`: fn<i> from code + i), with 1 to 3 line rows,
   and unwinding info but on fn2 when `unwind`. */
static const uint64_t tp_offs[3] = {0, 4, 0x20};

static void tp_five(elft_dump *t, const uint8_t *code, int shifted, int unwind)
{
    size_t i;
    elft_begin(t, 62, 0);
    for (i = 0; i < 5; i++) {
        char name[8];
        sprintf(name, "fn%u", (unsigned)i);
        elft_func(t, name, 0x10000 + i * 0x100, code + (shifted ? i : 0), 0x60 - i * 8, tp_offs, i % 3 + 1, 0,
                  unwind && i != 2);
    }
}

/* A per-process file keeps every function's debug and unwinding info, whether the dump
   was loaded whole (custom I/O) or streamed from its file (default I/O): both are the
   bytes the ELF builder makes from the loaded dump. */
static void test_inject_process_file_complete(void)
{
    static const uint8_t code[0x60] = {0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3};
    char dir[] = "build/ppf-XXXXXX", path[256];
    elft_dump t;
    jitanon_membuf ref, perf, file;
    tp_io io;
    jitanon_inject_opts o;
    size_t i;
    tp_five(&t, code, 0, 1);
    jitanon__wr32(t.buf.data + 20, TI_PID, 0); /* the marker's process */
    elft_load(&t, 0);
    for (i = 0; i < t.n; i++)
        t.fn[i].map_size = jitanon__inj_map_len(t.fn[i].code.size, t.fn[i].unwind ? t.fn[i].unwind->unwind.mapped_size : 0);
    memset(&ref, 0, sizeof ref);
    JT_CHECK(elft_emit(&t, t.n, NULL, &ref, NULL, NULL) == JITANON_OK);
    if (!tp_dump_on_disk(&t.buf, dir, path, &perf)) {
        jt_skip("cannot create a directory under build/");
        elft_end(&t);
        jitanon_membuf_release(&ref);
        return;
    }
    /* loaded whole */
    memset(&io, 0, sizeof io);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    io.dump = &t.buf;
    o.elf_layout = JITANON_ELF_PER_PROCESS;
    o.io.load_dump = ti_load_via;
    o.io.write_elf = tp_write;
    o.io.user = &io;
    tp_inject(&perf, &o);
    JT_CHECK_EQ_U(io.files, 1);
    JT_CHECK(io.elf.size == ref.size && !memcmp(io.elf.data, ref.data, ref.size));
    /* streamed from the file, written by the default I/O */
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_PROCESS;
    o.elf_dir = dir;
    tp_inject(&perf, &o);
    sprintf(path, "jitted-%u.so", TI_PID);
    tp_take_file(dir, path, &file);
    JT_CHECK(file.size == ref.size && !memcmp(file.data, ref.data, ref.size));
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&io.elf);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&ref);
    elft_end(&t);
}

/* Whether b holds the string s with its NUL (a symbol name). */
static int tr_has(const jitanon_membuf *b, const char *s)
{
    size_t n = strlen(s) + 1, i;
    for (i = 0; i + n <= b->size; i++)
        if (!memcmp(b->data + i, s, n)) return 1;
    return 0;
}

/* A region file is the same bytes whether its dump was loaded whole (custom I/O: the
   records are kept until the file is written) or streamed from its file (default I/O:
   each function's code is read back from the dump by offset as the file is streamed
   into place), pieces of code that later code covered included. */
static void test_inject_region_file_streamed(void)
{
    static const uint8_t code[0x60] = {0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    uint8_t code3[0x60], id[20], id3[20];
    char dir[] = "build/prf-XXXXXX", path[256], name[8];
    size_t i;
    elft_dump t, t3;
    jitanon_membuf perf, file;
    tp_io io;
    jitanon_inject_opts o;
    tp_five(&t, code, 1, 0);
    elft_func(&t, "over3", 0x10310, code + 7, 0x20, tp_offs, 1, 0, 0); /* over unsampled fn3: a piece each side */
    jitanon__wr32(t.buf.data + 20, TI_PID, 0);
    if (!tp_dump_on_disk(&t.buf, dir, path, &perf)) {
        jt_skip("cannot create a directory under build/");
        elft_end(&t);
        return;
    }
    memset(&io, 0, sizeof io);
    memset(&o, 0, sizeof o);
    io.dump = &t.buf;
    o.elf_layout = JITANON_ELF_PER_REGION;
    o.io.load_dump = ti_load_via;
    o.io.write_elf = tp_write;
    o.io.user = &io;
    tp_inject(&perf, &o);
    JT_CHECK_EQ_U(io.files, 1);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_REGION;
    o.elf_dir = dir;
    tp_inject(&perf, &o);
    sprintf(path, "jitted-%u-r0.so", TI_PID);
    tp_take_file(dir, path, &file);
    JT_CHECK(file.size > 0x400 && file.size == io.elf.size && !memcmp(file.data, io.elf.data, file.size));
    JT_CHECK(tr_has(&file, "over3") && tr_has(&file, "fn3"));
    /* Code is hashed once, as the dump is read, and a piece by its function's hash and
       where it starts: a byte changed in what over3 left of fn3 is another build-id. */
    memcpy(code3, code, sizeof code);
    code3[3 + 0x40] ^= 1;
    elft_begin(&t3, 62, 0);
    for (i = 0; i < 5; i++) {
        sprintf(name, "fn%u", (unsigned)i);
        elft_func(&t3, name, 0x10000 + i * 0x100, (i == 3 ? code3 : code) + i, 0x60 - i * 8, tp_offs, i % 3 + 1, 0, 0);
    }
    elft_func(&t3, "over3", 0x10310, code + 7, 0x20, tp_offs, 1, 0, 0);
    jitanon__wr32(t3.buf.data + 20, TI_PID, 0);
    io.dump = &t3.buf;
    io.files = 0;
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_REGION;
    o.io.load_dump = ti_load_via;
    o.io.write_elf = tp_write;
    o.io.user = &io;
    tp_inject(&perf, &o);
    JT_CHECK(io.files == 1 && io.elf.size == file.size && memcmp(io.elf.data, file.data, file.size) != 0);
    JT_CHECK(jitanon__inj_elf_id(file.data, file.size, id) && jitanon__inj_elf_id(io.elf.data, io.elf.size, id3) &&
             memcmp(id, id3, sizeof id) != 0);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&io.elf);
    jitanon_membuf_release(&perf);
    elft_end(&t);
    elft_end(&t3);
}

/* Keeps the ELF named `want` of an injection with custom I/O. */
typedef struct tb_io {
    const jitanon_membuf *dump;
    const char *want;
    jitanon_membuf elf;
} tb_io;

static int tb_write(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    tb_io *io = (tb_io *)user;
    (void)dir;
    if (strcmp(name, io->want)) return 0;
    io->elf.size = 0;
    return jitanon_membuf_write(&io->elf, data, size);
}

/* The injector decides the line bias once per dump, for every file of it: an LLVM-style
   dump whose large function alone says nothing (its first row is 0x10 in, all rows fit)
   and whose small function has rows past its end gets the large function's rows shifted
   too, in its own per-function file, whether the dump is loaded or streamed. */
static void test_inject_line_bias_per_dump(void)
{
    static const uint8_t code[0x100] = {0x55, 0x48, 0x89, 0xe5};
    static const uint64_t big_rows[3] = {0x10, 0x30, 0x80}, small_rows[3] = {0, 8, 0x18};
    char dir[] = "build/plb-XXXXXX", path[256], name[64];
    elft_dump t;
    jitanon_membuf ref, perf, file;
    jitanon_test_elf_file ef;
    elft_row rows[8];
    tb_io io;
    jitanon_inject_opts o;
    jitanon_elf_opts eo;
    uint64_t pg = 0;
    size_t n;
    elft_begin(&t, 62, 0);
    elft_llvm_func(&t, "julia_big", 0x10000, code, 0x100, big_rows, 3, 0x40);
    elft_llvm_func(&t, "julia_small", 0x10200, code, 0x20, small_rows, 3, 0x40);
    jitanon__wr32(t.buf.data + 20, TI_PID, 0);
    elft_load(&t, 0);
    memset(&ref, 0, sizeof ref);
    memset(&eo, 0, sizeof eo);
    JT_CHECK(elft_emit(&t, 1, &eo, &ref, &pg, NULL) == JITANON_OK); /* alone: not shifted */
    JT_CHECK(jitanon_test_elf_parse(&ef, ref.data, ref.size, NULL) == JITANON_OK);
    n = elft_lines(&ef, rows, 8);
    JT_CHECK(n >= 1 && rows[0].addr == pg + 0x50);
    ref.size = 0;
    eo.line_bias = JITANON_ELF_LINE_BIAS_PERF;
    JT_CHECK(elft_emit(&t, 1, &eo, &ref, &pg, NULL) == JITANON_OK);
    JT_CHECK(jitanon_test_elf_parse(&ef, ref.data, ref.size, NULL) == JITANON_OK);
    n = elft_lines(&ef, rows, 8);
    JT_CHECK(n == 4 && rows[0].addr == pg + 0x10 && rows[2].addr == pg + 0x80 && rows[3].end);
    if (!tp_dump_on_disk(&t.buf, dir, path, &perf)) {
        jt_skip("cannot create a directory under build/");
        elft_end(&t);
        jitanon_membuf_release(&ref);
        return;
    }
    sprintf(name, "jitted-42-0.so"); /* the LOADs' pid */
    /* loaded whole */
    memset(&io, 0, sizeof io);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    io.dump = &t.buf;
    io.want = name;
    o.io.load_dump = ti_load_via;
    o.io.write_elf = tb_write;
    o.io.user = &io;
    tp_inject(&perf, &o);
    JT_CHECK(io.elf.size == ref.size && !memcmp(io.elf.data, ref.data, ref.size));
    /* --line-bias=none keeps them where the dump says */
    o.elf.line_bias = JITANON_ELF_LINE_BIAS_NONE;
    tp_inject(&perf, &o);
    JT_CHECK(io.elf.size && (io.elf.size != ref.size || memcmp(io.elf.data, ref.data, ref.size)));
    /* streamed from the file, written by the default I/O */
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    o.elf_dir = dir;
    o.elf_threads = 0;
    tp_inject(&perf, &o);
    sprintf(path, "%s/%s", dir, name);
    memset(&file, 0, sizeof file);
    ti_read_file(path, &file);
    JT_CHECK(file.size == ref.size && !memcmp(file.data, ref.data, ref.size));
    remove(path);
    sprintf(path, "%s/jitted-42-1.so", dir);
    remove(path);
    sprintf(path, "%s/jit-%u.dump", dir, TI_PID);
    remove(path);
    JT_CHECK(rmdir(dir) == 0);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&io.elf);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&ref);
    elft_end(&t);
}
#endif

/* Options that cannot combine: elf_files = SAMPLED with per-process files is refused;
   every other fallback is counted in stats.fallbacks and told once through io.log, and
   the run still writes what ALL would (never fewer files than mappings need). */
typedef struct tf_io {
    ti_io base; /* first: ti_inject hands io.user to ti_io callbacks */
    jt_log log;
} tf_io;

static void tf_log(void *user, const char *msg)
{
    jt_log_add(&((tf_io *)user)->log, msg);
}

/* Runs `perf` with `o` (elf_files, elf_layout, elf_threads as given) into `out_mode`. */
static jitanon_result tf_run(const jitanon_membuf *perf, jitanon_elf_files elf_files, jitanon_elf_layout layout,
                             uint32_t threads, jitanon_perf_mode out_mode, tf_io *io, jitanon_inject_stats *st,
                             jitanon_error *err)
{
    static ti_out_rec v[64];
    jitanon_inject_opts o;
    size_t n;
    io->base.elf_files = 0;
    memset(&io->log, 0, sizeof io->log);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    o.io.log = tf_log;
    o.elf_layout = layout;
    o.elf_files = elf_files;
    o.elf_threads = threads;
    return ti_inject(perf, &o, &io->base, v, &n, st, err, out_mode);
}

static void test_inject_fallbacks_reported(void)
{
    static const uint64_t addresses[3] = {JITANON_PERF_SAMPLE_ADDR, JITANON_PERF_SAMPLE_BRANCH_STACK,
                                          JITANON_PERF_SAMPLE_STACK_USER};
    jitanon_membuf perf, pipe, addr;
    jitanon_inject_stats st;
    jitanon_error err;
    jitanon_inject_opts o;
    tf_io io;
    unsigned all;
    size_t k;
    memset(&io, 0, sizeof io);
    io.base.give_dump = io.base.elf_ok = 1;
    ti_build_dump(&io.base.dump);
    ti_build_perf(&perf, 1, JITANON_PERF_FILE);
    ti_build_perf(&pipe, 1, JITANON_PERF_PIPE);

    /* file to file: SAMPLED is honoured, nothing to report */
    JT_CHECK(tf_run(&perf, JITANON_ELF_FILES_ALL, JITANON_ELF_PER_FUNCTION, 0, JITANON_PERF_FILE, &io, &st, &err) ==
             JITANON_OK);
    all = io.base.elf_files;
    JT_CHECK(all == 4 && st.fallbacks == 0 && io.log.lines == 0);
    JT_CHECK(tf_run(&perf, JITANON_ELF_FILES_SAMPLED, JITANON_ELF_PER_FUNCTION, 0, JITANON_PERF_FILE, &io, &st, &err) ==
             JITANON_OK);
    JT_CHECK(st.fallbacks == 0 && io.log.lines == 0 && io.base.elf_files < all);

    /* SAMPLED chooses per-function files: with per-process ones it is an error that names both */
    JT_CHECK(tf_run(&perf, JITANON_ELF_FILES_SAMPLED, JITANON_ELF_PER_PROCESS, 0, JITANON_PERF_FILE, &io, &st, &err) ==
             JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK(strstr(err.info, "elf_files") && strstr(err.info, "elf_layout") && io.base.elf_files == 0);
    /* ... unless nothing is written: resolving samples does not look at ELF options */
    ti_opts(&o, JITANON_ELF_PER_FUNCTION, &io, NULL);
    o.elf_files = JITANON_ELF_FILES_SAMPLED;
    o.elf_layout = JITANON_ELF_PER_PROCESS;
    o.elf_threads = 2;
    o.io.log = tf_log;
    o.on_sample = ti_on_sample_record;
    io.log.lines = 0;
    JT_CHECK(ti_run_no_output(&perf, &o, &st, &err) == JITANON_OK);
    JT_CHECK(st.fallbacks == 0 && io.log.lines == 0);

    /* pipe output, pipe input: every file, reported */
    JT_CHECK(tf_run(&perf, JITANON_ELF_FILES_SAMPLED, JITANON_ELF_PER_FUNCTION, 0, JITANON_PERF_PIPE, &io, &st, &err) ==
             JITANON_OK);
    JT_CHECK(st.fallbacks == JITANON_INJECT_FALLBACK_SAMPLED_PIPE && io.base.elf_files == all);
    JT_CHECK(io.log.lines == 1 && strstr(io.log.text, "elf_files = SAMPLED") && strstr(io.log.text, "pipe"));
    JT_CHECK(tf_run(&pipe, JITANON_ELF_FILES_SAMPLED, JITANON_ELF_PER_FUNCTION, 0, JITANON_PERF_FILE, &io, &st, &err) ==
             JITANON_OK);
    JT_CHECK(st.fallbacks == JITANON_INJECT_FALLBACK_SAMPLED_PIPE && io.base.elf_files == all && io.log.lines == 1);

    /* addresses beyond ips and callchains: followed, no longer a fallback (this
       recording's records carry no sample, so no file is written) */
    for (k = 0; k < 3; k++) {
        ti_gen g;
        uint8_t raw[128];
        uint64_t attrs;
        memset(&addr, 0, sizeof addr);
        ti_gen_begin(&g, raw, 1, &addr, JITANON_PERF_FILE);
        ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
        ti_mmap(&g, 80, 0x10000, 0x3000, 0x10000, "//anon");
        ti_round(&g);
        ti_gen_end(&g);
        attrs = jitanon__rd64(addr.data + 24, 0); /* the attrs section; sample_type at 24 in an attr */
        jitanon__wr64(addr.data + attrs + 24, jitanon__rd64(addr.data + attrs + 24, 0) | addresses[k], 0);
        JT_CHECK(tf_run(&addr, JITANON_ELF_FILES_SAMPLED, JITANON_ELF_PER_FUNCTION, 0, JITANON_PERF_FILE, &io, &st,
                        &err) == JITANON_OK);
        JT_CHECK(st.fallbacks == 0 && io.base.elf_files == 0 && io.log.lines == 0);
        jitanon_membuf_release(&addr);
    }

    /* writer threads: of no use for per-process files; without thread support the
       calling thread writes.  Either way told once, however many dumps. */
    JT_CHECK(tf_run(&perf, JITANON_ELF_FILES_ALL, JITANON_ELF_PER_PROCESS, 2, JITANON_PERF_FILE, &io, &st, &err) ==
             JITANON_OK);
    JT_CHECK(st.fallbacks == JITANON_INJECT_FALLBACK_THREADS_UNUSED && io.base.elf_files == 1);
    JT_CHECK(io.log.lines == 1 && strstr(io.log.text, "elf_threads") && strstr(io.log.text, "per-process"));
    /* one writer thread: ti_write_elf counts without a lock */
    JT_CHECK(tf_run(&perf, JITANON_ELF_FILES_ALL, JITANON_ELF_PER_FUNCTION, 1, JITANON_PERF_FILE, &io, &st, &err) ==
             JITANON_OK);
    JT_CHECK(io.base.elf_files == all);
#if JITANON__THREADS
    JT_CHECK(st.fallbacks == 0 && io.log.lines == 0);
#else
    JT_CHECK(st.fallbacks == JITANON_INJECT_FALLBACK_NO_THREADS && io.log.lines == 1 && strstr(io.log.text, "elf_threads"));
#endif
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&pipe);
    jitanon_membuf_release(&io.base.dump);
}

/* The injector's hash map: keys that share their low or high bits, 0 and UINT64_MAX all
   stay apart through growth; a failed growth leaves the map as it was; nothing leaks. */
static void test_inject_hmap(void)
{
    enum { N = 5000 };
    jt_alloc st;
    jitanon_allocator a = jt_allocator(&st);
    jitanon__hmap m;
    size_t i, *v;
    long fail;
    memset(&m, 0, sizeof m);
    JT_CHECK(jitanon__hmap_find(&m, 0) == NULL);
    for (i = 0; i < N; i++) {
        uint64_t key = i % 3 == 0 ? (uint64_t)i << 32 : i % 3 == 1 ? (uint64_t)i : UINT64_MAX - i;
        v = jitanon__hmap_at(&m, &a, key, i);
        JT_CHECK(v && *v == i);
        JT_CHECK(jitanon__hmap_at(&m, &a, key, 7) == v); /* there already: value kept */
    }
    JT_CHECK_EQ_U(m.count, N);
    JT_CHECK(2 * m.count <= m.cap);
    for (i = 0; i < N; i++) {
        uint64_t key = i % 3 == 0 ? (uint64_t)i << 32 : i % 3 == 1 ? (uint64_t)i : UINT64_MAX - i;
        v = jitanon__hmap_find(&m, key);
        JT_CHECK(v && *v == i);
    }
    JT_CHECK(jitanon__hmap_find(&m, (uint64_t)N << 32) == NULL && jitanon__hmap_find(&m, N + 1) == NULL);
    jitanon__hmap_free(&m, &a);
    JT_CHECK(st.live_blocks == 0 && m.cap == 0);
    /* every allocation of a growth failing once */
    for (fail = 1; fail <= 4; fail++) {
        size_t cap;
        a = jt_allocator(&st);
        for (i = 0; i < 8; i++) JT_CHECK(jitanon__hmap_at(&m, &a, i, i) != NULL); /* 16 slots, full at 8 */
        cap = m.cap;
        st.fail_at = st.calls + fail;
        v = jitanon__hmap_at(&m, &a, 100, 100);
        if (fail <= 2) {
            JT_CHECK(v == NULL && m.cap == cap && m.count == 8);
        } else {
            JT_CHECK(v != NULL && *v == 100);
        }
        for (i = 0; i < 8; i++) JT_CHECK((v = jitanon__hmap_find(&m, i)) != NULL && *v == i);
        jitanon__hmap_free(&m, &a);
        JT_CHECK(st.live_blocks == 0);
    }
}


/* -- late NAME ------------------------------------------------------------------------------ */

/* Truth for the late-load property test: which function's code a slot holds from when. */
typedef struct tl_fn {
    uint64_t addr, written, load;
    int first; /* nothing was described at its slot before it */
    char name[16];
} tl_fn;

typedef struct tl_io {
    jitanon_membuf dump;
    size_t n;
    uint64_t time[512];
    char name[512][16];
} tl_io;

static void tl_on_sample(void *user, const jitanon_inject_sample *si)
{
    tl_io *s = (tl_io *)user;
    size_t len = si->name.length < 15 ? si->name.length : 15;
    if (s->n >= 512) return;
    s->time[s->n] = si->time;
    memcpy(s->name[s->n], si->name.data, len);
    s->name[s->n][len] = 0;
    s->n++;
}

static int tl_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    (void)user, (void)dir, (void)name, (void)data, (void)size;
    return 0;
}

/* Starts `io` with the dump of the nf functions of `fn`: their LOADs in load time order
   (`order`, nf places, gets that order). */
static void tl_write_dump(tl_io *io, const tl_fn *fn, size_t nf, size_t *order)
{
    static const uint8_t code[0x100] = {0xc3};
    jitanon_jitdump_writer w;
    jitanon_error err;
    size_t i, k;
    for (i = 0; i < nf; i++) order[i] = i;
    for (i = 1; i < nf; i++)
        for (k = i; k > 0 && fn[order[k - 1]].load > fn[order[k]].load; k--) {
            size_t x = order[k];
            order[k] = order[k - 1];
            order[k - 1] = x;
        }
    memset(io, 0, sizeof *io);
    memset(&w, 0, sizeof w);
    JT_CHECK(jdrec_begin(&w, jdrec_sink(&io->dump), 62, TI_PID, 5, 0, &err) == JITANON_OK);
    for (i = 0; i < nf; i++) {
        const tl_fn *f = &fn[order[i]];
        JT_CHECK(jdrec_write(&w, jdrec_load(f->load, TI_PID, TI_PID, f->addr, code, 0x100, order[i], f->name), &err) ==
                 JITANON_OK);
    }
}

/* The options of a late-load property run: per-function files (the replay names them),
   late NAME or KEEP with `window`, samples to tl_on_sample. */
static void tl_opts(jitanon_inject_opts *o, tl_io *io, int name, uint64_t window)
{
    memset(o, 0, sizeof *o);
    o->elf_layout = JITANON_ELF_PER_FUNCTION;
    o->late = name ? JITANON_LATE_NAME : JITANON_LATE_KEEP;
    o->late_window_ns = window;
    o->io.load_dump = ti_load_held;
    o->io.write_elf = tl_write_elf;
    o->io.user = io;
    o->on_sample = tl_on_sample;
}

/* What a sample at `t` running function `f` must resolve to: with late NAME, f itself
   when it was the first at its slot and its LOAD is at most `window` later; otherwise
   what KEEP gives, the latest LOAD at the slot up to t ("//anon" when none). */
static const char *tl_expect(const tl_fn *fn, size_t nf, size_t f, uint64_t t, uint64_t window, int late)
{
    const char *best = "//anon";
    uint64_t when = 0;
    size_t i;
    if (late && fn[f].first && t < fn[f].load && t + window >= fn[f].load) return fn[f].name;
    for (i = 0; i < nf; i++)
        if (fn[i].addr == fn[f].addr && fn[i].load <= t && fn[i].load >= when) {
            best = fn[i].name;
            when = fn[i].load;
        }
    return best;
}

/* A JIT commits pages of a code region one by one (each commit an //anon over all pages
   so far) and writes functions into 0x100-byte slots; each function's LOAD comes a random
   time after its code (up to 3 windows), some slots are reused after their first LOAD.
   Every sample resolves as tl_expect says - in memory (on_sample) and in the written
   output replayed as perf reads it - and KEEP's output does not depend on the window. */
static void tl_case(uint64_t seed, int name, int *failures)
{
    enum { PAGES = 6, SLOTS = 16, MAXF = 64, NS = 400, BASE = 0x100000 };
    tl_fn fn[MAXF];
    size_t nf = 0, i, k, s, order[MAXF], pick_of[NS], nout = 0, late;
    uint64_t commit[PAGES], rng = seed, window = 50 + ti_rand(&rng) % 400, t, prev;
    uint64_t last_load[PAGES * SLOTS];
    tl_io io;
    jitanon_membuf perf, result;
    ti_gen g;
    uint8_t raw[128];
    jitanon_error err;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    ti_out_rec *out = (ti_out_rec *)calloc(2048, sizeof *out);
    char(*answers)[64] = (char(*)[64])calloc(NS, 64);
    uint64_t sample_time[NS];
    int bad = 0;
    memset(last_load, 0, sizeof last_load);
    for (i = 0; i < PAGES; i++) commit[i] = 100 + i * (200 + ti_rand(&rng) % 300);
    for (i = 0; i < PAGES * SLOTS && nf < MAXF; i++) {
        size_t slot = (size_t)(ti_rand(&rng) % (PAGES * SLOTS));
        tl_fn *f = &fn[nf];
        f->addr = BASE + slot * 0x100;
        f->written = commit[slot / SLOTS] + 1 + ti_rand(&rng) % 500;
        if (last_load[slot]) {
            if (ti_rand(&rng) % 2) continue;
            f->written = last_load[slot] + 1 + ti_rand(&rng) % 300;
        }
        f->first = !last_load[slot];
        f->load = f->written + ti_rand(&rng) % (3 * window);
        last_load[slot] = f->load;
        sprintf(f->name, "fn%u", (unsigned)nf);
        nf++;
    }
    tl_write_dump(&io, fn, nf, order);
    /* the recording in time order: marker, commits, samples; a round every 64 samples */
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    for (prev = 29, t = 30, k = 0, s = 0; s < NS; prev = t, t += 1 + ti_rand(&rng) % 12) {
        size_t pick = (size_t)(ti_rand(&rng) % nf), pg;
        for (pg = 0; pg < PAGES; pg++)
            if (commit[pg] > prev && commit[pg] <= t) ti_mmap(&g, commit[pg], BASE, (pg + 1) * 0x1000, BASE, "//anon");
        for (i = 0; i < nf; i++) /* the code the slot holds at t */
            if (fn[i].addr == fn[pick].addr && fn[i].written <= t && fn[i].written > fn[pick].written) pick = i;
        if (fn[pick].written > t) continue;
        ti_sample(&g, t, fn[pick].addr + 0x10);
        sample_time[s] = t;
        pick_of[s++] = pick;
        if (++k % 64 == 0) ti_round(&g);
    }
    ti_gen_end(&g);
    /* in memory */
    tl_opts(&o, &io, name, window);
    JT_CHECK(ti_run_no_output(&perf, &o, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(io.n, NS);
    for (s = late = 0; s < NS && s < io.n; s++) {
        const char *want = tl_expect(fn, nf, pick_of[s], sample_time[s], window, name);
        late += strcmp(tl_expect(fn, nf, pick_of[s], sample_time[s], window, 1),
                       tl_expect(fn, nf, pick_of[s], sample_time[s], window, 0)) != 0;
        if (io.time[s] != sample_time[s] || strcmp(io.name[s], want) != 0) {
            if (!bad++)
                printf("  seed %llu window %llu: sample %u at %llu: '%s', want '%s'\n", (unsigned long long)seed,
                       (unsigned long long)window, (unsigned)s, (unsigned long long)sample_time[s], io.name[s], want);
        }
    }
    if (st.late.samples != (name ? late : 0)) {
        if (!bad++)
            printf("  seed %llu: late_samples %llu, want %u\n", (unsigned long long)seed,
                   (unsigned long long)st.late.samples, (unsigned)late);
    }
    /* written, and replayed as perf reads the output */
    memset(&result, 0, sizeof result);
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &result, &st, &err) == JITANON_OK);
    nout = ti_decode(&result, out, 2048, &err);
    JT_CHECK_EQ_U(ti_replay(out, nout, answers, NS), NS);
    for (s = 0; s < NS; s++) {
        const char *want = tl_expect(fn, nf, pick_of[s], sample_time[s], window, name);
        char file[64];
        if (strcmp(want, "//anon") == 0) strcpy(file, want);
        else sprintf(file, "/some/dir/jitted-100-%s.so", want + 2);
        if (strcmp(answers[s], file) != 0 && !bad++)
            printf("  seed %llu: perf would resolve sample %u at %llu to '%s', want '%s'\n", (unsigned long long)seed,
                   (unsigned)s, (unsigned long long)sample_time[s], answers[s], file);
    }
    *failures += bad != 0;
    free(out);
    free(answers);
    jitanon_membuf_release(&result);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.dump);
}

static void test_inject_late_named_random(void)
{
    int failures = 0;
    uint64_t seed;
    for (seed = 1; seed <= 200; seed++) {
        tl_case(seed * 0x9e3779b97f4a7c15u, 1, &failures);
        tl_case(seed * 0x9e3779b97f4a7c15u, 0, &failures);
    }
    JT_CHECK_EQ_U(failures, 0);
}

/* late NAME needs the whole dump before the samples (file input) and trimmed anon
   mappings (anon_mode RANGE): otherwise KEEP, reported; an unknown mode is refused. */
static void test_inject_late_fallbacks(void)
{
    static ti_out_rec v[64];
    jitanon_membuf perf, pipe;
    jitanon_inject_stats st;
    jitanon_error err;
    jitanon_inject_opts o;
    tf_io io;
    size_t n;
    memset(&io, 0, sizeof io);
    io.base.give_dump = io.base.elf_ok = 1;
    ti_build_dump(&io.base.dump);
    ti_build_perf(&perf, 1, JITANON_PERF_FILE);
    ti_build_perf(&pipe, 1, JITANON_PERF_PIPE);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    o.io.log = tf_log;
    o.late = JITANON_LATE_NAME;
    JT_CHECK(ti_inject(&perf, &o, &io.base, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK(st.fallbacks == 0 && io.log.lines == 0);
    JT_CHECK(ti_inject(&pipe, &o, &io.base, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK(st.fallbacks == JITANON_INJECT_FALLBACK_LATE_PIPE && io.log.lines == 1 && strstr(io.log.text, "pipe"));
    JT_CHECK(st.late.loads == 0 && st.late.samples == 0);
    /* the default names where it can and says nothing where it cannot */
    io.log.lines = 0;
    o.late = JITANON_LATE_AUTO;
    JT_CHECK(ti_inject(&pipe, &o, &io.base, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK(st.fallbacks == 0 && io.log.lines == 0 && st.late.loads == 0);
    JT_CHECK(ti_inject(&perf, &o, &io.base, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK(st.fallbacks == 0 && io.log.lines == 0 && st.late.loads > 0);
    o.late = JITANON_LATE_NAME;
    io.log.lines = 0;
    o.anon_mode = JITANON_ANON_ALL;
    JT_CHECK(ti_inject(&perf, &o, &io.base, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK(st.fallbacks == JITANON_INJECT_FALLBACK_LATE_ANON && io.log.lines == 1 && st.late.loads == 0);
    o.anon_mode = JITANON_ANON_RANGE;
    o.late = (jitanon_late_mode)7;
    JT_CHECK(ti_inject(&perf, &o, &io.base, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK(strstr(err.info, "late") != NULL);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&pipe);
    jitanon_membuf_release(&io.base.dump);
}

/* A task record (EXIT = 4, FORK = 7) of pid/tid at `time`. */
static void ti_task(ti_gen *g, uint32_t type, uint64_t time, uint32_t pid, uint32_t ppid, uint32_t tid)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    rec.task.pid = pid;
    rec.task.ppid = rec.task.ptid = ppid;
    rec.task.tid = tid;
    rec.task.time = time;
    ti_put(g, &rec, type, 0, time);
}

/* perf keeps a process's map after its main thread exits, while other threads run: their
   samples right after still resolve.  Exited processes are forgotten only once 64 more
   have exited, and a new process under the same pid is never forgotten that way. */
static void test_inject_exit_keeps_map_for_threads(void)
{
    jitanon_membuf perf;
    ti_io io;
    jitanon_inject_opts o;
    jitanon_error err;
    ti_gen g;
    uint8_t raw[128];
    uint32_t p;
    memset(&io, 0, sizeof io);
    io.give_dump = 1;
    ti_build_dump(&io.dump);
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_mmap(&g, 30, 0x10000, 0x1000, 0x10000, "//anon");
    ti_sample_tid(&g, 60, 0x10010, TI_PID + 1);             /* f0, a worker thread */
    ti_task(&g, 4, 61, TI_PID, TI_PID, TI_PID);             /* the main thread exits */
    ti_sample_tid(&g, 62, 0x10010, TI_PID + 1);             /* the worker, still f0 */
    for (p = 1000; p < 1064; p++) ti_task(&g, 4, 63, p, p, p); /* 64 more processes exit */
    ti_sample_tid(&g, 64, 0x10010, TI_PID + 1);             /* forgotten: nothing */
    ti_gen_end(&g);
    ti_opts(&o, JITANON_ELF_PER_FUNCTION, &io, NULL);
    o.on_sample = ti_on_sample_record;
    JT_CHECK(ti_run_no_output(&perf, &o, NULL, &err) == JITANON_OK);
    JT_CHECK_EQ_U(io.seen.n, 3);
    JT_CHECK(io.seen.kind[0] == JITANON_TRIM_JIT && !strcmp(io.seen.name[0], "f0"));
    JT_CHECK(io.seen.kind[1] == JITANON_TRIM_JIT && !strcmp(io.seen.name[1], "f0"));
    JT_CHECK(io.seen.kind[2] == JITANON_TRIM_NONE);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.dump);
}

/* perf sorts a recording's records in rounds (its ordered events): at a FINISHED_ROUND it
   delivers what is not newer than the rounds before, and merges the rest with the next
   round.  One CPU's next round often starts before another's last one ended: a sample of
   round 2 (t=65) comes before round 1's t=80, and round 2's mmap at t=70 names round 1's
   sample at t=80.  on_sample sees them so; the output keeps the rounds valid for perf
   (nothing after a FINISHED_ROUND older than what perf delivered there). */
typedef struct ti_order {
    ti_io io; /* first: the io callbacks take the same user pointer */
    unsigned n;
    uint64_t time[8];
    jitanon_trim_kind kind[8];
    char name[8][32];
} ti_order;

static void ti_on_sample_order(void *user, const jitanon_inject_sample *si)
{
    ti_order *t = (ti_order *)user;
    size_t len = si->name.length < 31 ? si->name.length : 31;
    if (t->n >= 8) return;
    t->time[t->n] = si->time;
    t->kind[t->n] = si->kind;
    if (len) memcpy(t->name[t->n], si->name.data, len);
    t->name[t->n++][len] = 0;
}

static void test_inject_rounds_as_perf_sorts(void)
{
    static ti_out_rec v[64];
    static ti_order t;
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    ti_gen g;
    uint8_t raw[128];
    size_t n, i;
    uint64_t delivered = 0, newest = 0, before = 0;
    int pass;
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_mmap(&g, 30, 0x10000, 0x3000, 0x10000, "//anon");
    ti_sample_tid(&g, 60, 0x10010, TI_PID + 1); /* f0 */
    ti_sample(&g, 80, 0x20010);                 /* the file mapped at 70 */
    ti_round(&g);
    ti_sample_tid(&g, 65, 0x10010, TI_PID + 2); /* another CPU's, read later */
    ti_mmap(&g, 70, 0x20000, 0x1000, 0, "/usr/lib/libother.so");
    ti_sample(&g, 90, 0x20010);
    ti_round(&g);
    ti_sample(&g, 95, 0x11010); /* f2 */
    ti_round(&g);
    ti_gen_end(&g);
    for (pass = 0; pass < 2; pass++) { /* resolving only, then writing too */
        memset(&t, 0, sizeof t);
        memset(&o, 0, sizeof o);
        ti_build_dump(&t.io.dump);
        t.io.give_dump = 1;
        o.elf_layout = JITANON_ELF_PER_FUNCTION;
        o.on_sample = ti_on_sample_order;
        if (pass == 0) {
            o.io.load_dump = ti_load_dump;
            o.io.user = &t;
            JT_CHECK(ti_run_no_output(&perf, &o, NULL, &err) == JITANON_OK);
        } else
            JT_CHECK(ti_inject(&perf, &o, &t.io, v, &n, &st, &err, JITANON_PERF_FILE) == JITANON_OK);
        JT_CHECK_EQ_U(t.n, 5);
        JT_CHECK(t.time[0] == 60 && t.time[1] == 65 && t.time[2] == 80 && t.time[3] == 90 && t.time[4] == 95);
        JT_CHECK(t.kind[0] == JITANON_TRIM_JIT && !strcmp(t.name[0], "f0") && t.kind[1] == JITANON_TRIM_JIT);
        JT_CHECK(t.kind[2] == JITANON_TRIM_FILE && !strcmp(t.name[2], "/usr/lib/libother.so"));
        JT_CHECK(t.kind[4] == JITANON_TRIM_JIT && !strcmp(t.name[4], "f2"));
        jitanon_membuf_release(&t.io.dump);
    }
    /* the output, read as perf reads it: every record after a FINISHED_ROUND is newer than
       what perf delivered there (the newest before the round before it) */
    JT_CHECK_EQ_U(ti_count(v, n, JITANON_PERF_RECORD_SAMPLE, NULL), 5);
    for (i = 0; i < n; i++) {
        if (v[i].type == JITANON_PERF_RECORD_FINISHED_ROUND) {
            delivered = before;
            before = newest;
            continue;
        }
        if (v[i].type != JITANON_PERF_RECORD_SAMPLE && v[i].type != JITANON_PERF_RECORD_MMAP2) continue;
        JT_CHECK(v[i].time > delivered);
        if (v[i].time > newest) newest = v[i].time;
    }
    jitanon_membuf_release(&perf);
}

/* Sampled files follow the addresses past a sample's callchain (issue #23): a word of
   the copied user stack or of the user registers, a branch stack's from and to, a data
   address.  One sample per check, its ip outside jitted code: the files written must be
   exactly those of the functions its other addresses point into (a word at a function's
   first byte also counts the byte before it: a call at the end of the function before
   returns there).  ti_build_dump's functions: f0 0x10000+0x100, f1 0x10200+0x100,
   f2 0x11000+0x80, f3 0x12000+0x80. */
typedef struct sp_io {
    ti_io base; /* first: ti_load_dump takes the user pointer as a ti_io */
    char names[256];
} sp_io;

static int sp_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    sp_io *io = (sp_io *)user;
    (void)dir, (void)data, (void)size;
    if (strlen(io->names) + strlen(name) + 2 < sizeof io->names) strcat(strcat(io->names, name), " ");
    return 0;
}

/* A sample of sample_type `st` (IDENTIFIER IP TID TIME CPU PERIOD and `extra`) with ip 0x5000
   and the words of `w` as its extra fields, in the kernel's order. */
static void sp_sample(ti_gen *g, uint64_t time, const uint64_t *w, size_t nw)
{
    uint8_t b[512];
    size_t i, n = 56;
    jitanon_error err;
    jitanon__wr32(b, JITANON_PERF_RECORD_SAMPLE, 0);
    jitanon__wr16(b + 4, 2, 0);
    jitanon__wr64(b + 8, TI_ID, 0);
    jitanon__wr64(b + 16, 0x5000, 0);
    jitanon__wr32(b + 24, TI_PID, 0);
    jitanon__wr32(b + 28, TI_PID, 0);
    jitanon__wr64(b + 32, time, 0);
    jitanon__wr64(b + 40, 0, 0);
    jitanon__wr64(b + 48, 250000, 0);
    for (i = 0; i < nw; i++, n += 8) jitanon__wr64(b + n, w[i], 0);
    jitanon__wr16(b + 6, (uint16_t)n, 0);
    JT_CHECK(jitanon_perf_writer_write(&g->w, b, n, &err) == JITANON_OK);
}

static void sp_case(uint64_t extra, uint64_t attr80, const uint64_t *w, size_t nw, jitanon_elf_files files,
                    jitanon_anon_mode anon, const char *want)
{
    jitanon_membuf perf, out;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    sp_io io;
    ti_gen g;
    uint8_t raw[128];
    uint64_t attrs;
    memset(&perf, 0, sizeof perf);
    memset(&out, 0, sizeof out);
    memset(&io, 0, sizeof io);
    io.base.give_dump = 1;
    ti_build_dump(&io.base.dump);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_mmap(&g, 30, 0x10000, 0x3000, 0x10000, "//anon");
    ti_round(&g);
    sp_sample(&g, 200, w, nw);
    ti_round(&g);
    ti_gen_end(&g);
    attrs = jitanon__rd64(perf.data + 24, 0); /* the attrs section */
    jitanon__wr64(perf.data + attrs + 24, jitanon__rd64(perf.data + attrs + 24, 0) | extra, 0);
    jitanon__wr64(perf.data + attrs + 72, extra & JITANON_PERF_SAMPLE_BRANCH_STACK ? attr80 : 0, 0);
    jitanon__wr64(perf.data + attrs + 80, extra & JITANON_PERF_SAMPLE_BRANCH_STACK ? 0 : attr80, 0);
    ti_opts(&o, JITANON_ELF_PER_FUNCTION, &io, sp_write_elf);
    o.elf_files = files;
    o.anon_mode = anon;
    o.late = JITANON_LATE_KEEP;
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out, &st, &err) == JITANON_OK);
    if (strcmp(io.names, want)) fprintf(stderr, "  sampled files: \"%s\", want \"%s\"\n", io.names, want);
    JT_CHECK(strcmp(io.names, want) == 0);
    JT_CHECK_EQ_U(st.fallbacks, 0);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&out);
    jitanon_membuf_release(&io.base.dump);
}

static void test_inject_sampled_words(void)
{
    const uint64_t regs = JITANON_PERF_SAMPLE_REGS_USER, stack = JITANON_PERF_SAMPLE_STACK_USER;
    /* regs (abi 64, mask of 2) + stack of 32 bytes: a word in f2, one at f1's first byte
       (f0 ends at 0x100ff, so only f1), one 4 bytes off 8-alignment into f3 */
    const uint64_t w1[] = {2, 0x7ffc0000, 0x11010,                              /* regs: sp-like, f2 */
                           32, 0x7ffc1234, 0x10200, 0x0001200400000000ull, 0,   /* stack */
                           32};                                                  /* dyn_size */
    /* the same stack alone, a word at f1's end + 1 (returns past a call that ends f1) */
    const uint64_t w2[] = {16, 0x10300, 0, 16};
    /* a branch stack: nr 2, {from, to, flags} each: f2 -> outside, outside -> f0 */
    const uint64_t w3[] = {2, 0x11004, 0x5000, 0, 0x5000, 0x10010, 0};
    const uint64_t w4[] = {2, 0x7ffc0000, 0x11010, 32, 0x7ffc1234, 0x10200, 0x0001200400000000ull, 0, 32};
    sp_case(regs | stack, 3, w1, sizeof w1 / 8, JITANON_ELF_FILES_AUTO, JITANON_ANON_RANGE, "jitted-100-1.so jitted-100-2.so jitted-100-3.so ");
    sp_case(stack, 0, w2, sizeof w2 / 8, JITANON_ELF_FILES_SAMPLED, JITANON_ANON_RANGE, "jitted-100-1.so ");
    sp_case(JITANON_PERF_SAMPLE_BRANCH_STACK, 0, w3, sizeof w3 / 8, JITANON_ELF_FILES_AUTO, JITANON_ANON_RANGE,
            "jitted-100-0.so jitted-100-2.so ");
    /* --anon=all and keep: the engine still follows the loads (it did not: no file at all) */
    sp_case(JITANON_PERF_SAMPLE_BRANCH_STACK, 0, w3, sizeof w3 / 8, JITANON_ELF_FILES_AUTO, JITANON_ANON_ALL,
            "jitted-100-0.so jitted-100-2.so ");
    sp_case(JITANON_PERF_SAMPLE_BRANCH_STACK, 0, w3, sizeof w3 / 8, JITANON_ELF_FILES_AUTO, JITANON_ANON_KEEP,
            "jitted-100-0.so jitted-100-2.so ");
    sp_case(regs | stack, 3, w4, sizeof w4 / 8, JITANON_ELF_FILES_ALL, JITANON_ANON_RANGE,
            "jitted-100-0.so jitted-100-1.so jitted-100-2.so jitted-100-3.so ");
}

/* arm64's --call-graph dwarf: x0..x30, sp, pc (mask 0x1ffffffff, perf_regs.h of arm64);
   the caller is in the link register x30, and a frame record on the stack holds a return
   address that pointer authentication signed (pac-ret: the code in bits 48 and up, which
   unwinders strip), into f3. */
static void test_inject_sampled_arm64(void)
{
    const uint64_t regs = JITANON_PERF_SAMPLE_REGS_USER, stack = JITANON_PERF_SAMPLE_STACK_USER;
    uint64_t w[1 + 33 + 4];
    size_t i;
    memset(w, 0, sizeof w);
    w[0] = 2;                       /* PERF_SAMPLE_REGS_ABI_64 */
    for (i = 0; i < 29; i++) w[1 + i] = 0x100 * i; /* x0..x28 */
    w[1 + 29] = 0x7ffc0010;         /* x29, the frame pointer */
    w[1 + 30] = 0x11014;            /* x30, the link register: f2 */
    w[1 + 31] = 0x7ffc0000;         /* sp */
    w[1 + 32] = 0x5000;             /* pc */
    w[34] = 16;                     /* the stack: a frame record (fp, signed lr) */
    w[35] = 0x7ffc0040;
    w[36] = 0x002a000000012008ull;
    w[37] = 16;                     /* dyn_size */
    sp_case(regs | stack, 0x1ffffffffull, w, sizeof w / 8, JITANON_ELF_FILES_SAMPLED, JITANON_ANON_RANGE,
            "jitted-100-2.so jitted-100-3.so ");
    /* an AArch32 process on an arm64 kernel (PERF_SAMPLE_REGS_ABI_32: r0..r15, 32-bit
       values; its stack holds 4-byte words): the link register r14 in f1, a stack word in f3 */
    memset(w, 0, sizeof w);
    w[0] = 1;
    w[1 + 14] = 0x10204; /* r14 */
    w[1 + 15] = 0x5000;  /* pc */
    w[17] = 8;
    w[18] = 0x0001200800000000ull; /* the words 0 and 0x12008 */
    w[19] = 8;
    sp_case(regs | stack, 0xffffull, w, 20, JITANON_ELF_FILES_SAMPLED, JITANON_ANON_RANGE,
            "jitted-100-1.so jitted-100-3.so ");
}

static void suite_inject(void)
{
    JT_RUN(test_inject_rounds_as_perf_sorts);
    JT_RUN(test_inject_exit_keeps_map_for_threads);
    JT_RUN(test_inject_late_fallbacks);
    JT_RUN(test_inject_late_named_random);
    JT_RUN(test_inject_hmap);
    JT_RUN(test_inject_fallbacks_reported);
    JT_RUN(test_inject_second_dump_same_pid);
    JT_RUN(test_inject_elf_build_id_note);
#if JITANON__POSIX
    JT_RUN(test_inject_elf_files_safe);
    JT_RUN(test_inject_process_file_complete);
    JT_RUN(test_inject_region_file_streamed);
    JT_RUN(test_inject_line_bias_per_dump);
    JT_RUN(test_inject_buildid_cache_layout);
#endif
#if JITANON__THREADS
    JT_RUN(test_inject_threads_same_output);
    JT_RUN(test_inject_sampled_files);
#if JITANON__POSIX
    JT_RUN(test_inject_buildid_table_and_cache);
#endif
#endif
    JT_RUN(test_inject_resolve_only);
    JT_RUN(test_inject_sample_resolve);
    JT_RUN(test_inject_contract_random);
    JT_RUN(test_inject_marker_names);
    JT_RUN(test_inject_range_trims_only_overlaps);
    JT_RUN(test_inject_modes_all_and_keep);
    JT_RUN(test_inject_enums_out_of_range);
    JT_RUN(test_inject_unusable_dump_changes_nothing);
    JT_RUN(test_inject_clock_mismatch);
    JT_RUN(test_inject_pipe_to_pipe_and_file);
    JT_RUN(test_inject_alloc_failures);
    JT_RUN(test_inject_sampled_words);
    JT_RUN(test_inject_sampled_arm64);
}
JT_SUITE(inject)
#undef JT_SUITES
#define JT_SUITES jt_suites_inject
