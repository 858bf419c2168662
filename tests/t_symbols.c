/* [symbols]: the ELF symbol reader and kallsyms as perf 6.1 names native frames.  The
   ELF files are written here by hand (sym_elf below: either class, either byte order)
   so every field a hostile file can set is ours to set. */

/* -- a small ELF writer: sections laid out one after the other, one PT_LOAD ---------------- */

typedef struct sym_sec_in {
    const char *name;
    uint32_t type, link;
    uint64_t addr, entsize, flags;
    const uint8_t *data;
    size_t size;
} sym_sec_in;

typedef struct sym_img {
    uint8_t b[16384];
    size_t n;
    int is64, big;
} sym_img;

static void si_put(sym_img *m, size_t at, uint64_t v, unsigned bytes)
{
    unsigned i;
    for (i = 0; i < bytes; i++) m->b[at + i] = (uint8_t)(v >> (8 * (m->big ? bytes - 1 - i : i)));
}

/* A symbol table entry in the image's class and byte order. */
static size_t si_sym(const sym_img *m, uint8_t *dst, uint32_t name, uint8_t info, uint8_t other, uint16_t shndx,
                     uint64_t value, uint64_t size)
{
    sym_img t;
    t.is64 = m->is64, t.big = m->big;
    memset(t.b, 0, 24);
    si_put(&t, 0, name, 4);
    if (m->is64) {
        t.b[4] = info, t.b[5] = other;
        si_put(&t, 6, shndx, 2), si_put(&t, 8, value, 8), si_put(&t, 16, size, 8);
    } else {
        si_put(&t, 4, value, 4), si_put(&t, 8, size, 4);
        t.b[12] = info, t.b[13] = other;
        si_put(&t, 14, shndx, 2);
    }
    memcpy(dst, t.b, m->is64 ? 24 : 16);
    return m->is64 ? 24 : 16;
}

/* type ET_EXEC or ET_DYN; one PT_LOAD: file offset 0 at address `base` (ET_DYN: 0), 64 KiB
   (more than the file: the test files' addresses say where code would be).  Sections from secs (index 1 on), then .shstrtab. */
static void si_build(sym_img *m, int is64, int big, uint16_t type, uint64_t base, const sym_sec_in *secs, size_t n)
{
    size_t eh = is64 ? 64 : 52, ph = is64 ? 56 : 32, sh = is64 ? 64 : 40, off, i, shoff, shstr_at;
    char shstr[512];
    size_t shlen = 1, names[32];
    memset(m, 0, sizeof *m);
    m->is64 = is64, m->big = big;
    shstr[0] = 0;
    for (i = 0; i < n; i++) {
        names[i] = shlen;
        memcpy(shstr + shlen, secs[i].name, strlen(secs[i].name) + 1);
        shlen += strlen(secs[i].name) + 1;
    }
    names[n] = shlen;
    memcpy(shstr + shlen, ".shstrtab", 10);
    shlen += 10;
    off = eh + ph;
    memcpy(m->b, "\177ELF", 4);
    m->b[4] = is64 ? 2 : 1, m->b[5] = big ? 2 : 1, m->b[6] = 1;
    si_put(m, 16, type, 2), si_put(m, 18, is64 ? 62 : 3, 2), si_put(m, 20, 1, 4);
    /* section contents */
    {
        size_t at[32];
        for (i = 0; i < n; i++) {
            off = (off + 7) & ~(size_t)7;
            at[i] = off;
            if (secs[i].data) memcpy(m->b + off, secs[i].data, secs[i].size);
            off += secs[i].size;
        }
        shstr_at = off;
        memcpy(m->b + off, shstr, shlen);
        off += shlen;
        off = (off + 7) & ~(size_t)7;
        shoff = off;
        for (i = 0; i <= n + 1; i++) {
            size_t s = shoff + i * sh;
            const sym_sec_in *x = i && i <= n ? &secs[i - 1] : NULL;
            if (!i) continue;
            si_put(m, s, names[i - 1], 4);
            si_put(m, s + 4, x ? x->type : 3, 4);
            if (is64) {
                si_put(m, s + 8, x ? x->flags : 0, 8);
                si_put(m, s + 16, x ? x->addr : 0, 8);
                si_put(m, s + 24, x ? at[i - 1] : shstr_at, 8);
                si_put(m, s + 32, x ? x->size : shlen, 8);
                si_put(m, s + 40, x ? x->link : 0, 4);
                si_put(m, s + 56, x ? x->entsize : 0, 8);
            } else {
                si_put(m, s + 8, x ? x->flags : 0, 4);
                si_put(m, s + 12, x ? x->addr : 0, 4);
                si_put(m, s + 16, x ? at[i - 1] : shstr_at, 4);
                si_put(m, s + 20, x ? x->size : shlen, 4);
                si_put(m, s + 24, x ? x->link : 0, 4);
                si_put(m, s + 36, x ? x->entsize : 0, 4);
            }
        }
        m->n = shoff + (n + 2) * sh;
    }
    if (is64) {
        si_put(m, 32, eh, 8), si_put(m, 40, shoff, 8);
        si_put(m, 52, eh, 2), si_put(m, 54, ph, 2), si_put(m, 56, 1, 2), si_put(m, 58, sh, 2);
        si_put(m, 60, n + 2, 2), si_put(m, 62, n + 1, 2);
        si_put(m, eh, 1, 4), si_put(m, eh + 4, 5, 4);
        si_put(m, eh + 8, 0, 8), si_put(m, eh + 16, base, 8), si_put(m, eh + 24, base, 8);
        si_put(m, eh + 32, 0x10000, 8), si_put(m, eh + 40, 0x10000, 8), si_put(m, eh + 48, 4096, 8);
    } else {
        si_put(m, 28, eh, 4), si_put(m, 32, shoff, 4);
        si_put(m, 40, eh, 2), si_put(m, 42, ph, 2), si_put(m, 44, 1, 2), si_put(m, 46, sh, 2);
        si_put(m, 48, n + 2, 2), si_put(m, 50, n + 1, 2);
        si_put(m, eh, 1, 4), si_put(m, eh + 4, 0, 4), si_put(m, eh + 8, base, 4), si_put(m, eh + 12, base, 4);
        si_put(m, eh + 16, 0x10000, 4), si_put(m, eh + 20, 0x10000, 4), si_put(m, eh + 24, 5, 4), si_put(m, eh + 28, 4096, 4);
    }
}

/* The file of most tests: .text at base+0x1000 (section 1), .data (2), .plt (3) at
   base+0x5000 with two slots after its head, .rela.plt (4) against .dynsym (5, strings
   6), .symtab (7, strings 8), .note.gnu.build-id (9). */
static void si_sample_ex(sym_img *m, int is64, int big, uint16_t type, uint64_t base, const char *link, uint8_t bid0)
{
    static const char strs[] = "\0a\0b\0c\0w_weak\0g_glob\0__x\0x\0same1\0same2\0lbl\0dlbl\0obj\0zero\0und\0hid\0last\0outer\0in1";
    static const char dstr[] = "\0memcpy\0free";
    /* offsets of the names in strs */
    enum { A = 1, B = 3, C = 5, W = 7, G = 14, UX = 21, X = 25, S1 = 27, S2 = 33, L = 39, DL = 43, O = 48, Z = 52,
           U = 57, H = 61, LAST = 65, OUT = 70, IN1 = 76 };
    uint8_t sym[24 * 24], dyn[24 * 3], rela[24 * 2], note[36], dl[64];
    size_t ns = 0, nd = 0, es = is64 ? 24 : 16, k;
    sym_sec_in s[10];
    sym_img tmp;
    const uint64_t t = base + 0x1000;
    memset(s, 0, sizeof s);
    m->is64 = is64, m->big = big; /* (si_sym writes in the image's class and order) */
    tmp.is64 = is64, tmp.big = big;
    ns += si_sym(m, sym + ns, 0, 0, 0, 0, 0, 0);
    ns += si_sym(m, sym + ns, A, 0x12, 0, 1, t + 0x00, 0x10);   /* a: global func */
    ns += si_sym(m, sym + ns, B, 0x12, 0, 1, t + 0x10, 0);      /* b: size 0, up to c */
    ns += si_sym(m, sym + ns, C, 0x12, 0, 1, t + 0x40, 0x20);   /* c */
    ns += si_sym(m, sym + ns, W, 0x22, 0, 1, t + 0x80, 0x10);   /* weak ... */
    ns += si_sym(m, sym + ns, G, 0x12, 0, 1, t + 0x80, 0x10);   /* ... loses to global */
    ns += si_sym(m, sym + ns, UX, 0x02, 0, 1, t + 0xa0, 0x10);  /* __x local ... */
    ns += si_sym(m, sym + ns, X, 0x02, 0, 1, t + 0xa0, 0x10);   /* ... x: fewer underscores */
    ns += si_sym(m, sym + ns, S1, 0x12, 0, 1, t + 0xc0, 0x10);  /* same in all: the first */
    ns += si_sym(m, sym + ns, S2, 0x12, 0, 1, t + 0xc0, 0x10);
    ns += si_sym(m, sym + ns, L, 0x10, 0, 1, t + 0xe0, 0);      /* a label in .text */
    ns += si_sym(m, sym + ns, DL, 0x10, 0, 2, t + 0xf0, 0);     /* a label in .data: not taken */
    ns += si_sym(m, sym + ns, O, 0x11, 0, 2, base + 0x3000, 8); /* an object */
    ns += si_sym(m, sym + ns, Z, 0x12, 0, 1, t + 0x100, 0);     /* zero-size before a sized alias */
    ns += si_sym(m, sym + ns, A, 0x12, 0, 1, t + 0x100, 0x8);   /* (named "a" too: sized wins) */
    ns += si_sym(m, sym + ns, U, 0x12, 0, 0, t + 0x180, 0x8);   /* undefined: not taken */
    ns += si_sym(m, sym + ns, H, 0x20 | 0, 2 /* hidden */, 1, t + 0x180, 0); /* hidden label: not taken */
    ns += si_sym(m, sym + ns, LAST, 0x12, 0, 1, t + 0x200, 0);  /* the last, size 0 */
    ns += si_sym(m, sym + ns, OUT, 0x12, 0, 1, t + 0x140, 0x30); /* a function ... */
    ns += si_sym(m, sym + ns, IN1, 0x10, 0, 1, t + 0x150, 0);    /* ... with a label inside, to "last" */
    nd += si_sym(m, dyn + nd, 0, 0, 0, 0, 0, 0);
    nd += si_sym(m, dyn + nd, 1, 0x12, 0, 0, 0, 0); /* memcpy */
    nd += si_sym(m, dyn + nd, 8, 0x12, 0, 0, 0, 0); /* free */
    for (k = 0; k < 2; k++) { /* R_X86_64_JUMP_SLOT (7) for dynsym k + 1 */
        if (is64) {
            si_put(&tmp, 0, base + 0x4000 + 8 * k, 8), si_put(&tmp, 8, (uint64_t)(k + 1) << 32 | 7, 8), si_put(&tmp, 16, 0, 8);
            memcpy(rela + 24 * k, tmp.b, 24);
        } else {
            si_put(&tmp, 0, base + 0x4000 + 4 * k, 4), si_put(&tmp, 4, (uint32_t)(k + 1) << 8 | 7, 4), si_put(&tmp, 8, 0, 4);
            memcpy(rela + 12 * k, tmp.b, 12);
        }
    }
    si_put(&tmp, 0, 4, 4), si_put(&tmp, 4, 20, 4), si_put(&tmp, 8, 3, 4);
    memcpy(note, tmp.b, 12);
    memcpy(note + 12, "GNU", 4);
    for (k = 0; k < 20; k++) note[16 + k] = (uint8_t)(bid0 + k);
    s[0].name = ".text", s[0].type = 1, s[0].addr = t, s[0].flags = 6, s[0].size = 0x300;
    s[1].name = ".data", s[1].type = 1, s[1].addr = base + 0x3000, s[1].flags = 3, s[1].size = 0x10;
    s[2].name = ".plt", s[2].type = 1, s[2].addr = base + 0x5000, s[2].flags = 6, s[2].size = 48, s[2].entsize = 16;
    s[3].name = ".rela.plt", s[3].type = 4, s[3].link = 5, s[3].data = rela, s[3].size = (is64 ? 24u : 12u) * 2,
    s[3].entsize = is64 ? 24 : 12;
    s[4].name = ".dynsym", s[4].type = 11, s[4].link = 6, s[4].data = dyn, s[4].size = nd, s[4].entsize = es;
    s[5].name = ".dynstr", s[5].type = 3, s[5].data = (const uint8_t *)dstr, s[5].size = sizeof dstr;
    s[6].name = ".symtab", s[6].type = 2, s[6].link = 8, s[6].data = sym, s[6].size = ns, s[6].entsize = es;
    s[7].name = ".strtab", s[7].type = 3, s[7].data = (const uint8_t *)strs, s[7].size = sizeof strs;
    s[8].name = ".note.gnu.build-id", s[8].type = 7, s[8].data = note, s[8].size = sizeof note;
    if (link) { /* .gnu_debuglink: the name, padded to 4, a CRC (not checked, as perf 6.1) */
        memset(dl, 0, sizeof dl);
        memcpy(dl, link, strlen(link));
        s[9].name = ".gnu_debuglink", s[9].type = 1, s[9].data = dl, s[9].size = (strlen(link) + 4) / 4 * 4 + 4;
    }
    si_build(m, is64, big, type, base, s, link ? 10 : 9);
}

static void si_sample(sym_img *m, int is64, int big, uint16_t type, uint64_t base)
{
    si_sample_ex(m, is64, big, type, base, NULL, 0xa0);
}

/* Renames a section (same length) in the image's .shstrtab: ".symtab" -> ".xymtab" hides
   the table from a reader that looks it up by name, as perf does. */
static void si_rename(sym_img *m, const char *from, const char *to)
{
    size_t i, n = strlen(from);
    for (i = 0; i + n + 1 <= m->n; i++)
        if (m->b[i] == '.' && !memcmp(m->b + i, from, n + 1) && m->b[i - 1] == 0) {
            memcpy(m->b + i, to, n);
            return;
        }
}

typedef struct sym_loaded {
    jitanon__sym_file f;
    jitanon__sym_table t;
    jitanon__sym_mem mem;
    jitanon_result open, build;
    jitanon_error err;
} sym_loaded;

static void sym_load(sym_loaded *l, const uint8_t *p, size_t n)
{
    memset(l, 0, sizeof *l);
    l->mem.p = p, l->mem.n = n;
    l->open = jitanon__sym_open(NULL, jitanon__sym_mem_read, &l->mem, &l->f, &l->err);
    l->build = l->open == JITANON_OK ? jitanon__sym_build(NULL, &l->t, &l->f, &l->f, &l->err) : l->open;
}

static void sym_unload(sym_loaded *l)
{
    jitanon__sym_table_free(NULL, &l->t);
    jitanon__sym_file_free(NULL, &l->f);
}

/* The name perf prints at file offset `off` ("" for [unknown]). */
static const char *sym_at(sym_loaded *l, uint64_t off)
{
    static char out[256];
    jitanon__sym_ent *e = jitanon__sym_find(NULL, &l->t, jitanon__sym_addr_of(&l->t, off));
    jitanon_str s;
    if (!e) return "";
    s = jitanon__sym_name(NULL, &l->t, e);
    jitanon__fmt(out, sizeof out, "%s", s.data);
    out[s.length < sizeof out ? s.length : sizeof out - 1] = 0;
    return out;
}

static void test_symbols_choice(void)
{
    int v;
    for (v = 0; v < 8; v++) {
        int is64 = v & 1, big = (v >> 1) & 1, exec = (v >> 2) & 1;
        /* ET_EXEC at 0x400000 (offset 0 is address 0x400000), ET_DYN at 0 */
        uint64_t base = exec ? 0x400000 : 0;
        sym_img *m = (sym_img *)calloc(1, sizeof *m);
        sym_loaded l;
        if (!m) return;
        si_sample(m, is64, big, exec ? 2 : 3, base);
        sym_load(&l, m->b, m->n);
        JT_CHECK_EQ_U(l.build, JITANON_OK);
        JT_CHECK_EQ_U(l.f.build_id_size, 20);
        JT_CHECK_EQ_U(l.f.build_id[0], 0xa0);
        JT_CHECK(!strcmp(sym_at(&l, 0x1000), "a") && !strcmp(sym_at(&l, 0x100f), "a"));
        /* b has size 0: it runs to c */
        JT_CHECK(!strcmp(sym_at(&l, 0x1010), "b") && !strcmp(sym_at(&l, 0x103f), "b"));
        JT_CHECK(!strcmp(sym_at(&l, 0x1040), "c") && !strcmp(sym_at(&l, 0x105f), "c"));
        JT_CHECK(!strcmp(sym_at(&l, 0x1060), "")); /* between c's end and the next */
        JT_CHECK(!strcmp(sym_at(&l, 0x1080), "g_glob")); /* global over weak */
        JT_CHECK(!strcmp(sym_at(&l, 0x10a0), "x"));      /* fewer leading underscores */
        JT_CHECK(!strcmp(sym_at(&l, 0x10c0), "same1"));  /* a tie: the first */
        JT_CHECK(!strcmp(sym_at(&l, 0x10e0), "lbl") && !strcmp(sym_at(&l, 0x10ff), "lbl")); /* label, to the next */
        JT_CHECK(!strcmp(sym_at(&l, 0x1100), "a"));      /* the sized alias over the size-0 one */
        JT_CHECK(!strcmp(sym_at(&l, 0x1148), "outer"));
        /* where both hold the address, perf's tree decides (its shape: the oracle checks
           it against perf on a label inside a function, tests/oracle/script.sh) */
        JT_CHECK(!strcmp(sym_at(&l, 0x1160), "in1") || !strcmp(sym_at(&l, 0x1160), "outer"));
        JT_CHECK(!strcmp(sym_at(&l, 0x1180), "in1"));     /* undefined and hidden labels are no symbols */
        /* the last symbol (size 0): to the end of the page after its own */
        JT_CHECK(!strcmp(sym_at(&l, 0x1200), "last") && !strcmp(sym_at(&l, 0x2fff), "last"));
        if (jt.cur_failed) fprintf(stderr, "  variant is64 %d big %d exec %d\n", is64, big, exec);
        sym_unload(&l);
        free(m);
    }
}

static void test_symbols_plt(void)
{
    int v;
    for (v = 0; v < 4; v++) {
        int is64 = v & 1, big = v >> 1;
        sym_img *m = (sym_img *)calloc(1, sizeof *m);
        sym_loaded l;
        size_t i;
        if (!m) return;
        si_sample(m, is64, big, 3, 0);
        sym_load(&l, m->b, m->n);
        JT_CHECK_EQ_U(l.build, JITANON_OK);
        /* the slots after the PLT's head, in .rela.plt's order; the head itself no slot */
        for (i = 0; i < l.t.n; i++)
            if (l.t.ents[i].flags & JITANON__SYM_PLT) JT_CHECK(l.t.ents[i].start >= 0x5010);
        JT_CHECK(!strcmp(sym_at(&l, 0x5010), "memcpy@plt"));
        JT_CHECK(!strcmp(sym_at(&l, 0x501f), "memcpy@plt"));
        JT_CHECK(!strcmp(sym_at(&l, 0x5020), "free@plt"));
        JT_CHECK(!strcmp(sym_at(&l, 0x5000), "")); /* the PLT's head */
        if (jt.cur_failed) fprintf(stderr, "  variant is64 %d big %d\n", is64, big);
        sym_unload(&l);
        free(m);
    }
}

/* A demangler for the test: "_Z" names as "dm:" + the rest, the answer's length always. */
static size_t sym_test_demangle(void *user, const char *name, char *out, size_t cap)
{
    size_t n;
    (*(int *)user)++;
    if (name[0] != '_' || name[1] != 'Z') return 0;
    n = strlen(name) - 2 + 3 + 600; /* long: the library asks again with room for it */
    if (n < cap) {
        memcpy(out, "dm:", 3);
        memcpy(out + 3, name + 2, strlen(name) - 2);
        memset(out + 3 + strlen(name) - 2, '.', 600);
        out[n] = 0;
    }
    return n;
}

/* A 64-bit ET_EXEC of .text at 0x1000 (text_size bytes), its .symtab (the ns bytes of
   sym, as si_sym made them) and .strtab (strs, nstrs bytes). */
static void si_text_syms(sym_img *m, uint64_t text_size, const uint8_t *sym, size_t ns, const char *strs, size_t nstrs)
{
    sym_sec_in s[3];
    memset(s, 0, sizeof s);
    s[0].name = ".text", s[0].type = 1, s[0].addr = 0x1000, s[0].size = text_size, s[0].flags = 6;
    s[1].name = ".symtab", s[1].type = 2, s[1].link = 3, s[1].data = sym, s[1].size = ns, s[1].entsize = 24;
    s[2].name = ".strtab", s[2].type = 3, s[2].data = (const uint8_t *)strs, s[2].size = nstrs;
    si_build(m, 1, 0, 3, 0, s, 3);
}

static void test_symbols_demangle(void)
{
    sym_img *m = (sym_img *)calloc(1, sizeof *m);
    static const char strs[] = "\0_Z3foov\0plain";
    uint8_t sym[24 * 3];
    size_t ns = 0;
    sym_loaded l;
    jitanon_str nm;
    int calls = 0;
    if (!m) return;
    m->is64 = 1;
    ns += si_sym(m, sym + ns, 0, 0, 0, 0, 0, 0);
    ns += si_sym(m, sym + ns, 1, 0x12, 0, 1, 0x1000, 0x10);
    ns += si_sym(m, sym + ns, 9, 0x12, 0, 1, 0x1010, 0x10);
    si_text_syms(m, 0x20, sym, ns, strs, sizeof strs);
    sym_load(&l, m->b, m->n);
    JT_CHECK_EQ_U(l.build, JITANON_OK);
    l.t.demangle = sym_test_demangle, l.t.demangle_user = &calls;
    nm = jitanon__sym_name(NULL, &l.t, jitanon__sym_find(NULL, &l.t, 0x1004));
    JT_CHECK_EQ_U(nm.length, 3 + 5 + 600);
    JT_CHECK(nm.length > 7 && !memcmp(nm.data, "dm:3foov", 8));
    nm = jitanon__sym_name(NULL, &l.t, jitanon__sym_find(NULL, &l.t, 0x1004)); /* asked once per symbol */
    JT_CHECK_EQ_U(calls, 2); /* the first ask and the one with room */
    nm = jitanon__sym_name(NULL, &l.t, jitanon__sym_find(NULL, &l.t, 0x1014));
    JT_CHECK(nm.length == 5 && !memcmp(nm.data, "plain", 5));
    sym_unload(&l);
    free(m);
}

/* Aliases only their demangled names choose between are chosen when a lookup needs them,
   as perf chooses (the longer demangled name: "_Z1cv" over "abcdefgh", which is longer
   mangled): nothing is demangled while the table is built; an address past the shorter
   alias' end finds nothing once the sized aliases' choice is made. */
static void test_symbols_demangle_aliases(void)
{
    sym_img *m = (sym_img *)calloc(1, sizeof *m);
    static const char strs[] = "\0abcdefgh\0_Z1cv\0plain\0_Z1dv";
    uint8_t sym[24 * 5];
    size_t ns = 0;
    sym_loaded l;
    jitanon__sym_ent *e;
    jitanon_str nm;
    int calls = 0;
    if (!m) return;
    m->is64 = 1;
    ns += si_sym(m, sym + ns, 0, 0, 0, 0, 0, 0);
    ns += si_sym(m, sym + ns, 1, 0x12, 0, 1, 0x1000, 0x20);  /* abcdefgh, sized 0x20 */
    ns += si_sym(m, sym + ns, 10, 0x12, 0, 1, 0x1000, 0x10); /* _Z1cv, sized 0x10: ends differ */
    ns += si_sym(m, sym + ns, 16, 0x12, 0, 1, 0x1020, 0);    /* plain and _Z1dv: no size */
    ns += si_sym(m, sym + ns, 22, 0x12, 0, 1, 0x1020, 0);
    si_text_syms(m, 0x40, sym, ns, strs, sizeof strs);
    memset(&l, 0, sizeof l);
    l.mem.p = m->b, l.mem.n = m->n;
    l.t.demangle = sym_test_demangle, l.t.demangle_user = &calls;
    l.open = jitanon__sym_open(NULL, jitanon__sym_mem_read, &l.mem, &l.f, &l.err);
    JT_CHECK_EQ_U(l.open, JITANON_OK);
    l.build = jitanon__sym_build(NULL, &l.t, &l.f, &l.f, &l.err);
    JT_CHECK_EQ_U(l.build, JITANON_OK);
    JT_CHECK_EQ_U(l.t.n, 2);
    JT_CHECK_EQ_U(calls, 0);                                 /* no alias chosen yet */
    JT_CHECK(jitanon__sym_find(NULL, &l.t, 0x1018) == NULL); /* past _Z1cv's end */
    e = jitanon__sym_find(NULL, &l.t, 0x1004);
    JT_CHECK(e != NULL);
    if (e) {
        nm = jitanon__sym_name(NULL, &l.t, e);
        JT_CHECK(nm.length == 3 + 3 + 600 && !memcmp(nm.data, "dm:1cv", 6));
    }
    e = jitanon__sym_find(NULL, &l.t, 0x1024);
    JT_CHECK(e != NULL);
    if (e) {
        nm = jitanon__sym_name(NULL, &l.t, e);
        JT_CHECK(nm.length == 3 + 3 + 600 && !memcmp(nm.data, "dm:1dv", 6));
        JT_CHECK_EQ_U(e->end, 0x3000); /* no size, the last: to the end of the page after its own */
    }
    sym_unload(&l);
    free(m);
}

static void test_symbols_kallsyms(void)
{
    static const char text[] =
        "ffffffff81000000 T _text\n"
        "ffffffff81000000 T _stext\n"           /* alias: the longer name */
        "ffffffff81000100 t helper\n"
        "ffffffff81000200 A abs_thing\n"        /* not T W D B */
        "ffffffff81000300 T SyS_read\n"
        "ffffffff81000300 T ksys_read\n"        /* SyS loses */
        "ffffffff81000380 t __do_sys_gettid\n"  /* the last at an address, the one that */
        "ffffffff81000380 T __ia32_sys_gettid\n" /* reaches the next, wins (perf ends */
        "ffffffff81000380 T __x64_sys_gettid\n" /* kallsyms' symbols, then picks) */
        "ffffffff81000400 W weak_one\n"
        "FFFFFFFF81000480 T Upper_hex\n"       /* digits of either case */
        "0ffffffff810004c0 T seventeen\n"     /* 17 digits: not an address */
        "ffffffff810004d0 T $x\n"              /* a name starting $: none */
        "ffffffff81000500 d some_data\n"
        "garbage line\n"
        "ffffffffc0000000 t mod_fn\t[mymod]\n"
        "ffffffffc0000100 t mod_fn2\t[mymod]\n";
    jitanon__sym_table t;
    jitanon_error err;
    uint8_t *copy = (uint8_t *)malloc(sizeof text);
    jitanon__sym_ent *e;
    jitanon_str s;
    if (!copy) return;
    memcpy(copy, text, sizeof text);
    memset(&t, 0, sizeof t);
    JT_CHECK_EQ_U(jitanon__sym_kallsyms(NULL, &t, copy, sizeof text - 1, &err), JITANON_OK);
    t.strings_size = sizeof text;
    e = jitanon__sym_find(NULL, &t, 0xffffffff81000010ull);
    s = e ? jitanon__sym_name(NULL, &t, e) : s;
    JT_CHECK(e && s.length == 6 && !memcmp(s.data, "_stext", 6));
    e = jitanon__sym_find(NULL, &t, 0xffffffff81000250ull); /* abs_thing left out: helper runs on */
    s = e ? jitanon__sym_name(NULL, &t, e) : s;
    JT_CHECK(e && s.length == 6 && !memcmp(s.data, "helper", 6));
    e = jitanon__sym_find(NULL, &t, 0xffffffff81000300ull);
    s = e ? jitanon__sym_name(NULL, &t, e) : s;
    JT_CHECK(e && s.length == 9 && !memcmp(s.data, "ksys_read", 9));
    e = jitanon__sym_find(NULL, &t, 0xffffffff81000390ull);
    s = e ? jitanon__sym_name(NULL, &t, e) : s;
    JT_CHECK(e && s.length == 16 && !memcmp(s.data, "__x64_sys_gettid", 16));
    e = jitanon__sym_find(NULL, &t, 0xffffffff810004d0ull);
    s = e ? jitanon__sym_name(NULL, &t, e) : s;
    JT_CHECK(e && s.length == 9 && !memcmp(s.data, "Upper_hex", 9));
    /* the kernel's last symbol ends a page on, not at the module's first */
    e = jitanon__sym_find(NULL, &t, 0xffffffff81000500ull);
    JT_CHECK(e && e->end == 0xffffffff81002000ull);
    e = jitanon__sym_find(NULL, &t, 0xffffffffc0000010ull);
    s = e ? jitanon__sym_name(NULL, &t, e) : s;
    JT_CHECK(e && s.length == 6 && !memcmp(s.data, "mod_fn", 6) && jitanon__sym_module(e));
    jitanon__sym_table_free(NULL, &t);
}

/* Hostile files: whatever the bytes, an answer (a typed error or a table) and no read
   outside them (ASan); the cuts of a good file at every length, and fields set wild. */
static void test_symbols_damage(void)
{
    sym_img *m = (sym_img *)calloc(1, sizeof *m), *d = (sym_img *)calloc(1, sizeof *d);
    sym_loaded l;
    size_t n, k;
    if (!m || !d) {
        free(m), free(d);
        return;
    }
    si_sample(m, 1, 0, 3, 0);
    for (n = 0; n < m->n; n++) { /* every cut */
        sym_load(&l, m->b, n);
        JT_CHECK(l.build == JITANON_OK || l.build == JITANON_ERR_TRUNCATED || l.build == JITANON_ERR_BAD_MAGIC ||
                 l.build == JITANON_ERR_BAD_HEADER);
        sym_unload(&l);
    }
    /* a section offset past the end: the table's read fails with its offset */
    *d = *m;
    {
        size_t shoff = (size_t)jitanon__rd64(d->b + 40, 0), at = shoff + 7 * 64 + 24; /* .symtab's sh_offset */
        si_put(d, at, 0x7fffffffffull, 8);
        sym_load(&l, d->b, d->n);
        JT_CHECK_EQ_U(l.build, JITANON_ERR_TRUNCATED);
        JT_CHECK_EQ_U(l.err.offset, 0x7fffffffffull);
        sym_unload(&l);
        /* a size that would overflow a count: refused as a limit, nothing allocated */
        *d = *m;
        si_put(d, shoff + 7 * 64 + 32, UINT64_MAX - 7, 8);
        sym_load(&l, d->b, d->n);
        JT_CHECK_EQ_U(l.build, JITANON_ERR_LIMIT);
        sym_unload(&l);
        /* entsize 0 */
        *d = *m;
        si_put(d, shoff + 7 * 64 + 56, 0, 8);
        sym_load(&l, d->b, d->n);
        JT_CHECK_EQ_U(l.build, JITANON_ERR_BAD_HEADER);
        sym_unload(&l);
        /* a string table without any NUL: every name runs off it, no symbol is taken */
        *d = *m;
        {
            size_t str = (size_t)jitanon__rd64(d->b + shoff + 8 * 64 + 24, 0), sz = (size_t)jitanon__rd64(d->b + shoff + 8 * 64 + 32, 0);
            memset(d->b + str, 'A', sz);
        }
        sym_load(&l, d->b, d->n);
        JT_CHECK_EQ_U(l.build, JITANON_OK);
        for (k = 0; k < l.t.n; k++) JT_CHECK(l.t.ents[k].flags & JITANON__SYM_PLT);
        sym_unload(&l);
        /* .shstrtab without a NUL: sections nameless, so no .symtab, no PLT */
        *d = *m;
        {
            size_t str = (size_t)jitanon__rd64(d->b + shoff + 10 * 64 + 24, 0), sz = (size_t)jitanon__rd64(d->b + shoff + 10 * 64 + 32, 0);
            memset(d->b + str, 'B', sz);
        }
        sym_load(&l, d->b, d->n);
        JT_CHECK_EQ_U(l.build, JITANON_OK);
        JT_CHECK_EQ_U(l.t.n, 0);
        sym_unload(&l);
        /* a section count past the headers, a link out of range, a PLT relocation naming a
           symbol past .dynsym */
        *d = *m;
        si_put(d, 60, 0xfff0, 2);
        sym_load(&l, d->b, d->n);
        JT_CHECK(l.build == JITANON_ERR_TRUNCATED);
        sym_unload(&l);
        *d = *m;
        si_put(d, shoff + 7 * 64 + 40, 999, 4);
        sym_load(&l, d->b, d->n);
        JT_CHECK_EQ_U(l.build, JITANON_ERR_BAD_HEADER);
        sym_unload(&l);
        *d = *m;
        {
            size_t rel = (size_t)jitanon__rd64(d->b + shoff + 4 * 64 + 24, 0);
            si_put(d, rel + 8, (uint64_t)0x7fffffff << 32 | 7, 8);
        }
        sym_load(&l, d->b, d->n);
        JT_CHECK_EQ_U(l.build, JITANON_OK);
        JT_CHECK(!strcmp(sym_at(&l, 0x5010), "@plt")); /* perf 6.1's name for a slot of no symbol */
        sym_unload(&l);
    }
    free(m), free(d);
}

/* The red-black tree perf's lookups are replayed on: random inserts (many equal keys)
   and erases keep it a search tree whose equal keys stay in insertion order, with a black
   root, no red node under a red one and one black height. */
static int rb_check(const jitanon__rb *t, uint32_t x, uint32_t *seen, size_t *n)
{
    int lh, rh;
    if (x == JITANON__RB_NIL) return 1;
    if (t->red[x] && (jitanon__rb_red(t, t->l[x]) || jitanon__rb_red(t, t->r[x]))) return -1;
    if (t->l[x] != JITANON__RB_NIL && t->p[t->l[x]] != x) return -1;
    if (t->r[x] != JITANON__RB_NIL && t->p[t->r[x]] != x) return -1;
    lh = rb_check(t, t->l[x], seen, n);
    seen[(*n)++] = x;
    rh = rb_check(t, t->r[x], seen, n);
    if (lh < 0 || rh < 0 || lh != rh) return -1;
    return lh + !t->red[x];
}

static void test_symbols_rbtree(void)
{
    enum { N = 600 };
    static uint32_t l[N], r[N], p[N], ent[N], seen[N];
    static uint64_t key[N];
    static uint8_t red[N], in[N];
    static uint32_t when[N];
    jitanon__rb t;
    uint64_t x = 12345;
    size_t i, n, live = 0, round;
    t.l = l, t.r = r, t.p = p, t.ent = ent, t.key = key, t.red = red, t.n = N, t.root = JITANON__RB_NIL;
    memset(in, 0, sizeof in);
    for (round = 0; round < 3 * N; round++) {
        uint32_t z;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        z = (uint32_t)((x >> 33) % N);
        if (!in[z] && round < 2 * N) {
            key[z] = (x >> 20) % 64; /* many equal keys */
            jitanon__rb_insert(&t, z);
            in[z] = 1, live++, when[z] = (uint32_t)round;
        } else if (in[z]) {
            jitanon__rb_erase(&t, z);
            in[z] = 0, live--;
        }
        if (round % 97 == 0 || round + 1 == 3 * N) {
            n = 0;
            JT_CHECK(t.root == JITANON__RB_NIL || (!t.red[t.root] && t.p[t.root] == JITANON__RB_NIL));
            JT_CHECK(rb_check(&t, t.root, seen, &n) >= 0);
            JT_CHECK_EQ_U(n, live);
            for (i = 1; i < n; i++)
                JT_CHECK(key[seen[i - 1]] < key[seen[i]] ||
                         (key[seen[i - 1]] == key[seen[i]] && when[seen[i - 1]] < when[seen[i]]));
        }
    }
}

/* -- the frame iterator's names (JITANON_FRAME_WANT_SYMBOL) over files served in memory -- */

typedef struct sym_file_at {
    const char *path;
    const uint8_t *data;
    size_t size;
} sym_file_at;

typedef struct sym_frames {
    sym_file_at files[12];
    size_t nfiles;
    char asked[2048]; /* the paths read, in order, '|' after each (the first read of each) */
    char line[4][256];
    unsigned samples;
    unsigned opens, closes; /* io.open's (JITANON_FILE_BINARY) */
    const char *open_path;
} sym_frames;

static size_t sym_frames_read(void *user, const char *path, uint64_t offset, void *dst, size_t size)
{
    sym_frames *t = (sym_frames *)user;
    size_t i;
    if (!offset && strlen(t->asked) + strlen(path) + 2 < sizeof t->asked) strcat(t->asked, path), strcat(t->asked, "|");
    for (i = 0; i < t->nfiles; i++)
        if (!strcmp(t->files[i].path, path)) {
            if (offset >= t->files[i].size) return 0;
            if (size > t->files[i].size - offset) size = (size_t)(t->files[i].size - offset);
            memcpy(dst, t->files[i].data + offset, size);
            return size;
        }
    return SIZE_MAX;
}

/* The same files through io.open: a stream per file read at offsets by sym_frames_read. */
static size_t sym_frames_read_at(void *user, uint64_t offset, void *dst, size_t size)
{
    sym_frames *t = (sym_frames *)user;
    return sym_frames_read(t, t->open_path, offset, dst, size);
}

static int sym_frames_close(void *user)
{
    sym_frames *t = (sym_frames *)user;
    t->open_path = NULL;
    t->closes++;
    return 0;
}

static jitanon_result sym_frames_open(void *user, jitanon_file_kind kind, const char *path, jitanon_stream *out,
                                      jitanon_error *err)
{
    sym_frames *t = (sym_frames *)user;
    size_t i;
    JT_CHECK(!t->open_path); /* one at a time: each read opens and closes */
    for (i = 0; kind == JITANON_FILE_BINARY && i < t->nfiles; i++)
        if (!strcmp(t->files[i].path, path)) {
            memset(out, 0, sizeof *out);
            out->read_at_fn = sym_frames_read_at;
            out->close_fn = sym_frames_close;
            out->user = t;
            out->size = t->files[i].size;
            t->open_path = t->files[i].path;
            t->opens++;
            return JITANON_OK;
        }
    if (kind == JITANON_FILE_BINARY) sym_frames_read(t, path, 0, NULL, 0); /* asked, as a read of it is */
    return JITANON__FAIL(err, JITANON_ERR_IO, 0, "no such file");
}

static void sym_frames_on_sample(void *user, const jitanon_inject_sample *s)
{
    sym_frames *t = (sym_frames *)user;
    jitanon_inject_frame_iter it;
    jitanon_frame f;
    char *out;
    if (t->samples >= 4) return;
    out = t->line[t->samples++];
    jitanon_inject_frame_iter_begin(&it, s, JITANON_FRAME_WANT_SYMBOL);
    while (jitanon_inject_frame_iter_next(&it, &f) && strlen(out) + f.name.length + 2 < 256) {
        strncat(out, f.name.data ? f.name.data : "", f.name.length);
        strcat(out, "|");
    }
}

static int sym_frames_find(void *user, uint32_t pid, jitanon_inject_process *out)
{
    (void)user;
    if (pid != TI_PID + 50) return 0;
    out->other_mnt = 1; /* a container's process: its files through /proc/150/root */
    return 1;
}

/* A HEADER_BUILD_ID entry: 20 bytes from bid0 up, for `name`. */
static void sym_bid_entry(jitanon_membuf *b, uint8_t bid0, const char *name)
{
    uint8_t e[64];
    size_t k;
    memset(e, 0, sizeof e);
    jitanon__wr16(e + 4, 1u << 15, 0);
    jitanon__wr16(e + 6, sizeof e, 0);
    jitanon__wr32(e + 8, UINT32_MAX, 0);
    for (k = 0; k < 20; k++) e[12 + k] = (uint8_t)(bid0 + k);
    e[32] = 20;
    memcpy(e + 36, name, strlen(name));
    JT_CHECK(jitanon_membuf_write(b, e, sizeof e) == 0);
}

/* Where the names come from, as perf 6.1 looks: a stripped library's debuglink (the file
   next to it has another build-id: refused; the one in .debug/ is taken) with the PLT of
   the library itself; a file that is gone, from perf's build-id cache; a file whose
   build-id is not the recording's: no name; the kernel's from kallsyms when the running
   kernel's build-id (its notes) is the recording's; a container's library inside its root;
   a [vdso] the recording names no build-id of, from this process's own vdso ("[vdso]"
   through io.read_file: the default reads it from memory). */
static void test_symbols_frames(void)
{
    const uint64_t K = JITANON_PERF_CONTEXT_KERNEL, U = JITANON_PERF_CONTEXT_USER;
    const uint64_t chain[] = {K, 0xffffffff81000100ull, U, 0x7f0000001004ull, 0x7f0000005010ull, 0x7f1000001040ull,
                              0x7f2000001004ull};
    const uint64_t inside[] = {U, 0x7f3000001080ull};
    const uint64_t vdso[] = {U, 0x7f4000001080ull};
    static const char kallsyms[] = "ffffffff81000000 T _text\nffffffff81000000 T _stext\nffffffff81000200 t other\n";
    static sym_img lib, dbg, wrong, gone, bad, cont, vd;
    uint8_t raw[128], notes[36];
    jitanon_membuf perf, bids;
    jitanon_inject_opts o;
    jitanon_buildid_cache cache;
    jitanon_error err;
    sym_frames t;
    ti_gen g;
    size_t k;
    memset(&t, 0, sizeof t);
    memset(&perf, 0, sizeof perf), memset(&bids, 0, sizeof bids);
    si_sample_ex(&lib, 1, 0, 3, 0, "liba.debug", 0xa0);
    si_rename(&lib, ".symtab", ".xymtab"); /* stripped: .dynsym (undefined symbols) and PLT */
    si_sample_ex(&wrong, 1, 0, 3, 0, NULL, 0xb0);
    for (k = 0; k + 6 < wrong.n; k++) /* its names differ ("a" is "W"): taken, it would show */
        if (!memcmp(wrong.b + k, "\0a\0b\0c\0", 7)) wrong.b[k + 1] = 'W';
    si_sample_ex(&dbg, 1, 0, 3, 0, NULL, 0xa0);
    si_rename(&dbg, ".dynsym", ".xynsym"); /* a debug file's .dynsym is NOBITS */
    si_sample_ex(&gone, 1, 0, 3, 0, NULL, 0xc0);
    si_sample_ex(&bad, 1, 0, 3, 0, NULL, 0xd0);
    si_sample_ex(&cont, 1, 0, 3, 0, NULL, 0x10);
    si_sample_ex(&vd, 1, 0, 3, 0, NULL, 0x30);
    for (k = 0; k + 8 < vd.n; k++) /* its own name: no other file answers it */
        if (!memcmp(vd.b + k, "\0g_glob\0", 8)) vd.b[k + 1] = 'v';
    memset(notes, 0, sizeof notes);
    jitanon__wr32(notes, 4, 0), jitanon__wr32(notes + 4, 20, 0), jitanon__wr32(notes + 8, 3, 0);
    memcpy(notes + 12, "GNU", 4);
    for (k = 0; k < 20; k++) notes[16 + k] = (uint8_t)(0xf0 + k);
    {
        sym_file_at f[] = {{"/usr/lib/liba.so", lib.b, lib.n},
                           {"/usr/lib/liba.debug", wrong.b, wrong.n},
                           {"/usr/lib/.debug/liba.debug", dbg.b, dbg.n},
                           {"/cache/.build-id/c0/c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3", gone.b, gone.n},
                           {"/usr/lib/libbad.so", bad.b, bad.n},
                           {"/proc/150/root/opt/libz.so", cont.b, cont.n},
                           {"/sys/kernel/notes", notes, sizeof notes},
                           {"/proc/kallsyms", (const uint8_t *)kallsyms, sizeof kallsyms - 1},
                           {"[vdso]", vd.b, vd.n}};
        memcpy(t.files, f, sizeof f);
        t.nfiles = sizeof f / sizeof f[0];
    }
    api_gen_callchains(&g, raw, &perf);
    sym_bid_entry(&bids, 0xa0, "/usr/lib/liba.so");
    sym_bid_entry(&bids, 0xc0, "/gone/libb.so");
    sym_bid_entry(&bids, 0xe0, "/usr/lib/libbad.so");
    sym_bid_entry(&bids, 0xf0, "[kernel.kallsyms]");
    JT_CHECK(jitanon_perf_writer_add_feature(&g.w, JITANON_PERF_FEAT_BUILD_ID, bids.data, bids.size, &err) == JITANON_OK);
    api_mmap(&g, UINT32_MAX, 1, 0xffffffff81000000ull, 0x1000000, 0xffffffff81000000ull, "[kernel.kallsyms]_text");
    api_mmap(&g, TI_PID, 10, 0x7f0000000000ull, 0x10000, 0, "/usr/lib/liba.so");
    api_mmap(&g, TI_PID, 11, 0x7f1000000000ull, 0x10000, 0, "/gone/libb.so");
    api_mmap(&g, TI_PID, 12, 0x7f2000000000ull, 0x10000, 0, "/usr/lib/libbad.so");
    api_mmap(&g, TI_PID + 50, 13, 0x7f3000000000ull, 0x10000, 0, "/opt/libz.so");
    api_mmap(&g, TI_PID, 14, 0x7f4000000000ull, 0x2000, 0, "[vdso]");
    api_chain_sample_of(&g, 60, TI_PID, TI_PID, chain, sizeof chain / sizeof chain[0]);
    api_chain_sample_of(&g, 61, TI_PID + 50, TI_PID + 50, inside, 2);
    api_chain_sample_of(&g, 62, TI_PID, TI_PID, vdso, 2);
    ti_round(&g);
    ti_gen_end(&g);
    jitanon_inject_opts_init(&o);
    memset(&cache, 0, sizeof cache);
    strcpy(cache.dir, "/cache");
    cache.fd_ = -1; /* (never opened: nothing is written without output) */
    o.buildid_cache = &cache;
    o.on_sample = sym_frames_on_sample;
    o.io.user = &t;
    o.io.read_file = sym_frames_read;
    o.io.find_process = sym_frames_find;
    JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(t.samples, 3);
    JT_CHECK(!strcmp(t.line[0], "_stext|a|memcpy@plt|c||"));
    JT_CHECK(!strcmp(t.line[1], "g_glob|"));
    JT_CHECK(!strcmp(t.line[2], "v_glob|"));
    /* the candidates in perf's order; the refused one read, the cache after the file */
    JT_CHECK(strstr(t.asked, "/usr/lib/liba.so|/usr/lib/liba.debug|/usr/lib/.debug/liba.debug|") != NULL);
    JT_CHECK(strstr(t.asked, "/gone/libb.so|") != NULL);
    JT_CHECK(strstr(t.asked, "/usr/lib/debug/.build-id/e0/e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3.debug|") != NULL);
    JT_CHECK(strstr(t.asked, "/proc/150/root/opt/libz.so|") != NULL);
    JT_CHECK(strstr(t.asked, "|[vdso]|") != NULL);
    if (jt.cur_failed) fprintf(stderr, "  %s\n  %s\n  %s\n  asked %s\n", t.line[0], t.line[1], t.line[2], t.asked);
    { /* io.open alone (JITANON_FILE_BINARY, read_at_fn): the same names from the same reads */
        sym_frames t1 = t;
        memset(t.line, 0, sizeof t.line);
        memset(t.asked, 0, sizeof t.asked);
        t.samples = 0;
        o.io.read_file = NULL;
        o.io.open = sym_frames_open;
        JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
        JT_CHECK_EQ_U(t.samples, 3);
        for (k = 0; k < 3; k++) JT_CHECK(!strcmp(t.line[k], t1.line[k]));
        JT_CHECK(!strcmp(t.asked, t1.asked));
        JT_CHECK(t.opens > 0 && t.opens == t.closes);
        if (jt.cur_failed) fprintf(stderr, "  open: asked %s\n", t.asked);
    }
    jitanon_membuf_release(&bids);
    jitanon_membuf_release(&perf);
}

/* This process's own vdso (jitanon__os.self_vdso: what io.read_file's default answers for
   "[vdso]"): on Linux an ELF image with a build-id whose symbols name the vdso's
   functions (__vdso_* on x86, __kernel_* on arm64), read whole within its mapping. */
static void test_symbols_self_vdso(void)
{
    const jitanon__os *os = jitanon__os_default();
    const uint8_t *p;
    size_t size = 0, i, named = 0;
    sym_loaded l;
#if JITANON__POSIX && defined(__linux__)
    JT_CHECK(os->self_vdso != NULL);
#endif
    if (!os->self_vdso || !(p = (const uint8_t *)os->self_vdso(&size))) return; /* (no vdso: nothing to read) */
    JT_CHECK(size >= 64 && size <= ((size_t)1 << 20));
    sym_load(&l, p, size);
    JT_CHECK_EQ_U(l.build, JITANON_OK);
    JT_CHECK_EQ_U(l.f.build_id_size, 20);
    for (i = 0; i < l.t.n; i++)
        if (!strncmp(l.t.ents[i].name, "__vdso_", 7) || !strncmp(l.t.ents[i].name, "__kernel_", 9)) named++;
    JT_CHECK(named > 0);
    sym_unload(&l);
}

static void suite_symbols(void)
{
    JT_RUN(test_symbols_rbtree);
    JT_RUN(test_symbols_choice);
    JT_RUN(test_symbols_plt);
    JT_RUN(test_symbols_demangle);
    JT_RUN(test_symbols_demangle_aliases);
    JT_RUN(test_symbols_kallsyms);
    JT_RUN(test_symbols_damage);
    JT_RUN(test_symbols_frames);
    JT_RUN(test_symbols_self_vdso);
}
JT_SUITE(symbols)
#undef JT_SUITES
#define JT_SUITES jt_suites_symbols
