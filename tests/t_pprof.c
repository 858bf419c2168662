/* tools/pprof.h, the pprof encoder of symbolize --pprof: what it writes is read back
   with a small protobuf reader written here from the wire format (varints, length-
   delimited fields, packed repeated fields), independent of the encoder's code. */
#include "../tools/pprof.h"

/* ---- a bounds-checked protobuf reader ---- */
typedef struct tpp_rd {
    const uint8_t *p;
    size_t n, pos;
    int bad;
} tpp_rd;

static tpp_rd tpp_rd_of(const uint8_t *p, size_t n)
{
    tpp_rd r;
    r.p = p;
    r.n = n;
    r.pos = 0;
    r.bad = 0;
    return r;
}

static uint64_t tpp_varint(tpp_rd *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (r->pos < r->n && shift < 64) {
        uint8_t b = r->p[r->pos++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
        shift += 7;
    }
    r->bad = 1;
    return 0;
}

/* The next field: 1 with its number, its wire type and its value (varint) or bytes
   (length-delimited); 0 at the end or on bad input (r->bad). */
static int tpp_field(tpp_rd *r, unsigned *field, unsigned *wire, uint64_t *v, tpp_rd *sub)
{
    uint64_t key;
    if (r->bad || r->pos >= r->n) return 0;
    key = tpp_varint(r);
    *field = (unsigned)(key >> 3);
    *wire = (unsigned)(key & 7);
    if (*wire == 0) *v = tpp_varint(r);
    else if (*wire == 2) {
        uint64_t len = tpp_varint(r);
        if (r->bad || len > r->n - r->pos) {
            r->bad = 1;
            return 0;
        }
        *sub = tpp_rd_of(r->p + r->pos, (size_t)len);
        r->pos += (size_t)len;
    } else r->bad = 1; /* pprof.h writes no other wire type */
    return !r->bad;
}

/* The decoded profile: fixed-size tables, enough for these tests. */
#define TPP_MAX 64
typedef struct tpp_profile {
    const uint8_t *str[TPP_MAX];
    size_t str_len[TPP_MAX], nstr;
    uint64_t types[TPP_MAX][2];
    size_t ntypes;
    struct { uint64_t locs[TPP_MAX]; size_t nlocs; int64_t vals[TPP_MAX]; size_t nvals;
             uint64_t lab[TPP_MAX][4]; size_t nlab; } sample[TPP_MAX];
    size_t nsamples;
    uint64_t map[TPP_MAX][6]; /* id, start, limit, offset, file, build_id */
    unsigned map_flags[TPP_MAX]; /* bit n: field 7 + n set */
    size_t nmaps;
    uint64_t loc[TPP_MAX][5]; /* id, mapping, address, function, line */
    size_t nlines[TPP_MAX];
    size_t nloc;
    uint64_t fn[TPP_MAX][5]; /* id, name, system_name, file, start_line */
    size_t nfn;
    uint64_t scalar[16];       /* fields 7..14 by number */
    uint64_t period_type[2];
    uint64_t comments[TPP_MAX];
    size_t ncomments;
    int unknown_field;
} tpp_profile;

/* A packed (or single) repeated varint field into out. */
static void tpp_packed(unsigned wire, uint64_t v, tpp_rd *sub, uint64_t *out, size_t *n)
{
    if (wire == 0) {
        if (*n < TPP_MAX) out[(*n)++] = v;
        return;
    }
    while (sub->pos < sub->n && !sub->bad && *n < TPP_MAX) out[(*n)++] = tpp_varint(sub);
}

static int tpp_decode(const uint8_t *data, size_t size, tpp_profile *o)
{
    tpp_rd r = tpp_rd_of(data, size), sub, s2;
    unsigned f, w, f2, w2;
    uint64_t v = 0, v2 = 0;
    memset(o, 0, sizeof *o);
    while (tpp_field(&r, &f, &w, &v, &sub)) {
        if (f == 6 && w == 2 && o->nstr < TPP_MAX) {
            o->str[o->nstr] = sub.p;
            o->str_len[o->nstr++] = sub.n;
        } else if ((f == 1 || f == 11) && w == 2) {
            uint64_t *t = f == 1 ? o->types[o->ntypes < TPP_MAX ? o->ntypes++ : 0] : o->period_type;
            while (tpp_field(&sub, &f2, &w2, &v2, &s2))
                if (f2 >= 1 && f2 <= 2 && w2 == 0) t[f2 - 1] = v2;
        } else if (f == 2 && w == 2 && o->nsamples < TPP_MAX) {
            size_t k = o->nsamples++;
            while (tpp_field(&sub, &f2, &w2, &v2, &s2)) {
                if (f2 == 1) tpp_packed(w2, v2, &s2, o->sample[k].locs, &o->sample[k].nlocs);
                else if (f2 == 2) tpp_packed(w2, v2, &s2, (uint64_t *)o->sample[k].vals, &o->sample[k].nvals);
                else if (f2 == 3 && w2 == 2 && o->sample[k].nlab < TPP_MAX) {
                    tpp_rd s3;
                    unsigned f3, w3;
                    uint64_t v3 = 0;
                    size_t l = o->sample[k].nlab++;
                    while (tpp_field(&s2, &f3, &w3, &v3, &s3))
                        if (f3 >= 1 && f3 <= 4 && w3 == 0) o->sample[k].lab[l][f3 - 1] = v3;
                } else o->unknown_field = 1;
            }
        } else if (f == 3 && w == 2 && o->nmaps < TPP_MAX) {
            size_t k = o->nmaps++;
            while (tpp_field(&sub, &f2, &w2, &v2, &s2)) {
                if (f2 >= 1 && f2 <= 6 && w2 == 0) o->map[k][f2 - 1] = v2;
                else if (f2 >= 7 && f2 <= 10 && w2 == 0 && v2 == 1) o->map_flags[k] |= 1u << (f2 - 7);
                else o->unknown_field = 1;
            }
        } else if (f == 4 && w == 2 && o->nloc < TPP_MAX) {
            size_t k = o->nloc++;
            while (tpp_field(&sub, &f2, &w2, &v2, &s2)) {
                if (f2 >= 1 && f2 <= 3 && w2 == 0) o->loc[k][f2 - 1] = v2;
                else if (f2 == 4 && w2 == 2) {
                    tpp_rd s3;
                    unsigned f3, w3;
                    uint64_t v3 = 0;
                    o->nlines[k]++;
                    while (tpp_field(&s2, &f3, &w3, &v3, &s3))
                        if (f3 >= 1 && f3 <= 2 && w3 == 0) o->loc[k][2 + f3] = v3;
                } else o->unknown_field = 1;
            }
        } else if (f == 5 && w == 2 && o->nfn < TPP_MAX) {
            size_t k = o->nfn++;
            while (tpp_field(&sub, &f2, &w2, &v2, &s2))
                if (f2 >= 1 && f2 <= 5 && w2 == 0) o->fn[k][f2 - 1] = v2;
                else o->unknown_field = 1;
        } else if (f == 13) tpp_packed(w, v, &sub, o->comments, &o->ncomments);
        else if (f >= 7 && f <= 14 && w == 0) o->scalar[f] = v;
        else o->unknown_field = 1;
        if (sub.bad || s2.bad) r.bad = 1;
    }
    return !r.bad;
}

static int tpp_str_is(const tpp_profile *o, uint64_t i, const char *s)
{
    return i < o->nstr && o->str_len[i] == strlen(s) && !memcmp(o->str[i], s, o->str_len[i]);
}

/* The profile of the tests: two value columns, three mappings (the last one made the
   main one), a function and a location asked for twice, samples that must add up. */
static void tpp_build(pp_profile *p)
{
    uint64_t m1, m2, m3, f1, f2, l1, l2, l3, stack[3];
    int64_t v[2];
    pp_label lab[3];
    pp_init(p);
    pp_sample_type(p, "samples", "count");
    pp_sample_type(p, "cpu", "nanoseconds");
    m1 = pp_mapping(p, 0x1000, 0x2000, 0, "/jit-7.dump", NULL);
    m2 = pp_mapping(p, 0x400000, 0x500000, 0x1000, "/usr/bin/node", "00112233");
    m3 = pp_mapping(p, 0x1000, 0x2000, 0, "/jit-7.dump", NULL); /* m1 again */
    JT_CHECK_EQ_U(m1, 1);
    JT_CHECK_EQ_U(m2, 2);
    JT_CHECK_EQ_U(m3, 1);
    p->main_mapping = m2;
    f1 = pp_function(p, "JS:*leaf x.js:1:1", 17, "x.js", 1);
    f2 = pp_function(p, "[node]junk", 6, NULL, 0); /* the length counts, not the NUL */
    JT_CHECK_EQ_U(pp_function(p, "JS:*leaf x.js:1:1", 17, "x.js", 1), f1);
    JT_CHECK(f1 != f2);
    l1 = pp_location(p, m1, 0x1010, f1, 4);
    l2 = pp_location(p, m1, 0x1010, f1, 3); /* same address, another line: its own */
    l3 = pp_location(p, m2, 0x400123, f2, 0);
    JT_CHECK_EQ_U(pp_location(p, m1, 0x1010, f1, 4), l1);
    JT_CHECK(l1 != l2);
    stack[0] = l1;
    stack[1] = l3;
    stack[2] = l3;
    memset(lab, 0, sizeof lab);
    lab[0].key = "pid";
    lab[0].num = 7;
    lab[1].key = "tid";
    lab[1].num = 8;
    lab[1].num_unit = "id";
    lab[2].key = "comm";
    lab[2].str = "node";
    v[0] = 1;
    v[1] = 250000;
    pp_sample(p, stack, 3, v, lab, 3);
    pp_sample(p, stack, 3, v, lab, 3); /* adds up with the first */
    lab[2].str = "worker";
    v[1] = -5; /* int64: ten-byte varint */
    pp_sample(p, stack, 3, v, lab, 3);
    pp_sample(p, NULL, 0, v, NULL, 0); /* no frames, no labels */
    stack[0] = l2;
    pp_sample(p, stack, 1, v, lab, 3);
    pp_comment(p, "event: cpu-clock");
    p->period_type = pp_str(p, "cpu");
    p->period_unit = pp_str(p, "nanoseconds");
    p->period = 250000;
    p->duration_nanos = 1500000000;
}

static void test_pprof_roundtrip(void)
{
    pp_profile p;
    pp_buf b;
    tpp_profile o;
    size_t i, j;
    tpp_build(&p);
    memset(&b, 0, sizeof b);
    JT_CHECK_EQ_U(pp_serialize(&p, &b, 0), 0);
    JT_CHECK(tpp_decode(b.p, b.n, &o));
    JT_CHECK(!o.unknown_field);
    /* strings: "" first, each once */
    JT_CHECK(o.nstr > 1 && o.str_len[0] == 0);
    for (i = 0; i < o.nstr; i++)
        for (j = i + 1; j < o.nstr; j++)
            JT_CHECK(o.str_len[i] != o.str_len[j] || memcmp(o.str[i], o.str[j], o.str_len[i]));
    JT_CHECK_EQ_U(o.ntypes, 2);
    JT_CHECK(tpp_str_is(&o, o.types[0][0], "samples") && tpp_str_is(&o, o.types[0][1], "count"));
    JT_CHECK(tpp_str_is(&o, o.types[1][0], "cpu") && tpp_str_is(&o, o.types[1][1], "nanoseconds"));
    /* mappings: the main one first, with its own id; every one says it is symbolized */
    JT_CHECK_EQ_U(o.nmaps, 2);
    JT_CHECK_EQ_U(o.map[0][0], 2);
    JT_CHECK_EQ_U(o.map[0][1], 0x400000);
    JT_CHECK_EQ_U(o.map[0][2], 0x500000);
    JT_CHECK_EQ_U(o.map[0][3], 0x1000);
    JT_CHECK(tpp_str_is(&o, o.map[0][4], "/usr/bin/node") && tpp_str_is(&o, o.map[0][5], "00112233"));
    JT_CHECK_EQ_U(o.map[1][0], 1);
    JT_CHECK_EQ_U(o.map[1][3], 0);
    JT_CHECK_EQ_U(o.map[1][5], 0); /* no build-id: left out */
    JT_CHECK_EQ_U(o.map_flags[0], 7);
    JT_CHECK_EQ_U(o.map_flags[1], 7);
    /* functions and locations, in id order */
    JT_CHECK_EQ_U(o.nfn, 2);
    JT_CHECK_EQ_U(o.fn[0][0], 1);
    JT_CHECK(tpp_str_is(&o, o.fn[0][1], "JS:*leaf x.js:1:1") && o.fn[0][2] == o.fn[0][1]);
    JT_CHECK(tpp_str_is(&o, o.fn[0][3], "x.js"));
    JT_CHECK_EQ_U(o.fn[0][4], 1);
    JT_CHECK(tpp_str_is(&o, o.fn[1][1], "[node]"));
    JT_CHECK_EQ_U(o.fn[1][3], 0);
    JT_CHECK_EQ_U(o.nloc, 3);
    JT_CHECK_EQ_U(o.loc[0][0], 1);
    JT_CHECK_EQ_U(o.loc[0][1], 1);
    JT_CHECK_EQ_U(o.loc[0][2], 0x1010);
    JT_CHECK_EQ_U(o.loc[0][3], 1);
    JT_CHECK_EQ_U(o.loc[0][4], 4);
    JT_CHECK_EQ_U(o.loc[1][4], 3);
    JT_CHECK_EQ_U(o.loc[2][1], 2);
    JT_CHECK_EQ_U(o.loc[2][4], 0);
    for (i = 0; i < 3; i++) JT_CHECK_EQ_U(o.nlines[i], 1);
    /* samples: the first two added up; labels as given */
    JT_CHECK_EQ_U(o.nsamples, 4);
    JT_CHECK_EQ_U(o.sample[0].nlocs, 3);
    JT_CHECK_EQ_U(o.sample[0].locs[0], 1);
    JT_CHECK_EQ_U(o.sample[0].locs[2], 3);
    JT_CHECK_EQ_U(o.sample[0].nvals, 2);
    JT_CHECK_EQ_U(o.sample[0].vals[0], 2);
    JT_CHECK_EQ_U(o.sample[0].vals[1], 500000);
    JT_CHECK_EQ_U(o.sample[0].nlab, 3);
    JT_CHECK(tpp_str_is(&o, o.sample[0].lab[0][0], "pid") && o.sample[0].lab[0][2] == 7 && !o.sample[0].lab[0][1]);
    JT_CHECK(tpp_str_is(&o, o.sample[0].lab[1][3], "id"));
    JT_CHECK(tpp_str_is(&o, o.sample[0].lab[2][0], "comm") && tpp_str_is(&o, o.sample[0].lab[2][1], "node"));
    JT_CHECK(tpp_str_is(&o, o.sample[1].lab[2][1], "worker"));
    JT_CHECK(o.sample[1].vals[1] == -5);
    JT_CHECK_EQ_U(o.sample[2].nlocs, 0);
    JT_CHECK_EQ_U(o.sample[2].nlab, 0);
    JT_CHECK_EQ_U(o.sample[2].nvals, 2);
    JT_CHECK_EQ_U(o.sample[3].nlocs, 1);
    JT_CHECK_EQ_U(o.sample[3].locs[0], 2);
    /* the informational fields */
    JT_CHECK(tpp_str_is(&o, o.period_type[0], "cpu") && tpp_str_is(&o, o.period_type[1], "nanoseconds"));
    JT_CHECK_EQ_U(o.scalar[12], 250000);
    JT_CHECK_EQ_U(o.scalar[10], 1500000000);
    JT_CHECK_EQ_U(o.scalar[9], 0);
    JT_CHECK_EQ_U(o.ncomments, 1);
    JT_CHECK(tpp_str_is(&o, o.comments[0], "event: cpu-clock"));
    free(b.p);
    pp_release(&p);
}

/* The same calls give the same bytes; ids survive the hash tables' growth. */
static void test_pprof_deterministic(void)
{
    pp_profile p, q;
    pp_buf a, b;
    uint64_t ids[3000];
    size_t i;
    char name[32];
    tpp_build(&p);
    tpp_build(&q);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    pp_encode(&p, &a);
    pp_encode(&q, &b);
    JT_CHECK(a.n == b.n && !memcmp(a.p, b.p, a.n));
    for (i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "fn%u", (unsigned)i);
        ids[i] = pp_location(&p, 1, 0x1000 + i, pp_function(&p, name, strlen(name), NULL, 0), 0);
    }
    for (i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "fn%u", (unsigned)i);
        JT_CHECK_EQ_U(pp_location(&p, 1, 0x1000 + i, pp_function(&p, name, strlen(name), NULL, 0), 0), ids[i]);
    }
    JT_CHECK_EQ_U(ids[2999], 3003);
    JT_CHECK_EQ_U(p.nfuncs, 3002);
    free(a.p);
    free(b.p);
    pp_release(&p);
    pp_release(&q);
}

/* gzip when built with zlib (and it inflates to the plain bytes), plain otherwise. */
static void test_pprof_gzip(void)
{
    pp_profile p;
    pp_buf plain, z;
    int r;
    tpp_build(&p);
    memset(&plain, 0, sizeof plain);
    memset(&z, 0, sizeof z);
    pp_encode(&p, &plain);
    r = pp_serialize(&p, &z, 1);
#if PP_HAVE_ZLIB
    JT_CHECK_EQ_U(r, 1);
    JT_CHECK(z.n > 18 && z.p[0] == 0x1f && z.p[1] == 0x8b);
    {
        uint8_t *out = (uint8_t *)malloc(plain.n + 16);
        z_stream s;
        memset(&s, 0, sizeof s);
        JT_CHECK(out && inflateInit2(&s, 15 + 16) == Z_OK);
        if (out) {
            s.next_in = z.p;
            s.avail_in = (uInt)z.n;
            s.next_out = out;
            s.avail_out = (uInt)(plain.n + 16);
            JT_CHECK_EQ_U(inflate(&s, Z_FINISH), Z_STREAM_END);
            JT_CHECK(s.total_out == plain.n && !memcmp(out, plain.p, plain.n));
            inflateEnd(&s);
        }
        free(out);
    }
#else
    JT_CHECK_EQ_U(r, 0);
    /* without zlib (no ZLIB=1) the same call writes plain protobuf: that is what is
       checked here; tests/oracle/pprof.sh builds symbolize with zlib for the gzip */
    JT_CHECK(z.n == plain.n && !memcmp(z.p, plain.p, plain.n));
#endif
    free(plain.p);
    free(z.p);
    pp_release(&p);
}

static void suite_pprof(void)
{
    JT_RUN(test_pprof_roundtrip);
    JT_RUN(test_pprof_deterministic);
    JT_RUN(test_pprof_gzip);
}
JT_SUITE(pprof)
#undef JT_SUITES
#define JT_SUITES jt_suites_pprof
