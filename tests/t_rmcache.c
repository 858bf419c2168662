/* The per-sample path (issue #23): the rangemap's lookup cache against the plain tree, the
   trimming engine's cached resolve against jitanon_trim_resolve. */

/* Random assigns and erases over a small span (so pieces are cut, merged and freed, and
   freed nodes come back for other ranges), interleaved with runs of lookups through the
   cache: every answer must be the tree's.  Some lookups repeat the last address, some hit
   pieces of 64 KiB or more, so all three layers of the cache answer. */
static void test_speed_rm_cache_random(void)
{
    uint64_t s = 0x5eed2301, base = 0x7f0000000000ull;
    jitanon_rangemap m, copy;
    int round, step, k, bad = 0;
    uint64_t hits_flat = 0;
    for (round = 0; round < 60 && !bad; round++) {
        jitanon_rangemap_init(&m, NULL);
        for (step = 0; step < 400 && !bad; step++) {
            uint64_t big = tm_rand(&s) % 8 == 0, off = (tm_rand(&s) % 4096) << (big ? 12 : 4);
            uint64_t len = big ? (1 + tm_rand(&s) % 64) << 12 : 1 + tm_rand(&s) % 2048, kind = tm_rand(&s) % 4;
            uint64_t last_addr = base;
            if (jitanon_rangemap_assign(&m, base + off, len, (uint32_t)kind, (uint64_t)step, NULL) != JITANON_OK)
                bad = 1;
            for (k = 0; k < 1 + (int)(tm_rand(&s) % 200) && !bad; k++) {
                uint64_t a = tm_rand(&s) % 3 == 0 ? last_addr : base + tm_rand(&s) % ((uint64_t)4096 << 12);
                uint32_t want = jitanon__rm_find(&m, a), got = jitanon__rm_find_fast(&m, a);
                if (want != got) bad = 2;
                last_addr = a + tm_rand(&s) % 64;
            }
        }
        hits_flat += m.flat_ != NULL;
        /* a copy answers the same through its own cache */
        jitanon_rangemap_init(&copy, NULL);
        if (!bad && jitanon_rangemap_copy(&copy, &m, NULL) != JITANON_OK) bad = 3;
        for (k = 0; k < 2000 && !bad; k++) {
            uint64_t a = base + tm_rand(&s) % ((uint64_t)4096 << 12);
            uint32_t want = jitanon__rm_find(&m, a), got = jitanon__rm_find_fast(&copy, a);
            if (want != got) bad = 4;
        }
        /* released and reused: nothing stale answers */
        jitanon_rangemap_release(&copy);
        if (!bad && jitanon_rangemap_assign(&copy, base, 4096, 1, 7, NULL) != JITANON_OK) bad = 5;
        if (!bad && (jitanon__rm_find_fast(&copy, base + 5000) != 0 || jitanon__rm_find_fast(&copy, base + 5) == 0))
            bad = 6;
        jitanon_rangemap_release(&copy);
        jitanon_rangemap_release(&m);
    }
    if (bad) fprintf(stderr, "  rm cache random: failure %d, round %d step %d\n", bad, round - 1, step - 1);
    JT_CHECK(!bad);
    JT_CHECK(hits_flat > 0); /* the sorted array was built and used */
}

/* The cached resolve agrees with jitanon_trim_resolve across loads, anon mmaps, forks,
   forgets and pid reuse (the process-table cache must follow every change). */
static void test_speed_trim_resolve_fast(void)
{
    uint64_t s = 0x5eed2302, t = 1000;
    jitanon_trim *tr = tt_new();
    int step, k, bad = 0;
    for (step = 0; step < 3000 && tr && !bad; step++) {
        uint32_t pid = 100 + (uint32_t)(tm_rand(&s) % 6);
        uint64_t op = tm_rand(&s) % 10, a = 0x10000 + (tm_rand(&s) % 512) * 64;
        jitanon_range r1, r2;
        t += 10;
        if (op < 4) {
            jitanon_trim_event e;
            memset(&e, 0, sizeof e);
            e.pid = pid;
            e.time = t;
            e.start = a;
            e.len = 64 + tm_rand(&s) % 512;
            e.kind = JITANON_TRIM_JIT;
            e.id = (uint64_t)step;
            if (jitanon_trim_load(tr, &e, NULL) != JITANON_OK) bad = 1;
        } else if (op < 6) {
            jitanon_trim_event e;
            const jitanon_trim_piece *p;
            size_t n;
            memset(&e, 0, sizeof e);
            e.pid = pid;
            e.time = t;
            e.start = 0x10000;
            e.len = 512 * 64;
            e.kind = op == 4 ? JITANON_TRIM_ANON : JITANON_TRIM_FILE;
            e.id = (uint64_t)step;
            if (jitanon_trim_mmap(tr, &e, &p, &n, NULL) != JITANON_OK) bad = 2;
        } else if (op == 6) {
            if (jitanon_trim_fork(tr, pid, 100 + (uint32_t)(tm_rand(&s) % 6), NULL) != JITANON_OK) bad = 3;
        } else if (op == 7 && tm_rand(&s) % 8 == 0) {
            jitanon_trim_forget(tr, pid);
        }
        for (k = 0; k < 20 && !bad; k++) {
            uint32_t q = k & 1 ? pid : 100 + (uint32_t)(tm_rand(&s) % 7);
            uint64_t b = 0x10000 + tm_rand(&s) % (512 * 64 + 256);
            jitanon_trim_kind k1 = jitanon_trim_resolve(tr, q, b, &r1), k2 = jitanon__trim_resolve_fast(tr, q, b, &r2);
            if (k1 != k2 || memcmp(&r1, &r2, sizeof r1)) bad = 4;
        }
    }
    if (bad) fprintf(stderr, "  trim resolve fast: failure %d at step %d\n", bad, step - 1);
    JT_CHECK(tr && !bad);
    jitanon_trim_destroy(tr);
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
    JT_CHECK(jitanon_perf_writer_finish(&g.w, &err) == JITANON_OK);
    jitanon_perf_writer_release(&g.w);
    attrs = jitanon__rd64(perf.data + 24, 0); /* the attrs section */
    jitanon__wr64(perf.data + attrs + 24, jitanon__rd64(perf.data + attrs + 24, 0) | extra, 0);
    jitanon__wr64(perf.data + attrs + 72, extra & JITANON_PERF_SAMPLE_BRANCH_STACK ? attr80 : 0, 0);
    jitanon__wr64(perf.data + attrs + 80, extra & JITANON_PERF_SAMPLE_BRANCH_STACK ? 0 : attr80, 0);
    memset(&o, 0, sizeof o);
    o.elf_layout = JITANON_ELF_PER_FUNCTION;
    o.elf_files = files;
    o.anon_mode = anon;
    o.late = JITANON_LATE_KEEP;
    o.io.load_dump = ti_load_dump;
    o.io.write_elf = sp_write_elf;
    o.io.user = &io;
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out, &st, &err) == JITANON_OK);
    if (strcmp(io.names, want)) fprintf(stderr, "  sampled files: \"%s\", want \"%s\"\n", io.names, want);
    JT_CHECK(strcmp(io.names, want) == 0);
    JT_CHECK_EQ_U(st.fallbacks, 0);
    jitanon_membuf_release(&perf);
    jitanon_membuf_release(&out);
    jitanon_membuf_release(&io.base.dump);
}

static void test_speed_sampled_words(void)
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
static void test_speed_sampled_arm64(void)
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

static void suite_speed(void)
{
    JT_RUN(test_speed_sampled_words);
    JT_RUN(test_speed_sampled_arm64);
    JT_RUN(test_speed_rm_cache_random);
    JT_RUN(test_speed_trim_resolve_fast);
}
JT_SUITE(speed)
#undef JT_SUITES
#define JT_SUITES jt_suites_speed
