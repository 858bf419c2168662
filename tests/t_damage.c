/* Damaged and hostile input (issue 18): a jitdump with garbage after its valid prefix or a
   damaged record in the middle, a perf.data left by a killed `perf record` (data size 0,
   no feature sections) or cut inside a record, garbage feature sections, the legacy
   PERFFILE header, and the injector's default opening of a dump (FIFOs, devices, symlinks).
   Uses the helpers of t_perfdata.c and t_inject.c (included before it). */

static uint64_t dm_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A dump being written by our writer into `out`. */
static void dm_begin(jitanon_jitdump_writer *w, jitanon_membuf *out, int big)
{
    jitanon_error err;
    memset(out, 0, sizeof *out);
    memset(w, 0, sizeof *w);
    JT_CHECK(jdrec_begin(w, jdrec_sink(out), 62, TI_PID, 5, big, &err) == JITANON_OK);
}

/* A random dump from our writer: LOADs (TI_PID, code in [0x10000, 0x20000)), MOVEs,
   DEBUG_INFO before some LOADs, CLOSE at the end sometimes. */
static void dm_random_dump(uint64_t *seed, jitanon_membuf *out, int big)
{
    static const uint8_t code[0x200] = {0x90, 0x90, 0xc3};
    jitanon_jitdump_writer w;
    jitanon_error err;
    jitanon_jitdump_debug_entry e;
    unsigned i, n = (unsigned)(dm_rand(seed) % 40) + 1;
    char name[24];
    dm_begin(&w, out, big);
    memset(&e, 0, sizeof e);
    e.file.data = "d.js";
    e.file.length = 4;
    for (i = 0; i < n; i++) {
        uint64_t addr = 0x10000 + (dm_rand(seed) % 0x100) * 0x100, size = dm_rand(seed) % 0x100 + 1;
        uint64_t r = dm_rand(seed) % 8;
        sprintf(name, "fn%u", i);
        if (r == 0) {
            e.addr = addr;
            e.lineno = (int32_t)i;
            JT_CHECK(jitanon_jitdump_write_debug_info(&w, 10 + i, addr, &e, 1, &err) == JITANON_OK);
        }
        if (r == 1 && i)
            JT_CHECK(jdrec_write(&w, jdrec_move(10 + i, TI_PID, TI_PID, addr, addr + 0x8000, size, i - 1), &err) ==
                     JITANON_OK);
        else JT_CHECK(jdrec_write(&w, jdrec_load(10 + i, TI_PID, TI_PID, addr, code, (size_t)size, i, name), &err) == JITANON_OK);
    }
    if (dm_rand(seed) % 3 == 0) JT_CHECK(jdrec_write(&w, jdrec_make(JITANON_JITDUMP_CODE_CLOSE, 90), &err) == JITANON_OK);
}

/* Garbage of kind 0..4: zeros, random bytes, a real record cut short, a record prefix
   with a total_size below 16 or beyond any record, a LOAD whose code_size exceeds it
   followed by valid records (damage in the middle of what follows). */
static void dm_garbage(uint64_t *seed, int kind, const jitanon_membuf *d, int big, jitanon_membuf *g)
{
    size_t i, n = (size_t)(dm_rand(seed) % 300) + 1;
    uint8_t rec[16];
    memset(g, 0, sizeof *g);
    if (kind == 0) {
        for (i = 0; i < n; i++) jitanon_membuf_write(g, "", 1);
    } else if (kind == 1) {
        for (i = 0; i < n; i++) {
            uint8_t b = (uint8_t)dm_rand(seed);
            jitanon_membuf_write(g, &b, 1);
        }
    } else if (kind == 2) { /* the dump's first record, cut */
        uint32_t total = jitanon__rd32(d->data + 44, big);
        jitanon_membuf_write(g, d->data + 40, (size_t)(1 + dm_rand(seed) % (total - 1)));
    } else if (kind == 3) {
        jitanon__wr32(rec, (uint32_t)(dm_rand(seed) % 5), big);
        jitanon__wr32(rec + 4, dm_rand(seed) & 1 ? (uint32_t)(dm_rand(seed) % 16) : 0xfffffff0u, big);
        jitanon__wr64(rec + 8, 5, big);
        jitanon_membuf_write(g, rec, sizeof rec);
        jitanon_membuf_write(g, d->data + 40, d->size - 40); /* valid records after it count for nothing */
    } else {
        static const uint8_t code[4] = {0xc3};
        jitanon_jitdump_writer w;
        jitanon_error err;
        jitanon_membuf tmp;
        dm_begin(&w, &tmp, big);
        JT_CHECK(jdrec_write(&w, jdrec_load(95, TI_PID, TI_PID, 0x10000, code, 4, 999, "bad"), &err) == JITANON_OK);
        jitanon__wr64(tmp.data + 40 + 40, 5000, big); /* code_size beyond the record */
        jitanon_membuf_write(g, tmp.data + 40, tmp.size - 40);
        jitanon_membuf_write(g, d->data + 40, d->size - 40);
        jitanon_membuf_release(&tmp);
    }
}

/* For any dump D from our writer and garbage G: D+G loads as D (the same records), with
   tail_error at D's end (record index = D's record count, valid_size = |D|); strict
   refuses it. */
static void test_damage_jitdump_prefix_kept(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    unsigned iter, checked = 0;
    for (iter = 0; iter < 600; iter++) {
        jitanon_membuf d, g, dg;
        jitanon_jitdump *a = NULL, *b = NULL, *c = NULL;
        jitanon_jitdump_opts strict;
        jitanon_error err;
        int big = (int)(iter & 1), kind = (int)(iter / 2 % 5);
        size_t i;
        dm_random_dump(&seed, &d, big);
        dm_garbage(&seed, kind, &d, big, &g);
        memset(&dg, 0, sizeof dg);
        jitanon_membuf_write(&dg, d.data, d.size);
        jitanon_membuf_write(&dg, g.data, g.size);
        JT_CHECK(jitanon_jitdump_load_memory(d.data, d.size, NULL, &a, &err) == JITANON_OK);
        JT_CHECK(jitanon_jitdump_load_memory(dg.data, dg.size, NULL, &b, &err) == JITANON_OK);
        if (a && b) {
            JT_CHECK(a->tail_error.type == JITANON_OK && a->valid_size == d.size);
            JT_CHECK_EQ_U(b->record_count, a->record_count);
            for (i = 0; i < a->record_count && i < b->record_count; i++)
                JT_CHECK(a->records[i].raw.size == b->records[i].raw.size &&
                         !memcmp(a->records[i].raw.data, b->records[i].raw.data, a->records[i].raw.size));
            JT_CHECK(b->tail_error.type == JITANON_ERR_TRUNCATED || b->tail_error.type == JITANON_ERR_BAD_RECORD ||
                     b->tail_error.type == JITANON_ERR_LIMIT);
            JT_CHECK_EQ_U(b->tail_error.record_index, a->record_count);
            JT_CHECK_EQ_U(b->valid_size, d.size);
            JT_CHECK(!memcmp(&a->stats, &b->stats, sizeof a->stats));
            checked++;
        }
        memset(&strict, 0, sizeof strict);
        strict.strict = 1;
        JT_CHECK(jitanon_jitdump_load_memory(dg.data, dg.size, &strict, &c, &err) != JITANON_OK && c == NULL);
        JT_CHECK(err.type != JITANON_OK && err.info[0]);
        jitanon_jitdump_destroy(a);
        jitanon_jitdump_destroy(b);
        jitanon_membuf_release(&d);
        jitanon_membuf_release(&g);
        jitanon_membuf_release(&dg);
    }
    JT_CHECK_EQ_U(checked, 600);
}

/* The injector, end to end: output records, ELF files (names and bytes) and the counters
   other than the damage ones are the same for D+G as for D. */
typedef struct dm_io {
    ti_io base; /* first: ti_load_dump takes the user pointer as a ti_io */
    jitanon_membuf files, log;
} dm_io;

static int dm_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    dm_io *io = (dm_io *)user;
    char line[96];
    const uint8_t *p = (const uint8_t *)data;
    uint64_t h = 1469598103934665603u;
    size_t i;
    (void)dir;
    for (i = 0; i < size; i++) h = (h ^ p[i]) * 1099511628211u;
    snprintf(line, sizeof line, "%s %llx\n", name, (unsigned long long)h);
    return jitanon_membuf_write(&io->files, line, strlen(line));
}

static void dm_log(void *user, const char *msg)
{
    dm_io *io = (dm_io *)user;
    jitanon_membuf_write(&io->log, msg, strlen(msg) + 1);
}

static void dm_perf_marker(jitanon_membuf *perf, jitanon_perf_mode mode, const char *marker)
{
    ti_gen g;
    uint8_t raw[128];
    unsigned i;
    memset(perf, 0, sizeof *perf);
    ti_gen_begin(&g, raw, 1, perf, mode);
    ti_mmap(&g, 8, 0x7000, 0x1000, 0, marker);
    ti_mmap(&g, 9, 0x10000, 0x10000, 0, "//anon");
    ti_round(&g);
    for (i = 0; i < 40; i++) ti_sample(&g, 100 + i, 0x10000 + i * 0x337);
    ti_round(&g);
    ti_gen_end(&g);
}

static void dm_perf(jitanon_membuf *perf, jitanon_perf_mode mode)
{
    dm_perf_marker(perf, mode, "/some/dir/jit-100.dump");
}

static jitanon_result dm_inject(const jitanon_membuf *perf, const jitanon_membuf *dump, jitanon_elf_layout layout,
                                int strict, dm_io *io, jitanon_membuf *out, jitanon_inject_stats *st)
{
    jitanon_inject_opts o;
    jitanon_error err;
    memset(io, 0, sizeof *io);
    memset(out, 0, sizeof *out);
    memset(&o, 0, sizeof o);
    io->base.give_dump = 1;
    jitanon_membuf_write(&io->base.dump, dump->data, dump->size);
    o.elf_files = JITANON_ELF_FILES_ALL;
    o.elf_layout = layout;
    o.jitdump.strict = strict;
    o.io.load_dump = ti_load_dump;
    o.io.write_elf = dm_write_elf;
    o.io.log = dm_log;
    o.io.user = io;
    return ti_run(perf, &o, JITANON_PERF_FILE, out, st, &err);
}

static void dm_io_free(dm_io *io, jitanon_membuf *out)
{
    jitanon_membuf_release(&io->base.dump);
    jitanon_membuf_release(&io->files);
    jitanon_membuf_release(&io->log);
    jitanon_membuf_release(out);
}

/* 1 when io's log says nothing but when a dump stopped (the random dumps end before the
   recording's samples do: that line is right, and the same for the damaged copy). */
static int dm_log_only_stopped(const dm_io *io)
{
    size_t off = 0;
    while (off < io->log.size) {
        const char *m = (const char *)io->log.data + off;
        if (!strstr(m, "the JIT stopped describing its code")) return 0;
        off += strlen(m) + 1;
    }
    return 1;
}

static void test_damage_inject_same_output(void)
{
    uint64_t seed = 0x1234567u;
    unsigned iter;
    jitanon_membuf perf;
    dm_perf(&perf, JITANON_PERF_FILE);
    for (iter = 0; iter < 60; iter++) {
        jitanon_membuf d, g, dg, out[3];
        dm_io io[3];
        jitanon_inject_stats st[3];
        jitanon_elf_layout layout = iter % 3 == 2 ? JITANON_ELF_PER_PROCESS : JITANON_ELF_PER_FUNCTION;
        int big = 0, kind = (int)(iter % 5);
        dm_random_dump(&seed, &d, big);
        dm_garbage(&seed, kind, &d, big, &g);
        memset(&dg, 0, sizeof dg);
        jitanon_membuf_write(&dg, d.data, d.size);
        jitanon_membuf_write(&dg, g.data, g.size);
        JT_CHECK(dm_inject(&perf, &d, layout, 0, &io[0], &out[0], &st[0]) == JITANON_OK);
        JT_CHECK(dm_inject(&perf, &dg, layout, 0, &io[1], &out[1], &st[1]) == JITANON_OK);
        JT_CHECK(out[0].size == out[1].size && !memcmp(out[0].data, out[1].data, out[0].size));
        JT_CHECK(io[0].files.size == io[1].files.size && !memcmp(io[0].files.data, io[1].files.data, io[0].files.size));
        JT_CHECK(st[0].elf.files > 0 && st[0].dumps.damaged == 0 && dm_log_only_stopped(&io[0]));
        JT_CHECK_EQ_U(st[1].dumps.damaged, 1);
        JT_CHECK_EQ_U(st[1].dumps.damaged_loads_kept, st[0].trim.loads);
        JT_CHECK_EQ_U(st[1].dumps.bytes_ignored, g.size);
        JT_CHECK(io[1].log.size && strstr((const char *)io[1].log.data, "is damaged or cut short at record") != NULL);
        st[1].dumps.damaged = st[1].dumps.damaged_loads_kept = st[1].dumps.bytes_ignored = 0;
        JT_CHECK(!memcmp(&st[0], &st[1], sizeof st[0]));
        /* strict: the run fails, naming the damage */
        JT_CHECK(dm_inject(&perf, &dg, layout, 1, &io[2], &out[2], &st[2]) != JITANON_OK);
        dm_io_free(&io[0], &out[0]);
        dm_io_free(&io[1], &out[1]);
        dm_io_free(&io[2], &out[2]);
        jitanon_membuf_release(&d);
        jitanon_membuf_release(&g);
        jitanon_membuf_release(&dg);
    }
    jitanon_membuf_release(&perf);
}

/* -- perf.data ------------------------------------------------------------------------ */

typedef struct dm_read {
    jitanon_result res;
    uint64_t records, hash;
    uint32_t warnings;
    uint64_t bytes_ignored;
    size_t features;
} dm_read;

/* Opens a reader on `in` (seekable or not; strict or not). */
static jitanon_result dm_open(jitanon_perf_reader *r, memin *in, int seek, int strict, jitanon_error *err)
{
    jitanon_perf_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.strict = strict;
    return jitanon_perf_reader_init(r, memin_read, seek ? memin_seek : NULL, in, &opts, err);
}

/* Reads every record (hashing their bytes) and then the features. */
static dm_read dm_read_all(const uint8_t *p, size_t n, int seek, int strict)
{
    dm_read o;
    memin in = memin_make(p, n, seek ? 0 : 13, 0);
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    memset(&o, 0, sizeof o);
    o.hash = 1469598103934665603u;
    o.res = dm_open(&r, &in, seek, strict, &err);
    while (o.res == JITANON_OK && (o.res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
        size_t i;
        o.records++;
        for (i = 0; i < rec.raw.size; i++) o.hash = (o.hash ^ rec.raw.data[i]) * 1099511628211u;
    }
    if (o.res == JITANON_END) o.res = jitanon_perf_reader_load_features(&r, &err);
    if (o.res != JITANON_OK) JT_CHECK(err.type == o.res && err.info[0]);
    o.warnings = r.warnings;
    o.bytes_ignored = r.bytes_ignored;
    o.features = r.state_->feat_count;
    if (r.warnings) JT_CHECK(r.damage.type != JITANON_OK && r.damage.info[0]);
    jitanon_perf_reader_release(&r);
    return o;
}

/* A killed recording: data size 0 and the feature sections gone; the same records, both
   warnings, no features; strict refuses.  Cut inside its last record: the records before
   it, bytes_ignored the part of the last one. */
static void test_damage_perf_killed(void)
{
    int big, seek;
    for (big = 0; big < 2; big++)
        for (seek = 0; seek < 2; seek++) {
            pdt_b b;
            dm_read intact, killed, cut, strict;
            uint64_t off, size, last = 0;
            jitanon_membuf k;
            pdt_file(&b, big);
            intact = dm_read_all(b.m.data, b.m.size, seek, 0);
            JT_CHECK(intact.res == JITANON_OK && intact.warnings == 0 && intact.features > 0);
            off = jitanon__rd64(b.m.data + 40, big);
            size = jitanon__rd64(b.m.data + 48, big);
            memset(&k, 0, sizeof k);
            jitanon_membuf_write(&k, b.m.data, (size_t)(off + size));
            jitanon__wr64(k.data + 48, 0, big);
            killed = dm_read_all(k.data, k.size, seek, 0);
            JT_CHECK(killed.res == JITANON_OK && killed.records == intact.records && killed.hash == intact.hash);
            JT_CHECK_EQ_U(killed.warnings, JITANON_PERF_WARN_DATA_SIZE_ZERO | JITANON_PERF_WARN_FEATURES);
            JT_CHECK(killed.features == 0 && killed.bytes_ignored == 0);
            strict = dm_read_all(k.data, k.size, seek, 1);
            JT_CHECK_EQ_U(strict.res, JITANON_ERR_BAD_HEADER);
            /* zeros after the last record (delayed allocation): the end of the data */
            jitanon_membuf_write(&k, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20);
            cut = dm_read_all(k.data, k.size, seek, 0);
            JT_CHECK(cut.res == JITANON_OK && cut.records == intact.records && cut.hash == intact.hash);
            JT_CHECK(cut.warnings & JITANON_PERF_WARN_CUT);
            JT_CHECK_EQ_U(cut.bytes_ignored, 20);
            /* cut 3 bytes into the last record */
            {
                memin in = memin_make(b.m.data, b.m.size, 0, 0);
                jitanon_perf_reader r;
                jitanon_perf_record rec;
                jitanon_error err;
                JT_CHECK(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err) == JITANON_OK);
                while (jitanon_perf_reader_next(&r, &rec, &err) == JITANON_OK) last = rec.offset;
                jitanon_perf_reader_release(&r);
            }
            k.size = (size_t)last + 3;
            cut = dm_read_all(k.data, k.size, seek, 0);
            JT_CHECK(cut.res == JITANON_OK && cut.records == intact.records - 1);
            JT_CHECK(cut.warnings & JITANON_PERF_WARN_CUT);
            JT_CHECK_EQ_U(cut.bytes_ignored, 3);
            jitanon_membuf_release(&k);
            /* a finished file cut inside a record (data size intact): the same */
            cut = dm_read_all(b.m.data, (size_t)last + 3, seek, 0);
            JT_CHECK(cut.res == JITANON_OK && cut.records == intact.records - 1);
            JT_CHECK_EQ_U(cut.warnings, JITANON_PERF_WARN_CUT | JITANON_PERF_WARN_FEATURES);
            strict = dm_read_all(b.m.data, (size_t)last + 3, seek, 1);
            JT_CHECK_EQ_U(strict.res, JITANON_ERR_TRUNCATED);
            jitanon_membuf_release(&b.m);
        }
}

/* A pipe (perf record -o - killed) cut inside a record: the whole records before it. */
static void test_damage_perf_pipe_cut(void)
{
    int big;
    for (big = 0; big < 2; big++) {
        pdt_b b;
        dm_read intact, cut;
        size_t n;
        pdt_pipe(&b, big);
        intact = dm_read_all(b.m.data, b.m.size, 0, 0);
        JT_CHECK(intact.res == JITANON_OK && intact.warnings == 0);
        for (n = 17; n < b.m.size; n += 7) {
            cut = dm_read_all(b.m.data, n, 0, 0);
            JT_CHECK(cut.res == JITANON_OK && cut.records <= intact.records);
            JT_CHECK(cut.warnings == 0 || cut.warnings == JITANON_PERF_WARN_CUT);
            JT_CHECK(cut.warnings || cut.bytes_ignored == 0);
            JT_CHECK(dm_read_all(b.m.data, n, 0, 1).res == (cut.warnings ? JITANON_ERR_TRUNCATED : JITANON_OK));
        }
        jitanon_membuf_release(&b.m);
    }
}

/* Garbage in the feature table: the records are all there, the features absent. */
static void test_damage_perf_garbage_features(void)
{
    int big, which;
    for (big = 0; big < 2; big++)
        for (which = 0; which < 3; which++) {
            pdt_b b;
            dm_read intact, bad;
            uint64_t at;
            pdt_file(&b, big);
            intact = dm_read_all(b.m.data, b.m.size, 1, 0);
            at = jitanon__rd64(b.m.data + 40, big) + jitanon__rd64(b.m.data + 48, big);
            if (which == 0) jitanon__wr64(b.m.data + at, UINT64_MAX - 3, big); /* offset + size overflows */
            if (which == 1) jitanon__wr64(b.m.data + at + 8, 1ull << 40, big); /* larger than any */
            if (which == 2) jitanon__wr64(b.m.data + at, b.m.size + 100, big); /* beyond the end */
            bad = dm_read_all(b.m.data, b.m.size, 1, 0);
            JT_CHECK(bad.res == JITANON_OK && bad.records == intact.records && bad.hash == intact.hash);
            JT_CHECK_EQ_U(bad.warnings, JITANON_PERF_WARN_FEATURES);
            JT_CHECK_EQ_U(bad.features, 0);
            JT_CHECK(dm_read_all(b.m.data, b.m.size, 1, 1).res != JITANON_OK);
            jitanon_membuf_release(&b.m);
        }
}

/* -- where a cut perf.data ends (issue 42) ---------------------------------------------- */

/* A cut input read as the injector reads it (features_first: the features before the
   records; seekable only) or in order (the features after the records): e is the error,
   or the damage recovered from. */
typedef struct dm_cut {
    jitanon_result res;
    uint32_t warnings;
    jitanon_error e;
} dm_cut;

static dm_cut dm_cut_finish(jitanon_perf_reader *r, jitanon_result res, int features_first, const jitanon_error *err)
{
    dm_cut o;
    jitanon_perf_record rec;
    jitanon_error e = *err;
    if (res == JITANON_OK && features_first) res = jitanon_perf_reader_load_features(r, &e);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(r, &rec, &e)) == JITANON_OK) {
    }
    if (res == JITANON_END) res = jitanon_perf_reader_load_features(r, &e);
    o.res = res;
    o.warnings = r->warnings;
    o.e = res == JITANON_OK ? r->damage : e;
    jitanon_perf_reader_release(r);
    return o;
}

static dm_cut dm_read_cut(const uint8_t *p, size_t n, int seek, int features_first, int strict)
{
    memin in = memin_make(p, n, seek ? 0 : 13, 0);
    jitanon_perf_reader r;
    jitanon_error err;
    jitanon_result res = dm_open(&r, &in, seek, strict, &err);
    return dm_cut_finish(&r, res, features_first && seek, &err);
}

/* c says: truncated at byte `end`, cut in `place`, and (promised > 0) that the header
   promises `promised` bytes, promised - end of them missing (else: no promise). */
static void dm_check_cut(const dm_cut *c, uint64_t end, const char *place, uint64_t promised)
{
    char want[96];
    int failed = jt.cur_failed;
    JT_CHECK_EQ_U(c->e.type, JITANON_ERR_TRUNCATED);
    JT_CHECK_EQ_U(c->e.offset, end);
    JT_CHECK(strstr(c->e.info, place) != NULL);
    snprintf(want, sizeof want, "; the header promises %llu bytes (%llu missing)", (unsigned long long)promised,
             (unsigned long long)(promised - end));
    JT_CHECK(promised ? strstr(c->e.info, want) != NULL : strstr(c->e.info, "promises") == NULL);
    if (jt.cur_failed != failed) fprintf(stderr, "  cut at %llu: %s\n", (unsigned long long)end, c->e.info);
}

/* The record `k` of an intact input: its offset, type and size. */
static void dm_record_at(const uint8_t *p, size_t n, unsigned k, jitanon_perf_record *out)
{
    memin in = memin_make(p, n, 0, 0);
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    unsigned i = 0;
    memset(out, 0, sizeof *out);
    JT_CHECK(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err) == JITANON_OK);
    while (jitanon_perf_reader_next(&r, &rec, &err) == JITANON_OK)
        if (i++ == k) *out = rec; /* offset, type, size: no view is kept */
    jitanon_perf_reader_release(&r);
}

/* A file cut in each of its parts says where it really ends, what was cut and how many
   of the bytes its header promises are missing: the header, the id arrays and attrs
   before the data, the data section (inside a record, inside a record's header, between
   records), the feature table, a feature section; both byte orders, seekable or not. */
static void test_damage_perf_cut_place(void)
{
    int big, seek;
    for (big = 0; big < 2; big++)
        for (seek = 0; seek < 2; seek++) {
            pdt_b b;
            dm_cut c;
            jitanon_perf_record rec;
            char place[128];
            uint64_t data, size, table, promised, at;
            const uint8_t *p;
            pdt_file(&b, big);
            p = b.m.data;
            data = jitanon__rd64(p + 40, big);
            size = jitanon__rd64(p + 48, big);
            table = data + size;
            promised = table + 3 * 16; /* the header's: up to the end of the feature table */
            dm_record_at(p, b.m.size, 3, &rec);
            JT_CHECK(rec.offset > data && rec.size > 16);
            /* the file header */
            c = dm_read_cut(p, 50, seek, 0, 0);
            dm_check_cut(&c, 50, "in the file header at byte 0 that needs 104 bytes", 0);
            /* the id arrays (104..128), before the attrs section: a seek past the end */
            c = dm_read_cut(p, 110, seek, 0, 0);
            dm_check_cut(&c, 110, "in the id arrays before the data, before the attrs section at byte 128", promised);
            /* the attrs section */
            c = dm_read_cut(p, 200, seek, 0, 0);
            dm_check_cut(&c, 200, "in the attrs section at byte 128 that needs 288 bytes", promised);
            /* inside a record: every whole record before it, the cut named */
            at = rec.offset + 10;
            snprintf(place, sizeof place, "in the data section, in a %s record at byte %llu that needs %u bytes",
                     jitanon_perf_record_name(rec.type), (unsigned long long)rec.offset, (unsigned)rec.size);
            c = dm_read_cut(p, (size_t)at, seek, 0, 0);
            JT_CHECK(c.res == JITANON_OK && c.warnings == (JITANON_PERF_WARN_CUT | JITANON_PERF_WARN_FEATURES));
            dm_check_cut(&c, at, place, promised);
            /* the same read as the injector reads it: the features fail first, and the cut
               in the data replaces that damage */
            c = dm_read_cut(p, (size_t)at, seek, 1, 0);
            JT_CHECK(c.res == JITANON_OK && c.warnings == (JITANON_PERF_WARN_CUT | JITANON_PERF_WARN_FEATURES));
            dm_check_cut(&c, at, place, promised);
            /* strict: the error itself */
            c = dm_read_cut(p, (size_t)at, seek, 0, 1);
            dm_check_cut(&c, at, place, promised);
            /* strict, features first: they fail before any record, placed in the data */
            if (seek) {
                snprintf(place, sizeof place, "in the data section, before the feature table at byte %llu",
                         (unsigned long long)table);
                c = dm_read_cut(p, (size_t)at, seek, 1, 1);
                dm_check_cut(&c, at, place, promised);
            }
            /* inside a record's header: its type known or not */
            at = rec.offset + 5;
            snprintf(place, sizeof place, "in the data section, in the 8-byte header of a %s record at byte %llu;",
                     jitanon_perf_record_name(rec.type), (unsigned long long)rec.offset);
            c = dm_read_cut(p, (size_t)at, seek, 0, 0);
            dm_check_cut(&c, at, place, promised);
            at = rec.offset + 2;
            snprintf(place, sizeof place, "in the data section, in the 8-byte header of a record at byte %llu;",
                     (unsigned long long)rec.offset);
            c = dm_read_cut(p, (size_t)at, seek, 0, 0);
            dm_check_cut(&c, at, place, promised);
            /* between two records */
            snprintf(place, sizeof place, "in the data section at byte %llu that needs %llu bytes", (unsigned long long)data,
                     (unsigned long long)size);
            c = dm_read_cut(p, (size_t)rec.offset, seek, 0, 0);
            JT_CHECK(c.res == JITANON_OK && (c.warnings & JITANON_PERF_WARN_CUT));
            dm_check_cut(&c, rec.offset, place, promised);
            /* the feature table: its first entry read, which promises its section */
            at = table + 20;
            snprintf(place, sizeof place, "in the feature table at byte %llu that needs 48 bytes", (unsigned long long)table);
            c = dm_read_cut(p, (size_t)at, seek, 0, 0);
            JT_CHECK(c.res == JITANON_OK && c.warnings == JITANON_PERF_WARN_FEATURES);
            dm_check_cut(&c, at, place, table + 48 + sizeof pdt_host);
            /* a feature section, known to perf and not */
            at = table + 48 + sizeof pdt_host + 4;
            snprintf(place, sizeof place, "in the feature section HEADER_CMDLINE at byte %llu that needs %u bytes",
                     (unsigned long long)(at - 4), (unsigned)sizeof pdt_cmd);
            c = dm_read_cut(p, (size_t)at, seek, 0, 0);
            JT_CHECK(c.res == JITANON_OK && c.warnings == JITANON_PERF_WARN_FEATURES);
            dm_check_cut(&c, at, place, b.m.size);
            snprintf(place, sizeof place, "in the feature section of bit 40 at byte %llu that needs 3 bytes",
                     (unsigned long long)(b.m.size - 3));
            c = dm_read_cut(p, b.m.size - 1, seek, 0, 0);
            dm_check_cut(&c, b.m.size - 1, place, b.m.size);
            jitanon_membuf_release(&b.m);
        }
}

/* A pipe cut in its header or inside a record: the record named, nothing promised. */
static void test_damage_perf_pipe_cut_place(void)
{
    int big;
    for (big = 0; big < 2; big++) {
        pdt_b b;
        dm_cut c;
        jitanon_perf_record rec;
        char place[128];
        unsigned k;
        pdt_pipe(&b, big);
        c = dm_read_cut(b.m.data, 10, 0, 0, 0);
        dm_check_cut(&c, 10, "in the perf.data header at byte 0 that needs 16 bytes", 0);
        for (k = 0; k < 12; k += 11) { /* a HEADER_ATTR and a kernel record */
            dm_record_at(b.m.data, b.m.size, k, &rec);
            snprintf(place, sizeof place, "in a %s record at byte %llu that needs %u bytes",
                     jitanon_perf_record_name(rec.type), (unsigned long long)rec.offset, (unsigned)rec.size);
            c = dm_read_cut(b.m.data, (size_t)rec.offset + 9, 0, 0, 0);
            JT_CHECK(c.res == JITANON_OK && c.warnings == JITANON_PERF_WARN_CUT);
            dm_check_cut(&c, rec.offset + 9, place, 0);
            JT_CHECK(strstr(c.e.info, "data section") == NULL);
        }
        jitanon_membuf_release(&b.m);
    }
}

/* A file of ours with attrs of the legacy format's era (attr.size 104: attr_size 120). */
static void dm_legacy_era_file(jitanon_membuf *out, jitanon_perf_mode mode)
{
    ti_gen g;
    uint8_t raw[128];
    jitanon_error err;
    unsigned i;
    memset(out, 0, sizeof *out);
    ti_gen_begin(&g, raw, 1, out, mode); /* its attr, added at 128 bytes, is replaced below */
    jitanon_perf_writer_release(&g.w);
    jitanon_membuf_release(out);
    {
        jitanon__wr32(raw + 4, 104, 0);
        g.attr.size = 104;
        g.attr.raw.size = 104;
        JT_CHECK(jitanon_perf_writer_init(&g.w, mode, 0, jdrec_sink(out), membuf_pwrite, NULL, &err) == JITANON_OK);
        JT_CHECK(jitanon_perf_writer_add_attr(&g.w, &g.attr, &err) == JITANON_OK);
    }
    ti_mmap(&g, 9, 0x10000, 0x10000, 0, "/usr/lib/x.so");
    for (i = 0; i < 20; i++) ti_sample(&g, 100 + i, 0x10000 + i * 0x337);
    ti_round(&g);
    ti_gen_end(&g);
}

/* The legacy PERFFILE header: PERFILE2's layout with the byte order told by attr_size.
   Such a file reads as its PERFILE2 twin, with either header size (104, and 72 without
   the feature bitmap), seekable or not; an attr_size of no era is refused, and a legacy
   pipe header is read in the host's order. */
static void test_damage_perf_legacy_header(void)
{
    int seek;
    jitanon_membuf m;
    dm_legacy_era_file(&m, JITANON_PERF_FILE);
    JT_CHECK_EQ_U(jitanon__rd64(m.data + 16, 0), 120);
    for (seek = 0; seek < 2; seek++) {
        dm_read v2, v1;
        memcpy(m.data, "PERFILE2", 8);
        jitanon__wr64(m.data + 8, 104, 0);
        v2 = dm_read_all(m.data, m.size, seek, 0);
        JT_CHECK(v2.res == JITANON_OK && v2.records == 22);
        memcpy(m.data, "PERFFILE", 8);
        v1 = dm_read_all(m.data, m.size, seek, 0);
        JT_CHECK(v1.res == JITANON_OK && v1.records == v2.records && v1.hash == v2.hash && v1.features == v2.features);
        jitanon__wr64(m.data + 8, 72, 0); /* the older size: no feature bitmap */
        v1 = dm_read_all(m.data, m.size, seek, 0);
        JT_CHECK(v1.res == JITANON_OK && v1.records == v2.records && v1.hash == v2.hash && v1.features == 0);
        jitanon__wr64(m.data + 16, 136, 0);
        JT_CHECK_EQ_U(dm_read_all(m.data, m.size, seek, 0).res, JITANON_ERR_BAD_HEADER);
        jitanon__wr64(m.data + 16, 120, 0);
    }
    jitanon_membuf_release(&m);
    dm_legacy_era_file(&m, JITANON_PERF_PIPE);
    {
        dm_read v2 = dm_read_all(m.data, m.size, 0, 0), v1;
        memcpy(m.data, "PERFFILE", 8);
        v1 = dm_read_all(m.data, m.size, 0, 0);
        JT_CHECK(v2.res == JITANON_OK && v1.res == JITANON_OK && v1.records == v2.records && v1.hash == v2.hash);
    }
    jitanon_membuf_release(&m);
}

#if JITANON__POSIX && !defined(JITANON_NO_STDIO)
/* The injector's default opening: a FIFO, a device, a directory and a dangling symlink
   are refused at once with the reason; a regular file and our own symlink load. */
static void test_damage_open_refuses(void)
{
    char dir[] = "/tmp/jitanon-t-XXXXXX", path[128], link[128];
    jitanon_membuf d;
    jitanon_jitdump *out = NULL;
    jitanon_error err;
    uint64_t seed = 7;
    FILE *f;
    if (!mkdtemp(dir)) {
        jt_skip("mkdtemp failed");
        return;
    }
    snprintf(path, sizeof path, "%s/jit-1.dump", dir);
    snprintf(link, sizeof link, "%s/jit-2.dump", dir);
    JT_CHECK(mkfifo(path, 0600) == 0);
    JT_CHECK(jitanon__inj_load_default(NULL, path, NULL, &out, &err) == JITANON_ERR_IO && out == NULL);
    JT_CHECK(strstr(err.info, "FIFO") != NULL);
    unlink(path);
    JT_CHECK(symlink("/dev/null", link) == 0);
    JT_CHECK(jitanon__inj_load_default(NULL, link, NULL, &out, &err) == JITANON_ERR_IO && out == NULL);
    JT_CHECK(strstr(err.info, "device") != NULL);
    unlink(link);
    JT_CHECK(jitanon__inj_load_default(NULL, dir, NULL, &out, &err) == JITANON_ERR_IO && strstr(err.info, "directory"));
    JT_CHECK(symlink("/nonexistent-jitanon", link) == 0);
    JT_CHECK(jitanon__inj_load_default(NULL, link, NULL, &out, &err) == JITANON_ERR_IO && strstr(err.info, "dangling"));
    unlink(link);
    dm_random_dump(&seed, &d, 0);
    f = fopen(path, "wb");
    JT_CHECK(f != NULL);
    if (f) {
        fwrite(d.data, 1, d.size, f);
        fclose(f);
    }
    JT_CHECK(symlink(path, link) == 0); /* ours, in a directory that is not sticky */
    JT_CHECK(jitanon__inj_load_default(NULL, link, NULL, &out, &err) == JITANON_OK && out && out->size == d.size);
    jitanon_jitdump_destroy(out);
    unlink(link);
    unlink(path);
    rmdir(dir);
    jitanon_membuf_release(&d);
}
#endif

#if JITANON__POSIX && !defined(JITANON_NO_STDIO)
#include <dirent.h>
/* The CLI's path: files on disk, the default I/O, the dump scanned and streamed (not
   loaded).  D+G gives the same output file and the same ELF files as D, in both layouts. */
static int dm_name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static void dm_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    JT_CHECK(f != NULL);
    if (!f) return;
    JT_CHECK(fwrite(data, 1, size, f) == size);
    fclose(f);
}

/* Reads `path` whole into `m` (appended). */
static void dm_read_file(const char *path, jitanon_membuf *m)
{
    uint8_t buf[4096];
    size_t n;
    FILE *f = fopen(path, "rb");
    JT_CHECK(f != NULL);
    if (!f) return;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) jitanon_membuf_write(m, buf, n);
    fclose(f);
}

/* Runs jitanon_inject_file; `m` gets the output, then each ELF file's name and bytes (the
   files are removed). */
static void dm_inject_files(const char *dir, jitanon_elf_layout layout, jitanon_membuf *m, jitanon_inject_stats *st)
{
    char in[256], out[256], elf[256], names[64][256], path[520];
    jitanon_inject_opts o;
    jitanon_error err;
    DIR *d;
    struct dirent *e;
    size_t n = 0, i;
    snprintf(in, sizeof in, "%s/perf.data", dir);
    snprintf(out, sizeof out, "%s/out.data", dir);
    snprintf(elf, sizeof elf, "%s/elf", dir);
    memset(&o, 0, sizeof o);
    o.elf_files = JITANON_ELF_FILES_ALL;
    o.elf_layout = layout;
    o.elf_dir = elf;
    JT_CHECK(jitanon_inject_file(in, out, JITANON_PERF_SAME_MODE, &o, NULL, st, &err) == JITANON_OK);
    dm_read_file(out, m);
    unlink(out);
    d = opendir(elf);
    JT_CHECK(d != NULL);
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && n < 64) snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    if (d) closedir(d);
    qsort(names, n, sizeof names[0], dm_name_cmp);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", elf, names[i]);
        jitanon_membuf_write(m, names[i], strlen(names[i]) + 1);
        dm_read_file(path, m);
        unlink(path);
    }
    JT_CHECK(n > 0);
}

static void test_damage_inject_files(void)
{
    char dir[] = "/tmp/jitanon-t-XXXXXX", path[256], marker[256];
    uint64_t seed = 99;
    int layout, kind;
    if (!mkdtemp(dir)) {
        jt_skip("mkdtemp failed");
        return;
    }
    snprintf(marker, sizeof marker, "%s/jit-100.dump", dir);
    snprintf(path, sizeof path, "%s/elf", dir);
    JT_CHECK(mkdir(path, 0755) == 0);
    {
        jitanon_membuf perf;
        dm_perf_marker(&perf, JITANON_PERF_FILE, marker);
        snprintf(path, sizeof path, "%s/perf.data", dir);
        dm_write_file(path, perf.data, perf.size);
        jitanon_membuf_release(&perf);
    }
    for (layout = 0; layout < 2; layout++)
        for (kind = 0; kind < 5; kind++) {
            jitanon_membuf d, g, a, b;
            jitanon_inject_stats sa, sb;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            dm_random_dump(&seed, &d, kind & 1);
            dm_garbage(&seed, kind, &d, kind & 1, &g);
            dm_write_file(marker, d.data, d.size);
            dm_inject_files(dir, layout ? JITANON_ELF_PER_PROCESS : JITANON_ELF_PER_FUNCTION, &a, &sa);
            jitanon_membuf_write(&d, g.data, g.size);
            dm_write_file(marker, d.data, d.size);
            dm_inject_files(dir, layout ? JITANON_ELF_PER_PROCESS : JITANON_ELF_PER_FUNCTION, &b, &sb);
            JT_CHECK(a.size == b.size && !memcmp(a.data, b.data, a.size));
            JT_CHECK(sa.dumps.damaged == 0 && sb.dumps.damaged == 1 && sb.dumps.damaged_loads_kept == sa.trim.loads);
            JT_CHECK_EQ_U(sb.dumps.bytes_ignored, g.size);
            jitanon_membuf_release(&d);
            jitanon_membuf_release(&g);
            jitanon_membuf_release(&a);
            jitanon_membuf_release(&b);
        }
    unlink(marker);
    snprintf(path, sizeof path, "%s/perf.data", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/elf", dir);
    rmdir(path);
    rmdir(dir);
}
/* The same through a file: fseek goes past the end of a file without failing (memin's
   seek refuses), so where the file ends is found by reading, not by the failed seek. */
static void test_damage_perf_cut_file(void)
{
    char dir[] = "/tmp/jitanon-t-XXXXXX", path[256], place[128];
    pdt_b b;
    jitanon_perf_record rec;
    uint64_t data, size, cut[3];
    int i;
    if (!mkdtemp(dir)) {
        jt_skip("mkdtemp failed");
        return;
    }
    snprintf(path, sizeof path, "%s/cut.data", dir);
    pdt_file(&b, 0);
    data = jitanon__rd64(b.m.data + 40, 0);
    size = jitanon__rd64(b.m.data + 48, 0);
    dm_record_at(b.m.data, b.m.size, 3, &rec);
    cut[0] = 110;                /* before the attrs section */
    cut[1] = rec.offset + 10;    /* inside a record, the features read first */
    cut[2] = data + size + 20;   /* in the feature table */
    for (i = 0; i < 3; i++) {
        jitanon_perf_reader r;
        jitanon_error err;
        jitanon_result res;
        dm_cut c;
        dm_write_file(path, b.m.data, (size_t)cut[i]);
        res = jitanon_perf_reader_open(&r, path, NULL, &err);
        c = dm_cut_finish(&r, res, 1, &err);
        if (i == 0) snprintf(place, sizeof place, "in the id arrays before the data, before the attrs section at byte 128");
        if (i == 1)
            snprintf(place, sizeof place, "in the data section, in a %s record at byte %llu that needs %u bytes",
                     jitanon_perf_record_name(rec.type), (unsigned long long)rec.offset, (unsigned)rec.size);
        if (i == 2) snprintf(place, sizeof place, "in the feature table at byte %llu", (unsigned long long)(data + size));
        dm_check_cut(&c, cut[i], place, i == 2 ? data + size + 48 + sizeof pdt_host : data + size + 48);
    }
    jitanon_membuf_release(&b.m);
    unlink(path);
    rmdir(dir);
}

#endif

static void suite_damage(void)
{
    JT_RUN(test_damage_jitdump_prefix_kept);
    JT_RUN(test_damage_inject_same_output);
    JT_RUN(test_damage_perf_killed);
    JT_RUN(test_damage_perf_pipe_cut);
    JT_RUN(test_damage_perf_garbage_features);
    JT_RUN(test_damage_perf_cut_place);
    JT_RUN(test_damage_perf_pipe_cut_place);
    JT_RUN(test_damage_perf_legacy_header);
#if JITANON__POSIX && !defined(JITANON_NO_STDIO)
    JT_RUN(test_damage_open_refuses);
    JT_RUN(test_damage_inject_files);
    JT_RUN(test_damage_perf_cut_file);
#endif
}
JT_SUITE(damage)
#undef JT_SUITES
#define JT_SUITES jt_suites_damage
