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
        for (;;) {
            xa = jitanon_perf_reader_next(&ra, &a, &ea);
            xb = jitanon_perf_reader_next(&rb, &b, &eb);
            JT_CHECK_EQ_U(xa, xb);
            if (xa != JITANON_OK || xb != JITANON_OK) break;
            scan_same_record(&a, &b);
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

static void test_scan_short_path_same_fields(void)
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

static void test_scan_short_path_damage(void)
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
static void test_scan_short_path_bounds(void)
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

static void suite_scan(void)
{
    JT_RUN(test_scan_short_path_same_fields);
    JT_RUN(test_scan_short_path_damage);
    JT_RUN(test_scan_short_path_bounds);
}
