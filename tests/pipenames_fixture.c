/* pipenames_fixture: rewrites a real perf.data recording (file mode) through jitanon's
   writer into one that names its events the way recordings from machines with hardware
   counters do, for tests/oracle/pipenames.sh.  The records are copied unchanged; the
   attrs and the EVENT_DESC section are rebuilt.

       pipenames_fixture [-s ATTR_SIZE] [-x EXTRA_IDS] [-n] IN OUT [SPEC...]

   SPEC i describes attr i: NAME|TYPE|CONFIG|PRECISE|EXCL, e.g. "cycles:P|0|0|2|H":
   the EVENT_DESC name, attr.type, attr.config, precise_ip (0-3) and the exclude bits
   set (u k h for user, kernel, hv; H G for host, guest; every other exclude bit of
   these is cleared).  "=" keeps the attr and its name; attrs past the SPECs are kept.
   -s writes every attr with that attr.size (112, 120, 136...: perf versions differ),
   -x adds EXTRA_IDS unused ids to every attr (an EVENT_DESC too large for one pipe
   record), -n leaves EVENT_DESC out.  perf script needs no hardware to read the output. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FEAT_EVENT_DESC 12u
#define MAX_ATTRS 64

typedef struct fx_attr {
    uint8_t raw[512];
    uint32_t size;
    uint64_t *ids;
    size_t nids;
    char name[256];
} fx_attr;

static int fail(const char *what, const jitanon_error *err)
{
    fprintf(stderr, "pipenames_fixture: %s: %s (offset %llu)\n", what, err ? err->info : "",
            err ? (unsigned long long)err->offset : 0ull);
    return 1;
}

/* The names of the input's EVENT_DESC, by index (attrs without one get ""). */
static void input_names(const jitanon_perf_reader *r, fx_attr *a, size_t n)
{
    jitanon_bytes b;
    jitanon__cur c;
    uint32_t nre, asz, i;
    if (!jitanon_perf_reader_feature(r, FEAT_EVENT_DESC, &b) || b.size < 8) return;
    c = jitanon__cur_make(b.data, b.size, 0, r->big_endian);
    nre = jitanon__get32(&c);
    asz = jitanon__get32(&c);
    for (i = 0; i < nre && i < n; i++) {
        const uint8_t *s;
        uint32_t nr, len;
        if (!jitanon__take(&c, asz) || c.left < 8) return;
        nr = jitanon__get32(&c);
        len = jitanon__get32(&c);
        if (!(s = jitanon__take(&c, len)) || nr > c.left / 8) return;
        jitanon__take(&c, (size_t)nr * 8);
        snprintf(a[i].name, sizeof a[i].name, "%.*s", (int)strnlen((const char *)s, len), (const char *)s);
    }
}

static int apply_spec(fx_attr *a, const char *spec, int big)
{
    char buf[512], *f[5], *p = buf;
    uint64_t flags;
    int k;
    if (strcmp(spec, "=") == 0) return 0;
    snprintf(buf, sizeof buf, "%s", spec);
    for (k = 0; k < 5; k++) {
        f[k] = p;
        p = strchr(p, '|');
        if (!p && k < 4) return 1;
        if (p) *p++ = 0;
    }
    snprintf(a->name, sizeof a->name, "%s", f[0]);
    jitanon__wr32(a->raw, (uint32_t)strtoul(f[1], NULL, 0), big);
    jitanon__wr64(a->raw + 8, strtoull(f[2], NULL, 0), big);
    flags = jitanon__rd64(a->raw + 40, big);
    if (big) flags = jitanon__bitrev64(flags);
    flags &= ~(3ull << 15 | 7ull << 4 | 3ull << 19);
    flags |= (strtoull(f[3], NULL, 0) & 3) << 15;
    for (p = f[4]; *p; p++)
        flags |= *p == 'u' ? 1ull << 4 : *p == 'k' ? 1ull << 5 : *p == 'h' ? 1ull << 6 : *p == 'H' ? 1ull << 19
                                                                           : *p == 'G' ? 1ull << 20 : 0;
    if (big) flags = jitanon__bitrev64(flags);
    jitanon__wr64(a->raw + 40, flags, big);
    return 0;
}

static void put32(jitanon_membuf *m, uint32_t v, int big)
{
    uint8_t b[4];
    jitanon__wr32(b, v, big);
    jitanon_membuf_write(m, b, 4);
}

/* EVENT_DESC as perf writes it: names NUL-padded to 64 bytes. */
static void event_desc(jitanon_membuf *m, const fx_attr *a, size_t n, int big)
{
    size_t i, j;
    put32(m, (uint32_t)n, big);
    put32(m, a[0].size, big);
    for (i = 0; i < n; i++) {
        static const uint8_t zero[64];
        size_t len = strlen(a[i].name) + 1, padded = (len + 63) / 64 * 64;
        jitanon_membuf_write(m, a[i].raw, a[0].size);
        put32(m, (uint32_t)a[i].nids, big);
        put32(m, (uint32_t)padded, big);
        jitanon_membuf_write(m, a[i].name, len - 1);
        jitanon_membuf_write(m, zero, padded - len + 1);
        for (j = 0; j < a[i].nids; j++) {
            uint8_t b[8];
            jitanon__wr64(b, a[i].ids[j], big);
            jitanon_membuf_write(m, b, 8);
        }
    }
}

int main(int argc, char **argv)
{
    jitanon_perf_reader r;
    jitanon_perf_writer w;
    jitanon_perf_record rec;
    jitanon_atomic_file f;
    jitanon_error err;
    jitanon_result res;
    jitanon_membuf desc = {0};
    fx_attr *a;
    uint32_t asize = 0;
    size_t extra = 0, n, i, nspec;
    int argi = 1, no_desc = 0, big, rc = 1;
    for (; argi < argc && argv[argi][0] == '-' && argv[argi][1]; argi++) {
        if (strcmp(argv[argi], "-s") == 0 && argi + 1 < argc) asize = (uint32_t)atoi(argv[++argi]);
        else if (strcmp(argv[argi], "-x") == 0 && argi + 1 < argc) extra = (size_t)atoi(argv[++argi]);
        else if (strcmp(argv[argi], "-n") == 0) no_desc = 1;
        else break;
    }
    if (argc - argi < 2 || (asize && (asize < 64 || asize > 512 || asize % 8))) {
        fprintf(stderr, "usage: pipenames_fixture [-s ATTR_SIZE] [-x EXTRA_IDS] [-n] IN OUT [NAME|TYPE|CONFIG|PRECISE|EXCL | =]...\n");
        return 2;
    }
    nspec = (size_t)(argc - argi - 2);
    if (jitanon_perf_reader_open(&r, argv[argi], NULL, &err) != JITANON_OK || r.mode != JITANON_PERF_FILE ||
        jitanon_perf_reader_load_features(&r, &err) != JITANON_OK) {
        jitanon_perf_reader_release(&r);
        return fail("cannot read the input (a perf.data file)", &err);
    }
    big = r.big_endian;
    n = r.attr_count < MAX_ATTRS ? r.attr_count : MAX_ATTRS;
    a = (fx_attr *)calloc(n ? n : 1, sizeof *a);
    for (i = 0; a && i < n; i++) {
        const jitanon_perf_attr *in = &r.attrs[i];
        size_t j;
        a[i].size = asize ? asize : (uint32_t)in->raw.size;
        memcpy(a[i].raw, in->raw.data, in->raw.size < a[i].size ? in->raw.size : a[i].size);
        jitanon__wr32(a[i].raw + 4, a[i].size, big);
        a[i].nids = in->id_count + extra;
        a[i].ids = (uint64_t *)calloc(a[i].nids ? a[i].nids : 1, 8);
        for (j = 0; a[i].ids && j < a[i].nids; j++)
            a[i].ids[j] = j < in->id_count ? in->ids[j] : 0x40000000ull + i * extra + j;
    }
    if (!a) return fail("out of memory", NULL);
    input_names(&r, a, n);
    for (i = 0; i < nspec && i < n; i++)
        if (apply_spec(&a[i], argv[(size_t)argi + 2 + i], big)) return fail("bad SPEC", NULL);
    if (jitanon_atomic_open(&f, argv[argi + 1], NULL, &err) != JITANON_OK) return fail("cannot create the output", &err);
    res = jitanon_perf_writer_init(&w, JITANON_PERF_FILE, big, jitanon_atomic_sink(&f), jitanon_atomic_pwrite, NULL, &err);
    for (i = 0; res == JITANON_OK && i < n; i++) {
        jitanon_perf_attr at = r.attrs[i];
        at.raw.data = a[i].raw;
        at.raw.size = a[i].size;
        at.ids = a[i].ids;
        at.id_count = a[i].nids;
        res = jitanon_perf_writer_add_attr(&w, &at, &err);
    }
    for (i = 0; res == JITANON_OK && i < r.state_->feat_count; i++) {
        jitanon_bytes b;
        unsigned bit = r.state_->feats[i].bit;
        if (bit == FEAT_EVENT_DESC || !jitanon_perf_reader_feature(&r, bit, &b)) continue;
        res = jitanon_perf_writer_add_feature(&w, bit, b.data, b.size, &err);
    }
    if (res == JITANON_OK && !no_desc && n) {
        event_desc(&desc, a, n, big);
        res = jitanon_perf_writer_add_feature(&w, FEAT_EVENT_DESC, desc.data, desc.size, &err);
    }
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK)
        res = jitanon_perf_writer_write(&w, rec.raw.data, rec.raw.size, &err);
    if (res == JITANON_END) res = jitanon_perf_writer_finish(&w, &err);
    if (res == JITANON_OK) res = jitanon_atomic_commit(&f, 0, &err);
    else jitanon_atomic_abort(&f);
    if (res == JITANON_OK) rc = 0;
    else fail("writing the output", &err);
    jitanon_perf_writer_release(&w);
    jitanon_perf_reader_release(&r);
    jitanon_membuf_release(&desc);
    for (i = 0; i < n; i++) free(a[i].ids);
    free(a);
    return rc;
}
