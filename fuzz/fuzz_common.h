/* What the libFuzzer harnesses share: CHECK (abort with a location, so libFuzzer keeps
   the input), a capped allocator that also checks the library's size bookkeeping, the
   check of a decoded view, and the perf reader's options.  Define FUZZ_NAME and
   FUZZ_MEM_CAP before including. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_NAME
#define FUZZ_NAME "fuzz"
#endif
#ifndef FUZZ_MEM_CAP
#define FUZZ_MEM_CAP ((size_t)64 << 20)
#endif

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, FUZZ_NAME ": %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

/* -- a capped allocator that also checks the size bookkeeping ----------------------------- */

/* Sizes are checked exactly: the library serves a 0-byte request as 1 byte and passes
   1 back when freeing it (fixed after fuzzing found alloc(1)/free(0) pairs).
   -DFUZZ_ZERO_SIZE_IS_ONE=1 restores the old lenient count. */
#ifndef FUZZ_ZERO_SIZE_IS_ONE
#define FUZZ_ZERO_SIZE_IS_ONE 0
#endif
#define FUZZ_SZ(n) (FUZZ_ZERO_SIZE_IS_ONE && (n) == 0 ? (size_t)1 : (n))

typedef struct capped {
    size_t live, cap;
    int hit;
} capped;

static void *capped_alloc(void *user, size_t size)
{
    capped *a = (capped *)user;
    void *p;
    if (FUZZ_SZ(size) > a->cap - a->live) {
        a->hit = 1;
        return NULL;
    }
    p = malloc(size);
    if (p) a->live += FUZZ_SZ(size);
    return p;
}

static void *capped_realloc(void *user, void *ptr, size_t old_size, size_t new_size)
{
    capped *a = (capped *)user;
    void *p;
    size_t base = ptr ? FUZZ_SZ(old_size) : 0;
    new_size = FUZZ_SZ(new_size);
    CHECK(base <= a->live);
    if (new_size > base && new_size - base > a->cap - a->live) {
        a->hit = 1;
        return NULL;
    }
    p = realloc(ptr, new_size);
    if (!p) return NULL;
    a->live = a->live - base + new_size;
    return p;
}

static void capped_free(void *user, void *ptr, size_t size)
{
    capped *a = (capped *)user;
    size = FUZZ_SZ(size);
    CHECK(size <= a->live);
    a->live -= size;
    free(ptr);
}

static inline jitanon_allocator capped_allocator(capped *a) /* inline: not every harness uses it */
{
    jitanon_allocator al;
    a->live = 0;
    a->cap = FUZZ_MEM_CAP;
    a->hit = 0;
    al.alloc_fn = capped_alloc;
    al.realloc_fn = capped_realloc;
    al.free_fn = capped_free;
    al.user = a;
    return al;
}

/* -- views and options --------------------------------------------------------------------- */

/* A view must be empty or lie inside [base, base + size); every byte is read (into
   fuzz_sink_byte, so that the reads stay). */
static volatile uint8_t fuzz_sink_byte;
static inline void fuzz_view(const void *view, size_t len, const uint8_t *base, size_t size)
{
    const uint8_t *v = (const uint8_t *)view;
    size_t i;
    uint8_t x = 0;
    if (!len) return;
    CHECK(v != NULL && base != NULL);
    CHECK(v >= base && (size_t)(v - base) <= size && len <= size - (size_t)(v - base));
    for (i = 0; i < len; i++) x = (uint8_t)(x + v[i]);
    fuzz_sink_byte = x;
}

/* The perf reader's options the harnesses read with: the capped allocator, 1 MiB payloads,
   4 MiB of header bytes. */
static inline void fuzz_perf_opts(jitanon_perf_opts *o, capped *cap)
{
    memset(o, 0, sizeof *o);
    o->allocator = capped_allocator(cap);
    o->max_payload = 1u << 20;
    o->max_header_bytes = 4u << 20;
}

/* b emptied, holding at most max_size bytes (0: no limit), and a sink appending to it. */
static inline jitanon_sink fuzz_sink(jitanon_membuf *b, size_t max_size)
{
    jitanon_sink s;
    memset(b, 0, sizeof *b);
    b->max_size = max_size;
    s.write_fn = jitanon_membuf_write;
    s.user = b;
    return s;
}

/* memin (memory input, whole or odd-sized reads, seekable) and membuf_pwrite. */
#include "../tests/memio.h"

#endif
