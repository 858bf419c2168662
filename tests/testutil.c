/* Shared test helpers: the one failing allocator of the tests' failure sweeps, and
   sweeps.  It counts calls and live bytes (so leaks show up even without LeakSanitizer)
   and fails the fail_at-th allocation (1-based; 0 = none), or with fail_after every one
   from there on, or (fail_bytes) any that would hold more than that many live bytes. */

typedef struct jt_alloc {
    long calls, fail_at; /* fail_at: 1-based index of the allocation to fail; 0 = never */
    int fail_after;      /* fail every allocation from fail_at on */
    size_t fail_bytes;   /* fail what would make live_bytes exceed this; 0 = never */
    long live_blocks;
    size_t live_bytes, peak_bytes;
} jt_alloc;

static int jt_alloc_fails(jt_alloc *a, size_t old_size, size_t new_size)
{
    ++a->calls;
    if (a->fail_at && (a->calls == a->fail_at || (a->fail_after && a->calls > a->fail_at))) return 1;
    return a->fail_bytes && a->live_bytes - old_size + new_size > a->fail_bytes;
}

static void *jt_alloc_fn(void *user, size_t size)
{
    jt_alloc *a = (jt_alloc *)user;
    if (jt_alloc_fails(a, 0, size)) return NULL;
    a->live_blocks++;
    a->live_bytes += size;
    if (a->live_bytes > a->peak_bytes) a->peak_bytes = a->live_bytes;
    return malloc(size);
}

static void *jt_realloc_fn(void *user, void *ptr, size_t old_size, size_t new_size)
{
    jt_alloc *a = (jt_alloc *)user;
    void *n;
    if (jt_alloc_fails(a, ptr ? old_size : 0, new_size)) return NULL;
    n = realloc(ptr, new_size);
    if (!n) return NULL;
    if (!ptr) a->live_blocks++;
    a->live_bytes += new_size - (ptr ? old_size : 0);
    if (a->live_bytes > a->peak_bytes) a->peak_bytes = a->live_bytes;
    return n;
}

static void jt_free_fn(void *user, void *ptr, size_t size)
{
    jt_alloc *a = (jt_alloc *)user;
    if (!ptr) return;
    a->live_blocks--;
    a->live_bytes -= size;
    free(ptr);
}

/* Zeroes *a and returns the allocator over it (set fail_at etc. afterwards). */
static jitanon_allocator jt_allocator(jt_alloc *a)
{
    jitanon_allocator al;
    memset(a, 0, sizeof *a);
    al.alloc_fn = jt_alloc_fn;
    al.realloc_fn = jt_realloc_fn;
    al.free_fn = jt_free_fn;
    al.user = a;
    return al;
}

/* What io.log was told: its lines as text ("\n" after each) as far as they fit, and how
   many. */
typedef struct jt_log {
    char text[4096];
    unsigned lines;
} jt_log;

static void jt_log_add(jt_log *l, const char *msg)
{
    size_t n = strlen(l->text);
    l->lines++;
    if (n + strlen(msg) + 2 < sizeof l->text) sprintf(l->text + n, "%s\n", msg);
}

/* io.log into the jt_log `user` points to. */
static void jt_log_fn(void *user, const char *msg)
{
    jt_log_add((jt_log *)user, msg);
}

/* Builds a small dump with every record type (and an unknown one) through the writer. */
static void jt_build_dump(jitanon_membuf *out, int big_endian)
{
    static const uint8_t code1[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x5d, 0xc3};
    static const uint8_t code2[] = {0xc3};
    static const uint8_t eh[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    static const uint8_t ehh[] = {0xa1, 0xa2, 0xa3, 0xa4};
    jitanon_jitdump_writer w;
    jitanon_jitdump_debug_entry e[3];
    jitanon_error err;
    uint8_t unknown[24];
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    memset(e, 0, sizeof e);
    e[0].addr = 0x1000; e[0].lineno = 10; e[0].discrim = 1; e[0].file.data = "a.js"; e[0].file.length = 4;
    e[1].addr = 0x1002; e[1].lineno = 11; e[1].discrim = 0; e[1].file = e[0].file;
    e[2].addr = 0x1004; e[2].lineno = 3; e[2].discrim = 2; e[2].file.data = "lib/b.js"; e[2].file.length = 8;
    jdrec_begin(&w, jdrec_sink(out), 62, 4242, 1000, big_endian, &err);
    jitanon_jitdump_write_debug_info(&w, 1100, 0x1000, e, 3, &err);
    jdrec_write(&w, jdrec_unwind(1150, eh, sizeof eh, ehh, sizeof ehh, 0), &err);
    jdrec_write(&w, jdrec_load(1200, 4242, 4243, 0x1000, code1, sizeof code1, 7, "fn_one"), &err);
    /* an unknown record type (id 9): readers must skip it by size */
    memset(unknown, 0, sizeof unknown);
    jitanon__wr32(unknown, 9, big_endian);
    jitanon__wr32(unknown + 4, sizeof unknown, big_endian);
    jitanon__wr64(unknown + 8, 1250, big_endian);
    jitanon_membuf_write(out, unknown, sizeof unknown);
    jdrec_write(&w, jdrec_load(1300, 4242, 4242, 0x2000, code2, sizeof code2, 8, "fn_two"), &err);
    jdrec_write(&w, jdrec_move(1400, 4242, 4242, 0x2000, 0x3000, sizeof code2, 8), &err);
    jdrec_write(&w, jdrec_make(JITANON_JITDUMP_CODE_CLOSE, 1500), &err);
}

/* Iterates a whole dump; returns the terminal result (END on success). */
static jitanon_result jt_iterate(const void *data, size_t size, size_t *count, jitanon_error *err)
{
    jitanon_jitdump_iter it;
    jitanon_jitdump_record rec;
    jitanon_result r = jitanon_jitdump_iter_begin(&it, data, size, NULL, err);
    *count = 0;
    while (r == JITANON_OK && (r = jitanon_jitdump_iter_next(&it, &rec, err)) == JITANON_OK) {
        jitanon_jitdump_debug_iter di;
        jitanon_jitdump_debug_entry e;
        (*count)++;
        jitanon_jitdump_debug_iter_begin(&di, &rec);
        while (jitanon_jitdump_debug_iter_next(&di, &e)) {
            if (e.file.length) JT_CHECK(e.file.data != NULL);
        }
    }
    return r;
}

static int jt_is_typed_error(jitanon_result r)
{
    return r > JITANON_AGAIN && r < JITANON_RESULT_COUNT;
}
