/* Tests for the address-range section: the rangemap, the trimming engine, and a
   randomized property test of the engine against the brute-force model in trim_model.h. */
#include "trim_model.h"
#include <time.h>

/* -- helpers ---------------------------------------------------------------------------- */

/* The pieces of a rangemap as a string "start-end:kind/id ..." (end exclusive, hex),
   for readable expectations. */
static const char *tt_dump(const jitanon_rangemap *m, char *buf, size_t cap)
{
    jitanon_rangemap_iter it;
    jitanon_range r;
    size_t n = 0;
    buf[0] = 0;
    jitanon_rangemap_iter_begin_all(&it, m);
    while (jitanon_rangemap_iter_next(&it, &r) && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "%s%llx-%llx:%u/%llu", n ? " " : "", (unsigned long long)r.start,
                              (unsigned long long)(r.start + r.len), (unsigned)r.kind, (unsigned long long)r.id);
    return buf;
}

#define TT_MAP_IS(m, s) \
    do { \
        char tt_buf_[512]; \
        const char *tt_got_ = tt_dump(m, tt_buf_, sizeof tt_buf_); \
        if (strcmp(tt_got_, s) != 0) { \
            jt.cur_failed++; \
            fprintf(stderr, "  %s:%d: map is \"%s\", want \"%s\"\n", __FILE__, __LINE__, tt_got_, s); \
        } \
    } while (0)

/* -- rangemap ---------------------------------------------------------------------------- */

static void test_trim_rangemap_edges(void)
{
    jitanon_rangemap m;
    jitanon_range r;
    jitanon_error err;
    jitanon_rangemap_init(&m, NULL);
    JT_CHECK(!jitanon_rangemap_lookup(&m, 0, &r));
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0x10, 0x10, 1, 1, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0x20, 0x10, 1, 2, &err), JITANON_OK); /* adjacent */
    TT_MAP_IS(&m, "10-20:1/1 20-30:1/2");
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0x18, 0x4, 2, 3, &err), JITANON_OK); /* nested: splits */
    TT_MAP_IS(&m, "10-18:1/1 18-1c:2/3 1c-20:1/1 20-30:1/2");
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0x1a, 0x10, 3, 4, &err), JITANON_OK); /* straddles two */
    TT_MAP_IS(&m, "10-18:1/1 18-1a:2/3 1a-2a:3/4 2a-30:1/2");
    JT_CHECK(jitanon_rangemap_lookup(&m, 0x29, &r) && r.id == 4 && r.start == 0x1a && r.len == 0x10);
    JT_CHECK(jitanon_rangemap_lookup(&m, 0x2a, &r) && r.id == 2);
    JT_CHECK(!jitanon_rangemap_lookup(&m, 0x30, &r) && r.kind == 0);
    JT_CHECK(!jitanon_rangemap_lookup(&m, 0xf, NULL));
    JT_CHECK_EQ_U(jitanon_rangemap_erase(&m, 0x19, 0x12, &err), JITANON_OK); /* hole over three */
    TT_MAP_IS(&m, "10-18:1/1 18-19:2/3 2b-30:1/2");
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0x10, 0x20, 5, 5, &err), JITANON_OK); /* exact full cover */
    TT_MAP_IS(&m, "10-30:5/5");
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0, 0x100, 6, 6, &err), JITANON_OK); /* covers beyond, address 0 */
    TT_MAP_IS(&m, "0-100:6/6");
    JT_CHECK(jitanon_rangemap_lookup(&m, 0, &r) && r.id == 6);
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0x50, 0, 7, 7, &err), JITANON_OK); /* len 0: no-op */
    TT_MAP_IS(&m, "0-100:6/6");
    JT_CHECK_EQ_U(jitanon_rangemap_count(&m), 1);
    /* The top of the address space: [UINT64_MAX - 0xf, UINT64_MAX] inclusive. */
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, UINT64_MAX - 0xf, 0x10, 8, 8, &err), JITANON_OK);
    JT_CHECK(jitanon_rangemap_lookup(&m, UINT64_MAX, &r) && r.id == 8 && r.len == 0x10);
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, UINT64_MAX, 1, 9, 9, &err), JITANON_OK);
    JT_CHECK(jitanon_rangemap_lookup(&m, UINT64_MAX, &r) && r.id == 9 && r.len == 1);
    JT_CHECK(jitanon_rangemap_lookup(&m, UINT64_MAX - 1, &r) && r.id == 8 && r.len == 0xf);
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, UINT64_MAX, 2, 9, 9, &err), JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 1, UINT64_MAX, 10, 10, &err), JITANON_OK); /* all but 0 */
    JT_CHECK_EQ_U(jitanon_rangemap_count(&m), 2);
    JT_CHECK(jitanon_rangemap_lookup(&m, UINT64_MAX, &r) && r.id == 10 && r.len == UINT64_MAX);
    JT_CHECK(jitanon_rangemap_lookup(&m, 0, &r) && r.id == 6 && r.len == 1);
    JT_CHECK_EQ_U(jitanon_rangemap_erase(&m, 0, UINT64_MAX, &err), JITANON_OK);
    TT_MAP_IS(&m, "ffffffffffffffff-0:10/10"); /* [UINT64_MAX, UINT64_MAX] is left; its end prints as 0 */
    jitanon_rangemap_release(&m);
    JT_CHECK_EQ_U(jitanon_rangemap_count(&m), 0);
    jitanon_rangemap_release(&m); /* reusable, and freeing twice is fine */
}

static void test_trim_rangemap_iter(void)
{
    jitanon_rangemap m, c;
    jitanon_rangemap_iter it;
    jitanon_range r;
    uint64_t ids[8];
    size_t n = 0;
    jitanon_rangemap_init(&m, NULL);
    jitanon_rangemap_init(&c, NULL);
    jitanon_rangemap_assign(&m, 0x100, 0x100, 1, 1, NULL);
    jitanon_rangemap_assign(&m, 0x300, 0x100, 1, 2, NULL);
    jitanon_rangemap_assign(&m, 0x400, 0x100, 1, 3, NULL);
    jitanon_rangemap_iter_begin(&it, &m, 0x1ff, 0x102); /* ends on 0x300: touches 1 and 2 */
    while (jitanon_rangemap_iter_next(&it, &r) && n < 8) ids[n++] = r.id;
    JT_CHECK_EQ_U(n, 2);
    JT_CHECK(n == 2 && ids[0] == 1 && ids[1] == 2);
    jitanon_rangemap_iter_begin(&it, &m, 0x200, 0x100); /* the gap */
    JT_CHECK(!jitanon_rangemap_iter_next(&it, &r));
    jitanon_rangemap_iter_begin(&it, &m, 0x450, 0); /* len 0 */
    JT_CHECK(!jitanon_rangemap_iter_next(&it, &r));
    jitanon_rangemap_iter_begin(&it, &m, 0x450, UINT64_MAX); /* clipped at the top */
    JT_CHECK(jitanon_rangemap_iter_next(&it, &r) && r.id == 3 && r.start == 0x400);
    JT_CHECK(!jitanon_rangemap_iter_next(&it, &r));
    JT_CHECK_EQ_U(jitanon_rangemap_copy(&c, &m, NULL), JITANON_OK);
    jitanon_rangemap_assign(&m, 0, 0x1000, 2, 9, NULL); /* the copy is independent */
    TT_MAP_IS(&c, "100-200:1/1 300-400:1/2 400-500:1/3");
    TT_MAP_IS(&m, "0-1000:2/9");
    jitanon_rangemap_release(&m);
    JT_CHECK_EQ_U(jitanon_rangemap_copy(&c, &m, NULL), JITANON_OK); /* copying an empty map empties */
    JT_CHECK_EQ_U(jitanon_rangemap_count(&c), 0);
    jitanon_rangemap_release(&c);
}

/* The map's state comes with its first change: init, reads of an empty map, an erase of
   one and a copy of one allocate nothing; the map moves by value; _release frees every
   byte and the map is reusable; the generation only grows (the caches compare it). */
static void test_trim_rangemap_lazy(void)
{
    jt_alloc a;
    jitanon_allocator al = jt_allocator(&a);
    jitanon_rangemap m, c, moved;
    jitanon_rangemap_iter it;
    jitanon_range r;
    uint64_t gen;
    jitanon_rangemap_init(&m, &al);
    jitanon_rangemap_init(&c, &al);
    JT_CHECK(!jitanon_rangemap_lookup(&m, 5, &r) && r.kind == 0);
    JT_CHECK(!jitanon__rm_find_cached(&m, 5, &r));
    jitanon_rangemap_iter_begin(&it, &m, 0, UINT64_MAX);
    JT_CHECK(!jitanon_rangemap_iter_next(&it, &r));
    jitanon_rangemap_iter_begin_all(&it, &m);
    JT_CHECK(!jitanon_rangemap_iter_next(&it, &r));
    JT_CHECK_EQ_U(jitanon_rangemap_count(&m), 0);
    gen = m.gen_;
    JT_CHECK_EQ_U(jitanon_rangemap_erase(&m, 0, 0x1000, NULL), JITANON_OK);
    JT_CHECK(m.gen_ > gen);
    JT_CHECK_EQ_U(jitanon_rangemap_copy(&c, &m, NULL), JITANON_OK);
    JT_CHECK(m.state_ == NULL && c.state_ == NULL);
    JT_CHECK_EQ_U(a.calls, 0);
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&m, 0x100, 0x100, 1, 7, NULL), JITANON_OK);
    JT_CHECK(a.calls > 0 && m.state_ != NULL);
    moved = m; /* by value: m is not used again */
    JT_CHECK(jitanon__rm_find_cached(&moved, 0x180, &r) && r.id == 7);
    JT_CHECK(jitanon_rangemap_lookup(&moved, 0x1ff, &r) && r.id == 7 && r.len == 0x100);
    gen = moved.gen_;
    jitanon_rangemap_release(&moved);
    JT_CHECK(moved.gen_ > gen && moved.state_ == NULL);
    JT_CHECK_EQ_U(a.live_bytes, 0);
    JT_CHECK(!jitanon__rm_find_cached(&moved, 0x180, &r)); /* nothing stale answers */
    JT_CHECK_EQ_U(jitanon_rangemap_assign(&moved, 0x200, 0x10, 2, 8, NULL), JITANON_OK); /* reusable */
    JT_CHECK(moved.gen_ > gen + 1);
    TT_MAP_IS(&moved, "200-210:2/8");
    a.fail_at = a.calls + 1; /* the copy cannot allocate: c is unchanged */
    JT_CHECK_EQ_U(jitanon_rangemap_copy(&c, &moved, NULL), JITANON_ERR_NOMEM);
    JT_CHECK(c.state_ == NULL);
    a.fail_at = 0;
    JT_CHECK_EQ_U(jitanon_rangemap_copy(&c, &moved, NULL), JITANON_OK);
    TT_MAP_IS(&c, "200-210:2/8");
    jitanon_rangemap_release(&moved);
    jitanon_rangemap_release(&c);
    JT_CHECK_EQ_U(a.live_bytes, 0);
    JT_CHECK_EQ_U(a.live_blocks, 0);
}

/* The rangemap against an array of cells, over a small space at the bottom and at the top
   of the address range. */
static void test_trim_rangemap_random(void)
{
    enum { SPAN = 256 };
    uint64_t seed = 0x5eed0001, s = seed, base, cells[SPAN];
    jitanon_rangemap m;
    jitanon_range r;
    jitanon_rangemap_iter it;
    int round, step, bad = 0;
    for (round = 0; round < 200 && !bad; round++) {
        base = round & 1 ? UINT64_MAX - (SPAN - 1) : 0;
        memset(cells, 0, sizeof cells);
        jitanon_rangemap_init(&m, NULL);
        for (step = 0; step < 200 && !bad; step++) {
            uint64_t off = tm_rand(&s) % SPAN, len = 1 + tm_rand(&s) % 48, kind = tm_rand(&s) % 4, x, prev_end;
            if (off + len > SPAN) len = SPAN - off;
            if (jitanon_rangemap_assign(&m, base + off, len, (uint32_t)kind, (uint64_t)step, NULL) != JITANON_OK)
                bad = 1;
            for (x = off; x < off + len; x++) cells[x] = kind ? (kind << 32 | (uint64_t)step) : 0;
            for (x = 0; x < SPAN && !bad; x++) {
                int found = jitanon_rangemap_lookup(&m, base + x, &r);
                if (found != (cells[x] != 0) || (found && (r.kind != cells[x] >> 32 || r.id != (uint32_t)cells[x])))
                    bad = 2;
            }
            /* iteration: sorted, disjoint, and every piece agrees with the cells */
            jitanon_rangemap_iter_begin_all(&it, &m);
            prev_end = 0;
            while (!bad && jitanon_rangemap_iter_next(&it, &r)) {
                if (r.start - base < prev_end || r.len == 0) bad = 3;
                else if (cells[r.start - base] >> 32 != r.kind || cells[r.start - base + r.len - 1] >> 32 != r.kind) bad = 4;
                prev_end = r.start - base + r.len;
            }
        }
        jitanon_rangemap_release(&m);
    }
    if (bad) fprintf(stderr, "  rangemap random: failure %d, seed %llx round %d\n", bad, (unsigned long long)seed, round - 1);
    JT_CHECK(!bad);
}

/* The engine's calls with the event's fields in perf's order, so each test line reads as
   the record it replays. */
static jitanon_trim *tt_new(void)
{
    jitanon_trim *t = NULL;
    return jitanon_trim_create(NULL, &t, NULL) == JITANON_OK ? t : NULL;
}

static jitanon_trim_event tt_ev(uint32_t pid, uint64_t time, uint64_t start, uint64_t len, uint64_t pgoff,
                                jitanon_trim_kind kind, uint64_t id)
{
    jitanon_trim_event e;
    e.pid = pid, e.kind = kind, e.time = time, e.start = start, e.len = len, e.pgoff = pgoff, e.id = id;
    return e;
}

static jitanon_result tt_load(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t start, uint64_t len,
                              uint64_t id, jitanon_error *err)
{
    jitanon_trim_event e = tt_ev(pid, time, start, len, 0, JITANON_TRIM_JIT, id);
    return jitanon_trim_load(t, &e, err);
}

static jitanon_result tt_mmap(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t start, uint64_t len,
                              uint64_t pgoff, jitanon_trim_kind kind, uint64_t id, const jitanon_trim_piece **p,
                              size_t *n, jitanon_error *err)
{
    jitanon_trim_event e = tt_ev(pid, time, start, len, pgoff, kind, id);
    return jitanon_trim_mmap(t, &e, p, n, err);
}

/* -- engine unit tests ------------------------------------------------------------------- */

/* The //anon problem itself: two functions loaded, then the kernel reports the whole
   merged region.  We keep the parts around the functions. */
static void test_trim_basic(void)
{
    jitanon_trim *t = tt_new();
    const jitanon_trim_piece *p;
    size_t n;
    jitanon_range r;
    JT_CHECK(t != NULL);
    if (!t) return;
    JT_CHECK_EQ_U(jitanon_trim_set_jitdump(t, 42, NULL), JITANON_OK);
    JT_CHECK_EQ_U(tt_mmap(t, 42, 5, 0x10000, 0x1000, 0x10000, JITANON_TRIM_ANON, 100, &p, &n, NULL),
                  JITANON_OK);
    JT_CHECK(n == 1 && p[0].start == 0x10000 && p[0].len == 0x1000); /* nothing jitted yet: kept */
    tt_load(t, 42, 10, 0x10100, 0x80, 1, NULL);
    tt_load(t, 42, 11, 0x10180, 0x80, 2, NULL);
    tt_load(t, 42, 12, 0x10400, 0x100, 3, NULL);
    JT_CHECK_EQ_U(tt_mmap(t, 42, 20, 0x10000, 0x4000, 0x10000, JITANON_TRIM_ANON, 101, &p, &n, NULL),
                  JITANON_OK);
    JT_CHECK_EQ_U(n, 3);
    if (n == 3) {
        JT_CHECK(p[0].start == 0x10000 && p[0].len == 0x100 && p[0].pgoff == 0x10000);
        JT_CHECK(p[1].start == 0x10200 && p[1].len == 0x200 && p[1].pgoff == 0x10200);
        JT_CHECK(p[2].start == 0x10500 && p[2].len == 0x3b00 && p[2].pgoff == 0x10500);
    }
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 42, 0x101ff, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(r.id, 2);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 42, 0x10200, &r), JITANON_TRIM_ANON);
    JT_CHECK_EQ_U(r.id, 101);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 42, 0x14000, &r), JITANON_TRIM_NONE);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 7, 0x10200, &r), JITANON_TRIM_NONE); /* unknown pid */
    /* Wholly on jit code: dropped. */
    JT_CHECK_EQ_U(tt_mmap(t, 42, 21, 0x10100, 0x100, 0, JITANON_TRIM_ANON, 102, &p, &n, NULL), JITANON_OK);
    JT_CHECK(n == 0 && p == NULL);
    /* A file mapping replaces jit code (perf would show the file), and is never cut. */
    JT_CHECK_EQ_U(tt_mmap(t, 42, 22, 0x10400, 0x10, 0, JITANON_TRIM_FILE, 103, &p, &n, NULL), JITANON_OK);
    JT_CHECK(n == 1 && p[0].start == 0x10400 && p[0].len == 0x10);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 42, 0x10400, &r), JITANON_TRIM_FILE);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 42, 0x10410, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->kept, 1);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->split, 1);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->dropped, 1);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->pieces, 4);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->loads, 3);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->file_mmaps, 1);
    jitanon_trim_destroy(t);
}

/* A kernel with 64 KiB pages (arm64 RHEL, Ampere servers): the JIT's mappings come in
   64 KiB steps and functions cross 4 KiB boundaries inside them.  Trimming cuts at the
   functions' bytes, not at pages, so nothing changes: the pieces end where code starts,
   whatever the page size, and the cached lookup (its hit table is keyed by 4 KiB
   granule, not by the kernel's page) answers as the plain one at every address. */
static void test_trim_64k_pages(void)
{
    const uint64_t base = 0xffff8c000000ull, page = 0x10000;
    jitanon_trim *t = tt_new();
    const jitanon_trim_piece *p;
    jitanon_range r, f;
    uint64_t a;
    size_t n;
    JT_CHECK(t != NULL);
    if (!t) return;
    JT_CHECK_EQ_U(jitanon_trim_set_jitdump(t, 9, NULL), JITANON_OK);
    JT_CHECK_EQ_U(tt_mmap(t, 9, 5, base, page, base, JITANON_TRIM_ANON, 100, &p, &n, NULL), JITANON_OK);
    tt_load(t, 9, 10, base + 0x100, 0x80, 1, NULL);
    tt_load(t, 9, 11, base + 0xff0, 0x20, 2, NULL);            /* across a 4 KiB boundary */
    tt_load(t, 9, 12, base + page - 0x100, 0x180, 3, NULL);    /* across the 64 KiB page */
    /* the code space grows by a page: one r-x //anon over both, after the loads */
    JT_CHECK_EQ_U(tt_mmap(t, 9, 20, base, 2 * page, base, JITANON_TRIM_ANON, 101, &p, &n, NULL), JITANON_OK);
    JT_CHECK_EQ_U(n, 4);
    if (n == 4) {
        JT_CHECK(p[0].start == base && p[0].len == 0x100 && p[0].pgoff == base);
        JT_CHECK(p[1].start == base + 0x180 && p[1].len == 0xff0 - 0x180);
        JT_CHECK(p[2].start == base + 0x1010 && p[2].len == page - 0x100 - 0x1010);
        JT_CHECK(p[3].start == base + page + 0x80 && p[3].len == page - 0x80 && p[3].pgoff == base + page + 0x80);
    }
    TT_MAP_IS(jitanon_trim_map(t, 9), "ffff8c000000-ffff8c000100:2/101 ffff8c000100-ffff8c000180:1/1 "
                                      "ffff8c000180-ffff8c000ff0:2/101 ffff8c000ff0-ffff8c001010:1/2 "
                                      "ffff8c001010-ffff8c00ff00:2/101 ffff8c00ff00-ffff8c010080:1/3 "
                                      "ffff8c010080-ffff8c020000:2/101");
    for (a = base - 0x10; a < base + 2 * page + 0x10; a += 0x10) {
        jitanon_trim_kind k = jitanon_trim_resolve(t, 9, a, &r);
        JT_CHECK_EQ_U(jitanon__trim_resolve_fast(t, 9, a, &f), k);
        if (k != JITANON_TRIM_NONE) JT_CHECK(f.start == r.start && f.len == r.len && f.id == r.id);
    }
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 9, base + 0x1000, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(r.id, 2);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 9, base + page, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(r.id, 3);
    jitanon_trim_destroy(t);
}

/* Without a jitdump, perf's plain behaviour: the anon map is kept whole and wins. */
static void test_trim_no_jitdump(void)
{
    jitanon_trim *t = tt_new();
    const jitanon_trim_piece *p;
    size_t n;
    if (!t) return;
    tt_load(t, 1, 1, 0x1000, 0x100, 1, NULL);
    JT_CHECK_EQ_U(tt_mmap(t, 1, 2, 0x0, 0x10000, 0, JITANON_TRIM_ANON, 9, &p, &n, NULL), JITANON_OK);
    JT_CHECK(n == 1 && p[0].start == 0 && p[0].len == 0x10000);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, NULL), JITANON_TRIM_ANON);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->untrimmed, 1);
    jitanon_trim_destroy(t);
}

/* Equal timestamps: feed order decides, the later event wins. */
static void test_trim_equal_time(void)
{
    jitanon_trim *t = tt_new();
    size_t n;
    jitanon_range r;
    if (!t) return;
    jitanon_trim_set_jitdump(t, 1, NULL);
    tt_load(t, 1, 50, 0x1000, 0x100, 1, NULL);
    tt_mmap(t, 1, 50, 0x0, 0x2000, 0, JITANON_TRIM_ANON, 9, NULL, &n, NULL); /* after the load: cut */
    JT_CHECK_EQ_U(n, 2);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, &r), JITANON_TRIM_JIT);
    tt_mmap(t, 1, 50, 0x1000, 0x10, 0, JITANON_TRIM_FILE, 10, NULL, &n, NULL); /* file after: wins */
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, &r), JITANON_TRIM_FILE);
    tt_load(t, 1, 50, 0x1000, 0x8, 2, NULL); /* load after the file: wins */
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(r.id, 2);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->out_of_order, 0);
    jitanon_trim_destroy(t);
}

/* A move makes the new range jit-owned and leaves the old one mapped, as perf does. */
static void test_trim_move(void)
{
    jitanon_trim *t = tt_new();
    jitanon_range r;
    size_t n;
    if (!t) return;
    jitanon_trim_set_jitdump(t, 1, NULL);
    tt_load(t, 1, 1, 0x1000, 0x100, 7, NULL);
    {
        jitanon_trim_event mv = tt_ev(1, 2, 0x3000, 0x100, 0, JITANON_TRIM_JIT, 7);
        JT_CHECK_EQ_U(jitanon_trim_move(t, &mv, NULL), JITANON_OK);
    }
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x30ff, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(r.id, 7);
    tt_mmap(t, 1, 3, 0x0, 0x4000, 0, JITANON_TRIM_ANON, 9, NULL, &n, NULL);
    JT_CHECK_EQ_U(n, 3); /* both copies stay live */
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->moves, 1);
    jitanon_trim_destroy(t);
}

static void test_trim_fork_forget(void)
{
    jitanon_trim *t = tt_new();
    jitanon_range r;
    size_t n, i;
    if (!t) return;
    jitanon_trim_set_jitdump(t, 1, NULL);
    tt_load(t, 1, 1, 0x1000, 0x100, 7, NULL);
    JT_CHECK_EQ_U(jitanon_trim_fork(t, 1, 2, NULL), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 2, 0x1000, &r), JITANON_TRIM_JIT); /* inherited */
    tt_mmap(t, 2, 2, 0x0, 0x4000, 0, JITANON_TRIM_ANON, 9, NULL, &n, NULL);
    JT_CHECK_EQ_U(n, 1); /* the child has no jitdump: not trimmed */
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 2, 0x1000, &r), JITANON_TRIM_ANON);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, &r), JITANON_TRIM_JIT); /* parent untouched */
    JT_CHECK_EQ_U(jitanon_trim_fork(t, 1, 1, NULL), JITANON_OK); /* a thread: no-op */
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, &r), JITANON_TRIM_JIT);
    JT_CHECK_EQ_U(jitanon_trim_fork(t, 99, 2, NULL), JITANON_OK); /* unknown parent: fresh child */
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 2, 0x1000, &r), JITANON_TRIM_NONE);
    JT_CHECK(jitanon_trim_map(t, 2) == NULL);
    /* Many processes, forgotten in an order that moves entries around the dense table. */
    for (i = 10; i < 60; i++) tt_load(t, (uint32_t)i, 1, i << 12, 0x10, i, NULL);
    for (i = 10; i < 60; i += 3) jitanon_trim_forget(t, (uint32_t)i);
    for (i = 10; i < 60; i++)
        JT_CHECK_EQ_U(jitanon_trim_resolve(t, (uint32_t)i, i << 12, &r), (i - 10) % 3 ? JITANON_TRIM_JIT : JITANON_TRIM_NONE);
    jitanon_trim_forget(t, 1);
    jitanon_trim_forget(t, 1);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x1000, &r), JITANON_TRIM_NONE);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->processes, 33);
    jitanon_trim_destroy(t);
}

static void test_trim_errors(void)
{
    jitanon_trim_opts o;
    jitanon_trim *t;
    jitanon_error err;
    const jitanon_trim_piece *p;
    size_t n = 5;
    memset(&o, 0, sizeof o);
    o.end_zero_ = 1;
    t = (jitanon_trim *)&o; /* must be cleared on failure */
    JT_CHECK_EQ_U(jitanon_trim_create(&o, &t, &err), JITANON_ERR_BAD_OPTIONS);
    JT_CHECK(t == NULL);
    JT_CHECK_EQ_U(err.type, JITANON_ERR_BAD_OPTIONS);
    o.end_zero_ = 0;
    o.reject_out_of_order_ = 1;
    jitanon_trim_create(&o, &t, &err);
    JT_CHECK(t != NULL);
    if (!t) return;
    JT_CHECK_EQ_U(tt_load(t, 1, 5, UINT64_MAX, 2, 1, &err), JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK_EQ_U(tt_load(t, 1, 5, 0x100, 0, 1, &err), JITANON_OK); /* size 0: no-op */
    JT_CHECK(jitanon_trim_map(t, 1) == NULL);                               /* ...creates nothing */
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->loads, 0);
    JT_CHECK_EQ_U(tt_mmap(t, 1, 5, 2, UINT64_MAX, 0, JITANON_TRIM_ANON, 1, &p, &n, &err),
                  JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK(n == 0 && p == NULL);
    JT_CHECK_EQ_U(tt_mmap(t, 1, 5, 2, 10, 0, JITANON_TRIM_JIT, 1, &p, &n, &err),
                  JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK_EQ_U(tt_mmap(t, 1, 5, 0x40, 0, 0x77, JITANON_TRIM_ANON, 1, &p, &n, &err), JITANON_OK);
    JT_CHECK(n == 1 && p[0].start == 0x40 && p[0].len == 0 && p[0].pgoff == 0x77); /* len 0: passed through */
    JT_CHECK_EQ_U(tt_load(t, 1, 5, UINT64_MAX - 1, 2, 1, &err), JITANON_OK); /* ends at the top */
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, UINT64_MAX, NULL), JITANON_TRIM_JIT);
    /* Out of order: rejected here, counted (and applied) without the option. */
    JT_CHECK_EQ_U(tt_load(t, 1, 4, 0x100, 1, 1, &err), JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, 0x100, NULL), JITANON_TRIM_NONE);
    jitanon_trim_destroy(t);
    t = tt_new();
    if (!t) return;
    tt_load(t, 1, 5, 0x100, 1, 1, NULL);
    JT_CHECK_EQ_U(tt_load(t, 1, 4, 0x200, 1, 1, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->out_of_order, 1);
    JT_CHECK_EQ_U(tt_load(t, 2, 1, 0x200, 1, 1, &err), JITANON_OK); /* clocks are per process */
    JT_CHECK_EQ_U(jitanon_trim_get_stats(t)->out_of_order, 1);
    jitanon_trim_destroy(t);
    jitanon_trim_destroy(NULL);
}

static void test_trim_classify(void)
{
    JT_CHECK_EQ_U(jitanon_trim_classify("//anon", 6), JITANON_TRIM_ANON);
    JT_CHECK_EQ_U(jitanon_trim_classify("[anon:v8 code]", 14), JITANON_TRIM_ANON);
    JT_CHECK_EQ_U(jitanon_trim_classify("/memfd:doublemapper (deleted)", 29), JITANON_TRIM_ANON);
    /* shared anonymous memory (PHP's opcache JIT buffer) */
    JT_CHECK_EQ_U(jitanon_trim_classify("/dev/zero (deleted)", 19), JITANON_TRIM_ANON);
    JT_CHECK_EQ_U(jitanon_trim_classify("/dev/zer", 8), JITANON_TRIM_FILE);
    JT_CHECK_EQ_U(jitanon_trim_classify("/dev/null", 9), JITANON_TRIM_FILE);
    JT_CHECK_EQ_U(jitanon_trim_classify("//anon", 5), JITANON_TRIM_FILE); /* too short for the prefix */
    JT_CHECK_EQ_U(jitanon_trim_classify("/usr/lib/libc.so.6", 18), JITANON_TRIM_FILE);
    JT_CHECK_EQ_U(jitanon_trim_classify("[heap]", 6), JITANON_TRIM_FILE);
    JT_CHECK_EQ_U(jitanon_trim_classify(NULL, 0), JITANON_TRIM_FILE);
}

/* -- property test ------------------------------------------------------------------------ */

/* A random sequence: a few pids in a 1 KiB window (at 0, mid-space or the very top of the
   address space, where ranges can wrap), so that nearly everything overlaps. */
static size_t tt_gen(uint64_t *s, tm_ev *ev, size_t max)
{
    static const uint64_t bases[4] = {0, UINT64_MAX - 1023, 1ull << 40, 0x7fff0000};
    uint64_t base = bases[tm_rand(s) % 4], time = tm_rand(s) % 1000;
    uint32_t npids = 1 + (uint32_t)(tm_rand(s) % 4), pid;
    size_t n = 0, len = max / 2 + (size_t)(tm_rand(s) % (max / 2));
    for (pid = 0; pid < npids; pid++) /* most pids have a jitdump from the start */
        if (tm_rand(s) % 10 < 7) {
            memset(&ev[n], 0, sizeof ev[n]);
            ev[n].op = TM_JITDUMP;
            ev[n++].pid = pid;
        }
    while (n < len) {
        tm_ev *e = &ev[n];
        uint64_t w = tm_rand(s) % 100, l = tm_rand(s) % 16;
        memset(e, 0, sizeof *e);
        e->op = w < 22 ? TM_LOAD : w < 26 ? TM_MOVE : w < 44 ? TM_ANON : w < 50 ? TM_FILE : w < 92 ? TM_SAMPLE
              : w < 95 ? TM_JITDUMP : w < 98 ? TM_FORK : TM_FORGET;
        e->pid = (uint32_t)(tm_rand(s) % npids);
        e->pid2 = (uint32_t)(tm_rand(s) % npids);
        time += tm_rand(s) % 3 == 0;
        e->time = time;
        e->start = base + tm_rand(s) % 1024;
        e->len = l == 0 && tm_rand(s) % 2 ? 0 : l < 10 ? 1 + tm_rand(s) % 64 : l < 14 ? 1 + tm_rand(s) % 256 : 1 + tm_rand(s) % 1024;
        e->id = (uint64_t)n + 1;
        e->pgoff = e->op == TM_FILE ? (tm_rand(s) % 16) << 12 : e->op == TM_MOVE ? base + tm_rand(s) % 1024 : e->start;
        if (e->op == TM_SAMPLE && n && tm_rand(s) % 2) { /* aim at a boundary of an earlier event */
            const tm_ev *o = &ev[tm_rand(s) % n];
            uint64_t k = tm_rand(s) % 4;
            e->start = k == 0 ? o->start - 1 : k == 1 ? o->start : k == 2 ? o->start + o->len - 1 : o->start + o->len;
        }
        n++;
    }
    return n;
}

static void test_trim_property(void)
{
    enum { CASES = 2000, MAXEV = 320 };
    static tm_ev ev[MAXEV];
    uint64_t seed = 0x7417a4b0u, s = seed, samples = 0, pieces = 0, events = 0;
    tm_run run;
    int i, bad = 0;
    clock_t t0 = clock();
    for (i = 0; i < CASES && !bad; i++) {
        uint64_t case_seed = tm_rand(&s);
        uint64_t cs = case_seed;
        size_t n = tt_gen(&cs, ev, MAXEV);
        memset(&run, 0, sizeof run);
        bad = tm_check(ev, n, &run);
        if (bad)
            fprintf(stderr, "  property: case %d (seed %llx, case seed %llx, %lu events): %s\n", i,
                    (unsigned long long)seed, (unsigned long long)case_seed, (unsigned long)n, run.why);
        samples += run.samples;
        pieces += run.pieces;
        events += n;
    }
    printf("  trim property: %d sequences, %llu events, %llu resolutions checked, %llu pieces, %.2f s (seed %llx)\n",
           i, (unsigned long long)events, (unsigned long long)samples, (unsigned long long)pieces,
           (double)(clock() - t0) / CLOCKS_PER_SEC, (unsigned long long)seed);
    JT_CHECK(!bad);
}

/* Allocation failure at every point: (1) a single failure, after which the failed call
   must have changed nothing and a retry must succeed and give the right answers; (2) every
   allocation from n on failing: a typed error, and after freeing, no leaked byte. */
static int tt_alloc_sweep(uint64_t seed, size_t *points)
{
    static tm_ev ev[240];
    uint64_t s = seed;
    size_t n = tt_gen(&s, ev, 240), total, k;
    jt_alloc a;
    jitanon_trim_opts o;
    tm_run run;
    int bad = 0, r;
    memset(&o, 0, sizeof o);
    o.allocator = jt_allocator(&a);
    memset(&run, 0, sizeof run);
    run.opts = &o;
    run.plain_only = 1;
    if (tm_check(ev, n, &run) != 0 || a.live_bytes) return -1;
    total = (size_t)a.calls;
    for (k = 1; k <= total + 1 && !bad; k++) {
        memset(&a, 0, sizeof a);
        a.fail_at = (long)k;
        memset(&run, 0, sizeof run);
        run.opts = &o;
        run.plain_only = 1;
        run.retry_on_error = k > 1; /* k == 1 is the engine struct itself */
        r = tm_check(ev, n, &run);
        if (k == 1 ? (r != 2 || run.stopped_by != JITANON_ERR_NOMEM) : r != 0) bad = 1;
        if (a.live_bytes) bad = 2;
        memset(&a, 0, sizeof a);
        a.fail_at = (long)k;
        a.fail_after = 1;
        memset(&run, 0, sizeof run);
        run.opts = &o;
        run.plain_only = 1;
        r = tm_check(ev, n, &run);
        if (k <= total && (r != 2 || run.stopped_by != JITANON_ERR_NOMEM)) bad = 3;
        if (a.live_bytes) bad = 4;
        if (bad)
            fprintf(stderr, "  alloc fail (seed %llx) at %lu: failure %d, r=%d (%s) %s\n", (unsigned long long)seed,
                    (unsigned long)k, bad, r, jitanon_result_string(run.stopped_by), run.why);
    }
    *points += total;
    return bad;
}

/* Allocation failure at every point: (1) a single failure, after which the failed call
   must have changed nothing and a retry must succeed and give the right answers; (2) every
   allocation from n on failing: a typed error, and after freeing, no leaked byte. */
static void test_trim_alloc_fail(void)
{
    size_t points = 0;
    uint64_t seed;
    int bad = 0;
    for (seed = 1; seed <= 8 && !bad; seed++) bad = tt_alloc_sweep(seed * 0xa110c, &points);
    printf("  trim alloc-fail: %lu allocation points over 8 sequences, each failed once and for good\n",
           (unsigned long)points);
    JT_CHECK(!bad);
}

static void test_trim_memory_limit(void)
{
    jitanon_trim_opts o;
    jitanon_trim *t;
    jitanon_error err;
    jitanon_result r = JITANON_OK;
    uint64_t i;
    memset(&o, 0, sizeof o);
    o.memory_limit = 4096;
    jitanon_trim_create(&o, &t, &err);
    if (!t) return;
    for (i = 0; i < 1000 && r == JITANON_OK; i++) r = tt_load(t, 1, i, i * 16, 8, i, &err);
    JT_CHECK_EQ_U(r, JITANON_ERR_LIMIT);
    JT_CHECK_EQ_U(err.type, JITANON_ERR_LIMIT);
    JT_CHECK(jitanon_trim_get_stats(t)->peak_bytes <= 4096);
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, (i - 2) * 16, NULL), JITANON_TRIM_JIT); /* earlier ones stay */
    JT_CHECK_EQ_U(jitanon_trim_resolve(t, 1, (i - 1) * 16, NULL), JITANON_TRIM_NONE); /* the failed one is absent */
    jitanon_trim_destroy(t);
}

/* 1e5 loads (sequential, then random), anon mmaps over growing regions, and lookups:
   must stay near n log n.  Prints the time; asserts only correctness. */
static void test_trim_scale(void)
{
    enum { N = 100000 };
    jitanon_trim *t = tt_new();
    uint64_t i, s = 0x5ca1e, bad = 0, pieces = 0;
    size_t n;
    clock_t t0 = clock();
    double dt1, dt2;
    if (!t) return;
    jitanon_trim_set_jitdump(t, 1, NULL);
    for (i = 0; i < N; i++) { /* a code cache filling up, remapped whole every 10000 functions */
        tt_load(t, 1, i, 0x100000 + i * 64, 48, i + 1, NULL);
        if (i % 10000 == 9999) {
            tt_mmap(t, 1, i, 0x100000, (i + 1) * 64 + 4096, 0, JITANON_TRIM_ANON, i, NULL, &n, NULL);
            pieces += n;
        }
    }
    for (i = 0; i < N; i++) bad += jitanon_trim_resolve(t, 1, 0x100000 + i * 64 + 47, NULL) != JITANON_TRIM_JIT;
    dt1 = (double)(clock() - t0) / CLOCKS_PER_SEC;
    t0 = clock();
    jitanon_trim_set_jitdump(t, 2, NULL);
    for (i = 0; i < N; i++) tt_load(t, 2, i, (tm_rand(&s) % (1u << 30)) & ~63ull, 64, i + 1, NULL);
    tt_mmap(t, 2, N, 0, 1u << 30, 0, JITANON_TRIM_ANON, 7, NULL, &n, NULL);
    dt2 = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("  trim scale: %d sequential loads + 10 remaps + %d lookups %.3f s (%llu pieces); %d random loads "
           "+ one full remap %.3f s (%lu pieces, %lu map entries)\n",
           N, N, dt1, (unsigned long long)pieces, N, dt2, (unsigned long)n,
           (unsigned long)jitanon_rangemap_count(jitanon_trim_map(t, 2)));
    JT_CHECK_EQ_U(bad, 0);
    JT_CHECK_EQ_U(pieces, 10000 * 55); /* the gaps between functions so far, the last one with the free tail */
    jitanon_trim_destroy(t);
}

static void suite_trim(void)
{
    JT_RUN(test_trim_rangemap_edges);
    JT_RUN(test_trim_rangemap_iter);
    JT_RUN(test_trim_rangemap_lazy);
    JT_RUN(test_trim_rangemap_random);
    JT_RUN(test_trim_basic);
    JT_RUN(test_trim_64k_pages);
    JT_RUN(test_trim_no_jitdump);
    JT_RUN(test_trim_equal_time);
    JT_RUN(test_trim_move);
    JT_RUN(test_trim_fork_forget);
    JT_RUN(test_trim_errors);
    JT_RUN(test_trim_classify);
    JT_RUN(test_trim_property);
    JT_RUN(test_trim_alloc_fail);
    JT_RUN(test_trim_memory_limit);
    JT_RUN(test_trim_scale);
}
JT_SUITE(trim)
#undef JT_SUITES
#define JT_SUITES jt_suites_trim
