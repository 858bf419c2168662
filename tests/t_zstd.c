/* The zstd decoder ([zstd]) on hand-made frames, and perf.data with COMPRESSED records
   holding a zstd stream.  tests/zstd_diff.c compares it with libzstd. */

typedef struct zt_frame {
    uint8_t b[4096];
    size_t n;
} zt_frame;

static void zt_put(zt_frame *f, const void *p, size_t n)
{
    memcpy(f->b + f->n, p, n);
    f->n += n;
}

static void zt_u8(zt_frame *f, unsigned v)
{
    uint8_t c = (uint8_t)v;
    zt_put(f, &c, 1);
}

static void zt_u32(zt_frame *f, uint32_t v)
{
    uint8_t x[4];
    jitanon__wr32(x, v, 0);
    zt_put(f, x, 4);
}

/* magic + frame header descriptor (+ the rest of the header given by the caller) */
static void zt_begin(zt_frame *f, unsigned fhd)
{
    f->n = 0;
    zt_u32(f, 0xFD2FB528u);
    zt_u8(f, fhd);
}

static void zt_block(zt_frame *f, int last, unsigned type, size_t size)
{
    uint32_t h = (uint32_t)(last ? 1u : 0u) | type << 1 | (uint32_t)size << 3;
    zt_u8(f, h & 0xff), zt_u8(f, h >> 8 & 0xff), zt_u8(f, h >> 16);
}

static jitanon_result zt_decode(const zt_frame *f, jitanon_membuf *out, jitanon_error *err)
{
    memset(out, 0, sizeof *out);
    return jitanon_zstd_decompress(f->b, f->n, out, 0, err);
}

/* f must fail to decode with `code`, at byte `offset` (ZT_ANY: not checked), with a
   message that holds `info` (NULL: not checked). */
#define ZT_ANY UINT64_MAX
static void zt_fails(const zt_frame *f, jitanon_result code, uint64_t offset, const char *info)
{
    jitanon_membuf out;
    jitanon_error err;
    JT_CHECK_EQ_U(zt_decode(f, &out, &err), code);
    if (offset != ZT_ANY) JT_CHECK_EQ_U(err.offset, offset);
    if (info) JT_CHECK(strstr(err.info, info) != NULL);
    jitanon_membuf_release(&out);
}

static void test_zstd_xxh64(void)
{
    jitanon__xxh64 h;
    uint8_t buf[100];
    size_t i;
    uint64_t whole;
    /* published XXH64 (seed 0) values */
    jitanon__xxh_init(&h);
    JT_CHECK(jitanon__xxh_digest(&h) == 0xEF46DB3751D8E999ull);
    jitanon__xxh_update(&h, (const uint8_t *)"abc", 3);
    JT_CHECK(jitanon__xxh_digest(&h) == 0x44BC2CF5AD770999ull);
    /* pieces of any size give the digest of the whole */
    for (i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 7 + 1);
    jitanon__xxh_init(&h);
    jitanon__xxh_update(&h, buf, sizeof buf);
    whole = jitanon__xxh_digest(&h);
    jitanon__xxh_init(&h);
    for (i = 0; i < sizeof buf; i += 13) jitanon__xxh_update(&h, buf + i, sizeof buf - i < 13 ? sizeof buf - i : 13);
    JT_CHECK(jitanon__xxh_digest(&h) == whole);
}

static void test_zstd_raw_rle_frames(void)
{
    zt_frame f;
    jitanon_membuf out;
    jitanon_error err;
    jitanon__xxh64 h;
    /* single segment, 1-byte content size: a raw block then an RLE block */
    zt_begin(&f, 0x20);
    zt_u8(&f, 15);
    zt_block(&f, 0, 0, 5);
    zt_put(&f, "hello", 5);
    zt_block(&f, 1, 1, 10);
    zt_u8(&f, 'x');
    JT_CHECK_EQ_U(zt_decode(&f, &out, &err), JITANON_OK);
    JT_CHECK(out.size == 15 && !memcmp(out.data, "helloxxxxxxxxxx", 15));
    jitanon_membuf_release(&out);
    /* the same with a content checksum, preceded by a skippable frame and an empty frame */
    f.n = 0;
    zt_u32(&f, 0x184D2A5Au), zt_u32(&f, 3), zt_put(&f, "abc", 3);
    zt_u32(&f, 0xFD2FB528u), zt_u8(&f, 0x20), zt_u8(&f, 0), zt_block(&f, 1, 0, 0);
    zt_u32(&f, 0xFD2FB528u), zt_u8(&f, 0x24), zt_u8(&f, 15);
    zt_block(&f, 0, 0, 5), zt_put(&f, "hello", 5), zt_block(&f, 1, 1, 10), zt_u8(&f, 'x');
    jitanon__xxh_init(&h);
    jitanon__xxh_update(&h, (const uint8_t *)"helloxxxxxxxxxx", 15);
    zt_u32(&f, (uint32_t)jitanon__xxh_digest(&h));
    JT_CHECK_EQ_U(zt_decode(&f, &out, &err), JITANON_OK);
    JT_CHECK(out.size == 15 && !memcmp(out.data, "helloxxxxxxxxxx", 15));
    jitanon_membuf_release(&out);
    /* a wrong checksum: typed error at the checksum */
    f.b[f.n - 1] ^= 1;
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, f.n - 4, "checksum");
}

/* A compressed block by hand: raw literals and no sequences; then RLE literals. */
static void test_zstd_compressed_literals_only(void)
{
    zt_frame f;
    jitanon_membuf out;
    jitanon_error err;
    zt_begin(&f, 0x20);
    zt_u8(&f, 9);
    zt_block(&f, 0, 2, 5);
    zt_u8(&f, 3 << 3); /* raw literals, 1-byte header, 3 of them */
    zt_put(&f, "abc", 3);
    zt_u8(&f, 0); /* no sequences */
    zt_block(&f, 1, 2, 3);
    zt_u8(&f, 6 << 3 | 1); /* RLE literals, 6 of them */
    zt_u8(&f, 'z');
    zt_u8(&f, 0);
    JT_CHECK_EQ_U(zt_decode(&f, &out, &err), JITANON_OK);
    JT_CHECK(out.size == 9 && !memcmp(out.data, "abczzzzzz", 9));
    jitanon_membuf_release(&out);
    /* bytes after a sequence count of 0 */
    zt_begin(&f, 0x20);
    zt_u8(&f, 16);
    zt_block(&f, 1, 2, 6);
    zt_u8(&f, 3 << 3), zt_put(&f, "abc", 3), zt_u8(&f, 0), zt_u8(&f, 0);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, 14, NULL);
    /* treeless literals before any Huffman table */
    zt_begin(&f, 0x20);
    zt_u8(&f, 16);
    zt_block(&f, 1, 2, 5);
    zt_u8(&f, 3), zt_u8(&f, 0), zt_u8(&f, 0), zt_u8(&f, 0), zt_u8(&f, 0);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, 9, "treeless");
    /* a repeated sequence table before any was defined */
    zt_begin(&f, 0x20);
    zt_u8(&f, 16);
    zt_block(&f, 1, 2, 7);
    zt_u8(&f, 0), zt_u8(&f, 1), zt_u8(&f, 0xFC), zt_u8(&f, 0x80), zt_u8(&f, 0), zt_u8(&f, 0), zt_u8(&f, 0);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, ZT_ANY, "repeated");
}

static void test_zstd_errors(void)
{
    zt_frame f;
    jitanon_membuf out;
    jitanon_error err;
    size_t cut;
    /* not zstd */
    f.n = 0;
    zt_put(&f, "PERFILE2", 8);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, 0, NULL);
    /* reserved frame header bit */
    zt_begin(&f, 0x28);
    zt_u8(&f, 0), zt_block(&f, 1, 0, 0);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, 4, NULL);
    /* a dictionary: refused, naming it */
    zt_begin(&f, 0x21);
    zt_u8(&f, 7), zt_u8(&f, 0), zt_block(&f, 1, 0, 0);
    zt_fails(&f, JITANON_ERR_UNSUPPORTED, 4, "dictionary 7");
    /* a window over the cap (1 GiB > 128 MiB), and under a raised cap */
    zt_begin(&f, 0x00);
    zt_u8(&f, 20 << 3), zt_block(&f, 1, 0, 1), zt_u8(&f, 'q');
    zt_fails(&f, JITANON_ERR_LIMIT, 4, NULL);
    memset(&out, 0, sizeof out);
    JT_CHECK_EQ_U(jitanon_zstd_decompress(f.b, f.n, &out, UINT64_MAX, &err), JITANON_OK);
    JT_CHECK(out.size == 1 && out.data[0] == 'q');
    jitanon_membuf_release(&out);
    /* reserved block type; a compressed block over the block maximum (128 KiB) */
    zt_begin(&f, 0x00);
    zt_u8(&f, 0), zt_block(&f, 1, 3, 0);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, 6, NULL);
    zt_begin(&f, 0x00);
    zt_u8(&f, 0), zt_block(&f, 1, 2, 128 * 1024 + 1), zt_u8(&f, 0);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, ZT_ANY, "block maximum");
    /* content size disagreeing with the content */
    zt_begin(&f, 0x20);
    zt_u8(&f, 4), zt_block(&f, 1, 1, 3), zt_u8(&f, 0);
    zt_fails(&f, JITANON_ERR_BAD_ZSTD, ZT_ANY, NULL);
    /* every cut of a good frame is a typed error, none reads past the cut */
    zt_begin(&f, 0x20);
    zt_u8(&f, 8), zt_block(&f, 0, 0, 5), zt_put(&f, "hello", 5), zt_block(&f, 1, 1, 3), zt_u8(&f, '!');
    for (cut = 1; cut < f.n; cut++) {
        memset(&out, 0, sizeof out);
        JT_CHECK_EQ_U(jitanon_zstd_decompress(f.b, cut, &out, 0, &err), JITANON_ERR_TRUNCATED);
        JT_CHECK(err.offset <= cut);
        jitanon_membuf_release(&out);
    }
    /* out->max_size is honoured */
    memset(&out, 0, sizeof out);
    out.max_size = 6;
    JT_CHECK_EQ_U(jitanon_zstd_decompress(f.b, f.n, &out, 0, &err), JITANON_ERR_LIMIT);
    jitanon_membuf_release(&out);
}

/* The streaming decoder takes any split of its input, and may end between blocks of an
   open frame (perf never ends its frame); the one-shot call may not. */
static void test_zstd_streaming(void)
{
    zt_frame f;
    jitanon_membuf out;
    jitanon_error err;
    jitanon__zstd *z;
    size_t i;
    zt_begin(&f, 0x00);
    zt_u8(&f, 0);
    zt_block(&f, 0, 0, 5), zt_put(&f, "hello", 5);
    zt_block(&f, 0, 1, 3), zt_u8(&f, '!');
    zt_fails(&f, JITANON_ERR_TRUNCATED, ZT_ANY, NULL);
    memset(&out, 0, sizeof out);
    JT_CHECK_EQ_U(jitanon__zstd_create(NULL, 0, 1, &z, &err), JITANON_OK);
    for (i = 0; i < f.n; i++) JT_CHECK_EQ_U(jitanon__zstd_feed(z, f.b + i, 1, i, &out, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__zstd_end(z, f.n, &err), JITANON_OK);
    JT_CHECK(out.size == 8 && !memcmp(out.data, "hello!!!", 8));
    /* cut inside a block: an error at the block */
    JT_CHECK_EQ_U(jitanon__zstd_feed(z, f.b + 6, 4, 100, &out, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__zstd_end(z, 104, &err), JITANON_ERR_TRUNCATED);
    JT_CHECK_EQ_U(err.offset, 103);
    jitanon__zstd_destroy(z);
    jitanon_membuf_release(&out);
}

/* perf.data whose records sit in a zstd stream (raw blocks of an open frame) spread over
   two COMPRESSED(2) records cut at `cut`, as perf record -z writes them; `drop` bytes
   cut off its end. */
static void zt_perf(pdt_b *b, uint32_t type, size_t cut, size_t block, size_t drop)
{
    pdt_b recs;
    zt_frame z;
    jitanon_membuf s;
    size_t i;
    memset(&recs, 0, sizeof recs);
    memset(&s, 0, sizeof s);
    pdt_records(&recs);
    zt_begin(&z, 0x00);
    zt_u8(&z, 2 << 3); /* 4 KiB window */
    jitanon_membuf_write(&s, z.b, z.n);
    for (i = 0; i < recs.m.size; i += block) {
        size_t k = recs.m.size - i < block ? recs.m.size - i : block;
        z.n = 0;
        zt_block(&z, 0, 0, k);
        jitanon_membuf_write(&s, z.b, z.n);
        jitanon_membuf_write(&s, recs.m.data + i, k);
    }
    s.size -= drop;
    pdt_compressed_parts(b, type, s.data, s.size, cut);
    jitanon_membuf_release(&s);
    jitanon_membuf_release(&recs.m);
}

static void test_zstd_perf_records(void)
{
    pdt_b b;
    jitanon_perf_opts opts;
    jitanon_error err;
    uint32_t t;
    size_t cut;
    for (t = JITANON_PERF_RECORD_COMPRESSED; t <= JITANON_PERF_RECORD_COMPRESSED2; t += 2)
        for (cut = 0; cut < 760; cut += 41) { /* blocks and records straddle the two payloads */
            zt_perf(&b, t, cut, 97, 0);
            pdt_check_compressed(&b, NULL);
        }
    /* a window over opts.max_zstd_window: the error names the record */
    zt_perf(&b, JITANON_PERF_RECORD_COMPRESSED, 300, 200, 0);
    memset(&opts, 0, sizeof opts);
    opts.max_zstd_window = 2048;
    pdt_read_to_error(&b, 0, &opts, &err);
    JT_CHECK_EQ_U(err.type, JITANON_ERR_LIMIT);
    JT_CHECK_EQ_U(err.record_type, JITANON_PERF_RECORD_COMPRESSED);
    jitanon_membuf_release(&b.m);
    /* the stream cut inside a block at the end of the input */
    zt_perf(&b, JITANON_PERF_RECORD_COMPRESSED, 300, 200, 5);
    pdt_read_to_error(&b, 0, NULL, &err);
    JT_CHECK_EQ_U(err.type, JITANON_ERR_TRUNCATED);
    JT_CHECK(strstr(err.info, "zstd") != NULL);
    jitanon_membuf_release(&b.m);
    /* a corrupt stream: typed error naming the COMPRESSED record */
    zt_perf(&b, JITANON_PERF_RECORD_COMPRESSED, 300, 200, 0);
    for (t = 0; t + 8 <= b.m.size; t++)
        if (jitanon__rd32(b.m.data + t, 0) == 0xFD2FB528u) b.m.data[t + 6] |= 3 << 1; /* reserved block type */
    pdt_read_to_error(&b, 0, NULL, &err);
    JT_CHECK_EQ_U(err.type, JITANON_ERR_BAD_ZSTD);
    JT_CHECK_EQ_U(err.record_type, JITANON_PERF_RECORD_COMPRESSED);
    jitanon_membuf_release(&b.m);
}

/* Every allocation of the reader and the built-in decoder failing in turn: NOMEM or
   success, never a leak (the counting allocator of t_perfdata.c checks the sizes). */
static void test_zstd_perf_alloc_fail(void)
{
    pdt_b b;
    zt_perf(&b, JITANON_PERF_RECORD_COMPRESSED2, 250, 97, 0);
    JT_CHECK(pdt_alloc_sweep(&b, NULL) > 5);
    jitanon_membuf_release(&b.m);
}

static void suite_zstd(void)
{
    JT_RUN(test_zstd_xxh64);
    JT_RUN(test_zstd_raw_rle_frames);
    JT_RUN(test_zstd_compressed_literals_only);
    JT_RUN(test_zstd_errors);
    JT_RUN(test_zstd_streaming);
    JT_RUN(test_zstd_perf_records);
    JT_RUN(test_zstd_perf_alloc_fail);
}
JT_SUITE(zstd)
#undef JT_SUITES
#define JT_SUITES jt_suites_zstd
