/* -- perf.data reader ------------------------------------------------------------------ */

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#endif

#define JITANON__PERF_FILE_HEADER 104u
#define JITANON__PERF_FILE_HEADER_V1 72u /* legacy header without the feature bitmap */
#define JITANON__PERF_PIPE_HEADER 16u
#define JITANON__PERF_MAGIC 0x32454C4946524550ull /* "PERFILE2" as a little-endian u64 */
#define JITANON__PERF_ATTR_VER0 64u
#define JITANON__PERF_DEFAULT_CAP (64ull * 1024u * 1024u)
#define JITANON__PERF_MIN_BUF 65536u
#define JITANON__PERF_MAX_REC 65535u
#define JITANON__PERF_MMAP_FIXED 40u  /* header + pid, tid, start, len, pgoff */
#define JITANON__PERF_MMAP2_FIXED 72u /* + maj/min/ino/ino_gen (or build id), prot, flags */
#define JITANON__PERF_AUXTRACE_SIZE 48u
#define JITANON__PERF_TRACING_SIZE 16u
#define JITANON__PERF_SAMPLE_TRAILER                                                                  \
    (JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_ID |                    \
     JITANON_PERF_SAMPLE_STREAM_ID | JITANON_PERF_SAMPLE_CPU | JITANON_PERF_SAMPLE_IDENTIFIER)
/* read_format bits (perf_event.h) */
#define JITANON__PERF_FORMAT_ENABLED 1u
#define JITANON__PERF_FORMAT_RUNNING 2u
#define JITANON__PERF_FORMAT_ID 4u
#define JITANON__PERF_FORMAT_GROUP 8u
#define JITANON__PERF_FORMAT_LOST 16u

JITANON_API const char *jitanon_perf_record_name(uint32_t type)
{
    static const char *const kernel[] = {"UNKNOWN", "MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE",
                                         "FORK", "READ", "SAMPLE", "MMAP2", "AUX", "ITRACE_START",
                                         "LOST_SAMPLES", "SWITCH", "SWITCH_CPU_WIDE", "NAMESPACES", "KSYMBOL",
                                         "BPF_EVENT", "CGROUP", "TEXT_POKE", "AUX_OUTPUT_HW_ID"};
    static const char *const user[] = {"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA",
                                       "HEADER_BUILD_ID", "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO",
                                       "AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG",
                                       "STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV", "HEADER_FEATURE",
                                       "COMPRESSED", "FINISHED_INIT", "COMPRESSED2"};
    if (type < sizeof kernel / sizeof kernel[0]) return kernel[type];
    if (type >= 64 && type - 64 < sizeof user / sizeof user[0]) return user[type - 64];
    return "UNKNOWN";
}

JITANON_API uint64_t jitanon_perf_u64_at(jitanon_bytes b, size_t i, int big_endian)
{
    if (i >= b.size / 8) return 0;
    return jitanon__rd64(b.data + i * 8, big_endian);
}

JITANON__PRIVATE unsigned jitanon__popcount64(uint64_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

/* A big-endian compiler allocates bitfields from the most significant bit, so the attr
   flag word of a big-endian file has `disabled` in bit 63: reverse it to number the
   fields the same way for both orders. */
JITANON__PRIVATE uint64_t jitanon__bitrev64(uint64_t v)
{
    uint64_t r = 0;
    unsigned i;
    for (i = 0; i < 64; i++, v >>= 1) r = (r << 1) | (v & 1);
    return r;
}

JITANON__PRIVATE jitanon_result jitanon__pd_bad(jitanon_error *err, jitanon_result code, uint64_t off,
                                               const jitanon_perf_record *rec, const char *what)
{
    jitanon_result r = JITANON__FAIL(err, code, off, "%s record (size %u): %s", jitanon_perf_record_name(rec->type),
                                     (unsigned)rec->size, what);
    if (err) {
        err->record_index = rec->index;
        err->record_type = rec->type;
    }
    return r;
}

/* -- input buffer: unread bytes are buf_[buf_pos_, buf_len_), starting at input offset
   buf_off_.  Memory grows only to the largest record asked for. */

JITANON__PRIVATE size_t jitanon__pd_avail(const jitanon_perf_reader *r) { return r->buf_len_ - r->buf_pos_; }

JITANON__PRIVATE void jitanon__pd_consume(jitanon_perf_reader *r, size_t n)
{
    r->buf_pos_ += n;
    r->buf_off_ += n;
}

JITANON__PRIVATE void jitanon__pd_compact(jitanon_perf_reader *r)
{
    if (!r->buf_pos_) return;
    memmove(r->buf_, r->buf_ + r->buf_pos_, r->buf_len_ - r->buf_pos_);
    r->buf_len_ -= r->buf_pos_;
    r->buf_pos_ = 0;
}

/* Makes at least `need` unread bytes available.  JITANON_END when the input ends first. */
JITANON__PRIVATE jitanon_result jitanon__pd_fill(jitanon_perf_reader *r, size_t need, jitanon_error *err)
{
    while (jitanon__pd_avail(r) < need) {
        size_t got, want;
        if (r->eof_) return JITANON_END;
        jitanon__pd_compact(r);
        if (need > r->buf_cap_ && !jitanon__grow(&r->allocator_, (void **)&r->buf_, &r->buf_cap_,
                                                 need < JITANON__PERF_MIN_BUF ? JITANON__PERF_MIN_BUF : need, 1))
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, r->buf_off_, "cannot buffer %U bytes", (uint64_t)need);
        want = r->buf_cap_ - r->buf_len_;
        got = r->read_fn_(r->user_, r->buf_ + r->buf_len_, want);
        if (got == SIZE_MAX) return JITANON__FAIL(err, JITANON_ERR_IO, r->buf_off_ + jitanon__pd_avail(r), "read failed");
        if (got > want) return JITANON__FAIL(err, JITANON_ERR_IO, r->buf_off_, "read callback returned too much");
        if (got == 0) r->eof_ = 1;
        r->buf_len_ += got;
    }
    return JITANON_OK;
}

/* Consumes bytes up to input offset `off` (forward only). */
JITANON__PRIVATE jitanon_result jitanon__pd_skip_to(jitanon_perf_reader *r, uint64_t off, jitanon_error *err)
{
    while (r->buf_off_ < off) {
        uint64_t left = off - r->buf_off_;
        size_t n;
        if (!jitanon__pd_avail(r)) {
            jitanon_result res;
            r->buf_pos_ = r->buf_len_ = 0; /* everything was consumed: reuse the whole buffer */
            res = jitanon__pd_fill(r, 1, err);
            if (res == JITANON_END)
                return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, r->buf_off_, "input ends before byte %U", off);
            if (res != JITANON_OK) return res;
        }
        n = left < jitanon__pd_avail(r) ? (size_t)left : jitanon__pd_avail(r);
        jitanon__pd_consume(r, n);
    }
    return JITANON_OK;
}

/* Positions the input at `off`: inside the buffer, by seeking, or by skipping forward. */
JITANON__PRIVATE jitanon_result jitanon__pd_goto(jitanon_perf_reader *r, uint64_t off, jitanon_error *err)
{
    if (off >= r->buf_off_ && off - r->buf_off_ <= jitanon__pd_avail(r)) {
        jitanon__pd_consume(r, (size_t)(off - r->buf_off_));
        return JITANON_OK;
    }
    if (r->seek_fn_) {
        if (r->seek_fn_(r->user_, off)) return JITANON__FAIL(err, JITANON_ERR_IO, off, "cannot seek to byte %U", off);
        r->buf_pos_ = r->buf_len_ = 0;
        r->buf_off_ = off;
        r->eof_ = 0;
        return JITANON_OK;
    }
    if (off < r->buf_off_)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, off,
                             "this layout needs seeking back to byte %U; read a file, not a pipe", off);
    return jitanon__pd_skip_to(r, off, err);
}

/* Copies n bytes at input offset `off` to dst in buffer-sized pieces. */
JITANON__PRIVATE jitanon_result jitanon__pd_read_at(jitanon_perf_reader *r, uint64_t off, uint8_t *dst, size_t n,
                                                   jitanon_error *err)
{
    jitanon_result res = jitanon__pd_goto(r, off, err);
    while (res == JITANON_OK && n) {
        size_t k;
        if (!jitanon__pd_avail(r)) {
            r->buf_pos_ = r->buf_len_ = 0;
            res = jitanon__pd_fill(r, 1, err);
            if (res == JITANON_END)
                return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, r->buf_off_, "input ends %U bytes early", (uint64_t)n);
            if (res != JITANON_OK) return res;
        }
        k = n < jitanon__pd_avail(r) ? n : jitanon__pd_avail(r);
        memcpy(dst, r->buf_ + r->buf_pos_, k);
        jitanon__pd_consume(r, k);
        dst += k;
        n -= k;
    }
    return res;
}

/* Everything kept besides the record buffer (attrs, ids, features) is charged here. */
JITANON__PRIVATE jitanon_result jitanon__pd_charge(uint64_t *used, uint64_t limit, uint64_t n, uint64_t off,
                                                  jitanon_error *err)
{
    if (n > limit || *used > limit - n)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, off, "header data exceeds max_header_bytes (%U)", limit);
    *used += n;
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_alloc(jitanon_perf_reader *r, uint64_t n, uint64_t off, void **out,
                                                 jitanon_error *err)
{
    jitanon_result res = jitanon__pd_charge(&r->header_bytes_, r->max_header_bytes_, n, off, err);
    *out = NULL;
    if (res != JITANON_OK) return res;
    *out = jitanon__malloc(&r->allocator_, (size_t)n);
    return *out ? JITANON_OK : JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot allocate %U bytes", n);
}

/* -- attrs and the id -> attr map ------------------------------------------------------- */

JITANON__PRIVATE void jitanon__pd_decode_attr(jitanon_perf_attr *a, const uint8_t *p, uint32_t size, int big)
{
    uint64_t flags = jitanon__rd64(p + 40, big);
    a->type = jitanon__rd32(p, big);
    a->size = size;
    a->config = jitanon__rd64(p + 8, big);
    a->sample_type = jitanon__rd64(p + 24, big);
    a->read_format = jitanon__rd64(p + 32, big);
    a->flags = big ? jitanon__bitrev64(flags) : flags;
    a->sample_id_all = (int)(a->flags >> 18 & 1);
    a->use_clockid = (int)(a->flags >> 25 & 1);
    a->clockid = size >= 96 ? (int32_t)jitanon__rd32(p + 92, big) : 0;
    a->id_hdr_size = a->sample_id_all ? 8u * jitanon__popcount64(a->sample_type & JITANON__PERF_SAMPLE_TRAILER) : 0;
}

/* attr.size as the reader uses it: 0 is the first published size. */
JITANON__PRIVATE uint32_t jitanon__pd_attr_size(const uint8_t *p, int big)
{
    uint32_t s = jitanon__rd32(p + 4, big);
    return s ? s : JITANON__PERF_ATTR_VER0;
}

JITANON__PRIVATE int jitanon__pd_idless(const jitanon__perf_idmap *a, const jitanon__perf_idmap *b)
{
    return a->id < b->id || (a->id == b->id && a->attr < b->attr);
}

/* Heapsort: O(n log n) whatever the input, no recursion, no libc. */
JITANON__PRIVATE void jitanon__pd_sift(jitanon__perf_idmap *m, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        jitanon__perf_idmap t;
        if (c >= n) return;
        if (c + 1 < n && jitanon__pd_idless(&m[c], &m[c + 1])) c++;
        if (!jitanon__pd_idless(&m[i], &m[c])) return;
        t = m[i];
        m[i] = m[c];
        m[c] = t;
        i = c;
    }
}

JITANON__PRIVATE void jitanon__pd_sort_ids(jitanon__perf_idmap *m, size_t n)
{
    size_t i;
    for (i = n / 2; i-- > 0;) jitanon__pd_sift(m, i, n);
    for (i = n; i-- > 1;) {
        jitanon__perf_idmap t = m[0];
        m[0] = m[i];
        m[i] = t;
        jitanon__pd_sift(m, 0, i);
    }
}

/* The attr that owns `id`: the first attr listing it; id 0 or unknown gives attr 0, which
   is how perf treats synthesized records with zeroed trailers. */
JITANON__PRIVATE size_t jitanon__pd_attr_of(const jitanon_perf_reader *r, uint64_t id)
{
    size_t lo = 0, hi = r->idmap_len_;
    if (r->attr_count < 2 || id == 0) return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->idmap_[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->idmap_len_ && r->idmap_[lo].id == id ? r->idmap_[lo].attr : 0;
}

JITANON__PRIVATE jitanon_result jitanon__pd_map_ids(jitanon_perf_reader *r, size_t ai, uint64_t off, jitanon_error *err)
{
    const jitanon_perf_attr *a = &r->attrs[ai];
    size_t i;
    if (!jitanon__grow(&r->allocator_, (void **)&r->idmap_, &r->idmap_cap_, r->idmap_len_ + a->id_count + 1,
                       sizeof *r->idmap_))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot grow the id map");
    for (i = 0; i < a->id_count; i++) {
        r->idmap_[r->idmap_len_].id = a->ids[i];
        r->idmap_[r->idmap_len_++].attr = ai;
    }
    jitanon__pd_sort_ids(r->idmap_, r->idmap_len_);
    return JITANON_OK;
}

/* Adds an attr: copies `raw` (size bytes), takes ownership of `ids` (n decoded ids,
   charged by the caller) even on failure. */
JITANON__PRIVATE jitanon_result jitanon__pd_add_attr(jitanon_perf_reader *r, const uint8_t *raw, uint32_t size,
                                                    uint64_t *ids, size_t n, uint64_t off, jitanon_error *err)
{
    jitanon_perf_attr *a;
    void *copy = NULL;
    jitanon_result res = JITANON_OK;
    if (!jitanon__grow(&r->allocator_, (void **)&r->attrs, &r->attr_cap_, r->attr_count + 1, sizeof *r->attrs))
        res = JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot grow the attr table");
    if (res == JITANON_OK) res = jitanon__pd_alloc(r, size, off, &copy, err);
    if (res != JITANON_OK) {
        jitanon__free(&r->allocator_, ids, n * 8);
        return res;
    }
    memcpy(copy, raw, size);
    a = &r->attrs[r->attr_count++];
    memset(a, 0, sizeof *a);
    jitanon__pd_decode_attr(a, (const uint8_t *)copy, size, r->big_endian);
    a->raw.data = (const uint8_t *)copy;
    a->raw.size = size;
    a->ids = ids;
    a->id_count = n;
    return jitanon__pd_map_ids(r, r->attr_count - 1, off, err);
}

/* Decodes n ids from input bytes into a new (charged) array. */
JITANON__PRIVATE jitanon_result jitanon__pd_decode_ids(jitanon_perf_reader *r, const uint8_t *p, size_t n, uint64_t off,
                                                      uint64_t **out, jitanon_error *err)
{
    void *mem;
    size_t i;
    jitanon_result res = jitanon__pd_alloc(r, (uint64_t)n * 8, off, &mem, err);
    *out = (uint64_t *)mem;
    for (i = 0; res == JITANON_OK && i < n; i++) (*out)[i] = jitanon__rd64(p + 8 * i, r->big_endian);
    return res;
}

/* -- file header ------------------------------------------------------------------------ */

/* Where header sections come from: a copy of the bytes before the data section (forward-
   only input), or the input itself through seeking. */
typedef struct jitanon__pd_pre {
    uint8_t *mem;
    uint64_t off;
    size_t len;
} jitanon__pd_pre;

JITANON__PRIVATE jitanon_result jitanon__pd_section(jitanon_perf_reader *r, const jitanon__pd_pre *pre, uint64_t off,
                                                   uint64_t size, uint8_t *dst, jitanon_error *err)
{
    if (!pre->mem) return jitanon__pd_read_at(r, off, dst, (size_t)size, err);
    if (off < pre->off || off - pre->off > pre->len || size > pre->len - (off - pre->off))
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, off,
                             "section of %U bytes is not before the data; reading it needs a seek callback", size);
    if (size) memcpy(dst, pre->mem + (off - pre->off), (size_t)size);
    return JITANON_OK;
}

/* One attrs-section entry: attr.size bytes, then {u64 offset, u64 size} of its id array. */
JITANON__PRIVATE jitanon_result jitanon__pd_file_attr(jitanon_perf_reader *r, const jitanon__pd_pre *pre,
                                                     const uint8_t *e, uint64_t attr_size, uint64_t off,
                                                     jitanon_error *err)
{
    uint32_t asize = jitanon__pd_attr_size(e, r->big_endian);
    uint64_t ids_off, ids_size;
    uint8_t *bytes;
    uint64_t *ids = NULL;
    jitanon_result res;
    /* perf walks entries by attr.size + 16, so the header's attr_size must agree. */
    if ((uint64_t)asize + 16 != attr_size)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, off + 4, "attr.size %u does not match attr_size %U",
                             (unsigned)asize, attr_size);
    ids_off = jitanon__rd64(e + asize, r->big_endian);
    ids_size = jitanon__rd64(e + asize + 8, r->big_endian);
    if (ids_size % 8 || ids_size > r->max_header_bytes_)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, off + asize + 8, "bad id array size %U", ids_size);
    bytes = (uint8_t *)jitanon__malloc(&r->allocator_, (size_t)ids_size);
    if (!bytes) return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot allocate the id array");
    res = jitanon__pd_section(r, pre, ids_off, ids_size, bytes, err);
    if (res == JITANON_OK) res = jitanon__pd_decode_ids(r, bytes, (size_t)(ids_size / 8), ids_off, &ids, err);
    jitanon__free(&r->allocator_, bytes, (size_t)ids_size);
    if (res != JITANON_OK) return res;
    return jitanon__pd_add_attr(r, e, asize, ids, (size_t)(ids_size / 8), off, err);
}

JITANON__PRIVATE jitanon_result jitanon__pd_file_attrs(jitanon_perf_reader *r, const jitanon__pd_pre *pre,
                                                      uint64_t attr_size, uint64_t attrs_off, uint64_t attrs_size,
                                                      jitanon_error *err)
{
    uint8_t *tab;
    uint64_t i, n = attrs_size / attr_size;
    jitanon_result res;
    if (attrs_size > r->max_header_bytes_)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 32, "attrs section exceeds max_header_bytes");
    tab = (uint8_t *)jitanon__malloc(&r->allocator_, (size_t)attrs_size);
    if (!tab) return JITANON__FAIL(err, JITANON_ERR_NOMEM, attrs_off, "cannot allocate the attrs section");
    res = jitanon__pd_section(r, pre, attrs_off, attrs_size, tab, err);
    for (i = 0; res == JITANON_OK && i < n; i++)
        res = jitanon__pd_file_attr(r, pre, tab + i * attr_size, attr_size, attrs_off + i * attr_size, err);
    jitanon__free(&r->allocator_, tab, (size_t)attrs_size);
    return res;
}

typedef struct jitanon__pd_fhdr {
    uint64_t size, attr_size, attrs_off, attrs_size;
} jitanon__pd_fhdr;

JITANON__PRIVATE jitanon_result jitanon__pd_check_fhdr(jitanon_perf_reader *r, const jitanon__pd_fhdr *h,
                                                      jitanon_error *err)
{
    uint64_t end;
    if (!jitanon__add_u64(h->attrs_off, h->attrs_size, &end))
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 24, "attrs section overflows");
    if (h->attrs_size && (h->attr_size < JITANON__PERF_ATTR_VER0 + 16 || h->attrs_size % h->attr_size))
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 16, "attr_size %U does not divide the attrs section",
                             h->attr_size);
    if (r->data_offset < h->size || !jitanon__add_u64(r->data_offset, r->data_size, &end))
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 40, "bad data section offset %U", r->data_offset);
    return JITANON_OK;
}

/* Forward-only input: keep the bytes between the header and the data section, where perf
   puts the id arrays and attrs. */
JITANON__PRIVATE jitanon_result jitanon__pd_load_pre(jitanon_perf_reader *r, jitanon__pd_pre *pre, jitanon_error *err)
{
    uint64_t n = r->data_offset - r->buf_off_;
    if (n > r->max_header_bytes_)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, r->buf_off_, "%U bytes before the data exceed max_header_bytes", n);
    pre->off = r->buf_off_;
    pre->len = (size_t)n;
    pre->mem = (uint8_t *)jitanon__malloc(&r->allocator_, pre->len);
    if (!pre->mem) return JITANON__FAIL(err, JITANON_ERR_NOMEM, pre->off, "cannot buffer the header sections");
    return jitanon__pd_read_at(r, pre->off, pre->mem, pre->len, err);
}

JITANON__PRIVATE jitanon_result jitanon__pd_file_header(jitanon_perf_reader *r, uint64_t hsize, jitanon_error *err)
{
    jitanon__pd_fhdr h;
    jitanon__pd_pre pre;
    jitanon__cur c;
    jitanon_result res = jitanon__pd_fill(r, (size_t)hsize, err);
    if (res == JITANON_END)
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, jitanon__pd_avail(r), "file header needs %U bytes", hsize);
    if (res != JITANON_OK) return res;
    c = jitanon__cur_make(r->buf_ + r->buf_pos_ + 16, (size_t)hsize - 16, 16, r->big_endian);
    h.size = hsize;
    h.attr_size = jitanon__get64(&c);
    h.attrs_off = jitanon__get64(&c);
    h.attrs_size = jitanon__get64(&c);
    r->data_offset = jitanon__get64(&c);
    r->data_size = jitanon__get64(&c);
    jitanon__take(&c, 16); /* event_types: obsolete */
    if (hsize == JITANON__PERF_FILE_HEADER) {
        unsigned i;
        for (i = 0; i < 4; i++) r->features[i] = jitanon__get64(&c);
    }
    if ((res = jitanon__pd_check_fhdr(r, &h, err)) != JITANON_OK) return res;
    jitanon__pd_consume(r, (size_t)hsize);
    memset(&pre, 0, sizeof pre);
    if (!r->seek_fn_) res = jitanon__pd_load_pre(r, &pre, err);
    if (res == JITANON_OK && h.attrs_size)
        res = jitanon__pd_file_attrs(r, &pre, h.attr_size, h.attrs_off, h.attrs_size, err);
    jitanon__free(&r->allocator_, pre.mem, pre.len);
    return res == JITANON_OK ? jitanon__pd_goto(r, r->data_offset, err) : res;
}

JITANON__PRIVATE jitanon_result jitanon__pd_header(jitanon_perf_reader *r, jitanon_error *err)
{
    const uint8_t *p;
    uint64_t hsize;
    jitanon_result res = jitanon__pd_fill(r, JITANON__PERF_PIPE_HEADER, err);
    if (res == JITANON_END)
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, jitanon__pd_avail(r), "perf.data header needs 16 bytes");
    if (res != JITANON_OK) return res;
    p = r->buf_ + r->buf_pos_;
    /* The writer stores the u64 "PERFILE2" in its own order, so the bytes tell the order. */
    if (memcmp(p, "PERFILE2", 8) == 0) r->big_endian = 0;
    else if (memcmp(p, "2ELIFREP", 8) == 0) r->big_endian = 1;
    else if (memcmp(p, "PERFFILE", 8) == 0)
        return JITANON__FAIL(err, JITANON_ERR_BAD_VERSION, 0, "legacy PERFFILE format is not supported");
    else return JITANON__FAIL(err, JITANON_ERR_BAD_MAGIC, 0, "not perf.data: magic 'PERFILE2' not found");
    hsize = jitanon__rd64(p + 8, r->big_endian);
    if (hsize == JITANON__PERF_PIPE_HEADER) {
        r->mode = JITANON_PERF_PIPE;
        jitanon__pd_consume(r, JITANON__PERF_PIPE_HEADER);
        return JITANON_OK;
    }
    if (hsize != JITANON__PERF_FILE_HEADER && hsize != JITANON__PERF_FILE_HEADER_V1)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 8, "header size %U is neither 16 (pipe) nor 104 (file)", hsize);
    r->mode = JITANON_PERF_FILE;
    return jitanon__pd_file_header(r, hsize, err);
}

JITANON_API jitanon_result jitanon_perf_reader_init(jitanon_perf_reader *r, jitanon_read_fn read_fn,
                                                    jitanon_seek_fn seek_fn, void *user,
                                                    const jitanon_perf_opts *opts, jitanon_error *err)
{
    JITANON_ASSERT(r && read_fn);
    memset(r, 0, sizeof *r);
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_))
        return JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_perf_opts not zero-initialised");
    r->read_fn_ = read_fn;
    r->seek_fn_ = seek_fn;
    r->user_ = user;
    r->max_payload_ = opts && opts->max_payload ? opts->max_payload : JITANON__PERF_DEFAULT_CAP;
    r->max_header_bytes_ = opts && opts->max_header_bytes ? opts->max_header_bytes : JITANON__PERF_DEFAULT_CAP;
    if (opts) {
        r->allocator_ = opts->allocator;
        r->decompress_ = opts->decompress;
        r->decompress_user_ = opts->decompress_user;
    }
    r->dbuf_.allocator = r->allocator_;
    /* decompressed bytes pending: one payload-carrying record plus a straddling tail */
    r->dbuf_.max_size = (size_t)(r->max_payload_ < SIZE_MAX / 4 ? r->max_payload_ : SIZE_MAX / 4);
    r->dbuf_.max_size += 2 * JITANON__PERF_MIN_BUF;
    return jitanon__pd_header(r, err);
}

/* -- records ------------------------------------------------------------------------------ */

/* Size of the record at p including a trailing payload (AUXTRACE, HEADER_TRACING_DATA).
   JITANON_AGAIN when fewer than *total bytes are available (enough to learn the size
   first, then the whole record). */
JITANON__PRIVATE jitanon_result jitanon__pd_measure(const jitanon_perf_reader *r, const uint8_t *p, size_t avail,
                                                   uint64_t off, size_t *total, jitanon_error *err)
{
    uint32_t type;
    uint16_t size;
    uint64_t extra = 0;
    *total = 8;
    if (avail < 8) return JITANON_AGAIN;
    type = jitanon__rd32(p, r->big_endian);
    size = jitanon__rd16(p + 6, r->big_endian);
    if (size < 8)
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off + 6, "%s record: header.size %u is below 8",
                             jitanon_perf_record_name(type), (unsigned)size);
    if (type == JITANON_PERF_RECORD_AUXTRACE || type == JITANON_PERF_RECORD_HEADER_TRACING_DATA) {
        size_t need = type == JITANON_PERF_RECORD_AUXTRACE ? JITANON__PERF_AUXTRACE_SIZE : JITANON__PERF_TRACING_SIZE;
        if (size < need)
            return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off + 6, "%s record: header.size %u is below %u",
                                 jitanon_perf_record_name(type), (unsigned)size, (unsigned)need);
        *total = need;
        if (avail < need) return JITANON_AGAIN;
        extra = type == JITANON_PERF_RECORD_AUXTRACE ? jitanon__rd64(p + 8, r->big_endian)
                                                     : jitanon__rd32(p + 8, r->big_endian);
        if (extra > r->max_payload_)
            return JITANON__FAIL(err, JITANON_ERR_LIMIT, off + 8, "%s payload of %U bytes exceeds max_payload",
                                 jitanon_perf_record_name(type), extra);
    }
    *total = (size_t)(size + extra);
    return avail < *total ? JITANON_AGAIN : JITANON_OK;
}

/* Position of the id that tells which attr a record belongs to; perf requires every attr
   to agree, so the first attr decides (a sample's id counts u64s from the start, any other
   record's from the end of its trailer). */
JITANON__PRIVATE int jitanon__pd_id_slot(const jitanon_perf_reader *r, int sample, size_t *slot)
{
    uint64_t st;
    if (r->attr_count < 2) return 0;
    st = r->attrs[0].sample_type;
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) *slot = sample ? 0 : 1;
    else if (!(st & JITANON_PERF_SAMPLE_ID)) return 0;
    else if (sample)
        *slot = (st & JITANON_PERF_SAMPLE_IP ? 1u : 0u) + (st & JITANON_PERF_SAMPLE_TID ? 1u : 0u) +
                (st & JITANON_PERF_SAMPLE_TIME ? 1u : 0u) + (st & JITANON_PERF_SAMPLE_ADDR ? 1u : 0u);
    else *slot = 1u + (st & JITANON_PERF_SAMPLE_CPU ? 1u : 0u) + (st & JITANON_PERF_SAMPLE_STREAM_ID ? 1u : 0u);
    if (!sample && !r->attrs[0].sample_id_all) return 0;
    return 1;
}

JITANON__PRIVATE void jitanon__pd_sid_fields(jitanon__cur *c, uint64_t st, jitanon_perf_sample_id *s, int ids_only)
{
    if (st & JITANON_PERF_SAMPLE_TID) {
        s->pid = jitanon__get32(c);
        s->tid = jitanon__get32(c);
    }
    if (st & JITANON_PERF_SAMPLE_TIME) s->time = jitanon__get64(c);
    if (ids_only) return;
    if (st & JITANON_PERF_SAMPLE_ID) s->id = jitanon__get64(c);
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) s->stream_id = jitanon__get64(c);
    if (st & JITANON_PERF_SAMPLE_CPU) {
        s->cpu = jitanon__get32(c);
        jitanon__get32(c);
    }
}

/* The sample_id trailer of a non-SAMPLE kernel record; *n shrinks to the body before it. */
JITANON__PRIVATE jitanon_result jitanon__pd_trailer(const jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                   const uint8_t *body, size_t *n, jitanon_error *err)
{
    const jitanon_perf_attr *a;
    jitanon__cur c;
    size_t slot;
    if (!r->attr_count) return JITANON_OK;
    if (jitanon__pd_id_slot(r, 0, &slot) && *n >= slot * 8)
        rec->attr_index = jitanon__pd_attr_of(r, jitanon__rd64(body + *n - slot * 8, r->big_endian));
    a = &r->attrs[rec->attr_index];
    if (!a->sample_id_all) return JITANON_OK;
    if (a->id_hdr_size > *n)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its sample_id trailer");
    *n -= a->id_hdr_size;
    c = jitanon__cur_make(body + *n, a->id_hdr_size, 0, r->big_endian);
    jitanon__pd_sid_fields(&c, a->sample_type, &rec->sid, 0);
    if (a->sample_type & JITANON_PERF_SAMPLE_IDENTIFIER) rec->sid.id = jitanon__get64(&c);
    rec->sid.present = a->sample_type & JITANON__PERF_SAMPLE_TRAILER;
    return JITANON_OK;
}

/* Skips the READ part of a sample (layout from read_format). */
JITANON__PRIVATE int jitanon__pd_skip_read(jitanon__cur *c, uint64_t rf)
{
    uint64_t per = 1 + (rf & JITANON__PERF_FORMAT_ID ? 1u : 0u) + (rf & JITANON__PERF_FORMAT_LOST ? 1u : 0u);
    uint64_t hdr = (rf & JITANON__PERF_FORMAT_ENABLED ? 1u : 0u) + (rf & JITANON__PERF_FORMAT_RUNNING ? 1u : 0u);
    uint64_t words = per + hdr;
    if (rf & JITANON__PERF_FORMAT_GROUP) {
        uint64_t nr;
        if (c->left < 8) return 0;
        nr = jitanon__get64(c);
        if (nr > c->left / 8 / per) return 0;
        words = hdr + nr * per;
    }
    return words <= c->left / 8 && jitanon__take(c, (size_t)words * 8) != NULL;
}

JITANON__PRIVATE jitanon_result jitanon__pd_sample(const jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                  jitanon__cur *c, jitanon_error *err)
{
    const jitanon_perf_attr *a;
    uint64_t st, fixed;
    size_t slot;
    if (!r->attr_count) return JITANON_OK;
    if (jitanon__pd_id_slot(r, 1, &slot) && c->left / 8 > slot)
        rec->attr_index = jitanon__pd_attr_of(r, jitanon__rd64(c->p + slot * 8, r->big_endian));
    a = &r->attrs[rec->attr_index];
    st = a->sample_type;
    fixed = jitanon__popcount64(st & (JITANON__PERF_SAMPLE_TRAILER | JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_ADDR |
                                      JITANON_PERF_SAMPLE_PERIOD));
    if (c->left < fixed * 8)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its sample_type fields");
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) rec->sid.id = jitanon__get64(c);
    if (st & JITANON_PERF_SAMPLE_IP) rec->sample.ip = jitanon__get64(c);
    jitanon__pd_sid_fields(c, st, &rec->sid, 1);
    if (st & JITANON_PERF_SAMPLE_ADDR) rec->sample.addr = jitanon__get64(c);
    if (st & JITANON_PERF_SAMPLE_ID) rec->sid.id = jitanon__get64(c);
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) rec->sid.stream_id = jitanon__get64(c);
    if (st & JITANON_PERF_SAMPLE_CPU) {
        rec->sid.cpu = jitanon__get32(c);
        jitanon__get32(c);
    }
    if (st & JITANON_PERF_SAMPLE_PERIOD) rec->sample.period = jitanon__get64(c);
    rec->sid.present = st & JITANON__PERF_SAMPLE_TRAILER;
    if ((st & JITANON_PERF_SAMPLE_READ) && !jitanon__pd_skip_read(c, a->read_format))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, c->off, rec, "read values run past the record");
    if (st & JITANON_PERF_SAMPLE_CALLCHAIN) {
        uint64_t nr = c->left >= 8 ? jitanon__get64(c) : UINT64_MAX;
        if (nr > c->left / 8)
            return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, c->off, rec, "callchain runs past the record");
        rec->sample.callchain_nr = nr;
        rec->sample.callchain.data = c->p;
        rec->sample.callchain.size = (size_t)nr * 8;
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_mmap(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    jitanon_perf_mmap *m = &rec->mmap;
    int two = rec->type == JITANON_PERF_RECORD_MMAP2;
    if (c->left < (two ? JITANON__PERF_MMAP2_FIXED : JITANON__PERF_MMAP_FIXED) - 8u)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its fixed part");
    m->pid = jitanon__get32(c);
    m->tid = jitanon__get32(c);
    m->start = jitanon__get64(c);
    m->len = jitanon__get64(c);
    m->pgoff = jitanon__get64(c);
    if (two && (rec->misc & JITANON_PERF_MISC_MMAP_BUILD_ID)) {
        const uint8_t *b = jitanon__take(c, 24);
        m->has_build_id = 1;
        m->build_id_size = b[0] <= 20 ? b[0] : 20;
        m->build_id = b + 4;
    } else if (two) {
        m->maj = jitanon__get32(c);
        m->min = jitanon__get32(c);
        m->ino = jitanon__get64(c);
        m->ino_generation = jitanon__get64(c);
    }
    if (two) {
        m->prot = jitanon__get32(c);
        m->flags = jitanon__get32(c);
    }
    if (!jitanon__take_cstr(c, &m->filename))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, c->off, rec, "file name is not NUL-terminated");
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_short(jitanon_perf_record *rec, jitanon__cur *c, size_t need,
                                                 jitanon_error *err)
{
    if (c->left >= need) return JITANON_OK;
    return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its fixed part");
}

JITANON__PRIVATE jitanon_result jitanon__pd_comm(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    jitanon_result res = jitanon__pd_short(rec, c, 8, err);
    if (res != JITANON_OK) return res;
    rec->comm.pid = jitanon__get32(c);
    rec->comm.tid = jitanon__get32(c);
    if (!jitanon__take_cstr(c, &rec->comm.comm))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, c->off, rec, "comm is not NUL-terminated");
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_task(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    jitanon_result res = jitanon__pd_short(rec, c, 24, err);
    if (res != JITANON_OK) return res;
    rec->task.pid = jitanon__get32(c);
    rec->task.ppid = jitanon__get32(c);
    rec->task.tid = jitanon__get32(c);
    rec->task.ptid = jitanon__get32(c);
    rec->task.time = jitanon__get64(c);
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_time_conv(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    jitanon_result res = jitanon__pd_short(rec, c, 24, err);
    if (res != JITANON_OK) return res;
    rec->time_conv.time_shift = jitanon__get64(c);
    rec->time_conv.time_mult = jitanon__get64(c);
    rec->time_conv.time_zero = jitanon__get64(c);
    /* The extended part exists only in newer files: header.size says whether it is there. */
    if (c->left < 24) return JITANON_OK;
    rec->time_conv.extended = 1;
    rec->time_conv.time_cycles = jitanon__get64(c);
    rec->time_conv.time_mask = jitanon__get64(c);
    rec->time_conv.cap_user_time_zero = c->p[0];
    rec->time_conv.cap_user_time_short = c->p[1];
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_id_index(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    uint64_t nr;
    jitanon_result res = jitanon__pd_short(rec, c, 8, err);
    if (res != JITANON_OK) return res;
    nr = jitanon__get64(c);
    if (nr > c->left / 32)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset + 8, rec, "nr entries do not fit in the record");
    rec->id_index.nr = nr;
    rec->id_index.entries.data = c->p;
    rec->id_index.entries.size = (size_t)nr * 32;
    jitanon__take(c, (size_t)nr * 32);
    rec->id_index.has_vm = nr && c->left / 16 >= nr;
    return JITANON_OK;
}

/* Pipe mode: {header, attr of attr.size bytes, u64 ids[]}. */
JITANON__PRIVATE jitanon_result jitanon__pd_header_attr(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                       jitanon__cur *c, jitanon_error *err)
{
    uint32_t asize;
    size_t n;
    uint64_t *ids;
    jitanon_result res = jitanon__pd_short(rec, c, JITANON__PERF_ATTR_VER0, err);
    if (res != JITANON_OK) return res;
    asize = jitanon__pd_attr_size(c->p, r->big_endian);
    if (asize < JITANON__PERF_ATTR_VER0 || asize > c->left || (c->left - asize) % 8)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset + 12, rec, "attr.size does not fit the record");
    n = (c->left - asize) / 8;
    if ((res = jitanon__pd_decode_ids(r, c->p + asize, n, rec->offset, &ids, err)) != JITANON_OK) return res;
    if ((res = jitanon__pd_add_attr(r, c->p, asize, ids, n, rec->offset, err)) != JITANON_OK) return res;
    rec->attr_index = r->attr_count - 1;
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_feature(jitanon_perf_reader *r, jitanon_perf_record *rec, jitanon__cur *c,
                                                   jitanon_error *err)
{
    jitanon_result res = jitanon__pd_short(rec, c, 8, err);
    if (res != JITANON_OK) return res;
    rec->feature.feat_id = jitanon__get64(c);
    rec->feature.data.data = c->p;
    rec->feature.data.size = c->left;
    if (rec->feature.feat_id < JITANON_PERF_FEAT_BITS)
        r->features[rec->feature.feat_id / 64] |= 1ull << (rec->feature.feat_id % 64);
    return JITANON_OK;
}

/* Per-type decoding; c covers the body (after the 8-byte header, before the trailer). */
JITANON__PRIVATE jitanon_result jitanon__pd_body(jitanon_perf_reader *r, jitanon_perf_record *rec, jitanon__cur *c,
                                                jitanon_error *err)
{
    switch (rec->type) {
    case JITANON_PERF_RECORD_SAMPLE: return jitanon__pd_sample(r, rec, c, err);
    case JITANON_PERF_RECORD_MMAP:
    case JITANON_PERF_RECORD_MMAP2: return jitanon__pd_mmap(rec, c, err);
    case JITANON_PERF_RECORD_COMM: return jitanon__pd_comm(rec, c, err);
    case JITANON_PERF_RECORD_FORK:
    case JITANON_PERF_RECORD_EXIT: return jitanon__pd_task(rec, c, err);
    case JITANON_PERF_RECORD_TIME_CONV: return jitanon__pd_time_conv(rec, c, err);
    case JITANON_PERF_RECORD_ID_INDEX: return jitanon__pd_id_index(rec, c, err);
    case JITANON_PERF_RECORD_HEADER_ATTR: return jitanon__pd_header_attr(r, rec, c, err);
    case JITANON_PERF_RECORD_HEADER_FEATURE: return jitanon__pd_feature(r, rec, c, err);
    default: return JITANON_OK; /* passed through by size */
    }
}

JITANON__PRIVATE void jitanon__pd_count(jitanon_perf_stats *st, const jitanon_perf_record *rec)
{
    uint64_t t = rec->sid.time;
    st->records++;
    if (rec->type < 128) st->by_type[rec->type]++;
    if (!(rec->sid.present & JITANON_PERF_SAMPLE_TIME)) return;
    if (!st->first_time || t < st->first_time) st->first_time = t;
    if (t > st->last_time) st->last_time = t;
}

/* Decodes a complete record of `total` bytes at p (input offset `off`). */
JITANON__PRIVATE jitanon_result jitanon__pd_decode(jitanon_perf_reader *r, const uint8_t *p, size_t total, uint64_t off,
                                                  jitanon_perf_record *rec, jitanon_error *err)
{
    jitanon__cur c;
    size_t n;
    jitanon_result res;
    memset(rec, 0, sizeof *rec);
    rec->type = jitanon__rd32(p, r->big_endian);
    rec->misc = jitanon__rd16(p + 4, r->big_endian);
    rec->size = jitanon__rd16(p + 6, r->big_endian);
    rec->raw.data = p;
    rec->raw.size = total;
    rec->offset = off;
    rec->index = r->next_index_;
    if (total > rec->size) {
        rec->payload.data = p + rec->size;
        rec->payload.size = total - rec->size;
    }
    n = (size_t)rec->size - 8;
    if (rec->type < 64 && rec->type != JITANON_PERF_RECORD_SAMPLE &&
        (res = jitanon__pd_trailer(r, rec, p + 8, &n, err)) != JITANON_OK)
        return res;
    c = jitanon__cur_make(p + 8, n, off + 8, r->big_endian);
    if ((res = jitanon__pd_body(r, rec, &c, err)) != JITANON_OK) return res;
    r->next_index_++;
    jitanon__pd_count(&r->stats, rec);
    return JITANON_OK;
}

/* The next record from the input itself (before decompression). */
JITANON__PRIVATE jitanon_result jitanon__pd_next_raw(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                    jitanon_error *err)
{
    uint64_t off = r->buf_off_, end = r->data_offset + r->data_size;
    size_t total;
    int bounded = r->mode == JITANON_PERF_FILE; /* data.size 0 (perf record killed) means no records, as in perf */
    jitanon_result res;
    if (bounded && off >= end) return JITANON_END;
    while ((res = jitanon__pd_measure(r, r->buf_ + r->buf_pos_, jitanon__pd_avail(r), off, &total, err)) == JITANON_AGAIN) {
        res = jitanon__pd_fill(r, total, err);
        if (res == JITANON_END && !jitanon__pd_avail(r) && !bounded) return JITANON_END;
        if (res == JITANON_END)
            return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "input ends inside a record (%U of at least %U bytes)",
                                 (uint64_t)jitanon__pd_avail(r), (uint64_t)total);
        if (res != JITANON_OK) return res;
    }
    if (res != JITANON_OK) return res;
    if (bounded && total > end - off)
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off, "record of %U bytes runs past the data section end %U",
                             (uint64_t)total, end);
    res = jitanon__pd_decode(r, r->buf_ + r->buf_pos_, total, off, rec, err);
    if (res == JITANON_OK) jitanon__pd_consume(r, total);
    return res;
}

/* Feeds a COMPRESSED/COMPRESSED2 payload to the decompressor hook. */
JITANON__PRIVATE jitanon_result jitanon__pd_inflate(jitanon_perf_reader *r, const jitanon_perf_record *rec,
                                                   jitanon_error *err)
{
    const uint8_t *src = rec->raw.data + 8;
    size_t n = (size_t)rec->size - 8;
    if (!r->decompress_)
        return jitanon__pd_bad(err, JITANON_ERR_COMPRESSED, rec->offset, rec,
                               "from perf record -z: re-record without -z or set opts.decompress (perf inject keeps it)");
    if (rec->type == JITANON_PERF_RECORD_COMPRESSED2) {
        uint64_t data_size = n >= 8 ? jitanon__rd64(src, r->big_endian) : UINT64_MAX;
        if (data_size > n - 8)
            return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset + 8, rec, "data_size is larger than the record");
        src += 8;
        n = (size_t)data_size;
    }
    if (r->dpos_) { /* keep only the undelivered tail: a record may straddle two payloads */
        memmove(r->dbuf_.data, r->dbuf_.data + r->dpos_, r->dbuf_.size - r->dpos_);
        r->dbuf_.size -= r->dpos_;
        r->dpos_ = 0;
    }
    if (r->decompress_(r->decompress_user_, src, n, &r->dbuf_))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec,
                               "decompressor failed (corrupt payload or out of memory)");
    r->doff_ = rec->offset;
    r->stats.compressed_records++;
    return JITANON_OK;
}

/* A record from the decompressed bytes; JITANON_AGAIN when none is complete. */
JITANON__PRIVATE jitanon_result jitanon__pd_next_inflated(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                         jitanon_error *err)
{
    const uint8_t *p = r->dbuf_.data + r->dpos_;
    size_t total, avail = r->dbuf_.size - r->dpos_;
    jitanon_result res;
    if (!avail) return JITANON_AGAIN;
    res = jitanon__pd_measure(r, p, avail, r->doff_, &total, err);
    if (res != JITANON_OK) return res;
    res = jitanon__pd_decode(r, p, total, r->doff_, rec, err);
    if (res != JITANON_OK) return res;
    if (rec->type == JITANON_PERF_RECORD_COMPRESSED || rec->type == JITANON_PERF_RECORD_COMPRESSED2)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, r->doff_, rec, "compressed record inside compressed data");
    rec->from_compressed = 1;
    r->dpos_ += total;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perf_reader_next(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                    jitanon_error *err)
{
    jitanon_result res;
    JITANON_ASSERT(r && rec);
    if (!r->mode) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "reader not initialised");
    for (;;) {
        if (r->done_) return JITANON_END;
        res = jitanon__pd_next_inflated(r, rec, err);
        if (res != JITANON_AGAIN) return res;
        res = jitanon__pd_next_raw(r, rec, err);
        if (res == JITANON_END) {
            r->done_ = 1;
            if (r->dbuf_.size > r->dpos_)
                return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, r->doff_, "decompressed data ends inside a record");
        }
        if (res != JITANON_OK) return res;
        if (rec->type != JITANON_PERF_RECORD_COMPRESSED && rec->type != JITANON_PERF_RECORD_COMPRESSED2) return JITANON_OK;
        if ((res = jitanon__pd_inflate(r, rec, err)) != JITANON_OK) return res;
    }
}

/* -- feature sections -------------------------------------------------------------------- */

JITANON__PRIVATE size_t jitanon__pd_feat_count(const uint64_t bits[4])
{
    return jitanon__popcount64(bits[0]) + jitanon__popcount64(bits[1]) + jitanon__popcount64(bits[2]) +
           jitanon__popcount64(bits[3]);
}

/* Reads the table at data end: one {offset, size} per set bit, in bit order. */
JITANON__PRIVATE jitanon_result jitanon__pd_feat_table(jitanon_perf_reader *r, size_t n, uint64_t *total,
                                                      jitanon_error *err)
{
    uint8_t e[16];
    unsigned bit;
    size_t i = 0;
    uint64_t at = r->data_offset + r->data_size, end;
    void *mem;
    jitanon_result res = jitanon__pd_alloc(r, (uint64_t)n * sizeof *r->feats_, at, &mem, err);
    if (res != JITANON_OK) return res;
    r->feats_ = (jitanon__perf_feat *)mem;
    r->feat_count_ = n;
    memset(r->feats_, 0, n * sizeof *r->feats_);
    *total = 0;
    for (bit = 0; bit < JITANON_PERF_FEAT_BITS; bit++) {
        jitanon__perf_feat *f = &r->feats_[i];
        if (!(r->features[bit / 64] >> (bit % 64) & 1)) continue;
        if ((res = jitanon__pd_read_at(r, at + 16 * i, e, 16, err)) != JITANON_OK) return res;
        f->bit = bit;
        f->offset = jitanon__rd64(e, r->big_endian);
        f->size = jitanon__rd64(e + 8, r->big_endian);
        i++;
        if (!jitanon__add_u64(f->offset, f->size, &end) || f->size > r->max_header_bytes_ ||
            !jitanon__add_u64(*total, f->size, total))
            return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, at + 16 * (i - 1), "bad feature %u section", bit);
    }
    return JITANON_OK;
}

/* Index of the not-yet-loaded section with the lowest offset: a forward-only input can
   then read them all in one pass. */
JITANON__PRIVATE size_t jitanon__pd_next_feat(const jitanon_perf_reader *r, const uint8_t *done)
{
    size_t i, best = r->feat_count_;
    for (i = 0; i < r->feat_count_; i++)
        if (!done[i] && (best == r->feat_count_ || r->feats_[i].offset < r->feats_[best].offset)) best = i;
    return best;
}

JITANON__PRIVATE jitanon_result jitanon__pd_feat_payloads(jitanon_perf_reader *r, uint64_t total, jitanon_error *err)
{
    uint8_t done[JITANON_PERF_FEAT_BITS];
    size_t k, pos = 0;
    void *mem;
    jitanon_result res = jitanon__pd_alloc(r, total, r->data_offset + r->data_size, &mem, err);
    if (res != JITANON_OK) return res;
    r->feat_mem_ = (uint8_t *)mem;
    r->feat_mem_size_ = (size_t)total;
    memset(done, 0, sizeof done);
    for (k = 0; k < r->feat_count_; k++) {
        size_t i = jitanon__pd_next_feat(r, done);
        jitanon__perf_feat *f = &r->feats_[i];
        res = jitanon__pd_read_at(r, f->offset, r->feat_mem_ + pos, (size_t)f->size, err);
        if (res != JITANON_OK) return res;
        done[i] = 1;
        f->mem_off = pos;
        pos += (size_t)f->size;
    }
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perf_reader_load_features(jitanon_perf_reader *r, jitanon_error *err)
{
    uint64_t saved = r->buf_off_, total = 0;
    size_t n = jitanon__pd_feat_count(r->features);
    jitanon_result res;
    jitanon__clear_error(err);
    if (r->mode != JITANON_PERF_FILE || r->features_loaded) return JITANON_OK;
    if (r->feats_) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, saved, "an earlier load failed");
    if (!n) {
        r->features_loaded = 1;
        return JITANON_OK;
    }
    if (!r->seek_fn_ && !r->done_)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, saved,
                             "feature sections follow the data; without a seek callback load them after the last record");
    res = jitanon__pd_feat_table(r, n, &total, err);
    if (res == JITANON_OK) res = jitanon__pd_feat_payloads(r, total, err);
    if (res == JITANON_OK && !r->done_) res = jitanon__pd_goto(r, saved, err);
    if (res == JITANON_OK) r->features_loaded = 1;
    return res;
}

JITANON_API int jitanon_perf_reader_feature(const jitanon_perf_reader *r, unsigned bit, jitanon_bytes *out)
{
    size_t i;
    for (i = 0; r->features_loaded && i < r->feat_count_; i++) {
        if (r->feats_[i].bit != bit) continue;
        out->data = r->feat_mem_ + r->feats_[i].mem_off;
        out->size = (size_t)r->feats_[i].size;
        return 1;
    }
    return 0;
}

JITANON_API void jitanon_perf_reader_free(jitanon_perf_reader *r)
{
    size_t i;
    const jitanon_allocator *a;
    if (!r) return;
    a = &r->allocator_;
    for (i = 0; i < r->attr_count; i++) {
        jitanon__free(a, (void *)(uintptr_t)r->attrs[i].raw.data, r->attrs[i].raw.size);
        jitanon__free(a, (void *)(uintptr_t)r->attrs[i].ids, r->attrs[i].id_count * 8);
    }
    jitanon__free(a, r->attrs, r->attr_cap_ * sizeof *r->attrs);
    jitanon__free(a, r->idmap_, r->idmap_cap_ * sizeof *r->idmap_);
    jitanon__free(a, r->feats_, r->feat_count_ * sizeof *r->feats_);
    jitanon__free(a, r->feat_mem_, r->feat_mem_size_);
    jitanon__free(a, r->buf_, r->buf_cap_);
    jitanon_membuf_free(&r->dbuf_);
#ifndef JITANON_NO_STDIO
    if (r->file_ && r->file_ != (void *)stdin) fclose((FILE *)r->file_);
#endif
    memset(r, 0, sizeof *r);
}

#ifndef JITANON_NO_STDIO
JITANON__PRIVATE size_t jitanon__pd_fread(void *user, void *dst, size_t n)
{
    FILE *f = (FILE *)user;
    size_t got = fread(dst, 1, n, f);
    return got == 0 && ferror(f) ? SIZE_MAX : got;
}

JITANON__PRIVATE int jitanon__pd_fseek(void *user, uint64_t off)
{
    if (off > (uint64_t)(~0ul >> 1)) return 1; /* beyond what fseek's long can say */
    return fseek((FILE *)user, (long)off, SEEK_SET) != 0;
}

JITANON_API jitanon_result jitanon_perf_reader_open(jitanon_perf_reader *r, const char *path,
                                                    const jitanon_perf_opts *opts, jitanon_error *err)
{
    int std_in = strcmp(path, "-") == 0;
    FILE *f = std_in ? stdin : fopen(path, "rb");
    jitanon_result res;
    if (!f) {
        memset(r, 0, sizeof *r);
        return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot open %s", path);
    }
    /* stdin may be a pipe: read it forward only. */
    res = jitanon_perf_reader_init(r, jitanon__pd_fread, std_in ? NULL : jitanon__pd_fseek, f, opts, err);
    r->file_ = f;
    return res;
}
#endif

/* -- perf.data writer -------------------------------------------------------------------- */

JITANON__PRIVATE jitanon_result jitanon__pw_put(jitanon_perf_writer *w, const void *data, size_t n, jitanon_error *err)
{
    return n ? jitanon__sink_put(w->sink_, data, n, &w->bytes_written, err) : JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pw_zeros(jitanon_perf_writer *w, uint64_t n, jitanon_error *err)
{
    static const uint8_t zero[64] = {0};
    jitanon_result res = JITANON_OK;
    while (n && res == JITANON_OK) {
        size_t k = n < sizeof zero ? (size_t)n : sizeof zero;
        res = jitanon__pw_put(w, zero, k, err);
        n -= k;
    }
    return res;
}

/* Writes u64 values in the writer's byte order, 32 per sink call. */
JITANON__PRIVATE jitanon_result jitanon__pw_u64s(jitanon_perf_writer *w, const uint64_t *v, size_t n, jitanon_error *err)
{
    uint8_t b[256];
    jitanon_result res = JITANON_OK;
    while (n && res == JITANON_OK) {
        size_t i, k = n < 32 ? n : 32;
        for (i = 0; i < k; i++) jitanon__wr64(b + 8 * i, v[i], w->big_endian);
        res = jitanon__pw_put(w, b, 8 * k, err);
        v += k;
        n -= k;
    }
    return res;
}

JITANON__PRIVATE void jitanon__pw_hdr(uint8_t *p, uint32_t type, uint16_t misc, size_t size, int big)
{
    jitanon__wr32(p, type, big);
    jitanon__wr16(p + 4, misc, big);
    jitanon__wr16(p + 6, size, big);
}

JITANON_API jitanon_result jitanon_perf_writer_init(jitanon_perf_writer *w, jitanon_perf_mode mode, int big_endian,
                                                    jitanon_sink sink, jitanon_pwrite_fn pwrite_fn,
                                                    const jitanon_perf_opts *opts, jitanon_error *err)
{
    uint8_t h[16];
    JITANON_ASSERT(w);
    memset(w, 0, sizeof *w);
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_))
        return JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_perf_opts not zero-initialised");
    if ((mode != JITANON_PERF_FILE && mode != JITANON_PERF_PIPE) || !sink.write_fn)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "bad mode or sink");
    if (mode == JITANON_PERF_FILE && !pwrite_fn)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "file mode needs pwrite_fn: the header is written last");
    w->mode = mode;
    w->big_endian = big_endian != 0;
    w->sink_ = sink;
    w->pwrite_fn_ = pwrite_fn;
    if (opts) w->allocator_ = opts->allocator;
    w->max_header_bytes_ = opts && opts->max_header_bytes ? opts->max_header_bytes : JITANON__PERF_DEFAULT_CAP;
    if (mode == JITANON_PERF_FILE) return JITANON_OK;
    jitanon__wr64(h, JITANON__PERF_MAGIC, w->big_endian);
    jitanon__wr64(h + 8, JITANON__PERF_PIPE_HEADER, w->big_endian);
    return jitanon__pw_put(w, h, sizeof h, err);
}

JITANON__PRIVATE jitanon_result jitanon__pw_usable(const jitanon_perf_writer *w, jitanon_error *err)
{
    if (!w->mode || w->finished_)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "writer not initialised or finished");
    return JITANON_OK;
}

/* Pipe mode: {header, attr, ids}; the size must fit the u16 header.size. */
JITANON__PRIVATE jitanon_result jitanon__pw_header_attr(jitanon_perf_writer *w, const jitanon_perf_attr *a,
                                                       jitanon_error *err)
{
    uint8_t h[8];
    size_t size;
    jitanon_result res;
    if (a->id_count > JITANON__PERF_MAX_REC / 8 || (size = 8 + a->raw.size + 8 * a->id_count) > JITANON__PERF_MAX_REC)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written,
                             "attr with %U ids does not fit one HEADER_ATTR record", (uint64_t)a->id_count);
    jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_ATTR, 0, size, w->big_endian);
    res = jitanon__pw_put(w, h, 8, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, a->raw.data, a->raw.size, err);
    if (res == JITANON_OK) res = jitanon__pw_u64s(w, a->ids, a->id_count, err);
    if (res == JITANON_OK) w->records++;
    return res;
}

/* Copies n bytes into writer-owned memory, charged against max_header_bytes. */
JITANON__PRIVATE jitanon_result jitanon__pw_dup(jitanon_perf_writer *w, const void *src, size_t n, void **out,
                                               jitanon_error *err)
{
    jitanon_result res = jitanon__pd_charge(&w->header_bytes_, w->max_header_bytes_, n, w->bytes_written, err);
    *out = NULL;
    if (res != JITANON_OK) return res;
    *out = jitanon__malloc(&w->allocator_, n);
    if (!*out) return JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot copy %U bytes", (uint64_t)n);
    if (n) memcpy(*out, src, n);
    return JITANON_OK;
}

/* File mode: keep a copy until the header sections are written. */
JITANON__PRIVATE jitanon_result jitanon__pw_keep_attr(jitanon_perf_writer *w, const jitanon_perf_attr *a,
                                                     jitanon_error *err)
{
    void *raw = NULL, *ids = NULL;
    jitanon_perf_attr *c;
    jitanon_result res = JITANON_OK;
    size_t id_bytes;
    if (!jitanon__mul_size(a->id_count, 8, &id_bytes))
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "too many ids");
    if (!jitanon__grow(&w->allocator_, (void **)&w->attrs_, &w->attr_cap_, w->attr_count_ + 1, sizeof *w->attrs_))
        res = JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot grow the attr table");
    if (res == JITANON_OK) res = jitanon__pw_dup(w, a->raw.data, a->raw.size, &raw, err);
    if (res == JITANON_OK) res = jitanon__pw_dup(w, a->ids, id_bytes, &ids, err);
    if (res != JITANON_OK) {
        jitanon__free(&w->allocator_, raw, a->raw.size);
        return res;
    }
    c = &w->attrs_[w->attr_count_++];
    *c = *a;
    c->raw.data = (const uint8_t *)raw;
    c->ids = (const uint64_t *)ids;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perf_writer_add_attr(jitanon_perf_writer *w, const jitanon_perf_attr *attr,
                                                        jitanon_error *err)
{
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    if (!attr || attr->raw.size < JITANON__PERF_ATTR_VER0 || attr->raw.size > JITANON__PERF_MAX_REC ||
        (attr->id_count && !attr->ids))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "attr raw must hold 64..65535 bytes");
    if (w->mode == JITANON_PERF_PIPE) return jitanon__pw_header_attr(w, attr, err);
    if (w->started_)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, w->bytes_written,
                             "file mode: an attr arrived after the first record");
    return jitanon__pw_keep_attr(w, attr, err);
}

JITANON__PRIVATE jitanon_result jitanon__pw_keep_feature(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                        size_t size, jitanon_error *err)
{
    void *copy;
    size_t i;
    jitanon_result res;
    for (i = 0; i < w->feat_count_; i++)
        if (w->feats_[i].bit == bit)
            return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "feature %u added twice", bit);
    if (!jitanon__grow(&w->allocator_, (void **)&w->feats_, &w->feat_cap_, w->feat_count_ + 1, sizeof *w->feats_))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot grow the feature table");
    if ((res = jitanon__pw_dup(w, data, size, &copy, err)) != JITANON_OK) return res;
    w->feats_[w->feat_count_].bit = bit;
    w->feats_[w->feat_count_].data.data = (const uint8_t *)copy;
    w->feats_[w->feat_count_++].data.size = size;
    return JITANON_OK;
}

/* Pipe mode: a 16-byte HEADER_TRACING_DATA record, then the data padded to 8 bytes. */
JITANON__PRIVATE jitanon_result jitanon__pw_tracing(jitanon_perf_writer *w, const void *data, size_t size,
                                                   jitanon_error *err)
{
    uint8_t h[16];
    uint64_t padded = ((uint64_t)size + 7) & ~(uint64_t)7;
    jitanon_result res;
    if (padded > UINT32_MAX)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "tracing data too large for a u32 size");
    memset(h, 0, sizeof h);
    jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_TRACING_DATA, 0, sizeof h, w->big_endian);
    jitanon__wr32(h + 8, padded, w->big_endian);
    res = jitanon__pw_put(w, h, sizeof h, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, data, size, err);
    if (res == JITANON_OK) res = jitanon__pw_zeros(w, padded - size, err);
    if (res == JITANON_OK) w->records++;
    return res;
}

/* Pipe mode: the BUILD_ID section is a run of build-id entries, each shaped like a
   HEADER_BUILD_ID record except for the type. */
JITANON__PRIVATE jitanon_result jitanon__pw_build_ids(jitanon_perf_writer *w, const uint8_t *p, size_t n,
                                                     jitanon_error *err)
{
    jitanon_result res = JITANON_OK;
    while (n >= 8 && res == JITANON_OK) {
        uint8_t h[8];
        uint16_t size = jitanon__rd16(p + 6, w->big_endian);
        if (size < 8 || size > n) {
            w->features_skipped++; /* a malformed section: stop rather than emit garbage */
            break;
        }
        jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_BUILD_ID, jitanon__rd16(p + 4, w->big_endian), size, w->big_endian);
        res = jitanon__pw_put(w, h, 8, err);
        if (res == JITANON_OK) res = jitanon__pw_put(w, p + 8, (size_t)size - 8, err);
        if (res == JITANON_OK) w->records++;
        p += size;
        n -= size;
    }
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__pw_feature_record(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                          size_t size, jitanon_error *err)
{
    uint8_t h[16];
    jitanon_result res;
    if (size > JITANON__PERF_MAX_REC - 16) {
        w->features_skipped++; /* header.size is a u16: perf cannot carry it in a pipe either */
        return JITANON_OK;
    }
    /* Not padded: the payload size is header.size - 16, as perf record writes it. */
    jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_FEATURE, 0, 16 + size, w->big_endian);
    jitanon__wr64(h + 8, bit, w->big_endian);
    res = jitanon__pw_put(w, h, sizeof h, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, data, size, err);
    if (res == JITANON_OK) w->records++;
    return res;
}

JITANON_API jitanon_result jitanon_perf_writer_add_feature(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                           size_t size, jitanon_error *err)
{
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    if (bit == 0 || bit >= JITANON_PERF_FEAT_BITS || (!data && size))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "bad feature %u", bit);
    if (w->mode == JITANON_PERF_FILE) return jitanon__pw_keep_feature(w, bit, data, size, err);
    if (bit == JITANON_PERF_FEAT_TRACING_DATA) return jitanon__pw_tracing(w, data, size, err);
    if (bit == JITANON_PERF_FEAT_BUILD_ID) return jitanon__pw_build_ids(w, (const uint8_t *)data, size, err);
    return jitanon__pw_feature_record(w, bit, data, size, err);
}

/* One attrs-section entry: the attr padded to the common size (whose size field then
   says so), then {offset, size} of its id array. */
JITANON__PRIVATE jitanon_result jitanon__pw_attr_entry(jitanon_perf_writer *w, const jitanon_perf_attr *a,
                                                      uint64_t asz, uint64_t ids_at, jitanon_error *err)
{
    uint8_t b[16];
    jitanon_result res = jitanon__pw_put(w, a->raw.data, 4, err);
    jitanon__wr32(b, asz, w->big_endian);
    if (res == JITANON_OK) res = jitanon__pw_put(w, a->raw.size < asz ? b : a->raw.data + 4, 4, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, a->raw.data + 8, a->raw.size - 8, err);
    if (res == JITANON_OK) res = jitanon__pw_zeros(w, asz - a->raw.size, err);
    jitanon__wr64(b, ids_at, w->big_endian);
    jitanon__wr64(b + 8, (uint64_t)a->id_count * 8, w->big_endian);
    if (res == JITANON_OK) res = jitanon__pw_put(w, b, 16, err);
    return res;
}

/* File mode, before the first record: header placeholder, id arrays, attrs. */
JITANON__PRIVATE jitanon_result jitanon__pw_begin(jitanon_perf_writer *w, jitanon_error *err)
{
    uint64_t asz = JITANON__PERF_ATTR_VER0, at = JITANON__PERF_FILE_HEADER;
    size_t i;
    jitanon_result res;
    for (i = 0; i < w->attr_count_; i++)
        if (w->attrs_[i].raw.size > asz) asz = w->attrs_[i].raw.size;
    w->attr_size_ = asz + 16;
    w->started_ = 1;
    res = jitanon__pw_zeros(w, JITANON__PERF_FILE_HEADER, err);
    for (i = 0; res == JITANON_OK && i < w->attr_count_; i++)
        res = jitanon__pw_u64s(w, w->attrs_[i].ids, w->attrs_[i].id_count, err);
    w->attrs_offset_ = w->bytes_written;
    for (i = 0; res == JITANON_OK && i < w->attr_count_; i++) {
        res = jitanon__pw_attr_entry(w, &w->attrs_[i], asz, at, err);
        at += (uint64_t)w->attrs_[i].id_count * 8;
    }
    w->data_offset = w->bytes_written;
    return res;
}

JITANON_API jitanon_result jitanon_perf_writer_write(jitanon_perf_writer *w, const void *record, size_t size,
                                                     jitanon_error *err)
{
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    if (!record || size < 8)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "record below 8 bytes");
    if (w->mode == JITANON_PERF_FILE && !w->started_ && (res = jitanon__pw_begin(w, err)) != JITANON_OK) return res;
    res = jitanon__pw_put(w, record, size, err);
    if (res == JITANON_OK) w->records++;
    return res;
}

JITANON__PRIVATE void jitanon__pw_sort_feats(jitanon_perf_feature *f, size_t n)
{
    size_t i, j;
    for (i = 1; i < n; i++) { /* at most 255 entries */
        jitanon_perf_feature t = f[i];
        for (j = i; j > 0 && f[j - 1].bit > t.bit; j--) f[j] = f[j - 1];
        f[j] = t;
    }
}

JITANON__PRIVATE jitanon_result jitanon__pw_features(jitanon_perf_writer *w, jitanon_error *err)
{
    uint64_t at = w->bytes_written + 16 * (uint64_t)w->feat_count_;
    size_t i;
    jitanon_result res = JITANON_OK;
    jitanon__pw_sort_feats(w->feats_, w->feat_count_);
    for (i = 0; res == JITANON_OK && i < w->feat_count_; i++) {
        uint8_t e[16];
        jitanon__wr64(e, at, w->big_endian);
        jitanon__wr64(e + 8, w->feats_[i].data.size, w->big_endian);
        res = jitanon__pw_put(w, e, 16, err);
        at += w->feats_[i].data.size;
    }
    for (i = 0; res == JITANON_OK && i < w->feat_count_; i++)
        res = jitanon__pw_put(w, w->feats_[i].data.data, w->feats_[i].data.size, err);
    return res;
}

JITANON__PRIVATE void jitanon__pw_file_header(const jitanon_perf_writer *w, uint8_t *h)
{
    size_t i;
    int big = w->big_endian;
    memset(h, 0, JITANON__PERF_FILE_HEADER);
    jitanon__wr64(h, JITANON__PERF_MAGIC, big);
    jitanon__wr64(h + 8, JITANON__PERF_FILE_HEADER, big);
    jitanon__wr64(h + 16, w->attr_size_, big);
    jitanon__wr64(h + 24, w->attrs_offset_, big);
    jitanon__wr64(h + 32, w->attr_size_ * w->attr_count_, big);
    jitanon__wr64(h + 40, w->data_offset, big);
    jitanon__wr64(h + 48, w->data_size, big);
    for (i = 0; i < w->feat_count_; i++) { /* the bitmap is four u64 words in file order */
        uint8_t *word = h + 72 + 8 * (w->feats_[i].bit / 64);
        jitanon__wr64(word, jitanon__rd64(word, big) | 1ull << (w->feats_[i].bit % 64), big);
    }
}

JITANON_API jitanon_result jitanon_perf_writer_finish(jitanon_perf_writer *w, jitanon_error *err)
{
    uint8_t h[JITANON__PERF_FILE_HEADER];
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    w->finished_ = 1;
    if (w->mode == JITANON_PERF_PIPE) return JITANON_OK;
    if (!w->started_ && (res = jitanon__pw_begin(w, err)) != JITANON_OK) return res;
    w->data_size = w->bytes_written - w->data_offset;
    if ((res = jitanon__pw_features(w, err)) != JITANON_OK) return res;
    jitanon__pw_file_header(w, h);
    if (w->pwrite_fn_(w->sink_.user, h, sizeof h, 0))
        return JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "cannot write the file header at offset 0");
    return JITANON_OK;
}

JITANON_API void jitanon_perf_writer_free(jitanon_perf_writer *w)
{
    size_t i;
    const jitanon_allocator *a;
    if (!w) return;
    a = &w->allocator_;
    for (i = 0; i < w->attr_count_; i++) {
        jitanon__free(a, (void *)(uintptr_t)w->attrs_[i].raw.data, w->attrs_[i].raw.size);
        jitanon__free(a, (void *)(uintptr_t)w->attrs_[i].ids, w->attrs_[i].id_count * 8);
    }
    for (i = 0; i < w->feat_count_; i++) jitanon__free(a, (void *)(uintptr_t)w->feats_[i].data.data, w->feats_[i].data.size);
    jitanon__free(a, w->attrs_, w->attr_cap_ * sizeof *w->attrs_);
    jitanon__free(a, w->feats_, w->feat_cap_ * sizeof *w->feats_);
    memset(w, 0, sizeof *w);
}

/* -- copy path ------------------------------------------------------------------------------ */

/* With a decompressor the output holds plain records, so it must not claim compression. */
JITANON__PRIVATE int jitanon__pc_keep_feature(const jitanon_perf_reader *r, uint64_t bit)
{
    return !(r->decompress_ && bit == JITANON_PERF_FEAT_COMPRESSED);
}

JITANON__PRIVATE jitanon_result jitanon__pc_features(jitanon_perf_reader *r, jitanon_perf_writer *w, jitanon_error *err)
{
    size_t i;
    jitanon_result res = jitanon_perf_reader_load_features(r, err);
    for (i = 0; res == JITANON_OK && i < r->feat_count_; i++) {
        jitanon_bytes b;
        if (!jitanon__pc_keep_feature(r, r->feats_[i].bit) || !jitanon_perf_reader_feature(r, r->feats_[i].bit, &b))
            continue;
        res = jitanon_perf_writer_add_feature(w, r->feats_[i].bit, b.data, b.size, err);
    }
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__pc_record(jitanon_perf_reader *r, jitanon_perf_writer *w,
                                                  const jitanon_perf_record *rec, jitanon_error *err)
{
    int to_file = r->mode == JITANON_PERF_PIPE && w->mode == JITANON_PERF_FILE;
    if (rec->type == JITANON_PERF_RECORD_HEADER_ATTR && to_file)
        return jitanon_perf_writer_add_attr(w, &r->attrs[rec->attr_index], err);
    if (rec->type == JITANON_PERF_RECORD_HEADER_FEATURE) {
        uint64_t bit = rec->feature.feat_id;
        if (!jitanon__pc_keep_feature(r, bit)) return JITANON_OK;
        if (to_file && bit > 0 && bit < JITANON_PERF_FEAT_BITS)
            return jitanon_perf_writer_add_feature(w, (unsigned)bit, rec->feature.data.data, rec->feature.data.size, err);
    }
    return jitanon_perf_writer_write(w, rec->raw.data, rec->raw.size, err);
}

JITANON_API jitanon_result jitanon_perf_copy(jitanon_perf_reader *r, jitanon_perf_writer *w, jitanon_error *err)
{
    jitanon_perf_record rec;
    jitanon_result res = JITANON_OK;
    size_t i;
    int feats_done = 0;
    JITANON_ASSERT(r && w);
    jitanon__clear_error(err);
    for (i = 0; res == JITANON_OK && r->mode == JITANON_PERF_FILE && i < r->attr_count; i++)
        res = jitanon_perf_writer_add_attr(w, &r->attrs[i], err);
    /* A pipe wants features before the records; a file takes them at the end anyway. */
    if (res == JITANON_OK && r->mode == JITANON_PERF_FILE && r->seek_fn_) {
        res = jitanon__pc_features(r, w, err);
        feats_done = 1;
    }
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(r, &rec, err)) == JITANON_OK)
        res = jitanon__pc_record(r, w, &rec, err);
    if (res != JITANON_END) return res;
    jitanon__clear_error(err);
    if (r->mode == JITANON_PERF_FILE && !feats_done && (res = jitanon__pc_features(r, w, err)) != JITANON_OK) return res;
    return jitanon_perf_writer_finish(w, err);
}

/* -- synthesized and rewritten MMAP records ----------------------------------------------- */

JITANON__PRIVATE uint8_t *jitanon__pw_put64(uint8_t *p, uint64_t v, int big)
{
    jitanon__wr64(p, v, big);
    return p + 8;
}

/* A complete sample_id trailer in perf's field order; every slot the attr asks for is filled. */
JITANON__PRIVATE void jitanon__pw_trailer(uint8_t *p, const jitanon_perf_attr *a, uint32_t pid, uint32_t tid,
                                         uint64_t time, uint32_t cpu, int big)
{
    uint64_t st = a->sample_type, id = a->id_count ? a->ids[0] : 0;
    if (st & JITANON_PERF_SAMPLE_TID) {
        jitanon__wr32(p, pid, big);
        jitanon__wr32(p + 4, tid, big);
        p += 8;
    }
    if (st & JITANON_PERF_SAMPLE_TIME) p = jitanon__pw_put64(p, time, big);
    if (st & JITANON_PERF_SAMPLE_ID) p = jitanon__pw_put64(p, id, big);
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) p = jitanon__pw_put64(p, id, big);
    if (st & JITANON_PERF_SAMPLE_CPU) {
        jitanon__wr32(p, cpu, big);
        jitanon__wr32(p + 4, 0, big);
        p += 8;
    }
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) jitanon__wr64(p, id, big);
}

JITANON__PRIVATE jitanon_result jitanon__pw_room(size_t need, void *buf, size_t cap, size_t *out_size, jitanon_error *err)
{
    *out_size = need;
    if (!buf || need > cap)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "record needs %U bytes, buffer has %U", (uint64_t)need,
                             (uint64_t)cap);
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__pw_mmap2_body(uint8_t *p, const jitanon_perf_mmap *m, int big)
{
    jitanon__wr32(p + 8, m->pid, big);
    jitanon__wr32(p + 12, m->tid, big);
    jitanon__wr64(p + 16, m->start, big);
    jitanon__wr64(p + 24, m->len, big);
    jitanon__wr64(p + 32, m->pgoff, big);
    if (m->has_build_id) {
        p[40] = m->build_id_size <= 20 ? m->build_id_size : 20;
        if (m->build_id) memcpy(p + 44, m->build_id, p[40]);
    } else {
        jitanon__wr32(p + 40, m->maj, big);
        jitanon__wr32(p + 44, m->min, big);
        jitanon__wr64(p + 48, m->ino, big);
        jitanon__wr64(p + 56, m->ino_generation, big);
    }
    jitanon__wr32(p + 64, m->prot, big);
    jitanon__wr32(p + 68, m->flags, big);
    if (m->filename.length) memcpy(p + JITANON__PERF_MMAP2_FIXED, m->filename.data, m->filename.length);
}

JITANON_API jitanon_result jitanon_perf_encode_mmap2(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_mmap *m, uint16_t misc, uint64_t time,
                                                     uint32_t cpu, const jitanon_perf_attr *attr, int big_endian,
                                                     jitanon_error *err)
{
    size_t trail = attr && attr->sample_id_all ? attr->id_hdr_size : 0, name, total;
    uint8_t *p = (uint8_t *)buf;
    jitanon_result res;
    JITANON_ASSERT(m && out_size);
    jitanon__clear_error(err);
    if (m->filename.length > JITANON__PERF_MAX_REC || (m->filename.length && !m->filename.data))
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "file name too long for an MMAP2 record");
    name = (m->filename.length + 1 + 7) & ~(size_t)7; /* NUL, then zero padding to 8 */
    total = JITANON__PERF_MMAP2_FIXED + name + trail;
    if (total > JITANON__PERF_MAX_REC) return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "MMAP2 record over 65535 bytes");
    if ((res = jitanon__pw_room(total, buf, cap, out_size, err)) != JITANON_OK) return res;
    memset(p, 0, total);
    misc = (uint16_t)(m->has_build_id ? misc | JITANON_PERF_MISC_MMAP_BUILD_ID : misc & ~JITANON_PERF_MISC_MMAP_BUILD_ID);
    jitanon__pw_hdr(p, JITANON_PERF_RECORD_MMAP2, misc, total, big_endian);
    jitanon__pw_mmap2_body(p, m, big_endian);
    if (trail) jitanon__pw_trailer(p + JITANON__PERF_MMAP2_FIXED + name, attr, m->pid, m->tid, time, cpu, big_endian);
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perf_rewrite_mmap(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_record *rec, uint64_t start, uint64_t len,
                                                     uint64_t pgoff, int big_endian, jitanon_error *err)
{
    uint8_t *p = (uint8_t *)buf;
    jitanon_result res;
    JITANON_ASSERT(rec && out_size);
    jitanon__clear_error(err);
    if ((rec->type != JITANON_PERF_RECORD_MMAP && rec->type != JITANON_PERF_RECORD_MMAP2) ||
        rec->raw.size < JITANON__PERF_MMAP_FIXED)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, rec->offset, "not an MMAP or MMAP2 record");
    if ((res = jitanon__pw_room(rec->raw.size, buf, cap, out_size, err)) != JITANON_OK) return res;
    memcpy(p, rec->raw.data, rec->raw.size);
    /* start, len and pgoff sit at the same offsets in MMAP and MMAP2. */
    jitanon__wr64(p + 16, start, big_endian);
    jitanon__wr64(p + 24, len, big_endian);
    jitanon__wr64(p + 32, pgoff, big_endian);
    return JITANON_OK;
}

/* -- atomic output file ------------------------------------------------------------------- */

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
/* fsync is only declared when the build asks for POSIX (not under strict -std=c99). */
#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L
#define JITANON__HAS_FSYNC 1
#else
#define JITANON__HAS_FSYNC 0
#endif

JITANON__PRIVATE int jitanon__af_write_all(int fd, const void *data, size_t size)
{
    const uint8_t *p = (const uint8_t *)data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

JITANON__PRIVATE int jitanon__af_flush(jitanon_atomic_file *f)
{
    if (f->fd < 0 || f->failed || jitanon__af_write_all(f->fd, f->buf, f->buf_len)) f->failed = 1;
    f->buf_len = 0;
    return f->failed;
}

JITANON__PRIVATE int jitanon__af_write(void *file, const void *data, size_t size)
{
    jitanon_atomic_file *f = (jitanon_atomic_file *)file;
    if (size > f->buf_cap - f->buf_len && jitanon__af_flush(f)) return 1;
    if (size <= f->buf_cap - f->buf_len) {
        memcpy(f->buf + f->buf_len, data, size);
        f->buf_len += size;
        return f->failed;
    }
    if (f->fd < 0 || f->failed || jitanon__af_write_all(f->fd, data, size)) f->failed = 1;
    return f->failed;
}

JITANON_API int jitanon_atomic_pwrite(void *file, const void *data, size_t size, uint64_t offset)
{
    jitanon_atomic_file *f = (jitanon_atomic_file *)file;
    off_t end, at = (off_t)offset;
    /* lseek + write rather than pwrite, which strict C99 builds do not declare. */
    if (jitanon__af_flush(f) || at < 0 || (uint64_t)at != offset || (end = lseek(f->fd, 0, SEEK_CUR)) < 0 ||
        lseek(f->fd, at, SEEK_SET) != at || jitanon__af_write_all(f->fd, data, size) || lseek(f->fd, end, SEEK_SET) != end)
        f->failed = 1;
    return f->failed;
}

JITANON_API jitanon_sink jitanon_atomic_sink(jitanon_atomic_file *f)
{
    jitanon_sink s;
    s.write_fn = jitanon__af_write;
    s.user = f;
    return s;
}

JITANON__PRIVATE char *jitanon__af_strdup(const jitanon_allocator *a, const char *s, size_t extra, size_t *cap)
{
    size_t n = strlen(s);
    char *d;
    *cap = n + extra + 1;
    d = (char *)jitanon__malloc(a, *cap);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* The temporary file lives in the target's directory so that rename() cannot cross a
   file system: "<dir>/.<name>.<pid>-<k>.tmp". */
JITANON__PRIVATE jitanon_result jitanon__af_create(jitanon_atomic_file *f, jitanon_error *err)
{
    const char *slash = strrchr(f->path, '/');
    size_t dir = slash ? (size_t)(slash - f->path) + 1 : 0;
    unsigned k;
    for (k = 0; k < 100; k++) {
        memcpy(f->tmp_path, f->path, dir);
        jitanon__fmt(f->tmp_path + dir, f->tmp_cap_ - dir, ".%s.%u-%u.tmp", f->path + dir, (unsigned)getpid(), k);
        f->fd = open(f->tmp_path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (f->fd >= 0) return JITANON_OK;
        if (errno != EEXIST) break;
    }
    return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot create a temporary file next to %s", f->path);
}

JITANON_API jitanon_result jitanon_atomic_open(jitanon_atomic_file *f, const char *path,
                                               const jitanon_allocator *allocator, jitanon_error *err)
{
    jitanon_result res;
    JITANON_ASSERT(f && path);
    memset(f, 0, sizeof *f);
    f->fd = -1;
    jitanon__clear_error(err);
    if (allocator) f->allocator = *allocator;
    f->path = jitanon__af_strdup(&f->allocator, path, 0, &f->path_cap_);
    f->tmp_path = jitanon__af_strdup(&f->allocator, path, 32, &f->tmp_cap_);
    f->buf = (uint8_t *)jitanon__malloc(&f->allocator, JITANON__PERF_MIN_BUF);
    f->buf_cap = f->buf ? JITANON__PERF_MIN_BUF : 0;
    res = f->path && f->tmp_path && f->buf ? jitanon__af_create(f, err)
                                           : JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot copy the path");
    if (res != JITANON_OK) {
        /* Nothing was created; tmp_path may even hold the target's name: never unlink it. */
        jitanon__free(&f->allocator, f->tmp_path, f->tmp_cap_);
        f->tmp_path = NULL;
        jitanon_atomic_abort(f);
    }
    return res;
}

JITANON_API void jitanon_atomic_abort(jitanon_atomic_file *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->tmp_path) unlink(f->tmp_path);
    jitanon__free(&f->allocator, f->tmp_path, f->tmp_cap_);
    jitanon__free(&f->allocator, f->path, f->path_cap_);
    jitanon__free(&f->allocator, f->buf, f->buf_cap);
    f->tmp_path = f->path = NULL;
    f->buf = NULL;
    f->buf_len = f->buf_cap = 0;
}

JITANON_API jitanon_result jitanon_atomic_commit(jitanon_atomic_file *f, int do_fsync, jitanon_error *err)
{
    jitanon_result res = JITANON_OK;
    if (f->fd < 0 || jitanon__af_flush(f))
        res = JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "a write to the temporary file failed");
#if JITANON__HAS_FSYNC
    else if (do_fsync && fsync(f->fd)) res = JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "fsync failed");
#else
    else if (do_fsync) res = JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "fsync is not declared in this build");
#endif
    if (f->fd >= 0 && close(f->fd) && res == JITANON_OK) res = JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "close failed");
    f->fd = -1;
    if (res == JITANON_OK && rename(f->tmp_path, f->path))
        res = JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot rename the temporary file to %s", f->path);
    if (res == JITANON_OK) { /* renamed: nothing left to unlink */
        jitanon__free(&f->allocator, f->tmp_path, f->tmp_cap_);
        f->tmp_path = NULL;
    }
    jitanon_atomic_abort(f);
    return res;
}

JITANON__PRIVATE int jitanon__pc_stdout(void *user, const void *data, size_t size)
{
    (void)user;
    return fwrite(data, 1, size, stdout) != size;
}

/* What runs between an opened reader and a ready writer: the copy, or the injector. */
typedef jitanon_result (*jitanon__pump_fn)(void *ctx, jitanon_perf_reader *r, jitanon_perf_writer *w,
                                           jitanon_error *err);

JITANON__PRIVATE jitanon_result jitanon__pc_pump_copy(void *ctx, jitanon_perf_reader *r, jitanon_perf_writer *w,
                                                      jitanon_error *err)
{
    (void)ctx;
    return jitanon_perf_copy(r, w, err);
}

JITANON__PRIVATE jitanon_result jitanon__pc_to_stdout(jitanon_perf_reader *r, const jitanon_perf_opts *opts,
                                                     jitanon__pump_fn pump, void *ctx, jitanon_error *err)
{
    jitanon_perf_writer w;
    jitanon_sink s;
    jitanon_result res;
    s.write_fn = jitanon__pc_stdout;
    s.user = NULL;
    res = jitanon_perf_writer_init(&w, JITANON_PERF_PIPE, r->big_endian, s, NULL, opts, err);
    if (res == JITANON_OK) res = pump(ctx, r, &w, err);
    if (res == JITANON_OK && fflush(stdout)) res = JITANON__FAIL(err, JITANON_ERR_WRITE, w.bytes_written, "stdout");
    jitanon_perf_writer_free(&w);
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__pc_to_path(jitanon_perf_reader *r, const char *path, jitanon_perf_mode mode,
                                                   const jitanon_perf_opts *opts, jitanon__pump_fn pump, void *ctx,
                                                   jitanon_error *err)
{
    jitanon_atomic_file f;
    jitanon_perf_writer w;
    jitanon_result res = jitanon_atomic_open(&f, path, opts ? &opts->allocator : NULL, err);
    if (res != JITANON_OK) return res;
    memset(&w, 0, sizeof w);
    res = jitanon_perf_writer_init(&w, mode, r->big_endian, jitanon_atomic_sink(&f), jitanon_atomic_pwrite, opts, err);
    if (res == JITANON_OK) res = pump(ctx, r, &w, err);
    if (res == JITANON_OK) res = jitanon_atomic_commit(&f, 0, err);
    jitanon_atomic_abort(&f);
    jitanon_perf_writer_free(&w);
    return res;
}

/* Path ("-" = stdin) to path ("-" = stdout, pipe mode only), the output atomic. */
JITANON__PRIVATE jitanon_result jitanon__pc_run(const char *in_path, const char *out_path, int out_mode,
                                               const jitanon_perf_opts *opts, jitanon__pump_fn pump, void *ctx,
                                               jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_result res = jitanon_perf_reader_open(&r, in_path, opts, err);
    jitanon_perf_mode mode = out_mode == JITANON_PERF_FILE || out_mode == JITANON_PERF_PIPE ? (jitanon_perf_mode)out_mode : r.mode;
    int to_stdout = strcmp(out_path, "-") == 0;
    if (res == JITANON_OK && to_stdout && mode == JITANON_PERF_FILE)
        res = JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "stdout takes pipe mode only");
    if (res == JITANON_OK)
        res = to_stdout ? jitanon__pc_to_stdout(&r, opts, pump, ctx, err)
                        : jitanon__pc_to_path(&r, out_path, mode, opts, pump, ctx, err);
    jitanon_perf_reader_free(&r);
    return res;
}

JITANON_API jitanon_result jitanon_perf_copy_file(const char *in_path, const char *out_path, int out_mode,
                                                  const jitanon_perf_opts *opts, jitanon_error *err)
{
    return jitanon__pc_run(in_path, out_path, out_mode, opts, jitanon__pc_pump_copy, NULL, err);
}
#endif
