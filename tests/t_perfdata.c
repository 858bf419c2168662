/* Tests for the perf.data section: hand-built files in both byte orders (raw byte
   builders, independent of our writer), round trips through the writer, multi-attr id
   mapping, trailers, payload records, compression, and deterministic fuzzing (every
   truncation, every byte patched, every allocation failed). */

/* -- byte builder -------------------------------------------------------------------- */

typedef struct pdt_b {
    jitanon_membuf m;
    int big;
} pdt_b;

static void pdt_bytes(pdt_b *b, const void *p, size_t n) { JT_CHECK(jitanon_membuf_write(&b->m, p, n) == 0); }
static void pdt_zero(pdt_b *b, size_t n)
{
    static const uint8_t z[64] = {0};
    while (n) {
        size_t k = n < 64 ? n : 64;
        pdt_bytes(b, z, k);
        n -= k;
    }
}
static void pdt_u16(pdt_b *b, uint64_t v)
{
    uint8_t t[2];
    jitanon__wr16(t, v, b->big);
    pdt_bytes(b, t, 2);
}
static void pdt_u32(pdt_b *b, uint64_t v)
{
    uint8_t t[4];
    jitanon__wr32(t, v, b->big);
    pdt_bytes(b, t, 4);
}
static void pdt_u64(pdt_b *b, uint64_t v)
{
    uint8_t t[8];
    jitanon__wr64(t, v, b->big);
    pdt_bytes(b, t, 8);
}
static size_t pdt_pos(const pdt_b *b) { return b->m.size; }
static void pdt_set64(pdt_b *b, size_t at, uint64_t v) { jitanon__wr64(b->m.data + at, v, b->big); }

/* Starts a record (size patched by pdt_end). */
static size_t pdt_hdr(pdt_b *b, uint32_t type, uint16_t misc)
{
    size_t at = pdt_pos(b);
    pdt_u32(b, type);
    pdt_u16(b, misc);
    pdt_u16(b, 0);
    return at;
}
static void pdt_end(pdt_b *b, size_t at) { jitanon__wr16(b->m.data + at + 6, pdt_pos(b) - at, b->big); }
static void pdt_str8(pdt_b *b, const char *s)
{
    size_t n = strlen(s) + 1;
    pdt_bytes(b, s, n);
    pdt_zero(b, (8 - n % 8) % 8);
}

/* Both attrs: IP|TID|TIME|ID|CPU|PERIOD|CALLCHAIN|IDENTIFIER, attr 1 also READ (id).
   The trailer is TID, TIME, ID, CPU, IDENTIFIER = 40 bytes. */
#define PDT_ST0 (JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_ID | \
                 JITANON_PERF_SAMPLE_CPU | JITANON_PERF_SAMPLE_PERIOD | JITANON_PERF_SAMPLE_CALLCHAIN |              \
                 JITANON_PERF_SAMPLE_IDENTIFIER)
#define PDT_ST1 (PDT_ST0 | JITANON_PERF_SAMPLE_READ)

static void pdt_attr(pdt_b *b, unsigned which)
{
    uint64_t flags = 1ull << 18 | 1ull << 25; /* sample_id_all, use_clockid */
    if (b->big) flags = jitanon__bitrev64(flags); /* big-endian bitfields start at the top */
    pdt_u32(b, 1);                            /* PERF_TYPE_SOFTWARE */
    pdt_u32(b, 128);
    pdt_u64(b, which);                        /* config */
    pdt_u64(b, 4000);                         /* sample_period */
    pdt_u64(b, which ? PDT_ST1 : PDT_ST0);
    pdt_u64(b, which ? 4 : 0);                /* read_format: ID */
    pdt_u64(b, flags);
    pdt_zero(b, 92 - 48);
    pdt_u32(b, 1);                            /* clockid CLOCK_MONOTONIC */
    pdt_zero(b, 128 - 96);
}

static void pdt_trailer(pdt_b *b, uint32_t pid, uint32_t tid, uint64_t time, uint64_t id)
{
    pdt_u32(b, pid);
    pdt_u32(b, tid);
    pdt_u64(b, time);
    pdt_u64(b, id);
    pdt_u32(b, 3);
    pdt_u32(b, 0);
    pdt_u64(b, id);
}

static void pdt_mmap2(pdt_b *b, int build_id, uint64_t id)
{
    size_t at = pdt_hdr(b, JITANON_PERF_RECORD_MMAP2, (uint16_t)(2 | (build_id ? JITANON_PERF_MISC_MMAP_BUILD_ID : 0)));
    pdt_u32(b, 100);
    pdt_u32(b, 100);
    pdt_u64(b, 0x7f0000);
    pdt_u64(b, 0x2000);
    pdt_u64(b, 0x1000);
    if (build_id) {
        uint8_t id20[24] = {20};
        unsigned i;
        for (i = 0; i < 20; i++) id20[4 + i] = (uint8_t)(i + 1);
        pdt_bytes(b, id20, 24);
    } else {
        pdt_u32(b, 8);
        pdt_u32(b, 1);
        pdt_u64(b, 1234);
        pdt_u64(b, 5);
    }
    pdt_u32(b, 5);
    pdt_u32(b, 2);
    pdt_str8(b, build_id ? "/lib/with-id.so" : "//anon");
    pdt_trailer(b, 100, 100, 30, id);
    pdt_end(b, at);
}

static void pdt_sample(pdt_b *b, unsigned which)
{
    size_t at = pdt_hdr(b, JITANON_PERF_RECORD_SAMPLE, 2);
    uint64_t id = which ? 21 : 11;
    pdt_u64(b, id);         /* IDENTIFIER */
    pdt_u64(b, 0x400010);   /* IP */
    pdt_u32(b, 100);
    pdt_u32(b, 101);
    pdt_u64(b, 50 + which); /* TIME */
    pdt_u64(b, id);         /* ID */
    pdt_u32(b, 3);
    pdt_u32(b, 0);
    pdt_u64(b, 4000);       /* PERIOD */
    if (which) {
        pdt_u64(b, 77);     /* READ value */
        pdt_u64(b, id);     /* READ id */
        pdt_u64(b, 0);      /* callchain nr */
    } else {
        pdt_u64(b, 3);
        pdt_u64(b, 0xa);
        pdt_u64(b, 0xb);
        pdt_u64(b, 0xc);
    }
    pdt_end(b, at);
}

static void pdt_records(pdt_b *b)
{
    size_t at;
    at = pdt_hdr(b, JITANON_PERF_RECORD_COMM, 0);
    pdt_u32(b, 100);
    pdt_u32(b, 101);
    pdt_str8(b, "prog");
    pdt_trailer(b, 100, 101, 10, 11);
    pdt_end(b, at);
    at = pdt_hdr(b, JITANON_PERF_RECORD_MMAP, 2);
    pdt_u32(b, 100);
    pdt_u32(b, 100);
    pdt_u64(b, 0x400000);
    pdt_u64(b, 0x1000);
    pdt_u64(b, 0);
    pdt_str8(b, "/bin/x");
    pdt_trailer(b, 100, 100, 20, 12);
    pdt_end(b, at);
    pdt_mmap2(b, 0, 21); /* id of attr 1 */
    pdt_mmap2(b, 1, 0);  /* id 0: attr 0 */
    at = pdt_hdr(b, JITANON_PERF_RECORD_FORK, 0);
    pdt_u32(b, 102);
    pdt_u32(b, 100);
    pdt_u32(b, 102);
    pdt_u32(b, 100);
    pdt_u64(b, 40);
    pdt_trailer(b, 102, 102, 40, 99); /* unknown id: attr 0 */
    pdt_end(b, at);
    pdt_sample(b, 0);
    pdt_sample(b, 1);
    at = pdt_hdr(b, JITANON_PERF_RECORD_FINISHED_ROUND, 0);
    pdt_end(b, at);
    at = pdt_hdr(b, JITANON_PERF_RECORD_TIME_CONV, 0);
    pdt_u64(b, 10);
    pdt_u64(b, 500);
    pdt_u64(b, 123);
    pdt_u64(b, 9);
    pdt_u64(b, 0xffff);
    pdt_bytes(b, "\1\1\0\0\0\0\0\0", 8);
    pdt_end(b, at);
    at = pdt_hdr(b, JITANON_PERF_RECORD_ID_INDEX, 0);
    pdt_u64(b, 2);
    pdt_u64(b, 11), pdt_u64(b, 0), pdt_u64(b, 0), pdt_u64(b, 100);
    pdt_u64(b, 21), pdt_u64(b, 1), pdt_u64(b, 0), pdt_u64(b, 100);
    pdt_end(b, at);
    at = pdt_hdr(b, JITANON_PERF_RECORD_AUXTRACE, 0);
    pdt_u64(b, 24);  /* payload size */
    pdt_u64(b, 0);   /* offset */
    pdt_u64(b, 7);   /* reference */
    pdt_u32(b, 0), pdt_u32(b, 100), pdt_u32(b, 3), pdt_u32(b, 0);
    pdt_end(b, at);
    pdt_bytes(b, "AUXDATA-AUXDATA-AUXDATA-", 24);
    at = pdt_hdr(b, JITANON_PERF_RECORD_HEADER_TRACING_DATA, 0);
    pdt_u32(b, 16);
    pdt_u32(b, 0);
    pdt_end(b, at);
    pdt_bytes(b, "TRACING-TRACING-", 16);
    at = pdt_hdr(b, 200, 0); /* unknown: passed through by size */
    pdt_u64(b, 0x5555);
    pdt_end(b, at);
    at = pdt_hdr(b, JITANON_PERF_RECORD_EXIT, 0);
    pdt_u32(b, 102), pdt_u32(b, 100), pdt_u32(b, 102), pdt_u32(b, 100);
    pdt_u64(b, 60);
    pdt_trailer(b, 102, 102, 60, 12);
    pdt_end(b, at);
}
#define PDT_NRECORDS 14u

static const char pdt_host[] = "hostname-feature";
static const char pdt_cmd[] = "cmdline!";

/* A file-mode perf.data: header | ids | attrs | data | feature table | payloads. */
static void pdt_file(pdt_b *b, int big)
{
    size_t data_at, feat_at;
    memset(b, 0, sizeof *b);
    b->big = big;
    pdt_bytes(b, big ? "2ELIFREP" : "PERFILE2", 8);
    pdt_u64(b, 104);
    pdt_u64(b, 144);
    pdt_u64(b, 128), pdt_u64(b, 288); /* attrs */
    pdt_u64(b, 416), pdt_u64(b, 0);   /* data, size patched below */
    pdt_u64(b, 0), pdt_u64(b, 0);
    /* features 3 (HOSTNAME), 11 (CMDLINE), 40 (unknown) */
    pdt_u64(b, 1ull << 3 | 1ull << 11 | 1ull << 40), pdt_u64(b, 0), pdt_u64(b, 0), pdt_u64(b, 0);
    pdt_u64(b, 11), pdt_u64(b, 12); /* ids of attr 0 at 104 */
    pdt_u64(b, 21);                 /* ids of attr 1 at 120 */
    pdt_attr(b, 0);
    pdt_u64(b, 104), pdt_u64(b, 16);
    pdt_attr(b, 1);
    pdt_u64(b, 120), pdt_u64(b, 8);
    data_at = pdt_pos(b);
    JT_CHECK_EQ_U(data_at, 416);
    pdt_records(b);
    pdt_set64(b, 48, pdt_pos(b) - data_at);
    feat_at = pdt_pos(b) + 48;
    pdt_u64(b, feat_at), pdt_u64(b, sizeof pdt_host);
    pdt_u64(b, feat_at + sizeof pdt_host), pdt_u64(b, sizeof pdt_cmd);
    pdt_u64(b, feat_at + sizeof pdt_host + sizeof pdt_cmd), pdt_u64(b, 3);
    pdt_bytes(b, pdt_host, sizeof pdt_host);
    pdt_bytes(b, pdt_cmd, sizeof pdt_cmd);
    pdt_bytes(b, "xyz", 3);
}

/* The same content in pipe mode. */
/* The two attrs of a pipe (HEADER_ATTR records with ids 11, 12 and 21). */
static void pdt_pipe_attrs(pdt_b *b)
{
    size_t at = pdt_hdr(b, JITANON_PERF_RECORD_HEADER_ATTR, 0);
    pdt_attr(b, 0);
    pdt_u64(b, 11), pdt_u64(b, 12);
    pdt_end(b, at);
    at = pdt_hdr(b, JITANON_PERF_RECORD_HEADER_ATTR, 0);
    pdt_attr(b, 1);
    pdt_u64(b, 21);
    pdt_end(b, at);
}

static void pdt_pipe(pdt_b *b, int big)
{
    size_t at;
    memset(b, 0, sizeof *b);
    b->big = big;
    pdt_bytes(b, big ? "2ELIFREP" : "PERFILE2", 8);
    pdt_u64(b, 16);
    pdt_pipe_attrs(b);
    at = pdt_hdr(b, JITANON_PERF_RECORD_HEADER_FEATURE, 0);
    pdt_u64(b, 3);
    pdt_bytes(b, pdt_host, sizeof pdt_host);
    pdt_end(b, at);
    pdt_records(b);
}

static jitanon_sink pdt_sink(jitanon_membuf *m)
{
    return jdrec_sink(m);
}

/* -- checks ------------------------------------------------------------------------------ */

static void pdt_check_attrs(const jitanon_perf_reader *r)
{
    JT_CHECK_EQ_U(r->attr_count, 2);
    if (r->attr_count != 2) return;
    JT_CHECK_EQ_U(r->attrs[0].type, 1);
    JT_CHECK_EQ_U(r->attrs[1].config, 1);
    JT_CHECK_EQ_U(r->attrs[0].sample_type, PDT_ST0);
    JT_CHECK_EQ_U(r->attrs[1].read_format, 4);
    JT_CHECK(r->attrs[0].sample_id_all && r->attrs[0].use_clockid);
    JT_CHECK_EQ_U(r->attrs[0].clockid, 1);
    JT_CHECK_EQ_U(r->attrs[0].id_hdr_size, 40);
    JT_CHECK_EQ_U(r->attrs[0].raw.size, 128);
    JT_CHECK_EQ_U(r->attrs[0].id_count, 2);
    JT_CHECK_EQ_U(r->attrs[0].ids[1], 12);
    JT_CHECK_EQ_U(r->attrs[1].ids[0], 21);
}

static void pdt_check_record(const jitanon_perf_reader *r, const jitanon_perf_record *rec, unsigned i)
{
    static const uint32_t types[PDT_NRECORDS] = {3, 1, 10, 10, 7, 9, 9, 68, 79, 69, 71, 66, 200, 4};
    JT_CHECK_EQ_U(rec->type, types[i]);
    JT_CHECK_EQ_U(rec->big_endian, r->big_endian); /* every record carries the input's order */
    switch (i) {
    case 0:
        JT_CHECK(rec->comm.comm.length == 4 && memcmp(rec->comm.comm.data, "prog", 4) == 0);
        JT_CHECK_EQ_U(rec->sid.time, 10);
        JT_CHECK_EQ_U(rec->sid.present, JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_ID |
                                            JITANON_PERF_SAMPLE_CPU | JITANON_PERF_SAMPLE_IDENTIFIER);
        break;
    case 1:
        JT_CHECK_EQ_U(rec->mmap.start, 0x400000);
        JT_CHECK(rec->mmap.filename.length == 6 && memcmp(rec->mmap.filename.data, "/bin/x", 6) == 0);
        JT_CHECK_EQ_U(rec->sid.id, 12);
        JT_CHECK_EQ_U(rec->attr_index, 0);
        break;
    case 2:
        JT_CHECK_EQ_U(rec->attr_index, 1);
        JT_CHECK_EQ_U(rec->mmap.pgoff, 0x1000);
        JT_CHECK(rec->mmap.maj == 8 && rec->mmap.min == 1 && rec->mmap.ino == 1234 && rec->mmap.ino_generation == 5);
        JT_CHECK(rec->mmap.prot == 5 && rec->mmap.flags == 2 && !rec->mmap.has_build_id);
        JT_CHECK(rec->mmap.filename.length == 6);
        JT_CHECK_EQ_U(rec->sid.cpu, 3);
        break;
    case 3:
        JT_CHECK(rec->mmap.has_build_id && rec->mmap.build_id_size == 20 && rec->mmap.build_id[19] == 20);
        JT_CHECK_EQ_U(rec->attr_index, 0);
        break;
    case 4: JT_CHECK(rec->task.pid == 102 && rec->task.ppid == 100 && rec->task.time == 40); break;
    case 5:
        JT_CHECK_EQ_U(rec->attr_index, 0);
        JT_CHECK(rec->sample.ip == 0x400010 && rec->sid.tid == 101 && rec->sid.time == 50 && rec->sample.period == 4000);
        JT_CHECK_EQ_U(rec->sample.callchain_nr, 3);
        JT_CHECK_EQ_U(jitanon_perf_u64_at(rec->sample.callchain, 2, rec->big_endian), 0xc);
        break;
    case 6:
        JT_CHECK_EQ_U(rec->attr_index, 1);
        JT_CHECK(rec->sid.id == 21 && rec->sid.cpu == 3 && rec->sample.callchain_nr == 0);
        break;
    case 8:
        JT_CHECK(rec->time_conv.time_mult == 500 && rec->time_conv.extended && rec->time_conv.time_mask == 0xffff);
        JT_CHECK(rec->time_conv.cap_user_time_zero == 1 && rec->time_conv.cap_user_time_short == 1);
        break;
    case 9: JT_CHECK(rec->id_index.nr == 2 && !rec->id_index.has_vm); break;
    case 10:
        JT_CHECK(rec->raw.size == 48 + 24 && rec->payload.size == 24 && memcmp(rec->payload.data, "AUXDATA-", 8) == 0);
        break;
    case 11: JT_CHECK(rec->raw.size == 32 && memcmp(rec->payload.data, "TRACING-", 8) == 0); break;
    case 13: JT_CHECK_EQ_U(rec->sid.time, 60); break;
    default: break;
    }
}

/* Reads every record, skipping pipe-mode HEADER_ATTR/HEADER_FEATURE. */
static void pdt_check_all(jitanon_perf_reader *r)
{
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res;
    unsigned i = 0;
    while ((res = jitanon_perf_reader_next(r, &rec, &err)) == JITANON_OK) {
        if (rec.type == JITANON_PERF_RECORD_HEADER_ATTR || rec.type == JITANON_PERF_RECORD_HEADER_FEATURE) continue;
        if (i < PDT_NRECORDS) pdt_check_record(r, &rec, i);
        i++;
    }
    JT_CHECK_EQ_U(res, JITANON_END);
    JT_CHECK_EQ_U(i, PDT_NRECORDS);
    pdt_check_attrs(r); /* pipe mode: known only now */
}

static void pdt_check_features(jitanon_perf_reader *r)
{
    jitanon_bytes f;
    JT_CHECK_EQ_U(jitanon_perf_reader_load_features(r, NULL), JITANON_OK);
    JT_CHECK(jitanon_perf_reader_feature(r, 3, &f) && f.size == sizeof pdt_host && memcmp(f.data, pdt_host, f.size) == 0);
    JT_CHECK(jitanon_perf_reader_feature(r, 11, &f) && f.size == sizeof pdt_cmd);
    JT_CHECK(jitanon_perf_reader_feature(r, 40, &f) && f.size == 3 && memcmp(f.data, "xyz", 3) == 0);
    JT_CHECK(!jitanon_perf_reader_feature(r, 4, &f));
}

static void memin_read_file(int big, int seek, size_t chunk)
{
    pdt_b b;
    memin in;
    jitanon_perf_reader r;
    jitanon_error err;
    pdt_file(&b, big);
    in = memin_make(b.m.data, b.m.size, chunk, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, seek ? memin_seek : NULL, &in, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(r.mode, JITANON_PERF_FILE);
    JT_CHECK_EQ_U(r.big_endian, big);
    if (seek) pdt_check_features(&r); /* before the data, then back */
    else JT_CHECK_EQ_U(jitanon_perf_reader_load_features(&r, &err), JITANON_ERR_UNSUPPORTED);
    pdt_check_all(&r);
    if (!seek) pdt_check_features(&r);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
}

static void test_perfdata_file_both_orders(void)
{
    memin_read_file(0, 1, 0);
    memin_read_file(1, 1, 0);
    memin_read_file(0, 0, 7); /* forward-only, 7-byte reads */
    memin_read_file(1, 0, 1);
}

static void test_perfdata_pipe_both_orders(void)
{
    int big;
    for (big = 0; big < 2; big++) {
        pdt_b b;
        memin in;
        jitanon_perf_reader r;
        pdt_pipe(&b, big);
        in = memin_make(b.m.data, b.m.size, 5, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL), JITANON_OK);
        JT_CHECK_EQ_U(r.mode, JITANON_PERF_PIPE);
        pdt_check_all(&r);
        JT_CHECK(r.features[0] & 1u << 3);
        jitanon_perf_reader_release(&r);
        jitanon_membuf_release(&b.m);
    }
}

/* Copies `src` through our writer in `mode`; returns the output (caller frees). */
static jitanon_result pdt_copy(const jitanon_membuf *src, int seek, jitanon_perf_mode mode, const jitanon_perf_opts *opts,
                               jitanon_membuf *out)
{
    memin in = memin_make(src->data, src->size, 0, 0);
    jitanon_perf_reader r;
    jitanon_perf_writer w;
    jitanon_error err;
    jitanon_result res;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    if (opts) out->allocator = opts->allocator;
    res = jitanon_perf_reader_init(&r, memin_read, seek ? memin_seek : NULL, &in, opts, &err);
    if (res == JITANON_OK)
        res = jitanon_perf_writer_init(&w, mode, r.big_endian, pdt_sink(out), mode == JITANON_PERF_FILE ? membuf_pwrite : NULL,
                                       opts, &err);
    if (res == JITANON_OK) res = jitanon_perf_copy(&r, &w, &err);
    jitanon_perf_writer_release(&w);
    jitanon_perf_reader_release(&r);
    return res;
}

/* The record bytes of a stream (HEADER_ATTR/FEATURE excluded), concatenated. */
static void pdt_record_bytes(const jitanon_membuf *src, jitanon_membuf *out)
{
    memin in = memin_make(src->data, src->size, 0, 0);
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_result res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, NULL);
    memset(out, 0, sizeof *out);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, NULL)) == JITANON_OK)
        if (rec.type != JITANON_PERF_RECORD_HEADER_ATTR && rec.type != JITANON_PERF_RECORD_HEADER_FEATURE)
            jitanon_membuf_write(out, rec.raw.data, rec.raw.size);
    JT_CHECK_EQ_U(res, JITANON_END);
    jitanon_perf_reader_release(&r);
}

static void pdt_same_records(const jitanon_membuf *a, const jitanon_membuf *b)
{
    jitanon_membuf ra, rb;
    pdt_record_bytes(a, &ra);
    pdt_record_bytes(b, &rb);
    JT_CHECK(ra.size > 0 && ra.size == rb.size && memcmp(ra.data, rb.data, ra.size) == 0);
    jitanon_membuf_release(&ra);
    jitanon_membuf_release(&rb);
}

static void test_perfdata_roundtrip(void)
{
    int big;
    for (big = 0; big < 2; big++) {
        pdt_b b;
        jitanon_membuf f1, p1, f2, f3;
        jitanon_perf_reader r;
        memin in;
        pdt_file(&b, big);
        JT_CHECK_EQ_U(pdt_copy(&b.m, 1, JITANON_PERF_FILE, NULL, &f1), JITANON_OK);
        JT_CHECK_EQ_U(pdt_copy(&f1, 1, JITANON_PERF_PIPE, NULL, &p1), JITANON_OK);
        JT_CHECK_EQ_U(pdt_copy(&p1, 0, JITANON_PERF_FILE, NULL, &f2), JITANON_OK);
        JT_CHECK_EQ_U(pdt_copy(&b.m, 0, JITANON_PERF_FILE, NULL, &f3), JITANON_OK);
        pdt_same_records(&b.m, &f1);
        pdt_same_records(&b.m, &p1);
        pdt_same_records(&b.m, &f2);
        /* our writer reproduces the hand-built layout byte for byte */
        JT_CHECK(f1.size == b.m.size && memcmp(f1.data, b.m.data, b.m.size) == 0);
        JT_CHECK(f2.size == b.m.size && memcmp(f2.data, b.m.data, b.m.size) == 0);
        JT_CHECK(f3.size == f1.size && memcmp(f3.data, f1.data, f1.size) == 0);
        in = memin_make(f2.data, f2.size, 0, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, NULL), JITANON_OK);
        pdt_check_features(&r);
        pdt_check_all(&r);
        jitanon_perf_reader_release(&r);
        jitanon_membuf_release(&f1), jitanon_membuf_release(&p1), jitanon_membuf_release(&f2), jitanon_membuf_release(&f3);
        jitanon_membuf_release(&b.m);
    }
}

/* -- compression ------------------------------------------------------------------------ */

/* A stand-in codec: the "compressed" payload is the raw bytes XOR 0x5a. */
static int pdt_unxor(void *user, const void *src, size_t size, jitanon_membuf *out)
{
    const uint8_t *s = (const uint8_t *)src;
    size_t i;
    (void)user;
    for (i = 0; i < size; i++) {
        uint8_t c = (uint8_t)(s[i] ^ 0x5a);
        if (jitanon_membuf_write(out, &c, 1)) return 1;
    }
    return 0;
}

/* A pipe: attrs, then `stream` split over two COMPRESSED(2) records at `cut`. */
static void pdt_compressed_parts(pdt_b *b, uint32_t type, const uint8_t *stream, size_t size, size_t cut)
{
    size_t at, part;
    pdt_pipe(b, 0);
    b->m.size = 16; /* keep the header only, rebuild the rest */
    pdt_pipe_attrs(b);
    if (cut > size) cut = size;
    for (part = 0; part < 2; part++) {
        size_t from = part ? cut : 0, to = part ? size : cut;
        at = pdt_hdr(b, type, 0);
        if (type == JITANON_PERF_RECORD_COMPRESSED2) pdt_u64(b, to - from);
        pdt_bytes(b, stream + from, to - from);
        if (type == JITANON_PERF_RECORD_COMPRESSED2) pdt_zero(b, (8 - (to - from) % 8) % 8);
        pdt_end(b, at);
    }
}

/* The records "compressed" by pdt_unxor's inverse, split at `cut`. */
static void pdt_compressed(pdt_b *b, uint32_t type, size_t cut)
{
    pdt_b recs;
    size_t i;
    memset(&recs, 0, sizeof recs);
    pdt_records(&recs);
    for (i = 0; i < recs.m.size; i++) recs.m.data[i] ^= 0x5a;
    pdt_compressed_parts(b, type, recs.m.data, recs.m.size, cut);
    jitanon_membuf_release(&recs.m);
}

/* Reads b's records (seeking or not) up to the end or the first error, which *err
   then holds; the reader must open. */
static void pdt_read_to_error(const pdt_b *b, int seek, const jitanon_perf_opts *opts, jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    memin in = memin_make(b->m.data, b->m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, seek ? memin_seek : NULL, &in, opts, err), JITANON_OK);
    while (jitanon_perf_reader_next(&r, &rec, err) == JITANON_OK) {}
    jitanon_perf_reader_release(&r);
}

/* b, whose records straddle two COMPRESSED(2) payloads, read in 3-byte reads: every
   record as pdt_check_all wants it, from 2 compressed records.  Frees b. */
static void pdt_check_compressed(pdt_b *b, const jitanon_perf_opts *opts)
{
    jitanon_perf_reader r;
    jitanon_error err;
    memin in = memin_make(b->m.data, b->m.size, 3, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, opts, &err), JITANON_OK);
    pdt_check_all(&r);
    JT_CHECK_EQ_U(r.stats.compressed_records, 2);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b->m);
}

static void test_perfdata_compressed(void)
{
    pdt_b b;
    jitanon_perf_opts opts;
    jitanon_error err;
    char msg[256];
    uint32_t t;
    pdt_compressed(&b, JITANON_PERF_RECORD_COMPRESSED, 100);
    pdt_read_to_error(&b, 0, NULL, &err);
#if JITANON__ZSTD
    /* without a hook the built-in zstd decoder reads it (this payload is not zstd) */
    JT_CHECK_EQ_U(err.type, JITANON_ERR_BAD_ZSTD);
    JT_CHECK_EQ_U(err.record_type, JITANON_PERF_RECORD_COMPRESSED);
    jitanon_format_error(msg, sizeof msg, &err);
    JT_CHECK(strstr(msg, "zstd") != NULL);
#else
    JT_CHECK_EQ_U(err.type, JITANON_ERR_COMPRESSED);
    jitanon_format_error(msg, sizeof msg, &err);
    JT_CHECK(strstr(msg, "without -z") != NULL);
#endif
    jitanon_membuf_release(&b.m);
    memset(&opts, 0, sizeof opts);
    opts.decompress = pdt_unxor;
    for (t = JITANON_PERF_RECORD_COMPRESSED; t <= JITANON_PERF_RECORD_COMPRESSED2; t += 2) {
        size_t cut;
        for (cut = 0; cut < 700; cut += 37) { /* records straddle the two payloads */
            pdt_compressed(&b, t, cut);
            pdt_check_compressed(&b, &opts);
        }
    }
}

/* -- MMAP2 synthesis and rewriting ------------------------------------------------------- */

static void test_perfdata_encode_mmap2(void)
{
    pdt_b b;
    memin in;
    jitanon_perf_reader r;
    jitanon_perf_record rec, in_rec;
    jitanon_perf_mmap *m = &in_rec.mmap;
    jitanon_perf_attr a;
    static const uint64_t ids21[1] = {21};
    uint8_t buf[256], buf2[256];
    size_t n = 0, n2 = 0;
    pdt_pipe(&b, 1);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL), JITANON_OK);
    while (jitanon_perf_reader_next(&r, &rec, NULL) == JITANON_OK && rec.type != JITANON_PERF_RECORD_COMM) {}
    memset(&in_rec, 0, sizeof in_rec);
    in_rec.misc = 2, in_rec.sid.time = 55, in_rec.sid.cpu = 4, in_rec.big_endian = 1;
    m->pid = 7, m->tid = 8, m->start = 0x1000, m->len = 0x40, m->pgoff = 0x80, m->ino = 9, m->ino_generation = 1;
    m->prot = 5, m->flags = 1, m->filename.data = "/tmp/jitted-7-1.so", m->filename.length = 18;
    a = r.attrs[1];
    a.ids = ids21; /* outlives the reader */
    a.sample_type |= JITANON_PERF_SAMPLE_STREAM_ID; /* every trailer slot */
    a.id_hdr_size += 8;
    JT_CHECK_EQ_U(jitanon_perf_encode_mmap2(NULL, 0, &n, &in_rec, &a, NULL), JITANON_ERR_LIMIT);
    JT_CHECK_EQ_U(n, 72 + 24 + 48);
    JT_CHECK_EQ_U(jitanon_perf_encode_mmap2(buf, sizeof buf, &n, &in_rec, &a, NULL), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__rd16(buf + 4, 1), 2); /* misc */
    JT_CHECK_EQ_U(jitanon__rd16(buf + 6, 1), n);
    JT_CHECK_EQ_U(jitanon__rd64(buf + n - 8, 1), 21);  /* IDENTIFIER = attr's first id */
    JT_CHECK_EQ_U(jitanon__rd64(buf + n - 32, 1), 21); /* ID */
    JT_CHECK_EQ_U(jitanon__rd64(buf + n - 24, 1), 21); /* STREAM_ID */
    JT_CHECK_EQ_U(jitanon__rd32(buf + n - 16, 1), 4);  /* CPU */
    JT_CHECK_EQ_U(jitanon__rd64(buf + n - 40, 1), 55); /* TIME */
    JT_CHECK_EQ_U(jitanon__rd32(buf + n - 44, 1), 8);  /* TID */
    /* read it back through the reader with the original attrs (attr index from IDENTIFIER) */
    jitanon_perf_reader_release(&r);
    b.m.size = 16;
    {
        size_t at = pdt_hdr(&b, JITANON_PERF_RECORD_HEADER_ATTR, 0);
        pdt_attr(&b, 0), pdt_u64(&b, 11), pdt_end(&b, at);
        at = pdt_hdr(&b, JITANON_PERF_RECORD_HEADER_ATTR, 0);
        pdt_attr(&b, 1);
        pdt_u64(&b, 21), pdt_end(&b, at);
    }
    a.sample_type &= ~JITANON_PERF_SAMPLE_STREAM_ID;
    a.id_hdr_size -= 8;
    JT_CHECK_EQ_U(jitanon_perf_encode_mmap2(buf, sizeof buf, &n, &in_rec, &a, NULL), JITANON_OK);
    pdt_bytes(&b, buf, n);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL), JITANON_OK);
    while (jitanon_perf_reader_next(&r, &rec, NULL) == JITANON_OK && rec.type != JITANON_PERF_RECORD_MMAP2) {}
    JT_CHECK_EQ_U(rec.type, JITANON_PERF_RECORD_MMAP2);
    JT_CHECK(rec.attr_index == 1 && rec.sid.pid == 7 && rec.sid.time == 55 && rec.sid.cpu == 4);
    JT_CHECK(rec.mmap.start == 0x1000 && rec.mmap.ino == 9 && rec.mmap.filename.length == 18);
    JT_CHECK(rec.misc == 2 && rec.big_endian == 1);
    /* unchanged, the rewrite is the record itself */
    JT_CHECK_EQ_U(jitanon_perf_rewrite_mmap(buf2, sizeof buf2, &n2, &rec, NULL), JITANON_OK);
    JT_CHECK(n2 == n && memcmp(buf2, buf, n) == 0);
    rec.mmap.start = 0x1010, rec.mmap.len = 0x20, rec.mmap.pgoff = 0x90;
    rec.mmap.ino = 77; /* not written: only start, len and pgoff are */
    JT_CHECK_EQ_U(jitanon_perf_rewrite_mmap(buf2, sizeof buf2, &n2, &rec, NULL), JITANON_OK);
    JT_CHECK_EQ_U(n2, n);
    JT_CHECK(memcmp(buf2, buf, 16) == 0 && memcmp(buf2 + 40, buf + 40, n - 40) == 0);
    JT_CHECK(jitanon__rd64(buf2 + 16, 1) == 0x1010 && jitanon__rd64(buf2 + 24, 1) == 0x20);
    JT_CHECK_EQ_U(jitanon__rd64(buf2 + 32, 1), 0x90);
    JT_CHECK_EQ_U(jitanon_perf_rewrite_mmap(buf2, 8, &n2, &rec, NULL), JITANON_ERR_LIMIT);
    rec.type = JITANON_PERF_RECORD_COMM;
    JT_CHECK_EQ_U(jitanon_perf_rewrite_mmap(buf2, sizeof buf2, &n2, &rec, NULL), JITANON_ERR_INVALID_ARGUMENT);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
}

/* -- malformed input and limits ------------------------------------------------------------ */

static void test_perfdata_errors(void)
{
    static const uint8_t legacy[16] = {'P', 'E', 'R', 'F', 'F', 'I', 'L', 'E'};
    pdt_b b;
    memin in;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_perf_opts opts;
    jitanon_error err;
    in = memin_make(legacy, sizeof legacy, 0, 0); /* the legacy header is read: t_damage.c */
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, &err), JITANON_ERR_TRUNCATED);
    jitanon_perf_reader_release(&r);
    in = memin_make("PERFILE2", 8, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, &err), JITANON_ERR_TRUNCATED);
    jitanon_perf_reader_release(&r);
    memset(&opts, 0, sizeof opts);
    opts.end_zero_ = 1;
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, &opts, &err), JITANON_ERR_BAD_OPTIONS);
    jitanon_perf_reader_release(&r);
    /* payload cap */
    memset(&opts, 0, sizeof opts);
    opts.max_payload = 8;
    pdt_file(&b, 0);
    pdt_read_to_error(&b, 1, &opts, &err);
    JT_CHECK_EQ_U(err.type, JITANON_ERR_LIMIT);
    JT_CHECK(err.offset > 416);
    /* a record crossing the end of the data section */
    pdt_set64(&b, 48, 100);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_ERR_BAD_RECORD);
    jitanon_perf_reader_release(&r);
    /* attrs after the data need seeking */
    pdt_set64(&b, 48, 0);
    pdt_set64(&b, 40, 104);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, &err), JITANON_ERR_UNSUPPORTED);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
}

/* Reads everything, then copies to file and pipe form and re-reads what it wrote: each
   step must end in OK/END or a typed error. */
static jitanon_result pdt_exercise(const uint8_t *p, size_t n, int seek, const jitanon_perf_opts *opts)
{
    jitanon_membuf src, out, out2;
    memin in = memin_make(p, n, seek ? 0 : 13, 0);
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res = jitanon_perf_reader_init(&r, memin_read, seek ? memin_seek : NULL, &in, opts, &err);
    uint64_t records = 0;
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) records++;
    if (res == JITANON_END) res = jitanon_perf_reader_load_features(&r, &err);
    JT_CHECK(res < JITANON_RESULT_COUNT && res != JITANON_AGAIN);
    if (res != JITANON_OK) JT_CHECK(err.type == res && err.info[0]);
    jitanon_perf_reader_release(&r);
    memset(&src, 0, sizeof src);
    src.data = (uint8_t *)(uintptr_t)p;
    src.size = n;
    if (pdt_copy(&src, seek, JITANON_PERF_FILE, opts, &out) == JITANON_OK) {
        /* whatever we accept and write, we accept again (unless allocations fail) */
        jitanon_result again = pdt_copy(&out, 1, JITANON_PERF_PIPE, opts, &out2);
        int failing = opts && opts->allocator.alloc_fn;
        JT_CHECK(again == JITANON_OK || (failing && (again == JITANON_ERR_NOMEM || again == JITANON_ERR_WRITE)));
        if (again != JITANON_OK && !failing) fprintf(stderr, "  n=%u again=%u\n", (unsigned)n, (unsigned)again);
        jitanon_membuf_release(&out2);
    }
    jitanon_membuf_release(&out);
    return res;
}

static void test_perfdata_truncate_every_byte(void)
{
    int big, kind;
    for (kind = 0; kind < 2; kind++)
        for (big = 0; big < 2; big++) {
            pdt_b b;
            size_t n;
            if (kind) pdt_pipe(&b, big);
            else pdt_file(&b, big);
            jitanon_perf_opts strict;
            memset(&strict, 0, sizeof strict);
            strict.strict = 1; /* without it a cut is recovered from: t_damage.c */
            for (n = 0; n < b.m.size; n++) {
                jitanon_result res = pdt_exercise(b.m.data, n, (int)(n & 1), &strict);
                JT_CHECK(res != JITANON_OK || kind == 1); /* a cut file always lacks something */
            }
            JT_CHECK_EQ_U(pdt_exercise(b.m.data, b.m.size, 1, NULL), JITANON_OK);
            jitanon_membuf_release(&b.m);
        }
}

static void test_perfdata_patch_every_byte(void)
{
    static const int delta[4] = {1, -1, 0, 0xff};
    int kind;
    for (kind = 0; kind < 3; kind++) {
        pdt_b b;
        size_t i;
        unsigned d;
        if (kind == 2) pdt_compressed(&b, JITANON_PERF_RECORD_COMPRESSED2, 333);
        else if (kind == 1) pdt_pipe(&b, 1);
        else pdt_file(&b, 0);
        for (i = 0; i < b.m.size; i++) {
            uint8_t saved = b.m.data[i];
            for (d = 0; d < 4; d++) {
                jitanon_perf_opts opts;
                memset(&opts, 0, sizeof opts);
                opts.decompress = pdt_unxor;
                opts.max_payload = 4096; /* keep patched payload sizes cheap */
                b.m.data[i] = d == 2 ? 0 : d == 3 ? 0xff : (uint8_t)(saved + delta[d]);
                pdt_exercise(b.m.data, b.m.size, (int)(i & 1), &opts);
            }
            b.m.data[i] = saved;
        }
        jitanon_membuf_release(&b.m);
    }
}

/* Fails every allocation of reading b in turn (seekable and not): each run ends in
   success or NOMEM (or, with a hook, the hook's failure, which cannot say why) without a
   leak.  Returns how many allocation points there were. */
static long pdt_alloc_sweep(const pdt_b *b, jitanon_decompress_fn hook)
{
    long n;
    for (n = 1; n < 10000; n++) {
        jt_alloc st;
        jitanon_perf_opts opts;
        jitanon_result res;
        memset(&opts, 0, sizeof opts);
        opts.allocator = jt_allocator(&st);
        st.fail_at = n;
        opts.decompress = hook;
        res = pdt_exercise(b->m.data, b->m.size, (int)(n & 1), &opts);
        JT_CHECK_EQ_U(st.live_blocks, 0);
        JT_CHECK(res == JITANON_OK || res == JITANON_ERR_NOMEM || (hook && res == JITANON_ERR_BAD_RECORD));
        if (st.calls < n) return n; /* no allocation failed: every point was covered */
    }
    return 0;
}

static void test_perfdata_fail_every_alloc(void)
{
    int kind;
    for (kind = 0; kind < 3; kind++) {
        pdt_b b;
        if (kind == 2) pdt_compressed(&b, JITANON_PERF_RECORD_COMPRESSED, 200);
        else if (kind == 1) pdt_pipe(&b, 0);
        else pdt_file(&b, 1);
        JT_CHECK(pdt_alloc_sweep(&b, pdt_unxor) > 5);
        jitanon_membuf_release(&b.m);
    }
}

static void test_perfdata_writer_rules(void)
{
    jitanon_membuf m;
    jitanon_perf_writer w;
    jitanon_error err;
    uint8_t rec[8] = {68, 0, 0, 0, 0, 0, 8, 0};
    pdt_b b;
    memin in;
    jitanon_perf_reader r;
    memset(&m, 0, sizeof m);
    JT_CHECK_EQ_U(jitanon_perf_writer_init(&w, JITANON_PERF_FILE, 0, pdt_sink(&m), NULL, NULL, &err),
                  JITANON_ERR_INVALID_ARGUMENT);
    /* no attrs, no records: still a valid (empty) file */
    JT_CHECK_EQ_U(jitanon_perf_writer_init(&w, JITANON_PERF_FILE, 0, pdt_sink(&m), membuf_pwrite, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_writer_write(&w, rec, 8, &err), JITANON_OK);
    pdt_file(&b, 0);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, NULL), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_writer_add_attr(&w, &r.attrs[0], &err), JITANON_ERR_UNSUPPORTED);
    JT_CHECK_EQ_U(jitanon_perf_writer_add_feature(&w, 0, "x", 1, &err), JITANON_ERR_INVALID_ARGUMENT);
    JT_CHECK_EQ_U(jitanon_perf_writer_finish(&w, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_writer_write(&w, rec, 8, &err), JITANON_ERR_INVALID_ARGUMENT);
    jitanon_perf_writer_release(&w);
    JT_CHECK_EQ_U(m.size, 104 + 8);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
    jitanon_membuf_release(&m);
}

#if defined(__unix__)
static int pdt_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static void test_perfdata_atomic_file(void)
{
    char path[128], tmp[160];
    jitanon_atomic_file f;
    jitanon_sink s;
    jitanon_error err;
    jitanon__fmt(path, sizeof path, "/tmp/jitanon-t-%u.data", (unsigned)getpid());
    jitanon__fmt(tmp, sizeof tmp, "/tmp/.jitanon-t-%u.data.%u-0.tmp", (unsigned)getpid(), (unsigned)getpid());
    JT_CHECK_EQ_U(jitanon_atomic_open(&f, path, NULL, &err), JITANON_OK);
    JT_CHECK(pdt_exists(tmp) && !pdt_exists(path));
    s = jitanon_atomic_sink(&f);
    JT_CHECK(s.write_fn(s.user, "hello", 5) == 0);
    JT_CHECK(jitanon_atomic_pwrite(&f, "J", 1, 0) == 0);
    jitanon_atomic_abort(&f);
    JT_CHECK(!pdt_exists(tmp) && !pdt_exists(path));
    JT_CHECK_EQ_U(jitanon_atomic_open(&f, path, NULL, &err), JITANON_OK);
    s = jitanon_atomic_sink(&f);
    JT_CHECK(s.write_fn(s.user, "hello", 5) == 0);
    JT_CHECK(jitanon_atomic_pwrite(&f, "J", 1, 0) == 0);
    JT_CHECK_EQ_U(jitanon_atomic_commit(&f, 0, &err), JITANON_OK);
    JT_CHECK(!pdt_exists(tmp) && pdt_exists(path));
    {
        char got[8] = {0};
        FILE *in = fopen(path, "rb");
        JT_CHECK(in && fread(got, 1, sizeof got, in) == 5 && memcmp(got, "Jello", 5) == 0);
        if (in) fclose(in);
    }
    /* an allocation failure while opening never removes the existing target */
    {
        long n;
        for (n = 1; n <= 3; n++) {
            jt_alloc st;
            jitanon_allocator al = jt_allocator(&st);
            st.fail_at = n;
            JT_CHECK_EQ_U(jitanon_atomic_open(&f, path, &al, &err), JITANON_ERR_NOMEM);
            JT_CHECK(pdt_exists(path) && !pdt_exists(tmp));
            JT_CHECK_EQ_U(st.live_blocks, 0);
        }
    }
    remove(path);
    JT_CHECK_EQ_U(jitanon_atomic_open(&f, "/nonexistent-dir/x.data", NULL, &err), JITANON_ERR_IO);
    /* a target that is no regular file is written in place, never renamed over: `-o
       /dev/null` once replaced /dev/null with a file (as root).  A FIFO stands in. */
    if (mkfifo(path, 0600) == 0) {
        char got[8] = {0};
        struct stat st;
        int rd = open(path, O_RDONLY | O_NONBLOCK);
        JT_CHECK(rd >= 0);
        JT_CHECK_EQ_U(jitanon_atomic_open(&f, path, NULL, &err), JITANON_OK);
        JT_CHECK(!pdt_exists(tmp));
        s = jitanon_atomic_sink(&f);
        JT_CHECK(s.write_fn(s.user, "fifo", 4) == 0);
        JT_CHECK_EQ_U(jitanon_atomic_commit(&f, 0, &err), JITANON_OK);
        JT_CHECK(stat(path, &st) == 0 && S_ISFIFO(st.st_mode));
        JT_CHECK(rd >= 0 && read(rd, got, sizeof got) == 4 && memcmp(got, "fifo", 4) == 0);
        if (rd >= 0) close(rd);
        remove(path);
    }
}
#endif

#if JITANON__POSIX
static int pdt_holds(const char *path, const char *text)
{
    char got[32] = {0};
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    if (f) fclose(f);
    return n == strlen(text) && memcmp(got, text, n) == 0;
}

/* The one temporary-file scheme (the atomic output and the injector's ELF files): a name
   in use, even by a symlink planted there, moves on to the next name; nothing is ever
   written through the link. */
static void test_os_tmp_never_through_a_symlink(void)
{
    static const uint8_t stub[20] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 62, 0};
    char dir[] = "build/ostmp-XXXXXX", victim[64], out[64], elf[64], link0[128], link1[128], tmp[160];
    jitanon_atomic_file af;
    jitanon_error err;
    jitanon_sink s;
    FILE *f;
    int fd;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    sprintf(victim, "%s/victim", dir);
    sprintf(out, "%s/out.data", dir);
    sprintf(elf, "%s/jitted-1-2.so", dir);
    sprintf(link0, "%s/.out.data.%u-0.tmp", dir, (unsigned)getpid());
    sprintf(link1, "%s/.jitted-1-2.so.%u-0.tmp", dir, (unsigned)getpid());
    f = fopen(victim, "w");
    fputs("precious", f);
    fclose(f);
    JT_CHECK(symlink("victim", link0) == 0 && symlink("victim", link1) == 0);
    fd = jitanon__os_create_tmp(tmp, sizeof tmp, out);
    JT_CHECK(fd >= 0 && strstr(tmp, "-1.tmp") != NULL);
    if (fd >= 0) close(fd), remove(tmp);
    JT_CHECK(jitanon__os_create_tmp(tmp, strlen(dir) + 4, out) < 0); /* no room for the name */
    JT_CHECK_EQ_U(jitanon_atomic_open(&af, out, NULL, &err), JITANON_OK);
    s = jitanon_atomic_sink(&af);
    JT_CHECK(s.write_fn(s.user, "new", 3) == 0);
    JT_CHECK_EQ_U(jitanon_atomic_commit(&af, 1, &err), JITANON_OK);
    JT_CHECK(pdt_holds(out, "new") && pdt_holds(victim, "precious"));
    f = fopen(elf, "w"); /* a stub in the way: replaced through a temporary file */
    fwrite(stub, 1, sizeof stub, f);
    fputs("older", f);
    fclose(f);
    JT_CHECK(jitanon__inj_write_default(NULL, dir, "jitted-1-2.so", stub, sizeof stub) == 0);
    JT_CHECK(pdt_holds(victim, "precious"));
    f = fopen(elf, "rb");
    JT_CHECK(f && fread(tmp, 1, sizeof tmp, f) == sizeof stub && memcmp(tmp, stub, sizeof stub) == 0);
    if (f) fclose(f);
    remove(link0), remove(link1), remove(victim), remove(out), remove(elf);
    JT_CHECK(rmdir(dir) == 0); /* nothing else was left */
}
#endif

/* The same sweeps, strided, over a real `perf record -k mono -e cpu-clock` recording of
   tinyjit (the fuzz seed): cut, patched and starved of memory, it ends in OK or a typed
   error, never a crash or a leak. */
static void test_perfdata_real_recording_sweeps(void)
{
    FILE *f = fopen("fuzz/corpus/perfdata/tinyjit-file.data", "rb");
    uint8_t *data, *copy;
    size_t n, i;
    long k;
    static const int patch[4] = {1, -1, 0x100, 0x1ff};
    if (!f) {
        jt_skip("fuzz/corpus/perfdata/tinyjit-file.data not found (run from the repo root)");
        return;
    }
    data = (uint8_t *)malloc(1 << 20);
    n = fread(data, 1, 1 << 20, f);
    fclose(f);
    copy = (uint8_t *)malloc(n);
    for (i = 0; i <= n; i += 7) pdt_exercise(data, i, (int)(i & 1), NULL);
    for (i = 0; i < n; i += 13) {
        int v;
        memcpy(copy, data, n);
        for (v = 0; v < 4; v++) {
            copy[i] = patch[v] == 0x100 ? 0 : patch[v] == 0x1ff ? 0xff : (uint8_t)(data[i] + patch[v]);
            pdt_exercise(copy, n, (int)(i & 1), NULL);
        }
    }
    for (k = 1; k < 200; k++) {
        jt_alloc a;
        jitanon_perf_opts o;
        memset(&o, 0, sizeof o);
        o.allocator = jt_allocator(&a);
        a.fail_at = k;
        pdt_exercise(data, n, 1, &o);
        JT_CHECK_EQ_U(a.live_bytes, 0);
        if (a.calls < k) break; /* every allocation point has failed once */
    }
    free(copy);
    free(data);
}

/* -- layouts perf still reads, what a pipe may carry, errors at the record (issue 13) ---- */

/* A pipe: the 16-byte header and the two attrs of pdt_pipe_attrs. */
static void pdt_pipe_start(pdt_b *b, int big)
{
    memset(b, 0, sizeof *b);
    b->big = big;
    pdt_bytes(b, big ? "2ELIFREP" : "PERFILE2", 8);
    pdt_u64(b, 16);
    pdt_pipe_attrs(b);
}

static void pdt_comm(pdt_b *b)
{
    size_t at = pdt_hdr(b, JITANON_PERF_RECORD_COMM, 0);
    pdt_u32(b, 100);
    pdt_u32(b, 101);
    pdt_str8(b, "prog");
    pdt_trailer(b, 100, 101, 10, 11);
    pdt_end(b, at);
}

/* Reads a whole stream into `recs` copies of the type and raw size; returns the count. */
static size_t pdt_read_all(const jitanon_membuf *m, int seek, jitanon_perf_record *recs, size_t cap,
                           jitanon_perf_reader *r)
{
    memin in = memin_make(m->data, m->size, 3, 0);
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res = jitanon_perf_reader_init(r, memin_read, seek ? memin_seek : NULL, &in, NULL, &err);
    size_t n = 0;
    JT_CHECK_EQ_U(res, JITANON_OK);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(r, &rec, &err)) == JITANON_OK)
        if (n < cap) recs[n++] = rec; /* views into r's buffer: only the decoded numbers are used */
    JT_CHECK_EQ_U(res, JITANON_END);
    return n;
}

/* A pipe -> pipe copy is byte-identical, a pipe -> file copy keeps every record. */
static void pdt_passes_through(const jitanon_membuf *src)
{
    jitanon_membuf p, f;
    JT_CHECK_EQ_U(pdt_copy(src, 0, JITANON_PERF_PIPE, NULL, &p), JITANON_OK);
    JT_CHECK(p.size == src->size && memcmp(p.data, src->data, p.size) == 0);
    JT_CHECK_EQ_U(pdt_copy(src, 0, JITANON_PERF_FILE, NULL, &f), JITANON_OK);
    pdt_same_records(src, &f);
    jitanon_membuf_release(&p), jitanon_membuf_release(&f);
}

/* perf 4.x: HEADER_TRACING_DATA of 12 bytes (no pad), the tracing data right after it. */
static void test_perfdata_layout_tracing_data_12(void)
{
    int big;
    for (big = 0; big < 2; big++) {
        pdt_b b;
        jitanon_perf_reader r;
        memin in;
        jitanon_perf_record rec;
        size_t at, n = 0;
        pdt_pipe_start(&b, big);
        at = pdt_hdr(&b, JITANON_PERF_RECORD_HEADER_TRACING_DATA, 0);
        pdt_u32(&b, 16);
        pdt_end(&b, at);
        JT_CHECK_EQ_U(pdt_pos(&b) - at, 12);
        pdt_bytes(&b, "\x17\x08" "Dtracing0.6-abc", 16);
        pdt_comm(&b); /* starts 4 bytes off the 8-byte grid, as in perf 4.x's pipes */
        in = memin_make(b.m.data, b.m.size, 5, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL), JITANON_OK);
        while (jitanon_perf_reader_next(&r, &rec, NULL) == JITANON_OK) {
            if (rec.type == JITANON_PERF_RECORD_HEADER_TRACING_DATA) {
                JT_CHECK(rec.size == 12 && rec.raw.size == 28 && rec.payload.size == 16);
                JT_CHECK(memcmp(rec.payload.data, "\x17\x08" "Dtracing", 10) == 0);
            }
            if (rec.type == JITANON_PERF_RECORD_COMM)
                JT_CHECK(rec.comm.comm.length == 4 && rec.sid.time == 10 && rec.offset == at + 28);
            n++;
        }
        JT_CHECK_EQ_U(n, 4);
        jitanon_perf_reader_release(&r);
        pdt_passes_through(&b.m);
        jitanon_membuf_release(&b.m);
    }
}

/* An MMAP2 of the first layout: maj..ino_generation, then the name (no prot, flags). */
static size_t pdt_mmap2_first(pdt_b *b, const char *name)
{
    size_t at = pdt_hdr(b, JITANON_PERF_RECORD_MMAP2, 2);
    pdt_u32(b, 100);
    pdt_u32(b, 100);
    pdt_u64(b, 0x7f0000);
    pdt_u64(b, 0x2000);
    pdt_u64(b, 0x1000);
    pdt_u32(b, 8);
    pdt_u32(b, 1);
    pdt_u64(b, 1234);
    pdt_u64(b, 5);
    pdt_str8(b, name);
    pdt_trailer(b, 100, 100, 30, 11);
    pdt_end(b, at);
    return at;
}

/* Kernel 3.10's MMAP2: every name length around the 8-byte padding, beside today's. */
static void test_perfdata_layout_mmap2_first(void)
{
    static const char *const names[] = {"", "//anon", "[vdso]", "1234567", "12345678", "/usr/lib64/libc-2.17.so"};
    const size_t count = sizeof names / sizeof names[0];
    int big;
    for (big = 0; big < 2; big++) {
        pdt_b b;
        jitanon_perf_record recs[16];
        jitanon_perf_reader r;
        memin in;
        size_t i, n;
        pdt_pipe_start(&b, big);
        for (i = 0; i < count; i++) pdt_mmap2_first(&b, names[i]);
        pdt_mmap2(&b, 0, 11); /* today's layout: prot 5, flags 2, "//anon" */
        pdt_mmap2(&b, 1, 11); /* with a build id */
        in = memin_make(b.m.data, b.m.size, 3, 0);
        JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL), JITANON_OK);
        for (n = 0; jitanon_perf_reader_next(&r, &recs[n], NULL) == JITANON_OK && n < 15; n++) {
            const jitanon_perf_mmap *m = &recs[n].mmap;
            if (n < 2 || n >= 2 + count) continue;
            i = n - 2;
            JT_CHECK(m->first_layout && m->prot == 0 && m->flags == 0);
            JT_CHECK(m->maj == 8 && m->min == 1 && m->ino == 1234 && m->ino_generation == 5 && m->pgoff == 0x1000);
            JT_CHECK(m->filename.length == strlen(names[i]) && memcmp(m->filename.data, names[i], m->filename.length) == 0);
            JT_CHECK(recs[n].sid.time == 30 && recs[n].sid.id == 11);
        }
        JT_CHECK_EQ_U(n, 2 + count + 2);
        if (n == 2 + count + 2) {
            JT_CHECK(!recs[2 + count].mmap.first_layout && recs[2 + count].mmap.prot == 5 && recs[2 + count].mmap.flags == 2);
            JT_CHECK(recs[2 + count].mmap.filename.length == 6);
            JT_CHECK(!recs[3 + count].mmap.first_layout && recs[3 + count].mmap.has_build_id);
        }
        jitanon_perf_reader_release(&r);
        pdt_passes_through(&b.m);
        jitanon_membuf_release(&b.m);
    }
}

/* One damaged record after the attrs and a COMM: builds it, returns its offset. */
static size_t pdt_damaged(pdt_b *b, int kind)
{
    size_t at;
    pdt_comm(b);
    at = pdt_pos(b);
    switch (kind) {
    case 0: /* header.size below 8 */
        pdt_hdr(b, JITANON_PERF_RECORD_MMAP, 0);
        jitanon__wr16(b->m.data + at + 6, 4, b->big);
        pdt_zero(b, 8);
        break;
    case 1: /* AUXTRACE shorter than its 48 bytes */
        pdt_hdr(b, JITANON_PERF_RECORD_AUXTRACE, 0);
        pdt_u64(b, 0);
        pdt_end(b, at);
        break;
    case 2: /* HEADER_TRACING_DATA shorter than 12 */
        pdt_hdr(b, JITANON_PERF_RECORD_HEADER_TRACING_DATA, 0);
        pdt_end(b, at);
        break;
    case 3: /* payload over max_payload (8) */
        pdt_hdr(b, JITANON_PERF_RECORD_HEADER_TRACING_DATA, 0);
        pdt_u32(b, 16), pdt_u32(b, 0);
        pdt_end(b, at);
        pdt_zero(b, 16);
        break;
    case 4: /* callchain runs past the record */
        pdt_hdr(b, JITANON_PERF_RECORD_SAMPLE, 2);
        pdt_u64(b, 11), pdt_u64(b, 0x400010), pdt_u32(b, 100), pdt_u32(b, 101), pdt_u64(b, 50), pdt_u64(b, 11);
        pdt_u32(b, 3), pdt_u32(b, 0), pdt_u64(b, 4000), pdt_u64(b, 9);
        pdt_end(b, at);
        break;
    case 5: /* read values run past the record (attr 1 has READ) */
        pdt_hdr(b, JITANON_PERF_RECORD_SAMPLE, 2);
        pdt_u64(b, 21), pdt_u64(b, 0x400010), pdt_u32(b, 100), pdt_u32(b, 101), pdt_u64(b, 50), pdt_u64(b, 21);
        pdt_u32(b, 3), pdt_u32(b, 0), pdt_u64(b, 4000), pdt_u64(b, 77);
        pdt_end(b, at);
        break;
    case 6: /* sample shorter than its sample_type fields */
        pdt_hdr(b, JITANON_PERF_RECORD_SAMPLE, 2);
        pdt_u64(b, 11), pdt_u64(b, 0x400010);
        pdt_end(b, at);
        break;
    case 7: /* MMAP file name without NUL */
        pdt_hdr(b, JITANON_PERF_RECORD_MMAP, 2);
        pdt_u32(b, 100), pdt_u32(b, 100), pdt_u64(b, 1), pdt_u64(b, 2), pdt_u64(b, 3);
        pdt_bytes(b, "abcdefgh", 8);
        pdt_trailer(b, 100, 100, 20, 11);
        pdt_end(b, at);
        break;
    case 8: /* MMAP2 shorter than its fixed part */
        pdt_hdr(b, JITANON_PERF_RECORD_MMAP2, 2);
        pdt_u32(b, 100), pdt_u32(b, 100), pdt_u64(b, 1);
        pdt_trailer(b, 100, 100, 20, 11);
        pdt_end(b, at);
        break;
    case 9: /* COMM without NUL */
        pdt_hdr(b, JITANON_PERF_RECORD_COMM, 0);
        pdt_u32(b, 100), pdt_u32(b, 101);
        pdt_bytes(b, "progprog", 8);
        pdt_trailer(b, 100, 101, 10, 11);
        pdt_end(b, at);
        break;
    case 10: /* ID_INDEX with more entries than it holds */
        pdt_hdr(b, JITANON_PERF_RECORD_ID_INDEX, 0);
        pdt_u64(b, 5), pdt_u64(b, 11), pdt_u64(b, 0), pdt_u64(b, 0), pdt_u64(b, 100);
        pdt_end(b, at);
        break;
    case 11: /* HEADER_ATTR whose attr.size is larger than the record */
        pdt_hdr(b, JITANON_PERF_RECORD_HEADER_ATTR, 0);
        pdt_u32(b, 1), pdt_u32(b, 200);
        pdt_zero(b, 64);
        pdt_end(b, at);
        break;
    case 12: /* EXIT shorter than its sample_id trailer */
        pdt_hdr(b, JITANON_PERF_RECORD_EXIT, 0);
        pdt_u64(b, 0);
        pdt_end(b, at);
        break;
    default: /* FORK shorter than its fixed part once the trailer is off */
        pdt_hdr(b, JITANON_PERF_RECORD_FORK, 0);
        pdt_u64(b, 0);
        pdt_trailer(b, 100, 100, 20, 11);
        pdt_end(b, at);
        break;
    }
    return at;
}

/* Every record-level error points at the record's first byte and names the record. */
static void test_perfdata_layout_errors_at_record(void)
{
    static const uint32_t types[14] = {1, 71, 66, 66, 9, 9, 9, 1, 10, 3, 69, 64, 4, 7};
    int kind, big;
    for (big = 0; big < 2; big++)
        for (kind = 0; kind < 14; kind++) {
            pdt_b b;
            memin in;
            jitanon_perf_reader r;
            jitanon_perf_record rec;
            jitanon_perf_opts opts;
            jitanon_error err;
            jitanon_result res;
            size_t at;
            pdt_pipe_start(&b, big);
            at = pdt_damaged(&b, kind);
            memset(&opts, 0, sizeof opts);
            opts.max_payload = 8;
            in = memin_make(b.m.data, b.m.size, 0, 0);
            res = jitanon_perf_reader_init(&r, memin_read, NULL, &in, &opts, &err);
            while (res == JITANON_OK) res = jitanon_perf_reader_next(&r, &rec, &err);
            JT_CHECK(res == JITANON_ERR_BAD_RECORD || (kind == 3 && res == JITANON_ERR_LIMIT));
            JT_CHECK_EQ_U(err.offset, at);
            JT_CHECK_EQ_U(err.record_index, 3);
            JT_CHECK_EQ_U(err.record_type, types[kind]);
            JT_CHECK(strstr(err.info, jitanon_perf_record_name(types[kind])) != NULL);
            if (err.offset != at) fprintf(stderr, "  kind %d: %s\n", kind, err.info);
            jitanon_perf_reader_release(&r);
            jitanon_membuf_release(&b.m);
        }
}

/* perf_event_attr of 136 and 144 bytes (perf >= 6.3; perf 6.1 refuses them) is read in
   both modes, and copies keep the size. */
static void test_perfdata_layout_attr_136_144(void)
{
    static const unsigned sizes[2] = {136, 144};
    int k, big;
    for (k = 0; k < 2; k++)
        for (big = 0; big < 2; big++) {
            pdt_b b;
            jitanon_membuf f, p;
            jitanon_perf_record recs[8];
            jitanon_perf_reader r;
            size_t at, n;
            memset(&b, 0, sizeof b);
            b.big = big;
            pdt_bytes(&b, big ? "2ELIFREP" : "PERFILE2", 8);
            pdt_u64(&b, 16);
            at = pdt_hdr(&b, JITANON_PERF_RECORD_HEADER_ATTR, 0);
            pdt_attr(&b, 0);
            jitanon__wr32(b.m.data + at + 12, sizes[k], big);
            pdt_zero(&b, sizes[k] - 128);
            pdt_u64(&b, 11);
            pdt_end(&b, at);
            pdt_comm(&b);
            pdt_sample(&b, 0);
            JT_CHECK_EQ_U(pdt_copy(&b.m, 0, JITANON_PERF_FILE, NULL, &f), JITANON_OK);
            JT_CHECK_EQ_U(pdt_copy(&f, 1, JITANON_PERF_PIPE, NULL, &p), JITANON_OK);
            n = pdt_read_all(&f, 1, recs, 8, &r);
            JT_CHECK_EQ_U(n, 2);
            JT_CHECK(r.attr_count == 1 && r.attrs[0].raw.size == sizes[k] && r.attrs[0].size == sizes[k]);
            JT_CHECK(r.attrs[0].sample_type == PDT_ST0 && r.attrs[0].clockid == 1);
            if (n == 2) JT_CHECK(recs[1].sample.ip == 0x400010 && recs[1].sid.time == 50 && recs[1].sample.callchain_nr == 3);
            jitanon_perf_reader_release(&r);
            n = pdt_read_all(&p, 0, recs, 8, &r);
            JT_CHECK_EQ_U(n, 3);
            JT_CHECK(r.attr_count == 1 && r.attrs[0].raw.size == sizes[k]);
            jitanon_perf_reader_release(&r);
            pdt_same_records(&b.m, &f);
            pdt_same_records(&b.m, &p);
            jitanon_membuf_release(&f), jitanon_membuf_release(&p), jitanon_membuf_release(&b.m);
        }
}

/* A pipe carries only the features perf reads from a pipe. */
static void test_perfdata_layout_pipe_features(void)
{
    static const struct {
        unsigned bit;
        size_t size;
        int in_pipe;
    } feats[] = {{3, 6, 1},   /* HOSTNAME */
                 {8, 0, 0},   /* CPUDESC, empty: perf stops ("failed to process type: 80") */
                 {11, 8, 1},  /* CMDLINE */
                 {12, 0, 1},  /* EVENT_DESC, empty: accepted */
                 {15, 0, 1},  /* BRANCH_STACK: a flag, empty by design */
                 {18, 8, 0},  /* AUXTRACE index: file offsets */
                 {19, 0, 1},  /* STAT: a flag */
                 {24, 8, 0},  /* DIR_FORMAT: a directory of files */
                 {1, 0, 0}};  /* TRACING_DATA, empty: perf waits for tracing data */
    const size_t count = sizeof feats / sizeof feats[0];
    jitanon_membuf file, pipe;
    jitanon_perf_writer w;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_perf_attr a;
    memin in;
    pdt_b b;
    size_t i, at;
    uint64_t id = 11;
    memset(&file, 0, sizeof file);
    memset(&b, 0, sizeof b);
    pdt_attr(&b, 0);
    memset(&a, 0, sizeof a);
    a.raw.data = b.m.data;
    a.raw.size = b.m.size;
    a.ids = &id;
    a.id_count = 1;
    JT_CHECK_EQ_U(jitanon_perf_writer_init(&w, JITANON_PERF_FILE, 0, pdt_sink(&file), membuf_pwrite, NULL, NULL),
                  JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_writer_add_attr(&w, &a, NULL), JITANON_OK);
    for (i = 0; i < count; i++)
        JT_CHECK_EQ_U(jitanon_perf_writer_add_feature(&w, feats[i].bit, "12345678", feats[i].size, NULL), JITANON_OK);
    jitanon_membuf_release(&b.m);
    b.big = 0;
    pdt_comm(&b);
    JT_CHECK_EQ_U(jitanon_perf_writer_write(&w, b.m.data, b.m.size, NULL), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_writer_finish(&w, NULL), JITANON_OK);
    jitanon_perf_writer_release(&w);
    JT_CHECK_EQ_U(pdt_copy(&file, 1, JITANON_PERF_PIPE, NULL, &pipe), JITANON_OK);
    in = memin_make(pipe.data, pipe.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL), JITANON_OK);
    while (jitanon_perf_reader_next(&r, &rec, NULL) == JITANON_OK) {
        JT_CHECK(rec.type != JITANON_PERF_RECORD_HEADER_TRACING_DATA);
        if (rec.type == JITANON_PERF_RECORD_HEADER_FEATURE) JT_CHECK(rec.feature.feat_id != 0);
    }
    for (i = 0; i < count; i++)
        if ((r.features[0] >> feats[i].bit & 1) != (uint64_t)feats[i].in_pipe)
            JT_CHECK_EQ_U(feats[i].bit, 0); /* names the bit that is wrong */
    jitanon_perf_reader_release(&r);
    /* the file itself keeps every section */
    in = memin_make(file.data, file.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, NULL), JITANON_OK);
    for (i = 0, at = 0; i < count; i++) at += r.features[0] >> feats[i].bit & 1;
    JT_CHECK_EQ_U(at, count);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&file), jitanon_membuf_release(&pipe), jitanon_membuf_release(&b.m);
}

/* opts.follow: a file perf record is still writing, as it writes it - the ids and attrs
   first (the header still zeros), then the header with data size 0, the records in
   pieces, and at the end the features and the header with the size.  Every record comes
   once, in order, whatever the reads cut; a record not yet whole is JITANON_AGAIN, never
   damage; the size ends the data, and the features load then. */
static void pdt_follow(int big, size_t step, int odd)
{
    pdt_b b;
    uint8_t *live;
    memin in;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_perf_opts opts;
    jitanon_error err;
    jitanon_result res;
    size_t data_end, n = 0, grow;
    unsigned i = 0;
    pdt_file(&b, big);
    data_end = 416 + (size_t)jitanon__rd64(b.m.data + 48, big);
    live = (uint8_t *)malloc(b.m.size);
    JT_CHECK(live != NULL);
    if (!live) return;
    memcpy(live, b.m.data, b.m.size);
    memset(live, 0, 104); /* what the file holds before perf writes its header */
    memset(&opts, 0, sizeof opts);
    opts.follow = 1;
    in = memin_make(live, 0, step, odd);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &opts, &err), JITANON_AGAIN);
    jitanon_perf_reader_release(&r);
    in = memin_make(live, 416, step, odd);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &opts, &err), JITANON_AGAIN);
    jitanon_perf_reader_release(&r);
    memcpy(live, b.m.data, 104);
    jitanon__wr64(live + 48, 0, big);
    in = memin_make(live, 416, step, odd);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &opts, &err), JITANON_OK);
    JT_CHECK_EQ_U(r.warnings, 0);
    pdt_check_attrs(&r);
    for (grow = 416; grow <= data_end; grow += grow % 3 + 1) { /* the data in pieces of 1..3 bytes */
        in.size = grow;
        while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
            if (i < PDT_NRECORDS) pdt_check_record(&r, &rec, i);
            i++;
        }
        JT_CHECK_EQ_U(res, JITANON_AGAIN);
        n++;
    }
    in.size = data_end;
    while (jitanon_perf_reader_next(&r, &rec, &err) == JITANON_OK) {
        if (i < PDT_NRECORDS) pdt_check_record(&r, &rec, i);
        i++;
    }
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_AGAIN);
    JT_CHECK_EQ_U(i, PDT_NRECORDS);
    JT_CHECK_EQ_U(r.warnings, 0);
    memcpy(live, b.m.data, 104); /* perf finishes: the features, then the header */
    in.size = b.m.size;
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_END);
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_END);
    JT_CHECK_EQ_U(r.data_size, data_end - 416);
    JT_CHECK_EQ_U(r.warnings, 0);
    pdt_check_features(&r);
    JT_CHECK(n > 100);
    jitanon_perf_reader_release(&r);
    free(live);
    jitanon_membuf_release(&b.m);
}

static void test_perfdata_follow(void)
{
    pdt_b b;
    memin in;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_perf_opts opts;
    jitanon_error err;
    jitanon_result res;
    uint64_t first = 0, bad;
    pdt_follow(0, 0, 0);
    pdt_follow(1, 0, 0);
    pdt_follow(0, 5, 1); /* reads of 1..97 bytes */
    /* A recording whose perf was killed keeps data size 0: records up to the cut one, then
       JITANON_AGAIN for ever (the caller knows the writer is gone) */
    pdt_file(&b, 0);
    jitanon__wr64(b.m.data + 48, 0, 0);
    memset(&opts, 0, sizeof opts);
    opts.follow = 1;
    in = memin_make(b.m.data, 416 + 100, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &opts, &err), JITANON_OK);
    while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) first = rec.offset + rec.raw.size;
    JT_CHECK_EQ_U(res, JITANON_AGAIN);
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_AGAIN);
    JT_CHECK(first > 416 && first <= 416 + 100);
    jitanon_perf_reader_release(&r);
    /* Bytes that are no record, followed: while the size is 0 they may be the features
       perf writes before its header: waited on.  Once the header says they are in the
       data: the error, at their byte, as without follow. */
    bad = first;
    jitanon__wr16(b.m.data + bad + 6, 4, 0); /* a record of 4 bytes */
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &opts, &err), JITANON_OK);
    while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {}
    JT_CHECK_EQ_U(res, JITANON_AGAIN);
    JT_CHECK_EQ_U(r.warnings, 0);
    jitanon__wr64(b.m.data + 48, b.m.size - 416, 0); /* perf finished after all */
    JT_CHECK_EQ_U(jitanon_perf_reader_next(&r, &rec, &err), JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, bad);
    jitanon_perf_reader_release(&r);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    JT_CHECK_EQ_U(jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err), JITANON_OK);
    while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {}
    JT_CHECK_EQ_U(res, JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, bad);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&b.m);
}

#if JITANON__POSIX
/* jitanon_perf_reader_open with opts.follow: stdio's end of file is not the end */
static void test_perfdata_follow_file(void)
{
    pdt_b b;
    char path[128];
    FILE *f;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_perf_opts opts;
    jitanon_result res;
    unsigned i = 0;
    size_t data_end;
    pdt_file(&b, 0);
    data_end = 416 + (size_t)jitanon__rd64(b.m.data + 48, 0);
    jitanon__fmt(path, sizeof path, "/tmp/jitanon-t-follow-%u.data", (unsigned)getpid());
    f = fopen(path, "wb");
    JT_CHECK(f != NULL);
    if (!f) return;
    jitanon__wr64(b.m.data + 48, 0, 0);
    JT_CHECK(fwrite(b.m.data, 1, 500, f) == 500 && fflush(f) == 0);
    memset(&opts, 0, sizeof opts);
    opts.follow = 1;
    JT_CHECK_EQ_U(jitanon_perf_reader_open(&r, path, &opts, NULL), JITANON_OK);
    while ((res = jitanon_perf_reader_next(&r, &rec, NULL)) == JITANON_OK) i++;
    JT_CHECK_EQ_U(res, JITANON_AGAIN);
    JT_CHECK(fwrite(b.m.data + 500, 1, b.m.size - 500, f) == b.m.size - 500 && fflush(f) == 0);
    while ((res = jitanon_perf_reader_next(&r, &rec, NULL)) == JITANON_OK) i++;
    JT_CHECK_EQ_U(res, JITANON_AGAIN); /* the header still says 0: the features read as no record yet */
    jitanon__wr64(b.m.data + 48, data_end - 416, 0);
    JT_CHECK(fseek(f, 0, SEEK_SET) == 0 && fwrite(b.m.data, 1, 104, f) == 104 && fclose(f) == 0);
    while ((res = jitanon_perf_reader_next(&r, &rec, NULL)) == JITANON_OK) i++;
    JT_CHECK_EQ_U(res, JITANON_END);
    JT_CHECK_EQ_U(i, PDT_NRECORDS);
    jitanon_perf_reader_release(&r);
    remove(path);
    jitanon_membuf_release(&b.m);
}
#endif

static void suite_perfdata(void)
{
    JT_RUN(test_perfdata_real_recording_sweeps);
    JT_RUN(test_perfdata_file_both_orders);
    JT_RUN(test_perfdata_pipe_both_orders);
    JT_RUN(test_perfdata_follow);
#if JITANON__POSIX
    JT_RUN(test_perfdata_follow_file);
#endif
    JT_RUN(test_perfdata_roundtrip);
    JT_RUN(test_perfdata_compressed);
    JT_RUN(test_perfdata_encode_mmap2);
    JT_RUN(test_perfdata_errors);
    JT_RUN(test_perfdata_writer_rules);
#if defined(__unix__)
    JT_RUN(test_perfdata_atomic_file);
#endif
#if JITANON__POSIX
    JT_RUN(test_os_tmp_never_through_a_symlink);
#endif
    JT_RUN(test_perfdata_truncate_every_byte);
    JT_RUN(test_perfdata_patch_every_byte);
    JT_RUN(test_perfdata_fail_every_alloc);
    JT_RUN(test_perfdata_layout_tracing_data_12);
    JT_RUN(test_perfdata_layout_mmap2_first);
    JT_RUN(test_perfdata_layout_errors_at_record);
    JT_RUN(test_perfdata_layout_attr_136_144);
    JT_RUN(test_perfdata_layout_pipe_features);
}
JT_SUITE(perfdata)
#undef JT_SUITES
#define JT_SUITES jt_suites_perfdata
