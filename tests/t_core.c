/* Core helpers: formatter, errors, checked math, byte order, cursor, membuf. */

static void test_core_format(void)
{
    char buf[64];
    size_t n = jitanon__fmt(buf, sizeof buf, "a%sb%uc%Ud%Xe%%", "-", 42u, (uint64_t)18446744073709551615ull,
                            (uint64_t)0xbeef);
    JT_CHECK(strcmp(buf, "a-b42c18446744073709551615d0xbeefe%") == 0);
    JT_CHECK_EQ_U(n, strlen(buf));
    n = jitanon__fmt(buf, 4, "hello");
    JT_CHECK_EQ_U(n, 5);
    JT_CHECK(strcmp(buf, "hel") == 0);
}

static void test_core_errors(void)
{
    jitanon_error err;
    char buf[256];
    int i;
    for (i = 0; i < JITANON_RESULT_COUNT; i++) JT_CHECK(jitanon_result_string((jitanon_result)i)[0] != 0);
    JT_CHECK(strcmp(jitanon_result_string((jitanon_result)999), "unknown result") == 0);
    JITANON__FAIL(&err, JITANON_ERR_TRUNCATED, 123, "cut after %u bytes", 7u);
    jitanon_format_error(buf, sizeof buf, &err);
    JT_CHECK(strstr(buf, "at byte 123") != NULL);
    JT_CHECK(strstr(buf, "cut after 7 bytes") != NULL);
    JT_CHECK(jitanon_version() == JITANON_VERSION);
}

static void test_core_math(void)
{
    uint64_t o;
    size_t s;
    JT_CHECK(jitanon__add_u64(1, 2, &o) && o == 3);
    JT_CHECK(!jitanon__add_u64(UINT64_MAX, 1, &o));
    JT_CHECK(jitanon__mul_size(3, 4, &s) && s == 12);
    JT_CHECK(!jitanon__mul_size(SIZE_MAX / 2 + 1, 2, &s));
}

static void test_core_byte_order(void)
{
    uint8_t b[8];
    jitanon__wr64(b, 0x0102030405060708ull, 1);
    JT_CHECK(b[0] == 1 && b[7] == 8);
    JT_CHECK(jitanon__rd64(b, 1) == 0x0102030405060708ull);
    JT_CHECK(jitanon__rd64(b, 0) == 0x0807060504030201ull);
    jitanon__wr32(b, 0xa1b2c3d4u, 0);
    JT_CHECK(b[0] == 0xd4 && jitanon__rd32(b, 0) == 0xa1b2c3d4u);
    jitanon__wr16(b, 0xbeef, 1);
    JT_CHECK(jitanon__rd16(b, 1) == 0xbeef);
}

static void test_core_cursor(void)
{
    const uint8_t data[] = {1, 0, 0, 0, 'h', 'i', 0, 'x'};
    jitanon__cur c = jitanon__cur_make(data, sizeof data, 100, 0);
    jitanon_str s;
    JT_CHECK(jitanon__get32(&c) == 1);
    JT_CHECK(jitanon__take_cstr(&c, &s) && s.length == 2 && c.off == 107);
    JT_CHECK(!jitanon__take_cstr(&c, &s)); /* 'x' has no NUL inside the cursor */
    JT_CHECK(jitanon__take(&c, 2) == NULL && c.left == 1);
}

static void test_core_membuf(void)
{
    jt_alloc a;
    jitanon_membuf b;
    int i;
    memset(&b, 0, sizeof b);
    b.allocator = jt_allocator(&a);
    for (i = 0; i < 1000; i++) JT_CHECK(jitanon_membuf_write(&b, "abcd", 4) == 0);
    JT_CHECK_EQ_U(b.size, 4000);
    b.max_size = 4002;
    JT_CHECK(jitanon_membuf_write(&b, "abc", 3) != 0);
    jitanon_membuf_release(&b);
    JT_CHECK_EQ_U(a.live_bytes, 0);
    JT_CHECK_EQ_U(a.live_blocks, 0);
}

/* Appends: byte order, the sticky failure (checked once), and a spilling buffer that
   writes whole pieces: what fits is buffered, a larger piece goes straight through. */
typedef struct jt_spill {
    size_t calls, bytes, fail_at;
    uint8_t out[64];
} jt_spill;

static int jt_spill_write(void *user, const void *data, size_t size)
{
    jt_spill *s = (jt_spill *)user;
    if (++s->calls == s->fail_at) return 1;
    if (s->bytes + size <= sizeof s->out) memcpy(s->out + s->bytes, data, size);
    s->bytes += size;
    return 0;
}

static void test_core_buf_appends(void)
{
    jt_alloc a;
    jitanon_membuf b;
    jt_spill sp;
    uint8_t mem[8];
    static const uint8_t want[15] = {1, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 4, 5};
    memset(&b, 0, sizeof b);
    b.allocator = jt_allocator(&a);
    jitanon__buf_u8(&b, 1);
    jitanon__buf_u16(&b, 2, 0);
    jitanon__buf_u32(&b, 3, 1);
    jitanon__buf_u64(&b, 0x0405, 1);
    jitanon__buf_bytes(&b, "x", 0);
    JT_CHECK(!b.failed_);
    JT_CHECK_EQ_U(b.size, 15);
    JT_CHECK(memcmp(b.data, want, sizeof want) == 0);
    a.fail_at = a.calls + 1; /* the next growth fails: nothing more is appended */
    jitanon__buf_bytes(&b, mem, sizeof mem);
    jitanon__buf_u8(&b, 9);
    JT_CHECK(b.failed_);
    JT_CHECK_EQ_U(b.size, 15);
    jitanon_membuf_release(&b);
    JT_CHECK_EQ_U(a.live_bytes, 0);

    memset(&sp, 0, sizeof sp);
    memset(&b, 0, sizeof b);
    b.data = mem;
    b.capacity = sizeof mem;
    b.spill_.write_fn = jt_spill_write;
    b.spill_.user = &sp;
    jitanon__buf_bytes(&b, "abcdef", 6);
    JT_CHECK_EQ_U(sp.calls, 0);
    jitanon__buf_bytes(&b, "ghi", 3); /* does not fit: "abcdef" goes, "ghi" is kept */
    JT_CHECK_EQ_U(sp.calls, 1);
    jitanon__buf_bytes(&b, "0123456789", 10); /* larger than the buffer: "ghi", then it */
    JT_CHECK_EQ_U(sp.calls, 3);
    jitanon__buf_u8(&b, 'z');
    jitanon__buf_flush(&b);
    JT_CHECK_EQ_U(sp.calls, 4);
    JT_CHECK_EQ_U(sp.bytes, 20);
    JT_CHECK(memcmp(sp.out, "abcdefghi0123456789z", 20) == 0);
    sp.fail_at = sp.calls + 1; /* a refused spill stops the writing for good */
    jitanon__buf_bytes(&b, "0123456789", 10);
    jitanon__buf_bytes(&b, "ab", 2);
    jitanon__buf_flush(&b);
    JT_CHECK(b.failed_);
    JT_CHECK_EQ_U(sp.calls, 5);
    JT_CHECK_EQ_U(sp.bytes, 20);
}

typedef struct jt_sortkey {
    uint32_t key, order;
} jt_sortkey;

static int jt_sortkey_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jt_sortkey *k = (const jt_sortkey *)ctx;
    return k[a].key < k[b].key;
}

/* jitanon__sort is stable, allocates nothing for sorted input, and leaves the array as it
   was when its scratch memory cannot be had. */
static void test_core_sort(void)
{
    jt_alloc a;
    jitanon_allocator al = jt_allocator(&a);
    jt_sortkey v[200], copy[200];
    uint32_t i, x = 12345;
    for (i = 0; i < 200; i++) {
        v[i].key = i / 3;
        v[i].order = i;
    }
    JT_CHECK(jitanon__sort(&al, v, 200, sizeof *v, jt_sortkey_less));
    JT_CHECK_EQ_U(a.calls, 0);
    for (i = 0; i < 200; i++) {
        x = x * 1103515245u + 12345u;
        v[i].key = x >> 28; /* 16 keys: many ties */
        v[i].order = i;
    }
    memcpy(copy, v, sizeof v);
    a.fail_at = 2;
    JT_CHECK(!jitanon__sort(&al, v, 200, sizeof *v, jt_sortkey_less));
    JT_CHECK(memcmp(copy, v, sizeof v) == 0);
    a.fail_at = 0;
    JT_CHECK(jitanon__sort(&al, v, 200, sizeof *v, jt_sortkey_less));
    for (i = 1; i < 200; i++)
        JT_CHECK(v[i - 1].key < v[i].key || (v[i - 1].key == v[i].key && v[i - 1].order < v[i].order));
    JT_CHECK_EQ_U(a.live_bytes, 0);
    JT_CHECK_EQ_U(jitanon__fnv1a("a", 1, 0xcbf29ce484222325ull), 0xaf63dc4c8601ec8cull);
}

/* The chunked input: reads grow the buffer only to the largest request, the offset
   follows what is consumed, and an empty read is the end for now. */
static void test_core_input(void)
{
    jt_alloc a;
    jitanon_allocator al = jt_allocator(&a);
    jitanon__input in;
    memin m;
    uint8_t data[100];
    jitanon_error err;
    size_t i;
    for (i = 0; i < sizeof data; i++) data[i] = (uint8_t)i;
    m = memin_make(data, 30, 7, 0);
    memset(&in, 0, sizeof in);
    in.read_fn = memin_read;
    in.user = &m;
    JT_CHECK_EQ_U(jitanon__in_fill(&in, &al, 10, 16, &err), JITANON_OK);
    JT_CHECK_EQ_U(in.cap, 16);
    JT_CHECK(jitanon__in_avail(&in) >= 10 && in.buf[in.pos + 9] == 9);
    jitanon__in_consume(&in, 9);
    JT_CHECK_EQ_U(jitanon__in_fill(&in, &al, 20, 16, &err), JITANON_OK);
    JT_CHECK_EQ_U(in.off, 9);
    JT_CHECK_EQ_U(in.pos, 0); /* compacted before reading more */
    JT_CHECK(in.buf[0] == 9 && in.buf[19] == 28);
    jitanon__in_consume(&in, 20);
    JT_CHECK_EQ_U(jitanon__in_fill(&in, &al, 5, 16, &err), JITANON_END);
    JT_CHECK_EQ_U(jitanon__in_avail(&in), 1);
    m.size = 100; /* more data arrives */
    JT_CHECK_EQ_U(jitanon__in_fill(&in, &al, 5, 16, &err), JITANON_OK);
    JT_CHECK(in.buf[in.pos] == 29);
    a.fail_at = a.calls + 1;
    JT_CHECK_EQ_U(jitanon__in_fill(&in, &al, 64, 16, &err), JITANON_ERR_NOMEM);
    JT_CHECK_EQ_U(err.offset, 29);
    jitanon__in_free(&in, &al);
    JT_CHECK_EQ_U(a.live_bytes, 0);
}

static void suite_core(void)
{
    JT_RUN(test_core_format);
    JT_RUN(test_core_errors);
    JT_RUN(test_core_math);
    JT_RUN(test_core_byte_order);
    JT_RUN(test_core_cursor);
    JT_RUN(test_core_membuf);
    JT_RUN(test_core_buf_appends);
    JT_RUN(test_core_sort);
    JT_RUN(test_core_input);
}
JT_SUITE(core)
#undef JT_SUITES
#define JT_SUITES jt_suites_core
