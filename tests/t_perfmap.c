/* Perf maps: the [perfmap] reader (what runtimes really write, damage, overlaps, the
   memory limit), the symbols-only stub and --perf-map=elf in the injector. */

static jitanon_perfmap *tpm_load(const char *text, jitanon_result *res)
{
    jitanon_perfmap *m = NULL;
    jitanon_error e;
    *res = jitanon_perfmap_load_memory(text, strlen(text), NULL, &m, &e);
    return m;
}

/* text loads (JITANON_OK) with n entries: the map; else failed checks and NULL. */
static jitanon_perfmap *tpm_load_n(const char *text, size_t n)
{
    jitanon_result r;
    jitanon_perfmap *m = tpm_load(text, &r);
    JT_CHECK_EQ_U(r, JITANON_OK);
    JT_CHECK(m && m->count == n);
    if (m && m->count != n) {
        jitanon_perfmap_destroy(m);
        m = NULL;
    }
    return m;
}

/* Entry i as the stub's function: its name, start and size, no code. */
static jitanon_elf_func tpm_func(const jitanon_perfmap *m, size_t i)
{
    jitanon_elf_func fn;
    memset(&fn, 0, sizeof fn);
    fn.name = m->entries[i].name;
    fn.code_addr = m->entries[i].start;
    fn.map_size = m->entries[i].size;
    return fn;
}

static int tpm_is(const jitanon_perfmap *m, size_t i, uint64_t start, uint64_t size, const char *name)
{
    return i < m->count && m->entries[i].start == start && m->entries[i].size == size &&
           m->entries[i].name.length == strlen(name) && !memcmp(m->entries[i].name.data, name, strlen(name));
}

/* node --perf-basic-prof, CPython -X perf, 0x-prefixed writers, names with spaces, CRLF. */
static void test_perfmap_formats(void)
{
    jitanon_perfmap *m = tpm_load_n("7f0000001000 40 JS:~busy /tmp/a b.js:2:11\n"
                                    "0x7f0000002000 0x10 py::f:/x.py\r\n"
                                    "7F0000003000\t1A\tLazyCompile:*g x.js:1\n"
                                    "7f0000004000 0 zero\n", 4);
    if (m) {
        JT_CHECK(tpm_is(m, 0, 0x7f0000001000ull, 0x40, "JS:~busy /tmp/a b.js:2:11"));
        JT_CHECK(tpm_is(m, 1, 0x7f0000002000ull, 0x10, "py::f:/x.py"));
        JT_CHECK(tpm_is(m, 2, 0x7f0000003000ull, 0x1a, "LazyCompile:*g x.js:1"));
        JT_CHECK(tpm_is(m, 3, 0x7f0000004000ull, 1, "zero")); /* size 0 names its first byte */
        JT_CHECK(jitanon_perfmap_lookup(m, 0x7f000000103full) == &m->entries[0]);
        JT_CHECK(jitanon_perfmap_lookup(m, 0x7f0000001040ull) == NULL);
        JT_CHECK(jitanon_perfmap_lookup(m, 0x7f0000000fffull) == NULL);
        JT_CHECK(jitanon_perfmap_lookup(m, 0x7f0000004000ull) == &m->entries[3]);
        JT_CHECK_EQ_U(m->stats.lines, 4);
        JT_CHECK_EQ_U(m->stats.bad_lines, 0);
        JT_CHECK_EQ_U(m->stats.first_bad, UINT64_MAX);
    }
    jitanon_perfmap_destroy(m);
}

/* Damage: garbage lines are skipped and counted with the first one's offset; a last line
   without its newline (the writer died in it) is not used. */
static void test_perfmap_damage(void)
{
    jitanon_result r;
    const char *text = "1000 10 a\n"
                       "zzzz 10 nohex\n"         /* offset 10 */
                       "2000 10\n"               /* no name */
                       "3000  \n"                /* no size */
                       "4000 10 \n"              /* empty name */
                       "11112222333344445 1 x\n" /* 17 digits */
                       "ffffffffffffffff 2 wrap\n"
                       "\n"
                       "5000 10 b\n"
                       "6000 10 cu";
    jitanon_perfmap *m = tpm_load(text, &r);
    JT_CHECK_EQ_U(r, JITANON_OK);
    JT_CHECK(m && m->count == 2);
    if (m) {
        JT_CHECK(tpm_is(m, 0, 0x1000, 0x10, "a"));
        JT_CHECK(tpm_is(m, 1, 0x5000, 0x10, "b"));
        JT_CHECK_EQ_U(m->stats.bad_lines, 7);
        JT_CHECK_EQ_U(m->stats.skipped.form, 4); /* nohex, no size, 17 digits, the empty line */
        JT_CHECK_EQ_U(m->stats.skipped.no_name, 2);
        JT_CHECK_EQ_U(m->stats.skipped.range, 1);
        JT_CHECK_EQ_U(m->stats.skipped.nul, 0);
        JT_CHECK_EQ_U(m->stats.first_bad, 10);
        JT_CHECK_EQ_U(m->stats.cut, 1);
        JT_CHECK_EQ_U(m->stats.lines, 10);
    }
    jitanon_perfmap_destroy(m);
    /* A NUL inside a name: the line is skipped (an ELF string cannot hold it). */
    {
        static const char nul[] = "1000 10 a\0b\n2000 10 c\n";
        jitanon_error e;
        m = NULL;
        JT_CHECK_EQ_U(jitanon_perfmap_load_memory(nul, sizeof nul - 1, NULL, &m, &e), JITANON_OK);
        JT_CHECK(m && m->count == 1 && tpm_is(m, 0, 0x2000, 0x10, "c"));
        JT_CHECK(m && m->stats.skipped.nul == 1 && m->stats.bad_lines == 1);
        jitanon_perfmap_destroy(m);
    }
    /* Empty input, and only a cut line. */
    m = tpm_load("", &r);
    JT_CHECK(r == JITANON_OK && m && m->count == 0);
    jitanon_perfmap_destroy(m);
    m = tpm_load("1000 1", &r);
    JT_CHECK(r == JITANON_OK && m && m->count == 0 && m->stats.cut == 1);
    jitanon_perfmap_destroy(m);
}

/* Maps as runtimes write them.  Node 24 writes a RegExp's source as its name, newlines
   and all (node#62131): the part before the first newline names the entry, each rest is
   a line that is not START SIZE NAME and costs only itself - one that happens to look
   like an entry ("ab cd ef") is one more entry, far below any code, covering nothing.
   jcmd Compiler.perfmap writes 0x and 16 digits; every line after the broken ones is
   kept. */
static void test_perfmap_broken_lines(void)
{
    jitanon_perfmap *m = tpm_load_n("3b5c00040000 40 JS:~main /app/a.js:1:1\n"
                                    "3b5c00040040 60 RegExp:(?:a\n"
                                    "b)|c\n"
                                    "3b5c000400a0 20 RegExp:x\n"
                                    "\n"
                                    "  y z\n"
                                    "ab cd ef\n"
                                    "3b5c000400c0 30 JS:*hot /app/a.js:9:3\n"
                                    "0x00007f1b8d0f3e00 0x0000000000000170 java.lang.String::hashCode()I\n"
                                    "0X00007F1B8D0F4000 0X10 Interpreter\n",
                                    7);
    if (m) {
        JT_CHECK(tpm_is(m, 0, 0xab, 0xcd, "ef"));
        JT_CHECK(tpm_is(m, 1, 0x3b5c00040000ull, 0x40, "JS:~main /app/a.js:1:1"));
        JT_CHECK(tpm_is(m, 2, 0x3b5c00040040ull, 0x60, "RegExp:(?:a"));
        JT_CHECK(tpm_is(m, 3, 0x3b5c000400a0ull, 0x20, "RegExp:x"));
        JT_CHECK(tpm_is(m, 4, 0x3b5c000400c0ull, 0x30, "JS:*hot /app/a.js:9:3"));
        JT_CHECK(tpm_is(m, 5, 0x7f1b8d0f3e00ull, 0x170, "java.lang.String::hashCode()I"));
        JT_CHECK(tpm_is(m, 6, 0x7f1b8d0f4000ull, 0x10, "Interpreter"));
        JT_CHECK_EQ_U(m->stats.lines, 10);
        JT_CHECK_EQ_U(m->stats.bad_lines, 3);
        JT_CHECK_EQ_U(m->stats.skipped.form, 3);
        JT_CHECK_EQ_U(m->stats.first_bad, 67); /* "b)|c" */
        JT_CHECK_EQ_U(m->stats.overlapping, 0);
        JT_CHECK_EQ_U(m->stats.cut, 0);
    }
    jitanon_perfmap_destroy(m);
    /* a name cut by a newline right after SIZE: that line has no name, the rest none either */
    m = tpm_load_n("3b5c00040000 40 a\n3b5c00040040 60 \nRegExp\n3b5c000400a0 20 b\n", 2);
    if (m) {
        JT_CHECK(tpm_is(m, 1, 0x3b5c000400a0ull, 0x20, "b"));
        JT_CHECK_EQ_U(m->stats.skipped.no_name, 1);
        JT_CHECK_EQ_U(m->stats.skipped.form, 1);
    }
    jitanon_perfmap_destroy(m);
}

/* Overlaps resolve to what perf 6.1 answers with the map (its tree of every line, see
   [perfmap]): an entry inside another names its part where the lookup meets it first,
   of an exact duplicate the one the tree holds higher, and where the lookup passes by a
   line that holds the address, nothing. */
static void test_perfmap_overlaps(void)
{
    jitanon_perfmap *m = tpm_load_n("1000 100 old\n"
                                    "1040 10 mid\n"
                                    "2000 10 dup1\n"
                                    "2000 10 dup2\n"
                                    "3000 10 first\n"
                                    "2ff8 20 covers\n", 5);
    if (m) {
        JT_CHECK(tpm_is(m, 0, 0x1000, 0x40, "old"));
        JT_CHECK(tpm_is(m, 1, 0x1040, 0x10, "mid"));
        /* 0x1050..0x10ff: the lookup goes right at mid (the root) and never meets old */
        JT_CHECK(tpm_is(m, 2, 0x2000, 0x10, "dup2"));
        JT_CHECK(tpm_is(m, 3, 0x2ff8, 0x8, "covers"));
        JT_CHECK(tpm_is(m, 4, 0x3000, 0x10, "first"));
        /* 0x3010..0x3017: right at first, below which covers hangs on the left */
        JT_CHECK(jitanon_perfmap_lookup(m, 0x1050) == NULL && jitanon_perfmap_lookup(m, 0x3010) == NULL);
        JT_CHECK_EQ_U(m->stats.overlapping, 3); /* old, dup1, covers */
    }
    jitanon_perfmap_destroy(m);
}

/* What perf 6.1.187 named with each map as /tmp/perf-<pid>.map, for samples recorded in
   an RWX page running a loop at each probed offset (+5: the loop's own ip), measured;
   tests/oracle/perfmap.sh records the same map (NULL: perf said [unknown]). */
typedef struct tpm_probe {
    uint64_t off;
    const char *perf_names;
} tpm_probe;

/* The map of these probes: each of the shapes below once, and duplicates further down
   the file, where the tree has rotated (tests/oracle/perfmap.sh records it too). */
#define TPM_MANY_NAMES                \
    "0 40 fill_0\n"                   \
    "100 40 fill_1\n"                 \
    "200 40 tramp_short\n"            \
    "200 40 trampoline_longer_name\n" \
    "300 40 alias_one\n"              \
    "300 40 alias_two_\n"             \
    "300 40 alias_three__\n"          \
    "400 100 outer_first\n"           \
    "400 10 inner_second\n"           \
    "500 10 small_first\n"            \
    "500 100 big_second\n"            \
    "600 80 spans_all\n"              \
    "600 10 short_a\n"                \
    "600 10 short_b\n"                \
    "700 40 fill_7\n"                 \
    "800 40 late_first\n"             \
    "800 40 late_second_longer\n"     \
    "900 100 outer\n"                 \
    "940 10 nested_inside\n"

/* Loads rel_map (START as an offset) at a page of the recording's kind and checks what
   every probe is named; the entries must be disjoint, so that the stub has one symbol at
   any address and every ELF reader takes that one. */
static void tpm_check_probes(const char *rel_map, const tpm_probe *pr, size_t n)
{
    const uint64_t base = 0x7f3a12340000ull;
    jitanon_membuf text;
    jitanon_perfmap *m = NULL;
    jitanon_error e;
    const char *line = rel_map;
    size_t i;
    memset(&text, 0, sizeof text);
    while (*line) {
        const char *nl = strchr(line, '\n');
        char buf[128];
        unsigned long off = 0;
        int at = 0, len;
        JT_CHECK(nl && sscanf(line, "%lx %n", &off, &at) == 1 && at > 0);
        if (!nl || at <= 0) break;
        len = snprintf(buf, sizeof buf, "%llx %.*s", (unsigned long long)(base + off), (int)(nl + 1 - line - at),
                       line + at);
        jitanon_membuf_write(&text, buf, (size_t)len);
        line = nl + 1;
    }
    JT_CHECK_EQ_U(jitanon_perfmap_load_memory(text.data, text.size, NULL, &m, &e), JITANON_OK);
    for (i = 0; m && i < n; i++) {
        const jitanon_perfmap_entry *got = jitanon_perfmap_lookup(m, base + pr[i].off);
        const char *want = pr[i].perf_names;
        int same = want ? got && got->name.length == strlen(want) && !memcmp(got->name.data, want, strlen(want)) : !got;
        JT_CHECK(same);
        if (!same)
            fprintf(stderr, "    at +0x%llx perf names %s, the map here %.*s\n", (unsigned long long)pr[i].off,
                    want ? want : "[unknown]", got ? (int)got->name.length : 9, got ? got->name.data : "[unknown]");
    }
    for (i = 0; m && i + 1 < m->count; i++)
        JT_CHECK(m->entries[i].start + m->entries[i].size <= m->entries[i + 1].start);
    jitanon_perfmap_destroy(m);
    jitanon_membuf_release(&text);
}

/* Several names at one address (issue #42): a runtime lists a trampoline twice, an
   alias thrice, code replaced in place.  Perf 6.1 does not take the first, the last or
   the longest listed: its tree decides, and the stub must name what it names. */
static void test_perfmap_shared_starts(void)
{
    static const tpm_probe two[] = {{5, "short"}};
    static const tpm_probe two_rev[] = {{5, "a_much_longer_name"}};
    static const tpm_probe three[] = {{5, "two_"}};
    static const tpm_probe sizes[] = {{5, "small_first"}, {0x25, "big_second"}};
    static const tpm_probe missed[] = {{5, "bbb"}, {0x25, NULL}};
    static const tpm_probe many[] = {
        {0x005, "fill_0"},      {0x105, "fill_1"},      {0x205, "trampoline_longer_name"},
        {0x305, "alias_two_"},  {0x405, "outer_first"}, {0x425, "outer_first"},
        {0x505, "small_first"}, {0x525, "big_second"},  {0x605, "spans_all"},
        {0x625, "spans_all"},   {0x705, "fill_7"},      {0x805, "late_first"},
        {0x905, "outer"},       {0x945, "outer"},       {0x965, "outer"}};
    tpm_check_probes("0 40 short\n0 40 a_much_longer_name\n", two, 1);
    tpm_check_probes("0 40 a_much_longer_name\n0 40 short\n", two_rev, 1);
    tpm_check_probes("0 40 one\n0 40 two_\n0 40 three__\n", three, 1);
    tpm_check_probes("0 8 small_first\n0 40 big_second\n", sizes, 2);
    tpm_check_probes("0 40 aaa\n0 8 bbb\n0 8 ccc\n", missed, 2);
    tpm_check_probes(TPM_MANY_NAMES, many, sizeof many / sizeof *many);
}

/* memory_limit: a map that needs more fails with JITANON_ERR_LIMIT and frees everything;
   the same map loads under a limit just above its peak. */
static void test_perfmap_limit(void)
{
    jitanon_membuf text;
    jitanon_perfmap_opts o;
    jitanon_perfmap *m = NULL;
    jitanon_error e;
    size_t peak;
    unsigned i;
    memset(&text, 0, sizeof text);
    for (i = 0; i < 2000; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "%x 10 function_number_%u\n", 0x100000u + i * 0x20u, i);
        jitanon_membuf_write(&text, line, (size_t)n);
    }
    memset(&o, 0, sizeof o);
    JT_CHECK_EQ_U(jitanon_perfmap_load_memory(text.data, text.size, &o, &m, &e), JITANON_OK);
    JT_CHECK(m && m->count == 2000);
    peak = m ? m->stats.peak_bytes : 0;
    JT_CHECK(peak > 0);
    jitanon_perfmap_destroy(m);
    m = NULL;
    o.memory_limit = peak / 2;
    JT_CHECK_EQ_U(jitanon_perfmap_load_memory(text.data, text.size, &o, &m, &e), JITANON_ERR_LIMIT);
    JT_CHECK(m == NULL);
    o.memory_limit = peak;
    JT_CHECK_EQ_U(jitanon_perfmap_load_memory(text.data, text.size, &o, &m, &e), JITANON_OK);
    jitanon_perfmap_destroy(m);
    {
        jitanon_perfmap_opts bad;
        memset(&bad, 0, sizeof bad);
        bad.end_zero_ = 1;
        JT_CHECK_EQ_U(jitanon_perfmap_load_memory("", 0, &bad, &m, &e), JITANON_ERR_BAD_OPTIONS);
    }
    jitanon_membuf_release(&text);
}

/* The symbols-only stub: every entry comes back as a FUNC symbol at its own address with
   its size, in a NOBITS .text.nobits covered by a file-less PT_LOAD; no code bytes; the
   build-id depends on the entries; out-of-order entries are refused. */
static void test_perfmap_stub_elf(void)
{
    jitanon_result r;
    jitanon_perfmap *m = tpm_load("7f0000001000 40 JS:~busy a b.js:2\n7f0000001040 10 py::f:/x.py\n7f0000002000 0 z\n", &r);
    jitanon_jitdump_header h;
    jitanon_elf_opts eo;
    jitanon_elf_builder b;
    jitanon_membuf out;
    jitanon_sink sink;
    jitanon_error e;
    jitanon_test_elf_file f;
    jitanon_test_elf_section text, symtab;
    jitanon_test_elf_segment seg;
    uint8_t id1[20];
    size_t i;
    memset(&h, 0, sizeof h);
    h.elf_mach = 62;
    memset(&eo, 0, sizeof eo);
    eo.symbols_only = 1;
    memset(&out, 0, sizeof out);
    sink = jdrec_sink(&out);
    JT_CHECK(m && jitanon_elf_builder_init(&b, &h, &eo, &e) == JITANON_OK);
    for (i = 0; m && i < m->count; i++) {
        jitanon_elf_func fn = tpm_func(m, i);
        JT_CHECK_EQ_U(jitanon_elf_builder_add(&b, &fn, NULL, &e), JITANON_OK);
        if (i == m->count - 1) /* a second add below the end of the last one */
            JT_CHECK_EQ_U(jitanon_elf_builder_add(&b, &fn, NULL, &e), JITANON_ERR_INVALID_ARGUMENT);
    }
    JT_CHECK_EQ_U(jitanon_elf_builder_finish(&b, sink, NULL, &e), JITANON_OK);
    jitanon_elf_builder_release(&b);
    JT_CHECK(out.size < 4096); /* no code in the file */
    JT_CHECK_EQ_U(jitanon_test_elf_parse(&f, out.data, out.size, &e), JITANON_OK);
    JT_CHECK(jitanon_test_elf_find_section(&f, ".text.nobits", &text) != 0);
    JT_CHECK_EQ_U(text.type, JITANON__SHT_NOBITS);
    JT_CHECK_EQ_U(text.addr, 0x7f0000001000ull);
    JT_CHECK_EQ_U(text.offset, text.addr);
    JT_CHECK_EQ_U(text.size, 0x7f0000002001ull - 0x7f0000001000ull);
    JT_CHECK_EQ_U(f.phnum, 3);
    JT_CHECK(jitanon_test_elf_segment_at(&f, 1, &seg, &e) == JITANON_OK && seg.type == JITANON__PT_LOAD &&
             seg.vaddr == text.addr && seg.offset == text.addr && seg.filesz == 0 && seg.memsz == text.size);
    JT_CHECK(jitanon_test_elf_find_section(&f, ".symtab", &symtab) != 0);
    JT_CHECK_EQ_U(jitanon_test_elf_symbol_count(&f, &symtab), 4);
    for (i = 0; m && i < m->count; i++) {
        jitanon_test_elf_symbol sym;
        JT_CHECK(jitanon_test_elf_symbol_at(&f, &symtab, i + 1, &sym, &e) == JITANON_OK);
        JT_CHECK_EQ_U(sym.value, m->entries[i].start);
        JT_CHECK_EQ_U(sym.size, m->entries[i].size);
        JT_CHECK_EQ_U(sym.info & 15, 2); /* STT_FUNC */
        JT_CHECK(sym.name.length == m->entries[i].name.length &&
                 !memcmp(sym.name.data, m->entries[i].name.data, sym.name.length));
    }
    JT_CHECK(f.build_id.size == 20);
    if (f.build_id.size == 20) memcpy(id1, f.build_id.data, 20);
    /* one entry fewer: another build-id */
    out.size = 0;
    JT_CHECK(jitanon_elf_builder_init(&b, &h, &eo, &e) == JITANON_OK);
    for (i = 0; m && i + 1 < m->count; i++) {
        jitanon_elf_func fn = tpm_func(m, i);
        JT_CHECK_EQ_U(jitanon_elf_builder_add(&b, &fn, NULL, &e), JITANON_OK);
    }
    JT_CHECK_EQ_U(jitanon_elf_builder_finish(&b, sink, NULL, &e), JITANON_OK);
    jitanon_elf_builder_release(&b);
    JT_CHECK(jitanon_test_elf_parse(&f, out.data, out.size, &e) == JITANON_OK && f.build_id.size == 20 &&
             memcmp(f.build_id.data, id1, 20) != 0);
    /* code is refused in this mode */
    {
        static const uint8_t code[4] = {0x90, 0x90, 0x90, 0xc3};
        jitanon_elf_func fn;
        memset(&fn, 0, sizeof fn);
        fn.name.data = "x";
        fn.name.length = 1;
        fn.code_addr = 0x10000;
        fn.code.data = code;
        fn.code.size = 4;
        JT_CHECK(jitanon_elf_builder_init(&b, &h, &eo, &e) == JITANON_OK);
        JT_CHECK_EQ_U(jitanon_elf_builder_add(&b, &fn, NULL, &e), JITANON_ERR_INVALID_ARGUMENT);
        jitanon_elf_builder_release(&b);
    }
    jitanon_membuf_release(&out);
    jitanon_perfmap_destroy(m);
}

/* -- --perf-map=elf in the injector (the scenario of t_inject.c: pages of an //anon code
   cache committed one at a time, functions f0..f3 in the dump) -- */

/* A ti_case and the map its process has (the loader gets the ti_io inside). */
typedef struct tpm_case {
    ti_case c;
    const char *text; /* what /tmp/perf-100.map holds; NULL: there is none */
    unsigned asked;
} tpm_case;

static jitanon_result tpm_load_map(void *user, const char *path, const jitanon_perfmap_opts *opts,
                                   jitanon_perfmap **out, jitanon_error *err)
{
    tpm_case *t = (tpm_case *)(void *)((char *)user - offsetof(ti_case, io));
    t->asked++;
    *out = NULL;
    if (!t->text || strcmp(path, "/tmp/perf-100.map") != 0) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "not there");
    return jitanon_perfmap_load_memory(t->text, strlen(t->text), opts, out, err);
}

static jitanon_result tpm_run_mode(tpm_case *t, jitanon_perf_mode mode)
{
    ti_case *c = &t->c;
    c->o.perf_map = JITANON_PERF_MAP_ELF;
    c->o.elf_dir = "/some/dir";
    c->o.io.load_perfmap = tpm_load_map;
    return ti_case_run(c, mode);
}

static jitanon_result tpm_run(tpm_case *t) { return tpm_run_mode(t, JITANON_PERF_FILE); }

static const char tpm_map[] = "10000 100 f0 in the map\n" /* the dump names f0: its name wins */
                              "10100 100 stub between\n"  /* the sample at 0x10150 */
                              "12800 10 tail\n";

/* With the dump: the //anon pieces the trimming keeps name the stub instead (pgoff =
   start), the jitted files are untouched, and the stub is listed in the build-id table. */
static void test_perfmap_inject_with_dump(void)
{
    tpm_case t;
    size_t i, stub = 0;
    t.asked = 0;
    t.text = tpm_map;
    ti_case_begin(&t.c, 1, JITANON_PERF_FILE, 1);
    t.c.o.late = JITANON_LATE_KEEP;
    t.c.o.elf_files = JITANON_ELF_FILES_ALL; /* counts every function's file */
    JT_CHECK(tpm_run(&t) == JITANON_OK);
    JT_CHECK_EQ_U(t.asked, 1); /* once per process */
    JT_CHECK_EQ_U(ti_case_count(&t.c, JITANON_PERF_RECORD_MMAP2, "//anon"), 0);
    JT_CHECK_EQ_U(ti_case_count(&t.c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100-"), 4);
    for (i = 0; i < t.c.n; i++) {
        const ti_out_rec *v = &t.c.v[i];
        if (v->type != JITANON_PERF_RECORD_MMAP2 || strcmp(v->name, "/some/dir/jitted-100.map.so")) continue;
        JT_CHECK_EQ_U(v->pgoff, v->start);
        if (v->time == 30) JT_CHECK(v->start == 0x10000 && v->len == 0x1000);
        if (v->time == 50) JT_CHECK(v->start == 0x11000 && v->len == 0x1000);
        if (v->time == 80) JT_CHECK(v->start == 0x12000 && v->len == 0x1000);
        stub++;
    }
    JT_CHECK_EQ_U(stub, 3);
    JT_CHECK_EQ_U(t.c.io.elf_files, 5);
    JT_CHECK(t.c.io.elf_ok);
    JT_CHECK_EQ_U(t.c.st.perf_map.maps, 1);
    JT_CHECK_EQ_U(t.c.st.perf_map.entries, 3);
    JT_CHECK_EQ_U(t.c.st.perf_map.mmaps, 3);
    JT_CHECK_EQ_U(t.c.st.buildid.entries, 5);
    JT_CHECK_EQ_U(t.c.st.elf.files, 5);
    ti_case_end(&t.c);
}

/* Without a dump: every //anon mapping names the stub whole; a process without a map, or
   the option off, gives the output of a run without it, record for record. */
static void test_perfmap_inject_map_only(void)
{
    tpm_case t;
    ti_out_rec plain[64];
    size_t nplain, i, stub = 0;
    t.asked = 0;
    t.text = tpm_map;
    ti_case_begin(&t.c, 1, JITANON_PERF_FILE, 0);
    JT_CHECK(tpm_run(&t) == JITANON_OK);
    for (i = 0; i < t.c.n; i++) {
        const ti_out_rec *v = &t.c.v[i];
        if (v->type != JITANON_PERF_RECORD_MMAP2 || strcmp(v->name, "/some/dir/jitted-100.map.so")) continue;
        JT_CHECK(v->start == 0x10000 && v->pgoff == 0x10000);
        JT_CHECK(v->len == (v->time == 30 ? 0x1000u : v->time == 50 ? 0x2000u : 0x3000u));
        stub++;
    }
    JT_CHECK_EQ_U(stub, 3);
    JT_CHECK_EQ_U(ti_case_count(&t.c, JITANON_PERF_RECORD_MMAP2, "//anon"), 0);
    JT_CHECK_EQ_U(t.c.io.elf_files, 1);
    /* pipe output: the same mmaps, the stub listed (HEADER_BUILD_ID records) */
    JT_CHECK(tpm_run_mode(&t, JITANON_PERF_PIPE) == JITANON_OK);
    JT_CHECK_EQ_U(ti_case_count(&t.c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100.map.so"), 3);
    JT_CHECK_EQ_U(t.c.st.buildid.entries, 1);
    /* no map: as without the option */
    JT_CHECK(ti_case_run(&t.c, JITANON_PERF_FILE) == JITANON_OK);
    memcpy(plain, t.c.v, sizeof plain);
    nplain = t.c.n;
    t.text = NULL;
    t.asked = 0;
    JT_CHECK(tpm_run(&t) == JITANON_OK);
    JT_CHECK_EQ_U(t.asked, 1);
    JT_CHECK_EQ_U(t.c.n, nplain);
    JT_CHECK(memcmp(plain, t.c.v, nplain * sizeof *plain) == 0);
    JT_CHECK_EQ_U(t.c.st.perf_map.maps, 0);
    ti_case_end(&t.c);
}

/* A damaged map is used for what it holds and told once; a map past memory_limit leaves
   the process as without one; an unknown mode is refused. */
static void test_perfmap_inject_damage(void)
{
    tpm_case t;
    t.asked = 0;
    t.text = "10100 100 stub between\nnot a line\n12800 10 ta";
    ti_case_begin(&t.c, 1, JITANON_PERF_FILE, 0);
    JT_CHECK(tpm_run(&t) == JITANON_OK);
    JT_CHECK_EQ_U(t.c.st.perf_map.entries, 1);
    JT_CHECK_EQ_U(t.c.st.perf_map.bad_lines, 2);
    JT_CHECK_EQ_U(ti_case_count(&t.c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100.map.so"), 3);
    t.c.o.perfmap.memory_limit = 16;
    JT_CHECK(tpm_run(&t) == JITANON_OK);
    JT_CHECK_EQ_U(t.c.st.perf_map.maps, 0);
    JT_CHECK_EQ_U(ti_case_count(&t.c, JITANON_PERF_RECORD_MMAP2, "//anon"), 3);
    t.c.o.perf_map = (jitanon_perf_map_mode)7;
    JT_CHECK_EQ_U(ti_case_run(&t.c, JITANON_PERF_FILE), JITANON_ERR_INVALID_ARGUMENT);
    ti_case_end(&t.c);
}

/* Which mappings name the stub: executable //anon, [anon: and /memfd: ones; not a
   non-executable //anon mapping, not a file; the map is looked for in jitdump_dir first. */
static void tpm_mmap_prot(ti_gen *g, uint64_t time, uint64_t start, uint32_t prot, const char *name)
{
    jitanon_perf_record rec;
    uint8_t buf[512];
    size_t size = 0;
    jitanon_error err;
    memset(&rec, 0, sizeof rec);
    rec.misc = JITANON_PERF_MISC_USER;
    rec.sid.time = time;
    rec.mmap.pid = rec.mmap.tid = TI_PID;
    rec.mmap.start = rec.mmap.pgoff = start;
    rec.mmap.len = 0x1000;
    rec.mmap.prot = prot;
    rec.mmap.flags = 2;
    rec.mmap.filename.data = name;
    rec.mmap.filename.length = strlen(name);
    JT_CHECK(jitanon_perf_encode_mmap2(buf, sizeof buf, &size, &rec, &g->attr, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_write(&g->w, buf, size, &err) == JITANON_OK);
}

static jitanon_result tpm_load_dir(void *user, const char *path, const jitanon_perfmap_opts *opts,
                                   jitanon_perfmap **out, jitanon_error *err)
{
    tpm_case *t = (tpm_case *)(void *)((char *)user - offsetof(ti_case, io));
    static const char text[] = "20000 4000 in jitdump_dir\n";
    *out = NULL;
    if (t->asked++ == 0) JT_CHECK(strcmp(path, "/moved/here/perf-100.map") == 0);
    if (strcmp(path, "/moved/here/perf-100.map") != 0) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "not there");
    return jitanon_perfmap_load_memory(text, sizeof text - 1, opts, out, err);
}

static void test_perfmap_inject_kinds(void)
{
    tpm_case t;
    ti_gen g;
    uint8_t raw[128];
    size_t i;
    memset(&t, 0, sizeof t);
    ti_case_begin(&t.c, 1, JITANON_PERF_FILE, 0);
    jitanon_membuf_release(&t.c.perf);
    memset(&t.c.perf, 0, sizeof t.c.perf);
    ti_gen_begin(&g, raw, 1, &t.c.perf, JITANON_PERF_FILE);
    tpm_mmap_prot(&g, 10, 0x20000, 5, "//anon");
    tpm_mmap_prot(&g, 11, 0x21000, 3, "//anon"); /* data, not code */
    tpm_mmap_prot(&g, 12, 0x22000, 5, "/memfd:jit-cache (deleted)");
    tpm_mmap_prot(&g, 13, 0x23000, 5, "[anon:v8 code]");
    tpm_mmap_prot(&g, 14, 0x24000, 5, "/usr/lib/libc.so.6");
    ti_sample(&g, 20, 0x20010);
    ti_round(&g);
    ti_gen_end(&g);
    t.c.o.perf_map = JITANON_PERF_MAP_ELF;
    t.c.o.elf_dir = "/some/dir";
    t.c.o.jitdump_dir = "/moved/here";
    t.c.o.io.load_perfmap = tpm_load_dir;
    JT_CHECK(ti_case_run(&t.c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(t.asked, 1);
    JT_CHECK_EQ_U(ti_case_count(&t.c, JITANON_PERF_RECORD_MMAP2, "/some/dir/jitted-100.map.so"), 3);
    for (i = 0; i < t.c.n; i++) {
        const ti_out_rec *v = &t.c.v[i];
        if (v->type != JITANON_PERF_RECORD_MMAP2) continue;
        if (v->start == 0x21000) JT_CHECK(strcmp(v->name, "//anon") == 0);
        if (v->start == 0x24000) JT_CHECK(strcmp(v->name, "/usr/lib/libc.so.6") == 0);
        if (v->start == 0x20000 || v->start == 0x22000 || v->start == 0x23000)
            JT_CHECK(strcmp(v->name, "/some/dir/jitted-100.map.so") == 0 && v->pgoff == v->start);
    }
    JT_CHECK_EQ_U(t.c.st.perf_map.mmaps, 3);
    ti_case_end(&t.c);
}

static void suite_perfmap(void)
{
    JT_RUN(test_perfmap_formats);
    JT_RUN(test_perfmap_damage);
    JT_RUN(test_perfmap_broken_lines);
    JT_RUN(test_perfmap_overlaps);
    JT_RUN(test_perfmap_shared_starts);
    JT_RUN(test_perfmap_limit);
    JT_RUN(test_perfmap_stub_elf);
    JT_RUN(test_perfmap_inject_with_dump);
    JT_RUN(test_perfmap_inject_map_only);
    JT_RUN(test_perfmap_inject_damage);
    JT_RUN(test_perfmap_inject_kinds);
}
JT_SUITE(perfmap)
#undef JT_SUITES
#define JT_SUITES jt_suites_perfmap
