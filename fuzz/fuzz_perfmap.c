/* libFuzzer harness: the perf map reader ([perfmap]).  Every input must load (damage is
   skipped, not fatal) under a capped allocator that checks the size bookkeeping; the
   entries must be sorted, disjoint, non-empty and named; and for small maps a model
   written here from the rules (lines, later lines win) must give the same owner at every
   boundary address. */
#define JITANON_IMPLEMENTATION
#define FUZZ_NAME "fuzz_perfmap"
#include "jitanon.h"
#include "fuzz_common.h"
#include <string.h>

typedef struct model_line {
    uint64_t start, last;
    const uint8_t *name;
    size_t name_len;
} model_line;

static int model_hex(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    int n = 0;
    *v = 0;
    if (end - *p >= 3 && (*p)[0] == '0' && ((*p)[1] | 0x20) == 'x') *p += 2;
    for (; *p < end; (*p)++, n++) {
        int c = **p, d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
        if (d < 0) break;
        if (n == 16) return 0;
        *v = *v << 4 | (uint64_t)d;
    }
    return n > 0;
}

static int model_blank(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *s = *p;
    while (*p < end && (**p == ' ' || **p == '\t')) (*p)++;
    return *p > s;
}

/* The lines the rules accept, in file order; -1 when there are more than `cap`. */
static int model_parse(const uint8_t *data, size_t size, model_line *out, int cap)
{
    const uint8_t *p = data, *end = data + size;
    int n = 0;
    while (p < end) {
        const uint8_t *nl = (const uint8_t *)memchr(p, '\n', (size_t)(end - p)), *q = p, *le;
        uint64_t start, len;
        if (!nl) break;
        le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
        p = nl + 1;
        if (!model_hex(&q, le, &start) || !model_blank(&q, le) || !model_hex(&q, le, &len) || !model_blank(&q, le) ||
            q == le || memchr(q, 0, (size_t)(le - q)))
            continue;
        if (len == 0) len = 1;
        if (start + (len - 1) < start) continue;
        if (n == cap) return -1;
        out[n].start = start;
        out[n].last = start + (len - 1);
        out[n].name = q;
        out[n].name_len = (size_t)(le - q);
        n++;
    }
    return n;
}

static void model_check(const jitanon_perfmap *m, const model_line *lines, int n, uint64_t a)
{
    const jitanon_perfmap_entry *e = jitanon_perfmap_lookup(m, a);
    int i, owner = -1;
    for (i = 0; i < n; i++)
        if (a >= lines[i].start && a <= lines[i].last) owner = i;
    if (owner < 0) {
        CHECK(e == NULL);
        return;
    }
    CHECK(e != NULL);
    CHECK(e->name.length == lines[owner].name_len && !memcmp(e->name.data, lines[owner].name, e->name.length));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static model_line lines[64];
    capped c;
    jitanon_perfmap_opts o;
    jitanon_perfmap *m = NULL;
    jitanon_error err;
    jitanon_result r;
    size_t i;
    int n;
    memset(&o, 0, sizeof o);
    o.allocator = capped_allocator(&c);
    o.memory_limit = (size_t)4 << 20;
    r = jitanon_perfmap_load_memory(data, size, &o, &m, &err);
    CHECK(r == JITANON_OK || r == JITANON_ERR_LIMIT || (r == JITANON_ERR_NOMEM && c.hit));
    if (r != JITANON_OK) {
        CHECK(m == NULL && c.live == 0);
        return 0;
    }
    CHECK(m->stats.peak_bytes <= o.memory_limit);
    for (i = 0; i < m->count; i++) {
        const jitanon_perfmap_entry *e = &m->entries[i];
        CHECK(e->size >= 1 && e->start + (e->size - 1) >= e->start);
        CHECK(e->name.length > 0 && !memchr(e->name.data, 0, e->name.length) && !memchr(e->name.data, '\n', e->name.length));
        CHECK(i == 0 || m->entries[i - 1].start + m->entries[i - 1].size - 1 < e->start);
        CHECK(jitanon_perfmap_lookup(m, e->start) == e && jitanon_perfmap_lookup(m, e->start + (e->size - 1)) == e);
    }
    n = model_parse(data, size, lines, (int)(sizeof lines / sizeof lines[0]));
    if (n >= 0) {
        int k;
        for (k = 0; k < n; k++) {
            model_check(m, lines, n, lines[k].start);
            model_check(m, lines, n, lines[k].last);
            if (lines[k].start) model_check(m, lines, n, lines[k].start - 1);
            if (lines[k].last != UINT64_MAX) model_check(m, lines, n, lines[k].last + 1);
        }
        CHECK(m->stats.lines - m->stats.bad_lines - m->stats.cut == (uint64_t)n);
    }
    jitanon_perfmap_destroy(m);
    CHECK(c.live == 0);
    return 0;
}
