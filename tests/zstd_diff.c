/* Differential test of the zstd decoder ([zstd]) against libzstd, under ASan+UBSan.
   libzstd makes the frames (levels 1-19, with and without checksums, single- and
   multi-block, raw / RLE / compressed blocks, perf-like streams flushed chunk by chunk,
   dictionary frames) and is the reference for cut and bit-flipped frames.  Only this
   binary links -lzstd; without zstd.h it prints a SKIP line.  Prints PASS/FAIL lines. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>
#include <stdlib.h>

#ifndef JT_LIBZSTD
int main(void)
{
    printf("SKIP zstd differential: zstd.h not found (apt-get install libzstd-dev)\n");
    return 0;
}
#else
#define ZDICT_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zdict.h>

static int failures;

static void zd_result(int ok, const char *name, const char *detail)
{
    printf("%s zstd differential: %s%s%s\n", ok ? "PASS" : "FAIL", name, detail ? ": " : "", detail ? detail : "");
    if (!ok) failures++;
}

static uint8_t *zd_compress(const uint8_t *src, size_t n, int level, int checksum, size_t *out_n)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t cap = ZSTD_compressBound(n), r;
    uint8_t *dst = (uint8_t *)malloc(cap);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum);
    r = ZSTD_compress2(c, dst, cap, src, n);
    ZSTD_freeCCtx(c);
    if (ZSTD_isError(r)) {
        free(dst);
        return NULL;
    }
    *out_n = r;
    return dst;
}

/* Our one-shot decode equals src. */
static int zd_same(const uint8_t *frame, size_t n, const uint8_t *src, size_t src_n, jitanon_error *err)
{
    jitanon_membuf out;
    int ok;
    memset(&out, 0, sizeof out);
    ok = jitanon_zstd_decompress(frame, n, &out, 0, err) == JITANON_OK && out.size == src_n &&
         (!src_n || !memcmp(out.data, src, src_n));
    jitanon_membuf_release(&out);
    return ok;
}

/* Counts the block types of a one-frame stream (walks the block headers). */
static void zd_block_types(const uint8_t *f, size_t n, unsigned counts[4])
{
    unsigned fhd = f[4], fcs_flag = fhd >> 6, single = fhd >> 5 & 1;
    static const size_t did[4] = {0, 1, 2, 4};
    size_t at = 5 + (single ? 0 : 1) + did[fhd & 3] + (fcs_flag ? (size_t)1 << fcs_flag : single);
    while (at + 3 <= n) {
        uint32_t h = f[at] | (uint32_t)f[at + 1] << 8 | (uint32_t)f[at + 2] << 16;
        unsigned type = h >> 1 & 3;
        counts[type]++;
        at += 3 + (type == 1 ? 1 : h >> 3);
        if (h & 1) break;
    }
}

static uint8_t *zd_read(const char *path, size_t max, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b;
    if (!f) return NULL;
    b = (uint8_t *)malloc(max);
    *n = fread(b, 1, max, f);
    fclose(f);
    return b;
}

int main(void)
{
    enum { NIN = 6 };
    uint8_t *in[NIN];
    size_t in_n[NIN], i;
    const char *in_name[NIN] = {"text", "binary", "incompressible", "runs", "tiny", "long"};
    unsigned types[4] = {0, 0, 0, 0};
    char detail[400];
    uint32_t x = 12345;
    int level, ok;
    jitanon_error err;

    in[0] = zd_read("jitanon.h", 300000, &in_n[0]);
    in[1] = zd_read("build/jitanon-inject", 300000, &in_n[1]);
    if (!in[0] || !in[1]) {
        printf("SKIP zstd differential: run from the source tree after make all\n");
        return 0;
    }
    in_n[2] = 200000;
    in[2] = (uint8_t *)malloc(in_n[2]);
    for (i = 0; i < in_n[2]; i++) {
        x = x * 1103515245u + 12345u;
        in[2][i] = (uint8_t)(x >> 23);
    }
    in_n[3] = 400000;
    in[3] = (uint8_t *)malloc(in_n[3]);
    for (i = 0; i < in_n[3]; i++) in[3][i] = (uint8_t)(i / 150000 + (i % 150000 > 149000 ? i : 0));
    in_n[4] = 11;
    in[4] = (uint8_t *)malloc(16);
    memcpy(in[4], "hello world", 11);
    in_n[5] = 1200000; /* many blocks; references across them */
    in[5] = (uint8_t *)malloc(in_n[5]);
    for (i = 0; i < in_n[5]; i++) in[5][i] = in[0][(i * 7 + i / 5000) % in_n[0]] ^ (uint8_t)(i % 997 == 0);

    /* 1. every level, with and without a checksum, every input */
    ok = 1;
    detail[0] = 0;
    for (level = 1; level <= 19; level++) {
        int ck;
        for (ck = 0; ck < 2; ck++)
            for (i = 0; i < NIN; i++) {
                size_t fn;
                uint8_t *f;
                if (i == 5 && level > 6 && level != 19) continue; /* slow to make; 19 covers the rest */
                f = zd_compress(in[i], in_n[i], level, ck, &fn);
                if (!f) continue;
                zd_block_types(f, fn, types);
                if (!zd_same(f, fn, in[i], in_n[i], &err)) {
                    if (ok) snprintf(detail, sizeof detail, "level %d checksum %d %s: %s", level, ck, in_name[i], err.info);
                    ok = 0;
                }
                free(f);
            }
    }
    zd_result(ok, "levels 1-19 x checksum x 6 inputs", ok ? NULL : detail);
    snprintf(detail, sizeof detail, "raw %u, RLE %u, compressed %u blocks", types[0], types[1], types[2]);
    zd_result(types[0] && types[1] && types[2], "every block type decoded", detail);

    /* 2. perf-like: one stream, flushed after every chunk, never ended; the streaming
       decoder fed one flushed piece at a time (as COMPRESSED records), memory bounded */
    ok = 1;
    detail[0] = 0;
    for (level = 1; level <= 19; level += 6) {
        ZSTD_CCtx *c = ZSTD_createCCtx();
        jitanon__zstd *z;
        jitanon_membuf out;
        size_t pos = 0, cap = ZSTD_compressBound(70000) + 100, chunk = 1000;
        uint8_t *buf = (uint8_t *)malloc(cap);
        uint64_t off = 0;
        memset(&out, 0, sizeof out);
        ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
        if (jitanon__zstd_create(NULL, 0, 1, &z, &err) != JITANON_OK) ok = 0;
        while (ok && pos < in_n[5]) {
            size_t k = in_n[5] - pos < chunk ? in_n[5] - pos : chunk, left;
            ZSTD_inBuffer ib;
            ZSTD_outBuffer ob;
            ib.src = in[5] + pos, ib.size = k, ib.pos = 0;
            ob.dst = buf, ob.size = cap, ob.pos = 0;
            do left = ZSTD_compressStream2(c, &ob, &ib, ZSTD_e_flush);
            while (left && !ZSTD_isError(left));
            if (jitanon__zstd_feed(z, buf, ob.pos, off, &out, &err) != JITANON_OK) {
                snprintf(detail, sizeof detail, "level %d at %zu: %s", level, pos, err.info);
                ok = 0;
            }
            off += ob.pos;
            pos += k;
            chunk = chunk * 3 % 65536 + 1;
        }
        if (ok && jitanon__zstd_end(z, off, &err) != JITANON_OK) ok = 0;
        if (ok && (out.size != in_n[5] || memcmp(out.data, in[5], in_n[5]))) {
            snprintf(detail, sizeof detail, "level %d: content differs", level);
            ok = 0;
        }
        if (ok && z->hist.capacity > 2 * z->window + JITANON__ZS_BLOCK_MAX + 1) {
            snprintf(detail, sizeof detail, "history of %zu bytes for a %llu-byte window", z->hist.capacity,
                     (unsigned long long)z->window);
            ok = 0;
        }
        jitanon__zstd_destroy(z);
        jitanon_membuf_release(&out);
        free(buf);
        ZSTD_freeCCtx(c);
    }
    zd_result(ok, "perf-like flushed stream, fed piece by piece, window-bounded history", ok ? NULL : detail);

    /* 3. dictionary frames are refused clearly */
    {
        size_t sizes[200], dn, fn, k;
        uint8_t dict[8192];
        ZSTD_CCtx *c = ZSTD_createCCtx();
        uint8_t *f = (uint8_t *)malloc(ZSTD_compressBound(4000));
        jitanon_membuf out;
        for (k = 0; k < 200; k++) sizes[k] = 1000;
        dn = ZDICT_trainFromBuffer(dict, sizeof dict, in[0], sizes, 200);
        ok = !ZDICT_isError(dn);
        if (ok) {
            fn = ZSTD_compress_usingDict(c, f, ZSTD_compressBound(4000), in[0] + 50000, 4000, dict, dn, 3);
            memset(&out, 0, sizeof out);
            ok = !ZSTD_isError(fn) && jitanon_zstd_decompress(f, fn, &out, 0, &err) == JITANON_ERR_UNSUPPORTED &&
                 strstr(err.info, "dictionary") != NULL && err.offset == 4;
            jitanon_membuf_release(&out);
        }
        zd_result(ok, "a frame made with a dictionary is JITANON_ERR_UNSUPPORTED at its header", ok ? NULL : err.info);
        free(f);
        ZSTD_freeCCtx(c);
    }

    /* 4. cut frames: typed errors; bit flips: typed errors or libzstd's output */
    {
        size_t fn, cut, bit, cuts = 0, flips = 0, flip_ok = 0, refused = 0;
        uint8_t *f = zd_compress(in[0] + 1000, 6000, 19, 1, &fn);
        uint8_t *g = (uint8_t *)malloc(fn), *ref = (uint8_t *)malloc(1 << 20);
        jitanon_membuf out;
        ok = 1;
        for (cut = 0; cut < fn; cut++) {
            jitanon_result r;
            memset(&out, 0, sizeof out);
            r = jitanon_zstd_decompress(f, cut, &out, 0, &err);
            if (!(r == JITANON_ERR_TRUNCATED || r == JITANON_ERR_BAD_ZSTD || (cut == 0 && r == JITANON_OK)) || err.offset > cut) {
                snprintf(detail, sizeof detail, "cut at %zu: result %d", cut, (int)r);
                ok = 0;
            }
            jitanon_membuf_release(&out);
            cuts++;
        }
        zd_result(ok, "every cut of a frame is a typed error inside the input", ok ? NULL : detail);
        ok = 1;
        for (bit = 0; bit < 8 * fn; bit++) {
            jitanon_result r;
            size_t rn;
            memcpy(g, f, fn);
            g[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            memset(&out, 0, sizeof out);
            r = jitanon_zstd_decompress(g, fn, &out, 0, &err);
            rn = ZSTD_decompress(ref, 1 << 20, g, fn);
            flips++;
            if (r == JITANON_OK) flip_ok++;
            else refused++;
            if (r != JITANON_OK && r != JITANON_ERR_BAD_ZSTD && r != JITANON_ERR_TRUNCATED && r != JITANON_ERR_UNSUPPORTED &&
                r != JITANON_ERR_LIMIT) {
                snprintf(detail, sizeof detail, "bit %zu: result %d", bit, (int)r);
                ok = 0;
            }
            /* the known differences of fuzz/fuzz_zstd.c: corrupt for RFC 8878, libzstd decodes it */
            if (!ZSTD_isError(rn) && !(r != JITANON_OK && (strstr(err.info, "read past its start") ||
                                                           strstr(err.info, "Huffman stream has no end") ||
                                                           strstr(err.info, "block decodes to more than"))) &&
                (r != JITANON_OK || out.size != rn || memcmp(out.data, ref, rn))) {
                snprintf(detail, sizeof detail, "bit %zu: libzstd decodes %zu bytes, we: %s", bit, rn,
                         r == JITANON_OK ? "other bytes" : err.info);
                ok = 0;
            }
            jitanon_membuf_release(&out);
        }
        if (ok) snprintf(detail, sizeof detail, "%zu flips: %zu decoded as libzstd does, %zu refused", flips, flip_ok, refused);
        zd_result(ok, "bit flips", detail);
        free(f);
        free(g);
        free(ref);
    }
    for (i = 0; i < NIN; i++) free(in[i]);
    return failures ? 1 : 0;
}
#endif
