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
    JT_CHECK(r.big_endian == big); /* the record carries the order its views are in */
    jitanon_jitdump_debug_iter_begin(&di, &r);
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
        JT_CHECK(jitanon_jitdump_load_memory(b.data, cut, NULL, &d, &err) == JITANON_OK);
        JT_CHECK(d != NULL && err.type == JITANON_OK);
        if (d) {
            JT_CHECK_EQ_U(d->record_count, 5);
            JT_CHECK(d->tail_error.type == JITANON_ERR_TRUNCATED);
            JT_CHECK_EQ_U(d->tail_error.offset, cut - 3);
        }
        jitanon_jitdump_destroy(d);
        /* without err the tail's reason still reaches the dump */
        JT_CHECK(jitanon_jitdump_load_memory(b.data, cut, NULL, &d, NULL) == JITANON_OK);
        JT_CHECK(d != NULL && d->tail_error.type == JITANON_ERR_TRUNCATED);
        if (d) JT_CHECK_EQ_U(d->tail_error.offset, cut - 3);
        jitanon_jitdump_destroy(d);
    }
    /* a dump cut inside its header is an error, not an empty dump; the result says so
       with or without err */
    d = (jitanon_jitdump *)&b; /* set to NULL on failure */
    JT_CHECK(jitanon_jitdump_load_memory(b.data, 39, NULL, &d, &err) == JITANON_ERR_TRUNCATED);
    JT_CHECK(d == NULL && err.type == JITANON_ERR_TRUNCATED);
    JT_CHECK(jitanon_jitdump_load_memory(b.data, 39, NULL, &d, NULL) == JITANON_ERR_TRUNCATED && d == NULL);
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
            r = jitanon_jitdump_load_memory(copy, size, NULL, &d, &err);
            JT_CHECK(r == JITANON_OK ? d != NULL : d == NULL && r == err.type && jt_is_typed_error(r));
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
        if (jitanon_jitdump_load_memory(b.data, b.size, &o, &d, &err) == JITANON_OK) JT_CHECK_EQ_U(d->record_count, 7);
        else JT_CHECK(d == NULL && err.type == JITANON_ERR_NOMEM);
        jitanon_jitdump_destroy(d);
        JT_CHECK_EQ_U(a.live_bytes, 0);
        JT_CHECK_EQ_U(a.live_blocks, 0);
        if (d) break; /* every later n succeeds too */
    }
    {
        jitanon_jitdump_opts o;
        jitanon_error err;
        jitanon_jitdump *d;
        memset(&o, 0, sizeof o);
        o.memory_limit = b.size + 100;
        JT_CHECK(jitanon_jitdump_load_memory(b.data, b.size, &o, &d, &err) == JITANON_ERR_LIMIT);
        JT_CHECK(d == NULL && err.type == JITANON_ERR_LIMIT);
    }
    jitanon_membuf_release(&b);
}

static void test_jitdump_writer_sink_failure(void)
{
    jitanon_membuf b;
    jitanon_jitdump_writer w;
    jitanon_error err;
    memset(&b, 0, sizeof b);
    memset(&w, 0, sizeof w);
    b.max_size = 60;
    JT_CHECK(jdrec_begin(&w, jdrec_sink(&b), 62, 1, 0, 0, &err) == JITANON_OK);
    JT_CHECK(jdrec_write(&w, jdrec_load(1, 1, 1, 0x1000, "\xc3", 1, 0, "f"), &err) == JITANON_ERR_WRITE);
    JT_CHECK_EQ_U(b.size, 40); /* a refused record leaves nothing half-written */
    jitanon_membuf_release(&b);
}

/* Writes every record of `data` back with jitanon_jitdump_write, each to a buffer of its
   own, and checks the bytes are the record's own; unknown ids are refused and copied raw.
   Returns the number of records written back. */
static size_t jt_round_trip(const uint8_t *data, size_t size)
{
    jitanon_jitdump_iter it;
    jitanon_jitdump_record rec;
    jitanon_jitdump_writer w;
    jitanon_membuf out, one;
    jitanon_error err;
    size_t n = 0;
    memset(&out, 0, sizeof out);
    memset(&one, 0, sizeof one);
    JT_CHECK(jitanon_jitdump_iter_begin(&it, data, size, NULL, &err) == JITANON_OK);
    /* the header starts the copy: the writer fills magic, version and total_size */
    JT_CHECK(jitanon_jitdump_writer_init(&w, jdrec_sink(&out), &it.header, &err) == JITANON_OK);
    JT_CHECK(out.size == 40 && !memcmp(out.data, data, 40));
    while (jitanon_jitdump_iter_next(&it, &rec, &err) == JITANON_OK) {
        jitanon_jitdump_writer w1 = w;
        w1.sink = jdrec_sink(&one);
        one.size = 0;
        if (rec.id >= JITANON_JITDUMP_CODE_MAX) {
            JT_CHECK(jitanon_jitdump_write(&w, &rec, &err) == JITANON_ERR_INVALID_ARGUMENT);
            jitanon_membuf_write(&out, rec.raw.data, rec.raw.size);
            continue;
        }
        JT_CHECK(jitanon_jitdump_write(&w, &rec, &err) == JITANON_OK);
        JT_CHECK(jitanon_jitdump_write(&w1, &rec, &err) == JITANON_OK);
        JT_CHECK(one.size == rec.raw.size && !memcmp(one.data, rec.raw.data, one.size));
        n++;
    }
    JT_CHECK(out.size == size && !memcmp(out.data, data, size));
    jitanon_membuf_release(&out);
    jitanon_membuf_release(&one);
    return n;
}

/* What a reader returns, a writer writes back byte for byte: every record type, both
   byte orders, and the records of a real dump. */
static void test_jitdump_write_round_trip(void)
{
    int big;
    jitanon_jitdump *d;
    for (big = 0; big < 2; big++) {
        jitanon_membuf b;
        jt_build_dump(&b, big);
        JT_CHECK_EQ_U(jt_round_trip(b.data, b.size), 6);
        jitanon_membuf_release(&b);
    }
#ifndef JITANON_NO_STDIO
    if (jitanon_jitdump_load_file("tests/data/node-head.dump", NULL, &d, NULL) == JITANON_OK) {
        JT_CHECK_EQ_U(jt_round_trip(d->data, d->size), d->record_count);
        jitanon_jitdump_destroy(d);
    }
#else
    (void)d;
#endif
}

/* The header's own fields come from the writer; arch_timestamp sets the flag. */
static void test_jitdump_writer_header(void)
{
    jitanon_membuf b;
    jitanon_jitdump_writer w;
    jitanon_jitdump_header h = jdrec_header(183, 77, 5, 1), back;
    jitanon_jitdump_iter it;
    jitanon_error err;
    memset(&b, 0, sizeof b);
    h.magic = 1, h.version = 9, h.total_size = 3, h.pad1 = 0xDEADBEEFu, h.arch_timestamp = 1;
    JT_CHECK(jitanon_jitdump_writer_init(&w, jdrec_sink(&b), &h, &err) == JITANON_OK);
    JT_CHECK(w.big_endian == 1 && w.bytes_written == 40);
    JT_CHECK(jitanon_jitdump_iter_begin(&it, b.data, b.size, NULL, &err) == JITANON_OK);
    back = it.header;
    JT_CHECK(back.big_endian && back.version == 1 && back.total_size == 40 && back.elf_mach == 183);
    JT_CHECK(back.pid == 77 && back.timestamp == 5 && back.pad1 == 0xDEADBEEFu);
    JT_CHECK(back.flags == JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP && back.arch_timestamp);
    jitanon_membuf_release(&b);
}

/* A record whose sizes disagree with its views, or that would not read back, is refused
   before a byte is written. */
static void test_jitdump_write_refuses(void)
{
    static const uint8_t code[4] = {0x90, 0x90, 0x90, 0xc3}, eh[8] = {0};
    uint8_t bad_entries[20];
    jitanon_membuf b;
    jitanon_jitdump_writer w;
    jitanon_jitdump_record r;
    jitanon_jitdump_iter it;
    jitanon_error err;
    size_t at;
    memset(bad_entries, 'a', sizeof bad_entries);
    jt_build_dump(&b, 1); /* big-endian: its DEBUG_INFO cannot go into a little-endian dump */
    JT_CHECK(jitanon_jitdump_iter_begin(&it, b.data, b.size, NULL, &err) == JITANON_OK);
    JT_CHECK(jitanon_jitdump_iter_next(&it, &r, &err) == JITANON_OK && r.id == JITANON_JITDUMP_CODE_DEBUG_INFO);
    JT_CHECK(jdrec_begin(&w, jdrec_sink(&b), 62, 1, 0, 0, &err) == JITANON_OK);
    at = b.size;
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK(strstr(err.info, "byte order") != NULL);
    r.big_endian = 0;
    r.debug.nr_entry++; /* one entry more than the bytes hold */
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    r.debug.entries.data = bad_entries; /* a file name without its NUL */
    r.debug.entries.size = sizeof bad_entries;
    r.debug.nr_entry = 1;
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    r = jdrec_load(1, 1, 1, 0x1000, code, sizeof code, 0, "f");
    r.load.code_size = 3;
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    r = jdrec_load(1, 1, 1, 0x1000, code, sizeof code, 0, "f");
    r.load.name.length = 2; /* "f" and its NUL */
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    r = jdrec_unwind(1, eh, sizeof eh, eh, 4, 16);
    r.unwind.eh_frame_hdr_size = 5;
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    r = jdrec_unwind(1, eh, sizeof eh, eh, 4, 16);
    r.unwind.unwinding_size = 3;
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    r = jdrec_make(9, 1);
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK(b.size == at && w.bytes_written == 40);
    /* the same records, made consistent, are written */
    JT_CHECK(jdrec_write(&w, jdrec_unwind(1, eh, sizeof eh, eh, 4, 16), &err) == JITANON_OK);
    JT_CHECK(jdrec_write(&w, jdrec_load(1, 1, 1, 0x1000, code, sizeof code, 0, "f"), &err) == JITANON_OK);
    JT_CHECK_EQ_U(b.size - at, (16 + 24 + 12) + (56 + 2 + 4));
    /* total_size keeps padding to 8 bytes (zeros), and nothing else */
    at = b.size;
    r = jdrec_load(1, 1, 1, 0x1000, code, sizeof code, 0, "f");
    r.total_size = 64;
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_OK);
    JT_CHECK(b.size - at == 64 && !memcmp(b.data + b.size - 2, "\0\0", 2));
    r.total_size = 1000;
    JT_CHECK(jitanon_jitdump_write(&w, &r, &err) == JITANON_OK);
    JT_CHECK_EQ_U(b.size - at, 64 + 62);
    jitanon_membuf_release(&b);
}

#if JITANON__POSIX
/* The writer of a jitdump file carries its fd, not a pointer into the struct: a copy
   made after open writes on its own once the original is gone. */
static void test_jitdump_file_copyable(void)
{
    char dir[] = "build/jdfile-XXXXXX", path[256];
    static const uint8_t code[2] = {0x90, 0xc3};
    jitanon_jitdump_file *f = (jitanon_jitdump_file *)malloc(sizeof *f), g;
    jitanon_jitdump *d;
    jitanon_error err;
    if (!mkdtemp(dir)) {
        free(f);
        jt_skip("cannot create a directory under build/");
        return;
    }
    JT_CHECK(f && jitanon_jitdump_file_open(f, dir, 62, &err) == JITANON_OK);
    g = *f;
    memset(f, 0xA5, sizeof *f);
    free(f);
    JT_CHECK(jdrec_write(&g.writer, jdrec_load(jitanon_jitdump_now(), 1, 1, 0x1000, code, 2, 0, "f"), &err) == JITANON_OK);
    JT_CHECK(jitanon_jitdump_file_close(&g, &err) == JITANON_OK);
    sprintf(path, "%s/jit-%u.dump", dir, (unsigned)getpid());
    JT_CHECK(jitanon_jitdump_load_file(path, NULL, &d, &err) == JITANON_OK);
    if (d) {
        JT_CHECK_EQ_U(d->record_count, 2);
        JT_CHECK(d->record_count == 2 && d->records[0].id == JITANON_JITDUMP_CODE_LOAD &&
                 d->records[1].id == JITANON_JITDUMP_CODE_CLOSE);
        JT_CHECK(d->header.big_endian == jitanon__host_big_endian() && d->header.elf_mach == 62);
    }
    jitanon_jitdump_destroy(d);
    JT_CHECK(remove(path) == 0);
    JT_CHECK(rmdir(dir) == 0);
}

/* A JIT that passes elf_mach 0 gets the machine it was compiled for (a JIT on arm64 had
   to know to write 183), and its marker maps one page of the system's size (64 KiB on
   arm64 kernels with 64 KiB pages). */
static void test_jitdump_file_host_machine(void)
{
    char dir[] = "build/jdhost-XXXXXX", path[256];
    jitanon_jitdump_file f;
    jitanon_jitdump *d;
    jitanon_error err;
    uint32_t want = jitanon_jitdump_host_machine();
#if defined(__x86_64__)
    JT_CHECK_EQ_U(want, 62);
#elif defined(__aarch64__)
    JT_CHECK_EQ_U(want, 183);
#endif
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    JT_CHECK(jitanon_jitdump_file_open(&f, dir, 0, &err) == JITANON_OK);
    JT_CHECK_EQ_U(f.marker_size, (uint64_t)sysconf(_SC_PAGESIZE));
    JT_CHECK(jitanon_jitdump_file_close(&f, &err) == JITANON_OK);
    sprintf(path, "%s/jit-%u.dump", dir, (unsigned)getpid());
    JT_CHECK(jitanon_jitdump_load_file(path, NULL, &d, &err) == JITANON_OK);
    if (d) JT_CHECK_EQ_U(d->header.elf_mach, want);
    jitanon_jitdump_destroy(d);
    /* a machine given is written as given: a JIT for another machine (an emulator) */
    JT_CHECK(jitanon_jitdump_file_open(&f, dir, 183, &err) == JITANON_OK);
    JT_CHECK(jitanon_jitdump_file_close(&f, &err) == JITANON_OK);
    JT_CHECK(jitanon_jitdump_load_file(path, NULL, &d, &err) == JITANON_OK);
    if (d) JT_CHECK_EQ_U(d->header.elf_mach, 183);
    jitanon_jitdump_destroy(d);
    JT_CHECK(remove(path) == 0);
    JT_CHECK(rmdir(dir) == 0);
}
#endif

#ifndef JITANON_NO_STDIO
static void test_jitdump_real_sample(void)
{
    /* tests/data/node-head.dump: the first records of a real `node --perf-prof` dump. */
    jitanon_error err;
    jitanon_jitdump *d;
    if (jitanon_jitdump_load_file("tests/data/node-head.dump", NULL, &d, &err) != JITANON_OK) {
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
    JT_RUN(test_jitdump_write_round_trip);
    JT_RUN(test_jitdump_writer_header);
    JT_RUN(test_jitdump_write_refuses);
#if JITANON__POSIX
    JT_RUN(test_jitdump_file_copyable);
    JT_RUN(test_jitdump_file_host_machine);
#endif
#ifndef JITANON_NO_STDIO
    JT_RUN(test_jitdump_real_sample);
#endif
}
JT_SUITE(jitdump)
#undef JT_SUITES
#define JT_SUITES jt_suites_jitdump
