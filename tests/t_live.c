/* Live pipes: a recording piped in while the JIT still writes its dump.  The dump is a
   memory file whose visible size grows as the injector reads further into the recording
   (the in-memory I/O of tests/memio.h for the recording, io.open_dump for the dump), so a
   round sees exactly what the JIT had written by the time perf flushed it. */

#define TL_STAGES 8

typedef struct tl_world tl_world;

/* One stream io.open_dump handed out: reads see the dump's bytes up to its visible size. */
typedef struct tl_stream {
    tl_world *w;
    size_t pos;
    int open;
} tl_stream;

struct tl_world {
    memin perf;                 /* the recording, read 8 bytes at a time */
    jitanon_membuf dump;        /* the whole dump as the JIT will have written it */
    size_t visible, initial;    /* what the JIT has written so far; at the start */
    size_t at_[TL_STAGES], size_[TL_STAGES];
    size_t *at, *size;          /* once perf.pos >= at[k], `visible` is size[k] */
    size_t stages, next;        /* stages in increasing order; the next one not reached */
    tl_stream streams[4];
    unsigned opens, closes, elf_files, lines;
    size_t nap_at;              /* once perf.pos >= nap_at (not 0), the clock moves 3 ms */
    int threads;                /* writer threads call io.write_elf: it must not count */
    int via_open;               /* the dump through io.open, not io.open_dump */
    char log[1024];
};

static size_t tl_perf_read(void *user, void *dst, size_t n)
{
    tl_world *w = (tl_world *)user;
    size_t got = memin_read(&w->perf, dst, n);
    if (w->nap_at && w->perf.pos >= w->nap_at) {
        w->nap_at = 0;
        jitanon__os_default()->sleep_ns(3000000u);
    }
    while (w->next < w->stages && w->perf.pos >= w->at[w->next]) w->visible = w->size[w->next++];
    return got;
}

static size_t tl_dump_read(void *user, void *dst, size_t n)
{
    tl_stream *s = (tl_stream *)user;
    size_t left = s->w->visible > s->pos ? s->w->visible - s->pos : 0;
    if (n > left) n = left;
    if (n > 100) n = 100; /* small reads: records end across them */
    memcpy(dst, s->w->dump.data + s->pos, n);
    s->pos += n;
    return n;
}

static jitanon_result tl_open_dump(void *user, const char *path, jitanon_read_fn *read, void **stream,
                                   jitanon_error *err)
{
    tl_world *w = (tl_world *)user;
    size_t i;
    if (strcmp(path, "/some/dir/jit-100.dump") != 0) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "no such file");
    for (i = 0; i < 4 && w->streams[i].open; i++) {
    }
    if (i == 4) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "too many open");
    w->streams[i].w = w;
    w->streams[i].pos = 0;
    w->streams[i].open = 1;
    w->opens++;
    *read = tl_dump_read;
    *stream = &w->streams[i];
    return JITANON_OK;
}

static void tl_close_dump(void *user, void *stream)
{
    tl_world *w = (tl_world *)user;
    ((tl_stream *)stream)->open = 0;
    w->closes++;
}

/* io.open over the same streams: a JITDUMP only. */
static int tl_close_stream(void *user)
{
    tl_stream *s = (tl_stream *)user;
    tl_close_dump(s->w, s);
    return 0;
}

static jitanon_result tl_open(void *user, jitanon_file_kind kind, const char *path, jitanon_stream *out,
                              jitanon_error *err)
{
    jitanon_read_fn read = NULL;
    void *stream = NULL;
    jitanon_result r;
    if (kind != JITANON_FILE_JITDUMP) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "no such file");
    if ((r = tl_open_dump(user, path, &read, &stream, err)) != JITANON_OK) return r;
    memset(out, 0, sizeof *out);
    out->read_fn = read;
    out->user = stream;
    out->close_fn = tl_close_stream;
    return JITANON_OK;
}

static int tlv_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    tl_world *w = (tl_world *)user;
    (void)data;
    (void)size;
    JT_CHECK(strcmp(dir, "/some/dir") == 0 && strncmp(name, "jitted-100-", 11) == 0);
    w->elf_files++;
    return 0;
}

static int tlv_write_elf_mt(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    (void)user;
    (void)data;
    (void)size;
    return strcmp(dir, "/some/dir") != 0 || strncmp(name, "jitted-100-", 11) != 0;
}

static void tlv_log(void *user, const char *msg)
{
    tl_world *w = (tl_world *)user;
    size_t n = strlen(w->log);
    w->lines++;
    if (n + strlen(msg) + 2 < sizeof w->log) {
        memcpy(w->log + n, msg, strlen(msg));
        w->log[n + strlen(msg)] = '\n';
        w->log[n + strlen(msg) + 1] = 0;
    }
}

/* Runs the injector over the world's recording (pipe in, pipe out) and decodes the
   output into v (at most vcap records). */
static jitanon_result tl_run(tl_world *w, const jitanon_membuf *perf, jitanon_inject_opts *o, ti_out_rec *v, size_t vcap,
                             size_t *n, jitanon_inject_stats *st, jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_perf_writer pw;
    jitanon_membuf out;
    jitanon_perf_record rec;
    jitanon_result res;
    memin in;
    memset(&out, 0, sizeof out);
    w->perf = memin_make(perf->data, perf->size, 8, 0);
    w->visible = w->initial;
    w->next = 0;
    o->io.open_dump = w->via_open ? NULL : tl_open_dump;
    o->io.close_dump = w->via_open ? NULL : tl_close_dump;
    o->io.open = w->via_open ? tl_open : NULL;
    o->io.write_elf = w->threads ? tlv_write_elf_mt : tlv_write_elf;
    o->io.log = tlv_log;
    o->io.user = w;
    memset(&pw, 0, sizeof pw);
    res = jitanon_perf_reader_init(&r, tl_perf_read, NULL, w, NULL, err);
    if (res == JITANON_OK) res = jitanon_perf_writer_init(&pw, JITANON_PERF_PIPE, 0, jdrec_sink(&out), NULL, NULL, err);
    if (res == JITANON_OK) res = jitanon_inject(&r, &pw, o, st, err);
    jitanon_perf_writer_release(&pw);
    jitanon_perf_reader_release(&r);
    *n = 0;
    if (res == JITANON_OK) {
        in = memin_make(out.data, out.size, 0, 0);
        JT_CHECK(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, err) == JITANON_OK);
        while (jitanon_perf_reader_next(&r, &rec, err) == JITANON_OK && *n < vcap) ti_out_set(&v[(*n)++], &rec);
        jitanon_perf_reader_release(&r);
    }
    jitanon_membuf_release(&out);
    return res;
}

/* The output MMAP2 of function `index` (NULL when none). */
static const ti_out_rec *tl_mmap_of(const ti_out_rec *v, size_t n, unsigned index)
{
    char name[64];
    size_t i;
    snprintf(name, sizeof name, "/some/dir/jitted-100-%u.so", index);
    for (i = 0; i < n; i++)
        if (v[i].type == JITANON_PERF_RECORD_MMAP2 && !strcmp(v[i].name, name)) return &v[i];
    return NULL;
}

/* Records with a time come out in time order. */
static int tl_in_time_order(const ti_out_rec *v, size_t n)
{
    uint64_t last = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (v[i].type != JITANON_PERF_RECORD_MMAP2 && v[i].type != JITANON_PERF_RECORD_SAMPLE) continue;
        if (v[i].time < last) return 0;
        last = v[i].time;
    }
    return 1;
}

static void tl_world_init(tl_world *w)
{
    memset(w, 0, sizeof *w);
    w->at = w->at_;
    w->size = w->size_;
}

/* Every scenario's start: an empty world, its dump's header written (x86-64, pid TI_PID),
   and a pipe-mode recording in perf whose first record is the dump's marker at
   marker_time (the two streams are separate buffers: their order does not matter). */
static void tl_start(tl_world *w, jitanon_jitdump_writer *jw, ti_gen *g, uint8_t raw[128], jitanon_membuf *perf,
                     uint64_t marker_time, jitanon_error *err)
{
    tl_world_init(w);
    memset(jw, 0, sizeof *jw);
    jdrec_begin(jw, jdrec_sink(&w->dump), 62, TI_PID, 5, 0, err);
    memset(perf, 0, sizeof *perf);
    ti_gen_begin(g, raw, 1, perf, JITANON_PERF_PIPE);
    ti_mmap(g, marker_time, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
}

/* tl_start, then f0 (LOAD at 25, 0x10000) and f1 (at 45, 0x11000) in the dump; returns the
   dump's size after f0. */
static size_t tl_start_two(tl_world *w, jitanon_jitdump_writer *jw, ti_gen *g, uint8_t raw[128], jitanon_membuf *perf,
                           jitanon_error *err)
{
    static const uint8_t code[0x100] = {0xc3};
    size_t after_f0;
    tl_start(w, jw, g, raw, perf, 20, err);
    jdrec_write(jw, jdrec_load(25, TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), err);
    after_f0 = w->dump.size;
    jdrec_write(jw, jdrec_load(45, TI_PID, TI_PID, 0x11000, code, 0x100, 1, "f1"), err);
    return after_f0;
}

/* Ends the recording g writes; *o: per-function files, nothing else set. */
static void tl_end(ti_gen *g, jitanon_inject_opts *o)
{
    ti_gen_end(g);
    memset(o, 0, sizeof *o);
    o->elf_layout = JITANON_ELF_PER_FUNCTION;
}

/* The dump grows between rounds: round 1 (the marker) sees f0; round 2 sees f1 and half
   of f2's record; round 3 sees f2 complete and f3, whose load (t=55) is older than round
   2's last event (t=60).  Every function is mapped, the //anon of round 2 is trimmed
   around f0 and f1, nothing is dated before what was decided, and the dump is read
   from where each read stopped. */
static void tl_grow_scenario(tl_world *w, jitanon_membuf *perf)
{
    static const uint8_t code[0x100] = {0xc3};
    ti_gen g;
    uint8_t raw[128];
    jitanon_jitdump_writer jw;
    jitanon_error err;
    size_t after_f0, after_f1, f2_end;
    tl_start(w, &jw, &g, raw, perf, 20, &err);
    jdrec_write(&jw, jdrec_load(25, TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), &err);
    after_f0 = w->dump.size;
    jdrec_write(&jw, jdrec_load(45, TI_PID, TI_PID, 0x11000, code, 0x100, 1, "f1"), &err);
    after_f1 = w->dump.size;
    jdrec_write(&jw, jdrec_load(70, TI_PID, TI_PID, 0x12000, code, 0x100, 2, "f2"), &err);
    f2_end = w->dump.size;
    /* f3 is older than samples decided before it is read (perf delivers at a round's end
       what is not newer than the rounds before: 35 at the second, 60 at the third) */
    jdrec_write(&jw, jdrec_load(33, TI_PID, TI_PID, 0x13000, code, 0x100, 3, "f3"), &err);

    ti_mmap(&g, 30, 0x10000, 0x1000, 0x10000, "//anon");
    ti_sample(&g, 35, 0x10010);
    ti_round(&g);
    w->at[0] = perf->size;
    w->size[0] = after_f0;
    ti_mmap(&g, 50, 0x10000, 0x2000, 0x10000, "//anon"); /* coalesced over f0 and f1 */
    ti_sample(&g, 60, 0x11010);
    ti_round(&g);
    w->at[1] = perf->size;
    w->size[1] = after_f1 + (f2_end - after_f1) / 2; /* f2's record cut in the middle */
    ti_sample(&g, 80, 0x12010);
    ti_sample(&g, 90, 0x13010);
    ti_round(&g);
    w->at[2] = perf->size;
    w->size[2] = w->dump.size;
    w->stages = 3;
    ti_gen_end(&g);
}

/* The region layout on a pipe: each read of the dump is a batch laid out into its own
   region files (never rewritten), written before its mappings go out; every function is
   mapped at start - pgoff = its file's base, framed by that base, in time order. */
static void test_live_region_batches(void)
{
    static ti_out_rec v[128];
    tl_world w;
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    size_t n, i, slices = 0;
    tl_grow_scenario(&w, &perf);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_REGION;
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(st.follow.dumps, 1);
    JT_CHECK_EQ_U(st.trim.loads, 4);
    JT_CHECK(st.follow.reads == 2);
    JT_CHECK(w.elf_files >= 2 && w.elf_files <= 4); /* a batch's files, one batch a read */
    JT_CHECK(st.write.region_bases >= 1 && st.write.region_bases <= 4);
    JT_CHECK(tl_in_time_order(v, n));
    for (i = 0; i < n; i++) {
        const ti_out_rec *m = &v[i];
        int framed;
        if (m->type != JITANON_PERF_RECORD_MMAP2 || !strstr(m->name, "-r") || m->len == 1) continue;
        slices++;
        /* framed: the base just before (at start - pgoff, pgoff 0, the same file) and what
           was there just after (not this file); else the last file mapped is this one's */
        framed = i > 0 && v[i - 1].len == 1 && v[i - 1].pgoff == 0 && v[i - 1].start == m->start - m->pgoff &&
                 !strcmp(v[i - 1].name, m->name);
        if (framed)
            JT_CHECK(i + 1 < n && v[i + 1].len == 1 && v[i + 1].start == m->start - m->pgoff &&
                     strcmp(v[i + 1].name, m->name));
        else {
            size_t k = i;
            while (k-- > 0 && !(v[k].type == JITANON_PERF_RECORD_MMAP2 && v[k].name[0] == '/' && strncmp(v[k].name, "//anon", 6))) {}
            JT_CHECK(k < i && !strcmp(v[k].name, m->name));
        }
    }
    JT_CHECK_EQ_U(slices, 4);
    JT_CHECK(w.opens == 2 && w.closes == 2);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&w.dump);
}

static void test_live_dump_grows_between_rounds(void)
{
    static ti_out_rec v[128];
    tl_world w;
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    size_t n;
    const ti_out_rec *m;
    tl_grow_scenario(&w, &perf);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(st.follow.dumps, 1);
    JT_CHECK_EQ_U(st.trim.loads, 4);
    JT_CHECK_EQ_U(w.elf_files, 4);
    JT_CHECK(st.follow.reads == 2);      /* rounds 2 and 3 found more */
    JT_CHECK_EQ_U(st.follow.wait_ns, 0); /* events of long ago: no wait */
    JT_CHECK(st.dumps.damaged == 0 && w.lines == 0);
    JT_CHECK((m = tl_mmap_of(v, n, 0)) && m->time == 25);
    JT_CHECK((m = tl_mmap_of(v, n, 1)) && m->time == 45);
    JT_CHECK((m = tl_mmap_of(v, n, 2)) && m->time == 70);
    JT_CHECK((m = tl_mmap_of(v, n, 3)) && m->time == 35); /* not before what was decided */
    JT_CHECK(st.trim.split == 2 && st.trim.kept == 0); /* both //anon trimmed around what they cover */
    JT_CHECK(tl_in_time_order(v, n));
    /* two opens: the marker's scan, then the one stream followed to the end */
    JT_CHECK(w.opens == 2 && w.closes == 2);

    /* Writer threads: each read is one batch whose files are written before its
       mappings go out; the same records come out. */
    {
        static ti_out_rec v2[128];
        size_t n2, i;
        w.threads = 1;
        o.elf_threads = 2;
        JT_CHECK(tl_run(&w, &perf, &o, v2, 128, &n2, &st, &err) == JITANON_OK);
        JT_CHECK(n2 == n && st.trim.loads == 4 && st.elf.files == 4 && st.follow.reads == 2);
        for (i = 0; i < n && i < n2; i++)
            JT_CHECK(v2[i].type == v[i].type && v2[i].time == v[i].time && v2[i].start == v[i].start &&
                     !strcmp(v2[i].name, v[i].name));
        w.threads = 0;
    }
    { /* io.open alone: the dump is followed as io.open_dump's is, the same records out */
        static ti_out_rec v3[128];
        size_t n3, i;
        w.via_open = 1;
        o.elf_threads = 0;
        w.opens = w.closes = w.elf_files = 0;
        JT_CHECK(tl_run(&w, &perf, &o, v3, 128, &n3, &st, &err) == JITANON_OK);
        JT_CHECK(n3 == n && st.trim.loads == 4 && w.elf_files == 4 && st.follow.dumps == 1 && st.follow.reads == 2);
        JT_CHECK(w.opens == 2 && w.closes == 2);
        for (i = 0; i < n && i < n3; i++)
            JT_CHECK(v3[i].type == v[i].type && v3[i].time == v[i].time && v3[i].start == v[i].start &&
                     v3[i].len == v[i].len && v3[i].pgoff == v[i].pgoff && !strcmp(v3[i].name, v[i].name));
        w.via_open = 0;
    }
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&w.dump);
}

/* Every allocation of a followed run of `perf` failing in turn: a typed error or success,
   and nothing leaks (streams closed, follow state freed). */
static void tl_alloc_sweep(tl_world *w, const jitanon_membuf *perf)
{
    static ti_out_rec v[128];
    long k;
    for (k = 1; k < 1000; k++) {
        jt_alloc a;
        jitanon_inject_opts o;
        jitanon_error err;
        size_t n;
        jitanon_result r;
        memset(&o, 0, sizeof o);
        o.elf_layout = JITANON_ELF_PER_FUNCTION;
        o.allocator = jt_allocator(&a);
        o.elf.allocator = o.jitdump.allocator = o.allocator;
        a.fail_at = k;
        w->opens = w->closes = 0;
        r = tl_run(w, perf, &o, v, 128, &n, NULL, &err);
        JT_CHECK(r == JITANON_OK || jt_is_typed_error(r));
        JT_CHECK_EQ_U(a.live_bytes, 0);
        JT_CHECK(w->opens == w->closes);
        if (r == JITANON_OK && a.calls < a.fail_at) break;
    }
    JT_CHECK(k < 1000);
}

static void test_live_alloc_failures(void)
{
    tl_world w;
    jitanon_membuf perf;
    tl_grow_scenario(&w, &perf);
    tl_alloc_sweep(&w, &perf);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&w.dump);
}

/* A writer that stops: the dump ends inside a record that is never completed and the
   process never exits.  The run ends with the input, uses every whole record, waits
   for nothing (old events) and leaves no stream open. */
static void test_live_writer_stops(void)
{
    static ti_out_rec v[128];
    tl_world w;
    ti_gen g;
    uint8_t raw[128];
    jitanon_membuf perf;
    jitanon_jitdump_writer jw;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    size_t n, after_f0, k;
    after_f0 = tl_start_two(&w, &jw, &g, raw, &perf, &err);
    ti_round(&g);
    for (k = 0; k < 20; k++) {
        ti_sample(&g, 100 + k * 10, 0x10010);
        ti_round(&g);
    }
    w.at[0] = 0;
    w.size[0] = after_f0 + 7; /* and never more */
    w.stages = 1;
    tl_end(&g, &o);
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) == JITANON_OK);
    JT_CHECK(st.follow.dumps == 1 && st.trim.loads == 1 && st.follow.reads == 0 && st.follow.wait_ns == 0);
    JT_CHECK(tl_mmap_of(v, n, 0) && !tl_mmap_of(v, n, 1));
    JT_CHECK(w.opens == w.closes && w.lines == 0 && st.dumps.damaged == 0);
    /* strict too: a record being written is no damage */
    o.jitdump.strict = 1;
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) == JITANON_OK);
    JT_CHECK(st.trim.loads == 1 && w.opens == w.closes);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&w.dump);
}

/* Garbage appended to a dump being followed: the records before it are used, one line
   says where following stopped, and the run goes on; with strict the run fails. */
static void test_live_damage_later(void)
{
    static ti_out_rec v[128];
    tl_world w;
    ti_gen g;
    uint8_t raw[128], junk[64];
    jitanon_membuf perf;
    jitanon_jitdump_writer jw;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    size_t n, after_f0;
    after_f0 = tl_start_two(&w, &jw, &g, raw, &perf, &err);
    memset(junk, 0xff, sizeof junk);
    JT_CHECK(jitanon_membuf_write(&w.dump, junk, sizeof junk) == 0);
    ti_round(&g);
    w.at[0] = perf.size;
    w.size[0] = after_f0;
    ti_sample(&g, 60, 0x11010);
    ti_round(&g);
    w.at[1] = perf.size;
    w.size[1] = w.dump.size;
    ti_sample(&g, 70, 0x11010);
    ti_round(&g);
    w.stages = 2;
    tl_end(&g, &o);
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) == JITANON_OK);
    JT_CHECK(st.trim.loads == 2 && tl_mmap_of(v, n, 0) && tl_mmap_of(v, n, 1) && w.opens == w.closes);
    JT_CHECK(w.lines == 1 && strstr(w.log, "damaged record") && strstr(w.log, "not followed further"));
    JT_CHECK(st.dumps.damaged == 1);
    o.jitdump.strict = 1;
    w.log[0] = 0;
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) != JITANON_OK && strstr(err.info, "damaged"));
    JT_CHECK(w.opens == w.closes);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&w.dump);
}

/* Fresh events (dated now) past the dump's last record, the dump just grown: each round
   may wait, at most opts.follow_wait_us in all, and the run ends although the writer
   never writes again; JITANON_FOLLOW_WAIT_NONE never waits. */
static void test_live_bounded_wait(void)
{
    static const uint8_t code[0x100] = {0xc3};
    static ti_out_rec v[128];
    tl_world w;
    ti_gen g;
    uint8_t raw[128];
    jitanon_membuf perf;
    jitanon_jitdump_writer jw;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    size_t n, k;
    uint64_t now = jitanon_jitdump_now();
    if (!now) {
        jt_skip("no CLOCK_MONOTONIC");
        return;
    }
    tl_start(&w, &jw, &g, raw, &perf, now - 2000, &err);
    jdrec_write(&jw, jdrec_load(now - 1000, TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), &err);
    ti_round(&g);
    for (k = 0; k < 3; k++) {
        ti_sample(&g, now + k * 1000, 0x10010);
        ti_round(&g);
    }
    w.size[0] = w.dump.size;
    w.stages = 1;
    tl_end(&g, &o);
    o.follow_wait_us = 2000;
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) == JITANON_OK);
    if (jitanon_jitdump_now() - now > 80000000u) { /* too slow a machine for fresh events: no wait is right */
        JT_CHECK(st.follow.wait_ns <= 3u * (2000000u + 100000000u));
        st.follow.wait_ns += 1000000u;
    }
    /* rounds 2..4 are fresh and past f0; the last one (input ended) never waits */
    /* at least one poll; at most the cap a round plus one poll past it (a loaded machine
       may oversleep a poll: generously bounded) */
    JT_CHECK(st.follow.wait_ns >= 1000000u && st.follow.wait_ns <= 3u * (2000000u + 100000000u));
    if (st.follow.wait_ns < 1000000u || st.follow.wait_ns > 3u * (2000000u + 100000000u))
        printf("  waited %llu ns\n", (unsigned long long)st.follow.wait_ns);
    JT_CHECK(st.trim.loads == 1 && tl_mmap_of(v, n, 0) && w.opens == w.closes);
    o.follow_wait_us = JITANON_FOLLOW_WAIT_NONE;
    JT_CHECK(tl_run(&w, &perf, &o, v, 128, &n, &st, &err) == JITANON_OK);
    JT_CHECK(st.follow.wait_ns == 0 && st.trim.loads == 1);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&w.dump);
}

/* Hours of pipe in miniature: every round the JIT adds one function (4 KiB of code) and
   perf a sample in it.  Memory grows only by each function's bookkeeping - not by its
   code, its record, nor the events already applied - and every function is mapped. */
static size_t tl_peak_for(unsigned rounds, uint64_t *loads)
{
    static uint8_t code[4096];
    static ti_out_rec v[8];
    tl_world w;
    ti_gen g;
    uint8_t raw[128];
    jitanon_membuf perf;
    jitanon_jitdump_writer jw;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    jt_alloc a;
    size_t n;
    unsigned k;
    tl_start(&w, &jw, &g, raw, &perf, 20, &err);
    w.at = (size_t *)malloc(rounds * sizeof *w.at);
    w.size = (size_t *)malloc(rounds * sizeof *w.size);
    w.initial = w.dump.size; /* the header, written before the marker */
    ti_round(&g);
    for (k = 0; k < rounds; k++) { /* round k+2 sees function k */
        uint64_t t = 100 + (uint64_t)k * 100, addr = 0x100000 + (uint64_t)k * 0x1000;
        char name[16];
        snprintf(name, sizeof name, "f%u", k);
        jdrec_write(&jw, jdrec_load(t, TI_PID, TI_PID, addr, code, sizeof code, k, name), &err);
        ti_sample(&g, t + 50, addr + 16);
        ti_round(&g);
        w.at[k] = perf.size;
        w.size[k] = w.dump.size;
    }
    w.stages = rounds;
    tl_end(&g, &o);
    o.allocator = jt_allocator(&a);
    JT_CHECK(tl_run(&w, &perf, &o, v, 8, &n, &st, &err) == JITANON_OK);
    JT_CHECK(a.live_bytes == 0);
    JT_CHECK(st.follow.reads >= rounds - 1);
    if (st.follow.reads < rounds - 1)
        printf("  reads %u loads %u rounds %u\n", (unsigned)st.follow.reads, (unsigned)st.trim.loads, (unsigned)st.read.rounds);
    *loads = st.trim.loads;
    free(w.at);
    free(w.size);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&w.dump);
    return a.peak_bytes;
}

static void test_live_flat_memory(void)
{
    uint64_t l1 = 0, l2 = 0;
    size_t p1 = tl_peak_for(400, &l1), p2 = tl_peak_for(3200, &l2);
    JT_CHECK(l1 == 400 && l2 == 3200);
    /* 2,800 more functions with 4 KiB of code each (11 MiB): the peak grows by less than
       512 bytes a function (its entry, ELF path and name count, arrays doubling; about
       256 measured), so neither code nor records nor applied events are kept */
    JT_CHECK(p2 < p1 + (size_t)2800 * 512);
    if (p2 >= p1 + (size_t)2800 * 512) printf("  peak %zu -> %zu bytes\n", p1, p2);
}

/* Samples of the output perf report names from a jitted ELF (ti_replay). */
static size_t tl_named(ti_out_rec *v, size_t n)
{
    static char answers[256][64];
    size_t na = ti_replay(v, n, answers, 256), i, named = 0;
    for (i = 0; i < na; i++) named += !strncmp(answers[i], "/some/dir/jitted-100-", 21);
    return named;
}

/* A hold-back case: its world and recording, the options of its next run (per-function
   files; what a check sets stays for the runs after it) and what the last run gave.
   Static in each test: it is large. */
typedef struct tl_hold {
    tl_world w;
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    ti_out_rec v[256];
    size_t n;
} tl_hold;

/* The options back to the cases' defaults. */
static void tl_hold_opts(tl_hold *c)
{
    memset(&c->o, 0, sizeof c->o);
    c->o.elf_layout = JITANON_ELF_PER_FUNCTION;
}

/* Runs the case's recording with c->o; 1 when it succeeded. */
static int tl_hold_run(tl_hold *c)
{
    return tl_run(&c->w, &c->perf, &c->o, c->v, sizeof c->v / sizeof c->v[0], &c->n, &c->st, &c->err) == JITANON_OK;
}

static size_t tl_hold_named(tl_hold *c)
{
    return tl_named(c->v, c->n);
}

static void tl_hold_end(tl_hold *c)
{
    jitanon_membuf_release(&c->perf);
    jitanon_membuf_release(&c->w.dump);
}

/* A JIT that flushes its dump late (node writes 4 KiB blocks, at exit the rest): f0 and
   f1 (loads at 25 and 45, under an //anon mapping) reach the file only once perf has sent
   `late` rounds of `rounds`, each with a sample in f0 and one in f1 (0: never); or when
   the process exits, its EXIT in round `exit_at` (0: none).  Round k is at k * step ns.
   A process without a dump (pid 200) runs in its own //anon memory in round 1.
   `together`: round 1's samples are in the marker's round (CPython opens its dump and
   maps its trampolines right before it runs them). */
static void tl_lag_hold(tl_hold *c, unsigned rounds, unsigned late, unsigned exit_at, uint64_t step, int together)
{
    static const uint8_t code[0x100] = {0xc3};
    tl_world *w = &c->w;
    jitanon_membuf *perf = &c->perf;
    ti_gen g;
    uint8_t raw[128];
    jitanon_jitdump_writer jw;
    jitanon_perf_record rec;
    jitanon_error err;
    unsigned k;
    tl_start(w, &jw, &g, raw, perf, 20, &err);
    tl_hold_opts(c);
    w->initial = w->dump.size; /* the header only */
    jdrec_write(&jw, jdrec_load(25, TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), &err);
    jdrec_write(&jw, jdrec_load(45, TI_PID, TI_PID, 0x11000, code, 0x100, 1, "f1"), &err);
    ti_mmap(&g, 22, 0x10000, 0x2000, 0x10000, "//anon");
    memset(&rec, 0, sizeof rec);
    rec.mmap.pid = rec.mmap.tid = 200;
    rec.mmap.start = 0x50000;
    rec.mmap.len = 0x1000;
    rec.mmap.prot = 7;
    rec.mmap.filename.data = "//anon";
    rec.mmap.filename.length = 6;
    ti_put(&g, &rec, JITANON_PERF_RECORD_MMAP2, JITANON_PERF_MISC_USER, 23);
    if (!together) ti_round(&g);
    for (k = 1; k <= rounds; k++) {
        ti_sample(&g, 30 + k * step, 0x10010);
        ti_sample(&g, 60 + k * step, 0x11010);
        if (k == 1) {
            memset(&rec, 0, sizeof rec);
            rec.sample.ip = 0x50010;
            rec.sid.pid = rec.sid.tid = 200;
            ti_put(&g, &rec, JITANON_PERF_RECORD_SAMPLE, JITANON_PERF_MISC_USER, 65 + k * step);
        }
        if (k == exit_at) ti_task(&g, JITANON_PERF_RECORD_EXIT, 70 + k * step, TI_PID, TI_PID, TI_PID);
        ti_round(&g);
        if (k == late || k == exit_at) {
            w->at[0] = perf->size;
            w->size[0] = w->dump.size;
            w->stages = 1;
        }
    }
    ti_gen_end(&g);
}

/* The dump lags 4 rounds behind the samples: they are held back (with every round after
   them) until it catches up, so all 12 are named, in time order, each function mapped
   at its load time; the process without a dump is counted, not waited for.  Held
   nothing, the first rounds' samples go out unnamed, and one line says what it cost. */
static void test_live_hold_lagging_dump(void)
{
    static tl_hold c;
    const ti_out_rec *m;
    tl_lag_hold(&c, 6, 4, 0, 100, 0);
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK_EQ_U(tl_hold_named(&c), 12);
    JT_CHECK((m = tl_mmap_of(c.v, c.n, 0)) && m->time == 25);
    JT_CHECK((m = tl_mmap_of(c.v, c.n, 1)) && m->time == 45);
    JT_CHECK(tl_in_time_order(c.v, c.n));
    JT_CHECK(c.st.hold.rounds >= 3 && c.st.hold.peak_bytes > 0 && c.st.hold.bound_hits == 0);
    JT_CHECK(c.st.unnamed.past_bound == 0 && c.st.unnamed.stopped == 0 && c.st.unnamed.not_in_dump == 0);
    JT_CHECK_EQ_U(c.st.unnamed.no_dump, 1);
    JT_CHECK(c.w.lines == 0 && c.w.opens == c.w.closes);

    c.o.hold_bytes = JITANON_HOLD_NONE;
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK(c.st.hold.rounds == 0 && c.st.hold.peak_bytes == 0);
    /* rounds are decided one round late, as perf sorts them: the first two go unnamed */
    JT_CHECK(c.st.unnamed.past_bound >= 4 && tl_hold_named(&c) + c.st.unnamed.past_bound == 12);
    JT_CHECK(tl_in_time_order(c.v, c.n));
    JT_CHECK(c.w.lines == 1 && strstr(c.w.log, "past the hold-back bound"));

    /* a bound smaller than one round: each round goes as it comes, counted */
    c.o.hold_bytes = 1;
    c.w.log[0] = 0;
    c.w.lines = 0;
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK(c.st.hold.bound_hits >= 6 && c.st.hold.rounds == 0);
    JT_CHECK(c.st.unnamed.past_bound >= 4 && tl_hold_named(&c) + c.st.unnamed.past_bound == 12);
    JT_CHECK(c.w.lines == 1);
    tl_hold_end(&c);
}

/* The samples of the marker's own round wait for its dump too: the marker is read when
   its round comes, not when it is decided, so all 12 are named (before: the 2 of that
   round were decided with the dump's header only).  The same with writer threads. */
static void test_live_hold_marker_round(void)
{
    static tl_hold c;
    tl_lag_hold(&c, 6, 4, 0, 100, 1);
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK_EQ_U(tl_hold_named(&c), 12);
    JT_CHECK(tl_in_time_order(c.v, c.n) && c.st.hold.rounds >= 3);
    JT_CHECK(c.st.unnamed.past_bound == 0 && c.st.unnamed.stopped == 0 && c.st.unnamed.no_dump == 1);
    JT_CHECK(c.st.dumps.markers == 1 && c.st.follow.dumps == 1 && c.w.lines == 0 && c.w.opens == c.w.closes);
    JT_CHECK_EQ_U(ti_count(c.v, c.n, JITANON_PERF_RECORD_MMAP2, "/some/dir/jit-"), 0); /* marker consumed once */
    c.w.threads = 1;
    c.o.elf_threads = 2;
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK(tl_hold_named(&c) == 12 && c.st.elf.files == 2);
    tl_alloc_sweep(&c.w, &c.perf);
    tl_hold_end(&c);
}

/* A dump that never catches up: everything is held to the end of the input and then
   decided (the JIT stopped writing, said once); held within the bound, the oldest rounds
   go first.  A dump that does not grow for opts.follow_idle_ms is not waited for. */
static void test_live_hold_stopped(void)
{
    static tl_hold c;
    tl_lag_hold(&c, 40, 0, 0, 100, 0);
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK(c.st.hold.rounds == 40 && tl_hold_named(&c) == 0);
    JT_CHECK(c.st.unnamed.stopped == 80 && c.st.unnamed.past_bound == 0);
    JT_CHECK(c.w.lines == 1 && strstr(c.w.log, "80 after the JIT stopped writing"));
    JT_CHECK(tl_in_time_order(c.v, c.n));

    c.o.hold_bytes = 2048; /* a few rounds */
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK(c.st.hold.bound_hits > 0 && c.st.hold.peak_bytes <= 2048 + 1024);
    JT_CHECK(c.st.unnamed.past_bound > 0 && c.st.unnamed.past_bound + c.st.unnamed.stopped == 80);
    JT_CHECK(tl_in_time_order(c.v, c.n));

    if (jitanon_jitdump_now()) { /* a clock to stop by */
        c.o.hold_bytes = 0;
        c.o.follow_idle_ms = 1;
        c.w.nap_at = c.perf.size / 8; /* three ms pass early on */
        JT_CHECK(tl_hold_run(&c));
        JT_CHECK(c.st.hold.rounds < 10 && c.st.unnamed.stopped == 80);
    }
    tl_hold_end(&c);

    /* by the recording's time too (a recording piped from a file outruns the clock):
       rounds 1 ms apart, 3 ms of idle allowed, so rounds 1 and 2 wait, no more */
    tl_lag_hold(&c, 40, 0, 0, 1000000, 0);
    c.o.follow_idle_ms = 3;
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK(c.st.hold.rounds == 2 && c.st.unnamed.stopped == 80 && tl_in_time_order(c.v, c.n));
    tl_hold_end(&c);
}

/* The process exits with its dump's last block unflushed until then: the EXIT, read
   while its samples are held, has the dump read to the end at once, and every sample is
   named; allocation failures in the held path are typed and leak nothing. */
static void test_live_hold_until_exit(void)
{
    static tl_hold c;
    tl_lag_hold(&c, 5, 0, 5, 100, 0);
    JT_CHECK(tl_hold_run(&c));
    JT_CHECK_EQ_U(tl_hold_named(&c), 10);
    JT_CHECK(c.st.hold.rounds >= 4 && c.st.unnamed.stopped == 0 && c.st.unnamed.past_bound == 0);
    JT_CHECK(tl_in_time_order(c.v, c.n) && c.w.opens == c.w.closes && c.w.lines == 0);
    tl_alloc_sweep(&c.w, &c.perf);
    tl_hold_end(&c);
}

/* The start of the scenarios with unwinding data: tl_start's, its attr with `extra`
   sample_type bits (a new writer, the attr's raw bytes too); f0 and f1 (loads at 25 and
   45) in an //anon mapping and an executable file mapped, the dump with its header only
   at first.  `fresh`: the //anon mapping comes in the round of the first samples. */
static void tl_start_unwind(tl_hold *c, jitanon_jitdump_writer *jw, ti_gen *g, uint8_t raw[128], uint64_t extra,
                            int fresh)
{
    static const uint8_t code[0x100] = {0xc3};
    tl_world *w = &c->w;
    jitanon_membuf *perf = &c->perf;
    jitanon_error err;
    tl_start(w, jw, g, raw, perf, 20, &err);
    tl_hold_opts(c);
    jitanon_perf_writer_release(&g->w);
    jitanon_membuf_release(perf);
    memset(perf, 0, sizeof *perf);
    g->attr.sample_type |= extra;
    JT_CHECK(jitanon_perf_encode_attr(raw, 128, &g->attr, 4000, 0, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_init(&g->w, JITANON_PERF_PIPE, 0, jdrec_sink(perf), NULL, NULL, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_add_attr(&g->w, &g->attr, &err) == JITANON_OK);
    ti_mmap(g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    w->initial = w->dump.size;
    jdrec_write(jw, jdrec_load(25, TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), &err);
    jdrec_write(jw, jdrec_load(45, TI_PID, TI_PID, 0x11000, code, 0x100, 1, "f1"), &err);
    ti_mmap(g, 23, 0x400000, 0x1000, 0, "/usr/bin/node");
    if (fresh) ti_round(g);
    ti_mmap(g, 22, 0x10000, 0x2000, 0x10000, "//anon");
    if (!fresh) ti_round(g);
}

/* After round `k` of samples: the dump is all written once round 3 went out. */
static void tl_unwind_round(tl_hold *c, ti_gen *g, unsigned k)
{
    ti_round(g);
    if (k == 3) {
        c->w.at[0] = c->perf.size;
        c->w.size[0] = c->w.dump.size;
        c->w.stages = 1;
    }
}

/* Runs the recording held and not: held, f1's mapping (at its load, 45) goes out before
   the first sample; held nothing, after it. */
static void tl_unwind_check(tl_hold *c, ti_gen *g)
{
    jitanon_error err;
    size_t i, first_sample = SIZE_MAX, f1_at = SIZE_MAX;
    JT_CHECK(jitanon_perf_writer_finish(&g->w, &err) == JITANON_OK);
    jitanon_perf_writer_release(&g->w);
    JT_CHECK(tl_hold_run(c));
    for (i = 0; i < c->n; i++) {
        if (c->v[i].type == JITANON_PERF_RECORD_SAMPLE && first_sample == SIZE_MAX) first_sample = i;
        if (c->v[i].type == JITANON_PERF_RECORD_MMAP2 && !strcmp(c->v[i].name, "/some/dir/jitted-100-1.so")) f1_at = i;
    }
    JT_CHECK(c->st.hold.rounds >= 2 && f1_at < first_sample && c->v[f1_at].time == 45);
    c->o.hold_bytes = JITANON_HOLD_NONE; /* as before: f1 comes after the first samples */
    JT_CHECK(tl_hold_run(c));
    JT_CHECK(tl_mmap_of(c->v, c->n, 1) && tl_mmap_of(c->v, c->n, 1)->time > 45);
    tl_hold_end(c);
}

/* perf record -g: a sample whose ip is in a file (a builtin, the interpreter) and whose
   caller is a function the dump has not reached yet is held as well, so f1's mapping goes
   out before it (perf names callers from the same maps). */
static void test_live_hold_callchain(void)
{
    static tl_hold c;
    ti_gen g;
    uint8_t raw[128], chain[3 * 8];
    jitanon_jitdump_writer jw;
    jitanon_perf_record rec;
    unsigned k;
    tl_start_unwind(&c, &jw, &g, raw, JITANON_PERF_SAMPLE_CALLCHAIN, 0);
    for (k = 1; k <= 5; k++) {
        memset(&rec, 0, sizeof rec);
        jitanon__wr64(chain, JITANON_PERF_CONTEXT_USER, 0);
        jitanon__wr64(chain + 8, 0x400010, 0);
        jitanon__wr64(chain + 16, 0x11020, 0); /* a return address in f1 */
        rec.sample.ip = 0x400010;
        rec.sid.pid = rec.sid.tid = TI_PID;
        rec.sample.callchain.data = chain;
        rec.sample.callchain.size = sizeof chain;
        rec.sample.callchain_nr = 3;
        ti_put(&g, &rec, JITANON_PERF_RECORD_SAMPLE, JITANON_PERF_MISC_USER, 60 + k * 100);
        tl_unwind_round(&c, &g, k);
    }
    tl_unwind_check(&c, &g);
}

/* perf record --call-graph dwarf (CPython 3.13's -X perf_jit): the jitted caller is only
   in the copied user stack, which perf's unwinder reads; the sample is held the same way.
   Its words: a stack address, a return address into f1 at an 8-byte step, 0.  Also when
   the //anon mapping is in the samples' round, not yet decided (CPython maps its
   trampolines' memory right before it runs them). */
static void test_live_hold_stack_user(void)
{
    static tl_hold c;
    ti_gen g;
    uint8_t raw[128], b[128];
    jitanon_jitdump_writer jw;
    jitanon_error err;
    static const uint64_t words[] = {0, 0x400010, TI_PID | (uint64_t)TI_PID << 32, 0, 0, 250000, /* ..PERIOD */
                                     24, 0x7ffc1000, 0x11020, 0, 24};                         /* stack, dyn_size */
    size_t i;
    unsigned k, fresh;
    for (fresh = 0; fresh < 2; fresh++) {
        tl_start_unwind(&c, &jw, &g, raw, JITANON_PERF_SAMPLE_STACK_USER, (int)fresh);
        for (k = 1; k <= 5; k++) {
            jitanon__wr32(b, JITANON_PERF_RECORD_SAMPLE, 0);
            jitanon__wr16(b + 4, JITANON_PERF_MISC_USER, 0);
            jitanon__wr16(b + 6, (uint16_t)(8 + sizeof words), 0);
            for (i = 0; i < sizeof words / 8; i++) jitanon__wr64(b + 8 + 8 * i, words[i], 0);
            jitanon__wr64(b + 8, TI_ID, 0);               /* IDENTIFIER */
            jitanon__wr64(b + 32, 60 + k * 100, 0);       /* TIME */
            JT_CHECK(jitanon_perf_writer_write(&g.w, b, 8 + sizeof words, &err) == JITANON_OK);
            tl_unwind_round(&c, &g, k);
        }
        tl_unwind_check(&c, &g);
    }
}

static void suite_live(void)
{
    JT_RUN(test_live_dump_grows_between_rounds);
    JT_RUN(test_live_region_batches);
    JT_RUN(test_live_alloc_failures);
    JT_RUN(test_live_writer_stops);
    JT_RUN(test_live_damage_later);
    JT_RUN(test_live_bounded_wait);
    JT_RUN(test_live_flat_memory);
    JT_RUN(test_live_hold_lagging_dump);
    JT_RUN(test_live_hold_marker_round);
    JT_RUN(test_live_hold_stopped);
    JT_RUN(test_live_hold_until_exit);
    JT_RUN(test_live_hold_callchain);
    JT_RUN(test_live_hold_stack_user);
}
JT_SUITE(live)
#undef JT_SUITES
#define JT_SUITES jt_suites_live
