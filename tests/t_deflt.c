/* The lookup cache's copies of piece bounds (issue #23): a slot, a big piece or a sorted
   array entry whose copy no longer matches its piece must fall back, never answer. */

/* Pieces shrink, grow and move under cached copies: lookups right after every change
   (stale copies) and after a forced rebuild of the sorted array agree with the tree,
   also for pieces longer than 4 GiB (whose length the array does not keep). */
static void test_deflt_rm_stale_copies(void)
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
        if (step % 97 == 0) (void)jitanon__rm_flatten(&m);
        for (k = 0; k < 40 && !bad; k++) {
            /* near the change (its edges, where copies go stale), else anywhere */
            a = k & 1 ? base + off + len - 2 + tm_rand(&s) % 4 - (tm_rand(&s) % 2) * (len - 1)
                      : base + (tm_rand(&s) % ((uint64_t)9 << 32));
            if (jitanon__rm_find(&m, a) != jitanon__rm_find_fast(&m, a)) bad = 2;
        }
    }
    JT_CHECK_EQ_U(bad, 0);
    JT_CHECK(m.flat_ != NULL);
    jitanon_rangemap_release(&m);
}

/* A JIT's pattern, which the sorted array follows without a rebuild: functions placed
   upward in an anonymous region (each splitting off the rest of it), some freed or
   replaced.  Every cached answer - node and, from the hit table's or the array's copies,
   the piece's bounds, kind and id - agrees with the tree's right after each change. */
static void test_deflt_rm_appends(void)
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
        if (step % 4999 == 0) (void)jitanon__rm_flatten(&m);
        for (k = 0; k < 8 && !bad; k++) {
            a = k & 1 ? cur - tm_rand(&s) % 8192 : base + tm_rand(&s) % (cur - base + 4096);
            i = jitanon__rm_find(&m, a);
            at = jitanon__rm_find_flat(&m, a, &at) ? at : 0; /* would the sorted array answer? */
            c = jitanon__rm_find_cached(&m, a, &got);
            if (i != c) bad = 2;
            else if (i) {
                jitanon__rm_out(&m, i, &want);
                from_array += at != 0;
                if (want.start != got.start || want.len != got.len || want.kind != got.kind || want.id != got.id) bad = 3;
            }
        }
    }
    JT_CHECK_EQ_U(bad, 0);
    JT_CHECK(from_array > 50000); /* most answers came from the array's copies */
    jitanon_rangemap_release(&m);
}

static void suite_deflt(void)
{
    JT_RUN(test_deflt_rm_stale_copies);
    JT_RUN(test_deflt_rm_appends);
}
JT_SUITE(deflt)
#undef JT_SUITES
#define JT_SUITES jt_suites_deflt
