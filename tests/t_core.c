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
    jitanon_membuf_free(&b);
    JT_CHECK_EQ_U(a.live_bytes, 0);
    JT_CHECK_EQ_U(a.live_blocks, 0);
}

static void suite_core(void)
{
    JT_RUN(test_core_format);
    JT_RUN(test_core_errors);
    JT_RUN(test_core_math);
    JT_RUN(test_core_byte_order);
    JT_RUN(test_core_cursor);
    JT_RUN(test_core_membuf);
}
