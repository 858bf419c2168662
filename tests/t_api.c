/* The public pieces the tools are built on: record encoders (checked against the
   hand-built bytes of t_perfdata.c and through the reader), the sample consumers'
   callbacks and what a sample carries. */

/* -- encoders ---------------------------------------------------------------------------- */

/* Every record of pdt_file the encoder covers, decoded and encoded again, is the same
   bytes; so are the attrs.  The trailer's id is the attr's first: give it the record's. */
static void test_api_encode_matches_hand_built(void)
{
    int big, same = 0;
    for (big = 0; big < 2; big++) {
        pdt_b b;
        memin in;
        jitanon_perf_reader r;
        jitanon_perf_record rec;
        jitanon_error err;
        uint8_t out[512];
        size_t n, i;
        pdt_file(&b, big);
        in = memin_make(b.m.data, b.m.size, 0, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
        for (i = 0; i < r.attr_count; i++) {
            jitanon_perf_attr a = r.attrs[i];
            uint64_t period = jitanon_perf_u64_at(a.raw, 2, big);
            a.size = 0; /* 128 */
            JT_CHECK_EQ_U(jitanon_perf_encode_attr(out, sizeof out, &a, period, big, &err), JITANON_OK);
            JT_CHECK(a.raw.size == r.attrs[i].raw.size && !memcmp(out, r.attrs[i].raw.data, a.raw.size));
            JT_CHECK_EQ_U(a.id_hdr_size, r.attrs[i].id_hdr_size);
            JT_CHECK_EQ_U(a.sample_id_all, r.attrs[i].sample_id_all);
        }
        while (jitanon_perf_reader_next(&r, &rec, &err) == JITANON_OK) {
            jitanon_perf_attr a = r.attrs[rec.attr_index];
            jitanon_result res;
            a.ids = &rec.sid.id;
            a.id_count = rec.sid.id != 0;
            res = jitanon_perf_encode(out, sizeof out, &n, &rec, &a, &err);
            if (rec.type == JITANON_PERF_RECORD_SAMPLE && (a.sample_type & JITANON_PERF_SAMPLE_READ)) {
                JT_CHECK_EQ_U(res, JITANON_ERR_UNSUPPORTED);
                continue;
            }
            if (res == JITANON_ERR_UNSUPPORTED) continue; /* TIME_CONV, ID_INDEX, ... */
            JT_CHECK_EQ_U(res, JITANON_OK);
            JT_CHECK(n == rec.raw.size && !memcmp(out, rec.raw.data, n));
            same++;
        }
        jitanon_perf_reader_release(&r);
        jitanon_membuf_release(&b.m);
    }
    JT_CHECK_EQ_U(same, 2 * 8); /* COMM, MMAP, 2 MMAP2, FORK, SAMPLE, FINISHED_ROUND, EXIT */
}

/* Fields the hand-built file has no record of: LOST, ADDR, STREAM_ID; written and read
   back in both byte orders and modes. */
static void test_api_encode_roundtrip(void)
{
    int k;
    for (k = 0; k < 4; k++) {
        int big = k & 1, pipe = k >> 1;
        jitanon_perf_writer w;
        jitanon_perf_reader r;
        jitanon_perf_record rec, got;
        jitanon_perf_attr a;
        jitanon_error err;
        jitanon_membuf m;
        memin in;
        uint8_t raw[128], out[256], chain[16];
        uint64_t id = 42;
        size_t n;
        int seen = 0;
        memset(&a, 0, sizeof a);
        memset(&m, 0, sizeof m);
        a.type = 1;
        a.sample_type = JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME |
                        JITANON_PERF_SAMPLE_ADDR | JITANON_PERF_SAMPLE_STREAM_ID | JITANON_PERF_SAMPLE_CPU |
                        JITANON_PERF_SAMPLE_CALLCHAIN | JITANON_PERF_SAMPLE_IDENTIFIER;
        a.flags = 1ull << 18;
        a.ids = &id;
        a.id_count = 1;
        JT_CHECK_EQ_U(jitanon_perf_encode_attr(raw, sizeof raw, &a, 1, big, &err), JITANON_OK);
        JT_CHECK_EQ_U(a.id_hdr_size, 40); /* TID, TIME, STREAM_ID, CPU, IDENTIFIER */
        JT_CHECK_EQ_U(jitanon_perf_writer_init(&w, pipe ? JITANON_PERF_PIPE : JITANON_PERF_FILE, big, pdt_sink(&m),
                                               membuf_pwrite, NULL, &err),
                      JITANON_OK);
        JT_CHECK_EQ_U(jitanon_perf_writer_add_attr(&w, &a, &err), JITANON_OK);
        memset(&rec, 0, sizeof rec);
        rec.big_endian = big;
        rec.type = JITANON_PERF_RECORD_LOST;
        rec.lost.id = 42, rec.lost.lost = 7;
        rec.sid.pid = 5, rec.sid.tid = 6, rec.sid.time = 1000, rec.sid.cpu = 2;
        JT_CHECK_EQ_U(jitanon_perf_encode(out, sizeof out, &n, &rec, &a, &err), JITANON_OK);
        JT_CHECK_EQ_U(n, 8 + 16 + 40);
        JT_CHECK_EQ_U(jitanon_perf_writer_write(&w, out, n, &err), JITANON_OK);
        rec.type = JITANON_PERF_RECORD_SAMPLE;
        rec.misc = JITANON_PERF_MISC_USER;
        rec.sample.ip = 0x1234, rec.sample.addr = 0xdead;
        jitanon__wr64(chain, 0xfffffffffffffe00ull, big); /* PERF_CONTEXT_USER */
        jitanon__wr64(chain + 8, 0x1234, big);
        rec.sample.callchain.data = chain, rec.sample.callchain.size = 16, rec.sample.callchain_nr = 2;
        JT_CHECK_EQ_U(jitanon_perf_encode(out, sizeof out, &n, &rec, &a, &err), JITANON_OK);
        JT_CHECK_EQ_U(n, 8 + 8 * 7 + 8 + 16);
        JT_CHECK_EQ_U(jitanon_perf_writer_write(&w, out, n, &err), JITANON_OK);
        JT_CHECK_EQ_U(jitanon_perf_writer_finish(&w, &err), JITANON_OK);
        jitanon_perf_writer_release(&w);
        in = memin_make(m.data, m.size, 0, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
        while (jitanon_perf_reader_next(&r, &got, &err) == JITANON_OK) {
            if (got.type == JITANON_PERF_RECORD_LOST) {
                seen |= 1;
                JT_CHECK(got.lost.id == 42 && got.lost.lost == 7);
            }
            if (got.type != JITANON_PERF_RECORD_SAMPLE) continue;
            seen |= 2;
            JT_CHECK(got.sample.ip == 0x1234 && got.sample.addr == 0xdead && got.sid.stream_id == 42);
            JT_CHECK(got.sid.id == 42 && got.sid.cpu == 2 && got.sid.pid == 5 && got.sid.tid == 6);
            JT_CHECK(got.sample.callchain_nr == 2 && jitanon_perf_u64_at(got.sample.callchain, 1, big) == 0x1234);
        }
        JT_CHECK_EQ_U(seen, 3);
        jitanon_perf_reader_release(&r);
        jitanon_membuf_release(&m);
    }
}

/* What cannot be encoded says so; a small buffer gets the size. */
static void test_api_encode_refuses(void)
{
    jitanon_perf_record rec;
    jitanon_perf_attr a;
    jitanon_error err;
    uint8_t out[64];
    size_t n = 0;
    memset(&rec, 0, sizeof rec);
    memset(&a, 0, sizeof a);
    rec.type = JITANON_PERF_RECORD_SAMPLE;
    JT_CHECK_EQ_U(jitanon_perf_encode(out, sizeof out, &n, &rec, NULL, &err), JITANON_ERR_INVALID_ARGUMENT);
    a.sample_type = JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_RAW;
    JT_CHECK_EQ_U(jitanon_perf_encode(out, sizeof out, &n, &rec, &a, &err), JITANON_ERR_UNSUPPORTED);
    a.sample_type = JITANON_PERF_SAMPLE_CALLCHAIN;
    rec.sample.callchain_nr = 3; /* with no entries */
    JT_CHECK_EQ_U(jitanon_perf_encode(out, sizeof out, &n, &rec, &a, &err), JITANON_ERR_INVALID_ARGUMENT);
    rec.type = JITANON_PERF_RECORD_TIME_CONV;
    JT_CHECK_EQ_U(jitanon_perf_encode(out, sizeof out, &n, &rec, &a, &err), JITANON_ERR_UNSUPPORTED);
    rec.type = JITANON_PERF_RECORD_COMM;
    rec.comm.comm.data = "a-name-that-needs-more-than-this";
    rec.comm.comm.length = strlen(rec.comm.comm.data);
    JT_CHECK_EQ_U(jitanon_perf_encode(out, 16, &n, &rec, NULL, &err), JITANON_ERR_LIMIT);
    JT_CHECK_EQ_U(n, 8 + 8 + 40);
    JT_CHECK_EQ_U(jitanon_perf_encode(NULL, 0, &n, &rec, NULL, &err), JITANON_ERR_LIMIT);
    JT_CHECK_EQ_U(jitanon_perf_encode(out, sizeof out, &n, &rec, NULL, &err), JITANON_OK);
    a.size = 32;
    JT_CHECK_EQ_U(jitanon_perf_encode_attr(out, sizeof out, &a, 0, 0, &err), JITANON_ERR_LIMIT);
    /* an MMAP2 whose attr's id_hdr_size disagrees with its sample_type (the trailer is
       written from sample_type): refused, not written past the record it sized */
    memset(&rec, 0, sizeof rec);
    rec.type = JITANON_PERF_RECORD_MMAP2;
    a.sample_id_all = 1, a.id_hdr_size = 8;
    a.sample_type = JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME;
    JT_CHECK_EQ_U(jitanon_perf_encode_mmap2(out, sizeof out, &n, &rec, &a, &err), JITANON_ERR_INVALID_ARGUMENT);
    a.id_hdr_size = 16; /* then it is only asked for room: 72 fixed, the name's 8, the trailer */
    JT_CHECK_EQ_U(jitanon_perf_encode_mmap2(NULL, 0, &n, &rec, &a, &err), JITANON_ERR_LIMIT);
    JT_CHECK_EQ_U(n, 72 + 8 + 16);
}

/* -- what on_sample and on_event consumers get -------------------------------------------- */

typedef struct api_log {
    char order[64]; /* one letter per callback: C(omm) F(ork) E(xit) M(map) S(ample) */
    size_t n;
    jitanon_inject_sample s[2];
    char name[2][32];
    uint64_t period[2];
    uint32_t cpu[2];
    size_t attr[2];
} api_log;

static void api_on_event(void *user, const jitanon_perf_record *rec)
{
    api_log *l = (api_log *)user;
    char c = rec->type == JITANON_PERF_RECORD_COMM   ? 'C'
             : rec->type == JITANON_PERF_RECORD_FORK ? 'F'
             : rec->type == JITANON_PERF_RECORD_EXIT ? 'E'
             : rec->type == JITANON_PERF_RECORD_MMAP2 ? 'M'
                                                      : '?';
    if (l->n < sizeof l->order - 1) l->order[l->n++] = c;
}

static void api_on_sample(void *user, const jitanon_inject_sample *s)
{
    api_log *l = (api_log *)user;
    size_t k, len;
    for (k = 0; k < 2 && l->s[k].time; k++) {}
    if (l->n < sizeof l->order - 1) l->order[l->n++] = 'S';
    if (k == 2) return;
    l->s[k] = *s;
    len = s->name.length < 31 ? s->name.length : 31;
    memcpy(l->name[k], s->name.data, len);
    l->period[k] = s->rec->sample.period;
    l->cpu[k] = s->rec->sid.cpu;
    l->attr[k] = s->rec->attr_index;
}

static void api_mmap(ti_gen *g, uint32_t pid, uint64_t time, uint64_t start, uint64_t len, uint64_t pgoff,
                     const char *name)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    rec.mmap.pid = rec.mmap.tid = pid;
    rec.mmap.start = start, rec.mmap.len = len, rec.mmap.pgoff = pgoff;
    rec.mmap.prot = 5, rec.mmap.flags = 2;
    rec.mmap.filename.data = name, rec.mmap.filename.length = strlen(name);
    ti_put(g, &rec, JITANON_PERF_RECORD_MMAP2, pid == UINT32_MAX ? 1 : JITANON_PERF_MISC_USER, time);
}

/* One pass: the events come in time order between the samples, to their own user
   pointer; a sample carries its record, cpumode and the file offset of its mapping; a
   kernel address resolves to the kernel's mapping (perf's pid -1). */
static void test_api_events_and_sample_fields(void)
{
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_perf_record rec;
    jitanon_error err;
    api_log log;
    ti_gen g;
    uint8_t raw[128];
    int other = 0;
    memset(&perf, 0, sizeof perf);
    memset(&log, 0, sizeof log);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    api_mmap(&g, UINT32_MAX, 1, 0xffffffff81000000ull, 0x1000000, 0xffffffff81000000ull, "[kernel.kallsyms]_text");
    memset(&rec, 0, sizeof rec);
    rec.comm.pid = rec.comm.tid = TI_PID;
    rec.comm.comm.data = "app", rec.comm.comm.length = 3;
    ti_put(&g, &rec, JITANON_PERF_RECORD_COMM, 0, 5);
    api_mmap(&g, TI_PID, 10, 0x400000, 0x2000, 0x1000, "/usr/lib/libx.so");
    ti_sample(&g, 30, 0x400100);
    memset(&rec, 0, sizeof rec);
    rec.sample.ip = 0xffffffff81000100ull;
    rec.sid.pid = rec.sid.tid = TI_PID;
    rec.sample.period = 1234;
    ti_put(&g, &rec, JITANON_PERF_RECORD_SAMPLE, 1 /* PERF_RECORD_MISC_KERNEL */, 40);
    ti_task(&g, JITANON_PERF_RECORD_FORK, 20, TI_PID + 1, TI_PID, TI_PID + 1); /* before the samples in time */
    ti_round(&g);
    ti_task(&g, JITANON_PERF_RECORD_EXIT, 50, TI_PID, TI_PID, TI_PID);
    ti_gen_end(&g);
    memset(&o, 0, sizeof o);
    o.on_sample = api_on_sample;
    o.on_event = api_on_event;
    o.sample_user = &log;
    o.io.user = &other;
    JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
    log.order[log.n] = 0;
    JT_CHECK(!strcmp(log.order, "MCMFSSE"));
    JT_CHECK(log.s[0].kind == JITANON_TRIM_FILE && !strcmp(log.name[0], "/usr/lib/libx.so"));
    JT_CHECK(log.s[0].start == 0x400000 && log.s[0].pgoff == 0x1000);
    JT_CHECK(log.s[0].cpumode == JITANON_PERF_MISC_USER && log.period[0] == 250000 && log.cpu[0] == 0 && log.attr[0] == 0);
    JT_CHECK(log.s[1].kind == JITANON_TRIM_FILE && !strcmp(log.name[1], "[kernel.kallsyms]_text"));
    JT_CHECK(log.s[1].start == 0xffffffff81000000ull && log.s[1].pgoff == 0xffffffff81000000ull);
    JT_CHECK(log.s[1].cpumode == 1 && log.period[1] == 1234);
    jitanon_membuf_release(&perf);
}

/* -- a dump's functions -------------------------------------------------------------------- */

/* LLVM's batch order (both DEBUG_INFOs, then both LOADs) pairs by address; a DEBUG_INFO
   with another code_addr goes to the next LOAD whose code holds its first line; an
   UNWINDING_INFO to the next LOAD; one no LOAD takes is counted.  jitanon_elf_func_of
   leaves room for the unwinding info the runtime keeps mapped. */
static void test_api_func_iter(void)
{
    static const uint8_t code[64] = {0xc3};
    static const uint8_t eh[32] = {0};
    jitanon_jitdump_writer w;
    jitanon_jitdump_debug_entry e;
    jitanon_jitdump_func_iter it;
    jitanon_jitdump_func f[4];
    jitanon_jitdump *d;
    jitanon_membuf m;
    jitanon_error err;
    jitanon_elf_func fn;
    size_t n = 0;
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    memset(&e, 0, sizeof e);
    e.file.data = "a.js", e.file.length = 4, e.lineno = 1;
    JT_CHECK_EQ_U(jdrec_begin(&w, jdrec_sink(&m), 62, 7, 1, 0, &err), JITANON_OK);
    e.addr = 0x1000;
    JT_CHECK_EQ_U(jitanon_jitdump_write_debug_info(&w, 2, 0x1000, &e, 1, &err), JITANON_OK);
    e.addr = 0x2000;
    JT_CHECK_EQ_U(jitanon_jitdump_write_debug_info(&w, 3, 0x2000, &e, 1, &err), JITANON_OK);
    JT_CHECK_EQ_U(jdrec_write(&w, jdrec_load(4, 7, 7, 0x1000, code, 64, 1, "a"), &err), JITANON_OK);
    JT_CHECK_EQ_U(jdrec_write(&w, jdrec_unwind(5, eh, 16, eh, 16, 40), &err), JITANON_OK);
    JT_CHECK_EQ_U(jdrec_write(&w, jdrec_load(6, 7, 7, 0x2000, code, 64, 2, "b"), &err), JITANON_OK);
    e.addr = 0x3010;
    JT_CHECK_EQ_U(jitanon_jitdump_write_debug_info(&w, 7, 0x9999, &e, 1, &err), JITANON_OK); /* IN_CODE */
    JT_CHECK_EQ_U(jitanon_jitdump_write_debug_info(&w, 8, 0x8888, &e, 1, &err), JITANON_OK); /* newer: taken */
    JT_CHECK_EQ_U(jdrec_write(&w, jdrec_load(9, 7, 7, 0x3000, code, 64, 3, "c"), &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_jitdump_load_memory(m.data, m.size, NULL, &d, &err), JITANON_OK);
    jitanon_jitdump_func_iter_begin(&it, d, NULL);
    while (n < 4 && jitanon_jitdump_func_iter_next(&it, &f[n], &err) == JITANON_OK) n++;
    JT_CHECK_EQ_U(n, 3);
    JT_CHECK_EQ_U(jitanon_jitdump_func_iter_next(&it, &f[3], &err), JITANON_END);
    JT_CHECK(f[0].debug && f[0].debug->debug.code_addr == 0x1000 && !f[0].unwind);
    JT_CHECK(f[1].debug && f[1].debug->debug.code_addr == 0x2000 && f[1].unwind);
    JT_CHECK(f[2].debug && f[2].debug->debug.code_addr == 0x8888 && !f[2].unwind);
    JT_CHECK_EQ_U(it.debug_unmatched, 1); /* 0x9999 */
    jitanon_elf_func_of(&f[1], &fn);
    JT_CHECK(fn.code_addr == 0x2000 && fn.code.size == 64 && fn.debug == f[1].debug && fn.map_size == 64 + 40);
    jitanon_elf_func_of(&f[0], &fn);
    JT_CHECK_EQ_U(fn.map_size, 0);
    jitanon_jitdump_func_iter_release(&it);
    { /* each allocation failed in turn (the first, _next's state): NOMEM, nothing kept */
        long k;
        for (k = 1; k < 20; k++) {
            jt_alloc ja;
            jitanon_allocator a;
            jitanon_result r;
            a = jt_allocator(&ja);
            ja.fail_at = k;
            n = 0;
            jitanon_jitdump_func_iter_begin(&it, d, &a);
            while ((r = jitanon_jitdump_func_iter_next(&it, &f[0], &err)) == JITANON_OK) n++;
            jitanon_jitdump_func_iter_release(&it);
            JT_CHECK(ja.live_blocks == 0 && ja.live_bytes == 0);
            if (r == JITANON_END) break;
            JT_CHECK_EQ_U(r, JITANON_ERR_NOMEM);
        }
        JT_CHECK(k > 1 && k < 20 && n == 3);
    }
    jitanon_jitdump_destroy(d);
    jitanon_membuf_release(&m);
}

/* -- a symbolizer's frames (jitanon_inject_frame_*) ------------------------------------------ */

typedef struct api_frames api_frames;
/* one stream io.open handed out (memin first: memin_read's user) */
struct api_mstream {
    memin in;
    api_frames *t;
};
struct api_frames {
    unsigned samples, perfmap_loads, find_calls;
    char line[8][512]; /* one per sample: its comm, then kind:name:path:line of each frame */
    jitanon_membuf map;
    /* io.open's: opens by kind (the map's counted in perfmap_loads too), closes */
    jitanon_membuf dump;
    struct api_mstream st[4];
    unsigned opens[4], closes;
    int no_map; /* no perf map: load_perfmap or open fails with _ERR_IO */
    unsigned decline; /* io.open answers JITANON_END for these kinds (1 << kind) */
};

static void api_frames_on_sample(void *user, const jitanon_inject_sample *s)
{
    api_frames *t = (api_frames *)user;
    jitanon_inject_frame_iter it;
    jitanon_frame f;
    char *out;
    size_t n;
    if (t->samples >= 8) return;
    out = t->line[t->samples++];
    n = (size_t)snprintf(out, 512, "%.*s|", (int)s->comm.length, s->comm.data ? s->comm.data : "");
    jitanon_inject_frame_iter_begin(&it, s, JITANON_FRAME_WANT_ALL);
    while (jitanon_inject_frame_iter_next(&it, &f) && n < 400)
        n += (size_t)snprintf(out + n, 512 - n, "%d:%.*s:%.*s:%.*s@%u:%x:%u ", (int)f.kind, (int)f.name.length,
                              f.name.data ? f.name.data : "", (int)f.path.length, f.path.data ? f.path.data : "",
                              (int)f.src_file.length, f.src_file.data ? f.src_file.data : "", (unsigned)f.line,
                              (unsigned)f.offset, (unsigned)f.build_id.size);
}

static jitanon_result api_frames_perfmap(void *user, const char *path, const jitanon_perfmap_opts *opts,
                                         jitanon_perfmap **out, jitanon_error *err)
{
    api_frames *t = (api_frames *)user;
    t->perfmap_loads++;
    if (strcmp(path, "/tmp/perf-100.map") != 0 || t->no_map) {
        *out = NULL;
        return JITANON__FAIL(err, JITANON_ERR_IO, 0, "none");
    }
    return jitanon_perfmap_load_memory(t->map.data, t->map.size, opts, out, err);
}

static jitanon_result api_frames_dump(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                      jitanon_jitdump **out, jitanon_error *err)
{
    api_frames *t = (api_frames *)user;
    jitanon_membuf d;
    jitanon_result res;
    (void)t;
    /* find_process said the process runs in another mount namespace as pid 7 */
    JT_CHECK(strcmp(path, "/proc/100/root/some/dir/jit-100.dump") == 0);
    ti_build_dump(&d);
    res = jitanon_jitdump_load_memory(d.data, d.size, opts, out, err);
    jitanon_membuf_release(&d);
    return res;
}

static size_t api_frames_no_file(void *user, const char *path, uint64_t offset, void *dst, size_t size)
{
    (void)user, (void)path, (void)offset, (void)dst, (void)size;
    return SIZE_MAX;
}

static int api_frames_find(void *user, uint32_t pid, jitanon_inject_process *out)
{
    api_frames *t = (api_frames *)user;
    t->find_calls++;
    JT_CHECK(pid == TI_PID && out->nspid == TI_PID && !out->other_mnt);
    out->other_mnt = 1;
    return 1;
}

/* ti_gen_begin's recording (file mode), its attr with callchains. */
static void api_gen_callchains(ti_gen *g, uint8_t raw[128], jitanon_membuf *perf)
{
    jitanon_sink sink = {jitanon_membuf_write, NULL};
    jitanon_error err;
    ti_gen_begin(g, raw, 1, perf, JITANON_PERF_FILE);
    jitanon_perf_writer_release(&g->w);
    memset(perf, 0, sizeof *perf);
    sink.user = perf;
    g->attr.sample_type |= JITANON_PERF_SAMPLE_CALLCHAIN;
    JT_CHECK(jitanon_perf_encode_attr(raw, 128, &g->attr, 4000, 0, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_init(&g->w, JITANON_PERF_FILE, 0, sink, membuf_pwrite, NULL, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_add_attr(&g->w, &g->attr, &err) == JITANON_OK);
}

/* A sample with callchain `chain` (n entries) at `time`. */
static void api_chain_sample_of(ti_gen *g, uint64_t time, uint32_t pid, uint32_t tid, const uint64_t *chain, size_t n)
{
    jitanon_perf_record rec;
    uint8_t raw[16 * 8];
    size_t i;
    memset(&rec, 0, sizeof rec);
    for (i = 0; i < n; i++) jitanon__wr64(raw + 8 * i, chain[i], 0);
    rec.sample.ip = n ? chain[n > 1 ? 1 : 0] : 0x400100;
    rec.sid.pid = pid;
    rec.sid.tid = tid;
    rec.sample.period = 1;
    rec.sample.callchain.data = raw;
    rec.sample.callchain.size = 8 * n;
    rec.sample.callchain_nr = n;
    ti_put(g, &rec, JITANON_PERF_RECORD_SAMPLE, JITANON_PERF_MISC_USER, time);
}

static void api_chain_sample(ti_gen *g, uint64_t time, uint32_t tid, const uint64_t *chain, size_t n)
{
    api_chain_sample_of(g, time, TI_PID, tid, chain, n);
}

/* The frames of a callchain as perf script prints them: kernel frames in the kernel's
   maps, user ones in the process's: a jitted function with its DEBUG_INFO line, a perf
   map's symbol for a stub in //anon, a file with its offset and the recording's
   build-id, an address in nothing; a chain with a guest marker yields nothing; a sample
   without a chain its own ip.  The thread's comm follows COMM and FORK; the container
   lookup is the embedder's (io.find_process), the dump then read through its root. */
/* test_api_frames's recording. */
static void api_frames_perf(jitanon_membuf *perf)
{
    const uint64_t K = JITANON_PERF_CONTEXT_KERNEL, U = JITANON_PERF_CONTEXT_USER;
    const uint64_t chain[] = {K, 0xffffffff81000100ull, U, 0x10010, 0x10150, 0x400100, 0x999999};
    const uint64_t guest[] = {JITANON_PERF_CONTEXT_GUEST, 0x10010};
    uint8_t bid[36 + 16], raw[128];
    jitanon_perf_record rec;
    jitanon_error err;
    ti_gen g;
    memset(perf, 0, sizeof *perf);
    api_gen_callchains(&g, raw, perf);
    /* HEADER_BUILD_ID: one entry, for /usr/bin/fakejit, its size byte set (16 bytes) */
    memset(bid, 0, sizeof bid);
    jitanon__wr16(bid + 4, 1u << 15, 0);
    jitanon__wr16(bid + 6, sizeof bid, 0);
    jitanon__wr32(bid + 8, UINT32_MAX, 0);
    memset(bid + 12, 0xab, 16);
    bid[32] = 16;
    memcpy(bid + 36, "/usr/bin/fakejit", 16); /* NUL-padded by the memset */
    JT_CHECK(jitanon_perf_writer_add_feature(&g.w, JITANON_PERF_FEAT_BUILD_ID, bid, sizeof bid, &err) == JITANON_OK);
    api_mmap(&g, UINT32_MAX, 1, 0xffffffff81000000ull, 0x1000000, 0xffffffff81000000ull, "[kernel.kallsyms]_text");
    memset(&rec, 0, sizeof rec);
    rec.comm.pid = rec.comm.tid = TI_PID;
    rec.comm.comm.data = "app", rec.comm.comm.length = 3;
    ti_put(&g, &rec, JITANON_PERF_RECORD_COMM, 0, 5);
    ti_task(&g, JITANON_PERF_RECORD_FORK, 6, TI_PID, TI_PID, TI_PID + 1); /* a thread: named "app" */
    ti_mmap(&g, 10, 0x400000, 0x1000, 0x2000, "/usr/bin/fakejit");
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_mmap(&g, 50, 0x10000, 0x2000, 0x10000, "//anon");
    api_chain_sample(&g, 60, TI_PID + 1, chain, sizeof chain / sizeof chain[0]);
    api_chain_sample(&g, 61, TI_PID, guest, 2);
    api_chain_sample(&g, 62, TI_PID + 2, NULL, 0);
    { /* perf record --buildid-mmap: the MMAP2 carries the build-id */
        static const uint8_t id[20] = {0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd,
                                       0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd};
        uint64_t lib[] = {U, 0x500010};
        memset(&rec, 0, sizeof rec);
        rec.mmap.pid = rec.mmap.tid = TI_PID;
        rec.mmap.start = 0x500000, rec.mmap.len = 0x1000;
        rec.mmap.prot = 5, rec.mmap.flags = 2;
        rec.mmap.has_build_id = 1, rec.mmap.build_id_size = 20, rec.mmap.build_id = id;
        rec.mmap.filename.data = "/usr/lib/libbid.so", rec.mmap.filename.length = 18;
        ti_put(&g, &rec, JITANON_PERF_RECORD_MMAP2, JITANON_PERF_MISC_USER | JITANON_PERF_MISC_MMAP_BUILD_ID, 63);
        api_chain_sample(&g, 64, TI_PID, lib, 2);
    }
    ti_round(&g);
    ti_gen_end(&g);
}

static void test_api_frames(void)
{
    static const char map[] = "10140 20 stub_a\n";
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_error err;
    api_frames t;
    memset(&t, 0, sizeof t);
    JT_CHECK(jitanon_membuf_write(&t.map, map, strlen(map)) == 0);
    api_frames_perf(&perf);
    jitanon_inject_opts_init(&o);
    o.on_sample = api_frames_on_sample;
    o.sample_fields = JITANON_SAMPLE_COMM;
    o.io.user = &t;
    o.io.load_dump = api_frames_dump;
    o.io.load_perfmap = api_frames_perfmap;
    o.io.find_process = api_frames_find;
    o.io.read_file = api_frames_no_file; /* (WANT_ALL names native frames: no file here has symbols) */
    JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(t.samples, 4);
    JT_CHECK_EQ_U(t.find_calls, 2); /* the dump's lookup, and the native frames' (once a process) */
    JT_CHECK_EQ_U(t.perfmap_loads, 1); /* once for the process, though asked twice */
    JT_CHECK(!strcmp(t.line[0], "app|4::[kernel.kallsyms]_text:@0:81000100:0 "
                                "1:f0:/proc/100/root/some/dir/jit-100.dump:f0.js@3:10:0 "
                                "2:stub_a:/tmp/perf-100.map:@0:10:0 3::/usr/bin/fakejit:@0:2100:16 0:::@0:0:0 "));
    JT_CHECK(!strcmp(t.line[1], "app|"));            /* a guest context: perf drops the chain */
    JT_CHECK(!strcmp(t.line[2], "|3::/usr/bin/fakejit:@0:2100:16 ")); /* unnamed thread, own ip */
    JT_CHECK(!strcmp(t.line[3], "app|3::/usr/lib/libbid.so:@0:10:20 ")); /* the MMAP2's own build-id */
    jitanon_membuf_release(&t.map);
    jitanon_membuf_release(&perf);
}

static int api_frames_close(void *user)
{
    ((struct api_mstream *)user)->t->closes++;
    return 0;
}

static size_t api_frames_no_read_at(void *user, uint64_t offset, void *dst, size_t size)
{
    (void)user, (void)offset, (void)dst, (void)size;
    return SIZE_MAX;
}

/* io.open over the same bytes as api_frames_dump, _perfmap and _no_file: memory streams
   in odd-sized reads; a native file opens, and every read of it fails. */
static jitanon_result api_frames_open(void *user, jitanon_file_kind kind, const char *path, jitanon_stream *out,
                                      jitanon_error *err)
{
    api_frames *t = (api_frames *)user;
    JT_CHECK(kind >= JITANON_FILE_JITDUMP && kind <= JITANON_FILE_BINARY);
    t->opens[kind]++;
    memset(out, 0, sizeof *out);
    if (t->decline & 1u << kind) return JITANON_END; /* the library's default opens it */
    if (kind == JITANON_FILE_JITDUMP && !strcmp(path, "/proc/100/root/some/dir/jit-100.dump")) {
        if (!t->dump.data) ti_build_dump(&t->dump);
        t->st[kind].in = memin_make(t->dump.data, t->dump.size, 7, 1);
    } else if (kind == JITANON_FILE_PERF_MAP) {
        t->perfmap_loads++;
        if (strcmp(path, "/tmp/perf-100.map") != 0 || t->no_map) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "none");
        t->st[kind].in = memin_make(t->map.data, t->map.size, 3, 1);
    } else if (kind == JITANON_FILE_BINARY) {
        out->read_at_fn = api_frames_no_read_at;
    } else
        return JITANON__FAIL(err, JITANON_ERR_IO, 0, "none");
    if (kind != JITANON_FILE_BINARY) *out = memin_stream(&t->st[kind].in);
    t->st[kind].t = t;
    out->close_fn = api_frames_close;
    out->user = &t->st[kind];
    return JITANON_OK;
}

/* An embedder that gives only io.open (with find_process, no file reader) sees the
   frames the deprecated readers give; a perf map that is not there (open: _ERR_IO)
   leaves the stub unnamed, as a missing map does; a deprecated reader set along with
   open wins for its kind. */
/* test_api_frames's options over `t`, without its file readers. */
static void api_frames_opts(jitanon_inject_opts *o, api_frames *t)
{
    jitanon_inject_opts_init(o);
    o->on_sample = api_frames_on_sample;
    o->sample_fields = JITANON_SAMPLE_COMM;
    o->io.user = t;
    o->io.find_process = api_frames_find;
}

/* `old` (the deprecated readers) and `t` (io.open) fresh, each with perf map `map`;
   api_open_pair_release frees what a run left. */
static void api_open_pair(api_frames *old, api_frames *t, const char *map, int no_map)
{
    memset(old, 0, sizeof *old);
    memset(t, 0, sizeof *t);
    old->no_map = t->no_map = no_map;
    JT_CHECK(jitanon_membuf_write(&old->map, map, strlen(map)) == 0);
    JT_CHECK(jitanon_membuf_write(&t->map, map, strlen(map)) == 0);
}

static void api_open_pair_release(api_frames *old, api_frames *t)
{
    jitanon_membuf_release(&old->map);
    jitanon_membuf_release(&t->map);
    jitanon_membuf_release(&t->dump);
}

static void test_api_io_open(void)
{
    static const char map[] = "10140 20 stub_a\n";
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_error err;
    static api_frames old, t;
    unsigned i, k, no_map;
    api_frames_perf(&perf);
    for (no_map = 0; no_map < 2; no_map++) {
        api_open_pair(&old, &t, map, (int)no_map);
        api_frames_opts(&o, &old);
        o.io.load_dump = api_frames_dump;
        o.io.load_perfmap = api_frames_perfmap;
        o.io.read_file = api_frames_no_file;
        JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
        api_frames_opts(&o, &t);
        o.io.open = api_frames_open;
        JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
        JT_CHECK_EQ_U(t.samples, 4);
        JT_CHECK(t.samples == old.samples && t.find_calls == old.find_calls && t.perfmap_loads == old.perfmap_loads);
        for (i = 0; i < 4; i++) JT_CHECK(!strcmp(t.line[i], old.line[i]));
        JT_CHECK_EQ_U(t.opens[JITANON_FILE_JITDUMP], 1);
        JT_CHECK_EQ_U(t.opens[JITANON_FILE_PERF_MAP], 1);
        JT_CHECK(t.opens[JITANON_FILE_BINARY] > 0);
        k = t.opens[1] + t.opens[2] + t.opens[3];
        JT_CHECK_EQ_U(t.closes, no_map ? k - 1 : k); /* all but the one that failed */
        JT_CHECK((strstr(t.line[0], "2:stub_a:") != NULL) == !no_map);
        if (jt.cur_failed) fprintf(stderr, "  old %s\n  open %s\n", old.line[0], t.line[0]);
        api_open_pair_release(&old, &t);
    }
    /* io.open leaves a kind to the default (JITANON_END): the same frames as with the
       default reader of that kind and the deprecated readers for the others */
    for (k = JITANON_FILE_JITDUMP; k <= JITANON_FILE_BINARY; k++) {
        api_open_pair(&old, &t, map, 0);
        api_frames_opts(&o, &old);
        if (k != JITANON_FILE_JITDUMP) o.io.load_dump = api_frames_dump;
        if (k != JITANON_FILE_PERF_MAP) o.io.load_perfmap = api_frames_perfmap;
        if (k != JITANON_FILE_BINARY) o.io.read_file = api_frames_no_file;
        JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
        api_frames_opts(&o, &t);
        o.io.open = api_frames_open;
        t.decline = 1u << k;
        JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
        JT_CHECK(t.samples == 4 && t.samples == old.samples && t.opens[k] > 0);
        for (i = 0; i < 4; i++) JT_CHECK(!strcmp(t.line[i], old.line[i]));
        if (jt.cur_failed) fprintf(stderr, "  kind %u\n  old %s\n  open %s\n", k, old.line[0], t.line[0]);
        api_open_pair_release(&old, &t);
    }
    /* the deprecated readers set along with open win for their kinds */
    api_open_pair(&old, &t, map, 0);
    api_frames_opts(&o, &t);
    o.io.open = api_frames_open;
    o.io.load_dump = api_frames_dump;
    o.io.load_perfmap = api_frames_perfmap;
    JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
    JT_CHECK(strstr(t.line[0], " 1:f0:/proc/100/root/some/dir/jit-100.dump:f0.js@3:10:0 "
                               "2:stub_a:/tmp/perf-100.map:@0:10:0 ") != NULL);
    JT_CHECK_EQ_U(t.perfmap_loads, 1); /* api_frames_perfmap's */
    JT_CHECK(t.opens[JITANON_FILE_JITDUMP] == 0 && t.opens[JITANON_FILE_PERF_MAP] == 0);
    JT_CHECK(t.opens[JITANON_FILE_BINARY] > 0 && t.closes == t.opens[JITANON_FILE_BINARY]);
    api_open_pair_release(&old, &t);
    jitanon_membuf_release(&perf);
}

typedef struct api_inj_io {
    memin in; /* first: io.open's stream user is it, and its close finds closes */
    jitanon_membuf dump, elfs;
    unsigned opens, closes;
} api_inj_io;

/* ELF files an injection wrote, one after the other (name, size, bytes). */
static int api_collect_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    jitanon_membuf *m = &((api_inj_io *)user)->elfs;
    char head[128];
    int n = snprintf(head, sizeof head, "%s/%s %lu\n", dir, name, (unsigned long)size);
    return jitanon_membuf_write(m, head, (size_t)n) || jitanon_membuf_write(m, data, size);
}

static jitanon_result api_inj_load(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                   jitanon_jitdump **out, jitanon_error *err)
{
    api_inj_io *io = (api_inj_io *)user;
    JT_CHECK(!strcmp(path, "/some/dir/jit-100.dump"));
    return jitanon_jitdump_load_memory(io->dump.data, io->dump.size, opts, out, err);
}

static int api_inj_close(void *user)
{
    ((api_inj_io *)user)->closes++;
    return 0;
}

static jitanon_result api_inj_open(void *user, jitanon_file_kind kind, const char *path, jitanon_stream *out,
                                   jitanon_error *err)
{
    api_inj_io *io = (api_inj_io *)user;
    if (kind != JITANON_FILE_JITDUMP || strcmp(path, "/some/dir/jit-100.dump") != 0)
        return JITANON__FAIL(err, JITANON_ERR_IO, 0, "no such file");
    io->opens++;
    io->in = memin_make(io->dump.data, io->dump.size, 5, 1);
    *out = memin_stream(&io->in);
    out->close_fn = api_inj_close;
    return JITANON_OK;
}

/* An injection whose dump comes through io.open (streamed, every layout) writes what
   the same dump through io.load_dump writes: the same perf.data, the same ELF files. */
static void test_api_io_open_inject(void)
{
    static const jitanon_elf_layout layouts[] = {JITANON_ELF_PER_REGION, JITANON_ELF_PER_PROCESS,
                                                 JITANON_ELF_PER_FUNCTION};
    jitanon_membuf perf, out_old, out_open;
    jitanon_inject_opts o;
    jitanon_inject_stats st_old, st_open;
    jitanon_error err;
    api_inj_io io_old, io_open;
    size_t k;
    ti_build_perf(&perf, 1, JITANON_PERF_FILE);
    for (k = 0; k < 3; k++) {
        memset(&io_old, 0, sizeof io_old), memset(&io_open, 0, sizeof io_open);
        memset(&out_old, 0, sizeof out_old), memset(&out_open, 0, sizeof out_open);
        ti_build_dump(&io_old.dump);
        ti_build_dump(&io_open.dump);
        jitanon_inject_opts_init(&o);
        o.elf_layout = layouts[k];
        o.io.user = &io_old;
        o.io.load_dump = api_inj_load;
        o.io.write_elf = api_collect_elf;
        JT_CHECK_EQ_U(ti_run(&perf, &o, JITANON_PERF_FILE, &out_old, &st_old, &err), JITANON_OK);
        jitanon_inject_opts_init(&o);
        o.elf_layout = layouts[k];
        o.io.user = &io_open;
        o.io.open = api_inj_open;
        o.io.write_elf = api_collect_elf;
        JT_CHECK_EQ_U(ti_run(&perf, &o, JITANON_PERF_FILE, &out_open, &st_open, &err), JITANON_OK);
        JT_CHECK(io_open.opens >= 1 && io_open.opens == io_open.closes);
        JT_CHECK(st_open.trim.loads == st_old.trim.loads && st_open.elf.files == st_old.elf.files);
        JT_CHECK(out_old.size == out_open.size && !memcmp(out_old.data, out_open.data, out_old.size));
        JT_CHECK(io_old.elfs.size > 0 && io_old.elfs.size == io_open.elfs.size &&
                 !memcmp(io_old.elfs.data, io_open.elfs.data, io_old.elfs.size));
        jitanon_membuf_release(&out_old), jitanon_membuf_release(&out_open);
        jitanon_membuf_release(&io_old.dump), jitanon_membuf_release(&io_open.dump);
        jitanon_membuf_release(&io_old.elfs), jitanon_membuf_release(&io_open.elfs);
    }
    jitanon_membuf_release(&perf);
}

static int api_frames_not_inside(void *user, uint32_t pid, jitanon_inject_process *out)
{
    (void)user, (void)pid, (void)out;
    return 0;
}

/* A frame's answer is remembered between samples (jitanon__inj_fslot), and forgotten when
   it no longer holds: the process maps another file at the address (its map changed), or
   the buffer the path points into moved (another process's mappings filled it; under
   ASan a stale answer reads freed memory).  A change of the map elsewhere, or a sample's
   own ip (looked up when it was read), keeps it.  Checked: without the map's gen or the
   buffers' epoch in the cache's check, the test fails. */
static void test_api_frames_remembered(void)
{
    const uint64_t U = JITANON_PERF_CONTEXT_USER;
    const uint64_t chain[] = {U, 0x500010, 0x400100}, own[] = {U, 0x400100, 0x400100};
    char name[256];
    uint8_t raw[128];
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_error err;
    api_frames t;
    ti_gen g;
    unsigned i;
    memset(&perf, 0, sizeof perf);
    memset(&t, 0, sizeof t);
    api_gen_callchains(&g, raw, &perf);
    ti_mmap(&g, 10, 0x400000, 0x1000, 0, "/usr/bin/a");
    api_chain_sample(&g, 20, TI_PID, chain, 3);
    api_chain_sample(&g, 21, TI_PID, chain, 3);
    for (i = 0; i < 64; i++) { /* another process's names: the buffer grows (and moves) */
        memset(name, 'x', sizeof name);
        name[0] = '/', name[sizeof name - 1] = 0;
        api_mmap(&g, TI_PID + 100, 30 + i, 0x10000000ull + 0x10000ull * i, 0x1000, 0, name);
    }
    api_chain_sample(&g, 100, TI_PID, chain, 3);
    ti_mmap(&g, 110, 0x400000, 0x1000, 0x1000, "/usr/bin/b"); /* over /usr/bin/a */
    api_chain_sample(&g, 120, TI_PID, chain, 3);
    ti_mmap(&g, 130, 0x600000, 0x1000, 0, "/usr/lib/c"); /* elsewhere */
    api_chain_sample(&g, 140, TI_PID, chain, 3);
    api_chain_sample(&g, 150, TI_PID, own, 3); /* the same ip as the sample's own, then not */
    ti_round(&g);
    ti_gen_end(&g);
    jitanon_inject_opts_init(&o);
    o.on_sample = api_frames_on_sample;
    o.io.user = &t;
    o.io.find_process = api_frames_not_inside;
    o.io.read_file = api_frames_no_file;
    JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(t.samples, 6);
    JT_CHECK(!strcmp(t.line[0], "|0:::@0:0:0 3::/usr/bin/a:@0:100:0 "));
    JT_CHECK(!strcmp(t.line[1], t.line[0]));
    JT_CHECK(!strcmp(t.line[2], t.line[0]));
    JT_CHECK(!strcmp(t.line[3], "|0:::@0:0:0 3::/usr/bin/b:@0:1100:0 "));
    JT_CHECK(!strcmp(t.line[4], t.line[3]));
    JT_CHECK(!strcmp(t.line[5], "|3::/usr/bin/b:@0:1100:0 3::/usr/bin/b:@0:1100:0 "));
    jitanon_membuf_release(&perf);
}

/* An embedder's own I/O: with load_dump set and no find_process, the injector asks no
   one whether the process runs (no /proc): the recorded path is read. */
static jitanon_result api_own_dump(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                   jitanon_jitdump **out, jitanon_error *err)
{
    jitanon_membuf d;
    jitanon_result res;
    ++*(unsigned *)user;
    JT_CHECK(strcmp(path, "/some/dir/jit-100.dump") == 0);
    ti_build_dump(&d);
    res = jitanon_jitdump_load_memory(d.data, d.size, opts, out, err);
    jitanon_membuf_release(&d);
    return res;
}

static void test_api_own_io_no_proc(void)
{
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    unsigned loads = 0;
    ti_build_perf(&perf, 1, JITANON_PERF_FILE);
    jitanon_inject_opts_init(&o);
    o.io.load_dump = api_own_dump;
    o.io.user = &loads;
    JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, &st, &err), JITANON_OK);
    JT_CHECK(loads == 1 && st.dumps.loaded == 1 && st.dumps.in_namespace == 0);
    jitanon_membuf_release(&perf);
}

/* A frame's source line from its function's line index (built once, sorted, searched)
   is the one a walk of its DEBUG_INFO gives, whatever the record: entries out of
   order, several at one address (the last written wins), lines 0 and negative skipped,
   "same file" entries (0xFF), a bias, addresses below it; ips all around the entries. */
static void test_api_line_index(void)
{
    jitanon__inj j;
    jitanon__inj_dump jd;
    jitanon__inj_func fn[64];
    jitanon_jitdump dump;
    uint8_t bytes[64][16 * 24];
    uint64_t seed = 12345;
    size_t i, k;
    memset(&j, 0, sizeof j);
    memset(&jd, 0, sizeof jd);
    memset(&dump, 0, sizeof dump);
    memset(fn, 0, sizeof fn);
    jd.dump = &dump;
    j.jit.dumps = &jd, j.jit.ndumps = 1;
    j.jit.funcs = fn, j.jit.nfuncs = 64;
    for (i = 0; i < 64; i++) {
        size_t n = 1 + i % 16, size = 0;
        for (k = 0; k < n; k++) {
            uint8_t *e = bytes[i] + size;
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            jitanon__wr64(e, 0x1000 + (seed >> 60) * 4, 0); /* 16 addresses: ties are common */
            jitanon__wr32(e + 8, (uint32_t)(int32_t)((int)((seed >> 40) & 15) - 3), 0);
            jitanon__wr32(e + 12, 0, 0);
            if (k && (seed >> 20) & 1) {
                e[16] = 0xff, e[17] = 0;
                size += 18;
            } else {
                memcpy(e + 16, (seed >> 21) & 1 ? "a.js" : "bb.js", (seed >> 21) & 1 ? 5 : 6);
                size += (seed >> 21) & 1 ? 21 : 22;
            }
        }
        fn[i].dbg = bytes[i], fn[i].dbg_size = size, fn[i].dbg_nr = n;
    }
    for (k = 0; k < 3; k++) {
        uint64_t bias = k == 0 ? 0 : k == 1 ? 0x20 : 0x2000; /* 0x2000: every address below it */
        jd.sum.line_bias = (jitanon_elf_line_bias)bias;
        for (i = 0; i < 64; i++) fn[i].dbg_run = 0;
        j.sym.nlines = 0;
        for (i = 0; i < 64; i++) {
            uint64_t ip;
            for (ip = 0xfd0; ip < 0x1050; ip += 3) {
                jitanon_frame a, b;
                memset(&a, 0, sizeof a);
                memset(&b, 0, sizeof b);
                jitanon__inj_sym_line(&j, i, ip, &a);
                jitanon__inj_sym_line_walk(&fn[i], bias, 0, ip, &b);
                JT_CHECK_EQ_U(a.line, b.line);
                JT_CHECK(a.src_file.length == b.src_file.length &&
                         (!a.src_file.length || a.src_file.data == b.src_file.data));
            }
        }
        JT_CHECK(j.sym.nlines > 64); /* every function indexed once, not per lookup */
        JT_CHECK(j.sym.nlines <= 64 + 64 * 16);
    }
    jitanon__free(&j.a, j.sym.lines, j.sym.lines_cap * sizeof *j.sym.lines);
}

static void suite_api(void)
{
    JT_RUN(test_api_encode_matches_hand_built);
    JT_RUN(test_api_encode_roundtrip);
    JT_RUN(test_api_encode_refuses);
    JT_RUN(test_api_events_and_sample_fields);
    JT_RUN(test_api_func_iter);
    JT_RUN(test_api_frames);
    JT_RUN(test_api_io_open);
    JT_RUN(test_api_io_open_inject);
    JT_RUN(test_api_frames_remembered);
    JT_RUN(test_api_line_index);
    JT_RUN(test_api_own_io_no_proc);
}
JT_SUITE(api)
#undef JT_SUITES
#define JT_SUITES jt_suites_api
