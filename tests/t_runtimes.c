/* What the runtimes users run today write, and how the injector takes it (issue #28):
   V8's builtins remapped from its executable into its code range under late NAME, debug
   records of a batch written before the batch's loads (LLVM ORC JITLink). */

/* -- a file mapped over back-dated loads ----------------------------------------------------- */

/* Region A is committed page by page (an //anon over all pages so far each time), as in
   tl_case; region B sits in an //anon reservation (when `reserve`) and some of its pages
   get a file mapped over them later, as V8 15 maps the builtins of its executable into
   its code range, with the builtins' loads after that.  Functions are written into
   0x100-byte slots of both regions; each LOAD comes a random time after its code. */
enum { TR_PAGES = 4, TR_BPAGES = 4, TR_SLOTS = 16, TR_MAXF = 80, TR_NS = 400, TR_BASE = 0x100000 };

typedef struct tr_case {
    tl_fn fn[TR_MAXF];
    size_t nf;
    uint64_t commit[TR_PAGES], filemap[TR_BPAGES]; /* filemap 0: none */
    uint64_t window;
} tr_case;

static size_t tr_page(uint64_t addr) { return (size_t)((addr - TR_BASE) / 0x1000); }

/* The file mapped over the slot at `addr` by `t`, else 0. */
static uint64_t tr_file_at(const tr_case *c, uint64_t addr, uint64_t t)
{
    size_t pg = tr_page(addr);
    return pg >= TR_PAGES && c->filemap[pg - TR_PAGES] && c->filemap[pg - TR_PAGES] <= t ? c->filemap[pg - TR_PAGES] : 0;
}

/* What a sample at `t` whose code is function `f` (or the file, f == SIZE_MAX, at `addr`)
   must resolve to.  KEEP (perf's rule): the latest of the slot's loads and the file's
   mapping up to t.  Late NAME names f itself before its load when f was the first at its
   slot, its load is at most a window later, and no file was mapped over it in between: a
   back-dated load never ends up under a later mapping. */
static const char *tr_expect(const tr_case *c, uint64_t addr, size_t f, uint64_t t, int late)
{
    const char *best = "//anon";
    uint64_t when = tr_file_at(c, addr, t);
    size_t i;
    if (when) best = "/some/bin";
    if (late && f != SIZE_MAX && c->fn[f].first && t < c->fn[f].load && t + c->window >= c->fn[f].load &&
        !tr_file_at(c, addr, t))
        return c->fn[f].name;
    for (i = 0; i < c->nf; i++)
        if (c->fn[i].addr == addr && c->fn[i].load <= t && c->fn[i].load >= when) {
            best = c->fn[i].name;
            when = c->fn[i].load;
        }
    return best;
}

static void tr_build(tr_case *c, uint64_t *rng, int reserve)
{
    uint64_t last_load[(TR_PAGES + TR_BPAGES) * TR_SLOTS];
    size_t i;
    memset(c, 0, sizeof *c);
    memset(last_load, 0, sizeof last_load);
    c->window = 50 + ti_rand(rng) % 400;
    for (i = 0; i < TR_PAGES; i++) c->commit[i] = 100 + i * (200 + ti_rand(rng) % 300);
    for (i = 0; i < TR_BPAGES; i++) {
        if (ti_rand(rng) % 3 == 0) continue;
        c->filemap[i] = 30 + ti_rand(rng) % 1500;
        if (i + 1 < TR_BPAGES && ti_rand(rng) % 3 == 0) { /* one mapping over two pages */
            c->filemap[i + 1] = c->filemap[i];
            i++;
        }
    }
    for (i = 0; i < 2 * (TR_PAGES + TR_BPAGES) * TR_SLOTS && c->nf < TR_MAXF; i++) {
        size_t slot = (size_t)(ti_rand(rng) % ((TR_PAGES + TR_BPAGES) * TR_SLOTS)), pg = slot / TR_SLOTS;
        tl_fn *f = &c->fn[c->nf];
        uint64_t fm = pg >= TR_PAGES ? c->filemap[pg - TR_PAGES] : 0;
        f->addr = TR_BASE + slot * 0x100;
        if (pg < TR_PAGES) f->written = c->commit[pg] + 1 + ti_rand(rng) % 500;
        else if (fm && (!reserve || ti_rand(rng) % 3)) f->written = fm + 1 + ti_rand(rng) % 300; /* a builtin */
        else if (reserve) f->written = 26 + ti_rand(rng) % 1500;
        else continue; /* nothing mapped there to hold code */
        if (last_load[slot]) {
            if (ti_rand(rng) % 2) continue;
            f->written = last_load[slot] + 1 + ti_rand(rng) % 300;
        }
        f->first = !last_load[slot];
        f->load = f->written + ti_rand(rng) % (3 * c->window);
        if (f->load == fm) f->load++; /* no ties between a load and a mapping */
        last_load[slot] = f->load;
        sprintf(f->name, "fn%u", (unsigned)c->nf);
        c->nf++;
    }
}

/* The code at `addr` at `t`: the function written there last, SIZE_MAX for the file, or
   SIZE_MAX - 1 for nothing yet. */
static size_t tr_truth(const tr_case *c, uint64_t addr, uint64_t t)
{
    size_t i, at = SIZE_MAX - 1;
    uint64_t when = tr_file_at(c, addr, t);
    if (when) at = SIZE_MAX;
    for (i = 0; i < c->nf; i++)
        if (c->fn[i].addr == addr && c->fn[i].written <= t && c->fn[i].written >= when) {
            at = i;
            when = c->fn[i].written;
        }
    return at;
}

static void tr_run(uint64_t seed, int name, int reserve, int *failures)
{
    tr_case *c = (tr_case *)calloc(1, sizeof *c);
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    size_t i, k, s, order[TR_MAXF], pick_of[TR_NS], nout = 0, late, cap = 4096;
    uint64_t rng = seed, t, prev, sample_time[TR_NS], sample_addr[TR_NS];
    int fdone[TR_BPAGES];
    tl_io io;
    jitanon_membuf perf, result;
    ti_gen g;
    uint8_t raw[128];
    ti_out_rec *out = (ti_out_rec *)calloc(cap, sizeof *out);
    char(*answers)[64] = (char(*)[64])calloc(TR_NS, 64);
    int bad = 0;
    tr_build(c, &rng, reserve);
    tl_write_dump(&io, c->fn, c->nf, order);
    /* the recording in time order: marker, reservation, commits and file mappings, samples */
    memset(&perf, 0, sizeof perf);
    memset(fdone, 0, sizeof fdone);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    if (reserve) ti_mmap(&g, 25, TR_BASE, (TR_PAGES + TR_BPAGES) * 0x1000, TR_BASE, "//anon");
    for (prev = 29, t = 30, k = 0, s = 0; s < TR_NS && t < 100000; prev = t, t += 1 + ti_rand(&rng) % 12) {
        uint64_t addr = TR_BASE + (ti_rand(&rng) % ((TR_PAGES + TR_BPAGES) * TR_SLOTS)) * 0x100;
        size_t pg, at;
        for (pg = 0; pg < TR_PAGES; pg++)
            if (c->commit[pg] > prev && c->commit[pg] <= t) ti_mmap(&g, c->commit[pg], TR_BASE, (pg + 1) * 0x1000, TR_BASE, "//anon");
        for (pg = 0; pg < TR_BPAGES; pg++)
            if (!fdone[pg] && c->filemap[pg] && c->filemap[pg] <= t) {
                size_t n = 1;
                while (pg + n < TR_BPAGES && c->filemap[pg + n] == c->filemap[pg]) fdone[pg + n++] = 1;
                fdone[pg] = 1;
                ti_mmap(&g, c->filemap[pg], TR_BASE + (TR_PAGES + pg) * 0x1000, n * 0x1000, 0x2000 + pg * 0x1000,
                        "/some/bin");
            }
        at = tr_truth(c, addr, t);
        if (at == SIZE_MAX - 1) continue;
        ti_sample(&g, t, addr + 0x10);
        sample_time[s] = t;
        sample_addr[s] = addr;
        pick_of[s++] = at;
        if (++k % 64 == 0) ti_round(&g);
    }
    ti_gen_end(&g);
    /* in memory */
    tl_opts(&o, &io, name, c->window);
    JT_CHECK(ti_run_no_output(&perf, &o, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(io.n, s);
    for (i = late = 0; i < s && i < io.n; i++) {
        const char *want = tr_expect(c, sample_addr[i], pick_of[i], sample_time[i], name);
        late += strcmp(tr_expect(c, sample_addr[i], pick_of[i], sample_time[i], 1),
                       tr_expect(c, sample_addr[i], pick_of[i], sample_time[i], 0)) != 0;
        if ((io.time[i] != sample_time[i] || strcmp(io.name[i], want) != 0) && !bad++)
            printf("  seed %llu reserve %d window %llu: sample %u at %llu (0x%llx): '%s', want '%s'\n",
                   (unsigned long long)seed, reserve, (unsigned long long)c->window, (unsigned)i,
                   (unsigned long long)sample_time[i], (unsigned long long)sample_addr[i], io.name[i], want);
    }
    if (st.late.samples != (name ? late : 0) && !bad++)
        printf("  seed %llu: late_samples %llu, want %u\n", (unsigned long long)seed,
               (unsigned long long)st.late.samples, (unsigned)late);
    /* written, and replayed as perf reads the output */
    memset(&result, 0, sizeof result);
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &result, &st, &err) == JITANON_OK);
    nout = ti_decode(&result, out, cap, &err);
    JT_CHECK(nout < cap);
    JT_CHECK_EQ_U(ti_replay(out, nout, answers, TR_NS), s);
    for (i = 0; i < s; i++) {
        const char *want = tr_expect(c, sample_addr[i], pick_of[i], sample_time[i], name);
        char file[64];
        if (want[0] == '/') strcpy(file, want);
        else sprintf(file, "/some/dir/jitted-100-%s.so", want + 2);
        if (strcmp(answers[i], file) != 0 && !bad++)
            printf("  seed %llu reserve %d: perf would resolve sample %u at %llu to '%s', want '%s'\n",
                   (unsigned long long)seed, reserve, (unsigned)i, (unsigned long long)sample_time[i], answers[i], file);
    }
    *failures += bad != 0;
    free(out);
    free(answers);
    free(c);
    jitanon_membuf_release(&result);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.dump);
}

/* Property: whatever the order of reservations, commits, file mappings over the code and
   loads, every sample resolves as perf's rule says (KEEP), and late NAME only adds names
   a function may claim - never one a later mapping hides from perf. */
static void test_runtimes_late_remap_random(void)
{
    int failures = 0;
    uint64_t seed;
    for (seed = 1; seed <= 150; seed++) {
        uint64_t s = seed * 0x9e3779b97f4a7c15u;
        tr_run(s, 1, 1, &failures);
        tr_run(s, 0, 1, &failures);
        tr_run(s, 1, 0, &failures);
    }
    JT_CHECK_EQ_U(failures, 0);
}

/* -- DEBUG_INFO paired by code address ------------------------------------------------------ */

#if JITANON__POSIX
/* A dump as LLVM's ORC JITLink writes a batch (every DEBUG_INFO, then every LOAD; here in
   reverse order too), then a function in the old order (its DEBUG_INFO just before its
   LOAD), a DEBUG_INFO for code that is never loaded and a LOAD without one. */
static void tr_jitlink_dump(jitanon_membuf *out)
{
    static const uint8_t code[0x40] = {0x55, 0xc3};
    static const char *const files[4] = {"a.c", "b.c", "c.c", "d.c"};
    jitanon_jitdump_writer w;
    jitanon_jitdump_debug_entry e[2];
    jitanon_error err;
    char name[8];
    size_t i, k;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    JT_CHECK(jdrec_begin(&w, jdrec_sink(out), 62, TI_PID, 5, 0, &err) == JITANON_OK);
    for (i = 0; i < 4; i++) {
        size_t f = i < 3 ? 2 - i : 3; /* C, B, A, then D */
        for (k = 0; k < 2; k++) {
            e[k].addr = 0x10000 + f * 0x100 + k * 0x10;
            e[k].lineno = (int32_t)(10 * (f + 1) + k);
            e[k].discrim = 0;
            e[k].file.data = files[f];
            e[k].file.length = 3;
        }
        if (i == 3) /* the batch's last LOAD (C), then D in the old order */
            JT_CHECK(jdrec_write(&w, jdrec_load(42, TI_PID, TI_PID, 0x10200, code, sizeof code, 2, "fn2"), &err) ==
                     JITANON_OK);
        JT_CHECK(jitanon_jitdump_write_debug_info(&w, 30 + i, 0x10000 + f * 0x100, e, 2, &err) == JITANON_OK);
        if (i == 2) /* A and B of the batch */
            for (k = 0; k < 2; k++) {
                sprintf(name, "fn%u", (unsigned)k);
                JT_CHECK(jdrec_write(&w, jdrec_load(40 + k, TI_PID, TI_PID, 0x10000 + k * 0x100, code, sizeof code, k, name),
                                     &err) == JITANON_OK);
            }
    }
    JT_CHECK(jdrec_write(&w, jdrec_load(43, TI_PID, TI_PID, 0x10300, code, sizeof code, 3, "fn3"), &err) == JITANON_OK);
    e[0].addr = 0x90000;
    JT_CHECK(jitanon_jitdump_write_debug_info(&w, 44, 0x90000, e, 1, &err) == JITANON_OK); /* never loaded */
    JT_CHECK(jdrec_write(&w, jdrec_load(45, TI_PID, TI_PID, 0x10400, code, sizeof code, 4, "fn4"), &err) == JITANON_OK);
}

/* The files of the line rows of a per-process file, in address order: "a.c b.c c.c d.c". */
static void tr_line_files(const jitanon_membuf *elf, char *got, size_t cap)
{
    jitanon_test_elf_file f;
    elft_row rows[64];
    size_t n, i;
    got[0] = 0;
    if (jitanon_test_elf_parse(&f, elf->data, elf->size, NULL) != JITANON_OK) return;
    n = elft_lines(&f, rows, 64);
    for (i = 0; i < n; i++) {
        size_t len = strlen(got);
        if (rows[i].end || rows[i].file.length != 3) continue;
        if (len >= 4 && !memcmp(got + len - 4, rows[i].file.data, 3)) continue;
        if (len + 5 < cap) {
            memcpy(got + len, rows[i].file.data, 3);
            strcpy(got + len + 3, " ");
        }
    }
}

/* Every function gets its own line table, whatever the order of a batch, from a dump
   loaded whole and streamed from its file; the DEBUG_INFO no LOAD took is counted. */
static void test_runtimes_debug_by_address(void)
{
    char dir[] = "build/rtd-XXXXXX", path[256], got[64];
    jitanon_membuf dump, perf, file, out;
    jitanon_inject_stats st;
    jitanon_inject_opts o;
    jitanon_error err;
    tp_io io;
    tr_jitlink_dump(&dump);
    if (!tp_dump_on_disk(&dump, dir, path, &perf)) {
        jt_skip("cannot create a directory under build/");
        jitanon_membuf_release(&dump);
        return;
    }
    /* loaded whole */
    memset(&io, 0, sizeof io);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    memset(&out, 0, sizeof out);
    io.dump = &dump;
    o.elf_layout = JITANON_ELF_PER_PROCESS;
    o.io.load_dump = ti_load_via;
    o.io.write_elf = tp_write;
    o.io.user = &io;
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(io.files, 1);
    JT_CHECK_EQ_U(st.dumps.debug_unmatched, 1);
    tr_line_files(&io.elf, got, sizeof got);
    if (strcmp(got, "a.c b.c c.c d.c ") != 0) printf("  loaded: line files '%s'\n", got);
    JT_CHECK(strcmp(got, "a.c b.c c.c d.c ") == 0);
    /* streamed from the file, written by the default I/O */
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_PROCESS;
    o.elf_dir = dir;
    out.size = 0;
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(st.dumps.debug_unmatched, 1);
    sprintf(path, "%s/jitted-%u.so", dir, TI_PID);
    memset(&file, 0, sizeof file);
    ti_read_file(path, &file);
    tr_line_files(&file, got, sizeof got);
    if (strcmp(got, "a.c b.c c.c d.c ") != 0) printf("  streamed: line files '%s'\n", got);
    JT_CHECK(strcmp(got, "a.c b.c c.c d.c ") == 0);
    JT_CHECK(file.size == io.elf.size && !memcmp(file.data, io.elf.data, file.size));
    remove(path);
    sprintf(path, "%s/jit-%u.dump", dir, TI_PID);
    remove(path);
    JT_CHECK(rmdir(dir) == 0);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&out);
    jitanon_membuf_release(&io.elf);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&dump);
}
/* -- the line bias of short functions -------------------------------------------------------- */

/* The shapes of dump the bias rule must tell apart, three functions each:
   - TR_JITLINK: LLVM ORC JITLink, 6-byte functions (shorter than the bias) whose DEBUG_INFO
     entries all start at code_addr + 0x40, the batch's DEBUG_INFOs before its LOADs;
   - TR_V8: V8's pad1 marker, 0x30-byte functions, entries from code_addr on (data wins);
   - TR_JAVA: perf's JVMTI agent, each DEBUG_INFO just before its LOAD, entries from code_addr;
   - TR_CPYTHON: CPython 3.13's 16-byte trampolines, one entry at code_addr each. */
enum { TR_JITLINK, TR_V8, TR_JAVA, TR_CPYTHON, TR_SHAPES };

static void tr_bias_dump(jitanon_membuf *out, int shape)
{
    static const uint8_t code[0x30] = {0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3};
    static const uint64_t size[TR_SHAPES] = {6, 0x30, 0x30, 0x10};
    jitanon_jitdump_writer w;
    jitanon_jitdump_debug_entry e[3];
    jitanon_error err;
    char name[8];
    size_t i, k, ne = shape == TR_CPYTHON ? 1 : 3;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    JT_CHECK(jdrec_begin(&w, jdrec_sink(out), 62, TI_PID, 5, 0, &err) == JITANON_OK);
    if (shape == TR_V8) jitanon__wr32(out->data + 16, 0xDEADBEEFu, 0); /* pad1 */
    for (i = 0; i < 3; i++) {
        uint64_t addr = 0x10000 + i * 0x40;
        for (k = 0; k < ne; k++) {
            e[k].addr = addr + (shape == TR_JITLINK ? 0x40 + 2 * k : 0x10 * k);
            e[k].lineno = (int32_t)(10 * (i + 1) + k);
            e[k].discrim = 0;
            e[k].file.data = "m.ll";
            e[k].file.length = 4;
        }
        JT_CHECK(jitanon_jitdump_write_debug_info(&w, 30 + i, addr, e, ne, &err) == JITANON_OK);
        if (shape == TR_JITLINK && i < 2) continue;
        for (k = shape == TR_JITLINK ? 0 : i; k <= i; k++) {
            sprintf(name, "fn%u", (unsigned)k);
            JT_CHECK(jdrec_write(&w, jdrec_load(40 + k, TI_PID, TI_PID, 0x10000 + k * 0x40, code, size[shape], k, name),
                                 &err) == JITANON_OK);
        }
    }
}

typedef struct tr_bias_io {
    const jitanon_membuf *dump;
    unsigned files, with_rows, rows, at_start; /* at_start: files whose first row is at their symbol */
} tr_bias_io;

static int tr_bias_write(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    tr_bias_io *io = (tr_bias_io *)user;
    jitanon_test_elf_file f;
    elft_row rows[16];
    size_t n, i, got = 0;
    (void)dir;
    (void)name;
    io->files++;
    if (jitanon_test_elf_parse(&f, data, size, NULL) != JITANON_OK) return 0;
    n = elft_lines(&f, rows, 16);
    for (i = 0; i < n; i++) got += !rows[i].end;
    io->rows += (unsigned)got;
    io->with_rows += got > 0;
    io->at_start += got > 0 && rows[0].addr == 0xf0; /* where a per-function file puts its code */
    return 0;
}

/* --line-bias=auto finds LLVM's 0x40 in functions shorter than the bias, written as
   JITLink writes them (0 of 3 files had lines), and stays off for V8, Java and CPython,
   whose entries start at code_addr: the scan, and the injector's files from a dump
   loaded whole and streamed from its file. */
static void test_runtimes_line_bias_short(void)
{
    static const uint32_t want[TR_SHAPES] = {JITANON_ELF_LINE_BIAS_PERF, JITANON_ELF_LINE_BIAS_NONE,
                                             JITANON_ELF_LINE_BIAS_NONE, JITANON_ELF_LINE_BIAS_NONE};
    static const unsigned rows[TR_SHAPES] = {9, 9, 9, 3};
    int shape, loaded;
    for (shape = 0; shape < TR_SHAPES; shape++) {
        char dir[] = "build/rtb-XXXXXX", path[256];
        jitanon_membuf dump, perf, out;
        jitanon_jitdump *d = NULL;
        jitanon_elf_line_bias_scan scan;
        jitanon_inject_opts o;
        jitanon_error err;
        size_t i;
        tr_bias_dump(&dump, shape);
        JT_CHECK(jitanon_jitdump_load_memory(dump.data, dump.size, NULL, &d, &err) == JITANON_OK);
        if (!d) break;
        jitanon_elf_line_bias_scan_init(&scan, &d->header);
        for (i = 0; i < d->record_count; i++) jitanon_elf_line_bias_scan_add(&scan, &d->records[i]);
        JT_CHECK_EQ_U(jitanon_elf_line_bias_scan_result(&scan), want[shape]);
        jitanon_jitdump_destroy(d);
        if (!tp_dump_on_disk(&dump, dir, path, &perf)) {
            jt_skip("cannot create a directory under build/");
            jitanon_membuf_release(&dump);
            return;
        }
        for (loaded = 0; loaded < 2; loaded++) {
            tr_bias_io io;
            jitanon_inject_stats st;
            memset(&io, 0, sizeof io);
            memset(&o, 0, sizeof o);
            memset(&out, 0, sizeof out);
            io.dump = &dump;
            o.elf_files = JITANON_ELF_FILES_ALL;
            o.elf_layout = JITANON_ELF_PER_FUNCTION; /* a line table a file */
            o.elf_dir = dir;
            if (loaded) o.io.load_dump = ti_load_via;
            o.io.write_elf = tr_bias_write;
            o.io.user = &io;
            JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out, &st, &err) == JITANON_OK);
            if (io.with_rows != 3 || io.rows != rows[shape] || io.at_start != 3)
                printf("  shape %d, loaded %d: %u files, %u with lines (%u at the start), %u rows\n", shape, loaded,
                       io.files, io.with_rows, io.at_start, io.rows);
            JT_CHECK_EQ_U(io.files, 3);
            JT_CHECK_EQ_U(io.with_rows, 3);
            JT_CHECK_EQ_U(io.at_start, 3);
            JT_CHECK_EQ_U(io.rows, rows[shape]);
            JT_CHECK_EQ_U(st.dumps.debug_unmatched, 0);
            jitanon_membuf_release(&out);
        }
        remove(path);
        JT_CHECK(rmdir(dir) == 0);
        jitanon_membuf_release(&perf);
        jitanon_membuf_release(&dump);
    }
}
#endif

/* -- samples after a dump's last record -------------------------------------------------- */

typedef struct tr_stop_io {
    ti_io base; /* first: ti_load_dump takes the user pointer as a ti_io */
    jitanon_membuf log;
    unsigned lines;
} tr_stop_io;

static void tr_stop_log(void *user, const char *msg)
{
    tr_stop_io *io = (tr_stop_io *)user;
    io->lines++;
    jitanon_membuf_write(&io->log, msg, strlen(msg) + 1);
}

/* Finishes the recording `g` writes into `perf` and injects it with io's dump and log
   (and on_sample, when not NULL; its user pointer is io too). */
static jitanon_result tr_stop_inject(ti_gen *g, const jitanon_membuf *perf, tr_stop_io *io,
                                     void (*on_sample)(void *, const jitanon_inject_sample *), jitanon_inject_stats *st)
{
    jitanon_inject_opts o;
    jitanon_membuf out;
    jitanon_error err;
    jitanon_result res;
    JT_CHECK(jitanon_perf_writer_finish(&g->w, &err) == JITANON_OK);
    jitanon_perf_writer_release(&g->w);
    memset(&o, 0, sizeof o);
    memset(&out, 0, sizeof out);
    o.io.load_dump = ti_load_dump;
    o.io.write_elf = ti_write_elf;
    o.io.log = tr_stop_log;
    o.io.user = io;
    o.on_sample = on_sample;
    res = ti_run(perf, &o, JITANON_PERF_FILE, &out, st, &err);
    jitanon_membuf_release(&out);
    return res;
}

/* 5 s + `ms` milliseconds, in ns. */
static uint64_t tr_ms(uint64_t ms) { return 5000000000u + ms * 1000000u; }

/* Bun's JIT writes its dump from a work queue: here it stopped 45 ms in (f0, f1), and the
   process went on running code in its //anon memory.  Counted, per dump: samples after
   the last record in anonymous memory no function covers (from the first found on:
   fourteen); not counted: those there
   before the end, those after it in the same page (code the runtime never describes, as a
   JVM's interpreter), one in f0 (named), one of a process without a dump, and all of
   them when the dump's last record comes after the samples.  One log line says when
   the JIT stopped and why that usually happens. */
static void test_runtimes_samples_after_dump_end(void)
{
    static const uint8_t code[0x100] = {0xc3};
    static tr_stop_io io;
    int late_end;
    unsigned k;
    for (late_end = 0; late_end < 2; late_end++) {
        jitanon_jitdump_writer w;
        jitanon_membuf perf;
        jitanon_inject_stats st;
        jitanon_perf_record rec;
        jitanon_error err;
        ti_gen g;
        uint8_t raw[128];
        memset(&io, 0, sizeof io);
        memset(&w, 0, sizeof w);
        io.base.give_dump = 1;
        JT_CHECK(jdrec_begin(&w, jdrec_sink(&io.base.dump), 62, TI_PID, tr_ms(1), 0, &err) == JITANON_OK);
        JT_CHECK(jdrec_write(&w, jdrec_load(tr_ms(40), TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), &err) == JITANON_OK);
        JT_CHECK(jdrec_write(&w, jdrec_load(tr_ms(45), TI_PID, TI_PID, 0x10200, code, 0x100, 1, "f1"), &err) == JITANON_OK);
        if (late_end) /* the runtime flushed its dump at exit: a record after every sample */
            JT_CHECK(jdrec_write(&w, jdrec_make(JITANON_JITDUMP_CODE_CLOSE, tr_ms(200)), &err) == JITANON_OK);
        memset(&perf, 0, sizeof perf);
        ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
        ti_mmap(&g, tr_ms(20), 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
        ti_mmap(&g, tr_ms(30), 0x10000, 0x4000, 0x10000, "//anon");
        ti_round(&g);
        for (k = 0; k < 8; k++) /* before the end: code never described (stubs), every 8th looked at */
            ti_sample(&g, tr_ms(41) + k * 100000u, 0x13000);
        ti_sample(&g, tr_ms(50), 0x10010); /* f0: named */
        for (k = 0; k < 3; k++) ti_sample(&g, tr_ms(55) + k, 0x13010 + k); /* the stubs' page: not counted */
        /* after the end one in 8 is looked at until one is counted: from the fourth on here */
        for (k = 0; k < 16; k++) ti_sample(&g, tr_ms(60) + k * 100000u, 0x12800 + k * 0x10);
        ti_sample(&g, tr_ms(70), 0x10300); /* counted: past f1 */
        memset(&rec, 0, sizeof rec);
        rec.sample.ip = 0x13000;
        rec.sid.pid = rec.sid.tid = TI_PID + 1; /* no dump */
        ti_put(&g, &rec, JITANON_PERF_RECORD_SAMPLE, JITANON_PERF_MISC_USER, tr_ms(80));
        ti_round(&g);
        JT_CHECK(tr_stop_inject(&g, &perf, &io, NULL, &st) == JITANON_OK);
        JT_CHECK_EQ_U(st.dumps.loaded, 1);
        JT_CHECK_EQ_U(st.dumps.stopped, late_end ? 0 : 1);
        JT_CHECK_EQ_U(st.dumps.samples_after_end, late_end ? 0 : 14);
        JT_CHECK_EQ_U(io.lines, late_end ? 0 : 1);
        if (!late_end && io.lines == 1) {
            const char *m = (const char *)io.log.data;
            if (!strstr(m, "stopped describing its code at 5.045000") || !strstr(m, "14 samples from 5.060300 to 5.070000") ||
                !strstr(m, "killed"))
                printf("  log: %s\n", m);
            JT_CHECK(strstr(m, "jitdump /some/dir/jit-100.dump: the JIT stopped describing its code at 5.045000") != NULL);
            JT_CHECK(strstr(m, "process 100 ran code in its JIT memory after that: 14 samples from 5.060300 to 5.070000") !=
                     NULL);
            JT_CHECK(strstr(m, "killed, or exited without flushing") != NULL);
        }
        jitanon_membuf_release(&perf);
        jitanon_membuf_release(&io.log);
        jitanon_membuf_release(&io.base.dump);
    }
}

/* -- JITDUMP_FLAGS_ARCH_TIMESTAMP on CLOCK_MONOTONIC times ---------------------------------- */

typedef struct tr_clock_io {
    tr_stop_io s; /* first: ti_load_dump and tr_stop_log take the user pointer as it */
    unsigned jit;  /* samples named by a jitted function */
} tr_clock_io;

static void tr_clock_sample(void *user, const jitanon_inject_sample *si)
{
    tr_clock_io *io = (tr_clock_io *)user;
    io->jit += si->kind == JITANON_TRIM_JIT;
}

/* A dump flagged ARCH_TIMESTAMP with f0, f1 loaded 40 and 45 ms past 5 s: its times are
   CLOCK_MONOTONIC (`tsc` 0) or the TSC of a 3 GHz CPU; the recording (-k mono) has a
   TIME_CONV for that TSC when `conv`, its marker `marker_ms` past 5 s (the header is 1 us
   before 20 ms).  Samples at 50 and
   60 ms in f0.  The run's result, its stats and log in `st` and `io`. */
static jitanon_result tr_clock_run(int tsc, int conv, uint64_t marker_ms, jitanon_inject_stats *st, tr_clock_io *io)
{
    static const uint8_t code[0x100] = {0xc3};
    jitanon_jitdump_writer w;
    jitanon_jitdump_header h;
    jitanon_membuf perf;
    jitanon_error err;
    jitanon_result res;
    ti_gen g;
    uint8_t raw[128], tc[32];
    uint64_t k = tsc ? 3 : 1;
    memset(io, 0, sizeof *io);
    memset(&w, 0, sizeof w);
    io->s.base.give_dump = 1;
    h = jdrec_header(62, TI_PID, tr_ms(20) * k - 1000, 0); /* the JIT started 20 ms in */
    h.arch_timestamp = 1;
    JT_CHECK(jitanon_jitdump_writer_init(&w, jdrec_sink(&io->s.base.dump), &h, &err) == JITANON_OK);
    JT_CHECK(jdrec_write(&w, jdrec_load(tr_ms(40) * k, TI_PID, TI_PID, 0x10000, code, 0x100, 0, "f0"), &err) == JITANON_OK);
    JT_CHECK(jdrec_write(&w, jdrec_load(tr_ms(45) * k, TI_PID, TI_PID, 0x10200, code, 0x100, 1, "f1"), &err) == JITANON_OK);
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    if (conv) { /* TIME_CONV: time = cycles * mult >> shift, a third */
        memset(tc, 0, sizeof tc);
        jitanon__wr32(tc, JITANON_PERF_RECORD_TIME_CONV, 0);
        jitanon__wr16(tc + 6, 32, 0);
        jitanon__wr64(tc + 8, 31, 0);
        jitanon__wr64(tc + 16, 715827883u, 0); /* 2^31 / 3, rounded up */
        JT_CHECK(jitanon_perf_writer_write(&g.w, tc, sizeof tc, &err) == JITANON_OK);
    }
    ti_mmap(&g, tr_ms(marker_ms), 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_mmap(&g, tr_ms(30), 0x10000, 0x4000, 0x10000, "//anon");
    ti_round(&g);
    ti_sample(&g, tr_ms(50), 0x10010);
    ti_sample(&g, tr_ms(60), 0x10020);
    ti_round(&g);
    res = tr_stop_inject(&g, &perf, &io->s, tr_clock_sample, st);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io->s.base.dump);
    return res;
}

/* Some JITs set ARCH_TIMESTAMP while writing CLOCK_MONOTONIC (libxsmm#1093 on VMs; perf
   refuses such a dump): the header's time, near the marker on CLOCK_MONOTONIC, says so,
   with the recording's TIME_CONV (read as TSC it is far) or without one (within 10 s).
   The times are used as CLOCK_MONOTONIC and one line says it.  A dump really on the TSC
   is converted through TIME_CONV as before; with neither a TIME_CONV nor a header time
   near its marker, the run fails as before. */
static void test_runtimes_arch_timestamp_flag(void)
{
    static tr_clock_io io;
    jitanon_inject_stats st;
    int conv;
    for (conv = 0; conv < 2; conv++) {
        JT_CHECK_EQ_U(tr_clock_run(0, conv, 20, &st, &io), JITANON_OK);
        JT_CHECK_EQ_U(st.dumps.clock_fixed, 1);
        JT_CHECK_EQ_U(st.trim.loads, 2);
        JT_CHECK_EQ_U(io.jit, 2);
        JT_CHECK_EQ_U(io.s.lines, 1);
        if (io.s.lines == 1) {
            const char *m = (const char *)io.s.log.data;
            if (!strstr(m, "but they are CLOCK_MONOTONIC")) printf("  log: %s\n", m);
            JT_CHECK(strstr(m, "jitdump /some/dir/jit-100.dump: its header says its times are the CPU's time stamp "
                               "counter (JITDUMP_FLAGS_ARCH_TIMESTAMP), but they are CLOCK_MONOTONIC") != NULL);
            JT_CHECK(strstr(m, "read as TSC") != NULL || !conv);
        }
        jitanon_membuf_release(&io.s.log);
    }
    /* really the TSC: converted */
    JT_CHECK_EQ_U(tr_clock_run(1, 1, 20, &st, &io), JITANON_OK);
    JT_CHECK_EQ_U(st.dumps.clock_fixed, 0);
    JT_CHECK_EQ_U(io.jit, 2);
    JT_CHECK_EQ_U(io.s.lines, 0);
    jitanon_membuf_release(&io.s.log);
    /* no TIME_CONV, and a header 12 s from the marker: nothing tells the clock */
    JT_CHECK_EQ_U(tr_clock_run(0, 0, 12020, &st, &io), JITANON_ERR_CLOCK);
    jitanon_membuf_release(&io.s.log);
}

/* The pairing rule itself: the same code address, else the first entry in the code. */
static void test_runtimes_debug_fits(void)
{
    jitanon_jitdump_record load = jdrec_load(10, 1, 1, 0x1000, "\xc3", 1, 0, "f"), debug;
    uint8_t entry[17]; /* addr, lineno, discrim, "" */
    memset(&debug, 0, sizeof debug);
    debug.id = JITANON_JITDUMP_CODE_DEBUG_INFO;
    debug.debug.code_addr = 0x1000;
    JT_CHECK_EQ_U(jitanon_jitdump_debug_fits(&debug, &load), JITANON_JITDUMP_DEBUG_SAME_ADDR);
    JT_CHECK_EQ_U(jitanon_jitdump_debug_fits(&load, &load), 0);
    debug.debug.code_addr = 0;
    JT_CHECK_EQ_U(jitanon_jitdump_debug_fits(&debug, &load), 0); /* no entries */
    memset(entry, 0, sizeof entry);
    jitanon__wr64(entry, 0x1000, 0);
    debug.debug.nr_entry = 1;
    debug.debug.entries.data = entry;
    debug.debug.entries.size = sizeof entry;
    JT_CHECK_EQ_U(jitanon_jitdump_debug_fits(&debug, &load), JITANON_JITDUMP_DEBUG_IN_CODE);
    jitanon__wr64(entry, 0x1001, 0); /* one past the code */
    JT_CHECK_EQ_U(jitanon_jitdump_debug_fits(&debug, &load), 0);
}

/* -- a dump's e_machine the recording could not run ---------------------------------------- */

typedef struct tm_io {
    jitanon_membuf dump, elf;
    unsigned lines;
} tm_io;

static int tm_write(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    tm_io *io = (tm_io *)user;
    (void)dir, (void)name;
    io->elf.size = 0;
    return jitanon_membuf_write(&io->elf, data, size);
}

static void tm_log(void *user, const char *msg)
{
    tm_io *io = (tm_io *)user;
    io->lines += strstr(msg, "e_machine") != NULL;
}

/* The e_machine of the ELF a dump of machine `dump_mach` gets in a recording whose
   HEADER_ARCH is `arch` (NULL: none); *lines gets the warnings. */
static uint32_t tm_machine(uint32_t dump_mach, const char *arch, int pipe, unsigned *lines)
{
    static const uint8_t code[0x20] = {0xc3};
    jitanon_jitdump_writer w;
    jitanon_membuf perf, out;
    jitanon_inject_opts o;
    jitanon_error err;
    jitanon_test_elf_file f;
    uint8_t raw[128], feat[68];
    ti_gen g;
    tm_io io;
    uint32_t got = 0;
    memset(&io, 0, sizeof io);
    memset(&w, 0, sizeof w);
    JT_CHECK(jdrec_begin(&w, jdrec_sink(&io.dump), dump_mach, TI_PID, 5, 0, &err) == JITANON_OK);
    JT_CHECK(jdrec_write(&w, jdrec_load(40, TI_PID, TI_PID, 0x10000, code, sizeof code, 0, "f0"), &err) == JITANON_OK);
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, pipe ? JITANON_PERF_PIPE : JITANON_PERF_FILE);
    memset(feat, 0, sizeof feat);
    if (arch) { /* a perf string: u32 length (padded to 64), the name, NULs */
        jitanon__wr32(feat, 64, 0);
        memcpy(feat + 4, arch, strlen(arch));
        if (pipe) JT_CHECK(jitanon_perf_writer_add_feature(&g.w, 6, feat, sizeof feat, &err) == JITANON_OK);
    }
    ti_mmap(&g, 20, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_round(&g);
    ti_sample(&g, 60, 0x10004);
    ti_round(&g);
    if (arch && !pipe) JT_CHECK(jitanon_perf_writer_add_feature(&g.w, 6, feat, sizeof feat, &err) == JITANON_OK);
    ti_gen_end(&g);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    memset(&out, 0, sizeof out);
    o.elf_layout = JITANON_ELF_PER_PROCESS;
    o.io.load_dump = ti_load_held;
    o.io.write_elf = tm_write;
    o.io.log = tm_log;
    o.io.user = &io;
    JT_CHECK(ti_run(&perf, &o, pipe ? JITANON_PERF_PIPE : JITANON_PERF_FILE, &out, NULL, &err) == JITANON_OK);
    if (jitanon_test_elf_parse(&f, io.elf.data, io.elf.size, NULL) == JITANON_OK) got = f.machine;
    *lines = io.lines;
    jitanon_membuf_release(&out);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.dump);
    jitanon_membuf_release(&io.elf);
    return got;
}

/* e_machine 0 (CPython 3.13.0) becomes the recording's machine (HEADER_ARCH, else the
   host's), and so does one HEADER_ARCH says the recording could not run, each with one
   warning; a machine it runs, or any machine when the recording does not say, stays. */
static void test_runtimes_dump_machine(void)
{
    unsigned lines = 0;
    int pipe;
    for (pipe = 0; pipe < 2; pipe++) {
        if (jitanon_jitdump_host_machine()) {
            JT_CHECK_EQ_U(tm_machine(0, NULL, pipe, &lines), jitanon_jitdump_host_machine());
            JT_CHECK_EQ_U(lines, 1);
        }
        JT_CHECK_EQ_U(tm_machine(0, "aarch64", pipe, &lines), 183);
        JT_CHECK_EQ_U(lines, 1);
        JT_CHECK_EQ_U(tm_machine(183, "x86_64", pipe, &lines), 62);
        JT_CHECK_EQ_U(lines, 1);
        JT_CHECK_EQ_U(tm_machine(3, "x86_64", pipe, &lines), 3); /* i386 code on x86-64 */
        JT_CHECK_EQ_U(lines, 0);
        JT_CHECK_EQ_U(tm_machine(183, NULL, pipe, &lines), 183); /* recorded elsewhere, maybe */
        JT_CHECK_EQ_U(lines, 0);
        JT_CHECK_EQ_U(tm_machine(62, "x86_64", pipe, &lines), 62);
        JT_CHECK_EQ_U(lines, 0);
    }
}

static void suite_runtimes(void)
{
    JT_RUN(test_runtimes_dump_machine);
    JT_RUN(test_runtimes_late_remap_random);
#if JITANON__POSIX
    JT_RUN(test_runtimes_debug_by_address);
    JT_RUN(test_runtimes_line_bias_short);
#endif
    JT_RUN(test_runtimes_debug_fits);
    JT_RUN(test_runtimes_samples_after_dump_end);
    JT_RUN(test_runtimes_arch_timestamp_flag);
}
JT_SUITE(runtimes)
#undef JT_SUITES
#define JT_SUITES jt_suites_runtimes
