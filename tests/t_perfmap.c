/* Perf maps: the [perfmap] reader (what runtimes really write, damage, overlaps, the
   memory limit), the symbols-only stub and --perf-map=elf in the injector. */

static jitanon_perfmap *tpm_load(const char *text, jitanon_result *res)
{
    jitanon_perfmap *m = NULL;
    jitanon_error e;
    *res = jitanon_perfmap_load_memory(text, strlen(text), NULL, &m, &e);
    return m;
}

static int tpm_is(const jitanon_perfmap *m, size_t i, uint64_t start, uint64_t size, const char *name)
{
    return i < m->count && m->entries[i].start == start && m->entries[i].size == size &&
           m->entries[i].name.length == strlen(name) && !memcmp(m->entries[i].name.data, name, strlen(name));
}

/* node --perf-basic-prof, CPython -X perf, 0x-prefixed writers, names with spaces, CRLF. */
static void test_perfmap_formats(void)
{
    jitanon_result r;
    jitanon_perfmap *m = tpm_load("7f0000001000 40 JS:~busy /tmp/a b.js:2:11\n"
                                  "0x7f0000002000 0x10 py::f:/x.py\r\n"
                                  "7F0000003000\t1A\tLazyCompile:*g x.js:1\n"
                                  "7f0000004000 0 zero\n", &r);
    JT_CHECK_EQ_U(r, JITANON_OK);
    JT_CHECK(m && m->count == 4);
    if (m && m->count == 4) {
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

/* Overlaps: the later line wins over what it covers; an earlier one keeps the rest (on
   both sides when covered in the middle); an exact duplicate replaces. */
static void test_perfmap_overlaps(void)
{
    jitanon_result r;
    jitanon_perfmap *m = tpm_load("1000 100 old\n"
                                  "1040 10 mid\n"
                                  "2000 10 dup1\n"
                                  "2000 10 dup2\n"
                                  "3000 10 first\n"
                                  "2ff8 20 covers\n", &r);
    JT_CHECK_EQ_U(r, JITANON_OK);
    JT_CHECK(m && m->count == 5);
    if (m && m->count == 5) {
        JT_CHECK(tpm_is(m, 0, 0x1000, 0x40, "old"));
        JT_CHECK(tpm_is(m, 1, 0x1040, 0x10, "mid"));
        JT_CHECK(tpm_is(m, 2, 0x1050, 0xb0, "old"));
        JT_CHECK(tpm_is(m, 3, 0x2000, 0x10, "dup2"));
        JT_CHECK(tpm_is(m, 4, 0x2ff8, 0x20, "covers"));
        JT_CHECK(m->entries[0].name.data == m->entries[2].name.data); /* one copy of a name */
        JT_CHECK_EQ_U(m->stats.overlapping, 3);
    }
    jitanon_perfmap_destroy(m);
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

static void suite_perfmap(void)
{
    JT_RUN(test_perfmap_formats);
    JT_RUN(test_perfmap_damage);
    JT_RUN(test_perfmap_overlaps);
    JT_RUN(test_perfmap_limit);
}
