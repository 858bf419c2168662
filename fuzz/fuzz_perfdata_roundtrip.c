/* libFuzzer harness: perf.data read -> write -> re-read.

   The input is read once in full (seekable, with a stand-in decompressor).  When that
   read ends cleanly, the input is copied with jitanon_perf_copy into memory (a membuf
   sink plus a positioned write for the file header), once in the input's own mode and
   once in the other mode, and each copy is read again:

   - same mode: the copy must succeed (only a configured limit may stop it), and the
     re-read must give the same number of records with byte-identical raw bytes (file
     mode: also the same attrs and feature sections);
   - other mode: when the copy succeeds, the records other than the header-ish ones a
     mode change creates or absorbs (HEADER_ATTR, HEADER_FEATURE, HEADER_TRACING_DATA,
     HEADER_BUILD_ID, and the EVENT_UPDATE NAME records a pipe gets from EVENT_DESC)
     must be the same, byte for byte, and the attrs must match.

   Every copy must itself read back completely.  Nothing is written anywhere. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_MEM_CAP ((size_t)64 << 20)
#define FUZZ_OUT_CAP ((size_t)16 << 20)

#define FUZZ_NAME "fuzz_perfdata_roundtrip"
#include "fuzz_common.h"

/* -- memory input and output ------------------------------------------------------------------ */


static int identity_decompress(void *user, const void *src, size_t size, jitanon_membuf *out)
{
    (void)user;
    return jitanon_membuf_write(out, src, size);
}

static void perf_opts(jitanon_perf_opts *o, capped *cap)
{
    fuzz_perf_opts(o, cap);
    o->decompress = identity_decompress;
}

/* -- one full read, remembered ------------------------------------------------------------------ */

typedef struct rec_list {
    jitanon_membuf bytes;  /* raw bytes of the kept records, back to back */
    jitanon_membuf sizes;  /* size_t per kept record */
    uint64_t all, kept;    /* records read / records kept */
    jitanon_perf_mode mode;
    size_t attr_count;
    jitanon_membuf attrs;  /* per attr: type, config, sample_type, read_format, flags, clockid, ids */
    jitanon_membuf feats;  /* per present feature: bit, size, bytes */
    int hit_cap;
    /* A HEADER_FEATURE record that a pipe -> file copy leaves in the data section (id 0 or
       >= 256), or one already inside a file's data section: the reader lets it change
       the header's feature bitmap (an open bug); and feature bit 0 in a file's header,
       which the writer refuses (another).  Such inputs are not copied. */
    int odd_feature;
} rec_list;

static int header_ish(uint32_t type)
{
    return type == JITANON_PERF_RECORD_HEADER_ATTR || type == JITANON_PERF_RECORD_HEADER_FEATURE ||
           type == JITANON_PERF_RECORD_HEADER_TRACING_DATA || type == JITANON_PERF_RECORD_HEADER_BUILD_ID;
}

static void put64(jitanon_membuf *m, uint64_t v)
{
    uint8_t b[8];
    jitanon__wr64(b, v, 0);
    CHECK(jitanon_membuf_write(m, b, 8) == 0);
}

/* skip_header_ish: leave out the records a mode change creates or absorbs; skip_names:
   and the first that many EVENT_UPDATE NAME records (a file's EVENT_DESC in a pipe: the
   writer puts them with the features, before every record of the data). */
static jitanon_result read_all(const uint8_t *data, size_t size, int skip_header_ish, uint64_t skip_names,
                               rec_list *l)
{
    jitanon_result res;
    jitanon_error err;
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_perf_opts opts;
    capped cap;
    memin in;
    memset(l, 0, sizeof *l);
    in = memin_make(data, size, 0, 0);
    perf_opts(&opts, &cap);
    res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &opts, &err);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
        l->all++;
        /* With a decompressor the copy drops the COMPRESSED feature (in a pipe: its record). */
        if (rec.type == JITANON_PERF_RECORD_HEADER_FEATURE && rec.feature.feat_id == JITANON_PERF_FEAT_COMPRESSED) {
            l->all--;
            continue;
        }
        if (rec.type == JITANON_PERF_RECORD_HEADER_FEATURE &&
            (r.mode == JITANON_PERF_FILE || rec.feature.feat_id == 0 || rec.feature.feat_id >= JITANON_PERF_FEAT_BITS))
            l->odd_feature = 1;
        if (skip_header_ish && header_ish(rec.type)) continue;
        if (skip_names && rec.type == JITANON_PERF_RECORD_EVENT_UPDATE &&
            rec.event_update.kind == JITANON_PERF_EVENT_UPDATE_NAME) {
            skip_names--;
            continue;
        }
        l->kept++;
        CHECK(jitanon_membuf_write(&l->bytes, rec.raw.data, rec.raw.size) == 0);
        CHECK(jitanon_membuf_write(&l->sizes, &rec.raw.size, sizeof rec.raw.size) == 0);
    }
    l->mode = r.mode;
    if (res == JITANON_END) {
        size_t i, k;
        unsigned bit;
        l->attr_count = r.attr_count;
        for (i = 0; i < r.attr_count; i++) {
            const jitanon_perf_attr *a = &r.attrs[i];
            put64(&l->attrs, a->type);
            put64(&l->attrs, a->config);
            put64(&l->attrs, a->sample_type);
            put64(&l->attrs, a->read_format);
            put64(&l->attrs, a->flags);
            put64(&l->attrs, (uint64_t)(uint32_t)a->clockid);
            put64(&l->attrs, a->id_count);
            for (k = 0; k < a->id_count; k++) put64(&l->attrs, a->ids[k]);
        }
        /* "Read fully" includes the feature sections, which the copy needs too. */
        if (r.mode == JITANON_PERF_FILE && (res = jitanon_perf_reader_load_features(&r, &err)) == JITANON_OK) {
            res = JITANON_END;
            jitanon_bytes b0;
            if (jitanon_perf_reader_feature(&r, 0, &b0)) l->odd_feature = 1;
            for (bit = 0; bit < JITANON_PERF_FEAT_BITS; bit++) {
                jitanon_bytes b;
                if (bit == JITANON_PERF_FEAT_COMPRESSED || !jitanon_perf_reader_feature(&r, bit, &b)) continue;
                put64(&l->feats, bit);
                put64(&l->feats, b.size);
                CHECK(jitanon_membuf_write(&l->feats, b.data, b.size) == 0);
            }
        }
    }
    if (res != JITANON_END && getenv("FUZZ_VERBOSE")) {
        char msg[256];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "read: %s after %llu records\n", msg, (unsigned long long)l->all);
    }
    jitanon_perf_reader_release(&r);
    CHECK(cap.live == 0);
    l->hit_cap = cap.hit;
    return res;
}

static void rec_list_free(rec_list *l)
{
    jitanon_membuf_release(&l->bytes);
    jitanon_membuf_release(&l->sizes);
    jitanon_membuf_release(&l->attrs);
    jitanon_membuf_release(&l->feats);
}

static int same_buf(const jitanon_membuf *a, const jitanon_membuf *b)
{
    return a->size == b->size && (a->size == 0 || memcmp(a->data, b->data, a->size) == 0);
}

/* -- copy ------------------------------------------------------------------------------------- */

static jitanon_result copy(const uint8_t *data, size_t size, jitanon_perf_mode mode, jitanon_membuf *out, int *hit_cap,
                           uint64_t *records_written, uint64_t *names_written)
{
    memin in;
    capped cap;
    jitanon_perf_opts opts;
    jitanon_perf_reader r;
    jitanon_perf_writer w;
    jitanon_sink sink;
    jitanon_error err;
    jitanon_result res;
    sink = fuzz_sink(out, FUZZ_OUT_CAP);
    memset(&w, 0, sizeof w);
    in = memin_make(data, size, 0, 0);
    perf_opts(&opts, &cap);
    res = jitanon_perf_reader_init(&r, memin_read, memin_seek, &in, &opts, &err);
    if (res == JITANON_OK)
        res = jitanon_perf_writer_init(&w, mode, r.big_endian, sink, mode == JITANON_PERF_FILE ? membuf_pwrite : NULL,
                                       &opts, &err);
    if (res == JITANON_OK) res = jitanon_perf_copy(&r, &w, &err);
    if (getenv("FUZZ_VERBOSE")) {
        char msg[256];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "copy to %s: %s, %llu records written\n", mode == JITANON_PERF_FILE ? "file" : "pipe",
                res == JITANON_OK ? "ok" : msg, (unsigned long long)w.records);
    }
    *records_written = w.records;
    *names_written = w.event_names;
    jitanon_perf_writer_release(&w);
    jitanon_perf_reader_release(&r);
    CHECK(cap.live == 0);
    *hit_cap = cap.hit || (res == JITANON_ERR_WRITE && out->size + 65536 > FUZZ_OUT_CAP);
    return res;
}

static void round_trip(const uint8_t *data, size_t size, const rec_list *first_all, const rec_list *first_body,
                       jitanon_perf_mode mode)
{
    jitanon_membuf out;
    rec_list second;
    int hit_cap, same_mode = mode == first_all->mode;
    uint64_t written = 0, names = 0;
    jitanon_result res = copy(data, size, mode, &out, &hit_cap, &written, &names);
    if (res != JITANON_OK) {
        /* A lossless same-mode copy of an input we read completely may only hit a limit. */
        if (same_mode && !hit_cap)
            CHECK(res == JITANON_ERR_LIMIT || res == JITANON_ERR_NOMEM);
        jitanon_membuf_release(&out);
        return;
    }
    if (same_mode && mode == JITANON_PERF_PIPE) CHECK(names == 0); /* a pipe's own records pass as they are */
    res = read_all(out.data, out.size, !same_mode, same_mode ? 0 : names, &second);
    if (!second.hit_cap) {
        const rec_list *first = same_mode ? first_all : first_body;
        CHECK(res == JITANON_END);
        CHECK(second.mode == mode);
        CHECK(second.all == written);
        CHECK(second.kept == first->kept);
        CHECK(same_buf(&second.sizes, &first->sizes));
        CHECK(same_buf(&second.bytes, &first->bytes));
        CHECK(second.attr_count == first->attr_count);
        CHECK(same_buf(&second.attrs, &first->attrs));
        if (same_mode && mode == JITANON_PERF_FILE) CHECK(same_buf(&second.feats, &first->feats));
    }
    rec_list_free(&second);
    jitanon_membuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rec_list all, body;
    jitanon_result res = read_all(data, size, 0, 0, &all);
    memset(&body, 0, sizeof body);
    if (res == JITANON_END && !all.hit_cap && !all.odd_feature && read_all(data, size, 1, 0, &body) == JITANON_END &&
        !body.hit_cap) {
        round_trip(data, size, &all, &body, all.mode);
        round_trip(data, size, &all, &body, all.mode == JITANON_PERF_FILE ? JITANON_PERF_PIPE : JITANON_PERF_FILE);
    }
    rec_list_free(&body);
    rec_list_free(&all);
    return 0;
}
