/* jitdump reader and writer. */

static void jt_check_sample_dump(const uint8_t *data, size_t size, int big)
{
    jitanon_jitdump_iter it;
    jitanon_jitdump_record r;
    jitanon_error err;
    jitanon_jitdump_debug_iter di;
    jitanon_jitdump_debug_entry e;
    JT_CHECK(jitanon_jitdump_iter_begin(&it, data, size, NULL, &err) == JITANON_OK);
    JT_CHECK(it.header.big_endian == big);
    JT_CHECK_EQ_U(it.header.pid, 4242);
    JT_CHECK_EQ_U(it.header.elf_mach, 62);
    /* DEBUG_INFO with the 0xFF 0x00 "same file" convention */
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK);
    JT_CHECK_EQ_U(r.id, JITANON_JITDUMP_CODE_DEBUG_INFO);
    JT_CHECK_EQ_U(r.debug.nr_entry, 3);
    jitanon_jitdump_debug_iter_begin(&di, &r, big);
    JT_CHECK(jitanon_jitdump_debug_iter_next(&di, &e) && e.addr == 0x1000 && e.lineno == 10 && e.file.length == 4);
    JT_CHECK(jitanon_jitdump_debug_iter_next(&di, &e) && e.lineno == 11 && e.file.length == 4 && !memcmp(e.file.data, "a.js", 4));
    JT_CHECK(jitanon_jitdump_debug_iter_next(&di, &e) && e.discrim == 2 && e.file.length == 8);
    JT_CHECK(!jitanon_jitdump_debug_iter_next(&di, &e));
    /* UNWINDING_INFO: eh_frame first, then the header */
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK);
    JT_CHECK_EQ_U(r.id, JITANON_JITDUMP_CODE_UNWINDING_INFO);
    JT_CHECK(r.unwind.eh_frame.size == 12 && r.unwind.eh_frame.data[0] == 1);
    JT_CHECK(r.unwind.eh_frame_hdr.size == 4 && r.unwind.eh_frame_hdr.data[0] == 0xa1);
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK);
    JT_CHECK_EQ_U(r.id, JITANON_JITDUMP_CODE_LOAD);
    JT_CHECK(r.load.pid == 4242 && r.load.tid == 4243 && r.load.code_addr == 0x1000 && r.load.code_size == 7);
    JT_CHECK(r.load.code_index == 7 && r.load.name.length == 6 && !memcmp(r.load.name.data, "fn_one", 6));
    JT_CHECK(r.load.code.data[0] == 0x55 && r.timestamp == 1200);
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK);
    JT_CHECK_EQ_U(r.id, 9); /* unknown: delivered, counted, skipped by size */
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK && r.id == JITANON_JITDUMP_CODE_LOAD);
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK);
    JT_CHECK(r.id == JITANON_JITDUMP_CODE_MOVE && r.move.old_code_addr == 0x2000 && r.move.new_code_addr == 0x3000);
    JT_CHECK(r.move.code_index == 8);
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK && r.id == JITANON_JITDUMP_CODE_CLOSE);
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_END);
    JT_CHECK_EQ_U(it.stats.by_id[JITANON_JITDUMP_CODE_LOAD], 2);
    JT_CHECK_EQ_U(it.stats.unknown, 1);
    JT_CHECK(it.stats.warnings & JITANON_JITDUMP_WARN_UNKNOWN_RECORD);
    JT_CHECK_EQ_U(it.stats.code_bytes, 8);
    JT_CHECK(it.stats.first_time == 1100 && it.stats.last_time == 1500);
}

static void test_jitdump_all_records_both_orders(void)
{
    int big;
    for (big = 0; big < 2; big++) {
        jitanon_membuf b;
        jt_build_dump(&b, big);
        jt_check_sample_dump(b.data, b.size, big);
        jitanon_membuf_release(&b);
    }
}

/* Patches the header of a fresh dump and returns the iterator's init result. */
static jitanon_result jt_header_variant(size_t off, uint64_t value, int width, jitanon_jitdump_iter *it,
                                        jitanon_error *err)
{
    jitanon_membuf b;
    jitanon_result r;
    jt_build_dump(&b, 0);
    if (width == 4) jitanon__wr32(b.data + off, value, 0);
    else jitanon__wr64(b.data + off, value, 0);
    r = jitanon_jitdump_iter_begin(it, b.data, b.size, NULL, err);
    jitanon_membuf_release(&b);
    return r;
}

static void test_jitdump_header_rules(void)
{
    jitanon_jitdump_iter it;
    jitanon_error err;
    JT_CHECK(jt_header_variant(0, 0x12345678, 4, &it, &err) == JITANON_ERR_BAD_MAGIC);
    JT_CHECK(jt_header_variant(4, 3, 4, &it, &err) == JITANON_ERR_BAD_VERSION);
    JT_CHECK(jt_header_variant(4, 2, 4, &it, &err) == JITANON_OK);
    JT_CHECK(it.stats.warnings & JITANON_JITDUMP_WARN_VERSION2);
    JT_CHECK(jt_header_variant(8, 39, 4, &it, &err) == JITANON_ERR_BAD_HEADER);
    JT_CHECK_EQ_U(err.offset, 8);
    JT_CHECK(jt_header_variant(32, 1, 8, &it, &err) == JITANON_OK && it.header.arch_timestamp);
    JT_CHECK(jt_header_variant(32, 4, 8, &it, &err) == JITANON_ERR_BAD_FLAGS);
    JT_CHECK(strstr(err.info, "0x4") != NULL);
}

static void test_jitdump_header_extension_skipped(void)
{
    /* total_size 48: 8 extension bytes precede the first record (perf misreads these). */
    jitanon_membuf b, x;
    size_t count;
    jitanon_error err;
    jitanon_jitdump_iter it;
    const uint8_t ext[8] = {0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee};
    jt_build_dump(&b, 1);
    memset(&x, 0, sizeof x);
    jitanon__wr32(b.data + 8, 48, 1);
    jitanon_membuf_write(&x, b.data, 40);
    jitanon_membuf_write(&x, ext, 8);
    jitanon_membuf_write(&x, b.data + 40, b.size - 40);
    JT_CHECK(jt_iterate(x.data, x.size, &count, &err) == JITANON_END);
    JT_CHECK_EQ_U(count, 7);
    JT_CHECK(jitanon_jitdump_iter_begin(&it, x.data, x.size, NULL, &err) == JITANON_OK);
    JT_CHECK(it.stats.warnings & JITANON_JITDUMP_WARN_HEADER_EXTRA);
    jitanon_membuf_release(&b);
    jitanon_membuf_release(&x);
}

static void test_jitdump_truncated_tail(void)
{
    jitanon_membuf b;
    jitanon_error err;
    jitanon_jitdump *d;
    size_t count;
    jt_build_dump(&b, 0);
    /* cut 3 bytes into the MOVE record (the 6th record) */
    {
        jitanon_jitdump_iter it;
        jitanon_jitdump_record r;
        size_t cut = 0;
        jitanon_jitdump_iter_begin(&it, b.data, b.size, NULL, &err);
        while (jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK)
            if (r.id == JITANON_JITDUMP_CODE_MOVE) cut = (size_t)r.offset + 3;
        JT_CHECK(jt_iterate(b.data, cut, &count, &err) == JITANON_ERR_TRUNCATED);
        JT_CHECK_EQ_U(count, 5);
        JT_CHECK_EQ_U(err.offset, cut - 3);
        JT_CHECK(strstr(err.info, "13 byte(s) missing") != NULL);
        d = jitanon_jitdump_load_memory(b.data, cut, NULL, &err);
        JT_CHECK(d != NULL);
        if (d) {
            JT_CHECK_EQ_U(d->record_count, 5);
            JT_CHECK(d->tail_error.type == JITANON_ERR_TRUNCATED);
            JT_CHECK_EQ_U(d->tail_error.offset, cut - 3);
        }
        jitanon_jitdump_destroy(d);
    }
    /* a dump cut inside its header is an error, not an empty dump */
    JT_CHECK(jitanon_jitdump_load_memory(b.data, 39, NULL, &err) == NULL);
    JT_CHECK(err.type == JITANON_ERR_TRUNCATED);
    jitanon_membuf_release(&b);
}

/* Builds a dump holding one raw record after a valid header. */
static jitanon_result jt_one_record(const uint8_t *rec, size_t n, jitanon_error *err)
{
    jitanon_membuf b, x;
    size_t count;
    jitanon_result r;
    jt_build_dump(&b, 0);
    memset(&x, 0, sizeof x);
    jitanon_membuf_write(&x, b.data, 40);
    jitanon_membuf_write(&x, rec, n);
    r = jt_iterate(x.data, x.size, &count, err);
    jitanon_membuf_release(&b);
    jitanon_membuf_release(&x);
    return r;
}

static void test_jitdump_fields_bounded_by_record(void)
{
    uint8_t rec[96];
    jitanon_error err;
    /* LOAD whose code_size exceeds what follows the name */
    memset(rec, 0, sizeof rec);
    jitanon__wr32(rec, 0, 0);
    jitanon__wr32(rec + 4, 64, 0);
    jitanon__wr64(rec + 40, 8, 0); /* code_size 8, but only 64-56-2 = 6 bytes remain */
    rec[56] = 'f';
    JT_CHECK(jt_one_record(rec, 64, &err) == JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, 40 + 40);
    JT_CHECK_EQ_U(err.record_type, 0);
    /* LOAD whose name has no NUL inside the record */
    memset(rec + 56, 'x', 8);
    JT_CHECK(jt_one_record(rec, 64, &err) == JITANON_ERR_BAD_RECORD);
    /* DEBUG_INFO claiming more entries than fit */
    memset(rec, 0, sizeof rec);
    jitanon__wr32(rec, 2, 0);
    jitanon__wr32(rec + 4, 64, 0);
    jitanon__wr64(rec + 24, 3, 0);
    JT_CHECK(jt_one_record(rec, 64, &err) == JITANON_ERR_BAD_RECORD);
    jitanon__wr64(rec + 24, UINT64_MAX, 0);
    JT_CHECK(jt_one_record(rec, 64, &err) == JITANON_ERR_BAD_RECORD);
    /* an entry whose file name runs past the record */
    jitanon__wr64(rec + 24, 1, 0);
    memset(rec + 48, 'y', 16);
    JT_CHECK(jt_one_record(rec, 64, &err) == JITANON_ERR_BAD_RECORD);
    /* UNWINDING_INFO sizes */
    memset(rec, 0, sizeof rec);
    jitanon__wr32(rec, 4, 0);
    jitanon__wr32(rec + 4, 48, 0);
    jitanon__wr64(rec + 16, 9, 0);
    JT_CHECK(jt_one_record(rec, 48, &err) == JITANON_ERR_BAD_RECORD);
    jitanon__wr64(rec + 16, 8, 0);
    jitanon__wr64(rec + 24, 9, 0);
    JT_CHECK(jt_one_record(rec, 48, &err) == JITANON_ERR_BAD_RECORD);
    jitanon__wr64(rec + 24, 8, 0);
    JT_CHECK(jt_one_record(rec, 48, &err) == JITANON_END);
    /* total_size below the prefix, and above the limit */
    jitanon__wr32(rec + 4, 15, 0);
    JT_CHECK(jt_one_record(rec, 48, &err) == JITANON_ERR_BAD_RECORD);
    {
        jitanon_jitdump_opts o;
        jitanon_membuf b;
        jitanon_jitdump_iter it;
        jitanon_jitdump_record r;
        memset(&o, 0, sizeof o);
        o.max_record_size = 32;
        jt_build_dump(&b, 0);
        JT_CHECK(jitanon_jitdump_iter_begin(&it, b.data, b.size, &o, &err) == JITANON_OK);
        JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_ERR_LIMIT);
        o.end_zero_ = 1;
        JT_CHECK(jitanon_jitdump_iter_begin(&it, b.data, b.size, &o, &err) == JITANON_ERR_BAD_OPTIONS);
        jitanon_membuf_release(&b);
    }
}

static void test_jitdump_stream_incremental(void)
{
    jitanon_membuf b;
    memin g; /* a "growing file": 5-byte reads of what the writer has written so far */
    jitanon_jitdump_stream s;
    jitanon_jitdump_record r;
    jitanon_error err;
    jitanon_jitdump_opts o;
    jt_alloc a;
    size_t records = 0, agains = 0;
    jt_build_dump(&b, 1);
    memset(&o, 0, sizeof o);
    o.allocator = jt_allocator(&a);
    g = memin_make(b.data, 0, 5, 0);
    JT_CHECK(jitanon_jitdump_stream_init(&s, memin_read, &g, &o, &err) == JITANON_OK);
    while (g.size <= b.size) {
        jitanon_result res = jitanon_jitdump_stream_next(&s, &r, &err);
        if (res == JITANON_OK) {
            records++;
            if (r.id == JITANON_JITDUMP_CODE_LOAD) JT_CHECK(r.load.name.length == 6);
            continue;
        }
        JT_CHECK(res == JITANON_AGAIN);
        if (res != JITANON_AGAIN) break;
        agains++;
        if (g.size == b.size) break;
        g.size += 3; /* the writer appends a few more bytes */
        if (g.size > b.size) g.size = b.size;
    }
    JT_CHECK_EQ_U(records, 7);
    JT_CHECK(agains > 10);
    JT_CHECK(s.header.big_endian);
    JT_CHECK_EQ_U(s.stats.by_id[JITANON_JITDUMP_CODE_LOAD], 2);
    jitanon_jitdump_stream_release(&s);
    JT_CHECK_EQ_U(a.live_bytes, 0);
    jitanon_membuf_release(&b);
}

/* Every cut, every patch, every failed allocation ends in OK/END or a typed error. */
static void jt_sweep_dump(const uint8_t *data, size_t size, size_t stride)
{
    size_t i, count;
    jitanon_error err;
    uint8_t *copy = (uint8_t *)malloc(size);
    static const int deltas[4] = {1, -1, 0x100, 0x1ff};
    memcpy(copy, data, size);
    for (i = 0; i <= size; i += stride) {
        jitanon_result r = jt_iterate(data, i, &count, &err);
        JT_CHECK(r == JITANON_END || jt_is_typed_error(r));
    }
    for (i = 0; i < size; i += stride) {
        int k;
        for (k = 0; k < 4; k++) {
            jitanon_result r;
            jitanon_jitdump *d;
            copy[i] = deltas[k] == 0x100 ? 0 : deltas[k] == 0x1ff ? 0xff : (uint8_t)(data[i] + deltas[k]);
            r = jt_iterate(copy, size, &count, &err);
            JT_CHECK(r == JITANON_END || jt_is_typed_error(r));
            d = jitanon_jitdump_load_memory(copy, size, NULL, &err);
            JT_CHECK(d != NULL || jt_is_typed_error(err.type));
            jitanon_jitdump_destroy(d);
        }
        copy[i] = data[i];
    }
    free(copy);
}

static void test_jitdump_sweeps(void)
{
    int big;
    for (big = 0; big < 2; big++) {
        jitanon_membuf b;
        jt_build_dump(&b, big);
        jt_sweep_dump(b.data, b.size, 1);
        jitanon_membuf_release(&b);
    }
}

static void test_jitdump_alloc_failures(void)
{
    jitanon_membuf b;
    long n;
    jt_build_dump(&b, 0);
    for (n = 1; n < 64; n++) {
        jt_alloc a;
        jitanon_jitdump_opts o;
        jitanon_error err;
        jitanon_jitdump *d;
        memset(&o, 0, sizeof o);
        o.allocator = jt_allocator(&a);
        a.fail_at = n;
        d = jitanon_jitdump_load_memory(b.data, b.size, &o, &err);
        if (d) JT_CHECK_EQ_U(d->record_count, 7);
        else JT_CHECK(err.type == JITANON_ERR_NOMEM);
        jitanon_jitdump_destroy(d);
        JT_CHECK_EQ_U(a.live_bytes, 0);
        JT_CHECK_EQ_U(a.live_blocks, 0);
        if (d) break; /* every later n succeeds too */
    }
    {
        jitanon_jitdump_opts o;
        jitanon_error err;
        memset(&o, 0, sizeof o);
        o.memory_limit = b.size + 100;
        JT_CHECK(jitanon_jitdump_load_memory(b.data, b.size, &o, &err) == NULL);
        JT_CHECK(err.type == JITANON_ERR_LIMIT);
    }
    jitanon_membuf_release(&b);
}

static void test_jitdump_writer_sink_failure(void)
{
    jitanon_membuf b;
    jitanon_jitdump_writer w;
    jitanon_sink sink;
    jitanon_error err;
    memset(&b, 0, sizeof b);
    memset(&w, 0, sizeof w);
    b.max_size = 60;
    sink.write_fn = jitanon_membuf_write;
    sink.user = &b;
    JT_CHECK(jitanon_jitdump_writer_init(&w, sink, 62, 1, 0, 0, &err) == JITANON_OK);
    JT_CHECK(jitanon_jitdump_write_load(&w, 1, 1, 1, 0x1000, "\xc3", 1, 0, "f", 1, &err) == JITANON_ERR_WRITE);
    JT_CHECK_EQ_U(b.size, 40); /* a refused record leaves nothing half-written */
    jitanon_membuf_release(&b);
}

#ifndef JITANON_NO_STDIO
static void test_jitdump_real_sample(void)
{
    /* tests/data/node-head.dump: the first records of a real `node --perf-prof` dump. */
    jitanon_error err;
    jitanon_jitdump *d = jitanon_jitdump_load_file("tests/data/node-head.dump", NULL, &err);
    if (!d) {
        jt_skip("tests/data/node-head.dump not found (run from the repo root)");
        return;
    }
    JT_CHECK(d->record_count > 0);
    JT_CHECK(d->header.pad1 == 0xDEADBEEFu);
    JT_CHECK(d->stats.by_id[JITANON_JITDUMP_CODE_LOAD] > 0);
    jt_sweep_dump(d->data, d->size, d->size / 1500 + 1);
    jitanon_jitdump_destroy(d);
}
#endif

static void suite_jitdump(void)
{
    JT_RUN(test_jitdump_all_records_both_orders);
    JT_RUN(test_jitdump_header_rules);
    JT_RUN(test_jitdump_header_extension_skipped);
    JT_RUN(test_jitdump_truncated_tail);
    JT_RUN(test_jitdump_fields_bounded_by_record);
    JT_RUN(test_jitdump_stream_incremental);
    JT_RUN(test_jitdump_sweeps);
    JT_RUN(test_jitdump_alloc_failures);
    JT_RUN(test_jitdump_writer_sink_failure);
#ifndef JITANON_NO_STDIO
    JT_RUN(test_jitdump_real_sample);
#endif
}
