/* libFuzzer harness: the native symbol reader ([symbols]).  Input: an ELF file (section
   offsets past the end, string tables without a NUL, counts that overflow, ...), or with
   a first byte 'K' the text of a kallsyms.  The ELF is read as its own runtime file and,
   split at a byte the input names, as a debug file paired with the rest as the runtime
   file; every answer is a typed result, every symbol kept is sorted, named (a
   NUL-terminated name inside the input or made by the reader), within its own end, and
   found again at its start; the capped allocator ends at zero live bytes. */
#define JITANON_IMPLEMENTATION
#define FUZZ_NAME "fuzz_symbols"
#define FUZZ_MEM_CAP ((size_t)32 << 20)
#include "jitanon.h"
#include "fuzz_common.h"
#include <string.h>

/* a demangler that answers long names for "_Z" ones (the reader asks again with room) */
static size_t demangle(void *user, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name) + 600;
    (void)user;
    if (name[0] != '_' || name[1] != 'Z') return 0;
    if (n < cap) {
        memset(out, 'd', n);
        out[n] = 0;
    }
    return n;
}

static void check_table(jitanon__sym_table *t, const jitanon_allocator *a)
{
    size_t i;
    for (i = 0; i < t->n; i++) {
        jitanon__sym_ent *e = &t->ents[i];
        jitanon_str s;
        CHECK(e->end >= e->start);
        if (i) CHECK(t->ents[i - 1].start <= e->start);
        CHECK(e->name != NULL && e->name[e->len] == 0);
        CHECK(jitanon__sym_find(a, t, e->start) != NULL || e->end == e->start);
        s = jitanon__sym_name(a, t, e);
        CHECK(s.length <= e->len && (s.length == 0 || s.data != NULL));
        (void)jitanon__sym_addr_of(t, e->start);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    capped cap;
    jitanon_allocator a = capped_allocator(&cap);
    jitanon__sym_table t;
    jitanon_error err;
    jitanon_result r;
    memset(&t, 0, sizeof t);
    if (size && data[0] == 'K') { /* kallsyms: the reader owns (and writes NULs into) its copy */
        uint8_t *copy = (uint8_t *)jitanon__malloc(&a, size);
        if (!copy) return 0;
        memcpy(copy, data, size);
        r = jitanon__sym_kallsyms(&a, &t, copy, size, &err);
        CHECK(r == JITANON_OK || r == JITANON_ERR_NOMEM);
        check_table(&t, &a);
        jitanon__sym_table_free(&a, &t);
        CHECK(cap.live == 0);
        return 0;
    }
    {
        jitanon__sym_file f, g;
        jitanon__sym_mem m, n;
        size_t split = size > 8 ? (size_t)data[size - 1] * 64 : 0;
        m.p = data, m.n = size;
        r = jitanon__sym_open(&a, jitanon__sym_mem_read, &m, &f, &err);
        CHECK(r == JITANON_OK || r == JITANON_ERR_BAD_MAGIC || r == JITANON_ERR_TRUNCATED || r == JITANON_ERR_BAD_HEADER ||
              r == JITANON_ERR_LIMIT || r == JITANON_ERR_NOMEM);
        if (r == JITANON_OK) {
            t.demangle = demangle;
            r = jitanon__sym_build(&a, &t, &f, &f, &err);
            CHECK(r == JITANON_OK || r == JITANON_ERR_TRUNCATED || r == JITANON_ERR_BAD_HEADER || r == JITANON_ERR_LIMIT ||
                  r == JITANON_ERR_NOMEM);
            check_table(&t, &a);
            jitanon__sym_table_free(&a, &t);
            /* the bytes from `split` on as a debug file of this one */
            if (split && split < size) {
                n.p = data + split, n.n = size - split;
                if (jitanon__sym_open(&a, jitanon__sym_mem_read, &n, &g, &err) == JITANON_OK) {
                    (void)jitanon__sym_build(&a, &t, &g, &f, &err);
                    check_table(&t, &a);
                    jitanon__sym_table_free(&a, &t);
                }
                jitanon__sym_file_free(&a, &g);
            }
        }
        jitanon__sym_file_free(&a, &f);
    }
    CHECK(cap.live == 0);
    return 0;
}
