/* Event names in pipe output: a file's EVENT_DESC becomes EVENT_UPDATE NAME records when
   the file is written as a pipe (perf script keeps names it built from the attrs over
   EVENT_DESC's), the reader decodes them, and a pipe's own records pass through. */

#define PN_DESC 12u /* EVENT_DESC */

typedef struct pn_event {
    const char *name;      /* NULL: no EVENT_DESC entry */
    uint32_t type;
    uint64_t config, precise;
    size_t nids;           /* ids are 100 * (index + 1) + 0..nids-1 */
} pn_event;

static void pn_attr(uint8_t *a, const pn_event *e, int big)
{
    memset(a, 0, 128);
    jitanon__wr32(a, e->type, big);
    jitanon__wr32(a + 4, 128, big);
    jitanon__wr64(a + 8, e->config, big);
    jitanon__wr64(a + 16, 4000, big);
    jitanon__wr64(a + 24, JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME |
                              JITANON_PERF_SAMPLE_ID | JITANON_PERF_SAMPLE_PERIOD, big);
    /* sample_id_all, precise_ip, exclude_host: bits 18, 15-16, 19 of the flags word */
    {
        uint64_t flags = 1ull << 18 | (e->precise & 3) << 15 | 1ull << 19;
        jitanon__wr64(a + 40, big ? jitanon__bitrev64(flags) : flags, big);
    }
}

static void pn_put32(jitanon_membuf *m, uint32_t v, int big)
{
    uint8_t b[4];
    jitanon__wr32(b, v, big);
    JT_CHECK(jitanon_membuf_write(m, b, 4) == 0);
}

static void pn_put64(jitanon_membuf *m, uint64_t v, int big)
{
    uint8_t b[8];
    jitanon__wr64(b, v, big);
    JT_CHECK(jitanon_membuf_write(m, b, 8) == 0);
}

/* EVENT_DESC as perf writes it (names NUL-padded to 64 bytes); `pad` extra bytes of name
   room make a section as large as wanted. */
static void pn_desc(jitanon_membuf *m, const pn_event *ev, size_t n, size_t pad, int big)
{
    size_t i, j, named = 0;
    for (i = 0; i < n; i++) named += ev[i].name != NULL;
    pn_put32(m, (uint32_t)named, big);
    pn_put32(m, 128, big);
    for (i = 0; i < n; i++) {
        uint8_t a[128], zero[64] = {0};
        size_t len = ev[i].name ? strlen(ev[i].name) : 0, room = (len + 1 + 63) / 64 * 64 + pad;
        if (!ev[i].name) continue;
        pn_attr(a, &ev[i], big);
        JT_CHECK(jitanon_membuf_write(m, a, 128) == 0);
        pn_put32(m, (uint32_t)ev[i].nids, big);
        pn_put32(m, (uint32_t)room, big);
        JT_CHECK(jitanon_membuf_write(m, ev[i].name, len) == 0);
        for (j = len; j < room; j += 64) JT_CHECK(jitanon_membuf_write(m, zero, room - j < 64 ? room - j : 64) == 0);
        for (j = 0; j < ev[i].nids; j++) pn_put64(m, 100 * (i + 1) + j, big);
    }
}

/* A file-mode recording of the events (one SAMPLE each), EVENT_DESC built by pn_desc
   unless desc is given (then that section as is, NULL size 0: none). */
static void pn_file(jitanon_membuf *out, const pn_event *ev, size_t n, int big, const jitanon_membuf *desc, size_t pad)
{
    jitanon_perf_writer w;
    jitanon_sink s = {jitanon_membuf_write, NULL};
    jitanon_membuf d = {0};
    size_t i, j;
    s.user = out;
    JT_CHECK(jitanon_perf_writer_init(&w, JITANON_PERF_FILE, big, s, membuf_pwrite, NULL, NULL) == JITANON_OK);
    for (i = 0; i < n; i++) {
        uint8_t a[128];
        uint64_t ids[4];
        jitanon_perf_attr at;
        memset(&at, 0, sizeof at);
        pn_attr(a, &ev[i], big);
        for (j = 0; j < ev[i].nids && j < 4; j++) ids[j] = 100 * (i + 1) + j;
        at.raw.data = a;
        at.raw.size = 128;
        at.ids = ids;
        at.id_count = ev[i].nids < 4 ? ev[i].nids : 4;
        JT_CHECK(jitanon_perf_writer_add_attr(&w, &at, NULL) == JITANON_OK);
    }
    if (desc) {
        if (desc->size) JT_CHECK(jitanon_perf_writer_add_feature(&w, PN_DESC, desc->data, desc->size, NULL) == JITANON_OK);
    } else {
        pn_desc(&d, ev, n, pad, big);
        JT_CHECK(jitanon_perf_writer_add_feature(&w, PN_DESC, d.data, d.size, NULL) == JITANON_OK);
    }
    for (i = 0; i < n; i++) {
        uint8_t r[48];
        jitanon__wr32(r, JITANON_PERF_RECORD_SAMPLE, big);
        jitanon__wr16(r + 4, JITANON_PERF_MISC_USER, big);
        jitanon__wr16(r + 6, sizeof r, big);
        jitanon__wr64(r + 8, 0x401000 + i, big);
        jitanon__wr32(r + 16, 7, big);
        jitanon__wr32(r + 20, 7, big);
        jitanon__wr64(r + 24, 1000 + i, big);
        jitanon__wr64(r + 32, ev[i].nids ? 100 * (i + 1) : 0, big);
        jitanon__wr64(r + 40, 4000, big);
        JT_CHECK(jitanon_perf_writer_write(&w, r, sizeof r, NULL) == JITANON_OK);
    }
    JT_CHECK(jitanon_perf_writer_finish(&w, NULL) == JITANON_OK);
    jitanon_perf_writer_release(&w);
    jitanon_membuf_release(&d);
}

/* Copies `in` to a pipe (seek: the reader may seek, so features come before the records). */
static jitanon_perf_writer pn_to_pipe(const jitanon_membuf *in, int seek, jitanon_membuf *out)
{
    jitanon_perf_reader r;
    jitanon_perf_writer w, counters;
    jitanon_sink s = {jitanon_membuf_write, NULL};
    memin m = memin_make(in->data, in->size, 0, 0);
    int big = in->size >= 8 && in->data[0] != 'P';
    s.user = out;
    JT_CHECK(jitanon_perf_reader_init(&r, memin_read, seek ? memin_seek : NULL, &m, NULL, NULL) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_init(&w, JITANON_PERF_PIPE, big, s, NULL, NULL, NULL) == JITANON_OK);
    JT_CHECK(jitanon_perf_copy(&r, &w, NULL) == JITANON_OK);
    jitanon_perf_reader_release(&r);
    counters = w; /* for its public counters only: _release zeroes w */
    jitanon_perf_writer_release(&w);
    return counters;
}

typedef struct pn_seen {
    size_t attrs, samples, names, updates;
    size_t names_before_sample; /* NAME records read before the first SAMPLE */
    size_t desc_at, first_name_at, index; /* record positions (index + 1; 0: none) */
    uint64_t id[8];
    size_t attr_index[8];
    char name[8][80];
} pn_seen;

static void pn_read(const jitanon_membuf *m, pn_seen *s)
{
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_result res;
    memin in = memin_make(m->data, m->size, 0, 0);
    memset(s, 0, sizeof *s);
    JT_CHECK(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL) == JITANON_OK);
    while ((res = jitanon_perf_reader_next(&r, &rec, NULL)) == JITANON_OK) {
        s->index++;
        if (rec.type == JITANON_PERF_RECORD_HEADER_ATTR) s->attrs++;
        if (rec.type == JITANON_PERF_RECORD_SAMPLE) s->samples++;
        if (rec.type == JITANON_PERF_RECORD_HEADER_FEATURE && rec.feature.feat_id == PN_DESC) s->desc_at = s->index;
        if (rec.type != JITANON_PERF_RECORD_EVENT_UPDATE) continue;
        s->updates++;
        if (rec.event_update.kind != JITANON_PERF_EVENT_UPDATE_NAME) continue;
        if (!s->first_name_at) s->first_name_at = s->index;
        if (!s->samples) s->names_before_sample++;
        if (s->names < 8) {
            s->id[s->names] = rec.event_update.id;
            s->attr_index[s->names] = rec.attr_index;
            snprintf(s->name[s->names], sizeof s->name[0], "%.*s", (int)rec.event_update.text.length,
                     rec.event_update.text.data);
            /* NUL-terminated and padded to 8 bytes, as perf's reader wants a C string */
            JT_CHECK(rec.event_update.data.size % 8 == 0 && rec.event_update.data.size > rec.event_update.text.length);
            JT_CHECK(rec.raw.size == 24 + rec.event_update.data.size);
        }
        s->names++;
    }
    JT_CHECK(res == JITANON_END);
    jitanon_perf_reader_release(&r);
}

static const pn_event pn_hw[] = {
    {"cycles:P", 0, 0, 2, 2}, {"cycles:", 0, 0, 3, 1}, {"cpu/mem-loads/pp", 4, 0x1cd, 2, 3}};

/* The round trip: file with EVENT_DESC -> pipe -> the reader sees every name, keyed by
   the attr's first id, after the EVENT_DESC record and before the first sample. */
static void test_pipenames_file_to_pipe_names(void)
{
    int big, seek;
    for (big = 0; big < 2; big++)
        for (seek = 1; seek >= 0; seek--) {
            jitanon_membuf file = {0}, pipe = {0};
            jitanon_perf_writer w;
            pn_seen s;
            size_t i;
            pn_file(&file, pn_hw, 3, big, NULL, 0);
            w = pn_to_pipe(&file, seek, &pipe);
            pn_read(&pipe, &s);
            JT_CHECK_EQ_U(s.attrs, 3);
            JT_CHECK_EQ_U(s.samples, 3);
            JT_CHECK_EQ_U(s.names, 3);
            JT_CHECK_EQ_U(w.event_names, 3);
            JT_CHECK(s.desc_at && s.first_name_at == s.desc_at + 1);
            /* forward-only input: the features, and so the names, come after the records */
            JT_CHECK_EQ_U(s.names_before_sample, seek ? 3 : 0);
            for (i = 0; i < 3 && i < s.names; i++) {
                JT_CHECK_EQ_U(s.id[i], 100 * (i + 1));
                JT_CHECK_EQ_U(s.attr_index[i], i);
                JT_CHECK(strcmp(s.name[i], pn_hw[i].name) == 0);
            }
            jitanon_membuf_release(&file);
            jitanon_membuf_release(&pipe);
        }
}

/* perf pairs EVENT_DESC entries with attrs by index: a name for an attr without id among
   several would land on the first event (perf takes id 0 for it), one past the attrs has
   no event; a lone attr without ids is named by id 0. */
static void test_pipenames_ids_and_index(void)
{
    static const pn_event two[] = {{"first:P", 0, 0, 2, 1}, {"noid", 1, 0, 0, 0}};
    static const pn_event lone[] = {{"lone:pp", 0, 0, 2, 0}};
    static const pn_event more[] = {{"a", 1, 0, 0, 1}, {"b", 1, 1, 0, 1}};
    jitanon_membuf file = {0}, pipe = {0}, desc = {0};
    jitanon_perf_writer w;
    pn_seen s;
    pn_file(&file, two, 2, 0, NULL, 0);
    w = pn_to_pipe(&file, 1, &pipe);
    pn_read(&pipe, &s);
    JT_CHECK_EQ_U(s.names, 1);
    JT_CHECK_EQ_U(w.event_names, 1);
    JT_CHECK(strcmp(s.name[0], "first:P") == 0 && s.id[0] == 100);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&pipe);

    pn_file(&file, lone, 1, 0, NULL, 0);
    pn_to_pipe(&file, 1, &pipe);
    pn_read(&pipe, &s);
    JT_CHECK_EQ_U(s.names, 1);
    JT_CHECK(strcmp(s.name[0], "lone:pp") == 0 && s.id[0] == 0);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&pipe);

    /* an EVENT_DESC of three entries over two attrs: the third has no attr */
    {
        static const pn_event three[] = {{"a", 1, 0, 0, 1}, {"b", 1, 1, 0, 1}, {"c", 1, 2, 0, 1}};
        pn_desc(&desc, three, 3, 0, 0);
        pn_file(&file, more, 2, 0, &desc, 0);
        w = pn_to_pipe(&file, 1, &pipe);
        pn_read(&pipe, &s);
        JT_CHECK_EQ_U(s.names, 2);
        JT_CHECK(strcmp(s.name[1], "b") == 0 && s.id[1] == 200);
    }
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&pipe);
    jitanon_membuf_release(&desc);
}

/* An EVENT_DESC too large for one pipe record (header.size is a u16) is skipped, as
   before; its names still travel. */
static void test_pipenames_desc_too_large(void)
{
    jitanon_membuf file = {0}, pipe = {0};
    jitanon_perf_writer w;
    pn_seen s;
    pn_file(&file, pn_hw, 3, 0, NULL, 24000); /* 3 names of 24 KiB room: 72 KiB */
    w = pn_to_pipe(&file, 1, &pipe);
    pn_read(&pipe, &s);
    JT_CHECK_EQ_U(s.desc_at, 0);
    JT_CHECK(w.features_skipped >= 1);
    JT_CHECK_EQ_U(s.names, 3);
    JT_CHECK_EQ_U(s.names_before_sample, 3);
    JT_CHECK(strcmp(s.name[2], "cpu/mem-loads/pp") == 0 && s.id[2] == 300);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&pipe);
}

/* A damaged EVENT_DESC: the names before the damage, never a read past the section;
   a name without NUL in its room is its whole room. */
static void test_pipenames_damaged_desc(void)
{
    jitanon_membuf desc = {0}, file = {0}, pipe = {0};
    size_t cut, full;
    pn_seen s;
    pn_desc(&desc, pn_hw, 3, 0, 0);
    full = desc.size;
    for (cut = 0; cut <= full; cut++) {
        jitanon_membuf d = {0};
        size_t expect = 0;
        JT_CHECK(jitanon_membuf_write(&d, desc.data, cut) == 0);
        /* entries of 128 + 8 + 64 + 8 * nids bytes after 8: 216, 208, 224 */
        if (cut >= 8 + 216 + 208 + 224) expect = 3;
        else if (cut >= 8 + 216 + 208) expect = 2;
        else if (cut >= 8 + 216) expect = 1;
        pn_file(&file, pn_hw, 3, 0, &d, 0); /* cut 0: no section at all */
        pn_to_pipe(&file, 1, &pipe);
        pn_read(&pipe, &s);
        if (s.names != expect) fprintf(stderr, "  cut %zu: %zu names, expected %zu\n", cut, s.names, expect);
        JT_CHECK_EQ_U(s.names, expect);
        jitanon_membuf_release(&d);
        jitanon_membuf_release(&file);
        jitanon_membuf_release(&pipe);
    }
    /* a name that fills its room without a NUL */
    {
        uint8_t *p;
        jitanon_membuf_release(&desc);
        pn_desc(&desc, pn_hw, 1, 0, 0);
        p = desc.data + 8 + 128 + 8;
        memset(p, 'x', 64);
        pn_file(&file, pn_hw, 1, 0, &desc, 0);
        pn_to_pipe(&file, 1, &pipe);
        pn_read(&pipe, &s);
        JT_CHECK_EQ_U(s.names, 1);
        JT_CHECK_EQ_U(strlen(s.name[0]), 64);
    }
    jitanon_membuf_release(&desc);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&pipe);
}

/* A pipe input's own records pass through unchanged: its EVENT_UPDATEs (and its EVENT_DESC
   record) are copied, none are added, and pipe -> file -> pipe names again. */
static void test_pipenames_pipe_input_passes(void)
{
    jitanon_membuf file = {0}, pipe = {0}, again = {0}, back = {0};
    jitanon_perf_writer w;
    pn_seen s;
    pn_file(&file, pn_hw, 3, 1, NULL, 0);
    pn_to_pipe(&file, 1, &pipe);
    w = pn_to_pipe(&pipe, 0, &again);
    JT_CHECK_EQ_U(w.event_names, 0);
    JT_CHECK(again.size == pipe.size && memcmp(again.data, pipe.data, pipe.size) == 0);
    /* pipe -> file keeps the NAME records as data records; file -> pipe adds the names */
    {
        jitanon_perf_reader r;
        jitanon_perf_writer fw;
        jitanon_sink sk = {jitanon_membuf_write, NULL};
        memin m = memin_make(pipe.data, pipe.size, 0, 0);
        sk.user = &back;
        JT_CHECK(jitanon_perf_reader_init(&r, memin_read, NULL, &m, NULL, NULL) == JITANON_OK);
        JT_CHECK(jitanon_perf_writer_init(&fw, JITANON_PERF_FILE, 1, sk, membuf_pwrite, NULL, NULL) == JITANON_OK);
        JT_CHECK(jitanon_perf_copy(&r, &fw, NULL) == JITANON_OK);
        jitanon_perf_writer_release(&fw);
        jitanon_perf_reader_release(&r);
    }
    jitanon_membuf_release(&again);
    w = pn_to_pipe(&back, 1, &again);
    pn_read(&again, &s);
    JT_CHECK_EQ_U(w.event_names, 3);
    JT_CHECK_EQ_U(s.names, 6); /* 3 new after EVENT_DESC, the 3 old ones among the records */
    JT_CHECK_EQ_U(s.names_before_sample, 6);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&pipe);
    jitanon_membuf_release(&again);
    jitanon_membuf_release(&back);
}

/* The injector writes the same names to a pipe (it runs in the copy frame). */
static void test_pipenames_inject_to_pipe(void)
{
    jitanon_membuf file = {0}, pipe = {0};
    jitanon_perf_reader r;
    jitanon_perf_writer w;
    jitanon_sink sk = {jitanon_membuf_write, NULL};
    memin m;
    pn_seen s;
    pn_file(&file, pn_hw, 3, 0, NULL, 0);
    m = memin_make(file.data, file.size, 0, 0);
    sk.user = &pipe;
    JT_CHECK(jitanon_perf_reader_init(&r, memin_read, memin_seek, &m, NULL, NULL) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_init(&w, JITANON_PERF_PIPE, 0, sk, NULL, NULL, NULL) == JITANON_OK);
    JT_CHECK(jitanon_inject(&r, &w, NULL, NULL, NULL) == JITANON_OK);
    JT_CHECK_EQ_U(w.event_names, 3);
    jitanon_perf_writer_release(&w);
    jitanon_perf_reader_release(&r);
    pn_read(&pipe, &s);
    JT_CHECK_EQ_U(s.names, 3);
    JT_CHECK_EQ_U(s.names_before_sample, 3);
    JT_CHECK(strcmp(s.name[1], "cycles:") == 0 && s.id[1] == 200);
    jitanon_membuf_release(&file);
    jitanon_membuf_release(&pipe);
}

/* The reader's view of EVENT_UPDATE kinds; a body too short for kind and id passes
   through undecoded, as every record of that type did before. */
static void test_pipenames_reader_event_update(void)
{
    jitanon_membuf m = {0};
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    memin in;
    int big;
    for (big = 0; big < 2; big++) {
        uint8_t h[8];
        static const uint8_t unit[8] = {'m', 's', 'e', 'c', 0, 0, 0, 0};
        size_t n = 0;
        jitanon_membuf_release(&m);
        pn_put64(&m, JITANON__PERF_MAGIC, big);
        pn_put64(&m, 16, big);
        jitanon__wr32(h, JITANON_PERF_RECORD_EVENT_UPDATE, big);
        jitanon__wr16(h + 4, 0, big);
        jitanon__wr16(h + 6, 32, big); /* UNIT */
        JT_CHECK(jitanon_membuf_write(&m, h, 8) == 0);
        pn_put64(&m, JITANON_PERF_EVENT_UPDATE_UNIT, big);
        pn_put64(&m, 5, big);
        JT_CHECK(jitanon_membuf_write(&m, unit, 8) == 0);
        jitanon__wr16(h + 6, 32, big); /* SCALE: a double */
        JT_CHECK(jitanon_membuf_write(&m, h, 8) == 0);
        pn_put64(&m, JITANON_PERF_EVENT_UPDATE_SCALE, big);
        pn_put64(&m, 6, big);
        pn_put64(&m, 0x3eb0c6f7a0b5ed8dull, big);
        jitanon__wr16(h + 6, 16, big); /* short: kind only */
        JT_CHECK(jitanon_membuf_write(&m, h, 8) == 0);
        pn_put64(&m, JITANON_PERF_EVENT_UPDATE_NAME, big);
        in = memin_make(m.data, m.size, 0, 0);
        JT_CHECK(jitanon_perf_reader_init(&r, memin_read, NULL, &in, NULL, NULL) == JITANON_OK);
        while (jitanon_perf_reader_next(&r, &rec, NULL) == JITANON_OK) {
            JT_CHECK_EQ_U(rec.type, JITANON_PERF_RECORD_EVENT_UPDATE);
            if (n == 0) {
                JT_CHECK_EQ_U(rec.event_update.kind, JITANON_PERF_EVENT_UPDATE_UNIT);
                JT_CHECK_EQ_U(rec.event_update.id, 5);
                JT_CHECK(rec.event_update.text.length == 4 && memcmp(rec.event_update.text.data, "msec", 4) == 0);
            } else if (n == 1) {
                JT_CHECK_EQ_U(rec.event_update.kind, JITANON_PERF_EVENT_UPDATE_SCALE);
                JT_CHECK_EQ_U(rec.event_update.data.size, 8);
                JT_CHECK_EQ_U(jitanon_perf_u64_at(rec.event_update.data, 0, rec.big_endian), 0x3eb0c6f7a0b5ed8dull);
                JT_CHECK(rec.event_update.text.data == NULL);
            } else {
                JT_CHECK(rec.event_update.kind == 0 && rec.event_update.id == 0 && rec.event_update.data.size == 0);
            }
            n++;
        }
        JT_CHECK_EQ_U(n, 3);
        JT_CHECK(strcmp(jitanon_perf_record_name(JITANON_PERF_RECORD_EVENT_UPDATE), "EVENT_UPDATE") == 0);
        jitanon_perf_reader_release(&r);
    }
    jitanon_membuf_release(&m);
}

static void suite_pipenames(void)
{
    JT_RUN(test_pipenames_file_to_pipe_names);
    JT_RUN(test_pipenames_ids_and_index);
    JT_RUN(test_pipenames_desc_too_large);
    JT_RUN(test_pipenames_damaged_desc);
    JT_RUN(test_pipenames_pipe_input_passes);
    JT_RUN(test_pipenames_inject_to_pipe);
    JT_RUN(test_pipenames_reader_event_update);
}
JT_SUITE(pipenames)
#undef JT_SUITES
#define JT_SUITES jt_suites_pipenames
