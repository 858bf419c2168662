/* tests/t_region.c: the region layout (JITANON_ELF_PER_REGION), on random
   recordings: code in runs far apart, code placed over earlier code, files mapped into the
   process between loads.  Every function's bytes and symbol must sit at its MMAP2's pgoff
   in its file; every slice of a file at start - pgoff = the file's base B; holes below
   JITANON__REGION_GAP; and, replayed the way hotspot's parser registers mappings (tests
   the facts in ../shared/reference/consumers.md: a pgoff-0 mapping of a file becomes the
   process's last base, a later mapping of the same file at a higher address inherits it,
   any other file mapping forgets it), every slice inherits the one base its file is
   framed by (JITANON__REGION_KEY) - so its caches, keyed by ip - base, see one address
   space per file. */

typedef struct tg_file {
    char name[64];
    jitanon_membuf bytes;
} tg_file;

struct tg_frames;
typedef struct tg_io {
    ti_io base; /* first: ti_load_dump takes the user pointer as a ti_io */
    tg_file files[256];
    size_t nfiles;
    struct tg_frames *frames; /* tg_resolve's */
} tg_io;

static int tg_write_elf(void *user, const char *dir, const char *name, const void *data, size_t size)
{
    tg_io *io = (tg_io *)user;
    tg_file *f;
    (void)dir;
    JT_CHECK(io->nfiles < 256);
    if (io->nfiles >= 256) return 1;
    f = &io->files[io->nfiles++];
    snprintf(f->name, sizeof f->name, "/some/dir/%s", name);
    memset(&f->bytes, 0, sizeof f->bytes);
    jitanon_membuf_write(&f->bytes, data, size);
    return 0;
}

static const tg_file *tg_find(const tg_io *io, const char *path)
{
    size_t i;
    for (i = 0; i < io->nfiles; i++)
        if (!strcmp(io->files[i].name, path)) return &io->files[i];
    return NULL;
}

typedef struct tg_load {
    uint64_t time, addr, len;
    uint8_t fill;
} tg_load;

/* Injects `perf` (its dump from io) with the region layout, a function mapped from its
   LOAD (late names kept: what the checks model), and decodes the output into out[0, cap):
   how many records. */
static size_t tg_inject(const jitanon_membuf *perf, tg_io *io, jitanon_inject_stats *st, ti_out_rec *out, size_t cap)
{
    jitanon_inject_opts o;
    jitanon_membuf result;
    jitanon_error err;
    size_t n;
    ti_opts(&o, JITANON_ELF_PER_REGION, io, tg_write_elf);
    o.late = JITANON_LATE_KEEP;
    io->base.give_dump = 1;
    memset(&result, 0, sizeof result);
    JT_CHECK(ti_run(perf, &o, JITANON_PERF_FILE, &result, st, &err) == JITANON_OK);
    n = ti_decode(&result, out, cap, &err);
    jitanon_membuf_release(&result);
    return n;
}

/* The frame at each sample's own ip in a pass with no writer (opts.on_sample), the same
   options as tg_inject's: what it names, in sample order. */
typedef struct tg_frame {
    jitanon_frame_kind kind;
    char file[64];
    uint64_t start, pgoff;
} tg_frame;

typedef struct tg_frames {
    tg_frame f[1024];
    size_t n;
} tg_frames;


static void tg_on_sample(void *user, const jitanon_inject_sample *s)
{
    struct tg_frames *t = ((tg_io *)user)->frames;
    jitanon_frame f;
    tg_frame *g;
    if (t->n >= 1024) return;
    g = &t->f[t->n++];
    g->kind = jitanon_inject_frame_at(s, s->ip, 0, 0, &f);
    snprintf(g->file, sizeof g->file, "%.*s", (int)f.file.length, f.file.data);
    g->start = f.start;
    g->pgoff = f.pgoff;
}

static void tg_resolve_pass(const jitanon_membuf *perf, tg_io *io, tg_frames *t, uint32_t fields)
{
    jitanon_inject_opts o;
    jitanon_error err;
    ti_opts(&o, JITANON_ELF_PER_REGION, io, NULL);
    o.late = JITANON_LATE_KEEP;
    o.on_sample = tg_on_sample;
    o.sample_fields = fields;
    io->frames = t;
    t->n = 0;
    JT_CHECK(ti_run_no_output(perf, &o, NULL, &err) == JITANON_OK);
}

/* With JITANON_SAMPLE_FILES; without it the same frames, no file named (the layout's
   bookkeeping is not done). */
static void tg_resolve(const jitanon_membuf *perf, tg_io *io, tg_frames *t)
{
    static tg_frames plain;
    size_t i;
    tg_resolve_pass(perf, io, &plain, 0);
    tg_resolve_pass(perf, io, t, JITANON_SAMPLE_FILES);
    JT_CHECK_EQ_U(plain.n, t->n);
    for (i = 0; i < plain.n && i < t->n; i++)
        JT_CHECK(plain.f[i].kind == t->f[i].kind && plain.f[i].start == t->f[i].start && !plain.f[i].file[0] &&
                 (t->f[i].kind != JITANON_FRAME_JIT || t->f[i].file[0]));
}

/* One random recording, injected with the region layout and checked; 0 when it holds.
   Adds the claims made and taken back to *claims, *repairs. */
static int tg_case(uint64_t seed, uint64_t *claims, uint64_t *repairs)
{
    enum { NL = 80, CODE_MAX = 0x300 };
    static const uint64_t runs[3] = {0x100000, 0x100000 + 0x30000, 0x7f0000400000ull};
    tg_load ld[NL];
    uint64_t s = seed * 0x9e3779b97f4a7c15u + 7, t = 100;
    uint8_t raw[128], code[CODE_MAX];
    ti_gen g;
    jitanon_error err;
    jitanon_membuf perf;
    jitanon_inject_stats st;
    jitanon_jitdump_writer jw;
    ti_out_rec *out;
    size_t nout, cap = 1024, i, k, bad = 0, ns;
    static tg_io io;
    static tg_frames frames;
    const tg_frame *fr;
    struct { char name[64]; uint64_t addr; int valid; } last;
    memset(&io, 0, sizeof io);
    memset(&jw, 0, sizeof jw);
    jdrec_begin(&jw, jdrec_sink(&io.base.dump), 62, TI_PID, 1, 0, &err);
    memset(&perf, 0, sizeof perf);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    ti_mmap(&g, 50, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    for (i = 0; i < NL; i++) {
        tg_load *l = &ld[i];
        t += 1 + ti_rand(&s) % 4;
        l->time = t;
        l->len = 0x10 + ti_rand(&s) % (CODE_MAX - 0x10);
        if (i > 4 && ti_rand(&s) % 5 == 0) l->addr = ld[ti_rand(&s) % i].addr; /* over earlier code */
        else if (i > 0 && ti_rand(&s) % 3 == 0) l->addr = ld[i - 1].addr + ld[i - 1].len; /* touching it */
        else l->addr = runs[ti_rand(&s) % 3] + (ti_rand(&s) % 0x400) * 0x20;
        l->fill = (uint8_t)(i + 1);
        memset(code, l->fill, sizeof code);
        jdrec_write(&jw, jdrec_load(t, TI_PID, TI_PID, l->addr, code, (size_t)l->len, i, "f"), &err);
        /* the process maps files and anonymous memory between loads */
        if (ti_rand(&s) % 4 == 0) ti_mmap(&g, t, 0x7f1000000000ull + i * 0x10000, 0x1000, 0x1000, "/usr/lib/x.so");
        if (ti_rand(&s) % 3 == 0) ti_mmap(&g, t, runs[i % 3], 0x10000, runs[i % 3], "//anon");
        /* samples in code, new and older (code over code that a sample hit must not take
           its place in a file) */
        if (ti_rand(&s) % 3 == 0) ti_sample(&g, t, l->addr + ti_rand(&s) % l->len);
        if (ti_rand(&s) % 4 == 0) {
            const tg_load *e = &ld[ti_rand(&s) % (i + 1)];
            ti_sample(&g, t, e->addr + ti_rand(&s) % e->len);
        }
        /* and anywhere in the runs: where code loads later too (claimed ahead of it) */
        if (ti_rand(&s) % 3 == 0) ti_sample(&g, t, runs[ti_rand(&s) % 3] + (ti_rand(&s) % 0x400) * 0x20 + ti_rand(&s) % 0x20);
        if (i % 8 == 7) ti_round(&g);
    }
    ti_gen_end(&g);
    out = (ti_out_rec *)calloc(cap, sizeof *out);
    nout = tg_inject(&perf, &io, &st, out, cap);
    JT_CHECK_EQ_U(st.trim.loads, NL);
    JT_CHECK(io.nfiles >= 2);
    /* the output is in time order already: hotspot's parser sorts stably, so this is its
       order of registration */
    memset(&last, 0, sizeof last);
    for (i = 0; i < nout; i++) {
        const ti_out_rec *m = &out[i];
        uint64_t inherited = 0;
        int inherits;
        if (m->type != JITANON_PERF_RECORD_MMAP2 || m->name[0] != '/' || !strncmp(m->name, "//anon", 6)) continue;
        inherits = last.valid && !strcmp(last.name, m->name) && m->start > last.addr;
        if (inherits) inherited = last.addr;
        else if (m->pgoff == 0) {
            snprintf(last.name, sizeof last.name, "%s", m->name);
            last.addr = m->start;
            last.valid = 1;
        } else last.valid = 0;
        if (!strstr(m->name, "/jitted-100-r") || m->len == 1) continue;
        /* a slice of whole functions: a load's (times are unique), or a claim's run of them,
           from a load's start to a load's end (jitanon__inj_claim) */
        for (k = 0; k < NL && !(ld[k].time == m->time && ld[k].addr == m->start && ld[k].len == m->len); k++) {}
        if (k == NL) {
            size_t e;
            for (k = 0; k < NL && ld[k].addr != m->start; k++) {}
            for (e = 0; e < NL && ld[e].addr + ld[e].len != m->start + m->len; e++) {}
            if (k == NL || e == NL) {
                if (!bad++) printf("  seed %llu: a slice of no load at %llx\n", (unsigned long long)seed, (unsigned long long)m->start);
                continue;
            }
        }
        if (!inherits || inherited != JITANON__REGION_KEY) {
            if (!bad++)
                printf("  seed %llu: %s at %llx (pgoff %llx) does not inherit its base (%s %llx)\n",
                       (unsigned long long)seed, m->name, (unsigned long long)m->start, (unsigned long long)m->pgoff,
                       inherits ? "inherits" : "no base", (unsigned long long)inherited);
        }
    }
    /* every sample: the file perf resolves it into (the last mapping over it, in output
       order) holds at its offset the bytes of the load per-function files name there (the
       latest load over it by then), under one symbol; and a pass with no writer names that
       file and that offset (jitanon_frame.file, pgoff) */
    tg_resolve(&perf, &io, &frames);
    for (i = 0, ns = 0; i < nout; i++) {
        const ti_out_rec *x = &out[i], *m = NULL;
        const tg_file *f;
        jitanon_test_elf_file ef;
        jitanon_test_elf_section symtab;
        uint64_t off, q, nsym, found = 0;
        size_t want = NL;
        char own[64];
        if (x->type != JITANON_PERF_RECORD_SAMPLE) continue;
        fr = ns < frames.n ? &frames.f[ns] : NULL;
        ns++;
        for (k = 0; k < i; k++)
            if (out[k].type == JITANON_PERF_RECORD_MMAP2 && x->start - out[k].start < out[k].len) m = &out[k];
        if (m && strstr(m->name, "/jitted-") &&
            (!fr || fr->kind != JITANON_FRAME_JIT || strcmp(fr->file, m->name) ||
             fr->pgoff + (x->start - fr->start) != x->start - m->start + m->pgoff) &&
            !bad++)
            printf("  seed %llu: with no writer, the sample at %llx is in %s at %llx (perf: %s at %llx)\n",
                   (unsigned long long)seed, (unsigned long long)x->start, fr ? fr->file : "-",
                   fr ? (unsigned long long)(fr->pgoff + (x->start - fr->start)) : 0ull, m->name,
                   (unsigned long long)(x->start - m->start + m->pgoff));
        m = NULL;
        for (k = 0; k < NL; k++) /* in time order: the latest wins */
            if (ld[k].time <= x->time && x->start - ld[k].addr < ld[k].len) want = k;
        for (k = 0; k < i; k++)
            if (out[k].type == JITANON_PERF_RECORD_MMAP2 && x->start - out[k].start < out[k].len) m = &out[k];
        if (want == NL) { /* no code there yet: no jitted file either */
            if (m && strstr(m->name, "/jitted-") && !bad++)
                printf("  seed %llu: a sample at %llx where nothing loaded yet resolves to %s\n", (unsigned long long)seed,
                       (unsigned long long)x->start, m->name);
            continue;
        }
        /* its run's file, or (over code a sample hit) a file of its own, as perf names it */
        snprintf(own, sizeof own, "/some/dir/jitted-100-%u.so", (unsigned)want);
        if (!m || (!strstr(m->name, "/jitted-100-r") && strcmp(m->name, own)) || !(f = tg_find(&io, m->name)) ||
            jitanon_test_elf_parse(&ef, f->bytes.data, f->bytes.size, NULL) != JITANON_OK) {
            if (!bad++)
                printf("  seed %llu: a sample at %llx (load %u) resolves to %s\n", (unsigned long long)seed,
                       (unsigned long long)x->start, (unsigned)want, m ? m->name : "nothing");
            continue;
        }
        off = x->start - m->start + m->pgoff;
        if (off >= f->bytes.size || ((const uint8_t *)f->bytes.data)[off] != ld[want].fill) {
            if (!bad++)
                printf("  seed %llu: %s holds other bytes at %llx than load %u, sampled at %llx\n", (unsigned long long)seed,
                       m->name, (unsigned long long)off, (unsigned)want, (unsigned long long)x->start);
            continue;
        }
        if (jitanon_test_elf_find_section(&ef, ".symtab", &symtab)) {
            nsym = jitanon_test_elf_symbol_count(&ef, &symtab);
            for (q = 1; q < nsym; q++) {
                jitanon_test_elf_symbol sym;
                if (jitanon_test_elf_symbol_at(&ef, &symtab, q, &sym, NULL) == JITANON_OK && sym.value <= off &&
                    off - sym.value < sym.size)
                    found++;
            }
        }
        if (found != 1 && !bad++)
            printf("  seed %llu: %s has %u symbols at %llx\n", (unsigned long long)seed, m->name, (unsigned)found,
                   (unsigned long long)off);
    }
    /* holes: a file's functions, in offset order, lie at most JITANON__REGION_GAP apart */
    for (i = 0; i < nout; i++) {
        uint64_t next = UINT64_MAX;
        const ti_out_rec *m = &out[i];
        if (m->type != JITANON_PERF_RECORD_MMAP2 || !strstr(m->name, "/jitted-100-r") || m->len == 1) continue;
        for (k = 0; k < nout; k++)
            if (out[k].type == JITANON_PERF_RECORD_MMAP2 && out[k].len > 1 && !strcmp(out[k].name, m->name) &&
                out[k].pgoff > m->pgoff && out[k].pgoff < next)
                next = out[k].pgoff;
        if (next != UINT64_MAX && next > m->pgoff + m->len && next - (m->pgoff + m->len) > JITANON__REGION_GAP && !bad++)
            printf("  seed %llu: %s has a hole of %llu bytes\n", (unsigned long long)seed, m->name,
                   (unsigned long long)(next - (m->pgoff + m->len)));
    }
    /* a file never holds two functions at one offset: its symbols do not overlap (code over
       code went to another file, or took the place of code no sample hit) */
    for (i = 0; i < io.nfiles; i++) {
        jitanon_test_elf_file ef;
        jitanon_test_elf_section symtab;
        jitanon_test_elf_symbol a, b;
        uint64_t q, w, nsym;
        if (jitanon_test_elf_parse(&ef, io.files[i].bytes.data, io.files[i].bytes.size, NULL) != JITANON_OK ||
            !jitanon_test_elf_find_section(&ef, ".symtab", &symtab))
            continue;
        nsym = jitanon_test_elf_symbol_count(&ef, &symtab);
        for (q = 1; q < nsym; q++)
            for (w = q + 1; w < nsym; w++)
                if (jitanon_test_elf_symbol_at(&ef, &symtab, q, &a, NULL) == JITANON_OK &&
                    jitanon_test_elf_symbol_at(&ef, &symtab, w, &b, NULL) == JITANON_OK && a.size && b.size &&
                    a.value < b.value + b.size && b.value < a.value + a.size && !bad++)
                    printf("  seed %llu: %s holds two functions at %llx\n", (unsigned long long)seed, io.files[i].name,
                           (unsigned long long)b.value);
    }
    JT_CHECK_EQ_U(ns, frames.n);
    JT_CHECK(st.write.region_bases > 0);
    *claims += st.write.region_claims;
    *repairs += st.write.region_repairs;
    for (i = 0; i < io.nfiles; i++) jitanon_membuf_release(&io.files[i].bytes);
    free(out);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&io.base.dump);
    return bad != 0;
}

static void test_region_layout_random(void)
{
    uint64_t seed, claims = 0, repairs = 0;
    int failures = 0;
    for (seed = 1; seed <= 60; seed++) failures += tg_case(seed, &claims, &repairs);
    JT_CHECK_EQ_U(failures, 0);
    /* anonymous memory mapped over code still to load claims it, and samples there before
       the load (the recording samples earlier code) take claims back */
    JT_CHECK(claims > 0);
    JT_CHECK(repairs > 0);
}

/* Region files with real unwinding and line info: the builder puts each function at the
   offset asked for, and its FDE and line rows follow it there. */
static void test_region_file_offsets(void)
{
    static const uint8_t code[64] = {0x55, 0xc3};
    jitanon_jitdump_header h;
    jitanon_elf_builder b;
    jitanon_elf_func fn;
    jitanon_membuf out;
    jitanon_error err;
    jitanon_test_elf_file ef;
    jitanon_test_elf_section text;
    uint64_t pgoff = 0;
    memset(&h, 0, sizeof h);
    h.elf_mach = 62;
    memset(&out, 0, sizeof out);
    JT_CHECK(jitanon_elf_builder_init(&b, &h, NULL, &err) == JITANON_OK);
    memset(&fn, 0, sizeof fn);
    fn.name.data = "a";
    fn.name.length = 1;
    fn.code_addr = 0x501003;
    fn.code.data = code;
    fn.code.size = sizeof code;
    fn.file_offset = 0x1003;
    JT_CHECK(jitanon_elf_builder_add(&b, &fn, &pgoff, &err) == JITANON_OK);
    JT_CHECK_EQ_U(pgoff, 0x1003);
    fn.name.data = "b";
    fn.code_addr = 0x501043;
    fn.file_offset = 0x1043; /* right after a, unaligned */
    JT_CHECK(jitanon_elf_builder_add(&b, &fn, &pgoff, &err) == JITANON_OK);
    fn.file_offset = 0x1050; /* inside b: refused */
    JT_CHECK_EQ_U(jitanon_elf_builder_add(&b, &fn, &pgoff, &err), JITANON_ERR_INVALID_ARGUMENT);
    fn.file_offset = 0x10; /* inside the headers: refused */
    JT_CHECK_EQ_U(jitanon_elf_builder_add(&b, &fn, &pgoff, &err), JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK(jitanon_elf_builder_finish(&b, jdrec_sink(&out), NULL, &err) == JITANON_OK);
    jitanon_elf_builder_release(&b);
    JT_CHECK(jitanon_test_elf_parse(&ef, out.data, out.size, NULL) == JITANON_OK);
    JT_CHECK(jitanon_test_elf_find_section(&ef, ".text", &text) && text.offset <= 0x1003 &&
             text.offset + text.size >= 0x1043 + sizeof code);
    JT_CHECK(out.size > 0x1043 + sizeof code && !memcmp((const uint8_t *)out.data + 0x1043, code, sizeof code));
    jitanon_membuf_release(&out);
}

/* A claims test's recording (file mode): its dump written through jw first, then its
   perf.data through g from the marker on. */
typedef struct tr_rec {
    uint8_t raw[128];
    ti_gen g;
    jitanon_error err;
    jitanon_membuf perf;
    jitanon_inject_stats st;
    jitanon_jitdump_writer jw;
    ti_out_rec out[128];
    tg_io io;
} tr_rec;

/* The code and the unwinding info of every function of these recordings. */
static const uint8_t tr_code[0x100] = {0xc3};
static const uint8_t tr_eh[16] = {0};

static void tr_begin(tr_rec *t)
{
    memset(t, 0, sizeof *t);
    jdrec_begin(&t->jw, jdrec_sink(&t->io.base.dump), 62, TI_PID, 1, 0, &t->err);
}

static void tr_perf(tr_rec *t)
{
    ti_gen_begin(&t->g, t->raw, 1, &t->perf, JITANON_PERF_FILE);
    ti_mmap(&t->g, 50, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
}

static size_t tr_inject(tr_rec *t)
{
    JT_CHECK(jitanon_perf_writer_finish(&t->g.w, &t->err) == JITANON_OK);
    jitanon_perf_writer_release(&t->g.w);
    return tg_inject(&t->perf, &t->io, &t->st, t->out, 128);
}

/* tr_inject, then the file perf names each sample's mapping (ti_replay) into got[0, cap). */
static size_t tr_replay(tr_rec *t, char (*got)[64], size_t cap)
{
    return ti_replay(t->out, tr_inject(t), got, cap);
}

static void tr_end(tr_rec *t)
{
    size_t i;
    for (i = 0; i < t->io.nfiles; i++) jitanon_membuf_release(&t->io.files[i].bytes);
    jitanon_membuf_release(&t->perf);
    jitanon_membuf_release(&t->io.base.dump);
}

/* Claims, one by one (jitanon__inj_claim): anonymous memory mapped over code that loads
   later maps that code at once, in one MMAP2 for a run of touching functions; a second
   mapping of the memory leaves the claims out; a sample in a claim before its load takes
   it back (what was there, //anon, goes over it) and the function is mapped at its load;
   a load whose claim stands maps nothing more. */
static void test_region_claims(void)
{
    enum { A = 0x200000, B = A + 0x100, C = A + 0x400, D = A + 0x1000 };
    static tr_rec t;
    char got[16][64];
    size_t nout, ngot, i, mm_a = 0, mm_c = 0;
    tr_begin(&t);
    /* f0 and f1 touch (one run); f2 and f3 are sampled before their loads */
    jdrec_write(&t.jw, jdrec_load(300, TI_PID, TI_PID, A, tr_code, 0x100, 0, "f0"), &t.err);
    jdrec_write(&t.jw, jdrec_load(310, TI_PID, TI_PID, B, tr_code, 0x100, 1, "f1"), &t.err);
    jdrec_write(&t.jw, jdrec_load(320, TI_PID, TI_PID, C, tr_code, 0x100, 2, "f2"), &t.err);
    jdrec_write(&t.jw, jdrec_load(500, TI_PID, TI_PID, D, tr_code, 0x100, 3, "f3"), &t.err);
    tr_perf(&t);
    ti_mmap(&t.g, 100, A, 0x2000, A, "//anon"); /* claims f0-f3 */
    ti_mmap(&t.g, 200, A - 0x1000, 0x4000, 0, "//anon"); /* another mapping there: must leave them out */
    ti_sample(&t.g, 250, C + 8);                /* f2 not loaded: //anon, its claim taken back */
    ti_round(&t.g);
    ti_sample(&t.g, 400, A + 8);                /* f0 */
    ti_sample(&t.g, 401, B + 8);                /* f1 */
    ti_sample(&t.g, 402, C + 8);                /* f2, mapped at its load */
    ti_sample(&t.g, 450, D + 8);                /* f3 not loaded: //anon */
    ti_round(&t.g);
    ti_sample(&t.g, 600, D + 8);                /* f3 */
    ti_round(&t.g);
    nout = tr_inject(&t);
    JT_CHECK_EQ_U(t.st.write.region_claims, 4);
    JT_CHECK_EQ_U(t.st.write.region_repairs, 2);
    for (i = 0; i < nout; i++) {
        if (t.out[i].type != JITANON_PERF_RECORD_MMAP2 || !strstr(t.out[i].name, "jitted-")) continue;
        if (t.out[i].start == A) { /* f0 and f1: one MMAP2 */
            mm_a++;
            JT_CHECK_EQ_U(t.out[i].len, 0x200);
        }
        if (t.out[i].start == C) mm_c++;
    }
    JT_CHECK_EQ_U(mm_a, 1); /* and none at f0's load */
    JT_CHECK_EQ_U(mm_c, 2); /* claimed, then mapped at its load */
    ngot = ti_replay(t.out, nout, got, 16);
    JT_CHECK_EQ_U(ngot, 6);
    if (ngot == 6) {
        JT_CHECK(!strcmp(got[0], "//anon"));
        JT_CHECK(strstr(got[1], "/some/dir/jitted-100-r0.so") == got[1]);
        JT_CHECK(strstr(got[2], "/some/dir/jitted-100-r0.so") == got[2]);
        JT_CHECK(strstr(got[3], "/some/dir/jitted-100-r0.so") == got[3]);
        JT_CHECK(!strcmp(got[4], "//anon"));
        JT_CHECK(strstr(got[5], "/some/dir/jitted-100-r0.so") == got[5]);
    }
    tr_end(&t);
}

/* //anon over code that loads later and is not claimed yet (the function that straddles a
   runtime's page commits) is held back (jitanon__inj_anon_hold): nothing goes out there
   until a sample's word is in it, then the held piece does, before the sample; the claim at
   the next commit then replaces nothing hotspot's parser holds. */
static void test_region_held_anon(void)
{
    enum { A = 0x200000, P = 0x1000 };
    static tr_rec t;
    char got[16][64];
    size_t nout, ngot, i, over_f1 = 0, over_f3 = 0;
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_load(400, TI_PID, TI_PID, A, tr_code, 0x100, 0, "f0"), &t.err);
    jdrec_write(&t.jw, jdrec_load(410, TI_PID, TI_PID, A + P - 0x80, tr_code, 0x100, 1, "f1"), &t.err); /* pages 1 and 2 */
    jdrec_write(&t.jw, jdrec_load(420, TI_PID, TI_PID, A + P + 0x100, tr_code, 0x100, 2, "f2"), &t.err);
    jdrec_write(&t.jw, jdrec_load(430, TI_PID, TI_PID, A + 2 * P - 0x80, tr_code, 0x100, 3, "f3"), &t.err); /* 2 and 3 */
    tr_perf(&t);
    ti_mmap(&t.g, 100, A, P, A, "//anon");         /* claims f0; f1's first half held */
    ti_mmap(&t.g, 200, A, 2 * P, A, "//anon");     /* claims f1 and f2; f3's first half held */
    ti_sample(&t.g, 250, A + 2 * P - 0x70);        /* in it: //anon, sent now */
    ti_round(&t.g);
    ti_mmap(&t.g, 300, A, 3 * P, A, "//anon");     /* claims f3 */
    ti_sample(&t.g, 500, A + P - 0x70);            /* f1 */
    ti_sample(&t.g, 501, A + 2 * P - 0x70);        /* f3 */
    ti_round(&t.g);
    nout = tr_inject(&t);
    JT_CHECK_EQ_U(t.st.write.region_claims, 4);
    JT_CHECK_EQ_U(t.st.write.region_repairs, 1);
    for (i = 0; i < nout; i++) {
        if (t.out[i].type != JITANON_PERF_RECORD_MMAP2) continue;
        if (t.out[i].start < A + P && t.out[i].start + t.out[i].len > A + P - 0x80) over_f1++;
        if (t.out[i].start < A + 2 * P && t.out[i].start + t.out[i].len > A + 2 * P - 0x80 && !strcmp(t.out[i].name, "//anon"))
            over_f3++;
    }
    JT_CHECK_EQ_U(over_f1, 1); /* its claim, and nothing before it */
    JT_CHECK_EQ_U(over_f3, 1); /* the held piece, for the sample */
    ngot = ti_replay(t.out, nout, got, 16);
    JT_CHECK_EQ_U(ngot, 3);
    if (ngot == 3) {
        JT_CHECK(!strcmp(got[0], "//anon"));
        JT_CHECK(strstr(got[1], "/some/dir/jitted-100-r0.so") == got[1]);
        JT_CHECK(strstr(got[2], "/some/dir/jitted-100-r0.so") == got[2]);
    }
    tr_end(&t);
}

/* f2 with an unwinding tail over f3, which straddles pages [a, a + p) and the next, then
   the perf.data from the marker on and the first page's //anon. */
static void tr_tail_pair(tr_rec *t, uint64_t a, uint64_t p)
{
    jdrec_write(&t->jw, jdrec_unwind(419, tr_eh, 16, tr_eh, 16, 0x80), &t->err);
    jdrec_write(&t->jw, jdrec_load(420, TI_PID, TI_PID, a + p - 0x180, tr_code, 0x100, 2, "f2"), &t->err);
    jdrec_write(&t->jw, jdrec_load(550, TI_PID, TI_PID, a + p - 0x80, tr_code, 0x100, 3, "f3"), &t->err);
    tr_perf(t);
    ti_mmap(&t->g, 100, a, p, a, "//anon");
}

/* Unwinding tails over the next function's code (jitgen places code so): the claim of a
   function whose tail the next one lies in is its code alone, and a function that loads
   into a tail already loaded is claimed too (jitanon__inj_only_anon). */
static void test_region_claim_tails(void)
{
    enum { A = 0x200000, P = 0x1000 };
    static tr_rec t;
    char got[16][64];
    size_t ngot;
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_unwind(399, tr_eh, 16, tr_eh, 16, 0x80), &t.err);
    jdrec_write(&t.jw, jdrec_load(400, TI_PID, TI_PID, A, tr_code, 0x100, 0, "f0"), &t.err); /* tail over f1 */
    jdrec_write(&t.jw, jdrec_load(410, TI_PID, TI_PID, A + 0x100, tr_code, 0x100, 1, "f1"), &t.err);
    tr_tail_pair(&t, A, P);                  /* claims f0, f1, f2 */
    ti_round(&t.g);
    ti_mmap(&t.g, 500, A, 2 * P, A, "//anon"); /* claims f3, in f2's loaded tail */
    ti_sample(&t.g, 600, A + 0x108);           /* f1 */
    ti_sample(&t.g, 601, A + P - 0x78);        /* f3 */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(t.st.write.region_claims, 4);
    JT_CHECK_EQ_U(t.st.write.region_repairs, 1); /* f3's first half, held under f2's tail, at f2's load */
    JT_CHECK_EQ_U(ngot, 2);
    if (ngot == 2) {
        JT_CHECK(strstr(got[0], "/some/dir/jitted-100-r0.so") == got[0]);
        JT_CHECK(strstr(got[1], "/some/dir/jitted-100-r0.so") == got[1]);
    }
    tr_end(&t);
}

/* Held //anon and claims at their edges (found in review): a sibling thread's sample after
   the main thread's exit still finds //anon where the process had it; a claim cut to its
   code sends what is held under its tail at its load (a word there reads //anon, not
   nothing); a function moved into its own old tail is no tail to claim over. */
static void test_region_held_edges(void)
{
    enum { A = 0x200000, P = 0x1000 };
    static tr_rec t;
    char got[16][64];
    size_t ngot;
    /* the exit */
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_load(400, TI_PID, TI_PID, A, tr_code, 0x100, 0, "f0"), &t.err);
    jdrec_write(&t.jw, jdrec_load(410, TI_PID, TI_PID, A + P - 0x80, tr_code, 0x100, 1, "f1"), &t.err);
    tr_perf(&t);
    ti_mmap(&t.g, 100, A, P, A, "//anon");              /* claims f0; f1's first half held */
    ti_task(&t.g, JITANON_PERF_RECORD_EXIT, 300, TI_PID, TI_PID, TI_PID);
    ti_sample_tid(&t.g, 301, A + P - 0x70, TI_PID + 1); /* a sibling, in the held //anon */
    ti_sample_tid(&t.g, 302, A + 8, TI_PID + 1);        /* in f0's claim, f0 not loaded */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(ngot, 2);
    if (ngot == 2) {
        JT_CHECK(!strcmp(got[0], "//anon"));
        JT_CHECK(!strcmp(got[1], "//anon"));
    }
    tr_end(&t);
    /* the tail */
    tr_begin(&t);
    tr_tail_pair(&t, A, P);
    ti_sample(&t.g, 430, A + P - 0x78); /* f2's tail, f3 not loaded */
    ti_sample(&t.g, 431, A + P - 0x100); /* f2 */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(ngot, 2);
    if (ngot == 2) {
        JT_CHECK(!strcmp(got[0], "//anon"));
        JT_CHECK(strstr(got[1], "/some/dir/jitted-100-r0.so") == got[1]);
    }
    tr_end(&t);
    /* the move */
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_unwind(199, tr_eh, 16, tr_eh, 16, 0x400), &t.err);
    jdrec_write(&t.jw, jdrec_load(200, TI_PID, TI_PID, A, tr_code, 0x100, 0, "f0"), &t.err); /* its tail to A + 0x500 */
    jdrec_write(&t.jw, jdrec_move(210, TI_PID, TI_PID, A, A + 0x200, 0x100, 0), &t.err);
    jdrec_write(&t.jw, jdrec_load(600, TI_PID, TI_PID, A + 0x200, tr_code, 0x100, 1, "f1"), &t.err);
    tr_perf(&t);
    ti_mmap(&t.g, 100, A, 0x180, A, "//anon");
    ti_round(&t.g);
    ti_mmap(&t.g, 300, A, 2 * P, A, "//anon"); /* f1 is not claimed over moved f0 */
    ti_sample(&t.g, 400, A + 0x210);           /* moved f0 */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(ngot, 1);
    if (ngot == 1) JT_CHECK(strstr(got[0], "/some/dir/jitted-100-r0.so@100") == got[0]);
    tr_end(&t);
}

/* A page where every function is hit and nothing is claimed or held needs no look-up
   (jitanon__inj_jit.hitpg), until the engine's map changes there or a claim comes: f1,
   loaded beside the hit f0, and a sample in it must count, so that f2, loaded over f1,
   gets a file of its own rather than take f1's place (where that sample named f1). */
static void test_region_settled_pages(void)
{
    enum { A = 0x200000 };
    static tr_rec t;
    char got[16][64];
    size_t ngot;
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_load(300, TI_PID, TI_PID, A, tr_code, 0x80, 0, "f0"), &t.err);
    jdrec_write(&t.jw, jdrec_load(500, TI_PID, TI_PID, A + 0x80, tr_code, 0x80, 1, "f1"), &t.err);
    jdrec_write(&t.jw, jdrec_load(700, TI_PID, TI_PID, A + 0x80, tr_code, 0x40, 2, "f2"), &t.err);
    tr_perf(&t);
    ti_sample(&t.g, 400, A + 8);    /* f0: its page is settled */
    ti_sample(&t.g, 401, A + 0x10); /* f0 */
    ti_round(&t.g);
    ti_sample(&t.g, 600, A + 0x88); /* f1, beside f0 */
    ti_round(&t.g);
    ti_sample(&t.g, 800, A + 0x88); /* f2, over f1 */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(ngot, 4);
    if (ngot == 4) {
        JT_CHECK(strstr(got[0], "/some/dir/jitted-100-r0.so") == got[0]);
        JT_CHECK(strstr(got[2], "/some/dir/jitted-100-r0.so") == got[2]);
        JT_CHECK(strstr(got[3], "/some/dir/jitted-100-2.so") == got[3]);
    }
    JT_CHECK(tg_find(&t.io, "/some/dir/jitted-100-2.so") != NULL);
    JT_CHECK(tg_find(&t.io, "/some/dir/jitted-100-1.so") == NULL); /* f1 is in the run's file */
    tr_end(&t);
    /* A claim under //anon already sent (the second mmap's pieces leave it out): g's claim
       must unsettle h's page, so that a sample there before g loads takes it back. */
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_load(300, TI_PID, TI_PID, A, tr_code, 0x100, 0, "h"), &t.err);
    jdrec_write(&t.jw, jdrec_load(800, TI_PID, TI_PID, A + 0xf80, tr_code, 0x100, 1, "g"), &t.err);
    tr_perf(&t);
    ti_mmap(&t.g, 100, A, 0x1000, A, "//anon"); /* claims h; g's first half held */
    ti_sample(&t.g, 200, A + 0xf90);            /* the held piece goes out */
    ti_round(&t.g);
    ti_sample(&t.g, 400, A + 0x10);             /* h: its page is settled */
    ti_round(&t.g);
    ti_mmap(&t.g, 500, A, 0x2000, A, "//anon"); /* the same mapping, grown: claims g */
    ti_round(&t.g);
    ti_sample(&t.g, 600, A + 0xf90);            /* g not loaded: //anon, its claim taken back */
    ti_round(&t.g);
    ti_sample(&t.g, 900, A + 0xf90);            /* g */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(t.st.write.region_repairs, 2);
    JT_CHECK_EQ_U(ngot, 4);
    if (ngot == 4) {
        JT_CHECK(!strcmp(got[0], "//anon"));
        JT_CHECK(strstr(got[1], "/some/dir/jitted-100-r0.so") == got[1]);
        JT_CHECK(!strcmp(got[2], "//anon"));
        JT_CHECK(strstr(got[3], "/some/dir/jitted-100-r0.so") == got[3]);
    }
    tr_end(&t);
}

/* Code over code a sample resolved into gets a file of its own, as perf's layout gives it
   (jitanon__eo_region_alone), written only if a sample resolves into it too: f1 over the
   hit f0 is never sampled, f2 over the rest of f0 is. */
static void test_region_alone(void)
{
    enum { A = 0x200000 };
    static tr_rec t;
    char got[16][64];
    size_t ngot;
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_load(300, TI_PID, TI_PID, A, tr_code, 0x80, 0, "f0"), &t.err);
    jdrec_write(&t.jw, jdrec_load(500, TI_PID, TI_PID, A, tr_code, 0x40, 1, "f1"), &t.err);
    jdrec_write(&t.jw, jdrec_load(700, TI_PID, TI_PID, A + 0x40, tr_code, 0x40, 2, "f2"), &t.err);
    tr_perf(&t);
    ti_sample(&t.g, 400, A + 0x48); /* f0 */
    ti_round(&t.g);
    ti_sample(&t.g, 800, A + 0x48); /* f2 */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(ngot, 2);
    if (ngot == 2) {
        JT_CHECK(strstr(got[0], "/some/dir/jitted-100-r0.so") == got[0]);
        JT_CHECK(strstr(got[1], "/some/dir/jitted-100-2.so") == got[1]);
    }
    JT_CHECK(tg_find(&t.io, "/some/dir/jitted-100-2.so") != NULL);
    JT_CHECK(tg_find(&t.io, "/some/dir/jitted-100-1.so") == NULL);
    JT_CHECK(tg_find(&t.io, "/some/dir/jitted-100-r1.so") == NULL);
    tr_end(&t);
}

/* Files of their own are a budget a dump (JITANON__REGION_ALONE): past it, code over
   sampled code goes to the run's next file at the same B, as a runtime that recycles its
   code space would otherwise get a file per function. */
static void test_region_alone_budget(void)
{
    enum { A = 0x200000, N = JITANON__REGION_ALONE + 2 };
    static tr_rec t;
    static char got[2 * N + 8][64];
    char want[64];
    size_t nout, ngot;
    uint32_t k;
    tr_begin(&t);
    for (k = 0; k < N; k++)
        jdrec_write(&t.jw, jdrec_load(300 + k, TI_PID, TI_PID, A + k * 0x100, tr_code, 0x80, k, "f"), &t.err);
    for (k = 0; k < N; k++)
        jdrec_write(&t.jw, jdrec_load(2000 + k, TI_PID, TI_PID, A + k * 0x100, tr_code, 0x40, N + k, "g"), &t.err);
    tr_perf(&t);
    for (k = 0; k < N; k++) ti_sample(&t.g, 1000 + k, A + k * 0x100 + 8); /* f_k */
    ti_round(&t.g);
    for (k = 0; k < N; k++) ti_sample(&t.g, 3000 + k, A + k * 0x100 + 8); /* g_k */
    ti_round(&t.g);
    nout = tr_inject(&t);
    JT_CHECK(nout < 128);
    ngot = ti_replay(t.out, nout, got, 2 * N + 8);
    JT_CHECK_EQ_U(ngot, 2 * N);
    for (k = 0; k < N && ngot == 2 * N; k++) {
        JT_CHECK(strstr(got[k], "/some/dir/jitted-100-r0.so") == got[k]);
        if (k < JITANON__REGION_ALONE) sprintf(want, "/some/dir/jitted-100-%u.so", (unsigned)(N + k));
        else sprintf(want, "/some/dir/jitted-100-r1.so");
        JT_CHECK(strstr(got[N + k], want) == got[N + k]);
    }
    tr_end(&t);
}

/* A file of its own is named when its function is mapped, after the dump's other names:
   the load index's count of names stays (inexe, code inside node's mapping, got
   jitted-100-5.so when the dump was read; g, index 5 again, over the hit f0, must not take
   that name).  And code loaded into a hit function's unwinding tail, over none of its
   code, takes the place in the run's file: only code decides. */
static void test_region_alone_names(void)
{
    enum { A = 0x200000, B = 0x400100 };
    static tr_rec t;
    char got[16][64];
    size_t ngot;
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_load(300, TI_PID, TI_PID, A, tr_code, 0x80, 1, "f0"), &t.err);
    jdrec_write(&t.jw, jdrec_load(310, TI_PID, TI_PID, B, tr_code, 0x60, 5, "inexe"), &t.err);
    jdrec_write(&t.jw, jdrec_load(500, TI_PID, TI_PID, A, tr_code, 0x40, 5, "g"), &t.err);
    ti_gen_begin(&t.g, t.raw, 1, &t.perf, JITANON_PERF_FILE);
    ti_mmap(&t.g, 40, 0x400000, 0x10000, 0, "/usr/bin/node");
    ti_mmap(&t.g, 50, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_sample(&t.g, 400, A + 8); /* f0 */
    ti_sample(&t.g, 401, B + 8); /* inexe */
    ti_round(&t.g);
    ti_sample(&t.g, 600, A + 8); /* g */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(ngot, 3);
    if (ngot == 3) {
        JT_CHECK(strstr(got[1], "/some/dir/jitted-100-5.so") == got[1]);
        JT_CHECK(strstr(got[2], "/some/dir/jitted-100-5-1.so") == got[2]);
    }
    JT_CHECK(tg_find(&t.io, "/some/dir/jitted-100-5.so") != NULL && tg_find(&t.io, "/some/dir/jitted-100-5-1.so") != NULL);
    tr_end(&t);
    /* the tail */
    tr_begin(&t);
    jdrec_write(&t.jw, jdrec_unwind(299, tr_eh, 16, tr_eh, 16, 0x100), &t.err);
    jdrec_write(&t.jw, jdrec_load(300, TI_PID, TI_PID, A, tr_code, 0x80, 0, "f0"), &t.err); /* its tail to A + 0x190 */
    jdrec_write(&t.jw, jdrec_load(700, TI_PID, TI_PID, A + 0x100, tr_code, 0x80, 1, "g"), &t.err);
    tr_perf(&t);
    ti_sample(&t.g, 400, A + 8); /* f0 */
    ti_round(&t.g);
    ti_sample(&t.g, 800, A + 0x108); /* g */
    ti_round(&t.g);
    ngot = tr_replay(&t, got, 16);
    JT_CHECK_EQ_U(ngot, 2);
    if (ngot == 2) JT_CHECK(strstr(got[1], "/some/dir/jitted-100-r0.so") == got[1]);
    tr_end(&t);
}

#if JITANON__POSIX
/* Writes a dump's bytes to `path` (the default I/O reads it from there). */
static void rth_save(const char *path, const jitanon_membuf *dump)
{
    FILE *f = fopen(path, "wb");
    JT_CHECK(f != NULL);
    if (!f) return;
    fwrite(dump->data, 1, dump->size, f);
    fclose(f);
}

/* One run of test_region_threads into `dir`; `r0` gets the region file's bytes. */
static void rth_inject(tr_rec *t, const char *dir, uint32_t threads, uint32_t n, uint32_t over, jitanon_membuf *r0,
                       jitanon_membuf *out)
{
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_buildid_cache c;
    jitanon_error err;
    char path[256];
    uint32_t k;
    memset(&o, 0, sizeof o);
    memset(out, 0, sizeof *out);
    o.elf_layout = JITANON_ELF_PER_REGION;
    o.elf_dir = dir;
    o.elf_threads = threads;
    sprintf(path, "%s/cache", dir);
    JT_CHECK(jitanon_buildid_cache_open(&c, path, &err) == JITANON_OK);
    o.buildid_cache = &c;
    JT_CHECK(ti_run(&t->perf, &o, JITANON_PERF_FILE, out, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(st.elf.files, 1 + over);
    JT_CHECK_EQ_U(st.buildid.cached, 1 + over);
    JT_CHECK_EQ_U(st.fallbacks, 0);
    for (k = 0; k < over; k++) {
        sprintf(path, "%s/jitted-%u-%u.so", dir, (unsigned)TI_PID, (unsigned)(n + k));
        JT_CHECK(access(path, R_OK) == 0);
    }
    sprintf(path, "%s/jitted-%u-r0.so", dir, (unsigned)TI_PID);
    memset(r0, 0, sizeof *r0);
    ti_read_file(path, r0);
    JT_CHECK(r0->size > (size_t)n * 0x80);
    jitanon_buildid_cache_release(&c);
}

/* Region files with writer threads and the default I/O (tests/run.sh runs this under
   ThreadSanitizer): the files of their own (functions loaded over sampled code) are
   written by the threads while the calling thread streams the region file into the same
   directory and the same build-id cache, its LOADs read back by a worker (more than two
   chunks of them: jitanon__eo_ahead); the region file and the output (its build-id table
   too) are the ones no thread writes. */
static void test_region_threads(void)
{
    enum { A = 0x200000, N = 1100, OVER = 4 };
    static tr_rec t;
    char dir[] = "build/rth-XXXXXX", path[256], cmd[300];
    jitanon_membuf r0[2], out[2];
    uint32_t k, threads;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    tr_begin(&t);
    for (k = 0; k < N; k++) /* every 7th function comes later, above the others in the dump */
        jdrec_write(&t.jw, jdrec_load(300 + k, TI_PID, TI_PID, A + (k * 7 % N) * 0x100, tr_code, 0x80, k, "f"), &t.err);
    for (k = 0; k < OVER; k++) /* over the first ones, after a sample there */
        jdrec_write(&t.jw, jdrec_load(3000 + k, TI_PID, TI_PID, A + k * 0x700, tr_code, 0x40, N + k, "g"), &t.err);
    sprintf(path, "%s/jit-%u.dump", dir, (unsigned)TI_PID);
    rth_save(path, &t.io.base.dump);
    ti_gen_begin(&t.g, t.raw, 1, &t.perf, JITANON_PERF_FILE);
    ti_mmap(&t.g, 50, 0x7000, 0x1000, 0, path);
    for (k = 0; k < OVER; k++) ti_sample(&t.g, 2000 + k, A + k * 0x700 + 8);
    ti_round(&t.g);
    for (k = 0; k < OVER; k++) ti_sample(&t.g, 4000 + k, A + k * 0x700 + 8);
    ti_round(&t.g);
    ti_gen_end(&t.g);
    for (threads = 0; threads < 2; threads++) {
        sprintf(cmd, "rm -rf '%s'/jitted-* '%s'/cache", dir, dir);
        JT_CHECK(system(cmd) == 0);
        rth_inject(&t, dir, threads * 2, N, OVER, &r0[threads], &out[threads]);
    }
    JT_CHECK(r0[0].size == r0[1].size && !memcmp(r0[0].data, r0[1].data, r0[0].size));
    JT_CHECK(out[0].size == out[1].size && !memcmp(out[0].data, out[1].data, out[0].size));
    for (threads = 0; threads < 2; threads++) {
        jitanon_membuf_release(&r0[threads]);
        jitanon_membuf_release(&out[threads]);
    }
    tr_end(&t);
    sprintf(cmd, "rm -rf '%s'", dir);
    JT_CHECK(system(cmd) == 0);
}
#endif

#if JITANON__POSIX
static void rth_put(ti_gen *g, uint32_t type, uint32_t pid, uint64_t time, uint64_t addr, const char *name)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    if (type == JITANON_PERF_RECORD_MMAP2) {
        rec.mmap.pid = rec.mmap.tid = pid;
        rec.mmap.start = addr;
        rec.mmap.len = 0x1000;
        rec.mmap.prot = 7;
        rec.mmap.flags = 2;
        rec.mmap.filename.data = name;
        rec.mmap.filename.length = strlen(name);
    } else {
        rec.sample.ip = addr;
        rec.sid.pid = rec.sid.tid = pid;
        rec.sample.period = 1;
    }
    ti_put(g, &rec, type, JITANON_PERF_MISC_USER, time);
}

/* Two processes' dumps in one directory, with writer threads: the second dump's region
   file goes into the build-id cache while the first dump's files of their own may still
   be written (each dump holds its own copy of the directory's name: the cache must not be
   set up again under the writers; ThreadSanitizer runs this). */
static void test_region_threads_two_dumps(void)
{
    enum { A = 0x200000, N = 600, OVER = JITANON__REGION_ALONE };
    static tr_rec t;
    static jitanon_membuf d2;
    jitanon_jitdump_writer jw2;
    char dir[] = "build/rt2-XXXXXX", path[256], path2[256], cmd[300];
    jitanon_error err;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_buildid_cache c;
    jitanon_membuf out;
    uint32_t k;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    tr_begin(&t);
    memset(&d2, 0, sizeof d2);
    memset(&jw2, 0, sizeof jw2);
    jdrec_begin(&jw2, jdrec_sink(&d2), 62, 200, 1, 0, &err);
    for (k = 0; k < N; k++) {
        jdrec_write(&t.jw, jdrec_load(300 + k, TI_PID, TI_PID, A + k * 0x100, tr_code, 0x80, k, "f"), &t.err);
        jdrec_write(&jw2, jdrec_load(300 + k, 200, 200, A + k * 0x100, tr_code, 0x80, k, "h"), &err);
    }
    for (k = 0; k < OVER; k++)
        jdrec_write(&t.jw, jdrec_load(3000 + k, TI_PID, TI_PID, A + k * 0x100, tr_code, 0x40, N + k, "g"), &t.err);
    sprintf(path, "%s/jit-%u.dump", dir, (unsigned)TI_PID);
    sprintf(path2, "%s/jit-200.dump", dir);
    rth_save(path, &t.io.base.dump);
    rth_save(path2, &d2);
    ti_gen_begin(&t.g, t.raw, 1, &t.perf, JITANON_PERF_FILE);
    ti_mmap(&t.g, 50, 0x7000, 0x1000, 0, path);
    rth_put(&t.g, JITANON_PERF_RECORD_MMAP2, 200, 51, 0x7000, path2);
    for (k = 0; k < OVER; k++) ti_sample(&t.g, 2000 + k, A + k * 0x100 + 8);
    for (k = 0; k < 8; k++) rth_put(&t.g, JITANON_PERF_RECORD_SAMPLE, 200, 2100 + k, A + k * 0x100 + 8, NULL);
    ti_round(&t.g);
    for (k = 0; k < OVER; k++) ti_sample(&t.g, 4000 + k, A + k * 0x100 + 8);
    ti_round(&t.g);
    ti_gen_end(&t.g);
    memset(&o, 0, sizeof o);
    memset(&out, 0, sizeof out);
    o.elf_layout = JITANON_ELF_PER_REGION;
    o.elf_dir = dir;
    o.elf_threads = 2;
    sprintf(path, "%s/cache", dir);
    JT_CHECK(jitanon_buildid_cache_open(&c, path, &err) == JITANON_OK);
    o.buildid_cache = &c;
    JT_CHECK(ti_run(&t.perf, &o, JITANON_PERF_FILE, &out, &st, &err) == JITANON_OK);
    JT_CHECK_EQ_U(st.elf.files, 2 + OVER);
    JT_CHECK_EQ_U(st.buildid.cached, st.elf.files);
    jitanon_buildid_cache_release(&c);
    jitanon_membuf_release(&out);
    jitanon_membuf_release(&d2);
    tr_end(&t);
    sprintf(cmd, "rm -rf '%s'", dir);
    JT_CHECK(system(cmd) == 0);
}

/* The two tests below: a directory under build/ (0: none could be made, skipped), a dump
of n LOADs 0x100 apart from A in t (not on disk yet), its path, and a recording begun with
the marker naming it. */
static int rws_begin(tr_rec *t, char *dir, char *path, uint64_t a, uint32_t n)
{
    uint32_t k;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return 0;
    }
    tr_begin(t);
    for (k = 0; k < n; k++)
        jdrec_write(&t->jw, jdrec_load(300 + k, TI_PID, TI_PID, a + k * 0x100, tr_code, 0x80, k, "f"), &t->err);
    sprintf(path, "%s/jit-%u.dump", dir, (unsigned)TI_PID);
    ti_gen_begin(&t->g, t->raw, 1, &t->perf, JITANON_PERF_FILE);
    ti_mmap(&t->g, 50, 0x7000, 0x1000, 0, path);
    return 1;
}

static jitanon_result rws_load(void *user, const char *path, const jitanon_jitdump_opts *opts, jitanon_jitdump **out,
                               jitanon_error *err)
{
    (void)user;
    return jitanon_jitdump_load_file(path, opts, out, err);
}

static void rws_log(void *user, const char *msg)
{
    jitanon_membuf_write((jitanon_membuf *)user, msg, strlen(msg) + 1);
}

/* 1 when two logs say the same, up to each line's "(". */
static int rws_same_log(const jitanon_membuf *a, const jitanon_membuf *b)
{
    size_t i = 0, k = 0;
    while (i < a->size && k < b->size) {
        const char *x = (const char *)a->data + i, *y = (const char *)b->data + k;
        size_t nx = strcspn(x, "("), ny = strcspn(y, "(");
        if (nx != ny || memcmp(x, y, nx)) return 0;
        i += strlen(x) + 1;
        k += strlen(y) + 1;
    }
    return i == a->size && k == b->size;
}

/* One run of test_region_walk_summary: the dump streamed from its file (`loaded` 0:
   only its header read before the walk, which summarises it) or loaded whole first. */
static jitanon_result rws_inject(const jitanon_membuf *perf, const char *dir, int loaded, int strict,
                                 jitanon_membuf *out, jitanon_membuf *log, jitanon_membuf *r0, jitanon_inject_stats *st)
{
    jitanon_inject_opts o;
    jitanon_error err;
    jitanon_result res;
    char path[256];
    memset(&o, 0, sizeof o);
    memset(out, 0, sizeof *out);
    memset(log, 0, sizeof *log);
    memset(r0, 0, sizeof *r0);
    o.elf_layout = JITANON_ELF_PER_REGION;
    o.elf_dir = dir;
    o.jitdump.strict = strict;
    if (loaded) o.io.load_dump = rws_load;
    o.io.log = rws_log;
    o.io.user = log;
    res = ti_run(perf, &o, JITANON_PERF_FILE, out, st, &err);
    sprintf(path, "%s/jitted-%u-r0.so", dir, (unsigned)TI_PID);
    if (res == JITANON_OK && access(path, R_OK) == 0) ti_read_file(path, r0);
    sprintf(path, "rm -f '%s'/jitted-*", dir);
    JT_CHECK(system(path) == 0);
    return res;
}

/* File mode with region files reads a dump once: the walk that lays it out summarises it
   (jitanon__inj_peek).  Whatever the dump's tail - whole, a LOAD cut short, a damaged
   record, no LOAD at all (its marker then stays) - and with a header the marker mends
   (e_machine 0: the files say the host's), the output, the region file, the counters and
   what the log says are the ones of the dump loaded whole and checked first; strict fails
   both ways.  Without keeping the mended header across the walk's summary the region
   file said EM_NONE (checked). */
static void test_region_walk_summary(void)
{
    enum { A = 0x200000, N = 40 };
    static tr_rec t;
    static const uint8_t junk[24] = {0, 0, 0, 0, 200, 0, 0, 0}; /* a LOAD of 200 bytes, 24 of them there */
    static const uint8_t bad[16] = {1, 0, 0, 0, 8, 0, 0, 0};    /* a MOVE of 8 bytes: shorter than its header */
    char dir[] = "build/rws-XXXXXX", path[256], cmd[300];
    jitanon_membuf dump, d, out[2], log[2], r0[2];
    jitanon_inject_stats st[2];
    jitanon_error err;
    uint32_t k;
    int variant, strict;
    if (!rws_begin(&t, dir, path, A, N)) return;
    dump = t.io.base.dump;
    for (k = 0; k < N; k += 3) ti_sample(&t.g, 2000 + k, A + k * 0x100 + 8);
    ti_round(&t.g);
    ti_gen_end(&t.g);
    for (variant = 0; variant < 5; variant++) {
        memset(&d, 0, sizeof d);
        if (variant == 3) { /* the header and one record that is no LOAD */
            jitanon_jitdump_writer w;
            jdrec_begin(&w, jdrec_sink(&d), 62, TI_PID, 1, 0, &err);
            jdrec_write(&w, jdrec_make(JITANON_JITDUMP_CODE_CLOSE, 400), &err);
        } else if (variant == 4) { /* e_machine 0, as CPython 3.13.0 writes it */
            jitanon_jitdump_writer w;
            jdrec_begin(&w, jdrec_sink(&d), 0, TI_PID, 1, 0, &err);
            for (k = 0; k < N; k++)
                jdrec_write(&w, jdrec_load(300 + k, TI_PID, TI_PID, A + k * 0x100, tr_code, 0x80, k, "f"), &err);
        } else {
            jitanon_membuf_write(&d, dump.data, dump.size);
        }
        if (variant == 1) jitanon_membuf_write(&d, junk, sizeof junk);
        if (variant == 2) {
            jitanon_membuf_write(&d, bad, sizeof bad);
            jitanon_membuf_write(&d, junk, sizeof junk);
        }
        rth_save(path, &d);
        for (strict = 0; strict < 2; strict++) {
            jitanon_result res[2];
            int loaded;
            for (loaded = 0; loaded < 2; loaded++)
                res[loaded] = rws_inject(&t.perf, dir, loaded, strict, &out[loaded], &log[loaded], &r0[loaded], &st[loaded]);
            if (strict && (variant == 1 || variant == 2)) {
                JT_CHECK(res[0] != JITANON_OK && res[1] != JITANON_OK);
            } else {
                JT_CHECK(res[0] == JITANON_OK && res[1] == JITANON_OK);
                JT_CHECK(out[0].size == out[1].size && !memcmp(out[0].data, out[1].data, out[0].size));
                JT_CHECK(r0[0].size == r0[1].size && (!r0[0].size || !memcmp(r0[0].data, r0[1].data, r0[0].size)));
                JT_CHECK((r0[0].size != 0) == (variant != 3));
                JT_CHECK(variant != 4 || (r0[0].size > 20 && (uint32_t)(r0[0].data[18] | r0[0].data[19] << 8) ==
                                                               jitanon_jitdump_host_machine())); /* e_machine (LE) */
                /* (the message in parentheses is the reader's: a loaded dump's counts the missing bytes) */
                JT_CHECK(rws_same_log(&log[0], &log[1]));
                JT_CHECK(!memcmp(&st[0], &st[1], sizeof st[0]));
                JT_CHECK_EQ_U(st[0].dumps.damaged, variant == 1 || variant == 2);
                JT_CHECK_EQ_U(st[0].dumps.loaded, variant != 3);
                JT_CHECK_EQ_U(st[0].dumps.failed, variant == 3);
            }
            for (loaded = 0; loaded < 2; loaded++) {
                jitanon_membuf_release(&out[loaded]);
                jitanon_membuf_release(&log[loaded]);
                jitanon_membuf_release(&r0[loaded]);
            }
        }
        jitanon_membuf_release(&d);
    }
    tr_end(&t);
    sprintf(cmd, "rm -rf '%s'", dir);
    JT_CHECK(system(cmd) == 0);
}

/* jitanon_inject_file with writer threads reads its input ahead (jitanon__in_ahead: the
   perf.data, settled before each seek, and the dump the walk reads) and writes its output
   behind (jitanon__behind: a worker writes one 1 MiB buffer while the next fills): a
   recording of several MiB comes out byte for byte as without threads, in file mode (its
   header written last, by offset, after the worker's writes) and in pipe mode.  It fails
   without the last buffer's drain, or with the unread bytes lost when the buffers change
   places (both checked). */
static void test_region_read_ahead_written_behind(void)
{
    enum { A = 0x200000, N = 64, SAMPLES = 120000 };
    static tr_rec t;
    char dir[] = "build/rwb-XXXXXX", path[256], in[256], outp[256], cmd[300];
    jitanon_membuf got[2];
    jitanon_error err;
    uint32_t k;
    int mode, threads;
    if (!rws_begin(&t, dir, path, A, N)) return;
    rth_save(path, &t.io.base.dump);
    for (k = 0; k < SAMPLES; k++) {
        ti_sample(&t.g, 2000 + k, A + (k % N) * 0x100 + 8);
        if (k % 4096 == 4095) ti_round(&t.g);
    }
    ti_round(&t.g);
    ti_gen_end(&t.g);
    JT_CHECK(t.perf.size > 3 * ((size_t)1 << 20));
    sprintf(in, "%s/in.data", dir);
    rth_save(in, &t.perf);
    for (mode = JITANON_PERF_FILE; mode <= JITANON_PERF_PIPE; mode++) {
        for (threads = 0; threads < 2; threads++) {
            jitanon_inject_opts o;
            memset(&o, 0, sizeof o);
            o.elf_layout = JITANON_ELF_PER_REGION;
            o.elf_dir = dir;
            o.elf_threads = (uint32_t)threads * 2;
            sprintf(outp, "%s/out%d.data", dir, threads);
            JT_CHECK(jitanon_inject_file(in, outp, (jitanon_perf_mode)mode, &o, NULL, NULL, &err) == JITANON_OK);
            memset(&got[threads], 0, sizeof got[threads]);
            ti_read_file(outp, &got[threads]);
            sprintf(cmd, "rm -f '%s'/jitted-*", dir);
            JT_CHECK(system(cmd) == 0);
        }
        JT_CHECK(got[0].size > 3 * ((size_t)1 << 20));
        JT_CHECK(got[0].size == got[1].size && !memcmp(got[0].data, got[1].data, got[0].size));
        jitanon_membuf_release(&got[0]);
        jitanon_membuf_release(&got[1]);
    }
    tr_end(&t);
    sprintf(cmd, "rm -rf '%s'", dir);
    JT_CHECK(system(cmd) == 0);
}
#endif

static void suite_region(void)
{
    JT_RUN(test_region_layout_random);
    JT_RUN(test_region_file_offsets);
    JT_RUN(test_region_claims);
    JT_RUN(test_region_held_anon);
    JT_RUN(test_region_claim_tails);
    JT_RUN(test_region_held_edges);
    JT_RUN(test_region_settled_pages);
    JT_RUN(test_region_alone);
    JT_RUN(test_region_alone_budget);
    JT_RUN(test_region_alone_names);
#if JITANON__POSIX
    JT_RUN(test_region_threads);
    JT_RUN(test_region_threads_two_dumps);
    JT_RUN(test_region_walk_summary);
    JT_RUN(test_region_read_ahead_written_behind);
#endif
}
JT_SUITE(region)
#undef JT_SUITES
#define JT_SUITES jt_suites_region
