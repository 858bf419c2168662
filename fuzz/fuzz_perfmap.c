/* libFuzzer harness: the perf map reader ([perfmap]).  Every input must load (damage is
   skipped, not fatal) under a capped allocator that checks the size bookkeeping; the
   entries must be sorted, disjoint, non-empty and named; and for small maps a model
   written here from the rules (lines; perf 6.1's tree of them, CLRS's red-black insertion
   with an equal START to the right, and its lookup that takes the first node on the way
   down that holds the address) must give the same owner at every boundary address. */
#define JITANON_IMPLEMENTATION
#define FUZZ_NAME "fuzz_perfmap"
#include "jitanon.h"
#include "fuzz_common.h"
#include "../tests/elfread.h"
#include <string.h>

typedef struct model_line {
    uint64_t start, last;
    const uint8_t *name;
    size_t name_len;
    struct model_line *kid[2], *parent;
    int black;
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

/* Turns x down to side `down` (0 left, 1 right): its child on the other side rises. */
static void model_rotate(model_line **root, model_line *x, int down)
{
    model_line *y = x->kid[!down];
    x->kid[!down] = y->kid[down];
    if (y->kid[down]) y->kid[down]->parent = x;
    y->parent = x->parent;
    if (!x->parent) *root = y;
    else x->parent->kid[x->parent->kid[1] == x] = y;
    y->kid[down] = x;
    x->parent = y;
}

/* CLRS RB-INSERT and its fixup, the two mirrored cases as one with `side` the
   parent's side under the grandparent. */
static model_line *model_tree(model_line *lines, int n)
{
    model_line *root = NULL;
    int i;
    for (i = 0; i < n; i++) {
        model_line *z = &lines[i], *y = NULL, *x = root;
        while (x) {
            y = x;
            x = x->kid[z->start >= x->start];
        }
        z->kid[0] = z->kid[1] = NULL;
        z->black = 0;
        z->parent = y;
        if (!y) root = z;
        else y->kid[z->start >= y->start] = z;
        while (z->parent && !z->parent->black) {
            model_line *g = z->parent->parent, *u;
            int side = g->kid[1] == z->parent;
            u = g->kid[!side];
            if (u && !u->black) {
                z->parent->black = u->black = 1, g->black = 0, z = g;
                continue;
            }
            if (z == z->parent->kid[!side]) z = z->parent, model_rotate(&root, z, side);
            z->parent->black = 1, g->black = 0;
            model_rotate(&root, g, !side);
        }
        root->black = 1;
    }
    return root;
}

static void model_check(const jitanon_perfmap *m, const model_line *root, uint64_t a)
{
    const jitanon_perfmap_entry *e = jitanon_perfmap_lookup(m, a);
    const model_line *owner = root;
    while (owner && !(a >= owner->start && a <= owner->last)) owner = owner->kid[a >= owner->start];
    if (!owner) {
        CHECK(e == NULL);
        return;
    }
    CHECK(e != NULL);
    CHECK(e->name.length == owner->name_len && !memcmp(e->name.data, owner->name, e->name.length));
}

/* The stub of `m` (32-bit class or 64, big- or little-endian by `variant`): entries the
   builder refuses (inside the ELF header's addresses, or past the 32-bit space) are
   skipped, as the injector does; all others come back as symbols. */
static void stub_check(const jitanon_perfmap *m, const jitanon_allocator *a, int variant)
{
    jitanon_jitdump_header h;
    jitanon_elf_opts eo;
    jitanon_elf_builder b;
    jitanon_membuf out;
    jitanon_sink sink;
    jitanon_error err;
    jitanon_test_elf_file f;
    jitanon_test_elf_section symtab;
    uint64_t added = 0, k;
    size_t i;
    unsigned char *kept;
    memset(&h, 0, sizeof h);
    h.elf_mach = variant ? 3 : 62; /* EM_386: ELF32 */
    h.big_endian = variant;
    memset(&eo, 0, sizeof eo);
    eo.allocator = *a;
    eo.symbols_only = 1;
    sink = fuzz_sink(&out, 0);
    out.allocator = *a;
    CHECK(jitanon_elf_builder_init(&b, &h, &eo, &err) == JITANON_OK);
    kept = (unsigned char *)calloc(m->count + 1, 1);
    CHECK(kept != NULL);
    for (i = 0; i < m->count; i++) {
        jitanon_elf_func fn;
        jitanon_result r;
        memset(&fn, 0, sizeof fn);
        fn.name = m->entries[i].name;
        fn.code_addr = m->entries[i].start;
        fn.map_size = m->entries[i].size;
        r = jitanon_elf_builder_add(&b, &fn, NULL, &err);
        CHECK(r == JITANON_OK || r == JITANON_ERR_INVALID_ARGUMENT || r == JITANON_ERR_LIMIT || r == JITANON_ERR_NOMEM);
        if (r == JITANON_OK) kept[i] = 1, added++;
    }
    if (jitanon_elf_builder_finish(&b, sink, NULL, &err) == JITANON_OK) {
        CHECK(jitanon_test_elf_parse(&f, out.data, out.size, &err) == JITANON_OK);
        CHECK(f.build_id.size == 20);
        CHECK(jitanon_test_elf_find_section(&f, ".symtab", &symtab) != 0);
        CHECK(jitanon_test_elf_symbol_count(&f, &symtab) == added + 1);
        for (i = 0, k = 1; i < m->count; i++) {
            jitanon_test_elf_symbol sym;
            if (!kept[i]) continue;
            CHECK(jitanon_test_elf_symbol_at(&f, &symtab, k++, &sym, &err) == JITANON_OK);
            CHECK(sym.value == m->entries[i].start && sym.size == m->entries[i].size);
            CHECK(sym.name.length == m->entries[i].name.length &&
                  !memcmp(sym.name.data, m->entries[i].name.data, sym.name.length));
        }
    }
    free(kept);
    jitanon_elf_builder_release(&b);
    jitanon_membuf_release(&out);
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
    CHECK(m->stats.skipped.form + m->stats.skipped.no_name + m->stats.skipped.nul + m->stats.skipped.range ==
          m->stats.bad_lines); /* every skipped line has one reason */
    for (i = 0; i < m->count; i++) {
        const jitanon_perfmap_entry *e = &m->entries[i];
        CHECK(e->size >= 1 && e->start + (e->size - 1) >= e->start);
        CHECK(e->name.length > 0 && !memchr(e->name.data, 0, e->name.length) && !memchr(e->name.data, '\n', e->name.length));
        CHECK(i == 0 || m->entries[i - 1].start + m->entries[i - 1].size - 1 < e->start);
        CHECK(jitanon_perfmap_lookup(m, e->start) == e && jitanon_perfmap_lookup(m, e->start + (e->size - 1)) == e);
    }
    n = model_parse(data, size, lines, (int)(sizeof lines / sizeof lines[0]));
    if (n >= 0) {
        const model_line *root = model_tree(lines, n);
        int k;
        for (k = 0; k < n; k++) {
            model_check(m, root, lines[k].start);
            model_check(m, root, lines[k].last);
            if (lines[k].start) model_check(m, root, lines[k].start - 1);
            if (lines[k].last != UINT64_MAX) model_check(m, root, lines[k].last + 1);
        }
        CHECK(m->stats.lines - m->stats.bad_lines - m->stats.cut == (uint64_t)n);
    }
    stub_check(m, &o.allocator, data[0] & 1);
    jitanon_perfmap_destroy(m);
    CHECK(c.live == 0);
    return 0;
}
