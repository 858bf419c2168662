/* The rangemap's lookup cache (issue #23, the per-sample path: doc/HACKING.md): every
   answer of jitanon__rm_find_cached / _fast - from the page table's slots, the hit table
   or the sorted array's copies of piece bounds - against the plain tree, and the trimming
   engine's cached resolve (jitanon__trim_resolve_fast) against jitanon_trim_resolve.  A
   copy that no longer matches its piece must fall back, never answer. */

/* The tree's own answer (a map never changed has no state: empty). */
static uint32_t rmc_find(const jitanon_rangemap *m, uint64_t a) { return m->state_ ? jitanon__rm_find(m->state_, a) : 0; }

/* Random assigns and erases over a small span (so pieces are cut, merged and freed, and
   freed nodes come back for other ranges), interleaved with runs of lookups through the
   cache: every answer must be the tree's.  Some lookups repeat the last address, some hit
   pieces of 64 KiB or more, so all three layers of the cache answer. */
static void test_rmcache_random(void)
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
                uint32_t want = rmc_find(&m, a), got = jitanon__rm_find_fast(&m, a);
                if (want != got) bad = 2;
                last_addr = a + tm_rand(&s) % 64;
            }
        }
        hits_flat += m.state_->flat != NULL;
        /* a copy answers the same through its own cache */
        jitanon_rangemap_init(&copy, NULL);
        if (!bad && jitanon_rangemap_copy(&copy, &m, NULL) != JITANON_OK) bad = 3;
        for (k = 0; k < 2000 && !bad; k++) {
            uint64_t a = base + tm_rand(&s) % ((uint64_t)4096 << 12);
            uint32_t want = rmc_find(&m, a), got = jitanon__rm_find_fast(&copy, a);
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
static void test_rmcache_trim_resolve(void)
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

/* Pieces shrink, grow and move under cached copies: lookups right after every change
   (stale copies) and after a forced rebuild of the sorted array agree with the tree,
   also for pieces longer than 4 GiB (whose length the array does not keep). */
static void test_rmcache_stale_copies(void)
{
    uint64_t s = 0x5eed2302, base = 0x100000000000ull;
    jitanon_rangemap m;
    int step, k, bad = 0;
    jitanon_rangemap_init(&m, NULL);
    for (step = 0; step < 3000 && !bad; step++) {
        uint64_t r = tm_rand(&s) % 16, off = (tm_rand(&s) % 65536) << 10, len, a;
        len = r == 0 ? (uint64_t)(1 + tm_rand(&s) % 8) << 32 : r < 4 ? (1 + tm_rand(&s) % 32) << 16 : 1 + tm_rand(&s) % 8192;
        if (jitanon_rangemap_assign(&m, base + off, len, (uint32_t)(tm_rand(&s) % 3), (uint64_t)step, NULL) != JITANON_OK)
            bad = 1;
        if (step % 97 == 0 && m.state_) (void)jitanon__rm_flatten(m.state_, &m.allocator);
        for (k = 0; k < 40 && !bad; k++) {
            /* near the change (its edges, where copies go stale), else anywhere */
            a = k & 1 ? base + off + len - 2 + tm_rand(&s) % 4 - (tm_rand(&s) % 2) * (len - 1)
                      : base + (tm_rand(&s) % ((uint64_t)9 << 32));
            if (rmc_find(&m, a) != jitanon__rm_find_fast(&m, a)) bad = 2;
        }
    }
    JT_CHECK_EQ_U(bad, 0);
    JT_CHECK(m.state_->flat != NULL);
    jitanon_rangemap_release(&m);
}

/* A JIT's pattern, which the sorted array follows without a rebuild: functions placed
   upward in an anonymous region (each splitting off the rest of it), some freed or
   replaced.  Every cached answer - node and, from the hit table's or the array's copies,
   the piece's bounds, kind and id - agrees with the tree's right after each change. */
static void test_rmcache_appends(void)
{
    uint64_t s = 0x5eed2303, base = 0x7f0000000000ull, cur = base, len, a;
    jitanon_rangemap m;
    jitanon_range want, got;
    uint32_t i, c, at;
    int step, k, bad = 0, from_array = 0;
    jitanon_rangemap_init(&m, NULL);
    JT_CHECK(jitanon_rangemap_assign(&m, base, (uint64_t)64 << 20, 1, 0, NULL) == JITANON_OK);
    for (step = 1; step < 20000 && !bad; step++) {
        uint64_t r = tm_rand(&s) % 10;
        len = 16 + tm_rand(&s) % 3000;
        if (r < 8) {
            if (jitanon_rangemap_assign(&m, cur, len, 2, (uint64_t)step, NULL) != JITANON_OK) bad = 1;
            cur += len + tm_rand(&s) % 64;
        } else if (jitanon_rangemap_assign(&m, base + tm_rand(&s) % (cur - base + 1), len, r == 8 ? 0 : 3,
                                           (uint64_t)step << 8, NULL) != JITANON_OK)
            bad = 1;
        if (step % 4999 == 0) (void)jitanon__rm_flatten(m.state_, &m.allocator);
        for (k = 0; k < 8 && !bad; k++) {
            a = k & 1 ? cur - tm_rand(&s) % 8192 : base + tm_rand(&s) % (cur - base + 4096);
            i = jitanon__rm_find(m.state_, a);
            at = jitanon__rm_find_flat(m.state_, a, &at) ? at : 0; /* would the sorted array answer? */
            c = jitanon__rm_find_cached(&m, a, &got);
            if (i != c) bad = 2;
            else if (i) {
                jitanon__rm_out(&m.state_->nodes[i], &want);
                from_array += at != 0;
                if (want.start != got.start || want.len != got.len || want.kind != got.kind || want.id != got.id) bad = 3;
            }
        }
    }
    JT_CHECK_EQ_U(bad, 0);
    JT_CHECK(from_array > 50000); /* most answers came from the array's copies */
    jitanon_rangemap_release(&m);
}

static void suite_rmcache(void)
{
    JT_RUN(test_rmcache_random);
    JT_RUN(test_rmcache_stale_copies);
    JT_RUN(test_rmcache_appends);
    JT_RUN(test_rmcache_trim_resolve);
}
JT_SUITE(rmcache)
#undef JT_SUITES
#define JT_SUITES jt_suites_rmcache
