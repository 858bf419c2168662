/* Tests of [alloc]'s counting allocator (the one mechanism behind every memory limit)
   and of errors: their source, no "at byte" without an offset, one damage message, one
   channel for perf.data damage. */

/* Limit, counts and the two failures it tells apart. */
static void test_alloc_counted(void)
{
    jt_alloc base;
    jitanon_allocator ba = jt_allocator(&base), a;
    jitanon__counted c;
    jitanon_error err;
    void *p, *q;
    jitanon__counted_init(&c, &ba, 100, "memory_limit");
    a = jitanon__counted_hooks(&c);
    p = jitanon__malloc(&a, 60);
    JT_CHECK(p != NULL);
    JT_CHECK_EQ_U(c.held, 60);
    JT_CHECK(jitanon__malloc(&a, 41) == NULL && c.hit); /* 101 > 100: refused, nothing counted */
    JT_CHECK_EQ_U(c.held, 60);
    JT_CHECK_EQ_U(base.calls, 1); /* the refusal never reached the base allocator */
    JT_CHECK_EQ_U(jitanon__counted_fail(&c, &err, 0, "a table"), JITANON_ERR_LIMIT);
    JT_CHECK(strcmp(err.info, "memory_limit of 100 bytes reached (a table)") == 0 && !c.hit);
    q = jitanon__realloc(&a, p, 60, 100); /* growing in place of its own bytes fits */
    JT_CHECK(q != NULL);
    JT_CHECK_EQ_U(c.held, 100);
    JT_CHECK_EQ_U(c.peak, 100);
    jitanon__free(&a, q, 100);
    JT_CHECK_EQ_U(c.held, 0);
    JT_CHECK_EQ_U(base.live_bytes, 0);
    /* the base allocator failing is out of memory, not the limit */
    base.fail_at = base.calls + 1;
    JT_CHECK(jitanon__malloc(&a, 10) == NULL && !c.hit);
    JT_CHECK_EQ_U(jitanon__counted_fail(&c, &err, 7, "x"), JITANON_ERR_NOMEM);
    JT_CHECK_EQ_U(c.held, 0);
    /* _fix: a NOMEM from deeper down becomes LIMIT only when the limit refused */
    c.hit = 1;
    JT_CHECK_EQ_U(jitanon__counted_fix(&c, JITANON__FAIL(&err, JITANON_ERR_NOMEM, 0, "deep"), &err), JITANON_ERR_LIMIT);
    JT_CHECK_EQ_U(jitanon__counted_fix(&c, JITANON__FAIL(&err, JITANON_ERR_NOMEM, 0, "deep"), &err), JITANON_ERR_NOMEM);
    /* a budget (take / give) with no limit never refuses */
    jitanon__counted_init(&c, NULL, 0, "none");
    JT_CHECK(jitanon__counted_take(&c, 0, SIZE_MAX / 2) && jitanon__counted_left(&c, 0) == SIZE_MAX);
    jitanon__counted_give(&c, SIZE_MAX / 2);
    JT_CHECK_EQ_U(c.held, 0);
}

/* A stream of exactly `limit` bytes fits; one more byte is JITANON_ERR_LIMIT. */
static void test_alloc_slurp_limit(void)
{
    static uint8_t data[70001];
    size_t limits[3] = {70000, 65536, 100}, i;
    for (i = 0; i < 3; i++) {
        jitanon__counted c;
        jitanon_error err;
        memin s;
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0;
        s = memin_make(data, limits[i], 0, 0);
        jitanon__counted_init(&c, NULL, limits[i], "memory_limit");
        JT_CHECK_EQ_U(jitanon__slurp(memin_read, &s, &c, &buf, &len, &cap, &err), JITANON_OK);
        JT_CHECK_EQ_U(len, limits[i]);
        JT_CHECK(cap <= limits[i] && c.held == cap);
        jitanon__free(NULL, buf, cap);
        s = memin_make(data, limits[i] + 1, 0, 0);
        jitanon__counted_init(&c, NULL, limits[i], "memory_limit");
        JT_CHECK_EQ_U(jitanon__slurp(memin_read, &s, &c, &buf, &len, &cap, &err), JITANON_ERR_LIMIT);
        JT_CHECK(strstr(err.info, "memory_limit of") != NULL);
    }
}

/* Every reader and the engine take opts.memory_limit, fail with JITANON_ERR_LIMIT and say
   which input. */
static void test_alloc_every_reader(void)
{
    jitanon_membuf dump, perf;
    jitanon_jitdump_opts jo;
    jitanon_jitdump *d = NULL;
    jitanon_perfmap_opts mo;
    jitanon_perfmap *m = NULL;
    jitanon_perf_opts po;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_trim_opts to;
    jitanon_trim *t = NULL;
    jitanon_error err;
    jitanon_result res;
    memin in;
    char map[4096];
    size_t i, n = 0, peak;
    jt_build_dump(&dump, 0);
    memset(&jo, 0, sizeof jo);
    jo.memory_limit = dump.size / 2;
    JT_CHECK_EQ_U(jitanon_jitdump_load_memory(dump.data, dump.size, &jo, &d, &err), JITANON_ERR_LIMIT);
    JT_CHECK(d == NULL && strcmp(err.source, "jitdump") == 0 && strstr(err.info, "memory_limit of") != NULL);
    jo.memory_limit = dump.size + sizeof *d + 8; /* the copy and the dump, not the record table */
    JT_CHECK_EQ_U(jitanon_jitdump_load_memory(dump.data, dump.size, &jo, &d, &err), JITANON_ERR_LIMIT);
    JT_CHECK(strstr(err.info, "record table") != NULL && err.offset > 0);
    jo.memory_limit = 0;
    JT_CHECK_EQ_U(jitanon_jitdump_load_memory(dump.data, dump.size, &jo, &d, &err), JITANON_OK);
    jitanon_jitdump_destroy(d);
    jitanon_membuf_release(&dump);

    for (i = 0; i < 100; i++) n += (size_t)snprintf(map + n, sizeof map - n, "%zx 10 fn_%zu\n", 0x1000 + i * 16, i);
    memset(&mo, 0, sizeof mo);
    mo.memory_limit = 512;
    JT_CHECK_EQ_U(jitanon_perfmap_load_memory(map, n, &mo, &m, &err), JITANON_ERR_LIMIT);
    JT_CHECK(m == NULL && strcmp(err.source, "perf map") == 0);

    dm_perf(&perf, JITANON_PERF_FILE);
    memset(&po, 0, sizeof po);
    po.memory_limit = 200; /* less than the reader's first buffer */
    in = memin_make(perf.data, perf.size, 0, 0);
    res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &po, &err);
    while (res == JITANON_OK) res = jitanon_perf_reader_next(&r, &rec, &err);
    JT_CHECK_EQ_U(res, JITANON_ERR_LIMIT);
    JT_CHECK(strcmp(err.source, "perf.data") == 0 && strstr(err.info, "memory_limit of 200 bytes") != NULL);
    jitanon_perf_reader_release(&r);
    for (i = 0, peak = 0; i < 2; i++) { /* unlimited, then limited to what that held at most */
        po.memory_limit = peak;
        in = memin_make(perf.data, perf.size, 0, 0);
        res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &po, &err);
        while (res == JITANON_OK) res = jitanon_perf_reader_next(&r, &rec, &err);
        JT_CHECK_EQ_U(res, JITANON_END);
        JT_CHECK(r.state_->mem.peak > 0 && (!i || r.state_->mem.peak <= peak));
        peak = r.state_->mem.peak;
        jitanon_perf_reader_release(&r); /* (ASan: nothing it held is left) */
        JT_CHECK(r.state_ == NULL);
    }
    jitanon_membuf_release(&perf);

    memset(&to, 0, sizeof to);
    to.memory_limit = 2048;
    JT_CHECK_EQ_U(jitanon_trim_create(&to, &t, &err), JITANON_OK);
    res = JITANON_OK;
    for (i = 0; i < 1000 && res == JITANON_OK; i++) {
        jitanon_trim_event ev;
        memset(&ev, 0, sizeof ev);
        ev.pid = 1, ev.time = i, ev.start = i * 32, ev.len = 8, ev.id = i;
        res = jitanon_trim_load(t, &ev, &err);
    }
    JT_CHECK_EQ_U(res, JITANON_ERR_LIMIT);
    JT_CHECK(strcmp(err.info, "memory_limit of 2048 bytes reached") == 0);
    JT_CHECK(jitanon_trim_get_stats(t)->peak_bytes <= 2048 && jitanon_trim_get_stats(t)->bytes_held > 0);
    jitanon_trim_destroy(t);
}

/* No "at byte" for a problem at no place of the input; the byte stays where there is one. */
static void test_alloc_error_no_offset(void)
{
    jitanon_error err;
    char msg[256];
    JITANON__FAIL(&err, JITANON_ERR_NOMEM, 0, "the table");
    jitanon_format_error(msg, sizeof msg, &err);
    JT_CHECK(strcmp(msg, "out of memory: the table") == 0);
    JITANON__FAIL(&err, JITANON_ERR_IO, 0, "cannot open it");
    jitanon_format_error(msg, sizeof msg, &err);
    JT_CHECK(strstr(msg, "at byte") == NULL);
    JITANON__FAIL(&err, JITANON_ERR_LIMIT, 4096, "file too big");
    jitanon_format_error(msg, sizeof msg, &err);
    JT_CHECK(strstr(msg, "at byte 4096") != NULL);
    JITANON__FAIL(&err, JITANON_ERR_BAD_MAGIC, 0, "not a dump");
    jitanon_format_error(msg, sizeof msg, &err);
    JT_CHECK(strstr(msg, "at byte 0") != NULL); /* the magic is at byte 0 */
    JT_CHECK(err.source[0] == 0);
}

static size_t ta_count(const char *s, const char *what)
{
    size_t n = 0;
    while ((s = strstr(s, what)) != NULL) n++, s++;
    return n;
}

/* A feature table beyond the end: the damage says so once, and only the reader tells it
   (jitanon_inject logs nothing of it; jitanon_inject_file does, see tests/oracle/damage.sh). */
static void test_alloc_damage_once(void)
{
    jitanon_membuf out;
    pdt_b b;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    jitanon_result res;
    dm_io io;
    memin in;
    char msg[512], want[64];
    uint64_t at;
    pdt_file(&b, 0);
    at = jitanon__rd64(b.m.data + 40, 0) + jitanon__rd64(b.m.data + 48, 0);
    jitanon__wr64(b.m.data + at, b.m.size + 100, 0);
    in = memin_make(b.m.data, b.m.size, 0, 0);
    res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, NULL, &err);
    while (res == JITANON_OK) res = jitanon_perf_reader_next(&r, &rec, &err);
    JT_CHECK_EQ_U(res, JITANON_END);
    JT_CHECK_EQ_U(jitanon_perf_reader_load_features(&r, &err), JITANON_OK);
    JT_CHECK_EQ_U(r.warnings, JITANON_PERF_WARN_FEATURES);
    jitanon_format_error(msg, sizeof msg, &r.damage);
    JT_CHECK_EQ_U(ta_count(msg, jitanon_result_string(r.damage.type)), 1);
    /* once where the input ends; the section it names has a place of its own */
    snprintf(want, sizeof want, " at byte %llu:", (unsigned long long)r.damage.offset);
    JT_CHECK_EQ_U(ta_count(msg, want), 1);
    JT_CHECK(strstr(msg, "before the feature section HEADER_HOSTNAME") != NULL);
    JT_CHECK(strcmp(r.damage.source, "perf.data") == 0);
    jitanon_perf_reader_release(&r);
    memset(&io, 0, sizeof io);
    memset(&out, 0, sizeof out);
    memset(&o, 0, sizeof o);
    o.io.write_elf = dm_write_elf;
    o.io.load_dump = ti_load_dump;
    o.io.log = dm_log;
    o.io.user = &io;
    JT_CHECK_EQ_U(ti_run(&b.m, &o, JITANON_PERF_FILE, &out, &st, &err), JITANON_OK);
    JT_CHECK_EQ_U(st.read.warnings, JITANON_PERF_WARN_FEATURES);
    for (at = 0; at < io.log.size; at += strlen((const char *)io.log.data + at) + 1) /* NUL-separated lines */
        JT_CHECK(strstr((const char *)io.log.data + at, "perf.data input is damaged") == NULL);
    dm_io_free(&io, &out);
    jitanon_membuf_release(&b.m);
}

/* strict: a damaged dump fails the run, and the error names the dump, not perf.data. */
static void test_alloc_error_names_dump(void)
{
    uint64_t seed = 0xa110c;
    jitanon_membuf perf, d, g, out;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    dm_io io;
    dm_perf(&perf, JITANON_PERF_FILE);
    dm_random_dump(&seed, &d, 0);
    dm_garbage(&seed, 0, &d, 0, &g);
    jitanon_membuf_write(&d, g.data, g.size);
    memset(&io, 0, sizeof io);
    memset(&out, 0, sizeof out);
    memset(&o, 0, sizeof o);
    io.base.give_dump = 1;
    jitanon_membuf_write(&io.base.dump, d.data, d.size);
    o.jitdump.strict = 1;
    o.io.load_dump = ti_load_dump;
    o.io.write_elf = dm_write_elf;
    o.io.log = dm_log;
    o.io.user = &io;
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out, &st, &err) != JITANON_OK);
    JT_CHECK(strcmp(err.source, "jitdump /some/dir/jit-100.dump") == 0);
    dm_io_free(&io, &out);
    jitanon_membuf_release(&d);
    jitanon_membuf_release(&g);
    jitanon_membuf_release(&perf);
}

static void suite_alloc(void)
{
    JT_RUN(test_alloc_counted);
    JT_RUN(test_alloc_slurp_limit);
    JT_RUN(test_alloc_every_reader);
    JT_RUN(test_alloc_error_no_offset);
    JT_RUN(test_alloc_damage_once);
    JT_RUN(test_alloc_error_names_dump);
}
JT_SUITE(alloc)
#undef JT_SUITES
#define JT_SUITES jt_suites_alloc
