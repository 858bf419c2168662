/* libFuzzer harness: the zstd decoder ([zstd]).  The first byte picks what the rest is:

     even: a zstd stream.  jitanon_zstd_decompress (one shot) and the streaming decoder
           fed in odd-sized pieces (as the perf reader feeds it) must agree; with
           JT_LIBZSTD (the Makefile sets it when zstd.h is there; the header never needs
           libzstd) every input libzstd decodes must decode to the same bytes here.
     odd:  content.  libzstd compresses it the way perf record -z does (one stream, a
           flush after every chunk, level and chunk sizes from the first byte, frame
           left open or ended, checksum or not); the streaming decoder fed one flushed
           chunk at a time must give the content back.

   Without JT_LIBZSTD only the first half runs (no crash, one shot == streaming). */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>
#include <stdlib.h>
#ifdef JT_LIBZSTD
#include <zstd.h>
#endif

#define FZ_OUT_CAP ((size_t)8 << 20)

static void fz_fail(const char *what, const jitanon_error *err)
{
    char m[256];
    jitanon_format_error(m, sizeof m, err);
    fprintf(stderr, "fuzz_zstd: %s (%s)\n", what, m);
    abort();
}

/* The streaming decoder over data in pieces of 1..97 bytes; *out gets what it made. */
static jitanon_result fz_stream(const uint8_t *data, size_t size, int allow_open, jitanon_membuf *out, jitanon_error *err)
{
    jitanon__zstd *z;
    size_t pos = 0, step = 5;
    jitanon_result r = jitanon__zstd_create(NULL, UINT64_MAX, 1, &z, err);
    if (r != JITANON_OK) return r;
    while (r == JITANON_OK && pos < size) {
        size_t k = size - pos < step ? size - pos : step;
        r = jitanon__zstd_feed(z, data + pos, k, pos, out, err);
        pos += k;
        step = step * 7 % 97 + 1;
    }
    if (r == JITANON_OK) r = jitanon__zstd_end(z, size, err);
    if (r == JITANON_OK && !allow_open && z->unit != JITANON__ZS_MAGIC_U) r = JITANON_ERR_TRUNCATED;
    jitanon__zstd_destroy(z);
    return r;
}

static void fz_frames(const uint8_t *data, size_t size)
{
    jitanon_membuf one, st;
    jitanon_error err, serr;
    jitanon_result r, rs;
    memset(&one, 0, sizeof one);
    memset(&st, 0, sizeof st);
    one.max_size = st.max_size = FZ_OUT_CAP;
    r = jitanon_zstd_decompress(data, size, &one, UINT64_MAX, &err);
    if (r != JITANON_OK && r != JITANON_ERR_BAD_ZSTD && r != JITANON_ERR_TRUNCATED && r != JITANON_ERR_UNSUPPORTED &&
        r != JITANON_ERR_LIMIT && r != JITANON_ERR_NOMEM)
        fz_fail("unexpected result type", &err);
    if (r != JITANON_OK && err.offset > size) fz_fail("error offset past the input", &err);
    rs = fz_stream(data, size, 0, &st, &serr);
    /* the streaming decoder also refuses matches beyond the declared window */
    if (r == JITANON_OK && rs != JITANON_OK && !(rs == JITANON_ERR_BAD_ZSTD && strstr(serr.info, "bytes back")) &&
        rs != JITANON_ERR_LIMIT)
        fz_fail("one shot decoded, streaming failed", &serr);
    if (r == JITANON_OK && rs == JITANON_OK && (one.size != st.size || (one.size && memcmp(one.data, st.data, one.size))))
        fz_fail("one shot and streaming differ", &err);
    if (r != JITANON_OK && rs == JITANON_OK) fz_fail("streaming decoded, one shot failed", &err);
#ifdef JT_LIBZSTD
    {
        /* libzstd is the reference only for current frames: skip inputs holding a legacy
           (v0.x) frame, which libzstd may still read */
        size_t pos = 0, ref_n;
        int legacy = 0;
        void *ref;
        static void *ref_buf; /* one for the whole run: 8 MiB per input is slow under ASan */
        while (pos + 4 <= size) {
            uint32_t m = jitanon__rd32(data + pos, 0);
            size_t fs;
            if (m >= 0xFD2FB522u && m <= 0xFD2FB527u) legacy = 1;
            fs = ZSTD_findFrameCompressedSize(data + pos, size - pos);
            if (ZSTD_isError(fs) || !fs) break;
            pos += fs;
        }
        if (!ref_buf) ref_buf = malloc(FZ_OUT_CAP);
        ref = legacy ? NULL : ref_buf;
        if (ref) {
            ref_n = ZSTD_decompress(ref, FZ_OUT_CAP, data, size);
            /* Known differences: a bitstream read past its start (Huffman literals or
               sequences), or a Huffman stream without its end mark, is corrupt for RFC
               8878 and we refuse it; libzstd may decode it anyway, from the bytes in
               front of the stream (its output is then not the content of any frame).
               A compressed block decodes to at most 128 KiB (RFC 8878); libzstd 1.5.4
               decodes more when the output has room.  A sequence bitstream with bits
               left after its last sequence is corrupt for us; libzstd 1.5.4 may decode it
               (found by CI's fuzz pass). */
            if (!ZSTD_isError(ref_n) &&
                !(r == JITANON_ERR_BAD_ZSTD && (strstr(err.info, "read past its start") ||
                                                strstr(err.info, "Huffman stream has no end") ||
                                                strstr(err.info, "block decodes to more than") ||
                                                strstr(err.info, "bitstream longer than its")))) {
                if (r != JITANON_OK) fz_fail("libzstd decoded, we failed", &err);
                if (ref_n != one.size || (ref_n && memcmp(ref, one.data, ref_n))) fz_fail("libzstd and we differ", &err);
            } else if (r == JITANON_OK && getenv("FUZZ_VERBOSE")) {
                fprintf(stderr, "we decoded %zu bytes, libzstd: %s\n", one.size, ZSTD_getErrorName(ref_n));
            }
        }
    }
#endif
    jitanon_membuf_release(&one);
    jitanon_membuf_release(&st);
}

#ifdef JT_LIBZSTD
/* Compresses like perf record -z: one stream, flushed after every chunk; each flushed
   piece goes to the decoder as it comes, as COMPRESSED records do. */
static void fz_content(unsigned sel, const uint8_t *data, size_t size)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    jitanon__zstd *z;
    jitanon_membuf out;
    jitanon_error err;
    size_t pos = 0, chunk = 1 + (size_t)((sel >> 4) & 7) * 700, cap = ZSTD_compressBound(size) + 64, left;
    uint8_t *buf = (uint8_t *)malloc(cap);
    int end_frame = sel & 2, checksum = sel & 4;
    uint64_t off = 0;
    memset(&out, 0, sizeof out);
    if (!c || !buf) abort();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1 + (int)((sel >> 3) % 9));
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
    if (jitanon__zstd_create(NULL, 0, 1, &z, &err) != JITANON_OK) fz_fail("create", &err);
    do {
        size_t k = size - pos < chunk ? size - pos : chunk;
        int last = pos + k == size;
        ZSTD_inBuffer in = {data + pos, k, 0};
        ZSTD_outBuffer o = {buf, cap, 0};
        do {
            left = ZSTD_compressStream2(c, &o, &in, last && end_frame ? ZSTD_e_end : ZSTD_e_flush);
            if (ZSTD_isError(left)) abort();
        } while (left);
        if (jitanon__zstd_feed(z, buf, o.pos, off, &out, &err) != JITANON_OK) fz_fail("perf-like stream", &err);
        off += o.pos;
        pos += k;
    } while (pos < size);
    if (jitanon__zstd_end(z, off, &err) != JITANON_OK) fz_fail("perf-like stream end", &err);
    if (out.size != size || (size && memcmp(out.data, data, size))) fz_fail("perf-like stream decoded wrong", &err);
    jitanon__zstd_destroy(z);
    jitanon_membuf_release(&out);
    free(buf);
    ZSTD_freeCCtx(c);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
#ifdef JT_LIBZSTD
    if (data[0] & 1) {
        fz_content(data[0], data + 1, size - 1);
        return 0;
    }
#endif
    fz_frames(data + 1, size - 1);
    return 0;
}
