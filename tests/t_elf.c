/* Tests for the ELF section: dumps are made with the jitdump writer, ELFs are emitted into
   a membuf, re-read with jitanon_test_elf_parse and checked against the layout invariants. */

#define ELFT_EM_X86_64 62u
#define ELFT_EM_PPC 20u
#define ELFT_MAX_FUNCS 8

/* -- A dump under construction and the functions read back from it. -- */

typedef struct elft_dump {
    jitanon_membuf buf;
    jitanon_jitdump_writer w;
    jitanon_jitdump *d;
    jitanon_elf_func fn[ELFT_MAX_FUNCS];
    size_t n;
} elft_dump;

static jitanon_sink elft_sink(jitanon_membuf *b)
{
    return jdrec_sink(b);
}

static void elft_begin(elft_dump *t, uint32_t mach, int big)
{
    memset(t, 0, sizeof *t);
    JT_CHECK(jdrec_begin(&t->w, elft_sink(&t->buf), mach, 42, 1, big, NULL) == JITANON_OK);
}

/* V8's layout: a CIE "zLR" (FDE pointers pcrel|sdata4), one FDE whose pc_begin points
   ALIGN8(code_size) back from the .eh_frame start, a terminator, then the 20-byte hdr. */
static size_t elft_v8_unwind(uint8_t *out, uint64_t code_size, int big)
{
    static const uint8_t cie[] = {0x14, 0, 0, 0, 0, 0, 0, 0, 3, 'z', 'L', 'R', 0, 1, 0x78, 16, 2, 0xff, 0x1b,
                                  0x0c, 7, 8, 0x90, 1, 0};
    uint8_t *fde = out + 24;
    uint32_t cie_size = 24, a8 = (uint32_t)((code_size + 7) & ~(uint64_t)7), eh_size;
    memcpy(out, cie, 24);
    jitanon__wr32(out, 20, big);
    jitanon__wr32(fde, 20, big);                      /* length */
    jitanon__wr32(fde + 4, cie_size + 4, big);        /* back to the CIE */
    jitanon__wr32(fde + 8, (uint64_t)-(int64_t)(a8 + cie_size + 8), big);
    jitanon__wr32(fde + 12, code_size, big);
    memset(fde + 16, 0, 8);                           /* aug length 0, nops */
    memset(fde + 24, 0, 4);                           /* terminator */
    eh_size = 24 + 24 + 4;
    out[eh_size] = 1;
    out[eh_size + 1] = 0x1b;
    out[eh_size + 2] = 0x03;
    out[eh_size + 3] = 0x3b;
    jitanon__wr32(out + eh_size + 4, (uint64_t)-(int64_t)(eh_size + 4), big);
    jitanon__wr32(out + eh_size + 8, 1, big);
    jitanon__wr32(out + eh_size + 12, (uint64_t)-(int64_t)(a8 + eh_size), big);
    jitanon__wr32(out + eh_size + 16, (uint64_t)-(int64_t)(eh_size - cie_size), big);
    return eh_size + 20;
}

/* Adds DEBUG_INFO (entries at code offsets offs[] + bias), UNWINDING_INFO when asked, then LOAD. */
static void elft_func(elft_dump *t, const char *name, uint64_t addr, const uint8_t *code, size_t size,
                      const uint64_t *offs, size_t nrows, uint64_t bias, int unwind)
{
    jitanon_jitdump_debug_entry e[8];
    size_t i;
    for (i = 0; i < nrows; i++) {
        e[i].addr = addr + offs[i] + bias;
        e[i].lineno = (int32_t)(10 + i * 7);
        e[i].discrim = (int32_t)i;
        e[i].file.data = i == 2 ? "other.js" : "main.js";
        e[i].file.length = strlen(e[i].file.data);
    }
    if (nrows) JT_CHECK(jitanon_jitdump_write_debug_info(&t->w, 2, addr, e, nrows, NULL) == JITANON_OK);
    if (unwind) {
        uint8_t u[128];
        size_t n = elft_v8_unwind(u, size, t->w.big_endian);
        JT_CHECK(jdrec_write(&t->w, jdrec_unwind(3, u, n - 20, u + n - 20, 20, n), NULL) == JITANON_OK);
    }
    JT_CHECK(jdrec_write(&t->w, jdrec_load(4, 42, 43, addr, code, size, t->n, name), NULL) == JITANON_OK);
    t->n++;
}

/* Loads the dump and pairs each LOAD with the records before it. */
static void elft_load(elft_dump *t, uint32_t pad1)
{
    const jitanon_jitdump_record *debug = NULL, *unwind = NULL;
    size_t i, k = 0;
    if (pad1) jitanon__wr32(t->buf.data + 16, pad1, t->w.big_endian);
    JT_CHECK(jitanon_jitdump_load_memory(t->buf.data, t->buf.size, NULL, &t->d, NULL) == JITANON_OK);
    JT_CHECK(t->d != NULL);
    if (!t->d) return;
    for (i = 0; i < t->d->record_count && k < ELFT_MAX_FUNCS; i++) {
        const jitanon_jitdump_record *r = &t->d->records[i];
        if (r->id == JITANON_JITDUMP_CODE_DEBUG_INFO) debug = r;
        if (r->id == JITANON_JITDUMP_CODE_UNWINDING_INFO) unwind = r;
        if (r->id != JITANON_JITDUMP_CODE_LOAD) continue;
        memset(&t->fn[k], 0, sizeof t->fn[k]);
        t->fn[k].name = r->load.name;
        t->fn[k].code_addr = r->load.code_addr;
        t->fn[k].code = r->load.code;
        t->fn[k].debug = debug;
        t->fn[k].unwind = unwind;
        debug = unwind = NULL;
        k++;
    }
    JT_CHECK_EQ_U(k, t->n);
}

static void elft_end(elft_dump *t)
{
    jitanon_jitdump_destroy(t->d);
    jitanon_membuf_release(&t->buf);
}

/* Emits functions [0, n) of a dump into one ELF; pgoffs[] receives each pgoff. */
static jitanon_result elft_emit(elft_dump *t, size_t n, const jitanon_elf_opts *o, jitanon_membuf *out,
                                uint64_t *pgoffs, jitanon_elf_info *info)
{
    jitanon_elf_builder b;
    jitanon_error err;
    size_t i;
    jitanon_result r = jitanon_elf_builder_init(&b, &t->d->header, o, &err);
    for (i = 0; r == JITANON_OK && i < n; i++) r = jitanon_elf_builder_add(&b, &t->fn[i], pgoffs ? &pgoffs[i] : NULL, &err);
    if (r == JITANON_OK) r = jitanon_elf_builder_finish(&b, elft_sink(out), info, &err);
    jitanon_elf_builder_release(&b);
    return r;
}

static const uint8_t elft_code_a[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                      0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x5d, 0xc3};
static const uint8_t elft_code_b[] = {0x31, 0xc0, 0xff, 0xc0, 0xc3, 0x90, 0x90, 0x90, 0x90, 0xcc, 0xc3};

/* A standard dump: three functions, the first with debug + unwind info, the second with
   unwind info, the third plain. */
static void elft_standard(elft_dump *t, uint32_t mach, int big, uint32_t pad1)
{
    static const uint64_t offs[] = {0, 4, 10, 18};
    uint64_t bias = pad1 == 0xDEADBEEFu ? 64 : 0;
    elft_begin(t, mach, big);
    elft_func(t, "js:alpha", 0x7f0000001000ull, elft_code_a, sizeof elft_code_a, offs, 4, bias, 1);
    elft_func(t, "js:beta", 0x7f0000002000ull, elft_code_b, sizeof elft_code_b, NULL, 0, 0, 1);
    elft_func(t, "js:gamma", 0x7f0000003000ull, elft_code_b, 5, NULL, 0, 0, 0);
    elft_load(t, pad1);
}

/* -- Invariant checks over a parsed file. -- */

static void elft_check_file(const jitanon_membuf *out, const elft_dump *t, size_t n, const uint64_t *pgoffs,
                            const jitanon_elf_info *info)
{
    jitanon_test_elf_file f;
    jitanon_test_elf_section text, symtab, s;
    jitanon_test_elf_segment load;
    jitanon_test_elf_symbol sym;
    uint32_t text_idx, i, loads = 0;
    size_t k;
    JT_CHECK(jitanon_test_elf_parse(&f, out->data, out->size, NULL) == JITANON_OK);
    JT_CHECK_EQ_U(f.type, 3);
    JT_CHECK_EQ_U(f.machine, info->machine);
    JT_CHECK_EQ_U(f.big_endian, info->big_endian);
    JT_CHECK_EQ_U(f.is64 ? 64 : 32, info->elf_class);
    JT_CHECK_EQ_U(out->size, info->file_size);
    JT_CHECK(f.build_id.size == 20 && memcmp(f.build_id.data, info->build_id, 20) == 0);
    text_idx = jitanon_test_elf_find_section(&f, ".text", &text);
    JT_CHECK_EQ_U(text_idx, 1);
    JT_CHECK_EQ_U(text.addr, text.offset);
    JT_CHECK_EQ_U(text.offset, info->text_offset);
    memset(&load, 0, sizeof load);
    for (i = 0; i < f.phnum; i++) {
        jitanon_test_elf_segment p;
        JT_CHECK(jitanon_test_elf_segment_at(&f, i, &p, NULL) == JITANON_OK);
        if (p.type == 1) loads++, load = p;
    }
    JT_CHECK_EQ_U(loads, 1);
    JT_CHECK(load.offset == load.vaddr && load.flags == 5 && load.offset <= text.offset);
    /* elfutils (hotspot) places the file by p_vaddr rounded down to p_align: must be 0 */
    JT_CHECK(load.align >= 0x1000 && (load.align & (load.align - 1)) == 0 && (load.vaddr & ~(load.align - 1)) == 0);
    JT_CHECK(load.offset + load.filesz >= text.offset + text.size && load.filesz == load.memsz);
    JT_CHECK(jitanon_test_elf_find_section(&f, ".symtab", &symtab) != 0);
    JT_CHECK_EQ_U(jitanon_test_elf_symbol_count(&f, &symtab), n + 1);
    JT_CHECK_EQ_U(symtab.info, n + 1);
    JT_CHECK(jitanon_test_elf_section_at(&f, symtab.link, &s, NULL) == JITANON_OK && s.type == 3);
    for (k = 0; k < n; k++) {
        const jitanon_elf_func *fn = &t->fn[k];
        JT_CHECK(jitanon_test_elf_symbol_at(&f, &symtab, k + 1, &sym, NULL) == JITANON_OK);
        JT_CHECK(sym.name.length == fn->name.length && memcmp(sym.name.data, fn->name.data, fn->name.length) == 0);
        JT_CHECK_EQ_U(sym.value, pgoffs[k]); /* st_value = file offset = address = pgoff */
        JT_CHECK_EQ_U(sym.size, fn->code.size);
        JT_CHECK_EQ_U(sym.info, 0x02);
        JT_CHECK_EQ_U(sym.shndx, text_idx);
        JT_CHECK(pgoffs[k] % 16 == 0 && pgoffs[k] >= text.offset && pgoffs[k] + fn->code.size <= text.offset + text.size);
        JT_CHECK(memcmp(out->data + pgoffs[k], fn->code.data, fn->code.size) == 0);
    }
}

/* -- A tiny .debug_line (DWARF 4) decoder: rows as (address, file name, line, column). -- */

typedef struct elft_row {
    uint64_t addr;
    jitanon_str file;
    uint32_t line, col;
    int end;
} elft_row;

static uint64_t elft_uleb(jitanon__cur *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *p;
    while ((p = jitanon__take(c, 1)) != NULL) {
        if (shift < 64) v |= (uint64_t)(*p & 0x7f) << shift;
        shift += 7;
        if (!(*p & 0x80)) break;
    }
    return v;
}

static int64_t elft_sleb(jitanon__cur *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *p = NULL;
    while ((p = jitanon__take(c, 1)) != NULL) {
        v |= (uint64_t)(*p & 0x7f) << shift;
        shift += 7;
        if (!(*p & 0x80)) break;
    }
    if (p && shift < 64 && (*p & 0x40)) v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* Decodes the first unit; returns the number of rows (end_sequence rows included). */
static size_t elft_lines(const jitanon_test_elf_file *f, elft_row *rows, size_t max)
{
    jitanon_test_elf_section s;
    jitanon__cur c, prog;
    jitanon_str files[16], name;
    uint8_t lens[32];
    size_t nfiles = 0, n = 0;
    int line_base, line_range, opbase, i;
    uint64_t addr = 0, file = 1, hlen;
    int64_t line = 1;
    uint64_t col = 0;
    if (!jitanon_test_elf_find_section(f, ".debug_line", &s)) return 0;
    c = jitanon__cur_make(s.data.data, s.data.size, 0, f->big_endian);
    if (c.left < 10) return 0;
    prog = jitanon__cur_make(c.p + 4, jitanon__rd32(c.p, f->big_endian), 4, f->big_endian);
    jitanon__take(&prog, 2);
    hlen = jitanon__get32(&prog);
    c = jitanon__cur_make(prog.p, (size_t)hlen, 0, f->big_endian);
    jitanon__take(&prog, (size_t)hlen);
    jitanon__take(&c, 3);
    line_base = (int8_t)*jitanon__take(&c, 1);
    line_range = *jitanon__take(&c, 1);
    opbase = *jitanon__take(&c, 1);
    memcpy(lens, jitanon__take(&c, (size_t)opbase - 1), (size_t)opbase - 1);
    while (jitanon__take_cstr(&c, &name) && name.length) {}
    while (jitanon__take_cstr(&c, &name) && name.length && nfiles < 16) {
        files[nfiles++] = name;
        elft_uleb(&c), elft_uleb(&c), elft_uleb(&c);
    }
    while (prog.left && n < max) {
        unsigned op = *jitanon__take(&prog, 1);
        int emit = 0, end = 0;
        if (op >= (unsigned)opbase) {
            unsigned adj = op - (unsigned)opbase;
            addr += adj / (unsigned)line_range;
            line += line_base + (int)(adj % (unsigned)line_range);
            emit = 1;
        } else if (op == 0) {
            uint64_t len = elft_uleb(&prog);
            const uint8_t *e = jitanon__take(&prog, (size_t)len);
            if (!e || !len) break;
            if (e[0] == 1) emit = end = 1;
            if (e[0] == 2) addr = len == 9 ? jitanon__rd64(e + 1, f->big_endian) : jitanon__rd32(e + 1, f->big_endian);
        } else if (op == 1) emit = 1;
        else if (op == 2) addr += elft_uleb(&prog);
        else if (op == 3) line += elft_sleb(&prog);
        else if (op == 4) file = elft_uleb(&prog);
        else if (op == 5) col = elft_uleb(&prog);
        else for (i = 0; i < lens[op - 1]; i++) elft_uleb(&prog);
        if (!emit) continue;
        rows[n].addr = addr;
        rows[n].file = file >= 1 && file <= nfiles ? files[file - 1] : files[0];
        rows[n].line = (uint32_t)line;
        rows[n].col = (uint32_t)col;
        rows[n++].end = end;
        if (end) addr = 0, file = 1, line = 1, col = 0;
    }
    return n;
}

static int elft_str_is(jitanon_str s, const char *z) { return s.length == strlen(z) && memcmp(s.data, z, s.length) == 0; }

/* -- Tests -- */

static void test_elf_sha1_vectors(void)
{
    static const struct {
        const char *in;
        const char *hex;
    } v[] = {{"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
             {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
             {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"}};
    size_t i, k;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        jitanon__sha1 s;
        uint8_t d[20];
        char hex[41];
        jitanon__sha1_init(&s);
        for (k = 0; v[i].in[k]; k++) jitanon__sha1_update(&s, v[i].in + k, 1); /* byte at a time */
        jitanon__sha1_final(&s, d);
        for (k = 0; k < 20; k++) sprintf(hex + 2 * k, "%02x", d[k]);
        JT_CHECK(strcmp(hex, v[i].hex) == 0);
    }
    {
        jitanon__sha1 s;
        uint8_t d[20], block[1000];
        memset(block, 'a', sizeof block);
        jitanon__sha1_init(&s);
        for (k = 0; k < 1000; k++) jitanon__sha1_update(&s, block, sizeof block);
        jitanon__sha1_final(&s, d);
        JT_CHECK(d[0] == 0x34 && d[1] == 0xaa && d[19] == 0x6f); /* 34aa973c...eb2bdb6f (a million 'a') */
    }
}

/* The x86 SHA-extension path (taken past 64 KiB when the CPU has it) against the portable
   rounds, over odd-sized pieces that leave partial blocks in between. */
static void test_elf_sha1_paths_agree(void)
{
    enum { N = 300000 };
    uint8_t *data = (uint8_t *)malloc(N), d1[20], d2[20];
    uint64_t x = 88172645463325252u;
    size_t i, off;
    int round;
    JT_CHECK(data != NULL);
    if (!data) return;
    for (i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (uint8_t)x;
    }
    for (round = 0; round < 4; round++) {
        jitanon__sha1 fast, plain;
        jitanon__sha1_init(&fast);
        jitanon__sha1_init(&plain);
        plain.hw = 1; /* portable rounds only */
        for (off = 0; off < N;) {
            size_t n = round == 0 ? 64 : round == 1 ? 4096 : 1 + (size_t)((x = x * 6364136223846793005u + 1) >> 52);
            if (n > N - off) n = N - off;
            jitanon__sha1_update(&fast, data + off, n);
            jitanon__sha1_update(&plain, data + off, n);
            off += n;
        }
#if JITANON__SHA_NI
        JT_CHECK(fast.hw == (jitanon__sha_ni_present() ? 2 : 1));
#endif
        jitanon__sha1_final(&fast, d1);
        jitanon__sha1_final(&plain, d2);
        JT_CHECK(!memcmp(d1, d2, 20));
    }
    free(data);
}

static void test_elf_per_function_invariants(void)
{
    elft_dump t;
    size_t k;
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    for (k = 0; t.d && k < t.n; k++) {
        jitanon_membuf out;
        jitanon_elf_info info;
        uint64_t pg = 0;
        memset(&out, 0, sizeof out);
        JT_CHECK(elft_emit(&t, 0, NULL, &out, NULL, &info) == JITANON_OK); /* empty file is fine too */
        jitanon_membuf_release(&out);
        {
            jitanon_elf_builder b;
            JT_CHECK(jitanon_elf_builder_init(&b, &t.d->header, NULL, NULL) == JITANON_OK);
            JT_CHECK(jitanon_elf_builder_add(&b, &t.fn[k], &pg, NULL) == JITANON_OK);
            JT_CHECK(jitanon_elf_builder_finish(&b, elft_sink(&out), &info, NULL) == JITANON_OK);
            jitanon_elf_builder_release(&b);
        }
        JT_CHECK_EQ_U(pg, 0xF0);
        JT_CHECK_EQ_U(info.machine, ELFT_EM_X86_64);
        JT_CHECK_EQ_U(info.elf_class, 64);
        /* the check needs this function at slot 0 */
        {
            elft_dump one = t;
            one.fn[0] = t.fn[k];
            elft_check_file(&out, &one, 1, &pg, &info);
        }
        jitanon_membuf_release(&out);
    }
    elft_end(&t);
}

static void test_elf_process_mode(void)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_info info;
    uint64_t pg[ELFT_MAX_FUNCS];
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    JT_CHECK(t.d && elft_emit(&t, t.n, NULL, &out, pg, &info) == JITANON_OK);
    if (t.d) {
        JT_CHECK(pg[0] < pg[1] && pg[1] < pg[2]);
        JT_CHECK_EQ_U(info.functions, 3);
        JT_CHECK_EQ_U(info.fdes, 2);
        elft_check_file(&out, &t, t.n, pg, &info);
    }
    jitanon_membuf_release(&out);
    elft_end(&t);
}

static void test_elf_deterministic_unique_build_ids(void)
{
    elft_dump t;
    jitanon_membuf a, b, c;
    jitanon_elf_info ia, ib, ic;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&c, 0, sizeof c);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (t.d) {
        JT_CHECK(elft_emit(&t, 3, NULL, &a, NULL, &ia) == JITANON_OK);
        JT_CHECK(elft_emit(&t, 3, NULL, &b, NULL, &ib) == JITANON_OK);
        JT_CHECK(a.size == b.size && memcmp(a.data, b.data, a.size) == 0);
        /* beta and gamma share code bytes (gamma is a prefix); beta with another name */
        t.fn[2] = t.fn[1];
        t.fn[2].name.data = "js:delta";
        t.fn[2].name.length = 8;
        jitanon_membuf_release(&a), jitanon_membuf_release(&b);
        JT_CHECK(jitanon_elf_write_function(elft_sink(&a), &t.d->header, &t.fn[1], NULL, &ia, NULL) == JITANON_OK);
        JT_CHECK(jitanon_elf_write_function(elft_sink(&b), &t.d->header, &t.fn[2], NULL, &ib, NULL) == JITANON_OK);
        t.fn[2].name = t.fn[1].name;
        t.fn[2].code_addr += 0x100;
        JT_CHECK(jitanon_elf_write_function(elft_sink(&c), &t.d->header, &t.fn[2], NULL, &ic, NULL) == JITANON_OK);
        JT_CHECK(memcmp(ia.build_id, ib.build_id, 20) != 0);
        JT_CHECK(memcmp(ia.build_id, ic.build_id, 20) != 0);
        JT_CHECK(memcmp(ib.build_id, ic.build_id, 20) != 0);
    }
    jitanon_membuf_release(&a), jitanon_membuf_release(&b), jitanon_membuf_release(&c);
    elft_end(&t);
}

/* Rows come out at text offset + code offset, with V8's +0x40 undone when detected. */
static void elft_check_lines(uint32_t pad1, uint32_t bias_opt, int expect_shift)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_elf_opts o;
    jitanon_test_elf_file f;
    elft_row rows[16];
    uint64_t pg[ELFT_MAX_FUNCS];
    static const uint64_t offs[] = {0, 4, 10, 18};
    size_t n, i;
    memset(&out, 0, sizeof out);
    memset(&o, 0, sizeof o);
    o.line_bias = bias_opt;
    elft_standard(&t, ELFT_EM_X86_64, 0, pad1);
    if (!t.d) return;
    JT_CHECK(elft_emit(&t, 1, &o, &out, pg, &info) == JITANON_OK);
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
    n = elft_lines(&f, rows, 16);
    if (!expect_shift) {
        JT_CHECK_EQ_U(n, 5);
        JT_CHECK_EQ_U(info.line_rows, 4);
        for (i = 0; i < 4 && i < n; i++) {
            JT_CHECK_EQ_U(rows[i].addr, pg[0] + offs[i]);
            JT_CHECK_EQ_U(rows[i].line, 10 + i * 7);
            JT_CHECK_EQ_U(rows[i].col, i);
            JT_CHECK(elft_str_is(rows[i].file, i == 2 ? "other.js" : "main.js"));
        }
        JT_CHECK(n == 5 && rows[4].end && rows[4].addr == pg[0] + sizeof elft_code_a);
    } else { /* bias not undone: every row lands 0x40 late, so all fall outside the code */
        JT_CHECK_EQ_U(info.line_rows, 0);
        JT_CHECK(info.notes & JITANON_ELF_NOTE_DEBUG_CLIPPED);
    }
    jitanon_membuf_release(&out);
    elft_end(&t);
}

static void test_elf_debug_lines(void)
{
    elft_check_lines(0, JITANON_ELF_LINE_BIAS_AUTO, 0);
    elft_check_lines(0xDEADBEEFu, JITANON_ELF_LINE_BIAS_AUTO, 0); /* detected and undone */
    elft_check_lines(0xDEADBEEFu, JITANON_ELF_LINE_BIAS_NONE, 1);
}

/* -- Line bias in each writer's convention. -- */

/* One function the way LLVM's PerfJITEventListener writes it: DEBUG_INFO with the code
   address, one entry per line-table row at row address + 0x40, the DWARF discriminator
   (0) and an absolute file name; then LOAD with vma 0 (LLVM leaves it zero). */
static void elft_llvm_func(elft_dump *t, const char *name, uint64_t addr, const uint8_t *code, size_t size,
                           const uint64_t *offs, size_t nrows, uint64_t bias)
{
    jitanon_jitdump_debug_entry e[8];
    jitanon_jitdump_record r;
    size_t i;
    for (i = 0; i < nrows; i++) {
        e[i].addr = addr + offs[i] + bias;
        e[i].lineno = (int32_t)(3 + i);
        e[i].discrim = 0;
        e[i].file.data = "/home/u/src/fib.jl";
        e[i].file.length = strlen(e[i].file.data);
    }
    if (nrows) JT_CHECK(jitanon_jitdump_write_debug_info(&t->w, 2, addr, e, nrows, NULL) == JITANON_OK);
    r = jdrec_load(4, 42, 43, addr, code, size, t->n, name);
    r.load.vma = 0;
    JT_CHECK(jdrec_write(&t->w, r, NULL) == JITANON_OK);
    t->n++;
}

static const uint8_t elft_code_big[200] = {0x55};
static const uint64_t elft_llvm_small[] = {0, 8, 30, 50}; /* a 55-byte function (julia_fib) */
static const uint64_t elft_llvm_large[] = {0, 20, 100, 190};

/* A function whose rows name no file (V8's eval'd code: script name "") beside one that
   does, in one file: an empty name would end DWARF 4's file table early, losing every
   later file for every reader (perf annotate's source lines, gdb, addr2line: "mangled
   line number section"); it is written "<unknown>". */
static void test_elf_debug_lines_empty_file(void)
{
    static const char *const names[2] = {"", "/b.js"};
    elft_dump t;
    jitanon_jitdump_debug_entry e[2];
    jitanon_elf_builder b;
    jitanon_membuf out;
    jitanon_test_elf_file f;
    elft_row rows[16];
    uint64_t pg[2];
    size_t i, k, nr, seen[2] = {0, 0};
    elft_begin(&t, ELFT_EM_X86_64, 0);
    for (k = 0; k < 2; k++) {
        uint64_t addr = 0x7f0000001000ull + k * 0x1000;
        for (i = 0; i < 2; i++) {
            e[i].addr = addr + i * 8;
            e[i].lineno = (int32_t)(3 + i);
            e[i].discrim = 0;
            e[i].file.data = names[k];
            e[i].file.length = strlen(names[k]);
        }
        JT_CHECK(jitanon_jitdump_write_debug_info(&t.w, 2, addr, e, 2, NULL) == JITANON_OK);
        JT_CHECK(jdrec_write(&t.w, jdrec_load(4, 42, 43, addr, elft_code_big, 55, t.n, k ? "b" : "a"), NULL) == JITANON_OK);
        t.n++;
    }
    elft_load(&t, 0);
    if (!t.d) return;
    memset(&out, 0, sizeof out);
    JT_CHECK(jitanon_elf_builder_init(&b, &t.d->header, NULL, NULL) == JITANON_OK);
    for (k = 0; k < 2; k++) JT_CHECK(jitanon_elf_builder_add(&b, &t.fn[k], &pg[k], NULL) == JITANON_OK);
    JT_CHECK(jitanon_elf_builder_finish(&b, elft_sink(&out), NULL, NULL) == JITANON_OK);
    jitanon_elf_builder_release(&b);
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
    nr = elft_lines(&f, rows, 16);
    for (i = 0; i < nr; i++)
        for (k = 0; k < 2; k++) {
            if (rows[i].end || rows[i].addr < pg[k] || rows[i].addr >= pg[k] + 55) continue;
            JT_CHECK(elft_str_is(rows[i].file, k ? "/b.js" : "<unknown>"));
            seen[k]++;
        }
    JT_CHECK_EQ_U(seen[0], 2);
    JT_CHECK_EQ_U(seen[1], 2);
    jitanon_membuf_release(&out);
    elft_end(&t);
}


/* An LLVM-convention dump (bias 0x40 or 0): the small function, then the large one. */
static void elft_llvm_dump(elft_dump *t, uint64_t bias)
{
    elft_begin(t, ELFT_EM_X86_64, 0);
    elft_llvm_func(t, "julia_fib_123", 0x7f0000001000ull, elft_code_big, 55, elft_llvm_small, 4, bias);
    elft_llvm_func(t, "julia_loop_456", 0x7f0000002000ull, elft_code_big, 200, elft_llvm_large, 4, bias);
    elft_load(t, 0);
}

static uint32_t elft_scan(const elft_dump *t)
{
    jitanon_elf_line_bias_scan s;
    size_t i;
    jitanon_elf_line_bias_scan_init(&s, &t->d->header);
    for (i = 0; i < t->d->record_count; i++) jitanon_elf_line_bias_scan_add(&s, &t->d->records[i]);
    return jitanon_elf_line_bias_scan_result(&s);
}

/* Functions [first, first + n) of t in one file with line_bias `bias`: every function's
   rows must start at its first instruction and keep every entry (expect_rows), or there
   are none; expect_note: the file says a bias was removed. */
static void elft_check_bias_rows(elft_dump *t, size_t first, size_t n, uint32_t bias, int expect_rows,
                                 unsigned expect_note)
{
    jitanon_elf_builder b;
    jitanon_elf_opts o;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_test_elf_file f;
    elft_row rows[32];
    uint64_t pg[ELFT_MAX_FUNCS];
    size_t i, k, nr, want = 0;
    memset(&o, 0, sizeof o);
    memset(&out, 0, sizeof out);
    o.line_bias = bias;
    JT_CHECK(jitanon_elf_builder_init(&b, &t->d->header, &o, NULL) == JITANON_OK);
    for (i = 0; i < n; i++) JT_CHECK(jitanon_elf_builder_add(&b, &t->fn[first + i], &pg[i], NULL) == JITANON_OK);
    JT_CHECK(jitanon_elf_builder_finish(&b, elft_sink(&out), &info, NULL) == JITANON_OK);
    jitanon_elf_builder_release(&b);
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
    nr = elft_lines(&f, rows, 32);
    for (i = 0; i < n; i++) {
        const uint64_t *offs = t->fn[first + i].code.size == 55 ? elft_llvm_small : elft_llvm_large;
        size_t seen = 0;
        for (k = 0; k < nr; k++) {
            if (rows[k].end || rows[k].addr < pg[i] || rows[k].addr >= pg[i] + t->fn[first + i].code.size) continue;
            JT_CHECK(seen < 4 && rows[k].addr == pg[i] + offs[seen] && rows[k].line == 3 + seen);
            JT_CHECK(elft_str_is(rows[k].file, "/home/u/src/fib.jl"));
            seen++;
        }
        JT_CHECK_EQ_U(seen, expect_rows ? 4 : 0);
        want += seen;
    }
    JT_CHECK_EQ_U(info.line_rows, want);
    JT_CHECK_EQ_U(!!(info.notes & JITANON_ELF_NOTE_LINE_BIAS), expect_note);
    jitanon_membuf_release(&out);
}

/* LLVM's +0x40 (Julia): detected from the data with no flag, per dump, per file of one
   function (the small one by its rows past the end, the large one by its first row at
   +0x40) and per process; every row kept. */
static void test_elf_line_bias_llvm(void)
{
    elft_dump t;
    elft_llvm_dump(&t, 0x40);
    if (!t.d) return;
    JT_CHECK_EQ_U(t.d->header.pad1, 0);
    JT_CHECK_EQ_U(elft_scan(&t), JITANON_ELF_LINE_BIAS_PERF);
    elft_check_bias_rows(&t, 0, 2, JITANON_ELF_LINE_BIAS_AUTO, 1, 1);
    elft_check_bias_rows(&t, 0, 1, JITANON_ELF_LINE_BIAS_AUTO, 1, 1);
    elft_check_bias_rows(&t, 1, 1, JITANON_ELF_LINE_BIAS_AUTO, 1, 1);
    elft_check_bias_rows(&t, 0, 2, 0x40, 1, 1);
    elft_check_bias_rows(&t, 0, 1, JITANON_ELF_LINE_BIAS_NONE, 0, 0); /* the bug: no line table */
    elft_end(&t);
    /* The same functions written unbiased: left alone. */
    elft_llvm_dump(&t, 0);
    if (!t.d) return;
    JT_CHECK_EQ_U(elft_scan(&t), JITANON_ELF_LINE_BIAS_NONE);
    elft_check_bias_rows(&t, 0, 2, JITANON_ELF_LINE_BIAS_AUTO, 1, 0);
    elft_check_bias_rows(&t, 0, 2, JITANON_ELF_LINE_BIAS_NONE, 1, 0);
    elft_end(&t);
}

/* V8's convention without its pad1 marker is found from the data too; with the marker
   and data that contradicts it (an entry in the first 0x40 bytes) the data wins. */
static void test_elf_line_bias_v8(void)
{
    elft_dump t;
    elft_standard(&t, ELFT_EM_X86_64, 0, 0xDEADBEEFu); /* V8's biased rows + marker */
    if (!t.d) return;
    JT_CHECK_EQ_U(elft_scan(&t), JITANON_ELF_LINE_BIAS_PERF);
    jitanon__wr32(t.buf.data + 16, 0, 0); /* the same data without the marker */
    jitanon_jitdump_destroy(t.d);
    t.d = NULL;
    JT_CHECK(jitanon_jitdump_load_memory(t.buf.data, t.buf.size, NULL, &t.d, NULL) == JITANON_OK);
    if (!t.d) return;
    JT_CHECK_EQ_U(t.d->header.pad1, 0);
    JT_CHECK_EQ_U(elft_scan(&t), JITANON_ELF_LINE_BIAS_PERF);
    elft_end(&t);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (!t.d) return;
    jitanon__wr32(t.buf.data + 16, 0xDEADBEEFu, 0); /* marker, unbiased rows */
    jitanon_jitdump_destroy(t.d);
    t.d = NULL;
    JT_CHECK(jitanon_jitdump_load_memory(t.buf.data, t.buf.size, NULL, &t.d, NULL) == JITANON_OK);
    if (!t.d) return;
    JT_CHECK_EQ_U(elft_scan(&t), JITANON_ELF_LINE_BIAS_NONE);
    elft_end(&t);
}

static uint64_t elft_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Property: auto-detection never shifts an unbiased dump (entries inside their function,
   in random places, some functions without any), except the one reading the data cannot
   tell from a biased dump: no entry in any function's first 0x40 bytes and most functions'
   first entry exactly 0x40 in.  Checked on the scan and on the files (AUTO gives the
   bytes NONE gives).  And the other way: the same dumps written biased, with a row at
   every function's first instruction (as LLVM and V8 write), are always detected. */
static void test_elf_line_bias_property(void)
{
    uint64_t seed = 0x1b1a5001, s = seed;
    int round, bad = 0;
    for (round = 0; round < 300 && !bad; round++) {
        int biased = round & 1;
        elft_dump t;
        uint64_t offs[ELFT_MAX_FUNCS][6], nf = 1 + elft_rand(&s) % 5, i, k, low = 0, at = 0, with = 0;
        size_t nrows[ELFT_MAX_FUNCS];
        elft_begin(&t, ELFT_EM_X86_64, 0);
        for (i = 0; i < nf; i++) {
            uint64_t size = 1 + elft_rand(&s) % 200, lo = UINT64_MAX;
            int far = elft_rand(&s) % 4 == 0; /* all entries at 0x40 or later */
            nrows[i] = (size_t)(elft_rand(&s) % 6);
            if (far && size <= 0x40) size += 0x40;
            for (k = 0; k < nrows[i]; k++) {
                offs[i][k] = far ? 0x40 + elft_rand(&s) % (size - 0x40) : elft_rand(&s) % size;
                if (biased && k == 0) offs[i][k] = 0;
                if (offs[i][k] < lo) lo = offs[i][k];
            }
            if (nrows[i]) {
                with++;
                low += lo < 0x40;
                at += lo == 0x40;
            }
            elft_llvm_func(&t, "f", 0x7f0000001000ull + i * 0x1000, elft_code_big, (size_t)size, offs[i], nrows[i],
                           biased ? 0x40 : 0);
        }
        elft_load(&t, 0);
        if (!t.d) return;
        if (biased) {
            if (with && elft_scan(&t) != JITANON_ELF_LINE_BIAS_PERF) bad = 1;
        } else if (elft_scan(&t) != JITANON_ELF_LINE_BIAS_NONE && (low || at * 2 <= with)) {
            bad = 2;
        } else if (elft_scan(&t) == JITANON_ELF_LINE_BIAS_NONE) {
            jitanon_membuf a, b;
            jitanon_elf_opts o;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            memset(&o, 0, sizeof o);
            JT_CHECK(elft_emit(&t, t.n, &o, &a, NULL, NULL) == JITANON_OK);
            o.line_bias = JITANON_ELF_LINE_BIAS_NONE;
            JT_CHECK(elft_emit(&t, t.n, &o, &b, NULL, NULL) == JITANON_OK);
            if (a.size != b.size || memcmp(a.data, b.data, a.size)) bad = 3;
            jitanon_membuf_release(&a);
            jitanon_membuf_release(&b);
        }
        elft_end(&t);
    }
    if (bad) fprintf(stderr, "  line bias property: failure %d, seed %llx round %d\n", bad, (unsigned long long)seed, round - 1);
    JT_CHECK(!bad);
}

/* BEAM puts the line in effect at entry before the function start and a line-0 row at
   its end: the first moves to the start, the second is dropped. */
static void test_elf_debug_lines_erlang(void)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_test_elf_file f;
    elft_row rows[16];
    jitanon_jitdump_debug_entry e[3];
    uint64_t pg[2], base = 0x7f0000001000ull;
    size_t n;
    memset(&out, 0, sizeof out);
    elft_begin(&t, ELFT_EM_X86_64, 0);
    e[0].addr = base - 0x32, e[0].lineno = 175;
    e[1].addr = base + 6, e[1].lineno = 182;
    e[2].addr = base + sizeof elft_code_a, e[2].lineno = 0;
    e[0].discrim = e[1].discrim = e[2].discrim = 0;
    e[0].file.data = e[1].file.data = e[2].file.data = "supervisor.erl";
    e[0].file.length = e[1].file.length = e[2].file.length = 14;
    JT_CHECK(jitanon_jitdump_write_debug_info(&t.w, 1, base, e, 3, NULL) == JITANON_OK);
    JT_CHECK(jdrec_write(&t.w, jdrec_load(2, 1, 1, base, elft_code_a, sizeof elft_code_a, 0, "global::apply"), NULL) == JITANON_OK);
    t.n = 1;
    elft_load(&t, 0);
    if (t.d) {
        JT_CHECK(elft_emit(&t, 1, NULL, &out, pg, &info) == JITANON_OK);
        JT_CHECK(info.notes & JITANON_ELF_NOTE_ERLANG);
        JT_CHECK(info.notes & JITANON_ELF_NOTE_DEBUG_CLIPPED);
        JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
        n = elft_lines(&f, rows, 16);
        JT_CHECK_EQ_U(n, 3);
        JT_CHECK(n == 3 && rows[0].addr == pg[0] && rows[0].line == 175 && rows[1].addr == pg[0] + 6 &&
                 rows[1].line == 182 && rows[2].end);
    }
    jitanon_membuf_release(&out);
    elft_end(&t);
}

/* Per function, V8's own .eh_frame and .eh_frame_hdr bytes must come out unchanged at
   ALIGN8(code end); in a per-process file every FDE must point at its function. */
static void test_elf_eh_frame(void)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_test_elf_file f;
    jitanon_test_elf_section eh, hdr;
    uint64_t pg[ELFT_MAX_FUNCS];
    size_t k;
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (!t.d) return;
    for (k = 0; k < 2; k++) {
        const jitanon_jitdump_record *u = t.fn[k].unwind;
        jitanon_membuf_release(&out);
        JT_CHECK(jitanon_elf_write_function(elft_sink(&out), &t.d->header, &t.fn[k], NULL, &info, NULL) == JITANON_OK);
        JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
        JT_CHECK(jitanon_test_elf_find_section(&f, ".eh_frame", &eh) && jitanon_test_elf_find_section(&f, ".eh_frame_hdr", &hdr));
        JT_CHECK_EQ_U(eh.offset, 0xF0 + ((t.fn[k].code.size + 7) & ~(uint64_t)7));
        JT_CHECK(eh.size == u->unwind.eh_frame.size && memcmp(eh.data.data, u->unwind.eh_frame.data, eh.size) == 0);
        JT_CHECK(hdr.size == 20 && memcmp(hdr.data.data, u->unwind.eh_frame_hdr.data, 20) == 0);
        JT_CHECK_EQ_U(hdr.offset, eh.offset + eh.size);
    }
    jitanon_membuf_release(&out);
    JT_CHECK(elft_emit(&t, 3, NULL, &out, pg, &info) == JITANON_OK);
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
    if (jitanon_test_elf_find_section(&f, ".eh_frame_hdr", &hdr) && hdr.size == 28) {
        for (k = 0; k < 2; k++) { /* table: (pc, fde) relative to the hdr */
            uint64_t pc = hdr.offset + (uint64_t)(int64_t)(int32_t)jitanon__rd32(hdr.data.data + 12 + 8 * k, 0);
            uint64_t fde = hdr.offset + (uint64_t)(int64_t)(int32_t)jitanon__rd32(hdr.data.data + 16 + 8 * k, 0);
            uint64_t field = fde + 8;
            uint64_t target = field + (uint64_t)(int64_t)(int32_t)jitanon__rd32(out.data + field, 0);
            JT_CHECK_EQ_U(pc, pg[k]);
            JT_CHECK_EQ_U(target, pg[k]);
        }
    } else {
        JT_CHECK(0);
    }
    jitanon_membuf_release(&out);
    elft_end(&t);
}

/* A 32-bit big-endian machine: class and byte order follow the dump. */
static void test_elf_big_endian_32(void)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_test_elf_file f;
    elft_row rows[16];
    uint64_t pg[ELFT_MAX_FUNCS];
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_PPC, 1, 0);
    if (!t.d) return;
    JT_CHECK(elft_emit(&t, t.n, NULL, &out, pg, &info) == JITANON_OK);
    JT_CHECK_EQ_U(info.elf_class, 32);
    JT_CHECK(info.big_endian);
    JT_CHECK_EQ_U(pg[0], 0xA0);
    elft_check_file(&out, &t, t.n, pg, &info);
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
    JT_CHECK_EQ_U(elft_lines(&f, rows, 16), 5);
    JT_CHECK(rows[1].addr == pg[0] + 4 && rows[1].line == 17);
    jitanon_membuf_release(&out);
    elft_end(&t);
}

static void test_elf_options(void)
{
    elft_dump t;
    jitanon_elf_builder b;
    jitanon_elf_opts o;
    jitanon_error err;
    jitanon_membuf out;
    jitanon_elf_info info;
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (!t.d) return;
    memset(&o, 0, sizeof o);
    o.begin_zero_ = 1;
    JT_CHECK(jitanon_elf_builder_init(&b, &t.d->header, &o, &err) == JITANON_ERR_BAD_OPTIONS);
    memset(&o, 0, sizeof o);
    o.elf_class = 48;
    JT_CHECK(jitanon_elf_builder_init(&b, &t.d->header, &o, &err) == JITANON_ERR_INVALID_ARGUMENT);
    memset(&o, 0, sizeof o);
    o.compress_debug = 1;
#ifdef JITANON_USE_ZLIB
    JT_CHECK(elft_emit(&t, 1, &o, &out, NULL, &info) == JITANON_OK);
    JT_CHECK(info.notes & JITANON_ELF_NOTE_DEBUG_COMPRESSED);
    {
        jitanon_test_elf_file f;
        jitanon_test_elf_section s;
        JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
        JT_CHECK(jitanon_test_elf_find_section(&f, ".debug_line", &s) && (s.flags & 0x800) && jitanon__rd32(s.data.data, 0) == 1);
    }
#else
    JT_CHECK(jitanon_elf_builder_init(&b, &t.d->header, &o, &err) == JITANON_ERR_FEATURE_DISABLED);
#endif
    jitanon_membuf_release(&out);
    memset(&o, 0, sizeof o);
    o.no_debug = o.no_unwind = 1;
    o.machine = 183;
    JT_CHECK(elft_emit(&t, 3, &o, &out, NULL, &info) == JITANON_OK);
    JT_CHECK(info.machine == 183 && info.line_rows == 0 && info.fdes == 0);
    jitanon_membuf_release(&out);
    {
        jitanon_elf_func bad = t.fn[0];
        bad.debug = t.fn[0].unwind;
        JT_CHECK(jitanon_elf_write_function(elft_sink(&out), &t.d->header, &bad, NULL, NULL, &err) == JITANON_ERR_INVALID_ARGUMENT);
    }
    out.max_size = 100; /* the sink fails part-way */
    JT_CHECK(jitanon_elf_write_function(elft_sink(&out), &t.d->header, &t.fn[0], NULL, NULL, &err) == JITANON_ERR_WRITE);
    jitanon_membuf_release(&out);
    elft_end(&t);
}

/* arm64 (and ppc64, LoongArch) kernels may run 64 KiB pages, and their linkers align
   loads so: the stub's PT_LOAD says 64 KiB there, 4 KiB on x86-64, and its text still
   rounds down to address 0 (where readers put offset 0). */
static void test_elf_load_align(void)
{
    static const struct { uint32_t machine; uint64_t align; } cases[] = {
        {183, 0x10000}, {21, 0x10000}, {258, 0x10000}, {62, 0x1000}, {243, 0x1000}};
    elft_dump t;
    jitanon_elf_opts o;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_test_elf_file f;
    jitanon_test_elf_segment seg;
    size_t k;
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (!t.d) return;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(&o, 0, sizeof o);
        o.machine = cases[k].machine;
        JT_CHECK(elft_emit(&t, 3, &o, &out, NULL, &info) == JITANON_OK);
        JT_CHECK_EQ_U(info.machine, cases[k].machine);
        JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
        JT_CHECK(jitanon_test_elf_segment_at(&f, 0, &seg, NULL) == JITANON_OK);
        JT_CHECK_EQ_U(seg.type, 1);
        JT_CHECK_EQ_U(seg.align, cases[k].align);
        JT_CHECK(seg.vaddr < seg.align && seg.offset % seg.align == seg.vaddr % seg.align);
        jitanon_membuf_release(&out);
    }
    elft_end(&t);
}

/* The UNWINDING_INFO Debian's arm64 node 18 wrote for a TurboFan function of 444 bytes
   (tests/oracle/arm64.sh): CIE "zLR" (code alignment 4, data -8, return address x30, CFA
   x29+0), one FDE, then .eh_frame_hdr.  Its stub keeps every register rule as V8 wrote it
   (the copy is machine-neutral: only pc_begin moves) and its FDE covers the function's
   .text. */
static void test_elf_v8_arm64_unwind(void)
{
    static const uint8_t v8[88] = {
        0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x7a, 0x4c, 0x52, 0x00, 0x04, 0x78, 0x1e, 0x02, 0xff,
        0x1b, 0x0c, 0x1d, 0x00, 0x08, 0x1e, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,
        0x1c, 0xfe, 0xff, 0xff, 0xbc, 0x01, 0x00, 0x00, 0x00, 0x49, 0x11, 0x1e, 0x7f, 0x9d, 0x00, 0x77, 0xde, 0x47,
        0x11, 0x1e, 0x7f, 0x9d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x1b, 0x03, 0x3b,
        0xb8, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 0xfc, 0xfd, 0xff, 0xff, 0xd8, 0xff, 0xff, 0xff};
    static uint8_t code[444];
    jitanon_jitdump_header h = jdrec_header(183, 77, 0, 0);
    jitanon_jitdump_record u = jdrec_unwind(1, v8, 68, v8 + 68, 20, 88);
    jitanon_elf_func fn;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_test_elf_file f;
    jitanon_test_elf_section eh, text;
    memset(&out, 0, sizeof out);
    memset(&fn, 0, sizeof fn);
    fn.name.data = "LazyCompile:*fib app.js:1";
    fn.name.length = strlen(fn.name.data);
    fn.code_addr = 0x7f3dfc050e00ull;
    fn.code.data = code;
    fn.code.size = sizeof code;
    fn.unwind = &u;
    JT_CHECK(jitanon_elf_write_function(elft_sink(&out), &h, &fn, NULL, &info, NULL) == JITANON_OK);
    JT_CHECK(info.machine == 183 && info.fdes == 1 && !(info.notes & JITANON_ELF_NOTE_UNWIND_DROPPED));
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
    if (jitanon_test_elf_find_section(&f, ".eh_frame", &eh) && jitanon_test_elf_find_section(&f, ".text", &text) &&
        eh.size >= 64) {
        int32_t pc = (int32_t)jitanon__rd32(eh.data.data + 0x24, 0);
        JT_CHECK(memcmp(eh.data.data, v8, 0x1c) == 0);               /* the CIE, byte for byte */
        JT_CHECK(memcmp(eh.data.data + 0x2c, v8 + 0x2c, 18) == 0);   /* the FDE's rules */
        JT_CHECK_EQ_U(eh.addr + 0x24 + (uint64_t)(int64_t)pc, text.addr); /* pc_begin: pc-relative */
        JT_CHECK_EQ_U(jitanon__rd32(eh.data.data + 0x28, 0), sizeof code); /* pc_range */
    } else {
        JT_CHECK(0);
    }
    jitanon_membuf_release(&out);
}

/* Unwinding info that cannot be rebased is left out, never half-copied. */
static void test_elf_bad_unwind_dropped(void)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_jitdump_record u;
    uint8_t eh[64];
    size_t i;
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (!t.d) return;
    u = *t.fn[0].unwind;
    for (i = 0; i < u.unwind.eh_frame.size && i < sizeof eh; i++) { /* every byte set to 0xff in turn */
        memcpy(eh, u.unwind.eh_frame.data, u.unwind.eh_frame.size);
        eh[i] = 0xff;
        u.unwind.eh_frame.data = eh;
        t.fn[0].unwind = &u;
        JT_CHECK(jitanon_elf_write_function(elft_sink(&out), &t.d->header, &t.fn[0], NULL, &info, NULL) == JITANON_OK);
        JT_CHECK(info.fdes <= 1);
        if (!info.fdes) JT_CHECK(info.notes & JITANON_ELF_NOTE_UNWIND_DROPPED);
        out.size = 0;
        u.unwind.eh_frame.data = t.d->records[1].unwind.eh_frame.data;
    }
    jitanon_membuf_release(&out);
    elft_end(&t);
}

/* Walks everything a parsed file offers; must never read out of bounds. */
static void elft_walk(const jitanon_test_elf_file *f)
{
    uint32_t i;
    uint64_t k;
    for (i = 0; i < f->phnum; i++) {
        jitanon_test_elf_segment p;
        JT_CHECK(jitanon_test_elf_segment_at(f, i, &p, NULL) == JITANON_OK);
    }
    for (i = 0; i < f->shnum; i++) {
        jitanon_test_elf_section s;
        if (jitanon_test_elf_section_at(f, i, &s, NULL) != JITANON_OK) continue;
        for (k = 0; k < jitanon_test_elf_symbol_count(f, &s); k++) {
            jitanon_test_elf_symbol sym;
            (void)jitanon_test_elf_symbol_at(f, &s, k, &sym, NULL);
        }
    }
    (void)jitanon_test_elf_find_section(f, ".debug_line", NULL);
}

static void test_elf_reader_truncate_and_patch(void)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_info info;
    jitanon_test_elf_file f;
    jitanon_error err;
    uint8_t *copy;
    size_t i, k;
    static const int delta[] = {1, -1, 0x100, 0x1ff}; /* +1, -1, set 0, set 0xff */
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (!t.d) return;
    JT_CHECK(elft_emit(&t, 3, NULL, &out, NULL, &info) == JITANON_OK);
    copy = (uint8_t *)malloc(out.size);
    for (i = 0; copy && i < out.size; i++) { /* every prefix, in an exact-size allocation */
        memcpy(copy, out.data, i);
        if (jitanon_test_elf_parse(&f, copy, i, &err) == JITANON_OK) elft_walk(&f);
        else JT_CHECK(err.type != JITANON_OK);
    }
    for (i = 0; copy && i < out.size; i++) {
        for (k = 0; k < 4; k++) {
            memcpy(copy, out.data, out.size);
            copy[i] = (uint8_t)(delta[k] == 0x100 ? 0 : delta[k] == 0x1ff ? 0xff : copy[i] + delta[k]);
            if (jitanon_test_elf_parse(&f, copy, out.size, &err) == JITANON_OK) elft_walk(&f);
        }
    }
    free(copy);
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, NULL) == JITANON_OK);
    jitanon_membuf_release(&out);
    elft_end(&t);
}

static void test_elf_alloc_failure_sweep(void)
{
    elft_dump t;
    jitanon_membuf out;
    jitanon_elf_opts o;
    jitanon_elf_info info;
    jt_alloc a;
    size_t n;
    jitanon_result r = JITANON_ERR_NOMEM;
    memset(&out, 0, sizeof out);
    elft_standard(&t, ELFT_EM_X86_64, 0, 0);
    if (!t.d) return;
    for (n = 0; n < 1000 && r != JITANON_OK; n++) {
        memset(&o, 0, sizeof o);
        o.allocator = jt_allocator(&a);
        a.fail_at = (long)n + 1;
        r = elft_emit(&t, 3, &o, &out, NULL, &info);
        JT_CHECK(r == JITANON_OK || r == JITANON_ERR_NOMEM);
        JT_CHECK_EQ_U(a.live_blocks, 0);
        jitanon_membuf_release(&out);
    }
    JT_CHECK(r == JITANON_OK);
    JT_CHECK(n > 5);
    elft_end(&t);
}

static void suite_elf(void)
{
    JT_RUN(test_elf_sha1_vectors);
    JT_RUN(test_elf_sha1_paths_agree);
    JT_RUN(test_elf_per_function_invariants);
    JT_RUN(test_elf_process_mode);
    JT_RUN(test_elf_deterministic_unique_build_ids);
    JT_RUN(test_elf_debug_lines);
    JT_RUN(test_elf_debug_lines_erlang);
    JT_RUN(test_elf_debug_lines_empty_file);
    JT_RUN(test_elf_line_bias_llvm);
    JT_RUN(test_elf_line_bias_v8);
    JT_RUN(test_elf_line_bias_property);
    JT_RUN(test_elf_eh_frame);
    JT_RUN(test_elf_big_endian_32);
    JT_RUN(test_elf_options);
    JT_RUN(test_elf_load_align);
    JT_RUN(test_elf_v8_arm64_unwind);
    JT_RUN(test_elf_bad_unwind_dropped);
    JT_RUN(test_elf_reader_truncate_and_patch);
    JT_RUN(test_elf_alloc_failure_sweep);
}
JT_SUITE(elf)
#undef JT_SUITES
#define JT_SUITES jt_suites_elf
