/* Tests of the perf.data reader's short path for samples (issue #23): a recording with
   one attr takes it, the same records with a second attr (no id in the layout, so every
   record still belongs to attr 0) take the general path; both must decode every field
   the same, in both byte orders, for layouts with and without ids, callchains and READ,
   and give the same error for a damaged sample.  Uses the byte builder of t_perfdata.c. */

#define SCAN_NSAMPLES 40u

/* Fields in the order perf_event.h gives a SAMPLE's fixed part. */
static void scan_sample(pdt_b *b, uint64_t st, unsigned i, int damage)
{
    size_t at = pdt_hdr(b, JITANON_PERF_RECORD_SAMPLE, 2);
    unsigned k, nr = i % 3;
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) pdt_u64(b, 0x1d00 + i);
    if (st & JITANON_PERF_SAMPLE_IP) pdt_u64(b, 0x400000 + 16u * i);
    if (st & JITANON_PERF_SAMPLE_TID) pdt_u32(b, 100 + i), pdt_u32(b, 200 + i);
    if (st & JITANON_PERF_SAMPLE_TIME) pdt_u64(b, 1000000 + 7u * i);
    if (st & JITANON_PERF_SAMPLE_ADDR) pdt_u64(b, 0xadd0 + i);
    if (st & JITANON_PERF_SAMPLE_ID) pdt_u64(b, 0x1d00 + i);
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) pdt_u64(b, 0x5700 + i);
    if (st & JITANON_PERF_SAMPLE_CPU) pdt_u32(b, i % 4), pdt_u32(b, 0);
    if (st & JITANON_PERF_SAMPLE_PERIOD) pdt_u64(b, 4000 + i);
    if (st & JITANON_PERF_SAMPLE_READ) pdt_u64(b, 77);
    if (st & JITANON_PERF_SAMPLE_CALLCHAIN) {
        pdt_u64(b, damage ? 1000 : nr);
        for (k = 0; k < nr; k++) pdt_u64(b, 0x500000 + k);
    }
    pdt_end(b, at);
}

static void scan_attr(pdt_b *b, uint64_t st)
{
    uint64_t flags = 1ull << 18; /* sample_id_all */
    if (b->big) flags = jitanon__bitrev64(flags);
    pdt_u32(b, 1);
    pdt_u32(b, 128);
    pdt_u64(b, 0);
    pdt_u64(b, 4000);
    pdt_u64(b, st);
    pdt_u64(b, 0); /* read_format: one value */
    pdt_u64(b, flags);
    pdt_zero(b, 128 - 48);
    pdt_u64(b, 0), pdt_u64(b, 0); /* no ids */
}

/* A file: header, nattr attrs of sample_type st, SCAN_NSAMPLES samples (the one at
   `damage`, when below that, with a callchain running past it). */
static void scan_file(pdt_b *b, int big, uint64_t st, unsigned nattr, unsigned damage)
{
    size_t data_at = 104 + 144 * (size_t)nattr;
    unsigned i;
    memset(b, 0, sizeof *b);
    b->big = big;
    pdt_bytes(b, big ? "2ELIFREP" : "PERFILE2", 8);
    pdt_u64(b, 104);
    pdt_u64(b, 144);
    pdt_u64(b, 104), pdt_u64(b, 144 * (uint64_t)nattr);
    pdt_u64(b, data_at), pdt_u64(b, 0);
    pdt_zero(b, 104 - 56);
    for (i = 0; i < nattr; i++) scan_attr(b, st);
    JT_CHECK_EQ_U(pdt_pos(b), data_at);
    for (i = 0; i < SCAN_NSAMPLES; i++) scan_sample(b, st, i, i == damage);
    pdt_set64(b, 48, pdt_pos(b) - data_at);
}

static void scan_same_record(const jitanon_perf_record *a, const jitanon_perf_record *b)
{
    /* every field either path sets, compared one by one */
#define SCAN_SAME(f) JT_CHECK_EQ_U(a->f, b->f)
    SCAN_SAME(type); SCAN_SAME(misc); SCAN_SAME(size); SCAN_SAME(big_endian); SCAN_SAME(raw.size);
    SCAN_SAME(index); SCAN_SAME(from_compressed); SCAN_SAME(attr_index); SCAN_SAME(payload.size);
    SCAN_SAME(sid.present); SCAN_SAME(sid.pid); SCAN_SAME(sid.tid); SCAN_SAME(sid.cpu);
    SCAN_SAME(sid.time); SCAN_SAME(sid.id); SCAN_SAME(sid.stream_id); SCAN_SAME(sample.ip);
    SCAN_SAME(sample.addr); SCAN_SAME(sample.period); SCAN_SAME(sample.callchain_nr);
#undef SCAN_SAME
    JT_CHECK(a->raw.size == b->raw.size && memcmp(a->raw.data, b->raw.data, a->raw.size) == 0);
    JT_CHECK(a->sample.callchain.size == b->sample.callchain.size &&
             (!a->sample.callchain.size ||
              memcmp(a->sample.callchain.data, b->sample.callchain.data, a->sample.callchain.size) == 0));
    /* views point into the record itself */
    JT_CHECK(!a->sample.callchain.size || (a->sample.callchain.data > a->raw.data &&
                                           a->sample.callchain.data + a->sample.callchain.size <= a->raw.data + a->raw.size));
}

/* The next record of each reader: whether both gave one (then compared field by field);
   *xa and *xb are their results, which must agree. */
static int scan_next_both(jitanon_perf_reader *ra, jitanon_perf_reader *rb, jitanon_perf_record *a,
                          jitanon_perf_record *b, jitanon_error *ea, jitanon_error *eb, jitanon_result *xa,
                          jitanon_result *xb)
{
    *xa = jitanon_perf_reader_next(ra, a, ea);
    *xb = jitanon_perf_reader_next(rb, b, eb);
    JT_CHECK_EQ_U(*xa, *xb);
    if (*xa != JITANON_OK || *xb != JITANON_OK) return 0;
    scan_same_record(a, b);
    return 1;
}

/* Reads one file with one attr and one with two side by side; the offsets differ by the
   second attr's 144 bytes. */
static void scan_compare(int big, uint64_t st, unsigned damage)
{
    pdt_b one, two;
    jitanon_perf_reader ra, rb;
    jitanon_perf_record a, b;
    jitanon_error ea, eb;
    jitanon_result xa = JITANON_OK, xb = JITANON_OK;
    unsigned n = 0;
    scan_file(&one, big, st, 1, damage);
    scan_file(&two, big, st, 2, damage);
    {
        memin ia = memin_make(one.m.data, one.m.size, 0, 0), ib = memin_make(two.m.data, two.m.size, 0, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&ra, memin_read, memin_seek, &ia, NULL, &ea), JITANON_OK);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&rb, memin_read, memin_seek, &ib, NULL, &eb), JITANON_OK);
        JT_CHECK_EQ_U(ra.attr_count, 1);
        JT_CHECK_EQ_U(rb.attr_count, 2);
        while (scan_next_both(&ra, &rb, &a, &b, &ea, &eb, &xa, &xb)) {
            JT_CHECK_EQ_U(a.offset + 144, b.offset);
            JT_CHECK_EQ_U(a.sample.ip, (st & JITANON_PERF_SAMPLE_IP) ? 0x400000 + 16u * n : 0);
            JT_CHECK_EQ_U(a.sid.time, (st & JITANON_PERF_SAMPLE_TIME) ? 1000000 + 7u * n : 0);
            JT_CHECK_EQ_U(a.sid.tid, (st & JITANON_PERF_SAMPLE_TID) ? 200 + n : 0);
            n++;
        }
    }
    JT_CHECK_EQ_U(n, damage < SCAN_NSAMPLES ? damage : SCAN_NSAMPLES);
    if (damage < SCAN_NSAMPLES) {
        JT_CHECK_EQ_U(xa, JITANON_ERR_BAD_RECORD);
        JT_CHECK_EQ_U(ea.offset + 144, eb.offset);
        JT_CHECK_EQ_U(ea.record_index, eb.record_index);
    } else {
        JT_CHECK_EQ_U(xa, JITANON_END);
        JT_CHECK_EQ_U(ra.stats.records, rb.stats.records);
        JT_CHECK_EQ_U(ra.stats.by_type[JITANON_PERF_RECORD_SAMPLE], SCAN_NSAMPLES);
        JT_CHECK_EQ_U(ra.stats.first_time, rb.stats.first_time);
        JT_CHECK_EQ_U(ra.stats.last_time, rb.stats.last_time);
    }
    jitanon_perf_reader_release(&ra);
    jitanon_perf_reader_release(&rb);
    jitanon_membuf_release(&one.m);
    jitanon_membuf_release(&two.m);
}

static void test_shortpath_same_fields(void)
{
    static const uint64_t layouts[] = {
        JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_PERIOD,
        JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_PERIOD |
            JITANON_PERF_SAMPLE_CALLCHAIN,
        JITANON_PERF_SAMPLE_IDENTIFIER | JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME |
            JITANON_PERF_SAMPLE_ADDR | JITANON_PERF_SAMPLE_ID | JITANON_PERF_SAMPLE_STREAM_ID | JITANON_PERF_SAMPLE_CPU |
            JITANON_PERF_SAMPLE_PERIOD | JITANON_PERF_SAMPLE_CALLCHAIN,
        JITANON_PERF_SAMPLE_IDENTIFIER | JITANON_PERF_SAMPLE_TIME,
        JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_READ | JITANON_PERF_SAMPLE_CALLCHAIN, /* READ: general path */
        0};
    size_t i;
    int big;
    for (big = 0; big < 2; big++)
        for (i = 0; i < sizeof layouts / sizeof layouts[0]; i++) scan_compare(big, layouts[i], SCAN_NSAMPLES);
}

static void test_shortpath_damage(void)
{
    int big;
    uint64_t st = JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_CALLCHAIN;
    for (big = 0; big < 2; big++) {
        scan_compare(big, st, 0);
        scan_compare(big, st, 17);
        scan_compare(big, st, SCAN_NSAMPLES - 1);
    }
}

/* A sample cut by the data section's end, or shorter than its fixed fields, is the
   general path's error on the short path too. */
static void test_shortpath_bounds(void)
{
    pdt_b b;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res;
    memin in;
    unsigned n = 0;
    uint64_t st = JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TIME;
    scan_file(&b, 0, st, 1, SCAN_NSAMPLES);
    pdt_set64(&b, 48, 24 * 10 + 8); /* the data ends 8 bytes into the 11th sample */
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
    while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) n++;
    JT_CHECK_EQ_U(n, 10);
    JT_CHECK_EQ_U(res, JITANON_ERR_BAD_RECORD);
    jitanon_perf_reader_release(&r);
    /* a sample of 16 bytes where IP and TIME need 24 */
    jitanon__wr16(b.m.data + 248 + 6, 16, 0);
    pdt_set64(&b, 48, b.m.size - 248);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
    n = 0;
    while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) n++;
    JT_CHECK_EQ_U(n, 0);
    JT_CHECK_EQ_U(res, JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, 248);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
}

/* -- the short path across what moves the buffer or changes its conditions ---------- */

/* scan_file with a HOSTNAME feature section after the data (the header's bitmap and the
   table at data end), so that _load_features seeks away and back. */
static void scan_file_feat(pdt_b *b, int big, uint64_t st)
{
    static const char host[] = "scan-host";
    size_t end;
    scan_file(b, big, st, 1, SCAN_NSAMPLES);
    pdt_set64(b, 72, 1ull << 3); /* features: HOSTNAME */
    end = pdt_pos(b);
    pdt_u64(b, end + 16), pdt_u64(b, sizeof host);
    pdt_bytes(b, host, sizeof host);
}

/* Records read with the features loaded after record `at` (and reads of `step` bytes) are
   those of a reader that never loads them. */
static void scan_features_at(const pdt_b *b, unsigned at, size_t step, int odd)
{
    jitanon_perf_reader ra, rb;
    jitanon_perf_record a, rec;
    jitanon_error ea, eb;
    jitanon_bytes host;
    jitanon_result xa, xb;
    memin ia = memin_make(b->m.data, b->m.size, 0, 0), ib = memin_make(b->m.data, b->m.size, step, odd);
    unsigned n = 0;
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&ra, memin_read, memin_seek, &ia, NULL, &ea), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&rb, memin_read, memin_seek, &ib, NULL, &eb), JITANON_OK);
    while (scan_next_both(&ra, &rb, &a, &rec, &ea, &eb, &xa, &xb)) {
        JT_CHECK_EQ_U(a.offset, rec.offset);
        if (n++ == at) {
            JT_CHECK_EQ_U(jitanon_perf_reader_load_features(&rb, &eb), JITANON_OK);
            JT_CHECK(jitanon_perf_reader_feature(&rb, 3, &host) && host.size == 10);
        }
    }
    JT_CHECK_EQ_U(xa, JITANON_END);
    JT_CHECK_EQ_U(n, SCAN_NSAMPLES);
    JT_CHECK_EQ_U(ra.stats.records, rb.stats.records);
    JT_CHECK_EQ_U(ra.stats.first_time, rb.stats.first_time);
    JT_CHECK_EQ_U(ra.stats.last_time, rb.stats.last_time);
    jitanon_perf_reader_release(&ra);
    jitanon_perf_reader_release(&rb);
}

static void test_shortpath_features(void)
{
    uint64_t st = JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_CALLCHAIN;
    int big;
    pdt_b b;
    for (big = 0; big < 2; big++) {
        scan_file_feat(&b, big, st);
        scan_features_at(&b, 0, 0, 0);
        scan_features_at(&b, 17, 0, 0);
        scan_features_at(&b, SCAN_NSAMPLES - 1, 0, 0);
        scan_features_at(&b, 5, 1, 1); /* odd-sized reads: records end in every place of a block */
        scan_features_at(&b, 9, 64, 0);
        jitanon_membuf_release(&b.m);
    }
}

/* A pipe: the samples after its first HEADER_ATTR take the short path, those after a
   second one the general path; both decode the same values (no id in the layout: every
   sample is attr 0's), and a truncated last sample ends the records the same way. */
static void scan_pipe_attr(pdt_b *b, uint64_t st)
{
    size_t at = pdt_hdr(b, JITANON_PERF_RECORD_HEADER_ATTR, 0);
    uint64_t flags = 1ull << 18;
    if (b->big) flags = jitanon__bitrev64(flags);
    pdt_u32(b, 1), pdt_u32(b, 128);
    pdt_u64(b, 0), pdt_u64(b, 4000), pdt_u64(b, st), pdt_u64(b, 0), pdt_u64(b, flags);
    pdt_zero(b, 128 - 48);
    pdt_end(b, at);
}

/* The pipe of test_shortpath_pipe, its last 4 bytes cut off or not. */
static void scan_pipe(int big, int cut)
{
    uint64_t st = JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME |
                  JITANON_PERF_SAMPLE_PERIOD | JITANON_PERF_SAMPLE_CALLCHAIN;
    unsigned i, n = 0;
    pdt_b b;
    memin in;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_result res = JITANON_OK;
    jitanon_error err;
    memset(&b, 0, sizeof b);
    b.big = big;
    pdt_bytes(&b, big ? "2ELIFREP" : "PERFILE2", 8);
    pdt_u64(&b, 16);
    scan_pipe_attr(&b, st);
    for (i = 0; i < 10; i++) scan_sample(&b, st, i, 0);
    scan_pipe_attr(&b, st);
    for (i = 10; i < 20; i++) scan_sample(&b, st, i, 0);
    in = memin_make(b.m.data, b.m.size - (cut ? 4 : 0), 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, &err), JITANON_OK);
    while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
        if (rec.type != JITANON_PERF_RECORD_SAMPLE) continue;
        JT_CHECK_EQ_U(rec.sample.ip, 0x400000 + 16u * n);
        JT_CHECK_EQ_U(rec.sid.pid, 100 + n);
        JT_CHECK_EQ_U(rec.sid.tid, 200 + n);
        JT_CHECK_EQ_U(rec.sid.time, 1000000 + 7u * n);
        JT_CHECK_EQ_U(rec.sample.period, 4000 + n);
        JT_CHECK_EQ_U(rec.sample.callchain_nr, n % 3);
        JT_CHECK_EQ_U(rec.attr_index, 0);
        JT_CHECK_EQ_U(rec.index, n + (n < 10 ? 1u : 2u));
        n++;
    }
    JT_CHECK_EQ_U(res, JITANON_END);
    JT_CHECK_EQ_U(n, cut ? 19 : 20);
    JT_CHECK_EQ_U(r.stats.records, n + 2);
    JT_CHECK_EQ_U(!!(r.warnings & JITANON_PERF_WARN_CUT), cut);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
}

static void test_shortpath_pipe(void)
{
    int big;
    for (big = 0; big < 2; big++) scan_pipe(big, 0), scan_pipe(big, 1);
}

/* The time counters over samples whose times go down, to 0 and up again, on both paths
   (0 is "no first time yet": the next time replaces it, as it always did). */
static void test_shortpath_times(void)
{
    static const uint64_t times[] = {500, 300, 0, 200, 900, 0, 100};
    unsigned nattr;
    for (nattr = 1; nattr <= 2; nattr++) {
        pdt_b b;
        jitanon_perf_reader r;
        jitanon_perf_record rec;
        jitanon_error err;
        memin in;
        size_t i;
        scan_file(&b, 0, JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TIME, nattr, SCAN_NSAMPLES);
        b.m.size = 104 + 144 * (size_t)nattr; /* the samples again, with those times */
        for (i = 0; i < sizeof times / sizeof times[0]; i++) {
            size_t at = pdt_hdr(&b, JITANON_PERF_RECORD_SAMPLE, 2);
            pdt_u64(&b, 0x1000 + i), pdt_u64(&b, times[i]);
            pdt_end(&b, at);
        }
        pdt_set64(&b, 48, 24 * i);
        in = memin_make(b.m.data, b.m.size, 0, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
        while (jitanon_perf_reader_next(&r, &rec, &err) == JITANON_OK) {}
        JT_CHECK_EQ_U(r.stats.records, 7);
        JT_CHECK_EQ_U(r.stats.first_time, 100);
        JT_CHECK_EQ_U(r.stats.last_time, 900);
        jitanon_perf_reader_release(&r);
        jitanon_membuf_release(&b.m);
    }
}

/* A kernel record of an attr with sample_id_all but no trailer field (id_hdr_size 0):
   its sid stays 0, and the record's body is all of it. */
static void test_shortpath_trailer_without_fields(void)
{
    pdt_b b;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    memin in;
    size_t at;
    scan_file(&b, 0, JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_PERIOD, 1, SCAN_NSAMPLES);
    b.m.size = 104 + 144;
    at = pdt_hdr(&b, JITANON_PERF_RECORD_COMM, 0);
    pdt_u32(&b, 42), pdt_u32(&b, 43);
    pdt_str8(&b, "tool");
    pdt_end(&b, at);
    pdt_set64(&b, 48, pdt_pos(&b) - at);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(r.attrs[0].id_hdr_size, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_OK);
    JT_CHECK_EQ_U(rec.type, JITANON_PERF_RECORD_COMM);
    JT_CHECK_EQ_U(rec.comm.pid, 42);
    JT_CHECK(rec.comm.comm.length == 4 && memcmp(rec.comm.comm.data, "tool", 4) == 0);
    JT_CHECK_EQ_U(rec.sid.present, 0);
    JT_CHECK_EQ_U(rec.sid.pid | rec.sid.tid | rec.sid.cpu, 0);
    JT_CHECK_EQ_U(rec.sid.time | rec.sid.id | rec.sid.stream_id, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_END);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
}

static void suite_shortpath(void)
{
    JT_RUN(test_shortpath_same_fields);
    JT_RUN(test_shortpath_damage);
    JT_RUN(test_shortpath_bounds);
    JT_RUN(test_shortpath_features);
    JT_RUN(test_shortpath_pipe);
    JT_RUN(test_shortpath_times);
    JT_RUN(test_shortpath_trailer_without_fields);
}
JT_SUITE(shortpath)
#undef JT_SUITES
#define JT_SUITES jt_suites_shortpath
