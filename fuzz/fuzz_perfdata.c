/* libFuzzer harness: the perf.data reader (file and pipe mode, either byte order, are
   auto-detected from the input) run four ways over the same bytes:

     A  seekable, whole reads, with a decompressor     (features loaded first)
     B  seekable, odd-sized reads, with a decompressor (features loaded last)
     C  forward-only, odd-sized reads, no decompressor (features after END)
     D  forward-only, whole reads, no decompressor
     E  followed (opts.follow), seekable, with a decompressor: the bytes shown a piece
        at a time (1..97 bytes), as a file perf record is still writing; _init and
        _next asked again after each JITANON_AGAIN

   Every decoded view of every record is touched and checked to lie inside the record;
   A and B, and C and D, must agree exactly (same result, same records, same attrs); E
   must give A's records where A read a finished recording to its end undamaged.
   Limits are tight (payloads, header bytes, a 64 MiB allocator cap); a run that hit the
   cap is not compared.  Nothing is written anywhere. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_MEM_CAP ((size_t)64 << 20)

#define FUZZ_NAME "fuzz_perfdata"
#include "fuzz_common.h"

/* The "compressed" payload is the records themselves. */
static int identity_decompress(void *user, const void *src, size_t size, jitanon_membuf *out)
{
    (void)user;
    return jitanon_membuf_write(out, src, size);
}

/* -- touching and checking ------------------------------------------------------------------ */

typedef struct digest {
    jitanon_result init, end;
    uint64_t records, hash, attr_hash, feat_hash;
    size_t attr_count;
    int hit_cap;
    /* A failed early load leaves the reader at the wrong position, and a HEADER_FEATURE
       record in a file's data section changes the header's feature bitmap (both open
       bugs): such runs are not compared. */
    int feat_failed;
    int whole; /* ended at END undamaged, and knew the data's end (pipe, or a size) */
} digest;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t fnv64(uint64_t h, uint64_t v)
{
    uint8_t b[8];
    jitanon__wr64(b, v, 0);
    return fnv(h, b, 8);
}

static uint64_t touch_attrs(const jitanon_perf_reader *r)
{
    uint64_t h = 14695981039346656037ull;
    size_t i, k;
    for (i = 0; i < r->attr_count; i++) {
        const jitanon_perf_attr *a = &r->attrs[i];
        CHECK(a->raw.size >= 64 && a->raw.data != NULL);
        fuzz_view(a->raw.data, a->raw.size, a->raw.data, a->raw.size);
        CHECK(a->id_count == 0 || a->ids != NULL);
        h = fnv(h, a->raw.data, a->raw.size);
        h = fnv64(h, a->id_count);
        for (k = 0; k < a->id_count; k++) h = fnv64(h, a->ids[k]);
        h = fnv64(h, a->sample_type);
        h = fnv64(h, (uint64_t)a->sample_id_all << 1 | (uint64_t)a->use_clockid);
        h = fnv64(h, a->id_hdr_size);
    }
    return h;
}

static uint64_t touch_features(const jitanon_perf_reader *r)
{
    uint64_t h = 14695981039346656037ull;
    unsigned bit;
    for (bit = 0; bit < JITANON_PERF_FEAT_BITS + 2; bit++) {
        jitanon_bytes b;
        memset(&b, 0, sizeof b);
        if (!jitanon_perf_reader_feature(r, bit, &b)) continue;
        CHECK(bit < JITANON_PERF_FEAT_BITS);
        CHECK(b.size == 0 || b.data != NULL);
        fuzz_view(b.data, b.size, b.data, b.size);
        h = fnv64(h, bit);
        h = fnv(h, b.data, b.size);
    }
    return h;
}

static void touch_record(const jitanon_perf_reader *r, const jitanon_perf_record *rec, uint64_t expect_index)
{
    const uint8_t *base = rec->raw.data;
    size_t size = rec->raw.size, i;
    uint64_t x = 0;
    CHECK(size >= 8 && base != NULL);
    fuzz_view(base, size, base, size);
    CHECK(rec->big_endian == r->big_endian); /* each record carries the input's order */
    CHECK(jitanon__rd32(base, rec->big_endian) == rec->type);
    CHECK(jitanon__rd16(base + 4, rec->big_endian) == rec->misc);
    CHECK(jitanon__rd16(base + 6, rec->big_endian) == rec->size);
    CHECK(rec->size >= 8 && rec->size <= size);
    /* Indexes increase; a COMPRESSED record takes one although it is not delivered. */
    CHECK(rec->index >= expect_index);
    CHECK(r->attr_count ? rec->attr_index < r->attr_count : rec->attr_index == 0);
    if (rec->payload.size) {
        CHECK(rec->payload.data == base + rec->size && rec->payload.size == size - rec->size);
    } else {
        CHECK(size == rec->size);
    }
    fuzz_view(rec->payload.data, rec->payload.size, base, size);
    (void)jitanon_perf_record_name(rec->type);
    switch (rec->type) {
    case JITANON_PERF_RECORD_MMAP:
    case JITANON_PERF_RECORD_MMAP2:
        fuzz_view(rec->mmap.filename.data, rec->mmap.filename.length, base, size);
        CHECK(memchr(rec->mmap.filename.data ? rec->mmap.filename.data : "", 0, rec->mmap.filename.length) == NULL);
        if (rec->mmap.has_build_id) {
            CHECK(rec->type == JITANON_PERF_RECORD_MMAP2 && rec->mmap.build_id_size <= 20);
            fuzz_view(rec->mmap.build_id, 20, base, size);
        }
        { /* rewriting a record with its own start, len and pgoff gives the record back */
            uint8_t copy[512];
            size_t n = 0;
            jitanon_result res = jitanon_perf_rewrite_mmap(copy, sizeof copy, &n, rec, NULL);
            CHECK(n == size && (res == JITANON_OK || (res == JITANON_ERR_LIMIT && size > sizeof copy)));
            CHECK(res != JITANON_OK || memcmp(copy, base, size) == 0);
        }
        break;
    case JITANON_PERF_RECORD_SAMPLE:
        CHECK(rec->sample.callchain.size / 8 == rec->sample.callchain_nr && rec->sample.callchain.size % 8 == 0);
        fuzz_view(rec->sample.callchain.data, rec->sample.callchain.size, base, size);
        for (i = 0; i < rec->sample.callchain_nr; i++) x += jitanon_perf_u64_at(rec->sample.callchain, i, rec->big_endian);
        CHECK(jitanon_perf_u64_at(rec->sample.callchain, (size_t)rec->sample.callchain_nr, rec->big_endian) == 0);
        break;
    case JITANON_PERF_RECORD_COMM:
        fuzz_view(rec->comm.comm.data, rec->comm.comm.length, base, size);
        break;
    case JITANON_PERF_RECORD_ID_INDEX:
        CHECK(rec->id_index.entries.size / 32 == rec->id_index.nr && rec->id_index.entries.size % 32 == 0);
        fuzz_view(rec->id_index.entries.data, rec->id_index.entries.size, base, size);
        for (i = 0; i < rec->id_index.nr * 4; i++) x += jitanon_perf_u64_at(rec->id_index.entries, i, rec->big_endian);
        break;
    case JITANON_PERF_RECORD_HEADER_FEATURE:
        fuzz_view(rec->feature.data.data, rec->feature.data.size, base, size);
        break;
    case JITANON_PERF_RECORD_TIME_CONV:
        x += jitanon_perf_tsc_to_time(&rec->time_conv, x);
        break;
    default: break;
    }
    fuzz_sink_byte = (uint8_t)x;
}

static int is_typed_error(jitanon_result r) { return r > JITANON_AGAIN && r < JITANON_RESULT_COUNT; }

static void run(const uint8_t *data, size_t size, int seek, int odd, int decompress, int feats_first, digest *d)
{
    memin in;
    capped cap;
    jitanon_perf_opts opts;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res;
    char msg[256];
    uint64_t next = 0;
    memset(d, 0, sizeof *d);
    d->hash = 14695981039346656037ull;
    in = memin_make(data, size, odd ? 5 : 0, odd);
    fuzz_perf_opts(&opts, &cap);
    if (decompress) opts.decompress = identity_decompress;
    res = jitanon_perf_reader_init(&r, memin_read, seek ? memin_seek : NULL, &in, &opts, &err);
    d->init = res;
    if (res == JITANON_OK) {
        CHECK(r.mode == JITANON_PERF_FILE || r.mode == JITANON_PERF_PIPE);
        if (feats_first) {
            if (jitanon_perf_reader_load_features(&r, &err) == JITANON_OK) d->feat_hash = touch_features(&r);
            else d->feat_failed = 1;
        }
        while ((res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
            touch_record(&r, &rec, next);
            next = rec.index + 1;
            d->hash = fnv(d->hash, rec.raw.data, rec.raw.size);
            d->records++;
        }
        CHECK(res == JITANON_END || is_typed_error(res));
        jitanon_format_error(msg, sizeof msg, &err);
        if (getenv("FUZZ_VERBOSE"))
            fprintf(stderr, "run(seek %d, odd %d, decompress %d, features first %d): %llu records, %s\n", seek, odd,
                    decompress, feats_first, (unsigned long long)d->records, res == JITANON_END ? "end" : msg);
        CHECK(r.stats.records >= d->records);
        CHECK(r.stats.records - d->records <= r.stats.compressed_records + (res != JITANON_END));
        /* After END the reader keeps answering END. */
        if (res == JITANON_END) {
            CHECK(jitanon_perf_reader_next(&r, &rec, &err) == JITANON_END);
            if (!feats_first && jitanon_perf_reader_load_features(&r, &err) == JITANON_OK)
                d->feat_hash = touch_features(&r);
        }
        d->attr_hash = touch_attrs(&r);
        d->attr_count = r.attr_count;
        d->whole = res == JITANON_END && !r.warnings && (r.mode == JITANON_PERF_PIPE || r.data_size);
    } else {
        CHECK(is_typed_error(res));
    }
    d->end = res;
    jitanon_perf_reader_release(&r);
    CHECK(cap.live == 0); /* every byte freed, with the sizes it was allocated with */
    d->hit_cap = cap.hit;
}

/* E's input: the first `shown` bytes of a file that grows; a seek may go past them (as
   in a file), reads there find nothing yet. */
typedef struct growing {
    const uint8_t *data;
    size_t shown, pos;
} growing;

static size_t growing_read(void *user, void *dst, size_t size)
{
    growing *g = (growing *)user;
    size_t n = g->pos < g->shown ? g->shown - g->pos : 0;
    if (n > size) n = size;
    if (n) memcpy(dst, g->data + g->pos, n);
    g->pos += n;
    return n;
}

static int growing_seek(void *user, uint64_t off)
{
    growing *g = (growing *)user;
    if (off > SIZE_MAX) return 1;
    g->pos = (size_t)off;
    return 0;
}

static void run_follow(const uint8_t *data, size_t size, digest *d)
{
    growing in;
    capped cap;
    jitanon_perf_opts opts;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res = JITANON_AGAIN;
    size_t step = 5;
    uint64_t next = 0;
    int open = 0;
    memset(d, 0, sizeof *d);
    d->hash = 14695981039346656037ull;
    in.data = data;
    in.shown = in.pos = 0;
    fuzz_perf_opts(&opts, &cap);
    opts.decompress = identity_decompress;
    opts.follow = 1;
    for (;;) {
        if (!open) {
            in.pos = 0;
            res = jitanon_perf_reader_init(&r, growing_read, growing_seek, &in, &opts, &err);
            CHECK(res == JITANON_OK || res == JITANON_AGAIN || is_typed_error(res));
            open = res == JITANON_OK;
            if (!open) jitanon_perf_reader_release(&r);
            if (!open && res != JITANON_AGAIN) break;
        }
        while (open && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
            touch_record(&r, &rec, next);
            next = rec.index + 1;
            d->hash = fnv(d->hash, rec.raw.data, rec.raw.size);
            d->records++;
        }
        CHECK(res == JITANON_END || res == JITANON_AGAIN || is_typed_error(res));
        if (res != JITANON_AGAIN || in.shown == size) break;
        in.shown = size - in.shown > step ? in.shown + step : size;
        step = step * 7 % 97 + 1;
    }
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "run(follow): %llu records, result %d\n", (unsigned long long)d->records, (int)res);
    d->end = res;
    if (open) jitanon_perf_reader_release(&r);
    CHECK(cap.live == 0);
    d->hit_cap = cap.hit;
}

static void same(const digest *a, const digest *b, int features)
{
    if (a->hit_cap || b->hit_cap) return;
    CHECK(a->init == b->init);
    CHECK(a->end == b->end);
    CHECK(a->records == b->records);
    CHECK(a->hash == b->hash);
    if (a->end == JITANON_END) {
        CHECK(a->attr_count == b->attr_count);
        CHECK(a->attr_hash == b->attr_hash);
        if (features && !a->feat_failed && !b->feat_failed) CHECK(a->feat_hash == b->feat_hash);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    digest a, b, c, d, e;
    run(data, size, 1, 0, 1, 1, &a);
    run(data, size, 1, 1, 1, 0, &b);
    same(&a, &b, 1);
    run_follow(data, size, &e);
    if (a.whole && !a.hit_cap && !e.hit_cap) {
        CHECK(e.records == a.records);
        CHECK(e.hash == a.hash);
    }
    run(data, size, 0, 1, 0, 0, &c);
    run(data, size, 0, 0, 0, 0, &d);
    same(&c, &d, 1);
    return 0;
}
