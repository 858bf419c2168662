/* bench/zstd.c (`make bench`): decode speed of the zstd stream inside a perf record -z
   recording, jitanon's decoder beside libzstd's (when bench/run.sh found zstd.h; only
   this benchmark links it).  Both decode the same COMPRESSED record payloads one record
   at a time, as a reader does, into a buffer that is emptied after every record.

       bench-zstd PERF.DATA [REPEAT]     prints one result line (best of REPEAT runs) */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef JT_LIBZSTD
#include <zstd.h>
#endif

typedef struct part {
    const uint8_t *p;
    size_t n;
} part;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    uint8_t *d;
    size_t n, cap = 1u << 20, off, end, np = 0, pcap = 1024, i, zin = 0, total = 0;
    part *parts;
    int rep, repeat = argc > 2 ? atoi(argv[2]) : 3;
    double best_ours = 1e30, best_ref = 1e30;
    if (!f) {
        fprintf(stderr, "usage: bench-zstd PERF.DATA [REPEAT]\n");
        return 2;
    }
    d = (uint8_t *)malloc(cap);
    for (n = 0; (off = fread(d + n, 1, cap - n, f)) > 0;) {
        n += off;
        if (n == cap) d = (uint8_t *)realloc(d, cap *= 2);
    }
    fclose(f);
    /* file mode: the data section; pipe mode: records after the 16-byte header */
    if (n >= 104 && jitanon__rd64(d + 8, 0) == 104) {
        off = (size_t)jitanon__rd64(d + 40, 0);
        end = off + (size_t)jitanon__rd64(d + 48, 0);
    } else {
        off = 16;
        end = n;
    }
    parts = (part *)malloc(pcap * sizeof *parts);
    while (off + 8 <= end && off + 8 <= n) {
        uint32_t type = jitanon__rd32(d + off, 0);
        size_t size = jitanon__rd16(d + off + 6, 0);
        if (size < 8 || off + size > n) break;
        if (type == 81 || type == 83) {
            size_t h = type == 83 ? 16 : 8, len = type == 83 ? (size_t)jitanon__rd64(d + off + 8, 0) : size - 8;
            if (np == pcap) parts = (part *)realloc(parts, (pcap *= 2) * sizeof *parts);
            parts[np].p = d + off + h;
            parts[np].n = len;
            zin += len;
            np++;
        }
        off += size;
    }
    if (!np) {
        fprintf(stderr, "bench-zstd: %s has no COMPRESSED records (not recorded with perf record -z)\n", argv[1]);
        return 1;
    }
    for (rep = 0; rep < repeat; rep++) {
        jitanon__zstd *z;
        jitanon_membuf out;
        jitanon_error err;
        double t0 = now(), t;
        size_t got = 0;
        memset(&out, 0, sizeof out);
        if (jitanon__zstd_create(NULL, 0, 1, &z, &err) != JITANON_OK) return 1;
        for (i = 0; i < np; i++) {
            if (jitanon__zstd_feed(z, parts[i].p, parts[i].n, 0, &out, &err) != JITANON_OK) {
                fprintf(stderr, "bench-zstd: record %zu: %s\n", i, err.info);
                return 1;
            }
            got += out.size;
            out.size = 0;
        }
        t = now() - t0;
        if (t < best_ours) best_ours = t;
        total = got;
        jitanon__zstd_destroy(z);
        jitanon_membuf_release(&out);
    }
#ifdef JT_LIBZSTD
    for (rep = 0; rep < repeat; rep++) {
        ZSTD_DCtx *dc = ZSTD_createDCtx();
        uint8_t *buf = (uint8_t *)malloc(1u << 20);
        double t0 = now(), t;
        size_t got = 0;
        for (i = 0; i < np; i++) {
            ZSTD_inBuffer in;
            in.src = parts[i].p, in.size = parts[i].n, in.pos = 0;
            while (in.pos < in.size) {
                ZSTD_outBuffer o;
                size_t r;
                o.dst = buf, o.size = 1u << 20, o.pos = 0;
                r = ZSTD_decompressStream(dc, &o, &in);
                if (ZSTD_isError(r)) {
                    fprintf(stderr, "bench-zstd: libzstd: %s\n", ZSTD_getErrorName(r));
                    return 1;
                }
                got += o.pos;
                if (!o.pos && in.pos == in.size) break;
            }
        }
        t = now() - t0;
        if (t < best_ref) best_ref = t;
        if (got != total) fprintf(stderr, "bench-zstd: libzstd decoded %zu bytes, we %zu\n", got, total);
        free(buf);
        ZSTD_freeDCtx(dc);
    }
    printf("zstd decode of %.1f MB (%.1f MB compressed, %zu records): jitanon %.0f MB/s, libzstd %.0f MB/s "
           "(libzstd/jitanon %.2fx)\n",
           (double)total / 1e6, (double)zin / 1e6, np, (double)total / 1e6 / best_ours, (double)total / 1e6 / best_ref,
           best_ours / best_ref);
#else
    printf("zstd decode of %.1f MB (%.1f MB compressed, %zu records): jitanon %.0f MB/s (libzstd: zstd.h not found)\n",
           (double)total / 1e6, (double)zin / 1e6, np, (double)total / 1e6 / best_ours);
#endif
    free(parts);
    free(d);
    return 0;
}
